// The MCP Inspector's command line (@modelcontextprotocol/inspector --cli),
// a second official client, against `tabletalk serve-mcp` over stdio (both
// eras) and Streamable HTTP: the tool list, a SELECT with its rows, a
// resource, a prompt, and the tool-error exit code for a refused DELETE.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { BIN, FAIL_AFTER, noteStderr, scratch, testEnv, startHttp } from '../support/harness.mjs';
import { serveArgs } from './protocol.mjs';


const here = path.dirname(fileURLToPath(import.meta.url));
const INSPECTOR = path.join(here, 'node_modules/@modelcontextprotocol/inspector/clients/launcher/build/index.js');
/* the Node.js from tests/mcp/node_modules (the Inspector needs >= 22.19) */
const NODE = path.join(here, 'node_modules/.bin/node');

/* Runs the Inspector CLI: target args, then `--`, then its options.
 * Resolves {code, stdout, stderr, json}. */
function inspector(target, options, { cwd, timeout = FAIL_AFTER } = {}) {
  return new Promise((resolve, reject) => {
    const child = spawn(NODE, [INSPECTOR, '--cli', ...target, '--', ...options, '--format', 'json'], { cwd, env: testEnv() });
    let stdout = '', stderr = '';
    child.stdout.on('data', (d) => { stdout += d; });
    child.stderr.on('data', (d) => { stderr += d; });
    const timer = setTimeout(() => child.kill('SIGKILL'), timeout);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      noteStderr(`inspector ${target.join(' ')} -- ${options.join(' ')}`, () => stderr); // the server's stderr comes through
      let json = null;
      try { json = JSON.parse(stdout); } catch { /* reported by the caller */ }
      resolve({ code, signal, stdout, stderr, json });
    });
  });
}

const sqlite = (db, sql) => JSON.parse(execFileSync('sqlite3', ['-readonly', '-json', db, sql]).toString() || '[]');
const stdioTarget = (sc) => [BIN, ...serveArgs(sc)];

test('stdio: tools/list shows the three tools, in both eras', { timeout: FAIL_AFTER }, async () => {
  const sc = scratch();
  for (const era of ['legacy', 'modern']) {
    const r = await inspector(stdioTarget(sc), ['--method', 'tools/list', '--protocol-era', era], { cwd: sc.dir });
    assert.equal(r.code, 0, `${era}: exit 0 (stderr: ${r.stderr})`);
    const tools = r.json?.result?.tools;
    assert.deepEqual(tools?.map((t) => t.name), ['ask_database', 'run_sql', 'describe_schema'], `${era}: ${r.stdout.slice(0, 300)}`);
    assert.ok(tools.every((t) => t.annotations.readOnlyHint === true));
    assert.doesNotMatch(r.stderr, /[1-9]\d* errors?/, `${era}: no schema portability errors: ${r.stderr}`);
  }
  assert.ok(sc.unchanged());
});

test('stdio: tools/call run_sql with a SELECT returns its rows', { timeout: FAIL_AFTER }, async () => {
  const sc = scratch();
  const sql = 'SELECT GenreId, Name FROM Genre ORDER BY GenreId LIMIT 5';
  const r = await inspector(stdioTarget(sc), ['--method', 'tools/call', '--tool-name', 'run_sql', '--tool-arg', `sql=${sql}`], { cwd: sc.dir });
  assert.equal(r.code, 0, r.stderr);
  const res = r.json.result;
  assert.notEqual(res.isError, true);
  assert.deepEqual(res.structuredContent.columns, ['GenreId', 'Name']);
  assert.deepEqual(res.structuredContent.rows, sqlite(sc.db, sql).map((o) => [o.GenreId, o.Name]));
  assert.match(res.content[0].text, /5 rows/);
  /* the same through --tool-args-json, modern era */
  const j = await inspector(stdioTarget(sc), ['--method', 'tools/call', '--tool-name', 'run_sql', '--tool-args-json', JSON.stringify({ sql: 'SELECT count(*) AS n FROM Track' }), '--protocol-era', 'modern'], { cwd: sc.dir });
  assert.equal(j.code, 0, j.stderr);
  assert.deepEqual(j.json.result.structuredContent.rows, [[sqlite(sc.db, 'SELECT count(*) AS n FROM Track')[0].n]]);
  assert.ok(sc.unchanged());
});

test('stdio: a DELETE is a tool error: exit code 5, and the file is unchanged', { timeout: FAIL_AFTER }, async () => {
  const sc = scratch();
  const r = await inspector(stdioTarget(sc), ['--method', 'tools/call', '--tool-name', 'run_sql', '--tool-arg', 'sql=DELETE FROM Track'], { cwd: sc.dir });
  assert.equal(r.code, 5, `the Inspector's tool-error exit code (stdout: ${r.stdout}, stderr: ${r.stderr})`);
  assert.equal(r.json?.result?.isError, true);
  assert.match(r.json.result.content[0].text, /^refused: /);
  assert.match(r.stderr, /"code":"tool_is_error"/);
  const unknown = await inspector(stdioTarget(sc), ['--method', 'tools/call', '--tool-name', 'drop_everything'], { cwd: sc.dir });
  assert.equal(unknown.code, 5, 'an unknown tool: the same exit code');
  assert.ok(sc.unchanged(), 'the database is byte-identical');
  assert.deepEqual(sc.strayFiles(), []);
});

test('stdio: a resource and a prompt', { timeout: FAIL_AFTER }, async () => {
  const sc = scratch();
  const res = await inspector(stdioTarget(sc), ['--method', 'resources/read', '--uri', 'tabletalk://table/Genre'], { cwd: sc.dir });
  assert.equal(res.code, 0, res.stderr);
  const n = sqlite(sc.db, 'SELECT count(*) AS n FROM Genre')[0].n;
  assert.match(res.json.result.contents[0].text, new RegExp(`Table: Genre \\(${n} rows\\)`));
  const p = await inspector(stdioTarget(sc), ['--method', 'prompts/get', '--prompt-name', 'analyze_table', '--prompt-args', 'table=Album'], { cwd: sc.dir });
  assert.equal(p.code, 0, p.stderr);
  assert.match(p.json.result.messages[0].content.text, /Table: Album/);
  const missing = await inspector(stdioTarget(sc), ['--method', 'prompts/get', '--prompt-name', 'analyze_table'], { cwd: sc.dir });
  assert.notEqual(missing.code, 0, 'a missing required prompt argument fails');
  assert.match(missing.stderr, /table/);
});

test('HTTP: tools/list and a SELECT through --transport http', { timeout: FAIL_AFTER }, async () => {
  const sc = scratch();
  const srv = await startHttp(serveArgs(sc), { cwd: sc.dir });
  try {
    for (const era of ['legacy', 'modern']) {
      const r = await inspector([srv.url], ['--transport', 'http', '--method', 'tools/list', '--protocol-era', era]);
      assert.equal(r.code, 0, `${era}: ${r.stderr}`);
      assert.deepEqual(r.json.result.tools.map((t) => t.name), ['ask_database', 'run_sql', 'describe_schema']);
    }
    const q = await inspector([srv.url], ['--transport', 'http', '--method', 'tools/call', '--tool-name', 'run_sql', '--tool-arg', 'sql=SELECT Name FROM Artist WHERE ArtistId = 1', '--protocol-era', 'modern']);
    assert.equal(q.code, 0, q.stderr);
    assert.deepEqual(q.json.result.structuredContent.rows, [[sqlite(sc.db, 'SELECT Name FROM Artist WHERE ArtistId = 1')[0].Name]]);
    const d = await inspector([srv.url], ['--transport', 'http', '--method', 'tools/call', '--tool-name', 'run_sql', '--tool-arg', 'sql=DROP TABLE Track']);
    assert.equal(d.code, 5);
    assert.ok(srv.alive());
  } finally {
    await srv.close();
  }
  assert.ok(sc.unchanged());
});
