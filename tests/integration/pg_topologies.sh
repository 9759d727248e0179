#!/usr/bin/env bash
# pg_topologies.sh BIN — tabletalk through the two set-ups docs/guide/postgresql.md
# describes beside a direct connection, both made here from the pg_server
# fixture's server: PgBouncer in transaction mode with a pool of one server
# connection, and a hot standby made with pg_basebackup. On each: a count,
# the schema with its estimates, a refused DELETE (exit 3), the time limit
# (exit 4) and serve-mcp's run_sql; through the pooler also that nothing
# tabletalk did stays on the pooled connection (statement_timeout,
# read-only settings) for the pool's next client. Exit 77 (skipped)
# without a server URI or without pgbouncer.
set -u
BIN=$1
. "$(dirname "$0")/../support/pg_test.sh"
export NO_COLOR=1
root=$(cd "$(dirname "$0")/../.." && pwd)
PG_BIN=$("$root/scripts/pg-test-server.sh" bindir) || exit 77
PG_BIN=$(dirname "$(readlink -f "$PG_BIN/pg_ctl")")   # beside pg_ctl: pg_basebackup
PGBOUNCER=$(command -v pgbouncer || echo /usr/sbin/pgbouncer)
[ -x "$PGBOUNCER" ] || { echo "skipped: no pgbouncer (scripts/deps.sh test installs it)"; exit 77; }

# the fixture's socket folder, from its URI (host=%2F...%2Fsock)
enc=${URI#*host=}; enc=${enc%%&*}
sock=$(printf '%b' "${enc//%/\\x}")
cluster=${sock%/sock}
run_user=$(stat -c %U "$cluster")
# as ourselves, or as the server's user when we are root (postgres and
# pgbouncer refuse to run as root)
as_user() { if [ "$(id -u)" -eq 0 ]; then runuser -u "$run_user" -- "$@"; else "$@"; fi; }
side=$(mktemp -d "${TMPDIR:-/tmp}/tt-pgt.XXXXXX")   # short: socket paths
[ "$(id -u)" -eq 0 ] && chown "$run_user" "$side"
bouncer_pid= standby=
stop_all() {
  # pgbouncer's own pid (runuser, whose pid $! is, stays its parent)
  local p
  p=$(cat "$side/pgb/pgbouncer.pid" 2>/dev/null)
  for q in $p $bouncer_pid; do kill "$q" 2>/dev/null; done
  # pgbouncer is runuser's child, not ours: nothing to wait on for its end
  # but a bounded poll (the bound is a failure timeout only)
  for _ in $(seq 3000); do [ -n "$p" ] && kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
  [ -n "$p" ] && kill -0 "$p" 2>/dev/null && { bad "pgbouncer $p still runs after kill"; kill -9 "$p"; }
  wait 2>/dev/null
  bouncer_pid=
  if [ -n "$standby" ] && ! as_user "$PG_BIN/pg_ctl" stop -D "$standby" -m fast -w -t 30 >/dev/null 2>&1; then
    bad "the standby did not stop"
    as_user "$PG_BIN/pg_ctl" stop -D "$standby" -m immediate -w >/dev/null 2>&1
  fi
  standby=
  rm -rf "$side"
}
pg_test_cleanup_extra() { stop_all; }

count_is() { # count_is URI TABLE WANT WHAT
  local out
  out=$("$BIN" sql --format csv "$1" "SELECT count(*) FROM \"$2\"" 2>&1) || { bad "$4: count failed: $out"; return; }
  [ "$(printf '%s\n' "$out" | tail -n1 | tr -d '\r')" = "$3" ] || bad "$4: count of $2: $out"
}

# the checks every set-up must pass
checks() { # checks URI WHAT
  local u=$1 what=$2 rc
  count_is "$u" Track 3503 "$what"
  "$BIN" schema "$u" >"$work/schema" 2>"$work/err" || bad "$what: schema failed: $(cat "$work/err")"
  grep -q '^# Table: Track (~3503 rows)' "$work/schema" || bad "$what: schema without Track's estimate"
  "$BIN" sql "$u" 'DELETE FROM "Track"' >/dev/null 2>"$work/err"
  rc=$?
  [ $rc = 3 ] || bad "$what: DELETE exit $rc, want 3 ($(cat "$work/err"))"
  "$BIN" sql --timeout 1 "$u" 'SELECT count(*) FROM generate_series(1, 2000000000)' >/dev/null 2>"$work/err"
  rc=$?
  [ $rc = 4 ] || bad "$what: the time limit: exit $rc, want 4 ($(cat "$work/err"))"
  printf '%s\n' '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}' \
    '{"jsonrpc":"2.0","method":"notifications/initialized"}' \
    '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"run_sql","arguments":{"sql":"SELECT count(*) FROM \"Album\""}}}' |
    timeout 60 "$BIN" serve-mcp "$u" --state-dir "$work/mcp" >"$work/mcp.out" 2>"$work/mcp.err"
  grep -q '\[\[347\]\]' "$work/mcp.out" || bad "$what: serve-mcp run_sql: $(tail -c 300 "$work/mcp.out") $(cat "$work/mcp.err")"
  count_is "$URI" Track 3503 "$what: the primary after the checks"
}

# ---- PgBouncer, transaction mode, one server connection ------------------
mkdir -p "$side/pgb"
cat >"$side/pgb/pgbouncer.ini" <<INI
[databases]
chinook = host=$sock port=5432 dbname=chinook user=tabletalk
[pgbouncer]
listen_addr =
listen_port = 6432
unix_socket_dir = $side/pgb
auth_type = trust
auth_file = $side/pgb/users.txt
pool_mode = transaction
default_pool_size = 1
max_client_conn = 50
ignore_startup_parameters = extra_float_digits
logfile = $side/pgb/pgbouncer.log
pidfile = $side/pgb/pgbouncer.pid
INI
echo '"tabletalk" ""' >"$side/pgb/users.txt"
[ "$(id -u)" -eq 0 ] && chown -R "$run_user" "$side/pgb"
as_user "$PGBOUNCER" "$side/pgb/pgbouncer.ini" >"$side/pgb/out" 2>&1 &
bouncer_pid=$!
pool="postgresql:///chinook?host=$side/pgb&port=6432&user=tabletalk"
# pgbouncer announces nothing a script can wait on when its socket is up: a
# bounded poll for the socket file, whose bound is a failure timeout only
for _ in $(seq 3000); do [ -S "$side/pgb/.s.PGSQL.6432" ] && break; sleep 0.1; done
if [ ! -S "$side/pgb/.s.PGSQL.6432" ]; then
  bad "pgbouncer did not start: $(cat "$side/pgb/out" "$side/pgb/pgbouncer.log" 2>/dev/null | tail -5)"
else
  checks "$pool" "through PgBouncer (transaction mode)"
  # the pool's one server connection, as its next client finds it
  got=$(psql -X -At -d "$pool" -c 'SHOW statement_timeout' -c 'SHOW lock_timeout' \
         -c 'SHOW default_transaction_read_only' -c 'SHOW transaction_read_only' 2>&1 | tr '\n' ' ')
  [ "$got" = "0 0 off off " ] || bad "PgBouncer: settings left on the pooled connection: $got"
  psql -X -q -d "$pool" -c 'CREATE TEMP TABLE t(x int); DROP TABLE t' >/dev/null 2>&1 ||
    bad "PgBouncer: the next client of the pool cannot write (a read-only setting stayed behind)"
fi

# ---- a hot standby ---------------------------------------------------------
# (-c fast: the base backup starts from an immediate checkpoint instead of
# a spread one, which throttles itself over minutes)
standby=$side/standby
mkdir -p "$side/ssock"
[ "$(id -u)" -eq 0 ] && chown "$run_user" "$side/ssock"
if ! as_user "$PG_BIN/pg_basebackup" -h "$sock" -p 5432 -U tabletalk -D "$standby" -R -X stream -c fast \
     >"$side/basebackup.log" 2>&1; then
  bad "pg_basebackup failed: $(tail -3 "$side/basebackup.log")"; standby=
elif ! as_user "$PG_BIN/pg_ctl" start -D "$standby" -w -t 60 -l "$side/standby.log" \
     -o "-c listen_addresses='' -k $side/ssock -p 5433 -c hot_standby=on -c fsync=off" >/dev/null; then
  bad "the standby did not start: $(tail -5 "$side/standby.log")"; standby=
else
  replica="postgresql:///chinook?host=$side/ssock&port=5433&user=tabletalk"
  rec=$(psql -X -At -d "$replica" -c 'SELECT pg_is_in_recovery()')
  [ "$rec" = t ] || bad "the standby is not in recovery: $rec"
  checks "$replica" "on a hot standby"
fi

stop_all
echo "pg_topologies: PgBouncer (transaction mode) and a hot standby checked"
exit $fail
