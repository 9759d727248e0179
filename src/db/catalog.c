/* catalog.c — reading what a database holds: its tables and views in
 * schema order, their columns, primary and foreign keys, row counts and a
 * few sample rows. Every query goes through the same guard as user SQL
 * (each on its own: no lock is held across them, so writers are not kept
 * waiting), and counts and samples have a time budget (each,
 * and all together), so that slow views cannot hold up the start: what
 * did not fit is left out with a note on the card. */
#include "db/db_internal.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define TT_SAMPLE_ROWS 3
#define TT_PROBE_TIMEOUT_S 0.25 /* a count or a sample of one table or view */
#define TT_PROBE_BUDGET_S 3.0   /* counts and samples of the whole schema */

/* Runs an internal query with its own limits; NULL (err set) on failure. */
static tt_result *tt_catalog_query(tt_db *db, const char *sql, double timeout_s,
                                   long max_rows, long max_bytes, tt_db_error *err) {
  tt_db_opts saved = db->opts;
  tt_db_opts o = saved;
  o.timeout_s = timeout_s;
  o.max_rows = max_rows;
  o.max_bytes = max_bytes;
  db->opts = o;
  tt_result *r = tt_db_query(db, sql, strlen(sql), err);
  db->opts = saved;
  return r;
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

static bool tt_load_columns(tt_db *db, tt_arena *a, tt_table_info *t, tt_db_error *err) {
  tt_buf q = TT_BUF_INIT;
  tt_buf_puts(&q, "SELECT name, type, \"notnull\", dflt_value, pk, hidden "
                  "FROM pragma_table_xinfo(");
  tt_buf_put_sql_string(&q, t->name);
  tt_buf_puts(&q, ") WHERE hidden <> 1 ORDER BY cid");
  tt_result *r = tt_catalog_query(db, tt_buf_cstr(&q), 5.0, 100000, 64 << 20, err);
  tt_buf_free(&q);
  if (!r) return false;
  t->ncols = r->nrows;
  t->cols = tt_arena_alloc(a, sizeof(tt_column_info) * (r->nrows ? r->nrows : 1));
  for (size_t i = 0; i < r->nrows; i++) {
    tt_column_info *c = &t->cols[i];
    const char *name = tt_cell_text(a, r, i, 0), *type = tt_cell_text(a, r, i, 1);
    c->name = name ? name : "";
    c->type = type ? type : "";
    c->not_null = tt_cell_int(r, i, 2) != 0;
    c->default_value = tt_cell_text(a, r, i, 3);
    c->pk = (int)tt_cell_int(r, i, 4);
  }
  tt_result_free(r);
  return true;
}

static bool tt_load_fks(tt_db *db, tt_arena *a, tt_table_info *t, tt_db_error *err) {
  tt_buf q = TT_BUF_INIT;
  tt_buf_puts(&q, "SELECT \"from\", \"table\", \"to\", seq FROM pragma_foreign_key_list(");
  tt_buf_put_sql_string(&q, t->name);
  tt_buf_puts(&q, ") ORDER BY id, seq");
  tt_result *r = tt_catalog_query(db, tt_buf_cstr(&q), 5.0, 100000, 64 << 20, err);
  tt_buf_free(&q);
  if (!r) return false;
  t->nfks = r->nrows;
  t->fks = tt_arena_alloc(a, sizeof(tt_fk_info) * (r->nrows ? r->nrows : 1));
  for (size_t i = 0; i < r->nrows; i++) {
    tt_fk_info *f = &t->fks[i];
    const char *from = tt_cell_text(a, r, i, 0), *table = tt_cell_text(a, r, i, 1);
    f->from = from ? from : "";
    f->table = table ? table : "";
    f->to = tt_cell_text(a, r, i, 2); /* NULL: the referenced primary key */
    f->pk_seq = (int)tt_cell_int(r, i, 3);
  }
  tt_result_free(r);
  return true;
}

/* A row count (tables only: a view's count runs its whole query) and a
 * few sample rows, each within its time limit and the catalog's budget
 * (ends at budget_end, tt_now_ms time). */
static void tt_load_count_and_sample(tt_db *db, tt_arena *a, tt_table_info *t, double budget_end) {
  t->row_count = -1;
  double left_s = (budget_end - tt_now_ms()) / 1000.0;
  if (left_s <= 0.01) {
    t->note = tt_arena_strdup(a, "no example values: reading the schema took over its time budget");
    return;
  }
  double limit = left_s < TT_PROBE_TIMEOUT_S ? left_s : TT_PROBE_TIMEOUT_S;
  tt_db_error err;
  tt_buf q = TT_BUF_INIT;
  if (!t->is_view) {
    tt_buf_puts(&q, "SELECT count(*) FROM ");
    tt_buf_put_sql_ident(&q, t->name);
    tt_result *r = tt_catalog_query(db, tt_buf_cstr(&q), limit, 1, 1024, &err);
    t->row_count = r && r->nrows == 1 ? tt_cell_int(r, 0, 0) : -1;
    tt_result_free(r);
    tt_buf_reset(&q);
  }
  tt_buf_puts(&q, "SELECT * FROM ");
  tt_buf_put_sql_ident(&q, t->name);
  tt_buf_printf(&q, " LIMIT %d", TT_SAMPLE_ROWS);
  t->sample = tt_catalog_query(db, tt_buf_cstr(&q), limit, TT_SAMPLE_ROWS, 256 * 1024, &err);
  if (!t->sample && err.kind == TT_DB_ERR_TIMEOUT)
    t->note = tt_arena_strdup(a, t->is_view ? "no example values: the view took too long to read"
                                            : "no example values: the table took too long to read");
  tt_buf_free(&q);
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

tt_catalog *tt_db_catalog_load(tt_db *db, tt_db_error *err) {
  tt_result *list = tt_catalog_query(
      db,
      "SELECT name, type FROM sqlite_schema WHERE type IN ('table','view') "
      "AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' ORDER BY rowid",
      5.0, 100000, 64 << 20, err);
  if (!list) return NULL;
  double budget_end = tt_now_ms() + TT_PROBE_BUDGET_S * 1000.0;
  tt_catalog *cat = tt_xcalloc(1, sizeof *cat);
  cat->arena = tt_arena_new();
  cat->ntables = list->nrows;
  cat->tables = tt_arena_alloc(cat->arena, sizeof(tt_table_info) * (list->nrows ? list->nrows : 1));
  memset(cat->tables, 0, sizeof(tt_table_info) * list->nrows);
  for (size_t i = 0; i < list->nrows; i++) {
    tt_table_info *t = &cat->tables[i];
    const char *name = tt_cell_text(cat->arena, list, i, 0);
    const char *type = tt_cell_text(cat->arena, list, i, 1);
    t->name = name ? name : "";
    t->is_view = type && strcmp(type, "view") == 0;
    /* A broken view (it names a table that is gone) or a virtual table
     * whose module is not available is listed without columns rather than
     * making the whole schema unreadable. */
    tt_db_error ignored;
    if (tt_load_columns(db, cat->arena, t, &ignored)) tt_load_fks(db, cat->arena, t, &ignored);
    tt_load_count_and_sample(db, cat->arena, t, budget_end);
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

const tt_table_info *tt_catalog_find(const tt_catalog *cat, const char *name) {
  for (size_t i = 0; i < cat->ntables; i++)
    if (strcasecmp(cat->tables[i].name, name) == 0) return &cat->tables[i];
  return NULL;
}
