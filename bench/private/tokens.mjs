// tokens.mjs — prompt tokens per question in private mode and outside it,
// with the scripted model (tests/fixtures/model_server.mjs, which counts a
// request's tokens as its JSON's characters / 4: a proxy, the same for both
// modes). Two sets:
//   chinook: the behaviour suite (`eval behaviors`, 18 cases, 19 questions)
//            with tests/fixtures/behaviours.json and behaviours_private.json;
//   large:   the schema generator's database and questions
//            (python3 bench/schema/gen.py --out DIR --seed S), each question
//            answered by a query of its first table (30 rows) and an answer
//            citing its row count.
// Prints one line per set and mode: questions, model calls, prompt tokens
// per question (mean), the first call's prompt tokens (system prompt, tools
// and question), and the behaviour suite's result.
//
//   node bench/private/tokens.mjs [--chinook data/chinook.sqlite] [--large DIR]
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startModelServer } from '../../tests/fixtures/model_server.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '../..');
const BIN = process.env.TT_BIN ?? path.join(root, 'build/tabletalk');
const arg = (name, def) => { const i = process.argv.indexOf(name); return i > 0 ? process.argv[i + 1] : def; };
const chinook = arg('--chinook', path.join(root, 'data/chinook.sqlite'));
const large = arg('--large', null);

const tmp = () => fs.mkdtempSync(path.join(os.tmpdir(), 'tt-private-bench-'));
/* one home for every run, so that the value index is built once per database */
const HOME = tmp();
/* (asynchronous: the scripted model answers from this process) */
const tt = (args) => new Promise((resolve) => {
  const child = spawn(BIN, args, { env: { ...process.env, HOME, XDG_CACHE_HOME: path.join(HOME, 'cache'), NO_COLOR: '1' } });
  let stdout = '';
  child.stdout.on('data', (d) => { stdout += d; });
  child.on('close', () => resolve({ stdout }));
});

/* Per question: model calls and prompt tokens, from the run_end events. */
function perQuestion(state) {
  const runs = path.join(state, 'runs');
  const out = [];
  for (const f of fs.readdirSync(runs)) {
    const lines = fs.readFileSync(path.join(runs, f), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
    const end = lines.find((e) => e.event === 'run_end');
    const calls = lines.filter((e) => e.event === 'model_call');
    if (end) out.push({ calls: end.totals.llm_calls, prompt: end.totals.prompt_tokens, first: calls[0]?.input_tokens ?? 0 });
  }
  return out;
}

function line(set, mode, rows, extra = '') {
  const n = rows.length, sum = (k) => rows.reduce((s, r) => s + r[k], 0);
  const first = rows.filter((r) => r.first > 0);
  console.log([set.padEnd(8), mode.padEnd(8), String(n).padStart(3), String(sum('calls')).padStart(5),
    (sum('prompt') / n).toFixed(0).padStart(8), (first.reduce((s, r) => s + r.first, 0) / (first.length || 1)).toFixed(0).padStart(8), extra].join('  '));
}

async function suite(priv) {
  const script = JSON.parse(fs.readFileSync(path.join(root, 'tests/fixtures', priv ? 'behaviours_private.json' : 'behaviours.json'), 'utf8'));
  const srv = await startModelServer(script);
  const state = tmp();
  const r = await tt(['eval', 'behaviors', '--db', chinook, '--base-url', srv.url, '--state-dir', state, '--json', ...(priv ? ['--private'] : [])]);
  await srv.close();
  const j = JSON.parse(r.stdout);
  line('chinook', priv ? 'private' : 'normal', perQuestion(state), `behaviours ${j.passed}/${j.cases.length} passed`);
}

async function largeSet(priv) {
  const qs = fs.readFileSync(path.join(large, 'questions.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
  const esc = (s) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const rules = qs.flatMap((q) => [
    { when: { question: `^${esc(q.question)}`, step: 0 }, tool: 'run_sql', args: { sql: `SELECT * FROM "${q.tables[0]}" LIMIT 30` } },
    { when: { question: `^${esc(q.question)}`, step: 1 }, tool: 'answer', args: { text: 'It has {{q1.count}} rows.' } },
  ]);
  const srv = await startModelServer({ rules });
  const state = tmp();
  let bound = 0;
  for (const q of qs) {
    const r = await tt(['ask', path.join(large, 'schema.sqlite'), q.question, '--base-url', srv.url, '--state-dir', state, '--json', ...(priv ? ['--private'] : [])]);
    if (JSON.parse(r.stdout).verified === 'bound') bound++;
  }
  await srv.close();
  line('large', priv ? 'private' : 'normal', perQuestion(state), `${bound}/${qs.length} bound`);
}

console.log('set       mode        q  calls  prompt/q  first/q');
await suite(false);
await suite(true);
if (large) {
  await largeSet(false);
  await largeSet(true);
}
