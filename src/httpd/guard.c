/* guard.c — what keeps a peer without the token from denying service to
 * the one who has it (see httpd.h): every connection is noted when
 * libmicrohttpd accepts it and forgotten when it closes; the server's main
 * loop sweeps out those that have not shown valid credentials within the
 * deadline, counted from the accept (MHD's own timeout restarts at every
 * byte, so a peer trickling one header byte at a time was never closed);
 * an address keeps few such connections, a newer one closing its oldest;
 * wrong credentials are paced per address; and an error MHD answers itself
 * is sent once.
 *
 * Closing is shutdown(2) on the connection's socket from another thread,
 * as MHD_stop_daemon does itself: the connection's thread wakes, reads the
 * end of the stream and closes the connection the ordinary way. MHD
 * closes a socket only after telling us (MHD_CONNECTION_NOTIFY_CLOSED), and
 * both happen under the guard's lock here, so a socket is never shut down
 * after its number could have been reused. */
#define _GNU_SOURCE /* POLLRDHUP */
#include "httpd/httpd_internal.h"

#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#define TT_GUARD_DEADLINE_MS 10000.0 /* to show valid credentials, from the accept */
#define TT_GUARD_UNAUTH_PER_ADDR 32  /* connections without credentials, per address */
#define TT_GUARD_UNAUTH_TOTAL 128    /* ... and in all (MHD: 64 per address, 256 in all) */
#define TT_GUARD_FREE_FAILURES 5     /* wrong credentials an address may send unpaced */
#define TT_GUARD_PENALTY_MS 500.0    /* the first wait; it doubles with each failure */
#define TT_GUARD_FORGET_MS 600000.0  /* failures older than this are forgotten */
#define TT_GUARD_ADDRS 256           /* addresses whose failures are remembered */
#define TT_GUARD_SEND_MS 1000.0      /* for writing a response ourselves */

/* An address as the guard counts it: IPv4 as ::ffff:a.b.c.d with all of
 * 127.0.0.0/8 as one (a local peer may bind any of it), IPv6 loopback as
 * itself, other IPv6 addresses by their /64 (what one host is given). */
typedef struct tt_guard_key {
  unsigned char b[16];
} tt_guard_key;

/* One connection, from MHD's accept to its close (its socket_context). */
typedef struct tt_guard_peer {
  int fd;
  tt_guard_key key;
  double since_ms;  /* accepted */
  bool authed;      /* showed valid credentials, or none are needed */
  bool closing;     /* shut down by the guard: no longer counted */
  bool answered;    /* the guard wrote the response itself */
  bool has_thread;  /* thread is known (its first request line came) */
  pthread_t thread; /* MHD's thread for this connection */
  struct tt_guard_peer *prev, *next;
} tt_guard_peer;

/* The wrong credentials of one address. */
typedef struct tt_guard_record {
  tt_guard_key key;
  unsigned fails;
  double last_ms;
  bool used;
} tt_guard_record;

struct tt_httpd_guard {
  const tt_mhd_api *mhd;
  tt_httpd_error_body body;
  void *ud;
  double deadline_ms;
  pthread_mutex_t mu;
  tt_guard_peer *head, *tail; /* in the order accepted: the oldest first */
  tt_guard_record records[TT_GUARD_ADDRS];
};

/* ---- addresses ------------------------------------------------------------ */

static void tt_guard_key_v4(tt_guard_key *k, const unsigned char *v4) {
  k->b[10] = k->b[11] = 0xff;
  if (v4[0] == 127) {
    k->b[12] = 127;
    return;
  }
  memcpy(k->b + 12, v4, 4);
}

static void tt_guard_key_of(const struct sockaddr *sa, tt_guard_key *k) {
  memset(k, 0, sizeof *k);
  if (!sa) return;
  if (sa->sa_family == AF_INET) {
    struct sockaddr_in a;
    memcpy(&a, sa, sizeof a);
    unsigned char v4[4];
    memcpy(v4, &a.sin_addr, sizeof v4);
    tt_guard_key_v4(k, v4);
  } else if (sa->sa_family == AF_INET6) {
    struct sockaddr_in6 a;
    memcpy(&a, sa, sizeof a);
    const unsigned char *b = a.sin6_addr.s6_addr;
    if (IN6_IS_ADDR_V4MAPPED(&a.sin6_addr)) tt_guard_key_v4(k, b + 12);
    else if (IN6_IS_ADDR_LOOPBACK(&a.sin6_addr)) memcpy(k->b, b, 16);
    else memcpy(k->b, b, 8);
  }
}

static bool tt_guard_key_equal(const tt_guard_key *a, const tt_guard_key *b) {
  return memcmp(a->b, b->b, sizeof a->b) == 0;
}

/* ---- the guard ---------------------------------------------------------------- */

tt_httpd_guard *tt_httpd_guard_new(const tt_mhd_api *mhd, tt_httpd_error_body body, void *ud,
                                   tt_error *err) {
  double deadline_ms = TT_GUARD_DEADLINE_MS;
  const char *v = getenv("TABLETALK_HTTP_DEADLINE");
  if (v && *v) {
    char *end = NULL;
    double s = strtod(v, &end);
    if (end == v || *end || !(s >= 0.1 && s <= 3600)) {
      tt_error_set(err, TT_ERR_CONFIG,
                   "TABLETALK_HTTP_DEADLINE wants seconds from 0.1 to 3600, not '%s'", v);
      return NULL;
    }
    deadline_ms = s * 1000.0;
  }
  tt_httpd_guard *g = tt_xcalloc(1, sizeof *g);
  g->mhd = mhd;
  g->body = body;
  g->ud = ud;
  g->deadline_ms = deadline_ms;
  pthread_mutex_init(&g->mu, NULL);
  return g;
}

void tt_httpd_guard_free(tt_httpd_guard *g) {
  if (!g) return;
  while (g->head) { /* none after MHD_stop_daemon; only if the daemon never started */
    tt_guard_peer *n = g->head->next;
    free(g->head);
    g->head = n;
  }
  pthread_mutex_destroy(&g->mu);
  free(g);
}

static tt_guard_peer *tt_guard_peer_of(tt_httpd_guard *g, struct MHD_Connection *c) {
  const union MHD_ConnectionInfo *ci =
      g->mhd->get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
  return ci ? ci->socket_context : NULL;
}

/* Counted against the caps and the deadline. */
static bool tt_guard_waiting(const tt_guard_peer *p) { return !p->authed && !p->closing; }

/* Call with mu. */
static void tt_guard_close(tt_guard_peer *p) {
  if (!p || p->closing) return;
  p->closing = true;
  if (p->fd >= 0) shutdown(p->fd, SHUT_RDWR);
}

/* Call with mu: the connections without credentials (of key, or all). */
static unsigned tt_guard_count(const tt_httpd_guard *g, const tt_guard_key *key) {
  unsigned n = 0;
  for (const tt_guard_peer *p = g->head; p; p = p->next)
    if (tt_guard_waiting(p) && (!key || tt_guard_key_equal(&p->key, key))) n++;
  return n;
}

/* Call with mu: the oldest of them, other than except. */
static tt_guard_peer *tt_guard_oldest(const tt_httpd_guard *g, const tt_guard_key *key,
                                      const tt_guard_peer *except) {
  for (tt_guard_peer *p = g->head; p; p = p->next)
    if (p != except && tt_guard_waiting(p) && (!key || tt_guard_key_equal(&p->key, key))) return p;
  return NULL;
}

/* Call with mu: a new connection beyond a cap closes the oldest one
 * without credentials (of its address, then of all). The newest stays: it
 * may be the token holder's, whose credentials come with its first bytes,
 * while the oldest has had the longest to show them. */
static void tt_guard_make_room(tt_httpd_guard *g, const tt_guard_peer *newest) {
  if (tt_guard_count(g, &newest->key) > TT_GUARD_UNAUTH_PER_ADDR)
    tt_guard_close(tt_guard_oldest(g, &newest->key, newest));
  if (tt_guard_count(g, NULL) > TT_GUARD_UNAUTH_TOTAL)
    tt_guard_close(tt_guard_oldest(g, NULL, newest));
}

void tt_httpd_guard_notify(void *cls, struct MHD_Connection *c, void **socket_context,
                           enum MHD_ConnectionNotificationCode toe) {
  tt_httpd_guard *g = cls;
  if (toe == MHD_CONNECTION_NOTIFY_STARTED) {
    tt_guard_peer *p = tt_xcalloc(1, sizeof *p);
    const union MHD_ConnectionInfo *ci =
        g->mhd->get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
    p->fd = ci ? ci->connect_fd : -1;
    ci = g->mhd->get_connection_info(c, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    tt_guard_key_of(ci ? ci->client_addr : NULL, &p->key);
    p->since_ms = tt_now_ms();
    *socket_context = p;
    pthread_mutex_lock(&g->mu);
    p->prev = g->tail;
    if (g->tail) g->tail->next = p;
    else g->head = p;
    g->tail = p;
    tt_guard_make_room(g, p);
    pthread_mutex_unlock(&g->mu);
    return;
  }
  tt_guard_peer *p = *socket_context;
  if (!p) return;
  pthread_mutex_lock(&g->mu);
  if (p->prev) p->prev->next = p->next;
  else g->head = p->next;
  if (p->next) p->next->prev = p->prev;
  else g->tail = p->prev;
  pthread_mutex_unlock(&g->mu);
  free(p);
  *socket_context = NULL;
}

void tt_httpd_guard_sweep(tt_httpd_guard *g) {
  double now = tt_now_ms();
  pthread_mutex_lock(&g->mu);
  for (tt_guard_peer *p = g->head; p; p = p->next)
    if (tt_guard_waiting(p) && now - p->since_ms >= g->deadline_ms) tt_guard_close(p);
  pthread_mutex_unlock(&g->mu);
}

/* ---- credentials ------------------------------------------------------------- */

/* Call with mu: key's record, or (add) a fresh one in place of an unused
 * one or the one that failed longest ago. Old failures are forgotten. */
static tt_guard_record *tt_guard_record_of(tt_httpd_guard *g, const tt_guard_key *key, bool add,
                                           double now) {
  tt_guard_record *spare = NULL;
  for (size_t i = 0; i < TT_GUARD_ADDRS; i++) {
    tt_guard_record *r = &g->records[i];
    if (r->used && tt_guard_key_equal(&r->key, key)) {
      if (now - r->last_ms > TT_GUARD_FORGET_MS) r->fails = 0;
      return r;
    }
    if (!spare || (spare->used && (!r->used || r->last_ms < spare->last_ms))) spare = r;
  }
  if (!add) return NULL;
  memset(spare, 0, sizeof *spare);
  spare->used = true;
  spare->key = *key;
  spare->last_ms = now;
  return spare;
}

/* The wait before an address that has failed `fails` times is heard. */
static double tt_guard_penalty_ms(const tt_httpd_guard *g, unsigned fails) {
  if (fails < TT_GUARD_FREE_FAILURES) return 0;
  double cap = g->deadline_ms / 2, ms = TT_GUARD_PENALTY_MS;
  for (unsigned i = TT_GUARD_FREE_FAILURES; i < fails && ms < cap; i++) ms *= 2;
  return ms < cap ? ms : cap;
}

/* Waits ms unless the peer of fd goes (false) or the guard or the server
 * shuts the socket down. */
static bool tt_guard_wait(int fd, double ms) {
  double end = tt_now_ms() + ms;
  for (;;) {
    double left = end - tt_now_ms();
    if (left <= 0 || fd < 0) return true;
    struct pollfd pf = {.fd = fd, .events = POLLRDHUP};
    int n = poll(&pf, 1, (int)left + 1);
    if (n < 0 && errno != EINTR) return true;
    if (n > 0 && (pf.revents & (POLLRDHUP | POLLHUP | POLLERR | POLLNVAL))) return false;
  }
}

bool tt_httpd_guard_pace(tt_httpd_guard *g, struct MHD_Connection *c) {
  tt_guard_peer *p = tt_guard_peer_of(g, c);
  if (!p) return true;
  pthread_mutex_lock(&g->mu);
  const tt_guard_record *r = tt_guard_record_of(g, &p->key, false, tt_now_ms());
  /* a connection that has shown the token already (the holder's, kept
   * alive) goes on at once: a guesser has none */
  unsigned fails = r && !p->authed ? r->fails : 0;
  int fd = p->fd;
  pthread_mutex_unlock(&g->mu);
  double ms = tt_guard_penalty_ms(g, fails);
  return ms <= 0 || tt_guard_wait(fd, ms);
}

unsigned tt_httpd_guard_failed(tt_httpd_guard *g, struct MHD_Connection *c,
                               unsigned *retry_after_s) {
  *retry_after_s = 0;
  tt_guard_peer *p = tt_guard_peer_of(g, c);
  if (!p) return 401;
  double now = tt_now_ms();
  pthread_mutex_lock(&g->mu);
  tt_guard_record *r = tt_guard_record_of(g, &p->key, true, now);
  r->fails++;
  r->last_ms = now;
  unsigned fails = r->fails;
  pthread_mutex_unlock(&g->mu);
  if (fails <= TT_GUARD_FREE_FAILURES) return 401;
  *retry_after_s = (unsigned)((tt_guard_penalty_ms(g, fails) + 999.0) / 1000.0);
  return 429;
}

void tt_httpd_guard_admit(tt_httpd_guard *g, struct MHD_Connection *c, bool presented) {
  tt_guard_peer *p = tt_guard_peer_of(g, c);
  if (!p) return;
  pthread_mutex_lock(&g->mu);
  p->authed = true;
  if (presented) {
    tt_guard_record *r = tt_guard_record_of(g, &p->key, false, tt_now_ms());
    if (r) r->fails = 0;
  }
  pthread_mutex_unlock(&g->mu);
}

/* ---- answering ourselves ------------------------------------------------------- */

static const char *tt_guard_reason(unsigned status) {
  switch (status) {
  case 400: return "Bad Request";
  case 413: return "Content Too Large";
  case 414: return "URI Too Long";
  case 431: return "Request Header Fields Too Large";
  case 501: return "Not Implemented";
  case 505: return "HTTP Version Not Supported";
  default: return "Error";
  }
}

static const char *tt_guard_message(unsigned status) {
  switch (status) {
  case 400:
    return "Bad Request: the request is malformed (its request line, a header or its chunked "
           "encoding)";
  case 413:
    return "Content Too Large: the request declares a body (Content-Length or a chunk size) "
           "beyond what this server takes";
  case 414: return "URI Too Long: the request's URI is longer than this server takes";
  case 431:
    return "Request Header Fields Too Large: the request's headers are larger than this server "
           "takes";
  case 501:
    return "Not Implemented: this server takes request bodies with Content-Length or chunked";
  case 505: return "HTTP Version Not Supported: speak HTTP/1.1";
  default: return "the request could not be processed";
  }
}

/* A whole response (closing the connection) written to fd; false when
 * none of it could be. fd is non-blocking (MHD's). */
static bool tt_guard_write(int fd, unsigned status, const char *json, size_t len) {
  tt_buf b = TT_BUF_INIT;
  tt_buf_printf(&b,
                "HTTP/1.1 %u %s\r\nContent-Type: application/json\r\nContent-Length: %zu\r\n"
                "Cache-Control: no-store\r\nX-Content-Type-Options: nosniff\r\n"
                "Connection: close\r\n\r\n",
                status, tt_guard_reason(status), len);
  tt_buf_append(&b, json, len);
  size_t off = 0;
  double end = tt_now_ms() + TT_GUARD_SEND_MS;
  while (fd >= 0 && off < b.len) {
    ssize_t n = send(fd, b.data + off, b.len - off, MSG_NOSIGNAL);
    if (n > 0) {
      off += (size_t)n;
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    double left = end - tt_now_ms();
    if (n >= 0 || (errno != EAGAIN && errno != EWOULDBLOCK) || left <= 0) break;
    struct pollfd pf = {.fd = fd, .events = POLLOUT};
    (void)poll(&pf, 1, (int)left + 1);
  }
  tt_buf_free(&b);
  return off > 0;
}

/* Marks p answered (and closing) unless it already is: false then. Call
 * with mu. */
static bool tt_guard_claim(tt_guard_peer *p) {
  if (!p || p->answered) return false;
  p->answered = true;
  p->closing = true;
  return true;
}

bool tt_httpd_guard_answer(tt_httpd_guard *g, struct MHD_Connection *c, unsigned status,
                           const char *json, size_t len) {
  tt_guard_peer *p = tt_guard_peer_of(g, c);
  pthread_mutex_lock(&g->mu);
  bool mine = tt_guard_claim(p);
  pthread_mutex_unlock(&g->mu);
  if (!mine) return false;
  /* this is the connection's own thread, in its access handler: MHD writes
   * nothing meanwhile, and closes the socket only after this returns */
  bool sent = tt_guard_write(p->fd, status, json, len);
  shutdown(p->fd, SHUT_RDWR);
  return sent;
}

/* The connection whose thread this is. Call with mu. */
static tt_guard_peer *tt_guard_this_thread(tt_httpd_guard *g) {
  pthread_t self = pthread_self();
  for (tt_guard_peer *p = g->head; p; p = p->next)
    if (p->has_thread && pthread_equal(p->thread, self)) return p;
  return NULL;
}

void *tt_httpd_guard_uri(void *cls, const char *uri, struct MHD_Connection *c) {
  (void)uri;
  tt_httpd_guard *g = cls;
  tt_guard_peer *p = tt_guard_peer_of(g, c);
  if (p) {
    pthread_mutex_lock(&g->mu);
    p->thread = pthread_self();
    p->has_thread = true;
    pthread_mutex_unlock(&g->mu);
  }
  return NULL;
}

/* MHD is about to answer an error it found in a request itself. For one
 * found in the headers (a Content-Length beyond 64 bits, no Host, a bad
 * Content-Length...) libmicrohttpd 0.9.75 builds the reply's status line
 * and headers twice into one response (parse_connection_headers queues
 * it, then MHD_connection_handle_idle moves the connection back to
 * HEADERS_PROCESSED and builds them again at START_REPLY): so the guard
 * writes the answer itself, once, and shuts the socket, and MHD's copy is
 * never sent. Runs on the connection's thread, before MHD writes anything
 * for this request. A connection whose thread is not known yet (its first
 * request line was the error) keeps MHD's answer, which it sends once. */
static bool tt_guard_answer_mhd_error(tt_httpd_guard *g, unsigned status) {
  pthread_mutex_lock(&g->mu);
  tt_guard_peer *p = tt_guard_this_thread(g);
  bool mine = tt_guard_claim(p);
  int fd = mine ? p->fd : -1;
  pthread_mutex_unlock(&g->mu);
  if (!mine) return false;
  tt_buf body = TT_BUF_INIT;
  g->body(g->ud, status, tt_guard_message(status), &body);
  tt_guard_write(fd, status, body.data ? body.data : "{}", body.data ? body.len : 2);
  tt_buf_free(&body);
  shutdown(fd, SHUT_RDWR);
  return true;
}

/* MHD's notes about a connection the guard has answered itself. */
static bool tt_guard_thread_answered(tt_httpd_guard *g) {
  pthread_mutex_lock(&g->mu);
  const tt_guard_peer *p = tt_guard_this_thread(g);
  bool answered = p && p->answered;
  pthread_mutex_unlock(&g->mu);
  return answered;
}

void tt_httpd_guard_log(void *cls, const char *fmt, va_list ap) {
  tt_httpd_guard *g = cls;
  tt_buf b = TT_BUF_INIT;
  tt_buf_vprintf(&b, fmt, ap);
  const char *text = tt_buf_cstr(&b);
  static const char error_mark[] = "Error processing request (HTTP response code is ";
  const char *at = strstr(text, error_mark);
  /* a client that went away mid-stream (a closed tab) or mid-request (as
   * every connection the guard shuts down does) is no news, nor what
   * follows an answer the guard wrote itself */
  bool quiet = strstr(text, "application error generating response") ||
               strstr(text, "closed when reading request") ||
               strstr(text, "disconnected when reading request") ||
               strstr(text, "closed by remote side with incomplete request");
  if (at) tt_guard_answer_mhd_error(g, (unsigned)strtoul(at + sizeof error_mark - 1, NULL, 10));
  else if (!quiet) quiet = tt_guard_thread_answered(g);
  if (!quiet)
    fprintf(stderr, "tabletalk: http: %s%s", text, b.len && b.data[b.len - 1] == '\n' ? "" : "\n");
  tt_buf_free(&b);
}
