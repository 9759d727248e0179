// The MCP server through the official MCP TypeScript SDK client, over stdio
// and Streamable HTTP, in the 2026-07-28 revision (pinned) and the 2025
// handshake: the tools, resources and prompts, run_sql and describe_schema
// against what SQLite itself says, ask_database with the scripted model
// (answers, follow-ups, progress, cancellation, elicitation with and
// without the client's capability), and the signed requestState of
// 2026-07-28 against forgery. Every database is a scratch copy that must
// stay byte-identical. The knowledge file beside the database is a
// resource too, and its descriptions reach the cards.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { BIN, FAIL_AFTER, RawStdio, scratch, startHttp, startModel } from '../support/harness.mjs';
import {
  MODERN, connectHttp, connectStdio, jsonInText, modernRequest, postModern, serveArgs, textOf,
} from './protocol.mjs';


/* ---- what SQLite itself says (the sqlite3 shell, read-only) ------------------ */

function sqlite(db, sql) {
  const out = execFileSync('sqlite3', ['-readonly', '-json', db, sql]).toString().trim();
  return out ? JSON.parse(out) : [];
}
const rowsOf = (objs) => objs.map((o) => Object.values(o));
/* `cached` says whether run_sql reused an earlier result; the text has
 * its own note for that. */
const withoutCached = ({ cached, ...rest }) => rest;

const GENRE_SQL = 'SELECT g.Name AS genre, count(*) AS tracks FROM Track t JOIN Genre g ON g.GenreId = t.GenreId GROUP BY g.GenreId ORDER BY tracks DESC, genre';
const TOP_GENRE_SQL = `${GENRE_SQL} LIMIT 1`;
const ROCK_ALBUMS_SQL = "SELECT count(DISTINCT t.AlbumId) AS albums FROM Track t JOIN Genre g ON g.GenreId = t.GenreId WHERE g.Name = 'Rock'";
const TOP_CUSTOMER_SQL = "SELECT c.FirstName || ' ' || c.LastName AS customer, round(sum(i.Total), 2) AS spent FROM Invoice i JOIN Customer c ON c.CustomerId = i.CustomerId GROUP BY c.CustomerId ORDER BY spent DESC LIMIT 1";
const PER_YEAR_SQL = "SELECT strftime('%Y', InvoiceDate) AS year, count(*) AS invoices FROM Invoice GROUP BY year";
const CLARIFY_Q = 'Top by total spending or by number of purchases?';
const REPLY = 'by total spending';

/* The scripted model, one for the whole file: rules keyed by the question. */
const sqlCall = (s) => ({ tool: 'run_sql', args: { sql: s } });
const answerCall = (text) => ({ tool: 'answer', args: { text } });
const SCRIPT = {
  rules: [
    /* a question in two steps, slow enough for progress to be seen */
    { name: 'genre-sql', when: { question: 'most tracks', step: 0 }, hang_ms: 150, ...sqlCall(TOP_GENRE_SQL) },
    { name: 'genre-answer', when: { question: 'most tracks', step: 1 }, hang_ms: 150, ...answerCall('Rock has the most tracks: 1297.') },
    /* a follow-up that only works when the earlier turn is in the prompt */
    { name: 'follow-no-context', when: { question: 'how many albums', not_any: 'Rock has the most tracks' }, ...answerCall('NO CONTEXT: the earlier turn is missing') },
    { name: 'follow-sql', when: { question: 'how many albums', step: 0 }, ...sqlCall(ROCK_ALBUMS_SQL) },
    { name: 'follow-answer', when: { question: 'how many albums', step: 1 }, ...answerCall('Rock tracks come from that many albums.') },
    /* a model that never answers (not before any wait of a test gives up:
     * only cancellation or shutdown ends a question that asks it) */
    { name: 'hang', when: { question: 'never answer' }, hang_ms: 3600000, ...sqlCall('SELECT 1') },
    /* a clarifying question, and what the reply leads to */
    { name: 'after-reply', when: { last_tool: `The user answered: ${REPLY}` }, ...sqlCall(TOP_CUSTOMER_SQL) },
    { name: 'wrong-reply', when: { last_tool: 'The user answered' }, ...answerCall('WRONG REPLY') },
    { name: 'clarify', when: { question: 'top customer', step: 0 }, tool: 'ask_user', args: { question: CLARIFY_Q } },
    { name: 'customer-answer', when: { question: 'top customer', last_tool: 'rows are data' }, ...answerCall('Helena Holý spent the most.') },
    /* a chart */
    { name: 'chart-sql', when: { question: 'plot invoices per year', step: 0 }, ...sqlCall(PER_YEAR_SQL) },
    { name: 'chart-make', when: { question: 'plot invoices per year', step: 1 }, tool: 'make_chart', args: { kind: 'bar', x: 'year', y: 'invoices', title: 'Invoices per year' } },
    { name: 'chart-answer', when: { question: 'plot invoices per year', step: 2 }, ...answerCall('The chart shows about 83 invoices a year.') },
  ],
};

let model;
before(async () => { model = await startModel(SCRIPT); });
after(async () => { await model?.close(); });

/* What the model server received since mark. */
const since = (mark) => model.requests.slice(mark);
const allText = (req) => JSON.stringify(req.body.messages);

/* a pristine copy, only ever opened read-only by the sqlite3 shell */
const TRUTH = scratch().db;
const TABLES = () => sqlite(TRUTH, "SELECT name FROM sqlite_master WHERE type IN ('table','view') AND name NOT LIKE 'sqlite_%' ORDER BY name").map((r) => r.name);

/* ---- one block per transport and era -------------------------------------------- */

for (const transport of ['stdio', 'http']) {
  for (const era of ['modern', 'legacy']) {
    describe(`${transport}, ${era === 'modern' ? `${MODERN} pinned` : '2025 handshake'}`, { timeout: FAIL_AFTER }, () => {
      const opened = [];
      let http = null, httpScratch = null;

      /* A connected SDK client. elicit: null (no capability) or a handler.
       * Over stdio each client is its own server process on its own copy. */
      async function open({ elicit = null } = {}) {
        let c;
        if (transport === 'stdio') {
          const sc = scratch();
          c = await connectStdio(sc, { era, elicit, model });
          c.sc = sc;
        } else {
          c = await connectHttp(http.url, { era, elicit });
          c.sc = httpScratch;
        }
        assert.equal(c.client.getProtocolEra(), era, 'the SDK negotiated the era asked for');
        opened.push(c);
        return c;
      }

      let plain; // a client without elicitation, shared by the read-only tests
      before(async () => {
        if (transport === 'http') {
          httpScratch = scratch();
          http = await startHttp(serveArgs(httpScratch, { model }), { cwd: httpScratch.dir });
        }
        plain = await open();
      });
      after(async () => {
        for (const c of opened) await c.close().catch(() => {});
        if (http) {
          const r = await http.close();
          assert.equal(r.code, 0, `serve-mcp --http exits 0 on SIGTERM (stderr: ${http.stderr})`);
        }
        for (const c of opened) assert.ok(c.sc.unchanged(), `${c.sc.db} is byte-identical afterwards`);
      });

      test('tools/list: ask_database, run_sql, describe_schema with read-only annotations and schemas', async () => {
        const { tools } = await plain.client.listTools();
        assert.deepEqual(tools.map((t) => t.name), ['ask_database', 'run_sql', 'describe_schema']);
        for (const t of tools) {
          assert.equal(t.annotations?.readOnlyHint, true, `${t.name}: readOnlyHint`);
          assert.equal(t.annotations?.destructiveHint, false, `${t.name}: destructiveHint`);
          assert.equal(t.annotations?.openWorldHint, false, `${t.name}: openWorldHint`);
          assert.equal(t.inputSchema?.type, 'object', `${t.name}: inputSchema`);
          assert.equal(t.outputSchema?.type, 'object', `${t.name}: outputSchema`);
          assert.ok(t.description.length > 40, `${t.name}: a description that says when to use it`);
        }
        assert.equal(tools[1].annotations.idempotentHint, true, 'run_sql is idempotent');
        assert.equal(tools[2].annotations.idempotentHint, true, 'describe_schema is idempotent');
        assert.notEqual(tools[0].annotations.idempotentHint, true, 'ask_database runs a model: not idempotent');
        assert.deepEqual(tools[0].inputSchema.required, ['question']);
        assert.deepEqual(tools[1].inputSchema.required, ['sql']);
        assert.ok(tools[0].inputSchema.properties.thread_id, 'ask_database takes a thread_id');
      });

      test('resources: the schema and a card per table, templates, reading both, unknown uri', async () => {
        const tables = TABLES();
        const { resources } = await plain.client.listResources();
        assert.equal(resources[0].uri, 'tabletalk://schema');
        assert.deepEqual(resources.slice(1).map((r) => r.name).sort(), tables, 'one resource per table of the file');
        const track = resources.find((r) => r.name === 'Track');
        assert.equal(track.uri, 'tabletalk://table/Track');
        assert.equal(track.mimeType, 'text/plain');

        const trackCount = sqlite(TRUTH, 'SELECT count(*) AS n FROM Track')[0].n;
        const card = await plain.client.readResource({ uri: track.uri });
        assert.equal(card.contents.length, 1);
        assert.equal(card.contents[0].uri, track.uri);
        const text = card.contents[0].text;
        assert.match(text, new RegExp(`Track \\(${trackCount} rows\\)`), 'the card gives the row count SQLite counts');
        for (const col of sqlite(TRUTH, 'SELECT name FROM pragma_table_info(\'Track\')').map((r) => r.name)) {
          assert.ok(text.includes(col), `the Track card names column ${col}`);
        }
        assert.match(text, /references Genre\.GenreId/, 'the card shows the foreign key');

        const schema = await plain.client.readResource({ uri: 'tabletalk://schema' });
        for (const t of tables) assert.ok(schema.contents[0].text.includes(`Table: ${t} (`), `the schema has ${t}`);

        const { resourceTemplates } = await plain.client.listResourceTemplates();
        assert.equal(resourceTemplates.length, 1);
        assert.equal(resourceTemplates[0].uriTemplate, 'tabletalk://table/{name}');
        const viaTemplate = await plain.client.readResource({ uri: resourceTemplates[0].uriTemplate.replace('{name}', 'Genre') });
        const genres = sqlite(TRUTH, 'SELECT count(*) AS n FROM Genre')[0].n;
        assert.match(viaTemplate.contents[0].text, new RegExp(`Genre \\(${genres} rows\\)`));

        /* (the SDK reports -32602 and the 2025 code -32002 alike as a
         * ResourceNotFoundError; garbage.test.mjs checks the codes on the wire) */
        await assert.rejects(plain.client.readResource({ uri: 'tabletalk://table/NoSuchTable' }),
          (e) => [-32602, -32002].includes(e.code) && /not found/i.test(e.message) && e.data?.uri === 'tabletalk://table/NoSuchTable',
          'an unknown table is an error naming the uri');
        await assert.rejects(plain.client.readResource({ uri: 'file:///etc/passwd' }),
          (e) => [-32602, -32002].includes(e.code) && /not found/i.test(e.message));
      });

      test('prompts: list and get; a missing required argument is an error', async () => {
        const { prompts } = await plain.client.listPrompts();
        assert.deepEqual(prompts.map((p) => p.name), ['explore_database', 'analyze_table']);
        const analyze = prompts[1];
        assert.deepEqual(analyze.arguments.map((a) => [a.name, a.required]), [['table', true]]);
        assert.equal(prompts[0].arguments[0].required, false);

        const got = await plain.client.getPrompt({ name: 'analyze_table', arguments: { table: 'Album' } });
        assert.equal(got.messages[0].role, 'user');
        const albums = sqlite(TRUTH, 'SELECT count(*) AS n FROM Album')[0].n;
        assert.match(got.messages[0].content.text, new RegExp(`Table: Album \\(${albums} rows\\)`), 'the prompt carries the Album card');
        const explore = await plain.client.getPrompt({ name: 'explore_database', arguments: { focus: 'sales by country' } });
        assert.match(explore.messages[0].content.text, /Focus on: sales by country/);
        // the compact index: names with their key columns
        assert.match(explore.messages[0].content.text, /\nAlbum\(AlbumId\*, ArtistId->Artist\)\n/);

        await assert.rejects(plain.client.getPrompt({ name: 'analyze_table', arguments: {} }),
          (e) => e.code === -32602 && /table/.test(e.message), 'the missing argument is named');
        await assert.rejects(plain.client.getPrompt({ name: 'analyze_table', arguments: { table: 'Nope' } }), (e) => e.code === -32602);
        await assert.rejects(plain.client.getPrompt({ name: 'no_such_prompt' }), (e) => e.code === -32602);
      });

      test('run_sql: track counts per genre as SQLite counts them; structuredContent matches the text', async () => {
        const res = await plain.client.callTool({ name: 'run_sql', arguments: { sql: GENRE_SQL } });
        assert.notEqual(res.isError, true, textOf(res));
        const sc = res.structuredContent;
        const want = rowsOf(sqlite(TRUTH, GENRE_SQL));
        assert.deepEqual(sc.columns, ['genre', 'tracks']);
        assert.deepEqual(sc.rows, want);
        assert.ok(sc.rows.some(([g, n]) => g === 'Rock' && n === 1297), 'Rock 1297');
        assert.equal(sc.row_count, want.length);
        assert.equal(sc.total_rows, want.length);
        assert.equal(sc.total_rows_exact, true);
        assert.equal(sc.truncated, false);
        assert.deepEqual(jsonInText(textOf(res)), withoutCached(sc), 'the text carries the same JSON');
        assert.match(textOf(res), new RegExp(`(^|\\) )${want.length} rows`));

        /* more rows than the preview: 50 shown, the total counted */
        const many = await plain.client.callTool({ name: 'run_sql', arguments: { sql: 'SELECT TrackId FROM Track ORDER BY TrackId' } });
        const total = sqlite(TRUTH, 'SELECT count(*) AS n FROM Track')[0].n;
        assert.equal(many.structuredContent.row_count, 50);
        assert.equal(many.structuredContent.rows.length, 50);
        assert.equal(many.structuredContent.truncated, true);
        assert.equal(many.structuredContent.total_rows, total);
        assert.match(textOf(many), new RegExp(`(^|\\) )50 rows of ${total}`));
        assert.deepEqual(jsonInText(textOf(many)), withoutCached(many.structuredContent));

        const refused = await plain.client.callTool({ name: 'run_sql', arguments: { sql: 'DELETE FROM Track' } });
        assert.equal(refused.isError, true);
        assert.match(textOf(refused), /^refused: /);
        const bad = await plain.client.callTool({ name: 'run_sql', arguments: { sql: 'SELECT nope FROM Track' } });
        assert.equal(bad.isError, true);
        assert.match(textOf(bad), /^sql: .*nope/);
      });

      test('describe_schema: everything, tables by name in any case, an unknown name with a suggestion', async () => {
        const all = await plain.client.callTool({ name: 'describe_schema', arguments: {} });
        assert.notEqual(all.isError, true, textOf(all));
        assert.deepEqual(all.structuredContent.tables.map((t) => t.name).sort(), TABLES());
        assert.equal(all.structuredContent.database, 'chinook.sqlite');

        const two = await plain.client.callTool({ name: 'describe_schema', arguments: { tables: ['album', 'ARTIST'] } });
        assert.deepEqual(two.structuredContent.tables.map((t) => t.name), ['Album', 'Artist']);
        const cols = sqlite(TRUTH, "SELECT name FROM pragma_table_info('Album')").map((r) => r.name);
        assert.deepEqual(two.structuredContent.tables[0].columns.map((c) => c.name), cols);
        assert.equal(two.structuredContent.tables[0].row_count, sqlite(TRUTH, 'SELECT count(*) AS n FROM Album')[0].n);
        assert.match(textOf(two), /Table: Album/);
        assert.doesNotMatch(textOf(two), /Table: Track/);

        const unknown = await plain.client.callTool({ name: 'describe_schema', arguments: { tables: ['Trak'] } });
        assert.equal(unknown.isError, true);
        assert.match(textOf(unknown), /no table or view named Trak \(did you mean Track\?\)/);
      });

      test('ask_database: the answer with its SQL and rows; a follow-up in the thread reaches the model with the earlier turn', async () => {
        const mark = model.requests.length;
        const first = await plain.client.callTool({ name: 'ask_database', arguments: { question: 'Which genre has the most tracks?' } });
        assert.notEqual(first.isError, true, textOf(first));
        const a = first.structuredContent;
        assert.equal(a.status, 'answered');
        assert.equal(a.clarification, null);
        assert.equal(a.answer, 'Rock has the most tracks: 1297.');
        assert.equal(a.sql, TOP_GENRE_SQL);
        assert.deepEqual(a.rows, rowsOf(sqlite(TRUTH, TOP_GENRE_SQL)));
        assert.equal(a.verified, 'checked');
        assert.match(a.thread_id, /^[A-Za-z0-9._:-]+$/);
        assert.ok(a.run_id);
        assert.ok(textOf(first).includes(a.answer) && textOf(first).includes(a.thread_id));
        assert.ok(since(mark).some((r) => allText(r).includes('Which genre has the most tracks?')), 'the model saw the question');

        const mark2 = model.requests.length;
        const follow = await plain.client.callTool({ name: 'ask_database', arguments: { question: 'And how many albums is that?', thread_id: a.thread_id } });
        const f = follow.structuredContent;
        assert.equal(f.answer, 'Rock tracks come from that many albums.', `the follow-up had the earlier turn (got: ${f.answer})`);
        assert.equal(f.thread_id, a.thread_id);
        assert.deepEqual(f.rows, rowsOf(sqlite(TRUTH, ROCK_ALBUMS_SQL)));
        const req = since(mark2)[0];
        const msgs = req.body.messages;
        const iq = msgs.findIndex((m) => m.role === 'user' && m.content === 'Which genre has the most tracks?');
        assert.ok(iq > 0, 'the earlier question is in the prompt');
        assert.ok(msgs.slice(iq).some((m) => m.role === 'assistant' && String(m.content).includes('Rock has the most tracks')), 'and the earlier answer');

        /* a new thread does not see it */
        const fresh = await plain.client.callTool({ name: 'ask_database', arguments: { question: 'And how many albums is that?' } });
        assert.match(fresh.structuredContent.answer, /^NO CONTEXT/);
        assert.notEqual(fresh.structuredContent.thread_id, a.thread_id);
      });

      test('ask_database: a chart comes back as a PNG image and its file', async () => {
        const res = await plain.client.callTool({ name: 'ask_database', arguments: { question: 'Plot invoices per year' } });
        assert.notEqual(res.isError, true, textOf(res));
        const charts = res.structuredContent?.charts;
        if (res.structuredContent) {
          assert.equal(charts.length, 1);
          assert.equal(charts[0].description, 'bar chart, 5 bars: Invoices per year');
          assert.match(charts[0].file, /\/charts\/.*\.png$/);
        }
        assert.match(textOf(res), /Chart: .*\.png \(bar chart, 5 bars: Invoices per year\)/);
        const img = res.content.find((c) => c.type === 'image');
        assert.ok(img, 'an image content block');
        assert.equal(img.mimeType, 'image/png');
        const png = Buffer.from(img.data, 'base64');
        assert.equal(png.subarray(1, 4).toString('latin1'), 'PNG');
        assert.equal(png.readUInt32BE(16), 1200);
        assert.equal(png.readUInt32BE(20), 700);
      });

      test('progress: onprogress receives increasing progress while ask_database runs', async () => {
        const seen = [];
        const res = await plain.client.callTool({ name: 'ask_database', arguments: { question: 'Which genre has the most tracks?' } },
          { onprogress: (p) => seen.push(p) });
        assert.equal(res.structuredContent.status, 'answered');
        assert.ok(seen.length >= 2, `at least two progress notifications (got ${JSON.stringify(seen)})`);
        for (let i = 1; i < seen.length; i++) assert.ok(seen[i].progress > seen[i - 1].progress, `progress increases: ${JSON.stringify(seen)}`);
        assert.ok(seen.every((p) => typeof p.message === 'string' && p.message.length), 'each says what is happening');
        assert.ok(seen.some((p) => /asking the model/.test(p.message)));
      });

      test('cancellation: aborting after the first progress rejects at once; the server keeps serving and the question stops', async () => {
        const c = await open();
        const ac = new AbortController();
        let firstProgress = false;
        const call = c.client.callTool({ name: 'ask_database', arguments: { question: 'Please never answer this' } }, {
          signal: ac.signal,
          onprogress: () => { if (!firstProgress) { firstProgress = true; ac.abort(new Error('the test cancels')); } },
        });
        await assert.rejects(call, /the test cancels/);
        assert.ok(firstProgress, 'a progress notification came first');

        const after = await c.client.callTool({ name: 'run_sql', arguments: { sql: 'SELECT count(*) AS n FROM Genre' } });
        assert.deepEqual(after.structuredContent.rows, rowsOf(sqlite(TRUTH, 'SELECT count(*) AS n FROM Genre')));
        /* One question runs at a time: this one can only finish once the
         * cancelled one (whose model never answers) has stopped. */
        const next = await c.client.callTool({ name: 'ask_database', arguments: { question: 'Which genre has the most tracks?' } });
        assert.equal(next.structuredContent.status, 'answered');
      });

      test('elicitation: a client that can answer is asked, and the answer is computed with its reply', async () => {
        const asked = [];
        let action = 'accept';
        const c = await open({
          elicit: async (req) => {
            asked.push(req.params);
            return action === 'accept' ? { action, content: { answer: REPLY } } : { action };
          },
        });
        const mark = model.requests.length;
        const res = await c.client.callTool({ name: 'ask_database', arguments: { question: 'Who is the top customer?' } });
        assert.equal(asked.length, 1, 'asked once');
        assert.equal(asked[0].message, CLARIFY_Q, 'with the model\'s question');
        assert.equal(asked[0].requestedSchema.type, 'object');
        assert.deepEqual(asked[0].requestedSchema.required, ['answer']);
        const s = res.structuredContent;
        assert.equal(s.status, 'answered', textOf(res));
        assert.equal(s.clarification, null);
        assert.equal(s.answer, 'Helena Holý spent the most.');
        assert.deepEqual(s.rows, rowsOf(sqlite(TRUTH, TOP_CUSTOMER_SQL)));
        assert.ok(since(mark).some((r) => r.body.messages.some((m) => m.role === 'tool' && m.content === `The user answered: ${REPLY}`)),
          'the model server saw the reply');

        /* declined: the question comes back */
        action = 'decline';
        const declined = await c.client.callTool({ name: 'ask_database', arguments: { question: 'Who is the top customer?' } });
        assert.equal(asked.length, 2);
        assert.equal(declined.structuredContent.status, 'clarify');
        assert.equal(declined.structuredContent.clarification, CLARIFY_Q);
        assert.equal(declined.structuredContent.answer, null);
        assert.match(textOf(declined), /declined/);
      });

      test('no elicitation capability: status clarify with the question; the reply in the thread finishes it', async () => {
        const mark = model.requests.length;
        const first = await plain.client.callTool({ name: 'ask_database', arguments: { question: 'Who is the top customer?' } });
        const q = first.structuredContent;
        assert.equal(q.status, 'clarify');
        assert.equal(q.clarification, CLARIFY_Q);
        assert.equal(q.answer, null);
        assert.ok(textOf(first).includes(CLARIFY_Q) && textOf(first).includes(q.thread_id), 'the text tells the client what to ask and where to reply');
        assert.notEqual(first.isError, true);

        const second = await plain.client.callTool({ name: 'ask_database', arguments: { question: REPLY, thread_id: q.thread_id } });
        const s = second.structuredContent;
        assert.equal(s.status, 'answered', textOf(second));
        assert.equal(s.answer, 'Helena Holý spent the most.');
        assert.deepEqual(s.rows, rowsOf(sqlite(TRUTH, TOP_CUSTOMER_SQL)));
        assert.equal(s.thread_id, q.thread_id);
        assert.ok(since(mark).some((r) => r.body.messages.some((m) => m.role === 'tool' && m.content === `The user answered: ${REPLY}`)),
          'the reply reached the model as the answer to its question');
      });
    });
  }
}

/* ---- below the SDK: raw messages ----------------------------------------------------- */

describe('raw stdio', { timeout: FAIL_AFTER }, () => {
  for (const era of ['modern', 'legacy']) {
    test(`cancellation (${era}): notifications/cancelled stops the question and no response for its id is ever written`, async () => {
      const sc = scratch();
      const raw = new RawStdio(serveArgs(sc, { model }), { cwd: sc.dir });
      const req = (id, method, params) => (era === 'modern' ? modernRequest(id, method, params)
        : { jsonrpc: '2.0', id, method, params });
      if (era === 'legacy') {
        const init = await raw.request({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } });
        assert.equal(init.result.protocolVersion, '2025-11-25');
        await raw.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
      }
      const hang = req('cancel-me', 'tools/call', { name: 'ask_database', arguments: { question: 'Please never answer this' } });
      hang.params._meta = { ...hang.params._meta, progressToken: 'p1' };
      await raw.send(hang);
      await raw.waitFor((m) => m.method === 'notifications/progress' && m.params.progressToken === 'p1', { what: 'progress of cancel-me' });
      const cancelled = { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 'cancel-me', reason: 'the test cancels' } };
      await raw.send(cancelled);
      const quick = await raw.request(req(2, 'tools/call', { name: 'run_sql', arguments: { sql: 'SELECT 6 * 7 AS answer' } }));
      assert.deepEqual(quick.result.structuredContent.rows, [[42]]);
      /* one question at a time: this one finishes only if the cancelled one stopped */
      const next = await raw.request(req(3, 'tools/call', { name: 'ask_database', arguments: { question: 'Which genre has the most tracks?' } }));
      assert.equal(next.result.structuredContent.status, 'answered');
      /* a cancellation of an unknown id is ignored */
      await raw.send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 'never-sent' } });
      const ping = era === 'legacy' ? await raw.request({ jsonrpc: '2.0', id: 4, method: 'ping' })
        : await raw.request(modernRequest(4, 'server/discover'));
      assert.ok(ping.result, 'still serving');
      /* once it has exited, every response it would ever write is in */
      const exit = await raw.close();
      assert.equal(exit.code, 0, raw.stderr);
      assert.deepEqual(raw.responsesTo('cancel-me'), [], 'no response for the cancelled request');
      assert.ok(raw.messages.every((m) => m !== null), 'every stdout line is one JSON message');
      const late = raw.messages.slice(raw.messages.indexOf(quick))
        .filter((m) => m.method === 'notifications/progress' && m.params.progressToken === 'p1');
      assert.deepEqual(late, [], 'no progress for it after the cancellation either');
      assert.ok(sc.unchanged());
    });
  }

  test('requestState: the genuine state finishes the question; altered, forged or missing state is -32602', async () => {
    const sc = scratch();
    const raw = new RawStdio(serveArgs(sc, { model }), { cwd: sc.dir });
    const caps = { elicitation: {} };
    const params = { name: 'ask_database', arguments: { question: 'Who is the top customer?' } };
    const first = await raw.request(modernRequest(1, 'tools/call', params, caps));
    const r = first.result;
    assert.equal(r.resultType, 'input_required', JSON.stringify(first));
    assert.equal(r.inputRequests.clarification.method, 'elicitation/create');
    assert.equal(r.inputRequests.clarification.params.message, CLARIFY_Q);
    assert.equal(typeof r.requestState, 'string');
    const state = r.requestState;
    const accept = { clarification: { action: 'accept', content: { answer: REPLY } } };

    const flip = (s, i) => s.slice(0, i) + (s[i] === 'A' ? 'B' : 'A') + s.slice(i + 1);
    const [, body, mac] = state.split('.');
    const payload = JSON.parse(Buffer.from(body, 'base64url').toString());
    const tampered = Buffer.from(JSON.stringify({ ...payload, t: 'someone-elses-thread' })).toString('base64url');
    const bad = {
      'one character of the payload changed': flip(state, 3 + Math.floor(body.length / 2)),
      'one character of the MAC changed': flip(state, state.length - 5),
      'the payload rewritten, old MAC': `v1.${tampered}.${mac}`,
      'a forged MAC': `v1.${tampered}.${'0'.repeat(64)}`,
      'truncated': state.slice(0, -1),
      'not a state at all': 'hello',
      'an expired payload': `v1.${Buffer.from(JSON.stringify({ ...payload, e: 1 })).toString('base64url')}.${mac}`,
    };
    let id = 10;
    for (const [what, s] of Object.entries(bad)) {
      const res = await raw.request(modernRequest(id++, 'tools/call', { ...params, inputResponses: accept, requestState: s }, caps));
      assert.equal(res.error?.code, -32602, `${what}: ${JSON.stringify(res)}`);
      assert.match(res.error.message, /requestState/);
    }
    const missing = await raw.request(modernRequest(id++, 'tools/call', { ...params, inputResponses: accept }, caps));
    assert.equal(missing.error?.code, -32602, 'inputResponses without requestState');
    const notString = await raw.request(modernRequest(id++, 'tools/call', { ...params, inputResponses: accept, requestState: 42 }, caps));
    assert.equal(notString.error?.code, -32602);

    /* the genuine state, unchanged, still works after all that */
    const good = await raw.request(modernRequest(id++, 'tools/call', { ...params, inputResponses: accept, requestState: state }, caps));
    assert.equal(good.result?.structuredContent?.status, 'answered', JSON.stringify(good));
    assert.deepEqual(good.result.structuredContent.rows, rowsOf(sqlite(TRUTH, TOP_CUSTOMER_SQL)));
    /* the state without the responses asks again */
    const again = await raw.request(modernRequest(id++, 'tools/call', { ...params, requestState: state }, caps));
    assert.equal(again.result?.resultType, 'input_required');
    await raw.close();
    assert.ok(sc.unchanged());
  });

  test('2025-03-26: batches come back as arrays, initialize may not be in one, no structuredContent', async () => {
    const sc = scratch();
    const raw = new RawStdio(serveArgs(sc), { cwd: sc.dir });
    const init = await raw.request({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-03-26', capabilities: {}, clientInfo: { name: 'old', version: '1' } } });
    assert.equal(init.result.protocolVersion, '2025-03-26');
    const from = raw.messages.length;
    await raw.send([
      { jsonrpc: '2.0', id: 'b1', method: 'ping' },
      { jsonrpc: '2.0', method: 'notifications/initialized' },
      { jsonrpc: '2.0', id: 'b2', method: 'tools/call', params: { name: 'run_sql', arguments: { sql: 'SELECT count(*) AS n FROM Genre' } } },
      { jsonrpc: '2.0', id: 'b3', method: 'initialize', params: { protocolVersion: '2025-03-26', capabilities: {}, clientInfo: { name: 'x', version: '1' } } },
      { jsonrpc: '2.0', id: 'b4', method: 'tools/list' },
    ]);
    const batch = await raw.waitFor((m) => Array.isArray(m), { from, what: 'the batch reply' });
    assert.deepEqual(batch.map((m) => m.id), ['b1', 'b2', 'b3', 'b4'], 'one reply per request, none for the notification');
    assert.deepEqual(batch[0].result, {});
    const sql = batch[1].result;
    assert.equal(sql.structuredContent, undefined, 'structuredContent arrived with 2025-06-18');
    assert.deepEqual(jsonInText(sql.content[0].text).rows, rowsOf(sqlite(TRUTH, 'SELECT count(*) AS n FROM Genre')));
    assert.equal(batch[2].error?.code, -32600, 'initialize in a batch');
    assert.ok(batch[3].result.tools.every((t) => !('outputSchema' in t) && t.annotations.readOnlyHint), 'no outputSchema before 2025-06-18; annotations stay');
    await raw.close();
  });

  test('2025-06-18 over stdio: elicitation/create without mode, answered by a JSON-RPC response', async () => {
    const sc = scratch();
    const raw = new RawStdio(serveArgs(sc, { model }), { cwd: sc.dir });
    await raw.request({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: { elicitation: {} }, clientInfo: { name: 'r', version: '1' } } });
    await raw.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
    await raw.send({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'ask_database', arguments: { question: 'Who is the top customer?' } } });
    const ask = await raw.waitFor((m) => m.method === 'elicitation/create', { what: 'the server\'s elicitation/create' });
    assert.ok(typeof ask.id === 'string' || Number.isInteger(ask.id), 'a request with an id');
    assert.equal(ask.params.message, CLARIFY_Q);
    assert.equal('mode' in ask.params, false, 'no mode before 2025-11-25');
    /* a response to nothing is ignored; the real one continues the question */
    await raw.send({ jsonrpc: '2.0', id: 'not-asked', result: { action: 'accept', content: { answer: 'no' } } });
    await raw.send({ jsonrpc: '2.0', id: ask.id, result: { action: 'accept', content: { answer: REPLY } } });
    const done = await raw.waitFor((m) => m.id === 1 && !('method' in m), { what: 'the tools/call result' });
    assert.equal(done.result.structuredContent.status, 'answered', JSON.stringify(done));
    assert.deepEqual(done.result.structuredContent.rows, rowsOf(sqlite(TRUTH, TOP_CUSTOMER_SQL)));
    await raw.close();
    assert.ok(sc.unchanged());
  });

  test('requestState over HTTP: an altered state is -32602 too', async () => {
    const sc = scratch();
    const srv = await startHttp(serveArgs(sc, { model }), { cwd: sc.dir });
    try {
      const caps = { elicitation: {} };
      const params = { name: 'ask_database', arguments: { question: 'Who is the top customer?' } };
      const first = await postModern(srv.url, 1, 'tools/call', params, { caps });
      assert.equal(first.status, 200);
      const state = first.json.result.requestState;
      assert.equal(first.json.result.resultType, 'input_required');
      const altered = state.slice(0, 5) + (state[5] === 'x' ? 'y' : 'x') + state.slice(6);
      const res = await postModern(srv.url, 2, 'tools/call', { ...params, requestState: altered, inputResponses: { clarification: { action: 'accept', content: { answer: REPLY } } } }, { caps });
      assert.equal(res.json.error?.code, -32602, res.text);
      assert.equal(res.json.id, 2);
    } finally {
      await srv.close();
    }
    assert.ok(sc.unchanged());
  });
});

describe('shutdown', { timeout: FAIL_AFTER }, () => {
  test('SIGTERM during a question that never ends: stdio and HTTP servers exit 0 (without waiting for the model)', async () => {
    const sc = scratch();
    const raw = new RawStdio(serveArgs(sc, { model }), { cwd: sc.dir });
    const hang = modernRequest(1, 'tools/call', { name: 'ask_database', arguments: { question: 'Please never answer this' } });
    hang.params._meta.progressToken = 1;
    await raw.send(hang);
    await raw.waitFor((m) => m.method === 'notifications/progress', { what: 'the question under way' });
    raw.child.kill('SIGTERM');
    const exit = await raw.exitPromise;
    assert.deepEqual(exit, { code: 0, signal: null }, raw.stderr);

    const srv = await startHttp(serveArgs(sc, { model }), { cwd: sc.dir });
    const mark = model.requests.length;
    const pending = postModern(srv.url, 2, 'tools/call', { name: 'ask_database', arguments: { question: 'Please never answer this' } }).catch((e) => e);
    await model.until(() => since(mark).some((r) => allText(r).includes('never answer')));
    const hexit = await srv.close();
    assert.deepEqual(hexit, { code: 0, signal: null }, srv.stderr);
    await pending;
    assert.ok(sc.unchanged());
  });
});

/* clientCapabilities come per request in 2026-07-28: the same server elicits
 * for a request that declares it and not for one that does not. */
test('2026-07-28 capabilities are per request, not per connection', { timeout: FAIL_AFTER }, async () => {
  const sc = scratch();
  const raw = new RawStdio(serveArgs(sc, { model }), { cwd: sc.dir });
  const params = { name: 'ask_database', arguments: { question: 'Who is the top customer?' } };
  const withCap = await raw.request(modernRequest(1, 'tools/call', params, { elicitation: { form: {} } }));
  assert.equal(withCap.result.resultType, 'input_required');
  const without = await raw.request(modernRequest(2, 'tools/call', params, {}));
  assert.equal(without.result.resultType, 'complete');
  assert.equal(without.result.structuredContent.status, 'clarify');
  const urlOnly = await raw.request(modernRequest(3, 'tools/call', params, { elicitation: { url: {} } }));
  assert.equal(urlOnly.result.structuredContent.status, 'clarify', 'a client that only takes URLs gets no form');
  await raw.close();
  assert.ok(sc.unchanged());
});

test('the knowledge file beside the database: listed, readable as JSON, its descriptions in the cards', { timeout: FAIL_AFTER }, async () => {
  const sc = scratch();
  const knowledge = {
    tables: { Invoice: 'one row per sale to a customer' },
    definitions: ['revenue = SUM(InvoiceLine.UnitPrice * InvoiceLine.Quantity)'],
    examples: [{ question: 'How many artists?', sql: 'SELECT COUNT(*) FROM Artist' }],
  };
  fs.writeFileSync(path.join(sc.dir, 'chinook.knowledge.json'), JSON.stringify(knowledge));
  const c = await connectStdio(sc);
  const { resources } = await c.client.listResources();
  const k = resources.find((r) => r.uri === 'tabletalk://knowledge');
  assert.ok(k, 'the knowledge resource is listed');
  assert.equal(k.mimeType, 'application/json');
  const read = await c.client.readResource({ uri: 'tabletalk://knowledge' });
  assert.equal(read.contents[0].mimeType, 'application/json');
  assert.deepEqual(JSON.parse(read.contents[0].text), knowledge);
  const card = await c.client.readResource({ uri: 'tabletalk://table/Invoice' });
  assert.match(card.contents[0].text, /one row per sale to a customer/);
  await c.close();
  assert.ok(sc.unchanged());

  // without a file: not listed, and reading it says there is none
  const plain = scratch();
  const p = await connectStdio(plain);
  const again = await p.client.listResources();
  assert.equal(again.resources.find((r) => r.uri === 'tabletalk://knowledge'), undefined);
  await assert.rejects(p.client.readResource({ uri: 'tabletalk://knowledge' }),
    (e) => /not found: there is no knowledge file beside the database/i.test(e.message));
  await p.close();

  // --knowledge FILE elsewhere: served instead of the (absent) file beside
  const named = scratch();
  const file = path.join(named.dir, 'facts.json');
  fs.writeFileSync(file, JSON.stringify(knowledge));
  const n = await connectStdio(named, { extra: ['--knowledge', file] });
  const nread = await n.client.readResource({ uri: 'tabletalk://knowledge' });
  assert.deepEqual(JSON.parse(nread.contents[0].text), knowledge);
  const ncard = await n.client.readResource({ uri: 'tabletalk://table/Invoice' });
  assert.match(ncard.contents[0].text, /one row per sale to a customer/);
  await n.close();
  // a malformed named file stops the start with a usage error naming its line
  fs.writeFileSync(file, '{\n  "tables": {"Invoice": "sales",}\n}\n');
  const bad = spawnSync(BIN, ['serve-mcp', named.db, '--knowledge', file], { input: '', timeout: FAIL_AFTER });
  assert.equal(bad.status, 2, bad.stderr.toString());
  assert.match(bad.stderr.toString(), /knowledge file .*facts\.json:2: /);
  assert.ok(named.unchanged());
});
