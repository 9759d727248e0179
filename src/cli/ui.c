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
  bool thinking;    /* print the model's thoughts */
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

void tt_ui_set_thinking(tt_ui *ui, bool on) { ui->thinking = on; }

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

/* The longest prefix of escaped text that fits in width columns, ending in
 * "…" when cut. */
static void tt_fit_width(tt_buf *out, const char *s, size_t n, size_t width) {
  if (tt_display_width(s, n) <= width) {
    tt_buf_append(out, s, n);
    return;
  }
  size_t i = 0, used = 0;
  while (i < n) {
    uint32_t cp;
    size_t k = tt_utf8_decode((const unsigned char *)s + i, n - i, &cp);
    if (!k) k = 1;
    size_t w = tt_display_width(s + i, k);
    if (used + w + 1 > width) break; /* room for the ellipsis */
    used += w;
    i += k;
  }
  tt_buf_append(out, s, i);
  tt_buf_puts(out, "…");
}

/* One progress line on stderr: a dim tag, then the escaped text cut so
 * that the line stays a column short of the terminal's width (a line of
 * exactly the width wraps on some terminals). */
static void tt_ui_line(tt_ui *ui, const char *tag, const char *text) {
  if (ui->quiet) return;
  tt_ui_clear_spinner(ui);
  tt_ui_erase_streamed(ui);
  tt_buf esc = TT_BUF_INIT, b = TT_BUF_INIT;
  tt_escape_terminal(&esc, text, strlen(text), NULL);
  size_t room = strlen(tag) + 2;
  if (ui->err.tty && ui->err.width > room + 8)
    tt_fit_width(&b, tt_buf_cstr(&esc), esc.len, ui->err.width - room);
  else
    tt_buf_append(&b, esc.data ? esc.data : "", esc.len);
  fprintf(stderr, "%s%s%s %s\n", tt_term_dim(&ui->err), tag, tt_term_reset(&ui->err), tt_buf_cstr(&b));
  fflush(stderr);
  tt_buf_free(&esc);
  tt_buf_free(&b);
}

/* A thought, whole: each of its lines after a dim tag, escaped (it is the
 * model's text). */
static void tt_ui_thought(tt_ui *ui, const char *text) {
  tt_ui_clear_spinner(ui);
  tt_ui_erase_streamed(ui);
  tt_buf esc = TT_BUF_INIT;
  for (const char *p = text; *p;) {
    const char *nl = strchr(p, '\n');
    size_t len = nl ? (size_t)(nl - p) : strlen(p);
    tt_buf_reset(&esc);
    tt_escape_terminal(&esc, p, len, NULL);
    fprintf(stderr, "%sthink%s %s\n", tt_term_dim(&ui->err), tt_term_reset(&ui->err), tt_buf_cstr(&esc));
    if (!nl) break;
    p = nl + 1;
  }
  fflush(stderr);
  tt_buf_free(&esc);
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
    /* the run ends on this error, and the error is printed once, at the end */
    tt_buf_free(&b);
    return;
  }
  tt_ui_line(ui, "llm", tt_buf_cstr(&b));
  tt_buf_free(&b);
}

/* An SQL step, a chart, or a tool call the agent could not use. */
static void tt_ui_tool_line(tt_ui *ui, const tt_event *ev) {
  tt_buf b = TT_BUF_INIT;
  if (ev->kind == TT_EV_SQL && ev->sql) {
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
  } else if (ev->kind == TT_EV_SQL && !ev->ok && !ev->args) {
    /* an SQL writer's reply with no query in it */
    tt_buf_printf(&b, "!! %s", ev->error ? ev->error : "no query");
    tt_ui_line(ui, "sql", tt_buf_cstr(&b));
  } else if (ev->kind == TT_EV_CHART && (ev->ok || ev->chart)) {
    tt_buf_printf(&b, "%s%s%s", ev->chart ? ev->chart : "", ev->chart_file ? " -> " : "",
                  ev->chart_file ? ev->chart_file : "");
    tt_ui_line(ui, "chart", tt_buf_cstr(&b));
  } else if (ev->kind == TT_EV_CHART) {
    tt_buf_printf(&b, "!! %s", ev->error ? ev->error : "failed");
    tt_ui_line(ui, "chart", tt_buf_cstr(&b));
  } else if (ev->kind == TT_EV_WARNING && ev->error) {
    tt_buf_printf(&b, "!! unusable tool call: %s", ev->error);
    tt_ui_line(ui, "llm", tt_buf_cstr(&b));
  } else if (ev->kind == TT_EV_WARNING) { /* beside the answer: printed with the result */
  }
  tt_buf_free(&b);
}

/* "context: 12 of 200 rows shown to fit" or "context: 2 older results
 * shortened, 1 earlier question dropped (5210 -> 3020 of 3072 tokens)" */
static void tt_ui_context_line(tt_ui *ui, const tt_event *ev) {
  tt_buf b = TT_BUF_INIT;
  if (strcmp(ev->action, "result_cut") == 0) {
    tt_buf_printf(&b, "%ld of %ld rows shown to the model to fit its context (%ld tokens)",
                  ev->rows_shown, ev->rows, ev->tokens_after);
  } else if (strcmp(ev->action, "shortened") == 0) {
    if (ev->results_shortened)
      tt_buf_printf(&b, "%d older result%s shortened", ev->results_shortened,
                    ev->results_shortened == 1 ? "" : "s");
    if (ev->turns_dropped)
      tt_buf_printf(&b, "%s%d earlier question%s dropped", b.len ? ", " : "", ev->turns_dropped,
                    ev->turns_dropped == 1 ? "" : "s");
    tt_buf_printf(&b, " to fit the model's context (%ld -> %ld of %ld tokens)", ev->tokens_before,
                  ev->tokens_after, ev->limit);
  }
  if (b.len) tt_ui_line(ui, "context", tt_buf_cstr(&b));
  tt_buf_free(&b);
}

/* The tables whose cards the model gets with the question (large schemas). */
static void tt_ui_schema_line(tt_ui *ui, const tt_event *ev) {
  tt_buf b = TT_BUF_INIT;
  size_t i;
  json_t *t;
  json_array_foreach(ev->tables, i, t) {
    tt_buf_printf(&b, "%s%s", i ? ", " : "", json_string_value(json_object_get(t, "table")));
  }
  tt_buf_printf(&b, " in full (%zu table%s, %ld tokens)", json_array_size(ev->tables),
                json_array_size(ev->tables) == 1 ? "" : "s", ev->tokens_after);
  tt_ui_line(ui, "tables", tt_buf_cstr(&b));
  tt_buf_free(&b);
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

/* The terminal's rendering of the question's events: progress lines on
 * stderr, the answer streamed on stdout; the result is printed at the end
 * (tt_ui_print_result). */
static void tt_ui_event(void *ud, const tt_event *ev, const json_t *json) {
  (void)json;
  tt_ui *ui = ud;
  if (ev->kind == TT_EV_TEXT) {
    tt_ui_text(ui, ev->text, ev->n);
    return;
  }
  if (ev->kind == TT_EV_TEXT_RESTART) {
    tt_ui_restart(ui);
    return;
  }
  pthread_mutex_lock(&ui->mu);
  switch (ev->kind) {
  case TT_EV_MODEL_WAIT:
    ui->waiting = true;
    ui->wait_start = tt_now_ms();
    break;
  case TT_EV_MODEL_CALL:
    ui->waiting = false;
    tt_ui_llm_line(ui, ev);
    break;
  case TT_EV_THOUGHT:
    if (ui->thinking && ev->text && *ev->text) tt_ui_thought(ui, ev->text);
    break;
  case TT_EV_SQL:
  case TT_EV_CHART:
  case TT_EV_WARNING:
    tt_ui_tool_line(ui, ev);
    break;
  case TT_EV_RUN_START:
  case TT_EV_CLARIFY:
  case TT_EV_ANSWER:
  case TT_EV_TEXT:
  case TT_EV_TEXT_RESTART:
  case TT_EV_RUN_END:
    break;
  case TT_EV_CONTEXT:
    tt_ui_context_line(ui, ev);
    break;
  case TT_EV_SCHEMA:
    if (ev->tables) tt_ui_schema_line(ui, ev);
    break;
  case TT_EV_QUEUED:
    tt_ui_line(ui, "waiting", "another question holds the model");
    break;
  case TT_EV_VERIFY:
    if (strcmp(ev->decision, "verified") != 0) {
      tt_buf b = TT_BUF_INIT;
      for (size_t i = 0; i < ev->nunbacked; i++) tt_buf_printf(&b, "%s%s", i ? ", " : "", ev->unbacked[i]);
      char *line = strcmp(ev->decision, "push_back") == 0
                       ? tt_xasprintf("%s in no query result; asking the model to check",
                                      tt_buf_cstr(&b))
                       : tt_xasprintf("%s still in no query result", tt_buf_cstr(&b));
      tt_ui_line(ui, "check", line);
      free(line);
      tt_buf_free(&b);
    }
    break;
  }
  pthread_mutex_unlock(&ui->mu);
}

void tt_ui_hooks(tt_ui *ui, tt_session_hooks *out) {
  *out = (tt_session_hooks){.on_event = tt_ui_event, .ud = ui, .cancel = ui->cancel};
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

/* ---- the answer box: light Markdown, SQL kept as written ------------------ */

/* Bold spans travel through wrapping as these two bytes (never in escaped
 * text, which shows control characters visibly). */
#define TT_BOLD_ON '\x01'
#define TT_BOLD_OFF '\x02'

/* Display width of escaped text that may hold the bold markers. */
static size_t tt_marked_width(const char *s, size_t n) {
  size_t w = 0, from = 0;
  for (size_t i = 0; i <= n; i++)
    if (i == n || s[i] == TT_BOLD_ON || s[i] == TT_BOLD_OFF) {
      w += tt_display_width(s + from, i - from);
      from = i + 1;
    }
  return w;
}

/* One line of Markdown as escaped text with bold markers: **x** and __x__
 * become bold, `code` loses its backticks, "# Title" is bold, and "- x" or
 * "* x" becomes "• x". *hang: the indent of the wrapped continuation. */
static void tt_md_line(tt_buf *out, const char *s, size_t n, size_t *hang) {
  size_t i = 0;
  while (i < n && s[i] == ' ') i++;
  tt_buf_append(out, s, i); /* the indent as written */
  *hang = i;
  bool heading = false;
  if (i < n && s[i] == '#') {
    size_t k = i;
    while (k < n && s[k] == '#') k++;
    if (k < n && s[k] == ' ') {
      heading = true;
      i = k + 1;
      tt_buf_putc(out, TT_BOLD_ON);
    }
  } else if (i + 1 < n && (s[i] == '-' || s[i] == '*' || s[i] == '+') && s[i + 1] == ' ') {
    tt_buf_puts(out, "• ");
    i += 2;
    *hang += 2;
  }
  bool bold = false;
  size_t from = i;
  while (i <= n) {
    bool end = i == n;
    bool strong = !end && i + 1 < n &&
                  ((s[i] == '*' && s[i + 1] == '*') || (s[i] == '_' && s[i + 1] == '_'));
    bool tick = !end && s[i] == '`';
    if (!end && !strong && !tick) {
      i++;
      continue;
    }
    tt_escape_terminal(out, s + from, i - from, NULL);
    if (end) break;
    if (strong) {
      tt_buf_putc(out, bold ? TT_BOLD_OFF : TT_BOLD_ON);
      bold = !bold;
      i += 2;
    } else {
      i++; /* a backtick: the code stays, the ticks go */
    }
    from = i;
  }
  if (bold || heading) tt_buf_putc(out, TT_BOLD_OFF);
}

/* The next piece of a line to place: a word with the spaces before it,
 * or (hard wrapping) one character. */
static const char *tt_next_piece(const char *p, const char *end, bool words) {
  if (words) {
    while (p < end && *p == ' ') p++;
    while (p < end && *p != ' ') p++;
    return p;
  }
  uint32_t cp;
  size_t k = tt_utf8_decode((const unsigned char *)p, (size_t)(end - p), &cp);
  return p + (k ? k : 1);
}

/* Appends line (escaped, with markers) wrapped to width: at spaces when
 * words, else anywhere; continuation lines start with hang spaces. */
static void tt_wrap_line(tt_buf *out, const char *line, size_t len, size_t width, size_t hang,
                         bool words) {
  if (hang * 2 > width) hang = 0;
  size_t col = 0;
  const char *p = line, *end = line + len;
  while (p < end) {
    const char *q = tt_next_piece(p, end, words);
    size_t w = tt_marked_width(p, (size_t)(q - p));
    if (col > hang && col + w > width) {
      tt_buf_putc(out, '\n');
      tt_buf_repeat(out, " ", hang);
      col = hang;
      while (words && p < q && *p == ' ') p++; /* a wrapped line starts with its word */
      w = tt_marked_width(p, (size_t)(q - p));
    }
    if (words && col + w > width) { /* longer than a line: cut it */
      const char *r = p;
      while (r < q) {
        const char *c = tt_next_piece(r, q, false);
        size_t cw = tt_marked_width(r, (size_t)(c - r));
        if (col + cw > width && col > hang) {
          tt_buf_putc(out, '\n');
          tt_buf_repeat(out, " ", hang);
          col = hang;
        }
        tt_buf_append(out, r, (size_t)(c - r));
        col += cw;
        r = c;
      }
    } else {
      tt_buf_append(out, p, (size_t)(q - p));
      col += w;
    }
    p = q;
  }
  tt_buf_putc(out, '\n');
}

/* The lines of text for a box inner columns wide: Markdown-light for the
 * answer (md), as written for SQL (indentation kept, long lines wrapped
 * with a deeper indent). */
static void tt_box_lines(tt_buf *out, const char *text, size_t inner, bool md) {
  const char *end = text + strlen(text);
  for (const char *p = text; p <= end;) {
    const char *nl = memchr(p, '\n', (size_t)(end - p));
    size_t len = nl ? (size_t)(nl - p) : (size_t)(end - p);
    if (len && p[len - 1] == '\r') len--;
    tt_buf line = TT_BUF_INIT;
    size_t hang = 0;
    if (md) {
      tt_md_line(&line, p, len, &hang);
    } else {
      tt_buf raw = TT_BUF_INIT; /* tabs as spaces: escaped they would show as \t */
      for (size_t i = 0; i < len; i++) {
        if (p[i] == '\t') tt_buf_puts(&raw, "    ");
        else tt_buf_putc(&raw, p[i]);
      }
      tt_escape_terminal(&line, raw.data ? raw.data : "", raw.len, NULL);
      tt_buf_free(&raw);
      while (hang < line.len && line.data[hang] == ' ') hang++;
      hang += 2;
    }
    tt_wrap_line(out, line.data ? line.data : "", line.len, inner, hang, true);
    tt_buf_free(&line);
    if (!nl) break;
    p = nl + 1;
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

static void tt_box_body(tt_buf *b, const tt_term *t, const char *text, size_t inner, bool md) {
  tt_buf lines = TT_BUF_INIT;
  tt_box_lines(&lines, text, inner, md);
  const char *s = tt_buf_cstr(&lines);
  bool bold = false; /* a bold span may run over a line break */
  while (*s) {
    const char *nl = strchr(s, '\n');
    size_t len = (size_t)(nl - s), w = tt_marked_width(s, len);
    tt_buf_printf(b, "%s│%s ", tt_term_dim(t), tt_term_reset(t));
    if (bold) tt_buf_puts(b, tt_term_bold(t));
    for (size_t i = 0; i < len; i++) {
      if (s[i] == TT_BOLD_ON || s[i] == TT_BOLD_OFF) {
        bold = s[i] == TT_BOLD_ON;
        tt_buf_puts(b, bold ? tt_term_bold(t) : tt_term_reset(t));
      } else {
        tt_buf_putc(b, s[i]);
      }
    }
    if (bold) tt_buf_puts(b, tt_term_reset(t));
    tt_buf_repeat(b, " ", inner > w ? inner - w : 0);
    tt_buf_printf(b, " %s│%s\n", tt_term_dim(t), tt_term_reset(t));
    s = nl + 1;
  }
  tt_buf_free(&lines);
}

static void tt_print_box(const tt_term *t, const char *title, const char *text,
                         const char *sql_title, const char *sql) {
  /* a column short of the terminal: a line of exactly its width wraps on
   * some terminals */
  size_t width = t->width > 100 ? 100 : t->width < 31 ? 30 : t->width - 1;
  size_t inner = width - 4;
  tt_buf b = TT_BUF_INIT;
  tt_box_rule(&b, t, "╭", title, "╮", inner);
  tt_box_body(&b, t, text, inner, true);
  if (sql) {
    tt_box_rule(&b, t, "├", sql_title, "┤", inner);
    tt_box_body(&b, t, sql, inner, false);
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

static void tt_print_plain(const char *label, const char *text, const char *warning,
                           const char *sql_label, const char *sql) {
  tt_buf b = TT_BUF_INIT;
  tt_buf_printf(&b, "%s:\n", label);
  tt_put_lines(&b, text);
  if (warning) tt_buf_puts(&b, warning);
  if (sql) {
    tt_buf_printf(&b, "\n%s:\n", sql_label);
    tt_put_lines(&b, sql);
  }
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
  tt_buf_printf(&b, "%d LLM call%s, %d quer%s, ", x->llm_calls, x->llm_calls == 1 ? "" : "s",
                x->sql_calls, x->sql_calls == 1 ? "y" : "ies");
  if (run->ncharts) tt_buf_printf(&b, "%zu chart%s, ", run->ncharts, run->ncharts == 1 ? "" : "s");
  tt_buf_put_grouped(&b, x->prompt_tokens);
  tt_buf_puts(&b, "+");
  tt_buf_put_grouped(&b, x->completion_tokens);
  tt_buf_puts(&b, " tokens");
  if (x->cached_tokens) {
    tt_buf_puts(&b, " (");
    tt_buf_put_grouped(&b, x->cached_tokens);
    tt_buf_puts(&b, " cached)");
  }
  tt_buf_printf(&b, ", %.1f s, run %s", x->wall_ms / 1000.0, info->run_id);
  tt_buf out = TT_BUF_INIT;
  tt_buf_puts(&out, tt_term_dim(t));
  if (t->tty && t->width > 20) /* wrapped at spaces, a column short of the edge */
    tt_wrap_line(&out, b.data, b.len, t->width - 1, 2, true);
  else
    tt_buf_printf(&out, "%s\n", tt_buf_cstr(&b));
  tt_buf_puts(&out, tt_term_reset(t));
  tt_write_all(stderr, &out);
  tt_buf_free(&b);
  tt_buf_free(&out);
}

/* The rows to show or export: the run's own when they suffice, else the
 * final query read again (when it gives the same rows again). *owned: the
 * caller frees the result. cut_note says why fewer rows than exist are
 * given, or is NULL. */
static const tt_result *tt_rows_for_output(const tt_run *run, const tt_ui_out *o, long want,
                                           bool *owned, const char **cut_note) {
  *owned = false;
  *cut_note = NULL;
  const tt_result *r = run->rows;
  if (!r->truncated || (want > 0 && (size_t)want <= r->nrows)) return r;
  if (!r->repeatable || !o || !o->db) {
    *cut_note = "the query uses the clock or random values, so it was not run again: these are "
                "the rows the answer was based on, and more exist";
    return r;
  }
  tt_db_opts more = *tt_db_get_opts(o->db);
  more.max_rows = want > 0 ? want : 100000000;
  more.max_bytes = 1L << 40;
  more.count_rows = want > 0 ? 100000000 : 0; /* to say how many exist */
  if (o->timeout_s > 0) more.timeout_s = o->timeout_s;
  tt_error err;
  tt_result *again = tt_db_query_opts(o->db, run->sql, strlen(run->sql), &more, &err);
  if (!again) {
    *cut_note = "the query could not be read again in full; these are the rows the answer was "
                "based on, and more exist";
    return r;
  }
  *owned = true;
  return again;
}

/* The rows behind the answer as a table: the first ten (or --max-rows). */
static void tt_print_rows(const tt_term *t, const tt_run *run, const tt_ui_out *o) {
  long show = o && o->max_rows > 0 ? o->max_rows : 10;
  bool owned;
  const char *note;
  const tt_result *rows = tt_rows_for_output(run, o, show, &owned, &note);
  tt_result view = *rows;
  if (view.nrows > (size_t)show) view.nrows = (size_t)show;
  tt_buf b = TT_BUF_INIT;
  if (!t->tty) tt_buf_puts(&b, "\nResult:\n");
  tt_render_table(&b, &view, t);
  tt_buf_puts(&b, tt_term_dim(t));
  if (rows->nrows > view.nrows || rows->truncated) {
    bool known = !rows->truncated || rows->total_exact;
    tt_buf_printf(&b, "first %zu of %s", view.nrows, known ? "" : "more than ");
    tt_buf_put_grouped(&b, (long long)(known ? (size_t)rows->total_rows > rows->nrows
                                                   ? (size_t)rows->total_rows : rows->nrows
                                             : rows->nrows));
    tt_buf_puts(&b, " rows; --max-rows N shows more, --format csv or --json gives all of them");
  } else {
    tt_buf_printf(&b, "%zu row%s", rows->nrows, rows->nrows == 1 ? "" : "s");
  }
  size_t cells_cut = 0;
  for (size_t i = 0; i < view.nrows && rows->cells_cut; i++)
    for (size_t c = 0; c < view.ncols; c++) cells_cut += tt_result_cell(&view, i, c)->cut > 0;
  if (cells_cut) {
    tt_buf_puts(&b, "; ");
    tt_render_cells_cut(&b, cells_cut, "the byte limit");
  }
  tt_buf_puts(&b, tt_term_reset(t));
  tt_buf_putc(&b, '\n');
  tt_write_all(stdout, &b);
  tt_buf_free(&b);
  if (owned) tt_result_free((tt_result *)rows);
}

/* The rows of the final query for pipelines (csv, tsv, json, markdown);
 * json: head's fields come first. Returns an exit code. */
static int tt_export_rows(const tt_run *run, const tt_ui_out *o, json_t *head) {
  tt_export_opts eo = {.fmt = o->format, .max_rows = o->max_rows, .json_head = head};
  bool owned;
  const char *note;
  const tt_result *rows = tt_rows_for_output(run, o, o->max_rows, &owned, &note);
  eo.cut_reason = note;
  int rc = tt_export_result(rows, &eo);
  if (owned) tt_result_free((tt_result *)rows);
  return rc;
}

/* The warning under an answer whose numbers no result backs. */
static void tt_unbacked_warning(tt_buf *b, const tt_run *run, const tt_term *t, bool md) {
  if (!run->nunbacked) return;
  tt_buf list = TT_BUF_INIT;
  for (size_t i = 0; i < run->nunbacked; i++) {
    if (i) tt_buf_puts(&list, ", ");
    tt_escape_terminal(&list, run->unbacked[i], strlen(run->unbacked[i]), NULL);
  }
  const char *on = t->color ? "\033[1;33m" : "", *off = tt_term_reset(t);
  tt_buf_printf(b, "%s%s%s: %s %s in no query result of this question; check %s before you use "
                   "%s.%s\n",
                md ? "\n> **" : on, md ? "Not verified" : "Warning: not verified", md ? "**" : "",
                tt_buf_cstr(&list), run->nunbacked == 1 ? "is" : "are",
                run->nunbacked == 1 ? "it" : "them", run->nunbacked == 1 ? "it" : "them",
                md ? "" : off);
  tt_buf_free(&list);
}

/* The answer with a marker after each value filled in from a reference
 * ("1,297[1]"), freshly allocated; NULL when it cites nothing. */
static char *tt_answer_marked(const tt_run *run) {
  if (!run->nfacts || !run->answer) return NULL;
  tt_buf b = TT_BUF_INIT;
  size_t at = 0, len = strlen(run->answer);
  for (size_t i = 0; i < run->nfacts; i++) {
    const tt_fact *f = &run->facts[i];
    if (f->at < at || f->at + f->len > len) continue; /* never out of the text */
    tt_buf_append(&b, run->answer + at, f->at + f->len - at);
    tt_buf_printf(&b, "[%zu]", i + 1);
    at = f->at + f->len;
  }
  tt_buf_puts(&b, run->answer + at);
  return tt_buf_detach(&b);
}

/* The footnote of the cells behind the markers. */
static void tt_facts_footnote(tt_buf *b, const tt_run *run, bool md) {
  if (!run->nfacts) return;
  tt_buf_puts(b, md ? "\n*Filled in from the results:*\n" : "Filled in from the results:\n");
  for (size_t i = 0; i < run->nfacts; i++) {
    const tt_fact *f = &run->facts[i];
    tt_buf line = TT_BUF_INIT;
    tt_buf_printf(&line, "%s[%zu] q%d", md ? "- " : "  ", i + 1, f->query);
    if (f->row) tt_buf_printf(&line, " row %ld, %s", f->row, f->column ? f->column : "");
    else if (f->column) tt_buf_printf(&line, " %s(%s)", f->aggregate ? f->aggregate : "", f->column);
    else tt_buf_puts(&line, " row count");
    tt_buf_puts(&line, " = ");
    char *v = f->value ? json_dumps(f->value, JSON_ENCODE_ANY | JSON_REAL_PRECISION(17)) : NULL;
    tt_buf_puts(&line, v ? v : "null");
    free(v);
    tt_escape_terminal(b, line.data, line.len, NULL);
    tt_buf_putc(b, '\n');
    tt_buf_free(&line);
  }
}

/* What a refused run says first: the write did not happen (or, in private
 * mode, why the model could not answer without values). */
static char *tt_refusal_text(const tt_run *run) {
  if (!run->refused_sql && run->answer) return tt_xstrdup(run->answer);
  return tt_xasprintf("The write was refused: %s. tabletalk only reads, so the database is "
                      "unchanged.%s%s",
                      run->refusal ? run->refusal : "writes are not allowed",
                      run->answer && *run->answer ? "\n\n" : "",
                      run->answer && *run->answer ? run->answer : "");
}

static void tt_print_markdown(const tt_run *run, const tt_ui_out *o) {
  tt_term plain = {0};
  tt_buf b = TT_BUF_INIT;
  char *refused = run->status == TT_RUN_REFUSED ? tt_refusal_text(run) : NULL;
  char *marked = refused ? NULL : tt_answer_marked(run);
  const char *text = refused ? refused : marked ? marked : run->answer ? run->answer : run->error ? run->error : "";
  if (run->status == TT_RUN_CLARIFY) tt_buf_puts(&b, "**Question for you:** ");
  tt_buf_puts(&b, text);
  tt_buf_putc(&b, '\n');
  free(marked);
  tt_facts_footnote(&b, run, true);
  tt_unbacked_warning(&b, run, &plain, true);
  const char *sql = refused ? run->refused_sql : run->status == TT_RUN_CLARIFY ? NULL : run->sql;
  if (sql) tt_buf_printf(&b, "\n```sql\n%s\n```\n", sql);
  if (sql && !refused && run->rows) tt_buf_putc(&b, '\n');
  tt_write_all(stdout, &b);
  tt_buf_free(&b);
  free(refused);
  if (sql && !refused && run->rows) tt_export_rows(run, o, NULL);
}

/* csv or tsv: the rows alone on stdout, the answer on stderr. */
static void tt_print_delimited(tt_ui *ui, const tt_run *run, const tt_ui_out *o) {
  if (!ui->quiet && run->answer) {
    char *refused = run->status == TT_RUN_REFUSED ? tt_refusal_text(run) : NULL;
    tt_buf b = TT_BUF_INIT;
    char *marked = refused ? NULL : tt_answer_marked(run);
    tt_put_lines(&b, refused ? refused : marked ? marked : run->answer);
    free(marked);
    tt_facts_footnote(&b, run, false);
    tt_unbacked_warning(&b, run, &ui->err, false);
    tt_write_all(stderr, &b);
    tt_buf_free(&b);
    free(refused);
  }
  if (run->rows && run->status != TT_RUN_CLARIFY) tt_export_rows(run, o, NULL);
}

static void tt_print_human(tt_ui *ui, const tt_run *run, const tt_ui_out *o) {
  const char *title = NULL;
  switch (run->status) {
  case TT_RUN_ANSWERED: title = "Answer"; break;
  case TT_RUN_CLARIFY: title = "Question for you"; break;
  case TT_RUN_BUDGET: title = "No complete answer"; break;
  case TT_RUN_REFUSED: title = "Refused"; break;
  default: break;
  }
  char *refused = run->status == TT_RUN_REFUSED ? tt_refusal_text(run) : NULL;
  char *marked = refused ? NULL : tt_answer_marked(run);
  const char *text = refused ? refused : marked ? marked : run->answer;
  if (title && text) {
    const char *sql = refused ? run->refused_sql : run->status == TT_RUN_CLARIFY ? NULL : run->sql;
    const char *sql_title = refused ? "Refused SQL" : "SQL";
    /* the footnote and the warning right under the answer they are about */
    tt_buf warn = TT_BUF_INIT;
    tt_facts_footnote(&warn, run, false);
    tt_unbacked_warning(&warn, run, &ui->out, false);
    if (ui->out.tty) {
      tt_print_box(&ui->out, title, text, sql_title, sql);
      tt_write_all(stdout, &warn);
    } else {
      tt_print_plain(title, text, warn.len ? tt_buf_cstr(&warn) : NULL, sql_title, sql);
    }
    tt_buf_free(&warn);
    if (!refused && sql && run->rows && run->rows->nrows) tt_print_rows(&ui->out, run, o);
  }
  free(marked);
  free(refused);
  if (run->status != TT_RUN_CLARIFY) tt_print_charts(ui, run);
}

/* s as one word for a POSIX shell: as it is when plain, else in single
 * quotes. */
static void tt_shell_word(tt_buf *b, const char *s) {
  if (*s && strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_./:=@%+-") ==
                strlen(s)) {
    tt_buf_puts(b, s);
    return;
  }
  tt_buf_putc(b, '\'');
  for (; *s; s++) {
    if (*s == '\'') tt_buf_puts(b, "'\\''");
    else tt_buf_putc(b, *s);
  }
  tt_buf_putc(b, '\'');
}

/* Where the reply to a clarifying question goes: the command to type. */
static void tt_reply_hint(const tt_ui_out *o, const char *thread) {
  if (!o || !o->reply_db) return; /* chat reads the reply itself */
  tt_buf cmd = TT_BUF_INIT, safe = TT_BUF_INIT;
  tt_buf_puts(&cmd, "Reply with: tabletalk ask ");
  tt_shell_word(&cmd, o->reply_db);
  tt_buf_puts(&cmd, " --thread ");
  tt_shell_word(&cmd, thread);
  tt_buf_puts(&cmd, " \"your answer\"\n");
  tt_escape_terminal(&safe, cmd.data, cmd.len - 1, NULL);
  tt_buf_putc(&safe, '\n');
  tt_write_all(stderr, &safe);
  tt_buf_free(&cmd);
  tt_buf_free(&safe);
}

int tt_ui_print_result(tt_ui *ui, const tt_run *run, const tt_ask_result *info, const char *thread,
                       const tt_ui_out *o) {
  tt_format fmt = o ? o->format : TT_FMT_TABLE;
  if (o && o->sql_only) {
    if (run->sql && run->status != TT_RUN_REFUSED) {
      tt_buf b = TT_BUF_INIT;
      tt_buf_printf(&b, "%s\n", run->sql);
      tt_write_all(stdout, &b);
      tt_buf_free(&b);
    } else if (run->status == TT_RUN_ANSWERED) {
      tt_fail(0, "no query ran for this question, so there is no SQL to print (the answer: %s)",
              run->answer ? run->answer : "");
      if (run->error) tt_fail(0, "%s", run->error);
      return TT_EXIT_FAIL;
    }
  } else if (fmt == TT_FMT_JSON) {
    tt_print_run_json(run, info, thread, o);
  } else if (fmt == TT_FMT_MARKDOWN) {
    tt_print_markdown(run, o);
  } else if (fmt == TT_FMT_CSV || fmt == TT_FMT_TSV) {
    tt_print_delimited(ui, run, o);
  } else {
    tt_print_human(ui, run, o);
  }
  if (run->status == TT_RUN_CLARIFY && !ui->quiet && fmt != TT_FMT_JSON) tt_reply_hint(o, thread);
  if (run->error && run->status != TT_RUN_ANSWERED && run->status != TT_RUN_CLARIFY)
    tt_fail(0, "%s", run->error);
  if (info->warning[0]) tt_fail(0, "warning: %s", info->warning);
  if (!ui->quiet) tt_print_summary(&ui->err, run, info);
  return tt_exit_for_run(run);
}

int tt_exit_for_run(const tt_run *run) {
  switch (run->status) {
  case TT_RUN_ANSWERED:
  case TT_RUN_CLARIFY: return TT_EXIT_OK;
  case TT_RUN_REFUSED: return TT_EXIT_REFUSED;
  case TT_RUN_CANCELLED: return 130;
  default: return TT_EXIT_FAIL;
  }
}

/* The run in its one shape (docs/reference/run-json.md); the rows come last,
 * streamed: all of them unless --max-rows. */
void tt_print_run_json(const tt_run *run, const tt_ask_result *info, const char *thread,
                       const tt_ui_out *out) {
  json_t *o = tt_run_json(run, info, thread, run->rows ? -1 : 0);
  if (run->rows) {
    /* the rows last, streamed: all of them unless --max-rows */
    tt_ui_out json_out = out ? *out : (tt_ui_out){0};
    json_out.format = TT_FMT_JSON;
    tt_export_rows(run, &json_out, o);
  } else {
    tt_buf b = TT_BUF_INIT;
    tt_json_dump(&b, o, JSON_COMPACT | JSON_REAL_PRECISION(15));
    tt_buf_putc(&b, '\n');
    tt_write_all(stdout, &b);
    tt_buf_free(&b);
  }
  json_decref(o);
}
