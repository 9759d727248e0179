// `ask` and `chat` as a user and a pipeline meet them: every row in csv,
// tsv and json (never a silent cut at 200), --max-rows, --sql-only,
// Markdown, the question from standard input, --out when no chart is made,
// the reply hint after a clarifying question, and in chat: a pasted
// multi-line question is one question, exit and quit leave.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { BIN, ask, closeAtEnd, exited, run, scratch, server, sha256, tempDir, waitForOutput } from '../support/harness.mjs';

const sql = (s) => ({ tool: 'run_sql', args: { sql: s } });
const answer = (text) => ({ tool: 'answer', args: { text } });
const ALL = 'SELECT TrackId, Name FROM Track ORDER BY TrackId';

/* Every question gets ALL, then an answer without numbers. */
const allTracks = {
  rules: [
    { when: { step: 0 }, ...sql(ALL) },
    { when: { step: 1 }, ...answer('Here are the tracks.') },
  ],
};

async function askWith(args, script = allTracks, opts = {}) {
  const sc = scratch();
  const srv = await server(script);
  try {
    return await run(['ask', sc.db, 'List the tracks', '--base-url', srv.url, '--state-dir', sc.state, ...args], opts);
  } finally {
    await srv.close();
  }
}

test('--format csv writes every row of the final query, the answer on stderr', async () => {
  const r = await askWith(['--format', 'csv']);
  assert.equal(r.code, 0, r.stderr);
  const lines = r.stdout.trimEnd().split('\r\n');
  assert.equal(lines.length, 3504, 'a header and all 3,503 tracks, not the 200 the model saw');
  assert.equal(lines[0], 'TrackId,Name');
  assert.equal(lines[3503], '3503,Koyaanisqatsi');
  assert.match(r.stderr, /Here are the tracks\./);
});

test('--json gives all the rows, as the table view\'s hint promises; --max-rows cuts and says so', async () => {
  const table = await askWith([]);
  assert.match(table.stdout, /first 10 of more than 200 rows; --max-rows N shows more, --format csv or --json gives all of them/);
  const all = await askWith(['--json']);
  assert.equal(all.json.row_count, 3503);
  assert.equal(all.json.rows.length, 3503);
  assert.equal(all.json.truncated, false);
  assert.equal(all.json.answer, 'Here are the tracks.');
  const some = await askWith(['--json', '--max-rows', '50']);
  assert.equal(some.json.rows.length, 50);
  assert.equal(some.json.truncated, true);
  assert.match(some.stderr, /stops at --max-rows 50: more rows exist/);
  const more = await askWith(['--max-rows', '300']);
  assert.match(more.stdout, /first 300 of 3,503 rows/);
  assert.equal(more.stdout.split('\n').filter((l) => /^ +\d+ \| /.test(l)).length, 300);
});

test('--sql-only prints the final SQL and nothing else', async () => {
  const r = await askWith(['--sql-only']);
  assert.equal(r.code, 0);
  assert.equal(r.stdout, `${ALL}\n`);
  const none = await askWith(['--sql-only'], { rules: [answer('Hello there.')] });
  assert.equal(none.code, 1);
  assert.equal(none.stdout, '');
  assert.match(none.stderr, /no query ran for this question, so there is no SQL to print/);
});

test('--format markdown: the answer, the SQL in a fence, the rows as a table', async () => {
  const r = await askWith(['--format', 'markdown', '--max-rows', '2']);
  assert.equal(r.code, 0);
  assert.equal(r.stdout, `Here are the tracks.\n\n\`\`\`sql\n${ALL}\n\`\`\`\n\n` +
    '| TrackId | Name |\n| --- | --- |\n| 1 | For Those About To Rock (We Salute You) |\n| 2 | Balls to the Wall |\n' +
    '\n_(2 rows shown; more exist)_\n');
});

test('ask DB - reads the question from standard input', async () => {
  const sc = scratch();
  const srv = await server({
    rules: [
      { when: { question: '^How many genres\\?$', step: 0 }, ...sql('SELECT count(*) FROM Genre') },
      { when: { question: '^How many genres\\?$', step: 1 }, ...answer('There are 25 genres.') },
    ],
  });
  const r = await run(['ask', sc.db, '-', '--base-url', srv.url, '--state-dir', sc.state, '--json'], { input: 'How many genres?\n' });
  await srv.close();
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.json.answer, 'There are 25 genres.');
  const empty = await run(['ask', sc.db, '-'], { input: '\n' });
  assert.equal(empty.code, 2);
  assert.match(empty.stderr, /the question is empty/);
});

test('--out with no chart made says that nothing was written', async () => {
  const dir = tempDir();
  const out = path.join(dir, 'chart.png');
  const r = await askWith(['--out', out]);
  assert.equal(r.code, 0);
  assert.match(r.stderr, new RegExp(`no chart was made for this question, so nothing was written to ${out.replace(/[.]/g, '\\.')}`));
  assert.equal(fs.existsSync(out), false);
});

test('after a clarifying question, ask names the real database in the reply command', async () => {
  const sc = scratch();
  const srv = await server({ rules: [{ tool: 'ask_user', args: { question: 'By revenue or by purchases?' } }] });
  const r = await run(['ask', sc.db, 'Who is the top customer?', '--base-url', srv.url, '--state-dir', sc.state, '--thread', 'top']);
  await srv.close();
  assert.equal(r.code, 0);
  assert.ok(r.stderr.includes(`Reply with: tabletalk ask ${sc.db} --thread top "your answer"`), r.stderr);
});

/* chat on a pseudo-terminal (util-linux `script`): once the prompt shows,
 * input is written at once as a paste is; once `until` is printed, `exit`
 * is typed and the chat must leave. */
async function chatOnPty(sc, url, input, until) {
  const q = (s) => `'${String(s).replaceAll("'", "'\\''")}'`;
  const cmd = `${q(BIN)} chat ${q(sc.db)} --base-url ${q(url)} --state-dir ${q(sc.state)} --no-preview`;
  const child = spawn('script', ['-qfec', cmd, '/dev/null'], {
    env: { ...process.env, NO_COLOR: '1', TERM: 'dumb', COLUMNS: '100' },
  });
  const forget = closeAtEnd(() => child.kill('SIGKILL'));
  let out = '';
  child.stdout.on('data', (d) => { out += d; });
  child.stderr.on('data', (d) => { out += d; });
  const done = exited(child);
  await waitForOutput(child.stdout, /tabletalk> /, { what: 'the prompt' });
  child.stdin.write(input);
  await waitForOutput(child.stdout, until, { what: String(until) });
  child.stdin.write('exit\n');
  const { code } = await done;
  forget();
  return { code, out };
}

test('chat: a pasted multi-line question is one question, and exit leaves', async () => {
  const sc = scratch();
  const srv = await server({
    rules: [
      { when: { question: '^Which genres\\nhave the most tracks\\?$', step: 0 }, ...sql('SELECT count(*) FROM Genre') },
      { when: { question: '^Which genres\\nhave the most tracks\\?$', step: 1 }, ...answer('Rock leads.') },
    ],
  });
  const r = await chatOnPty(sc, srv.url, 'Which genres\nhave the most tracks?\n', /Rock leads\./);
  await srv.close();
  assert.equal(r.code, 0, r.out);
  assert.equal(srv.requests.length, 2, `one question of two lines, not two questions:\n${r.out}`);
  assert.match(r.out, /Rock leads\./);
});

test('chat: a line ending in a backslash goes on with the next line', async () => {
  const sc = scratch();
  const srv = await server({
    rules: [
      { when: { question: '^How many\ngenres\\?$', step: 0 }, ...sql('SELECT count(*) FROM Genre') },
      { when: { question: '^How many\ngenres\\?$', step: 1 }, ...answer('25 genres.') },
    ],
  });
  const r = await run(['chat', sc.db, '--base-url', srv.url, '--state-dir', sc.state], { input: 'How many\\\ngenres?\n' });
  await srv.close();
  assert.equal(r.code, 0);
  assert.equal(srv.requests.length, 2, r.stderr);
  assert.match(r.stdout, /25 genres\./);
});

test('chat: exit and quit leave instead of going to the model; a clarifying question prints no ask command', async () => {
  const sc = scratch();
  const srv = await server({ rules: [{ tool: 'ask_user', args: { question: 'Which year?' } }] });
  const piped = await run(['chat', sc.db, '--base-url', srv.url, '--state-dir', sc.state],
    { input: 'Show revenue\nexit\nthis is never asked\n' });
  const quit = await run(['chat', sc.db, '--base-url', srv.url, '--state-dir', sc.state], { input: 'QUIT\n' });
  await srv.close();
  assert.equal(piped.code, 0);
  assert.equal(quit.code, 0);
  assert.equal(srv.requests.length, 1, 'only "Show revenue" reached the model');
  assert.match(piped.stdout, /Which year\?/);
  assert.doesNotMatch(piped.stderr, /Reply with: tabletalk ask/);
  assert.match(piped.stderr, /answer it as your next message/);
});

/* Terminal columns of a line (CJK wide, ANSI sequences skipped). */
function columns(line) {
  let w = 0;
  for (const ch of line.replace(/\x1b\[[0-9;?]*[A-Za-z]/g, '').replace(/\r/g, '')) {
    const cp = ch.codePointAt(0);
    const wide = (cp >= 0x1100 && cp <= 0x115f) || (cp >= 0x2e80 && cp <= 0xa4cf) ||
      (cp >= 0xac00 && cp <= 0xd7a3) || (cp >= 0xf900 && cp <= 0xfaff) || (cp >= 0xff00 && cp <= 0xff60);
    w += wide ? 2 : 1;
  }
  return w;
}

test('on a narrow terminal no progress line or answer line reaches the last column', async () => {
  const sc = scratch();
  const long = "SELECT Name AS \u540d\u524d\u540d\u524d, '\u200b' AS zw FROM Track WHERE Name LIKE '%\u6771\u4eac%' OR Composer LIKE '%Johnson%' LIMIT 2";
  const srv = await server({
    rules: [
      { when: { step: 0 }, ...sql(long) },
      { when: { step: 1 }, ...answer('Two tracks match the search for Johnson among the composers of the store.') },
    ],
  });
  const q = (s) => `'${String(s).replaceAll("'", "'\\''")}'`;
  const cmd = `stty cols 40; ${q(BIN)} ask ${q(sc.db)} 'Which tracks?' --base-url ${q(srv.url)} --state-dir ${q(sc.state)}`;
  const out = await new Promise((resolve, reject) => {
    const child = spawn('script', ['-qec', cmd, '/dev/null'], { env: { ...process.env, TERM: 'xterm' } });
    let text = '';
    child.stdout.on('data', (d) => { text += d; });
    child.on('error', reject);
    child.on('close', () => resolve(text));
  });
  await srv.close();
  /* what stays on the screen: the answer streamed while it was written is
   * erased (ESC [J) before the box is drawn */
  const lines = out.split(/\r?\n/).map((l) => l.split('\r').at(-1).split('\x1b[J').at(-1));
  const sqlLine = lines.find((l) => /sql.*SELECT/.test(l));
  assert.ok(sqlLine, out);
  for (const l of lines) assert.ok(columns(l) < 40, `${columns(l)} columns: ${JSON.stringify(l)}`);
});

test('a value the question names reaches the model as a hint; the index is cached, the database untouched', async () => {
  const sc = scratch();
  const cache = path.join(sc.dir, 'cache');
  const before = sha256(sc.db);
  const srv = await server({ rules: [answer('AC/DC wrote them.')] });
  try {
    const env = { env: { TABLETALK_CACHE_DIR: cache } };
    const r = await ask(sc, srv, 'Which tracks are by ac/dc?', [], env);
    assert.equal(r.code, 0, r.stderr);
    const msgs = srv.requests[0].body.messages;
    const question = msgs[msgs.length - 1].content;
    assert.match(question, /^Which tracks are by ac\/dc\?\n\nValues the question names, as the database spells them:\n/);
    assert.match(question, /'AC\/DC' is a value of Artist\.Name\n/);
    const files = fs.readdirSync(path.join(cache, 'values'));
    assert.equal(files.length, 1);
    assert.match(files[0], /^[0-9a-f]{16}\.idx$/);
    const file = path.join(cache, 'values', files[0]);
    const first = fs.statSync(file).ino, bytes = fs.readFileSync(file);
    const again = await ask(sc, srv, 'How many tracks?', [], env);
    assert.equal(again.code, 0, again.stderr);
    // a rewrite renames a new file into place: another inode (a use only marks its time)
    assert.equal(fs.statSync(file).ino, first, 'reused, not written again');
    assert.ok(fs.readFileSync(file).equals(bytes));
    const plain = srv.requests[srv.requests.length - 1].body.messages;
    assert.equal(plain[plain.length - 1].content, 'How many tracks?');
    assert.equal(sha256(sc.db), before);
  } finally {
    await srv.close();
  }
});
