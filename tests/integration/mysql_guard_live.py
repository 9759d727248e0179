#!/usr/bin/env python3
"""mysql_guard_live.py BIN CORPUS — the MySQL/MariaDB guard corpus as a
red-team run against a real server: the mariadb_server fixture's, on its
database "hostile" (chinook plus tests/fixtures/mysql_hostile.sql),
connected as root, the strongest case. Every case of CORPUS
(tests/fixtures/mysql_guard_corpus.tsv) goes through
`BIN sql URI SQL --format json --timeout 2 --max-rows 100`, with the file
paths the cases write to (/tmp/tt_corpus) moved into the server's own
secure_file_priv folder, so that a case the guard let through would really
write there:

  refused:REASON  exit 3 and the JSON error's reason is REASON (empty SQL:
                  exit 2, a usage error, as for SQLite)
  error:sql       exit 1, kind "sql"
  ok              exit 0; or exit 1 with kind "sql" (the guard let it
                  through and the server said no); a 'dos' case may stop at
                  the time limit (exit 4)

The column "live" overrides "expect" where the server's catalog decides
(views that call stored functions, read mysql.user...).

After EVERY case it checks that nothing changed: CHECKSUM TABLE of every
table of chinook and hostile, the lists of tables, views, routines,
triggers, events, users and databases, the global settings, no named lock
held (IS_USED_LOCK of every name the corpus and the hostile objects use),
no other session left on the server (the run's connections closed), the
server's data folder's file names, its secure_file_priv folder empty, and
no file in /tmp that the server's user owns and did not own before. Then
the cases the issue names and a reader account. Exit 77 (skipped) without
the fixture.
"""
import json
import os
import pwd
import re
import subprocess
import sys
import time

BIN, CORPUS = sys.argv[1], sys.argv[2]
failures = []
notes = []


def bad(msg):
    failures.append(msg)
    print("FAIL: " + msg, flush=True)


def fixture_file(name):
    d = os.environ.get("TT_MY_FIXTURE_DIR", "")
    p = os.path.join(d, name) if d else ""
    if not p or not os.path.isfile(p) or os.path.getsize(p) == 0:
        print("skipped: TT_MY_FIXTURE_DIR names no folder with a server's %s (the "
              "mariadb_server fixture writes it)" % name)
        sys.exit(77)
    return open(p).read().splitlines()[0]


URI = fixture_file("hostile_uri")
READER = fixture_file("reader_uri").replace("/chinook?", "/hostile?")
SOCK = fixture_file("socket")
DATADIR = fixture_file("datadir")
FILES = fixture_file("files")
SERVER_UID = os.stat(DATADIR).st_uid
LOCK_NAMES = ["x", "tt_evil", "tt_view_lock", "tt_lock", "pwn"]


def client(sql):
    r = subprocess.run(["mariadb", "--no-defaults", "--protocol=socket", "--socket=" + SOCK,
                        "--user=root", "--batch", "--skip-column-names", "-e", sql],
                       capture_output=True, timeout=60)
    if r.returncode != 0:
        raise RuntimeError("mariadb failed on %r: %s" % (sql, r.stderr.decode(errors="replace")))
    return [line.split("\t") for line in r.stdout.decode().split("\n") if line != ""]


TABLES = client("SELECT CONCAT('`', TABLE_SCHEMA, '`.`', TABLE_NAME, '`') FROM information_schema.TABLES "
                "WHERE TABLE_SCHEMA IN ('chinook', 'hostile') AND TABLE_TYPE = 'BASE TABLE' ORDER BY 1")
VOLATILE = {"TIMESTAMP", "GTID_BINLOG_POS", "GTID_CURRENT_POS", "GTID_SLAVE_POS", "GTID_BINLOG_STATE",
            "PSEUDO_THREAD_ID", "RAND_SEED1", "RAND_SEED2", "WARNING_COUNT", "ERROR_COUNT",
            "LAST_INSERT_ID", "INSERT_ID", "IDENTITY", "SERVER_UID", "THREAD_POOL_SIZE"}


def database_state():
    """What a query may not change, in one client call."""
    q = ["CHECKSUM TABLE %s" % ", ".join(t[0] for t in TABLES),
         "SELECT 'obj', TABLE_SCHEMA, TABLE_NAME, TABLE_TYPE FROM information_schema.TABLES "
         "WHERE TABLE_SCHEMA NOT IN ('information_schema', 'performance_schema') ORDER BY 2, 3",
         "SELECT 'routine', ROUTINE_SCHEMA, ROUTINE_NAME, ROUTINE_TYPE FROM information_schema.ROUTINES ORDER BY 2, 3",
         "SELECT 'trigger', TRIGGER_SCHEMA, TRIGGER_NAME FROM information_schema.TRIGGERS ORDER BY 2, 3",
         "SELECT 'event', EVENT_SCHEMA, EVENT_NAME FROM information_schema.EVENTS ORDER BY 2, 3",
         "SELECT 'user', User, Host FROM mysql.user ORDER BY 2, 3",
         "SELECT 'db', SCHEMA_NAME FROM information_schema.SCHEMATA ORDER BY 2",
         "SELECT 'lock', %s" % ", ".join("IFNULL(IS_USED_LOCK('%s'), 'free')" % n for n in LOCK_NAMES),
         "SELECT 'global', VARIABLE_NAME, VARIABLE_VALUE FROM information_schema.GLOBAL_VARIABLES ORDER BY 2"]
    rows = client(";\n".join(q))
    return [r for r in rows if not (r[0] == "global" and r[1] in VOLATILE)]


def other_sessions():
    return client("SELECT ID, USER, COMMAND, IFNULL(INFO, '') FROM information_schema.PROCESSLIST "
                  "WHERE ID <> CONNECTION_ID() AND COMMAND NOT IN ('Daemon', 'Binlog Dump')")


def files_state():
    names = []
    for base, dirs, files in os.walk(DATADIR):
        for f in files:
            names.append(os.path.relpath(os.path.join(base, f), DATADIR))
    names.sort()
    server_tmp = []
    for f in os.listdir("/tmp"):  # other programs' files come and go meanwhile
        try:
            if os.lstat(os.path.join("/tmp", f)).st_uid == SERVER_UID:
                server_tmp.append(f)
        except FileNotFoundError:
            pass
    return names, sorted(os.listdir(FILES)), sorted(server_tmp)


def wait_quiet(deadline_s=30.0):
    """The server ends a session a moment after its client closes it and
    announces nothing: a bounded poll of PROCESSLIST, which returns as soon
    as no other session is left (the bound fails a session really left)."""
    end = time.time() + deadline_s
    while True:
        left = other_sessions()
        if not left or time.time() > end:
            return left
        time.sleep(0.05)


def unescape(s):
    out = bytearray()
    i = 0
    while i < len(s):
        c = s[i]
        if c == "\\" and i + 1 < len(s):
            n = s[i + 1]
            if n in "ntr\\":
                out += {"n": b"\n", "t": b"\t", "r": b"\r", "\\": b"\\"}[n]; i += 2; continue
            if n == "x" and re.match(r"[0-9A-Fa-f]{2}", s[i + 2:i + 4]):
                out.append(int(s[i + 2:i + 4], 16)); i += 4; continue
        out += c.encode("utf-8")
        i += 1
    return bytes(out)


def run(sql, uri=URI, timeout="2"):
    if b"\x00" in sql:
        argv = [BIN, "sql", uri, "-", "--format", "json", "--timeout", timeout, "--max-rows", "100"]
        stdin = sql
    else:
        argv = [BIN, "sql", uri, "--format", "json", "--timeout", timeout, "--max-rows", "100", "--", sql]
        stdin = b""
    r = subprocess.run(argv, input=stdin, capture_output=True, timeout=300)  # a failure bound
    err = None
    for stream in (r.stdout, r.stderr):
        try:
            d = json.loads(stream.decode("utf-8", errors="replace"))
            if isinstance(d, dict) and "error" in d:
                err = d["error"]
        except ValueError:
            pass
    return r.returncode, err, r


def check_case(cid, cat, sql, expect, uri=URI):
    rc, err, r = run(sql, uri)
    said = "exit %d, error %s, stderr %s" % (rc, json.dumps(err), r.stderr.decode(errors="replace")[:300])
    if expect.startswith("refused:"):
        reason = expect.split(":", 1)[1]
        want_rc = (2, 3) if reason == "empty" else (3,)
        if rc not in want_rc or not err or err.get("reason") != reason:
            bad("%s (%s): want exit 3, reason %s; got %s" % (cid, cat, reason, said))
    elif expect == "error:sql":
        if rc != 1 or not err or err.get("kind") != "sql":
            bad("%s (%s): want exit 1 (kind sql); got %s" % (cid, cat, said))
    elif expect == "ok":
        if rc == 0:
            pass
        elif cat == "dos" and rc == 4 and err and err.get("kind") in ("timeout", "limit"):
            pass
        elif rc == 1 and err and err.get("kind") == "sql":
            notes.append("%s: ok for the guard, the server answered: %s" % (cid, err.get("message")))
        else:
            bad("%s (%s): want exit 0 (or a server error / the time limit); got %s" % (cid, cat, said))
    else:
        bad("%s: unknown expect %r" % (cid, expect))
    return rc


def compare(what, before, after):
    if before != after:
        b, a = set(map(tuple, before)) if isinstance(before, list) else before, None
        a = set(map(tuple, after)) if isinstance(after, list) else after
        if isinstance(b, set):
            bad("%s changed: gone %s, new %s" % (what, sorted(b - a)[:5], sorted(a - b)[:5]))
        else:
            bad("%s changed" % what)


left = wait_quiet()
if left:
    bad("before the run, other sessions: %s" % left)
db0, files0 = database_state(), files_state()
if files0[1]:
    bad("the secure_file_priv folder is not empty before the run: %s" % files0[1])

cases = []
with open(CORPUS, encoding="utf-8") as f:
    for line in f:
        line = line.rstrip("\n")
        if not line or line.startswith("#") or line.startswith("id\t"):
            continue
        cols = line.split("\t")
        if len(cols) != 6:
            bad("malformed corpus line: %r" % line)
            continue
        sql = unescape(cols[2]).replace(b"/tmp/tt_corpus", (FILES + "/tt_corpus").encode())
        cases.append((cols[0], cols[1], sql, cols[5] or cols[3]))

t0 = time.time()
counts = {}
for cid, cat, sql, expect in cases:
    rc = check_case(cid, cat, sql, expect)
    counts[rc] = counts.get(rc, 0) + 1
    left = wait_quiet()
    if left:
        bad("%s: sessions left on the server: %s" % (cid, left))
    compare("%s: the database" % cid, db0, database_state())
    f1 = files_state()
    if f1[0] != files0[0]:
        compare("%s: the data folder's files" % cid, [[n] for n in files0[0]], [[n] for n in f1[0]])
    if f1[1]:
        bad("%s: files in the secure_file_priv folder: %s" % (cid, f1[1]))
        for n in f1[1]:
            os.unlink(os.path.join(FILES, n))
    if f1[2] != files0[2]:
        bad("%s: the server's user has new files in /tmp: %s" % (cid, sorted(set(f1[2]) - set(files0[2]))))
print("corpus: %d cases in %.1f s, exit codes %s, each followed by the checks" % (
    len(cases), time.time() - t0, dict(sorted(counts.items()))), flush=True)

# The cases the issue names, on their own (where the corpus has the SQL, its
# expectation wins).
explicit = [
    ("into outfile", b"SELECT * FROM Track INTO OUTFILE '%s/x'" % FILES.encode(), "refused:write"),
    ("into dumpfile", b"SELECT 'x' INTO DUMPFILE '%s/y'" % FILES.encode(), "refused:write"),
    ("into @var", b"SELECT Name INTO @n FROM Genre LIMIT 1", "refused:other"),
    (":=", b"SELECT @n := 1", "refused:other"),
    ("get_lock", b"SELECT GET_LOCK('tt_lock', 0)", "refused:function"),
    ("release_lock", b"SELECT RELEASE_LOCK('tt_lock')", "refused:function"),
    ("for update", b"SELECT * FROM Genre FOR UPDATE", "refused:other"),
    ("lock in share mode", b"SELECT * FROM Genre LOCK IN SHARE MODE", "refused:other"),
    ("for share", b"SELECT * FROM Genre FOR SHARE", "refused:other"),
    ("temporary table", b"CREATE TEMPORARY TABLE t AS SELECT 1", "refused:schema"),
    ("load_file", b"SELECT LOAD_FILE('/etc/passwd')", "refused:function"),
    ("sleep", b"SELECT SLEEP(60)", "refused:function"),
    ("benchmark", b"SELECT BENCHMARK(1e9, MD5('x'))", "refused:function"),
    ("load data", b"LOAD DATA INFILE '/etc/passwd' INTO TABLE Genre", "refused:write"),
    ("handler", b"HANDLER Genre OPEN", "refused:other"),
    ("do", b"DO GET_LOCK('tt_lock', 0)", "refused:other"),
    ("set", b"SET SESSION max_statement_time = 0", "refused:other"),
    ("two statements", b"SELECT 1; DROP TABLE Genre", "refused:multiple"),
    ("executable comment", b"SELECT 1 /*!50000 , SLEEP(60) */", "refused:other"),
    ("stored function", b"SELECT evil()", "refused:function"),
    ("view calling it", b"SELECT * FROM v_evil", "refused:function"),
    ("mysql.user", b"SELECT * FROM mysql.user", "refused:internals"),
    ("mysql.global_priv", b"SELECT * FROM mysql.global_priv", "refused:internals"),
    ("processlist", b"SELECT INFO FROM information_schema.PROCESSLIST", "refused:internals"),
    ("performance_schema", b"SELECT * FROM performance_schema.threads", "refused:internals"),
]
by_sql = {c[2]: c[3] for c in cases}
for name, sql, expect in explicit:
    check_case(name, "explicit", sql, by_sql.get(sql, expect))
if os.listdir(FILES):
    bad("files in the secure_file_priv folder after the explicit cases: %s" % os.listdir(FILES))

# The time limit ends what would run for hours, and KILL QUERY leaves no
# session running on the server.
for sql in (b"SELECT COUNT(*) FROM Track a, Track b, Track c",
            b"SELECT COUNT(*) FROM seq_1_to_100000000000 WHERE seq % 7 = 3"):
    t = time.time()
    rc, err, r = run(sql, timeout="1")
    if rc != 4 or not err or err.get("kind") != "timeout":
        bad("%r: want exit 4 (timeout), got %d %s" % (sql, rc, json.dumps(err)))
    left = wait_quiet()
    if left:
        bad("%r: sessions left after the time limit: %s" % (sql, left))

# A reader account (SELECT and SHOW VIEW only): reads work, refusals are the
# same, and its own views are checked too.
for name, sql, expect in [("reader read", b"SELECT COUNT(*) FROM Track", "ok"),
                          ("reader view", b"SELECT * FROM v_ok", "ok"),
                          ("reader evil view", b"SELECT * FROM v_nested", "refused:function"),
                          ("reader outfile", b"SELECT 1 INTO OUTFILE '%s/r'" % FILES.encode(), "refused:write"),
                          ("reader users", b"SELECT * FROM v_users", "refused:internals")]:
    check_case(name, "reader", sql, expect, READER)

left = wait_quiet()
if left:
    bad("after the run, other sessions: %s" % left)
compare("the database after the run", db0, database_state())
for n in notes[:15]:
    print("note: " + n)
if len(notes) > 15:
    print("note: ... and %d more server answers to ok cases" % (len(notes) - 15))
if failures:
    print("%d failures" % len(failures))
    sys.exit(1)
print("mysql_guard_live: all %d corpus cases, %d explicit cases, the time limit and the reader "
      "account behave, and nothing changed on the server" % (len(cases), len(explicit)))
