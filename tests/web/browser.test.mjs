// The page of `tabletalk web` in a real browser: Debian's chromium, headless,
// driven by puppeteer-core (tests/web/package.json; it never downloads a
// browser), against the real binary with the scripted model server and a
// scratch copy of chinook. Asks, follows up, answers a clarification in
// place, draws a chart, tries a write, edits and re-runs SQL, sorts, pages
// and downloads rows, opens a trace, renames and deletes a thread, searches
// the schema, and checks that requests without the token or from another
// origin are refused. Screenshots of the main states go to
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
const { FAIL_AFTER, scratch, server, sha256, startServer, tempDir, waitForFile } = await import('../support/harness.mjs');
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
};
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
  page.on('console', (m) => { if (m.type() === 'error') pageErrors.push(m.text()); });
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
  // sort by a click on the header: fewest first, then most first again
  await page.click(`${turn} th:nth-child(2) button.sort`);
  assert.equal(await page.$eval(`${turn} th:nth-child(2)`, (th) => th.getAttribute('aria-sort')), 'ascending');
  assert.deepEqual((await tableRows(`${turn} .result`))[0], ['Opera', '1']);
  await page.click(`${turn} th:nth-child(2) button.sort`);
  assert.deepEqual((await tableRows(`${turn} .result`))[0], ['Rock', '1297']);
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

test('edit the SQL and run it again; a write there is refused plainly', async () => {
  const turn = '#conversation .turn:first-of-type';
  await page.click(`${turn} .sql-actions button:nth-child(2)`); // Edit
  const editor = `${turn} textarea.sql-edit`;
  await page.waitForSelector(editor);
  await page.$eval(editor, (t) => { t.value = ''; });
  await page.type(editor, 'SELECT Name FROM Artist ORDER BY ArtistId');
  await page.click(`${turn} .run-sql`);
  await page.waitForSelector(`${turn} .sql-result .result`);
  assert.match(await page.$eval(`${turn} .sql-result`, (r) => r.textContent), /275 rows in/);
  assert.deepEqual((await tableRows(`${turn} .sql-result .result`))[0], ['AC/DC']);
  await page.click(`${turn} .sql-result .pager button:nth-child(3)`); // Next
  assert.match(await page.$eval(`${turn} .sql-result .page-info`, (p) => p.textContent), /Rows 26–50 of 275, page 2 of 11/);
  // hostile cells stay text, and the CSV is RFC 4180
  await page.$eval(editor, (t) => { t.value = ''; });
  await page.type(editor, `SELECT '<img src=x id=pwned>' AS html, 'a,b' AS comma, 'say "hi"' AS quote, 'two' || char(10) || 'lines' AS nl, NULL AS empty`);
  await page.keyboard.down('Control'); await page.keyboard.press('Enter'); await page.keyboard.up('Control');
  await page.waitForFunction((t) => document.querySelector(`${t} .sql-result`).textContent.includes('1 row in'), {}, turn);
  assert.equal(await page.$('#pwned'), null);
  assert.deepEqual((await tableRows(`${turn} .sql-result .result`))[0], ['<img src=x id=pwned>', 'a,b', 'say "hi"', 'two\nlines', 'NULL']);
  await page.click(`${turn} .sql-result button.csv`);
  const csvFile = path.join(downloads, 'tabletalk-result.csv');
  await downloadFinished(1);
  await waitForFile(csvFile);
  assert.equal(fs.readFileSync(csvFile, 'utf8'),
    'html,comma,quote,nl,empty\r\n<img src=x id=pwned>,"a,b","say ""hi""","two\nlines",\r\n');
  await page.$eval(editor, (t) => { t.value = ''; });
  await page.type(editor, 'DELETE FROM Genre');
  await page.click(`${turn} .run-sql`);
  await page.waitForSelector(`${turn} .sql-result .refused`);
  const refused = await page.$eval(`${turn} .sql-result .refused`, (r) => r.textContent);
  assert.match(refused, /^Refused: .*DELETE.* tabletalk only reads, so the database is unchanged\.$/);
  assert.equal(await page.$eval(`${turn} .sql-result .refused`, (r) => r.getAttribute('role')), 'alert');
  await page.$eval(`${turn} .sql-result`, (r) => r.scrollIntoView());
  await shot('04-sql-refused');
  assert.equal(sha256(sc.db), before_sha);
});

test('a clarifying question is answered in place and the run continues', async () => {
  await page.click('#new-thread');
  assert.equal(await page.$$eval('#conversation .turn', (t) => t.length), 0);
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
  await shot('09-schema');
  await page.keyboard.press('Escape');
});

test('Stop cancels a question the model is slow to answer', async () => {
  await page.click('#new-thread');
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
  await page.click('#new-thread').catch(() => {});
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
