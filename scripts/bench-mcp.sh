#!/usr/bin/env bash
# bench-mcp.sh [--starts N] [--calls N] [--json FILE] — tabletalk serve-mcp
# and bytebase/dbhub 1.4 (read-only) side by side in one run, over stdio on
# copies of chinook: start-up, resident memory, latency of sequential SQL
# calls (bench/mcp/bench.mjs). Installs dbhub and the Node.js it needs
# (22.5 or newer) from bench/mcp/package-lock.json on first use.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
[ -x build/tabletalk ] || make --no-print-directory build >/dev/null
scripts/fetch-data.sh >/dev/null
if [ ! -f bench/mcp/node_modules/.package-lock.json ] ||
   [ bench/mcp/package-lock.json -nt bench/mcp/node_modules/.package-lock.json ]; then
  (cd bench/mcp && npm ci --no-audit --no-fund --loglevel=error)
fi
exec bench/mcp/node_modules/.bin/node bench/mcp/bench.mjs build/tabletalk data/chinook.sqlite "$@"
