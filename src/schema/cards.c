/* cards.c — schema cards: the compact, M-Schema-like text a model reads to
 * learn a table (one block per table: columns with type, key marks, the
 * description the schema's SQL comments give, and the most frequent values
 * of text columns; numbers get none, dates one for their format), and the
 * same facts as JSON for scripts and MCP. Columns that recur in most
 * tables of a large schema (audit stamps, ETL ids) are folded into one
 * "also:" line per card. */
#define _GNU_SOURCE /* strcasestr */
#include "schema/cache_file.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define TT_EXAMPLE_CHARS 32 /* longer text examples are cut */
#define TT_TEXT_EXAMPLES 3
#define TT_NUMBER_EXAMPLES 2
#define TT_JSON_CELL_BYTES 800 /* sample cells in JSON: about 200 characters */

/* A column name is boilerplate when it is in at least this share (percent)
 * of the tables of a schema of at least TT_BOILERPLATE_TABLES tables. */
#define TT_BOILERPLATE_SHARE 50
#define TT_BOILERPLATE_TABLES 10

struct tt_schema {
  tt_catalog *cat;
  size_t ncards;
  tt_card *cards;
  size_t total_tokens;
  tt_values *values; /* NULL until set */
  tt_knowledge *knowledge; /* owned, or NULL */
  char *warning;           /* what loading left out, or NULL */
  tt_schema_state state;   /* how it was read (tt_schema_load) */
  /* tt_schema_set_cache_key: where later cache entries go, and whose they are */
  char *cache_dir, *cache_identity, *cache_src_path;
  tt_cache_source cache_src;
};

void tt_schema_set_cache_key(tt_schema *s, const char *cache_dir, const char *identity,
                             const tt_cache_source *src) {
  free(s->cache_dir);
  free(s->cache_identity);
  free(s->cache_src_path);
  s->cache_dir = tt_xstrdup(cache_dir);
  s->cache_identity = tt_xstrdup(identity);
  s->cache_src = *src;
  s->cache_src_path = src->path ? tt_xstrdup(src->path) : NULL;
  s->cache_src.path = s->cache_src_path;
}

bool tt_schema_cache_key(const tt_schema *s, const char **cache_dir, const char **identity,
                         tt_cache_source *src) {
  if (!s->cache_dir) return false;
  *cache_dir = s->cache_dir;
  *identity = s->cache_identity;
  *src = s->cache_src;
  return true;
}

const char *tt_schema_warning(const tt_schema *s) { return s ? s->warning : NULL; }

json_t *tt_schema_notes_json(const tt_schema *s) {
  json_t *notes = json_array();
  if (s->cat->warning) json_array_append_new(notes, json_string(s->cat->warning));
  if (s->warning) json_array_append_new(notes, json_string(s->warning));
  return notes;
}

const tt_schema_state *tt_schema_get_state(const tt_schema *s) { return &s->state; }

void tt_schema_set_state(tt_schema *s, const tt_schema_state *st) { s->state = *st; }

bool tt_schema_complete(const tt_schema *s) {
  return !s->state.pending && !s->state.values_pending;
}

bool tt_schema_current(const tt_schema *s) {
  return tt_schema_complete(s) && !s->state.outdated && !s->state.values_outdated;
}

/* What the card says is missing: the catalog's note, or that the rows are
 * not read yet. */
static const char *tt_table_note(const tt_table_info *t) {
  if (t->note) return t->note;
  if (t->probe == TT_PROBE_PENDING)
    return "no example values yet: reading the schema stopped at its time limit before this table";
  return NULL;
}

void tt_schema_set_warning(tt_schema *s, const char *warning) {
  free(s->warning);
  s->warning = warning ? tt_xstrdup(warning) : NULL;
}

/* Text as a JSON string: quotes and backslashes escaped, so a value
 * cannot end the list it stands in or pose as card syntax; unsafe
 * characters become \u escapes. */
static void tt_put_json_text(tt_buf *out, const char *s, size_t n) {
  json_t *j = tt_json_stringn(s, n);
  tt_json_dump(out, j, JSON_ENCODE_ANY);
  json_decref(j);
}

/* One example value, short and safe: long text is cut, text is a JSON
 * string (values often hold commas and quotes). */
static void tt_put_example(tt_buf *out, const tt_value *v) {
  if (v->type == TT_VAL_TEXT) {
    size_t keep = tt_utf8_prefix(v->u.s, v->len, TT_EXAMPLE_CHARS);
    tt_buf cut = TT_BUF_INIT;
    tt_buf_append(&cut, v->u.s, keep);
    if (keep < v->len) tt_buf_puts(&cut, "…");
    tt_put_json_text(out, cut.data ? cut.data : "", cut.len);
    tt_buf_free(&cut);
  } else {
    tt_value_to_text(out, v);
  }
}

/* Distinct non-NULL values of column col in the sample rows: up to three
 * texts, two numbers (numbers cost a token per digit and say less). */
static void tt_put_examples(tt_buf *out, const tt_result *sample, size_t col, size_t most) {
  if (!sample || col >= sample->ncols) return;
  bool any = false;
  size_t shown = 0;
  for (size_t r = 0; r < sample->nrows; r++) {
    const tt_value *v = tt_result_cell(sample, r, col);
    if (v->type == TT_VAL_NULL) continue;
    size_t max = v->type == TT_VAL_TEXT ? TT_TEXT_EXAMPLES : TT_NUMBER_EXAMPLES;
    if (max > most) max = most;
    if (shown >= max) break;
    bool seen = false;
    for (size_t k = 0; k < r && !seen; k++)
      seen = tt_value_equal(v, tt_result_cell(sample, k, col));
    if (seen) continue;
    tt_buf_puts(out, any ? ", " : ", examples: [");
    tt_put_example(out, v);
    any = true;
    shown++;
  }
  if (any) tt_buf_putc(out, ']');
}

static const tt_fk_info *tt_fk_of(const tt_table_info *t, const char *col) {
  for (size_t k = 0; k < t->nfks; k++)
    if (strcmp(t->fks[k].from, col) == 0) return &t->fks[k];
  return NULL;
}

static bool tt_is_plain_name(const char *s) {
  if (!(isalpha((unsigned char)*s) || *s == '_')) return false;
  for (; *s; s++)
    if (!(isalnum((unsigned char)*s) || *s == '_')) return false;
  return true;
}

/* Names come from the database file too: anything but a plain identifier
 * is written as a quoted SQL identifier (so "x), (admin: TEXT" cannot pose
 * as another column), escaped like data. */
static void tt_put_name(tt_buf *out, const char *s) {
  if (tt_is_plain_name(s)) {
    tt_buf_puts(out, s);
    return;
  }
  tt_buf q = TT_BUF_INIT;
  tt_buf_put_sql_ident(&q, s);
  tt_escape_terminal(out, q.data, q.len, NULL);
  tt_buf_free(&q);
}

/* A table's name: "schema.table" (schema_len > 0) as two names, each
 * quoted only when it must be (sales.orders, "public"."Track"). */
static void tt_put_table_name(tt_buf *out, const char *s, size_t schema_len) {
  if (!schema_len || schema_len >= strlen(s) || s[schema_len] != '.') {
    tt_put_name(out, s);
    return;
  }
  char *schema = tt_xstrndup(s, schema_len);
  tt_put_name(out, schema);
  free(schema);
  tt_buf_putc(out, '.');
  tt_put_name(out, s + schema_len + 1);
}

/* Declared types like INTEGER or NVARCHAR(200) as they are; anything
 * stranger as a JSON string. */
static void tt_put_type(tt_buf *out, const char *s) {
  const char *p = s;
  while (isalnum((unsigned char)*p) || *p == '_' || *p == ' ') p++;
  if (*p == '(') {
    p++;
    while (isdigit((unsigned char)*p) || *p == ',' || *p == ' ') p++;
    if (*p == ')') p++;
  }
  if (*p == '\0' && p != s) tt_buf_puts(out, s);
  else tt_put_json_text(out, s, strlen(s));
}

/* Defaults are SQL text: numbers, 'strings' and keywords as they are,
 * anything else as a JSON string. */
static void tt_put_default(tt_buf *out, const char *s) {
  size_t n = strlen(s);
  bool quoted = n >= 2 && s[0] == '\'' && s[n - 1] == '\'' && !strpbrk(s, "()[],\"");
  bool plain = n > 0 && strspn(s, "0123456789.-+eE") == n;
  if (quoted || plain || tt_is_plain_name(s)) tt_escape_terminal(out, s, n, NULL);
  else tt_put_json_text(out, s, n);
}

/* A date or time kept as text: one example shows its format. */
static bool tt_looks_like_date(const tt_column_info *col) {
  if (strcasestr(col->type, "DATE") || strcasestr(col->type, "TIME")) return true;
  const char *v = col->ntop_values ? col->top_values[0] : "";
  if (!col->ntop_values) return false;
  return strlen(v) >= 10 && isdigit((unsigned char)v[0]) && isdigit((unsigned char)v[3]) &&
         v[4] == '-' && isdigit((unsigned char)v[5]) && v[7] == '-';
}

/* The most frequent values of a text column, read by the catalog; when
 * they could not be read, the sample rows' texts. */
static void tt_put_top_values(tt_buf *out, const tt_table_info *t, size_t c) {
  const tt_column_info *col = &t->cols[c];
  if (!col->ntop_values) {
    if (!t->sample || c >= t->sample->ncols || !t->sample->nrows ||
        tt_result_cell(t->sample, 0, c)->type != TT_VAL_TEXT)
      return; /* numbers cost a token per digit and say little */
    tt_put_examples(out, t->sample, c, tt_looks_like_date(col) ? 1 : TT_TEXT_EXAMPLES);
    return;
  }
  size_t max = tt_looks_like_date(col) ? 1 : col->ntop_values;
  for (size_t i = 0; i < max; i++) {
    tt_buf_puts(out, i ? ", " : ", examples: [");
    tt_value v = {.type = TT_VAL_TEXT, .u.s = (char *)col->top_values[i],
                  .len = strlen(col->top_values[i])};
    tt_put_example(out, &v);
  }
  tt_buf_putc(out, ']');
}

/* Descriptions come from the file: plain ones as they are, any that could
 * pose as card syntax as a JSON string. */
static void tt_put_description(tt_buf *out, const char *d) {
  if (strpbrk(d, "()[]\"\\#")) tt_put_json_text(out, d, strlen(d));
  else tt_escape_terminal(out, d, strlen(d), NULL);
}

/* priv: the private form, without row counts or example values. */
static void tt_card_render(const tt_table_info *t, const bool *folded, bool priv, tt_buf *out) {
  tt_buf_printf(out, "# %s: ", t->is_view ? "View" : "Table");
  tt_put_table_name(out, t->name, t->schema_len);
  if (t->row_count >= 0 && !priv)
    tt_buf_printf(out, " (%s%lld row%s)",
                  t->row_count_kind == TT_ROWS_AT_LEAST ? ">"
                  : t->row_count_kind == TT_ROWS_STAT1  ? "~"
                                                        : "",
                  (long long)t->row_count, t->row_count == 1 ? "" : "s");
  if (t->description) {
    tt_buf_puts(out, ", ");
    tt_put_description(out, t->description);
  }
  if (t->data_note && !priv) {
    tt_buf_puts(out, t->description ? "; " : ", ");
    tt_put_description(out, t->data_note);
  }
  tt_buf_puts(out, "\n[\n");
  size_t nfolded = 0;
  for (size_t c = 0; c < t->ncols; c++) {
    const tt_column_info *col = &t->cols[c];
    if (folded[c]) {
      nfolded++;
      continue;
    }
    tt_buf_putc(out, '(');
    tt_put_name(out, col->name);
    tt_buf_puts(out, ": ");
    tt_put_type(out, col->type[0] ? col->type : "ANY");
    if (col->pk) tt_buf_puts(out, ", primary key");
    if (col->default_value) {
      tt_buf_puts(out, ", default ");
      tt_put_default(out, col->default_value);
    }
    const tt_fk_info *fk = tt_fk_of(t, col->name);
    if (fk) {
      tt_buf_puts(out, ", references ");
      tt_put_table_name(out, fk->table, fk->table_schema_len);
      tt_buf_putc(out, '.');
      tt_put_name(out, fk->to ? fk->to : "?");
    }
    if (col->description) {
      tt_buf_puts(out, ", ");
      tt_put_description(out, col->description);
    }
    if (col->data_note && !priv) {
      tt_buf_puts(out, ", ");
      tt_put_description(out, col->data_note);
    }
    if (!col->pk && !fk && !priv) tt_put_top_values(out, t, c); /* ids say nothing */
    tt_buf_puts(out, "),\n");
  }
  tt_buf_puts(out, "]\n");
  if (nfolded) {
    tt_buf_puts(out, "also:");
    size_t k = 0;
    for (size_t c = 0; c < t->ncols; c++) {
      if (!folded[c]) continue;
      tt_buf_puts(out, k++ ? ", " : " ");
      tt_put_name(out, t->cols[c].name);
    }
    tt_buf_putc(out, '\n');
  }
  if (tt_table_note(t)) tt_buf_printf(out, "(%s)\n", tt_table_note(t));
}

/* Column names that recur across the tables of a catalog: each name once
 * (sorted, case-insensitive) with the number of tables that have it. */
typedef struct tt_name_count {
  const char *name;
  size_t tables;
} tt_name_count;

static int tt_name_cmp(const void *a, const void *b) {
  return strcasecmp(((const tt_name_count *)a)->name, ((const tt_name_count *)b)->name);
}

/* Sorted names with their table counts; *n set. A table counts once per
 * name even when two of its columns differ only in case. */
static tt_name_count *tt_column_name_counts(const tt_catalog *cat, size_t *n) {
  size_t total = 0;
  for (size_t i = 0; i < cat->ntables; i++) total += cat->tables[i].ncols;
  tt_name_count *all = tt_xcalloc(total ? total : 1, sizeof *all);
  size_t k = 0;
  for (size_t i = 0; i < cat->ntables; i++)
    for (size_t c = 0; c < cat->tables[i].ncols; c++) {
      const char *name = cat->tables[i].cols[c].name;
      bool dup = false;
      for (size_t d = 0; d < c && !dup; d++) dup = strcasecmp(cat->tables[i].cols[d].name, name) == 0;
      if (!dup) all[k++] = (tt_name_count){name, 1};
    }
  qsort(all, k, sizeof *all, tt_name_cmp);
  size_t out = 0;
  for (size_t i = 0; i < k; i++) {
    if (out && strcasecmp(all[out - 1].name, all[i].name) == 0) all[out - 1].tables++;
    else all[out++] = all[i];
  }
  *n = out;
  return all;
}

/* Marks t's boilerplate columns: recurring across most tables of a large
 * schema, and neither a key nor described. */
static void tt_mark_boilerplate(const tt_catalog *cat, const tt_name_count *counts, size_t ncounts,
                                const tt_table_info *t, bool *folded) {
  for (size_t c = 0; c < t->ncols; c++) {
    const tt_column_info *col = &t->cols[c];
    folded[c] = false;
    if (cat->ntables < TT_BOILERPLATE_TABLES || col->pk || col->description ||
        tt_fk_of(t, col->name))
      continue;
    tt_name_count key = {col->name, 0};
    const tt_name_count *hit = bsearch(&key, counts, ncounts, sizeof key, tt_name_cmp);
    folded[c] = hit && hit->tables * 100 >= cat->ntables * TT_BOILERPLATE_SHARE;
  }
}

tt_schema *tt_schema_new(tt_catalog *cat) {
  tt_schema *s = tt_xcalloc(1, sizeof *s);
  s->cat = cat;
  s->ncards = cat->ntables;
  s->cards = tt_xcalloc(s->ncards ? s->ncards : 1, sizeof(tt_card));
  size_t ncounts;
  tt_name_count *counts = tt_column_name_counts(cat, &ncounts);
  for (size_t i = 0; i < s->ncards; i++) {
    tt_buf b = TT_BUF_INIT;
    const tt_table_info *t = &cat->tables[i];
    bool *folded = tt_xcalloc(t->ncols ? t->ncols : 1, sizeof(bool));
    tt_mark_boilerplate(cat, counts, ncounts, t, folded);
    tt_card_render(t, folded, false, &b);
    tt_buf pb = TT_BUF_INIT;
    tt_card_render(t, folded, true, &pb);
    s->cards[i].private_text = tt_buf_detach(&pb);
    free(folded);
    s->cards[i].table = &cat->tables[i];
    s->cards[i].tokens = tt_tokens_estimate(tt_buf_cstr(&b), b.len);
    s->cards[i].text = tt_buf_detach(&b);
    s->total_tokens += s->cards[i].tokens;
  }
  free(counts);
  return s;
}

void tt_schema_free(tt_schema *s) {
  if (!s) return;
  for (size_t i = 0; i < s->ncards; i++) {
    free(s->cards[i].text);
    free(s->cards[i].private_text);
  }
  free(s->cards);
  tt_catalog_free(s->cat);
  tt_values_free(s->values);
  tt_knowledge_free(s->knowledge);
  free(s->warning);
  free(s->cache_dir);
  free(s->cache_identity);
  free(s->cache_src_path);
  free(s);
}

size_t tt_schema_count(const tt_schema *s) { return s->ncards; }

void tt_schema_set_values(tt_schema *s, tt_values *v) {
  tt_values_free(s->values);
  s->values = v;
}

const tt_values *tt_schema_values(const tt_schema *s) { return s ? s->values : NULL; }

const tt_card *tt_schema_card(const tt_schema *s, size_t i) {
  return i < s->ncards ? &s->cards[i] : NULL;
}

const tt_card *tt_schema_find(const tt_schema *s, const char *name) {
  const tt_table_info *t = tt_catalog_find(s->cat, name);
  return t ? &s->cards[t - s->cat->tables] : NULL;
}

const tt_catalog *tt_schema_catalog(const tt_schema *s) { return s->cat; }

size_t tt_schema_total_tokens(const tt_schema *s) { return s->total_tokens; }

void tt_schema_render_text(const tt_schema *s, const tt_card *const *cards,
                           size_t n, tt_buf *out) {
  tt_schema_render_text_as(s, cards, n, false, out);
}

void tt_schema_render_text_as(const tt_schema *s, const tt_card *const *cards, size_t n,
                              bool priv, tt_buf *out) {
  size_t count = cards ? n : s->ncards;
  for (size_t i = 0; i < count; i++) {
    if (i) tt_buf_putc(out, '\n');
    const tt_card *c = cards ? cards[i] : &s->cards[i];
    tt_buf_puts(out, priv ? c->private_text : c->text);
  }
  /* the notes say how reading the rows and values went (counts of tables,
   * lines of a knowledge file): for the user, and for a model that is
   * shown rows; private mode shows none */
  if (priv) return;
  if (s->cat->warning) tt_buf_printf(out, "\n# Note: %s\n", s->cat->warning);
  if (s->warning) tt_buf_printf(out, "\n# Note: %s\n", s->warning);
}

static json_t *tt_str(const char *s) { return tt_json_stringn(s, strlen(s)); }

json_t *tt_card_to_json(const tt_card *c) {
  const tt_table_info *t = c->table;
  json_t *o = json_object();
  json_object_set_new(o, "name", tt_str(t->name));
  json_object_set_new(o, "type", json_string(t->is_view ? "view" : "table"));
  json_object_set_new(o, "row_count",
                      t->row_count >= 0 ? json_integer(t->row_count) : json_null());
  /* exact; at_least (counting stopped there); estimate (the statistics of
   * ANALYZE: sqlite_stat1, PostgreSQL's reltuples) */
  static const char *const kinds[] = {"exact", "at_least", "estimate"};
  json_object_set_new(o, "row_count_kind",
                      t->row_count >= 0 ? json_string(kinds[t->row_count_kind]) : json_null());
  json_t *cols = json_array();
  for (size_t i = 0; i < t->ncols; i++) {
    const tt_column_info *col = &t->cols[i];
    json_t *jc = json_object();
    json_object_set_new(jc, "name", tt_str(col->name));
    json_object_set_new(jc, "type", tt_str(col->type));
    json_object_set_new(jc, "primary_key", json_boolean(col->pk > 0));
    /* The column's place in a primary key of several columns. */
    if (col->pk) json_object_set_new(jc, "primary_key_position", json_integer(col->pk));
    json_object_set_new(jc, "not_null", json_boolean(col->not_null));
    json_object_set_new(jc, "default",
                        col->default_value ? tt_str(col->default_value) : json_null());
    char *described = tt_described(col->description, col->data_note);
    json_object_set_new(jc, "description", described ? tt_str(described) : json_null());
    free(described);
    /* text columns: the most frequent values among the first rows */
    json_t *top = json_array();
    for (size_t k = 0; k < col->ntop_values; k++) json_array_append_new(top, tt_str(col->top_values[k]));
    json_object_set_new(jc, "frequent_values", top);
    json_array_append_new(cols, jc);
  }
  json_object_set_new(o, "columns", cols);
  json_t *fks = json_array();
  for (size_t i = 0; i < t->nfks; i++) {
    json_t *jf = json_object();
    json_object_set_new(jf, "column", tt_str(t->fks[i].from));
    json_object_set_new(jf, "references_table", tt_str(t->fks[i].table));
    json_object_set_new(jf, "references_column",
                        t->fks[i].to ? tt_str(t->fks[i].to) : json_null());
    json_array_append_new(fks, jf);
  }
  json_object_set_new(o, "foreign_keys", fks);
  if (t->sample) {
    json_t *sample = tt_result_to_json(t->sample, 0, false);
    json_t *rows = json_object_get(sample, "rows");
    size_t i, k;
    json_t *row, *cell;
    json_array_foreach(rows, i, row) { /* long cells cut, as on the card */
      json_array_foreach(row, k, cell) {
        if (!json_is_string(cell) || json_string_length(cell) <= TT_JSON_CELL_BYTES) continue;
        const char *s = json_string_value(cell);
        tt_buf cut = TT_BUF_INIT;
        tt_buf_append(&cut, s, tt_utf8_prefix(s, json_string_length(cell), TT_JSON_CELL_BYTES / 4));
        tt_buf_puts(&cut, "…");
        json_array_set_new(row, k, tt_json_stringn(cut.data, cut.len));
        tt_buf_free(&cut);
      }
    }
    json_object_set(o, "sample_rows", rows);
    json_decref(sample);
  } else {
    json_object_set_new(o, "sample_rows", json_array());
  }
  char *described = tt_described(t->description, t->data_note);
  json_object_set_new(o, "description", described ? tt_str(described) : json_null());
  free(described);
  json_object_set_new(o, "note", tt_table_note(t) ? tt_str(tt_table_note(t)) : json_null());
  json_object_set_new(o, "token_estimate", json_integer((json_int_t)c->tokens));
  json_object_set_new(o, "card", tt_str(c->text));
  return o;
}

json_t *tt_schema_to_json(const tt_schema *s, const tt_card *const *cards, size_t n) {
  size_t count = cards ? n : s->ncards;
  json_t *tables = json_array();
  size_t tokens = 0;
  for (size_t i = 0; i < count; i++) {
    const tt_card *c = cards ? cards[i] : &s->cards[i];
    json_array_append_new(tables, tt_card_to_json(c));
    tokens += c->tokens;
  }
  json_t *o = json_object();
  json_object_set_new(o, "tables", tables);
  json_object_set_new(o, "token_estimate", json_integer((json_int_t)tokens));
  json_t *notes = tt_schema_notes_json(s);
  if (json_array_size(notes)) json_object_set_new(o, "notes", notes);
  else json_decref(notes);
  json_object_set_new(o, "complete", json_boolean(tt_schema_complete(s)));
  return o;
}

void tt_schema_set_knowledge(tt_schema *s, tt_knowledge *k) {
  tt_knowledge_free(s->knowledge);
  s->knowledge = k;
}

const tt_knowledge *tt_schema_knowledge(const tt_schema *s) { return s->knowledge; }
