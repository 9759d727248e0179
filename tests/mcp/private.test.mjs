// ask_database in private mode (docs/guide/private.md): its "private"
// argument, and a server started with --private. Every request body the
// scripted model received is searched for chinook's values
// (tests/support/leaks.mjs); the answer's values come back filled in, with
// the facts they came from in structuredContent. Without the argument the
// same question sends rows, which the same check finds.
import { before, test } from 'node:test';
import assert from 'node:assert/strict';
import { scratch, startModel, sqliteRows, CHINOOK } from '../support/harness.mjs';
import { databaseValues, findLeaks } from '../support/leaks.mjs';
import { connectStdio } from './protocol.mjs';

const Q = 'Which genres have the most tracks?';
const GENRES = 'SELECT g.Name, count(*) AS n FROM Track t JOIN Genre g USING (GenreId) GROUP BY g.GenreId ORDER BY n DESC LIMIT 3';
const SCRIPT = { rules: [
  { when: { step: 0 }, tool: 'run_sql', args: { sql: GENRES } },
  { when: { step: 1 }, tool: 'answer', args: { text: '{{q1.r1.Name}} leads with {{q1.r1.n|0,000}} tracks, then {{q1.r2.Name}}.' } },
] };

let VALUES;
before(async () => { VALUES = await databaseValues(CHINOOK); });

async function askMcp(extraArgs, args) {
  const sc = scratch();
  const model = await startModel(SCRIPT);
  const mcp = await connectStdio(sc, { model, extra: extraArgs });
  const res = await mcp.client.callTool({ name: 'ask_database', arguments: { question: Q, ...args } });
  await mcp.close();
  await model.close();
  return { res, sc, leaks: findLeaks(model.requests.map((r) => r.body), VALUES, [Q]) };
}

test('ask_database with "private": true sends no value; the answer is filled in locally', async () => {
  const { res, sc, leaks } = await askMcp([], { private: true });
  const s = res.structuredContent;
  assert.equal(s.status, 'answered');
  assert.equal(s.private, true);
  assert.equal(s.verified, 'bound');
  const rows = await sqliteRows(sc.db, GENRES);
  assert.equal(s.answer, `${rows[0][0]} leads with ${rows[0][1].toLocaleString('en-US')} tracks, then ${rows[1][0]}.`);
  assert.deepEqual(s.facts.map((f) => [f.query, f.row, f.column, f.value]), [[1, 1, 'Name', rows[0][0]], [1, 1, 'n', rows[0][1]], [1, 2, 'Name', rows[1][0]]]);
  assert.deepEqual(leaks, [], JSON.stringify(leaks.slice(0, 5)));
});

test('a server started with --private is private whatever the call says', async () => {
  const { res, leaks } = await askMcp(['--private'], { private: false });
  assert.equal(res.structuredContent.private, true);
  assert.deepEqual(leaks, []);
});

test('without it, the same question sends rows, and the check finds them', async () => {
  const { res, leaks } = await askMcp([], {});
  assert.equal(res.structuredContent.private, false);
  assert.ok(leaks.some((l) => l.role === 'tool' && l.value === 'Rock'), JSON.stringify(leaks.slice(0, 3)));
  assert.ok(leaks.some((l) => l.role === 'system'));
});

test('"private" must be a boolean', async () => {
  const sc = scratch();
  const model = await startModel(SCRIPT);
  const mcp = await connectStdio(sc, { model });
  const res = await mcp.client.callTool({ name: 'ask_database', arguments: { question: Q, private: 'yes' } }).catch((e) => ({ error: e }));
  await mcp.close();
  await model.close();
  const text = res.error ? String(res.error) : JSON.stringify(res);
  assert.match(text, /"private\\?" is true or false|private/);
  assert.equal(model.requests.length, 0);
});
