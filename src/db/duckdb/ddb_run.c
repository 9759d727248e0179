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
 * Values come from DuckDB's vectors: integers, reals, text and blobs as
 * such; DECIMAL as a real when the value has at most 15 digits (else its
 * exact text); dates, times and timestamps as ISO text; ENUM as its text; any
 * other type (lists, structs, maps, UUID, intervals...) is cast to VARCHAR
 * by DuckDB, by running the statement as the subquery of one that casts
 * those columns (and is checked the same way). */
#include "db/duckdb/ddb.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct tt_ddb_run {
  tt_engine_cursor base; /* first: what the shared cursor reads */
  tt_db *db;
  tt_ddb *dd;
  const tt_ddb_api *api;
  ddb_prepared prep;
  ddb_result res;
  bool have_res, ended;
  ddb_data_chunk chunk;
  ddb_idx chunk_rows, chunk_pos;
  ddb_type *types;     /* per column: the type id */
  ddb_type *inner;     /* DECIMAL and ENUM: their storage type */
  uint8_t *width, *scale; /* DECIMAL */
  char ***enums;       /* ENUM: the dictionary */
  uint32_t *nenums;
  tt_value *row;
  tt_buf *text;        /* per column: formatted values (valid until the next row) */
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

/* sql (NUL-terminated) prepared, when it is exactly one SELECT without
 * parameters; false with err. */
static bool tt_ddb_prepare(tt_ddb_run *run, const char *sql, ddb_prepared *out, tt_error *err) {
  const tt_ddb_api *api = run->api;
  ddb_extracted ex = NULL;
  *out = NULL;
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
    tt_ddb_fail(run, *out ? api->prepare_error(*out) : NULL, err);
  } else if (api->prepared_statement_type(*out) != DDB_STATEMENT_SELECT) {
    tt_ddb_refuse_type(api->prepared_statement_type(*out), err);
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

/* Whether values of type t are read from the vector directly. */
static bool tt_ddb_type_direct(ddb_type t) {
  switch (t) {
  case DDB_TYPE_BOOLEAN: case DDB_TYPE_TINYINT: case DDB_TYPE_SMALLINT: case DDB_TYPE_INTEGER:
  case DDB_TYPE_BIGINT: case DDB_TYPE_UTINYINT: case DDB_TYPE_USMALLINT:
  case DDB_TYPE_UINTEGER: case DDB_TYPE_UBIGINT: case DDB_TYPE_FLOAT: case DDB_TYPE_DOUBLE:
  case DDB_TYPE_HUGEINT: case DDB_TYPE_UHUGEINT: case DDB_TYPE_VARCHAR: case DDB_TYPE_BLOB:
  case DDB_TYPE_DECIMAL: case DDB_TYPE_DATE: case DDB_TYPE_TIME: case DDB_TYPE_TIMESTAMP:
  case DDB_TYPE_TIMESTAMP_S: case DDB_TYPE_TIMESTAMP_MS: case DDB_TYPE_TIMESTAMP_NS:
  case DDB_TYPE_TIMESTAMP_TZ: case DDB_TYPE_ENUM: case DDB_TYPE_SQLNULL:
    return true;
  default:
    return false;
  }
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

/* ---- columns ------------------------------------------------------------------- */

static const char *tt_ddb_type_name(ddb_type t) {
  switch (t) {
  case DDB_TYPE_BOOLEAN: return "BOOLEAN";
  case DDB_TYPE_TINYINT: return "TINYINT";
  case DDB_TYPE_SMALLINT: return "SMALLINT";
  case DDB_TYPE_INTEGER: return "INTEGER";
  case DDB_TYPE_BIGINT: return "BIGINT";
  case DDB_TYPE_UTINYINT: return "UTINYINT";
  case DDB_TYPE_USMALLINT: return "USMALLINT";
  case DDB_TYPE_UINTEGER: return "UINTEGER";
  case DDB_TYPE_UBIGINT: return "UBIGINT";
  case DDB_TYPE_FLOAT: return "FLOAT";
  case DDB_TYPE_DOUBLE: return "DOUBLE";
  case DDB_TYPE_HUGEINT: return "HUGEINT";
  case DDB_TYPE_UHUGEINT: return "UHUGEINT";
  case DDB_TYPE_VARCHAR: return "VARCHAR";
  case DDB_TYPE_BLOB: return "BLOB";
  case DDB_TYPE_DATE: return "DATE";
  case DDB_TYPE_TIME: return "TIME";
  case DDB_TYPE_TIMESTAMP: return "TIMESTAMP";
  case DDB_TYPE_TIMESTAMP_S: return "TIMESTAMP_S";
  case DDB_TYPE_TIMESTAMP_MS: return "TIMESTAMP_MS";
  case DDB_TYPE_TIMESTAMP_NS: return "TIMESTAMP_NS";
  case DDB_TYPE_TIMESTAMP_TZ: return "TIMESTAMP WITH TIME ZONE";
  case DDB_TYPE_ENUM: return "ENUM";
  case DDB_TYPE_SQLNULL: return "NULL";
  default: return "";
  }
}

static void tt_ddb_columns(tt_ddb_run *run) {
  const tt_ddb_api *api = run->api;
  size_t n = (size_t)api->column_count(&run->res);
  tt_arena *a = run->arena;
  run->base.ncols = n;
  run->base.names = tt_arena_alloc(a, sizeof(char *) * (n ? n : 1));
  run->base.decltypes = tt_arena_alloc(a, sizeof(char *) * (n ? n : 1));
  run->types = tt_xcalloc(n ? n : 1, sizeof *run->types);
  run->inner = tt_xcalloc(n ? n : 1, sizeof *run->inner);
  run->width = tt_xcalloc(n ? n : 1, 1);
  run->scale = tt_xcalloc(n ? n : 1, 1);
  run->enums = tt_xcalloc(n ? n : 1, sizeof *run->enums);
  run->nenums = tt_xcalloc(n ? n : 1, sizeof *run->nenums);
  run->row = tt_xcalloc(n ? n : 1, sizeof *run->row);
  run->text = tt_xcalloc(n ? n : 1, sizeof *run->text);
  for (size_t i = 0; i < n; i++) {
    const char *name = api->column_name(&run->res, i);
    run->base.names[i] = tt_db_shown_name(a, name ? name : "");
    ddb_logical_type lt = api->column_logical_type(&run->res, i);
    ddb_type t = api->get_type_id(lt);
    run->types[i] = t;
    const char *tn = tt_ddb_type_name(t);
    if (t == DDB_TYPE_DECIMAL) {
      run->width[i] = api->decimal_width(lt);
      run->scale[i] = api->decimal_scale(lt);
      run->inner[i] = api->decimal_internal_type(lt);
      char buf[32];
      snprintf(buf, sizeof buf, "DECIMAL(%u,%u)", run->width[i], run->scale[i]);
      tn = buf;
      run->base.decltypes[i] = tt_arena_strdup(a, tn);
    } else {
      if (t == DDB_TYPE_ENUM) {
        run->inner[i] = api->enum_internal_type(lt);
        uint32_t k = api->enum_dictionary_size(lt);
        run->nenums[i] = k;
        run->enums[i] = tt_arena_alloc(a, sizeof(char *) * (k ? k : 1));
        for (uint32_t j = 0; j < k; j++) {
          char *v = api->enum_dictionary_value(lt, j);
          run->enums[i][j] = tt_arena_strdup(a, v ? v : "");
          if (v) api->free(v);
        }
      }
      run->base.decltypes[i] = tt_arena_strdup(a, *tn ? tn : "VARCHAR");
    }
    api->destroy_logical_type(&lt);
  }
}

/* ---- values -------------------------------------------------------------------- */

static int64_t tt_ddb_pow10(unsigned k) {
  int64_t p = 1;
  while (k--) p *= 10;
  return p;
}

/* An exact decimal's text: v / 10^scale. */
static void tt_ddb_put_decimal(tt_buf *b, __int128 v, unsigned scale) {
  char digits[64];
  int n = 0;
  bool neg = v < 0;
  unsigned __int128 u = neg ? (unsigned __int128)(-(v + 1)) + 1 : (unsigned __int128)v;
  do {
    digits[n++] = (char)('0' + (int)(u % 10));
    u /= 10;
  } while (u && n < 60);
  while (n <= (int)scale) digits[n++] = '0';
  if (neg) tt_buf_putc(b, '-');
  for (int i = n - 1; i >= 0; i--) {
    tt_buf_putc(b, digits[i]);
    if (i == (int)scale && scale) tt_buf_putc(b, '.');
  }
}

static void tt_ddb_text_value(tt_value *v, tt_buf *b) {
  v->type = TT_VAL_TEXT;
  v->u.s = tt_buf_cstr(b);
  v->len = b->len;
}

static void tt_ddb_put_timestamp(tt_ddb_run *run, tt_buf *b, int64_t micros) {
  ddb_timestamp_struct s = run->api->from_timestamp((ddb_timestamp){micros});
  tt_buf_printf(b, "%04d-%02d-%02d %02d:%02d:%02d", (int)s.date.year, s.date.month, s.date.day,
                s.time.hour, s.time.min, s.time.sec);
  if (s.time.micros) tt_buf_printf(b, ".%06d", (int)s.time.micros);
}

static uint64_t tt_ddb_index_of(const void *data, ddb_type inner, ddb_idx r) {
  switch (inner) {
  case DDB_TYPE_UTINYINT: return ((const uint8_t *)data)[r];
  case DDB_TYPE_USMALLINT: return ((const uint16_t *)data)[r];
  default: return ((const uint32_t *)data)[r];
  }
}

static __int128 tt_ddb_decimal_raw(const void *data, ddb_type inner, ddb_idx r) {
  switch (inner) {
  case DDB_TYPE_SMALLINT: return ((const int16_t *)data)[r];
  case DDB_TYPE_INTEGER: return ((const int32_t *)data)[r];
  case DDB_TYPE_BIGINT: return ((const int64_t *)data)[r];
  default: {
    const ddb_hugeint *h = &((const ddb_hugeint *)data)[r];
    return (__int128)(((unsigned __int128)(uint64_t)h->upper << 64) | h->lower);
  }
  }
}

/* Column c of row r of the current chunk into run->row[c]. */
static void tt_ddb_value(tt_ddb_run *run, size_t c, ddb_idx r) {
  const tt_ddb_api *api = run->api;
  ddb_vector vec = api->data_chunk_get_vector(run->chunk, c);
  const void *data = api->vector_get_data(vec);
  const uint64_t *valid = api->vector_get_validity(vec);
  tt_value *v = &run->row[c];
  *v = (tt_value){.type = TT_VAL_NULL};
  if ((valid && !((valid[r / 64] >> (r % 64)) & 1)) || !data) return;
  tt_buf *b = &run->text[c];
  tt_buf_reset(b);
  switch (run->types[c]) {
  case DDB_TYPE_BOOLEAN: v->type = TT_VAL_INT; v->u.i = ((const bool *)data)[r]; break;
  case DDB_TYPE_TINYINT: v->type = TT_VAL_INT; v->u.i = ((const int8_t *)data)[r]; break;
  case DDB_TYPE_SMALLINT: v->type = TT_VAL_INT; v->u.i = ((const int16_t *)data)[r]; break;
  case DDB_TYPE_INTEGER: v->type = TT_VAL_INT; v->u.i = ((const int32_t *)data)[r]; break;
  case DDB_TYPE_BIGINT: v->type = TT_VAL_INT; v->u.i = ((const int64_t *)data)[r]; break;
  case DDB_TYPE_UTINYINT: v->type = TT_VAL_INT; v->u.i = ((const uint8_t *)data)[r]; break;
  case DDB_TYPE_USMALLINT: v->type = TT_VAL_INT; v->u.i = ((const uint16_t *)data)[r]; break;
  case DDB_TYPE_UINTEGER: v->type = TT_VAL_INT; v->u.i = ((const uint32_t *)data)[r]; break;
  case DDB_TYPE_UBIGINT: {
    uint64_t u = ((const uint64_t *)data)[r];
    if (u <= (uint64_t)INT64_MAX) {
      v->type = TT_VAL_INT;
      v->u.i = (int64_t)u;
    } else {
      tt_buf_printf(b, "%llu", (unsigned long long)u);
      tt_ddb_text_value(v, b);
    }
    break;
  }
  case DDB_TYPE_FLOAT: v->type = TT_VAL_REAL; v->u.r = ((const float *)data)[r]; break;
  case DDB_TYPE_DOUBLE: v->type = TT_VAL_REAL; v->u.r = ((const double *)data)[r]; break;
  case DDB_TYPE_HUGEINT:
  case DDB_TYPE_UHUGEINT: {
    __int128 x = tt_ddb_decimal_raw(data, DDB_TYPE_HUGEINT, r);
    if (run->types[c] == DDB_TYPE_HUGEINT && x >= INT64_MIN && x <= INT64_MAX) {
      v->type = TT_VAL_INT;
      v->u.i = (int64_t)x;
    } else {
      tt_ddb_put_decimal(b, x, 0);
      tt_ddb_text_value(v, b);
    }
    break;
  }
  case DDB_TYPE_DECIMAL: {
    __int128 x = tt_ddb_decimal_raw(data, run->inner[c], r);
    /* at most 15 significant digits: a double holds it exactly as written */
    if (x > -(__int128)1000000000000000LL && x < (__int128)1000000000000000LL) {
      v->type = TT_VAL_REAL;
      v->u.r = (double)(int64_t)x / (double)tt_ddb_pow10(run->scale[c]);
      if (run->scale[c] == 0) {
        v->type = TT_VAL_INT;
        v->u.i = (int64_t)x;
      }
    } else {
      tt_ddb_put_decimal(b, x, run->scale[c]);
      tt_ddb_text_value(v, b);
    }
    break;
  }
  case DDB_TYPE_VARCHAR:
  case DDB_TYPE_BLOB: {
    const ddb_string *s = &((const ddb_string *)data)[r];
    uint32_t len = s->value.inlined.length;
    const char *p = len <= 12 ? s->value.inlined.inlined : s->value.pointer.ptr;
    tt_buf_append(b, p, len);
    tt_ddb_text_value(v, b);
    if (run->types[c] == DDB_TYPE_BLOB) v->type = TT_VAL_BLOB;
    break;
  }
  case DDB_TYPE_DATE: {
    ddb_date_struct d = api->from_date((ddb_date){((const int32_t *)data)[r]});
    tt_buf_printf(b, "%04d-%02d-%02d", (int)d.year, d.month, d.day);
    tt_ddb_text_value(v, b);
    break;
  }
  case DDB_TYPE_TIME: {
    ddb_time_struct t = api->from_time((ddb_time){((const int64_t *)data)[r]});
    tt_buf_printf(b, "%02d:%02d:%02d", t.hour, t.min, t.sec);
    if (t.micros) tt_buf_printf(b, ".%06d", (int)t.micros);
    tt_ddb_text_value(v, b);
    break;
  }
  case DDB_TYPE_TIMESTAMP:
  case DDB_TYPE_TIMESTAMP_TZ:
  case DDB_TYPE_TIMESTAMP_S:
  case DDB_TYPE_TIMESTAMP_MS:
  case DDB_TYPE_TIMESTAMP_NS: {
    int64_t x = ((const int64_t *)data)[r];
    if (run->types[c] == DDB_TYPE_TIMESTAMP_S) x *= 1000000;
    else if (run->types[c] == DDB_TYPE_TIMESTAMP_MS) x *= 1000;
    else if (run->types[c] == DDB_TYPE_TIMESTAMP_NS) x /= 1000;
    tt_ddb_put_timestamp(run, b, x);
    if (run->types[c] == DDB_TYPE_TIMESTAMP_TZ) tt_buf_puts(b, "+00");
    tt_ddb_text_value(v, b);
    break;
  }
  case DDB_TYPE_ENUM: {
    uint64_t k = tt_ddb_index_of(data, run->inner[c], r);
    tt_buf_puts(b, k < run->nenums[c] ? run->enums[c][k] : "");
    tt_ddb_text_value(v, b);
    break;
  }
  default: break; /* SQLNULL; other types were cast to VARCHAR */
  }
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
  for (size_t i = 0; run->text && i < run->base.ncols; i++) tt_buf_free(&run->text[i]);
  free(run->text);
  free(run->row);
  free(run->types);
  free(run->inner);
  free(run->width);
  free(run->scale);
  free(run->enums);
  free(run->nenums);
  tt_arena_free(run->arena);
  free(run);
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
  tt_ddb_run *run = tt_xcalloc(1, sizeof *run);
  run->db = db;
  run->dd = dd;
  run->api = dd->api;
  run->arena = tt_arena_new();
  run->timeout_s = timeout_s;
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
        !tt_ddb_csv_demote(db, run->have_res ? run->api->result_error(&run->res) : NULL))
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
  tt_ddb_columns(run);
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
        if (!fired && tt_ddb_csv_demote(run->db, e))
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
  for (size_t c = 0; c < run->base.ncols; c++) tt_ddb_value(run, c, run->chunk_pos);
  run->chunk_pos++;
  *row = run->row;
  *row_bytes = tt_row_weight(run->row, run->base.ncols);
  return 1;
}

void tt_ddb_run_close(tt_ddb_run *run) { tt_ddb_run_free(run); }
