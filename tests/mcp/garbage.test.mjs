// Malformed input: 10,000 lines of seeded garbage on stdio (random bytes,
// invalid UTF-8, NUL, random JSON, truncated requests, deep nesting, huge
// numbers, wrong member types, lines over --max-message), each answered
// with exactly the JSON-RPC error it calls for and nothing for what needs
// no reply; the protocol errors one by one (stdio and HTTP, with their
// status codes); the HTTP guards (Origin, Host, token, method, session,
// size, Content-Type); random HTTP bodies and concurrent run_sql. The
// server must stay up and answer correctly afterwards. TT_SEED replays.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { execFileSync } from 'node:child_process';
import { FAIL_AFTER, RawStdio, rng, scratch, startHttp, suiteSeed } from '../support/harness.mjs';
import {
  META_CAPS, META_VERSION, MODERN, modernHeaders, modernRequest, post, postModern, serveArgs,
} from './protocol.mjs';


const SEED = suiteSeed('garbage');
const MAX = 65536; // --max-message for these servers
const utf8 = new TextDecoder('utf-8', { fatal: true });

/* ---- what a line calls for, from JSON-RPC 2.0 and the MCP revisions ------------- */

const NONE = Object.freeze({ none: true });
const err = (code, id = null) => ({ code, id });

/* Where jansson (the server's parser) is stricter than JSON.parse, by
 * design or by RFC 8259's leave to limit: \u0000 and unpaired surrogate
 * escapes, integers outside int64, reals that overflow a double, values
 * nested deeper than 2048 (a scalar counts one level more than the
 * containers around it; object keys do not count). Returns the reason,
 * or null. text must be valid JSON. */
function parserLimit(text) {
  let depth = 0, maxDepth = 0, i = 0;
  const n = text.length;
  const value = () => { maxDepth = Math.max(maxDepth, depth + 1); };
  while (i < n) {
    const c = text[i];
    if (c === '"') {
      i++;
      let pendingHigh = false;
      while (i < n && text[i] !== '"') {
        if (text[i] === '\\') {
          if (text[i + 1] === 'u') {
            const cp = parseInt(text.slice(i + 2, i + 6), 16);
            if (cp === 0) return 'NUL escape';
            if (cp >= 0xd800 && cp <= 0xdbff) { if (pendingHigh) return 'unpaired surrogate'; pendingHigh = true; } else if (cp >= 0xdc00 && cp <= 0xdfff) { if (!pendingHigh) return 'unpaired surrogate'; pendingHigh = false; } else if (pendingHigh) return 'unpaired surrogate';
            i += 6;
            continue;
          }
          if (pendingHigh) return 'unpaired surrogate';
          i += 2;
          continue;
        }
        if (pendingHigh) return 'unpaired surrogate';
        i++;
      }
      if (pendingHigh) return 'unpaired surrogate';
      i++;
      if (!/^\s*:/.test(text.slice(i, i + 40))) value(); // a value, not a key
      continue;
    }
    if (c === '[' || c === '{') { depth++; maxDepth = Math.max(maxDepth, depth); i++; continue; }
    if (c === 't' || c === 'f' || c === 'n') { value(); i += c === 'f' ? 5 : 4; continue; }
    if (c === ']' || c === '}') { depth--; i++; continue; }
    if (c === '-' || (c >= '0' && c <= '9')) {
      const m = /^-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?/.exec(text.slice(i, i + 400));
      const tok = m[0];
      value();
      if (!m[2] && !m[3]) {
        const v = BigInt(tok);
        if (v > 9223372036854775807n || v < -9223372036854775808n) return 'integer out of range';
      } else if (!Number.isFinite(Number(tok))) return 'real overflow';
      i += tok.length;
      continue;
    }
    i++;
  }
  return maxDepth > 2048 ? 'too deep' : null;
}

/* An id usable in a reply: a string or an integer (not a real, not null). */
const usableId = (v) => (typeof v === 'string' || Number.isInteger(v) ? v : null);
const isObj = (v) => v !== null && typeof v === 'object' && !Array.isArray(v);

/* What the server must answer to a JSON value (random JSON never uses a
 * method this server knows, nor params._meta). */
function classify(v) {
  if (!isObj(v)) return err(-32600); // not an object; an array is a batch, 2025-03-26 only
  const id = 'id' in v ? usableId(v.id) : null;
  if (v.jsonrpc !== '2.0') return err(-32600, id);
  if ('method' in v) {
    if (typeof v.method !== 'string' || v.method === '') return err(-32600, id);
    if ('params' in v && !isObj(v.params)) return err(-32600, id);
    if (!('id' in v)) return NONE; // a notification
    if (id === null) return err(-32600); // id null, a real, an object...
    return err(-32601, id); // no such method
  }
  if ('id' in v && ('result' in v) !== ('error' in v)) {
    if ('error' in v && !isObj(v.error)) return err(-32600, id);
    return NONE; // a response to nothing we asked
  }
  return err(-32600, id);
}

/* What a line (bytes, no newline) calls for on stdio; on HTTP a body. */
function predict(buf, { http = false } = {}) {
  if (!http && buf.length > MAX) return err(-32600); // over --max-message
  let s = 0, e = buf.length;
  if (!http) {
    while (e > s && (buf[e - 1] === 13 || buf[e - 1] === 32 || buf[e - 1] === 9)) e--;
    while (s < e && (buf[s] === 32 || buf[s] === 9)) s++;
    if (s === e) return NONE; // a blank line is no message
  }
  let text;
  try { text = utf8.decode(buf.subarray(s, e)); } catch { return err(-32700); }
  let v;
  try { v = JSON.parse(text); } catch { return err(-32700); }
  if (parserLimit(text)) return err(-32700);
  return classify(v);
}

/* ---- the garbage ---------------------------------------------------------------- */

const CHARS = 'abcXYZ019 _-/.:"\\{}[],\'é☃€😀\t\u0001\u001f\u2028\ufeff';
function randString(r, max = 12) {
  let s = '';
  const len = r.int(max);
  for (let i = 0; i < len; i++) s += r.pick([...CHARS]);
  return s;
}
function randNumber(r) {
  switch (r.int(4)) {
    case 0: return r.int(100);
    case 1: return -r.int(1e9);
    case 2: return r.int(1e6) + 0.5;
    default: return r.int(2 ** 31);
  }
}
const KEYS = ['jsonrpc', 'id', 'method', 'params', 'result', 'error', 'x', 'name', 'arguments'];
function randValue(r, depth = 0) {
  const k = r.int(depth > 3 ? 5 : 7);
  if (k === 0) return null;
  if (k === 1) return r() < 0.5;
  if (k === 2) return randNumber(r);
  if (k === 3 || k === 4) return r() < 0.3 ? r.pick(['2.0', '1.0', '', 'pong']) : `x${randString(r)}`;
  if (k === 5) return Array.from({ length: r.int(4) }, () => randValue(r, depth + 1));
  const o = {};
  for (let i = r.int(5); i > 0; i--) o[r.pick(KEYS)] = randValue(r, depth + 1);
  if (depth === 0 && r() < 0.5) o.jsonrpc = '2.0';
  return o;
}

const REAL_REQUESTS = [
  { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: { elicitation: {} }, clientInfo: { name: 'x', version: '1' } } },
  modernRequest(2, 'tools/call', { name: 'run_sql', arguments: { sql: 'SELECT Name FROM Genre' } }),
  modernRequest('three', 'resources/read', { uri: 'tabletalk://table/Track' }),
  { jsonrpc: '2.0', id: 4, method: 'tools/list' },
  { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 2, reason: 'x' } },
];

function nested(r, depth) {
  const kind = r.int(3);
  if (kind === 0) return '['.repeat(depth) + ']'.repeat(depth);
  if (kind === 1) return '{"a":'.repeat(depth) + '1' + '}'.repeat(depth);
  let s = '';
  for (let i = 0; i < depth; i++) s += i % 2 ? '{"k":' : '[';
  let t = '0';
  for (let i = depth - 1; i >= 0; i--) t += i % 2 ? '}' : ']';
  return s + t;
}

const HUGE = ['1e400', '-1e400', '123456789012345678901234567890', '9223372036854775808', '-9223372036854775809',
  '9223372036854775807', '-9223372036854775808', '1e308', '1e-400', '0.000001', '1.5', '1e3', '-0'];

/* Each generator returns [bytes, expectation or undefined (predict it)]. */
/* predictableOnly: only kinds whose reply predict() works out itself */
function makeLine(r, n, { predictableOnly = false } = {}) {
  const pick = predictableOnly ? r.int(74) : r.int(100);
  const uid = `g-${n}`;
  const J = (v) => Buffer.from(JSON.stringify(v));
  if (pick < 22) { // random bytes, invalid UTF-8 and NUL included, no newline
    const b = r.bytes(1 + r.int(200));
    for (let i = 0; i < b.length; i++) if (b[i] === 10) b[i] = 0;
    return [b];
  }
  if (pick < 40) return [J(randValue(r))];
  if (pick < 52) { // a truncated real request
    const t = JSON.stringify(r.pick(REAL_REQUESTS));
    return [Buffer.from(t.slice(0, 1 + r.int(t.length - 1)))];
  }
  if (pick < 56) return [Buffer.from(nested(r, r.pick([10, 100, 1000, 2048, 2049, 3000, 5000, 20000])))];
  if (pick < 62) { // huge numbers in the id, in the params, alone
    const h = r.pick(HUGE);
    const where = r.int(3);
    if (where === 0) return [Buffer.from(h)];
    if (where === 1) {
      /* an id must be a string or an integer: 1e3 and 1.5 are reals to the parser */
      const want = parserLimit(h) ? err(-32700) : /^-?\d+$/.test(h) ? err(-32601, Number(h)) : err(-32600);
      return [Buffer.from(`{"jsonrpc":"2.0","id":${h},"method":"x-nosuch/${n}"}`), want];
    }
    return [Buffer.from(`{"jsonrpc":"2.0","id":"${uid}","method":"x-nosuch","params":{"n":${h}}}`)];
  }
  if (pick < 74) { // a request with one member of the wrong type
    const base = { jsonrpc: '2.0', id: uid, method: 'tools/list', params: {} };
    const field = r.pick(['jsonrpc', 'id', 'method', 'params']);
    const bad = {
      jsonrpc: [undefined, '1.0', 2.0, null, '2.0 ', {}, ['2.0']],
      id: [null, 1.5, true, {}, [1], { id: 1 }],
      method: [undefined, 123, '', null, ['tools/list'], {}],
      params: [[], 'x', 5, null, true, [{}]],
    }[field];
    const v = r.pick(bad);
    const m = { ...base };
    if (v === undefined) delete m[field]; else m[field] = v;
    return [J(m)];
  }
  if (pick < 84) { // valid requests the server must answer with a result or an error
    const cases = [
      [{ jsonrpc: '2.0', id: uid, method: 'tools/explode' }, err(-32601, uid)],
      [{ jsonrpc: '2.0', id: uid, method: 'tools/call', params: {} }, err(-32602, uid)],
      [{ jsonrpc: '2.0', id: uid, method: 'tools/call', params: { name: 'drop_database' } }, err(-32602, uid)],
      [{ jsonrpc: '2.0', id: uid, method: 'tools/call', params: { name: 'run_sql', arguments: 'SELECT 1' } }, err(-32602, uid)],
      [{ jsonrpc: '2.0', id: uid, method: 'resources/read', params: { uri: 'tabletalk://table/Nope' } }, err(-32002, uid)],
      [{ jsonrpc: '2.0', id: uid, method: 'resources/read', params: {} }, err(-32602, uid)],
      [{ jsonrpc: '2.0', id: uid, method: 'prompts/get', params: { name: 'analyze_table' } }, err(-32602, uid)],
      [{ jsonrpc: '2.0', id: uid, method: 'server/discover' }, err(-32602, uid)],
      [modernRequest(uid, 'resources/read', { uri: 'tabletalk://nothing' }), err(-32602, uid)],
      [modernRequest(uid, 'tools/explode'), err(-32601, uid)],
      [modernRequest(uid, 'ping'), err(-32601, uid)],
      [{ jsonrpc: '2.0', id: uid, method: 'tools/list', params: { _meta: { [META_VERSION]: '2099-01-01', [META_CAPS]: {} } } }, err(-32022, uid)],
      [{ jsonrpc: '2.0', id: uid, method: 'tools/list', params: { _meta: { [META_VERSION]: MODERN } } }, err(-32602, uid)],
      [{ jsonrpc: '2.0', id: uid, method: 'tools/list', params: { _meta: 'nope' } }, err(-32602, uid)],
      [{ jsonrpc: '2.0', id: uid, method: 'tools/list', params: { cursor: 'not-ours' } }, err(-32602, uid)],
      [{ jsonrpc: '2.0', id: uid, method: 'ping' }, { result: true, id: uid }],
      [{ jsonrpc: '2.0', id: uid, method: 'tools/call', params: { name: 'run_sql', arguments: { sql: 42 } } }, { result: true, id: uid }],
      [modernRequest(uid, 'tools/list'), { result: true, id: uid }],
    ];
    const [m, want] = r.pick(cases);
    return [J(m), want];
  }
  if (pick < 90) { // what needs no reply
    const quiet = [
      { jsonrpc: '2.0', method: `notifications/x${n}` },
      { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: `never-${n}` } },
      { jsonrpc: '2.0', method: 'notifications/initialized' },
      { jsonrpc: '2.0', id: n, result: {} },
      { jsonrpc: '2.0', id: `r-${n}`, error: { code: 1, message: 'x' } },
    ];
    const ws = r.pick(['', ' ', '\t', '\r', ' \t \r']);
    return r() < 0.2 ? [Buffer.from(ws), NONE] : [J(r.pick(quiet)), NONE];
  }
  if (pick < 93) { // NUL and lone surrogates by escape: valid JSON text, refused by the parser
    return [Buffer.from(r.pick([`{"jsonrpc":"2.0","id":"${uid}","method":"a\\u0000b"}`, `"\\ud800"`, `{"jsonrpc":"2.0","id":"${uid}","method":"ping","params":{"x":"\\udc00\\ud800"}}`])), err(-32700)];
  }
  if (pick < 96) { // a leading BOM, whitespace around a valid request
    const m = JSON.stringify({ jsonrpc: '2.0', id: uid, method: 'ping' });
    return r() < 0.5 ? [Buffer.from(`\ufeff${m}`), err(-32700)] : [Buffer.from(` \t${m} \t\r`), { result: true, id: uid }];
  }
  if (pick < 97 && n % 3 === 0) { // over the limit (a few of them)
    return [Buffer.from(JSON.stringify({ jsonrpc: '2.0', id: uid, method: 'ping', params: { pad: 'x'.repeat(MAX + r.int(100000)) } })), err(-32600)];
  }
  return [J(randValue(r))];
}

const keyOf = (x) => `${JSON.stringify(x.id ?? null)} ${x.result ? 'result' : x.code}`;
function tally(list) {
  const m = new Map();
  for (const x of list) m.set(keyOf(x), (m.get(keyOf(x)) ?? 0) + 1);
  return m;
}
function diffTally(want, got) {
  const out = [];
  for (const k of new Set([...want.keys(), ...got.keys()])) {
    const a = want.get(k) ?? 0, b = got.get(k) ?? 0;
    if (a !== b) out.push(`${k}: expected ${a}, got ${b}`);
  }
  return out;
}

/* ---- stdio ----------------------------------------------------------------------- */

describe('stdio', { timeout: FAIL_AFTER }, () => {
  test(`10,000 lines of garbage (seed ${SEED}): each gets exactly the right error, the server stays up`, async () => {
    const sc = scratch();
    const raw = new RawStdio(serveArgs(sc, { extra: ['--max-message', String(MAX)] }), { cwd: sc.dir });
    const r = rng(SEED);
    const lines = [];
    const expected = [];
    const sample = new Map(); // an example line per expectation, for messages
    for (let n = 0; n < 10000; n++) {
      const [bytes, given] = makeLine(r, n);
      const want = given ?? predict(bytes);
      lines.push(bytes);
      if (!want.none) {
        expected.push(want);
        if (!sample.has(keyOf(want))) sample.set(keyOf(want), bytes.subarray(0, 160).toString('latin1'));
      }
    }
    /* in chunks that split lines anywhere, as a pipe may */
    const all = Buffer.concat(lines.flatMap((l) => [l, Buffer.from('\n')]));
    for (let off = 0; off < all.length;) {
      const len = 1 + r.int(200000);
      await raw.write(all.subarray(off, off + len));
      off += len;
    }
    /* the server is still up after the garbage; replies to requests that run
     * side by side may come in any order (JSON-RPC allows it), so the tally
     * is taken once the server has exited and every reply is in */
    await raw.request({ jsonrpc: '2.0', id: 'sentinel', method: 'ping' });
    assert.equal(raw.exited, null, `the server is still running (stderr: ${raw.stderr.slice(-1000)})`);

    /* and afterwards it works: the handshake, then SQL */
    const init = await raw.request({ jsonrpc: '2.0', id: 'init', method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'after', version: '1' } } });
    assert.equal(init.result?.protocolVersion, '2025-11-25', JSON.stringify(init));
    await raw.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
    const q = await raw.request({ jsonrpc: '2.0', id: 'sql', method: 'tools/call', params: { name: 'run_sql', arguments: { sql: 'SELECT count(*) AS n FROM Track' } } });
    assert.deepEqual(q.result?.structuredContent?.rows, [[sqliteCount(sc.db, 'Track')]], JSON.stringify(q));
    const modern = await raw.request(modernRequest('sql2', 'tools/call', { name: 'run_sql', arguments: { sql: 'SELECT count(*) AS n FROM Genre' } }));
    assert.deepEqual(modern.result?.structuredContent?.rows, [[sqliteCount(sc.db, 'Genre')]]);
    const exit = await raw.close();
    assert.equal(exit.code, 0, 'exits 0 when its input ends');
    const ours = new Set(['sentinel', 'init', 'sql', 'sql2']);
    const got = raw.messages.filter((m) => !(m && ours.has(m.id)));
    const unparsable = raw.lines.filter((l, i) => raw.messages[i] === null);
    assert.deepEqual(unparsable.slice(0, 3), [], 'every stdout line is one JSON message');
    const replies = got.map((m) => (m.error ? { id: m.id, code: m.error.code } : { id: m.id, result: true }));
    const d = diffTally(tally(expected), tally(replies));
    assert.deepEqual(d, [], `replies differ from what each line calls for (seed ${SEED}):\n${d.slice(0, 30).map((x) => `${x}  e.g. ${JSON.stringify(sample.get(x.split(':')[0]) ?? '')}`).join('\n')}`);
    assert.ok(got.every((m) => m.jsonrpc === '2.0' && !('method' in m)), 'only responses, no requests or notifications from the server');
    assert.ok(got.filter((m) => m.error).every((m) => typeof m.error.message === 'string' && m.error.message.length > 5), 'every error says what is wrong');
    assert.equal(raw.messages.length, expected.length + 4, 'one reply per line that calls for one: the garbage, the ping, then three requests');
    assert.ok(sc.unchanged());
  });

  test('the protocol errors one by one', async () => {
    const sc = scratch();
    const raw = new RawStdio(serveArgs(sc, { extra: ['--max-message', String(MAX)] }), { cwd: sc.dir });
    const line = async (text, what) => {
      const from = raw.messages.length;
      await raw.write(text.endsWith('\n') ? text : `${text}\n`);
      return raw.waitFor(() => true, { from, what });
    };
    let m = await line('{"jsonrpc":"2.0","id":1,"method":"ping"', 'a parse error');
    assert.deepEqual([m.id, m.error.code], [null, -32700]);
    assert.match(m.error.message, /^Parse error/);
    /* a raw NUL ends the text for jansson: "8\0" must not read as 8 */
    for (const text of ['8\0', '{"jsonrpc":"2.0","id":1,"method":"ping"}\0', '{"jsonrpc":"2.0","id":1,"method":"pi\0ng"}']) {
      m = await line(text, `a parse error for ${JSON.stringify(text)}`);
      assert.deepEqual([m.id, m.error.code], [null, -32700], JSON.stringify(text));
      assert.match(m.error.message, /NUL byte/);
    }
    m = await line('{"jsonrpc":"2.0","id":1}', 'an invalid request');
    assert.deepEqual([m.id, m.error.code], [1, -32600]);
    m = await line('{"jsonrpc":"1.0","id":"a","method":"ping"}', 'a wrong jsonrpc');
    assert.deepEqual([m.id, m.error.code], ['a', -32600]);
    m = await line('{"jsonrpc":"2.0","id":null,"method":"ping"}', 'a null id');
    assert.deepEqual([m.id, m.error.code], [null, -32600]);
    m = await line('[]', 'an empty batch');
    assert.deepEqual([m.id, m.error.code], [null, -32600]);
    m = await line('{"jsonrpc":"2.0","id":2,"method":"no/such/method"}', 'an unknown method');
    assert.deepEqual([m.id, m.error.code], [2, -32601]);
    m = await line(JSON.stringify(modernRequest(3, 'tools/call', {})), 'tools/call without name');
    assert.deepEqual([m.id, m.error.code], [3, -32602]);
    m = await line(JSON.stringify(modernRequest(4, 'tools/call', { name: 'format_disk', arguments: {} })), 'an unknown tool');
    assert.deepEqual([m.id, m.error.code], [4, -32602]);
    assert.match(m.error.message, /format_disk/);
    m = await line(JSON.stringify(modernRequest(5, 'resources/read', { uri: 'tabletalk://table/Nope' })), 'a bad uri, 2026-07-28');
    assert.deepEqual([m.id, m.error.code, m.error.data?.uri], [5, -32602, 'tabletalk://table/Nope']);
    m = await line(JSON.stringify({ jsonrpc: '2.0', id: 6, method: 'resources/read', params: { uri: 'tabletalk://table/Nope' } }), 'a bad uri, 2025');
    assert.deepEqual([m.id, m.error.code, m.error.data?.uri], [6, -32002, 'tabletalk://table/Nope']);
    m = await line(JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tools/list', params: { _meta: { [META_VERSION]: '1999-01-01', [META_CAPS]: {} } } }), 'an unsupported version');
    assert.deepEqual([m.id, m.error.code], [7, -32022]);
    assert.equal(m.error.data.requested, '1999-01-01');
    assert.ok(m.error.data.supported.includes(MODERN) && m.error.data.supported.includes('2025-11-25'), JSON.stringify(m.error.data));
    m = await line(JSON.stringify({ jsonrpc: '2.0', id: 8, method: 'tools/list', params: { _meta: { [META_VERSION]: MODERN } } }), 'no clientCapabilities');
    assert.deepEqual([m.id, m.error.code], [8, -32602]);
    assert.match(m.error.message, /clientCapabilities/);
    m = await line(JSON.stringify({ jsonrpc: '2.0', id: 9, method: 'ping', params: { pad: 'x'.repeat(MAX) } }), 'a message over the limit');
    assert.deepEqual([m.id, m.error.code], [null, -32600]);
    assert.match(m.error.message, new RegExp(`limit is ${MAX} bytes`));
    m = await line(JSON.stringify(modernRequest(10, 'tools/call', { name: 'run_sql', arguments: { sql: 'SELECT 1', extra: 1 } })), 'an unknown argument');
    assert.equal(m.result?.isError, true, 'a tool\'s bad arguments are a tool error the model can read');
    /* exactly the limit is served, one byte more is not */
    const sized = (id, bytes) => {
      const shell = JSON.stringify({ jsonrpc: '2.0', id, method: 'ping', params: { pad: '' } });
      return JSON.stringify({ jsonrpc: '2.0', id, method: 'ping', params: { pad: 'x'.repeat(bytes - shell.length) } });
    };
    assert.equal(sized(11, MAX).length, MAX);
    m = await line(sized(11, MAX), 'a message of exactly the limit');
    assert.deepEqual(m, { jsonrpc: '2.0', id: 11, result: {} });
    m = await line(sized(13, MAX + 1), 'a message one byte over the limit');
    assert.deepEqual([m.id, m.error?.code], [null, -32600]);
    /* a last line without a newline still counts */
    await raw.write('{"jsonrpc":"2.0","id":12,"method":"ping"}');
    raw.child.stdin.end();
    const last = await raw.waitFor((x) => x.id === 12, { what: 'the reply to a final line without newline' });
    assert.deepEqual(last.result, {});
    assert.equal((await raw.close()).code, 0);
    assert.ok(sc.unchanged());
  });
});

function sqliteCount(db, table) {
  return Number(execFileSync('sqlite3', ['-readonly', db, `SELECT count(*) FROM ${table}`]).toString().trim());
}

/* ---- HTTP -------------------------------------------------------------------------- */

/* node:http, to send what fetch will not (a Host header of our choosing). */
function rawHttp(url, { method = 'POST', headers = {}, body = '' } = {}) {
  const u = new URL(url);
  return new Promise((resolve, reject) => {
    const req = http.request({ host: u.hostname, port: u.port, path: u.pathname, method, headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', ...headers } }, (res) => {
      let text = '';
      res.on('data', (d) => { text += d; });
      res.on('end', () => { let json = null; try { json = JSON.parse(text); } catch { /* not JSON */ } resolve({ status: res.statusCode, headers: res.headers, text, json }); });
    });
    req.on('error', reject);
    req.end(body);
  });
}

describe('HTTP', { timeout: FAIL_AFTER }, () => {
  let sc, srv;
  before(async () => {
    sc = scratch();
    srv = await startHttp(serveArgs(sc, { extra: ['--max-message', '4096'] }), { cwd: sc.dir });
  });
  after(async () => {
    if (srv) {
      assert.ok(srv.alive(), `the server stayed up (stderr: ${srv.stderr.slice(-1000)})`);
      const r = await srv.close();
      assert.equal(r.code, 0);
    }
    assert.ok(sc.unchanged());
  });

  const list = (id) => modernRequest(id, 'tools/list');

  test('the protocol errors with their status codes', async () => {
    let r = await post(srv.url, '{"jsonrpc":"2.0","id":1,"method":', { headers: modernHeaders('tools/list') });
    assert.deepEqual([r.status, r.json?.error?.code], [400, -32700], `parse error: ${r.text}`);
    r = await post(srv.url, { jsonrpc: '2.0', id: 2 });
    assert.deepEqual([r.status, r.json?.error?.code], [400, -32600], 'invalid request');
    r = await postModern(srv.url, 3, 'tools/explode');
    assert.deepEqual([r.status, r.json?.error?.code, r.json?.id], [404, -32601, 3], `unknown modern method: ${r.text}`);
    r = await post(srv.url, list(4), { headers: modernHeaders('resources/list') });
    assert.deepEqual([r.status, r.json?.error?.code], [400, -32020], `Mcp-Method mismatch: ${r.text}`);
    r = await post(srv.url, list(5), { headers: { 'Mcp-Method': 'tools/list' } });
    assert.deepEqual([r.status, r.json?.error?.code], [400, -32020], 'MCP-Protocol-Version missing');
    r = await post(srv.url, modernRequest(6, 'tools/call', { name: 'run_sql', arguments: { sql: 'SELECT 1' } }), { headers: modernHeaders('tools/call', 'describe_schema') });
    assert.deepEqual([r.status, r.json?.error?.code], [400, -32020], 'Mcp-Name mismatch');
    r = await post(srv.url, modernRequest(7, 'tools/call', { name: 'run_sql', arguments: { sql: 'SELECT 1' } }), { headers: { ...modernHeaders('tools/call'), 'Mcp-Name': `=?base64?${Buffer.from('run_sql').toString('base64')}?=` } });
    assert.deepEqual([r.status, r.json?.result?.structuredContent?.rows], [200, [[1]]], `a base64 Mcp-Name is decoded: ${r.text}`);
    r = await post(srv.url, { jsonrpc: '2.0', id: 8, method: 'tools/list', params: { _meta: { [META_VERSION]: '1999-01-01', [META_CAPS]: {} } } }, { headers: { 'MCP-Protocol-Version': '1999-01-01', 'Mcp-Method': 'tools/list' } });
    assert.deepEqual([r.status, r.json?.error?.code, r.json?.error?.data?.requested], [400, -32022, '1999-01-01'], r.text);
    r = await post(srv.url, { jsonrpc: '2.0', id: 9, method: 'tools/list', params: { _meta: { [META_VERSION]: MODERN } } }, { headers: modernHeaders('tools/list') });
    assert.deepEqual([r.status, r.json?.error?.code], [400, -32602], 'missing clientCapabilities');
    r = await postModern(srv.url, 10, 'tools/call', {});
    assert.equal(r.json?.error?.code, -32602, 'tools/call without name');
    r = await postModern(srv.url, 11, 'resources/read', { uri: 'tabletalk://table/Nope' });
    assert.equal(r.json?.error?.code, -32602, 'resources/read of a bad uri');
    r = await post(srv.url, { jsonrpc: '2.0', method: 'notifications/whatever' });
    assert.deepEqual([r.status, r.text], [202, ''], 'a notification: 202, no body');
    r = await post(srv.url, [list(12)], { headers: modernHeaders('tools/list') });
    assert.deepEqual([r.status, r.json?.error?.code], [400, -32600], 'no batches in 2026-07-28');
    /* the HTTP field value is what is between the optional whitespace (RFC 9110 5.5) */
    /* (node:http sends the value as given; fetch would trim it itself) */
    r = await rawHttp(srv.url, { headers: { ...modernHeaders('tools/call'), 'Mcp-Name': '\t run_sql \t', 'Mcp-Method': 'tools/call  ', 'MCP-Protocol-Version': ` ${MODERN}\t` }, body: JSON.stringify(modernRequest(13, 'tools/call', { name: 'run_sql', arguments: { sql: 'SELECT 1' } })) });
    assert.deepEqual([r.status, r.json?.result?.structuredContent?.rows], [200, [[1]]], `whitespace around header values: ${r.text}`);
    r = await rawHttp(srv.url, { headers: { ...modernHeaders('tools/call'), 'Mcp-Name': 'run _sql' }, body: JSON.stringify(modernRequest(13, 'tools/call', { name: 'run_sql', arguments: { sql: 'SELECT 1' } })) });
    assert.deepEqual([r.status, r.json?.error?.code], [400, -32020], `whitespace inside a value is kept: ${r.text}`);
    /* the same for ask_database, which answers as an event stream: the
     * headers are checked before the stream starts, and read by its worker */
    const ask = JSON.stringify(modernRequest(18, 'tools/call', { name: 'ask_database', arguments: { question: 'How many genres?' } }));
    r = await rawHttp(srv.url, { headers: { ...modernHeaders('tools/call'), 'Mcp-Name': 'ask_data base' }, body: ask });
    assert.deepEqual([r.status, r.json?.error?.code], [400, -32020], `a mismatch before the stream: ${r.text}`);
    r = await rawHttp(srv.url, { headers: { ...modernHeaders('tools/call'), 'Mcp-Name': ' ask_database\t' }, body: ask });
    assert.equal(r.status, 200, r.text);
    assert.match(r.headers['content-type'] ?? '', /^text\/event-stream/);
    const last = JSON.parse(r.text.split('\n').filter((l) => l.startsWith('data:')).at(-1).slice(5));
    assert.deepEqual([last.id, last.result?.resultType], [18, 'complete'], `a trimmed Mcp-Name on the stream: ${r.text}`);
    /* the 2026-07-28 header without the envelope: its required _meta fields are missing */
    r = await post(srv.url, { jsonrpc: '2.0', id: 14, method: 'tools/list', params: {} }, { headers: modernHeaders('tools/list') });
    assert.deepEqual([r.status, r.json?.error?.code, r.json?.id], [400, -32602, 14], `no _meta under the 2026-07-28 header: ${r.text}`);
    r = await post(srv.url, { jsonrpc: '2.0', id: 15, method: 'tools/list', params: { _meta: { [META_CAPS]: {} } } }, { headers: modernHeaders('tools/list') });
    assert.deepEqual([r.status, r.json?.error?.code], [400, -32602], `no protocol version in _meta under the 2026-07-28 header: ${r.text}`);
    /* a header that disagrees with the body is a mismatch, whatever the body names */
    r = await post(srv.url, { jsonrpc: '2.0', id: 16, method: 'tools/list', params: { _meta: { [META_VERSION]: '1999-01-01', [META_CAPS]: {} } } }, { headers: modernHeaders('tools/list') });
    assert.deepEqual([r.status, r.json?.error?.code], [400, -32020], `header 2026-07-28, body 1999-01-01: ${r.text}`);
    /* initialize does not exist in 2026-07-28, and opens no session there */
    r = await postModern(srv.url, 17, 'initialize', { protocolVersion: MODERN, capabilities: {}, clientInfo: { name: 't', version: '1' } });
    assert.deepEqual([r.status, r.json?.error?.code, r.headers.get('mcp-session-id')], [404, -32601, null], `initialize under 2026-07-28: ${r.text}`);
  });

  test('the guards: Origin, Host, method, session, size, Content-Type', async () => {
    const ok = await postModern(srv.url, 1, 'tools/list');
    assert.equal(ok.status, 200, 'a plain request passes');
    let r = await postModern(srv.url, 2, 'tools/list', {}, { headers: { Origin: 'http://evil.example' } });
    assert.equal(r.status, 403, 'a foreign Origin');
    assert.equal(r.json?.result, undefined);
    r = await postModern(srv.url, 3, 'tools/list', {}, { headers: { Origin: 'http://localhost:5173' } });
    assert.equal(r.status, 200, 'a loopback Origin may');
    assert.equal(r.headers.get('access-control-allow-origin'), 'http://localhost:5173');
    r = await rawHttp(srv.url, { headers: { Host: 'evil.example', ...modernHeaders('tools/list') }, body: JSON.stringify(list(4)) });
    assert.equal(r.status, 403, `a Host that is not this machine (DNS rebinding): ${r.text}`);
    r = await rawHttp(srv.url, { headers: { Host: `localhost:${new URL(srv.url).port}`, ...modernHeaders('tools/list') }, body: JSON.stringify(list(5)) });
    assert.equal(r.status, 200, 'Host: localhost is fine');
    for (const host of ['127.0.0.1.evil.example', `localhost.evil.example:${new URL(srv.url).port}`, '[::2]']) {
      r = await rawHttp(srv.url, { headers: { Host: host, ...modernHeaders('tools/list') }, body: JSON.stringify(list(5)) });
      assert.equal(r.status, 403, `Host: ${host}`);
    }
    for (const origin of ['http://localhost.evil.example', 'http://127.0.0.1@evil.example', 'null', 'file://', 'https://evil.example:443']) {
      r = await postModern(srv.url, 5, 'tools/list', {}, { headers: { Origin: origin } });
      assert.equal(r.status, 403, `Origin: ${origin}`);
    }
    r = await post(srv.url, undefined, { method: 'GET' });
    assert.equal(r.status, 405, 'GET: no stream here');
    assert.match(r.headers.get('allow') ?? '', /POST/);
    r = await post(srv.url, { jsonrpc: '2.0', id: 6, method: 'tools/list' }, { headers: { 'Mcp-Session-Id': 'deadbeefdeadbeefdeadbeefdeadbeef' } });
    assert.equal(r.status, 404, 'an unknown Mcp-Session-Id');
    r = await post(srv.url, { jsonrpc: '2.0', id: 7, method: 'ping', params: { pad: 'x'.repeat(5000) } });
    assert.equal(r.status, 413, 'a body over --max-message');
    assert.equal(r.json?.error?.code, -32600);
    r = await post(srv.url, JSON.stringify(list(8)), { contentType: 'text/plain', headers: modernHeaders('tools/list') });
    assert.equal(r.status, 415, 'Content-Type text/plain');
    r = await post(srv.url, JSON.stringify(list(9)), { contentType: null, headers: modernHeaders('tools/list') });
    assert.equal(r.status, 415, 'no Content-Type');
    r = await rawHttp(srv.url.replace(/\/mcp$/, '/other'), { body: '{}' });
    assert.equal(r.status, 404, 'only /mcp is served');
    r = await post(srv.url, list(13), { headers: { ...modernHeaders('tools/list'), Accept: 'text/html' } });
    assert.equal(r.status, 406, 'an Accept without JSON or event streams');
    r = await rawHttp(srv.url, { method: 'OPTIONS', headers: { Origin: 'http://127.0.0.1:3000', 'Access-Control-Request-Method': 'POST' } });
    assert.equal(r.status, 204, 'a CORS preflight from a loopback page');
    assert.match(r.headers['access-control-allow-headers'] ?? '', /Mcp-Session-Id/);
    r = await rawHttp(srv.url, { method: 'OPTIONS', headers: { Origin: 'http://evil.example', 'Access-Control-Request-Method': 'POST' } });
    assert.equal(r.status, 403, 'no preflight for a foreign page');
    r = await post(srv.url, { jsonrpc: '2.0', id: 14, method: 'tools/list' }, { headers: { 'MCP-Protocol-Version': '1999-01-01' } });
    assert.deepEqual([r.status, r.json?.error?.code, r.json?.error?.data?.requested, r.json?.error?.data?.supported?.includes('2025-11-25')],
      [400, -32022, '1999-01-01', true], `an unknown MCP-Protocol-Version header is an unsupported version, with the supported ones: ${r.text}`);

    /* a session: initialize gives one, DELETE ends it, then it is unknown */
    const init = await post(srv.url, { jsonrpc: '2.0', id: 10, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 't', version: '1' } } });
    const sid = init.headers.get('mcp-session-id');
    assert.match(sid ?? '', /^[\x21-\x7e]{16,}$/, 'a session id of visible ASCII');
    r = await post(srv.url, { jsonrpc: '2.0', id: 11, method: 'tools/list' }, { headers: { 'Mcp-Session-Id': sid, 'MCP-Protocol-Version': '2025-11-25' } });
    assert.equal(r.status, 200);
    r = await post(srv.url, undefined, { method: 'DELETE', headers: { 'Mcp-Session-Id': sid } });
    assert.equal(r.status, 200, 'DELETE ends the session');
    r = await post(srv.url, { jsonrpc: '2.0', id: 12, method: 'tools/list' }, { headers: { 'Mcp-Session-Id': sid } });
    assert.equal(r.status, 404, 'the ended session is unknown');
  });

  test(`200 random bodies (seed ${SEED}): the status and error each calls for; never a 5xx`, async () => {
    const r = rng(SEED ^ 0x5eed);
    const failures = [];
    for (let n = 0; n < 200; n++) {
      const [bytes, given] = makeLine(r, n, { predictableOnly: true });
      const want = given ?? predict(bytes, { http: true });
      const res = await post(srv.url, bytes);
      const st = res.status;
      const sample = bytes.subarray(0, 120).toString('latin1');
      if (st >= 500) { failures.push(`${st} for ${JSON.stringify(sample)}`); continue; }
      if (bytes.length > 4096) {
        if (st !== 413) failures.push(`expected 413 for ${bytes.length} bytes, got ${st}`);
      } else if (want.none) {
        if (st !== 202 || res.text !== '') failures.push(`expected 202 without body, got ${st} ${res.text.slice(0, 100)} for ${JSON.stringify(sample)}`);
      } else if (want.result) {
        if (st !== 200 || !res.json?.result) failures.push(`expected a result, got ${st} ${res.text.slice(0, 100)} for ${JSON.stringify(sample)}`);
      } else {
        const code = res.json?.error?.code;
        /* a legacy request's errors come with 200, malformed messages with 400 */
        const okStatus = want.code === -32700 || want.code === -32600 ? st === 400 : st === 200;
        if (code !== want.code || !okStatus) failures.push(`expected ${want.code}, got ${st} ${res.text.slice(0, 120)} for ${JSON.stringify(sample)}`);
      }
    }
    assert.deepEqual(failures, [], `seed ${SEED}:\n${failures.join('\n')}`);
    const after = await postModern(srv.url, 'after', 'tools/call', { name: 'run_sql', arguments: { sql: 'SELECT count(*) FROM Album' } });
    assert.deepEqual(after.json?.result?.structuredContent?.rows, [[sqliteCount(sc.db, 'Album')]]);
  });

  test('20 concurrent run_sql requests all come back right', async () => {
    const genres = Array.from({ length: 20 }, (_, i) => i + 1);
    const truth = new Map(JSON.parse(execFileSync('sqlite3', ['-readonly', '-json', sc.db, 'SELECT GenreId AS g, count(*) AS n FROM Track GROUP BY GenreId']).toString()).map((o) => [o.g, o.n]));
    const results = await Promise.all(genres.map((g, i) => (i % 2
      ? postModern(srv.url, `c${g}`, 'tools/call', { name: 'run_sql', arguments: { sql: `SELECT count(*) FROM Track WHERE GenreId = ${g}` } })
      : post(srv.url, { jsonrpc: '2.0', id: `c${g}`, method: 'tools/call', params: { name: 'run_sql', arguments: { sql: `SELECT count(*) FROM Track WHERE GenreId = ${g}` } } },
        { headers: { 'MCP-Protocol-Version': '2025-11-25' } }))));
    for (const [i, res] of results.entries()) {
      const g = genres[i];
      assert.equal(res.status, 200, res.text);
      assert.equal(res.json.id, `c${g}`);
      assert.deepEqual(res.json.result.structuredContent.rows, [[truth.get(g) ?? 0]], `genre ${g}`);
    }
  });

  test('a token: 401 without it or with a wrong one, 200 with it; --allow-origin', async () => {
    const tsc = scratch();
    const tsrv = await startHttp(serveArgs(tsc, { extra: ['--allow-origin', 'https://app.example'] }), { cwd: tsc.dir, env: { TABLETALK_MCP_TOKEN: 's3cret-token-7f2k' } });
    try {
      let r = await postModern(tsrv.url, 1, 'tools/list');
      assert.equal(r.status, 401, 'no Authorization');
      assert.match(r.headers.get('www-authenticate') ?? '', /^Bearer/);
      assert.equal(r.json?.result, undefined);
      r = await postModern(tsrv.url, 2, 'tools/list', {}, { headers: { Authorization: 'Bearer wrong' } });
      assert.equal(r.status, 401, 'a wrong token');
      r = await postModern(tsrv.url, 3, 'tools/list', {}, { headers: { Authorization: 'Bearer s3cret-token-7f2k-and-more' } });
      assert.equal(r.status, 401, 'a longer token');
      r = await postModern(tsrv.url, 4, 'tools/list', {}, { headers: { Authorization: 'Basic czNjcmV0LXRva2Vu' } });
      assert.equal(r.status, 401, 'another scheme');
      r = await postModern(tsrv.url, 5, 'tools/call', { name: 'run_sql', arguments: { sql: 'SELECT 1' } }, { headers: { Authorization: 'Bearer s3cret-token-7f2k' } });
      assert.equal(r.status, 200, r.text);
      assert.deepEqual(r.json.result.structuredContent.rows, [[1]]);
      const auth = { Authorization: 'Bearer s3cret-token-7f2k' };
      r = await postModern(tsrv.url, 6, 'tools/list', {}, { headers: { ...auth, Origin: 'https://app.example' } });
      assert.equal(r.status, 200, 'an origin allowed with --allow-origin');
      assert.equal(r.headers.get('access-control-allow-origin'), 'https://app.example');
      r = await postModern(tsrv.url, 7, 'tools/list', {}, { headers: { ...auth, Origin: 'https://app.example.evil' } });
      assert.equal(r.status, 403, 'and only that one');
    } finally {
      await tsrv.close();
    }
    assert.ok(tsc.unchanged());
  });
});

