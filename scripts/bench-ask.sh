#!/usr/bin/env bash
# bench-ask.sh [N] — the program's own time per question, model time
# excluded: N `tabletalk ask` runs on chinook against the scripted model
# server (which answers at once), then the median and p90 of the traces'
# own_ms (start-up, prompt, SQL, trace and thread writes; everything but
# waiting for the model), plus the whole process wall time for scale.
set -euo pipefail
n=${1:-50}
root=$(cd "$(dirname "$0")/.." && pwd)
bin="$root/build/tabletalk"
state=$(mktemp -d)
log=$(mktemp)
mkfifo "$state.line"
# the server's first line, "listening URL", read from a fifo as it comes
node "$root/tests/fixtures/model_server.mjs" "$root/scripts/demo-model.json" >"$state.line" 2>"$log" &
server=$!
trap 'kill $server 2>/dev/null; rm -rf "$state" "$state.line" "$log"' EXIT
line=
read -r line <"$state.line" || true
url=${line#listening }
start=$(date +%s%N)
for _ in $(seq "$n"); do
  "$bin" ask "$root/data/chinook.sqlite" "Which 3 genres have the most tracks?" \
    --base-url "$url" --state-dir "$state" --quiet >/dev/null
done
end=$(date +%s%N)
node -e '
const fs = require("fs"), dir = process.argv[1] + "/runs";
const own = [], start = [], llm = [];
for (const f of fs.readdirSync(dir)) {
  const ev = fs.readFileSync(dir + "/" + f, "utf8").trim().split("\n").map(JSON.parse);
  const s = ev.find((e) => e.event === "run_start"), e = ev.find((e) => e.event === "run_end");
  own.push(e.totals.own_ms); start.push(s.startup_ms); llm.push(e.totals.llm_ms);
}
const q = (a, p) => { const b = [...a].sort((x, y) => x - y); return b[Math.min(b.length - 1, Math.floor(p * b.length))]; };
console.log(`${own.length} questions: own time median ${q(own, 0.5).toFixed(2)} ms, p90 ${q(own, 0.9).toFixed(2)} ms ` +
            `(start-up median ${q(start, 0.5).toFixed(2)} ms; waiting for the model median ${q(llm, 0.5).toFixed(2)} ms)`);
' "$state"
echo "whole process, model included: $(( (end - start) / n / 1000 )) us per question"
