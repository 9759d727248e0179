// protocol.mjs — the MCP side of the MCP suites: serve-mcp's arguments, the
// 2026-07-28 request shapes and headers, a raw HTTP client, the official MCP
// TypeScript SDK client (2026-07-28 pinned, or the 2025 handshake) over
// stdio and Streamable HTTP, and the SQL guard corpus. Processes, folders,
// the model server and waits come from the shared tests/support/harness.mjs.
// Run the suites with tests/mcp/node_modules/.bin/node (the SDK needs it).
import fs from 'node:fs';
import path from 'node:path';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { BIN, SHARED, noteStderr, testEnv } from '../support/harness.mjs';

export const MODERN = '2026-07-28';
export const META_VERSION = 'io.modelcontextprotocol/protocolVersion';
export const META_CAPS = 'io.modelcontextprotocol/clientCapabilities';

/* serve-mcp arguments for a scratch db (and a model server, if any; its
 * --llm-timeout is a failure bound, never reached by a test that passes). */
export function serveArgs(sc, { model, extra = [] } = {}) {
  const a = ['serve-mcp', sc.db, '--state-dir', sc.state];
  if (model) a.push('--base-url', model.url, '--llm-timeout', '300');
  return [...a, ...extra];
}

/* The headers a 2026-07-28 request must carry over HTTP. */
export function modernHeaders(method, name) {
  const h = { 'MCP-Protocol-Version': MODERN, 'Mcp-Method': method };
  if (name !== undefined) h['Mcp-Name'] = name;
  return h;
}

export function modernMeta(caps = {}, extra = {}) {
  return { [META_VERSION]: MODERN, [META_CAPS]: caps, 'io.modelcontextprotocol/clientInfo': { name: 'raw-test', version: '1' }, ...extra };
}

/* A 2026-07-28 request object. */
export function modernRequest(id, method, params = {}, caps = {}) {
  return { jsonrpc: '2.0', id, method, params: { ...params, _meta: modernMeta(caps, params._meta ?? {}) } };
}

/* POSTs body (an object as JSON, a string or Buffer as is). Resolves with
 * {status, headers, text, json, events} (events: the JSON of each SSE
 * message when the reply is a stream). */
export async function post(url, body, { headers = {}, method = 'POST', contentType = 'application/json', signal } = {}) {
  const h = { Accept: 'application/json, text/event-stream', ...headers };
  if (contentType !== null && !Object.keys(headers).some((k) => k.toLowerCase() === 'content-type')) h['Content-Type'] = contentType;
  const res = await fetch(url, {
    method, headers: h, signal,
    body: method === 'GET' || method === 'DELETE' || body === undefined ? undefined
      : typeof body === 'string' || Buffer.isBuffer(body) ? body : JSON.stringify(body),
  });
  const text = await res.text();
  let json = null;
  let events = null;
  if ((res.headers.get('content-type') ?? '').startsWith('text/event-stream')) {
    events = text.split('\n\n').filter((b) => b.includes('data:')).map((b) => {
      const data = b.split('\n').filter((l) => l.startsWith('data:')).map((l) => l.slice(5).trimStart()).join('\n');
      return JSON.parse(data);
    });
    json = events.at(-1) ?? null;
  } else {
    try { json = JSON.parse(text); } catch { /* not JSON */ }
  }
  return { status: res.status, headers: res.headers, text, json, events };
}

/* A modern request over HTTP with the right headers. */
export function postModern(url, id, method, params = {}, { caps = {}, headers = {}, ...opts } = {}) {
  const name = method === 'resources/read' ? params.uri : (method === 'tools/call' || method === 'prompts/get') ? params.name : undefined;
  return post(url, modernRequest(id, method, params, caps), { headers: { ...modernHeaders(method, name), ...headers }, ...opts });
}

/* ---- the SDK client -------------------------------------------------------------- */

/* era 'modern' pins 2026-07-28; 'legacy' is the SDK's default handshake.
 * elicit: a handler for elicitation/create (declares the capability), or
 * null for a client without elicitation. */
export function makeClient({ era = 'modern', elicit = null, name = 'tabletalk-test' } = {}) {
  const opts = {};
  if (era === 'modern') opts.versionNegotiation = { mode: { pin: MODERN } };
  if (elicit) opts.capabilities = { elicitation: { form: {} } };
  const client = new Client({ name, version: '1.0.0' }, opts);
  if (elicit) client.setRequestHandler('elicitation/create', elicit);
  return client;
}

/* An SDK client connected to a fresh stdio server: {client, stderr(), close()}. */
export async function connectStdio(sc, { era = 'modern', elicit = null, model, extra = [], env = {} } = {}) {
  const client = makeClient({ era, elicit });
  const transport = new StdioClientTransport({
    command: BIN, args: serveArgs(sc, { model, extra }), env: testEnv(env), cwd: sc.dir, stderr: 'pipe',
  });
  let stderr = '';
  transport.stderr?.on('data', (d) => { stderr += d; });
  noteStderr(`tabletalk ${serveArgs(sc, { model, extra }).join(' ')} (SDK ${era})`, () => stderr);
  await client.connect(transport);
  return { client, transport, stderr: () => stderr, close: () => client.close() };
}

/* An SDK client connected to an HTTP server at url. */
export async function connectHttp(url, { era = 'modern', elicit = null, headers } = {}) {
  const client = makeClient({ era, elicit });
  const transport = new StreamableHTTPClientTransport(new URL(url), headers ? { requestInit: { headers } } : undefined);
  await client.connect(transport);
  return { client, transport, close: () => client.close() };
}

/* The first text block of a tool result. */
export const textOf = (res) => res.content?.find((c) => c.type === 'text')?.text ?? '';

/* The JSON that run_sql's text carries after its summary line. */
export function jsonInText(text) {
  const nl = text.indexOf('\n');
  return JSON.parse(text.slice(nl + 1));
}

/* ---- the SQL guard corpus ---------------------------------------------------------- */

/* Decodes a field of the corpus (README: \n \t \r \\ \xHH \uXXXX \UXXXXXXXX). */
export function decodeField(s) {
  const out = [];
  let lit = '';
  const flush = () => { if (lit) { out.push(Buffer.from(lit, 'utf8')); lit = ''; } };
  for (let i = 0; i < s.length; i++) {
    const c = s[i];
    if (c !== '\\' || i + 1 >= s.length) { lit += c; continue; }
    const n = s[i + 1];
    if (n === 'n') { lit += '\n'; i++; } else if (n === 't') { lit += '\t'; i++; } else if (n === 'r') { lit += '\r'; i++; } else if (n === '\\') { lit += '\\'; i++; } else if (n === 'x' && /^[0-9a-fA-F]{2}$/.test(s.slice(i + 2, i + 4))) {
      flush(); out.push(Buffer.from([parseInt(s.slice(i + 2, i + 4), 16)])); i += 3;
    } else if (n === 'u' && /^[0-9a-fA-F]{4}$/.test(s.slice(i + 2, i + 6))) {
      lit += String.fromCodePoint(parseInt(s.slice(i + 2, i + 6), 16)); i += 5;
    } else if (n === 'U' && /^[0-9a-fA-F]{8}$/.test(s.slice(i + 2, i + 10))) {
      lit += String.fromCodePoint(parseInt(s.slice(i + 2, i + 10), 16)); i += 9;
    } else { lit += c; }
  }
  flush();
  return Buffer.concat(out);
}

export function loadGuardCorpus() {
  const file = path.join(SHARED, 'corpus', 'sql-guard.tsv');
  const lines = fs.readFileSync(file, 'utf8').split('\n').filter((l) => l.trim());
  const [head, ...rows] = lines;
  const cols = head.split('\t');
  return rows.map((l) => {
    const f = l.split('\t');
    const o = Object.fromEntries(cols.map((c, i) => [c, f[i]]));
    o.sqlBytes = decodeField(o.sql ?? '');
    return o;
  });
}
