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

#include "store/store.h"

typedef struct tt_mcp_server tt_mcp_server;

/* Makes the model the first time ask_database needs one (loading a local
 * model costs seconds and memory that run_sql never needs). Returns NULL
 * with the reason, in words for the user, in err. */
typedef tt_llm *(*tt_mcp_llm_factory)(void *ud, tt_buf *err);

typedef struct tt_mcp_config {
  const char *db_path;        /* absolute path of the database */
  const char *knowledge;      /* --knowledge FILE, or NULL: the file beside the database */
  const char *cache_dir;      /* where the value index is cached */
  tt_db_opts db_opts;         /* each run_sql handle (immutable, timeout) */
  const tt_schema *schema;    /* the cards (borrowed); NULL: the server reads
                               * them itself, in the background from the start,
                               * so that it answers at once */
  const char *state_dir;      /* threads and traces of ask_database */
  tt_agent_opts agent_opts;
  tt_mcp_llm_factory make_llm;
  void *llm_ud;
  size_t max_message;         /* bytes in one incoming message */
  int workers;                /* stdio requests served at once */
  int preview_rows;           /* rows a result shows */
  bool no_cache;              /* run every run_sql, even unchanged repeats */
} tt_mcp_config;

tt_mcp_config tt_mcp_default_config(void);

/* The server borrows everything in cfg; it must outlive the server. */
tt_mcp_server *tt_mcp_server_new(const tt_mcp_config *cfg, tt_buf *err);
/* Frees the model if the server made one. */
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
                      tt_buf *err);

#endif
