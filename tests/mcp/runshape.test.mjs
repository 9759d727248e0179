// The one JSON shape of a run (docs/reference/run-json.md): the same scripted
// question asked through `tabletalk ask --json` and through the MCP
// ask_database tool, with the run_end event of each one's trace. The CLI
// output and its trace's run_end are identical; so are the MCP
// structuredContent and its trace's run_end; and the CLI and MCP objects
// have the same keys in the same order and the same values, except what
// names the run (ids, files) and what the clock says.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import { BIN, FAIL_AFTER, RawStdio, scratch, testEnv, startModel } from '../support/harness.mjs';
import { connectStdio, modernRequest, serveArgs } from './protocol.mjs';


const PER_YEAR_SQL = "SELECT strftime('%Y', InvoiceDate) AS year, count(*) AS invoices FROM Invoice GROUP BY year ORDER BY year";
const TOP_SQL = 'SELECT Name FROM Genre ORDER BY GenreId LIMIT 3';
const CLARIFY_Q = 'Which year do you mean?';
const SCRIPT = {
  rules: [
    { name: 'sql', when: { question: 'invoices per year', step: 0 }, tool: 'run_sql', args: { sql: PER_YEAR_SQL } },
    { name: 'chart', when: { question: 'invoices per year', step: 1 }, tool: 'make_chart', args: { kind: 'bar', x: 'year', y: 'invoices', title: 'Invoices per year' } },
    { name: 'answer', when: { question: 'invoices per year', step: 2 }, tool: 'answer', args: { text: 'There are about 83 invoices a year, and 9999 in the best one.' } },
    { name: 'recheck', when: { question: 'invoices per year', step: 3 }, tool: 'answer', args: { text: 'There are about 83 invoices a year, and 9999 in the best one.' } },
    { name: 'genres', when: { question: 'three genres', step: 0 }, tool: 'run_sql', args: { sql: TOP_SQL } },
    { name: 'genres-answer', when: { question: 'three genres', step: 1 }, tool: 'answer', args: { text: 'Rock, Jazz and Metal.' } },
    { name: 'clarify', when: { question: 'revenue' }, tool: 'ask_user', args: { question: CLARIFY_Q } },
    { name: 'cite', when: { question: 'Cite the top genre', step: 0 }, tool: 'run_sql', args: { sql: TOP_SQL } },
    { name: 'cite-answer', when: { question: 'Cite the top genre', step: 1 }, tool: 'answer', args: { text: 'It is {{q1.r1.Name}}.' } },
  ],
};

let model;
before(async () => { model = await startModel(SCRIPT); });
after(async () => { await model?.close(); });

/* (asynchronous: the scripted model answers from this process) */
function cliAsk(sc, question) {
  return new Promise((resolve, reject) => {
    const child = spawn(BIN, ['ask', sc.db, question, '--base-url', model.url, '--state-dir', sc.state, '--json'],
      { env: testEnv(), cwd: sc.dir });
    let stdout = '', stderr = '';
    child.stdout.on('data', (d) => { stdout += d; });
    child.stderr.on('data', (d) => { stderr += d; });
    const timer = setTimeout(() => child.kill('SIGKILL'), FAIL_AFTER);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      try {
        assert.equal(code, 0, stderr);
        resolve(JSON.parse(stdout));
      } catch (e) { reject(e); }
    });
  });
}

/* The run_end event of a trace, without what only an event has. */
function runEnd(file) {
  const events = fs.readFileSync(file, 'utf8').trim().split('\n').map((l) => JSON.parse(l));
  const { event, ts, ...end } = events.at(-1);
  assert.equal(event, 'run_end');
  return end;
}

/* What differs between two runs of the same script: ids, files, clocks,
 * the tokens the scripted server says it had cached (it remembers prompts
 * across runs), and the prompt tokens it counts (its tool-call ids grow
 * across runs: call_9 in one run, call_11 in the next). */
function comparable(run) {
  const c = structuredClone(run);
  for (const k of ['run_id', 'thread_id', 'trace', 'elapsed_ms']) if (k in c) c[k] = typeof c[k];
  for (const k of Object.keys(c.totals)) if (k.endsWith('_ms') || k === 'cached_tokens' || k === 'prompt_tokens') c.totals[k] = typeof c.totals[k];
  for (const ch of c.charts) ch.file = typeof ch.file;
  return c;
}

const deepKeys = (o) => (o && typeof o === 'object' && !Array.isArray(o)
  ? Object.entries(o).map(([k, v]) => [k, deepKeys(v)]) : null);

for (const question of ['Plot the invoices per year', 'Name three genres', 'What was the revenue?']) {
  test(`one shape for "${question}": ask --json, MCP structuredContent and the trace's run_end`, async () => {
    const sc = scratch();
    const cli = await cliAsk(sc, question);
    assert.deepEqual(runEnd(cli.trace), cli, 'the CLI output is its trace\'s run_end');

    const mcp = await connectStdio(sc, { model });
    const res = await mcp.client.callTool({ name: 'ask_database', arguments: { question } });
    await mcp.close();
    const s = res.structuredContent;
    assert.ok(s.trace, 'the MCP run has a trace');
    assert.deepEqual(runEnd(s.trace), s, 'the MCP structuredContent is its trace\'s run_end');

    assert.deepEqual(deepKeys(s), deepKeys(cli), 'the same keys in the same order');
    assert.deepEqual(comparable(s), comparable(cli), 'the same values');
    assert.ok(sc.unchanged());
  });
}

test('the documented fields are the fields', async () => {
  const doc = fs.readFileSync(new URL('../../docs/reference/run-json.md', import.meta.url), 'utf8');
  const sc = scratch();
  const run = await cliAsk(sc, 'Plot the invoices per year');
  for (const k of Object.keys(run)) assert.match(doc, new RegExp(`\\| \`${k}\` \\|`), `docs/reference/run-json.md documents ${k}`);
  for (const k of Object.keys(run.totals)) assert.match(doc, new RegExp(`\\| \`totals.${k}\` \\|`), `docs/reference/run-json.md documents totals.${k}`);
  for (const k of Object.keys(run.charts[0])) assert.match(doc, new RegExp(`\\| \`charts\\[\\].${k}\` \\|`), `docs/reference/run-json.md documents charts[].${k}`);
  const cited = await cliAsk(scratch(), 'Cite the top genre');
  assert.ok(cited.facts.length > 0);
  for (const k of Object.keys(cited.facts[0])) assert.match(doc, new RegExp(`\\| \`facts\\[\\].${k}\` \\|`), `docs/reference/run-json.md documents facts[].${k}`);
  assert.equal(run.status, 'answered');
  assert.equal(run.rows.length, run.row_count);
  assert.deepEqual(run.unbacked_numbers, ['9999']);
  assert.equal(run.verified, 'unbacked');
});

/* The events of a trace file, as written. */
function traceLines(file) {
  return fs.readFileSync(file, 'utf8').trim().split('\n').map((l) => JSON.parse(l));
}

/* One event stream (docs/reference/events.md): MCP progress carries each
 * event of the question under _meta["tabletalk/event"], and those are the
 * trace's events key by key and value by value; the summary in "message"
 * is for people. The trace's run_start and run_end are the question's
 * edges, which the tool's result stands for. */
test('MCP progress carries the trace\'s events, key by key', async () => {
  const sc = scratch();
  const raw = new RawStdio(serveArgs(sc, { model }), { cwd: sc.dir });
  const call = modernRequest(1, 'tools/call', { name: 'ask_database', arguments: { question: 'Plot the invoices per year' } });
  call.params._meta.progressToken = 'ev';
  const res = await raw.request(call, { timeout: FAIL_AFTER });
  assert.equal(res.result.structuredContent.status, 'answered');
  const progress = raw.messages.filter((m) => m && m.method === 'notifications/progress' && m.params.progressToken === 'ev');
  await raw.close();
  const sent = progress.map((p) => p.params._meta['tabletalk/event']);
  for (const p of progress) assert.equal(typeof p.params.message, 'string');
  const traced = traceLines(res.result.structuredContent.trace).filter((e) => e.event !== 'run_start' && e.event !== 'run_end');
  assert.ok(traced.some((e) => e.event === 'sql') && traced.some((e) => e.event === 'chart'));
  assert.deepEqual(sent, traced);
  assert.ok(sc.unchanged());
});

/* Every key of every event a scripted run traces is documented under its
 * event's heading in docs/reference/events.md. */
test('the documented events are the events', async () => {
  const doc = fs.readFileSync(new URL('../../docs/reference/events.md', import.meta.url), 'utf8');
  const section = (name) => {
    const at = doc.indexOf(`## \`${name}\``);
    assert.ok(at >= 0, `events.md has a section for ${name}`);
    const next = doc.indexOf('\n## ', at + 1);
    return doc.slice(at, next < 0 ? undefined : next);
  };
  const common = doc.slice(0, doc.indexOf('\n## '));
  const sc = scratch();
  const seen = new Set();
  for (const q of ['Plot the invoices per year', 'What was the revenue?']) {
    const run = await cliAsk(sc, q);
    for (const e of traceLines(run.trace)) {
      seen.add(e.event);
      if (e.event === 'run_end') continue; /* run-json.md documents those */
      const text = section(e.event);
      for (const k of Object.keys(e)) {
        if (['ts', 'run_id', 'event', 'step'].includes(k)) assert.match(common, new RegExp(`\`${k}\``));
        else assert.ok(text.includes(`\`${k}\``), `events.md documents ${e.event}.${k}`);
      }
    }
  }
  for (const name of ['run_start', 'model_wait', 'model_call', 'sql', 'chart', 'verify', 'answer', 'clarification', 'run_end'])
    assert.ok(seen.has(name), `the scripted runs produced ${name}`);
});
