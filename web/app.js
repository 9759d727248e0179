// app.js — the page of `tabletalk web`: asks questions through the HTTP API
// (docs/reference/web-api.md), reads the answer as it streams (server-sent events over
// a POST, read with fetch and a stream reader), and shows each run as the
// CLI does: steps, answer, refusals, unverified numbers, SQL, rows, charts.
// Everything that comes from the model or the database is hostile input: it
// reaches the page through textContent and attributes only, never innerHTML.
'use strict';

const PAGE_ROWS = 25;
const state = { csrf: null, thread: null, busy: null, schema: null };
const $ = (id) => document.getElementById(id);

/* ---- small DOM helpers ----------------------------------------------------- */

/* el('p.note', {role: 'alert'}, 'text', child...): an element with classes,
 * attributes (never on* handlers), and children (strings become text). */
function el(spec, attrs, ...kids) {
  const [tag, ...classes] = spec.split('.');
  const e = document.createElement(tag);
  if (classes.length) e.className = classes.join(' ');
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === null || v === undefined || v === false) continue;
    if (k === 'text') e.textContent = String(v);
    else if (k === 'hidden') e.hidden = true;
    else e.setAttribute(k, v === true ? '' : String(v));
  }
  for (const k of kids.flat()) {
    if (k === null || k === undefined || k === false) continue;
    e.append(typeof k === 'string' || typeof k === 'number' ? String(k) : k);
  }
  return e;
}

function button(label, onClick, cls, attrs) {
  const b = el('button' + (cls ? '.' + cls : ''), { type: 'button', ...attrs }, label);
  b.addEventListener('click', onClick);
  return b;
}

const plural = (n, one, many) => `${n} ${n === 1 ? one : many || one + 's'}`;
const ms = (v) => (typeof v === 'number' ? (v >= 1000 ? `${(v / 1000).toFixed(1)} s` : `${Math.round(v)} ms`) : '');
const announce = (text) => { $('status').textContent = text; };

function notice(text) {
  const n = $('notice');
  n.textContent = text;
  n.hidden = !text;
}

/* ---- the API ------------------------------------------------------------------ */

/* fetch with the CSRF header on writes; resolves with {status, body}. */
async function api(method, url, body) {
  const headers = {};
  if (method !== 'GET') headers['X-CSRF-Token'] = state.csrf || '';
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  const r = await fetch(url, { method, headers, body: body === undefined ? undefined : JSON.stringify(body),
    credentials: 'same-origin', cache: 'no-store' });
  let data = null;
  const type = r.headers.get('Content-Type') || '';
  if (r.status !== 204 && type.includes('json')) {
    try { data = await r.json(); } catch { data = null; }
  }
  return { status: r.status, body: data };
}

const errorOf = (r, what) => (r.body && r.body.error) || `${what} failed (HTTP ${r.status})`;

/* Reads a text/event-stream body, calling onEvent(name, data) per event. */
async function readEvents(response, onEvent) {
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let buf = '';
  const flush = (block) => {
    let name = 'message';
    const data = [];
    for (const line of block.split('\n')) {
      if (line.startsWith(':')) continue;
      const i = line.indexOf(':');
      const field = i < 0 ? line : line.slice(0, i);
      let value = i < 0 ? '' : line.slice(i + 1);
      if (value.startsWith(' ')) value = value.slice(1);
      if (field === 'event') name = value;
      else if (field === 'data') data.push(value);
    }
    if (!data.length) return;
    let parsed;
    try { parsed = JSON.parse(data.join('\n')); } catch { parsed = { raw: data.join('\n') }; }
    onEvent(name, parsed);
  };
  for (;;) {
    const { value, done } = await reader.read();
    buf += decoder.decode(value || new Uint8Array(), { stream: !done });
    buf = buf.replace(/\r\n?/g, '\n');
    let cut;
    while ((cut = buf.indexOf('\n\n')) >= 0) {
      flush(buf.slice(0, cut));
      buf = buf.slice(cut + 2);
    }
    if (done) break;
  }
  if (buf.trim()) flush(buf);
}

/* ---- session ------------------------------------------------------------------ */

async function startSession() {
  let r;
  try { r = await api('GET', '/api/session'); } catch (e) {
    notice(`Cannot reach the tabletalk server (${e.message}). Is \`tabletalk web\` still running?`);
    return false;
  }
  if (r.status === 401) {
    notice('This page needs the access token: open the URL that `tabletalk web` printed when it started (the one ending in ?token=...).');
    return false;
  }
  if (r.status !== 200 || !r.body) {
    notice(errorOf(r, 'Starting the session'));
    return false;
  }
  state.csrf = r.body.csrf;
  const db = $('db-name');
  db.textContent = [r.body.db, r.body.dialect, r.body.model && `model ${r.body.model}`].filter(Boolean).join(' · ');
  db.title = r.body.version ? `tabletalk ${r.body.version}` : '';
  return true;
}

/* ---- threads (the sidebar) ------------------------------------------------------ */

async function loadThreads() {
  const r = await api('GET', '/api/threads');
  if (r.status !== 200 || !r.body) { notice(errorOf(r, 'Listing the threads')); return; }
  const list = $('thread-list');
  list.replaceChildren();
  const threads = r.body.threads || [];
  $('threads-empty').hidden = threads.length > 0;
  for (const t of threads) list.append(threadItem(t));
}

function threadItem(t) {
  const title = t.title || t.thread_id;
  const current = t.thread_id === state.thread;
  const open = button(title, () => resumeThread(t.thread_id), 'thread-open',
    { 'aria-current': current ? 'true' : null, title: `${title} — ${plural(t.turns || 0, 'turn')}${t.updated ? ', ' + t.updated : ''}` });
  const li = el('li.thread' + (current ? '.current' : ''), { 'data-thread': t.thread_id }, open,
    el('span.thread-actions', null,
      button('Rename', () => renameThread(li, t), 'small', { 'aria-label': `Rename thread ${title}` }),
      button('Delete', () => deleteThread(t), 'small.danger', { 'aria-label': `Delete thread ${title}` })));
  return li;
}

function renameThread(li, t) {
  const input = el('input', { type: 'text', value: t.title || '', 'aria-label': 'New title', maxlength: 200 });
  const form = el('form.rename', null, input, el('button.small', { type: 'submit' }, 'Save'),
    button('Cancel', () => loadThreads(), 'small'));
  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    const title = input.value.trim();
    if (!title) { input.focus(); return; }
    const r = await api('PATCH', `/api/threads/${encodeURIComponent(t.thread_id)}`, { title });
    if (r.status >= 300) notice(errorOf(r, 'Renaming the thread'));
    else announce(`Thread renamed to ${title}`);
    await loadThreads();
    const again = document.querySelector(`li.thread[data-thread="${CSS.escape(t.thread_id)}"] .thread-open`);
    if (again) again.focus();
  });
  input.addEventListener('keydown', (ev) => { if (ev.key === 'Escape') loadThreads(); });
  li.replaceChildren(form);
  input.focus();
  input.select();
}

async function deleteThread(t) {
  if (!window.confirm(`Delete the thread "${t.title || t.thread_id}"? Its turns are forgotten (traces stay).`)) return;
  const r = await api('DELETE', `/api/threads/${encodeURIComponent(t.thread_id)}`);
  if (r.status >= 300) { notice(errorOf(r, 'Deleting the thread')); return; }
  if (state.thread === t.thread_id) newThread();
  announce('Thread deleted');
  await loadThreads();
}

function newThread() {
  if (state.busy) state.busy.abort();
  state.thread = null;
  $('conversation').replaceChildren();
  $('thread-state').textContent = '';
  notice('');
  for (const li of document.querySelectorAll('li.thread')) {
    li.classList.remove('current');
    li.querySelector('.thread-open')?.removeAttribute('aria-current');
  }
  closeThreadsOnPhone();
  $('question').focus();
}

async function resumeThread(id) {
  if (state.busy) state.busy.abort();
  const r = await api('GET', `/api/threads/${encodeURIComponent(id)}`);
  if (r.status !== 200 || !r.body) { notice(errorOf(r, 'Opening the thread')); return; }
  notice('');
  setThread(r.body.thread_id || id);
  const conv = $('conversation');
  conv.replaceChildren();
  const turns = r.body.turns || [];
  for (const [i, turn] of turns.entries()) {
    const t = newTurn(turn.question || '');
    /* a clarification left unanswered at the end of the thread can still be answered */
    const open = i === turns.length - 1 && turn.status === 'clarify';
    showRun(t, { status: turn.status, answer: turn.answer, sql: turn.sql, run_id: turn.run_id,
      clarification: turn.clarification || (turn.status === 'clarify' ? turn.answer || turn.summary : null),
      verified: turn.verified, unbacked_numbers: turn.unbacked_numbers, refusal: turn.refusal,
      charts: turn.charts, columns: turn.columns, rows: turn.rows, error: turn.error, totals: turn.totals,
      truncated: turn.truncated }, !open);
  }
  announce(`Thread ${r.body.title || id} opened, ${plural(turns.length, 'turn')}`);
  await loadThreads();
  closeThreadsOnPhone();
  $('question').focus();
}

function setThread(id) {
  state.thread = id;
  $('thread-state').textContent = id ? `Follow-ups go to thread ${id}.` : '';
}

/* ---- asking ---------------------------------------------------------------------- */

/* A turn: the question, then the run's progress and result. */
function newTurn(question) {
  const body = el('div.turn-body');
  const art = el('article.turn', { 'aria-label': `Question: ${question}` },
    el('p.question', null, el('span.who', null, 'You'), el('span.q-text', { text: question })), body);
  $('conversation').append(art);
  return { art, body, question };
}

/* One renderer for the events of a question (docs/reference/events.md):
 * the live stream of /api/ask and a stored run's trace (/api/runs/ID) go
 * through the same function, so a run looks the same either way. It fills
 * the turn's steps and answer; run_end draws the result. */
function runRenderer(turn, { live = true, t0 = performance.now() } = {}) {
  const steps = el('ol.steps', { 'aria-label': 'Progress' });
  const clock = el('p.clock.muted', { 'aria-hidden': 'true' });
  const answer = el('div.answer', { 'aria-live': live ? 'polite' : 'off', 'aria-busy': live ? 'true' : 'false', 'aria-label': 'Answer' });
  const summary = el('summary', null, 'Steps');
  const details = el('details.progress', { open: live }, summary, steps, clock);
  turn.body.append(details, answer);
  let waiting = null;
  const r = { finished: false, steps, clock, answer, details, summary };
  r.settle = () => { if (waiting) { waiting.remove(); waiting = null; } };
  r.handle = (name, d) => {
    if (d && d.run_id) turn.art.dataset.run = d.run_id;
    if (name === 'run_start') {
      if (live && d.thread) setThread(d.thread);
    } else if (name === 'model_wait') {
      r.settle();
      if (live) { waiting = el('li.step.wait', null, 'Waiting for the model…'); steps.append(waiting); }
    } else if (name === 'text') {
      answer.classList.add('streaming');
      answer.append(d.piece || '');
    } else if (name === 'text_restart') {
      answer.replaceChildren();
    } else if (name === 'run_end') {
      r.settle();
      r.finished = true;
      answer.remove();
      details.open = false;
      showRun(turn, d, !live, live ? answer : null);
      const s = d.totals;
      clock.textContent = s ? `${ms(s.wall_ms)} in all: ${plural(s.llm_calls || 0, 'model call')} (${ms(s.llm_ms)}), ${plural(s.sql_calls || 0, 'query', 'queries')}, ${s.prompt_tokens || 0} prompt + ${s.completion_tokens || 0} completion tokens`
        : `${ms(performance.now() - t0)} in all`;
      summary.textContent = `Steps: ${clock.textContent}`;
    } else if (name !== 'answer' && name !== 'clarification') { /* the result shows those */
      r.settle();
      const li = stepItem(name, d);
      if (li) steps.append(li);
    }
  };
  return r;
}

async function ask(question) {
  question = question.trim();
  if (!question || state.busy) return;
  notice('');
  const turn = newTurn(question);
  const t0 = performance.now();
  const view = runRenderer(turn, { live: true, t0 });
  turn.art.scrollIntoView({ block: 'end' });

  const ctl = new AbortController();
  state.busy = ctl;
  setBusy(true);
  const tick = setInterval(() => { view.clock.textContent = `${ms(performance.now() - t0)} so far`; }, 200);

  try {
    const res = await fetch('/api/ask', {
      method: 'POST', signal: ctl.signal, credentials: 'same-origin',
      headers: { 'Content-Type': 'application/json', 'X-CSRF-Token': state.csrf || '', Accept: 'text/event-stream' },
      body: JSON.stringify({ question, thread_id: state.thread }),
    });
    if (!res.ok || !(res.headers.get('Content-Type') || '').includes('event-stream')) {
      let msg = `The question could not be asked (HTTP ${res.status}).`;
      try { msg = (await res.json()).error || msg; } catch { /* not JSON */ }
      throw new Error(msg);
    }
    await readEvents(res, (name, d) => {
      if (name === 'error') { /* the question could not start: no run */
        view.settle();
        view.finished = true;
        throw new Error(d.error || 'the question could not be asked');
      }
      view.handle(name, d);
      if (name === 'run_end') {
        turn.art.scrollIntoView({ block: 'start' });
        announce(d.status === 'clarify' ? 'tabletalk asks you a question' : `Answer ready (${d.status})`);
      }
    });
    if (!view.finished) throw new Error('The answer stopped before it was complete (the server closed the stream). Ask again.');
  } catch (e) {
    view.settle();
    view.answer.setAttribute('aria-busy', 'false');
    const stopped = e.name === 'AbortError';
    turn.body.append(el('p.error', { role: 'alert' }, stopped ? 'Stopped: the question was cancelled.' : e.message));
    announce(stopped ? 'Question cancelled' : 'The question failed');
  } finally {
    clearInterval(tick);
    if (state.busy === ctl) state.busy = null;
    setBusy(false);
    loadThreads().catch(() => {});
  }
}

function setBusy(on) {
  $('send').disabled = on;
  $('stop').hidden = !on;
  $('conversation').setAttribute('aria-busy', on ? 'true' : 'false');
}

/* One line of progress per event (NULL: nothing to show for it). */
function stepItem(name, d) {
  const li = el('li.step.' + name);
  if (name === 'model_call' && d.ok === false) {
    li.append(el('strong', null, 'Model call'), ' ', el('span.bad', null, `failed: ${d.error}`));
  } else if (name === 'model_call') {
    li.append(el('strong', null, 'Model call'), ` ${ms(d.latency_ms)}`,
      (d.input_tokens !== undefined ? `, ${d.input_tokens} prompt + ${d.output_tokens ?? 0} completion tokens` : ''),
      d.tool ? `: ${d.tool}` : '');
  } else if (name === 'thought') {
    li.append(el('strong', null, 'Thought'), ' ', el('span.thought', { text: d.text || '' }));
  } else if (name === 'sql') {
    li.append(el('strong', null, 'SQL'), ' ',
      d.ok ? `${plural(d.rows ?? 0, 'row')}${d.truncated ? ' (cut)' : ''} in ${ms(d.ms)}` : el('span.bad', null, `failed: ${d.error || 'error'}`),
      el('code.step-sql', { text: d.sql || '' }));
    if (!d.ok) li.classList.add('failed');
  } else if (name === 'chart') {
    li.append(el('strong', null, 'Chart'), ' ', d.ok === false ? `failed: ${d.error || ''}` : (d.description || 'drawn'));
  } else if (name === 'queued') {
    li.append(el('strong', null, 'Queued'), ' behind another question that is using the model');
  } else if (name === 'schema') {
    const names = (d.tables || []).map((t) => (typeof t === 'string' ? t : t.name || t.table || '')).filter(Boolean);
    li.append(el('strong', null, 'Schema'), ` ${plural(names.length, 'table')} for the model${names.length ? ': ' + names.join(', ') : ''}`);
  } else if (name === 'context') {
    li.append(el('strong', null, 'Context'), ` ${d.action || ''}${d.error ? ': ' + d.error : ''}`);
  } else if (name === 'verify') {
    li.append(el('strong', null, 'Check'), ' ', d.decision || '', d.reason ? `: ${d.reason}` : '');
  } else if (name === 'warning') {
    li.append(el('strong', null, 'Warning'), ' ', el('span.bad', null, d.message || ''));
  } else {
    return null;
  }
  return li;
}

/* ---- a finished run ---------------------------------------------------------------- */

/* live: the streamed answer's element (aria-live), reused for the final text. */
function showRun(turn, run, fromHistory, live) {
  const box = el('div.run', { 'data-status': run.status || '' });
  const answerEl = (text) => {
    if (!live) return el('div.answer.final', { text, 'aria-label': 'Answer' });
    live.textContent = text;
    live.className = 'answer final';
    live.setAttribute('aria-busy', 'false');
    return live;
  };
  if (run.run_id) turn.art.dataset.run = run.run_id;
  const status = run.status;

  if (status === 'refused') {
    const why = (run.refusal && run.refusal.message) || 'writes are not allowed';
    box.append(el('div.refused', { role: 'alert' },
      el('strong', null, 'Refused. '),
      `The write was refused: ${why}. tabletalk only reads, so the database is unchanged.`));
    if (run.answer) box.append(answerEl(run.answer));
    if (run.refusal && run.refusal.sql) box.append(sqlBlock(run.refusal.sql, turn, 'Refused SQL', false));
  } else if (status === 'clarify') {
    box.append(clarifyBox(turn, run.clarification || run.answer || '', fromHistory));
  } else {
    const text = run.answer || '';
    if (text) box.append(answerEl(text));
    if (run.error) box.append(el('p.error', { role: status === 'answered' ? null : 'alert' }, `${labelOf(status)}: ${run.error}`));
  }
  const unbacked = run.unbacked_numbers || [];
  if (unbacked.length) {
    const list = unbacked.join(', ');
    const one = unbacked.length === 1;
    box.append(el('p.unverified', { role: 'note' }, el('strong', null, 'Not verified: '),
      `${list} ${one ? 'is' : 'are'} in no query result of this question; check ${one ? 'it' : 'them'} before you use ${one ? 'it' : 'them'}.`));
  }
  if (run.warning) box.append(el('p.warning', null, el('strong', null, 'Warning: '), run.warning));
  if (run.sql && status !== 'refused' && status !== 'clarify') box.append(sqlBlock(run.sql, turn, 'SQL', true));
  for (const [i, c] of (run.charts || []).entries()) box.append(chartFigure(c, i, run.run_id));
  if (run.columns && run.columns.length && status !== 'refused') {
    box.append(resultTable(run, run.truncated ? `More rows exist (cut by ${run.truncated_by || 'a limit'}); the table holds the first ${run.row_count ?? run.rows.length}.` : ''));
  }
  if (run.run_id) {
    box.append(el('p.run-meta.muted', null, button('Trace', () => openTrace(run.run_id), 'small.trace-link',
      { 'aria-label': `Trace of run ${run.run_id}` }), ` run ${run.run_id}`));
  }
  turn.body.append(box);
}

const labelOf = (s) => ({ failed: 'Failed', budget: 'Stopped by a limit', cancelled: 'Cancelled' }[s] || 'Note');

function clarifyBox(turn, question, fromHistory) {
  const box = el('div.clarify', { role: 'group', 'aria-label': 'Question for you' },
    el('p', null, el('strong', null, 'Question for you: '), el('span.clarify-q', { text: question })));
  if (fromHistory) return box;
  const input = el('textarea.reply', { rows: 2, 'aria-label': `Your answer to: ${question}` });
  const form = el('form.reply-form', null, input, el('button.primary', { type: 'submit' }, 'Reply'));
  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    const text = input.value.trim();
    if (!text || state.busy) return;
    form.replaceWith(el('p.muted', null, 'You replied: ', el('span', { text })));
    ask(text);
  });
  enterSends(input, () => form.requestSubmit());
  box.append(form);
  setTimeout(() => input.focus(), 0);
  return box;
}

/* A chart of run runId (number i + 1): the server keeps it as SVG (shown)
 * and PNG (to download) under /api/charts/RUN/N. */
function chartFigure(c, i, runId) {
  const fig = el('figure.chart');
  const url = c.file && runId ? `/api/charts/${encodeURIComponent(runId)}/${i + 1}.svg` : null;
  if (url) {
    const png = url.replace(/\.svg$/, '.png');
    fig.append(el('img', { src: url, alt: c.description || `chart ${i + 1}`, loading: 'lazy' }),
      el('figcaption', null, c.description || '', c.note ? ` (${c.note})` : '', ' ',
        el('a', { href: png, download: `chart-${i + 1}.png` }, 'Download PNG'),
        ' ', el('a', { href: url, download: `chart-${i + 1}.svg` }, 'SVG')));
  } else {
    fig.append(el('figcaption', null, `${c.description || 'chart'}: the picture could not be written${c.note ? ` (${c.note})` : ''}.`));
  }
  return fig;
}

/* ---- SQL: copy, edit, run again --------------------------------------------------------- */

function sqlBlock(sql, turn, title, runnable) {
  const code = el('pre.sql', { tabindex: 0, 'aria-label': title }, el('code', { text: sql }));
  const wrap = el('section.sql-block', { 'aria-label': title }, el('h3.sql-title', null, title), code);
  const bar = el('div.sql-actions');
  const out = el('div.sql-result');
  bar.append(button('Copy', async (ev) => {
    const ok = await copyText(current());
    ev.target.textContent = ok ? 'Copied' : 'Copy failed';
    setTimeout(() => { ev.target.textContent = 'Copy'; }, 1500);
  }, 'small'));
  let editor = null;
  const current = () => (editor ? editor.value : code.textContent);
  if (runnable) {
    const edit = button('Edit', () => {
      if (editor) return editor.focus();
      editor = el('textarea.sql-edit', { rows: Math.min(12, sql.split('\n').length + 2), 'aria-label': 'Edit the SQL', spellcheck: 'false' });
      editor.value = code.textContent;
      editor.addEventListener('keydown', (ev) => {
        if (ev.key === 'Enter' && (ev.ctrlKey || ev.metaKey)) { ev.preventDefault(); runSql(current(), out); }
      });
      code.replaceWith(editor);
      edit.hidden = true;
      editor.focus();
    }, 'small');
    bar.append(edit, button('Run again', () => runSql(current(), out), 'small.run-sql'));
  }
  wrap.append(bar, out);
  return wrap;
}

async function copyText(text) {
  try { await navigator.clipboard.writeText(text); return true; } catch { /* fall back */ }
  const t = el('textarea.offscreen', { 'aria-hidden': 'true' });
  t.value = text;
  document.body.append(t);
  t.select();
  let ok = false;
  try { ok = document.execCommand('copy'); } catch { ok = false; }
  t.remove();
  return ok;
}

async function runSql(sql, out) {
  out.replaceChildren(el('p.muted', null, 'Running…'));
  let r;
  try { r = await api('POST', '/api/sql', { sql, max_rows: 1000 }); } catch (e) {
    out.replaceChildren(el('p.error', { role: 'alert' }, `The query could not be sent: ${e.message}`));
    return;
  }
  if (r.status === 200 && r.body) {
    const b = r.body;
    out.replaceChildren(el('p.muted', { role: 'status' }, `${plural(b.row_count ?? b.rows.length, 'row')} in ${ms(b.elapsed_ms)}`),
      resultTable(b, b.truncated ? 'More rows exist; the table holds the first ones.' : ''));
    announce(`Query ran: ${plural(b.row_count ?? b.rows.length, 'row')}`);
  } else if (r.body && r.body.refused) {
    out.replaceChildren(el('div.refused', { role: 'alert' }, el('strong', null, 'Refused: '),
      `${r.body.error}. tabletalk only reads, so the database is unchanged.`));
  } else {
    out.replaceChildren(el('p.error', { role: 'alert' }, el('strong', null, 'SQL error: '), errorOf(r, 'The query')));
  }
}

/* ---- result table: sort, pages, CSV --------------------------------------------------------- */

function cellText(v) {
  if (v === null || v === undefined) return '';
  return typeof v === 'object' ? JSON.stringify(v) : String(v);
}

function compare(a, b) {
  if (a === b) return 0;
  if (a === null || a === undefined) return 1;   /* NULLs last */
  if (b === null || b === undefined) return -1;
  if (typeof a === 'number' && typeof b === 'number') return a - b;
  return String(a).localeCompare(String(b), undefined, { numeric: true });
}

/* RFC 4180: fields with a comma, quote, CR or LF are quoted, quotes doubled, CRLF between records. */
function csvField(v) {
  const s = cellText(v);
  return /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}
function toCsv(columns, rows) {
  return [columns, ...rows].map((r) => r.map(csvField).join(',')).join('\r\n') + '\r\n';
}

function resultTable(res, note) {
  const columns = res.columns || [];
  const rows = (res.rows || []).slice();
  const types = res.column_types || [];
  let order = rows.map((_, i) => i), sortCol = -1, asc = true, page = 0;
  const pages = () => Math.max(1, Math.ceil(rows.length / PAGE_ROWS));
  const thead = el('thead'), tbody = el('tbody');
  const info = el('span.page-info', { 'aria-live': 'polite' });
  const prev = button('Previous', () => { page--; draw(); }, 'small');
  const next = button('Next', () => { page++; draw(); }, 'small');
  const numeric = columns.map((_, i) => rows.length > 0 && rows.every((r) => r[i] === null || typeof r[i] === 'number'));
  const heads = columns.map((c, i) => {
    const b = button(c, () => sortBy(i), 'sort', { title: types[i] ? `${c} (${types[i]})` : c });
    return el('th' + (numeric[i] ? '.num' : ''), { scope: 'col', 'aria-sort': 'none' }, b);
  });
  thead.append(el('tr', null, heads));

  function sortBy(i) {
    asc = sortCol === i ? !asc : true;
    sortCol = i;
    order = rows.map((_, k) => k).sort((x, y) => (asc ? 1 : -1) * compare(rows[x][i], rows[y][i]) || x - y);
    heads.forEach((h, k) => h.setAttribute('aria-sort', k === i ? (asc ? 'ascending' : 'descending') : 'none'));
    page = 0;
    draw();
  }
  function draw() {
    page = Math.min(Math.max(page, 0), pages() - 1);
    tbody.replaceChildren();
    for (const k of order.slice(page * PAGE_ROWS, (page + 1) * PAGE_ROWS)) {
      tbody.append(el('tr', null, rows[k].map((v, i) =>
        el('td' + (numeric[i] ? '.num' : '') + (v === null ? '.null' : ''), { text: v === null ? 'NULL' : cellText(v) }))));
    }
    const from = rows.length ? page * PAGE_ROWS + 1 : 0;
    info.textContent = `Rows ${from}–${Math.min(rows.length, (page + 1) * PAGE_ROWS)} of ${rows.length}, page ${page + 1} of ${pages()}`;
    prev.disabled = page === 0;
    next.disabled = page >= pages() - 1;
  }
  const csv = button('Download CSV', () => {
    const blob = new Blob([toCsv(columns, order.map((k) => rows[k]))], { type: 'text/csv;charset=utf-8' });
    const a = el('a', { href: URL.createObjectURL(blob), download: 'tabletalk-result.csv' });
    document.body.append(a);
    a.click();
    a.remove();
    setTimeout(() => URL.revokeObjectURL(a.href), 10000);
  }, 'small.csv');
  draw();
  return el('section.result', { 'aria-label': 'Result rows' },
    note ? el('p.muted', null, note) : null,
    el('div.table-scroll', { tabindex: 0, role: 'region', 'aria-label': `Result table, ${plural(rows.length, 'row')}` },
      el('table', null, thead, tbody)),
    el('div.pager', null, prev, info, next, csv));
}

/* ---- trace panel --------------------------------------------------------------------------- */

async function openTrace(runId) {
  const body = $('trace-body');
  body.replaceChildren(el('p.muted', null, 'Loading…'));
  $('trace-title').textContent = `Trace of run ${runId}`;
  showDialog('trace');
  const r = await api('GET', `/api/runs/${encodeURIComponent(runId)}`);
  if (r.status !== 200 || !r.body) { body.replaceChildren(el('p.error', { role: 'alert' }, errorOf(r, 'Reading the trace'))); return; }
  const events = r.body.events || [];
  /* the stored run, drawn by the renderer of a live one */
  const start = events.find((e) => e.event === 'run_start');
  const replay = { art: el('article.turn.replay', { 'aria-label': 'The run as it happened' }), body: el('div.turn-body') };
  replay.art.append(el('p.question', null, el('span.who', null, 'You'), el('span.q-text', { text: (start && start.question) || '' })), replay.body);
  const view = runRenderer(replay, { live: false });
  for (const e of events) view.handle(e.event, e);
  view.details.open = true;
  const t0 = events.length ? Date.parse(events[0].ts) : NaN;
  const rows = events.map((e) => {
    const at = Date.parse(e.ts);
    return el('tr', null, el('td.num', { text: isNaN(at - t0) ? '' : `+${ms(at - t0)}` }),
      el('td', { text: e.event || '' }), el('td.num', { text: e.step ?? '' }), el('td', null, traceDetail(e)));
  });
  const end = events.find((e) => e.event === 'run_end');
  const tot = end && end.totals;
  body.replaceChildren(
    tot ? el('p.trace-totals', null, `${end.status}: ${ms(tot.wall_ms)} in all, ${plural(tot.llm_calls, 'model call')} (${ms(tot.llm_ms)}), ` +
      `${plural(tot.sql_calls ?? 0, 'query', 'queries')}, tokens: ${tot.prompt_tokens} prompt (${tot.cached_tokens ?? 0} cached) + ${tot.completion_tokens} completion`) : null,
    replay.art,
    el('details.trace-events', null, el('summary', null, `All ${plural(events.length, 'event')}`),
      el('div.table-scroll', { tabindex: 0, role: 'region', 'aria-label': 'Trace events' },
        el('table.trace-table', null,
          el('thead', null, el('tr', null, ['Time', 'Event', 'Step', 'Details'].map((h) => el('th', { scope: 'col' }, h)))),
          el('tbody', null, rows)))));
}

function traceDetail(e) {
  const out = [];
  const kv = (k, v) => { if (v !== undefined && v !== null && v !== '') out.push(el('span.kv', null, el('b', null, k + ' '), String(v))); };
  if (e.event === 'run_start') { kv('question', e.question); kv('model', e.model); kv('backend', e.backend); }
  else if (e.event === 'model_call') {
    kv('latency', ms(e.latency_ms)); kv('prompt tokens', e.input_tokens);
    kv('cached', e.cached_tokens); kv('completion tokens', e.output_tokens);
    kv('tool', e.tool); kv('error', e.error);
    if (e.arguments) out.push(el('code.step-sql', { text: e.arguments }));
  } else if (e.event === 'sql' || e.event === 'chart') {
    kv('ok', e.ok); kv('rows', e.rows); kv('time', ms(e.ms)); kv('chart', e.description); kv('error', e.error);
    if (e.sql) out.push(el('code.step-sql', { text: e.sql }));
  } else if (e.event === 'verify') {
    kv('decision', e.decision); kv('reason', e.reason); kv('unbacked', (e.unbacked_numbers || []).join(', '));
  } else if (e.event === 'run_end') {
    kv('status', e.status); kv('verified', e.verified); kv('error', e.error);
    if (e.sql) out.push(el('code.step-sql', { text: e.sql }));
  } else {
    for (const [k, v] of Object.entries(e)) if (!['ts', 'run_id', 'event', 'step'].includes(k)) kv(k, typeof v === 'object' ? JSON.stringify(v) : v);
  }
  return out;
}

/* ---- schema browser ------------------------------------------------------------------------ */

async function openSchema() {
  showDialog('schema');
  $('schema-search').focus();
  if (state.schema) return;
  $('schema-body').replaceChildren(el('p.muted', null, 'Loading…'));
  const r = await api('GET', '/api/schema');
  if (r.status !== 200 || !r.body) { $('schema-body').replaceChildren(el('p.error', { role: 'alert' }, errorOf(r, 'Reading the schema'))); return; }
  state.schema = r.body;
  drawSchema();
}

function fkText(fk) {
  if (!fk) return '';
  if (typeof fk === 'string') return `→ ${fk}`;
  if (Array.isArray(fk)) return fk.map(fkText).join(', ');
  return `→ ${fk.table || ''}${fk.column ? '.' + fk.column : ''}`;
}

function drawSchema() {
  const q = $('schema-search').value.trim().toLowerCase();
  const has = (...vals) => !q || vals.some((v) => v !== null && v !== undefined && String(v).toLowerCase().includes(q));
  const body = $('schema-body');
  body.replaceChildren();
  let shown = 0;
  for (const t of state.schema.tables || []) {
    const tableHit = has(t.name, t.description);
    const cols = (t.columns || []).filter((c) => tableHit || has(c.name, c.type, c.description, fkText(c.fk), ...(c.samples || [])));
    if (!tableHit && !cols.length) continue;
    shown++;
    const rows = cols.map((c) => el('tr', null,
      el('th', { scope: 'row', text: c.name }), el('td', { text: c.type || '' }),
      el('td', { text: [c.pk ? 'PK' : '', fkText(c.fk)].filter(Boolean).join(' ') }),
      el('td', { text: c.description || '' }),
      el('td.samples', { text: (c.samples || []).map(cellText).join(', ') })));
    body.append(el('details.schema-table', { open: q ? true : null },
      el('summary', null, el('strong', { text: t.name }), ` ${t.kind && t.kind !== 'table' ? t.kind + ', ' : ''}` +
        `${t.rows !== undefined && t.rows !== null ? plural(t.rows, 'row') + ', ' : ''}${plural((t.columns || []).length, 'column')}`),
      t.description ? el('p.muted', { text: t.description }) : null,
      el('div.table-scroll', null, el('table', null,
        el('thead', null, el('tr', null, ['Column', 'Type', 'Key', 'Description', 'Sample values'].map((h) => el('th', { scope: 'col' }, h)))),
        el('tbody', null, rows)))));
  }
  $('schema-count').textContent = `${plural(shown, 'table')} of ${(state.schema.tables || []).length}${q ? ` match “${q}”` : ''}`;
}

/* ---- dialogs, keyboard, phone layout ----------------------------------------------------------- */

function showDialog(id) {
  const d = $(id);
  if (!d.open) d.showModal();
}

function enterSends(textarea, send) {
  textarea.addEventListener('keydown', (ev) => {
    if (ev.key === 'Enter' && !ev.shiftKey && !ev.isComposing) { ev.preventDefault(); send(); }
  });
}

function closeThreadsOnPhone() {
  if (window.matchMedia('(max-width: 700px)').matches) {
    document.body.classList.remove('threads-open');
    $('toggle-threads').setAttribute('aria-expanded', 'false');
  }
}

async function main() {
  const form = $('ask-form'), q = $('question');
  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    const text = q.value;
    if (!text.trim() || state.busy) return;
    q.value = '';
    ask(text);
  });
  enterSends(q, () => form.requestSubmit());
  $('stop').addEventListener('click', () => state.busy && state.busy.abort());
  $('new-thread').addEventListener('click', newThread);
  $('open-schema').addEventListener('click', openSchema);
  $('schema-search').addEventListener('input', () => state.schema && drawSchema());
  for (const b of document.querySelectorAll('[data-close]')) b.addEventListener('click', () => $(b.dataset.close).close());
  for (const d of document.querySelectorAll('dialog')) {
    d.addEventListener('click', (ev) => { if (ev.target === d) d.close(); }); /* click on the backdrop */
  }
  $('toggle-threads').addEventListener('click', () => {
    const open = document.body.classList.toggle('threads-open');
    $('toggle-threads').setAttribute('aria-expanded', open ? 'true' : 'false');
    if (open) $('new-thread').focus();
  });
  if (await startSession()) {
    await loadThreads();
    q.focus();
  } else {
    $('send').disabled = true;
  }
}

main();
