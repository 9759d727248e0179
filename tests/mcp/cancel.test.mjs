// Cancellation reaches the running query: notifications/cancelled for a
// run_sql (alone, and inside a 2025-03-26 batch) and an HTTP client that
// goes away stop the statement within moments, instead of letting it run to
// its time limit. The query never ends by itself (an endless recursive CTE
// under a 60 s limit), so only cancellation can stop it; CPU time is read
// from /proc to see that nothing keeps running.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { RawStdio, killAll, modernRequest, ms, scratch, serveArgs, startHttp, MODERN } from './harness.mjs';

after(killAll);

const ENDLESS = 'WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n) SELECT count(*) FROM n';
const QUICK = 'SELECT count(*) AS genres FROM Genre';
const sleep = (n) => new Promise((r) => setTimeout(r, n));

/* CPU seconds a process has used (user + system). */
function cpuSeconds(pid) {
  const fields = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100; // utime, stime in clock ticks
}

const runSql = (id, sql) => modernRequest(id, 'tools/call', { name: 'run_sql', arguments: { sql } });

test('stdio: notifications/cancelled stops a running run_sql; the only worker is free again at once', async () => {
  const sc = scratch();
  const srv = new RawStdio(serveArgs(sc, { extra: ['--timeout', '60', '--workers', '1'] }), { cwd: sc.dir });
  await srv.send(runSql('long', ENDLESS));
  await sleep(300);
  const t0 = Date.now();
  await srv.send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 'long', reason: 'test' } });
  const quick = await srv.request(runSql('quick', QUICK), { timeout: ms(10000) });
  const waited = Date.now() - t0;
  assert.deepEqual(quick.result.structuredContent.rows, [[25]]);
  assert.ok(waited < ms(1000), `the next query waited ${waited} ms for the cancelled one`);
  assert.equal(srv.responsesTo('long').length, 0, 'a cancelled request gets no response');
  await srv.close();
});

test('stdio 2025-03-26: a request inside a batch is cancelled by its id, and the rest of the batch runs', async () => {
  const sc = scratch();
  const srv = new RawStdio(serveArgs(sc, { extra: ['--timeout', '60', '--workers', '1'] }), { cwd: sc.dir });
  await srv.request({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-03-26', capabilities: {}, clientInfo: { name: 't', version: '1' } } });
  await srv.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
  const call = (id, sql) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'run_sql', arguments: { sql } } });
  await srv.send([call('b-long', ENDLESS), call('b-quick', QUICK)]);
  await sleep(300);
  const t0 = Date.now();
  await srv.send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 'b-long' } });
  const batch = await srv.waitFor((m) => Array.isArray(m), { timeout: ms(10000), what: 'the batch reply' });
  const waited = Date.now() - t0;
  assert.ok(waited < ms(1000), `the batch answered ${waited} ms after the cancellation`);
  assert.deepEqual(batch.map((r) => r.id), ['b-quick'], 'the cancelled request has no response in the batch');
  assert.match(batch[0].result.content[0].text, /"rows":\[\[25\]\]/); /* 2025-03-26: text only */
  await srv.close();
});

test('HTTP: a client that goes away stops its query; the server uses no CPU afterwards', async () => {
  const sc = scratch();
  const srv = await startHttp(serveArgs(sc, { extra: ['--timeout', '60'] }), { cwd: sc.dir });
  const abort = new AbortController();
  const headers = { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream',
    'MCP-Protocol-Version': MODERN, 'Mcp-Method': 'tools/call', 'Mcp-Name': 'run_sql' };
  const pending = fetch(srv.url, { method: 'POST', headers, body: JSON.stringify(runSql(1, ENDLESS)), signal: abort.signal })
    .catch(() => null);
  await sleep(500);
  // the query is running: it uses CPU (0.3 s of it, within 10 s on a
  // loaded machine, where a fixed half second saw as little as 0.25 s)
  const busy0 = cpuSeconds(srv.child.pid), t0 = Date.now();
  let busy = 0;
  while (busy <= 0.3 && Date.now() - t0 < 10000) {
    await sleep(250);
    busy = cpuSeconds(srv.child.pid) - busy0;
  }
  const window = Date.now() - t0;
  abort.abort();
  await pending;
  await sleep(400); // the watcher looks every 50 ms; SQLite stops within 1,000 opcodes
  const idle0 = cpuSeconds(srv.child.pid);
  await sleep(1000);
  const idle = cpuSeconds(srv.child.pid) - idle0;
  await srv.close();
  assert.ok(busy > 0.3, `the query was running (${busy} CPU s in ${window} ms)`);
  assert.ok(idle < 0.2, `${idle} CPU s in the second after the client left: the query kept running`);
});

test('HTTP: connections that never show a token cannot hold the server: one address gets 64, closed after 10 s', async () => {
  const net = await import('node:net');
  const sc = scratch();
  const srv = await startHttp(serveArgs(sc), { cwd: sc.dir });
  const { hostname, port } = new URL(srv.url);
  const idle = [];
  for (let i = 0; i < 260; i++) { /* half-open: connected, nothing sent */
    const s = net.connect(Number(port), hostname);
    s.on('error', () => {});
    idle.push(s);
  }
  await sleep(1000);
  const refusedAtOnce = idle.filter((s) => s.destroyed || s.readyState !== 'open').length;
  await sleep(ms(10500));
  const closed = idle.filter((s) => s.destroyed || s.readyState !== 'open').length;
  const t0 = Date.now();
  const res = await fetch(srv.url, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream',
      'MCP-Protocol-Version': MODERN, 'Mcp-Method': 'tools/call', 'Mcp-Name': 'run_sql' },
    body: JSON.stringify(runSql(1, QUICK)),
  });
  const waited = Date.now() - t0;
  for (const s of idle) s.destroy();
  await srv.close();
  assert.equal(res.status, 200);
  assert.ok(waited < ms(2000), `a real request waited ${waited} ms`);
  assert.ok(refusedAtOnce >= 190, `${refusedAtOnce} of 260 connections from one address were refused at once`);
  assert.ok(closed >= 250, `only ${closed} of 260 idle connections were closed by the server`);
});
