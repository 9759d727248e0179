/* ddb_open.c — a DuckDB database set up for one target and locked down
 * by DuckDB's own settings before any statement of the user's runs.
 *
 * Opening: in memory for data files, or the .duckdb file itself with
 * access_mode=READ_ONLY; from the first moment no extension is installed
 * or loaded by itself, no secret is kept on disk, nothing spills to a
 * temporary folder (temp_directory is empty: nothing is ever written),
 * memory_limit and threads bound what a query takes. Then a view per
 * table over the user's files (read_csv, read_parquet, read_json), and
 * the lock: allowed_paths exactly those files, enable_external_access off
 * (no other file, folder, glob or URL; no ATTACH, COPY or EXPORT to
 * anything), lock_configuration on (no SET can undo any of it). Views are
 * bound when a query reads them, so they read their files under the same
 * lock. A .duckdb file's own views and macros run under it too: they can
 * read no file but the database itself, built-in functions come before
 * the file's macros in the search path, so that none is replaced, and a
 * macro of a schema not trusted never runs (ddb_trust.c). */
#include "db/duckdb/ddb.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* memory_limit: DuckDB's own cap on what a query holds. */
#define TT_DDB_MEMORY_LIMIT "2GB"

bool tt_ddb_exec(tt_ddb *dd, const char *sql, tt_error *err) {
  ddb_result r;
  memset(&r, 0, sizeof r);
  bool ok = dd->api->query(dd->conn, sql, &r) == DDB_SUCCESS;
  if (!ok) {
    const char *m = dd->api->result_error(&r);
    tt_db_set_error(err, TT_ERR_SQL, "DuckDB: %s", m ? m : "failed");
  }
  dd->api->destroy_result(&r);
  return ok;
}

static bool tt_ddb_config(const tt_ddb_api *api, ddb_config cfg, bool read_only, tt_error *err) {
  char threads[16];
  long n = sysconf(_SC_NPROCESSORS_ONLN);
  snprintf(threads, sizeof threads, "%ld", n > 0 ? (n > 16 ? 16 : n) : 1);
  const char *const kv[][2] = {
      {"access_mode", read_only ? "READ_ONLY" : "AUTOMATIC"},
      {"autoinstall_known_extensions", "false"},
      {"autoload_known_extensions", "false"},
      {"allow_persistent_secrets", "false"},
      {"allow_community_extensions", "false"},
      {"allow_unsigned_extensions", "false"},
      {"temp_directory", ""},
      {"memory_limit", TT_DDB_MEMORY_LIMIT},
      {"threads", threads},
  };
  for (size_t i = 0; i < sizeof kv / sizeof kv[0]; i++)
    if (api->set_config(cfg, kv[i][0], kv[i][1]) != DDB_SUCCESS) {
      tt_db_set_error(err, TT_ERR_UNAVAILABLE, "libduckdb does not take the setting %s=%s",
                      kv[i][0], kv[i][1]);
      return false;
    }
  return true;
}

static void tt_ddb_put_file_list(const tt_ddb_view *v, tt_buf *b) {
  tt_buf_putc(b, '[');
  for (size_t i = 0; i < v->nfiles; i++) {
    if (i) tt_buf_putc(b, ',');
    tt_buf_put_sql_string(b, v->files[i]);
  }
  tt_buf_putc(b, ']');
}

/* CREATE VIEW name AS SELECT * FROM read_...([files], options). */
static void tt_ddb_view_sql(const tt_db *db, const tt_ddb_view *v, tt_buf *b) {
  tt_buf_puts(b, "CREATE OR REPLACE VIEW ");
  if (tt_ddb_of(db)->dbname) { /* made again later: built-ins come first in the search path */
    tt_buf_put_sql_ident(b, tt_ddb_of(db)->dbname);
    tt_buf_puts(b, ".main.");
  }
  tt_buf_put_sql_ident(b, v->name);
  tt_buf_puts(b, " AS SELECT ");
  tt_buf_puts(b, v->format == TT_DDB_CSV && v->csv_select ? v->csv_select : "*");
  tt_buf_puts(b, " FROM ");
  switch (v->format) {
  case TT_DDB_PARQUET:
    tt_buf_puts(b, "read_parquet(");
    tt_ddb_put_file_list(v, b);
    if (v->nfiles > 1) tt_buf_puts(b, ", union_by_name=true");
    break;
  case TT_DDB_JSON:
  case TT_DDB_NDJSON:
    tt_buf_puts(b, "read_json(");
    tt_ddb_put_file_list(v, b);
    tt_buf_puts(b, v->format == TT_DDB_NDJSON ? ", format='newline_delimited'" : ", format='auto'");
    if (v->nfiles > 1) tt_buf_puts(b, ", union_by_name=true");
    break;
  case TT_DDB_CSV:
  case TT_DDB_DATABASE:
    tt_buf_puts(b, "read_csv(");
    tt_ddb_put_file_list(v, b);
    tt_ddb_csv_options(v, db->opts.csv_header, b);
    break;
  }
  tt_buf_putc(b, ')');
}

bool tt_ddb_view_make(tt_db *db, tt_ddb *dd, const tt_ddb_view *v, tt_error *err) {
  tt_buf b = TT_BUF_INIT;
  tt_ddb_view_sql(db, v, &b);
  bool ok = tt_ddb_exec(dd, tt_buf_cstr(&b), err);
  tt_buf_free(&b);
  return ok;
}

char *tt_ddb_scalar_text(tt_ddb *dd, const char *sql) {
  const tt_ddb_api *api = dd->api;
  ddb_result r;
  memset(&r, 0, sizeof r);
  char *out = NULL;
  if (api->query(dd->conn, sql, &r) == DDB_SUCCESS) {
    ddb_data_chunk chunk = api->fetch_chunk(r);
    if (chunk && api->data_chunk_get_size(chunk) > 0) {
      ddb_vector v = api->data_chunk_get_vector(chunk, 0);
      const uint64_t *valid = api->vector_get_validity(v);
      const ddb_string *s = api->vector_get_data(v);
      if (s && (!valid || (valid[0] & 1))) {
        uint32_t len = s->value.inlined.length;
        out = tt_xstrndup(len <= 12 ? s->value.inlined.inlined : s->value.pointer.ptr, len);
      }
    }
    if (chunk) api->destroy_data_chunk(&chunk);
  }
  api->destroy_result(&r);
  return out;
}

/* Built-in functions before the database's own: a macro of a .duckdb
 * file named like one (lower, count, current_database) never replaces
 * it, for tabletalk's queries or the model's. The file's own macros (new
 * names) run only when trusted (ddb_trust.c). */
static bool tt_ddb_builtins_first(tt_ddb *dd, tt_error *err) {
  dd->dbname = tt_ddb_scalar_text(dd, "SELECT system.main.current_database()");
  if (!dd->dbname) {
    tt_db_set_error(err, TT_ERR_UNAVAILABLE, "DuckDB does not name its database");
    return false;
  }
  tt_buf b = TT_BUF_INIT, path = TT_BUF_INIT;
  tt_buf_put_sql_string(&b, dd->dbname);
  dd->dbname_sql = tt_buf_detach(&b);
  tt_buf_puts(&path, "system.main,");
  tt_buf_put_sql_ident(&path, dd->dbname);
  tt_buf_puts(&path, ".main");
  tt_buf_puts(&b, "SET search_path = ");
  tt_buf_put_sql_string(&b, tt_buf_cstr(&path));
  bool ok = tt_ddb_exec(dd, tt_buf_cstr(&b), err);
  tt_buf_free(&b);
  tt_buf_free(&path);
  return ok;
}

/* allowed_paths exactly the files given, then no other access, then no
 * more changes. */
static bool tt_ddb_lock(tt_ddb *dd, tt_error *err) {
  tt_buf b = TT_BUF_INIT;
  tt_buf_puts(&b, "SET allowed_paths=[");
  for (size_t i = 0; i < dd->nfiles; i++) {
    if (i) tt_buf_putc(&b, ',');
    tt_buf_put_sql_string(&b, dd->files[i]);
  }
  tt_buf_puts(&b, "]");
  bool ok = tt_ddb_exec(dd, tt_buf_cstr(&b), err) &&
            tt_ddb_exec(dd, "SET enable_external_access=false", err) &&
            tt_ddb_exec(dd, "SET lock_configuration=true", err);
  tt_buf_free(&b);
  return ok;
}

/* Every CSV view typed by the shared sniffer, under --csv-types; an
 * override that names no column is an error, as under SQLite. */
static bool tt_ddb_csv_type_views(tt_db *db, tt_ddb *dd, tt_error *err) {
  tt_csv_overrides ov;
  if (!tt_csv_overrides_parse(db->opts.csv_types, &ov, err)) return false;
  bool any = false;
  for (size_t i = 0; i < dd->nviews; i++)
    if (dd->views[i].format == TT_DDB_CSV) {
      tt_ddb_csv_sniff(db, dd, &dd->views[i], &ov);
      any = true;
    }
  const tt_csv_override *unused = any ? tt_csv_overrides_unused(&ov) : NULL;
  if (unused) {
    tt_db_set_error(err, TT_ERR_CONFIG, "--csv-types names %s%s%s, but %s has no such %s",
                    unused->table ? unused->table : "", unused->table ? "." : "", unused->column,
                    db->name, unused->table ? "table and column" : "column");
    tt_error_hint(err, "check the name: `tabletalk schema %s` lists the tables and columns",
                  db->name);
  }
  tt_csv_overrides_free(&ov);
  return unused == NULL;
}

bool tt_ddb_setup(tt_db *db, tt_ddb *dd, tt_error *err) {
  const tt_ddb_api *api = dd->api;
  if (!tt_ddb_files_plan(dd, db->target.path, err)) return false;
  ddb_config cfg = NULL;
  if (api->create_config(&cfg) != DDB_SUCCESS) {
    tt_db_set_error(err, TT_ERR_UNAVAILABLE, "libduckdb could not make a configuration");
    return false;
  }
  bool ok = tt_ddb_config(api, cfg, dd->database_file, err);
  char *why = NULL;
  if (ok && api->open_ext(dd->database_file ? dd->files[0] : NULL, &dd->dbh, cfg, &why) !=
                DDB_SUCCESS) {
    tt_db_set_error(err, TT_ERR_IO, "cannot open %s: %s", db->name, why ? why : "DuckDB failed");
    ok = false;
  }
  if (why) api->free(why);
  api->destroy_config(&cfg);
  if (!ok) return false;
  if (api->connect(dd->dbh, &dd->conn) != DDB_SUCCESS) {
    tt_db_set_error(err, TT_ERR_UNAVAILABLE, "cannot connect to DuckDB's database");
    return false;
  }
  if (!tt_ddb_csv_type_views(db, dd, err)) return false;
  for (size_t i = 0; i < dd->nviews; i++)
    if (!tt_ddb_view_make(db, dd, &dd->views[i], err)) {
      tt_error_prefix(err, "%s: ", db->name);
      return false;
    }
  snprintf(dd->dialect, sizeof dd->dialect, "DuckDB %s", api->library_version());
  if (dd->dialect[7] == 'v') memmove(dd->dialect + 7, dd->dialect + 8, strlen(dd->dialect + 8) + 1);
  return tt_ddb_builtins_first(dd, err) && tt_ddb_lock(dd, err);
}

void tt_ddb_shut(tt_ddb *dd) {
  if (!dd) return;
  if (dd->conn) dd->api->disconnect(&dd->conn);
  if (dd->dbh) dd->api->close(&dd->dbh);
  tt_ddb_files_free(dd);
  free(dd->warning);
  free(dd->dbname);
  free(dd->dbname_sql);
}
