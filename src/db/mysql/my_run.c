/* my_run.c — one statement on a MySQL/MariaDB server, whole (query) or
 * row by row (the cursor): checked by the guard (my_guard.c) and what the
 * guard leaves to the catalog looked up (my_check.c), then run inside
 * START TRANSACTION READ ONLY under the session's time limit, which the
 * server enforces (max_statement_time on MariaDB, max_execution_time on
 * MySQL, with lock waits bounded the same), streamed one row at a time
 * (mysql_use_result: memory for one row), and always followed by
 * ROLLBACK and RELEASE_ALL_LOCKS(). Every wait on the server goes through
 * the library's non-blocking calls, so that a deadline or Ctrl-C sends
 * KILL QUERY from a second connection at once; a server that does not
 * stop even then loses the connection (the next query connects again).
 * Values become tt_value from the text protocol: integers, reals,
 * DECIMAL as a real when it has at most 15 significant digits (else its
 * exact text), BIT as an integer, binary strings as blobs, the rest as
 * text. */
#include "db/mysql/mysql.h"

#include <ctype.h>
#include <errmsg.h>
#include <math.h>
#include <mysqld_error.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#define TT_MY_GRACE_MS 1000.0   /* the server's own limit fires first */
#define TT_MY_KILL_AGAIN_MS 500.0
#define TT_MY_ABANDON_MS 2000.0 /* after the first KILL, the connection goes */
#define TT_MY_CLOSE_MS 5000.0   /* ROLLBACK and what follows */

struct tt_my_run {
  tt_engine_cursor base; /* first: what the shared cursor reads */
  tt_db *db;
  tt_my *my;
  const tt_my_api *api;
  MYSQL *conn;
  MYSQL_RES *res;
  MYSQL_FIELD *fields;
  unsigned long thread;
  volatile sig_atomic_t *user_cancel;
  double deadline_ms;
  bool kill_sent, by_user, abandoned, done, in_tx, lost;
  double kill_first_ms, kill_ms;
  tt_arena *arena; /* names and types */
  tt_value *row;
};

tt_engine_cursor *tt_my_run_base(tt_my_run *run) { return &run->base; }

/* ---- waiting for the server -------------------------------------------------- */

/* Sends KILL QUERY on the deadline (after a grace: the server's own limit
 * fires first) or when the user cancels, again every 500 ms while the
 * statement runs; shuts the socket down when the server ignores it. */
static void tt_my_watch(tt_my_run *run) {
  double now = tt_now_ms();
  bool want = false;
  if (run->user_cancel && *run->user_cancel) {
    if (!run->kill_sent) run->by_user = true;
    want = true;
  } else if (run->kill_sent || now > run->deadline_ms + TT_MY_GRACE_MS) {
    want = true;
  }
  if (!want || run->abandoned) return;
  if (!run->kill_sent || now - run->kill_ms > TT_MY_KILL_AGAIN_MS) {
    if (!run->kill_sent) run->kill_first_ms = now;
    run->kill_sent = true;
    run->kill_ms = now;
    tt_my_kill_query(run->db, run->thread);
  }
  if (now > run->kill_first_ms + TT_MY_ABANDON_MS) {
    /* the library sees the connection end and fails the call it is in */
    shutdown(run->api->get_socket(run->conn), SHUT_RDWR);
    run->abandoned = true;
  }
}

/* Waits until the connection is ready for what status asks (the
 * library's non-blocking protocol); the events that happened. */
static int tt_my_wait(tt_my_run *run, int status) {
  double lib_end = -1;
  if (status & MYSQL_WAIT_TIMEOUT)
    lib_end = tt_now_ms() + run->api->get_timeout_value_ms(run->conn);
  short events = 0;
  if (status & MYSQL_WAIT_READ) events |= POLLIN;
  if (status & MYSQL_WAIT_WRITE) events |= POLLOUT;
  if (status & MYSQL_WAIT_EXCEPT) events |= POLLPRI;
  for (;;) {
    tt_my_watch(run);
    int ms = 20;
    if (lib_end >= 0) {
      double left = lib_end - tt_now_ms();
      if (left <= 0) return MYSQL_WAIT_TIMEOUT;
      if (left < ms) ms = (int)left + 1;
    }
    struct pollfd p = {.fd = run->api->get_socket(run->conn), .events = events};
    int rc = poll(&p, 1, ms);
    if (rc > 0) {
      int r = 0;
      if (p.revents & (POLLIN | POLLHUP | POLLERR)) r |= MYSQL_WAIT_READ;
      if (p.revents & (POLLOUT | POLLHUP | POLLERR)) r |= MYSQL_WAIT_WRITE;
      if (p.revents & POLLPRI) r |= MYSQL_WAIT_EXCEPT;
      r &= status;
      return r ? r : status & (MYSQL_WAIT_READ | MYSQL_WAIT_WRITE);
    }
  }
}

static bool tt_my_send(tt_my_run *run, const char *sql, size_t len) {
  int ret = 0;
  int st = run->api->real_query_start(&ret, run->conn, sql, (unsigned long)len);
  while (st) st = run->api->real_query_cont(&ret, run->conn, tt_my_wait(run, st));
  return ret == 0;
}

static MYSQL_RES *tt_my_store(tt_my_run *run) {
  MYSQL_RES *res = NULL;
  int st = run->api->store_result_start(&res, run->conn);
  while (st) st = run->api->store_result_cont(&res, run->conn, tt_my_wait(run, st));
  return res;
}

static MYSQL_ROW tt_my_fetch(tt_my_run *run, MYSQL_RES *res) {
  MYSQL_ROW row = NULL;
  int st = run->api->fetch_row_start(&row, res);
  while (st) st = run->api->fetch_row_cont(&row, res, tt_my_wait(run, st));
  return row;
}

static void tt_my_free_res(tt_my_run *run, MYSQL_RES *res) {
  int st = run->api->free_result_start(res);
  while (st) st = run->api->free_result_cont(res, tt_my_wait(run, st));
}

static bool tt_my_conn_lost(unsigned e) {
  return e == CR_SERVER_GONE_ERROR || e == CR_SERVER_LOST ||
         e == 2055 /* CR_SERVER_LOST_EXTENDED */;
}

/* ---- errors -------------------------------------------------------------------- */

/* What a failed statement means for the user, from the server's error
 * code: a repair hint where the code says what to fix. */
static void tt_my_fail(tt_my_run *run, tt_error *err) {
  unsigned e = run->api->err_no(run->conn);
  char msg[500];
  snprintf(msg, sizeof msg, "%s", run->api->error(run->conn));
  for (char *p = msg; *p; p++)
    if (*p == '\n') *p = ' ';
  const tt_db_opts *o = tt_db_limits(run->db);
  if (run->abandoned || (run->kill_sent && (tt_my_conn_lost(e) || e == ER_QUERY_INTERRUPTED))) {
    if (run->by_user)
      tt_db_set_error(err, TT_ERR_CANCELLED, "query cancelled");
    else
      tt_db_set_error(err, TT_ERR_TIMEOUT,
                      "query stopped after the %.3g s time limit; narrow it (WHERE, LIMIT) or "
                      "raise --timeout%s",
                      o->timeout_s,
                      run->abandoned ? " (the server did not stop it when asked, so its "
                                       "connection was closed; the next query connects again)"
                                     : "");
  } else if (e == ER_STATEMENT_TIMEOUT || e == 3024 /* MySQL's ER_QUERY_TIMEOUT */ ||
             e == ER_QUERY_INTERRUPTED) {
    tt_db_set_error(err, TT_ERR_TIMEOUT,
                    "query stopped after the %.3g s time limit; narrow it (WHERE, LIMIT) or "
                    "raise --timeout",
                    o->timeout_s);
  } else if (e == ER_LOCK_WAIT_TIMEOUT || e == ER_LOCK_DEADLOCK) {
    tt_db_set_error(err, TT_ERR_BUSY,
                    "another session kept a lock on what the query reads for the whole %.3g s "
                    "time limit; try again, or raise --timeout",
                    o->timeout_s);
  } else if (e == ER_CANT_EXECUTE_IN_READ_ONLY_TRANSACTION || e == ER_OPTION_PREVENTS_STATEMENT) {
    tt_db_refuse(err, TT_REFUSE_WRITE, "writes are not allowed: %s (error %u)", msg, e);
  } else if (e == ER_OUTOFMEMORY || e == ER_OUT_OF_SORTMEMORY || e == ER_RECORD_FILE_FULL ||
             e == 1104 /* ER_TOO_BIG_SELECT */ || e == 3636 /* ER_CTE_MAX_RECURSION_DEPTH */) {
    tt_db_set_error(err, TT_ERR_LIMIT, "query is over a server limit: %s (error %u)", msg, e);
  } else if (tt_my_conn_lost(e) || e == 2002 || e == CR_CONN_HOST_ERROR) {
    run->lost = true;
    tt_db_set_error(err, TT_ERR_IO,
                    "the connection to %s was lost: %s (check that the server runs; the next "
                    "query connects again)",
                    run->db->name, msg);
  } else {
    tt_db_set_error(err, TT_ERR_SQL, "%s (error %u)", msg, e);
    if (e == ER_NO_SUCH_TABLE)
      tt_error_hint(err, "table names are case-sensitive here: write them exactly as the "
                         "schema shows them, in backticks when they hold odd characters");
    else if (e == ER_BAD_FIELD_ERROR)
      tt_error_hint(err, "check the column against the schema; qualify it with its table "
                         "(`Track`.`Name`) when several tables have it");
    else if (e == ER_PARSE_ERROR)
      tt_error_hint(err, "MySQL/MariaDB syntax: names in backticks, strings in single quotes, "
                         "LIMIT n for the first rows, || is OR (use CONCAT)");
    else if (e == ER_SP_DOES_NOT_EXIST)
      tt_error_hint(err, "only built-in functions are available; check its name");
    else if (e == 1055 /* ER_WRONG_FIELD_WITH_GROUP */)
      tt_error_hint(err, "ONLY_FULL_GROUP_BY: every selected column must be grouped or "
                         "aggregated");
  }
}

/* ---- statements of tabletalk's own ------------------------------------------- */

static bool tt_my_run_exec(tt_my_run *run, const char *sql, tt_error *err) {
  if (tt_my_send(run, sql, strlen(sql))) {
    if (run->api->field_count(run->conn) > 0) {
      MYSQL_RES *r = tt_my_store(run);
      if (r) run->api->free_result(r);
    }
    return true;
  }
  if (err) tt_my_fail(run, err);
  return false;
}

/* The session's time limit (and lock waits) as timeout_s says, when it
 * changed since it was last set. */
static bool tt_my_set_limits(tt_my_run *run, long ms, tt_error *err) {
  if (run->my->timeout_ms_set == ms) return true;
  long lock_s = (ms + 999) / 1000;
  char sql[200];
  if (run->my->mariadb)
    snprintf(sql, sizeof sql,
             "SET SESSION max_statement_time = %ld.%03ld, lock_wait_timeout = %ld, "
             "innodb_lock_wait_timeout = %ld",
             ms / 1000, ms % 1000, lock_s, lock_s);
  else
    snprintf(sql, sizeof sql,
             "SET SESSION max_execution_time = %ld, lock_wait_timeout = %ld, "
             "innodb_lock_wait_timeout = %ld",
             ms, lock_s, lock_s);
  if (!tt_my_run_exec(run, sql, err)) return false;
  run->my->timeout_ms_set = ms;
  return true;
}

/* Frees a stored result's rows into a tt_result (tabletalk's lookups). */
static tt_result *tt_my_result_of(tt_my_run *run, MYSQL_RES *res);

tt_result *tt_my_run_lookup(void *ctx, const char *sql, tt_error *err) {
  tt_my_run *run = ctx;
  if (!tt_my_send(run, sql, strlen(sql))) {
    tt_my_fail(run, err);
    return NULL;
  }
  MYSQL_RES *res = tt_my_store(run);
  if (!res) {
    tt_my_fail(run, err);
    return NULL;
  }
  return tt_my_result_of(run, res);
}

/* ---- values --------------------------------------------------------------------- */

static const char *tt_my_type_name(const MYSQL_FIELD *f) {
  bool bin = f->charsetnr == 63;
  switch (f->type) {
  case MYSQL_TYPE_TINY: return "tinyint";
  case MYSQL_TYPE_SHORT: return "smallint";
  case MYSQL_TYPE_INT24: return "mediumint";
  case MYSQL_TYPE_LONG: return "int";
  case MYSQL_TYPE_LONGLONG: return "bigint";
  case MYSQL_TYPE_FLOAT: return "float";
  case MYSQL_TYPE_DOUBLE: return "double";
  case MYSQL_TYPE_DECIMAL: case MYSQL_TYPE_NEWDECIMAL: return "decimal";
  case MYSQL_TYPE_BIT: return "bit";
  case MYSQL_TYPE_YEAR: return "year";
  case MYSQL_TYPE_DATE: case MYSQL_TYPE_NEWDATE: return "date";
  case MYSQL_TYPE_TIME: return "time";
  case MYSQL_TYPE_DATETIME: return "datetime";
  case MYSQL_TYPE_TIMESTAMP: return "timestamp";
  case MYSQL_TYPE_JSON: return "json";
  case MYSQL_TYPE_GEOMETRY: return "geometry";
  case MYSQL_TYPE_ENUM: return "enum";
  case MYSQL_TYPE_SET: return "set";
  case MYSQL_TYPE_NULL: return "";
  case MYSQL_TYPE_TINY_BLOB: case MYSQL_TYPE_MEDIUM_BLOB: case MYSQL_TYPE_LONG_BLOB:
  case MYSQL_TYPE_BLOB: return bin ? "blob" : "text";
  case MYSQL_TYPE_VARCHAR: case MYSQL_TYPE_VAR_STRING: return bin ? "varbinary" : "varchar";
  case MYSQL_TYPE_STRING:
    if (f->flags & ENUM_FLAG) return "enum";
    if (f->flags & SET_FLAG) return "set";
    return bin ? "binary" : "char";
  default: return "";
  }
}

/* A DECIMAL a double holds exactly enough to print back the same. */
static bool tt_my_decimal_fits_real(const char *s, size_t n) {
  int digits = 0;
  for (size_t i = 0; i < n; i++) {
    if (isdigit((unsigned char)s[i])) digits++;
    else if (s[i] != '-' && s[i] != '.') return false;
  }
  return digits > 0 && digits <= 15;
}

/* One value of the text protocol into v; its weight as max_bytes counts. */
static size_t tt_my_value(const MYSQL_FIELD *f, const char *s, unsigned long n, tt_value *v) {
  memset(v, 0, sizeof *v);
  if (!s) {
    v->type = TT_VAL_NULL;
    return 0;
  }
  switch (f->type) {
  case MYSQL_TYPE_TINY: case MYSQL_TYPE_SHORT: case MYSQL_TYPE_INT24: case MYSQL_TYPE_LONG:
  case MYSQL_TYPE_LONGLONG: case MYSQL_TYPE_YEAR:
    if ((f->flags & UNSIGNED_FLAG) && f->type == MYSQL_TYPE_LONGLONG &&
        (n > 19 || (n == 19 && strncmp(s, "9223372036854775807", 19) > 0)))
      break; /* over int64: kept as its text */
    v->type = TT_VAL_INT;
    v->u.i = strtoll(s, NULL, 10);
    return 8;
  case MYSQL_TYPE_FLOAT: case MYSQL_TYPE_DOUBLE:
    v->type = TT_VAL_REAL;
    v->u.r = strtod(s, NULL);
    return 8;
  case MYSQL_TYPE_DECIMAL: case MYSQL_TYPE_NEWDECIMAL:
    if (tt_my_decimal_fits_real(s, n)) {
      v->type = TT_VAL_REAL;
      v->u.r = strtod(s, NULL);
      return 8;
    }
    break;
  case MYSQL_TYPE_BIT:
    if (n <= 8) {
      uint64_t x = 0;
      for (unsigned long i = 0; i < n; i++) x = (x << 8) | (unsigned char)s[i];
      v->type = TT_VAL_INT;
      v->u.i = (int64_t)x;
      return 8;
    }
    v->type = TT_VAL_BLOB;
    v->len = n;
    v->u.s = s;
    return n;
  case MYSQL_TYPE_TINY_BLOB: case MYSQL_TYPE_MEDIUM_BLOB: case MYSQL_TYPE_LONG_BLOB:
  case MYSQL_TYPE_BLOB: case MYSQL_TYPE_VARCHAR: case MYSQL_TYPE_VAR_STRING:
  case MYSQL_TYPE_STRING: case MYSQL_TYPE_GEOMETRY:
    if (f->charsetnr == 63 && !(f->flags & (ENUM_FLAG | SET_FLAG))) {
      v->type = TT_VAL_BLOB;
      v->len = n;
      v->u.s = s;
      return n;
    }
    break;
  default: break;
  }
  v->type = TT_VAL_TEXT;
  v->len = n;
  v->u.s = s;
  return n;
}

static tt_result *tt_my_result_of(tt_my_run *run, MYSQL_RES *res) {
  const tt_my_api *api = run->api;
  size_t ncols = api->num_fields(res);
  MYSQL_FIELD *fields = api->fetch_fields(res);
  tt_db_opts limits = {.timeout_s = 5.0, .max_rows = 100000, .max_bytes = 64L << 20};
  tt_result_builder b;
  tt_result *r = tt_result_builder_start(&b, ncols, &limits);
  for (size_t c = 0; c < ncols; c++) {
    r->names[c] = tt_arena_strdup(r->arena, fields[c].name ? fields[c].name : "");
    r->decltypes[c] = tt_my_type_name(&fields[c]);
  }
  tt_value *vals = tt_xcalloc(ncols ? ncols : 1, sizeof *vals);
  MYSQL_ROW row;
  while ((row = api->fetch_row(res))) {
    unsigned long *lens = api->fetch_lengths(res);
    size_t rb = 0;
    for (size_t c = 0; c < ncols; c++) rb += tt_my_value(&fields[c], row[c], lens[c], &vals[c]);
    if (tt_result_builder_row(&b) != TT_ROW_WEIGH) break;
    bool enough; /* the builder copies the borrowed values */
    if (!tt_result_builder_add(&b, vals, rb, &enough)) break;
  }
  free(vals);
  api->free_result(res);
  tt_result_builder_end(&b, true);
  return r;
}

/* ---- one statement ----------------------------------------------------------- */

static void tt_my_run_free(tt_my_run *run) {
  tt_arena_free(run->arena);
  free(run->row);
  free(run);
}

/* Ends the transaction and frees the run; the connection goes when it was
 * lost or abandoned. */
static void tt_my_run_finish(tt_my_run *run) {
  tt_my *my = run->my;
  if (!run->abandoned && !run->lost && run->in_tx) {
    /* a fresh deadline for ROLLBACK, counted from now */
    run->deadline_ms = tt_now_ms() + TT_MY_CLOSE_MS;
    run->kill_sent = false;
    run->user_cancel = NULL;
    tt_error ignored;
    if (!tt_my_run_exec(run, "ROLLBACK", &ignored)) run->lost = true;
    /* a named lock that something the guard cannot see took (a loadable
     * function) does not outlive the query; servers before MariaDB 10.5
     * lack the function, which changes nothing */
    else if ((my->mariadb && my->version >= 100500) || (!my->mariadb && my->version >= 50700))
      tt_my_run_exec(run, "DO RELEASE_ALL_LOCKS()", &ignored);
  }
  if (run->abandoned || run->lost) tt_my_drop_connection(my);
  tt_my_run_free(run);
}

void tt_my_run_close(tt_my_run *run) {
  if (!run) return;
  if (run->res) {
    if (!run->done && !run->abandoned) {
      /* rows are left: what the server has sent is read for 50 ms, then
       * the statement is stopped rather than read to its end */
      run->deadline_ms = tt_now_ms() - TT_MY_GRACE_MS + 50;
      run->user_cancel = NULL;
      tt_my_free_res(run, run->res);
    } else {
      run->api->free_result(run->res);
    }
    run->res = NULL;
  }
  tt_my_run_finish(run);
}

/* Sends the statement, and once again on a fresh connection when the
 * session was lost between queries (a server restart, a timed-out idle
 * connection). */
static bool tt_my_begin(tt_my_run *run, long ms, tt_error *err) {
  for (int attempt = 0; attempt < 2; attempt++) {
    if (!run->my->conn && !tt_my_connect(run->db, err)) return false;
    run->conn = run->my->conn;
    run->thread = run->api->thread_id(run->conn);
    if (tt_my_set_limits(run, ms, err) && tt_my_run_exec(run, "START TRANSACTION READ ONLY", err)) {
      run->in_tx = true;
      return true;
    }
    if (!run->lost) return false;
    tt_my_drop_connection(run->my);
    run->lost = false;
    tt_error_clear(err);
  }
  return false;
}

tt_my_run *tt_my_run_open(tt_db *db, const char *sql, size_t len, double timeout_s,
                          tt_error *err) {
  if (!tt_db_check_sql_text(sql, len, db->trusted_text, err)) return NULL;
  tt_my_refs refs;
  memset(&refs, 0, sizeof refs);
  tt_my_guard_opts gopts = tt_my_guard_opts_for(db);
  size_t send_len = len;
  if (!db->trusted_text) {
    /* the guard (my_guard.c) for every text that is not tabletalk's own;
     * the READ ONLY transaction below is the next layer */
    if (!tt_my_guard_check(sql, len, TT_MY_GUARD_QUERY, &gopts, &refs, err)) return NULL;
    send_len = refs.send_len;
  }
  tt_my *my = tt_my_of(db);
  tt_my_run *run = tt_xcalloc(1, sizeof *run);
  run->db = db;
  run->my = my;
  run->api = my->api;
  run->user_cancel = tt_db_limits(db)->cancel;
  run->arena = tt_arena_new();
  long ms = timeout_s > 0 ? (long)ceil(timeout_s * 1000.0) : 5000;
  run->deadline_ms = tt_now_ms() + (double)ms;
  if (!tt_my_begin(run, ms, err)) {
    tt_my_refs_free(&refs);
    tt_my_run_finish(run);
    return NULL;
  }
  if (!db->trusted_text &&
      !tt_my_check_refs(tt_my_run_lookup, run, &refs, &gopts, err)) {
    tt_my_refs_free(&refs);
    tt_my_run_finish(run);
    return NULL;
  }
  tt_my_refs_free(&refs);
  if (!tt_my_send(run, sql, send_len)) {
    tt_my_fail(run, err);
    tt_my_run_finish(run);
    return NULL;
  }
  unsigned nf = run->api->field_count(run->conn);
  if (nf == 0) {
    tt_db_refuse(err, TT_REFUSE_OTHER,
                 "only queries that return rows are allowed (SELECT, WITH ... SELECT, VALUES, "
                 "TABLE)");
    tt_my_run_finish(run);
    return NULL;
  }
  run->res = run->api->use_result(run->conn);
  if (!run->res) {
    tt_my_fail(run, err);
    tt_my_run_finish(run);
    return NULL;
  }
  run->fields = run->api->fetch_fields(run->res);
  run->base.ncols = nf;
  run->base.names = tt_arena_alloc(run->arena, nf * sizeof *run->base.names);
  run->base.decltypes = tt_arena_alloc(run->arena, nf * sizeof *run->base.decltypes);
  run->row = tt_xcalloc(nf, sizeof *run->row);
  for (size_t c = 0; c < nf; c++) {
    run->base.names[c] =
        tt_db_shown_name(run->arena, run->fields[c].name ? run->fields[c].name : "");
    run->base.decltypes[c] = tt_my_type_name(&run->fields[c]);
  }
  return run;
}

int tt_my_run_next(tt_my_run *run, const tt_value **row, size_t *row_bytes, tt_error *err) {
  *row = NULL;
  *row_bytes = 0;
  if (run->done) return 0;
  /* the caller's time away from the engine does not count */
  run->deadline_ms += run->base.away_ms;
  run->base.away_ms = 0;
  MYSQL_ROW r = tt_my_fetch(run, run->res);
  if (!r) {
    run->done = true;
    if (run->api->err_no(run->conn) || run->abandoned) {
      tt_my_fail(run, err);
      return -1;
    }
    return 0;
  }
  unsigned long *lens = run->api->fetch_lengths(run->res);
  size_t bytes = 0;
  for (size_t c = 0; c < run->base.ncols; c++)
    bytes += tt_my_value(&run->fields[c], r[c], lens[c], &run->row[c]);
  *row = run->row;
  *row_bytes = bytes;
  return 1;
}
