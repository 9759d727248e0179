#!/usr/bin/env bash
# pg_opts.sh BIN — the PostgreSQL options against the pg_server fixture's
# server ($TT_PG_URI_FILE, chinook loaded): --db-url with the PG* variables
# (postgresql:// alone) and with a whole URI, its usage errors; a password
# in a URI overwritten in the process's command line and never printed;
# --schemas include/exclude on a scratch database with three schemas, and
# a usage error on SQLite for every command that takes it; the guide's
# read-only role (docs/guide/postgresql.md). Exit 77
# (skipped) without a server URI.
set -u
BIN=$1
. "$(dirname "$0")/../support/pg_test.sh"
LITE=${TT_CHINOOK:?TT_CHINOOK names the SQLite chinook file}
mcp_pid=
pg_test_cleanup_extra() { [ -n "$mcp_pid" ] && kill "$mcp_pid" 2>/dev/null; }
export NO_COLOR=1
unset PGHOST PGPORT PGUSER PGDATABASE PGPASSWORD PGSERVICE PGHOSTADDR

# the fixture's URI as PG* variables
eval "$(python3 - "$URI" <<'EOF'
import shlex, sys, urllib.parse as u
p = u.urlsplit(sys.argv[1]); q = dict(u.parse_qsl(p.query))
env = {"PGHOST": q.get("host") or p.hostname or "", "PGPORT": q.get("port") or str(p.port or ""),
       "PGUSER": q.get("user") or p.username or "", "PGDATABASE": p.path.lstrip("/") or q.get("dbname", "")}
for k, v in env.items():
    if v: print(f"export {k}={shlex.quote(v)}")
EOF
)"
[ -n "${PGHOST:-}" ] && [ -n "${PGDATABASE:-}" ] || bad "could not read PGHOST/PGDATABASE from $URI"

count() { printf '%s\n' "$1" | tail -n1 | tr -d '\r'; }

# --db-url postgresql:// : libpq's defaults and the PG* variables; DB left out
out=$("$BIN" sql --format csv --db-url postgresql:// 'SELECT count(*) FROM "Track"' 2>"$work/err") ||
  bad "sql --db-url postgresql:// failed: $(cat "$work/err")"
[ "$(count "$out")" = 3503 ] || bad "count of Track via PG* variables: $out"
# --db-url=URL, after the SQL, and the whole URI
out=$("$BIN" sql 'SELECT count(*) FROM "Album"' --format=csv --db-url="$URI" 2>"$work/err") ||
  bad "sql --db-url=URI failed: $(cat "$work/err")"
[ "$(count "$out")" = 347 ] || bad "count of Album via --db-url=URI: $out"
# schema and chart take it too
"$BIN" schema --db-url postgresql:// Artist >"$work/out" 2>"$work/err" || bad "schema --db-url: $(cat "$work/err")"
grep -q "# Table: Artist" "$work/out" || bad "schema --db-url: no Artist card: $(head -3 "$work/out")"
"$BIN" chart --db-url postgresql:// 'SELECT g."Name" AS genre, count(*) AS n FROM "Genre" g JOIN "Track" USING ("GenreId") GROUP BY 1 ORDER BY 2 DESC LIMIT 5' \
  --kind bar --x genre --y n --out "$work/g.svg" --no-preview >"$work/out" 2>"$work/err" ||
  bad "chart --db-url: $(cat "$work/err")"
grep -q "<svg" "$work/g.svg" 2>/dev/null || bad "chart --db-url wrote no SVG"

# usage errors (exit 2): not a URI, twice, no value
"$BIN" sql --db-url "$LITE" 'SELECT 1' >/dev/null 2>"$work/err"
rc=$?
[ $rc = 2 ] || bad "--db-url FILE: exit $rc, want 2"
grep -q "postgres:// or postgresql:// URI" "$work/err" || bad "--db-url FILE: $(cat "$work/err")"
"$BIN" sql --db-url postgresql:// --db-url postgresql:// 'SELECT 1' >/dev/null 2>"$work/err"
[ $? = 2 ] && grep -q "given twice" "$work/err" || bad "--db-url twice: $(cat "$work/err")"
"$BIN" sql 'SELECT 1' --db-url >/dev/null 2>"$work/err"
[ $? = 2 ] && grep -q "needs a value" "$work/err" || bad "--db-url without a value: $(cat "$work/err")"
"$BIN" learn --db-url postgresql:// 'How many tracks?' 'SELECT count(*) FROM "Track"' >/dev/null 2>"$work/err"
[ $? = 2 ] && grep -q -- "--knowledge FILE" "$work/err" || bad "learn on a server without --knowledge: $(cat "$work/err")"

# a password in a URI: never printed, and gone from /proc/PID/cmdline
PW=Zq7secretPW
sep='?'
case $URI in *\?*) sep='&' ;; esac
pwuri="postgresql://${PGUSER}:${PW}@/${PGDATABASE}?host=$(python3 -c 'import sys,urllib.parse as u; print(u.quote(sys.argv[1], safe=""))' "$PGHOST")"
"$BIN" sql --json --db-url "postgresql://nobody_here:${PW}@/nodb" 'SELECT 1' >"$work/out" 2>"$work/err"
rc=$?
[ $rc = 1 ] || bad "a wrong user: exit $rc, want 1"
grep -q "nobody_here:\*\*\*@" "$work/out" "$work/err" || bad "the failed connection's message: $(cat "$work/out" "$work/err")"
! grep -q "$PW" "$work/out" "$work/err" || bad "the password was printed: $(cat "$work/out" "$work/err")"
"$BIN" sql --db-url "$pwuri" 'SELECT 1 AS one' >"$work/out" 2>"$work/err" || bad "sql with a password in the URI: $(cat "$work/err")"
mkfifo "$work/in"
"$BIN" serve-mcp --db-url "$pwuri" <"$work/in" >"$work/mcp.out" 2>"$work/mcp.err" &
mcp_pid=$!
exec 7>"$work/in" # keeps serve-mcp's input open
cmdline=
# serve-mcp redacts its command line at start and says nothing when it has:
# a bounded poll of /proc, whose bound is a failure timeout only
for _ in $(seq 3000); do
  cmdline=$(tr '\0' ' ' <"/proc/$mcp_pid/cmdline" 2>/dev/null)
  case $cmdline in *'***'*) break ;; esac
  sleep 0.1
done
case $cmdline in
*"$PW"*) bad "the password is in serve-mcp's command line: $cmdline" ;;
*"${PGUSER}:***@"*) ;;
*) bad "serve-mcp's command line: '$cmdline'" ;;
esac
printf '%s\n' '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}' \
  '{"jsonrpc":"2.0","method":"notifications/initialized"}' \
  '{"jsonrpc":"2.0","id":2,"method":"tools/list"}' \
  '{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"run_sql","arguments":{"sql":"SELECT count(*) FROM \"Track\""}}}' >&7
exec 7>&-
wait "$mcp_pid"
mcp_pid=
grep -q 3503 "$work/mcp.out" || bad "serve-mcp --db-url: no count in $(head -c 600 "$work/mcp.out")"
! grep -q "$PW" "$work/mcp.out" "$work/mcp.err" || bad "serve-mcp printed the password"
! grep -rq "$PW" "$work/state" 2>/dev/null || bad "the password is in the state folder"

# --schemas on a scratch database: sales, hr and audit
PSQL=psql
command -v psql >/dev/null || PSQL=$("$(dirname "$0")/../../scripts/pg-test-server.sh" bindir 2>/dev/null)/psql
if "$PSQL" -qX -v ON_ERROR_STOP=1 -d "$URI" -c 'DROP DATABASE IF EXISTS tt_opts_schemas' \
  -c 'CREATE DATABASE tt_opts_schemas' >"$work/psql" 2>&1; then
  "$PSQL" -qX -v ON_ERROR_STOP=1 -d tt_opts_schemas >>"$work/psql" 2>&1 <<'EOF' || bad "scratch setup: $(cat "$work/psql")"
CREATE SCHEMA sales; CREATE SCHEMA hr; CREATE SCHEMA audit;
CREATE TABLE hr.staff(id int PRIMARY KEY, name text);
CREATE TABLE sales.orders(id int PRIMARY KEY, seller int REFERENCES hr.staff(id), total numeric);
CREATE TABLE audit.log(id int PRIMARY KEY, what text);
INSERT INTO hr.staff VALUES (1, 'Ana'); INSERT INTO sales.orders VALUES (1, 1, 9.5);
ANALYZE;
EOF
  tables() { "$BIN" schema --json --db-url postgresql:///tt_opts_schemas "$@" 2>"$work/err" |
    python3 -c 'import json,sys; print(" ".join(sorted(t["name"] for t in json.load(sys.stdin)["tables"])))'; }
  got=$(tables)
  [ "$got" = "audit.log hr.staff sales.orders" ] || bad "every schema: '$got' $(cat "$work/err")"
  got=$(tables --schemas sales,hr)
  [ "$got" = "hr.staff sales.orders" ] || bad "--schemas sales,hr: '$got' $(cat "$work/err")"
  got=$(tables --schemas '!audit')
  [ "$got" = "hr.staff sales.orders" ] || bad "--schemas '!audit': '$got' $(cat "$work/err")"
  got=$(tables --schemas 'sales,hr,!hr')
  [ "$got" = "sales.orders" -o "$got" = "orders" ] || bad "--schemas 'sales,hr,!hr': '$got'"
  "$BIN" schema --db-url postgresql:///tt_opts_schemas --schemas Sales,HR >/dev/null 2>"$work/err"
  rc=$?
  [ $rc = 1 ] || bad "--schemas Sales,HR (no such schemas): exit $rc, want 1"
  grep -q "keeps no table; the schemas with tables are: .*audit.*hr.*sales" "$work/err" ||
    bad "--schemas Sales,HR: $(cat "$work/err")"
  got=$(tables --schemas audit)
  [ "$got" = "log" ] || bad "--schemas audit (one schema, unqualified): '$got' $(cat "$work/err")"
  "$PSQL" -qX -d "$URI" -c 'DROP DATABASE IF EXISTS tt_opts_schemas' >/dev/null 2>&1
else
  bad "cannot create a scratch database with psql: $(cat "$work/psql")"
fi

# the read-only role of docs/guide/postgresql.md (PostgreSQL 14+): it reads everything, and
# even a transaction begun without READ ONLY cannot write
if "$PSQL" -qX -v ON_ERROR_STOP=1 -d "$URI" >"$work/psql" 2>&1 <<'EOF'
DROP ROLE IF EXISTS tabletalk_ro;
CREATE ROLE tabletalk_ro LOGIN PASSWORD 'choose-one';
GRANT pg_read_all_data TO tabletalk_ro;
ALTER ROLE tabletalk_ro SET default_transaction_read_only = on;
EOF
then
  out=$(PGUSER=tabletalk_ro "$BIN" sql --format csv --db-url postgresql:// 'SELECT count(*) FROM "Invoice"' 2>"$work/err") ||
    bad "sql as tabletalk_ro: $(cat "$work/err")"
  [ "$(count "$out")" = 412 ] || bad "count of Invoice as tabletalk_ro: $out"
  PGUSER=tabletalk_ro "$PSQL" -qX -c 'CREATE TEMP TABLE t(a int)' >"$work/psql" 2>&1 &&
    bad "tabletalk_ro created a table"
  grep -q "read-only transaction" "$work/psql" || bad "tabletalk_ro's write: $(cat "$work/psql")"
  "$PSQL" -qX -d "$URI" -c 'DROP ROLE IF EXISTS tabletalk_ro' >/dev/null 2>&1
else
  bad "cannot create the read-only role: $(cat "$work/psql")"
fi

# --schemas: malformed, and on SQLite, a usage error for every command taking it
"$BIN" schema --db-url postgresql:// --schemas 'sales,,hr' >/dev/null 2>"$work/err"
[ $? = 2 ] && grep -q "schema names separated by commas" "$work/err" || bad "--schemas 'sales,,hr': $(cat "$work/err")"
for cmd in ask chat schema serve-mcp; do
  case $cmd in ask) args=("$LITE" "How many tracks?") ;; *) args=("$LITE") ;; esac
  "$BIN" $cmd "${args[@]}" --schemas public </dev/null >/dev/null 2>"$work/err"
  rc=$?
  [ $rc = 2 ] || bad "$cmd --schemas on SQLite: exit $rc, want 2"
  grep -q -- "--schemas applies to PostgreSQL" "$work/err" || bad "$cmd --schemas on SQLite: $(cat "$work/err")"
done

[ $fail = 0 ] && echo "pg_opts: all checks passed"
exit $fail
