/* chart.h — public face of the chart layer: a declarative chart spec (what
 * a model or a user asks for), checked against a result set and turned
 * into one chart model, which three renderers draw: PNG through cairo,
 * SVG, and a preview for the terminal. No code from the model runs; the
 * spec is data. Knows result sets (db layer), nothing about models,
 * agents or front ends. */
#ifndef TT_CHART_H
#define TT_CHART_H

#include "db/db.h"

typedef enum tt_chart_kind {
  TT_CHART_BAR,
  TT_CHART_LINE,
  TT_CHART_AREA,
  TT_CHART_SCATTER,
  TT_CHART_PIE,
  TT_CHART_HISTOGRAM,
} tt_chart_kind;

typedef enum tt_chart_sort {
  TT_CHART_SORT_DEFAULT, /* per kind: bars keep the result's order for
                          * text x and sort by x for numbers and dates;
                          * lines and areas by x; pies by y; scatter none */
  TT_CHART_SORT_NONE,    /* the result's order */
  TT_CHART_SORT_X,       /* by x ascending */
  TT_CHART_SORT_Y,       /* by y (the total of all series), largest first */
} tt_chart_sort;

typedef enum tt_chart_orient {
  TT_CHART_ORIENT_AUTO,       /* horizontal bars when labels are long or many */
  TT_CHART_ORIENT_VERTICAL,
  TT_CHART_ORIENT_HORIZONTAL,
} tt_chart_orient;

/* What to draw. Column names match the result's case-insensitively. */
typedef struct tt_chart_spec {
  tt_chart_kind kind;
  char *x;              /* categories, numbers or dates; histogram: the values;
                         * pie: the slice labels */
  char **y;             /* value columns (numeric), 1..8; histogram: none */
  size_t ny;
  char *series;         /* optional: a column whose values split y into series */
  char *title;          /* required */
  char *x_label;        /* optional axis titles (default: the column names) */
  char *y_label;
  tt_chart_sort sort;
  long limit;           /* keep the first N points/bars/slices after sorting
                         * (pie: N-1 slices plus "Other"); 0: the defaults */
  tt_chart_orient orient;  /* bar only */
} tt_chart_spec;

/* Parses a spec from JSON: {"kind", "x", "y" (a name or a list), "series"?,
 * "title", "x_label"?, "y_label"?, "sort"? ("x"|"y"|"none"), "limit"?,
 * "orientation"? ("vertical"|"horizontal")}. Unknown keys, wrong types and
 * out-of-range values are errors that name the key and what is allowed.
 * Returns NULL with the reason in err (TT_ERR_CONFIG). */
tt_chart_spec *tt_chart_spec_from_json(const json_t *j, tt_error *err);
json_t *tt_chart_spec_to_json(const tt_chart_spec *s);
void tt_chart_spec_free(tt_chart_spec *s);
/* The JSON Schema of that object (for tool definitions), as text. */
const char *tt_chart_spec_schema(void);
const char *tt_chart_kind_name(tt_chart_kind k);

/* ---- the chart model ------------------------------------------------------ */

typedef struct tt_chart tt_chart;

/* Checks spec against the rows (the columns exist; y columns hold numbers;
 * x suits the kind: a line needs an ordered x, a histogram numbers) and
 * builds the model: values grouped and sorted, series split, NULLs and
 * non-numeric cells skipped (and counted), dates on a time axis (year,
 * month or day granularity, from the values), tick values, top-N plus
 * "Other" for pies, the truncation note when the rows were cut. On error
 * (TT_ERR_CONFIG: the spec does not fit the rows), err says what is wrong
 * and lists the available columns with their types
 * ("x: no column 'year'; the columns are InvoiceYear (integer), total
 * (real)"), so a model can repair its spec. Zero rows is not an error: the
 * chart says "no data". */
tt_chart *tt_chart_build(const tt_chart_spec *spec, const tt_result *rows, tt_error *err);
void tt_chart_free(tt_chart *c);

/* A one-line description for answers and traces: "bar chart, 5 bars:
 * Invoices per year". */
void tt_chart_describe(const tt_chart *c, tt_buf *out);
/* Points (bars, slices, line points) drawn, all series together. */
size_t tt_chart_npoints(const tt_chart *c);
/* What the chart leaves out ("Showing the first 60 of 5,000 bars"), or
 * NULL when it shows every row. */
const char *tt_chart_note(const tt_chart *c);
tt_chart_kind tt_chart_get_kind(const tt_chart *c);

/* ---- renderers ---------------------------------------------------------------- */

#define TT_CHART_DEFAULT_WIDTH 1200
#define TT_CHART_DEFAULT_HEIGHT 700
#define TT_CHART_MIN_SIDE 100
#define TT_CHART_MAX_SIDE 8000
#define TT_CHART_MAX_PIXELS 32000000

/* True when width x height can be drawn; else err (TT_ERR_CONFIG) says
 * the limits. */
bool tt_chart_size_ok(int width, int height, tt_error *err);

/* PNG through cairo (loaded with dlopen on first use: cairo and its
 * libraries cost start-up time every other command would pay). Title,
 * axes with "nice" ticks and thousands separators, rotated or cut long
 * labels, a legend for several series, a colour-blind-safe palette.
 * width and height in pixels (see tt_chart_size_ok). The file is written
 * whole or not at all (a temporary file renamed into place). False with
 * the reason in err: TT_ERR_CONFIG (the size), TT_ERR_UNAVAILABLE (cairo
 * missing), TT_ERR_LIMIT (cairo ran out of memory), TT_ERR_IO (the file
 * cannot be written). */
bool tt_chart_write_png(const tt_chart *c, const char *path, int width, int height,
                        tt_error *err);
/* True when PNGs can be drawn (cairo loads); else err (TT_ERR_UNAVAILABLE)
 * says so; err may be NULL. */
bool tt_chart_png_available(tt_error *err);
/* The same drawing as SVG 1.1 (valid XML, text as <text>). */
bool tt_chart_write_svg(const tt_chart *c, const char *path, int width, int height,
                        tt_error *err);
void tt_chart_render_svg(const tt_chart *c, int width, int height, tt_buf *out);
/* PNG or SVG, by the extension of path (.png, .svg; any case); another
 * extension is a TT_ERR_CONFIG. */
bool tt_chart_write_file(const tt_chart *c, const char *path, int width, int height,
                         tt_error *err);

typedef struct tt_chart_term_opts {
  size_t width;    /* columns available (>= 20) */
  size_t height;   /* rows for line and scatter plots (>= 5) */
  bool color;      /* ANSI colours (callers honour NO_COLOR) */
  bool unicode;    /* block and braille characters; else ASCII */
} tt_chart_term_opts;

/* A preview for the terminal: horizontal bars of block characters with
 * labels and values for bars, pies (as shares) and histograms; a braille
 * plot with axes for lines, areas and scatter. Labels are escaped. */
void tt_chart_render_term(const tt_chart *c, const tt_chart_term_opts *o, tt_buf *out);

#endif
