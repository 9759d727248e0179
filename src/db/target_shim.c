/* target_shim.c — TEMPORARY: the database target on top of today's string
 * checks, until the engine table lands (db-engines branch replaces it). */
#include "db/db.h"

#include <stdlib.h>
#include <string.h>

bool tt_db_target_parse(const char *given, tt_db_target *out, tt_error *err) {
  memset(out, 0, sizeof *out);
  if (!given || !*given) {
    tt_error_set(err, TT_ERR_CONFIG, "no database was given");
    tt_error_hint(err, "name a SQLite file, a .csv or .tsv file or folder, or a postgresql:// URI");
    return false;
  }
  out->given = tt_xstrdup(given);
  if (tt_db_path_is_uri(given)) {
    out->kind = TT_DB_KIND_POSTGRES;
    out->engine = "postgres";
    out->path = tt_xstrdup(given);
    out->shown = tt_pg_redact_uri(given);
    return true;
  }
  out->kind = tt_db_path_is_csv(given) ? TT_DB_KIND_CSV : TT_DB_KIND_SQLITE;
  out->engine = "sqlite";
  char *real = realpath(given, NULL);
  out->path = real ? real : tt_xstrdup(given);
  out->shown = tt_xstrdup(out->path);
  return true;
}

void tt_db_target_free(tt_db_target *t) {
  if (!t) return;
  free(t->given);
  free(t->path);
  free(t->shown);
  memset(t, 0, sizeof *t);
}

tt_db *tt_db_open_target(const tt_db_target *t, const tt_db_opts *opts, tt_error *err) {
  return tt_db_open(t->kind == TT_DB_KIND_POSTGRES ? t->given : t->path, opts, err);
}

const char *tt_db_kind_dialect(tt_db_kind kind) {
  return kind == TT_DB_KIND_POSTGRES ? "PostgreSQL" : "SQLite";
}
