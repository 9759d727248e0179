#!/usr/bin/env bash
# pg_fixture.sh — the CTest fixture pg_server (tests/CMakeLists.txt): a
# PostgreSQL server of its own for the PostgreSQL tests, with chinook loaded.
#
#   pg_fixture.sh setup DIR SQLITE   start a server (scripts/pg-test-server.sh),
#                                    load SQLITE into database chinook
#                                    (scripts/chinook-to-pg.py), write its URI
#                                    to DIR/uri, and those of two read-only
#                                    roles that log in with a password to
#                                    DIR/reader_uri (SCRAM) and DIR/md5_uri
#   pg_fixture.sh cleanup DIR        stop the server; fails if a process of
#                                    it is left
#
# Without PostgreSQL server binaries both exit 77 (skipped) and DIR/skip
# says why; the tests that need the fixture (TT_PG_URI_FILE=DIR/uri) skip
# too when DIR/uri is missing.
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
server=$root/scripts/pg-test-server.sh
now() { date +%s.%N; }
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
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.2f", b - a }'; }

case "${1:-}" in
setup)
  dir=$2 sqlite=$3
  mkdir -p "$dir"
  rm -f "$dir/uri" "$dir/reader_uri" "$dir/md5_uri" "$dir/skip"
  t0=$(now)
  if ! bindir=$("$server" bindir 2>"$dir/skip"); then
    cat "$dir/skip"
    exit 77
  fi
  rm -f "$dir/skip"
  "$server" start "$dir" >/dev/null || exit 1
  t1=$(now)
  uri=$("$server" uri "$dir" chinook)
  if ! /usr/bin/python3 "$root/scripts/chinook-to-pg.py" --sqlite "$sqlite" "$uri"; then
    "$server" stop "$dir"
    exit 1
  fi
  # Roles that log in with a password, as docs/guide/postgresql.md recommends for
  # tabletalk: LOGIN, pg_read_all_data, nothing more; tt_reader by
  # SCRAM-SHA-256, tt_md5reader by md5 (the lines go before initdb's
  # "trust" lines, and the first match wins).
  cluster=$(cat "$dir/cluster")
  hba=$cluster/data/pg_hba.conf
  { printf 'local all tt_reader scram-sha-256\nlocal all tt_md5reader md5\n'; cat "$hba"; } > "$hba.new" &&
    cat "$hba.new" > "$hba" && rm -f "$hba.new"
  if ! psql -X -q -v ON_ERROR_STOP=1 "$uri" >/dev/null <<'SQL'
SET password_encryption = 'scram-sha-256';
CREATE ROLE tt_reader LOGIN PASSWORD 'R3ader-pw';
SET password_encryption = 'md5';
CREATE ROLE tt_md5reader LOGIN PASSWORD 'Md5-R3ader';
GRANT pg_read_all_data TO tt_reader, tt_md5reader;
SELECT pg_reload_conf();
SQL
  then
    echo "pg_server: cannot create the password roles"; "$server" stop "$dir"; exit 1
  fi
  rest=${uri#postgresql:///}
  echo "postgresql://tt_reader:R3ader-pw@/${rest/&user=tabletalk/}" > "$dir/reader_uri"
  echo "postgresql://tt_md5reader:Md5-R3ader@/${rest/&user=tabletalk/}" > "$dir/md5_uri"
  echo "$uri" > "$dir/uri"
  echo "pg_server: PostgreSQL from $bindir, server started in $(awk -v a="$t0" -v b="$t1" \
        'BEGIN { printf "%.2f", b - a }') s (initdb + pg_ctl start), ready with chinook" \
       "in $(since "$t0") s: $uri"
  ;;
cleanup)
  dir=$2
  if [ -f "$dir/skip" ]; then cat "$dir/skip"; exit 77; fi
  cluster=$(cat "$dir/cluster" 2>/dev/null || true)
  pid=
  [ -n "$cluster" ] && [ -f "$cluster/data/postmaster.pid" ] &&
    pid=$(head -n 1 "$cluster/data/postmaster.pid")
  t0=$(now)
  "$server" stop "$dir" || exit 1
  # Nothing of that server may be left: not its postmaster, not a backend
  # (their parent), not its folder.
  if [ -n "$pid" ] && { alive "$pid" || children_of "$pid"; }; then
    echo "pg_server: server $pid or one of its processes is still running after stop"; exit 1
  fi
  if [ -n "$cluster" ] && [ -e "$cluster" ]; then
    echo "pg_server: $cluster is still there after stop"; exit 1
  fi
  echo "pg_server: server ${pid:-(none)} stopped in $(since "$t0") s, nothing left"
  ;;
*)
  echo "usage: $0 setup DIR SQLITE | cleanup DIR" >&2; exit 2 ;;
esac
