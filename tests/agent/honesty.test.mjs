// What the output promises, through the real binary and scripted models:
// `verified` means every number of the answer is backed by a query result
// (formatted, rounded and derived numbers pass; invented, off-by-one and
// other tables' numbers do not, and are named), and a write the model tried
// is always reported as refused, with exit 3, whatever the model says next.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ask, run, scratch, server, sha256, lastTool, traceEvents, CHINOOK } from '../support/harness.mjs';

const sql = (s) => ({ tool: 'run_sql', args: { sql: s } });
const answer = (text) => ({ tool: 'answer', args: { text } });

/* A question answered after the given queries, one per step. */
function script(question, queries, text, { insist = true } = {}) {
  const rules = queries.map((q, i) => ({ when: { question, step: i }, ...sql(q) }));
  rules.push({ when: { question, step: queries.length }, ...answer(text) });
  if (insist) rules.push({ when: { question, step: queries.length + 1 }, ...answer(text) });
  return { rules };
}

async function asked(question, queries, text, extra = []) {
  const sc = scratch();
  const srv = await server(script(question, queries, text));
  try {
    const r = await ask(sc, srv, question, extra);
    return { r, srv, sc };
  } finally {
    await srv.close();
  }
}

const FRANCE = "SELECT count(*) AS customers FROM Customer WHERE Country = 'France'";

for (const [name, queries, text] of [
  ['formatted with a thousands separator', ['SELECT count(*) FROM Track'], 'There are 3,503 tracks.'],
  ['rounded to the precision shown', ['SELECT avg(Milliseconds) / 60000.0 AS minutes FROM Track'],
    'A track lasts 6.6 minutes on average (about 6.56).'],
  ['a money amount', ['SELECT sum(Total) FROM Invoice'], 'Invoices total $2,328.60.'],
  ['a percentage derived from two results',
    ["SELECT count(*) FROM Track t JOIN Genre g USING (GenreId) WHERE g.Name = 'Rock'", 'SELECT count(*) FROM Track'],
    'Rock has 1,297 of the 3,503 tracks, 37% of them.'],
  ['a year and a count of the rows shown',
    ["SELECT FirstName, LastName FROM Customer WHERE Country = 'Brazil'", 'SELECT min(InvoiceDate) FROM Invoice'],
    'The 5 Brazilian customers are listed; invoicing began in 2021.'],
]) {
  test(`verified: ${name}`, async () => {
    const { r, srv } = await asked('How much?', queries, text);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.json.verified, 'checked', JSON.stringify(r.json.unbacked_numbers));
    assert.deepEqual(r.json.unbacked_numbers, []);
    assert.equal(srv.requests.length, queries.length + 1, 'no push back');
    const check = traceEvents(r.json.trace).find((e) => e.event === 'verify');
    assert.equal(check.decision, 'verified');
    assert.ok(check.numbers_checked >= 1);
  });
}

for (const [name, queries, text, bad] of [
  ['an invented number', [FRANCE], '98765 customers are from France.', ['98765']],
  ['off by one', [FRANCE], '6 customers are from France.', ['6']],
  ['a number from another table', ['SELECT count(*) FROM Genre'], 'There are 25 genres and 59 customers.', ['59']],
]) {
  test(`not verified: ${name} is pushed back once, then shown with a warning`, async () => {
    const { r, srv } = await asked('How many?', queries, text);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.json.status, 'answered');
    assert.equal(r.json.verified, 'unbacked');
    assert.deepEqual(r.json.unbacked_numbers, bad);
    assert.equal(srv.requests.length, queries.length + 2, 'exactly one push back');
    const pushed = lastTool(srv.requests[queries.length + 1]);
    assert.match(pushed, new RegExp(`not in any query result of this conversation: ${bad.join(', ')}\\.`));
    const checks = traceEvents(r.json.trace).filter((e) => e.event === 'verify');
    assert.deepEqual(checks.map((e) => e.decision), ['push_back', 'accept_unverified']);
    assert.deepEqual(checks[1].unbacked_numbers, bad);
    const end = traceEvents(r.json.trace).at(-1);
    assert.equal(end.verified, 'unbacked');
    assert.deepEqual(end.unbacked_numbers, bad);
  });
}

test('the warning is visible in the plain output, under the answer', async () => {
  const sc = scratch();
  const srv = await server(script('How many?', [FRANCE], '98765 customers are from France.'));
  const r = await run(['ask', sc.db, 'How many?', '--base-url', srv.url, '--state-dir', sc.state]);
  await srv.close();
  assert.equal(r.code, 0);
  assert.match(r.stdout, /^Answer:\n98765 customers are from France\.\nWarning: not verified: 98765 is in no query result of this question; check it before you use it\.\n/);
  assert.match(r.stderr, /check 98765 in no query result; asking the model to check/);
});

test('a push back that makes the model correct itself ends verified', async () => {
  const sc = scratch();
  const srv = await server({
    rules: [
      { when: { step: 0 }, ...sql(FRANCE) },
      { when: { step: 1 }, ...answer('98765 customers are from France.') },
      { when: { step: 2 }, ...answer('5 customers are from France.') },
    ],
  });
  const r = await ask(sc, srv, 'How many customers are from France?');
  await srv.close();
  assert.deepEqual(r.json.rows, [[5]]);
  assert.equal(r.json.answer, '5 customers are from France.');
  assert.equal(r.json.verified, 'checked');
});

test('a follow-up may cite the numbers of the thread\'s earlier results', async () => {
  const sc = scratch();
  const brazil = "SELECT count(*) FROM Customer WHERE Country = 'Brazil'";
  const canada = "SELECT count(*) FROM Customer WHERE Country = 'Canada'";
  const srv = await server({
    rules: [
      { when: { question: 'Brazil', step: 0 }, ...sql(brazil) },
      { when: { question: 'Brazil', step: 1 }, ...answer('Brazil has 5 customers.') },
      { when: { question: 'Canada', step: 0 }, ...sql(canada) },
      { when: { question: 'Canada', step: 1 }, ...answer("Canada has 8 customers against Brazil's 5.") },
      { when: { question: 'Canada', step: 2 }, ...answer("Canada has 8 customers against Brazil's 5.") },
    ],
  });
  await ask(sc, srv, 'How many customers are in Brazil?', ['--thread', 't']);
  const followUp = await ask(sc, srv, 'And in Canada?', ['--thread', 't']);
  assert.equal(followUp.json.verified, 'checked', 'the 5 comes from the thread\'s first result');
  const alone = await ask(sc, srv, 'And in Canada?', ['--thread', 'other']);
  await srv.close();
  assert.equal(alone.json.verified, 'unbacked', 'in a fresh thread nothing backs the 5');
  assert.deepEqual(alone.json.unbacked_numbers, ['5']);
});

/* ---- refused writes ------------------------------------------------------ */

test('a model that claims a refused write succeeded: status refused, exit 3, the refusal shown first', async () => {
  const sc = scratch();
  const before = sha256(sc.db);
  const srv = await server(script('Delete', ['DELETE FROM Track'], 'Done, all tracks are deleted.', { insist: false }));
  const r = await run(['ask', sc.db, 'Delete all tracks', '--base-url', srv.url, '--state-dir', sc.state]);
  const j = await ask(sc, srv, 'Delete all tracks');
  await srv.close();
  assert.equal(r.code, 3);
  assert.equal(r.stdout, 'Refused:\nThe write was refused: writes are not allowed: DELETE on Track. tabletalk only reads, so ' +
    'the database is unchanged.\n\nDone, all tracks are deleted.\n\nRefused SQL:\nDELETE FROM Track\n');
  assert.equal(j.code, 3);
  assert.equal(j.json.status, 'refused');
  assert.equal(j.json.answer, 'Done, all tracks are deleted.');
  assert.deepEqual(j.json.refusal, { message: 'writes are not allowed: DELETE on Track', sql: 'DELETE FROM Track' });
  const end = traceEvents(j.json.trace).at(-1);
  assert.equal(end.status, 'refused');
  assert.equal(end.refusal.sql, 'DELETE FROM Track');
  assert.equal(sha256(sc.db), before);
  assert.equal(sha256(CHINOOK), '7651ba378ac2fcd0dfc3c66fb101f7a7eed3ba39a612ec642b96e20702061f15');
});

test('a model that runs out of steps after a refused write: refused, exit 3', async () => {
  const sc = scratch();
  const srv = await server({
    rules: [
      { when: { step: 0 }, ...sql('DROP TABLE Track') },
      { ...sql('SELECT 1') },
    ],
  });
  const r = await ask(sc, srv, 'Remove the track table');
  await srv.close();
  assert.equal(r.code, 3, r.stderr);
  assert.equal(r.json.status, 'refused');
  assert.match(r.json.refusal.message, /schema changes are not allowed: DROP TABLE Track/);
  assert.match(r.json.error, /used all 8 tool calls/);
});

test('a refused statement that is not a write (a PRAGMA), then an answer: answered, exit 0', async () => {
  const sc = scratch();
  const srv = await server({
    rules: [
      { when: { step: 0 }, ...sql('PRAGMA table_info(Track)') },
      { when: { step: 1 }, ...sql("SELECT count(*) FROM pragma_table_info('Track')") },
      { when: { step: 2 }, ...answer('Track has 9 columns.') },
    ],
  });
  const r = await ask(sc, srv, 'How many columns has Track?');
  await srv.close();
  assert.equal(r.code, 0);
  assert.equal(r.json.status, 'answered');
  assert.equal(r.json.refusal, null);
  assert.equal(r.json.verified, 'checked');
});
