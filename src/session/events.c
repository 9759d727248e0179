/* events.c — the one JSON shape of each event of a question
 * (docs/reference/events.md) and its one-line summary for people. The
 * trace writes these objects, the web page streams the same objects as
 * server-sent events, MCP progress carries them beside the summary, and the
 * terminal prints the summary: every front end sees the same key names. */
#include "session/session.h"

#include <string.h>

static json_t *tt_str_or_null(const char *s) {
  return s ? tt_json_stringn(s, strlen(s)) : json_null();
}

static void tt_set(json_t *o, const char *key, json_t *v) { json_object_set_new(o, key, v); }

static json_t *tt_strings_json(const char *const *v, size_t n) {
  json_t *a = json_array();
  for (size_t i = 0; i < n; i++) json_array_append_new(a, tt_str_or_null(v[i]));
  return a;
}

static void tt_model_call_json(json_t *o, const tt_event *ev) {
  const tt_llm_reply *r = ev->reply;
  if (!r) {
    const tt_error *e = ev->llm_error;
    tt_set(o, "ok", json_false());
    tt_set(o, "error", tt_str_or_null(e ? e->message : "the model call failed"));
    tt_set(o, "error_kind", json_string(tt_errkind_name(e ? e->kind : TT_ERR_PROTOCOL)));
    if (e && e->status) tt_set(o, "http_status", json_integer(e->status));
    return;
  }
  tt_set(o, "ok", json_true());
  tt_set(o, "latency_ms", json_real(r->latency_ms));
  tt_set(o, "attempts", json_integer(r->attempts));
  tt_set(o, "input_tokens", json_integer(r->usage.prompt));
  tt_set(o, "cached_tokens", json_integer(r->usage.cached));
  tt_set(o, "output_tokens", json_integer(r->usage.completion));
  tt_set(o, "computed_tokens", json_integer(r->usage.prompt - r->usage.cached));
  tt_set(o, "finish_reason", tt_str_or_null(r->finish_reason));
  tt_set(o, "tool", tt_str_or_null(r->is_tool ? r->tool_name : NULL));
  tt_set(o, "arguments", tt_str_or_null(r->is_tool ? r->tool_args : NULL));
  if (!r->is_tool) tt_set(o, "text", tt_str_or_null(r->text));
}

static void tt_sql_json(json_t *o, const tt_event *ev) {
  tt_set(o, "sql", tt_str_or_null(ev->sql));
  tt_set(o, "ok", json_boolean(ev->ok));
  tt_set(o, "rows", json_integer(ev->rows));
  tt_set(o, "truncated", json_boolean(ev->truncated));
  tt_set(o, "ms", json_real(ev->ms));
  if (ev->ok) return;
  tt_set(o, "error", tt_str_or_null(ev->error));
  const tt_error *e = ev->sql_error;
  if (e) tt_set(o, "error_kind", json_string(tt_errkind_name(e->kind)));
  if (e && e->kind == TT_ERR_REFUSED)
    tt_set(o, "refusal", json_string(tt_db_refusal_name((tt_db_refusal)e->reason)));
}

static void tt_context_json(json_t *o, const tt_event *ev) {
  bool result = strcmp(ev->action, "result_cut") == 0;
  tt_set(o, "action", json_string(ev->action));
  tt_set(o, "context", json_integer(ev->context));
  tt_set(o, "reply_reserve", json_integer(ev->reserve));
  if (result) {
    tt_set(o, "rows", json_integer(ev->rows));
    tt_set(o, "rows_shown", json_integer(ev->rows_shown));
    tt_set(o, "result_tokens_before", json_integer(ev->tokens_before));
    tt_set(o, "result_tokens_after", json_integer(ev->tokens_after));
    tt_set(o, "result_token_limit", json_integer(ev->limit));
  } else {
    tt_set(o, "prompt_tokens_before", json_integer(ev->tokens_before));
    tt_set(o, "prompt_tokens_after", json_integer(ev->tokens_after));
    tt_set(o, "prompt_token_limit", json_integer(ev->limit));
    tt_set(o, "results_shortened", json_integer(ev->results_shortened));
    tt_set(o, "turns_dropped", json_integer(ev->turns_dropped));
  }
  if (ev->error) tt_set(o, "error", tt_str_or_null(ev->error));
}

json_t *tt_event_json(const tt_event *ev) {
  json_t *o = json_object();
  tt_set(o, "event", json_string(tt_event_name(ev->kind)));
  switch (ev->kind) {
  case TT_EV_RUN_START:
  case TT_EV_RUN_END:
    if (ev->data) json_object_update(o, (json_t *)ev->data);
    tt_set(o, "event", json_string(tt_event_name(ev->kind)));
    return o;
  case TT_EV_TEXT:
    tt_set(o, "piece", tt_json_stringn(ev->text ? ev->text : "", ev->text ? ev->n : 0));
    return o;
  case TT_EV_TEXT_RESTART:
  case TT_EV_QUEUED:
    return o;
  case TT_EV_SCHEMA:
    tt_set(o, "tables", ev->tables ? json_deep_copy(ev->tables) : json_array());
    tt_set(o, "card_tokens", json_integer(ev->tokens_after));
    tt_set(o, "card_budget", json_integer(ev->limit));
    return o;
  default:
    break;
  }
  tt_set(o, "step", json_integer(ev->step));
  switch (ev->kind) {
  case TT_EV_MODEL_WAIT:
    if (ev->sent) tt_set(o, "sent", json_deep_copy(ev->sent));
    break;
  case TT_EV_MODEL_CALL: tt_model_call_json(o, ev); break;
  case TT_EV_THOUGHT:
  case TT_EV_ANSWER: tt_set(o, "text", tt_str_or_null(ev->text)); break;
  case TT_EV_CLARIFY: tt_set(o, "question", tt_str_or_null(ev->text)); break;
  case TT_EV_WARNING:
    tt_set(o, "message", tt_str_or_null(ev->text));
    if (ev->tool) tt_set(o, "tool", tt_str_or_null(ev->tool));
    if (ev->args) tt_set(o, "arguments", tt_str_or_null(ev->args));
    break;
  case TT_EV_SQL: tt_sql_json(o, ev); break;
  case TT_EV_CHART:
    tt_set(o, "ok", json_boolean(ev->ok));
    tt_set(o, "description", tt_str_or_null(ev->chart));
    tt_set(o, "file", tt_str_or_null(ev->chart_file));
    tt_set(o, "sql", tt_str_or_null(ev->sql));
    tt_set(o, "rows", json_integer(ev->rows));
    tt_set(o, "ms", json_real(ev->ms));
    if (!ev->ok) tt_set(o, "error", tt_str_or_null(ev->error));
    break;
  case TT_EV_VERIFY:
    tt_set(o, "decision", tt_str_or_null(ev->decision));
    tt_set(o, "reason", tt_str_or_null(ev->reason));
    tt_set(o, "numbers_checked", json_integer((json_int_t)ev->numbers_checked));
    tt_set(o, "unbacked_numbers", tt_strings_json(ev->unbacked, ev->nunbacked));
    tt_set(o, "verified", tt_str_or_null(ev->verified));
    tt_set(o, "facts", json_integer((json_int_t)ev->nfacts));
    tt_set(o, "reference_errors", json_integer((json_int_t)ev->nref_errors));
    break;
  case TT_EV_CONTEXT: tt_context_json(o, ev); break;
  default: break;
  }
  return o;
}

bool tt_event_traced(tt_event_kind kind) {
  return kind != TT_EV_TEXT && kind != TT_EV_TEXT_RESTART;
}

/* "3 rows", "1 row" */
static void tt_put_count(tt_buf *out, long n, const char *one, const char *many) {
  tt_buf_printf(out, "%ld %s", n, n == 1 ? one : many);
}

void tt_event_summary(const tt_event *ev, tt_buf *out) {
  switch (ev->kind) {
  case TT_EV_RUN_START: tt_buf_puts(out, "question received"); break;
  case TT_EV_SCHEMA:
    tt_buf_puts(out, "chose the tables for the question: ");
    tt_put_count(out, (long)json_array_size(ev->tables), "table", "tables");
    break;
  case TT_EV_QUEUED: tt_buf_puts(out, "waiting: another question is being answered"); break;
  case TT_EV_MODEL_WAIT: tt_buf_printf(out, "asking the model (step %d)", ev->step + 1); break;
  case TT_EV_MODEL_CALL:
    if (!ev->reply)
      tt_buf_printf(out, "the model call failed: %.200s",
                    ev->llm_error ? ev->llm_error->message : "");
    else if (ev->reply->is_tool)
      tt_buf_printf(out, "the model calls %s", ev->reply->tool_name ? ev->reply->tool_name : "?");
    else
      tt_buf_puts(out, "the model replied in text");
    break;
  case TT_EV_THOUGHT: tt_buf_printf(out, "thought: %.200s", ev->text ? ev->text : ""); break;
  case TT_EV_SQL:
    if (ev->ok) {
      tt_buf_puts(out, "ran SQL: ");
      tt_put_count(out, ev->rows, "row", "rows");
    } else {
      tt_buf_printf(out, "SQL failed, the model repairs it: %.200s", ev->error ? ev->error : "");
    }
    break;
  case TT_EV_CHART:
    if (ev->ok) tt_buf_printf(out, "drew a chart: %.200s", ev->chart ? ev->chart : "");
    else tt_buf_printf(out, "the chart failed: %.200s", ev->error ? ev->error : "");
    break;
  case TT_EV_CLARIFY: tt_buf_puts(out, "asking the user a clarifying question"); break;
  case TT_EV_CONTEXT:
    tt_buf_printf(out, "fitting the model's context (%s)", ev->action ? ev->action : "");
    break;
  case TT_EV_VERIFY:
    tt_buf_printf(out, "checking the answer against the SQL (%s)", ev->decision ? ev->decision : "");
    break;
  case TT_EV_WARNING: tt_buf_printf(out, "warning: %.200s", ev->text ? ev->text : ""); break;
  case TT_EV_ANSWER: tt_buf_puts(out, "answered"); break;
  case TT_EV_TEXT: tt_buf_puts(out, "writing the answer"); break;
  case TT_EV_TEXT_RESTART: tt_buf_puts(out, "the answer starts again"); break;
  case TT_EV_RUN_END: tt_buf_puts(out, "done"); break;
  }
}
