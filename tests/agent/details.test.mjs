// The rough edges of issue 12, through the real binary: repair hints that
// reach the model, the --llm-timeout and retry messages, replies that are
// not an API's, pull offline and over plain http, `trace latest` and the
// trace view with charts, .env syntax, malformed endpoint URLs, the
// behaviour suite's failure lines, bench --cold on the tiny random-weight
// model, and the main help's columns.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { ask, run, scratch, server, tempDir, lastTool } from '../support/harness.mjs';
import { startFileServer } from '../fixtures/file_server.mjs';

const sql = (s) => ({ tool: 'run_sql', args: { sql: s } });
const chart = (args) => ({ tool: 'make_chart', args });
const answer = (text) => ({ tool: 'answer', args: { text } });
const FIXTURES = path.resolve(path.dirname(new URL(import.meta.url).pathname), '../fixtures');

test('a misspelt column without a table gets a hint from the tables the query names', async () => {
  const sc = scratch();
  const srv = await server({
    rules: [
      { when: { step: 0 }, ...sql('SELECT Nmae FROM Genre') },
      { when: { step: 1 }, ...sql('SELECT Name FROM Genre LIMIT 1') },
      { when: { step: 2 }, ...answer('Rock.') },
    ],
  });
  const r = await ask(sc, srv, 'One genre?');
  await srv.close();
  assert.equal(r.code, 0, r.stderr);
  assert.match(lastTool(srv.requests[1]), /no such column: Nmae — did you mean Name\? \(Genre\.Name\)/);
});

test('--llm-timeout S gives up after S seconds, not S plus libcurl\'s speed window', async () => {
  const sc = scratch();
  const srv = await server({ rules: [{ hang_ms: 60000, ...sql('SELECT 1') }] });
  const r = await ask(sc, srv, 'How many genres?', ['--llm-timeout', '1.5']);
  assert.equal(r.code, 1);
  assert.match(r.json.error, /did not answer within 1\.5 s \(the --llm-timeout; raise it if the model is slow\)$/);
  assert.equal(srv.requests.length, 1, 'a timeout is not retried');
  // the client left the hanging request (the server answers after 60 s);
  // how long leaving takes is for bench/, not for a test
  await srv.until((s) => s.requests[0].disconnected);
  await srv.close();
});

test('retried failures say how many attempts over how long', async () => {
  const sc = scratch();
  const srv = await server({ rules: [{ status: 500, body: { error: { message: 'overloaded' } } }] });
  const r = await ask(sc, srv, 'How many genres?');
  await srv.close();
  assert.equal(r.code, 1);
  assert.match(r.json.error, /HTTP 500: overloaded \(after 4 attempts over \d+\.\d s\)$/);
  assert.equal(srv.requests.length, 4);
});

test('an HTML page, other content or JSON that is no completion is named for what it is', async () => {
  const cases = [
    [{ status: 200, headers: { 'Content-Type': 'text/html; charset=utf-8' },
      body: '<!DOCTYPE html>\n<html><head><title>Sign in</title></head><body>proxy</body></html>' },
    /answered with an HTML page "Sign in" \(HTTP 200, text\/html; charset=utf-8\), not an OpenAI-compatible API: check the URL, it usually ends in \/v1$/],
    [{ status: 200, headers: { 'Content-Type': 'text/plain' }, body: 'hello' },
      /answered with content that is not JSON \(HTTP 200, text\/plain\), not the JSON of an OpenAI-compatible API: check the URL, it usually ends in \/v1$/],
    [{ status: 200, body: { object: 'list', data: [] } },
      /answered with JSON that is not a chat completion \(no "choices"\): check the URL, it usually ends in \/v1$/],
    [{ status: 404, headers: { 'Content-Type': 'text/html' }, body: '<html><title>404 Not Found</title></html>' },
      /HTTP 404: an HTML page "404 Not Found"; check --base-url/],
  ];
  for (const [rule, want] of cases) {
    const sc = scratch();
    const srv = await server({ rules: [rule] });
    const r = await ask(sc, srv, 'How many genres?');
    await srv.close();
    assert.equal(r.code, 1, r.stderr);
    assert.match(r.json.error, want);
    assert.doesNotMatch(r.json.error, /ended before it was complete/);
    assert.equal(srv.requests.length, 1, 'not retried');
  }
});

function pullEnv() {
  const data = tempDir('tabletalk-data-');
  return { data, env: { TABLETALK_DATA_DIR: data } };
}

/* A loopback port nobody listens on. */
async function closedPort() {
  const s = net.createServer();
  await new Promise((r) => s.listen(0, '127.0.0.1', r));
  const { port } = s.address();
  await new Promise((r) => s.close(r));
  return port;
}

test('pull with no connection says so and leaves no empty .part', async () => {
  const { data, env } = pullEnv();
  const port = await closedPort();
  const r = await run(['pull', `http://127.0.0.1:${port}/resolve/x.gguf`], { env });
  assert.equal(r.code, 1);
  assert.match(r.stderr, /cannot reach 127\.0\.0\.1: .*; check your connection/);
  assert.doesNotMatch(r.stderr, /interrupted|resume/);
  assert.deepEqual(fs.readdirSync(path.join(data, 'models')), []);
});

test('pull wants https (plain http only from this machine)', async () => {
  const { data, env } = pullEnv();
  for (const url of ['http://example.com/model.gguf', 'ftp://example.com/model.gguf',
    'http://localhost.example.com/m.gguf', 'http://127.0.0.1@example.com/m.gguf']) {
    const r = await run(['pull', url], { env });
    assert.equal(r.code, 2, `${url}: ${r.stderr}`);
    assert.match(r.stderr, /is not an https URL: models are downloaded over https only/);
  }
  assert.equal(fs.existsSync(path.join(data, 'models')), false, 'nothing was created');
  const help = await run(['pull', '--help']);
  assert.match(help.stdout, /URL: an https URL of a \.gguf file \(plain\nhttp only from this machine/);
  // loopback http is the local mirror the other pull tests use
  const srv = await startFileServer(Buffer.from('GGUF tiny'));
  const ok = await run(['pull', srv.url('local.gguf'), '--no-default'], { env });
  await srv.close();
  assert.equal(ok.code, 0, ok.stderr);
});

test('trace latest is the last run, also when runs start within one second', async () => {
  const sc = scratch();
  const srv = await server({ rules: [{ when: { step: 0 }, ...sql('SELECT 1') }, { ...answer('One.') }] });
  const ids = [];
  for (const q of ['first question', 'second question', 'third question']) {
    const r = await ask(sc, srv, q);
    assert.equal(r.code, 0, r.stderr);
    ids.push(r.json.run_id);
  }
  await srv.close();
  assert.deepEqual([...ids].sort(), ids, 'run ids sort in start order');
  const latest = await run(['trace', 'latest', '--json', '--state-dir', sc.state]);
  assert.equal(latest.json.find((e) => e.event === 'run_start').question, 'third question');
  const list = await run(['trace', 'list', '--json', '--state-dir', sc.state]);
  assert.deepEqual(list.json.map((x) => x.question), ['third question', 'second question', 'first question']);
});

test('the trace view keeps its columns on make_chart rows and names the chart file', async () => {
  const sc = scratch();
  const q = 'Plot invoices per year';
  const srv = await server({
    rules: [
      { when: { step: 0 }, ...sql("SELECT strftime('%Y', InvoiceDate) AS year, count(*) AS n FROM Invoice GROUP BY year") },
      { when: { step: 1 }, ...chart({ kind: 'bar', x: 'year', y: 'n', title: 'Invoices per year' }) },
      { when: { step: 2 }, ...answer('Shown in the chart.') },
    ],
  });
  const r = await ask(sc, srv, q);
  await srv.close();
  assert.equal(r.code, 0, r.stderr);
  const file = r.json.charts[0].file;
  const t = await run(['trace', 'latest', '--state-dir', sc.state]);
  assert.equal(t.code, 0, t.stderr);
  const lines = t.stdout.split('\n');
  const llm = lines.filter((l) => /^ *\d+ llm +-> /.test(l));
  assert.equal(llm.length, 3);
  assert.ok(llm.some((l) => /-> make_chart /.test(l)));
  const col = (l, re) => l.search(re);
  for (const l of llm) assert.equal(col(l, / ms /), col(llm[0], / ms /), `"${l}" shifts the columns`);
  const sqlLine = lines.find((l) => /^ {3}sql +SELECT/.test(l));
  const chartLine = lines.find((l) => /^ {3}plot +/.test(l));
  assert.ok(sqlLine && chartLine, t.stdout);
  assert.equal(sqlLine.indexOf('SELECT'), chartLine.indexOf('bar chart'), 'labels take one column');
  assert.ok(chartLine.includes(`bar chart, 5 bars: Invoices per year -> ${file}`), chartLine);
});

test('.env follows dotenv: quotes, export and trailing comments', async () => {
  const sc = scratch();
  const srv = await server({ rules: [{ when: { step: 0 }, ...sql('SELECT 1') }, { ...answer('One.') }] });
  const cwd = tempDir('tabletalk-cwd-');
  fs.writeFileSync(path.join(cwd, '.env'),
    `# the scripted model\nexport TABLETALK_BASE_URL="${srv.url}"   # a comment\nTABLETALK_MODEL='tiny #1'\n`);
  const r = await run(['ask', sc.db, 'One?', '--state-dir', sc.state, '--json'], { cwd });
  await srv.close();
  assert.equal(r.code, 0, r.stderr);
  assert.equal(srv.requests[0].body.model, 'tiny #1');
});

test('a malformed endpoint URL is a usage error that names its source', async () => {
  const sc = scratch();
  let r = await run(['ask', sc.db, 'q', '--base-url', 'localhost:8080']);
  assert.equal(r.code, 2);
  assert.match(r.stderr, /--base-url 'localhost:8080' is not a usable URL: it must start with http:\/\/ or https:\/\//);
  r = await run(['ask', sc.db, 'q', '--base-url', 'http://127.0.0.1:80800/v1']);
  assert.equal(r.code, 2);
  assert.match(r.stderr, /its port '80800' is not a number from 1 to 65535/);
  r = await run(['ask', sc.db, 'q'], { env: { TABLETALK_BASE_URL: 'http:/127.0.0.1:8080/v1' } });
  assert.equal(r.code, 2);
  assert.match(r.stderr, /TABLETALK_BASE_URL 'http:\/127\.0\.0\.1:8080\/v1' \(from the environment\) is not a usable URL/);
  const cwd = tempDir('tabletalk-cwd-');
  fs.writeFileSync(path.join(cwd, '.env'), 'TABLETALK_BASE_URL=http://my server/v1\n');
  for (const args of [['ask', sc.db, 'q'], ['eval', 'behaviors', '--db', sc.db], ['serve-mcp', sc.db]]) {
    r = await run(args, { cwd });
    assert.equal(r.code, 2, `${args[0]}: ${r.stderr}`);
    assert.match(r.stderr, /TABLETALK_BASE_URL 'http:\/\/my server\/v1' \(from \.\/\.env\) is not a usable URL: it contains a space/);
  }
});

test('a failed behaviour check says what was expected and what was found', async () => {
  const sc = scratch();
  const srv = await server(JSON.parse(fs.readFileSync(path.join(FIXTURES, 'select1.json'), 'utf8')));
  const r = await run(['eval', 'behaviors', '--db', sc.db, '--base-url', srv.url, '--state-dir', sc.state,
    '--only', 'count']);
  const j = await run(['eval', 'behaviors', '--db', sc.db, '--base-url', srv.url, '--state-dir', sc.state,
    '--only', 'count', '--json']);
  await srv.close();
  assert.equal(r.code, 1);
  assert.match(r.stdout, /✗ the count: expected 3503 in the final result, found 1 row: \(1\) from SELECT 1\n/);
  const check = j.json.cases[0].checks.find((c) => c.check === 'the count');
  assert.equal(check.expected, '3503 in the final result');
  assert.equal(check.found, '1 row: (1) from SELECT 1');
});

const TINY = process.env.TT_TINY_MODEL;

test('bench --cold computes and saves the prefix, so the next warm run restores it', { skip: !TINY && 'no tiny model' }, async () => {
  const sc = scratch();
  const rec = path.join(sc.dir, 'recording.json');
  fs.writeFileSync(rec, JSON.stringify({ database: 'chinook.sqlite', questions: [{ question: 'How many genres?',
    calls: [{ name: 'run_sql', arguments: { sql: 'SELECT count(*) FROM Genre' } },
      { name: 'answer', arguments: { text: '25.' } }] }] }));
  const cache = path.join(sc.dir, 'cache');
  const bench = async (extra) => {
    const r = await run(['bench', rec, '--model-path', TINY, '--json', ...extra], { env: { TABLETALK_CACHE_DIR: cache } });
    assert.equal(r.code, 0, r.stderr);
    return r.json;
  };
  const cold = await bench(['--cold']);
  assert.equal(cold.steps[0].reused_tokens, 0, 'cold: the prefix is computed');
  assert.equal(cold.totals.restore_s, 0);
  assert.equal(fs.readdirSync(cache).filter((f) => /^prefix-[0-9a-f]+\.state$/.test(f)).length, 1, 'and saved');
  const warm = await bench([]);
  assert.ok(warm.steps[0].reused_tokens > 0, 'warm: the saved prefix is restored');
  assert.ok(warm.totals.restore_s > 0);
  assert.ok(warm.totals.computed_tokens < cold.totals.computed_tokens);
  const again = await bench(['--cold']);
  assert.equal(again.steps[0].reused_tokens, 0, 'cold ignores the saved state');
});

test('the main help keeps every command summary in one column, within 80 columns', async () => {
  const r = await run(['--help']);
  assert.equal(r.code, 0);
  const block = r.stdout.split('Commands:\n')[1].split('\n\n')[0].split('\n');
  assert.ok(block.some((l) => l.startsWith('  serve-mcp ')));
  const start = (l) => /^( {2}\S+ +)\S/.exec(l)[1].length; // where the summary begins
  for (const l of block) {
    assert.equal(start(l), start(block[0]), `"${l}" is out of line`);
    assert.ok(l.length <= 80, `"${l}" is longer than 80 columns`);
  }
});
