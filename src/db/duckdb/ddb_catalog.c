/* ddb_catalog.c — what a DuckDB database holds, read from DuckDB's own
 * catalog functions (duckdb_tables, duckdb_views, duckdb_columns,
 * duckdb_constraints) into the same tt_catalog as the other engines':
 * tables and views of every schema of the database ("schema.table" outside
 * main), columns with DuckDB's types, primary and foreign keys, comments
 * as descriptions. Row counts come from statistics where DuckDB keeps
 * them (a .duckdb table's estimate, a Parquet file's metadata: marked as
 * such), else from the shared probes. Each column's card line carries
 * DuckDB's own statistics over the first TT_DDB_STATS_ROWS rows: the
 * approximate count of distinct values (approx_count_distinct) and, for
 * numbers and dates, the smallest and largest. Describing runs nothing of
 * a .duckdb file's owner but reading its views, which run under the same
 * lock as any query (ddb_open.c). */
#include "db/duckdb/ddb.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define TT_DDB_STATS_ROWS 100000
#define TT_DDB_STATS_SECONDS 2.0

static tt_result *tt_ddbc_query(tt_db *db, const char *sql, tt_error *err) {
  return tt_catalog_query(db, sql, 10.0, 1000000, 64L << 20, err);
}

static const char *tt_ddbc_raw(const tt_result *r, size_t row, size_t col) {
  const tt_value *v = tt_result_cell(r, row, col);
  return v->type == TT_VAL_TEXT ? v->u.s : "";
}

/* The name a table is shown by: "schema.table" outside main. */
static const char *tt_ddbc_name(tt_arena *a, const char *schema, const char *table,
                                size_t *schema_len) {
  *schema_len = 0;
  if (strcmp(schema, "main") == 0) return tt_db_shown_name(a, table);
  char *joined = tt_xasprintf("%s.%s", schema, table);
  const char *s = tt_db_shown_name(a, joined);
  free(joined);
  *schema_len = strlen(schema);
  return s;
}

static long tt_ddbc_find(const tt_catalog *cat, const tt_result *list, const char *schema,
                         const char *table) {
  for (size_t i = 0; i < cat->ntables; i++)
    if (strcmp(tt_ddbc_raw(list, i, 0), schema) == 0 && strcmp(tt_ddbc_raw(list, i, 1), table) == 0)
      return (long)i;
  return -1;
}

static void tt_ddbc_columns(tt_catalog *cat, const tt_result *list, const tt_result *cols) {
  tt_arena *a = cat->arena;
  for (size_t r = 0, i; r < cols->nrows; r = i) {
    const char *sname = tt_ddbc_raw(cols, r, 0), *tname = tt_ddbc_raw(cols, r, 1);
    for (i = r; i < cols->nrows && strcmp(tt_ddbc_raw(cols, i, 0), sname) == 0 &&
                strcmp(tt_ddbc_raw(cols, i, 1), tname) == 0;
         i++) {}
    long k = tt_ddbc_find(cat, list, sname, tname);
    if (k < 0) continue;
    tt_table_info *t = &cat->tables[k];
    t->ncols = i - r;
    t->cols = tt_arena_alloc(a, sizeof(tt_column_info) * t->ncols);
    memset(t->cols, 0, sizeof(tt_column_info) * t->ncols);
    for (size_t j = r; j < i; j++) {
      tt_column_info *c = &t->cols[j - r];
      const char *raw = tt_ddbc_raw(cols, j, 2);
      c->name = tt_db_shown_name(a, raw);
      if (strcmp(c->name, raw) != 0) c->raw_name = tt_arena_strdup(a, raw);
      c->type = tt_arena_strdup(a, tt_ddbc_raw(cols, j, 3));
      c->not_null = tt_result_cell(cols, j, 4)->type == TT_VAL_INT &&
                    tt_result_cell(cols, j, 4)->u.i == 0;
      const tt_value *d = tt_result_cell(cols, j, 5);
      c->default_value = d->type == TT_VAL_TEXT ? tt_arena_strdup(a, d->u.s) : NULL;
      const char *comment = tt_ddbc_raw(cols, j, 6);
      c->description = *comment ? tt_arena_strdup(a, comment) : NULL;
    }
  }
}

static void tt_ddbc_keys(tt_catalog *cat, const tt_result *list, const tt_result *pks,
                         const tt_result *fks) {
  tt_arena *a = cat->arena;
  for (size_t p = 0; pks && p < pks->nrows; p++) {
    long k = tt_ddbc_find(cat, list, tt_ddbc_raw(pks, p, 0), tt_ddbc_raw(pks, p, 1));
    if (k < 0) continue;
    tt_table_info *t = &cat->tables[k];
    for (size_t c = 0; c < t->ncols; c++)
      if (strcmp(t->cols[c].raw_name ? t->cols[c].raw_name : t->cols[c].name,
                 tt_ddbc_raw(pks, p, 2)) == 0)
        t->cols[c].pk = (int)tt_catalog_cell_int(pks, p, 3);
  }
  for (size_t f = 0; fks && f < fks->nrows; f++) {
    long k = tt_ddbc_find(cat, list, tt_ddbc_raw(fks, f, 0), tt_ddbc_raw(fks, f, 1));
    long target = tt_ddbc_find(cat, list, tt_ddbc_raw(fks, f, 0), tt_ddbc_raw(fks, f, 3));
    if (k < 0 || target < 0) continue;
    tt_table_info *t = &cat->tables[k];
    tt_fk_info *n = tt_arena_alloc(a, sizeof(tt_fk_info) * (t->nfks + 1));
    if (t->nfks) memcpy(n, t->fks, sizeof(tt_fk_info) * t->nfks);
    t->fks = n;
    tt_fk_info *fk = &t->fks[t->nfks++];
    *fk = (tt_fk_info){0};
    fk->from = tt_db_shown_name(a, tt_ddbc_raw(fks, f, 2));
    fk->table = cat->tables[target].name;
    fk->table_schema_len = cat->tables[target].schema_len;
    fk->to = tt_db_shown_name(a, tt_ddbc_raw(fks, f, 4));
    fk->pk_seq = (int)tt_catalog_cell_int(fks, f, 5) - 1;
  }
}

/* Parquet files: their row count from the files' metadata (no row read). */
static void tt_ddbc_parquet_counts(tt_db *db, tt_catalog *cat) {
  const tt_ddb *dd = tt_ddb_of(db);
  for (size_t v = 0; v < dd->nviews; v++) {
    const tt_ddb_view *view = &dd->views[v];
    if (view->format != TT_DDB_PARQUET) continue;
    tt_table_info *t = NULL;
    for (size_t i = 0; i < cat->ntables; i++)
      if (cat->tables[i].schema_len == 0 && strcmp(cat->tables[i].name, view->name) == 0)
        t = &cat->tables[i];
    if (!t) continue;
    tt_buf b = TT_BUF_INIT;
    tt_buf_puts(&b, "SELECT sum(num_rows)::BIGINT FROM parquet_file_metadata([");
    for (size_t f = 0; f < view->nfiles; f++) {
      if (f) tt_buf_putc(&b, ',');
      tt_buf_put_sql_string(&b, view->files[f]);
    }
    tt_buf_puts(&b, "])");
    tt_error err;
    tt_result *r = tt_ddbc_query(db, tt_buf_cstr(&b), &err);
    tt_buf_free(&b);
    if (r && r->nrows == 1 && tt_result_cell(r, 0, 0)->type == TT_VAL_INT) {
      t->row_count = tt_result_cell(r, 0, 0)->u.i;
      t->row_count_kind = TT_ROWS_STAT1;
    }
    tt_result_free(r);
  }
}

static bool tt_ddbc_ordered_type(const char *type) {
  static const char *const kinds[] = {"TINYINT", "SMALLINT", "INTEGER", "BIGINT", "HUGEINT",
                                      "UTINYINT", "USMALLINT", "UINTEGER", "UBIGINT", "FLOAT",
                                      "DOUBLE", "DECIMAL", "DATE", "TIMESTAMP", "TIME"};
  for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
    if (strncasecmp(type, kinds[i], strlen(kinds[i])) == 0) return true;
  return false;
}

static bool tt_ddbc_plain_type(const char *type) {
  return tt_ddbc_ordered_type(type) || tt_ddb_is_text_type(type) ||
         strncasecmp(type, "BOOLEAN", 7) == 0;
}

/* One column's statistics as its card line says them. */
static void tt_ddbc_describe_stats(tt_arena *a, tt_column_info *c, const tt_result *r,
                                   size_t base, bool partial) {
  const tt_value *nd = tt_result_cell(r, 0, base);
  if (nd->type != TT_VAL_INT) return;
  tt_buf b = TT_BUF_INIT;
  tt_buf_printf(&b, "~%lld distinct", (long long)nd->u.i);
  const tt_value *lo = tt_result_cell(r, 0, base + 1), *hi = tt_result_cell(r, 0, base + 2);
  if (tt_ddbc_ordered_type(c->type) && lo->type == TT_VAL_TEXT && hi->type == TT_VAL_TEXT)
    tt_buf_printf(&b, ", min %.40s, max %.40s", lo->u.s, hi->u.s);
  if (partial) tt_buf_printf(&b, " (first %d rows)", TT_DDB_STATS_ROWS);
  c->data_note = tt_arena_strdup(a, tt_buf_cstr(&b)); /* min and max are values */
  tt_buf_free(&b);
}

/* DuckDB's statistics of each column of t over its first rows, in one
 * query bounded by rows and time; nothing when it fails. */
static void tt_ddbc_stats(tt_db *db, tt_arena *a, tt_table_info *t) {
  if (!t->ncols || !t->sql_name) return;
  tt_buf b = TT_BUF_INIT;
  tt_buf_puts(&b, "SELECT count(*)");
  for (size_t i = 0; i < t->ncols; i++) {
    const char *n = t->cols[i].raw_name ? t->cols[i].raw_name : t->cols[i].name;
    if (!tt_ddbc_plain_type(t->cols[i].type)) {
      tt_buf_puts(&b, ", NULL, NULL, NULL");
      continue;
    }
    tt_buf_puts(&b, ", approx_count_distinct(");
    tt_buf_put_sql_ident(&b, n);
    tt_buf_puts(&b, ")::BIGINT, min(");
    tt_buf_put_sql_ident(&b, n);
    tt_buf_puts(&b, ")::VARCHAR, max(");
    tt_buf_put_sql_ident(&b, n);
    tt_buf_puts(&b, ")::VARCHAR");
  }
  tt_buf_printf(&b, " FROM (SELECT * FROM %s LIMIT %d)", t->sql_name, TT_DDB_STATS_ROWS);
  tt_error err;
  tt_result *r = tt_catalog_query(db, tt_buf_cstr(&b), TT_DDB_STATS_SECONDS, 1, 1L << 20, &err);
  tt_buf_free(&b);
  if (r && r->nrows == 1) {
    bool partial = tt_catalog_cell_int(r, 0, 0) >= TT_DDB_STATS_ROWS;
    for (size_t i = 0; i < t->ncols; i++)
      tt_ddbc_describe_stats(a, &t->cols[i], r, 1 + 3 * i, partial);
  }
  tt_result_free(r);
}

/* Every value of the first rows of each CSV view converted once, so that a
 * column holding text past DuckDB's sample is read as text (ddb_csv.c)
 * before its type is listed. */
static void tt_ddbc_csv_prescan(tt_db *db) {
  const tt_ddb *dd = tt_ddb_of(db);
  for (size_t v = 0; v < dd->nviews; v++) {
    if (dd->views[v].format != TT_DDB_CSV || dd->views[v].csv_select) continue;
    tt_buf b = TT_BUF_INIT;
    tt_buf_puts(&b, "SELECT count(COLUMNS(*)) FROM (SELECT * FROM ");
    tt_buf_put_sql_ident(&b, dd->views[v].name);
    tt_buf_printf(&b, " LIMIT %d)", TT_DDB_STATS_ROWS);
    tt_error err;
    tt_result_free(tt_catalog_query(db, tt_buf_cstr(&b), TT_DDB_STATS_SECONDS, 1, 1L << 20, &err));
    tt_buf_free(&b);
  }
}

/* The shared sniffer's notes of each CSV view (ddb_csv.c) on its table
 * and columns, before DuckDB's statistics. */
static void tt_ddbc_csv_notes(tt_db *db, tt_catalog *cat) {
  const tt_ddb *dd = tt_ddb_of(db);
  for (size_t v = 0; v < dd->nviews; v++) {
    const tt_ddb_view *view = &dd->views[v];
    if (view->format != TT_DDB_CSV || !view->csv_select) continue;
    for (size_t i = 0; i < cat->ntables; i++) {
      tt_table_info *t = &cat->tables[i];
      if (t->schema_len || strcmp(t->name, view->name) != 0) continue;
      if (view->csv_note) t->data_note = tt_arena_strdup(cat->arena, view->csv_note);
      for (size_t c = 0; c < t->ncols && c < view->csv_ncols; c++) {
        tt_column_info *col = &t->cols[c];
        const char *note = view->csv_notes[c];
        const char *raw = col->raw_name ? col->raw_name : col->name;
        if (!note || strcmp(raw, view->csv_names[c]) != 0) continue;
        char *both = col->data_note ? tt_xasprintf("%s; %s", note, col->data_note) : tt_xstrdup(note);
        col->data_note = tt_arena_strdup(cat->arena, both);
        free(both);
      }
    }
  }
}

/* One of the catalog's queries with the database's name (every %s). */
static tt_result *tt_ddbc_query_in(tt_db *db, const char *fmt, tt_error *err) {
  const char *name = tt_ddb_of(db)->dbname_sql;
  tt_buf b = TT_BUF_INIT;
  for (const char *p = fmt; *p; p++) {
    if (p[0] == '%' && p[1] == 's') {
      tt_buf_puts(&b, name);
      p++;
    } else {
      tt_buf_putc(&b, *p);
    }
  }
  tt_result *r = tt_ddbc_query(db, tt_buf_cstr(&b), err);
  tt_buf_free(&b);
  return r;
}

tt_catalog *tt_ddb_catalog_load(tt_db *db, tt_error *err) {
  tt_ddbc_csv_prescan(db);
  tt_result *list = tt_ddbc_query_in(
      db,
      "SELECT * FROM (SELECT schema_name AS s, table_name AS t, false, estimated_size, comment "
      "FROM duckdb_tables() WHERE NOT internal AND database_name = %s UNION ALL "
      "SELECT schema_name, view_name, true, NULL, comment FROM duckdb_views() WHERE NOT "
      "internal AND database_name = %s) ORDER BY s <> 'main', s, t",
      err);
  tt_result *cols =
      list ? tt_ddbc_query_in(db,
                           "SELECT schema_name, table_name, column_name, data_type, "
                           "is_nullable::INTEGER, column_default, comment FROM duckdb_columns() "
                           "WHERE NOT internal AND database_name = %s "
                           "ORDER BY schema_name, table_name, column_index",
                           err)
           : NULL;
  if (!cols) {
    tt_result_free(list);
    return NULL;
  }
  tt_error kerr;
  tt_result *pks = tt_ddbc_query_in(
      db,
      "SELECT schema_name, table_name, unnest(constraint_column_names), "
      "generate_subscripts(constraint_column_names, 1) FROM duckdb_constraints() WHERE "
      "constraint_type = 'PRIMARY KEY' AND database_name = %s",
      &kerr);
  tt_result *fks = tt_ddbc_query_in(
      db,
      "SELECT schema_name, table_name, unnest(constraint_column_names), referenced_table, "
      "unnest(referenced_column_names), generate_subscripts(constraint_column_names, 1) FROM "
      "duckdb_constraints() WHERE constraint_type = 'FOREIGN KEY' AND database_name = %s",
      &kerr);
  size_t n = list->nrows;
  tt_catalog *cat = tt_xcalloc(1, sizeof *cat);
  tt_arena *a = cat->arena = tt_arena_new();
  cat->ntables = n;
  cat->tables = tt_arena_alloc(a, sizeof(tt_table_info) * (n ? n : 1));
  memset(cat->tables, 0, sizeof(tt_table_info) * (n ? n : 1));
  for (size_t i = 0; i < n; i++) {
    tt_table_info *t = &cat->tables[i];
    const char *schema = tt_ddbc_raw(list, i, 0), *table = tt_ddbc_raw(list, i, 1);
    t->name = tt_ddbc_name(a, schema, table, &t->schema_len);
    tt_buf q = TT_BUF_INIT;
    if (t->schema_len) {
      tt_buf_put_sql_ident(&q, schema);
      tt_buf_putc(&q, '.');
    }
    tt_buf_put_sql_ident(&q, table);
    t->sql_name = tt_arena_strdup(a, tt_buf_cstr(&q));
    tt_buf_free(&q);
    /* the views made over the user's files are the tables the user gave */
    t->is_view = tt_result_cell(list, i, 2)->type == TT_VAL_INT &&
                 tt_result_cell(list, i, 2)->u.i && tt_ddb_of(db)->database_file;
    t->row_count = -1;
    t->row_count_kind = TT_ROWS_EXACT;
    const tt_value *est = tt_result_cell(list, i, 3);
    if (!t->is_view && est->type == TT_VAL_INT && est->u.i >= TT_ROW_COUNT_LIMIT) {
      t->row_count = est->u.i;
      t->row_count_kind = TT_ROWS_STAT1;
    }
    const char *comment = tt_ddbc_raw(list, i, 4);
    t->description = *comment ? tt_arena_strdup(a, comment) : NULL;
    /* describing the database runs none of its macros (ddb_trust.c) */
    const char *root = NULL;
    const char *runs = tt_ddb_trust_relation(tt_ddb_of(db), schema, table, &root);
    if (runs) {
      char *note = root ? tt_xasprintf("not read: reading it runs %s (--trust-functions %s lets "
                                       "it run)",
                                       runs, root)
                        : tt_xasprintf("not read: reading it runs %s", runs);
      t->note = tt_arena_strdup(a, note);
      free(note);
      t->probe = TT_PROBE_NONE;
    }
  }
  tt_ddbc_columns(cat, list, cols);
  tt_ddbc_keys(cat, list, pks, fks);
  tt_ddbc_parquet_counts(db, cat);
  double budget_end = tt_now_ms() + TT_PROBE_BUDGET_S * 1000.0;
  for (size_t i = 0; i < n; i++) {
    if (cat->tables[i].note) continue; /* runs a macro: not read */
    tt_ddbc_stats(db, a, &cat->tables[i]);
    tt_catalog_probe(db, a, &cat->tables[i], cat->tables[i].sql_name, budget_end);
  }
  tt_ddbc_csv_notes(db, cat);
  tt_result_free(list);
  tt_result_free(cols);
  tt_result_free(pks);
  tt_result_free(fks);
  return cat;
}

void tt_ddb_sql_column_values(const tt_table_info *t, const tt_column_info *c, long scan_rows,
                              long max_len, tt_buf *out) {
  static const tt_values_dialect ddb = {"CAST(", " AS VARCHAR)", "strlen", tt_buf_put_sql_ident};
  tt_catalog_values_sql(&ddb, t, c, scan_rows, max_len, out);
}

bool tt_ddb_is_text_type(const char *type) {
  return strcasecmp(type, "VARCHAR") == 0 || strncasecmp(type, "VARCHAR(", 8) == 0 ||
         strncasecmp(type, "ENUM(", 5) == 0 ||
         strcasecmp(type, "TEXT") == 0 || strcasecmp(type, "STRING") == 0;
}
