// The agent and the HTTP client when the model or the endpoint misbehaves:
// unusable tool calls, failing SQL, endless tool calls, numbers without a
// query, 429/500, an endpoint that is down, a cut stream and a hang. Every
// case ends cleanly with a clear status, message and trace.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { ask, run, scratch, server, lastTool, traceEvents } from '../support/harness.mjs';

const sql = (s) => ({ tool: 'run_sql', args: { sql: s } });
const answer = (text) => ({ tool: 'answer', args: { text } });
const GOOD = 'SELECT count(*) FROM Genre';

test('invalid JSON arguments get one corrective retry, then a good call works', async () => {
  const sc = scratch();
  const srv = await server({
    rules: [
      { when: { step: 0 }, tool: 'run_sql', raw_args: '{"sql": "SELECT count(*) FROM Genre' },
      { when: { step: 1 }, ...sql(GOOD) },
      { when: { step: 2 }, ...answer('There are 25 genres.') },
    ],
  });
  const r = await ask(sc, srv, 'How many genres?');
  await srv.close();
  assert.equal(r.code, 0, r.stderr);
  assert.deepEqual(r.json.rows, [[25]]);
  assert.match(lastTool(srv.requests[1]), /could not be used: the arguments of run_sql are not valid JSON/);
});

test('arguments that do not fit the schema are corrected the same way', async () => {
  const sc = scratch();
  const srv = await server({
    rules: [
      { when: { step: 0 }, tool: 'run_sql', args: { query: GOOD } },
      { when: { step: 1 }, ...sql(GOOD) },
      { when: { step: 2 }, ...answer('There are 25 genres.') },
    ],
  });
  const r = await ask(sc, srv, 'How many genres?');
  await srv.close();
  assert.equal(r.code, 0);
  assert.match(lastTool(srv.requests[1]), /missing the required property "sql"/);
});

test('two unusable calls in a row end the run cleanly', async () => {
  const sc = scratch();
  const srv = await server({ rules: [{ tool: 'run_sql', raw_args: 'not json at all' }] });
  const r = await ask(sc, srv, 'How many genres?');
  await srv.close();
  assert.equal(r.code, 1);
  assert.equal(r.json.status, 'failed');
  assert.match(r.json.error, /unusable tool call twice/);
  const end = traceEvents(r.json.trace).at(-1);
  assert.equal(end.event, 'run_end');
  assert.equal(end.status, 'failed');
});

test('an unknown tool is corrected', async () => {
  const sc = scratch();
  const srv = await server({
    rules: [
      { when: { step: 0 }, tool: 'drop_database', args: { really: true } },
      { when: { step: 1 }, ...sql(GOOD) },
      { when: { step: 2 }, ...answer('25 genres.') },
    ],
  });
  const r = await ask(sc, srv, 'How many genres?');
  await srv.close();
  assert.equal(r.code, 0);
  assert.match(lastTool(srv.requests[1]), /no tool named "drop_database" \(available: run_sql, ask_user, answer, make_chart\)/);
});

test('SQL errors come back with the closest names; 3 failures in a row make the model explain', async () => {
  const sc = scratch();
  const srv = await server({
    rules: [
      { when: { step: 0 }, ...sql('SELECT Trak.Name FROM Track') },
      { when: { step: 1 }, ...sql('SELECT Nme FROM Tracks') },
      { when: { step: 2 }, ...sql('SELECT count(*) FROM Track WHERE') },
      { when: { step: 3 }, ...answer('I could not write a working query for this.') },
    ],
  });
  const r = await ask(sc, srv, 'List track names');
  await srv.close();
  assert.equal(r.code, 0);
  assert.match(lastTool(srv.requests[1]), /no such column: Trak\.Name — did you mean Track\.Name\?/);
  assert.match(lastTool(srv.requests[2]), /no such table: Tracks — did you mean Track\?/);
  assert.match(lastTool(srv.requests[3]), /3 failed queries in a row: stop querying now and call answer/);
  // forced: "required" with only answer offered (llama-server makes a named tool_choice "auto")
  assert.equal(srv.requests[3].body.tool_choice, 'required');
  assert.deepEqual(srv.requests[3].body.tools.map((t) => t.function.name), ['answer']);
  assert.equal(r.json.status, 'answered');
  assert.equal(r.json.sql, null);
});

test('the budget of 8 tool calls ends an endless run', async () => {
  const sc = scratch();
  const srv = await server({ rules: [sql(GOOD)] });
  const r = await ask(sc, srv, 'Keep querying forever');
  await srv.close();
  assert.equal(r.code, 1, 'budget exhausted without an answer is a failure');
  assert.equal(r.json.status, 'budget');
  assert.equal(r.json.totals.tool_calls, 8);
  assert.equal(srv.requests.length, 8);
  assert.equal(srv.requests[6].body.tool_choice, 'required');
  assert.equal(srv.requests[7].body.tool_choice, 'required');
  assert.deepEqual(srv.requests[7].body.tools.map((t) => t.function.name), ['answer']);
  assert.match(lastTool(srv.requests[7]), /last query for this question: call answer now/);
  assert.deepEqual(r.json.rows, [[25]], 'the last working result is kept');
  assert.match(r.json.error, /all 8 tool calls/);
});

test('numbers without a query are pushed back once', async () => {
  const sc = scratch();
  const srv = await server({
    rules: [
      { when: { step: 0 }, ...answer('There are 412 invoices.') },
      { when: { step: 1 }, ...sql('SELECT count(*) FROM Invoice') },
      { when: { step: 2 }, ...answer('There are 412 invoices.') },
    ],
  });
  const r = await ask(sc, srv, 'How many invoices are there?');
  await srv.close();
  assert.equal(r.code, 0);
  assert.match(lastTool(srv.requests[1]), /Not accepted yet: your answer states numbers \(412\), but no query has run/);
  assert.deepEqual(r.json.rows, [[412]]);
  assert.equal(r.json.verified, 'checked');
  assert.ok(traceEvents(r.json.trace).some((e) => e.event === 'verify' && e.decision === 'push_back'));
});

test('a model that insists after the push back is answered, marked unverified', async () => {
  const sc = scratch();
  const srv = await server({ rules: [answer('There are 999 invoices.')] });
  const r = await ask(sc, srv, 'How many invoices are there?');
  await srv.close();
  assert.equal(r.code, 0);
  assert.equal(srv.requests.length, 2, 'exactly one push back');
  assert.equal(r.json.verified, 'unbacked');
  assert.deepEqual(r.json.unbacked_numbers, ['999']);
});

test('an answer without numbers needs no query', async () => {
  const sc = scratch();
  const srv = await server({ rules: [answer('Hello! Ask me about the music store.')] });
  const r = await ask(sc, srv, 'hello');
  await srv.close();
  assert.equal(r.code, 0);
  assert.equal(srv.requests.length, 1);
  assert.equal(r.json.verified, 'checked');
});

test('HTTP 429 is retried, then the run succeeds', async () => {
  const sc = scratch();
  const srv = await server({
    rules: [
      { status: 429, headers: { 'Retry-After': '0' }, times: 1 },
      { when: { step: 0 }, ...sql(GOOD) },
      { when: { step: 1 }, ...answer('25 genres.') },
    ],
  });
  const r = await ask(sc, srv, 'How many genres?');
  await srv.close();
  assert.equal(r.code, 0, r.stderr);
  assert.equal(srv.requests.length, 3);
  const llm = traceEvents(r.json.trace).filter((e) => e.event === 'model_call');
  assert.equal(llm[0].attempts, 2);
});

test('HTTP 500 every time: bounded retries, then a clear failure', async () => {
  const sc = scratch();
  const srv = await server({ rules: [{ status: 500, headers: { 'Retry-After': '0' } }] });
  const r = await ask(sc, srv, 'How many genres?');
  await srv.close();
  assert.equal(r.code, 1);
  assert.equal(srv.requests.length, 4, 'one try and three retries');
  assert.match(r.json.error, /HTTP 500.*after 4 attempts/);
});

test('HTTP 401 is not retried and says to check the key', async () => {
  const sc = scratch();
  const srv = await server({ rules: [{ status: 401, body: { error: { message: 'bad key' } } }] });
  const r = await ask(sc, srv, 'How many genres?');
  await srv.close();
  assert.equal(r.code, 1);
  assert.equal(srv.requests.length, 1);
  assert.match(r.json.error, /HTTP 401: bad key; check the API key/);
});

test('endpoint down: exit 1, a clear message, and a trace', async () => {
  const sc = scratch();
  const r = await run(['ask', sc.db, 'How many genres?', '--base-url', 'http://127.0.0.1:9/v1',
    '--state-dir', sc.state], { env: { } });
  assert.equal(r.code, 1);
  assert.match(r.stderr, /cannot reach the model endpoint http:\/\/127\.0\.0\.1:9\/v1\/chat\/completions/);
  assert.match(r.stderr, /check --base-url or TABLETALK_BASE_URL/);
  const runs = fs.readdirSync(`${sc.state}/runs`);
  assert.equal(runs.length, 1);
  const end = traceEvents(`${sc.state}/runs/${runs[0]}`).at(-1);
  assert.equal(end.event, 'run_end');
  assert.equal(end.status, 'failed');
});

test('a cut stream is retried', async () => {
  const sc = scratch();
  const srv = await server({
    rules: [
      { when: { step: 0 }, ...sql(GOOD), cut_stream: true, times: 1 },
      { when: { step: 0 }, ...sql(GOOD) },
      { when: { step: 1 }, ...answer('25 genres.') },
    ],
  });
  const r = await ask(sc, srv, 'How many genres?');
  await srv.close();
  assert.equal(r.code, 0, r.stderr);
  assert.deepEqual(r.json.rows, [[25]]);
});

test('a hung endpoint times out', async () => {
  const sc = scratch();
  const srv = await server({ rules: [{ hang_ms: 60000, ...sql(GOOD) }] });
  const r = await ask(sc, srv, 'How many genres?', ['--llm-timeout', '1']);
  assert.equal(r.code, 1);
  assert.match(r.json.error, /did not answer within 1 s/);
  // the client gave up on the hanging request (the server would answer only after 60 s)
  await srv.until((s) => s.requests.length === 1 && s.requests[0].disconnected);
  await srv.close();
});

test('an endpoint that ignores tools: its text is pushed back once, then it is the answer', async () => {
  const sc = scratch();
  const srv = await server({ rules: [{ text: 'I am a plain chat model.' }] });
  const r = await ask(sc, srv, 'hello');
  await srv.close();
  assert.equal(r.code, 0);
  assert.equal(srv.requests.length, 2);
  assert.match(srv.requests[1].body.messages.at(-1).content, /every reply must be exactly one tool call/);
  assert.equal(r.json.answer, 'I am a plain chat model.');
});

test('non-streamed replies work the same', async () => {
  const sc = scratch();
  const srv = await server({
    rules: [
      { when: { step: 0 }, ...sql(GOOD) },
      { when: { step: 1 }, ...answer('25 genres.') },
    ],
  });
  const r = await ask(sc, srv, 'How many genres?', ['--no-stream']);
  await srv.close();
  assert.equal(r.code, 0);
  assert.equal(srv.requests[0].body.stream, false);
  assert.deepEqual(r.json.rows, [[25]]);
});
