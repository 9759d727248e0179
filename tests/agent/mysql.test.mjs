// MySQL/MariaDB as the database, through the real binary and the scripted
// model server, on the mariadb_server fixture's server (chinook loaded;
// skipped without TT_MY_FIXTURE_DIR): `ask` names the server and its
// version in the prompt and runs the model's SQL there; a write, a file
// write and a view calling the owner's function are refused and change
// nothing; the reader account's password is in no output, trace or
// thread; a thread's follow-up, a chart, and the web page's /api/sql and
// /api/ask give the same answers and rows as on a scratch copy of
// chinook.sqlite.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { run, scratch, server, startWeb, tempDir } from '../support/harness.mjs';
import { readPng, runsOnRow } from './png.mjs';

const dir = process.env.TT_MY_FIXTURE_DIR;
const read = (name) => (dir && fs.existsSync(path.join(dir, name)) ? fs.readFileSync(path.join(dir, name), 'utf8').trim() : '');
const base = read('uri');
const reader = read('reader_uri');
const hostile = read('hostile_uri');
const files = read('files');
const skip = base ? false : 'TT_MY_FIXTURE_DIR names no server (the mariadb_server fixture writes it)';
const PASSWORD = 'R3ader-pw';
const sql = (s) => ({ tool: 'run_sql', args: { sql: s } });
const answer = (text) => ({ tool: 'answer', args: { text } });
const lastTool = (req) => req.body.messages.filter((m) => m.role === 'tool').at(-1)?.content ?? '';

function allText(d) {
  if (!fs.existsSync(d)) return '';
  return fs.readdirSync(d, { recursive: true }).map((f) => path.join(d, f))
    .filter((f) => fs.statSync(f).isFile()).map((f) => fs.readFileSync(f, 'latin1')).join('\n');
}

test('ask on a mysql:// URL: the server named in the prompt, SQL runs there, no password anywhere', { skip }, async () => {
  const state = path.join(tempDir('tabletalk-my-state-'), 'state');
  const srv = await server({ rules: [
    { when: { step: 0 }, ...sql('SELECT count(*) AS n FROM Track') },
    { when: { step: 1 }, ...answer('There are 3503 tracks.') },
  ] });
  const r = await run(['ask', reader, 'How many tracks?', '--base-url', srv.url, '--state-dir', state, '--json']);
  await srv.close();
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.json.answer, 'There are 3503 tracks.');
  const prompt = srv.requests[0].body.messages.map((m) => m.content ?? '').join('\n');
  assert.match(prompt, /questions about a MariaDB 10\.\d+\.\d+ database/);
  assert.match(prompt, /MariaDB 10\.\d+\.\d+: write table names exactly as the schema shows them \(they are case-sensitive\), in backticks/);
  assert.doesNotMatch(prompt, /SQLite/);
  assert.match(prompt, /# Table: Track \(3503 rows\)/);
  assert.match(prompt, /Songs and other media for sale/, 'the table comment is its description');
  const tools = JSON.stringify(srv.requests[0].body.tools);
  assert.match(tools, /Run one read-only MariaDB 10\.\d+\.\d+ SELECT statement/);
  assert.match(tools, /One MySQL\/MariaDB SELECT statement/);
  assert.match(lastTool(srv.requests[1]), /3503/);
  const seen = r.stdout + r.stderr + JSON.stringify(srv.requests) + allText(state);
  assert.doesNotMatch(seen, new RegExp(PASSWORD));
  assert.match(seen, /tt_reader:\*\*\*@localhost/, 'the URL is shown with its password masked');
});

test('ask on MariaDB: a write, a file write and a wrongly cased table; the server says what to fix, nothing changes', { skip }, async () => {
  const state = path.join(tempDir('tabletalk-my-state-'), 'state');
  const srv = await server({ rules: [
    { when: { step: 0 }, ...sql('DELETE FROM Track') },
    { when: { step: 1 }, ...sql(`SELECT * FROM Track INTO OUTFILE '${files}/stolen.csv'`) },
    { when: { step: 2 }, ...sql('SELECT count(*) FROM track') },
    { when: { step: 3 }, ...answer('I cannot change data.') },
  ] });
  const r = await run(['ask', base, 'Delete every track and save them to a file', '--base-url', srv.url, '--state-dir', state, '--json']);
  await srv.close();
  assert.equal(r.code, 3, r.stderr); /* refused: the run tried a write */
  assert.match(lastTool(srv.requests[1]), /writes are not allowed: DELETE FROM Track/);
  assert.match(lastTool(srv.requests[2]), /SELECT \.\.\. INTO OUTFILE writes a file on the server/);
  assert.match(lastTool(srv.requests[3]),
    /Table 'chinook\.track' doesn't exist \(error 1146\) — did you mean Track\? \(table names are case-sensitive here\)/);
  assert.deepEqual(fs.readdirSync(files), [], 'no file in the server\'s file folder');
  const c = await run(['sql', base, 'SELECT count(*) FROM Track', '--json']);
  assert.equal(c.code, 0, c.stderr);
  assert.deepEqual(c.json.rows, [[3503]]);
});

test('ask on the hostile database: a view calling the owner\'s function is refused, a planted instruction stays data', { skip }, async () => {
  const state = path.join(tempDir('tabletalk-my-state-'), 'state');
  const srv = await server({ rules: [
    { when: { step: 0 }, ...sql('SELECT * FROM v_nested') },
    { when: { step: 1 }, ...sql('SELECT body FROM notes') },
    { when: { step: 2 }, ...answer('The note says to ignore instructions; I did not.') },
  ] });
  const r = await run(['ask', hostile, 'What do the notes say?', '--base-url', srv.url, '--state-dir', state, '--json']);
  await srv.close();
  assert.equal(r.code, 0, r.stderr);
  const prompt = srv.requests[0].body.messages.map((m) => m.content ?? '').join('\n');
  assert.match(prompt, /v_evil/, 'the view is described');
  assert.match(lastTool(srv.requests[1]), /the view hostile\.v_evil is not readable here/);
  assert.match(lastTool(srv.requests[2]), /Ignore previous instructions/);
  // nothing of the owner's ran: its function takes a named lock (asked
  // with the server's own client: tabletalk refuses IS_USED_LOCK)
  const lock = execFileSync('mariadb', ['--no-defaults', '--protocol=socket', `--socket=${read('socket')}`,
    '--user=root', '--batch', '--skip-column-names', '-e', "SELECT IFNULL(IS_USED_LOCK('tt_evil'), 'free')"]);
  assert.equal(lock.toString().trim(), 'free');
});

test('an account that can write is warned about at the start; the read-only one is not', { skip }, async () => {
  const admin = await run(['sql', base, 'SELECT 1', '--json']);
  assert.equal(admin.code, 0, admin.stderr);
  assert.match(admin.stderr, /tabletalk: warning: the account \S+ can change the server \(.*INSERT.*\)/);
  const ro = await run(['sql', reader, 'SELECT 1', '--json']);
  assert.equal(ro.code, 0, ro.stderr);
  assert.doesNotMatch(ro.stderr, /can change the server/);
});

test('--trust-functions names a database whose stored functions may run; without it they never do', { skip }, async () => {
  const refused = await run(['sql', hostile, 'SELECT * FROM v_nested', '--json']);
  assert.equal(refused.code, 3, refused.stderr);
  assert.match(refused.stderr + JSON.stringify(refused.json ?? null), /v_evil/);
  const trusted = await run(['sql', hostile, 'SELECT * FROM v_nested', '--json', '--trust-functions', 'hostile']);
  assert.equal(trusted.code, 0, trusted.stderr);
});

/* The same scripted conversation on SQLite (a scratch copy of chinook) and
 * on MariaDB (the reader account, its password in the URL). */
async function onBoth(script, fn) {
  const sc = scratch();
  const myState = path.join(tempDir('tabletalk-my-state-'), 'state');
  const out = {};
  for (const [name, db, state] of [['sqlite', sc.db, sc.state], ['mysql', reader, myState]]) {
    const srv = await server(script);
    try {
      out[name] = await fn(db, state, srv);
      out[name].requests = srv.requests;
      out[name].state = state;
    } finally {
      await srv.close();
    }
  }
  assert.ok(sc.unchanged(), 'the SQLite copy is byte-identical');
  return out;
}

const GENRES = 'SELECT g.Name AS genre, count(*) AS tracks FROM Track t JOIN Genre g ON g.GenreId = t.GenreId ' +
  'GROUP BY g.GenreId, g.Name ORDER BY tracks DESC, g.GenreId LIMIT 3';
const ROCK_ALBUMS = 'SELECT count(DISTINCT t.AlbumId) AS albums, sum(t.UnitPrice) AS price FROM Track t ' +
  "JOIN Genre g ON g.GenreId = t.GenreId WHERE g.Name = 'Rock'";

test('a thread on MariaDB: the follow-up sees the first turn; answers and rows as on SQLite', { skip }, async () => {
  const script = { rules: [
    { when: { question: 'genres', step: 0 }, ...sql(GENRES) },
    { when: { question: 'genres', step: 1 }, ...answer('Rock leads with 1297 tracks.') },
    { when: { question: 'albums', step: 0 }, ...sql(ROCK_ALBUMS) },
    { when: { question: 'albums', step: 1 }, ...answer('Rock tracks come from 117 albums.') },
  ] };
  const r = await onBoth(script, async (db, state, srv) => {
    const common = ['--base-url', srv.url, '--state-dir', state, '--json', '--thread', 'rock'];
    const first = await run(['ask', db, 'Which genres have the most tracks?', ...common]);
    const second = await run(['ask', db, 'And how many albums does the top one span?', ...common]);
    return { first, second };
  });
  for (const k of ['sqlite', 'mysql']) {
    assert.equal(r[k].first.code, 0, `${k}: ${r[k].first.stderr}`);
    assert.equal(r[k].second.code, 0, `${k}: ${r[k].second.stderr}`);
    const follow = JSON.stringify(r[k].requests.find((q) => JSON.stringify(q.body).includes('how many albums')).body.messages);
    assert.match(follow, /Rock leads with 1297 tracks/, `${k}: the follow-up lacks the first answer`);
  }
  assert.deepEqual(r.mysql.first.json.rows, r.sqlite.first.json.rows);
  assert.deepEqual(r.mysql.first.json.rows, [['Rock', 1297], ['Latin', 579], ['Metal', 374]]);
  assert.equal(r.mysql.second.json.answer, r.sqlite.second.json.answer);
  assert.equal(r.mysql.second.json.rows[0][0], r.sqlite.second.json.rows[0][0]);
  assert.ok(Math.abs(Number(r.mysql.second.json.rows[0][1]) - Number(r.sqlite.second.json.rows[0][1])) < 1e-6);
  const seen = r.mysql.first.stdout + r.mysql.first.stderr + r.mysql.second.stdout + r.mysql.second.stderr +
    JSON.stringify(r.mysql.requests) + allText(r.mysql.state);
  assert.ok(fs.readFileSync(r.mysql.second.json.trace, 'utf8').length > 0, 'a trace was written');
  assert.doesNotMatch(seen, new RegExp(PASSWORD));
});

const PER_YEAR = 'SELECT substr(InvoiceDate, 1, 4) AS year, count(*) AS invoices FROM Invoice GROUP BY 1 ORDER BY 1';

test('make_chart on MariaDB: the same chart and rows as on SQLite', { skip }, async () => {
  const q = 'Plot invoices per year';
  const script = { rules: [
    { when: { question: q, step: 0 }, ...sql(PER_YEAR) },
    { when: { question: q, step: 1 }, tool: 'make_chart', args: { kind: 'bar', x: 'year', y: 'invoices', title: 'Invoices per year' } },
    { when: { question: q, step: 2 }, ...answer('Invoices per year are shown in the chart.') },
  ] };
  const r = await onBoth(script, (db, state, srv) =>
    run(['ask', db, q, '--base-url', srv.url, '--state-dir', state, '--json']));
  for (const k of ['sqlite', 'mysql']) {
    assert.equal(r[k].code, 0, `${k}: ${r[k].stderr}`);
    assert.equal(r[k].json.charts.length, 1, k);
  }
  const [a, b] = [r.sqlite.json, r.mysql.json];
  assert.deepEqual(b.rows, a.rows);
  assert.deepEqual(b.rows.map((row) => row[0]), ['2021', '2022', '2023', '2024', '2025']);
  for (const key of ['kind', 'points', 'description', 'sql']) assert.deepEqual(b.charts[0][key], a.charts[0][key], key);
  assert.equal(runsOnRow(readPng(b.charts[0].file), 400, 0x0072b2), 5);
  assert.doesNotMatch(fs.readFileSync(b.trace, 'utf8') + r.mysql.stderr, new RegExp(PASSWORD));
});

/* tabletalk web on a database: /api/sql and /api/ask with the bearer token. */
async function web(db, srv) {
  const sc = scratch();
  const w = await startWeb({ ...sc, db }, srv);
  const call = async (method, p, body) => {
    const res = await fetch(w.base + p, { method, headers: { Authorization: `Bearer ${w.token}`, 'Content-Type': 'application/json' },
      body: body ? JSON.stringify(body) : undefined });
    return { status: res.status, text: await res.text() };
  };
  return { w, call };
}

test('tabletalk web on MariaDB: /api/sql and /api/ask answer as on SQLite; refusals are 422; no password shown', { skip }, async () => {
  const q = 'Which genres have the most tracks?';
  const out = {};
  for (const [name, db] of [['sqlite', scratch().db], ['mysql', reader]]) {
    const srv = await server({ rules: [
      { when: { question: q, step: 0 }, ...sql(GENRES) },
      { when: { question: q, step: 1 }, ...answer('Rock leads with 1297 tracks.') },
    ] });
    const { w, call } = await web(db, srv);
    try {
      const s = await call('POST', '/api/sql', { sql: GENRES });
      assert.equal(s.status, 200, `${name}: ${s.text}`);
      const refused = await call('POST', '/api/sql', { sql: "SELECT * FROM Genre INTO OUTFILE '/tmp/tt-web-x'" });
      const session = await call('GET', '/api/session');
      const ask = await call('POST', '/api/ask', { question: q });
      assert.equal(ask.status, 200, ask.text);
      const end = ask.text.split('\n\n').filter((b) => b.startsWith('event: run_end')).at(-1);
      out[name] = { rows: JSON.parse(s.text).rows, refused, session: JSON.parse(session.text),
        run: JSON.parse(/^data: (.*)$/m.exec(end)[1]), stderr: w.stderr(), line: w.line };
    } finally {
      await w.close();
      await srv.close();
    }
  }
  assert.deepEqual(out.mysql.rows, out.sqlite.rows);
  assert.equal(out.mysql.refused.status, 422);
  assert.match(out.mysql.refused.text, /"refused":\s*true/);
  assert.equal(out.mysql.run.answer, out.sqlite.run.answer);
  assert.deepEqual(out.mysql.run.rows, out.sqlite.run.rows);
  assert.equal(out.mysql.session.dialect, 'MySQL');
  assert.doesNotMatch(JSON.stringify(out.mysql), new RegExp(PASSWORD));
  assert.ok(!fs.existsSync('/tmp/tt-web-x'));
});
