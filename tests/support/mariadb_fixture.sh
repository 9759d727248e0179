#!/usr/bin/env bash
# mariadb_fixture.sh — the CTest fixture mariadb_server (tests/CMakeLists.txt):
# a MariaDB server of its own for the MySQL/MariaDB tests.
#
#   mariadb_fixture.sh setup DIR SQLITE   start a server
#                                         (scripts/mariadb-test-server.sh),
#                                         load SQLITE into the databases
#                                         chinook and hostile
#                                         (scripts/chinook-to-mysql.py),
#                                         plant tests/fixtures/mysql_hostile.sql
#                                         in hostile, make the read-only
#                                         account tt_reader, and write to DIR:
#                                         uri (root on chinook), reader_uri
#                                         (tt_reader, password in the URL),
#                                         hostile_uri (root on hostile),
#                                         socket, datadir, files (the
#                                         server's secure_file_priv folder)
#   mariadb_fixture.sh cleanup DIR        stop the server; fails if it is left
#
# Without mariadbd both exit 77 (skipped) and DIR/skip says why; the tests
# that need the fixture (TT_MY_URI_FILE=DIR/uri) skip too when DIR/uri is
# missing.
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
server=$root/scripts/mariadb-test-server.sh
now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.2f", b - a }'; }
alive() {
  local s
  s=$(sed -n 's/^State:[[:space:]]*\([A-Z]\).*/\1/p' "/proc/$1/status" 2>/dev/null)
  [ -n "$s" ] && [ "$s" != Z ]
}

case "${1:-}" in
setup)
  dir=$2 sqlite=$3
  mkdir -p "$dir"
  dir=$(cd "$dir" && pwd)
  rm -f "$dir/uri" "$dir/reader_uri" "$dir/hostile_uri" "$dir/socket" "$dir/skip"
  t0=$(now)
  if ! "$server" bindir >/dev/null 2>"$dir/skip"; then
    cat "$dir/skip"
    exit 77
  fi
  rm -f "$dir/skip"
  "$server" start "$dir" >/dev/null || exit 1
  t1=$(now)
  sock=$("$server" socket "$dir")
  cluster=$(cat "$dir/cluster")
  client() { mariadb --no-defaults --protocol=socket --socket="$sock" --user=root "$@"; }
  for db in chinook hostile; do
    if ! /usr/bin/python3 "$root/scripts/chinook-to-mysql.py" --socket "$sock" --sqlite "$sqlite" \
           --database "$db" >/dev/null; then
      "$server" stop "$dir"; exit 1
    fi
  done
  if ! client hostile < "$root/tests/fixtures/mysql_hostile.sql" ||
     ! client <<'SQL'
CREATE USER tt_reader@localhost IDENTIFIED BY 'R3ader-pw';
GRANT SELECT, SHOW VIEW ON chinook.* TO tt_reader@localhost;
GRANT SELECT, SHOW VIEW ON hostile.* TO tt_reader@localhost;
SQL
  then
    echo "mariadb_server: cannot plant the hostile objects or make tt_reader"; "$server" stop "$dir"; exit 1
  fi
  enc=$(printf '%s' "$sock" | sed 's|/|%2F|g')
  echo "mariadb://root@localhost/chinook?socket=$enc" > "$dir/uri"
  echo "mysql://tt_reader:R3ader-pw@localhost/chinook?socket=$enc" > "$dir/reader_uri"
  echo "mariadb://root@localhost/hostile?socket=$enc" > "$dir/hostile_uri"
  echo "$sock" > "$dir/socket"
  echo "$cluster/data" > "$dir/datadir"
  echo "$cluster/files" > "$dir/files"
  echo "mariadb_server: $(mariadbd --version 2>/dev/null || /usr/sbin/mariadbd --version), started in" \
       "$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }') s, ready with chinook and" \
       "hostile in $(since "$t0") s: $(cat "$dir/uri")"
  ;;
cleanup)
  dir=$2
  if [ -f "$dir/skip" ]; then cat "$dir/skip"; exit 77; fi
  cluster=$(cat "$dir/cluster" 2>/dev/null || true)
  pid=
  [ -n "$cluster" ] && [ -f "$cluster/mysqld.pid" ] && pid=$(cat "$cluster/mysqld.pid")
  t0=$(now)
  "$server" stop "$dir" || exit 1
  if [ -n "$pid" ] && alive "$pid"; then
    echo "mariadb_server: server $pid is still running after stop"; exit 1
  fi
  if [ -n "$cluster" ] && [ -e "$cluster" ]; then
    echo "mariadb_server: $cluster is still there after stop"; exit 1
  fi
  rm -f "$dir/uri" "$dir/reader_uri" "$dir/hostile_uri" "$dir/socket" "$dir/datadir" "$dir/files"
  echo "mariadb_server: server ${pid:-(none)} stopped in $(since "$t0") s, nothing left"
  ;;
*)
  echo "usage: $0 setup DIR SQLITE | cleanup DIR" >&2; exit 2 ;;
esac
