/* render.c — result sets for people and pipelines: a box-drawing table on a
 * terminal, or psql's expanded layout (one "column │ value" block per row)
 * when the table would be wider than the terminal; a plain aligned table
 * otherwise; rows of TSV, CSV and Markdown. Every cell is escaped before it is shown, so a hostile value cannot
 * move the cursor, change the title or reorder text on the screen. */
#include "cli/cli.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* A cell ready to print: escaped text inside the pool, its display width. */
typedef struct tt_cell {
  size_t off, len, width;
  size_t chars; /* code points of the raw value, for the cut marker */
  const char *raw; /* a value cut to fit --max-bytes: its kept text ... */
  size_t raw_len, cut; /* ... and the bytes left out (0: none) */
  bool right; /* numbers align right */
  bool null;
} tt_cell;

typedef struct tt_grid {
  size_t nrows, ncols; /* nrows includes the header row */
  tt_cell *cells;
  tt_buf pool;
} tt_grid;

static void tt_grid_add(tt_grid *g, tt_cell *c, const char *s, size_t n) {
  c->off = g->pool.len;
  c->width = tt_escape_terminal(&g->pool, s, n, NULL);
  c->len = g->pool.len - c->off;
  c->chars = tt_utf8_count(s, n);
}

static void tt_grid_build(tt_grid *g, const tt_result *r) {
  g->ncols = r->ncols;
  g->nrows = r->nrows + 1;
  g->cells = tt_xcalloc(g->nrows * g->ncols, sizeof(tt_cell));
  tt_buf tmp = TT_BUF_INIT;
  for (size_t c = 0; c < r->ncols; c++)
    tt_grid_add(g, &g->cells[c], r->names[c], strlen(r->names[c]));
  for (size_t i = 0; i < r->nrows; i++) {
    for (size_t c = 0; c < r->ncols; c++) {
      const tt_value *v = tt_result_cell(r, i, c);
      tt_cell *cell = &g->cells[(i + 1) * g->ncols + c];
      tt_buf_reset(&tmp);
      tt_value_to_text(&tmp, v); /* a cut value ends in its cut mark */
      tt_grid_add(g, cell, tt_buf_cstr(&tmp), tmp.len);
      if (v->type == TT_VAL_TEXT && v->cut) {
        cell->raw = v->u.s;
        cell->raw_len = v->len;
        cell->cut = v->cut;
      }
      cell->right = v->type == TT_VAL_INT || v->type == TT_VAL_REAL;
      cell->null = v->type == TT_VAL_NULL;
    }
  }
  tt_buf_free(&tmp);
}

static void tt_grid_free(tt_grid *g) {
  free(g->cells);
  tt_buf_free(&g->pool);
}

/* Widest cell of each column. */
static void tt_natural_widths(const tt_grid *g, size_t *w) {
  for (size_t c = 0; c < g->ncols; c++) {
    w[c] = 1;
    for (size_t i = 0; i < g->nrows; i++)
      if (g->cells[i * g->ncols + c].width > w[c]) w[c] = g->cells[i * g->ncols + c].width;
    if (w[c] > TT_CELL_MAX_CHARS) w[c] = TT_CELL_MAX_CHARS; /* display budget */
  }
}

/* Appends the longest prefix of escaped text that fits in width columns.
 * Returns the width appended. */
static size_t tt_put_prefix(tt_buf *out, const char *s, size_t n, size_t width) {
  const unsigned char *p = (const unsigned char *)s;
  size_t i = 0, used = 0;
  while (i < n) {
    uint32_t cp;
    size_t k = tt_utf8_decode(p + i, n - i, &cp);
    if (!k) k = 1;
    size_t cw = tt_display_width(s + i, k);
    if (used + cw > width) break;
    used += cw;
    i += k;
  }
  tt_buf_append(out, s, i);
  return used;
}

/* Appends the escaped start of raw text that fits in width columns;
 * returns the raw bytes it took (*used: the width). */
static size_t tt_put_raw_prefix(tt_buf *out, const char *raw, size_t n, size_t width,
                                size_t *used) {
  tt_buf one = TT_BUF_INIT;
  size_t i = 0;
  *used = 0;
  while (i < n) {
    uint32_t cp;
    size_t k = tt_utf8_decode((const unsigned char *)raw + i, n - i, &cp);
    if (!k) k = 1;
    tt_buf_reset(&one);
    size_t cw = tt_escape_terminal(&one, raw + i, k, NULL);
    if (*used + cw > width) break;
    tt_buf_append(out, one.data, one.len);
    *used += cw;
    i += k;
  }
  tt_buf_free(&one);
  return i;
}

/* The start of a value cut to fit --max-bytes, within width columns (or
 * max_chars code points), then its cut mark counting every byte not
 * shown. Returns the width appended. */
static size_t tt_cut_mark_width(const tt_cell *c) {
  tt_value all = {.type = TT_VAL_TEXT, .cut = c->cut + c->raw_len}; /* the widest mark */
  tt_buf mark = TT_BUF_INIT;
  tt_value_put_cut_mark(&mark, &all);
  size_t mw = tt_display_width(mark.data, mark.len);
  tt_buf_free(&mark);
  return mw;
}

static size_t tt_put_cut_value(tt_buf *out, const tt_cell *c, size_t width, size_t max_chars) {
  tt_value all = {.type = TT_VAL_TEXT};
  tt_buf mark = TT_BUF_INIT;
  size_t mw = tt_cut_mark_width(c), used = 0;
  size_t n = tt_utf8_prefix(c->raw, c->raw_len, max_chars);
  size_t shown = width > mw ? tt_put_raw_prefix(out, c->raw, n, width - mw, &used) : 0;
  tt_buf_reset(&mark);
  all.cut = c->cut + c->raw_len - shown;
  tt_value_put_cut_mark(&mark, &all);
  tt_buf_append(out, mark.data, mark.len);
  used += tt_display_width(mark.data, mark.len);
  tt_buf_free(&mark);
  return used;
}

/* A cell cut to its column ends in "…[N chars]" (the value's length) when
 * that takes at most a third of the column, so that the cell keeps most of
 * its text, else in "…"; a value already cut to fit --max-bytes keeps its
 * cut mark, counting the bytes not shown. Returns the width appended. */
static size_t tt_put_cut(tt_buf *out, const tt_cell *c, const char *text, size_t width) {
  if (c->width <= width) {
    tt_buf_append(out, text, c->len);
    return c->width;
  }
  if (c->cut && tt_cut_mark_width(c) * 3 <= width) return tt_put_cut_value(out, c, width, SIZE_MAX);
  tt_buf marker = TT_BUF_INIT;
  tt_buf_puts(&marker, "…[");
  tt_buf_put_grouped(&marker, (long long)c->chars);
  tt_buf_puts(&marker, " chars]");
  size_t mw = tt_display_width(marker.data, marker.len);
  if (mw * 3 > width) {
    tt_buf_reset(&marker);
    tt_buf_puts(&marker, "…");
    mw = 1;
  }
  size_t used = width > mw ? tt_put_prefix(out, text, c->len, width - mw) : 0;
  tt_buf_append(out, marker.data, marker.len);
  tt_buf_free(&marker);
  return used + mw;
}

static void tt_put_cell(tt_buf *out, const tt_grid *g, const tt_cell *c,
                        size_t width, const tt_term *t, bool header) {
  const char *text = g->pool.data + c->off;
  tt_buf line = TT_BUF_INIT;
  size_t used = tt_put_cut(&line, c, text, width);
  size_t pad = width > used ? width - used : 0;
  if (c->right) tt_buf_repeat(out, " ", pad);
  if (header) tt_buf_puts(out, tt_term_bold(t));
  else if (c->null) tt_buf_puts(out, tt_term_dim(t));
  tt_buf_append(out, line.data ? line.data : "", line.len);
  if (header || c->null) tt_buf_puts(out, tt_term_reset(t));
  if (!c->right) tt_buf_repeat(out, " ", pad);
  tt_buf_free(&line);
}

static void tt_box_rule(tt_buf *out, const size_t *w, size_t ncols, const tt_term *t,
                        const char *left, const char *mid, const char *right) {
  tt_buf_puts(out, tt_term_dim(t));
  tt_buf_puts(out, left);
  for (size_t c = 0; c < ncols; c++) {
    tt_buf_repeat(out, "─", w[c] + 2);
    tt_buf_puts(out, c + 1 < ncols ? mid : right);
  }
  tt_buf_puts(out, tt_term_reset(t));
  tt_buf_putc(out, '\n');
}

static void tt_row_line(tt_buf *out, const tt_grid *g, size_t row, const size_t *w,
                        const tt_term *t, const char *sep, const char *edge) {
  const char *bar_on = t->tty ? tt_term_dim(t) : "", *bar_off = t->tty ? tt_term_reset(t) : "";
  if (*edge) tt_buf_printf(out, "%s%s%s", bar_on, edge, bar_off);
  for (size_t c = 0; c < g->ncols; c++) {
    tt_buf_putc(out, ' ');
    tt_put_cell(out, g, &g->cells[row * g->ncols + c], w[c], t, row == 0);
    tt_buf_putc(out, ' ');
    if (c + 1 < g->ncols) tt_buf_printf(out, "%s%s%s", bar_on, sep, bar_off);
  }
  if (*edge) tt_buf_printf(out, "%s%s%s", bar_on, edge, bar_off);
  /* trailing spaces are noise in files and pipes */
  while (!*edge && out->len && out->data[out->len - 1] == ' ') out->len--;
  tt_buf_putc(out, '\n');
}

/* One value of the expanded layout, wrapped at spaces to width columns
 * over as many lines as it needs (within the display budget), each
 * continuation line indented to the value column. */
static void tt_put_wrapped(tt_buf *out, const tt_grid *g, const tt_cell *c, size_t indent,
                           size_t width, const tt_term *t) {
  /* the display budget holds here too: a longer value is cut, its length
   * given */
  tt_buf cut = TT_BUF_INIT;
  size_t budget = tt_utf8_prefix(g->pool.data + c->off, c->len, TT_CELL_MAX_CHARS);
  if (c->cut && c->chars > TT_CELL_MAX_CHARS) {
    tt_put_cut_value(&cut, c, SIZE_MAX, TT_CELL_MAX_CHARS);
  } else if (c->chars > TT_CELL_MAX_CHARS && budget < c->len) {
    tt_buf_append(&cut, g->pool.data + c->off, budget);
    tt_buf_puts(&cut, "…[");
    tt_buf_put_grouped(&cut, (long long)c->chars);
    tt_buf_puts(&cut, " chars]");
  }
  const char *text = cut.len ? cut.data : g->pool.data + c->off;
  const char *end = text + (cut.len ? cut.len : c->len);
  size_t col = 0;
  if (c->null) tt_buf_puts(out, tt_term_dim(t));
  for (const char *p = text; p < end;) {
    const char *w = p;
    while (w < end && *w == ' ') w++;
    const char *we = w;
    while (we < end && *we != ' ') we++;
    size_t spaces = (size_t)(w - p), ww = tt_display_width(w, (size_t)(we - w));
    if (col && col + spaces + ww > width && ww <= width) { /* the word goes on the next line */
      tt_buf_putc(out, '\n');
      tt_buf_repeat(out, " ", indent);
      col = 0;
    } else {
      tt_buf_append(out, p, spaces);
      col += spaces;
    }
    while (w < we) { /* a word longer than the line is cut where it must be */
      uint32_t cp;
      size_t k = tt_utf8_decode((const unsigned char *)w, (size_t)(we - w), &cp);
      if (!k) k = 1;
      size_t cw = tt_display_width(w, k);
      if (col && col + cw > width) {
        tt_buf_putc(out, '\n');
        tt_buf_repeat(out, " ", indent);
        col = 0;
      }
      tt_buf_append(out, w, k);
      col += cw;
      w += k;
    }
    p = we;
  }
  if (c->null) tt_buf_puts(out, tt_term_reset(t));
  tt_buf_putc(out, '\n');
  tt_buf_free(&cut);
}

/* psql's expanded layout for a table wider than the terminal: a rule per
 * row, then one "column │ value" line per column, long values wrapped. */
static void tt_render_expanded(tt_buf *out, const tt_grid *g, const tt_term *t) {
  size_t label = 1;
  for (size_t c = 0; c < g->ncols; c++)
    if (g->cells[c].width > label) label = g->cells[c].width;
  size_t width = t->width > 20 ? t->width - 1 : 20; /* a column short: no wrap */
  if (label > width / 3) label = width / 3;
  size_t value_width = width > label + 3 ? width - label - 3 : 10;
  for (size_t i = 1; i < g->nrows; i++) {
    tt_buf head = TT_BUF_INIT;
    tt_buf_printf(&head, "─[ RECORD %zu ]", i);
    size_t hw = tt_display_width(head.data, head.len);
    tt_buf_puts(out, tt_term_dim(t));
    tt_buf_append(out, head.data, head.len);
    tt_buf_repeat(out, "─", width > hw ? width - hw : 0);
    tt_buf_puts(out, tt_term_reset(t));
    tt_buf_putc(out, '\n');
    tt_buf_free(&head);
    for (size_t c = 0; c < g->ncols; c++) {
      const tt_cell *name = &g->cells[c];
      tt_buf_puts(out, tt_term_bold(t));
      size_t used = tt_put_cut(out, name, g->pool.data + name->off, label);
      tt_buf_puts(out, tt_term_reset(t));
      tt_buf_repeat(out, " ", label > used ? label - used : 0);
      tt_buf_printf(out, " %s│%s ", tt_term_dim(t), tt_term_reset(t));
      tt_put_wrapped(out, g, &g->cells[i * g->ncols + c], label + 3, value_width, t);
    }
  }
}

void tt_render_table(tt_buf *out, const tt_result *r, const tt_term *t) {
  tt_grid g = {0};
  tt_grid_build(&g, r);
  size_t *w = tt_xcalloc(g.ncols ? g.ncols : 1, sizeof(size_t));
  tt_natural_widths(&g, w);
  size_t total = 3 * g.ncols + 1;
  for (size_t c = 0; c < g.ncols; c++) total += w[c];
  if (t->tty && total >= t->width && g.nrows > 1) {
    tt_render_expanded(out, &g, t);
  } else if (t->tty) {
    tt_box_rule(out, w, g.ncols, t, "┌", "┬", "┐");
    tt_row_line(out, &g, 0, w, t, "│", "│");
    tt_box_rule(out, w, g.ncols, t, "├", "┼", "┤");
    for (size_t i = 1; i < g.nrows; i++) tt_row_line(out, &g, i, w, t, "│", "│");
    tt_box_rule(out, w, g.ncols, t, "└", "┴", "┘");
  } else {
    tt_row_line(out, &g, 0, w, t, "|", "");
    for (size_t c = 0; c < g.ncols; c++) {
      tt_buf_repeat(out, "-", w[c] + 2);
      if (c + 1 < g.ncols) tt_buf_putc(out, '+');
    }
    tt_buf_putc(out, '\n');
    for (size_t i = 1; i < g.nrows; i++) tt_row_line(out, &g, i, w, t, "|", "");
  }
  free(w);
  tt_grid_free(&g);
}

/* A TSV field: the format's own escapes (\t \n \r \\) and, always, the
 * visible escapes of the table for other unsafe characters: TSV text is
 * already an escaped form, and pipes often end on a terminal. Runs of
 * characters that need neither are copied whole. */
static void tt_put_tsv_field(tt_buf *out, const char *s, size_t n) {
  const unsigned char *p = (const unsigned char *)s;
  size_t i = 0, run = 0;
  while (i < n) {
    unsigned char c = p[i];
    if (c >= 0x20 && c < 0x7F && c != '\\') { /* printable ASCII */
      i++;
      continue;
    }
    uint32_t cp = c;
    size_t k = c < 0x80 ? 1 : tt_utf8_decode(p + i, n - i, &cp);
    if (k && !(k == 1 && (cp == '\t' || cp == '\n' || cp == '\r' || cp == '\\')) &&
        !tt_cp_is_unsafe(cp)) {
      i += k;
      continue;
    }
    tt_buf_append(out, s + run, i - run);
    if (k == 1 && (cp == '\t' || cp == '\n' || cp == '\r' || cp == '\\'))
      tt_buf_append(out, cp == '\t' ? "\\t" : cp == '\n' ? "\\n" : cp == '\r' ? "\\r" : "\\\\", 2);
    else
      tt_escape_terminal(out, s + i, k ? k : 1, NULL);
    i += k ? k : 1;
    run = i;
  }
  tt_buf_append(out, s + run, n - run);
}

/* A CSV field (RFC 4180). The data stays as it is in a file or pipe (CSV is
 * for programs); on a terminal unsafe characters are escaped. */
static void tt_put_csv_field(tt_buf *out, const char *s, size_t n, const tt_term *t) {
  tt_buf safe = TT_BUF_INIT;
  if (t->tty) {
    tt_escape_terminal(&safe, s, n, NULL);
    s = tt_buf_cstr(&safe);
    n = safe.len;
  }
  bool quote = n && (s[0] == ' ' || s[n - 1] == ' ');
  for (size_t i = 0; i < n && !quote; i++)
    quote = s[i] == ',' || s[i] == '"' || s[i] == '\n' || s[i] == '\r';
  if (!quote) {
    tt_buf_append(out, s, n);
  } else {
    tt_buf_putc(out, '"');
    const char *q, *end = s + n;
    while ((q = memchr(s, '"', (size_t)(end - s)))) { /* quotes doubled */
      tt_buf_append(out, s, (size_t)(q - s) + 1);
      tt_buf_putc(out, '"');
      s = q + 1;
    }
    tt_buf_append(out, s, (size_t)(end - s));
    tt_buf_putc(out, '"');
  }
  tt_buf_free(&safe);
}

static void tt_put_field(tt_buf *out, const char *s, size_t n, const tt_term *t, bool csv) {
  if (csv) tt_put_csv_field(out, s, n, t);
  else tt_put_tsv_field(out, s, n);
}

void tt_render_delimited_header(tt_buf *out, const char *const *names, size_t ncols,
                                const tt_term *t, bool csv) {
  for (size_t c = 0; c < ncols; c++) {
    if (c) tt_buf_putc(out, csv ? ',' : '\t');
    tt_put_field(out, names[c], strlen(names[c]), t, csv);
  }
  tt_buf_puts(out, csv ? "\r\n" : "\n");
}

void tt_render_delimited_row(tt_buf *out, const tt_value *row, size_t ncols, const tt_term *t,
                             bool csv) {
  tt_buf tmp = TT_BUF_INIT;
  for (size_t c = 0; c < ncols; c++) {
    if (c) tt_buf_putc(out, csv ? ',' : '\t');
    const tt_value *v = &row[c];
    if (v->type == TT_VAL_NULL) continue;
    if (v->type == TT_VAL_INT || v->type == TT_VAL_REAL) {
      tt_value_to_export_text(out, v); /* digits, sign, '.', 'e', Inf: nothing to escape */
    } else if (v->type == TT_VAL_TEXT && !v->cut) {
      tt_put_field(out, v->u.s, v->len, t, csv);
    } else { /* a blob, or text cut to fit --max-bytes with its mark */
      tt_buf_reset(&tmp);
      tt_value_to_export_text(&tmp, v);
      tt_put_field(out, tt_buf_cstr(&tmp), tmp.len, t, csv);
    }
  }
  tt_buf_append(out, csv ? "\r\n" : "\n", csv ? 2 : 1);
  tt_buf_free(&tmp);
}

/* A Markdown table cell: pipes escaped, line breaks as <br>, unsafe
 * characters escaped on a terminal. */
static void tt_put_md_cell(tt_buf *out, const char *s, size_t n, const tt_term *t) {
  tt_buf safe = TT_BUF_INIT;
  if (t->tty) {
    tt_escape_terminal(&safe, s, n, NULL);
    s = tt_buf_cstr(&safe);
    n = safe.len;
  }
  for (size_t i = 0; i < n; i++) {
    if (s[i] == '|') tt_buf_puts(out, "\\|");
    else if (s[i] == '\n') tt_buf_puts(out, "<br>");
    else if (s[i] != '\r') tt_buf_putc(out, s[i]);
  }
  tt_buf_free(&safe);
}

void tt_render_markdown_header(tt_buf *out, const char *const *names, size_t ncols,
                               const tt_term *t) {
  tt_buf_puts(out, "|");
  for (size_t c = 0; c < ncols; c++) {
    tt_buf_putc(out, ' ');
    tt_put_md_cell(out, names[c], strlen(names[c]), t);
    tt_buf_puts(out, " |");
  }
  tt_buf_puts(out, "\n|");
  for (size_t c = 0; c < ncols; c++) tt_buf_puts(out, " --- |");
  tt_buf_putc(out, '\n');
}

void tt_render_markdown_row(tt_buf *out, const tt_value *row, size_t ncols, const tt_term *t) {
  tt_buf tmp = TT_BUF_INIT;
  tt_buf_puts(out, "|");
  for (size_t c = 0; c < ncols; c++) {
    tt_buf_reset(&tmp);
    if (row[c].type == TT_VAL_NULL) tt_buf_puts(&tmp, "NULL");
    else tt_value_to_export_text(&tmp, &row[c]);
    tt_buf_putc(out, ' ');
    tt_put_md_cell(out, tt_buf_cstr(&tmp), tmp.len, t);
    tt_buf_puts(out, " |");
  }
  tt_buf_putc(out, '\n');
  tt_buf_free(&tmp);
}

static void tt_render_delimited(tt_buf *out, const tt_result *r, const tt_term *t,
                                bool csv) {
  tt_render_delimited_header(out, r->names, r->ncols, t, csv);
  for (size_t i = 0; i < r->nrows; i++)
    tt_render_delimited_row(out, tt_result_cell(r, i, 0), r->ncols, t, csv);
}

void tt_render_tsv(tt_buf *out, const tt_result *r, const tt_term *t) {
  tt_render_delimited(out, r, t, false);
}

void tt_render_csv(tt_buf *out, const tt_result *r, const tt_term *t) {
  tt_render_delimited(out, r, t, true);
}

void tt_render_cells_cut(tt_buf *out, size_t n, const char *limit) {
  tt_buf_put_grouped(out, (long long)n);
  tt_buf_printf(out, " cell%s cut to fit %s", n == 1 ? "" : "s", limit);
}

void tt_render_footer(tt_buf *out, const tt_result *r, const tt_term *t) {
  tt_buf_puts(out, tt_term_dim(t));
  tt_buf_put_grouped(out, (long long)r->nrows);
  tt_buf_puts(out, r->nrows == 1 ? " row" : " rows");
  if (r->truncated)
    tt_buf_puts(out, r->truncated_by == TT_TRUNC_BYTES ? " (cut at --max-bytes; more rows exist"
                                                       : " (cut at --max-rows; more rows exist");
  if (r->cells_cut) {
    tt_buf_puts(out, r->truncated ? "; " : " (");
    tt_render_cells_cut(out, r->cells_cut, "--max-bytes");
  }
  if (r->truncated || r->cells_cut) tt_buf_putc(out, ')');
  if (r->elapsed_ms < 10) tt_buf_printf(out, ", %.1f ms", r->elapsed_ms);
  else tt_buf_printf(out, ", %.0f ms", r->elapsed_ms);
  tt_buf_puts(out, tt_term_reset(t));
  tt_buf_putc(out, '\n');
}
