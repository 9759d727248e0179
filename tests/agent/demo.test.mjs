// `make demo`'s script (scripts/demo.sh) and `tabletalk models --which`:
// the demo uses a model when one is set up (an endpoint, a GGUF file named
// by TABLETALK_MODEL_PATH, or the default `pull` installed), and only with
// none lets the scripted stand-in play the model. The build of the demo on
// a machine without the test packages is tests/integration/fresh_demo.sh.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { BIN, FAIL_AFTER, run, server, tempDir } from '../support/harness.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const DEMO = path.resolve(here, '../../scripts/demo.sh');

/* Runs scripts/demo.sh with a clean environment plus env. */
function demo(env) {
  return new Promise((resolve, reject) => {
    const home = tempDir('tabletalk-demo-home-');
    const clean = Object.fromEntries(Object.entries(process.env)
      .filter(([k]) => !k.startsWith('TABLETALK_') && !k.startsWith('XDG_')));
    const child = spawn('bash', [DEMO, BIN], {
      cwd: tempDir(), env: { ...clean, HOME: home, NO_COLOR: '1', ...env },
    });
    let out = '';
    child.stdout.on('data', (d) => { out += d; });
    child.stderr.on('data', (d) => { out += d; });
    const timer = setTimeout(() => child.kill('SIGKILL'), FAIL_AFTER);
    child.on('error', reject);
    child.on('close', (code) => { clearTimeout(timer); resolve({ code, out }); });
  });
}

test('with no model set up, the stand-in plays the model and the pull command is printed', async () => {
  const r = await demo({ TABLETALK_STATE_DIR: tempDir() });
  assert.equal(r.code, 0, r.out);
  assert.match(r.out, /scripted stand-in plays the model/);
  assert.match(r.out, /Rock +\| +1297/);
  assert.match(r.out, /refused: writes are not allowed/);
  assert.ok(r.out.trimEnd().endsWith(`${BIN} pull`), r.out);
});

test('with TABLETALK_BASE_URL set, the demo asks that endpoint, not the stand-in', async () => {
  const srv = await server({
    model: 'users-own-model',
    rules: [
      { when: { question: 'genres', step: 0 }, tool: 'run_sql',
        args: { sql: 'SELECT g.Name, count(*) AS n FROM Track JOIN Genre g USING (GenreId) GROUP BY 1 ORDER BY 2 DESC LIMIT 3' } },
      { when: { question: 'genres', step: 1 }, tool: 'answer', args: { text: 'Rock, Latin and Metal lead.' } },
    ],
  });
  try {
    const r = await demo({ TABLETALK_BASE_URL: srv.url, TABLETALK_STATE_DIR: tempDir() });
    assert.equal(r.code, 0, r.out);
    assert.doesNotMatch(r.out, /stand-in/);
    assert.match(r.out, new RegExp(`Model: ${srv.url.replace(/[.]/g, '\\.')} \\(TABLETALK_BASE_URL\\)`));
    assert.match(r.out, /Rock, Latin and Metal lead\./);
    assert.equal(srv.requests.filter((q) => q.path.endsWith('/chat/completions')).length, 2);
  } finally {
    await srv.close();
  }
});

test('models --which names the model ask would use and where the choice came from', async () => {
  const data = tempDir('tabletalk-data-');
  const cwd = tempDir();
  const none = await run(['models', '--which'], { cwd, env: { TABLETALK_DATA_DIR: data } });
  assert.equal(none.code, 1);
  assert.match(none.stderr, /no model is set up: `tabletalk pull`/);

  const url = await run(['models', '--which'], { cwd, env: { TABLETALK_DATA_DIR: data, TABLETALK_BASE_URL: 'http://127.0.0.1:9/v1' } });
  assert.equal(url.code, 0);
  assert.equal(url.stdout, 'http://127.0.0.1:9/v1\tTABLETALK_BASE_URL\n');

  fs.mkdirSync(path.join(data, 'models'));
  const file = path.join(data, 'models', 'some-model.gguf');
  fs.writeFileSync(file, 'GGUF');
  fs.symlinkSync('some-model.gguf', path.join(data, 'models', 'default.gguf'));
  const pulled = await run(['models', '--which'], { cwd, env: { TABLETALK_DATA_DIR: data, TABLETALK_BASE_URL: 'http://127.0.0.1:9/v1' } });
  assert.equal(pulled.code, 0);
  assert.equal(pulled.stdout, `${path.join(data, 'models', 'default.gguf')}\tthe installed default (tabletalk pull)\n`,
    'a pulled model comes before TABLETALK_BASE_URL, as in ask');

  const named = await run(['models', '--which'], { cwd, env: { TABLETALK_DATA_DIR: data, TABLETALK_MODEL_PATH: '/m/x.gguf' } });
  assert.equal(named.stdout, '/m/x.gguf\tTABLETALK_MODEL_PATH\n');

  fs.writeFileSync(path.join(cwd, '.env'), 'TABLETALK_MODEL_PATH=/from/dotenv.gguf\n');
  const dotenv = await run(['models', '--which'], { cwd, env: { TABLETALK_DATA_DIR: tempDir() } });
  assert.equal(dotenv.stdout, '/from/dotenv.gguf\tTABLETALK_MODEL_PATH\n');
});

test('with TABLETALK_MODEL_PATH set, the demo loads that GGUF file', async () => {
  /* a file that is not there: the demo must try it (and say why it cannot)
   * rather than fall back to the stand-in */
  const r = await demo({ TABLETALK_MODEL_PATH: path.resolve('/nonexistent/model.gguf'), TABLETALK_STATE_DIR: tempDir() });
  assert.match(r.out, /^Model: \/nonexistent\/model\.gguf \(TABLETALK_MODEL_PATH\)/);
  assert.match(r.out, /no model file at \/nonexistent\/model\.gguf/);
  assert.doesNotMatch(r.out, /stand-in/);
  assert.equal(r.code, 1);
});
