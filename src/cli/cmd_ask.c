/* cmd_ask.c — `tabletalk ask DB "question"`: one question, answered by the
 * agent with the SQL and rows behind the answer, for people (a box and a
 * table) or for pipelines (CSV, TSV, JSON, Markdown, or the SQL alone). A
 * fresh thread unless --thread names one; a thread whose last question was
 * a clarifying question takes this question as the reply. */
#include "cli/cli.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char tt_ask_usage[] =
    "Usage: tabletalk ask DB \"question\" [options]\n"
    "       tabletalk ask DB - [options]    (read the question from standard input)\n"
    "\n"
    "Answer a question about DB: a language model writes SQL,\n"
    "tabletalk runs it read-only and answers with the numbers and the query.\n"
    "DB is a SQLite file, a .csv or .tsv file, or a folder of them (a table\n"
    "per file, loaded in memory; nothing is written beside them).\n"
    "\n"
    "Options:\n"
    "      --thread NAME      keep follow-up context under NAME (default: a new\n"
    "                         thread per question); a thread whose last question\n"
    "                         was a clarifying question takes this as the reply\n"
    "  -f, --format FMT       table (default: the answer, SQL and first rows),\n"
    "                         csv or tsv (the rows; the answer on stderr), json\n"
    "                         (one object: answer, sql, status, verified,\n"
    "                         unbacked_numbers, refusal, charts, run_id, totals,\n"
    "                         columns, rows) or markdown\n"
    "      --json             the same as --format json\n"
    "      --max-rows N       rows of the result printed (table: 10; the other\n"
    "                         formats: every row unless this is given)\n"
    "      --sql-only         print only the final SQL (for pipelines)\n"
    "  -o, --out FILE         write the chart (if the question asks for one) to\n"
    "                         FILE.png or FILE.svg; a second one to FILE-2.png\n"
    "  -q, --quiet            print only the result\n"
    "  -h, --help             show this help\n"
    TT_AGENT_OPTIONS_HELP
    "\n"
    "Exit codes: 0 answered or clarifying question asked, 1 failure (endpoint\n"
    "unreachable, no answer within the budget), 2 usage, 3 the model tried to\n"
    "change the database and was refused, 130 interrupted.\n";

int cmd_ask(int argc, char **argv) {
  static const struct option opts[] = {
      TT_AGENT_LONG_OPTIONS,
      {"json", no_argument, NULL, TT_OPT_JSON},
      {"format", required_argument, NULL, 'f'},
      {"max-rows", required_argument, NULL, TT_OPT_MAX_ROWS},
      {"sql-only", no_argument, NULL, TT_OPT_SQL_ONLY},
      {"out", required_argument, NULL, 'o'},
      {"quiet", no_argument, NULL, 'q'},
      {"help", no_argument, NULL, 'h'},
      {NULL, 0, NULL, 0},
  };
  tt_cli_agent_opts o;
  tt_cli_agent_defaults(&o);
  tt_ui_out out = {.format = TT_FMT_TABLE};
  int c;
  optind = 1;
  opterr = 0;
  while ((c = getopt_long(argc, argv, ":qho:f:", opts, NULL)) != -1) {
    int r = tt_cli_agent_option(c, optarg, &o, "ask");
    if (r > 0) return r;
    if (r == 0) continue;
    switch (c) {
    case TT_OPT_JSON: out.format = TT_FMT_JSON; break;
    case 'f':
      if (!tt_format_parse(optarg, &out.format))
        return tt_usage_error("ask", "unknown format '%s' (use table, csv, tsv, json or markdown)",
                              optarg);
      break;
    case TT_OPT_MAX_ROWS:
      if (!tt_parse_long(optarg, 1, 100000000, &out.max_rows))
        return tt_usage_error("ask", "--max-rows wants a number from 1 to 100000000, not '%s'", optarg);
      break;
    case TT_OPT_SQL_ONLY: out.sql_only = true; break;
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
  char *from_stdin = NULL;
  if (strcmp(question, "-") == 0) {
    size_t len;
    bool too_long;
    from_stdin = tt_read_stream(STDIN_FILENO, 16000, &len, &too_long);
    if (!from_stdin) return tt_fail(TT_EXIT_FAIL, "cannot read the question from standard input");
    if (too_long) {
      free(from_stdin);
      return tt_usage_error("ask", "the question on standard input is longer than 16,000 bytes");
    }
    while (len && (from_stdin[len - 1] == '\n' || from_stdin[len - 1] == '\r' ||
                   from_stdin[len - 1] == ' '))
      from_stdin[--len] = '\0';
    question = from_stdin;
  }
  if (!*question) {
    free(from_stdin);
    return tt_usage_error("ask", "the question is empty");
  }
  /* output for programs: the answer is not streamed onto stdout */
  o.json = out.format != TT_FMT_TABLE || out.sql_only;

  tt_cli_env env;
  int rc = tt_cli_env_open(&env, argv[optind], &o);
  if (rc) {
    tt_cli_env_close(&env);
    free(from_stdin);
    return rc;
  }
  out.reply_db = argv[optind];
  out.db = env.db;
  out.timeout_s = o.sql_timeout_s;
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
  tt_ui_set_thinking(ui, o.show_thinking);
  tt_agent_hooks hooks;
  tt_ui_hooks(ui, &hooks);
  tt_run run;
  tt_ask_result info;
  tt_session_ask(env.session, thread, question, &hooks, &run, &info);
  tt_ui_done(ui);
  rc = tt_ui_print_result(ui, &run, &info, thread, &out);
  if (o.chart_out && run.ncharts == 0 && run.status != TT_RUN_CLARIFY && !o.quiet)
    tt_fail(0, "note: no chart was made for this question, so nothing was written to %s (ask "
               "for a chart, plot or graph to get one)", o.chart_out);
  tt_ui_free(ui);
  tt_run_free(&run);
  free(thread);
  free(from_stdin);
  tt_cli_env_close(&env);
  return rc;
}
