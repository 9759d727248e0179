/* duckdb.c — the DuckDB engine behind db.h, through libduckdb loaded on
 * first use (ddb_api.c): its table (engine.h), opening a target (a
 * Parquet, JSON, CSV or .duckdb file, or a glob of data files) into a
 * database locked down by DuckDB's own settings (ddb_open.c), whole
 * results and cursors over one checked SELECT (ddb_run.c), and the
 * catalog with DuckDB's own statistics (ddb_catalog.c). */
#include "db/duckdb/ddb.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static void tt_ddb_free_state(tt_ddb *dd) {
  if (!dd) return;
  tt_ddb_trust_free(dd->trust);
  tt_ddb_shut(dd);
  free(dd);
}

static bool tt_ddb_open(tt_db *db, tt_error *err) {
  const tt_ddb_api *api = tt_ddb_api_get(err);
  if (!api) {
    tt_error_prefix(err, "%s: ", db->name);
    return false;
  }
  tt_ddb *dd = tt_xcalloc(1, sizeof *dd);
  dd->api = api;
  db->state = dd;
  /* locked down, then the file's macros not trusted listed (ddb_trust.c) */
  if (tt_ddb_setup(db, dd, err) && tt_ddb_trust_load(db, dd, err)) return true;
  tt_ddb_free_state(dd);
  db->state = NULL;
  return false;
}

static void tt_ddb_close(tt_db *db) { tt_ddb_free_state(tt_ddb_of(db)); }

static const char *tt_ddb_warning(tt_db *db) {
  tt_ddb *dd = tt_ddb_of(db);
  return dd ? dd->warning : NULL;
}

static const char *tt_ddb_dialect_of(const tt_db *db) {
  const tt_ddb *dd = tt_ddb_of(db);
  return dd && dd->dialect[0] ? dd->dialect : "DuckDB";
}

/* The files' sizes, times and inodes: what changes when any is rewritten
 * (DuckDB reads them afresh at every query). */
static void tt_ddb_files_stamp(const tt_ddb *dd, tt_buf *b) {
  for (size_t i = 0; i < dd->nfiles; i++) {
    struct stat st;
    if (stat(dd->files[i], &st) != 0) {
      tt_buf_printf(b, "%s:gone;", dd->files[i]);
      continue;
    }
    tt_buf_printf(b, "%s:%llu:%lld.%09ld:%llu;", dd->files[i], (unsigned long long)st.st_size,
                  (long long)st.st_mtim.tv_sec, st.st_mtim.tv_nsec,
                  (unsigned long long)st.st_ino);
  }
}

static bool tt_ddb_snapshot_begin(tt_db *db, uint64_t *version, tt_error *err) {
  (void)err;
  tt_buf b = TT_BUF_INIT;
  tt_ddb_files_stamp(tt_ddb_of(db), &b);
  *version = tt_fnv1a64(TT_FNV1A64_INIT, b.data ? b.data : "", b.len);
  tt_buf_free(&b);
  return true;
}

static void tt_ddb_snapshot_end(tt_db *db) { (void)db; }

static bool tt_ddb_catalog_stamp(tt_db *db, tt_catalog_stamp *out, tt_error *err) {
  (void)err;
  const tt_ddb *dd = tt_ddb_of(db);
  tt_buf id = TT_BUF_INIT, schema = TT_BUF_INIT;
  /* the engine's reading rules are part of what the cards say (v2: CSV
   * columns holding text past the sample read as text; v3: built-in
   * functions before a file's macros) */
  tt_buf_printf(&id, "duckdb-v3:%s:header=%d", db->target.path, (int)db->opts.csv_header);
  tt_ddb_files_stamp(dd, &schema);
  out->identity = tt_buf_detach(&id);
  out->schema = tt_buf_detach(&schema);
  out->data = tt_xstrdup("");
  if (!out->schema) out->schema = tt_xstrdup("");
  return true;
}

static tt_result *tt_ddb_query(tt_db *db, const char *sql, size_t len, tt_error *err) {
  double t0 = tt_now_ms();
  tt_ddb_run *run = tt_ddb_run_open(db, sql, len, tt_db_limits(db)->timeout_s, err);
  return run ? tt_engine_result(db, tt_ddb_run_base(run), t0, err) : NULL;
}

static tt_engine_cursor *tt_ddb_cursor_open(tt_db *db, const char *sql, size_t len,
                                            tt_error *err) {
  tt_ddb_run *run = tt_ddb_run_open(db, sql, len, db->opts.timeout_s, err);
  return run ? tt_ddb_run_base(run) : NULL;
}

static int tt_ddb_cursor_next(tt_engine_cursor *c, const tt_value **row, size_t *row_bytes,
                              tt_error *err) {
  return tt_ddb_run_next((tt_ddb_run *)c, row, row_bytes, err);
}

static void tt_ddb_cursor_close(tt_engine_cursor *c) { tt_ddb_run_close((tt_ddb_run *)c); }

const tt_db_engine tt_db_engine_duckdb = {
    .name = "duckdb",
    .facts = {.name = "DuckDB", .ident_quote = '"', .fold = TT_DB_FOLD_NONE, .schemas = false},
    .list_tables_sql = "SELECT table_name FROM duckdb_tables() WHERE NOT internal UNION ALL "
                       "SELECT view_name FROM duckdb_views() WHERE NOT internal ORDER BY 1",
    .open = tt_ddb_open,
    .close = tt_ddb_close,
    .warning = tt_ddb_warning,
    .dialect = tt_ddb_dialect_of,
    .set_opts = NULL,
    .query = tt_ddb_query,
    .cursor_open = tt_ddb_cursor_open,
    .cursor_next = tt_ddb_cursor_next,
    .cursor_close = tt_ddb_cursor_close,
    .catalog_load = tt_ddb_catalog_load,
    .catalog_stamp = tt_ddb_catalog_stamp,
    .snapshot_begin = tt_ddb_snapshot_begin,
    .snapshot_end = tt_ddb_snapshot_end,
    .sql_column_values = tt_ddb_sql_column_values,
    .is_text_type = tt_ddb_is_text_type,
};
