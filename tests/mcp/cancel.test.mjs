// Cancellation reaches the running query: notifications/cancelled for a
// run_sql (alone, and inside a 2025-03-26 batch) and an HTTP client that
// goes away stop the statement, instead of letting it run to its time
// limit. The query never ends by itself (an endless recursive CTE under a
// one-hour limit, longer than any wait here), so only cancellation can stop
// it. serve-mcp announces no query start: that the query runs is read from
// the CPU it burns (/proc), and that it stopped from that CPU time no
// longer advancing.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { RawStdio, cpuBusy, cpuIdle, scratch, startHttp, startModel } from '../support/harness.mjs';
import { modernRequest, serveArgs, MODERN } from './protocol.mjs';

const ENDLESS = 'WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n) SELECT count(*) FROM n';
const QUICK = 'SELECT count(*) AS genres FROM Genre';
const HOUR = ['--timeout', '3600'];

const runSql = (id, sql) => modernRequest(id, 'tools/call', { name: 'run_sql', arguments: { sql } });

test('stdio: notifications/cancelled stops a running run_sql; the only worker is free again', async () => {
  const sc = scratch();
  const srv = new RawStdio(serveArgs(sc, { extra: [...HOUR, '--workers', '1'] }), { cwd: sc.dir });
  await srv.request(runSql('warm', QUICK)); // started, schema read
  await srv.send(runSql('long', ENDLESS));
  await cpuBusy(srv.child.pid, 0.2); // the query runs
  await srv.send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 'long', reason: 'test' } });
  // the one worker answers the next query: the endless one was stopped
  const quick = await srv.request(runSql('quick', QUICK));
  assert.deepEqual(quick.result.structuredContent.rows, [[25]]);
  assert.equal(srv.responsesTo('long').length, 0, 'a cancelled request gets no response');
  await srv.close();
});

test('stdio: run_sql is answered by the reading thread while the only worker waits on a question; a long statement still waits for the worker', async () => {
  const model = await startModel({ rules: [{ name: 'hang', when: { question: 'never answer' }, hang_ms: 3600000,
    tool: 'run_sql', args: { sql: 'SELECT 1' } }] });
  const sc = scratch();
  const srv = new RawStdio(serveArgs(sc, { model, extra: [...HOUR, '--workers', '1'] }), { cwd: sc.dir });
  await srv.request(runSql('warm', QUICK)); // a handle of the database was opened, and is free again
  const ask = modernRequest('ask', 'tools/call', { name: 'ask_database', arguments: { question: 'Please never answer this' } });
  ask.params._meta = { ...ask.params._meta, progressToken: 'p' };
  await srv.send(ask);
  await srv.waitFor((m) => m.method === 'notifications/progress' && m.params.progressToken === 'p', { what: 'the question running' });
  // the one worker waits for the model now: what it would have to answer stays unanswered
  await srv.send(runSql('long', ENDLESS)); // past what the reading thread may run: queued
  const point = await srv.request(runSql('point', 'SELECT Name FROM Genre WHERE GenreId = 1'));
  assert.deepEqual(point.result.structuredContent.rows, [['Rock']]);
  assert.equal(point.result.structuredContent.cached, false);
  await srv.send(runSql('refused', 'DELETE FROM Genre')); // errors are answered by a worker
  const again = await srv.request(runSql('again', QUICK));
  assert.deepEqual(again.result.structuredContent.rows, [[25]]);
  assert.equal(again.result.structuredContent.cached, true, 'the warm-up result, from the cache');
  // lines are read in order: 'refused' was queued before 'again' was answered
  assert.equal(srv.responsesTo('refused').length, 0);
  assert.equal(srv.responsesTo('long').length, 0);
  for (const id of ['long', 'ask'])
    await srv.send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: id, reason: 'test' } });
  const refused = await srv.waitFor((m) => m.id === 'refused' && !('method' in m), { what: 'the refusal' });
  assert.equal(refused.result.isError, true);
  assert.match(refused.result.content[0].text, /not allowed/);
  const exit = await srv.close();
  assert.equal(exit.code, 0);
  assert.deepEqual([...srv.responsesTo('long'), ...srv.responsesTo('ask')], [], 'cancelled: no responses');
  await model.close();
});

test('stdio 2025-03-26: a request inside a batch is cancelled by its id, and the rest of the batch runs', async () => {
  const sc = scratch();
  const srv = new RawStdio(serveArgs(sc, { extra: [...HOUR, '--workers', '1'] }), { cwd: sc.dir });
  await srv.request({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-03-26', capabilities: {}, clientInfo: { name: 't', version: '1' } } });
  await srv.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
  const call = (id, sql) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'run_sql', arguments: { sql } } });
  await srv.send([call('b-long', ENDLESS), call('b-quick', QUICK)]);
  await cpuBusy(srv.child.pid, 0.2);
  await srv.send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 'b-long' } });
  const batch = await srv.waitFor((m) => Array.isArray(m), { what: 'the batch reply' });
  assert.deepEqual(batch.map((r) => r.id), ['b-quick'], 'the cancelled request has no response in the batch');
  assert.match(batch[0].result.content[0].text, /"rows":\[\[25\]\]/); /* 2025-03-26: text only */
  await srv.close();
});

test('HTTP: a client that goes away stops its query; the server uses no CPU afterwards', async () => {
  const sc = scratch();
  const srv = await startHttp(serveArgs(sc, { extra: HOUR }), { cwd: sc.dir });
  const abort = new AbortController();
  const headers = { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream',
    'MCP-Protocol-Version': MODERN, 'Mcp-Method': 'tools/call', 'Mcp-Name': 'run_sql' };
  const pending = fetch(srv.url, { method: 'POST', headers, body: JSON.stringify(runSql(1, ENDLESS)), signal: abort.signal })
    .catch(() => null);
  await cpuBusy(srv.child.pid, 0.3); // the query is running
  abort.abort();
  await pending;
  // its CPU time stops advancing: the statement was stopped (it would run an hour)
  await cpuIdle(srv.child.pid);
  assert.ok(srv.alive());
  await srv.close();
});

test('HTTP: connections that never show a token cannot hold the server: one address keeps 32 of them, newer ones close the oldest', async () => {
  const net = await import('node:net');
  const sc = scratch();
  const srv = await startHttp(serveArgs(sc), { cwd: sc.dir });
  const { hostname, port } = new URL(srv.url);
  const N = 260, KEPT = 32;
  let closed = 0, openWhenRefused = -1;
  let allRefused, allClosed;
  const refused = new Promise((r) => { allRefused = r; });
  const gone = new Promise((r) => { allClosed = r; });
  const idle = [];
  for (let i = 0; i < N; i++) { /* half-open: connected, nothing sent */
    const s = net.connect(Number(port), hostname);
    s.on('error', () => {});
    s.on('close', () => {
      closed++;
      if (closed === N - KEPT) { openWhenRefused = N - closed; allRefused(); }
      if (closed === N) allClosed();
    });
    idle.push(s);
  }
  // the guard keeps 32 connections without a token per address (each newer
  // one closes the oldest, or libmicrohttpd refuses it at its 64), while
  // those 32 stay open and served: one of them still gets an answer; the
  // guard's deadline closes the others later
  await refused;
  assert.equal(openWhenRefused, KEPT, `${openWhenRefused} connections were open when the others had been closed`);
  const kept = idle.find((s) => !s.destroyed && s.readyState === 'open');
  const body = JSON.stringify(runSql(1, QUICK));
  const answer = new Promise((resolve) => {
    let text = '';
    kept.on('data', (d) => { text += d; if (/\r\n\r\n/.test(text)) resolve(text); });
    kept.on('close', () => resolve(text));
  });
  kept.write(`POST ${new URL(srv.url).pathname} HTTP/1.1\r\nHost: ${hostname}:${port}\r\nContent-Type: application/json\r\n` +
    `Accept: application/json, text/event-stream\r\nMCP-Protocol-Version: ${MODERN}\r\nMcp-Method: tools/call\r\n` +
    `Mcp-Name: run_sql\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);
  assert.match(await answer, /^HTTP\/1\.1 200/, 'a kept connection is served');
  kept.destroy();
  await gone;
  const res = await fetch(srv.url, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream',
      'MCP-Protocol-Version': MODERN, 'Mcp-Method': 'tools/call', 'Mcp-Name': 'run_sql' },
    body: JSON.stringify(runSql(1, QUICK)),
  });
  assert.equal(res.status, 200);
  await srv.close();
});
