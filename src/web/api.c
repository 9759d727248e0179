/* api.c — the JSON endpoints of `tabletalk web` (docs/reference/web-api.md): the
 * session, guarded SQL, the threads of the thread store, the schema with
 * sample values, a run's trace and its chart files. Each request opens
 * what it needs (a database handle, the store) and closes it, so requests
 * of several tabs never share a handle. */
#include "web/web_internal.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tt_version.h"

bool tt_web_id_ok(const char *id) {
  if (!id || !*id || strlen(id) > 200 || id[0] == '.') return false;
  for (const char *p = id; *p; p++)
    if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
          *p == '-' || *p == '_' || *p == '.'))
      return false;
  return true;
}

/* The model the configuration picks, named for people ("qwen2.5-7b.gguf",
 * the endpoint's model or URL), or NULL: none yet. Makes nothing: an
 * in-process model loads with the first question, not with the page. */
static char *tt_web_model_name(tt_service *svc, const char **source) {
  tt_model_choice ch;
  tt_models_choice(tt_service_models(svc), &ch);
  char *name = NULL;
  if (ch.path) {
    const char *slash = strrchr(ch.path, '/');
    name = tt_xstrdup(slash ? slash + 1 : ch.path);
  } else if (ch.url) {
    const tt_config *c = tt_service_config(svc);
    const char *m = c->model ? c->model : tt_config_get_value(c, "TABLETALK_MODEL");
    name = m ? tt_xasprintf("%s at %s", m, ch.url) : tt_xstrdup(ch.url);
  }
  *source = ch.source;
  tt_model_choice_free(&ch);
  return name;
}

#define TT_WEB_MODEL_HELP                                                                       \
  "No model is configured, so questions are off; the schema, SQL and the board work. To ask "   \
  "questions, install one with `tabletalk pull` (this page notices it), or restart with "       \
  "--base-url URL (or TABLETALK_BASE_URL) pointing at Ollama, llama-server or an API."

enum MHD_Result tt_web_api_session(tt_web_req *r) {
  tt_service *svc = r->w->cfg->svc;
  const tt_db_target *t = tt_service_target(svc);
  const char *source = NULL;
  char *model = tt_web_model_name(svc, &source);
  json_t *j = json_object();
  json_object_set_new(j, "csrf", r->csrf[0] ? json_string(r->csrf) : json_null());
  json_object_set_new(j, "db", json_string(t->shown));
  json_object_set_new(j, "dialect", json_string(tt_db_kind_dialect(t->kind)));
  json_object_set_new(j, "model", model ? json_string(model) : json_null());
  json_object_set_new(j, "model_source", model && source ? json_string(source) : json_null());
  json_object_set_new(j, "model_help", model ? json_null() : json_string(TT_WEB_MODEL_HELP));
  json_object_set_new(j, "version", json_string(TT_VERSION));
  /* the server runs in private mode: every question is private */
  json_object_set_new(j, "private", json_boolean(tt_service_config(svc)->private_mode));
  /* what the user should know about how the database is reached */
  json_t *warnings = json_array();
  const char *w = tt_service_warning(svc);
  if (w) json_array_append_new(warnings, json_string(w));
  json_object_set_new(j, "warnings", warnings);
  free(model);
  return tt_web_send_json(r, 200, j);
}

/* ---- SQL ------------------------------------------------------------------------- */

enum MHD_Result tt_web_api_sql(tt_web_req *r) {
  enum MHD_Result ret;
  json_t *body = tt_web_body_object(r, &ret);
  if (!body) return ret;
  const json_t *sql = json_object_get(body, "sql");
  const json_t *max = json_object_get(body, "max_rows");
  if (!json_is_string(sql) || !json_string_length(sql)) {
    json_decref(body);
    return tt_web_send_error(r, 400, "\"sql\" must be one read-only statement as a string");
  }
  json_int_t max_rows = json_is_integer(max) ? json_integer_value(max) : 1000;
  if (max_rows < 1 || max_rows > 100000) {
    json_decref(body);
    return tt_web_send_error(r, 400, "\"max_rows\" must be from 1 to 100000");
  }
  tt_service *svc = r->w->cfg->svc;
  tt_db_opts o = tt_config_db_opts(tt_service_config(svc));
  o.max_rows = (long)max_rows;
  tt_error derr;
  tt_db *db = tt_service_db_open(svc, &o, &derr);
  tt_result *res = db ? tt_db_query_opts(db, json_string_value(sql), json_string_length(sql), &o,
                                         &derr)
                      : NULL;
  json_decref(body);
  tt_db_close(db);
  if (!res) {
    json_t *e = json_object();
    json_object_set_new(e, "error", json_string(derr.message));
    json_object_set_new(e, "refused", json_boolean(derr.kind == TT_ERR_REFUSED));
    return tt_web_send_json(r, 422, e);
  }
  json_t *j = tt_result_to_json(res, 0, false);
  tt_result_free(res);
  return tt_web_send_json(r, 200, j);
}

/* ---- threads ------------------------------------------------------------------------- */

static json_t *tt_web_thread_json(const tt_thread *t) {
  json_t *turns = json_array();
  for (size_t i = 0; i < t->nturns; i++) {
    const tt_turn_rec *tr = &t->turns[i];
    json_t *o = json_object();
    json_object_set_new(o, "question", json_string(tr->question ? tr->question : ""));
    json_object_set_new(o, "run_id", tr->run_id ? json_string(tr->run_id) : json_null());
    json_object_set_new(o, "status", json_string(tt_run_status_name(tr->status)));
    json_object_set_new(o, "answer", tr->answer ? json_string(tr->answer) : json_null());
    json_object_set_new(o, "sql", tr->sql ? json_string(tr->sql) : json_null());
    json_object_set_new(o, "summary", tr->summary ? json_string(tr->summary) : json_null());
    json_array_append_new(turns, o);
  }
  const char *title = t->title ? t->title : t->nturns ? t->turns[0].question : "";
  return json_pack("{s:s,s:s,s:o}", "thread_id", t->name, "title", title ? title : "", "turns",
                   turns);
}

static enum MHD_Result tt_web_thread_list(tt_web_req *r, tt_store *st) {
  tt_thread_summary *v;
  size_t n;
  tt_error err;
  if (!tt_store_list_threads(st, tt_service_target(r->w->cfg->svc)->shown, &v, &n, &err)) {
    enum MHD_Result ret = tt_web_send_error(r, 500, "%s", err.message);
    return ret;
  }
  json_t *arr = json_array();
  for (size_t i = 0; i < n; i++) {
    tt_buf when = TT_BUF_INIT;
    tt_buf_put_iso_time(&when, v[i].updated);
    json_array_append_new(arr, json_pack("{s:s,s:s,s:s,s:I}", "thread_id", v[i].name, "title",
                                         v[i].title ? v[i].title : "", "updated",
                                         tt_buf_cstr(&when), "turns", (json_int_t)v[i].turns));
    tt_buf_free(&when);
  }
  tt_thread_summaries_free(v, n);
  return tt_web_send_json(r, 200, json_pack("{s:o}", "threads", arr));
}

enum MHD_Result tt_web_api_threads(tt_web_req *r, const char *id) {
  if (id && !tt_web_id_ok(id))
    return tt_web_send_error(r, 400, "'%s' is not a thread id (letters, digits, '-', '_', '.')", id);
  tt_error err;
  tt_store *st = tt_store_open(tt_config_state_dir(tt_service_config(r->w->cfg->svc)), &err);
  if (!st) {
    enum MHD_Result ret = tt_web_send_error(r, 500, "%s; check the state folder", err.message);
    return ret;
  }
  enum MHD_Result ret;
  const char *db = tt_service_target(r->w->cfg->svc)->shown;
  bool found = false;
  if (!id) {
    ret = tt_web_thread_list(r, st);
  } else if (strcmp(r->method, "GET") == 0) {
    tt_thread t;
    if (!tt_store_load_thread(st, id, db, &t, &err)) ret = tt_web_send_error(r, 500, "%s", err.message);
    else if (!t.nturns) ret = tt_web_send_error(r, 404, "no thread '%s' on this database", id);
    else ret = tt_web_send_json(r, 200, tt_web_thread_json(&t));
    tt_thread_free(&t);
  } else if (strcmp(r->method, "PATCH") == 0) {
    json_t *body = tt_web_body_object(r, &ret);
    const char *title = body ? json_string_value(json_object_get(body, "title")) : NULL;
    if (!body) {
      /* answered */
    } else if (!title || !*title || strlen(title) > 500) {
      ret = tt_web_send_error(r, 400, "\"title\" must be a string of 1 to 500 bytes");
    } else if (!tt_store_rename_thread(st, id, db, title, &found, &err)) {
      ret = tt_web_send_error(r, 500, "%s", err.message);
    } else if (!found) {
      ret = tt_web_send_error(r, 404, "no thread '%s' on this database", id);
    } else {
      ret = tt_web_send_json(r, 200, json_pack("{s:s,s:s}", "thread_id", id, "title", title));
    }
    json_decref(body);
  } else { /* DELETE */
    if (!tt_store_delete_thread(st, id, db, &found, &err))
      ret = tt_web_send_error(r, 500, "%s", err.message);
    else if (!found) ret = tt_web_send_error(r, 404, "no thread '%s' on this database", id);
    else ret = tt_web_send(r, 204, NULL, NULL, 0, NULL, NULL);
  }
  tt_store_close(st);
  return ret;
}

/* ---- schema ---------------------------------------------------------------------------- */

/* Up to three different values of column c: its frequent values, else
 * those of the sample rows. */
static json_t *tt_web_samples(const tt_table_info *t, size_t c) {
  json_t *arr = json_array();
  const tt_column_info *col = &t->cols[c];
  for (size_t i = 0; i < col->ntop_values && i < TT_TOP_VALUES; i++)
    json_array_append_new(arr, json_string(col->top_values[i]));
  if (json_array_size(arr) || !t->sample || c >= t->sample->ncols) return arr;
  for (size_t row = 0; row < t->sample->nrows; row++) {
    const tt_value *v = tt_result_cell(t->sample, row, c);
    if (v->type == TT_VAL_NULL) continue;
    json_t *j = tt_value_to_json(v, false);
    bool seen = false;
    size_t k;
    json_t *e;
    json_array_foreach(arr, k, e) seen = seen || json_equal(e, j);
    if (seen) json_decref(j);
    else json_array_append_new(arr, j);
  }
  return arr;
}

enum MHD_Result tt_web_api_schema(tt_web_req *r) {
  const tt_catalog *cat = tt_schema_catalog(r->w->schema);
  json_t *tables = json_array();
  for (size_t i = 0; i < cat->ntables; i++) {
    const tt_table_info *t = &cat->tables[i];
    json_t *cols = json_array();
    for (size_t c = 0; c < t->ncols; c++) {
      const tt_column_info *col = &t->cols[c];
      json_t *fk = json_null();
      for (size_t k = 0; k < t->nfks; k++)
        if (strcmp(t->fks[k].from, col->name) == 0) {
          json_decref(fk);
          fk = json_pack("{s:s,s:s}", "table", t->fks[k].table, "column",
                         t->fks[k].to ? t->fks[k].to : "");
        }
      json_t *o = json_object();
      json_object_set_new(o, "name", json_string(col->name));
      json_object_set_new(o, "type", json_string(col->type ? col->type : ""));
      json_object_set_new(o, "pk", json_boolean(col->pk > 0));
      json_object_set_new(o, "not_null", json_boolean(col->not_null));
      json_object_set_new(o, "fk", fk);
      char *described = tt_described(col->description, col->data_note);
      json_object_set_new(o, "description", described ? json_string(described) : json_null());
      free(described);
      json_object_set_new(o, "samples", tt_web_samples(t, c));
      json_array_append_new(cols, o);
    }
    json_t *o = json_object();
    json_object_set_new(o, "name", json_string(t->name));
    json_object_set_new(o, "kind", json_string(t->is_view ? "view" : "table"));
    char *tdescribed = tt_described(t->description, t->data_note);
    json_object_set_new(o, "description", tdescribed ? json_string(tdescribed) : json_null());
    free(tdescribed);
    json_object_set_new(o, "rows", t->row_count >= 0 ? json_integer(t->row_count) : json_null());
    json_object_set_new(o, "rows_exact", json_boolean(t->row_count >= 0 && t->row_count_kind == TT_ROWS_EXACT));
    json_object_set_new(o, "columns", cols);
    json_array_append_new(tables, o);
  }
  json_t *j = json_object();
  json_object_set_new(j, "dialect", json_string(tt_db_kind_dialect(tt_service_target(r->w->cfg->svc)->kind)));
  json_object_set_new(j, "tables", tables);
  json_object_set_new(j, "notes", tt_schema_notes_json(r->w->schema));
  return tt_web_send_json(r, 200, j);
}

#define TT_WEB_VALUE_MATCHES 100

/* GET /api/schema/values?q=TEXT: values of the value index (the distinct
 * short text values of every text column) that contain TEXT, ignoring case
 * and accents, the values equal to it first, then those starting with it:
 * {"matches": [{"table", "column", "value"}], "more"}. */
enum MHD_Result tt_web_api_schema_values(tt_web_req *r) {
  const char *q = tt_web_arg(r, "q");
  if (!q || !*q || strlen(q) > 200) return tt_web_send_error(r, 400, "?q= must be 1 to 200 bytes");
  tt_buf want = TT_BUF_INIT, have = TT_BUF_INIT;
  tt_values_fold(q, strlen(q), &want);
  const tt_values *v = tt_schema_values(r->w->schema);
  json_t *tier[3] = {json_array(), json_array(), json_array()}; /* equal, prefix, inside */
  size_t found = 0;
  const char *t, *c, *val;
  for (size_t i = 0; want.len && tt_values_entry(v, i, &t, &c, &val); i++) {
    tt_buf_reset(&have);
    tt_values_fold(val, strlen(val), &have);
    const char *at = strstr(tt_buf_cstr(&have), tt_buf_cstr(&want));
    if (!at) continue;
    int k = at != have.data ? 2 : have.len == want.len ? 0 : 1;
    if (++found <= TT_WEB_VALUE_MATCHES || k == 0)
      json_array_append_new(tier[k], json_pack("{s:s,s:s,s:s}", "table", t, "column", c, "value", val));
  }
  tt_buf_free(&want);
  tt_buf_free(&have);
  json_array_extend(tier[0], tier[1]);
  json_array_extend(tier[0], tier[2]);
  json_decref(tier[1]);
  json_decref(tier[2]);
  while (json_array_size(tier[0]) > TT_WEB_VALUE_MATCHES)
    json_array_remove(tier[0], json_array_size(tier[0]) - 1);
  return tt_web_send_json(r, 200, json_pack("{s:o,s:b}", "matches", tier[0], "more",
                                            found > TT_WEB_VALUE_MATCHES));
}

/* ---- runs and charts -------------------------------------------------------------------- */

enum MHD_Result tt_web_api_run(tt_web_req *r, const char *run_id) {
  const char *slash = strchr(run_id, '/');
  if (slash && strcmp(slash, "/check") == 0 && slash - run_id < 128) {
    char id[128];
    snprintf(id, sizeof id, "%.*s", (int)(slash - run_id), run_id);
    if (!tt_web_id_ok(id)) return tt_web_send_error(r, 400, "'%s' is not a run id", id);
    return tt_web_api_run_check(r, id);
  }
  if (!tt_web_id_ok(run_id)) return tt_web_send_error(r, 400, "'%s' is not a run id", run_id);
  tt_error err;
  json_t *events = tt_trace_load(tt_config_state_dir(tt_service_config(r->w->cfg->svc)), run_id, &err);
  enum MHD_Result ret;
  if (!events) ret = tt_web_send_error(r, 404, "%s", err.message);
  else ret = tt_web_send_json(r, 200, json_pack("{s:s,s:o}", "run_id", run_id, "events", events));
  return ret;
}

/* RUN_ID/N.svg or RUN_ID/N.png: chart N (from 1) of the run, as saved. */
enum MHD_Result tt_web_api_chart(tt_web_req *r, const char *rest) {
  const char *slash = strchr(rest, '/');
  char run_id[128];
  unsigned long n = 0;
  char ext[5] = "";
  if (!slash || (size_t)(slash - rest) >= sizeof run_id)
    return tt_web_send_error(r, 404, "charts are at /api/charts/RUN_ID/N.svg (or .png)");
  snprintf(run_id, sizeof run_id, "%.*s", (int)(slash - rest), rest);
  char *end;
  n = strtoul(slash + 1, &end, 10);
  if (end != slash + 1 && *end == '.') snprintf(ext, sizeof ext, "%s", end + 1);
  bool svg = strcmp(ext, "svg") == 0, png = strcmp(ext, "png") == 0;
  if (!tt_web_id_ok(run_id) || n < 1 || n > 1000 || (!svg && !png) || strlen(end) != 4)
    return tt_web_send_error(r, 404, "charts are at /api/charts/RUN_ID/N.svg (or .png), N from 1");
  char *file = n == 1 ? tt_xasprintf("%s/charts/%s.%s", tt_config_state_dir(tt_service_config(r->w->cfg->svc)), run_id, ext)
                      : tt_xasprintf("%s/charts/%s-%lu.%s", tt_config_state_dir(tt_service_config(r->w->cfg->svc)), run_id, n, ext);
  int fd = open(file, O_RDONLY | O_CLOEXEC);
  free(file);
  if (fd < 0)
    return tt_web_send_error(r, 404, "run %s has no chart %lu as %s (charts are kept for the "
                                     "days TABLETALK_KEEP says)", run_id, n, ext);
  size_t len;
  bool too_long;
  char *data = tt_read_stream(fd, 64u << 20, &len, &too_long);
  close(fd);
  enum MHD_Result ret;
  if (!data || too_long) {
    ret = tt_web_send_error(r, 500, "cannot read the chart file of run %s", run_id);
  } else if (svg) {
    ret = tt_web_send(r, 200, "image/svg+xml", data, len, NULL, NULL);
  } else {
    char disp[200];
    snprintf(disp, sizeof disp, "attachment; filename=\"%s-%lu.png\"", run_id, n);
    ret = tt_web_send(r, 200, "image/png", data, len, "Content-Disposition", disp);
  }
  free(data);
  return ret;
}
