/* knowledge.c — the user's knowledge file (DB.knowledge.json beside the
 * database, or --knowledge FILE): descriptions of tables and columns that
 * go into the cards, business definitions, and example question -> SQL
 * pairs. Parsed with jansson (line numbers come from its errors, or for a
 * wrong shape from finding the key or list element in the text); the
 * definitions that share words with the question and the three examples nearest the question by overlap of
 * word stems are rendered for the question's message, within a token cap
 * (they count in the schema budget). Knows nothing about models. */
#include "schema/schema.h"
#include "schema/steer.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define TT_KNOWLEDGE_MAX_BYTES (8u << 20) /* a bigger file is refused */
#define TT_EXAMPLES_SHOWN 3

struct tt_knowledge {
  json_t *root; /* the validated document */
};

static void tt_kerr(tt_error *err, int line, const char *fmt, ...) TT_PRINTF(3, 4);
static void tt_kerr(tt_error *err, int line, const char *fmt, ...) {
  if (!err) return;
  va_list ap;
  va_start(ap, fmt);
  tt_error_vset(err, TT_ERR_CONFIG, fmt, ap);
  va_end(ap);
  err->line = line;
}

/* Where a problem is in the text, since jansson keeps no positions for
 * values: the line of the first "key" (a top-level or nested key name),
 * or with index >= 0, the line where that element of the list after the
 * key begins. 0 when it cannot be found. */
static int tt_line_of(const char *text, size_t n, const char *key, long index) {
  char quoted[256];
  snprintf(quoted, sizeof quoted, "\"%s\"", key);
  size_t ql = strlen(quoted), at = 0;
  while (at + ql <= n && memcmp(text + at, quoted, ql) != 0) at++;
  if (at + ql > n) return 0;
  size_t pos = at;
  if (index >= 0) {
    pos = at + ql;
    while (pos < n && text[pos] != '[') pos++;
    int depth = 0;
    long element = -1;
    bool in_string = false, want = true;
    for (pos++, depth = 1; pos < n && depth > 0; pos++) {
      char c = text[pos];
      if (in_string) {
        if (c == '\\') pos++;
        else if (c == '"') in_string = false;
        continue;
      }
      if (depth == 1 && want && !strchr(" \t\r\n,]", c)) {
        if (++element == index) break;
        want = false;
      }
      if (c == '"') in_string = true;
      else if (c == '[' || c == '{') depth++;
      else if (c == ']' || c == '}') depth--;
      else if (c == ',' && depth == 1) want = true;
    }
    if (pos >= n || depth == 0) return 0;
  }
  int line = 1;
  for (size_t i = 0; i < pos; i++) line += text[i] == '\n';
  return line;
}

/* Checks the shape; on a problem fills err, with the line it is on when
 * that can be found in text (0: none). */
static bool tt_knowledge_check(json_t *root, const char *text, size_t n, tt_error *err) {
  static const char *const known[] = {"tables", "columns", "definitions", "examples"};
  if (!json_is_object(root)) {
    tt_kerr(err, 1, "%s", "the file must be one JSON object: {\"tables\": {...}, \"columns\": {...}, "
                          "\"definitions\": [...], \"examples\": [...]}");
    return false;
  }
  const char *key;
  json_t *v;
  json_object_foreach(root, key, v) {
    bool ok = false;
    for (size_t i = 0; i < sizeof known / sizeof *known; i++) ok |= strcmp(key, known[i]) == 0;
    if (!ok) {
      tt_kerr(err, tt_line_of(text, n, key, -1), "unknown key \"%.200s\": the keys are tables, columns, definitions, examples", key);
      return false;
    }
  }
  const char *objs[] = {"tables", "columns"};
  for (size_t i = 0; i < 2; i++) {
    json_t *o = json_object_get(root, objs[i]);
    if (!o) continue;
    if (!json_is_object(o)) {
      tt_kerr(err, tt_line_of(text, n, objs[i], -1), "\"%s\" must be an object of name: \"description\"", objs[i]);
      return false;
    }
    json_object_foreach(o, key, v) {
      if (!json_is_string(v)) {
        tt_kerr(err, tt_line_of(text, n, key, -1), "the description of \"%.200s\" must be text in quotes", key);
        return false;
      }
      if (i == 1 && !strchr(key, '.')) {
        tt_kerr(err, tt_line_of(text, n, key, -1), "column \"%.200s\" must be written Table.Column", key);
        return false;
      }
    }
  }
  json_t *defs = json_object_get(root, "definitions");
  if (defs) {
    size_t i;
    if (!json_is_array(defs)) {
      tt_kerr(err, tt_line_of(text, n, "definitions", -1), "%s", "\"definitions\" must be a list of texts: [\"revenue = ...\", ...]");
      return false;
    }
    json_array_foreach(defs, i, v) if (!json_is_string(v)) {
      tt_kerr(err, tt_line_of(text, n, "definitions", (long)i), "definition %zu must be text in quotes",
              i + 1);
      return false;
    }
  }
  json_t *ex = json_object_get(root, "examples");
  if (ex) {
    size_t i;
    if (!json_is_array(ex)) {
      tt_kerr(err, tt_line_of(text, n, "examples", -1), "%s", "\"examples\" must be a list of {\"question\": ..., \"sql\": ...}");
      return false;
    }
    json_array_foreach(ex, i, v) {
      if (!json_is_object(v) || !json_is_string(json_object_get(v, "question")) ||
          !json_is_string(json_object_get(v, "sql"))) {
        tt_kerr(err, tt_line_of(text, n, "examples", (long)i),
                "example %zu must be {\"question\": \"...\", \"sql\": \"...\"}", i + 1);
        return false;
      }
    }
  }
  return true;
}

tt_knowledge *tt_knowledge_parse(const char *text, size_t n, tt_error *err) {
  tt_error_clear(err);
  if (n > TT_KNOWLEDGE_MAX_BYTES) {
    tt_kerr(err, 0, "%s", "the file is over 8 MB; keep descriptions, definitions and examples short");
    return NULL;
  }
  json_error_t je;
  json_t *root = json_loadb(text, n, JSON_REJECT_DUPLICATES, &je);
  if (!root) {
    tt_kerr(err, je.line > 0 ? je.line : 1, "%.200s (fix the JSON there)", je.text);
    return NULL;
  }
  if (!tt_knowledge_check(root, text, n, err)) {
    json_decref(root);
    return NULL;
  }
  tt_knowledge *k = tt_xcalloc(1, sizeof *k);
  k->root = root;
  return k;
}

tt_knowledge *tt_knowledge_load(const char *path, tt_error *err) {
  tt_error_clear(err);
  FILE *f = fopen(path, "rb");
  if (!f) {
    tt_kerr(err, 0, "%s", "cannot open it");
    return NULL;
  }
  tt_buf b = TT_BUF_INIT;
  char chunk[65536];
  size_t got;
  while ((got = fread(chunk, 1, sizeof chunk, f)) > 0) {
    tt_buf_append(&b, chunk, got);
    if (b.len > TT_KNOWLEDGE_MAX_BYTES) break;
  }
  fclose(f);
  tt_knowledge *k = tt_knowledge_parse(b.data ? b.data : "", b.len, err);
  tt_buf_free(&b);
  return k;
}

char *tt_knowledge_path_for(const char *db_path) {
  const char *slash = strrchr(db_path, '/');
  const char *dot = strrchr(db_path, '.');
  size_t stem = dot && (!slash || dot > slash + 1) ? (size_t)(dot - db_path) : strlen(db_path);
  tt_buf b = TT_BUF_INIT;
  tt_buf_append(&b, db_path, stem);
  tt_buf_puts(&b, ".knowledge.json");
  return tt_buf_detach(&b);
}

tt_knowledge *tt_knowledge_new_empty(void) {
  tt_knowledge *k = tt_xcalloc(1, sizeof *k);
  k->root = json_object();
  return k;
}

void tt_knowledge_free(tt_knowledge *k) {
  if (!k) return;
  json_decref(k->root);
  free(k);
}

const json_t *tt_knowledge_json(const tt_knowledge *k) { return k->root; }

void tt_knowledge_add_example(tt_knowledge *k, const char *question, const char *sql) {
  json_t *ex = json_object_get(k->root, "examples");
  if (!ex) {
    ex = json_array();
    json_object_set_new(k->root, "examples", ex);
  }
  json_array_append_new(ex, json_pack("{s:s,s:s}", "question", question, "sql", sql));
}

char *tt_knowledge_dump(const tt_knowledge *k) {
  char *s = json_dumps(k->root, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
  size_t n = strlen(s);
  char *out = tt_xcalloc(n + 2, 1);
  memcpy(out, s, n);
  out[n] = '\n';
  free(s);
  return out;
}

void tt_knowledge_apply(const tt_knowledge *k, tt_catalog *cat) {
  json_t *tables = json_object_get(k->root, "tables");
  json_t *cols = json_object_get(k->root, "columns");
  const char *key;
  json_t *v;
  for (size_t i = 0; i < cat->ntables; i++) {
    tt_table_info *t = &cat->tables[i];
    json_object_foreach(tables, key, v) if (strcasecmp(key, t->name) == 0)
      t->description = tt_arena_strdup(cat->arena, json_string_value(v));
    json_object_foreach(cols, key, v) {
      const char *dot = strrchr(key, '.');
      size_t tn = (size_t)(dot - key);
      if (strlen(t->name) != tn || strncasecmp(key, t->name, tn) != 0) continue;
      for (size_t c = 0; c < t->ncols; c++)
        if (strcasecmp(dot + 1, t->cols[c].name) == 0)
          t->cols[c].description = tt_arena_strdup(cat->arena, json_string_value(v));
    }
  }
}

/* The stem of a word, by stripping one common English ending so that
 * "customers", "customer's" and "customer" meet ("orders"/"ordered"/
 * "ordering" -> "order"). Deliberately crude: it only has to make the same
 * stem for a question's word and a definition's. Returns the new length. */
static size_t tt_stem(const char *w, size_t n) {
  static const char *const ends[] = {"ings", "ing", "ies", "ed", "es", "s"};
  for (size_t i = 0; i < sizeof ends / sizeof *ends; i++) {
    size_t e = strlen(ends[i]);
    if (n < e + 3 || memcmp(w + n - e, ends[i], e) != 0) continue;
    if (strcmp(ends[i], "s") == 0 && w[n - 2] == 's') return n; /* "class" */
    if (strcmp(ends[i], "es") == 0 && !strchr("sxz", w[n - 3]) && w[n - 3] != 'h') return n - 1;
    return n - e;
  }
  return n;
}

/* Stems of words of at least three letters or digits, lower-cased,
 * space-separated with a space on each side, so " word " finds a whole
 * word. */
char *tt_knowledge_words(const char *s) {
  tt_buf b = TT_BUF_INIT;
  tt_buf_putc(&b, ' ');
  const unsigned char *p = (const unsigned char *)s;
  char w[64];
  while (*p) {
    if (!isalnum(*p)) {
      p++;
      continue;
    }
    size_t n = 0;
    while (isalnum(*p)) {
      if (n < sizeof w) w[n] = (char)tolower(*p);
      n++, p++;
    }
    if (n < 3 || n > sizeof w) continue;
    tt_buf_append(&b, w, tt_stem(w, n));
    tt_buf_putc(&b, ' ');
  }
  return tt_buf_detach(&b);
}

/* Words every question has: they make no text near a question. */
static bool tt_overlap_noise(const char *w, size_t n) {
  static const char *const noise[] = {"which", "what", "who", "how", "many", "much", "the", "are",
                                      "was", "were", "did", "does", "for", "and", "with", "per",
                                      "each", "all", "list", "show", "give", "find", "have", "has",
                                      "their", "there", "this", "that", "from", "total", "number"};
  for (size_t i = 0; i < sizeof noise / sizeof *noise; i++)
    if (strlen(noise[i]) == n && memcmp(noise[i], w, n) == 0) return true;
  return false;
}

/* How many distinct words of text (not noise) are in the question's words. */
static size_t tt_overlap(const char *qwords, const char *text) {
  char *tw = tt_knowledge_words(text);
  size_t n = 0;
  char *p = tw + 1;
  while (*p) {
    char *end = strchr(p, ' ');
    size_t len = (size_t)(end - p);
    char probe[80];
    if (len + 2 < sizeof probe) {
      probe[0] = ' ';
      memcpy(probe + 1, p, len);
      probe[len + 1] = ' ';
      probe[len + 2] = 0;
      /* count each word once: skip it when it appeared earlier in tw */
      *p = 0;
      bool seen = strstr(tw, probe) != NULL;
      *p = probe[1];
      if (!seen && !tt_overlap_noise(probe + 1, len) && strstr(qwords, probe)) n++;
    }
    p = end + 1;
  }
  free(tw);
  return n;
}

typedef struct tt_scored {
  size_t i, score;
} tt_scored;

static int tt_by_score(const void *a, const void *b) {
  const tt_scored *x = a, *y = b;
  if (x->score != y->score) return x->score < y->score ? 1 : -1;
  return x->i < y->i ? -1 : x->i > y->i;
}

/* Appends text to out when it fits in what is left of the token cap. */
static bool tt_put_within(tt_buf *out, const char *text, size_t *left) {
  size_t t = tt_tokens_estimate(text, strlen(text));
  if (t > *left) return false;
  *left -= t;
  tt_buf_puts(out, text);
  return true;
}

size_t tt_knowledge_render_for(const tt_knowledge *k, const char *question, size_t max_tokens,
                               tt_buf *out) {
  size_t skipped = 0;
  char *qw = tt_knowledge_words(question ? question : "");
  tt_buf item = TT_BUF_INIT;
  json_t *ex = json_object_get(k->root, "examples");
  size_t ne = json_array_size(ex);
  /* definitions may take half the room when there are examples to show */
  size_t left = ne ? max_tokens / 2 : max_tokens;
  json_t *defs = json_object_get(k->root, "definitions");
  size_t nd = json_array_size(defs);
  /* the definitions that share words with the question, the ones sharing
   * most first (a question they say nothing about keeps its room for
   * cards, so that adding one moves no other question's tables) */
  tt_scored *s = tt_xcalloc(nd ? nd : 1, sizeof *s);
  size_t ns = 0;
  for (size_t i = 0; i < nd; i++) {
    size_t score = tt_overlap(qw, json_string_value(json_array_get(defs, i)));
    if (score > 0) s[ns++] = (tt_scored){i, score};
  }
  qsort(s, ns, sizeof *s, tt_by_score);
  const char *head = "Definitions the user gave (follow them):\n";
  bool any = false;
  for (size_t j = 0; j < ns; j++) {
    tt_buf_reset(&item);
    if (!any) tt_buf_puts(&item, head);
    tt_buf_printf(&item, "- %s\n", json_string_value(json_array_get(defs, s[j].i)));
    if (tt_put_within(out, tt_buf_cstr(&item), &left)) any = true;
    else skipped++;
  }
  free(s);
  left += ne ? max_tokens - max_tokens / 2 : 0;
  s = tt_xcalloc(ne ? ne : 1, sizeof *s);
  for (size_t i = 0; i < ne; i++) {
    s[i].i = i;
    s[i].score = tt_overlap(qw, json_string_value(json_object_get(json_array_get(ex, i), "question")));
  }
  if (ne) qsort(s, ne, sizeof *s, tt_by_score);
  any = false;
  for (size_t j = 0; j < ne && j < TT_EXAMPLES_SHOWN && s[j].score > 0; j++) {
    json_t *e = json_array_get(ex, s[j].i);
    tt_buf_reset(&item);
    if (!any) tt_buf_puts(&item, "Questions like mine answered before:\n");
    tt_buf_printf(&item, "Q: %s\nSQL: %s\n", json_string_value(json_object_get(e, "question")),
                  json_string_value(json_object_get(e, "sql")));
    if (tt_put_within(out, tt_buf_cstr(&item), &left)) any = true;
    else skipped++;
  }
  free(s);
  tt_buf_free(&item);
  free(qw);
  return skipped;
}
