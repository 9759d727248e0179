/* query.c — SQL as the page's tables read it (docs/reference/web-api.md,
 * "Queries"): a query is kept in the thread store under an id derived from
 * its text (tt_store_put_query), and every view of its result is read on
 * the server, through the guard, from the whole result: a page is the
 * query wrapped as SELECT * FROM (q) ORDER BY n LIMIT k OFFSET m, so the
 * engine sorts every row, not the browser; the count is SELECT count(*)
 * FROM (q); downloads stream every row (download.c). A query the wrapper
 * cannot take whole (unbalanced parentheses...) still pages in its own
 * order, up to TT_WEB_UNWRAPPED_MAX rows, and says it cannot be sorted.
 * Each request opens its own database handle and closes it. */
#include "web/web_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TT_WEB_PAGE_ROWS 25             /* rows of a page unless ?limit= */
#define TT_WEB_PAGE_MAX 1000            /* the most a page may hold */
#define TT_WEB_PAGE_BYTES (8L << 20)    /* bytes of values in one page */
#define TT_WEB_UNWRAPPED_MAX 100000     /* rows read to page an unwrappable query */
#define TT_WEB_HISTORY 200              /* queries listed in the history */

static bool tt_web_sqlite(const tt_web *w) {
  return tt_service_target(w->cfg->svc)->kind != TT_DB_KIND_POSTGRES;
}

/* ---- errors -------------------------------------------------------------------- */

enum MHD_Result tt_web_send_sql_error(tt_web_req *r, const char *sql, const tt_error *err) {
  tt_buf msg = TT_BUF_INIT;
  tt_buf_puts(&msg, err->message);
  if (err->kind == TT_ERR_SQL) { /* the did-you-mean the agent gives the model */
    char *dym = tt_agent_sql_hint(tt_schema_catalog(r->w->schema), sql, err->message);
    if (dym) tt_buf_puts(&msg, dym);
    free(dym);
  }
  json_t *e = json_object();
  json_object_set_new(e, "error", tt_json_stringn(msg.data ? msg.data : "", msg.len));
  json_object_set_new(e, "hint", err->hint[0] ? json_string(err->hint) : json_null());
  json_object_set_new(e, "kind", json_string(tt_errkind_name(err->kind)));
  json_object_set_new(e, "refused", json_boolean(err->kind == TT_ERR_REFUSED));
  json_object_set_new(e, "reason", err->kind == TT_ERR_REFUSED
                                       ? json_string(tt_db_refusal_name((tt_db_refusal)err->reason))
                                       : json_null());
  tt_buf_free(&msg);
  return tt_web_send_json(r, 422, e);
}

/* The database cannot be opened now (the file is gone, the server down). */
static enum MHD_Result tt_web_send_db_gone(tt_web_req *r, const tt_error *err) {
  json_t *e = json_pack("{s:s,s:b}", "error", tt_error_text(err), "db_gone", 1);
  return tt_web_send_json(r, 503, e);
}

/* ---- pages ----------------------------------------------------------------------- */

/* SQLite names a subquery's repeated column "id:1": give back the name the
 * query itself gives it. */
static void tt_web_fix_names(json_t *cols) {
  for (size_t i = 1; i < json_array_size(cols); i++) {
    const char *n = json_string_value(json_array_get(cols, i));
    const char *colon = n ? strrchr(n, ':') : NULL;
    if (!colon || !colon[1] || strspn(colon + 1, "0123456789") != strlen(colon + 1)) continue;
    size_t base = (size_t)(colon - n);
    for (size_t k = 0; k < i; k++) {
      const char *prev = json_string_value(json_array_get(cols, k));
      if (prev && strlen(prev) == base && strncmp(prev, n, base) == 0) {
        json_array_set_new(cols, i, tt_json_stringn(n, base));
        break;
      }
    }
  }
}

/* The wrapped query failed: when the statement fails on its own too (a
 * write the guard refuses, a typo), its own error says it better, with
 * positions in the user's text; else the wrapped error stands. */
static void tt_web_diagnose(tt_db *db, const char *sql, size_t len, const tt_db_opts *o,
                            tt_error *err) {
  tt_db_opts one = *o;
  one.max_rows = 1;
  tt_error own;
  tt_result *res = tt_db_query_opts(db, sql, len, &one, &own);
  if (!res) *err = own;
  tt_result_free(res);
}

typedef struct tt_web_view {
  long sort;   /* 1-based column; 0: the query's own order */
  bool desc;
  long offset, limit;
} tt_web_view;

static bool tt_web_view_args(tt_web_req *r, tt_web_view *v, enum MHD_Result *ret) {
  long desc = 0;
  return tt_web_arg_long(r, "sort", 0, 10000, 0, &v->sort, ret) &&
         tt_web_arg_long(r, "desc", 0, 1, 0, &desc, ret) &&
         tt_web_arg_long(r, "offset", 0, 1L << 50, 0, &v->offset, ret) &&
         tt_web_arg_long(r, "limit", 1, TT_WEB_PAGE_MAX, TT_WEB_PAGE_ROWS, &v->limit, ret) &&
         ((v->desc = desc != 0), true);
}

/* One page of sql's result as JSON: the result's shape (tt_result_to_json)
 * plus offset, more, sortable, sort and desc; NULL with err. */
static json_t *tt_web_page(tt_web *w, tt_db *db, const char *sql, const tt_web_view *v,
                           tt_error *err) {
  size_t len = strlen(sql);
  tt_buf q = TT_BUF_INIT;
  bool wrapped = tt_web_wrap(w, sql, len, "*", v->sort, v->desc, v->limit + 1, v->offset, &q);
  tt_db_opts o = tt_config_db_opts(tt_service_config(w->cfg->svc));
  o.count_rows = 0;
  o.max_rows = v->limit;
  o.max_bytes = TT_WEB_PAGE_BYTES;
  if (!wrapped) {
    if (v->sort) {
      tt_error_set(err, TT_ERR_CONFIG, "this query cannot be sorted on the server: it could not "
                                       "be read as one statement inside SELECT * FROM (...)");
      tt_error_hint(err, "remove what follows its last semicolon, or balance its parentheses");
      return NULL;
    }
    if (v->offset + v->limit > TT_WEB_UNWRAPPED_MAX) {
      tt_error_set(err, TT_ERR_LIMIT, "this query cannot be paged past row %d: it could not be "
                                      "read as one statement inside SELECT * FROM (...)",
                   TT_WEB_UNWRAPPED_MAX);
      tt_error_hint(err, "download it as CSV to get every row");
      return NULL;
    }
    o.max_rows = v->offset + v->limit;
    o.max_bytes = 8 * TT_WEB_PAGE_BYTES;
    tt_buf_append(&q, sql, len);
  }
  tt_result *res = tt_db_query_opts(db, q.data, q.len, &o, err);
  tt_buf_free(&q);
  if (!res && wrapped && (err->kind == TT_ERR_SQL || err->kind == TT_ERR_REFUSED))
    tt_web_diagnose(db, sql, len, &o, err);
  if (!res) return NULL;
  json_t *j = tt_result_to_json(res, 0, false);
  bool more = res->truncated;
  tt_result_free(res);
  json_t *rows = json_object_get(j, "rows");
  if (!wrapped) { /* the rows before the page go */
    size_t skip = (size_t)v->offset < json_array_size(rows) ? (size_t)v->offset : json_array_size(rows);
    for (size_t i = 0; i < skip; i++) json_array_remove(rows, 0);
    json_object_set_new(j, "row_count", json_integer((json_int_t)json_array_size(rows)));
  } else if (tt_web_sqlite(w)) {
    tt_web_fix_names(json_object_get(j, "columns"));
  }
  json_object_set_new(j, "offset", json_integer(v->offset));
  json_object_set_new(j, "more", json_boolean(more));
  json_object_set_new(j, "sortable", json_boolean(wrapped));
  json_object_set_new(j, "sort", json_integer(v->sort));
  json_object_set_new(j, "desc", json_boolean(v->desc));
  return j;
}

/* Every row counted by the engine: {"row_count", "elapsed_ms"}; NULL with err. */
static json_t *tt_web_count(tt_web *w, tt_db *db, const char *sql, tt_error *err) {
  size_t len = strlen(sql);
  tt_buf q = TT_BUF_INIT;
  double t0 = tt_now_ms();
  json_int_t n = -1;
  if (tt_web_wrap(w, sql, len, "count(*)", 0, false, 0, 0, &q)) {
    tt_result *res = tt_db_query_opts(db, q.data, q.len, tt_db_get_opts(db), err);
    if (res && res->nrows == 1 && tt_result_cell(res, 0, 0)->type == TT_VAL_INT)
      n = tt_result_cell(res, 0, 0)->u.i;
    else if (res)
      tt_error_set(err, TT_ERR_SQL, "the count gave no number");
    tt_result_free(res);
  } else { /* step through every row */
    tt_cursor *c = tt_db_cursor_open(db, sql, len, 0, 0, err);
    const tt_value *row;
    int rc = 0;
    while (c && (rc = tt_cursor_next(c, &row, err)) == 1) {
    }
    if (c && rc == 0) n = tt_cursor_rows(c);
    tt_cursor_close(c);
  }
  tt_buf_free(&q);
  if (n < 0) return NULL;
  return json_pack("{s:I,s:f}", "row_count", n, "elapsed_ms", tt_now_ms() - t0);
}

/* ---- the endpoints ----------------------------------------------------------------- */

static const char *tt_web_db_key(tt_web_req *r) { return tt_service_target(r->w->cfg->svc)->shown; }

static tt_store *tt_web_store(tt_web_req *r, enum MHD_Result *ret) {
  tt_error err;
  tt_store *st = tt_store_open(tt_config_state_dir(tt_service_config(r->w->cfg->svc)), &err);
  if (!st) *ret = tt_web_send_error(r, 500, "%s; check the state folder", err.message);
  return st;
}

/* Runs a page of sql on a handle of its own and answers with it (extra's
 * fields added, extra taken). */
static enum MHD_Result tt_web_answer_page(tt_web_req *r, const char *sql, const tt_web_view *v,
                                          json_t *extra) {
  tt_error err;
  tt_db *db = tt_service_db_open(r->w->cfg->svc, NULL, &err);
  if (!db) {
    json_decref(extra);
    return tt_web_send_db_gone(r, &err);
  }
  json_t *page = tt_web_page(r->w, db, sql, v, &err);
  tt_db_close(db);
  if (!page) {
    json_decref(extra);
    return tt_web_send_sql_error(r, sql, &err);
  }
  json_object_update(extra, page);
  json_decref(page);
  return tt_web_send_json(r, 200, extra);
}

/* POST /api/queries {"sql", "history", "limit", "sort", "desc"}: the first
 * page, and the id to read the rest by. */
static enum MHD_Result tt_web_query_new(tt_web_req *r) {
  enum MHD_Result ret;
  json_t *body = tt_web_body_object(r, &ret);
  if (!body) return ret;
  const json_t *sql = json_object_get(body, "sql"), *hist = json_object_get(body, "history");
  const json_t *lim = json_object_get(body, "limit"), *sort = json_object_get(body, "sort");
  tt_web_view v = {.limit = TT_WEB_PAGE_ROWS, .desc = json_is_true(json_object_get(body, "desc"))};
  if (json_is_integer(lim)) v.limit = (long)json_integer_value(lim);
  if (json_is_integer(sort)) v.sort = (long)json_integer_value(sort);
  const char *why = NULL;
  if (!json_is_string(sql) || !json_string_length(sql) ||
      strlen(json_string_value(sql)) != json_string_length(sql))
    why = "\"sql\" must be one read-only statement as a string";
  else if ((lim && !json_is_integer(lim)) || v.limit < 1 || v.limit > TT_WEB_PAGE_MAX)
    why = "\"limit\" must be a whole number from 1 to 1000";
  else if ((sort && !json_is_integer(sort)) || v.sort < 0 || v.sort > 10000)
    why = "\"sort\" must be a column number from 1 (0: the query's own order)";
  else if (hist && !json_is_boolean(hist))
    why = "\"history\" must be true or false";
  if (why) {
    json_decref(body);
    return tt_web_send_error(r, 400, "%s", why);
  }
  const char *text = json_string_value(sql);
  tt_error err;
  tt_db *db = tt_service_db_open(r->w->cfg->svc, NULL, &err);
  json_t *page = db ? tt_web_page(r->w, db, text, &v, &err) : NULL;
  tt_db_close(db);
  if (!db) ret = tt_web_send_db_gone(r, &err);
  else if (!page) ret = tt_web_send_sql_error(r, text, &err);
  if (!page) {
    json_decref(body);
    return ret;
  }
  /* it ran: kept under its id (in the history when run by hand) */
  char id[TT_QUERY_ID_LEN + 1];
  tt_store *st = tt_web_store(r, &ret);
  bool kept = st && tt_store_put_query(st, tt_web_db_key(r), text, !json_is_false(hist), id, &err);
  tt_store_close(st);
  if (st && !kept) ret = tt_web_send_error(r, 500, "%s", tt_error_text(&err));
  if (kept) {
    json_object_set_new(page, "id", json_string(id));
    json_object_set_new(page, "sql", json_string(text));
    ret = tt_web_send_json(r, 200, page);
  } else {
    json_decref(page);
  }
  json_decref(body);
  return ret;
}

/* GET /api/queries: the history, newest first. */
static enum MHD_Result tt_web_query_history(tt_web_req *r) {
  enum MHD_Result ret;
  tt_store *st = tt_web_store(r, &ret);
  if (!st) return ret;
  tt_query_rec *v;
  size_t n;
  tt_error err;
  bool ok = tt_store_list_queries(st, tt_web_db_key(r), TT_WEB_HISTORY, &v, &n, &err);
  tt_store_close(st);
  if (!ok) return tt_web_send_error(r, 500, "%s", tt_error_text(&err));
  json_t *arr = json_array();
  for (size_t i = 0; i < n; i++) {
    tt_buf when = TT_BUF_INIT;
    tt_buf_put_iso_time(&when, v[i].last_run);
    json_array_append_new(arr, json_pack("{s:s,s:s,s:s,s:i}", "id", v[i].id, "sql", v[i].sql,
                                         "last_run", tt_buf_cstr(&when), "runs", (int)v[i].runs));
    tt_buf_free(&when);
  }
  tt_query_recs_free(v, n);
  return tt_web_send_json(r, 200, json_pack("{s:o}", "queries", arr));
}

static bool tt_web_query_id_ok(const char *id, size_t n) {
  if (n != TT_QUERY_ID_LEN) return false;
  for (size_t i = 0; i < n; i++)
    if (!((id[i] >= '0' && id[i] <= '9') || (id[i] >= 'a' && id[i] <= 'f'))) return false;
  return true;
}

enum MHD_Result tt_web_api_queries(tt_web_req *r, const char *rest) {
  if (!rest) return strcmp(r->method, "POST") == 0 ? tt_web_query_new(r) : tt_web_query_history(r);
  size_t idlen = strcspn(rest, "/");
  const char *what = rest[idlen] ? rest + idlen + 1 : "";
  if (!tt_web_query_id_ok(rest, idlen))
    return tt_web_send_error(r, 404, "no query '%.*s': query ids are 16 hex digits", (int)(idlen > 64 ? 64 : idlen), rest);
  char id[TT_QUERY_ID_LEN + 1];
  memcpy(id, rest, idlen);
  id[idlen] = '\0';
  enum MHD_Result ret;
  tt_store *st = tt_web_store(r, &ret);
  if (!st) return ret;
  char *sql = NULL;
  tt_error err;
  bool ok = tt_store_get_query(st, tt_web_db_key(r), id, &sql, &err);
  tt_store_close(st);
  tt_web_view v;
  if (!ok) {
    ret = tt_web_send_error(r, 500, "%s", tt_error_text(&err));
  } else if (!sql) {
    ret = tt_web_send_error(r, 404, "no query %s on this database (run it again)", id);
  } else if (!*what) {
    ret = tt_web_send_json(r, 200, json_pack("{s:s,s:s}", "id", id, "sql", sql));
  } else if (!tt_web_view_args(r, &v, &ret)) {
    /* answered */
  } else if (strcmp(what, "rows") == 0) {
    ret = tt_web_answer_page(r, sql, &v, json_pack("{s:s}", "id", id));
  } else if (strcmp(what, "count") == 0) {
    tt_db *db = tt_service_db_open(r->w->cfg->svc, NULL, &err);
    json_t *j = db ? tt_web_count(r->w, db, sql, &err) : NULL;
    tt_db_close(db);
    ret = !db ? tt_web_send_db_gone(r, &err) : j ? tt_web_send_json(r, 200, j)
                                                 : tt_web_send_sql_error(r, sql, &err);
  } else if (strcmp(what, "rows.csv") == 0 || strcmp(what, "rows.json") == 0) {
    ret = tt_web_download(r, id, sql, v.sort, v.desc, what[5] == 'j');
  } else {
    ret = tt_web_send_error(r, 404, "no /api/queries/%s/%s: there are rows, count, rows.csv and "
                                    "rows.json", id, what);
  }
  free(sql);
  return ret;
}

/* ---- has the data changed since a run? ----------------------------------------------- */

/* Rows as the trace writes them (15 significant digits), hashed. */
static void tt_web_rows_checksum(const json_t *rows, char out[17]) {
  tt_buf b = TT_BUF_INIT;
  tt_json_dump(&b, rows, JSON_COMPACT | JSON_REAL_PRECISION(15));
  snprintf(out, 17, "%016llx", (unsigned long long)tt_fnv1a64(TT_FNV1A64_INIT, b.data, b.len));
  tt_buf_free(&b);
}

static json_t *tt_web_rows_summary(const json_t *rows, bool truncated) {
  char sum[17];
  tt_web_rows_checksum(rows, sum);
  return json_pack("{s:I,s:b,s:s}", "rows", (json_int_t)json_array_size(rows), "truncated",
                   truncated, "checksum", sum);
}

/* GET /api/runs/RUN_ID/check: runs the run's final SQL again for as many
 * rows as the run kept and compares: the row count (every row, when the
 * run held them all) and a checksum of the rows. */
enum MHD_Result tt_web_api_run_check(tt_web_req *r, const char *run_id) {
  tt_error err;
  json_t *events = tt_trace_load(tt_config_state_dir(tt_service_config(r->w->cfg->svc)), run_id, &err);
  if (!events) return tt_web_send_error(r, 404, "%s", err.message);
  const json_t *end = NULL, *e;
  size_t i;
  json_array_foreach(events, i, e) {
    const char *name = json_string_value(json_object_get(e, "event"));
    if (name && strcmp(name, "run_end") == 0) end = e;
  }
  const char *sql = end ? json_string_value(json_object_get(end, "sql")) : NULL;
  const json_t *then_rows = end ? json_object_get(end, "rows") : NULL;
  if (!sql || !json_is_array(then_rows)) {
    json_decref(events);
    return tt_web_send_error(r, 404, "run %s has no query result to compare", run_id);
  }
  bool then_cut = json_is_true(json_object_get(end, "truncated"));
  tt_db *db = tt_service_db_open(r->w->cfg->svc, NULL, &err);
  tt_db_opts o = tt_config_db_opts(tt_service_config(r->w->cfg->svc));
  size_t n_then = json_array_size(then_rows);
  o.max_rows = (long)n_then + 1; /* one more: a row added shows */
  o.max_bytes = 64L << 20;
  o.count_rows = 0;
  tt_result *res = db ? tt_db_query_opts(db, sql, strlen(sql), &o, &err) : NULL;
  tt_db_close(db);
  enum MHD_Result ret;
  if (!res) {
    ret = db ? tt_web_send_sql_error(r, sql, &err) : tt_web_send_db_gone(r, &err);
    json_decref(events);
    return ret;
  }
  size_t n_now = res->nrows;
  bool now_cut = res->truncated;
  json_t *now = tt_result_to_json(res, n_then, true); /* the rows the run kept, now */
  tt_result_free(res);
  json_t *then_sum = tt_web_rows_summary(then_rows, then_cut);
  json_t *now_sum = tt_web_rows_summary(json_object_get(now, "rows"), n_now > n_then || now_cut);
  json_object_set_new(now_sum, "rows", json_integer((json_int_t)n_now));
  /* a run that kept every row must give as many; one that was cut, more */
  bool count_differs = then_cut ? n_now <= n_then : n_now != n_then;
  tt_buf msg = TT_BUF_INIT;
  if (count_differs) {
    tt_buf_printf(&msg, "The data changed since this answer was written: the query gave %s%zu row%s then, %s%zu now.",
                  then_cut ? "more than " : "", n_then, n_then == 1 ? "" : "s",
                  now_cut ? "more than " : "", n_now);
  } else if (strcmp(json_string_value(json_object_get(then_sum, "checksum")),
                    json_string_value(json_object_get(now_sum, "checksum"))) != 0) {
    tt_buf_printf(&msg, "The data changed since this answer was written: the %zu row%s it showed differ now (checksum %s then, %s now).",
                  n_then, n_then == 1 ? "" : "s", json_string_value(json_object_get(then_sum, "checksum")),
                  json_string_value(json_object_get(now_sum, "checksum")));
  }
  json_t *j = json_pack("{s:s,s:b,s:o,s:o,s:o}", "sql", sql, "changed", msg.len > 0, "message",
                        msg.len ? json_string(tt_buf_cstr(&msg)) : json_null(), "then", then_sum,
                        "now", now_sum);
  tt_buf_free(&msg);
  json_decref(now);
  json_decref(events);
  return tt_web_send_json(r, 200, j);
}
