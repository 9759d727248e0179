#!/usr/bin/env python3
"""chinook-to-pg.py — loads the Chinook SQLite database into PostgreSQL for
the PostgreSQL tests: the same table and column names (quoted, case kept, as
in Chinook's own PostgreSQL port), types mapped (INTEGER, NUMERIC(p,s),
NVARCHAR(n) -> VARCHAR(n), DATETIME -> TIMESTAMP), primary keys, foreign keys
and indexes, every row (COPY), a few comments (table and column descriptions)
and ANALYZE, so that reltuples holds the row counts. Then it checks that
every table has as many rows as in SQLite.

  chinook-to-pg.py [--sqlite FILE] [--no-create] [--sql-out FILE] URI

URI names the target database (postgresql:///chinook?host=...); unless
--no-create, that database is dropped and created again from the server's
"postgres" database. The SQLite file is opened read-only. Needs Python 3 and
the psql client (Debian: postgresql-client). --sql-out only writes the SQL.
"""

import argparse
import glob
import io
import os
import re
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

# Descriptions, so that the catalog's comments can be tested.
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


def die(msg):
    print(f"chinook-to-pg.py: {msg}", file=sys.stderr)
    sys.exit(1)


def qi(name):
    """A quoted PostgreSQL identifier."""
    return '"' + name.replace('"', '""') + '"'


def ql(text):
    """A PostgreSQL string literal."""
    return "'" + text.replace("'", "''") + "'"


def pg_type(decl, table, column):
    t = decl.strip().upper()
    m = re.fullmatch(r"N?(?:VAR)?CHAR(?:ACTER)?\s*\(\s*(\d+)\s*\)", t)
    if m:
        return f"VARCHAR({m.group(1)})"
    m = re.fullmatch(r"(?:NUMERIC|DECIMAL)\s*\(\s*(\d+)\s*,\s*(\d+)\s*\)", t)
    if m:
        return f"NUMERIC({m.group(1)},{m.group(2)})"
    simple = {"INTEGER": "INTEGER", "INT": "INTEGER", "BIGINT": "BIGINT",
              "DATETIME": "TIMESTAMP", "DATE": "DATE", "TEXT": "TEXT",
              "REAL": "DOUBLE PRECISION", "BLOB": "BYTEA", "NUMERIC": "NUMERIC"}
    if t in simple:
        return simple[t]
    die(f"no PostgreSQL type for {table}.{column} declared {decl!r}: add it to pg_type()")


def copy_value(v):
    """A value in COPY's text format."""
    if v is None:
        return r"\N"
    if isinstance(v, bytes):
        return "\\\\x" + v.hex()
    if isinstance(v, float):
        return repr(v)
    s = str(v)
    return (s.replace("\\", "\\\\").replace("\t", "\\t")
             .replace("\n", "\\n").replace("\r", "\\r"))


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


def build_sql(db, out):
    """Writes the whole load script to out; returns {table: row count}."""
    tables = tables_of(db)
    counts = {}
    w = out.write
    w("SET client_min_messages = warning;\n")
    for t in tables:
        cols = db.execute(f"PRAGMA table_info({qi(t)})").fetchall()
        lines = []
        for _, name, decl, notnull, _, _ in cols:
            lines.append(f"    {qi(name)} {pg_type(decl, t, name)}"
                         + (" NOT NULL" if notnull else ""))
        pk = [c[1] for c in sorted((c for c in cols if c[5]), key=lambda c: c[5])]
        if pk:
            lines.append(f"    CONSTRAINT {qi('PK_' + t)} PRIMARY KEY "
                         f"({', '.join(qi(c) for c in pk)})")
        w(f"CREATE TABLE {qi(t)} (\n" + ",\n".join(lines) + "\n);\n")
    for t in tables:
        cols = [c[1] for c in db.execute(f"PRAGMA table_info({qi(t)})")]
        w(f"COPY {qi(t)} ({', '.join(qi(c) for c in cols)}) FROM STDIN;\n")
        n = 0
        for row in db.execute(f"SELECT {', '.join(qi(c) for c in cols)} FROM {qi(t)}"):
            w("\t".join(copy_value(v) for v in row) + "\n")
            n += 1
        w("\\.\n")
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
    for (t, c), text in COMMENTS.items():
        target = f"TABLE {qi(t)}" if c is None else f"COLUMN {qi(t)}.{qi(c)}"
        w(f"COMMENT ON {target} IS {ql(text)};\n")
    w("ANALYZE;\n")
    return counts


def find_psql():
    p = shutil.which("psql")
    if p:
        return p
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/psql"),
                   key=lambda s: [int(x) for x in re.findall(r"\d+", s)])
    if found:
        return found[-1]
    die("psql is not installed: install it with 'scripts/deps.sh test' "
        "(Debian package postgresql-client)")


def psql(psql_bin, uri, sql=None, args=()):
    r = subprocess.run([psql_bin, "-X", "-q", "-v", "ON_ERROR_STOP=1", "-d", uri, *args],
                       input=sql, text=True, capture_output=True)
    if r.returncode != 0:
        die(f"psql failed on {redact(uri)}: {r.stderr.strip()}")
    return r.stdout


def redact(uri):
    """The URI without a password, for messages."""
    return re.sub(r"(://[^:/@]*:)[^@]*@", r"\1***@", uri)


def with_dbname(uri, dbname):
    p = urllib.parse.urlsplit(uri)
    # Not urlunsplit: it drops the "//" of an empty host (postgresql:///db).
    return (f"{p.scheme}://{p.netloc}/{urllib.parse.quote(dbname, safe='')}"
            + (f"?{p.query}" if p.query else ""))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("uri", nargs="?", help="the target database's URI")
    ap.add_argument("--sqlite", default=DEFAULT_SQLITE, help="the Chinook SQLite file")
    ap.add_argument("--no-create", action="store_true",
                    help="load into the existing (empty) database")
    ap.add_argument("--sql-out", help="only write the SQL to this file")
    a = ap.parse_args()
    db = read_sqlite(a.sqlite)
    start = time.monotonic()
    if a.sql_out:
        with open(a.sql_out, "w", encoding="utf-8") as f:
            build_sql(db, f)
        return
    if not a.uri:
        die("give the target database's URI (postgresql:///chinook?host=...), or --sql-out FILE")
    if not a.uri.startswith(("postgresql://", "postgres://")):
        die(f"{redact(a.uri)} is not a postgresql:// URI")
    dbname = urllib.parse.unquote(urllib.parse.urlsplit(a.uri).path.lstrip("/"))
    if not dbname:
        die("the URI names no database (postgresql:///chinook?host=...)")
    psql_bin = find_psql()
    if not a.no_create:
        admin = with_dbname(a.uri, "postgres")
        psql(psql_bin, admin, args=("-c", f"DROP DATABASE IF EXISTS {qi(dbname)} WITH (FORCE)"))
        psql(psql_bin, admin, args=("-c", f"CREATE DATABASE {qi(dbname)} TEMPLATE template0 "
                                          "ENCODING 'UTF8' LOCALE 'C'"))
    buf = io.StringIO()
    counts = build_sql(db, buf)
    psql(psql_bin, a.uri, sql=buf.getvalue(), args=("-1", "-f", "-"))
    # Every table's row count (and the planner's estimate) against SQLite's.
    q = " UNION ALL ".join(
        f"SELECT {ql(t)}, count(*), (SELECT reltuples::bigint FROM pg_class "
        f"WHERE oid = {ql(qi(t))}::regclass) FROM {qi(t)}" for t in counts)
    got = {}
    for line in psql(psql_bin, a.uri, args=("-At", "-F", "\t", "-c", q)).splitlines():
        t, n, est = line.split("\t")
        got[t] = (int(n), int(est))
    bad = [f"{t}: SQLite {n}, PostgreSQL {got.get(t, ('none',))[0]}"
           for t, n in counts.items() if got.get(t, (None,))[0] != n]
    if bad:
        die("row counts differ: " + "; ".join(bad))
    unanalyzed = [t for t, n in counts.items() if got[t][1] != n]
    if unanalyzed:
        die("reltuples is not the row count after ANALYZE for " + ", ".join(unanalyzed))
    print(f"chinook-to-pg.py: {len(counts)} tables, {sum(counts.values())} rows loaded into "
          f"{dbname} in {time.monotonic() - start:.2f} s; row counts match SQLite",
          file=sys.stderr)


if __name__ == "__main__":
    main()
