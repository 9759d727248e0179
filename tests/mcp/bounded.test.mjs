// Bounded output never loses a row, through serve-mcp's run_sql (the
// official SDK as client): on a SQLite file made here whose one row holds a
// 1,000,000-byte cell, more than the byte limit with the row's id, the row
// is given with its cell cut at the bound and followed by "…[cut N bytes]",
// structuredContent counts the cut cells, and the text says so.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { tempDir } from '../support/harness.mjs';
import { connectStdio, textOf } from './protocol.mjs';

test('run_sql: a row with a 1,000,000-byte cell comes back with the cell cut, marked and counted', async () => {
  const dir = tempDir('tabletalk-mcp-bounded-');
  const db = path.join(dir, 'bigcell.sqlite');
  execFileSync('sqlite3', [db, "CREATE TABLE t(id INTEGER, note TEXT); "
    + "INSERT INTO t VALUES (7, replace(hex(zeroblob(500000)), '00', 'ab'));"]);
  const s = await connectStdio({ dir, db, state: path.join(dir, 'state') });
  try {
    const res = await s.client.callTool({ name: 'run_sql', arguments: { sql: 'SELECT id, note FROM t' } });
    assert.notEqual(res.isError, true, textOf(res).slice(0, 300));
    const mark = '…[cut 8 bytes]'; /* 1,000,000 bytes: the id's 8, then 999,992 of the note */
    assert.equal(res.structuredContent.row_count, 1);
    assert.equal(res.structuredContent.cells_cut, 1);
    assert.equal(res.structuredContent.truncated, false);
    assert.equal(res.structuredContent.rows[0][0], 7);
    assert.equal(res.structuredContent.rows[0][1].length, 999992 + mark.length);
    assert.ok(res.structuredContent.rows[0][1].endsWith(`ab${mark}`));
    assert.match(textOf(res), /^1 row; 1 long value was cut to fit the size limit \(marked …\[cut N bytes\]\)/);
  } finally {
    await s.close();
  }
});
