// agent_time.mjs — the agent's own time (bench/run.py's `agent` part):
// `tabletalk ask DB QUESTION --base-url URL` against the scripted model
// server (tests/fixtures/model_server.mjs), which answers at once: one
// run_sql call, then the answer. Per run it takes, on Node's clock, the
// time from spawning tabletalk to the first model request's arrival, and
// the whole run's wall time less the time the server spent answering
// (the question's overhead outside the model). The spawn of /bin/true is
// measured alike, as the floor that any program pays here. Prints JSON:
// {"BIN": {"first_request_ms": [...], "overhead_ms": [...]}, ..., "true_ms": [...]}.
// Several builds (BIN,BIN2) alternate in one run, for before and after.
//
//   node bench/agent_time.mjs BIN[,BIN2...] DB RUNS [STATE_DIR]

import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startModelServer } from '../tests/fixtures/model_server.mjs';

const [binsArg, db, runsArg, stateArg] = process.argv.slice(2);
const runs = Number(runsArg || 20);
const state = stateArg || fs.mkdtempSync(path.join(os.tmpdir(), 'tt-agent-bench-'));
const now = () => Number(process.hrtime.bigint()) / 1e6;

const srv = await startModelServer({
  rules: [
    { when: { step: 0 }, tool: 'run_sql', args: { sql: 'SELECT COUNT(*) AS n FROM Genre' } },
    { tool: 'answer', args: { text: 'There are 25 genres.' } },
  ],
});

// Every arrival and answer, stamped when the server notes it.
let seen = new Map(); // entry -> {arrived, answered}
srv.until((s) => {
  const t = now();
  for (const e of s.requests) {
    if (!seen.has(e)) seen.set(e, { arrived: t, answered: null });
    const m = seen.get(e);
    if ((e.answered || e.disconnected) && m.answered === null) m.answered = t;
  }
  return false;
}).catch(() => { /* the server closes at the end */ });

function once(file, args) {
  return new Promise((resolve, reject) => {
    const t0 = now();
    const env = { ...process.env, NO_COLOR: '1', TABLETALK_API_KEY: '', TABLETALK_MODEL: '' };
    const child = spawn(file, args, { env, stdio: ['ignore', 'ignore', 'pipe'] });
    let err = '';
    child.stderr.on('data', (d) => { err += d; });
    child.on('error', reject);
    child.on('close', (code) => {
      if (code !== 0) reject(new Error(`${file} ${args.join(' ')}: exit ${code}: ${err}`));
      else resolve({ t0, t1: now() });
    });
  });
}

const bins = binsArg.split(',');
const question = ['ask', db, 'How many genres are there?', '--base-url', srv.url, '--state-dir', state];
const out = { true_ms: [], requests: 0 };
for (const bin of bins) {
  out[bin] = { first_request_ms: [], overhead_ms: [] };
  await once(bin, question); // warms the catalog cache and the page cache
}
for (let r = 0; r < runs; r++) {
  for (const bin of r % 2 ? [...bins].reverse() : bins) {
    seen = new Map(srv.requests.map((e) => [e, { arrived: 0, answered: 0 }]));
    const before = srv.requests.length;
    const { t0, t1 } = await once(bin, question);
    const mine = [...seen.entries()].filter(([e]) => srv.requests.indexOf(e) >= before).map(([, m]) => m);
    if (!mine.length) throw new Error('tabletalk made no model request');
    const inModel = mine.reduce((a, m) => a + ((m.answered ?? t1) - m.arrived), 0);
    out[bin].first_request_ms.push(mine[0].arrived - t0);
    out[bin].overhead_ms.push(t1 - t0 - inModel);
    out.requests = mine.length;
  }
  const tr = await once('/bin/true', []);
  out.true_ms.push(tr.t1 - tr.t0);
}
await srv.close();
console.log(JSON.stringify(out));
