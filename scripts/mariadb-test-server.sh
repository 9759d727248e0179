#!/usr/bin/env bash
# mariadb-test-server.sh — a throw-away MariaDB server for the tests:
# mariadb-install-db into a fresh temporary folder (root without a
# password, no test database), started with mariadbd on a Unix socket
# inside that folder only (--skip-networking: no TCP), with its own
# secure-file-priv and tmp folders inside it too, and stopped with
# SIGTERM. No option file is read (--no-defaults). As root the server runs
# as an unprivileged user (mysql, or nobody), since mariadbd will not run
# as root without being told to.
#
#   mariadb-test-server.sh start DIR        start a server; DIR keeps its
#                                           state; prints the URI of the
#                                           "mysql" database's server as root
#   mariadb-test-server.sh uri DIR [DB]     the URI of database DB as root
#                                           (default test)
#   mariadb-test-server.sh socket DIR       the server's socket
#   mariadb-test-server.sh stop DIR         stop it, check that it is gone,
#                                           remove the temporary folder
#   mariadb-test-server.sh exec DIR CMD...  start, run CMD with TT_MY_SOCKET,
#                                           TT_MY_DATA and TT_MY_FILES set,
#                                           stop again whatever happens
#   mariadb-test-server.sh bindir           where mariadbd is
#
# Exit status 77 (the tests' "skipped") when mariadbd or mariadb-install-db
# is not installed: scripts/deps.sh test installs them (Debian package
# mariadb-server). TT_MY_RUN_USER names the user the server runs as when
# started by root.
set -euo pipefail

die() { echo "mariadb-test-server.sh: $*" >&2; exit 1; }

# alive PID: the process runs (a zombie has stopped).
alive() {
  local s
  s=$(sed -n 's/^State:[[:space:]]*\([A-Z]\).*/\1/p' "/proc/$1/status" 2>/dev/null)
  [ -n "$s" ] && [ "$s" != Z ]
}

# mariadbd and mariadb-install-db: PATH, then /usr/sbin (Debian keeps the
# server there, off a normal user's PATH).
find_bin() {
  local p
  for p in "$(command -v "$1" 2>/dev/null || true)" "/usr/sbin/$1" "/usr/bin/$1"; do
    [ -n "$p" ] && [ -x "$p" ] && { echo "$p"; return 0; }
  done
  return 1
}

need_bins() {
  MARIADBD=$(find_bin mariadbd) && INSTALL_DB=$(find_bin mariadb-install-db) || {
    echo "mariadb-test-server.sh: mariadbd or mariadb-install-db is not installed: install" \
         "them with 'scripts/deps.sh test' (Debian package mariadb-server); the MySQL/MariaDB" \
         "tests are skipped" >&2
    exit 77
  }
}

run_user() {
  if [ "$(id -u)" -ne 0 ]; then id -un; return; fi
  if [ -n "${TT_MY_RUN_USER:-}" ]; then echo "$TT_MY_RUN_USER"; return; fi
  if getent passwd mysql >/dev/null 2>&1; then echo mysql; else echo nobody; fi
}

cluster_of() { [ -f "$1/cluster" ] && cat "$1/cluster" || true; }

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

uri_for() { # uri_for CLUSTER DB
  printf 'mariadb://root@localhost/%s?socket=%s\n' "$(uri_encode "$2")" \
    "$(uri_encode "$1/sock/mysqld.sock")"
}

cmd_stop() {
  local dir=$1 cluster pid= i
  cluster=$(cluster_of "$dir")
  [ -n "$cluster" ] || return 0
  if [ ! -d "$cluster" ]; then rm -f "$dir/cluster" "$dir/uri"; return 0; fi
  [ -f "$cluster/mysqld.pid" ] && pid=$(cat "$cluster/mysqld.pid")
  if [ -n "$pid" ] && alive "$pid"; then
    kill -TERM "$pid" 2>/dev/null || true
    # mariadbd is not our child: a bounded poll on /proc until it is gone
    for ((i = 0; i < 600; i++)); do alive "$pid" || break; sleep 0.1; done
    if alive "$pid"; then
      kill -KILL "$pid" 2>/dev/null || true
      for ((i = 0; i < 100; i++)); do alive "$pid" || break; sleep 0.1; done
      alive "$pid" && die "the server (pid $pid, data $cluster/data) is still running after SIGKILL"
    fi
  fi
  [ -f "$cluster/server.log" ] && cp "$cluster/server.log" "$dir/server.log" 2>/dev/null || true
  rm -rf "$cluster"
  rm -f "$dir/cluster" "$dir/uri"
}

cmd_start() {
  local dir=$1 user cluster i pid
  need_bins
  mkdir -p "$dir"
  dir=$(cd "$dir" && pwd)
  cmd_stop "$dir"   # a server left by an interrupted run
  user=$(run_user)
  # A short path: a Unix socket's path must fit in 107 bytes.
  cluster=$(mktemp -d "${TMPDIR:-/tmp}/tt-my.XXXXXX")
  echo "$cluster" > "$dir/cluster"
  mkdir -p "$cluster/sock" "$cluster/files" "$cluster/tmp"
  if [ "$(id -u)" -eq 0 ]; then chown -R "$user" "$cluster"; fi
  chmod 700 "$cluster"
  chmod 755 "$cluster/sock"
  if ! "$INSTALL_DB" --no-defaults --datadir="$cluster/data" --user="$user" \
        --auth-root-authentication-method=normal --skip-test-db --skip-name-resolve \
        >"$dir/install-db.log" 2>&1; then
    cat "$dir/install-db.log" >&2
    cmd_stop "$dir"
    die "mariadb-install-db failed (log above, also in $dir/install-db.log)"
  fi
  [ "$(id -u)" -eq 0 ] && chown -R "$user" "$cluster"
  # No TCP; durability is not needed for a test server; files only inside
  # the folder (secure_file_priv), which the red-team tests watch.
  setsid "$MARIADBD" --no-defaults --user="$user" --datadir="$cluster/data" \
    --socket="$cluster/sock/mysqld.sock" --skip-networking --pid-file="$cluster/mysqld.pid" \
    --log-error="$cluster/server.log" --secure-file-priv="$cluster/files" \
    --tmpdir="$cluster/tmp" --skip-log-bin --innodb-buffer-pool-size=64M \
    --innodb-log-file-size=32M --innodb-flush-log-at-trx-commit=0 --skip-innodb-doublewrite \
    --max-connections=60 --character-set-server=utf8mb4 --collation-server=utf8mb4_general_ci \
    --lower-case-table-names=0 </dev/null >/dev/null 2>&1 &
  pid=$!
  # ready when the log says so (the socket exists a moment before)
  for ((i = 0; i < 600; i++)); do
    grep -qs "ready for connections" "$cluster/server.log" && break
    alive "$pid" || break
    sleep 0.1
  done
  if ! grep -qs "ready for connections" "$cluster/server.log"; then
    cat "$cluster/server.log" >&2 || true
    cmd_stop "$dir"
    die "the server did not start (its log is above)"
  fi
  uri_for "$cluster" mysql | tee "$dir/uri"
}

cmd_exec() {
  local dir=$1; shift
  [ $# -gt 0 ] || die "exec needs a command"
  cmd_start "$dir" >/dev/null
  dir=$(cd "$dir" && pwd)
  local child= cluster
  trap 'st=$?; [ -n "$child" ] && kill "$child" 2>/dev/null; cmd_stop "$dir"; exit $st' EXIT
  trap 'exit 143' TERM
  trap 'exit 130' INT
  cluster=$(cluster_of "$dir")
  TT_MY_SOCKET=$cluster/sock/mysqld.sock TT_MY_DATA=$cluster/data TT_MY_FILES=$cluster/files "$@" &
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
    uri_for "$c" "${3:-test}" ;;
  socket)
    c=$(cluster_of "$2"); [ -n "$c" ] || die "no server was started in $2"
    echo "$c/sock/mysqld.sock" ;;
  exec) [ $# -ge 3 ] || die "usage: $0 exec DIR CMD..."; d=$2; shift 2; cmd_exec "$d" "$@" ;;
  bindir) need_bins; dirname "$MARIADBD" ;;
  *) die "usage: $0 start DIR | stop DIR | uri DIR [DB] | socket DIR | exec DIR CMD... | bindir" ;;
esac
