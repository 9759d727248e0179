/* knowledge_steer.c — the knowledge file steering selection, not only
 * the prompt. A definition ("staff members = the Employee table",
 * "contractors: employee.EmpType = 'CTR'") is read as the tables and
 * columns it names, the values it quotes, and its other words (the
 * trigger); a question that says at least half of the trigger's words (one
 * of them not an everyday word) gets those tables first and those values
 * linked. A column's description is read clause by clause the same way
 * ("'CTR' = contractor; 'FTE' = full time"), the column's table named by
 * it. An example whose question shares at least half of the words of the
 * two questions together puts the tables its SQL reads first. What `learn`
 * records is such an example. Only words of three letters or more count
 * (knowledge.c's stems). */
#include "schema/steer.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* Words that say how, not what: never a trigger. */
static const char *const tt_ks_noise[] = {
    "the", "table", "tables", "column", "columns", "means", "mean", "meaning", "value", "values",
    "code", "codes", "row", "rows", "record", "records", "field", "fields", "sum", "count", "avg",
    "min", "max", "select", "from", "where", "join", "and", "not", "null", "case", "when", "then",
    "else", "end", "distinct", "group", "order", "having", "with", "for", "are", "is", "all", "any",
    "each", "per", "one", "that", "this", "which", "who", "what", "how", "many", "much", "our",
    "its", "their", "there", "was", "were", "did", "does", "have", "has", "list", "show", "give",
    "find", "tell", "total", "number", "stands", "stand", "refers", "refer", "called", "also",
    "known", "use", "used", "only", "they", "them", "you", "your", "but", "than", "into", "onto",
};

static bool tt_ks_is_noise(const char *w, size_t n) {
  for (size_t i = 0; i < sizeof tt_ks_noise / sizeof *tt_ks_noise; i++)
    if (strlen(tt_ks_noise[i]) == n && strncasecmp(tt_ks_noise[i], w, n) == 0) return true;
  return false;
}

/* What one text of the knowledge file names. */
typedef struct tt_ks_item {
  size_t tables[8], ntables;
  char *values[8];
  size_t nvalues;
  tt_buf trigger; /* the other words, space-separated, as written */
} tt_ks_item;

static void tt_ks_add_table(tt_ks_item *it, size_t t) {
  for (size_t i = 0; i < it->ntables; i++)
    if (it->tables[i] == t) return;
  if (it->ntables < 8) it->tables[it->ntables++] = t;
}

static size_t tt_ks_table(const tt_schema *s, const char *name, size_t n) {
  char buf[256];
  if (n == 0 || n >= sizeof buf) return SIZE_MAX;
  memcpy(buf, name, n);
  buf[n] = '\0';
  const tt_card *c = tt_schema_find(s, buf);
  return c ? (size_t)(c - tt_schema_card(s, 0)) : SIZE_MAX;
}

/* The table of a column named alone: the owner's, else the only table
 * with such a column (a name many tables share names none). */
static size_t tt_ks_column_table(const tt_schema *s, size_t owner, const char *name, size_t n) {
  size_t found = SIZE_MAX, count = tt_schema_count(s);
  for (size_t i = 0; i < count; i++) {
    const tt_table_info *t = tt_schema_card(s, i)->table;
    for (size_t c = 0; c < t->ncols; c++) {
      if (strlen(t->cols[c].name) != n || strncasecmp(t->cols[c].name, name, n) != 0) continue;
      if (i == owner) return i;
      if (found != SIZE_MAX && found != i) found = SIZE_MAX - 1;
      else if (found == SIZE_MAX) found = i;
    }
  }
  return owner != SIZE_MAX || found == SIZE_MAX - 1 ? SIZE_MAX : found;
}

/* Reads text[0, n): identifiers naming tables (Table, Table.Column) or
 * columns, quoted values, and the remaining words into the trigger. */
static void tt_ks_read(const tt_schema *s, size_t owner, const char *text, size_t n, tt_ks_item *it) {
  *it = (tt_ks_item){.trigger = TT_BUF_INIT};
  if (owner != SIZE_MAX) tt_ks_add_table(it, owner);
  size_t i = 0;
  while (i < n) {
    char ch = text[i];
    if (ch == '\'' || ch == '"') {
      size_t end = i + 1;
      while (end < n && text[end] != ch) end++;
      if (end < n && end > i + 1 && end - i - 1 < 64 && it->nvalues < 8)
        it->values[it->nvalues++] = tt_xasprintf("%.*s", (int)(end - i - 1), text + i + 1);
      i = end + 1;
      continue;
    }
    if (!isalnum((unsigned char)ch) && ch != '_') {
      i++;
      continue;
    }
    size_t start = i;
    while (i < n && (isalnum((unsigned char)text[i]) || text[i] == '_' || text[i] == '.')) i++;
    size_t len = i - start;
    while (len && text[start + len - 1] == '.') len--; /* a full stop */
    const char *dot = memchr(text + start, '.', len);
    size_t t = dot ? tt_ks_table(s, text + start, (size_t)(dot - (text + start)))
                   : tt_ks_table(s, text + start, len);
    if (t == SIZE_MAX && !dot) t = tt_ks_column_table(s, owner, text + start, len);
    if (t != SIZE_MAX) {
      tt_ks_add_table(it, t);
    } else if (!dot && !tt_ks_is_noise(text + start, len)) {
      tt_buf_append(&it->trigger, text + start, len);
      tt_buf_putc(&it->trigger, ' ');
    }
  }
}

static void tt_ks_item_free(tt_ks_item *it) {
  for (size_t i = 0; i < it->nvalues; i++) free(it->values[i]);
  tt_buf_free(&it->trigger);
}

/* Whether the question (its knowledge words qw) says enough of the
 * trigger: half its words, one of them not an everyday word. */
static bool tt_ks_triggered(const char *qw, const tt_ks_item *it) {
  char *tw = tt_knowledge_words(it->trigger.data ? it->trigger.data : "");
  size_t words = 0, said = 0, distinctive = 0;
  for (char *p = tw + 1; *p;) {
    char *end = strchr(p, ' ');
    size_t len = (size_t)(end - p);
    char probe[80];
    if (len + 3 <= sizeof probe) {
      snprintf(probe, sizeof probe, " %.*s ", (int)len, p);
      *p = '\0';
      bool seen = strstr(tw, probe) != NULL; /* counted once */
      *p = probe[1];
      if (!seen) {
        words++;
        if (strstr(qw, probe)) {
          said++;
          char w[80];
          snprintf(w, sizeof w, "%.*s", (int)len, p);
          distinctive += !tt_values_common_word(w);
        }
      }
    }
    p = end + 1;
  }
  free(tw);
  return words > 0 && said * 2 >= words && distinctive > 0;
}

static void tt_ks_apply(const tt_ks_item *it, const char *what, tt_steer *st) {
  char *why = tt_xasprintf("knowledge: %.80s", what);
  for (size_t i = 0; i < it->ntables; i++) tt_steer_add_seed(st, it->tables[i], why);
  for (size_t i = 0; i < it->nvalues; i++) tt_steer_add_value(st, it->values[i], true, why);
  free(why);
}

/* One text: the whole, or clause by clause (split at ';' and ',') when it
 * quotes values, so that each value has its own words. */
static void tt_ks_text(const tt_schema *s, size_t owner, const char *text, const char *qw, bool split,
                       tt_steer *st) {
  size_t n = strlen(text);
  bool quotes = strchr(text, '\'') || strchr(text, '"');
  size_t start = 0;
  while (start < n) {
    size_t end = start;
    if (split && quotes)
      while (end < n && text[end] != ';' && text[end] != ',') end++;
    else
      end = n;
    tt_ks_item it;
    tt_ks_read(s, owner, text + start, end - start, &it);
    /* a description without quoted values is indexed with the schema's words (rank.c) */
    if ((!split || it.nvalues > 0) && it.ntables + it.nvalues > 0 && tt_ks_triggered(qw, &it))
      tt_ks_apply(&it, text, st);
    tt_ks_item_free(&it);
    start = end + 1;
  }
}

/* The distinct knowledge words of text that are not noise, counted. */
static size_t tt_ks_count_words(const char *words) {
  size_t n = 0;
  for (const char *p = words + 1; *p;) {
    const char *end = strchr(p, ' ');
    n += !tt_ks_is_noise(p, (size_t)(end - p));
    p = end + 1;
  }
  return n;
}

/* Shared distinct words of two knowledge-word lists (noise aside). */
static size_t tt_ks_shared(const char *a, const char *b) {
  size_t n = 0;
  for (const char *p = a + 1; *p;) {
    const char *end = strchr(p, ' ');
    size_t len = (size_t)(end - p);
    char probe[80];
    if (len + 3 <= sizeof probe && !tt_ks_is_noise(p, len)) {
      snprintf(probe, sizeof probe, " %.*s ", (int)len, p);
      n += strstr(b, probe) != NULL;
    }
    p = end + 1;
  }
  return n;
}

/* Distinct words (knowledge.c's lists may repeat one). */
static char *tt_ks_distinct(const char *text) {
  char *w = tt_knowledge_words(text);
  tt_buf b = TT_BUF_INIT;
  tt_buf_putc(&b, ' ');
  for (const char *p = w + 1; *p;) {
    const char *end = strchr(p, ' ');
    char probe[80];
    size_t len = (size_t)(end - p);
    if (len + 3 <= sizeof probe) {
      snprintf(probe, sizeof probe, " %.*s ", (int)len, p);
      if (!strstr(tt_buf_cstr(&b), probe)) tt_buf_puts(&b, probe + 1);
    }
    p = end + 1;
  }
  free(w);
  return tt_buf_detach(&b);
}

static void tt_ks_example(const tt_schema *s, const json_t *e, const char *qd, tt_steer *st) {
  const char *eq = json_string_value(json_object_get(e, "question"));
  const char *sql = json_string_value(json_object_get(e, "sql"));
  if (!eq || !sql) return;
  char *ed = tt_ks_distinct(eq);
  size_t shared = tt_ks_shared(ed, qd), total = tt_ks_count_words(ed) + tt_ks_count_words(qd);
  free(ed);
  /* half the words of the two together: shared * 2 >= total - shared */
  if (shared < 2 || shared * 3 < total) return;
  tt_ks_item it;
  tt_ks_read(s, SIZE_MAX, sql, strlen(sql), &it);
  char *why = tt_xasprintf("knowledge: example '%.60s'", eq);
  for (size_t i = 0; i < it.ntables; i++) tt_steer_add_seed(st, it.tables[i], why);
  free(why);
  tt_ks_item_free(&it);
}

void tt_knowledge_steer(const tt_knowledge *k, const tt_schema *s, const char *question, tt_steer *st) {
  const json_t *root = tt_knowledge_json(k);
  char *qw = tt_knowledge_words(question);
  size_t i;
  const json_t *v;
  json_array_foreach(json_object_get(root, "definitions"), i, v) {
    if (json_string_value(v)) tt_ks_text(s, SIZE_MAX, json_string_value(v), qw, false, st);
  }
  const char *key;
  json_t *d;
  json_object_foreach(json_object_get(root, "columns"), key, d) {
    const char *dot = strrchr(key, '.');
    size_t t = dot ? tt_ks_table(s, key, (size_t)(dot - key)) : SIZE_MAX;
    if (t != SIZE_MAX && json_string_value(d)) tt_ks_text(s, t, json_string_value(d), qw, true, st);
  }
  json_object_foreach(json_object_get(root, "tables"), key, d) {
    size_t t = tt_ks_table(s, key, strlen(key));
    if (t != SIZE_MAX && json_string_value(d)) tt_ks_text(s, t, json_string_value(d), qw, true, st);
  }
  char *qd = tt_ks_distinct(question);
  json_array_foreach(json_object_get(root, "examples"), i, v) tt_ks_example(s, v, qd, st);
  free(qd);
  free(qw);
}
