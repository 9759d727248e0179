/* catalog.c — the parts of reading a schema that every engine shares:
 * tabletalk's own queries under their own limits, and the probes of each
 * table (a bounded row count, three sample rows, the frequent values of
 * text columns), each within a time limit and all within the catalog's
 * budget, so that slow views cannot hold up the start: what did not fit
 * is left out with a note on the card. A huge table costs no full scan:
 * counting stops after TT_ROW_COUNT_LIMIT + 1 rows. Each engine lists its
 * tables, columns and keys itself (sqlite/catalog.c, pg/pg_catalog.c). */
#include "db/engine.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define TT_SAMPLE_ROWS 3
#define TT_PROBE_TIMEOUT_S 0.25 /* a count or a sample of one table or view */

tt_result *tt_catalog_query(tt_db *db, const char *sql, double timeout_s, long max_rows,
                            long max_bytes, tt_error *err) {
  tt_db_opts o = db->opts;
  o.timeout_s = timeout_s;
  o.max_rows = max_rows;
  o.max_bytes = max_bytes;
  o.count_rows = 0;
  const tt_db_opts *before = db->query_opts;
  bool trusted = db->trusted_text;
  db->query_opts = &o;
  db->trusted_text = true;
  tt_result *r = db->engine->query(db, sql, strlen(sql), err);
  db->trusted_text = trusted;
  db->query_opts = before;
  return r;
}

const char *tt_catalog_cell_text(tt_arena *a, const tt_result *r, size_t row, size_t col) {
  const tt_value *v = tt_result_cell(r, row, col);
  if (v->type == TT_VAL_NULL) return NULL;
  tt_buf b = TT_BUF_INIT;
  tt_value_to_text(&b, v);
  char *s = tt_arena_memdup(a, tt_buf_cstr(&b), b.len);
  tt_buf_free(&b);
  return s;
}

int64_t tt_catalog_cell_int(const tt_result *r, size_t row, size_t col) {
  const tt_value *v = tt_result_cell(r, row, col);
  return v->type == TT_VAL_INT ? v->u.i : 0;
}

/* name quoted as an identifier of the handle's dialect ("x" or `x`). */
static void tt_catalog_put_ident(const tt_db *db, tt_buf *b, const char *name) {
  char q = db->engine->facts.ident_quote ? db->engine->facts.ident_quote : '"';
  tt_buf_putc(b, q);
  for (const char *p = name; *p; p++) {
    if (*p == q) tt_buf_putc(b, q);
    tt_buf_putc(b, *p);
  }
  tt_buf_putc(b, q);
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
    bool text = db->engine->is_text_type(col->type);
    if (!text && !col->type[0] && t->sample && c < t->sample->ncols && t->sample->nrows)
      text = tt_result_cell(t->sample, 0, c)->type == TT_VAL_TEXT;
    if (!text || col->pk) continue;
    read[c] = true;
    if (nread++) tt_buf_puts(&q, ", ");
    tt_catalog_put_ident(db, &q, col->raw_name ? col->raw_name : col->name);
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
                  "IS NOT NULL AND c%zu <> '' GROUP BY c%zu ORDER BY 3 DESC, 2 LIMIT %d) AS "
                  "t%zu",
                  c, c, c, c, c, TT_TOP_VALUES, c);
  }
  tt_error err;
  tt_result *r = tt_catalog_query(db, tt_buf_cstr(&q), limit, (long)(nread * TT_TOP_VALUES),
                                  256 * 1024, &err);
  tt_buf_free(&q);
  free(read);
  if (!r) return;
  for (size_t i = 0; i < r->nrows; i++) {
    size_t c = (size_t)tt_catalog_cell_int(r, i, 0);
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
 * few sample rows, each within its time limit and the catalog's budget. */
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
    t->row_count = r && r->nrows == 1 ? tt_catalog_cell_int(r, 0, 0) : -1;
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
