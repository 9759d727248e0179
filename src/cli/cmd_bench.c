/* cmd_bench.c — `tabletalk bench RECORDING.json`: replays a recorded
 * conversation (questions and the model's tool calls) through the agent and
 * the embedded engine, each model turn forced to the recorded call so that
 * every token costs a real forward pass, and reports per step and in total
 * the prompt tokens sent, reused from the cache and computed, the tokens
 * decoded, and prefill, decode and wall seconds. --no-reuse recomputes every
 * prompt, as a server without prompt caching would; --cold computes the
 * first prefix rather than restoring it, and saves it for a warm run. */
#include "cli/cli.h"

#include <getopt.h>
#include <libgen.h>
#include <stdlib.h>
#include <string.h>

static const tt_opt tt_bench_own[] = {
    {TT_OPT_MODEL_PATH, "model-path", 0, TT_ARG_REQUIRED, "FILE", "the GGUF model (or TABLETALK_MODEL_PATH)", TT_COMPLETE_FILE, NULL,
     "The GGUF model (or `TABLETALK_MODEL_PATH`)."},
    {TT_OPT_DB, "db", 0, TT_ARG_REQUIRED, "FILE", "the database (instead of the recording's)", TT_COMPLETE_FILE, NULL,
     "The database, instead of the recording's."},
    {TT_OPT_NO_REUSE, "no-reuse", 0, TT_ARG_NONE, NULL, "recompute the whole prompt at every call", TT_COMPLETE_NOTHING, NULL,
     "Recompute the whole prompt at every call, as a server without prompt caching would."},
    {TT_OPT_COLD, "cold", 0, TT_ARG_NONE, NULL, "compute the prefix, do not restore it", TT_COMPLETE_NOTHING, NULL,
     "Compute the shared prefix instead of restoring a saved state (and save it for the next "
     "run)."},
    {TT_OPT_GRAMMAR_OVERHEAD, "grammar-overhead", 0, TT_ARG_NONE, NULL, "also time decoding without the grammar", TT_COMPLETE_NOTHING, NULL,
     "Also time decoding without the grammar and report its cost."},
    {TT_OPT_THREADS, "threads", 0, TT_ARG_REQUIRED, "N", "CPU threads (default: all cores)", TT_COMPLETE_NOTHING, NULL,
     "CPU threads (default: all cores)."},
    {TT_OPT_CTX, "ctx", 0, TT_ARG_REQUIRED, "N", "context tokens (default: model, memory)", TT_COMPLETE_NOTHING, NULL,
     "Context tokens (default: from the model and the memory, as for `ask`)."},
    {TT_OPT_SCHEMA_BUDGET, "schema-budget", 0, TT_ARG_REQUIRED, "N", "prompt tokens for the schema (2000)", TT_COMPLETE_NOTHING, NULL,
     "Prompt tokens for the schema (2000), as for `ask`."},
    {TT_OPT_JSON, "json", 0, TT_ARG_NONE, NULL, "one JSON object: steps and totals", TT_COMPLETE_NOTHING, NULL,
     "One JSON object: the steps and the totals."},
    {0, NULL, 0, 0, NULL, NULL, 0, NULL, NULL},
};
static const tt_opt_group tt_bench_group = {NULL, false, tt_bench_own};
static const tt_opt_group *const tt_bench_groups[] = {&tt_bench_group, NULL};
const tt_cmd_spec tt_cmd_bench = {
    .name = "bench",
    .usage = "tabletalk bench RECORDING.json --model-path MODEL.gguf [options]",
    .about = "Replay a recorded conversation (its questions and tool calls, in one\n"
             "thread) on the embedded engine and time prefill and decoding.",
    .groups = tt_bench_groups,
    .args = TT_COMPLETE_FILE,
    .doc =
        "Replay a recorded conversation (its questions and the model's tool calls, in one "
        "thread; bench/chinook-genres.json) on the embedded engine, each model turn forced to "
        "the recorded call so that every token still costs a forward pass, and report per step "
        "and in total the prompt tokens sent, reused and computed, the tokens decoded, and "
        "prefill, decode and wall seconds. docs/contributing/benchmarks.md has the figures.",
};

typedef struct tt_bench_cli {
  const char *model, *db_arg;
  bool reuse, cold, grammar, as_json;
  long threads, ctx, schema_budget;
} tt_bench_cli;

static int tt_bench_option(void *ud, int id, const char *arg) {
  tt_bench_cli *b = ud;
  switch (id) {
  case TT_OPT_MODEL_PATH: b->model = arg; return 0;
  case TT_OPT_DB: b->db_arg = arg; return 0;
  case TT_OPT_NO_REUSE: b->reuse = false; return 0;
  case TT_OPT_COLD: b->cold = true; return 0;
  case TT_OPT_GRAMMAR_OVERHEAD: b->grammar = true; return 0;
  case TT_OPT_THREADS:
    if (!tt_parse_long(arg, 1, 1024, &b->threads)) return tt_usage_error("bench", "--threads wants a number");
    return 0;
  case TT_OPT_CTX:
    if (!tt_parse_long(arg, 512, 1048576, &b->ctx)) return tt_usage_error("bench", "--ctx wants a number");
    return 0;
  case TT_OPT_SCHEMA_BUDGET:
    if (!tt_parse_long(arg, 100, 1000000, &b->schema_budget))
      return tt_usage_error("bench", "--schema-budget wants a number of tokens");
    return 0;
  case TT_OPT_JSON: b->as_json = true; return 0;
  }
  return 0;
}

typedef struct tt_bench_step {
  int question, step;
  char tool[32];
  long prompt, reused, computed, decoded;
  double prefill_s, decode_s, wall_s, restore_s;
  long full_checks;
} tt_bench_step;

typedef struct tt_bench {
  tt_bench_step *steps;
  size_t n, cap;
  int question;
  size_t calls; /* model calls of the current question */
  /* what was cut to fit the context (TT_EV_CONTEXT) */
  long results_cut, results_shortened, turns_dropped;
  long shortened_before, shortened_after; /* the largest prompt shortened, and after */
} tt_bench;

static void tt_bench_event(void *ud, const tt_event *ev) {
  tt_bench *b = ud;
  if (ev->kind == TT_EV_MODEL_CALL) b->calls++;
  if (ev->kind == TT_EV_CONTEXT) {
    b->results_cut += strcmp(ev->action, "result_cut") == 0;
    b->results_shortened += ev->results_shortened;
    b->turns_dropped += ev->turns_dropped;
    if (strcmp(ev->action, "shortened") == 0 && ev->tokens_before > b->shortened_before) {
      b->shortened_before = ev->tokens_before;
      b->shortened_after = ev->tokens_after;
    }
  }
  if (ev->kind != TT_EV_MODEL_CALL || !ev->reply) return;
  if (b->n == b->cap) {
    b->cap = b->cap ? b->cap * 2 : 16;
    b->steps = tt_xrealloc(b->steps, b->cap * sizeof(tt_bench_step));
  }
  const tt_llm_reply *r = ev->reply;
  tt_bench_step *s = &b->steps[b->n++];
  memset(s, 0, sizeof *s);
  s->question = b->question;
  s->step = ev->step;
  snprintf(s->tool, sizeof s->tool, "%s", r->is_tool ? r->tool_name : "text");
  s->prompt = r->usage.prompt;
  s->reused = r->usage.cached;
  s->computed = r->usage.prompt - r->usage.cached;
  s->decoded = r->usage.completion;
  s->prefill_s = r->prefill_ms / 1000.0;
  s->decode_s = r->decode_ms / 1000.0;
  s->wall_s = r->latency_ms / 1000.0;
  s->restore_s = r->restore_ms / 1000.0;
  s->full_checks = r->grammar_full_checks;
}

static json_t *tt_step_json(const tt_bench_step *s) {
  return json_pack("{s:i,s:i,s:s,s:I,s:I,s:I,s:I,s:f,s:f,s:f,s:f}", "question", s->question, "step",
                   s->step, "tool", s->tool, "prompt_tokens", (json_int_t)s->prompt,
                   "reused_tokens", (json_int_t)s->reused, "computed_tokens",
                   (json_int_t)s->computed, "decode_tokens", (json_int_t)s->decoded, "prefill_s",
                   s->prefill_s, "decode_s", s->decode_s, "wall_s", s->wall_s, "restore_s",
                   s->restore_s);
}

/* Runs every question of the recording once; fills b. A question that
 * does not end answered, or takes another number of model calls than
 * recorded, stops it: TT_EXIT_FAIL with err (config: the recording does
 * not replay with these settings; cancelled). */
static int tt_bench_run(const json_t *rec, tt_db *db, const tt_schema *schema, tt_llm *engine,
                        const tt_config *cfg, bool by_bias, bool no_grammar, tt_bench *b,
                        tt_error *err) {
  json_t *calls = json_array();
  size_t i;
  json_t *q;
  json_array_foreach(json_object_get(rec, "questions"), i, q) {
    json_array_extend(calls, json_object_get(q, "calls"));
  }
  tt_llm *replay = tt_llm_replay_new(engine, calls, by_bias, no_grammar);
  tt_agent_opts ao = tt_config_agent_opts(cfg); /* as ask would run it */
  tt_agent *agent = tt_agent_new(db, schema, replay, &ao);
  tt_agent_hooks hooks = {.on_event = tt_bench_event, .ud = b};
  tt_turn *history = tt_xcalloc(json_array_size(json_object_get(rec, "questions")) + 1, sizeof(tt_turn));
  tt_run *runs = tt_xcalloc(json_array_size(json_object_get(rec, "questions")) + 1, sizeof(tt_run));
  char **summaries = tt_xcalloc(json_array_size(json_object_get(rec, "questions")) + 1, sizeof(char *));
  int rc = TT_EXIT_OK;
  json_array_foreach(json_object_get(rec, "questions"), i, q) {
    b->question = (int)i + 1;
    b->calls = 0;
    const char *text = json_string_value(json_object_get(q, "question"));
    tt_agent_ask(agent, history, i, NULL, text ? text : "", &hooks, &runs[i]);
    if (runs[i].status != TT_RUN_ANSWERED) {
      tt_error_set(err, runs[i].status == TT_RUN_CANCELLED ? TT_ERR_CANCELLED : TT_ERR_CONFIG,
                   "question %zu ended %s: %s", i + 1, tt_run_status_name(runs[i].status),
                   runs[i].error ? runs[i].error : "(no error)");
      rc = TT_EXIT_FAIL;
      break;
    }
    /* the calls are replayed as one list: a question that took another
     * number would hand its neighbour's calls to the wrong question */
    size_t recorded = json_array_size(json_object_get(q, "calls"));
    if (b->calls != recorded) {
      tt_error_set(err, TT_ERR_CONFIG, "question %zu took %zu model calls, the recording has %zu: "
                   "it no longer matches what the agent does", i + 1, b->calls, recorded);
      rc = TT_EXIT_FAIL;
      break;
    }
    summaries[i] = tt_run_summary(&runs[i]);
    /* as a chat thread carries them (store/session.c): the values of the
     * earlier results back the numbers a follow-up's answer repeats */
    history[i] = (tt_turn){.question = text, .answer = runs[i].answer, .sql = runs[i].sql,
                           .summary = summaries[i], .numbers = runs[i].numbers,
                           .status = runs[i].status};
  }
  for (size_t k = 0; k <= json_array_size(json_object_get(rec, "questions")); k++) {
    tt_run_free(&runs[k]);
    free(summaries[k]);
  }
  free(runs);
  free(summaries);
  free(history);
  tt_agent_free(agent);
  tt_llm_free(replay);
  json_decref(calls);
  return rc;
}

static void tt_bench_totals(const tt_bench *b, tt_bench_step *t) {
  memset(t, 0, sizeof *t);
  for (size_t i = 0; i < b->n; i++) {
    const tt_bench_step *s = &b->steps[i];
    t->prompt += s->prompt;
    t->reused += s->reused;
    t->computed += s->computed;
    t->decoded += s->decoded;
    t->prefill_s += s->prefill_s;
    t->decode_s += s->decode_s;
    t->wall_s += s->wall_s;
    t->restore_s += s->restore_s;
    t->full_checks += s->full_checks;
  }
}

static void tt_bench_print(const tt_bench *b, const tt_bench_step *t, const char *model, int threads,
                           bool reuse) {
  printf("model %s, %d threads, %s\n\n", model, threads, reuse ? "reusing computed tokens" : "no reuse");
  printf("%-4s %-4s %-8s %8s %8s %9s %7s %10s %9s %8s\n", "q", "step", "tool", "prompt", "reused",
         "computed", "decode", "prefill s", "decode s", "wall s");
  for (size_t i = 0; i < b->n; i++) {
    const tt_bench_step *s = &b->steps[i];
    printf("%-4d %-4d %-8s %8ld %8ld %9ld %7ld %10.2f %9.2f %8.2f\n", s->question, s->step, s->tool,
           s->prompt, s->reused, s->computed, s->decoded, s->prefill_s, s->decode_s, s->wall_s);
  }
  printf("%-18s %8ld %8ld %9ld %7ld %10.2f %9.2f %8.2f\n", "total", t->prompt, t->reused, t->computed,
         t->decoded, t->prefill_s, t->decode_s, t->wall_s);
  if (t->prompt)
    printf("\ncomputed %.1f%% of the prompt tokens sent; decoding %.1f tok/s\n",
           100.0 * (double)t->computed / (double)t->prompt,
           t->decode_s > 0 ? (double)t->decoded / t->decode_s : 0);
  if (t->restore_s > 0) printf("a saved prefix state was restored in %.0f ms\n", t->restore_s * 1000);
}

int cmd_bench(int argc, char **argv) {
  tt_bench_cli bc = {.reuse = true};
  int rc0 = tt_opts_parse(&tt_cmd_bench, argc, argv, 1, tt_bench_option, &bc);
  if (rc0 != TT_OPTS_GO) return rc0;
  const char *db_arg = bc.db_arg;
  bool reuse = bc.reuse, grammar = bc.grammar, as_json = bc.as_json;
  long schema_budget = bc.schema_budget;
  if (argc - optind != 1) return tt_usage_error("bench", "give one recording file");
  /* the embedded engine, as ask would load it, with bench's own settings */
  tt_config cfg;
  tt_config_init(&cfg);
  cfg.model_path = bc.model;
  cfg.threads = bc.threads;
  cfg.ctx = bc.ctx;
  cfg.llama_no_reuse = !reuse;
  cfg.llama_cold = bc.cold; /* computes and saves the prefix, so a warm run after it restores it */
  if (schema_budget) cfg.schema_budget = schema_budget;
  tt_error err0;
  tt_config_resolve(&cfg, &err0);
  tt_models *models = tt_models_new(&cfg);
  tt_model_choice ch;
  tt_models_choice(models, &ch);
  char *model = ch.path ? tt_xstrdup(ch.path) : NULL;
  tt_model_choice_free(&ch);
  if (!model) {
    tt_models_free(models);
    tt_config_free(&cfg);
    return tt_usage_error("bench", "give --model-path (bench runs the embedded engine)");
  }
  cfg.model_path = model;
  json_error_t jerr;
  json_t *rec = json_load_file(argv[optind], 0, &jerr);
  if (!rec || !json_is_array(json_object_get(rec, "questions"))) {
    int rc = tt_fail(TT_EXIT_FAIL, "cannot read the recording %s: %s", argv[optind],
                     rec ? "it has no \"questions\" array" : jerr.text);
    json_decref(rec);
    free(model);
    tt_models_free(models);
    tt_config_free(&cfg);
    return rc;
  }
  char *db_path = NULL;
  if (db_arg) {
    db_path = tt_xstrdup(db_arg);
  } else {
    const char *rel = json_string_value(json_object_get(rec, "database"));
    char *copy = tt_xstrdup(argv[optind]);
    db_path = rel && rel[0] != '/' ? tt_xasprintf("%s/%s", dirname(copy), rel) : tt_xstrdup(rel ? rel : "");
    free(copy);
  }
  cfg.db = db_path;
  int rc = TT_EXIT_OK;
  /* the schema as ask reads it: knowledge file and value index included */
  tt_error serr;
  tt_service *svc = tt_service_open(&cfg, TT_SERVICE_SCHEMA | TT_SERVICE_WHOLE_SCHEMA, &serr);
  const tt_schema *schema = svc ? tt_service_schema(svc, &serr) : NULL;
  tt_db *db = svc ? tt_service_db(svc) : NULL;
  tt_llm *engine = NULL;
  if (!schema) {
    rc = tt_cli_error("bench", &serr);
  } else {
    tt_error lerr;
    engine = tt_models_make(models, &lerr);
    if (!engine) rc = tt_cli_error("bench", &lerr);
    tt_bench b = {0}, bare = {0};
    tt_error err = TT_ERROR_INIT;
    if (engine) rc = tt_bench_run(rec, db, schema, engine, &cfg, true, false, &b, &err);
    if (engine && rc == TT_EXIT_OK && grammar) {
      /* the same turns again, without the grammar: the difference in decode
       * time is what the grammar costs */
      tt_llm_free(engine);
      cfg.llama_no_prefix_file = true;
      engine = tt_models_make(models, &lerr);
      if (engine) rc = tt_bench_run(rec, db, schema, engine, &cfg, true, true, &bare, &err);
      else rc = tt_cli_error("bench", &lerr); /* the model without its prefix file */
    }
    if (rc != TT_EXIT_OK && err.kind != TT_OK) tt_fail(rc, "%s", tt_error_text(&err));
    if (rc == TT_EXIT_OK) {
      tt_bench_step t, tb;
      tt_bench_totals(&b, &t);
      tt_bench_totals(&bare, &tb);
      if (as_json) {
        json_t *o = json_object(), *steps = json_array();
        for (size_t i = 0; i < b.n; i++) json_array_append_new(steps, tt_step_json(&b.steps[i]));
        json_object_set_new(o, "model", json_string(model));
        json_object_set_new(o, "threads", json_integer(tt_llm_llama_threads(engine)));
        json_object_set_new(o, "reuse", json_boolean(reuse));
        json_object_set_new(o, "steps", steps);
        json_object_set_new(
            o, "context",
            json_pack("{s:I,s:I,s:I,s:I,s:I,s:I,s:I}", "tokens", (json_int_t)tt_llm_context(engine),
                      "reply_reserve", (json_int_t)tt_llm_reply_reserve(engine), "results_cut",
                      (json_int_t)b.results_cut, "results_shortened",
                      (json_int_t)b.results_shortened, "turns_dropped", (json_int_t)b.turns_dropped,
                      "largest_shortened_before", (json_int_t)b.shortened_before,
                      "largest_shortened_after", (json_int_t)b.shortened_after));
        json_object_set_new(o, "totals", tt_step_json(&t));
        json_t *totals = json_object_get(o, "totals");
        json_object_del(totals, "question");
        json_object_del(totals, "step");
        json_object_del(totals, "tool");
        if (grammar) {
          double with = t.decoded ? t.decode_s / (double)t.decoded : 0;
          double without = tb.decoded ? tb.decode_s / (double)tb.decoded : 0;
          json_object_set_new(o, "grammar", json_pack("{s:f,s:f,s:f,s:I}", "decode_ms_per_token",
                                                      with * 1000, "decode_ms_per_token_without",
                                                      without * 1000, "overhead_percent",
                                                      without > 0 ? 100 * (with - without) / without : 0,
                                                      "full_vocabulary_checks", (json_int_t)t.full_checks));
        }
        tt_buf out = TT_BUF_INIT;
        tt_json_dump(&out, o, JSON_COMPACT | JSON_REAL_PRECISION(6));
        printf("%s\n", tt_buf_cstr(&out));
        tt_buf_free(&out);
        json_decref(o);
      } else {
        tt_bench_print(&b, &t, model, tt_llm_llama_threads(engine), reuse);
        if (b.results_cut || b.results_shortened || b.turns_dropped)
          printf("context %ld tokens, %ld kept for the reply: %ld results cut, %ld older results "
                 "shortened, %ld earlier questions dropped (largest prompt shortened %ld -> %ld)\n",
                 tt_llm_context(engine), tt_llm_reply_reserve(engine), b.results_cut,
                 b.results_shortened, b.turns_dropped, b.shortened_before, b.shortened_after);
        if (grammar) {
          double with = t.decoded ? 1000 * t.decode_s / (double)t.decoded : 0;
          double without = tb.decoded ? 1000 * tb.decode_s / (double)tb.decoded : 0;
          printf("grammar: %.2f ms/token with it, %.2f ms/token without: %+.1f%% "
                 "(%ld tokens needed the whole-vocabulary check)\n",
                 with, without, without > 0 ? 100 * (with - without) / without : 0, t.full_checks);
        }
      }
    }
    free(b.steps);
    free(bare.steps);
  }
  tt_llm_free(engine);
  tt_service_free(svc);
  tt_models_free(models);
  free(db_path);
  json_decref(rec);
  free(model);
  tt_config_free(&cfg);
  return rc;
}
