/* web_internal.h — what the files of the web layer share: the server
 * (server.c: listening, guards, routing, responses), the JSON endpoints
 * (api.c) and the streamed questions (ask.c). */
#ifndef TT_WEB_INTERNAL_H
#define TT_WEB_INTERNAL_H

#include <pthread.h>

#include "httpd/httpd.h"
#include "web/web.h"

#define TT_WEB_MAX_BODY (1u << 20) /* bytes of a request body */
#define TT_WEB_MAX_LOGINS 1000     /* browsers logged in at once */
#define TT_WEB_RUN_ROWS 1000       /* rows of the final result in a run event */

/* A browser that showed the token: its cookie and its CSRF token. */
typedef struct tt_web_login {
  char secret[33];
  char csrf[33];
  double last_ms;
  struct tt_web_login *next;
} tt_web_login;

typedef struct tt_web_ask tt_web_ask;

typedef struct tt_web {
  const tt_web_config *cfg;
  const tt_mhd_api *mhd;
  tt_httpd_bound bound;
  tt_httpd_guard *guard;     /* deadline, caps, pacing of wrong tokens (httpd.h) */
  bool any_host;             /* bound to every address: any Host (the token guards) */
  char host_arg[256];        /* --host as given, the Host it may be reached by */
  pthread_mutex_t mu;        /* logins, asks */
  tt_web_login *logins;
  size_t nlogins;
  tt_web_ask *asks;          /* questions running */
  tt_httpd_workers workers;  /* their threads */
  const tt_schema *schema;   /* the service's, read before serving */
  volatile sig_atomic_t stopping;
} tt_web;

/* One request as the handlers see it. */
typedef struct tt_web_req {
  tt_web *w;
  struct MHD_Connection *c;
  const char *method;
  const char *path;          /* without the query */
  const char *body;          /* NUL-terminated; "" when none */
  size_t body_len;
  char csrf[33];             /* the login's CSRF token ("" for bearer requests) */
} tt_web_req;

/* ---- responses (server.c) ---- */
enum MHD_Result tt_web_send(tt_web_req *r, unsigned status, const char *type, const void *body,
                            size_t len, const char *extra_name, const char *extra);
/* Takes j. */
enum MHD_Result tt_web_send_json(tt_web_req *r, unsigned status, json_t *j);
/* {"error": message} */
enum MHD_Result tt_web_send_error(tt_web_req *r, unsigned status, const char *fmt, ...)
    TT_PRINTF(3, 4);
/* Adds the headers every response carries. */
void tt_web_security_headers(tt_web *w, struct MHD_Response *resp, bool asset);
const char *tt_web_header(tt_web_req *r, const char *name);
/* The request body as a JSON object, or NULL after answering 400. */
json_t *tt_web_body_object(tt_web_req *r, enum MHD_Result *ret);

/* ---- endpoints (api.c) ---- */
enum MHD_Result tt_web_api_session(tt_web_req *r);
enum MHD_Result tt_web_api_sql(tt_web_req *r);
enum MHD_Result tt_web_api_threads(tt_web_req *r, const char *id); /* id NULL: the list */
enum MHD_Result tt_web_api_schema(tt_web_req *r);
enum MHD_Result tt_web_api_run(tt_web_req *r, const char *run_id);
enum MHD_Result tt_web_api_chart(tt_web_req *r, const char *rest);
/* run ids and thread ids: letters, digits, - _ . (no path tricks) */
bool tt_web_id_ok(const char *id);

/* ---- questions (ask.c) ---- */
enum MHD_Result tt_web_api_ask(tt_web_req *r);
/* Stop: cancels every running question (then wait with
 * tt_httpd_workers_finish). */
void tt_web_asks_cancel(tt_web *w);

#endif
