/* httpd.h — what the two HTTP servers of tabletalk (serve-mcp --http and
 * tabletalk web) share on top of libmicrohttpd (mhd_api.h): binding an
 * address with one thread per connection, the Host/token/peer checks, the
 * guard that keeps a peer without the token from denying service (deadline,
 * caps, pacing of wrong credentials), and a server-sent event stream that a
 * worker thread fills while MHD sends it. Nothing here knows MCP or the web
 * page. */
#ifndef TT_HTTPD_H
#define TT_HTTPD_H

#include <pthread.h>
#include <signal.h>

#include "httpd/mhd_api.h"

/* ---- the guard (guard.c) -------------------------------------------------- */

/* What keeps a peer without the token from denying service to the one who
 * has it. Every connection is noted when MHD accepts it and forgotten when
 * it closes. A connection that has not shown valid credentials within the
 * deadline (10 s, TABLETALK_HTTP_DEADLINE; counted from the accept, not
 * from its last byte, so trickling headers does not extend it) is shut
 * down by tt_httpd_guard_sweep. One address (all of 127.0.0.0/8 counts as
 * one, an IPv6 /64 as one) keeps at most 32 connections that have not
 * authenticated, and the server 128: a newer one closes the oldest, so the
 * token holder, whose connection authenticates with its first request,
 * always finds room beside tricklers on the same address (MHD allows 64
 * per address, 256 in all). 32 rather than fewer: a client that opens
 * many connections at once (20 parallel requests) must not close its own
 * before their headers are read. After 5 wrong credentials from an address
 * every credential it presents waits before it is checked (0.5 s, then
 * doubling, at most half the deadline), right or wrong alike so the wait
 * tells nothing, and a wrong one is answered 429 with Retry-After; a right
 * one resets the count. An error MHD answers itself (400, 413, 431...) is
 * sent once, by the guard. */
typedef struct tt_httpd_guard tt_httpd_guard;

/* The JSON body of an error response the guard writes itself (an error MHD
 * found in a request, which MHD would otherwise send with its own HTML
 * page): message says what was wrong. */
typedef void (*tt_httpd_error_body)(void *ud, unsigned status, const char *message, tt_buf *out);

/* NULL with err (TT_ERR_CONFIG) when TABLETALK_HTTP_DEADLINE is not a
 * number of seconds from 0.1 to 3600. */
tt_httpd_guard *tt_httpd_guard_new(const tt_mhd_api *mhd, tt_httpd_error_body body, void *ud,
                                   tt_error *err);
/* After the daemon has stopped. */
void tt_httpd_guard_free(tt_httpd_guard *g);
/* Shuts down the connections past the deadline without credentials; the
 * server's main loop calls it (every 50 ms). */
void tt_httpd_guard_sweep(tt_httpd_guard *g);
/* The request on c showed valid credentials (or the server needs none):
 * the connection is no longer subject to the deadline and the caps.
 * presented: credentials were shown, so the address's failures reset. */
void tt_httpd_guard_admit(tt_httpd_guard *g, struct MHD_Connection *c, bool presented);
/* Call before checking credentials that c presents: waits when its address
 * has failed too often and c has not shown valid ones before (on this
 * connection's own thread; other connections go on). false when the
 * connection closed meanwhile (answer MHD_NO). */
bool tt_httpd_guard_pace(tt_httpd_guard *g, struct MHD_Connection *c);
/* The credentials c presented were wrong: the status to answer, 401, or
 * 429 when the address has failed more than 5 times, with *retry_after_s
 * the wait of its next attempt (else 0). */
unsigned tt_httpd_guard_failed(tt_httpd_guard *g, struct MHD_Connection *c,
                               unsigned *retry_after_s);
/* Answers c with status and a JSON body written straight to its socket,
 * then closes it: for a request MHD can no longer answer (its body already
 * arriving). false when the socket took none of it. */
bool tt_httpd_guard_answer(tt_httpd_guard *g, struct MHD_Connection *c, unsigned status,
                           const char *json, size_t len);

/* ---- listening ---------------------------------------------------------- */

typedef struct tt_httpd_bound {
  char host[256]; /* the address bound, without brackets */
  int port;       /* the port bound (the one picked for port 0) */
  bool v6;
  bool loopback;  /* only this machine can connect */
} tt_httpd_bound;

/* Starts a daemon on host:port (an IPv4/IPv6 literal or a name; "[v6]"
 * accepted) with a thread per connection, serving through access, calling
 * completed when a request ends, its connections watched by guard (which
 * must outlive the daemon). timeout_s: the first idle limit of a
 * connection. NULL with the reason in err. */
struct MHD_Daemon *tt_httpd_start(const tt_mhd_api *mhd, tt_httpd_guard *guard, const char *host,
                                  int port,
                                  MHD_AccessHandlerCallback access, void *cls,
                                  MHD_RequestCompletedCallback completed, unsigned timeout_s,
                                  tt_httpd_bound *out, tt_error *err);

/* "http://127.0.0.1:8765" or "http://[::1]:8765" for a bound address. */
void tt_httpd_base_url(const tt_httpd_bound *b, tt_buf *out);

/* ---- checks -------------------------------------------------------------- */

/* The length of the host part of "host:port", "[v6]:port" or "host". */
size_t tt_httpd_host_part(const char *s);
/* want == given, in time that depends only on want's length. */
bool tt_httpd_secret_equal(const char *want, const char *given);
/* The client of socket fd has closed its end. */
bool tt_httpd_peer_gone(int fd);
/* A token strong enough to guard a server: at least 16 characters and an
 * estimated 64 bits of randomness (not a few characters repeated, a
 * pattern or a sequence). false with what to do in err (TT_ERR_CONFIG);
 * what names where the token came from ("--token"). */
bool tt_httpd_token_check(const char *token, const char *what, tt_error *err);
/* The request's Content-Length is above max (a chunked body, which has
 * none, is counted as it arrives). */
bool tt_httpd_declared_too_large(const tt_mhd_api *mhd, struct MHD_Connection *c, size_t max);

/* ---- request bodies ------------------------------------------------------- */

typedef struct tt_httpd_body {
  tt_buf data;     /* NUL-terminated once whole */
  size_t received;
  bool too_large;  /* more than max bytes came: data was dropped */
  bool complete;   /* MHD has received all of it */
} tt_httpd_body;

/* For an access handler's first lines: gathers the body in *con_cls.
 * Returns NULL while MHD is still receiving (return MHD_YES then), else
 * the whole body, or — once, at the moment it passes max, while MHD is
 * still receiving it — the body with too_large set: answer it with
 * tt_httpd_body_refuse (what comes after is dropped). A Content-Length
 * above max is best refused before, at the first call (*con_cls NULL):
 * tt_httpd_declared_too_large. tt_httpd_body_done, as MHD's
 * request-completed callback, frees it. */
tt_httpd_body *tt_httpd_body_collect(void **con_cls, const char *upload, size_t *upload_size,
                                     size_t max);
/* Answers a too_large body 413 with json (straight to the socket, since
 * MHD cannot queue a response in the middle of a body) and closes the
 * connection; what the access handler returns. */
enum MHD_Result tt_httpd_body_refuse(tt_httpd_guard *g, struct MHD_Connection *c,
                                     const tt_httpd_body *b, const char *json, size_t len);
void tt_httpd_body_done(void *cls, struct MHD_Connection *c, void **con_cls,
                        enum MHD_RequestTerminationCode code);

/* ---- worker threads --------------------------------------------------------- */

/* Threads that answer requests while MHD streams them. They are not
 * detached: a thread that has said it is done still runs its thread-exit
 * handlers (libcurl's, OpenSSL's), and the process must not end, nor the
 * server go, under one. */
typedef struct tt_httpd_workers {
  pthread_mutex_t mu;
  pthread_cond_t cv;
  int running;
  pthread_t *ended; /* finished, to be joined */
  size_t nended, cap;
} tt_httpd_workers;

void tt_httpd_workers_init(tt_httpd_workers *w);
/* Starts fn(arg) on a thread; false when none could be made. */
bool tt_httpd_workers_start(tt_httpd_workers *w, void *(*fn)(void *), void *arg);
/* The last thing a worker calls. */
void tt_httpd_workers_done(tt_httpd_workers *w);
/* Joins the workers that have finished. */
void tt_httpd_workers_reap(tt_httpd_workers *w);
/* Waits for every worker, joins them and frees what w holds. */
void tt_httpd_workers_finish(tt_httpd_workers *w);

/* ---- event streams --------------------------------------------------------- */

/* A response whose bytes a worker thread produces while MHD sends them:
 * tt_httpd_stream_push appends, tt_httpd_stream_finish ends it. A client
 * that hangs up, or *stopping, sets *cancel (which the worker watches).
 * A comment line is sent after 15 s of silence so that proxies and
 * browsers keep the stream open. Two references: the worker's and MHD's;
 * the last one out calls on_free(ud). */
typedef struct tt_httpd_stream tt_httpd_stream;

tt_httpd_stream *tt_httpd_stream_new(int fd, volatile sig_atomic_t *cancel,
                                     volatile sig_atomic_t *stopping, void (*on_free)(void *ud),
                                     void *ud);
/* MHD's response for the stream (takes MHD's reference), or NULL. */
struct MHD_Response *tt_httpd_stream_response(const tt_mhd_api *mhd, tt_httpd_stream *s);
/* false when the client has gone (the bytes are dropped). */
bool tt_httpd_stream_push(tt_httpd_stream *s, const char *data, size_t len);
/* "event: NAME\ndata: JSON\n\n"; takes data. */
bool tt_httpd_stream_event(tt_httpd_stream *s, const char *name, json_t *data);
/* The worker is done: the stream ends after what is pending; drops the
 * worker's reference. */
void tt_httpd_stream_finish(tt_httpd_stream *s);
/* Drops a reference (MHD's, when no response could be made). */
void tt_httpd_stream_unref(tt_httpd_stream *s);

#endif
