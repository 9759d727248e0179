/* sqlite.h — the SQLite engine's own header, seen only by the files of
 * src/db/sqlite/: the engine's state behind a tt_db (tt_sqlite) and what
 * its files call of each other. The engine reads SQLite files and, through
 * its CSV loader (csv.h), CSV files loaded into an in-memory database. */
#ifndef TT_DB_SQLITE_H
#define TT_DB_SQLITE_H

#include <sqlite3.h>

#include "db/engine.h"

typedef struct tt_csv_data tt_csv_data;

/* A file's identity and the facts that change when it is written. */
typedef struct tt_file_id {
  uint64_t dev, ino;
  int64_t size, mtime_ns, ctime_ns;
} tt_file_id;

/* The engine's state: db->state of a handle it opened. */
typedef struct tt_sqlite {
  tt_db *db;           /* the handle (target, opts, limits, name) */
  sqlite3 *h;
  char *real;          /* resolved at open: what is opened */
  bool automatic_immutable; /* a WAL file no writer had open, read without
                             * locks: every read is checked afterwards */
  bool had_shm;        /* ... with a -shm left beside it */
  tt_file_id file;     /* the file when connected */
  uint64_t serial;     /* differs for every connection made */
  bool in_snapshot;    /* a read transaction spans several queries */
  bool internal;       /* tabletalk's own statement: the authorizer allows it */
  char **names;        /* pairs (shown, raw) of names that are not UTF-8 */
  size_t nnames;
  bool names_learned;  /* ... read from the schema on this connection */
  bool stepping;      /* sqlite3_step is running: schema pragmas allowed */
  bool denied;        /* the authorizer refused something */
  bool deny_weak;     /* ... but only a schema-table write so far */
  char deny[320];     /* why, in words for the user */
  tt_db_refusal deny_reason; /* ... and as a code */
  double deadline_ms; /* progress handler stops the query after this */
  long steps_left;    /* ... or after this many more calls (of 1000
                       * instructions each: opts.max_steps); -1: no bound */
  bool over_steps;    /* ... which it did */
  bool timed_out;
  bool cancelled;      /* opts.cancel stopped the query */
  bool preparing;      /* in sqlite3_prepare (for telling limits apart) */
  bool varies;        /* calls a function whose value changes between runs */
  tt_csv_data *csv;   /* CSV files loaded in memory (csv.c), shared by
                       * every handle on them; NULL for a SQLite file */
  char *warning;      /* tt_db_warning's text, NULL until asked */
  sqlite3_stmt *own[3]; /* tabletalk's own snapshot statements (live.c), kept
                         * prepared on this connection; NULL until first used */
} tt_sqlite;

static inline tt_sqlite *tt_sqlite_of(const tt_db *db) { return (tt_sqlite *)db->state; }

/* ---- the file (file.c) --------------------------------------------------- */

bool tt_db_file_id_read(const char *path, tt_file_id *id);
bool tt_db_same_file(const tt_file_id *a, const tt_file_id *b);
bool tt_db_same_contents(const tt_file_id *a, const tt_file_id *b);
/* What the file itself says and what lies beside it: WAL mode (header
 * bytes 18-19), and whether -wal and -shm exist. */
void tt_db_wal_state(const char *path, bool *is_wal, bool *has_wal, bool *has_shm);

/* ---- connecting (connect.c) --------------------------------------------- */

/* (Re)connects s->h to s->real (or the CSV image), choosing how to open it
 * from what lies beside the file now. */
bool tt_db_connect(tt_sqlite *s, tt_error *err);
/* Finalizes the snapshot statements kept on s->h (live.c): before it is
 * closed. */
void tt_sqlite_own_forget(tt_sqlite *s);
/* The checks before a SQLite file is opened: it exists, is a regular
 * file, is readable (messages name it as given). */
bool tt_db_check_file(const char *path, const char *given, tt_error *err);
/* One limit for the whole process: a query may not make SQLite allocate
 * more than TT_HEAP_LIMIT, whatever it does. */
void tt_db_heap_limit(void);

/* ---- following the file (live.c) ---------------------------------------- */

/* Before a query, follows the file (a replaced file, a writer that came or
 * went; CSV files loaded again by deadline_ms, tt_now_ms time); after an
 * unlocked read, says whether it still holds. */
bool tt_db_refresh(tt_sqlite *s, double deadline_ms, tt_error *err);
bool tt_db_unchanged(tt_sqlite *s);
/* A failure worth another try before deadline_ms: another program's lock,
 * or a journal that looks hot because its writer is at work on a file that
 * replaced ours by rename (the next tt_db_refresh follows the file). */
bool tt_db_transient(const tt_sqlite *s, int rc, double deadline_ms);
bool tt_sqlite_snapshot_begin(tt_db *db, uint64_t *version, tt_error *err);
void tt_sqlite_snapshot_end(tt_db *db);
bool tt_sqlite_snapshot_quick(tt_db *db, uint64_t *version);

/* ---- the guard (guard.c, printf_guard.c, search_guard.c) ---------------- */

/* Installs authorizer, progress handler, module pruning and the checked
 * printf on a freshly opened connection. */
void tt_guard_install(tt_sqlite *s);
/* Clears per-query guard state and arms the deadline (tt_now_ms time). */
void tt_guard_arm(tt_sqlite *s, double deadline_ms);
/* True when the statement is a PRAGMA statement (its first keyword). */
bool tt_guard_is_pragma_statement(const char *sql, size_t len);
/* True when what follows the first statement holds only whitespace,
 * comments and semicolons. */
bool tt_guard_tail_is_empty(const char *tail, const char *end);
/* Replaces printf() and format() with versions that refuse a width or
 * precision above the length limit (one such call can otherwise spin for
 * seconds inside a single opcode, out of the progress handler's reach). */
int tt_printf_guard_register(sqlite3 *h);
/* Replaces instr(), replace() and the two-argument trims with linear-time
 * versions (the built-ins are O(n*m) inside one opcode). */
int tt_search_guard_register(sqlite3 *h);

/* ---- failures (fail.c) -------------------------------------------------- */

/* Turns a failed call (rc, SQLite's message) into an error a user can act
 * on. */
void tt_db_explain_failure(tt_sqlite *s, int rc, const char *msg, tt_error *err);
/* Turns a failed prepare or step into an error a user can act on. */
void tt_db_fail(tt_sqlite *s, int rc, tt_error *err);

/* ---- names that are not UTF-8 (names.c) --------------------------------- */

/* name's shown form in *shown, and its raw bytes in *raw when they differ
 * (remembered for tt_db_raw_names). */
void tt_db_name_forms(tt_sqlite *s, tt_arena *a, const char *name, const char **shown,
                      const char **raw);
/* SQL with names as shown ("caf\xE9" in quotes) turned into the names'
 * bytes; NULL when there is nothing to turn. */
char *tt_db_raw_names(tt_sqlite *s, const char *sql, size_t len, size_t *out_len);
/* Forgets the names learnt (another connection, perhaps another file). */
void tt_db_names_forget(tt_sqlite *s);

/* ---- running statements (exec.c, cursor.c) ------------------------------ */

/* The statement of sql once every check before running it has passed
 * (text, size, exactly one statement, no plain EXPLAIN, read-only), with
 * the guard armed; NULL with err filled in. */
sqlite3_stmt *tt_db_prepare_guarded(tt_sqlite *s, const char *sql, size_t len,
                                    double deadline_ms, tt_error *err);
/* Bytes of the current row as max_bytes counts them (8 per number). */
size_t tt_row_bytes(sqlite3_stmt *st, int ncols);
/* Column c of the current row into v; text and blobs are copied into a
 * (or point into SQLite's memory, valid until the next step, when a is
 * NULL). */
void tt_copy_value(tt_arena *a, sqlite3_stmt *st, int c, tt_value *v);
tt_result *tt_sqlite_query(tt_db *db, const char *sql, size_t len, tt_error *err);
tt_engine_cursor *tt_sqlite_cursor_open(tt_db *db, const char *sql, size_t len, tt_error *err);
int tt_sqlite_cursor_next(tt_engine_cursor *c, const tt_value **row, size_t *row_bytes,
                          tt_error *err);
void tt_sqlite_cursor_close(tt_engine_cursor *c);

/* ---- the catalog (catalog.c, comments.c, stamp.c) ----------------------- */

/* What proves the catalog of a SQLite file or of CSV files unchanged
 * (engine.h, catalog_stamp). */
bool tt_sqlite_catalog_stamp(tt_db *db, tt_catalog_stamp *out, tt_error *err);

tt_catalog *tt_sqlite_catalog_load(tt_db *db, tt_error *err);
void tt_sqlite_sql_column_values(const tt_table_info *t, const tt_column_info *c,
                                 long scan_rows, long max_len, tt_buf *out);
/* SQLite's rule for a declared type with text affinity. */
bool tt_sqlite_is_text_type(const char *decltype);
/* Descriptions from the SQL comments of t's CREATE TABLE text (its columns
 * must be loaded). */
void tt_catalog_read_comments(tt_arena *a, tt_table_info *t, const char *sql);

#endif
