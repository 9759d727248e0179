/* web.h — public face of the web layer: `tabletalk web`, the agent in a
 * browser. An HTTP server on libmicrohttpd serves the page embedded at
 * build time (web/, see assets.h) and a JSON API (docs/reference/web-api.md): the
 * session, questions streamed as server-sent events, guarded SQL, the
 * threads of the thread store, the schema, traces and charts.
 *
 * Guards: a token printed at start is exchanged for an HttpOnly,
 * SameSite=Strict cookie (or sent as a bearer token by scripts); Host and
 * Origin must name the address served (no DNS rebinding); state-changing
 * requests carry a CSRF token. The database is only ever read. */
#ifndef TT_WEB_H
#define TT_WEB_H

#include <signal.h>

#include "session/session.h"

typedef struct tt_web_config {
  /* the database, its schema, the model and the state folder: each
   * question gets a session of its own on it, so questions of several tabs
   * run side by side (the model's backend decides whether they share one
   * model, one question at a time, or each have one). Borrowed. */
  tt_service *svc;
  const char *host;        /* address to bind (127.0.0.1) */
  int port;                /* 0: a free port */
  const char *token;       /* the access token (required) */
  /* told the page's URL (with ?token=) once listening */
  void (*on_listen)(void *ud, const char *url);
  void *ud;
} tt_web_config;

/* Serves until *stop is set, then cancels running questions and returns
 * 0; 1 with the reason in err when it cannot listen. */
int tt_web_serve(const tt_web_config *cfg, volatile sig_atomic_t *stop, tt_error *err);

#endif
