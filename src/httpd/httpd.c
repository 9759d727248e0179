/* httpd.c — the parts of an HTTP server on libmicrohttpd that serve-mcp
 * --http and tabletalk web share (see httpd.h): binding, checks, and the
 * event stream a worker fills. */
#define _GNU_SOURCE /* POLLRDHUP: a client that closed its stream is seen at once */
#include "httpd/httpd.h"

#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define TT_KEEPALIVE_MS 15000

/* ---- listening ------------------------------------------------------------ */

static void tt_httpd_log(void *cls, const char *fmt, va_list ap) TT_PRINTF(2, 0);
static void tt_httpd_log(void *cls, const char *fmt, va_list ap) {
  (void)cls;
  tt_buf b = TT_BUF_INIT;
  tt_buf_vprintf(&b, fmt, ap);
  /* a client that went away mid-stream (a closed tab) is no news */
  if (strstr(tt_buf_cstr(&b), "application error generating response")) {
    tt_buf_free(&b);
    return;
  }
  fprintf(stderr, "tabletalk: http: %s%s", tt_buf_cstr(&b),
          b.len && b.data[b.len - 1] == '\n' ? "" : "\n");
  tt_buf_free(&b);
}

struct MHD_Daemon *tt_httpd_start(const tt_mhd_api *mhd, const char *host, int port,
                                  MHD_AccessHandlerCallback access, void *cls,
                                  MHD_RequestCompletedCallback completed, unsigned timeout_s,
                                  tt_httpd_bound *out, tt_error *err) {
  memset(out, 0, sizeof *out);
  if (!host || !*host) host = "127.0.0.1";
  size_t hl = strlen(host);
  if (hl >= 2 && host[0] == '[' && host[hl - 1] == ']' && hl - 2 < sizeof out->host)
    snprintf(out->host, sizeof out->host, "%.*s", (int)(hl - 2), host + 1);
  else
    snprintf(out->host, sizeof out->host, "%s", host);
  char portstr[16];
  snprintf(portstr, sizeof portstr, "%d", port);
  struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM,
                           .ai_flags = AI_PASSIVE | AI_NUMERICSERV};
  struct addrinfo *ai = NULL;
  int gai = getaddrinfo(out->host, portstr, &hints, &ai);
  if (gai != 0 || !ai) {
    tt_error_set(err, TT_ERR_IO, "cannot use the address %s: %s", out->host, gai_strerror(gai));
    return NULL;
  }
  out->v6 = ai->ai_family == AF_INET6;
  if (out->v6) {
    const struct sockaddr_in6 *a = (const struct sockaddr_in6 *)(const void *)ai->ai_addr;
    out->loopback = IN6_IS_ADDR_LOOPBACK(&a->sin6_addr);
  } else {
    const struct sockaddr_in *a = (const struct sockaddr_in *)(const void *)ai->ai_addr;
    out->loopback = (ntohl(a->sin_addr.s_addr) >> 24) == 127;
  }
  unsigned flags = MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_POLL |
                   MHD_USE_ERROR_LOG | (out->v6 ? MHD_USE_IPv6 : 0);
  struct MHD_Daemon *d = mhd->start_daemon(
      flags, (uint16_t)port, NULL, NULL, access, cls, MHD_OPTION_EXTERNAL_LOGGER, tt_httpd_log,
      NULL, MHD_OPTION_SOCK_ADDR, ai->ai_addr, MHD_OPTION_NOTIFY_COMPLETED, completed, cls,
      MHD_OPTION_CONNECTION_LIMIT, (unsigned)256, MHD_OPTION_PER_IP_CONNECTION_LIMIT, (unsigned)64,
      MHD_OPTION_CONNECTION_TIMEOUT, timeout_s, MHD_OPTION_END);
  freeaddrinfo(ai);
  if (!d) {
    tt_error_set(err, TT_ERR_IO, "cannot listen on %s port %d (in use, or not an address of this machine)",
                  out->host, port);
    return NULL;
  }
  const union MHD_DaemonInfo *di = mhd->get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT);
  out->port = di ? di->port : port;
  return d;
}

void tt_httpd_base_url(const tt_httpd_bound *b, tt_buf *out) {
  tt_buf_printf(out, b->v6 ? "http://[%s]:%d" : "http://%s:%d", b->host, b->port);
}

/* ---- checks ----------------------------------------------------------------- */

size_t tt_httpd_host_part(const char *s) {
  if (*s == '[') {
    const char *e = strchr(s, ']');
    return e ? (size_t)(e - s + 1) : strlen(s);
  }
  const char *colon = strchr(s, ':');
  return colon ? (size_t)(colon - s) : strlen(s);
}

bool tt_httpd_secret_equal(const char *want, const char *given) {
  if (!want || !given) return false;
  size_t n = strlen(want), m = strlen(given);
  unsigned diff = (unsigned)(n ^ m);
  for (size_t i = 0; i < n; i++) diff |= (unsigned)(want[i] ^ (i < m ? given[i] : 0));
  return diff == 0;
}

bool tt_httpd_peer_gone(int fd) {
  if (fd < 0) return false;
#ifdef POLLRDHUP
  short ev = POLLRDHUP;
#else
  short ev = 0;
#endif
  struct pollfd p = {.fd = fd, .events = ev};
  return poll(&p, 1, 0) > 0 && (p.revents & (ev | POLLHUP | POLLERR | POLLNVAL));
}

/* ---- event streams ------------------------------------------------------------ */

struct tt_httpd_stream {
  pthread_mutex_t mu;
  pthread_cond_t cv;
  tt_buf pending; /* bytes not yet handed to MHD */
  size_t off;
  bool done;      /* the worker has finished */
  bool gone;      /* the client has gone */
  int refs;
  int fd;
  double last_ms;
  volatile sig_atomic_t *cancel, *stopping;
  void (*on_free)(void *ud);
  void *ud;
};

tt_httpd_stream *tt_httpd_stream_new(int fd, volatile sig_atomic_t *cancel,
                                     volatile sig_atomic_t *stopping, void (*on_free)(void *ud),
                                     void *ud) {
  tt_httpd_stream *s = tt_xcalloc(1, sizeof *s);
  pthread_mutex_init(&s->mu, NULL);
  pthread_cond_init(&s->cv, NULL);
  s->refs = 2;
  s->fd = fd;
  s->last_ms = tt_now_ms();
  s->cancel = cancel;
  s->stopping = stopping;
  s->on_free = on_free;
  s->ud = ud;
  return s;
}

void tt_httpd_stream_unref(tt_httpd_stream *s) {
  pthread_mutex_lock(&s->mu);
  bool last = --s->refs == 0;
  pthread_mutex_unlock(&s->mu);
  if (!last) return;
  if (s->on_free) s->on_free(s->ud);
  tt_buf_free(&s->pending);
  pthread_cond_destroy(&s->cv);
  pthread_mutex_destroy(&s->mu);
  free(s);
}

static ssize_t tt_httpd_stream_read(void *cls, uint64_t pos, char *buf, size_t max) {
  (void)pos;
  tt_httpd_stream *s = cls;
  pthread_mutex_lock(&s->mu);
  for (;;) {
    if (s->off < s->pending.len) {
      size_t n = s->pending.len - s->off;
      if (n > max) n = max;
      memcpy(buf, s->pending.data + s->off, n);
      s->off += n;
      if (s->off == s->pending.len) {
        tt_buf_reset(&s->pending);
        s->off = 0;
      }
      s->last_ms = tt_now_ms();
      pthread_mutex_unlock(&s->mu);
      return (ssize_t)n;
    }
    if (s->done) {
      pthread_mutex_unlock(&s->mu);
      return MHD_CONTENT_READER_END_OF_STREAM;
    }
    if ((s->stopping && *s->stopping) || tt_httpd_peer_gone(s->fd)) {
      s->gone = true;
      if (s->cancel) *s->cancel = 1; /* closing the stream cancels the work */
      pthread_mutex_unlock(&s->mu);
      return MHD_CONTENT_READER_END_WITH_ERROR;
    }
    if (tt_now_ms() - s->last_ms > TT_KEEPALIVE_MS) {
      tt_buf_puts(&s->pending, ": keep-alive\n\n");
      continue;
    }
    struct timespec ts = tt_realtime_in(100);
    pthread_cond_timedwait(&s->cv, &s->mu, &ts);
  }
}

static void tt_httpd_stream_closed(void *cls) {
  tt_httpd_stream *s = cls;
  pthread_mutex_lock(&s->mu);
  s->gone = true;
  if (!s->done && s->cancel) *s->cancel = 1;
  pthread_mutex_unlock(&s->mu);
  tt_httpd_stream_unref(s);
}

struct MHD_Response *tt_httpd_stream_response(const tt_mhd_api *mhd, tt_httpd_stream *s) {
  return mhd->create_response_from_callback(MHD_SIZE_UNKNOWN, 4096, tt_httpd_stream_read, s,
                                            tt_httpd_stream_closed);
}

bool tt_httpd_stream_push(tt_httpd_stream *s, const char *data, size_t len) {
  pthread_mutex_lock(&s->mu);
  bool open = !s->gone;
  if (open) tt_buf_append(&s->pending, data, len);
  pthread_cond_broadcast(&s->cv);
  pthread_mutex_unlock(&s->mu);
  return open;
}

bool tt_httpd_stream_event(tt_httpd_stream *s, const char *name, json_t *data) {
  tt_buf b = TT_BUF_INIT, j = TT_BUF_INIT;
  /* as traces and JSON-RPC messages write JSON: 15 significant digits, and
   * invisible or bidi characters escaped */
  tt_json_dump(&j, data, JSON_COMPACT | JSON_REAL_PRECISION(15));
  json_decref(data);
  tt_buf_printf(&b, "event: %s\ndata: %s\n\n", name, j.len ? tt_buf_cstr(&j) : "{}");
  tt_buf_free(&j);
  bool ok = tt_httpd_stream_push(s, b.data, b.len);
  tt_buf_free(&b);
  return ok;
}

void tt_httpd_stream_finish(tt_httpd_stream *s) {
  pthread_mutex_lock(&s->mu);
  s->done = true;
  pthread_cond_broadcast(&s->cv);
  pthread_mutex_unlock(&s->mu);
  tt_httpd_stream_unref(s);
}

/* ---- request bodies ------------------------------------------------------------ */

tt_httpd_body *tt_httpd_body_collect(void **con_cls, const char *upload, size_t *upload_size,
                                     size_t max) {
  tt_httpd_body *b = *con_cls;
  if (!b) {
    *con_cls = tt_xcalloc(1, sizeof *b);
    return NULL;
  }
  if (*upload_size) {
    b->received += *upload_size;
    if (b->received > max) {
      b->too_large = true;
      tt_buf_free(&b->data);
    } else {
      tt_buf_append(&b->data, upload, *upload_size);
    }
    *upload_size = 0;
    return NULL;
  }
  if (b->data.data) tt_buf_cstr(&b->data);
  return b;
}

void tt_httpd_body_done(void *cls, struct MHD_Connection *c, void **con_cls,
                        enum MHD_RequestTerminationCode code) {
  (void)cls;
  (void)c;
  (void)code;
  tt_httpd_body *b = *con_cls;
  if (!b) return;
  tt_buf_free(&b->data);
  free(b);
  *con_cls = NULL;
}

/* ---- worker threads --------------------------------------------------------------- */

void tt_httpd_workers_init(tt_httpd_workers *w) {
  memset(w, 0, sizeof *w);
  pthread_mutex_init(&w->mu, NULL);
  pthread_cond_init(&w->cv, NULL);
}

bool tt_httpd_workers_start(tt_httpd_workers *w, void *(*fn)(void *), void *arg) {
  tt_httpd_workers_reap(w);
  pthread_t t;
  pthread_mutex_lock(&w->mu);
  bool started = pthread_create(&t, NULL, fn, arg) == 0;
  if (started) w->running++;
  pthread_mutex_unlock(&w->mu);
  return started;
}

void tt_httpd_workers_done(tt_httpd_workers *w) {
  pthread_mutex_lock(&w->mu);
  if (w->nended == w->cap) {
    w->cap = w->cap ? w->cap * 2 : 8;
    w->ended = tt_xrealloc(w->ended, w->cap * sizeof *w->ended);
  }
  w->ended[w->nended++] = pthread_self();
  w->running--;
  pthread_cond_broadcast(&w->cv);
  pthread_mutex_unlock(&w->mu);
}

void tt_httpd_workers_reap(tt_httpd_workers *w) {
  pthread_mutex_lock(&w->mu);
  pthread_t *ended = w->ended;
  size_t n = w->nended;
  w->ended = NULL;
  w->nended = w->cap = 0;
  pthread_mutex_unlock(&w->mu);
  for (size_t i = 0; i < n; i++) pthread_join(ended[i], NULL);
  free(ended);
}

void tt_httpd_workers_finish(tt_httpd_workers *w) {
  pthread_mutex_lock(&w->mu);
  while (w->running > 0) pthread_cond_wait(&w->cv, &w->mu);
  pthread_mutex_unlock(&w->mu);
  tt_httpd_workers_reap(w);
  pthread_cond_destroy(&w->cv);
  pthread_mutex_destroy(&w->mu);
}
