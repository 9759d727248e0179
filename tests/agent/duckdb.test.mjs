// The DuckDB engine through the real binary: Parquet, JSON lines, a
// .duckdb file and a glob, made by DuckDB itself (ddb_make, beside the
// binary), asked through `sql` (exact rows), `schema` (DuckDB's statistics
// on the cards), `ask` with the scripted model (the prompt names the
// dialect, a DuckDB error reaches the model with a repair hint, the
// repaired SQL answers), the web page's schema, and CSV files read by
// DuckDB as the shared sniffer types them, with the same rows as the SQLite
// engine (null tokens, a decimal comma, a few odd values as NULL with a
// note, a code kept as text, --csv-types, a late odd value as NULL). Nothing is ever
// written beside the files. Skipped only when libduckdb is not installed
// (scripts/fetch-duckdb.sh installs it).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { BIN, run, server, sha256, startWeb, tempDir, traceEvents } from '../support/harness.mjs';

const MAKE = path.join(path.dirname(BIN), 'tests', 'ddb_make');
const make = (db, sql) => spawnSync(MAKE, [db, sql], { encoding: 'utf8' });
const probe = fs.existsSync(MAKE) ? make(':memory:', 'SELECT 1') : { status: 77, stderr: 'no ddb_make' };
const skip = probe.status === 77 ? `libduckdb is not installed (scripts/fetch-duckdb.sh): ${probe.stderr}` : false;

function files() {
  const dir = tempDir('tabletalk-duckdb-');
  fs.writeFileSync(path.join(dir, 'people.csv'),
    'name,age,city\nann,34,Oslo\nbob,,Rome\ncy,n/a,Oslo\ndee,41,Paris\neve,27,-\n');
  const src = `(SELECT * FROM read_csv('${dir}/people.csv', nullstr=['','n/a','-']))`;
  for (const [sql, what] of [
    [`COPY ${src} TO '${dir}/people.parquet' (FORMAT parquet)`, 'parquet'],
    [`COPY ${src} TO '${dir}/people.jsonl' (FORMAT json)`, 'jsonl'],
    [`COPY (SELECT range AS id, range * 2 AS v FROM range(5)) TO '${dir}/part_1.parquet' (FORMAT parquet)`, 'part 1'],
    [`COPY (SELECT range + 5 AS id, range * 3 AS v FROM range(5)) TO '${dir}/part_2.parquet' (FORMAT parquet)`, 'part 2'],
  ]) {
    const r = make(':memory:', sql);
    assert.equal(r.status, 0, `${what}: ${r.stderr}`);
  }
  const r = make(path.join(dir, 'shop.duckdb'),
    "CREATE TABLE customers(id INTEGER PRIMARY KEY, name VARCHAR); INSERT INTO customers VALUES (1, 'ann'), (2, 'bob');"
    + 'CREATE TABLE orders(id INTEGER, customer_id INTEGER REFERENCES customers(id), total DECIMAL(10,2));'
    + 'INSERT INTO orders VALUES (1, 1, 9.50), (2, 1, 3.00), (3, 2, 7.25);');
  assert.equal(r.status, 0, r.stderr);
  return { dir, state: path.join(tempDir('tabletalk-duckdb-state-'), 'state') };
}
const listing = (dir) => fs.readdirSync(dir).sort()
  .map((f) => `${f} ${sha256(path.join(dir, f))}`).join('\n');
const sql = (s) => ({ tool: 'run_sql', args: { sql: s } });
const answer = (text) => ({ tool: 'answer', args: { text } });
const chart = (args) => ({ tool: 'make_chart', args });

test('sql on Parquet, JSON lines, a .duckdb file and a glob: exact rows and types', { skip }, async () => {
  const f = files();
  const before = listing(f.dir);
  const p = await run(['sql', path.join(f.dir, 'people.parquet'), 'SELECT name, age FROM people ORDER BY name', '--json']);
  assert.equal(p.code, 0, p.stderr);
  assert.deepEqual(p.json.column_types, ['VARCHAR', 'BIGINT']);
  assert.deepEqual(p.json.rows, [['ann', 34], ['bob', null], ['cy', null], ['dee', 41], ['eve', 27]]);
  const j = await run(['sql', path.join(f.dir, 'people.jsonl'), 'SELECT avg(age) AS a FROM people', '--json']);
  assert.equal(j.code, 0, j.stderr);
  assert.deepEqual(j.json.rows, [[34]]);
  const d = await run(['sql', path.join(f.dir, 'shop.duckdb'),
    'SELECT c.name, sum(o.total) AS t FROM orders o JOIN customers c ON c.id = o.customer_id GROUP BY 1 ORDER BY 1', '--json']);
  assert.equal(d.code, 0, d.stderr);
  assert.deepEqual(d.json.rows, [['ann', 12.5], ['bob', 7.25]]);
  const g = await run(['sql', path.join(f.dir, 'part_*.parquet'), 'SELECT count(*), sum(v) FROM part', '--json']);
  assert.equal(g.code, 0, g.stderr);
  assert.deepEqual(g.json.rows, [[10, 50]]);
  assert.equal(listing(f.dir), before);
});

test('a CSV file read by DuckDB: null tokens are NULL, so avg is 34, never 25.5', { skip }, async () => {
  const f = files();
  const r = await run(['sql', path.join(f.dir, 'people.csv'), 'SELECT avg(age), max(age), count(city) FROM people',
    '--engine', 'duckdb', '--json']);
  assert.equal(r.code, 0, r.stderr);
  assert.deepEqual(r.json.rows, [[34, 41, 4]]);
  const bad = await run(['sql', path.join(f.dir, 'people.parquet'), 'SELECT 1', '--engine', 'sqlite']);
  assert.equal(bad.code, 2, bad.stderr);
  assert.match(bad.stderr, /--engine sqlite cannot read/);
});

test('schema: DuckDB statistics on the cards, keys of a .duckdb file', { skip }, async () => {
  const f = files();
  const s = await run(['schema', path.join(f.dir, 'shop.duckdb')]);
  assert.equal(s.code, 0, s.stderr);
  assert.match(s.stdout, /# Table: orders/);
  assert.match(s.stdout, /customer_id: INTEGER, references customers\.id, ~2 distinct, min 1, max 2/);
  assert.match(s.stdout, /total: DECIMAL\(10,2\), ~3 distinct, min 3\.00, max 9\.50/);
  assert.match(s.stdout, /id: INTEGER, primary key/);
});

test('ask on Parquet: the prompt names DuckDB, an error comes back with its hint, the repair answers', { skip }, async () => {
  const f = files();
  const before = listing(f.dir);
  const BAD = 'SELECT avg(agee) FROM people';
  const GOOD = 'SELECT avg(age) AS a FROM people';
  const srv = await server({ rules: [
    { when: { step: 0 }, ...sql(BAD) },
    { when: { step: 1 }, ...sql(GOOD) },
    { when: { step: 2 }, ...answer('The average age is 34.') },
  ] });
  const r = await run(['ask', path.join(f.dir, 'people.parquet'), 'Average age?', '--base-url', srv.url,
    '--state-dir', f.state, '--json']);
  await srv.close();
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.json.answer, 'The average age is 34.');
  assert.equal(r.json.sql, GOOD);
  assert.deepEqual(r.json.rows, [[34]]);
  const prompt = srv.requests[0].body.messages.map((m) => m.content ?? '').join('\n');
  assert.match(prompt, /DuckDB/);
  assert.match(prompt, /people/);
  const err = srv.requests[1].body.messages.filter((m) => m.role === 'tool').at(-1).content;
  assert.match(err, /Binder Error|Catalog Error/);
  assert.match(err, /agee/);
  assert.equal(listing(f.dir), before);
});

test('web: the schema of a Parquet file, and a write refused', { skip }, async () => {
  const f = files();
  const srv = await server({ rules: [{ when: { step: 0 }, ...answer('hi') }] });
  const w = await startWeb({ db: path.join(f.dir, 'people.parquet'), state: f.state }, srv);
  const entry = await fetch(`${w.base}/?token=${w.token}`, { redirect: 'manual' });
  const cookie = entry.headers.get('set-cookie').split(';')[0];
  const schema = await (await fetch(`${w.base}/api/schema`, { headers: { Cookie: cookie } })).json();
  assert.deepEqual(schema.tables.map((t) => t.name), ['people']);
  await w.close();
  await srv.close();
  const c = await run(['sql', path.join(f.dir, 'people.parquet'), `COPY people TO '${f.dir}/x.csv'`]);
  assert.equal(c.code, 3, c.stderr);
  assert.ok(!fs.existsSync(path.join(f.dir, 'x.csv')));
});

test('without libduckdb: an error naming the command that installs it; the binary does not link it', async () => {
  const dir = tempDir('tabletalk-duckdb-none-');
  const file = path.join(dir, 'x.parquet');
  fs.writeFileSync(file, 'PAR1');
  const r = await run(['sql', file, 'SELECT 1'], { env: { TABLETALK_DUCKDB_LIBRARY: path.join(dir, 'nope.so') } });
  assert.equal(r.code, 1, r.stderr);
  assert.match(r.stderr, /cannot load libduckdb/);
  assert.match(r.stderr, /scripts\/deps\.sh/);
  const ldd = spawnSync('ldd', [BIN], { encoding: 'utf8' });
  if (ldd.status === 0) assert.doesNotMatch(ldd.stdout, /duckdb/);
});

test('ask on JSON lines: a chart of the rows, a follow-up in a thread, the trace', { skip }, async () => {
  const f = files();
  const before = listing(f.dir);
  const Q = 'SELECT city, count(*) AS people FROM people WHERE city IS NOT NULL GROUP BY city ORDER BY city';
  const srv = await server({ rules: [
    { when: { question: 'Plot people per city', step: 0 }, ...sql(Q) },
    { when: { question: 'Plot people per city', step: 1 }, ...chart({ kind: 'bar', x: 'city', y: 'people', title: 'People per city' }) },
    { when: { question: 'Plot people per city', step: 2 }, ...answer('Oslo has the most people.') },
    { when: { question: 'And the oldest?', step: 0 }, ...sql('SELECT name FROM people ORDER BY age DESC NULLS LAST LIMIT 1') },
    { when: { question: 'And the oldest?', step: 1 }, ...answer('dee is the oldest.') },
  ] });
  const db = path.join(f.dir, 'people.jsonl');
  const a = await run(['ask', db, 'Plot people per city', '--base-url', srv.url, '--state-dir', f.state, '--thread', 'd', '--json']);
  assert.equal(a.code, 0, a.stderr);
  assert.equal(a.json.charts.length, 1);
  assert.equal(a.json.charts[0].points, 3);
  assert.ok(fs.existsSync(a.json.charts[0].file));
  const b = await run(['ask', db, 'And the oldest?', '--base-url', srv.url, '--state-dir', f.state, '--thread', 'd', '--json']);
  await srv.close();
  assert.equal(b.code, 0, b.stderr);
  assert.deepEqual(b.json.rows, [['dee']]);
  assert.match(JSON.stringify(srv.requests.at(-1).body.messages), /Plot people per city/);
  const ev = traceEvents(b.json.trace);
  assert.ok(ev.some((e) => e.type === 'sql' || e.sql), 'the trace holds the query');
  assert.equal(listing(f.dir), before);
});

// Both engines on the same file and query: the rows, which must agree.
async function bothEngines(file, query, extra = []) {
  const out = [];
  for (const engine of ['duckdb', 'sqlite']) {
    const r = await run(['sql', file, query, '--engine', engine, '--json', ...extra]);
    assert.equal(r.code, 0, `${engine}: ${r.stderr}`);
    out.push(r.json.rows);
  }
  assert.deepEqual(out[0], out[1], 'DuckDB and SQLite read the file alike');
  return out[0];
}

test('a null token with spaces around it is NULL, and a file without a header has the same column names, under both engines', { skip }, async () => {
  const dir = tempDir('tabletalk-duckdb-tokens-');
  const file = path.join(dir, 'sp.csv');
  fs.writeFileSync(file, 'id,name,n\n1, NA ,3\n2,bob, NA \n3,  ,4\n4, x y ,5\n5,\tn/a\t,6\n');
  assert.deepEqual(await bothEngines(file, 'SELECT id, name, n FROM sp ORDER BY id'),
    [[1, null, 3], [2, 'bob', null], [3, null, 4], [4, ' x y ', 5], [5, null, 6]]);
  const bare = path.join(dir, 'bare.csv');
  fs.writeFileSync(bare, '1,ann,3\n2,bob,4\n');
  assert.deepEqual(await bothEngines(bare, 'SELECT column_1, column_2, column_3 FROM bare ORDER BY 1', ['--no-header']),
    [[1, 'ann', 3], [2, 'bob', 4]]);
  for (const engine of ['duckdb', 'sqlite']) {
    const r = await run(['sql', bare, 'SELECT * FROM bare', '--engine', engine, '--json', '--csv-types', 'column_3=text']);
    assert.equal(r.code, 0, `${engine}: ${r.stderr}`);
    assert.deepEqual(r.json.columns, ['column_1', 'column_2', 'column_3'], engine);
    assert.deepEqual(r.json.rows.map((x) => x[2]), ['3', '4'], `${engine}: --csv-types names the column as shown`);
  }
});

test('a value past the sniffed head that is not a number is NULL under DuckDB, never an error or a number', { skip }, async () => {
  const dir = tempDir('tabletalk-duckdb-late-');
  const file = path.join(dir, 'late.csv');
  const lines = ['id,qty'];
  for (let i = 0; i < 30000; i++) lines.push(`${i},${i === 25000 ? 'unknown' : i % 7}`);
  fs.writeFileSync(file, lines.join('\n') + '\n');
  const s = await run(['schema', file, '--engine', 'duckdb']);
  assert.equal(s.code, 0, s.stderr);
  assert.match(s.stdout, /\(qty: BIGINT/);
  assert.match(s.stdout, /# Table: late \(30000 rows\), types decided on the first 20000 rows; later values not of a column's type read as NULL/);
  let total = 0;
  for (let i = 0; i < 30000; i++) if (i !== 25000) total += i % 7;
  assert.deepEqual(await bothEngines(file, 'SELECT count(qty), sum(qty), count(*) FROM late'), [[29999, total, 30000]]);
});

test('a folder of Parquet, JSON lines and CSV files: one table each, joined; a link out of it and a subfolder are never read', { skip }, async () => {
  const dir = tempDir('tabletalk-duckdb-folder-');
  const data = path.join(dir, 'data');
  fs.mkdirSync(path.join(data, 'sub'), { recursive: true });
  let r = make(':memory:', `COPY (SELECT 1 AS id, 'ann' AS name UNION ALL SELECT 2, 'bob') TO '${data}/people.parquet' (FORMAT parquet)`);
  assert.equal(r.status, 0, r.stderr);
  fs.copyFileSync(path.join(data, 'people.parquet'), path.join(data, 'sub', 'hidden.parquet'));
  fs.writeFileSync(path.join(data, 'orders.jsonl'), '{"id":1,"total":9.5}\n{"id":2,"total":3}\n');
  fs.writeFileSync(path.join(data, 'cities.csv'), 'id,city\n1,Oslo\n2,n/a\n');
  fs.writeFileSync(path.join(dir, 'secret.csv'), 'token\nsecret-zq81\n');
  fs.symlinkSync(path.join(dir, 'secret.csv'), path.join(data, 'leak.csv'));
  const snapshot = (d) => fs.readdirSync(d).sort().filter((f) => fs.lstatSync(path.join(d, f)).isFile())
    .map((f) => `${f} ${sha256(path.join(d, f))}`).join('\n') + '|' + fs.readdirSync(d).sort().join(',');
  const before = snapshot(data);
  const s = await run(['schema', data]);
  assert.equal(s.code, 0, s.stderr);
  assert.deepEqual([...s.stdout.matchAll(/^# Table: (\w+)/gm)].map((m) => m[1]), ['cities', 'orders', 'people']);
  assert.match(s.stdout, /skipped what in .* is not a data file of the folder .*: leak\.csv/);
  assert.doesNotMatch(s.stdout, /secret-zq81/);
  r = await run(['sql', data, 'SELECT p.name, o.total, c.city FROM people p JOIN orders o USING (id) JOIN cities c USING (id) ORDER BY 1', '--json']);
  assert.equal(r.code, 0, r.stderr);
  assert.deepEqual(r.json.rows, [['ann', 9.5, 'Oslo'], ['bob', 3, null]]);
  for (const q of [`SELECT * FROM read_csv('${data}/leak.csv')`, `SELECT * FROM read_parquet('${data}/sub/hidden.parquet')`]) {
    r = await run(['sql', data, q]);
    assert.equal(r.code, 3, `${q}: ${r.stdout}${r.stderr}`);
    assert.doesNotMatch(r.stdout + r.stderr, /secret-zq81/);
  }
  assert.equal(snapshot(data), before);
});

test('a ragged CSV file under DuckDB: no row is dropped, short rows get NULLs, a long row keeps its fields', { skip }, async () => {
  const dir = tempDir('tabletalk-duckdb-ragged-');
  const file = path.join(dir, 'rag.csv');
  fs.writeFileSync(file, 'a,b,c\n1,2,3\n4,5\n10,11,12\n');
  assert.deepEqual(await bothEngines(file, 'SELECT a, b, c FROM rag ORDER BY a'), [[1, 2, 3], [4, 5, null], [10, 11, 12]]);
  const long = path.join(dir, 'long.csv');
  fs.writeFileSync(long, 'a,b,c\n1,2,3\n4,5\n6,7,8,9\n10,11,12\n');
  const r = await run(['sql', long, 'SELECT a, b, c FROM long ORDER BY a', '--engine', 'duckdb', '--json']);
  assert.equal(r.code, 0, r.stderr);
  assert.deepEqual(r.json.rows, [[1, 2, 3], [4, 5, null], [6, 7, 8], [10, 11, 12]]);
});

test('CSV typing under DuckDB as under SQLite: null tokens, a decimal comma, a few odd values, a code, --csv-types', { skip }, async () => {
  const dir = tempDir('tabletalk-duckdb-typing-');
  const ages = path.join(dir, 'ages.csv');
  fs.writeFileSync(ages, 'name,age\nann,34\nbob,""\ncy,n/a\ndee,41\neve,27\n');
  assert.deepEqual(await bothEngines(ages, 'SELECT avg(age), max(age) FROM ages'), [[34, 41]]);

  const eu = path.join(dir, 'eu.csv');
  fs.writeFileSync(eu, 'item;price;code\na;9,5;01234\nb;1.234,5;00012\nc;3;04444\n');
  assert.deepEqual(await bothEngines(eu, 'SELECT sum(price), min(code) FROM eu'), [[1247, '00012']]);
  const es = await run(['schema', eu, '--engine', 'duckdb']);
  assert.equal(es.code, 0, es.stderr);
  assert.match(es.stdout, /# Table: eu \(3 rows\), ';'-separated/);
  assert.match(es.stdout, /\(price: DOUBLE, decimal comma;/);
  assert.match(es.stdout, /\(code: VARCHAR, kept as text: '01234' has a leading zero, a code not a number;/);
  assert.deepEqual(await bothEngines(eu, 'SELECT sum(code) FROM eu', ['--csv-types', 'code=integer']), [[5690]]);
  const wrong = await run(['sql', eu, 'SELECT 1', '--engine', 'duckdb', '--csv-types', 'nope=integer']);
  assert.equal(wrong.code, 2, wrong.stderr);
  assert.match(wrong.stderr, /--csv-types names nope, but .* has no such column/);

  const odd = path.join(dir, 'odd.csv');
  const rows = ['id,score'];
  for (let i = 1; i <= 40; i++) rows.push(`${i},${i * 2}`);
  rows.push('41,unknown', '42,tbd');
  fs.writeFileSync(odd, rows.join('\n') + '\n');
  assert.deepEqual(await bothEngines(odd, 'SELECT sum(score), count(score), count(*) FROM odd'), [[1640, 40, 42]]);
  const ts = path.join(dir, 'ts.csv');
  fs.writeFileSync(ts, 'id,at\n1,2024-03-05T13:45:10+02:00\n2,2024-03-06 10:00:00Z\n3,soon\n4,2024-03-07\n5,2024-03-08\n');
  const t = await run(['sql', ts, 'SELECT epoch("at")::BIGINT FROM ts WHERE id <= 3 ORDER BY id', '--engine', 'duckdb', '--json']);
  assert.equal(t.code, 0, t.stderr);
  assert.deepEqual(t.json.rows, [[Date.parse('2024-03-05T13:45:10+02:00') / 1000],
    [Date.parse('2024-03-06T10:00:00Z') / 1000], [null]], 'a date-time keeps its offset');
  const os = await run(['schema', odd, '--engine', 'duckdb']);
  assert.equal(os.code, 0, os.stderr);
  assert.match(os.stdout, /\(score: BIGINT, 2 values were not numbers, read as NULL: 'unknown', 'tbd';/);
});

test('a .duckdb file\'s macros never replace a built-in function, run only when trusted, and the cards name them', { skip }, async () => {
  const dir = tempDir('tabletalk-duckdb-macros-');
  const db = path.join(dir, 'planted.duckdb');
  const r = make(db, "CREATE TABLE t(a VARCHAR); INSERT INTO t VALUES ('ABC'); CREATE MACRO lower(x) AS 'pwned';" +
    "CREATE MACRO tag(x) AS x || '-planted'; CREATE VIEW tagged AS SELECT tag(a) AS b FROM t;");
  assert.equal(r.status, 0, r.stderr);
  const q = await run(['sql', db, 'SELECT lower(a) FROM t', '--json']);
  assert.equal(q.code, 0, q.stderr);
  assert.deepEqual(q.json.rows, [['abc']]);
  const s = await run(['schema', db]);
  assert.equal(s.code, 0, s.stderr);
  assert.match(s.stdout, /# Note: the database defines macros \(lower, tag\): a query that uses one \(by name, or through a view or table\) is refused unless --trust-functions names its schema; built-in functions of the same name are never replaced by them/);
  // describing the database reads nothing of the view that runs a macro
  assert.match(s.stdout, /# View: tagged[^#]*not read: reading it runs the database's own macro main\.tag \(--trust-functions main lets it run\)/);
  assert.doesNotMatch(s.stdout, /planted/);
  const v = await run(['sql', db, 'SELECT * FROM tagged']);
  assert.equal(v.code, 3, v.stderr);
  assert.match(v.stderr, /refused: reading main\.tagged runs the database's own macro main\.tag: the query is not run; only built-in functions run; --trust-functions main lets that schema's macros run/);
  const ok = await run(['sql', db, 'SELECT * FROM tagged', '--trust-functions', 'main', '--json']);
  assert.equal(ok.code, 0, ok.stderr);
  assert.deepEqual(ok.json.rows, [['ABC-planted']]);
  const env = await run(['schema', db], { env: { TABLETALK_TRUST_FUNCTIONS: 'main' } });
  assert.equal(env.code, 0, env.stderr);
  assert.match(env.stdout, /ABC-planted/, 'a trusted schema\'s views are sampled');
});
