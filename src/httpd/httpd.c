/* httpd.c — the parts of an HTTP server on libmicrohttpd that serve-mcp
 * --http and tabletalk web share (see httpd.h): binding (with the guard of
 * guard.c watching every connection), checks, request bodies, and the
 * event stream a worker fills. */
#define _GNU_SOURCE /* POLLRDHUP: a client that closed its stream is seen at once */
#include "httpd/httpd_internal.h"

#include <errno.h>
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

struct MHD_Daemon *tt_httpd_start(const tt_mhd_api *mhd, tt_httpd_guard *guard, const char *host,
                                  int port,
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
      flags, (uint16_t)port, NULL, NULL, access, cls, MHD_OPTION_EXTERNAL_LOGGER,
      tt_httpd_guard_log, guard, MHD_OPTION_NOTIFY_CONNECTION, tt_httpd_guard_notify, guard,
      MHD_OPTION_URI_LOG_CALLBACK, tt_httpd_guard_uri, guard, MHD_OPTION_SOCK_ADDR, ai->ai_addr,
      MHD_OPTION_NOTIFY_COMPLETED, completed, cls,
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

/* Whether an alphabet of `alphabet` characters, `n` long, makes 2^64
 * tokens or more (no libm: repeated products). */
static bool tt_httpd_token_64_bits(unsigned alphabet, size_t n) {
  double count = 1;
  for (size_t i = 0; i < n && count < 18446744073709551616.0; i++) count *= alphabet;
  return count >= 18446744073709551616.0;
}

/* The alphabet a token seems drawn from: hex digits (16) when it has only
 * those in one case, else the classes of characters it uses. */
static unsigned tt_httpd_token_alphabet(const char *t) {
  bool digit = false, lower = false, upper = false, other = false, hex_lower = true,
       hex_upper = true;
  for (const unsigned char *p = (const unsigned char *)t; *p; p++) {
    bool d = *p >= '0' && *p <= '9', l = *p >= 'a' && *p <= 'z', u = *p >= 'A' && *p <= 'Z';
    digit |= d;
    lower |= l;
    upper |= u;
    other |= !d && !l && !u;
    hex_lower &= d || (*p >= 'a' && *p <= 'f');
    hex_upper &= d || (*p >= 'A' && *p <= 'F');
  }
  if (hex_lower || hex_upper) return digit && !lower && !upper ? 10 : 16;
  return (digit ? 10u : 0u) + (lower ? 26u : 0u) + (upper ? 26u : 0u) + (other ? 32u : 0u);
}

/* What makes a token of 16 or more characters weak, or NULL: a few
 * characters repeated, a repeated pattern, or a run of neighbouring
 * characters (abcd..., 1234..., 9876...). A random 16-hex-digit token has
 * under one chance in a million of tripping any of these. */
static const char *tt_httpd_token_pattern(const char *t, size_t n) {
  bool seen[256] = {false};
  unsigned distinct = 0;
  for (size_t i = 0; i < n; i++)
    if (!seen[(unsigned char)t[i]]) {
      seen[(unsigned char)t[i]] = true;
      distinct++;
    }
  if (distinct < 5) return "is made of fewer than 5 different characters";
  for (size_t k = 1; k <= n / 2; k++) {
    size_t i = k;
    while (i < n && t[i] == t[i - k]) i++;
    if (i == n) return "repeats a pattern";
  }
  size_t steps = 0;
  for (size_t i = 1; i < n; i++) {
    int d = (int)(unsigned char)t[i] - (int)(unsigned char)t[i - 1];
    if (d >= -1 && d <= 1) steps++;
  }
  if (steps * 4 >= (n - 1) * 3) return "is mostly a run of neighbouring characters";
  return NULL;
}

bool tt_httpd_token_check(const char *token, const char *what, tt_error *err) {
  size_t n = strlen(token);
  const char *weak = NULL;
  if (n < 16) weak = "is shorter than 16 characters";
  else if (!tt_httpd_token_64_bits(tt_httpd_token_alphabet(token), n))
    weak = "has fewer than 64 bits of randomness for the characters it uses";
  else weak = tt_httpd_token_pattern(token, n);
  if (!weak) return true;
  tt_error_set(err, TT_ERR_CONFIG, "the token (%s) %s, so it could be guessed", what, weak);
  tt_error_hint(err, "use 16 or more random characters, such as the 32 hex digits of "
                     "`openssl rand -hex 16`");
  return false;
}

bool tt_httpd_declared_too_large(const tt_mhd_api *mhd, struct MHD_Connection *c, size_t max) {
  const char *cl =
      mhd->lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
  if (!cl) return false;
  errno = 0;
  char *end = NULL;
  unsigned long long n = strtoull(cl, &end, 10); /* MHD has checked it is digits */
  return errno == ERANGE || (unsigned long long)max < n;
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
    size_t n = *upload_size;
    *upload_size = 0;
    if (b->too_large) return NULL; /* answered already: dropped */
    b->received += n;
    if (b->received > max) {
      b->too_large = true;
      tt_buf_free(&b->data);
      return b;
    }
    tt_buf_append(&b->data, upload, n);
    return NULL;
  }
  b->complete = true;
  if (b->data.data) tt_buf_cstr(&b->data);
  return b;
}

enum MHD_Result tt_httpd_body_refuse(tt_httpd_guard *g, struct MHD_Connection *c,
                                     const tt_httpd_body *b, const char *json, size_t len) {
  if (b->complete) return MHD_NO; /* answered when it passed the limit: close */
  tt_httpd_guard_answer(g, c, 413, json, len);
  return MHD_YES;
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
