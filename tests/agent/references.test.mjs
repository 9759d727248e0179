// Answers that cite results ({{q1.r1.Total}}, docs/reference/run-json.md
// "References"): every aggregate and format, rows by position and by key,
// NULLs, rows out of range, a cut result, a reference that does not
// resolve (sent back once, then shown as (?)), and a stale reference to an
// earlier question's result in a follow-up. The values asserted come from
// SQLite through `tabletalk sql`, never from the script.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ask, scratch, server, sqliteRows, lastTool } from '../support/harness.mjs';

const sql = (s) => ({ tool: 'run_sql', args: { sql: s } });
const answer = (text) => ({ tool: 'answer', args: { text } });

/* One query, then an answer; the answer again after a push back. */
function oneQuery(query, text, again = text) {
  return {
    rules: [
      { when: { step: 0 }, ...sql(query) },
      { when: { last_tool: 'Not accepted yet' }, ...answer(again) },
      { when: { step: 1 }, ...answer(text) },
    ],
  };
}

async function askScript(scriptObj, question = 'Tell me.', extra = []) {
  const sc = scratch();
  const srv = await server(scriptObj);
  const r = await ask(sc, srv, question, extra);
  await srv.close();
  return { r, srv, sc };
}

const GENRES = 'SELECT g.Name, count(*) AS n, sum(t.Milliseconds) / 60000.0 AS minutes FROM Track t JOIN Genre g USING (GenreId) GROUP BY g.GenreId ORDER BY n DESC, g.Name';

test('every aggregate and format, filled in from the whole result', async () => {
  const text = [
    'top={{q1.r1.Name}}', 'n={{q1.r1.n}}', 'int={{q1.r1.minutes|0}}', 'int2={{q1.r1.minutes|integer}}',
    'dec={{q1.r1.minutes|0.00}}', 'k={{q1.sum(n)|0,000}}', 'kd={{q1.sum(minutes)|0,000.00}}',
    'avg={{q1.avg(n)|0.0}}', 'min={{q1.min(n)}}', 'max={{q1.max(n)}}', 'count={{q1.count}}',
    'countcol={{q1.count(Name)}}', 'star={{q1.count(*)}}', 'key={{q1[Name=\'Latin\'].n}}', 'pct={{q1.r2.share|0.0%}}', 'pct0={{q1.r2.share|percent}}',
  ].join(' ');
  const query = `SELECT Name, n, minutes, n * 1.0 / (SELECT count(*) FROM Track) AS share FROM (${GENRES})`;
  const { r, sc } = await askScript(oneQuery(query, text));
  assert.equal(r.code, 0, r.stderr);
  const rows = await sqliteRows(sc.db, query);
  const col = (i) => rows.map((x) => x[i]);
  const sum = (a) => a.reduce((s, v) => s + v, 0);
  const group = (s) => s.replace(/\B(?=(\d{3})+(?!\d))/g, ',');
  const want = {
    top: rows[0][0], n: String(rows[0][1]), int: Math.round(rows[0][2]).toString(), int2: Math.round(rows[0][2]).toString(),
    dec: rows[0][2].toFixed(2), k: group(String(sum(col(1)))), kd: group(sum(col(2)).toFixed(2).split('.')[0]) + '.' + sum(col(2)).toFixed(2).split('.')[1],
    avg: (sum(col(1)) / rows.length).toFixed(1), min: String(Math.min(...col(1))), max: String(Math.max(...col(1))),
    count: String(rows.length), countcol: String(rows.length), star: String(rows.length),
    key: String(rows.find((x) => x[0] === 'Latin')[1]), pct: `${(rows[1][3] * 100).toFixed(1)}%`, pct0: `${(rows[1][3] * 100).toFixed(0)}%`,
  };
  const got = Object.fromEntries(r.json.answer.split(' ').map((kv) => kv.split('=')));
  assert.deepEqual(got, want);
  assert.equal(r.json.verified, 'bound');
  assert.equal(r.json.facts.length, 16);
  const f = r.json.facts;
  assert.deepEqual(f[0], { ref: 'q1.r1.Name', query: 1, sql: query, row: 1, column: 'Name', aggregate: null, value: rows[0][0],
    text: rows[0][0], at: 4, length: Buffer.byteLength(rows[0][0]) });
  assert.deepEqual(f.slice(5, 13).map((x) => [x.aggregate, x.row]), [['sum', null], ['sum', null], ['avg', null], ['min', null], ['max', null], ['count', null], ['count', null], ['count', null]]);
  assert.equal(f[10].column, null, 'the row count names no column');
  // the facts' offsets point at their text in the answer
  for (const x of f) assert.equal(Buffer.from(r.json.answer).subarray(x.at, x.at + x.length).toString(), x.text);
});

test('the CLI marks each filled-in value and lists its cell under the answer', async () => {
  const sc = scratch();
  const srv = await server(oneQuery('SELECT count(*) AS tracks FROM Track', 'There are {{q1.r1.tracks|0,000}} tracks.'));
  const { run } = await import('../support/harness.mjs');
  const r = await run(['ask', sc.db, 'How many tracks?', '--base-url', srv.url, '--state-dir', sc.state, '-q']);
  await srv.close();
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /^Answer:\nThere are 3,503\[1\] tracks\.\nFilled in from the results:\n {2}\[1\] q1 row 1, tracks = 3503\n/);
});

test('NULLs: a NULL cell, and aggregates that skip NULLs as SQL does', async () => {
  const query = 'SELECT CustomerId, Company FROM Customer WHERE CustomerId IN (1, 2, 3) ORDER BY CustomerId';
  const text = 'first={{q1.r1.Company}} second={{q1.r2.Company}} companies={{q1.count(Company)}} rows={{q1.count}}';
  const { r, sc } = await askScript(oneQuery(query, text));
  const rows = await sqliteRows(sc.db, query);
  assert.equal(rows[1][1], null, 'customer 2 has no company');
  assert.equal(r.json.answer, `first=${rows[0][1]} second=(no value) companies=${rows.filter((x) => x[1] !== null).length} rows=3`);
  assert.equal(r.json.facts[1].value, null);
  assert.equal(r.json.facts[1].text, '(no value)');
  const nulls = await askScript(oneQuery('SELECT NULL AS x UNION ALL SELECT NULL', 'sum={{q1.sum(x)}} avg={{q1.avg(x)}} count={{q1.count(x)}}'));
  assert.equal(nulls.r.json.answer, 'sum=(no value) avg=(no value) count=0');
});

test('a row out of range goes back once with the reason; the corrected answer is bound', async () => {
  const { r, srv } = await askScript(oneQuery('SELECT Name FROM Genre ORDER BY GenreId LIMIT 3', 'The fourth is {{q1.r4.Name}}.', 'The third is {{q1.r3.Name}}.'));
  assert.equal(r.json.status, 'answered');
  assert.equal(r.json.answer, 'The third is Metal.');
  assert.equal(r.json.verified, 'bound');
  const pushed = srv.requests.find((q) => lastTool(q).startsWith('Not accepted yet'));
  assert.match(lastTool(pushed), /\{\{q1\.r4\.Name\}\}: q1 has 3 rows, so r4 does not exist/);
});

test('a reference still broken after the push back: shown as (?), unbacked', async () => {
  const { r } = await askScript(oneQuery('SELECT Name FROM Genre LIMIT 2', 'It is {{q1.r0.Name}} or {{q1.r1.Nmae}} or {{q2.r1.Name}} or {{q1[Name=\'Nope\'].Name}}.'));
  assert.equal(r.json.status, 'answered');
  assert.equal(r.json.answer, 'It is (?) or (?) or (?) or (?).');
  assert.equal(r.json.verified, 'unbacked');
  assert.deepEqual(r.json.unbacked_numbers, ['{{q1.r0.Name}}', '{{q1.r1.Nmae}}', '{{q2.r1.Name}}', "{{q1[Name='Nope'].Name}}"]);
  assert.deepEqual(r.json.facts, []);
});

test('a key that matches several rows, a format on text and an unknown format are refused with the reason', async () => {
  const { srv } = await askScript(oneQuery("SELECT 'a' AS k, 1 AS v UNION ALL SELECT 'a', 2", '{{q1[k=\'a\'].v}} {{q1.r1.k|0.00}} {{q1.r1.v|money}}'));
  const pushed = lastTool(srv.requests.find((q) => lastTool(q).startsWith('Not accepted yet')));
  assert.match(pushed, /2 rows of q1 have k = 'a'; name the row by position/);
  assert.match(pushed, /q1 row 1, k is not a number, so it takes no format/);
  assert.match(pushed, /unknown format "money"/);
});

test('an aggregate of a result cut at the row cap is taken on the whole result', async () => {
  const query = 'SELECT Milliseconds FROM Track';
  const { r, sc } = await askScript(oneQuery(query, 'Total {{q1.sum(Milliseconds)}} over {{q1.count}} tracks.'));
  const [[total, n]] = await sqliteRows(sc.db, 'SELECT sum(Milliseconds), count(*) FROM Track');
  assert.equal(r.json.truncated, false, '--json reads the rows again');
  assert.equal(r.json.answer, `Total ${total} over ${n} tracks.`);
  // too many rows even to read again: the reference says so
  const big = await askScript(oneQuery('SELECT 1 AS one FROM PlaylistTrack, Genre', 'Rows: {{q1.count}}.'));
  assert.equal(big.r.json.verified, 'unbacked');
  const pushed = lastTool(big.srv.requests.find((q) => lastTool(q).startsWith('Not accepted yet')));
  assert.match(pushed, /q1 was cut at 200 rows, so an aggregate over it would be wrong; compute it in SQL/);
});

test('a stale reference in a follow-up: the earlier question\'s label is refused, the new one binds', async () => {
  const sc = scratch();
  const srv = await server({ rules: [
    { when: { question: '^How many customers in Brazil', step: 0 }, ...sql("SELECT count(*) AS n FROM Customer WHERE Country = 'Brazil'") },
    { when: { question: '^How many customers in Brazil', step: 1 }, ...answer('{{q1.r1.n}} customers.') },
    { when: { question: '^And in Canada', step: 0 }, ...sql("SELECT count(*) AS n FROM Customer WHERE Country = 'Canada'") },
    { when: { question: '^And in Canada', last_tool: 'Not accepted yet' }, ...answer('{{q2.r1.n}} customers.') },
    { when: { question: '^And in Canada', step: 1 }, ...answer('{{q1.r1.n}} customers.') },
  ] });
  const first = await ask(sc, srv, 'How many customers in Brazil?', ['--thread', 's']);
  assert.equal(first.json.answer, '5 customers.');
  const follow = await ask(sc, srv, 'And in Canada?', ['--thread', 's']);
  await srv.close();
  const [[canada]] = await sqliteRows(sc.db, "SELECT count(*) FROM Customer WHERE Country = 'Canada'");
  assert.equal(follow.json.answer, `${canada} customers.`);
  assert.equal(follow.json.verified, 'bound');
  assert.equal(follow.json.facts[0].query, 2);
  const pushed = lastTool(srv.requests.find((q) => lastTool(q).startsWith('Not accepted yet')));
  assert.match(pushed, /\{\{q1\.r1\.n\}\}: q1 belongs to an earlier question and its rows are not kept/);
  // the model saw the label it must cite
  assert.ok(srv.requests.some((q) => q.body.messages.some((m) => m.role === 'tool' && m.content.startsWith('[q2] '))));
});

test('numbers typed beside references: checked, not bound; a wrong one is unbacked', async () => {
  const q = 'SELECT count(*) AS n FROM Genre';
  const { r } = await askScript(oneQuery(q, '{{q1.r1.n}} genres, so 25 in all.'));
  assert.equal(r.json.verified, 'checked');
  const bad = await askScript(oneQuery(q, '{{q1.r1.n}} genres, and 999 more.'));
  assert.equal(bad.r.json.verified, 'unbacked');
  assert.deepEqual(bad.r.json.unbacked_numbers, ['999']);
  // a number the question itself gave does not keep an answer from being bound
  const top = await askScript(oneQuery('SELECT Name FROM Genre ORDER BY GenreId LIMIT 3', 'The top 3: {{q1.r1.Name}}, {{q1.r2.Name}}, {{q1.r3.Name}}.'), 'Which are the top 3 genres?');
  assert.equal(top.r.json.verified, 'bound');
});
