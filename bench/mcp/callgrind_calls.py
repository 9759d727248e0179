#!/usr/bin/env python3
"""callgrind_calls.py — instructions per run_sql call in `tabletalk serve-mcp`
over stdio, counted by callgrind, for the two kinds of call bench.mjs times
against dbhub: the same aggregate again (answered from the result cache) and
distinct point lookups (each one runs).

    python3 bench/mcp/callgrind_calls.py BIN DB [--calls 51] [--baseline BIN2]

For each kind the server runs twice under `valgrind --tool=callgrind`, once
with one call and once with CALLS calls, sent one at a time (each request
waits for its response, as an agent's do); the figure is the difference of
the request path's instructions (the reading thread's line handling,
tt_stdio_line, plus the workers', tt_stdio_worker, all inclusive) divided by
CALLS - 1, so start-up, the background catalog read and exit fall out. The
database is a private copy; the catalog cache is warmed first, without
valgrind.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile

SAME = ("SELECT g.Name AS genre, count(*) AS tracks FROM Track t JOIN Genre g "
        "ON g.GenreId = t.GenreId GROUP BY g.GenreId ORDER BY tracks DESC")


def lines(n, distinct):
    out = [{"jsonrpc": "2.0", "id": 0, "method": "initialize",
            "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                       "clientInfo": {"name": "callgrind_calls", "version": "1"}}},
           {"jsonrpc": "2.0", "method": "notifications/initialized"}]
    for i in range(n):
        sql = ("SELECT TrackId, Name, Milliseconds FROM Track WHERE TrackId = %d" % (i + 1)
               if distinct else SAME)
        out.append({"jsonrpc": "2.0", "id": i + 1, "method": "tools/call",
                    "params": {"name": "run_sql", "arguments": {"sql": sql}}})
    return out


def drive(cmd, msgs):
    """Sends the messages one at a time, each request after the last response."""
    p = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.DEVNULL, text=True, bufsize=1)
    for m in msgs:
        p.stdin.write(json.dumps(m) + "\n")
        p.stdin.flush()
        if "id" in m:
            reply = json.loads(p.stdout.readline())
            if "error" in reply or reply.get("result", {}).get("isError"):
                sys.exit("callgrind_calls: call %s failed: %s" % (m["id"], json.dumps(reply)[:300]))
    p.stdin.close()
    p.wait()


def inclusive(out_file, functions):
    text = subprocess.run(["callgrind_annotate", "--inclusive=yes", out_file],
                          capture_output=True, text=True, check=True).stdout
    total = 0
    for fn in functions:
        for line in text.splitlines():
            if (":%s [" % fn) in line:
                total += int(line.split()[0].replace(",", ""))
                break
    return total


def per_call(binary, db, state, tmp, calls, distinct):
    counts = []
    for n in (1, calls):
        out = os.path.join(tmp, "cg.%d.%d.out" % (distinct, n))
        drive(["valgrind", "--tool=callgrind", "--callgrind-out-file=" + out, binary, "serve-mcp", db,
               "--state-dir", state], lines(n, distinct))
        counts.append(inclusive(out, ["tt_stdio_line", "tt_stdio_worker"]))
    return (counts[1] - counts[0]) // (calls - 1)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("bin")
    ap.add_argument("db")
    ap.add_argument("--calls", type=int, default=51)
    ap.add_argument("--baseline", help="another build, counted the same way")
    a = ap.parse_args()
    if not shutil.which("valgrind"):
        sys.exit("callgrind_calls: valgrind is not installed")
    with tempfile.TemporaryDirectory(prefix="tt-callgrind-calls-") as tmp:
        db = os.path.join(tmp, "db.sqlite")
        shutil.copyfile(a.db, db)
        print("| build | same query (cached): instructions per call | distinct lookups: instructions per call |")
        print("| --- | --- | --- |")
        for label, binary in (("tabletalk", a.bin), ("baseline", a.baseline)):
            if not binary:
                continue
            state = os.path.join(tmp, "state-" + label)
            drive([binary, "serve-mcp", db, "--state-dir", state], lines(1, False))  # warm the catalog
            same = per_call(binary, db, state, tmp, a.calls, False)
            dist = per_call(binary, db, state, tmp, a.calls, True)
            print("| %s | %s | %s |" % (label, format(same, ","), format(dist, ",")))


if __name__ == "__main__":
    main()
