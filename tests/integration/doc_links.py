#!/usr/bin/env python3
"""doc_links.py ROOT — every relative link in README.md and docs/**/*.md
points at a file or folder that exists, and every #anchor (in the same page
or another Markdown page) at a heading of that page, named as GitHub names
it. Links to the web (http, https, mailto) are not followed; links inside
code are not links.

PENDING lists the pages another branch of issue 24 is writing: a link to
one of them is reported, not failed, until the page exists (then it is
checked like any other).
"""
import os
import re
import sys

ROOT = os.path.abspath(sys.argv[1])
PENDING = {
    "docs/contributing/testing.md": "written with the fast tests (issue 24, deliverable 6)",
}

FENCE = re.compile(r"^\s*(`{3,}|~{3,})([^`]*)$")  # a fence: no backtick after the marks


class Fences:
    """Tells, line by line, whether a line is in a fenced code block (a
    closing fence has the opening's character, as many or more, and no
    info string)."""

    def __init__(self):
        self.open = None

    def step(self, line):
        """True when the line belongs to a fence (a mark or its content)."""
        m = FENCE.match(line)
        if self.open is None:
            if m:
                self.open = m.group(1)
                return True
            return False
        if m and m.group(1)[0] == self.open[0] and len(m.group(1)) >= len(self.open) \
                and not m.group(2).strip():
            self.open = None
        return True
LINK = re.compile(r"(!?)\[((?:[^\[\]]|\[[^\]]*\])*)\]\(\s*<?([^)\s>]*)>?(?:\s+\"[^\"]*\")?\s*\)")


def pages():
    out = [os.path.join(ROOT, "README.md")]
    for d, _, files in os.walk(os.path.join(ROOT, "docs")):
        out += [os.path.join(d, f) for f in files if f.endswith(".md")]
    return sorted(out)


def prose_lines(text):
    """(line number, line) outside fenced code blocks, inline code removed."""
    fences = Fences()
    for n, line in enumerate(text.split("\n"), 1):
        if fences.step(line):
            continue
        yield n, re.sub(r"(`+)(.+?)\1", "", line)


def slug(heading):
    """GitHub's anchor for a heading's text."""
    t = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # links: their text
    t = re.sub(r"<[^>]+>", "", t).replace("`", "").replace("*", "")
    t = t.strip().lower()
    t = "".join(c for c in t if c.isalnum() or c in " -_")
    return t.replace(" ", "-")


_anchors = {}


def anchors(path):
    if path not in _anchors:
        with open(path, encoding="utf-8") as f:
            text = f.read()
        seen, out = {}, set()
        fences = Fences()
        for line in text.split("\n"):
            m = None if fences.step(line) else re.match(r"^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$", line)
            if not m:
                continue
            s = slug(m.group(2))
            k = seen.get(s, 0)
            seen[s] = k + 1
            out.add(s if k == 0 else f"{s}-{k}")
        # explicit anchors: <a id="x"> or <a name="x">
        out |= set(re.findall(r"<a\s+(?:id|name)=\"([^\"]+)\"", text))
        _anchors[path] = out
    return _anchors[path]


failures, pending, checked = [], set(), 0
for page in pages():
    rel_page = os.path.relpath(page, ROOT)
    with open(page, encoding="utf-8") as f:
        text = f.read()
    for n, line in prose_lines(text):
        for m in LINK.finditer(line):
            target = m.group(3)
            if not target or re.match(r"^[a-z][a-z0-9+.-]*:", target, re.I):
                continue  # the web, mail
            checked += 1
            path, _, anchor = target.partition("#")
            dest = os.path.normpath(os.path.join(os.path.dirname(page), path)) if path else page
            rel_dest = os.path.relpath(dest, ROOT)
            where = f"{rel_page}:{n}: [{m.group(2)}]({target})"
            if not dest.startswith(ROOT + os.sep) and dest != ROOT:
                failures.append(f"{where}: points outside the repository")
                continue
            if not os.path.exists(dest):
                if rel_dest in PENDING:
                    pending.add(f"{rel_dest} ({PENDING[rel_dest]}), linked from {where}")
                else:
                    failures.append(f"{where}: {rel_dest} does not exist")
                continue
            if anchor:
                if not dest.endswith(".md"):
                    failures.append(f"{where}: an anchor in a file that is not Markdown")
                elif anchor not in anchors(dest):
                    failures.append(f"{where}: {rel_dest} has no heading #{anchor}")

for p in sorted(pending):
    print("pending:", p)
for f in failures:
    print("FAIL:", f)
if failures:
    sys.exit(1)
print(f"PASS: {checked} relative links in {len(pages())} pages point at files and headings that exist")
