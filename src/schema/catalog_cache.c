/* catalog_cache.c — a database's catalog kept between runs, so that a
 * start reads no row and no table list twice: one file per database under
 * <cache>/catalog/, holding everything tt_db_catalog_read and
 * tt_db_catalog_probe found (tables, columns, keys, descriptions, row
 * counts, sample rows with their types, frequent values, notes), and for
 * each table whether its rows were read and under which data stamp.
 *
 * An entry is used only for the database it was read from, as its schema
 * is now: the file's name comes from the stamp's identity (a copy of the
 * database elsewhere is another entry) and the identity and schema stamp
 * inside must be equal. Tables read under another data stamp are used as
 * read and counted as outdated (the caller reads them again in the
 * background). The file is read as hostile input (cache_file.c): any
 * fault, and the catalog is read from the database instead. */
#include "schema/cache_file.h"

#include <stdlib.h>
#include <string.h>

#define TT_CATALOG_FILE_MAX ((size_t)256 << 20)

/* ---- writing ---------------------------------------------------------------- */

static void tt_put_value(tt_buf *b, const tt_value *v) {
  tt_cw_u8(b, (unsigned)v->type);
  switch (v->type) {
  case TT_VAL_INT: tt_cw_u64(b, (uint64_t)v->u.i); break;
  case TT_VAL_REAL: tt_cw_f64(b, v->u.r); break;
  case TT_VAL_TEXT:
  case TT_VAL_BLOB: tt_cw_bytes(b, v->u.s, v->len); break;
  case TT_VAL_NULL: break;
  }
}

static void tt_put_result(tt_buf *b, const tt_result *r) {
  tt_cw_u8(b, r ? 1 : 0);
  if (!r) return;
  tt_cw_u64(b, r->ncols);
  for (size_t c = 0; c < r->ncols; c++) {
    tt_cw_str(b, r->names[c]);
    tt_cw_str(b, r->decltypes[c]);
  }
  tt_cw_u64(b, r->nrows);
  for (size_t i = 0; i < r->nrows * r->ncols; i++) tt_put_value(b, &r->cells[i]);
  tt_cw_u8(b, r->truncated);
  tt_cw_u8(b, (unsigned)r->truncated_by);
  tt_cw_u64(b, r->bytes);
  tt_cw_u64(b, (uint64_t)r->total_rows);
  tt_cw_u8(b, r->total_exact);
  tt_cw_u8(b, r->repeatable);
  tt_cw_f64(b, r->elapsed_ms);
}

static void tt_put_table(tt_buf *b, const tt_table_info *t) {
  tt_cw_str(b, t->name);
  tt_cw_str(b, t->raw_name);
  tt_cw_u8(b, t->is_view);
  tt_cw_u64(b, (uint64_t)t->row_count);
  tt_cw_u8(b, (unsigned)t->row_count_kind);
  tt_cw_u64(b, t->ncols);
  for (size_t c = 0; c < t->ncols; c++) {
    const tt_column_info *col = &t->cols[c];
    tt_cw_str(b, col->name);
    tt_cw_str(b, col->raw_name);
    tt_cw_str(b, col->type);
    tt_cw_u64(b, (uint64_t)(int64_t)col->pk);
    tt_cw_u8(b, col->not_null);
    tt_cw_str(b, col->default_value);
    tt_cw_str(b, col->description);
    tt_cw_str(b, col->data_note);
    tt_cw_u64(b, col->ntop_values);
    for (size_t k = 0; k < col->ntop_values; k++) tt_cw_str(b, col->top_values[k]);
  }
  tt_cw_u64(b, t->nfks);
  for (size_t k = 0; k < t->nfks; k++) {
    const tt_fk_info *f = &t->fks[k];
    tt_cw_str(b, f->from);
    tt_cw_str(b, f->table);
    tt_cw_str(b, f->to);
    tt_cw_u64(b, (uint64_t)(int64_t)f->pk_seq);
    tt_cw_u64(b, f->table_schema_len);
  }
  tt_put_result(b, t->sample);
  tt_cw_str(b, t->note);
  tt_cw_str(b, t->description);
  tt_cw_str(b, t->data_note);
  tt_cw_str(b, t->sql_name);
  tt_cw_u64(b, t->schema_len);
  tt_cw_u8(b, (unsigned)t->probe);
  tt_cw_str(b, t->from);
  tt_cw_u64(b, t->probe_stamp);
}

bool tt_catalog_cache_save(const char *path, const tt_cache_source *src,
                           const tt_catalog_stamp *stamp, const tt_catalog *cat) {
  tt_buf b = TT_BUF_INIT;
  tt_cache_begin(&b, TT_CATALOG_MAGIC, src);
  tt_cw_str(&b, stamp->identity);
  tt_cw_str(&b, stamp->schema);
  tt_cw_str(&b, stamp->data);
  tt_cw_str(&b, cat->list_tables_sql);
  tt_cw_u64(&b, cat->ntables);
  for (size_t i = 0; i < cat->ntables; i++) tt_put_table(&b, &cat->tables[i]);
  bool ok = tt_cache_finish(&b, path);
  tt_buf_free(&b);
  return ok;
}

/* ---- reading ---------------------------------------------------------------- */

/* Strings of the file, copied into the catalog's arena. */
typedef struct tt_cat_reader {
  tt_cr r;
  tt_arena *a;
} tt_cat_reader;

static const char *tt_get_str(tt_cat_reader *cr) {
  const char *s = tt_cr_str(&cr->r);
  return s ? tt_arena_strdup(cr->a, s) : NULL;
}

/* A string that must be there. */
static const char *tt_get_name(tt_cat_reader *cr) {
  const char *s = tt_get_str(cr);
  if (!s) cr->r.bad = true;
  return s ? s : "";
}

static void tt_get_value(tt_cr *r, tt_arena *a, tt_value *v) {
  memset(v, 0, sizeof *v);
  unsigned type = tt_cr_u8(r);
  switch (type) {
  case TT_VAL_NULL: v->type = TT_VAL_NULL; break;
  case TT_VAL_INT: v->type = TT_VAL_INT; v->u.i = (int64_t)tt_cr_u64(r); break;
  case TT_VAL_REAL: v->type = TT_VAL_REAL; v->u.r = tt_cr_f64(r); break;
  case TT_VAL_TEXT:
  case TT_VAL_BLOB: {
    size_t n;
    const char *s = tt_cr_bytes(r, &n);
    if (!s) r->bad = true;
    v->type = (tt_valtype)type;
    v->len = n;
    v->u.s = s ? tt_arena_memdup(a, s, n) : "";
    break;
  }
  default: r->bad = true; break;
  }
}

static tt_result *tt_get_result(tt_cr *r) {
  if (tt_cr_u8(r) != 1) return NULL;
  size_t ncols = tt_cr_count(r, 18); /* two strings: at least 9 bytes each */
  tt_result *res = tt_xcalloc(1, sizeof *res);
  res->arena = tt_arena_new();
  res->ncols = ncols;
  res->names = tt_arena_alloc(res->arena, (ncols ? ncols : 1) * sizeof(char *));
  res->decltypes = tt_arena_alloc(res->arena, (ncols ? ncols : 1) * sizeof(char *));
  for (size_t c = 0; c < ncols; c++) {
    const char *n = tt_cr_str(r), *d = tt_cr_str(r);
    res->names[c] = tt_arena_strdup(res->arena, n ? n : "");
    res->decltypes[c] = tt_arena_strdup(res->arena, d ? d : "");
    if (!n || !d) r->bad = true;
  }
  size_t nrows = tt_cr_count(r, ncols ? ncols : 1); /* a cell takes a byte at least */
  res->nrows = ncols ? nrows : 0;
  size_t ncells = res->nrows * ncols; /* at most the bytes left: no overflow */
  res->cells = tt_xcalloc(ncells > 0 ? ncells : 1, sizeof(tt_value));
  for (size_t i = 0; i < res->nrows * ncols && !r->bad; i++) tt_get_value(r, res->arena, &res->cells[i]);
  res->truncated = tt_cr_u8(r) != 0;
  unsigned by = tt_cr_u8(r);
  if (by > TT_TRUNC_BYTES) r->bad = true;
  res->truncated_by = (tt_trunc)by;
  res->bytes = (size_t)tt_cr_u64(r);
  res->total_rows = (int64_t)tt_cr_u64(r);
  res->total_exact = tt_cr_u8(r) != 0;
  res->repeatable = tt_cr_u8(r) != 0;
  res->elapsed_ms = tt_cr_f64(r);
  return res;
}

static void tt_get_table(tt_cat_reader *cr, tt_table_info *t) {
  tt_cr *r = &cr->r;
  t->name = tt_get_name(cr);
  t->raw_name = tt_get_str(cr);
  t->is_view = tt_cr_u8(r) != 0;
  t->row_count = (int64_t)tt_cr_u64(r);
  unsigned kind = tt_cr_u8(r);
  if (kind > TT_ROWS_STAT1) r->bad = true;
  t->row_count_kind = (tt_row_count_kind)kind;
  t->ncols = tt_cr_count(r, 40); /* a column's fields take 40 bytes at least */
  t->cols = tt_arena_alloc(cr->a, (t->ncols ? t->ncols : 1) * sizeof(tt_column_info));
  memset(t->cols, 0, (t->ncols ? t->ncols : 1) * sizeof(tt_column_info));
  for (size_t c = 0; c < t->ncols && !r->bad; c++) {
    tt_column_info *col = &t->cols[c];
    col->name = tt_get_name(cr);
    col->raw_name = tt_get_str(cr);
    col->type = tt_get_name(cr);
    int64_t pk = (int64_t)tt_cr_u64(r);
    if (pk < 0 || pk > 100000) r->bad = true;
    col->pk = (int)pk;
    col->not_null = tt_cr_u8(r) != 0;
    col->default_value = tt_get_str(cr);
    col->description = tt_get_str(cr);
    col->data_note = tt_get_str(cr);
    size_t ntop = tt_cr_count(r, 9);
    if (ntop > TT_TOP_VALUES) r->bad = true;
    if (ntop && !r->bad) {
      col->top_values = tt_arena_alloc(cr->a, ntop * sizeof(char *));
      for (size_t k = 0; k < ntop; k++) col->top_values[k] = tt_get_name(cr);
      col->ntop_values = ntop;
    }
  }
  t->nfks = tt_cr_count(r, 43);
  t->fks = tt_arena_alloc(cr->a, (t->nfks ? t->nfks : 1) * sizeof(tt_fk_info));
  for (size_t k = 0; k < t->nfks && !r->bad; k++) {
    tt_fk_info *f = &t->fks[k];
    f->from = tt_get_name(cr);
    f->table = tt_get_name(cr);
    f->to = tt_get_str(cr);
    int64_t seq = (int64_t)tt_cr_u64(r);
    if (seq < 0 || seq > 100000) r->bad = true;
    f->pk_seq = (int)seq;
    f->table_schema_len = (size_t)tt_cr_u64(r);
    if (f->table_schema_len > strlen(f->table)) r->bad = true;
  }
  if (r->bad) return;
  t->sample = tt_get_result(r);
  t->note = tt_get_str(cr);
  t->description = tt_get_str(cr);
  t->data_note = tt_get_str(cr);
  t->sql_name = tt_get_str(cr);
  t->schema_len = (size_t)tt_cr_u64(r);
  if (t->schema_len > strlen(t->name)) r->bad = true;
  unsigned probe = tt_cr_u8(r);
  if (probe > TT_PROBE_DONE) r->bad = true;
  t->probe = (tt_probe_state)probe;
  t->from = tt_get_str(cr);
  if (t->probe != TT_PROBE_NONE && !t->from) r->bad = true;
  t->probe_stamp = tt_cr_u64(r);
}

tt_catalog *tt_catalog_cache_load(const char *path, const tt_catalog_stamp *stamp) {
  tt_cat_reader cr = {0};
  tt_cache_source src;
  char *data = tt_cache_read(path, TT_CATALOG_MAGIC, TT_CATALOG_FILE_MAX, &cr.r, &src);
  if (!data) return NULL;
  const char *identity = tt_cr_str(&cr.r), *schema = tt_cr_str(&cr.r);
  tt_cr_str(&cr.r); /* the data stamp it was saved under (each table has its own) */
  if (cr.r.bad || !identity || !schema || strcmp(identity, stamp->identity) != 0 ||
      strcmp(schema, stamp->schema) != 0) {
    free(data);
    return NULL;
  }
  tt_catalog *cat = tt_xcalloc(1, sizeof *cat);
  cat->arena = cr.a = tt_arena_new();
  cat->list_tables_sql = tt_get_str(&cr);
  size_t n = tt_cr_count(&cr.r, 64); /* a table's fields take 64 bytes at least */
  cat->tables = tt_arena_alloc(cr.a, (n ? n : 1) * sizeof(tt_table_info));
  memset(cat->tables, 0, (n ? n : 1) * sizeof(tt_table_info));
  cat->ntables = n;
  for (size_t i = 0; i < n && !cr.r.bad; i++) tt_get_table(&cr, &cat->tables[i]);
  bool whole = !cr.r.bad && cr.r.p == cr.r.end;
  free(data);
  if (!whole) {
    tt_catalog_free(cat);
    return NULL;
  }
  return cat;
}
