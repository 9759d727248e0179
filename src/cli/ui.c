/* ui.c — how a question looks on the command line: a progress line per step
 * on stderr ("llm -> run_sql (1385 ms, 2632+54 tok)", "sql SELECT ... (3 rows,
 * 5 ms)"), a spinner while the model thinks, the answer as it streams, then a
 * box with the answer and the SQL (plain text when not a terminal) and one
 * summary line. Everything the model or the database wrote is escaped before
 * it reaches the terminal. */
#include "cli/cli.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

struct tt_ui {
  bool quiet, json;
  bool preview;     /* chart previews on a terminal */
  tt_term err, out;
  volatile sig_atomic_t *cancel;
  pthread_mutex_t mu;
  pthread_t spinner;
  bool spinner_started, stop, waiting, spin_shown;
  double wait_start;
  bool stream_ok;   /* show the answer on stdout as it is written */
  tt_buf streamed;  /* the text shown so far (escaped), to erase it later */
};

static const char *const tt_spin_frames[] = {"⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"};

static void tt_ui_clear_spinner(tt_ui *ui) {
  if (!ui->spin_shown) return;
  fputs("\r\033[K", stderr);
  fflush(stderr);
  ui->spin_shown = false;
}

static void *tt_ui_spin(void *arg) {
  tt_ui *ui = arg;
  for (unsigned frame = 0;; frame++) {
    struct timespec ts = {0, 100 * 1000 * 1000};
    nanosleep(&ts, NULL);
    pthread_mutex_lock(&ui->mu);
    if (ui->stop) {
      pthread_mutex_unlock(&ui->mu);
      break;
    }
    if (ui->waiting && ui->streamed.len == 0) {
      double s = (tt_now_ms() - ui->wait_start) / 1000.0;
      fprintf(stderr, "\r\033[K%s%s waiting for the model… %.1f s%s",
              tt_term_dim(&ui->err), tt_spin_frames[frame % 10], s, tt_term_reset(&ui->err));
      fflush(stderr);
      ui->spin_shown = true;
    }
    pthread_mutex_unlock(&ui->mu);
  }
  return NULL;
}

tt_ui *tt_ui_new(bool quiet, bool json, volatile sig_atomic_t *cancel) {
  tt_ui *ui = tt_xcalloc(1, sizeof *ui);
  ui->quiet = quiet;
  ui->json = json;
  ui->cancel = cancel;
  ui->err = tt_term_probe(stderr);
  ui->out = tt_term_probe(stdout);
  ui->stream_ok = ui->out.tty && !json && !quiet;
  ui->preview = true;
  pthread_mutex_init(&ui->mu, NULL);
  if (ui->err.tty && !quiet && pthread_create(&ui->spinner, NULL, tt_ui_spin, ui) == 0)
    ui->spinner_started = true;
  return ui;
}

void tt_ui_set_preview(tt_ui *ui, bool on) { ui->preview = on; }

/* Rows of the terminal that the streamed text occupies. */
static size_t tt_ui_streamed_rows(const tt_ui *ui) {
  size_t rows = 0, width = ui->out.width ? ui->out.width : 80;
  const char *s = tt_buf_cstr((tt_buf *)&ui->streamed), *end = s + ui->streamed.len;
  while (s <= end) {
    const char *nl = memchr(s, '\n', (size_t)(end - s));
    size_t len = nl ? (size_t)(nl - s) : (size_t)(end - s);
    size_t w = tt_display_width(s, len);
    rows += w == 0 ? 1 : (w - 1) / width + 1;
    if (!nl) break;
    s = nl + 1;
  }
  return rows;
}

static void tt_ui_erase_streamed(tt_ui *ui) {
  if (!ui->streamed.len) return;
  size_t rows = tt_ui_streamed_rows(ui);
  if (rows > 1) fprintf(stdout, "\033[%zuA", rows - 1);
  fputs("\r\033[J", stdout);
  fflush(stdout);
  tt_buf_reset(&ui->streamed);
}

/* One progress line on stderr: a dim tag, then the escaped text cut to the
 * terminal's width. */
static void tt_ui_line(tt_ui *ui, const char *tag, const char *text) {
  if (ui->quiet) return;
  tt_ui_clear_spinner(ui);
  tt_ui_erase_streamed(ui);
  tt_buf b = TT_BUF_INIT;
  size_t max = ui->err.tty && ui->err.width > 10 ? ui->err.width - strlen(tag) - 1 : 0;
  tt_escape_opts eo = {.max_chars = max, .short_marker = true};
  tt_escape_terminal(&b, text, strlen(text), &eo);
  fprintf(stderr, "%s%s%s %s\n", tt_term_dim(&ui->err), tag, tt_term_reset(&ui->err), tt_buf_cstr(&b));
  fflush(stderr);
  tt_buf_free(&b);
}

static void tt_ui_llm_line(tt_ui *ui, const tt_event *ev) {
  tt_buf b = TT_BUF_INIT;
  if (ev->reply) {
    const tt_llm_reply *r = ev->reply;
    tt_buf_printf(&b, "-> %s (%.0f ms, %ld+%ld tok", r->is_tool ? r->tool_name : "text",
                  r->latency_ms, r->usage.prompt, r->usage.completion);
    if (r->usage.cached) tt_buf_printf(&b, ", %ld cached", r->usage.cached);
    if (r->attempts > 1) tt_buf_printf(&b, ", %d attempts", r->attempts);
    tt_buf_puts(&b, ")");
  } else {
    tt_buf_printf(&b, "!! %s", ev->llm_error->message);
  }
  tt_ui_line(ui, "llm", tt_buf_cstr(&b));
  tt_buf_free(&b);
}

static void tt_ui_tool_line(tt_ui *ui, const tt_event *ev) {
  tt_buf b = TT_BUF_INIT;
  if (ev->tool && strcmp(ev->tool, "run_sql") == 0 && ev->sql) {
    /* the SQL on one line */
    for (const char *p = ev->sql; *p; p++) {
      if (*p == '\n' || *p == '\t' || *p == '\r') {
        if (b.len && b.data[b.len - 1] != ' ') tt_buf_putc(&b, ' ');
      } else if (!(*p == ' ' && b.len && b.data[b.len - 1] == ' ')) {
        tt_buf_putc(&b, *p);
      }
    }
    if (ev->ok)
      tt_buf_printf(&b, " (%ld row%s%s, %.0f ms)", ev->rows, ev->rows == 1 ? "" : "s",
                    ev->truncated ? ", cut" : "", ev->ms);
    else
      tt_buf_printf(&b, " -- %s", ev->error ? ev->error : "failed");
    tt_ui_line(ui, "sql", tt_buf_cstr(&b));
  } else if (ev->tool && strcmp(ev->tool, "make_chart") == 0 && (ev->ok || ev->chart)) {
    tt_buf_printf(&b, "%s%s%s", ev->chart ? ev->chart : "", ev->chart_file ? " -> " : "",
                  ev->chart_file ? ev->chart_file : "");
    tt_ui_line(ui, "chart", tt_buf_cstr(&b));
  } else if (ev->tool && strcmp(ev->tool, "make_chart") == 0) {
    tt_buf_printf(&b, "!! %s", ev->error ? ev->error : "failed");
    tt_ui_line(ui, "chart", tt_buf_cstr(&b));
  } else if (!ev->ok) {
    tt_buf_printf(&b, "!! unusable tool call: %s", ev->error ? ev->error : "?");
    tt_ui_line(ui, "llm", tt_buf_cstr(&b));
  }
  tt_buf_free(&b);
}

static void tt_ui_event(void *ud, const tt_event *ev) {
  tt_ui *ui = ud;
  pthread_mutex_lock(&ui->mu);
  switch (ev->kind) {
  case TT_EV_LLM_WAIT:
    ui->waiting = true;
    ui->wait_start = tt_now_ms();
    break;
  case TT_EV_LLM_CALL:
    ui->waiting = false;
    tt_ui_llm_line(ui, ev);
    break;
  case TT_EV_TOOL_CALL:
    tt_ui_tool_line(ui, ev);
    break;
  case TT_EV_VERIFY:
    if (strcmp(ev->decision, "push_back") == 0)
      tt_ui_line(ui, "check", "the answer states numbers no query produced; asking the model to query");
    else if (strcmp(ev->decision, "accept_unverified") == 0)
      tt_ui_line(ui, "check", "the answer's numbers are still not backed by a query");
    break;
  }
  pthread_mutex_unlock(&ui->mu);
}

static void tt_ui_text(void *ud, const char *piece, size_t n) {
  tt_ui *ui = ud;
  if (!ui->stream_ok) return;
  pthread_mutex_lock(&ui->mu);
  tt_ui_clear_spinner(ui);
  tt_buf shown = TT_BUF_INIT;
  const char *end = piece + n;
  for (const char *p = piece; p < end;) { /* newlines stay real, the rest is escaped */
    const char *nl = memchr(p, '\n', (size_t)(end - p));
    size_t len = nl ? (size_t)(nl - p) : (size_t)(end - p);
    tt_escape_terminal(&shown, p, len, NULL);
    if (!nl) break;
    tt_buf_putc(&shown, '\n');
    p = nl + 1;
  }
  fwrite(shown.data ? shown.data : "", 1, shown.len, stdout);
  fflush(stdout);
  tt_buf_append(&ui->streamed, shown.data ? shown.data : "", shown.len);
  tt_buf_free(&shown);
  pthread_mutex_unlock(&ui->mu);
}

static void tt_ui_restart(void *ud) {
  tt_ui *ui = ud;
  pthread_mutex_lock(&ui->mu);
  tt_ui_erase_streamed(ui);
  pthread_mutex_unlock(&ui->mu);
}

void tt_ui_hooks(tt_ui *ui, tt_agent_hooks *out) {
  *out = (tt_agent_hooks){.on_event = tt_ui_event, .on_text = tt_ui_text,
                          .on_text_restart = tt_ui_restart, .ud = ui, .cancel = ui->cancel};
}

void tt_ui_done(tt_ui *ui) {
  pthread_mutex_lock(&ui->mu);
  ui->waiting = false;
  tt_ui_clear_spinner(ui);
  tt_ui_erase_streamed(ui);
  pthread_mutex_unlock(&ui->mu);
}

void tt_ui_free(tt_ui *ui) {
  if (!ui) return;
  if (ui->spinner_started) {
    pthread_mutex_lock(&ui->mu);
    ui->stop = true;
    pthread_mutex_unlock(&ui->mu);
    pthread_join(ui->spinner, NULL);
  }
  tt_ui_clear_spinner(ui);
  pthread_mutex_destroy(&ui->mu);
  tt_buf_free(&ui->streamed);
  free(ui);
}

/* ---- the result ------------------------------------------------------------- */

/* Word-wraps escaped text to width columns; lines are appended to out,
 * each ending in '\n'. */
static void tt_wrap(tt_buf *out, const char *text, size_t width) {
  const char *end = text + strlen(text);
  for (const char *para = text; para <= end;) {
    const char *nl = memchr(para, '\n', (size_t)(end - para));
    size_t plen = nl ? (size_t)(nl - para) : (size_t)(end - para);
    tt_buf esc = TT_BUF_INIT;
    tt_escape_terminal(&esc, para, plen, NULL);
    const char *s = tt_buf_cstr(&esc), *send = s + esc.len;
    size_t col = 0;
    while (s < send) {
      while (s < send && *s == ' ') s++;
      const char *w = s;
      while (s < send && *s != ' ') s++;
      size_t wlen = (size_t)(s - w), ww = tt_display_width(w, wlen);
      if (col && col + 1 + ww > width) {
        tt_buf_putc(out, '\n');
        col = 0;
      }
      while (ww > width) { /* a word longer than a line: cut it */
        size_t take = 0, tw = 0;
        while (take < wlen) {
          uint32_t cp;
          size_t k = tt_utf8_decode((const unsigned char *)w + take, wlen - take, &cp);
          if (!k) k = 1;
          size_t cw = tt_display_width(w + take, k);
          if (tw + cw > width) break;
          tw += cw;
          take += k;
        }
        if (!take) take = 1;
        tt_buf_append(out, w, take);
        tt_buf_putc(out, '\n');
        w += take;
        wlen -= take;
        ww = tt_display_width(w, wlen);
      }
      if (wlen) {
        if (col) {
          tt_buf_putc(out, ' ');
          col++;
        }
        tt_buf_append(out, w, wlen);
        col += ww;
      }
    }
    tt_buf_putc(out, '\n');
    tt_buf_free(&esc);
    if (!nl) break;
    para = nl + 1;
  }
}

static void tt_box_rule(tt_buf *b, const tt_term *t, const char *l, const char *title,
                        const char *r, size_t inner) {
  tt_buf_puts(b, tt_term_dim(t));
  tt_buf_puts(b, l);
  size_t used = 0;
  if (title) {
    tt_buf_printf(b, "─ %s%s%s%s ", tt_term_reset(t), tt_term_bold(t), title, tt_term_reset(t));
    tt_buf_puts(b, tt_term_dim(t));
    used = tt_display_width(title, strlen(title)) + 3;
  }
  tt_buf_repeat(b, "─", inner + 2 > used ? inner + 2 - used : 0);
  tt_buf_puts(b, r);
  tt_buf_puts(b, tt_term_reset(t));
  tt_buf_putc(b, '\n');
}

static void tt_box_body(tt_buf *b, const tt_term *t, const char *text, size_t inner) {
  tt_buf lines = TT_BUF_INIT;
  tt_wrap(&lines, text, inner);
  const char *s = tt_buf_cstr(&lines);
  while (*s) {
    const char *nl = strchr(s, '\n');
    size_t len = (size_t)(nl - s), w = tt_display_width(s, len);
    tt_buf_printf(b, "%s│%s ", tt_term_dim(t), tt_term_reset(t));
    tt_buf_append(b, s, len);
    tt_buf_repeat(b, " ", inner > w ? inner - w : 0);
    tt_buf_printf(b, " %s│%s\n", tt_term_dim(t), tt_term_reset(t));
    s = nl + 1;
  }
  tt_buf_free(&lines);
}

static void tt_print_box(const tt_term *t, const char *title, const char *text, const char *sql) {
  size_t width = t->width > 100 ? 100 : t->width < 30 ? 30 : t->width;
  size_t inner = width - 4;
  tt_buf b = TT_BUF_INIT;
  tt_box_rule(&b, t, "╭", title, "╮", inner);
  tt_box_body(&b, t, text, inner);
  if (sql) {
    tt_box_rule(&b, t, "├", "SQL", "┤", inner);
    tt_box_body(&b, t, sql, inner);
  }
  tt_box_rule(&b, t, "╰", NULL, "╯", inner);
  tt_write_all(stdout, &b);
  tt_buf_free(&b);
}

/* Text the model wrote, lines kept, everything else unsafe escaped. */
static void tt_put_lines(tt_buf *b, const char *text) {
  const char *end = text + strlen(text);
  for (const char *p = text; p <= end;) {
    const char *nl = memchr(p, '\n', (size_t)(end - p));
    size_t len = nl ? (size_t)(nl - p) : (size_t)(end - p);
    tt_escape_terminal(b, p, len, NULL);
    tt_buf_putc(b, '\n');
    if (!nl) break;
    p = nl + 1;
  }
}

static void tt_print_plain(const char *label, const char *text, const char *sql) {
  tt_buf b = TT_BUF_INIT;
  tt_buf_printf(&b, "%s:\n", label);
  tt_put_lines(&b, text);
  if (sql) {
    tt_buf_puts(&b, "\nSQL:\n");
    tt_put_lines(&b, sql);
  }
  tt_write_all(stdout, &b);
  tt_buf_free(&b);
}

/* The rows behind the answer: the first ten, as a table. */
static void tt_print_rows(const tt_term *t, const tt_result *rows) {
  const size_t show = 10;
  tt_result view = *rows;
  if (view.nrows > show) view.nrows = show;
  tt_buf b = TT_BUF_INIT;
  if (!t->tty) tt_buf_puts(&b, "\nResult:\n");
  tt_render_table(&b, &view, t);
  tt_buf_puts(&b, tt_term_dim(t));
  if (rows->nrows > show || rows->truncated)
    tt_buf_printf(&b, "first %zu of %s%zu rows; --json gives all of them", show,
                  rows->truncated ? "more than " : "", rows->nrows);
  else
    tt_buf_printf(&b, "%zu row%s", rows->nrows, rows->nrows == 1 ? "" : "s");
  tt_buf_puts(&b, tt_term_reset(t));
  tt_buf_putc(&b, '\n');
  tt_write_all(stdout, &b);
  tt_buf_free(&b);
}

/* The charts the model made: a preview on a terminal, and where the file is. */
static void tt_print_charts(const tt_ui *ui, const tt_run *run) {
  const tt_term *t = &ui->out;
  tt_buf b = TT_BUF_INIT;
  for (size_t i = 0; i < run->ncharts; i++) {
    const tt_run_chart *rc = &run->charts[i];
    tt_buf_putc(&b, '\n');
    if (t->tty && ui->preview) tt_cli_chart_preview(rc->chart, t, &b);
    tt_buf_puts(&b, tt_term_dim(t));
    tt_buf_puts(&b, t->tty ? "chart: " : "Chart: ");
    if (rc->file) tt_escape_terminal(&b, rc->file, strlen(rc->file), NULL);
    else tt_buf_puts(&b, "(not saved)");
    if (!t->tty) {
      tt_buf_puts(&b, " (");
      tt_escape_terminal(&b, rc->description, strlen(rc->description), NULL);
      tt_buf_puts(&b, ")");
    }
    tt_buf_printf(&b, "%s\n", tt_term_reset(t));
  }
  tt_write_all(stdout, &b);
  tt_buf_free(&b);
}

static void tt_print_summary(const tt_term *t, const tt_run *run, const tt_ask_result *info) {
  const tt_run_totals *x = &run->totals;
  tt_buf b = TT_BUF_INIT;
  tt_buf_puts(&b, tt_term_dim(t));
  tt_buf_printf(&b, "%d LLM call%s, %d tool call%s, ", x->llm_calls, x->llm_calls == 1 ? "" : "s",
                x->tool_calls, x->tool_calls == 1 ? "" : "s");
  tt_buf_put_grouped(&b, x->prompt_tokens);
  tt_buf_puts(&b, "+");
  tt_buf_put_grouped(&b, x->completion_tokens);
  tt_buf_puts(&b, " tokens");
  if (x->cached_tokens) {
    tt_buf_puts(&b, " (");
    tt_buf_put_grouped(&b, x->cached_tokens);
    tt_buf_puts(&b, " cached)");
  }
  tt_buf_printf(&b, ", %.1f s, run %s%s\n", x->wall_ms / 1000.0, info->run_id, tt_term_reset(t));
  tt_write_all(stderr, &b);
  tt_buf_free(&b);
}

void tt_ui_print_result(tt_ui *ui, const tt_run *run, const tt_ask_result *info,
                        const char *thread) {
  if (ui->json) {
    tt_print_run_json(run, info, thread);
    return;
  }
  const char *title = NULL;
  switch (run->status) {
  case TT_RUN_ANSWERED: title = "Answer"; break;
  case TT_RUN_CLARIFY: title = "Question for you"; break;
  case TT_RUN_BUDGET: title = "No complete answer"; break;
  default: break;
  }
  if (title && run->answer) {
    const char *sql = run->status == TT_RUN_CLARIFY ? NULL : run->sql;
    if (ui->out.tty) tt_print_box(&ui->out, title, run->answer, sql);
    else tt_print_plain(title, run->answer, sql);
    if (sql && run->rows && run->rows->nrows) tt_print_rows(&ui->out, run->rows);
  }
  if (run->status != TT_RUN_CLARIFY) tt_print_charts(ui, run);
  if (run->status == TT_RUN_ANSWERED && !run->verified && !ui->quiet)
    tt_fail(0, "note: no query backs the numbers in this answer");
  if (run->status == TT_RUN_CLARIFY && !ui->quiet)
    fprintf(stderr, "Reply with: tabletalk ask DB --thread %s \"your answer\" (or in chat)\n", thread);
  if (run->error && run->status != TT_RUN_ANSWERED && run->status != TT_RUN_CLARIFY)
    tt_fail(0, "%s", run->error);
  if (!ui->quiet) tt_print_summary(&ui->err, run, info);
}

int tt_exit_for_run(const tt_run *run) {
  switch (run->status) {
  case TT_RUN_ANSWERED:
  case TT_RUN_CLARIFY: return TT_EXIT_OK;
  case TT_RUN_CANCELLED: return 130;
  default: return TT_EXIT_FAIL;
  }
}

void tt_print_run_json(const tt_run *run, const tt_ask_result *info, const char *thread) {
  json_t *o = json_object();
  json_object_set_new(o, "status", json_string(tt_run_status_name(run->status)));
  json_object_set_new(o, "answer", run->status == TT_RUN_CLARIFY || !run->answer
                                       ? json_null()
                                       : tt_json_stringn(run->answer, strlen(run->answer)));
  json_object_set_new(o, "clarification", run->status == TT_RUN_CLARIFY && run->answer
                                              ? tt_json_stringn(run->answer, strlen(run->answer))
                                              : json_null());
  json_object_set_new(o, "sql", run->sql ? tt_json_stringn(run->sql, strlen(run->sql)) : json_null());
  if (run->rows) {
    json_t *r = tt_result_to_json(run->rows, 0);
    json_object_set(o, "columns", json_object_get(r, "columns"));
    json_object_set(o, "rows", json_object_get(r, "rows"));
    json_object_set(o, "row_count", json_object_get(r, "row_count"));
    json_object_set(o, "truncated", json_object_get(r, "truncated"));
    json_decref(r);
  } else {
    json_object_set_new(o, "columns", json_array());
    json_object_set_new(o, "rows", json_array());
    json_object_set_new(o, "row_count", json_integer(0));
    json_object_set_new(o, "truncated", json_false());
  }
  json_t *charts = json_array();
  for (size_t i = 0; i < run->ncharts; i++) {
    const tt_run_chart *rc = &run->charts[i];
    json_t *c = json_object();
    json_object_set_new(c, "file", rc->file ? tt_json_stringn(rc->file, strlen(rc->file)) : json_null());
    json_object_set_new(c, "kind", json_string(tt_chart_kind_name(tt_chart_get_kind(rc->chart))));
    json_object_set_new(c, "description", tt_json_stringn(rc->description, strlen(rc->description)));
    json_object_set_new(c, "points", json_integer((json_int_t)tt_chart_npoints(rc->chart)));
    const char *note = tt_chart_note(rc->chart);
    json_object_set_new(c, "note", note ? tt_json_stringn(note, strlen(note)) : json_null());
    json_object_set(c, "spec", rc->spec);
    json_object_set_new(c, "sql", tt_json_stringn(rc->sql, strlen(rc->sql)));
    json_array_append_new(charts, c);
  }
  json_object_set_new(o, "charts", charts);
  json_object_set_new(o, "verified", json_boolean(run->verified));
  json_object_set_new(o, "error", run->error ? tt_json_stringn(run->error, strlen(run->error)) : json_null());
  json_object_set_new(o, "run_id", json_string(info->run_id));
  json_object_set_new(o, "thread", tt_json_stringn(thread, strlen(thread)));
  json_object_set_new(o, "trace", tt_json_stringn(info->trace_path, strlen(info->trace_path)));
  const tt_run_totals *t = &run->totals;
  json_object_set_new(o, "totals",
                      json_pack("{s:i,s:i,s:I,s:I,s:I,s:f,s:f}", "llm_calls", t->llm_calls,
                                "tool_calls", t->tool_calls, "prompt_tokens",
                                (json_int_t)t->prompt_tokens, "cached_tokens",
                                (json_int_t)t->cached_tokens, "completion_tokens",
                                (json_int_t)t->completion_tokens, "wall_ms", t->wall_ms, "llm_ms",
                                t->llm_ms));
  tt_buf b = TT_BUF_INIT;
  tt_json_dump(&b, o, JSON_COMPACT | JSON_REAL_PRECISION(15));
  tt_buf_putc(&b, '\n');
  tt_write_all(stdout, &b);
  tt_buf_free(&b);
  json_decref(o);
}
