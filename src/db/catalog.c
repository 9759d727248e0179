/* catalog.c — the parts of reading a schema that every engine shares:
 * tabletalk's own queries under their own limits, and reading the rows of
 * each table for its card (a bounded row count, three sample rows, the
 * frequent values of text columns). Each engine lists its tables, columns
 * and keys itself (sqlite/catalog.c, pg/pg_catalog.c) and names the tables
 * whose rows may be read (tt_catalog_probe); their rows are read here,
 * one table at a time (tt_db_catalog_probe), so that a caller can stop
 * between tables and go on later.
 *
 * Every bound is counted, not timed, so that the same database gives the
 * same catalog on an idle and on a loaded machine: counting stops after
 * TT_ROW_COUNT_LIMIT + 1 rows, samples are three rows, frequent values come
 * from the first TT_TOP_VALUES_SCAN rows, and a view (whose query may do
 * any amount of work for one row) may take TT_VIEW_STEPS steps of the
 * engine's work per query. Time only ever stops a read half-way: then the
 * table stays pending, never read differently. */
#include "db/engine.h"
#include "tt_version.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define TT_SAMPLE_ROWS 3
/* A view's query may do this much work (SQLite: virtual-machine
 * instructions, some 10-50 ms) for its rows; a view that needs more is
 * described without examples, on every machine alike. */
#define TT_VIEW_STEPS 2000000L
/* In a read with a deadline (a command that waits for the catalog), a
 * view's query may take this long before it is left for later: on engines
 * that count no steps a slow view would otherwise eat the whole deadline. */
#define TT_VIEW_TIMEOUT_S 0.5

tt_result *tt_catalog_query(tt_db *db, const char *sql, double timeout_s, long max_rows,
                            long max_bytes, tt_error *err) {
  tt_db_opts o = db->opts;
  o.timeout_s = timeout_s;
  o.max_rows = max_rows;
  o.max_bytes = max_bytes;
  o.count_rows = 0;
  const tt_db_opts *before = db->query_opts;
  bool trusted = db->trusted_text;
  db->query_opts = &o;
  db->trusted_text = true;
  tt_result *r = db->engine->query(db, sql, strlen(sql), err);
  db->trusted_text = trusted;
  db->query_opts = before;
  if (!r) tt_db_target_scrub(&db->target, err);
  return r;
}

const char *tt_catalog_cell_text(tt_arena *a, const tt_result *r, size_t row, size_t col) {
  const tt_value *v = tt_result_cell(r, row, col);
  if (v->type == TT_VAL_NULL) return NULL;
  tt_buf b = TT_BUF_INIT;
  tt_value_to_text(&b, v);
  char *s = tt_arena_memdup(a, tt_buf_cstr(&b), b.len);
  tt_buf_free(&b);
  return s;
}

int64_t tt_catalog_cell_int(const tt_result *r, size_t row, size_t col) {
  const tt_value *v = tt_result_cell(r, row, col);
  return v->type == TT_VAL_INT ? v->u.i : 0;
}

void tt_catalog_probe(tt_db *db, tt_arena *a, tt_table_info *t, const char *from,
                      double budget_end) {
  (void)db;
  (void)budget_end;
  if (t->row_count_kind != TT_ROWS_STAT1) t->row_count = -1;
  t->from = tt_arena_strdup(a, from);
  t->probe = TT_PROBE_PENDING;
}

/* ---- reading one table's rows -------------------------------------------- */

/* How one table's reads are bounded. */
typedef struct tt_probe_run {
  tt_db *db;
  const tt_table_info *t;
  double deadline_ms;             /* 0: none */
  volatile sig_atomic_t *cancel;
} tt_probe_run;

/* Why a read stopped. */
typedef enum tt_probe_end {
  TT_PROBE_READ,    /* it gave its rows */
  TT_PROBE_FAILED,  /* an error that stays (SQL, a limit): no rows, for good */
  TT_PROBE_TOO_MUCH,/* a view over its steps: no rows, for good */
  TT_PROBE_SLOW,    /* its time limit ran out with no deadline: for good */
  TT_PROBE_STOPPED, /* the deadline or a cancel: try again later */
} tt_probe_end;

/* One query of a table's read under its bounds; NULL with *end saying why. */
static tt_result *tt_probe_query(const tt_probe_run *p, const char *sql, long max_rows,
                                 long max_bytes, tt_probe_end *end) {
  tt_db *db = p->db;
  tt_db_opts o = db->opts;
  double timeout = o.timeout_s > 0 ? o.timeout_s : 5.0;
  bool deadline_first = false;
  if (p->t->is_view && p->deadline_ms > 0 && timeout > TT_VIEW_TIMEOUT_S) {
    timeout = TT_VIEW_TIMEOUT_S;
    deadline_first = true;
  }
  if (p->deadline_ms > 0) {
    double left = (p->deadline_ms - tt_now_ms()) / 1000.0;
    if (left < timeout) {
      timeout = left;
      deadline_first = true;
    }
  }
  if ((p->cancel && *p->cancel) || timeout < 0.001) {
    *end = TT_PROBE_STOPPED;
    return NULL;
  }
  o.timeout_s = timeout;
  o.max_rows = max_rows;
  o.max_bytes = max_bytes;
  o.count_rows = 0;
  o.cancel = p->cancel;
  o.max_steps = p->t->is_view ? TT_VIEW_STEPS : 0;
  const tt_db_opts *before = db->query_opts;
  bool trusted = db->trusted_text;
  db->query_opts = &o;
  db->trusted_text = true;
  tt_error err;
  tt_result *r = db->engine->query(db, sql, strlen(sql), &err);
  db->trusted_text = trusted;
  db->query_opts = before;
  if (r) {
    *end = TT_PROBE_READ;
  } else if (err.kind == TT_ERR_CANCELLED || (err.kind == TT_ERR_TIMEOUT && deadline_first)) {
    *end = TT_PROBE_STOPPED;
  } else if (err.kind == TT_ERR_TIMEOUT) {
    *end = TT_PROBE_SLOW;
  } else if (err.kind == TT_ERR_LIMIT && o.max_steps) {
    *end = TT_PROBE_TOO_MUCH;
  } else {
    *end = TT_PROBE_FAILED;
  }
  return r;
}

/* What one read of a table found, before it replaces what the table held. */
typedef struct tt_probe_found {
  int64_t row_count;
  tt_row_count_kind row_count_kind;
  tt_result *sample;
  const char ***top;  /* per column: up to TT_TOP_VALUES values, or NULL */
  size_t *ntop;
  const char *note;
} tt_probe_found;

/* name quoted as an identifier of the handle's dialect ("x" or `x`). */
static void tt_catalog_put_ident(const tt_db *db, tt_buf *b, const char *name) {
  char q = db->engine->facts.ident_quote ? db->engine->facts.ident_quote : '"';
  tt_buf_putc(b, q);
  for (const char *p = name; *p; p++) {
    if (*p == q) tt_buf_putc(b, q);
    tt_buf_putc(b, *p);
  }
  tt_buf_putc(b, q);
}

/* The query reading the most frequent values of each text column among the
 * first TT_TOP_VALUES_SCAN rows (keys are skipped: ids say nothing); false
 * when the table has no such column. */
static bool tt_top_values_sql(const tt_db *db, const tt_table_info *t, const tt_result *sample,
                              tt_buf *q, size_t *nread) {
  tt_buf_puts(q, "WITH s AS (SELECT ");
  bool *read = tt_xcalloc(t->ncols ? t->ncols : 1, sizeof(bool));
  *nread = 0;
  for (size_t c = 0; c < t->ncols; c++) {
    const tt_column_info *col = &t->cols[c];
    bool text = db->engine->is_text_type(col->type);
    if (!text && !col->type[0] && sample && c < sample->ncols && sample->nrows)
      text = tt_result_cell(sample, 0, c)->type == TT_VAL_TEXT;
    if (!text || col->pk) continue;
    read[c] = true;
    if ((*nread)++) tt_buf_puts(q, ", ");
    tt_catalog_put_ident(db, q, col->raw_name ? col->raw_name : col->name);
    tt_buf_printf(q, " AS c%zu", c);
  }
  if (*nread) {
    tt_buf_printf(q, " FROM %s LIMIT %d) ", t->from, TT_TOP_VALUES_SCAN);
    bool any = false;
    for (size_t c = 0; c < t->ncols; c++) {
      if (!read[c]) continue;
      if (any) tt_buf_puts(q, " UNION ALL ");
      any = true;
      tt_buf_printf(q,
                    "SELECT * FROM (SELECT %zu, substr(c%zu, 1, 200), count(*) FROM s WHERE c%zu "
                    "IS NOT NULL AND c%zu <> '' GROUP BY c%zu ORDER BY 3 DESC, 2 LIMIT %d) "
                    "AS t%zu", /* MySQL names every derived table */
                    c, c, c, c, c, TT_TOP_VALUES, c);
    }
  }
  free(read);
  return *nread > 0;
}

/* The frequent values into f (copies in a); false when the read stopped
 * for now (*end says why). */
static bool tt_read_top_values(const tt_probe_run *p, tt_arena *a, tt_probe_found *f,
                               tt_probe_end *end) {
  const tt_table_info *t = p->t;
  tt_buf q = TT_BUF_INIT;
  size_t nread;
  *end = TT_PROBE_READ;
  if (!tt_top_values_sql(p->db, t, f->sample, &q, &nread)) {
    tt_buf_free(&q);
    return true;
  }
  tt_result *r = tt_probe_query(p, tt_buf_cstr(&q), (long)(nread * TT_TOP_VALUES), 256 * 1024, end);
  tt_buf_free(&q);
  if (!r) return *end != TT_PROBE_STOPPED; /* values that cannot be read are left out */
  for (size_t i = 0; i < r->nrows; i++) {
    size_t c = (size_t)tt_catalog_cell_int(r, i, 0);
    const tt_value *v = tt_result_cell(r, i, 1);
    if (c >= t->ncols || v->type != TT_VAL_TEXT) continue;
    if (!f->top[c]) f->top[c] = tt_arena_alloc(a, TT_TOP_VALUES * sizeof(char *));
    if (f->ntop[c] < TT_TOP_VALUES) f->top[c][f->ntop[c]++] = tt_arena_memdup(a, v->u.s, v->len);
  }
  tt_result_free(r);
  return true;
}

/* A row count (tables only: a view's count runs its whole query) unless
 * statistics gave one; false when the read stopped for now. */
static bool tt_read_row_count(const tt_probe_run *p, tt_probe_found *f) {
  const tt_table_info *t = p->t;
  f->row_count = t->row_count_kind == TT_ROWS_STAT1 ? t->row_count : -1;
  f->row_count_kind = t->row_count_kind == TT_ROWS_STAT1 ? TT_ROWS_STAT1 : TT_ROWS_EXACT;
  if (t->is_view || t->row_count_kind == TT_ROWS_STAT1) return true;
  tt_buf q = TT_BUF_INIT;
  tt_buf_printf(&q, "SELECT count(*) FROM (SELECT 1 FROM %s LIMIT %d) AS c", t->from,
                TT_ROW_COUNT_LIMIT + 1);
  tt_probe_end end;
  tt_result *r = tt_probe_query(p, tt_buf_cstr(&q), 1, 1024, &end);
  tt_buf_free(&q);
  if (!r) return end != TT_PROBE_STOPPED; /* not counted: no count shown */
  f->row_count = r->nrows == 1 ? tt_catalog_cell_int(r, 0, 0) : -1;
  if (f->row_count > TT_ROW_COUNT_LIMIT) {
    f->row_count = TT_ROW_COUNT_LIMIT;
    f->row_count_kind = TT_ROWS_AT_LEAST;
  }
  tt_result_free(r);
  return true;
}

/* Why there are no examples, for the card (NULL: there are, or the
 * reason is the database's own error, as before). */
static const char *tt_probe_note(const tt_table_info *t, tt_probe_end end) {
  if (end == TT_PROBE_TOO_MUCH) return "no example values: the view takes too much work to read";
  if (end != TT_PROBE_SLOW) return NULL;
  return t->is_view ? "no example values: the view took too long to read"
                    : "no example values: the table took too long to read";
}

bool tt_db_catalog_probe(tt_db *db, tt_catalog *cat, size_t i, double deadline_ms,
                         volatile sig_atomic_t *cancel, uint64_t data_hash) {
  tt_table_info *t = &cat->tables[i];
  if (t->probe == TT_PROBE_NONE || !t->from) return true;
  tt_probe_run p = {.db = db, .t = t, .deadline_ms = deadline_ms, .cancel = cancel};
  tt_probe_found f = {0};
  tt_arena *a = tt_arena_new(); /* what is found, until it is kept */
  f.top = tt_arena_alloc(a, (t->ncols ? t->ncols : 1) * sizeof *f.top);
  f.ntop = tt_arena_alloc(a, (t->ncols ? t->ncols : 1) * sizeof *f.ntop);
  memset(f.top, 0, (t->ncols ? t->ncols : 1) * sizeof *f.top);
  memset(f.ntop, 0, (t->ncols ? t->ncols : 1) * sizeof *f.ntop);
  bool done = tt_read_row_count(&p, &f);
  if (done) {
    tt_buf q = TT_BUF_INIT;
    tt_buf_printf(&q, "SELECT * FROM %s LIMIT %d", t->from, TT_SAMPLE_ROWS);
    tt_probe_end end, top_end;
    f.sample = tt_probe_query(&p, tt_buf_cstr(&q), TT_SAMPLE_ROWS, 256 * 1024, &end);
    tt_buf_free(&q);
    if (f.sample) done = tt_read_top_values(&p, a, &f, &top_end);
    else done = end != TT_PROBE_STOPPED;
    if (done) f.note = tt_probe_note(t, end);
  }
  if (!done) { /* as it was: pending, or what an earlier read found */
    tt_result_free(f.sample);
    tt_arena_free(a);
    return false;
  }
  /* keep what was found: strings move into the catalog's arena */
  tt_result_free(t->sample);
  t->sample = f.sample;
  t->row_count = f.row_count;
  t->row_count_kind = f.row_count_kind;
  for (size_t c = 0; c < t->ncols; c++) {
    tt_column_info *col = &t->cols[c];
    col->ntop_values = f.ntop[c];
    col->top_values = NULL;
    if (!f.ntop[c]) continue;
    col->top_values = tt_arena_alloc(cat->arena, f.ntop[c] * sizeof(char *));
    for (size_t k = 0; k < f.ntop[c]; k++)
      col->top_values[k] = tt_arena_strdup(cat->arena, f.top[c][k]);
  }
  t->note = f.note ? tt_arena_strdup(cat->arena, f.note) : NULL;
  t->probe = TT_PROBE_DONE;
  t->probe_stamp = data_hash;
  tt_arena_free(a);
  return true;
}

/* ---- the whole catalog ----------------------------------------------------- */

char *tt_described(const char *description, const char *data_note) {
  if (description && data_note) return tt_xasprintf("%s; %s", description, data_note);
  if (description || data_note) return tt_xstrdup(description ? description : data_note);
  return NULL;
}

tt_catalog *tt_db_catalog_read(tt_db *db, tt_error *err) {
  tt_catalog *cat = db->engine->catalog_load(db, err);
  if (!cat) {
    tt_db_target_scrub(&db->target, err);
    return NULL;
  }
  cat->list_tables_sql = db->engine->list_tables_sql;
  const char *w = db->engine->warning ? db->engine->warning(db) : NULL; /* tt_db_warning */
  cat->warning = w ? tt_arena_strdup(cat->arena, w) : NULL;
  return cat;
}

size_t tt_catalog_pending(const tt_catalog *cat) {
  size_t n = 0;
  for (size_t i = 0; cat && i < cat->ntables; i++) n += cat->tables[i].probe == TT_PROBE_PENDING;
  return n;
}

tt_catalog *tt_db_catalog_load(tt_db *db, tt_error *err) {
  tt_catalog *cat = tt_db_catalog_read(db, err);
  if (!cat) return NULL;
  for (size_t i = 0; i < cat->ntables; i++)
    if (cat->tables[i].probe == TT_PROBE_PENDING)
      tt_db_catalog_probe(db, cat, i, 0, db->opts.cancel, 0); /* only a cancel leaves it pending */
  return cat;
}

void tt_catalog_free(tt_catalog *cat) {
  if (!cat) return;
  for (size_t i = 0; i < cat->ntables; i++) tt_result_free(cat->tables[i].sample);
  tt_arena_free(cat->arena);
  free(cat);
}

const tt_table_info *tt_catalog_find(const tt_catalog *cat, const char *name) {
  for (size_t i = 0; i < cat->ntables; i++)
    if (strcasecmp(cat->tables[i].name, name) == 0) return &cat->tables[i];
  return NULL;
}

/* ---- what proves a catalog unchanged ---------------------------------------- */

bool tt_db_catalog_stamp(tt_db *db, tt_catalog_stamp *out, tt_error *err) {
  memset(out, 0, sizeof *out);
  if (!db->engine->catalog_stamp) {
    tt_db_set_error(err, TT_ERR_UNAVAILABLE, "the %s engine cannot tell whether its catalog "
                    "changed", db->engine->name);
    return false;
  }
  tt_catalog_stamp e = {0};
  if (!db->engine->catalog_stamp(db, &e, err)) {
    tt_catalog_stamp_free(&e);
    return false;
  }
  /* what read it (another version may read it otherwise), what the reads
   * are bounded by (other bounds, other catalog) and what they may run
   * (a relation that runs a function not trusted is not read) */
  out->identity = tt_xasprintf("tabletalk %s engine %s\nbounds count %d sample %d top %d/%d "
                               "view-steps %ld\ntrust %s\n%s",
                               TT_VERSION, db->engine->name, TT_ROW_COUNT_LIMIT, TT_SAMPLE_ROWS,
                               TT_TOP_VALUES, TT_TOP_VALUES_SCAN, TT_VIEW_STEPS,
                               db->opts.trust_functions ? db->opts.trust_functions : "",
                               e.identity);
  out->schema = e.schema;
  out->data = e.data ? e.data : tt_xstrdup("");
  free(e.identity);
  return true;
}

void tt_catalog_stamp_free(tt_catalog_stamp *s) {
  if (!s) return;
  free(s->identity);
  free(s->schema);
  free(s->data);
  memset(s, 0, sizeof *s);
}

uint64_t tt_catalog_stamp_data_hash(const tt_catalog_stamp *s) {
  const char *d = s && s->data ? s->data : "";
  uint64_t h = tt_fnv1a64(TT_FNV1A64_INIT, d, strlen(d));
  return h ? h : 1;
}

void tt_catalog_values_sql(const tt_values_dialect *d, const tt_table_info *t,
                           const tt_column_info *c, long scan_rows, long max_len, tt_buf *out) {
  tt_buf_printf(out, "SELECT v FROM (SELECT %s", d->text_before);
  d->put_ident(out, c->raw_name ? c->raw_name : c->name);
  tt_buf_printf(out, "%s AS v FROM ", d->text_after);
  if (t->sql_name) tt_buf_puts(out, t->sql_name);
  else d->put_ident(out, t->raw_name ? t->raw_name : t->name);
  tt_buf_printf(out, " LIMIT %ld) AS s WHERE v IS NOT NULL AND %s(v) <= %ld GROUP BY v", scan_rows,
                d->byte_length, max_len);
}
