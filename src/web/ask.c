/* ask.c — POST /api/ask: one question answered on a thread of its own
 * while its progress streams to the page as server-sent events (start,
 * step, text, text_restart, then run or error; docs/reference/web-api.md). Each
 * question opens its own database handle and session, so questions of
 * several tabs run side by side; a model made per question (an HTTP
 * endpoint) runs in parallel, the in-process model answers one at a time.
 * A client that goes away, or the server stopping, cancels the question. */
#include "web/web_internal.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

struct tt_web_ask {
  tt_web *w;
  char *question;
  char *thread;
  char run_id[64];
  tt_httpd_stream *st;
  volatile sig_atomic_t cancel;
  struct tt_web_ask *next; /* w->asks, while the worker runs */
};

static void tt_web_ask_free(void *ud) {
  tt_web_ask *a = ud;
  free(a->question);
  free(a->thread);
  free(a);
}

/* ---- events ------------------------------------------------------------------ */

static json_t *tt_opt_str(const char *s) { return s ? json_string(s) : json_null(); }

static void tt_web_on_event(void *ud, const tt_event *ev) {
  tt_web_ask *a = ud;
  json_t *o = json_object();
  json_object_set_new(o, "step", json_integer(ev->step));
  switch (ev->kind) {
  case TT_EV_LLM_WAIT:
    json_object_set_new(o, "kind", json_string("model_wait"));
    break;
  case TT_EV_LLM_CALL:
    json_object_set_new(o, "kind", json_string("model"));
    if (ev->reply) {
      json_object_set_new(o, "ms", json_real(ev->reply->latency_ms));
      json_object_set_new(o, "prompt_tokens", json_integer(ev->reply->usage.prompt));
      json_object_set_new(o, "completion_tokens", json_integer(ev->reply->usage.completion));
      json_object_set_new(o, "tool", tt_opt_str(ev->reply->is_tool ? ev->reply->tool_name : NULL));
    } else {
      json_object_set_new(o, "error", tt_opt_str(ev->llm_error ? ev->llm_error->message : NULL));
    }
    break;
  case TT_EV_TOOL_CALL:
    if (ev->tool && strcmp(ev->tool, "run_sql") == 0) {
      json_object_set_new(o, "kind", json_string("sql"));
      json_object_set_new(o, "sql", tt_opt_str(ev->sql));
      json_object_set_new(o, "ok", json_boolean(ev->ok));
      json_object_set_new(o, "rows", json_integer(ev->rows));
      json_object_set_new(o, "truncated", json_boolean(ev->truncated));
      json_object_set_new(o, "ms", json_real(ev->ms));
    } else if (ev->tool && strcmp(ev->tool, "make_chart") == 0) {
      json_object_set_new(o, "kind", json_string("chart"));
      json_object_set_new(o, "ok", json_boolean(ev->ok));
      json_object_set_new(o, "chart", tt_opt_str(ev->chart));
      json_object_set_new(o, "rows", json_integer(ev->rows));
      json_object_set_new(o, "ms", json_real(ev->ms));
    } else {
      json_object_set_new(o, "kind", json_string("tool"));
      json_object_set_new(o, "tool", tt_opt_str(ev->tool));
      json_object_set_new(o, "ok", json_boolean(ev->ok));
    }
    json_object_set_new(o, "error", tt_opt_str(ev->error));
    break;
  case TT_EV_VERIFY: {
    json_object_set_new(o, "kind", json_string("verify"));
    json_object_set_new(o, "decision", tt_opt_str(ev->decision));
    json_object_set_new(o, "reason", tt_opt_str(ev->reason));
    json_t *nums = json_array();
    for (size_t i = 0; i < ev->nunbacked; i++) json_array_append_new(nums, json_string(ev->unbacked[i]));
    json_object_set_new(o, "unbacked_numbers", nums);
    break;
  }
  case TT_EV_CONTEXT:
    json_object_set_new(o, "kind", json_string("context"));
    json_object_set_new(o, "action", tt_opt_str(ev->action));
    json_object_set_new(o, "error", tt_opt_str(ev->error));
    break;
  case TT_EV_SCHEMA:
    json_object_set_new(o, "kind", json_string("schema"));
    json_object_set_new(o, "tables", ev->tables ? json_deep_copy(ev->tables) : json_array());
    break;
  }
  tt_httpd_stream_event(a->st, "step", o);
}

static void tt_web_on_text(void *ud, const char *piece, size_t n) {
  tt_web_ask *a = ud;
  json_t *o = json_object();
  json_object_set_new(o, "piece", tt_json_stringn(piece, n));
  tt_httpd_stream_event(a->st, "text", o);
}

static void tt_web_on_restart(void *ud) {
  tt_web_ask *a = ud;
  tt_httpd_stream_event(a->st, "text_restart", json_object());
}

static void tt_web_ask_error(tt_web_ask *a, const char *what) {
  tt_httpd_stream_event(a->st, "error", json_pack("{s:s}", "error", what));
}

/* ---- the worker ------------------------------------------------------------------- */

/* The model for this question: a fresh one, or the shared one once it is
 * free (NULL when cancelled meanwhile). */
static tt_llm *tt_web_take_llm(tt_web_ask *a, bool *shared, tt_buf *err) {
  const tt_web_config *cfg = a->w->cfg;
  *shared = false;
  if (cfg->make_llm) {
    pthread_mutex_lock(&a->w->make_mu);
    tt_llm *llm = cfg->make_llm(cfg->llm_ud, err);
    pthread_mutex_unlock(&a->w->make_mu);
    return llm;
  }
  *shared = true;
  bool told = false;
  while (pthread_mutex_trylock(&a->w->llm_mu) != 0) {
    if (a->cancel) {
      tt_buf_puts(err, "cancelled while waiting for the model");
      return NULL;
    }
    if (!told) { /* another question holds the in-process model */
      tt_httpd_stream_event(a->st, "step", json_pack("{s:s}", "kind", "queued"));
      told = true;
    }
    struct timespec ts = {0, 20 * 1000000L};
    nanosleep(&ts, NULL);
  }
  return cfg->llm;
}

/* Charts in the run get the addresses the page loads them from. */
static void tt_web_chart_urls(json_t *run, const char *run_id) {
  json_t *charts = json_object_get(run, "charts");
  size_t i;
  json_t *c;
  json_array_foreach(charts, i, c) {
    char *svg = tt_xasprintf("/api/charts/%s/%zu.svg", run_id, i + 1);
    char *png = tt_xasprintf("/api/charts/%s/%zu.png", run_id, i + 1);
    json_object_set_new(c, "url", json_string(svg));
    json_object_set_new(c, "png_url", json_string(png));
    free(svg);
    free(png);
  }
}

static void tt_web_ask_run(tt_web_ask *a) {
  const tt_web_config *cfg = a->w->cfg;
  tt_buf err = TT_BUF_INIT;
  bool shared = false;
  tt_llm *llm = tt_web_take_llm(a, &shared, &err);
  if (!llm) {
    tt_web_ask_error(a, tt_buf_cstr(&err));
    tt_buf_free(&err);
    return;
  }
  tt_error derr;
  tt_db *db = tt_db_open(cfg->db_path, &cfg->agent_opts.sql, &derr);
  tt_session *session = NULL;
  if (!db) tt_buf_puts(&err, derr.message);
  else session = tt_session_new(cfg->state_dir, cfg->db_shown, db, cfg->schema, llm,
                                &cfg->agent_opts, &err);
  if (session) {
    tt_chart_files cf = cfg->charts;
    cf.both = true; /* SVG to show, PNG to download */
    cf.out = NULL;
    tt_session_set_chart_files(session, &cf);
    tt_session_set_run_id(session, a->run_id);
    tt_agent_hooks hooks = {.on_event = tt_web_on_event, .on_text = tt_web_on_text,
                            .on_text_restart = tt_web_on_restart, .ud = a, .cancel = &a->cancel};
    tt_run run;
    tt_ask_result info;
    tt_session_ask(session, a->thread, a->question, &hooks, &run, &info);
    json_t *j = tt_run_json(&run, &info, a->thread, TT_WEB_RUN_ROWS);
    tt_web_chart_urls(j, info.run_id);
    tt_httpd_stream_event(a->st, "run", j);
    tt_run_free(&run);
  } else {
    tt_web_ask_error(a, tt_buf_cstr(&err));
  }
  tt_session_free(session);
  tt_db_close(db);
  if (shared) pthread_mutex_unlock(&a->w->llm_mu);
  else tt_llm_free(llm);
  tt_buf_free(&err);
}

static void *tt_web_ask_worker(void *arg) {
  tt_web_ask *a = arg;
  tt_web *w = a->w;
  tt_web_ask_run(a);
  pthread_mutex_lock(&w->mu);
  for (tt_web_ask **p = &w->asks; *p; p = &(*p)->next)
    if (*p == a) {
      *p = a->next;
      break;
    }
  pthread_mutex_unlock(&w->mu);
  tt_httpd_stream_finish(a->st); /* may free a */
  tt_httpd_workers_done(&w->workers);
  return NULL;
}

void tt_web_asks_cancel(tt_web *w) {
  pthread_mutex_lock(&w->mu);
  for (tt_web_ask *a = w->asks; a; a = a->next) a->cancel = 1;
  pthread_mutex_unlock(&w->mu);
}

/* ---- the request ------------------------------------------------------------------------- */

enum MHD_Result tt_web_api_ask(tt_web_req *r) {
  enum MHD_Result ret;
  json_t *body = tt_web_body_object(r, &ret);
  if (!body) return ret;
  const char *q = json_string_value(json_object_get(body, "question"));
  const json_t *tid = json_object_get(body, "thread_id");
  if (!q || !*q) {
    json_decref(body);
    return tt_web_send_error(r, 400, "\"question\" must be a non-empty string");
  }
  if (tid && !json_is_null(tid) && (!json_is_string(tid) || !tt_web_id_ok(json_string_value(tid)))) {
    json_decref(body);
    return tt_web_send_error(r, 400, "\"thread_id\" must be null (a new thread) or a thread id "
                                     "(letters, digits, '-', '_', '.')");
  }
  tt_web_ask *a = tt_xcalloc(1, sizeof *a);
  a->w = r->w;
  a->question = tt_xstrdup(q);
  if (json_is_string(tid)) {
    a->thread = tt_xstrdup(json_string_value(tid));
  } else {
    char rnd[9];
    tt_random_hex(rnd, 4);
    a->thread = tt_xasprintf("web-%s", rnd);
  }
  json_decref(body);
  char *run_id = tt_new_run_id();
  snprintf(a->run_id, sizeof a->run_id, "%s", run_id);
  free(run_id);
  const union MHD_ConnectionInfo *ci =
      r->w->mhd->get_connection_info(r->c, MHD_CONNECTION_INFO_CONNECTION_FD);
  /* stopping cancels the question, which still ends its stream with the run */
  a->st = tt_httpd_stream_new(ci ? ci->connect_fd : -1, &a->cancel, NULL,
                              tt_web_ask_free, a);
  tt_httpd_stream_event(a->st, "start", json_pack("{s:s,s:s}", "run_id", a->run_id,
                                                  "thread_id", a->thread));
  struct MHD_Response *resp = tt_httpd_stream_response(r->w->mhd, a->st);
  /* listed before it starts: the worker unlists itself when done */
  pthread_mutex_lock(&r->w->mu);
  bool started = resp && !r->w->stopping;
  if (started) {
    a->next = r->w->asks;
    r->w->asks = a;
  }
  pthread_mutex_unlock(&r->w->mu);
  if (started && !tt_httpd_workers_start(&r->w->workers, tt_web_ask_worker, a)) {
    started = false;
    pthread_mutex_lock(&r->w->mu);
    for (tt_web_ask **p = &r->w->asks; *p; p = &(*p)->next)
      if (*p == a) {
        *p = a->next;
        break;
      }
    pthread_mutex_unlock(&r->w->mu);
  }
  if (!started) {
    if (resp) r->w->mhd->destroy_response(resp); /* drops MHD's reference */
    else tt_httpd_stream_unref(a->st);
    tt_httpd_stream_unref(a->st); /* and the worker's: frees a */
    return tt_web_send_error(r, 503, "cannot start a worker for the question; try again");
  }
  r->w->mhd->add_response_header(resp, "Content-Type", "text/event-stream");
  tt_web_security_headers(r->w, resp, false);
  r->w->mhd->add_response_header(resp, "X-Accel-Buffering", "no");
  enum MHD_Result qr = r->w->mhd->queue_response(r->c, 200, resp);
  r->w->mhd->destroy_response(resp);
  return qr;
}
