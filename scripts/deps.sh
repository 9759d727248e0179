#!/usr/bin/env bash
# deps.sh [build|test] — makes sure the Debian packages tabletalk needs are
# installed: installs the missing ones with apt-get when run as root,
# otherwise prints the exact apt-get line and exits with status 2. Then
# fetches DuckDB's release library (scripts/fetch-duckdb.sh: pinned npm
# package, sha256 checked), which tabletalk loads on first use for Parquet,
# JSON, .duckdb files and large CSV.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)

# libpq talks to PostgreSQL servers; libpg_query parses their SQL for the
# read-only guard (PostgreSQL 15's own parser). libmariadb (MariaDB
# Connector/C) talks to MySQL and MariaDB servers (loaded on first use).
need=(cmake make gcc g++ pkg-config libsqlite3-dev libjansson-dev libcurl4-openssl-dev libedit2 libmicrohttpd-dev libcairo2-dev fonts-dejavu-core
      libpq-dev libpg-query-dev libmariadb-dev)
if [ "${1:-build}" = test ]; then
  # cmocka for unit tests; clang and its runtime for the sanitizer build
  # and libFuzzer; expat to check that charts' SVG is well-formed XML;
  # GNU time for a child's peak memory (tests/agent/endpoints.test.mjs);
  # Jinja2 to render the official chat templates the prompts are checked
  # against; zsh and fish to check that their completion scripts parse.
  # PostgreSQL (server and psql) for the tests' own throw-away servers
  # (scripts/pg-test-server.sh); PgBouncer to test tabletalk through a
  # pooler in transaction mode. MariaDB (server and client) for the tests'
  # own throw-away MySQL-protocol servers (scripts/mariadb-test-server.sh).
  # Debian's chromium for the browser tests of `tabletalk web` (tests/web
  # drives it headless with puppeteer-core).
  need+=(time libcmocka-dev clang libclang-rt-14-dev sqlite3 libexpat1-dev python3-jinja2 zsh fish postgresql pgbouncer
         mariadb-server mariadb-client chromium)
fi

if ! command -v dpkg-query >/dev/null 2>&1; then
  echo "deps.sh: not a Debian system; make sure these are installed: ${need[*]}" >&2
  exit 0
fi

missing=()
for p in "${need[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
if [ ${#missing[@]} -eq 0 ]; then
  :
elif [ "$(id -u)" -eq 0 ]; then
  echo "deps.sh: installing ${missing[*]}" >&2
  export DEBIAN_FRONTEND=noninteractive
  if ! apt-get install -y --no-install-recommends "${missing[@]}" >/dev/null; then
    apt-get update >/dev/null
    apt-get install -y --no-install-recommends "${missing[@]}" >/dev/null
  fi
else
  echo "tabletalk needs these Debian packages: ${missing[*]}" >&2
  echo "Install them, then run the command again:" >&2
  echo "  sudo apt-get install -y ${missing[*]}" >&2
  exit 2
fi

"$here/fetch-duckdb.sh"
