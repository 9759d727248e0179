#!/usr/bin/env python3
"""duckdb_attacks.py — the DuckDB engine's containment, through the real
binary: every line of tests/corpus/duckdb-attacks.tsv is run with
`tabletalk sql` on files DuckDB itself made (tests/support/ddb_make.c), and
must end as the line says (ok, refused, error; refused:REASON also checks
the refusal's reason in the --json output). Afterwards every file of the
folder (the files given and the secret beside them) has the sha256 it had
and nothing was created in it. The .duckdb file is hostile: views and a
table macro planted in it read files that were never given, macros named
like built-in functions (lower, sum, current_database) must never replace
them, and no macro of it runs (by name, through views, through a generated
column) unless --trust-functions names its schema (target duckdb+trust).

Usage: duckdb_attacks.py TABLETALK DDB_MAKE CORPUS. Exit 77 (skipped) only
when libduckdb is not installed (scripts/fetch-duckdb.sh installs it)."""
import hashlib
import os
import subprocess
import sys
import tempfile


def make(ddb_make, db, sql):
    r = subprocess.run([ddb_make, db, sql], capture_output=True, text=True)
    if r.returncode == 77:
        print("SKIP: libduckdb is not installed (scripts/fetch-duckdb.sh): " + r.stderr.strip())
        sys.exit(77)
    if r.returncode != 0:
        sys.exit(f"ddb_make failed on {sql!r}: {r.stderr}")


def snapshot(top):
    out = {}
    for root, dirs, files in os.walk(top):
        for d in dirs:
            out[os.path.join(root, d) + "/"] = "dir"
        for f in files:
            p = os.path.join(root, f)
            with open(p, "rb") as fh:
                out[p] = hashlib.sha256(fh.read()).hexdigest()
    return out


def build(ddb_make, top):
    data = os.path.join(top, "data")
    os.makedirs(os.path.join(data, "glob"))
    secret = os.path.join(top, "secret.txt")
    with open(secret, "w") as f:
        f.write("TOP-SECRET-CANARY\n")
    with open(os.path.join(data, "people.csv"), "w") as f:
        f.write("name,age,city\nann,34,Oslo\nbob,,Rome\ncy,n/a,Oslo\ndee,41,Paris\neve,27,-\n")
    src = f"(SELECT * FROM read_csv('{data}/people.csv', nullstr=['','n/a','-']))"
    make(ddb_make, ":memory:", f"COPY {src} TO '{data}/people.parquet' (FORMAT parquet)")
    make(ddb_make, ":memory:", f"COPY {src} TO '{data}/people.jsonl' (FORMAT json)")
    for i in (1, 2):
        make(ddb_make, ":memory:",
             f"COPY (SELECT range AS id, range * {i} AS v FROM range(10)) TO "
             f"'{data}/glob/part_{i}.parquet' (FORMAT parquet)")
    make(ddb_make, os.path.join(data, "shop.duckdb"),
         "CREATE TABLE customers(id INTEGER PRIMARY KEY, name VARCHAR);"
         "INSERT INTO customers VALUES (1, 'ann'), (2, 'bob');"
         "CREATE TABLE orders(id INTEGER, customer_id INTEGER REFERENCES customers(id), "
         "total DOUBLE); INSERT INTO orders VALUES (1, 1, 9.5), (2, 1, 3), (3, 2, 7.25);"
         "CREATE VIEW evil AS SELECT * FROM read_text('/etc/hostname');"
         f"CREATE VIEW evil_secret AS SELECT * FROM read_text('{secret}');"
         "CREATE MACRO leak(p) AS TABLE SELECT * FROM read_text(p);"
         "CREATE MACRO twice(x) AS x * 2;"
         "CREATE MACRO lower(x) AS 'pwned'; CREATE MACRO current_database() AS 'nope';"
         "CREATE MACRO sum(x) AS 0;"
         "CREATE VIEW doubled AS SELECT id, twice(total) AS t2 FROM orders;"
         "CREATE VIEW doubled_again AS SELECT * FROM doubled;"
         "CREATE TABLE gen(a INTEGER, b INTEGER AS (twice(a))); INSERT INTO gen(a) VALUES (4);"
         "CREATE SCHEMA other; CREATE MACRO other.triple(x) AS x * 3;"
         # SQL built from strings at run time, quoted names, a table macro
         # named like a scalar built-in, a macro named like a pg_catalog
         # function, a trusted macro calling an untrusted one, a DEFAULT
         "CREATE VIEW via_query AS SELECT * FROM query('SELECT twi' || 'ce(9) AS p');"
         "CREATE VIEW via_table AS SELECT * FROM query_table('doub' || 'led');"
         "CREATE MACRO \"q\"\"m\"(x) AS x || '-quoted'; CREATE VIEW quoted AS SELECT \"q\"\"m\"('a') AS p;"
         "CREATE VIEW \"a\"\"b\" AS SELECT twice(1) AS p; CREATE VIEW over_quoted AS SELECT * FROM \"a\"\"b\";"
         "CREATE MACRO upper() AS TABLE SELECT 'pwned-table' AS p;"
         "CREATE MACRO pg_typeof(x) AS 'pwned-pg';"
         "CREATE SCHEMA s1; CREATE MACRO s1.good(x) AS main.twice(x);"
         "CREATE VIEW via_good AS SELECT s1.good(3) AS p;"
         "CREATE TABLE with_default(a INTEGER, b INTEGER DEFAULT twice(1)); INSERT INTO with_default VALUES (1, 5);"
         "CREATE MACRO \"@@@\"(a, b) AS 'pwned-op'; CREATE VIEW op_view AS SELECT 1 @@@ 2 AS c;"
         "CREATE TABLE op_gen(a INTEGER, b VARCHAR GENERATED ALWAYS AS (a @@@ a)); INSERT INTO op_gen(a) VALUES (1);"
         "CREATE VIEW state_view AS SELECT * FROM enable_logging();"
         "CREATE MACRO s1.state_macro() AS TABLE SELECT * FROM enable_peg_parser();")
    targets = {
        "csv": os.path.join(data, "people.csv"),
        "parquet": os.path.join(data, "people.parquet"),
        "jsonl": os.path.join(data, "people.jsonl"),
        "duckdb": os.path.join(data, "shop.duckdb"),
        "duckdb+trust": os.path.join(data, "shop.duckdb"),
        "duckdb+s1": os.path.join(data, "shop.duckdb"),
        "duckdb+all": os.path.join(data, "shop.duckdb"),
        "glob": os.path.join(data, "glob", "part_*.parquet"),
    }
    return data, secret, targets


def main():
    tabletalk, ddb_make, corpus = sys.argv[1:4]
    top = tempfile.mkdtemp(prefix="tt-duckdb-attacks-")
    data, secret, targets = build(ddb_make, top)
    before = snapshot(top)
    expect_code = {"ok": 0, "refused": 3, "error": 1}  # "ok:TEXT": TEXT in the output too
    failures, n = [], 0
    with open(corpus) as f:
        lines = [l.rstrip("\n") for l in f if l.strip() and not l.startswith("#")]
    for line in lines:
        target, expected, sql = line.split("\t", 2)
        sql = (sql.replace("{DIR}", data).replace("{SECRET}", secret)
               .replace("{OUT}", os.path.join(data, "out")))
        env = dict(os.environ, NO_COLOR="1")
        args = [tabletalk, "sql", targets[target], sql, "--timeout", "10", "--json"]
        if target == "csv":
            args += ["--engine", "duckdb"]  # a small CSV file is SQLite's by default
        if target == "duckdb+trust":
            args += ["--trust-functions", "main"]
        if target == "duckdb+s1":
            args += ["--trust-functions", "S1"]  # schema names compare without case
        if target == "duckdb+all":
            args += ["--trust-functions", "main,other,s1"]
        r = subprocess.run(args,
                           capture_output=True, text=True, env=env, timeout=120)
        n += 1
        expected, _, must = expected.partition(":")
        if expected == "refused" and must:
            must = f'"reason":"{must}"'
        if must and must not in r.stdout:
            failures.append(f"{target}: {sql!r}: {must!r} not in the output: {r.stdout[:300]}")
        if r.returncode != expect_code[expected]:
            failures.append(f"{target}: {sql!r}: exit {r.returncode}, wanted {expected}: "
                            f"{(r.stderr or r.stdout).strip()[:300]}")
        if "TOP-SECRET-CANARY" in r.stdout + r.stderr:
            failures.append(f"{target}: {sql!r}: the secret file was read")
    after = snapshot(top)
    if after != before:
        changed = sorted(set(after.items()) ^ set(before.items()))
        failures.append(f"files changed or created: {changed}")
    for f in failures:
        print("FAIL", f)
    print(f"{n - len(failures)} passed, {len(failures)} failed")
    if not failures:
        subprocess.run(["rm", "-rf", top])
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
