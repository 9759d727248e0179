/* sqlite.c — the SQLite engine: its table (engine.h), and opening and
 * closing a handle. A SQLite file is checked (it exists, is a regular
 * file, is readable: nothing is ever created) and resolved once, here, so
 * that SQLITE_OPEN_NOFOLLOW guards the file that was checked; CSV files
 * are loaded (or found loaded) as an in-memory image (csv.c) and read
 * under the same guard and limits. */
#include "db/sqlite/csv.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static void tt_sqlite_free(tt_sqlite *s) {
  if (!s) return;
  tt_sqlite_own_forget(s);
  sqlite3_close(s->h);
  tt_csv_release(s->csv);
  free(s->warning);
  free(s->real);
  tt_db_names_forget(s);
  free(s);
}

/* The file or folder exists: its resolved path in s->real. */
static bool tt_sqlite_resolve(tt_sqlite *s, const tt_db_target *t, tt_error *err) {
  s->real = realpath(t->path, NULL);
  if (!s->real) tt_db_set_error(err, TT_ERR_IO, "cannot resolve %s: %s", t->given, strerror(errno));
  return s->real != NULL;
}

/* A CSV file or folder: loaded (or found loaded) in memory. */
static bool tt_sqlite_open_csv(tt_sqlite *s, const tt_db_target *t, tt_error *err) {
  struct stat st;
  if (stat(t->path, &st) != 0) {
    if (errno == ENOENT)
      tt_db_set_error(err, TT_ERR_IO, "no such file: %s (check the path)", t->given);
    else
      tt_db_set_error(err, TT_ERR_IO, "cannot open %s: %s", t->given, strerror(errno));
    return false;
  }
  if (!tt_sqlite_resolve(s, t, err)) return false;
  /* one limit for the whole process, as for files (the image is not
   * SQLite's memory and does not count) */
  tt_db_heap_limit();
  double deadline = tt_now_ms() + s->db->opts.timeout_s * 1000.0; /* for a file that changes */
  s->csv = tt_csv_acquire(t->given, s->real, s->db->opts.csv_header, s->db->opts.csv_types,
                          deadline, false, err);
  return s->csv && tt_db_connect(s, err);
}

static bool tt_sqlite_open(tt_db *db, tt_error *err) {
  const tt_db_target *t = &db->target;
  db->name = t->given; /* a file's name as the user wrote it */
  tt_sqlite *s = tt_xcalloc(1, sizeof *s);
  s->db = db;
  db->state = s;
  bool ok = t->kind == TT_DB_KIND_CSV
                ? tt_sqlite_open_csv(s, t, err)
                : tt_db_check_file(t->path, t->given, err) && tt_sqlite_resolve(s, t, err) &&
                      tt_db_connect(s, err);
  if (!ok) {
    tt_sqlite_free(s);
    db->state = NULL;
  }
  return ok;
}

static void tt_sqlite_close(tt_db *db) { tt_sqlite_free(tt_sqlite_of(db)); }

/* A CSV folder's entries that are not read ("skipped in DIR: ..."), kept
 * with the handle's text until the image changes. */
static const char *tt_sqlite_warning(tt_db *db) {
  tt_sqlite *s = tt_sqlite_of(db);
  const char *notes = s ? tt_csv_notes(s->csv) : NULL;
  if (!notes) return NULL;
  char *now = tt_xasprintf("skipped in %s: %s", db->name, notes);
  if (s->warning && strcmp(s->warning, now) == 0) { /* the same text: the same pointer */
    free(now);
    return s->warning;
  }
  free(s->warning);
  s->warning = now;
  return s->warning;
}

static void tt_sqlite_set_opts(tt_db *db, const tt_db_opts *opts) {
  tt_sqlite *s = tt_sqlite_of(db);
  if (s->h && db->opts.double_quoted_strings != opts->double_quoted_strings)
    sqlite3_db_config(s->h, SQLITE_DBCONFIG_DQS_DML, opts->double_quoted_strings ? 1 : 0,
                      (int *)NULL);
}

const tt_db_engine tt_db_engine_sqlite = {
    .name = "sqlite",
    .facts = {.name = "SQLite", .ident_quote = '"', .fold = TT_DB_FOLD_NONE, .schemas = false},
    .list_tables_sql = "SELECT name FROM sqlite_schema WHERE type = 'table'",
    .open = tt_sqlite_open,
    .close = tt_sqlite_close,
    .set_opts = tt_sqlite_set_opts,
    .query = tt_sqlite_query,
    .cursor_open = tt_sqlite_cursor_open,
    .cursor_next = tt_sqlite_cursor_next,
    .cursor_close = tt_sqlite_cursor_close,
    .catalog_load = tt_sqlite_catalog_load,
    .catalog_stamp = tt_sqlite_catalog_stamp,
    .snapshot_begin = tt_sqlite_snapshot_begin,
    .snapshot_end = tt_sqlite_snapshot_end,
    .snapshot_quick = tt_sqlite_snapshot_quick,
    .sql_column_values = tt_sqlite_sql_column_values,
    .is_text_type = tt_sqlite_is_text_type,
    .warning = tt_sqlite_warning,
};
