/* engine.h — the engine table: everything that differs between the
 * engines behind db.h, as a struct of function pointers and facts that one
 * file of each engine's folder fills in (as SQLite's VFS does with
 * sqlite3_io_methods). The shared files of src/db/ reach an engine only
 * through its table, and only engines.c names the tables; an engine
 * includes db_internal.h, this file and its own folder's header, never
 * another engine's. docs/contributing/db-engines.md says how to add one.
 *
 * Cancelling has no entry: every engine polls opts.cancel (the limits of
 * the query running now, tt_db_limits) while a statement runs and stops
 * within milliseconds. */
#ifndef TT_DB_ENGINE_H
#define TT_DB_ENGINE_H

#include "db/db_internal.h"

/* The part of an engine's cursor that the shared one (cursor.c) reads:
 * every engine's cursor struct starts with it. */
typedef struct tt_engine_cursor {
  size_t ncols;
  const char **names;     /* column names as shown (tt_db_shown_name) */
  const char **decltypes; /* declared types, "" when none */
  double away_ms;         /* set by the shared cursor before each next: the
                           * time the caller spent since the last row (or
                           * the open), which is not the query's */
} tt_engine_cursor;

struct tt_db_engine {
  const char *name;          /* "sqlite", "postgres": tt_db_target.engine */
  tt_db_dialect_facts facts; /* the dialect's name as the prompt says it, quoting... */
  const char *list_tables_sql; /* a query listing every table (tt_catalog) */

  /* Opens db->target under db->opts (both set): sets db->state and
   * db->name; false with err, having freed whatever it made. */
  bool (*open)(tt_db *db, tt_error *err);
  /* Frees db->state (the shared fields are the caller's). */
  void (*close)(tt_db *db);
  /* tt_db_warning (owned by db->state; NULL entry or result: nothing):
   * what the user should know about what is read and how (a CSV folder's
   * entries left out, a PostgreSQL role that could write). */
  const char *(*warning)(tt_db *db);
  /* The dialect as the prompt names it for this handle (the server and its
   * version); NULL: facts.name. */
  const char *(*dialect)(const tt_db *db);
  /* db->opts is about to become *opts; NULL: nothing to do. */
  void (*set_opts)(tt_db *db, const tt_db_opts *opts);

  /* One guarded statement, whole, under tt_db_limits(db) (tt_result_builder
   * applies the caps); NULL with err. */
  tt_result *(*query)(tt_db *db, const char *sql, size_t len, tt_error *err);

  /* One guarded statement's rows one at a time, under the handle's time
   * limit (db->opts.timeout_s), counted only while the engine works; the
   * shared cursor applies the row and byte caps. NULL with err. */
  tt_engine_cursor *(*cursor_open)(tt_db *db, const char *sql, size_t len, tt_error *err);
  /* 1: a row (values valid until the next call) and its weight as
   * max_bytes counts it; 0: the end; -1: err. */
  int (*cursor_next)(tt_engine_cursor *c, const tt_value **row, size_t *row_bytes,
                     tt_error *err);
  void (*cursor_close)(tt_engine_cursor *c);

  /* Tables, columns, keys, descriptions; each table whose rows may be read
   * handed to tt_catalog_probe (which the shared code reads later, under
   * its bounds). list_tables_sql is set by the caller. */
  tt_catalog *(*catalog_load)(tt_db *db, tt_error *err);

  /* What proves the catalog unchanged (tt_db_catalog_stamp): out's
   * identity (without the shared prefix tt_db_catalog_stamp adds), schema
   * and data, all allocated; false with err. NULL: the engine proves
   * nothing and its catalog is never cached. */
  bool (*catalog_stamp)(tt_db *db, tt_catalog_stamp *out, tt_error *err);

  /* A read snapshot over several queries and its data version
   * (tt_db_snapshot_begin); snapshot_end leaves it. */
  bool (*snapshot_begin)(tt_db *db, uint64_t *version, tt_error *err);
  void (*snapshot_end)(tt_db *db);
  /* The same when it can be had at once (tt_db_snapshot_quick); NULL: never. */
  bool (*snapshot_quick)(tt_db *db, uint64_t *version);

  /* SQL (one column, v) reading the distinct text values of column c of t
   * among its first scan_rows rows, at most max_len bytes each. */
  void (*sql_column_values)(const tt_table_info *t, const tt_column_info *c, long scan_rows,
                            long max_len, tt_buf *out);
  /* Whether a column of this declared type holds text (its frequent values
   * are read for the catalog). */
  bool (*is_text_type)(const char *decltype);
};

/* The tables, each defined in its engine's folder (sqlite/sqlite.c,
 * pg/pg.c, mysql/mysql.c, duckdb/duckdb.c). Only engines.c names them. */
extern const tt_db_engine tt_db_engine_sqlite;
extern const tt_db_engine tt_db_engine_pg;
extern const tt_db_engine tt_db_engine_mysql;
extern const tt_db_engine tt_db_engine_duckdb;

/* engines.c: the engine that reads targets of this kind. */
const tt_db_engine *tt_db_engine_for(tt_db_kind kind);

/* The whole result of an engine cursor just opened on db (ec), under db's
 * row and byte caps, then closed: for engines whose whole results are their
 * cursor read to the end (a server's rows are never repeatable: another
 * session may change them). t0: when the query began. NULL with err. */
tt_result *tt_engine_result(tt_db *db, tt_engine_cursor *ec, double t0, tt_error *err);

#endif
