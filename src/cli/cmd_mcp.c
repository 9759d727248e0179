/* cmd_mcp.c — `tabletalk serve-mcp DB`: the database as an MCP server over
 * stdio (for Claude Code, Claude Desktop and other clients that start the
 * server themselves) or Streamable HTTP with --http. Opens the database
 * read-only and reads its schema in the background (the handshake does not
 * wait for slow views); the model for ask_database is
 * made on the first question, so run_sql and describe_schema start fast
 * and need no model at all. */
#include "cli/cli.h"
#include "httpd/httpd.h"
#include "mcp/mcp.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct tt_mcp_cli {
  tt_cli_agent_opts o;
  tt_mcp_config cfg;
  const char *http;
  const char **origins;
  size_t norigins;
} tt_mcp_cli;

static const tt_opt tt_mcp_own[] = {
    {TT_OPT_HTTP, "http", 0, TT_ARG_REQUIRED, "[HOST:]PORT", "serve Streamable HTTP at /mcp instead", TT_COMPLETE_NOTHING, NULL,
     "Serve Streamable HTTP at http://*HOST*:*PORT*/mcp instead of stdio, on 127.0.0.1 unless "
     "told otherwise (with a warning when there is no token). Requests whose Host is not this "
     "machine, and browser Origins other than loopback ones, are refused; `Authorization: "
     "Bearer` *TOKEN* is required when `TABLETALK_MCP_TOKEN` is set (16 or more random "
     "characters: a shorter or patterned one exits with status 2)."},
    {TT_OPT_ALLOW_ORIGIN, "allow-origin", 0, TT_ARG_REQUIRED, "URL", "let browser pages from URL call it", TT_COMPLETE_NOTHING, NULL,
     "Let browser pages from *URL* call the server (repeatable)."},
    {TT_OPT_MAX_MESSAGE, "max-message", 0, TT_ARG_REQUIRED, "BYTES", "largest message accepted (1048576)", TT_COMPLETE_NOTHING, NULL,
     "The largest message accepted, in bytes (1048576); a larger one is refused without stopping "
     "the server."},
    {TT_OPT_WORKERS, "workers", 0, TT_ARG_REQUIRED, "N", "questions answered at once over stdio (4)", TT_COMPLETE_NOTHING, NULL,
     "Questions answered at once over stdio (4)."},
    {TT_OPT_NO_CACHE, "no-cache", 0, TT_ARG_NONE, NULL, "run every run_sql, even a repeat", TT_COMPLETE_NOTHING, NULL,
     "Run every run_sql statement, even when an identical one ran on the unchanged database "
     "before (by default its result is reused and marked `cached: true`)."},
    {0, NULL, 0, 0, NULL, NULL, 0, NULL, NULL},
};
static const tt_opt_group tt_mcp_group = {NULL, false, tt_mcp_own};
static const tt_opt_group *const tt_mcp_groups[] = {&tt_mcp_group, &tt_opts_model, &tt_opts_limits, &tt_opts_db, NULL};
const tt_cmd_spec tt_cmd_mcp = {
    .name = "serve-mcp",
    .usage = "tabletalk serve-mcp DB [options]",
    .about = "Serve DB read-only to MCP clients: the tools ask_database, run_sql and\n"
             "describe_schema, a resource per table, prompts.\n" TT_DB_IS "\n"
             "stdio unless --http: claude mcp add tabletalk -- tabletalk serve-mcp DB",
    .groups = tt_mcp_groups,
    .footer = "Exit codes: 0 after the input ends or SIGINT/SIGTERM, 1 failure, 2 usage.",
    .args = TT_COMPLETE_FILE,
    .doc =
        "Serve the database read-only to MCP clients (Claude Code, Claude Desktop, any MCP SDK "
        "client) over stdin and stdout, or over Streamable HTTP with `--http`. Tools: "
        "ask_database (the agent), run_sql (one guarded statement, 50 rows and the total count), "
        "describe_schema (the cards); a resource per table and one for the schema (and the "
        "knowledge file as tabletalk://knowledge); the prompts explore_database and "
        "analyze_table. Speaks MCP revision 2026-07-28 and the handshake revisions 2025-11-25, "
        "2025-06-18 and 2025-03-26. The model is loaded on the first question; run_sql and "
        "describe_schema need none. Ends at end of input, SIGINT or SIGTERM. For Claude Code:\n\n"
        "claude mcp add tabletalk -- tabletalk serve-mcp /path/to/db.sqlite\n\n"
        "Exit status: 0 after the input ends or SIGINT/SIGTERM, 1 failure, 2 usage.",
};

static int tt_mcp_option(void *ud, int id, const char *arg) {
  tt_mcp_cli *m = ud;
  int r = tt_cli_agent_option(id, arg, &m->o, "serve-mcp");
  if (r >= 0) return r;
  long n;
  switch (id) {
  case TT_OPT_HTTP: m->http = arg; return 0;
  case TT_OPT_ALLOW_ORIGIN: m->origins[m->norigins++] = arg; return 0;
  case TT_OPT_MAX_MESSAGE:
    if (!tt_parse_long(arg, 1024, 1L << 30, &n))
      return tt_usage_error("serve-mcp", "--max-message wants bytes from 1024, not '%s'", arg);
    m->cfg.max_message = (size_t)n;
    return 0;
  case TT_OPT_WORKERS:
    if (!tt_parse_long(arg, 1, 64, &n))
      return tt_usage_error("serve-mcp", "--workers wants a number from 1 to 64, not '%s'", arg);
    m->cfg.workers = (int)n;
    return 0;
  case TT_OPT_NO_CACHE: m->cfg.no_cache = true; return 0;
  }
  return 0;
}

static void tt_mcp_on_listen(void *ud, const char *url) {
  const char *db = ud;
  fprintf(stderr, "tabletalk: serving %s over MCP (Streamable HTTP) at %s\n", db, url);
  fflush(stderr);
}

/* "PORT", ":PORT", "HOST:PORT" or "[V6]:PORT". */
static bool tt_parse_listen(const char *s, char *host, size_t hostsz, long *port) {
  const char *colon = strrchr(s, ':');
  const char *p = colon ? colon + 1 : s;
  if (!tt_parse_long(p, 0, 65535, port)) return false;
  size_t n = colon ? (size_t)(colon - s) : 0;
  if (n >= hostsz) return false;
  memcpy(host, s, n);
  host[n] = '\0';
  if (!n) snprintf(host, hostsz, "127.0.0.1");
  return true;
}

int cmd_serve_mcp(int argc, char **argv) {
  tt_mcp_cli m = {.cfg = tt_mcp_default_config()};
  tt_cli_agent_defaults(&m.o);
  m.o.quiet = true; /* no progress bars from the model on a server */
  m.o.cfg.progress = false;
  m.origins = tt_xcalloc((size_t)argc + 1, sizeof *m.origins);
  int rc = tt_opts_parse(&tt_cmd_mcp, argc, argv, 1, tt_mcp_option, &m);
  if (rc == TT_OPTS_GO && argc - optind != 1)
    rc = tt_usage_error("serve-mcp", argc - optind < 1 ? "give a database file"
                                                       : "too many arguments: one database");
  char host[256];
  long port = 0;
  if (rc == TT_OPTS_GO && m.http && !tt_parse_listen(m.http, host, sizeof host, &port))
    rc = tt_usage_error("serve-mcp", "--http wants [HOST:]PORT, e.g. 127.0.0.1:8765, not '%s'",
                        m.http);
  if (rc != TT_OPTS_GO) {
    free(m.origins);
    tt_cli_agent_free(&m.o);
    return rc;
  }
  const char *db_arg = argv[optind];
  m.o.cfg.db = db_arg;
  const char *token = m.http ? tt_config_get_value(&m.o.cfg, "TABLETALK_MCP_TOKEN") : NULL;
  tt_error err;
  if (token && *token && !tt_httpd_token_check(token, "TABLETALK_MCP_TOKEN", &err)) {
    rc = tt_cli_error("serve-mcp", &err);
    free(m.origins);
    tt_cli_agent_free(&m.o);
    return rc;
  }
  /* a file that is not a database, a bad --schemas or knowledge file fail
   * here; the schema is read in the background, so that the server answers
   * its client at once, and the model is made on the first question */
  tt_service *svc = NULL;
  if (tt_config_resolve(&m.o.cfg, &err))
    svc = tt_service_open(&m.o.cfg, TT_SERVICE_SCHEMA | TT_SERVICE_BACKGROUND, &err);
  if (svc && !tt_models_check(tt_service_models(svc), &err)) {
    tt_service_free(svc);
    svc = NULL;
  }
  tt_mcp_server *srv = NULL;
  if (svc) {
    m.cfg.svc = svc;
    srv = tt_mcp_server_new(&m.cfg, &err);
  }
  if (!srv) {
    rc = tt_cli_error("serve-mcp", &err);
  } else {
    volatile sig_atomic_t *stop = tt_interrupt_install_server();
    if (m.http) {
      tt_mcp_http_opts ho = {
          .host = host,
          .port = (int)port,
          .token = token,
          .origins = m.origins,
          .norigins = m.norigins,
          .on_listen = tt_mcp_on_listen,
          .ud = (void *)db_arg,
      };
      bool loopback = tt_host_is_loopback(host, strlen(host));
      if (!loopback && !ho.token)
        fprintf(stderr,
                "tabletalk: warning: serving %s on %s without a token: anyone who can reach "
                "this address can read the database (set TABLETALK_MCP_TOKEN)\n",
                db_arg, host);
      rc = TT_EXIT_OK;
      if (tt_mcp_serve_http(srv, &ho, stop, &err) != 0)
        rc = tt_fail(TT_EXIT_FAIL, "--http %s: %s", m.http, tt_error_text(&err));
    } else {
      if (isatty(STDERR_FILENO))
        fprintf(stderr,
                "tabletalk: serving %s over MCP on stdin/stdout; an MCP client "
                "starts this command itself, see `tabletalk serve-mcp --help`\n",
                db_arg);
      rc = tt_mcp_serve_stdio(srv, STDIN_FILENO, STDOUT_FILENO, stop) ? TT_EXIT_FAIL : TT_EXIT_OK;
    }
  }
  tt_mcp_server_free(srv);
  tt_service_free(svc);
  tt_cli_agent_free(&m.o);
  free(m.origins);
  return rc;
}
