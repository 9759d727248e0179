/* catalog.c — what a SQLite database holds: its tables and views in
 * schema order, their columns, primary and foreign keys, descriptions from
 * the comments of their CREATE TABLE text, and row counts from
 * sqlite_stat1 when ANALYZE wrote one; counts (at most TT_ROW_COUNT_LIMIT
 * + 1 rows) and samples are read by the shared code (../catalog.c). Every
 * query goes through the same guard as user SQL (each on its own: no lock
 * is held across them, so writers are not kept waiting). Names that are
 * not valid UTF-8 are shown with each such byte as \xHH (names.c). */
#define _GNU_SOURCE /* strcasestr */
#include "db/sqlite/sqlite.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

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
    const char *name = tt_catalog_cell_text(a, r, i, 0), *type = tt_catalog_cell_text(a, r, i, 1);
    tt_db_name_forms(tt_sqlite_of(db), a, name ? name : "", &c->name, &c->raw_name);
    c->type = type ? type : "";
    c->not_null = tt_catalog_cell_int(r, i, 2) != 0;
    c->default_value = tt_catalog_cell_text(a, r, i, 3);
    c->pk = (int)tt_catalog_cell_int(r, i, 4);
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
    const char *from = tt_catalog_cell_text(a, r, i, 0), *table = tt_catalog_cell_text(a, r, i, 1);
    const char *to = tt_catalog_cell_text(a, r, i, 2);
    f->from = tt_db_shown_name(a, from ? from : "");
    f->table = tt_db_shown_name(a, table ? table : "");
    f->to = to ? tt_db_shown_name(a, to) : NULL; /* NULL: the referenced primary key */
    f->pk_seq = (int)tt_catalog_cell_int(r, i, 3);
  }
  tt_result_free(r);
  return true;
}

bool tt_sqlite_is_text_type(const char *type) {
  if (strcasestr(type, "INT")) return false;
  return strcasestr(type, "CHAR") || strcasestr(type, "CLOB") || strcasestr(type, "TEXT");
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
      t->row_count = tt_catalog_cell_int(r, i, 1);
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

/* A CSV file has no owner to write comments: those of its in-memory
 * CREATE TABLE are what the sniffer found in its rows (csv.c), so they are
 * data notes, which private mode leaves out. */
static void tt_csv_comments_are_notes(tt_table_info *t) {
  t->data_note = t->description;
  t->description = NULL;
  for (size_t c = 0; c < t->ncols; c++) {
    t->cols[c].data_note = t->cols[c].description;
    t->cols[c].description = NULL;
  }
}

tt_catalog *tt_sqlite_catalog_load(tt_db *db, tt_error *err) {
  tt_result *list = tt_catalog_query(
      db,
      "SELECT name, type, sql FROM sqlite_schema WHERE type IN ('table','view') "
      "AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' ORDER BY rowid",
      5.0, 100000, 64 << 20, err);
  if (!list) return NULL;
  tt_catalog *cat = tt_xcalloc(1, sizeof *cat);
  cat->arena = tt_arena_new();
  cat->ntables = list->nrows;
  cat->tables = tt_arena_alloc(cat->arena, sizeof(tt_table_info) * (list->nrows ? list->nrows : 1));
  memset(cat->tables, 0, sizeof(tt_table_info) * list->nrows);
  for (size_t i = 0; i < list->nrows; i++) {
    const char *name = tt_catalog_cell_text(cat->arena, list, i, 0);
    const char *type = tt_catalog_cell_text(cat->arena, list, i, 1);
    tt_db_name_forms(tt_sqlite_of(db), cat->arena, name ? name : "", &cat->tables[i].name, &cat->tables[i].raw_name);
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
    tt_catalog_read_comments(cat->arena, t, tt_catalog_cell_text(cat->arena, list, i, 2));
    if (tt_sqlite_of(db)->csv) tt_csv_comments_are_notes(t);
    tt_buf from = TT_BUF_INIT;
    tt_buf_put_sql_ident(&from, t->raw_name ? t->raw_name : t->name);
    tt_catalog_probe(db, cat->arena, t, tt_buf_cstr(&from), 0);
    tt_buf_free(&from);
  }
  tt_result_free(list);
  tt_resolve_fk_targets(cat);
  return cat;
}

void tt_sqlite_sql_column_values(const tt_table_info *t, const tt_column_info *c,
                                 long scan_rows, long max_len, tt_buf *out) {
  tt_buf_puts(out, "SELECT v FROM (SELECT ");
  tt_buf_put_sql_ident(out, c->raw_name ? c->raw_name : c->name);
  tt_buf_puts(out, " AS v FROM ");
  tt_buf_put_sql_ident(out, t->raw_name ? t->raw_name : t->name);
  tt_buf_printf(out, " LIMIT %ld) WHERE typeof(v) = 'text' AND length(CAST(v AS BLOB)) <= %ld GROUP BY v",
                scan_rows, max_len);
}
