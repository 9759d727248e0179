#!/usr/bin/env bash
# fetch-data.sh — puts the Chinook sample database at data/chinook.sqlite:
# copied from the shared inputs folder when it exists, otherwise downloaded
# from the Chinook project's published file; its sha256 is checked either way.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
dest="$root/data/chinook.sqlite"
sha=7651ba378ac2fcd0dfc3c66fb101f7a7eed3ba39a612ec642b96e20702061f15
url=https://github.com/lerocha/chinook-database/raw/7f67772503d71ba90f19283c38e93923addb43fa/ChinookDatabase/DataSources/Chinook_Sqlite.sqlite
shared=${TABLETALK_SHARED_DIR:-$root/../shared}

check() { echo "$sha  $1" | sha256sum -c --status 2>/dev/null; }

if [ -f "$dest" ] && check "$dest"; then exit 0; fi
mkdir -p "$root/data"
tmp="$dest.part"
if [ -f "$shared/data/chinook.sqlite" ]; then
  cp "$shared/data/chinook.sqlite" "$tmp"
else
  echo "fetch-data.sh: downloading the Chinook sample database" >&2
  if command -v curl >/dev/null 2>&1; then
    curl -fsSL --retry 3 -o "$tmp" "$url"
  elif command -v wget >/dev/null 2>&1; then
    wget -q -O "$tmp" "$url"
  else
    echo "fetch-data.sh: need curl or wget to download $url (apt-get install curl)" >&2
    exit 1
  fi
fi
if ! check "$tmp"; then
  rm -f "$tmp"
  echo "fetch-data.sh: chinook.sqlite does not have the expected sha256 $sha" >&2
  exit 1
fi
chmod a-w "$tmp"
mv -f "$tmp" "$dest"
