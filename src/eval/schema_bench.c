/* schema_bench.c — how well schema retrieval picks the tables a question
 * needs, without a model: for each labelled question of a benchmark folder
 * (schema.sqlite and questions.jsonl, see bench/schema/gen.py) the schema
 * layer's ranking runs at each schema budget, spent as ask spends it (the
 * table index first, the cards the rest), and the tables it
 * gives in full are compared with the tables the gold SQL needs. Reports
 * all-needed recall (every needed table given), per-table recall, tables
 * shown and tokens, overall and per category; how many questions got a
 * table the value links chose that the gold SQL does not need (and the
 * share of card room such tables took); and, in the same run, a plain BM25
 * baseline over table names, column names and indexed values, given the
 * same card costs and card budget (schema_bm25.c). With an embedding model,
 * the ranking has its embedding score too, and each budget says what the
 * embeddings cost (requests, tokens, time; the tables' vectors are made at
 * the first budget and read from the cache at the next). */
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
  size_t value_unneeded, value_unneeded_tokens; /* questions with one; their cards' tokens */
  size_t bm25_all_needed;
} tt_tally;

typedef struct tt_outcome {
  size_t needed, found, shown, tokens;
  size_t value_unneeded_tokens; /* tokens of picked value-linked tables not needed; 0 none */
  bool value_unneeded;
  bool bm25_all_needed;
} tt_outcome;

static void tt_tally_add(tt_tally *t, const tt_outcome *o) {
  t->questions++;
  t->all_needed += o->found == o->needed;
  t->needed += o->needed;
  t->found += o->found;
  t->shown += o->shown;
  t->tokens += o->tokens;
  t->value_unneeded += o->value_unneeded;
  t->value_unneeded_tokens += o->value_unneeded_tokens;
  t->bm25_all_needed += o->bm25_all_needed;
}

static json_t *tt_tally_json(const tt_tally *t) {
  double n = t->questions ? (double)t->questions : 1;
  return json_pack("{s:I,s:f,s:f,s:f,s:f,s:I,s:f,s:f}", "questions", (json_int_t)t->questions,
                   "all_needed_recall", (double)t->all_needed / n,
                   "table_recall", t->needed ? (double)t->found / (double)t->needed : 0.0,
                   "tables_shown", (double)t->shown / n, "tokens", (double)t->tokens / n,
                   "value_unneeded_questions", (json_int_t)t->value_unneeded,
                   "value_unneeded_token_share",
                   t->tokens ? (double)t->value_unneeded_tokens / (double)t->tokens : 0.0,
                   "bm25_all_needed_recall", (double)t->bm25_all_needed / n);
}

static bool tt_needs(const json_t *need, const char *table) {
  size_t t;
  const json_t *name;
  json_array_foreach(need, t, name) {
    if (json_string_value(name) && strcasecmp(json_string_value(name), table) == 0) return true;
  }
  return false;
}

/* The picks a value link chose ("value '...' in T.c") that are not needed. */
static void tt_value_unneeded(const json_t *picked, const json_t *need, const tt_schema *s,
                              tt_outcome *o) {
  size_t j;
  json_t *p;
  json_array_foreach(picked, j, p) {
    const char *table = json_string_value(json_object_get(p, "table"));
    const char *reason = json_string_value(json_object_get(p, "reason"));
    if (!table || !reason || strncmp(reason, "value '", 7) != 0 || tt_needs(need, table)) continue;
    const tt_card *c = tt_schema_find(s, table);
    o->value_unneeded = true;
    o->value_unneeded_tokens += c ? c->tokens : 0;
  }
}

/* One budget over every question; with details, each question's misses. */
/* What the embedding score cost at one budget. */
static json_t *tt_bench_embed_json(const tt_agent *a) {
  tt_embed_stats e;
  tt_agent_embed_stats(a, &e);
  json_t *j = json_pack("{s:b,s:I,s:I,s:I,s:I,s:I,s:f,s:I,s:I,s:I,s:f}", "used", e.used,
                        "tables", (json_int_t)e.tables, "dim", (json_int_t)e.dim,
                        "tables_cached", (json_int_t)e.cached,
                        "requests", (json_int_t)e.requests, "tokens", (json_int_t)e.tokens,
                        "ms", e.ms, "tables_embedded", (json_int_t)e.desc_texts,
                        "tables_requests", (json_int_t)e.desc_requests,
                        "tables_tokens", (json_int_t)e.desc_tokens, "tables_ms", e.desc_ms);
  if (e.note) json_object_set_new(j, "note", json_string(e.note));
  return j;
}

static json_t *tt_bench_budget(const tt_schema *s, const tt_bench_bm25 *bm, const json_t *qs,
                               size_t budget, bool details, tt_llm *embed_llm) {
  size_t n = tt_schema_count(s);
  const tt_card **cards = tt_xcalloc(n ? n : 1, sizeof *cards);
  /* as ask spends the budget: the table index first, the cards (and what
   * the knowledge file says about the question) the rest */
  tt_agent_opts ao = tt_agent_default_opts();
  ao.schema_budget = budget;
  ao.embed_llm = embed_llm;
  ao.embeddings = embed_llm ? TT_EMBED_ON : TT_EMBED_OFF;
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
    tt_outcome o = {.needed = json_array_size(need), .found = found, .shown = k, .tokens = tokens};
    tt_value_unneeded(picked, need, s, &o);
    const tt_card **bcards = tt_xcalloc(n ? n : 1, sizeof *bcards);
    size_t nb = whole ? n : tt_bench_bm25_select(bm, s, text, card_budget, bcards), bfound = 0;
    if (whole)
      for (size_t j = 0; j < n; j++) bcards[j] = tt_schema_card(s, j);
    json_array_foreach(need, t, name) {
      for (size_t j = 0; j < nb; j++)
        if (strcasecmp(bcards[j]->table->name, json_string_value(name) ? json_string_value(name) : "") == 0) {
          bfound++;
          break;
        }
    }
    o.bm25_all_needed = bfound == o.needed;
    free(bcards);
    tt_tally_add(&all, &o);
    size_t c = 0;
    while (c < ncats && strcmp(cat_names[c], cat) != 0) c++;
    if (c == ncats) {
      ct = tt_xrealloc(ct, (ncats + 1) * sizeof *ct);
      cat_names = tt_xrealloc(cat_names, (ncats + 1) * sizeof *cat_names);
      ct[ncats] = (tt_tally){0};
      cat_names[ncats++] = cat;
    }
    tt_tally_add(&ct[c], &o);
    if (details)
      json_array_append_new(per, json_pack("{s:O?,s:s,s:b,s:o,s:I,s:I,s:o,s:b,s:b}", "id",
                                           json_object_get(q, "id"), "category", cat, "all_needed",
                                           found == o.needed, "missed", missed,
                                           "tables_shown", (json_int_t)k, "tokens", (json_int_t)tokens,
                                           "picked", picked, "value_unneeded", o.value_unneeded,
                                           "bm25_all_needed", o.bm25_all_needed));
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
  if (embed_llm) json_object_set_new(r, "embeddings", tt_bench_embed_json(a));
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
  tt_bench_bm25 *bm = tt_bench_bm25_new(s);
  for (size_t b = 0; b < o->nbudgets; b++)
    json_array_append_new(budgets, tt_bench_budget(s, bm, qs, o->budgets[b], o->details, o->embed_llm));
  tt_bench_bm25_free(bm);
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
