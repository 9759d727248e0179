/* cmd_eval.c — `tabletalk eval spider|behaviors|report|schema`: how good
 * tabletalk is with a model, and (schema) how well retrieval picks tables. Spider execution accuracy with a progress bar and a
 * summary table (or two results files compared: the questions that changed
 * outcome), the behaviour suite's pass/fail table, and the cost and
 * token report from traces. The work is the eval layer's; this file
 * parses options and prints. */
#include "cli/cli.h"

#include <math.h>
#include <sys/resource.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "eval/eval.h"

typedef struct tt_eval_cli {
  tt_cli_agent_opts agent;
  const char *data, *tag, *backend, *results, *db, *only, *runs, *since;
  const char *compare_a, *compare_b;
  long n, seed, jobs;
  bool fresh, json, details;
  size_t nbudgets;
  size_t budgets[TT_SCHEMA_BENCH_MAX_BUDGETS];
  double price_in, price_out, price_cached;
} tt_eval_cli;

#define TT_EVAL_OPT(ID, NAME, ARG, META, DOC) \
  {ID, NAME, 0, ARG, META, NULL, TT_COMPLETE_NOTHING, NULL, DOC}
static const tt_opt tt_eval_own[] = {
    {TT_OPT_JSON, "json", 0, TT_ARG_NONE, NULL, "one JSON object instead of tables", TT_COMPLETE_NOTHING, NULL,
     "One JSON object instead of tables."},
    {0, NULL, 0, 0, NULL, NULL, 0, NULL, NULL},
};
static const tt_opt tt_eval_spider_opts[] = {
    {TT_OPT_DATA, "data", 0, TT_ARG_REQUIRED, "DIR", NULL, TT_COMPLETE_DIR, NULL,
     "`spider`: the folder of `questions.jsonl` (id, db_id, question, gold_sql) and "
     "`databases/`*db_id*`.sqlite`; `schema`: the folder of `schema.sqlite` and "
     "`questions.jsonl` (id, category, question, tables), written by `python3 "
     "bench/schema/gen.py --out` *DIR*."},
    TT_EVAL_OPT(TT_OPT_N, "n", TT_ARG_REQUIRED, "N",
      "Ask the first *N* questions (after `--seed` shuffled them; seed 0 keeps the file's order)."),
    TT_EVAL_OPT(TT_OPT_TAG, "tag", TT_ARG_REQUIRED, "T",
      "The tag in the results file's name (default: the model's name). A results file of another "
      "model, backend, endpoint or question folder is never mixed in: give another tag to keep "
      "both."),
    TT_EVAL_OPT(TT_OPT_JOBS, "jobs", TT_ARG_REQUIRED, "J",
      "Ask *J* questions at once, each worker with its own model connection, databases and "
      "sessions (the in-process engine answers one question at a time)."),
    {TT_OPT_BACKEND, "backend", 0, TT_ARG_REQUIRED, "oracle", NULL, TT_COMPLETE_WORDS, "oracle model",
     "`oracle` answers with the gold SQL, which validates the harness (100 %); `model`, the "
     "default, asks the model."},
    {TT_OPT_RESULTS, "results", 0, TT_ARG_REQUIRED, "DIR", NULL, TT_COMPLETE_DIR, NULL,
     "Where results files go (default `evals/results/`)."},
    TT_EVAL_OPT(TT_OPT_FRESH, "fresh", TT_ARG_NONE, NULL,
      "Start over instead of resuming the results file."),
    {TT_OPT_COMPARE, "compare", 0, TT_ARG_REQUIRED, "A.json B.json", NULL, TT_COMPLETE_FILE, NULL,
     "List the questions whose outcome changed between two results files (fixed, broken, another "
     "wrong outcome), matched by id, with each run's EX over the questions both answered."},
    {0, NULL, 0, 0, NULL, NULL, 0, NULL, NULL},
};
static const tt_opt tt_eval_behaviour_opts[] = {
    {TT_OPT_DB, "db", 0, TT_ARG_REQUIRED, "FILE", NULL, TT_COMPLETE_FILE, NULL,
     "The Chinook database the cases run on, a SQLite file (copied to a scratch file first) or a "
     "PostgreSQL URI (copied on the server with CREATE DATABASE ... TEMPLATE: the role needs "
     "CREATEDB and no other session may be on it; the copy is dropped at the end)."},
    TT_EVAL_OPT(TT_OPT_ONLY, "only", TT_ARG_REQUIRED, "NAME",
      "Run only the cases whose name contains *NAME*."),
    {0, NULL, 0, 0, NULL, NULL, 0, NULL, NULL},
};
static const tt_opt tt_eval_report_opts[] = {
    {TT_OPT_RUNS, "runs", 0, TT_ARG_REQUIRED, "DIR", NULL, TT_COMPLETE_DIR, NULL,
     "The folder of traces (default *STATE*/runs)."},
    TT_EVAL_OPT(TT_OPT_SINCE, "since", TT_ARG_REQUIRED, "T",
      "Only runs since *T*: a date or an age (2h)."),
    TT_EVAL_OPT(TT_OPT_PRICE_IN, "price-in", TT_ARG_REQUIRED, "USD",
      "US dollars per million prompt tokens computed, for the cost column."),
    TT_EVAL_OPT(TT_OPT_PRICE_OUT, "price-out", TT_ARG_REQUIRED, "USD",
      "US dollars per million completion tokens."),
    TT_EVAL_OPT(TT_OPT_PRICE_CACHED, "price-cached", TT_ARG_REQUIRED, "USD",
      "US dollars per million prompt tokens reused from a cache (default: `--price-in`)."),
    {0, NULL, 0, 0, NULL, NULL, 0, NULL, NULL},
};
static const tt_opt tt_eval_schema_opts[] = {
    TT_EVAL_OPT(TT_OPT_BUDGET, "budget", TT_ARG_REQUIRED, "N",
      "A schema budget in tokens to measure, repeatable (1000, 2000 and 4000 by default)."),
    TT_EVAL_OPT(TT_OPT_DETAILS, "details", TT_ARG_NONE, NULL,
      "Add each question's misses (and, with `--json`, its picks with score and reason)."),
    {0, NULL, 0, 0, NULL, NULL, 0, NULL, NULL},
};
static const tt_opt_group tt_eval_group = {NULL, false, tt_eval_own};
static const tt_opt_group tt_eval_spider_group = {"spider", true, tt_eval_spider_opts};
static const tt_opt_group tt_eval_behaviour_group = {"behaviors", true, tt_eval_behaviour_opts};
static const tt_opt_group tt_eval_report_group = {"report", true, tt_eval_report_opts};
static const tt_opt_group tt_eval_schema_group = {"schema", true, tt_eval_schema_opts};
static const tt_opt_group *const tt_eval_groups[] = {
    &tt_eval_group, &tt_eval_spider_group, &tt_eval_behaviour_group, &tt_eval_report_group,
    &tt_eval_schema_group, &tt_opts_model, &tt_opts_limits, NULL};
const tt_cmd_spec tt_cmd_eval = {
    .name = "eval",
    .usage = "tabletalk eval spider --data DIR [--n N] [--seed S] [--jobs J] [options]\n"
             "tabletalk eval spider --compare A.json B.json [--json]\n"
             "tabletalk eval behaviors [--db FILE] [--only NAME] [--json] [options]\n"
             "tabletalk eval report [--runs DIR | --since T] [--price-in USD ...]\n"
             "tabletalk eval schema --data DIR [--budget N]... [--details] [--json]",
    .about = "Measure tabletalk with a model: Spider execution accuracy, the behaviour\n"
             "suite, cost from traces, schema retrieval. --seed shuffles the questions.",
    .groups = tt_eval_groups,
    .footer = "Exit: 0 done (behaviors: all passed), 1 failure or a failed case, 2 usage.",
    .args = TT_COMPLETE_WORDS,
    .words = "spider behaviors report schema",
    .doc =
        "Measure tabletalk with a model. Every question goes through the agent exactly as `ask` "
        "does, so the numbers describe the program, not a separate harness "
        "(docs/contributing/evaluations.md has the rules and the protocol for a model with real "
        "weights).\n\n"
        "`eval spider`: Spider execution accuracy. Each question of *DIR*/questions.jsonl goes "
        "through the agent in a fresh thread; its final SQL and the gold SQL run on "
        "*DIR*/databases/*db_id*.sqlite and the rows are compared as multisets (in order only "
        "when the gold query has ORDER BY at its outer level), columns matched by permutation, "
        "numbers within a relative 1e-6. Outcomes: correct, wrong, sql_failed, no_sql, error, "
        "clarify. Results go to *RESULTS*/spider_n*N*_s*S*_*TAG*.json after every question; the "
        "same command resumes an interrupted run.\n\n"
        "`eval behaviors`: the behaviour suite, 18 cases on a scratch copy of chinook with a "
        "planted row, each judged by the rows, SQL, status, chart file and the database's bytes "
        "(on PostgreSQL the copy's tables are compared by an md5 of their rows). Exit status 1 "
        "when a case fails.\n\n"
        "`eval report`: per question from the traces (*STATE*/runs or `--runs`), LLM calls, tool "
        "calls, prompt tokens sent, reused and computed, completion tokens, seconds and cost "
        "(`--price-in`, `--price-cached`, `--price-out` in USD per million tokens), as mean, "
        "median, max and total.\n\n"
        "`eval schema`: schema retrieval without a model, on *DIR*/schema.sqlite and "
        "*DIR*/questions.jsonl. For each budget the tables chosen for each question are compared "
        "with the tables it needs: all-needed recall, per-table recall, and the tables and "
        "tokens shown, overall and per category, beside a plain BM25 baseline over names and "
        "values given the same card costs (bm25), the questions that got a value-linked table "
        "they do not need (vlink) and the share of card tokens such tables took (vroom) "
        "(see docs/contributing/benchmarks.md).\n\n"
        "Exit status: 0 done (behaviors: all passed), 1 failure or a failed case, 2 usage.",
};

static int tt_eval_option(void *ud, int id, const char *arg) {
  tt_eval_cli *c = ud;
  int r = tt_cli_agent_option(id, arg, &c->agent, "eval");
  if (r > 0) return r;
  if (r == 0) {
    if (id == TT_OPT_SEED) { /* --seed is the question order's here */
      c->seed = c->agent.cfg.seed;
      c->agent.cfg.has_seed = false;
    }
    return 0;
  }
  switch (id) {
    case TT_OPT_DATA: c->data = arg; return 0;
    case TT_OPT_N:
      if (!tt_parse_long(arg, 1, 1000000, &c->n))
        return tt_usage_error("eval", "--n wants a number of questions, not '%s'", arg);
      return 0;
    case TT_OPT_TAG: c->tag = arg; return 0;
    case TT_OPT_JOBS:
      if (!tt_parse_long(arg, 1, 64, &c->jobs))
        return tt_usage_error("eval", "--jobs wants a number from 1 to 64, not '%s'", arg);
      return 0;
    case TT_OPT_BACKEND:
      if (strcmp(arg, "oracle") && strcmp(arg, "model"))
        return tt_usage_error("eval", "--backend wants oracle (or model, the default), not '%s'", arg);
      c->backend = arg;
      return 0;
    case TT_OPT_RESULTS: c->results = arg; return 0;
    case TT_OPT_FRESH: c->fresh = true; return 0;
    case TT_OPT_COMPARE: c->compare_a = arg; return 0;
    case TT_OPT_BUDGET: {
      long b;
      if (!tt_parse_long(arg, 1, 10000000, &b))
        return tt_usage_error("eval", "--budget wants a number of tokens, not '%s'", arg);
      if (c->nbudgets == TT_SCHEMA_BENCH_MAX_BUDGETS)
        return tt_usage_error("eval", "at most %d budgets", TT_SCHEMA_BENCH_MAX_BUDGETS);
      c->budgets[c->nbudgets++] = (size_t)b;
      return 0;
    }
    case TT_OPT_DETAILS: c->details = true; return 0;
    case TT_OPT_DB: c->db = arg; return 0;
    case TT_OPT_ONLY: c->only = arg; return 0;
    case TT_OPT_RUNS: c->runs = arg; return 0;
    case TT_OPT_SINCE: c->since = arg; return 0;
    case TT_OPT_PRICE_IN:
    case TT_OPT_PRICE_OUT:
    case TT_OPT_PRICE_CACHED: {
      double v;
      if (!tt_parse_double(arg, 0, 1e6, &v))
        return tt_usage_error("eval", "prices are US dollars per million tokens, not '%s'", arg);
      if (id == TT_OPT_PRICE_IN) c->price_in = v;
      else if (id == TT_OPT_PRICE_OUT) c->price_out = v;
      else c->price_cached = v;
      return 0;
    }
    case TT_OPT_JSON: c->json = true; return 0;
  }
  return 0;
}

static int tt_eval_options(int argc, char **argv, tt_eval_cli *c) {
  int rc = tt_opts_parse(&tt_cmd_eval, argc, argv, 2, tt_eval_option, c); /* argv[1]: what */
  if (rc != TT_OPTS_GO) return rc;
  if (c->compare_a && optind < argc) c->compare_b = argv[optind++];
  if (c->compare_a && !c->compare_b)
    return tt_usage_error("eval", "--compare wants two results files: --compare A.json B.json");
  if (optind < argc) return tt_usage_error("eval", "unexpected argument '%s'", argv[optind]);
  return -1;
}

static void tt_print_json(const json_t *j) {
  tt_buf b = TT_BUF_INIT;
  tt_json_dump(&b, j, JSON_INDENT(2) | JSON_REAL_PRECISION(10));
  tt_buf_putc(&b, '\n');
  tt_write_all(stdout, &b);
  tt_buf_free(&b);
}

/* ---- spider ------------------------------------------------------------------------- */

typedef struct tt_bar {
  tt_term err;
  double t0;
  size_t last_line; /* non-terminal: the tenth last printed */
  bool open;        /* a terminal line is being redrawn */
  bool started;
  size_t base;      /* questions done before this run (resumed) */
} tt_bar;

static void tt_spider_progress(void *ud, size_t done, size_t total, size_t correct, const json_t *q) {
  tt_bar *b = ud;
  (void)q;
  double secs = (tt_now_ms() - b->t0) / 1000.0;
  if (!b->started) { /* the first report: what came before was resumed */
    b->started = true;
    b->base = done ? done - 1 : 0;
  }
  double eta = done > b->base ? secs / (double)(done - b->base) * (double)(total - done) : 0;
  double ex = done ? 100.0 * (double)correct / (double)done : 0;
  if (b->err.tty) {
    size_t width = 30, fill = total ? done * width / total : width;
    tt_buf line = TT_BUF_INIT;
    tt_buf_puts(&line, "\r\033[K[");
    tt_buf_repeat(&line, "█", fill);
    tt_buf_repeat(&line, "░", width - fill);
    tt_buf_printf(&line, "] %zu/%zu  EX %.1f %%  %.1f s elapsed, about %.0f s left", done, total, ex, secs, eta);
    b->open = done < total;
    if (done == total) tt_buf_putc(&line, '\n');
    tt_write_all(stderr, &line);
    tt_buf_free(&line);
  } else if (done * 10 / total > b->last_line || done == total) {
    b->last_line = done * 10 / total;
    fprintf(stderr, "%zu/%zu questions, EX %.1f %%, %.0f s\n", done, total, ex, secs);
  }
}

static int tt_eval_spider(tt_eval_cli *c, tt_models *models) {
  if (!c->data) return tt_usage_error("eval", "eval spider needs --data DIR (e.g. ../shared/data/spider-dev-sample)");
  bool oracle = c->backend && strcmp(c->backend, "oracle") == 0;
  tt_spider_opts o = tt_spider_default_opts();
  o.data_dir = c->data;
  o.n = c->n;
  o.seed = c->seed;
  o.jobs = (int)(c->jobs ? c->jobs : 1);
  o.cfg = &c->agent.cfg;
  if (c->results) o.results_dir = c->results;
  o.oracle = oracle;
  o.fresh = c->fresh;
  o.models = models;
  tt_model_choice ch;
  tt_models_choice(models, &ch);
  const char *url = ch.path ? NULL : ch.url;
  if (!oracle && url) o.endpoint = url;
  char *tag = NULL;
  if (c->tag) {
    o.tag = c->tag;
  } else if (oracle) {
    o.tag = "oracle";
  } else { /* the model's name: its file, the name the endpoint is told, or the endpoint */
    const char *m = c->agent.cfg.model_path ? c->agent.cfg.model_path : c->agent.cfg.model;
    if (m) {
      const char *slash = strrchr(m, '/');
      tag = tt_xstrdup(slash ? slash + 1 : m);
      char *dot = strstr(tag, ".gguf");
      if (dot) *dot = 0;
    } else if (url) {
      const char *host = strstr(url, "://");
      tag = tt_xstrdup(host ? host + 3 : url);
    } else {
      tag = tt_xstrdup("model");
    }
    o.tag = tag;
  }
  if (o.jobs > 8) { /* each job keeps databases and a store open */
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
      rl.rlim_cur = rl.rlim_max;
      setrlimit(RLIMIT_NOFILE, &rl);
    }
  }
  tt_bar bar = {.err = tt_term_probe(stderr), .t0 = tt_now_ms()};
  if (!c->json) {
    o.on_progress = tt_spider_progress;
    o.progress_ud = &bar;
  }
  o.cancel = tt_interrupt_install();
  tt_spider_summary s;
  tt_error err = TT_ERROR_INIT;
  bool ok = tt_spider_run(&o, &s, &err);
  int rc = TT_EXIT_OK;
  if (bar.open) fputc('\n', stderr); /* the bar's line ends before the table */
  if (!ok && s.done == 0) {
    rc = tt_fail(TT_EXIT_FAIL, "%s", tt_error_text(&err));
  } else if (c->json) {
    json_t *j = json_load_file(s.results_file, 0, NULL);
    json_t *summary = j ? json_incref(json_object_get(j, "summary")) : json_object();
    json_object_set_new(summary, "results_file", json_string(s.results_file));
    json_object_set_new(summary, "minutes", json_real(s.minutes));
    json_object_set_new(summary, "resumed", json_integer((json_int_t)s.resumed));
    tt_print_json(summary);
    json_decref(summary);
    json_decref(j);
  } else {
    tt_term t = tt_term_probe(stdout);
    tt_buf b = TT_BUF_INIT;
    tt_buf_printf(&b, "%sSpider execution accuracy: %zu of %zu questions (seed %ld, %s)%s\n",
                  tt_term_bold(&t), s.done, s.total, c->seed, o.tag, tt_term_reset(&t));
    tt_buf_printf(&b, "  %-24s %6s %7s\n", "outcome", "count", "share");
    for (int k = 0; k < TT_SP_OUTCOMES; k++)
      tt_buf_printf(&b, "  %-24s %6zu %6.1f%%\n", tt_spider_outcome_label((tt_spider_outcome)k), s.count[k],
                    s.done ? 100.0 * (double)s.count[k] / (double)s.done : 0.0);
    tt_buf_printf(&b, "  %-24s %13.1f%%\n", "EX (correct / answered)", s.ex);
    tt_buf_printf(&b, "  LLM calls per question %.2f, seconds per question %.2f, total %.1f min%s\n",
                  s.llm_calls, s.seconds, s.minutes,
                  s.resumed ? " (this run; resumed questions not timed again)" : "");
    if (s.resumed) tt_buf_printf(&b, "  %zu questions taken from the earlier run\n", s.resumed);
    tt_buf_printf(&b, "  results: %s\n", s.results_file);
    tt_write_all(stdout, &b);
    tt_buf_free(&b);
  }
  if (rc == TT_EXIT_OK && s.cancelled) {
    tt_fail(0, "interrupted after %zu of %zu questions; run the same command again to resume", s.done, s.total);
    rc = 130;
  } else if (rc == TT_EXIT_OK && !ok) {
    rc = tt_fail(TT_EXIT_FAIL, "%s", tt_error_text(&err));
  }
  free(tag);
  tt_model_choice_free(&ch);
  return rc;
}

/* ---- comparing two runs ------------------------------------------------------------------ */

static void tt_compare_side(tt_buf *b, const char *label, const json_t *side) {
  const char *tag = json_string_value(json_object_get(side, "tag"));
  const char *model = json_string_value(json_object_get(side, "model"));
  tt_buf_printf(b, "  %s: %s (%s%s%s, %lld questions, EX %.1f %% on those in common)\n", label,
                json_string_value(json_object_get(side, "file")), tag ? tag : "no tag",
                model ? ", model " : "", model ? model : "",
                (long long)json_integer_value(json_object_get(side, "questions")),
                json_number_value(json_object_get(side, "ex_in_common")));
}

static void tt_compare_list(tt_buf *b, const json_t *list, const char *title) {
  if (!json_array_size(list)) return;
  tt_buf_printf(b, "%s (%zu):\n", title, json_array_size(list));
  tt_escape_opts eo = {.max_chars = 70, .short_marker = true};
  size_t i;
  const json_t *q;
  json_array_foreach(list, i, q) {
    const char *text = json_string_value(json_object_get(q, "question"));
    const char *a = json_string_value(json_object_get(q, "a")), *bo = json_string_value(json_object_get(q, "b"));
    tt_buf_printf(b, "  %-12s %s -> %s  ", json_string_value(json_object_get(q, "id")), a ? a : "-",
                  bo ? bo : "-");
    tt_escape_terminal(b, text ? text : "", text ? strlen(text) : 0, &eo);
    tt_buf_putc(b, '\n');
    /* why the side that is not correct is not */
    const char *keys[] = {"a_detail", "b_detail"}, *outcomes[] = {a, bo};
    for (int k = 0; k < 2; k++) {
      const char *why = json_string_value(json_object_get(q, keys[k]));
      if (!why || !outcomes[k] || strcmp(outcomes[k], "correct") == 0) continue;
      tt_buf_printf(b, "  %-12s %s: ", "", k ? "B" : "A");
      tt_escape_terminal(b, why, strlen(why), &(tt_escape_opts){.max_chars = 100, .short_marker = true});
      tt_buf_putc(b, '\n');
    }
  }
}

/* Says what err holds and returns the failure's exit code. */
static int tt_eval_fail(const tt_error *err) {
  return tt_fail(TT_EXIT_FAIL, "%s", tt_error_text(err));
}

static int tt_eval_compare(const tt_eval_cli *c) {
  tt_error err;
  json_t *r = tt_spider_compare(c->compare_a, c->compare_b, &err);
  if (!r) {
    return tt_eval_fail(&err);
  }
  if (c->json) {
    tt_print_json(r);
  } else {
    size_t n = json_array_size(json_object_get(r, "fixed")) + json_array_size(json_object_get(r, "broken")) +
               json_array_size(json_object_get(r, "changed"));
    tt_term t = tt_term_probe(stdout);
    tt_buf b = TT_BUF_INIT;
    tt_buf_printf(&b, "%s%zu question%s changed outcome from A to B (%lld in both)%s\n", tt_term_bold(&t), n,
                  n == 1 ? "" : "s", (long long)json_integer_value(json_object_get(r, "in_common")),
                  tt_term_reset(&t));
    tt_compare_side(&b, "A", json_object_get(r, "a"));
    tt_compare_side(&b, "B", json_object_get(r, "b"));
    if (!json_is_true(json_object_get(r, "same_data")))
      tt_buf_puts(&b, "  note: the runs used other question folders (--data); questions are matched by id\n");
    tt_compare_list(&b, json_object_get(r, "fixed"), "fixed: correct in B only");
    tt_compare_list(&b, json_object_get(r, "broken"), "broken: correct in A only");
    tt_compare_list(&b, json_object_get(r, "changed"), "changed: another wrong outcome");
    size_t oa = json_array_size(json_object_get(r, "only_a")), ob = json_array_size(json_object_get(r, "only_b"));
    if (oa || ob) tt_buf_printf(&b, "%zu question%s only in A, %zu only in B (not compared)\n", oa, oa == 1 ? "" : "s", ob);
    tt_write_all(stdout, &b);
    tt_buf_free(&b);
  }
  json_decref(r);
  return TT_EXIT_OK;
}

/* ---- behaviours ------------------------------------------------------------------------- */

static void tt_behaviour_line(void *ud, const json_t *res) {
  const tt_term *t = ud;
  bool ok = json_is_true(json_object_get(res, "passed"));
  tt_buf b = TT_BUF_INIT;
  tt_buf_printf(&b, "  %-18s %s%-4s%s  %s\n", json_string_value(json_object_get(res, "name")),
                t->color ? (ok ? "\033[32m" : "\033[31m") : "", ok ? "pass" : "FAIL", tt_term_reset(t),
                json_string_value(json_object_get(res, "what")));
  size_t i;
  const json_t *c;
  json_array_foreach(json_object_get(res, "checks"), i, c) {
    if (json_is_true(json_object_get(c, "passed"))) continue;
    const char *d = json_string_value(json_object_get(c, "detail"));
    tt_buf_printf(&b, "      ✗ %s: ", json_string_value(json_object_get(c, "check")));
    tt_escape_terminal(&b, d, strlen(d), &(tt_escape_opts){.max_chars = 200, .short_marker = true});
    tt_buf_putc(&b, '\n');
  }
  tt_write_all(stdout, &b);
  tt_buf_free(&b);
}

static int tt_eval_behaviours(tt_eval_cli *c, tt_models *models) {
  tt_behaviour_opts o = tt_behaviour_default_opts();
  if (c->db) o.db_path = c->db;
  o.cfg = &c->agent.cfg;
  o.models = models;
  o.only = c->only;
  o.cancel = tt_interrupt_install();
  tt_term t = tt_term_probe(stdout);
  if (!c->json) {
    tt_db_target target;
    tt_error terr;
    bool named = tt_db_target_parse(o.db_path, &target, &terr);
    printf("%sBehaviour suite on %s%s\n", tt_term_bold(&t), named ? target.shown : o.db_path,
           tt_term_reset(&t));
    tt_db_target_free(&target);
    fflush(stdout);
    o.on_case = tt_behaviour_line;
    o.case_ud = &t;
  }
  tt_error err;
  json_t *res = tt_behaviour_run(&o, &err);
  if (!res) {
    return tt_eval_fail(&err);
  }
  json_int_t passed = json_integer_value(json_object_get(res, "passed"));
  json_int_t failed = json_integer_value(json_object_get(res, "failed"));
  if (c->json) {
    tt_print_json(res);
  } else {
    printf("%lld case%s: %lld passed, %lld failed\n", (long long)(passed + failed),
           passed + failed == 1 ? "" : "s", (long long)passed, (long long)failed);
    const char *scratch = json_string_value(json_object_get(res, "scratch"));
    if (scratch) printf("the scratch copy is kept for a look: %s\n", scratch);
  }
  bool cancelled = o.cancel && *o.cancel;
  json_decref(res);
  return cancelled ? 130 : failed ? TT_EXIT_FAIL : TT_EXIT_OK;
}

/* ---- report ------------------------------------------------------------------------------ */

static int tt_eval_report(tt_eval_cli *c, const char *state) {
  tt_report_opts o = {.price_in = c->price_in, .price_out = c->price_out, .price_cached = c->price_cached};
  char *runs = c->runs ? tt_xstrdup(c->runs) : tt_xasprintf("%s/runs", state);
  o.runs_dir = runs;
  if (c->since && !tt_parse_since(c->since, tt_wall_time(), &o.since)) {
    free(runs);
    return tt_usage_error("eval", "--since wants a date (2026-12-01, 2026-12-01T10:00) or an age (90m, 2h, 3d), "
                                  "not '%s'", c->since);
  }
  tt_error err;
  json_t *r = tt_report_build(&o, &err);
  int rc = TT_EXIT_OK;
  if (!r) {
    rc = tt_fail(TT_EXIT_FAIL, "%s", tt_error_text(&err));
  } else if (c->json) {
    tt_print_json(r);
  } else {
    tt_term t = tt_term_probe(stdout);
    json_int_t n = json_integer_value(json_object_get(r, "runs"));
    tt_buf b = TT_BUF_INIT;
    tt_buf_printf(&b, "%s%lld question%s from %s%s", tt_term_bold(&t), (long long)n, n == 1 ? "" : "s", runs,
                  tt_term_reset(&t));
    if (n) tt_buf_printf(&b, " (%s to %s)", json_string_value(json_object_get(r, "first")),
                         json_string_value(json_object_get(r, "last")));
    tt_buf_putc(&b, '\n');
    json_int_t skipped = json_integer_value(json_object_get(r, "skipped"));
    if (skipped) tt_buf_printf(&b, "(%lld trace%s without a start and an end left out)\n", (long long)skipped,
                               skipped == 1 ? "" : "s");
    tt_buf_printf(&b, "  %-26s %12s %12s %12s %14s\n", "per question", "mean", "median", "max", "total");
    static const char *const rows[][2] = {
        {"llm_calls", "LLM calls"}, {"tool_calls", "tool calls"},
        {"prompt_tokens_sent", "prompt tokens sent"}, {"prompt_tokens_reused", "  reused (cached)"},
        {"prompt_tokens_computed", "  computed"}, {"completion_tokens", "completion tokens"},
        {"wall_seconds", "wall seconds"}, {"cost_usd", "cost (USD)"}};
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
      const json_t *m = json_object_get(json_object_get(r, "metrics"), rows[i][0]);
      bool money = strcmp(rows[i][0], "cost_usd") == 0, secs = strcmp(rows[i][0], "wall_seconds") == 0;
      int dec = money ? 5 : secs ? 2 : 1;
      tt_buf_printf(&b, "  %-26s %12.*f %12.*f %12.*f %14.*f\n", rows[i][1], dec,
                    json_number_value(json_object_get(m, "mean")), dec,
                    json_number_value(json_object_get(m, "median")), dec,
                    json_number_value(json_object_get(m, "max")), dec,
                    json_number_value(json_object_get(m, "total")));
    }
    if (c->price_in == 0 && c->price_out == 0)
      tt_buf_puts(&b, "  (no prices given: --price-in and --price-out in USD per million tokens)\n");
    tt_write_all(stdout, &b);
    tt_buf_free(&b);
  }
  json_decref(r);
  free(runs);
  return rc;
}

/* ---- schema retrieval ------------------------------------------------------------------------- */

static void tt_schema_bench_row(tt_buf *b, const char *label, const json_t *m) {
  tt_buf_printf(b, "  %-14s %5lld %10.3f %10.3f %8.1f %8.0f %8.3f %6lld %6.0f%%\n", label,
                (long long)json_integer_value(json_object_get(m, "questions")),
                json_number_value(json_object_get(m, "all_needed_recall")),
                json_number_value(json_object_get(m, "table_recall")),
                json_number_value(json_object_get(m, "tables_shown")),
                json_number_value(json_object_get(m, "tokens")),
                json_number_value(json_object_get(m, "bm25_all_needed_recall")),
                (long long)json_integer_value(json_object_get(m, "value_unneeded_questions")),
                100 * json_number_value(json_object_get(m, "value_unneeded_token_share")));
}

static int tt_eval_schema(tt_eval_cli *c) {
  if (!c->data) return tt_usage_error("eval", "eval schema needs --data DIR (python3 bench/schema/gen.py --out DIR)");
  tt_schema_bench_opts o = tt_schema_bench_default_opts();
  o.data_dir = c->data;
  o.details = c->details;
  /* an embedding score when asked for (--embeddings on, or an embedding
   * model named): from the configured model, usually an endpoint */
  tt_config *cfg = &c->agent.cfg;
  tt_error err;
  tt_config_resolve(cfg, &err);
  tt_models *models = NULL;
  if (cfg->embeddings == TT_EMBED_ON ||
      (cfg->embeddings == TT_EMBED_AUTO && tt_config_embed_model(cfg))) {
    models = tt_models_new(cfg);
    o.embed_llm = tt_models_make(models, &err);
    if (!o.embed_llm) {
      tt_models_free(models);
      return tt_eval_fail(&err);
    }
  }
  if (c->nbudgets) {
    o.nbudgets = c->nbudgets;
    memcpy(o.budgets, c->budgets, sizeof o.budgets);
  }
  json_t *r = tt_schema_bench_run(&o, &err);
  tt_llm_free(o.embed_llm);
  tt_models_free(models);
  if (!r) {
    return tt_eval_fail(&err);
  }
  if (c->json) {
    tt_print_json(r);
  } else {
    tt_term t = tt_term_probe(stdout);
    tt_buf b = TT_BUF_INIT;
    tt_buf_printf(&b, "%sSchema retrieval on %s%s: %lld tables (%lld tokens in full), %lld questions\n",
                  tt_term_bold(&t), json_string_value(json_object_get(r, "database")), tt_term_reset(&t),
                  (long long)json_integer_value(json_object_get(r, "tables")),
                  (long long)json_integer_value(json_object_get(r, "schema_tokens")),
                  (long long)json_integer_value(json_object_get(r, "questions")));
    size_t i;
    json_t *bj;
    json_array_foreach(json_object_get(r, "budgets"), i, bj) {
      tt_buf_printf(&b, "\nbudget %lld tokens (%s %lld for the cards)\n  %-14s %5s %10s %10s %8s %8s %8s %6s %7s\n",
                    (long long)json_integer_value(json_object_get(bj, "budget")),
                    json_is_true(json_object_get(bj, "whole_schema")) ? "the whole schema fits:"
                                                                       : "after the table index,",
                    (long long)json_integer_value(json_object_get(bj, "card_budget")), "category", "n",
                    "all-needed", "per-table", "tables", "tokens", "bm25", "vlink", "vroom");
      tt_schema_bench_row(&b, "all", bj);
      const char *name;
      json_t *m;
      json_object_foreach(json_object_get(bj, "categories"), name, m) tt_schema_bench_row(&b, name, m);
      const json_t *e = json_object_get(bj, "embeddings");
      if (e && json_object_get(e, "note"))
        tt_buf_printf(&b, "  embeddings: %s\n", json_string_value(json_object_get(e, "note")));
      else if (e)
        tt_buf_printf(&b, "  embeddings: %lld tables (%lld from the cache, %lld embedded in %.0f ms, "
                          "%lld requests, %lld tokens), %lld requests and %.0f ms in all\n",
                      (long long)json_integer_value(json_object_get(e, "tables")),
                      (long long)json_integer_value(json_object_get(e, "tables_cached")),
                      (long long)json_integer_value(json_object_get(e, "tables_embedded")),
                      json_number_value(json_object_get(e, "tables_ms")),
                      (long long)json_integer_value(json_object_get(e, "tables_requests")),
                      (long long)json_integer_value(json_object_get(e, "tables_tokens")),
                      (long long)json_integer_value(json_object_get(e, "requests")),
                      json_number_value(json_object_get(e, "ms")));
      size_t k;
      json_t *q;
      json_array_foreach(json_object_get(bj, "per_question"), k, q) {
        if (json_is_true(json_object_get(q, "all_needed"))) continue;
        char *missed = json_dumps(json_object_get(q, "missed"), JSON_COMPACT);
        tt_buf_printf(&b, "    %s (%s) missed %s\n", json_string_value(json_object_get(q, "id")),
                      json_string_value(json_object_get(q, "category")), missed);
        free(missed);
      }
    }
    tt_write_all(stdout, &b);
    tt_buf_free(&b);
  }
  json_decref(r);
  return TT_EXIT_OK;
}

int cmd_eval(int argc, char **argv) {
  if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
    if (argc < 2) return tt_usage_error("eval", "say what to evaluate: spider, behaviors, report or schema");
    tt_opts_help(&tt_cmd_eval, stdout);
    return TT_EXIT_OK;
  }
  const char *what = argv[1];
  bool spider = strcmp(what, "spider") == 0, report = strcmp(what, "report") == 0;
  bool schema = strcmp(what, "schema") == 0;
  bool behaviours = strcmp(what, "behaviors") == 0 || strcmp(what, "behaviours") == 0;
  if (!spider && !report && !behaviours && !schema)
    return tt_usage_error("eval", "unknown evaluation '%s' (spider, behaviors, report or schema)", what);
  tt_eval_cli c = {.price_cached = -1};
  tt_cli_agent_defaults(&c.agent);
  int rc = tt_eval_options(argc, argv, &c);
  if (rc < 0 && c.compare_a && !spider)
    rc = tt_usage_error("eval", "--compare is for eval spider results");
  else if (rc < 0 && c.compare_a)
    rc = tt_eval_compare(&c);
  else if (rc < 0 && schema)
    rc = tt_eval_schema(&c);
  if (rc >= 0) {
    tt_cli_agent_free(&c.agent);
    return rc;
  }
  tt_error err;
  tt_config_resolve(&c.agent.cfg, &err);
  tt_models *models = tt_models_new(&c.agent.cfg);
  bool model = behaviours || (spider && !(c.backend && strcmp(c.backend, "oracle") == 0));
  if (model && !tt_models_check(models, &err)) rc = tt_cli_error("eval", &err);
  else if (spider) rc = tt_eval_spider(&c, models);
  else if (behaviours) rc = tt_eval_behaviours(&c, models);
  else rc = tt_eval_report(&c, tt_config_state_dir(&c.agent.cfg));
  tt_models_free(models);
  tt_cli_agent_free(&c.agent);
  return rc;
}
