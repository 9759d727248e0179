#!/usr/bin/python3
"""check.py TT_RENDER TEMPLATES_DIR DB — the chat-template tests.

For every model profile, renders each conversation in conversations/ with
the embedded engine's renderer (tt-render) and with the family's official
Jinja template from llama.cpp's models/templates (render.py, Debian's
python3-jinja2), with and without the generation prompt, and compares them
byte for byte; each conversation is rendered twice, as written and with the
agent's real system prompt and tools for DB. Then checks, in C, that what a
model writes after each prompt renders back as the same bytes
(tt-render check-calls). Prints one line per case and a closing
"N passed, N failed"; exits 1 on any failure."""
import copy
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import render  # noqa: E402  (render.py beside this file)

# profile -> (template file, variables, how a call's thought is written)
FAMILIES = {
    "qwen2.5": ("Qwen-Qwen2.5-7B-Instruct.jinja", {}, "content"),
    "qwen3": ("Qwen-Qwen3-0.6B.jinja", {}, "reasoning_content"),
    "llama3.1": ("meta-llama-Llama-3.1-8B-Instruct.jinja",
                 {"bos_token": "<|begin_of_text|>"}, "content"),
    "mistral": ("Mistral-Small-3.2-24B-Instruct-2506.jinja",
                {"bos_token": "<s>", "eos_token": "</s>"}, "content"),
    # the generic family renders through the model's own template with
    # llama.cpp's built-in formats: checked on templates that take a system
    # message
    "generic": ("microsoft-Phi-3.5-mini-instruct.jinja", {}, "content"),
    "sql-writer": ("Qwen-Qwen2.5-7B-Instruct.jinja", {}, "content"),
}
# Llama 3.2 and 3.3 ship the same tool format as 3.1
ALSO = {"llama3.1": ["meta-llama-Llama-3.2-3B-Instruct.jinja",
                     "meta-llama-Llama-3.3-70B-Instruct.jinja"]}


def run(cmd):
    p = subprocess.run(cmd, capture_output=True)
    return p.returncode, p.stdout, p.stderr.decode("utf-8", "replace")


def for_family(conv, family, thought_field):
    """The conversation as the official template expects it: a call's
    thought in the family's field; Mistral's alternating turns (consecutive
    user messages joined by a blank line, as tabletalk's renderer does)."""
    conv = copy.deepcopy(conv)
    msgs = []
    for m in conv["messages"]:
        if m.get("tool_calls"):
            thought = m.get("reasoning_content") or m.get("content") or ""
            m.pop("reasoning_content", None)
            m["content"] = ""
            if thought:
                m[thought_field] = thought
        elif m.get("content") is None:
            m["content"] = ""
        if (family == "mistral" and msgs and m["role"] == "user"
                and msgs[-1]["role"] == "user"):
            msgs[-1]["content"] += "\n\n" + m["content"]
            continue
        msgs.append(m)
    conv["messages"] = msgs
    return conv


def main():
    tt_render, templates, db = sys.argv[1], sys.argv[2], sys.argv[3]
    code, out, err = run([tt_render, "agent", db])
    if code:
        sys.exit(f"tt-render agent failed: {err}")
    agent = json.loads(out)
    conv_dir = os.path.join(HERE, "conversations")
    passed = failed = 0
    with tempfile.TemporaryDirectory() as tmp:
        def write(name, doc):
            path = os.path.join(tmp, name)
            with open(path, "w", encoding="utf-8") as f:
                json.dump(doc, f, ensure_ascii=False)
            return path

        for family, (tmpl_name, variables, field) in FAMILIES.items():
            for name in sorted(os.listdir(conv_dir)):
                with open(os.path.join(conv_dir, name), encoding="utf-8") as f:
                    conv = json.load(f)
                if (family == "sql-writer") != ("tools" not in conv):
                    continue  # SQL writers get one tool-less message
                variants = [("", conv)]
                if "tools" in conv:
                    real = copy.deepcopy(conv)
                    real["tools"] = agent["tools"]
                    if real["messages"][0]["role"] == "system":
                        real["messages"][0]["content"] = agent["system"]
                    variants.append(("@agent", real))
                    # every call with a thought (Qwen3 always writes one)
                    thoughts = copy.deepcopy(real)
                    for i, m in enumerate(thoughts["messages"]):
                        if m.get("tool_calls") and not (m.get("content") or m.get("reasoning_content")):
                            tool = m["tool_calls"][0]["function"]["name"]
                            m["content"] = f"Step {i}: the next thing to do is {tool}, where x < 5."
                    variants.append(("@agent+thoughts", thoughts))
                for suffix, c in variants:
                    c_path = write(f"{family}-c-{name}", c)
                    j = for_family(c, family, field)
                    j["vars"] = variables
                    if family == "generic":
                        code, out, err = run([tt_render, "generic-json", c_path])
                        g = json.loads(out)
                        g["vars"] = variables
                        j = g
                    for tmpl in [tmpl_name] + ALSO.get(family, []):
                        tpath = os.path.join(templates, tmpl)
                        for gen in ([], ["--generation"]):
                            case = f"{family} {name}{suffix} {tmpl}{' +generation' if gen else ''}"
                            extra = ["--template", tpath] if family == "generic" else []
                            code_c, mine, err_c = run([tt_render, "render", family, c_path] + extra + gen)
                            code_j, err_j = 0, ""
                            try:
                                theirs = render.render(tpath, j, bool(gen)).encode("utf-8")
                            except Exception as e:  # the template refused the conversation
                                code_j, err_j, theirs = 1, f"{type(e).__name__}: {e}", b""
                            if code_c or code_j:
                                print(f"FAIL {case}: {err_c.strip()} {err_j.strip()[-300:]}")
                                failed += 1
                            elif mine != theirs:
                                at = next((i for i in range(min(len(mine), len(theirs)))
                                           if mine[i] != theirs[i]), min(len(mine), len(theirs)))
                                print(f"FAIL {case}: differs at byte {at} of {len(theirs)}:\n"
                                      f"  tabletalk: {mine[max(0, at - 40):at + 80]!r}\n"
                                      f"  template:  {theirs[max(0, at - 40):at + 80]!r}")
                                failed += 1
                            else:
                                print(f"ok   {case} ({len(mine)} bytes)")
                                passed += 1
                    if "tools" in c:
                        extra = ["--template", os.path.join(templates, tmpl_name)] \
                            if family == "generic" else []
                        code, out, err = run([tt_render, "check-calls", family, c_path] + extra)
                        case = f"{family} {name}{suffix} calls render back"
                        if code:
                            print(f"FAIL {case}:\n{err}")
                            failed += 1
                        else:
                            print(f"ok   {case}: {out.decode().strip()}")
                            passed += 1
    print(f"{passed} passed, {failed} failed")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
