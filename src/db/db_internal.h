/* db_internal.h — what the files of the db layer share and nobody else
 * sees: the handle's shared fields, and the helpers every engine uses
 * (errors, limits, the checks of SQL text, names as shown, the result
 * builder with its caps, the catalog's probes). Everything declared here
 * lives in the shared files of src/db/ and calls no engine by name: an
 * engine's own code lives in its folder (src/db/sqlite/, src/db/pg/) and
 * is reached through its table (engine.h). */
#ifndef TT_DB_INTERNAL_H
#define TT_DB_INTERNAL_H

#include "db/db.h"

typedef struct tt_db_engine tt_db_engine;

/* Reference limits (../shared/corpus/README.md). */
#define TT_LIMIT_LENGTH 1000000
#define TT_LIMIT_SQL_LENGTH 100000
#define TT_HEAP_LIMIT (256LL * 1024 * 1024)
#define TT_LIMIT_VDBE_OP 25000

struct tt_db {
  const tt_db_engine *engine; /* the engine that reads it (engines.c chose it) */
  void *state;         /* the engine's own state (its open makes it, its
                        * close frees it) */
  tt_db_target target; /* what was opened (the handle's own copy) */
  const char *name;    /* how messages and tt_db_path name it, pointing into
                        * target: as given for a file, without its password
                        * for a URI (the engine's open sets it) */
  tt_db_opts opts;
  const tt_db_opts *query_opts; /* the limits of the query running now, when
                                 * its caller gave its own (tt_db_query_opts);
                                 * NULL: opts */
  bool trusted_text;   /* SQL tabletalk wrote (the catalog's): raw names allowed,
                        * no parse-level guard */
};

/* The limits that apply to the query running now: its own, or the
 * handle's. */
static inline const tt_db_opts *tt_db_limits(const tt_db *db) {
  return db->query_opts ? db->query_opts : &db->opts;
}

/* ---- errors (error.c) --------------------------------------------------- */

void tt_db_set_error(tt_error *err, tt_errkind kind, const char *fmt, ...) TT_PRINTF(3, 4);
/* A TT_ERR_REFUSED error with its reason code. */
void tt_db_refuse(tt_error *err, tt_db_refusal reason, const char *fmt, ...) TT_PRINTF(3, 4);

/* ---- SQL text (sql_text.c) ---------------------------------------------- */

/* The checks every engine makes before its own guard sees the text: no NUL
 * byte, valid UTF-8 (unless trusted: tabletalk's own SQL may name a name's
 * raw bytes), at most TT_LIMIT_SQL_LENGTH bytes. Clears err first. */
bool tt_db_check_sql_text(const char *sql, size_t len, bool trusted, tt_error *err);

/* ---- names (names.c) ---------------------------------------------------- */

/* A name as shown (a copy in a): as it is when valid UTF-8, else with each
 * invalid byte written \xHH. */
const char *tt_db_shown_name(tt_arena *a, const char *raw);

/* ---- the target (target.c) ---------------------------------------------- */

/* A deep copy of src into dst (free with tt_db_target_free). */
void tt_db_target_copy(tt_db_target *dst, const tt_db_target *src);

/* ---- secrets (secrets.c) ------------------------------------------------- */

/* text with every form of the secrets of the connection string given (a
 * URI's password as written and percent-decoded, ?password= and
 * ?sslpassword= under any spelling of the key, a keyword/value string's
 * quoted or escaped password) masked as "***" wherever they occur
 * (free()). */
char *tt_db_secrets_masked(const char *given, const char *text);
/* given (a URI) as shown: its secrets and PGPASSWORD's value masked. */
char *tt_db_target_shown(const char *given);
/* Masks in err's message and hint every form of the secrets of given and
 * the value of PGPASSWORD, also the start of one that the end of a full
 * field cut off. */
void tt_db_secrets_scrub(const char *given, tt_error *err);
/* The same for a target named by a URI (nothing to do for files): called
 * once wherever an engine's table returns an error (db.c, cursor.c,
 * catalog.c), so that no engine's message (libpq's own included) shows a
 * password. */
void tt_db_target_scrub(const tt_db_target *t, tt_error *err);

/* ---- result sets under the caps (result.c) ------------------------------ */

/* A result keeps at most this many cells (NULL and empty ones cost memory
 * though they weigh no bytes): past it the result is cut as by max_bytes. */
#define TT_MAX_CELLS 2000000

/* Builds a tt_result from rows an engine produces one at a time, applying
 * max_rows, max_bytes, the cell cap and count_rows the same way for every
 * engine. Per row: tt_result_builder_row, and when it says TT_ROW_WEIGH,
 * the row and its weight to tt_result_builder_add. */
typedef struct tt_result_builder {
  tt_result *r;
  size_t alloc;        /* rows allocated in r->cells */
  size_t cap_rows, cap_bytes;
  int64_t count_cap;   /* count_rows (0: stop at the cut) */
  int64_t seen;        /* rows the statement produced so far */
  bool counting;       /* past a cap: rows are only counted */
} tt_result_builder;

typedef enum tt_row_fate {
  TT_ROW_WEIGH,   /* may be kept: weigh it (tt_result_builder_add) */
  TT_ROW_COUNTED, /* past a cap: counted, not kept; step on */
  TT_ROW_ENOUGH,  /* counted as far as count_rows asks: stop stepping */
} tt_row_fate;

/* A new result of ncols columns under limits; its names and decltypes
 * (allocated, in r->arena) are the caller's to fill. */
tt_result *tt_result_builder_start(tt_result_builder *b, size_t ncols, const tt_db_opts *limits);
/* Counts one more row the statement produced and says what to do with it. */
tt_row_fate tt_result_builder_row(tt_result_builder *b);
/* Keeps the row (ncols values, borrowed: text and blobs are copied into
 * r->arena), which weighs rb bytes (text and blob bytes, 8 per number);
 * false when the byte or cell cap cuts the result before it (then
 * *enough says whether to stop stepping). A first row that alone weighs
 * more than max_bytes is kept with its longest cells cut to fit
 * (tt_row_copy_within), never left out. */
bool tt_result_builder_add(tt_result_builder *b, const tt_value *row, size_t rb, bool *enough);
/* What a row weighs against max_bytes: text and blob bytes, 8 per number. */
size_t tt_row_weight(const tt_value *row, size_t ncols);
/* Copies row src into dst (text and blobs into a, NUL-terminated) so that
 * it weighs at most budget: when it weighs more, its longest text and blob
 * cells are cut (text never inside a character), each keeping the same
 * room, and marked (tt_value.cut). Returns how many cells were cut. */
size_t tt_row_copy_within(tt_value *dst, const tt_value *src, size_t ncols, size_t budget,
                          tt_arena *a);

/* After the last step: total_rows, and total_exact when stepping reached
 * the end. */
void tt_result_builder_end(tt_result_builder *b, bool reached_end);

/* ---- the catalog's shared parts (catalog.c) ----------------------------- */

/* What an engine's catalog_load computes and hands to tt_catalog_probe;
 * unused since the shared code reads rows itself (tt_db_catalog_probe). */
#define TT_PROBE_BUDGET_S TT_CATALOG_SECONDS

/* One of tabletalk's own queries (its text may hold a name's raw bytes),
 * under its own limits, through the handle's engine; NULL with err. */
tt_result *tt_catalog_query(tt_db *db, const char *sql, double timeout_s, long max_rows,
                            long max_bytes, tt_error *err);
/* The engine's word that t's rows may be read, through SQL that names it
 * (from): t becomes TT_PROBE_PENDING with its row count unknown unless
 * statistics gave one (TT_ROWS_STAT1). Nothing is read here: the shared
 * code reads the rows afterwards (tt_db_catalog_probe), under bounds in
 * rows and steps, so that every engine's tables are read alike. budget_end
 * is not used. A table the engine never hands here is not read at all. */
void tt_catalog_probe(tt_db *db, tt_arena *a, tt_table_info *t, const char *from,
                      double budget_end);
/* How an engine writes the value index's query (tt_catalog_values_sql):
 * a value as text (before + the column's name + after), the length of
 * text in bytes, and a quoted name. */
typedef struct tt_values_dialect {
  const char *text_before, *text_after; /* "CAST(", " AS CHAR)"; "", "::text" */
  const char *byte_length;              /* "octet_length", "strlen" */
  void (*put_ident)(tt_buf *b, const char *name);
} tt_values_dialect;
/* The distinct values of column c of t among its first scan_rows rows,
 * as text, none longer than max_len bytes, in dialect d (the
 * sql_column_values of the engines that write it in SQL alone). */
void tt_catalog_values_sql(const tt_values_dialect *d, const tt_table_info *t,
                           const tt_column_info *c, long scan_rows, long max_len, tt_buf *out);
/* A cell as text in a (NULL for NULL); an integer cell's value (0 else). */
const char *tt_catalog_cell_text(tt_arena *a, const tt_result *r, size_t row, size_t col);
int64_t tt_catalog_cell_int(const tt_result *r, size_t row, size_t col);

#endif
