// web_peers.test.mjs — `tabletalk web` against peers without the token
// (issue 28): 64 peers trickling their headers a byte at a time neither
// lock the token holder out (same address: the browser's token exchange and
// a script's bearer token are answered) nor stay (each is closed once the
// deadline, counted from its accept, passes without a token; the deadline
// is TABLETALK_HTTP_DEADLINE here, so the test does not wait 10 s); a
// chunked body declaring ffffffffffffffff bytes is answered at once (401
// before any of it is read without the token, one 413 as soon as its bytes
// pass the 1 MiB limit with it); an over-long Content-Length gets exactly
// one 413; wrong tokens and cookies are paced (401 five times, then 429
// with Retry-After) while the right token still gets through; a weak
// --token is refused at start. Raw sockets (tests/support/peers.mjs) where
// a client library would hide the bytes; every wait is on an event.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { run, scratch, server, startWeb } from '../support/harness.mjs';
import { exchange, firstResponse, occurrences, trickle } from '../support/peers.mjs';

const MAX_BODY = 1 << 20;

/* One request with full control of the headers: {status, headers, text, json}. */
function request(w, method, path, headers = {}) {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port: w.port, method, path, agent: false,
      headers: { Host: `127.0.0.1:${w.port}`, ...headers } }, (res) => {
      let text = '';
      res.on('data', (c) => { text += c; });
      res.on('end', () => {
        let json = null;
        try { json = JSON.parse(text); } catch { /* a page */ }
        resolve({ status: res.statusCode, headers: res.headers, text, json });
      });
    });
    req.on('error', reject);
    req.end();
  });
}

/* The token holder: a browser's token exchange, then its cookie, and a script's bearer token. */
async function holderUses(w) {
  const ex = await request(w, 'GET', `/?token=${w.token}`);
  assert.equal(ex.status, 303, ex.text);
  const cookie = ex.headers['set-cookie'][0].split(';')[0];
  const s = await request(w, 'GET', '/api/session', { Cookie: cookie });
  assert.equal(s.status, 200, s.text);
  assert.match(s.json.csrf, /^[0-9a-f]{32}$/, 'the login\'s CSRF token');
  const b = await request(w, 'GET', '/api/session', { Authorization: `Bearer ${w.token}` });
  assert.equal(b.status, 200, b.text);
}

test('64 peers trickling headers on the holder\'s address: the holder is answered meanwhile, each peer is closed without an answer', async () => {
  const sc = scratch();
  const srv = await server({ rules: [] });
  const w = await startWeb(sc, srv, [], { TABLETALK_HTTP_DEADLINE: '2' });
  const head = `GET /api/session HTTP/1.1\r\nHost: 127.0.0.1:${w.port}\r\nX-Pad: `;
  const peers = Array.from({ length: 64 }, () => trickle(w.port, head));
  await Promise.all(peers.map((p) => p.connected));
  // All 64 connected before the holder: with libmicrohttpd's 64 per address
  // and nothing else, the holder's connection was refused at accept.
  await holderUses(w);
  const answers = await Promise.all(peers.map((p) => p.closed));
  assert.deepEqual(answers.map((b) => b.length), Array(64).fill(0), 'every trickling peer closed, none answered');
  await holderUses(w);
  w.proc.kill('SIGINT');
  const end = await w.exited;
  assert.equal(end.code, 0);
  assert.doesNotMatch(end.stderr(), /when reading request/, 'no line per closed peer');
  assert.ok(sc.unchanged());
  await srv.close();
});

test('a chunked body declaring ffffffffffffffff bytes: 401 before any of it is read without the token; with it, one 413 once its bytes pass 1 MiB', async () => {
  const sc = scratch();
  const srv = await server({ rules: [] });
  const w = await startWeb(sc, srv);
  const head = (auth) => `POST /api/sql HTTP/1.1\r\nHost: 127.0.0.1:${w.port}\r\nContent-Type: application/json\r\n` +
    `${auth}Transfer-Encoding: chunked\r\n\r\nffffffffffffffff\r\n`;
  let bytes = await exchange(w.port, [head(''), Buffer.alloc(100, 0x20)]);
  let res = firstResponse(bytes);
  assert.equal(res.status, 401, bytes.toString());
  assert.equal(occurrences(bytes, 'HTTP/1.1 '), 1, 'one answer');
  bytes = await exchange(w.port, [head(`Authorization: Bearer ${w.token}\r\n`), Buffer.alloc(MAX_BODY + 65536, 0x20)]);
  res = firstResponse(bytes);
  assert.equal(res.status, 413, bytes.toString().slice(0, 500));
  assert.equal(occurrences(bytes, 'HTTP/1.1 '), 1, 'one answer');
  assert.match(JSON.parse(res.body).error, /larger than 1048576 bytes/);
  await holderUses(w);
  w.proc.kill('SIGINT');
  assert.equal((await w.exited).code, 0);
  await srv.close();
});

test('a Content-Length beyond 64 bits or beyond the 1 MiB limit is answered 413 exactly once', async () => {
  const sc = scratch();
  const srv = await server({ rules: [] });
  const w = await startWeb(sc, srv);
  for (const length of ['99999999999999999999999', '18446744073709551616', String(MAX_BODY + 1)]) {
    const bytes = await exchange(w.port, [`POST /api/sql HTTP/1.1\r\nHost: 127.0.0.1:${w.port}\r\n` +
      `Content-Type: application/json\r\nAuthorization: Bearer ${w.token}\r\nContent-Length: ${length}\r\n\r\n`]);
    assert.equal(occurrences(bytes, 'HTTP/1.1 413'), 1, `Content-Length ${length}: ${bytes}`);
    assert.equal(occurrences(bytes, 'HTTP/1.1 '), 1, `nothing else: ${bytes}`);
    const res = firstResponse(bytes);
    assert.equal(typeof JSON.parse(res.body).error, 'string', res.body);
  }
  await holderUses(w);
  w.proc.kill('SIGINT');
  assert.equal((await w.exited).code, 0);
  await srv.close();
});

test('wrong tokens and cookies: 401 five times, then 429 with Retry-After; the right token still gets through and resets the count', async () => {
  const sc = scratch();
  const srv = await server({ rules: [] });
  const w = await startWeb(sc, srv);
  const wrongs = [
    () => request(w, 'GET', '/api/session', { Authorization: `Bearer ${'0'.repeat(32)}` }),
    () => request(w, 'GET', '/api/session', { Cookie: `tt_web=${'0'.repeat(32)}` }),
    () => request(w, 'GET', `/?token=${'0'.repeat(32)}`),
  ];
  for (let i = 0; i < 5; i++) {
    const r = await wrongs[i % 3]();
    assert.equal(r.status, 401, `failure ${i + 1}: ${r.text}`);
  }
  let r = await wrongs[0]();
  assert.equal(r.status, 429, r.text);
  const first = Number(r.headers['retry-after']);
  assert.ok(first >= 1, `Retry-After: ${r.headers['retry-after']}`);
  assert.match(r.json.error, /too many wrong tokens.*wait \d+ s/);
  r = await wrongs[2]();
  assert.equal(r.status, 429, 'the page says it too');
  assert.match(r.text, /Too many wrong tokens/);
  assert.ok(Number(r.headers['retry-after']) >= first, 'the wait grows');
  // the right token, from the same address, is still heard (after its wait)
  await holderUses(w);
  r = await wrongs[0]();
  assert.equal(r.status, 401, 'success reset the count');
  r = await request(w, 'GET', '/api/session');
  assert.equal(r.status, 401, 'no token at all: 401');
  w.proc.kill('SIGINT');
  assert.equal((await w.exited).code, 0);
  await srv.close();
});

test('a weak --token or TABLETALK_WEB_TOKEN is refused at start: exit 2, why, and what to do; the random one is 32 hex digits', async () => {
  const sc = scratch();
  const srv = await server({ rules: [] });
  for (const [token, why] of [
    ['s3cret-token', /shorter than 16 characters/],
    ['1234567890123456', /fewer than 64 bits/],
    ['aaaaaaaaaaaaaaaaaaaaaaaa', /fewer than 5 different characters/],
    ['kq7zkq7zbkq7zkq7zb', /repeats a pattern/],
    ['abcdefghijklmnopqrst', /run of neighbouring characters/],
  ]) {
    for (const [args, env, name] of [[['--token', token], {}, '--token'], [[], { TABLETALK_WEB_TOKEN: token }, 'TABLETALK_WEB_TOKEN']]) {
      const r = await run(['web', sc.db, '--port', '0', '--base-url', srv.url, '--state-dir', sc.state, ...args], { env });
      assert.equal(r.code, 2, `${name}=${token}: ${r.stderr}`);
      assert.match(r.stderr, why, token);
      assert.match(r.stderr, new RegExp(`${name}.*openssl rand -hex 16`, 's'));
      assert.equal(r.stdout, '', 'nothing served');
      assert.ok(!r.stderr.includes(token), 'the token itself is not printed');
    }
  }
  const w = await startWeb(sc, srv);
  assert.match(w.token, /^[0-9a-f]{32}$/);
  w.proc.kill('SIGINT');
  assert.equal((await w.exited).code, 0);
  await srv.close();
});
