// Hostile and broken model endpoints, as raw HTTP servers on loopback:
// an endless stream (of text or of tool-call arguments) and a huge body end
// the question at the byte cap with memory bounded; keep-alive comments do
// not keep a silent endpoint alive; a slow but steady stream ends at the
// overall deadline; invalid UTF-8 and gzip-compressed replies are named for
// what they are. Memory is read from /proc while the process runs.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import zlib from 'node:zlib';
import { BIN, SANITIZED, runProgram, scratch, tempDir } from '../support/harness.mjs';

/* A server whose every request is answered by handler(req, res). */
async function endpoint(handler) {
  const sockets = new Set();
  const srv = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => handler(req, res));
  });
  srv.on('connection', (s) => { sockets.add(s); s.on('close', () => sockets.delete(s)); });
  await new Promise((resolve) => srv.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${srv.address().port}/v1`,
    close: () => new Promise((resolve) => { for (const s of sockets) s.destroy(); srv.close(resolve); }),
  };
}

/* Runs `tabletalk ask` under GNU time: its peak resident memory as the
 * kernel counted it (ru_maxrss), read from the last stderr line. */
async function askMeasured(url, extra = []) {
  const sc = scratch();
  const home = tempDir('tabletalk-home-');
  const r = await runProgram('/usr/bin/time', ['-f', 'tt-maxrss-kib %M', BIN, 'ask', sc.db, 'How many tracks?',
    '--base-url', url, '--state-dir', sc.state, ...extra],
  { env: { ...process.env, NO_COLOR: '1', TABLETALK_DATA_DIR: home, TABLETALK_CACHE_DIR: home, TABLETALK_MODEL_PATH: '' } });
  const m = /(?:^|\n)tt-maxrss-kib (\d+)\n$/.exec(r.stderr);
  assert.ok(m, `no peak memory from GNU time: ${r.stderr.slice(-300)}`);
  const stderr = r.stderr.slice(0, m.index).replace(/Command (exited with non-zero status|terminated by signal) \d+\n$/, '');
  return { ...r, stderr, peakMib: Number(m[1]) / 1024 };
}

const sseHead = { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-cache' };
const event = (delta) => `data: ${JSON.stringify({ id: 'x', object: 'chat.completion.chunk', choices: [{ index: 0, delta }] })}\n\n`;

/* Writes event(delta()) as fast as the client reads, until it goes away. */
function endless(res, delta) {
  res.writeHead(200, sseHead);
  const piece = event(delta()).repeat(64);
  const pump = () => { while (res.write(piece)) { /* fill the socket */ } };
  res.on('drain', pump);
  res.on('close', () => res.removeAllListeners('drain'));
  pump();
}

const memoryLimitMib = SANITIZED ? 1024 : 200; // sanitizers add their own shadow memory

test('an endless stream of text ends at the byte cap, with memory bounded', async () => {
  const srv = await endpoint((req, res) => endless(res, () => ({ content: 'x'.repeat(1000) })));
  const r = await askMeasured(srv.url);
  await srv.close();
  assert.equal(r.code, 1, r.stderr);
  assert.match(r.stderr, /passed the 16\.0 MiB the model's replies may still take/);
  assert.ok(r.peakMib < memoryLimitMib, `peak ${r.peakMib.toFixed(0)} MiB`);
  console.log(`endless text stream: peak ${r.peakMib.toFixed(1)} MiB`);
});

test('endless tool-call arguments end at the byte cap too', async () => {
  let first = true;
  const srv = await endpoint((req, res) => endless(res, () => {
    const d = first ? { tool_calls: [{ index: 0, id: 'c1', type: 'function', function: { name: 'answer', arguments: '{"text":"' } }] }
      : { tool_calls: [{ index: 0, function: { arguments: 'y'.repeat(1000) } }] };
    first = false;
    return d;
  }));
  const r = await askMeasured(srv.url);
  await srv.close();
  assert.equal(r.code, 1, r.stderr);
  assert.match(r.stderr, /passed the 16\.0 MiB/);
  assert.ok(r.peakMib < memoryLimitMib, `peak ${r.peakMib.toFixed(0)} MiB`);
});

test('a huge whole reply is refused at the cap', async () => {
  const srv = await endpoint((req, res) => {
    res.writeHead(200, { 'Content-Type': 'application/json' });
    const chunk = 'z'.repeat(1 << 20);
    let sent = 0;
    res.write('{"choices":[{"message":{"content":"');
    const pump = () => {
      while (sent < 40 && res.write(chunk)) sent++;
      if (sent >= 40) res.end('"}}]}');
    };
    res.on('drain', pump);
    pump();
  });
  const r = await askMeasured(srv.url, ['--no-stream']);
  await srv.close();
  assert.equal(r.code, 1, r.stderr);
  assert.match(r.stderr, /passed the 16\.0 MiB/);
  assert.ok(r.peakMib < memoryLimitMib, `peak ${r.peakMib.toFixed(0)} MiB`);
});

test('keep-alive comments do not keep a silent endpoint alive past --llm-timeout', async () => {
  const timers = new Set();
  const srv = await endpoint((req, res) => {
    res.writeHead(200, sseHead);
    const t = setInterval(() => res.write(': keep-alive\n\n'), 300);
    timers.add(t);
    res.on('close', () => clearInterval(t));
  });
  const r = await askMeasured(srv.url, ['--llm-timeout', '1.5']);
  for (const t of timers) clearInterval(t);
  await srv.close();
  assert.equal(r.code, 1, r.stderr);
  // the silence limit fired although comments kept coming (else only the
  // harness's failure timeout would have ended it)
  assert.match(r.stderr, /stopped sending for 1\.5 s/);
});

test('a slow but steady stream ends at --llm-deadline', async () => {
  const timers = new Set();
  const srv = await endpoint((req, res) => {
    res.writeHead(200, sseHead);
    const t = setInterval(() => res.write(event({ content: '.' })), 200);
    timers.add(t);
    res.on('close', () => clearInterval(t));
  });
  const r = await askMeasured(srv.url, ['--llm-deadline', '2']);
  for (const t of timers) clearInterval(t);
  await srv.close();
  assert.equal(r.code, 1, r.stderr);
  assert.match(r.stderr, /did not finish its reply within 2 s \(the --llm-deadline/);
});

test('a stream event that is not valid UTF-8 is reported, not dropped', async () => {
  const srv = await endpoint((req, res) => {
    res.writeHead(200, sseHead);
    res.write(Buffer.concat([Buffer.from('data: {"choices":[{"index":0,"delta":{"content":"S'),
      Buffer.from([0xe3, 0x6f]), Buffer.from(' Paulo"}}]}\n\n')]));
    res.end(`data: ${JSON.stringify({ choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] })}\n\ndata: [DONE]\n\n`);
  });
  const r = await askMeasured(srv.url);
  await srv.close();
  assert.equal(r.code, 1, r.stderr);
  assert.match(r.stderr, /sent a stream event that is not valid UTF-8 \(byte 0xE3/);
});

test('a gzip-compressed reply that was not asked for is named', async () => {
  const body = zlib.gzipSync(JSON.stringify({ choices: [{ index: 0, message: { role: 'assistant', content: 'hi' }, finish_reason: 'stop' }] }));
  const srv = await endpoint((req, res) => {
    res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Encoding': 'gzip' });
    res.end(body);
  });
  const r = await askMeasured(srv.url, ['--no-stream']);
  await srv.close();
  assert.equal(r.code, 1, r.stderr);
  assert.match(r.stderr, /answered with gzip-compressed content \(Content-Encoding: gzip\)/);
});
