// Housekeeping through the real binary: the config file
// ($XDG_CONFIG_HOME/tabletalk/config or TABLETALK_CONFIG) and its place in
// the order flags > environment > .env > config; retention (`tabletalk gc`
// and the daily automatic clean-up TABLETALK_KEEP sets); `models rm`.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { ask, run, scratch, server, tempDir } from '../support/harness.mjs';

const answer = (text) => ({ tool: 'answer', args: { text } });

test('the config file: found under XDG_CONFIG_HOME, dotenv quoting, below .env, env and flags', async () => {
  const xdg = tempDir('tabletalk-xdg-');
  const cwd = tempDir();
  fs.mkdirSync(path.join(xdg, 'tabletalk'));
  const config = path.join(xdg, 'tabletalk', 'config');
  fs.writeFileSync(config, '# my settings\nexport TABLETALK_MODEL_PATH="/models dir/#1.gguf" # comment\n');
  const env = { TABLETALK_CONFIG: '', XDG_CONFIG_HOME: xdg, TABLETALK_DATA_DIR: tempDir() };
  const fromConfig = await run(['models', '--which'], { cwd, env });
  assert.equal(fromConfig.code, 0, fromConfig.stderr);
  assert.equal(fromConfig.stdout, '/models dir/#1.gguf\tTABLETALK_MODEL_PATH\n');

  // TABLETALK_CONFIG names another file
  const other = path.join(tempDir(), 'elsewhere.conf');
  fs.writeFileSync(other, "TABLETALK_MODEL_PATH='/other.gguf'\n");
  const named = await run(['models', '--which'], { cwd, env: { ...env, TABLETALK_CONFIG: other } });
  assert.equal(named.stdout, '/other.gguf\tTABLETALK_MODEL_PATH\n');

  // .env wins over the config file, the environment over .env
  fs.writeFileSync(path.join(cwd, '.env'), 'TABLETALK_MODEL_PATH=/from/dotenv.gguf\n');
  const dotenv = await run(['models', '--which'], { cwd, env });
  assert.equal(dotenv.stdout, '/from/dotenv.gguf\tTABLETALK_MODEL_PATH\n');
  const environ = await run(['models', '--which'], { cwd, env: { ...env, TABLETALK_MODEL_PATH: '/from/env.gguf' } });
  assert.equal(environ.stdout, '/from/env.gguf\tTABLETALK_MODEL_PATH\n');

  // a bad value says it came from the config file
  fs.rmSync(path.join(cwd, '.env'));
  fs.writeFileSync(config, 'TABLETALK_BASE_URL=ftp://nowhere\n');
  const sc = scratch();
  const bad = await run(['ask', sc.db, 'How many artists?', '--state-dir', sc.state], { cwd, env });
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /TABLETALK_BASE_URL 'ftp:\/\/nowhere' \(from the config file\) is not a usable URL/);

  // a flag wins over all of them
  const srv = await server({ rules: [answer('There are 275 artists.')] });
  const flag = await run(['ask', sc.db, 'How many artists?', '--base-url', srv.url, '--state-dir', sc.state,
    '--json'], { cwd, env });
  await srv.close();
  assert.equal(flag.code, 0, flag.stderr);
  assert.equal(flag.json.answer, 'There are 275 artists.');
});

/* A state folder with old and new traces and charts, and a thread store. */
function stateWithFiles() {
  const state = tempDir('tabletalk-state-');
  fs.mkdirSync(path.join(state, 'runs'));
  fs.mkdirSync(path.join(state, 'charts'));
  const old = (Date.now() - 40 * 86400e3) / 1000;
  const files = {
    oldTrace: path.join(state, 'runs', '20200101-000000-aaaaaa.jsonl'),
    newTrace: path.join(state, 'runs', '20991231-000000-bbbbbb.jsonl'),
    oldChart: path.join(state, 'charts', '20200101-000000-aaaaaa.png'),
    newChart: path.join(state, 'charts', '20991231-000000-bbbbbb.svg'),
    threads: path.join(state, 'threads.sqlite'),
    other: path.join(state, 'runs', 'notes.txt'),
  };
  for (const f of Object.values(files)) fs.writeFileSync(f, f === files.threads ? '' : 'x'.repeat(100));
  for (const f of [files.oldTrace, files.oldChart, files.threads, files.other]) fs.utimesSync(f, old, old);
  return { state, files };
}

test('gc removes traces and charts older than the age, keeps threads and other files; --dry-run only counts', async () => {
  const { state, files } = stateWithFiles();
  const empty = { TABLETALK_CACHE_DIR: tempDir() };
  const dry = await run(['gc', '--older-than', '30d', '--dry-run', '--json', '--state-dir', state], { env: empty });
  assert.equal(dry.code, 0, dry.stderr);
  assert.deepEqual(JSON.parse(dry.stdout), { removed: 2, bytes: 200, kept: 2, failed: 0,
    cache: { removed: 0, bytes: 0, kept: 0, failed: 0 } });
  for (const f of Object.values(files)) assert.ok(fs.existsSync(f), `${f} is still there after --dry-run`);

  const text = await run(['gc', '--older-than', '30d', '--state-dir', state], { env: empty });
  assert.equal(text.code, 0, text.stderr);
  assert.match(text.stdout, /^removed 2 files \(200 bytes\) older than 30 days in .*; 2 kept\n$/);
  assert.ok(!fs.existsSync(files.oldTrace));
  assert.ok(!fs.existsSync(files.oldChart));
  for (const f of [files.newTrace, files.newChart, files.threads, files.other]) assert.ok(fs.existsSync(f));

  // 41 days keeps what 30 removed (nothing older is left)
  const again = await run(['gc', '--older-than', '1w', '--json', '--state-dir', state]);
  assert.equal(JSON.parse(again.stdout).removed, 0);
});

/* The cache files of the catalog and the value index, by folder. */
function cacheFiles(cache) {
  const out = {};
  for (const kind of ['catalog', 'values']) {
    const dir = path.join(cache, kind);
    out[kind] = fs.existsSync(dir) ? fs.readdirSync(dir).sort().map((f) => path.join(dir, f)) : [];
  }
  return out;
}

test('gc evicts cached catalogs and value indexes: of databases gone, unused past the age, over the size, older forms', async () => {
  const cache = tempDir('tabletalk-cache-');
  const env = { TABLETALK_CACHE_DIR: cache };
  const state = tempDir('tabletalk-state-');
  const [a, b] = [scratch(), scratch()];
  for (const sc of [a, b]) {
    const r = await run(['schema', sc.db, '--question', 'Which artists sell the most?'], { env });
    assert.equal(r.code, 0, r.stderr);
  }
  let files = cacheFiles(cache);
  assert.equal(files.catalog.length, 2, 'one catalog per database, the copy apart from the original');
  assert.equal(files.values.length, 2);
  const older = path.join(cache, 'values', '0123456789abcdef.tsv'); // as tabletalk wrote it before
  fs.writeFileSync(older, 'tabletalk-values 1\n');

  // b's file is gone (a temporary copy): its entries and the older form go; --dry-run only counts
  fs.rmSync(b.db);
  const gc = (extra = [], more = {}) => run(['gc', '--json', '--state-dir', state, ...extra], { env: { ...env, ...more } });
  const dry = await gc(['--dry-run']);
  assert.equal(dry.code, 0, dry.stderr);
  assert.equal(dry.json.cache.removed, 3);
  assert.equal(cacheFiles(cache).catalog.length, 2);
  const gone = await gc();
  assert.deepEqual({ removed: gone.json.cache.removed, kept: gone.json.cache.kept }, { removed: 3, kept: 2 });
  files = cacheFiles(cache);
  assert.ok(!fs.existsSync(older));

  // a's entries, unused for 40 days, go past TABLETALK_CACHE_KEEP (30d); using them makes them new
  const old = new Date(Date.now() - 40 * 86400 * 1000);
  for (const f of [...files.catalog, ...files.values]) fs.utimesSync(f, old, old);
  const warm = await run(['schema', a.db, '--question', 'Which artists sell the most?'], { env });
  assert.equal(warm.code, 0, warm.stderr);
  assert.equal((await gc()).json.cache.removed, 0, 'a warm start marked them used');
  for (const f of [...files.catalog, ...files.values]) fs.utimesSync(f, old, old);
  assert.equal((await gc([], { TABLETALK_CACHE_KEEP: '60d' })).json.cache.removed, 0);
  assert.equal((await gc()).json.cache.removed, 2);
  assert.deepEqual(cacheFiles(cache), { catalog: [], values: [] });

  // over TABLETALK_CACHE_MAX, the least recently used go first
  const c = scratch();
  const listed = () => { const f = cacheFiles(cache); return [...f.catalog, ...f.values]; };
  await run(['schema', a.db, '--question', 'Which artists sell the most?'], { env });
  const ofA = listed();
  await run(['schema', c.db, '--question', 'Which artists sell the most?'], { env });
  const ofC = listed().filter((f) => !ofA.includes(f));
  assert.equal(ofC.length, 2);
  const day = new Date(Date.now() - 86400 * 1000);
  for (const f of ofA) fs.utimesSync(f, day, day);
  const cBytes = ofC.reduce((n, f) => n + fs.statSync(f).size, 0);
  const trimmed = await gc([], { TABLETALK_CACHE_MAX: String(cBytes) });
  assert.deepEqual({ removed: trimmed.json.cache.removed, kept: trimmed.json.cache.kept }, { removed: 2, kept: 2 });
  for (const f of ofA) assert.ok(!fs.existsSync(f), `${f} was the least recently used`);
  for (const f of ofC) assert.ok(fs.existsSync(f));

  // bad limits are usage errors
  const bad = await gc([], { TABLETALK_CACHE_MAX: 'lots' });
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /TABLETALK_CACHE_MAX='lots'/);
});

test('gc takes its default age from TABLETALK_KEEP; bad ages are usage errors', async () => {
  const { state, files } = stateWithFiles();
  const never = await run(['gc', '--state-dir', state], { env: { TABLETALK_KEEP: 'never' } });
  assert.equal(never.code, 0);
  assert.match(never.stdout, /TABLETALK_KEEP=never: nothing removed/);
  assert.ok(fs.existsSync(files.oldTrace));
  const keep = await run(['gc', '--json', '--state-dir', state], { env: { TABLETALK_KEEP: '35d' } });
  assert.equal(JSON.parse(keep.stdout).removed, 2);
  for (const [args, env, says] of [
    [['gc', '--older-than', '3x', '--state-dir', state], {}, /--older-than takes an age such as 30d/],
    [['gc', '--older-than', '0', '--state-dir', state], {}, /--older-than takes an age/],
    [['gc', '--state-dir', state], { TABLETALK_KEEP: 'forever' }, /TABLETALK_KEEP='forever' is no age/],
    [['gc', 'extra'], {}, /unexpected argument 'extra'/],
  ]) {
    const r = await run(args, { env });
    assert.equal(r.code, 2, `${args.join(' ')}: ${r.stderr}`);
    assert.match(r.stderr, says);
  }
});

test('ask cleans up once a day what TABLETALK_KEEP lets go, and the caches of databases gone', async () => {
  const { state, files } = stateWithFiles();
  const sc = scratch();
  const cache = tempDir('tabletalk-cache-');
  fs.mkdirSync(path.join(cache, 'values'));
  const older = path.join(cache, 'values', '0123456789abcdef.tsv'); // as tabletalk wrote it before
  fs.writeFileSync(older, 'tabletalk-values 1\n');
  const srv = await server({ rules: [answer('Done.'), answer('Done.')] });
  const r = await run(['ask', sc.db, 'How many artists?', '--base-url', srv.url, '--state-dir', state, '--json'],
    { env: { TABLETALK_KEEP: '30d', TABLETALK_CACHE_DIR: cache } });
  assert.equal(r.code, 0, r.stderr);
  assert.ok(!fs.existsSync(files.oldTrace), 'the 40-day-old trace went');
  assert.ok(!fs.existsSync(older), 'the cache file of the older form went');
  assert.equal(fs.readdirSync(path.join(cache, 'catalog')).length, 1, 'the catalog of this database is kept');
  assert.ok(fs.existsSync(files.newTrace));
  assert.ok(fs.existsSync(path.join(state, 'runs', `${r.json.run_id}.jsonl`)), 'this run is traced');
  // the same day: no second sweep
  fs.writeFileSync(files.oldTrace, 'x');
  const old = (Date.now() - 40 * 86400e3) / 1000;
  fs.utimesSync(files.oldTrace, old, old);
  const r2 = await run(['ask', sc.db, 'How many artists?', '--base-url', srv.url, '--state-dir', state, '--json'],
    { env: { TABLETALK_KEEP: '30d' } });
  await srv.close();
  assert.equal(r2.code, 0, r2.stderr);
  assert.ok(fs.existsSync(files.oldTrace), 'at most one sweep a day');
  // never: nothing goes even when due
  const { state: s2, files: f2 } = stateWithFiles();
  const srv2 = await server({ rules: [answer('Done.')] });
  const r3 = await run(['ask', sc.db, 'How many artists?', '--base-url', srv2.url, '--state-dir', s2, '--json'],
    { env: { TABLETALK_KEEP: 'never' } });
  await srv2.close();
  assert.equal(r3.code, 0, r3.stderr);
  assert.ok(fs.existsSync(f2.oldTrace));
});

test('models rm deletes a model, every part of a split one, and the default link that pointed there', async () => {
  const data = tempDir('tabletalk-data-');
  const dir = path.join(data, 'models');
  fs.mkdirSync(dir);
  fs.writeFileSync(path.join(dir, 'small.gguf'), 'GGUF');
  for (let i = 1; i <= 3; i++) fs.writeFileSync(path.join(dir, `big-0000${i}-of-00003.gguf`), 'GGUF');
  fs.symlinkSync('big-00001-of-00003.gguf', path.join(dir, 'default.gguf'));
  const env = { TABLETALK_DATA_DIR: data };
  const big = await run(['models', 'rm', 'big-00001-of-00003'], { env });
  assert.equal(big.code, 0, big.stderr);
  assert.match(big.stdout, /removed big-00001-of-00003\.gguf \(3 of 3 parts\)/);
  assert.match(big.stdout, /it was the default model/);
  assert.deepEqual(fs.readdirSync(dir).sort(), ['small.gguf']);
  const small = await run(['models', 'rm', 'small.gguf'], { env });
  assert.equal(small.code, 0, small.stderr);
  assert.doesNotMatch(small.stdout, /default/);
  assert.deepEqual(fs.readdirSync(dir), []);
  const gone = await run(['models', 'rm', 'small'], { env });
  assert.equal(gone.code, 1);
  assert.match(gone.stderr, /no model small is installed in .*; `tabletalk models` lists them/);
  for (const args of [['models', 'rm'], ['models', 'rm', '../x'], ['models', 'rm', 'default'], ['models', 'rm', 'a', 'b']]) {
    const r = await run(args, { env });
    assert.equal(r.code, 2, args.join(' '));
  }
});
