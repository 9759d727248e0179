#!/bin/sh
# export.sh PARQUET [RUNS] — issue 30's export figure for the DuckDB engine:
# `tabletalk sql PARQUET 'SELECT * FROM big' -f csv|json` against DuckDB
# itself writing the same rows with its own writer (duckdb_export.mjs, the
# official Node binding of the same release; its Node start-up, about
# 0.25 s of CPU, is included in its figures). Interleaved runs, GNU time's
# wall, user+sys CPU and peak RSS per run. Needs `npm ci` in bench/duckdb.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
bin=${TABLETALK:-$here/../../build/tabletalk}
file=$1
runs=${2:-3}
i=0
while [ "$i" -lt "$runs" ]; do
  for fmt in csv json; do
    /usr/bin/time -f "duckdb-node $fmt %e s %U+%S cpu %M KB" \
      node "$here/duckdb_export.mjs" "$file" "$fmt" >/dev/null
    /usr/bin/time -f "tabletalk $fmt %e s %U+%S cpu %M KB" \
      "$bin" sql "$file" 'SELECT * FROM big' -f "$fmt" >/dev/null
  done
  i=$((i + 1))
done
