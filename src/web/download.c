/* download.c — every row of a query as a file to download, CSV (RFC 4180:
 * quoted when needed, CRLF between records, NULL as an empty field) or
 * JSON (the shape of `tabletalk sql --format json`), written while
 * libmicrohttpd sends it: a cursor on its own database handle gives one
 * row at a time, so memory does not grow with the result. Caps as `sql`
 * has them (?max_rows=, ?max_bytes=; none by default); a cut is announced
 * in JSON (truncated_by), and a CSV that could not be finished (an error
 * of the engine, the time limit) ends the transfer with an error instead
 * of looking complete. CSV cells a spreadsheet would read as a formula
 * (=, +, -, @, tab, CR first) get a leading ' (OWASP's advice) unless
 * ?raw=1. */
#include "web/web_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TT_DL_BLOCK (64 * 1024)

typedef struct tt_dl {
  tt_db *db;
  tt_cursor *cur;
  bool json, raw;
  bool started, done, failed;
  tt_buf buf;    /* produced, not yet sent */
  size_t sent;   /* of buf */
  long rows;
} tt_dl;

static void tt_dl_free(void *cls) {
  tt_dl *d = cls;
  tt_cursor_close(d->cur);
  tt_db_close(d->db);
  tt_buf_free(&d->buf);
  free(d);
}

/* ---- CSV ------------------------------------------------------------------------ */

static void tt_dl_csv_field(tt_buf *b, const char *s, size_t n, bool guard) {
  bool formula = guard && n && strchr("=+-@\t\r", s[0]);
  bool quote = formula || memchr(s, ',', n) || memchr(s, '"', n) || memchr(s, '\n', n) ||
               memchr(s, '\r', n);
  if (!quote) {
    tt_buf_append(b, s, n);
    return;
  }
  tt_buf_putc(b, '"');
  if (formula) tt_buf_putc(b, '\'');
  for (size_t i = 0; i < n; i++) {
    if (s[i] == '"') tt_buf_putc(b, '"');
    tt_buf_putc(b, s[i]);
  }
  tt_buf_putc(b, '"');
}

static void tt_dl_csv_row(tt_dl *d, const tt_value *row) {
  tt_buf cell = TT_BUF_INIT;
  for (size_t c = 0; c < tt_cursor_ncols(d->cur); c++) {
    if (c) tt_buf_putc(&d->buf, ',');
    tt_buf_reset(&cell);
    tt_value_to_export_text(&cell, &row[c]);
    /* only text can pass for a formula: numbers (-5) are numbers */
    tt_dl_csv_field(&d->buf, cell.data ? cell.data : "", cell.len, !d->raw && row[c].type == TT_VAL_TEXT);
  }
  tt_buf_puts(&d->buf, "\r\n");
  tt_buf_free(&cell);
}

static void tt_dl_csv_header(tt_dl *d) {
  for (size_t c = 0; c < tt_cursor_ncols(d->cur); c++) {
    if (c) tt_buf_putc(&d->buf, ',');
    const char *n = tt_cursor_name(d->cur, c);
    tt_dl_csv_field(&d->buf, n, strlen(n), !d->raw);
  }
  tt_buf_puts(&d->buf, "\r\n");
}

/* ---- JSON ------------------------------------------------------------------------- */

static void tt_dl_json_put(tt_buf *b, json_t *j) {
  tt_json_dump(b, j, JSON_COMPACT | JSON_ENCODE_ANY | JSON_REAL_PRECISION(15));
  json_decref(j);
}

static void tt_dl_json_header(tt_dl *d) {
  json_t *cols = json_array(), *types = json_array();
  for (size_t c = 0; c < tt_cursor_ncols(d->cur); c++) {
    json_array_append_new(cols, json_string(tt_cursor_name(d->cur, c)));
    json_array_append_new(types, json_string(tt_cursor_decltype(d->cur, c)));
  }
  tt_buf_puts(&d->buf, "{\"columns\":");
  tt_dl_json_put(&d->buf, cols);
  tt_buf_puts(&d->buf, ",\"column_types\":");
  tt_dl_json_put(&d->buf, types);
  tt_buf_puts(&d->buf, ",\"rows\":[");
}

static void tt_dl_json_row(tt_dl *d, const tt_value *row) {
  json_t *arr = json_array();
  for (size_t c = 0; c < tt_cursor_ncols(d->cur); c++)
    json_array_append_new(arr, tt_value_to_json(&row[c], true));
  if (d->rows) tt_buf_putc(&d->buf, ',');
  tt_dl_json_put(&d->buf, arr);
}

/* The end of the JSON document: the counts, the cut, an error. */
static void tt_dl_json_footer(tt_dl *d, const tt_error *err) {
  tt_trunc cut = tt_cursor_truncated(d->cur);
  json_t *o = json_object();
  json_object_set_new(o, "row_count", json_integer(d->rows));
  json_object_set_new(o, "truncated", json_boolean(cut != TT_TRUNC_NONE || err));
  if (err) json_object_set_new(o, "truncated_by", json_string("error"));
  else if (cut != TT_TRUNC_NONE)
    json_object_set_new(o, "truncated_by", json_string(cut == TT_TRUNC_ROWS ? "max_rows" : "max_bytes"));
  json_object_set_new(o, "elapsed_ms", json_real(tt_cursor_elapsed_ms(d->cur)));
  if (err) json_object_set_new(o, "error", json_string(tt_error_text(err)));
  tt_buf tmp = TT_BUF_INIT;
  tt_dl_json_put(&tmp, o);
  tt_buf_puts(&d->buf, "],");
  tt_buf_append(&d->buf, tmp.data + 1, tmp.len - 1); /* its fields after the rows */
  tt_buf_putc(&d->buf, '\n');
  tt_buf_free(&tmp);
}

/* ---- the stream -------------------------------------------------------------------- */

/* Produces rows until a block is ready or the rows end. */
static void tt_dl_fill(tt_dl *d) {
  if (!d->started) {
    d->started = true;
    if (d->json) tt_dl_json_header(d);
    else tt_dl_csv_header(d);
  }
  while (!d->done && d->buf.len - d->sent < TT_DL_BLOCK) {
    const tt_value *row;
    tt_error err;
    int rc = tt_cursor_next(d->cur, &row, &err);
    if (rc == 1) {
      if (d->json) tt_dl_json_row(d, row);
      else tt_dl_csv_row(d, row);
      d->rows++;
      continue;
    }
    d->done = true;
    if (rc < 0 && !d->json) d->failed = true; /* a CSV cannot say so: the transfer fails */
    if (d->json) tt_dl_json_footer(d, rc < 0 ? &err : NULL);
  }
}

static ssize_t tt_dl_read(void *cls, uint64_t pos, char *out, size_t max) {
  (void)pos;
  tt_dl *d = cls;
  if (d->sent == d->buf.len) {
    tt_buf_reset(&d->buf);
    d->sent = 0;
    tt_dl_fill(d);
  }
  size_t left = d->buf.len - d->sent;
  if (!left) return d->failed ? MHD_CONTENT_READER_END_WITH_ERROR : MHD_CONTENT_READER_END_OF_STREAM;
  size_t n = left < max ? left : max;
  memcpy(out, d->buf.data + d->sent, n);
  d->sent += n;
  return (ssize_t)n;
}

enum MHD_Result tt_web_download(tt_web_req *r, const char *id, const char *sql, long sort,
                                bool desc, bool json) {
  long max_rows, max_bytes, raw;
  enum MHD_Result ret;
  if (!tt_web_arg_long(r, "max_rows", 1, 1L << 40, 0, &max_rows, &ret) ||
      !tt_web_arg_long(r, "max_bytes", 1, 1L << 40, 0, &max_bytes, &ret) ||
      !tt_web_arg_long(r, "raw", 0, 1, 0, &raw, &ret))
    return ret;
  tt_buf q = TT_BUF_INIT;
  size_t len = strlen(sql);
  if (!tt_web_wrap(r->w, sql, len, "*", sort, desc, 0, 0, &q)) {
    if (sort) {
      tt_buf_free(&q);
      return tt_web_send_error(r, 422, "this query cannot be sorted on the server; download it "
                                       "in its own order");
    }
    tt_buf_append(&q, sql, len);
  }
  tt_error err;
  tt_dl *d = tt_xcalloc(1, sizeof *d);
  d->json = json;
  d->raw = raw != 0;
  d->db = tt_service_db_open(r->w->cfg->svc, NULL, &err);
  d->cur = d->db ? tt_db_cursor_open(d->db, q.data, q.len, max_rows, max_bytes, &err) : NULL;
  tt_buf_free(&q);
  if (!d->cur) {
    bool gone = !d->db;
    tt_dl_free(d);
    if (gone) return tt_web_send_error(r, 503, "%s", tt_error_text(&err));
    return tt_web_send_sql_error(r, sql, &err);
  }
  const tt_mhd_api *m = r->w->mhd;
  struct MHD_Response *resp =
      m->create_response_from_callback(MHD_SIZE_UNKNOWN, TT_DL_BLOCK, tt_dl_read, d, tt_dl_free);
  if (!resp) {
    tt_dl_free(d);
    return MHD_NO;
  }
  char disp[128];
  snprintf(disp, sizeof disp, "attachment; filename=\"tabletalk-%s.%s\"", id, json ? "json" : "csv");
  m->add_response_header(resp, "Content-Type", json ? "application/json" : "text/csv; charset=utf-8");
  m->add_response_header(resp, "Content-Disposition", disp);
  tt_web_security_headers(r->w, resp, false);
  ret = m->queue_response(r->c, 200, resp);
  m->destroy_response(resp);
  return ret;
}
