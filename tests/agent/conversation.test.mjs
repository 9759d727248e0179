// The conversation as the endpoint sees it (a stable, append-only prompt;
// the request's shape), configuration precedence, the thread store under
// kill -9, chat over standard input, the trace command and plain output.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { ask, run, scratch, server, traceEvents, tempDir, waitForOutput } from '../support/harness.mjs';

const sql = (s) => ({ tool: 'run_sql', args: { sql: s } });
const answer = (text) => ({ tool: 'answer', args: { text } });
const twoStep = {
  rules: [
    { when: { step: 0 }, ...sql('SELECT count(*) FROM Artist') },
    { when: { step: 1 }, ...answer('275 artists.') },
  ],
};

test('the system prompt is byte-identical across calls and questions; messages are only appended', async () => {
  const sc = scratch();
  const srv = await server(twoStep);
  await ask(sc, srv, 'How many artists?');
  await ask(sc, srv, 'Count the artists again');
  await ask(sc, srv, 'And once more', ['--thread', 'x']);
  await srv.close();
  assert.equal(srv.requests.length, 6);
  const systems = srv.requests.map((r) => JSON.stringify(r.body.messages[0]));
  assert.ok(systems.every((s) => s === systems[0]), 'same system message in every request');
  assert.equal(srv.requests[0].body.messages[0].role, 'system');
  assert.match(srv.requests[0].body.messages[0].content, /# Table: Track \(3503 rows\)/);
  for (const [a, b] of [[0, 1], [2, 3], [4, 5]]) {
    const first = srv.requests[a].body.messages, second = srv.requests[b].body.messages;
    assert.deepEqual(second.slice(0, first.length), first, 'the second call extends the first');
    assert.equal(second.length, first.length + 2);
  }
  /* the raw bytes of the first message are identical too (prefix caching) */
  assert.ok(srv.requests[5].body.messages[0].content === srv.requests[0].body.messages[0].content);
});

test('the request: tools with schemas, tool_choice required, temperature 0, usage in the stream', async () => {
  const sc = scratch();
  const srv = await server(twoStep);
  const r = await ask(sc, srv, 'How many artists?', ['--model', 'qwen-test', '--seed', '7', '--max-tokens', '300']);
  await srv.close();
  assert.equal(r.code, 0);
  const body = srv.requests[0].body;
  assert.equal(body.model, 'qwen-test');
  assert.equal(body.tool_choice, 'required');
  assert.equal(body.temperature, 0);
  assert.equal(body.seed, 7);
  assert.equal(body.max_tokens, 300);
  assert.equal(body.stream, true);
  assert.deepEqual(body.stream_options, { include_usage: true });
  assert.deepEqual(body.tools.map((t) => t.function.name), ['run_sql', 'ask_user', 'answer', 'make_chart']);
  assert.deepEqual(body.tools[0].function.parameters.required, ['sql']);
  /* usage with cached prompt tokens reaches the totals and the trace */
  assert.ok(r.json.totals.prompt_tokens > 0);
  assert.ok(r.json.totals.cached_tokens > 0, 'the second call reuses the first one\'s prefix');
  const llm = traceEvents(r.json.trace).filter((e) => e.event === 'model_call');
  assert.equal(llm.length, 2);
  assert.equal(llm[0].tool, 'run_sql');
  assert.ok(llm[1].cached_tokens > 0);
  assert.equal(typeof llm[0].latency_ms, 'number');
});

test('configuration: flags over environment over ./.env; API key as a bearer token', async () => {
  const sc = scratch();
  const [a, b, c] = await Promise.all([server(twoStep), server(twoStep), server(twoStep)]);
  const cwd = tempDir();
  fs.writeFileSync(path.join(cwd, '.env'), `# local settings\nTABLETALK_BASE_URL=${a.url}\nexport TABLETALK_MODEL="from-dotenv"\nMY_KEY='s3cret'\n`);
  const base = ['ask', sc.db, 'How many artists?', '--state-dir', sc.state, '--json'];
  let r = await run([...base, '--api-key-env', 'MY_KEY'], { cwd });
  assert.equal(r.code, 0, r.stderr);
  r = await run(base, { cwd, env: { TABLETALK_BASE_URL: b.url, TABLETALK_API_KEY: 'envkey' } });
  assert.equal(r.code, 0);
  r = await run([...base, '--base-url', c.url, '--model', 'from-flag'], { cwd, env: { TABLETALK_BASE_URL: b.url } });
  assert.equal(r.code, 0);
  await Promise.all([a.close(), b.close(), c.close()]);
  assert.equal(a.requests.length, 2);
  assert.equal(b.requests.length, 2);
  assert.equal(c.requests.length, 2);
  assert.equal(a.requests[0].body.model, 'from-dotenv');
  assert.equal(a.requests[0].headers.authorization, 'Bearer s3cret');
  assert.equal(b.requests[0].headers.authorization, 'Bearer envkey');
  assert.equal(c.requests[0].body.model, 'from-flag');
});

test('no endpoint configured: the error says how to configure one', async () => {
  const sc = scratch();
  const r = await run(['ask', sc.db, 'hi', '--state-dir', sc.state], { cwd: tempDir() });
  assert.equal(r.code, 1);
  assert.match(r.stderr, /no model available: download one with `tabletalk pull`/);
  assert.match(r.stderr, /--model-path FILE\.gguf/);
  assert.match(r.stderr, /--base-url \/ TABLETALK_BASE_URL/);
});

test('usage errors exit 2', async () => {
  for (const args of [['ask'], ['ask', 'x.db'], ['ask', 'x.db', 'q', '--llm-timeout', 'soon'], ['chat'], ['trace']]) {
    const r = await run(args);
    assert.equal(r.code, 2, args.join(' '));
  }
});

test('the thread store survives kill -9 during a question', async () => {
  const sc = scratch();
  const srv = await server({
    rules: [
      { when: { question: 'hang' }, hang_ms: 60000, ...sql('SELECT 1') },
      { when: { step: 0 }, ...sql('SELECT count(*) FROM Artist') },
      { when: { step: 1 }, ...answer('275 artists.') },
    ],
  });
  const first = await ask(sc, srv, 'How many artists?', ['--thread', 't']);
  assert.equal(first.code, 0);
  const killed = await ask(sc, srv, 'hang now', ['--thread', 't'], {
    onSpawn: (child) => {
      srv.until((s) => s.requests.some((q) => JSON.stringify(q.body).includes('hang now')))
        .then(() => child.kill('SIGKILL'), () => {});
    },
  });
  assert.equal(killed.signal, 'SIGKILL');
  const after = await ask(sc, srv, 'How many artists now?', ['--thread', 't']);
  await srv.close();
  assert.equal(after.code, 0, after.stderr);
  const store = path.join(sc.state, 'threads.sqlite');
  assert.equal(execFileSync('sqlite3', [store, 'PRAGMA integrity_check']).toString().trim(), 'ok');
  const turns = execFileSync('sqlite3', [store, "SELECT question FROM turns WHERE thread = 't' ORDER BY seq"]).toString().trim().split('\n');
  assert.deepEqual(turns, ['How many artists?', 'How many artists now?']);
  /* the follow-up saw the first question */
  assert.match(JSON.stringify(srv.requests.at(-2).body.messages), /How many artists\?/);
});

test('chat over standard input: follow-ups, /sql, /new, /quit', async () => {
  const sc = scratch();
  const srv = await server({
    rules: [
      { when: { question: 'artists', step: 0 }, ...sql('SELECT count(*) FROM Artist') },
      { when: { question: 'artists', step: 1 }, ...answer('There are 275 artists.') },
      { when: { question: 'albums', step: 0, any: '275 artists' }, ...sql('SELECT count(*) FROM Album') },
      { when: { question: 'albums', step: 1 }, ...answer('And 347 albums.') },
      { when: { question: 'genres', step: 0, not_any: '275 artists' }, ...sql('SELECT count(*) FROM Genre') },
      { when: { question: 'genres', step: 1 }, ...answer('25 genres.') },
    ],
  });
  const input = 'How many artists?\nAnd albums?\n/sql\n/new\nHow many genres?\n/bogus\n/quit\nnever asked\n';
  const r = await run(['chat', sc.db, '--base-url', srv.url, '--state-dir', sc.state, '--quiet'], { input });
  await srv.close();
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /There are 275 artists\./);
  assert.match(r.stdout, /And 347 albums\./);
  assert.match(r.stdout, /SELECT count\(\*\) FROM Album\n/);
  assert.match(r.stdout, /new thread chat-chinook-/);
  assert.match(r.stdout, /25 genres\./);
  assert.match(r.stdout, /unknown command \/bogus/);
  assert.equal(srv.requests.length, 6, 'nothing after /quit');
});

test('trace latest, list and RUN_ID --json read the runs back', async () => {
  const sc = scratch();
  const srv = await server(twoStep);
  const r = await ask(sc, srv, 'How many artists?');
  await srv.close();
  const latest = await run(['trace', 'latest', '--state-dir', sc.state]);
  assert.equal(latest.code, 0);
  assert.match(latest.stdout, /question: How many artists\?/);
  assert.match(latest.stdout, /llm {2}-> run_sql/);
  assert.match(latest.stdout, /sql {2}SELECT count\(\*\) FROM Artist \(1 rows/);
  assert.match(latest.stdout, /answered in .* s \(model .* s, tabletalk .* ms\)/);
  const list = await run(['trace', 'list', '--state-dir', sc.state]);
  assert.match(list.stdout, new RegExp(`${r.json.run_id}\\s+answered`));
  const one = await run(['trace', r.json.run_id, '--json', '--state-dir', sc.state]);
  const events = JSON.parse(one.stdout);
  assert.deepEqual(events.map((e) => e.event), ['run_start', 'model_wait', 'model_call', 'sql', 'model_wait', 'model_call', 'verify', 'answer', 'run_end']);
  assert.equal(events[6].decision, 'verified', 'the answer "275 artists." is backed by the count');
  assert.equal(events[6].numbers_checked, 1);
  assert.deepEqual(events.filter((e) => e.event === 'model_call').map((e) => e.tool), ['run_sql', 'answer']);
  assert.equal(events[7].text, '275 artists.');
  assert.equal(events[3].rows, 1);
  assert.equal(events[3].ok, true);
  assert.equal(events[0].question, 'How many artists?');
  assert.equal(events.at(-1).totals.llm_calls, 2);
  const missing = await run(['trace', 'nope', '--state-dir', sc.state]);
  assert.equal(missing.code, 1);
  assert.match(missing.stderr, /no trace for run nope/);
});

test('plain output when not a terminal: answer, SQL, then a summary on stderr', async () => {
  const sc = scratch();
  const srv = await server(twoStep);
  const r = await run(['ask', sc.db, 'How many artists?', '--base-url', srv.url, '--state-dir', sc.state]);
  await srv.close();
  assert.equal(r.code, 0);
  assert.equal(r.stdout, 'Answer:\n275 artists.\n\nSQL:\nSELECT count(*) FROM Artist\n\nResult:\n count(*)\n----------\n      275\n1 row\n');
  assert.match(r.stderr, /llm -> run_sql \(\d+ ms, \d+\+\d+ tok/);
  assert.match(r.stderr, /sql SELECT count\(\*\) FROM Artist \(1 row, \d+ ms\)/);
  /* the footer counts queries, not the call that answers */
  assert.match(r.stderr, /2 LLM calls, 1 query, [\d,]+\+[\d,]+ tokens.*run \d{8}-\d{6}-[0-9a-f]{6}/);
});

test('Ctrl-C cancels the question being answered, not the chat', async () => {
  const sc = scratch();
  const srv = await server({
    rules: [
      { when: { question: 'slow' }, hang_ms: 60000, ...sql('SELECT 1') },
      { when: { question: 'artists', step: 0 }, ...sql('SELECT count(*) FROM Artist') },
      { when: { question: 'artists', step: 1 }, ...answer('There are 275 artists.') },
    ],
  });
  let child;
  const done = run(['chat', sc.db, '--base-url', srv.url, '--state-dir', sc.state, '--quiet'], {
    input: null,
    onSpawn: (c) => { child = c; },
  });
  /* stdin stays open: the second line is sent once the interrupt was handled */
  child.stdin.write('a slow question\n');
  await srv.until((s) => s.requests.length > 0);
  const cancelled = waitForOutput(child.stderr, /\(cancelled\)/);
  child.kill('SIGINT');
  await cancelled;
  child.stdin.end('How many artists?\n');
  const r = await done;
  await srv.close();
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stderr, /\(cancelled\)/);
  assert.match(r.stdout, /There are 275 artists\./);
});

test('Ctrl-C during ask: exit 130 and a trace that says cancelled', async () => {
  const sc = scratch();
  const srv = await server({ rules: [{ hang_ms: 60000, ...sql('SELECT 1') }] });
  const r = await ask(sc, srv, 'slow question', [], {
    onSpawn: (child) => { srv.until((s) => s.requests.length > 0).then(() => child.kill('SIGINT'), () => {}); },
  });
  assert.equal(r.code, 130);
  assert.equal(r.json.status, 'cancelled');
  // it stopped by leaving the request, not by waiting for the 60 s answer
  await srv.until((s) => s.requests[0].disconnected);
  await srv.close();
  assert.equal(traceEvents(r.json.trace).at(-1).status, 'cancelled');
});

test('a schema over the budget: the trace says which tables went in full and why; the terminal names them', async () => {
  const sc = scratch();
  const srv = await server({ rules: [
    { when: { last_tool: '\\b25\\b' }, tool: 'answer', args: { text: 'There are 25 genres.' } },
  ], fallback: { tool: 'run_sql', args: { sql: 'SELECT COUNT(*) FROM Genre' } } });
  const r = await ask(sc, srv, 'How many genres are there?', ['--schema-budget', '600']);
  const plain = await run(['ask', sc.db, 'How many genres are there?', '--base-url', srv.url,
    '--state-dir', sc.state, '--schema-budget', '600']);
  await srv.close();
  assert.equal(r.code, 0, r.stderr);
  const ev = traceEvents(r.json.trace).filter((e) => e.event === 'schema');
  assert.equal(ev.length, 1);
  const genre = ev[0].tables.find((t) => t.table === 'Genre');
  assert.ok(genre, JSON.stringify(ev[0].tables));
  assert.match(genre.reason, /genre/i);
  assert.ok(genre.score > 0);
  assert.ok(ev[0].card_tokens > 0 && ev[0].card_tokens <= ev[0].card_budget, JSON.stringify(ev[0]));
  // the cards message the model got holds exactly those tables
  const cards = srv.requests[0].body.messages.find((m) => m.role === 'user' && m.content.startsWith('The tables relevant'));
  for (const t of ev[0].tables) assert.ok(cards.content.includes(`# Table: ${t.table} `), t.table);
  assert.equal(plain.code, 0, plain.stderr);
  assert.match(plain.stderr, /^tables .*Genre.* in full \(\d+ tables?, \d+ tokens\)$/m);
});

/* What the session cannot open is said, not dropped: a trace folder that
 * cannot be created leaves the answer standing with a warning; a thread
 * store that cannot be read stops the question (a follow-up without its
 * context would be answered wrongly) and says why. */
test('a trace that cannot be written is a warning; a thread that cannot be read is a failure', async () => {
  const sc = scratch();
  const srv = await server(twoStep);
  fs.mkdirSync(sc.state, { recursive: true });
  fs.writeFileSync(path.join(sc.state, 'runs'), 'not a folder');
  const a = await ask(sc, srv, 'How many artists?');
  assert.equal(a.code, 0, a.stderr);
  assert.equal(a.json.answer, '275 artists.');
  assert.equal(a.json.trace, null);
  assert.match(a.json.warning, /no trace of this run was written \(cannot create .*runs/);
  assert.match(a.stderr, /tabletalk: warning: no trace of this run was written/);

  const sc2 = scratch();
  fs.mkdirSync(sc2.state, { recursive: true });
  execFileSync('sqlite3', [path.join(sc2.state, 'threads.sqlite'),
    'CREATE TABLE turns(thread TEXT, db_path TEXT, seq INTEGER, numbers TEXT)']);
  const mark = srv.requests.length;
  const b = await ask(sc2, srv, 'How many artists?', ['--thread', 'broken']);
  await srv.close();
  assert.equal(b.code, 1);
  assert.equal(b.json.status, 'failed');
  assert.match(b.json.error, /cannot read the thread store: no such column: run_id, so thread "broken" has no context and the question was not asked; check .*threads\.sqlite/);
  assert.match(b.stderr, /the question was not asked/);
  assert.equal(srv.requests.length, mark, 'the model was not called');
  const end = traceEvents(b.json.trace).at(-1);
  assert.equal(end.event, 'run_end');
  assert.equal(end.error, b.json.error);
});
