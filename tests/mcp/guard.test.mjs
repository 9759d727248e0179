// The SQL guard through the MCP server: every case of
// ../shared/corpus/sql-guard.tsv goes through run_sql (stdio, and again over
// HTTP) and must end the way `tabletalk sql` ends on the same case with the
// same time limit (rows, or refused / timeout / limit / sql error), and the
// writes an MCP client might try are refused by name. The database copy
// stays byte-identical and nothing is written next to it or to /tmp.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { FAIL_AFTER, RawStdio, cliSql, scratch, startHttp, startModel } from '../support/harness.mjs';
import { loadGuardCorpus, modernRequest, post, postModern, serveArgs, textOf } from './protocol.mjs';


const TIMEOUT_S = '2'; // the corpus's reference time limit
const corpus = loadGuardCorpus();
const utf8 = new TextDecoder('utf-8', { fatal: true });
const validUtf8 = (buf) => { try { utf8.decode(buf); return true; } catch { return false; } };
/* JSON can carry the SQL as a string: valid UTF-8 without NUL (jansson,
 * the server's JSON parser, refuses \u0000 unless told otherwise). */
const carriable = (buf) => validUtf8(buf) && !buf.includes(0);

/* The outcome of `tabletalk sql --format json` in the words run_sql uses. */
function cliOutcome(r) {
  /* empty SQL is a usage error on the command line (exit 2), a refusal for run_sql */
  if (r.json?.error?.kind === 'usage' && r.json.error.reason === 'empty') return 'refused';
  if (r.json?.error) return r.json.error.kind;
  if (r.code === 0 && r.json && Array.isArray(r.json.rows)) return 'ok';
  return `exit ${r.code}${r.signal ? ` ${r.signal}` : ''}: ${(r.stdout + r.stderr).slice(0, 200)}`;
}

/* The outcome of a run_sql result: ok, or the kind its text starts with. */
function mcpOutcome(result) {
  if (!result) return 'no result';
  if (result.isError) return /^([a-z]+): /.exec(textOf(result))?.[1] ?? `unlabelled error: ${textOf(result).slice(0, 100)}`;
  return Array.isArray(result.structuredContent?.rows) ? 'ok' : 'no rows';
}

/* Same outcome: equal kinds; for `dos` cases every way of being stopped
 * (refused, timeout, limit, sql) counts as one (the corpus README). A case
 * the corpus expects to time out may also finish on one side: X009 takes
 * 1.9 to 2.2 s here against the 2 s limit, so which side wins is the
 * machine's speed (test_guard_corpus checks the timeout itself at 0.5 s). */
function same(c, a, b) {
  if (a === b) return true;
  const stopped = (k) => ['refused', 'timeout', 'limit', 'sql'].includes(k);
  if (c.category !== 'dos') return false;
  if (stopped(a) && stopped(b)) return true;
  return c.expect === 'timeout' && [a, b].every((k) => k === 'ok' || k === 'timeout');
}

/* A JSON string literal holding these bytes; bytes that are not valid
 * UTF-8 go in raw (a client that does that sends a broken message). */
function jsonStringOf(buf) {
  if (validUtf8(buf)) return Buffer.from(JSON.stringify(buf.toString('utf8')));
  const parts = [Buffer.from('"')];
  for (const b of buf) {
    if (b === 0x22 || b === 0x5c) parts.push(Buffer.from(`\\${String.fromCharCode(b)}`));
    else if (b < 0x20) parts.push(Buffer.from(`\\u${b.toString(16).padStart(4, '0')}`));
    else parts.push(Buffer.from([b]));
  }
  parts.push(Buffer.from('"'));
  return Buffer.concat(parts);
}

function runSqlLine(id, sqlBytes) {
  const text = JSON.stringify(modernRequest(id, 'tools/call', { name: 'run_sql', arguments: { sql: '@@SQL@@' } }));
  const [head, tail] = text.split('"@@SQL@@"');
  return Buffer.concat([Buffer.from(head), jsonStringOf(sqlBytes), Buffer.from(tail + '\n')]);
}

const pwned = () => fs.readdirSync('/tmp').filter((f) => f.startsWith('sqlguard-pwned'));

describe('the guard corpus through run_sql', { timeout: FAIL_AFTER }, () => {
  let sc, cli;
  const pwnedBefore = pwned();
  before(async () => {
    assert.ok(corpus.length >= 100, `the corpus has its cases (${corpus.length})`);
    sc = scratch();
    /* what the command line does with each case, on its own copy, two at a time */
    const cliCopy = scratch();
    cli = new Array(corpus.length);
    let next = 0;
    const worker = async () => {
      while (next < corpus.length) {
        const i = next++;
        cli[i] = await cliSql(cliCopy.db, corpus[i].sqlBytes,
          ['--timeout', TIMEOUT_S, '--max-rows', '1000', '--max-bytes', '1000000']);
      }
    };
    await Promise.all([worker(), worker()]);
    assert.ok(cliCopy.unchanged(), 'the CLI left its copy byte-identical');
  });

  test('stdio: every case ends as it does on the command line', async () => {
    const raw = new RawStdio(serveArgs(sc, { extra: ['--timeout', TIMEOUT_S] }), { cwd: sc.dir });
    const failures = [];
    let notCarried = 0;
    for (const [i, c] of corpus.entries()) {
      const want = cliOutcome(cli[i]);
      const from = raw.messages.length; // one case at a time: its reply comes next
      await raw.write(runSqlLine(c.id, c.sqlBytes));
      const reply = await raw.waitFor((m) => m.id === c.id || (m.id === null && m.error), { from, what: `the reply for ${c.id}` });
      if (!carriable(c.sqlBytes)) {
        /* the message itself is not valid JSON-RPC: nothing runs, as the CLI refuses it too */
        notCarried++;
        if (reply.error?.code !== -32700) failures.push(`${c.id}: SQL that JSON cannot carry should be a parse error, got ${JSON.stringify(reply).slice(0, 200)}`);
        if (!['refused', 'sql'].includes(want)) failures.push(`${c.id}: the CLI ${want} on bytes that are not UTF-8 text`);
        continue;
      }
      const got = reply.error ? `protocol error ${reply.error.code}` : mcpOutcome(reply.result);
      if (!same(c, got, want)) failures.push(`${c.id} (${c.category}, corpus: ${c.expect}): run_sql ${got}, tabletalk sql ${want}${reply.result ? ` — ${textOf(reply.result).slice(0, 160)}` : ''}`);
      /* the rows themselves, where they are deterministic */
      if (got === 'ok' && want === 'ok' && !c.expect.startsWith('capped') && c.category !== 'dos' && !/random/i.test(c.sql)) {
        const rows = reply.result.structuredContent;
        const cliRows = cli[i].json;
        if (rows.total_rows !== cliRows.row_count && !cliRows.truncated) failures.push(`${c.id}: run_sql counts ${rows.total_rows} rows, the CLI returned ${cliRows.row_count}`);
        const n = Math.min(rows.rows.length, cliRows.rows.length);
        /* the CLI exports blobs as \x hex, run_sql describes them */
        const described = cliRows.rows.slice(0, n).map((row) => row.map((v) =>
          (typeof v === 'string' && /^\\x([0-9a-f]{2})*$/.test(v) ? `<blob ${(v.length - 2) / 2} bytes>` : v)));
        if (JSON.stringify(rows.rows.slice(0, n)) !== JSON.stringify(described)) failures.push(`${c.id}: the rows differ from the CLI's`);
      }
    }
    const exit = await raw.close();
    assert.deepEqual(failures, [], `${failures.length} of ${corpus.length} cases differ:\n${failures.join('\n')}`);
    assert.ok(notCarried <= 3, `only the cases with raw invalid bytes or NUL cannot be sent (${notCarried})`);
    assert.equal(exit.code, 0, `the server ends cleanly (stderr: ${raw.stderr.slice(-500)})`);
    assert.ok(raw.messages.every((m) => m !== null), 'stdout carried only JSON messages');
    assert.ok(sc.unchanged(), 'the database is byte-identical after the corpus');
    assert.deepEqual(sc.strayFiles(), [], 'nothing was written next to the database');
    assert.deepEqual(pwned().filter((f) => !pwnedBefore.includes(f)), [], 'no /tmp/sqlguard-pwned* file appeared');
  });

  test('HTTP (2026-07-28): every case ends as it does on the command line', async () => {
    const hsc = scratch();
    const srv = await startHttp(serveArgs(hsc, { extra: ['--timeout', TIMEOUT_S] }), { cwd: hsc.dir });
    const failures = [];
    try {
      /* two clients at a time: the HTTP server runs requests concurrently */
      let next = 0;
      const worker = async () => {
        while (next < corpus.length) {
          const i = next++;
          const c = corpus[i];
          if (!carriable(c.sqlBytes)) continue; // stdio covers those
          const want = cliOutcome(cli[i]);
          const res = await postModern(srv.url, c.id, 'tools/call', { name: 'run_sql', arguments: { sql: c.sqlBytes.toString('utf8') } });
          const got = res.status !== 200 ? `HTTP ${res.status}` : res.json?.error ? `protocol error ${res.json.error.code}` : mcpOutcome(res.json?.result);
          if (!same(c, got, want)) failures.push(`${c.id} (${c.category}): run_sql ${got}, tabletalk sql ${want}`);
        }
      };
      await Promise.all([worker(), worker()]);
      assert.ok(srv.alive(), 'the server is still up');
    } finally {
      await srv.close();
    }
    assert.deepEqual(failures, [], `${failures.length} cases differ over HTTP:\n${failures.join('\n')}`);
    assert.ok(hsc.unchanged(), 'the database is byte-identical');
    assert.deepEqual(hsc.strayFiles(), []);
  });
});

describe('writes an MCP client might try', { timeout: FAIL_AFTER }, () => {
  const vacuumTarget = path.join(os.tmpdir(), `tabletalk-vacuum-${process.pid}-${Date.now()}.db`);
  const WRITES = {
    'DELETE': 'DELETE FROM Track',
    'DROP': 'DROP TABLE Track',
    'INSERT': "INSERT INTO Genre(Name) VALUES ('Pwned')",
    'UPDATE': 'UPDATE Track SET UnitPrice = 0',
    'ATTACH': `ATTACH DATABASE '${vacuumTarget}.attached' AS evil`,
    'PRAGMA user_version=42': 'PRAGMA user_version=42',
    'PRAGMA writable_schema=ON': 'PRAGMA writable_schema=ON',
    'a CTE ending in DELETE': 'WITH doomed AS (SELECT TrackId FROM Track LIMIT 10) DELETE FROM Track WHERE TrackId IN (SELECT TrackId FROM doomed)',
    'VACUUM INTO': `VACUUM INTO '${vacuumTarget}'`,
    'a SELECT followed by a DELETE': 'SELECT 1; DELETE FROM Track',
    'CREATE TABLE': 'CREATE TABLE pwned(x)',
    'BEGIN': 'BEGIN IMMEDIATE',
  };
  let model;
  before(async () => {
    /* a model that tries writes through ask_database (three failed
     * statements in a row is the agent's limit), then gives up */
    const tries = [WRITES.DELETE, WRITES['a CTE ending in DELETE'], WRITES['VACUUM INTO']];
    model = await startModel({
      rules: [
        ...tries.map((sql, i) => ({ when: { question: 'vandalise', step: i }, tool: 'run_sql', args: { sql } })),
        { when: { question: 'vandalise' }, tool: 'answer', args: { text: 'Nothing could be changed.' } },
      ],
    });
  });
  after(async () => {
    await model?.close();
    for (const f of [vacuumTarget, `${vacuumTarget}.attached`]) fs.rmSync(f, { force: true });
  });

  const check = (sc) => {
    assert.ok(sc.unchanged(), 'the database file is byte-identical');
    assert.ok(!fs.existsSync(vacuumTarget), 'VACUUM INTO created no file');
    assert.ok(!fs.existsSync(`${vacuumTarget}.attached`), 'ATTACH created no file');
    assert.deepEqual(sc.strayFiles(), [], 'no journal or other file next to the database');
  };

  test('stdio: each is refused by name and the file does not change', async () => {
    const sc = scratch();
    const raw = new RawStdio(serveArgs(sc), { cwd: sc.dir });
    let id = 1;
    for (const [what, sql] of Object.entries(WRITES)) {
      const res = await raw.request(modernRequest(id++, 'tools/call', { name: 'run_sql', arguments: { sql } }));
      assert.equal(res.result?.isError, true, `${what}: ${JSON.stringify(res)}`);
      assert.match(textOf(res.result), /^refused: /, `${what} is refused by the guard: ${textOf(res.result)}`);
      assert.equal(res.result.structuredContent, undefined, `${what}: no rows`);
      const cliRun = await cliSql(sc.db, sql);
      assert.equal(cliRun.json?.error?.kind, 'refused', `${what}: the CLI refuses it too`);
      assert.equal(cliRun.code, 3, `${what}: exit code 3 (refused)`);
    }
    /* and it still reads */
    const ok = await raw.request(modernRequest(id++, 'tools/call', { name: 'run_sql', arguments: { sql: 'SELECT count(*) FROM Track' } }));
    assert.equal(ok.result.structuredContent.rows[0][0], 3503);
    await raw.close();
    check(sc);
  });

  test('HTTP (2025 handshake): each is refused by name and the file does not change', async () => {
    const sc = scratch();
    const srv = await startHttp(serveArgs(sc), { cwd: sc.dir });
    try {
      const init = await post(srv.url, { jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } } });
      const session = init.headers.get('mcp-session-id');
      assert.ok(session, 'initialize opens a session');
      const headers = { 'Mcp-Session-Id': session, 'MCP-Protocol-Version': '2025-06-18' };
      let id = 1;
      for (const [what, sql] of Object.entries(WRITES)) {
        const res = await post(srv.url, { jsonrpc: '2.0', id: id++, method: 'tools/call', params: { name: 'run_sql', arguments: { sql } } }, { headers });
        assert.equal(res.status, 200);
        assert.equal(res.json.result?.isError, true, `${what}: ${res.text}`);
        assert.match(textOf(res.json.result), /^refused: /, what);
      }
    } finally {
      await srv.close();
    }
    check(sc);
  });

  test('through ask_database: a model that tries every write changes nothing', async () => {
    const sc = scratch();
    const raw = new RawStdio(serveArgs(sc, { model }), { cwd: sc.dir });
    const mark = model.requests.length;
    const res = await raw.request(modernRequest(1, 'tools/call', { name: 'ask_database', arguments: { question: 'Please vandalise the database' } }));
    await raw.close();
    const tools = model.requests.slice(mark).flatMap((r) => r.body.messages.filter((m) => m.role === 'tool'));
    const last = model.requests.at(-1).body.messages.filter((m) => m.role === 'tool');
    assert.ok(tools.length > 0 && last.length > 0, 'the model got tool results back');
    assert.ok(last.every((m) => /refused|not allowed|read-only|error/i.test(m.content)), `every write came back refused: ${last.map((m) => m.content.slice(0, 80)).join(' | ')}`);
    assert.ok(res.result, JSON.stringify(res));
    check(sc);
  });
});
