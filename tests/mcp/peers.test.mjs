// peers.test.mjs — serve-mcp --http against peers without the token (issue
// 28): 64 peers trickling their headers a byte at a time neither lock the
// token holder out (same address) nor stay (each is closed once the
// deadline, counted from its accept, passes without a token; the deadline
// is TABLETALK_HTTP_DEADLINE here, so the test does not wait 10 s); a
// chunked body declaring ffffffffffffffff bytes is answered at once (401
// before any of it is read without the token, one 413 as soon as its bytes
// pass --max-message with it); an over-long Content-Length gets exactly one
// 413; wrong tokens are paced (401 five times, then 429 with Retry-After)
// while the right one still gets through; a weak TABLETALK_MCP_TOKEN is
// refused at start. Raw sockets (tests/support/peers.mjs) where a client
// library would hide the bytes; every wait is on a socket or process event.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { run, scratch, startHttp } from '../support/harness.mjs';
import { exchange, firstResponse, occurrences, trickle } from '../support/peers.mjs';
import { postModern, serveArgs } from './protocol.mjs';

const TOKEN = randomBytes(16).toString('hex');
const bearer = { Authorization: `Bearer ${TOKEN}` };

async function startGuarded(sc, extra = [], env = {}) {
  const srv = await startHttp(serveArgs(sc, { extra }), { cwd: sc.dir, env: { TABLETALK_MCP_TOKEN: TOKEN, ...env } });
  srv.port = Number(new URL(srv.url).port);
  return srv;
}

/* run_sql with the token: the holder's question. */
async function holderAsks(srv, id) {
  const r = await postModern(srv.url, id, 'tools/call', { name: 'run_sql', arguments: { sql: 'SELECT 1' } }, { headers: bearer });
  assert.equal(r.status, 200, r.text);
  assert.deepEqual(r.json.result.structuredContent.rows, [[1]]);
}

test('64 peers trickling headers on the holder\'s address: the holder is answered meanwhile, each peer is closed without an answer', async () => {
  const sc = scratch();
  const srv = await startGuarded(sc, [], { TABLETALK_HTTP_DEADLINE: '2' });
  const head = `POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:${srv.port}\r\nContent-Type: application/json\r\nX-Pad: `;
  const peers = Array.from({ length: 64 }, () => trickle(srv.port, head));
  await Promise.all(peers.map((p) => p.connected));
  // All 64 connected before the holder: with libmicrohttpd's 64 per address
  // and nothing else, the holder's connection was refused at accept.
  for (let id = 1; id <= 3; id++) await holderAsks(srv, id);
  const answers = await Promise.all(peers.map((p) => p.closed));
  assert.deepEqual(answers.map((b) => b.length), Array(64).fill(0), 'every trickling peer closed, none answered');
  await holderAsks(srv, 4);
  assert.doesNotMatch(srv.stderr, /when reading request/, 'no line per closed peer');
  await srv.close();
  assert.ok(sc.unchanged());
});

test('a chunked body declaring ffffffffffffffff bytes: 401 before any of it is read without the token; with it, one 413 once its bytes pass --max-message', async () => {
  const sc = scratch();
  const srv = await startGuarded(sc, ['--max-message', '4096']);
  const head = (auth) => `POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:${srv.port}\r\nContent-Type: application/json\r\n` +
    `Accept: application/json, text/event-stream\r\n${auth}Transfer-Encoding: chunked\r\n\r\nffffffffffffffff\r\n`;
  let bytes = await exchange(srv.port, [head(''), Buffer.alloc(100, 0x20)]);
  let res = firstResponse(bytes);
  assert.equal(res.status, 401, bytes.toString());
  assert.equal(occurrences(bytes, 'HTTP/1.1 '), 1, 'one answer');
  bytes = await exchange(srv.port, [head(`Authorization: Bearer ${TOKEN}\r\n`), Buffer.alloc(16384, 0x20)]);
  res = firstResponse(bytes);
  assert.equal(res.status, 413, bytes.toString());
  assert.equal(occurrences(bytes, 'HTTP/1.1 '), 1, `one answer: ${bytes}`);
  const err = JSON.parse(res.body).error;
  assert.equal(err.code, -32600);
  assert.match(err.message, /the limit is 4096 bytes/);
  await holderAsks(srv, 1);
  await srv.close();
});

test('a Content-Length beyond 64 bits or beyond --max-message is answered 413 exactly once', async () => {
  const sc = scratch();
  const srv = await startGuarded(sc);
  for (const length of ['99999999999999999999999', '18446744073709551616', '5000000']) {
    const bytes = await exchange(srv.port, [`POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:${srv.port}\r\n` +
      `Content-Type: application/json\r\nAuthorization: Bearer ${TOKEN}\r\nContent-Length: ${length}\r\n\r\n`]);
    assert.equal(occurrences(bytes, 'HTTP/1.1 413'), 1, `Content-Length ${length}: ${bytes}`);
    assert.equal(occurrences(bytes, 'HTTP/1.1 '), 1, `nothing else: ${bytes}`);
    const res = firstResponse(bytes);
    assert.equal(JSON.parse(res.body).error.code, -32600, res.body);
  }
  await holderAsks(srv, 1);
  await srv.close();
});

test('wrong tokens: 401 five times, then 429 with Retry-After; the right token still gets through and resets the count', async () => {
  const sc = scratch();
  const srv = await startGuarded(sc);
  const wrong = { Authorization: `Bearer ${'0'.repeat(32)}` };
  let id = 0;
  for (let i = 0; i < 5; i++) {
    const r = await postModern(srv.url, ++id, 'tools/list', {}, { headers: wrong });
    assert.equal(r.status, 401, `failure ${i + 1}: ${r.text}`);
  }
  let r = await postModern(srv.url, ++id, 'tools/list', {}, { headers: wrong });
  assert.equal(r.status, 429, r.text);
  const first = Number(r.headers.get('retry-after'));
  assert.ok(first >= 1, `Retry-After: ${r.headers.get('retry-after')}`);
  assert.equal(r.json.error.code, -32600);
  assert.match(r.json.error.message, /Too Many Requests.*wait \d+ s/);
  r = await postModern(srv.url, ++id, 'tools/list', {}, { headers: wrong });
  assert.equal(r.status, 429);
  assert.ok(Number(r.headers.get('retry-after')) >= first, 'the wait grows');
  // the right token, from the same address, is still heard (after its wait)
  await holderAsks(srv, ++id);
  r = await postModern(srv.url, ++id, 'tools/list', {}, { headers: wrong });
  assert.equal(r.status, 401, 'success reset the count');
  r = await postModern(srv.url, ++id, 'tools/list');
  assert.equal(r.status, 401, 'no token at all: 401');
  await srv.close();
});

test('a weak TABLETALK_MCP_TOKEN is refused at start: exit 2, why, and what to do, without the token', async () => {
  const sc = scratch();
  for (const [token, why] of [
    ['s3cret', /shorter than 16 characters/],
    ['1234567890123456', /fewer than 64 bits/],
    ['aaaaaaaaaaaaaaaaaaaaaaaa', /fewer than 5 different characters/],
    ['abc1abc1abc1abc1abc1', /fewer than 5 different characters/],
    ['kq7zkq7zbkq7zkq7zb', /repeats a pattern/],
    ['abcdefghijklmnopqrst', /run of neighbouring characters/],
  ]) {
    const r = await run([...serveArgs(sc), '--http', '127.0.0.1:0'], { env: { TABLETALK_MCP_TOKEN: token }, cwd: sc.dir });
    assert.equal(r.code, 2, `${token}: ${r.stderr}`);
    assert.match(r.stderr, why, token);
    assert.match(r.stderr, /TABLETALK_MCP_TOKEN.*openssl rand -hex 16/s);
    assert.ok(!r.stderr.includes(token), 'the token itself is not printed');
  }
});
