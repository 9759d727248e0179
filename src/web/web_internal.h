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
/* A parameter of the URL's query (?name=value), or NULL. */
const char *tt_web_arg(tt_web_req *r, const char *name);
/* The parameter as a whole number from min to max (def when absent);
 * false after answering 400 when it is something else. */
bool tt_web_arg_long(tt_web_req *r, const char *name, long min, long max, long def, long *out,
                     enum MHD_Result *ret);
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
enum MHD_Result tt_web_api_schema_values(tt_web_req *r); /* ?q=: values that contain it */
enum MHD_Result tt_web_api_run(tt_web_req *r, const char *run_id);
enum MHD_Result tt_web_api_chart(tt_web_req *r, const char *rest);
/* run ids and thread ids: letters, digits, - _ . (no path tricks) */
bool tt_web_id_ok(const char *id);

/* ---- SQL as a subquery (sqlwrap.c) ---- */
/* The length of sql's statement without trailing semicolons, blanks and
 * comments; false when it cannot be wrapped (unbalanced parentheses,
 * another statement after a semicolon, an unterminated quote). pg: the
 * text is PostgreSQL's, else SQLite's. */
bool tt_web_sql_body(const char *sql, size_t len, bool pg, size_t *body_len);
/* SELECT <select> FROM (\n<statement>\n) AS tt_rows [ORDER BY sort [DESC]]
 * [LIMIT limit OFFSET offset] into out; sort 0: no order, limit 0: none.
 * False (out untouched) when the statement cannot be wrapped. */
bool tt_web_wrap(const tt_web *w, const char *sql, size_t len, const char *select, long sort,
                 bool desc, long limit, long offset, tt_buf *out);

/* ---- results: pages, counts, downloads (query.c, download.c) ---- */
/* POST /api/queries (run SQL: its first page and its id), GET /api/queries
 * (the history), GET /api/queries/ID[/rows|/count|/rows.csv|/rows.json]. */
enum MHD_Result tt_web_api_queries(tt_web_req *r, const char *rest); /* rest NULL: the list */
/* The 422 answer for SQL that was refused or failed: the message with the
 * did-you-mean hint, the error's own hint, whether it was refused. */
enum MHD_Result tt_web_send_sql_error(tt_web_req *r, const char *sql, const tt_error *err);
/* A download of every row of sql (sorted by column sort, 1-based, when > 0)
 * as CSV or JSON, streamed through a cursor; caps from ?max_rows= and
 * ?max_bytes= (none by default), CSV cells that a spreadsheet would take
 * for a formula prefixed with ' unless ?raw=1. */
enum MHD_Result tt_web_download(tt_web_req *r, const char *id, const char *sql, long sort,
                                bool desc, bool json);

/* GET /api/runs/RUN_ID/check: has the data changed since the run? */
enum MHD_Result tt_web_api_run_check(tt_web_req *r, const char *run_id);

/* ---- the board (board.c) ---- */
/* /api/pins (GET the board, POST a pin), /api/pins/ID (GET, PATCH, DELETE),
 * /api/pins/ID/chart.svg, /api/pins/export.html. rest NULL: /api/pins. */
enum MHD_Result tt_web_api_pins(tt_web_req *r, const char *rest);

/* ---- questions (ask.c) ---- */
enum MHD_Result tt_web_api_ask(tt_web_req *r);
/* Stop: cancels every running question (then wait with
 * tt_httpd_workers_finish). */
void tt_web_asks_cancel(tt_web *w);

#endif
