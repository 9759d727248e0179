/* values.c — the value index: distinct short text values per column, read
 * from a bounded sample of rows, so that a question naming "Rotterdam" or
 * "AC/DC" links to the column that holds it. Matching folds case and
 * Latin accents and forgives a typo in longer words; matches become hints
 * for the question and reasons in the ranking (rank.c). The cache file
 * that keeps an index between runs lives in values_cache.c. */
#include "schema/values_internal.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

typedef struct tt_value_entry {
  const char *key;   /* folded: lower-case ASCII words separated by one space */
  const char *value; /* as stored */
  const char *table;
  const char *column;
  uint64_t ord;      /* where its column stands: entries of one key sort by it */
} tt_value_entry;

struct tt_values {
  tt_arena *arena;
  tt_value_entry *e;
  size_t n, cap;
  bool sorted;
  void **owned;      /* memory handed over (tt_values_adopt) */
  size_t nowned;
  uint64_t block;    /* tt_values_add: the ord of the column added last ... */
  const char *block_table, *block_column; /* ... and which it was */
};

tt_values_opts tt_values_default_opts(void) {
  return (tt_values_opts){.max_per_column = 1000, .max_total = 200000, .max_len = 64,
                          .scan_rows = 50000};
}

/* Latin-1 Supplement and Latin Extended-A letters to their ASCII base. */
static char tt_fold_cp(uint32_t cp) {
  static const char latin1[] = /* U+00C0..U+00FF */
      "aaaaaaaceeeeiiiidnooooo_ouuuuyts"
      "aaaaaaaceeeeiiiidnooooo_ouuuuyty";
  if (cp < 0x80) return (char)tolower((int)cp);
  if (cp >= 0xC0 && cp <= 0xFF) return latin1[cp - 0xC0];
  if (cp >= 0x100 && cp <= 0x17F) {
    static const char exta[] = /* U+0100..U+017F */
        "aaaaaaccccccccddddeeeeeeeeeegggggggghhhhiiiiiiiiiiiijjkkklllllll"
        "lllnnnnnnnnnoooooooorrrrrrssssssssttttttuuuuuuuuuuuuwwyyyzzzzzzs";
    size_t i = cp - 0x100;
    return i < sizeof exta - 1 ? exta[i] : ' ';
  }
  return ' ';
}

void tt_values_fold(const char *s, size_t n, tt_buf *out) {
  const unsigned char *p = (const unsigned char *)s;
  size_t i = 0;
  bool space = true; /* no leading space */
  while (i < n) {
    uint32_t cp = 0;
    size_t k = tt_utf8_decode(p + i, n - i, &cp);
    if (k == 0) k = 1, cp = ' ';
    i += k;
    char c = tt_fold_cp(cp);
    if (!isalnum((unsigned char)c)) {
      if (!space) tt_buf_putc(out, ' ');
      space = true;
      continue;
    }
    tt_buf_putc(out, c);
    space = false;
  }
  if (out->len && out->data[out->len - 1] == ' ') out->data[--out->len] = '\0';
}

tt_values *tt_values_new(void) {
  tt_values *v = tt_xcalloc(1, sizeof *v);
  v->arena = tt_arena_new();
  return v;
}

void tt_values_free(tt_values *v) {
  if (!v) return;
  tt_arena_free(v->arena);
  for (size_t i = 0; i < v->nowned; i++) free(v->owned[i]);
  free(v->owned);
  free(v->e);
  free(v);
}

void tt_values_adopt(tt_values *v, void *mem) {
  v->owned = tt_xrealloc(v->owned, (v->nowned + 1) * sizeof *v->owned);
  v->owned[v->nowned++] = mem;
}

void tt_values_reserve(tt_values *v, size_t n) {
  if (n <= v->cap) return;
  v->cap = n;
  v->e = tt_xrealloc(v->e, v->cap * sizeof *v->e);
}

void tt_values_push(tt_values *v, const char *key, const char *value, const char *table,
                    const char *column, uint64_t ord) {
  if (v->n == v->cap) {
    v->cap = v->cap ? v->cap * 2 : 256;
    v->e = tt_xrealloc(v->e, v->cap * sizeof *v->e);
  }
  v->e[v->n++] = (tt_value_entry){.key = key, .value = value, .table = table, .column = column,
                                  .ord = ord};
  v->sorted = false;
}

void tt_values_add_copy(tt_values *v, const char *key, const char *value, const char *table,
                        const char *column, uint64_t ord) {
  tt_values_push(v, tt_arena_strdup(v->arena, key), tt_arena_strdup(v->arena, value),
                 tt_arena_strdup(v->arena, table), tt_arena_strdup(v->arena, column), ord);
}

const char *tt_values_intern(tt_values *v, const char *s) { return tt_arena_strdup(v->arena, s); }

void tt_values_truncate(tt_values *v, size_t n) {
  if (n < v->n) v->n = n;
}

const char *tt_values_key(const tt_values *v, size_t i) { return i < v->n ? v->e[i].key : NULL; }

size_t tt_values_count(const tt_values *v) { return v ? v->n : 0; }

/* Adds the value as tt_values_add does, its column at ord. */
static bool tt_values_add_at(tt_values *v, uint64_t ord, const char *table, const char *column,
                             const char *value, size_t len) {
  for (size_t i = 0; i < len; i++)
    if ((unsigned char)value[i] < 0x20) return false; /* hints print values as they are */
  tt_buf k = TT_BUF_INIT;
  tt_values_fold(value, len, &k);
  bool has_alpha = false;
  for (size_t i = 0; i < k.len; i++) has_alpha |= isalpha((unsigned char)k.data[i]) != 0;
  if (k.len < 2 || !has_alpha) { /* numbers and single letters link to nothing useful */
    tt_buf_free(&k);
    return false;
  }
  tt_values_push(v, tt_arena_memdup(v->arena, k.data, k.len), tt_arena_memdup(v->arena, value, len),
                 tt_arena_strdup(v->arena, table), tt_arena_strdup(v->arena, column), ord);
  tt_buf_free(&k);
  return true;
}

bool tt_values_add(tt_values *v, const char *table, const char *column, const char *value, size_t len) {
  /* columns in the order they come: each new run of one column a later ord */
  if (!v->block_table || strcmp(v->block_table, table) != 0 || strcmp(v->block_column, column) != 0) {
    v->block++;
    v->block_table = tt_arena_strdup(v->arena, table);
    v->block_column = tt_arena_strdup(v->arena, column);
  }
  return tt_values_add_at(v, v->block, table, column, value, len);
}

/* By folded key, then where the column stands (schema order), then value:
 * one order for the same entries however they were added, so that an
 * index read in parts equals one read at once. */
static int tt_entry_cmp(const void *a, const void *b) {
  const tt_value_entry *x = a, *y = b;
  int c = strcmp(x->key, y->key);
  if (!c && x->ord != y->ord) c = x->ord < y->ord ? -1 : 1;
  if (!c) c = strcmp(x->value, y->value);
  return c;
}

bool tt_values_finish_sorted(tt_values *v) {
  for (size_t i = 1; i < v->n; i++)
    if (tt_entry_cmp(&v->e[i - 1], &v->e[i]) > 0) return false;
  v->sorted = true;
  return true;
}

uint64_t tt_values_ord(const tt_values *v, size_t i) { return i < v->n ? v->e[i].ord : 0; }

void tt_values_finish(tt_values *v) {
  if (v->sorted) return;
  if (v->n) qsort(v->e, v->n, sizeof *v->e, tt_entry_cmp);
  v->sorted = true;
}

static bool tt_is_text_type(const char *type) {
  if (!type || !*type) return true; /* untyped columns often hold text */
  char low[64];
  size_t i = 0;
  for (; type[i] && i < sizeof low - 1; i++) low[i] = (char)tolower((unsigned char)type[i]);
  low[i] = '\0';
  return strstr(low, "char") || strstr(low, "text") || strstr(low, "clob") || strstr(low, "string");
}

/* Text columns of a table whose values the index keeps. */
static size_t tt_text_columns(const tt_table_info *t) {
  size_t n = 0;
  for (size_t c = 0; c < t->ncols; c++) n += tt_is_text_type(t->cols[c].type);
  return n;
}

bool tt_values_indexes(const tt_catalog *cat, size_t i) {
  const tt_table_info *t = &cat->tables[i];
  /* a view's values come from tables, and reading one can take as long as
   * its query does (the catalog bounds views for the same reason) */
  return !t->is_view && tt_text_columns(t) > 0;
}

/* Values each text column of t may give: max_total shared evenly among the
 * tables that have any (so each table's part depends on the schema only,
 * never on what other tables hold), then among t's text columns, at most
 * max_per_column. */
static long tt_values_per_column(const tt_catalog *cat, const tt_table_info *t,
                                 const tt_values_opts *o) {
  size_t tables = 0;
  for (size_t i = 0; i < cat->ntables; i++) tables += tt_values_indexes(cat, i);
  size_t share = o->max_total / (tables ? tables : 1), cols = tt_text_columns(t);
  long per = (long)(share / (cols ? cols : 1));
  if (per > o->max_per_column) per = o->max_per_column;
  return per > 0 ? per : 1;
}

bool tt_values_read_table(tt_db *db, const tt_catalog *cat, size_t i, const tt_values_opts *opts,
                          double deadline_ms, volatile sig_atomic_t *cancel, tt_values *v) {
  tt_values_opts d = opts ? *opts : tt_values_default_opts();
  if (!tt_values_indexes(cat, i)) return true;
  const tt_table_info *ti = &cat->tables[i];
  long per = tt_values_per_column(cat, ti, &d);
  size_t before = v->n;
  tt_db_opts saved = *tt_db_get_opts(db), o = saved;
  o.cancel = cancel;
  o.max_steps = 0; /* the first scan_rows rows bound the work */
  bool stopped = false;
  for (size_t c = 0; c < ti->ncols && !stopped; c++) {
    const tt_column_info *ci = &ti->cols[c];
    if (!tt_is_text_type(ci->type)) continue;
    bool deadline_first = false;
    o.timeout_s = saved.timeout_s > 0 ? saved.timeout_s : 5.0;
    if (deadline_ms > 0 && (deadline_ms - tt_now_ms()) / 1000.0 < o.timeout_s) {
      o.timeout_s = (deadline_ms - tt_now_ms()) / 1000.0;
      deadline_first = true;
    }
    if ((cancel && *cancel) || o.timeout_s < 0.001) {
      stopped = true;
      break;
    }
    tt_db_set_opts(db, &o);
    /* the first scan_rows rows only: a 5,000,000-row table stays fast */
    tt_buf sql = TT_BUF_INIT;
    tt_db_sql_column_values(db, ti, ci, d.scan_rows, d.max_len, &sql);
    tt_error err = {0};
    tt_cursor *cur = tt_db_cursor_open(db, sql.data, sql.len, per, 0, &err);
    tt_buf_free(&sql);
    const tt_value *row;
    int got = 0;
    while (cur && (got = tt_cursor_next(cur, &row, &err)) == 1)
      if (row[0].type == TT_VAL_TEXT)
        tt_values_add_at(v, tt_values_column_ord(i, c), ti->name, ci->name, row[0].u.s, row[0].len);
    if (cur) tt_cursor_close(cur);
    /* a column that cannot be read is left out; only a stop is tried again */
    if ((!cur || got < 0) && (err.kind == TT_ERR_CANCELLED ||
                              (err.kind == TT_ERR_TIMEOUT && deadline_first)))
      stopped = true;
  }
  tt_db_set_opts(db, &saved);
  if (stopped) tt_values_truncate(v, before);
  return !stopped;
}

tt_values *tt_values_build(tt_db *db, const tt_catalog *cat, const tt_values_opts *o) {
  tt_values *v = tt_values_new();
  for (size_t t = 0; t < cat->ntables; t++) tt_values_read_table(db, cat, t, o, 0, NULL, v);
  tt_values_finish(v);
  return v;
}

static const char *const tt_stop[] = {
    "a", "an", "the", "of", "in", "on", "at", "to", "for", "by", "with", "from", "and", "or", "is",
    "are", "was", "were", "be", "how", "many", "much", "what", "which", "who", "whom", "when",
    "where", "why", "list", "show", "give", "me", "all", "each", "every", "per", "top", "most",
    "least", "number", "count", "total", "average", "sum", "do", "does", "did", "has", "have",
    "that", "this", "these", "those", "there", "their", "its", "it", "as", "than", "more", "less",
    "name", "names", "yes", "no", "not", "none", "null", "other", "unknown", "first", "last"};

static bool tt_is_stop(const char *w, size_t n) {
  for (size_t i = 0; i < sizeof tt_stop / sizeof *tt_stop; i++)
    if (strlen(tt_stop[i]) == n && memcmp(tt_stop[i], w, n) == 0) return true;
  return false;
}

/* Everyday words that are cell values somewhere ('Open', 'Left', 'Home',
 * 'Bring' the carrier) and never link a table on their own. */
static const char *const tt_common_word[] = {
    "open", "closed", "close", "left", "right", "out", "in", "off", "up", "down", "home", "office",
    "card", "rent", "hold", "posted", "post", "member", "members", "currently", "current", "new",
    "old", "active", "inactive", "pending", "done", "complete", "completed", "yes", "no", "true",
    "false", "high", "low", "medium", "normal", "other", "none", "bring", "brought", "take", "make",
    "use", "used", "work", "works", "head", "main", "general", "standard", "default", "basic",
    "free", "paid", "good", "bad", "best", "next", "previous", "each", "every", "year", "month",
    "week", "day", "today", "time", "date", "name", "type", "status", "level", "group", "total",
    "amount", "price", "cost", "value", "number", "count", "order", "orders", "line", "lines",
    "item", "items", "change", "changed", "address", "revenue", "sales", "late", "early", "still",
    "ever", "never", "often", "per", "via", "street", "city", "room", "state", "first", "last",
};

bool tt_values_common_word(const char *w) {
  for (size_t i = 0; i < sizeof tt_common_word / sizeof *tt_common_word; i++)
    if (strcmp(tt_common_word[i], w) == 0) return true;
  return false;
}

/* A value found in more tables than this is too common to say anything
 * ("open" is a status in half the tables of a large schema). */
#define TT_COMMON_TABLES 2

/* Distinct tables among entries [i, j). */
static size_t tt_tables_in(const tt_values *v, size_t i, size_t j) {
  size_t n = 0;
  for (size_t k = i; k < j; k++) {
    bool seen = false;
    for (size_t l = i; l < k && !seen; l++) seen = strcmp(v->e[l].table, v->e[k].table) == 0;
    n += !seen;
  }
  return n;
}

static size_t tt_lower_bound(const tt_values *v, const char *key) {
  size_t lo = 0, hi = v->n;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (strcmp(v->e[mid].key, key) < 0) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

static void tt_add_match(tt_value_matches *m, const tt_value_entry *e, const char *phrase, bool exact) {
  for (size_t i = 0; i < m->n; i++)
    if (strcmp(m->m[i].table, e->table) == 0 && strcmp(m->m[i].column, e->column) == 0 &&
        strcmp(m->m[i].value, e->value) == 0)
      return;
  if (m->n == TT_VALUE_MATCHES_MAX) return;
  m->m[m->n++] = (tt_value_match){.value = e->value, .table = e->table, .column = e->column,
                                  .phrase = tt_xstrdup(phrase), .exact = exact};
}

/* Entries whose key equals phrase; false when none or too common. */
static bool tt_match_exact(const tt_values *v, const char *phrase, tt_value_matches *m) {
  size_t i = tt_lower_bound(v, phrase), j = i;
  while (j < v->n && strcmp(v->e[j].key, phrase) == 0) j++;
  if (j == i || j - i > 8 || tt_tables_in(v, i, j) > TT_COMMON_TABLES) return false;
  for (size_t k = i; k < j; k++) tt_add_match(m, &v->e[k], phrase, true);
  return true;
}

/* One typo in a word of 5+ letters, two in 9+: the nearest values. The
 * first letter must match, so only the keys starting with it (a range of
 * the sorted index) are measured. */
static bool tt_match_near(const tt_values *v, const char *phrase, tt_value_matches *m) {
  size_t len = strlen(phrase);
  if (len < 5) return false;
  char first[2] = {phrase[0], 0}, after[2] = {(char)(phrase[0] + 1), 0};
  size_t lo = tt_lower_bound(v, first), hi = (unsigned char)phrase[0] == 0xff ? v->n : tt_lower_bound(v, after);
  size_t max = len >= 9 ? 2 : 1, best = max + 1, nbest = 0;
  for (size_t i = lo; i < hi; i++) {
    size_t kl = strlen(v->e[i].key);
    if (kl + max < len || kl > len + max) continue;
    size_t d = tt_edit_distance(v->e[i].key, phrase, max);
    if (d < best) best = d, nbest = 0;
    if (d == best && d <= max) nbest++;
  }
  if (best > max || nbest == 0 || nbest > TT_COMMON_TABLES) return false;
  for (size_t i = lo; i < hi; i++) {
    size_t kl = strlen(v->e[i].key);
    if (kl + max < len || kl > len + max) continue;
    if (tt_edit_distance(v->e[i].key, phrase, max) == best) tt_add_match(m, &v->e[i], phrase, false);
  }
  return true;
}

void tt_values_match(const tt_values *cv, const char *question, tt_value_matches *m) {
  memset(m, 0, sizeof *m);
  if (!cv || !question || cv->n == 0) return;
  if (!cv->sorted) return; /* tt_values_finish was not called */
  tt_buf f = TT_BUF_INIT;
  tt_values_fold(question, strlen(question), &f);
  /* word boundaries of the folded question */
  enum { TT_WORDS_MAX = 128 };
  size_t ws[TT_WORDS_MAX], we[TT_WORDS_MAX], nw = 0;
  for (size_t i = 0; i < f.len && nw < TT_WORDS_MAX;) {
    size_t j = i;
    while (j < f.len && f.data[j] != ' ') j++;
    ws[nw] = i, we[nw++] = j;
    i = j + 1;
  }
  bool used[TT_WORDS_MAX] = {0};
  /* longest phrases first, so "parental leave" wins over "leave" */
  for (size_t len = 4; len >= 1; len--) {
    for (size_t a = 0; a + len <= nw; a++) {
      bool free_span = true, all_stop = true;
      for (size_t k = a; k < a + len; k++) {
        free_span &= !used[k];
        all_stop &= tt_is_stop(f.data + ws[k], we[k] - ws[k]);
      }
      if (!free_span || all_stop) continue;
      if (len == 1) { /* an everyday word never links alone */
        char w[32];
        size_t wl = we[a] - ws[a] < sizeof w - 1 ? we[a] - ws[a] : sizeof w - 1;
        memcpy(w, f.data + ws[a], wl);
        w[wl] = '\0';
        if (tt_values_common_word(w)) continue;
      }
      if (tt_is_stop(f.data + ws[a], we[a] - ws[a]) ||
          tt_is_stop(f.data + ws[a + len - 1], we[a + len - 1] - ws[a + len - 1]))
        continue; /* "the rotterdam" is found as "rotterdam" */
      char *phrase = tt_xstrndup(f.data + ws[a], we[a + len - 1] - ws[a]);
      bool hit = strlen(phrase) >= 2 &&
                 (tt_match_exact(cv, phrase, m) || tt_match_near(cv, phrase, m));
      free(phrase);
      if (hit)
        for (size_t k = a; k < a + len; k++) used[k] = true;
    }
  }
  tt_buf_free(&f);
}

void tt_value_matches_free(tt_value_matches *m) {
  for (size_t i = 0; i < m->n; i++) free(m->m[i].phrase);
  m->n = 0;
}

void tt_values_hints(const tt_value_matches *m, tt_buf *out) {
  for (size_t i = 0; i < m->n; i++)
    tt_buf_printf(out, "'%s' is a value of %s.%s\n", m->m[i].value, m->m[i].table, m->m[i].column);
}

size_t tt_values_entry(const tt_values *v, size_t i, const char **table, const char **column,
                       const char **value) {
  if (!v || i >= v->n) return 0;
  *table = v->e[i].table;
  *column = v->e[i].column;
  *value = v->e[i].value;
  return 1;
}
