/* cmd_ask.c — `tabletalk ask DB "question"`: one question, answered by the
 * agent with the SQL and rows behind the answer, for people (a box and a
 * table) or for pipelines (CSV, TSV, JSON, Markdown, or the SQL alone). A
 * fresh thread unless --thread names one; a thread whose last question was
 * a clarifying question takes this question as the reply. */
#include "cli/cli.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct tt_ask_cli {
  tt_cli_agent_opts o;
  tt_ui_out out;
} tt_ask_cli;

static const tt_opt tt_ask_own[] = {
    {TT_OPT_FORMAT, "format", 'f', TT_ARG_REQUIRED, "FMT", "table, csv, tsv, json or markdown", TT_COMPLETE_WORDS,
     "table csv tsv json markdown",
     "Output for pipelines: `csv` and `tsv` print the rows alone (the answer goes to stderr), "
     "`markdown` the answer, the SQL in a fence and the rows as a table, `json` one object "
     "(above); `table`, for people, is the default. These formats write every row of the final "
     "query (read again when the model saw only its first 200) unless `--max-rows` is given, and "
     "a cut is announced."},
    {TT_OPT_JSON, "json", 0, TT_ARG_NONE, NULL, "the same as --format json", TT_COMPLETE_NOTHING, NULL,
     "The same as `--format json`."},
    {TT_OPT_MAX_ROWS, "max-rows", 0, TT_ARG_REQUIRED, "N", "rows printed (table: 10; others: all)", TT_COMPLETE_NOTHING, NULL,
     "At most *N* rows: in the table view *N* rows instead of 10; in the other formats *N* "
     "instead of every row."},
    {TT_OPT_SQL_ONLY, "sql-only", 0, TT_ARG_NONE, NULL, "print only the final SQL", TT_COMPLETE_NOTHING, NULL,
     "Print only the final SQL."},
    {TT_OPT_OUT, "out", 'o', TT_ARG_REQUIRED, "FILE", "write the chart to FILE.png or FILE.svg", TT_COMPLETE_FILE, NULL,
     "Write the chart to *FILE*.png or *FILE*.svg instead of *STATE*/charts/*RUN_ID*.png."},
    {0, NULL, 0, 0, NULL, NULL, 0, NULL, NULL},
};
static const tt_opt_group tt_ask_group = {NULL, false, tt_ask_own};
static const tt_opt_group *const tt_ask_groups[] = {&tt_opts_run, &tt_ask_group, &tt_opts_model,
                                                    &tt_opts_limits, &tt_opts_db, &tt_opts_chart, NULL};
const tt_cmd_spec tt_cmd_ask = {
    .name = "ask",
    .usage = "tabletalk ask DB \"question\"|- [options]   (-: the question on stdin)",
    .about = "Answer a question about DB: a model writes SQL, tabletalk runs it read-only.",
    .groups = tt_ask_groups,
    .footer = "Exit: 0 answered or asked back, 1 failure, 2 usage, 3 refused, 130 Ctrl-C.",
    .args = TT_COMPLETE_FILE,
    .doc =
        "Answer one question about *DB* (`-` as the question: read it from standard input). A "
        "model writes SQL, tabletalk runs it read-only, feeds the rows back and lets the model "
        "repair its errors, within 8 tool calls per question and 3 failed queries in a row. "
        "Progress goes to stderr, a line per step; on a terminal the answer streams as it is "
        "written. Then the answer, the SQL, the first 10 rows (a table wider than the terminal "
        "in the expanded layout) and a summary line go to stdout.\n\n"
        "The model may cite result values instead of typing them ({{q1.r1.Total}}, "
        "{{q1.sum(Total)|0,000.00}}); tabletalk fills them in from the stored results and marks "
        "each ([1]) with a footnote of its cell (`facts` in JSON; `verified: bound` when every "
        "number was filled in). Every other number of the answer is checked against the results; "
        "unbacked numbers and references that do not resolve are pushed back to the model once, "
        "then shown with a warning (`verified: unbacked`, `unbacked_numbers` in JSON). A write the model tried is reported as refused (status "
        "`refused`, exit 3) whatever the model says next. A clarifying question is answered in "
        "the same thread: ask prints the command (`tabletalk ask` *DB* `--thread` *NAME* \"your "
        "answer\"). A question asking for a chart gets one: the model calls make_chart and "
        "tabletalk draws it to *STATE*/charts/*RUN_ID*.png (`--out`, `--size`, `--chart-format "
        "svg`), with a preview in the terminal (`--no-preview` to leave it out).\n\n"
        "`--format json` prints one object, the shape MCP's ask_database returns and each "
        "trace's run_end holds: `status` (answered, clarify, refused, failed, budget, "
        "cancelled), `answer`, `clarification`, `error`, `sql`, `verified`, `facts`, `private`, `unbacked_numbers`, "
        "`refusal`, `charts`, `thread_id`, `run_id`, `trace`, `resumed`, `warning`, `totals`, "
        "then `columns`, `column_types`, `rows`, `row_count`, `truncated` (every field is in "
        "docs/reference/run-json.md). A trace that cannot be written or a turn that cannot be "
        "saved to its thread is a `warning` (also on stderr); a thread store that cannot be read "
        "fails the question.\n\n"
        "Exit status: 0 answered or a clarifying question asked, 1 failure, 2 usage, 3 the model "
        "tried to change the database and was refused, 130 interrupted.",
};

static int tt_ask_option(void *ud, int id, const char *arg) {
  tt_ask_cli *a = ud;
  int r = tt_cli_agent_option(id, arg, &a->o, "ask");
  if (r >= 0) return r;
  switch (id) {
  case TT_OPT_JSON: a->out.format = TT_FMT_JSON; return 0;
  case TT_OPT_FORMAT:
    if (!tt_format_parse(arg, &a->out.format))
      return tt_usage_error("ask", "unknown format '%s' (use table, csv, tsv, json or markdown)", arg);
    return 0;
  case TT_OPT_MAX_ROWS:
    if (!tt_parse_long(arg, 1, 100000000, &a->out.max_rows))
      return tt_usage_error("ask", "--max-rows wants a number from 1 to 100000000, not '%s'", arg);
    return 0;
  case TT_OPT_SQL_ONLY: a->out.sql_only = true; return 0;
  case TT_OPT_OUT:
    if (!tt_cli_chart_file_ok(arg))
      return tt_usage_error("ask", "--out wants a file name ending in .png or .svg, not '%s'", arg);
    a->o.cfg.chart_out = arg;
    return 0;
  }
  return 0;
}

int cmd_ask(int argc, char **argv) {
  tt_ask_cli a = {.out = {.format = TT_FMT_TABLE}};
  tt_cli_agent_defaults(&a.o);
  int rc0 = tt_opts_parse(&tt_cmd_ask, argc, argv, 1, tt_ask_option, &a);
  if (rc0 == TT_OPTS_GO && argc - optind != 2)
    rc0 = tt_usage_error("ask", argc - optind < 2 ? "give a database file and a question"
                                                  : "too many arguments; quote the question");
  if (rc0 != TT_OPTS_GO) {
    tt_cli_agent_free(&a.o);
    return rc0;
  }
  tt_cli_agent_opts *o = &a.o;
  tt_ui_out out = a.out;
  const char *question = argv[optind + 1];
  char *from_stdin = NULL;
  if (strcmp(question, "-") == 0) {
    size_t len;
    bool too_long;
    from_stdin = tt_read_stream(STDIN_FILENO, 16000, &len, &too_long);
    if (!from_stdin) {
      tt_cli_agent_free(o);
      return tt_fail(TT_EXIT_FAIL, "cannot read the question from standard input");
    }
    if (too_long) {
      free(from_stdin);
      tt_cli_agent_free(o);
      return tt_usage_error("ask", "the question on standard input is longer than 16,000 bytes");
    }
    while (len && (from_stdin[len - 1] == '\n' || from_stdin[len - 1] == '\r' ||
                   from_stdin[len - 1] == ' '))
      from_stdin[--len] = '\0';
    question = from_stdin;
  }
  if (!*question) {
    free(from_stdin);
    tt_cli_agent_free(o);
    return tt_usage_error("ask", "the question is empty");
  }
  /* output for programs: the answer is not streamed onto stdout */
  o->json = out.format != TT_FMT_TABLE || out.sql_only;

  tt_cli_env env;
  o->cfg.db = argv[optind];
  int rc = tt_cli_env_open(&env, "ask", o);
  if (rc) {
    tt_cli_env_close(&env);
    tt_cli_agent_free(o);
    free(from_stdin);
    return rc;
  }
  out.reply_db = argv[optind];
  out.db = tt_session_db(env.session);
  out.timeout_s = o->cfg.sql_timeout_s;
  char *thread = NULL;
  if (o->thread) {
    thread = tt_xstrdup(o->thread);
  } else {
    char rnd[9];
    tt_random_hex(rnd, 4);
    thread = tt_xasprintf("ask-%s", rnd);
  }
  volatile sig_atomic_t *cancel = tt_interrupt_install();
  tt_ui *ui = tt_ui_new(o->quiet, o->json, cancel);
  tt_ui_set_preview(ui, !o->no_preview);
  tt_ui_set_thinking(ui, o->show_thinking);
  tt_session_hooks hooks;
  tt_ui_hooks(ui, &hooks);
  tt_run run;
  tt_ask_result info;
  tt_session_ask(env.session, thread, question, &hooks, &run, &info);
  tt_ui_done(ui);
  rc = tt_ui_print_result(ui, &run, &info, thread, &out);
  if (o->cfg.chart_out && run.ncharts == 0 && run.status != TT_RUN_CLARIFY && !o->quiet)
    tt_fail(0, "note: no chart was made for this question, so nothing was written to %s (ask "
               "for a chart, plot or graph to get one)", o->cfg.chart_out);
  tt_ui_free(ui);
  tt_run_free(&run);
  free(thread);
  free(from_stdin);
  tt_cli_env_close(&env);
  tt_cli_agent_free(o);
  return rc;
}
