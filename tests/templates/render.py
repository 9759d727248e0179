#!/usr/bin/python3
"""render.py TEMPLATE.jinja CONVERSATION.json [--generation]

Renders a conversation with an official chat template the way Hugging Face
transformers' apply_chat_template does (the environment llama.cpp's
templates were written for): a sandboxed Jinja2 environment with
trim_blocks and lstrip_blocks, the loop-controls extension, tojson that
keeps key order and non-ASCII text (json.dumps, ensure_ascii=False),
raise_exception and strftime_now. The conversation file holds "messages"
and "tools" in the OpenAI shape (tool-call arguments as objects, as
transformers expects), plus optional "vars" for the template (bos_token,
date_string, enable_thinking...). Prints the rendering, nothing else."""
import json
import sys

import jinja2
from jinja2.ext import loopcontrols
from jinja2.sandbox import ImmutableSandboxedEnvironment


def raise_exception(message):
    raise jinja2.exceptions.TemplateError(message)


def tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
    return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators,
                      sort_keys=sort_keys)


def render(template_path, conv, generation):
    """The template's rendering of conv (a dict as in the file)."""
    with open(template_path, encoding="utf-8") as f:
        source = f.read()
    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True,
                                        extensions=[loopcontrols])
    env.filters["tojson"] = tojson
    env.globals["raise_exception"] = raise_exception
    env.globals["strftime_now"] = lambda fmt: "26 Jul 2024"
    template = env.from_string(source)
    variables = {"messages": conv["messages"], "add_generation_prompt": generation}
    if conv.get("tools"):
        variables["tools"] = conv["tools"]
    variables.update(conv.get("vars", {}))
    return template.render(**variables)


def main():
    with open(sys.argv[2], encoding="utf-8") as f:
        conv = json.load(f)
    sys.stdout.write(render(sys.argv[1], conv, "--generation" in sys.argv))


if __name__ == "__main__":
    main()
