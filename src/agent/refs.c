/* refs.c — answers that cite results instead of retyping them. The model
 * writes {{q2.r1.Total}}, {{q2[Name='AC/DC'].Total|0,000.00}} or
 * {{q2.sum(Total)|0.0%}} in its answer; tabletalk keeps every result of
 * the question under its label (q1, q2, ... numbered across the thread),
 * fills each reference from the stored cells and records it as a fact
 * (query, row, column, value, text). A reference that does not resolve is
 * reported with the reason, for the model to fix once.
 *
 *   ref    := "q" N ( "." "r" N "." COL          a cell by row position (1-based)
 *                   | "[" COL "=" VALUE "]" "." COL  the row whose COL holds VALUE
 *                   | "." AGG "(" COL ")"          sum, avg, min, max, count of a column
 *                   | "." "count" )                the result's row count
 *             [ "|" FORMAT ]
 *   FORMAT := 0 | 0.0 | 0.00 | 0,000 | 0,000.00 | 0% | 0.0% | ... (a picture:
 *             "," groups thousands, the zeros after "." are the decimals,
 *             "%" multiplies by 100) or integer | percent
 *
 * Aggregates are taken over the whole result: a result cut at the row cap
 * is read again in full when that gives the same rows; when it still is
 * not whole the reference fails and says so. */
#include "agent/agent_internal.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define TT_REF_MAX_LEN 300 /* longest reference read between the braces */

int tt_results_keep(tt_ref_set *s, const char *sql, tt_result *res) {
  if (s->n == s->cap) {
    s->cap = s->cap ? s->cap * 2 : 8;
    s->v = tt_xrealloc(s->v, s->cap * sizeof *s->v);
  }
  int id = s->base + (int)s->n + 1;
  s->v[s->n++] = (tt_ref_result){.id = id, .sql = tt_xstrdup(sql ? sql : ""), .res = res};
  return id;
}

void tt_results_free(tt_ref_set *s, const tt_result *keep) {
  for (size_t i = 0; i < s->n; i++) {
    free(s->v[i].sql);
    if (s->v[i].res != keep) tt_result_free(s->v[i].res);
    if (s->v[i].full != keep) tt_result_free(s->v[i].full);
  }
  free(s->v);
  memset(s, 0, sizeof *s);
}

void tt_facts_free(tt_fact *f, size_t n) {
  for (size_t i = 0; i < n; i++) {
    free(f[i].ref);
    free(f[i].sql);
    free(f[i].column);
    free(f[i].text);
    json_decref(f[i].value);
  }
  free(f);
}

void tt_fill_free(tt_fill *f) {
  free(f->text);
  free(f->masked);
  tt_facts_free(f->facts, f->nfacts);
  tt_buf_free(&f->errors);
  memset(f, 0, sizeof *f);
}

char *tt_fill_take(tt_fill *f) {
  char *text = f->text;
  f->text = NULL;
  tt_fill_free(f);
  return text;
}

/* ---- parsing one reference --------------------------------------------------- */

typedef enum { TT_SEL_ROW, TT_SEL_KEY, TT_SEL_AGG, TT_SEL_COUNT } tt_sel_kind;

typedef struct tt_ref {
  int query;
  tt_sel_kind kind;
  long row;            /* TT_SEL_ROW, 1-based */
  char *key_col;       /* TT_SEL_KEY */
  char *key_val;
  bool key_quoted;     /* the key was written 'quoted' (compared as text) */
  char *agg;           /* TT_SEL_AGG: sum avg min max count */
  char *column;        /* ROW, KEY, AGG */
  /* the format */
  bool has_fmt, thousands, percent;
  int decimals;
} tt_ref;

static void tt_ref_clear(tt_ref *r) {
  free(r->key_col);
  free(r->key_val);
  free(r->agg);
  free(r->column);
}

static char *tt_trimmed(const char *s, size_t n) {
  while (n && isspace((unsigned char)*s)) s++, n--;
  while (n && isspace((unsigned char)s[n - 1])) n--;
  return tt_xstrndup(s, n);
}

/* A format picture or word into r; false when it is neither. */
static bool tt_parse_format(const char *f, tt_ref *r) {
  r->has_fmt = true;
  if (strcasecmp(f, "integer") == 0 || strcasecmp(f, "int") == 0) return true;
  if (strcasecmp(f, "percent") == 0) {
    r->percent = true;
    return true;
  }
  const char *p = f;
  if (*p != '0' && *p != '#') return false;
  while (*p == '0' || *p == '#' || *p == ',') {
    if (*p == ',') r->thousands = true;
    p++;
  }
  if (*p == '.') {
    p++;
    while (*p == '0' || *p == '#') r->decimals++, p++;
    if (r->decimals > 10) return false;
  }
  if (*p == '%') r->percent = true, p++;
  return *p == '\0';
}

/* The reference between the braces (spaces around it allowed) into r;
 * false with why in err. */
static bool tt_parse_ref(const char *src, tt_ref *r, tt_buf *err) {
  memset(r, 0, sizeof *r);
  char *body = tt_trimmed(src, strlen(src));
  char *bar = NULL;
  /* the format: after the last '|' that is outside a quoted key */
  bool quoted = false;
  for (char *p = body; *p; p++) {
    if (*p == '\'') quoted = !quoted;
    else if (*p == '|' && !quoted) bar = p;
  }
  bool ok = false;
  if (bar) {
    *bar = '\0';
    char *fmt = tt_trimmed(bar + 1, strlen(bar + 1));
    if (!tt_parse_format(fmt, r)) {
      tt_buf_printf(err, "unknown format \"%s\" (use 0, 0.00, 0,000, 0,000.00, 0%% or 0.0%%)", fmt);
      free(fmt);
      goto done;
    }
    free(fmt);
  }
  const char *p = body;
  if ((*p != 'q' && *p != 'Q') || !isdigit((unsigned char)p[1])) {
    tt_buf_puts(err, "a reference starts with the result's label, q1, q2, ...");
    goto done;
  }
  char *end;
  long q = strtol(p + 1, &end, 10);
  if (q <= 0 || q > 100000) {
    tt_buf_puts(err, "no such result label");
    goto done;
  }
  r->query = (int)q;
  p = end;
  if (*p == '[') { /* [Col='value'] */
    const char *eq = strchr(p, '=');
    if (!eq) {
      tt_buf_puts(err, "a row by key is written [Column='value']");
      goto done;
    }
    r->kind = TT_SEL_KEY;
    r->key_col = tt_trimmed(p + 1, (size_t)(eq - p - 1));
    const char *v = eq + 1;
    while (*v == ' ') v++;
    tt_buf val = TT_BUF_INIT;
    if (*v == '\'') {
      r->key_quoted = true;
      for (v++; *v; v++) {
        if (*v == '\'' && v[1] == '\'') tt_buf_putc(&val, '\''), v++;
        else if (*v == '\'') break;
        else tt_buf_putc(&val, *v);
      }
      if (*v != '\'') {
        tt_buf_free(&val);
        tt_buf_puts(err, "the key's quote is not closed");
        goto done;
      }
      v++;
      while (*v == ' ') v++;
    } else {
      const char *close = strchr(v, ']');
      if (close) {
        char *t = tt_trimmed(v, (size_t)(close - v));
        tt_buf_puts(&val, t);
        free(t);
        v = close;
      }
    }
    r->key_val = tt_buf_detach(&val);
    if (*v != ']' || v[1] != '.' || !v[2]) {
      tt_buf_puts(err, "after [Column='value'] comes .Column");
      goto done;
    }
    r->column = tt_trimmed(v + 2, strlen(v + 2));
    ok = *r->column != '\0';
    if (!ok) tt_buf_puts(err, "no column named");
    goto done;
  }
  if (*p != '.') {
    tt_buf_puts(err, "after the label comes .rN.Column, [Column='value'].Column, .sum(Column) "
                     "or .count");
    goto done;
  }
  p++;
  if ((*p == 'r' || *p == 'R') && isdigit((unsigned char)p[1])) {
    long row = strtol(p + 1, &end, 10);
    if (*end == '.') {
      r->kind = TT_SEL_ROW;
      r->row = row;
      r->column = tt_trimmed(end + 1, strlen(end + 1));
      ok = *r->column != '\0';
      if (!ok) tt_buf_puts(err, "no column named");
      goto done;
    }
  }
  static const char *const aggs[] = {"sum", "avg", "min", "max", "count"};
  for (size_t i = 0; i < sizeof aggs / sizeof aggs[0]; i++) {
    size_t n = strlen(aggs[i]);
    if (strncasecmp(p, aggs[i], n) != 0) continue;
    const char *a = p + n;
    while (*a == ' ') a++;
    if (*a == '\0' && i == 4) {
      r->kind = TT_SEL_COUNT;
      ok = true;
      goto done;
    }
    if (*a != '(') continue;
    const char *close = strrchr(a, ')');
    if (!close || close[1] != '\0') {
      tt_buf_printf(err, "%s( is not closed", aggs[i]);
      goto done;
    }
    r->kind = TT_SEL_AGG;
    r->agg = tt_xstrdup(aggs[i]);
    r->column = tt_trimmed(a + 1, (size_t)(close - a - 1));
    if (i == 4 && (!*r->column || strcmp(r->column, "*") == 0)) { /* count() and count(*): rows */
      free(r->column);
      r->column = NULL;
      r->kind = TT_SEL_COUNT;
    }
    ok = true;
    goto done;
  }
  tt_buf_puts(err, "after the label comes .rN.Column (N from 1), [Column='value'].Column, "
                   ".sum(Column), .avg(...), .min(...), .max(...), .count(...) or .count");
done:
  free(body);
  return ok;
}

/* ---- resolving --------------------------------------------------------------- */

static const tt_ref_result *tt_refs_find(const tt_ref_set *s, int id) {
  for (size_t i = 0; i < s->n; i++)
    if (s->v[i].id == id) return &s->v[i];
  return NULL;
}

/* The column named name: exactly, else ignoring case; -1 when none. */
static long tt_column_index(const tt_result *r, const char *name) {
  for (size_t c = 0; c < r->ncols; c++)
    if (strcmp(r->names[c], name) == 0) return (long)c;
  for (size_t c = 0; c < r->ncols; c++)
    if (strcasecmp(r->names[c], name) == 0) return (long)c;
  return -1;
}

static void tt_columns_list(const tt_result *r, tt_buf *b) {
  for (size_t c = 0; c < r->ncols; c++) tt_buf_printf(b, "%s%s", c ? ", " : "", r->names[c]);
}

/* The whole result for an aggregate: the stored one, or it read again
 * without the row cap; NULL (why in err) when neither is whole. */
static const tt_result *tt_refs_whole(tt_ref_result *rr, const tt_refs_reader *rd, tt_buf *err) {
  if (!rr->res->truncated) return rr->res;
  if (rr->full && !rr->full->truncated) return rr->full;
  if (!rr->full && rr->res->repeatable && rd && rd->reread) rr->full = rd->reread(rd->ud, rr->sql);
  if (rr->full && !rr->full->truncated) return rr->full;
  tt_buf_printf(err, "q%d was cut at %zu rows, so an aggregate over it would be wrong; compute "
                     "it in SQL (SELECT sum(...) ...) and cite that result", rr->id, rr->res->nrows);
  return NULL;
}

static bool tt_value_number(const tt_value *v, double *out) {
  if (v->type == TT_VAL_INT) *out = (double)v->u.i;
  else if (v->type == TT_VAL_REAL) *out = v->u.r;
  else return false;
  return true;
}

/* The row whose key column holds the key; -1 with why in err. */
static long tt_find_key_row(const tt_ref_result *rr, const tt_ref *ref, tt_buf *err) {
  const tt_result *r = rr->res;
  long kc = tt_column_index(r, ref->key_col);
  if (kc < 0) {
    tt_buf_printf(err, "q%d has no column %s (its columns: ", rr->id, ref->key_col);
    tt_columns_list(r, err);
    tt_buf_putc(err, ')');
    return -1;
  }
  char *end;
  double want = strtod(ref->key_val, &end);
  bool numeric = !ref->key_quoted && *ref->key_val && *end == '\0';
  long found = -1;
  size_t hits = 0;
  for (size_t i = 0; i < r->nrows; i++) {
    const tt_value *v = tt_result_cell(r, i, (size_t)kc);
    double d;
    bool eq;
    if (v->type == TT_VAL_TEXT) eq = v->len == strlen(ref->key_val) && memcmp(v->u.s, ref->key_val, v->len) == 0;
    else if (tt_value_number(v, &d)) eq = numeric ? d == want : false;
    else eq = false;
    if (eq) {
      if (found < 0) found = (long)i;
      hits++;
    }
  }
  if (hits == 1) return found;
  if (hits > 1) {
    tt_buf_printf(err, "%zu rows of q%d have %s = '%s'; name the row by position (r1, r2, ...)",
                  hits, rr->id, r->names[kc], ref->key_val);
    return -1;
  }
  tt_buf_printf(err, "no row of q%d has %s = '%s'%s", rr->id, r->names[kc], ref->key_val,
                r->truncated ? " among the rows kept (the result was cut)" : "");
  return -1;
}

/* Appends d with the reference's format. */
static void tt_format_number(tt_buf *out, double d, bool is_int, const tt_ref *ref) {
  if (ref->percent) d *= 100;
  int decimals = ref->has_fmt ? ref->decimals : -1;
  char num[64];
  if (decimals >= 0) snprintf(num, sizeof num, "%.*f", decimals, d);
  else if (is_int && fabs(d) < 9e15) snprintf(num, sizeof num, "%.0f", d);
  else snprintf(num, sizeof num, "%.15g", d);
  if (strcmp(num, "-0") == 0 || (num[0] == '-' && strspn(num + 1, "0.") == strlen(num + 1)))
    memmove(num, num + 1, strlen(num)); /* -0.00 reads as 0.00 */
  const char *p = num;
  if (*p == '-') tt_buf_putc(out, *p++);
  size_t intlen = strcspn(p, ".eE");
  for (size_t i = 0; i < intlen; i++) {
    if (ref->thousands && i > 0 && (intlen - i) % 3 == 0) tt_buf_putc(out, ',');
    tt_buf_putc(out, p[i]);
  }
  tt_buf_puts(out, p + intlen);
  if (ref->percent) tt_buf_putc(out, '%');
}

static json_t *tt_value_json(const tt_value *v) {
  switch (v->type) {
  case TT_VAL_INT: return json_integer((json_int_t)v->u.i);
  case TT_VAL_REAL: return json_real(v->u.r);
  case TT_VAL_TEXT: return tt_json_stringn(v->u.s, v->len);
  case TT_VAL_BLOB: return json_string("<blob>");
  case TT_VAL_NULL: break;
  }
  return json_null();
}

/* The text a NULL fills in. */
#define TT_REF_NULL_TEXT "(no value)"

/* One cell into fact; false with why in err. */
static bool tt_fill_cell(const tt_ref_result *rr, const tt_ref *ref, long row, tt_fact *f,
                         tt_buf *err) {
  const tt_result *r = rr->res;
  long c = tt_column_index(r, ref->column);
  if (c < 0) {
    tt_buf_printf(err, "q%d has no column %s (its columns: ", rr->id, ref->column);
    tt_columns_list(r, err);
    tt_buf_putc(err, ')');
    return false;
  }
  const tt_value *v = tt_result_cell(r, (size_t)row, (size_t)c);
  f->row = row + 1;
  free(f->column);
  f->column = tt_xstrdup(r->names[c]);
  f->value = tt_value_json(v);
  tt_buf t = TT_BUF_INIT;
  double d;
  if (v->type == TT_VAL_NULL) {
    tt_buf_puts(&t, TT_REF_NULL_TEXT);
  } else if (tt_value_number(v, &d)) {
    if (ref->has_fmt) tt_format_number(&t, d, v->type == TT_VAL_INT, ref);
    else tt_value_to_text(&t, v);
  } else if (ref->has_fmt) {
    tt_buf_printf(err, "q%d row %ld, %s is not a number, so it takes no format", rr->id, row + 1,
                  r->names[c]);
    tt_buf_free(&t);
    return false;
  } else {
    tt_value_to_text(&t, v);
  }
  f->text = tt_buf_detach(&t);
  return true;
}

/* An aggregate or the row count into fact; false with why in err. */
static bool tt_fill_aggregate(tt_ref_result *rr, const tt_ref *ref, const tt_refs_reader *rd,
                              tt_fact *f, tt_buf *err) {
  if (ref->kind == TT_SEL_COUNT) {
    const tt_result *w = tt_refs_whole(rr, rd, err);
    if (!w) return false;
    f->aggregate = "count";
    f->value = json_integer((json_int_t)w->nrows);
    tt_buf t = TT_BUF_INIT;
    tt_format_number(&t, (double)w->nrows, true, ref);
    f->text = tt_buf_detach(&t);
    return true;
  }
  long c = tt_column_index(rr->res, ref->column);
  if (c < 0) {
    tt_buf_printf(err, "q%d has no column %s (its columns: ", rr->id, ref->column);
    tt_columns_list(rr->res, err);
    tt_buf_putc(err, ')');
    return false;
  }
  const tt_result *w = tt_refs_whole(rr, rd, err);
  if (!w) return false;
  size_t n = 0;
  bool all_int = true;
  double sum = 0, lo = 0, hi = 0;
  for (size_t i = 0; i < w->nrows; i++) {
    const tt_value *v = tt_result_cell(w, i, (size_t)c);
    double d;
    if (v->type == TT_VAL_NULL) continue; /* as SQL does */
    if (!tt_value_number(v, &d)) {
      if (strcmp(ref->agg, "count") == 0) {
        n++;
        continue;
      }
      tt_buf_printf(err, "q%d's column %s holds text (row %zu), so it has no %s", rr->id,
                    w->names[c], i + 1, ref->agg);
      return false;
    }
    all_int &= v->type == TT_VAL_INT;
    if (!n || d < lo) lo = d;
    if (!n || d > hi) hi = d;
    sum += d;
    n++;
  }
  f->aggregate = strcmp(ref->agg, "sum") == 0   ? "sum"
                 : strcmp(ref->agg, "avg") == 0 ? "avg"
                 : strcmp(ref->agg, "min") == 0 ? "min"
                 : strcmp(ref->agg, "max") == 0 ? "max"
                                                : "count";
  f->column = tt_xstrdup(w->names[c]);
  tt_buf t = TT_BUF_INIT;
  double d;
  bool is_int = all_int;
  if (strcmp(f->aggregate, "count") == 0) {
    d = (double)n;
    is_int = true;
  } else if (n == 0) { /* SQL's NULL: nothing to add up */
    f->value = json_null();
    tt_buf_puts(&t, TT_REF_NULL_TEXT);
    f->text = tt_buf_detach(&t);
    return true;
  } else if (strcmp(f->aggregate, "sum") == 0) {
    d = sum;
  } else if (strcmp(f->aggregate, "avg") == 0) {
    d = sum / (double)n;
    is_int = false;
  } else {
    d = strcmp(f->aggregate, "min") == 0 ? lo : hi;
  }
  f->value = is_int && fabs(d) < 9e15 ? json_integer((json_int_t)d) : json_real(d);
  tt_format_number(&t, d, is_int, ref);
  f->text = tt_buf_detach(&t);
  return true;
}

/* One reference resolved into f; false with why in err. */
static bool tt_resolve(tt_ref_set *s, const tt_refs_reader *rd, const tt_ref *ref, tt_fact *f,
                       tt_buf *err) {
  tt_ref_result *rr = (tt_ref_result *)tt_refs_find(s, ref->query);
  if (!rr) {
    if (ref->query <= s->base)
      tt_buf_printf(err, "q%d belongs to an earlier question and its rows are not kept; run the "
                         "query again and cite the new result", ref->query);
    else if (s->n)
      tt_buf_printf(err, "there is no q%d: the results of this question are q%d to q%d",
                    ref->query, s->v[0].id, s->v[s->n - 1].id);
    else
      tt_buf_printf(err, "there is no q%d: no query has returned rows in this question; call "
                         "run_sql first", ref->query);
    return false;
  }
  f->query = rr->id;
  f->sql = tt_xstrdup(rr->sql);
  const tt_result *r = rr->res;
  if (ref->kind == TT_SEL_AGG || ref->kind == TT_SEL_COUNT)
    return tt_fill_aggregate(rr, ref, rd, f, err);
  long row;
  if (ref->kind == TT_SEL_KEY) {
    row = tt_find_key_row(rr, ref, err);
    if (row < 0) return false;
  } else {
    if (ref->row < 1 || (size_t)ref->row > r->nrows) {
      tt_buf_printf(err, "q%d has %s%zu row%s, so r%ld does not exist%s", rr->id,
                    r->truncated ? "more than " : "", r->nrows, r->nrows == 1 ? "" : "s", ref->row,
                    ref->row < 1 ? " (rows count from r1)" : "");
      return false;
    }
    row = ref->row - 1;
  }
  return tt_fill_cell(rr, ref, row, f, err);
}

static void tt_fill_push(tt_fill *out, const tt_fact *f) {
  out->facts = tt_xrealloc(out->facts, (out->nfacts + 1) * sizeof *out->facts);
  out->facts[out->nfacts++] = *f;
}

bool tt_refs_fill(tt_ref_set *s, const tt_refs_reader *rd, const char *answer, tt_fill *out) {
  memset(out, 0, sizeof *out);
  tt_buf text = TT_BUF_INIT, masked = TT_BUF_INIT;
  const char *p = answer ? answer : "";
  for (;;) {
    const char *open = strstr(p, "{{");
    const char *close = open ? strstr(open + 2, "}}") : NULL;
    if (!open || !close) {
      tt_buf_puts(&text, p);
      tt_buf_puts(&masked, p);
      break;
    }
    tt_buf_append(&text, p, (size_t)(open - p));
    tt_buf_append(&masked, p, (size_t)(open - p));
    size_t inner = (size_t)(close - open - 2);
    char *src = tt_xstrndup(open + 2, inner > TT_REF_MAX_LEN ? TT_REF_MAX_LEN : inner);
    out->nrefs++;
    tt_ref ref = {0};
    tt_fact f = {0};
    tt_buf why = TT_BUF_INIT;
    bool ok = inner <= TT_REF_MAX_LEN && tt_parse_ref(src, &ref, &why);
    if (inner > TT_REF_MAX_LEN) tt_buf_puts(&why, "too long for a reference");
    if (ok) ok = tt_resolve(s, rd, &ref, &f, &why);
    if (ok) {
      f.ref = tt_trimmed(src, strlen(src));
      f.at = text.len;
      f.len = strlen(f.text);
      tt_buf_puts(&text, f.text);
      tt_fill_push(out, &f);
    } else {
      free(f.sql);
      free(f.column);
      free(f.text);
      json_decref(f.value);
      tt_buf_printf(&out->errors, "%s{{%s}}: %s", out->nerrors ? "\n" : "", src,
                    tt_buf_cstr(&why));
      out->nerrors++;
      tt_buf_puts(&text, "(?)");
    }
    /* what the number check reads: the reference's place holds no digits */
    tt_buf_puts(&masked, "\xE2\x80\xA6");
    tt_ref_clear(&ref);
    tt_buf_free(&why);
    free(src);
    p = close + 2;
  }
  out->text = tt_buf_detach(&text);
  out->masked = tt_buf_detach(&masked);
  return out->nerrors == 0;
}

/* ---- notes kept with the thread ----------------------------------------------------- */

char *tt_notes_json(const tt_ref_set *refs, bool priv, const char *told, const tt_run *out) {
  int last = refs->n ? refs->v[refs->n - 1].id : refs->base;
  json_t *o = json_pack("{s:i,s:b}", "queries", last, "private", priv);
  if (priv && told) json_object_set_new(o, "told", json_string(told));
  if (priv && out->rows) {
    tt_buf shape = TT_BUF_INIT;
    tt_view_shape_line(&shape, out->rows);
    json_object_set_new(o, "shape", json_string(tt_buf_cstr(&shape)));
    tt_buf_free(&shape);
  }
  char *s = json_dumps(o, JSON_COMPACT);
  json_decref(o);
  return s;
}

int tt_notes_last_label(const char *notes) {
  if (!notes) return 0;
  json_t *o = json_loads(notes, 0, NULL);
  json_int_t n = json_integer_value(json_object_get(o, "queries"));
  json_decref(o);
  return n > 0 && n < 100000 ? (int)n : 0;
}
