// The embedded engine through the real binary: `ask` on a tiny
// random-weight model (its answers are nonsense, the protocol is not), the
// prefix state reused by the next process, and `pull` against a loopback
// server (download, resume after a cut, wrong sha256, no sha256).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { run, scratch, traceEvents, tempDir } from './harness.mjs';
import { startFileServer } from '../fixtures/file_server.mjs';

const TINY = process.env.TT_TINY_MODEL;

test('ask runs end to end on the embedded engine, and the next process reuses the prefix', { skip: !TINY && 'no tiny model' }, async () => {
  const sc = scratch();
  const cache = path.join(sc.dir, 'cache');
  const args = ['ask', sc.db, 'Which 3 genres have the most tracks?', '--model-path', TINY,
    '--state-dir', sc.state, '--json', '--max-tokens', '300'];
  const env = { TABLETALK_CACHE_DIR: cache };
  const first = await run(args, { env });
  assert.equal(first.code === 0 || first.code === 1, true, first.stderr);
  assert.ok(['answered', 'clarify', 'budget', 'failed'].includes(first.json.status));
  const calls = traceEvents(first.json.trace).filter((e) => e.event === 'llm_call');
  assert.ok(calls.length >= 1);
  for (const c of calls) {
    assert.equal(c.error, undefined, 'no protocol error: every reply is a tool call');
    assert.ok(['run_sql', 'ask_user', 'answer'].includes(c.tool));
  }
  const start = traceEvents(first.json.trace)[0];
  assert.equal(start.backend, 'llama.cpp');
  assert.ok(fs.readdirSync(cache).some((f) => f.startsWith('prefix-')), 'the prefix state was saved');
  const second = await run(args, { env });
  const c2 = traceEvents(second.json.trace).find((e) => e.event === 'llm_call');
  assert.ok(c2['gen_ai.usage.cache_read.input_tokens'] > 0, 'restored from the saved prefix');
  assert.ok(c2['gen_ai.usage.cache_read.input_tokens'] < c2['gen_ai.usage.input_tokens']);
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

test('pull --list names the known models; bad names are usage errors', async () => {
  const list = await run(['pull', '--list']);
  assert.match(list.stdout, /omnisql-7b .*\[default\]/);
  assert.match(list.stdout, /qwen2.5-coder-1.5b/);
  const bad = await run(['pull', 'no-such-model']);
  assert.equal(bad.code, 2);
});
