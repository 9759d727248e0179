#!/usr/bin/env python3
"""run.py — the benchmark suite (`make bench`, not part of `make test`):
each figure of tabletalk against its peer, measured side by side in one
interleaved run (the two commands alternate, medians taken), printed as
ratios, since a loaded machine slows both alike. Python's standard library
only; the peers are the sqlite3 shell and a C hello program.

    bench/run.py [--bin build/tabletalk] [--baseline OTHER_TABLETALK]
                 [--data DIR] [--runs N] [--quick] [PART ...]

Parts (all by default):
  export   `tabletalk sql DB "SELECT * FROM sale" -f tsv|csv|json` against
           `sqlite3 -tabs|-csv|-json` on 100,000 and 1,000,000 generated rows
           (integers, reals, text with commas and quotes, NULL): wall time,
           CPU time and peak RSS; and the system calls of a whole TSV export
           (strace -f -c) of both: none per row, only SQLite's page reads
           and the 64 KiB writes, which follow the bytes, not the rows.
  pg       the same export of 1,000,000 rows from a PostgreSQL server of the
           bench's own (scripts/pg-test-server.sh; skipped without server
           binaries) against `psql --csv`: the client's CPU time (psql holds
           every row, tabletalk streams them) and peak RSS.
  startup  `tabletalk sql chinook "SELECT Name FROM Genre LIMIT 3"` against
           the sqlite3 shell, and `tabletalk --version` against a C hello
           program: instructions of the whole process (callgrind, the stable
           figure) and wall time; and serve-mcp's resident memory on chinook
           after initialize and tools/list (goal <= 8 MiB).
  agent    the agent's own time (bench/agent_time.mjs, Node.js): `tabletalk
           ask chinook QUESTION --base-url URL` against the scripted model
           server, which answers at once (one run_sql call, then the
           answer), with a warm catalog cache: from spawning tabletalk to
           its first model request (goal <= 10 ms) and the whole run less
           the server's time (the question's overhead, goal <= 20 ms);
           spawning /bin/true is measured alike, as the floor.

Peak RSS is /usr/bin/time's %M; wall time is taken around it (the same
small cost for both commands).

--baseline adds another tabletalk build (say, the one from main) to the
same interleaved run, so that before and after are measured together.
--quick: fewer runs and no 1,000,000-row file (a smoke test of the suite).
"""
import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SQL_ALL = "SELECT * FROM sale"
SQL_3 = "SELECT Name FROM Genre LIMIT 3"

# The table every export reads: eight columns in the proportions of a
# sales export (ids, counts, signed amounts, prices with two decimals,
# ratios with 15 significant digits, names, cities with commas and accents,
# notes that are NULL in one row of seven or hold quotes).
MAKE_SQL = """
CREATE TABLE sale(id INTEGER PRIMARY KEY, qty INTEGER, amount INTEGER, price REAL, ratio REAL,
                  name TEXT, city TEXT, note TEXT);
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < {rows})
INSERT INTO sale SELECT i, i % 97, (i * 7919) % 2000003 - 1000000, ((i * 37) % 100000) / 100.0,
  (i * 7919 % 1000003) / 7.0, 'customer ' || i,
  CASE i % 5 WHEN 0 THEN 'Oslo' WHEN 1 THEN 'São Paulo' WHEN 2 THEN 'Paris, TX'
             WHEN 3 THEN 'Zürich' ELSE 'New York' END,
  CASE WHEN i % 7 = 0 THEN NULL WHEN i % 11 = 0 THEN 'said "hi"' ELSE 'note ' || (i % 1000) END
FROM n;
"""

HELLO_C = '#include <stdio.h>\nint main(void) { puts("hello"); return 0; }\n'


def die(msg):
    print("bench: " + msg, file=sys.stderr)
    sys.exit(1)


def make_db(data, rows):
    path = os.path.join(data, "sale-%d.sqlite" % rows)
    if os.path.exists(path):
        return path
    tmp = path + ".tmp"
    if os.path.exists(tmp):
        os.unlink(tmp)
    subprocess.run(["sqlite3", tmp], input=MAKE_SQL.format(rows=rows).encode(), check=True)
    os.rename(tmp, path)
    return path


def run_once(argv, tmp):
    """Wall seconds, CPU seconds (user + system) and peak RSS in KiB of one
    run, its output thrown away. The peak comes from /usr/bin/time (the
    kernel's figure for its child): a child forked from Python would carry
    Python's own peak into it."""
    report = os.path.join(tmp, "time.txt")
    with open(os.devnull, "wb") as null:
        t0 = time.perf_counter()
        p = subprocess.Popen(["/usr/bin/time", "-f", "%M", "-o", report] + argv, stdout=null,
                             stderr=subprocess.PIPE)
        _, status, ru = os.wait4(p.pid, 0)
        wall = time.perf_counter() - t0
        err = p.stderr.read()
        p.stderr.close()
    code = os.waitstatus_to_exitcode(status)
    if code != 0:
        die("%s: exit %d: %s" % (" ".join(argv), code, err.decode(errors="replace")))
    with open(report) as f:
        rss = int(f.read().split()[-1])
    return wall, ru.ru_utime + ru.ru_stime, rss


def interleaved(commands, runs, tmp):
    """commands: [(name, argv)]. Runs each once per round, alternating, after
    one warm-up round; returns {name: (median wall, median cpu, median rss)}."""
    samples = {name: [] for name, _ in commands}
    for r in range(runs + 1):
        order = commands if r % 2 == 0 else list(reversed(commands))
        for name, argv in order:
            s = run_once(argv, tmp)
            if r:
                samples[name].append(s)
    return {name: tuple(statistics.median(x[i] for x in s) for i in range(3))
            for name, s in samples.items()}


def callgrind(argv, tmp):
    out = os.path.join(tmp, "cg.out")
    p = subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=" + out] + argv,
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    m = re.search(rb"Collected : (\d+)", p.stderr)
    os.unlink(out) if os.path.exists(out) else None
    return int(m.group(1)) if m else None


def syscalls(argv, tmp):
    """Total system calls of a run and the count of the most frequent one."""
    out = os.path.join(tmp, "strace.txt")
    with open(os.devnull, "wb") as null:
        subprocess.run(["strace", "-f", "-c", "-o", out] + argv, stdout=null,
                       stderr=subprocess.DEVNULL)
    total, top = None, ("", 0)
    with open(out) as f:
        for line in f:
            parts = line.split()
            if len(parts) >= 5 and parts[-1] == "total":
                total = int(parts[3])
            elif len(parts) >= 5 and parts[3].isdigit() and parts[-1] != "total":
                if int(parts[3]) > top[1]:
                    top = (parts[-1], int(parts[3]))
    return total, top


def ratio(a, b):
    return a / b if b else float("nan")


def fmt_ms(s):
    return "%.1f ms" % (s * 1000)


def mib(kib):
    return "%.1f MiB" % (kib / 1024)


def bench_export(args, tmp):
    sizes = [100000] if args.quick else [100000, 1000000]
    runs = {100000: args.runs or (3 if args.quick else 11), 1000000: args.runs or 5}
    shell = {"tsv": ["-tabs", "-header"], "csv": ["-csv", "-header"], "json": ["-json"]}
    print("\n## export: tabletalk sql DB '%s' -f FMT > /dev/null, against sqlite3 -FMT" % SQL_ALL)
    print("(medians of %s interleaved runs; ratio = tabletalk / sqlite3)\n" %
          " and ".join("%d (%s rows)" % (runs[n], "{:,}".format(n)) for n in sizes))
    head = "| rows | format | tabletalk wall | sqlite3 wall | time ratio | CPU ratio | tabletalk RSS | sqlite3 RSS | RSS ratio |"
    if args.baseline:
        head += " baseline wall | baseline RSS |"
    print(head)
    print("|" + " --- |" * (head.count("|") - 1))
    results = []
    for n in sizes:
        db = make_db(args.data, n)
        for fmt in ("tsv", "csv", "json"):
            cmds = [("tt", [args.bin, "sql", db, SQL_ALL, "-f", fmt]),
                    ("sqlite3", ["sqlite3"] + shell[fmt] + [db, SQL_ALL])]
            if args.baseline:
                cmds.append(("base", [args.baseline, "sql", db, SQL_ALL, "-f", fmt]))
            m = interleaved(cmds, runs[n], tmp)
            t, s = m["tt"], m["sqlite3"]
            row = "| {:,} | {} | {} | {} | {:.2f}x | {:.2f}x | {} | {} | {:.2f}x |".format(
                n, fmt, fmt_ms(t[0]), fmt_ms(s[0]), ratio(t[0], s[0]), ratio(t[1], s[1]),
                mib(t[2]), mib(s[2]), ratio(t[2], s[2]))
            if args.baseline:
                b = m["base"]
                row += " %s | %s |" % (fmt_ms(b[0]), mib(b[2]))
            print(row, flush=True)
            results.append((n, fmt, ratio(t[0], s[0]), ratio(t[2], s[2])))
    missed = ["{:,} {} {}".format(n, fmt, " and ".join(
        w for w, bad in (("time %.2fx" % tr, tr > 1.1), ("memory %.2fx" % mr, mr > 2.0)) if bad))
        for n, fmt, tr, mr in results if tr > 1.1 or mr > 2.0]
    print("\ngoal (time <= 1.1x, memory <= 2x the shell's): %s" %
          ("met" if not missed else "missed: " + "; ".join(missed)))
    if shutil.which("strace"):
        print("\nsystem calls of a whole TSV export (strace -f -c):\n")
        print("| rows | tabletalk | its most frequent | sqlite3 | its most frequent |")
        print("| --- | --- | --- | --- | --- |")
        for n in sizes:
            db = make_db(args.data, n)
            tt = syscalls([args.bin, "sql", db, SQL_ALL, "-f", "tsv"], tmp)
            sq = syscalls(["sqlite3"] + shell["tsv"] + [db, SQL_ALL], tmp)
            print("| {:,} | {:,} | {} {:,} | {:,} | {} {:,} |".format(
                n, tt[0] or 0, tt[1][0], tt[1][1], sq[0] or 0, sq[1][0], sq[1][1]))


# The same table on PostgreSQL (bigint where the products outgrow int).
PG_MAKE_SQL = """
CREATE TABLE sale AS SELECT i AS id, i % 97 AS qty, (i::bigint * 7919) % 2000003 - 1000000 AS amount,
  ((i * 37) % 100000) / 100.0::float8 AS price, (i::bigint * 7919 % 1000003) / 7.0::float8 AS ratio,
  'customer ' || i AS name, (ARRAY['Oslo', 'São Paulo', 'Paris, TX', 'Zürich', 'New York'])[i % 5 + 1] AS city,
  CASE WHEN i % 7 = 0 THEN NULL WHEN i % 11 = 0 THEN 'said "hi"' ELSE 'note ' || (i % 1000) END AS note
FROM generate_series(1, {rows}) i;
ANALYZE sale;
"""


def mcp_rss(argv):
    """VmRSS and VmHWM (KiB) of `tabletalk serve-mcp` after initialize and
    tools/list over stdio, read from /proc while it waits for more."""
    p = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.DEVNULL)
    try:
        msgs = [{"jsonrpc": "2.0", "id": 1, "method": "initialize",
                 "params": {"protocolVersion": "2025-03-26", "capabilities": {},
                            "clientInfo": {"name": "bench", "version": "1"}}},
                {"jsonrpc": "2.0", "method": "notifications/initialized"},
                {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}]
        for m in msgs:
            p.stdin.write((json.dumps(m) + "\n").encode())
        p.stdin.flush()
        while True: # the answers, in order: the tools list is the last
            line = p.stdout.readline()
            if not line:
                die("serve-mcp ended before answering tools/list")
            if json.loads(line).get("id") == 2:
                break
        with open("/proc/%d/status" % p.pid) as f:
            st = dict(l.split(":", 1) for l in f if ":" in l)
        return int(st["VmRSS"].split()[0]), int(st["VmHWM"].split()[0])
    finally:
        p.stdin.close()
        p.wait()


def bench_mcp_rss(args):
    chinook = os.path.join(ROOT, "data", "chinook.sqlite")
    runs = 3 if args.quick else 7
    bins = [("tabletalk", args.bin)] + ([("baseline", args.baseline)] if args.baseline else [])
    got = {name: [] for name, _ in bins}
    for r in range(runs):
        for name, b in (bins if r % 2 == 0 else list(reversed(bins))):
            got[name].append(mcp_rss([b, "serve-mcp", chinook]))
    print("\nserve-mcp on chinook after initialize + tools/list (medians of %d runs; goal RSS <= 8 MiB):\n" % runs)
    print("| build | RSS | peak RSS |")
    print("| --- | --- | --- |")
    for name, _ in bins:
        print("| %s | %s | %s |" % (name, mib(statistics.median(x[0] for x in got[name])),
                                     mib(statistics.median(x[1] for x in got[name]))))


def bench_agent(args, tmp):
    chinook = os.path.join(ROOT, "data", "chinook.sqlite")
    if not shutil.which("node"):
        print("\n## agent: skipped (no Node.js for the scripted model server)")
        return
    runs = args.runs or (5 if args.quick else 31)
    bins = [args.bin] + ([args.baseline] if args.baseline else [])
    p = subprocess.run(["node", os.path.join(ROOT, "bench", "agent_time.mjs"), ",".join(bins), chinook,
                        str(runs), os.path.join(tmp, "agent-state")], capture_output=True, text=True)
    if p.returncode != 0:
        die("agent_time.mjs: " + p.stderr)
    d = json.loads(p.stdout)
    print("\n## agent: tabletalk ask chinook QUESTION --base-url SCRIPTED (answers at once; %d model requests)" % d["requests"])
    print("(medians of %d interleaved runs, warm catalog cache; spawning /bin/true takes %s here)\n" %
          (runs, "%.1f ms" % statistics.median(d["true_ms"])))
    print("| build | start to first model request | overhead outside the model |")
    print("| --- | --- | --- |")
    for b, label in zip(bins, ("tabletalk", "baseline")):
        print("| %s | %.1f ms | %.1f ms |" % (label, statistics.median(d[b]["first_request_ms"]),
                                             statistics.median(d[b]["overhead_ms"])))
    first = statistics.median(d[args.bin]["first_request_ms"])
    over = statistics.median(d[args.bin]["overhead_ms"])
    print("\ngoals: first request <= 10 ms (%s), overhead <= 20 ms (%s)" %
          ("met" if first <= 10 else "missed", "met" if over <= 20 else "missed"))


def bench_pg(args, tmp):
    server = os.path.join(ROOT, "scripts", "pg-test-server.sh")
    if subprocess.run([server, "bindir"], capture_output=True).returncode != 0 or not shutil.which("psql"):
        print("\n## pg: skipped (no PostgreSQL server binaries or psql; scripts/deps.sh test)")
        return
    rows = 100000 if args.quick else 1000000
    runs = args.runs or (3 if args.quick else 5)
    d = os.path.join(tmp, "pg")
    subprocess.run([server, "start", d], check=True, stdout=subprocess.DEVNULL)
    try:
        uri = subprocess.run([server, "uri", d, "postgres"], check=True, capture_output=True,
                             text=True).stdout.strip()
        subprocess.run(["psql", "-X", "-q", "-v", "ON_ERROR_STOP=1", uri], check=True,
                       input=PG_MAKE_SQL.format(rows=rows), text=True, stdout=subprocess.DEVNULL)
        print("\n## pg: tabletalk sql URI '%s' -f csv against psql --csv ({:,} rows)".format(rows) % SQL_ALL)
        print("(medians of %d interleaved runs; the client's CPU, user + system; ratio = tabletalk / psql)\n" % runs)
        print("| client | wall | CPU | peak RSS |")
        print("| --- | --- | --- | --- |")
        cmds = [("tt", [args.bin, "sql", uri, SQL_ALL, "-f", "csv", "--timeout", "600"]),
                ("psql", ["psql", "-X", "--csv", uri, "-c", SQL_ALL])]
        if args.baseline:
            cmds.append(("base", [args.baseline, "sql", uri, SQL_ALL, "-f", "csv", "--timeout", "600"]))
        m = interleaved(cmds, runs, tmp)
        for name, label in (("tt", "tabletalk"), ("psql", "psql"), ("base", "baseline")):
            if name in m:
                print("| %s | %s | %s | %s |" % (label, fmt_ms(m[name][0]), fmt_ms(m[name][1]), mib(m[name][2])))
        print("\nCPU ratio %.2fx (goal <= 1.2x), RSS ratio %.2fx" % (ratio(m["tt"][1], m["psql"][1]),
                                                                 ratio(m["tt"][2], m["psql"][2])))
    finally:
        subprocess.run([server, "stop", d], stdout=subprocess.DEVNULL)


def bench_startup(args, tmp):
    chinook = os.path.join(ROOT, "data", "chinook.sqlite")
    if not os.path.exists(chinook):
        die("no data/chinook.sqlite (make data)")
    hello = os.path.join(tmp, "hello")
    src = hello + ".c"
    with open(src, "w") as f:
        f.write(HELLO_C)
    subprocess.run([os.environ.get("CC", "cc"), "-O2", "-o", hello, src], check=True)
    pairs = [("sql, 3 rows", [args.bin, "sql", chinook, SQL_3], "sqlite3", ["sqlite3", chinook, SQL_3]),
             ("--version", [args.bin, "--version"], "hello", [hello])]
    runs = args.runs or (20 if args.quick else 200)
    print("\n## start-up: tabletalk against its peer (medians of %d interleaved runs)\n" % runs)
    print("| command | tabletalk | peer | time ratio | tabletalk instructions | peer instructions | instruction ratio |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    cg = shutil.which("valgrind")
    if args.baseline:
        pairs.append(("sql, 3 rows, baseline", [args.baseline, "sql", chinook, SQL_3], "sqlite3",
                      ["sqlite3", chinook, SQL_3]))
    for what, tt, peer_name, peer in pairs:
        m = interleaved([("tt", tt), ("peer", peer)], runs, tmp)
        ti = callgrind(tt, tmp) if cg else None
        pi = callgrind(peer, tmp) if cg else None
        print("| {} (vs {}) | {} | {} | {:.2f}x | {} | {} | {} |".format(
            what, peer_name, fmt_ms(m["tt"][0]), fmt_ms(m["peer"][0]), ratio(m["tt"][0], m["peer"][0]),
            "{:,}".format(ti) if ti else "-", "{:,}".format(pi) if pi else "-",
            "%.2fx" % ratio(ti, pi) if ti and pi else "-"), flush=True)
    bench_mcp_rss(args)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--bin", default=os.path.join(ROOT, "build", "tabletalk"))
    ap.add_argument("--baseline", help="another tabletalk build measured in the same run")
    ap.add_argument("--data", default=os.path.join(ROOT, "build", "bench"),
                    help="where the generated databases are kept between runs")
    ap.add_argument("--runs", type=int, default=0, help="runs per command (default: per part)")
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("parts", nargs="*", default=["startup", "export", "pg", "agent"])
    args = ap.parse_args()
    for p in args.parts:
        if p not in ("startup", "export", "pg", "agent"):
            die("unknown part '%s' (startup, export, pg, agent)" % p)
    if not os.access(args.bin, os.X_OK):
        die("%s is not built (make build)" % args.bin)
    if not shutil.which("sqlite3"):
        die("the peer, the sqlite3 shell, is missing (Debian: sqlite3)")
    os.makedirs(args.data, exist_ok=True)
    load = os.getloadavg()[0]
    print("# tabletalk benchmarks, %s, %d cores, load %.1f" % (time.strftime("%Y-%m-%d %H:%M"),
                                                               os.cpu_count(), load))
    with tempfile.TemporaryDirectory() as tmp:
        if "startup" in args.parts:
            bench_startup(args, tmp)
        if "export" in args.parts:
            bench_export(args, tmp)
        if "pg" in args.parts:
            bench_pg(args, tmp)
        if "agent" in args.parts:
            bench_agent(args, tmp)


if __name__ == "__main__":
    main()
