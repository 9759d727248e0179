/* str.c — small string helpers: case-insensitive compare, number parsing
 * for command-line options, SQL quoting and reading a whole stream. */
#include "util/util.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

bool tt_streq_nocase(const char *a, const char *b) {
  for (; *a && *b; a++, b++)
    if (tolower((unsigned char)*a) != tolower((unsigned char)*b)) return false;
  return *a == *b;
}

static bool tt_same_letter(char a, char b) {
  return tolower((unsigned char)a) == tolower((unsigned char)b);
}

/* Optimal string alignment distance: insertions, deletions, substitutions
 * and swaps of two neighbouring letters ("Nmae" -> "Name") cost one each,
 * since a swap is the most common typo. Three rows: two before this one. */
size_t tt_edit_distance(const char *a, const char *b, size_t max) {
  size_t na = strlen(a), nb = strlen(b);
  if ((na > nb ? na - nb : nb - na) > max) return max + 1;
  size_t *rows = tt_xmalloc(3 * (nb + 1) * sizeof(size_t));
  size_t *prev2 = rows, *prev = rows + nb + 1, *cur = rows + 2 * (nb + 1);
  for (size_t j = 0; j <= nb; j++) prev[j] = j;
  for (size_t i = 1; i <= na; i++) {
    size_t best = cur[0] = i;
    for (size_t j = 1; j <= nb; j++) {
      size_t v = prev[j - 1] + (tt_same_letter(a[i - 1], b[j - 1]) ? 0 : 1);
      if (prev[j] + 1 < v) v = prev[j] + 1;
      if (cur[j - 1] + 1 < v) v = cur[j - 1] + 1;
      if (i > 1 && j > 1 && tt_same_letter(a[i - 1], b[j - 2]) && tt_same_letter(a[i - 2], b[j - 1]) &&
          prev2[j - 2] + 1 < v)
        v = prev2[j - 2] + 1;
      cur[j] = v;
      if (v < best) best = v;
    }
    if (best > max) {
      free(rows);
      return max + 1;
    }
    size_t *t = prev2;
    prev2 = prev;
    prev = cur;
    cur = t;
  }
  size_t d = prev[nb];
  free(rows);
  return d > max ? max + 1 : d;
}

bool tt_has_prefix(const char *s, const char *prefix) {
  return strncmp(s, prefix, strlen(prefix)) == 0;
}

bool tt_has_suffix_nocase(const char *s, const char *suffix) {
  size_t n = strlen(s), k = strlen(suffix);
  return n >= k && tt_streq_nocase(s + n - k, suffix);
}

void tt_buf_put_grouped(tt_buf *b, long long n) {
  char digits[32];
  unsigned long long u = n < 0 ? 0ULL - (unsigned long long)n : (unsigned long long)n;
  size_t len = 0;
  do {
    digits[len++] = (char)('0' + u % 10);
    u /= 10;
  } while (u);
  if (n < 0) tt_buf_putc(b, '-');
  for (size_t i = len; i > 0; i--) {
    tt_buf_putc(b, digits[i - 1]);
    if (i > 1 && (i - 1) % 3 == 0) tt_buf_putc(b, ',');
  }
}

bool tt_parse_long(const char *s, long min, long max, long *out) {
  if (!s || !*s || isspace((unsigned char)*s)) return false;
  errno = 0;
  char *end;
  long v = strtol(s, &end, 10);
  if (errno || *end || v < min || v > max) return false;
  *out = v;
  return true;
}

bool tt_parse_double(const char *s, double min, double max, double *out) {
  if (!s || !*s || isspace((unsigned char)*s)) return false;
  errno = 0;
  char *end;
  double v = strtod(s, &end);
  if (errno || *end || !isfinite(v) || v < min || v > max) return false;
  *out = v;
  return true;
}

static void tt_buf_put_quoted(tt_buf *b, const char *s, char q) {
  tt_buf_putc(b, q);
  for (; *s; s++) {
    if (*s == q) tt_buf_putc(b, q);
    tt_buf_putc(b, *s);
  }
  tt_buf_putc(b, q);
}

void tt_buf_put_sql_ident(tt_buf *b, const char *s) { tt_buf_put_quoted(b, s, '"'); }

void tt_buf_put_sql_string(tt_buf *b, const char *s) { tt_buf_put_quoted(b, s, '\''); }

char *tt_read_stream(int fd, size_t max, size_t *len, bool *too_long) {
  tt_buf b = TT_BUF_INIT;
  char chunk[65536];
  *too_long = false;
  for (;;) {
    ssize_t r = read(fd, chunk, sizeof chunk);
    if (r < 0) {
      if (errno == EINTR) continue;
      tt_buf_free(&b);
      return NULL;
    }
    if (r == 0) break;
    size_t take = (size_t)r;
    if (b.len + take > max) {
      take = max - b.len;
      *too_long = true;
    }
    tt_buf_append(&b, chunk, take);
    if (*too_long) break;
  }
  *len = b.len;
  return tt_buf_detach(&b);
}
