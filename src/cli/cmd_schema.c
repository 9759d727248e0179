/* cmd_schema.c — `tabletalk schema DB [TABLE...]`: the schema cards a model
 * reads (columns with types and keys, foreign keys, row counts, example
 * values), as text or JSON, with the token estimate; with --budget, what
 * the first prompt of a question costs (rules, tools, index, cards); with
 * --question, which tables that question gets in full and why, and what
 * the value index and the knowledge file add to its message. */
#include "cli/cli.h"
#include "agent/agent.h"

#include <ctype.h>

#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const tt_opt tt_schema_own[] = {
    {TT_OPT_JSON, "json", 0, TT_ARG_NONE, NULL, "one JSON object: tables, token_estimate", TT_COMPLETE_NOTHING, NULL,
     "One JSON object instead of text (`tables`, `token_estimate`, `complete`; with `--budget` or "
     "`--question`, what they show, and `complete`). `complete` is false when the time limit "
     "(`TABLETALK_SCHEMA_SECONDS`) stopped reading rows before some tables: their cards say so, "
     "and the rest is read by the next start."},
    {TT_OPT_BUDGET, "budget", 0, TT_ARG_OPTIONAL, "N", "the first prompt's cost in tokens (2000)", TT_COMPLETE_NOTHING, NULL,
     "Print instead what the first prompt of a question costs, in estimated tokens, under a "
     "schema budget of *N* (default 2000): rules (the system prompt's fixed text), tools (their "
     "descriptions and JSON schemas), the table index, the cards, the knowledge file's "
     "definitions and examples (\"known\", counted within the budget) and the total."},
    {TT_OPT_QUESTION, "question", 0, TT_ARG_REQUIRED, "TEXT", "what the model gets for this question", TT_COMPLETE_NOTHING, NULL,
     "Show first what the model gets for that question when the schema is over the budget: the "
     "tables chosen to go in full, with the reason for each (`name matches 'genre'`, `value "
     "'Rotterdam' in office_location.city`, `joins Invoice to Customer`), then their cards, the "
     "value hints and the knowledge file's part that go with the question. Tables are ranked by "
     "BM25 over table names, column names and sample values, and the tables on the shortest "
     "foreign-key paths between them are added. The trace of an `ask` records the same choice as "
     "a `schema` event."},
    {TT_OPT_SCORES, "scores", 0, TT_ARG_NONE, NULL, "with --question, each table's score", TT_COMPLETE_NOTHING, NULL,
     "With `--question`, each chosen table's ranking score."},
    {TT_OPT_KNOWLEDGE, "knowledge", 0, TT_ARG_REQUIRED, "FILE", "the knowledge file (DB.knowledge.json)", TT_COMPLETE_FILE, NULL,
     TT_DOC_KNOWLEDGE},
    {TT_OPT_IMMUTABLE, "immutable", 0, TT_ARG_NONE, NULL, "open with immutable=1 (no locking)", TT_COMPLETE_NOTHING, NULL,
     TT_DOC_IMMUTABLE},
    TT_OPT_DB_URL_ENTRY,
    TT_OPT_ENGINE_ENTRY,
    TT_OPT_SCHEMAS_ENTRY,
    TT_OPT_TRUST_FUNCTIONS_ENTRY,
    {TT_OPT_HEADER, "header", 0, TT_ARG_NONE, NULL, "a CSV file's first line names the columns", TT_COMPLETE_NOTHING, NULL,
     TT_DOC_HEADER},
    {TT_OPT_NO_HEADER, "no-header", 0, TT_ARG_NONE, NULL, "a CSV file's first line is data", TT_COMPLETE_NOTHING, NULL,
     TT_DOC_NO_HEADER},
    {TT_OPT_CSV_TYPES, "csv-types", 0, TT_ARG_REQUIRED, "COL=TYPE,...", "types of CSV columns", TT_COMPLETE_NOTHING, NULL,
     TT_DOC_CSV_TYPES},
    {0, NULL, 0, 0, NULL, NULL, 0, NULL, NULL},
};
static const tt_opt_group tt_schema_group = {NULL, false, tt_schema_own};
static const tt_opt_group *const tt_schema_groups[] = {&tt_schema_group, NULL};
const tt_cmd_spec tt_cmd_schema = {
    .name = "schema",
    .usage = "tabletalk schema DB [TABLE...] [options]",
    .about = "Show the tables and views of DB as the model sees them: columns, keys,\n"
             "descriptions, frequent values, row counts and the estimated prompt\n"
             "tokens. Name tables to show only those.\n" TT_DB_IS,
    .groups = tt_schema_groups,
    .args = TT_COMPLETE_FILE,
    .doc =
        "Print the schema cards, as the model sees them: for each table and view its columns "
        "with types, primary and foreign keys, descriptions (from the knowledge file, else from "
        "SQL comments in CREATE TABLE: a comment on a column's line describes it, one on the "
        "first line the table), the three most frequent values of text columns among the first "
        "10,000 rows (one example for dates, none for numbers), the row count (from sqlite_stat1 "
        "when present, shown ~N, else counted up to 100,000, shown >100000; on PostgreSQL the "
        "planner's estimate) and the estimated prompt tokens. Name tables to show only those. In "
        "a schema of 10 or more tables, columns that half of the tables share and that are "
        "neither keys nor described (audit stamps, ETL ids) are folded into one \"also:\" line "
        "per card. What is read is bounded in rows and steps of work, never in seconds, so the "
        "same database gives the same cards on any machine; a view that needs too much work for "
        "three rows is shown without examples. The cards are kept in the cache folder (*CACHE*"
        "/catalog) and read from there while the database's schema and data stay as they were; "
        "after a change of data the kept cards are used and read again in the background.",
};

typedef struct tt_schema_cli {
  int argc;
  char **argv;
  tt_config cfg;
  bool as_json, cost, scores;
  const char *question;
  long budget;
} tt_schema_cli;

static int tt_schema_option(void *ud, int id, const char *val) {
  tt_schema_cli *s = ud;
  switch (id) {
  case TT_OPT_JSON: s->as_json = true; return 0;
  case TT_OPT_IMMUTABLE: s->cfg.immutable = true; return 0;
  case TT_OPT_SCHEMAS: {
    int rc = tt_cli_schemas_option("schema", val);
    if (!rc) s->cfg.schemas = val;
    return rc;
  }
  case TT_OPT_TRUST_FUNCTIONS: return tt_cli_trust_option("schema", val, &s->cfg);
  case TT_OPT_HEADER: s->cfg.csv_header = TT_CSV_HEADER_YES; return 0;
  case TT_OPT_NO_HEADER: s->cfg.csv_header = TT_CSV_HEADER_NO; return 0;
  case TT_OPT_CSV_TYPES: {
    int rc = tt_cli_csv_types_option("schema", val);
    if (!rc) s->cfg.csv_types = val;
    return rc;
  }
  case TT_OPT_ENGINE: s->cfg.engine = val; return 0;
  case TT_OPT_BUDGET: {
    s->cost = true;
    /* --budget=N, or --budget N when the next word is a number */
    const char *arg = val;
    if (!arg && optind < s->argc && isdigit((unsigned char)s->argv[optind][0])) arg = s->argv[optind++];
    if (arg && !tt_parse_long(arg, 100, 1000000, &s->budget))
      return tt_usage_error("schema", "--budget takes a number of tokens from 100 to 1000000");
    return 0;
  }
  case TT_OPT_QUESTION:
    if (!*val) return tt_usage_error("schema", "--question wants the question's text");
    s->question = val;
    s->cost = true;
    return 0;
  case TT_OPT_SCORES: s->scores = true; return 0;
  case TT_OPT_KNOWLEDGE: s->cfg.knowledge = val; return 0;
  }
  return 0;
}

static void tt_list_names(tt_buf *b, const tt_schema *s) {
  for (size_t i = 0; i < tt_schema_count(s); i++) {
    if (i) tt_buf_puts(b, ", ");
    tt_buf_puts(b, tt_schema_card(s, i)->table->name);
  }
}

static void tt_cost_line(tt_buf *out, const char *what, size_t tokens) {
  tt_buf_printf(out, "  %-6s ", what);
  tt_buf num = TT_BUF_INIT;
  tt_buf_put_grouped(&num, (long long)tokens);
  tt_buf_printf(out, "%7s", tt_buf_cstr(&num));
  tt_buf_free(&num);
}

/* The tables question gets in full, why (and their scores), then their
 * cards as the model reads them. */
static void tt_show_picks(tt_buf *out, const tt_agent *a, const tt_schema *s, const char *question,
                          bool scores, json_t *j) {
  size_t tokens = 0;
  json_t *picks = tt_agent_schema_picks(a, question, &tokens);
  if (j) {
    json_object_set_new(j, "question", json_string(question));
    json_object_set_new(j, "selected", picks ? json_incref(picks) : json_null());
    json_object_set_new(j, "selected_tokens", json_integer((json_int_t)tokens));
  } else if (!picks) {
    tt_buf_printf(out, "Every table fits the schema budget: the model gets the whole schema with "
                       "any question.\n\n");
  } else {
    tt_buf_printf(out, "Tables in full for \"%s\" (%zu of %zu, %zu tokens):\n", question,
                  json_array_size(picks), tt_schema_count(s), tokens);
    size_t i;
    json_t *t;
    json_array_foreach(picks, i, t) {
      tt_buf_printf(out, "  %-24s", json_string_value(json_object_get(t, "table")));
      if (scores) tt_buf_printf(out, " %7.2f", json_real_value(json_object_get(t, "score")));
      tt_buf_printf(out, "  %s\n", json_string_value(json_object_get(t, "reason")));
    }
    tt_buf_putc(out, '\n');
    size_t n = tt_schema_count(s);
    const tt_card **cards = tt_xcalloc(n ? n : 1, sizeof *cards);
    size_t k = 0;
    json_array_foreach(picks, i, t) {
      const tt_card *c = tt_schema_find(s, json_string_value(json_object_get(t, "table")));
      if (c) cards[k++] = c;
    }
    tt_schema_render_text(s, cards, k, out);
    tt_buf_putc(out, '\n');
    free(cards);
  }
  json_decref(picks);
  /* what else goes into the question's message */
  tt_value_matches m;
  tt_values_match(tt_schema_values(s), question, &m);
  tt_buf hints = TT_BUF_INIT;
  tt_values_hints(&m, &hints);
  char *kn = tt_agent_knowledge_for(a, question);
  if (j) {
    json_t *hj = json_array();
    for (size_t i = 0; i < m.n; i++)
      json_array_append_new(hj, json_pack("{s:s,s:s,s:s,s:s}", "phrase", m.m[i].phrase, "value",
                                          m.m[i].value, "table", m.m[i].table, "column", m.m[i].column));
    json_object_set_new(j, "value_hints", hj);
    json_object_set_new(j, "knowledge_text", kn ? json_string(kn) : json_null());
  } else {
    if (m.n) tt_buf_printf(out, "Values the question names (added to it as hints):\n%s\n", tt_buf_cstr(&hints));
    if (kn) tt_buf_printf(out, "From the knowledge file (added to the question):\n%s\n", kn);
  }
  free(kn);
  tt_buf_free(&hints);
  tt_value_matches_free(&m);
}

/* The first prompt's cost under budget, as text or JSON; with a question,
 * the tables it gets first. */
static int tt_show_cost(const tt_schema *s, tt_db *db, const tt_config *cfg, const char *question,
                        bool scores, bool as_json) {
  tt_agent_opts ao = tt_config_agent_opts(cfg); /* the budget as --budget says */
  tt_agent *a = tt_agent_new(db, s, NULL, &ao);
  tt_prompt_cost c;
  tt_agent_prompt_cost(a, question, &c);
  tt_buf out = TT_BUF_INIT;
  json_t *pj = question && as_json ? json_object() : NULL;
  if (question) tt_show_picks(&out, a, s, question, scores, pj);
  tt_agent_free(a);
  if (as_json) {
    json_t *j = json_pack("{s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:b}", "budget", (json_int_t)c.budget,
                          "rules", (json_int_t)c.rules, "tools", (json_int_t)c.tools, "index",
                          (json_int_t)c.index, "cards", (json_int_t)c.cards, "knowledge",
                          (json_int_t)c.knowledge, "total",
                          (json_int_t)c.total, "tables", (json_int_t)c.ntables, "tables_with_cards",
                          (json_int_t)c.ncards, "whole_schema", c.whole_schema);
    json_object_set_new(j, "complete", json_boolean(tt_schema_complete(s)));
    if (!c.whole_schema)
      json_object_set_new(j, "selector", json_pack("{s:I,s:b}", "tokens", (json_int_t)c.selector,
                                                   "runs", c.selector_on));
    if (pj) json_object_update(j, pj);
    json_decref(pj);
    tt_json_dump(&out, j, JSON_COMPACT);
    tt_buf_putc(&out, '\n');
    json_decref(j);
  } else {
    tt_buf_printf(&out, "First prompt of %s, estimated tokens (schema budget %zu):\n",
                  question ? "this question" : "a question", c.budget);
    tt_cost_line(&out, "rules", c.rules);
    tt_buf_puts(&out, "  the system prompt's fixed text\n");
    tt_cost_line(&out, "tools", c.tools);
    tt_buf_puts(&out, "  the tools' descriptions and JSON schemas\n");
    tt_cost_line(&out, "index", c.index);
    tt_buf_puts(&out, c.whole_schema ? "  none: every card fits\n" : "  every table at a glance\n");
    tt_cost_line(&out, "cards", c.cards);
    tt_buf_printf(&out, "  %zu of %zu tables in full\n", c.ncards, c.ntables);
    if (tt_schema_knowledge(s)) {
      tt_cost_line(&out, "known", c.knowledge);
      tt_buf_puts(&out, "  definitions and examples from the knowledge file\n");
    }
    tt_cost_line(&out, "total", c.total);
    tt_buf_putc(&out, '\n');
    if (!c.whole_schema) {
      tt_cost_line(&out, "select", c.selector);
      tt_buf_printf(&out, "  a call of its own before the first prompt: one line per table (%s)\n",
                    c.selector_on ? "runs by default at this size" : "with --selector on; by itself from 400 tables");
    }
  }
  int rc = tt_write_result(stdout, &out);
  tt_buf_free(&out);
  return rc;
}

/* The schema of DB through the session layer; on success *svc holds it. */
static int tt_schema_open(tt_schema_cli *sc, const char *path, tt_service **svc,
                          const tt_schema **s) {
  sc->cfg.db = path;
  sc->cfg.progress = true;
  tt_error err;
  *svc = NULL;
  /* the tables a question gets, as ask chooses them: values linked too */
  unsigned flags = TT_SERVICE_SCHEMA | (sc->question ? 0 : TT_SERVICE_NO_VALUES);
  if (tt_config_resolve(&sc->cfg, &err)) *svc = tt_service_open(&sc->cfg, flags, &err);
  *s = *svc ? tt_service_schema(*svc, &err) : NULL;
  return *s ? 0 : tt_cli_error("schema", &err);
}

int cmd_schema(int argc, char **argv) {
  tt_schema_cli sc = {.argc = argc, .argv = argv,
                      .budget = 0};
  tt_config_init(&sc.cfg);
  int rc0 = tt_opts_parse(&tt_cmd_schema, argc, argv, 1, tt_schema_option, &sc);
  if (rc0 == TT_OPTS_GO && optind >= argc) rc0 = tt_usage_error("schema", "give a database file");
  if (rc0 != TT_OPTS_GO) {
    tt_config_free(&sc.cfg);
    return rc0;
  }
  tt_service *svc = NULL;
  const tt_schema *s = NULL;
  const char *path = argv[optind++];
  int rc1 = tt_schema_open(&sc, path, &svc, &s);
  if (rc1) {
    tt_service_free(svc);
    tt_config_free(&sc.cfg);
    return rc1;
  }
  if (sc.cost) {
    if (sc.budget) sc.cfg.schema_budget = sc.budget; /* else the configuration's default */
    int rc = tt_show_cost(s, tt_service_db(svc), &sc.cfg, sc.question, sc.scores, sc.as_json);
    tt_service_free(svc);
    tt_config_free(&sc.cfg);
    return rc;
  }
  bool as_json = sc.as_json;

  size_t n = (size_t)(argc - optind);
  const tt_card **cards = n ? tt_xcalloc(n, sizeof *cards) : NULL;
  for (size_t i = 0; i < n; i++) {
    cards[i] = tt_schema_find(s, argv[optind + (int)i]);
    if (!cards[i]) {
      tt_buf names = TT_BUF_INIT;
      tt_list_names(&names, s);
      int rc = tt_fail(TT_EXIT_FAIL, "no table or view named '%s' in %s; it has: %s",
                       argv[optind + (int)i], path, tt_buf_cstr(&names));
      tt_buf_free(&names);
      free(cards);
      tt_service_free(svc);
      tt_config_free(&sc.cfg);
      return rc;
    }
  }

  tt_term t = tt_term_probe(stdout);
  tt_buf out = TT_BUF_INIT;
  if (as_json) {
    json_t *j = tt_schema_to_json(s, cards, n);
    tt_json_dump(&out, j, (t.tty ? JSON_INDENT(2) : JSON_COMPACT) | JSON_REAL_PRECISION(15));
    tt_buf_putc(&out, '\n');
    json_decref(j);
  } else {
    tt_schema_render_text(s, cards, n, &out);
    size_t count = n ? n : tt_schema_count(s), tokens = 0;
    for (size_t i = 0; i < count; i++)
      tokens += (n ? cards[i] : tt_schema_card(s, i))->tokens;
    tt_buf_printf(&out, "\n%s", tt_term_dim(&t));
    tt_buf_put_grouped(&out, (long long)count);
    tt_buf_puts(&out, count == 1 ? " table" : " tables");
    tt_buf_puts(&out, ", about ");
    tt_buf_put_grouped(&out, (long long)tokens);
    tt_buf_printf(&out, " tokens%s\n", tt_term_reset(&t));
  }
  int rc = tt_write_result(stdout, &out);
  tt_buf_free(&out);
  free(cards);
  tt_service_free(svc);
  tt_config_free(&sc.cfg);
  return rc;
}
