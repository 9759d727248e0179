#!/usr/bin/env bash
# pg-test-server.sh — a throw-away PostgreSQL server for the tests: initdb in
# a fresh temporary folder (trust authentication, locale C, UTF8), listening
# only on a Unix socket inside that folder (no TCP), started and stopped with
# pg_ctl. As root it runs the server as an unprivileged user (postgres, or
# nobody), since postgres refuses to run as root.
#
#   pg-test-server.sh start DIR        start a server; DIR keeps its state;
#                                      prints the URI of database "postgres"
#   pg-test-server.sh uri DIR [DB]     the URI of database DB (default postgres)
#   pg-test-server.sh stop DIR         stop it (fast), check that it is gone,
#                                      remove the temporary folder
#   pg-test-server.sh exec DIR CMD...  start, run CMD with TT_PG_URI, PGHOST,
#                                      PGPORT, PGUSER and TT_PG_DATA set, stop
#                                      again whatever happens; CMD's status
#   pg-test-server.sh bindir           where initdb, pg_ctl and postgres are
#
# Exit status 77 (the tests' "skipped") when no PostgreSQL server binaries
# are installed: scripts/deps.sh test installs them (Debian: postgresql).
# TT_PG_BINDIR names their folder instead of a search; TT_PG_RUN_USER the
# user the server runs as when started by root.
set -euo pipefail

TT_PG_SUPERUSER=tabletalk
TT_PG_PORT=5432   # only names the socket file: the socket's folder is private

die() { echo "pg-test-server.sh: $*" >&2; exit 1; }

# alive PID: the process runs (a zombie, not yet reaped by whoever inherited
# it, has stopped).
alive() {
  local s
  s=$(sed -n 's/^State:[[:space:]]*\([A-Z]\).*/\1/p' "/proc/$1/status" 2>/dev/null)
  [ -n "$s" ] && [ "$s" != Z ]
}
# The folder holding initdb, pg_ctl and postgres: PATH first, then the
# newest /usr/lib/postgresql/N/bin (Debian keeps them off PATH).
pg_bindir() {
  if [ -n "${TT_PG_BINDIR:-}" ]; then
    [ -x "$TT_PG_BINDIR/initdb" ] && { echo "$TT_PG_BINDIR"; return 0; }
    return 1
  fi
  local p
  p=$(command -v initdb 2>/dev/null || true)
  if [ -n "$p" ] && [ -x "$(dirname "$p")/pg_ctl" ] && [ -x "$(dirname "$p")/postgres" ]; then
    dirname "$p"; return 0
  fi
  # The newest version (sort -V: 9 comes before 15).
  local d best=
  for d in $(printf '%s\n' /usr/lib/postgresql/*/bin | sort -V); do
    [ -x "$d/initdb" ] && [ -x "$d/pg_ctl" ] && [ -x "$d/postgres" ] && best=$d
  done
  [ -n "$best" ] && { echo "$best"; return 0; }
  return 1
}

need_bindir() {
  BIN=$(pg_bindir) || {
    echo "pg-test-server.sh: no PostgreSQL server binaries (initdb, pg_ctl, postgres) on PATH" \
         "or in /usr/lib/postgresql/*/bin: install them with 'scripts/deps.sh test'" \
         "(Debian package postgresql); the PostgreSQL tests are skipped" >&2
    exit 77
  }
}

# The user the server runs as: ourselves, or an unprivileged one as root.
run_user() {
  if [ "$(id -u)" -ne 0 ]; then id -un; return; fi
  if [ -n "${TT_PG_RUN_USER:-}" ]; then echo "$TT_PG_RUN_USER"; return; fi
  if getent passwd postgres >/dev/null 2>&1; then echo postgres; else echo nobody; fi
}

# as_server_user CMD...: runs CMD as the server's user (from the cluster
# folder, so that no "could not change directory" warning appears).
as_server_user() {
  if [ "$(id -u)" -ne 0 ]; then "$@"; return; fi
  (cd "$CLUSTER" && runuser -u "$RUN_USER" -- "$@")
}

# Percent-encodes everything but unreserved characters (RFC 3986).
uri_encode() {
  local LC_ALL=C s=$1 out= c i
  for ((i = 0; i < ${#s}; i++)); do
    c=${s:i:1}
    case $c in
      [A-Za-z0-9._~-]) out+=$c ;;
      *) out+=$(printf '%%%02X' "'$c") ;;
    esac
  done
  printf '%s' "$out"
}

# The temporary cluster folder recorded in DIR, or nothing.
cluster_of() { [ -f "$1/cluster" ] && cat "$1/cluster" || true; }

uri_for() { # uri_for CLUSTER DB
  printf 'postgresql:///%s?host=%s&port=%s&user=%s\n' "$(uri_encode "$2")" \
    "$(uri_encode "$1/sock")" "$TT_PG_PORT" "$TT_PG_SUPERUSER"
}

cmd_stop() {
  local dir=$1
  CLUSTER=$(cluster_of "$dir")
  [ -n "$CLUSTER" ] || return 0
  if [ ! -d "$CLUSTER" ]; then rm -f "$dir/cluster" "$dir/uri"; return 0; fi
  RUN_USER=$(stat -c %U "$CLUSTER")
  local pid=
  [ -f "$CLUSTER/data/postmaster.pid" ] && pid=$(head -n 1 "$CLUSTER/data/postmaster.pid")
  if [ -n "$pid" ] && alive "$pid"; then
    need_bindir
    if ! as_server_user "$BIN/pg_ctl" stop -D "$CLUSTER/data" -m fast -w -t 30 >/dev/null; then
      echo "pg-test-server.sh: pg_ctl stop -m fast did not stop server $pid; stopping it -m immediate" >&2
      as_server_user "$BIN/pg_ctl" stop -D "$CLUSTER/data" -m immediate -w -t 30 >/dev/null || true
    fi
    # pg_ctl -w has seen postmaster.pid go; the process itself (not our
    # child, so nothing to wait on) ends a moment later: a bounded poll
    local i
    for ((i = 0; i < 100; i++)); do alive "$pid" || break; sleep 0.1; done
    if alive "$pid"; then
      die "the server (pid $pid, data $CLUSTER/data) is still running after pg_ctl stop; stop it with: kill -QUIT $pid"
    fi
  fi
  # Keep the server's log beside the state, then drop the cluster.
  [ -f "$CLUSTER/server.log" ] && cp "$CLUSTER/server.log" "$dir/server.log" 2>/dev/null || true
  rm -rf "$CLUSTER"
  rm -f "$dir/cluster" "$dir/uri"
}

cmd_start() {
  local dir=$1
  need_bindir
  mkdir -p "$dir"
  dir=$(cd "$dir" && pwd)
  cmd_stop "$dir"   # a server left by an interrupted run
  RUN_USER=$(run_user)
  # The cluster lives in a short temporary path: a Unix socket's path must
  # fit in 107 bytes, and the server's user must be able to reach it.
  CLUSTER=$(mktemp -d "${TMPDIR:-/tmp}/tt-pg.XXXXXX")
  echo "$CLUSTER" > "$dir/cluster"
  mkdir -p "$CLUSTER/sock"
  if [ "$(id -u)" -eq 0 ]; then chown -R "$RUN_USER" "$CLUSTER"; fi
  chmod 700 "$CLUSTER"
  if ! as_server_user "$BIN/initdb" -D "$CLUSTER/data" -U "$TT_PG_SUPERUSER" --auth=trust \
         --locale=C --encoding=UTF8 --no-sync --no-instructions >"$dir/initdb.log" 2>&1; then
    cat "$dir/initdb.log" >&2
    cmd_stop "$dir"
    die "initdb failed (log above, also in $dir/initdb.log)"
  fi
  # No TCP at all; durability is not needed for a test server.
  local opts="-c listen_addresses='' -k $CLUSTER/sock -p $TT_PG_PORT -c fsync=off"
  opts+=" -c synchronous_commit=off -c full_page_writes=off -c max_connections=50"
  if ! as_server_user "$BIN/pg_ctl" start -D "$CLUSTER/data" -l "$CLUSTER/server.log" -w -t 60 \
         -o "$opts" >/dev/null; then
    cat "$CLUSTER/server.log" >&2 || true
    cmd_stop "$dir"
    die "the server did not start (its log is above)"
  fi
  uri_for "$CLUSTER" postgres | tee "$dir/uri"
}

cmd_exec() {
  local dir=$1; shift
  [ $# -gt 0 ] || die "exec needs a command"
  cmd_start "$dir" >/dev/null
  dir=$(cd "$dir" && pwd)
  local child=
  # Stop the server on every way out, also when this script is killed; the
  # command runs in the background so that a signal is handled at once.
  trap 'st=$?; [ -n "$child" ] && kill "$child" 2>/dev/null; cmd_stop "$dir"; exit $st' EXIT
  trap 'exit 143' TERM
  trap 'exit 130' INT
  CLUSTER=$(cluster_of "$dir")
  TT_PG_URI=$(uri_for "$CLUSTER" postgres) PGHOST=$CLUSTER/sock PGPORT=$TT_PG_PORT \
    PGUSER=$TT_PG_SUPERUSER TT_PG_DATA=$CLUSTER/data "$@" &
  child=$!
  local st=0
  wait "$child" || st=$?
  child=
  exit "$st"
}

case "${1:-}" in
  start) [ $# -eq 2 ] || die "usage: $0 start DIR"; cmd_start "$2" ;;
  stop) [ $# -eq 2 ] || die "usage: $0 stop DIR"; cmd_stop "$2" ;;
  uri)
    [ $# -ge 2 ] || die "usage: $0 uri DIR [DB]"
    c=$(cluster_of "$2"); [ -n "$c" ] || die "no server was started in $2 (run: $0 start $2)"
    uri_for "$c" "${3:-postgres}" ;;
  exec) [ $# -ge 3 ] || die "usage: $0 exec DIR CMD..."; d=$2; shift 2; cmd_exec "$d" "$@" ;;
  bindir) need_bindir; echo "$BIN" ;;
  *) die "usage: $0 start DIR | stop DIR | uri DIR [DB] | exec DIR CMD... | bindir" ;;
esac
