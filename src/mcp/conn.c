/* conn.c — the state of one stdio connection or one HTTP session of a
 * handshake revision: what initialize negotiated, which requests are in
 * flight (so notifications/cancelled can stop them), and the server's own
 * requests (elicitation/create) waiting for the client's response. */
#include "mcp/mcp_internal.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

struct tt_inflight {
  char *key;
  volatile sig_atomic_t *flag;
  struct tt_inflight *prev, *next;
};

typedef struct tt_waiter {
  char *key;
  json_t *response;        /* set when the client answered */
  struct tt_waiter *next;
} tt_waiter;

struct tt_mcp_conn {
  pthread_mutex_t mu;
  pthread_cond_t cv;
  char version[16];         /* "" until initialize */
  json_t *caps;
  tt_inflight *inflight;
  tt_waiter *waiters;
  long next_id;
  bool closed;
  double last_used_ms;
};

tt_mcp_conn *tt_mcp_conn_new(void) {
  tt_mcp_conn *c = tt_xcalloc(1, sizeof *c);
  pthread_mutex_init(&c->mu, NULL);
  pthread_condattr_t ca;
  pthread_condattr_init(&ca);
  pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
  pthread_cond_init(&c->cv, &ca);
  pthread_condattr_destroy(&ca);
  c->caps = json_object();
  c->last_used_ms = tt_now_ms();
  return c;
}

void tt_mcp_conn_free(tt_mcp_conn *c) {
  if (!c) return;
  while (c->inflight) {
    tt_inflight *n = c->inflight->next;
    free(c->inflight->key);
    free(c->inflight);
    c->inflight = n;
  }
  json_decref(c->caps);
  pthread_cond_destroy(&c->cv);
  pthread_mutex_destroy(&c->mu);
  free(c);
}

void tt_mcp_conn_set_legacy(tt_mcp_conn *c, const char *version, const json_t *caps) {
  pthread_mutex_lock(&c->mu);
  snprintf(c->version, sizeof c->version, "%s", version);
  json_decref(c->caps);
  c->caps = json_is_object(caps) ? json_deep_copy(caps) : json_object();
  pthread_mutex_unlock(&c->mu);
}

bool tt_mcp_conn_legacy(tt_mcp_conn *c, char version[16], json_t **caps) {
  pthread_mutex_lock(&c->mu);
  bool ok = c->version[0] != '\0';
  memcpy(version, c->version, 16);
  *caps = json_incref(c->caps);
  pthread_mutex_unlock(&c->mu);
  return ok;
}

tt_inflight *tt_mcp_conn_track(tt_mcp_conn *c, const json_t *id, volatile sig_atomic_t *flag) {
  tt_inflight *f = tt_xcalloc(1, sizeof *f);
  f->key = tt_rpc_id_key(id);
  f->flag = flag;
  pthread_mutex_lock(&c->mu);
  f->next = c->inflight;
  if (c->inflight) c->inflight->prev = f;
  c->inflight = f;
  c->last_used_ms = tt_now_ms();
  pthread_mutex_unlock(&c->mu);
  return f;
}

void tt_mcp_conn_untrack(tt_mcp_conn *c, tt_inflight *f) {
  if (!f) return;
  pthread_mutex_lock(&c->mu);
  if (f->prev) f->prev->next = f->next;
  else c->inflight = f->next;
  if (f->next) f->next->prev = f->prev;
  c->last_used_ms = tt_now_ms();
  pthread_mutex_unlock(&c->mu);
  free(f->key);
  free(f);
}

bool tt_mcp_conn_cancel(tt_mcp_conn *c, const json_t *id) {
  char *key = tt_rpc_id_key(id);
  bool found = false;
  pthread_mutex_lock(&c->mu);
  for (tt_inflight *f = c->inflight; f; f = f->next) {
    if (strcmp(f->key, key) == 0) {
      *f->flag = 1;
      found = true;
    }
  }
  /* A request waiting for the client's answer notices at once. */
  pthread_cond_broadcast(&c->cv);
  pthread_mutex_unlock(&c->mu);
  free(key);
  return found;
}

void tt_mcp_conn_cancel_all(tt_mcp_conn *c) {
  pthread_mutex_lock(&c->mu);
  for (tt_inflight *f = c->inflight; f; f = f->next) *f->flag = 1;
  pthread_cond_broadcast(&c->cv);
  pthread_mutex_unlock(&c->mu);
}

static struct timespec tt_deadline_in(double ms) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  long long ns = (long long)ts.tv_nsec + (long long)(ms * 1e6);
  ts.tv_sec += (time_t)(ns / 1000000000LL);
  ts.tv_nsec = (long)(ns % 1000000000LL);
  return ts;
}

json_t *tt_mcp_conn_request(tt_mcp_conn *c, tt_mcp_call *call, const char *method,
                            json_t *params, double timeout_ms, tt_error *err) {
  if (!call->send) {
    json_decref(params);
    tt_error_set(err, TT_ERR_PROTOCOL, "this transport cannot send requests to the client");
    return NULL;
  }
  pthread_mutex_lock(&c->mu);
  long n = ++c->next_id;
  pthread_mutex_unlock(&c->mu);
  /* Our ids are strings that no client-side counter produces. */
  char idtext[48];
  snprintf(idtext, sizeof idtext, "tabletalk-%ld", n);
  json_t *id = json_string(idtext);
  tt_waiter *w = tt_xcalloc(1, sizeof *w);
  w->key = tt_rpc_id_key(id);
  pthread_mutex_lock(&c->mu);
  w->next = c->waiters;
  c->waiters = w;
  pthread_mutex_unlock(&c->mu);

  json_t *req = json_pack("{s:s, s:O, s:s, s:o}", "jsonrpc", "2.0", "id", id, "method", method,
                          "params", params);
  bool sent = call->send(call->send_ud, req);
  json_decref(req);
  json_decref(id);

  json_t *response = NULL;
  pthread_mutex_lock(&c->mu);
  /* Waits in slices: an HTTP transport sets call->cancel without
   * signalling this connection. */
  double end = tt_now_ms() + timeout_ms;
  while (sent && !w->response && !call->cancel && !c->closed) {
    double left = end - tt_now_ms();
    if (left <= 0) break;
    struct timespec slice = tt_deadline_in(left < 250 ? left : 250);
    pthread_cond_timedwait(&c->cv, &c->mu, &slice);
  }
  for (tt_waiter **p = &c->waiters; *p; p = &(*p)->next) {
    if (*p == w) {
      *p = w->next;
      break;
    }
  }
  bool closed = c->closed;
  pthread_mutex_unlock(&c->mu);
  response = w->response;
  free(w->key);
  free(w);

  if (!sent) {
    tt_error_set(err, TT_ERR_IO, "the request could not be sent to the client");
  } else if (!response) {
    if (call->cancel) tt_error_set(err, TT_ERR_CANCELLED, "the request was cancelled");
    else if (closed) tt_error_set(err, TT_ERR_IO, "the client went away before answering");
    else tt_error_set(err, TT_ERR_TIMEOUT, "the client did not answer %s within %.0f s", method, timeout_ms / 1000);
    return NULL;
  }
  if (!response) return NULL;
  json_t *result = json_object_get(response, "result");
  if (!result) {
    const json_t *e = json_object_get(response, "error");
    const char *m = json_string_value(json_object_get(e, "message"));
    tt_error_set(err, TT_ERR_PROTOCOL, "the client answered %s with an error: %s", method, m ? m : "(no message)");
    json_decref(response);
    return NULL;
  }
  json_incref(result);
  json_decref(response);
  return result;
}

bool tt_mcp_conn_deliver(tt_mcp_conn *c, const json_t *response) {
  char *key = tt_rpc_id_key(json_object_get(response, "id"));
  bool found = false;
  pthread_mutex_lock(&c->mu);
  for (tt_waiter *w = c->waiters; w; w = w->next) {
    if (!w->response && strcmp(w->key, key) == 0) {
      w->response = json_deep_copy(response);
      found = true;
      break;
    }
  }
  if (found) pthread_cond_broadcast(&c->cv);
  pthread_mutex_unlock(&c->mu);
  free(key);
  return found;
}

void tt_mcp_conn_close(tt_mcp_conn *c) {
  pthread_mutex_lock(&c->mu);
  c->closed = true;
  pthread_cond_broadcast(&c->cv);
  pthread_mutex_unlock(&c->mu);
}

double tt_mcp_conn_idle_s(tt_mcp_conn *c) {
  pthread_mutex_lock(&c->mu);
  double idle = (tt_now_ms() - c->last_used_ms) / 1000.0;
  bool busy = c->inflight != NULL;
  pthread_mutex_unlock(&c->mu);
  return busy ? 0 : idle;
}

void tt_mcp_conn_touch(tt_mcp_conn *c) {
  pthread_mutex_lock(&c->mu);
  c->last_used_ms = tt_now_ms();
  pthread_mutex_unlock(&c->mu);
}
