// harness.mjs — the one harness of every node test suite (tests/agent,
// tests/mcp, tests/web, tests/fixtures): the real tabletalk binary run with
// an environment of its own, temporary folders and scratch copies of
// chinook, the scripted model server, long-lived processes (serve-mcp over
// stdio or HTTP, web) and waits on events: a line printed, a file appearing,
// a process ending, a model-server condition. Whatever a file started
// (servers, processes, folders) is closed after its last test, also when a
// test failed half-way, so one failure cannot keep a file alive until
// CTest's timeout. No sleeps and no wall-clock assertions: see
// docs/contributing/testing.md.
//
// TT_BIN, TT_CHINOOK, TT_SHARED_DIR and TT_SANITIZED come from CTest
// (tests/CMakeLists.txt). Plain Node.js: no npm package is imported here, so
// the agent suites (Debian's node) and the MCP suites (tests/mcp's pinned
// node) share it; MCP protocol helpers live in tests/mcp/protocol.mjs.
import { after } from 'node:test';
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startModelServer } from '../fixtures/model_server.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
export const BIN = process.env.TT_BIN ?? path.resolve(here, '../../build/tabletalk');
export const CHINOOK = process.env.TT_CHINOOK ?? path.resolve(here, '../../data/chinook.sqlite');
export const SHARED = process.env.TT_SHARED_DIR ?? path.resolve(here, '../../../shared');
/* The sanitizer build: ASan's shadow memory makes memory figures meaningless
 * (never a reason to wait longer: waits are on events). */
export const SANITIZED = process.env.TT_SANITIZED === '1';
/* How long a wait on an event may take before it is a failure with a name
 * (rather than CTest's TIMEOUT). Generous on purpose: it is never the thing
 * under test, so a slow or loaded machine must never reach it. */
export const FAIL_AFTER = 600000;

/* ---- folders --------------------------------------------------------------- */

/* A temporary folder, removed after the file's last test (TT_KEEP_TMP=1 keeps it). */
const temps = [];
export function tempDir(prefix = 'tabletalk-test-') {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  temps.push(d);
  return d;
}

export function sha256(file) {
  return createHash('sha256').update(fs.readFileSync(file)).digest('hex');
}

/* A private copy of chinook in its own folder (also the cwd of a server, so
 * no stray .env is read), its state dir and its hash before anything could
 * touch it. sc.unchanged() is true while the file is byte-identical. */
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

/* ---- the environment of a tabletalk process ------------------------------------ */

/* No installed model, no cache, no token and no .env of the person running
 * the tests: one home per test file. */
const isolated = tempDir('tabletalk-home-');
export function testEnv(extra = {}) {
  return {
    ...process.env, NO_COLOR: '1', TABLETALK_BASE_URL: '', TABLETALK_MODEL: '',
    TABLETALK_MODEL_PATH: '', TABLETALK_API_KEY: '', TABLETALK_MCP_TOKEN: '', TABLETALK_WEB_TOKEN: '',
    TABLETALK_STATE_DIR: path.join(isolated, 'state'),
    TABLETALK_DATA_DIR: path.join(isolated, 'data'), TABLETALK_CACHE_DIR: path.join(isolated, 'cache'),
    ...extra,
  };
}

/* ---- closing what a file started ------------------------------------------------ */

const closers = new Set();
/* Registers closeIt to run after the file's last test; returns forget(). */
export function closeAtEnd(closeIt) {
  closers.add(closeIt);
  return () => closers.delete(closeIt);
}

/* Long-lived children (servers): killed after the last test if still alive. */
const live = new Set();
export function track(child) {
  exited(child);
  live.add(child);
  child.on('exit', () => live.delete(child));
  return child;
}

/* The stderr of tabletalk processes, read for sanitizer reports at the end. */
const stderrs = [];
/* label: what the process was; text(): its stderr so far */
export function noteStderr(label, text) { stderrs.push({ label, text }); }

const SANITIZER = /ERROR: (AddressSanitizer|LeakSanitizer)|runtime error: |SUMMARY: \w+Sanitizer|ThreadSanitizer/;
let ended = false;
/* Ends what the file started (closers, servers, model servers, temporary
 * folders), then fails if a noted tabletalk process reported a sanitizer
 * error. Everything is cleaned up first: a model server left listening
 * would keep node waiting. Runs once, after the file's last test. */
export async function killAll() {
  if (ended) return;
  ended = true;
  for (const closeIt of [...closers]) await closeIt();
  closers.clear();
  await Promise.all([...live].map((c) => new Promise((resolve) => {
    if (c.exitCode !== null || c.signalCode !== null) return resolve();
    c.once('exit', resolve);
    c.kill('SIGKILL');
  })));
  if (process.env.TT_KEEP_TMP !== '1') for (const d of temps.splice(0)) fs.rmSync(d, { recursive: true, force: true });
  const reports = stderrs.filter((s) => SANITIZER.test(s.text()));
  if (reports.length) {
    throw new Error(`sanitizer reports from ${reports.length} tabletalk process(es):\n${reports.map((s) => `--- ${s.label}\n${s.text().slice(0, 4000)}`).join('\n')}`);
  }
}
after(killAll);

/* The scripted model server (tests/fixtures/model_server.mjs), closed after
 * the file's last test if the test did not close it. */
export async function server(script) {
  const srv = await startModelServer(script);
  const close = srv.close.bind(srv);
  const forget = closeAtEnd(() => close().catch(() => {}));
  srv.close = () => { forget(); return close(); };
  return srv;
}
export const startModel = server;

/* ---- running tabletalk -------------------------------------------------------------- */

/* Runs tabletalk to its end; resolves with {code, signal, stdout, stderr,
 * json}. input: a string or Buffer for stdin; null with onSpawn leaves stdin open for
 * the caller. timeoutMs kills a hung process (a failure, never the thing
 * under test). */
export function run(args, { env = {}, input, cwd, timeoutMs = FAIL_AFTER, onSpawn } = {}) {
  return runProgram(BIN, args, { env: testEnv(env), input, cwd, timeoutMs, onSpawn });
}

/* Any program, to its end: {code, signal, stdout, stderr, json}. */
export function runProgram(file, args, { env = process.env, input, cwd, timeoutMs = FAIL_AFTER, onSpawn } = {}) {
  return new Promise((resolve, reject) => {
    const child = spawn(file, args, { cwd, env, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '', stderr = '';
    child.stdout.on('data', (d) => { stdout += d; });
    child.stderr.on('data', (d) => { stderr += d; });
    child.stdin.on('error', () => { /* it may be gone */ });
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      let json = null;
      try { json = JSON.parse(stdout); } catch { /* not JSON output */ }
      resolve({ code, signal, stdout, stderr, json });
    });
    if (typeof input === 'string' || Buffer.isBuffer(input)) child.stdin.end(input);
    else if (input === undefined || (input === null && !onSpawn)) child.stdin.end();
    if (onSpawn) onSpawn(child);
  });
}

/* `tabletalk ask DB QUESTION --base-url URL --state-dir STATE --json ...` */
export function ask(sc, srv, question, extra = [], opts = {}) {
  return run(['ask', sc.db, question, '--base-url', srv.url, '--state-dir', sc.state, '--json',
    ...extra], opts);
}

/* Rows SQLite itself returns (through the project's own guarded runner). */
export async function sqliteRows(db, sql) {
  const r = await run(['sql', db, sql, '--format', 'json', '--max-rows', '100000']);
  if (r.code !== 0) throw new Error(`tabletalk sql failed: ${r.stdout}${r.stderr}`);
  return r.json.rows;
}

/* Runs `tabletalk sql DB - ARGS` with sql on stdin: {code, stdout, stderr, json}. */
export async function cliSql(db, sql, args = [], { timeout = FAIL_AFTER } = {}) {
  const r = await run(['sql', db, '-', '--format', 'json', ...args], { input: sql, timeoutMs: timeout });
  noteStderr(`tabletalk sql ${db}`, () => r.stderr);
  return r;
}

/* The conversation a request carried. */
export const messages = (req) => req.body.messages;
export const toolMessages = (req) => req.body.messages.filter((m) => m.role === 'tool');
export const lastTool = (req) => toolMessages(req).at(-1)?.content ?? '';

export function traceEvents(file) {
  return fs.readFileSync(file, 'utf8').trim().split('\n').map((l) => JSON.parse(l));
}

/* ---- waiting on events ------------------------------------------------------------- */

/* Resolves with the match once the text read so far from `stream` matches
 * re; rejects if the stream ends first or after `timeout` (a failure). */
export function waitForOutput(stream, re, { timeout = FAIL_AFTER, what = String(re) } = {}) {
  return new Promise((resolve, reject) => {
    let text = '';
    const done = (fn, v) => {
      clearTimeout(timer);
      stream.off('data', onData);
      stream.off('end', onEnd);
      fn(v);
    };
    const onData = (d) => {
      text += d;
      const m = re.exec(text);
      if (m) done(resolve, m);
    };
    const onEnd = () => done(reject, new Error(`the output ended before ${what}: ${text.slice(-2000)}`));
    const timer = setTimeout(() => done(reject, new Error(`no ${what} within ${timeout} ms: ${text.slice(-2000)}`)), timeout);
    stream.on('data', onData);
    stream.on('end', onEnd);
  });
}

/* Resolves once `file` exists (watching its folder: no polling). */
export function waitForFile(file, { timeout = FAIL_AFTER } = {}) {
  return new Promise((resolve, reject) => {
    const dir = path.dirname(file);
    const name = path.basename(file);
    let watcher = null;
    const done = (fn, v) => { clearTimeout(timer); watcher?.close(); fn(v); };
    const timer = setTimeout(() => done(reject, new Error(`${file} did not appear within ${timeout} ms`)), timeout);
    watcher = fs.watch(dir, (event, f) => {
      if ((f === null || f === name) && fs.existsSync(file)) done(resolve, file);
    });
    if (fs.existsSync(file)) done(resolve, file); // it was there before the watch began
  });
}

/* Resolves with {code, signal} once the child has exited and its output
 * pipes are closed (all it printed has been read). Call it, or track(),
 * right after spawn. */
const closes = new WeakMap();
export function exited(child) {
  let p = closes.get(child);
  if (!p) {
    p = new Promise((resolve) => child.once('close', (code, signal) => resolve({ code, signal })));
    closes.set(child, p);
  }
  return p;
}

/* CPU seconds a process has used (user + system, all its threads). */
export function cpuSeconds(pid) {
  const fields = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100; // utime, stime in clock ticks
}

/* Bounded polls of /proc, for the one fact no process announces: whether a
 * query is burning CPU. The bound is a failure timeout, never the thing
 * under test. cpuBusy resolves once pid has used `seconds` more CPU;
 * cpuIdle once its CPU time stayed the same over `checks` readings 100 ms
 * apart (a statement that stopped; one still running advances it). */
export async function cpuBusy(pid, seconds, { timeout = FAIL_AFTER } = {}) {
  const start = cpuSeconds(pid), end = Date.now() + timeout;
  while (cpuSeconds(pid) - start < seconds) {
    if (Date.now() > end) throw new Error(`pid ${pid} used less than ${seconds} CPU s in ${timeout} ms`);
    await new Promise((r) => setTimeout(r, 20));
  }
}
export async function cpuIdle(pid, { checks = 5, timeout = FAIL_AFTER } = {}) {
  const end = Date.now() + timeout;
  let last = cpuSeconds(pid), same = 0;
  while (same < checks) {
    if (Date.now() > end) throw new Error(`pid ${pid} kept using CPU for ${timeout} ms`);
    await new Promise((r) => setTimeout(r, 100));
    const now = cpuSeconds(pid);
    same = now === last ? same + 1 : 0;
    last = now;
  }
}

/* ---- long-lived tabletalk processes ------------------------------------------------ */

/* A tabletalk process with pipes of our own (serve-mcp over stdio, chat):
 * write any bytes, read every stdout line (each parsed as JSON, or null). */
export class RawStdio {
  constructor(args, { env = {}, cwd } = {}) {
    this.child = track(spawn(BIN, args, { cwd, env: testEnv(env), stdio: ['pipe', 'pipe', 'pipe'] }));
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
    this.child.stderr.on('data', (d) => { this.stderr += d; this.wake(); });
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

  /* Resolves once cond(this) holds (checked at every line, stderr chunk and
   * the exit); rejects on `timeout` (a failure). */
  until(cond, { timeout = FAIL_AFTER, what = 'a condition' } = {}) {
    return new Promise((resolve, reject) => {
      const check = () => {
        if (cond(this)) { done(); resolve(); }
        else if (this.exited) { done(); reject(new Error(`the process exited (${JSON.stringify(this.exited)}) while waiting for ${what}; stderr: ${this.stderr.slice(-2000)}`)); }
      };
      const timer = setTimeout(() => { done(); reject(new Error(`timed out after ${timeout} ms waiting for ${what}; last lines: ${this.lines.slice(-3).join('\n').slice(0, 2000)}`)); }, timeout);
      const done = () => { clearTimeout(timer); this.waiters.delete(check); };
      this.waiters.add(check);
      check();
    });
  }

  /* Resolves with the first message (from index `from`) that pred accepts. */
  async waitFor(pred, { timeout = FAIL_AFTER, from = 0, what = 'a message' } = {}) {
    let found = null;
    await this.until(() => {
      for (let i = from; i < this.messages.length; i++) {
        if (this.messages[i] && pred(this.messages[i])) { found = this.messages[i]; return true; }
      }
      return false;
    }, { timeout, what });
    return found;
  }

  /* Sends a request and waits for the response with its id. */
  async request(msg, opts = {}) {
    await this.send(msg);
    return this.waitFor((m) => 'id' in m && !('method' in m) && m.id === msg.id, { what: `the response to id ${JSON.stringify(msg.id)}`, ...opts });
  }

  responsesTo(id) {
    return this.messages.filter((m) => m && !('method' in m) && m.id === id);
  }

  /* Closes stdin and waits for the process to end (SIGKILL after `timeout`: a failure). */
  async close({ timeout = FAIL_AFTER } = {}) {
    if (!this.exited) this.child.stdin.end();
    const timer = setTimeout(() => this.child.kill('SIGKILL'), timeout);
    const r = await this.exitPromise;
    clearTimeout(timer);
    return r;
  }
}

/* Starts tabletalk with `args`, waits for the line on stderr that `re`
 * matches (its URL), and returns {child, match, exited, stderr, stdout,
 * alive(), close()}: close() sends SIGTERM and waits for the exit. */
export async function startServer(args, re, { env = {}, cwd, what = 'the URL', stream = 'stderr' } = {}) {
  const child = track(spawn(BIN, args, { cwd, env: testEnv(env), stdio: ['ignore', 'pipe', 'pipe'] }));
  let stderr = '', stdout = '';
  noteStderr(`tabletalk ${args.join(' ')}`, () => stderr);
  child.stdout.on('data', (d) => { stdout += d; });
  child.stderr.on('data', (d) => { stderr += d; });
  const exit = exited(child);
  const match = await Promise.race([
    waitForOutput(child[stream], re, { what }),
    exit.then(({ code, signal }) => { throw new Error(`tabletalk ${args.join(' ')} exited (${code ?? signal}) before printing ${what}: ${stderr}`); }),
  ]);
  return {
    child, match, exited: exit,
    get stderr() { return stderr; },
    get stdout() { return stdout; },
    alive: () => child.exitCode === null && child.signalCode === null,
    async close(signal = 'SIGTERM') {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      const timer = setTimeout(() => child.kill('SIGKILL'), FAIL_AFTER);
      const r = await exit;
      clearTimeout(timer);
      return r;
    },
  };
}

/* `tabletalk serve-mcp ... --http 127.0.0.1:0`: the server and its URL. */
export async function startHttp(args, { env = {}, cwd } = {}) {
  const s = await startServer([...args, '--http', '127.0.0.1:0'],
    /serving .* over MCP \(Streamable HTTP\) at (http:\/\/\S+\/mcp)/, { env, cwd });
  s.url = s.match[1];
  return s;
}

/* `tabletalk web DB --port 0 --state-dir STATE [--base-url MODEL] ...`,
 * once it printed its URL: {proc, line, url, port, token, base, stderr(),
 * exited, close()}; exited resolves with {code, signal, stdout, stderr()}. */
export async function startWeb(sc, srv, extra = [], env = {}) {
  const args = ['web', sc.db, '--port', '0', '--state-dir', sc.state, ...extra];
  if (srv) args.push('--base-url', srv.url);
  const s = await startServer(args,
    /^tabletalk web: serving (.*) at (http:\/\/127\.0\.0\.1:(\d+)\/\?token=([0-9a-zA-Z._~-]+))\n/,
    { env, stream: 'stdout' });
  const m = s.match;
  return {
    proc: s.child, line: m[0], url: m[2], port: Number(m[3]), token: m[4], base: `http://127.0.0.1:${m[3]}`,
    stderr: () => s.stderr, close: s.close,
    exited: s.exited.then(({ code, signal }) => ({ code, signal, stdout: s.stdout, stderr: () => s.stderr })),
  };
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
