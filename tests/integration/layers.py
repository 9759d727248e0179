#!/usr/bin/python3
"""layers.py — the layers of src/ are a one-way street (DESIGN.md, "Layers
and rooms"): a file may include the headers of its own layer and the
public header of a layer below it, never a layer above, and never another
layer's private headers. Inside db/, each engine has a folder of its own
(db/sqlite/, db/pg/...): an engine includes the shared headers of db/ and
its own folder's, never another engine's, and a shared file of db/
includes no engine's header (it reaches engines through db/engine.h); the
headers of db/ include each other without a circle. Reads every
#include "..." under src/ and names each file:line that breaks a rule.

usage: layers.py [SRC_DIR]   (default: the src/ beside tests/)
"""
import os
import re
import sys

# Lowest first. Layers on one rank do not include each other. chart/ sits
# low although DESIGN.md lists it after the session: it knows no LLM, and
# the agent draws charts (make_chart), so the agent is above it. session/
# (configuration, the model factory, the service that opens a database and
# its schema, questions, the event and run shapes) is what every front end
# stands on. eval/ is a front end like mcp/ (the CLI runs evals). httpd/ (libmicrohttpd and what
# the two HTTP servers, mcp/ and web/, share) knows only util/.
RANKS = {
    "util": 0,
    "httpd": 1,
    "db": 1,
    "schema": 2,
    "chart": 2,
    "llm": 3,
    "agent": 4,
    "store": 5,
    "session": 6,
    "mcp": 7,
    "web": 7,
    "eval": 7,
    "cli": 8,
}
# Headers that are no layer's: generated, or third party.
OUTSIDE = {"tt_version.h", "llama.h", "ggml.h", "gguf.h"}
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')


def public_header(layer, header):
    """A layer's face: its one header named after it."""
    return header == layer + ".h"


def db_engine(rel):
    """The engine folder of a file of db/ (db/sqlite/exec.c: sqlite), None
    for the shared files of db/."""
    parts = rel.replace(os.sep, "/").split("/")
    return parts[1] if len(parts) > 2 else None


def check_db_include(rel, inc, where):
    """The rules between db/'s shared files and its engine folders."""
    parts = inc.split("/")
    if parts[0] != "db" or len(parts) < 3:
        return None  # a shared header of db/ (or another layer's)
    mine, theirs = db_engine(rel), parts[1]
    if mine is None:
        return ('%s: the shared file includes "%s" of the engine %s; shared files reach engines '
                'only through db/engine.h' % (where, inc, theirs))
    if mine != theirs:
        return ('%s: the engine %s includes "%s" of the engine %s; engines share code only '
                'through the shared files of db/' % (where, mine, inc, theirs))
    return None


def include_circles(edges):
    """Circles among the headers of one layer: each as a list of files."""
    found, state = [], {}

    def visit(v, path):
        state[v] = 1
        for w in sorted(edges.get(v, ())):
            if state.get(w) == 1:
                found.append(path[path.index(w):] + [w])
            elif w not in state:
                visit(w, path + [w])
        state[v] = 2

    for v in sorted(edges):
        if v not in state:
            visit(v, [v])
    return found


def check(src):
    problems = []
    db_edges = {}
    for root, _, files in os.walk(src):
        for name in sorted(files):
            if not name.endswith((".c", ".h")):
                continue
            path = os.path.join(root, name)
            rel = os.path.relpath(path, src)
            layer = rel.split(os.sep)[0]
            if layer not in RANKS:
                problems.append("%s: the folder %s is in no layer; add it to RANKS in %s and to "
                                "the table in DESIGN.md" % (rel, layer, os.path.basename(__file__)))
                continue
            with open(path, encoding="utf-8", errors="replace") as f:
                for lineno, line in enumerate(f, 1):
                    m = INCLUDE.match(line)
                    if not m:
                        continue
                    inc = m.group(1)
                    if inc in OUTSIDE or "/" not in inc:
                        continue  # generated, third party, or this folder's own
                    other, header = inc.split("/", 1)
                    where = "src/%s:%d" % (rel.replace(os.sep, "/"), lineno)
                    if layer == "db" and other == "db":
                        db_edges.setdefault(rel.replace(os.sep, "/"), set()).add(inc)
                        problem = check_db_include(rel, inc, where)
                        if problem:
                            problems.append(problem)
                    if other not in RANKS:
                        problems.append('%s: includes "%s" from no known layer' % (where, inc))
                    elif other == layer:
                        continue
                    elif RANKS[other] >= RANKS[layer]:
                        problems.append('%s: %s/ (layer %d) includes "%s" of %s/ (layer %d), which is '
                                        'not below it; move the code down or pass what it needs in'
                                        % (where, layer, RANKS[layer], inc, other, RANKS[other]))
                    elif not public_header(other, header):
                        problems.append('%s: includes "%s", a private header of %s/; use %s/%s.h'
                                        % (where, inc, other, other, other))
    for circle in include_circles(db_edges):
        problems.append("src/%s: includes itself through %s; move what they share down into one "
                        "header" % (circle[0], " -> ".join(circle[1:])))
    return problems


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    src = sys.argv[1] if len(sys.argv) > 1 else os.path.join(here, "..", "..", "src")
    problems = check(src)
    for p in problems:
        print(p, file=sys.stderr)
    if problems:
        print("layers: %d include(s) against the layers of DESIGN.md" % len(problems), file=sys.stderr)
        return 1
    print("layers: every include of %s goes down the layers" % os.path.normpath(src))
    return 0


if __name__ == "__main__":
    sys.exit(main())
