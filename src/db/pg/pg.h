/* pg.h — the PostgreSQL engine's own header, seen only by the files of
 * src/db/pg/ (and the units that test them): what pg.c, the engine's table
 * and connection, takes from pg_catalog.c. The parse-level guard has its
 * own header (pg_guard.h). */
#ifndef TT_DB_PG_H
#define TT_DB_PG_H

#include <libpq-fe.h>

#include "db/engine.h"
#include "db/pg/pg_trust.h"

/* The engine's state: db->state of a handle it opened (pg.c makes and
 * frees it). The URI, password and all, is the target's path, only ever
 * passed to libpq. */
typedef struct tt_pg {
  PGconn *conn;        /* NULL or failed: the next query connects again */
  tt_pg_trust *trust;  /* the catalog check's verdicts on this connection */
  bool warned;         /* the role was asked about (tt_db_warning) */
  char *warning;       /* ... and what it said, or NULL */
} tt_pg;

static inline tt_pg *tt_pg_of(const tt_db *db) { return (tt_pg *)db->state; }

/* pg_catalog.c: the tables of every schema --schemas keeps, from
 * pg_catalog, with samples and counts from the shared probes. */
tt_catalog *tt_pg_catalog_load(tt_db *db, tt_error *err);
/* Whether --schemas (opts.schemas, NULL: all) keeps the schema named nsp. */
bool tt_pg_schema_wanted(const char *list, const char *nsp);
/* SQL reading a column's distinct values as text (engine.h). */
void tt_pg_sql_column_values(const tt_table_info *t, const tt_column_info *c, long scan_rows,
                             long max_len, tt_buf *out);
/* pg_stamp.c: what proves the catalog unchanged (engine.h, catalog_stamp). */
bool tt_pg_catalog_stamp(tt_db *db, tt_catalog_stamp *out, tt_error *err);
/* Whether a column of this type (as format_type names it) holds text. */
bool tt_pg_is_text_type(const char *decltype);


#endif
