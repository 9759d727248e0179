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

#include "store/store.h"

/* A model for one question, or NULL with the reason in err. */
typedef tt_llm *(*tt_web_llm_factory)(void *ud, tt_buf *err);

typedef struct tt_web_config {
  const char *db_path;     /* what tt_db_open takes (a URI keeps its password) */
  const char *db_shown;    /* the database as shown and as the thread store
                            * knows it (absolute path; URI without password) */
  const tt_schema *schema; /* read once at start; borrowed, read-only */
  tt_agent_opts agent_opts;
  const char *state_dir;   /* threads, traces, charts */
  tt_chart_files charts;   /* size of the charts drawn */
  /* The model: make_llm makes one per question (HTTP endpoints: questions
   * run in parallel); else the one llm answers one question at a time (the
   * in-process engine). */
  tt_web_llm_factory make_llm;
  void *llm_ud;
  tt_llm *llm;
  const char *model_name;  /* shown by /api/session */
  const char *host;        /* address to bind (127.0.0.1) */
  int port;                /* 0: a free port */
  const char *token;       /* the access token (required) */
  /* told the page's URL (with ?token=) once listening */
  void (*on_listen)(void *ud, const char *url);
  void *ud;
} tt_web_config;

/* Serves until *stop is set, then cancels running questions and returns
 * 0; 1 with the reason in err when it cannot listen. */
int tt_web_serve(const tt_web_config *cfg, volatile sig_atomic_t *stop, tt_buf *err);

#endif
