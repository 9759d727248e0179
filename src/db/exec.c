/* exec.c — running one guarded query: check the text, prepare exactly one
 * statement, refuse anything that is not a read, then step under the
 * deadline and the row and byte caps, copying typed values into a result. */
#include "db/db_internal.h"

#include <stdlib.h>
#include <string.h>


/* SQLite's messages for parse-time limits (SQLITE_ERROR with no own code). */
static const char *const tt_limit_messages[] = {
    "too many columns",          "Expression tree is too large",
    "too many terms in compound", "too many arguments on function",
    "LIKE or GLOB pattern too complex", "statement too long",
    "too many SQL variables",    "parser stack overflow",
    "too many FROM clause terms", "too many references to",
    "program too large",          "too many levels of trigger recursion",
};

static bool tt_is_limit_message(const char *msg) {
  for (size_t i = 0; i < sizeof tt_limit_messages / sizeof tt_limit_messages[0]; i++)
    if (strstr(msg, tt_limit_messages[i])) return true;
  return false;
}

void tt_db_fail(tt_db *db, int rc, tt_error *err) {
  tt_db_explain_failure(db, rc, sqlite3_errmsg(db->h), err);
}

void tt_db_explain_failure(tt_db *db, int rc, const char *msg, tt_error *err) {
  int primary = rc & 0xff;
  if (db->cancelled) {
    tt_db_set_error(err, TT_ERR_CANCELLED, "the query was cancelled");
  } else if (primary == SQLITE_BUSY) {
    tt_db_set_error(err, TT_ERR_BUSY,
                    "the database stayed locked by another program for the whole %.3g s time "
                    "limit; try again, or raise --timeout", tt_db_limits(db)->timeout_s);
  } else if (rc == SQLITE_READONLY_ROLLBACK) {
    tt_db_set_error(err, TT_ERR_IO,
                    "%s has a hot journal (%s-journal): a program stopped in the middle of a "
                    "write, and the file must be rolled back before it can be read. tabletalk "
                    "only reads: open it once with a program that may write to it (for example "
                    "sqlite3 '%s' 'PRAGMA quick_check'), or pass --immutable to read it as it is, "
                    "half-written pages included", db->path, db->real, db->real);
  } else if (rc == SQLITE_READONLY_RECOVERY || rc == SQLITE_READONLY_CANTINIT) {
    tt_db_set_error(err, TT_ERR_IO,
                    "%s's write-ahead log needs recovery after a program stopped while writing, "
                    "and tabletalk only reads: open it once with a program that may write to it "
                    "(for example sqlite3 '%s' 'PRAGMA quick_check')", db->path, db->real);
  } else if (rc == SQLITE_READONLY_DBMOVED) {
    tt_db_set_error(err, TT_ERR_IO, "%s was moved or deleted while it was open; run again",
                    db->path);
  } else if (db->denied && !db->deny_weak) {
    tt_db_refuse(err, db->deny_reason, "%s", db->deny);
  } else if (db->timed_out || primary == SQLITE_INTERRUPT) {
    tt_db_set_error(err, TT_ERR_TIMEOUT,
                    "query stopped after the %.3g s time limit; narrow it "
                    "(WHERE, LIMIT) or raise --timeout", tt_db_limits(db)->timeout_s);
  } else if (primary == SQLITE_NOMEM && db->preparing &&
             sqlite3_memory_used() < TT_HEAP_LIMIT / 2) {
    /* SQLite reports a program over SQLITE_LIMIT_VDBE_OP as out of memory */
    tt_db_set_error(err, TT_ERR_LIMIT,
                    "query refused: it compiles to more than %d virtual-machine "
                    "instructions (the limit on the size of one query); a long IN list or "
                    "many OR terms do this: use a subquery, a join or a range instead",
                    TT_LIMIT_VDBE_OP);
  } else if (primary == SQLITE_NOMEM) {
    tt_db_set_error(err, TT_ERR_LIMIT,
                    "query stopped: the %lld MiB of memory SQLite may use in this process "
                    "(shared by the queries running at the same time) ran out; aggregate or "
                    "narrow the query, or try again",
                    TT_HEAP_LIMIT / (1024 * 1024));
  } else if (primary == SQLITE_TOOBIG) {
    if (tt_has_prefix(msg, "printf"))
      tt_db_set_error(err, TT_ERR_LIMIT, "query stopped: %s", msg);
    else
      tt_db_set_error(err, TT_ERR_LIMIT,
                      "query stopped: a string or blob would exceed the "
                      "%d-byte length limit", TT_LIMIT_LENGTH);
  } else if (strstr(msg, "may not be modified")) { /* sqlite_master and friends */
    tt_db_refuse(err, TT_REFUSE_WRITE, "writes are not allowed: %s", msg);
  } else if (tt_is_limit_message(msg)) {
    tt_db_set_error(err, TT_ERR_LIMIT, "query is over a size limit: %s", msg);
  } else {
    tt_db_set_error(err, TT_ERR_SQL, "%s", msg);
  }
}

/* Prepares the first statement of sql, skipping leading empty ones. */
static int tt_prepare_first(tt_db *db, const char *sql, size_t len,
                            sqlite3_stmt **st, const char **tail) {
  const char *end = sql + len;
  const char *p = sql;
  *st = NULL;
  for (;;) {
    int rc = sqlite3_prepare_v3(db->h, p, (int)(end - p), 0, st, tail);
    if (rc != SQLITE_OK || *st || *tail >= end || *tail == p ||
        tt_guard_tail_is_empty(*tail, end))
      return rc;
    p = *tail;
  }
}

size_t tt_row_bytes(sqlite3_stmt *st, int ncols) {
  size_t bytes = 0;
  for (int c = 0; c < ncols; c++) {
    switch (sqlite3_column_type(st, c)) {
    case SQLITE_INTEGER: case SQLITE_FLOAT: bytes += 8; break;
    case SQLITE_TEXT: case SQLITE_BLOB: bytes += (size_t)sqlite3_column_bytes(st, c); break;
    default: break;
    }
  }
  return bytes;
}

void tt_copy_value(tt_arena *a, sqlite3_stmt *st, int c, tt_value *v) {
  memset(v, 0, sizeof *v);
  switch (sqlite3_column_type(st, c)) {
  case SQLITE_INTEGER:
    v->type = TT_VAL_INT;
    v->u.i = sqlite3_column_int64(st, c);
    break;
  case SQLITE_FLOAT:
    v->type = TT_VAL_REAL;
    v->u.r = sqlite3_column_double(st, c);
    break;
  case SQLITE_TEXT: {
    const unsigned char *t = sqlite3_column_text(st, c);
    v->type = TT_VAL_TEXT;
    v->len = (size_t)sqlite3_column_bytes(st, c);
    if (!t) v->len = 0;
    v->u.s = !t ? "" : a ? tt_arena_memdup(a, (const char *)t, v->len) : (const char *)t;
    break;
  }
  case SQLITE_BLOB: {
    const void *b = sqlite3_column_blob(st, c);
    v->type = TT_VAL_BLOB;
    v->len = (size_t)sqlite3_column_bytes(st, c);
    if (!b) v->len = 0;
    v->u.s = !b ? "" : a ? tt_arena_memdup(a, b, v->len) : (const char *)b;
    break;
  }
  default:
    v->type = TT_VAL_NULL;
    break;
  }
}

static tt_result *tt_result_start(sqlite3_stmt *st) {
  tt_result *r = tt_xcalloc(1, sizeof *r);
  r->arena = tt_arena_new();
  int n = sqlite3_column_count(st);
  r->ncols = (size_t)n;
  r->names = tt_arena_alloc(r->arena, sizeof(char *) * r->ncols);
  r->decltypes = tt_arena_alloc(r->arena, sizeof(char *) * r->ncols);
  for (int c = 0; c < n; c++) {
    const char *name = sqlite3_column_name(st, c);
    const char *type = sqlite3_column_decltype(st, c);
    r->names[c] = tt_db_shown_name(r->arena, name ? name : "?");
    r->decltypes[c] = tt_arena_strdup(r->arena, type ? type : "");
  }
  return r;
}

/* Steps through the rows under the caps; past a cap, counts the rows it no
 * longer keeps when count_rows asks for it. Returns the final step code. */
static int tt_collect_rows(tt_db *db, sqlite3_stmt *st, tt_result *r) {
  size_t cap_rows = tt_db_limits(db)->max_rows > 0 ? (size_t)tt_db_limits(db)->max_rows : 0;
  size_t cap_bytes = tt_db_limits(db)->max_bytes > 0 ? (size_t)tt_db_limits(db)->max_bytes : 0;
  int64_t count_cap = tt_db_limits(db)->count_rows > 0 ? tt_db_limits(db)->count_rows : 0;
  size_t alloc = 0;
  int ncols = (int)r->ncols;
  int64_t seen = 0;
  bool counting = false;
  int rc;
  db->stepping = true;
  while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
    seen++;
    if (counting) {
      if (seen >= count_cap) break;
      continue;
    }
    tt_trunc cut = TT_TRUNC_NONE;
    size_t rb = 0;
    if (r->nrows >= cap_rows) {
      cut = TT_TRUNC_ROWS;
    } else {
      rb = tt_row_bytes(st, ncols);
      /* NULL and empty cells weigh nothing in bytes but still cost memory:
       * the number of cells is capped too. */
      if (r->bytes + rb > cap_bytes || (r->nrows + 1) * r->ncols > TT_MAX_CELLS)
        cut = TT_TRUNC_BYTES;
    }
    if (cut != TT_TRUNC_NONE) {
      r->truncated = true;
      r->truncated_by = cut;
      if (seen >= count_cap) break;
      counting = true;
      continue;
    }
    tt_value *row = tt_result_grow(r, &alloc);
    for (int c = 0; c < ncols; c++) tt_copy_value(r->arena, st, c, &row[c]);
    r->bytes += rb;
    r->nrows++;
  }
  db->stepping = false;
  r->total_rows = seen;
  r->total_exact = rc == SQLITE_DONE;
  /* Counting past the cut is a courtesy: when it runs out of time or memory
   * the rows we hold are still complete up to the cut. */
  if (counting && rc != SQLITE_ROW && rc != SQLITE_DONE) rc = SQLITE_ROW;
  /* The step that would have found a row past the cap ran out of time: the
   * rows we hold are complete up to the cap and more may exist. */
  if (rc != SQLITE_ROW && rc != SQLITE_DONE && db->timed_out && cap_rows &&
      r->nrows == cap_rows) {
    r->truncated = true;
    r->truncated_by = TT_TRUNC_ROWS;
    rc = SQLITE_ROW;
  }
  return rc;
}

/* The statement of sql (text already checked), past the guard's checks. */
static sqlite3_stmt *tt_prepare_checked(tt_db *db, const char *sql, size_t len, double deadline_ms,
                                        tt_error *err) {
  tt_guard_arm(db, deadline_ms);
  sqlite3_stmt *st = NULL;
  const char *tail = NULL;
  db->preparing = true;
  int rc = tt_prepare_first(db, sql, len, &st, &tail);
  if (rc != SQLITE_OK) tt_db_fail(db, rc, err);
  db->preparing = false;
  if (rc != SQLITE_OK) return NULL;
  if (!st) {
    tt_db_refuse(err, TT_REFUSE_EMPTY, "no SQL statement found: the input is empty or only comments");
    return NULL;
  }
  const char *refusal = NULL;
  tt_db_refusal why = TT_REFUSE_NONE;
  if (!tt_guard_tail_is_empty(tail, sql + len)) {
    why = TT_REFUSE_MULTIPLE;
    refusal = "only one statement per query is allowed; remove what follows "
              "the first statement";
  } else if (tt_guard_is_pragma_statement(sql, len)) { /* one FTS may read itself */
    why = TT_REFUSE_PRAGMA;
    refusal = "PRAGMA statements are not allowed (to read a table's columns use SELECT * FROM "
              "pragma_table_info('Table'))";
  } else if (sqlite3_stmt_isexplain(st) == 1) {
    why = TT_REFUSE_EXPLAIN;
    refusal = "plain EXPLAIN is not allowed; use EXPLAIN QUERY PLAN to see "
              "how a query runs";
  } else if (!sqlite3_stmt_readonly(st)) {
    why = db->denied ? db->deny_reason : TT_REFUSE_WRITE;
    refusal = db->denied ? db->deny
                         : "writes are not allowed: this statement would "
                           "modify the database";
  }
  if (refusal) {
    sqlite3_finalize(st);
    tt_db_refuse(err, why, "%s", refusal);
    return NULL;
  }
  return st;
}

sqlite3_stmt *tt_db_prepare_guarded(tt_db *db, const char *sql, size_t len, double deadline_ms,
                                    tt_error *err) {
  if (err) {
    err->kind = TT_OK;
    err->reason = TT_REFUSE_NONE;
    err->message[0] = '\0';
  }
  if (!tt_guard_check_text(sql, len, db->trusted_text, err)) return NULL;
  if (len > TT_LIMIT_SQL_LENGTH) {
    tt_db_set_error(err, TT_ERR_LIMIT,
                    "the SQL text is %zu bytes; the limit is %d bytes", len,
                    TT_LIMIT_SQL_LENGTH);
    return NULL;
  }
  /* names shown escaped ("caf\xE9") stand for their bytes */
  size_t raw_len = 0;
  char *raw = db->trusted_text ? NULL : tt_db_raw_names(db, sql, len, &raw_len);
  sqlite3_stmt *st = tt_prepare_checked(db, raw ? raw : sql, raw ? raw_len : len, deadline_ms, err);
  free(raw);
  return st;
}

/* Failures another program causes for a moment (a writer holding its lock,
 * a journal it is about to delete): worth trying again while time is left. */
static bool tt_transient(const tt_db *db, const tt_error *err, int rc) {
  (void)err;
  return (rc == SQLITE_READONLY_ROLLBACK || (rc & 0xff) == SQLITE_BUSY) && !db->cancelled &&
         tt_now_ms() + 5 < db->deadline_ms;
}

/* One attempt: NULL with err (and *rc, SQLite's code) on failure. */
static tt_result *tt_db_query_once(tt_db *db, const char *sql, size_t len, double deadline_ms,
                                   int *rc, tt_error *err) {
  double t0 = tt_now_ms();
  *rc = SQLITE_OK;
  sqlite3_stmt *st = tt_db_prepare_guarded(db, sql, len, deadline_ms, err);
  if (!st) {
    *rc = sqlite3_extended_errcode(db->h);
    return NULL;
  }
  tt_result *r = tt_result_start(st);
  int step = tt_collect_rows(db, st, r);
  if (step != SQLITE_ROW && step != SQLITE_DONE) {
    *rc = step;
    tt_db_fail(db, step, err);
    sqlite3_finalize(st);
    tt_result_free(r);
    return NULL;
  }
  sqlite3_finalize(st);
  r->repeatable = !db->varies && !db->timed_out && (r->total_exact || !tt_db_limits(db)->count_rows ||
                                                    r->total_rows >= tt_db_limits(db)->count_rows);
  r->elapsed_ms = tt_now_ms() - t0;
  return r;
}

tt_result *tt_db_query_opts(tt_db *db, const char *sql, size_t len, const tt_db_opts *opts,
                            tt_error *err) {
  db->query_opts = opts;
  tt_result *r = tt_db_query(db, sql, len, err);
  db->query_opts = NULL;
  return r;
}

tt_result *tt_db_query(tt_db *db, const char *sql, size_t len, tt_error *err) {
  if (db->pg) return tt_pg_query(db, sql, len, err);
  double t0 = tt_now_ms(), deadline = t0 + tt_db_limits(db)->timeout_s * 1000.0;
  for (int attempt = 0;; attempt++) {
    if (!tt_db_refresh(db, err)) return NULL;
    int rc;
    tt_result *r = tt_db_query_once(db, sql, len, deadline, &rc, err); /* one limit for all */
    if (r && tt_db_unchanged(db)) {
      r->elapsed_ms = tt_now_ms() - t0;
      return r;
    }
    if (!r && !tt_transient(db, err, rc)) return NULL;
    tt_result_free(r); /* read without locks while a writer changed the file */
    if (tt_now_ms() + 5 >= deadline) {
      if (r || rc == SQLITE_OK)
        tt_db_set_error(err, TT_ERR_BUSY,
                        "another program kept changing %s while it was read, for the whole "
                        "%.3g s time limit; try again, or raise --timeout", db->path,
                        tt_db_limits(db)->timeout_s);
      return NULL;
    }
    sqlite3_sleep(attempt < 10 ? 1 : 5);
  }
}
