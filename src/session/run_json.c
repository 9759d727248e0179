/* run_json.c — the one JSON shape of a run (docs/reference/run-json.md). `ask
 * --json` prints it, the MCP ask_database tool returns it as its
 * structuredContent and the trace's run_end event carries it, so a script,
 * an MCP client and a reader of traces see the same names and values. */
#include "session/session.h"

#include <math.h>
#include <string.h>

static json_t *tt_str_or_null(const char *s) {
  return s ? tt_json_stringn(s, strlen(s)) : json_null();
}

static json_t *tt_run_charts_json(const tt_run *run) {
  json_t *charts = json_array();
  for (size_t i = 0; i < run->ncharts; i++) {
    const tt_run_chart *rc = &run->charts[i];
    json_t *c = json_object();
    json_object_set_new(c, "file", tt_str_or_null(rc->file));
    json_object_set_new(c, "kind", rc->chart ? json_string(tt_chart_kind_name(tt_chart_get_kind(rc->chart)))
                                             : json_null());
    json_object_set_new(c, "description", tt_str_or_null(rc->description));
    json_object_set_new(c, "points",
                        json_integer(rc->chart ? (json_int_t)tt_chart_npoints(rc->chart) : 0));
    json_object_set_new(c, "note", tt_str_or_null(rc->chart ? tt_chart_note(rc->chart) : NULL));
    json_object_set_new(c, "spec", rc->spec ? json_deep_copy(rc->spec) : json_null());
    json_object_set_new(c, "sql", tt_str_or_null(rc->sql));
    json_array_append_new(charts, c);
  }
  return charts;
}

/* [{"ref","query","sql","row","column","aggregate","value","text","at","length"}]:
 * the values the answer cites, filled in from the results (at and length:
 * bytes of the answer). */
static json_t *tt_run_facts_json(const tt_run *run) {
  json_t *facts = json_array();
  for (size_t i = 0; i < run->nfacts; i++) {
    const tt_fact *f = &run->facts[i];
    json_t *o = json_object();
    json_object_set_new(o, "ref", tt_str_or_null(f->ref));
    json_object_set_new(o, "query", json_integer(f->query));
    json_object_set_new(o, "sql", tt_str_or_null(f->sql));
    json_object_set_new(o, "row", f->row ? json_integer(f->row) : json_null());
    json_object_set_new(o, "column", tt_str_or_null(f->column));
    json_object_set_new(o, "aggregate", tt_str_or_null(f->aggregate));
    json_object_set_new(o, "value", f->value ? json_deep_copy(f->value) : json_null());
    json_object_set_new(o, "text", tt_str_or_null(f->text));
    json_object_set_new(o, "at", json_integer((json_int_t)f->at));
    json_object_set_new(o, "length", json_integer((json_int_t)f->len));
    json_array_append_new(facts, o);
  }
  return facts;
}

/* own_ms: what tabletalk itself spent, waiting for the model excluded. */
static json_t *tt_run_totals_json(const tt_run_totals *t) {
  return json_pack("{s:i,s:i,s:i,s:I,s:I,s:I,s:f,s:f,s:f}", "llm_calls", t->llm_calls,
                   "tool_calls", t->tool_calls, "sql_calls", t->sql_calls, "prompt_tokens",
                   (json_int_t)t->prompt_tokens, "cached_tokens", (json_int_t)t->cached_tokens,
                   "completion_tokens", (json_int_t)t->completion_tokens, "wall_ms", t->wall_ms,
                   "llm_ms", t->llm_ms, "own_ms", t->wall_ms - t->llm_ms);
}

/* columns, column_types, rows (the first max_rows), row_count, truncated,
 * truncated_by, elapsed_ms: the one shape of a result set (db.h). */
static void tt_run_rows_json(json_t *o, const tt_result *res, size_t max_rows) {
  json_t *rows = tt_result_to_json(res, max_rows ? max_rows : SIZE_MAX, true);
  json_object_update(o, rows);
  json_decref(rows);
}

json_t *tt_run_json(const tt_run *run, const tt_ask_result *info, const char *thread,
                    long max_rows) {
  bool clarify = run->status == TT_RUN_CLARIFY;
  json_t *o = json_object();
  json_object_set_new(o, "status", json_string(tt_run_status_name(run->status)));
  json_object_set_new(o, "answer", tt_str_or_null(clarify ? NULL : run->answer));
  json_object_set_new(o, "clarification", tt_str_or_null(clarify ? run->answer : NULL));
  json_object_set_new(o, "error", tt_str_or_null(run->error));
  json_object_set_new(o, "sql", tt_str_or_null(run->sql));
  json_object_set_new(o, "verified", json_string(tt_verified_name(run->verified)));
  json_object_set_new(o, "facts", tt_run_facts_json(run));
  json_object_set_new(o, "private", json_boolean(run->private_mode));
  json_t *unbacked = json_array();
  for (size_t i = 0; i < run->nunbacked; i++)
    json_array_append_new(unbacked, tt_str_or_null(run->unbacked[i]));
  json_object_set_new(o, "unbacked_numbers", unbacked);
  json_object_set_new(o, "refusal",
                      run->refusal ? json_pack("{s:o,s:o}", "message", tt_str_or_null(run->refusal),
                                               "sql", tt_str_or_null(run->refused_sql))
                                   : json_null());
  json_object_set_new(o, "charts", tt_run_charts_json(run));
  json_object_set_new(o, "thread_id", tt_str_or_null(thread));
  json_object_set_new(o, "run_id", tt_str_or_null(info && *info->run_id ? info->run_id : NULL));
  json_object_set_new(o, "trace", tt_str_or_null(info && *info->trace_path ? info->trace_path : NULL));
  json_object_set_new(o, "resumed", json_boolean(info && info->resumed));
  json_object_set_new(o, "warning", tt_str_or_null(info && *info->warning ? info->warning : NULL));
  json_object_set_new(o, "totals", tt_run_totals_json(&run->totals));
  if (max_rows >= 0) tt_run_rows_json(o, run->rows, (size_t)max_rows);
  return o;
}
