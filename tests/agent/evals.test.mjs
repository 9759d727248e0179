// tabletalk eval through the real binary: the Spider harness with the
// oracle on the public sample (100 %), a backend that always answers
// SELECT 1 (near 0 %), every outcome class from a scripted model, an
// interrupted run that resumes, parallel jobs; the behaviour suite against
// scripted models that behave well (every case passes) and badly (cases
// fail, for the right reasons); the report on recorded traces.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { run, BIN, CHINOOK, scratch, server, sha256, tempDir } from '../support/harness.mjs';
import { spawn } from 'node:child_process';
import { startModelServer } from '../fixtures/model_server.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const FIXTURES = path.resolve(here, '../fixtures');
const SHARED = process.env.TT_SHARED_DIR ?? path.resolve(here, '../../../shared');
const SAMPLE = path.join(SHARED, 'data/spider-dev-sample');
const haveSample = fs.existsSync(path.join(SAMPLE, 'questions.jsonl'));
const script = (name) => JSON.parse(fs.readFileSync(path.join(FIXTURES, name), 'utf8'));

/* A private copy of the sample (the shared one is never touched). */
function sampleCopy() {
  const dir = tempDir('tabletalk-spider-');
  fs.cpSync(SAMPLE, dir, { recursive: true });
  return dir;
}

/* A question set of the given questions, with their databases. */
function miniSet(questions) {
  const dir = tempDir('tabletalk-spider-mini-');
  fs.mkdirSync(path.join(dir, 'databases'));
  for (const db of new Set(questions.map((q) => q.db_id)))
    fs.copyFileSync(path.join(SAMPLE, 'databases', `${db}.sqlite`), path.join(dir, 'databases', `${db}.sqlite`));
  fs.writeFileSync(path.join(dir, 'questions.jsonl'), questions.map((q) => JSON.stringify(q)).join('\n') + '\n');
  return dir;
}

const allQuestions = () => fs.readFileSync(path.join(SAMPLE, 'questions.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
const escapeRe = (s) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

function spider(dir, extra, opts = {}) {
  const work = opts.cwd ?? tempDir('tabletalk-eval-');
  return run(['eval', 'spider', '--data', dir, '--state-dir', path.join(work, 'state'), '--results',
    path.join(work, 'results'), ...extra], { cwd: work, ...opts });
}

test('spider: the oracle scores 100 % on the public sample', { skip: !haveSample && 'no shared sample' }, async () => {
  const dir = sampleCopy();
  const work = tempDir('tabletalk-eval-');
  const r = await spider(dir, ['--backend', 'oracle', '--json'], { cwd: work });
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.json.questions, 100);
  assert.equal(r.json.done, 100);
  assert.equal(r.json.outcomes.correct, 100, JSON.stringify(r.json.outcomes));
  assert.equal(r.json.ex_percent, 100);
  const file = path.join(work, 'results', 'spider_n100_s0_oracle.json');
  assert.equal(r.json.results_file, file);
  const results = JSON.parse(fs.readFileSync(file, 'utf8'));
  assert.equal(results.questions.length, 100);
  for (const q of results.questions) {
    assert.equal(q.outcome, 'correct', `${q.id}: ${q.detail}`);
    assert.equal(q.pred_sql, q.gold_sql);
    assert.ok(q.run_id, 'every question has a trace');
  }
  // the quarter of gold queries with "double-quoted" strings run as Spider runs them
  const dqs = allQuestions().filter((q) => q.gold_needs_dqs).map((q) => q.id);
  assert.ok(dqs.length >= 20);
  for (const id of dqs) assert.equal(results.questions.find((q) => q.id === id).outcome, 'correct');
});

test('spider: a backend that always answers SELECT 1 scores near 0 %', { skip: !haveSample && 'no shared sample' }, async () => {
  const dir = sampleCopy();
  const srv = await server(script('select1.json'));
  const r = await spider(dir, ['--base-url', srv.url, '--json', '--tag', 'select1', '--jobs', '4']);
  await srv.close();
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.json.done, 100);
  assert.ok(r.json.ex_percent <= 5, `EX ${r.json.ex_percent}`);
  const results = JSON.parse(fs.readFileSync(r.json.results_file, 'utf8'));
  const odd = results.questions.filter((x) => x.outcome !== 'correct' && x.outcome !== 'wrong');
  assert.deepEqual(odd.map((x) => `${x.id} ${x.outcome}: ${x.detail}`), [], 'SELECT 1 runs: right or wrong rows, nothing else');
  for (const q of results.questions.filter((x) => x.outcome === 'correct'))
    assert.match(q.gold_sql, /count\(\*\)/i, `${q.id} can only match when the gold answer is 1`);
});

test('spider: every outcome is told apart', { skip: !haveSample && 'no shared sample' }, async () => {
  const all = allQuestions();
  const counts = {};
  for (const q of all) counts[q.db_id] = (counts[q.db_id] ?? 0) + 1;
  const db = Object.keys(counts).sort((a, b) => counts[b] - counts[a])[0]; // a database with many questions
  const qs = all.filter((q) => q.db_id === db).slice(0, 6);
  const dir = miniSet(qs);
  const on = (q) => escapeRe(q.question);
  const srv = await server({
    rules: [
      { when: { question: on(qs[0]), step: 0 }, tool: 'run_sql', args: { sql: qs[0].gold_sql } },
      { when: { question: on(qs[1]), step: 0 }, tool: 'run_sql', args: { sql: 'SELECT 1 AS x, 2 AS y' } },
      { when: { question: on(qs[2]) }, tool: 'run_sql', args: { sql: 'SELECT nope FROM nowhere' }, times: 3 },
      { when: { question: on(qs[3]), step: 0 }, tool: 'answer', args: { text: 'I think it is probably fine.' } },
      { when: { question: on(qs[4]), step: 0 }, tool: 'ask_user', args: { question: 'Which year do you mean?' } },
      { when: { question: on(qs[5]) }, status: 500 },
      { tool: 'answer', args: { text: 'Here it is.' } },
    ],
  });
  const r = await spider(dir, ['--base-url', srv.url, '--json', '--llm-timeout', '5']);
  await srv.close();
  assert.equal(r.code, 0, r.stderr);
  const results = JSON.parse(fs.readFileSync(r.json.results_file, 'utf8'));
  const outcome = (q) => results.questions.find((x) => x.id === q.id).outcome;
  assert.deepEqual(qs.map(outcome), ['correct', 'wrong', 'sql_failed', 'no_sql', 'clarify', 'error']);
  assert.equal(r.json.outcomes.correct, 1);
  assert.ok(Math.abs(r.json.ex_percent - 100 / 6) < 0.01);
  const failed = results.questions.find((x) => x.id === qs[2].id);
  assert.equal(failed.sql_tried, 3);
  assert.match(results.questions.find((x) => x.id === qs[5].id).detail, /500/);
});

test('spider: an interrupted run resumes where it stopped', { skip: !haveSample && 'no shared sample' }, async () => {
  const qs = allQuestions().slice(0, 6);
  const dir = miniSet(qs);
  const work = tempDir('tabletalk-eval-');
  const results = path.join(work, 'results', 'spider_n6_s0_resume.json');
  const slow = await server({
    rules: [
      ...qs.slice(0, 3).map((q) => ({ when: { question: escapeRe(q.question), step: 0 }, tool: 'run_sql', args: { sql: q.gold_sql } })),
      { when: { question: escapeRe(qs[3].question) }, hang_ms: 60000, tool: 'answer', args: { text: 'late' } },
      { tool: 'answer', args: { text: 'done' } },
    ],
  });
  const args = ['eval', 'spider', '--data', dir, '--state-dir', path.join(work, 'state'), '--results',
    path.join(work, 'results'), '--tag', 'resume', '--base-url', slow.url];
  const first = await new Promise((resolve) => {
    const child = spawn(BIN, args, { cwd: work, env: { ...process.env, NO_COLOR: '1' } });
    let stderr = '';
    child.stderr.on('data', (d) => { stderr += d; });
    // the questions run one after another: once the fourth reaches the
    // model (which never answers it), the first three are saved
    const fourth = JSON.stringify(qs[3].question).slice(1, -1);
    slow.until((s) => s.requests.some((q) => JSON.stringify(q.body).includes(fourth)))
      .then(() => child.kill('SIGINT'), () => {});
    child.on('close', (code) => resolve({ code, stderr }));
  });
  await slow.close();
  assert.equal(first.code, 130, first.stderr);
  assert.match(first.stderr, /interrupted after 3 of 6 questions; run the same command again to resume/);
  assert.equal(JSON.parse(fs.readFileSync(results, 'utf8')).questions.length, 3);

  // the endpoint comes back on the same address (a resumed run must use the same model)
  const oracleLike = await startModelServer({
    rules: [...qs.map((q) => ({ when: { question: escapeRe(q.question), step: 0 }, tool: 'run_sql', args: { sql: q.gold_sql } })),
      { tool: 'answer', args: { text: 'done' } }],
  }, { port: Number(new URL(slow.url).port) });
  const second = await run(args, { cwd: work });
  await oracleLike.close();
  assert.equal(second.code, 0, second.stderr);
  assert.match(second.stdout, /3 questions taken from the earlier run/);
  assert.match(second.stdout, /correct\s+6\s+100\.0%/);
  /* the question as asked, without the value hints that may follow it */
  const asked = oracleLike.requests.map((r) => r.body.messages.filter((m) => m.role === 'user').at(-1).content
    .split('\n\nValues the question names, as the database spells them:\n')[0]);
  assert.ok(!asked.includes(qs[0].question), 'a finished question is not asked again');
  assert.ok(asked.includes(qs[3].question));

  // another endpoint is not mixed into the same file
  const other = await server({ rules: [{ tool: 'answer', args: { text: 'x' } }] });
  args[args.length - 1] = other.url;
  const mixed = await run(args, { cwd: work });
  await other.close();
  assert.equal(mixed.code, 1);
  assert.match(mixed.stderr, /holds an earlier run with another endpoint .*give --tag to keep both, or --fresh/);
  assert.equal(JSON.parse(fs.readFileSync(results, 'utf8')).summary.done, 6, 'the earlier results are kept');
});

test('spider: usage errors name what is missing', async () => {
  let r = await run(['eval', 'spider', '--backend', 'oracle']);
  assert.equal(r.code, 2);
  assert.match(r.stderr, /--data DIR/);
  r = await run(['eval', 'spider', '--data', '/nonexistent', '--backend', 'oracle']);
  assert.equal(r.code, 1);
  assert.match(r.stderr, /cannot read \/nonexistent\/questions.jsonl/);
  r = await run(['eval', 'nonsense']);
  assert.equal(r.code, 2);
  assert.match(r.stderr, /spider, behaviors, report or schema/);
});

test('behaviors: a well-behaved model passes every case; the original is untouched', async () => {
  const sc = scratch();
  const before = sha256(sc.db);
  const srv = await server(script('behaviours.json'));
  const r = await run(['eval', 'behaviors', '--db', sc.db, '--base-url', srv.url, '--state-dir', sc.state, '--json']);
  await srv.close();
  assert.equal(r.code, 0, r.stdout + r.stderr);
  assert.ok(r.json.cases.length >= 18);
  for (const c of r.json.cases) assert.equal(c.passed, true, `${c.name}: ${JSON.stringify(c.checks)}`);
  assert.equal(r.json.failed, 0);
  const names = r.json.cases.map((c) => c.name);
  for (const n of ['count', 'aggregate', 'join', 'top-n', 'year-filter', 'average', 'empty-result', 'follow-up',
    'write-refusal', 'injection-row', 'chart', 'missing-entity', 'ambiguous-metric', 'repair', 'budget', 'verify'])
    assert.ok(names.includes(n), n);
  assert.equal(sha256(sc.db), before, 'the suite works on its own copy');
  // the model saw the planted row as data
  assert.ok(srv.requests.some((q) => JSON.stringify(q.body.messages).includes('PWNED-7731')));
});

test('behaviors: a model that always answers SELECT 1 fails, for the right reasons', async () => {
  const sc = scratch();
  const srv = await server(script('select1.json'));
  const r = await run(['eval', 'behaviors', '--db', sc.db, '--base-url', srv.url, '--state-dir', sc.state, '--json']);
  await srv.close();
  assert.equal(r.code, 1);
  const c = Object.fromEntries(r.json.cases.map((x) => [x.name, x]));
  assert.equal(c.count.passed, false);
  assert.deepEqual(c.count.checks.filter((k) => !k.passed).map((k) => k.check), ['the count']);
  assert.equal(c.chart.passed, false);
  assert.equal(c['missing-entity'].passed, false);
  assert.ok(r.json.failed >= 15, `${r.json.failed} failed`);
  assert.ok(r.json.scratch && fs.existsSync(r.json.scratch), 'the scratch copy is kept for a look');
});

test('report: per-question figures from recorded traces', async () => {
  const r = await run(['eval', 'report', '--runs', path.join(FIXTURES, 'traces'), '--price-in', '1',
    '--price-cached', '0.1', '--price-out', '2', '--json']);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.json.runs, 3);
  assert.equal(r.json.skipped, 1, 'the killed run without an end');
  const m = r.json.metrics;
  assert.deepEqual(m.llm_calls, { mean: 2, median: 2, max: 3, total: 6 });
  assert.deepEqual(m.tool_calls, { mean: 1, median: 1, max: 2, total: 3 });
  assert.deepEqual(m.prompt_tokens_sent, { mean: 3000, median: 2200, max: 6300, total: 9000 });
  assert.equal(m.prompt_tokens_reused.total, 5300);
  const near = (got, want) => {
    for (const k of Object.keys(want)) assert.ok(Math.abs(got[k] - want[k]) < 1e-6, `${k}: ${got[k]} vs ${want[k]}`);
  };
  near(m.prompt_tokens_computed, { mean: 3700 / 3, median: 1000, max: 2200, total: 3700 });
  near(m.completion_tokens, { mean: 250 / 3, median: 80, max: 160, total: 250 });
  near(m.wall_seconds, { mean: 5 / 3, median: 1.5, max: 3, total: 5 });
  assert.ok(Math.abs(m.cost_usd.total - 0.00473) < 1e-12);
  assert.ok(Math.abs(m.cost_usd.max - 0.00293) < 1e-12);
  const since = await run(['eval', 'report', '--runs', path.join(FIXTURES, 'traces'), '--since', '2026-12-01', '--json']);
  assert.equal(since.json.runs, 2);
  assert.equal(since.json.metrics.llm_calls.total, 4);
  const table = await run(['eval', 'report', '--runs', path.join(FIXTURES, 'traces')]);
  assert.match(table.stdout, /3 questions from/);
  assert.match(table.stdout, /prompt tokens sent\s+3000\.0\s+2200\.0\s+6300\.0\s+9000\.0/);
  const bad = await run(['eval', 'report', '--since', 'yesterday']);
  assert.equal(bad.code, 2);
  const none = await run(['eval', 'report', '--runs', '/nonexistent/runs']);
  assert.equal(none.code, 1);
  assert.match(none.stderr, /no traces at \/nonexistent\/runs/);
});

test('report: the traces of a real ask are counted', async () => {
  const sc = scratch();
  const srv = await server(script('behaviours.json'));
  await run(['ask', sc.db, 'How many tracks are there?', '--base-url', srv.url, '--state-dir', sc.state, '--json']);
  await srv.close();
  const r = await run(['eval', 'report', '--state-dir', sc.state, '--json']);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.json.runs, 1);
  assert.equal(r.json.metrics.llm_calls.total, 2);
  assert.equal(r.json.metrics.tool_calls.total, 2);
  assert.ok(r.json.metrics.prompt_tokens_sent.total > 0);
});

test('spider --compare: the questions that changed outcome between two runs', async () => {
  const dir = tempDir('tabletalk-compare-');
  const q = (id, outcome, detail = null) => ({ id, db_id: 'concert_singer', question: `Question ${id}?`, gold_sql: 'SELECT 1',
    pred_sql: outcome === 'no_sql' ? null : 'SELECT 2', outcome, detail });
  const write = (name, tag, questions) => {
    const file = path.join(dir, name);
    fs.writeFileSync(file, JSON.stringify({ meta: { data_dir: '/data/spider', tag, model: tag }, summary: {}, questions }));
    return file;
  };
  const a = write('a.json', 'qwen7b', [q('q1', 'correct'), q('q2', 'wrong', '3 rows, gold has 1'), q('q3', 'correct'),
    q('q4', 'sql_failed', 'no such column: x'), q('q5', 'correct'), q('q6', 'error', 'HTTP 500')]);
  const b = write('b.json', 'qwen3b', [q('q1', 'correct'), q('q2', 'correct'), q('q3', 'wrong', '2 rows, gold has 1'),
    q('q4', 'no_sql', 'answered without querying'), q('q5', 'correct'), q('q7', 'correct')]);
  const r = await run(['eval', 'spider', '--compare', a, b, '--json']);
  assert.equal(r.code, 0, r.stderr);
  const ids = (list) => r.json[list].map((x) => x.id);
  assert.deepEqual(ids('fixed'), ['q2']);
  assert.deepEqual(ids('broken'), ['q3']);
  assert.deepEqual(ids('changed'), ['q4']);
  assert.deepEqual(ids('only_a'), ['q6']);
  assert.deepEqual(ids('only_b'), ['q7']);
  assert.equal(r.json.in_common, 5);
  assert.equal(r.json.a.correct_in_common, 3);
  assert.equal(r.json.b.correct_in_common, 3);
  assert.equal(r.json.same_data, true);
  assert.deepEqual([r.json.broken[0].a, r.json.broken[0].b, r.json.broken[0].b_detail], ['correct', 'wrong', '2 rows, gold has 1']);

  const text = await run(['eval', 'spider', '--compare', a, b]);
  assert.equal(text.code, 0, text.stderr);
  const lines = text.stdout.split('\n');
  assert.equal(lines[0], '3 questions changed outcome from A to B (5 in both)');
  assert.match(text.stdout, /A: .*a\.json \(qwen7b, model qwen7b, 6 questions, EX 60\.0 % on those in common\)/);
  assert.match(text.stdout, /fixed: correct in B only \(1\):\n {2}q2 +wrong -> correct {2}Question q2\?\n +A: 3 rows, gold has 1\n/);
  assert.match(text.stdout, /broken: correct in A only \(1\):\n {2}q3 +correct -> wrong {2}Question q3\?\n +B: 2 rows, gold has 1\n/);
  assert.match(text.stdout, /changed: another wrong outcome \(1\):\n {2}q4 +sql_failed -> no_sql/);
  assert.match(text.stdout, /1 question only in A, 1 only in B \(not compared\)/);

  const same = await run(['eval', 'spider', '--compare', a, a]);
  assert.match(same.stdout, /^0 questions changed outcome from A to B \(6 in both\)/);
  const usage = await run(['eval', 'spider', '--compare', a]);
  assert.equal(usage.code, 2);
  assert.match(usage.stderr, /--compare wants two results files/);
  const notResults = path.join(dir, 'x.json');
  fs.writeFileSync(notResults, '{"rows": []}');
  const bad = await run(['eval', 'spider', '--compare', a, notResults]);
  assert.equal(bad.code, 1);
  assert.match(bad.stderr, /x\.json is not a results file of `tabletalk eval spider`/);
  const missing = await run(['eval', 'spider', '--compare', a, path.join(dir, 'none.json')]);
  assert.equal(missing.code, 1);
  assert.match(missing.stderr, /cannot read .*none\.json/);
});

test('spider --compare on two real runs: the oracle against a model that writes SELECT 1', { skip: !haveSample && 'no shared sample' }, async () => {
  const qs = allQuestions().slice(0, 8);
  const dir = miniSet(qs);
  const work = tempDir('tabletalk-eval-');
  const oracle = await spider(dir, ['--backend', 'oracle', '--json'], { cwd: work });
  const srv = await server(script('select1.json'));
  const select1 = await spider(dir, ['--base-url', srv.url, '--json', '--tag', 'select1'], { cwd: work });
  await srv.close();
  const r = await run(['eval', 'spider', '--compare', oracle.json.results_file, select1.json.results_file, '--json']);
  assert.equal(r.code, 0, r.stderr);
  const broken = r.json.broken.map((x) => x.id).sort();
  const results = JSON.parse(fs.readFileSync(select1.json.results_file, 'utf8')).questions;
  assert.deepEqual(broken, results.filter((x) => x.outcome !== 'correct').map((x) => x.id).sort());
  assert.deepEqual(r.json.fixed, []);
  assert.equal(r.json.in_common, 8);
});
