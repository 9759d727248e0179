/* draw.c — the layout of a chart, once for every renderer: title, legend,
 * axes with nice ticks, bars (vertical, horizontal, grouped), lines and
 * areas, scatter points, pies with a legend, histogram bins, value labels
 * where they fit (on lines: beside each point, clear of the line), and the
 * note saying what was left out. Everything is
 * painted through tt_canvas_ops, so PNG (cairo) and SVG get the same
 * picture; text widths come from one tt_text_metrics. */
#include "chart/chart_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const tt_rgba TT_WHITE = {0xFFFFFF, 1};
static const tt_rgba TT_INK = {0x222222, 1};
static const tt_rgba TT_AXIS = {0x555555, 1};
static const tt_rgba TT_GRID = {0xE2E2E2, 1};
static const tt_rgba TT_MUTED = {0x666666, 1};
/* text on a light slice: the same as TT_INK to the eye, but a colour of its
 * own, so that the SVG's dark scheme (svg.c) leaves it dark */
static const tt_rgba TT_INK_ON_COLOUR = {0x1A1A1A, 1};

/* Okabe & Ito's palette, distinguishable with the common colour-vision
 * deficiencies; its black comes last and yellow late (weak on white). */
static const uint32_t tt_okabe_ito[] = {0x0072B2, 0xE69F00, 0x009E73, 0xD55E00,
                                        0xCC79A7, 0x56B4E9, 0xF0E442, 0x000000};

tt_rgba tt_palette(size_t i) {
  return (tt_rgba){tt_okabe_ito[i % (sizeof tt_okabe_ito / sizeof tt_okabe_ito[0])], 1};
}

tt_rgba tt_palette_other(void) { return (tt_rgba){0x9A9A9A, 1}; }

typedef struct tt_draw {
  const tt_chart *c;
  const tt_canvas_ops *ops;
  void *ud;
  tt_text_metrics *m;
  double w, h, k, pad;
  double fs_title, fs_axis, fs_tick, fs_note, fs_value, fs_legend;
  double top, bottom; /* the band left for the plot */
} tt_draw;

/* Series s's colour: grey for a folded "Other". */
static tt_rgba tt_series_color(const tt_chart *c, size_t s) {
  if (c->folded && c->kind != TT_CHART_PIE && s + 1 == c->nseries) return tt_palette_other();
  return tt_palette(s);
}

static double tt_tw(tt_draw *d, const char *s, double size, bool bold) {
  return tt_text_width(d->m, s, size, bold);
}

/* s cut with "…" to fit maxw pixels (binary search on characters). */
static void tt_fit(tt_draw *d, const char *s, double size, bool bold, double maxw, tt_buf *out) {
  size_t len = strlen(s);
  if (tt_tw(d, s, size, bold) <= maxw) {
    tt_buf_append(out, s, len);
    return;
  }
  size_t chars = tt_utf8_count(s, len), lo = 0, hi = chars;
  tt_buf t = TT_BUF_INIT;
  while (lo < hi) {
    size_t mid = (lo + hi + 1) / 2;
    tt_buf_reset(&t);
    tt_buf_append(&t, s, tt_utf8_prefix(s, len, mid));
    tt_buf_puts(&t, "…");
    if (tt_tw(d, tt_buf_cstr(&t), size, bold) <= maxw) lo = mid;
    else hi = mid - 1;
  }
  if (lo) {
    tt_buf_append(out, s, tt_utf8_prefix(s, len, lo));
    tt_buf_puts(out, "…");
  }
  tt_buf_free(&t);
}

static void tt_text(tt_draw *d, double x, double y, const char *s, double size, bool bold,
                    tt_anchor a, double angle, tt_rgba col) {
  if (*s) d->ops->text(d->ud, x, y, s, size, bold, a, angle, col);
}

/* Text cut to maxw and painted. */
static void tt_text_fit(tt_draw *d, double x, double y, const char *s, double size, bool bold,
                        tt_anchor a, double angle, tt_rgba col, double maxw) {
  tt_buf t = TT_BUF_INIT;
  tt_fit(d, s, size, bold, maxw, &t);
  tt_text(d, x, y, tt_buf_cstr(&t), size, bold, a, angle, col);
  tt_buf_free(&t);
}

/* ---- frame: title, legend, note -------------------------------------------------- */

static void tt_draw_title(tt_draw *d) {
  double y = d->pad + d->fs_title;
  tt_text_fit(d, d->w / 2, y, d->c->title, d->fs_title, true, TT_ANCHOR_MIDDLE, 0, TT_INK,
              d->w - 2 * d->pad);
  d->top = y + d->fs_title * 0.6;
}

/* Swatches and names in rows under the title (several series). */
static void tt_draw_legend_rows(tt_draw *d) {
  const tt_chart *c = d->c;
  double sw = d->fs_legend * 0.9, gap = d->fs_legend * 1.4, line_h = d->fs_legend * 1.6;
  double maxw = d->w - 2 * d->pad;
  /* lay the items out in lines first, to centre each line */
  size_t start = 0, lines = 0;
  tt_buf name = TT_BUF_INIT;
  while (start < c->nseries && lines < 3) {
    double used = 0;
    size_t end = start;
    while (end < c->nseries) {
      tt_buf_reset(&name);
      tt_fit(d, c->series[end].name, d->fs_legend, false, maxw / 3, &name);
      double iw = sw + d->fs_legend * 0.4 + tt_tw(d, tt_buf_cstr(&name), d->fs_legend, false);
      if (end > start && used + gap + iw > maxw) break;
      used += (end > start ? gap : 0) + iw;
      end++;
    }
    if (lines == 2 && end < c->nseries) end = end > start + 1 ? end - 1 : end; /* room for "…" */
    double x = (d->w - used) / 2, y = d->top + line_h * 0.75;
    for (size_t s = start; s < end; s++) {
      tt_buf_reset(&name);
      tt_fit(d, c->series[s].name, d->fs_legend, false, maxw / 3, &name);
      d->ops->rect(d->ud, x, y - sw * 0.85, sw, sw, tt_series_color(c, s));
      x += sw + d->fs_legend * 0.4;
      tt_text(d, x, y, tt_buf_cstr(&name), d->fs_legend, false, TT_ANCHOR_START, 0, TT_INK);
      x += tt_tw(d, tt_buf_cstr(&name), d->fs_legend, false) + gap;
    }
    if (lines == 2 && end < c->nseries) {
      tt_buf_reset(&name);
      tt_buf_printf(&name, "… and %zu more", c->nseries - end);
      tt_text(d, x, y, tt_buf_cstr(&name), d->fs_legend, false, TT_ANCHOR_START, 0, TT_MUTED);
    }
    d->top += line_h;
    start = end;
    lines++;
  }
  d->top += d->fs_legend * 0.3;
  tt_buf_free(&name);
}

static void tt_draw_note(tt_draw *d) {
  d->bottom = d->h - d->pad;
  if (!d->c->note) return;
  double y = d->h - d->pad * 0.8;
  tt_text_fit(d, d->pad, y, d->c->note, d->fs_note, false, TT_ANCHOR_START, 0, TT_MUTED,
              d->w - 2 * d->pad);
  d->bottom = y - d->fs_note * 1.5;
}

static void tt_draw_nodata(tt_draw *d) {
  double cy = (d->top + d->bottom) / 2;
  tt_text(d, d->w / 2, cy, "No data to plot", d->fs_axis * 1.2, false, TT_ANCHOR_MIDDLE, 0,
          TT_MUTED);
  tt_text(d, d->w / 2, cy + d->fs_axis * 1.8, "the query returned no rows with values",
          d->fs_tick, false, TT_ANCHOR_MIDDLE, 0, TT_MUTED);
}

/* ---- value ranges ------------------------------------------------------------------- */

static bool tt_x_range(const tt_chart *c, double *lo, double *hi) {
  *lo = INFINITY;
  *hi = -INFINITY;
  for (size_t i = 0; i < c->n; i++) {
    if (!isfinite(c->x[i])) continue;
    if (c->x[i] < *lo) *lo = c->x[i];
    if (c->x[i] > *hi) *hi = c->x[i];
  }
  if (c->kind == TT_CHART_HISTOGRAM && c->n) *hi = c->x[c->n - 1] + c->bin_width;
  return *lo <= *hi;
}

/* Ticks for a value axis of length len pixels; a zoomed axis ends exactly
 * where the chart's note says. */
static void tt_value_ticks(tt_draw *d, double lo, double hi, double len, tt_ticks *t) {
  int target = (int)(len / (d->fs_tick * 4.5));
  if (target > 10) target = 10;
  if (target < 3) target = 3;
  if (d->c->y_zoom) tt_ticks_number_at(lo, hi, d->c->y_zoom_at, target, t);
  else tt_ticks_number(lo, hi, target, t);
}

/* Ticks along a numeric or time x of pw pixels, few enough that labels
 * do not touch. */
static void tt_x_ticks(tt_draw *d, double lo, double hi, double pw, tt_ticks *t) {
  const tt_chart *c = d->c;
  bool time = c->xscale == TT_X_TIME;
  int target = (int)(pw / (d->fs_tick * 7));
  for (int round = 0; round < 4; round++) {
    if (target < 2) target = 2;
    if (time) tt_ticks_time(lo, hi, c->tunit, target, t);
    else tt_ticks_number(lo, hi, target, t);
    double widest = 0;
    tt_buf l = TT_BUF_INIT;
    for (size_t i = 0; i < t->n; i++) {
      tt_buf_reset(&l);
      tt_ticks_label(t, i, time, c->year_numbers, &l);
      double w = tt_tw(d, tt_buf_cstr(&l), d->fs_tick, false);
      if (w > widest) widest = w;
    }
    tt_buf_free(&l);
    double room = t->n > 1 ? pw / (double)(t->n - 1) : pw;
    if (widest + d->fs_tick * 1.5 <= room || target == 2) break;
    target = (int)(pw / (widest + d->fs_tick * 1.5));
  }
  if (c->int_x && !time && t->step < 1 && hi - lo < 60) { /* whole numbers: no 2020.5 */
    double first = ceil(lo), v;
    t->n = 0;
    for (v = first; v <= hi && t->n < 64; v += 1) t->v[t->n++] = v;
    t->step = 1;
    t->decimals = 0;
  }
}

static double tt_widest_tick(tt_draw *d, const tt_ticks *t, bool time, bool years) {
  double widest = 0;
  tt_buf l = TT_BUF_INIT;
  for (size_t i = 0; i < t->n; i++) {
    tt_buf_reset(&l);
    tt_ticks_label(t, i, time, years, &l);
    double w = tt_tw(d, tt_buf_cstr(&l), d->fs_tick, false);
    if (w > widest) widest = w;
  }
  tt_buf_free(&l);
  return widest;
}

/* ---- cartesian charts ------------------------------------------------------------ */

typedef struct tt_plot {
  double x, y, w, h;   /* the plot rectangle */
  double vlo, vhi;     /* value axis */
  double xlo, xhi;     /* numeric or time x */
  bool category;       /* x is slots */
  double slot;
} tt_plot;

static double tt_py(const tt_plot *p, double v) {
  return p->y + p->h - (v - p->vlo) / (p->vhi - p->vlo) * p->h;
}

static double tt_px(const tt_plot *p, const tt_chart *c, size_t i) {
  if (p->category) return p->x + ((double)i + 0.5) * p->slot;
  return p->x + (c->x[i] - p->xlo) / (p->xhi - p->xlo) * p->w;
}

static double tt_px_value(const tt_plot *p, double x) {
  return p->x + (x - p->xlo) / (p->xhi - p->xlo) * p->w;
}

/* How category labels under a vertical plot are shown. */
typedef struct tt_xlabels {
  double angle;   /* 0 or 45 degrees */
  double maxw;    /* each label cut to this */
  size_t every;   /* show every n-th label */
  double band;    /* height of the band they take */
} tt_xlabels;

static void tt_plan_category_labels(tt_draw *d, double pw, tt_xlabels *xl) {
  const tt_chart *c = d->c;
  double slot = pw / (double)c->n, widest = 0;
  for (size_t i = 0; i < c->n; i++) {
    double w = tt_tw(d, c->labels[i], d->fs_tick, false);
    if (w > widest) widest = w;
  }
  xl->every = 1;
  if (widest <= slot * 0.92) {
    xl->angle = 0;
    xl->maxw = slot * 0.92;
    xl->band = d->fs_tick * 1.6;
    return;
  }
  xl->angle = 45;
  double room = (d->bottom - d->top) * 0.3; /* at most this much height for labels */
  xl->maxw = fmin(widest, room / sin(M_PI / 4));
  double step = d->fs_tick * 1.5; /* rotated labels need this much slot each */
  if (slot < step) xl->every = (size_t)ceil(step / slot);
  xl->band = xl->maxw * sin(M_PI / 4) + d->fs_tick * 1.4;
}

static void tt_draw_grid_y(tt_draw *d, const tt_plot *p, const tt_ticks *t) {
  tt_buf l = TT_BUF_INIT;
  for (size_t i = 0; i < t->n; i++) {
    double y = tt_py(p, t->v[i]);
    d->ops->line(d->ud, p->x, y, p->x + p->w, y, d->k, t->v[i] == 0 ? TT_AXIS : TT_GRID);
    tt_buf_reset(&l);
    tt_ticks_label(t, i, false, false, &l);
    tt_text(d, p->x - d->fs_tick * 0.6, y + d->fs_tick * 0.35, tt_buf_cstr(&l), d->fs_tick, false,
            TT_ANCHOR_END, 0, TT_INK);
  }
  tt_buf_free(&l);
}

static void tt_value_label(tt_draw *d, double x, double y, double v, tt_anchor a, tt_rgba col) {
  tt_buf l = TT_BUF_INIT;
  tt_fmt_value(&l, v);
  tt_text(d, x, y, tt_buf_cstr(&l), d->fs_value, false, a, 0, col);
  tt_buf_free(&l);
}

static double tt_value_label_width(tt_draw *d, double v) {
  tt_buf l = TT_BUF_INIT;
  tt_fmt_value(&l, v);
  double w = tt_tw(d, tt_buf_cstr(&l), d->fs_value, false);
  tt_buf_free(&l);
  return w;
}

static void tt_draw_vbars(tt_draw *d, const tt_plot *p) {
  const tt_chart *c = d->c;
  double group = p->slot * (c->nseries > 1 ? 0.84 : 0.72);
  double bw = group / (double)c->nseries;
  double zero = tt_py(p, p->vlo > 0 ? p->vlo : p->vhi < 0 ? p->vhi : 0);
  /* values over the bars: on every bar or on none, so none looks missing */
  bool labels = c->n * c->nseries <= 40;
  for (size_t s = 0; labels && s < c->nseries; s++)
    for (size_t i = 0; labels && i < c->n; i++)
      if (!isnan(c->series[s].v[i]) && tt_value_label_width(d, c->series[s].v[i]) > bw + p->slot * 0.1)
        labels = false;
  for (size_t i = 0; i < c->n; i++) {
    double gx = p->x + (double)i * p->slot + (p->slot - group) / 2;
    for (size_t s = 0; s < c->nseries; s++) {
      double v = c->series[s].v[i];
      if (isnan(v)) continue;
      double y = tt_py(p, v), top = fmin(y, zero), hgt = fabs(zero - y);
      double gap = c->nseries > 1 && bw > 4 ? 1 : 0;
      d->ops->rect(d->ud, gx + (double)s * bw + gap / 2, top, bw - gap, fmax(hgt, 0.5),
                   tt_series_color(c, s));
      if (labels) {
        double ly = v >= 0 ? y - d->fs_value * 0.4 : y + d->fs_value * 1.1;
        if (ly < p->y + d->fs_value) ly = y + d->fs_value * 1.2; /* no room above: inside */
        tt_value_label(d, gx + ((double)s + 0.5) * bw, ly, v, TT_ANCHOR_MIDDLE, TT_INK);
      }
    }
  }
}

static void tt_draw_histogram(tt_draw *d, const tt_plot *p) {
  const tt_chart *c = d->c;
  double zero = tt_py(p, 0);
  bool labels = c->n <= 30;
  for (size_t i = 0; labels && i < c->n; i++)
    labels = tt_value_label_width(d, c->series[0].v[i]) <=
             tt_px_value(p, c->x[i] + c->bin_width) - tt_px_value(p, c->x[i]);
  for (size_t i = 0; i < c->n; i++) {
    double v = c->series[0].v[i];
    double x0 = tt_px_value(p, c->x[i]), x1 = tt_px_value(p, c->x[i] + c->bin_width);
    double y = tt_py(p, v);
    double gap = x1 - x0 > 3 ? 1 : 0;
    if (v > 0) d->ops->rect(d->ud, x0 + gap / 2, y, x1 - x0 - gap, zero - y, tt_palette(0));
    if (labels && v > 0)
      tt_value_label(d, (x0 + x1) / 2, y - d->fs_value * 0.4, v, TT_ANCHOR_MIDDLE, TT_INK);
  }
}

/* A line of n points that runs left to right, reduced to the first,
 * lowest, highest and last point of each pixel column: the same picture
 * for much less stroking when there are many points per pixel. Returns
 * the points kept (in place). */
static size_t tt_decimate(double *xy, size_t n) {
  for (size_t i = 1; i < n; i++)
    if (xy[2 * i] < xy[2 * (i - 1)]) return n; /* not left to right: keep all */
  size_t out = 0, i = 0;
  while (i < n) {
    double col = floor(xy[2 * i]);
    size_t j = i, lo = i, hi = i;
    while (j < n && floor(xy[2 * j]) == col) {
      if (xy[2 * j + 1] < xy[2 * lo + 1]) lo = j;
      if (xy[2 * j + 1] > xy[2 * hi + 1]) hi = j;
      j++;
    }
    size_t keep[4] = {i, lo < hi ? lo : hi, lo < hi ? hi : lo, j - 1}, last = SIZE_MAX;
    for (size_t k = 0; k < 4; k++) {
      if (keep[k] == last) continue;
      xy[2 * out] = xy[2 * keep[k]];
      xy[2 * out + 1] = xy[2 * keep[k] + 1];
      out++;
      last = keep[k];
    }
    i = j;
  }
  return out;
}

/* ---- value labels on a line: placed where they touch neither the line,
 * its markers nor each other ---------------------------------------------------- */

typedef struct tt_box {
  double x0, y0, x1, y1;
} tt_box;

static bool tt_boxes_meet(const tt_box *a, const tt_box *b) {
  return a->x0 < b->x1 && b->x0 < a->x1 && a->y0 < b->y1 && b->y0 < a->y1;
}

/* The segment from (ax, ay) to (bx, by) passes through the box: clipped to
 * the box's columns, its height range meets the box's. */
static bool tt_segment_meets(double ax, double ay, double bx, double by, const tt_box *b) {
  if (ax > bx) {
    double t = ax;
    ax = bx, bx = t;
    t = ay;
    ay = by, by = t;
  }
  if (bx < b->x0 || ax > b->x1) return false;
  double t0 = 0, t1 = 1;
  if (bx > ax) {
    t0 = fmax(0, (b->x0 - ax) / (bx - ax));
    t1 = fmin(1, (b->x1 - ax) / (bx - ax));
  }
  double y0 = ay + (by - ay) * t0, y1 = ay + (by - ay) * t1;
  return fmax(y0, y1) > b->y0 && fmin(y0, y1) < b->y1;
}

/* Where a label may go around its point: anchor, and offsets in units of
 * the label's font size (x from the point, y of the baseline). Above and
 * below first, then beside. */
typedef struct tt_spot {
  tt_anchor anchor;
  double dx, dy;
} tt_spot;

static const tt_spot tt_spots[] = {
    {TT_ANCHOR_MIDDLE, 0, -0.8}, {TT_ANCHOR_MIDDLE, 0, 1.6},  {TT_ANCHOR_START, 0.7, 0.36},
    {TT_ANCHOR_END, -0.7, 0.36}, {TT_ANCHOR_START, 0.45, -0.55}, {TT_ANCHOR_END, -0.45, -0.55},
    {TT_ANCHOR_START, 0.45, 1.4}, {TT_ANCHOR_END, -0.45, 1.4},
};

static tt_box tt_label_box(double x, double baseline, double w, double fs, tt_anchor a) {
  double x0 = a == TT_ANCHOR_START ? x : a == TT_ANCHOR_END ? x - w : x - w / 2;
  return (tt_box){x0, baseline - fs * 0.78, x0 + w, baseline + fs * 0.2};
}

/* The first spot for label k whose box stays on the canvas and meets no
 * segment of the line (drawn width included), no marker and no label
 * already placed; false when there is none. */
static bool tt_place_label(tt_draw *d, const tt_plot *p, const double *xy, size_t n, size_t k, double w,
                           const tt_box *placed, tt_box *out, const tt_spot **spot) {
  double fs = d->fs_value, clear = 1.2 * d->k + 1, mark = 3.6 * d->k + 1;
  for (size_t s = 0; s < sizeof tt_spots / sizeof tt_spots[0]; s++) {
    const tt_spot *sp = &tt_spots[s];
    tt_box b = tt_label_box(xy[2 * k] + sp->dx * fs, xy[2 * k + 1] + sp->dy * fs, w, fs, sp->anchor);
    bool ok = b.x0 >= p->x - d->pad * 0.5 && b.x1 <= d->w - d->pad * 0.5 && b.y0 >= d->top &&
              b.y1 <= p->y + p->h;
    tt_box grown = {b.x0 - clear, b.y0 - clear, b.x1 + clear, b.y1 + clear};
    for (size_t i = 0; ok && i + 1 < n; i++)
      ok = !tt_segment_meets(xy[2 * i], xy[2 * i + 1], xy[2 * i + 2], xy[2 * i + 3], &grown);
    for (size_t i = 0; ok && i < n; i++) {
      tt_box m = {xy[2 * i] - mark, xy[2 * i + 1] - mark, xy[2 * i] + mark, xy[2 * i + 1] + mark};
      ok = !tt_boxes_meet(&m, &b);
    }
    for (size_t i = 0; ok && i < k; i++) ok = !tt_boxes_meet(&placed[i], &b);
    if (ok) {
      *out = b;
      *spot = sp;
      return true;
    }
  }
  return false;
}

/* The value of every point beside it, or none at all when one of them
 * finds no free spot (so none looks missing). */
static void tt_draw_line_labels(tt_draw *d, const tt_plot *p, const double *xy, const double *v, size_t n) {
  tt_box *placed = tt_xcalloc(n ? n : 1, sizeof *placed);
  const tt_spot **spots = tt_xcalloc(n ? n : 1, sizeof *spots);
  bool all = true;
  for (size_t k = 0; all && k < n; k++)
    all = tt_place_label(d, p, xy, n, k, tt_value_label_width(d, v[k]), placed, &placed[k], &spots[k]);
  for (size_t k = 0; all && k < n; k++)
    tt_value_label(d, xy[2 * k] + spots[k]->dx * d->fs_value, xy[2 * k + 1] + spots[k]->dy * d->fs_value,
                   v[k], spots[k]->anchor, TT_INK);
  free(spots);
  free(placed);
}

/* Lines and areas: one path per series through the points that have a
 * value (a series missing at some x is joined across the gap: the x
 * positions are real). */
static void tt_draw_lines(tt_draw *d, const tt_plot *p) {
  const tt_chart *c = d->c;
  double *xy = tt_xcalloc(c->n * 2 + 4, sizeof *xy), *vals = tt_xcalloc(c->n + 1, sizeof *vals);
  double base = tt_py(p, p->vlo > 0 ? p->vlo : p->vhi < 0 ? p->vhi : 0);
  bool labels = c->n <= 16 && c->nseries == 1;
  for (size_t s = 0; s < c->nseries; s++) {
    tt_rgba col = tt_series_color(c, s);
    size_t n = 0;
    for (size_t i = 0; i < c->n; i++) {
      if (isnan(c->series[s].v[i])) continue;
      xy[2 * n] = tt_px(p, c, i);
      xy[2 * n + 1] = tt_py(p, c->series[s].v[i]);
      vals[n] = c->series[s].v[i];
      n++;
    }
    if (!n) continue;
    bool markers = n <= 60;
    if (n > 2 * (size_t)p->w) n = tt_decimate(xy, n);
    if (c->kind == TT_CHART_AREA && n > 1) {
      xy[2 * n] = xy[2 * (n - 1)];
      xy[2 * n + 1] = base;
      xy[2 * n + 2] = xy[0];
      xy[2 * n + 3] = base;
      tt_rgba fill = col;
      fill.a = c->nseries > 1 ? 0.22 : 0.3;
      d->ops->path(d->ud, xy, n + 2, true, fill, 0, col);
    }
    if (n > 1) d->ops->path(d->ud, xy, n, false, (tt_rgba){0, 0}, 2.4 * d->k, col);
    if (markers)
      for (size_t j = 0; j < n; j++) d->ops->circle(d->ud, xy[2 * j], xy[2 * j + 1], 3.6 * d->k, col);
    if (labels) tt_draw_line_labels(d, p, xy, vals, n); /* n <= 16: not decimated */
  }
  free(vals);
  free(xy);
}

static void tt_draw_scatter(tt_draw *d, const tt_plot *p) {
  const tt_chart *c = d->c;
  double r = (c->n > 2000 ? 2.2 : 3.6) * d->k;
  for (size_t s = 0; s < c->nseries; s++) {
    tt_rgba col = tt_series_color(c, s);
    col.a = c->n > 200 ? 0.55 : 0.85;
    for (size_t i = 0; i < c->n; i++) {
      double v = c->series[s].v[i];
      if (!isnan(v) && isfinite(c->x[i])) d->ops->circle(d->ud, tt_px(p, c, i), tt_py(p, v), r, col);
    }
  }
}

/* The x axis of a vertical plot: category labels or ticks, and its title. */
static void tt_draw_x_axis(tt_draw *d, const tt_plot *p, const tt_xlabels *xl, const tt_ticks *xt) {
  const tt_chart *c = d->c;
  double base = p->y + p->h;
  d->ops->line(d->ud, p->x, base, p->x + p->w, base, d->k, TT_AXIS);
  if (p->category) {
    for (size_t i = 0; i < c->n; i += xl->every) {
      double x = tt_px(p, c, i);
      if (xl->angle == 0) {
        tt_text_fit(d, x, base + d->fs_tick * 1.3, c->labels[i], d->fs_tick, false,
                    TT_ANCHOR_MIDDLE, 0, TT_INK, xl->maxw);
      } else {
        tt_text_fit(d, x + d->fs_tick * 0.3, base + d->fs_tick * 0.9, c->labels[i], d->fs_tick,
                    false, TT_ANCHOR_END, 45, TT_INK, xl->maxw);
      }
    }
  } else {
    bool time = c->xscale == TT_X_TIME;
    tt_buf l = TT_BUF_INIT;
    for (size_t i = 0; i < xt->n; i++) {
      double x = tt_px_value(p, xt->v[i]);
      if (x < p->x - 0.5 || x > p->x + p->w + 0.5) continue;
      d->ops->line(d->ud, x, base, x, base + d->fs_tick * 0.35, d->k, TT_AXIS);
      tt_buf_reset(&l);
      tt_ticks_label(xt, i, time, c->year_numbers, &l);
      tt_text(d, x, base + d->fs_tick * 1.45, tt_buf_cstr(&l), d->fs_tick, false,
              TT_ANCHOR_MIDDLE, 0, TT_INK);
    }
    tt_buf_free(&l);
  }
  if (c->x_label)
    tt_text_fit(d, p->x + p->w / 2, base + xl->band + d->fs_axis * 1.2, c->x_label, d->fs_axis,
                true, TT_ANCHOR_MIDDLE, 0, TT_INK, p->w);
}

static void tt_draw_vertical(tt_draw *d) {
  const tt_chart *c = d->c;
  tt_plot p = {0};
  p.category = c->xscale == TT_X_CATEGORY && c->kind != TT_CHART_HISTOGRAM;
  if (!tt_chart_value_range(c, &p.vlo, &p.vhi)) {
    tt_draw_nodata(d);
    return;
  }
  double axis_title = c->y_label ? d->fs_axis * 1.8 : 0;
  /* a first guess at the plot height for the value ticks */
  double guess_h = (d->bottom - d->top) - d->fs_tick * 2 - d->fs_axis * 2;
  tt_ticks yt;
  tt_value_ticks(d, p.vlo, p.vhi, guess_h, &yt);
  p.vlo = yt.lo;
  p.vhi = yt.hi;
  double left = d->pad + axis_title + tt_widest_tick(d, &yt, false, false) + d->fs_tick * 0.9;
  double right = d->pad * 1.5;
  p.x = left;
  p.w = fmax(d->w - left - right, 10); /* a tiny canvas with wide labels */
  tt_xlabels xl = {.every = 1, .band = d->fs_tick * 1.9};
  tt_ticks xt = {0};
  if (p.category) {
    p.slot = p.w / (double)c->n;
    tt_plan_category_labels(d, p.w, &xl);
  } else {
    if (!tt_x_range(c, &p.xlo, &p.xhi)) {
      tt_draw_nodata(d);
      return;
    }
    if (c->xscale == TT_X_TIME) {
      double pad = (p.xhi - p.xlo) * 0.03;
      if (pad == 0) pad = c->tunit == TT_T_YEAR ? 180 : c->tunit == TT_T_MONTH ? 15 : 0.5;
      p.xlo -= pad;
      p.xhi += pad;
      tt_x_ticks(d, p.xlo, p.xhi, p.w, &xt);
    } else {
      tt_x_ticks(d, p.xlo, p.xhi, p.w, &xt);
      if (c->kind == TT_CHART_HISTOGRAM) { /* bins fill the axis exactly */
        if (p.xhi == p.xlo) p.xhi = p.xlo + 1;
      } else {
        p.xlo = xt.lo;
        p.xhi = xt.hi;
      }
    }
  }
  if (!p.category) { /* the last tick's label must not run off the right edge */
    double widest = tt_widest_tick(d, &xt, c->xscale == TT_X_TIME, c->year_numbers);
    if (xt.n && tt_px_value(&p, xt.v[xt.n - 1]) + widest / 2 > d->w - d->pad / 2) {
      double room = d->w - d->pad / 2 - widest / 2 - p.x;
      double frac = (xt.v[xt.n - 1] - p.xlo) / (p.xhi - p.xlo);
      if (frac > 0 && room > 10) p.w = fmin(p.w, room / frac);
    }
  }
  double xtitle = c->x_label ? d->fs_axis * 1.8 : 0;
  p.y = d->top + d->fs_value * 0.6;
  p.h = d->bottom - xl.band - xtitle - p.y;
  if (p.h < 10) p.h = 10;
  if (p.w < 10) p.w = 10;
  if (p.xhi <= p.xlo) p.xhi = p.xlo + 1;

  tt_draw_grid_y(d, &p, &yt);
  switch (c->kind) {
  case TT_CHART_BAR: tt_draw_vbars(d, &p); break;
  case TT_CHART_HISTOGRAM: tt_draw_histogram(d, &p); break;
  case TT_CHART_SCATTER: tt_draw_scatter(d, &p); break;
  default: tt_draw_lines(d, &p); break;
  }
  tt_draw_x_axis(d, &p, &xl, &xt);
  if (c->y_label)
    tt_text_fit(d, d->pad + d->fs_axis * 0.9, p.y + p.h / 2, c->y_label, d->fs_axis, true,
                TT_ANCHOR_MIDDLE, 90, TT_INK, p.h);
}

/* Horizontal bars: categories down the left, values along the bottom. */
static void tt_draw_horizontal(tt_draw *d) {
  const tt_chart *c = d->c;
  tt_plot p = {0};
  if (!tt_chart_value_range(c, &p.vlo, &p.vhi)) {
    tt_draw_nodata(d);
    return;
  }
  double label_w = 0;
  for (size_t i = 0; i < c->n; i++) label_w = fmax(label_w, tt_tw(d, c->labels[i], d->fs_tick, false));
  label_w = fmin(label_w, d->w * 0.32);
  double top_title = c->x_label ? d->fs_axis * 1.5 : 0;
  double vtitle = c->y_label ? d->fs_axis * 1.8 : 0;
  p.x = d->pad + label_w + d->fs_tick * 0.8;
  p.y = d->top + top_title;
  p.h = d->bottom - p.y - d->fs_tick * 1.9 - vtitle;
  bool labels = c->nseries == 1 && p.h / (double)c->n >= d->fs_value * 1.15;
  double vlw = 0;
  for (size_t i = 0; labels && i < c->n; i++)
    if (!isnan(c->series[0].v[i])) vlw = fmax(vlw, tt_value_label_width(d, c->series[0].v[i]));
  p.w = d->w - p.x - d->pad * 1.5 - (labels ? vlw + d->fs_value * 0.6 : 0);
  if (p.w < 10) p.w = 10;
  if (p.h < 10) p.h = 10;
  tt_ticks xt;
  int target = (int)(p.w / (d->fs_tick * 7));
  tt_ticks_number(p.vlo, p.vhi, target < 3 ? 3 : target > 10 ? 10 : target, &xt);
  double widest = tt_widest_tick(d, &xt, false, false);
  if (xt.n > 1 && widest + d->fs_tick * 1.5 > p.w / (double)(xt.n - 1))
    tt_ticks_number(p.vlo, p.vhi, (int)(p.w / (widest + d->fs_tick * 1.5)), &xt);
  p.xlo = xt.lo;
  p.xhi = xt.hi;
  /* the last tick's label is centred on the plot's right edge: keep it in */
  widest = tt_widest_tick(d, &xt, false, false);
  if (p.x + p.w + widest / 2 > d->w - d->pad / 2) p.w = d->w - d->pad / 2 - widest / 2 - p.x;
  if (p.w < 10) p.w = 10;
  double slot = p.h / (double)c->n;
  size_t every = slot < d->fs_tick * 1.15 ? (size_t)ceil(d->fs_tick * 1.15 / slot) : 1;
  /* grid and value ticks */
  tt_buf l = TT_BUF_INIT;
  double base = p.y + p.h;
  for (size_t i = 0; i < xt.n; i++) {
    double x = tt_px_value(&p, xt.v[i]);
    d->ops->line(d->ud, x, p.y, x, base, d->k, xt.v[i] == 0 ? TT_AXIS : TT_GRID);
    tt_buf_reset(&l);
    tt_ticks_label(&xt, i, false, false, &l);
    tt_text(d, x, base + d->fs_tick * 1.45, tt_buf_cstr(&l), d->fs_tick, false, TT_ANCHOR_MIDDLE,
            0, TT_INK);
  }
  double zero = tt_px_value(&p, p.xlo > 0 ? p.xlo : p.xhi < 0 ? p.xhi : 0);
  double group = slot * (c->nseries > 1 ? 0.84 : 0.72), bh = group / (double)c->nseries;
  for (size_t i = 0; i < c->n; i++) {
    double gy = p.y + (double)i * slot + (slot - group) / 2;
    for (size_t s = 0; s < c->nseries; s++) {
      double v = c->series[s].v[i];
      if (isnan(v)) continue;
      double x = tt_px_value(&p, v);
      d->ops->rect(d->ud, fmin(x, zero), gy + (double)s * bh, fmax(fabs(x - zero), 0.5), bh,
                   tt_series_color(c, s));
      if (labels) {
        double ly = gy + bh / 2 + d->fs_value * 0.36;
        if (v >= 0) tt_value_label(d, x + d->fs_value * 0.4, ly, v, TT_ANCHOR_START, TT_INK);
        else tt_value_label(d, x - d->fs_value * 0.4, ly, v, TT_ANCHOR_END, TT_INK);
      }
    }
    if (i % every == 0)
      tt_text_fit(d, p.x - d->fs_tick * 0.6, p.y + ((double)i + 0.5) * slot + d->fs_tick * 0.36,
                  c->labels[i], d->fs_tick, false, TT_ANCHOR_END, 0, TT_INK, label_w);
  }
  d->ops->line(d->ud, zero, p.y, zero, base, d->k, TT_AXIS);
  if (c->x_label)
    tt_text_fit(d, p.x - d->fs_tick * 0.6, p.y - d->fs_axis * 0.5, c->x_label, d->fs_axis, true,
                TT_ANCHOR_END, 0, TT_INK, label_w + d->pad);
  if (c->y_label)
    tt_text_fit(d, p.x + p.w / 2, base + d->fs_tick * 1.9 + d->fs_axis * 1.1, c->y_label,
                d->fs_axis, true, TT_ANCHOR_MIDDLE, 0, TT_INK, p.w);
  tt_buf_free(&l);
}

/* ---- pie ---------------------------------------------------------------------------- */

static void tt_draw_pie(tt_draw *d) {
  const tt_chart *c = d->c;
  const double *v = c->series[0].v;
  double total = 0;
  for (size_t i = 0; i < c->n; i++)
    if (!isnan(v[i]) && v[i] > 0) total += v[i];
  if (!(total > 0)) {
    tt_draw_nodata(d);
    return;
  }
  /* the legend: swatch, label, share and value per slice */
  tt_buf *items = tt_xcalloc(c->n, sizeof *items);
  double legend_w = 0, maxw = d->w * 0.42;
  for (size_t i = 0; i < c->n; i++) {
    tt_buf t = TT_BUF_INIT;
    tt_fit(d, c->labels[i], d->fs_legend, false, maxw * 0.6, &t);
    tt_buf_printf(&t, "  %.1f %%  (", 100 * v[i] / total);
    tt_fmt_value(&t, v[i]);
    tt_buf_puts(&t, ")");
    items[i] = t;
    legend_w = fmax(legend_w, tt_tw(d, tt_buf_cstr(&t), d->fs_legend, false));
  }
  double sw = d->fs_legend * 0.9, text_w = fmin(legend_w, maxw);
  legend_w = sw + d->fs_legend * 0.5 + text_w;
  double avail_h = d->bottom - d->top;
  double r = fmin((d->w - legend_w - 4 * d->pad) / 2, avail_h / 2) * 0.94;
  if (r < 5) r = 5;
  /* the pie and its legend, centred together */
  double group = 2 * r + 2 * d->pad + legend_w;
  double cx = (d->w - group) / 2 + r, cy = d->top + avail_h / 2;
  double a = 0;
  for (size_t i = 0; i < c->n; i++) {
    double share = v[i] / total;
    if (!(share > 0)) continue;
    tt_rgba col = c->folded && i + 1 == c->n ? tt_palette_other() : tt_palette(i);
    d->ops->wedge(d->ud, cx, cy, r, a, a + share * 2 * M_PI, col, TT_WHITE);
    double mid = a + share * M_PI;
    if (share * 2 * M_PI * r * 0.62 > d->fs_value * 3.2) {
      tt_buf t = TT_BUF_INIT;
      tt_buf_printf(&t, "%.0f %%", 100 * share);
      /* black on light slices (orange, sky blue, yellow, grey), white elsewhere */
      bool light = col.rgb == 0xE69F00 || col.rgb == 0x56B4E9 || col.rgb == 0xF0E442 ||
                   col.rgb == 0x9A9A9A;
      tt_text(d, cx + sin(mid) * r * 0.64, cy - cos(mid) * r * 0.64 + d->fs_value * 0.36,
              tt_buf_cstr(&t), d->fs_value * 1.1, true, TT_ANCHOR_MIDDLE, 0,
              light ? TT_INK_ON_COLOUR : TT_WHITE);
      tt_buf_free(&t);
    }
    a += share * 2 * M_PI;
  }
  double line_h = d->fs_legend * 1.7;
  size_t fits = (size_t)fmax(1, floor(avail_h / line_h));
  size_t show = c->n <= fits ? c->n : fits - 1;
  double lx = cx + r + 2 * d->pad;
  double ly = cy - (double)(show + (show < c->n)) * line_h / 2 + line_h * 0.7;
  for (size_t i = 0; i < show; i++) {
    tt_rgba col = c->folded && i + 1 == c->n ? tt_palette_other() : tt_palette(i);
    d->ops->rect(d->ud, lx, ly - sw * 0.85, sw, sw, col);
    tt_text_fit(d, lx + sw + d->fs_legend * 0.5, ly, tt_buf_cstr(&items[i]), d->fs_legend, false,
                TT_ANCHOR_START, 0, TT_INK, text_w + 1);
    ly += line_h;
  }
  if (show < c->n) {
    tt_buf t = TT_BUF_INIT;
    tt_buf_printf(&t, "… and %zu more", c->n - show);
    tt_text(d, lx, ly, tt_buf_cstr(&t), d->fs_legend, false, TT_ANCHOR_START, 0, TT_MUTED);
    tt_buf_free(&t);
  }
  for (size_t i = 0; i < c->n; i++) tt_buf_free(&items[i]);
  free(items);
}

void tt_chart_draw(const tt_chart *c, int width, int height, tt_text_metrics *m,
                   const tt_canvas_ops *ops, void *ud) {
  tt_draw d = {.c = c, .ops = ops, .ud = ud, .m = m, .w = width, .h = height};
  d.k = fmax(0.4, fmin(4, fmin(width / 1200.0, height / 700.0)));
  double k = fmax(d.k, 0.75); /* text stays readable on small charts */
  d.pad = 18 * d.k;
  d.fs_title = 22 * k;
  d.fs_axis = 14 * k;
  d.fs_tick = 12.5 * k;
  d.fs_value = 11.5 * k;
  d.fs_note = 11.5 * k;
  d.fs_legend = 12.5 * k;
  ops->rect(ud, 0, 0, width, height, TT_WHITE);
  tt_draw_title(&d);
  if (c->legend && c->kind != TT_CHART_PIE) tt_draw_legend_rows(&d);
  tt_draw_note(&d);
  if (c->n == 0 || tt_chart_npoints(c) == 0) {
    tt_draw_nodata(&d);
    return;
  }
  if (c->kind == TT_CHART_PIE) tt_draw_pie(&d);
  else if (c->kind == TT_CHART_BAR && c->horizontal) tt_draw_horizontal(&d);
  else tt_draw_vertical(&d);
}
