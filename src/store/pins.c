/* pins.c — the board of a database: answers pinned by the user (a title,
 * the SQL, the chart spec, the question and run they came from), in an
 * order the user chooses, kept in the thread store beside the threads.
 * tabletalk web re-runs each pin's SQL when the board opens: no model. */
#include "store/store_internal.h"

#include <stdlib.h>
#include <string.h>

static bool tt_pins_fail(sqlite3 *h, tt_error *err, const char *what) {
  tt_error_set(err, TT_ERR_IO, "cannot %s the board: %s", what, sqlite3_errmsg(h));
  tt_error_hint(err, "check that the state folder is writable");
  return false;
}

static char *tt_pin_col(sqlite3_stmt *st, int c) {
  const unsigned char *t = sqlite3_column_text(st, c);
  return t ? tt_xstrdup((const char *)t) : NULL;
}

#define TT_PIN_COLUMNS "id, position, title, sql, chart, question, run_id, created"

static void tt_pin_read(sqlite3_stmt *st, tt_pin *p) {
  p->id = sqlite3_column_int64(st, 0);
  p->position = (long)sqlite3_column_int64(st, 1);
  p->title = tt_pin_col(st, 2);
  p->sql = tt_pin_col(st, 3);
  p->chart = tt_pin_col(st, 4);
  p->question = tt_pin_col(st, 5);
  p->run_id = tt_pin_col(st, 6);
  p->created = sqlite3_column_double(st, 7);
}

void tt_pin_free(tt_pin *p) {
  free(p->title);
  free(p->sql);
  free(p->chart);
  free(p->question);
  free(p->run_id);
  memset(p, 0, sizeof *p);
}

void tt_pins_free(tt_pin *v, size_t n) {
  for (size_t i = 0; i < n; i++) tt_pin_free(&v[i]);
  free(v);
}

static void tt_pin_bind(sqlite3_stmt *st, int i, const char *s) {
  if (s) sqlite3_bind_text(st, i, s, -1, SQLITE_STATIC);
  else sqlite3_bind_null(st, i);
}

bool tt_store_add_pin(tt_store *s, const char *db_path, const tt_pin *p, long long *id,
                      tt_error *err) {
  sqlite3 *h = tt_store_handle(s);
  sqlite3_stmt *st = NULL;
  bool ok = sqlite3_prepare_v2(h,
                               "INSERT INTO pins(db_path, position, title, sql, chart, question,"
                               " run_id, created) VALUES (?1, (SELECT coalesce(max(position), -1)"
                               " + 1 FROM pins WHERE db_path = ?1), ?2, ?3, ?4, ?5, ?6, ?7)",
                               -1, &st, NULL) == SQLITE_OK;
  if (ok) {
    sqlite3_bind_text(st, 1, db_path, -1, SQLITE_STATIC);
    tt_pin_bind(st, 2, p->title);
    tt_pin_bind(st, 3, p->sql);
    tt_pin_bind(st, 4, p->chart);
    tt_pin_bind(st, 5, p->question);
    tt_pin_bind(st, 6, p->run_id);
    sqlite3_bind_double(st, 7, tt_wall_time());
    ok = sqlite3_step(st) == SQLITE_DONE;
  }
  sqlite3_finalize(st);
  if (!ok) return tt_pins_fail(h, err, "write");
  *id = sqlite3_last_insert_rowid(h);
  return true;
}

bool tt_store_list_pins(tt_store *s, const char *db_path, tt_pin **out, size_t *n,
                        tt_error *err) {
  sqlite3 *h = tt_store_handle(s);
  *out = NULL;
  *n = 0;
  sqlite3_stmt *st;
  if (sqlite3_prepare_v2(h, "SELECT " TT_PIN_COLUMNS " FROM pins WHERE db_path = ?1"
                            " ORDER BY position, id", -1, &st, NULL) != SQLITE_OK)
    return tt_pins_fail(h, err, "read");
  sqlite3_bind_text(st, 1, db_path, -1, SQLITE_STATIC);
  size_t cap = 0;
  int rc;
  while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
    if (*n == cap) {
      cap = cap ? cap * 2 : 8;
      *out = tt_xrealloc(*out, cap * sizeof **out);
    }
    tt_pin_read(st, &(*out)[(*n)++]);
  }
  sqlite3_finalize(st);
  if (rc == SQLITE_DONE) return true;
  tt_pins_free(*out, *n);
  *out = NULL;
  *n = 0;
  return tt_pins_fail(h, err, "read");
}

bool tt_store_get_pin(tt_store *s, const char *db_path, long long id, tt_pin *out, bool *found,
                      tt_error *err) {
  sqlite3 *h = tt_store_handle(s);
  memset(out, 0, sizeof *out);
  *found = false;
  sqlite3_stmt *st;
  if (sqlite3_prepare_v2(h, "SELECT " TT_PIN_COLUMNS " FROM pins WHERE db_path = ?1 AND id = ?2",
                         -1, &st, NULL) != SQLITE_OK)
    return tt_pins_fail(h, err, "read");
  sqlite3_bind_text(st, 1, db_path, -1, SQLITE_STATIC);
  sqlite3_bind_int64(st, 2, id);
  int rc = sqlite3_step(st);
  if (rc == SQLITE_ROW) {
    tt_pin_read(st, out);
    *found = true;
  }
  sqlite3_finalize(st);
  return rc == SQLITE_ROW || rc == SQLITE_DONE || tt_pins_fail(h, err, "read");
}

/* Runs one statement binding ?1 db_path, ?2 id, ?3 text; *found: a row changed. */
static bool tt_pins_change(tt_store *s, const char *sql, const char *db_path, long long id,
                           const char *text, bool *found, tt_error *err) {
  sqlite3 *h = tt_store_handle(s);
  sqlite3_stmt *st;
  *found = false;
  if (sqlite3_prepare_v2(h, sql, -1, &st, NULL) != SQLITE_OK) return tt_pins_fail(h, err, "write");
  sqlite3_bind_text(st, 1, db_path, -1, SQLITE_STATIC);
  sqlite3_bind_int64(st, 2, id);
  if (text) sqlite3_bind_text(st, 3, text, -1, SQLITE_STATIC);
  bool ok = sqlite3_step(st) == SQLITE_DONE;
  sqlite3_finalize(st);
  if (!ok) return tt_pins_fail(h, err, "write");
  *found = sqlite3_changes(h) > 0;
  return true;
}

bool tt_store_rename_pin(tt_store *s, const char *db_path, long long id, const char *title,
                         bool *found, tt_error *err) {
  return tt_pins_change(s, "UPDATE pins SET title = ?3 WHERE db_path = ?1 AND id = ?2", db_path,
                        id, title, found, err);
}

bool tt_store_delete_pin(tt_store *s, const char *db_path, long long id, bool *found,
                         tt_error *err) {
  return tt_pins_change(s, "DELETE FROM pins WHERE db_path = ?1 AND id = ?2", db_path, id, NULL,
                        found, err);
}

/* The board's pin ids in order, inside the caller's transaction. */
static bool tt_pins_ids(sqlite3 *h, const char *db_path, long long **ids, size_t *n) {
  sqlite3_stmt *st;
  *ids = NULL;
  *n = 0;
  if (sqlite3_prepare_v2(h, "SELECT id FROM pins WHERE db_path = ?1 ORDER BY position, id", -1,
                         &st, NULL) != SQLITE_OK)
    return false;
  sqlite3_bind_text(st, 1, db_path, -1, SQLITE_STATIC);
  size_t cap = 0;
  int rc;
  while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
    if (*n == cap) {
      cap = cap ? cap * 2 : 8;
      *ids = tt_xrealloc(*ids, cap * sizeof **ids);
    }
    (*ids)[(*n)++] = sqlite3_column_int64(st, 0);
  }
  sqlite3_finalize(st);
  return rc == SQLITE_DONE;
}

bool tt_store_move_pin(tt_store *s, const char *db_path, long long id, size_t to, bool *found,
                       tt_error *err) {
  sqlite3 *h = tt_store_handle(s);
  *found = false;
  if (sqlite3_exec(h, "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK)
    return tt_pins_fail(h, err, "write");
  long long *ids;
  size_t n, at = 0;
  bool ok = tt_pins_ids(h, db_path, &ids, &n);
  while (ok && at < n && ids[at] != id) at++;
  *found = ok && at < n;
  if (*found) {
    if (to >= n) to = n - 1;
    memmove(ids + at, ids + at + 1, (n - at - 1) * sizeof *ids); /* out ... */
    memmove(ids + to + 1, ids + to, (n - 1 - to) * sizeof *ids); /* ... and in again */
    ids[to] = id;
    sqlite3_stmt *st = NULL;
    ok = sqlite3_prepare_v2(h, "UPDATE pins SET position = ?2 WHERE id = ?1", -1, &st, NULL) ==
         SQLITE_OK;
    for (size_t i = 0; ok && i < n; i++) {
      sqlite3_reset(st);
      sqlite3_bind_int64(st, 1, ids[i]);
      sqlite3_bind_int64(st, 2, (sqlite3_int64)i);
      ok = sqlite3_step(st) == SQLITE_DONE;
    }
    sqlite3_finalize(st);
  }
  free(ids);
  if (ok && sqlite3_exec(h, "COMMIT", NULL, NULL, NULL) == SQLITE_OK) return true;
  tt_pins_fail(h, err, "write");
  sqlite3_exec(h, "ROLLBACK", NULL, NULL, NULL);
  *found = false;
  return false;
}
