// serve-mcp on MariaDB against serve-mcp on SQLite, through the official MCP
// TypeScript SDK client, on the mariadb_server fixture's server
// (TT_MY_FIXTURE_DIR; skipped without it): the same chinook questions
// through run_sql give the same rows as on a copy of chinook.sqlite; writes
// are refused with the same reason codes; describe_schema lists the 11
// tables; between calls no transaction stays open; the reader account's
// password appears in no output; and a cancelled run_sql is stopped on the
// server (KILL QUERY from a second connection), leaving the one worker
// free. Numbers: MariaDB's DECIMAL comes back a real when it has at most
// 15 digits, SQLite's sums of REAL money carry binary noise, so numbers
// match within 1e-9 relative; everything else must be equal.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { FAIL_AFTER, RawStdio, cliSql, scratch } from '../support/harness.mjs';
import { connectStdio, modernRequest, serveArgs, textOf } from './protocol.mjs';

const dir = process.env.TT_MY_FIXTURE_DIR;
const read = (name) => (dir && fs.existsSync(path.join(dir, name)) ? fs.readFileSync(path.join(dir, name), 'utf8').trim() : '');
const base = read('uri');
const reader = read('reader_uri');
const skip = base ? false : 'TT_MY_FIXTURE_DIR names no server (the mariadb_server fixture writes it)';
const PASSWORD = 'R3ader-pw';
const client = (q) => execFileSync('mariadb', ['--no-defaults', '--protocol=socket', `--socket=${read('socket')}`,
  '--user=root', '--batch', '--skip-column-names', '-e', q]).toString().trim();

/* One SQL for both dialects, or {sqlite, mysql} where they differ. */
const QUERIES = [
  ['tracks per genre',
    'SELECT g.GenreId, g.Name, count(*) AS n FROM Track t JOIN Genre g ON g.GenreId = t.GenreId ' +
    'GROUP BY g.GenreId, g.Name ORDER BY n DESC, g.GenreId'],
  ['top customers by total',
    'SELECT c.CustomerId, c.FirstName, c.LastName, sum(i.Total) AS total FROM Customer c ' +
    'JOIN Invoice i ON i.CustomerId = c.CustomerId GROUP BY c.CustomerId, c.FirstName, c.LastName ' +
    'ORDER BY total DESC, c.CustomerId LIMIT 5'],
  ['albums with their artist',
    'SELECT a.AlbumId, a.Title, ar.Name FROM Album a JOIN Artist ar ON ar.ArtistId = a.ArtistId ORDER BY a.AlbumId LIMIT 15'],
  ['invoices by year (each dialect\'s own date function)', {
    sqlite: "SELECT CAST(strftime('%Y', InvoiceDate) AS INTEGER) AS y, count(*) AS n FROM Invoice GROUP BY 1 ORDER BY 1",
    mysql: 'SELECT YEAR(InvoiceDate) AS y, count(*) AS n FROM Invoice GROUP BY 1 ORDER BY 1',
  }],
  ['customers without a company (NULL)',
    "SELECT CustomerId, Company, State, coalesce(State, '-') AS st FROM Customer WHERE Company IS NULL ORDER BY CustomerId LIMIT 10"],
  ['NULL counts',
    'SELECT count(*) AS all_rows, count(Company) AS with_company, count(*) - count(State) AS no_state, ' +
    'count(DISTINCT Country) AS countries FROM Customer'],
  ['employees and their manager (self join)',
    'SELECT e.EmployeeId, e.LastName, m.LastName AS manager FROM Employee e ' +
    'LEFT JOIN Employee m ON m.EmployeeId = e.ReportsTo ORDER BY e.EmployeeId'],
  ['sales per country',
    'SELECT BillingCountry, count(*) AS n, sum(Total) AS total FROM Invoice ' +
    'GROUP BY BillingCountry HAVING count(*) > 10 ORDER BY total DESC, BillingCountry'],
  ['line items: price times quantity',
    'SELECT sum(UnitPrice * Quantity) AS revenue, min(UnitPrice) AS lo, max(UnitPrice) AS hi FROM InvoiceLine'],
  ['artists with no album',
    'SELECT count(*) AS n FROM Artist ar LEFT JOIN Album a ON a.ArtistId = ar.ArtistId WHERE a.AlbumId IS NULL'],
  ['playlists with more than 100 tracks',
    'SELECT p.PlaylistId, p.Name, count(*) AS n FROM Playlist p JOIN PlaylistTrack pt ' +
    'ON pt.PlaylistId = p.PlaylistId GROUP BY p.PlaylistId, p.Name HAVING count(*) > 100 ORDER BY p.PlaylistId'],
  ['longest tracks per album (window function)',
    'SELECT AlbumId, TrackId, row_number() OVER (PARTITION BY AlbumId ORDER BY Milliseconds DESC, TrackId) AS r ' +
    'FROM Track WHERE AlbumId <= 4 ORDER BY AlbumId, r'],
  ['a recursive CTE',
    'WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c WHERE n < 5) SELECT sum(n) AS s FROM c'],
];

const numeric = (v) => typeof v === 'number' || (typeof v === 'string' && /^-?\d+(\.\d+)?$/.test(v));
function sameCell(a, b) {
  if (a === b) return true;
  if (!numeric(a) || !numeric(b)) return false;
  const x = Number(a), y = Number(b);
  return Math.abs(x - y) <= 1e-9 * Math.max(1, Math.abs(x), Math.abs(y));
}
function assertSameRows(what, lite, my) {
  assert.equal(my.length, lite.length, `${what}: ${my.length} rows on MariaDB, ${lite.length} on SQLite`);
  for (let i = 0; i < lite.length; i++)
    for (let j = 0; j < lite[i].length; j++)
      assert.ok(sameCell(lite[i][j], my[i][j]),
        `${what}: row ${i} column ${j}: SQLite ${JSON.stringify(lite[i][j])}, MariaDB ${JSON.stringify(my[i][j])}`);
}

async function both(fn) {
  const sc = scratch();
  const myState = path.join(sc.dir, 'my-state');
  const lite = await connectStdio(sc);
  const my = await connectStdio({ dir: sc.dir, db: reader, state: myState });
  const seen = [];
  const call = async (s, name, args) => {
    const res = await s.client.callTool({ name, arguments: args });
    seen.push(JSON.stringify(res));
    return res;
  };
  try {
    await fn({ lite, my, call, sc });
    seen.push(JSON.stringify(my.client.getServerVersion()), my.client.getInstructions() ?? '');
  } finally {
    await lite.close();
    await my.close();
  }
  seen.push(my.stderr());
  for (const f of fs.existsSync(myState) ? fs.readdirSync(myState, { recursive: true }) : []) {
    const p = path.join(myState, f);
    if (fs.statSync(p).isFile()) seen.push(fs.readFileSync(p, 'latin1'));
  }
  assert.ok(sc.unchanged(), 'the SQLite copy is byte-identical');
  return seen.join('\n');
}

test('run_sql: the same chinook questions give the same rows on MariaDB and SQLite', { skip }, async () => {
  const seen = await both(async ({ lite, my, call }) => {
    for (const [what, q] of QUERIES) {
      const a = await call(lite, 'run_sql', { sql: typeof q === 'string' ? q : q.sqlite });
      const b = await call(my, 'run_sql', { sql: typeof q === 'string' ? q : q.mysql });
      assert.notEqual(a.isError, true, `${what} on SQLite: ${textOf(a)}`);
      assert.notEqual(b.isError, true, `${what} on MariaDB: ${textOf(b)}`);
      assert.deepEqual(b.structuredContent.columns, a.structuredContent.columns, `${what}: column names`);
      assert.ok(a.structuredContent.rows.length > 0, `${what}: rows on SQLite`);
      assertSameRows(what, a.structuredContent.rows, b.structuredContent.rows);
    }
    /* between calls no transaction stays open (a bounded poll: the
     * server's background reading of values may be inside one for a
     * moment; one left open stays and fails at the failure timeout) */
    const open = () => client('SELECT count(*) FROM information_schema.INNODB_TRX');
    const end = Date.now() + FAIL_AFTER;
    while (open() !== '0' && Date.now() < end) await new Promise((r) => setTimeout(r, 50));
    assert.equal(open(), '0', 'serve-mcp left a transaction open');
  });
  assert.doesNotMatch(seen, new RegExp(PASSWORD), 'the password appears in an MCP output');
});

test('writes are refused on MariaDB with the same reason as on SQLite', { skip }, async () => {
  const writes = [
    'DELETE FROM Track',
    "UPDATE Genre SET Name = 'x'",
    "INSERT INTO Genre (GenreId, Name) VALUES (99, 'x')",
    'DROP TABLE Track',
    'SELECT 1; DELETE FROM Track',
  ];
  const seen = await both(async ({ lite, my, call, sc }) => {
    for (const sql of writes) {
      const a = await call(lite, 'run_sql', { sql });
      const b = await call(my, 'run_sql', { sql });
      assert.equal(a.isError, true, `${sql} on SQLite`);
      assert.equal(b.isError, true, `${sql} on MariaDB`);
      assert.match(textOf(b), /^refused: /, `${sql} on MariaDB: ${textOf(b)}`);
      const [cl, cm] = await Promise.all([cliSql(sc.db, sql), cliSql(reader, sql)]);
      assert.equal(cm.code, 3, `${sql}: tabletalk sql on MariaDB exits 3 (${cm.stdout} ${cm.stderr})`);
      assert.equal(cm.json?.error?.reason, cl.json?.error?.reason, `${sql}: reason on MariaDB / SQLite`);
      assert.doesNotMatch(cm.stdout + cm.stderr, new RegExp(PASSWORD));
    }
    const n = await call(my, 'run_sql', { sql: 'SELECT count(*) AS n FROM Track' });
    assert.deepEqual(n.structuredContent.rows, [[3503]], 'Track unchanged on MariaDB');
  });
  assert.doesNotMatch(seen, new RegExp(PASSWORD));
});

test('describe_schema on MariaDB lists the 11 chinook tables; no password anywhere', { skip }, async () => {
  const tables = ['Album', 'Artist', 'Customer', 'Employee', 'Genre', 'Invoice', 'InvoiceLine', 'MediaType',
    'Playlist', 'PlaylistTrack', 'Track'];
  const seen = await both(async ({ lite, my, call }) => {
    const b = await call(my, 'describe_schema', {});
    const a = await call(lite, 'describe_schema', {});
    assert.notEqual(b.isError, true, textOf(b));
    const listed = (t) => [...t.matchAll(/^# Table: (\S+)/gm)].map((m) => m[1]).sort();
    assert.deepEqual(listed(textOf(b)), tables);
    assert.deepEqual(listed(textOf(b)), listed(textOf(a)));
    assert.match(textOf(b), /# Table: Track \(3503 rows\)/);
    assert.match(textOf(b), /UnitPrice: decimal\(10,2\)/);
    assert.equal(my.client.getServerVersion()?.description, 'Questions in plain language over a read-only MySQL database');
    const e = await call(my, 'run_sql', { sql: 'SELECT no_such_column FROM Track' });
    assert.equal(e.isError, true);
    assert.match(textOf(e), /Unknown column 'no_such_column'/);
  });
  assert.doesNotMatch(seen, new RegExp(PASSWORD));
});

test('run_sql on MariaDB: notifications/cancelled stops the statement on the server; the worker is free again', { skip }, async () => {
  const sc = scratch();
  const LONG = 'SELECT count(*) FROM Track a, Track b, Track c';
  const srv = new RawStdio(serveArgs({ ...sc, db: base }, { extra: ['--timeout', '3600', '--workers', '1'] }), { cwd: sc.dir });
  const runSql = (id, sql) => modernRequest(id, 'tools/call', { name: 'run_sql', arguments: { sql } });
  try {
    const warm = await srv.request(runSql('warm', 'SELECT count(*) AS genres FROM Genre'));
    assert.deepEqual(warm.result.structuredContent.rows, [[25]]);
    await srv.send(runSql('long', LONG));
    /* the statement runs on the server: a bounded poll of PROCESSLIST */
    const running = () => client("SELECT count(*) FROM information_schema.PROCESSLIST WHERE INFO LIKE 'SELECT count(*) FROM Track a, Track b%'");
    let end = Date.now() + FAIL_AFTER;
    while (running() === '0' && Date.now() < end) await new Promise((r) => setTimeout(r, 20));
    assert.equal(running(), '1', 'the long statement runs on the server');
    await srv.send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 'long', reason: 'test' } });
    /* the one worker answers the next query: the long one was stopped */
    const quick = await srv.request(runSql('quick', 'SELECT count(*) AS genres FROM Genre'));
    assert.deepEqual(quick.result.structuredContent.rows, [[25]]);
    assert.equal(running(), '0', 'KILL QUERY stopped the statement on the server');
    assert.equal(srv.responsesTo('long').length, 0, 'a cancelled request gets no response');
  } finally {
    await srv.close();
  }
});
