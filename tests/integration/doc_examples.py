#!/usr/bin/env python3
"""doc_examples.py ROOT BIN — runs the examples of README.md and
docs/guide/*.md, so that what the docs show is what the program does.

Which blocks run:
- a fenced ```sh block: every command in it runs (one bash script per
  block, so `export` and `cd` carry over within the block) and must exit 0,
  or N when its line ends in `# exit N`;
- a fenced ```console block: each `$ ` line is a command, and the lines
  after it are its output, which must match stdout then stderr line by
  line (`...` in an expected line stands for any text);
- a block right after `<!-- not run: REASON -->` is skipped and listed with
  its reason (it needs the network, a model download, a PostgreSQL server,
  another program);
- a console block after `<!-- run: until "TEXT", then interrupt -->` is a
  server: its command runs until a line holding TEXT appears, then gets
  SIGINT and must exit 0; the lines up to TEXT must match.

Where they run: a scratch folder with data/chinook.sqlite (a copy),
build/tabletalk (the binary under test, also `tabletalk` on PATH), two CSV
inputs the examples name (people.csv, ages.csv, and shop/ with customers.csv and
orders.csv), a HOME, state, data and cache folders of its own, and no
configuration from the machine. The model is the scripted stand-in the
other tests use (tests/fixtures/model_server.mjs with
tests/fixtures/doc_examples_model.json): TABLETALK_BASE_URL points at it,
and the endpoints the docs name (http://127.0.0.1:8080/v1 for llama-server,
:11434 Ollama, :8000 vLLM, :1234 LM Studio, https://api.openai.com/v1) are
replaced by its address in the commands. The pages run in order, README
first, in one scratch folder (a later page may show the trace of an
earlier page's question).
"""
import os
import queue
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

ROOT = os.path.abspath(sys.argv[1])
BIN = os.path.abspath(sys.argv[2])
ONLY = sys.argv[3:]  # page paths relative to ROOT, to run a few (debugging)
CHINOOK = os.environ.get("TT_CHINOOK") or os.path.join(ROOT, "data", "chinook.sqlite")
DEADLINE_S = 120  # the most one command may take (a guard, not a measure)

FENCE = re.compile(r"^(\s*)(`{3,}|~{3,})\s*([A-Za-z0-9_-]*)\s*$")
MARK = re.compile(r"^\s*<!--\s*(not run|run):?\s*(.*?)\s*-->\s*$")
UNTIL = re.compile(r'^until "([^"]+)", then interrupt$')
EXIT = re.compile(r"#\s*exit\s+(\d+)\s*$")
ENDPOINTS = re.compile(r"https?://(?:127\.0\.0\.1|localhost):(?:8080|8000|11434|1234)/v1"
                       r"|https://api\.openai\.com/v1")

results = {"ok": 0, "skip": [], "fail": []}


class Block:
    def __init__(self, page, line, lang, lines, mark):
        self.page, self.line, self.lang, self.lines, self.mark = page, line, lang, lines, mark

    def where(self):
        return f"{os.path.relpath(self.page, ROOT)}:{self.line}"


def blocks(page):
    """The fenced sh and console blocks of a page, with the mark before each."""
    out, lines = [], open(page, encoding="utf-8").read().split("\n")
    i = 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        indent, marks, lang = m.group(1), m.group(2), m.group(3)
        body, j = [], i + 1
        while j < len(lines):
            c = FENCE.match(lines[j])
            if c and c.group(2)[0] == marks[0] and len(c.group(2)) >= len(marks) and not c.group(3):
                break
            body.append(lines[j][len(indent):] if lines[j].startswith(indent) else lines[j].lstrip())
            j += 1
        k = i - 1
        while k >= 0 and not lines[k].strip():
            k -= 1
        mark = MARK.match(lines[k]) if k >= 0 else None
        if lang in ("sh", "console"):
            out.append(Block(page, i + 1, lang, body, mark))
        elif mark:
            results["fail"].append(f"{os.path.relpath(page, ROOT)}:{i + 1}: a mark before a "
                                   f"```{lang} block, which is never run")
        i = j + 1
    return out


# ---- the scratch folder and the stand-in model ---------------------------------

def setup(work):
    os.makedirs(os.path.join(work, "data"))
    shutil.copy(CHINOOK, os.path.join(work, "data", "chinook.sqlite"))
    for d in ("build", "bin", "home", "shop"):
        os.makedirs(os.path.join(work, d))
    os.symlink(BIN, os.path.join(work, "build", "tabletalk"))
    os.symlink(BIN, os.path.join(work, "bin", "tabletalk"))
    files = {
        "people.csv": "name,city\nAna,Lisbon\nBo,Oslo\nCy,Lisbon\n",
        "ages.csv": "name,age\nann,34\nbob,\ncy,n/a\ndee,41\neve,27\n",
        "shop/customers.csv": "id,name\n1,Ana\n2,Bo\n",
        "shop/orders.csv": "id,customer_id,amount\n1,1,10.50\n2,2,3.00\n3,1,4.25\n",
    }
    for name, text in files.items():
        with open(os.path.join(work, name), "w", encoding="utf-8") as f:
            f.write(text)


def start_model(work):
    log = open(os.path.join(work, "model_server.log"), "w+", encoding="utf-8")
    proc = subprocess.Popen(
        ["node", os.path.join(ROOT, "tests/fixtures/model_server.mjs"),
         os.path.join(ROOT, "tests/fixtures/doc_examples_model.json")],
        stdout=subprocess.PIPE, stderr=log, text=True)
    line = proc.stdout.readline()  # waits for the server's one line
    m = re.match(r"^listening (\S+)", line)
    if not m:
        proc.kill()
        log.seek(0)
        sys.exit(f"FAIL: the scripted model server did not start: {line!r} {log.read()}")
    return proc, m.group(1)


def environment(work, url):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TABLETALK_", "XDG_", "PG"))}
    env.update({
        "HOME": os.path.join(work, "home"),
        "PATH": os.path.join(work, "bin") + os.pathsep + env.get("PATH", "/usr/bin:/bin"),
        "TABLETALK_BASE_URL": url,
        "TABLETALK_STATE_DIR": os.path.join(work, "state"),
        "TABLETALK_DATA_DIR": os.path.join(work, "share"),
        "TABLETALK_CACHE_DIR": os.path.join(work, "cache"),
        "TABLETALK_CONFIG": os.path.join(work, "no-config"),
        "HF_ENDPOINT": "http://127.0.0.1:9",  # nothing may reach the network
        "NO_COLOR": "1",
        "TERM": "dumb",
    })
    return env


# ---- running ---------------------------------------------------------------------

def commands(lines):
    """A sh block's commands: (text, expected exit), continuations and
    here-documents kept with their command."""
    out, i = [], 0
    while i < len(lines):
        line = lines[i]
        i += 1
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        cmd = [line]
        while cmd[-1].endswith("\\") and i < len(lines):
            cmd.append(lines[i])
            i += 1
        heredoc = re.search(r"<<-?\s*'?\"?([A-Za-z_]+)'?\"?", " ".join(cmd))
        first = "\n".join(cmd)
        if heredoc:
            while i < len(lines):
                cmd.append(lines[i])
                i += 1
                if lines[i - 1].strip() == heredoc.group(1):
                    break
        e = EXIT.search(first)
        out.append(("\n".join(cmd), int(e.group(1)) if e else 0))
    return out


def rewrite(text, url):
    return ENDPOINTS.sub(url, text)


def run_sh(block, work, env, url):
    script = ["cd " + shlex_quote(work)]
    for n, (cmd, want) in enumerate(commands(block.lines)):
        script.append(rewrite(cmd, url))
        script.append(f"rc=$?; if [ $rc -ne {want} ]; then echo \"doc_examples: command {n + 1} "
                      f"exits $rc, not {want}\" >&2; exit 99; fi")
    try:
        r = subprocess.run(["bash", "-c", "\n".join(script)], env=env, cwd=work,
                           stdin=subprocess.DEVNULL, capture_output=True, text=True,
                           timeout=DEADLINE_S * max(1, len(script) // 2))
    except subprocess.TimeoutExpired:
        return "did not finish"
    if r.returncode != 0:
        tail = (r.stdout[-1500:] + r.stderr[-1500:]).strip()
        return f"exit {r.returncode}:\n{tail}"
    return None


def shlex_quote(s):
    return "'" + s.replace("'", "'\\''") + "'"


def console_steps(lines):
    """[(command, expected exit, [expected output lines])]"""
    steps = []
    for line in lines:
        if line.startswith("$ "):
            cmd = line[2:]
            e = EXIT.search(cmd)
            steps.append([cmd, int(e.group(1)) if e else 0, []])
        elif steps and steps[-1][0].endswith("\\") and not steps[-1][2]:
            steps[-1][0] += "\n" + line
        elif steps:
            steps[-1][2].append(line)
    return steps


def matches(want, got):
    """Line by line; '...' in a wanted line matches any text."""
    want = [w.rstrip() for w in want]
    while want and not want[-1]:
        want.pop()
    got = [g.rstrip() for g in got]
    while got and not got[-1]:
        got.pop()
    if len(want) != len(got):
        return False
    for w, g in zip(want, got):
        pattern = "^" + ".*".join(re.escape(p) for p in w.split("...")) + "$"
        if not re.match(pattern, g):
            return False
    return True


def output_lines(out, err):
    return (out.split("\n") if out else []) + (err.split("\n") if err else [])


def run_console(block, work, env, url):
    steps = console_steps(block.lines)
    if not steps:
        return "a console block without a `$ ` command"
    for cmd, want_rc, want in steps:
        try:
            r = subprocess.run(["bash", "-c", rewrite(cmd, url)], env=env, cwd=work,
                               stdin=subprocess.DEVNULL, capture_output=True, text=True,
                               timeout=DEADLINE_S)
        except subprocess.TimeoutExpired:
            return f"$ {cmd}: did not finish"
        got = output_lines(r.stdout.rstrip("\n"), r.stderr.rstrip("\n"))
        if r.returncode != want_rc:
            return f"$ {cmd}: exit {r.returncode}, not {want_rc}:\n" + "\n".join(got)
        if not matches(want, got):
            return (f"$ {cmd}: the output differs.\n--- the doc:\n" + "\n".join(want) +
                    "\n--- the program:\n" + "\n".join(got))
    return None


def run_until(block, work, env, url, text):
    """A server: runs until a line with text, then SIGINT; exit 0 wanted."""
    steps = console_steps(block.lines)
    if len(steps) != 1:
        return "a `run: until` block holds one command"
    cmd, _, want = steps[0]
    proc = subprocess.Popen(["bash", "-c", rewrite(cmd, url)], env=env, cwd=work,
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)
    lines = queue.Queue()
    collected = {"out": [], "err": []}

    def reader(stream, name):
        for line in stream:
            collected[name].append(line.rstrip("\n"))
            lines.put(line)
        lines.put(None)

    threads = [threading.Thread(target=reader, args=(proc.stdout, "out"), daemon=True),
               threading.Thread(target=reader, args=(proc.stderr, "err"), daemon=True)]
    for t in threads:
        t.start()
    # until the line with text has come, and as many lines as the doc shows
    want_n = len([w for w in want if w.strip()])
    seen, count, ended, deadline = False, 0, 0, time.monotonic() + DEADLINE_S
    while not (seen and count >= want_n) and ended < 2:
        try:
            line = lines.get(timeout=max(0.1, deadline - time.monotonic()))
        except queue.Empty:
            break
        if line is None:
            ended += 1
            continue
        count += 1
        seen = seen or text in line
    got = collected["out"] + collected["err"]  # what came before the interrupt
    if not seen:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        return f"$ {cmd}: no line with {text!r} came:\n" + "\n".join(got)
    os.killpg(proc.pid, signal.SIGINT)  # as Ctrl-C does: the whole group
    try:
        rc = proc.wait(timeout=DEADLINE_S)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        return f"$ {cmd}: still running after SIGINT"
    for t in threads:
        t.join()
    if rc != 0:
        return f"$ {cmd}: exit {rc} after SIGINT, not 0"
    if not matches(want, got):
        return (f"$ {cmd}: the output differs.\n--- the doc:\n" + "\n".join(want) +
                "\n--- the program:\n" + "\n".join(got))
    return None


def readme_commands():
    """The README's table of commands names every command of --help, and
    only those."""
    with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as f:
        text = f.read()
    m = re.search(r"^## Commands\n(.*?)(?=^## )", text, re.M | re.S)
    listed = set(re.findall(r"^\| `tabletalk ([a-z-]+)", m.group(1), re.M)) if m else set()
    out = subprocess.run([BIN, "--help"], capture_output=True, text=True).stdout
    block = re.search(r"^Commands:\n(.*?)\n\n", out, re.M | re.S)
    known = set(re.findall(r"^  ([a-z-]+) ", block.group(1), re.M)) if block else set()
    if not known:
        results["fail"].append("no commands in tabletalk --help")
    for c in sorted(known - listed):
        results["fail"].append(f"README.md: the table of commands lacks {c}")
    for c in sorted(listed - known):
        results["fail"].append(f"README.md: the table of commands names {c}, which is no command")


def main():
    readme_commands()
    pages = [os.path.join(ROOT, "README.md")] + sorted(
        os.path.join(ROOT, "docs", "guide", f)
        for f in os.listdir(os.path.join(ROOT, "docs", "guide")) if f.endswith(".md"))
    if ONLY:
        pages = [p for p in pages if os.path.relpath(p, ROOT) in ONLY]
    if not shutil.which("node"):
        print("skip: node is not installed (the scripted model server needs it)")
        sys.exit(77)
    work = tempfile.mkdtemp(prefix="tabletalk-doc-examples-")
    server = None
    try:
        setup(work)
        server, url = start_model(work)
        env = environment(work, url)
        for page in pages:
            for b in blocks(page):
                why = None
                if b.mark and b.mark.group(1) == "not run":
                    if not b.mark.group(2):
                        results["fail"].append(f"{b.where()}: `not run` without a reason")
                    else:
                        results["skip"].append(f"{b.where()}: {b.mark.group(2)}")
                    continue
                if b.mark:  # run: until "TEXT", then interrupt
                    u = UNTIL.match(b.mark.group(2))
                    if not u or b.lang != "console":
                        why = f"an unknown mark: {b.mark.group(0).strip()}"
                    else:
                        why = run_until(b, work, env, url, u.group(1))
                elif b.lang == "sh":
                    why = run_sh(b, work, env, url)
                else:
                    why = run_console(b, work, env, url)
                if why:
                    results["fail"].append(f"{b.where()}: {why}")
                else:
                    results["ok"] += 1
                    print(f"ok: {b.where()}")
    finally:
        if server:
            server.terminate()
            server.wait()
        shutil.rmtree(work, ignore_errors=True)
    for s in results["skip"]:
        print("skipped:", s)
    for f in results["fail"]:
        print(f"FAIL: {f}\n")
    if results["fail"]:
        print(f"{len(results['fail'])} example(s) failed")
        sys.exit(1)
    if results["ok"] == 0:
        sys.exit("FAIL: no example ran")
    print(f"PASS: {results['ok']} examples ran as the docs show; {len(results['skip'])} are marked "
          "as needing what a test machine has not (listed above)")


if __name__ == "__main__":
    main()
