#!/usr/bin/env python3
"""run.py — the DuckDB engine measured side by side (a benchmark, not a
test): CSV files of 10 MB, 100 MB and (with --big) 1 GB made by
bench/csv/make_big_csv.sh, and the same data as Parquet (written by DuckDB
itself), each asked two queries, a count and a grouped sum, by

  tabletalk-sqlite  tabletalk sql FILE.csv --engine sqlite (today's import path)
  tabletalk-duckdb  tabletalk sql FILE.csv|FILE.parquet --engine duckdb
  duckdb-node       DuckDB itself, its official Node binding (same release)
  sqlite3-import    the sqlite3 shell: .import into :memory:, then the query

Each is run twice in a row: "first" (the first process after the file was
written) and "repeat" (the same command again, with the file in the page
cache). Every run is a fresh process, as a command-line user meets it; time
is wall-clock and memory the peak resident set (GNU time); for DuckDB's Node
binding also the time inside DuckDB, without Node's start-up. Every contestant
must print the same numbers. Files go to a scratch folder (default /tmp)
and are removed at the end.

Usage: bench/duckdb/run.py [--bin build/tabletalk] [--sizes 10,100] [--big]
       [--dir /tmp] [--json out.json]
Needs: GNU time, sqlite3, node, `npm ci` in bench/duckdb (the Node
binding), and libduckdb (scripts/fetch-duckdb.sh)."""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
QUERIES = {
    "count": "SELECT count(*) AS n FROM big",
    "sum by city": "SELECT city, round(sum(amount), 2) AS total FROM big GROUP BY city ORDER BY city",
}


def timed(cmd, env=None):
    """Runs cmd under GNU time: (seconds, peak MiB, stdout)."""
    out = subprocess.run(["/usr/bin/time", "-f", "TT_TIME %e %M"] + cmd, capture_output=True,
                         text=True, env=env)
    m = re.search(r"TT_TIME ([0-9.]+) ([0-9]+)", out.stderr)
    if not m:
        sys.exit(f"failed: {' '.join(cmd)}\n{out.stderr[-2000:]}")
    if out.returncode != 0:  # a contestant that cannot answer is a result too
        return float(m.group(1)), int(m.group(2)) / 1024.0, "FAILED (exit %d): %s" % (
            out.returncode, out.stderr.replace("TT_TIME", "").strip()[:200]), None
    inside = re.search(r"inside_ms ([0-9.]+)", out.stderr)
    return float(m.group(1)), int(m.group(2)) / 1024.0, out.stdout, (
        float(inside.group(1)) / 1000.0 if inside else None)


def contestants(args, csv, parquet):
    wanted = [q.strip() for q in args.queries.split(",")]
    tt = [args.bin, "sql"]
    common = ["--timeout", "600", "--format", "csv"]
    out = []
    for q, sql in QUERIES.items():
        if q not in wanted:
            continue
        out.append(("tabletalk-sqlite", "csv", q, tt + [csv, sql, "--engine", "sqlite"] + common))
        out.append(("tabletalk-duckdb", "csv", q, tt + [csv, sql, "--engine", "duckdb"] + common))
        out.append(("duckdb-node", "csv", q, ["node", os.path.join(HERE, "duckdb_query.mjs"), csv, sql]))
        out.append(("sqlite3-import", "csv", q,
                    ["sqlite3", ":memory:", "-cmd", ".mode csv", f".import {csv} big", sql]))
        out.append(("tabletalk-duckdb", "parquet", q, tt + [parquet, sql] + common))
        out.append(("duckdb-node", "parquet", q,
                    ["node", os.path.join(HERE, "duckdb_query.mjs"), parquet, sql]))
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default=os.path.join(ROOT, "build", "tabletalk"))
    ap.add_argument("--sizes", default="10,100")
    ap.add_argument("--big", action="store_true", help="also 1 GB (1024 MB)")
    ap.add_argument("--dir", default="/tmp")
    ap.add_argument("--json")
    ap.add_argument("--queries", default=",".join(QUERIES), help="which of: " + ", ".join(QUERIES))
    args = ap.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")] + ([1024] if args.big else [])
    make = os.path.join(ROOT, "build", "tests", "ddb_make")
    env = dict(os.environ, NO_COLOR="1")
    results = []
    for mb in sizes:
        work = tempfile.mkdtemp(prefix=f"tt-bench-duckdb-{mb}-", dir=args.dir)
        try:
            csv, parquet = os.path.join(work, "big.csv"), os.path.join(work, "big.parquet")
            subprocess.run([os.path.join(ROOT, "bench", "csv", "make_big_csv.sh"), csv, str(mb)],
                           check=True)
            subprocess.run([make, ":memory:", f"COPY (FROM read_csv('{csv}')) TO '{parquet}' "
                            "(FORMAT parquet)"], check=True)
            for who, fmt, q, cmd in contestants(args, csv, parquet):
                for run in ("first", "repeat"):
                    s, mib, out, inside = timed(cmd, env)
                    results.append({"size_mb": mb, "file": fmt, "query": q, "who": who, "run": run,
                                    "seconds": s, "peak_mib": round(mib, 1), "inside_s": inside,
                                    "result": " ".join(out.split())[:120]})
                    print(f"{mb:5d} MB {fmt:8s} {q:12s} {who:17s} {run:6s} {s:7.2f} s "
                          f"{mib:8.1f} MiB  {'' if inside is None else f'(in DuckDB {inside:.2f} s) '}"
                          f"{' '.join(out.split())[:50]}", flush=True)
        finally:
            shutil.rmtree(work, ignore_errors=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)
    # ratios on the repeated runs
    print("\nratios (repeat runs): tabletalk-sqlite / tabletalk-duckdb, tabletalk-duckdb / duckdb-node")
    for mb in sizes:
        for q in QUERIES:
            if not any(r["query"] == q and r["size_mb"] == mb for r in results):
                continue

            def get(who, fmt):
                for r in results:
                    if (r["size_mb"], r["query"], r["who"], r["file"], r["run"]) == (mb, q, who, fmt, "repeat"):
                        return None if r["result"].startswith("FAILED") else r["seconds"]
                return None
            a, b, c = get("tabletalk-sqlite", "csv"), get("tabletalk-duckdb", "csv"), get("duckdb-node", "csv")
            p, pn = get("tabletalk-duckdb", "parquet"), get("duckdb-node", "parquet")
            ratio = lambda x, y, fmt: (fmt % (x / max(y, 0.01))) if x is not None and y is not None else "n/a"
            print(f"{mb:5d} MB {q:12s} csv: {ratio(a, b, '%.1fx faster')}, {ratio(b, c, '%.2fx')} DuckDB's "
                  f"time; parquet: {ratio(p, pn, '%.2fx')} DuckDB's time")


if __name__ == "__main__":
    main()
