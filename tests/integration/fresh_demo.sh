#!/usr/bin/env bash
# fresh_demo.sh SOURCE_DIR — proves the README's main command on a machine
# without the test packages: configures and builds the program in a new
# build folder with a pkg-config search path that lacks cmocka (the one
# package only the tests need that pkg-config could find), then runs
# `make demo` against it with no model set up (a fresh HOME, no TABLETALK_*
# variables), and checks what a new user would see: the scripted stand-in's
# answer from the real query, the refused write, the command that gets a
# real model, and that no test was configured.
set -euo pipefail
src=$1
work=$(mktemp -d "${TMPDIR:-/tmp}/tabletalk-fresh-XXXXXX")
trap 'rm -rf "$work"' EXIT

mkdir "$work/pc" "$work/home"
for d in /usr/lib/x86_64-linux-gnu/pkgconfig /usr/lib/pkgconfig /usr/share/pkgconfig; do
  [ -d "$d" ] || continue
  for f in "$d"/*.pc; do
    [ "$(basename "$f")" = cmocka.pc ] || ln -sf "$f" "$work/pc/"
  done
done
if PKG_CONFIG_LIBDIR="$work/pc" pkg-config --exists cmocka; then
  echo "FAIL: cmocka is still visible to pkg-config; the test would prove nothing" >&2
  exit 1
fi

for v in $(env | sed -n 's/^\(TABLETALK_[A-Z_]*\)=.*/\1/p'); do unset "$v"; done
unset XDG_DATA_HOME XDG_STATE_HOME XDG_CACHE_HOME XDG_CONFIG_HOME MAKEFLAGS MFLAGS MAKELEVEL
export HOME="$work/home" PKG_CONFIG_LIBDIR="$work/pc" NO_COLOR=1

status=0
make -C "$src" demo BUILD="$work/build" >"$work/out" 2>&1 || status=$?
if [ "$status" -ne 0 ]; then
  echo "FAIL: make demo exited with $status:" >&2
  tail -n 40 "$work/out" >&2
  exit 1
fi

fail=0
expect() { # expect REGEX WHAT
  grep -Eq "$1" "$work/out" || { echo "FAIL: make demo's output lacks $2 (/$1/)" >&2; fail=1; }
}
expect 'scripted stand-in plays the model' 'the notice that a stand-in plays the model'
expect 'Rock +\| +1297' 'the real row Rock 1297 from chinook'
expect 'Metal +\| +374' 'the real row Metal 374 from chinook'
expect 'refused: writes are not allowed: DELETE on Track' 'the refused write'
expect 'build/tabletalk pull|/tabletalk pull$' 'the command that gets a real model'
[ -x "$work/build/tabletalk" ] || { echo "FAIL: no tabletalk binary in $work/build" >&2; fail=1; }
if [ -e "$work/build/tests" ]; then
  echo "FAIL: the program's build configured the tests ($work/build/tests exists)" >&2
  fail=1
fi
if [ "$fail" -ne 0 ]; then
  echo "--- make demo output ---" >&2
  cat "$work/out" >&2
  exit 1
fi
echo "make demo built and ran without the test packages"
