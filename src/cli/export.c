/* export.c — rows for pipelines: CSV, TSV, JSON and Markdown written as the
 * rows arrive, so memory does not grow with the row count. A source is
 * either a guarded query read through a cursor or a result already in
 * memory. Every cut is announced (on stderr, and in the output where the
 * format has room for it), and a reader that closes the pipe early (`|
 * head`) ends the output quietly. */
#include "cli/cli.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define TT_EXPORT_FLUSH (64 * 1024)

bool tt_format_parse(const char *s, tt_format *out) {
  static const struct { const char *name; tt_format fmt; } names[] = {
      {"table", TT_FMT_TABLE}, {"tsv", TT_FMT_TSV}, {"csv", TT_FMT_CSV},
      {"json", TT_FMT_JSON},   {"markdown", TT_FMT_MARKDOWN}, {"md", TT_FMT_MARKDOWN}};
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
    if (strcmp(s, names[i].name) == 0) {
      *out = names[i].fmt;
      return true;
    }
  return false;
}

/* Where the rows come from: a cursor, or a result's rows [0, limit). */
typedef struct tt_rows_src {
  tt_cursor *cur;
  const tt_result *res;
  size_t next, limit;
  bool res_cut;      /* the result holds fewer rows than exist */
} tt_rows_src;

static size_t tt_src_ncols(const tt_rows_src *s) {
  return s->cur ? tt_cursor_ncols(s->cur) : s->res->ncols;
}

static const char *tt_src_name(const tt_rows_src *s, size_t c) {
  return s->cur ? tt_cursor_name(s->cur, c) : s->res->names[c];
}

static const char *tt_src_type(const tt_rows_src *s, size_t c) {
  return s->cur ? tt_cursor_decltype(s->cur, c) : s->res->decltypes[c];
}

static int tt_src_next(tt_rows_src *s, const tt_value **row, tt_error *err) {
  if (s->cur) return tt_cursor_next(s->cur, row, err);
  if (s->next >= s->limit) return 0;
  *row = tt_result_cell(s->res, s->next++, 0);
  return 1;
}

/* Why rows were left out: a cap stopped the cursor, or the result holds
 * more rows than written, or was itself cut. */
static tt_trunc tt_src_cut(const tt_rows_src *s) {
  if (s->cur) return tt_cursor_truncated(s->cur);
  if (s->limit < s->res->nrows) return TT_TRUNC_ROWS;
  return s->res_cut ? s->res->truncated_by : TT_TRUNC_NONE;
}

/* ---- buffered output -------------------------------------------------- */

typedef struct tt_out {
  tt_buf buf;
  bool closed; /* the reader went away (EPIPE): stop quietly */
  int error;   /* another write error (errno) */
} tt_out;

/* The block goes to stdout's descriptor in one write (stdio would split
 * it at its own buffer's size); stdio's buffer was emptied before the
 * first block (tt_export), so the order of the output holds. */
static void tt_out_flush(tt_out *o) {
  const char *p = o->buf.data;
  size_t left = o->closed || o->error ? 0 : o->buf.len;
  while (left) {
    ssize_t n = write(fileno(stdout), p, left);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      if (errno == EPIPE) o->closed = true;
      else o->error = errno;
      break;
    }
    p += n;
    left -= (size_t)n;
  }
  tt_buf_reset(&o->buf);
}

static void tt_out_maybe_flush(tt_out *o) {
  if (o->buf.len >= TT_EXPORT_FLUSH) tt_out_flush(o);
}

/* ---- JSON pieces -------------------------------------------------------- */

static void tt_json_put(tt_buf *b, json_t *j) {
  tt_json_dump(b, j, JSON_COMPACT | JSON_ENCODE_ANY | JSON_REAL_PRECISION(15));
  json_decref(j);
}

/* head's fields (all but its closing brace), so the result's own fields
 * can follow: {"status":...,  then "columns":[...],... */
static void tt_json_open(tt_buf *b, json_t *head) {
  if (!head || json_object_size(head) == 0) {
    tt_buf_putc(b, '{');
    return;
  }
  tt_buf tmp = TT_BUF_INIT;
  tt_json_dump(&tmp, head, JSON_COMPACT | JSON_REAL_PRECISION(15));
  tt_buf_append(b, tmp.data, tmp.len - 1); /* drop the final '}' */
  tt_buf_putc(b, ',');
  tt_buf_free(&tmp);
}

static void tt_json_columns(tt_buf *b, const tt_rows_src *s) {
  json_t *cols = json_array(), *types = json_array();
  for (size_t c = 0; c < tt_src_ncols(s); c++) {
    const char *n = tt_src_name(s, c), *t = tt_src_type(s, c);
    json_array_append_new(cols, tt_json_stringn(n, strlen(n)));
    json_array_append_new(types, tt_json_stringn(t, strlen(t)));
  }
  tt_buf_puts(b, "\"columns\":");
  tt_json_put(b, cols);
  tt_buf_puts(b, ",\"column_types\":");
  tt_json_put(b, types);
  tt_buf_puts(b, ",\"rows\":[");
}

/* A row as tt_json_put would write its array of values, written directly. */
static void tt_json_row(tt_buf *b, const tt_value *row, size_t ncols, bool first) {
  tt_buf_append(b, first ? "\n[" : ",\n[", first ? 2 : 3);
  for (size_t c = 0; c < ncols; c++) {
    if (c) tt_buf_putc(b, ',');
    tt_value_put_json(b, &row[c], true);
  }
  tt_buf_putc(b, ']');
}

static void tt_json_close(tt_buf *b, long rows, tt_trunc cut, size_t cells_cut, double ms,
                          const tt_error *err) {
  tt_buf_printf(b, "%s],\"row_count\":%ld,\"truncated\":%s", rows ? "\n" : "", rows,
                cut || err ? "true" : "false");
  if (err) tt_buf_puts(b, ",\"truncated_by\":\"error\"");
  else if (cut)
    tt_buf_printf(b, ",\"truncated_by\":\"%s\"", cut == TT_TRUNC_BYTES ? "max_bytes" : "max_rows");
  if (cells_cut) tt_buf_printf(b, ",\"cells_cut\":%zu", cells_cut);
  tt_buf_printf(b, ",\"elapsed_ms\":%.3f", ms);
  if (err) {
    tt_buf_puts(b, ",\"error\":");
    tt_json_put(b, tt_db_error_to_json(err));
  }
  tt_buf_puts(b, "}\n");
}

/* ---- the export --------------------------------------------------------- */

static int tt_export(tt_rows_src *src, const tt_export_opts *o) {
  tt_term t = tt_term_probe(stdout);
  fflush(stdout); /* what the caller printed before goes first */
  tt_out out = {.buf = TT_BUF_INIT};
  size_t ncols = tt_src_ncols(src);
  const char **names = tt_xcalloc(ncols ? ncols : 1, sizeof *names);
  for (size_t c = 0; c < ncols; c++) names[c] = tt_src_name(src, c);
  switch (o->fmt) {
  case TT_FMT_JSON:
    tt_json_open(&out.buf, o->json_head);
    tt_json_columns(&out.buf, src);
    break;
  case TT_FMT_MARKDOWN: tt_render_markdown_header(&out.buf, names, ncols, &t); break;
  default: tt_render_delimited_header(&out.buf, names, ncols, &t, o->fmt == TT_FMT_CSV); break;
  }
  free(names);
  tt_error err = {0};
  const tt_value *row;
  long rows = 0;
  size_t cells_cut = 0; /* cells cut to fit --max-bytes, each with its cut mark */
  int rc;
  while (!out.closed && !out.error && (rc = tt_src_next(src, &row, &err)) == 1) {
    for (size_t c = 0; c < ncols; c++) cells_cut += row[c].cut > 0;
    switch (o->fmt) {
    case TT_FMT_JSON: tt_json_row(&out.buf, row, ncols, rows == 0); break;
    case TT_FMT_MARKDOWN: tt_render_markdown_row(&out.buf, row, ncols, &t); break;
    default: tt_render_delimited_row(&out.buf, row, ncols, &t, o->fmt == TT_FMT_CSV); break;
    }
    rows++;
    tt_out_maybe_flush(&out);
  }
  bool failed = !out.closed && !out.error && rc < 0;
  tt_trunc cut = failed ? TT_TRUNC_NONE : tt_src_cut(src);
  double ms = src->cur ? tt_cursor_elapsed_ms(src->cur) : src->res->elapsed_ms;
  if (o->fmt == TT_FMT_JSON)
    tt_json_close(&out.buf, rows, cut, cells_cut, ms, failed ? &err : NULL);
  if (o->fmt == TT_FMT_MARKDOWN && cut)
    tt_buf_printf(&out.buf, "\n_(%ld row%s shown; more exist)_\n", rows, rows == 1 ? "" : "s");
  if (o->fmt == TT_FMT_MARKDOWN && cells_cut) {
    tt_buf_puts(&out.buf, "\n_(");
    tt_render_cells_cut(&out.buf, cells_cut, o->max_bytes ? "--max-bytes" : "the byte limit");
    tt_buf_puts(&out.buf, ")_\n");
  }
  tt_out_flush(&out);
  tt_buf_free(&out.buf);
  if (out.closed) return TT_EXIT_OK; /* `| head` had what it wanted */
  if (out.error)
    return tt_fail(TT_EXIT_FAIL, "cannot write the output: %s (is the disk full?)",
                   strerror(out.error));
  if (failed) {
    const char *what = err.kind == TT_ERR_TIMEOUT ? "timeout: " : "";
    return tt_fail(tt_exit_for(err.kind), "%s%s (%ld row%s written before it stopped)", what,
                   err.message, rows, rows == 1 ? "" : "s");
  }
  if (cells_cut && !o->quiet_cut) {
    tt_buf note = TT_BUF_INIT;
    tt_render_cells_cut(&note, cells_cut, o->max_bytes ? "--max-bytes" : "the byte limit");
    tt_fail(0, "note: %s; each ends in …[cut N bytes]", tt_buf_cstr(&note));
    tt_buf_free(&note);
  }
  if (cut && !o->quiet_cut) {
    if (src->res && src->limit == src->res->nrows)
      tt_fail(0, "note: %s (%ld rows written)", o->cut_reason ? o->cut_reason : "more rows exist",
              rows);
    else if (cut == TT_TRUNC_BYTES)
      tt_fail(0, "note: the output stops at --max-bytes %ld: more rows exist (%ld written)",
              o->max_bytes, rows);
    else
      tt_fail(0, "note: the output stops at --max-rows %ld: more rows exist (%ld written)",
              o->max_rows, rows);
  }
  return TT_EXIT_OK;
}

int tt_export_query(tt_db *db, const char *sql, size_t len, const tt_export_opts *o,
                    tt_error *err) {
  tt_cursor *cur = tt_db_cursor_open(db, sql, len, o->max_rows, o->max_bytes, err);
  if (!cur) return -1;
  tt_rows_src src = {.cur = cur};
  if (o->on_cursor) o->on_cursor(o->ud, cur);
  int rc = tt_export(&src, o);
  if (o->on_cursor) o->on_cursor(o->ud, NULL);
  tt_cursor_close(cur);
  return rc;
}

int tt_export_result(const tt_result *r, const tt_export_opts *o) {
  size_t limit = o->max_rows > 0 && (size_t)o->max_rows < r->nrows ? (size_t)o->max_rows : r->nrows;
  tt_rows_src src = {.res = r, .limit = limit, .res_cut = r->truncated};
  return tt_export(&src, o);
}
