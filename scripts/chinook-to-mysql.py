#!/usr/bin/env python3
"""chinook-to-mysql.py — loads the Chinook SQLite database into MySQL or
MariaDB for the MySQL/MariaDB tests: the same table and column names (case
kept), types mapped (INTEGER -> INT, NUMERIC(p,s) -> DECIMAL(p,s),
NVARCHAR(n) -> VARCHAR(n) in utf8mb4, DATETIME -> DATETIME), primary keys,
foreign keys and indexes, every row, a few comments (table and column
descriptions) and ANALYZE TABLE, then checks that every table has as many
rows as in SQLite.

  chinook-to-mysql.py --socket SOCK [--user root] [--sqlite FILE]
                      [--database chinook] [--sql-out FILE]

The database is dropped and created again. Needs Python 3 and the mariadb
(or mysql) command-line client; the SQLite file is opened read-only.
--sql-out only writes the SQL.
"""

import argparse
import os
import shutil
import sqlite3
import subprocess
import sys
import time
import urllib.parse

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_SQLITE = os.path.join(os.environ.get("TABLETALK_SHARED_DIR")
                              or os.path.join(HERE, "..", "..", "shared"),
                              "data", "chinook.sqlite")

# Descriptions, so that the catalog's comments can be tested (as in
# chinook-to-pg.py).
COMMENTS = {
    ("Track", None): "Songs and other media for sale: one row per track, with its "
                     "album, genre, media type, length and price.",
    ("Track", "Milliseconds"): "Length of the track in milliseconds.",
    ("Track", "Bytes"): "Size of the track's file in bytes.",
    ("Invoice", None): "One sale to a customer; its lines are in InvoiceLine.",
    ("Invoice", "Total"): "Amount charged, in US dollars: the sum of its lines' "
                          "UnitPrice * Quantity.",
    ("Employee", "ReportsTo"): "EmployeeId of this employee's manager.",
}

BATCH = 500


def die(msg):
    print(f"chinook-to-mysql.py: {msg}", file=sys.stderr)
    sys.exit(1)


def qi(name):
    """A MySQL identifier."""
    return "`" + name.replace("`", "``") + "`"


def ql(text):
    """A MySQL string literal (backslash escapes on, as the server's default)."""
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


def my_type(decl, table, column):
    t = decl.strip().upper()
    import re
    m = re.fullmatch(r"N?(?:VAR)?CHAR(?:ACTER)?\s*\(\s*(\d+)\s*\)", t)
    if m:
        return f"VARCHAR({m.group(1)})"
    m = re.fullmatch(r"(?:NUMERIC|DECIMAL)\s*\(\s*(\d+)\s*,\s*(\d+)\s*\)", t)
    if m:
        return f"DECIMAL({m.group(1)},{m.group(2)})"
    simple = {"INTEGER": "INT", "INT": "INT", "BIGINT": "BIGINT", "DATETIME": "DATETIME",
              "DATE": "DATE", "TEXT": "TEXT", "REAL": "DOUBLE", "BLOB": "LONGBLOB",
              "NUMERIC": "DECIMAL(20,6)"}
    if t in simple:
        return simple[t]
    die(f"no MySQL type for {table}.{column} declared {decl!r}: add it to my_type()")


def literal(v):
    if v is None:
        return "NULL"
    if isinstance(v, bytes):
        return "X'" + v.hex() + "'"
    if isinstance(v, (int, float)):
        return repr(v)
    return ql(str(v))


def read_sqlite(path):
    if not os.path.isfile(path):
        die(f"{path} does not exist: pass --sqlite FILE (scripts/fetch-data.sh puts "
            "one at data/chinook.sqlite)")
    uri = "file:" + urllib.parse.quote(os.path.abspath(path)) + "?mode=ro"
    return sqlite3.connect(uri, uri=True)


def tables_of(db):
    return [r[0] for r in db.execute(
        "SELECT name FROM sqlite_master WHERE type = 'table' "
        "AND name NOT LIKE 'sqlite_%' ORDER BY name")]


def build_sql(db, dbname, out):
    """Writes the whole load script to out; returns {table: row count}."""
    tables = tables_of(db)
    counts = {}
    w = out.write
    w(f"DROP DATABASE IF EXISTS {qi(dbname)};\n")
    w(f"CREATE DATABASE {qi(dbname)} CHARACTER SET utf8mb4 COLLATE utf8mb4_general_ci;\n")
    w(f"USE {qi(dbname)};\nSET FOREIGN_KEY_CHECKS = 0;\n")
    for t in tables:
        cols = db.execute(f"PRAGMA table_info({qi(t)})").fetchall()
        lines = []
        for _, name, decl, notnull, _, _ in cols:
            comment = COMMENTS.get((t, name))
            lines.append(f"    {qi(name)} {my_type(decl, t, name)}"
                         + (" NOT NULL" if notnull else "")
                         + (f" COMMENT {ql(comment)}" if comment else ""))
        pk = [c[1] for c in sorted((c for c in cols if c[5]), key=lambda c: c[5])]
        if pk:
            lines.append(f"    PRIMARY KEY ({', '.join(qi(c) for c in pk)})")
        comment = COMMENTS.get((t, None))
        w(f"CREATE TABLE {qi(t)} (\n" + ",\n".join(lines) + "\n) ENGINE=InnoDB"
          + (f" COMMENT={ql(comment)}" if comment else "") + ";\n")
    for t in tables:
        cols = [c[1] for c in db.execute(f"PRAGMA table_info({qi(t)})")]
        head = f"INSERT INTO {qi(t)} ({', '.join(qi(c) for c in cols)}) VALUES\n"
        batch = []
        n = 0
        for row in db.execute(f"SELECT {', '.join(qi(c) for c in cols)} FROM {qi(t)}"):
            batch.append("(" + ", ".join(literal(v) for v in row) + ")")
            n += 1
            if len(batch) == BATCH:
                w(head + ",\n".join(batch) + ";\n")
                batch = []
        if batch:
            w(head + ",\n".join(batch) + ";\n")
        counts[t] = n
    for t in tables:
        for _, iname, unique, origin, _ in db.execute(f"PRAGMA index_list({qi(t)})"):
            if origin != "c":
                continue  # the primary key's own index
            icols = [r[2] for r in db.execute(f"PRAGMA index_info({qi(iname)})")]
            w(f"CREATE {'UNIQUE ' if unique else ''}INDEX {qi(iname)} ON {qi(t)} "
              f"({', '.join(qi(c) for c in icols)});\n")
    for t in tables:
        fks = {}
        for fid, seq, ref, frm, to, *_ in db.execute(f"PRAGMA foreign_key_list({qi(t)})"):
            fks.setdefault(fid, []).append((seq, ref, frm, to))
        for fid in sorted(fks):
            parts = sorted(fks[fid])
            ref = parts[0][1]
            name = "FK_" + t + "".join(p[2] for p in parts)
            w(f"ALTER TABLE {qi(t)} ADD CONSTRAINT {qi(name)} FOREIGN KEY "
              f"({', '.join(qi(p[2]) for p in parts)}) REFERENCES {qi(ref)} "
              f"({', '.join(qi(p[3]) for p in parts)});\n")
    w("SET FOREIGN_KEY_CHECKS = 1;\n")
    w(f"ANALYZE TABLE {', '.join(qi(t) for t in tables)};\n")
    return counts


def find_client():
    for name in ("mariadb", "mysql"):
        p = shutil.which(name)
        if p:
            return p
    die("neither the mariadb nor the mysql client is installed: install it with "
        "'scripts/deps.sh test' (Debian package mariadb-client)")


def client(bin_, a, sql, args=()):
    cmd = [bin_, "--no-defaults", "--protocol=socket", f"--socket={a.socket}",
           f"--user={a.user}", "--batch", "--skip-column-names", *args]
    r = subprocess.run(cmd, input=sql, text=True, capture_output=True)
    if r.returncode != 0:
        die(f"the client failed: {r.stderr.strip()}")
    return r.stdout


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--socket", help="the server's Unix socket")
    ap.add_argument("--user", default="root", help="a user that may create databases")
    ap.add_argument("--sqlite", default=DEFAULT_SQLITE, help="the Chinook SQLite file")
    ap.add_argument("--database", default="chinook", help="the database to (re)create")
    ap.add_argument("--sql-out", help="only write the SQL to this file")
    a = ap.parse_args()
    db = read_sqlite(a.sqlite)
    start = time.monotonic()
    if a.sql_out:
        with open(a.sql_out, "w", encoding="utf-8") as f:
            build_sql(db, a.database, f)
        return
    if not a.socket:
        die("--socket is required (or --sql-out)")
    import io
    buf = io.StringIO()
    counts = build_sql(db, a.database, buf)
    bin_ = find_client()
    client(bin_, a, buf.getvalue())
    # every table as full as in SQLite
    q = " UNION ALL ".join(f"SELECT {ql(t)}, COUNT(*) FROM {qi(a.database)}.{qi(t)}"
                           for t in counts)
    got = {}
    for line in client(bin_, a, q + ";\n").splitlines():
        t, n = line.split("\t")
        got[t] = int(n)
    for t, n in counts.items():
        if got.get(t) != n:
            die(f"{t} has {got.get(t)} rows in MySQL, {n} in SQLite")
    print(f"chinook-to-mysql.py: {len(counts)} tables, {sum(counts.values())} rows loaded "
          f"in {time.monotonic() - start:.2f} s")


if __name__ == "__main__":
    main()
