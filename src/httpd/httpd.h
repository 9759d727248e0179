/* httpd.h — what the two HTTP servers of tabletalk (serve-mcp --http and
 * tabletalk web) share on top of libmicrohttpd (mhd_api.h): binding an
 * address with one thread per connection, the Host/token/peer checks, and
 * a server-sent event stream that a worker thread fills while MHD sends it.
 * Nothing here knows MCP or the web page. */
#ifndef TT_HTTPD_H
#define TT_HTTPD_H

#include <pthread.h>
#include <signal.h>

#include "httpd/mhd_api.h"

/* ---- listening ---------------------------------------------------------- */

typedef struct tt_httpd_bound {
  char host[256]; /* the address bound, without brackets */
  int port;       /* the port bound (the one picked for port 0) */
  bool v6;
  bool loopback;  /* only this machine can connect */
} tt_httpd_bound;

/* Starts a daemon on host:port (an IPv4/IPv6 literal or a name; "[v6]"
 * accepted) with a thread per connection, serving through access, calling
 * completed when a request ends. timeout_s: the first idle limit of a
 * connection. NULL with the reason in err. */
struct MHD_Daemon *tt_httpd_start(const tt_mhd_api *mhd, const char *host, int port,
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

/* ---- request bodies ------------------------------------------------------- */

typedef struct tt_httpd_body {
  tt_buf data;     /* NUL-terminated once whole */
  size_t received;
  bool too_large;  /* more than max bytes came: data was dropped */
} tt_httpd_body;

/* For an access handler's first lines: gathers the body in *con_cls.
 * Returns NULL while MHD is still receiving (return MHD_YES then), else
 * the whole body (the handler answers; too_large says to answer 413).
 * tt_httpd_body_done, as MHD's request-completed callback, frees it. */
tt_httpd_body *tt_httpd_body_collect(void **con_cls, const char *upload, size_t *upload_size,
                                     size_t max);
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
