/* exec.c — running one guarded query on SQLite: check the text, prepare
 * exactly one statement, refuse anything that is not a read, then step
 * under the deadline and the row and byte caps (the shared result
 * builder's), copying typed values into a result; a read without locks
 * that a writer overlapped is done again. */
#include "db/sqlite/sqlite.h"

#include <stdlib.h>
#include <string.h>

/* Prepares the first statement of sql, skipping leading empty ones. */
static int tt_prepare_first(tt_sqlite *s, const char *sql, size_t len,
                            sqlite3_stmt **st, const char **tail) {
  const char *end = sql + len;
  const char *p = sql;
  *st = NULL;
  for (;;) {
    int rc = sqlite3_prepare_v3(s->h, p, (int)(end - p), 0, st, tail);
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

/* A result under the query's limits, with the statement's columns. */
static tt_result *tt_result_start(tt_result_builder *b, sqlite3_stmt *st,
                                  const tt_db_opts *limits) {
  tt_result *r = tt_result_builder_start(b, (size_t)sqlite3_column_count(st), limits);
  for (size_t c = 0; c < r->ncols; c++) {
    const char *name = sqlite3_column_name(st, (int)c);
    const char *type = sqlite3_column_decltype(st, (int)c);
    r->names[c] = tt_db_shown_name(r->arena, name ? name : "?");
    r->decltypes[c] = tt_arena_strdup(r->arena, type ? type : "");
  }
  return r;
}

/* Steps through the rows under the caps (the builder's); past a cap,
 * counts the rows it no longer keeps when count_rows asks for it. Returns
 * the final step code. */
static int tt_collect_rows(tt_sqlite *s, sqlite3_stmt *st, tt_result_builder *b) {
  tt_result *r = b->r;
  int ncols = (int)r->ncols;
  tt_value *row = tt_xcalloc(r->ncols ? r->ncols : 1, sizeof *row);
  int rc;
  s->stepping = true;
  while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
    tt_row_fate fate = tt_result_builder_row(b);
    if (fate == TT_ROW_ENOUGH) break;
    if (fate == TT_ROW_COUNTED) continue;
    /* the values point into SQLite's memory until the next step; the
     * builder copies what it keeps */
    for (int c = 0; c < ncols; c++) tt_copy_value(NULL, st, c, &row[c]);
    bool enough;
    if (!tt_result_builder_add(b, row, tt_row_bytes(st, ncols), &enough) && enough) break;
  }
  s->stepping = false;
  free(row);
  tt_result_builder_end(b, rc == SQLITE_DONE);
  /* Counting past the cut is a courtesy: when it runs out of time or memory
   * the rows we hold are still complete up to the cut. */
  if (b->counting && rc != SQLITE_ROW && rc != SQLITE_DONE) rc = SQLITE_ROW;
  /* The step that would have found a row past the cap ran out of time: the
   * rows we hold are complete up to the cap and more may exist. */
  if (rc != SQLITE_ROW && rc != SQLITE_DONE && s->timed_out && b->cap_rows &&
      r->nrows == b->cap_rows) {
    r->truncated = true;
    r->truncated_by = TT_TRUNC_ROWS;
    rc = SQLITE_ROW;
  }
  return rc;
}

/* The statement of sql (text already checked), past the guard's checks. */
static sqlite3_stmt *tt_prepare_checked(tt_sqlite *s, const char *sql, size_t len, double deadline_ms,
                                        tt_error *err) {
  tt_guard_arm(s, deadline_ms);
  sqlite3_stmt *st = NULL;
  const char *tail = NULL;
  s->preparing = true;
  int rc = tt_prepare_first(s, sql, len, &st, &tail);
  if (rc != SQLITE_OK) tt_db_fail(s, rc, err);
  s->preparing = false;
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
    why = s->denied ? s->deny_reason : TT_REFUSE_WRITE;
    refusal = s->denied ? s->deny
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

sqlite3_stmt *tt_db_prepare_guarded(tt_sqlite *s, const char *sql, size_t len, double deadline_ms,
                                    tt_error *err) {
  if (!tt_db_check_sql_text(sql, len, s->db->trusted_text, err)) return NULL;
  /* names shown escaped ("caf\xE9") stand for their bytes */
  size_t raw_len = 0;
  char *raw = s->db->trusted_text ? NULL : tt_db_raw_names(s, sql, len, &raw_len);
  sqlite3_stmt *st = tt_prepare_checked(s, raw ? raw : sql, raw ? raw_len : len, deadline_ms, err);
  free(raw);
  return st;
}

/* One attempt: NULL with err (and *rc, SQLite's code) on failure. */
static tt_result *tt_db_query_once(tt_sqlite *s, const char *sql, size_t len, double deadline_ms,
                                   int *rc, tt_error *err) {
  double t0 = tt_now_ms();
  *rc = SQLITE_OK;
  sqlite3_stmt *st = tt_db_prepare_guarded(s, sql, len, deadline_ms, err);
  if (!st) {
    *rc = sqlite3_extended_errcode(s->h);
    return NULL;
  }
  tt_result_builder b;
  tt_result *r = tt_result_start(&b, st, tt_db_limits(s->db));
  int step = tt_collect_rows(s, st, &b);
  if (step != SQLITE_ROW && step != SQLITE_DONE) {
    *rc = step;
    tt_db_fail(s, step, err);
    sqlite3_finalize(st);
    tt_result_free(r);
    return NULL;
  }
  sqlite3_finalize(st);
  r->repeatable = !s->varies && !s->timed_out && (r->total_exact || !tt_db_limits(s->db)->count_rows ||
                                                    r->total_rows >= tt_db_limits(s->db)->count_rows);
  r->elapsed_ms = tt_now_ms() - t0;
  return r;
}

tt_result *tt_sqlite_query(tt_db *db, const char *sql, size_t len, tt_error *err) {
  tt_sqlite *s = tt_sqlite_of(db);
  double t0 = tt_now_ms(), deadline = t0 + tt_db_limits(s->db)->timeout_s * 1000.0;
  for (int attempt = 0;; attempt++) {
    if (!tt_db_refresh(s, deadline, err)) return NULL;
    int rc;
    tt_result *r = tt_db_query_once(s, sql, len, deadline, &rc, err); /* one limit for all */
    if (r && tt_db_unchanged(s)) {
      r->elapsed_ms = tt_now_ms() - t0;
      return r;
    }
    if (!r && !tt_db_transient(s, rc, s->deadline_ms)) return NULL;
    tt_result_free(r); /* read without locks while a writer changed the file */
    if (tt_now_ms() + 5 >= deadline) {
      if (r || rc == SQLITE_OK)
        tt_db_set_error(err, TT_ERR_BUSY,
                        "another program kept changing %s while it was read, for the whole "
                        "%.3g s time limit; try again, or raise --timeout", s->db->name,
                        tt_db_limits(s->db)->timeout_s);
      return NULL;
    }
    sqlite3_sleep(attempt < 10 ? 1 : 5);
  }
}
