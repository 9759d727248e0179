/* cursor.c — a guarded query read one row at a time, for output that
 * streams (CSV, TSV and JSON exports): the same checks as tt_db_query, the
 * time limit counted only while SQLite works (not while the caller writes
 * to a slow pipe), an optional row cap, and memory for one row only. */
#include "db/db_internal.h"

#include <stdlib.h>
#include <string.h>

struct tt_cursor {
  tt_db *db;
  sqlite3_stmt *st;
  size_t ncols;
  const char **names, **decltypes;
  tt_value *row;
  tt_arena *arena;      /* the column names as shown */
  long max_rows;        /* 0: no cap */
  long max_bytes;       /* 0: no cap */
  long rows;            /* rows returned so far */
  long bytes;           /* bytes returned so far, as max_bytes counts them */
  tt_trunc truncated;   /* stopped at a cap with more rows left */
  bool done;
  double away_since_ms; /* when the caller got the last row */
  double sqlite_ms;     /* time spent inside SQLite */
  tt_pg_run *pg;        /* a PostgreSQL statement instead of st */
};

/* A cursor over a PostgreSQL statement: the same caps, rows from pg.c. */
static tt_cursor *tt_pg_cursor_open(tt_db *db, const char *sql, size_t len, long max_rows,
                                    long max_bytes, tt_error *err) {
  double t0 = tt_now_ms();
  tt_pg_run *run = tt_pg_run_open(db, sql, len, db->opts.timeout_s, err);
  if (!run) return NULL;
  tt_cursor *c = tt_xcalloc(1, sizeof *c);
  c->db = db;
  c->pg = run;
  c->max_rows = max_rows > 0 ? max_rows : 0;
  c->max_bytes = max_bytes > 0 ? max_bytes : 0;
  c->ncols = tt_pg_run_ncols(run);
  c->names = tt_xcalloc(c->ncols ? c->ncols : 1, sizeof *c->names);
  c->decltypes = tt_xcalloc(c->ncols ? c->ncols : 1, sizeof *c->decltypes);
  for (size_t i = 0; i < c->ncols; i++) {
    c->names[i] = tt_pg_run_name(run, i);
    c->decltypes[i] = tt_pg_run_decltype(run, i);
  }
  c->sqlite_ms = tt_now_ms() - t0;
  return c;
}

static int tt_pg_cursor_next(tt_cursor *c, const tt_value **row, tt_error *err) {
  double t0 = tt_now_ms();
  size_t rb = 0;
  int rc = tt_pg_run_next(c->pg, row, &rb, err);
  c->sqlite_ms += tt_now_ms() - t0;
  if (rc <= 0) {
    c->done = true;
    *row = NULL;
    return rc;
  }
  if ((c->max_rows && c->rows >= c->max_rows) ||
      (c->max_bytes && c->bytes + (long)rb > c->max_bytes)) {
    c->done = true;
    c->truncated = c->max_rows && c->rows >= c->max_rows ? TT_TRUNC_ROWS : TT_TRUNC_BYTES;
    *row = NULL;
    return 0;
  }
  c->bytes += (long)rb;
  c->rows++;
  return 1;
}

tt_cursor *tt_db_cursor_open(tt_db *db, const char *sql, size_t len, long max_rows,
                             long max_bytes, tt_error *err) {
  if (db->pg) return tt_pg_cursor_open(db, sql, len, max_rows, max_bytes, err);
  double t0 = tt_now_ms();
  if (!tt_db_refresh(db, err)) return NULL;
  sqlite3_stmt *st = tt_db_prepare_guarded(db, sql, len, t0 + db->opts.timeout_s * 1000.0, err);
  if (!st) return NULL;
  tt_cursor *c = tt_xcalloc(1, sizeof *c);
  c->db = db;
  c->st = st;
  c->max_rows = max_rows > 0 ? max_rows : 0;
  c->max_bytes = max_bytes > 0 ? max_bytes : 0;
  c->ncols = (size_t)sqlite3_column_count(st);
  c->arena = tt_arena_new();
  c->names = tt_xcalloc(c->ncols ? c->ncols : 1, sizeof *c->names);
  c->decltypes = tt_xcalloc(c->ncols ? c->ncols : 1, sizeof *c->decltypes);
  c->row = tt_xcalloc(c->ncols ? c->ncols : 1, sizeof *c->row);
  for (size_t i = 0; i < c->ncols; i++) {
    const char *name = sqlite3_column_name(st, (int)i);
    const char *type = sqlite3_column_decltype(st, (int)i);
    c->names[i] = tt_db_shown_name(c->arena, name ? name : "?");
    c->decltypes[i] = type ? type : "";
  }
  c->sqlite_ms = tt_now_ms() - t0;
  c->away_since_ms = tt_now_ms();
  return c;
}

size_t tt_cursor_ncols(const tt_cursor *c) { return c->ncols; }
const char *tt_cursor_name(const tt_cursor *c, size_t col) { return c->names[col]; }
const char *tt_cursor_decltype(const tt_cursor *c, size_t col) { return c->decltypes[col]; }
long tt_cursor_rows(const tt_cursor *c) { return c->rows; }
tt_trunc tt_cursor_truncated(const tt_cursor *c) { return c->truncated; }
double tt_cursor_elapsed_ms(const tt_cursor *c) { return c->sqlite_ms; }

int tt_cursor_next(tt_cursor *c, const tt_value **row, tt_error *err) {
  *row = NULL;
  if (c->done) return 0;
  if (c->pg) return tt_pg_cursor_next(c, row, err);
  tt_db *db = c->db;
  double now = tt_now_ms();
  db->deadline_ms += now - c->away_since_ms; /* the caller's time is not the query's */
  db->stepping = true;
  int rc = sqlite3_step(c->st);
  db->stepping = false;
  c->away_since_ms = tt_now_ms();
  c->sqlite_ms += c->away_since_ms - now;
  if (rc == SQLITE_DONE) {
    c->done = true;
    if (!tt_db_unchanged(db)) { /* read without locks while a writer changed the file */
      tt_db_set_error(err, TT_ERR_BUSY,
                      "another program changed %s while it was read, so these rows may mix two "
                      "versions of it; run the query again", db->path);
      return -1;
    }
    return 0;
  }
  if (rc != SQLITE_ROW) {
    c->done = true;
    tt_db_fail(db, rc, err);
    return -1;
  }
  if (c->max_rows && c->rows >= c->max_rows) {
    c->done = true;
    c->truncated = TT_TRUNC_ROWS;
    return 0;
  }
  long rb = (long)tt_row_bytes(c->st, (int)c->ncols);
  if (c->max_bytes && c->bytes + rb > c->max_bytes) {
    c->done = true;
    c->truncated = TT_TRUNC_BYTES;
    return 0;
  }
  c->bytes += rb;
  for (size_t i = 0; i < c->ncols; i++) tt_copy_value(NULL, c->st, (int)i, &c->row[i]);
  c->rows++;
  *row = c->row;
  return 1;
}

void tt_cursor_close(tt_cursor *c) {
  if (!c) return;
  tt_pg_run_close(c->pg);
  sqlite3_finalize(c->st);
  free(c->names);
  tt_arena_free(c->arena);
  free(c->decltypes);
  free(c->row);
  free(c);
}
