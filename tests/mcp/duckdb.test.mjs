// serve-mcp on a Parquet file (made by DuckDB itself: ddb_make beside the
// binary) through the official MCP TypeScript SDK client: run_sql answers
// from the file, concurrent calls each get the same rows, describe_schema
// shows the table with DuckDB's types and statistics, a write and a read
// of a file not given are refused, and nothing is written beside the file.
// Skipped only when libduckdb is not installed (scripts/fetch-duckdb.sh).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { BIN, sha256, tempDir } from '../support/harness.mjs';
import { connectStdio, textOf } from './protocol.mjs';

const MAKE = path.join(path.dirname(BIN), 'tests', 'ddb_make');
const probe = fs.existsSync(MAKE) ? spawnSync(MAKE, [':memory:', 'SELECT 1'], { encoding: 'utf8' }) : { status: 77 };
const skip = probe.status === 77 ? 'libduckdb is not installed (scripts/fetch-duckdb.sh)' : false;

test('serve-mcp on a Parquet file: run_sql, describe_schema, refusals, nothing written beside it', { skip }, async () => {
  const dir = tempDir('tabletalk-mcp-duckdb-');
  const file = path.join(dir, 'sales.parquet');
  const made = spawnSync(MAKE, [':memory:', `COPY (SELECT * FROM (VALUES ('north', 10.5), ('south', 3.0), ('north', 4.25)) AS t(region, amount)) TO '${file}' (FORMAT parquet)`], { encoding: 'utf8' });
  assert.equal(made.status, 0, made.stderr);
  fs.writeFileSync(path.join(dir, 'secret.txt'), 'sk-live-secret-value\n');
  const listing = () => fs.readdirSync(dir).sort().map((f) => `${f} ${sha256(path.join(dir, f))}`).join('\n');
  const before = listing();
  const s = await connectStdio({ dir, db: file, state: path.join(tempDir('tabletalk-mcp-duckdb-state-'), 'state') });
  try {
    const res = await s.client.callTool({ name: 'run_sql', arguments: { sql: 'SELECT region, sum(amount) AS total FROM sales GROUP BY region ORDER BY region' } });
    assert.notEqual(res.isError, true, textOf(res));
    assert.deepEqual(res.structuredContent.columns, ['region', 'total']);
    assert.deepEqual(res.structuredContent.rows, [['north', 14.75], ['south', 3]]);
    const many = await Promise.all([1, 2, 3, 4].map(() =>
      s.client.callTool({ name: 'run_sql', arguments: { sql: 'SELECT count(*) AS n FROM sales' } })));
    for (const m of many) assert.deepEqual(m.structuredContent.rows, [[3]]);
    const schema = await s.client.callTool({ name: 'describe_schema', arguments: {} });
    assert.notEqual(schema.isError, true, textOf(schema));
    assert.match(textOf(schema), /sales/);
    assert.match(textOf(schema), /region: VARCHAR, ~2 distinct/);
    const refused = await s.client.callTool({ name: 'run_sql', arguments: { sql: `COPY sales TO '${dir}/out.csv'` } });
    assert.equal(refused.isError, true);
    assert.match(textOf(refused), /^refused: /);
    const secret = await s.client.callTool({ name: 'run_sql', arguments: { sql: `SELECT * FROM read_text('${dir}/secret.txt')` } });
    assert.equal(secret.isError, true);
    assert.match(textOf(secret), /^refused: /);
    assert.ok(!textOf(secret).includes('sk-live'));
  } finally {
    await s.close();
  }
  assert.equal(listing(), before);
});
