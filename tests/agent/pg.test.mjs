// PostgreSQL as the database, through the real binary and the scripted
// model server: `ask` on a postgresql:// URI (the pg_server fixture's server,
// chinook loaded; skipped without TT_PG_URI_FILE) — the model is told it
// writes PostgreSQL, sees the tables, its SQL runs on the server; a write
// it tries is refused with exit 3; the password is in no output, trace or
// thread. A thread's follow-up and a make_chart run give the same answer,
// rows and chart on PostgreSQL as on a scratch copy of chinook.sqlite.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { run, scratch, server, tempDir } from '../support/harness.mjs';
import { readPng, runsOnRow } from './png.mjs';

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

/* The same scripted conversation on SQLite (a scratch copy of chinook) and
 * on PostgreSQL (the fixture's server, a password in the URI): run(db,
 * state) for each, with the SQL written once for both (quoted names). */
async function onBoth(script, fn) {
  const sc = scratch();
  const pgState = path.join(tempDir('tabletalk-pg-state-'), 'state');
  const out = {};
  for (const [name, db, state] of [['sqlite', sc.db, sc.state], ['pg', withPassword(base), pgState]]) {
    const srv = await server(script);
    try {
      out[name] = await fn(db, state, srv);
      out[name].requests = srv.requests;
      out[name].state = state;
    } finally {
      await srv.close();
    }
  }
  return out;
}

const GENRES = 'SELECT g."Name" AS genre, count(*) AS tracks FROM "Track" t JOIN "Genre" g ON g."GenreId" = t."GenreId" ' +
  'GROUP BY g."GenreId", g."Name" ORDER BY tracks DESC, g."GenreId" LIMIT 3';
const ROCK_ALBUMS = 'SELECT count(DISTINCT t."AlbumId") AS albums, sum(t."UnitPrice") AS price FROM "Track" t ' +
  'JOIN "Genre" g ON g."GenreId" = t."GenreId" WHERE g."Name" = \'Rock\'';

test('a thread on PostgreSQL: the follow-up sees the first turn; answers and rows as on SQLite', { skip }, async () => {
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
  for (const k of ['sqlite', 'pg']) {
    assert.equal(r[k].first.code, 0, `${k}: ${r[k].first.stderr}`);
    assert.equal(r[k].second.code, 0, `${k}: ${r[k].second.stderr}`);
    /* the follow-up request carried the first question and its answer */
    const follow = JSON.stringify(r[k].requests.find((q) => JSON.stringify(q.body).includes('how many albums')).body.messages);
    assert.match(follow, /Which genres have the most tracks\?/, `${k}: the follow-up lacks the first question`);
    assert.match(follow, /Rock leads with 1297 tracks/, `${k}: the follow-up lacks the first answer`);
  }
  assert.deepEqual(r.pg.first.json.rows, r.sqlite.first.json.rows);
  assert.deepEqual(r.pg.first.json.rows, [['Rock', 1297], ['Latin', 579], ['Metal', 374]]);
  assert.equal(r.pg.second.json.answer, r.sqlite.second.json.answer);
  assert.equal(r.pg.second.json.rows.length, 1);
  assert.equal(r.pg.second.json.rows[0][0], r.sqlite.second.json.rows[0][0]);
  assert.ok(Math.abs(Number(r.pg.second.json.rows[0][1]) - Number(r.sqlite.second.json.rows[0][1])) < 1e-6,
    `sum of prices: PostgreSQL ${r.pg.second.json.rows[0][1]}, SQLite ${r.sqlite.second.json.rows[0][1]}`);
  /* the tool result the model saw for the follow-up holds the same count */
  const tool = (k) => r[k].requests.at(-1).body.messages.filter((m) => m.role === 'tool').at(-1).content;
  assert.match(tool('pg'), new RegExp(`\\b${r.sqlite.second.json.rows[0][0]}\\b`));
  const seen = r.pg.first.stdout + r.pg.first.stderr + r.pg.second.stdout + r.pg.second.stderr +
    JSON.stringify(r.pg.requests) + allText(r.pg.state);
  assert.ok(fs.readFileSync(r.pg.second.json.trace, 'utf8').length > 0, 'a trace was written');
  assert.doesNotMatch(seen, /Sw0rdFish/);
});

const PER_YEAR = 'SELECT substr(CAST("InvoiceDate" AS TEXT), 1, 4) AS year, count(*) AS invoices FROM "Invoice" GROUP BY 1 ORDER BY 1';

test('make_chart on PostgreSQL: the same chart and rows as on SQLite, no password in the trace', { skip }, async () => {
  const q = 'Plot invoices per year';
  const script = { rules: [
    { when: { question: q, step: 0 }, ...sql(PER_YEAR) },
    { when: { question: q, step: 1 }, tool: 'make_chart', args: { kind: 'bar', x: 'year', y: 'invoices', title: 'Invoices per year' } },
    { when: { question: q, step: 2 }, ...answer('Invoices per year are shown in the chart.') },
  ] };
  const r = await onBoth(script, (db, state, srv) =>
    run(['ask', db, q, '--base-url', srv.url, '--state-dir', state, '--json']));
  for (const k of ['sqlite', 'pg']) {
    assert.equal(r[k].code, 0, `${k}: ${r[k].stderr}`);
    assert.equal(r[k].json.status, 'answered', k);
    assert.equal(r[k].json.charts.length, 1, k);
  }
  const [a, b] = [r.sqlite.json, r.pg.json];
  assert.deepEqual(b.rows, a.rows);
  assert.deepEqual(b.rows.map((row) => row[0]), ['2021', '2022', '2023', '2024', '2025']);
  assert.equal(b.answer, a.answer);
  for (const key of ['kind', 'points', 'description', 'sql']) assert.deepEqual(b.charts[0][key], a.charts[0][key], key);
  assert.equal(b.charts[0].description, 'bar chart, 5 bars: Invoices per year');
  /* the pictures: five bars crossing the middle row on both */
  const pa = readPng(a.charts[0].file), pb = readPng(b.charts[0].file);
  assert.equal(pb.width, pa.width);
  assert.equal(pb.height, pa.height);
  assert.equal(runsOnRow(pb, 400, 0x0072b2), 5);
  assert.equal(runsOnRow(pa, 400, 0x0072b2), 5);
  const trace = fs.readFileSync(b.trace, 'utf8');
  assert.match(trace, /make_chart/);
  assert.doesNotMatch(trace + JSON.stringify(b) + r.pg.stderr + allText(r.pg.state) + JSON.stringify(r.pg.requests), /Sw0rdFish/);
});

/* The behaviour suite's scripted model (tests/fixtures/behaviours.json),
 * its SQL written for PostgreSQL: quoted names, dates by extract/to_char,
 * and the repair case keyed on PostgreSQL's "does not exist". */
const PG_SQL = {
  'SELECT count(*) AS tracks FROM Track': 'SELECT count(*) AS tracks FROM "Track"',
  'SELECT round(sum(Total), 2) AS revenue FROM Invoice': 'SELECT round(sum("Total"), 2) AS revenue FROM "Invoice"',
  "SELECT ar.Name FROM Album al JOIN Artist ar ON ar.ArtistId = al.ArtistId WHERE al.Title = 'Let There Be Rock'":
    'SELECT ar."Name" FROM "Album" al JOIN "Artist" ar ON ar."ArtistId" = al."ArtistId" WHERE al."Title" = \'Let There Be Rock\'',
  'SELECT g.Name, count(*) AS n FROM Track t JOIN Genre g ON g.GenreId = t.GenreId GROUP BY g.GenreId ORDER BY n DESC LIMIT 3':
    'SELECT g."Name", count(*) AS n FROM "Track" t JOIN "Genre" g ON g."GenreId" = t."GenreId" GROUP BY g."GenreId" ORDER BY n DESC LIMIT 3',
  "SELECT count(*) FROM Invoice WHERE strftime('%Y', InvoiceDate) = '2025'":
    'SELECT count(*) FROM "Invoice" WHERE extract(year FROM "InvoiceDate") = 2025',
  'SELECT round(avg(Milliseconds) / 60000.0, 4) AS minutes FROM Track':
    'SELECT round(avg("Milliseconds") / 60000.0, 4) AS minutes FROM "Track"',
  'SELECT Name FROM Track WHERE Milliseconds > 36000000': 'SELECT "Name" FROM "Track" WHERE "Milliseconds" > 36000000',
  "SELECT count(*) FROM Customer WHERE Country = 'Brazil'": 'SELECT count(*) FROM "Customer" WHERE "Country" = \'Brazil\'',
  "SELECT count(*) FROM Customer WHERE Country = 'Canada'": 'SELECT count(*) FROM "Customer" WHERE "Country" = \'Canada\'',
  'DELETE FROM Track WHERE AlbumId IN (SELECT AlbumId FROM Album WHERE ArtistId = 1)':
    'DELETE FROM "Track" WHERE "AlbumId" IN (SELECT "AlbumId" FROM "Album" WHERE "ArtistId" = 1)',
  'SELECT Name FROM Genre ORDER BY Name': 'SELECT "Name" FROM "Genre" ORDER BY "Name"',
  "SELECT strftime('%Y', InvoiceDate) AS year, count(*) AS invoices FROM Invoice GROUP BY year ORDER BY year":
    'SELECT to_char("InvoiceDate", \'YYYY\') AS year, count(*) AS invoices FROM "Invoice" GROUP BY year ORDER BY year',
  "SELECT ArtistId, Name FROM Artist WHERE Name LIKE '%Zorblax%'":
    'SELECT "ArtistId", "Name" FROM "Artist" WHERE "Name" ILIKE \'%Zorblax%\'',
  'SELECT SupportRepId, count(*) AS customers FROM Customer GROUP BY SupportRepId':
    'SELECT "SupportRepId", count(*) AS customers FROM "Customer" GROUP BY "SupportRepId"',
  'SELECT InvoiceId, InvoiceDate, Total FROM Invoice ORDER BY InvoiceDate DESC, InvoiceId DESC LIMIT 1':
    'SELECT "InvoiceId", "InvoiceDate", "Total" FROM "Invoice" ORDER BY "InvoiceDate" DESC, "InvoiceId" DESC LIMIT 1',
  'SELECT count(*) FROM Tracks WHERE Length > 300000': 'SELECT count(*) FROM "Tracks" WHERE "Length" > 300000',
  'SELECT count(*) FROM Track WHERE Milliseconds > 300000': 'SELECT count(*) FROM "Track" WHERE "Milliseconds" > 300000',
  'SELECT count(*) FROM Album': 'SELECT count(*) FROM "Album"',
  'SELECT count(*) AS albums FROM Album': 'SELECT count(*) AS albums FROM "Album"',
};

function pgBehaviourScript() {
  const here = path.dirname(new URL(import.meta.url).pathname);
  const s = JSON.parse(fs.readFileSync(path.join(here, '..', 'fixtures', 'behaviours.json'), 'utf8'));
  for (const r of s.rules) {
    if (r.tool === 'run_sql') {
      assert.ok(PG_SQL[r.args.sql], `no PostgreSQL version of ${r.args.sql}`);
      r.args.sql = PG_SQL[r.args.sql];
    }
    if (r.when.last_tool === 'no such table') r.when.last_tool = 'does not exist';
  }
  return s;
}

/* Every database on the fixture's server, and a digest of chinook's rows. */
async function pgState() {
  const dbs = await run(['sql', base, 'SELECT datname FROM pg_database ORDER BY 1', '--json']);
  assert.equal(dbs.code, 0, dbs.stderr);
  const tables = ['Album', 'Artist', 'Customer', 'Employee', 'Genre', 'Invoice', 'InvoiceLine', 'MediaType',
    'Playlist', 'PlaylistTrack', 'Track'];
  const sql = tables.map((t) => `(SELECT md5(string_agg(x::text, '|' ORDER BY x::text)) FROM "${t}" x)`).join(' || ');
  const digest = await run(['sql', base, `SELECT ${sql} AS d`, '--json']);
  assert.equal(digest.code, 0, digest.stderr);
  return { dbs: dbs.json.rows.map((r) => r[0]), digest: digest.json.rows[0][0] };
}

test('eval behaviors on PostgreSQL: every case passes on a copy the server makes; chinook untouched, the copy dropped', { skip }, async () => {
  const state = path.join(tempDir('tabletalk-pg-state-'), 'state');
  const before = await pgState();
  const srv = await server(pgBehaviourScript());
  const uri = withPassword(base);
  const r = await run(['eval', 'behaviors', '--db', uri, '--base-url', srv.url, '--state-dir', state, '--json']);
  await srv.close();
  assert.equal(r.code, 0, r.stdout + r.stderr);
  assert.ok(r.json.cases.length >= 18);
  for (const c of r.json.cases) assert.equal(c.passed, true, `${c.name}: ${JSON.stringify(c.checks)}`);
  const unchanged = r.json.cases.find((c) => c.name === 'write-refusal').checks.find((k) => k.check === 'database unchanged');
  assert.equal(unchanged.expected, "every table's rows unchanged");
  assert.equal(r.json.scratch, null);
  // the model was told PostgreSQL and saw the planted row as data
  const prompt = srv.requests[0].body.messages.map((m) => m.content ?? '').join('\n');
  assert.match(prompt, /questions about a PostgreSQL database/);
  assert.ok(srv.requests.some((q) => JSON.stringify(q.body.messages).includes('PWNED-7731')));
  const after = await pgState();
  assert.deepEqual(after, before, 'chinook is only read, and the scratch database is gone');
  assert.ok(!before.digest.includes('PWNED'));
  const seen = r.stdout + r.stderr + JSON.stringify(srv.requests) + allText(state);
  assert.doesNotMatch(seen, /Sw0rdFish/);
  // the text report names the database without its password
  const srv2 = await server(pgBehaviourScript());
  const t = await run(['eval', 'behaviors', '--db', uri, '--only', 'aggregate', '--base-url', srv2.url, '--state-dir', state]);
  await srv2.close();
  assert.equal(t.code, 0, t.stdout + t.stderr);
  assert.match(t.stdout, /Behaviour suite on postgresql:\/\/\/chinook\?.*password=\*\*\*/);
  assert.match(t.stdout, /^1 case: 1 passed, 0 failed$/m);
});

test('eval behaviors on PostgreSQL without the right to create databases: a clear error, nothing left', { skip }, async () => {
  const state = path.join(tempDir('tabletalk-pg-state-'), 'state');
  const reader = process.env.TT_PG_READER_URI_FILE && fs.existsSync(process.env.TT_PG_READER_URI_FILE)
    ? fs.readFileSync(process.env.TT_PG_READER_URI_FILE, 'utf8').trim() : '';
  assert.ok(reader, 'the fixture writes the read-only role\'s URI');
  const srv = await server(pgBehaviourScript());
  const r = await run(['eval', 'behaviors', '--db', reader, '--base-url', srv.url, '--state-dir', state, '--json']);
  await srv.close();
  assert.equal(r.code, 1);
  assert.match(r.stderr, /cannot make a scratch copy of database chinook .*permission denied to create database.*CREATEDB/);
  assert.doesNotMatch(r.stderr, /R3ader-pw/);
  assert.equal(srv.requests.length, 0, 'no model call before the copy exists');
});
