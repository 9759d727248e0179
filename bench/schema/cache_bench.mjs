// cache_bench.mjs — what the catalog cache buys at start-up, for one or more
// tabletalk binaries side by side (interleaved runs, medians; wall time, so
// compare binaries within one run on a loaded machine):
//
//   schema cold      `tabletalk schema DB` with an empty cache folder
//   schema warm      the same again (the cache filled)
//   question warm    `tabletalk schema DB --question Q`, warm
//   first request    `tabletalk ask DB Q` from spawn until the first model
//                    request reaches a scripted model server, warm
//   mcp tools/list   `tabletalk serve-mcp SMALL_DB` from spawn until
//                    initialize and tools/list are answered, warm
//
//   node bench/schema/cache_bench.mjs DB SMALL_DB [--runs N] [--question Q] BIN...
//
// Each binary gets cache folders of its own. Node.js 20, no npm packages.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const { startModelServer } = await import(path.join(here, '../../tests/fixtures/model_server.mjs'));

const argv = process.argv.slice(2);
const opt = (name, dflt) => { const i = argv.indexOf(name); return i >= 0 ? argv.splice(i, 2)[1] : dflt; };
const RUNS = Number(opt('--runs', 7));
const QUESTION = opt('--question', 'Which employees work in the Rotterdam office?');
const [db, small, ...bins] = argv;
if (!db || !small || !bins.length) {
  console.error('usage: node cache_bench.mjs DB SMALL_DB [--runs N] [--question Q] BIN...');
  process.exit(2);
}
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'tt-cache-bench-'));
const env = (cache) => ({ ...process.env, NO_COLOR: '1', TABLETALK_CACHE_DIR: cache,
  TABLETALK_STATE_DIR: path.join(tmp, 'state'), TABLETALK_BASE_URL: '', TABLETALK_MODEL_PATH: '' });

/* Milliseconds from spawn to exit. */
function timed(bin, args, cache, extra = {}) {
  return new Promise((resolve, reject) => {
    const t0 = process.hrtime.bigint();
    const child = spawn(bin, args, { env: { ...env(cache), ...extra }, stdio: ['ignore', 'ignore', 'ignore'] });
    child.on('error', reject);
    child.on('close', () => resolve(Number(process.hrtime.bigint() - t0) / 1e6));
  });
}

/* Milliseconds from spawning ask until the model server sees its first request. */
async function firstRequest(bin, cache, srv) {
  const before = srv.requests.length;
  const t0 = process.hrtime.bigint();
  const child = spawn(bin, ['ask', db, QUESTION, '--base-url', srv.url, '--quiet'],
    { env: env(cache), stdio: ['ignore', 'ignore', 'ignore'] });
  await srv.until((s) => s.requests.length > before);
  const ms = Number(process.hrtime.bigint() - t0) / 1e6;
  await new Promise((resolve) => child.on('close', resolve));
  return ms;
}

/* Milliseconds from spawning serve-mcp until tools/list is answered. */
function mcpToolsList(bin, cache) {
  return new Promise((resolve, reject) => {
    const t0 = process.hrtime.bigint();
    const child = spawn(bin, ['serve-mcp', small], { env: env(cache), stdio: ['pipe', 'pipe', 'ignore'] });
    let out = '';
    child.on('error', reject);
    child.stdout.on('data', (d) => {
      out += d;
      if (/"id":2\b/.test(out)) {
        const ms = Number(process.hrtime.bigint() - t0) / 1e6;
        child.stdin.end();
        child.on('close', () => resolve(ms));
      }
    });
    const send = (m) => child.stdin.write(JSON.stringify({ jsonrpc: '2.0', ...m }) + '\n');
    send({ id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {},
      clientInfo: { name: 'cache-bench', version: '1' } } });
    send({ method: 'notifications/initialized' });
    send({ id: 2, method: 'tools/list', params: {} });
  });
}

const median = (a) => { const b = [...a].sort((x, y) => x - y); return b[Math.floor(b.length / 2)]; };
const srv = await startModelServer({ fallback: { tool: 'answer', args: { text: 'done' } } });
const rows = {};
for (const bin of bins) {
  rows[bin] = { cold: [], warm: [], question: [], first: [], mcp: [] };
  const warm = path.join(tmp, `warm-${bins.indexOf(bin)}`);
  const whole = { TABLETALK_SCHEMA_SECONDS: '0' }; // fill it whole: catalog and values
  await timed(bin, ['schema', db, '--question', QUESTION], warm, whole);
  await timed(bin, ['schema', small, '--question', QUESTION], warm, whole);
}
for (let r = 0; r < RUNS; r++) {
  for (const bin of bins) {
    const k = bins.indexOf(bin), warm = path.join(tmp, `warm-${k}`), cold = path.join(tmp, `cold-${k}-${r}`);
    rows[bin].cold.push(await timed(bin, ['schema', db], cold));
    rows[bin].warm.push(await timed(bin, ['schema', db], warm));
    rows[bin].question.push(await timed(bin, ['schema', db, '--question', QUESTION], warm));
    rows[bin].first.push(await firstRequest(bin, warm, srv));
    rows[bin].mcp.push(await mcpToolsList(bin, warm));
  }
}
await srv.close();
console.log(`${RUNS} runs each, interleaved, medians in ms; ${db}, MCP on ${small}; load ${os.loadavg()[0].toFixed(1)}`);
console.log(['binary', 'schema cold', 'schema warm', 'question warm', 'ask first request', 'mcp tools/list'].join(' | '));
for (const bin of bins) {
  const x = rows[bin];
  console.log([bin, ...[x.cold, x.warm, x.question, x.first, x.mcp].map((a) => median(a).toFixed(1))].join(' | '));
}
fs.rmSync(tmp, { recursive: true, force: true });
