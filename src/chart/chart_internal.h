/* chart_internal.h — what the files of the chart layer share: the chart
 * model that tt_chart_build fills in and every renderer reads, axis ticks
 * and number formats, date parsing, the drawing surface that PNG and SVG
 * both implement (so both get the same layout), and cairo loaded on
 * demand. */
#ifndef TT_CHART_INTERNAL_H
#define TT_CHART_INTERNAL_H

#include <stdint.h>

#include "chart/chart.h"

#define TT_CHART_MAX_SERIES 10     /* beyond: the largest 9 and "Other" */
#define TT_CHART_PIE_SLICES 8      /* default: 7 slices and "Other" */
#define TT_CHART_MAX_BARS 60       /* default cut for bar charts */
#define TT_CHART_MAX_POINTS 100000 /* points kept in all (rows of a result) */
#define TT_CHART_MAX_LABEL 120     /* characters of a category label kept */

/* How x is laid out. */
typedef enum tt_xscale {
  TT_X_CATEGORY, /* one slot per distinct value, in the model's order */
  TT_X_NUMBER,   /* a linear number axis */
  TT_X_TIME,     /* a linear time axis: x in days since 1970-01-01 */
} tt_xscale;

/* The granularity the dates of a time axis have. */
typedef enum tt_tunit {
  TT_T_YEAR,
  TT_T_MONTH,
  TT_T_DAY,
  TT_T_TIME, /* times of day too */
} tt_tunit;

typedef struct tt_chart_series {
  char *name;
  double *v; /* one value per point; NAN where this series has none */
} tt_chart_series;

struct tt_chart {
  tt_chart_kind kind;
  char *title, *x_label, *y_label;
  tt_xscale xscale;
  tt_tunit tunit;
  bool horizontal;  /* bars drawn sideways */
  bool year_numbers; /* a number axis of plain years: no thousands separators */
  bool int_x;       /* x holds whole numbers only: ticks on whole numbers */
  size_t n;         /* points: bars, slices, bins or x positions */
  char **labels;    /* n labels for people (categories, dates, bin ranges) */
  double *x;        /* n positions (number and time scales; histogram: bin starts) */
  double bin_width; /* histogram */
  size_t nseries;
  tt_chart_series *series;
  bool legend;      /* several series, or a pie */
  /* what the chart leaves out, for the note under it */
  size_t rows;      /* rows of the result */
  size_t skipped;   /* rows without a usable x or y */
  size_t merged;    /* rows whose x repeated, added to the earlier one */
  size_t shown_of;  /* points before the limit cut them (0: nothing cut) */
  size_t folded;    /* categories or series folded into "Other" */
  bool rows_cut;    /* the result itself was cut short */
  char *note;       /* one line, or NULL */
  /* The value axis of a line chart runs to zero unless the data calls for
   * a zoomed axis (tt_chart_y_zoom in model.c); then it stops at y_zoom_at,
   * its end nearest zero, and the note says so. */
  bool y_zoom;
  double y_zoom_at;
  double y_zoom_step; /* the nice step y_zoom_at is a multiple of */
};

/* Share of the values' magnitude under which their spread is drawn on a
 * zoomed axis: from zero it would be a flat line. */
#define TT_CHART_ZOOM_SPREAD 0.02

/* ---- numbers, ticks and dates (axis.c) ------------------------------------ */

typedef struct tt_ticks {
  double lo, hi;    /* the axis range (covers the data, ends on ticks) */
  double step;
  size_t n;
  double v[64];
  int decimals;     /* for labels */
  tt_tunit tunit;   /* time axes: the unit of the labels */
  int tstep;        /* time axes: the step in that unit */
} tt_ticks;

/* The smallest of 1, 2, 2.5 and 5 times a power of ten that is >= raw. */
double tt_nice_step(double raw);
/* Nice tick values for [lo, hi] with about target ticks (2..20). */
void tt_ticks_number(double lo, double hi, int target, tt_ticks *t);
/* The same, but the axis ends exactly at the value `at` (lo or hi), with
 * ticks every nice step from there: a zoomed axis. */
void tt_ticks_number_at(double lo, double hi, double at, int target, tt_ticks *t);
/* The value range a chart's value axis must cover (zero included for bars,
 * areas, histograms and unzoomed lines; a zoomed line axis to its start);
 * false when there are no values. */
bool tt_chart_value_range(const tt_chart *c, double *lo, double *hi);
/* Ticks on a time axis (days since the epoch) of the given granularity. */
void tt_ticks_time(double lo, double hi, tt_tunit unit, int target, tt_ticks *t);
/* The label of tick i. */
void tt_ticks_label(const tt_ticks *t, size_t i, bool time_axis, bool year_numbers, tt_buf *out);

/* A tick value: thousands separators and the decimals step needs; past a
 * billion 1.2305B or 3.5T; past 1e15, or for steps below a millionth,
 * scientific with enough digits to tell step apart (magnitude: the
 * largest value on the axis). */
void tt_fmt_tick(tt_buf *out, double v, double step, double magnitude);
/* v with thousands separators and the given decimals ("12,345.60");
 * beyond a billion as 1.2B, 3.4T, or 1.2e18. */
void tt_fmt_number(tt_buf *out, double v, int decimals);
/* A value for a label: integers as they are, others with up to two
 * decimals, trailing zeros dropped. */
void tt_fmt_value(tt_buf *out, double v);

/* Parses YYYY-MM-DD[ HH:MM[:SS[.fff]]] (T allowed), YYYY-MM or YYYY.
 * *parts: 1 year, 2 month, 3 day, 4 time of day given. */
bool tt_parse_date(const char *s, size_t n, double *days, int *parts);
/* days since the epoch to a label of the given granularity. */
void tt_fmt_date(tt_buf *out, double days, tt_tunit unit);
double tt_days_from_civil(int64_t y, unsigned m, unsigned d);
void tt_civil_from_days(int64_t z, int64_t *y, unsigned *m, unsigned *d);

/* ---- the drawing surface (draw.c lays out, png.c and svg.c paint) ---------- */

typedef enum tt_anchor { TT_ANCHOR_START, TT_ANCHOR_MIDDLE, TT_ANCHOR_END } tt_anchor;

typedef struct tt_rgba {
  uint32_t rgb;  /* 0xRRGGBB */
  double a;      /* 0..1 */
} tt_rgba;

typedef struct tt_canvas_ops {
  void (*rect)(void *ud, double x, double y, double w, double h, tt_rgba fill);
  void (*line)(void *ud, double x0, double y0, double x1, double y1, double width, tt_rgba c);
  /* n points (x, y pairs); closed with fill, or an open line */
  void (*path)(void *ud, const double *xy, size_t n, bool closed, tt_rgba fill, double width,
               tt_rgba stroke);
  void (*circle)(void *ud, double cx, double cy, double r, tt_rgba fill);
  /* a pie slice from angle a0 to a1 (radians, clockwise from 12 o'clock) */
  void (*wedge)(void *ud, double cx, double cy, double r, double a0, double a1, tt_rgba fill,
                tt_rgba edge);
  /* text on baseline y; angle in degrees, counter-clockwise, around (x, y) */
  void (*text)(void *ud, double x, double y, const char *s, double size, bool bold,
               tt_anchor anchor, double angle, tt_rgba c);
} tt_canvas_ops;

/* Text widths in pixels, the same for every renderer so PNG and SVG lay
 * out alike: cairo's own metrics of DejaVu Sans when cairo is there, an
 * estimate from character classes otherwise. */
typedef struct tt_text_metrics tt_text_metrics;
tt_text_metrics *tt_text_metrics_new(void);
void tt_text_metrics_free(tt_text_metrics *m);
double tt_text_width(tt_text_metrics *m, const char *s, double size, bool bold);

/* Lays the chart out on width x height pixels and paints it through ops. */
void tt_chart_draw(const tt_chart *c, int width, int height, tt_text_metrics *m,
                   const tt_canvas_ops *ops, void *ud);

/* The colour-blind-safe palette (Okabe & Ito), and grey for "Other". */
tt_rgba tt_palette(size_t i);
tt_rgba tt_palette_other(void);
#define TT_CHART_FONT "DejaVu Sans"

/* ---- cairo, loaded with dlopen (cairo_api.c) ------------------------------- */

typedef struct tt_cairo_api tt_cairo_api;
/* The loaded library, or NULL with the reason in err (TT_ERR_UNAVAILABLE,
 * with what to install in the hint). */
const tt_cairo_api *tt_cairo_get(tt_error *err);

#endif
