#!/usr/bin/env bash
# demo.sh BINARY — the README's main-job command: asks the sample database
# a question. With a model set up (a model `tabletalk pull` installed,
# TABLETALK_MODEL_PATH or TABLETALK_BASE_URL, in the environment or ./.env;
# `tabletalk models --which` decides, as ask does) the real model answers.
# With none, a scripted stand-in model (tests/fixtures/model_server.mjs with
# scripts/demo-model.json) plays its part so that everything else — prompt,
# guarded SQL, answer — runs for real, and the one command that gets a real
# model is printed.
set -euo pipefail
bin=$1
root="$(cd "$(dirname "$0")/.." && pwd)"
db="$root/data/chinook.sqlite"
question="Which 3 genres have the most tracks?"

if model=$("$bin" models --which 2>/dev/null); then
  echo "Model: ${model%%$'\t'*} (${model#*$'\t'})"
  echo
  echo "\$ tabletalk ask data/chinook.sqlite \"$question\""
  exec "$bin" ask "$db" "$question"
fi

command -v node >/dev/null 2>&1 || {
  echo "demo.sh: no model is set up, and the scripted stand-in needs node (apt-get install nodejs)." >&2
  echo "Get a real model with: $bin pull" >&2
  exit 2
}
log=$(mktemp)
state=$(mktemp -d)
ready=$(mktemp -d)
mkfifo "$ready/line"
# its first stdout line, "listening URL", comes through a fifo: read waits
# for exactly that (or the end, if it fails to start)
node "$root/tests/fixtures/model_server.mjs" "$root/scripts/demo-model.json" >"$ready/line" 2>"$log" &
server=$!
trap 'kill $server 2>/dev/null; rm -rf "$log" "$state" "$ready"' EXIT
line=
read -r line <"$ready/line" || true
url=${line#listening }
[ "$url" != "$line" ] || url=
[ -n "$url" ] || { echo "demo.sh: the stand-in model did not start: $(cat "$log")" >&2; exit 1; }
echo "(No model is set up, so a scripted stand-in plays the model; the prompt, the"
echo " guarded SQL and the answer all run for real.)"
echo
echo "\$ tabletalk ask data/chinook.sqlite \"$question\""
"$bin" ask "$db" "$question" --base-url "$url" --state-dir "$state"
echo
echo "\$ tabletalk sql data/chinook.sqlite \"DELETE FROM Track\""
rc=0
"$bin" sql "$db" "DELETE FROM Track" || rc=$?
[ "$rc" -eq 3 ] || { echo "demo.sh: the write should have been refused (exit 3), not exit $rc" >&2; exit 1; }
echo "(exit 3: refused; the file is unchanged)"
echo
echo "To ask your own questions with a real model, download the default one (about 4.7 GB):"
echo "  $bin pull"
