// `tabletalk web` through its HTTP API, without a browser: the real binary
// against the scripted model server on scratch copies of chinook. The
// token, cookie, Host/Origin and CSRF guards; questions streamed as
// server-sent events (steps, text, the run); follow-ups, a clarification,
// a chart, refused writes; /api/sql, threads, schema, runs; concurrency;
// Ctrl-C. What is asserted comes from the responses, the files and the
// thread store, never from the script's own words alone.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { closeAtEnd, run, runProgram, scratch, sqliteRows, server, sha256, startWeb, waitForFile } from '../support/harness.mjs';

const sql = (s) => ({ tool: 'run_sql', args: { sql: s } });
const answer = (text) => ({ tool: 'answer', args: { text } });

/* One HTTP request with full control of the headers (Host included). */
export function request(w, method, path, { headers = {}, body } = {}) {
  return new Promise((resolve, reject) => {
    const data = body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body);
    const req = http.request({ host: '127.0.0.1', port: w.port, method, path,
      headers: { Host: `127.0.0.1:${w.port}`, ...(data ? { 'Content-Type': 'application/json' } : {}), ...headers } },
    (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('error', () => {}); // a stream cut short ends in 'close'
      res.on('close', () => {
        const buf = Buffer.concat(chunks);
        const text = buf.toString('utf8');
        let json = null;
        try { json = JSON.parse(text); } catch { /* not JSON */ }
        resolve({ status: res.statusCode, headers: res.headers, text, json, buf });
      });
    });
    req.on('error', reject);
    if (data) req.write(data);
    req.end();
  });
}

/* Logs in as a browser does: the token for a cookie, then the CSRF token. */
export async function login(w) {
  const r = await request(w, 'GET', `/?token=${w.token}`);
  assert.equal(r.status, 303);
  const cookie = r.headers['set-cookie'][0].split(';')[0];
  const s = await request(w, 'GET', '/api/session', { headers: { Cookie: cookie } });
  assert.equal(s.status, 200, s.text);
  return { Cookie: cookie, 'X-CSRF-Token': s.json.csrf, session: s.json, setCookie: r.headers['set-cookie'][0] };
}

const auth = (a) => ({ Cookie: a.Cookie, 'X-CSRF-Token': a['X-CSRF-Token'] });

/* The events of an event-stream text: [{event, data}]. */
export function parseEvents(text) {
  return text.split('\n\n').filter((b) => b.trim() && !b.startsWith(':')).map((b) => {
    const ev = /^event: (.*)$/m.exec(b)?.[1];
    const data = /^data: (.*)$/m.exec(b)?.[1];
    return { event: ev, data: data ? JSON.parse(data) : null };
  });
}

async function askWeb(w, a, question, thread_id = null) {
  const r = await request(w, 'POST', '/api/ask', { headers: auth(a), body: { question, thread_id } });
  assert.equal(r.status, 200, r.text);
  assert.match(r.headers['content-type'], /^text\/event-stream/);
  const events = parseEvents(r.text);
  return { events, run: events.at(-1).event === 'run_end' ? events.at(-1).data : null };
}

async function stop(w) {
  w.proc.kill('SIGINT');
  return w.exited;
}

const COUNT = 'SELECT count(*) AS n FROM Customer';
/* The model server's request for a question, and whether it is being answered. */
const asked = (s, question) => s.requests.find((r) => r.body?.messages?.some((m) => m.role === 'user' && m.content === question));
const inFlight = (s, question) => { const r = asked(s, question); return r && !r.answered && !r.disconnected; };

test('the URL, the token for an HttpOnly SameSite=Strict cookie, 401 without it, the page and its headers', async () => {
  const sc = scratch();
  const srv = await server({ rules: [] });
  const w = await startWeb(sc, srv);
  assert.match(w.line, /^tabletalk web: serving .*chinook\.sqlite at http:\/\/127\.0\.0\.1:\d+\/\?token=[0-9a-f]{32}\n$/);
  const a = await login(w);
  assert.match(a.setCookie, /^tt_web=[0-9a-f]{32}; HttpOnly; SameSite=Strict; Path=\/$/);
  assert.equal(a.session.dialect, 'SQLite');
  assert.match(a.session.db, /chinook\.sqlite$/);
  assert.match(a.session.csrf, /^[0-9a-f]{32}$/);
  // the redirect goes to the page without the token
  const redirect = await request(w, 'GET', `/?token=${w.token}`);
  assert.equal(redirect.headers.location, '/');
  // no cookie: 401, as JSON for the API and as a page for the rest
  const api = await request(w, 'GET', '/api/session');
  assert.equal(api.status, 401);
  assert.match(api.json.error, /token/);
  const page = await request(w, 'GET', '/');
  assert.equal(page.status, 401);
  assert.match(page.headers['content-type'], /text\/html/);
  assert.match(page.text, /URL/);
  // a wrong token and a made-up cookie are refused too
  assert.equal((await request(w, 'GET', '/?token=0123456789abcdef0123456789abcdef')).status, 401);
  assert.equal((await request(w, 'GET', '/api/threads', { headers: { Cookie: 'tt_web=0123456789abcdef0123456789abcdef' } })).status, 401);
  // a bearer token works for scripts, without CSRF
  const bearer = await request(w, 'GET', '/api/threads', { headers: { Authorization: `Bearer ${w.token}` } });
  assert.equal(bearer.status, 200);
  // the embedded page with its security headers
  const index = await request(w, 'GET', '/', { headers: { Cookie: a.Cookie } });
  assert.equal(index.status, 200);
  assert.match(index.headers['content-type'], /^text\/html/);
  assert.match(index.text, /<html/i);
  assert.equal(index.headers['cache-control'], 'no-cache');
  assert.equal(index.headers['x-content-type-options'], 'nosniff');
  assert.equal(index.headers['referrer-policy'], 'no-referrer');
  assert.match(index.headers['content-security-policy'], /default-src 'self'.*script-src 'self'.*frame-ancestors 'none'/);
  assert.equal((await request(w, 'GET', '/no-such-file.js', { headers: { Cookie: a.Cookie } })).status, 404);
  const r = await stop(w);
  assert.equal(r.code, 0, r.stderr());
  assert.match(r.stderr(), /Press Ctrl-C to stop\.\n[\s\S]*stopped/);
  await srv.close();
});

test('403 for a foreign Host or Origin, and for a POST without the CSRF token', async () => {
  const sc = scratch();
  const srv = await server({ rules: [] });
  const w = await startWeb(sc, srv);
  const a = await login(w);
  const host = await request(w, 'GET', '/api/session', { headers: { Cookie: a.Cookie, Host: `evil.example:${w.port}` } });
  assert.equal(host.status, 403);
  assert.match(host.json.error, /Host/);
  const port = await request(w, 'GET', '/api/session', { headers: { Cookie: a.Cookie, Host: '127.0.0.1:1' } });
  assert.equal(port.status, 403);
  // localhost names of this port are this server
  assert.equal((await request(w, 'GET', '/api/session', { headers: { Cookie: a.Cookie, Host: `localhost:${w.port}` } })).status, 200);
  const origin = await request(w, 'POST', '/api/sql', { headers: { ...auth(a), Origin: 'http://evil.example' }, body: { sql: COUNT } });
  assert.equal(origin.status, 403);
  assert.match(origin.json.error, /Origin/);
  const ok = await request(w, 'POST', '/api/sql', { headers: { ...auth(a), Origin: `http://127.0.0.1:${w.port}` }, body: { sql: COUNT } });
  assert.equal(ok.status, 200, ok.text);
  const nocsrf = await request(w, 'POST', '/api/sql', { headers: { Cookie: a.Cookie }, body: { sql: COUNT } });
  assert.equal(nocsrf.status, 403);
  assert.equal(nocsrf.json.error, 'missing or wrong CSRF token; reload the page');
  const wrong = await request(w, 'POST', '/api/ask', { headers: { Cookie: a.Cookie, 'X-CSRF-Token': 'x'.repeat(32) }, body: { question: 'hi' } });
  assert.equal(wrong.status, 403);
  assert.equal((await stop(w)).code, 0);
  await srv.close();
});

test('without a model it starts: the schema and SQL work, the session says how to get a model, a pulled one is found', async () => {
  const sc = scratch();
  const data = path.join(sc.dir, 'data');
  const w = await startWeb(sc, null, [], { TABLETALK_DATA_DIR: data });
  const a = await login(w);
  assert.equal(a.session.model, null);
  assert.match(a.session.model_help, /tabletalk pull.*--base-url.*TABLETALK_BASE_URL/s);
  const s = await request(w, 'GET', '/api/schema', { headers: { Cookie: a.Cookie } });
  assert.equal(s.status, 200);
  assert.equal(s.json.tables.length, 11);
  const q = await request(w, 'POST', '/api/queries', { headers: auth(a), body: { sql: COUNT } });
  assert.equal(q.status, 200, q.text);
  assert.deepEqual(q.json.rows, [[59]]);
  // a question without a model is a failed run that says how to get one
  const { run: r } = await askWeb(w, a, 'How many customers?');
  assert.equal(r.status, 'failed');
  assert.match(r.error, /no model available.*tabletalk pull/s);
  // `tabletalk pull` puts a model in the data folder: the next session names it, no restart
  fs.mkdirSync(path.join(data, 'models'), { recursive: true });
  fs.writeFileSync(path.join(data, 'models', 'default.gguf'), 'not really a model');
  const again = await request(w, 'GET', '/api/session', { headers: { Cookie: a.Cookie } });
  assert.equal(again.json.model, 'default.gguf');
  assert.equal(again.json.model_help, null);
  const end = await stop(w);
  assert.equal(end.code, 0);
  assert.match(end.stderr(), /no model yet: .*tabletalk pull.*--base-url/s);
});

test('a non-loopback --host without a chosen token is refused with what to set', async () => {
  const sc = scratch();
  const r = await run(['web', sc.db, '--host', '0.0.0.0', '--port', '0', '--state-dir', sc.state], { env: { TABLETALK_WEB_TOKEN: '' } });
  assert.equal(r.code, 2);
  assert.match(r.stderr, /--token or TABLETALK_WEB_TOKEN/);
});

test('a chosen token (--token, TABLETALK_WEB_TOKEN); 0.0.0.0 warns and takes any Host; --open runs xdg-open without waiting, a missing one is a note', async () => {
  const sc = scratch();
  const srv = await server({ rules: [] });
  const bad = await run(['web', sc.db, '--token', 'short', '--port', '0', '--base-url', srv.url, '--state-dir', sc.state]);
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /shorter than 16 characters.*openssl rand -hex 16/);
  const w = await startWeb(sc, srv, ['--host', '0.0.0.0', '--open'], { TABLETALK_WEB_TOKEN: 'chosen-token-0917', PATH: '/nonexistent' });
  assert.equal(w.token, 'chosen-token-0917');
  const anyHost = await request(w, 'GET', '/api/session', { headers: { Host: `192.0.2.7:${w.port}`, Authorization: 'Bearer chosen-token-0917' } });
  assert.equal(anyHost.status, 200);
  assert.equal((await request(w, 'GET', '/api/session', { headers: { Authorization: 'Bearer wrong-token-1' } })).status, 401);
  const r = await stop(w);
  assert.equal(r.code, 0);
  assert.match(r.stderr(), /warning: listening on 0\.0\.0\.0/);
  assert.match(r.stderr(), /cannot run xdg-open/);
  // An xdg-open that stays (as a browser run in the foreground does): it
  // gets the URL, and the server stops without waiting for it (it is
  // still running when the server has exited).
  const bin = path.join(sc.dir, 'bin');
  fs.mkdirSync(bin);
  const opened = path.join(sc.dir, 'opened');
  fs.writeFileSync(path.join(bin, 'xdg-open'),
    `#!/bin/sh\necho "$$" > '${opened}.pid'\necho "$1" > '${opened}.tmp'\nmv '${opened}.tmp' '${opened}'\nexec sleep 600\n`, { mode: 0o755 });
  const w2 = await startWeb(sc, srv, ['--token', 'flag-token-22913', '--open'], { PATH: `${bin}:${process.env.PATH}` });
  assert.equal(w2.token, 'flag-token-22913');
  await waitForFile(opened);
  assert.equal(fs.readFileSync(opened, 'utf8'), `${w2.url}\n`);
  const xdgPid = Number(fs.readFileSync(`${opened}.pid`, 'utf8'));
  closeAtEnd(() => { try { process.kill(xdgPid, 'SIGKILL'); } catch { /* gone */ } });
  const r2 = await stop(w2);
  assert.equal(r2.code, 0);
  assert.doesNotThrow(() => process.kill(xdgPid, 0), 'xdg-open still runs: the server did not wait for it');
  process.kill(xdgPid, 'SIGKILL');
  assert.doesNotMatch(r2.stderr(), /xdg-open/);
  await srv.close();
});

test('ask streams the question\'s events (the SQL, the text, the run); a follow-up continues the thread', async () => {
  const sc = scratch();
  const q1 = 'How many customers are there?';
  const q2 = 'And how many employees?';
  const srv = await server({ rules: [
    { when: { question: q1, step: 0 }, ...sql(COUNT) },
    { when: { question: q1, step: 1 }, ...answer('There are 59 customers.') },
    { when: { question: q2, step: 0 }, ...sql('SELECT count(*) AS n FROM Employee') },
    { when: { question: q2, step: 1 }, ...answer('There are 8 employees.') },
  ] });
  const w = await startWeb(sc, srv);
  const a = await login(w);
  const { events, run: r1 } = await askWeb(w, a, q1);
  assert.equal(events[0].event, 'run_start');
  assert.match(events[0].data.run_id, /^\d{8}-\d{6}-[0-9a-f]{6}$/);
  const thread = events[0].data.thread;
  assert.ok(thread);
  for (const e of events) assert.equal(e.data.event, e.event, 'each event is named as its JSON says');
  assert.ok(events.some((e) => e.event === 'model_wait'));
  assert.ok(events.some((e) => e.event === 'model_call' && e.data.output_tokens > 0 && e.data.latency_ms >= 0));
  const sqlStep = events.find((e) => e.event === 'sql').data;
  assert.equal(sqlStep.sql, COUNT);
  assert.equal(sqlStep.ok, true);
  assert.equal(sqlStep.rows, 1);
  const text = events.filter((e) => e.event === 'text').map((e) => e.data.piece).join('');
  assert.equal(text, 'There are 59 customers.');
  assert.ok(events.filter((e) => e.event === 'text').length > 1, 'the answer arrives in pieces');
  assert.equal(r1.status, 'answered');
  assert.equal(r1.answer, 'There are 59 customers.');
  assert.equal(r1.sql, COUNT);
  assert.deepEqual(r1.rows, [[59]]);
  assert.equal(r1.run_id, events[0].data.run_id);
  assert.equal(r1.thread_id, thread);
  // the follow-up sees the first turn
  const { run: r2 } = await askWeb(w, a, q2, thread);
  assert.equal(r2.status, 'answered');
  assert.deepEqual(r2.rows, [[8]]);
  const second = srv.requests.filter((q) => JSON.stringify(q.body.messages).includes(q2));
  assert.ok(JSON.stringify(second[0].body.messages).includes('There are 59 customers.'));
  // the thread in the store, as the CLI sees it
  const t = await request(w, 'GET', `/api/threads/${thread}`, { headers: { Cookie: a.Cookie } });
  assert.equal(t.status, 200);
  assert.deepEqual(t.json.turns.map((x) => x.question), [q1, q2]);
  assert.equal(t.json.turns[0].run_id, r1.run_id);
  // the trace of the run, as events
  const tr = await request(w, 'GET', `/api/runs/${r1.run_id}`, { headers: { Cookie: a.Cookie } });
  assert.equal(tr.status, 200);
  assert.equal(tr.json.events[0].event, 'run_start');
  assert.equal(tr.json.events.at(-1).event, 'run_end');
  assert.ok(tr.json.events.some((e) => e.event === 'sql' && e.sql === COUNT));
  // the stream is the trace: the same events with the same keys and values,
  // and the pieces of the streamed answer besides
  const streamed = events.filter((e) => e.event !== 'text' && e.event !== 'text_restart').map((e) => e.data);
  assert.deepEqual(streamed, tr.json.events);
  assert.equal((await request(w, 'GET', '/api/runs/nope', { headers: { Cookie: a.Cookie } })).status, 404);
  assert.equal((await request(w, 'GET', '/api/runs/..%2Fthreads', { headers: { Cookie: a.Cookie } })).status, 400);
  await srv.close();
  assert.equal((await stop(w)).code, 0);
});

test('a clarifying question, answered in place, resumes the question', async () => {
  const sc = scratch();
  const q = 'Who are the top customers?';
  const reply = 'By revenue';
  const top = 'SELECT CustomerId, round(sum(Total), 2) AS revenue FROM Invoice GROUP BY CustomerId ORDER BY revenue DESC LIMIT 1';
  const srv = await server({ rules: [
    { when: { question: q, step: 0 }, tool: 'ask_user', args: { question: 'By revenue or by purchases?' } },
    { when: { question: q, step: 1, last_tool: reply }, ...sql(top) },
    { when: { question: q, step: 2 }, ...answer('Customer 6 spent the most: 49.62.') },
  ] });
  const w = await startWeb(sc, srv);
  const a = await login(w);
  const first = await askWeb(w, a, q);
  assert.equal(first.run.status, 'clarify');
  assert.equal(first.run.clarification, 'By revenue or by purchases?');
  const thread = first.run.thread_id;
  const second = await askWeb(w, a, reply, thread);
  assert.equal(second.run.status, 'answered', JSON.stringify(second.run));
  assert.equal(second.run.resumed, true);
  assert.deepEqual(second.run.rows, [[6, 49.62]]);
  const t = await request(w, 'GET', `/api/threads/${thread}`, { headers: { Cookie: a.Cookie } });
  assert.equal(t.json.turns.length, 1);
  assert.equal(t.json.turns[0].status, 'answered');
  await srv.close();
  assert.equal((await stop(w)).code, 0);
});

test('a chart: the run links its SVG and PNG, both served', async () => {
  const sc = scratch();
  const q = 'Plot invoices per year';
  const PER_YEAR = "SELECT strftime('%Y', InvoiceDate) AS year, count(*) AS invoices FROM Invoice GROUP BY year ORDER BY year";
  const srv = await server({ rules: [
    { when: { question: q, step: 0 }, ...sql(PER_YEAR) },
    { when: { question: q, step: 1 }, tool: 'make_chart', args: { kind: 'bar', x: 'year', y: 'invoices', title: 'Invoices per year' } },
    { when: { question: q, step: 2 }, ...answer('Invoices per year are in the chart.') },
  ] });
  const w = await startWeb(sc, srv);
  const a = await login(w);
  const { events, run: r } = await askWeb(w, a, q);
  assert.ok(events.some((e) => e.event === 'chart' && e.data.ok));
  assert.equal(r.charts.length, 1);
  assert.match(r.charts[0].file, new RegExp(`/charts/${r.run_id}\\.(png|svg)$`));
  /* the page loads chart N of a run from /api/charts/RUN/N.svg (and .png) */
  const svg = await request(w, 'GET', `/api/charts/${r.run_id}/1.svg`, { headers: { Cookie: a.Cookie } });
  assert.equal(svg.status, 200);
  assert.equal(svg.headers['content-type'], 'image/svg+xml');
  assert.match(svg.text, /<svg[\s\S]*Invoices per year[\s\S]*<\/svg>/);
  const png = await request(w, 'GET', `/api/charts/${r.run_id}/1.png`, { headers: { Cookie: a.Cookie } });
  assert.equal(png.status, 200);
  assert.equal(png.headers['content-type'], 'image/png');
  assert.deepEqual([...png.buf.subarray(0, 8)], [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  assert.match(png.headers['content-disposition'], /attachment/);
  assert.equal((await request(w, 'GET', `/api/charts/${r.run_id}/2.svg`, { headers: { Cookie: a.Cookie } })).status, 404);
  await srv.close();
  assert.equal((await stop(w)).code, 0);
});

test('refused writes, through ask and /api/sql: 422 refused, the file unchanged; edit and run SQL', async () => {
  const sc = scratch();
  const before = sha256(sc.db);
  const q = 'Delete every customer';
  const srv = await server({ rules: [
    { when: { question: q, step: 0 }, ...sql('DELETE FROM Customer') },
    { when: { question: q }, ...answer('I cannot change the database.') },
  ] });
  const w = await startWeb(sc, srv);
  const a = await login(w);
  const { events, run: r } = await askWeb(w, a, q);
  assert.equal(r.status, 'refused');
  assert.ok(r.refusal);
  assert.ok(events.some((e) => e.event === 'sql' && e.data.ok === false && e.data.refusal === 'write'));
  for (const bad of ['DELETE FROM Customer', 'DROP TABLE Invoice', "UPDATE Customer SET FirstName = 'x'", 'ATTACH DATABASE \'/tmp/x.db\' AS x']) {
    const s = await request(w, 'POST', '/api/sql', { headers: auth(a), body: { sql: bad } });
    assert.equal(s.status, 422, bad);
    assert.equal(s.json.refused, true, bad);
    assert.ok(s.json.error.length > 10);
  }
  const failed = await request(w, 'POST', '/api/sql', { headers: auth(a), body: { sql: 'SELECT nope FROM Customer' } });
  assert.equal(failed.status, 422);
  assert.equal(failed.json.refused, false);
  assert.equal(sha256(sc.db), before);
  // edit and run: the rows, the columns, the cut
  const ok = await request(w, 'POST', '/api/sql', { headers: auth(a), body: { sql: 'SELECT CustomerId, FirstName FROM Customer ORDER BY CustomerId', max_rows: 5 } });
  assert.equal(ok.status, 200);
  assert.deepEqual(ok.json.columns, ['CustomerId', 'FirstName']);
  assert.equal(ok.json.rows.length, 5);
  assert.deepEqual(ok.json.rows[0], [1, 'Luís']);
  assert.equal(ok.json.truncated, true);
  assert.ok(ok.json.elapsed_ms >= 0);
  assert.ok(Array.isArray(ok.json.column_types));
  assert.equal((await request(w, 'POST', '/api/sql', { headers: auth(a), body: '{"sql": 1}' })).status, 400);
  assert.equal((await request(w, 'POST', '/api/sql', { headers: auth(a), body: 'not json' })).status, 400);
  await srv.close();
  assert.equal((await stop(w)).code, 0);
});

test('threads: listed newest first, renamed, deleted, the same store as tabletalk ask --thread', async () => {
  const sc = scratch();
  const srv = await server({ rules: [{ when: { step: 0 }, ...sql(COUNT) }, answer('There are 59 customers.')] });
  // a thread made by the CLI
  const cli = await run(['ask', sc.db, 'Customers from the CLI?', '--thread', 'from-cli', '--base-url', srv.url, '--state-dir', sc.state, '--json']);
  assert.equal(cli.code, 0, cli.stderr);
  const w = await startWeb(sc, srv);
  const a = await login(w);
  const { run: r } = await askWeb(w, a, 'Customers from the web?');
  const list = await request(w, 'GET', '/api/threads', { headers: { Cookie: a.Cookie } });
  assert.equal(list.status, 200);
  assert.deepEqual(list.json.threads.map((t) => t.thread_id), [r.thread_id, 'from-cli']);
  assert.equal(list.json.threads[1].title, 'Customers from the CLI?');
  assert.equal(list.json.threads[1].turns, 1);
  assert.match(list.json.threads[0].updated, /^\d{4}-\d\d-\d\dT/);
  // the web's thread continues in the CLI
  const more = await run(['ask', sc.db, 'And now?', '--thread', r.thread_id, '--base-url', srv.url, '--state-dir', sc.state, '--json']);
  assert.equal(more.code, 0, more.stderr);
  const t = await request(w, 'GET', `/api/threads/${r.thread_id}`, { headers: { Cookie: a.Cookie } });
  assert.deepEqual(t.json.turns.map((x) => x.question), ['Customers from the web?', 'And now?']);
  // rename
  const ren = await request(w, 'PATCH', '/api/threads/from-cli', { headers: auth(a), body: { title: 'Customer count' } });
  assert.equal(ren.status, 200, ren.text);
  const after = await request(w, 'GET', '/api/threads', { headers: { Cookie: a.Cookie } });
  assert.equal(after.json.threads.find((x) => x.thread_id === 'from-cli').title, 'Customer count');
  assert.equal((await request(w, 'PATCH', '/api/threads/from-cli', { headers: { Cookie: a.Cookie }, body: { title: 'x' } })).status, 403);
  assert.equal((await request(w, 'PATCH', '/api/threads/none', { headers: auth(a), body: { title: 'x' } })).status, 404);
  // delete
  const del = await request(w, 'DELETE', '/api/threads/from-cli', { headers: auth(a) });
  assert.equal(del.status, 204);
  assert.equal((await request(w, 'GET', '/api/threads/from-cli', { headers: { Cookie: a.Cookie } })).status, 404);
  const last = await request(w, 'GET', '/api/threads', { headers: { Cookie: a.Cookie } });
  assert.deepEqual(last.json.threads.map((x) => x.thread_id), [r.thread_id]);
  assert.equal((await request(w, 'DELETE', '/api/threads/from-cli', { headers: auth(a) })).status, 404);
  await srv.close();
  assert.equal((await stop(w)).code, 0);
});

test('schema: tables with kinds, row counts, keys, descriptions and sample values', async () => {
  const sc = scratch();
  const srv = await server({ rules: [] });
  const w = await startWeb(sc, srv);
  const a = await login(w);
  const s = await request(w, 'GET', '/api/schema', { headers: { Cookie: a.Cookie } });
  assert.equal(s.status, 200);
  assert.equal(s.json.dialect, 'SQLite');
  assert.equal(s.json.tables.length, 11);
  const inv = s.json.tables.find((t) => t.name === 'Invoice');
  assert.equal(inv.kind, 'table');
  assert.equal(inv.rows, 412);
  const id = inv.columns.find((c) => c.name === 'InvoiceId');
  assert.equal(id.pk, true);
  const cust = inv.columns.find((c) => c.name === 'CustomerId');
  assert.deepEqual(cust.fk, { table: 'Customer', column: 'CustomerId' });
  const country = inv.columns.find((c) => c.name === 'BillingCountry');
  assert.ok(country.samples.includes('USA'), JSON.stringify(country.samples));
  assert.ok('description' in country);
  assert.equal((await stop(w)).code, 0);
  await srv.close();
});

test('two questions at once both finish; SIGINT during a question stops with exit 0', async () => {
  const sc = scratch();
  const slow = 'Slow question one';
  const slow2 = 'Slow question two';
  const srv = await server({ rules: [
    { when: { question: slow, step: 0 }, hang_ms: 600000, ...sql(COUNT) },
    { when: { question: slow2, step: 0 }, hang_ms: 600000, ...sql('SELECT count(*) AS n FROM Employee') },
    { when: { question: 'Never answered' }, hang_ms: 600000, text: 'late' },
    { when: { step: 1 }, ...answer('Done.') },
  ] });
  const w = await startWeb(sc, srv);
  const a = await login(w);
  const both = Promise.all([askWeb(w, a, slow), askWeb(w, a, slow2)]);
  // side by side: the model server holds both first calls at once, and
  // answers them only then
  await srv.until((s) => inFlight(s, slow) && inFlight(s, slow2));
  srv.release();
  const [x, y] = await both;
  assert.equal(srv.maxInFlight, 2);
  assert.deepEqual(x.run.rows, [[59]]);
  assert.deepEqual(y.run.rows, [[8]]);
  assert.notEqual(x.run.thread_id, y.run.thread_id);
  // a question in flight when Ctrl-C comes is cancelled, and the server exits 0
  const pending = request(w, 'POST', '/api/ask', { headers: auth(a), body: { question: 'Never answered' } }).catch((e) => e);
  await srv.until((s) => inFlight(s, 'Never answered'));
  const r = await stop(w);
  assert.equal(r.code, 0, r.stderr());
  // the model call was left, not waited out
  await srv.until((s) => asked(s, 'Never answered').disconnected);
  const cut = await pending;
  // the question was cancelled, and said so if the stream got out in time
  const last = cut.text ? parseEvents(cut.text).at(-1) : null;
  if (last?.event === 'run_end') assert.equal(last.data.status, 'cancelled');
  await srv.close();
});

test('a client that disconnects cancels its question', async () => {
  const sc = scratch();
  const srv = await server({ rules: [{ hang_ms: 600000, text: 'late' }] });
  const w = await startWeb(sc, srv);
  const a = await login(w);
  const req = http.request({ host: '127.0.0.1', port: w.port, method: 'POST', path: '/api/ask',
    headers: { Host: `127.0.0.1:${w.port}`, 'Content-Type': 'application/json', ...auth(a) } }, (res) => res.resume());
  req.on('error', () => {});
  req.end(JSON.stringify({ question: 'Hang please' }));
  // the client leaves while the model is thinking ...
  await srv.until((s) => s.requests.length === 1);
  req.destroy();
  // ... so the question's model call is left (the model server sees it go,
  // 10 minutes before it would answer), and the run is stored as
  // cancelled: read back by a new server on the same state once this one
  // has exited
  await srv.until((s) => s.requests[0].disconnected);
  assert.equal((await stop(w)).code, 0);
  const w2 = await startWeb(sc, srv);
  const a2 = await login(w2);
  const list = await request(w2, 'GET', '/api/threads', { headers: { Cookie: a2.Cookie } });
  assert.equal(list.json.threads.length, 1);
  const th = await request(w2, 'GET', `/api/threads/${list.json.threads[0].thread_id}`, { headers: { Cookie: a2.Cookie } });
  assert.equal(th.json.turns[0].status, 'cancelled');
  assert.equal((await stop(w2)).code, 0);
  await srv.close();
});

// The in-process engine: one model in memory answers one question at a
// time; a second tab's question waits (a `queued` step) and then runs.
const TINY = process.env.TT_TINY_MODEL;
test('the in-process model takes questions one at a time: the second is queued, both finish', { skip: !TINY && 'no tiny model' }, async () => {
  const sc = scratch();
  const w = await startWeb(sc, null, ['--model-path', TINY, '--max-tokens', '60'],
    { TABLETALK_CACHE_DIR: `${sc.dir}/cache` });
  const a = await login(w);
  assert.equal(a.session.model !== null, true);
  const [x, y] = await Promise.all([askWeb(w, a, 'Which genres have the most tracks?'),
    askWeb(w, a, 'How many albums are there?')]);
  for (const r of [x, y]) {
    assert.ok(r.run, JSON.stringify(r.events.at(-1)));
    assert.ok(['answered', 'clarify', 'budget', 'failed', 'refused'].includes(r.run.status));
  }
  const queued = [x, y].filter((r) => r.events.some((e) => e.event === 'queued'));
  assert.equal(queued.length, 1, 'exactly one question waited for the model');
  assert.equal((await stop(w)).code, 0);
});

/* ---- the workbench: queries read on the server, the history, the board ---------------- */

test('queries: pages, sorting by the engine over every row, the count, the history, did-you-mean and refusals', async () => {
  const sc = scratch();
  const w = await startWeb(sc, null);
  const a = await login(w);
  const get = (p) => request(w, 'GET', p, { headers: { Cookie: a.Cookie } });
  const TRACKS = 'SELECT TrackId, Name, Milliseconds FROM Track;  -- every track';
  const q = await request(w, 'POST', '/api/queries', { headers: auth(a), body: { sql: TRACKS, sort: 3, desc: true, limit: 3 } });
  assert.equal(q.status, 200, q.text);
  assert.match(q.json.id, /^[0-9a-f]{16}$/);
  assert.deepEqual(q.json.columns, ['TrackId', 'Name', 'Milliseconds']);
  assert.deepEqual(q.json.rows[0], [2820, 'Occupation / Precipice', 5286953]);
  assert.equal(q.json.more, true);
  assert.equal(q.json.sortable, true);
  // the next pages, both orders, come from the same id
  const last = await get(`/api/queries/${q.json.id}/rows?offset=3500&limit=25&sort=3&desc=0`);
  assert.equal(last.status, 200, last.text);
  assert.deepEqual(last.json.rows.map((r) => r[2]), [2960293, 5088838, 5286953]);
  assert.equal(last.json.more, false);
  const page2 = await get(`/api/queries/${q.json.id}/rows?offset=25`);
  assert.deepEqual(page2.json.rows, await sqliteRows(sc.db, 'SELECT TrackId, Name, Milliseconds FROM Track LIMIT 25 OFFSET 25'));
  const count = await get(`/api/queries/${q.json.id}/count`);
  assert.equal(count.json.row_count, 3503);
  assert.equal((await get(`/api/queries/${q.json.id}/rows?limit=5000`)).status, 400);
  assert.equal((await get('/api/queries/0123456789abcdef/rows')).status, 404);
  // the same text is the same id; the history lists it once, newest first
  await request(w, 'POST', '/api/queries', { headers: auth(a), body: { sql: COUNT } });
  const again = await request(w, 'POST', '/api/queries', { headers: auth(a), body: { sql: TRACKS } });
  assert.equal(again.json.id, q.json.id);
  const hidden = await request(w, 'POST', '/api/queries', { headers: auth(a), body: { sql: 'SELECT 1 AS one', history: false } });
  assert.equal(hidden.status, 200);
  const hist = await get('/api/queries');
  assert.deepEqual(hist.json.queries.map((x) => x.sql), [TRACKS, COUNT]);
  assert.equal(hist.json.queries[0].runs, 2);
  assert.equal((await get(`/api/queries/${hidden.json.id}`)).json.sql, 'SELECT 1 AS one');
  // a repeated column keeps its own name through the wrapper
  const dup = await request(w, 'POST', '/api/queries', { headers: auth(a), body: { sql: 'SELECT a.ArtistId, b.ArtistId FROM Artist a JOIN Album b USING (ArtistId)', sort: 2 } });
  assert.deepEqual(dup.json.columns, ['ArtistId', 'ArtistId']);
  // errors: the hint the agent gives the model, refusals named as such (not as the wrapper's syntax)
  const typo = await request(w, 'POST', '/api/queries', { headers: auth(a), body: { sql: 'SELECT Nme FROM Artist' } });
  assert.equal(typo.status, 422);
  assert.equal(typo.json.refused, false);
  assert.match(typo.json.error, /no such column: Nme — did you mean Name\?/);
  for (const bad of ['DELETE FROM Artist', 'SELECT 1; DROP TABLE Artist', "ATTACH DATABASE '/tmp/x.db' AS x"]) {
    const r = await request(w, 'POST', '/api/queries', { headers: auth(a), body: { sql: bad } });
    assert.equal(r.status, 422, bad);
    assert.equal(r.json.refused, true, bad);
  }
  // the wrapper cannot be escaped: the whole text goes through the guard as one statement
  const escape = await request(w, 'POST', '/api/queries', { headers: auth(a), body: { sql: 'SELECT 1) AS x; DELETE FROM Artist; SELECT * FROM (SELECT 1', sort: 1 } });
  assert.equal(escape.status, 422);
  assert.equal(sha256(sc.db), sc.sha);
  // quotes, brackets and comments are read as such: a ')' in them does not end the statement
  const tricky = await request(w, 'POST', '/api/queries', { headers: auth(a), body: {
    sql: "SELECT Name AS \"a)b\", [Composer] FROM Track /* ) */ WHERE Name LIKE '%)%' -- )\n;  -- done", sort: 1, limit: 2 } });
  assert.equal(tricky.status, 200, tricky.text);
  assert.equal(tricky.json.sortable, true);
  assert.deepEqual(tricky.json.columns, ['a)b', 'Composer']);
  // a query the wrapper cannot take still pages in its own order, and says it cannot be sorted
  const lone = await request(w, 'POST', '/api/queries', { headers: auth(a), body: { sql: "SELECT ')' AS x WHERE 1 = (1" } });
  assert.equal(lone.status, 422); /* the engine's own error: the text is not SQL */
  assert.equal((await request(w, 'POST', '/api/queries', { headers: auth(a), body: { sql: "SELECT 'a' AS x /* unterminated", sort: 1 } })).status, 422);
  const own = await request(w, 'POST', '/api/queries', { headers: auth(a), body: { sql: "SELECT 'a' AS x /* unterminated" } });
  assert.equal(own.status, 200, own.text); /* SQLite takes a comment left open at the end */
  assert.equal(own.json.sortable, false);
  assert.deepEqual(own.json.rows, [['a']]);
  assert.equal((await get(`/api/queries/${own.json.id}/count`)).json.row_count, 1);
  assert.equal((await stop(w)).code, 0);
});

test('downloads: every row as CSV and JSON through a cursor, in the order shown, caps announced, formulas defused unless raw', async () => {
  const sc = scratch();
  const w = await startWeb(sc, null);
  const a = await login(w);
  const get = (p) => request(w, 'GET', p, { headers: { Cookie: a.Cookie } });
  const q = await request(w, 'POST', '/api/queries', { headers: auth(a), body: { sql: 'SELECT TrackId, Name, Milliseconds FROM Track' } });
  const csv = await get(`/api/queries/${q.json.id}/rows.csv?sort=3&desc=1`);
  assert.equal(csv.status, 200);
  assert.match(csv.headers['content-type'], /^text\/csv/);
  assert.match(csv.headers['content-disposition'], /attachment; filename="tabletalk-[0-9a-f]{16}\.csv"/);
  const lines = csv.text.split('\r\n');
  assert.equal(lines.length, 3505); // the header, 3,503 rows, the last CRLF
  assert.equal(lines[0], 'TrackId,Name,Milliseconds');
  assert.equal(lines[1], '2820,Occupation / Precipice,5286953');
  const json = await get(`/api/queries/${q.json.id}/rows.json`);
  assert.equal(json.json.rows.length, 3503);
  assert.equal(json.json.truncated, false);
  const cut = await get(`/api/queries/${q.json.id}/rows.json?max_rows=10`);
  assert.equal(cut.json.rows.length, 10);
  assert.equal(cut.json.truncated, true);
  assert.equal(cut.json.truncated_by, 'max_rows');
  const hostile = await request(w, 'POST', '/api/queries', { headers: auth(a), body: {
    sql: "SELECT '=HYPERLINK(\"http://x\")' AS f, -5 AS n, '-x' AS m, '@SUM(1)' AS at, '+1' AS p, char(9) || 'tab' AS t, 'plain' AS ok, NULL AS z" } });
  const h = await get(`/api/queries/${hostile.json.id}/rows.csv`);
  assert.equal(h.text, 'f,n,m,at,p,t,ok,z\r\n"\'=HYPERLINK(""http://x"")",-5,"\'-x","\'@SUM(1)","\'+1","\'\ttab",plain,\r\n');
  const raw = await get(`/api/queries/${hostile.json.id}/rows.csv?raw=1`);
  assert.equal(raw.text, 'f,n,m,at,p,t,ok,z\r\n"=HYPERLINK(""http://x"")",-5,-x,@SUM(1),+1,\ttab,plain,\r\n');
  assert.equal((await stop(w)).code, 0);
});

test('the board: pins added, renamed, moved, removed, a chart drawn again from fresh rows, the export static', async () => {
  const sc = scratch();
  const w = await startWeb(sc, null);
  const a = await login(w);
  const get = (p) => request(w, 'GET', p, { headers: { Cookie: a.Cookie } });
  const GENRES = 'SELECT g.Name AS genre, count(*) AS tracks FROM Track t JOIN Genre g ON g.GenreId = t.GenreId GROUP BY g.GenreId ORDER BY tracks DESC';
  const p1 = await request(w, 'POST', '/api/pins', { headers: auth(a), body: { title: 'Tracks per genre', sql: GENRES, question: 'How many tracks per genre?',
    chart: { kind: 'bar', x: 'genre', y: 'tracks', title: 'Tracks <per> genre' } } });
  assert.equal(p1.status, 201, p1.text);
  const p2 = await request(w, 'POST', '/api/pins', { headers: auth(a), body: { title: 'Artists \u202e<b>', sql: 'SELECT Name FROM Artist ORDER BY Name' } });
  assert.equal(p2.status, 201);
  assert.equal((await request(w, 'POST', '/api/pins', { headers: auth(a), body: { title: 'x', sql: 'SELECT 1', chart: { kind: 'nope' } } })).status, 400);
  assert.equal((await request(w, 'POST', '/api/pins', { headers: { Cookie: a.Cookie }, body: { title: 'x', sql: 'SELECT 1' } })).status, 403);
  let board = await get('/api/pins');
  assert.deepEqual(board.json.pins.map((p) => p.title), ['Tracks per genre', 'Artists \u202e<b>']);
  const moved = await request(w, 'PATCH', `/api/pins/${p2.json.id}`, { headers: auth(a), body: { position: 0, title: 'Artists A-Z \u202e<b>' } });
  assert.equal(moved.status, 200, moved.text);
  board = await get('/api/pins');
  assert.deepEqual(board.json.pins.map((p) => p.id), [p2.json.id, p1.json.id]);
  assert.equal(board.json.pins[0].title, 'Artists A-Z \u202e<b>');
  assert.deepEqual(board.json.pins[1].chart.y, 'tracks');
  const svg = await get(`/api/pins/${p1.json.id}/chart.svg`);
  assert.equal(svg.status, 200);
  assert.equal(svg.headers['content-type'], 'image/svg+xml');
  assert.match(svg.text, /Tracks &lt;per&gt; genre/);
  assert.match(svg.text, /prefers-color-scheme: dark/);
  assert.equal((await get(`/api/pins/${p2.json.id}/chart.svg`)).status, 404);
  // the export: one static file, tables and SVG inline, every string escaped, no script
  const ex = await get('/api/pins/export.html');
  assert.equal(ex.status, 200);
  assert.match(ex.headers['content-disposition'], /attachment; filename="tabletalk-board.html"/);
  assert.doesNotMatch(ex.text, /<script/i);
  assert.match(ex.text, /Content-Security-Policy" content="default-src 'none'/);
  assert.match(ex.text, /<svg[^>]*>[\s\S]*Tracks &lt;per&gt; genre[\s\S]*<\/svg>/);
  assert.match(ex.text, /<td>Rock<\/td><td class="num">1297<\/td>/);
  assert.match(ex.text, /<h2>Artists A-Z &lt;U\+202E&gt;&lt;b&gt;<\/h2>/);
  assert.ok(ex.text.indexOf('Artists A-Z') < ex.text.indexOf('Tracks per genre'), 'the board order');
  assert.equal((await request(w, 'DELETE', `/api/pins/${p2.json.id}`, { headers: auth(a) })).status, 204);
  assert.equal((await request(w, 'DELETE', `/api/pins/${p2.json.id}`, { headers: auth(a) })).status, 404);
  assert.deepEqual((await get('/api/pins')).json.pins.map((p) => p.id), [p1.json.id]);
  assert.equal((await stop(w)).code, 0);
});

test('restoring a run: the data-change check (row count, checksum), and the database gone', async () => {
  const sc = scratch();
  const q = 'How many media types are there?';
  const srv = await server({ rules: [
    { when: { question: q, step: 0 }, ...sql('SELECT MediaTypeId, Name FROM MediaType ORDER BY MediaTypeId') },
    { when: { question: q }, ...answer('There are 5 media types.') },
  ] });
  const w = await startWeb(sc, srv);
  const a = await login(w);
  const { run: r } = await askWeb(w, a, q);
  const check = () => request(w, 'GET', `/api/runs/${r.run_id}/check`, { headers: { Cookie: a.Cookie } });
  const same = await check();
  assert.equal(same.status, 200, same.text);
  assert.equal(same.json.changed, false);
  assert.deepEqual(same.json.then, same.json.now);
  // another program changes a row: the count is the same, the checksum is not
  const edit = (s) => runProgram('python3', ['-c', `import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); c.execute(sys.argv[2]); c.commit()`, sc.db, s]);
  assert.equal((await edit("UPDATE MediaType SET Name = 'Vinyl' WHERE MediaTypeId = 1")).code, 0);
  const changed = await check();
  assert.equal(changed.json.changed, true);
  assert.match(changed.json.message, /the 5 rows it showed differ now \(checksum [0-9a-f]{16} then, [0-9a-f]{16} now\)/);
  assert.equal((await edit("INSERT INTO MediaType(MediaTypeId, Name) VALUES (6, 'Tape')")).code, 0);
  assert.match((await check()).json.message, /the query gave 5 rows then, 6 now/);
  // the database gone: 503 with db_gone, so the page shows the rows the run kept
  fs.renameSync(sc.db, sc.db + '.away');
  const gone = await request(w, 'POST', '/api/queries', { headers: auth(a), body: { sql: 'SELECT 1' } });
  assert.equal(gone.status, 503);
  assert.equal(gone.json.db_gone, true);
  assert.equal((await check()).status, 503);
  const stored = await request(w, 'GET', `/api/runs/${r.run_id}`, { headers: { Cookie: a.Cookie } });
  assert.equal(stored.json.events.at(-1).rows.length, 5);
  fs.renameSync(sc.db + '.away', sc.db);
  await srv.close();
  assert.equal((await stop(w)).code, 0);
});

test('schema search over values; web --help lists only what web uses', async () => {
  const sc = scratch();
  const w = await startWeb(sc, null);
  const a = await login(w);
  const v = await request(w, 'GET', '/api/schema/values?q=rock', { headers: { Cookie: a.Cookie } });
  assert.equal(v.status, 200);
  assert.deepEqual(v.json.matches[0], { table: 'Genre', column: 'Name', value: 'Rock' });
  assert.equal((await request(w, 'GET', '/api/schema/values', { headers: { Cookie: a.Cookie } })).status, 400);
  assert.equal((await stop(w)).code, 0);
  const help = await run(['web', '--help']);
  assert.equal(help.code, 0);
  assert.match(help.stdout, /--size WxH/);
  assert.doesNotMatch(help.stdout, /--no-preview|--chart-format|--quiet|--show-thinking/);
});
