/* queries.c — SQL a user ran by hand (tabletalk web's editor), kept per
 * database in the thread store: each query has a short id derived from
 * its text, so the same SQL always has the same id and a page can link,
 * page through and download a result by id; those run from the editor form
 * the history, newest first. */
#include "store/store_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* 16 hex digits of the SQL's hash; try > 0 gives another id for the same
 * text (after a collision with a different one). */
static void tt_query_id(const char *sql, unsigned try, char id[TT_QUERY_ID_LEN + 1]) {
  uint64_t h = tt_fnv1a64(TT_FNV1A64_INIT, sql, strlen(sql));
  if (try) h = tt_fnv1a64(h, &try, sizeof try);
  snprintf(id, TT_QUERY_ID_LEN + 1, "%016llx", (unsigned long long)h);
}

static bool tt_store_fail(sqlite3 *h, tt_error *err, const char *what) {
  tt_error_set(err, TT_ERR_IO, "cannot %s the query history: %s", what, sqlite3_errmsg(h));
  tt_error_hint(err, "check that the state folder is writable");
  return false;
}

/* The SQL stored under id, or NULL (freshly allocated). */
static char *tt_query_sql_of(sqlite3 *h, const char *db_path, const char *id, int *rc) {
  sqlite3_stmt *st = NULL;
  char *sql = NULL;
  *rc = sqlite3_prepare_v2(h, "SELECT sql FROM queries WHERE db_path = ?1 AND id = ?2", -1, &st, NULL);
  if (*rc != SQLITE_OK) return NULL;
  sqlite3_bind_text(st, 1, db_path, -1, SQLITE_STATIC);
  sqlite3_bind_text(st, 2, id, -1, SQLITE_STATIC);
  *rc = sqlite3_step(st);
  if (*rc == SQLITE_ROW) {
    sql = tt_xstrdup((const char *)sqlite3_column_text(st, 0));
    *rc = SQLITE_DONE;
  }
  sqlite3_finalize(st);
  return sql;
}

bool tt_store_put_query(tt_store *s, const char *db_path, const char *sql, bool history,
                        char id[TT_QUERY_ID_LEN + 1], tt_error *err) {
  sqlite3 *h = tt_store_handle(s);
  if (sqlite3_exec(h, "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK)
    return tt_store_fail(h, err, "write");
  int rc = SQLITE_OK;
  for (unsigned try = 0;; try++) {
    tt_query_id(sql, try, id);
    char *have = tt_query_sql_of(h, db_path, id, &rc);
    bool same = have && strcmp(have, sql) == 0;
    free(have);
    if (rc != SQLITE_DONE || !have || same) break; /* free, or already ours */
  }
  sqlite3_stmt *st = NULL;
  if (rc == SQLITE_DONE)
    rc = sqlite3_prepare_v2(h,
                            "INSERT INTO queries(db_path, id, sql, created, last_run, runs)"
                            " VALUES (?1, ?2, ?3, ?4, CASE WHEN ?5 THEN ?4 END, ?5)"
                            " ON CONFLICT(db_path, id) DO UPDATE SET"
                            " last_run = CASE WHEN ?5 THEN ?4 ELSE last_run END,"
                            " runs = runs + ?5",
                            -1, &st, NULL);
  if (rc == SQLITE_OK) {
    sqlite3_bind_text(st, 1, db_path, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, id, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 3, sql, -1, SQLITE_STATIC);
    sqlite3_bind_double(st, 4, tt_wall_time());
    sqlite3_bind_int(st, 5, history ? 1 : 0);
    rc = sqlite3_step(st) == SQLITE_DONE ? SQLITE_OK : SQLITE_ERROR;
  }
  sqlite3_finalize(st);
  if (rc == SQLITE_OK && sqlite3_exec(h, "COMMIT", NULL, NULL, NULL) == SQLITE_OK) return true;
  tt_store_fail(h, err, "write");
  sqlite3_exec(h, "ROLLBACK", NULL, NULL, NULL);
  return false;
}

bool tt_store_get_query(tt_store *s, const char *db_path, const char *id, char **sql,
                        tt_error *err) {
  sqlite3 *h = tt_store_handle(s);
  int rc;
  *sql = tt_query_sql_of(h, db_path, id, &rc);
  return rc == SQLITE_DONE || tt_store_fail(h, err, "read");
}

bool tt_store_list_queries(tt_store *s, const char *db_path, size_t limit, tt_query_rec **out,
                           size_t *n, tt_error *err) {
  sqlite3 *h = tt_store_handle(s);
  *out = NULL;
  *n = 0;
  sqlite3_stmt *st;
  if (sqlite3_prepare_v2(h,
                         "SELECT id, sql, last_run, runs FROM queries WHERE db_path = ?1 AND"
                         " last_run IS NOT NULL ORDER BY last_run DESC, id LIMIT ?2",
                         -1, &st, NULL) != SQLITE_OK)
    return tt_store_fail(h, err, "read");
  sqlite3_bind_text(st, 1, db_path, -1, SQLITE_STATIC);
  sqlite3_bind_int64(st, 2, (sqlite3_int64)limit);
  int rc;
  size_t cap = 0;
  while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
    if (*n == cap) {
      cap = cap ? cap * 2 : 16;
      *out = tt_xrealloc(*out, cap * sizeof **out);
    }
    tt_query_rec *q = &(*out)[(*n)++];
    snprintf(q->id, sizeof q->id, "%s", (const char *)sqlite3_column_text(st, 0));
    q->sql = tt_xstrdup((const char *)sqlite3_column_text(st, 1));
    q->last_run = sqlite3_column_double(st, 2);
    q->runs = (long)sqlite3_column_int64(st, 3);
  }
  sqlite3_finalize(st);
  if (rc == SQLITE_DONE) return true;
  tt_query_recs_free(*out, *n);
  *out = NULL;
  *n = 0;
  return tt_store_fail(h, err, "read");
}

void tt_query_recs_free(tt_query_rec *v, size_t n) {
  for (size_t i = 0; i < n; i++) free(v[i].sql);
  free(v);
}
