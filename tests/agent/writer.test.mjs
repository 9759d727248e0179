// SQL writers (the sql-writer profile) through the real binary and the
// scripted model server: the model gets OmniSQL's own single-message prompt
// (no tools, no system prompt), answers with reasoning and a ```sql block,
// the query runs read-only, an error comes back in the same prompt once,
// and a short second step phrases the answer from the rows (or a sentence
// is built from the result when the model cannot).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ask, run, scratch, server, sha256, traceEvents } from '../support/harness.mjs';

const Q = 'Which genre has the most tracks, and how many?';
const BROKEN = 'SELECT g.Nmae, COUNT(*) AS n FROM Track t JOIN Genre g ON g.GenreId = t.GenreId ' +
  'GROUP BY g.GenreId ORDER BY n DESC LIMIT 1;';
const FIXED = 'SELECT g.Name, COUNT(*) AS n FROM Track t JOIN Genre g ON g.GenreId = t.GenreId ' +
  'GROUP BY g.GenreId ORDER BY n DESC LIMIT 1;';

/* The writer: a first query with a wrong column, a repair once the error
 * is among the instructions, and an answer when asked to phrase one. */
function writer(answerText) {
  return {
    model: 'OmniSQL-7B',
    rules: [
      { name: 'repair', when: { question: '^Task Overview:[\\s\\S]*Your previous query for this question was:[\\s\\S]*no such column: g\\.Nmae' },
        text: `The error says the column is Name, not Nmae.\n\`\`\`sql\n-- first try\nSELECT 1;\n\`\`\`\nCorrected:\n\`\`\`sql\n${FIXED}\n\`\`\`` },
      { name: 'first', when: { question: '^Task Overview:\\nYou are a data science expert', not_any: 'previous query' },
        text: `Let me think step by step. Tracks have a GenreId; count them per genre.\n\`\`\`sql\n${BROKEN}\n\`\`\`` },
      { name: 'answer', when: { question: '^Question:\\n' }, text: answerText },
    ],
  };
}

async function asked(script, extra, env = {}) {
  const sc = scratch();
  const before = sha256(sc.db);
  const srv = await server(script);
  try {
    const r = await ask(sc, srv, Q, extra, { env });
    assert.equal(sha256(sc.db), before, 'the database is unchanged');
    return { r, srv };
  } finally {
    await srv.close();
  }
}

test('--profile sql-writer: native prompt, one repair, the model phrases the answer', async () => {
  const { r, srv } = await asked({ ...writer('Rock has the most tracks: 1297.'), model: 'scripted' },
    ['--profile', 'sql-writer']);
  assert.equal(r.code, 0, r.stderr + r.stdout);
  assert.equal(r.json.status, 'answered');
  assert.equal(r.json.answer, 'Rock has the most tracks: 1297.');
  assert.equal(r.json.verified, 'checked');
  assert.equal(r.json.sql, FIXED);
  assert.deepEqual(r.json.rows, [['Rock', 1297]]);
  const bodies = srv.requests.map((q) => q.body);
  assert.equal(bodies.length, 3, 'first try, repair, answer');
  for (const b of bodies) {
    assert.equal(b.tools, undefined, 'no tools offered');
    assert.equal(b.tool_choice, undefined);
    assert.equal(b.messages.length, 1);
    assert.equal(b.messages[0].role, 'user');
  }
  const [first, repair, phrase] = bodies.map((b) => b.messages[0].content);
  assert.match(first, /^Task Overview:\nYou are a data science expert\./);
  assert.match(first, /\n\nDatabase Engine:\nSQLite\n\nDatabase Schema:\nCREATE TABLE Album \(\n {4}AlbumId integer, -- example: \[1, 2\]\n/);
  assert.ok(first.includes("    Name nvarchar(120), -- example: ['Rock', 'Jazz']\n"));
  assert.ok(first.includes(`\nQuestion:\n${Q}\n\nInstructions:\n`));
  assert.ok(first.endsWith('```sql\n-- Your SQL query\n```\n\nTake a deep breath and think step by step to find the correct SQL query.\n'));
  // the repair is the same prompt with the failed query and its error added
  const stable = first.indexOf('This schema describes');
  assert.equal(repair.slice(0, stable), first.slice(0, stable));
  assert.ok(repair.includes(`- Your previous query for this question was:\n  \`\`\`sql\n  ${BROKEN}\n  \`\`\`\n  It failed with this error: no such column: g.Nmae`));
  assert.match(phrase, /^Question:\n/);
  assert.ok(phrase.includes('1297'));
  // the trace tells the steps
  const events = traceEvents(r.json.trace);
  const sqls = events.filter((e) => e.event === 'sql');
  assert.equal(sqls.length, 2);
  assert.equal(sqls[0].ok, false);
  assert.match(sqls[0].error, /no such column: g.Nmae/);
  assert.equal(sqls[1].ok, true);
});

test('detected by the model name; the answer falls back to a sentence from the result', async () => {
  // the writer answers the phrasing step with another query, not a sentence
  const { r, srv } = await asked(writer('```sql\nSELECT 1\n```'), ['--model', 'OmniSQL-7B']);
  assert.equal(r.code, 0, r.stderr + r.stdout);
  assert.equal(r.json.answer, 'The query returned 1 row: Rock, 1297.');
  assert.equal(r.json.verified, 'checked');
  assert.equal(srv.requests.length, 3);
  assert.equal(srv.requests[0].body.tools, undefined);
});

test('TABLETALK_PROFILE chooses the profile; a model number no row holds is not shown', async () => {
  const { r } = await asked({ ...writer('Rock has the most tracks: 4242.'), model: 'scripted' }, [],
    { TABLETALK_PROFILE: 'sql-writer' });
  assert.equal(r.code, 0, r.stderr + r.stdout);
  assert.equal(r.json.answer, 'The query returned 1 row: Rock, 1297.');
});

test('--profile with an unknown name is a usage error naming the profiles', async () => {
  const sc = scratch();
  const r = await run(['ask', sc.db, Q, '--base-url', 'http://127.0.0.1:9/v1', '--profile', 'omni']);
  assert.equal(r.code, 2);
  assert.match(r.stderr, /no model profile 'omni'.*sql-writer/);
  const e = await run(['ask', sc.db, Q, '--base-url', 'http://127.0.0.1:9/v1', '--json'],
    { env: { TABLETALK_PROFILE: 'omni' } });
  assert.notEqual(e.code, 0);
  assert.match(e.stdout + e.stderr, /TABLETALK_PROFILE: there is no model profile 'omni'/);
});

test('an SQL writer may cite the result in its answer: filled in, bound; a broken reference gives the built sentence', async () => {
  const { r, srv } = await asked(writer('  {{q1.r1.Name}} has the most tracks: {{q1.r1.n|0,000}}.'), ['--profile', 'sql-writer']);
  assert.equal(r.code, 0, r.stderr + r.stdout);
  assert.equal(r.json.answer, 'Rock has the most tracks: 1,297.');
  assert.equal(r.json.verified, 'bound');
  assert.deepEqual(r.json.facts.map((f) => [f.query, f.row, f.column, f.value, f.text, f.at]), [[1, 1, 'Name', 'Rock', 'Rock', 0], [1, 1, 'n', 1297, '1,297', 26]]);
  assert.match(srv.requests.at(-1).body.messages[0].content, /\[q1\] The query returned 1 row[\s\S]*\{\{q1\.r1\.Column\}\}/);
  const broken = await asked(writer('{{q1.r5.Name}} has the most.'), ['--profile', 'sql-writer']);
  assert.equal(broken.r.json.answer, 'The query returned 1 row: Rock, 1297.');
  assert.deepEqual(broken.r.json.facts, []);
  // private mode has no form for an SQL writer: the question fails and says why
  const priv = await asked(writer('x'), ['--profile', 'sql-writer', '--private']);
  assert.equal(priv.r.json.status, 'failed');
  assert.match(priv.r.json.error, /private mode needs a model that calls tools/);
  assert.equal(priv.srv.requests.length, 0, 'nothing was sent');
});
