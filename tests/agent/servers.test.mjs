// The reply shapes real servers send (tests/fixtures/endpoints/*.json:
// llama-server --jinja, vLLM with the hermes parser, Ollama's /v1, LM
// Studio, OpenAI), each served by the scripted model and run through the
// real binary. Every shape must end as a correct tool call, one push-back,
// or a clear error: never as JSON shown as the answer. Also the request
// side: the forced last call, reasoning models, a cut reply's retry.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { spawn } from 'node:child_process';
import { ask, BIN, run, scratch, server, traceEvents } from '../support/harness.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const FIXTURES = path.resolve(here, '../fixtures/endpoints');
const SQL = 'SELECT COUNT(*) FROM Genre';
const ANSWER = 'There are 25 genres.';

/* The scripted model for one shape: the shape's own rules, its reply once,
 * then a model that behaves (an answer once the count is in, else the query). */
function scriptFor(shape) {
  const rules = [...(shape.rules ?? [])];
  if (shape.reply) rules.push({ times: 1, ...shape.reply });
  rules.push({ when: { last_tool: '\\b25\\b' }, tool: 'answer', args: { text: ANSWER } });
  return { rules, fallback: { tool: 'run_sql', args: { sql: SQL } } };
}

const looksLikeJson = (s) => typeof s === 'string' && /^\s*[[{`<]|"arguments"|"name"\s*:/.test(s);

function checkCall(shape, r, srv) {
  const e = shape.expect;
  assert.equal(r.code, 0, `${r.stderr}\n${r.stdout}`);
  assert.equal(r.json.answer, ANSWER);
  assert.deepEqual(r.json.rows, [[25]]);
  const reqs = srv.requests.filter((q) => q.path.endsWith('/chat/completions'));
  const adapted = (e.adapted_requests ?? 0) + (e.retried_with_room || e.max_tokens_after ? 1 : 0);
  assert.equal(reqs.length, e.requests ?? 2 + adapted, 'one request per step: no push-back, no corrective retry');
  // the call went back to the model exactly as a call to run_sql (a name set once)
  const call = reqs.at(-1).body.messages.find((m) => m.tool_calls)?.tool_calls[0];
  assert.equal(call.function.name, e.call);
  assert.deepEqual(JSON.parse(call.function.arguments), { sql: SQL });
  const events = traceEvents(r.json.trace);
  const ev = events.filter((x) => x.event === 'model_call');
  assert.equal(ev[0].tool, e.call);
  /* a thought comes right before the call it led to */
  const first = events.indexOf(ev[0]);
  const thought = events[first - 1]?.event === 'thought' ? events[first - 1] : undefined;
  if (e.thinking) assert.match(thought?.text ?? '', new RegExp(e.thinking), 'reasoning and text before the call are traced');
  else assert.equal(thought, undefined);
  assert.doesNotMatch(r.json.answer, /think|reason/i);
  if (e.retried_with_room) assert.equal(reqs[1].body.max_tokens, 2 * reqs[0].body.max_tokens);
  if (e.max_tokens_after) assert.equal(reqs[1].body.max_tokens, e.max_tokens_after);
  if (e.sent_max_completion_tokens) {
    const last = reqs.at(-1).body;
    assert.equal(last.max_tokens, undefined);
    assert.equal(typeof last.max_completion_tokens, 'number');
  }
  if (e.sent_no_temperature) assert.equal(reqs.at(-1).body.temperature, undefined);
}

function checkPushBack(shape, r, srv) {
  assert.equal(r.code, 0, `${r.stderr}\n${r.stdout}`);
  assert.equal(r.json.answer, ANSWER, 'the text was not taken as the answer');
  const reqs = srv.requests;
  assert.equal(reqs.length, 3, 'one push-back, then the call and the answer');
  const pushed = reqs[1].body.messages.at(-1);
  assert.equal(pushed.role, 'user');
  assert.match(pushed.content, /plain text, but every reply must be exactly one tool call/);
  for (const tool of ["run_sql", "make_chart", "ask_user", "answer"]) assert.ok(pushed.content.includes(tool), tool);
  const events = traceEvents(r.json.trace);
  assert.ok(events.some((x) => x.event === 'warning' && /plain-text reply/.test(x.message)));
}

function checkError(shape, r, srv) {
  const e = shape.expect;
  assert.equal(r.code, 1, r.stdout);
  assert.match(r.json.error, new RegExp(e.error));
  assert.ok(!looksLikeJson(r.json.answer), `no JSON shown as the answer: ${r.json.answer}`);
  if (e.requests) assert.equal(srv.requests.length, e.requests, 'not retried');
}

for (const file of fs.readdirSync(FIXTURES).filter((f) => f.endsWith('.json')).sort()) {
  const fixture = JSON.parse(fs.readFileSync(path.join(FIXTURES, file), 'utf8'));
  describe(fixture.server, () => {
    for (const shape of fixture.shapes) {
      test(shape.name, async () => {
        const sc = scratch();
        const srv = await server(scriptFor(shape));
        const extra = [...(shape.stream ? [] : ['--no-stream']), ...(shape.model ? ['--model', shape.model] : [])];
        const r = await ask(sc, srv, 'How many genres are there?', extra);
        await srv.close();
        if (shape.expect.call) checkCall(shape, r, srv);
        else if (shape.expect.push_back) checkPushBack(shape, r, srv);
        else checkError(shape, r, srv);
        if (shape.expect.from_text) {
          const ev = traceEvents(r.json.trace).find((x) => x.event === 'model_call');
          assert.equal(ev.text, undefined, 'recovered as a call, not kept as text');
        }
      });
    }
  });
}

describe('what tabletalk sends and how it ends', () => {
  test('the forced last call is tool_choice "required" with only answer offered', async () => {
    const sc = scratch();
    const srv = await server({ rules: [
      { when: { tools_include: 'run_sql' }, tool: 'run_sql', args: { sql: 'SELECT nope FROM Genre' } },
      { tool: 'answer', args: { text: 'The queries failed.' } },
    ] });
    const r = await ask(sc, srv, 'How many genres?');
    await srv.close();
    assert.equal(r.json.answer, 'The queries failed.');
    const last = srv.requests.at(-1).body;
    assert.equal(last.tool_choice, 'required', 'not a named tool_choice (llama-server makes that "auto")');
    assert.deepEqual(last.tools.map((t) => t.function.name), ['answer']);
    for (const q of srv.requests.slice(0, -1)) {
      assert.equal(q.body.tool_choice, 'required');
      assert.equal(q.body.tools.length, 4);
    }
  });

  test('plain text twice: the second is the answer, its numbers checked', async () => {
    const sc = scratch();
    const srv = await server({ rules: [{ text: 'I am a plain chat model and there are 42 genres.' }] });
    const r = await ask(sc, srv, 'How many genres?');
    await srv.close();
    assert.equal(r.code, 0);
    assert.equal(srv.requests.length, 2);
    assert.equal(r.json.answer, 'I am a plain chat model and there are 42 genres.');
    assert.equal(r.json.verified, 'unbacked', 'the answer check still runs');
  });

  test('a call written as text that cannot be used, twice, fails with a clear error', async () => {
    const sc = scratch();
    const bad = '<tool_call>\n{"name": "lookup_table", "arguments": {"table": "Genre"}}\n</tool_call>';
    const srv = await server({ rules: [{ text: bad }] });
    const r = await ask(sc, srv, 'How many genres?');
    await srv.close();
    assert.equal(r.code, 1);
    assert.match(r.json.error, /wrote a tool call \(or JSON\) as plain text that could not be used/);
    assert.match(r.json.error, /tabletalk doctor/);
    assert.ok(!r.json.answer || !r.json.answer.includes('lookup_table'), 'the blob is not the answer');
  });

  test('bare JSON that is no call is not shown as the answer either', async () => {
    const sc = scratch();
    const srv = await server({ rules: [{ text: '{"result": 25}' }] });
    const r = await ask(sc, srv, 'How many genres?', ['--no-stream']);
    await srv.close();
    assert.equal(r.code, 1);
    assert.ok(!r.json.answer || !r.json.answer.includes('{'));
  });

  test('a call streamed as text never reaches the terminal; reasoning neither', async () => {
    const sc = scratch();
    const call = '<tool_call>\n{"name": "run_sql", "arguments": {"sql": "SELECT COUNT(*) FROM Genre"}}\n</tool_call>';
    const srv = await server({ rules: [
      { when: { step: 0 }, sse: [
        ...call.match(/.{1,6}/gs).map((c) => ({ choices: [{ index: 0, delta: { content: c }, finish_reason: null }] })),
        { choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] }, '[DONE]'] },
      { sse: [
        { choices: [{ index: 0, delta: { reasoning_content: 'SECRET-REASONING' }, finish_reason: null }] },
        { choices: [{ index: 0, delta: { tool_calls: [{ index: 0, id: 'c2', type: 'function', function: { name: 'answer', arguments: '{"text": "There are 25 genres."}' } }] }, finish_reason: 'tool_calls' }] },
        '[DONE]'] },
    ] });
    // util-linux's script gives the command a pseudo-terminal: what streams is seen
    const q = (x) => `'${String(x).replaceAll("'", "'\\''")}'`;
    const cmd = [BIN, 'ask', sc.db, 'How many genres?', '--base-url', srv.url, '--state-dir', sc.state].map(q).join(' ');
    const out = await new Promise((resolve, reject) => {
      const child = spawn('script', ['-qec', cmd, '/dev/null'], { env: { ...process.env, NO_COLOR: '1', TABLETALK_MODEL_PATH: '' } });
      let text = '';
      child.stdout.on('data', (d) => { text += d; });
      child.on('error', reject);
      child.on('close', () => resolve(text));
    });
    await srv.close();
    assert.equal(srv.requests.length, 2, out);
    assert.match(out, /There are 25 genres\./);
    assert.ok(!out.includes('tool_call') && !out.includes('"arguments"'), `the call text was shown:\n${out}`);
    assert.ok(!out.includes('SECRET-REASONING'), 'reasoning is not shown');
  });

  test('a reply cut twice is reported as cut, with what to raise', async () => {
    const sc = scratch();
    const srv = await server({ rules: [{ sse: [
      { choices: [{ index: 0, delta: { content: 'The number of genres in the database is' }, finish_reason: null }] },
      { choices: [{ index: 0, delta: {}, finish_reason: 'length' }] }, '[DONE]'] }] });
    const r = await ask(sc, srv, 'How many genres?', ['--max-tokens', '100']);
    await srv.close();
    assert.equal(r.code, 1);
    assert.match(r.json.error, /cut at the token limit \(finish_reason "length" at max_tokens 200, already retried with twice the room\): raise --max-tokens/);
    assert.deepEqual(srv.requests.map((q) => q.body.max_tokens), [100, 200]);
  });

  test('reasoning models by name get max_completion_tokens and no temperature', async () => {
    for (const model of ['o1', 'o3-mini', 'o4-mini-2025-04-16', 'gpt-5', 'openai/gpt-5-mini']) {
      const sc = scratch();
      const srv = await server({ rules: [{ tool: 'answer', args: { text: 'ok' } }] });
      const r = await ask(sc, srv, 'hi', ['--model', model]);
      await srv.close();
      assert.equal(r.code, 0, r.stderr);
      const body = srv.requests[0].body;
      assert.equal(body.max_tokens, undefined, model);
      assert.equal(body.max_completion_tokens, 2048, model);
      assert.equal(body.temperature, undefined, model);
    }
    for (const model of ['gpt-4o-mini', 'omni-sql', 'o3x', 'qwen2.5-coder:7b']) {
      const sc = scratch();
      const srv = await server({ rules: [{ tool: 'answer', args: { text: 'ok' } }] });
      await ask(sc, srv, 'hi', ['--model', model]);
      await srv.close();
      assert.equal(srv.requests[0].body.max_tokens, 2048, model);
      assert.equal(srv.requests[0].body.temperature, 0, model);
    }
  });

  test('an unsupported parameter is adapted to once per session, not per call', async () => {
    const sc = scratch();
    const srv = await server({ rules: [
      { when: { has_key: 'parallel_tool_calls' }, status: 400,
        body: { error: { message: "Unsupported parameter: 'parallel_tool_calls' is not supported with this model.", type: 'invalid_request_error', param: 'parallel_tool_calls', code: 'unsupported_parameter' } } },
      { when: { step: 0 }, tool: 'run_sql', args: { sql: SQL } },
      { tool: 'answer', args: { text: ANSWER } },
    ] });
    const r = await ask(sc, srv, 'How many genres?');
    await srv.close();
    assert.equal(r.code, 0, r.stderr);
    assert.equal(srv.requests.length, 3, 'one refused request, then two that pass');
    assert.equal(srv.requests[2].body.parallel_tool_calls, undefined);
  });

  test('a 400 that is about something else gets no tool_choice hint', async () => {
    const sc = scratch();
    const srv = await server({ rules: [{ status: 400, body: { error: { message: "'messages' must contain at least one message", type: 'invalid_request_error' } } }] });
    const r = await ask(sc, srv, 'How many genres?');
    await srv.close();
    assert.equal(r.code, 1);
    assert.doesNotMatch(r.json.error, /tool_choice/);
    assert.match(r.json.error, /HTTP 400: 'messages' must contain at least one message; the endpoint refused the request \(`tabletalk doctor/);
  });
  test('--show-thinking prints the reasoning on stderr, as "think" lines; the answer stays clean', async () => {
    const rules = [
      { when: { step: 0 }, sse: [
        { choices: [{ index: 0, delta: { reasoning_content: 'The genres are in Genre.\nCount them.' }, finish_reason: null }] },
        { choices: [{ index: 0, delta: { tool_calls: [{ index: 0, id: 'c1', type: 'function', function: { name: 'run_sql', arguments: '{"sql": "SELECT COUNT(*) FROM Genre"}' } }] }, finish_reason: 'tool_calls' }] },
        '[DONE]'] },
      { tool: 'answer', args: { text: ANSWER } },
    ];
    for (const show of [true, false]) {
      const sc = scratch();
      const srv = await server({ rules });
      const r = await run(['ask', sc.db, 'How many genres?', '--base-url', srv.url, '--state-dir', sc.state,
        ...(show ? ['--show-thinking'] : [])]);
      await srv.close();
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.stdout, /There are 25 genres\./);
      assert.ok(!r.stdout.includes('Count them'), 'the thought is never on stdout');
      if (show) {
        assert.match(r.stderr, /^think The genres are in Genre\.$/m);
        assert.match(r.stderr, /^think Count them\.$/m);
      } else {
        assert.ok(!r.stderr.includes('Count them'), `shown without --show-thinking:\n${r.stderr}`);
      }
    }
  });
});
