/* ddb_run.c — one statement on DuckDB, whole (query) or row by row (the
 * cursor).
 *
 * The check is DuckDB's own parser: duckdb_extract_statements must find
 * exactly one statement, and the prepared statement's type
 * (duckdb_prepared_statement_type) must be SELECT; anything else is
 * refused with its reason (COPY, EXPORT: a write; CREATE, DROP, ALTER: the
 * schema; ATTACH; SET, PRAGMA, CALL; INSTALL/LOAD; transactions) before it
 * runs. What a SELECT could still reach (a file, a glob, a URL, an
 * extension) is stopped by the settings the database was locked with
 * (ddb_open.c): DuckDB's "Permission Error" becomes a refusal too.
 *
 * The time limit counts DuckDB's time only (the caller's time between
 * rows is given back before each next): a watchdog thread calls
 * duckdb_interrupt when it runs out or when the caller cancels.
 *
 * Values come from DuckDB's vectors (ddb_values.c); a column of another
 * type (lists, structs, maps, UUID, intervals...) is cast to VARCHAR by
 * DuckDB, by running the statement as the subquery of one that casts
 * those columns (and is checked the same way). */
#include "db/duckdb/ddb.h"

#include <ctype.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

struct tt_ddb_run {
  tt_engine_cursor base; /* first: what the shared cursor reads */
  tt_db *db;
  tt_ddb *dd;
  const tt_ddb_api *api;
  ddb_prepared prep;
  ddb_result res;
  bool have_res, ended;
  bool unchecked; /* the database's macros could not be looked for (ddb_trust.c):
                   * only a refusal may follow */
  ddb_data_chunk chunk;
  ddb_idx chunk_rows, chunk_pos;
  tt_ddb_cols cols;    /* the columns and the current row's values */
  tt_arena *arena;
  /* the watchdog */
  pthread_t watchdog;
  bool watching;
  pthread_mutex_t mu;
  pthread_cond_t cv;
  bool stop, armed, fired, by_user;
  double deadline_ms;
  double timeout_s;
  volatile sig_atomic_t *cancel;
};

tt_engine_cursor *tt_ddb_run_base(tt_ddb_run *run) { return &run->base; }

/* ---- the watchdog ------------------------------------------------------------ */

static void *tt_ddb_watch(void *arg) {
  tt_ddb_run *run = arg;
  pthread_mutex_lock(&run->mu);
  while (!run->stop) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    ts.tv_nsec += 10 * 1000000L;
    if (ts.tv_nsec >= 1000000000L) {
      ts.tv_sec++;
      ts.tv_nsec -= 1000000000L;
    }
    pthread_cond_timedwait(&run->cv, &run->mu, &ts);
    if (run->stop || !run->armed) continue;
    bool user = run->cancel && *run->cancel;
    if (user || (run->timeout_s > 0 && tt_now_ms() > run->deadline_ms)) {
      if (!run->fired) run->by_user = user;
      run->fired = true;
      run->api->interrupt(run->dd->conn);
    }
  }
  pthread_mutex_unlock(&run->mu);
  return NULL;
}

static bool tt_ddb_fired(tt_ddb_run *run) {
  pthread_mutex_lock(&run->mu);
  bool fired = run->fired;
  pthread_mutex_unlock(&run->mu);
  return fired;
}

static void tt_ddb_arm(tt_ddb_run *run, bool on) {
  pthread_mutex_lock(&run->mu);
  run->armed = on;
  pthread_mutex_unlock(&run->mu);
}

/* ---- errors ------------------------------------------------------------------ */

/* DuckDB's message as tabletalk's error: a stop by the watchdog, a
 * refusal for what the lock forbids, else the engine's error with a
 * repair hint for its usual causes. */
static void tt_ddb_fail(tt_ddb_run *run, const char *msg, tt_error *err) {
  msg = msg && *msg ? msg : "DuckDB failed";
  bool fired = false, user = false;
  if (run) {
    pthread_mutex_lock(&run->mu);
    fired = run->fired;
    user = run->by_user;
    pthread_mutex_unlock(&run->mu);
  }
  if (fired || strncmp(msg, "INTERRUPT Error", 15) == 0) {
    if (user || !run)
      tt_db_set_error(err, TT_ERR_CANCELLED, "query cancelled");
    else
      tt_db_set_error(err, TT_ERR_TIMEOUT,
                      "query stopped after the %.3g s time limit; narrow it (WHERE, LIMIT) or "
                      "raise --timeout",
                      run->timeout_s);
    return;
  }
  if (strncmp(msg, "Permission Error", 16) == 0) {
    tt_db_refuse(err, TT_REFUSE_FILE,
                 "only the files given can be read (no other file, folder, glob or URL): %s",
                 msg);
    return;
  }
  /* CREATE of any kind fails while binding, before its type is known:
   * built-in functions come first in the search path (ddb_open.c), and
   * DuckDB creates nothing there */
  if (strstr(msg, "Cannot create entry in system catalog")) {
    tt_db_refuse(err, TT_REFUSE_SCHEMA, "schema changes are not allowed: only a SELECT runs");
    return;
  }
  if (strncmp(msg, "Out of Memory Error", 19) == 0) {
    tt_db_set_error(err, TT_ERR_LIMIT, "DuckDB: %s", msg);
    tt_error_hint(err, "the query needs more memory than DuckDB's memory_limit: aggregate more, "
                       "or select fewer columns");
    return;
  }
  tt_db_set_error(err, TT_ERR_SQL, "%s", msg);
  if (strncmp(msg, "Catalog Error", 13) == 0)
    tt_error_hint(err, "DuckDB SQL: check the table and column names against the schema "
                       "(names are case-insensitive; quote odd ones with \"double quotes\")");
  else if (strncmp(msg, "Binder Error", 12) == 0)
    tt_error_hint(err, "DuckDB SQL: check the columns and their types; text is never cast to a "
                       "number by itself: use TRY_CAST(col AS DOUBLE)");
  else if (strncmp(msg, "Conversion Error", 16) == 0)
    tt_error_hint(err, "a value does not convert to the type asked for: use TRY_CAST, which "
                       "gives NULL instead");
  else if (strncmp(msg, "Parser Error", 12) == 0)
    tt_error_hint(err, "DuckDB SQL syntax: strings in 'single quotes', names in \"double "
                       "quotes\"");
}

/* ---- the statement check ----------------------------------------------------- */

static void tt_ddb_refuse_type(ddb_statement_type t, tt_error *err) {
  switch (t) {
  case DDB_STATEMENT_INSERT:
  case DDB_STATEMENT_UPDATE:
  case DDB_STATEMENT_DELETE:
  case DDB_STATEMENT_VACUUM:
    tt_db_refuse(err, TT_REFUSE_WRITE, "writes are not allowed: only a SELECT runs");
    return;
  case DDB_STATEMENT_COPY:
  case DDB_STATEMENT_EXPORT:
    tt_db_refuse(err, TT_REFUSE_WRITE,
                 "COPY and EXPORT are not allowed: nothing is written, only a SELECT runs");
    return;
  case DDB_STATEMENT_CREATE:
  case DDB_STATEMENT_CREATE_FUNC:
  case DDB_STATEMENT_DROP:
  case DDB_STATEMENT_ALTER:
  case DDB_STATEMENT_ANALYZE:
    tt_db_refuse(err, TT_REFUSE_SCHEMA, "schema changes are not allowed: only a SELECT runs");
    return;
  case DDB_STATEMENT_ATTACH:
  case DDB_STATEMENT_DETACH:
    tt_db_refuse(err, TT_REFUSE_ATTACH, "ATTACH and DETACH are not allowed: only the files "
                                        "given are read");
    return;
  case DDB_STATEMENT_TRANSACTION:
    tt_db_refuse(err, TT_REFUSE_TRANSACTION,
                 "transaction statements are not allowed: each query runs on its own");
    return;
  case DDB_STATEMENT_PRAGMA:
  case DDB_STATEMENT_SET:
  case DDB_STATEMENT_VARIABLE_SET:
  case DDB_STATEMENT_CALL:
    tt_db_refuse(err, TT_REFUSE_PRAGMA,
                 "SET, PRAGMA and CALL are not allowed: the settings are fixed");
    return;
  case DDB_STATEMENT_LOAD:
  case DDB_STATEMENT_EXTENSION:
    tt_db_refuse(err, TT_REFUSE_OTHER,
                 "INSTALL and LOAD are not allowed: no extension is installed or loaded");
    return;
  case DDB_STATEMENT_EXPLAIN:
    tt_db_refuse(err, TT_REFUSE_EXPLAIN, "EXPLAIN is not allowed: run the SELECT itself");
    return;
  case DDB_STATEMENT_MULTI:
    tt_db_refuse(err, TT_REFUSE_MULTIPLE, "only one statement per query is allowed");
    return;
  default:
    tt_db_refuse(err, TT_REFUSE_OTHER, "only a SELECT is allowed");
    return;
  }
}

/* sql's first word, past blanks and comments (its start; *n its length,
 * 0 when there is none). */
static const char *tt_ddb_first_word(const char *sql, size_t *n) {
  const char *p = sql;
  *n = 0;
  for (;;) {
    while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r' || *p == '\f' || *p == '\v') p++;
    if (p[0] == '-' && p[1] == '-') {
      p += strcspn(p, "\n");
    } else if (p[0] == '/' && p[1] == '*') {
      const char *e = strstr(p + 2, "*/");
      if (!e) return p; /* an unclosed comment: DuckDB's parser says so */
      p = e + 2;
    } else {
      break;
    }
  }
  while (isalnum((unsigned char)p[*n]) || p[*n] == '_') (*n)++;
  return p;
}

static bool tt_ddb_word_is(const char *w, size_t n, const char *word) {
  return n == strlen(word) && strncasecmp(w, word, n) == 0;
}

/* True when sql's first word is PRAGMA: DuckDB rewrites a PRAGMA that
 * only reads (PRAGMA database_list) into a SELECT while parsing, so its
 * statement type cannot tell; PRAGMA is refused like SET and CALL
 * whatever it does. */
static bool tt_ddb_starts_with_pragma(const char *sql) {
  size_t n;
  const char *w = tt_ddb_first_word(sql, &n);
  return tt_ddb_word_is(w, n, "pragma");
}

/* A statement DuckDB could not bind (COPY ... TO names a file, COPY ...
 * FROM a view, CREATE TABLE AS read_csv(...)): when DuckDB's parser says
 * it is not a SELECT (json_serialize_sql serialises only those), the
 * refusal is for what the statement is, by its first word, not for why it
 * did not bind; false when it is a SELECT (its error is the user's). */
static bool tt_ddb_refuse_unbound(tt_ddb_run *run, const char *sql, tt_error *err) {
  tt_buf q = TT_BUF_INIT;
  tt_buf_puts(&q, "SELECT (json_serialize_sql(");
  tt_buf_put_sql_string(&q, sql);
  tt_buf_puts(&q, ") LIKE '{\"error\":true,\"error_type\":\"not implemented\"%')::VARCHAR");
  char *v = tt_ddb_scalar_text(run->dd, tt_buf_cstr(&q));
  tt_buf_free(&q);
  bool other = v && strcmp(v, "true") == 0;
  free(v);
  if (!other) return false;
  static const struct {
    const char *word;
    ddb_statement_type type;
  } words[] = {{"copy", DDB_STATEMENT_COPY},         {"export", DDB_STATEMENT_EXPORT},
               {"import", DDB_STATEMENT_COPY},       {"create", DDB_STATEMENT_CREATE},
               {"insert", DDB_STATEMENT_INSERT},     {"attach", DDB_STATEMENT_ATTACH},
               {"install", DDB_STATEMENT_EXTENSION}, {"load", DDB_STATEMENT_LOAD}};
  size_t n;
  const char *w = tt_ddb_first_word(sql, &n);
  ddb_statement_type t = DDB_STATEMENT_INVALID;
  for (size_t i = 0; i < sizeof words / sizeof *words; i++)
    if (tt_ddb_word_is(w, n, words[i].word)) t = words[i].type;
  tt_ddb_refuse_type(t, err);
  return true;
}

/* sql (NUL-terminated) prepared, when it is exactly one SELECT without
 * parameters; false with err. */
static bool tt_ddb_prepare(tt_ddb_run *run, const char *sql, ddb_prepared *out, tt_error *err) {
  const tt_ddb_api *api = run->api;
  ddb_extracted ex = NULL;
  *out = NULL;
  if (tt_ddb_starts_with_pragma(sql)) {
    tt_ddb_refuse_type(DDB_STATEMENT_PRAGMA, err);
    return false;
  }
  ddb_idx n = api->extract_statements(run->dd->conn, sql, &ex);
  bool ok = false;
  if (n == 0) {
    const char *e = ex ? api->extract_statements_error(ex) : NULL;
    if (e && *e) tt_ddb_fail(run, e, err);
    else tt_db_refuse(err, TT_REFUSE_EMPTY, "no statement: the query is empty or only comments");
  } else if (n > 1) {
    tt_db_refuse(err, TT_REFUSE_MULTIPLE,
                 "only one statement per query is allowed; remove what follows the first "
                 "statement");
  } else if (api->prepare_extracted_statement(run->dd->conn, ex, 0, out) != DDB_SUCCESS) {
    const char *e = *out ? api->prepare_error(*out) : NULL;
    if (!(e && strncmp(e, "INTERRUPT", 9) != 0 && tt_ddb_refuse_unbound(run, sql, err)))
      tt_ddb_fail(run, e, err);
  } else if (api->prepared_statement_type(*out) != DDB_STATEMENT_SELECT) {
    tt_ddb_refuse_type(api->prepared_statement_type(*out), err);
  } else if (run->unchecked) {
    tt_ddb_trust_refuse_unchecked(run->dd, err);
  } else if (api->nparams(*out) > 0) {
    tt_db_refuse(err, TT_REFUSE_OTHER, "parameters ($1, ?) cannot be given values here: "
                                       "write the values into the query");
  } else {
    ok = true;
  }
  if (!ok && *out) api->destroy_prepare(out);
  if (ex) api->destroy_extracted(&ex);
  return ok;
}

/* The statement as a subquery whose other-typed columns DuckDB casts to
 * VARCHAR (by position: names may repeat), each under its own name; NULL
 * when every column is read directly. */
static char *tt_ddb_cast_wrap(tt_ddb_run *run, const char *sql) {
  const tt_ddb_api *api = run->api;
  ddb_idx n = api->prepared_statement_column_count(run->prep);
  bool need = false;
  for (ddb_idx i = 0; i < n; i++)
    if (!tt_ddb_type_direct(api->prepared_statement_column_type(run->prep, i))) need = true;
  if (!need) return NULL;
  size_t len = strlen(sql);
  while (len && (sql[len - 1] == ';' || sql[len - 1] == ' ' || sql[len - 1] == '\n' ||
                 sql[len - 1] == '\t' || sql[len - 1] == '\r'))
    len--;
  tt_buf b = TT_BUF_INIT;
  tt_buf_puts(&b, "SELECT ");
  for (ddb_idx i = 0; i < n; i++) {
    if (i) tt_buf_puts(&b, ", ");
    bool direct = tt_ddb_type_direct(api->prepared_statement_column_type(run->prep, i));
    tt_buf_printf(&b, direct ? "#%llu" : "CAST(#%llu AS VARCHAR)", (unsigned long long)i + 1);
    tt_buf_puts(&b, " AS ");
    char *name = (char *)api->prepared_statement_column_name(run->prep, i); /* duckdb_free */
    tt_buf_put_sql_ident(&b, name ? name : "");
    if (name) api->free(name);
  }
  tt_buf_puts(&b, " FROM (\n");
  tt_buf_append(&b, sql, len);
  tt_buf_puts(&b, "\n) AS tt_ddb_q");
  return tt_buf_detach(&b);
}

/* ---- opening, stepping, closing ------------------------------------------------ */

static void tt_ddb_run_free(tt_ddb_run *run) {
  if (!run) return;
  if (run->watching) {
    pthread_mutex_lock(&run->mu);
    run->stop = true;
    pthread_cond_signal(&run->cv);
    pthread_mutex_unlock(&run->mu);
    pthread_join(run->watchdog, NULL);
  }
  pthread_mutex_destroy(&run->mu);
  pthread_cond_destroy(&run->cv);
  if (run->chunk) run->api->destroy_data_chunk(&run->chunk);
  if (run->have_res) run->api->destroy_result(&run->res);
  if (run->prep) run->api->destroy_prepare(&run->prep);
  tt_ddb_cols_free(&run->cols);
  tt_arena_free(run->arena);
  free(run);
}

/* A CSV column of msg's error read as text from now on (its view made
 * again, the warning saying so); false when msg is no such error. */
static bool tt_ddb_demote(tt_db *db, const char *msg) {
  tt_ddb *dd = tt_ddb_of(db);
  char *column = NULL;
  tt_ddb_view *v = tt_ddb_csv_demote(dd, msg, &column);
  tt_error err;
  bool ok = v && tt_ddb_view_make(db, dd, v, &err);
  if (ok) tt_ddb_csv_note(dd, v, column);
  free(column);
  return ok;
}

/* How many CSV columns one statement may find holding text (each read as
 * text from then on) before its error is the user's. */
#define TT_DDB_DEMOTIONS 8

/* Prepares (checked), runs and reads the first chunk of text, so that
 * an error of DuckDB's reading shows here; false with err (the result
 * kept for tt_ddb_csv_demote). */
static bool tt_ddb_start(tt_ddb_run *run, const char *text, tt_error *err) {
  if (!tt_ddb_prepare(run, text, &run->prep, err)) return false;
  char *wrapped = tt_ddb_cast_wrap(run, text);
  if (wrapped) {
    run->api->destroy_prepare(&run->prep);
    bool ok = tt_ddb_prepare(run, wrapped, &run->prep, err);
    free(wrapped);
    if (!ok) return false;
  }
  memset(&run->res, 0, sizeof run->res);
  ddb_state st = run->api->execute_prepared_streaming(run->prep, &run->res);
  run->have_res = true;
  const char *e = NULL;
  if (st == DDB_SUCCESS) {
    run->chunk = run->api->fetch_chunk(run->res);
    if (run->chunk) {
      run->chunk_rows = run->api->data_chunk_get_size(run->chunk);
      run->chunk_pos = 0;
      return true;
    }
    e = run->api->result_error(&run->res);
    if (!(e && *e) && !tt_ddb_fired(run)) {
      run->ended = true; /* no row at all */
      return true;
    }
  } else {
    e = run->api->result_error(&run->res);
  }
  tt_ddb_fail(run, e, err);
  return false;
}

/* What tt_ddb_start made, undone for another attempt. */
static void tt_ddb_run_reset(tt_ddb_run *run) {
  if (run->chunk) run->api->destroy_data_chunk(&run->chunk);
  if (run->have_res) run->api->destroy_result(&run->res);
  if (run->prep) run->api->destroy_prepare(&run->prep);
  run->chunk = NULL;
  run->have_res = false;
  run->prep = NULL;
}

tt_ddb_run *tt_ddb_run_open(tt_db *db, const char *sql, size_t len, double timeout_s,
                            tt_error *err) {
  if (!tt_db_check_sql_text(sql, len, db->trusted_text, err)) return NULL;
  tt_ddb *dd = tt_ddb_of(db);
  bool unchecked = false;
  if (!tt_ddb_trust_check(dd, sql, len, &unchecked, err)) return NULL;
  tt_ddb_run *run = tt_xcalloc(1, sizeof *run);
  run->db = db;
  run->dd = dd;
  run->api = dd->api;
  run->arena = tt_arena_new();
  run->timeout_s = timeout_s;
  run->unchecked = unchecked;
  run->cancel = tt_db_limits(db)->cancel;
  pthread_mutex_init(&run->mu, NULL);
  pthread_cond_init(&run->cv, NULL);
  run->deadline_ms = tt_now_ms() + timeout_s * 1000.0;
  run->armed = true;
  if (pthread_create(&run->watchdog, NULL, tt_ddb_watch, run) != 0) {
    tt_db_set_error(err, TT_ERR_UNAVAILABLE, "cannot start the time limit's thread");
    tt_ddb_run_free(run);
    return NULL;
  }
  run->watching = true;
  char *text = tt_xstrndup(sql, len);
  bool ok = false;
  for (int attempt = 0;; attempt++) {
    ok = tt_ddb_start(run, text, err);
    if (ok || attempt >= TT_DDB_DEMOTIONS || tt_ddb_fired(run) ||
        !tt_ddb_demote(db, run->have_res ? run->api->result_error(&run->res) : NULL))
      break;
    /* a CSV column read as text from now on: the same statement again */
    tt_ddb_run_reset(run);
  }
  free(text);
  tt_ddb_arm(run, false);
  if (!ok) {
    tt_ddb_run_free(run);
    return NULL;
  }
  tt_ddb_cols_read(&run->cols, run->api, &run->res, run->arena, &run->base.names,
                   &run->base.decltypes);
  run->base.ncols = run->cols.n;
  return run;
}

int tt_ddb_run_next(tt_ddb_run *run, const tt_value **row, size_t *row_bytes, tt_error *err) {
  if (run->ended) return 0;
  while (!run->chunk || run->chunk_pos >= run->chunk_rows) {
    if (run->chunk) run->api->destroy_data_chunk(&run->chunk);
    run->chunk = NULL;
    pthread_mutex_lock(&run->mu);
    run->deadline_ms += run->base.away_ms; /* the caller's time is not the query's */
    run->base.away_ms = 0;
    run->armed = true;
    pthread_mutex_unlock(&run->mu);
    run->chunk = run->api->fetch_chunk(run->res);
    tt_ddb_arm(run, false);
    if (!run->chunk) {
      const char *e = run->api->result_error(&run->res);
      bool fired;
      pthread_mutex_lock(&run->mu);
      fired = run->fired;
      pthread_mutex_unlock(&run->mu);
      if ((e && *e) || fired) {
        tt_ddb_fail(run, e, err);
        if (!fired && tt_ddb_demote(run->db, e))
          tt_error_hint(err, "the column is read as text from now on: run the query again (with "
                             "TRY_CAST where it needs numbers)");
        return -1;
      }
      run->ended = true;
      return 0;
    }
    run->chunk_rows = run->api->data_chunk_get_size(run->chunk);
    run->chunk_pos = 0;
  }
  tt_ddb_cols_row(&run->cols, run->chunk, run->chunk_pos);
  run->chunk_pos++;
  *row = run->cols.row;
  *row_bytes = tt_row_weight(run->cols.row, run->cols.n);
  return 1;
}

void tt_ddb_run_close(tt_ddb_run *run) { tt_ddb_run_free(run); }
