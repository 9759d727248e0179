#!/usr/bin/env bash
# test.sh [check] — the project's whole test run, as `make test` and CI call
# it: installs what is missing, builds a release tree (gcc, warnings as
# errors) and a sanitizer tree (clang, ASan+UBSan, libFuzzer), and runs every
# test in both, several at a time. The last line says how many passed and
# failed. `test.sh check` (`make check`) is the quick loop: the release tree
# only, the unit and agent labels without pg, mysql and slow ones.
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

# Tests run side by side: TT_TEST_JOBS at a time (default: twice the cores,
# since most tests spend their time waiting on a child process, a server or
# a pipe). Tests that share a server hold a RESOURCE_LOCK
# (tests/CMakeLists.txt); everything else has its own folders.
test_jobs=${TT_TEST_JOBS:-$((jobs * 2))}
passed=0 failed=0 skipped=0
configure() { # configure DIR cmake-args...
  local dir=$1; shift
  cmake -S . -B "$dir" -DBUILD_TESTING=ON -DTABLETALK_SHARED_DIR="$shared" "$@" >/dev/null
}
count() { # count LOG: adds the tree's results to the totals
  local log=$1 line total nfail nskip
  line=$(grep -E "tests passed, [0-9]+ tests? failed out of" "$log" | tail -n 1 || true)
  total=${line##*out of }
  nfail=$(echo "$line" | sed -E 's/.* ([0-9]+) tests? failed.*/\1/')
  if [ -z "$line" ]; then total=0; nfail=1; fi
  nskip=$(grep -c "(Skipped)" "$log" || true)
  passed=$((passed + total - nfail - nskip))
  failed=$((failed + nfail))
  skipped=$((skipped + nskip))
}
run_ctest() { # run_ctest DIR: every test of the tree, output to DIR/ctest.log too
  local dir=$1 status=0
  (cd "$dir" && ctest --output-on-failure -j"$test_jobs") 2>&1 | tee "$dir/ctest.log" || status=$?
  count "$dir/ctest.log"
  return $status
}
phase() { echo "== $1 ($(date +%T))"; }

status=0
release_args=(-DCMAKE_BUILD_TYPE=RelWithDebInfo -DTT_WERROR=ON)
if [ "${1:-}" = check ]; then
  configure build "${release_args[@]}"
  cmake --build build -j"$jobs"
  (cd build && ctest --output-on-failure -j"$test_jobs" -L 'unit|agent' -LE 'pg|mysql|slow') 2>&1 |
    tee build/ctest-check.log || status=1
  count build/ctest-check.log
  echo "tabletalk check (release, unit + agent): $passed passed, $failed failed"
  exit $status
fi
configure build "${release_args[@]}"
CC=clang configure build-asan -DCMAKE_BUILD_TYPE=Debug -DTT_SANITIZE=ON -DTT_FUZZ=ON -DCMAKE_C_COMPILER=clang
phase "release build"
cmake --build build -j"$jobs"
# llama.cpp's one build folder is shared by every tree (and by fresh_demo's):
# the sanitizer tree's step for it runs now, alone, so that nothing
# configures or builds that folder while the release tests run
cmake --build build-asan --target llama_cpp -j"$jobs" >/dev/null
# The sanitizer tree builds while the release tests run: the tests mostly
# wait, the compiler fills the cores they leave. Its output goes to a log,
# shown if it fails.
phase "release tests, sanitizer build beside them"
cmake --build build-asan -j"$jobs" >build-asan/build.log 2>&1 &
asan_build=$!
run_ctest build || status=1
asan_status=0
wait "$asan_build" || asan_status=$?
if [ "$asan_status" -ne 0 ]; then
  cat build-asan/build.log
  echo "the sanitizer build failed (status $asan_status)"
  failed=$((failed + 1))
  status=1
else
  phase "sanitizer tests"
  run_ctest build-asan || status=1
fi
phase "done"
[ "$skipped" -gt 0 ] && echo "note: $skipped test(s) skipped: the shared corpora were not found at $shared"
echo "tabletalk tests (release + sanitizers): $passed passed, $failed failed"
exit $status
