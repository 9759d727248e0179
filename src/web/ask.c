/* ask.c — POST /api/ask: one question answered on a thread of its own
 * while its events stream to the page as server-sent events, each the
 * very JSON the trace keeps (docs/reference/events.md, web-api.md). Each
 * question has a session of its own (its own database handle), so
 * questions of several tabs run side by side; the session layer decides
 * from the model's backend whether they share one model. A client that
 * goes away, or the server stopping, cancels the question. */
#include "web/web_internal.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

struct tt_web_ask {
  tt_web *w;
  char *question;
  char *thread;
  bool priv; /* the page's private switch */
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

/* Every event of the question as one server-sent event, named as its
 * "event" and holding the same JSON the trace keeps (docs/reference/events.md). */
static void tt_web_on_event(void *ud, const tt_event *ev, const json_t *json) {
  tt_web_ask *a = ud;
  tt_httpd_stream_event(a->st, tt_event_name(ev->kind), json_deep_copy(json));
}

static void tt_web_ask_error(tt_web_ask *a, const char *what) {
  tt_httpd_stream_event(a->st, "error", json_pack("{s:s}", "error", what));
}

/* ---- the worker ------------------------------------------------------------------- */

static void tt_web_ask_run(tt_web_ask *a) {
  tt_error err;
  /* a session of its own: its database handle, and a model from the
   * service (its own when the backend answers in parallel, else the shared
   * one once it is free: the wait is streamed as a queued event) */
  tt_session *session = tt_session_new(a->w->cfg->svc, NULL, &err);
  if (!session) {
    tt_web_ask_error(a, tt_error_text(&err));
    return;
  }
  tt_chart_files cf = {.both = true}; /* SVG to show, PNG to download */
  const tt_config *c = tt_service_config(a->w->cfg->svc);
  cf.svg = c->chart_svg;
  cf.width = c->chart_w;
  cf.height = c->chart_h;
  tt_session_set_chart_files(session, &cf);
  tt_session_set_run_id(session, a->run_id);
  tt_session_set_private(session, a->priv);
  tt_session_hooks hooks = {.on_event = tt_web_on_event, .ud = a, .cancel = &a->cancel};
  tt_run run;
  tt_ask_result info;
  tt_session_ask(session, a->thread, a->question, &hooks, &run, &info); /* ends with run_end */
  tt_run_free(&run);
  tt_session_free(session);
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
  const json_t *pv = json_object_get(body, "private");
  if (pv && !json_is_boolean(pv)) {
    json_decref(body);
    return tt_web_send_error(r, 400, "\"private\" must be true or false");
  }
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
  a->priv = json_is_true(pv);
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
