// The official MCP conformance suite (@modelcontextprotocol/conformance,
// pinned in package.json) against `tabletalk serve-mcp --http` on a scratch
// copy of chinook: what revision 2026-07-28 requires, what 2025-11-25
// requires, and what the suite can run at 2025-06-18 and 2025-03-26. Every
// check of every applicable scenario must pass (a SHOULD-level warning
// counts as a failure here). A scenario that needs the suite's own fixture
// tools, prompts or resources, or a capability or extension tabletalk does
// not declare, is not applicable: NOT_APPLICABLE says why, and
// docs/contributing/mcp-conformance.md must list it. Such a scenario still runs: the
// messages the server sent in it must match the revision's schema, and it
// must fail for the reason given, not for another. The suite runs offline
// from node_modules; results go to a temporary folder.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { FAIL_AFTER, scratch, startHttp, tempDir } from '../support/harness.mjs';
import { serveArgs } from './protocol.mjs';


const here = path.dirname(fileURLToPath(import.meta.url));
const CLI = path.join(here, 'node_modules/@modelcontextprotocol/conformance/dist/index.js');
const DOC = path.resolve(here, '../../docs/contributing/mcp-conformance.md');

/* What the suite is asked to run. --requirements runs exactly what a
 * revision requires (plus its not-scored scenarios, for visibility) at that
 * revision's wire; --spec-version runs every scenario tagged with it. */
const RUNS = [
  { label: '2026-07-28', select: ['--requirements', '2026-07-28'] },
  { label: '2025-11-25', select: ['--requirements', '2025-11-25'] },
  { label: '2025-06-18', select: ['--spec-version', '2025-06-18'], extra: ['--suite', 'all'] },
  { label: '2025-03-26', select: ['--spec-version', '2025-03-26'], extra: ['--suite', 'all'] },
];

/* ---- what does not apply, and why ------------------------------------------ */

const tool = (name) => ({
  reason: `calls the suite's fixture tool \`${name}\`, which only its reference server has`,
  fails: new RegExp(`Unknown tool: ${name}\\b`),
});
const prompt = (name) => ({
  reason: `gets the suite's fixture prompt \`${name}\`, which only its reference server has`,
  fails: new RegExp(`Unknown prompt: ${name}\\b`),
});
const resource = (uri) => ({
  reason: `reads the suite's fixture resource \`${uri}\`, which only its reference server has`,
  fails: /Resource not found: tabletalk serves tabletalk:\/\/schema/,
});
const TASKS = {
  reason: 'exercises the optional tasks extension (`io.modelcontextprotocol/tasks`, SEP-2663), which tabletalk does not declare, with fixture tools',
  fails: /Unknown tool: |Not testable|got -32601|capabilities\.extensions MUST be advertised|fixture .* unavailable|returned error code -32602; spec requires -32021/,
};

/* scenario -> {reason, fails: what its failing checks must say} */
const NOT_APPLICABLE = {
  'tools-call-simple-text': tool('test_simple_text'),
  'tools-call-image': tool('test_image_content'),
  'tools-call-audio': tool('test_audio_content'),
  'tools-call-embedded-resource': tool('test_embedded_resource'),
  'tools-call-mixed-content': tool('test_multiple_content_types'),
  'tools-call-error': tool('test_error_handling'),
  'tools-call-with-progress': tool('test_tool_with_progress'),
  'tools-call-sampling': tool('test_sampling'),
  'tools-call-elicitation': tool('test_elicitation'),
  'elicitation-sep1034-defaults': tool('test_elicitation_sep1034_defaults'),
  'elicitation-sep1330-enums': tool('test_elicitation_sep1330_enums'),
  'tools-call-with-logging': {
    reason: 'sets a log level with `logging/setLevel` (tabletalk declares no `logging` capability: its diagnostics go to stderr) and calls the fixture tool `test_tool_with_logging`',
    fails: /Method not found: logging\/setLevel/,
  },
  'logging-set-level': {
    reason: 'calls `logging/setLevel`; tabletalk declares no `logging` capability (its diagnostics go to stderr), so a client must not call it',
    fails: /Method not found: logging\/setLevel/,
  },
  'completion-complete': {
    reason: 'asks `completion/complete` for an argument of the fixture prompt `test_prompt_with_arguments`; tabletalk declares no `completions` capability',
    fails: /Method not found: completion\/complete/,
  },
  'json-schema-2020-12': {
    reason: "looks for the suite's fixture tool `json_schema_2020_12_tool`",
    fails: /Tool 'json_schema_2020_12_tool' not found/,
  },
  'resources-read-text': resource('test://static-text'),
  'resources-read-binary': resource('test://static-binary'),
  'resources-templates-read': resource('test://template/123/data'),
  'resources-subscribe': {
    reason: 'subscribes to the fixture resource `test://watched-resource`; tabletalk declares `resources.subscribe: false`, so a client must not subscribe',
    fails: /Method not found: resources\/subscribe/,
  },
  'resources-unsubscribe': {
    reason: 'subscribes to and unsubscribes from the fixture resource `test://watched-resource`; tabletalk declares `resources.subscribe: false`',
    fails: /Method not found: resources\/subscribe/,
  },
  'prompts-get-simple': prompt('test_simple_prompt'),
  'prompts-get-with-args': prompt('test_prompt_with_arguments'),
  'prompts-get-embedded-resource': prompt('test_prompt_with_embedded_resource'),
  'prompts-get-with-image': prompt('test_prompt_with_image'),
  'input-required-result-basic-elicitation': tool('test_input_required_result_elicitation'),
  'input-required-result-basic-sampling': tool('test_input_required_result_sampling'),
  'input-required-result-basic-list-roots': tool('test_input_required_result_list_roots'),
  'input-required-result-request-state': tool('test_input_required_result_request_state'),
  'input-required-result-multiple-input-requests': tool('test_input_required_result_multiple_inputs'),
  'input-required-result-result-type': tool('test_input_required_result_elicitation'),
  'input-required-result-capability-check': tool('test_input_required_result_capabilities'),
  'input-required-result-ignore-extra-params': tool('test_input_required_result_elicitation'),
  'input-required-result-non-tool-request': prompt('test_input_required_result_prompt'),
  /* these three say so only in general words, or pass because the tool is unknown */
  'input-required-result-multi-round': {
    reason: "calls the suite's fixture tool `test_input_required_result_multi_round`",
    fails: /Expected InputRequiredResult with inputRequests and requestState/,
  },
  'input-required-result-tampered-state': {
    reason: "calls the suite's fixture tool `test_input_required_result_tampered_state`",
    fails: /Prerequisite failed: could not get initial InputRequiredResult/,
  },
  'input-required-result-missing-input-response': {
    reason: "calls the suite's fixture tool `test_input_required_result_elicitation` (its warning is the unknown tool's error)",
    fails: /Server returned JSON-RPC error instead of re-requesting/,
  },
  'input-required-result-validate-input': {
    reason: "calls the suite's fixture tool `test_input_required_result_elicitation`; it passes against tabletalk only because that tool is unknown",
    fails: /^$/,
  },
  'http-custom-header-server-validation': {
    reason: 'needs a tool with an `x-mcp-header` parameter; mirroring parameters into headers is optional for servers and no tabletalk tool does',
    fails: /server exposes no tool with x-mcp-header annotations/,
  },
  'server-sse-polling': {
    reason: "calls the suite's fixture tool `test_reconnection` to test resuming a stream the server closes; tabletalk answers it with JSON and makes no check",
    fails: /^$/,
  },
  'tasks-lifecycle': TASKS,
  'tasks-capability-negotiation': TASKS,
  'tasks-wire-fields': TASKS,
  'tasks-request-state-removal': TASKS,
  'tasks-mrtr-input': TASKS,
  'tasks-request-headers': TASKS,
  'tasks-dispatch-and-envelope': TASKS,
  'tasks-status-notifications': TASKS,
  'tasks-required-task-error': TASKS,
  'tasks-mrtr-composition': TASKS,
};

/* checks of applicable scenarios that need a fixture: scenario -> check -> why */
const diagnostic = (name) => ({
  reason: `needs the suite's diagnostic tool \`${name}\``,
  fails: new RegExp(`Not testable: server does not list the diagnostic tool '${name}'`),
});
const CHECKS_NOT_APPLICABLE = {
  'server-stateless': {
    'sep-2575-server-rejects-undeclared-capability': diagnostic('test_missing_capability'),
    'sep-2575-missing-capability-http-400': diagnostic('test_missing_capability'),
    'sep-2575-http-server-no-independent-requests-on-stream': diagnostic('test_streaming_elicitation'),
    'sep-2575-server-no-log-without-loglevel': diagnostic('test_logging_tool'),
  },
};

/* ---- running the suite ---------------------------------------------------- */

/* Runs the conformance CLI with args; resolves with {code, out}. */
function conformance(args, { cwd, timeout = FAIL_AFTER } = {}) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, ...args], { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d) => { out += d; });
    child.stderr.on('data', (d) => { out += d; });
    const timer = setTimeout(() => child.kill('SIGKILL'), timeout);
    child.on('error', reject);
    child.on('close', (code, signal) => { clearTimeout(timer); resolve({ code, signal, out }); });
  });
}

/* The server scenarios `list` names for these selection args (with
 * --requirements: the required ones and the not-scored ones on the server
 * leg). */
async function listed(args) {
  const { code, out } = await conformance(['list', '--server', ...args]);
  assert.equal(code, 0, `conformance list ${args.join(' ')} failed: ${out}`);
  const names = [];
  let section = '';
  for (const line of out.split('\n')) {
    if (/^Server scenarios/.test(line)) section = 'server';
    else if (/^Client scenarios/.test(line)) section = 'client';
    else if (/^Run and reported, but never scored/.test(line)) section = 'not-scored';
    const m = /^\s+- (\S+)(?: \[([^\]]*)\])?\s*$/.exec(line);
    if (!m) continue;
    if (section === 'server' || (section === 'not-scored' && m[2] === 'server')) names.push(m[1]);
  }
  assert.ok(names.length > 0, `conformance list ${args.join(' ')} named no server scenario: ${out}`);
  return names;
}

/* checks.json of each scenario the CLI wrote under dir: name -> checks. */
function readResults(dir) {
  const results = new Map();
  for (const entry of fs.readdirSync(dir)) {
    const m = /^server-(.+)-\d{4}-\d{2}-\d{2}T[\d-]+Z$/.exec(entry);
    const file = path.join(dir, entry, 'checks.json');
    if (!m || !fs.existsSync(file)) continue;
    results.set(m[1], JSON.parse(fs.readFileSync(file, 'utf8')));
  }
  return results;
}

const BAD = new Set(['FAILURE', 'WARNING']);
const SCHEMA_CHECKS = new Set(['wire-schema-valid', 'wire-schema-harness-error']);
const said = (c) => (c.errorMessage ?? '').replace(/\s+/g, ' ').slice(0, 400);

/* What is wrong in one scenario's checks, in words (empty: nothing). */
function judge(scenario, checks) {
  const problems = [];
  const na = NOT_APPLICABLE[scenario];
  for (const c of checks) {
    if (SCHEMA_CHECKS.has(c.id)) {
      /* the server's own messages must be valid whatever the scenario */
      if (c.status === 'FAILURE') problems.push(`${scenario} › ${c.id}: ${said(c)} ${JSON.stringify(c.details?.violations ?? '').slice(0, 1500)}`);
      continue;
    }
    if (!BAD.has(c.status)) continue;
    const why = na ?? CHECKS_NOT_APPLICABLE[scenario]?.[c.id];
    if (!why) problems.push(`${scenario} › ${c.id} (${c.status}): ${said(c)}`);
    else if (!why.fails.test(c.errorMessage ?? '')) {
      problems.push(`${scenario} › ${c.id} (${c.status}) is not applicable because it ${why.reason}, yet it failed for another reason: ${said(c)}`);
    }
  }
  /* an applicable scenario must have checked something of ours */
  const real = checks.filter((c) => !SCHEMA_CHECKS.has(c.id) && !CHECKS_NOT_APPLICABLE[scenario]?.[c.id]);
  if (!na && !real.some((c) => c.status === 'SUCCESS')) {
    problems.push(`${scenario}: no check passed (statuses: ${checks.map((c) => `${c.id}=${c.status}`).join(', ')})`);
  }
  return problems;
}

describe('the official MCP conformance suite', { timeout: FAIL_AFTER }, () => {
  let sc, srv;
  before(async () => {
    assert.ok(fs.existsSync(CLI), `${CLI} is missing: run npm ci in tests/mcp`);
    sc = scratch();
    srv = await startHttp(serveArgs(sc), { cwd: sc.dir });
  });
  after(async () => {
    if (srv) {
      assert.ok(srv.alive(), `the server stayed up (stderr: ${srv.stderr.slice(-2000)})`);
      const r = await srv.close();
      assert.equal(r.code, 0, `serve-mcp --http ended with ${JSON.stringify(r)}: ${srv.stderr.slice(-2000)}`);
    }
    if (sc) assert.ok(sc.unchanged(), 'the database copy is byte-identical');
  });

  for (const run of RUNS) {
    test(`${run.label}: every applicable scenario passes`, async () => {
      const want = await listed(run.select);
      const args = [...run.select, ...(run.extra ?? [])];
      const out = tempDir('tabletalk-conformance-');
      const r = await conformance(['server', '--url', srv.url, ...args, '-o', out], { cwd: out });
      assert.ok(r.code === 0 || r.code === 1, `the suite itself broke (exit ${r.code}, ${r.signal ?? 'no signal'}): ${r.out.slice(-3000)}`);
      const results = readResults(out);
      const missing = want.filter((s) => !results.has(s));
      assert.deepEqual(missing, [], `scenarios listed for ${run.label} that left no results: ${r.out.slice(-3000)}`);
      const problems = [];
      const lines = [];
      for (const [scenario, checks] of [...results].sort(([a], [b]) => a.localeCompare(b))) {
        const p = judge(scenario, checks);
        problems.push(...p);
        const verdict = p.length ? 'FAILED' : NOT_APPLICABLE[scenario] ? 'not applicable' : 'passed';
        lines.push(`  ${verdict.padEnd(14)} ${scenario}`);
      }
      console.log(`${run.label} (${args.join(' ')}): ${results.size} scenarios\n${lines.join('\n')}`);
      assert.ok(srv.alive(), `the server died during the ${run.label} run: ${srv.stderr.slice(-2000)}`);
      assert.deepEqual(problems, [], `${problems.length} failing check(s) in the ${run.label} run:\n${problems.join('\n')}`);
    });
  }

  test('docs/contributing/mcp-conformance.md lists every scenario and check that does not apply', () => {
    const doc = fs.readFileSync(DOC, 'utf8');
    const absent = [
      ...Object.keys(NOT_APPLICABLE),
      ...Object.values(CHECKS_NOT_APPLICABLE).flatMap((checks) => Object.keys(checks)),
    ].filter((name) => !doc.includes(`\`${name}\``));
    assert.deepEqual(absent, [], 'not applicable here but not explained in docs/contributing/mcp-conformance.md');
  });
});
