/* csv_sniff.c — the types of CSV columns, learnt from their values so that
 * no number is ever invented (the rules are in csv_sniff.h): each value is
 * put in one class (an integer, a number in one decimal mark or in either,
 * a code with a leading zero, an integer too big, a date, a time, a
 * date-time, text), each column counts its classes and keeps a few
 * examples of each, and the verdict is the type most values fit when the
 * others are few. Converting a field reads it again under that verdict. */
#include "db/csv_sniff.h"
#include "db/db.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* Exceptions a typed column may have: at most 5% of its values, or at most
 * TT_CSV_FEW_MAX values that are at most a quarter of them. */
#define TT_CSV_FEW_PERCENT 5
#define TT_CSV_FEW_MAX 3
#define TT_CSV_EXAMPLE_CHARS 20 /* longer examples are cut */
#define TT_CSV_NUM_BUF 64       /* a number longer than this keeps its column text */

const char *const tt_csv_null_tokens[TT_CSV_NULL_TOKENS] = {
    "", "NA", "N/A", "n/a", "null", "NULL", "-", "\xE2\x80\x94", "?"};

/* The classes of values. */
enum {
  TT_K_INT,   /* an integer (no mark, no grouping): the same in either mark */
  TT_K_P,     /* a number only with a decimal point (1.5, 1e5, 1,234.5) */
  TT_K_C,     /* a number only with a decimal comma (9,5, 1.234,5) */
  TT_K_AMB,   /* a different number in each mark (1.234, 1,234) */
  TT_K_CODE,  /* a leading zero: 01234 */
  TT_K_BIG,   /* an integer beyond 64 bits, or a number too long to keep */
  TT_K_DATE,
  TT_K_TIME,
  TT_K_TS,
  TT_K_TEXT,
  TT_K_N,
  TT_K_NULL = TT_K_N
};

typedef struct tt_csv_col {
  long long cnt[TT_K_N];
  long long real_p, real_c;         /* TT_K_P / TT_K_C values with a fraction */
  long long amb_real_p, amb_real_c; /* TT_K_AMB values with a fraction in each mark */
  char *ex[TT_K_N][TT_CSV_NOTE_EXAMPLES];
  size_t nex[TT_K_N];
  tt_csv_column_sniff out;
  char *note;
} tt_csv_col;

struct tt_csv_sniff {
  size_t ncols;
  char delim;
  bool comma_ok; /* a decimal comma may be */
  tt_csv_col *cols;
  long long short_rows, long_rows;
  long short_line, long_line;
};

const char *tt_csv_type_name(tt_csv_type t) {
  switch (t) {
  case TT_CSV_TYPE_INTEGER: return "INTEGER";
  case TT_CSV_TYPE_REAL: return "REAL";
  case TT_CSV_TYPE_DATE: return "DATE";
  case TT_CSV_TYPE_TIME: return "TIME";
  case TT_CSV_TYPE_TIMESTAMP: return "TIMESTAMP";
  case TT_CSV_TYPE_TEXT: break;
  }
  return "TEXT";
}

static inline void tt_csv_trim(const char **s, size_t *n) {
  const char *p = *s;
  size_t k = *n;
  while (k && (*p == ' ' || *p == '\t')) p++, k--;
  while (k && (p[k - 1] == ' ' || p[k - 1] == '\t')) k--;
  *s = p;
  *n = k;
}

int tt_csv_null_token(const char *s, size_t n) {
  tt_csv_trim(&s, &n);
  if (n > 4 || (n && !strchr("NnNu-?\xE2", s[0]))) return -1;
  for (int i = 0; i < TT_CSV_NULL_TOKENS; i++)
    if (strlen(tt_csv_null_tokens[i]) == n && memcmp(tt_csv_null_tokens[i], s, n) == 0) return i;
  return -1;
}

/* ---- numbers ------------------------------------------------------------- */

enum { TT_NUM_NO, TT_NUM_INT, TT_NUM_REAL, TT_NUM_CODE, TT_NUM_BIG };

static inline bool tt_is_digit(char c) { return c >= '0' && c <= '9'; }

/* Appends c to buf (NULL: only counts) unless it is full. */
static inline void tt_num_put(char *buf, size_t *b, bool *over, char c) {
  if (*b >= TT_CSV_NUM_BUF - 1) {
    *over = true;
    return;
  }
  if (buf) buf[*b] = c;
  (*b)++;
}

/* Whether the digits of an integer (grouping characters among them)
 * exceed int64 (negative: its magnitude may be one more). */
static bool tt_num_too_big(const char *s, size_t n, bool negative) {
  static const char max[] = "9223372036854775807";
  char d[TT_CSV_NUM_BUF];
  size_t k = 0;
  for (size_t i = 0; i < n && k < sizeof d - 1; i++)
    if (tt_is_digit(s[i])) d[k++] = s[i];
  if (k != 19) return k > 19;
  int c = memcmp(d, max, 19);
  return c > 0 && !(negative && memcmp(d, "9223372036854775808", 19) == 0);
}

/* Reads s (trimmed) as a number whose decimal mark is mark (the other of
 * '.' and ',' groups thousands, in threes); buf (TT_CSV_NUM_BUF bytes)
 * gets it as strtod/strtoll read it; *plain: nothing but a sign and
 * digits were read (the same number in either mark). */
static int tt_num_scan(const char *s, size_t n, char mark, bool lead0_ok, char *buf, bool *plain) {
  char group = mark == '.' ? ',' : '.';
  size_t i = 0, b = 0;
  bool over = false;
#define TT_PUT(ch) tt_num_put(buf, &b, &over, (ch))
  if (i < n && (s[i] == '+' || s[i] == '-')) {
    if (s[i] == '-') TT_PUT('-');
    i++;
  }
  size_t ds = i, nd = 0, run = 0, nf = 0;
  bool grouped = false, real = false;
  *plain = false;
  while (i < n) {
    if (tt_is_digit(s[i])) {
      TT_PUT(s[i]);
      nd++, run++, i++;
    } else if (s[i] == group && nd > 0) {
      if (grouped ? run != 3 : run > 3) return TT_NUM_NO;
      grouped = true;
      run = 0;
      i++;
      if (i >= n || !tt_is_digit(s[i])) return TT_NUM_NO;
    } else {
      break;
    }
  }
  if (grouped && (run != 3 || s[ds] == '0')) return TT_NUM_NO;
  bool lead0 = !lead0_ok && !grouped && nd > 1 && s[ds] == '0';
  if (i < n && s[i] == mark) {
    real = true;
    TT_PUT('.');
    i++;
    while (i < n && tt_is_digit(s[i])) {
      TT_PUT(s[i]);
      nf++, i++;
    }
    if (nf == 0) return TT_NUM_NO; /* "5." */
  }
  if (nd == 0 && nf == 0) return TT_NUM_NO;
  if (mark == '.' && i < n && (s[i] == 'e' || s[i] == 'E')) {
    real = true;
    TT_PUT('e');
    i++;
    if (i < n && (s[i] == '+' || s[i] == '-')) TT_PUT(s[i++]);
    size_t es = i;
    while (i < n && tt_is_digit(s[i])) TT_PUT(s[i++]);
    if (i == es) return TT_NUM_NO;
  }
#undef TT_PUT
  if (i != n) return TT_NUM_NO;
  *plain = !grouped && !real;
  if (lead0) return TT_NUM_CODE;
  if (over) return TT_NUM_BIG;
  if (!real && nd >= 19 && tt_num_too_big(s + ds, n - ds, b > nd)) return TT_NUM_BIG;
  if (buf) buf[b] = '\0';
  return real ? TT_NUM_REAL : TT_NUM_INT;
}

/* ---- dates and times ------------------------------------------------------ */

static int tt_digits(const char *s, size_t k) {
  int v = 0;
  for (size_t i = 0; i < k; i++) {
    if (!tt_is_digit(s[i])) return -1;
    v = v * 10 + (s[i] - '0');
  }
  return v;
}

static bool tt_is_date(const char *s, size_t n) {
  if (n != 10 || s[4] != '-' || s[7] != '-') return false;
  int y = tt_digits(s, 4), m = tt_digits(s + 5, 2), d = tt_digits(s + 8, 2);
  if (y < 0 || m < 1 || m > 12 || d < 1) return false;
  static const int days[] = {31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  if (d > days[m - 1]) return false;
  bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
  return !(m == 2 && d == 29 && !leap);
}

/* hh:mm, hh:mm:ss, hh:mm:ss.fff */
static bool tt_is_time(const char *s, size_t n) {
  if (n < 5 || s[2] != ':') return false;
  int h = tt_digits(s, 2), mi = tt_digits(s + 3, 2);
  if (h < 0 || h > 23 || mi < 0 || mi > 59) return false;
  if (n == 5) return true;
  if (n < 8 || s[5] != ':') return false;
  int sec = tt_digits(s + 6, 2);
  if (sec < 0 || sec > 60) return false;
  if (n == 8) return true;
  return s[8] == '.' && n > 9 && tt_digits(s + 9, n - 9) >= 0 && n - 9 <= 9;
}

/* a date, T or a space, a time, and Z or ±hh:mm / ±hhmm */
static bool tt_is_timestamp(const char *s, size_t n) {
  if (n < 16 || !tt_is_date(s, 10) || (s[10] != 'T' && s[10] != ' ')) return false;
  const char *t = s + 11;
  size_t k = n - 11;
  if (k && t[k - 1] == 'Z') k--;
  else if (k > 6 && (t[k - 6] == '+' || t[k - 6] == '-') && t[k - 3] == ':' &&
           tt_digits(t + k - 5, 2) >= 0 && tt_digits(t + k - 2, 2) >= 0)
    k -= 6;
  else if (k > 5 && (t[k - 5] == '+' || t[k - 5] == '-') && tt_digits(t + k - 4, 4) >= 0)
    k -= 5;
  return tt_is_time(t, k);
}

/* ---- classes ---------------------------------------------------------------- */

/* The class of a value (trimmed, not a null token); *rp, *rc: it has a
 * fraction when read with a decimal point / a decimal comma. */
static int tt_csv_classify(bool comma_ok, const char *s, size_t n, bool *rp, bool *rc) {
  char *buf = NULL; /* only the class is wanted */
  *rp = *rc = false;
  char c0 = s[0];
  if (!tt_is_digit(c0) && c0 != '-' && c0 != '+' && c0 != '.' && c0 != ',') return TT_K_TEXT;
  /* the common case first: a short run of digits */
  size_t i = c0 == '-' || c0 == '+', j = i;
  while (j < n && tt_is_digit(s[j])) j++;
  if (j == n && j > i && n - i < 19) return s[i] == '0' && n - i > 1 ? TT_K_CODE : TT_K_INT;
  bool plain;
  int kp = tt_num_scan(s, n, '.', false, buf, &plain);
  if (kp == TT_NUM_INT && plain) return TT_K_INT;
  /* a comma or a point may read otherwise with a decimal comma; in a
   * comma file only a comma is worth the look (its mark is a point) */
  bool other = memchr(s, ',', n) || (comma_ok && memchr(s, '.', n));
  int kc = other ? tt_num_scan(s, n, ',', false, buf, &plain) : TT_NUM_NO;
  if (kp == TT_NUM_CODE || kc == TT_NUM_CODE) return TT_K_CODE;
  if (kp == TT_NUM_BIG || kc == TT_NUM_BIG) return TT_K_BIG;
  bool okp = kp == TT_NUM_INT || kp == TT_NUM_REAL, okc = kc == TT_NUM_INT || kc == TT_NUM_REAL;
  *rp = kp == TT_NUM_REAL;
  *rc = kc == TT_NUM_REAL;
  if (okp && okc) return TT_K_AMB;
  if (okp) return TT_K_P;
  if (okc) return TT_K_C;
  if (tt_is_date(s, n)) return TT_K_DATE;
  if (tt_is_time(s, n)) return TT_K_TIME;
  if (tt_is_timestamp(s, n)) return TT_K_TS;
  return TT_K_TEXT;
}

/* ---- the sniffer -------------------------------------------------------------- */

tt_csv_sniff *tt_csv_sniff_new(size_t ncols, char delim) {
  tt_csv_sniff *s = tt_xcalloc(1, sizeof *s);
  s->ncols = ncols;
  s->delim = delim;
  s->comma_ok = delim != ',';
  s->cols = tt_xcalloc(ncols ? ncols : 1, sizeof *s->cols);
  return s;
}

void tt_csv_sniff_free(tt_csv_sniff *s) {
  if (!s) return;
  for (size_t c = 0; c < s->ncols; c++) {
    for (int k = 0; k < TT_K_N; k++)
      for (size_t e = 0; e < s->cols[c].nex[k]; e++) free(s->cols[c].ex[k][e]);
    free(s->cols[c].note);
  }
  free(s->cols);
  free(s);
}

void tt_csv_sniff_record(tt_csv_sniff *s, size_t nfields, long line) {
  if (nfields < s->ncols) {
    if (!s->short_rows++) s->short_line = line;
    for (size_t c = nfields; c < s->ncols; c++) s->cols[c].out.nulls++;
  } else if (nfields > s->ncols) {
    if (!s->long_rows++) s->long_line = line;
  }
}

/* Keeps v as an example of class k when fewer than three differ. */
static void tt_csv_keep_example(tt_csv_col *c, int k, const char *v, size_t n) {
  if (c->nex[k] >= TT_CSV_NOTE_EXAMPLES) return;
  size_t keep = tt_utf8_prefix(v, n, TT_CSV_EXAMPLE_CHARS);
  for (size_t e = 0; e < c->nex[k]; e++) /* (a cut one is kept once per head) */
    if (strncmp(c->ex[k][e], v, keep) == 0 && (c->ex[k][e][keep] == '\0' || keep < n)) return;
  char *x = keep < n ? tt_xasprintf("%.*s\xE2\x80\xA6", (int)keep, v) : tt_xstrndup(v, keep);
  for (char *p = x; *p; p++) /* a note is one line of plain text */
    if ((unsigned char)*p < 0x20 || *p == 0x7f) *p = '?';
  c->ex[k][c->nex[k]++] = x;
}

void tt_csv_sniff_value(tt_csv_sniff *s, size_t col, const char *v, size_t n) {
  tt_csv_col *c = &s->cols[col];
  tt_csv_trim(&v, &n);
  if (n <= 4) {
    int tok = tt_csv_null_token(v, n);
    if (tok >= 0) {
      c->out.nulls++;
      c->out.null_tokens |= 1u << tok;
      return;
    }
  }
  bool rp, rc;
  int k = tt_csv_classify(s->comma_ok, v, n, &rp, &rc);
  c->cnt[k]++;
  if (k == TT_K_P) c->real_p += rp;
  else if (k == TT_K_C) c->real_c += rc;
  else if (k == TT_K_AMB) c->amb_real_p += rp, c->amb_real_c += rc;
  if (k != TT_K_INT) tt_csv_keep_example(c, k, v, n);
}

/* ---- verdicts -------------------------------------------------------------- */

static bool tt_csv_few(long long bad, long long all) {
  return bad == 0 || bad * 100 <= all * TT_CSV_FEW_PERCENT ||
         (bad <= TT_CSV_FEW_MAX && bad * 4 <= all);
}

static long long tt_csv_values(const tt_csv_col *c) {
  long long n = 0;
  for (int k = 0; k < TT_K_N; k++) n += c->cnt[k];
  return n;
}

/* The decimal mark of a column's numbers: '.' or ','; 0 when its values do
 * not say (only numbers that read differently in each mark, or as many of
 * each mark). */
static char tt_csv_mark(const tt_csv_sniff *s, const tt_csv_col *c) {
  if (!s->comma_ok) return '.';
  long long np = c->cnt[TT_K_P], nc = c->cnt[TT_K_C];
  if (nc > np) return ',';
  if (np > nc) return '.';
  if (np == 0 && c->cnt[TT_K_AMB] == 0) return '.';
  return 0;
}

/* Values of c that are numbers with decimal mark mark (integers only when
 * only_int). */
static long long tt_csv_num_conf(const tt_csv_col *c, char mark, bool only_int) {
  long long n = c->cnt[TT_K_INT];
  if (mark == '.') n += c->cnt[TT_K_P] + c->cnt[TT_K_AMB] - (only_int ? c->real_p + c->amb_real_p : 0);
  else if (mark == ',') n += c->cnt[TT_K_C] + c->cnt[TT_K_AMB] - (only_int ? c->real_c + c->amb_real_c : 0);
  return n;
}

/* The classes of values that are type t (as mark reads them). */
static unsigned tt_csv_fits(tt_csv_type t, char mark) {
  switch (t) {
  case TT_CSV_TYPE_INTEGER:
  case TT_CSV_TYPE_REAL:
    return 1u << TT_K_INT | 1u << TT_K_AMB | (mark == ',' ? 1u << TT_K_C : 1u << TT_K_P);
  case TT_CSV_TYPE_DATE: return 1u << TT_K_DATE;
  case TT_CSV_TYPE_TIME: return 1u << TT_K_TIME;
  case TT_CSV_TYPE_TIMESTAMP: return 1u << TT_K_DATE | 1u << TT_K_TS;
  case TT_CSV_TYPE_TEXT: break;
  }
  return ~0u;
}

/* Up to three examples of c's values outside the classes in fits, each in
 * quotes, ", " between. */
static void tt_csv_put_examples(tt_buf *b, const tt_csv_col *c, unsigned fits) {
  static const int order[] = {TT_K_TEXT, TT_K_CODE, TT_K_BIG, TT_K_P, TT_K_C, TT_K_AMB,
                              TT_K_DATE, TT_K_TS, TT_K_TIME};
  size_t shown = 0;
  for (size_t o = 0; o < sizeof order / sizeof order[0]; o++) {
    int k = order[o];
    if (fits & (1u << k)) continue;
    for (size_t e = 0; e < c->nex[k] && shown < TT_CSV_NOTE_EXAMPLES; e++, shown++)
      tt_buf_printf(b, "%s'%s'", shown ? ", " : "", c->ex[k][e]);
  }
  if (!shown && !(fits & (1u << TT_K_INT)) && c->cnt[TT_K_INT]) tt_buf_puts(b, "integers");
}

/* "was not a number" / "were not numbers" for a column of type t (an
 * INTEGER column an override made: integers). */
static void tt_csv_put_not(tt_buf *b, tt_csv_type t, bool overridden, long long bad) {
  static const char *const words[][2] = {
      {"text", "text"},
      {"a number", "numbers"},
      {"an ISO date", "ISO dates"},
      {"a time", "times"},
      {"an ISO date or date-time", "ISO dates or date-times"},
      {"an integer", "integers"},
  };
  int w = t == TT_CSV_TYPE_INTEGER && overridden ? 5
          : t == TT_CSV_TYPE_INTEGER || t == TT_CSV_TYPE_REAL ? 1
          : t == TT_CSV_TYPE_DATE                            ? 2
          : t == TT_CSV_TYPE_TIME                            ? 3
          : t == TT_CSV_TYPE_TIMESTAMP                       ? 4
                                                             : 0;
  tt_buf_printf(b, "%lld value%s %s not %s, read as NULL: ", bad, bad == 1 ? "" : "s",
                bad == 1 ? "was" : "were", words[w][bad == 1 ? 0 : 1]);
}

static int tt_csv_type_rank(tt_csv_type t) { return t == TT_CSV_TYPE_REAL ? TT_CSV_TYPE_INTEGER : (int)t; }

/* Picks the type of column c (no override). */
static void tt_csv_decide(const tt_csv_sniff *s, tt_csv_col *c, const char *name, tt_buf *note) {
  tt_csv_column_sniff *o = &c->out;
  long long n = o->values;
  o->type = TT_CSV_TYPE_TEXT;
  o->decimal = '.';
  if (n == 0) {
    tt_buf_puts(note, "only NULLs");
    return;
  }
  char mark = tt_csv_mark(s, c);
  long long num = tt_csv_num_conf(c, mark ? mark : '.', false);
  if (!mark) num = c->cnt[TT_K_INT];
  long long date = c->cnt[TT_K_DATE], ts = c->cnt[TT_K_TS] ? c->cnt[TT_K_TS] + date : 0;
  long long tm = c->cnt[TT_K_TIME];
  tt_csv_type t = TT_CSV_TYPE_REAL;
  long long best = num;
  if (date > best) t = TT_CSV_TYPE_DATE, best = date;
  if (ts > best) t = TT_CSV_TYPE_TIMESTAMP, best = ts;
  if (tm > best) t = TT_CSV_TYPE_TIME, best = tm;
  if (tt_csv_type_rank(t) == TT_CSV_TYPE_INTEGER) {
    long long hard = c->cnt[TT_K_CODE] + c->cnt[TT_K_BIG];
    long long amb = mark ? 0 : c->cnt[TT_K_AMB] + c->cnt[TT_K_P] + c->cnt[TT_K_C];
    if (hard && tt_csv_few(n - num - hard - amb, n)) {
      if (c->cnt[TT_K_CODE])
        tt_buf_printf(note, "kept as text: '%s' has a leading zero, a code not a number",
                      c->ex[TT_K_CODE][0]);
      else
        tt_buf_printf(note, "kept as text: '%s' is too long to keep every digit in a number",
                      c->ex[TT_K_BIG][0]);
      return;
    }
    if (amb && tt_csv_few(n - num - amb, n)) {
      int k = c->nex[TT_K_AMB] ? TT_K_AMB : c->nex[TT_K_P] ? TT_K_P : TT_K_C;
      if (c->cnt[TT_K_P] && c->cnt[TT_K_C])
        tt_buf_printf(note, "kept as text: as many decimal points as decimal commas, '%s' and '%s'",
                      c->ex[TT_K_P][0], c->ex[TT_K_C][0]);
      else
        tt_buf_printf(note, "kept as text: '%s' reads as two numbers; --csv-types %s=real or %s=decimal-comma says which",
                      c->ex[k][0], name, name);
      return;
    }
  }
  if (!tt_csv_few(n - best, n)) {
    if (num * 2 >= n)
      tt_buf_printf(note, "kept as text: %lld of %lld values are not numbers", n - num, n);
    return;
  }
  if (tt_csv_type_rank(t) == TT_CSV_TYPE_INTEGER) {
    o->decimal = mark;
    t = tt_csv_num_conf(c, mark, true) == num ? TT_CSV_TYPE_INTEGER : TT_CSV_TYPE_REAL;
    if (mark == ',') tt_buf_puts(note, "decimal comma");
  }
  o->type = t;
  o->bad = n - best;
  if (o->bad) {
    if (note->len) tt_buf_puts(note, "; ");
    tt_csv_put_not(note, t, false, o->bad);
    tt_csv_put_examples(note, c, tt_csv_fits(t, mark));
  }
}

/* The type an override gives column c. */
static void tt_csv_apply(const tt_csv_sniff *s, tt_csv_col *c, const tt_csv_override *ov,
                         tt_buf *note) {
  tt_csv_column_sniff *o = &c->out;
  long long n = o->values;
  o->type = ov->type;
  o->overridden = true;
  char mark = ov->decimal ? ov->decimal : tt_csv_mark(s, c);
  o->decimal = mark ? mark : '.';
  long long fit;
  switch (ov->type) {
  case TT_CSV_TYPE_INTEGER: fit = tt_csv_num_conf(c, o->decimal, true) + c->cnt[TT_K_CODE]; break;
  case TT_CSV_TYPE_REAL: fit = tt_csv_num_conf(c, o->decimal, false) + c->cnt[TT_K_CODE]; break;
  case TT_CSV_TYPE_DATE: fit = c->cnt[TT_K_DATE]; break;
  case TT_CSV_TYPE_TIME: fit = c->cnt[TT_K_TIME]; break;
  case TT_CSV_TYPE_TIMESTAMP: fit = c->cnt[TT_K_DATE] + c->cnt[TT_K_TS]; break;
  default: fit = n; break;
  }
  if (ov->type == TT_CSV_TYPE_REAL && o->decimal == ',') tt_buf_puts(note, "decimal comma");
  o->bad = n - fit;
  if (o->bad) {
    if (note->len) tt_buf_puts(note, "; ");
    tt_csv_put_not(note, ov->type, true, o->bad);
    unsigned fits = tt_csv_fits(ov->type, o->decimal);
    if (ov->type == TT_CSV_TYPE_INTEGER) fits &= ~(1u << TT_K_P | 1u << TT_K_C | 1u << TT_K_AMB);
    if (ov->type == TT_CSV_TYPE_INTEGER || ov->type == TT_CSV_TYPE_REAL) fits |= 1u << TT_K_CODE;
    tt_csv_put_examples(note, c, fits);
  }
}

static const tt_csv_override *tt_csv_find_override(tt_csv_overrides *ov, const char *table,
                                                   const char *name) {
  tt_csv_override *hit = NULL;
  for (size_t i = 0; ov && i < ov->n; i++) {
    tt_csv_override *o = &ov->v[i];
    if (strcasecmp(o->column, name) != 0) continue;
    if (o->table && (!table || strcasecmp(o->table, table) != 0)) continue;
    o->used = true;
    if (!hit || (o->table && !hit->table)) hit = o; /* table.col beats col */
  }
  return hit;
}

void tt_csv_sniff_finish(tt_csv_sniff *s, const char *table, char *const *names,
                         tt_csv_overrides *ov) {
  for (size_t i = 0; i < s->ncols; i++) {
    tt_csv_col *c = &s->cols[i];
    c->out.values = tt_csv_values(c);
    tt_buf note = TT_BUF_INIT;
    const tt_csv_override *o = names ? tt_csv_find_override(ov, table, names[i]) : NULL;
    if (o) tt_csv_apply(s, c, o, &note);
    else tt_csv_decide(s, c, names ? names[i] : "column", &note);
    free(c->note);
    c->note = note.len ? tt_buf_detach(&note) : NULL;
    tt_buf_free(&note);
    c->out.note = c->note;
  }
}

int tt_csv_sniff_header_vote(const tt_csv_sniff *s, size_t col, const char *v, size_t n) {
  const tt_csv_col *c = &s->cols[col];
  tt_csv_trim(&v, &n);
  long long all = tt_csv_values(c);
  if (all == 0 || tt_csv_null_token(v, n) >= 0) return 0;
  bool rp, rc;
  int k = tt_csv_classify(s->comma_ok, v, n, &rp, &rc);
  char mark = tt_csv_mark(s, c);
  if (tt_csv_num_conf(c, mark ? mark : '.', false) == all)
    return k == TT_K_INT || k == TT_K_AMB || k == (mark == ',' ? TT_K_C : TT_K_P) ? -1 : 1;
  if (c->cnt[TT_K_DATE] == all || c->cnt[TT_K_DATE] + c->cnt[TT_K_TS] == all)
    return k == TT_K_DATE || k == TT_K_TS ? -1 : 1;
  if (c->cnt[TT_K_TIME] == all) return k == TT_K_TIME ? -1 : 1;
  return 0;
}

size_t tt_csv_sniff_ncols(const tt_csv_sniff *s) { return s->ncols; }

const tt_csv_column_sniff *tt_csv_sniff_column(const tt_csv_sniff *s, size_t col) {
  return &s->cols[col].out;
}

long long tt_csv_sniff_short_rows(const tt_csv_sniff *s, long *first_line) {
  if (first_line) *first_line = s->short_line;
  return s->short_rows;
}

long long tt_csv_sniff_long_rows(const tt_csv_sniff *s, long *first_line) {
  if (first_line) *first_line = s->long_line;
  return s->long_rows;
}

unsigned tt_csv_sniff_null_tokens(const tt_csv_sniff *s) {
  unsigned bits = 0;
  for (size_t c = 0; c < s->ncols; c++) bits |= s->cols[c].out.null_tokens;
  return bits;
}

char *tt_csv_sniff_summary(const tt_csv_sniff *s) {
  tt_buf b = TT_BUF_INIT;
  if (s->delim == '\t') tt_buf_puts(&b, "tab-separated");
  else tt_buf_printf(&b, "'%c'-separated", s->delim);
  unsigned tokens = tt_csv_sniff_null_tokens(s);
  if (tokens) {
    tt_buf_puts(&b, "; NULL: ");
    bool any = false;
    for (int i = 0; i < TT_CSV_NULL_TOKENS; i++)
      if (tokens & (1u << i)) {
        tt_buf_printf(&b, "%s'%s'", any ? ", " : "", tt_csv_null_tokens[i]);
        any = true;
      }
  }
  if (s->short_rows)
    tt_buf_printf(&b, "; %lld short row%s, %sat line %ld, read with NULLs", s->short_rows,
                  s->short_rows == 1 ? "" : "s", s->short_rows == 1 ? "" : "first ", s->short_line);
  if (s->long_rows)
    tt_buf_printf(&b, "; %lld long row%s, %sat line %ld: fields past column %zu left out",
                  s->long_rows, s->long_rows == 1 ? "" : "s", s->long_rows == 1 ? "" : "first ",
                  s->long_line, s->ncols);
  return tt_buf_detach(&b);
}

/* s (fewer than 19 bytes) as an optional '-' and digits, without a
 * leading zero; false for anything else. */
static bool tt_int_quick(const char *s, size_t n, int64_t *out) {
  size_t i = s[0] == '-';
  if (i == n || (s[i] == '0' && n - i > 1)) return false;
  int64_t v = 0;
  for (; i < n; i++) {
    if (!tt_is_digit(s[i])) return false;
    v = v * 10 + (s[i] - '0');
  }
  *out = s[0] == '-' ? -v : v;
  return true;
}

void tt_csv_sniff_convert(const tt_csv_sniff *s, size_t col, const char *v, size_t n,
                          tt_csv_cell *out) {
  const tt_csv_column_sniff *o = &s->cols[col].out;
  const char *t = v;
  size_t k = n;
  tt_csv_trim(&t, &k);
  out->kind = TT_CSV_CELL_NULL;
  if (k <= 4 && tt_csv_null_token(t, k) >= 0) return;
  char buf[TT_CSV_NUM_BUF];
  switch (o->type) {
  case TT_CSV_TYPE_TEXT:
    out->kind = TT_CSV_CELL_TEXT;
    out->s = v;
    out->n = n;
    return;
  case TT_CSV_TYPE_INTEGER:
  case TT_CSV_TYPE_REAL: {
    if (k && k < 19 && o->type == TT_CSV_TYPE_INTEGER && tt_int_quick(t, k, &out->i)) {
      out->kind = TT_CSV_CELL_INT; /* the common case: digits, read at once */
      return;
    }
    bool plain;
    int r = tt_num_scan(t, k, o->decimal, o->overridden, buf, &plain); /* 01234 is 1234 when the user says so */
    if (r == TT_NUM_INT && o->type == TT_CSV_TYPE_INTEGER) {
      out->kind = TT_CSV_CELL_INT;
      out->i = strtoll(buf, NULL, 10);
    } else if ((r == TT_NUM_INT || r == TT_NUM_REAL) && o->type == TT_CSV_TYPE_REAL) {
      out->kind = TT_CSV_CELL_REAL;
      out->d = strtod(buf, NULL);
    }
    return;
  }
  case TT_CSV_TYPE_DATE:
  case TT_CSV_TYPE_TIME:
  case TT_CSV_TYPE_TIMESTAMP: {
    bool fits = o->type == TT_CSV_TYPE_DATE   ? tt_is_date(t, k)
                : o->type == TT_CSV_TYPE_TIME ? tt_is_time(t, k)
                                              : tt_is_date(t, k) || tt_is_timestamp(t, k);
    if (fits) {
      out->kind = TT_CSV_CELL_TEXT;
      out->s = t;
      out->n = k;
    }
    return;
  }
  }
}

/* ---- overrides -------------------------------------------------------------- */

static const struct {
  const char *word;
  tt_csv_type type;
  char decimal;
} tt_csv_type_words[] = {
    {"integer", TT_CSV_TYPE_INTEGER, 0}, {"int", TT_CSV_TYPE_INTEGER, 0},
    {"real", TT_CSV_TYPE_REAL, 0},       {"float", TT_CSV_TYPE_REAL, 0},
    {"double", TT_CSV_TYPE_REAL, 0},     {"number", TT_CSV_TYPE_REAL, 0},
    {"decimal-comma", TT_CSV_TYPE_REAL, ','},
    {"text", TT_CSV_TYPE_TEXT, 0},       {"string", TT_CSV_TYPE_TEXT, 0},
    {"date", TT_CSV_TYPE_DATE, 0},       {"time", TT_CSV_TYPE_TIME, 0},
    {"timestamp", TT_CSV_TYPE_TIMESTAMP, 0}, {"datetime", TT_CSV_TYPE_TIMESTAMP, 0},
};

#define TT_CSV_TYPES_HELP                                                                  \
  "write --csv-types as column=type or table.column=type, commas between (types: integer, " \
  "real, decimal-comma, text, date, time, timestamp)"

static bool tt_csv_override_parse(const char *item, size_t len, tt_csv_override *o,
                                  tt_error *err) {
  const char *eq = memchr(item, '=', len);
  if (!eq) {
    tt_error_set(err, TT_ERR_CONFIG, "--csv-types: '%.*s' has no '=type'", (int)len, item);
    tt_error_hint(err, "%s", TT_CSV_TYPES_HELP);
    return false;
  }
  const char *name = item, *type = eq + 1;
  size_t nlen = (size_t)(eq - item), tlen = len - nlen - 1;
  tt_csv_trim(&name, &nlen);
  tt_csv_trim(&type, &tlen);
  const char *dot = memchr(name, '.', nlen);
  const char *col = dot ? dot + 1 : name;
  size_t clen = dot ? nlen - (size_t)(dot - name) - 1 : nlen;
  if (!clen || (dot && dot == name)) {
    tt_error_set(err, TT_ERR_CONFIG, "--csv-types: '%.*s' names no column", (int)len, item);
    tt_error_hint(err, "%s", TT_CSV_TYPES_HELP);
    return false;
  }
  for (size_t i = 0; i < sizeof tt_csv_type_words / sizeof tt_csv_type_words[0]; i++)
    if (strlen(tt_csv_type_words[i].word) == tlen &&
        strncasecmp(tt_csv_type_words[i].word, type, tlen) == 0) {
      o->type = tt_csv_type_words[i].type;
      o->decimal = tt_csv_type_words[i].decimal;
      o->table = dot ? tt_xstrndup(name, (size_t)(dot - name)) : NULL;
      o->column = tt_xstrndup(col, clen);
      return true;
    }
  tt_error_set(err, TT_ERR_CONFIG, "--csv-types: unknown type '%.*s' for %.*s", (int)tlen, type,
               (int)nlen, name);
  tt_error_hint(err, "%s", TT_CSV_TYPES_HELP);
  return false;
}

bool tt_csv_overrides_parse(const char *spec, tt_csv_overrides *out, tt_error *err) {
  memset(out, 0, sizeof *out);
  if (!spec) return true;
  for (const char *p = spec; *p;) {
    const char *end = strchr(p, ',');
    size_t len = end ? (size_t)(end - p) : strlen(p);
    const char *q = p;
    size_t qn = len;
    tt_csv_trim(&q, &qn);
    if (qn) {
      out->v = tt_xrealloc(out->v, (out->n + 1) * sizeof *out->v);
      memset(&out->v[out->n], 0, sizeof out->v[out->n]);
      if (!tt_csv_override_parse(q, qn, &out->v[out->n], err)) {
        tt_csv_overrides_free(out);
        return false;
      }
      out->n++;
    }
    p = end ? end + 1 : p + len;
  }
  return true;
}

void tt_csv_overrides_free(tt_csv_overrides *o) {
  if (!o) return;
  for (size_t i = 0; i < o->n; i++) {
    free(o->v[i].table);
    free(o->v[i].column);
  }
  free(o->v);
  memset(o, 0, sizeof *o);
}

const tt_csv_override *tt_csv_overrides_unused(const tt_csv_overrides *o) {
  for (size_t i = 0; o && i < o->n; i++)
    if (!o->v[i].used) return &o->v[i];
  return NULL;
}

bool tt_db_csv_types_check(const char *spec, tt_error *err) {
  tt_csv_overrides ov;
  if (!tt_csv_overrides_parse(spec, &ov, err)) return false;
  tt_csv_overrides_free(&ov);
  return true;
}
