// `tabletalk doctor`: the scripted model server dressed up as llama-server,
// Ollama, vLLM and LM Studio (their own routes answer with what the real
// ones send), plus a model that only writes text, an endpoint that is not
// there, a reasoning model, and the tiny local GGUF. Each report must say
// what works, what tabletalk does about what does not, and exit 0 only
// when a tool call came back.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { run, server } from '../support/harness.mjs';

const TINY = process.env.TT_TINY_MODEL;
const SQL = 'SELECT COUNT(*) FROM Genre';

/* A model that behaves: run_sql while it is offered, answer when it alone is. */
const goodRules = [
  { when: { tools_include: 'run_sql' }, tool: 'run_sql', args: { sql: SQL } },
  { tool: 'answer', args: { text: 'There are 25 genres.' } },
];

const doctor = (args) => run(['doctor', ...args, '--json']);
const check = (r, name) => r.json.checks.find((c) => c.name === name);

test('llama-server: its context from /v1/models meta, every probe ok, a small context named', async () => {
  const srv = await server({ rules: goodRules, routes: {
    'GET /v1/models': { object: 'list', data: [{ id: 'qwen2.5-coder-7b-q4_k_m.gguf', owned_by: 'llamacpp', meta: { n_ctx: 4096, n_ctx_train: 32768 } }] },
    'GET /props': { default_generation_settings: { n_ctx: 4096 }, chat_template_caps: { supports_tool_calls: true } },
  } });
  const r = await doctor(['--base-url', srv.url]);
  await srv.close();
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.json.usable, true);
  assert.equal(r.json.server, 'llama-server');
  assert.equal(r.json.context, 4096);
  assert.equal(check(r, 'model').status, 'ok', 'llama-server serves its model whatever the name');
  assert.equal(check(r, 'context').status, 'warn');
  assert.match(check(r, 'context').detail, /4096 tokens per request \(\/v1\/models meta\.n_ctx\); the model was trained for 32768/);
  assert.match(check(r, 'context').action, /-c 16384/);
  for (const name of ['tool calls', 'tool_choice', 'streaming', 'forced tool']) assert.equal(check(r, name).status, 'ok', name);
  assert.match(check(r, 'forced tool').detail, /^answer called/);
  const forced = srv.requests.filter((q) => q.path.endsWith('/chat/completions') && q.body.tools.length === 1);
  assert.equal(forced.length, 1);
  assert.equal(forced[0].body.tool_choice, 'required');
});

test('Ollama: no num_ctx means its default context, and tool_choice is ignored', async () => {
  const srv = await server({ model: 'qwen2.5-coder:7b', rules: [
    { when: { question: 'hello' }, text: 'Hello!' },
    ...goodRules,
  ], routes: {
    'GET /api/version': { version: '0.6.2' },
    'POST /api/show': { parameters: 'temperature 0.7\nstop "<|im_end|>"', model_info: { 'general.architecture': 'qwen2', 'qwen2.context_length': 32768 }, capabilities: ['completion', 'tools'] },
  } });
  const r = await doctor(['--base-url', srv.url, '--model', 'qwen2.5-coder:7b']);
  await srv.close();
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.json.server, 'ollama');
  assert.equal(check(r, 'model').status, 'ok');
  const ctx = check(r, 'context');
  assert.equal(ctx.status, 'warn');
  assert.match(ctx.detail, /Ollama's default context applies .* \/v1 cannot raise it \(the model itself takes 32768\)/);
  assert.match(ctx.action, /OLLAMA_CONTEXT_LENGTH=16384/);
  assert.match(ctx.action, /num_ctx/);
  const show = srv.requests.find((q) => q.path === '/api/show');
  assert.deepEqual(show.body, { model: 'qwen2.5-coder:7b' });
  const tc = check(r, 'tool_choice');
  assert.equal(tc.status, 'warn');
  assert.match(tc.detail, /not enforced \(Ollama has no tool_choice\): the model replied in text/);
  assert.match(tc.action, /pushes a plain-text reply back once/);
});

test('Ollama with num_ctx set: that is the context', async () => {
  const srv = await server({ model: 'm', rules: goodRules, routes: {
    'GET /api/version': { version: '0.9.0' },
    'POST /api/show': { parameters: 'num_ctx 16384\ntemperature 0', model_info: { 'llama.context_length': 131072 } },
  } });
  const r = await doctor(['--base-url', srv.url, '--model', 'm']);
  await srv.close();
  assert.equal(check(r, 'context').status, 'ok');
  assert.match(check(r, 'context').detail, /16384 tokens per request \(\/api\/show parameters num_ctx\)/);
});

test('vLLM: max_model_len, and a call that comes back as text is recovered but named', async () => {
  const fence = '```json\n{"name": "run_sql", "arguments": {"sql": "SELECT COUNT(*) FROM Genre"}}\n```';
  const srv = await server({ rules: [{ when: { tools_include: 'run_sql' }, text: fence }, { tool: 'answer', args: { text: 'ok' } }], routes: {
    'GET /v1/models': { object: 'list', data: [{ id: 'Qwen/Qwen2.5-Coder-7B-Instruct', object: 'model', owned_by: 'vllm', max_model_len: 32768 }] },
  } });
  const r = await doctor(['--base-url', srv.url, '--model', 'Qwen/Qwen2.5-Coder-7B-Instruct']);
  await srv.close();
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.json.server, 'vllm');
  assert.equal(r.json.context, 32768);
  assert.equal(check(r, 'context').status, 'ok');
  const calls = check(r, 'tool calls');
  assert.equal(calls.status, 'warn');
  assert.match(calls.detail, /run_sql was called, but as text in the reply/);
  assert.match(calls.action, /--tool-call-parser hermes/);
});

test('LM Studio: the loaded instance\'s context', async () => {
  const srv = await server({ rules: goodRules, routes: {
    'GET /api/v1/models': { models: [
      { type: 'llm', key: 'other', loaded_instances: [], max_context_length: 4096 },
      { type: 'llm', key: 'qwen2.5-7b-instruct', loaded_instances: [{ id: 'qwen2.5-7b-instruct', config: { context_length: 4096 } }], max_context_length: 32768, capabilities: { trained_for_tool_use: true } },
    ] },
  } });
  const r = await doctor(['--base-url', srv.url, '--model', 'qwen2.5-7b-instruct']);
  await srv.close();
  assert.equal(r.json.server, 'lm-studio');
  assert.equal(check(r, 'context').status, 'warn');
  assert.match(check(r, 'context').detail, /4096 tokens per request \(\/api\/v1\/models loaded context_length\); the model was trained for 32768/);
  assert.match(check(r, 'context').action, /lms load --context-length/);
});

test('a model that only writes text is not usable', async () => {
  const srv = await server({ rules: [{ text: 'I cannot call tools, but there are many genres.' }] });
  const r = await doctor(['--base-url', srv.url]);
  await srv.close();
  assert.equal(r.code, 1);
  assert.equal(r.json.usable, false);
  assert.equal(check(r, 'tool calls').status, 'fail');
  assert.match(check(r, 'tool calls').action, /pushes a plain-text reply back once/);
  const text = await run(['doctor', '--base-url', srv.url]);
  assert.equal(text.code, 1);
});

test('an endpoint that is not there: one clear failure, no model calls', async () => {
  const srv = await server({ rules: goodRules });
  const url = srv.url;
  await srv.close();
  const r = await doctor(['--base-url', url, '--llm-timeout', '2']);
  assert.equal(r.code, 1);
  const e = check(r, 'endpoint');
  assert.equal(e.status, 'fail');
  assert.match(e.detail, /no answer from http:\/\/127\.0\.0\.1:\d+\/v1/);
  assert.match(e.action, /check --base-url/);
  assert.equal(check(r, 'tool calls'), undefined);
});

test('a wrong API key is named', async () => {
  const deny = await server({ rules: [{ status: 401, body: { error: { message: 'Incorrect API key provided', code: 'invalid_api_key' } } }] });
  const r = await doctor(['--base-url', deny.url]);
  await deny.close();
  assert.equal(r.code, 1);
  assert.match(check(r, 'tool calls').detail, /HTTP 401: Incorrect API key provided; check the API key/);
});

test('a reasoning model: what tabletalk adapted is reported', async () => {
  const srv = await server({ rules: [
    { when: { has_key: 'temperature' }, status: 400, body: { error: { message: "Unsupported value: 'temperature' does not support 0 with this model.", param: 'temperature', code: 'unsupported_value' } } },
    ...goodRules,
  ] });
  const r = await doctor(['--base-url', srv.url, '--model', 'o4-mini']);
  await srv.close();
  assert.equal(r.code, 0, r.stderr);
  assert.match(check(r, 'adapted').detail, /max_completion_tokens and no temperature \(an OpenAI reasoning model, by its name\)/);
  assert.ok(srv.requests.filter((q) => q.body?.messages).every((q) => q.body.temperature === undefined));
});

test('text output: one line per check, the action under it, the verdict last', async () => {
  const srv = await server({ rules: goodRules });
  const r = await run(['doctor', '--base-url', srv.url]);
  await srv.close();
  assert.equal(r.code, 0, r.stderr);
  const lines = r.stdout.trim().split('\n');
  assert.match(lines[0], /^tabletalk doctor: http:\/\/127\.0\.0\.1:\d+\/v1, model "default"$/);
  assert.ok(lines.some((l) => /^ {2}ok {4}tool calls {3}run_sql called/.test(l)));
  assert.ok(lines.some((l) => /^ {21}-> pass --model NAME/.test(l)));
  assert.equal(lines.at(-1), 'usable: tabletalk can ask questions with this model');
});

test('usage errors and help', async () => {
  assert.equal((await run(['doctor', '--base-url', 'http://127.0.0.1:9/v1', '--model-path', 'x.gguf'])).code, 2);
  assert.equal((await run(['doctor', 'extra'])).code, 2);
  const help = await run(['doctor', '--help']);
  assert.equal(help.code, 0);
  assert.match(help.stdout, /Usage: tabletalk doctor/);
  const none = await run(['doctor'], { cwd: '/' });
  assert.equal(none.code, 1);
  assert.match(none.stderr, /no model to probe: give --base-url URL or --model-path FILE/);
});

test('--model-path: the local engine loads and its grammar gives tool calls', { skip: !TINY && 'no tiny model' }, async () => {
  const r = await doctor(['--model-path', TINY, '--max-tokens', '200', '--ctx', '2048']);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.json.backend, 'llama.cpp');
  assert.equal(check(r, 'model file').status, 'ok');
  assert.match(check(r, 'context').detail, /2048 tokens \(--ctx\)/);
  assert.ok(['ok', 'warn'].includes(check(r, 'tool calls').status));
  assert.match(check(r, 'tool calls').detail, /(run_sql|answer) called with arguments that fit its schema/);
  assert.match(check(r, 'forced tool').detail, /^answer called/);
  const missing = await doctor(['--model-path', '/nonexistent.gguf']);
  assert.equal(missing.code, 1);
  assert.match(check(missing, 'model file').detail, /no model file at \/nonexistent\.gguf/);
});
