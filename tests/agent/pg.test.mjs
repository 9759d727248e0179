// PostgreSQL as the database, through the real binary and the scripted
// model server: `ask` on a postgresql:// URI (the pg_server fixture's server,
// chinook loaded; skipped without TT_PG_URI_FILE) — the model is told it
// writes PostgreSQL, sees the tables, its SQL runs on the server; a write
// it tries is refused with exit 3; the password is in no output, trace or
// thread.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { run, server, tempDir } from './harness.mjs';

const uriFile = process.env.TT_PG_URI_FILE;
const base = uriFile && fs.existsSync(uriFile) ? fs.readFileSync(uriFile, 'utf8').trim() : '';
const skip = base ? false : 'TT_PG_URI_FILE names no server URI (the pg_server fixture writes it)';
const sql = (s) => ({ tool: 'run_sql', args: { sql: s } });
const answer = (text) => ({ tool: 'answer', args: { text } });

/* The fixture's URI with a password that must never be shown. */
function withPassword(uri) {
  return uri + (uri.includes('?') ? '&' : '?') + 'password=Sw0rdFish';
}

/* Every file under dir, as text. */
function allText(dir) {
  if (!fs.existsSync(dir)) return '';
  return fs.readdirSync(dir, { recursive: true }).map((f) => path.join(dir, f))
    .filter((f) => fs.statSync(f).isFile()).map((f) => fs.readFileSync(f, 'latin1')).join('\n');
}

test('ask on a PostgreSQL URI: PostgreSQL prompt, SQL runs on the server, no password anywhere', { skip }, async () => {
  const state = path.join(tempDir('tabletalk-pg-state-'), 'state');
  const uri = withPassword(base);
  const srv = await server({ rules: [
    { when: { step: 0 }, ...sql('SELECT count(*) AS n FROM "Track"') },
    { when: { step: 1 }, ...answer('There are 3503 tracks.') },
  ] });
  const r = await run(['ask', uri, 'How many tracks?', '--base-url', srv.url, '--state-dir', state, '--json']);
  await srv.close();
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.json.answer, 'There are 3503 tracks.');
  const prompt = srv.requests[0].body.messages.map((m) => m.content ?? '').join('\n');
  assert.match(prompt, /questions about a PostgreSQL database/);
  assert.doesNotMatch(prompt, /SQLite/);
  assert.match(prompt, /# Table: Track/);
  const tool = srv.requests[1].body.messages.filter((m) => m.role === 'tool').at(-1).content;
  assert.match(tool, /3503/);
  const seen = r.stdout + r.stderr + JSON.stringify(srv.requests) + allText(state);
  assert.doesNotMatch(seen, /Sw0rdFish/);
});

test('ask on a PostgreSQL URI: a name PostgreSQL folded to lower case gets a hint to quote it', { skip }, async () => {
  const state = path.join(tempDir('tabletalk-pg-state-'), 'state');
  const srv = await server({ rules: [
    { when: { step: 0 }, ...sql('SELECT count(*) AS n FROM Track') },
    { when: { step: 1 }, ...sql('SELECT t.nme FROM "Track" t LIMIT 1') },
    { when: { step: 2 }, ...answer('Done.') },
  ] });
  const r = await run(['ask', base, 'How many tracks?', '--base-url', srv.url, '--state-dir', state, '--json']);
  await srv.close();
  assert.equal(r.code, 0, r.stderr);
  const tools = (i) => srv.requests[i].body.messages.filter((m) => m.role === 'tool').at(-1).content;
  assert.match(tools(1), /relation "track" does not exist/);
  assert.match(tools(1), /did you mean "Track"\? \(PostgreSQL folds unquoted names to lower case/);
  assert.match(tools(2), /column t\.nme does not exist/);
  assert.match(tools(2), /did you mean t\.Name\?/);
});

test('ask on a PostgreSQL URI: a write the model tries is refused, the data unchanged', { skip }, async () => {
  const state = path.join(tempDir('tabletalk-pg-state-'), 'state');
  const srv = await server({ rules: [
    { when: { step: 0 }, ...sql('DELETE FROM "Track"') },
    { when: { step: 1 }, ...answer('I cannot change data.') },
  ] });
  const r = await run(['ask', base, 'Delete every track', '--base-url', srv.url, '--state-dir', state, '--json']);
  await srv.close();
  const tool = srv.requests[1]?.body.messages.filter((m) => m.role === 'tool').at(-1).content ?? '';
  assert.match(tool + r.stderr + r.stdout, /not allowed/);
  const c = await run(['sql', base, 'SELECT count(*) FROM "Track"', '--json']);
  assert.equal(c.code, 0, c.stderr);
  assert.deepEqual(c.json.rows, [[3503]]);
});

/* The fixture's URI as PG* variables, for `--db-url postgresql://`. */
function pgEnv(uri) {
  const m = /^[a-z]+:\/\/(?:([^@/?]*)@)?([^/?:]*)(?::(\d+))?\/?([^?]*)(?:\?(.*))?$/i.exec(uri);
  const q = new URLSearchParams(m[5] || '');
  return {
    PGHOST: q.get('host') || decodeURIComponent(m[2]), PGPORT: q.get('port') || m[3] || '5432',
    PGUSER: q.get('user') || decodeURIComponent((m[1] || '').split(':')[0]),
    PGDATABASE: q.get('dbname') || decodeURIComponent(m[4]),
  };
}

test('ask --db-url postgresql:// with PG* variables and --schemas: the model sees the kept schema, its SQL runs', { skip }, async () => {
  const state = path.join(tempDir('tabletalk-pg-state-'), 'state');
  const srv = await server({ rules: [
    { when: { step: 0 }, ...sql('SELECT count(*) AS n FROM "Album"') },
    { when: { step: 1 }, ...answer('There are 347 albums.') },
  ] });
  const r = await run(['ask', '--db-url', 'postgresql://', 'How many albums?', '--schemas', 'public',
    '--base-url', srv.url, '--state-dir', state, '--json'], { env: pgEnv(base) });
  await srv.close();
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.json.answer, 'There are 347 albums.');
  const prompt = srv.requests[0].body.messages.map((m) => m.content ?? '').join('\n');
  assert.match(prompt, /# Table: Album/);
  const tool = srv.requests[1].body.messages.filter((m) => m.role === 'tool').at(-1).content;
  assert.match(tool, /347/);

  // a schema list that keeps no table fails before the model is asked,
  // naming the schemas there are
  const none = await server({ rules: [{ when: { step: 0 }, ...answer('No tables.') }] });
  const n = await run(['ask', '--db-url', 'postgresql://', 'How many albums?', '--schemas', '!public',
    '--base-url', none.url, '--state-dir', state], { env: pgEnv(base) });
  await none.close();
  assert.equal(n.code, 1, n.stderr);
  assert.match(n.stderr, /--schemas !public keeps no table; the schemas with tables are: public/);
  assert.equal(none.requests.length, 0);
});
