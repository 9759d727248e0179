/* db.h — public face of the db layer: naming a database (the target: a
 * SQLite file, CSV files, a PostgreSQL URI), opening it strictly read-only
 * through the engine that reads it, running one guarded query under
 * limits, result sets, and the catalog (tables, columns, keys, row counts,
 * sample rows).
 *
 * Read-only is enforced by each engine's own machinery, never by matching
 * SQL text: on SQLite the connection is opened read-only, an authorizer
 * allows only reads and allow-listed functions, sqlite3_stmt_readonly must
 * hold; on PostgreSQL a parse-level guard and a READ ONLY transaction.
 * Exactly one statement is accepted, limits bound time, memory, rows and
 * bytes, and every refusal carries a reason a user can act on.
 *
 * A tt_db handle is used by one thread at a time. Queries leave no state
 * behind (nothing can be written, not even to temp), so one handle serves
 * any number of queries. */
#ifndef TT_DB_H
#define TT_DB_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/util.h"

typedef struct tt_db tt_db;

/* ---- the database target: what the user named, parsed once ------------- */

typedef enum tt_db_kind {
  TT_DB_KIND_SQLITE,
  TT_DB_KIND_CSV,
  TT_DB_KIND_POSTGRES,
  TT_DB_KIND_MYSQL, /* MySQL and MariaDB servers: mysql:// and mariadb:// */
  TT_DB_KIND_DUCKDB, /* Parquet, JSON, .duckdb files, globs, and large CSV: DuckDB */
} tt_db_kind;

typedef struct tt_db_target {
  tt_db_kind kind;
  const char *engine; /* the engine's name: "sqlite" (SQLite files and CSV), "postgres",
                       * "mysql" */
  char *given;        /* as the user gave it (a URI may hold a password: never show it) */
  char *path;         /* what is opened: the real path of a file or folder when it exists
                       * (realpath), else as given; a URI as given */
  char *shown;        /* for people, traces and thread keys: path for files, the URI with its
                       * password replaced by "***" (today's tt_pg_redact_uri) */
  bool uri;           /* named by a URI (a server's database), not a file or folder */
  bool engine_auto;   /* a CSV file given to DuckDB for its size alone: read by SQLite
                       * instead when libduckdb is not installed */
} tt_db_target;

/* CSV files from this size on are read by DuckDB (unless --engine says). */
#define TT_DB_DUCKDB_CSV_BYTES (64LL * 1024 * 1024)

/* Works out which engine reads given and how it is named; makes no
 * connection (it may stat/realpath, and read the first 4 KiB of a file
 * named .txt, .dat or without an extension). A URI starting
 * postgres:// or postgresql:// (any case) is PostgreSQL, mysql:// or
 * mariadb:// MySQL/MariaDB; a name ending in
 * .csv or .tsv (any case), a folder, or a regular file named .txt, .dat
 * or without an extension whose first 4 KiB hold no NUL byte and are not
 * SQLite's header, is CSV; anything else a SQLite file. false with err (TT_ERR_CONFIG) when given is empty. Free with
 * tt_db_target_free. */
bool tt_db_target_parse(const char *given, tt_db_target *out, tt_error *err);
/* The same with the engine the user chose (--engine: "sqlite" or
 * "duckdb"; NULL or "" or "auto": by the name and size). .parquet,
 * .json, .ndjson, .jsonl and .duckdb files and globs (a name with *, ? or
 * [ that names no file) are DuckDB's, and CSV/TSV files of
 * TT_DB_DUCKDB_CSV_BYTES or more; --engine duckdb takes a CSV file of any
 * size, --engine sqlite a CSV file of any size. Any other pairing is a
 * TT_ERR_CONFIG error. */
bool tt_db_target_parse_engine(const char *given, const char *engine, tt_db_target *out,
                               tt_error *err);
void tt_db_target_free(tt_db_target *t);
/* When s is the URI of a database server (any engine's scheme) holding a
 * password, s with the password replaced by "***" (free()); else NULL.
 * Reads only the string: for scrubbing arguments and messages. */
char *tt_db_uri_redacted(const char *s);
/* "SQLite"/"PostgreSQL" for a kind, before opening (replaces
 * tt_db_path_dialect). */
const char *tt_db_kind_dialect(tt_db_kind kind);

/* How an engine stores a name written without quotes. */
typedef enum tt_db_fold {
  TT_DB_FOLD_NONE,  /* as written, and matched without regard to case (SQLite) */
  TT_DB_FOLD_LOWER, /* to lower case (PostgreSQL) */
  TT_DB_FOLD_UPPER, /* to upper case (the SQL standard) */
} tt_db_fold;

/* What callers that write SQL for a database, or explain its options,
 * need to know of its dialect (from the engine's table). */
typedef struct tt_db_dialect_facts {
  const char *name;  /* as the prompt names it: "SQLite", "PostgreSQL" */
  char ident_quote;  /* quotes an identifier; doubled inside one */
  tt_db_fold fold;
  bool schemas;      /* tables live in schemas that opts.schemas (--schemas) chooses */
} tt_db_dialect_facts;

const tt_db_dialect_facts *tt_db_kind_facts(tt_db_kind kind);

/* Settings for one handle; start from tt_db_default_opts(). */
/* Whether the first line of a CSV file names the columns. */
typedef enum tt_csv_header {
  TT_CSV_HEADER_AUTO = 0, /* guessed (man tabletalk, "CSV FILES") */
  TT_CSV_HEADER_YES,
  TT_CSV_HEADER_NO,
} tt_csv_header;

typedef struct tt_db_opts {
  bool immutable;      /* add immutable=1: no locking, file assumed unchanging */
  double timeout_s;    /* wall-clock limit per query */
  long max_rows;       /* rows returned before the result is cut */
  long max_bytes;      /* bytes returned (text/blob bytes, 8 per number) */
  bool double_quoted_strings; /* accept "x" as a string literal (Spider gold) */
  long count_rows;     /* past max_rows, keep counting rows (not keeping
                        * them) up to this many in all, within the time
                        * limit; 0: stop at the cut */
  volatile sig_atomic_t *cancel; /* when set (by a signal, another thread, a
                                  * client that went away), the running query
                                  * stops within milliseconds */
  tt_csv_header csv_header;      /* CSV files: does the first line name columns */
  const char *csv_types; /* CSV files: --csv-types, "col=type,table.col=type"
                          * (db/csv_sniff.h); NULL: sniffed. Borrowed */
  const char *schemas; /* PostgreSQL: which schemas the catalog lists, a comma-
                        * separated list of names ("sales,hr": only these) and
                        * !names ("!audit": all but these); NULL: every schema
                        * but the system's. Borrowed: it must outlive the handle */
  const char *trust_functions; /* PostgreSQL: schemas whose functions and operators may
                                * run (--trust-functions), comma-separated; NULL: none
                                * but the built-in ones. Borrowed, like schemas */
  long max_steps;      /* work a query may do, counted in the engine's own steps
                        * (SQLite: virtual-machine instructions), so that it stops
                        * at the same point on an idle and on a busy machine; 0: no
                        * bound. An engine that cannot count work ignores it */
} tt_db_opts;

tt_db_opts tt_db_default_opts(void);

/* Why the guard refused a statement (TT_ERR_REFUSED), so that callers
 * act on a code, never on the wording of the message. */
typedef enum tt_db_refusal {
  TT_REFUSE_NONE = 0,
  TT_REFUSE_WRITE,       /* INSERT, UPDATE, DELETE, REPLACE, VACUUM (INTO) */
  TT_REFUSE_SCHEMA,      /* CREATE, DROP, ALTER, ANALYZE, REINDEX */
  TT_REFUSE_ATTACH,      /* ATTACH, DETACH */
  TT_REFUSE_TRANSACTION, /* BEGIN, COMMIT, ROLLBACK, SAVEPOINT */
  TT_REFUSE_PRAGMA,      /* PRAGMA statements, unlisted pragma functions */
  TT_REFUSE_FUNCTION,    /* a function outside the allow-list */
  TT_REFUSE_INTERNALS,   /* dbstat, sqlite_dbpage and other internals */
  TT_REFUSE_MULTIPLE,    /* more than one statement */
  TT_REFUSE_EXPLAIN,     /* plain EXPLAIN */
  TT_REFUSE_TEXT,        /* a NUL byte or invalid UTF-8 in the SQL text */
  TT_REFUSE_EMPTY,       /* no statement: empty or only comments */
  TT_REFUSE_OTHER,       /* anything else that is not a read */
  TT_REFUSE_FILE,        /* DuckDB: a file, folder or URL other than those given */
} tt_db_refusal;

/* "write", "schema", "attach", "transaction", "pragma", "function",
 * "internals", "multiple", "explain", "text", "empty", "other", "file"
 * ("none"). */
const char *tt_db_refusal_name(tt_db_refusal r);
/* True when the refused statement would have changed the database: its
 * data or its schema. */
bool tt_db_refusal_is_write(tt_db_refusal r);

/* Opens path read-only. An empty path is a TT_ERR_CONFIG error; a
 * missing, unreadable or non-SQLite file is a TT_ERR_IO error; no file is
 * ever created. Returns NULL on error.
 * A path ending in .csv or .tsv, or a folder (its *.csv and *.tsv regular
 * files inside it: links out of it, pipes, devices, sockets are skipped and
 * named by tt_db_warning), is loaded into an in-memory database, one table
 * per file, once per contents: every handle on it shares that one copy and
 * reads it under the same guard and limits as a file, and follows the files
 * as it follows a SQLite file (changed files are loaded again before the
 * next query, within its time limit, each as of one moment). Nothing is
 * written beside the files; a malformed file is a TT_ERR_IO error naming
 * its line. */
tt_db *tt_db_open(const char *path, const tt_db_opts *opts, tt_error *err);
/* Opens the target read-only, as tt_db_open does (tt_db_open is
 * tt_db_target_parse and this). The handle keeps its own copy of t. */
tt_db *tt_db_open_target(const tt_db_target *t, const tt_db_opts *opts, tt_error *err);
void tt_db_close(tt_db *db);
/* The target the handle was opened from. */
const tt_db_target *tt_db_get_target(const tt_db *db);
/* What the user should know about what is read and how, or NULL: a CSV
 * folder's entries that are not regular files inside it ("skipped in shop/:
 * notes.csv (a symbolic link that leads out of the folder); ...", names
 * escaped), or on PostgreSQL a role that is a superuser or can write (what
 * a function of the database's owner could do with it: asked of the server
 * on the first call and kept). Owned by the handle; valid until the next
 * query on it. */
const char *tt_db_warning(tt_db *db);
/* Checks a --csv-types value ("col=type,table.col=type"; man tabletalk,
 * CSV FILES) without opening anything: false with err (TT_ERR_CONFIG,
 * what is wrong and how to write it) when malformed. */
bool tt_db_csv_types_check(const char *spec, tt_error *err);
/* True when tt_db_open reads path as CSV: a name ending in .csv or .tsv
 * (any case), a folder, or a text file named .txt, .dat or without an
 * extension (tt_db_target_parse). Prefer tt_db_target (kind). */
bool tt_db_path_is_csv(const char *path);
/* True when tt_db_open reads path as a PostgreSQL server: a URI starting
 * postgres:// or postgresql:// (any case). "postgresql://" alone means
 * libpq's defaults and the PG* environment variables (PGHOST, PGUSER...).
 * Prefer tt_db_target (kind). */
bool tt_db_path_is_uri(const char *path);
/* uri with its password (user:PASSWORD@ and ?password=...) replaced by
 * "***", for anything shown or written; a copy of any other string.
 * Free with free(). Prefer tt_db_target (shown). */
char *tt_pg_redact_uri(const char *uri);
/* For the behaviour suite on PostgreSQL: a new database made from the one
 * uri names by the server (CREATE DATABASE ... TEMPLATE, which only reads
 * it; needs the CREATEDB privilege and no other session on it), with
 * setup_sql run in it by an ordinary, writable session. Returns uri with
 * dbname set to the copy (free()), *name the copy's name (free()); NULL
 * with err. tt_pg_scratch_drop removes the copy (connected to the server's
 * "postgres" database). Never pointed at the user's database. */
char *tt_pg_scratch_create(const char *uri, const char *setup_sql, char **name, tt_error *err);
bool tt_pg_scratch_drop(const char *uri, const char *name, tt_error *err);
/* The SQL dialect the handle speaks, as the prompt names it: "SQLite",
 * "PostgreSQL", or the server and its version ("MariaDB 10.11.19",
 * "MySQL 8.0.36"). */
const char *tt_db_dialect(const tt_db *db);
/* The same and the rest of what its engine's dialect is like. */
const tt_db_dialect_facts *tt_db_facts(const tt_db *db);
/* The dialect of the database at path, before opening it. Prefer
 * tt_db_kind_dialect of a tt_db_target. */
const char *tt_db_path_dialect(const char *path);
/* The path as the user gave it (a URI without its password). */
const char *tt_db_path(const tt_db *db);
const tt_db_opts *tt_db_get_opts(const tt_db *db);
/* A read snapshot over several queries: tt_db_snapshot_begin starts a read
 * transaction (waiting for writers within the time limit) and gives a
 * version that differs whenever the data may differ from an earlier
 * snapshot's with the same version (another connection's commit, another
 * file at the path, another connection); queries until tt_db_snapshot_end
 * see exactly that data. For caching results of repeatable queries. */
bool tt_db_snapshot_begin(tt_db *db, uint64_t *version, tt_error *err);
/* tt_db_snapshot_begin when it needs no wait and no new connection (no
 * other program's lock in the way, the file unchanged at its path, no
 * files to load again); false, and no snapshot, otherwise, or when the
 * engine cannot tell at once. For answering from a result cache on a
 * thread that must not block. */
bool tt_db_snapshot_quick(tt_db *db, uint64_t *version);
void tt_db_snapshot_end(tt_db *db);
void tt_db_set_opts(tt_db *db, const tt_db_opts *opts);

/* ---- result sets ------------------------------------------------------ */

typedef enum tt_valtype {
  TT_VAL_NULL,
  TT_VAL_INT,
  TT_VAL_REAL,
  TT_VAL_TEXT,
  TT_VAL_BLOB,
} tt_valtype;

typedef struct tt_value {
  tt_valtype type;
  size_t len; /* bytes of text or blob (text may contain NUL bytes) */
  union {
    int64_t i;
    double r;
    const char *s; /* text or blob bytes, NUL-terminated for convenience */
  } u;
  size_t cut; /* text or blob cut to fit max_bytes: the bytes left out after
               * the len kept (0: whole); shown with its cut mark after it */
} tt_value;

typedef enum tt_trunc {
  TT_TRUNC_NONE,
  TT_TRUNC_ROWS,  /* more rows exist than max_rows */
  TT_TRUNC_BYTES, /* the next row would have passed max_bytes */
} tt_trunc;

typedef struct tt_result {
  size_t ncols;
  const char **names;     /* column names */
  const char **decltypes; /* declared types ("" when none) */
  size_t nrows;
  tt_value *cells;        /* nrows * ncols, row-major (owned) */
  bool truncated;
  tt_trunc truncated_by;
  size_t bytes;           /* bytes counted against max_bytes */
  int64_t total_rows;     /* rows the statement produced, as far as counted */
  bool total_exact;       /* total_rows is every row (stepping reached the end) */
  bool repeatable;        /* the same SQL on unchanged data gives this same
                           * result: no clock, randomness or connection
                           * counters, and no time limit cut it short */
  double elapsed_ms;
  size_t cells_cut;       /* cells cut to fit max_bytes (tt_value.cut) */
  tt_arena *arena;        /* owns every string above */
} tt_result;

static inline const tt_value *tt_result_cell(const tt_result *r, size_t row,
                                             size_t col) {
  return &r->cells[row * r->ncols + col];
}

void tt_result_free(tt_result *r);

/* Renders one value as text for people: integers and reals as SQLite prints
 * them, blobs as "<blob N bytes>" (N: the whole blob's), NULL as "NULL".
 * Text is appended raw (escape it before it reaches a terminal), followed
 * by the cut mark when it was cut. */
void tt_value_to_text(tt_buf *out, const tt_value *v);
/* Bounded output never loses a row: a row that alone weighs more than
 * max_bytes is kept with its longest text and blob cells cut so that it
 * fits (the rows before a cut are whole, the rows after it left out as
 * ever). A cut cell is followed, wherever it is shown (the table, CSV,
 * TSV, JSON, Markdown, the model's view, MCP, the web API), by its cut
 * mark "…[cut 999,000 bytes]": the bytes left out, grouped by thousands.
 * This appends v's cut mark, or nothing when v is whole. */
void tt_value_put_cut_mark(tt_buf *out, const tt_value *v);
/* Same type and same value (text and blobs byte for byte). */
bool tt_value_equal(const tt_value *a, const tt_value *b);

/* The one JSON shape of a result set, the same wherever rows are shown
 * (the run's JSON, run_sql's structuredContent, the web page's /api/sql):
 * {"columns":[...],"column_types":[...],"rows":[[...]],"row_count":N,
 * "truncated":bool,"truncated_by":"max_rows"|"max_bytes","cells_cut":N,
 * "elapsed_ms":N}; cells_cut (only when some are) counts the cells of the
 * rows given that were cut to fit max_bytes, each followed by its cut mark.
 * rows holds the first max_rows rows (0: every row r holds) and row_count
 * is always how many it holds; truncated says more rows exist than are
 * given (the query was cut, or max_rows left some out) and truncated_by
 * (only then) which cap. Blobs as \x hex, or "<blob N bytes>" unless
 * blob_hex. r NULL: no query ran (no columns, no rows, no elapsed_ms). */
json_t *tt_result_to_json(const tt_result *r, size_t max_rows, bool blob_hex);

/* {"kind":"refused","reason":"write","message":"..."} (reason only for
 * refusals). */
json_t *tt_db_error_to_json(const tt_error *err);

/* ---- queries ---------------------------------------------------------- */

/* Runs one guarded, read-only statement. sql need not be NUL-terminated and
 * may contain any bytes (they are checked). Returns the result, or NULL with
 * err filled in. */
tt_result *tt_db_query(tt_db *db, const char *sql, size_t len, tt_error *err);
/* tt_db_query under this query's own limits (timeout_s, max_rows,
 * max_bytes, count_rows, cancel) instead of the handle's, which stay as
 * they are: for a caller that borrows the handle. immutable and
 * double_quoted_strings remain the handle's. */
tt_result *tt_db_query_opts(tt_db *db, const char *sql, size_t len, const tt_db_opts *opts,
                            tt_error *err);

/* ---- cursors: rows one at a time ------------------------------------- */

typedef struct tt_cursor tt_cursor;

/* Runs one guarded, read-only statement (the same checks as tt_db_query)
 * and returns its rows one at a time, holding only the current row. The
 * handle's time limit counts the time spent inside the engine; max_rows and
 * max_bytes cap the rows returned (0: no cap; the handle's own caps do not
 * apply). NULL with err filled in. The handle serves no other query until
 * the cursor is closed. */
tt_cursor *tt_db_cursor_open(tt_db *db, const char *sql, size_t len, long max_rows,
                             long max_bytes, tt_error *err);
/* 1 with *row (ncols values, valid until the next call; text is
 * NUL-terminated, blobs are not), 0 at the end or at the row cap, -1 with
 * err filled in (the time limit, the engine's own errors). */
int tt_cursor_next(tt_cursor *c, const tt_value **row, tt_error *err);
size_t tt_cursor_ncols(const tt_cursor *c);
const char *tt_cursor_name(const tt_cursor *c, size_t col);
const char *tt_cursor_decltype(const tt_cursor *c, size_t col);
long tt_cursor_rows(const tt_cursor *c);
/* Which cap stopped it while more rows were left (TT_TRUNC_NONE: none). */
tt_trunc tt_cursor_truncated(const tt_cursor *c);
/* Cells cut to fit max_bytes so far: a first row alone over max_bytes is
 * returned with its longest cells cut (tt_value.cut), never left out. */
size_t tt_cursor_cells_cut(const tt_cursor *c);
/* Time spent inside the engine (SQLite, the server) so far. */
double tt_cursor_elapsed_ms(const tt_cursor *c);
/* The same, a call of tt_cursor_next in progress included, read from the
 * clock now: safe to call from a signal handler that interrupted the
 * cursor's own thread (it reads a clock and lock-free atomics, nothing
 * else), so that a watchdog armed once can tell an engine stuck inside one
 * operation from a reader that is slow to take the rows. */
double tt_cursor_engine_ms_now(const tt_cursor *c);
void tt_cursor_close(tt_cursor *c);

/* ---- values for exports ------------------------------------------------ */

/* A value as exports write it: like tt_value_to_text, but blobs as \x and
 * lower-case hex (PostgreSQL's bytea form) and NULL as nothing. */
void tt_value_to_export_text(tt_buf *out, const tt_value *v);
/* A value as JSON: numbers, strings, null (also for NaN and infinities);
 * blobs as "<blob N bytes>", or as \x hex when blob_hex. */
json_t *tt_value_to_json(const tt_value *v, bool blob_hex);
/* Appends the JSON text of tt_value_to_json(v, blob_hex) exactly as
 * tt_json_dump writes it with JSON_REAL_PRECISION(15), without building
 * the value (exports write millions of them). */
void tt_value_put_json(tt_buf *out, const tt_value *v, bool blob_hex);

/* ---- catalog ---------------------------------------------------------- */

/* Names that are not valid UTF-8 are kept as shown, with each invalid byte
 * written \xHH (raw_name holds the bytes; NULL when the name is valid): SQL
 * that names them so, in quotes ("caf\xE9"), finds them. */
typedef struct tt_column_info {
  const char *name;
  const char *raw_name;
  const char *type;          /* declared type, "" when none */
  int pk;                    /* position in the primary key (1-based), 0 if not */
  bool not_null;
  const char *default_value; /* SQL text of the default, NULL when none */
  const char *description;   /* a -- comment on its line of CREATE TABLE, or NULL */
  const char *data_note;     /* what reading its rows found (DuckDB's statistics, how a CSV
                              * column was typed), or NULL: it may quote values, so private
                              * mode never shows it */
  /* Text columns: the most frequent values among the first
   * TT_TOP_VALUES_SCAN rows, most frequent first (NULL when not read). */
  const char **top_values;
  size_t ntop_values;
} tt_column_info;

#define TT_TOP_VALUES 3
#define TT_TOP_VALUES_SCAN 10000

/* description and data_note as one text ("description; note"), or NULL
 * when both are NULL; the caller frees it. */
char *tt_described(const char *description, const char *data_note);

typedef struct tt_fk_info {
  const char *from;     /* column in this table */
  const char *table;    /* referenced table */
  const char *to;       /* referenced column */
  int pk_seq;           /* position within a composite key (0-based) */
  size_t table_schema_len; /* table is "schema.table": the schema's length */
} tt_fk_info;

/* How a row count was learnt: start-up never counts a whole table. */
typedef enum tt_row_count_kind {
  TT_ROWS_EXACT,    /* counted: the table has fewer rows than the limit */
  TT_ROWS_AT_LEAST, /* counting stopped at the limit: more than row_count */
  TT_ROWS_STAT1     /* from sqlite_stat1 (as of the last ANALYZE) */
} tt_row_count_kind;

/* Counting stops after this many rows. */
#define TT_ROW_COUNT_LIMIT 100000

/* Whether the rows of a table have been read for its card: its row count
 * (unless statistics gave one), sample rows and frequent values. */
typedef enum tt_probe_state {
  TT_PROBE_NONE,    /* its rows are not read (the engine said so) */
  TT_PROBE_PENDING, /* not read yet: a time limit or a cancel stopped the
                     * catalog first (tt_db_catalog_probe reads it) */
  TT_PROBE_DONE,    /* read, or found unreadable for a reason that stays
                     * (the note says which) */
} tt_probe_state;

typedef struct tt_table_info {
  const char *name;
  const char *raw_name;
  bool is_view;
  int64_t row_count;    /* -1 for views, and when it could not be counted in time */
  tt_row_count_kind row_count_kind;
  size_t ncols;
  tt_column_info *cols;
  size_t nfks;
  tt_fk_info *fks;
  tt_result *sample;    /* up to 3 rows; NULL when they could not be read */
  const char *note;     /* why something is missing (a slow view), or NULL */
  const char *description; /* a -- comment on the CREATE TABLE line, or NULL */
  const char *data_note;  /* what reading its rows found (a CSV file's separator, null
                           * tokens, ragged rows), or NULL; private mode never shows it */
  const char *sql_name; /* SQL that names it ("schema"."table"), or NULL: name
                         * quoted as one identifier */
  size_t schema_len;    /* PostgreSQL, tables of several schemas: name is
                         * "schema.table" and its schema is this long (0: a
                         * name of its own, dots and all) */
  tt_probe_state probe; /* whether its rows have been read */
  const char *from;     /* SQL naming it for reading its rows; NULL with TT_PROBE_NONE */
  uint64_t probe_stamp; /* TT_PROBE_DONE: tt_catalog_stamp_data_hash of the
                         * data it was read from */
} tt_table_info;

typedef struct tt_catalog {
  size_t ntables;
  tt_table_info *tables;
  tt_arena *arena;
  const char *list_tables_sql; /* a query listing every table, in the engine's
                                  dialect (for an index too long to show) */
  const char *warning; /* what the target holds that is not read (tt_db_warning
                        * when the catalog was read), or NULL */
} tt_catalog;

/* Reads the schema: every table and view (not sqlite_ internals) in schema
 * order, with columns, foreign keys, descriptions (SQL comments), row counts
 * (never a whole-table scan), three sample rows and the frequent values of
 * text columns among the first TT_TOP_VALUES_SCAN rows. Every bound is
 * counted in rows or steps of work, never in seconds, so that the same
 * database gives the same catalog on an idle and on a loaded machine (on
 * an engine that counts no steps, a view's rows are bounded by the
 * handle's time limit). Only opts.cancel can leave tables TT_PROBE_PENDING
 * (tt_catalog_pending says how many). */
tt_catalog *tt_db_catalog_load(tt_db *db, tt_error *err);
/* How long a start may read rows for the cards by default before it leaves
 * the rest for later (tt_db_catalog_probe's deadline; the session's
 * TABLETALK_SCHEMA_SECONDS). */
#define TT_CATALOG_SECONDS 3.0
void tt_catalog_free(tt_catalog *cat);

/* The same in two steps. tt_db_catalog_read reads the structure only
 * (tables, columns, keys, descriptions, counts from statistics: no row of
 * any table): each table whose rows are to be read is TT_PROBE_PENDING.
 * tt_db_catalog_probe reads the rows of table i: its row count (unless
 * statistics gave one), three sample rows and frequent values, each query
 * bounded by rows and steps. A wall-clock deadline (tt_now_ms time; 0: none)
 * or cancel can stop it: then false, and the table is as it was before the
 * call (still pending, or still holding an earlier read). true when read,
 * or when it cannot be read for a reason that stays (the note says so):
 * TT_PROBE_DONE with probe_stamp = data_hash. */
tt_catalog *tt_db_catalog_read(tt_db *db, tt_error *err);
bool tt_db_catalog_probe(tt_db *db, tt_catalog *cat, size_t i, double deadline_ms,
                         volatile sig_atomic_t *cancel, uint64_t data_hash);
/* Tables still TT_PROBE_PENDING. */
size_t tt_catalog_pending(const tt_catalog *cat);

/* What proves a catalog unchanged, read without reading any row: three
 * texts that differ whenever the catalog may. identity names the database
 * (the engine; a file's resolved path, device and inode; a server's
 * database and user; the options that change what the catalog lists; the
 * bounds of the catalog's reads), schema changes with any table, column,
 * key or comment (SQLite's schema cookie; PostgreSQL's catalogs; CSV files'
 * sizes, times and first bytes), data whenever rows may have changed
 * (SQLite: the file's and its -wal's size and time; PostgreSQL: statistics
 * counters and times; "" for CSV, whose schema stamp covers its rows).
 * false with err (the database cannot be read; an engine that cannot
 * prove anything: TT_ERR_UNAVAILABLE). Free with tt_catalog_stamp_free. */
typedef struct tt_catalog_stamp {
  char *identity, *schema, *data;
} tt_catalog_stamp;
bool tt_db_catalog_stamp(tt_db *db, tt_catalog_stamp *out, tt_error *err);
void tt_catalog_stamp_free(tt_catalog_stamp *s);
/* A 64-bit hash of the data stamp (never 0), as probe_stamp holds it. */
uint64_t tt_catalog_stamp_data_hash(const tt_catalog_stamp *s);

/* Appends to out the SQL that reads the distinct text values of column c
 * of t among its first scan_rows rows, at most max_len bytes each (one
 * column, v), in the database's dialect. */
void tt_db_sql_column_values(const tt_db *db, const tt_table_info *t, const tt_column_info *c,
                             long scan_rows, long max_len, tt_buf *out);

/* Case-insensitive lookup; NULL when absent. */
const tt_table_info *tt_catalog_find(const tt_catalog *cat, const char *name);

#endif
