// The selector step for huge schemas, through the real binary and the
// scripted model: with --selector on, a call of its own shows the model one
// line per table and offers only pick_tables; the tables it names go first
// among the question's cards (names the schema lacks are dropped), the
// ranking fills the rest; a call naming nothing leaves the ranking alone
// with a warning; off (or auto below 400 tables) makes no such call.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { run, runProgram, server, tempDir, traceEvents } from '../support/harness.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const GEN = path.resolve(here, '../../bench/schema/gen.py');
const answer = { tool: 'answer', args: { text: 'Done.' } };

async function bench() {
  const dir = tempDir();
  const r = await runProgram('python3', [GEN, '--out', dir, '--seed', '3', '--filler', '40']);
  assert.equal(r.code, 0, r.stderr);
  return { dir, db: path.join(dir, 'schema.sqlite'), state: path.join(dir, 'state') };
}

const ask = (b, srv, q, extra) => run(['ask', b.db, q, '--base-url', srv.url, '--state-dir', b.state,
  '--json', '--schema-budget', '1000', ...extra]);
const toolNames = (req) => (req.body.tools ?? []).map((t) => t.function.name);
const cardsOf = (req) => req.body.messages.find((m) => m.role === 'user' &&
  /^Tables for this question|# Table:|\n# /.test(m.content ?? ''))?.content ?? '';

test('--selector on: one call with a line per table and pick_tables; its tables lead the cards', async () => {
  const b = await bench();
  const srv = await server({ rules: [
    { when: { tools_include: 'pick_tables' }, tool: 'pick_tables',
      args: { tables: ['tblKbArticle', 'NoSuchTable', 'tblKbArticle', 'carrier'] } },
    answer,
  ] });
  const r = await ask(b, srv, 'Which vendors supply Hex Bolt M8?', ['--selector', 'on']);
  await srv.close();
  assert.equal(r.code, 0, r.stderr);
  assert.equal(srv.requests.length, 2);
  const [sel, first] = srv.requests;
  assert.deepEqual(toolNames(sel), ['pick_tables']);
  const sys = sel.body.messages[0].content;
  const lines = sys.split('Tables:\n')[1].trim().split('\n');
  const t = await run(['schema', b.db, '--json']);
  assert.equal(lines.length, t.json.tables.length, 'one line per table');
  assert.ok(lines.includes('PO_LN: PO_ID->PO_HDR, ITEM_ID->ITEM_MSTR, ORD_QTY, UNIT_PRC_AMT') ||
    lines.some((l) => /^PO_LN: PO_ID->PO_HDR, ITEM_ID->ITEM_MSTR, ORD_QTY, UNIT_PRC_AMT/.test(l)), sys);
  assert.equal(sel.body.messages.at(-1).content, 'Which vendors supply Hex Bolt M8?');
  assert.ok(!toolNames(first).includes('pick_tables'));
  const all = first.body.messages.map((m) => m.content ?? '').join('\n');
  // the named tables are in full, beside what the ranking picks
  assert.match(all, /# Table: tblKbArticle/);
  assert.match(all, /# Table: carrier/);
  assert.match(all, /# Table: ITEM_MSTR/);
  // the trace's schema event says why
  const events = traceEvents(r.json.trace);
  const schema = events.find((e) => e.event === 'schema');
  assert.ok(schema.tables.some((p) => p.table === 'tblKbArticle' && p.reason === 'the model named it'));
  assert.ok(!schema.tables.some((p) => p.table === 'NoSuchTable'));
});

test('a selector call naming no table leaves the choice to the ranking, with a warning', async () => {
  const b = await bench();
  const srv = await server({ rules: [
    { when: { tools_include: 'pick_tables' }, tool: 'pick_tables', args: { tables: ['Nothing'] } },
    answer,
  ] });
  const r = await ask(b, srv, 'Which vendors supply Hex Bolt M8?', ['--selector', 'on']);
  await srv.close();
  assert.equal(r.code, 0, r.stderr);
  assert.equal(srv.requests.length, 2);
  const all = srv.requests[1].body.messages.map((m) => m.content ?? '').join('\n');
  assert.match(all, /# Table: ITEM_MSTR/);
  const events = traceEvents(r.json.trace);
  assert.ok(events.some((e) => e.event === 'warning' && /selector step named no table/.test(e.message ?? '')));
});

for (const extra of [['--selector', 'off'], []]) {
  test(`no selector call with ${extra.join(' ') || 'the default below 400 tables'}`, async () => {
    const b = await bench();
    const srv = await server({ rules: [answer] });
    const r = await ask(b, srv, 'Which vendors supply Hex Bolt M8?', extra);
    await srv.close();
    assert.equal(r.code, 0, r.stderr);
    assert.equal(srv.requests.length, 1);
    assert.ok(!toolNames(srv.requests[0]).includes('pick_tables'));
  });
}

test('--selector wants on, off or auto', async () => {
  const r = await run(['ask', 'x.sqlite', 'q', '--selector', 'sometimes']);
  assert.equal(r.code, 2);
  assert.match(r.stderr, /--selector wants on, off or auto, not 'sometimes'/);
});
