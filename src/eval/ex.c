/* ex.c — execution accuracy: does a predicted query return the gold
 * query's rows? As Spider's test-suite evaluation decides it: the same
 * shape, columns matched by a permutation (pruned to columns holding the
 * same values), rows compared as multisets unless the gold query orders
 * them at its outer level; numbers within a relative tolerance. */
#include "eval/eval.h"

#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- ORDER BY at the outer level -------------------------------------------------- */

static bool tt_is_word_char(char c) { return isalnum((unsigned char)c) || c == '_'; }

/* Length of the keyword kw at s (case-insensitive, whole word), or 0. */
static size_t tt_keyword_at(const char *s, const char *start, const char *kw) {
  size_t n = strlen(kw);
  if (s > start && tt_is_word_char(s[-1])) return 0;
  for (size_t i = 0; i < n; i++)
    if (!s[i] || tolower((unsigned char)s[i]) != kw[i]) return 0;
  return tt_is_word_char(s[n]) ? 0 : n;
}

/* Past white space and comments. */
static const char *tt_skip_space(const char *p) {
  for (;;) {
    while (isspace((unsigned char)*p)) p++;
    if (p[0] == '-' && p[1] == '-') {
      while (*p && *p != '\n') p++;
    } else if (p[0] == '/' && p[1] == '*') {
      const char *end = strstr(p + 2, "*/");
      p = end ? end + 2 : p + strlen(p);
    } else {
      return p;
    }
  }
}

bool tt_sql_outer_order_by(const char *sql) {
  int depth = 0;
  for (const char *p = sql; *p;) {
    char c = *p;
    if (c == '\'' || c == '"' || c == '`' || c == '[') { /* quoted: skip to the close */
      char close = c == '[' ? ']' : c;
      for (p++; *p; p++)
        if (*p == close) {
          if (close != ']' && p[1] == close) p++; /* '' inside a string */
          else break;
        }
      if (*p) p++;
      continue;
    }
    if (c == '-' && p[1] == '-') {
      while (*p && *p != '\n') p++;
      continue;
    }
    if (c == '/' && p[1] == '*') {
      const char *end = strstr(p + 2, "*/");
      p = end ? end + 2 : p + strlen(p);
      continue;
    }
    if (c == '(') depth++;
    else if (c == ')' && depth > 0) depth--;
    size_t k;
    if (depth == 0 && (k = tt_keyword_at(p, sql, "order"))) {
      const char *q = tt_skip_space(p + k);
      if (q > p + k && tt_keyword_at(q, sql, "by")) return true;
    }
    p++;
  }
  return false;
}

/* ---- values ----------------------------------------------------------------------- */

static int tt_class(const tt_value *v) {
  switch (v->type) {
  case TT_VAL_NULL: return 0;
  case TT_VAL_INT:
  case TT_VAL_REAL: return 1;
  case TT_VAL_TEXT: return 2;
  case TT_VAL_BLOB: return 3;
  }
  return 4;
}

static double tt_num(const tt_value *v) { return v->type == TT_VAL_INT ? (double)v->u.i : v->u.r; }

/* x with its mantissa rounded to 20 bits (about 1e-6): numbers that the
 * tolerance calls equal sort as equal, so rows sorted in gold and in the
 * prediction line up. */
static double tt_quantize(double x) {
  if (x == 0 || !isfinite(x)) return x;
  int e;
  double m = frexp(x, &e);
  return ldexp(round(m * 1048576.0) / 1048576.0, e);
}

/* A total order, for sorting rows and columns. */
static int tt_cmp_value(const tt_value *a, const tt_value *b) {
  int ca = tt_class(a), cb = tt_class(b);
  if (ca != cb) return ca < cb ? -1 : 1;
  if (ca == 1) {
    if (a->type == TT_VAL_INT && b->type == TT_VAL_INT) return (a->u.i > b->u.i) - (a->u.i < b->u.i);
    double x = tt_quantize(tt_num(a)), y = tt_quantize(tt_num(b));
    if (isnan(x) || isnan(y)) return isnan(x) - isnan(y);
    return (x > y) - (x < y);
  }
  if (ca == 2 || ca == 3) {
    size_t n = a->len < b->len ? a->len : b->len;
    int r = memcmp(a->u.s, b->u.s, n);
    return r ? (r < 0 ? -1 : 1) : (a->len > b->len) - (a->len < b->len);
  }
  return 0;
}

/* Equal for the evaluation: numbers within a relative 1e-6. */
static bool tt_same_value(const tt_value *a, const tt_value *b) {
  int ca = tt_class(a), cb = tt_class(b);
  if (ca != cb) return false;
  if (ca == 1) {
    if (a->type == TT_VAL_INT && b->type == TT_VAL_INT) return a->u.i == b->u.i;
    double x = tt_num(a), y = tt_num(b);
    if (x == y) return true;
    if (isnan(x) || isnan(y)) return isnan(x) && isnan(y);
    if (isinf(x) || isinf(y)) return false; /* equal infinities were caught above */
    /* relative 1e-6; and floating-point noise around zero (0.1 + 0.2 - 0.3) */
    return fabs(x - y) <= 1e-6 * fmax(fabs(x), fabs(y)) || fabs(x - y) < 1e-12;
  }
  return tt_cmp_value(a, b) == 0;
}

/* ---- columns and rows ---------------------------------------------------------- */

typedef struct tt_view {
  const tt_result *r;
  const size_t *perm; /* column c of the view is column perm[c] of r */
} tt_view;

static const tt_value *tt_at(const tt_view *v, size_t row, size_t col) {
  return tt_result_cell(v->r, row, v->perm ? v->perm[col] : col);
}

/* Rows sorted by a merge sort on indices (no global state for qsort). */
static int tt_cmp_rows(const tt_view *v, size_t a, size_t b) {
  for (size_t c = 0; c < v->r->ncols; c++) {
    int r = tt_cmp_value(tt_at(v, a, c), tt_at(v, b, c));
    if (r) return r;
  }
  return 0;
}

static void tt_sort_rows(const tt_view *v, size_t *idx, size_t *tmp, size_t n) {
  if (n < 2) return;
  size_t h = n / 2;
  tt_sort_rows(v, idx, tmp, h);
  tt_sort_rows(v, idx + h, tmp, n - h);
  size_t i = 0, j = h, k = 0;
  while (i < h && j < n) tmp[k++] = tt_cmp_rows(v, idx[j], idx[i]) < 0 ? idx[j++] : idx[i++];
  while (i < h) tmp[k++] = idx[i++];
  while (j < n) tmp[k++] = idx[j++];
  memcpy(idx, tmp, n * sizeof *idx);
}

static size_t *tt_sorted_rows(const tt_view *v) {
  size_t n = v->r->nrows;
  size_t *idx = tt_xcalloc(n ? n : 1, sizeof *idx), *tmp = tt_xcalloc(n ? n : 1, sizeof *tmp);
  for (size_t i = 0; i < n; i++) idx[i] = i;
  tt_sort_rows(v, idx, tmp, n);
  free(tmp);
  return idx;
}

/* The rows of g and p (views of the same shape) are the same, in order or
 * as multisets. */
static bool tt_rows_equal(const tt_view *g, const tt_view *p, bool ordered) {
  size_t n = g->r->nrows, ncols = g->r->ncols;
  size_t *gi = NULL, *pi = NULL;
  if (!ordered) {
    gi = tt_sorted_rows(g);
    pi = tt_sorted_rows(p);
  }
  bool same = true;
  for (size_t i = 0; same && i < n; i++)
    for (size_t c = 0; same && c < ncols; c++)
      same = tt_same_value(tt_at(g, gi ? gi[i] : i, c), tt_at(p, pi ? pi[i] : i, c));
  free(gi);
  free(pi);
  return same;
}

/* The values of column c, sorted (pointers into r). */
static const tt_value **tt_column_sorted(const tt_result *r, size_t c) {
  size_t n = r->nrows;
  const tt_value **v = tt_xcalloc(n ? n : 1, sizeof *v);
  for (size_t i = 0; i < n; i++) v[i] = tt_result_cell(r, i, c);
  /* insertion sort is too slow for big results: a merge sort on pointers */
  const tt_value **tmp = tt_xcalloc(n ? n : 1, sizeof *tmp);
  for (size_t w = 1; w < n; w *= 2) {
    for (size_t lo = 0; lo < n; lo += 2 * w) {
      size_t mid = lo + w < n ? lo + w : n, hi = lo + 2 * w < n ? lo + 2 * w : n;
      size_t i = lo, j = mid, k = lo;
      while (i < mid && j < hi) tmp[k++] = tt_cmp_value(v[j], v[i]) < 0 ? v[j++] : v[i++];
      while (i < mid) tmp[k++] = v[i++];
      while (j < hi) tmp[k++] = v[j++];
    }
    memcpy(v, tmp, n * sizeof *v);
  }
  free(tmp);
  return v;
}

typedef struct tt_match {
  const tt_result *gold, *pred;
  bool ordered;
  bool **fits;      /* fits[i][j]: pred column j holds gold column i's values */
  size_t *perm;     /* gold column i -> pred column perm[i] */
  bool *used;
  long tries;       /* permutations tried (bounded) */
} tt_match;

#define TT_EX_MAX_TRIES 20000

/* Depth-first over assignments; every step counts against the bound, so
 * dead ends cannot make the search exponential. */
static bool tt_assign(tt_match *m, size_t i) {
  size_t ncols = m->gold->ncols;
  if (++m->tries >= TT_EX_MAX_TRIES) return false;
  if (i == ncols) {
    tt_view g = {m->gold, NULL}, p = {m->pred, m->perm};
    return tt_rows_equal(&g, &p, m->ordered);
  }
  for (size_t j = 0; j < ncols && m->tries < TT_EX_MAX_TRIES; j++) {
    if (m->used[j] || !m->fits[i][j]) continue;
    m->used[j] = true;
    m->perm[i] = j;
    if (tt_assign(m, i + 1)) return true;
    m->used[j] = false;
  }
  return false;
}

bool tt_ex_equal(const tt_result *gold, const tt_result *pred, bool ordered, tt_buf *detail) {
  if (gold->nrows != pred->nrows) {
    tt_buf_printf(detail, "%zu row%s, gold has %zu", pred->nrows, pred->nrows == 1 ? "" : "s",
                  gold->nrows);
    return false;
  }
  if (gold->nrows == 0) return true; /* both empty: equal whatever the columns */
  if (gold->ncols != pred->ncols) {
    tt_buf_printf(detail, "%zu column%s, gold has %zu", pred->ncols, pred->ncols == 1 ? "" : "s",
                  gold->ncols);
    return false;
  }
  size_t ncols = gold->ncols, n = gold->nrows;
  const tt_value ***gc = tt_xcalloc(ncols, sizeof *gc), ***pc = tt_xcalloc(ncols, sizeof *pc);
  for (size_t c = 0; c < ncols; c++) {
    gc[c] = tt_column_sorted(gold, c);
    pc[c] = tt_column_sorted(pred, c);
  }
  tt_match m = {.gold = gold, .pred = pred, .ordered = ordered};
  m.fits = tt_xcalloc(ncols, sizeof *m.fits);
  m.perm = tt_xcalloc(ncols, sizeof *m.perm);
  m.used = tt_xcalloc(ncols, sizeof *m.used);
  bool possible = true;
  for (size_t i = 0; i < ncols; i++) {
    m.fits[i] = tt_xcalloc(ncols, sizeof **m.fits);
    bool any = false;
    for (size_t j = 0; j < ncols; j++) {
      bool same = true;
      for (size_t k = 0; same && k < n; k++) same = tt_same_value(gc[i][k], pc[j][k]);
      m.fits[i][j] = same;
      any |= same;
    }
    if (!any && possible) {
      tt_buf_printf(detail, "no column has the values of gold column %zu (%.60s)", i + 1,
                    gold->names[i]);
      possible = false;
    }
  }
  bool equal = possible && tt_assign(&m, 0);
  if (possible && !equal) {
    if (m.tries >= TT_EX_MAX_TRIES) tt_buf_puts(detail, "too many ways to match the columns");
    else tt_buf_puts(detail, ordered ? "the rows differ (or come in another order; the gold query "
                                       "orders them)"
                                     : "the same columns, but the rows differ");
  }
  for (size_t c = 0; c < ncols; c++) {
    free(gc[c]);
    free(pc[c]);
    free(m.fits[c]);
  }
  free(gc);
  free(pc);
  free(m.fits);
  free(m.perm);
  free(m.used);
  return equal;
}
