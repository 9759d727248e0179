#!/usr/bin/env bash
# pg_smoke.sh SQLITE — the PostgreSQL test infrastructure itself: the
# pg_server fixture's chinook (URI in $TT_PG_URI_FILE) has SQLite's 11
# tables with the same row counts (sqlite3 shell against psql), its keys,
# comments and planner estimates; the server listens on no TCP address and
# does not run as root; and scripts/pg-test-server.sh exec leaves no server
# behind when its command fails or when it is killed.
# Exits 77 (skipped) when the fixture was skipped (no PostgreSQL installed).
set -u
SQLITE=$1
root=$(cd "$(dirname "$0")/../.." && pwd)
server=$root/scripts/pg-test-server.sh
fail=0
bad() { echo "FAIL: $*"; fail=1; }
# alive PID: the process runs (a zombie, not yet reaped by whoever inherited
# it, has stopped).
alive() {
  local s
  s=$(sed -n 's/^State:[[:space:]]*\([A-Z]\).*/\1/p' "/proc/$1/status" 2>/dev/null)
  [ -n "$s" ] && [ "$s" != Z ]
}
# children_of PID: true when a process has PID as its parent (from /proc:
# procps may be missing in a container).
children_of() { grep -qsE "^PPid:[[:space:]]+$1\$" /proc/[0-9]*/status; }

urifile=${TT_PG_URI_FILE:?TT_PG_URI_FILE is not set: run this through ctest (fixture pg_server)}
if [ ! -f "$urifile" ]; then
  skip=$(cat "$(dirname "$urifile")/skip" 2>/dev/null)
  echo "skipped: ${skip:-the pg_server fixture did not start a server ($urifile is missing)}"
  exit 77
fi
uri=$(cat "$urifile")
q() { psql -X -At -F '|' -v ON_ERROR_STOP=1 -d "$uri" -c "$1"; }

# Tables and row counts: PostgreSQL against SQLite.
want_tables=$(sqlite3 -readonly "$SQLITE" \
  "SELECT name FROM sqlite_master WHERE type='table' AND name NOT LIKE 'sqlite_%' ORDER BY name")
got_tables=$(q "SELECT relname FROM pg_class WHERE relkind = 'r' AND relnamespace = 'public'::regnamespace ORDER BY relname COLLATE \"C\"")
[ "$(echo "$want_tables" | wc -l)" -eq 11 ] || bad "SQLite chinook has $(echo "$want_tables" | wc -l) tables, not 11"
[ "$got_tables" = "$want_tables" ] || bad "tables differ: PostgreSQL [$(echo $got_tables)] SQLite [$(echo $want_tables)]"
for t in $want_tables; do
  want=$(sqlite3 -readonly "$SQLITE" "SELECT count(*) FROM \"$t\"")
  got=$(q "SELECT count(*) FROM \"$t\"")
  est=$(q "SELECT reltuples::bigint FROM pg_class WHERE oid = '\"$t\"'::regclass")
  [ "$got" = "$want" ] || bad "$t: $got rows in PostgreSQL, $want in SQLite"
  [ "$est" = "$want" ] || bad "$t: reltuples is $est after ANALYZE, $want rows"
  wfk=$(sqlite3 -readonly "$SQLITE" "SELECT count(DISTINCT id) FROM pragma_foreign_key_list('$t')")
  gfk=$(q "SELECT count(*) FROM pg_constraint WHERE conrelid = '\"$t\"'::regclass AND contype = 'f'")
  [ "$gfk" = "$wfk" ] || bad "$t: $gfk foreign keys in PostgreSQL, $wfk in SQLite"
  gpk=$(q "SELECT count(*) FROM pg_constraint WHERE conrelid = '\"$t\"'::regclass AND contype = 'p'")
  [ "$gpk" = 1 ] || bad "$t: no primary key"
done
# Types, exact decimals, a description, the encoding.
[ "$(q "SELECT format_type(atttypid, atttypmod) FROM pg_attribute WHERE attrelid = '\"Invoice\"'::regclass AND attname = 'Total'")" = "numeric(10,2)" ] ||
  bad "Invoice.Total is not numeric(10,2)"
[ "$(q "SELECT format_type(atttypid, atttypmod) FROM pg_attribute WHERE attrelid = '\"Invoice\"'::regclass AND attname = 'InvoiceDate'")" = "timestamp without time zone" ] ||
  bad "Invoice.InvoiceDate is not a timestamp"
want_sum=$(sqlite3 -readonly "$SQLITE" "SELECT printf('%.2f', sum(Total)) FROM Invoice")
got_sum=$(q "SELECT sum(\"Total\") FROM \"Invoice\"")
[ "$got_sum" = "$want_sum" ] || bad "sum of Invoice.Total: $got_sum in PostgreSQL, $want_sum in SQLite"
[ -n "$(q "SELECT obj_description('\"Track\"'::regclass, 'pg_class')")" ] || bad "Track has no comment"
[ "$(q "SHOW server_encoding")" = UTF8 ] || bad "the server's encoding is not UTF8"
[ "$(q "SELECT \"BillingCity\" FROM \"Invoice\" WHERE \"InvoiceId\" = 2")" = "Oslo" ] || bad "invoice 2 is not from Oslo"
# Unix socket only, and never a server running as root.
[ -z "$(q "SHOW listen_addresses")" ] || bad "the server listens on TCP: $(q "SHOW listen_addresses")"
cluster=$(cat "$(dirname "$urifile")/cluster")
pid=$(head -n 1 "$cluster/data/postmaster.pid")
[ "$(stat -c %U "/proc/$pid")" != root ] || bad "the server runs as root"

# pg-test-server.sh exec: the server is gone after a failing command...
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$server" exec "$work/a" sh -c 'head -n 1 "$TT_PG_DATA/postmaster.pid" > "$0/pid"; echo "$TT_PG_DATA" > "$0/data"
  psql -X -At -d "$TT_PG_URI" -c "SELECT 40 + 2" > "$0/answer"; exit 3' "$work" >/dev/null 2>&1
st=$?
[ $st -eq 3 ] || bad "exec returned $st, not the command's status 3"
[ "$(cat "$work/answer" 2>/dev/null)" = 42 ] || bad "exec's command could not query its server"
p=$(cat "$work/pid" 2>/dev/null)
if [ -z "$p" ]; then bad "exec's server wrote no pid"
elif alive "$p" || children_of "$p"; then bad "exec left server $p running"; fi
[ ! -e "$(cat "$work/data")" ] || bad "exec left its cluster folder $(cat "$work/data")"

# ...and after exec itself is killed in the middle of its command.
# The command hands the server's pid through a fifo: reading it waits for
# exactly that moment (the bound of read -t is a failure timeout only).
rm -f "$work/pid"
mkfifo "$work/pid"
exec 8<>"$work/pid"
"$server" exec "$work/b" sh -c 'head -n 1 "$TT_PG_DATA/postmaster.pid" > "$0/pid"; exec sleep 60' "$work" \
  >/dev/null 2>&1 &
execpid=$!
p=
read -r -t 300 p <&8 || true
exec 8<&-
kill -TERM "$execpid"
wait "$execpid"
st=$?
[ $st -eq 143 ] || bad "a killed exec returned $st, not 143"
if [ -z "$p" ]; then bad "the second exec's server wrote no pid"
elif alive "$p" || children_of "$p"; then bad "a killed exec left server $p running"; fi
[ ! -s "$work/b/cluster" ] || bad "a killed exec left its cluster $(cat "$work/b/cluster")"

[ $fail -eq 0 ] && echo "pg_smoke: 11 tables, counts, keys, types and comments match SQLite; exec cleans up"
exit $fail
