// The embedding score of the table ranking, through the real binary and the
// scripted model server's /v1/embeddings (vectors the test defines): a
// question sharing no word with the schema gets the table whose description
// vector is nearest; the tables' vectors are made once and then read from
// the cache (the second run embeds only its question); an endpoint without
// the route turns the score off with a warning and the question goes on,
// asking the route once; private mode sends no value of the data (nor does
// any mode); gc removes the vectors of a database that is gone.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { run, runProgram, server, tempDir, traceEvents } from '../support/harness.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const MAKE = path.resolve(here, '../fixtures/embed_schema.py');
const QUESTION = 'Which athletes ran quickest?';
const answer = { tool: 'answer', args: { text: 'Done.' } };
// the marathon table's text and the question point one way, the rest another
const vectors = { vectors: [{ match: 'marathon|athletes', vector: [0, 0, 1] },
  { match: 'payroll', vector: [0.6, 0.8, 0] }], default: [1, 0, 0.05] };

async function setup() {
  const dir = tempDir();
  const db = path.join(dir, 't.sqlite');
  const r = await runProgram('python3', [MAKE, db]);
  assert.equal(r.code, 0, r.stderr);
  return { dir, db, state: path.join(dir, 'state'), cache: path.join(dir, 'cache') };
}

const ask = (b, srv, extra = []) => run(['ask', b.db, QUESTION, '--base-url', srv.url, '--state-dir',
  b.state, '--json', '--schema-budget', '300', ...extra], { env: { TABLETALK_CACHE_DIR: b.cache } });
const embedRequests = (srv) => srv.requests.filter((r) => /\/embeddings$/.test(r.path));
const inputs = (srv) => embedRequests(srv).flatMap((r) => [].concat(r.body.input ?? []));
const picks = (r) => traceEvents(r.json.trace).find((e) => e.event === 'schema').tables;
const vecFiles = (b) => (fs.existsSync(path.join(b.cache, 'vectors'))
  ? fs.readdirSync(path.join(b.cache, 'vectors')).filter((f) => f.endsWith('.vec')) : []);

test('a question sharing no word with the schema gets the table whose description is nearest', async () => {
  const b = await setup();
  const off = await server({ rules: [answer], embeddings: vectors });
  const r0 = await ask(b, off, ['--embeddings', 'off']);
  await off.close();
  assert.equal(r0.code, 0, r0.stderr);
  assert.equal(embedRequests(off).length, 0, 'off asks for no embedding');
  assert.ok(!picks(r0).some((p) => p.table === 'Zorb'), 'by words alone the marathon table is not found');

  const srv = await server({ rules: [answer], embeddings: vectors });
  const r = await ask(b, srv, ['--embeddings', 'on', '--model', 'scripted-chat']);
  await srv.close();
  assert.equal(r.code, 0, r.stderr);
  const p = picks(r);
  assert.equal(p[0].table, 'Zorb', JSON.stringify(p));
  assert.match(p[0].reason, /embedding/);
  const chat = srv.requests.find((q) => /chat\/completions$/.test(q.path));
  assert.match(chat.body.messages.map((m) => m.content ?? '').join('\n'), /# Table: Zorb/);
  // one request for the twelve tables' texts, one for the question
  assert.equal(embedRequests(srv).length, 2);
  assert.equal(inputs(srv).filter((t) => /^Table /.test(t)).length, 12);
  assert.ok(inputs(srv).includes(QUESTION));
  assert.equal(embedRequests(srv)[0].body.model, 'scripted-chat');
});

test('the tables\' vectors are cached per database and model: a second run embeds only its question', async () => {
  const b = await setup();
  const srv = await server({ rules: [answer], embeddings: vectors });
  const since = (n) => srv.requests.slice(n).filter((r) => /\/embeddings$/.test(r.path))
    .flatMap((r) => [].concat(r.body.input));
  const r1 = await ask(b, srv, ['--embed-model', 'tiny-embed']); // auto: on, an embedding model is named
  assert.equal(r1.code, 0, r1.stderr);
  assert.equal(embedRequests(srv)[0].body.model, 'tiny-embed');
  assert.equal(since(0).filter((t) => /^Table /.test(t)).length, 12);
  assert.equal(vecFiles(b).length, 1);

  let n = srv.requests.length;
  const r2 = await ask(b, srv, ['--embed-model', 'tiny-embed']);
  assert.equal(r2.code, 0, r2.stderr);
  assert.deepEqual(since(n), [QUESTION], 'no description is embedded again');
  assert.equal(picks(r2)[0].table, 'Zorb');
  assert.deepEqual(picks(r2), picks(r1), 'the same picks from cached vectors');
  // another embedding model has vectors of its own
  n = srv.requests.length;
  const r3 = await ask(b, srv, ['--embed-model', 'other-embed']);
  await srv.close();
  assert.equal(r3.code, 0, r3.stderr);
  assert.equal(since(n).filter((t) => /^Table /.test(t)).length, 12);
  assert.equal(vecFiles(b).length, 2);
});

test('without --embed-model, auto leaves embeddings off', async () => {
  const b = await setup();
  const srv = await server({ rules: [answer], embeddings: vectors });
  const r = await ask(b, srv);
  await srv.close();
  assert.equal(r.code, 0, r.stderr);
  assert.equal(embedRequests(srv).length, 0);
});

test('an endpoint without /v1/embeddings: the score is off with a warning, asked once, the question answered', async () => {
  const b = await setup();
  const srv = await server({ rules: [answer] }); // no "embeddings": the route answers 404
  const r = await ask(b, srv, ['--embeddings', 'on']);
  await srv.close();
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.json.status, 'answered');
  assert.equal(embedRequests(srv).length, 1);
  const events = traceEvents(r.json.trace);
  const warn = events.find((e) => e.event === 'warning' && /embedding score is off/.test(e.message ?? ''));
  assert.ok(warn, JSON.stringify(events.filter((e) => e.event === 'warning')));
  assert.match(warn.message, /404/);
  assert.equal(vecFiles(b).length, 0);
});

test('private mode sends no value of the data in embedding requests', async () => {
  const b = await setup();
  const srv = await server({ rules: [answer], embeddings: vectors });
  const r = await ask(b, srv, ['--embeddings', 'on', '--private']);
  await srv.close();
  assert.equal(r.code, 0, r.stderr);
  const sent = inputs(srv);
  assert.ok(sent.some((t) => /^Table Employee: people on the payroll\. Columns: EmployeeId, FullName/.test(t)), sent.join('\n'));
  for (const value of ['Zanzibar', 'Quux', '2020-01-01', '02:11:09', 'Wheelchair']) {
    assert.ok(!sent.some((t) => t.includes(value)), `${value} was sent: ${sent.join('\n')}`);
  }
  assert.ok(!sent.some((t) => /\b1 row\b|rows\)/.test(t)), 'no row count either');
});

test('gc removes the vectors of a database that is gone', async () => {
  const b = await setup();
  const srv = await server({ rules: [answer], embeddings: vectors });
  const r = await ask(b, srv, ['--embeddings', 'on']);
  await srv.close();
  assert.equal(r.code, 0, r.stderr);
  assert.equal(vecFiles(b).length, 1);
  const env = { TABLETALK_CACHE_DIR: b.cache };
  const kept = await run(['gc', '--state-dir', b.state, '--json'], { env });
  assert.equal(kept.code, 0, kept.stderr);
  assert.equal(vecFiles(b).length, 1, 'a live database keeps its vectors');
  fs.rmSync(b.db);
  const g = await run(['gc', '--state-dir', b.state, '--json'], { env });
  assert.equal(g.code, 0, g.stderr);
  assert.equal(vecFiles(b).length, 0);
});

test('--embeddings wants auto, on or off; TABLETALK_EMBEDDINGS too', async () => {
  const r = await run(['ask', 'x.sqlite', 'q', '--embeddings', 'sometimes']);
  assert.equal(r.code, 2);
  assert.match(r.stderr, /--embeddings wants auto, on or off, not 'sometimes'/);
  const b = await setup();
  const e = await run(['ask', b.db, 'q', '--base-url', 'http://127.0.0.1:9/v1'], { env: { TABLETALK_EMBEDDINGS: 'maybe' } });
  assert.notEqual(e.code, 0);
  assert.match(e.stderr, /TABLETALK_EMBEDDINGS wants auto, on or off, not 'maybe'/);
});
