/* my_catalog.c — what a MySQL/MariaDB database holds, read from
 * information_schema into the same tt_catalog as the other engines': the
 * tables and views of the connection's database (names as stored: with
 * lower_case_table_names=0 they are case-sensitive), their columns with
 * types as declared (COLUMN_TYPE), primary and foreign keys, comments as
 * descriptions, and row counts: counted (bounded) under
 * TT_ROW_COUNT_LIMIT rows, above it the TABLE_ROWS estimate, marked as
 * one. Samples and frequent values come from the shared probes
 * (../catalog.c), and only from what runs nothing of the owner's: a view,
 * or a table with generated columns, is sampled only when its definition
 * passes the same check a query gets (my_check.c). */
#include "db/mysql/mysql.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

static tt_result *tt_myc_query(tt_db *db, const char *sql, tt_error *err) {
  return tt_catalog_query(db, sql, 5.0, 1000000, 64L << 20, err);
}

static const char *tt_myc_text(tt_arena *a, const tt_result *r, size_t row, size_t col) {
  const tt_value *v = tt_result_cell(r, row, col);
  if (v->type == TT_VAL_NULL) return NULL;
  tt_buf b = TT_BUF_INIT;
  tt_value_to_text(&b, v);
  const char *s = tt_db_shown_name(a, tt_buf_cstr(&b));
  tt_buf_free(&b);
  return s;
}

static int64_t tt_myc_int(const tt_result *r, size_t row, size_t col) {
  const tt_value *v = tt_result_cell(r, row, col);
  if (v->type == TT_VAL_INT) return v->u.i;
  if (v->type == TT_VAL_REAL) return (int64_t)v->u.r;
  if (v->type == TT_VAL_TEXT) return strtoll(v->u.s, NULL, 10);
  return 0;
}

static const char *tt_myc_raw(const tt_result *r, size_t row, size_t col) {
  const tt_value *v = tt_result_cell(r, row, col);
  return v->type == TT_VAL_TEXT ? v->u.s : "";
}

static long tt_myc_find(const tt_result *list, const char *name) {
  for (size_t i = 0; i < list->nrows; i++)
    if (strcmp(tt_myc_raw(list, i, 0), name) == 0) return (long)i;
  return -1;
}

/* Whether table i of the list needs the check before it is sampled: a
 * view, or a table with a generated column. */
static bool tt_myc_needs_check(const tt_result *list, size_t i, const tt_result *gen) {
  if (strcmp(tt_myc_raw(list, i, 1), "VIEW") == 0) return true;
  for (size_t g = 0; g < gen->nrows; g++)
    if (strcmp(tt_myc_raw(gen, g, 0), tt_myc_raw(list, i, 0)) == 0) return true;
  return false;
}

static void tt_myc_columns(tt_catalog *cat, const tt_result *list, const tt_result *cols,
                           const tt_result *pks) {
  tt_arena *a = cat->arena;
  for (size_t r = 0, i; r < cols->nrows; r = i) {
    const char *tname = tt_myc_raw(cols, r, 0);
    for (i = r; i < cols->nrows && strcmp(tt_myc_raw(cols, i, 0), tname) == 0; i++) {}
    long k = tt_myc_find(list, tname);
    if (k < 0) continue;
    tt_table_info *t = &cat->tables[k];
    t->ncols = i - r;
    t->cols = tt_arena_alloc(a, sizeof(tt_column_info) * t->ncols);
    memset(t->cols, 0, sizeof(tt_column_info) * t->ncols);
    for (size_t j = r; j < i; j++) {
      tt_column_info *c = &t->cols[j - r];
      c->name = tt_myc_text(a, cols, j, 1);
      if (!c->name) c->name = "";
      c->type = tt_myc_text(a, cols, j, 2);
      if (!c->type) c->type = "";
      c->not_null = strcmp(tt_myc_raw(cols, j, 3), "NO") == 0;
      c->default_value = tt_myc_text(a, cols, j, 4);
      /* MariaDB writes "no default" of a nullable column as the word NULL
       * (a string default comes quoted) */
      if (c->default_value && strcmp(c->default_value, "NULL") == 0) c->default_value = NULL;
      const char *comment = tt_myc_text(a, cols, j, 5);
      c->description = comment && *comment ? comment : NULL;
      for (size_t p = 0; p < pks->nrows; p++)
        if (strcmp(tt_myc_raw(pks, p, 0), tname) == 0 &&
            strcmp(tt_myc_raw(pks, p, 1), tt_myc_raw(cols, j, 1)) == 0)
          c->pk = (int)tt_myc_int(pks, p, 2);
    }
  }
}

static void tt_myc_fks(tt_catalog *cat, const tt_result *list, const tt_result *fks) {
  tt_arena *a = cat->arena;
  for (size_t r = 0, i; r < fks->nrows; r = i) {
    const char *tname = tt_myc_raw(fks, r, 0);
    for (i = r; i < fks->nrows && strcmp(tt_myc_raw(fks, i, 0), tname) == 0; i++) {}
    long k = tt_myc_find(list, tname);
    if (k < 0) continue;
    tt_table_info *t = &cat->tables[k];
    t->fks = tt_arena_alloc(a, sizeof(tt_fk_info) * (i - r));
    t->nfks = 0;
    for (size_t j = r; j < i; j++) {
      long target = tt_myc_find(list, tt_myc_raw(fks, j, 2));
      if (target < 0) continue; /* a table of another database */
      tt_fk_info *f = &t->fks[t->nfks++];
      *f = (tt_fk_info){0};
      f->from = tt_myc_text(a, fks, j, 1);
      f->table = cat->tables[target].name;
      f->to = tt_myc_text(a, fks, j, 3);
      f->pk_seq = (int)tt_myc_int(fks, j, 4) - 1;
    }
  }
}

tt_catalog *tt_my_catalog_load(tt_db *db, tt_error *err) {
  tt_result *list = tt_myc_query(
      db,
      "SELECT TABLE_NAME, TABLE_TYPE, TABLE_ROWS, TABLE_COMMENT FROM information_schema.TABLES "
      "WHERE TABLE_SCHEMA = DATABASE() ORDER BY BINARY TABLE_NAME",
      err);
  tt_result *cols =
      list ? tt_myc_query(db,
                          "SELECT TABLE_NAME, COLUMN_NAME, COLUMN_TYPE, IS_NULLABLE, "
                          "COLUMN_DEFAULT, COLUMN_COMMENT FROM information_schema.COLUMNS WHERE "
                          "TABLE_SCHEMA = DATABASE() ORDER BY BINARY TABLE_NAME, ORDINAL_POSITION",
                          err)
           : NULL;
  tt_result *pks = cols ? tt_myc_query(db,
                                       "SELECT TABLE_NAME, COLUMN_NAME, ORDINAL_POSITION FROM "
                                       "information_schema.KEY_COLUMN_USAGE WHERE TABLE_SCHEMA "
                                       "= DATABASE() AND CONSTRAINT_NAME = 'PRIMARY'",
                                       err)
                        : NULL;
  tt_result *fks =
      pks ? tt_myc_query(db,
                         "SELECT TABLE_NAME, COLUMN_NAME, REFERENCED_TABLE_NAME, "
                         "REFERENCED_COLUMN_NAME, ORDINAL_POSITION FROM "
                         "information_schema.KEY_COLUMN_USAGE WHERE TABLE_SCHEMA = DATABASE() "
                         "AND REFERENCED_TABLE_SCHEMA = DATABASE() AND REFERENCED_TABLE_NAME "
                         "IS NOT NULL ORDER BY BINARY TABLE_NAME, CONSTRAINT_NAME, "
                         "ORDINAL_POSITION",
                         err)
          : NULL;
  tt_result *gen = fks ? tt_myc_query(db,
                                      "SELECT DISTINCT TABLE_NAME FROM information_schema.COLUMNS "
                                      "WHERE TABLE_SCHEMA = DATABASE() AND GENERATION_EXPRESSION "
                                      "IS NOT NULL AND GENERATION_EXPRESSION <> ''",
                                      err)
                       : NULL;
  if (!gen) {
    tt_result_free(list);
    tt_result_free(cols);
    tt_result_free(pks);
    tt_result_free(fks);
    return NULL;
  }
  size_t n = list->nrows;
  tt_catalog *cat = tt_xcalloc(1, sizeof *cat);
  tt_arena *a = cat->arena = tt_arena_new();
  cat->ntables = n;
  cat->tables = tt_arena_alloc(a, sizeof(tt_table_info) * (n ? n : 1));
  memset(cat->tables, 0, sizeof(tt_table_info) * (n ? n : 1));
  for (size_t i = 0; i < n; i++) {
    tt_table_info *t = &cat->tables[i];
    t->name = tt_myc_text(a, list, i, 0);
    if (!t->name) t->name = "";
    tt_buf from = TT_BUF_INIT;
    tt_my_put_ident(&from, tt_myc_raw(list, i, 0));
    t->sql_name = tt_arena_strdup(a, tt_buf_cstr(&from));
    tt_buf_free(&from);
    t->is_view = strcmp(tt_myc_raw(list, i, 1), "VIEW") == 0;
    const tt_value *est = tt_result_cell(list, i, 2);
    /* counted when small (the probe stops after TT_ROW_COUNT_LIMIT rows);
     * a big table keeps the server's estimate, marked as one */
    t->row_count = -1;
    t->row_count_kind = TT_ROWS_EXACT;
    if (!t->is_view && est->type != TT_VAL_NULL && tt_myc_int(list, i, 2) >= TT_ROW_COUNT_LIMIT) {
      t->row_count = tt_myc_int(list, i, 2);
      t->row_count_kind = TT_ROWS_STAT1;
    }
    const char *comment = tt_myc_text(a, list, i, 3);
    t->description = comment && *comment && !t->is_view ? comment : NULL;
  }
  tt_myc_columns(cat, list, cols, pks);
  tt_myc_fks(cat, list, fks);
  double budget_end = tt_now_ms() + TT_PROBE_BUDGET_S * 1000.0;
  const char *dbname = tt_my_of(db)->ci.database;
  for (size_t i = 0; i < n; i++) {
    tt_table_info *t = &cat->tables[i];
    if (tt_myc_needs_check(list, i, gen)) {
      tt_error why;
      if (!tt_my_check_view(db, dbname, tt_myc_raw(list, i, 0), &why)) {
        t->note = tt_arena_strdup(a, t->is_view
                                         ? "no example values: the view calls what tabletalk "
                                           "does not run (see tabletalk sql on it for why)"
                                         : "no example values: a generated column calls what "
                                           "tabletalk does not run");
        if (!t->is_view) t->row_count = -1;
        continue;
      }
    }
    tt_catalog_probe(db, a, t, t->sql_name, budget_end);
  }
  tt_result_free(list);
  tt_result_free(cols);
  tt_result_free(pks);
  tt_result_free(fks);
  tt_result_free(gen);
  return cat;
}

void tt_my_sql_column_values(const tt_table_info *t, const tt_column_info *c, long scan_rows,
                             long max_len, tt_buf *out) {
  static const tt_values_dialect my = {"CAST(", " AS CHAR)", "octet_length", tt_my_put_ident};
  tt_catalog_values_sql(&my, t, c, scan_rows, max_len, out);
}

bool tt_my_is_text_type(const char *type) {
  static const char *const prefixes[] = {"char", "varchar", "tinytext", "text", "mediumtext",
                                         "longtext", "enum", "set"};
  for (size_t i = 0; i < sizeof prefixes / sizeof prefixes[0]; i++) {
    size_t n = strlen(prefixes[i]);
    if (strncasecmp(type, prefixes[i], n) == 0 &&
        (type[n] == '\0' || type[n] == '(' || type[n] == ' '))
      return true;
  }
  return false;
}
