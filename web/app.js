// app.js — the page of `tabletalk web`: a workbench over the HTTP API
// (docs/reference/web-api.md). Questions stream in (server-sent events over a
// POST) and are drawn as the CLI shows them; SQL typed in the editor runs
// through the same guard; every table is read on the server from the whole
// result (pages, sorting, counts, downloads); every thread, run and query has
// a URL (#/t/ID, #/r/RUN, #/q/ID) that restores it; the board (#/board)
// holds pinned answers. Everything from the model or the database is hostile
// input: it reaches the page as text nodes and attributes only (never
// innerHTML), with invisible and bidi controls made visible.
'use strict';

const PAGE_ROWS = 25;
const state = { csrf: null, thread: null, busy: null, schema: null, model: null, values: [], view: 0 };
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

const plural = (n, one, many) => `${Number(n).toLocaleString('en-US')} ${n === 1 ? one : many || one + 's'}`;
const num = (n) => Number(n).toLocaleString('en-US');
const ms = (v) => (typeof v === 'number' ? (v >= 1000 ? `${(v / 1000).toFixed(1)} s` : `${Math.round(v)} ms`) : '');
const announce = (text) => { $('status').textContent = text; };

function notice(text) {
  const n = $('notice');
  n.textContent = text;
  n.hidden = !text;
}

/* ---- untrusted text: invisible characters made visible ------------------- */

/* The code points the CLI escapes (src/util/escape.c): controls, bidi
 * overrides and isolates, zero-width and other invisible characters. Line
 * breaks and tabs stay (tables and answers keep them). */
const UNSAFE = /[\0-\x08\x0b-\x1f\x7f-\x9f\xad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200f\u2028-\u202e\u2060-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0\ufff9-\ufffb\u0600-\u0605\u06dd\u070f\u08e2\u{110bd}\u{110cd}\u{1bca0}-\u{1bca3}\u{13430}-\u{1343f}\u{1d173}-\u{1d17a}\u{e0000}-\u{e0fff}]/gu;
const PICTO = /\p{Extended_Pictographic}/u;

function ctlName(ch) {
  const c = ch.codePointAt(0);
  if (c === 13) return '\\r';
  if (c === 0) return '\\0';
  if (c < 0x20 || c === 0x7f) return '\\x' + c.toString(16).toUpperCase().padStart(2, '0');
  return `<U+${c.toString(16).toUpperCase().padStart(4, '0')}>`;
}

/* A string, or a fragment where each invisible character is a marked
 * escape (<U+202E>), as the CLI prints them. A variation selector after a
 * visible character and a joiner between emoji are kept. */
/* An answer whose values were filled in from references: each one a span
 * whose hover (and focus) says the query, row and column it came from.
 * at and length count bytes of the answer's UTF-8. */
function factTitle(f) {
  const where = f.row ? `row ${f.row}, column ${f.column}` : f.column ? `${f.aggregate}(${f.column})` : 'row count';
  return `q${f.query}, ${where} = ${JSON.stringify(f.value)}\n${f.sql || ''}`;
}
function factsAnswer(text, facts) {
  const bytes = new TextEncoder().encode(text), dec = new TextDecoder();
  const p = el('p.bound');
  let at = 0;
  for (const f of facts) {
    if (f.at < at || f.at + f.length > bytes.length) continue;
    p.append(visible(dec.decode(bytes.slice(at, f.at))));
    p.append(el('span.fact', { title: factTitle(f), tabindex: '0', 'data-query': `q${f.query}`,
      'data-row': f.row ?? '', 'data-column': f.column ?? '' }, visible(dec.decode(bytes.slice(f.at, f.at + f.length)))));
    at = f.at + f.length;
  }
  p.append(visible(dec.decode(bytes.slice(at))));
  return p;
}

function visible(text) {
  const s = text === null || text === undefined ? '' : String(text);
  if (s.search(UNSAFE) < 0) return s;
  const f = document.createDocumentFragment();
  let last = 0;
  for (const m of s.matchAll(UNSAFE)) {
    const ch = m[0], i = m.index, before = s.slice(Math.max(0, i - 2), i);
    const keep = ((ch === '\ufe0e' || ch === '\ufe0f') && before && before.slice(-1).search(UNSAFE) < 0) ||
      (ch === '\u200d' && PICTO.test(before) && PICTO.test(s.slice(i + 1, i + 3)));
    if (keep) continue;
    f.append(s.slice(last, i), el('span.ctl', { title: 'an invisible character, shown' }, ctlName(ch)));
    last = i + ch.length;
  }
  f.append(s.slice(last));
  return f;
}

/* ---- Markdown, as the CLI renders answers, into DOM nodes ------------------- */

/* **bold**, *italics*, `code`, [links](https://...) within a line. */
function inline(s) {
  const f = document.createDocumentFragment();
  const re = /`([^`]+)`|\*\*(.+?)\*\*|__(.+?)__|\*([^*\s](?:[^*]*[^*\s])?)\*|(?<![\w\\])_([^_\s](?:[^_]*[^_\s])?)_(?!\w)|\[([^\]]+)\]\(([^()\s]+)\)/g;
  let last = 0, m;
  while ((m = re.exec(s))) {
    f.append(visible(s.slice(last, m.index)));
    if (m[1] !== undefined) f.append(el('code', null, visible(m[1])));
    else if (m[2] !== undefined || m[3] !== undefined) f.append(el('strong', null, inline(m[2] ?? m[3])));
    else if (m[4] !== undefined || m[5] !== undefined) f.append(el('em', null, inline(m[4] ?? m[5])));
    else f.append(mdLink(m[6], m[7]));
    last = re.lastIndex;
  }
  f.append(visible(s.slice(last)));
  return f;
}

/* Only http and https become links, and the target is shown beside the text. */
function mdLink(text, target) {
  let u = null;
  try { u = new URL(target); } catch { u = null; }
  if (!u || (u.protocol !== 'http:' && u.protocol !== 'https:')) return visible(`${text} (${target})`);
  const f = document.createDocumentFragment();
  f.append(el('a', { href: u.href, rel: 'noopener noreferrer nofollow', target: '_blank' }, inline(text)));
  if (text !== target && text !== u.href) f.append(' (', visible(u.href), ')');
  return f;
}

function mdTable(lines) {
  const cells = (l) => l.trim().replace(/^\|/, '').replace(/\|$/, '').split(/(?<!\\)\|/).map((c) => c.trim().replace(/\\\|/g, '|'));
  const [head, ...body] = lines.map(cells);
  return el('div.table-scroll', null, el('table.md-table', null,
    el('thead', null, el('tr', null, head.map((c) => el('th', { scope: 'col' }, inline(c))))),
    el('tbody', null, body.map((r) => el('tr', null, head.map((_, i) => el('td', null, inline(r[i] || ''))))))));
}

const LIST = /^(\s*)([-*+]|\d{1,9}[.)])\s+(.*)$/;
const TABLE_ROW = /^\s*\|.*\|\s*$/;
const TABLE_RULE = /^\s*\|?\s*:?-{2,}:?\s*(\|\s*:?-{2,}:?\s*)*\|?\s*$/;

/* Paragraphs, lists, code blocks, tables and headings as elements. */
function md(text) {
  const out = document.createDocumentFragment();
  const lines = String(text || '').replace(/\r\n?/g, '\n').split('\n');
  let para = [];
  const flush = () => {
    if (!para.length) return;
    const p = el('p');
    para.forEach((l, k) => { if (k) p.append(el('br')); p.append(inline(l)); });
    out.append(p);
    para = [];
  };
  for (let i = 0; i < lines.length;) {
    const line = lines[i];
    let m;
    if ((m = /^\s*(```|~~~)/.exec(line))) {
      flush();
      const code = [];
      for (i++; i < lines.length && !lines[i].trim().startsWith(m[1]); i++) code.push(lines[i]);
      i++;
      out.append(el('pre.md-code', null, el('code', null, visible(code.join('\n')))));
    } else if (TABLE_ROW.test(line) && TABLE_RULE.test(lines[i + 1] || '')) {
      flush();
      const rows = [line];
      for (i += 2; i < lines.length && TABLE_ROW.test(lines[i]); i++) rows.push(lines[i]);
      out.append(mdTable(rows));
    } else if ((m = LIST.exec(line))) {
      flush();
      const ordered = /\d/.test(m[2]);
      const list = el(ordered ? 'ol' : 'ul', { start: ordered && parseInt(m[2], 10) !== 1 ? parseInt(m[2], 10) : null });
      while (i < lines.length && (m = LIST.exec(lines[i])) && /\d/.test(m[2]) === ordered) {
        const li = el('li', null, inline(m[3]));
        for (i++; i < lines.length && /^\s{2,}\S/.test(lines[i]) && !LIST.test(lines[i]); i++) li.append(' ', inline(lines[i].trim()));
        list.append(li);
      }
      out.append(list);
    } else if ((m = /^\s{0,3}#{1,6}\s+(.*?)\s*#*\s*$/.exec(line))) {
      flush();
      out.append(el('p.md-h', null, el('strong', null, inline(m[1]))));
      i++;
    } else {
      if (line.trim()) para.push(line);
      else flush();
      i++;
    }
  }
  flush();
  return out;
}

/* ---- the API ------------------------------------------------------------------ */

/* fetch with the CSRF header on writes; resolves with {status, body}. */
async function api(method, url, body) {
  const headers = {};
  if (method !== 'GET') headers['X-CSRF-Token'] = state.csrf || '';
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  let r;
  try {
    r = await fetch(url, { method, headers, body: body === undefined ? undefined : JSON.stringify(body),
      credentials: 'same-origin', cache: 'no-store' });
  } catch (e) {
    return { status: 0, body: { error: `the server cannot be reached (${e.message}); is tabletalk web still running?` } };
  }
  let data = null;
  if (r.status !== 204 && (r.headers.get('Content-Type') || '').includes('json')) {
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

/* ---- session and the model --------------------------------------------------- */

async function startSession() {
  const r = await api('GET', '/api/session');
  if (r.status === 401) {
    notice('This page needs the access token: open the URL that `tabletalk web` printed when it started (the one ending in ?token=...).');
    return false;
  }
  if (r.status !== 200 || !r.body) {
    notice(errorOf(r, 'Starting the session'));
    return false;
  }
  state.csrf = r.body.csrf;
  if (r.body.private) { /* the server runs in private mode: every question is private */
    const sw = document.getElementById('private');
    sw.checked = true;
    sw.disabled = true;
  }
  showModel(r.body);
  return true;
}

/* Without a model the question box says how to get one, and the page asks
 * again every few seconds: a model pulled meanwhile turns it on. */
function showModel(s) {
  const db = $('db-name');
  db.textContent = '';
  db.append(visible([s.db, s.dialect, s.model ? `model ${s.model}` : 'no model'].filter(Boolean).join(' · ')));
  db.title = s.version ? `tabletalk ${s.version}` : '';
  const had = state.model;
  state.model = s.model;
  const help = $('model-help');
  help.replaceChildren(s.model ? '' : md(s.model_help || 'No model is configured.'));
  help.hidden = !!s.model;
  $('question').disabled = !s.model;
  $('send').disabled = !s.model || !!state.busy;
  $('question').placeholder = s.model ? 'e.g. Which genres have the most tracks?' : 'Questions need a model (see below); the SQL box works now.';
  if (s.model && had === null) announce(`A model is ready: ${s.model}`);
  if (!s.model) setTimeout(async () => {
    const again = await api('GET', '/api/session');
    if (again.status === 200 && again.body) showModel(again.body);
  }, 3000);
}

/* ---- where we are: #/t/THREAD, #/r/RUN, #/q/QUERY, #/board ------------------- */

/* Changes the address without drawing again (the page already shows it). */
function go(hash, replace) {
  if (location.hash === hash) return;
  history[replace ? 'replaceState' : 'pushState'](null, '', hash);
}

/* A view drawn after an await checks that no later route replaced it. */
const stale = (view) => view !== state.view;

async function route() {
  const h = location.hash.replace(/^#/, '') || '/';
  const view = ++state.view;
  if (state.busy) state.busy.abort();
  const board = h === '/board';
  $('board').hidden = !board;
  $('conversation').hidden = board;
  $('compose').hidden = board;
  $('open-board').setAttribute('aria-current', board ? 'page' : 'false');
  notice('');
  closeThreadsOnPhone();
  let m;
  if (board) return showBoard(view);
  if ((m = /^\/t\/([\w.-]+)$/.exec(h))) return openThread(decodeURIComponent(m[1]), view);
  if ((m = /^\/r\/([\w.-]+)$/.exec(h))) return openRun(m[1], view);
  if ((m = /^\/q\/([0-9a-f]{16})$/.exec(h))) return openQuery(m[1], view);
  return newThread();
}

/* ---- threads (the sidebar) ------------------------------------------------------ */

async function loadThreads() {
  const r = await api('GET', '/api/threads');
  if (r.status !== 200 || !r.body) { notice(errorOf(r, 'Listing the threads')); return; }
  const list = $('thread-list');
  /* a title being typed survives the list's refresh (a question that ends,
   * a thread opened meanwhile): its item is kept as it is */
  const editing = list.querySelector('form.rename')?.closest('li.thread');
  list.replaceChildren();
  const threads = r.body.threads || [];
  $('threads-empty').hidden = threads.length > 0;
  for (const t of threads) list.append(editing && editing.dataset.thread === t.thread_id ? editing : threadItem(t));
}

function threadItem(t) {
  const title = t.title || t.thread_id;
  const current = t.thread_id === state.thread;
  const open = el('a.thread-open', { href: `#/t/${encodeURIComponent(t.thread_id)}`, 'aria-current': current ? 'page' : null,
    title: `${title} — ${plural(t.turns || 0, 'turn')}${t.updated ? ', ' + t.updated : ''}` }, visible(title));
  const li = el('li.thread' + (current ? '.current' : ''), { 'data-thread': t.thread_id }, open,
    el('span.thread-actions', null,
      button('Rename', () => renameThread(li, t), 'small', { 'aria-label': `Rename thread ${title}` }),
      button('Delete', () => deleteThread(t), 'small.danger', { 'aria-label': `Delete thread ${title}` })));
  return li;
}

/* An inline form: a field, Save and Cancel; Enter saves, Escape cancels. */
function renameForm(value, onSave, onCancel) {
  const input = el('input', { type: 'text', value: value || '', 'aria-label': 'New title', maxlength: 200 });
  const form = el('form.rename', null, input, el('button.small', { type: 'submit' }, 'Save'), button('Cancel', onCancel, 'small'));
  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    const title = input.value.trim();
    if (title) onSave(title); else input.focus();
  });
  input.addEventListener('keydown', (ev) => { if (ev.key === 'Escape') onCancel(); });
  setTimeout(() => { input.focus(); input.select(); }, 0);
  return form;
}

function renameThread(li, t) {
  /* the form goes before the list is read again, which keeps an open one */
  const done = () => li.querySelector('form.rename')?.remove();
  li.replaceChildren(renameForm(t.title, async (title) => {
    const r = await api('PATCH', `/api/threads/${encodeURIComponent(t.thread_id)}`, { title });
    if (r.status >= 300) notice(errorOf(r, 'Renaming the thread'));
    else announce(`Thread renamed to ${title}`);
    done();
    await loadThreads();
    document.querySelector(`li.thread[data-thread="${CSS.escape(t.thread_id)}"] .thread-open`)?.focus();
  }, () => { done(); loadThreads(); }));
}

async function deleteThread(t) {
  if (!window.confirm(`Delete the thread "${t.title || t.thread_id}"? Its turns are forgotten (traces stay).`)) return;
  const r = await api('DELETE', `/api/threads/${encodeURIComponent(t.thread_id)}`);
  if (r.status >= 300) { notice(errorOf(r, 'Deleting the thread')); return; }
  announce('Thread deleted');
  if (state.thread === t.thread_id) {
    go('#/', true);
    newThread();
  } else {
    await loadThreads();
  }
}

function newThread() {
  setThread(null);
  $('conversation').replaceChildren();
  for (const li of document.querySelectorAll('li.thread')) {
    li.classList.remove('current');
    li.querySelector('.thread-open')?.removeAttribute('aria-current');
  }
  loadThreads();
  $('question').disabled ? $('sql').focus() : $('question').focus();
}

/* A thread restored: each turn from its run's trace (question, steps,
 * answer, SQL, chart), its table read again. */
async function openThread(id, view) {
  const r = await api('GET', `/api/threads/${encodeURIComponent(id)}`);
  if (stale(view)) return;
  if (r.status !== 200 || !r.body) { newThread(); notice(errorOf(r, 'Opening the thread')); return; }
  setThread(r.body.thread_id || id);
  const conv = $('conversation');
  conv.replaceChildren();
  const turns = r.body.turns || [];
  const traces = await Promise.all(turns.map((t) => (t.run_id ? api('GET', `/api/runs/${encodeURIComponent(t.run_id)}`) : null)));
  if (stale(view)) return;
  for (const [i, turn] of turns.entries()) {
    /* a clarification left unanswered at the end of the thread can still be answered */
    const open = i === turns.length - 1 && turn.status === 'clarify';
    const tr = traces[i];
    if (tr && tr.status === 200 && tr.body) drawStoredRun(tr.body.events || [], turn.question, !open);
    else {
      const t = newTurn(turn.question || '');
      showRun(t, { status: turn.status, answer: turn.answer, sql: turn.sql, run_id: turn.run_id,
        clarification: turn.status === 'clarify' ? turn.answer || turn.summary : null }, { restored: true, closed: !open });
    }
  }
  announce(`Thread ${r.body.title || id} opened, ${plural(turns.length, 'turn')}`);
  await loadThreads();
  $('question').focus();
}

/* One run alone, from its trace. */
async function openRun(runId, view) {
  const r = await api('GET', `/api/runs/${encodeURIComponent(runId)}`);
  if (stale(view)) return;
  $('conversation').replaceChildren();
  if (r.status !== 200 || !r.body) { notice(errorOf(r, 'Opening the run')); return; }
  const events = r.body.events || [];
  const end = events.find((e) => e.event === 'run_end');
  setThread(end && end.thread_id);
  drawStoredRun(events, null, true);
  announce(`Run ${runId} opened`);
  loadThreads();
}

/* Draws a stored run with the live renderer; its table is read again. */
function drawStoredRun(events, question, closed) {
  const start = events.find((e) => e.event === 'run_start');
  const turn = newTurn(question || (start && start.question) || '');
  const view = runRenderer(turn, { live: false, closed });
  for (const e of events) view.handle(e.event, e);
  if (!view.finished) turn.body.append(el('p.error', null, 'This run has no end in its trace (it was stopped while it ran).'));
  return turn;
}

function setThread(id) {
  state.thread = id || null;
  $('thread-state').textContent = id ? `Follow-ups go to thread ${id}.` : '';
}

/* ---- asking ---------------------------------------------------------------------- */

/* A turn: the question, then the run's progress and result. */
function newTurn(question, kind) {
  const body = el('div.turn-body');
  const art = el('article.turn' + (kind ? '.' + kind : ''), { 'aria-label': `${kind ? 'Query' : 'Question'}: ${question}` },
    el('p.question', null, el('span.who', null, kind ? 'SQL' : 'You'), el('span.q-text', null, visible(question))), body);
  $('conversation').append(art);
  return { art, body, question };
}

/* One renderer for the events of a question (docs/reference/events.md):
 * the live stream of /api/ask and a stored run's trace (/api/runs/ID) go
 * through the same function, so a run looks the same either way. */
function runRenderer(turn, { live = true, t0 = performance.now(), closed = true, trace = false } = {}) {
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
      answer.append(visible(d.piece || ''));
    } else if (name === 'text_restart') {
      answer.replaceChildren();
    } else if (name === 'run_end') {
      r.settle();
      r.finished = true;
      answer.remove();
      details.open = false;
      showRun(turn, d, { restored: !live, closed, live: live ? answer : null, trace });
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
  if (!question || state.busy || !state.model) return;
  notice('');
  const turn = newTurn(question);
  const t0 = performance.now();
  const wasThread = state.thread;
  const view = runRenderer(turn, { live: true, t0, closed: false });
  turn.art.scrollIntoView({ block: 'end' });
  const ctl = new AbortController();
  state.busy = ctl;
  setBusy(true);
  const tick = setInterval(() => { view.clock.textContent = `${ms(performance.now() - t0)} so far`; }, 200);
  try {
    const res = await fetch('/api/ask', {
      method: 'POST', signal: ctl.signal, credentials: 'same-origin',
      headers: { 'Content-Type': 'application/json', 'X-CSRF-Token': state.csrf || '', Accept: 'text/event-stream' },
      body: JSON.stringify({ question, thread_id: state.thread, private: document.getElementById('private').checked }),
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
      if (name === 'run_start' && d.thread) go(`#/t/${encodeURIComponent(d.thread)}`, location.hash.startsWith('#/t/'));
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
    if (!wasThread && !view.finished) { go('#/', true); setThread(null); } /* nothing of a new thread was saved */
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
  $('send').disabled = on || !state.model;
  $('stop').hidden = !on;
  $('conversation').setAttribute('aria-busy', on ? 'true' : 'false');
}

/* One line of progress per event (NULL: nothing to show for it). */
function stepItem(name, d) {
  const li = el('li.step.' + name);
  if (name === 'model_call' && d.ok === false) {
    li.append(el('strong', null, 'Model call'), ' ', el('span.bad', null, visible(`failed: ${d.error}`)));
  } else if (name === 'model_call') {
    li.append(el('strong', null, 'Model call'), ` ${ms(d.latency_ms)}`,
      (d.input_tokens !== undefined ? `, ${d.input_tokens} prompt + ${d.output_tokens ?? 0} completion tokens` : ''),
      d.tool ? `: ${d.tool}` : '');
  } else if (name === 'thought') {
    li.append(el('strong', null, 'Thought'), ' ', el('span.thought', null, visible(d.text || '')));
  } else if (name === 'sql') {
    li.append(el('strong', null, 'SQL'), ' ',
      d.ok ? `${plural(d.rows ?? 0, 'row')}${d.truncated ? ' (cut)' : ''} in ${ms(d.ms)}` : el('span.bad', null, visible(`failed: ${d.error || 'error'}`)),
      el('code.step-sql', null, visible(d.sql || '')));
    if (!d.ok) li.classList.add('failed');
  } else if (name === 'chart') {
    li.append(el('strong', null, 'Chart'), ' ', visible(d.ok === false ? `failed: ${d.error || ''}` : (d.description || 'drawn')));
  } else if (name === 'queued') {
    li.append(el('strong', null, 'Queued'), ' behind another question that is using the model');
  } else if (name === 'schema') {
    const names = (d.tables || []).map((t) => (typeof t === 'string' ? t : t.name || t.table || '')).filter(Boolean);
    li.append(el('strong', null, 'Schema'), ' ', visible(`${plural(names.length, 'table')} for the model${names.length ? ': ' + names.join(', ') : ''}`));
  } else if (name === 'context') {
    li.append(el('strong', null, 'Context'), ' ', visible(`${d.action || ''}${d.error ? ': ' + d.error : ''}`));
  } else if (name === 'verify') {
    li.append(el('strong', null, 'Check'), ' ', visible(`${d.decision || ''}${d.reason ? ': ' + d.reason : ''}`));
  } else if (name === 'warning') {
    li.append(el('strong', null, 'Warning'), ' ', el('span.bad', null, visible(d.message || '')));
  } else {
    return null;
  }
  return li;
}

/* ---- a finished run ---------------------------------------------------------------- */

/* o.live: the streamed answer's element (aria-live), reused for the final
 * text; o.restored: drawn again later (its table is checked for changes);
 * o.closed: a clarification can no longer be answered here. */
function showRun(turn, run, o = {}) {
  const box = el('div.run', { 'data-status': run.status || '' });
  const answerEl = (text) => {
    const a = o.live || el('div', { 'aria-label': 'Answer' });
    a.className = 'answer final';
    a.setAttribute('aria-busy', 'false');
    a.replaceChildren((run.facts || []).length ? factsAnswer(text, run.facts) : md(text));
    return a;
  };
  if (run.run_id) turn.art.dataset.run = run.run_id;
  const status = run.status;
  if (status === 'refused' && run.refusal && !run.refusal.sql && run.private) {
    box.append(el('div.refused', { role: 'alert' }, el('strong', null, 'Private mode. '), visible(run.answer || '')));
  } else if (status === 'refused') {
    const why = (run.refusal && run.refusal.message) || 'writes are not allowed';
    box.append(el('div.refused', { role: 'alert' }, el('strong', null, 'Refused. '),
      visible(`The write was refused: ${why}. tabletalk only reads, so the database is unchanged.`)));
    if (run.answer) box.append(answerEl(run.answer));
    if (run.refusal && run.refusal.sql) box.append(sqlBlock(run.refusal.sql, 'Refused SQL', null));
  } else if (status === 'clarify') {
    box.append(clarifyBox(run.clarification || run.answer || '', o.closed));
  } else {
    if (run.answer) box.append(answerEl(run.answer));
    if (run.error) box.append(el('p.error', { role: status === 'answered' ? null : 'alert' }, visible(`${labelOf(status)}: ${run.error}`)));
  }
  const unbacked = run.unbacked_numbers || [];
  if (unbacked.length) {
    const one = unbacked.length === 1;
    box.append(el('p.unverified', { role: 'note' }, el('strong', null, 'Not verified: '),
      visible(`${unbacked.join(', ')} ${one ? 'is' : 'are'} in no query result of this question; check ${one ? 'it' : 'them'} before you use ${one ? 'it' : 'them'}.`)));
  }
  if (run.warning) box.append(el('p.warning', null, el('strong', null, 'Warning: '), visible(run.warning)));
  const charts = run.charts || [];
  const shows = run.sql && status !== 'refused' && status !== 'clarify';
  const pin = shows ? { title: turn.question || 'Pinned answer', sql: (charts[0] && charts[0].sql) || run.sql,
    chart: (charts[0] && charts[0].spec) || null, question: turn.question || null, run_id: run.run_id || null } : null;
  if (shows) box.append(sqlBlock(run.sql, 'SQL', pin));
  for (const [i, c] of charts.entries()) box.append(chartFigure(c, i, run.run_id));
  if (shows && !o.trace) box.append(resultBox(run.sql, { stored: run, runId: run.run_id, check: o.restored }));
  if (run.run_id) {
    box.append(el('p.run-meta.muted', null,
      button('Trace', () => openTrace(run.run_id), 'small.trace-link', { 'aria-label': `Trace of run ${run.run_id}` }), ' ',
      el('a.permalink', { href: `#/r/${encodeURIComponent(run.run_id)}`, title: 'A link to this run' }, `run ${run.run_id}`)));
  }
  turn.body.append(box);
}

const labelOf = (s) => ({ failed: 'Failed', budget: 'Stopped by a limit', cancelled: 'Cancelled' }[s] || 'Note');

function clarifyBox(question, closed) {
  const box = el('div.clarify', { role: 'group', 'aria-label': 'Question for you' },
    el('p', null, el('strong', null, 'Question for you: '), el('span.clarify-q', null, visible(question))));
  if (closed) return box;
  const input = el('textarea.reply', { rows: 2, 'aria-label': `Your answer to: ${question}` });
  const form = el('form.reply-form', null, input, el('button.primary', { type: 'submit' }, 'Reply'));
  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    const text = input.value.trim();
    if (!text || state.busy) return;
    form.replaceWith(el('p.muted', null, 'You replied: ', el('span', null, visible(text))));
    ask(text);
  });
  enterSends(input, () => form.requestSubmit());
  box.append(form);
  setTimeout(() => input.focus(), 0);
  return box;
}

/* Chart N of a run, as the server kept it (SVG shown, PNG to download); the
 * SVG follows the page's light or dark scheme by itself. */
function chartFigure(c, i, runId) {
  const fig = el('figure.chart');
  const url = c.file && runId ? `/api/charts/${encodeURIComponent(runId)}/${i + 1}.svg` : null;
  if (url) {
    const png = url.replace(/\.svg$/, '.png');
    fig.append(el('img', { src: url, alt: c.description || `chart ${i + 1}`, loading: 'lazy' }),
      el('figcaption', null, visible(c.description || ''), visible(c.note ? ` (${c.note})` : ''), ' ',
        el('a', { href: png, download: `chart-${i + 1}.png` }, 'Download PNG'),
        ' ', el('a', { href: url, download: `chart-${i + 1}.svg` }, 'SVG')));
  } else {
    fig.append(el('figcaption', null, visible(`${c.description || 'chart'}: the picture could not be written${c.note ? ` (${c.note})` : ''}.`)));
  }
  return fig;
}

/* ---- SQL blocks: copy, edit in the editor, pin ------------------------------------------- */

function sqlBlock(sql, title, pin, bare) {
  const bar = el('div.sql-actions');
  bar.append(button('Copy', async (ev) => {
    const ok = await copyText(sql);
    ev.target.textContent = ok ? 'Copied' : 'Copy failed';
    setTimeout(() => { ev.target.textContent = 'Copy'; }, 1500);
  }, 'small'));
  if (pin) {
    bar.append(button('Edit', () => { const e = $('sql'); e.value = sql; e.focus(); e.scrollIntoView({ block: 'nearest' }); }, 'small.edit-sql', { title: 'Put this SQL in the SQL box' }),
      pinButton(pin));
  }
  if (bare) return bar;
  return el('section.sql-block', { 'aria-label': title }, el('h3.sql-title', null, title),
    el('pre.sql', { tabindex: 0, 'aria-label': title }, el('code', null, visible(sql))), bar);
}

function pinButton(pin) {
  return button('Pin', async (ev) => {
    const b = ev.target;
    const r = await api('POST', '/api/pins', pin);
    if (r.status !== 201) { notice(errorOf(r, 'Pinning')); return; }
    b.textContent = 'Pinned';
    b.disabled = true;
    announce(`Pinned to the board: ${pin.title}`);
  }, 'small.pin', { title: 'Pin to the board of this database' });
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

/* ---- result tables: read on the server from the whole result ------------------------------ */

const cellText = (v) => (v === null || v === undefined ? '' : typeof v === 'object' ? JSON.stringify(v) : String(v));

/* A refusal or an SQL error, with the did-you-mean hint and what to do. */
function sqlError(r) {
  const b = r.body || {};
  if (b.refused) {
    return el('div.refused', { role: 'alert' }, el('strong', null, 'Refused: '),
      visible(`${b.error}. tabletalk only reads, so the database is unchanged.`));
  }
  return el('p.error', { role: 'alert' }, el('strong', null, r.status === 422 ? 'SQL error: ' : 'Error: '),
    visible(errorOf(r, 'The query')), b.hint ? visible(` (${b.hint})`) : '');
}

/* A result box for sql filled when its first page arrives: the table read
 * on the server; when the database cannot be read, the rows the run kept.
 * o.first: a first page already read; o.check: say whether the data changed
 * since run o.runId. */
function resultBox(sql, o = {}) {
  const box = el('section.result', { 'aria-label': 'Result rows' }, el('p.muted', null, 'Reading the rows…'));
  (async () => {
    const r = o.first ? { status: 200, body: o.first } : await api('POST', '/api/queries', { sql, history: false, limit: PAGE_ROWS });
    if (r.status === 200 && r.body) {
      box.replaceChildren(...serverTable(r.body));
      if (o.check && o.runId) dataCheck(box, o.runId);
    } else if (r.status === 503 && o.stored && o.stored.columns && o.stored.columns.length) {
      const n = (o.stored.rows || []).length;
      box.replaceChildren(el('p.warning', { role: 'note' }, visible(`The database cannot be read now (${errorOf(r, 'reading')}): these are the ${plural(n, 'row')} kept with the answer${o.stored.truncated ? ', the first of more' : ''}.`)),
        ...localTable(o.stored));
    } else {
      box.replaceChildren(sqlError(r));
    }
  })();
  return box;
}

async function dataCheck(box, runId) {
  const r = await api('GET', `/api/runs/${encodeURIComponent(runId)}/check`);
  if (r.status === 200 && r.body && r.body.changed) box.prepend(el('p.warning.changed', { role: 'note' }, visible(r.body.message)));
}

/* The header, body and pager of a table whose pages come from fetchPage;
 * t: {columns, column_types, rows, offset, more, total (null: unknown),
 * sortable, sort, desc}. */
function tableView(t, fetchPage, extras) {
  const thead = el('thead'), tbody = el('tbody');
  const info = el('span.page-info', { 'aria-live': 'polite' });
  const prev = button('Previous', () => load(t.offset - PAGE_ROWS), 'small.prev');
  const next = button('Next', () => load(t.offset + PAGE_ROWS), 'small.next');
  const pager = el('div.pager', null, prev, info, next);
  const heads = (t.columns || []).map((c, i) => {
    const label = visible(c);
    const type = (t.column_types || [])[i];
    const head = t.sortable ? button(label, () => load(0, i + 1), 'sort', { title: `Sort every row by ${c}${type ? ` (${type})` : ''}` }) : el('span', { title: type || null }, label);
    return el('th', { scope: 'col', 'aria-sort': 'none' }, head);
  });
  thead.append(el('tr', null, heads));
  async function load(offset, sortCol) {
    const sort = sortCol ? (t.sort === sortCol ? t.sort : sortCol) : t.sort;
    const desc = sortCol ? (t.sort === sortCol ? !t.desc : false) : t.desc;
    info.textContent = 'Reading…';
    const r = await fetchPage(Math.max(0, offset), sort, desc);
    if (r.status !== 200 || !r.body) { info.replaceChildren(sqlError(r)); return; }
    Object.assign(t, r.body, { sort, desc });
    draw();
    if (extras) extras(t);
  }
  function draw() {
    const rows = t.rows || [];
    const numeric = (t.columns || []).map((_, i) => rows.some((r) => typeof r[i] === 'number') && rows.every((r) => r[i] === null || typeof r[i] === 'number'));
    heads.forEach((h, k) => {
      h.setAttribute('aria-sort', t.sort === k + 1 ? (t.desc ? 'descending' : 'ascending') : 'none');
      h.classList.toggle('num', numeric[k]);
    });
    tbody.replaceChildren(...rows.map((row) => el('tr', null, row.map((v, i) =>
      el('td' + (numeric[i] ? '.num' : '') + (v === null ? '.null' : ''), null, v === null ? 'NULL' : visible(cellText(v)))))));
    const from = rows.length ? t.offset + 1 : 0, to = t.offset + rows.length;
    const of = t.total !== null && t.total !== undefined ? num(t.total) : t.more ? `more (counting…)` : num(to);
    info.textContent = `Rows ${num(from)}–${num(to)} of ${of}`;
    prev.disabled = t.offset === 0;
    next.disabled = !t.more;
    /* one page: no paging controls */
    pager.hidden = t.offset === 0 && !t.more;
  }
  draw();
  const table = el('div.table-scroll', { tabindex: 0, role: 'region', 'aria-label': 'Result table' }, el('table', null, thead, tbody));
  return { table, pager, draw, t };
}

/* A table read page by page from /api/queries/ID, with the count of every
 * row and downloads of every row in the order shown. */
function serverTable(first) {
  const id = first.id;
  const t = { ...first, total: null };
  const status = el('p.result-meta.muted', { role: 'status' });
  const dl = el('span.downloads');
  const links = () => {
    const q = t.sort ? `?sort=${t.sort}&desc=${t.desc ? 1 : 0}` : '';
    dl.replaceChildren('Download every row: ',
      el('a.csv', { href: `/api/queries/${id}/rows.csv${q}`, download: `tabletalk-${id}.csv` }, 'CSV'), ' ',
      el('a.json', { href: `/api/queries/${id}/rows.json${q}`, download: `tabletalk-${id}.json` }, 'JSON'));
  };
  const meta = () => {
    const order = t.sort ? `, sorted by ${t.columns[t.sort - 1]} ${t.desc ? 'descending' : 'ascending'} (on the server)` : '';
    status.textContent = `${t.total !== null ? plural(t.total, 'row') : t.more ? 'Counting the rows…' : plural(t.offset + t.rows.length, 'row')}${order}; this page read in ${ms(t.elapsed_ms)}`;
    links();
  };
  const view = tableView(t, (offset, sort, desc) =>
    api('GET', `/api/queries/${id}/rows?offset=${offset}&limit=${PAGE_ROWS}&sort=${sort || 0}&desc=${desc ? 1 : 0}`), meta);
  meta();
  if (t.more) {
    api('GET', `/api/queries/${id}/count`).then((r) => {
      t.total = r.status === 200 && r.body ? r.body.row_count : null;
      if (t.total === null) status.append(el('span.bad', null, visible(` (the rows could not be counted: ${errorOf(r, 'counting')})`)));
      view.draw();
      meta();
    });
  } else {
    t.total = t.offset + t.rows.length;
    view.draw();
  }
  return [status, view.table, el('div.pager-row', null, view.pager, dl)];
}

/* The rows a run kept (the database cannot be read): paged in the page. */
function localTable(stored) {
  const all = stored.rows || [];
  const t = { columns: stored.columns, column_types: stored.column_types, rows: all.slice(0, PAGE_ROWS), offset: 0,
    more: all.length > PAGE_ROWS, total: stored.truncated ? null : all.length, sortable: false };
  const view = tableView(t, async (offset) => ({ status: 200, body: { rows: all.slice(offset, offset + PAGE_ROWS), offset, more: offset + PAGE_ROWS < all.length } }));
  return [view.table, view.pager];
}

/* ---- the SQL editor ----------------------------------------------------------------------- */

async function runEditorSql() {
  const sql = $('sql').value;
  if (!sql.trim()) { $('sql').focus(); return; }
  closeComplete();
  if (location.hash === '#/board') { go('#/'); route(); }
  const turn = newTurn(sql.trim(), 'sqlturn');
  const pending = el('p.muted', null, 'Running…');
  turn.body.append(pending);
  turn.art.scrollIntoView({ block: 'end' });
  const t0 = performance.now();
  const r = await api('POST', '/api/queries', { sql, history: true, limit: PAGE_ROWS });
  pending.remove();
  drawQueryTurn(turn, sql, r);
  if (r.status === 200 && r.body) {
    go(`#/q/${r.body.id}`);
    announce(`Query ran: first rows in ${ms(performance.now() - t0)}`);
  } else {
    announce('The query failed');
  }
}

function drawQueryTurn(turn, sql, r) {
  if (r.status === 200 && r.body) {
    const first = r.body;
    turn.art.dataset.query = first.id;
    turn.body.append(sqlBlock(sql, 'SQL', { title: sql.trim().split('\n')[0].slice(0, 120), sql, chart: null, question: null, run_id: null }, true),
      resultBox(sql, { first }),
      el('p.run-meta.muted', null, el('a.permalink', { href: `#/q/${first.id}`, title: 'A link to this query' }, `query ${first.id}`)));
  } else {
    turn.body.append(sqlError(r));
  }
}

/* #/q/ID: the query again (not added to the history: it is not typed again). */
async function openQuery(id, view) {
  const q = await api('GET', `/api/queries/${id}`);
  if (stale(view)) return;
  $('conversation').replaceChildren();
  if (q.status !== 200 || !q.body) { notice(errorOf(q, 'Opening the query')); return; }
  setThread(null);
  loadThreads();
  const sql = q.body.sql;
  $('sql').value = sql;
  const turn = newTurn(sql.trim(), 'sqlturn');
  const r = await api('POST', '/api/queries', { sql, history: false, limit: PAGE_ROWS });
  if (!stale(view)) drawQueryTurn(turn, sql, r);
}

/* Completion of table and column names from the catalog. */
const cmp = { items: [], at: -1, start: 0 };

function closeComplete() {
  cmp.items = [];
  $('sql-complete').hidden = true;
  $('sql').setAttribute('aria-expanded', 'false');
  $('sql').removeAttribute('aria-activedescendant');
}

function quoteName(n) { return /^[A-Za-z_][A-Za-z0-9_]*$/.test(n) ? n : `"${n.replace(/"/g, '""')}"`; }

/* Names for the word before the caret: after "T." the columns of table T
 * (or of the table aliased T), else tables, then columns. */
function suggest() {
  const e = $('sql');
  const before = e.value.slice(0, e.selectionStart);
  const m = /(?:([A-Za-z_][\w$]*)\.)?([A-Za-z_][\w$]*)?$/.exec(before);
  if (!state.schema || !m || (!m[1] && !m[2])) return closeComplete();
  const word = (m[2] || '').toLowerCase(), tables = state.schema.tables || [];
  let names = [];
  if (m[1]) {
    const q = m[1].toLowerCase();
    const alias = new RegExp(`\\b(?:from|join)\\s+"?([\\w$]+)"?\\s+(?:as\\s+)?${m[1].replace(/\$/g, '\\$')}\\b`, 'i').exec(e.value);
    const t = tables.find((x) => x.name.toLowerCase() === q) || (alias && tables.find((x) => x.name.toLowerCase() === alias[1].toLowerCase()));
    names = t ? t.columns.map((c) => [c.name, t.name]) : [];
  } else {
    names = tables.map((t) => [t.name, t.kind]);
    for (const t of tables) for (const c of t.columns) names.push([c.name, t.name]);
  }
  const seen = new Set();
  cmp.items = names.filter(([n]) => n.toLowerCase().startsWith(word) && n.toLowerCase() !== word && !seen.has(n) && seen.add(n)).slice(0, 8);
  cmp.start = e.selectionStart - (m[2] || '').length;
  cmp.at = cmp.items.length ? 0 : -1;
  if (!cmp.items.length || (!word && !m[1])) return closeComplete();
  drawComplete();
}

function drawComplete() {
  const list = $('sql-complete');
  list.replaceChildren(...cmp.items.map(([n, where], i) => {
    const li = el('li', { id: `cmp-${i}`, role: 'option', 'aria-selected': i === cmp.at ? 'true' : 'false' }, visible(n), el('span.muted', null, visible(` ${where}`)));
    li.addEventListener('mousedown', (ev) => { ev.preventDefault(); cmp.at = i; takeComplete(); });
    return li;
  }));
  list.hidden = false;
  $('sql').setAttribute('aria-expanded', 'true');
  $('sql').setAttribute('aria-activedescendant', `cmp-${cmp.at}`);
}

function takeComplete() {
  const e = $('sql'), name = quoteName(cmp.items[cmp.at][0]);
  e.setRangeText(name, cmp.start, e.selectionStart, 'end');
  closeComplete();
  e.focus();
}

function editorKeys(ev) {
  if (ev.key === 'Enter' && (ev.ctrlKey || ev.metaKey)) { ev.preventDefault(); runEditorSql(); return; }
  if (!cmp.items.length) return;
  if (ev.key === 'ArrowDown' || ev.key === 'ArrowUp') {
    ev.preventDefault();
    cmp.at = (cmp.at + (ev.key === 'ArrowDown' ? 1 : cmp.items.length - 1)) % cmp.items.length;
    drawComplete();
  } else if (ev.key === 'Tab' || (ev.key === 'Enter' && !ev.shiftKey)) {
    ev.preventDefault();
    takeComplete();
  } else if (ev.key === 'Escape') {
    ev.preventDefault();
    closeComplete();
  }
}

async function openHistory() {
  showDialog('history');
  const list = $('history-list');
  list.replaceChildren(el('li.muted', null, 'Loading…'));
  const r = await api('GET', '/api/queries');
  if (r.status !== 200 || !r.body) { list.replaceChildren(el('li.error', null, visible(errorOf(r, 'Reading the history')))); return; }
  const qs = r.body.queries || [];
  list.replaceChildren(...(qs.length ? qs.map((q) => el('li', null,
    button(visible(q.sql), () => { $('sql').value = q.sql; $('history').close(); $('sql').focus(); }, 'history-sql', { title: 'Put it in the SQL box' }),
    el('span.muted', null, ` ${q.last_run}${q.runs > 1 ? `, run ${q.runs} times` : ''} `),
    el('a', { href: `#/q/${q.id}` }, 'open'))) : [el('li.muted', null, 'No SQL run on this database yet.')]));
  list.querySelector('button')?.focus();
}

/* ---- the board ------------------------------------------------------------------------------ */

async function showBoard(view = state.view) {
  const r = await api('GET', '/api/pins');
  if (stale(view)) return;
  const list = $('pins');
  list.replaceChildren();
  if (r.status !== 200 || !r.body) { notice(errorOf(r, 'Reading the board')); return; }
  const pins = r.body.pins || [];
  $('board-empty').hidden = pins.length > 0;
  pins.forEach((p, i) => list.append(pinItem(p, i, pins.length)));
  announce(`Board: ${plural(pins.length, 'pinned answer')}`);
}

function pinItem(p, i, n) {
  const at = new Date().toLocaleTimeString('en-GB');
  const title = el('h3.pin-title', null, visible(p.title));
  const move = async (to) => {
    const r = await api('PATCH', `/api/pins/${p.id}`, { position: to });
    if (r.status !== 200) notice(errorOf(r, 'Moving the pin'));
    await showBoard();
    document.querySelector(`#pins li[data-pin="${p.id}"] .pin-title`)?.focus();
  };
  const li = el('li.pin-card', { 'data-pin': p.id });
  const actions = el('div.pin-actions', null,
    button('Rename', () => title.replaceWith(renameForm(p.title, async (t) => {
      const r = await api('PATCH', `/api/pins/${p.id}`, { title: t });
      if (r.status !== 200) notice(errorOf(r, 'Renaming the pin'));
      await showBoard();
    }, () => showBoard())), 'small', { 'aria-label': `Rename ${p.title}` }),
    button('Up', () => move(i - 1), 'small', { disabled: i === 0, 'aria-label': `Move ${p.title} up` }),
    button('Down', () => move(i + 1), 'small', { disabled: i === n - 1, 'aria-label': `Move ${p.title} down` }),
    button('Remove', async () => {
      if (!window.confirm(`Remove "${p.title}" from the board?`)) return;
      const r = await api('DELETE', `/api/pins/${p.id}`);
      if (r.status !== 204) notice(errorOf(r, 'Removing the pin'));
      await showBoard();
    }, 'small.danger', { 'aria-label': `Remove ${p.title}` }));
  title.tabIndex = -1;
  li.append(el('div.pin-head', null, title, actions),
    el('p.muted.pin-meta', null, visible(`Refreshed ${at}${p.question ? ` · asked: ${p.question}` : ''} `),
      p.run_id ? el('a', { href: `#/r/${encodeURIComponent(p.run_id)}` }, 'the answer') : ''));
  if (p.chart) {
    li.append(el('figure.chart', null, el('img', { src: `/api/pins/${p.id}/chart.svg?at=${Date.now()}`, alt: `chart: ${p.chart.title || p.title}` })));
  }
  const rows = resultBox(p.sql);
  li.append(p.chart ? el('details.pin-rows', null, el('summary', null, 'Rows'), rows) : rows,
    el('details.pin-sql', null, el('summary', null, 'SQL'), el('pre.sql', null, el('code', null, visible(p.sql)))));
  return li;
}

/* ---- trace panel --------------------------------------------------------------------------- */

async function openTrace(runId) {
  const body = $('trace-body');
  body.replaceChildren(el('p.muted', null, 'Loading…'));
  $('trace-title').textContent = `Trace of run ${runId}`;
  showDialog('trace');
  const r = await api('GET', `/api/runs/${encodeURIComponent(runId)}`);
  if (r.status !== 200 || !r.body) { body.replaceChildren(el('p.error', { role: 'alert' }, visible(errorOf(r, 'Reading the trace')))); return; }
  const events = r.body.events || [];
  /* the stored run, drawn by the renderer of a live one */
  const start = events.find((e) => e.event === 'run_start');
  const replay = { art: el('article.turn.replay', { 'aria-label': 'The run as it happened' }), body: el('div.turn-body') };
  replay.art.append(el('p.question', null, el('span.who', null, 'You'), el('span.q-text', null, visible((start && start.question) || ''))), replay.body);
  const view = runRenderer(replay, { live: false, trace: true });
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
  const kv = (k, v) => { if (v !== undefined && v !== null && v !== '') out.push(el('span.kv', null, el('b', null, k + ' '), visible(String(v)))); };
  const code = (s) => out.push(el('code.step-sql', null, visible(s)));
  if (e.event === 'run_start') { kv('question', e.question); kv('model', e.model); kv('backend', e.backend); }
  else if (e.event === 'model_call') {
    kv('latency', ms(e.latency_ms)); kv('prompt tokens', e.input_tokens);
    kv('cached', e.cached_tokens); kv('completion tokens', e.output_tokens);
    kv('tool', e.tool); kv('error', e.error);
    if (e.arguments) code(e.arguments);
  } else if (e.event === 'sql' || e.event === 'chart') {
    kv('ok', e.ok); kv('rows', e.rows); kv('time', ms(e.ms)); kv('chart', e.description); kv('error', e.error);
    if (e.sql) code(e.sql);
  } else if (e.event === 'verify') {
    kv('decision', e.decision); kv('reason', e.reason); kv('unbacked', (e.unbacked_numbers || []).join(', '));
  } else if (e.event === 'run_end') {
    kv('status', e.status); kv('verified', e.verified); kv('error', e.error);
    if (e.sql) code(e.sql);
  } else {
    for (const [k, v] of Object.entries(e)) if (!['ts', 'run_id', 'event', 'step'].includes(k)) kv(k, typeof v === 'object' ? JSON.stringify(v) : v);
  }
  return out;
}

/* ---- schema browser ------------------------------------------------------------------------ */

async function loadSchema() {
  if (state.schema) return true;
  const r = await api('GET', '/api/schema');
  if (r.status !== 200 || !r.body) { $('schema-body').replaceChildren(el('p.error', { role: 'alert' }, visible(errorOf(r, 'Reading the schema')))); return false; }
  state.schema = r.body;
  return true;
}

async function openSchema() {
  showDialog('schema');
  $('schema-search').focus();
  if (!state.schema) $('schema-body').replaceChildren(el('p.muted', null, 'Loading…'));
  if (await loadSchema()) drawSchema();
}

function fkText(fk) {
  if (!fk) return '';
  if (typeof fk === 'string') return `→ ${fk}`;
  if (Array.isArray(fk)) return fk.map(fkText).join(', ');
  return `→ ${fk.table || ''}${fk.column ? '.' + fk.column : ''}`;
}

/* Values of the database that hold the search (the server's value index). */
let valueTimer = null;
function searchValues() {
  clearTimeout(valueTimer);
  const q = $('schema-search').value.trim();
  state.values = [];
  if (!q) { drawSchema(); return; }
  valueTimer = setTimeout(async () => {
    const r = await api('GET', `/api/schema/values?q=${encodeURIComponent(q)}`);
    if ($('schema-search').value.trim() !== q) return;
    state.values = (r.status === 200 && r.body && r.body.matches) || [];
    drawSchema();
  }, 150);
  drawSchema();
}

function drawSchema() {
  if (!state.schema) return;
  const q = $('schema-search').value.trim().toLowerCase();
  const has = (...vals) => !q || vals.some((v) => v !== null && v !== undefined && String(v).toLowerCase().includes(q));
  const body = $('schema-body');
  body.replaceChildren();
  let shown = 0;
  for (const t of state.schema.tables || []) {
    const tableHit = has(t.name, t.description);
    const values = q ? state.values.filter((v) => v.table === t.name) : [];
    const valueCols = new Set(values.map((v) => v.column));
    const cols = (t.columns || []).filter((c) => tableHit || valueCols.has(c.name) || has(c.name, c.type, c.description, fkText(c.fk), ...(c.samples || [])));
    if (!tableHit && !cols.length) continue;
    shown++;
    const rows = cols.map((c) => {
      const found = values.filter((v) => v.column === c.name).map((v) => v.value);
      return el('tr', null,
        el('th', { scope: 'row' }, visible(c.name)), el('td', null, visible(c.type || '')),
        el('td', null, visible([c.pk ? 'PK' : '', fkText(c.fk)].filter(Boolean).join(' '))),
        el('td', null, visible(c.description || '')),
        el('td.samples', null, visible((found.length ? found : c.samples || []).slice(0, 5).map(cellText).join(', '))));
    });
    body.append(el('details.schema-table', { open: q ? true : null },
      el('summary', null, el('strong', null, visible(t.name)), ` ${t.kind && t.kind !== 'table' ? t.kind + ', ' : ''}` +
        `${t.rows !== undefined && t.rows !== null ? plural(t.rows, 'row') + ', ' : ''}${plural((t.columns || []).length, 'column')}`,
        values.length ? el('span.value-hit', null, visible(` · values: ${values.slice(0, 3).map((v) => `'${v.value}' (${v.column})`).join(', ')}`)) : ''),
      t.description ? el('p.muted', null, visible(t.description)) : null,
      el('div.table-scroll', null, el('table', null,
        el('thead', null, el('tr', null, ['Column', 'Type', 'Key', 'Description', q && values.length ? 'Values found' : 'Sample values'].map((h) => el('th', { scope: 'col' }, h)))),
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
  const form = $('ask-form'), q = $('question'), sql = $('sql');
  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    const text = q.value;
    if (!text.trim() || state.busy || !state.model) return;
    q.value = '';
    ask(text);
  });
  enterSends(q, () => form.requestSubmit());
  $('sql-form').addEventListener('submit', (ev) => { ev.preventDefault(); runEditorSql(); });
  sql.addEventListener('keydown', editorKeys);
  sql.addEventListener('input', () => loadSchema().then(suggest));
  sql.addEventListener('blur', () => setTimeout(closeComplete, 150));
  $('open-history').addEventListener('click', openHistory);
  $('stop').addEventListener('click', () => state.busy && state.busy.abort());
  $('open-schema').addEventListener('click', openSchema);
  $('schema-search').addEventListener('input', () => state.schema && searchValues());
  for (const b of document.querySelectorAll('[data-close]')) b.addEventListener('click', () => $(b.dataset.close).close());
  for (const d of document.querySelectorAll('dialog')) {
    d.addEventListener('click', (ev) => { if (ev.target === d) d.close(); }); /* click on the backdrop */
  }
  $('toggle-threads').addEventListener('click', () => {
    const open = document.body.classList.toggle('threads-open');
    $('toggle-threads').setAttribute('aria-expanded', open ? 'true' : 'false');
    if (open) $('new-thread').focus();
  });
  window.addEventListener('hashchange', route);
  /* New thread when the address is already #/: no hashchange comes */
  $('new-thread').addEventListener('click', (ev) => { if (location.hash === '#/') { ev.preventDefault(); route(); } });
  if (await startSession()) {
    await route();
  } else {
    $('send').disabled = true;
    $('run-sql').disabled = true;
  }
}

main();
