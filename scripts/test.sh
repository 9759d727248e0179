#!/usr/bin/env bash
# test.sh — the project's whole test run, as `make test` and CI call it:
# installs what is missing, builds a release tree (gcc, warnings as errors)
# and a sanitizer tree (clang, ASan+UBSan, libFuzzer), and runs every test in
# both. The last line says how many passed and failed.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
unset MAKEFLAGS MFLAGS MAKELEVEL  # quiet nested make output
jobs=$(nproc 2>/dev/null || echo 2)
shared=${TABLETALK_SHARED_DIR:-$root/../shared}

scripts/deps.sh test
scripts/fetch-data.sh
scripts/fetch-llama.sh
# The MCP tests' client side: the official MCP SDK, the MCP Inspector and
# a Node.js new enough for both, pinned by tests/mcp/package-lock.json.
if [ ! -f tests/mcp/node_modules/.package-lock.json ] ||
   [ tests/mcp/package-lock.json -nt tests/mcp/node_modules/.package-lock.json ]; then
  (cd tests/mcp && npm ci --no-audit --no-fund --loglevel=error)
fi

# The browser tests' driver: puppeteer-core, pinned by
# tests/web/package-lock.json (it drives Debian's chromium; never downloads one).
if [ ! -f tests/web/node_modules/.package-lock.json ] ||
   [ tests/web/package-lock.json -nt tests/web/node_modules/.package-lock.json ]; then
  (cd tests/web && npm ci --no-audit --no-fund --loglevel=error)
fi

passed=0 failed=0 skipped=0
run_tree() { # run_tree DIR -- cmake args...
  local dir=$1; shift
  cmake -S . -B "$dir" -DBUILD_TESTING=ON -DTABLETALK_SHARED_DIR="$shared" "$@" >/dev/null
  cmake --build "$dir" -j"$jobs"
  local log="$dir/ctest.log" status=0
  (cd "$dir" && ctest --output-on-failure -j1) 2>&1 | tee "$log" || status=$?
  local line
  line=$(grep -E "tests passed, [0-9]+ tests? failed out of" "$log" | tail -n 1 || true)
  local total=${line##*out of }
  local nfail
  nfail=$(echo "$line" | sed -E 's/.* ([0-9]+) tests? failed.*/\1/')
  if [ -z "$line" ]; then total=0; nfail=1; fi
  local nskip
  nskip=$(grep -c "(Skipped)" "$log" || true)
  passed=$((passed + total - nfail - nskip))
  failed=$((failed + nfail))
  skipped=$((skipped + nskip))
  return $status
}

status=0
run_tree build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTT_WERROR=ON || status=1
CC=clang run_tree build-asan -DCMAKE_BUILD_TYPE=Debug -DTT_SANITIZE=ON -DTT_FUZZ=ON \
  -DCMAKE_C_COMPILER=clang || status=1
[ "$skipped" -gt 0 ] && echo "note: $skipped test(s) skipped: the shared corpora were not found at $shared"
echo "tabletalk tests (release + sanitizers): $passed passed, $failed failed"
exit $status
