// Bounded output never loses a row: a SQLite file (made here) holds a row
// whose one cell is 1,000,000 bytes, more than the byte limit with the row's
// id. Through `ask` (the run's JSON, the Markdown export and what the
// scripted model is sent) and the web page's /api/sql, the row is there, its
// cell cut at the bound and followed by "…[cut N bytes]", and the cut cells
// are counted. (`sql`'s table, JSON, CSV and TSV: tests/integration/test_cli.c;
// MCP's run_sql: tests/mcp/bounded.test.mjs.)
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { run, server, startWeb, tempDir } from '../support/harness.mjs';

const SQL = 'SELECT id, note FROM t';

/* A folder with bigcell.sqlite: t(id, note), one row, its note 1,000,000 bytes. */
function bigCell() {
  const dir = tempDir('tabletalk-bounded-');
  const db = path.join(dir, 'bigcell.sqlite');
  execFileSync('sqlite3', [db, "CREATE TABLE t(id INTEGER, note TEXT); "
    + "INSERT INTO t VALUES (7, replace(hex(zeroblob(500000)), '00', 'ab'));"]);
  return { dir, db, state: path.join(dir, 'state') };
}

/* 1,000,000 bytes of limit: the id's 8, then 999,992 of the note. */
const KEPT = 999992;
const MARK = '…[cut 8 bytes]';

test('ask: the row with a 1,000,000-byte cell reaches the run, the Markdown and the model, cut and marked', async () => {
  const b = bigCell();
  const srv = await server({ rules: [
    { when: { step: 0 }, tool: 'run_sql', args: { sql: SQL } },
    { when: { step: 1 }, tool: 'answer', args: { text: 'The note of row 7 is a long run of ab.' } },
  ] });
  const r = await run(['ask', b.db, 'What is the note?', '--base-url', srv.url, '--state-dir', b.state, '--json']);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.json.row_count, 1);
  assert.equal(r.json.cells_cut, 1);
  assert.equal(r.json.rows[0][0], 7);
  assert.equal(r.json.rows[0][1].length, KEPT + MARK.length);
  assert.ok(r.json.rows[0][1].endsWith(`ab${MARK}`));
  /* the model read the row: the start of the value, the mark counting all
   * it was not shown (the view keeps 300 characters), and a line saying so */
  const tool = srv.requests[1].body.messages.filter((m) => m.role === 'tool').at(-1).content;
  assert.match(tool, /1 long value was cut to fit the byte limit \(marked …\[cut N bytes\]\)/);
  assert.match(tool, /\n\[7,"abab[ab]*…\[cut 999,700 bytes\]"\]\n/);

  const md = await run(['ask', b.db, 'What is the note?', '--base-url', srv.url, '--state-dir', b.state,
    '--format', 'markdown']);
  await srv.close();
  assert.equal(md.code, 0, md.stderr);
  assert.match(md.stdout, /\| 7 \| abab[ab]*…\[cut 8 bytes\] \|/);
  assert.match(md.stdout, /_\(1 cell cut to fit the byte limit\)_/);
});

test('web: /api/sql gives the row with its cell cut and marked, and the count', async () => {
  const b = bigCell();
  const srv = await server({ rules: [{ text: 'unused' }] });
  const w = await startWeb(b, srv);
  /* logged in as a browser is: the token for a cookie, then the CSRF token */
  const entry = await fetch(`${w.base}/?token=${w.token}`, { redirect: 'manual' });
  assert.equal(entry.status, 303);
  const cookie = entry.headers.get('set-cookie').split(';')[0];
  const session = await (await fetch(`${w.base}/api/session`, { headers: { Cookie: cookie } })).json();
  const answer = await fetch(`${w.base}/api/sql`, { method: 'POST',
    headers: { Cookie: cookie, 'X-CSRF-Token': session.csrf, 'Content-Type': 'application/json' },
    body: JSON.stringify({ sql: SQL }) });
  const res = { status: answer.status, json: await answer.json() };
  assert.equal(res.status, 200, JSON.stringify(res.json).slice(0, 300));
  assert.equal(res.json.row_count, 1);
  assert.equal(res.json.cells_cut, 1);
  assert.equal(res.json.truncated, false);
  assert.equal(res.json.rows[0][0], 7);
  assert.equal(res.json.rows[0][1].length, KEPT + MARK.length);
  assert.ok(res.json.rows[0][1].endsWith(MARK));
  await w.close();
  await srv.close();
});
