#!/usr/bin/env bash
# fetch-duckdb.sh — puts DuckDB's official release library in
# third_party/duckdb/libduckdb.so: the shared library shipped inside the npm
# package @duckdb/node-bindings-linux-x64 (pinned below), fetched with
# `npm pack`, its tarball checked against the sha256 written here, and only
# libduckdb.so unpacked. tabletalk loads it on first use (dlopen) for
# Parquet, JSON, .duckdb files and large CSV; nothing of DuckDB is committed
# and the folder is ignored by git. Other machines than Linux x86-64: say so
# and leave the folder empty (those files then get an error naming this
# script).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
dest="$root/third_party/duckdb"
pkg=@duckdb/node-bindings-linux-x64@1.5.6-r.1
sha256=1b9f82478539bb9a1d1df44bd103121a12ae52142c07158dc52b97d2ec1d69ff

if [ -f "$dest/libduckdb.so" ] && [ "$(cat "$dest/.tabletalk-pinned" 2>/dev/null)" = "$pkg $sha256" ]; then
  exit 0
fi
if [ "$(uname -s)-$(uname -m)" != Linux-x86_64 ]; then
  echo "fetch-duckdb.sh: $pkg is for Linux x86-64 only; DuckDB files will not be readable here" >&2
  exit 0
fi
for tool in npm tar sha256sum; do
  command -v "$tool" >/dev/null 2>&1 || { echo "fetch-duckdb.sh: $tool is needed (apt-get install $tool)" >&2; exit 2; }
done
work=$(mktemp -d "${TMPDIR:-/tmp}/tabletalk-duckdb-XXXXXX")
trap 'rm -rf "$work"' EXIT
echo "fetch-duckdb.sh: fetching $pkg from the npm registry" >&2
(cd "$work" && npm pack --silent "$pkg" >/dev/null)
tgz=$(ls "$work"/*.tgz)
got=$(sha256sum "$tgz" | cut -d' ' -f1)
if [ "$got" != "$sha256" ]; then
  echo "fetch-duckdb.sh: $pkg has sha256 $got, not the pinned $sha256: refusing it" >&2
  exit 1
fi
tar -xzf "$tgz" -C "$work" package/libduckdb.so
mkdir -p "$dest"
mv "$work/package/libduckdb.so" "$dest/libduckdb.so.part"
mv "$dest/libduckdb.so.part" "$dest/libduckdb.so"
echo "$pkg $sha256" > "$dest/.tabletalk-pinned"
echo "fetch-duckdb.sh: libduckdb.so ($pkg) in $dest" >&2
