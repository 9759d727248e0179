// serve-mcp on PostgreSQL against serve-mcp on SQLite, through the official
// MCP TypeScript SDK client: the same chinook questions through run_sql give
// the same rows on the pg_server fixture's server (URI in TT_PG_URI_FILE) as
// on a copy of chinook.sqlite; a write is refused with the same reason on
// both; between calls no transaction stays open and no lock is held;
// describe_schema lists the 11 tables; and a password in the URI
// appears in no MCP output, stderr or state file. Skipped (marked so)
// without the fixture's URI.
//
// Numbers: PostgreSQL's numeric comes back a real when it has at most 15
// digits and its exact text otherwise (docs/guide/postgresql.md, "Values"), and
// SQLite's sums of REAL money carry binary noise (49.620000000000005), so a
// number (or a numeric text on PostgreSQL) matches within 1e-9 relative;
// everything else must be equal.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { FAIL_AFTER, cliSql, scratch } from '../support/harness.mjs';
import { connectStdio, textOf } from './protocol.mjs';


const uriFile = process.env.TT_PG_URI_FILE;
const base = uriFile && fs.existsSync(uriFile) ? fs.readFileSync(uriFile, 'utf8').trim() : '';
const skip = base ? false : 'TT_PG_URI_FILE names no server URI (the pg_server fixture writes it)';
const PASSWORD = 'Sw0rdFish';
/* trust authentication ignores the password; it must still never be shown */
const withPassword = (uri) => uri + (uri.includes('?') ? '&' : '?') + `password=${PASSWORD}`;

/* The questions: one SQL for both, or {sqlite, pg} where the dialects differ. */
const QUERIES = [
  ['tracks per genre',
    'SELECT g."GenreId", g."Name", count(*) AS n FROM "Track" t JOIN "Genre" g ON g."GenreId" = t."GenreId" ' +
    'GROUP BY g."GenreId", g."Name" ORDER BY n DESC, g."GenreId"'],
  ['top customers by total',
    'SELECT c."CustomerId", c."FirstName", c."LastName", sum(i."Total") AS total FROM "Customer" c ' +
    'JOIN "Invoice" i ON i."CustomerId" = c."CustomerId" GROUP BY c."CustomerId", c."FirstName", c."LastName" ' +
    'ORDER BY total DESC, c."CustomerId" LIMIT 5'],
  ['albums with their artist',
    'SELECT a."AlbumId", a."Title", ar."Name" FROM "Album" a JOIN "Artist" ar ON ar."ArtistId" = a."ArtistId" ' +
    'ORDER BY a."AlbumId" LIMIT 15'],
  ['invoices by year (portable text of the timestamp)',
    'SELECT substr(CAST("InvoiceDate" AS TEXT), 1, 4) AS y, count(*) AS n, sum("Total") AS total ' +
    'FROM "Invoice" GROUP BY substr(CAST("InvoiceDate" AS TEXT), 1, 4) ORDER BY y'],
  ['invoices by year (each dialect\'s own date function)', {
    sqlite: 'SELECT CAST(strftime(\'%Y\', "InvoiceDate") AS INTEGER) AS y, count(*) AS n FROM "Invoice" GROUP BY 1 ORDER BY 1',
    pg: 'SELECT CAST(EXTRACT(YEAR FROM "InvoiceDate") AS INTEGER) AS y, count(*) AS n FROM "Invoice" GROUP BY 1 ORDER BY 1',
  }],
  ['customers without a company (NULL)',
    'SELECT "CustomerId", "Company", "State", coalesce("State", \'-\') AS st FROM "Customer" ' +
    'WHERE "Company" IS NULL ORDER BY "CustomerId" LIMIT 10'],
  ['NULL counts',
    'SELECT count(*) AS all_rows, count("Company") AS with_company, count(*) - count("State") AS no_state, ' +
    'count(DISTINCT "Country") AS countries FROM "Customer"'],
  ['employees and their manager (self join, a NULL manager)',
    'SELECT e."EmployeeId", e."LastName", m."LastName" AS manager FROM "Employee" e ' +
    'LEFT JOIN "Employee" m ON m."EmployeeId" = e."ReportsTo" ORDER BY e."EmployeeId"'],
  ['sales: numeric sums and averages per country',
    'SELECT "BillingCountry", count(*) AS n, sum("Total") AS total, avg("Total") AS mean FROM "Invoice" ' +
    'GROUP BY "BillingCountry" HAVING count(*) > 10 ORDER BY total DESC, "BillingCountry"'],
  ['line items: price times quantity',
    'SELECT sum("UnitPrice" * "Quantity") AS revenue, min("UnitPrice") AS lo, max("UnitPrice") AS hi FROM "InvoiceLine"'],
  ['artists with no album (LEFT JOIN ... IS NULL)',
    'SELECT count(*) AS n FROM "Artist" ar LEFT JOIN "Album" a ON a."ArtistId" = ar."ArtistId" WHERE a."AlbumId" IS NULL'],
  ['playlists with more than 100 tracks',
    'SELECT p."PlaylistId", p."Name", count(*) AS n FROM "Playlist" p JOIN "PlaylistTrack" pt ' +
    'ON pt."PlaylistId" = p."PlaylistId" GROUP BY p."PlaylistId", p."Name" HAVING count(*) > 100 ORDER BY p."PlaylistId"'],
  ['longest tracks per album (window function)',
    'SELECT "AlbumId", "TrackId", row_number() OVER (PARTITION BY "AlbumId" ORDER BY "Milliseconds" DESC, "TrackId") AS r ' +
    'FROM "Track" WHERE "AlbumId" <= 4 ORDER BY "AlbumId", r'],
  ['minutes per media type (division, round)',
    'SELECT "MediaTypeId", count(*) AS n, round(avg("Milliseconds") / 60000.0, 2) AS minutes FROM "Track" ' +
    'GROUP BY "MediaTypeId" ORDER BY "MediaTypeId"'],
];

const numeric = (v) => typeof v === 'number' || (typeof v === 'string' && /^-?\d+(\.\d+)?$/.test(v));
function sameCell(a, b) {
  if (a === b) return true;
  if (typeof a === 'number' || typeof b === 'number') {
    if (!numeric(a) || !numeric(b)) return false;
    const x = Number(a), y = Number(b);
    return Math.abs(x - y) <= 1e-9 * Math.max(1, Math.abs(x), Math.abs(y));
  }
  return false;
}
function assertSameRows(what, lite, pg) {
  assert.equal(pg.length, lite.length, `${what}: ${pg.length} rows on PostgreSQL, ${lite.length} on SQLite`);
  for (let i = 0; i < lite.length; i++) {
    assert.equal(pg[i].length, lite[i].length, `${what}: row ${i} width`);
    for (let j = 0; j < lite[i].length; j++) {
      assert.ok(sameCell(lite[i][j], pg[i][j]),
        `${what}: row ${i} column ${j}: SQLite ${JSON.stringify(lite[i][j])}, PostgreSQL ${JSON.stringify(pg[i][j])}`);
    }
  }
}

/* Both servers, a password in the PostgreSQL URI; everything they said. */
async function both(fn) {
  const sc = scratch();
  const pgState = path.join(sc.dir, 'pg-state');
  const lite = await connectStdio(sc);
  const pg = await connectStdio({ dir: sc.dir, db: withPassword(base), state: pgState });
  const seen = [];
  const call = async (s, name, args) => {
    const res = await s.client.callTool({ name, arguments: args });
    seen.push(JSON.stringify(res));
    return res;
  };
  try {
    await fn({ lite, pg, call, seen, sc });
    seen.push(JSON.stringify(pg.client.getServerVersion()), pg.client.getInstructions() ?? '');
    seen.push(JSON.stringify(await pg.client.listTools()), JSON.stringify(await pg.client.listPrompts()));
  } finally {
    await lite.close();
    await pg.close();
  }
  seen.push(pg.stderr());
  const files = fs.existsSync(pgState) ? fs.readdirSync(pgState, { recursive: true }) : [];
  for (const f of files) {
    const p = path.join(pgState, f);
    if (fs.statSync(p).isFile()) seen.push(fs.readFileSync(p, 'latin1'));
  }
  assert.ok(sc.unchanged(), 'the SQLite copy is byte-identical');
  return seen.join('\n');
}

test('run_sql: the same chinook questions give the same rows on PostgreSQL and SQLite', { skip }, async () => {
  const seen = await both(async ({ lite, pg, call }) => {
    for (const [what, q] of QUERIES) {
      const sq = typeof q === 'string' ? q : q.sqlite, pq = typeof q === 'string' ? q : q.pg;
      const a = await call(lite, 'run_sql', { sql: sq });
      const b = await call(pg, 'run_sql', { sql: pq });
      assert.notEqual(a.isError, true, `${what} on SQLite: ${textOf(a)}`);
      assert.notEqual(b.isError, true, `${what} on PostgreSQL: ${textOf(b)}`);
      assert.deepEqual(b.structuredContent.columns, a.structuredContent.columns, `${what}: column names`);
      assert.ok(a.structuredContent.rows.length > 0, `${what}: rows on SQLite`);
      assert.equal(b.structuredContent.truncated, a.structuredContent.truncated, `${what}: truncated`);
      assertSameRows(what, a.structuredContent.rows, b.structuredContent.rows);
    }
    /* between calls the server holds no transaction open and no lock. The
     * server's background reading of the schema and values may be between
     * the statements of one of its transactions for a moment (BEGIN, SET
     * LOCAL, the query: "idle in transaction" for milliseconds, longer on a
     * loaded machine or the sanitizer build); one left open stays so. No
     * event says the background work is done, so this is a bounded poll of
     * pg_stat_activity: it passes once no such session or lock is left, and
     * a leaked one fails it at the harness's failure timeout. */
    const psql = (q) => execFileSync('psql', ['-X', '-At', '-d', base, '-c', q]).toString().trim();
    const idleInTx = () => psql("SELECT count(*) FROM pg_stat_activity a WHERE state LIKE 'idle in transaction%'");
    const heldLocks = () => psql("SELECT count(*) FROM pg_locks l JOIN pg_stat_activity a USING (pid) "
      + "WHERE l.pid <> pg_backend_pid() AND a.state <> 'active'");
    const end = Date.now() + FAIL_AFTER;
    while ((idleInTx() !== '0' || heldLocks() !== '0') && Date.now() < end) await new Promise((r) => setTimeout(r, 50));
    assert.equal(idleInTx(), '0', 'serve-mcp left a session idle in a transaction');
    assert.equal(heldLocks(), '0', 'serve-mcp holds a lock between calls');
  });
  assert.doesNotMatch(seen, new RegExp(PASSWORD), 'the password appears in an MCP output');
});

test('writes are refused on PostgreSQL with the same reason as on SQLite', { skip }, async () => {
  const writes = [
    'DELETE FROM "Track"',
    'UPDATE "Genre" SET "Name" = \'x\'',
    'INSERT INTO "Genre" ("GenreId", "Name") VALUES (99, \'x\')',
    'DROP TABLE "Track"',
    'SELECT 1; DELETE FROM "Track"',
  ];
  const seen = await both(async ({ lite, pg, call, sc }) => {
    for (const sql of writes) {
      const a = await call(lite, 'run_sql', { sql });
      const b = await call(pg, 'run_sql', { sql });
      assert.equal(a.isError, true, `${sql} on SQLite`);
      assert.equal(b.isError, true, `${sql} on PostgreSQL`);
      assert.match(textOf(b), /^refused: /, `${sql} on PostgreSQL: ${textOf(b)}`);
      assert.match(textOf(a), /^refused: /, `${sql} on SQLite: ${textOf(a)}`);
      /* the words may differ (the two guards explain in their own terms);
       * the reason codes may not: through the CLI's JSON */
      const [cl, cp] = await Promise.all([cliSql(sc.db, sql), cliSql(withPassword(base), sql)]);
      assert.equal(cp.code, 3, `${sql}: tabletalk sql on PostgreSQL exits 3 (${cp.stdout} ${cp.stderr})`);
      assert.equal(cp.json?.error?.reason, cl.json?.error?.reason, `${sql}: reason on PostgreSQL / SQLite`);
      assert.doesNotMatch(cp.stdout + cp.stderr, new RegExp(PASSWORD));
    }
    const n = await call(pg, 'run_sql', { sql: 'SELECT count(*) AS n FROM "Track"' });
    assert.deepEqual(n.structuredContent.rows, [[3503]], 'Track unchanged on PostgreSQL');
  });
  assert.doesNotMatch(seen, new RegExp(PASSWORD));
});

test('describe_schema on PostgreSQL lists the 11 chinook tables; no password anywhere', { skip }, async () => {
  const tables = ['Album', 'Artist', 'Customer', 'Employee', 'Genre', 'Invoice', 'InvoiceLine', 'MediaType',
    'Playlist', 'PlaylistTrack', 'Track'];
  const seen = await both(async ({ lite, pg, call }) => {
    const b = await call(pg, 'describe_schema', {});
    const a = await call(lite, 'describe_schema', {});
    assert.notEqual(b.isError, true, textOf(b));
    const listed = (t) => [...t.matchAll(/^# Table: (\S+)/gm)].map((m) => m[1]).sort();
    assert.deepEqual(listed(textOf(b)), tables);
    assert.deepEqual(listed(textOf(b)), listed(textOf(a)));
    assert.match(textOf(b), /# Table: Track \(~3503 rows\)/);
    assert.equal(pg.client.getServerVersion()?.description, 'Questions in plain language over a read-only PostgreSQL database');
    assert.equal(lite.client.getServerVersion()?.description, 'Questions in plain language over a read-only SQLite database');
    assert.match(pg.client.getInstructions() ?? '', /PostgreSQL/);
    /* a failing query's message holds no password either */
    const e = await call(pg, 'run_sql', { sql: 'SELECT no_such_column FROM "Track"' });
    assert.equal(e.isError, true);
    assert.match(textOf(e), /no_such_column/);
  });
  assert.doesNotMatch(seen, new RegExp(PASSWORD));
});

/* A database with functions of its own that the parse cannot tell from
 * built-in ones: t.f is PostgreSQL's column notation for f(t), and an
 * overload in public is chosen over a built-in when its argument type fits
 * better (CVE-2018-1058). The catalog check refuses both before they run
 * (issue 28); with --trust-functions public they run, and each takes a
 * session advisory lock, which ROLLBACK does not release: after every query
 * the engine releases them, so serve-mcp's pooled connection holds none
 * between calls. */
test('run_sql on PostgreSQL: a function of the database is refused unless trusted, and a trusted one leaves no advisory lock behind', { skip }, async () => {
  const psql = (uri, q) => execFileSync('psql', ['-X', '-At', '-v', 'ON_ERROR_STOP=1', '-d', uri, '-c', q]).toString().trim();
  const planted = `${base}&dbname=tt_planted`;
  psql(base, 'DROP DATABASE IF EXISTS tt_planted');
  psql(base, 'CREATE DATABASE tt_planted');
  try {
    psql(planted, `CREATE TABLE g (x int); INSERT INTO g VALUES (1);
      CREATE FUNCTION tt_lock(g) RETURNS int LANGUAGE sql AS $$ SELECT 1 FROM (SELECT pg_advisory_lock(4242)) s $$;
      CREATE FUNCTION public.lower(integer) RETURNS text LANGUAGE sql AS $$ SELECT pg_advisory_lock(4343)::text || 'x' $$`);
    const locks = () => psql(base, "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory'");
    const sc = scratch();
    const pg = await connectStdio({ dir: sc.dir, db: planted, state: path.join(sc.dir, 'pg-state') });
    try {
      const a = await pg.client.callTool({ name: 'run_sql', arguments: { sql: 'SELECT t.tt_lock FROM g t' } });
      assert.equal(a.isError, true);
      assert.match(textOf(a), /^refused: x\.tt_lock can call public\.tt_lock\(public\.g\).*--trust-functions public to allow/s);
      const b = await pg.client.callTool({ name: 'run_sql', arguments: { sql: 'SELECT lower(x) FROM g' } });
      assert.equal(b.isError, true);
      assert.match(textOf(b), /lower\(\.\.\.\) can call public\.lower\(integer\), which tabletalk does not run/);
      assert.equal(locks(), '0', 'a refused function ran');
    } finally {
      await pg.close();
    }
    const trusted = await connectStdio({ dir: sc.dir, db: planted, state: path.join(sc.dir, 'pg-state') },
      { extra: ['--trust-functions', 'public'] });
    try {
      const a = await trusted.client.callTool({ name: 'run_sql', arguments: { sql: 'SELECT t.tt_lock FROM g t' } });
      assert.notEqual(a.isError, true, textOf(a));
      assert.match(textOf(a), /\[\[1\]\]/, 'the trusted function ran');
      assert.equal(locks(), '0', 'the column-notation call left its advisory lock');
      const b = await trusted.client.callTool({ name: 'run_sql', arguments: { sql: 'SELECT lower(x) FROM g' } });
      assert.notEqual(b.isError, true, textOf(b));
      assert.equal(locks(), '0', 'the overload left its advisory lock');
      /* the connection still works, and reads only */
      const c = await trusted.client.callTool({ name: 'run_sql', arguments: { sql: 'SELECT count(*) FROM g' } });
      assert.match(textOf(c), /\[\[1\]\]/);
    } finally {
      await trusted.close();
    }
  } finally {
    psql(base, 'DROP DATABASE IF EXISTS tt_planted WITH (FORCE)');
  }
});

/* A statement the server does not interrupt while it builds one huge value
 * (array_fill of 100 million elements ignores the cancel request until it
 * is done): the engine closes the connection two seconds after its first
 * cancel, answers "timeout", and the next call connects again. */
test('run_sql on PostgreSQL: a statement that ignores the cancel is abandoned soon after the time limit', { skip }, async () => {
  const sc = scratch();
  const pg = await connectStdio({ dir: sc.dir, db: base, state: path.join(sc.dir, 'pg-state') }, { extra: ['--timeout', '2'] });
  try {
    const r = await pg.client.callTool({ name: 'run_sql', arguments: { sql: 'SELECT array_fill(1, ARRAY[100000000])' } },
      undefined, { timeout: FAIL_AFTER });
    assert.equal(r.isError, true);
    assert.match(textOf(r), /^timeout: query stopped after the 2 s time limit/);
    const n = await pg.client.callTool({ name: 'run_sql', arguments: { sql: 'SELECT count(*) FROM "Album"' } });
    assert.match(textOf(n), /\[\[347\]\]/, 'the next call connects again');
  } finally {
    await pg.close();
  }
});
