/* selector.c — the selector step for huge schemas: before a question's
 * first prompt, one model call of its own shows the model every table on
 * one line ("Name: col->Other, col, ...") with the question, and the model
 * names the tables the SQL will read with one call of pick_tables. Those
 * tables go first among the question's cards, the ranking fills the room
 * left (tt_schema_select_named). Off by default below TT_SELECTOR_TABLES
 * tables (the ranking alone does well there, and the step costs a call);
 * --selector on|off forces it. A failed or useless call changes nothing:
 * the ranking picks alone, and a warning event says why. */
#include "agent/agent_internal.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define TT_SELECTOR_TABLES 400 /* auto: on from this many tables */
#define TT_SELECTOR_STR(x) #x
#define TT_SELECTOR_XSTR(x) TT_SELECTOR_STR(x)

static const char tt_selector_rules[] =
    "You choose the tables of a database that a question needs, before anyone writes SQL. "
    "Below is every table, one per line: its name, then some of its columns (A->B: a foreign "
    "key to table B; (+N): N more columns). Call pick_tables once with the names of every table the SQL will read, "
    "including the tables that only join the others, and nothing else.\n\nTables:\n";

static const char tt_selector_params[] =
    "{\"type\":\"object\",\"properties\":{\"tables\":{\"type\":\"array\",\"items\":{\"type\":"
    "\"string\"},\"minItems\":1,\"maxItems\":" TT_SELECTOR_XSTR(TT_SELECTOR_NAMED_MAX) "}},"
    "\"required\":[\"tables\"],\"additionalProperties\":false}";

static const tt_tool_spec tt_selector_tool = {
    .name = "pick_tables",
    .description = "Name the tables the question needs (exact names from the list).",
    .parameters = tt_selector_params,
};

bool tt_agent_selector_on(const tt_agent *a) {
  if (a->whole_schema || a->writer_style != TT_SQL_STYLE_NONE) return false;
  if (a->o.selector == TT_SELECTOR_ON) return true;
  if (a->o.selector == TT_SELECTOR_OFF) return false;
  return tt_schema_count(a->schema) >= TT_SELECTOR_TABLES;
}

char *tt_selector_prompt(const tt_schema *s) {
  tt_buf b = TT_BUF_INIT;
  tt_buf_puts(&b, tt_selector_rules);
  tt_schema_render_table_lines(s, &b);
  return tt_buf_detach(&b);
}

size_t tt_agent_selector_cost(const tt_agent *a, const char *question) {
  if (a->whole_schema) return 0;
  char *p = tt_selector_prompt(a->schema);
  size_t n = tt_tokens_estimate(p, strlen(p)) + tt_tokens_estimate(question, strlen(question)) +
             tt_tokens_estimate(tt_selector_tool.description, strlen(tt_selector_tool.description)) +
             tt_tokens_estimate(tt_selector_params, strlen(tt_selector_params));
  free(p);
  return n;
}

/* The names of the reply's tables that the schema has (as the schema
 * spells them), without repeats; how many. */
static size_t tt_selector_names(const tt_schema *s, const char *args, char **names) {
  json_error_t je;
  json_t *root = json_loads(args ? args : "", 0, &je);
  json_t *list = json_object_get(root, "tables");
  size_t n = 0, i;
  json_t *v;
  json_array_foreach(list, i, v) {
    const tt_card *c = json_string_value(v) ? tt_schema_find(s, json_string_value(v)) : NULL;
    if (!c || n == TT_SELECTOR_NAMED_MAX) continue;
    bool dup = false;
    for (size_t k = 0; k < n && !dup; k++) dup = strcmp(names[k], c->table->name) == 0;
    if (!dup) names[n++] = tt_xstrdup(c->table->name);
  }
  json_decref(root);
  return n;
}

static void tt_selector_warn(const tt_agent_hooks *hooks, int step, const char *why) {
  tt_event ev = {.kind = TT_EV_WARNING, .ok = false, .error = why, .text = why};
  tt_agent_emit(hooks, step, &ev);
}

size_t tt_agent_select_tables(tt_agent *a, const char *question, const tt_agent_hooks *hooks, int step,
                              tt_run *out, char **names) {
  tt_chat chat = {0};
  char *sys = tt_selector_prompt(a->schema);
  tt_chat_add(&chat, TT_ROLE_SYSTEM, sys);
  free(sys);
  tt_chat_add(&chat, TT_ROLE_USER, question);
  tt_llm_call call = {.tools = &tt_selector_tool, .ntools = 1, .force_tool = tt_selector_tool.name,
                      .cancel = hooks ? hooks->cancel : NULL, .max_reply_bytes = TT_CALL_REPLY_BYTES};
  tt_event wait = {.kind = TT_EV_MODEL_WAIT};
  tt_agent_emit(hooks, step, &wait);
  tt_llm_reply r;
  tt_error err;
  bool ok = tt_llm_chat(a->llm, &chat, &call, &r, &err);
  tt_chat_free(&chat);
  out->totals.llm_calls++;
  if (ok) {
    out->totals.prompt_tokens += r.usage.prompt;
    out->totals.cached_tokens += r.usage.cached;
    out->totals.completion_tokens += r.usage.completion;
    out->totals.llm_ms += r.latency_ms;
  }
  tt_agent_emit_call(hooks, step, ok ? &r : NULL, &err);
  size_t n = 0;
  if (!ok) {
    char *why = tt_xasprintf("the selector step failed (%s); the ranking picks the tables alone",
                             err.message);
    tt_selector_warn(hooks, step, why);
    free(why);
    return 0;
  }
  if (r.is_tool && r.tool_name && strcmp(r.tool_name, tt_selector_tool.name) == 0)
    n = tt_selector_names(a->schema, r.tool_args, names);
  if (!n)
    tt_selector_warn(hooks, step, "the selector step named no table of the schema; the ranking "
                                  "picks the tables alone");
  tt_llm_reply_free(&r);
  return n;
}
