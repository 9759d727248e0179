/* search_guard.c — instr(), replace() and trim()/ltrim()/rtrim() in linear
 * time.
 *
 * SQLite's built-in versions compare the pattern at every position of the
 * string (instr, replace) or every character of the set at every position
 * (the trims): instr(X, Y) with a 1 MB X and a 500 kB Y runs for about 10 s
 * inside one opcode, where the progress handler cannot stop it. These
 * replacements give the built-ins' results (checked against them on
 * random inputs, invalid UTF-8 included) and search with memmem() and hash
 * lookups instead. */
#define _GNU_SOURCE /* memmem */
#include "db/sqlite/sqlite.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static bool tt_is_cont(unsigned char b) { return (b & 0xC0) == 0x80; }

/* ---- instr ---------------------------------------------------------------- */

/* Where SQLite's instr finds needle: it tries offset 0, then every byte
 * that does not continue a UTF-8 character (any byte, for blobs). */
static const unsigned char *tt_instr_find(const unsigned char *hay, size_t nh,
                                          const unsigned char *needle, size_t nn, bool is_text) {
  if (nn > nh || !hay) return NULL;
  if (memcmp(hay, needle, nn) == 0) return hay;
  if (is_text && tt_is_cont(needle[0])) return NULL; /* only offset 0 could start with it */
  if (nh == nn) return NULL;
  return memmem(hay + 1, nh - 1, needle, nn);
}

static void tt_checked_instr(sqlite3_context *ctx, int argc, sqlite3_value **argv) {
  (void)argc;
  int th = sqlite3_value_type(argv[0]), tn = sqlite3_value_type(argv[1]);
  if (th == SQLITE_NULL || tn == SQLITE_NULL) return;
  int nh = sqlite3_value_bytes(argv[0]), nn = sqlite3_value_bytes(argv[1]);
  if (nn <= 0) {
    sqlite3_result_int(ctx, 1);
    return;
  }
  const unsigned char *hay, *needle;
  bool is_text;
  sqlite3_value *c1 = NULL, *c2 = NULL;
  if (th == SQLITE_BLOB && tn == SQLITE_BLOB) {
    hay = sqlite3_value_blob(argv[0]);
    needle = sqlite3_value_blob(argv[1]);
    is_text = false;
  } else if (th != SQLITE_BLOB && tn != SQLITE_BLOB) {
    hay = sqlite3_value_text(argv[0]);
    needle = sqlite3_value_text(argv[1]);
    is_text = true;
  } else { /* one blob, one text: both compared as text, as SQLite does */
    c1 = sqlite3_value_dup(argv[0]);
    c2 = sqlite3_value_dup(argv[1]);
    hay = c1 ? sqlite3_value_text(c1) : NULL;
    nh = c1 ? sqlite3_value_bytes(c1) : 0;
    needle = c2 ? sqlite3_value_text(c2) : NULL;
    nn = c2 ? sqlite3_value_bytes(c2) : 0;
    is_text = true;
  }
  if (!needle || (nh && !hay)) {
    sqlite3_result_error_nomem(ctx);
  } else {
    const unsigned char *m = tt_instr_find(hay, (size_t)nh, needle, (size_t)nn, is_text);
    long long pos = 0;
    if (m) { /* 1 + the number of steps SQLite takes to get there */
      pos = 1;
      for (const unsigned char *p = hay + 1; p <= m; p++)
        if (!is_text || !tt_is_cont(*p)) pos++;
    }
    sqlite3_result_int64(ctx, pos);
  }
  sqlite3_value_free(c1);
  sqlite3_value_free(c2);
}

/* ---- replace -------------------------------------------------------------- */

static void tt_checked_replace(sqlite3_context *ctx, int argc, sqlite3_value **argv) {
  (void)argc;
  const unsigned char *str = sqlite3_value_text(argv[0]);
  if (!str) return;
  size_t ns = (size_t)sqlite3_value_bytes(argv[0]);
  const unsigned char *pat = sqlite3_value_text(argv[1]);
  if (!pat) return;
  if (pat[0] == 0) { /* the built-in hands back its argument unchanged */
    sqlite3_result_value(ctx, argv[0]);
    return;
  }
  size_t np = (size_t)sqlite3_value_bytes(argv[1]);
  const unsigned char *rep = sqlite3_value_text(argv[2]);
  if (!rep) return;
  size_t nr = (size_t)sqlite3_value_bytes(argv[2]);
  size_t limit = (size_t)sqlite3_limit(sqlite3_context_db_handle(ctx), SQLITE_LIMIT_LENGTH, -1);
  tt_buf out = TT_BUF_INIT;
  const unsigned char *p = str, *end = str + ns;
  bool too_big = false;
  while (!too_big) {
    const unsigned char *m = (size_t)(end - p) >= np ? memmem(p, (size_t)(end - p), pat, np) : NULL;
    if (!m) break;
    tt_buf_append(&out, p, (size_t)(m - p));
    tt_buf_append(&out, rep, nr);
    p = m + np;
    too_big = out.len + (size_t)(end - p) > limit;
  }
  tt_buf_append(&out, p, (size_t)(end - p));
  if (too_big || out.len > limit) sqlite3_result_error_toobig(ctx);
  else sqlite3_result_text(ctx, out.data ? out.data : "", (int)out.len, SQLITE_TRANSIENT);
  tt_buf_free(&out);
}

/* ---- trim, ltrim, rtrim with a character set ------------------------------ */

#define TT_MAX_LENGTHS 16

/* The characters of the set as SQLite splits them (a lead byte and the
 * continuation bytes after it; any other byte alone), in a hash table by
 * their bytes, each with its position in the set: where several match,
 * SQLite takes the one listed first. */
typedef struct tt_charset {
  const unsigned char **chars;
  int *lens, *order;
  size_t cap;                  /* slots (a power of two) */
  int lengths[TT_MAX_LENGTHS]; /* distinct character lengths */
  int nlengths;
  bool too_varied;             /* more distinct lengths than that (invalid UTF-8) */
} tt_charset;

static uint32_t tt_hash(const unsigned char *p, int n) {
  return tt_fnv1a32(TT_FNV1A32_INIT, p, (size_t)n);
}

static const unsigned char *tt_next_char(const unsigned char *z) {
  if (*z++ >= 0xC0)
    while (tt_is_cont(*z)) z++;
  return z;
}

static void tt_charset_build(tt_charset *cs, const unsigned char *set) {
  size_t count = 0;
  for (const unsigned char *z = set; *z; z = tt_next_char(z)) count++;
  memset(cs, 0, sizeof *cs);
  cs->cap = 16;
  while (cs->cap < count * 2) cs->cap *= 2;
  cs->chars = tt_xcalloc(cs->cap, sizeof *cs->chars);
  cs->lens = tt_xcalloc(cs->cap, sizeof *cs->lens);
  cs->order = tt_xcalloc(cs->cap, sizeof *cs->order);
  int index = 0;
  for (const unsigned char *z = set; *z; index++) {
    const unsigned char *c = z;
    z = tt_next_char(z);
    int len = (int)(z - c);
    size_t slot = tt_hash(c, len) & (cs->cap - 1);
    while (cs->chars[slot] && !(cs->lens[slot] == len && memcmp(cs->chars[slot], c, (size_t)len) == 0))
      slot = (slot + 1) & (cs->cap - 1);
    if (cs->chars[slot]) continue; /* the earliest copy counts */
    cs->chars[slot] = c;
    cs->lens[slot] = len;
    cs->order[slot] = index;
    bool known = false;
    for (int k = 0; k < cs->nlengths; k++) known |= cs->lengths[k] == len;
    if (known) continue;
    if (cs->nlengths == TT_MAX_LENGTHS) cs->too_varied = true;
    else cs->lengths[cs->nlengths++] = len;
  }
}

static void tt_charset_free(tt_charset *cs) {
  free(cs->chars);
  free(cs->lens);
  free(cs->order);
}

/* Length of the set character SQLite matches at the start (or, with
 * at_end, the end) of p[0..n); 0 when none does. */
static int tt_charset_match(const tt_charset *cs, const unsigned char *p, size_t n, bool at_end) {
  int best_len = 0, best_order = -1;
  for (int k = 0; k < cs->nlengths; k++) {
    int len = cs->lengths[k];
    if ((size_t)len > n) continue;
    const unsigned char *q = at_end ? p + n - len : p;
    for (size_t slot = tt_hash(q, len) & (cs->cap - 1); cs->chars[slot]; slot = (slot + 1) & (cs->cap - 1)) {
      if (cs->lens[slot] != len || memcmp(cs->chars[slot], q, (size_t)len) != 0) continue;
      if (best_order < 0 || cs->order[slot] < best_order) {
        best_order = cs->order[slot];
        best_len = len;
      }
      break;
    }
  }
  return best_len;
}

/* SQLite's own search, for sets whose characters come in too many lengths
 * (only invalid UTF-8 does that; such sets are short). */
static int tt_plain_match(const unsigned char *set, const unsigned char *p, size_t n, bool at_end) {
  for (const unsigned char *c = set; *c;) {
    const unsigned char *z = tt_next_char(c);
    size_t len = (size_t)(z - c);
    if (len <= n && memcmp(at_end ? p + n - len : p, c, len) == 0) return (int)len;
    c = z;
  }
  return 0;
}

/* The function's user data says which ends: 1 left, 2 right, 3 both. */
static void tt_checked_trim(sqlite3_context *ctx, int argc, sqlite3_value **argv) {
  (void)argc;
  if (sqlite3_value_type(argv[0]) == SQLITE_NULL) return;
  const unsigned char *in = sqlite3_value_text(argv[0]);
  if (!in) return;
  size_t n = (size_t)sqlite3_value_bytes(argv[0]);
  const unsigned char *set = sqlite3_value_text(argv[1]);
  if (!set) return;
  int ends = (int)(intptr_t)sqlite3_user_data(ctx);
  tt_charset cs;
  tt_charset_build(&cs, set);
  for (int side = 1; side <= 2; side++) {
    if (!(ends & side)) continue;
    bool at_end = side == 2;
    while (n > 0) {
      int len = cs.too_varied ? tt_plain_match(set, in, n, at_end) : tt_charset_match(&cs, in, n, at_end);
      if (!len) break;
      if (!at_end) in += len;
      n -= (size_t)len;
    }
  }
  tt_charset_free(&cs);
  sqlite3_result_text(ctx, (const char *)in, (int)n, SQLITE_TRANSIENT);
}

int tt_search_guard_register(sqlite3 *h) {
  const int flags = SQLITE_UTF8 | SQLITE_DETERMINISTIC | SQLITE_INNOCUOUS;
  int rc = sqlite3_create_function_v2(h, "instr", 2, flags, NULL, tt_checked_instr,
                                      NULL, NULL, NULL);
  if (rc == SQLITE_OK)
    rc = sqlite3_create_function_v2(h, "replace", 3, flags, NULL, tt_checked_replace,
                                    NULL, NULL, NULL);
  static const struct { const char *name; intptr_t ends; } trims[] = {
      {"ltrim", 1}, {"rtrim", 2}, {"trim", 3}};
  for (size_t i = 0; i < 3 && rc == SQLITE_OK; i++)
    rc = sqlite3_create_function_v2(h, trims[i].name, 2, flags, (void *)trims[i].ends,
                                    tt_checked_trim, NULL, NULL, NULL);
  return rc;
}
