/* engines.c — engine selection: the one place that names the engines'
 * tables, and what each kind of target is read by. Adding an engine is a
 * folder of its own (its table in it), a kind in db.h, and a line here. */
#include "db/engine.h"

static const tt_db_engine *const tt_db_engines[] = {
    [TT_DB_KIND_SQLITE] = &tt_db_engine_sqlite,
    [TT_DB_KIND_CSV] = &tt_db_engine_sqlite, /* loaded into an in-memory SQLite database */
    [TT_DB_KIND_POSTGRES] = &tt_db_engine_pg,
    [TT_DB_KIND_MYSQL] = &tt_db_engine_mysql,
    [TT_DB_KIND_DUCKDB] = &tt_db_engine_duckdb,
};

const tt_db_engine *tt_db_engine_for(tt_db_kind kind) {
  if ((size_t)kind < sizeof tt_db_engines / sizeof tt_db_engines[0] && tt_db_engines[kind])
    return tt_db_engines[kind];
  return &tt_db_engine_sqlite;
}

const tt_db_dialect_facts *tt_db_kind_facts(tt_db_kind kind) {
  return &tt_db_engine_for(kind)->facts;
}

const char *tt_db_kind_dialect(tt_db_kind kind) { return tt_db_engine_for(kind)->facts.name; }
