// Charts through the agent: the real binary, the scripted model server and
// scratch copies of chinook. What is asserted comes from the files written
// (a PNG decoded pixel by pixel, an SVG read as text), the JSON output and
// the trace, never from the script's own words.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import {
  ask, run, BIN, scratch, server, sha256, lastTool, traceEvents, sqliteRows, runProgram as runAny,
} from '../support/harness.mjs';
import { readPng, runsOnRow } from './png.mjs';

const sql = (s) => ({ tool: 'run_sql', args: { sql: s } });
const chart = (args) => ({ tool: 'make_chart', args });
const answer = (text) => ({ tool: 'answer', args: { text } });

const PER_YEAR = "SELECT strftime('%Y', InvoiceDate) AS year, count(*) AS invoices FROM Invoice GROUP BY year ORDER BY year";
const BAR_BLUE = 0x0072b2; // the first colour of the palette

/* Runs any program; resolves with {code, stdout, stderr}. */
const runProgram = (cmd, args, env = {}) =>
  runAny(cmd, args, { env: { ...process.env, NO_COLOR: '1', TABLETALK_BASE_URL: '', ...env } });

test('plot invoices per year: a PNG of 5 bars, reported in the answer, the JSON and the trace', async () => {
  const sc = scratch();
  const before = sha256(sc.db);
  const q = 'Plot invoices per year';
  const srv = await server({
    rules: [
      { when: { question: q, step: 0 }, ...sql(PER_YEAR) },
      { when: { question: q, step: 1 }, ...chart({ kind: 'bar', x: 'year', y: 'invoices', title: 'Invoices per year' }) },
      { when: { question: q, step: 2 }, ...answer('Invoices per year are shown in the chart.') },
    ],
  });
  const r = await ask(sc, srv, q);
  await srv.close();
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.json.status, 'answered');
  assert.equal(r.json.charts.length, 1);
  const c = r.json.charts[0];
  assert.equal(c.kind, 'bar');
  assert.equal(c.points, 5);
  assert.equal(c.description, 'bar chart, 5 bars: Invoices per year');
  assert.equal(c.sql, PER_YEAR);
  assert.equal(c.file, path.join(sc.state, 'charts', `${r.json.run_id}.png`));
  // the picture itself: 1200x700, five bars crossing the middle row
  const img = readPng(c.file);
  assert.equal(img.width, 1200);
  assert.equal(img.height, 700);
  assert.equal(runsOnRow(img, 400, BAR_BLUE), 5);
  // the rows behind it are SQLite's
  assert.deepEqual(r.json.rows, await sqliteRows(sc.db, PER_YEAR));
  assert.deepEqual(r.json.rows.map((row) => row[0]), ['2021', '2022', '2023', '2024', '2025']);
  // the model was told the chart exists and to answer now
  assert.match(lastTool(srv.requests[2]), /Chart made: bar chart, 5 bars: Invoices per year/);
  // the trace records the chart and its file
  const ev = traceEvents(r.json.trace);
  const made = ev.find((e) => e.event === 'chart');
  assert.equal(made.ok, true);
  assert.equal(made.file, c.file);
  assert.equal(made.rows, 5);
  assert.deepEqual(ev.at(-1).charts, r.json.charts, 'the run_end carries the same charts as the JSON');
  assert.equal(sha256(sc.db), before);
});

test('the plain output names the chart file', async () => {
  const sc = scratch();
  const q = 'Plot invoices per year';
  const srv = await server({
    rules: [
      { when: { question: q, step: 0 }, ...sql(PER_YEAR) },
      { when: { question: q, step: 1 }, ...chart({ kind: 'line', x: 'year', y: 'invoices', title: 'Invoices' }) },
      { when: { question: q, step: 2 }, ...answer('See the chart.') },
    ],
  });
  const r = await run(['ask', sc.db, q, '--base-url', srv.url, '--state-dir', sc.state, '--quiet']);
  await srv.close();
  const out = r.stdout;
  assert.equal(r.code, 0, r.stderr);
  assert.match(out, /^Answer:\nSee the chart\.$/m);
  assert.match(out, /^Chart: .*\/charts\/\d{8}-\d{6}-[0-9a-f]{6}\.png \(line chart, 5 points: Invoices\)$/m);
});

test('a spec that does not fit the rows comes back naming the columns, and the model repairs it', async () => {
  const sc = scratch();
  const q = 'Plot invoices per year';
  const srv = await server({
    rules: [
      { when: { question: q, step: 0 }, ...sql(PER_YEAR) },
      { when: { question: q, step: 1 }, ...chart({ kind: 'bar', x: 'yr', y: 'invoices', title: 'Invoices per year' }) },
      { when: { question: q, step: 2, last_tool: "no column 'yr'" }, ...chart({ kind: 'bar', x: 'year', y: 'invoices', title: 'Invoices per year' }) },
      { when: { question: q, step: 3 }, ...answer('Done.') },
    ],
  });
  const r = await ask(sc, srv, q);
  await srv.close();
  assert.equal(r.code, 0, r.stderr);
  assert.match(lastTool(srv.requests[2]),
    /make_chart failed: x: no column 'yr' \(did you mean 'year'\?\); the columns are year \(text\), invoices \(integer\)/);
  assert.equal(r.json.charts.length, 1);
  assert.equal(r.json.charts[0].points, 5);
  const ev = traceEvents(r.json.trace).filter((e) => e.event === 'chart');
  assert.deepEqual(ev.map((e) => e.ok), [false, true]);
});

test('make_chart before any query is sent back: query first', async () => {
  const sc = scratch();
  const q = 'Chart the genres';
  const srv = await server({
    rules: [
      { when: { question: q, step: 0 }, ...chart({ kind: 'pie', x: 'Name', y: 'n', title: 'Genres' }) },
      { when: { question: q, step: 1 }, ...answer('I could not draw it.') },
    ],
  });
  const r = await ask(sc, srv, q);
  await srv.close();
  assert.equal(r.code, 0);
  assert.match(lastTool(srv.requests[1]), /there are no rows to draw yet: call run_sql first/);
  assert.deepEqual(r.json.charts, []);
});

test('a chart as a follow-up draws the thread\'s last query', async () => {
  const sc = scratch();
  const srv = await server({
    rules: [
      { when: { question: 'How many invoices', step: 0 }, ...sql(PER_YEAR) },
      { when: { question: 'How many invoices', step: 1 }, ...answer('About 83 a year.') },
      { when: { question: '^Plot that', step: 0 }, ...chart({ kind: 'line', x: 'year', y: 'invoices', title: 'Invoices per year' }) },
      { when: { question: '^Plot that', step: 1 }, ...answer('Here it is.') },
    ],
  });
  const a = await ask(sc, srv, 'How many invoices were there each year?', ['--thread', 't']);
  const b = await ask(sc, srv, 'Plot that as a line', ['--thread', 't', '--out', path.join(sc.dir, 'line.svg'),
    '--size', '800x500']);
  await srv.close();
  assert.equal(a.code, 0);
  assert.equal(b.code, 0, b.stderr);
  assert.equal(b.json.sql, PER_YEAR, 'the chart\'s query is the question\'s query');
  assert.equal(b.json.row_count, 5);
  assert.equal(b.json.charts[0].file, path.join(sc.dir, 'line.svg'));
  const svg = fs.readFileSync(b.json.charts[0].file, 'utf8');
  assert.match(svg, /^<\?xml/);
  assert.match(svg, /width="800" height="500"/);
  assert.match(svg, />Invoices per year</);
  assert.match(svg, />2025</);
});

test('a follow-up chart of a long query keeps the usual row cap in the answer', async () => {
  const sc = scratch();
  const all = 'SELECT TrackId, Milliseconds FROM Track';
  const srv = await server({
    rules: [
      { when: { question: 'How long are the tracks', step: 0 }, ...sql(all) },
      { when: { question: 'How long are the tracks', step: 1 }, ...answer('They vary.') },
      { when: { question: '^Plot them', step: 0 }, ...chart({ kind: 'scatter', x: 'TrackId', y: 'Milliseconds', title: 'Lengths' }) },
      { when: { question: '^Plot them', step: 1 }, ...answer('Here.') },
    ],
  });
  await ask(sc, srv, 'How long are the tracks?', ['--thread', 'long']);
  const b = await ask(sc, srv, 'Plot them', ['--thread', 'long']);
  await srv.close();
  assert.equal(b.code, 0, b.stderr);
  assert.equal(b.json.sql, all);
  const end = traceEvents(b.json.trace).at(-1);
  assert.equal(end.row_count, 200, 'the run keeps the usual cut');
  assert.equal(end.rows.length, 200);
  assert.equal(b.json.row_count, 3503, '--json reads the final query again: every row');
  assert.equal(b.json.truncated, false);
  assert.equal(b.json.charts[0].points, 3503);
});

test('a cut result is read again in full for the chart', async () => {
  const sc = scratch();
  const q = 'Plot the length of every track';
  const all = 'SELECT TrackId, Milliseconds FROM Track';
  const srv = await server({
    rules: [
      { when: { question: q, step: 0 }, ...sql(all) },
      { when: { question: q, step: 1 }, ...chart({ kind: 'scatter', x: 'TrackId', y: 'Milliseconds', title: 'Lengths' }) },
      { when: { question: q, step: 2 }, ...answer('Done.') },
    ],
  });
  const r = await ask(sc, srv, q);
  await srv.close();
  assert.equal(r.code, 0, r.stderr);
  assert.equal(traceEvents(r.json.trace).at(-1).row_count, 200, 'the answer keeps the usual cut');
  assert.equal(r.json.charts[0].points, 3503, 'the chart has every row');
  assert.equal(r.json.charts[0].note, null);
});

/* Quotes s for the shell that `script` runs the command with. */
const shq = (s) => `'${String(s).replaceAll("'", "'\\''")}'`;

test('on a terminal the answer is followed by a preview of the chart and its file', async () => {
  const sc = scratch();
  const q = 'Plot invoices per year';
  const srv = await server({
    rules: [
      { when: { question: q, step: 0 }, ...sql(PER_YEAR) },
      { when: { question: q, step: 1 }, ...chart({ kind: 'bar', x: 'year', y: 'invoices', title: 'Invoices per year' }) },
      { when: { question: q, step: 2 }, ...answer('83 invoices a year, 80 in 2025.') },
    ],
  });
  // util-linux's script gives the command a pseudo-terminal
  const cmd = [BIN, 'ask', sc.db, q, '--base-url', srv.url, '--state-dir', sc.state, '--quiet'].map(shq).join(' ');
  const r = await runProgram('script', ['-qec', `stty cols 90; ${cmd}`, '/dev/null']);
  await srv.close();
  assert.equal(r.code, 0, r.stdout + r.stderr);
  const out = r.stdout.replaceAll('\r', '');
  assert.match(out, /Answer/);
  assert.match(out, /Invoices per year\n2021 +█+ 83\n2022 +█+ 83\n2023 +█+ 83\n2024 +█+ 83\n2025 +█+.? +80\n/);
  assert.match(out, /chart: .*\/charts\/.*\.png/);
  const noPreview = await runProgram('script', ['-qec', `stty cols 90; ${cmd} --no-preview`, '/dev/null']);
  assert.doesNotMatch(noPreview.stdout, /2021 +█/);
});
