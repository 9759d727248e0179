/* main.c — the tabletalk command: global options, the command table and
 * dispatch. Each command lives in its own cmd_<name>.c with its help text. */
#include "cli/cli.h"

#include <locale.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "tt_version.h"

static const tt_command tt_commands[] = {
    {"ask", "answer one question about a database (the agent)", cmd_ask, &tt_cmd_ask},
    {"chat", "ask questions and follow-ups, with line editing", cmd_chat, &tt_cmd_chat},
    {"sql", "run one read-only SQL query and print the rows", cmd_sql, &tt_cmd_sql},
    {"chart", "draw a chart of one query's rows (PNG, SVG, terminal)", cmd_chart, &tt_cmd_chart},
    {"schema", "show tables, columns, keys and sample rows (the model's view)", cmd_schema, &tt_cmd_schema},
    {"learn", "add an example question and its SQL to the knowledge file", cmd_learn, &tt_cmd_learn},
    {"web", "serve a page in the browser to ask questions (local)", cmd_web, &tt_cmd_web},
    {"serve-mcp", "serve the database to MCP clients over stdio or HTTP", cmd_serve_mcp, &tt_cmd_mcp},
    {"eval", "measure accuracy (Spider), behaviours and cost with a model", cmd_eval, &tt_cmd_eval},
    {"trace", "show the steps of a run (latest, list, RUN_ID)", cmd_trace, &tt_cmd_trace},
    {"pull", "download a model (GGUF) and make it the default", cmd_pull, &tt_cmd_pull},
    {"models", "list installed models", cmd_models, &tt_cmd_models},
    {"bench", "replay a conversation on the local engine and time it", cmd_bench, &tt_cmd_bench},
    {"doctor", "probe a model endpoint or file: what works, what tabletalk adapts", cmd_doctor, &tt_cmd_doctor},
    {"gc", "remove traces and charts older than an age (TABLETALK_KEEP)", cmd_gc, &tt_cmd_gc},
    {"completion", "print a bash, zsh or fish completion script", cmd_completion, &tt_cmd_completion},
};

const tt_command *tt_cli_commands(size_t *n) {
  *n = sizeof tt_commands / sizeof tt_commands[0];
  return tt_commands;
}

static void tt_print_help(FILE *f) {
  fprintf(f,
          "tabletalk %s — ask a database questions in plain language\n"
          "Usage: tabletalk <command> [options] [arguments]\n"
          "\n"
          "Commands:\n",
          TT_VERSION);
  size_t ncmd = sizeof tt_commands / sizeof tt_commands[0], width = 0;
  for (size_t i = 0; i < ncmd; i++)
    if (strlen(tt_commands[i].name) > width) width = strlen(tt_commands[i].name);
  for (size_t i = 0; i < ncmd; i++) /* one column for every summary */
    fprintf(f, "  %-*s  %s\n", (int)width, tt_commands[i].name, tt_commands[i].summary);
  fprintf(f,
          "\n"
          "  -h, --help  this help (COMMAND --help: one command)   --version  the version\n"
          "Queries run read-only: SQLite refuses writes, ATTACH, PRAGMA, extensions.\n"
          "Exit codes: 0 ok, 1 failure, 2 usage, 3 refused, 4 stopped by a limit.\n");
}

int tt_exit_for(tt_errkind kind) {
  switch (kind) {
  case TT_OK: return TT_EXIT_OK;
  case TT_ERR_REFUSED: return TT_EXIT_REFUSED;
  case TT_ERR_TIMEOUT:
  case TT_ERR_LIMIT:
  case TT_ERR_BUSY: return TT_EXIT_LIMIT;
  case TT_ERR_CANCELLED: return 130;
  case TT_ERR_CONFIG: return TT_EXIT_USAGE;
  case TT_ERR_SQL:
  case TT_ERR_IO:
  case TT_ERR_CONNECT:
  case TT_ERR_HTTP:
  case TT_ERR_PROTOCOL:
  case TT_ERR_UNAVAILABLE: return TT_EXIT_FAIL;
  }
  return TT_EXIT_FAIL;
}

static void tt_print_escaped(FILE *f, const char *prefix, const char *fmt, va_list ap) TT_PRINTF(3, 0);

static void tt_print_escaped(FILE *f, const char *prefix, const char *fmt, va_list ap) {
  tt_buf raw = TT_BUF_INIT, safe = TT_BUF_INIT;
  tt_buf_vprintf(&raw, fmt, ap);
  tt_escape_terminal(&safe, tt_buf_cstr(&raw), raw.len, NULL);
  fprintf(f, "%s%s\n", prefix, tt_buf_cstr(&safe));
  tt_buf_free(&raw);
  tt_buf_free(&safe);
}

int tt_fail(int code, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  tt_print_escaped(stderr, "tabletalk: ", fmt, ap);
  va_end(ap);
  return code;
}

int tt_usage_error(const char *cmd, const char *fmt, ...) {
  char prefix[64];
  snprintf(prefix, sizeof prefix, "tabletalk %s: ", cmd);
  va_list ap;
  va_start(ap, fmt);
  tt_print_escaped(stderr, prefix, fmt, ap);
  va_end(ap);
  fprintf(stderr, "Try 'tabletalk %s --help'.\n", cmd);
  return TT_EXIT_USAGE;
}

/* A URI with a password in the arguments: a copy is used from now on and
 * the original is overwritten (the password as "***", NUL-padded), since
 * /proc/PID/cmdline shows the original to every local user. Other
 * arguments are used as they are. */
/* The copies tt_scrub_arg made, kept reachable until the command is done
 * (it may exit() while using them). */
static char **tt_scrubbed;
static size_t tt_nscrubbed;

static void tt_free_scrubbed(void) {
  for (size_t i = 0; i < tt_nscrubbed; i++) free(tt_scrubbed[i]);
  free(tt_scrubbed);
  tt_scrubbed = NULL;
  tt_nscrubbed = 0;
}

static char *tt_scrub_arg(char *a) {
  const char *uri = strncmp(a, "--", 2) == 0 && strchr(a, '=') ? strchr(a, '=') + 1 : a;
  char *red = tt_db_uri_redacted(uri);
  if (!red) return a;
  char *copy = tt_xstrdup(a);
  tt_scrubbed = tt_xrealloc(tt_scrubbed, (tt_nscrubbed + 1) * sizeof *tt_scrubbed);
  tt_scrubbed[tt_nscrubbed++] = copy;
  char *at = a + (uri - a);
  strncpy(at, red, strlen(at)); /* every byte of the original rewritten */
  free(red);
  return copy;
}

/* Whether the word after "--" in arg names --db-url as getopt_long reads
 * it: the whole name or a prefix that no other option of spec shares. */
static bool tt_is_db_url_opt(const tt_cmd_spec *spec, const char *arg) {
  if (strncmp(arg, "--", 2) != 0) return false;
  size_t n = strcspn(arg + 2, "=");
  if (n < 2 || n > 6 || strncmp(arg + 2, "db-url", n) != 0) return false;
  for (size_t g = 0; spec->groups[g]; g++)
    for (const tt_opt *o = spec->groups[g]->opts; o->name; o++)
      if (o->id != TT_OPT_DB_URL && strncmp(o->name, arg + 2, n) == 0) return false;
  return true;
}

char **tt_cli_db_url_args(const tt_cmd_spec *spec, int *argc, char **argv, int *rc) {
  bool takes = false;
  for (size_t g = 0; spec && spec->groups[g]; g++)
    for (const tt_opt *o = spec->groups[g]->opts; o->name; o++)
      if (o->id == TT_OPT_DB_URL) takes = true;
  char **out = tt_xcalloc((size_t)*argc + 2, sizeof *out);
  char *url = NULL;
  int k = 0;
  out[k++] = argv[0];
  k++; /* where the URL goes */
  bool options = true;
  for (int i = 1; i < *argc; i++) {
    char *a = argv[i];
    if (options && strcmp(a, "--") == 0) options = false;
    if (!(options && takes && tt_is_db_url_opt(spec, a))) {
      out[k++] = tt_scrub_arg(a);
      continue;
    }
    char *v = strchr(a, '=') ? tt_scrub_arg(a) : NULL;
    if (v) v = strchr(v, '=') + 1;
    else if (i + 1 < *argc) v = tt_scrub_arg(argv[++i]);
    else {
      *rc = tt_usage_error(spec->name, "option '%s' needs a value", a);
      free(out);
      return NULL;
    }
    if (url) {
      *rc = tt_usage_error(spec->name, "--db-url is given twice; give one database");
      free(out);
      return NULL;
    }
    tt_db_target t;
    tt_error terr;
    bool server = tt_db_target_parse(v, &t, &terr) && t.uri;
    tt_db_target_free(&t);
    if (!server) {
      *rc = tt_usage_error(spec->name, "--db-url wants a postgres:// or postgresql:// URI "
                                       "(postgresql:// alone: libpq's defaults and PGHOST, "
                                       "PGUSER...); give a SQLite or CSV file as DB instead");
      free(out);
      return NULL;
    }
    url = v;
  }
  if (url) out[1] = url;
  else {
    memmove(out + 1, out + 2, (size_t)(k - 2) * sizeof *out);
    k--;
  }
  out[k] = NULL;
  *argc = k;
  return out; /* kept for the life of the process, as argv is */
}

int main(int argc, char **argv) {
  if (argc == 2 && (strcmp(argv[1], "--version") == 0 || strcmp(argv[1], "-V") == 0)) {
    /* before the locale is set: that reads the locale's files (a sixth
     * of the instructions of this whole command), and these bytes are
     * ASCII */
    printf("tabletalk %s (SQLite %s, jansson %s)\n", TT_VERSION, sqlite3_libversion(),
           JANSSON_VERSION);
    return TT_EXIT_OK;
  }
  /* Cells are UTF-8 whatever the user's locale; widths need a UTF-8 ctype. */
  if (!setlocale(LC_CTYPE, "C.UTF-8")) setlocale(LC_CTYPE, "");
  signal(SIGPIPE, SIG_IGN); /* a closed pipe is a write error, not a kill */

  if (argc < 2) {
    tt_print_help(stderr);
    return TT_EXIT_USAGE;
  }
  const char *name = argv[1];
  if (strcmp(name, "-h") == 0 || strcmp(name, "--help") == 0 || strcmp(name, "help") == 0) {
    if (argc > 2 && strcmp(name, "help") == 0) {
      char *sub[] = {argv[2], "--help", NULL};
      for (size_t i = 0; i < sizeof tt_commands / sizeof tt_commands[0]; i++)
        if (strcmp(tt_commands[i].name, argv[2]) == 0) return tt_commands[i].run(2, sub);
    }
    tt_print_help(stdout);
    return TT_EXIT_OK;
  }
  if (strcmp(name, "--generate-man-page") == 0) /* the build's, not listed */
    return tt_cli_man_main(argc - 1, argv + 1);
  if (strcmp(name, "--version") == 0 || strcmp(name, "-V") == 0) {
    printf("tabletalk %s (SQLite %s, jansson %s)\n", TT_VERSION, sqlite3_libversion(),
           JANSSON_VERSION);
    return TT_EXIT_OK;
  }
  for (size_t i = 0; i < sizeof tt_commands / sizeof tt_commands[0]; i++)
    if (strcmp(tt_commands[i].name, name) == 0) {
      int n = argc - 1, rc = TT_EXIT_USAGE;
      /* kept in a static: a command may exit() (--help) while using it */
      static char **args;
      args = tt_cli_db_url_args(tt_commands[i].spec, &n, argv + 1, &rc);
      if (args) rc = tt_commands[i].run(n, args);
      free(args);
      args = NULL;
      tt_free_scrubbed();
      tt_llm_http_preload_wait(); /* never exit beside libcurl's start (curl_api.c) */
      return rc;
    }
  if (name[0] == '-') return tt_fail(TT_EXIT_USAGE, "unknown option '%s'; see 'tabletalk --help'", name);
  return tt_fail(TT_EXIT_USAGE, "unknown command '%s'; see 'tabletalk --help'", name);
}
