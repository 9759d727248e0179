#!/usr/bin/env python3
"""man_page.py BIN TEMPLATE MANPAGE MARKDOWN SRC — the manual page the build
generated from the option tables (tabletalk --generate-man-page) says what
the program does:

- every option each command's --help lists is described in the page, in
  that command's section or in the section of a shared option group the
  command names, as a tagged paragraph whose text is not empty, and every
  command has a section with a description;
- the page renders with groff (-man -Tutf8 -ww) and with man -l without a
  single warning;
- every TABLETALK_* variable the program reads (src/) is in ENVIRONMENT;
- the generator refuses a template that leaves out a shared option group,
  naming it (it refuses an option without a doc paragraph the same way);
- MANPAGE is what the generator makes from TEMPLATE now, and the Markdown
  copy committed for readers on the web (MARKDOWN) is up to date.
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

BIN, TEMPLATE, MANPAGE, MARKDOWN, SRC = sys.argv[1:6]
failures = []


def bad(msg):
    failures.append(msg)
    print("FAIL:", msg)


def run(*args, **kw):
    return subprocess.run(args, capture_output=True, text=True, **kw)


def plain(roff):
    """Roff text without font and escape sequences."""
    t = re.sub(r"\\f[BIRP]", "", roff)
    t = t.replace("\\%", "").replace("\\&", "").replace("\\-", "-")
    t = t.replace("\\(dq", '"').replace("\\e", "\\")
    return re.sub(r"\\\[u([0-9A-F]{4,6})\]", lambda m: chr(int(m.group(1), 16)), t)


def sections(page):
    """{section or subsection title: [(tag, body)]} from .SH/.SS/.TP."""
    out, cur = {}, None
    lines = page.split("\n")
    i = 0
    while i < len(lines):
        line = lines[i]
        m = re.match(r'^\.(SH|SS) "?(.*?)"?$', line)
        if m:
            cur = plain(m.group(2))
            out.setdefault(cur, [])
        elif line == ".TP" and cur is not None:
            tag = plain(lines[i + 1]) if i + 1 < len(lines) else ""
            body = []
            j = i + 2
            while j < len(lines) and not re.match(r"^\.(TP|SH|SS|PP)\b", lines[j]):
                if not lines[j].startswith("."):
                    body.append(plain(lines[j]))
                j += 1
            out[cur].append((tag, " ".join(body).strip()))
            i = j - 1
        i += 1
    return out


# ---- the generator: the page the build made is today's ----------------------
with open(MANPAGE, encoding="utf-8") as f:
    page = f.read()
gen = run(BIN, "--generate-man-page", "roff", TEMPLATE)
if gen.returncode != 0 or gen.stderr:
    bad(f"--generate-man-page roff exits {gen.returncode}: {gen.stderr.strip()}")
elif gen.stdout != page:
    bad(f"{MANPAGE} is not what the generator makes from {TEMPLATE} now (rebuild)")

# ---- every command's options, in its section or a group it names ------------
secs = sections(page)
main_help = run(BIN, "--help").stdout
cmds = []
in_cmds = False
for line in main_help.split("\n"):
    if line.startswith("Commands:"):
        in_cmds = True
    elif in_cmds and not line.strip():
        break
    elif in_cmds:
        cmds.append(line.split()[0])
if not cmds:
    bad("no commands in tabletalk --help")

for tag, body in [t for s in secs.values() for t in s]:
    if not body:
        bad(f"the man page's entry '{tag}' has no text")

for cmd in cmds:
    title = f"tabletalk {cmd}"
    if title not in secs:
        bad(f"the man page has no section {title}")
        continue
    help_text = run(BIN, cmd, "--help").stdout
    shared = []  # the groups listed by name ("Model: --a --b")
    for line in help_text.split("\n"):
        m = re.match(r"^([A-Z][a-z]+): --", line)
        if m:
            shared.append(m.group(1))
    # the section's own text: the paragraph after the synopsis must exist
    start = page.index(f'.SS "{title}"')
    nxt = re.search(r"^\.S[SH] ", page[start + 1:], re.M)
    own_text = page[start:start + 1 + nxt.start()] if nxt else page[start:]
    also = re.search(r"Also the (.*?) options \(see OPTIONS\)", plain(own_text).replace("\n", " "))
    named = re.split(r", | and ", also.group(1)) if also else []
    if len(plain(own_text)) < 200:
        bad(f"{title} has hardly any description")
    places = [title] + [f"{g} options" for g in named]
    tags = " ".join(t for p in places for t, _ in secs.get(p, []))
    opts = re.findall(r"(?:^|\s)(--[a-z][a-z0-9-]*)", "\n".join(
        l for l in help_text.split("\n") if not l.startswith(("Usage:", "       tabletalk"))))
    for name in sorted(set(opts)):
        if name == "--help":
            continue
        if not re.search(rf"(^|[\s,]){re.escape(name)}(\s|\[|$)", tags):
            bad(f"{name} of tabletalk {cmd} is not described in the man page "
                f"(looked in: {', '.join(places)})")
    for g in shared:
        if g.lower() in ("spider", "behaviors", "report", "schema", "look", "output", "query"):
            continue  # a command's own titled groups are in its section
        if g not in named and f"{g} options" in secs:
            bad(f"{title} does not name the {g} options it takes")

if "-h, --help" not in " ".join(t for t, _ in secs.get("OPTIONS", [])):
    bad("OPTIONS does not describe -h, --help")

# ---- environment: every TABLETALK_* variable the program reads ---------------
env_tags = " ".join(t for t, _ in secs.get("ENVIRONMENT", []))
read = set()
for root, _, files in os.walk(SRC):
    for fn in files:
        if fn.endswith((".c", ".h")):
            with open(os.path.join(root, fn), encoding="utf-8", errors="replace") as f:
                read |= set(re.findall(r"TABLETALK_[A-Z_]*[A-Z]", f.read()))
read.discard("TABLETALK_")
for var in sorted(read):
    if var not in env_tags:
        bad(f"{var} is read by the program but not in the man page's ENVIRONMENT")

# ---- rendering without a warning ---------------------------------------------
if shutil.which("groff"):
    r = run("groff", "-man", "-Tutf8", "-ww", MANPAGE)
    if r.returncode != 0 or r.stderr.strip():
        bad(f"groff -man -Tutf8 -ww warns: {r.stderr.strip()[:2000]}")
    elif len(r.stdout) < 20000:
        bad("groff renders a suspiciously short page")
else:
    print("skip: groff is not installed")
if shutil.which("man"):
    env = dict(os.environ, MANPAGER="cat", PAGER="cat", MANWIDTH="80", LC_ALL="C.UTF-8")
    r = run("man", "-l", MANPAGE, env=env)
    if r.returncode != 0 or r.stderr.strip():
        bad(f"man -l exits {r.returncode}: {r.stderr.strip()[:2000]}")
    elif "tabletalk serve-mcp" not in r.stdout.replace("\u2010", "-"):
        bad("man -l does not show the page")
else:
    print("skip: man is not installed")

# ---- the generator refuses what is incomplete --------------------------------
with tempfile.TemporaryDirectory() as tmp:
    with open(TEMPLATE, encoding="utf-8") as f:
        tpl = f.read()
    broken = os.path.join(tmp, "no-model.1.in")
    with open(broken, "w", encoding="utf-8") as f:
        f.write(tpl.replace("@group Model\n", ""))
    out = os.path.join(tmp, "page.1")
    r = run(BIN, "--generate-man-page", "roff", broken, out)
    if r.returncode != 1 or '"@group Model"' not in r.stderr or os.path.exists(out):
        bad(f"a template without @group Model: exit {r.returncode}, {r.stderr.strip()!r}, "
            f"page written: {os.path.exists(out)}")

# ---- the Markdown copy for readers on the web ---------------------------------
md = run(BIN, "--generate-man-page", "markdown", TEMPLATE)
with open(MARKDOWN, encoding="utf-8") as f:
    committed = f.read()
if md.returncode != 0 or md.stdout != committed:
    bad(f"{MARKDOWN} is out of date; regenerate it with\n"
        f"  build/tabletalk --generate-man-page markdown docs/reference/tabletalk.1.in "
        f"docs/reference/tabletalk.md")

if failures:
    sys.exit(1)
print(f"PASS: the man page describes every option of {len(cmds)} commands, renders without "
      "warnings, names every TABLETALK_* variable, and its Markdown copy is up to date")
