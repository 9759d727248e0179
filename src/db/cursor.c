/* cursor.c — a guarded query read one row at a time, for output that
 * streams (CSV, TSV and JSON exports), over any engine's cursor: the
 * engine checks and runs the statement and gives rows with their weight;
 * this file applies the optional row and byte caps (a first row alone
 * over the byte cap comes with its cells cut, never left out) and counts
 * the time spent inside the engine (not while the caller writes to a slow
 * pipe). That time is also published in two atomics, so that a watchdog's
 * signal handler can read it without a system call per row
 * (tt_cursor_engine_ms_now). */
#include "db/engine.h"

#include <assert.h>
#include <stdatomic.h>
#include <stdlib.h>

struct tt_cursor {
  tt_db *db;
  tt_engine_cursor *ec; /* the engine's cursor */
  long max_rows;        /* 0: no cap */
  long max_bytes;       /* 0: no cap */
  long rows;            /* rows returned so far */
  long bytes;           /* bytes returned so far, as max_bytes counts them */
  tt_trunc truncated;   /* stopped at a cap with more rows left */
  size_t cells_cut;     /* cells cut to fit max_bytes */
  tt_value *cut_row;    /* a first row cut to fit max_bytes ... */
  tt_arena *cut_arena;  /* ... and the bytes it keeps */
  bool done;
  double engine_ms;     /* time spent inside the engine */
  double returned_ms;   /* when the engine last gave the caller control */
  /* for a signal handler: engine_ms as of the last return, and when the
   * step now running began (0: the caller has control) */
  _Atomic double pub_engine_ms;
  _Atomic double pub_step_since;
};

static_assert(__atomic_always_lock_free(sizeof(double), 0), "a signal handler reads these atomics");

/* Relaxed stores are plain moves; the signal fences keep their order
 * against a handler that interrupts this thread between them, so that it
 * never counts a step twice. */
static void tt_cursor_publish_step(tt_cursor *c, double since) {
  atomic_signal_fence(memory_order_seq_cst);
  atomic_store_explicit(&c->pub_step_since, since, memory_order_relaxed);
  atomic_signal_fence(memory_order_seq_cst);
}

static void tt_cursor_publish_done(tt_cursor *c) {
  tt_cursor_publish_step(c, 0);
  atomic_store_explicit(&c->pub_engine_ms, c->engine_ms, memory_order_relaxed);
  atomic_signal_fence(memory_order_seq_cst);
}

tt_cursor *tt_db_cursor_open(tt_db *db, const char *sql, size_t len, long max_rows,
                             long max_bytes, tt_error *err) {
  double t0 = tt_now_ms();
  tt_engine_cursor *ec = db->engine->cursor_open(db, sql, len, err);
  if (!ec) {
    tt_db_target_scrub(&db->target, err);
    return NULL;
  }
  tt_cursor *c = tt_xcalloc(1, sizeof *c);
  c->db = db;
  c->ec = ec;
  c->max_rows = max_rows > 0 ? max_rows : 0;
  c->max_bytes = max_bytes > 0 ? max_bytes : 0;
  c->returned_ms = tt_now_ms();
  c->engine_ms = c->returned_ms - t0;
  tt_cursor_publish_done(c);
  return c;
}

size_t tt_cursor_ncols(const tt_cursor *c) { return c->ec->ncols; }
const char *tt_cursor_name(const tt_cursor *c, size_t col) { return c->ec->names[col]; }
const char *tt_cursor_decltype(const tt_cursor *c, size_t col) { return c->ec->decltypes[col]; }
long tt_cursor_rows(const tt_cursor *c) { return c->rows; }
tt_trunc tt_cursor_truncated(const tt_cursor *c) { return c->truncated; }
size_t tt_cursor_cells_cut(const tt_cursor *c) { return c->cells_cut; }
double tt_cursor_elapsed_ms(const tt_cursor *c) { return c->engine_ms; }

double tt_cursor_engine_ms_now(const tt_cursor *c) {
  double since = atomic_load_explicit(&c->pub_step_since, memory_order_relaxed);
  atomic_signal_fence(memory_order_seq_cst);
  double done = atomic_load_explicit(&c->pub_engine_ms, memory_order_relaxed);
  return since > 0 ? done + (tt_now_ms() - since) : done;
}

int tt_cursor_next(tt_cursor *c, const tt_value **row, tt_error *err) {
  *row = NULL;
  if (c->done) return 0;
  double t0 = tt_now_ms();
  size_t rb = 0;
  const tt_value *got = NULL;
  c->ec->away_ms = t0 - c->returned_ms;
  tt_cursor_publish_step(c, t0);
  int rc = c->db->engine->cursor_next(c->ec, &got, &rb, err);
  c->returned_ms = tt_now_ms();
  c->engine_ms += c->returned_ms - t0;
  tt_cursor_publish_done(c);
  if (rc <= 0) {
    if (rc < 0) tt_db_target_scrub(&c->db->target, err);
    c->done = true;
    return rc;
  }
  if (c->max_rows && c->rows >= c->max_rows) {
    c->done = true;
    c->truncated = TT_TRUNC_ROWS;
    return 0;
  }
  if (c->max_bytes && c->bytes + (long)rb > c->max_bytes) {
    if (c->rows > 0) {
      c->done = true;
      c->truncated = TT_TRUNC_BYTES;
      return 0;
    }
    /* a first row alone over the cap: kept with its cells cut to fit */
    size_t n = c->ec->ncols;
    c->cut_row = tt_xcalloc(n ? n : 1, sizeof *c->cut_row);
    c->cut_arena = tt_arena_new();
    c->cells_cut += tt_row_copy_within(c->cut_row, got, n, (size_t)c->max_bytes, c->cut_arena);
    got = c->cut_row;
    rb = tt_row_weight(got, n);
  }
  c->bytes += (long)rb;
  c->rows++;
  *row = got;
  return 1;
}

void tt_cursor_close(tt_cursor *c) {
  if (!c) return;
  c->db->engine->cursor_close(c->ec);
  free(c->cut_row);
  tt_arena_free(c->cut_arena);
  free(c);
}
