/* http.c — the Streamable HTTP transport on libmicrohttpd: one endpoint,
 * /mcp, taking POSTed JSON-RPC. Requests are answered with JSON, or with a
 * server-sent event stream when ask_database has something to send before
 * its result (progress, an elicitation request of a handshake revision);
 * closing that stream cancels the question. initialize opens a session
 * (Mcp-Session-Id) that later requests of the handshake revisions name;
 * 2026-07-28 requests need none. The headers those requests mirror from
 * their body reach the core without the whitespace around them (RFC 9110
 * 5.5), in copies the request owns.
 *
 * Guards: binds to loopback unless told otherwise, checks Host and Origin
 * against DNS rebinding, and requires a bearer token when one is set. The
 * checks run as soon as a request's headers are in, before its body is
 * read: a peer without the token is answered there (401, or 429 when its
 * address has sent too many wrong ones: httpd's guard paces them) and its
 * connection closed. Each connection has its own thread, so requests run
 * concurrently; a connection that has not shown its token within the
 * guard's deadline (10 s from its accept, however it trickles) is closed,
 * as is an authenticated one idle for 120 s; one address holds at most 64
 * connections, 32 of them without the token (httpd.h). A client that goes
 * away cancels its request: streams notice it themselves, and the main
 * thread looks at the sockets of requests answered in one piece every
 * 50 ms. */
#include "mcp/mcp_internal.h"
#include "httpd/httpd.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#define TT_SESSION_IDLE_S 3600
#define TT_SESSIONS_MAX 1000
#define TT_UNAUTHENTICATED_S 10 /* idle limit before the token was shown (and see the guard) */
#define TT_IDLE_S 120           /* an authenticated connection's idle time */
#define TT_WATCH_MS 50

/* A request answered in one piece whose client may go away meanwhile. */
typedef struct tt_watch {
  int fd;
  volatile sig_atomic_t *cancel;
  tt_mcp_conn *conn;      /* a batch's requests are cancelled there by id */
  const json_t *msg;
  bool fired;
  struct tt_watch *next;
} tt_watch;

typedef struct tt_http_session {
  char id[40];
  tt_mcp_conn *conn;
  int refs;
  struct tt_http_session *next;
} tt_http_session;

typedef struct tt_http {
  tt_mcp_server *srv;
  const tt_mhd_api *mhd;
  const tt_mcp_http_opts *o;
  bool loopback;
  pthread_mutex_t mu;
  tt_http_session *sessions;
  size_t nsessions;
  tt_httpd_workers streams; /* the workers of event streams */
  tt_httpd_guard *guard;    /* deadline, caps, pacing of wrong tokens (httpd.h) */
  volatile sig_atomic_t stopping;
  tt_watch *watches;      /* under mu */
} tt_http;

/* What MHD keeps per request while the body arrives. */
typedef tt_httpd_body tt_http_req;

/* ---- sessions ------------------------------------------------------------- */

static void tt_hsession_unref(tt_http *h, tt_http_session *s) {
  if (!s) return;
  pthread_mutex_lock(&h->mu);
  bool gone = --s->refs == 0;
  pthread_mutex_unlock(&h->mu);
  if (gone) tt_mcp_conn_free(s->conn);
  if (gone) free(s);
}

/* Unlinks a session; its memory goes with the last reference. Call with mu. */
static void tt_hsession_unlink(tt_http *h, tt_http_session *s) {
  for (tt_http_session **p = &h->sessions; *p; p = &(*p)->next) {
    if (*p == s) {
      *p = s->next;
      h->nsessions--;
      break;
    }
  }
  tt_mcp_conn_cancel_all(s->conn);
  tt_mcp_conn_close(s->conn);
}

static tt_http_session *tt_hsession_new(tt_http *h) {
  tt_http_session *s = tt_xcalloc(1, sizeof *s);
  tt_random_hex(s->id, 16);
  s->conn = tt_mcp_conn_new();
  s->refs = 2; /* the list and the request that creates it */
  tt_http_session *drop = NULL;
  pthread_mutex_lock(&h->mu);
  /* Forget sessions idle for an hour, and the oldest idle one when full. */
  for (tt_http_session *p = h->sessions, *next; p; p = next) {
    next = p->next;
    if (p->refs == 1 && tt_mcp_conn_idle_s(p->conn) > TT_SESSION_IDLE_S) {
      tt_hsession_unlink(h, p);
      p->next = drop;
      drop = p;
    }
  }
  if (h->nsessions >= TT_SESSIONS_MAX) {
    tt_http_session *oldest = NULL;
    for (tt_http_session *p = h->sessions; p; p = p->next)
      if (p->refs == 1 && (!oldest || tt_mcp_conn_idle_s(p->conn) > tt_mcp_conn_idle_s(oldest->conn)))
        oldest = p;
    if (oldest) {
      tt_hsession_unlink(h, oldest);
      oldest->next = drop;
      drop = oldest;
    }
  }
  s->next = h->sessions;
  h->sessions = s;
  h->nsessions++;
  pthread_mutex_unlock(&h->mu);
  while (drop) {
    tt_http_session *n = drop->next;
    tt_hsession_unref(h, drop);
    drop = n;
  }
  return s;
}

static tt_http_session *tt_hsession_get(tt_http *h, const char *id) {
  tt_http_session *found = NULL;
  pthread_mutex_lock(&h->mu);
  for (tt_http_session *s = h->sessions; s; s = s->next) {
    if (strcmp(s->id, id) == 0) {
      found = s;
      s->refs++;
      break;
    }
  }
  pthread_mutex_unlock(&h->mu);
  if (found) tt_mcp_conn_touch(found->conn);
  return found;
}

/* Ends a session (DELETE, or an initialize that failed). */
static void tt_hsession_end(tt_http *h, tt_http_session *s) {
  pthread_mutex_lock(&h->mu);
  bool listed = false;
  for (tt_http_session *p = h->sessions; p; p = p->next) listed = listed || p == s;
  if (listed) tt_hsession_unlink(h, s);
  pthread_mutex_unlock(&h->mu);
  if (listed) tt_hsession_unref(h, s);
}

/* ---- checks --------------------------------------------------------------------- */

/* DNS rebinding: a page on evil.example resolving to 127.0.0.1 still sends
 * Host: evil.example. */
static bool tt_host_ok(const tt_http *h, const char *host) {
  if (!h->loopback) return true;
  if (!host) return false;
  return tt_host_is_loopback(host, tt_httpd_host_part(host));
}

static bool tt_origin_ok(const tt_http *h, const char *origin) {
  if (!origin) return true; /* not a browser */
  for (size_t i = 0; i < h->o->norigins; i++)
    if (strcmp(origin, h->o->origins[i]) == 0) return true;
  const char *rest = NULL;
  if (strncmp(origin, "http://", 7) == 0) rest = origin + 7;
  else if (strncmp(origin, "https://", 8) == 0) rest = origin + 8;
  if (!rest) return false;
  return tt_host_is_loopback(rest, tt_httpd_host_part(rest));
}

static bool tt_token_needed(const tt_http *h) { return h->o->token && *h->o->token; }

static bool tt_token_ok(const tt_http *h, const char *auth) {
  if (!tt_token_needed(h)) return true;
  if (!auth || strncasecmp(auth, "Bearer ", 7) != 0) return false;
  return tt_httpd_secret_equal(h->o->token, auth + 7);
}

/* Whether a header value mentions what (case-insensitive). */
static bool tt_has_token(const char *header, const char *what) {
  if (!header) return false;
  size_t n = strlen(what);
  for (const char *p = header; *p; p++)
    if (strncasecmp(p, what, n) == 0) return true;
  return false;
}

char *tt_mcp_http_field_value(const char *raw) {
  if (!raw) return NULL;
  while (*raw == ' ' || *raw == '\t') raw++;
  size_t n = strlen(raw);
  while (n && (raw[n - 1] == ' ' || raw[n - 1] == '\t')) n--;
  return tt_xstrndup(raw, n);
}

/* The headers a 2026-07-28 request repeats from its body, trimmed, owned
 * by the request (a stream's worker reads them after MHD has moved on). */
typedef struct tt_http_fields {
  char *version; /* MCP-Protocol-Version */
  char *method;  /* Mcp-Method */
  char *name;    /* Mcp-Name */
} tt_http_fields;

static void tt_http_fields_free(tt_http_fields *f) {
  free(f->version);
  free(f->method);
  free(f->name);
  memset(f, 0, sizeof *f);
}

/* ---- responses --------------------------------------------------------------------- */

static void tt_add_common_headers(tt_http *h, struct MHD_Response *r, const char *origin,
                                  const char *session) {
  if (origin && tt_origin_ok(h, origin)) {
    h->mhd->add_response_header(r, "Access-Control-Allow-Origin", origin);
    h->mhd->add_response_header(r, "Access-Control-Expose-Headers", "Mcp-Session-Id");
    h->mhd->add_response_header(r, "Vary", "Origin");
  }
  if (session) h->mhd->add_response_header(r, "Mcp-Session-Id", session);
}

static enum MHD_Result tt_send(tt_http *h, struct MHD_Connection *c, unsigned status,
                               const char *type, const char *body, size_t len, const char *origin,
                               const char *session, const char *extra_name, const char *extra) {
  struct MHD_Response *r =
      h->mhd->create_response_from_buffer(len, (void *)(body ? body : ""), MHD_RESPMEM_MUST_COPY);
  if (!r) return MHD_NO;
  if (type) h->mhd->add_response_header(r, "Content-Type", type);
  h->mhd->add_response_header(r, "Cache-Control", "no-store");
  if (extra_name) h->mhd->add_response_header(r, extra_name, extra);
  tt_add_common_headers(h, r, origin, session);
  enum MHD_Result ret = h->mhd->queue_response(c, status, r);
  h->mhd->destroy_response(r);
  return ret;
}

static enum MHD_Result tt_send_json(tt_http *h, struct MHD_Connection *c, unsigned status,
                                    json_t *msg, const char *origin, const char *session) {
  tt_buf b = TT_BUF_INIT;
  tt_rpc_dump(&b, msg);
  json_decref(msg);
  enum MHD_Result r = tt_send(h, c, status, "application/json", b.data, b.len, origin, session,
                              NULL, NULL);
  tt_buf_free(&b);
  return r;
}

static enum MHD_Result tt_send_error(tt_http *h, struct MHD_Connection *c, unsigned status,
                                     int code, const char *message, const char *origin) {
  return tt_send_json(h, c, status, tt_rpc_error(NULL, code, message, NULL), origin, NULL);
}

/* ---- event streams ------------------------------------------------------------------- */

/* A request answered as an event stream (util: tt_httpd_stream): what the
 * worker needs, freed with the stream. */
typedef struct tt_sse {
  tt_http *h;
  tt_httpd_stream *st;
  tt_mcp_call call;
  tt_http_fields fields;  /* what call's header pointers point into */
  json_t *msg;
  tt_http_session *session;
} tt_sse;

static void tt_sse_free(void *ud) {
  tt_sse *s = ud;
  tt_http_fields_free(&s->fields);
  free(s);
}

static bool tt_sse_send(void *ud, const json_t *msg) {
  tt_sse *s = ud;
  if (s->call.cancel) return false;
  tt_buf line = TT_BUF_INIT;
  tt_buf_puts(&line, "event: message\ndata: ");
  tt_rpc_dump(&line, msg);
  tt_buf_puts(&line, "\n\n");
  bool open = tt_httpd_stream_push(s->st, line.data, line.len);
  tt_buf_free(&line);
  return open;
}

static void *tt_sse_worker(void *arg) {
  tt_sse *s = arg;
  tt_http *h = s->h;
  const json_t *id = json_object_get(s->msg, "id");
  tt_inflight *tracked = s->session ? tt_mcp_conn_track(s->session->conn, id, &s->call.cancel) : NULL;
  json_t *reply = tt_mcp_handle(h->srv, &s->call, s->msg);
  if (reply && !s->call.no_reply) tt_sse_send(s, reply);
  json_decref(reply);
  if (s->session) tt_mcp_conn_untrack(s->session->conn, tracked);
  tt_hsession_unref(h, s->session);
  json_decref(s->msg);
  tt_httpd_stream_finish(s->st); /* may free s */
  tt_httpd_workers_done(&h->streams);
  return NULL;
}

/* ---- POST ------------------------------------------------------------------------------ */

static const char *tt_header(tt_http *h, struct MHD_Connection *c, const char *name) {
  return h->mhd->lookup_connection_value(c, MHD_HEADER_KIND, name);
}

static bool tt_is_method(const json_t *msg, const char *method) {
  const char *m = json_string_value(json_object_get(msg, "method"));
  return m && strcmp(m, method) == 0 && json_object_get(msg, "id");
}

/* ask_database is the one request with something to say before its
 * result: progress, and the question of a handshake revision. */
static bool tt_wants_stream(tt_http *h, struct MHD_Connection *c, const json_t *msg) {
  if (!tt_has_token(tt_header(h, c, "Accept"), "text/event-stream")) return false;
  if (!tt_is_method(msg, "tools/call")) return false;
  const char *name = json_string_value(json_object_get(json_object_get(msg, "params"), "name"));
  return name && strcmp(name, "ask_database") == 0;
}

/* ask_database with an event stream: checks the envelope first (so an
 * error can still choose its status), then runs the request on a worker
 * while MHD streams what it sends. Takes msg, the session reference and
 * the fields (emptied). */
static enum MHD_Result tt_post_stream(tt_http *h, struct MHD_Connection *c, json_t *msg,
                                      tt_http_session *session, tt_http_fields *fields,
                                      const char *origin) {
  tt_mcp_call call = {.conn = session ? session->conn : NULL, .http = true,
                      .header_version = fields->version, .header_method = fields->method,
                      .header_name = fields->name};
  json_t *bad = tt_mcp_precheck(h->srv, &call, msg);
  if (bad) {
    tt_http_fields_free(fields);
    tt_hsession_unref(h, session);
    json_decref(msg);
    return tt_send_json(h, c, (unsigned)call.http_status, bad, origin, NULL);
  }
  tt_sse *s = tt_xcalloc(1, sizeof *s);
  s->h = h;
  s->fields = *fields; /* call's header pointers stay valid: the strings move */
  memset(fields, 0, sizeof *fields);
  s->call = call;
  const union MHD_ConnectionInfo *ci =
      h->mhd->get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
  /* closing the stream (or the server stopping) cancels the request */
  s->st = tt_httpd_stream_new(ci ? ci->connect_fd : -1, &s->call.cancel, &h->stopping, tt_sse_free, s);
  s->call.send = tt_sse_send;
  s->call.send_ud = s;
  s->msg = msg;
  s->session = session;
  struct MHD_Response *r = tt_httpd_stream_response(h->mhd, s->st);
  bool started = r && tt_httpd_workers_start(&h->streams, tt_sse_worker, s);
  if (!started) {
    tt_httpd_stream *st = s->st;
    if (r) h->mhd->destroy_response(r); /* drops the stream's MHD reference */
    else tt_httpd_stream_unref(st);
    tt_httpd_stream_unref(st); /* and the worker's: frees s */
    tt_hsession_unref(h, session);
    json_decref(msg);
    return tt_send_error(h, c, 503, TT_RPC_INTERNAL_ERROR,
                         "Service Unavailable: cannot start a worker; try again", origin);
  }
  h->mhd->add_response_header(r, "Content-Type", "text/event-stream");
  h->mhd->add_response_header(r, "Cache-Control", "no-cache");
  h->mhd->add_response_header(r, "X-Accel-Buffering", "no");
  tt_add_common_headers(h, r, origin, NULL);
  enum MHD_Result ret = h->mhd->queue_response(c, 200, r);
  h->mhd->destroy_response(r);
  return ret;
}

static void tt_watch_add(tt_http *h, tt_watch *w) {
  if (w->fd < 0) return;
  pthread_mutex_lock(&h->mu);
  w->next = h->watches;
  h->watches = w;
  pthread_mutex_unlock(&h->mu);
}

static void tt_watch_remove(tt_http *h, tt_watch *w) {
  if (w->fd < 0) return;
  pthread_mutex_lock(&h->mu);
  for (tt_watch **p = &h->watches; *p; p = &(*p)->next)
    if (*p == w) {
      *p = w->next;
      break;
    }
  pthread_mutex_unlock(&h->mu);
}

/* A request whose client has gone is cancelled: the query it runs stops
 * (and a batch's requests, each by its id). */
static void tt_watch_check(tt_http *h) {
  pthread_mutex_lock(&h->mu);
  for (tt_watch *w = h->watches; w; w = w->next) {
    if (w->fired || !tt_httpd_peer_gone(w->fd)) continue;
    w->fired = true;
    *w->cancel = 1;
    size_t i;
    const json_t *item;
    if (w->conn && json_is_array(w->msg))
      json_array_foreach(w->msg, i, item) {
        const json_t *id = json_object_get(item, "id");
        if (id) tt_mcp_conn_cancel(w->conn, id);
      }
  }
  pthread_mutex_unlock(&h->mu);
}

static enum MHD_Result tt_post(tt_http *h, struct MHD_Connection *c, tt_http_req *rq,
                               const char *origin) {
  const char *ctype = tt_header(h, c, "Content-Type");
  if (!ctype || strncasecmp(ctype, "application/json", 16) != 0)
    return tt_send_error(h, c, 415, TT_RPC_INVALID_REQUEST,
                         "Unsupported Media Type: send the JSON-RPC message with Content-Type: "
                         "application/json",
                         origin);
  const char *accept = tt_header(h, c, "Accept");
  if (accept && !tt_has_token(accept, "application/json") &&
      !tt_has_token(accept, "text/event-stream") && !tt_has_token(accept, "*/*") &&
      !tt_has_token(accept, "application/*"))
    return tt_send_error(h, c, 406, TT_RPC_INVALID_REQUEST,
                         "Not Acceptable: accept application/json and text/event-stream", origin);
  json_error_t e;
  json_t *msg = tt_mcp_load(rq->data.data ? rq->data.data : "", rq->data.len, &e);
  if (!msg) return tt_send_json(h, c, 400, tt_mcp_parse_error(&e), origin, NULL);

  const char *sid = tt_header(h, c, "Mcp-Session-Id");
  bool modern = tt_mcp_is_modern(msg);
  tt_http_session *session = NULL;
  bool created = false;
  if (sid && !modern) {
    session = tt_hsession_get(h, sid);
    if (!session) {
      json_decref(msg);
      return tt_send_error(h, c, 404, -32001,
                           "Session not found: it ended or the server restarted; send "
                           "initialize again without Mcp-Session-Id",
                           origin);
    }
  } else if (!modern && tt_is_method(msg, "initialize")) {
    session = tt_hsession_new(h);
    created = true;
  }
  tt_http_fields fields = {
      .version = tt_mcp_http_field_value(tt_header(h, c, "MCP-Protocol-Version")),
      .method = tt_mcp_http_field_value(tt_header(h, c, "Mcp-Method")),
      .name = tt_mcp_http_field_value(tt_header(h, c, "Mcp-Name")),
  };
  if (tt_wants_stream(h, c, msg)) return tt_post_stream(h, c, msg, session, &fields, origin);
  tt_mcp_call call = {.conn = session ? session->conn : NULL, .http = true,
                      .header_version = fields.version, .header_method = fields.method,
                      .header_name = fields.name};
  const json_t *id = json_is_object(msg) ? json_object_get(msg, "id") : NULL;
  bool track = session && id && json_object_get(msg, "method");
  tt_inflight *tracked = track ? tt_mcp_conn_track(session->conn, id, &call.cancel) : NULL;
  const union MHD_ConnectionInfo *ci = h->mhd->get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
  tt_watch watch = {.fd = ci ? ci->connect_fd : -1, .cancel = &call.cancel,
                    .conn = session ? session->conn : NULL, .msg = msg};
  tt_watch_add(h, &watch);
  json_t *reply = tt_mcp_handle(h->srv, &call, msg);
  tt_watch_remove(h, &watch);
  if (track) tt_mcp_conn_untrack(session->conn, tracked);
  bool init_ok = created && reply && json_object_get(reply, "result");
  if (created && !init_ok) tt_hsession_end(h, session);
  char sid_copy[40] = "";
  if (init_ok) snprintf(sid_copy, sizeof sid_copy, "%s", session->id);
  tt_hsession_unref(h, session);
  json_decref(msg);
  tt_http_fields_free(&fields);
  if (!reply || call.no_reply)
    return tt_send(h, c, 202, NULL, NULL, 0, origin, NULL, NULL, NULL);
  return tt_send_json(h, c, (unsigned)call.http_status, reply, origin, init_ok ? sid_copy : NULL);
}

static enum MHD_Result tt_delete(tt_http *h, struct MHD_Connection *c, const char *origin) {
  const char *sid = tt_header(h, c, "Mcp-Session-Id");
  if (!sid)
    return tt_send_error(h, c, 400, TT_RPC_INVALID_REQUEST,
                         "Bad Request: DELETE ends a session; name it with Mcp-Session-Id", origin);
  tt_http_session *s = tt_hsession_get(h, sid);
  if (!s) return tt_send_error(h, c, 404, -32001, "Session not found", origin);
  tt_hsession_end(h, s);
  tt_hsession_unref(h, s);
  return tt_send(h, c, 200, NULL, NULL, 0, origin, NULL, NULL, NULL);
}

/* 401 without the token (or with a wrong one: wrong), 429 once the
 * address has sent too many wrong ones. */
static enum MHD_Result tt_unauthorized(tt_http *h, struct MHD_Connection *c, const char *origin,
                                       bool wrong) {
  unsigned retry_s = 0;
  unsigned status = wrong ? tt_httpd_guard_failed(h->guard, c, &retry_s) : 401;
  tt_buf msg = TT_BUF_INIT;
  if (status == 429)
    tt_buf_printf(&msg, "Too Many Requests: too many wrong tokens from this address; wait %u s, "
                        "then send Authorization: Bearer <the TABLETALK_MCP_TOKEN of the server>",
                  retry_s);
  else
    tt_buf_puts(&msg, "Unauthorized: send Authorization: Bearer <the TABLETALK_MCP_TOKEN of the "
                      "server>");
  json_t *e = tt_rpc_error(NULL, TT_RPC_INVALID_REQUEST, tt_buf_cstr(&msg), NULL);
  tt_buf_free(&msg);
  tt_buf b = TT_BUF_INIT;
  tt_rpc_dump(&b, e);
  json_decref(e);
  char retry[16];
  snprintf(retry, sizeof retry, "%u", retry_s);
  enum MHD_Result r =
      status == 429
          ? tt_send(h, c, 429, "application/json", b.data, b.len, origin, NULL, "Retry-After", retry)
          : tt_send(h, c, 401, "application/json", b.data, b.len, origin, NULL, "WWW-Authenticate",
                    "Bearer realm=\"tabletalk\"");
  tt_buf_free(&b);
  return r;
}

static enum MHD_Result tt_preflight(tt_http *h, struct MHD_Connection *c, const char *origin) {
  struct MHD_Response *r = h->mhd->create_response_from_buffer(0, (void *)"", MHD_RESPMEM_PERSISTENT);
  if (!r) return MHD_NO;
  h->mhd->add_response_header(r, "Access-Control-Allow-Methods", "POST, DELETE, OPTIONS");
  h->mhd->add_response_header(r, "Access-Control-Allow-Headers",
                              "Content-Type, Accept, Authorization, Mcp-Session-Id, "
                              "MCP-Protocol-Version, Mcp-Method, Mcp-Name, Last-Event-ID");
  h->mhd->add_response_header(r, "Access-Control-Max-Age", "600");
  tt_add_common_headers(h, r, origin, NULL);
  enum MHD_Result ret = h->mhd->queue_response(c, 204, r);
  h->mhd->destroy_response(r);
  return ret;
}

/* The first call of a request: its headers are in, none of its body has
 * been read. The path, Host, Origin and token are checked here, so a peer
 * without the token is answered (and its connection closed, since MHD then
 * reads no body) before it can send one, and the connection of one with
 * the token (or of anyone, when the server has none) is admitted by the
 * guard. A presented token first waits if its address has sent too many
 * wrong ones. true: go on receiving; false with *ret once answered. */
static bool tt_gate(tt_http *h, struct MHD_Connection *c, const char *url, const char *method,
                    enum MHD_Result *ret) {
  const char *origin = tt_header(h, c, "Origin");
  if (strcmp(url, "/mcp") != 0 && strcmp(url, "/mcp/") != 0) {
    static const char msg[] = "Not Found: the MCP endpoint is /mcp\n";
    *ret = tt_send(h, c, 404, "text/plain; charset=utf-8", msg, sizeof msg - 1, NULL, NULL, NULL,
                   NULL);
    return false;
  }
  if (!tt_host_ok(h, tt_header(h, c, "Host"))) {
    *ret = tt_send_error(h, c, 403, TT_RPC_INVALID_REQUEST,
                         "Forbidden: the Host header must name this machine (localhost, "
                         "127.0.0.1 or [::1])",
                         NULL);
    return false;
  }
  if (!tt_origin_ok(h, origin)) {
    *ret = tt_send_error(h, c, 403, TT_RPC_INVALID_REQUEST,
                         "Forbidden: requests from this Origin are not allowed (serve-mcp "
                         "--allow-origin adds one)",
                         NULL);
    return false;
  }
  if (strcmp(method, "OPTIONS") == 0) {
    *ret = tt_preflight(h, c, origin);
    return false;
  }
  const char *auth = tt_header(h, c, "Authorization");
  bool presented = tt_token_needed(h) && auth;
  if (presented && !tt_httpd_guard_pace(h->guard, c)) {
    *ret = MHD_NO; /* it went while it waited */
    return false;
  }
  if (!tt_token_ok(h, auth)) {
    *ret = tt_unauthorized(h, c, origin, presented);
    return false;
  }
  tt_httpd_guard_admit(h->guard, c, presented);
  /* the token was shown: this connection may now idle longer */
  h->mhd->set_connection_option(c, MHD_CONNECTION_OPTION_TIMEOUT, (unsigned)TT_IDLE_S);
  if (tt_httpd_declared_too_large(h->mhd, c, tt_mcp_max_message(h->srv))) {
    const char *cl = h->mhd->lookup_connection_value(c, MHD_HEADER_KIND, "Content-Length");
    unsigned long long n = cl ? strtoull(cl, NULL, 10) : 0;
    *ret = tt_send_json(h, c, 413, tt_mcp_too_large(h->srv, (size_t)n), origin, NULL);
    return false;
  }
  return true;
}

/* The last call: the request passed the gate and its body is in. */
static enum MHD_Result tt_serve(tt_http *h, struct MHD_Connection *c, const char *method,
                                tt_http_req *rq) {
  const char *origin = tt_header(h, c, "Origin");
  if (strcmp(method, "POST") == 0) return tt_post(h, c, rq, origin);
  if (strcmp(method, "DELETE") == 0) return tt_delete(h, c, origin);
  static const char msg[] =
      "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32600,\"message\":\"Method Not "
      "Allowed: POST JSON-RPC messages to /mcp (this server opens no GET stream)\"}}";
  return tt_send(h, c, 405, "application/json", msg, sizeof msg - 1, origin, NULL, "Allow",
                 "POST, DELETE, OPTIONS");
}

static enum MHD_Result tt_access(void *cls, struct MHD_Connection *c, const char *url,
                                 const char *method, const char *version, const char *upload,
                                 size_t *upload_size, void **con_cls) {
  (void)version;
  tt_http *h = cls;
  enum MHD_Result ret;
  if (!*con_cls && !tt_gate(h, c, url, method, &ret)) return ret;
  tt_http_req *rq = tt_httpd_body_collect(con_cls, upload, upload_size, tt_mcp_max_message(h->srv));
  if (!rq) return MHD_YES;
  if (rq->too_large) { /* a chunked body, counted as it came */
    tt_buf b = TT_BUF_INIT;
    json_t *e = tt_mcp_too_large(h->srv, rq->received);
    tt_rpc_dump(&b, e);
    json_decref(e);
    enum MHD_Result r = tt_httpd_body_refuse(h->guard, c, rq, b.data, b.len);
    tt_buf_free(&b);
    return r;
  }
  return tt_serve(h, c, method, rq);
}

/* The body of an error the guard answers itself (httpd.h): a JSON-RPC
 * error without an id, as for any message that cannot be read. */
static void tt_error_body(void *ud, unsigned status, const char *message, tt_buf *out) {
  (void)ud;
  (void)status;
  json_t *e = tt_rpc_error(NULL, TT_RPC_INVALID_REQUEST, message, NULL);
  tt_rpc_dump(out, e);
  json_decref(e);
}

/* ---- the server ---------------------------------------------------------------------------- */

int tt_mcp_serve_http(tt_mcp_server *s, const tt_mcp_http_opts *o, volatile sig_atomic_t *stop,
                      tt_error *err) {
  if (o->token && *o->token && !tt_httpd_token_check(o->token, "TABLETALK_MCP_TOKEN", err))
    return 1;
  const tt_mhd_api *mhd = tt_mhd_api_get(err);
  if (!mhd) return 1;
  tt_httpd_guard *guard = tt_httpd_guard_new(mhd, tt_error_body, NULL, err);
  if (!guard) return 1;
  tt_http h;
  memset(&h, 0, sizeof h);
  h.srv = s;
  h.mhd = mhd;
  h.o = o;
  h.guard = guard;
  pthread_mutex_init(&h.mu, NULL);
  tt_httpd_workers_init(&h.streams);
  tt_httpd_bound bound;
  struct MHD_Daemon *d = tt_httpd_start(mhd, guard, o->host, o->port, tt_access, &h,
                                        tt_httpd_body_done, (unsigned)TT_UNAUTHENTICATED_S, &bound,
                                        err);
  if (!d) {
    tt_httpd_workers_finish(&h.streams);
    pthread_mutex_destroy(&h.mu);
    tt_httpd_guard_free(guard);
    return 1;
  }
  h.loopback = bound.loopback;
  if (o->on_listen) {
    tt_buf url = TT_BUF_INIT;
    tt_httpd_base_url(&bound, &url);
    tt_buf_puts(&url, "/mcp");
    o->on_listen(o->ud, tt_buf_cstr(&url));
    tt_buf_free(&url);
  }
  while (!*stop) {
    struct timespec ts = {0, TT_WATCH_MS * 1000000L};
    nanosleep(&ts, NULL);
    tt_watch_check(&h);
    tt_httpd_guard_sweep(guard);
  }
  /* Stop: streams see `stopping` and cancel their questions; sessions
   * cancel what they have in flight. */
  h.stopping = 1;
  pthread_mutex_lock(&h.mu);
  for (tt_http_session *p = h.sessions; p; p = p->next) tt_mcp_conn_cancel_all(p->conn);
  pthread_mutex_unlock(&h.mu);
  mhd->stop_daemon(d);
  tt_httpd_guard_free(guard);
  tt_httpd_workers_finish(&h.streams);
  while (h.sessions) {
    tt_http_session *n = h.sessions->next;
    tt_mcp_conn_free(h.sessions->conn);
    free(h.sessions);
    h.sessions = n;
  }
  pthread_mutex_destroy(&h.mu);
  return 0;
}
