#!/usr/bin/env bash
# run_fuzz.sh FUZZER SEEDER SECONDS — runs the SQL fuzzer for a bounded time
# from the guard corpus, on a scratch copy of chinook; fails on any crash,
# leak or sanitizer report.
set -euo pipefail
fuzzer=$1 seeder=$2 seconds=$3
work=$(mktemp -d "${TMPDIR:-/tmp}/tabletalk-fuzz-XXXXXX")
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/corpus"
cp "$TT_CHINOOK" "$work/chinook.sqlite"
"$seeder" "$work/corpus" || echo "fuzz_sql: no guard corpus to start from; starting empty"
artifacts=$PWD   # a crashing input is kept here, in the build tree
cd "$work"
set +e
TT_FUZZ_DB="$work/chinook.sqlite" "$fuzzer" -max_total_time="$seconds" -timeout=10 \
  -artifact_prefix="$artifacts/fuzz-" \
  -rss_limit_mb=2048 -max_len=4096 -print_final_stats=1 corpus >"$work/log" 2>&1
status=$?
set -e
grep -v '^#' "$work/log" | tail -n 40
if [ "$status" -ne 0 ]; then
  echo "fuzz_sql: the fuzzer failed (status $status); the input is in $artifacts/fuzz-*"
  exit 1
fi
echo "fuzz_sql: no crash, no leak in ${seconds} s"
