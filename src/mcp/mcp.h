/* mcp.h — public face of the MCP layer: tabletalk as a Model Context
 * Protocol server. It speaks JSON-RPC 2.0 with the 2026-07-28 revision
 * (stateless, everything per request) and the handshake revisions
 * 2025-11-25, 2025-06-18 and 2025-03-26, over stdio and Streamable HTTP.
 * It serves three tools (ask_database through the agent, run_sql and
 * describe_schema through the guarded executor and the cards), a resource
 * per table, a resource for the whole schema, and prompts.
 *
 * The server never writes to the database and never prints anything but
 * protocol messages on its output; diagnostics go to stderr. */
#ifndef TT_MCP_H
#define TT_MCP_H

#include <signal.h>

#include "session/session.h"

typedef struct tt_mcp_server tt_mcp_server;

typedef struct tt_mcp_config {
  /* the database (read-only), its schema (read in the background from the
   * start, so that the server answers at once), the models (made on the
   * first question: run_sql and describe_schema never need one) and the
   * state folder of ask_database's threads and traces. Borrowed. */
  tt_service *svc;
  size_t max_message;         /* bytes in one incoming message */
  int workers;                /* stdio requests served at once */
  int preview_rows;           /* rows a result shows */
  bool no_cache;              /* run every run_sql, even unchanged repeats */
} tt_mcp_config;

tt_mcp_config tt_mcp_default_config(void);

/* The server borrows everything in cfg; it must outlive the server. */
tt_mcp_server *tt_mcp_server_new(const tt_mcp_config *cfg, tt_error *err);
void tt_mcp_server_free(tt_mcp_server *s);

/* Serves newline-delimited JSON-RPC read from in_fd, answering on out_fd,
 * until in_fd ends (work already accepted is finished) or *stop is set
 * (work in progress is cancelled). Returns 0, or 1 when the output broke. */
int tt_mcp_serve_stdio(tt_mcp_server *s, int in_fd, int out_fd, volatile sig_atomic_t *stop);

typedef struct tt_mcp_http_opts {
  const char *host;            /* address to bind (127.0.0.1) */
  int port;                    /* 0: any free port */
  const char *token;           /* bearer token required of clients (NULL: none) */
  const char *const *origins;  /* browser origins allowed besides loopback ones */
  size_t norigins;
  /* told the URL once listening (e.g. to print it) */
  void (*on_listen)(void *ud, const char *url);
  void *ud;
} tt_mcp_http_opts;

/* Serves Streamable HTTP at http://HOST:PORT/mcp until *stop is set.
 * Returns 0, or 1 with the reason in err when it cannot listen. */
int tt_mcp_serve_http(tt_mcp_server *s, const tt_mcp_http_opts *o, volatile sig_atomic_t *stop,
                      tt_error *err);

#endif
