#!/usr/bin/env bash
# demo.sh BINARY — the README's main-job command: asks the sample database
# a question. With a model configured (TABLETALK_BASE_URL in the environment
# or ./.env) the real model answers; without one, a scripted stand-in model
# (tests/fixtures/model_server.mjs with scripts/demo-model.json) plays its
# part so that everything else — prompt, guarded SQL, answer — runs for real.
set -euo pipefail
bin=$1
root="$(cd "$(dirname "$0")/.." && pwd)"
db="$root/data/chinook.sqlite"
question="Which 3 genres have the most tracks?"

configured=${TABLETALK_BASE_URL:-}
if [ -z "$configured" ] && [ -f .env ]; then configured=$(grep -E '^(export )?TABLETALK_BASE_URL=' .env || true); fi

if [ -n "$configured" ]; then
  echo "\$ tabletalk ask data/chinook.sqlite \"$question\""
  exec "$bin" ask "$db" "$question"
fi

command -v node >/dev/null 2>&1 || { echo "demo.sh: no model configured and no node for the stand-in; set TABLETALK_BASE_URL" >&2; exit 2; }
log=$(mktemp)
node "$root/tests/fixtures/model_server.mjs" "$root/scripts/demo-model.json" >"$log" 2>&1 &
server=$!
trap 'kill $server 2>/dev/null; rm -f "$log"' EXIT
for _ in $(seq 50); do grep -q '^listening' "$log" && break; sleep 0.1; done
url=$(sed -n 's/^listening //p' "$log")
[ -n "$url" ] || { echo "demo.sh: the stand-in model did not start: $(cat "$log")" >&2; exit 1; }
echo "(No model configured: a scripted stand-in plays the model; the SQL runs for real."
echo " Point TABLETALK_BASE_URL at an OpenAI-compatible endpoint to ask your own questions.)"
echo
echo "\$ tabletalk ask data/chinook.sqlite \"$question\""
state=$(mktemp -d)
"$bin" ask "$db" "$question" --base-url "$url" --state-dir "$state"
echo
echo "\$ tabletalk sql data/chinook.sqlite \"DELETE FROM Track\""
"$bin" sql "$db" "DELETE FROM Track" || echo "(exit $?: refused; the file is unchanged)"
rm -rf "$state"
