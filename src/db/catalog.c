/* catalog.c — reading what a database holds: its tables and views in
 * schema order, their columns, primary and foreign keys, row counts and a
 * few sample rows. Every query goes through the same guard as user SQL
 * (each on its own: no lock is held across them, so writers are not kept
 * waiting), and counts and samples have a time budget (each,
 * and all together), so that slow views cannot hold up the start: what
 * did not fit is left out with a note on the card. Row counts come from
 * sqlite_stat1 when ANALYZE wrote one, else from counting at most
 * TT_ROW_COUNT_LIMIT + 1 rows, so a huge table costs no full scan. Names that are not
 * valid UTF-8 are shown with each such byte as \xHH, and SQL that names
 * them so in quotes is given their bytes (tt_db_raw_names). */
#define _GNU_SOURCE /* memmem */
#include "db/db_internal.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define TT_SAMPLE_ROWS 3
#define TT_PROBE_TIMEOUT_S 0.25 /* a count or a sample of one table or view */

/* Runs an internal query with its own limits; NULL (err set) on failure.
 * Its text may hold a name's raw bytes. */
static tt_result *tt_catalog_query(tt_db *db, const char *sql, double timeout_s,
                                   long max_rows, long max_bytes, tt_error *err) {
  tt_db_opts o = db->opts;
  o.timeout_s = timeout_s;
  o.max_rows = max_rows;
  o.max_bytes = max_bytes;
  db->trusted_text = true;
  tt_result *r = tt_db_query_opts(db, sql, strlen(sql), &o, err);
  db->trusted_text = false;
  return r;
}

const char *tt_db_shown_name(tt_arena *a, const char *raw) {
  size_t n = strlen(raw), bad;
  if (tt_utf8_valid(raw, n, &bad)) return tt_arena_strdup(a, raw);
  tt_buf b = TT_BUF_INIT;
  tt_utf8_escape_invalid(&b, raw, n);
  const char *shown = tt_arena_strdup(a, tt_buf_cstr(&b));
  tt_buf_free(&b);
  return shown;
}

/* Remembers a name that is not UTF-8, for tt_db_raw_names. */
static void tt_note_raw_name(tt_db *db, const char *shown, const char *raw) {
  for (size_t i = 0; i < db->nnames; i++)
    if (strcmp(db->names[2 * i], shown) == 0) return;
  db->names = tt_xrealloc(db->names, (db->nnames + 1) * 2 * sizeof *db->names);
  db->names[2 * db->nnames] = tt_xstrdup(shown);
  db->names[2 * db->nnames + 1] = tt_xstrdup(raw);
  db->nnames++;
}

/* name's shown form in *shown, and its raw bytes in *raw when they differ. */
static void tt_name_forms(tt_db *db, tt_arena *a, const char *name, const char **shown,
                          const char **raw) {
  *shown = tt_db_shown_name(a, name);
  *raw = strcmp(*shown, name) == 0 ? NULL : tt_arena_strdup(a, name);
  if (*raw) tt_note_raw_name(db, *shown, *raw);
}

/* Learns the names of tables, views and their columns that are not
 * UTF-8, once per connection, when SQL first seems to name one. */
static void tt_db_learn_raw_names(tt_db *db) {
  db->names_learned = true;
  tt_arena *a = tt_arena_new();
  sqlite3_stmt *list = NULL, *cols = NULL;
  db->internal = true; /* tabletalk's own reads of the schema */
  db->deadline_ms = tt_now_ms() + db->opts.timeout_s * 1000.0;
  if (sqlite3_prepare_v2(db->h, "SELECT name FROM sqlite_schema WHERE type IN ('table','view')",
                         -1, &list, NULL) == SQLITE_OK &&
      sqlite3_prepare_v2(db->h, "SELECT name FROM pragma_table_xinfo(?1)", -1, &cols, NULL) ==
          SQLITE_OK) {
    while (sqlite3_step(list) == SQLITE_ROW) {
      const char *t = (const char *)sqlite3_column_text(list, 0);
      if (!t) continue;
      const char *shown, *raw;
      tt_name_forms(db, a, t, &shown, &raw);
      sqlite3_bind_text(cols, 1, t, -1, SQLITE_TRANSIENT);
      while (sqlite3_step(cols) == SQLITE_ROW) {
        const char *c = (const char *)sqlite3_column_text(cols, 0);
        if (c) tt_name_forms(db, a, c, &shown, &raw);
      }
      sqlite3_reset(cols);
    }
  }
  sqlite3_finalize(list);
  sqlite3_finalize(cols);
  db->internal = false;
  tt_arena_free(a);
}

char *tt_db_raw_names(tt_db *db, const char *sql, size_t len, size_t *out_len) {
  if (!memmem(sql, len, "\\x", 2)) return NULL; /* no name shown escaped */
  if (!db->names_learned) tt_db_learn_raw_names(db);
  tt_buf out = TT_BUF_INIT;
  bool changed = false;
  size_t from = 0;
  for (size_t i = 0; i < len; i++) {
    char open = sql[i], close = open == '[' ? ']' : open;
    if (open != '"' && open != '`' && open != '[') continue;
    for (size_t k = 0; k < db->nnames; k++) {
      const char *shown = db->names[2 * k];
      size_t n = strlen(shown);
      if (i + n + 2 > len || memcmp(sql + i + 1, shown, n) != 0 || sql[i + 1 + n] != close) continue;
      tt_buf_append(&out, sql + from, i + 1 - from);
      tt_buf_puts(&out, db->names[2 * k + 1]);
      from = i + 1 + n;
      i = from;
      changed = true;
      break;
    }
  }
  if (!changed) {
    tt_buf_free(&out);
    return NULL;
  }
  tt_buf_append(&out, sql + from, len - from);
  *out_len = out.len;
  return tt_buf_detach(&out);
}

static const char *tt_cell_text(tt_arena *a, const tt_result *r, size_t row, size_t col) {
  const tt_value *v = tt_result_cell(r, row, col);
  if (v->type == TT_VAL_NULL) return NULL;
  tt_buf b = TT_BUF_INIT;
  tt_value_to_text(&b, v);
  char *s = tt_arena_memdup(a, tt_buf_cstr(&b), b.len);
  tt_buf_free(&b);
  return s;
}

static int64_t tt_cell_int(const tt_result *r, size_t row, size_t col) {
  const tt_value *v = tt_result_cell(r, row, col);
  return v->type == TT_VAL_INT ? v->u.i : 0;
}

static bool tt_load_columns(tt_db *db, tt_arena *a, tt_table_info *t, tt_error *err) {
  tt_buf q = TT_BUF_INIT;
  tt_buf_puts(&q, "SELECT name, type, \"notnull\", dflt_value, pk, hidden "
                  "FROM pragma_table_xinfo(");
  tt_buf_put_sql_string(&q, t->raw_name ? t->raw_name : t->name);
  tt_buf_puts(&q, ") WHERE hidden <> 1 ORDER BY cid");
  tt_result *r = tt_catalog_query(db, tt_buf_cstr(&q), 5.0, 100000, 64 << 20, err);
  tt_buf_free(&q);
  if (!r) return false;
  t->ncols = r->nrows;
  t->cols = tt_arena_alloc(a, sizeof(tt_column_info) * (r->nrows ? r->nrows : 1));
  memset(t->cols, 0, sizeof(tt_column_info) * (r->nrows ? r->nrows : 1));
  for (size_t i = 0; i < r->nrows; i++) {
    tt_column_info *c = &t->cols[i];
    const char *name = tt_cell_text(a, r, i, 0), *type = tt_cell_text(a, r, i, 1);
    tt_name_forms(db, a, name ? name : "", &c->name, &c->raw_name);
    c->type = type ? type : "";
    c->not_null = tt_cell_int(r, i, 2) != 0;
    c->default_value = tt_cell_text(a, r, i, 3);
    c->pk = (int)tt_cell_int(r, i, 4);
  }
  tt_result_free(r);
  return true;
}

static bool tt_load_fks(tt_db *db, tt_arena *a, tt_table_info *t, tt_error *err) {
  tt_buf q = TT_BUF_INIT;
  tt_buf_puts(&q, "SELECT \"from\", \"table\", \"to\", seq FROM pragma_foreign_key_list(");
  tt_buf_put_sql_string(&q, t->raw_name ? t->raw_name : t->name);
  tt_buf_puts(&q, ") ORDER BY id, seq");
  tt_result *r = tt_catalog_query(db, tt_buf_cstr(&q), 5.0, 100000, 64 << 20, err);
  tt_buf_free(&q);
  if (!r) return false;
  t->nfks = r->nrows;
  t->fks = tt_arena_alloc(a, sizeof(tt_fk_info) * (r->nrows ? r->nrows : 1));
  for (size_t i = 0; i < r->nrows; i++) {
    tt_fk_info *f = &t->fks[i];
    *f = (tt_fk_info){0}; /* table_schema_len and the rest stay 0 on SQLite */
    const char *from = tt_cell_text(a, r, i, 0), *table = tt_cell_text(a, r, i, 1);
    const char *to = tt_cell_text(a, r, i, 2);
    f->from = tt_db_shown_name(a, from ? from : "");
    f->table = tt_db_shown_name(a, table ? table : "");
    f->to = to ? tt_db_shown_name(a, to) : NULL; /* NULL: the referenced primary key */
    f->pk_seq = (int)tt_cell_int(r, i, 3);
  }
  tt_result_free(r);
  return true;
}

/* SQLite's rule for a declared type with text affinity. */
static bool tt_text_affinity(const char *type) {
  /* PostgreSQL's text types: text, character varying(n), character(n) */
  if (strncasecmp(type, "character", 9) == 0) return true;
  if (strcasestr(type, "INT")) return false;
  return strcasestr(type, "CHAR") || strcasestr(type, "CLOB") || strcasestr(type, "TEXT");
}

/* The most frequent values of each text column among the first
 * TT_TOP_VALUES_SCAN rows (one query per table, bounded: a big table is not
 * scanned whole), within limit seconds. Keys are skipped: ids say nothing. */
static void tt_load_top_values(tt_db *db, tt_arena *a, tt_table_info *t, const char *from,
                               double limit) {
  tt_buf q = TT_BUF_INIT;
  tt_buf_puts(&q, "WITH s AS (SELECT ");
  bool *read = tt_xcalloc(t->ncols ? t->ncols : 1, sizeof(bool));
  size_t nread = 0;
  for (size_t c = 0; c < t->ncols; c++) {
    const tt_column_info *col = &t->cols[c];
    bool text = tt_text_affinity(col->type);
    if (!text && !col->type[0] && t->sample && c < t->sample->ncols && t->sample->nrows)
      text = tt_result_cell(t->sample, 0, c)->type == TT_VAL_TEXT;
    if (!text || col->pk) continue;
    read[c] = true;
    if (nread++) tt_buf_puts(&q, ", ");
    tt_buf_put_sql_ident(&q, col->raw_name ? col->raw_name : col->name);
    tt_buf_printf(&q, " AS c%zu", c);
  }
  if (!nread) {
    tt_buf_free(&q);
    free(read);
    return;
  }
  tt_buf_printf(&q, " FROM %s LIMIT %d) ", from, TT_TOP_VALUES_SCAN);
  bool any = false;
  for (size_t c = 0; c < t->ncols; c++) {
    if (!read[c]) continue;
    if (any) tt_buf_puts(&q, " UNION ALL ");
    any = true;
    tt_buf_printf(&q,
                  "SELECT * FROM (SELECT %zu, substr(c%zu, 1, 200), count(*) FROM s WHERE c%zu "
                  "IS NOT NULL AND c%zu <> '' GROUP BY c%zu ORDER BY 3 DESC, 2 LIMIT %d)",
                  c, c, c, c, c, TT_TOP_VALUES);
  }
  tt_error err;
  tt_result *r = tt_catalog_query(db, tt_buf_cstr(&q), limit, (long)(nread * TT_TOP_VALUES),
                                  256 * 1024, &err);
  tt_buf_free(&q);
  free(read);
  if (!r) return;
  for (size_t i = 0; i < r->nrows; i++) {
    size_t c = (size_t)tt_cell_int(r, i, 0);
    const tt_value *v = tt_result_cell(r, i, 1);
    if (c >= t->ncols || v->type != TT_VAL_TEXT) continue;
    tt_column_info *col = &t->cols[c];
    if (!col->top_values) col->top_values = tt_arena_alloc(a, TT_TOP_VALUES * sizeof(char *));
    if (col->ntop_values < TT_TOP_VALUES)
      col->top_values[col->ntop_values++] = tt_arena_memdup(a, v->u.s, v->len);
  }
  tt_result_free(r);
}

/* A row count (tables only: a view's count runs its whole query) and a
 * few sample rows, each within its time limit and the catalog's budget
 * (ends at budget_end, tt_now_ms time). */
void tt_catalog_probe(tt_db *db, tt_arena *a, tt_table_info *t, const char *from,
                      double budget_end) {
  if (t->row_count_kind != TT_ROWS_STAT1) t->row_count = -1;
  double left_s = (budget_end - tt_now_ms()) / 1000.0;
  if (left_s <= 0.01) {
    t->note = tt_arena_strdup(a, "no example values: reading the schema took over its time budget");
    return;
  }
  double limit = left_s < TT_PROBE_TIMEOUT_S ? left_s : TT_PROBE_TIMEOUT_S;
  tt_error err;
  tt_buf q = TT_BUF_INIT;
  if (!t->is_view && t->row_count_kind != TT_ROWS_STAT1) {
    tt_buf_printf(&q, "SELECT count(*) FROM (SELECT 1 FROM %s LIMIT %d) AS c", from,
                  TT_ROW_COUNT_LIMIT + 1);
    tt_result *r = tt_catalog_query(db, tt_buf_cstr(&q), limit, 1, 1024, &err);
    t->row_count = r && r->nrows == 1 ? tt_cell_int(r, 0, 0) : -1;
    t->row_count_kind = TT_ROWS_EXACT;
    if (t->row_count > TT_ROW_COUNT_LIMIT) {
      t->row_count = TT_ROW_COUNT_LIMIT;
      t->row_count_kind = TT_ROWS_AT_LEAST;
    }
    tt_result_free(r);
    tt_buf_reset(&q);
  }
  tt_buf_printf(&q, "SELECT * FROM %s LIMIT %d", from, TT_SAMPLE_ROWS);
  t->sample = tt_catalog_query(db, tt_buf_cstr(&q), limit, TT_SAMPLE_ROWS, 256 * 1024, &err);
  if (t->sample) tt_load_top_values(db, a, t, from, limit);
  if (!t->sample && err.kind == TT_ERR_TIMEOUT)
    t->note = tt_arena_strdup(a, t->is_view ? "no example values: the view took too long to read"
                                            : "no example values: the table took too long to read");
  tt_buf_free(&q);
}

/* Row counts ANALYZE left in sqlite_stat1 (the first number of a stat is
 * the table's rows), when the file has one; read, never written. */
static void tt_load_stat1(tt_db *db, tt_catalog *cat) {
  tt_error err;
  tt_result *has = tt_catalog_query(
      db, "SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = 'sqlite_stat1'", 1.0, 1,
      1024, &err);
  bool present = has && has->nrows == 1;
  tt_result_free(has);
  if (!present) return;
  tt_result *r = tt_catalog_query(
      db, "SELECT tbl, max(CAST(stat AS INTEGER)) FROM sqlite_stat1 GROUP BY tbl", 1.0, 100000,
      16 << 20, &err);
  if (!r) return;
  for (size_t i = 0; i < r->nrows; i++) {
    const tt_value *name = tt_result_cell(r, i, 0);
    if (name->type != TT_VAL_TEXT) continue;
    for (size_t k = 0; k < cat->ntables; k++) {
      tt_table_info *t = &cat->tables[k];
      const char *raw = t->raw_name ? t->raw_name : t->name;
      if (t->is_view || strlen(raw) != name->len || strncasecmp(raw, name->u.s, name->len) != 0) continue;
      t->row_count = tt_cell_int(r, i, 1);
      t->row_count_kind = TT_ROWS_STAT1;
    }
  }
  tt_result_free(r);
}

/* A foreign key without a target column points at the referenced table's
 * primary key; fill in the column name so that readers need not know. */
static void tt_resolve_fk_targets(tt_catalog *cat) {
  for (size_t i = 0; i < cat->ntables; i++) {
    tt_table_info *t = &cat->tables[i];
    for (size_t k = 0; k < t->nfks; k++) {
      tt_fk_info *f = &t->fks[k];
      if (f->to) continue;
      const tt_table_info *target = tt_catalog_find(cat, f->table);
      if (!target) continue;
      for (size_t c = 0; c < target->ncols; c++)
        if (target->cols[c].pk == f->pk_seq + 1) f->to = target->cols[c].name;
    }
  }
}

tt_catalog *tt_db_catalog_load(tt_db *db, tt_error *err) {
  if (db->pg) return tt_pg_catalog_load(db, err);
  tt_result *list = tt_catalog_query(
      db,
      "SELECT name, type, sql FROM sqlite_schema WHERE type IN ('table','view') "
      "AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' ORDER BY rowid",
      5.0, 100000, 64 << 20, err);
  if (!list) return NULL;
  double budget_end = tt_now_ms() + TT_PROBE_BUDGET_S * 1000.0;
  tt_catalog *cat = tt_xcalloc(1, sizeof *cat);
  cat->arena = tt_arena_new();
  cat->ntables = list->nrows;
  cat->list_tables_sql = "SELECT name FROM sqlite_schema WHERE type = 'table'";
  cat->tables = tt_arena_alloc(cat->arena, sizeof(tt_table_info) * (list->nrows ? list->nrows : 1));
  memset(cat->tables, 0, sizeof(tt_table_info) * list->nrows);
  for (size_t i = 0; i < list->nrows; i++) {
    const char *name = tt_cell_text(cat->arena, list, i, 0);
    const char *type = tt_cell_text(cat->arena, list, i, 1);
    tt_name_forms(db, cat->arena, name ? name : "", &cat->tables[i].name, &cat->tables[i].raw_name);
    cat->tables[i].is_view = type && strcmp(type, "view") == 0;
  }
  tt_load_stat1(db, cat);
  for (size_t i = 0; i < list->nrows; i++) {
    tt_table_info *t = &cat->tables[i];
    /* A broken view (it names a table that is gone) or a virtual table
     * whose module is not available is listed without columns rather than
     * making the whole schema unreadable. */
    tt_error ignored;
    if (tt_load_columns(db, cat->arena, t, &ignored)) tt_load_fks(db, cat->arena, t, &ignored);
    tt_catalog_read_comments(cat->arena, t, tt_cell_text(cat->arena, list, i, 2));
    tt_buf from = TT_BUF_INIT;
    tt_buf_put_sql_ident(&from, t->raw_name ? t->raw_name : t->name);
    tt_catalog_probe(db, cat->arena, t, tt_buf_cstr(&from), budget_end);
    tt_buf_free(&from);
  }
  tt_result_free(list);
  tt_resolve_fk_targets(cat);
  return cat;
}

void tt_catalog_free(tt_catalog *cat) {
  if (!cat) return;
  for (size_t i = 0; i < cat->ntables; i++) tt_result_free(cat->tables[i].sample);
  tt_arena_free(cat->arena);
  free(cat);
}

void tt_db_sql_column_values(const tt_db *db, const tt_table_info *t, const tt_column_info *c,
                             long scan_rows, long max_len, tt_buf *out) {
  if (db->pg) {
    tt_buf_puts(out, "SELECT v FROM (SELECT ");
    tt_buf_put_sql_ident(out, c->raw_name ? c->raw_name : c->name);
    tt_buf_puts(out, "::text AS v FROM ");
    if (t->sql_name) tt_buf_puts(out, t->sql_name);
    else tt_buf_put_sql_ident(out, t->raw_name ? t->raw_name : t->name);
    tt_buf_printf(out, " LIMIT %ld) AS s WHERE v IS NOT NULL AND octet_length(v) <= %ld GROUP BY v",
                  scan_rows, max_len);
    return;
  }
  tt_buf_puts(out, "SELECT v FROM (SELECT ");
  tt_buf_put_sql_ident(out, c->raw_name ? c->raw_name : c->name);
  tt_buf_puts(out, " AS v FROM ");
  tt_buf_put_sql_ident(out, t->raw_name ? t->raw_name : t->name);
  tt_buf_printf(out, " LIMIT %ld) WHERE typeof(v) = 'text' AND length(CAST(v AS BLOB)) <= %ld GROUP BY v",
                scan_rows, max_len);
}

const tt_table_info *tt_catalog_find(const tt_catalog *cat, const char *name) {
  for (size_t i = 0; i < cat->ntables; i++)
    if (strcasecmp(cat->tables[i].name, name) == 0) return &cat->tables[i];
  return NULL;
}
