/* ddb.h — the DuckDB engine's own header, seen only by the files of
 * src/db/duckdb/: the engine's state, the files a target names and the
 * views made over them (ddb_files.c), CSV reading options (ddb_csv.c),
 * the database set up and locked down (ddb_open.c), one statement run
 * under the statement check and a time limit (ddb_run.c), its columns and
 * values (ddb_values.c), and the catalog (ddb_catalog.c). */
#ifndef TT_DB_DDB_H
#define TT_DB_DDB_H

#include "db/duckdb/ddb_api.h"
#include "db/csv_sniff.h"
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
  /* CSV typed by csv_sniff.c (tt_ddb_csv_sniff): the view reads every
   * column as VARCHAR and casts each as this SELECT list says; NULL when
   * the sniff could not be made (DuckDB's own types then) */
  char *csv_select;
  char **csv_names;  /* per column: its name and the sniffer's note (or NULL) */
  char **csv_src;    /* per column: the name DuckDB reads it by, when the shown
                      * one differs (no header line: column0 is shown as
                      * column_1, as the SQLite loader names it); else NULL */
  char **csv_notes;
  size_t csv_ncols;
  char *csv_note;    /* on the table: how the file was read, or NULL */
  char ragged_delim; /* CSV whose rows DuckDB's sniffer could not split
                      * (ragged rows): this delimiter, rows padded with
                      * NULLs; 0 for the usual, parallel reading */
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
  char *dbname;         /* the database's catalog name ("memory", a file's stem) */
  char *dbname_sql;     /* the same as an SQL string literal, for the catalog's queries */
  char *warning;        /* what is not read (files a glob matched that are not
                         * regular files), or NULL */
  struct tt_ddb_trust *trust; /* a .duckdb file's macros not trusted, and what
                               * uses them (ddb_trust.c); NULL: nothing to check */
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
/* Types v's columns with the engine-neutral sniffer (csv_sniff.h) from
 * the first TT_DDB_CSV_SNIFF_ROWS records DuckDB reads as VARCHAR (fewer
 * when their fields pass TT_DDB_CSV_SNIFF_BYTES: a wide file), under
 * the overrides ov (may be NULL): sets v's csv_select and notes. Nothing
 * when DuckDB cannot read the head (the view then reads DuckDB's types). */
#define TT_DDB_CSV_SNIFF_ROWS 20000
#define TT_DDB_CSV_SNIFF_BYTES (16u << 20)
void tt_ddb_csv_sniff(tt_db *db, tt_ddb *dd, tt_ddb_view *v, tt_csv_overrides *ov);
/* When msg is DuckDB's error for a CSV value past its sample that is not
 * of the column's sniffed type ("Error when converting column \"qty\""),
 * that column of that file's view is to be read as text from now on: the
 * view (to make again, tt_ddb_view_make), *column the column's name
 * (free()); else NULL. */
tt_ddb_view *tt_ddb_csv_demote(tt_ddb *dd, const char *msg, char **column);
/* Adds to dd's warning that column of v is read as text. */
void tt_ddb_csv_note(tt_ddb *dd, const tt_ddb_view *v, const char *column);

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

/* ---- result columns and values (ddb_values.c) ---------------------------- */

/* A result's columns as read once, and the current row's values. */
typedef struct tt_ddb_cols {
  const tt_ddb_api *api;
  size_t n;
  ddb_type *types;        /* per column: the type id */
  ddb_type *inner;        /* DECIMAL and ENUM: their storage type */
  uint8_t *width, *scale; /* DECIMAL */
  char ***enums;          /* ENUM: the dictionary (in the arena) */
  uint32_t *nenums;
  tt_value *row;          /* the current row */
  tt_buf *text;           /* per column: formatted values (valid until the next row) */
} tt_ddb_cols;

/* Whether values of type t are read from DuckDB's vectors directly (else
 * DuckDB casts them to VARCHAR first). */
bool tt_ddb_type_direct(ddb_type t);
/* res's columns into cols; their names and declared types (allocated in a)
 * into *names and *decltypes. */
void tt_ddb_cols_read(tt_ddb_cols *cols, const tt_ddb_api *api, ddb_result *res, tt_arena *a,
                      const char ***names, const char ***decltypes);
/* Row r of chunk into cols->row. */
void tt_ddb_cols_row(tt_ddb_cols *cols, ddb_data_chunk chunk, ddb_idx r);
void tt_ddb_cols_free(tt_ddb_cols *cols);

/* Runs setup SQL of tabletalk's own (no result wanted); false with err. */
bool tt_ddb_exec(tt_ddb *dd, const char *sql, tt_error *err);
/* The first column (a VARCHAR: cast it) of the first row of sql
 * (tabletalk's own) as text (allocated), or NULL. */
char *tt_ddb_scalar_text(tt_ddb *dd, const char *sql);

/* ---- the database's macros (ddb_trust.c) ---------------------------------- */

/* A .duckdb file's macros of schemas not named by --trust-functions, and
 * the views, tables and macros whose SQL names them, reads SQL from a
 * string or changes DuckDB's state, into dd->trust (left NULL when there
 * are none); the macros' names added to dd's warning. false with err
 * when they cannot be listed. */
bool tt_ddb_trust_load(tt_db *db, tt_ddb *dd, tt_error *err);
/* false with a refusal (TT_REFUSE_FUNCTION) when the statement sql (len
 * bytes, one statement) names such a macro or relation, or reads SQL from
 * a string, by DuckDB's own parse tree; on every DuckDB database, one
 * (TT_REFUSE_PRAGMA) when it calls a table function that changes
 * DuckDB's state (enable_logging, checkpoint...). *unchecked: DuckDB's serializer
 * says it is not a SELECT (then only a refusal by its type may follow:
 * if it prepares as a SELECT all the same, tt_ddb_trust_refuse_unchecked). */
bool tt_ddb_trust_check(tt_ddb *dd, const char *sql, size_t len, bool *unchecked,
                        tt_error *err);
void tt_ddb_trust_refuse_unchecked(const tt_ddb *dd, tt_error *err);
/* For a relation the check refuses: what reading it runs ("the
 * database's own macro main.m"), *root the schema(s) to trust for it;
 * else NULL. */
const char *tt_ddb_trust_relation(const tt_ddb *dd, const char *schema, const char *name,
                                  const char **root);
void tt_ddb_trust_free(struct tt_ddb_trust *t);

/* ---- the catalog (ddb_catalog.c) ----------------------------------------- */

tt_catalog *tt_ddb_catalog_load(tt_db *db, tt_error *err);
void tt_ddb_sql_column_values(const tt_table_info *t, const tt_column_info *c, long scan_rows,
                              long max_len, tt_buf *out);
bool tt_ddb_is_text_type(const char *decltype);

#endif
