// Helpers for the agent tests: run the real tabletalk binary against the
// scripted model server on loopback, on scratch copies of chinook, each test
// with its own state directory. TT_BIN and TT_CHINOOK come from CTest.
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
export const SLOW = process.env.TT_SLOW_BUILD === '1';

export function tempDir(prefix = 'tabletalk-agent-') {
  return fs.mkdtempSync(path.join(os.tmpdir(), prefix));
}

/* No installed model, no cache of the person running the tests. */
const isolated = tempDir('tabletalk-home-');

/* A private copy of chinook, and the folder it lives in (also the state dir). */
export function scratch() {
  const dir = tempDir();
  const db = path.join(dir, 'chinook.sqlite');
  fs.copyFileSync(CHINOOK, db);
  return { dir, db, state: path.join(dir, 'state') };
}

export function sha256(file) {
  return createHash('sha256').update(fs.readFileSync(file)).digest('hex');
}

/* What a test that failed half-way left running (servers, processes): */
/* closed after the file's last test, so that one failure cannot keep the */
/* file alive until CTest's timeout. */
const leftOpen = new Set();
after(async () => { for (const closeIt of leftOpen) await closeIt(); });

/* Registers closeIt to run after the last test unless forget() is called. */
export function closeAtEnd(closeIt) {
  leftOpen.add(closeIt);
  return () => leftOpen.delete(closeIt);
}

export async function server(script) {
  const srv = await startModelServer(script);
  const close = srv.close;
  const forget = closeAtEnd(close);
  srv.close = () => { forget(); return close(); };
  return srv;
}

/* Runs tabletalk; resolves with {code, signal, stdout, stderr, json, ms}. */
/* input: a string for stdin; null with onSpawn leaves stdin open for the caller. */
export function run(args, { env = {}, input, cwd, timeoutMs = 60000, onSpawn } = {}) {
  return new Promise((resolve, reject) => {
    const t0 = Date.now();
    const child = spawn(BIN, args, {
      cwd,
      env: {
        ...process.env, NO_COLOR: '1', TABLETALK_BASE_URL: '', TABLETALK_MODEL: '',
        TABLETALK_MODEL_PATH: '', TABLETALK_DATA_DIR: path.join(isolated, 'data'),
        TABLETALK_CACHE_DIR: path.join(isolated, 'cache'), ...env,
      },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '', stderr = '';
    child.stdout.on('data', (d) => { stdout += d; });
    child.stderr.on('data', (d) => { stderr += d; });
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      let json = null;
      try { json = JSON.parse(stdout); } catch { /* not JSON output */ }
      resolve({ code, signal, stdout, stderr, json, ms: Date.now() - t0 });
    });
    if (typeof input === 'string') child.stdin.end(input);
    else if (input === undefined || (input === null && !onSpawn)) child.stdin.end();
    if (onSpawn) onSpawn(child);
  });
}

/* `tabletalk ask DB QUESTION --base-url URL --state-dir STATE --json ...` */
export function ask(sc, srv, question, extra = [], opts = {}) {
  return run(['ask', sc.db, question, '--base-url', srv.url, '--state-dir', sc.state, '--json',
    ...extra], opts);
}

/* The conversation a request carried. */
export const messages = (req) => req.body.messages;
export const toolMessages = (req) => req.body.messages.filter((m) => m.role === 'tool');
export const lastTool = (req) => toolMessages(req).at(-1)?.content ?? '';

export function traceEvents(file) {
  return fs.readFileSync(file, 'utf8').trim().split('\n').map((l) => JSON.parse(l));
}

/* Rows SQLite itself returns (through the project's own guarded runner). */
export async function sqliteRows(db, sql) {
  const r = await run(['sql', db, sql, '--format', 'json', '--max-rows', '100000']);
  if (r.code !== 0) throw new Error(`tabletalk sql failed: ${r.stdout}${r.stderr}`);
  return r.json.rows;
}
