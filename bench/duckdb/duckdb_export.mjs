// duckdb_export.mjs FILE FORMAT — DuckDB itself exporting FILE (as the view
// `big`) to stdout with its own writer (FORMAT csv or json: newline-
// delimited), the peer of `tabletalk sql FILE 'SELECT * FROM big' -f csv`
// in bench/duckdb/export.sh. Defaults as DuckDB ships them (all cores).
import { DuckDBInstance } from '@duckdb/node-api';

const [file, format] = process.argv.slice(2);
const reader = file.endsWith('.parquet') ? 'read_parquet' : 'read_csv';
const db = await DuckDBInstance.create(':memory:');
const c = await db.connect();
await c.run(`CREATE VIEW big AS SELECT * FROM ${reader}('${file.replaceAll("'", "''")}')`);
await c.run(`COPY (SELECT * FROM big) TO '/dev/stdout' (FORMAT ${format === 'json' ? 'json' : 'csv'}${format === 'json' ? '' : ', HEADER'})`);
