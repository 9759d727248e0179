/* board.c — the board of pinned answers (docs/reference/web-api.md,
 * "The board"): pins kept in the thread store (tt_store_*_pin), renamed,
 * reordered and removed from the page; a pinned chart redrawn from its
 * spec over the rows its SQL gives now (no model runs); and the whole
 * board exported as one static HTML file: every pin re-run, its table and
 * its chart inline as SVG, every string escaped, no script (a CSP in the
 * file says so too). */
#include "web/web_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TT_WEB_CHART_ROWS 10000 /* rows a pinned chart is drawn from */
#define TT_WEB_EXPORT_ROWS 100  /* rows of a table in an exported board */

static const char *tt_board_db(tt_web_req *r) { return tt_service_target(r->w->cfg->svc)->shown; }

static tt_store *tt_board_store(tt_web_req *r, enum MHD_Result *ret) {
  tt_error err;
  tt_store *st = tt_store_open(tt_config_state_dir(tt_service_config(r->w->cfg->svc)), &err);
  if (!st) *ret = tt_web_send_error(r, 500, "%s; check the state folder", err.message);
  return st;
}

static json_t *tt_pin_json(const tt_pin *p) {
  json_t *chart = NULL;
  if (p->chart) chart = json_loads(p->chart, 0, NULL);
  tt_buf when = TT_BUF_INIT;
  tt_buf_put_iso_time(&when, p->created);
  json_t *o = json_object();
  json_object_set_new(o, "id", json_integer(p->id));
  json_object_set_new(o, "position", json_integer(p->position));
  json_object_set_new(o, "title", json_string(p->title ? p->title : ""));
  json_object_set_new(o, "sql", json_string(p->sql ? p->sql : ""));
  json_object_set_new(o, "chart", chart ? chart : json_null());
  json_object_set_new(o, "question", p->question ? json_string(p->question) : json_null());
  json_object_set_new(o, "run_id", p->run_id ? json_string(p->run_id) : json_null());
  json_object_set_new(o, "created", json_string(tt_buf_cstr(&when)));
  tt_buf_free(&when);
  return o;
}

/* ---- a pinned chart, drawn again ------------------------------------------------ */

/* The pin's chart over its SQL's rows now, as SVG into out; false with err. */
static bool tt_board_chart_svg(tt_web *w, tt_db *db, const tt_pin *p, tt_buf *out,
                               tt_error *err) {
  json_t *j = json_loads(p->chart, 0, NULL);
  tt_chart_spec *spec = j ? tt_chart_spec_from_json(j, err) : NULL;
  json_decref(j);
  if (!spec) {
    if (!j) tt_error_set(err, TT_ERR_CONFIG, "the pin's chart spec is not JSON");
    return false;
  }
  const tt_config *c = tt_service_config(w->cfg->svc);
  tt_db_opts o = tt_config_db_opts(c);
  o.max_rows = TT_WEB_CHART_ROWS;
  o.count_rows = 0;
  tt_result *res = tt_db_query_opts(db, p->sql, strlen(p->sql), &o, err);
  tt_chart *ch = res ? tt_chart_build(spec, res, err) : NULL;
  if (ch)
    tt_chart_render_svg(ch, c->chart_w ? c->chart_w : TT_CHART_DEFAULT_WIDTH,
                        c->chart_h ? c->chart_h : TT_CHART_DEFAULT_HEIGHT, out);
  tt_chart_free(ch);
  tt_result_free(res);
  tt_chart_spec_free(spec);
  return ch != NULL;
}

static enum MHD_Result tt_board_chart(tt_web_req *r, const tt_pin *p) {
  if (!p->chart) return tt_web_send_error(r, 404, "pin %lld has no chart", p->id);
  tt_error err;
  tt_db *db = tt_service_db_open(r->w->cfg->svc, NULL, &err);
  tt_buf svg = TT_BUF_INIT;
  bool ok = db && tt_board_chart_svg(r->w, db, p, &svg, &err);
  tt_db_close(db);
  enum MHD_Result ret = ok ? tt_web_send(r, 200, "image/svg+xml", svg.data, svg.len, NULL, NULL)
                        : !db ? tt_web_send_error(r, 503, "%s", tt_error_text(&err))
                              : tt_web_send_sql_error(r, p->sql, &err);
  tt_buf_free(&svg);
  return ret;
}

/* ---- the board as a static page ---------------------------------------------------- */

/* Text for HTML: invisible and bidi controls made visible as the CLI shows
 * them (<U+202E>), then markup characters as entities. */
static void tt_html_text(tt_buf *b, const char *s, size_t n) {
  tt_buf vis = TT_BUF_INIT;
  tt_escape_terminal(&vis, s, n, NULL);
  for (size_t i = 0; i < vis.len; i++) {
    char c = vis.data[i];
    if (c == '&') tt_buf_puts(b, "&amp;");
    else if (c == '<') tt_buf_puts(b, "&lt;");
    else if (c == '>') tt_buf_puts(b, "&gt;");
    else if (c == '"') tt_buf_puts(b, "&quot;");
    else if (c == '\'') tt_buf_puts(b, "&#39;");
    else tt_buf_putc(b, c);
  }
  tt_buf_free(&vis);
}

static void tt_html_str(tt_buf *b, const char *s) { tt_html_text(b, s, strlen(s)); }

/* SQL keeps its line breaks: each line escaped on its own. */
static void tt_html_lines(tt_buf *b, const char *s) {
  for (;;) {
    size_t n = strcspn(s, "\n");
    tt_html_text(b, s, n);
    if (!s[n]) break;
    tt_buf_putc(b, '\n');
    s += n + 1;
  }
}

static void tt_export_table(tt_buf *b, const tt_result *res) {
  tt_buf_puts(b, "<table><thead><tr>");
  for (size_t c = 0; c < res->ncols; c++) {
    tt_buf_puts(b, "<th>");
    tt_html_str(b, res->names[c]);
    tt_buf_puts(b, "</th>");
  }
  tt_buf_puts(b, "</tr></thead><tbody>\n");
  tt_buf cell = TT_BUF_INIT;
  for (size_t i = 0; i < res->nrows; i++) {
    tt_buf_puts(b, "<tr>");
    for (size_t c = 0; c < res->ncols; c++) {
      const tt_value *v = tt_result_cell(res, i, c);
      tt_buf_reset(&cell);
      tt_value_to_text(&cell, v);
      tt_buf_puts(b, v->type == TT_VAL_INT || v->type == TT_VAL_REAL ? "<td class=\"num\">" : "<td>");
      tt_html_text(b, cell.data ? cell.data : "", cell.len);
      tt_buf_puts(b, "</td>");
    }
    tt_buf_puts(b, "</tr>\n");
  }
  tt_buf_free(&cell);
  tt_buf_puts(b, "</tbody></table>\n");
  if (res->truncated)
    tt_buf_printf(b, "<p class=\"note\">The first %zu rows; the query gives more.</p>\n", res->nrows);
}

/* One pin, re-run now. */
static void tt_export_pin(tt_web *w, tt_db *db, const tt_pin *p, tt_buf *b) {
  tt_buf_puts(b, "<section>\n<h2>");
  tt_html_str(b, p->title);
  tt_buf_puts(b, "</h2>\n<p class=\"note\">");
  if (p->question) {
    tt_buf_puts(b, "Question: ");
    tt_html_str(b, p->question);
    tt_buf_puts(b, " · ");
  }
  tt_buf_puts(b, "refreshed ");
  tt_buf_put_iso_time(b, tt_wall_time());
  tt_buf_puts(b, "</p>\n");
  tt_error err;
  tt_buf svg = TT_BUF_INIT;
  if (p->chart && tt_board_chart_svg(w, db, p, &svg, &err)) {
    const char *start = strstr(tt_buf_cstr(&svg), "<svg"); /* without the XML prolog */
    tt_buf_puts(b, "<figure>");
    tt_buf_puts(b, start ? start : "");
    tt_buf_puts(b, "</figure>\n");
  }
  tt_buf_free(&svg);
  tt_db_opts o = tt_config_db_opts(tt_service_config(w->cfg->svc));
  o.max_rows = TT_WEB_EXPORT_ROWS;
  o.count_rows = 0;
  tt_result *res = tt_db_query_opts(db, p->sql, strlen(p->sql), &o, &err);
  if (res) {
    tt_export_table(b, res);
  } else {
    tt_buf_puts(b, "<p class=\"error\">");
    tt_html_str(b, tt_error_text(&err));
    tt_buf_puts(b, "</p>\n");
  }
  tt_result_free(res);
  tt_buf_puts(b, "<details><summary>SQL</summary><pre>");
  tt_html_lines(b, p->sql);
  tt_buf_puts(b, "</pre></details>\n</section>\n");
}

static const char tt_export_style[] =
    "body{font:15px/1.5 system-ui,sans-serif;margin:1.5rem auto;max-width:70rem;padding:0 1rem;"
    "color:#1d1f21;background:#fbfbfa}h2{font-size:1.1rem;margin:1.5rem 0 .25rem}"
    ".note{color:#5c6166;font-size:.85rem}table{border-collapse:collapse;font-size:.88rem}"
    "th,td{padding:.25rem .5rem;border-bottom:1px solid #d5d8dc;text-align:left;vertical-align:top;"
    "white-space:pre-wrap}td.num{text-align:right}figure{margin:.5rem 0}svg{max-width:100%;height:auto}"
    "pre{background:#f1f3f5;padding:.5rem;white-space:pre-wrap}.error{color:#8a1c12}"
    "@media (prefers-color-scheme: dark){body{color:#e6e7e8;background:#16181b}.note{color:#a3a8ae}"
    "th,td{border-color:#3a3f45}pre{background:#272b30}.error{color:#ffb4a9}}";

static enum MHD_Result tt_board_export(tt_web_req *r) {
  enum MHD_Result ret;
  tt_store *st = tt_board_store(r, &ret);
  if (!st) return ret;
  tt_pin *pins;
  size_t n;
  tt_error err;
  bool ok = tt_store_list_pins(st, tt_board_db(r), &pins, &n, &err);
  tt_store_close(st);
  if (!ok) return tt_web_send_error(r, 500, "%s", tt_error_text(&err));
  tt_db *db = tt_service_db_open(r->w->cfg->svc, NULL, &err);
  if (!db) {
    tt_pins_free(pins, n);
    return tt_web_send_error(r, 503, "%s", tt_error_text(&err));
  }
  tt_buf b = TT_BUF_INIT;
  tt_buf_puts(&b, "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
                  "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
                  "style-src 'unsafe-inline'\">\n<title>Board: ");
  tt_html_str(&b, tt_board_db(r));
  tt_buf_printf(&b, "</title>\n<style>%s</style></head><body>\n<h1>Board of ", tt_export_style);
  tt_html_str(&b, tt_board_db(r));
  tt_buf_puts(&b, "</h1>\n<p class=\"note\">Exported from tabletalk web on ");
  tt_buf_put_iso_time(&b, tt_wall_time());
  tt_buf_printf(&b, "; %zu pinned answer%s, each query run again at export.</p>\n", n,
                n == 1 ? "" : "s");
  for (size_t i = 0; i < n; i++) tt_export_pin(r->w, db, &pins[i], &b);
  tt_buf_puts(&b, "</body></html>\n");
  tt_db_close(db);
  tt_pins_free(pins, n);
  ret = tt_web_send(r, 200, "text/html; charset=utf-8", b.data, b.len, "Content-Disposition",
                    "attachment; filename=\"tabletalk-board.html\"");
  tt_buf_free(&b);
  return ret;
}

/* ---- the endpoints --------------------------------------------------------------------- */

/* POST /api/pins {"title", "sql", "chart"?, "question"?, "run_id"?} */
static enum MHD_Result tt_board_add(tt_web_req *r, tt_store *st) {
  enum MHD_Result ret;
  json_t *body = tt_web_body_object(r, &ret);
  if (!body) return ret;
  tt_pin p = {0};
  p.title = (char *)json_string_value(json_object_get(body, "title"));
  p.sql = (char *)json_string_value(json_object_get(body, "sql"));
  p.question = (char *)json_string_value(json_object_get(body, "question"));
  p.run_id = (char *)json_string_value(json_object_get(body, "run_id"));
  const json_t *chart = json_object_get(body, "chart");
  tt_error err;
  tt_chart_spec *spec = json_is_object(chart) ? tt_chart_spec_from_json(chart, &err) : NULL;
  if (!p.title || !*p.title || strlen(p.title) > 500 || !p.sql || !*p.sql) {
    ret = tt_web_send_error(r, 400, "a pin needs \"title\" (1 to 500 bytes) and \"sql\"");
  } else if (chart && !json_is_null(chart) && !spec) {
    ret = tt_web_send_error(r, 400, "\"chart\" must be a chart spec: %s",
                            json_is_object(chart) ? err.message : "an object");
  } else if (p.run_id && !tt_web_id_ok(p.run_id)) {
    ret = tt_web_send_error(r, 400, "\"run_id\" is not a run id");
  } else {
    char *text = spec ? json_dumps(chart, JSON_COMPACT) : NULL;
    p.chart = text;
    long long id;
    tt_pin got;
    bool found = false;
    if (tt_store_add_pin(st, tt_board_db(r), &p, &id, &err) &&
        tt_store_get_pin(st, tt_board_db(r), id, &got, &found, &err) && found) {
      ret = tt_web_send_json(r, 201, tt_pin_json(&got));
      tt_pin_free(&got);
    } else {
      ret = tt_web_send_error(r, 500, "%s", tt_error_text(&err));
    }
    free(text);
  }
  tt_chart_spec_free(spec);
  json_decref(body);
  return ret;
}

/* PATCH /api/pins/ID {"title"?, "position"?} */
static enum MHD_Result tt_board_change(tt_web_req *r, tt_store *st, long long id) {
  enum MHD_Result ret;
  json_t *body = tt_web_body_object(r, &ret);
  if (!body) return ret;
  const json_t *title = json_object_get(body, "title"), *pos = json_object_get(body, "position");
  tt_error err;
  bool found = true, ok = true;
  if ((!title && !pos) || (title && (!json_is_string(title) || !json_string_length(title) ||
                                     json_string_length(title) > 500)) ||
      (pos && (!json_is_integer(pos) || json_integer_value(pos) < 0))) {
    json_decref(body);
    return tt_web_send_error(r, 400, "send \"title\" (1 to 500 bytes) and/or \"position\" (0 first)");
  }
  if (title) ok = tt_store_rename_pin(st, tt_board_db(r), id, json_string_value(title), &found, &err);
  if (ok && found && pos)
    ok = tt_store_move_pin(st, tt_board_db(r), id, (size_t)json_integer_value(pos), &found, &err);
  json_decref(body);
  tt_pin p;
  if (ok && found) ok = tt_store_get_pin(st, tt_board_db(r), id, &p, &found, &err);
  if (!ok) return tt_web_send_error(r, 500, "%s", tt_error_text(&err));
  if (!found) return tt_web_send_error(r, 404, "no pin %lld on this board", id);
  ret = tt_web_send_json(r, 200, tt_pin_json(&p));
  tt_pin_free(&p);
  return ret;
}

static enum MHD_Result tt_board_list(tt_web_req *r, tt_store *st) {
  tt_pin *pins;
  size_t n;
  tt_error err;
  if (!tt_store_list_pins(st, tt_board_db(r), &pins, &n, &err))
    return tt_web_send_error(r, 500, "%s", tt_error_text(&err));
  json_t *arr = json_array();
  for (size_t i = 0; i < n; i++) json_array_append_new(arr, tt_pin_json(&pins[i]));
  tt_pins_free(pins, n);
  return tt_web_send_json(r, 200, json_pack("{s:o}", "pins", arr));
}

static enum MHD_Result tt_board_one(tt_web_req *r, tt_store *st, const char *rest) {
  char *end;
  long long id = strtoll(rest, &end, 10);
  if (end == rest || id < 1 || (*end && strcmp(end, "/chart.svg") != 0))
    return tt_web_send_error(r, 404, "pins are at /api/pins/ID (and /api/pins/ID/chart.svg)");
  bool chart = *end != '\0';
  if (chart && strcmp(r->method, "GET") != 0) return tt_web_send_error(r, 405, "GET only");
  if (strcmp(r->method, "PATCH") == 0) return tt_board_change(r, st, id);
  tt_error err;
  bool found;
  if (strcmp(r->method, "DELETE") == 0) {
    if (!tt_store_delete_pin(st, tt_board_db(r), id, &found, &err))
      return tt_web_send_error(r, 500, "%s", tt_error_text(&err));
    return found ? tt_web_send(r, 204, NULL, NULL, 0, NULL, NULL)
                 : tt_web_send_error(r, 404, "no pin %lld on this board", id);
  }
  tt_pin p;
  if (!tt_store_get_pin(st, tt_board_db(r), id, &p, &found, &err))
    return tt_web_send_error(r, 500, "%s", tt_error_text(&err));
  if (!found) return tt_web_send_error(r, 404, "no pin %lld on this board", id);
  enum MHD_Result ret = chart ? tt_board_chart(r, &p) : tt_web_send_json(r, 200, tt_pin_json(&p));
  tt_pin_free(&p);
  return ret;
}

enum MHD_Result tt_web_api_pins(tt_web_req *r, const char *rest) {
  if (rest && strcmp(rest, "export.html") == 0) return tt_board_export(r);
  enum MHD_Result ret;
  tt_store *st = tt_board_store(r, &ret);
  if (!st) return ret;
  if (!rest) ret = strcmp(r->method, "POST") == 0 ? tt_board_add(r, st) : tt_board_list(r, st);
  else ret = tt_board_one(r, st, rest);
  tt_store_close(st);
  return ret;
}
