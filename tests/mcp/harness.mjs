// Helpers for the MCP server suites: scratch copies of chinook (with a
// sha256 to prove they stay byte-identical), the real `tabletalk serve-mcp`
// over stdio and Streamable HTTP, the official MCP TypeScript SDK client
// (2026-07-28 pinned, or the 2025 handshake), a raw JSON-RPC line client for
// stdio, a raw fetch helper for HTTP, the scripted model server and a seeded
// random generator. TT_BIN, TT_CHINOOK, TT_SHARED_DIR and TT_SLOW_BUILD come
// from CTest; run the suites with tests/mcp/node_modules/.bin/node.
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { startModelServer } from '../fixtures/model_server.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
export const BIN = process.env.TT_BIN ?? path.resolve(here, '../../build/tabletalk');
export const CHINOOK = process.env.TT_CHINOOK ?? path.resolve(here, '../../data/chinook.sqlite');
export const SHARED = process.env.TT_SHARED_DIR ?? path.resolve(here, '../../../shared');
export const SLOW = process.env.TT_SLOW_BUILD === '1';
/* Sanitizer builds run several times slower: every time limit scales. */
export const SCALE = SLOW ? 5 : 1;
export const ms = (n) => n * SCALE;
/* A hang becomes a failure with a name rather than CTest's timeout. */
export const SUITE_TIMEOUT = ms(120000);
export const MODERN = '2026-07-28';
export const META_VERSION = 'io.modelcontextprotocol/protocolVersion';
export const META_CAPS = 'io.modelcontextprotocol/clientCapabilities';

/* Temporary folders go when the suite ends (killAll), unless TT_KEEP_TMP=1. */
const temps = [];
export function tempDir(prefix = 'tabletalk-mcp-') {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  temps.push(d);
  return d;
}

/* No installed model, no cache, no token and no .env of the person running
 * the tests. */
const isolated = tempDir('tabletalk-mcp-home-');
export function serverEnv(extra = {}) {
  return {
    ...process.env, NO_COLOR: '1', TABLETALK_BASE_URL: '', TABLETALK_MODEL: '',
    TABLETALK_MODEL_PATH: '', TABLETALK_API_KEY: '', TABLETALK_MCP_TOKEN: '',
    TABLETALK_STATE_DIR: path.join(isolated, 'state'),
    TABLETALK_DATA_DIR: path.join(isolated, 'data'), TABLETALK_CACHE_DIR: path.join(isolated, 'cache'),
    ...extra,
  };
}

export function sha256(file) {
  return createHash('sha256').update(fs.readFileSync(file)).digest('hex');
}

/* A private copy of chinook in its own folder (also the cwd of the server,
 * so no stray .env is read), its state dir and its hash before anything
 * could touch it. sc.unchanged() is true while the file is byte-identical. */
export function scratch() {
  const dir = tempDir();
  const db = path.join(dir, 'chinook.sqlite');
  fs.copyFileSync(CHINOOK, db);
  const sha = sha256(db);
  return {
    dir, db, state: path.join(dir, 'state'), sha,
    unchanged: () => sha256(db) === sha,
    /* every file in the folder besides the database and the state dir */
    strayFiles: () => fs.readdirSync(dir).filter((f) => f !== 'chinook.sqlite' && f !== 'state'),
  };
}

/* serve-mcp arguments for a scratch db (and a model server, if any). */
export function serveArgs(sc, { model, extra = [] } = {}) {
  const a = ['serve-mcp', sc.db, '--state-dir', sc.state];
  if (model) a.push('--base-url', model.url, '--llm-timeout', String(Math.ceil(ms(30))));
  return [...a, ...extra];
}

const models = [];
export async function startModel(script) {
  const m = await startModelServer(script);
  models.push(m);
  return m;
}

/* ---- seeded randomness ------------------------------------------------------ */

/* mulberry32: the same sequence for the same seed on every run. */
export function rng(seed) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  next.int = (n) => Math.floor(next() * n);
  next.pick = (arr) => arr[next.int(arr.length)];
  next.bytes = (n) => Buffer.from(Array.from({ length: n }, () => next.int(256)));
  return next;
}

/* The seed of a suite: TT_SEED to replay a failure, else a fresh one (printed). */
export function suiteSeed(name) {
  const seed = process.env.TT_SEED ? Number(process.env.TT_SEED) : (Date.now() ^ process.pid) >>> 0;
  console.log(`# ${name}: seed ${seed} (rerun with TT_SEED=${seed})`);
  return seed;
}

/* ---- processes ------------------------------------------------------------------- */

/* Every server a suite starts, so that a failed test cannot leave one
 * running (node --test would wait for it forever), and the stderr of
 * every tabletalk process, for sanitizer reports: each suite calls
 * after(killAll). */
const live = new Set();
const stderrs = [];
function track(child) {
  live.add(child);
  child.on('exit', () => live.delete(child));
  return child;
}
/* label: what the process was; text(): its stderr so far */
export function noteStderr(label, text) { stderrs.push({ label, text }); }

const SANITIZER = /ERROR: (AddressSanitizer|LeakSanitizer)|runtime error: |SUMMARY: \w+Sanitizer|ThreadSanitizer/;
/* Ends what the suite started (servers, model servers, temporary
 * folders), then fails if any tabletalk process reported a sanitizer
 * error. Everything is cleaned up first: a throwing hook skips the hooks
 * after it, and a model server left listening would keep node waiting. */
export async function killAll() {
  const waits = [...live].map((c) => new Promise((resolve) => { c.once('exit', resolve); c.kill('SIGKILL'); }));
  await Promise.all(waits);
  await Promise.all(models.splice(0).map((m) => m.close().catch(() => {})));
  if (process.env.TT_KEEP_TMP !== '1') for (const d of temps.splice(0)) fs.rmSync(d, { recursive: true, force: true });
  const reports = stderrs.filter((s) => SANITIZER.test(s.text()));
  if (reports.length) {
    throw new Error(`sanitizer reports from ${reports.length} tabletalk process(es):\n${reports.map((s) => `--- ${s.label}\n${s.text().slice(0, 4000)}`).join('\n')}`);
  }
}

/* ---- the raw stdio client ----------------------------------------------------- */

/* `tabletalk serve-mcp` with pipes of our own: write any bytes, read every
 * stdout line (each must be one JSON message). */
export class RawStdio {
  constructor(args, { env = {}, cwd } = {}) {
    this.child = track(spawn(BIN, args, { cwd, env: serverEnv(env), stdio: ['pipe', 'pipe', 'pipe'] }));
    noteStderr(`tabletalk ${args.join(' ')}`, () => this.stderr);
    this.lines = [];        // every stdout line, raw
    this.messages = [];     // parsed (null for a line that is not JSON)
    this.stderr = '';
    this.exited = null;
    this.waiters = new Set();
    let buf = '';
    this.child.stdout.setEncoding('utf8');
    this.child.stdout.on('data', (d) => {
      buf += d;
      let nl;
      while ((nl = buf.indexOf('\n')) >= 0) {
        const line = buf.slice(0, nl);
        buf = buf.slice(nl + 1);
        this.lines.push(line);
        let msg = null;
        try { msg = JSON.parse(line); } catch { /* reported by the tests */ }
        this.messages.push(msg);
      }
      this.wake();
    });
    this.child.stderr.on('data', (d) => { this.stderr += d; });
    this.child.stdin.on('error', () => { /* the server may be gone */ });
    this.exitPromise = new Promise((resolve) => {
      this.child.on('exit', (code, signal) => { this.exited = { code, signal }; this.wake(); resolve(this.exited); });
    });
  }

  wake() { for (const w of [...this.waiters]) w(); }

  /* an object is sent as one JSON line; a string or Buffer as is */
  write(data) {
    const text = typeof data === 'string' || Buffer.isBuffer(data) ? data : JSON.stringify(data) + '\n';
    return new Promise((resolve) => this.child.stdin.write(text, () => resolve()));
  }

  send(msg) { return this.write(msg); }

  /* Resolves with the first message (from index `from`) that pred accepts. */
  waitFor(pred, { timeout = ms(10000), from = 0, what = 'a message' } = {}) {
    return new Promise((resolve, reject) => {
      let i = from;
      const check = () => {
        for (; i < this.messages.length; i++) {
          if (this.messages[i] && pred(this.messages[i])) { done(); resolve(this.messages[i]); return; }
        }
        if (this.exited) { done(); reject(new Error(`server exited (${JSON.stringify(this.exited)}) while waiting for ${what}; stderr: ${this.stderr.slice(-2000)}`)); }
      };
      const timer = setTimeout(() => { done(); reject(new Error(`timed out after ${timeout} ms waiting for ${what}; last lines: ${this.lines.slice(-3).join('\n').slice(0, 2000)}`)); }, timeout);
      const done = () => { clearTimeout(timer); this.waiters.delete(check); };
      this.waiters.add(check);
      check();
    });
  }

  /* Sends a request and waits for the response with its id. */
  async request(msg, opts = {}) {
    await this.send(msg);
    return this.waitFor((m) => 'id' in m && !('method' in m) && sameId(m.id, msg.id), { what: `the response to id ${JSON.stringify(msg.id)}`, ...opts });
  }

  responsesTo(id) {
    return this.messages.filter((m) => m && !('method' in m) && sameId(m.id, id));
  }

  /* Closes stdin and waits for the process to end (SIGKILL after a while). */
  async close({ timeout = ms(10000) } = {}) {
    if (!this.exited) this.child.stdin.end();
    const timer = setTimeout(() => this.child.kill('SIGKILL'), timeout);
    const r = await this.exitPromise;
    clearTimeout(timer);
    return r;
  }
}

const sameId = (a, b) => a === b;

/* ---- the HTTP server ------------------------------------------------------------ */

/* Starts `serve-mcp --http 127.0.0.1:0` and reads the URL it prints. */
export async function startHttp(args, { env = {}, cwd, timeout = ms(15000) } = {}) {
  const child = track(spawn(BIN, [...args, '--http', '127.0.0.1:0'], { cwd, env: serverEnv(env), stdio: ['ignore', 'pipe', 'pipe'] }));
  let stderr = '', stdout = '';
  noteStderr(`tabletalk ${args.join(' ')} --http`, () => stderr);
  child.stdout.on('data', (d) => { stdout += d; });
  const exited = new Promise((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })));
  const url = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no URL on stderr within ${timeout} ms: ${stderr}`)), timeout);
    child.stderr.on('data', (d) => {
      stderr += d;
      const m = /serving .* over MCP \(Streamable HTTP\) at (http:\/\/\S+\/mcp)/.exec(stderr);
      if (m) { clearTimeout(timer); resolve(m[1]); }
    });
    child.on('exit', (code) => { clearTimeout(timer); reject(new Error(`serve-mcp --http exited ${code}: ${stderr}`)); });
  });
  return {
    child, url, exited,
    get stderr() { return stderr; },
    get stdout() { return stdout; },
    alive: () => child.exitCode === null && child.signalCode === null,
    async close() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), ms(10000));
      const r = await exited;
      clearTimeout(timer);
      return r;
    },
  };
}

/* The headers a 2026-07-28 request must carry over HTTP. */
export function modernHeaders(method, name) {
  const h = { 'MCP-Protocol-Version': MODERN, 'Mcp-Method': method };
  if (name !== undefined) h['Mcp-Name'] = name;
  return h;
}

export function modernMeta(caps = {}, extra = {}) {
  return { [META_VERSION]: MODERN, [META_CAPS]: caps, 'io.modelcontextprotocol/clientInfo': { name: 'raw-test', version: '1' }, ...extra };
}

/* A 2026-07-28 request object. */
export function modernRequest(id, method, params = {}, caps = {}) {
  return { jsonrpc: '2.0', id, method, params: { ...params, _meta: modernMeta(caps, params._meta ?? {}) } };
}

/* POSTs body (an object as JSON, a string or Buffer as is). Resolves with
 * {status, headers, text, json, events} (events: the JSON of each SSE
 * message when the reply is a stream). */
export async function post(url, body, { headers = {}, method = 'POST', contentType = 'application/json', signal } = {}) {
  const h = { Accept: 'application/json, text/event-stream', ...headers };
  if (contentType !== null && !Object.keys(headers).some((k) => k.toLowerCase() === 'content-type')) h['Content-Type'] = contentType;
  const res = await fetch(url, {
    method, headers: h, signal,
    body: method === 'GET' || method === 'DELETE' || body === undefined ? undefined
      : typeof body === 'string' || Buffer.isBuffer(body) ? body : JSON.stringify(body),
  });
  const text = await res.text();
  let json = null;
  let events = null;
  if ((res.headers.get('content-type') ?? '').startsWith('text/event-stream')) {
    events = text.split('\n\n').filter((b) => b.includes('data:')).map((b) => {
      const data = b.split('\n').filter((l) => l.startsWith('data:')).map((l) => l.slice(5).trimStart()).join('\n');
      return JSON.parse(data);
    });
    json = events.at(-1) ?? null;
  } else {
    try { json = JSON.parse(text); } catch { /* not JSON */ }
  }
  return { status: res.status, headers: res.headers, text, json, events };
}

/* A modern request over HTTP with the right headers. */
export function postModern(url, id, method, params = {}, { caps = {}, headers = {}, ...opts } = {}) {
  const name = method === 'resources/read' ? params.uri : (method === 'tools/call' || method === 'prompts/get') ? params.name : undefined;
  return post(url, modernRequest(id, method, params, caps), { headers: { ...modernHeaders(method, name), ...headers }, ...opts });
}

/* ---- the SDK client -------------------------------------------------------------- */

/* era 'modern' pins 2026-07-28; 'legacy' is the SDK's default handshake.
 * elicit: a handler for elicitation/create (declares the capability), or
 * null for a client without elicitation. */
export function makeClient({ era = 'modern', elicit = null, name = 'tabletalk-test' } = {}) {
  const opts = {};
  if (era === 'modern') opts.versionNegotiation = { mode: { pin: MODERN } };
  if (elicit) opts.capabilities = { elicitation: { form: {} } };
  const client = new Client({ name, version: '1.0.0' }, opts);
  if (elicit) client.setRequestHandler('elicitation/create', elicit);
  return client;
}

/* An SDK client connected to a fresh stdio server: {client, stderr(), close()}. */
export async function connectStdio(sc, { era = 'modern', elicit = null, model, extra = [], env = {} } = {}) {
  const client = makeClient({ era, elicit });
  const transport = new StdioClientTransport({
    command: BIN, args: serveArgs(sc, { model, extra }), env: serverEnv(env), cwd: sc.dir, stderr: 'pipe',
  });
  let stderr = '';
  transport.stderr?.on('data', (d) => { stderr += d; });
  noteStderr(`tabletalk ${serveArgs(sc, { model, extra }).join(' ')} (SDK ${era})`, () => stderr);
  await client.connect(transport);
  return { client, transport, stderr: () => stderr, close: () => client.close() };
}

/* An SDK client connected to an HTTP server at url. */
export async function connectHttp(url, { era = 'modern', elicit = null, headers } = {}) {
  const client = makeClient({ era, elicit });
  const transport = new StreamableHTTPClientTransport(new URL(url), headers ? { requestInit: { headers } } : undefined);
  await client.connect(transport);
  return { client, transport, close: () => client.close() };
}

/* The first text block of a tool result. */
export const textOf = (res) => res.content?.find((c) => c.type === 'text')?.text ?? '';

/* The JSON that run_sql's text carries after its summary line. */
export function jsonInText(text) {
  const nl = text.indexOf('\n');
  return JSON.parse(text.slice(nl + 1));
}

/* Runs `tabletalk sql DB - ARGS` with sql on stdin: {code, stdout, stderr, json}. */
export function cliSql(db, sql, args = [], { timeout = ms(20000) } = {}) {
  return new Promise((resolve, reject) => {
    const child = spawn(BIN, ['sql', db, '-', '--format', 'json', ...args], { env: serverEnv(), stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '', stderr = '';
    child.stdout.on('data', (d) => { stdout += d; });
    child.stderr.on('data', (d) => { stderr += d; });
    const timer = setTimeout(() => child.kill('SIGKILL'), timeout);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      let json = null;
      try { json = JSON.parse(stdout); } catch { /* reported by the caller */ }
      noteStderr(`tabletalk sql ${db}`, () => stderr);
      resolve({ code, signal, stdout, stderr, json });
    });
    child.stdin.on('error', () => {});
    child.stdin.end(sql);
  });
}

/* ---- the SQL guard corpus ---------------------------------------------------------- */

/* Decodes a field of the corpus (README: \n \t \r \\ \xHH \uXXXX \UXXXXXXXX). */
export function decodeField(s) {
  const out = [];
  let lit = '';
  const flush = () => { if (lit) { out.push(Buffer.from(lit, 'utf8')); lit = ''; } };
  for (let i = 0; i < s.length; i++) {
    const c = s[i];
    if (c !== '\\' || i + 1 >= s.length) { lit += c; continue; }
    const n = s[i + 1];
    if (n === 'n') { lit += '\n'; i++; } else if (n === 't') { lit += '\t'; i++; } else if (n === 'r') { lit += '\r'; i++; } else if (n === '\\') { lit += '\\'; i++; } else if (n === 'x' && /^[0-9a-fA-F]{2}$/.test(s.slice(i + 2, i + 4))) {
      flush(); out.push(Buffer.from([parseInt(s.slice(i + 2, i + 4), 16)])); i += 3;
    } else if (n === 'u' && /^[0-9a-fA-F]{4}$/.test(s.slice(i + 2, i + 6))) {
      lit += String.fromCodePoint(parseInt(s.slice(i + 2, i + 6), 16)); i += 5;
    } else if (n === 'U' && /^[0-9a-fA-F]{8}$/.test(s.slice(i + 2, i + 10))) {
      lit += String.fromCodePoint(parseInt(s.slice(i + 2, i + 10), 16)); i += 9;
    } else { lit += c; }
  }
  flush();
  return Buffer.concat(out);
}

export function loadGuardCorpus() {
  const file = path.join(SHARED, 'corpus', 'sql-guard.tsv');
  const lines = fs.readFileSync(file, 'utf8').split('\n').filter((l) => l.trim());
  const [head, ...rows] = lines;
  const cols = head.split('\t');
  return rows.map((l) => {
    const f = l.split('\t');
    const o = Object.fromEntries(cols.map((c, i) => [c, f[i]]));
    o.sqlBytes = decodeField(o.sql ?? '');
    return o;
  });
}
