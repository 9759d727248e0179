#!/usr/bin/env python3
"""export_golden.py — CTest: `tabletalk sql` writes the same bytes in every
format (csv, tsv, json, the plain table) as the golden files in
tests/golden/export/, which were written by the build before the export's
fast path (own number formatting, a JSON writer without jansson values, the
escapes done in runs). The query (cells.sql) holds the cells where a fast
path could differ: control, invisible and bidi characters, invalid UTF-8,
NUL, quotes and separators, blobs, NULL, the integer limits and reals of
every magnitude (subnormal, infinite, at the 15-digit boundaries).

    export_golden.py TABLETALK DB GOLDEN_DIR

TT_UPDATE_GOLDEN=1 rewrites the golden files from this build instead (only
from a build whose output is known to be right).
"""
import os
import re
import subprocess
import sys

tt, db, golden = sys.argv[1], sys.argv[2], sys.argv[3]
update = os.environ.get("TT_UPDATE_GOLDEN") == "1"
with open(os.path.join(golden, "cells.sql"), "rb") as f:
    sql = f.read()
# the time taken is the one thing that changes from run to run
elapsed = re.compile(rb'"elapsed_ms":[0-9.]+|(?<=rows, )[0-9.]+ ms')
fails = []
for fmt, ext in (("csv", "csv"), ("tsv", "tsv"), ("json", "json"), ("table", "txt")):
    p = subprocess.run([tt, "sql", db, "-", "--format", fmt, "--max-rows", "100000"], input=sql,
                       capture_output=True)
    if p.returncode != 0:
        fails.append("%s: exit %d: %s" % (fmt, p.returncode, p.stderr.decode(errors="replace")))
        continue
    got = elapsed.sub(lambda m: b'"elapsed_ms":0' if m.group(0).startswith(b'"') else b"0 ms",
                      p.stdout)
    path = os.path.join(golden, "cells." + ext)
    if update:
        with open(path, "wb") as f:
            f.write(got)
    with open(path, "rb") as f:
        want = f.read()
    if got != want:
        lines_got, lines_want = got.split(b"\n"), want.split(b"\n")
        first = next((i for i, (a, b) in enumerate(zip(lines_got, lines_want)) if a != b),
                     min(len(lines_got), len(lines_want)))
        fails.append("%s differs from %s at line %d:\n  want %r\n  got  %r" % (
            fmt, path, first + 1, lines_want[first] if first < len(lines_want) else b"<end>",
            lines_got[first] if first < len(lines_got) else b"<end>"))
    if len(got) < 10000:  # the query's 415 rows, not an error message
        fails.append("%s: only %d bytes" % (fmt, len(got)))

for f in fails:
    print("FAIL", f)
print("export_golden: %d formats, %d failed" % (4, len(fails)))
sys.exit(1 if fails else 0)
