# pg_test.sh — sourced by the shell tests that run against the pg_server
# fixture's PostgreSQL server: bad() records a failure, URI is the server's
# URI (exit 77, skipped, when $TT_PG_URI_FILE names none), work a private
# folder removed at exit (after pg_test_cleanup_extra, when the test
# defines it), and tabletalk's state, data and cache folders inside it.
fail=0
bad() { echo "FAIL: $*"; fail=1; }
if [ -z "${TT_PG_URI_FILE:-}" ] || [ ! -s "$TT_PG_URI_FILE" ]; then
  echo "skipped: TT_PG_URI_FILE names no file with a server URI (the pg_server fixture writes it)"
  exit 77
fi
URI=$(head -n1 "$TT_PG_URI_FILE")
work=$(mktemp -d)
pg_test_cleanup() {
  if declare -F pg_test_cleanup_extra >/dev/null; then pg_test_cleanup_extra; fi
  rm -rf "$work"
}
trap pg_test_cleanup EXIT
export TABLETALK_STATE_DIR=$work/state TABLETALK_DATA_DIR=$work/data TABLETALK_CACHE_DIR=$work/cache
