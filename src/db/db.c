/* db.c — the public entry points of db.h that every engine shares:
 * options and their defaults, opening a target through the engine that
 * reads it (engines.c), and handing each call to that engine's table.
 * Nothing here knows which engine it talks to. Every error an engine
 * returns has the target's secrets masked on its way out
 * (tt_db_target_scrub, also in cursor.c and catalog.c). */
#include "db/engine.h"

#include <stdlib.h>

tt_db_opts tt_db_default_opts(void) {
  return (tt_db_opts){
      .immutable = false,
      .timeout_s = 5.0,
      .max_rows = 200,
      .max_bytes = 1000000,
      .double_quoted_strings = true,
  };
}

tt_db *tt_db_open_target(const tt_db_target *t, const tt_db_opts *opts, tt_error *err) {
  tt_db *db = tt_xcalloc(1, sizeof *db);
  db->engine = tt_db_engine_for(t->kind);
  tt_db_target_copy(&db->target, t);
  db->target.engine = db->engine->name;
  db->name = db->target.shown;
  db->opts = opts ? *opts : tt_db_default_opts();
  bool ok = db->engine->open(db, err);
  if (!ok && t->engine_auto && err->kind == TT_ERR_UNAVAILABLE) {
    /* a large CSV file without libduckdb: read as any CSV file is */
    db->target.kind = TT_DB_KIND_CSV;
    db->target.engine_auto = false;
    db->engine = tt_db_engine_for(TT_DB_KIND_CSV);
    db->target.engine = db->engine->name;
    ok = db->engine->open(db, err);
  }
  if (!ok) {
    tt_db_target_scrub(&db->target, err);
    tt_db_target_free(&db->target);
    free(db);
    return NULL;
  }
  return db;
}

tt_db *tt_db_open(const char *path, const tt_db_opts *opts, tt_error *err) {
  tt_db_target t;
  if (!tt_db_target_parse(path, &t, err)) return NULL;
  tt_db *db = tt_db_open_target(&t, opts, err);
  tt_db_target_free(&t);
  return db;
}

void tt_db_close(tt_db *db) {
  if (!db) return;
  db->engine->close(db);
  tt_db_target_free(&db->target);
  free(db);
}

const tt_db_target *tt_db_get_target(const tt_db *db) { return &db->target; }

const char *tt_db_warning(tt_db *db) {
  return db && db->engine->warning ? db->engine->warning(db) : NULL;
}

const char *tt_db_path(const tt_db *db) { return db->name; }

const tt_db_opts *tt_db_get_opts(const tt_db *db) { return &db->opts; }

const char *tt_db_dialect(const tt_db *db) {
  return db->engine->dialect ? db->engine->dialect(db) : db->engine->facts.name;
}

const tt_db_dialect_facts *tt_db_facts(const tt_db *db) { return &db->engine->facts; }

void tt_db_set_opts(tt_db *db, const tt_db_opts *opts) {
  if (db->engine->set_opts) db->engine->set_opts(db, opts);
  db->opts = *opts;
}

tt_result *tt_db_query(tt_db *db, const char *sql, size_t len, tt_error *err) {
  tt_result *r = db->engine->query(db, sql, len, err);
  if (!r) tt_db_target_scrub(&db->target, err);
  return r;
}

tt_result *tt_db_query_opts(tt_db *db, const char *sql, size_t len, const tt_db_opts *opts,
                            tt_error *err) {
  db->query_opts = opts;
  tt_result *r = db->engine->query(db, sql, len, err);
  db->query_opts = NULL;
  if (!r) tt_db_target_scrub(&db->target, err);
  return r;
}

bool tt_db_snapshot_begin(tt_db *db, uint64_t *version, tt_error *err) {
  bool ok = db->engine->snapshot_begin(db, version, err);
  if (!ok) tt_db_target_scrub(&db->target, err);
  return ok;
}

bool tt_db_snapshot_quick(tt_db *db, uint64_t *version) {
  return db->engine->snapshot_quick && db->engine->snapshot_quick(db, version);
}

void tt_db_snapshot_end(tt_db *db) { db->engine->snapshot_end(db); }

void tt_db_sql_column_values(const tt_db *db, const tt_table_info *t, const tt_column_info *c,
                             long scan_rows, long max_len, tt_buf *out) {
  db->engine->sql_column_values(t, c, scan_rows, max_len, out);
}
