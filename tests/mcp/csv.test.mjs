// serve-mcp on a CSV file through the official MCP TypeScript SDK client:
// run_sql answers from the file (quoted fields, accents), describe_schema
// shows its table with the inferred types, writes are refused, several
// calls share the one loaded copy, and nothing is written beside the file.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { sha256, tempDir } from '../support/harness.mjs';
import { connectStdio, textOf } from './protocol.mjs';


test('serve-mcp on a CSV file: run_sql and describe_schema through the SDK, nothing written beside it', async () => {
  const dir = tempDir('tabletalk-mcp-csv-');
  const file = path.join(dir, 'people.csv');
  fs.writeFileSync(file, '\uFEFFid,name,city,score\n1,José,"Zürich, CH",1.5\n2,"Zoë ""Z"" Müller",Málaga,2\n');
  const listing = () => fs.readdirSync(dir).sort().map((f) => `${f} ${sha256(path.join(dir, f))}`).join('\n');
  const before = listing();
  const sc = { dir, db: file, state: path.join(tempDir('tabletalk-mcp-csv-state-'), 'state') };
  const s = await connectStdio(sc);
  try {
    const res = await s.client.callTool({ name: 'run_sql', arguments: { sql: 'SELECT name, city, score FROM people ORDER BY id' } });
    assert.notEqual(res.isError, true, textOf(res));
    assert.deepEqual(res.structuredContent.columns, ['name', 'city', 'score']);
    assert.deepEqual(res.structuredContent.rows, [['José', 'Zürich, CH', 1.5], ['Zoë "Z" Müller', 'Málaga', 2]]);
    /* concurrent calls: each worker's handle reads the same image */
    const many = await Promise.all([1, 2, 3, 4].map(() =>
      s.client.callTool({ name: 'run_sql', arguments: { sql: 'SELECT sum(score) AS s FROM people' } })));
    for (const m of many) assert.deepEqual(m.structuredContent.rows, [[3.5]]);
    const schema = await s.client.callTool({ name: 'describe_schema', arguments: {} });
    assert.notEqual(schema.isError, true, textOf(schema));
    assert.match(textOf(schema), /people/);
    assert.match(textOf(schema), /score: REAL/);
    const refused = await s.client.callTool({ name: 'run_sql', arguments: { sql: 'DELETE FROM people' } });
    assert.equal(refused.isError, true);
    assert.match(textOf(refused), /^refused: /);
  } finally {
    await s.close();
  }
  assert.equal(listing(), before);
});

test('serve-mcp on a CSV folder with a link out of it: describe_schema notes it, run_sql cannot read it', async () => {
  const top = tempDir('tabletalk-mcp-csv-link-');
  const dir = path.join(top, 'dataset');
  fs.mkdirSync(dir);
  fs.writeFileSync(path.join(top, 'secret.csv'), 'key\nsk-live-secret-value\n');
  fs.writeFileSync(path.join(dir, 'people.csv'), 'id,name\n1,Ana\n');
  fs.symlinkSync('../secret.csv', path.join(dir, 'notes.csv'));
  const s = await connectStdio({ dir: top, db: dir, state: path.join(top, 'state') });
  try {
    const schema = await s.client.callTool({ name: 'describe_schema', arguments: {} });
    assert.notEqual(schema.isError, true, textOf(schema));
    const note = `skipped in ${dir}: notes.csv (a symbolic link that leads out of the folder)`;
    assert.deepEqual(schema.structuredContent.notes, [note]);
    assert.ok(textOf(schema).includes(`# Note: ${note}`));
    assert.deepEqual(schema.structuredContent.tables.map((t) => t.name), ['people']);
    const res = await s.client.callTool({ name: 'run_sql', arguments: { sql: 'SELECT * FROM notes' } });
    assert.equal(res.isError, true);
    assert.match(textOf(res), /no such table: notes/);
    assert.ok(!textOf(res).includes('sk-live-secret-value'));
  } finally {
    await s.close();
  }
});
