// measure.mjs — two figures of `tabletalk web` (issue 18): the time from
// the model's first token of the answer to the first byte of it reaching
// the page (a `text` event), and the server's memory (VmRSS) idle and with
// 10 question streams open at once. The model is a small OpenAI-compatible
// streaming server in this script, so both ends are timed on one clock.
//
//   node bench/web/measure.mjs [--bin build/tabletalk] [--db data/chinook.sqlite] [--n 20]
import http from 'node:http';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawn } from 'node:child_process';

const arg = (name, dflt) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : dflt;
};
const BIN = path.resolve(arg('bin', 'build/tabletalk'));
const DB = path.resolve(arg('db', 'data/chinook.sqlite'));
const N = Number(arg('n', '20'));
const PAUSE_MS = 200; // between the answer's first token and the rest

let firstTokenAt = 0; // when the model wrote the answer's first piece
const sse = (res, obj) => res.write(`data: ${JSON.stringify(obj)}\n\n`);
const chunk = (delta, finish = null) => ({ id: 'c', object: 'chat.completion.chunk', created: 0,
  model: 'bench', choices: [{ index: 0, delta, finish_reason: finish }] });
const call = (name, args) => ({ tool_calls: [{ index: 0, id: 'call_1', type: 'function',
  function: { name, arguments: args } }] });
const more = (args) => ({ tool_calls: [{ index: 0, function: { arguments: args } }] });

const model = http.createServer((req, res) => {
  let body = '';
  req.on('data', (d) => { body += d; });
  req.on('end', async () => {
    const msgs = JSON.parse(body).messages;
    const user = [...msgs].reverse().find((m) => m.role === 'user')?.content ?? '';
    res.writeHead(200, { 'Content-Type': 'text/event-stream' });
    if (user.includes('Hold')) await new Promise((r) => setTimeout(r, 8000)); // an open stream
    if (msgs.at(-1).role !== 'tool') {
      sse(res, chunk(call('run_sql', JSON.stringify({ sql: 'SELECT count(*) AS n FROM Customer' }))));
      sse(res, chunk({}, 'tool_calls'));
    } else {
      sse(res, chunk(call('answer', '{"text": "There')));
      firstTokenAt = performance.now();
      await new Promise((r) => setTimeout(r, PAUSE_MS));
      sse(res, chunk(more(' are 59 customers."}')));
      sse(res, chunk({}, 'tool_calls'));
    }
    res.write('data: [DONE]\n\n');
    res.end();
  });
});
await new Promise((r) => model.listen(0, '127.0.0.1', r));
const modelUrl = `http://127.0.0.1:${model.address().port}/v1`;

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tt-web-bench-'));
const db = path.join(dir, 'db.sqlite');
fs.copyFileSync(DB, db);
const token = 'bench-token-1234';
const web = spawn(BIN, ['web', db, '--port', '0', '--token', token, '--base-url', modelUrl,
  '--state-dir', path.join(dir, 'state')], { stdio: ['ignore', 'pipe', 'inherit'],
  env: { ...process.env, TABLETALK_DATA_DIR: path.join(dir, 'data'), TABLETALK_CACHE_DIR: path.join(dir, 'cache') } });
let out = '';
const port = await new Promise((resolve) => web.stdout.on('data', (d) => {
  out += d;
  const m = out.match(/http:\/\/127\.0\.0\.1:(\d+)\//);
  if (m) resolve(m[1]);
}));
const H = { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' };
const rss = () => Number(/VmRSS:\s+(\d+)/.exec(fs.readFileSync(`/proc/${web.pid}/status`, 'utf8'))[1]);

/* Asks; resolves with ms from the model's first answer token to the first text event. */
async function ttfb(question) {
  const r = await fetch(`http://127.0.0.1:${port}/api/ask`, { method: 'POST', headers: H,
    body: JSON.stringify({ question }) });
  const reader = r.body.getReader();
  const dec = new TextDecoder();
  let buf = '', at = null;
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buf += dec.decode(value, { stream: true });
    if (at === null && buf.includes('event: text\n')) at = performance.now() - firstTokenAt;
  }
  return at;
}

const rssIdle = rss();
const times = [];
for (let i = 0; i < N; i++) times.push(await ttfb(`How many customers? (${i})`));
times.sort((a, b) => a - b);
const pct = (p) => times[Math.min(times.length - 1, Math.floor(p * times.length))];

// 10 tabs: each loads nothing but holds a question stream open
const ctrl = new AbortController();
const open = [];
for (let i = 0; i < 10; i++) {
  open.push(fetch(`http://127.0.0.1:${port}/api/ask`, { method: 'POST', headers: H, signal: ctrl.signal,
    body: JSON.stringify({ question: `Hold ${i}` }) }).then((r) => r.body.getReader().read()).catch(() => {}));
}
await Promise.all(open); // every stream has sent its start event
await new Promise((r) => setTimeout(r, 500));
const rss10 = rss();
ctrl.abort();

console.log(`time to first byte of the answer after the model's first token (${N} questions): ` +
  `median ${pct(0.5).toFixed(2)} ms, p95 ${pct(0.95).toFixed(2)} ms, max ${times.at(-1).toFixed(2)} ms`);
console.log(`server VmRSS: ${rssIdle} kB idle at start, ${rss10} kB with 10 question streams open (after ${N} questions)`);
web.kill('SIGINT');
await new Promise((r) => web.on('close', r));
model.close();
fs.rmSync(dir, { recursive: true, force: true });
