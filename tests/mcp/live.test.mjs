// A database an application writes while tabletalk reads it. tt-writer
// (tests/support/writer.c) commits without pause, in WAL and rollback
// mode, keeping n - deleted = count(log) in every transaction, deleting
// half the log, VACUUMing, checkpointing and (rollback mode) replacing the
// file by rename now and then; it prints each commit with its time. Four
// readers ask "SELECT n, deleted, (SELECT count(*) FROM log) FROM counter"
// meanwhile: `tabletalk sql`, serve-mcp's run_sql over stdio and over HTTP
// (its cache on), and `ask` through a scripted model. Every answer must be
// whole (the invariant holds: no mix of two versions of the file) and fresh
// (it includes every commit that finished before the request was sent), and
// no request may fail because the database was locked. Also here: the
// handshake does not wait for slow views, and a file name that is not UTF-8
// does not break it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { BIN, RawStdio, testEnv, startHttp, startModel, tempDir, waitForOutput } from '../support/harness.mjs';
import { modernRequest, postModern } from './protocol.mjs';

const WRITER = process.env.TT_WRITER;
const QUERY = 'SELECT n, deleted, (SELECT count(*) FROM log) AS logged FROM counter';
/* Each reader takes this many readings while the writer commits; then the
 * writer is stopped (its stdin closed): the amount of work, not a time. */
const READINGS = 5;


/* Starts the writer on a new database; resolves when it is ready. seconds
 * 0: it commits until stop() closes its stdin. */
function startWriter(db, mode, seconds, extra = []) {
  const child = spawn(WRITER, [db, mode, String(seconds), ...extra], { stdio: ['pipe', 'pipe', 'pipe'] });
  if (seconds > 0) child.stdin.end();
  const commits = []; // {n, t}: commit n had finished at time t
  let stderr = '', buf = '', readyResolve;
  const ready = new Promise((resolve) => { readyResolve = resolve; });
  child.stdout.setEncoding('utf8');
  child.stdout.on('data', (d) => {
    buf += d;
    let nl;
    while ((nl = buf.indexOf('\n')) >= 0) {
      const [kind, n, t] = buf.slice(0, nl).split(' ');
      buf = buf.slice(nl + 1);
      if (kind === 'ready') readyResolve();
      if (kind === 'c') commits.push({ n: Number(n), t: Number(t) });
    }
  });
  child.stderr.on('data', (d) => { stderr += d; });
  const done = new Promise((resolve) => child.on('exit', (code) => resolve(code)));
  return { ready, commits, done, stderr: () => stderr, stop: () => child.stdin.end() };
}

/* The last commit that had finished before time t (0 when none). */
function committedBefore(commits, t) {
  let n = 0;
  for (const c of commits) if (c.t < t && c.n > n) n = c.n;
  return n;
}

/* Checks one reading {sent, recv, row: [n, deleted, logged]} or {error}. */
function judge(label, reading, commits, problems) {
  if (reading.error) {
    problems.push(`${label}: failed: ${reading.error}`);
    return;
  }
  const [n, deleted, logged] = reading.row;
  if (n - deleted !== logged) problems.push(`${label}: mixed versions: n ${n} - deleted ${deleted} != logged ${logged}`);
  const floor = committedBefore(commits, reading.sent);
  if (n < floor) problems.push(`${label}: stale: n ${n}, but commit ${floor} had finished before the request${reading.cached ? ' (cached)' : ''}`);
}

/* Runs fn repeatedly until the writer is done; collects readings, and
 * calls enough() once it has READINGS of them. */
async function loop(writer, fn, enough) {
  const readings = [];
  let over = false;
  writer.done.then(() => { over = true; });
  while (!over) {
    if (readings.length === READINGS) enough();
    const sent = Date.now();
    try {
      const r = await fn();
      readings.push({ sent, recv: Date.now(), ...r });
    } catch (e) {
      readings.push({ sent, recv: Date.now(), error: String(e.message ?? e) });
    }
  }
  return readings;
}

function runCli(args, env = {}) {
  return new Promise((resolve) => {
    const child = spawn(BIN, args, { env: testEnv(env) });
    let out = '', err = '';
    child.stdout.on('data', (d) => { out += d; });
    child.stderr.on('data', (d) => { err += d; });
    child.on('close', (code) => resolve({ code, out, err }));
  });
}

async function live(mode, writerArgs) {
  const dir = tempDir('tabletalk-live-');
  const db = path.join(dir, 'app.sqlite');
  const writer = startWriter(db, mode, 0, writerArgs);
  /* the writer stops once every reader has its readings */
  let left = 4;
  const enough = () => { if (--left === 0) writer.stop(); };
  await writer.ready;
  const state = path.join(dir, 'state');
  const stdio = new RawStdio(['serve-mcp', db, '--state-dir', state], { cwd: dir });
  const http = await startHttp(['serve-mcp', db, '--state-dir', state], { cwd: dir });
  const model = await startModel({ rules: [
    { when: { step: 0 }, tool: 'run_sql', args: { sql: QUERY } },
    { when: { step: 1 }, tool: 'answer', args: { text: 'The counter is shown.' } },
  ] });
  let id = 0;
  const [cli, mcpStdio, mcpHttp, ask] = await Promise.all([
    loop(writer, async () => {
      const r = await runCli(['sql', db, QUERY, '--json']);
      const j = JSON.parse(r.out);
      if (j.error) throw new Error(`${j.error.kind}: ${j.error.message}`);
      return { row: j.rows[0] };
    }, enough),
    loop(writer, async () => {
      const res = await stdio.request(modernRequest(++id, 'tools/call', { name: 'run_sql', arguments: { sql: QUERY } }));
      const sc = res.result?.structuredContent;
      if (!sc || res.result.isError) throw new Error(JSON.stringify(res).slice(0, 300));
      return { row: sc.rows[0], cached: sc.cached };
    }, enough),
    loop(writer, async () => {
      const res = await postModern(http.url, ++id, 'tools/call', { name: 'run_sql', arguments: { sql: QUERY } });
      const sc = res.json?.result?.structuredContent;
      if (!sc || res.json.result.isError) throw new Error(res.text.slice(0, 300));
      return { row: sc.rows[0], cached: sc.cached };
    }, enough),
    loop(writer, async () => {
      const r = await runCli(['ask', db, 'What is the counter?', '--base-url', model.url, '--state-dir', state, '--json']);
      const j = JSON.parse(r.out);
      if (j.status !== 'answered') throw new Error(`${j.status}: ${j.error}`);
      return { row: j.rows[0] };
    }, enough),
  ]);
  assert.equal(await writer.done, 0, writer.stderr());
  const problems = [];
  const counts = {};
  for (const [label, readings] of Object.entries({ cli, mcpStdio, mcpHttp, ask })) {
    counts[label] = readings.length;
    for (const r of readings) judge(label, r, writer.commits, problems);
  }
  const cachedHits = [...mcpStdio, ...mcpHttp].filter((r) => r.cached).length;
  console.log(`${mode}: ${writer.commits.length} commits; readings ${JSON.stringify(counts)}, ${cachedHits} cache hits`);
  await stdio.close();
  await http.close();
  assert.deepEqual(problems.slice(0, 20), [], `${problems.length} wrong or failed answers`);
  for (const [label, n] of Object.entries(counts)) assert.ok(n >= READINGS, `${label}: only ${n} readings`);
  const leftovers = fs.readdirSync(dir).filter((f) => !['app.sqlite', 'app.sqlite-wal', 'app.sqlite-shm', 'state'].includes(f));
  assert.deepEqual(leftovers, [], 'tabletalk created no file beside the database');
}

test('WAL: every answer whole and fresh while the application commits, deletes, VACUUMs and checkpoints', { skip: !WRITER && 'no tt-writer' }, async () => {
  await live('wal', ['--churn', '40']);
});

test('rollback journal: every answer whole and fresh, no "locked" failure, the file replaced by rename now and then', { skip: !WRITER && 'no tt-writer' }, async () => {
  await live('rollback', ['--churn', '40', '--replace', '25']);
});

test('the handshake does not wait for slow views, and describe_schema comes once they are skipped', { skip: !WRITER && 'no tt-writer' }, async () => {
  const dir = tempDir('tabletalk-slow-');
  const db = path.join(dir, 'slow.sqlite');
  const w = startWriter(db, 'rollback', 0.01);
  await w.ready;
  await w.done;
  const views = Array.from({ length: 30 }, (_, i) =>
    `CREATE VIEW v${i} AS WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n) SELECT count(*) AS c FROM n;`).join('');
  const r = await runCli(['sql', db, 'SELECT 1']); // the file exists and reads
  assert.equal(r.code, 0, r.err);
  const { execFileSync } = await import('node:child_process');
  execFileSync('sqlite3', [db, views]);
  // no time limit on the start's reading (TABLETALK_SCHEMA_SECONDS=0), so
  // that describe_schema waits for every view's verdict on any machine (a
  // limit that runs out first leaves them "not read yet", said as such)
  const srv = new RawStdio(['serve-mcp', db, '--state-dir', path.join(dir, 'state')],
    { cwd: dir, env: { TABLETALK_SCHEMA_SECONDS: '0' } });
  // the handshake is answered before the schema is read (it never waits for
  // the catalog, and giving up on each view's rows takes its steps of work):
  // its instructions do not count the tables yet, as they do once the
  // schema is in ("1 table or view: ...")
  const init = await srv.request(modernRequest(1, 'server/discover'));
  assert.match(init.result?.instructions ?? '', /\(describe_schema lists its tables and views\)/, JSON.stringify(init));
  const desc = await srv.request(modernRequest(2, 'tools/call', { name: 'describe_schema', arguments: { tables: ['v0'] } }));
  assert.match(desc.result.content[0].text, /no example values: the view takes too much work to read/);
  await srv.close();
});

test('a file name and a table name that are not UTF-8 do not break the handshake, and stay queryable', async () => {
  const dir = tempDir('tabletalk-bytes-');
  /* bash makes the bytes: Node would send its strings as UTF-8 */
  const { execFileSync } = await import('node:child_process');
  execFileSync('bash', ['-c', `sqlite3 "$(printf 'caf\\xe9.sqlite')" "$(printf 'CREATE TABLE "t\\xe9"(x); INSERT INTO "t\\xe9" VALUES (1);')"`], { cwd: dir });
  const child = spawn('bash', ['-c', `exec "$0" serve-mcp "$(printf 'caf\\xe9.sqlite')" --state-dir state`, BIN], { cwd: dir, env: testEnv() });
  let out = '';
  child.stdout.on('data', (d) => { out += d; });
  const send = (m) => child.stdin.write(JSON.stringify(m) + '\n');
  // describe_schema first: its reply comes once the schema is read, so the
  // handshake after it can name the table (before, it says only that
  // describe_schema lists them)
  const described = waitForOutput(child.stdout, /"id":3\b/, { what: 'the describe_schema reply' });
  send(modernRequest(3, 'tools/call', { name: 'describe_schema', arguments: {} }));
  await described;
  send(modernRequest(1, 'server/discover'));
  send(modernRequest(2, 'tools/list'));
  send(modernRequest(4, 'tools/call', { name: 'run_sql', arguments: { sql: 'SELECT x FROM "t\\xE9"' } }));
  // the four replies are all in once it has exited after its input ended
  child.stdin.end();
  await new Promise((resolve) => child.on('close', resolve));
  const byId = Object.fromEntries(out.trim().split('\n').map((l) => JSON.parse(l)).map((m) => [m.id, m]));
  assert.match(byId[1].result.instructions, /caf\\xE9\.sqlite \(1 table or view: t\\xE9\)/);
  assert.ok(byId[2].result.tools.length >= 3);
  assert.match(byId[3].result.content[0].text, /# Table: "?t\\xE9/);
  assert.deepEqual(byId[4].result.structuredContent.rows, [[1]], JSON.stringify(byId[4]));
});
