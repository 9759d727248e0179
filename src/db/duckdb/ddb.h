/* ddb.h — the DuckDB engine's own header, seen only by the files of
 * src/db/duckdb/: the engine's state, the files a target names and the
 * views made over them (ddb_files.c), CSV reading options (ddb_csv.c),
 * the database set up and locked down (ddb_open.c), one statement run
 * under the statement check and a time limit (ddb_run.c), and the catalog
 * (ddb_catalog.c). */
#ifndef TT_DB_DDB_H
#define TT_DB_DDB_H

#include "db/duckdb/ddb_api.h"
#include "db/engine.h"

/* What a file holds, from its name. */
typedef enum tt_ddb_format {
  TT_DDB_CSV,
  TT_DDB_PARQUET,
  TT_DDB_JSON,     /* a JSON array or object per file, or newline-delimited (auto) */
  TT_DDB_NDJSON,   /* .ndjson, .jsonl: one object per line */
  TT_DDB_DATABASE, /* a .duckdb file: opened as the database, read-only */
} tt_ddb_format;

/* One view made over the user's files: a table name and the files it
 * reads (one, or several of the same format and shape from a glob). */
typedef struct tt_ddb_view {
  char *name;
  tt_ddb_format format;
  char **files;
  size_t nfiles;
  char **text_cols;  /* CSV: columns read as VARCHAR because a value past
                      * DuckDB's sample was not of the sniffed type */
  size_t ntext_cols;
} tt_ddb_view;

typedef struct tt_ddb {
  const tt_ddb_api *api;
  ddb_database dbh;
  ddb_connection conn;
  bool database_file;   /* the target is a .duckdb file opened read-only */
  char **files;         /* every file the views read: allowed_paths exactly */
  size_t nfiles;
  tt_ddb_view *views;
  size_t nviews;
  char dialect[32];     /* "DuckDB 1.5.6" */
  char *warning;        /* what is not read (files a glob matched that are not
                         * regular files), or NULL */
} tt_ddb;

static inline tt_ddb *tt_ddb_of(const tt_db *db) { return (tt_ddb *)db->state; }

/* ---- the target's files (ddb_files.c) ----------------------------------- */

/* The format of a file from its name (any case); false: not one DuckDB
 * reads for tabletalk. */
bool tt_ddb_format_of(const char *path, tt_ddb_format *out);
/* The files target path names (a file, or a glob expanded here: DuckDB
 * never expands one itself once locked), each a regular file; the views
 * to make over them in dd (one per file, or one over a glob's files when
 * they share a format). false with err (no file, a folder, mixed
 * databases). */
bool tt_ddb_files_plan(tt_ddb *dd, const char *path, tt_error *err);
void tt_ddb_files_free(tt_ddb *dd);

/* ---- CSV (ddb_csv.c) ------------------------------------------------------ */

/* The tokens that mean "no value" in a CSV cell, as DuckDB's nullstr list:
 * the same ones the SQLite loader reads as NULL. */
extern const char *const tt_ddb_csv_nulls[];
/* Appends read_csv's arguments after the file list for the view of v
 * (", header=..., nullstr=[...], ..."). The one place that decides how a
 * CSV file is typed under DuckDB. */
void tt_ddb_csv_options(const tt_ddb_view *v, tt_csv_header header, tt_buf *out);
/* When msg is DuckDB's error for a CSV value past its sample that is not
 * of the column's sniffed type ("Error when converting column \"qty\""),
 * that column of that file's view is read as text from now on (the view
 * made again) and the warning says so; true when the view changed, so that
 * the statement may run again. */
bool tt_ddb_csv_demote(tt_db *db, const char *msg);

/* ---- opening (ddb_open.c) -------------------------------------------------- */

/* Opens the database (in memory, or the .duckdb file read-only), makes
 * the views, then locks it down: allowed_paths exactly the files given,
 * no other file, URL or extension, configuration locked. false with err
 * (dd half-made: tt_ddb_shut frees it). */
bool tt_ddb_setup(tt_db *db, tt_ddb *dd, tt_error *err);
/* CREATE OR REPLACE VIEW for v, as it is now; false with err. */
bool tt_ddb_view_make(tt_db *db, tt_ddb *dd, const tt_ddb_view *v, tt_error *err);
void tt_ddb_shut(tt_ddb *dd);

/* ---- running a statement (ddb_run.c) ----------------------------------- */

typedef struct tt_ddb_run tt_ddb_run;

/* One statement, after the checks every engine makes: exactly one, and a
 * SELECT by DuckDB's own parser (duckdb_extract_statements, then the
 * prepared statement's type); run under the time limit timeout_s (engine
 * time: duckdb_interrupt when it runs out or on a cancel). NULL with err. */
tt_ddb_run *tt_ddb_run_open(tt_db *db, const char *sql, size_t len, double timeout_s,
                            tt_error *err);
int tt_ddb_run_next(tt_ddb_run *run, const tt_value **row, size_t *row_bytes, tt_error *err);
void tt_ddb_run_close(tt_ddb_run *run);
tt_engine_cursor *tt_ddb_run_base(tt_ddb_run *run);

/* Runs setup SQL of tabletalk's own (no result wanted); false with err. */
bool tt_ddb_exec(tt_ddb *dd, const char *sql, tt_error *err);

/* ---- the catalog (ddb_catalog.c) ----------------------------------------- */

tt_catalog *tt_ddb_catalog_load(tt_db *db, tt_error *err);
void tt_ddb_sql_column_values(const tt_table_info *t, const tt_column_info *c, long scan_rows,
                              long max_len, tt_buf *out);
bool tt_ddb_is_text_type(const char *decltype);

#endif
