// A PostgreSQL database whose owner is hostile (issue 28), through every
// front end: a copy of chinook with tests/fixtures/pg_hostile.sql planted
// in it on the pg_server fixture's server (skipped without TT_PG_URI_FILE):
// SECURITY DEFINER functions that commit a row through dblink_exec, write a
// server file with COPY ... TO and keep a dblink connection open, reached by
// a shadowing overload (public.lower(varchar), a twin of length(text) put
// first by the database's search_path), column
// notation, planted operators, views over each (nested too), a row security
// policy, a foreign table, an implicit cast, a domain check and an
// aggregate; views over pg_read_file, pg_reload_conf, pg_stat_reset,
// pg_stat_activity, current_setting and user mappings; secrets in a
// database setting, a role setting, a user mapping's password and a large
// object.
//
// Each case goes through `tabletalk sql`, `ask` (the scripted model runs
// the case's SQL), serve-mcp's run_sql and the web API's /api/sql, as the
// fixture's superuser and as its read-only role, and after each case: the
// planted functions' marker table is still empty, every table's checksum
// is unchanged, the server's data folder holds the same files, no COPY file
// appeared in /tmp, no session is left beyond the front end's own, and no
// secret appears in anything tabletalk wrote or sent. `tabletalk schema`
// runs nothing either and says why a view has no samples. A positive
// control (--trust-functions public) shows that the marker, the file and
// the checks do catch a planted function that runs. An overload put into
// pg_catalog itself (a superuser can) stops every query and the schema.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { RawStdio, run, server, startWeb, tempDir } from '../support/harness.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const uriFile = process.env.TT_PG_URI_FILE;
const readerFile = process.env.TT_PG_READER_URI_FILE;
const base = uriFile && fs.existsSync(uriFile) ? fs.readFileSync(uriFile, 'utf8').trim() : '';
const readerBase = readerFile && fs.existsSync(readerFile) ? fs.readFileSync(readerFile, 'utf8').trim() : '';
const skip = base && readerBase ? false : 'TT_PG_URI_FILE names no server URI (the pg_server fixture writes it)';

const DB = 'tt_hostile';
const SECRET = /SECRET-/;
const onDb = (uri, db) => uri.replace(/\/chinook\?/, `/${db}?`);
const SUPER = onDb(base, DB);
const READER = onDb(readerBase, DB);
const ROLES = [['superuser', SUPER], ['reader', READER]];
const COPY_PREFIX = `tt-hostile-${process.pid}`;

/* psql as the fixture's superuser, with the search_path at pg_catalog so
 * that the database's own operators answer none of the checks. */
function psql(uri, q, { catalogPath = true } = {}) {
  const env = { ...process.env, PGOPTIONS: catalogPath ? '-c search_path=pg_catalog' : '' };
  return execFileSync('psql', ['-X', '-At', '-F', '\x1f', '-v', 'ON_ERROR_STOP=1', '-d', uri, '-c', q],
    { env }).toString().trim();
}

/* ---- what may not change ------------------------------------------------------ */

/* The server's data folder: the files it holds (not their contents, which
 * the server rewrites as it runs), less the folders and files the server
 * itself makes and removes while idle. */
const VOLATILE = new Set(['pg_wal', 'pg_stat_tmp', 'pg_stat', 'pg_xact', 'pg_subtrans', 'pg_multixact',
  'pg_logical', 'pg_notify', 'pg_serial', 'pg_snapshots', 'pg_replslot', 'pg_dynshmem', 'pgsql_tmp']);
function dataFiles() {
  const cluster = fs.readFileSync(path.join(path.dirname(uriFile), 'cluster'), 'utf8').trim();
  const root = path.join(cluster, 'data');
  const out = [];
  const walk = (dir, rel) => {
    for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
      if (VOLATILE.has(e.name)) continue;
      const r = rel ? `${rel}/${e.name}` : e.name;
      if (e.isDirectory()) walk(path.join(dir, e.name), r);
      else if (!/(_fsm|_vm|pg_internal\.init|postmaster\.(pid|opts))$/.test(e.name)) out.push(r);
    }
  };
  walk(root, '');
  return out.sort().join('\n');
}

const copyFiles = () => fs.readdirSync('/tmp').filter((f) => f.startsWith(COPY_PREFIX));

/* In one query: the marker's rows, the client sessions but the checks'
 * own (psql's, which end after each check at their own pace), and every
 * table's row count and checksum. */
let stateSql = null;
const sqlString = (s) => `'${s.replace(/'/g, "''")}'`;
function observe() {
  if (!stateSql) {
    const tables = psql(SUPER, `SELECT quote_ident(schemaname) || '.' || quote_ident(tablename) FROM pg_tables
      WHERE schemaname NOT IN ('pg_catalog', 'information_schema') ORDER BY 1`).split('\n');
    stateSql = [
      "SELECT 0, coalesce(string_agg(what, ',' ORDER BY what), '') FROM public.tt_marker",
      `SELECT 1, count(*)::text FROM pg_stat_activity WHERE backend_type = 'client backend'
        AND pid <> pg_backend_pid() AND application_name <> 'psql'`,
      ...tables.map((t, i) => `SELECT ${i + 2}, ${sqlString(t)} || ' ' || count(*) || ' ' ||
        coalesce(md5(string_agg(x::text, ',' ORDER BY x::text)), '') FROM ${t} x`),
    ].join('\nUNION ALL\n') + '\nORDER BY 1';
  }
  const rows = psql(SUPER, stateSql).split('\n').map((l) => l.split('\x1f')[1] ?? '');
  return { marker: rows[0], sessions: Number(rows[1]), sums: rows.slice(2).join('\n') };
}
const marker = () => observe().marker;
const checksums = () => observe().sums;
const sessions = () => observe().sessions;

/* Backends of a finished tabletalk process take a moment to exit, and the
 * server announces no backend's end: a bounded poll (the bound is only a
 * failure's timeout: a session really left behind stays). */
async function sessionsSettle(want) {
  const end = Date.now() + 30000;
  for (;;) {
    const n = sessions();
    if (n <= want || Date.now() > end) return n;
    await new Promise((r) => setTimeout(r, 50));
  }
}

let baseline;
const seen = [];  /* everything tabletalk wrote or sent, for the secret check */

/* After a case: nothing ran, nothing changed, nothing was left. */
async function unchanged(what, liveSessions = 0) {
  let now = observe();
  for (const end = Date.now() + 30000; now.sessions > liveSessions && Date.now() < end;) {
    await new Promise((r) => setTimeout(r, 50)); /* see sessionsSettle */
    now = observe();
  }
  assert.equal(now.marker, '', `${what}: a planted function ran (marker rows)`);
  assert.deepEqual(copyFiles(), [], `${what}: a planted COPY ... TO wrote a file in /tmp`);
  assert.ok(now.sessions <= liveSessions, `${what}: ${now.sessions - liveSessions} session(s) left behind`);
  assert.equal(now.sums, baseline.sums, `${what}: a table changed`);
  assert.equal(dataFiles(), baseline.files, `${what}: the server's data folder changed`);
}

/* ---- the cases ------------------------------------------------------------------ */

const REFUSED = 'refused', OK = 'ok';
const CASES = [
  ['overload lower(varchar)', 'SELECT lower("Name") FROM "Artist" LIMIT 3', REFUSED],
  ['exact twin first on the search_path', 'SELECT length("Name") FROM "Artist" LIMIT 3', REFUSED],
  ['column notation', 'SELECT a.pwn FROM "Artist" a LIMIT 3', REFUSED],
  ['planted = for varchar', 'SELECT count(*) FROM "Artist" WHERE "Name" = \'AC/DC\'', REFUSED],
  ['planted LIKE operator', 'SELECT count(*) FROM "Artist" WHERE "Name" LIKE \'A%\'', REFUSED],
  ['view over a function', 'SELECT * FROM v_dbl LIMIT 3', REFUSED],
  ['view over a view', 'SELECT * FROM v_nested LIMIT 3', REFUSED],
  ['view over the overload', 'SELECT * FROM v_lower LIMIT 3', REFUSED],
  ['view over the operator', 'SELECT * FROM v_op', REFUSED],
  ['view over column notation', 'SELECT * FROM v_pwn LIMIT 3', REFUSED],
  ['row security policy', 'SELECT * FROM t_rls', REFUSED],
  ['foreign table', 'SELECT * FROM ft_genre LIMIT 3', REFUSED],
  ['implicit cast', 'SELECT m::text FROM t_mood', REFUSED],
  ['domain check', 'SELECT 1::dpos', REFUSED],
  ['planted aggregate', 'SELECT max("Name") FROM "Artist"', REFUSED],
  ['view over pg_reload_conf', 'SELECT * FROM v_reload', REFUSED],
  ['view over pg_stat_reset', 'SELECT * FROM v_reset', REFUSED],
  ['view over pg_read_file', 'SELECT * FROM v_file', REFUSED],
  ['custom setting', "SELECT current_setting('app.api_key')", REFUSED],
  ['database and role settings', 'SELECT * FROM pg_db_role_setting', REFUSED],
  ['pg_settings', "SELECT setting FROM pg_settings WHERE name = 'app.api_key'", REFUSED],
  ['user_mapping_options', 'SELECT * FROM information_schema.user_mapping_options', REFUSED],
  ['_pg_user_mappings', 'SELECT * FROM information_schema._pg_user_mappings', REFUSED],
  ['pg_largeobject', 'SELECT * FROM pg_largeobject', REFUSED],
  ['pg_stat_activity', 'SELECT query FROM pg_stat_activity', REFUSED],
  ['view over pg_stat_activity', 'SELECT * FROM v_activity', REFUSED],
  ['view over current_setting', 'SELECT * FROM v_setting', REFUSED],
  ['view over user mappings', 'SELECT * FROM v_mappings', REFUSED],
  ['a path setting', "SELECT current_setting('data_directory')", REFUSED],
  ['role settings through pg_roles', 'SELECT rolname, rolconfig FROM pg_roles', REFUSED],
  ['dblink_exec', "SELECT dblink_exec('dbname=tt_hostile', 'DELETE FROM \"Genre\"')", REFUSED],
  ['pg_stat_reset', 'SELECT pg_stat_reset()', REFUSED],
  ['pg_reload_conf', 'SELECT pg_reload_conf()', REFUSED],
  ['COPY TO a file', `COPY (SELECT 1) TO '/tmp/${COPY_PREFIX}-direct'`, REFUSED],
  ['an ordinary count', 'SELECT count(*) FROM "Track"', OK],
  ['a materialized view (stored rows)', 'SELECT * FROM mv_safe ORDER BY g LIMIT 3', OK],
  ['a table with a planted default', 'SELECT * FROM t_default', OK],
  ['ORDER BY a varchar column', 'SELECT "Name" FROM "Genre" ORDER BY "Name" LIMIT 3', OK],
];

before(async () => {
  if (skip) return;
  const u = new URL(base);
  const host = u.searchParams.get('host'), port = u.searchParams.get('port') ?? '5432';
  const user = u.searchParams.get('user') ?? 'tabletalk';
  psql(base, `DROP DATABASE IF EXISTS ${DB} WITH (FORCE)`);
  psql(base, `CREATE DATABASE ${DB} TEMPLATE chinook`);
  const fixture = path.join(here, '../fixtures/pg_hostile.sql');
  execFileSync('psql', ['-X', '-q', '-v', 'ON_ERROR_STOP=1',
    '-v', `connstr=host=${host} port=${port} dbname=${DB} user=${user}`, '-v', `sockdir=${host}`,
    '-v', `dbname=${DB}`, '-v', `copyprefix=/tmp/${COPY_PREFIX}`, '-v', 'reader=tt_reader',
    '-d', SUPER, '-f', fixture], { env: { ...process.env, PGOPTIONS: '' } });
  for (const f of copyFiles()) fs.rmSync(path.join('/tmp', f), { force: true }); /* the matview's */
  await sessionsSettle(0);
  baseline = { sums: checksums(), files: dataFiles() };
});

after(() => {
  if (skip) return;
  for (const f of copyFiles()) fs.rmSync(path.join('/tmp', f), { force: true });
  psql(base, `DROP DATABASE IF EXISTS ${DB} WITH (FORCE)`); /* its settings go with it */
});

/* ---- sql ------------------------------------------------------------------------ */

test('tabletalk sql: every planted function, view and secret refused before it runs, as superuser and as reader', { skip }, async () => {
  for (const [role, uri] of ROLES) {
    for (const [name, sql, want] of CASES) {
      const r = await run(['sql', uri, sql, '--format', 'json']);
      seen.push(r.stdout, r.stderr);
      const what = `sql as ${role}: ${name}`;
      if (want === REFUSED) {
        assert.equal(r.code, 3, `${what}: ${r.stdout}${r.stderr}`);
        assert.equal(r.json.error.kind, 'refused', what);
      } else {
        assert.equal(r.code, 0, `${what}: ${r.stdout}${r.stderr}`);
      }
      /* a superuser is warned at every start, a read-only role is not */
      if (role === 'superuser') assert.match(r.stderr, /as tabletalk, a superuser: a READ ONLY transaction cannot stop/, what);
      else assert.doesNotMatch(r.stderr, /warning/, what);
      await unchanged(what);
    }
  }
  assert.doesNotMatch(seen.join('\n'), SECRET);
});

test('tabletalk sql: the refusals name the function, the view and the option that allows it', { skip }, async () => {
  const said = async (sql) => {
    const r = await run(['sql', SUPER, sql, '--format', 'json']);
    seen.push(r.stdout, r.stderr);
    return r.json.error.message;
  };
  assert.equal(await said('SELECT * FROM v_nested'),
    'view v_dbl (read through v_nested) calls public.tt_dbl(integer), which tabletalk does not run; --trust-functions public to allow');
  assert.match(await said('SELECT lower("Name") FROM "Artist"'), /^lower\(\.\.\.\) can call public\.lower\(character varying\)/);
  assert.match(await said('SELECT a.pwn FROM "Artist" a'), /column notation for pwn\(x\)/);
  assert.match(await said('SELECT * FROM t_rls'), /the row security policy p_rls of t_rls calls public\.tt_visible\(integer\)/);
  assert.match(await said('SELECT * FROM ft_genre'), /foreign table ft_genre is read through public\.postgres_fdw_handler\(\)/);
  assert.match(await said('SELECT * FROM v_activity'), /view v_activity reads pg_catalog\.pg_stat_activity, which is not readable here/);
  await unchanged('the messages');
});

/* ---- ask (the scripted model runs each case's SQL) -------------------------------- */

test('ask: the model\'s run_sql of each case is refused (or runs) the same way, and no secret reaches the model', { skip }, async () => {
  const rules = [];
  CASES.forEach(([, sql], i) => rules.push({ when: { question: `^case ${i}$`, step: 0 }, tool: 'run_sql', args: { sql } }));
  rules.push({ when: { step: 1 }, tool: 'answer', args: { text: 'Done.' } });
  const srv = await server({ rules });
  try {
    for (const [role, uri] of ROLES) {
      const state = path.join(tempDir('tabletalk-hostile-'), 'state');
      for (const [i, [name, , want]] of CASES.entries()) {
        const q = `case ${i}`;
        const r = await run(['ask', uri, q, '--base-url', srv.url, '--state-dir', state, '--json',
          '--schema-budget', '20000']);
        seen.push(r.stdout, r.stderr);
        const what = `ask as ${role}: ${name}`;
        assert.equal(r.code, 0, `${what}: ${r.stderr}`);
        const req = srv.requests.filter((x) => x.body.messages.some((m) => m.role === 'user' && m.content === q)).at(-1);
        const tool = req.body.messages.filter((m) => m.role === 'tool').at(-1)?.content ?? '';
        if (want === REFUSED) assert.match(tool, /refused|not allowed|not readable|does not run/, `${what}: ${tool}`);
        else assert.doesNotMatch(tool, /refused|not allowed|not readable|does not run/, `${what}: ${tool}`);
        await unchanged(what);
      }
      seen.push(fs.readdirSync(state, { recursive: true }).map((f) => path.join(state, f))
        .filter((f) => fs.statSync(f).isFile()).map((f) => fs.readFileSync(f, 'latin1')).join('\n'));
    }
    seen.push(JSON.stringify(srv.requests));
    /* what the model was shown of the database: no samples of a view that would run a planted function */
    const prompt = srv.requests[0].body.messages.map((m) => m.content ?? '').join('\n');
    assert.match(prompt, /no example values: view v_dbl calls public\.tt_dbl\(integer\)/);
  } finally {
    await srv.close();
  }
  assert.doesNotMatch(seen.join('\n'), SECRET);
});

/* ---- serve-mcp's run_sql ------------------------------------------------------------ */

test('serve-mcp run_sql: every case refused or run as on the CLI; no session of a planted dblink is left; the superuser is warned in the instructions', { skip }, async () => {
  for (const [role, uri] of ROLES) {
    const state = path.join(tempDir('tabletalk-hostile-'), 'state');
    const mcp = new RawStdio(['serve-mcp', uri, '--state-dir', state]);
    try {
      const init = await mcp.request({ jsonrpc: '2.0', id: 0, method: 'initialize',
        params: { protocolVersion: '2025-03-26', capabilities: {}, clientInfo: { name: 't', version: '1' } } });
      await mcp.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
      if (role === 'superuser') assert.match(init.result.instructions, /Warning: connected as tabletalk, a superuser/);
      else assert.doesNotMatch(init.result.instructions, /Warning/);
      /* the server's own connections, once it answered a query */
      await mcp.request({ jsonrpc: '2.0', id: 'warm', method: 'tools/call', params: { name: 'run_sql', arguments: { sql: 'SELECT 1' } } });
      const own = sessions();
      for (const [i, [name, sql, want]] of CASES.entries()) {
        const res = await mcp.request({ jsonrpc: '2.0', id: i + 1, method: 'tools/call', params: { name: 'run_sql', arguments: { sql } } });
        const text = res.result.content?.[0]?.text ?? '';
        seen.push(JSON.stringify(res));
        const what = `serve-mcp as ${role}: ${name}`;
        if (want === REFUSED) {
          assert.equal(res.result.isError, true, what);
          assert.match(text, /^refused: /, `${what}: ${text}`);
        } else {
          assert.notEqual(res.result.isError, true, `${what}: ${text}`);
        }
        await unchanged(what, own);
      }
      seen.push(mcp.stderr);
    } finally {
      await mcp.close();
    }
  }
  await unchanged('after serve-mcp');
  assert.doesNotMatch(seen.join('\n'), SECRET);
});

/* ---- the web API's /api/sql ----------------------------------------------------------- */

function request(w, method, p, body) {
  return new Promise((resolve, reject) => {
    const data = body === undefined ? undefined : JSON.stringify(body);
    const req = http.request({ host: '127.0.0.1', port: w.port, method, path: p,
      headers: { Host: `127.0.0.1:${w.port}`, Authorization: `Bearer ${w.token}`,
        ...(data ? { 'Content-Type': 'application/json' } : {}) } }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let json = null;
        try { json = JSON.parse(text); } catch { /* not JSON */ }
        resolve({ status: res.statusCode, text, json });
      });
    });
    req.on('error', reject);
    if (data) req.write(data);
    req.end();
  });
}

test('web /api/sql: every case refused or run as on the CLI; the session lists the superuser warning', { skip }, async () => {
  const srv = await server({ rules: [] }); /* the page wants a model; /api/sql asks none */
  for (const [role, uri] of ROLES) {
    const state = path.join(tempDir('tabletalk-hostile-'), 'state');
    const w = await startWeb({ db: uri, state }, srv);
    try {
      const s = await request(w, 'GET', '/api/session');
      assert.equal(s.status, 200, s.text);
      if (role === 'superuser') assert.match(s.json.warnings[0], /a superuser: a READ ONLY transaction cannot stop/);
      else assert.deepEqual(s.json.warnings, []);
      const own = sessions();
      for (const [name, sql, want] of CASES) {
        const r = await request(w, 'POST', '/api/sql', { sql });
        seen.push(r.text);
        const what = `web as ${role}: ${name}`;
        if (want === REFUSED) {
          assert.equal(r.status, 422, `${what}: ${r.text}`);
          assert.equal(r.json.refused, true, `${what}: ${r.text}`);
        } else {
          assert.equal(r.status, 200, `${what}: ${r.text}`);
        }
        await unchanged(what, own);
      }
      seen.push(w.stderr());
    } finally {
      await w.close();
    }
  }
  await srv.close();
  await unchanged('after web');
  assert.doesNotMatch(seen.join('\n'), SECRET);
});

/* ---- describing the database --------------------------------------------------------- */

test('tabletalk schema runs nothing of the owner\'s: the cards say why a view or table has no samples', { skip }, async () => {
  for (const [role, uri] of ROLES) {
    const r = await run(['schema', uri]);
    seen.push(r.stdout, r.stderr);
    assert.equal(r.code, 0, r.stderr);
    const what = `schema as ${role}`;
    const card = (kind, name) => new RegExp(`# ${kind}: ${name}[^\\n]*\\n\\[[^\\]]*\\]\\n([^\\n]*)`).exec(r.stdout)?.[1] ?? '';
    assert.equal(card('View', 'v_dbl'), '(no example values: view v_dbl calls public.tt_dbl(integer), which tabletalk does not run; --trust-functions public to allow)', what);
    assert.match(card('View', 'v_activity'), /^\(no example values: view v_activity reads pg_catalog\.pg_stat_activity/, what);
    assert.match(card('Table', 't_rls'), /^\(no example values: the row security policy p_rls of t_rls/, what);
    assert.match(card('Table', 'ft_genre'), /^\(no example values: foreign table ft_genre/, what);
    assert.match(card('Table', 't_mood'), /^\(no example values: reading column m of t_mood can call public\.tt_mood_text/, what);
    /* an ordinary table and a materialized view keep their samples */
    assert.match(r.stdout, /# Table: Genre[^\n]*\n\[[^\]]*examples: \[/, what);
    assert.doesNotMatch(card('View', 'mv_safe'), /no example values/, what);
    await unchanged(what);
  }
  assert.doesNotMatch(seen.join('\n'), SECRET);
});

/* ---- the positive control ------------------------------------------------------------ */

test('control: with --trust-functions public a planted function does run, and the checks see it', { skip }, async () => {
  for (const [role, uri] of ROLES) {
    const r = await run(['sql', uri, 'SELECT * FROM v_dbl LIMIT 1', '--format', 'json', '--trust-functions', 'public']);
    assert.equal(r.code, 0, `${role}: ${r.stdout}${r.stderr}`);
    /* SECURITY DEFINER: the reader's call commits through dblink and writes a server file too */
    assert.equal(marker(), 'dbl', role);
    assert.deepEqual(copyFiles(), [`${COPY_PREFIX}-dbl`], role);
    assert.notEqual(checksums(), baseline.sums, `${role}: the marker row changes a checksum`);
    psql(SUPER, 'DELETE FROM public.tt_marker'); /* TRUNCATE would make a new file */
    for (const f of copyFiles()) fs.rmSync(path.join('/tmp', f), { force: true });
    await unchanged(`after the control as ${role}`);
  }
});

/* ---- an overload put into pg_catalog ------------------------------------------------ */

/* last: making a database of its own changes the server's data folder */
test('an overload planted in pg_catalog: every query and the schema refused, tabletalk\'s own queries included', { skip }, async () => {
  const db = `${DB}_catalog`, uri = onDb(base, db), file = `/tmp/${COPY_PREFIX}-catalog`;
  psql(base, `DROP DATABASE IF EXISTS ${db} WITH (FORCE)`);
  psql(base, `CREATE DATABASE ${db} TEMPLATE chinook`);
  try {
    /* a better match than pg_catalog.upper(text) for varchar, where even a
     * search_path of pg_catalog alone finds it */
    psql(uri, `CREATE FUNCTION pg_catalog.upper(character varying) RETURNS text LANGUAGE plpgsql
      SECURITY DEFINER AS $$ BEGIN EXECUTE format('COPY (SELECT 1) TO %L', ${sqlString(file)});
      RETURN pg_catalog.upper($1::text); END $$`);
    for (const sql of ['SELECT upper("Name") FROM "Artist" LIMIT 1', 'SELECT count(*) FROM "Track"']) {
      const r = await run(['sql', uri, sql, '--format', 'json']);
      assert.equal(r.code, 3, r.stdout + r.stderr);
      assert.match(r.json.error.message, /can call pg_catalog\.upper\(character varying\), which tabletalk does not run \(a function the database's owner added to pg_catalog\)/);
    }
    const s = await run(['schema', uri]);
    assert.equal(s.code, 3, s.stderr);
    assert.match(s.stderr, /cannot describe the database: any query can call pg_catalog\.upper/);
    assert.equal(fs.existsSync(file), false, 'the planted function ran');
  } finally {
    psql(base, `DROP DATABASE IF EXISTS ${db} WITH (FORCE)`);
    fs.rmSync(file, { force: true });
  }
});
