/* model.c — from a chart spec and a result set to the chart model: the
 * columns checked (with errors that list the columns and their types, so a
 * model can repair its spec), x read as categories, numbers or dates,
 * rows grouped by x (and series), sorted, cut to the limit, histograms
 * binned, pies folded into top-N plus "Other", the value range every
 * renderer shows (from zero, or a zoomed line axis), and a note saying
 * what the chart leaves out or where a zoomed axis starts. */
#include "chart/chart_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- columns ------------------------------------------------------------------- */

/* What a column holds, from its values (declared types can lie or be
 * missing for expressions). */
static const char *tt_col_kind(const tt_result *r, size_t col) {
  bool ints = false, reals = false, text = false, blob = false;
  for (size_t i = 0; i < r->nrows; i++) {
    switch (tt_result_cell(r, i, col)->type) {
    case TT_VAL_INT: ints = true; break;
    case TT_VAL_REAL: reals = true; break;
    case TT_VAL_TEXT: text = true; break;
    case TT_VAL_BLOB: blob = true; break;
    case TT_VAL_NULL: break;
    }
  }
  if (blob) return "blob";
  if (text) return ints || reals ? "mixed" : "text";
  if (ints && reals) return "number";
  if (ints) return "integer";
  if (reals) return "real";
  return r->decltypes && r->decltypes[col] && *r->decltypes[col] ? r->decltypes[col] : "empty";
}

/* An error's text is composed in a tt_buf (the lists of columns are built
 * piece by piece) and set on the tt_error once; a list stops before the
 * text outgrows the error's message, keeping room for " and N more". */
#define TT_MSG_ROOM (sizeof ((tt_error *)0)->message - 1 - 24)

/* Sets err (TT_ERR_CONFIG: the spec does not fit the rows) to msg, which
 * it frees; returns false for the caller to return. */
static bool tt_build_fail(tt_error *err, tt_buf *msg) {
  tt_error_set(err, TT_ERR_CONFIG, "%s", tt_buf_cstr(msg));
  tt_buf_free(msg);
  return false;
}

/* Appends "<sep>name (kind)" to msg when it fits TT_MSG_ROOM; false when
 * it does not (msg is left as it was). */
static bool tt_list_one(tt_buf *msg, const char *sep, const char *name, const char *kind) {
  size_t before = msg->len;
  tt_buf_printf(msg, "%s%.80s (%s)", sep, name, kind);
  if (msg->len <= TT_MSG_ROOM) return true;
  msg->len = before;
  msg->data[before] = '\0';
  return false;
}

/* Appends "; the columns are a (integer), b (text)" to msg. */
static void tt_list_columns(const tt_result *r, tt_buf *msg) {
  if (r->ncols == 0) {
    tt_buf_puts(msg, "; the result has no columns");
    return;
  }
  tt_buf_puts(msg, "; the columns are ");
  size_t show = 0;
  while (show < r->ncols && show < 30 &&
         tt_list_one(msg, show ? ", " : "", r->names[show], tt_col_kind(r, show)))
    show++;
  if (show < r->ncols) tt_buf_printf(msg, " and %zu more", r->ncols - show);
}

/* The column called name (case-insensitive; "t.Name" also finds "Name"),
 * or an error naming the closest one and every column. */
static bool tt_find_col(const tt_result *r, const char *role, const char *name, size_t *idx,
                        tt_error *err) {
  for (size_t c = 0; c < r->ncols; c++)
    if (tt_streq_nocase(r->names[c], name)) {
      *idx = c;
      return true;
    }
  const char *dot = strrchr(name, '.');
  for (size_t c = 0; dot && dot[1] && c < r->ncols; c++)
    if (tt_streq_nocase(r->names[c], dot + 1)) {
      *idx = c;
      return true;
    }
  tt_buf msg = TT_BUF_INIT;
  tt_buf_printf(&msg, "%s: no column '%.80s'", role, name);
  size_t best = SIZE_MAX, best_d = 4;
  for (size_t c = 0; c < r->ncols; c++) {
    size_t d = tt_edit_distance(r->names[c], name, 3);
    if (d < best_d) best_d = d, best = c;
  }
  if (best != SIZE_MAX) tt_buf_printf(&msg, " (did you mean '%.80s'?)", r->names[best]);
  tt_list_columns(r, &msg);
  return tt_build_fail(err, &msg);
}

/* A cell as a number: integers, finite reals and text that is wholly a
 * decimal number. Magnitudes past 1e300 are refused (axis arithmetic). */
static bool tt_cell_number(const tt_value *v, double *out) {
  double d;
  switch (v->type) {
  case TT_VAL_INT: d = (double)v->u.i; break;
  case TT_VAL_REAL: d = v->u.r; break;
  case TT_VAL_TEXT: {
    if (v->len == 0 || v->len > 64 || strlen(v->u.s) != v->len) return false;
    char *end;
    d = strtod(v->u.s, &end);
    if (end == v->u.s || *end || v->u.s[0] == ' ' || strpbrk(v->u.s, "xXnNiI")) return false;
    break;
  }
  default: return false;
  }
  if (!isfinite(d) || fabs(d) > 1e300) return false;
  *out = d;
  return true;
}

static bool tt_contains_nocase(const char *s, const char *word) {
  size_t n = strlen(word);
  for (; *s; s++) {
    size_t i = 0;
    while (i < n && s[i] && (s[i] | 0x20) == (word[i] | 0x20)) i++;
    if (i == n) return true;
  }
  return false;
}

static bool tt_cell_date(const tt_value *v, double *days, int *parts) {
  return v->type == TT_VAL_TEXT && v->len <= 40 && tt_parse_date(v->u.s, v->len, days, parts);
}

/* How the x column can be read. */
typedef struct tt_xprobe {
  size_t nonnull, numbers, dates;
  bool years;       /* every number a whole year, 1000..2999 */
  tt_tunit tunit;   /* granularity of the dates */
} tt_xprobe;

static void tt_probe_x(const tt_result *r, size_t col, tt_xprobe *p) {
  memset(p, 0, sizeof *p);
  bool years = true, in_1900s = true;
  tt_tunit unit = TT_T_YEAR;
  for (size_t i = 0; i < r->nrows; i++) {
    const tt_value *v = tt_result_cell(r, i, col);
    if (v->type == TT_VAL_NULL) continue;
    p->nonnull++;
    double d, days;
    int parts;
    if (tt_cell_date(v, &days, &parts) && !(parts == 1 && v->len != 4)) {
      p->dates++;
      tt_tunit u = TT_T_YEAR;
      int64_t y;
      unsigned m, dd;
      tt_civil_from_days((int64_t)floor(days), &y, &m, &dd);
      if (parts == 2 || m != 1) u = TT_T_MONTH;
      if (dd != 1) u = TT_T_DAY;
      if (days != floor(days)) u = TT_T_TIME;
      if (u > unit) unit = u;
    }
    if (tt_cell_number(v, &d)) {
      p->numbers++;
      if (d != floor(d) || d < 1000 || d > 2999) years = false;
      if (d < 1900 || d > 2100) in_1900s = false;
    }
  }
  p->tunit = unit;
  /* Plain numbers between 1000 and 2999 are years when the column says so
   * or they all fall in 1900..2100. */
  p->years = p->numbers == p->nonnull && p->nonnull > 0 && years &&
             (in_1900s || tt_contains_nocase(r->names[col], "year"));
}

/* ---- a small string-keyed hash map ---------------------------------------------- */

typedef struct tt_keymap {
  size_t cap, n;
  const char **keys; /* in arena */
  size_t *lens;
  size_t *vals;
  tt_arena *arena;
} tt_keymap;

static uint64_t tt_hash(const char *s, size_t n) { return tt_fnv1a64(TT_FNV1A64_INIT, s, n); }

static void tt_keymap_init(tt_keymap *m) {
  memset(m, 0, sizeof *m);
  m->cap = 64;
  m->keys = tt_xcalloc(m->cap, sizeof *m->keys);
  m->lens = tt_xcalloc(m->cap, sizeof *m->lens);
  m->vals = tt_xcalloc(m->cap, sizeof *m->vals);
  m->arena = tt_arena_new();
}

static void tt_keymap_free(tt_keymap *m) {
  free(m->keys);
  free(m->lens);
  free(m->vals);
  tt_arena_free(m->arena);
}

static size_t tt_keymap_slot(const tt_keymap *m, const char *k, size_t n) {
  size_t i = (size_t)(tt_hash(k, n) & (m->cap - 1));
  while (m->keys[i] && !(m->lens[i] == n && memcmp(m->keys[i], k, n) == 0)) i = (i + 1) & (m->cap - 1);
  return i;
}

/* The value stored under k, or inserts val and returns it. *added tells. */
static size_t tt_keymap_get(tt_keymap *m, const char *k, size_t n, size_t val, bool *added) {
  size_t i = tt_keymap_slot(m, k, n);
  if (m->keys[i]) {
    *added = false;
    return m->vals[i];
  }
  *added = true;
  if ((m->n + 1) * 2 > m->cap) {
    tt_keymap old = *m;
    m->cap *= 2;
    m->keys = tt_xcalloc(m->cap, sizeof *m->keys);
    m->lens = tt_xcalloc(m->cap, sizeof *m->lens);
    m->vals = tt_xcalloc(m->cap, sizeof *m->vals);
    for (size_t j = 0; j < old.cap; j++) {
      if (!old.keys[j]) continue;
      size_t s = tt_keymap_slot(m, old.keys[j], old.lens[j]);
      m->keys[s] = old.keys[j];
      m->lens[s] = old.lens[j];
      m->vals[s] = old.vals[j];
    }
    free(old.keys);
    free(old.lens);
    free(old.vals);
    i = tt_keymap_slot(m, k, n);
  }
  m->keys[i] = tt_arena_memdup(m->arena, k, n);
  m->lens[i] = n;
  m->vals[i] = val;
  m->n++;
  return val;
}

/* ---- building ---------------------------------------------------------------------- */

/* Points as they are gathered: a label, a sort key and nseries values. */
typedef struct tt_points {
  size_t n, cap, nseries;
  char **labels;
  double *key;  /* number or date of x (NAN for text) */
  double *vals; /* n * nseries */
} tt_points;

static size_t tt_points_add(tt_points *p, char *label, double key) {
  if (p->n == p->cap) {
    p->cap = p->cap ? p->cap * 2 : 64;
    p->labels = tt_xrealloc(p->labels, p->cap * sizeof *p->labels);
    p->key = tt_xrealloc(p->key, p->cap * sizeof *p->key);
    p->vals = tt_xrealloc(p->vals, p->cap * p->nseries * sizeof *p->vals);
  }
  p->labels[p->n] = label;
  p->key[p->n] = key;
  for (size_t s = 0; s < p->nseries; s++) p->vals[p->n * p->nseries + s] = NAN;
  return p->n++;
}

static void tt_points_free(tt_points *p) {
  for (size_t i = 0; i < p->n; i++) free(p->labels[i]);
  free(p->labels);
  free(p->key);
  free(p->vals);
}

/* Text for a chart: valid UTF-8, control characters as spaces, invisible
 * and bidi format characters left out, at most max characters. */
static char *tt_clean_text(const char *s, size_t n, size_t max) {
  tt_buf b = TT_BUF_INIT;
  size_t chars = 0;
  for (size_t i = 0; i < n;) {
    if (chars == max) {
      tt_buf_puts(&b, "…");
      break;
    }
    uint32_t cp;
    size_t k = tt_utf8_decode((const unsigned char *)s + i, n - i, &cp);
    if (!k) {
      tt_buf_puts(&b, "\xEF\xBF\xBD");
      chars++;
      i++;
      continue;
    }
    if (cp < 0x20 || (cp >= 0x7F && cp <= 0x9F)) {
      tt_buf_putc(&b, ' ');
      chars++;
    } else if (!tt_cp_is_unsafe(cp)) {
      tt_buf_append(&b, s + i, k);
      chars++;
    }
    i += k;
  }
  return tt_buf_detach(&b);
}

static char *tt_label(const char *s, size_t n) { return tt_clean_text(s, n, TT_CHART_MAX_LABEL); }

static char *tt_clean_str(const char *s) { return tt_clean_text(s, strlen(s), 400); }

static char *tt_value_label(const tt_value *v) {
  if (v->type == TT_VAL_NULL) return tt_xstrdup("(none)");
  tt_buf t = TT_BUF_INIT;
  tt_value_to_text(&t, v);
  char *l = tt_label(tt_buf_cstr(&t), t.len);
  tt_buf_free(&t);
  return l;
}

static tt_chart *tt_chart_alloc(const tt_chart_spec *spec, const tt_result *rows) {
  tt_chart *c = tt_xcalloc(1, sizeof *c);
  c->kind = spec->kind;
  c->title = tt_clean_str(spec->title);
  c->rows = rows->nrows;
  c->rows_cut = rows->truncated;
  return c;
}

void tt_chart_free(tt_chart *c) {
  if (!c) return;
  free(c->title);
  free(c->x_label);
  free(c->y_label);
  for (size_t i = 0; i < c->n; i++) free(c->labels[i]);
  free(c->labels);
  free(c->x);
  for (size_t s = 0; s < c->nseries; s++) {
    free(c->series[s].name);
    free(c->series[s].v);
  }
  free(c->series);
  free(c->note);
  free(c);
}

/* Series chosen from the values of the series column: the largest
 * TT_CHART_MAX_SERIES-1 by total and "Other" when there are more. */
typedef struct tt_series_map {
  tt_keymap map;   /* series text -> series index */
  size_t n;        /* series drawn */
  char **names;
} tt_series_map;

typedef struct tt_build {
  const tt_chart_spec *spec;
  const tt_result *r;
  size_t xcol, scol;
  bool has_series;
  size_t ycols[8];
  size_t ny;
  tt_xprobe px;
  tt_chart *c;
  tt_points pts;
  tt_series_map sm;
} tt_build;

/* The key of a series value: its text; NULL apart from any text. */
static void tt_series_key(const tt_value *v, tt_buf *key) {
  tt_buf_reset(key);
  if (v->type == TT_VAL_NULL) tt_buf_puts(key, "\x01null");
  else tt_value_to_text(key, v);
}

static void tt_series_pick(tt_build *b) {
  const tt_result *r = b->r;
  tt_keymap all;
  tt_keymap_init(&all);
  size_t cap = 16, n = 0;
  double *total = tt_xcalloc(cap, sizeof *total);
  char **names = tt_xcalloc(cap, sizeof *names);
  tt_buf key = TT_BUF_INIT;
  for (size_t i = 0; i < r->nrows; i++) {
    const tt_value *sv = tt_result_cell(r, i, b->scol);
    tt_series_key(sv, &key);
    bool added;
    size_t k = tt_keymap_get(&all, key.data ? key.data : "", key.len, n, &added);
    if (added) {
      if (n == cap) {
        cap *= 2;
        total = tt_xrealloc(total, cap * sizeof *total);
        names = tt_xrealloc(names, cap * sizeof *names);
      }
      total[n] = 0;
      names[n] = tt_value_label(sv);
      n++;
    }
    double y;
    if (tt_cell_number(tt_result_cell(r, i, b->ycols[0]), &y)) total[k] += fabs(y);
  }
  /* rank: largest totals first, first appearance breaks ties */
  size_t *order = tt_xcalloc(n ? n : 1, sizeof *order);
  for (size_t i = 0; i < n; i++) order[i] = i;
  bool fold = n > TT_CHART_MAX_SERIES;
  size_t keep = fold ? TT_CHART_MAX_SERIES - 1 : n;
  for (size_t i = 0; fold && i < keep; i++) { /* partial selection sort: keep is small */
    size_t best = i;
    for (size_t j = i + 1; j < n; j++)
      if (total[order[j]] > total[order[best]] ||
          (total[order[j]] == total[order[best]] && order[j] < order[best]))
        best = j;
    size_t t = order[i];
    order[i] = order[best];
    order[best] = t;
  }
  /* the kept series in order of first appearance */
  for (size_t i = 1; i < keep; i++)
    for (size_t j = i; j > 0 && order[j] < order[j - 1]; j--) {
      size_t t = order[j];
      order[j] = order[j - 1];
      order[j - 1] = t;
    }
  size_t *index_of = tt_xcalloc(n ? n : 1, sizeof *index_of);
  for (size_t i = 0; i < n; i++) index_of[i] = keep; /* "Other" */
  for (size_t i = 0; i < keep; i++) index_of[order[i]] = i;
  tt_keymap_init(&b->sm.map);
  b->sm.n = keep + (fold ? 1 : 0);
  b->sm.names = tt_xcalloc(b->sm.n ? b->sm.n : 1, sizeof *b->sm.names);
  for (size_t i = 0; i < keep; i++) b->sm.names[i] = tt_xstrdup(names[order[i]]);
  if (fold) {
    b->sm.names[keep] = tt_xstrdup("Other");
    b->c->folded = n - keep;
  }
  for (size_t j = 0; j < all.cap; j++) {
    if (!all.keys[j]) continue;
    bool added;
    tt_keymap_get(&b->sm.map, all.keys[j], all.lens[j], index_of[all.vals[j]], &added);
  }
  for (size_t i = 0; i < n; i++) free(names[i]);
  free(names);
  free(total);
  free(order);
  free(index_of);
  tt_buf_free(&key);
  tt_keymap_free(&all);
}

/* The x of row i: its label, sort key and position. False when the row has
 * no usable x on this scale. */
static bool tt_row_x(tt_build *b, size_t i, tt_buf *key, double *pos) {
  const tt_value *v = tt_result_cell(b->r, i, b->xcol);
  tt_buf_reset(key);
  *pos = NAN;
  if (b->c->xscale == TT_X_CATEGORY) {
    if (v->type != TT_VAL_NULL) tt_value_to_text(key, v);
    else tt_buf_puts(key, "\x01null"); /* apart from any text */
    double d;
    int parts;
    if (b->px.dates == b->px.nonnull && b->px.dates && tt_cell_date(v, &d, &parts)) *pos = d;
    else if (b->px.numbers == b->px.nonnull && tt_cell_number(v, &d)) *pos = d;
    return true;
  }
  double d;
  int parts;
  if (b->c->xscale == TT_X_TIME) {
    if (b->px.years && tt_cell_number(v, &d)) d = tt_days_from_civil((int64_t)d, 1, 1);
    else if (!tt_cell_date(v, &d, &parts)) return false;
  } else if (!tt_cell_number(v, &d)) {
    return false;
  }
  *pos = d;
  if (d == 0) d = 0; /* -0 and 0 are one x */
  tt_buf_append(key, &d, sizeof d); /* the value's bytes: exact, and no printf */
  return true;
}

static char *tt_point_label(const tt_build *b, size_t row, double pos) {
  const tt_chart *c = b->c;
  if (c->xscale == TT_X_TIME || (c->xscale == TT_X_CATEGORY && b->px.dates == b->px.nonnull &&
                                 b->px.dates && isfinite(pos))) {
    tt_buf t = TT_BUF_INIT;
    tt_fmt_date(&t, pos, c->xscale == TT_X_TIME ? c->tunit : b->px.tunit);
    return tt_buf_detach(&t);
  }
  return tt_value_label(tt_result_cell(b->r, row, b->xcol));
}

/* Gathers the points: rows grouped by x (scatter: one point a row), each
 * y in its series. */
static void tt_gather(tt_build *b) {
  const tt_result *r = b->r;
  tt_chart *c = b->c;
  b->pts.nseries = c->nseries;
  tt_keymap xs;
  tt_keymap_init(&xs);
  tt_buf key = TT_BUF_INIT, skey = TT_BUF_INIT;
  bool group = c->kind != TT_CHART_SCATTER;
  for (size_t i = 0; i < r->nrows && b->pts.n < TT_CHART_MAX_POINTS; i++) {
    double pos;
    if (!tt_row_x(b, i, &key, &pos)) {
      c->skipped++;
      continue;
    }
    double y[8];
    bool any = false;
    for (size_t k = 0; k < b->ny; k++) {
      y[k] = NAN;
      any |= tt_cell_number(tt_result_cell(r, i, b->ycols[k]), &y[k]);
    }
    if (!any) {
      c->skipped++;
      continue;
    }
    size_t first_series = 0;
    if (b->has_series) {
      tt_series_key(tt_result_cell(r, i, b->scol), &skey);
      bool added;
      first_series = tt_keymap_get(&b->sm.map, skey.data ? skey.data : "", skey.len, 0, &added);
    }
    size_t p;
    bool added = true;
    if (group) p = tt_keymap_get(&xs, key.data ? key.data : "", key.len, b->pts.n, &added);
    if (added) p = tt_points_add(&b->pts, tt_point_label(b, i, pos), pos);
    bool merged = false;
    for (size_t k = 0; k < b->ny; k++) {
      if (isnan(y[k])) continue;
      double *slot = &b->pts.vals[p * c->nseries + first_series + k];
      if (isnan(*slot)) {
        *slot = y[k];
      } else {
        *slot += y[k];
        merged = true;
      }
    }
    c->merged += merged;
  }
  tt_buf_free(&key);
  tt_buf_free(&skey);
  tt_keymap_free(&xs);
}

/* ---- ordering ---------------------------------------------------------------------- */

typedef struct tt_sort_ctx {
  const tt_points *p;
  tt_chart_sort by;
  double *total;
} tt_sort_ctx;

static int tt_cmp_double(double a, double b) {
  bool na = isnan(a), nb = isnan(b);
  if (na || nb) return na - nb; /* NAN last */
  return (a > b) - (a < b);
}

static int tt_cmp_points(const tt_sort_ctx *s, size_t a, size_t b) {
  if (s->by == TT_CHART_SORT_Y) return tt_cmp_double(-s->total[a], -s->total[b]);
  int r = tt_cmp_double(s->p->key[a], s->p->key[b]);
  if (r == 0 && isnan(s->p->key[a])) r = strcmp(s->p->labels[a], s->p->labels[b]);
  return r;
}

/* A stable merge sort of idx[0..n) (tmp holds n), so equal points keep
 * the result's order. */
static void tt_merge_sort(size_t *idx, size_t *tmp, size_t n, const tt_sort_ctx *s) {
  if (n < 2) return;
  size_t h = n / 2;
  tt_merge_sort(idx, tmp, h, s);
  tt_merge_sort(idx + h, tmp, n - h, s);
  size_t i = 0, j = h, k = 0;
  while (i < h && j < n) tmp[k++] = tt_cmp_points(s, idx[j], idx[i]) < 0 ? idx[j++] : idx[i++];
  while (i < h) tmp[k++] = idx[i++];
  while (j < n) tmp[k++] = idx[j++];
  memcpy(idx, tmp, n * sizeof *idx);
}

/* The order of the points, as an index permutation. */
static size_t *tt_sort_points(const tt_points *p, tt_chart_sort by) {
  size_t *idx = tt_xcalloc(p->n ? p->n : 1, sizeof *idx);
  for (size_t i = 0; i < p->n; i++) idx[i] = i;
  if (by == TT_CHART_SORT_NONE || by == TT_CHART_SORT_DEFAULT || p->n < 2) return idx;
  double *total = tt_xcalloc(p->n, sizeof *total);
  for (size_t i = 0; i < p->n; i++) {
    bool any = false;
    for (size_t k = 0; k < p->nseries; k++) {
      double v = p->vals[i * p->nseries + k];
      if (!isnan(v)) total[i] += v, any = true;
    }
    if (!any) total[i] = NAN;
  }
  tt_sort_ctx ctx = {p, by, total};
  size_t *tmp = tt_xcalloc(p->n, sizeof *tmp);
  tt_merge_sort(idx, tmp, p->n, &ctx);
  free(tmp);
  free(total);
  return idx;
}

static tt_chart_sort tt_default_sort(const tt_build *b) {
  const tt_chart *c = b->c;
  bool ordered_x = b->px.nonnull && (b->px.dates == b->px.nonnull || b->px.numbers == b->px.nonnull);
  switch (c->kind) {
  case TT_CHART_PIE: return TT_CHART_SORT_Y;
  case TT_CHART_SCATTER: return TT_CHART_SORT_NONE;
  case TT_CHART_BAR: return ordered_x ? TT_CHART_SORT_X : TT_CHART_SORT_NONE;
  default: return c->xscale == TT_X_CATEGORY ? TT_CHART_SORT_NONE : TT_CHART_SORT_X;
  }
}

/* Moves the gathered points into the chart in the chosen order, keeping
 * the first keep of them; for a pie, the rest become one "Other" slice. */
static void tt_emit_points(tt_build *b, const size_t *order, size_t keep, bool other) {
  tt_chart *c = b->c;
  tt_points *p = &b->pts;
  size_t n = keep + (other ? 1 : 0);
  c->n = n;
  c->labels = tt_xcalloc(n ? n : 1, sizeof *c->labels);
  c->x = tt_xcalloc(n ? n : 1, sizeof *c->x);
  for (size_t s = 0; s < c->nseries; s++) c->series[s].v = tt_xcalloc(n ? n : 1, sizeof(double));
  for (size_t i = 0; i < keep; i++) {
    size_t j = order[i];
    c->labels[i] = p->labels[j];
    p->labels[j] = NULL;
    c->x[i] = p->key[j];
    for (size_t s = 0; s < c->nseries; s++) c->series[s].v[i] = p->vals[j * p->nseries + s];
  }
  if (other) {
    c->labels[keep] = tt_xstrdup("Other");
    c->x[keep] = NAN;
    for (size_t s = 0; s < c->nseries; s++) {
      double sum = 0;
      for (size_t i = keep; i < p->n; i++) {
        double v = p->vals[order[i] * p->nseries + s];
        if (!isnan(v)) sum += v;
      }
      c->series[s].v[keep] = sum;
    }
  }
}

/* ---- kinds ---------------------------------------------------------------------- */

static bool tt_check_numeric(const tt_build *b, size_t col, const char *role, tt_error *err) {
  const tt_result *r = b->r;
  size_t nonnull = 0, numbers = 0;
  for (size_t i = 0; i < r->nrows; i++) {
    const tt_value *v = tt_result_cell(r, i, col);
    double d;
    if (v->type == TT_VAL_NULL) continue;
    nonnull++;
    numbers += tt_cell_number(v, &d);
  }
  if (nonnull == 0 || numbers > 0) return true;
  tt_buf msg = TT_BUF_INIT;
  tt_buf_printf(&msg, "%s: column '%.80s' holds %s, not numbers", role, r->names[col],
                tt_col_kind(r, col));
  bool first = true;
  size_t left = 0;
  for (size_t c = 0; c < r->ncols; c++) {
    const char *k = tt_col_kind(r, c);
    if (strcmp(k, "integer") && strcmp(k, "real") && strcmp(k, "number")) continue;
    if (left || !tt_list_one(&msg, first ? "; numeric columns: " : ", ", r->names[c], k)) left++;
    else first = false;
  }
  if (left) tt_buf_printf(&msg, " and %zu more", left);
  if (first && !left) tt_list_columns(r, &msg);
  return tt_build_fail(err, &msg);
}

static int tt_cmp_values(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* The bin width: with a limit, about that many bins; otherwise the wider
 * of Freedman-Diaconis (2 IQR / n^(1/3), robust to long tails) capped at
 * 50 bins and Sturges' log2(n) + 1 bins; rounded to a nice step, and to a
 * whole number for whole-number data. Always > 0. */
static double tt_histogram_width(double *vals, size_t nv, double lo, double hi, long limit,
                                 bool ints) {
  double span = hi - lo;
  if (!(span > fabs(lo) * 1e-12) || !(span > 0)) return ints ? 1 : fmax(fabs(lo) * 0.1, 1e-300);
  if (ints && !limit && span < 40) return 1; /* few whole numbers: a bar for each */
  double bins;
  if (limit) {
    bins = (double)(limit > 200 ? 200 : limit);
  } else {
    qsort(vals, nv, sizeof *vals, tt_cmp_values);
    double iqr = vals[(nv * 3) / 4] - vals[nv / 4];
    double sturges = ceil(log2((double)nv)) + 1;
    double fd = iqr > 0 ? span / (2 * iqr / cbrt((double)nv)) : sturges;
    bins = fmax(sturges, fmin(fd, 50));
  }
  double width = tt_nice_step(span / bins);
  if (ints) width = width <= 1 ? 1 : width < 10 ? floor(width) : width; /* 2.5 -> 2 */
  /* a nice step may give up to twice the bins asked for; above 200, exact */
  if (span / width > 200) width = span / 200;
  if (!(width > 0) || !isfinite(width)) width = span > 0 && isfinite(span) ? span : 1;
  return width;
}

/* Histogram: bins of a nice width over the values of x. */
static void tt_build_histogram(tt_build *b) {
  tt_chart *c = b->c;
  const tt_result *r = b->r;
  double *vals = tt_xcalloc(r->nrows ? r->nrows : 1, sizeof *vals);
  size_t nv = 0;
  double lo = INFINITY, hi = -INFINITY;
  for (size_t i = 0; i < r->nrows; i++) {
    double d;
    if (!tt_cell_number(tt_result_cell(r, i, b->xcol), &d)) {
      c->skipped++;
      continue;
    }
    vals[nv++] = d;
    if (d < lo) lo = d;
    if (d > hi) hi = d;
  }
  c->nseries = 1;
  c->series = tt_xcalloc(1, sizeof *c->series);
  c->series[0].name = tt_xstrdup("rows");
  c->xscale = TT_X_NUMBER;
  c->year_numbers = b->px.years;
  if (nv == 0) {
    c->series[0].v = tt_xcalloc(1, sizeof(double));
    c->labels = tt_xcalloc(1, sizeof *c->labels);
    c->x = tt_xcalloc(1, sizeof *c->x);
    free(vals);
    return;
  }
  bool ints = true;
  for (size_t i = 0; i < nv && ints; i++) ints = vals[i] == floor(vals[i]) && fabs(vals[i]) < 9e15;
  c->int_x = ints;
  double width = tt_histogram_width(vals, nv, lo, hi, b->spec->limit, ints);
  lo = floor(lo / width) * width;
  if (!isfinite(lo)) lo = vals[0];
  /* whole numbers: bins [k, k+w) hold the values k..k+w-1, one more bin
   * for the maximum; otherwise the last bin includes its upper edge */
  double bins = ints ? floor((hi - lo) / width) + 1 : ceil((hi - lo) / width - 1e-9);
  if (!(bins <= 200)) width = (hi - lo) / 199.5, bins = 200; /* also NaN */
  size_t nbins = bins < 1 ? 1 : (size_t)bins;
  c->n = nbins;
  c->bin_width = width;
  c->labels = tt_xcalloc(nbins, sizeof *c->labels);
  c->x = tt_xcalloc(nbins, sizeof *c->x);
  c->series[0].v = tt_xcalloc(nbins, sizeof(double));
  for (size_t i = 0; i < nv; i++) {
    double k = floor((vals[i] - lo) / width);
    size_t bin = !(k >= 0) ? 0 : k >= (double)nbins ? nbins - 1 : (size_t)k;
    c->series[0].v[bin] += 1;
  }
  double mag = fmax(fabs(lo), fabs(lo + (double)nbins * width));
  for (size_t i = 0; i < nbins; i++) {
    double first = lo + (double)i * width;
    /* whole numbers: the bar of k..k+w-1 is drawn from k-0.5, so a tick at
     * k sits under the middle of its value */
    c->x[i] = ints ? first - 0.5 : first;
    tt_buf l = TT_BUF_INIT;
    if (ints && width == 1) {
      tt_buf_printf(&l, "%.0f", first); /* one value a bin */
    } else if (ints) {
      double last = first + width - 1;
      if (c->year_numbers) tt_buf_printf(&l, "%.0f–%.0f", first, last);
      else {
        tt_fmt_number(&l, first, 0);
        tt_buf_puts(&l, "–");
        tt_fmt_number(&l, last, 0);
      }
    } else {
      tt_fmt_tick(&l, c->x[i], width, mag);
      tt_buf_puts(&l, "–");
      tt_fmt_tick(&l, c->x[i] + width, width, mag);
    }
    c->labels[i] = tt_buf_detach(&l);
  }
  free(vals);
}

/* The x scale a kind gets from what x holds. */
static bool tt_choose_scale(tt_build *b, tt_error *err) {
  tt_chart *c = b->c;
  const tt_xprobe *p = &b->px;
  bool dates = p->nonnull && p->dates == p->nonnull;
  bool numbers = p->nonnull && p->numbers == p->nonnull;
  switch (c->kind) {
  case TT_CHART_BAR:
  case TT_CHART_PIE:
    c->xscale = TT_X_CATEGORY;
    return true;
  case TT_CHART_LINE:
  case TT_CHART_AREA:
  case TT_CHART_SCATTER:
    if (p->years || dates) {
      c->xscale = TT_X_TIME;
      c->tunit = p->years ? TT_T_YEAR : p->tunit;
    } else if (numbers || (p->nonnull == 0)) {
      c->xscale = TT_X_NUMBER;
    } else if (c->kind == TT_CHART_SCATTER) {
      tt_error_set(err, TT_ERR_CONFIG, "x: a scatter plot needs numbers or dates on x, and "
                   "column '%.80s' holds %s; use a bar chart for categories",
                   b->r->names[b->xcol], tt_col_kind(b->r, b->xcol));
      return false;
    } else {
      c->xscale = TT_X_CATEGORY; /* a line through categories, in the result's order */
    }
    return true;
  case TT_CHART_HISTOGRAM:
    return tt_check_numeric(b, b->xcol, "x", err);
  }
  return true;
}

static void tt_make_series(tt_build *b) {
  tt_chart *c = b->c;
  if (b->has_series) {
    tt_series_pick(b);
    c->nseries = b->sm.n;
    c->series = tt_xcalloc(c->nseries ? c->nseries : 1, sizeof *c->series);
    for (size_t s = 0; s < c->nseries; s++) {
      c->series[s].name = b->sm.names[s];
      b->sm.names[s] = NULL;
    }
  } else {
    c->nseries = b->ny;
    c->series = tt_xcalloc(b->ny, sizeof *c->series);
    for (size_t s = 0; s < b->ny; s++) c->series[s].name = tt_clean_str(b->r->names[b->ycols[s]]);
  }
}

/* Pie: values must not be negative; slices of nothing are dropped. */
static bool tt_pie_check(tt_build *b, tt_error *err) {
  tt_points *p = &b->pts;
  for (size_t i = 0; i < p->n; i++) {
    if (!(p->vals[i] < 0)) continue;
    tt_buf t = TT_BUF_INIT;
    tt_fmt_value(&t, p->vals[i]);
    tt_error_set(err, TT_ERR_CONFIG, "y: a pie chart shows shares of a whole and column '%.80s' "
                 "has a negative value (%s for '%.60s'); use a bar chart",
                 b->r->names[b->ycols[0]], tt_buf_cstr(&t), p->labels[i]);
    tt_buf_free(&t);
    return false;
  }
  size_t out = 0;
  for (size_t i = 0; i < p->n; i++) {
    if (isnan(p->vals[i]) || p->vals[i] == 0) {
      free(p->labels[i]);
      continue;
    }
    p->labels[out] = p->labels[i];
    p->key[out] = p->key[i];
    p->vals[out] = p->vals[i];
    out++;
  }
  p->n = out;
  return true;
}

/* ---- the value axis of line charts ------------------------------------------------ */

/* A line chart's value axis starts at zero, so a change looks as large as
 * it is (a 3.6 % dip is a small dip, not a crash). It is zoomed only when
 * every value lies on one side of zero and their spread is under
 * TT_CHART_ZOOM_SPREAD (2 %) of the largest magnitude: from zero the line
 * would be flat. The zoomed axis stops at a round number below the values
 * (above them when all are negative), which the note states. */
static void tt_chart_y_zoom(tt_chart *c) {
  if (c->kind != TT_CHART_LINE) return;
  double lo = INFINITY, hi = -INFINITY;
  for (size_t s = 0; s < c->nseries; s++)
    for (size_t i = 0; i < c->n; i++) {
      double v = c->series[s].v[i];
      if (isnan(v)) continue;
      lo = fmin(lo, v);
      hi = fmax(hi, v);
    }
  if (!(lo <= hi) || (lo <= 0 && hi >= 0)) return;
  double spread = hi - lo, magnitude = fmax(fabs(lo), fabs(hi));
  if (!(spread > 0) || spread >= TT_CHART_ZOOM_SPREAD * magnitude) return;
  double step = tt_nice_step(spread / 4);
  c->y_zoom = true;
  c->y_zoom_step = step;
  c->y_zoom_at = lo > 0 ? floor(lo / step + 1e-9) * step : ceil(hi / step - 1e-9) * step;
}

bool tt_chart_value_range(const tt_chart *c, double *lo, double *hi) {
  *lo = INFINITY;
  *hi = -INFINITY;
  for (size_t s = 0; s < c->nseries; s++)
    for (size_t i = 0; i < c->n; i++) {
      double v = c->series[s].v[i];
      if (isnan(v)) continue;
      if (v < *lo) *lo = v;
      if (v > *hi) *hi = v;
    }
  if (*lo > *hi) return false;
  if (c->y_zoom) {
    if (c->y_zoom_at > 0) *lo = c->y_zoom_at;
    else *hi = c->y_zoom_at;
    return true;
  }
  bool zero = c->kind == TT_CHART_BAR || c->kind == TT_CHART_AREA || c->kind == TT_CHART_HISTOGRAM ||
              c->kind == TT_CHART_LINE;
  if (zero) {
    if (*lo > 0) *lo = 0;
    if (*hi < 0) *hi = 0;
  }
  return true;
}

/* "y axis starts at 9,800" for a zoomed axis. */
static void tt_put_zoom(tt_buf *b, const tt_chart *c) {
  tt_buf_printf(b, "y axis %s at ", c->y_zoom_at > 0 ? "starts" : "ends");
  tt_fmt_tick(b, c->y_zoom_at, c->y_zoom_step, c->y_zoom_at);
  tt_buf_puts(b, ", not at zero");
}

static void tt_add_note(tt_buf *b, const char *text) {
  if (b->len) tt_buf_puts(b, "; ");
  tt_buf_puts(b, text);
}

static void tt_make_note(tt_build *b) {
  tt_chart *c = b->c;
  const tt_result *r = b->r;
  tt_buf note = TT_BUF_INIT, t = TT_BUF_INIT;
  if (c->rows_cut) {
    tt_buf_puts(&t, "the query returned ");
    if (r->total_exact && r->total_rows > (int64_t)r->nrows) {
      tt_buf_put_grouped(&t, r->total_rows);
      tt_buf_puts(&t, " rows");
    } else {
      tt_buf_puts(&t, "more rows");
    }
    tt_buf_puts(&t, "; the chart uses the first ");
    tt_buf_put_grouped(&t, (long long)r->nrows);
    tt_add_note(&note, tt_buf_cstr(&t));
    tt_buf_reset(&t);
  }
  if (c->skipped) {
    tt_buf_put_grouped(&t, (long long)c->skipped);
    tt_buf_printf(&t, " row%s without a usable %s left out", c->skipped == 1 ? "" : "s",
                  c->xscale == TT_X_TIME ? "date or value" : "value");
    tt_add_note(&note, tt_buf_cstr(&t));
    tt_buf_reset(&t);
  }
  if (c->merged) {
    tt_buf_put_grouped(&t, (long long)c->merged);
    tt_buf_printf(&t, " row%s with a repeated x added together", c->merged == 1 ? "" : "s");
    tt_add_note(&note, tt_buf_cstr(&t));
    tt_buf_reset(&t);
  }
  if (c->shown_of) {
    static const char *const what[] = {"bars", "points", "points", "points", "slices", "bins"};
    tt_buf_puts(&t, "showing the first ");
    tt_buf_put_grouped(&t, (long long)c->n);
    tt_buf_puts(&t, " of ");
    tt_buf_put_grouped(&t, (long long)c->shown_of);
    tt_buf_printf(&t, " %s", what[c->kind]);
    tt_add_note(&note, tt_buf_cstr(&t));
    tt_buf_reset(&t);
  }
  if (c->y_zoom) {
    tt_put_zoom(&t, c);
    tt_add_note(&note, tt_buf_cstr(&t));
    tt_buf_reset(&t);
  }
  if (c->folded) {
    tt_buf_put_grouped(&t, (long long)c->folded);
    tt_buf_printf(&t, " smaller %s grouped as Other",
                  c->kind == TT_CHART_PIE ? "slices" : "series");
    tt_add_note(&note, tt_buf_cstr(&t));
    tt_buf_reset(&t);
  }
  if (note.len) {
    if (note.data[0] >= 'a' && note.data[0] <= 'z') note.data[0] = (char)(note.data[0] - 32);
    c->note = tt_buf_detach(&note);
  }
  tt_buf_free(&note);
  tt_buf_free(&t);
}

static size_t tt_max_label_chars(const tt_chart *c) {
  size_t m = 0;
  for (size_t i = 0; i < c->n; i++) {
    size_t k = tt_utf8_count(c->labels[i], strlen(c->labels[i]));
    if (k > m) m = k;
  }
  return m;
}

tt_chart *tt_chart_build(const tt_chart_spec *spec, const tt_result *rows, tt_error *err) {
  tt_build b = {.spec = spec, .r = rows};
  if (!tt_find_col(rows, "x", spec->x, &b.xcol, err)) return NULL;
  for (size_t k = 0; k < spec->ny && k < 8; k++) {
    if (!tt_find_col(rows, "y", spec->y[k], &b.ycols[k], err)) return NULL;
    if (!tt_check_numeric(&b, b.ycols[k], "y", err)) return NULL;
    b.ny++;
  }
  if (spec->series) {
    if (!tt_find_col(rows, "series", spec->series, &b.scol, err)) return NULL;
    if (spec->ny > 1) {
      tt_error_set(err, TT_ERR_CONFIG,
                   "series: give either several y columns or a series column, not both");
      return NULL;
    }
    b.has_series = true;
  }
  tt_probe_x(rows, b.xcol, &b.px);
  b.c = tt_chart_alloc(spec, rows);
  tt_chart *c = b.c;
  if (!tt_choose_scale(&b, err)) {
    tt_chart_free(c);
    return NULL;
  }
  c->x_label = tt_clean_str(spec->x_label ? spec->x_label : rows->names[b.xcol]);
  if (spec->y_label) c->y_label = tt_clean_str(spec->y_label);
  else if (spec->kind == TT_CHART_HISTOGRAM) c->y_label = tt_xstrdup("Number of rows");
  else if (b.ny == 1) c->y_label = tt_clean_str(rows->names[b.ycols[0]]);

  if (spec->kind == TT_CHART_HISTOGRAM) {
    tt_build_histogram(&b);
  } else {
    tt_make_series(&b);
    tt_gather(&b);
    if (spec->kind == TT_CHART_PIE && !tt_pie_check(&b, err)) {
      tt_points_free(&b.pts);
      if (b.has_series) tt_keymap_free(&b.sm.map);
      free(b.sm.names);
      tt_chart_free(c);
      return NULL;
    }
    tt_chart_sort by = spec->sort == TT_CHART_SORT_DEFAULT ? tt_default_sort(&b) : spec->sort;
    size_t *order = tt_sort_points(&b.pts, by);
    size_t keep = b.pts.n;
    bool other = false;
    if (spec->kind == TT_CHART_PIE) {
      size_t slices = spec->limit ? (size_t)spec->limit : TT_CHART_PIE_SLICES;
      if (slices < 2) slices = 2;
      if (b.pts.n > slices) {
        /* the largest slices-1 stay, in the chosen order; the rest is Other */
        size_t *by_size = tt_sort_points(&b.pts, TT_CHART_SORT_Y);
        bool *big = tt_xcalloc(b.pts.n, sizeof *big);
        for (size_t i = 0; i < slices - 1; i++) big[by_size[i]] = true;
        size_t w = 0;
        for (size_t i = 0; i < b.pts.n; i++)
          if (big[order[i]]) by_size[w++] = order[i];
        for (size_t i = 0; i < b.pts.n; i++)
          if (!big[order[i]]) by_size[w++] = order[i];
        free(order);
        free(big);
        order = by_size;
        keep = slices - 1;
        other = true;
        c->folded = b.pts.n - keep;
      }
    } else {
      size_t limit = spec->limit ? (size_t)spec->limit
                     : spec->kind == TT_CHART_BAR ? TT_CHART_MAX_BARS
                                                  : TT_CHART_MAX_POINTS;
      if (keep > limit) {
        c->shown_of = keep;
        keep = limit;
      }
    }
    tt_emit_points(&b, order, keep, other);
    free(order);
    tt_points_free(&b.pts);
    if (b.has_series) tt_keymap_free(&b.sm.map);
    free(b.sm.names);
  }
  c->legend = c->nseries > 1 || c->kind == TT_CHART_PIE;
  if (c->kind == TT_CHART_BAR)
    c->horizontal = spec->orient == TT_CHART_ORIENT_HORIZONTAL ||
                    (spec->orient == TT_CHART_ORIENT_AUTO &&
                     (tt_max_label_chars(c) > 12 || c->n > 16));
  tt_chart_y_zoom(c);
  tt_make_note(&b);
  return c;
}

/* ---- describing ---------------------------------------------------------------- */

const char *tt_chart_note(const tt_chart *c) { return c->note; }

tt_chart_kind tt_chart_get_kind(const tt_chart *c) { return c->kind; }

size_t tt_chart_npoints(const tt_chart *c) {
  size_t n = 0;
  for (size_t s = 0; s < c->nseries; s++)
    for (size_t i = 0; i < c->n; i++) n += !isnan(c->series[s].v[i]);
  return n;
}

void tt_chart_describe(const tt_chart *c, tt_buf *out) {
  size_t pts = tt_chart_npoints(c);
  switch (c->kind) {
  case TT_CHART_BAR: tt_buf_puts(out, "bar chart, "); break;
  case TT_CHART_LINE: tt_buf_puts(out, "line chart, "); break;
  case TT_CHART_AREA: tt_buf_puts(out, "area chart, "); break;
  case TT_CHART_SCATTER: tt_buf_puts(out, "scatter plot, "); break;
  case TT_CHART_PIE: tt_buf_puts(out, "pie chart, "); break;
  case TT_CHART_HISTOGRAM: tt_buf_puts(out, "histogram, "); break;
  }
  bool groups = c->kind == TT_CHART_BAR && c->nseries > 1;
  size_t n = c->kind == TT_CHART_BAR && c->nseries == 1 ? pts : c->n;
  static const char *const one[] = {"bar", "point", "point", "point", "slice", "bin"};
  tt_buf_put_grouped(out, (long long)n);
  tt_buf_printf(out, " %s%s", groups ? "group" : one[c->kind], n == 1 ? "" : "s");
  if (c->nseries > 1) tt_buf_printf(out, " in %zu series", c->nseries);
  if (c->kind == TT_CHART_HISTOGRAM) {
    double rows = 0;
    for (size_t i = 0; i < c->n; i++) rows += c->series[0].v[i];
    tt_buf_puts(out, " of ");
    tt_buf_put_grouped(out, (long long)rows);
    tt_buf_puts(out, " values");
  }
  tt_buf_printf(out, ": %s", c->title);
  if (c->y_zoom) {
    tt_buf_puts(out, " (");
    tt_put_zoom(out, c);
    tt_buf_puts(out, ")");
  }
}
