#!/usr/bin/python3
"""db_calls.py — the files of src/db/ call each other one way
(docs/contributing/db-engines.md): engines (db/sqlite/, db/pg/...) call the
shared files of db/, and the shared files reach an engine only through its
table, which only the engine selection (engines.c) names. Reads the
symbols each object file of the db library defines and uses (nm), and
names every call circle between files, every engine that uses another
engine's code, and every shared file that uses an engine's code directly.

usage: db_calls.py OBJECT...   (the object files of tt_db)
"""
import os
import subprocess
import sys

SELECTION = "engines.c"  # the one shared file that names the engines' tables


def label(path):
    """src/db/sqlite/exec.c.o -> sqlite/exec.c"""
    parts = os.path.normpath(path).split(os.sep)
    if "db" in parts:
        parts = parts[len(parts) - parts[::-1].index("db"):]
    name = "/".join(parts)
    return name[:-2] if name.endswith(".o") else name


def symbols(obj):
    out = subprocess.run(["nm", "-P", obj], check=True, capture_output=True, text=True).stdout
    defined, used = set(), set()
    for line in out.splitlines():
        f = line.split()
        if len(f) < 2:
            continue
        name, kind = f[0], f[1]
        if kind == "U":
            used.add(name)
        elif kind.isupper():  # global: text, data, read-only data, bss
            defined.add(name)
    return defined, used


def engine_of(name):
    """The engine folder a file is in, or None for a shared file."""
    return name.split("/")[0] if "/" in name else None


def circles(graph):
    """Strongly connected components of more than one file (Tarjan)."""
    index, low, stack, on, out = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def check(objects):
    files = {}
    for obj in objects:
        files[label(obj)] = symbols(obj)
    owner = {}
    for name, (defined, _) in files.items():
        for sym in defined:
            owner[sym] = name
    graph = {name: set() for name in files}
    why = {}
    for name, (_, used) in files.items():
        for sym in used:
            other = owner.get(sym)
            if other and other != name:
                graph[name].add(other)
                why.setdefault((name, other), sym)
    problems = []
    for comp in circles(graph):
        problems.append("call circle between %s" % ", ".join(comp))
    for (a, b), sym in sorted(why.items()):
        ea, eb = engine_of(a), engine_of(b)
        if ea and eb and ea != eb:
            problems.append("%s (engine %s) uses %s of %s (engine %s): engines share code only "
                            "through the shared files of db/" % (a, ea, sym, b, eb))
        elif not ea and eb and a != SELECTION:
            problems.append("%s uses %s of %s directly: shared files reach an engine only "
                            "through its table (db/engine.h)" % (a, sym, b))
    return problems, len(files)


def main():
    if len(sys.argv) < 2:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    problems, n = check(sys.argv[1:])
    for p in problems:
        print("db_calls: " + p, file=sys.stderr)
    if problems:
        return 1
    print("db_calls: %d files of db/, no call circle; engines meet only through engine.h" % n)
    return 0


if __name__ == "__main__":
    sys.exit(main())
