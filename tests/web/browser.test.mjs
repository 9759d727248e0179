// The page of `tabletalk web` in a real browser: Debian's chromium, headless,
// driven by puppeteer-core (tests/web/package.json; it never downloads a
// browser), against the real binary with the scripted model server and a
// scratch copy of chinook. Asks, follows up, answers a clarification in
// place, draws a chart, tries a write, runs SQL typed in the editor (with
// completion and history), sorts every row on the server, pages and
// downloads every row, renders Markdown answers safely, restores threads,
// runs and queries from their URLs (back and forward too), pins answers to
// the board and exports it, starts without a model, opens a trace, renames
// and deletes a thread, searches the schema, and checks that requests
// without the token or from another origin are refused. Screenshots of the main states go to
// $TT_WEB_SCREENSHOTS (build/tests/web-screenshots from CTest).
// Run directly (`node tests/web/browser.test.mjs`): exits 77 (skipped) when
// chromium or node_modules are missing.
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const CHROMIUM = process.env.TT_CHROMIUM || '/usr/bin/chromium';
const PUPPETEER = path.join(here, 'node_modules/puppeteer-core/package.json');
if (!fs.existsSync(CHROMIUM)) {
  console.log(`SKIP: ${CHROMIUM} is missing: install Debian's chromium (scripts/deps.sh test does) or set TT_CHROMIUM`);
  process.exit(77);
}
if (!fs.existsSync(PUPPETEER)) {
  console.log('SKIP: tests/web/node_modules is missing: run `npm ci` in tests/web (scripts/test.sh does)');
  process.exit(77);
}

const { test, before, after } = await import('node:test');
const assert = (await import('node:assert/strict')).default;
const { default: puppeteer } = await import('puppeteer-core');
const { FAIL_AFTER, runProgram, scratch, sqliteRows, server, sha256, startServer, tempDir, waitForFile } = await import('../support/harness.mjs');
/* how long a wait on the page may take before it is a failure (never the thing under test) */
const WAIT_MS = FAIL_AFTER;

const SHOTS = process.env.TT_WEB_SCREENSHOTS || path.join(here, '../../build/tests/web-screenshots');
fs.mkdirSync(SHOTS, { recursive: true });

const sql = (s) => ({ tool: 'run_sql', args: { sql: s } });
const answer = (text) => ({ tool: 'answer', args: { text } });
const GENRES = 'SELECT g.Name AS genre, count(*) AS tracks FROM Track t JOIN Genre g ON g.GenreId = t.GenreId GROUP BY g.GenreId ORDER BY tracks DESC';
const FEWEST = 'SELECT g.Name AS genre, count(*) AS tracks FROM Track t JOIN Genre g ON g.GenreId = t.GenreId GROUP BY g.GenreId ORDER BY tracks ASC, genre LIMIT 1';
const TOP_SPENDER = "SELECT c.FirstName || ' ' || c.LastName AS customer, round(sum(i.Total), 2) AS spent FROM Invoice i JOIN Customer c ON c.CustomerId = i.CustomerId GROUP BY c.CustomerId ORDER BY spent DESC LIMIT 1";
const PER_YEAR = "SELECT strftime('%Y', InvoiceDate) AS year, count(*) AS invoices FROM Invoice GROUP BY year ORDER BY year";
const Q = {
  genres: 'How many tracks are there per genre?',
  fewest: 'And which genre has the fewest?',
  top: 'Who is the top customer?',
  reply: 'By total spending',
  chart: 'Plot invoices per year',
  write: 'Delete all tracks',
  albums: 'How many albums are there?',
  slow: 'Take your time',
  md: 'Which genres lead, in Markdown?',
  media: 'Which media types are there?',
  bound: 'Which genre leads, privately?',
};
/* A Markdown answer with hostile parts: HTML, a javascript: link, a bidi override. */
const MD_ANSWER = '**Rock** leads with *1297* tracks.\n\n- Rock: 1297\n- Latin: 579\n\n1. first\n2. second\n\n' +
  '| genre | tracks |\n|---|---:|\n| Rock | 1297 |\n| <b>Latin</b> | 579 |\n\nSee [the docs](https://example.com/genres) ' +
  'or [this](javascript:alert(document.cookie)) and `count(*)`.\n\n```sql\nSELECT 1;\n```\n<img src=x id=mdpwned onerror=alert(1)> file\u202Egnp.exe';
const RULES = [
  { when: { question: Q.genres, step: 0 }, ...sql(GENRES) },
  { when: { question: Q.genres, step: 1 }, ...answer('Rock has the most tracks: 1297.') },
  { when: { question: Q.fewest, step: 0 }, ...sql(FEWEST) },
  { when: { question: Q.fewest, step: 1 }, ...answer('Opera has the fewest, with 1 track.') },
  { when: { question: Q.top, step: 0 }, tool: 'ask_user', args: { question: 'Top by total spending or by number of purchases?' } },
  // the reply resumes the clarified question: the model sees it as ask_user's result
  { when: { question: Q.top, step: 1, last_tool: Q.reply }, ...sql(TOP_SPENDER) },
  { when: { question: Q.top, step: 2 }, ...answer('Helena Holý spent the most: 49.62.') },
  { when: { question: Q.chart, step: 0 }, ...sql(PER_YEAR) },
  { when: { question: Q.chart, step: 1 }, tool: 'make_chart', args: { kind: 'bar', x: 'year', y: 'invoices', title: 'Invoices per year' } },
  { when: { question: Q.chart, step: 2 }, ...answer('Invoices per year are shown in the chart.') },
  { when: { question: Q.write, step: 0 }, ...sql('DELETE FROM Track') },
  { when: { question: Q.write, step: 1 }, ...answer('Done, all tracks are deleted.') },
  { when: { question: Q.albums, step: 0 }, ...sql('SELECT count(*) AS albums FROM Album') },
  { when: { question: Q.albums, step: 1 }, ...answer('There are 348 albums.') },
  { when: { question: Q.slow }, hang_ms: 60000, ...answer('Too late.') },
  { when: { question: Q.md, step: 0 }, ...sql(GENRES) },
  { when: { question: Q.md, step: 1 }, ...answer(MD_ANSWER) },
  { when: { question: Q.media, step: 0 }, ...sql('SELECT MediaTypeId, Name FROM MediaType ORDER BY MediaTypeId') },
  { when: { question: Q.media, step: 1 }, ...answer('There are 5 media types.') },
  { when: { question: Q.bound, step: 0 }, ...sql(GENRES) },
  // the result's label goes on across the thread: whichever it is, the answer cites it
  ...Array.from({ length: 30 }, (_, i) => ({ when: { question: Q.bound, last_tool: `^\\[q${i + 1}\\] ` },
    ...answer(`{{q${i + 1}.r1.genre}} leads with {{q${i + 1}.r1.tracks|0,000}} tracks.`) })),
];

let sc, model, web, url, origin, browser, page, before_sha;
const pageErrors = [];
const downloads = tempDir('tabletalk-web-downloads-');

/* `tabletalk web DB --port 0 ...`; resolves with the URL it prints. */
async function startWeb(args) {
  const s = await startServer(['web', ...args], /serving .* at (http:\/\/\S+\?token=([0-9A-Za-z]+))/,
    { stream: 'stdout', env: { TABLETALK_DATA_DIR: path.join(sc.dir, 'data'), TABLETALK_CACHE_DIR: path.join(sc.dir, 'cache') } });
  return { child: s.child, url: s.match[1], token: s.match[2], stderr: () => s.stderr };
}

/* A raw HTTP request to the server, for the checks a browser cannot make (a forged Host). */
function raw(method, pathname, headers = {}) {
  const u = new URL(url);
  return new Promise((resolve, reject) => {
    const req = http.request({ host: u.hostname, port: u.port, method, path: pathname, headers }, (res) => {
      let body = '';
      res.on('data', (d) => { body += d; });
      res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

const shot = (name) => page.screenshot({ path: path.join(SHOTS, `${name}.png`), fullPage: false });
const lastTurn = '#conversation .turn:last-of-type';
/* The sidebar is redrawn after each run: click in one step, not find-then-click. */
const clickNow = (sel) => page.$eval(sel, (e) => e.click());
const texts = (sel) => page.$$eval(sel, (els) => els.map((e) => e.textContent));

/* Types a question, presses Enter, waits for the run to finish. */
async function askInPage(question) {
  const n = await page.$$eval('#conversation .turn', (t) => t.length);
  await page.focus('#question');
  await page.keyboard.type(question);
  await page.keyboard.press('Enter');
  await page.waitForFunction((k) => {
    const turns = document.querySelectorAll('#conversation .turn');
    return turns.length > k && turns[turns.length - 1].querySelector('.run, .error');
  }, { timeout: WAIT_MS }, n);
  await page.waitForFunction(() => !document.getElementById('send').disabled);
  await tablesRead(lastTurn);
}

/* Every result table under sel has its first page (or its error), and its count. */
function tablesRead(sel) {
  return page.waitForFunction((s) => [...document.querySelectorAll(`${s} .result`)].every((r) =>
    r.querySelector('.error, .refused, .warning') || (r.querySelector('tbody') && !/Counting/.test(r.querySelector('.result-meta')?.textContent || ''))), {}, sel);
}

/* Waits until the first row of the table under sel is `want`. */
function firstRowIs(sel, want) {
  return page.waitForFunction((s, w) => {
    const tr = document.querySelector(`${s} tbody tr`);
    return tr && JSON.stringify([...tr.cells].map((c) => c.textContent)) === w;
  }, {}, sel, JSON.stringify(want));
}

/* Types SQL into the editor and runs it with Ctrl+Enter; waits for its table or error. */
async function runInEditor(text) {
  const n = await page.$$eval('#conversation .turn', (t) => t.length);
  await page.$eval('#sql', (t) => { t.value = ''; });
  await page.focus('#sql');
  await page.keyboard.type(text);
  await page.keyboard.press('Escape'); // no completion list open
  await page.keyboard.down('Control'); await page.keyboard.press('Enter'); await page.keyboard.up('Control');
  await page.waitForFunction((k) => {
    const turns = document.querySelectorAll('#conversation .turn');
    return turns.length > k && turns[turns.length - 1].querySelector('.result, .error, .refused');
  }, {}, n);
  await tablesRead(lastTurn);
}

/* New thread: the link, then an empty conversation. */
async function newThreadInPage() {
  await clickNow('#new-thread'); /* folded away on a phone */
  await page.waitForFunction(() => location.hash === '#/' && !document.querySelector('#conversation .turn'));
}

/* Table rows of a result section, as text. */
const tableRows = (sel) => page.$$eval(`${sel} tbody tr`, (trs) => trs.map((tr) => [...tr.cells].map((c) => c.textContent)));

before(async () => {
  sc = scratch();
  before_sha = sha256(sc.db);
  model = await server({ rules: RULES });
  web = await startWeb([sc.db, '--port', '0', '--base-url', model.url, '--state-dir', sc.state]);
  url = web.url;
  origin = new URL(url).origin;
  browser = await puppeteer.launch({
    executablePath: CHROMIUM, headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-dev-shm-usage'],
  });
  page = await browser.newPage();
  page.setDefaultTimeout(WAIT_MS);
  await page.setViewport({ width: 1280, height: 900 });
  page.on('dialog', (d) => d.accept()); // the delete confirmation
  page.on('pageerror', (e) => pageErrors.push(e.message));
  page.on('console', (m) => { if (m.type() === 'error') pageErrors.push(`${m.text()} ${m.location().url || ''}`); });
  const cdp = await page.createCDPSession();
  await cdp.send('Browser.setDownloadBehavior', { behavior: 'allow', downloadPath: downloads, eventsEnabled: true });
  cdp.on('Browser.downloadProgress', (e) => {
    if (e.state === 'completed' || e.state === 'canceled') downloadsDone.push(e);
    for (const w of downloadWaiters.splice(0)) w();
  });
});

/* Chromium reserves the download's final name with an empty file before
 * the bytes arrive, so the file's appearance is not the end: wait for its
 * 'completed' event instead. */
const downloadsDone = [];
const downloadWaiters = [];
async function downloadFinished(count) {
  const deadline = Date.now() + WAIT_MS;
  while (downloadsDone.length < count) {
    if (Date.now() > deadline) throw new Error(`download ${count} did not finish within ${WAIT_MS} ms`);
    await new Promise((r) => { downloadWaiters.push(r); setTimeout(r, 1000).unref(); });
  }
  assert.equal(downloadsDone[count - 1].state, 'completed');
}

after(async () => {
  if (browser) await browser.close();
  if (web) web.child.kill('SIGTERM');
  if (model) await model.close();
});

test('the token URL sets the cookie and opens the page without the token in the address', async () => {
  const res = await page.goto(url, { waitUntil: 'networkidle0' });
  assert.equal(res.status(), 200);
  assert.equal(page.url(), `${origin}/`);
  const cookies = await page.cookies();
  const c = cookies.find((k) => k.name === 'tt_web');
  assert.ok(c, 'the tt_web cookie');
  assert.equal(c.httpOnly, true);
  assert.equal(c.sameSite, 'Strict');
  await page.waitForFunction(() => document.getElementById('db-name').textContent.includes('chinook'));
  assert.equal(await page.$eval('#notice', (n) => n.hidden), true);
  // the question box has focus and a label
  assert.equal(await page.evaluate(() => document.activeElement.id), 'question');
  assert.match(await page.$eval('label[for=question]', (l) => l.textContent), /Ask a question/);
});

test('the keyboard: Shift+Enter is a new line, Tab reaches the Ask button with a visible focus ring', async () => {
  await page.focus('#question');
  await page.keyboard.type('first line');
  await page.keyboard.down('Shift'); await page.keyboard.press('Enter'); await page.keyboard.up('Shift');
  await page.keyboard.type('second line');
  assert.equal(await page.$eval('#question', (q) => q.value), 'first line\nsecond line');
  assert.equal(await page.$$eval('#conversation .turn', (t) => t.length), 0, 'nothing was sent');
  await page.keyboard.press('Tab');
  assert.equal(await page.evaluate(() => document.activeElement.id), 'send');
  const ring = await page.evaluate(() => getComputedStyle(document.activeElement).outlineStyle);
  assert.notEqual(ring, 'none');
  await page.$eval('#question', (q) => { q.value = ''; });
  // the skip link comes first in the focus order and leads to the question box
  assert.equal(await page.evaluate(() => document.body.querySelector('a[href], button, input, textarea').className), 'skip');
  await page.focus('a.skip');
  await page.keyboard.press('Enter');
  await page.waitForFunction(() => document.activeElement.id === 'question');
});

test('a question: the answer streams in, the steps, the SQL and the table appear', async () => {
  // count the pieces of text that reach the live answer before the run ends
  await page.evaluate(() => {
    window.__pieces = 0;
    new MutationObserver((recs) => {
      for (const r of recs) {
        // a piece appended to the live answer (the final text replaces them all at once)
        if (r.target.classList && r.target.classList.contains('answer') && !r.removedNodes.length &&
            [...r.addedNodes].every((n) => n.nodeType === Node.TEXT_NODE)) window.__pieces += r.addedNodes.length;
      }
    }).observe(document.getElementById('conversation'), { childList: true, subtree: true });
  });
  await askInPage(Q.genres);
  const turn = lastTurn;
  assert.equal(await page.$eval(`${turn} .answer.final`, (a) => a.textContent), 'Rock has the most tracks: 1297.');
  assert.equal(await page.$eval(`${turn} .answer.final`, (a) => a.getAttribute('aria-live')), 'polite');
  assert.ok(await page.evaluate(() => window.__pieces) > 1, 'the answer arrived in several pieces');
  assert.equal(await page.$eval('#status', (s) => s.textContent), 'Answer ready (answered)');
  const steps = await texts(`${turn} .steps li`);
  assert.ok(steps.some((s) => /^Model call/.test(s)), steps.join('\n'));
  assert.ok(steps.some((s) => s.startsWith('SQL 25 rows in') && s.includes(GENRES)), steps.join('\n'));
  assert.equal(await page.$eval(`${turn} pre.sql`, (p) => p.textContent), GENRES);
  const rows = await tableRows(`${turn} .result`);
  assert.equal(rows.length, 25);
  assert.deepEqual(rows[0], ['Rock', '1297']);
  assert.match(await page.$eval(`${turn} .page-info`, (p) => p.textContent), /Rows 1–25 of 25/);
  // one page: no paging controls
  assert.equal(await page.$eval(`${turn} .pager`, (p) => p.hidden), true);
  // sort by a click on the header (on the server): fewest first, then most first again
  await page.click(`${turn} th:nth-child(2) button.sort`);
  await firstRowIs(`${turn} .result`, ['Opera', '1']);
  assert.equal(await page.$eval(`${turn} th:nth-child(2)`, (th) => th.getAttribute('aria-sort')), 'ascending');
  await page.click(`${turn} th:nth-child(2) button.sort`);
  await firstRowIs(`${turn} .result`, ['Rock', '1297']);
  assert.equal(await page.$eval(`${turn} th:nth-child(2)`, (th) => th.getAttribute('aria-sort')), 'descending');
  await shot('01-answer-table');
});

test('a follow-up goes to the same thread, and the model sees the first question', async () => {
  const thread = await page.$eval('#thread-state', (s) => s.textContent);
  assert.match(thread, /Follow-ups go to thread/);
  await askInPage(Q.fewest);
  assert.equal(await page.$eval(`${lastTurn} .answer.final`, (a) => a.textContent), 'Opera has the fewest, with 1 track.');
  assert.deepEqual(await tableRows(`${lastTurn} .result`), [['Opera', '1']]);
  const req = model.requests.findLast((r) => JSON.stringify(r.body.messages ?? []).includes(Q.fewest));
  assert.ok(JSON.stringify(req.body.messages).includes(Q.genres), 'the follow-up carries the first question');
  // one thread in the sidebar, marked current, with both turns
  await page.waitForFunction(() => document.querySelectorAll('#thread-list li.thread').length === 1);
  assert.equal(await page.$eval('#thread-list li.thread', (li) => li.classList.contains('current')), true);
});

test('a trace opens in a panel with the steps, the SQL, tokens and timings', async () => {
  await page.click(`#conversation .turn:first-of-type .trace-link`);
  await page.waitForFunction(() => document.querySelectorAll('#trace-body tbody tr').length > 2);
  const body = await page.$eval('#trace-body', (b) => b.textContent);
  for (const want of ['run_start', 'model_call', 'sql', 'run_end', GENRES, 'prompt tokens', 'latency']) {
    assert.ok(body.includes(want), `the trace shows ${want}`);
  }
  assert.match(body, /answered: .* in all, 2 model calls/);
  // the stored run is drawn by the live renderer: the same steps, line for line
  const stepsOf = (sel) => page.$$eval(`${sel} .steps li`, (li) => li.map((x) => x.textContent.replace(/\d+(\.\d+)? ?(ms|s)\b/g, 'T')));
  const live = await stepsOf('#conversation .turn:first-of-type');
  const stored = await stepsOf('#trace-body .turn.replay');
  assert.ok(live.length >= 3, JSON.stringify(live));
  assert.deepEqual(stored, live);
  assert.equal(await page.$eval('#trace-body .turn.replay .answer.final', (a) => a.textContent),
    await page.$eval('#conversation .turn:first-of-type .answer.final', (a) => a.textContent));
  assert.equal(await page.$eval('#trace', (d) => d.open), true);
  await shot('05-trace');
  await page.keyboard.press('Escape');
  assert.equal(await page.$eval('#trace', (d) => d.open), false);
});

test('the SQL editor: completion from the catalog, Ctrl+Enter, hostile cells as text, a did-you-mean, a refused write, the history', async () => {
  // Edit puts an answer's SQL in the editor
  await page.click('#conversation .turn:first-of-type .edit-sql');
  assert.equal(await page.$eval('#sql', (t) => t.value), GENRES);
  // completion: a table, then a column of the table named before the dot
  await page.$eval('#sql', (t) => { t.value = ''; });
  await page.focus('#sql');
  await page.keyboard.type('SELECT Na');
  await page.waitForSelector('#sql-complete:not([hidden]) li');
  assert.ok((await texts('#sql-complete li')).some((t) => t.startsWith('Name')));
  assert.equal(await page.$eval('#sql', (t) => t.getAttribute('aria-expanded')), 'true');
  await shot('13-sql-completion');
  await page.keyboard.press('Tab');
  assert.equal(await page.$eval('#sql', (t) => t.value), 'SELECT Name');
  await page.keyboard.type(' FROM Art');
  await page.waitForFunction(() => [...document.querySelectorAll('#sql-complete li')].some((l) => l.textContent.startsWith('Artist')));
  await page.keyboard.press('Tab');
  await page.keyboard.type(' ORDER BY Artist.Art');
  await page.waitForFunction(() => [...document.querySelectorAll('#sql-complete li')].some((l) => l.textContent.startsWith('ArtistId')));
  await page.keyboard.press('Tab');
  assert.equal(await page.$eval('#sql', (t) => t.value), 'SELECT Name FROM Artist ORDER BY Artist.ArtistId');
  await page.keyboard.down('Control'); await page.keyboard.press('Enter'); await page.keyboard.up('Control');
  await page.waitForFunction(() => document.querySelector('#conversation .turn:last-of-type .result tbody tr'));
  await tablesRead(lastTurn);
  assert.match(page.url(), /#\/q\/[0-9a-f]{16}$/);
  assert.match(await page.$eval(`${lastTurn} .result-meta`, (r) => r.textContent), /^275 rows/);
  assert.deepEqual((await tableRows(`${lastTurn} .result`))[0], ['AC/DC']);
  await page.click(`${lastTurn} .pager .next`);
  await page.waitForFunction((t) => /Rows 26–50 of 275/.test(document.querySelector(`${t} .page-info`).textContent), {}, lastTurn);
  // hostile cells stay text; invisible characters are shown as the CLI shows them
  await runInEditor(`SELECT '<img src=x id=pwned>' AS html, 'a,b' AS comma, 'say "hi"' AS quote, 'two' || char(10) || 'lines' AS nl, NULL AS empty, 'abc' || char(8238) || 'gnp.exe' AS bidi`);
  assert.equal(await page.$('#pwned'), null);
  assert.deepEqual((await tableRows(`${lastTurn} .result`))[0], ['<img src=x id=pwned>', 'a,b', 'say "hi"', 'two\nlines', 'NULL', 'abc<U+202E>gnp.exe']);
  assert.equal(await page.$eval(`${lastTurn} td .ctl`, (c) => c.textContent), '<U+202E>');
  assert.equal(await page.$eval(`${lastTurn} .result .pager`, (p) => p.hidden), true, 'one row: no paging controls');
  // a typo: the hint the agent would get, as the CLI gives it
  await runInEditor('SELECT Nme FROM Artist');
  assert.match(await page.$eval(`${lastTurn} .error`, (e) => e.textContent), /^SQL error: no such column: Nme — did you mean Name\?/);
  await runInEditor('DELETE FROM Genre');
  const refused = await page.$eval(`${lastTurn} .refused`, (r) => r.textContent);
  assert.match(refused, /^Refused: .*DELETE.* tabletalk only reads, so the database is unchanged\.$/);
  assert.equal(await page.$eval(`${lastTurn} .refused`, (r) => r.getAttribute('role')), 'alert');
  await page.$eval(`${lastTurn}`, (r) => r.scrollIntoView());
  await shot('04-sql-refused');
  assert.equal(sha256(sc.db), before_sha);
  // the history of this database, newest first; picking one puts it in the editor
  await page.click('#open-history');
  await page.waitForSelector('#history-list button.history-sql');
  const hist = await texts('#history-list button.history-sql');
  assert.ok(hist[0].startsWith("SELECT '<img"), hist[0]);
  assert.equal(hist[1], 'SELECT Name FROM Artist ORDER BY Artist.ArtistId');
  await shot('14-sql-history');
  await page.click('#history-list li:nth-child(2) button.history-sql');
  assert.equal(await page.$eval('#history', (d) => d.open), false);
  assert.equal(await page.$eval('#sql', (t) => t.value), 'SELECT Name FROM Artist ORDER BY Artist.ArtistId');
});

test('every row: all 3,503 tracks sorted on the server, counted, paged, downloaded as CSV and JSON', async () => {
  await runInEditor('SELECT TrackId, Name, Milliseconds FROM Track');
  const t = lastTurn;
  assert.match(await page.$eval(`${t} .result-meta`, (r) => r.textContent), /^3,503 rows/);
  assert.match(await page.$eval(`${t} .page-info`, (p) => p.textContent), /^Rows 1–25 of 3,503$/);
  await page.click(`${t} th:nth-child(3) button.sort`);
  await page.waitForFunction((s) => document.querySelector(`${s} th:nth-child(3)`).getAttribute('aria-sort') === 'ascending', {}, t);
  await page.click(`${t} th:nth-child(3) button.sort`);
  await page.waitForFunction((s) => document.querySelector(`${s} th:nth-child(3)`).getAttribute('aria-sort') === 'descending', {}, t);
  await firstRowIs(`${t} .result`, ['2820', 'Occupation / Precipice', '5286953']);
  assert.match(await page.$eval(`${t} .result-meta`, (r) => r.textContent), /sorted by Milliseconds descending \(on the server\)/);
  await page.click(`${t} .pager .next`);
  await page.waitForFunction((s) => /Rows 26–50 of 3,503/.test(document.querySelector(`${s} .page-info`).textContent), {}, t);
  await shot('15-every-row-sorted');
  // the CSV holds every row, in the order shown
  const href = await page.$eval(`${t} a.csv`, (a) => a.getAttribute('href'));
  assert.match(href, /rows\.csv\?sort=3&desc=1$/);
  const before = downloadsDone.length;
  await page.click(`${t} a.csv`);
  await downloadFinished(before + 1);
  const file = path.join(downloads, downloadsDone[before].suggestedFilename || await page.$eval(`${t} a.csv`, (a) => a.getAttribute('download')));
  await waitForFile(file);
  const lines = fs.readFileSync(file, 'utf8').split('\r\n');
  assert.equal(lines.length, 3505);
  assert.equal(lines[1], '2820,Occupation / Precipice,5286953');
  const json = await page.evaluate(async (u) => (await fetch(u)).json(), await page.$eval(`${t} a.json`, (a) => a.getAttribute('href')));
  assert.equal(json.rows.length, 3503);
  assert.equal(json.truncated, false);
});

test('a million rows: the first page comes at once, the count follows (timed, not asserted)', async () => {
  const n = await page.$$eval('#conversation .turn', (t) => t.length);
  await page.$eval('#sql', (t) => { t.value = 'WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 1000000) SELECT i, i * 2 AS twice FROM n'; });
  await page.focus('#sql');
  await page.evaluate(() => { window.__t0 = performance.now(); });
  await page.keyboard.down('Control'); await page.keyboard.press('Enter'); await page.keyboard.up('Control');
  const firstRow = await (await page.waitForFunction((k) => {
    const turns = document.querySelectorAll('#conversation .turn');
    return turns.length > k && turns[turns.length - 1].querySelector('.result tbody tr') && performance.now() - window.__t0;
  }, { polling: 'mutation' }, n)).jsonValue();
  await tablesRead(lastTurn);
  const counted = await page.evaluate(() => performance.now() - window.__t0);
  assert.match(await page.$eval(`${lastTurn} .page-info`, (p) => p.textContent), /^Rows 1–25 of 1,000,000$/);
  assert.deepEqual((await tableRows(`${lastTurn} .result`))[0], ['1', '2']);
  console.log(`# a 1,000,000-row result: first row in the table ${Math.round(firstRow)} ms after Ctrl+Enter, all rows counted at ${Math.round(counted)} ms`);
});

test('a clarifying question is answered in place and the run continues', async () => {
  await newThreadInPage();
  await askInPage(Q.top);
  const box = `${lastTurn} .clarify`;
  assert.equal(await page.$eval(`${box} .clarify-q`, (q) => q.textContent), 'Top by total spending or by number of purchases?');
  // the reply box has focus: type and press Enter
  await page.waitForFunction(() => document.activeElement && document.activeElement.classList.contains('reply'));
  await shot('02-clarify');
  await page.keyboard.type(Q.reply);
  await page.keyboard.press('Enter');
  await page.waitForFunction(() => document.querySelectorAll('#conversation .turn').length === 2 &&
    document.querySelector('#conversation .turn:last-of-type .run'));
  assert.match(await page.$eval(box.replace(lastTurn, '#conversation .turn:first-of-type'), (b) => b.textContent), /You replied: By total spending/);
  assert.equal(await page.$eval(`${lastTurn} .answer.final`, (a) => a.textContent), 'Helena Holý spent the most: 49.62.');
  // the table's first page is read from the server after the run: wait for it
  await page.waitForSelector(`${lastTurn} .result tbody tr`);
  await tablesRead(lastTurn);
  assert.deepEqual(await tableRows(`${lastTurn} .result`), [['Helena Holý', '49.62']]);
  const req = model.requests.findLast((r) => JSON.stringify(r.body.messages ?? []).includes(Q.reply));
  assert.ok(JSON.stringify(req.body.messages).includes(Q.top), 'the reply continues the clarified question');
});

test('a chart appears in the page as SVG, with a PNG download', async () => {
  await askInPage(Q.chart);
  const img = `${lastTurn} figure.chart img`;
  await page.waitForFunction((s) => { const i = document.querySelector(s); return i && i.complete && i.naturalWidth > 0; }, {}, img);
  const src = await page.$eval(img, (i) => i.getAttribute('src'));
  assert.match(src, /^\/api\/charts\/[^/]+\/[0-9]+\.svg$/);
  assert.equal(await page.$eval(img, (i) => i.alt), 'bar chart, 5 bars: Invoices per year');
  const svg = await page.evaluate(async (s) => { const r = await fetch(s); return { type: r.headers.get('Content-Type'), text: await r.text() }; }, src);
  assert.match(svg.type, /^image\/svg\+xml/);
  assert.match(svg.text, /<svg[\s>]/);
  assert.ok(svg.text.includes('Invoices per year'));
  const png = await page.$eval(`${lastTurn} figure.chart a[download$=".png"]`, (a) => a.getAttribute('href'));
  assert.equal(png, src.replace(/\.svg$/, '.png'));
  const head = await page.evaluate(async (s) => { const r = await fetch(s); return [r.status, r.headers.get('Content-Type')]; }, png);
  assert.deepEqual(head, [200, 'image/png']);
  await page.$eval(img, (i) => i.scrollIntoView());
  await shot('03-chart');
});

test('a refused write and an unbacked number are shown as plainly as in the CLI', async () => {
  await askInPage(Q.write);
  const refused = await page.$eval(`${lastTurn} .refused`, (r) => r.textContent);
  assert.equal(refused, 'Refused. The write was refused: writes are not allowed: DELETE on Track. tabletalk only reads, so the database is unchanged.');
  assert.equal(await page.$eval(`${lastTurn} .answer.final`, (a) => a.textContent), 'Done, all tracks are deleted.');
  assert.equal(await page.$eval(`${lastTurn} pre.sql`, (p) => p.textContent), 'DELETE FROM Track');
  assert.equal(await page.$eval(`${lastTurn} .run`, (r) => r.dataset.status), 'refused');
  await shot('06-refused-write');
  await askInPage(Q.albums);
  assert.equal(await page.$eval(`${lastTurn} .unverified`, (u) => u.textContent),
    'Not verified: 348 is in no query result of this question; check it before you use it.');
  await shot('07-unverified');
  assert.equal(sha256(sc.db), before_sha);
});

test('the private switch: the model sees no row; the filled-in values say on hover where they came from', async () => {
  await clickNow('#private');
  assert.equal(await page.$eval('#private', (c) => c.checked), true);
  await askInPage(Q.bound);
  assert.equal(await page.$eval(`${lastTurn} .answer.final`, (a) => a.textContent), 'Rock leads with 1,297 tracks.');
  const facts = await page.$$eval(`${lastTurn} .answer.final span.fact`, (f) => f.map((x) => [x.textContent, x.title, x.dataset.query, x.dataset.row, x.dataset.column]));
  const label = facts[0][2];
  assert.match(label, /^q\d+$/);
  assert.deepEqual(facts.map((f) => [f[0], f[2], f[3], f[4]]), [['Rock', label, '1', 'genre'], ['1,297', label, '1', 'tracks']]);
  assert.equal(facts[1][1], `${label}, row 1, column tracks = 1297\n${GENRES}`);
  const sent = model.requests.filter((r) => r.body.messages.some((m) => m.role === 'user' && m.content === Q.bound));
  assert.ok(sent.length >= 2 && sent.every((r) => /PRIVATE MODE/.test(r.body.messages[0].content)));
  assert.ok(sent.every((r) => !JSON.stringify(r.body.messages).includes('1297')), 'no row reached the model');
  await page.hover(`${lastTurn} .answer.final span.fact:nth-of-type(2)`);
  await shot('07b-bound');
  await clickNow('#private');
  assert.equal(await page.$eval('#private', (c) => c.checked), false);
});

test('threads in the sidebar: resume, rename, delete', async () => {
  await page.waitForFunction(() => document.querySelectorAll('#thread-list li.thread').length === 2);
  // the older thread (the genres) is second: resume it
  await clickNow('#thread-list li.thread:nth-child(2) .thread-open');
  await page.waitForFunction(() => document.querySelectorAll('#conversation .turn').length === 2);
  assert.deepEqual(await texts('#conversation .q-text'), [Q.genres, Q.fewest]);
  assert.equal(await page.$eval(`${lastTurn} .answer.final`, (a) => a.textContent), 'Opera has the fewest, with 1 track.');
  const id = await page.$eval('#thread-list li.current', (li) => li.dataset.thread);
  // rename: the button, a field, Enter
  await clickNow('#thread-list li.current button[aria-label^="Rename"]');
  await page.waitForSelector('#thread-list form.rename input');
  await page.$eval('#thread-list form.rename input', (i) => { i.value = ''; });
  await page.type('#thread-list form.rename input', 'Genres <b>by</b> tracks');
  await page.keyboard.press('Enter');
  await page.waitForFunction((t) => [...document.querySelectorAll('#thread-list .thread-open')].some((b) => b.textContent === t), {}, 'Genres <b>by</b> tracks');
  const listed = await page.evaluate(async () => (await (await fetch('/api/threads')).json()).threads);
  assert.equal(listed.find((t) => t.thread_id === id).title, 'Genres <b>by</b> tracks');
  await shot('08-threads');
  // a follow-up in the resumed thread goes to it
  await clickNow('#thread-list li.current .thread-open');
  await page.waitForFunction(() => document.querySelectorAll('#conversation .turn').length === 2);
  // delete (the confirmation is accepted)
  await clickNow(`#thread-list li[data-thread="${id}"] button[aria-label^="Delete"]`);
  await page.waitForFunction(() => document.querySelectorAll('#thread-list li.thread').length === 1);
  assert.equal(await page.$$eval('#conversation .turn', (t) => t.length), 0, 'the open thread was deleted: a new one starts');
  const left = await page.evaluate(async () => (await (await fetch('/api/threads')).json()).threads);
  assert.equal(left.some((t) => t.thread_id === id), false);
});

test('the schema browser shows tables, columns, keys and samples, and searches them', async () => {
  await page.click('#open-schema');
  await page.waitForSelector('#schema-body details.schema-table');
  assert.match(await page.$eval('#schema-count', (c) => c.textContent), /^11 tables of 11$/);
  await page.type('#schema-search', 'email');
  await page.waitForFunction(() => /of 11 match/.test(document.getElementById('schema-count').textContent));
  const names = await texts('#schema-body details.schema-table summary strong');
  assert.deepEqual(names.sort(), ['Customer', 'Employee']);
  const body = await page.$eval('#schema-body', (b) => b.textContent);
  assert.ok(body.includes('Email'));
  await page.$eval('#schema-search', (i) => { i.value = ''; });
  await page.type('#schema-search', 'Track');
  const track = await page.$$eval('#schema-body details.schema-table', (ds) =>
    ds.find((d) => d.querySelector('summary strong').textContent === 'Track').textContent);
  assert.match(track, /TrackId.*PK/);
  assert.match(track, /AlbumId.*Album/);
  // a value finds its table: "Rock" is a genre
  await page.$eval('#schema-search', (i) => { i.value = ''; });
  await page.type('#schema-search', 'Rock');
  await page.waitForFunction(() => [...document.querySelectorAll('#schema-body details.schema-table')].some((d) =>
    d.querySelector('summary strong').textContent === 'Genre' && /values: 'Rock' \(Name\)/.test(d.querySelector('summary').textContent)));
  await shot('09-schema');
  // Escape empties the search field first, then closes the dialog
  await page.keyboard.press('Escape');
  if (await page.$eval('#schema', (d) => d.open)) await page.keyboard.press('Escape');
  assert.equal(await page.$eval('#schema', (d) => d.open), false);
});

test('Stop cancels a question the model is slow to answer', async () => {
  await newThreadInPage();
  await page.focus('#question');
  await page.keyboard.type(Q.slow);
  await page.keyboard.press('Enter');
  await page.waitForFunction(() => !document.getElementById('stop').hidden &&
    document.querySelector('#conversation .turn:last-of-type .step.wait'));
  await page.click('#stop');
  await page.waitForSelector(`${lastTurn} p.error`);
  assert.equal(await page.$eval(`${lastTurn} p.error`, (p) => p.textContent), 'Stopped: the question was cancelled.');
  assert.equal(await page.$eval('#stop', (b) => b.hidden), true);
  assert.equal(await page.$eval('#status', (s) => s.textContent), 'Question cancelled');
});

test('phone width and dark colours: the page still works at 375 px', async () => {
  await page.setViewport({ width: 375, height: 740, isMobile: true, hasTouch: true });
  await page.emulateMediaFeatures([{ name: 'prefers-color-scheme', value: 'dark' }]);
  await newThreadInPage();
  await askInPage(Q.genres);
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  assert.ok(overflow <= 0, `no sideways scrolling (${overflow} px too wide)`);
  const bg = await page.evaluate(() => getComputedStyle(document.body).backgroundColor);
  assert.equal(bg, 'rgb(22, 24, 27)');
  await shot('10-phone-dark');
  await page.click('#toggle-threads');
  assert.equal(await page.$eval('#threads', (t) => getComputedStyle(t).display), 'block');
  await shot('11-phone-threads');
  await page.emulateMediaFeatures([{ name: 'prefers-color-scheme', value: 'light' }]);
  await page.setViewport({ width: 1280, height: 900 });
});


test('Markdown answers: bold, lists, a table, code, http links with their target; no HTML, no javascript: link, bidi shown', async () => {
  await newThreadInPage();
  let alerted = false;
  const onDialog = () => { alerted = true; };
  page.on('dialog', onDialog);
  await askInPage(Q.md);
  const a = `${lastTurn} .answer.final`;
  assert.equal(await page.$eval(`${a} strong`, (e) => e.textContent), 'Rock');
  assert.equal(await page.$eval(`${a} em`, (e) => e.textContent), '1297');
  assert.deepEqual(await texts(`${a} ul li`), ['Rock: 1297', 'Latin: 579']);
  assert.deepEqual(await texts(`${a} ol li`), ['first', 'second']);
  assert.deepEqual(await page.$$eval(`${a} table tr`, (trs) => trs.map((tr) => [...tr.cells].map((c) => c.textContent))),
    [['genre', 'tracks'], ['Rock', '1297'], ['<b>Latin</b>', '579']]);
  assert.equal(await page.$eval(`${a} code`, (e) => e.textContent), 'count(*)');
  assert.equal(await page.$eval(`${a} pre code`, (e) => e.textContent), 'SELECT 1;');
  const links = await page.$$eval(`${a} a`, (as) => as.map((x) => [x.textContent, x.getAttribute('href'), x.rel]));
  assert.deepEqual(links, [['the docs', 'https://example.com/genres', 'noopener noreferrer nofollow']]);
  const text = await page.$eval(a, (e) => e.textContent);
  assert.ok(text.includes('the docs (https://example.com/genres)'), 'the target is shown');
  assert.ok(text.includes('[this](javascript:alert(document.cookie))'), 'not a link: shown as written');
  assert.ok(text.includes('<img src=x id=mdpwned onerror=alert(1)>'), 'HTML shown as text');
  assert.equal(await page.$('#mdpwned'), null);
  assert.equal(await page.$(`${a} b`), null);
  assert.equal(await page.$eval(`${a} .ctl`, (e) => e.textContent), '<U+202E>');
  assert.ok(text.includes('file<U+202E>gnp.exe'));
  await page.$eval(a, (e) => e.scrollIntoView());
  await shot('16-markdown');
  page.off('dialog', onDialog);
  assert.equal(alerted, false);
});

test('links: the thread URL restores question, answer, SQL, table and chart on reload; a run has its own URL; back and forward', async () => {
  await newThreadInPage();
  await askInPage(Q.chart);
  const threadUrl = page.url();
  assert.match(threadUrl, /#\/t\/web-[0-9a-f]{8}$/);
  const runId = await page.$eval(lastTurn, (t) => t.dataset.run);
  await page.reload({ waitUntil: 'networkidle0' });
  await page.waitForFunction(() => document.querySelector('#conversation .turn .run'));
  await tablesRead(lastTurn);
  assert.equal(page.url(), threadUrl);
  assert.deepEqual(await texts('#conversation .q-text'), [Q.chart]);
  assert.equal(await page.$eval(`${lastTurn} .answer.final`, (e) => e.textContent), 'Invoices per year are shown in the chart.');
  assert.equal(await page.$eval(`${lastTurn} pre.sql`, (e) => e.textContent), PER_YEAR);
  assert.deepEqual(await tableRows(`${lastTurn} .result`), (await sqliteRows(sc.db, PER_YEAR)).map((r) => r.map(String)));
  await page.waitForFunction((t) => { const i = document.querySelector(`${t} figure.chart img`); return i && i.complete && i.naturalWidth > 0; }, {}, lastTurn);
  assert.equal(await page.$(`${lastTurn} .changed`), null, 'the data did not change');
  assert.match(await page.$eval('#thread-state', (s) => s.textContent), /Follow-ups go to thread/);
  await shot('17-restored-thread');
  // the run's own link
  await page.click(`${lastTurn} a.permalink`);
  await page.waitForFunction((r) => location.hash === `#/r/${r}` && document.querySelector('#conversation .turn .result tbody tr'), {}, runId);
  assert.deepEqual(await texts('#conversation .q-text'), [Q.chart]);
  assert.ok(await page.$(`${lastTurn} figure.chart img`));
  // back to the thread, forward to the run
  await page.goBack();
  await page.waitForFunction((u) => location.href === u && document.querySelector('#conversation .turn .result tbody tr'), {}, threadUrl);
  await page.goForward();
  await page.waitForFunction((r) => location.hash === `#/r/${r}` && document.querySelector('#conversation .turn .run'), {}, runId);
  // a query's link restores the query
  await runInEditor('SELECT Name FROM MediaType ORDER BY MediaTypeId');
  const queryUrl = page.url();
  await page.reload({ waitUntil: 'networkidle0' });
  await page.waitForFunction(() => document.querySelector('#conversation .sqlturn .result tbody tr'));
  assert.equal(page.url(), queryUrl);
  assert.equal(await page.$eval('#sql', (t) => t.value), 'SELECT Name FROM MediaType ORDER BY MediaTypeId');
  assert.deepEqual((await tableRows(`${lastTurn} .result`))[0], ['MPEG audio file']);
});

test('the board: two answers pinned, reordered, renamed, their chart and table drawn again; exported as static HTML', async () => {
  await page.goto(`${origin}/#/`, { waitUntil: 'networkidle0' });
  await newThreadInPage();
  await askInPage(Q.chart);
  await page.click(`${lastTurn} button.pin`);
  await page.waitForFunction((t) => document.querySelector(`${t} button.pin`).textContent === 'Pinned', {}, lastTurn);
  await runInEditor('SELECT Name, Milliseconds FROM Track ORDER BY Milliseconds DESC');
  await page.click(`${lastTurn} button.pin`);
  await page.waitForFunction((t) => document.querySelector(`${t} button.pin`).textContent === 'Pinned', {}, lastTurn);
  await page.click('#open-board');
  await page.waitForFunction(() => location.hash === '#/board' && document.querySelectorAll('#pins li.pin-card').length === 2);
  await tablesRead('#pins');
  assert.deepEqual(await texts('#pins .pin-title'), [Q.chart, 'SELECT Name, Milliseconds FROM Track ORDER BY Milliseconds DESC']);
  assert.equal(await page.$eval('#compose', (c) => c.hidden), true);
  await page.waitForFunction(() => { const i = document.querySelector('#pins li:first-child figure.chart img'); return i && i.complete && i.naturalWidth > 0; });
  assert.match(await page.$eval('#pins li:first-child .pin-meta', (m) => m.textContent), /^Refreshed \d\d:\d\d:\d\d · asked: Plot invoices per year/);
  assert.deepEqual((await tableRows('#pins li:nth-child(2) .result'))[0], ['Occupation / Precipice', '5286953']);
  // move the second up, rename it
  await page.click('#pins li:nth-child(2) button[aria-label^="Move"][aria-label$="up"]');
  await page.waitForFunction(() => document.querySelector('#pins li:first-child .pin-title')?.textContent.startsWith('SELECT Name'));
  await page.click('#pins li:first-child button[aria-label^="Rename"]');
  await page.waitForSelector('#pins form.rename input');
  await page.$eval('#pins form.rename input', (i) => { i.value = ''; });
  await page.type('#pins form.rename input', 'Longest tracks');
  await page.keyboard.press('Enter');
  await page.waitForFunction(() => document.querySelector('#pins li:first-child .pin-title')?.textContent === 'Longest tracks');
  await tablesRead('#pins');
  await shot('18-board');
  // the board's export: one file, no script
  const html = await page.evaluate(async () => (await fetch('/api/pins/export.html')).text());
  assert.doesNotMatch(html, /<script/i);
  assert.ok(html.indexOf('Longest tracks') < html.indexOf('Plot invoices per year'));
  assert.match(html, /<svg[\s\S]*Invoices per year[\s\S]*<\/svg>/);
  assert.match(html, /<td>Occupation \/ Precipice<\/td><td class="num">5286953<\/td>/);
  assert.equal(await page.$eval('#board-export', (a) => a.getAttribute('href')), '/api/pins/export.html');
});

test('without a model: the page says how to get one, the board, the schema and SQL work, and a model pulled meanwhile turns questions on', async () => {
  const data = path.join(sc.dir, 'nomodel-data');
  const s = await startServer(['web', sc.db, '--port', '0', '--state-dir', sc.state], /serving .* at (http:\/\/\S+\?token=([0-9A-Za-z]+))/,
    { stream: 'stdout', env: { TABLETALK_DATA_DIR: data, TABLETALK_CACHE_DIR: path.join(sc.dir, 'cache') } });
  const ctx = await browser.createBrowserContext();
  const p = await ctx.newPage();
  p.setDefaultTimeout(WAIT_MS);
  await p.setViewport({ width: 1280, height: 900 });
  p.on('pageerror', (e) => pageErrors.push(e.message));
  await p.goto(s.match[1], { waitUntil: 'networkidle0' });
  assert.equal(await p.$eval('#question', (q) => q.disabled), true);
  assert.equal(await p.$eval('#send', (b) => b.disabled), true);
  const help = await p.$eval('#model-help', (h) => h.textContent);
  assert.match(help, /tabletalk pull.*--base-url.*TABLETALK_BASE_URL/s);
  assert.match(await p.$eval('#db-name', (d) => d.textContent), /no model/);
  await p.screenshot({ path: path.join(SHOTS, '19-no-model.png') });
  // the board re-runs its pins without a model
  await p.goto(`${new URL(s.match[1]).origin}/#/board`, { waitUntil: 'networkidle0' });
  await p.waitForFunction(() => document.querySelectorAll('#pins li.pin-card').length === 2 &&
    [...document.querySelectorAll('#pins .result')].every((r) => r.querySelector('tbody')));
  await p.waitForFunction(() => { const i = document.querySelector('#pins figure.chart img'); return i && i.complete && i.naturalWidth > 0; });
  assert.deepEqual(await p.$$eval('#pins .pin-title', (t) => t.map((x) => x.textContent)), ['Longest tracks', Q.chart]);
  await p.screenshot({ path: path.join(SHOTS, '20-board-no-model.png') });
  // SQL in the editor
  await p.goto(`${new URL(s.match[1]).origin}/#/`, { waitUntil: 'networkidle0' });
  await p.focus('#sql');
  await p.keyboard.type('SELECT count(*) AS n FROM Invoice');
  await p.keyboard.down('Control'); await p.keyboard.press('Enter'); await p.keyboard.up('Control');
  await p.waitForFunction(() => document.querySelector('#conversation .result tbody tr')?.textContent === '412');
  // `tabletalk pull` puts a model in the data folder: the page turns questions on by itself
  fs.mkdirSync(path.join(data, 'models'), { recursive: true });
  fs.writeFileSync(path.join(data, 'models', 'default.gguf'), 'not really a model');
  await p.waitForFunction(() => !document.getElementById('question').disabled);
  assert.equal(await p.$eval('#model-help', (h) => h.hidden), true);
  assert.match(await p.$eval('#db-name', (d) => d.textContent), /model default\.gguf/);
  await ctx.close();
  await s.close();
});

test('restoring after the data changed says so; with the database gone, the rows the answer kept', async () => {
  const sc2 = scratch();
  const s = await startServer(['web', sc2.db, '--port', '0', '--state-dir', sc2.state, '--base-url', model.url], /serving .* at (http:\/\/\S+\?token=([0-9A-Za-z]+))/,
    { stream: 'stdout', env: { TABLETALK_DATA_DIR: path.join(sc2.dir, 'data'), TABLETALK_CACHE_DIR: path.join(sc2.dir, 'cache') } });
  const ctx = await browser.createBrowserContext();
  const p = await ctx.newPage();
  p.setDefaultTimeout(WAIT_MS);
  p.on('pageerror', (e) => pageErrors.push(e.message));
  await p.goto(s.match[1], { waitUntil: 'networkidle0' });
  await p.focus('#question');
  await p.keyboard.type(Q.media);
  await p.keyboard.press('Enter');
  await p.waitForFunction(() => document.querySelector('#conversation .result tbody tr'));
  const url = p.url();
  const edit = (q) => runProgram('python3', ['-c', 'import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); c.execute(sys.argv[2]); c.commit()', sc2.db, q]);
  assert.equal((await edit("INSERT INTO MediaType(MediaTypeId, Name) VALUES (6, 'Tape')")).code, 0);
  await p.goto(url, { waitUntil: 'networkidle0' });
  await p.reload({ waitUntil: 'networkidle0' });
  await p.waitForSelector('#conversation .result .changed');
  assert.equal(await p.$eval('#conversation .result .changed', (c) => c.textContent),
    'The data changed since this answer was written: the query gave 5 rows then, 6 now.');
  assert.equal(await p.$$eval('#conversation .result tbody tr', (t) => t.length), 6);
  await p.screenshot({ path: path.join(SHOTS, '21-data-changed.png') });
  fs.renameSync(sc2.db, `${sc2.db}.away`);
  await p.reload({ waitUntil: 'networkidle0' });
  await p.waitForFunction(() => document.querySelector('#conversation .result .warning') && document.querySelector('#conversation .result tbody tr'));
  assert.match(await p.$eval('#conversation .result .warning', (c) => c.textContent), /^The database cannot be read now \(.*\): these are the 5 rows kept with the answer\.$/);
  assert.deepEqual(await p.$$eval('#conversation .result tbody tr', (t) => t.map((r) => r.cells[1].textContent)),
    ['MPEG audio file', 'Protected AAC audio file', 'Protected MPEG-4 video file', 'Purchased AAC audio file', 'AAC audio file']);
  await p.screenshot({ path: path.join(SHOTS, '22-database-gone.png') });
  fs.renameSync(`${sc2.db}.away`, sc2.db);
  await ctx.close();
  await s.close();
});

test('without the token: refused, with a page that says which URL to open', async () => {
  const ctx = await browser.createBrowserContext();
  const p = await ctx.newPage();
  const res = await p.goto(`${origin}/`);
  assert.equal(res.status(), 401);
  assert.match(await p.evaluate(() => document.body.textContent), /URL/);
  const api = await p.evaluate(async () => { const r = await fetch('/api/threads'); return [r.status, await r.text()]; });
  assert.equal(api[0], 401);
  assert.equal(typeof JSON.parse(api[1]).error, 'string');
  const wrong = await p.goto(`${origin}/?token=0123456789abcdef0123456789abcdef`);
  assert.equal(wrong.status(), 401);
  await p.screenshot({ path: path.join(SHOTS, '12-no-token.png') });
  await ctx.close();
  // scripts: no cookie, no bearer: 401; the bearer token works
  assert.equal((await raw('GET', '/api/session')).status, 401);
  assert.equal((await raw('GET', '/api/session', { Authorization: `Bearer ${web.token}` })).status, 200);
});

test('another origin and a foreign Host are refused', async () => {
  // a page on another port of the same host: same site, so the SameSite
  // cookie goes along; the Origin check must refuse it
  const evil = http.createServer((req, res) => {
    res.writeHead(200, { 'Content-Type': 'text/html' });
    res.end('<!doctype html><title>elsewhere</title><p>another origin</p>');
  });
  await new Promise((r) => evil.listen(0, '127.0.0.1', r));
  const p = await browser.newPage();
  await p.goto(`http://127.0.0.1:${evil.address().port}/`);
  const target = `${origin}/api/sql`;
  const seen = p.waitForResponse((r) => r.url() === target && r.request().method() === 'POST');
  await p.evaluate((t) => fetch(t, { method: 'POST', mode: 'no-cors', credentials: 'include',
    headers: { 'Content-Type': 'text/plain' }, body: '{"sql":"SELECT 1"}' }).catch(() => null), target);
  assert.equal((await seen).status(), 403);
  await p.close();
  evil.closeAllConnections(); // the browser keeps its connection alive
  await new Promise((r) => evil.close(r));
  // a foreign Host (DNS rebinding), even with the bearer token; a foreign Origin to a script
  const port = new URL(url).port;
  const bearer = { Authorization: `Bearer ${web.token}` };
  assert.equal((await raw('GET', '/api/session', { ...bearer, Host: `evil.example:${port}` })).status, 403);
  assert.equal((await raw('GET', '/', { ...bearer, Host: `evil.example:${port}` })).status, 403);
  assert.equal((await raw('GET', '/api/session', { ...bearer, Origin: 'http://evil.example' })).status, 403);
  // the page's own session without a CSRF token cannot write
  const noCsrf = await page.evaluate(async () => (await fetch('/api/sql', { method: 'POST', headers: { 'Content-Type': 'application/json' },
    body: '{"sql":"SELECT 1"}' })).status);
  assert.equal(noCsrf, 403);
});

test('the page is hand-written and small: under 100 KB of HTML, CSS and JavaScript', async () => {
  let total = 0;
  for (const f of ['/', '/app.js', '/app.css']) {
    const r = await page.evaluate(async (u) => { const x = await fetch(u); return [x.status, x.headers.get('Content-Security-Policy'), (await x.arrayBuffer()).byteLength]; }, f);
    assert.equal(r[0], 200);
    assert.match(r[1], /script-src 'self'/);
    total += r[2];
  }
  assert.ok(total < 100 * 1024, `${total} bytes`);
  // no script error and no CSP violation in the whole session (the refusals above are expected 4xx)
  assert.deepEqual(pageErrors.filter((e) => !/status of (401|403|422)/.test(e)), []);
  console.log(`# page weight: ${total} bytes (HTML + CSS + JS, uncompressed)`);
});
