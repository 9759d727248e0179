// More reply shapes than tests/fixtures/endpoints/ holds, from what
// llama-server, vLLM (hermes and other parsers), Ollama /v1, LM Studio,
// OpenAI and gateways (OpenRouter, LiteLLM) really send, and what Qwen,
// Llama, Mistral, Gemma and gpt-oss models write when the server's parser
// misses their call. The scripted model repeats the shape until a query
// result is in (a model that keeps doing what it does), so each must end as
// a correct tool call or a clear error (after at most one push-back), never
// with the shape shown as the answer.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { ask, scratch, server, traceEvents } from '../support/harness.mjs';

const SQL = 'SELECT COUNT(*) FROM Genre';
const ANSWER = 'There are 25 genres.';
const CALL = JSON.stringify({ name: 'run_sql', arguments: { sql: SQL } });
const ch = (delta, finish = null, extra = {}) => ({ id: 'chatcmpl-x', object: 'chat.completion.chunk', model: 'm', choices: [{ index: 0, delta, finish_reason: finish }], ...extra });
const tc = (o) => ch({ tool_calls: [o] });
const body = (message, finish = 'tool_calls') => ({ status: 200, body: { id: 'chatcmpl-x', object: 'chat.completion', model: 'm', choices: [{ index: 0, message: { role: 'assistant', ...message }, finish_reason: finish }], usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 } } });
const textSse = (s, finish = 'stop', n = 5) => ({ sse: [ch({ role: 'assistant', content: '' }), ...s.match(new RegExp(`[^]{1,${n}}`, 'g')).map((p) => ch({ content: p })), ch({}, finish), '[DONE]'] });

const shapes = [
  ['T1 <tool_call> without closing tag', { text: `<tool_call>\n${CALL}` }],
  ['T2 two <tool_call> blocks in one text', { text: `<tool_call>\n${CALL}\n</tool_call>\n<tool_call>\n{"name": "answer", "arguments": {"text": "There are 25 genres."}}\n</tool_call>` }],
  ['T3 ```JSON fence', { text: '```JSON\n' + CALL + '\n```' }],
  ['T4 ```tool_call fence', { text: '```tool_call\n' + CALL + '\n```' }],
  ['T5 <|python_tag|> + parameters + <|eom_id|>', { text: `<|python_tag|>{"name": "run_sql", "parameters": {"sql": "${SQL}"}}<|eom_id|>` }],
  ['T6 Mistral [TOOL_CALLS][{...}]', { text: `[TOOL_CALLS][${CALL}]` }],
  ['T7 Mistral v11 [TOOL_CALLS]name[ARGS]{...}', { text: `[TOOL_CALLS]run_sql[ARGS]{"sql": "${SQL}"}` }],
  ['T8 {"function": {...}} in text', { text: JSON.stringify({ function: { name: 'run_sql', arguments: { sql: SQL } } }) }],
  ['T9 arguments JSON-encoded string in text', { text: JSON.stringify({ name: 'run_sql', arguments: JSON.stringify({ sql: SQL }) }) }],
  ['T10 lone </think> (template opened it) then <tool_call>', { text: `Count the rows.\n</think>\n\n<tool_call>\n${CALL}\n</tool_call>` }],
  ['T11 Qwen3-Coder XML <function=..><parameter=..>', { text: `<tool_call>\n<function=run_sql>\n<parameter=sql>\n${SQL}\n</parameter>\n</function>\n</tool_call>` }],
  ['T12 Llama 3.1 <function=run_sql>{...}</function>', { text: `<function=run_sql>{"sql": "${SQL}"}</function>` }],
  ['T13 gpt-oss harmony leaked as content', { text: `<|channel|>commentary to=functions.run_sql <|constrain|>json<|message|>{"sql":"${SQL}"}<|call|>` }],
  ['T14 Gemma ```tool_code run_sql(sql=...)', { text: '```tool_code\nrun_sql(sql="' + SQL + '")\n```' }],
  ['T15 Llama 3.2 pythonic [run_sql(sql=...)]', { text: `[run_sql(sql="${SQL}")]` }],
  ['T16 raw newline inside the SQL string of a text call', { text: `<tool_call>\n{"name": "run_sql", "arguments": {"sql": "SELECT COUNT(*)\nFROM Genre"}}\n</tool_call>` }],
  ['T17 unicode (São Paulo) in a text call', { text: `<tool_call>\n{"name": "run_sql", "arguments": {"sql": "SELECT COUNT(*) FROM Genre WHERE 'São Paulo' <> ''"}}\n</tool_call>` }],
  ['T18 ReAct Action/Action Input', { text: `Action: run_sql\nAction Input: {"sql": "${SQL}"}` }],
  ['T19 python dict (single quotes)', { text: `{'name': 'run_sql', 'arguments': {'sql': '${SQL}'}}` }],
  ['T20 text call truncated at length, every time (stream)', textSse(`<tool_call>\n{"name": "run_sql", "arguments": {"sql": "SELECT COUNT(*) FR`, 'length')],
  ['T21 text call truncated at length once, then whole', [{ times: 1, ...textSse(`<tool_call>\n{"name": "run_sql", "arguments": {"sql": "SELECT COUNT(*) FR`, 'length') }, { text: `<tool_call>\n${CALL}\n</tool_call>` }]],
  ['T22 prose, then the call as a bare JSON, streamed', textSse(`Let me count them.\n\n${CALL}`)],
  ['S1 empty first args fragment, id only first, index only first', { sse: [
    ch({ role: 'assistant', content: null }),
    tc({ index: 0, id: 'call_a', type: 'function', function: { name: 'run_sql', arguments: '' } }),
    ...`{"sql": "${SQL}"}`.match(/[^]{1,3}/g).map((p) => ch({ tool_calls: [{ function: { arguments: p } }] })),
    ch({}, 'tool_calls'), '[DONE]'] }],
  ['S2 no index at all, id in first only', { sse: [
    ch({ role: 'assistant' }),
    ch({ tool_calls: [{ id: 'call_a', type: 'function', function: { name: 'run_sql' } }] }),
    ...`{"sql": "${SQL}"}`.match(/[^]{1,4}/g).map((p) => ch({ tool_calls: [{ function: { arguments: p } }] })),
    ch({}, 'tool_calls'), '[DONE]'] }],
  ['S3 legacy function_call delta, finish_reason function_call', { sse: [
    ch({ role: 'assistant', content: null, function_call: { name: 'run_sql', arguments: '' } }),
    ...`{"sql": "${SQL}"}`.match(/[^]{1,4}/g).map((p) => ch({ function_call: { arguments: p } })),
    ch({}, 'function_call'), '[DONE]'] }],
  ['S4 legacy function_call, whole reply', body({ content: null, function_call: { name: 'run_sql', arguments: JSON.stringify({ sql: SQL }) } }, 'function_call')],
  ['S5 stream ends without [DONE] (finish_reason sent)', { sse: [ch({ role: 'assistant' }), tc({ index: 0, id: 'c', type: 'function', function: { name: 'run_sql', arguments: JSON.stringify({ sql: SQL }) } }), ch({}, 'tool_calls')] }],
  ['S6 stream ends without [DONE] nor finish_reason, once', [{ times: 1, sse: [ch({ role: 'assistant' }), tc({ index: 0, id: 'c', type: 'function', function: { name: 'run_sql', arguments: '{"sql": "SELECT' } })] }, { tool: 'run_sql', args: { sql: SQL } }]],
  ['S7 whole reply with "reasoning" (OpenRouter)', body({ content: null, reasoning: 'Count Genre rows.', tool_calls: [{ id: 'c', type: 'function', function: { name: 'run_sql', arguments: JSON.stringify({ sql: SQL }) } }] })],
  ['S8 both reasoning and reasoning_content deltas (vLLM transition)', { sse: [ch({ role: 'assistant', reasoning: 'Count Genre.', reasoning_content: 'Count Genre.' }), tc({ index: 0, id: 'c', type: 'function', function: { name: 'run_sql', arguments: JSON.stringify({ sql: SQL }) } }), ch({}, 'tool_calls'), '[DONE]'] }],
  ['S9 unicode args, \\u escapes, split mid-escape', { sse: [ch({ role: 'assistant' }), tc({ index: 0, id: 'c', type: 'function', function: { name: 'run_sql', arguments: '' } }),
    ...`{"sql": "SELECT COUNT(*) FROM Genre WHERE 'S\\u00e3o Paulo' <> ''"}`.match(/[^]{1,3}/g).map((p) => tc({ index: 0, function: { arguments: p } })), ch({}, 'tool_calls'), '[DONE]'] }],
  ['S10 arguments double-encoded (a JSON string holding the object)', body({ content: null, tool_calls: [{ id: 'c', type: 'function', function: { name: 'run_sql', arguments: JSON.stringify(JSON.stringify({ sql: SQL })) } }] })],
  ['S11 tool name prefixed "functions.run_sql"', body({ content: null, tool_calls: [{ id: 'c', type: 'function', function: { name: 'functions.run_sql', arguments: JSON.stringify({ sql: SQL }) } }] })],
  ['S12 two calls in one chunk without index (older Ollama)', { sse: [ch({ role: 'assistant', content: '' }),
    ch({ role: 'assistant', content: '', tool_calls: [
      { id: 'call_1', type: 'function', function: { name: 'run_sql', arguments: JSON.stringify({ sql: SQL }) } },
      { id: 'call_2', type: 'function', function: { name: 'run_sql', arguments: JSON.stringify({ sql: 'SELECT 1' }) } }] }),
    ch({ role: 'assistant', content: '' }, 'tool_calls'), '[DONE]'] }],
  ['S13 structured call cut at length, every time', { sse: [ch({ role: 'assistant' }), tc({ index: 0, id: 'c', type: 'function', function: { name: 'run_sql', arguments: '{"sql": "SELECT COU' } }), ch({}, 'length'), '[DONE]'] }],
  ['S14 content as an array of parts, whole reply (Mistral/Magistral)', body({ content: [{ type: 'text', text: `<tool_call>\n${CALL}\n</tool_call>` }] }, 'stop')],
  ['S15 content null + tool_calls [] + finish stop (empty reply)', body({ content: null, tool_calls: [] }, 'stop')],
  ['S16 cumulative arguments (each fragment the whole so far)', { sse: [ch({ role: 'assistant' }),
    tc({ index: 0, id: 'c', type: 'function', function: { name: 'run_sql', arguments: '{"sql": ' } }),
    tc({ index: 0, function: { arguments: `{"sql": "${SQL}"}` } }), ch({}, 'tool_calls'), '[DONE]'] }],
  ['S17 text call in content AND a structured call', { sse: [ch({ role: 'assistant', content: `<tool_call>\n${CALL}\n</tool_call>` }), tc({ index: 0, id: 'c', type: 'function', function: { name: 'run_sql', arguments: JSON.stringify({ sql: SQL }) } }), ch({}, 'tool_calls'), '[DONE]'] }],
  ['S18 OpenRouter error chunk mid-stream, once', [{ times: 1, sse: [ch({ role: 'assistant', content: '' }), { id: 'x', object: 'chat.completion.chunk', error: { code: 502, message: 'Provider returned error' }, choices: [{ index: 0, delta: { content: '' }, finish_reason: 'error' }] }] }, { tool: 'run_sql', args: { sql: SQL } }]],
];

const SAO = "SELECT COUNT(*) FROM Genre WHERE 'S\u00e3o Paulo' <> ''";
const CUT = /cut at the token limit/;
const TEXT_CALL = /wrote a tool call \(or JSON\) as plain text that could not be used/;
const UNUSABLE = /unusable tool call twice in a row/;
const EMPTY = /neither a tool call nor any text/;
/* What each shape must end as: a call (run_sql with SQL, or with the SQL
 * given), or an error. */
const expected = {
  T7: 'call', T11: 'call', T12: 'call', T13: 'call', T14: TEXT_CALL, T15: TEXT_CALL, T16: 'SELECT COUNT(*)\nFROM Genre',
  T17: SAO, T18: 'call', T19: TEXT_CALL, T20: CUT, S3: 'call', S4: 'call', S9: SAO, S10: UNUSABLE,
  S11: UNUSABLE, S12: 'call', S13: CUT, S14: EMPTY, S15: EMPTY, S16: UNUSABLE,
};

async function runShape(reply, extra) {
  const rules = [{ when: { last_tool: '\\b25\\b' }, tool: 'answer', args: { text: ANSWER } },
    ...(Array.isArray(reply) ? reply : [reply])];
  const sc = scratch();
  const srv = await server({ rules, fallback: { tool: 'answer', args: { text: 'FALLBACK' } } });
  const r = await ask(sc, srv, 'How many genres are there?', extra);
  await srv.close();
  return { r, reqs: srv.requests.filter((q) => q.path.endsWith('/chat/completions')) };
}

describe('more reply shapes', () => {
  for (const [name, reply] of shapes) {
    const id = name.split(' ')[0];
    const want = expected[id] ?? 'call';
    const modes = reply.text ? [[], ['--no-stream']] : [[]];
    for (const extra of modes) {
      test(`${name}${extra.length ? ' (whole reply)' : ''}`, async () => {
        const { r, reqs } = await runShape(reply, extra);
        assert.ok(r.json, `no JSON output (code ${r.code}, signal ${r.signal}): ${r.stderr}`);
        const blob = reply.text ?? '';
        assert.ok(!(r.code === 0 && r.json.answer !== ANSWER), `shown as the answer: ${JSON.stringify(r.json.answer)}`);
        if (blob) assert.ok(!(r.json.answer ?? '').includes(blob.slice(0, 20)), 'the shape is not in the answer');
        if (want instanceof RegExp && want !== SAO) {
          assert.equal(r.code, 1, `expected an error, got ${JSON.stringify(r.json.answer)}`);
          assert.match(r.json.error, want);
          return;
        }
        assert.equal(r.code, 0, r.json.error);
        assert.equal(r.json.answer, ANSWER);
        assert.deepEqual(r.json.rows, [[25]]);
        const call = reqs.at(-1).body.messages.find((m) => m.tool_calls)?.tool_calls[0].function;
        assert.equal(call.name, 'run_sql');
        assert.deepEqual(JSON.parse(call.arguments), { sql: want === 'call' ? SQL : want });
        const events = traceEvents(r.json.trace);
        assert.ok(!events.some((x) => x.event === 'tool_call' && x.ok === false), 'no push-back or rejection needed');
      });
    }
  }
});
