// duckdb_query.mjs FILE SQL — DuckDB itself on FILE, for bench/duckdb/run.py:
// a fresh in-memory DuckDB (its official Node binding, the same release
// tabletalk loads) with the file as the view `big`, the SQL run once, the
// rows printed as JSON, and on stderr the time from opening DuckDB to the
// last row (without Node's start-up). Defaults as DuckDB ships them (all cores).
import { DuckDBInstance } from '@duckdb/node-api';

const [file, sql] = process.argv.slice(2);
const reader = file.endsWith('.parquet') ? 'read_parquet' : 'read_csv';
const t0 = performance.now();
const db = await DuckDBInstance.create(':memory:');
const c = await db.connect();
await c.run(`CREATE VIEW big AS SELECT * FROM ${reader}('${file.replaceAll("'", "''")}')`);
const r = await c.runAndReadAll(sql);
console.log(JSON.stringify(r.getRowsJson()));
// DuckDB's own time, without Node's start-up: what run.py reports beside the process's
console.error(`inside_ms ${(performance.now() - t0).toFixed(1)}`);
