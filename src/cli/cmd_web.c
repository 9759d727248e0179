/* cmd_web.c — `tabletalk web DB`: the workbench in a browser. Opens the
 * database and its schema as `ask` does, and the model when one is
 * configured (the page works without one), then serves the page and its
 * API (src/web) on loopback until Ctrl-C, printing the URL with the access
 * token. A non-loopback --host needs a token the user chose. */
#include "cli/cli.h"
#include "httpd/httpd.h"
#include "web/web.h"

#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

#define TT_WEB_DEFAULT_PORT 8765

typedef struct tt_web_cli {
  tt_cli_agent_opts o;
  const char *host;
  long port;
  bool open;
  const char *token;
} tt_web_cli;

static const tt_opt tt_web_own[] = {
    {TT_OPT_PORT, "port", 0, TT_ARG_REQUIRED, "N", "port (8765; 0: any free port)", TT_COMPLETE_NOTHING, NULL,
     "The port (8765; `0` picks a free one)."},
    {TT_OPT_HOST, "host", 0, TT_ARG_REQUIRED, "H", "address to listen on (127.0.0.1)", TT_COMPLETE_NOTHING, NULL,
     "The address to listen on (127.0.0.1). An address other than loopback needs a token you "
     "chose, by `--token` or `TABLETALK_WEB_TOKEN`, else web exits with status 2, and warns that "
     "the page is reachable from the network; 0.0.0.0 or :: accept any Host, the token guarding."},
    {TT_OPT_OPEN, "open", 0, TT_ARG_NONE, NULL, "open the page in the browser (xdg-open)", TT_COMPLETE_NOTHING, NULL,
     "Open the page with xdg-open."},
    {TT_OPT_TOKEN, "token", 0, TT_ARG_REQUIRED, "T", "access token (TABLETALK_WEB_TOKEN; random)", TT_COMPLETE_NOTHING, NULL,
     "The access token (`TABLETALK_WEB_TOKEN`): 16 to 200 letters, digits, -, _, ., ~, random "
     "enough for 64 bits (a shorter or patterned one exits with status 2); by default 32 random "
     "hex digits."},
    /* of the chart options only the size means something here: the page shows
     * every chart as SVG, offers the PNG, and has no terminal preview */
    {TT_OPT_SIZE, "size", 0, TT_ARG_REQUIRED, "WxH", "chart pixels (1200x700)", TT_COMPLETE_NOTHING, NULL,
     TT_DOC_CHART_SIZE},
    {0, NULL, 0, 0, NULL, NULL, 0, NULL, NULL},
};
static const tt_opt_group tt_web_group = {NULL, false, tt_web_own};
static const tt_opt_group *const tt_web_groups[] = {&tt_web_group, &tt_opts_model, &tt_opts_limits,
                                                    &tt_opts_db, NULL};
const tt_cmd_spec tt_cmd_web = {
    .name = "web",
    .usage = "tabletalk web DB [options]",
    .about = "Serve a workbench for DB in the browser: answers streamed as they come, a SQL\n"
             "editor, every row of a result, links, a board of pinned answers. Read-only.\n" TT_DB_IS,
    .groups = tt_web_groups,
    .footer = "Exit codes: 0 after Ctrl-C or SIGTERM, 1 failure, 2 usage.",
    .args = TT_COMPLETE_FILE,
    .doc =
        "Serve a workbench for the database in a browser, from this binary (no build step, no "
        "CDN). Questions: the answer streams in as the model writes it, with each step (model "
        "call, SQL, rows, time), rendered as Markdown (never as HTML), with its SQL, chart (SVG, "
        "PNG download) and table; clarifying questions are answered in place. A SQL editor beside "
        "the question box runs SQL through the same read-only guard (Ctrl+Enter), completes table "
        "and column names, gives the same did-you-mean hints as the agent gets, and keeps a history "
        "per database. Every table is read on the server from the whole result: pages, sorting "
        "(done by the database), the count of every row, and CSV or JSON downloads of every row. "
        "Every thread, run and query has a URL that restores it (its table read again, with a "
        "note when the data changed since). Answers and queries can be pinned to a board per "
        "database, which runs each pinned query again when opened (no model needed) and exports "
        "as one static HTML file. The page lists the threads of the thread store (the same as `ask "
        "--thread`), each run's trace, and the schema, searchable by names, descriptions and "
        "values. The page and its files are embedded at build time; the HTTP API is in "
        "docs/reference/web-api.md.\n\n"
        "No model is needed to start: without one the schema, the SQL editor, results and the "
        "board work, the question box says how to get a model (`tabletalk pull`, or "
        "`--base-url` / `TABLETALK_BASE_URL`), and a model `tabletalk pull` installs meanwhile is "
        "found without a restart. It prints\n\n"
        "tabletalk web: serving DB at http://127.0.0.1:PORT/?token=TOKEN\n\n"
        "on standard output (then \"Press Ctrl-C to stop.\" on standard error). Open that URL: "
        "the token is exchanged for an HttpOnly, SameSite=Strict cookie; scripts may send "
        "`Authorization: Bearer` *TOKEN* instead. Every request's Host must name the address "
        "served and a browser's Origin must be the page's own (403 otherwise), and requests that "
        "change something (POST, PATCH, DELETE) carry the page's CSRF token.\n\n"
        "Several tabs and questions at once work: each question has its own database handle; a "
        "model endpoint answers them in parallel, the in-process model one after another. A tab "
        "that closes its stream cancels its question. SIGINT or SIGTERM cancels running "
        "questions and exits 0.",
};

static int tt_web_option(void *ud, int id, const char *arg) {
  tt_web_cli *w = ud;
  int r = tt_cli_agent_option(id, arg, &w->o, "web");
  if (r >= 0) return r;
  switch (id) {
  case TT_OPT_PORT:
    if (!tt_parse_long(arg, 0, 65535, &w->port))
      return tt_usage_error("web", "--port wants a number from 0 to 65535, not '%s'", arg);
    return 0;
  case TT_OPT_HOST: w->host = arg; return 0;
  case TT_OPT_OPEN: w->open = true; return 0;
  case TT_OPT_TOKEN: w->token = arg; return 0;
  }
  return 0;
}

/* A token goes into a URL: URL-safe characters only, at most 200. */
static bool tt_web_token_ok(const char *t) {
  if (strlen(t) > 200) return false;
  for (const char *p = t; *p; p++)
    if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
          *p == '-' || *p == '_' || *p == '.' || *p == '~'))
      return false;
  return true;
}

typedef struct tt_web_listen {
  const char *db;
  bool open;
  bool no_model; /* say that questions wait for a model */
  pid_t opener; /* xdg-open, while it may still run; else -1 */
} tt_web_listen;

/* Starts xdg-open URL in its own process group, its output to /dev/null, and
 * does not wait for it (it may run the browser in the foreground);
 * posix_spawnp reports a missing xdg-open itself, which is only a note.
 * The child is reaped when the server stops. */
static pid_t tt_web_open_browser(const char *url) {
  posix_spawn_file_actions_t fa;
  posix_spawnattr_t attr;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&fa, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&fa, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
  posix_spawnattr_init(&attr);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP); /* Ctrl-C stops us, not it */
  posix_spawnattr_setpgroup(&attr, 0);
  char *args[] = {"xdg-open", (char *)url, NULL};
  pid_t pid = -1;
  int e = posix_spawnp(&pid, "xdg-open", &fa, &attr, args, environ);
  posix_spawnattr_destroy(&attr);
  posix_spawn_file_actions_destroy(&fa);
  if (e != 0) {
    fprintf(stderr, "tabletalk web: note: cannot run xdg-open (%s); open the URL above yourself\n",
            e == ENOENT ? "not installed?" : strerror(e));
    return -1;
  }
  return pid;
}

static void tt_web_on_listen(void *ud, const char *url) {
  tt_web_listen *l = ud;
  printf("tabletalk web: serving %s at %s\n", l->db, url);
  fflush(stdout);
  if (l->no_model)
    fprintf(stderr, "tabletalk web: no model yet: the schema, SQL and the board work; questions "
                    "start working once `tabletalk pull` installs one (or restart with --base-url "
                    "URL or TABLETALK_BASE_URL for Ollama, llama-server or an API)\n");
  fprintf(stderr, "Press Ctrl-C to stop.\n");
  if (l->open) l->opener = tt_web_open_browser(url);
}

/* The configuration names a model (a file, an endpoint, the pulled one). */
static bool tt_web_model_configured(const tt_config *c) {
  tt_models *m = tt_models_new(c);
  tt_model_choice ch;
  tt_models_choice(m, &ch);
  bool yes = ch.path || ch.url;
  tt_model_choice_free(&ch);
  tt_models_free(m);
  return yes;
}

/* host (maybe "[v6]") is a loopback address. */
static bool tt_web_loopback(const char *host) {
  size_t n = strlen(host);
  return tt_host_is_loopback(host, n);
}

int cmd_web(int argc, char **argv) {
  tt_web_cli w = {.host = "127.0.0.1", .port = TT_WEB_DEFAULT_PORT};
  tt_cli_agent_defaults(&w.o);
  w.o.quiet = true; /* no progress bars from the model on a server */
  w.o.cfg.progress = false; /* no progress bars from the model on a server */
  int rc0 = tt_opts_parse(&tt_cmd_web, argc, argv, 1, tt_web_option, &w);
  if (rc0 == TT_OPTS_GO && argc - optind != 1)
    rc0 = tt_usage_error("web", argc - optind < 1 ? "give a database file"
                                                  : "too many arguments: one database");
  if (rc0 != TT_OPTS_GO) {
    tt_cli_agent_free(&w.o);
    return rc0;
  }
  const char *db_arg = argv[optind];
  w.o.cfg.db = db_arg;
  const char *token = w.token ? w.token : tt_config_get_value(&w.o.cfg, "TABLETALK_WEB_TOKEN");
  bool chosen = token != NULL;
  char random_token[33];
  const char *token_from = w.token ? "--token" : "TABLETALK_WEB_TOKEN";
  if (token && !tt_web_token_ok(token)) {
    tt_cli_agent_free(&w.o);
    return tt_usage_error("web", "the token (%s) must be 16 to 200 letters, digits, '-', '_', '.' "
                                 "or '~' (it goes into a URL)",
                          token_from);
  }
  tt_error weak;
  if (token && !tt_httpd_token_check(token, token_from, &weak)) {
    tt_cli_agent_free(&w.o);
    return tt_cli_error("web", &weak);
  }
  if (!token) {
    tt_random_hex(random_token, 16);
    token = random_token;
  }
  if (!tt_web_loopback(w.host) && !chosen) {
    tt_cli_agent_free(&w.o);
    fprintf(stderr,
            "tabletalk web: --host %s makes the page reachable from other machines, so it "
            "needs a token you chose and share on purpose: set --token or TABLETALK_WEB_TOKEN "
            "(or leave --host out to stay on this machine)\n",
            w.host);
    return TT_EXIT_USAGE;
  }
  if (!tt_web_loopback(w.host))
    fprintf(stderr, "tabletalk web: warning: listening on %s: anyone on the network who has the "
                    "token can read %s through this page\n", w.host, db_arg);

  tt_error err;
  tt_service *svc = NULL;
  bool model_now = false;
  if (tt_config_resolve(&w.o.cfg, &err)) {
    /* a configured model is made now (a bad file is an error at once);
     * without one the page still browses, runs SQL and shows the board,
     * and questions work once one is installed (tabletalk pull) */
    model_now = tt_web_model_configured(&w.o.cfg);
    svc = tt_service_open(&w.o.cfg, TT_SERVICE_SCHEMA | (model_now ? TT_SERVICE_MODEL : 0), &err);
    if (svc && !model_now && !tt_models_check(tt_service_models(svc), &err)) {
      tt_service_free(svc);
      svc = NULL;
    }
  }
  if (!svc) {
    int rc = tt_cli_error("web", &err);
    tt_cli_agent_free(&w.o);
    return rc;
  }
  /* the database as given, a server URI's password masked */
  const tt_db_target *target = tt_service_target(svc);
  tt_web_listen listen = {.db = target->uri ? target->shown : db_arg, .open = w.open,
                          .no_model = !model_now, .opener = -1};
  tt_web_config cfg = {
      .svc = svc,
      .host = w.host,
      .port = (int)w.port,
      .token = token,
      .on_listen = tt_web_on_listen,
      .ud = &listen,
  };
  volatile sig_atomic_t *stop = tt_interrupt_install_server();
  int rc;
  if (tt_web_serve(&cfg, stop, &err) != 0) {
    rc = tt_fail(TT_EXIT_FAIL, "web: %s", tt_error_text(&err));
  } else {
    fprintf(stderr, "tabletalk web: stopped\n");
    rc = TT_EXIT_OK;
  }
  if (listen.opener > 0) waitpid(listen.opener, NULL, WNOHANG); /* no zombie if it is done */
  tt_service_free(svc);
  tt_cli_agent_free(&w.o);
  return rc;
}
