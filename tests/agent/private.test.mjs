// Private mode (docs/guide/private.md), proven on what was sent: the
// behaviour suite, the CLI (follow-ups, a clarification, a chart, a question
// that needs values) and the web page's API run in private mode against the
// scripted model, whose server keeps every request body; no value of
// chinook (every distinct text of 4 characters or more, every number not
// also in a question or the schema; tests/support/leaks.mjs says exactly
// what is searched) is in any of them. The same runs outside private mode
// show that the check finds the values a normal run sends.
import { before, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ask, run, scratch, server, sqliteRows, startWeb, CHINOOK } from '../support/harness.mjs';
import { databaseValues, findLeaks } from '../support/leaks.mjs';
import http from 'node:http';

const here = path.dirname(fileURLToPath(import.meta.url));
const script = (name) => JSON.parse(fs.readFileSync(path.resolve(here, '../fixtures', name), 'utf8'));
const sql = (s) => ({ tool: 'run_sql', args: { sql: s } });
const answer = (text) => ({ tool: 'answer', args: { text } });

/* The web API as web.test.mjs drives it (importing that file would run its tests). */
function request(w, method, p, { headers = {}, body } = {}) {
  return new Promise((resolve, reject) => {
    const data = body === undefined ? undefined : JSON.stringify(body);
    const req = http.request({ host: '127.0.0.1', port: w.port, method, path: p,
      headers: { Host: `127.0.0.1:${w.port}`, ...(data ? { 'Content-Type': 'application/json' } : {}), ...headers } },
    (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('error', () => {});
      res.on('close', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let json = null;
        try { json = JSON.parse(text); } catch { /* not JSON */ }
        resolve({ status: res.statusCode, headers: res.headers, text, json });
      });
    });
    req.on('error', reject);
    if (data) req.write(data);
    req.end();
  });
}
async function login(w) {
  const r = await request(w, 'GET', `/?token=${w.token}`);
  const cookie = r.headers['set-cookie'][0].split(';')[0];
  const s = await request(w, 'GET', '/api/session', { headers: { Cookie: cookie } });
  return { Cookie: cookie, 'X-CSRF-Token': s.json.csrf, session: s.json };
}
const parseEvents = (text) => text.split('\n\n').filter((b) => b.trim() && !b.startsWith(':')).map((b) => {
  const data = /^data: (.*)$/m.exec(b)?.[1];
  return { event: /^event: (.*)$/m.exec(b)?.[1], data: data ? JSON.parse(data) : null };
});

let VALUES;
before(async () => { VALUES = await databaseValues(CHINOOK); });

/* The questions of every run under a state folder, from its traces. */
function questionsIn(state) {
  const dir = path.join(state, 'runs');
  const out = [];
  for (const f of fs.existsSync(dir) ? fs.readdirSync(dir) : [])
    for (const line of fs.readFileSync(path.join(dir, f), 'utf8').trim().split('\n')) {
      const e = JSON.parse(line);
      if (e.event === 'run_start' && e.question) out.push(e.question);
    }
  return out;
}

const leaksOf = (srv, state, extra = []) => findLeaks(srv.requests.map((r) => r.body), VALUES, [...questionsIn(state), ...extra]);
const show = (leaks) => JSON.stringify(leaks.slice(0, 5));

test('the behaviour suite in private mode: every case passes, and no value reaches the model', async () => {
  const sc = scratch();
  const srv = await server(script('behaviours_private.json'));
  const r = await run(['eval', 'behaviors', '--db', sc.db, '--base-url', srv.url, '--state-dir', sc.state, '--json', '--private']);
  await srv.close();
  assert.equal(r.code, 0, r.stdout + r.stderr);
  for (const c of r.json.cases) assert.equal(c.passed, true, `${c.name}: ${JSON.stringify(c.checks)}`);
  assert.ok(srv.requests.length >= 30, `${srv.requests.length} requests`);
  const leaks = leaksOf(srv, sc.state);
  assert.deepEqual(leaks, [], show(leaks));
  // the planted row of the suite's copy never reaches the model either
  assert.ok(!srv.requests.some((q) => JSON.stringify(q.body).includes('PWNED-7731')));
  for (const q of srv.requests) assert.match(q.body.messages[0].content, /PRIVATE MODE/);
});

test('the same suite outside private mode: the check finds what a normal run sends', async () => {
  const sc = scratch();
  const srv = await server(script('behaviours.json'));
  const r = await run(['eval', 'behaviors', '--db', sc.db, '--base-url', srv.url, '--state-dir', sc.state, '--json']);
  await srv.close();
  assert.equal(r.code, 0, r.stdout + r.stderr);
  const leaks = leaksOf(srv, sc.state);
  const roles = new Set(leaks.map((l) => l.role));
  assert.ok(roles.has('system'), 'example values of the schema cards');
  assert.ok(roles.has('tool'), 'rows of the results');
  const values = new Set(leaks.map((l) => l.value));
  for (const v of ['Iron Maiden', 'Frank', '3503', 'Latin']) assert.ok(values.has(v), `${v} found`);
});

/* A thread in private mode through the CLI: a count, a follow-up citing its
 * own result, a chart, a clarification and its reply, and a question that
 * needs the values themselves. */
const THREAD = {
  rules: [
    { when: { question: '^Which genres have the most tracks', step: 0 }, ...sql('SELECT g.Name, count(*) AS n FROM Track t JOIN Genre g USING (GenreId) GROUP BY g.GenreId ORDER BY n DESC LIMIT 3') },
    { when: { question: '^Which genres have the most tracks', step: 1 }, ...answer('{{q1.r1.Name}} leads with {{q1.r1.n|0,000}} tracks.') },
    { when: { question: '^And how many in Jazz', step: 0 }, ...sql("SELECT count(*) AS n FROM Track t JOIN Genre g USING (GenreId) WHERE g.Name = 'Jazz'") },
    { when: { question: '^And how many in Jazz', step: 1 }, ...answer('Jazz has {{q2.r1.n}} tracks.') },
    { when: { question: '^Plot the invoices per year', step: 0 }, ...sql("SELECT strftime('%Y', InvoiceDate) AS year, count(*) AS invoices FROM Invoice GROUP BY year ORDER BY year") },
    { when: { question: '^Plot the invoices per year', step: 1 }, tool: 'make_chart', args: { kind: 'bar', x: 'year', y: 'invoices', title: 'Invoices per year' } },
    { when: { question: '^Plot the invoices per year', step: 2 }, ...answer('Between {{q3.min(invoices)}} and {{q3.max(invoices)}} invoices a year.') },
    { when: { question: '^What was the revenue', step: 0 }, tool: 'ask_user', args: { question: 'Which year do you mean?' } },
    { when: { last_tool: 'The user answered' }, ...sql("SELECT round(sum(Total), 2) AS revenue FROM Invoice WHERE strftime('%Y', InvoiceDate) = '2023'") },
    { when: { question: '^What was the revenue', last_tool: '^\\[q4\\]' }, ...answer('The revenue was {{q4.r1.revenue|0,000.00}}.') },
    { when: { question: '^Summarise the track names', step: 0 }, tool: 'need_values', args: { reason: 'a summary needs the names themselves' } },
  ],
};

test('a private thread through the CLI: references filled in, a chart, a clarification, a refusal; nothing leaks', async () => {
  const sc = scratch();
  const srv = await server(THREAD);
  const t = ['--thread', 'p1', '--private'];
  const first = await ask(sc, srv, 'Which genres have the most tracks?', t);
  assert.equal(first.code, 0, first.stderr);
  assert.equal(first.json.answer, 'Rock leads with 1,297 tracks.');
  assert.equal(first.json.verified, 'bound');
  assert.equal(first.json.private, true);
  const follow = await ask(sc, srv, 'And how many in Jazz?', t);
  const jazz = await sqliteRows(sc.db, "SELECT count(*) FROM Track t JOIN Genre g USING (GenreId) WHERE g.Name = 'Jazz'");
  assert.equal(follow.json.answer, `Jazz has ${jazz[0][0]} tracks.`);
  assert.equal(follow.json.facts[0].query, 2, 'labels go on across the thread');
  // the follow-up retold the first answer as the model wrote it, never filled in
  const retold = srv.requests.at(-1).body.messages.find((m) => m.role === 'assistant' && !m.tool_calls);
  assert.match(retold.content, /^\{\{q1\.r1\.Name\}\} leads with \{\{q1\.r1\.n\|0,000\}\} tracks\./);
  const chart = await ask(sc, srv, 'Plot the invoices per year', t);
  assert.equal(chart.json.charts.length, 1);
  const years = await sqliteRows(sc.db, "SELECT min(n), max(n) FROM (SELECT count(*) AS n FROM Invoice GROUP BY strftime('%Y', InvoiceDate))");
  assert.equal(chart.json.answer, `Between ${years[0][0]} and ${years[0][1]} invoices a year.`);
  const clarify = await ask(sc, srv, 'What was the revenue?', t);
  assert.equal(clarify.json.status, 'clarify');
  const reply = await ask(sc, srv, '2023', t);
  assert.equal(reply.json.status, 'answered', reply.stdout);
  assert.equal(reply.json.verified, 'bound');
  const refused = await ask(sc, srv, 'Summarise the track names of the album', t);
  assert.equal(refused.code, 3);
  assert.equal(refused.json.status, 'refused');
  assert.match(refused.json.answer, /private mode/);
  assert.match(refused.json.answer, /a summary needs the names themselves/);
  await srv.close();
  const leaks = leaksOf(srv, sc.state, ['2023']);
  assert.deepEqual(leaks, [], show(leaks));
  // the tools of private mode: need_values, and no value-index line but the user's own
  for (const q of srv.requests) assert.ok(q.body.tools.some((x) => x.function.name === 'need_values'));
  assert.ok(sc.unchanged());
});

test('a value the user typed is matched locally and passed back as the user\'s own', async () => {
  const sc = scratch();
  const srv = await server({ rules: [
    { when: { step: 0 }, ...sql("SELECT count(*) AS n FROM Album al JOIN Artist ar USING (ArtistId) WHERE ar.Name = 'AC/DC'") },
    { when: { step: 1 }, ...answer('{{q1.r1.n}} albums.') },
  ] });
  const userOf = (req) => req.body.messages.filter((m) => m.role === 'user').at(-1).content;
  await ask(sc, srv, 'How many albums does AC/DC have?', ['--private']);
  assert.match(userOf(srv.requests.at(-1)), /'AC\/DC' \(as you typed it\) exists in Artist\.Name/);
  // spelled otherwise, the database's spelling would be a value: not sent
  await ask(sc, srv, 'How many albums does ac/dc have?', ['--private']);
  assert.equal(userOf(srv.requests.at(-1)), 'How many albums does ac/dc have?');
  assert.deepEqual(leaksOf(srv, sc.state), []);
  // outside private mode the index spells it as the database does
  await ask(sc, srv, 'How many albums does ac/dc have?');
  assert.match(userOf(srv.requests.at(-1)), /'AC\/DC' is a value of Artist\.Name/);
  await srv.close();
});

test('the web page\'s switch and a server started with --private: no value reaches the model', async () => {
  const sc = scratch();
  const q1 = 'Which genres have the most tracks?';
  const srv = await server(THREAD);
  const w = await startWeb(sc, srv);
  const a = await login(w);
  assert.equal(a.session.private, false);
  const headers = { Cookie: a.Cookie, 'X-CSRF-Token': a['X-CSRF-Token'] };
  const r = await request(w, 'POST', '/api/ask', { headers, body: { question: q1, private: true } });
  const end = parseEvents(r.text).at(-1);
  assert.equal(end.event, 'run_end');
  assert.equal(end.data.private, true);
  assert.equal(end.data.verified, 'bound');
  assert.equal(end.data.facts[1].text, '1,297');
  assert.deepEqual(leaksOf(srv, sc.state), []);
  // the same question without the switch sends rows
  const before = srv.requests.length;
  await request(w, 'POST', '/api/ask', { headers, body: { question: q1 } });
  const normal = findLeaks(srv.requests.slice(before).map((x) => x.body), VALUES, [q1]);
  assert.ok(normal.some((l) => l.value === 'Rock' && l.role === 'tool'), show(normal));
  const bad = await request(w, 'POST', '/api/ask', { headers, body: { question: q1, private: 'yes' } });
  assert.equal(bad.status, 400);
  w.proc.kill('SIGINT');
  await w.exited;

  // a server in private mode: every question is private, whatever the request says
  const sc2 = scratch();
  const srv2 = await server(THREAD);
  const w2 = await startWeb(sc2, srv2, ['--private']);
  const a2 = await login(w2);
  assert.equal(a2.session.private, true);
  const r2 = await request(w2, 'POST', '/api/ask', { headers: { Cookie: a2.Cookie, 'X-CSRF-Token': a2['X-CSRF-Token'] }, body: { question: q1, private: false } });
  assert.equal(parseEvents(r2.text).at(-1).data.private, true);
  await srv2.close();
  assert.deepEqual(leaksOf(srv2, sc2.state), []);
  w2.proc.kill('SIGINT');
  await w2.exited;
  await srv.close();
});

test('TABLETALK_PRIVATE in the environment (or a config file) turns it on; a bad value is a usage error', async () => {
  const sc = scratch();
  const srv = await server(THREAD);
  const r = await ask(sc, srv, 'Which genres have the most tracks?', [], { env: { TABLETALK_PRIVATE: '1' } });
  assert.equal(r.json.private, true);
  const bad = await ask(sc, srv, 'Which genres have the most tracks?', [], { env: { TABLETALK_PRIVATE: 'maybe' } });
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /TABLETALK_PRIVATE wants 1 or 0/);
  await srv.close();
  assert.deepEqual(leaksOf(srv, sc.state), []);
});

test('the trace records exactly what was sent: the model_wait events rebuild every request', async () => {
  const sc = scratch();
  const srv = await server(THREAD);
  const t = ['--thread', 'tr', '--private'];
  const first = await ask(sc, srv, 'Which genres have the most tracks?', t);
  const second = await ask(sc, srv, 'And how many in Jazz?', t);
  await srv.close();
  const sentOf = (trace) => fs.readFileSync(trace, 'utf8').trim().split('\n').map((l) => JSON.parse(l))
    .filter((e) => e.event === 'model_wait').map((e) => e.sent);
  const calls = [...sentOf(first.json.trace), ...sentOf(second.json.trace)];
  assert.equal(calls.length, srv.requests.length);
  const strip = (m) => ({ role: m.role, content: m.content ?? null, ...(m.tool_calls ? { tool_calls: m.tool_calls.map((c) => c.function) } : {}) });
  let conversation = [];
  calls.forEach((sent, i) => {
    conversation = [...conversation.slice(0, sent.from), ...sent.messages];
    if (sent.tools) assert.deepEqual(sent.tools.map((x) => x.name), srv.requests[i].body.tools.map((x) => x.function.name));
    assert.deepEqual(conversation.map(strip), srv.requests[i].body.messages.map(strip), `request ${i}`);
    if (i === 2) assert.ok(sent.tools, 'a new question records the whole conversation again');
    if (i === 0) assert.equal(sent.from, 0);
  });
});

/* What reading a file's rows finds (a CSV column's odd values, DuckDB's
 * minimum and maximum) is a data note: shown to the user, never sent in
 * private mode. */
test('data notes of a CSV file (SQLite or DuckDB) stay on the machine in private mode', async (t) => {
  const sc = scratch();
  const csv = path.join(sc.dir, 'scores.csv');
  const rows = ['name,score'];
  for (let i = 0; i < 30; i++) rows.push(`p${i},${i === 7 ? 'zqxunknown' : 73100 + i}`);
  rows.push('last,98765.25');
  fs.writeFileSync(csv, rows.join('\n') + '\n');
  /* DuckDB: every value a number, so the card has a minimum and a maximum */
  const plain = path.join(sc.dir, 'plain.csv');
  fs.writeFileSync(plain, rows.filter((l) => !l.includes('zqxunknown')).join('\n') + '\n');
  const engines = [['--engine', 'sqlite']];
  const hasDuckdb = (await run(['sql', csv, 'SELECT 1', '--engine', 'duckdb'])).code === 0;
  if (hasDuckdb) engines.push(['--engine', 'duckdb']);
  else t.diagnostic('DuckDB part skipped: libduckdb is not installed (scripts/fetch-duckdb.sh)');
  for (const engine of engines) {
    const needles = engine[1] === 'sqlite' ? ['zqxunknown'] : ['98765.25', '73100'];
    for (const priv of [true, false]) {
      const srv = await server({ rules: [{ when: { step: 0 }, ...answer('No query needed.') }] });
      const file = engine[1] === 'sqlite' ? csv : plain;
      const r = await run(['ask', file, 'How are the scores spread?', '--base-url', srv.url,
        '--state-dir', sc.state, '--json', ...engine, ...(priv ? ['--private'] : [])]);
      await srv.close();
      assert.equal(r.code, 0, r.stdout + r.stderr);
      const sent = srv.requests.map((q) => JSON.stringify(q.body)).join('\n');
      for (const n of needles) {
        if (priv) assert.ok(!sent.includes(n), `${engine[1]}: '${n}' reached the model in private mode`);
        else assert.ok(sent.includes(n), `${engine[1]}: '${n}' should be in a normal prompt (the check would catch it)`);
      }
    }
  }
});
