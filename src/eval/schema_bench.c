/* schema_bench.c — how well schema retrieval picks the tables a question
 * needs, without a model: for each labelled question of a benchmark folder
 * (schema.sqlite and questions.jsonl, see bench/schema/gen.py) the schema
 * layer's ranking runs at each schema budget, spent as ask spends it (the
 * table index first, the cards the rest), and the tables it
 * gives in full are compared with the tables the gold SQL needs. Reports
 * all-needed recall (every needed table given), per-table recall, tables
 * shown and tokens, overall and per category. */
#include "eval/eval.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "agent/agent.h"
#include "schema/schema.h"

tt_schema_bench_opts tt_schema_bench_default_opts(void) {
  tt_schema_bench_opts o = {.nbudgets = 3, .budgets = {1000, 2000, 4000}};
  return o;
}

/* questions.jsonl: {"id","category","question","tables":[...]} per line. */
static bool tt_labelled(const json_t *q) {
  return json_is_string(json_object_get(q, "question")) && json_is_array(json_object_get(q, "tables")) &&
         json_array_size(json_object_get(q, "tables")) > 0;
}

static json_t *tt_bench_questions(const char *path, tt_error *err) {
  return tt_eval_read_jsonl(path, tt_labelled,
                            "a labelled question: it needs a string question and a non-empty array tables",
                            "--data wants a folder with schema.sqlite and questions.jsonl "
                            "(python3 bench/schema/gen.py --out DIR writes one)", err);
}

typedef struct tt_tally {
  size_t questions, all_needed, needed, found, shown, tokens;
} tt_tally;

static void tt_tally_add(tt_tally *t, size_t needed, size_t found, size_t shown, size_t tokens) {
  t->questions++;
  t->all_needed += found == needed;
  t->needed += needed;
  t->found += found;
  t->shown += shown;
  t->tokens += tokens;
}

static json_t *tt_tally_json(const tt_tally *t) {
  double n = t->questions ? (double)t->questions : 1;
  return json_pack("{s:I,s:f,s:f,s:f,s:f}", "questions", (json_int_t)t->questions,
                   "all_needed_recall", (double)t->all_needed / n,
                   "table_recall", t->needed ? (double)t->found / (double)t->needed : 0.0,
                   "tables_shown", (double)t->shown / n, "tokens", (double)t->tokens / n);
}

/* One budget over every question; with details, each question's misses. */
static json_t *tt_bench_budget(const tt_schema *s, const json_t *qs, size_t budget, bool details) {
  size_t n = tt_schema_count(s);
  const tt_card **cards = tt_xcalloc(n ? n : 1, sizeof *cards);
  /* as ask spends the budget: the table index first, the cards (and what
   * the knowledge file says about the question) the rest */
  tt_agent_opts ao = tt_agent_default_opts();
  ao.schema_budget = budget;
  tt_agent *a = tt_agent_new(NULL, s, NULL, &ao);
  bool whole = false;
  size_t card_budget = tt_agent_card_budget(s, budget, &whole);
  tt_tally all = {0};
  json_t *cats = json_object(), *per = json_array();
  tt_tally *ct = NULL;
  const char **cat_names = NULL;
  size_t ncats = 0;
  size_t i;
  json_t *q;
  json_array_foreach(qs, i, q) {
    const char *text = json_string_value(json_object_get(q, "question"));
    const char *cat = json_string_value(json_object_get(q, "category"));
    if (!cat) cat = "uncategorised";
    size_t tokens = 0, k = 0;
    json_t *picked = tt_agent_schema_picks(a, text, &tokens);
    if (picked) {
      size_t j;
      json_t *p;
      json_array_foreach(picked, j, p) {
        const tt_card *c = tt_schema_find(s, json_string_value(json_object_get(p, "table")));
        if (c) cards[k++] = c;
      }
    } else { /* every card is in the system prompt */
      picked = json_array();
      for (; k < n; k++) {
        cards[k] = tt_schema_card(s, k);
        tokens += cards[k]->tokens;
        json_array_append_new(picked, json_pack("{s:s,s:f,s:s}", "table", cards[k]->table->name,
                                                "score", 0.0, "reason", "the whole schema fits"));
      }
    }
    const json_t *need = json_object_get(q, "tables");
    size_t found = 0, t;
    const json_t *name;
    json_t *missed = json_array();
    json_array_foreach(need, t, name) {
      bool hit = false;
      for (size_t j = 0; j < k && !hit; j++)
        hit = strcasecmp(cards[j]->table->name, json_string_value(name) ? json_string_value(name) : "") == 0;
      if (hit) found++;
      else json_array_append(missed, (json_t *)name);
    }
    size_t needed = json_array_size(need);
    tt_tally_add(&all, needed, found, k, tokens);
    size_t c = 0;
    while (c < ncats && strcmp(cat_names[c], cat) != 0) c++;
    if (c == ncats) {
      ct = tt_xrealloc(ct, (ncats + 1) * sizeof *ct);
      cat_names = tt_xrealloc(cat_names, (ncats + 1) * sizeof *cat_names);
      ct[ncats] = (tt_tally){0};
      cat_names[ncats++] = cat;
    }
    tt_tally_add(&ct[c], needed, found, k, tokens);
    if (details)
      json_array_append_new(per, json_pack("{s:O?,s:s,s:b,s:o,s:I,s:I,s:o}", "id", json_object_get(q, "id"),
                                           "category", cat, "all_needed", found == needed, "missed", missed,
                                           "tables_shown", (json_int_t)k, "tokens", (json_int_t)tokens,
                                           "picked", picked));
    else {
      json_decref(missed);
      json_decref(picked);
    }
  }
  for (size_t c = 0; c < ncats; c++) json_object_set_new(cats, cat_names[c], tt_tally_json(&ct[c]));
  json_t *r = tt_tally_json(&all);
  json_object_set_new(r, "budget", json_integer((json_int_t)budget));
  json_object_set_new(r, "card_budget", json_integer((json_int_t)card_budget));
  json_object_set_new(r, "whole_schema", json_boolean(whole));
  json_object_set_new(r, "categories", cats);
  if (details) json_object_set_new(r, "per_question", per);
  else json_decref(per);
  free(ct);
  free(cat_names);
  free(cards);
  tt_agent_free(a);
  return r;
}

json_t *tt_schema_bench_run(const tt_schema_bench_opts *o, tt_error *err) {
  char *qpath = tt_xasprintf("%s/questions.jsonl", o->data_dir);
  char *dbpath = tt_xasprintf("%s/schema.sqlite", o->data_dir);
  json_t *qs = tt_bench_questions(qpath, err), *r = NULL;
  tt_config cfg;
  tt_config_init(&cfg);
  tt_service *svc = NULL;
  const tt_schema *s = NULL;
  if (!qs) goto done;
  /* as ask does, through the session layer: the knowledge file beside the
   * database, and the value index linking values the questions name to
   * their tables (built here, not cached, so its cost is measured) */
  cfg.db = dbpath;
  double t0 = tt_now_ms();
  if (tt_config_resolve(&cfg, err))
    svc = tt_service_open(&cfg, TT_SERVICE_SCHEMA | TT_SERVICE_VALUES_BUILT | TT_SERVICE_WHOLE_SCHEMA,
                          err);
  s = svc ? tt_service_schema(svc, err) : NULL;
  double values_ms = tt_now_ms() - t0;
  if (!s) goto done;
  json_t *budgets = json_array();
  for (size_t b = 0; b < o->nbudgets; b++)
    json_array_append_new(budgets, tt_bench_budget(s, qs, o->budgets[b], o->details));
  r = json_pack("{s:s,s:I,s:I,s:I,s:o}", "database", dbpath, "tables", (json_int_t)tt_schema_count(s),
                "schema_tokens", (json_int_t)tt_schema_total_tokens(s), "questions",
                (json_int_t)json_array_size(qs), "budgets", budgets);
  json_object_set_new(r, "value_index",
                      json_pack("{s:I,s:f}", "values", (json_int_t)tt_values_count(tt_schema_values(s)),
                                "build_ms", values_ms));
done:
  tt_service_free(svc);
  tt_config_free(&cfg);
  json_decref(qs);
  free(qpath);
  free(dbpath);
  return r;
}
