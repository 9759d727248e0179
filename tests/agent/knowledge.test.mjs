// What the user knows about the data, through the real binary: the
// knowledge file beside the database or --knowledge FILE reaches the model
// (descriptions in the cards, definitions and the nearest examples in the
// question's message), malformed files name their line, and `learn` adds
// examples only for SQL the guard runs, never touching the database.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { ask, run, scratch, server, sha256 } from '../support/harness.mjs';

const answer = (text) => ({ tool: 'answer', args: { text } });
const knowledge = {
  tables: { Invoice: 'one row per sale to a customer' },
  columns: { 'Invoice.Total': 'amount charged in US dollars, tax included' },
  definitions: ['revenue = SUM(InvoiceLine.UnitPrice * InvoiceLine.Quantity)',
    'top customer means by revenue'],
  examples: [
    { question: 'Revenue per country', sql: 'SELECT BillingCountry, SUM(Total) FROM Invoice GROUP BY 1' },
    { question: 'List employees', sql: 'SELECT * FROM Employee' },
    { question: 'How many tracks per genre', sql: 'SELECT GenreId, COUNT(*) FROM Track GROUP BY 1' },
    { question: 'Albums per artist', sql: 'SELECT ArtistId, COUNT(*) FROM Album GROUP BY 1' },
    { question: 'Which country has the most customers', sql: 'SELECT Country FROM Customer' },
  ],
};
const allText = (req) => req.body.messages.map((m) => m.content ?? '').join('\n');

for (const where of ['beside', 'flag']) {
  test(`the knowledge file (${where}) reaches the model: descriptions, definitions, nearest examples`, async () => {
    const sc = scratch();
    const file = where === 'beside' ? path.join(sc.dir, 'chinook.knowledge.json')
      : path.join(sc.dir, 'facts.json');
    fs.writeFileSync(file, JSON.stringify(knowledge, null, 2));
    const srv = await server({ rules: [answer('Done.')] });
    const r = await ask(sc, srv, 'Revenue by country for the top customer?',
      where === 'flag' ? ['--knowledge', file] : []);
    await srv.close();
    assert.equal(r.code, 0, r.stderr);
    const all = allText(srv.requests[0]);
    assert.match(all, /one row per sale to a customer/);
    assert.match(all, /amount charged in US dollars, tax included/);
    const msgs = srv.requests[0].body.messages;
    const q = msgs.findIndex((m) => m.role === 'user' && m.content === 'Revenue by country for the top customer?');
    const before = msgs[q - 1].content;
    assert.match(before, /- revenue = SUM\(InvoiceLine\.UnitPrice \* InvoiceLine\.Quantity\)\n/);
    assert.match(before, /- top customer means by revenue\n/);
    assert.match(before, /Q: Revenue per country\nSQL: SELECT BillingCountry, SUM\(Total\) FROM Invoice GROUP BY 1\n/);
    assert.match(before, /Q: Which country has the most customers\n/);
    assert.doesNotMatch(before, /List employees|Albums per artist/);
  });
}

test('a malformed --knowledge FILE is a usage error naming the file and line', async () => {
  const sc = scratch();
  const file = path.join(sc.dir, 'facts.json');
  fs.writeFileSync(file, '{\n  "tables": {"Invoice": "sales",}\n}\n');
  const srv = await server({ rules: [answer('Done.')] });
  const r = await ask(sc, srv, 'How many invoices?', ['--knowledge', file]);
  await srv.close();
  assert.equal(r.code, 2);
  assert.match(r.stderr, new RegExp(`knowledge file ${file.replace(/[.\\/]/g, '\\$&')}:2: .*fix the JSON there`));
  assert.equal(srv.requests.length, 0);
});

test('a malformed file beside the database is warned about and the question still works', async () => {
  const sc = scratch();
  fs.writeFileSync(path.join(sc.dir, 'chinook.knowledge.json'), '{\n\n"examples": {}\n}\n');
  const srv = await server({ rules: [answer('Done.')] });
  const r = await ask(sc, srv, 'How many invoices?');
  await srv.close();
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stderr, /warning: knowledge file .*chinook\.knowledge\.json:3: "examples" must be a list.*going on without it/);
  /* schema says so too, in its text and its JSON's notes */
  const t = await run(['schema', sc.db, 'Genre']);
  assert.equal(t.code, 0, t.stderr);
  assert.match(t.stdout, /# Note: knowledge file .*chinook\.knowledge\.json:3: .*going on without it/);
  const j = await run(['schema', sc.db, '--json']);
  assert.equal(j.json.notes.length, 1);
  assert.match(j.json.notes[0], /^knowledge file .*chinook\.knowledge\.json:3: /);
});

test('learn appends examples, refuses writes (exit 3) and SQL errors (exit 1), never touches the database', async () => {
  const sc = scratch();
  const before = sha256(sc.db);
  const file = path.join(sc.dir, 'chinook.knowledge.json');
  let r = await run(['learn', sc.db, 'How many artists?', 'SELECT COUNT(*) FROM Artist']);
  assert.equal(r.code, 0, r.stderr);
  r = await run(['learn', sc.db, 'How many albums?', 'SELECT COUNT(*) FROM Album']);
  assert.equal(r.code, 0, r.stderr);
  assert.deepEqual(JSON.parse(fs.readFileSync(file, 'utf8')).examples, [
    { question: 'How many artists?', sql: 'SELECT COUNT(*) FROM Artist' },
    { question: 'How many albums?', sql: 'SELECT COUNT(*) FROM Album' },
  ]);
  const kept = fs.readFileSync(file, 'utf8');
  r = await run(['learn', sc.db, 'Remove artists', 'DELETE FROM Artist']);
  assert.equal(r.code, 3);
  assert.match(r.stderr, /refused: writes are not allowed: DELETE on Artist \(the example was not added\)/);
  r = await run(['learn', sc.db, 'Bad', 'SELECT nope FROM Artist']);
  assert.equal(r.code, 1);
  assert.match(r.stderr, /SQL error: no such column: nope/);
  assert.equal(fs.readFileSync(file, 'utf8'), kept);
  assert.equal(sha256(sc.db), before);
  assert.deepEqual(fs.readdirSync(sc.dir).sort(), ['chinook.knowledge.json', 'chinook.sqlite']);
  // the learnt example is what the next question sees
  const srv = await server({ rules: [answer('Done.')] });
  r = await ask(sc, srv, 'how many albums are there');
  await srv.close();
  assert.equal(r.code, 0, r.stderr);
  assert.match(allText(srv.requests[0]), /Q: How many albums\?\nSQL: SELECT COUNT\(\*\) FROM Album\n/);
});

test('learn into --knowledge FILE keeps a malformed file as it is (exit 2)', async () => {
  const sc = scratch();
  const file = path.join(sc.dir, 'k.json');
  fs.writeFileSync(file, '{"examples": [\n');
  const r = await run(['learn', sc.db, 'q', 'SELECT 1', '--knowledge', file]);
  assert.equal(r.code, 2);
  assert.match(r.stderr, /k\.json:2: .*fix it first, the example was not added/);
  assert.equal(fs.readFileSync(file, 'utf8'), '{"examples": [\n');
});

test('learns at the same time each keep their example (folder lock, temp file + rename)', async () => {
  const sc = scratch();
  const rs = await Promise.all([...Array(8).keys()].map((i) =>
    run(['learn', sc.db, `Question ${i}?`, `SELECT ${i}`])));
  for (const r of rs) assert.equal(r.code, 0, r.stderr);
  const ex = JSON.parse(fs.readFileSync(path.join(sc.dir, 'chinook.knowledge.json'), 'utf8')).examples;
  assert.deepEqual(ex.map((e) => e.sql).sort(), [...Array(8).keys()].map((i) => `SELECT ${i}`).sort());
  assert.deepEqual(fs.readdirSync(sc.dir).sort(), ['chinook.knowledge.json', 'chinook.sqlite']);
});
