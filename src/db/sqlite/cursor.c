/* cursor.c — SQLite's side of a cursor (the shared one in ../cursor.c
 * applies the caps and keeps the time): the same checks as a whole query,
 * one row held at a time (values point into SQLite's memory until the
 * next step), and the deadline moved on by the time the caller spends
 * away, so that only the time inside SQLite counts against the limit. */
#include "db/sqlite/sqlite.h"

#include <stdlib.h>

typedef struct tt_sqlite_cursor {
  tt_engine_cursor base; /* first: what the shared cursor reads */
  tt_sqlite *s;
  sqlite3_stmt *st;
  tt_value *row;
  tt_arena *arena;       /* the column names as shown */
} tt_sqlite_cursor;

tt_engine_cursor *tt_sqlite_cursor_open(tt_db *db, const char *sql, size_t len, tt_error *err) {
  tt_sqlite *s = tt_sqlite_of(db);
  double t0 = tt_now_ms();
  if (!tt_db_refresh(s, t0 + db->opts.timeout_s * 1000.0, err)) return NULL;
  sqlite3_stmt *st = tt_db_prepare_guarded(s, sql, len, t0 + db->opts.timeout_s * 1000.0, err);
  if (!st) return NULL;
  tt_sqlite_cursor *c = tt_xcalloc(1, sizeof *c);
  c->s = s;
  c->st = st;
  size_t n = (size_t)sqlite3_column_count(st);
  c->base.ncols = n;
  c->arena = tt_arena_new();
  c->base.names = tt_arena_alloc(c->arena, (n ? n : 1) * sizeof(char *));
  c->base.decltypes = tt_arena_alloc(c->arena, (n ? n : 1) * sizeof(char *));
  c->row = tt_xcalloc(n ? n : 1, sizeof *c->row);
  for (size_t i = 0; i < n; i++) {
    const char *name = sqlite3_column_name(st, (int)i);
    const char *type = sqlite3_column_decltype(st, (int)i);
    c->base.names[i] = tt_db_shown_name(c->arena, name ? name : "?");
    c->base.decltypes[i] = tt_arena_strdup(c->arena, type ? type : "");
  }
  return &c->base;
}

int tt_sqlite_cursor_next(tt_engine_cursor *ec, const tt_value **row, size_t *row_bytes,
                          tt_error *err) {
  tt_sqlite_cursor *c = (tt_sqlite_cursor *)ec;
  tt_sqlite *s = c->s;
  s->deadline_ms += c->base.away_ms; /* the caller's time is not the query's */
  s->stepping = true;
  int rc = sqlite3_step(c->st);
  s->stepping = false;
  if (rc == SQLITE_DONE) {
    if (!tt_db_unchanged(s)) { /* read without locks while a writer changed the file */
      tt_db_set_error(err, TT_ERR_BUSY,
                      "another program changed %s while it was read, so these rows may mix two "
                      "versions of it; run the query again", s->db->name);
      return -1;
    }
    return 0;
  }
  if (rc != SQLITE_ROW) {
    tt_db_fail(s, rc, err);
    return -1;
  }
  /* the values (pointing into SQLite's memory), weighed as max_bytes
   * counts them (tt_row_bytes) in the same pass */
  int n = (int)c->base.ncols;
  size_t bytes = 0;
  for (int i = 0; i < n; i++) {
    tt_value *v = &c->row[i];
    tt_copy_value(NULL, c->st, i, v);
    bytes += v->type == TT_VAL_INT || v->type == TT_VAL_REAL ? 8 : v->len;
  }
  *row_bytes = bytes;
  *row = c->row;
  return 1;
}

void tt_sqlite_cursor_close(tt_engine_cursor *ec) {
  tt_sqlite_cursor *c = (tt_sqlite_cursor *)ec;
  if (!c) return;
  sqlite3_finalize(c->st);
  tt_arena_free(c->arena);
  free(c->row);
  free(c);
}
