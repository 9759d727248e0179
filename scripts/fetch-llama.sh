#!/usr/bin/env bash
# fetch-llama.sh — puts the pinned llama.cpp release in third_party/llama.cpp:
# the git bundle distributed inside the npm package node-llama-cpp@3.21.1
# (llama.cpp v0.4.0), unpacked with `npm pack` and `git clone`. Nothing of
# llama.cpp is committed; the folder is ignored by git.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
dest="$root/third_party/llama.cpp"
pkg=node-llama-cpp@3.21.1

if [ -f "$dest/include/llama.h" ] && [ -f "$dest/.tabletalk-pinned" ]; then exit 0; fi
for tool in npm git tar; do
  command -v "$tool" >/dev/null 2>&1 || { echo "fetch-llama.sh: $tool is needed (apt-get install $tool)" >&2; exit 2; }
done
work=$(mktemp -d "${TMPDIR:-/tmp}/tabletalk-llama-XXXXXX")
trap 'rm -rf "$work"' EXIT
echo "fetch-llama.sh: fetching $pkg from the npm registry" >&2
(cd "$work" && npm pack --silent "$pkg" >/dev/null)
tar -xzf "$work"/node-llama-cpp-*.tgz -C "$work" package/llama/gitRelease.bundle
rm -rf "$dest"
mkdir -p "$(dirname "$dest")"
git -c advice.detachedHead=false clone --quiet "$work/package/llama/gitRelease.bundle" "$dest"
echo "$pkg" > "$dest/.tabletalk-pinned"
echo "fetch-llama.sh: llama.cpp $(git -C "$dest" describe --tags --always 2>/dev/null || echo '?') in $dest" >&2
