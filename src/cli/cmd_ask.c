/* cmd_ask.c — `tabletalk ask DB "question"`: one question, answered by the
 * agent with the SQL and rows behind the answer. A fresh thread unless
 * --thread names one; a thread whose last question was a clarifying question
 * takes this question as the reply. */
#include "cli/cli.h"

#include <stdlib.h>
#include <string.h>

static const char tt_ask_usage[] =
    "Usage: tabletalk ask DB \"question\" [options]\n"
    "\n"
    "Answer a question about the SQLite file DB: a language model writes SQL,\n"
    "tabletalk runs it read-only and answers with the numbers and the query.\n"
    "\n"
    "Options:\n"
    "      --thread NAME      keep follow-up context under NAME (default: a new\n"
    "                         thread per question); a thread whose last question\n"
    "                         was a clarifying question takes this as the reply\n"
    "      --json             print one JSON object (answer, sql, columns, rows,\n"
    "                         status, clarification, charts, run_id, totals)\n"
    "  -o, --out FILE         write the chart (if the question asks for one) to\n"
    "                         FILE.png or FILE.svg; a second one to FILE-2.png\n"
    "  -q, --quiet            print only the result\n"
    "  -h, --help             show this help\n"
    TT_AGENT_OPTIONS_HELP
    "\n"
    "Exit codes: 0 answered or clarifying question asked, 1 failure (endpoint\n"
    "unreachable, no answer within the budget), 2 usage, 130 interrupted.\n";

int cmd_ask(int argc, char **argv) {
  static const struct option opts[] = {
      TT_AGENT_LONG_OPTIONS,
      {"json", no_argument, NULL, TT_OPT_JSON},
      {"out", required_argument, NULL, 'o'},
      {"quiet", no_argument, NULL, 'q'},
      {"help", no_argument, NULL, 'h'},
      {NULL, 0, NULL, 0},
  };
  tt_cli_agent_opts o;
  tt_cli_agent_defaults(&o);
  int c;
  optind = 1;
  opterr = 0;
  while ((c = getopt_long(argc, argv, ":qho:", opts, NULL)) != -1) {
    int r = tt_cli_agent_option(c, optarg, &o, "ask");
    if (r > 0) return r;
    if (r == 0) continue;
    switch (c) {
    case TT_OPT_JSON: o.json = true; break;
    case 'o':
      if (!tt_cli_chart_file_ok(optarg))
        return tt_usage_error("ask", "--out wants a file name ending in .png or .svg, not '%s'", optarg);
      o.chart_out = optarg;
      break;
    case 'q': o.quiet = true; break;
    case 'h': fputs(tt_ask_usage, stdout); return TT_EXIT_OK;
    case ':': return tt_usage_error("ask", "option '%s' needs a value", argv[optind - 1]);
    default: return tt_usage_error("ask", "unknown option '%s'", argv[optind - 1]);
    }
  }
  if (argc - optind != 2)
    return tt_usage_error("ask", argc - optind < 2 ? "give a database file and a question"
                                                   : "too many arguments; quote the question");
  const char *question = argv[optind + 1];
  if (!*question) return tt_usage_error("ask", "the question is empty");

  tt_cli_env env;
  int rc = tt_cli_env_open(&env, argv[optind], &o);
  if (rc) {
    tt_cli_env_close(&env);
    return rc;
  }
  char *thread = NULL;
  if (o.thread) {
    thread = tt_xstrdup(o.thread);
  } else {
    char rnd[9];
    tt_random_hex(rnd, 4);
    thread = tt_xasprintf("ask-%s", rnd);
  }
  volatile sig_atomic_t *cancel = tt_interrupt_install();
  tt_ui *ui = tt_ui_new(o.quiet, o.json, cancel);
  tt_ui_set_preview(ui, !o.no_preview);
  tt_agent_hooks hooks;
  tt_ui_hooks(ui, &hooks);
  tt_run run;
  tt_ask_result info;
  tt_session_ask(env.session, thread, question, &hooks, &run, &info);
  tt_ui_done(ui);
  tt_ui_print_result(ui, &run, &info, thread);
  rc = tt_exit_for_run(&run);
  tt_ui_free(ui);
  tt_run_free(&run);
  free(thread);
  tt_cli_env_close(&env);
  return rc;
}
