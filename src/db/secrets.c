/* secrets.c — a database target's secrets, and every occurrence of them
 * masked in text. A connection string can carry a password in many forms:
 * in a URI's user information or its ?password= (and ?sslpassword=)
 * parameter, percent-encoded or not, under a key spelled with percent
 * escapes (libpq decodes ?pass%77ord= to password), in a keyword/value
 * string quoted ('Quoted Secret') or with backslash escapes, malformed so
 * that libpq echoes the whole string in its error, or in PGPASSWORD. The
 * secrets are worked out here from the string itself, in every form it
 * may show up in (as written, decoded, and the pieces between URI
 * delimiters that libpq may split a malformed one into), and masked as
 * "***" wherever they occur in a message, whatever else the text holds
 * there (a password that is also the user or database name is masked
 * there too). The db layer masks each error an engine returns once, at
 * the engine table's boundary (db.c, cursor.c, catalog.c). */
#include "db/db_internal.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define TT_MASK "***"
/* A piece of a password between URI delimiters is a secret of its own
 * from this length on (shorter ones say little and would mask too much). */
#define TT_SECRET_PIECE_MIN 4

typedef struct tt_secrets {
  char **v;
  size_t n, cap;
} tt_secrets;

static void tt_secrets_add(tt_secrets *s, const char *p, size_t n) {
  if (n == 0) return;
  for (size_t i = 0; i < s->n; i++)
    if (strlen(s->v[i]) == n && memcmp(s->v[i], p, n) == 0) return;
  if (s->n == s->cap) s->v = tt_xrealloc(s->v, (s->cap = s->cap ? s->cap * 2 : 8) * sizeof *s->v);
  s->v[s->n++] = tt_xstrndup(p, n);
}

static void tt_secrets_free(tt_secrets *s) {
  for (size_t i = 0; i < s->n; i++) {
    memset(s->v[i], 0, strlen(s->v[i]));
    free(s->v[i]);
  }
  free(s->v);
  *s = (tt_secrets){0};
}

static int tt_hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

/* p[0..n) with its %XX escapes decoded into out; false when a % is not
 * followed by two hex digits (libpq refuses such a URI, echoing it). */
static bool tt_pct_decode(const char *p, size_t n, tt_buf *out) {
  tt_buf_reset(out);
  for (size_t i = 0; i < n; i++) {
    if (p[i] != '%') {
      tt_buf_putc(out, p[i]);
      continue;
    }
    if (i + 2 >= n) return false;
    int a = tt_hex_digit(p[i + 1]), b = tt_hex_digit(p[i + 2]);
    if (a < 0 || b < 0) return false;
    tt_buf_putc(out, (char)(a * 16 + b));
    i += 2;
  }
  return true;
}

/* A password as written, decoded, and the pieces of 4 bytes or more
 * between the characters that delimit a URI (a malformed URI is split
 * there by libpq, which may then echo a piece alone). */
static void tt_secrets_add_forms(tt_secrets *s, const char *p, size_t n) {
  tt_secrets_add(s, p, n);
  tt_buf dec = TT_BUF_INIT;
  if (tt_pct_decode(p, n, &dec)) tt_secrets_add(s, dec.data ? dec.data : "", dec.len);
  tt_buf_free(&dec);
  for (size_t i = 0; i < n;) {
    size_t k = strcspn(p + i, "@/:?#&=[]");
    if (i + k > n) k = n - i;
    if (k >= TT_SECRET_PIECE_MIN && k < n) tt_secrets_add(s, p + i, k);
    i += k + 1;
  }
}

/* Whether a key names a secret: password or sslpassword, in any case,
 * percent escapes decoded (libpq decodes a URI's keys). */
static bool tt_secret_key(const char *k, size_t n) {
  tt_buf dec = TT_BUF_INIT;
  bool ok = tt_pct_decode(k, n, &dec);
  const char *key = ok ? tt_buf_cstr(&dec) : "";
  bool secret = ok && (strcasecmp(key, "password") == 0 || strcasecmp(key, "sslpassword") == 0);
  tt_buf_free(&dec);
  return secret;
}

/* The secrets of a URI (scheme://[user[:password]@]host.../db?k=v&...). */
static void tt_secrets_of_uri(const char *uri, tt_secrets *s) {
  const char *rest = strstr(uri, "://") + 3;
  const char *q = rest + strcspn(rest, "?");
  /* the user information ends at the last @ before the query (a password
   * holding an @ or a / unescaped is still the password), ... */
  const char *at = NULL;
  for (const char *p = rest; p < q; p++)
    if (*p == '@') at = p;
  if (at) {
    const char *colon = memchr(rest, ':', (size_t)(at - rest));
    if (colon) tt_secrets_add_forms(s, colon + 1, (size_t)(at - colon - 1));
  }
  /* ... as libpq reads it, at the first @ before any / */
  const char *first = rest + strcspn(rest, "@/");
  if (*first == '@' && first != at) {
    const char *colon = memchr(rest, ':', (size_t)(first - rest));
    if (colon && (size_t)(first - colon - 1) >= TT_SECRET_PIECE_MIN)
      tt_secrets_add_forms(s, colon + 1, (size_t)(first - colon - 1));
  }
  for (const char *p = *q ? q + 1 : q; *p;) {
    size_t len = strcspn(p, "&");
    const char *eq = memchr(p, '=', len);
    if (eq && tt_secret_key(p, (size_t)(eq - p)))
      tt_secrets_add_forms(s, eq + 1, (size_t)(p + len - eq - 1));
    p += len;
    if (*p) p++;
  }
}

static bool tt_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }

/* The secrets of a keyword/value string (host=h password='a b' ...), read
 * as libpq reads it: a value in single quotes or up to a space, with
 * backslash escapes in both. */
static void tt_secrets_of_conninfo(const char *s, tt_secrets *out) {
  const char *p = s;
  tt_buf val = TT_BUF_INIT;
  while (*p) {
    while (tt_space(*p)) p++;
    const char *key = p;
    while (*p && *p != '=' && !tt_space(*p)) p++;
    size_t klen = (size_t)(p - key);
    while (tt_space(*p)) p++;
    if (*p != '=') {
      if (*p) p++;
      continue;
    }
    p++;
    while (tt_space(*p)) p++;
    bool quoted = *p == '\'';
    if (quoted) p++;
    const char *raw = p;
    tt_buf_reset(&val);
    while (*p && (quoted ? *p != '\'' : !tt_space(*p))) {
      if (*p == '\\' && p[1]) p++;
      tt_buf_putc(&val, *p++);
    }
    size_t rlen = (size_t)(p - raw);
    if (quoted && *p == '\'') p++;
    if (tt_secret_key(key, klen)) {
      tt_secrets_add_forms(out, raw, rlen);
      tt_secrets_add(out, val.data ? val.data : "", val.len);
    }
  }
  tt_buf_free(&val);
}

/* The secrets a connection string given so carries (a URI's scheme, any;
 * else keyword/value pairs), and with env those of the environment that
 * libpq reads (PGPASSWORD). */
static void tt_secrets_of(const char *given, bool env, tt_secrets *s) {
  if (!given) return;
  const char *scheme = strstr(given, "://");
  if (scheme && scheme > given && strcspn(given, ":/ =") == (size_t)(scheme - given))
    tt_secrets_of_uri(given, s);
  else if (strchr(given, '='))
    tt_secrets_of_conninfo(given, s);
  const char *pw = env ? getenv("PGPASSWORD") : NULL;
  if (pw) tt_secrets_add(s, pw, strlen(pw));
}

static int tt_longer_first(const void *a, const void *b) {
  size_t la = strlen(*(char *const *)a), lb = strlen(*(char *const *)b);
  return la < lb ? 1 : la > lb ? -1 : 0;
}

/* A short secret is masked only where it is not part of a word ("b" in
 * "a:b@" but not in "mariadb"): masking every such letter would garble the
 * message and tell more than it hides. */
static bool tt_stands_alone(const char *text, size_t n, size_t i, size_t len) {
  return (i == 0 || !isalnum((unsigned char)text[i - 1])) &&
         (i + len == n || !isalnum((unsigned char)text[i + len]));
}

/* text[0..n) with every occurrence of every secret replaced by ***, the
 * longest secret first where several start at the same place; with
 * truncated, also an end of the text that is the start of a secret (the
 * rest of it was cut off). */
static void tt_secrets_mask(tt_secrets *s, const char *text, size_t n, bool truncated,
                            tt_buf *out) {
  if (s->n) qsort(s->v, s->n, sizeof *s->v, tt_longer_first);
  size_t i = 0;
  while (i < n) {
    size_t hit = 0;
    for (size_t k = 0; k < s->n && !hit; k++) {
      size_t len = strlen(s->v[k]);
      if (len <= n - i && memcmp(text + i, s->v[k], len) == 0 &&
          (len >= TT_SECRET_PIECE_MIN || tt_stands_alone(text, n, i, len)))
        hit = len;
      else if (truncated && len > n - i && memcmp(text + i, s->v[k], n - i) == 0) hit = n - i;
    }
    if (hit) {
      tt_buf_puts(out, TT_MASK);
      i += hit;
    } else {
      tt_buf_putc(out, text[i++]);
    }
  }
}

char *tt_db_secrets_masked(const char *given, const char *text) {
  tt_secrets s = {0};
  tt_secrets_of(given, false, &s);
  tt_buf b = TT_BUF_INIT;
  tt_secrets_mask(&s, text, strlen(text), false, &b);
  tt_secrets_free(&s);
  return tt_buf_detach(&b);
}

/* Masks in place a NUL-terminated field of size cap. */
static void tt_mask_field(tt_secrets *s, char *field, size_t cap) {
  size_t n = strlen(field);
  if (!n) return;
  tt_buf b = TT_BUF_INIT;
  tt_secrets_mask(s, field, n, n + 1 >= cap, &b);
  snprintf(field, cap, "%s", tt_buf_cstr(&b));
  memset(b.data, 0, b.len);
  tt_buf_free(&b);
}

void tt_db_secrets_scrub(const char *given, tt_error *err) {
  if (!err || err->kind == TT_OK || !given) return;
  tt_secrets s = {0};
  tt_secrets_of(given, true, &s);
  if (s.n) {
    tt_mask_field(&s, err->message, sizeof err->message);
    tt_mask_field(&s, err->hint, sizeof err->hint);
  }
  tt_secrets_free(&s);
}

void tt_db_target_scrub(const tt_db_target *t, tt_error *err) {
  if (t && t->uri) tt_db_secrets_scrub(t->given, err);
}

char *tt_db_target_shown(const char *given) {
  tt_secrets s = {0};
  tt_secrets_of(given, true, &s);
  tt_buf b = TT_BUF_INIT;
  tt_secrets_mask(&s, given, strlen(given), false, &b);
  tt_secrets_free(&s);
  return tt_buf_detach(&b);
}
