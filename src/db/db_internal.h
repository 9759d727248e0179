/* db_internal.h — what the files of the db layer share and nobody else
 * sees: the handle's fields and the guard's entry points. */
#ifndef TT_DB_INTERNAL_H
#define TT_DB_INTERNAL_H

#include <sqlite3.h>
#include <stdio.h>

#include "db/db.h"

/* Reference limits (../shared/corpus/README.md). */
#define TT_LIMIT_LENGTH 1000000
#define TT_LIMIT_SQL_LENGTH 100000
#define TT_HEAP_LIMIT (256LL * 1024 * 1024)
#define TT_LIMIT_VDBE_OP 25000

typedef struct tt_csv_data tt_csv_data;
typedef struct tt_pg tt_pg;

/* A file's identity and the facts that change when it is written. */
typedef struct tt_file_id {
  uint64_t dev, ino;
  int64_t size, mtime_ns, ctime_ns;
} tt_file_id;

struct tt_db {
  sqlite3 *h;
  char *path;          /* as the user gave it */
  char *real;          /* resolved: what is opened */
  tt_db_opts opts;
  const tt_db_opts *query_opts; /* the limits of the query running now, when
                                 * its caller gave its own (tt_db_query_opts);
                                 * NULL: opts */
  bool automatic_immutable; /* a WAL file no writer had open, read without
                             * locks: every read is checked afterwards */
  bool had_shm;        /* ... with a -shm left beside it */
  tt_file_id file;     /* the file when connected */
  uint64_t serial;     /* differs for every connection made */
  bool in_snapshot;    /* a read transaction spans several queries */
  bool internal;       /* tabletalk's own statement: the authorizer allows it */
  bool trusted_text;   /* SQL tabletalk wrote (the catalog's): raw names allowed */
  char **names;        /* pairs (shown, raw) of names that are not UTF-8 */
  size_t nnames;
  bool names_learned;  /* ... read from the schema on this connection */
  bool stepping;      /* sqlite3_step is running: schema pragmas allowed */
  bool denied;        /* the authorizer refused something */
  bool deny_weak;     /* ... but only a schema-table write so far */
  char deny[320];     /* why, in words for the user */
  tt_db_refusal deny_reason; /* ... and as a code */
  double deadline_ms; /* progress handler stops the query after this */
  bool timed_out;
  bool cancelled;      /* opts.cancel stopped the query */
  bool preparing;      /* in sqlite3_prepare (for telling limits apart) */
  bool varies;        /* calls a function whose value changes between runs */
  tt_csv_data *csv;   /* CSV files loaded in memory (csv.c), shared by
                       * every handle on them; NULL for a SQLite file */
  tt_pg *pg;          /* the engine is a PostgreSQL server (pg.c): every
                       * entry point of db.h hands the call to pg.c; h is
                       * NULL. NULL for SQLite */
};

void tt_db_set_error(tt_error *err, tt_errkind kind, const char *fmt, ...)
    TT_PRINTF(3, 4);
/* A TT_ERR_REFUSED error with its reason code. */
void tt_db_refuse(tt_error *err, tt_db_refusal reason, const char *fmt, ...) TT_PRINTF(3, 4);

/* Installs authorizer, progress handler, module pruning and the checked
 * printf on a freshly opened connection. */
void tt_guard_install(tt_db *db);
/* Clears per-query guard state and arms the deadline (tt_now_ms time). */
void tt_guard_arm(tt_db *db, double deadline_ms);
/* Checks the raw SQL text before SQLite sees it (UTF-8, NUL, empty). */
bool tt_guard_check_text(const char *sql, size_t len, bool trusted, tt_error *err);
/* True when the statement is a PRAGMA statement (its first keyword). */
bool tt_guard_is_pragma_statement(const char *sql, size_t len);
/* True when what follows the first statement holds only whitespace,
 * comments and semicolons. */
bool tt_guard_tail_is_empty(const char *tail, const char *end);

/* comments.c: descriptions from the SQL comments of t's CREATE TABLE
 * text (its columns must be loaded). */
void tt_catalog_read_comments(tt_arena *a, tt_table_info *t, const char *sql);

/* catalog.c: a name as shown (a copy in a): as it is when valid UTF-8,
 * else with each invalid byte written \xHH. */
const char *tt_db_shown_name(tt_arena *a, const char *raw);
/* catalog.c: SQL with names as shown ("caf\xE9" in quotes) turned into
 * the names' bytes; NULL when there is nothing to turn. */
char *tt_db_raw_names(tt_db *db, const char *sql, size_t len, size_t *out_len);

/* open.c: (re)connects db->h to db->real, choosing how to open it from
 * what lies beside the file now. */
bool tt_db_connect(tt_db *db, tt_error *err);
bool tt_db_file_id_read(const char *path, tt_file_id *id);

/* live.c: before a query, follows the file (a replaced file, a writer that
 * came or went); after an unlocked read, says whether it still holds. */
bool tt_db_refresh(tt_db *db, tt_error *err);
bool tt_db_unchanged(tt_db *db);

/* exec.c: turns a failed call (rc, SQLite's message) into an error a user
 * can act on. */
void tt_db_explain_failure(tt_db *db, int rc, const char *msg, tt_error *err);

/* exec.c: the statement of sql once every check before running it has
 * passed (text, size, exactly one statement, no plain EXPLAIN, read-only),
 * with the guard armed; NULL with err filled in. */
sqlite3_stmt *tt_db_prepare_guarded(tt_db *db, const char *sql, size_t len, double deadline_ms,
                                    tt_error *err);
/* Bytes of the current row as max_bytes counts them (8 per number). */
size_t tt_row_bytes(sqlite3_stmt *st, int ncols);
/* Turns a failed prepare or step into an error a user can act on. */
void tt_db_fail(tt_db *db, int rc, tt_error *err);
/* Column c of the current row into v; text and blobs are copied into a
 * (or point into SQLite's memory, valid until the next step, when a is
 * NULL). */
void tt_copy_value(tt_arena *a, sqlite3_stmt *st, int c, tt_value *v);

/* Replaces printf() and format() with versions that refuse a width or
 * precision above the length limit (one such call can otherwise spin for
 * seconds inside a single opcode, out of the progress handler's reach). */
int tt_printf_guard_register(sqlite3 *h);
/* Replaces instr(), replace() and the two-argument trims with linear-time
 * versions (the built-ins are O(n*m) inside one opcode). */
int tt_search_guard_register(sqlite3 *h);

/* ---- CSV files (csv_read.c, csv.c) ------------------------------------ */

#define TT_CSV_MAX_COLUMNS 500        /* SQLITE_LIMIT_COLUMN of every handle */
#define TT_CSV_MAX_FIELD TT_LIMIT_LENGTH

typedef struct tt_csv_reader tt_csv_reader;
tt_csv_reader *tt_csv_reader_new(FILE *f, const char *name, char delim);
void tt_csv_reader_free(tt_csv_reader *r);
/* Skips a UTF-8 byte order mark; a UTF-16 one is an error. */
bool tt_csv_reader_skip_bom(tt_csv_reader *r, tt_error *err);
/* 1: a record (its fields until the next call), 0: the end, -1: err
 * names the file and line. Lines with nothing on them are skipped. */
int tt_csv_next(tt_csv_reader *r, tt_error *err);
size_t tt_csv_nfields(const tt_csv_reader *r);
const char *tt_csv_field(const tt_csv_reader *r, size_t i, size_t *len);
long tt_csv_record_line(const tt_csv_reader *r);
long long tt_csv_reader_offset(const tt_csv_reader *r);
/* ',', ';', tab or '|': the one that splits the first lines of the sample
 * into the same number of fields, most fields first; ',' when none does. */
char tt_csv_sniff_delimiter(const char *sample, size_t n);

typedef enum tt_csv_kind { TT_CSV_EMPTY, TT_CSV_INT, TT_CSV_REAL, TT_CSV_TEXT } tt_csv_kind;
/* What a field holds: an integer (no leading zero, fits 64 bits), a real
 * (digits with a point or an exponent), or text. */
tt_csv_kind tt_csv_value_kind(const char *s, size_t n);

/* The in-memory database of the CSV file or folder at path (real: its
 * resolved path), loaded once per process and file contents and shared;
 * NULL with err filled in. */
tt_csv_data *tt_csv_acquire(const char *path, const char *real, tt_csv_header header,
                            tt_error *err);
void tt_csv_release(tt_csv_data *d);
/* A fresh connection reading d, read-only (sqlite3_deserialize of the one
 * shared image: no copy); NULL with err filled in. */
sqlite3 *tt_csv_connect(tt_csv_data *d, const char *path, tt_error *err);

/* ---- PostgreSQL (pg.c, pg_catalog.c) ---------------------------------- */

/* Connects to the server at uri (db->path is set to its redacted form);
 * NULL with err filled in (never the password). */
tt_db *tt_pg_open(const char *uri, const tt_db_opts *opts, tt_error *err);
void tt_pg_close(tt_pg *pg);
tt_result *tt_pg_query(tt_db *db, const char *sql, size_t len, tt_error *err);
bool tt_pg_snapshot_begin(tt_db *db, uint64_t *version, tt_error *err);
/* One statement's rows one at a time (cursor.c wraps it). */
typedef struct tt_pg_run tt_pg_run;
tt_pg_run *tt_pg_run_open(tt_db *db, const char *sql, size_t len, double timeout_s,
                          tt_error *err);
/* 1: a row (values valid until the next call), 0: the end, -1: err. */
int tt_pg_run_next(tt_pg_run *run, const tt_value **row, size_t *row_bytes, tt_error *err);
size_t tt_pg_run_ncols(const tt_pg_run *run);
const char *tt_pg_run_name(const tt_pg_run *run, size_t col);
const char *tt_pg_run_decltype(const tt_pg_run *run, size_t col);
/* Stops the statement if it still runs, ends the transaction (ROLLBACK). */
void tt_pg_run_close(tt_pg_run *run);
tt_catalog *tt_pg_catalog_load(tt_db *db, tt_error *err);
/* Whether --schemas (opts.schemas, NULL: all) keeps the schema named nsp. */
bool tt_pg_schema_wanted(const char *list, const char *nsp);

/* catalog.c: a sample of t (SQL that names it: from) and the frequent
 * values of its text columns, within the catalog's budget; the row count
 * too unless it is already known (TT_ROWS_STAT1). */
void tt_catalog_probe(tt_db *db, tt_arena *a, tt_table_info *t, const char *from,
                      double budget_end);
#define TT_PROBE_BUDGET_S 3.0   /* counts and samples of the whole schema */

/* The limits that apply to the query running now: its own, or the
 * handle's. */
static inline const tt_db_opts *tt_db_limits(const tt_db *db) {
  return db->query_opts ? db->query_opts : &db->opts;
}

/* A result keeps at most this many cells (NULL and empty ones cost memory
 * though they weigh no bytes): past it the result is cut as by max_bytes. */
#define TT_MAX_CELLS 2000000
/* Room for one more row of r (*alloc rows are allocated; doubled when
 * full): the cells of row r->nrows, for the caller to fill. */
tt_value *tt_result_grow(tt_result *r, size_t *alloc);

#endif
