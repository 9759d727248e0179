/* preview.c — the chart in a terminal, printed after the answer: bars,
 * pie shares and histogram bins as horizontal bars of block characters
 * (eighths of a cell) with labels and values; lines, areas and scatter
 * plots on a braille canvas (2x4 dots a cell) with a value axis and date
 * or number ticks. ASCII instead of Unicode when asked, colours only when
 * allowed; every label is escaped for the terminal. */
#include "chart/chart_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define TT_PREVIEW_MAX_BARS 40

typedef struct tt_pv {
  const tt_chart *c;
  const tt_chart_term_opts *o;
  tt_buf *out;
} tt_pv;

static const char *tt_pv_color(const tt_pv *p, size_t s) {
  static const char *const codes[] = {"\033[34m", "\033[33m", "\033[32m", "\033[31m",
                                      "\033[35m", "\033[36m", "\033[93m", "\033[39m"};
  if (!p->o->color) return "";
  if (p->c->folded && p->c->kind != TT_CHART_PIE && s + 1 == p->c->nseries) return "\033[90m";
  return codes[s % 8];
}

static const char *tt_pv_on(const tt_pv *p, const char *code) { return p->o->color ? code : ""; }
static const char *tt_pv_off(const tt_pv *p) { return p->o->color ? "\033[0m" : ""; }

/* s escaped for the terminal and cut to cols columns; padded to cols when
 * pad, right-aligned when right. Returns the columns used. */
static size_t tt_pv_cell(tt_buf *out, const char *s, size_t cols, bool pad, bool right) {
  tt_buf e = TT_BUF_INIT;
  tt_escape_terminal(&e, s, strlen(s), NULL);
  const char *t = tt_buf_cstr(&e);
  size_t w = tt_display_width(t, e.len), keep = e.len;
  if (w > cols) { /* cut by columns, leaving one for "…" */
    size_t used = 0, i = 0;
    while (i < e.len) {
      uint32_t cp;
      size_t k = tt_utf8_decode((const unsigned char *)t + i, e.len - i, &cp);
      if (!k) k = 1;
      size_t cw = tt_display_width(t + i, k);
      if (used + cw + 1 > cols) break;
      used += cw;
      i += k;
    }
    keep = i;
    w = used + (cols ? 1 : 0);
  }
  size_t fill = pad && w < cols ? cols - w : 0;
  if (right) tt_buf_repeat(out, " ", fill);
  tt_buf_append(out, t, keep);
  if (keep < e.len && cols) tt_buf_puts(out, "…");
  if (!right) tt_buf_repeat(out, " ", fill);
  tt_buf_free(&e);
  return w + fill;
}

static void tt_pv_title(tt_pv *p) {
  tt_buf_puts(p->out, tt_pv_on(p, "\033[1m"));
  tt_pv_cell(p->out, p->c->title, p->o->width, false, false);
  tt_buf_puts(p->out, tt_pv_off(p));
  tt_buf_putc(p->out, '\n');
}

/* The glyph of series s in bars when there are no colours to tell them. */
static const char *tt_pv_block(const tt_pv *p, size_t s) {
  static const char *const uni[] = {"█", "▓", "▒", "░"};
  static const char *const ascii[] = {"#", "=", "+", "~"};
  return p->o->unicode ? uni[p->o->color ? 0 : s % 4] : ascii[p->o->color ? 0 : s % 4];
}

static void tt_pv_legend(tt_pv *p) {
  const tt_chart *c = p->c;
  if (c->nseries < 2) return;
  size_t used = 0;
  for (size_t s = 0; s < c->nseries; s++) {
    tt_buf item = TT_BUF_INIT;
    size_t w = tt_pv_cell(&item, c->series[s].name, 24, false, false) + 3;
    if (used && used + w > p->o->width) {
      tt_buf_putc(p->out, '\n');
      used = 0;
    }
    tt_buf_printf(p->out, "%s%s%s %s  ", tt_pv_color(p, s), tt_pv_block(p, s), tt_pv_off(p),
                  tt_buf_cstr(&item));
    used += w;
    tt_buf_free(&item);
  }
  tt_buf_putc(p->out, '\n');
}

/* A bar of len cells (fractions in eighths), drawn with series s's glyph;
 * returns the cells it took. */
static size_t tt_pv_bar(tt_pv *p, double len, size_t s) {
  static const char *const eighths[] = {"", "▏", "▎", "▍", "▌", "▋", "▊", "▉"};
  long e = lround(len * 8);
  if (e < 0) e = 0;
  const char *full = tt_pv_block(p, s);
  tt_buf_puts(p->out, tt_pv_color(p, s));
  for (long i = 0; i < e / 8; i++) tt_buf_puts(p->out, full);
  bool plain = !p->o->unicode || (!p->o->color && s % 4);
  const char *part = e % 8 == 0 ? "" : plain ? (e % 8 >= 4 ? full : "") : eighths[e % 8];
  tt_buf_puts(p->out, part);
  tt_buf_puts(p->out, tt_pv_off(p));
  return (size_t)(e / 8) + (*part ? 1 : 0);
}

/* The value after a bar; for a pie its share first, in a column of its
 * own (vw: the width of the widest value). */
static void tt_pv_value_text(const tt_pv *p, double v, double total, size_t vw, tt_buf *t) {
  if (p->c->kind != TT_CHART_PIE) {
    tt_fmt_value(t, v);
    return;
  }
  tt_buf_printf(t, "%5.1f %%  ", total > 0 ? 100 * v / total : 0);
  tt_buf n = TT_BUF_INIT;
  tt_fmt_value(&n, v);
  tt_buf_repeat(t, " ", vw > n.len ? vw - n.len : 0);
  tt_buf_puts(t, tt_buf_cstr(&n));
  tt_buf_free(&n);
}

/* Bars, pies and histograms: one line a bar (a line a series in groups). */
static void tt_pv_bars(tt_pv *p) {
  const tt_chart *c = p->c;
  size_t show = c->n < TT_PREVIEW_MAX_BARS ? c->n : TT_PREVIEW_MAX_BARS;
  double total = 0, maxpos = 0, maxneg = 0;
  for (size_t s = 0; s < c->nseries; s++)
    for (size_t i = 0; i < c->n; i++) {
      double v = c->series[s].v[i];
      if (isnan(v)) continue;
      total += v;
      if (v > maxpos) maxpos = v;
      if (-v > maxneg) maxneg = -v;
    }
  size_t labw = 0, valw = 0, numw = 0;
  tt_buf t = TT_BUF_INIT;
  for (size_t i = 0; i < show; i++)
    for (size_t s = 0; s < c->nseries; s++) {
      if (isnan(c->series[s].v[i])) continue;
      tt_buf_reset(&t);
      tt_fmt_value(&t, c->series[s].v[i]);
      if (t.len > numw) numw = t.len; /* digits, commas, signs: one column each */
    }
  for (size_t i = 0; i < show; i++) {
    size_t lw = tt_display_width(c->labels[i], strlen(c->labels[i]));
    if (lw > labw) labw = lw;
    for (size_t s = 0; s < c->nseries; s++) {
      if (isnan(c->series[s].v[i])) continue;
      tt_buf_reset(&t);
      tt_pv_value_text(p, c->series[s].v[i], total, numw, &t);
      size_t vw = tt_display_width(t.data, t.len);
      if (vw > valw) valw = vw;
    }
  }
  size_t width = p->o->width;
  size_t labmax = width / 3 > 30 ? 30 : width / 3;
  if (labw > labmax) labw = labmax;
  if (labw < 1) labw = 1;
  size_t barw = width > labw + valw + 3 + 8 ? width - labw - valw - 3 : 8;
  if (barw > 60) barw = 60;
  /* cells for the negative side, left of the zero line */
  size_t negw = maxneg > 0 ? (size_t)lround((double)barw * maxneg / (maxneg + maxpos)) : 0;
  if (maxneg > 0 && negw < 1) negw = 1;
  size_t posw = barw - negw;
  double scale = maxneg + maxpos > 0 ? (double)barw / (maxneg + maxpos) : 0;
  for (size_t i = 0; i < show; i++) {
    bool labelled = false; /* the label goes on the first line drawn */
    for (size_t s = 0; s < c->nseries; s++) {
      double v = c->series[s].v[i];
      if (c->nseries > 1 && isnan(v)) continue;
      if (!labelled) tt_pv_cell(p->out, c->labels[i], labw, true, false);
      else tt_buf_repeat(p->out, " ", labw);
      labelled = true;
      tt_buf_puts(p->out, "  ");
      double len = isnan(v) ? 0 : fabs(v) * scale;
      if (negw) {
        if (v < 0) { /* right-aligned in whole cells up to the zero line */
          long cells = lround(len);
          if (cells > (long)negw) cells = (long)negw;
          tt_buf_repeat(p->out, " ", negw - (size_t)cells);
          tt_buf_puts(p->out, tt_pv_color(p, s));
          for (long k = 0; k < cells; k++) tt_buf_puts(p->out, tt_pv_block(p, s));
          tt_buf_puts(p->out, tt_pv_off(p));
        } else {
          tt_buf_repeat(p->out, " ", negw);
        }
        tt_buf_puts(p->out, p->o->unicode ? "│" : "|");
      }
      size_t drawn = v < 0 ? 0 : tt_pv_bar(p, len > (double)posw ? (double)posw : len, s);
      tt_buf_repeat(p->out, " ", posw > drawn ? posw - drawn : 0);
      tt_buf_putc(p->out, ' ');
      tt_buf_reset(&t);
      if (isnan(v)) tt_buf_puts(&t, "-");
      else tt_pv_value_text(p, v, total, numw, &t);
      tt_pv_cell(p->out, tt_buf_cstr(&t), valw, true, true);
      /* no spaces at the end of a line */
      while (p->out->len && p->out->data[p->out->len - 1] == ' ') p->out->data[--p->out->len] = 0;
      tt_buf_putc(p->out, '\n');
    }
  }
  if (show < c->n) {
    tt_buf_puts(p->out, tt_pv_on(p, "\033[2m"));
    tt_buf_printf(p->out, "… and %zu more\n", c->n - show);
    tt_buf_puts(p->out, tt_pv_off(p));
  }
  tt_buf_free(&t);
}

/* ---- braille plots ---------------------------------------------------------------- */

typedef struct tt_dots {
  size_t cols, rows;     /* cells */
  unsigned char *bits;   /* braille dot bits per cell */
  unsigned char *series; /* the series that last drew in the cell, +1 (0: none) */
} tt_dots;

static void tt_dot(tt_dots *d, long x, long y, size_t s) {
  if (x < 0 || y < 0 || x >= (long)(d->cols * 2) || y >= (long)(d->rows * 4)) return;
  static const unsigned char bit[2][4] = {{0x01, 0x02, 0x04, 0x40}, {0x08, 0x10, 0x20, 0x80}};
  size_t cell = (size_t)(y / 4) * d->cols + (size_t)(x / 2);
  d->bits[cell] |= bit[x % 2][y % 4];
  d->series[cell] = (unsigned char)(s + 1);
}

static void tt_dot_line(tt_dots *d, long x0, long y0, long x1, long y1, size_t s, long fill_to) {
  long dx = labs(x1 - x0), dy = -labs(y1 - y0);
  long sx = x0 < x1 ? 1 : -1, sy = y0 < y1 ? 1 : -1, err = dx + dy;
  for (;;) {
    tt_dot(d, x0, y0, s);
    if (fill_to >= 0)
      for (long y = y0 + 1; y <= fill_to; y++) tt_dot(d, x0, y, s);
    if (x0 == x1 && y0 == y1) break;
    long e2 = 2 * err;
    if (e2 >= dy) err += dy, x0 += sx;
    if (e2 <= dx) err += dx, y0 += sy;
  }
}

static void tt_pv_plot(tt_pv *p) {
  const tt_chart *c = p->c;
  double lo, hi, xlo = INFINITY, xhi = -INFINITY;
  if (!tt_chart_value_range(c, &lo, &hi)) lo = 0, hi = 1;
  bool category = c->xscale == TT_X_CATEGORY;
  for (size_t i = 0; !category && i < c->n; i++)
    if (isfinite(c->x[i])) xlo = fmin(xlo, c->x[i]), xhi = fmax(xhi, c->x[i]);
  if (!category && xlo > xhi) xlo = 0, xhi = 1;
  size_t rows = p->o->height;
  tt_ticks yt;
  if (c->y_zoom) tt_ticks_number_at(lo, hi, c->y_zoom_at, rows >= 10 ? 5 : 3, &yt);
  else tt_ticks_number(lo, hi, rows >= 10 ? 5 : 3, &yt);
  lo = yt.lo;
  hi = yt.hi;
  size_t labw = 0;
  tt_buf l = TT_BUF_INIT;
  for (size_t i = 0; i < yt.n; i++) {
    tt_buf_reset(&l);
    tt_ticks_label(&yt, i, false, false, &l);
    size_t w = tt_display_width(l.data, l.len);
    if (w > labw) labw = w;
  }
  size_t cols = p->o->width > labw + 4 ? p->o->width - labw - 2 : 10;
  tt_dots d = {cols, rows, tt_xcalloc(cols * rows, 1), tt_xcalloc(cols * rows, 1)};
  long dw = (long)cols * 2 - 1, dh = (long)rows * 4 - 1;
  double xspan = category ? (double)(c->n > 1 ? c->n - 1 : 1) : (xhi > xlo ? xhi - xlo : 1);
  long base = lround((hi - fmax(lo, fmin(0, hi))) / (hi - lo) * (double)dh);
  for (size_t s = 0; s < c->nseries; s++) {
    long px = -1, py = -1;
    for (size_t i = 0; i < c->n; i++) {
      double v = c->series[s].v[i];
      if (isnan(v) || (!category && !isfinite(c->x[i]))) continue; /* joined across gaps */
      double xf = category ? (c->n > 1 ? (double)i / xspan : 0.5) : (c->x[i] - xlo) / xspan;
      long x = lround(xf * (double)dw), y = lround((hi - v) / (hi - lo) * (double)dh);
      if (c->kind == TT_CHART_SCATTER || px < 0) tt_dot_line(&d, x, y, x, y, s, c->kind == TT_CHART_AREA ? base : -1);
      else tt_dot_line(&d, px, py, x, y, s, c->kind == TT_CHART_AREA ? base : -1);
      px = x;
      py = y;
    }
  }
  /* rows of the canvas with the value axis at the left */
  for (size_t r = 0; r < rows; r++) {
    long tick = -1;
    for (size_t i = 0; i < yt.n; i++)
      if (lround((hi - yt.v[i]) / (hi - lo) * (double)(rows - 1)) == (long)r) tick = (long)i;
    tt_buf_reset(&l);
    if (tick >= 0) tt_ticks_label(&yt, (size_t)tick, false, false, &l);
    tt_pv_cell(p->out, tt_buf_cstr(&l), labw, true, true);
    tt_buf_puts(p->out, p->o->unicode ? (tick >= 0 ? " ┤" : " │") : (tick >= 0 ? " +" : " |"));
    size_t last = 0; /* trailing empty cells are not printed */
    for (size_t k = 0; k < cols; k++)
      if (d.bits[r * cols + k]) last = k + 1;
    int cur = 0;
    for (size_t k = 0; k < last; k++) {
      unsigned char b = d.bits[r * cols + k];
      int s = d.series[r * cols + k];
      if (s != cur && p->o->color) {
        tt_buf_puts(p->out, s ? tt_pv_color(p, (size_t)s - 1) : "\033[0m");
        cur = s;
      }
      if (!b) tt_buf_putc(p->out, ' ');
      else if (p->o->unicode) tt_utf8_encode(p->out, 0x2800u + b);
      else tt_buf_putc(p->out, '*');
    }
    if (cur) tt_buf_puts(p->out, "\033[0m");
    tt_buf_putc(p->out, '\n');
  }
  tt_buf_repeat(p->out, " ", labw + 1);
  tt_buf_puts(p->out, p->o->unicode ? "└" : "+");
  tt_buf_repeat(p->out, p->o->unicode ? "─" : "-", cols);
  tt_buf_putc(p->out, '\n');
  /* x labels where they do not run into each other */
  tt_buf line = TT_BUF_INIT;
  size_t at = 0;
  tt_buf_repeat(&line, " ", labw + 2);
  at = labw + 2;
  size_t nt = 0;
  double pos[64];
  char *text[64];
  if (category) {
    size_t picks[3] = {0, c->n / 2, c->n - 1};
    for (size_t k = 0; k < 3 && c->n; k++) {
      if (k && picks[k] == picks[k - 1]) continue;
      pos[nt] = c->n > 1 ? (double)picks[k] / xspan : 0.5;
      text[nt++] = tt_xstrdup(c->labels[picks[k]]);
    }
  } else {
    tt_ticks xt;
    int target = (int)(cols / 14) < 2 ? 2 : (int)(cols / 14);
    if (c->xscale == TT_X_TIME) tt_ticks_time(xlo, xhi, c->tunit, target, &xt);
    else tt_ticks_number(xlo, xhi, target, &xt);
    for (size_t i = 0; i < xt.n && nt < 64; i++) {
      if (xt.v[i] < xlo - 1e-9 || xt.v[i] > xhi + 1e-9) continue;
      tt_buf_reset(&l);
      tt_ticks_label(&xt, i, c->xscale == TT_X_TIME, c->year_numbers, &l);
      pos[nt] = (xt.v[i] - xlo) / xspan;
      text[nt++] = tt_buf_detach(&l);
    }
  }
  for (size_t k = 0; k < nt; k++) {
    size_t w = tt_display_width(text[k], strlen(text[k]));
    long centre = (long)(labw + 2) + lround(pos[k] * (double)(cols - 1));
    long start = centre - (long)w / 2;
    if (start < (long)(labw + 2)) start = (long)(labw + 2);
    if (start + (long)w > (long)(labw + 2 + cols)) start = (long)(labw + 2 + cols) - (long)w;
    if (start < (long)at + (at > labw + 2 ? 2 : 0)) {
      free(text[k]);
      continue;
    }
    tt_buf_repeat(&line, " ", (size_t)start - at);
    at = (size_t)start + tt_pv_cell(&line, text[k], w, false, false);
    free(text[k]);
  }
  tt_buf_puts(p->out, tt_buf_cstr(&line));
  tt_buf_putc(p->out, '\n');
  tt_buf_free(&line);
  tt_buf_free(&l);
  free(d.bits);
  free(d.series);
}

void tt_chart_render_term(const tt_chart *c, const tt_chart_term_opts *o, tt_buf *out) {
  tt_chart_term_opts opts = *o;
  if (opts.width < 20) opts.width = 20;
  if (opts.width > 400) opts.width = 400;
  if (opts.height < 5) opts.height = 5;
  if (opts.height > 100) opts.height = 100;
  tt_pv p = {c, &opts, out};
  tt_pv_title(&p);
  if (c->kind != TT_CHART_PIE) tt_pv_legend(&p);
  if (c->n == 0 || tt_chart_npoints(c) == 0) {
    tt_buf_printf(out, "%sno data to plot%s\n", tt_pv_on(&p, "\033[2m"), tt_pv_off(&p));
  } else if (c->kind == TT_CHART_BAR || c->kind == TT_CHART_PIE || c->kind == TT_CHART_HISTOGRAM) {
    tt_pv_bars(&p);
  } else {
    tt_pv_plot(&p);
  }
  bool axes = c->kind != TT_CHART_PIE && (c->x_label || c->y_label);
  if (axes || c->note) tt_buf_puts(out, tt_pv_on(&p, "\033[2m"));
  if (axes) {
    tt_buf t = TT_BUF_INIT;
    if (c->kind == TT_CHART_BAR || c->kind == TT_CHART_HISTOGRAM)
      tt_buf_printf(&t, "bars: %s; length: %s", c->x_label ? c->x_label : "x",
                    c->y_label ? c->y_label : "value");
    else
      tt_buf_printf(&t, "x: %s; y: %s", c->x_label ? c->x_label : "x", c->y_label ? c->y_label : "value");
    tt_pv_cell(out, tt_buf_cstr(&t), opts.width, false, false);
    tt_buf_putc(out, '\n');
    tt_buf_free(&t);
  }
  if (c->note) {
    tt_pv_cell(out, c->note, opts.width, false, false);
    tt_buf_putc(out, '\n');
  }
  if (axes || c->note) tt_buf_puts(out, tt_pv_off(&p));
}
