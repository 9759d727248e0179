/* verify.c — the answer check: every number an answer states must be backed
 * by a value the question's queries returned (or the thread's earlier
 * ones), allowing for how people write numbers: thousands separators,
 * rounding to the precision shown, k/million suffixes, percentages of
 * shown values (or of a column's total), parts of dates, counts of rows.
 * Numbers the question itself gave, literals of the SQL that ran, list
 * markers and ordinals need no backing. Also: does an answer tell the user
 * that writing is not possible. */
#include "agent/agent_internal.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define TT_MAX_BACKING 50000 /* values kept per question */
#define TT_MAX_PAIRS 600     /* values tried as parts and wholes of percentages */
#define TT_MAX_STATED 64     /* numbers of one answer that are checked */

void tt_backing_free(tt_backing *b) {
  free(b->v);
  free(b->quantity);
  memset(b, 0, sizeof *b);
}

/* quantity: a number a result holds as a number (a cell, a total, a row
 * count), which percentages may be taken of; the others (digits in text,
 * SQL literals) back only themselves. */
static void tt_backing_push(tt_backing *b, double v, bool quantity) {
  if (!isfinite(v) || b->n >= TT_MAX_BACKING) return;
  if (b->n == b->cap) {
    b->cap = b->cap ? b->cap * 2 : 64;
    b->v = tt_xrealloc(b->v, b->cap * sizeof *b->v);
    b->quantity = tt_xrealloc(b->quantity, b->cap * sizeof *b->quantity);
  }
  b->quantity[b->n] = quantity;
  b->v[b->n++] = v;
}

/* ---- reading numbers in text -------------------------------------------- */

typedef struct tt_stated {
  double value;     /* with its suffix applied */
  double tol;       /* how far a backing value may be */
  bool percent;
  char text[40];    /* as written, for the push back */
} tt_stated;

static bool tt_is_alpha(unsigned char c) { return isalpha(c) != 0; }

/* A thousands separator at p: ',' or an apostrophe, a no-break space
 * (U+00A0) or a thin space (U+2009, U+202F), followed by exactly three
 * digits. Returns its length in bytes, 0 when none. */
static size_t tt_group_sep(const char *p) {
  size_t k = 0;
  if (*p == ',' || *p == '\'') k = 1;
  else if ((unsigned char)p[0] == 0xC2 && (unsigned char)p[1] == 0xA0) k = 2;
  else if ((unsigned char)p[0] == 0xE2 && (unsigned char)p[1] == 0x80 &&
           ((unsigned char)p[2] == 0x89 || (unsigned char)p[2] == 0xAF)) k = 3;
  if (!k) return 0;
  const char *d = p + k;
  if (!isdigit((unsigned char)d[0]) || !isdigit((unsigned char)d[1]) || !isdigit((unsigned char)d[2]))
    return 0;
  return isdigit((unsigned char)d[3]) ? 0 : k;
}

/* A word (case-insensitive) at p that ends there; its length, or 0. */
static size_t tt_word_at(const char *p, const char *word) {
  size_t n = strlen(word);
  if (strncasecmp(p, word, n) != 0) return 0;
  return tt_is_alpha((unsigned char)p[n]) ? 0 : n;
}

/* Words before a number that make it a rounded figure. */
static bool tt_approximate(const char *start, const char *at) {
  static const char *const words[] = {"about", "around", "roughly", "approximately", "nearly",
                                      "almost", "over", "under", "more than", "less than",
                                      "fewer than", "at least", "at most", "some", "circa",
                                      "approx.", "~", "≈"};
  size_t back = (size_t)(at - start) < 20 ? (size_t)(at - start) : 20;
  char low[24] = {0};
  for (size_t i = 0; i < back; i++) low[i] = (char)tolower((unsigned char)at[(ptrdiff_t)i - (ptrdiff_t)back]);
  size_t len = strlen(low);
  while (len && (low[len - 1] == ' ' || low[len - 1] == '$' || low[len - 1] == '-')) low[--len] = '\0';
  for (size_t i = 0; i < sizeof words / sizeof words[0]; i++) {
    size_t w = strlen(words[i]);
    if (len >= w && strcmp(low + len - w, words[i]) == 0 &&
        (len == w || !isalpha((unsigned char)low[len - w - 1])))
      return true;
  }
  return false;
}

/* The number starting at *pp (a digit not preceded by a letter or digit).
 * Returns false for what is not a stated quantity (an identifier's digits,
 * an ordinal, a unit glued to it); *pp moves past it either way. */
static bool tt_read_number(const char *text, const char **pp, bool line_start, tt_stated *out) {
  const char *p = *pp, *begin = p;
  char digits[64];
  size_t nd = 0;
  int decimals = -1;
  while (*p) {
    size_t sep;
    if (isdigit((unsigned char)*p)) {
      if (nd < sizeof digits - 2) digits[nd++] = *p;
      if (decimals >= 0) decimals++;
      p++;
    } else if (decimals < 0 && (sep = tt_group_sep(p))) {
      p += sep;
    } else if (decimals < 0 && *p == '.' && isdigit((unsigned char)p[1])) {
      if (nd < sizeof digits - 2) digits[nd++] = '.';
      decimals = 0;
      p++;
    } else {
      break;
    }
  }
  digits[nd] = '\0';
  const char *after_digits = p;
  *pp = p;
  if (isalnum((unsigned char)*p) && (tt_word_at(p, "st") || tt_word_at(p, "nd") ||
                                     tt_word_at(p, "rd") || tt_word_at(p, "th"))) {
    *pp = p + 2;
    return false; /* an ordinal: a rank, not a quantity */
  }
  /* "1. Rock" or "2) Latin" at the start of a line: a list marker */
  if (line_start && decimals < 0 && (*p == '.' || *p == ')') && (p[1] == ' ' || p[1] == '\t'))
    return false;
  double mult = 1;
  bool percent = false;
  const char *q = p;
  while (*q == ' ') q++;
  size_t w;
  if (*q == '%') {
    percent = true;
    p = q + 1;
  } else if ((w = tt_word_at(q, "percent")) || (w = tt_word_at(q, "per cent"))) {
    percent = true;
    p = q + w;
  } else if ((*p == 'k' || *p == 'K') && !tt_is_alpha((unsigned char)p[1])) {
    mult = 1e3;
    p++;
  } else if (*p == 'M' && !tt_is_alpha((unsigned char)p[1])) {
    mult = 1e6;
    p++;
  } else if ((w = tt_word_at(q, "thousand"))) {
    mult = 1e3;
    p = q + w;
  } else if ((w = tt_word_at(q, "million")) || (w = tt_word_at(q, "mn"))) {
    mult = 1e6;
    p = q + w;
  } else if ((w = tt_word_at(q, "billion")) || (w = tt_word_at(q, "bn"))) {
    mult = 1e9;
    p = q + w;
  } else if ((w = tt_word_at(q, "trillion"))) {
    mult = 1e12;
    p = q + w;
  }
  *pp = p;
  if (p == after_digits && tt_is_alpha((unsigned char)*p)) { /* 3D, 10GB, 5x: not a count */
    while (isalnum((unsigned char)**pp)) (*pp)++;
    return false;
  }
  double v = strtod(digits, NULL) * mult;
  double step = pow(10.0, -(decimals < 0 ? 0 : decimals)) * mult;
  out->value = v;
  out->percent = percent;
  out->tol = 0.5 * step * (1 + 1e-9) + 1e-9 * fabs(v);
  if (tt_approximate(text, begin)) out->tol = fmax(out->tol, 0.05 * fabs(v));
  size_t tl = (size_t)(p - begin) < sizeof out->text - 1 ? (size_t)(p - begin) : sizeof out->text - 1;
  memcpy(out->text, begin, tl);
  out->text[tl] = '\0';
  return true;
}

/* The stated numbers of text (at most max), skipping `code` spans. */
static size_t tt_scan_numbers(const char *text, tt_stated *out, size_t max) {
  size_t n = 0;
  bool in_code = false, line_start = true;
  for (const char *p = text; *p && n < max;) {
    unsigned char c = (unsigned char)*p;
    if (c == '`') {
      in_code = !in_code;
      p++;
      continue;
    }
    if (c == '\n') {
      line_start = true;
      p++;
      continue;
    }
    if (in_code || !isdigit(c)) {
      if (c != ' ' && c != '\t' && c != '-' && c != '*' && c != '#') line_start = false;
      p++;
      continue;
    }
    bool glued = p > text && (isalnum((unsigned char)p[-1]) || p[-1] == '_');
    if (glued) { /* Q4, MP3, track_2: part of a name */
      while (isalnum((unsigned char)*p) || *p == '_') p++;
      line_start = false;
      continue;
    }
    tt_stated s;
    if (tt_read_number(text, &p, line_start, &s)) out[n++] = s;
    line_start = false;
  }
  return n;
}

void tt_backing_add_text(tt_backing *b, const char *text) {
  tt_stated found[TT_MAX_STATED];
  size_t n = tt_scan_numbers(text ? text : "", found, TT_MAX_STATED);
  for (size_t i = 0; i < n; i++) tt_backing_push(b, found[i].value, false);
}

/* Numbers inside a text cell: "Symphony No. 5", the parts of a date. */
static void tt_backing_add_cell_text(tt_backing *b, const char *s, size_t len) {
  const char *end = s + len;
  for (const char *p = s; p < end && b->n < TT_MAX_BACKING;) {
    if (!isdigit((unsigned char)*p)) {
      p++;
      continue;
    }
    char num[48];
    size_t k = 0;
    bool dot = false;
    while (p < end && (isdigit((unsigned char)*p) || (*p == '.' && !dot && p + 1 < end &&
                                                      isdigit((unsigned char)p[1])))) {
      if (*p == '.') dot = true;
      if (k < sizeof num - 1) num[k++] = *p;
      p++;
    }
    num[k] = '\0';
    tt_backing_push(b, strtod(num, NULL), false);
  }
}

void tt_backing_add_result(tt_backing *b, const tt_result *r) {
  tt_backing_push(b, (double)r->nrows, true);
  if (r->total_exact) tt_backing_push(b, (double)r->total_rows, true);
  for (size_t c = 0; c < r->ncols; c++) {
    double sum = 0;
    size_t nums = 0;
    for (size_t i = 0; i < r->nrows; i++) {
      const tt_value *v = tt_result_cell(r, i, c);
      if (v->type == TT_VAL_INT || v->type == TT_VAL_REAL) {
        double d = v->type == TT_VAL_INT ? (double)v->u.i : v->u.r;
        tt_backing_push(b, d, true);
        sum += d;
        nums++;
      } else if (v->type == TT_VAL_TEXT) {
        tt_backing_add_cell_text(b, v->u.s, v->len > 200 ? 200 : v->len);
      }
    }
    if (nums >= 2) tt_backing_push(b, sum, true); /* "together they have ..." */
  }
}

void tt_backing_add_list(tt_backing *b, const char *list) {
  for (const char *p = list ? list : ""; *p;) {
    char *end;
    double v = strtod(p, &end);
    if (end == p) break;
    tt_backing_push(b, v, true);
    p = end;
  }
}

char *tt_backing_list(const tt_backing *b, size_t max) {
  tt_buf out = TT_BUF_INIT;
  for (size_t i = 0; i < b->n && i < max; i++) tt_buf_printf(&out, "%s%.17g", i ? " " : "", b->v[i]);
  return tt_buf_detach(&out);
}

/* ---- the check ------------------------------------------------------------ */

static bool tt_near(double a, double v, double tol) { return fabs(fabs(a) - fabs(v)) <= tol; }

static bool tt_backed(const tt_stated *s, const tt_backing *b) {
  for (size_t i = 0; i < b->n; i++) {
    if (tt_near(s->value, b->v[i], s->tol)) return true;
    if (s->percent && tt_near(s->value, b->v[i] * 100, s->tol)) return true; /* a ratio */
  }
  if (!s->percent) return false;
  /* a share: one quantity of another (or of a column's total) */
  size_t n = b->n < TT_MAX_PAIRS ? b->n : TT_MAX_PAIRS;
  for (size_t i = 0; i < n; i++)
    for (size_t k = 0; k < n; k++)
      if (i != k && b->quantity[i] && b->quantity[k] && b->v[k] != 0 &&
          tt_near(s->value, 100 * b->v[i] / b->v[k], s->tol))
        return true;
  return false;
}

size_t tt_check_numbers(const char *answer, const char *question, const tt_backing *b,
                        tt_buf *unbacked) {
  tt_stated said[TT_MAX_STATED], asked[TT_MAX_STATED];
  size_t ns = tt_scan_numbers(answer ? answer : "", said, TT_MAX_STATED);
  size_t nq = tt_scan_numbers(question ? question : "", asked, TT_MAX_STATED);
  size_t bad = 0;
  for (size_t i = 0; i < ns; i++) {
    bool known = false;
    for (size_t k = 0; k < nq && !known; k++) known = asked[k].value == said[i].value;
    if (known || tt_backed(&said[i], b)) continue;
    /* each number once in the list */
    bool listed = false;
    for (size_t k = 0; k < i && !listed; k++) listed = strcmp(said[k].text, said[i].text) == 0;
    if (listed) continue;
    if (unbacked) {
      tt_buf_puts(unbacked, said[i].text);
      tt_buf_putc(unbacked, '\0');
    }
    bad++;
  }
  return bad;
}

size_t tt_count_numbers(const char *text) {
  tt_stated found[TT_MAX_STATED];
  return tt_scan_numbers(text ? text : "", found, TT_MAX_STATED);
}

bool tt_mentions_read_only(const char *text) {
  static const char *const words[] = {"read-only", "read only", "not allowed", "cannot",
                                      "can't", "not possible", "only read", "unable"};
  tt_buf low = TT_BUF_INIT;
  for (const char *p = text ? text : ""; *p; p++) tt_buf_putc(&low, (char)tolower((unsigned char)*p));
  bool hit = false;
  for (size_t i = 0; i < sizeof words / sizeof words[0] && !hit; i++)
    hit = strstr(tt_buf_cstr(&low), words[i]) != NULL;
  tt_buf_free(&low);
  return hit;
}
