// The embedded engine through the real binary: `ask` on a tiny
// random-weight model (its answers are nonsense, the protocol is not), the
// prefix state reused by the next process, and `pull` against a loopback
// server (download, resume after a cut, wrong sha256, no sha256, the known
// models and their Hugging Face paths through HF_ENDPOINT, a model split
// into parts fetched whole and loaded through the default link).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { run, scratch, traceEvents, tempDir } from '../support/harness.mjs';
import { startFileServer } from '../fixtures/file_server.mjs';

const TINY = process.env.TT_TINY_MODEL;
const MKMODEL = process.env.TT_MKMODEL;
const VOCAB = process.env.TT_VOCAB;

test('ask runs end to end on the embedded engine, and the next process reuses the prefix', { skip: !TINY && 'no tiny model' }, async () => {
  const sc = scratch();
  const cache = path.join(sc.dir, 'cache');
  const args = ['ask', sc.db, 'Which 3 genres have the most tracks?', '--model-path', TINY,
    '--state-dir', sc.state, '--json', '--max-tokens', '300'];
  const env = { TABLETALK_CACHE_DIR: cache };
  const first = await run(args, { env });
  assert.equal(first.code === 0 || first.code === 1, true, first.stderr);
  assert.ok(['answered', 'clarify', 'budget', 'failed'].includes(first.json.status));
  const calls = traceEvents(first.json.trace).filter((e) => e.event === 'model_call');
  assert.ok(calls.length >= 1);
  for (const c of calls) {
    assert.equal(c.error, undefined, 'no protocol error: every reply is a tool call');
    assert.ok(['run_sql', 'ask_user', 'answer'].includes(c.tool));
  }
  const start = traceEvents(first.json.trace)[0];
  assert.equal(start.backend, 'llama.cpp');
  assert.ok(fs.readdirSync(cache).some((f) => f.startsWith('prefix-')), 'the prefix state was saved');
  const second = await run(args, { env });
  const c2 = traceEvents(second.json.trace).find((e) => e.event === 'model_call');
  assert.ok(c2.cached_tokens > 0, 'restored from the saved prefix');
  assert.ok(c2.cached_tokens < c2.input_tokens);
});

// A long thread of SELECT * on big tables at a small context: replayed on
// the tiny model (every token a real forward pass, counted by its own
// tokenizer), each result is cut to fit and earlier questions are dropped,
// and every question completes; the one failure is a system prompt that
// cannot fit, and it says what to change.
test('a long thread with large results completes within a small context', { skip: !TINY && 'no tiny model' }, async () => {
  const sc = scratch();
  const rec = path.join(sc.dir, 'long-thread.json');
  const ask = (table) => ({ question: `Everything in ${table}?`,
    calls: [{ name: 'run_sql', arguments: { sql: `SELECT * FROM ${table}` } }, { name: 'answer', arguments: { text: 'Shown.' } }] });
  fs.writeFileSync(rec, JSON.stringify({ database: 'chinook.sqlite',
    questions: ['Track', 'Invoice', 'Track', 'Customer', 'Invoice', 'Track'].map(ask) }));
  const bench = (ctx) => run(['bench', rec, '--model-path', TINY, '--ctx', String(ctx), '--schema-budget', '100',
    '--json', '--cold'], { env: { TABLETALK_CACHE_DIR: path.join(sc.dir, 'cache') } });
  const r = await bench(4096);
  assert.equal(r.code, 0, r.stderr);
  const c = r.json.context;
  assert.equal(c.tokens, 4096);
  assert.equal(c.reply_reserve, 1024);
  assert.equal(c.results_cut, 6, 'every SELECT * is cut to fit');
  assert.ok(c.turns_dropped > 0, 'the thread outgrew the context');
  assert.ok(c.largest_shortened_before > 4096 - 1024 && c.largest_shortened_after <= 4096 - 1024);
  assert.equal(r.json.steps.length, 12);
  for (const s of r.json.steps) assert.ok(s.prompt_tokens <= 4096 - 1024, `${s.prompt_tokens} tokens sent`);
  const tight = await bench(2048);
  assert.equal(tight.code, 1);
  assert.match(tight.stderr, /question 1 ended failed: the question does not fit the model's context: .* take \d+ tokens, but the context holds 2048 and 512 of them are kept for the reply; raise --ctx \(it needs more than \d+\) or lower --schema-budget \(now 100\)/);
});

test('no model anywhere: the error says how to get one', async () => {
  const sc = scratch();
  const r = await run(['ask', sc.db, 'hi', '--state-dir', sc.state], { cwd: tempDir() });
  assert.equal(r.code, 1);
  assert.match(r.stderr, /tabletalk pull/);
});

test('a missing model file is a clear error', async () => {
  const sc = scratch();
  const r = await run(['ask', sc.db, 'hi', '--model-path', '/nonexistent.gguf', '--state-dir', sc.state]);
  assert.equal(r.code, 1);
  assert.match(r.stderr, /no model file at \/nonexistent\.gguf/);
});

function pullEnv() {
  const data = tempDir('tabletalk-data-');
  return { data, env: { TABLETALK_DATA_DIR: data } };
}

test('pull downloads, verifies the announced sha256 and sets the default', async () => {
  const content = randomBytes(300000);
  const srv = await startFileServer(content);
  const { data, env } = pullEnv();
  const r = await run(['pull', srv.url('tiny-test.gguf')], { env });
  await srv.close();
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, new RegExp(`sha256 ${srv.sha} verified`));
  const file = path.join(data, 'models', 'tiny-test.gguf');
  assert.deepEqual(fs.readFileSync(file), content);
  assert.equal(fs.readlinkSync(path.join(data, 'models', 'default.gguf')), 'tiny-test.gguf');
  const list = await run(['models', '--json'], { env });
  const models = JSON.parse(list.stdout);
  assert.deepEqual(models.map((m) => [m.name, m.default]), [['tiny-test.gguf', true]]);
});

test('an interrupted download resumes with a Range request', async () => {
  const content = randomBytes(2000000);
  const srv = await startFileServer(content, { cutFirst: true });
  const { data, env } = pullEnv();
  const first = await run(['pull', srv.url('big.gguf')], { env });
  assert.equal(first.code, 1);
  assert.match(first.stderr, /interrupted after .* run the same command again to resume/);
  const part = path.join(data, 'models', 'big.gguf.part');
  assert.ok(fs.statSync(part).size > 0);
  const second = await run(['pull', srv.url('big.gguf')], { env });
  await srv.close();
  assert.equal(second.code, 0, second.stderr);
  assert.match(second.stdout, /resumed/);
  assert.match(second.stdout, /verified/);
  assert.ok(srv.requests.some((q) => q.range && q.range.startsWith('bytes=')), 'resumed with Range');
  assert.deepEqual(fs.readFileSync(path.join(data, 'models', 'big.gguf')), content);
  assert.equal(fs.existsSync(part), false);
});

test('a wrong sha256 deletes the download and says so', async () => {
  const srv = await startFileServer(randomBytes(100000), { wrongHash: true });
  const { data, env } = pullEnv();
  const r = await run(['pull', srv.url('bad.gguf')], { env });
  await srv.close();
  assert.equal(r.code, 1);
  assert.match(r.stderr, /sha256 is [0-9a-f]{64} but the server announced f{64}; the download was deleted/);
  assert.deepEqual(fs.readdirSync(path.join(data, 'models')), []);
});

test('without an announced sha256 the download is kept and reported unverified', async () => {
  const srv = await startFileServer(randomBytes(1000), { noHash: true });
  const { env } = pullEnv();
  const r = await run(['pull', srv.url('plain.gguf'), '--no-default'], { env });
  await srv.close();
  assert.equal(r.code, 0);
  assert.match(r.stdout, /the server announced none to check against/);
  assert.doesNotMatch(r.stdout, /default model/);
});

/* Every line of a command's output fits a 24-line, 80-column screen. */
function assertFitsScreen(text, what) {
  const lines = text.replace(/\n$/, '').split('\n');
  assert.ok(lines.length <= 24, `${what}: ${lines.length} lines`);
  for (const l of lines) assert.ok(l.length <= 80, `${what}: ${l.length} columns: ${l}`);
}

test('pull --list says what each model is good at, its download and RAM, and marks the default', async () => {
  const list = await run(['pull', '--list']);
  assert.equal(list.code, 0, list.stderr);
  assertFitsScreen(list.stdout, 'pull --list');
  const row = (name) => list.stdout.split('\n').find((l) => l.startsWith(`  ${name} `));
  // the default: a model trained for tool calls, not an SQL writer
  assert.match(row('qwen2.5-coder-7b'), /tool-calling agent +4\.7 GB +6 GB +default$/);
  assert.match(row('qwen2.5-coder-3b'), /tool-calling agent +2\.1 GB .*research licence/);
  assert.match(row('qwen2.5-coder-1.5b'), /tool-calling agent +1\.1 GB/);
  assert.match(row('qwen3-8b'), /general, thinks +5\.0 GB/);
  assert.match(row('qwen3-4b'), /general, thinks +2\.5 GB/);
  assert.match(row('omnisql-7b'), /SQL writer +4\.7 GB/);
  assert.match(row('xiyan-7b'), /SQL writer +4\.7 GB/);
  assert.equal(list.stdout.split('\n').filter((l) => /  default$/.test(l)).length, 1, 'one default');
  assert.match(list.stdout, /RAM: with an 8,192-token context/);
  assert.match(list.stdout, /docs\/guide\/models\.md/);
  const help = await run(['pull', '--help']);
  assertFitsScreen(help.stdout, 'pull --help');
  const models = await run(['models'], { env: { TABLETALK_DATA_DIR: tempDir() } });
  assert.equal(models.code, 0, models.stderr);
  assertFitsScreen(models.stdout, 'models');
  assert.ok(models.stdout.includes(list.stdout), 'models shows the same list');
  const bad = await run(['pull', 'no-such-model']);
  assert.equal(bad.code, 2);
});

/* Where each known model lives on Hugging Face (docs/guide/models.md). */
const HF_PATHS = {
  'qwen2.5-coder-7b': '/Qwen/Qwen2.5-Coder-7B-Instruct-GGUF/resolve/main/qwen2.5-coder-7b-instruct-q4_k_m.gguf',
  'qwen2.5-coder-3b': '/Qwen/Qwen2.5-Coder-3B-Instruct-GGUF/resolve/main/qwen2.5-coder-3b-instruct-q4_k_m.gguf',
  'qwen2.5-coder-1.5b': '/Qwen/Qwen2.5-Coder-1.5B-Instruct-GGUF/resolve/main/qwen2.5-coder-1.5b-instruct-q4_k_m.gguf',
  'qwen3-8b': '/Qwen/Qwen3-8B-GGUF/resolve/main/Qwen3-8B-Q4_K_M.gguf',
  'qwen3-4b': '/Qwen/Qwen3-4B-GGUF/resolve/main/Qwen3-4B-Q4_K_M.gguf',
  'omnisql-7b': '/mradermacher/OmniSQL-7B-GGUF/resolve/main/OmniSQL-7B.Q4_K_M.gguf',
  'xiyan-7b': '/mradermacher/XiYanSQL-QwenCoder-7B-2504-GGUF/resolve/main/XiYanSQL-QwenCoder-7B-2504.Q4_K_M.gguf',
};

test('each known model is fetched from its Hugging Face path (HF_ENDPOINT names a mirror)', async (t) => {
  const srv = await startFileServer({}); // knows no file: every request is a 404
  t.after(() => srv.close());
  const list = await run(['pull', '--list']);
  const names = list.stdout.split('\n').slice(2).map((l) => /^  (\S+) /.exec(l)?.[1]).filter(Boolean);
  assert.deepEqual(names.sort(), Object.keys(HF_PATHS).sort(), 'the test knows every model');
  for (const name of names) {
    const { data, env } = pullEnv();
    const r = await run(['pull', name], { env: { ...env, HF_ENDPOINT: `${srv.base}/` } });
    assert.equal(r.code, 1, r.stderr);
    assert.equal(srv.requests.at(-1).url, HF_PATHS[name], name);
    assert.match(r.stderr, /the server answered HTTP 404/);
    assert.deepEqual(fs.readdirSync(path.join(data, 'models')), [], 'nothing left behind');
  }
  const noName = await run(['pull'], { env: { ...pullEnv().env, HF_ENDPOINT: srv.base } });
  assert.equal(srv.requests.at(-1).url, HF_PATHS['qwen2.5-coder-7b'], 'no name: the default');
  assert.equal(noName.code, 1);
  const bad = await run(['pull', 'qwen3-4b'], { env: { ...pullEnv().env, HF_ENDPOINT: 'http://example.com' } });
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /HF_ENDPOINT 'http:\/\/example.com' cannot serve qwen3-4b: .* is not an https URL/);
});

test('a known model must be the file pull knows: another one is refused, announced or not', async () => {
  const file = 'Qwen3-4B-Q4_K_M.gguf';
  const content = randomBytes(200000);
  // announced: stopped before any data arrives, nothing kept
  let srv = await startFileServer({ [file]: content });
  let { data, env } = pullEnv();
  let r = await run(['pull', 'qwen3-4b'], { env: { ...env, HF_ENDPOINT: srv.base } });
  await srv.close();
  assert.equal(r.code, 1);
  assert.match(r.stderr, new RegExp(`offers a different file than the one this tabletalk knows \\(its sha256 is ${srv.shaOf(file)}, expected 7485fe6f11af29433bc51cab58009521f205840f5b4ae3a32fa7f92e8534fdf5\\), so nothing was downloaded; if you trust the new file, pull it by its URL`));
  assert.ok(!srv.requests.some((q) => q.url.startsWith('/cdn/')), 'no byte of it was fetched');
  assert.deepEqual(fs.readdirSync(path.join(data, 'models')), []);
  // not announced: downloaded, hashed, deleted
  srv = await startFileServer({ [file]: content }, { noHash: true });
  ({ data, env } = pullEnv());
  r = await run(['pull', 'qwen3-4b'], { env: { ...env, HF_ENDPOINT: srv.base } });
  await srv.close();
  assert.equal(r.code, 1);
  assert.match(r.stderr, /the downloaded file's sha256 is [0-9a-f]{64}, not the 7485fe6f[0-9a-f]{56} this tabletalk knows for it; the download was deleted/);
  assert.deepEqual(fs.readdirSync(path.join(data, 'models')), []);
  // the same bytes by URL: the user's choice, checked against what the server announces
  srv = await startFileServer({ [file]: content });
  ({ data, env } = pullEnv());
  r = await run(['pull', `${srv.base}/Qwen/Qwen3-4B-GGUF/resolve/main/${file}`], { env });
  await srv.close();
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, new RegExp(`sha256 ${srv.shaOf(file)} verified`));
});

/* The tiny random model written in parts by tt-mkmodel --split. */
function splitTiny(parts) {
  const dir = tempDir('tabletalk-split-');
  execFileSync(MKMODEL, [VOCAB, path.join(dir, 'tiny.gguf'), 'tiny', '1', '--split', String(parts)]);
  const files = {};
  for (let i = 1; i <= parts; i++) {
    const name = `tiny-${String(i).padStart(5, '0')}-of-${String(parts).padStart(5, '0')}.gguf`;
    files[name] = fs.readFileSync(path.join(dir, name));
  }
  return files;
}

test('a model split into parts: every part fetched and checked, a cut part resumed, ask loads it by the default', { skip: !MKMODEL && 'no tt-mkmodel' }, async (t) => {
  const files = splitTiny(3);
  const names = Object.keys(files);
  assert.equal(names.length, 3);
  const srv = await startFileServer(files, { cutFirst: names[1] });
  t.after(() => srv.close());
  const { data, env } = pullEnv();
  const models = path.join(data, 'models');
  // any part's URL fetches the whole model; the cut part 2 stops the first run
  const first = await run(['pull', srv.url(names[1])], { env });
  assert.equal(first.code, 1);
  assert.match(first.stdout, /^part 1 of 3: tiny-00001-of-00003\.gguf, [\d.]+ MB, sha256 verified$/m);
  assert.match(first.stderr, /part 2 of 3 \(tiny-00002-of-00003\.gguf\): download interrupted after .* run the same command again to resume/);
  assert.equal(fs.existsSync(path.join(models, 'default.gguf')), false, 'no default while incomplete');
  const incomplete = await run(['models', '--json'], { env });
  assert.deepEqual(incomplete.json.map((m) => [m.name, m.parts, m.complete]), [['tiny-00001-of-00003.gguf', 3, false]]);
  // run again: part 1 is kept, part 2 resumes, part 3 arrives
  const second = await run(['pull', srv.url(names[1])], { env });
  assert.equal(second.code, 0, second.stderr);
  assert.match(second.stdout, /^part 1 of 3: tiny-00001-of-00003\.gguf is already here$/m);
  assert.match(second.stdout, /^part 2 of 3: tiny-00002-of-00003\.gguf, [\d.]+ MB \(resumed\), sha256 verified$/m);
  assert.match(second.stdout, /^part 3 of 3: tiny-00003-of-00003\.gguf, [\d.]+ MB, sha256 verified$/m);
  assert.match(second.stdout, /^default model: tiny-00001-of-00003\.gguf$/m);
  assertFitsScreen(second.stdout, 'pull of a split model');
  assert.ok(srv.requests.some((q) => q.name === names[1] && q.range?.startsWith('bytes=')), 'part 2 resumed with Range');
  for (const n of names) assert.deepEqual(fs.readFileSync(path.join(models, n)), files[n], n);
  assert.equal(fs.readlinkSync(path.join(models, 'default.gguf')), names[0]);
  const list = await run(['models', '--json'], { env });
  const total = names.reduce((sum, n) => sum + files[n].length, 0);
  assert.deepEqual(list.json.map((m) => [m.name, m.parts, m.complete, m.bytes, m.default]),
    [['tiny-00001-of-00003.gguf', 3, true, total, true]]);
  const text = await run(['models'], { env });
  assert.match(text.stdout, /tiny-00001-of-00003\.gguf +[\d.]+ MB  3 parts  \[default\]/);
  assertFitsScreen(text.stdout, 'models');
  assert.doesNotMatch(text.stdout, /tiny-0000[23]/);
  // ask with the installed default (a link named default.gguf): llama.cpp
  // opens the first part under its own name and finds the others
  const sc = scratch();
  const ask = await run(['ask', sc.db, 'How many genres?', '--state-dir', sc.state, '--json', '--max-tokens', '200'], { env });
  assert.ok(ask.json, ask.stderr);
  assert.ok(['answered', 'clarify', 'budget', 'failed'].includes(ask.json.status));
  const events = traceEvents(ask.json.trace);
  assert.equal(events[0].backend, 'llama.cpp');
  assert.ok(events.some((e) => e.event === 'model_call' && e.ok), 'the model answered');
  // without the link, the only model in the folder is the default: the
  // split model counts once, by its first part
  fs.unlinkSync(path.join(models, 'default.gguf'));
  const which = await run(['models', '--which'], { env, cwd: tempDir() });
  assert.equal(which.stdout, `${path.join(models, names[0])}\tthe installed default (tabletalk pull)\n`);
  fs.symlinkSync(names[0], path.join(models, 'default.gguf'));
  // a part goes missing: the error names it and says what to do
  fs.renameSync(path.join(models, names[2]), path.join(data, 'aside.gguf'));
  const broken = await run(['ask', sc.db, 'How many genres?', '--state-dir', sc.state], { env });
  assert.equal(broken.code, 1);
  assert.match(broken.stderr, /part 3 of 3 of the model is missing: .*tiny-00003-of-00003\.gguf; run the `tabletalk pull` that fetched it again/);
  const gone = await run(['models'], { env });
  assert.match(gone.stdout, /tiny-00001-of-00003\.gguf .* 2 of 3 parts: pull again  \[default\]/);
  // a later part given as the model: the first is named
  const later = await run(['ask', sc.db, 'hi', '--state-dir', sc.state, '--model-path', path.join(models, names[1])]);
  assert.equal(later.code, 1);
  assert.match(later.stderr, /tiny-00002-of-00003\.gguf is part 2 of 3 of a split model; give its first part, .*tiny-00001-of-00003\.gguf/);
});

test('a wrong sha256 on one part stops at that part and names it', { skip: !MKMODEL && 'no tt-mkmodel' }, async () => {
  const files = splitTiny(3);
  const names = Object.keys(files);
  const srv = await startFileServer(files, { wrongHash: names[2] });
  const { data, env } = pullEnv();
  const r = await run(['pull', srv.url(names[0])], { env });
  await srv.close();
  assert.equal(r.code, 1);
  assert.match(r.stderr, /part 3 of 3 \(tiny-00003-of-00003\.gguf\): the downloaded file's sha256 is [0-9a-f]{64} but the server announced f{64}; the download was deleted/);
  assert.deepEqual(fs.readdirSync(path.join(data, 'models')).sort(), names.slice(0, 2), 'the good parts are kept');
});
