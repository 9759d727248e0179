// CSV files as the database, through the real binary: a file with quoted
// fields (commas, quotes, a line end inside), a byte order mark and accented
// text asked through `sql` (exact rows) and `ask` (the scripted model sees
// the table and its SQL runs on it), nothing ever written beside the file,
// writes refused with exit 3 as on SQLite, a folder of two files joined,
// `schema`, --no-header, and a malformed file naming its line; and typing
// that never invents a number (null tokens, a few odd values NULL with a
// note the model reads, decimal commas, codes, dates, --csv-types, ragged
// rows kept, text files without a .csv name).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { CHINOOK, run, server, sha256, startWeb, tempDir } from '../support/harness.mjs';

const PEOPLE = '\uFEFFid,name,city,note,code,score\r\n'
  + '1,José Peña,"Zürich, CH","says ""hi"", then\r\nleaves",00123,1.5\r\n'
  + '2,Zoë Müller,Málaga,plain,00456,2\r\n'
  + '3,Ñandú,"Köln",,00789,\r\n';

/* A folder holding people.csv, and its listing with sizes and hashes. */
function csvDir() {
  const dir = tempDir('tabletalk-csv-');
  const file = path.join(dir, 'people.csv');
  fs.writeFileSync(file, PEOPLE);
  return { dir, file, state: path.join(tempDir('tabletalk-csv-state-'), 'state') };
}
const listing = (dir) => fs.readdirSync(dir).sort()
  .map((f) => `${f} ${sha256(path.join(dir, f))}`).join('\n');

const sql = (s) => ({ tool: 'run_sql', args: { sql: s } });
const answer = (text) => ({ tool: 'answer', args: { text } });

test('sql on a CSV file with quotes, a BOM and accents: exact rows, types, nothing written beside it', async () => {
  const c = csvDir();
  const before = listing(c.dir);
  const r = await run(['sql', c.file, 'SELECT id, name, city, note, code, score, typeof(score) FROM people ORDER BY id', '--json']);
  assert.equal(r.code, 0, r.stderr);
  assert.deepEqual(r.json.columns, ['id', 'name', 'city', 'note', 'code', 'score', 'typeof(score)']);
  assert.deepEqual(r.json.column_types, ['INTEGER', 'TEXT', 'TEXT', 'TEXT', 'TEXT', 'REAL', '']);
  assert.deepEqual(r.json.rows, [
    [1, 'José Peña', 'Zürich, CH', 'says "hi", then\r\nleaves', '00123', 1.5, 'real'],
    [2, 'Zoë Müller', 'Málaga', 'plain', '00456', 2, 'real'],
    [3, 'Ñandú', 'Köln', null, '00789', null, 'null'],
  ]);
  const t = await run(['sql', c.file, "SELECT name FROM people WHERE city = 'Málaga'"]);
  assert.equal(t.code, 0, t.stderr);
  assert.match(t.stdout, /Zoë Müller/);
  assert.equal(listing(c.dir), before);
});

test('ask on a CSV file: the model sees the table, its SQL runs on the file, nothing written beside it', async () => {
  const c = csvDir();
  const before = listing(c.dir);
  const Q = "SELECT name, city FROM people WHERE note LIKE '%hi%'";
  const srv = await server({ rules: [
    { when: { step: 0 }, ...sql(Q) },
    { when: { step: 1 }, ...answer('José Peña of Zürich says hi.') },
  ] });
  const r = await run(['ask', c.file, 'Who says hi?', '--base-url', srv.url, '--state-dir', c.state, '--json']);
  await srv.close();
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.json.answer, 'José Peña of Zürich says hi.');
  assert.equal(r.json.sql, Q);
  assert.deepEqual(r.json.rows, [['José Peña', 'Zürich, CH']]);
  const prompt = srv.requests[0].body.messages.map((m) => m.content ?? '').join('\n');
  assert.match(prompt, /people/);
  assert.match(prompt, /score/);
  assert.match(prompt, /Zürich, CH|Málaga|Köln/);
  const tool = srv.requests[1].body.messages.filter((m) => m.role === 'tool').at(-1).content;
  assert.match(tool, /José Peña/);
  assert.equal(listing(c.dir), before);
});

test('writes are refused with exit 3, exactly as on a SQLite file', async () => {
  const c = csvDir();
  const before = listing(c.dir);
  for (const w of ['DELETE FROM people', "INSERT INTO people(id) VALUES (9)", 'DROP TABLE people',
    'CREATE TABLE t(x)']) {
    const onCsv = await run(['sql', c.file, w]);
    assert.equal(onCsv.code, 3, `${w}: ${onCsv.stderr}`);
    assert.match(onCsv.stderr, /refused/);
  }
  const onSqlite = await run(['sql', CHINOOK, 'DELETE FROM Track']);
  assert.equal(onSqlite.code, 3);
  const after = await run(['sql', c.file, 'SELECT count(*) FROM people', '--json']);
  assert.deepEqual(after.json.rows, [[3]]);
  assert.equal(listing(c.dir), before);
});

test('a folder of CSV and TSV files: one table each, joined in SQL; schema shows them', async () => {
  const dir = tempDir('tabletalk-csv-folder-');
  fs.writeFileSync(path.join(dir, 'customers.csv'), 'id,name\n1,Zoë\n2,Ñico\n');
  fs.writeFileSync(path.join(dir, 'Order Lines.tsv'), 'customer_id\tamount\n1\t2.5\n1\t3\n2\t10\n');
  const before = listing(dir);
  const r = await run(['sql', dir, 'SELECT c.name, sum(o.amount) AS total FROM customers c JOIN Order_Lines o ON o.customer_id = c.id GROUP BY c.id ORDER BY c.id', '--json']);
  assert.equal(r.code, 0, r.stderr);
  assert.deepEqual(r.json.rows, [['Zoë', 5.5], ['Ñico', 10]]);
  const s = await run(['schema', dir]);
  assert.equal(s.code, 0, s.stderr);
  assert.match(s.stdout, /Table: Order_Lines/);
  assert.match(s.stdout, /customer_id: INTEGER/);
  assert.match(s.stdout, /amount: REAL/);
  assert.match(s.stdout, /Table: customers/);
  assert.equal(listing(dir), before);
});

test('--no-header reads the first line as data; a malformed file names its line (exit 1)', async () => {
  const dir = tempDir('tabletalk-csv-bad-');
  const plain = path.join(dir, 'names.csv');
  fs.writeFileSync(plain, 'name,town\nAna,Lyon\n');
  const r = await run(['sql', plain, 'SELECT column_1 FROM names', '--no-header', '--json']);
  assert.equal(r.code, 0, r.stderr);
  assert.deepEqual(r.json.rows, [['name'], ['Ana']]);
  const bad = path.join(dir, 'bad.csv');
  fs.writeFileSync(bad, 'a,b\n1,2\n3,"four\n5,6\n');
  const before = listing(dir);
  const e = await run(['sql', bad, 'SELECT 1']);
  assert.equal(e.code, 1);
  assert.match(e.stderr, /bad\.csv:3: a quoted field is never closed/);
  assert.equal(listing(dir), before);
});

/* Issue 26: CSV typing that never invents a number. */
const AGES = 'name,age\nAna,34\nBo,""\nCy,n/a\nDi,41\nEd,27\n';

test('null tokens are NULL: avg(age) over 34, "", n/a, 41, 27 is 34 and max is 41; schema says what was read', async () => {
  const dir = tempDir('tabletalk-csv-types-');
  const file = path.join(dir, 'ages.csv');
  fs.writeFileSync(file, AGES);
  const before = listing(dir);
  const r = await run(['sql', file, 'SELECT avg(age), max(age), count(age), typeof(max(age)) FROM ages', '--json']);
  assert.equal(r.code, 0, r.stderr);
  assert.deepEqual(r.json.rows, [[34, 41, 3, 'integer']]);
  const s = await run(['schema', file]);
  assert.equal(s.code, 0, s.stderr);
  assert.match(s.stdout, /# Table: ages \(5 rows\), ','-separated; NULL: '', 'n\/a'\n/);
  assert.match(s.stdout, /\(age: INTEGER\)/);
  const j = await run(['schema', file, '--json']);
  assert.equal(j.json.tables[0].description, "','-separated; NULL: '', 'n/a'");
  assert.equal(listing(dir), before);
});

test('a few values that are not numbers are NULL, and the schema, the prompt and the answer check say so', async () => {
  const dir = tempDir('tabletalk-csv-types-');
  const file = path.join(dir, 'scores.csv');
  const vals = ['10', '20', 'unknown', '30', 'tbd', '40', '50', '60', 'unknown', '70', '80', '90', '100', '110', '120'];
  fs.writeFileSync(file, 'id,score\n' + vals.map((v, i) => `${i + 1},${v}`).join('\n') + '\n');
  const r = await run(['sql', file, 'SELECT sum(score), avg(score), min(score), count(*) FROM scores', '--json']);
  assert.equal(r.code, 0, r.stderr);
  assert.deepEqual(r.json.rows, [[780, 65, 10, 15]]);
  const NOTE = "3 values were not numbers, read as NULL: 'unknown', 'tbd'";
  const s = await run(['schema', file]);
  assert.ok(s.stdout.includes(`(score: INTEGER, ${NOTE}),`), s.stdout);
  /* the model reads the note; an answer with the old text-as-0 average
   * (52) is not verified, the true one (65) is */
  const state = path.join(dir, 'state');
  const Q = 'SELECT avg(score) FROM scores';
  for (const [text, verified] of [['The average score is 52.', 'unbacked'], ['The average score is 65.', 'checked']]) {
    const srv = await server({ rules: [
      { when: { step: 0 }, ...sql(Q) },
      { when: { step: 1 }, ...answer(text) },
      { when: { step: 2 }, ...answer(text) },
    ] });
    const a = await run(['ask', file, 'What is the average score?', '--base-url', srv.url, '--state-dir', state, '--json']);
    await srv.close();
    assert.equal(a.code, 0, a.stderr);
    assert.equal(a.json.verified, verified, text);
    assert.deepEqual(a.json.rows, [[65]]);
    const prompt = srv.requests[0].body.messages.map((m) => m.content ?? '').join('\n');
    assert.ok(prompt.includes(NOTE), 'the note is in the prompt');
  }
});

test('a decimal comma in a ; file is summed right; codes stay text; ISO dates are DATE', async () => {
  const dir = tempDir('tabletalk-csv-types-');
  const file = path.join(dir, 'prices.csv');
  fs.writeFileSync(file, 'item;price;zip;sold\na;9,5;01234;2024-03-01\nb;2,75;12345;2024-03-02\nc;-1,25;23456;2024-03-03\nd;1.234,5;34567;-\n');
  const r = await run(['sql', file, 'SELECT sum(price), max(sold), min(zip) FROM prices', '--json']);
  assert.equal(r.code, 0, r.stderr);
  assert.deepEqual(r.json.rows, [[1245.5, '2024-03-03', '01234']]);
  const s = await run(['schema', file]);
  assert.match(s.stdout, /# Table: prices \(4 rows\), ';'-separated; NULL: '-'\n/);
  assert.match(s.stdout, /\(price: REAL, decimal comma\)/);
  assert.match(s.stdout, /\(zip: TEXT, kept as text: '01234' has a leading zero, a code not a number, examples/);
  assert.match(s.stdout, /\(sold: DATE, examples: \["2024-03-01"\]\)/);
});

test('--csv-types overrides, a bad one is a usage error that says how to write it', async () => {
  const dir = tempDir('tabletalk-csv-types-');
  const file = path.join(dir, 'prices.csv');
  fs.writeFileSync(file, 'item;amount;zip\na;1.234;01234\nb;2.500;12345\n');
  const plain = await run(['schema', file]);
  assert.match(plain.stdout, /amount: TEXT, kept as text: '1.234' reads as two numbers; --csv-types amount=real or amount=decimal-comma says which, examples/);
  const r = await run(['sql', file, 'SELECT sum(amount), sum(zip) FROM prices', '--csv-types', 'amount=decimal-comma,prices.zip=integer', '--json']);
  assert.equal(r.code, 0, r.stderr);
  assert.deepEqual(r.json.rows, [[3734, 13579]]);
  const p = await run(['sql', file, 'SELECT sum(amount) FROM prices', '--csv-types', 'amount=real', '--json']);
  assert.deepEqual(p.json.rows, [[3.734]]);
  const bad = await run(['sql', file, 'SELECT 1', '--csv-types', 'amount=money']);
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /--csv-types: unknown type 'money' for amount; write --csv-types as column=type/);
  const none = await run(['schema', file, '--csv-types', 'amout=real']);
  assert.equal(none.code, 2, none.stderr);
  assert.match(none.stderr, /--csv-types names amout, but .*prices\.csv has no such column/);
});

test('a ragged row is never dropped: short ones get NULLs, long ones lose their extra fields, and the schema counts them', async () => {
  const dir = tempDir('tabletalk-csv-types-');
  const ragged = path.join(dir, 'ragged.csv');
  fs.writeFileSync(ragged, 'a,b\n1,2\n3,4,5\n6\n');
  const g = await run(['sql', ragged, 'SELECT a, b FROM ragged', '--json']);
  assert.equal(g.code, 0, g.stderr);
  assert.deepEqual(g.json.rows, [[1, 2], [3, 4], [6, null]]);
  const s = await run(['schema', ragged]);
  assert.match(s.stdout, /# Table: ragged \(3 rows\), ','-separated; 1 short row, at line 4, read with NULLs; 1 long row, at line 3: fields past column 2 left out\n/);
});

test('a text file named .txt or without an extension is read as CSV', async () => {
  const dir = tempDir('tabletalk-csv-types-');
  for (const name of ['ages.txt', 'ages']) {
    const file = path.join(dir, name);
    fs.writeFileSync(file, AGES);
    const r = await run(['sql', file, 'SELECT avg(age) FROM ages', '--json']);
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(r.json.rows, [[34]]);
    fs.unlinkSync(file);
  }
  const tab = path.join(dir, 'export.dat');
  fs.writeFileSync(tab, 'k\tv\nx\t9,5\n');
  const t = await run(['sql', tab, 'SELECT v * 2 FROM export', '--json']);
  assert.equal(t.code, 0, t.stderr);
  assert.deepEqual(t.json.rows, [[19]]);
});

/* A folder from an untrusted archive: dataset/notes.csv is a link to
 * ../secret.csv, outside the folder. It is not read: no table, a note on
 * stderr and in `schema` (text and JSON) and the web page's /api/schema,
 * and nothing of the secret file ever reaches the model endpoint, not even
 * when the model asks for the table by name. */
test('a link out of a CSV folder is skipped with a note, and its content never reaches the model', async () => {
  const top = tempDir('tabletalk-csv-link-');
  const dir = path.join(top, 'dataset');
  fs.mkdirSync(dir);
  const SECRET = 'sk-live-0123456789abcdef';
  fs.writeFileSync(path.join(top, 'secret.csv'), `name,key\nprod,${SECRET}\n`);
  fs.writeFileSync(path.join(dir, 'people.csv'), PEOPLE);
  fs.symlinkSync('../secret.csv', path.join(dir, 'notes.csv'));
  const NOTE = 'notes.csv (a symbolic link that leads out of the folder)';
  const srv = await server({ rules: [
    { when: { step: 0 }, ...sql('SELECT * FROM notes') },
    { when: { step: 1 }, ...sql('SELECT name FROM people ORDER BY id LIMIT 1') },
    { when: { step: 2 }, ...answer('José Peña is the first person.') },
  ] });
  const state = path.join(top, 'state');
  const r = await run(['ask', dir, 'Who is first?', '--base-url', srv.url, '--state-dir', state, '--json']);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.json.answer, 'José Peña is the first person.');
  assert.match(r.stderr, new RegExp(`warning: skipped in .*dataset: ${NOTE.replace(/[()]/g, '\\$&')}`));
  assert.ok(srv.requests.length >= 3);
  for (const req of srv.requests) assert.ok(!JSON.stringify(req.body).includes(SECRET), 'the secret reached the model');
  assert.match(srv.requests[1].body.messages.filter((m) => m.role === 'tool').at(-1).content, /no such table: notes/);
  assert.ok(!fs.readFileSync(r.json.trace, 'utf8').includes(SECRET));

  const s = await run(['schema', dir]);
  assert.equal(s.code, 0, s.stderr);
  assert.match(s.stdout, /Table: people/);
  assert.doesNotMatch(s.stdout, /Table: notes/);
  assert.ok(s.stdout.includes(`# Note: skipped in ${dir}: ${NOTE}`), s.stdout);
  assert.ok(s.stderr.includes(NOTE));
  const j = await run(['schema', dir, '--json']);
  assert.equal(j.code, 0, j.stderr);
  assert.deepEqual(j.json.tables.map((t) => t.name), ['people']);
  assert.deepEqual(j.json.notes, [`skipped in ${dir}: ${NOTE}`]);
  assert.ok(!j.stdout.includes(SECRET));

  const w = await startWeb({ db: dir, state }, srv);
  const entry = await fetch(`${w.base}/?token=${w.token}`, { redirect: 'manual' });
  const cookie = entry.headers.get('set-cookie').split(';')[0];
  const schema = await (await fetch(`${w.base}/api/schema`, { headers: { Cookie: cookie } })).json();
  assert.deepEqual(schema.tables.map((t) => t.name), ['people']);
  assert.deepEqual(schema.notes, [`skipped in ${dir}: ${NOTE}`]);
  await w.close();
  await srv.close();
});
