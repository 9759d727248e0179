// The recorded conversations in bench/, replayed as docs/contributing/benchmarks.md
// says, on the tiny random-weight model: every documented `tabletalk bench`
// command line (its options read from the document itself) over every
// question of every recording. A recording the agent no longer follows (an
// answer the number check pushes back, a changed tool result) fails here
// rather than in the next person's measurement.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { run, tempDir } from '../support/harness.mjs';

const ROOT = path.resolve(path.dirname(new URL(import.meta.url).pathname), '../..');
const TINY = process.env.TT_TINY_MODEL;
const RECORDINGS = fs.readdirSync(path.join(ROOT, 'bench')).filter((f) => f.endsWith('.json'))
  .map((f) => path.join(ROOT, 'bench', f));

/* The options of each documented bench command: the indented lines
 * "build/tabletalk bench RECORDING --model-path M [options]   # comment". */
function documentedOptions() {
  const doc = fs.readFileSync(path.join(ROOT, 'docs/contributing/benchmarks.md'), 'utf8');
  const out = [];
  for (const line of doc.split('\n')) {
    const m = /^\s+build\/tabletalk bench (\S+) --model-path M\b([^#]*)/.exec(line);
    if (!m) continue;
    assert.ok(fs.existsSync(path.join(ROOT, m[1])), `docs/contributing/benchmarks.md names ${m[1]}, which is not there`);
    out.push(m[2].trim().split(/\s+/).filter(Boolean));
  }
  return out;
}

test('bench/ holds recordings and docs/contributing/benchmarks.md documents bench commands', () => {
  assert.ok(RECORDINGS.length > 0, 'no recording in bench/');
  assert.ok(documentedOptions().length > 0, 'no `build/tabletalk bench ... --model-path M` line in docs/contributing/benchmarks.md');
});

for (const rec of RECORDINGS) {
  const name = path.basename(rec);
  const questions = JSON.parse(fs.readFileSync(rec, 'utf8')).questions;

  test(`${name}: every question replays its recorded calls, one model step each`, { skip: !TINY && 'no tiny model' }, async () => {
    const dir = tempDir();
    const r = await run(['bench', rec, '--model-path', TINY, '--json'],
      { cwd: dir, env: { TABLETALK_CACHE_DIR: path.join(dir, 'cache') } });
    assert.equal(r.code, 0, r.stderr);
    const steps = r.json.steps.map((s) => `${s.question}:${s.tool}`);
    const recorded = questions.flatMap((q, i) => q.calls.map((c) => `${i + 1}:${c.name}`));
    assert.deepEqual(steps, recorded);
  });

  test(`${name}: each command of docs/contributing/benchmarks.md runs as written`, { skip: !TINY && 'no tiny model' }, async () => {
    const dir = tempDir(); // one cache: the documented order is cold, then warm
    for (const opts of documentedOptions()) {
      const r = await run(['bench', rec, '--model-path', TINY, ...opts],
        { cwd: dir, env: { TABLETALK_CACHE_DIR: path.join(dir, 'cache') } });
      const cmd = `tabletalk bench ${name} --model-path tiny.gguf ${opts.join(' ')}`;
      assert.equal(r.code, 0, `${cmd}: ${r.stderr}`);
      for (let i = 1; i <= questions.length; i++)
        assert.match(r.stdout, new RegExp(`^${i} +\\d+ +answer `, 'm'), `${cmd}: question ${i} has no answer step`);
      if (opts.includes('--grammar-overhead')) assert.match(r.stdout, /^grammar: /m, cmd);
    }
  });
}
