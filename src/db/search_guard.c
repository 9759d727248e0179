/* search_guard.c — instr() and replace() in linear time.
 *
 * SQLite's built-in instr() and replace() compare the pattern at every
 * position of the string: instr(X, Y) with a 1 MB X and a 500 kB Y runs for
 * about 10 s inside one opcode, where the progress handler cannot stop it.
 * These replacements give the same results (positions in characters for
 * text and bytes for blobs; non-overlapping, left-to-right replacement) but
 * search with memmem(), whose two-way algorithm is linear. */
#define _GNU_SOURCE /* memmem */
#include "db/db_internal.h"

#include <string.h>

/* First match of needle in hay at a character boundary (text) or anywhere
 * (blob); NULL when none. */
static const unsigned char *tt_find(const unsigned char *hay, size_t nh,
                                    const unsigned char *needle, size_t nn,
                                    bool is_text) {
  if (nh == 0 || !hay) return NULL; /* an empty blob comes as a NULL pointer */
  const unsigned char *p = hay, *end = hay + nh;
  while ((size_t)(end - p) >= nn) {
    const unsigned char *m = memmem(p, (size_t)(end - p), needle, nn);
    if (!m) return NULL;
    if (!is_text || (m[0] & 0xC0) != 0x80) return m;
    p = m + 1; /* a match inside a character: SQLite never tries there */
  }
  return NULL;
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
    const unsigned char *m = tt_find(hay, (size_t)nh, needle, (size_t)nn, is_text);
    long long pos = 0;
    if (m) {
      pos = 1;
      for (const unsigned char *p = hay; p < m; p++)
        if (!is_text || (*p & 0xC0) != 0x80) pos++;
    }
    sqlite3_result_int64(ctx, pos);
  }
  sqlite3_value_free(c1);
  sqlite3_value_free(c2);
}

static void tt_checked_replace(sqlite3_context *ctx, int argc, sqlite3_value **argv) {
  (void)argc;
  const unsigned char *str = sqlite3_value_text(argv[0]);
  if (!str) return;
  int ns = sqlite3_value_bytes(argv[0]);
  const unsigned char *pat = sqlite3_value_text(argv[1]);
  if (!pat) return;
  if (pat[0] == 0) { /* the built-in hands back its argument unchanged */
    sqlite3_result_value(ctx, argv[0]);
    return;
  }
  int np = sqlite3_value_bytes(argv[1]);
  const unsigned char *rep = sqlite3_value_text(argv[2]);
  if (!rep) return;
  int nr = sqlite3_value_bytes(argv[2]);
  sqlite3_str *out = sqlite3_str_new(sqlite3_context_db_handle(ctx));
  const unsigned char *p = str, *end = str + ns;
  while (sqlite3_str_errcode(out) == SQLITE_OK) {
    const unsigned char *m = tt_find(p, (size_t)(end - p), pat, (size_t)np, false);
    if (!m) break;
    sqlite3_str_append(out, (const char *)p, (int)(m - p));
    sqlite3_str_append(out, (const char *)rep, nr);
    p = m + np;
  }
  sqlite3_str_append(out, (const char *)p, (int)(end - p));
  int rc = sqlite3_str_errcode(out);
  int len = sqlite3_str_length(out);
  char *text = sqlite3_str_finish(out);
  if (rc == SQLITE_TOOBIG) sqlite3_result_error_toobig(ctx);
  else if (rc == SQLITE_NOMEM) sqlite3_result_error_nomem(ctx);
  else if (!text) sqlite3_result_text(ctx, "", 0, SQLITE_STATIC);
  else {
    sqlite3_result_text(ctx, text, len, sqlite3_free);
    return;
  }
  sqlite3_free(text);
}

int tt_search_guard_register(sqlite3 *h) {
  const int flags = SQLITE_UTF8 | SQLITE_DETERMINISTIC | SQLITE_INNOCUOUS;
  int rc = sqlite3_create_function_v2(h, "instr", 2, flags, NULL, tt_checked_instr,
                                      NULL, NULL, NULL);
  if (rc == SQLITE_OK)
    rc = sqlite3_create_function_v2(h, "replace", 3, flags, NULL, tt_checked_replace,
                                    NULL, NULL, NULL);
  return rc;
}
