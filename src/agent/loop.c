/* loop.c — the agent loop: one model call per step, exactly one tool call
 * per reply, the tool's result appended to the conversation (never
 * rewritten), until the model answers or asks, or a budget ends it. Also
 * the agent's constructor and the run result. */
#include "agent/agent_internal.h"

#include <stdlib.h>
#include <string.h>

tt_agent_opts tt_agent_default_opts(void) {
  tt_agent_opts o = {
      .max_tool_calls = 8,
      .max_failed_sql = 3,
      .rows_to_model = 30,
      .schema_budget = 2000,
      .history_turns = 6,
      .chart_rows = 10000,
  };
  o.sql = tt_db_default_opts();
  o.sql.timeout_s = 5;
  o.sql.max_rows = 200;
  /* "Nmae" must be an error the model can repair, not a string literal */
  o.sql.double_quoted_strings = false;
  return o;
}

const char *tt_verified_name(tt_verified v) {
  switch (v) {
  case TT_VERIFIED_BOUND: return "bound";
  case TT_VERIFIED_CHECKED: return "checked";
  case TT_VERIFIED_UNBACKED: return "unbacked";
  }
  return "unbacked";
}

const char *tt_run_status_name(tt_run_status s) {
  switch (s) {
  case TT_RUN_ANSWERED: return "answered";
  case TT_RUN_CLARIFY: return "clarify";
  case TT_RUN_FAILED: return "failed";
  case TT_RUN_BUDGET: return "budget";
  case TT_RUN_CANCELLED: return "cancelled";
  case TT_RUN_REFUSED: return "refused";
  }
  return "failed";
}

tt_agent *tt_agent_new(tt_db *db, const tt_schema *schema, tt_llm *llm,
                       const tt_agent_opts *opts) {
  tt_agent *a = tt_xcalloc(1, sizeof *a);
  a->db = db;
  a->schema = schema;
  a->llm = llm;
  a->o = opts ? *opts : tt_agent_default_opts();
  a->system_prompt = tt_prompt_system_dialect(schema, a->o.schema_budget, a->o.max_failed_sql,
                                               &a->whole_schema, &a->card_budget,
                                               tt_agent_dialect(a));
  a->ntools = tt_prompt_tools_dialect(a->tools, a->o.rows_to_model, a->run_sql_desc,
                                      tt_agent_dialect(a));
  a->nprivate_tools = tt_prompt_tools_private(a->private_tools, a->tools, a->ntools,
                                              &a->private_answer_schema);
  a->embed = tt_agent_embed_new();
  a->writer_style = llm ? tt_llm_sql_style(llm) : TT_SQL_STYLE_NONE;
  if (a->writer_style != TT_SQL_STYLE_NONE && a->whole_schema)
    a->writer_schema = tt_writer_schema(a, NULL, 0);
  return a;
}

void tt_agent_set_private(tt_agent *a, bool on) {
  a->private_mode = on;
  if (on && !a->private_prompt)
    a->private_prompt = tt_prompt_system_private(a->schema, a->o.schema_budget,
                                                 a->o.max_failed_sql, tt_agent_dialect(a));
}

bool tt_agent_private(const tt_agent *a) { return a->private_mode; }

void tt_agent_free(tt_agent *a) {
  if (!a) return;
  free(a->system_prompt);
  free(a->private_prompt);
  free(a->private_answer_schema);
  free(a->writer_schema);
  tt_agent_embed_free(a->embed);
  free(a);
}

const char *tt_agent_system_prompt(const tt_agent *a) {
  return a->private_mode ? a->private_prompt : a->system_prompt;
}

const tt_tool_spec *tt_agent_tools(const tt_agent *a, size_t *n) {
  *n = a->private_mode ? a->nprivate_tools : a->ntools;
  return a->private_mode ? a->private_tools : a->tools;
}

void tt_run_free(tt_run *r) {
  if (!r) return;
  free(r->answer);
  free(r->sql);
  free(r->error);
  for (size_t i = 0; i < r->nunbacked; i++) free(r->unbacked[i]);
  free(r->unbacked);
  free(r->numbers);
  free(r->notes);
  tt_facts_free(r->facts, r->nfacts);
  free(r->refusal);
  free(r->refused_sql);
  tt_result_free(r->rows);
  tt_chat_free(&r->pending);
  for (size_t i = 0; i < r->ncharts; i++) {
    json_decref(r->charts[i].spec);
    free(r->charts[i].description);
    free(r->charts[i].file);
    free(r->charts[i].sql);
    tt_chart_free(r->charts[i].chart);
  }
  free(r->charts);
  memset(r, 0, sizeof *r);
}

char *tt_run_summary(const tt_run *r) {
  if (!r->rows) return tt_xstrdup(r->sql ? "the query failed" : "no query was run");
  const tt_result *t = r->rows;
  tt_buf b = TT_BUF_INIT;
  if (t->nrows == 0) {
    tt_buf_puts(&b, "no rows");
    return tt_buf_detach(&b);
  }
  tt_buf_printf(&b, "%s%zu row%s", t->truncated ? "more than " : "", t->nrows, t->nrows == 1 ? "" : "s");
  size_t show = t->nrows < 3 ? t->nrows : 3;
  tt_buf_puts(&b, show < t->nrows ? ", first: " : ": ");
  tt_buf cell = TT_BUF_INIT;
  tt_escape_opts eo = {.max_chars = 40, .short_marker = true};
  for (size_t i = 0; i < show; i++) {
    if (i) tt_buf_puts(&b, "; ");
    for (size_t c = 0; c < t->ncols && c < 6; c++) {
      if (c) tt_buf_puts(&b, ", ");
      tt_buf_reset(&cell);
      tt_value_to_text(&cell, tt_result_cell(t, i, c));
      tt_escape_terminal(&b, tt_buf_cstr(&cell), cell.len, &eo);
    }
  }
  tt_buf_free(&cell);
  return tt_buf_detach(&b);
}

/* ---- one question ------------------------------------------------------- */

typedef struct tt_step_state {
  tt_agent *a;
  const tt_agent_hooks *hooks;
  tt_chat chat;
  tt_run *out;
  const char *question;   /* what numbers in the answer are checked against */
  int tool_calls;
  int failed_in_row;
  int bad_calls;          /* unusable tool calls in a row */
  int llm_calls;
  bool must_answer;       /* 3 failed queries: only answer is left */
  bool pushed_back;       /* the answer check has already objected once */
  bool refs_pushed_back;  /* references that did not resolve were sent back once */
  bool priv;              /* private mode: the model sees no value */
  const tt_tool_spec *tools; /* the tools of this mode */
  size_t ntools;
  tt_ref_set refs;        /* this question's results, under their labels */
  size_t sent_upto;       /* private mode: messages the trace has recorded as sent */
  char *told;             /* what the model itself said last (its answer with the
                           * references unfilled, or its question) */
  bool text_pushed_back;  /* a plain-text reply has been pushed back once */
  bool write_refused;     /* the model tried to change the database */
  tt_backing own;         /* values of this question's results */
  tt_backing all;         /* ... and of the thread's earlier ones */
  bool thread_has_sql;    /* an earlier question's SQL is in the prompt */
  const char *thread_sql; /* the thread's latest SQL (charts of a follow-up) */
  tt_room room;           /* what fits the model's context */
} tt_step_state;

static void tt_emit(const tt_step_state *st, tt_event *ev) {
  tt_agent_emit(st->hooks, st->llm_calls, ev);
}

static void tt_reply_tool(tt_step_state *st, const tt_llm_reply *r, const char *result) {
  tt_chat_add_call(&st->chat, r->call_id, r->tool_name, r->tool_args, r->thinking);
  tt_chat_add_tool_result(&st->chat, r->call_id, result);
}

static const char *tt_tool_list(const tt_agent *a, tt_buf *b) {
  size_t n;
  const tt_tool_spec *tools = tt_agent_tools(a, &n);
  for (size_t i = 0; i < n; i++) tt_buf_printf(b, "%s%s", i ? ", " : "", tools[i].name);
  return tt_buf_cstr(b);
}

/* An unusable call: the model is told what was wrong, once. Returns false
 * when that was the second in a row and the question must end. */
static bool tt_reject_call(tt_step_state *st, const tt_llm_reply *r, const char *why) {
  st->bad_calls++;
  st->tool_calls++;
  tt_buf msg = TT_BUF_INIT, names = TT_BUF_INIT;
  tt_buf_printf(&msg, "Your tool call could not be used: %s. Call exactly one of %s, with "
                      "arguments that match its schema.", why, tt_tool_list(st->a, &names));
  tt_reply_tool(st, r, tt_buf_cstr(&msg));
  tt_event ev = {.kind = TT_EV_WARNING, .tool = r->tool_name, .args = r->tool_args,
                 .ok = false, .error = why, .text = why};
  tt_emit(st, &ev);
  tt_buf_free(&msg);
  tt_buf_free(&names);
  if (st->bad_calls < 2) return true;
  st->out->status = TT_RUN_FAILED;
  st->out->error = tt_xasprintf("the model sent an unusable tool call twice in a row: %s", why);
  return false;
}

static char *tt_arg_string(const char *args, const char *key) {
  json_t *v = json_loads(args, 0, NULL);
  const char *s = json_string_value(json_object_get(v, key));
  char *copy = tt_xstrdup(s ? s : "");
  json_decref(v);
  return copy;
}

/* Values an answer may cite: a result's and the literals of its SQL. */
static void tt_note_result(tt_step_state *st, const char *sql, const tt_result *res) {
  tt_backing *both[] = {&st->own, &st->all};
  for (size_t i = 0; i < 2; i++) {
    tt_backing_add_result(both[i], res);
    tt_backing_add_text(both[i], sql);
  }
}

/* The first write the model tried, for the final output. */
static void tt_note_refused_write(tt_step_state *st, const char *sql, const tt_error *err) {
  if (err->kind != TT_ERR_REFUSED || !tt_db_refusal_is_write(err->reason)) return;
  st->write_refused = true;
  if (st->out->refusal) return;
  st->out->refusal = tt_xstrdup(err->message);
  st->out->refused_sql = tt_xstrdup(sql);
}

tt_result *tt_agent_guarded_query(tt_agent *a, volatile sig_atomic_t *cancel, const char *sql,
                                  long max_rows, tt_error *err) {
  tt_db_opts o = a->o.sql; /* the agent's limits, for this query only */
  o.cancel = cancel;        /* Ctrl-C or a client that left */
  o.max_rows = max_rows;
  if (max_rows > a->o.sql.max_rows && o.max_bytes < 64L << 20) o.max_bytes = 64L << 20;
  return tt_db_query_opts(a->db, sql, strlen(sql), &o, err);
}

static tt_result *tt_agent_query(const tt_step_state *st, const char *sql, long max_rows,
                                 tt_error *err) {
  return tt_agent_guarded_query(st->a, st->hooks ? st->hooks->cancel : NULL, sql, max_rows, err);
}

static void tt_emit_context(tt_step_state *st, tt_event *ev) {
  ev->kind = TT_EV_CONTEXT;
  ev->context = st->room.context;
  ev->reserve = st->room.reserve;
  tt_emit(st, ev);
}

/* The rows the model reads, within what one result may take of the
 * context; a cut is traced. */
static void tt_show_rows(tt_step_state *st, const tt_result *res, tt_buf *view) {
  long full = 0, tokens = 0;
  int most = st->a->o.rows_to_model;
  size_t shown = tt_view_rows_within(view, res, most, st->a->llm, st->room.result_cap, &full, &tokens);
  if (shown >= res->nrows || shown >= (size_t)most) return;
  tt_event ev = {.action = "result_cut", .rows = (long)res->nrows, .rows_shown = (long)shown,
                 .tokens_before = full, .tokens_after = tokens, .limit = st->room.result_cap};
  tt_emit_context(st, &ev);
}

static void tt_do_run_sql(tt_step_state *st, const tt_llm_reply *r) {
  tt_agent *a = st->a;
  char *sql = tt_arg_string(r->tool_args, "sql");
  tt_buf view = TT_BUF_INIT;
  tt_event ev = {.kind = TT_EV_SQL, .tool = "run_sql", .args = r->tool_args, .sql = sql};
  if (st->must_answer) {
    tt_buf_puts(&view, "run_sql is not available any more: too many queries failed in a row. "
                       "Call answer and explain what went wrong.");
    ev.error = "run_sql refused after repeated failures";
    tt_reply_tool(st, r, tt_buf_cstr(&view));
    tt_emit(st, &ev);
    tt_buf_free(&view);
    free(sql);
    return;
  }
  tt_error err;
  double t0 = tt_now_ms();
  tt_result *res = tt_agent_query(st, sql, a->o.sql.max_rows, &err);
  ev.ms = tt_now_ms() - t0;
  if (res) {
    st->failed_in_row = 0;
    int label = tt_results_keep(&st->refs, sql, res);
    tt_buf_printf(&view, "[q%d] ", label);
    if (st->priv) tt_view_shape(&view, res, label);
    else tt_show_rows(st, res, &view);
    ev.ok = true;
    ev.rows = (long)res->nrows;
    ev.truncated = res->truncated;
    tt_note_result(st, sql, res);
    st->out->rows = res; /* kept by st->refs */
    free(st->out->sql);
    st->out->sql = tt_xstrdup(sql);
  } else {
    st->failed_in_row++;
    tt_note_refused_write(st, sql, &err);
    char *hint = err.kind == TT_ERR_SQL ? tt_hint_for_error(tt_schema_catalog(a->schema), sql, err.message) : NULL;
    tt_view_sql_failure(&view, &err, hint);
    tt_buf err_text = TT_BUF_INIT;
    tt_buf_printf(&err_text, "%s%s", err.message, hint ? hint : "");
    ev.error = tt_buf_cstr(&err_text);
    ev.sql_error = &err;
    if (st->failed_in_row >= a->o.max_failed_sql) {
      tt_buf_printf(&view, "\nThat was %d failed queries in a row: stop querying now and call "
                           "answer to explain what went wrong.", st->failed_in_row);
      st->must_answer = true;
    } else {
      tt_buf_printf(&view, " (failed queries in a row: %d of %d)", st->failed_in_row,
                    a->o.max_failed_sql);
    }
    tt_reply_tool(st, r, tt_buf_cstr(&view));
    tt_emit(st, &ev);
    tt_buf_free(&err_text);
    free(hint);
    tt_buf_free(&view);
    free(sql);
    return;
  }
  if (st->tool_calls == a->o.max_tool_calls - 1)
    tt_buf_puts(&view, "\nThat was your last query for this question: call answer now with what "
                       "you have.");
  tt_reply_tool(st, r, tt_buf_cstr(&view));
  tt_emit(st, &ev);
  tt_buf_free(&view);
  free(sql);
}

/* The rows make_chart draws: the question's latest result (read again in
 * full when it was cut and reading it again gives the same rows), or, in a
 * follow-up that has not queried yet, the thread's latest SQL run again.
 * NULL with what to do in err. *owned: the caller frees the result. */
static const tt_result *tt_chart_rows(tt_step_state *st, const char **sql, bool *owned,
                                      tt_error *err) {
  tt_agent *a = st->a;
  tt_run *out = st->out;
  *owned = false;
  tt_error qerr;
  if (!out->rows && !st->thread_sql) {
    /* the model called its tools in the wrong order */
    tt_error_set(err, TT_ERR_CONFIG, "there are no rows to draw yet: call run_sql first with a "
                 "query whose columns are what the chart shows (one row per bar or point), "
                 "then make_chart naming those columns");
    return NULL;
  }
  if (!out->rows) {
    /* a follow-up: the thread's query runs again as this question's query,
     * under the same row cap as run_sql */
    tt_result *res = tt_agent_query(st, st->thread_sql, a->o.sql.max_rows, &qerr);
    if (!res) {
      tt_error_set(err, qerr.kind, "the previous question's query could not be run again (%s)",
                   qerr.message);
      err->reason = qerr.reason;
      tt_error_hint(err, "call run_sql to get the rows to draw");
      return NULL;
    }
    free(out->sql);
    out->sql = tt_xstrdup(st->thread_sql);
    out->rows = res;
    tt_results_keep(&st->refs, out->sql, res);
    tt_note_result(st, out->sql, res);
  }
  *sql = out->sql;
  if (!out->rows->truncated || !out->rows->repeatable || a->o.chart_rows <= a->o.sql.max_rows)
    return out->rows;
  tt_result *full = tt_agent_query(st, out->sql, a->o.chart_rows, &qerr);
  if (!full) return out->rows; /* the rows already read will do */
  *owned = true;
  return full;
}

bool tt_agent_keep_chart(const tt_agent_hooks *h, tt_run *out, tt_chart *chart,
                         const tt_chart_spec *spec, const char *sql, tt_buf *desc, tt_buf *path,
                         tt_error *err) {
  tt_chart_describe(chart, desc);
  if (h && h->on_chart && !h->on_chart(h->ud, chart, out->ncharts, path, err)) {
    tt_chart_free(chart);
    return false;
  }
  out->charts = tt_xrealloc(out->charts, (out->ncharts + 1) * sizeof *out->charts);
  out->charts[out->ncharts++] = (tt_run_chart){
      .spec = tt_chart_spec_to_json(spec), .description = tt_xstrdup(tt_buf_cstr(desc)),
      .file = path->len ? tt_xstrdup(tt_buf_cstr(path)) : NULL, .sql = tt_xstrdup(sql),
      .chart = chart};
  return true;
}

/* Private mode: does text quote a value of rows (a text of 3 characters or
 * more, or a number of 2 digits or more)? */
static bool tt_text_quotes_cells(const char *text, const tt_result *rows) {
  for (size_t i = 0; i < rows->nrows; i++)
    for (size_t c = 0; c < rows->ncols; c++) {
      const tt_value *v = tt_result_cell(rows, i, c);
      if (v->type == TT_VAL_TEXT && v->len >= 3 && memchr(v->u.s, 0, v->len) == NULL &&
          strstr(text, v->u.s))
        return true;
      if (v->type == TT_VAL_INT || v->type == TT_VAL_REAL) {
        tt_buf n = TT_BUF_INIT;
        tt_value_to_text(&n, v);
        bool hit = n.len >= 2 && strstr(text, tt_buf_cstr(&n)) != NULL;
        tt_buf_free(&n);
        if (hit) return true;
      }
    }
  return false;
}

static void tt_do_make_chart(tt_step_state *st, const tt_llm_reply *r) {
  tt_run *out = st->out;
  tt_event ev = {.kind = TT_EV_CHART, .tool = "make_chart", .args = r->tool_args};
  tt_buf msg = TT_BUF_INIT, desc = TT_BUF_INIT, path = TT_BUF_INIT;
  tt_error err = TT_ERROR_INIT;
  char *why = NULL;
  json_t *args = json_loads(r->tool_args, 0, NULL);
  tt_chart_spec *spec = tt_chart_spec_from_json(args, &err);
  const char *sql = NULL;
  bool owned = false;
  const tt_result *rows = spec ? tt_chart_rows(st, &sql, &owned, &err) : NULL;
  tt_chart *chart = rows ? tt_chart_build(spec, rows, &err) : NULL;
  if (chart) {
    double t0 = tt_now_ms();
    if (!tt_agent_keep_chart(st->hooks, out, chart, spec, sql, &desc, &path, &err)) chart = NULL;
    ev.ms = tt_now_ms() - t0;
  }
  if (chart && st->priv) { /* the description and note quote the data */
    tt_buf_printf(&msg, "Chart made from %zu rows; the user sees it with your answer. Now call "
                        "answer: say what the chart shows, citing its key numbers as references.",
                  rows->nrows);
  } else if (chart) {
    tt_buf_printf(&msg, "Chart made: %s. The user sees it with your answer.", tt_buf_cstr(&desc));
    if (tt_chart_note(chart)) tt_buf_printf(&msg, " Note on the chart: %s.", tt_chart_note(chart));
    tt_buf_puts(&msg, " Now call answer: say in words what the chart shows, with its key "
                      "numbers from the query result.");
  }
  if (chart) {
    ev.ok = true;
    ev.rows = (long)rows->nrows;
    ev.sql = sql;
    ev.chart = tt_buf_cstr(&desc);
    ev.chart_file = path.len ? tt_buf_cstr(&path) : NULL;
  } else { /* a copy: the event's readers may call tt_error_text themselves */
    why = tt_xstrdup(tt_error_text(&err));
    bool quotes = st->priv && rows && tt_text_quotes_cells(why, rows);
    tt_buf_printf(&msg, "make_chart failed: %s. Fix the call and try again, or answer without a "
                        "chart.",
                  quotes ? "the rows do not suit this chart (the details quote values of the "
                           "result, which private mode does not show); check the columns named "
                           "and the kind of chart"
                         : why);
    ev.error = why;
  }
  tt_reply_tool(st, r, tt_buf_cstr(&msg));
  tt_emit(st, &ev);
  if (owned) tt_result_free((tt_result *)rows);
  tt_chart_spec_free(spec);
  json_decref(args);
  free(why);
  tt_buf_free(&msg);
  tt_buf_free(&desc);
  tt_buf_free(&path);
}

/* The numbers of an unbacked list, as a C array (owned strings). */
static void tt_take_unbacked(tt_run *out, const tt_buf *list, size_t n) {
  out->unbacked = tt_xcalloc(n ? n : 1, sizeof *out->unbacked);
  const char *p = list->data;
  for (size_t i = 0; i < n; i++) {
    out->unbacked[i] = tt_xstrdup(p);
    p += strlen(p) + 1;
  }
  out->nunbacked = n;
}

static void tt_emit_verify(tt_step_state *st, const char *decision, const char *reason,
                           size_t checked, size_t nfacts, size_t nerrors) {
  tt_event ev = {.kind = TT_EV_VERIFY, .decision = decision, .reason = reason,
                 .numbers_checked = checked,
                 .unbacked = (const char *const *)st->out->unbacked,
                 .nunbacked = st->out->nunbacked,
                 .verified = strcmp(decision, "push_back") == 0
                                 ? NULL
                                 : tt_verified_name(st->out->verified),
                 .nfacts = nfacts, .nref_errors = nerrors};
  tt_emit(st, &ev);
}

/* A cut result read again whole, for an aggregate of a reference. */
static tt_result *tt_reread_whole(void *ud, const char *sql) {
  tt_step_state *st = ud;
  if (st->a->o.chart_rows <= st->a->o.sql.max_rows) return NULL;
  tt_error err;
  return tt_agent_guarded_query(st->a, st->hooks ? st->hooks->cancel : NULL, sql,
                                st->a->o.chart_rows, &err);
}

/* References that did not resolve go back to the model once, like a failed
 * query. */
static void tt_push_back_refs(tt_step_state *st, const tt_llm_reply *r, tt_fill *fill) {
  st->refs_pushed_back = true;
  tt_buf msg = TT_BUF_INIT;
  tt_buf_printf(&msg, "Not accepted yet: %zu reference%s in your answer could not be filled in:\n%s\n"
                      "Fix them (cite a result of this question by its label, rows from r1, "
                      "columns as the result names them), or run_sql to get the value, then "
                      "call answer again.",
                fill->nerrors, fill->nerrors == 1 ? "" : "s", tt_buf_cstr(&fill->errors));
  tt_reply_tool(st, r, tt_buf_cstr(&msg));
  tt_buf_free(&msg);
  tt_emit_verify(st, "push_back", "references that do not resolve", 0, fill->nfacts,
                 fill->nerrors);
}

/* The answer's references filled in and its other numbers checked against
 * the results. Returns NULL when it was pushed back (r is the call to
 * answer: the objection is its result); else the answer to show (owned),
 * with verified, unbacked and facts set. */
static char *tt_check_answer(tt_step_state *st, const tt_llm_reply *r, const char *text) {
  tt_run *out = st->out;
  tt_fill fill;
  tt_refs_reader rd = {.reread = tt_reread_whole, .ud = st};
  tt_refs_fill(&st->refs, &rd, text, &fill);
  if (fill.nerrors && r && !st->refs_pushed_back) {
    tt_push_back_refs(st, r, &fill);
    tt_fill_free(&fill);
    return NULL;
  }
  tt_buf list = TT_BUF_INIT;
  size_t bad = tt_check_numbers(fill.masked, st->question, &st->all, &list);
  size_t checked = tt_count_numbers(fill.masked) + fill.nfacts;
  for (size_t i = 0; i < out->nunbacked; i++) free(out->unbacked[i]);
  free(out->unbacked);
  tt_take_unbacked(out, &list, bad);
  tt_buf_free(&list);
  /* a number the question gave is the user's own; any other outside a
   * reference keeps the answer from being bound */
  tt_backing none = {0};
  size_t free_numbers = tt_check_numbers(fill.masked, st->question, &none, NULL);
  if (bad || fill.nerrors) out->verified = TT_VERIFIED_UNBACKED;
  else if (fill.nfacts && !free_numbers) out->verified = TT_VERIFIED_BOUND;
  else out->verified = TT_VERIFIED_CHECKED;
  size_t nfacts = fill.nfacts;
  if (!(bad && r && !st->pushed_back)) { /* the answer stands: its facts with it */
    tt_facts_free(out->facts, out->nfacts);
    out->facts = fill.facts;
    out->nfacts = fill.nfacts;
    fill.facts = NULL;
    fill.nfacts = 0;
  }
  if (!bad && !fill.nerrors) {
    tt_emit_verify(st, "verified",
                   out->verified == TT_VERIFIED_BOUND
                       ? "every number is filled in from a reference to a query result"
                       : "every number is backed by a query result",
                   checked, nfacts, fill.nerrors);
    return tt_fill_take(&fill);
  }
  bool queried = out->rows != NULL || st->thread_has_sql;
  if (bad && r && !st->pushed_back) {
    st->pushed_back = true;
    tt_buf msg = TT_BUF_INIT, names = TT_BUF_INIT;
    for (size_t i = 0; i < out->nunbacked; i++)
      tt_buf_printf(&names, "%s%s", i ? ", " : "", out->unbacked[i]);
    if (st->priv)
      tt_buf_printf(&msg, "Not accepted yet: your answer types numbers (%s), but you cannot see "
                          "the values here. Write each value as a reference to a result, such as "
                          "{{q1.r1.Total}} or {{q1.sum(Total)|0.00}} (run_sql first if you need "
                          "another query), then call answer again.",
                    tt_buf_cstr(&names));
    else if (queried)
      tt_buf_printf(&msg, "Not accepted yet: these numbers in your answer are not in any query "
                          "result of this conversation: %s. Use only numbers from the results "
                          "(call run_sql if you need another query), then call answer again.",
                    tt_buf_cstr(&names));
    else
      tt_buf_printf(&msg, "Not accepted yet: your answer states numbers (%s), but no query has "
                          "run for this question. Call run_sql to get the numbers from the "
                          "database, then answer; or answer without numbers.",
                    tt_buf_cstr(&names));
    tt_reply_tool(st, r, tt_buf_cstr(&msg));
    tt_emit_verify(st, "push_back", queried ? "numbers not found in any query result"
                                            : "numbers stated without a successful query",
                   checked, nfacts, fill.nerrors);
    tt_buf_free(&msg);
    tt_buf_free(&names);
    tt_fill_free(&fill);
    return NULL;
  }
  if (fill.nerrors) {
    /* what did not resolve stays in the list of what is not backed */
    const char *p = tt_buf_cstr(&fill.errors);
    while (*p) {
      const char *e = strstr(p, "}}");
      size_t n = e ? (size_t)(e - p) + 2 : strlen(p);
      out->unbacked = tt_xrealloc(out->unbacked, (out->nunbacked + 1) * sizeof *out->unbacked);
      out->unbacked[out->nunbacked++] = tt_xstrndup(p, n);
      const char *nl = strchr(p, '\n');
      p = nl ? nl + 1 : p + strlen(p);
    }
  }
  tt_emit_verify(st, "accept_unverified",
                 fill.nerrors ? "references still do not resolve after one push back"
                 : r          ? "the numbers are still not backed after one push back"
                              : "a plain-text reply whose numbers no query result backs",
                 checked, nfacts, fill.nerrors);
  return tt_fill_take(&fill);
}

/* Private mode: the model says the question needs it to read values. */
static void tt_do_need_values(tt_step_state *st, const tt_llm_reply *r) {
  tt_run *out = st->out;
  char *why = tt_arg_string(r->tool_args, "reason");
  out->status = TT_RUN_REFUSED;
  out->refusal = tt_xasprintf("private mode: answering this needs the model to read values of "
                              "the database, which private mode never sends (%s)", why);
  out->answer = tt_xasprintf("I cannot answer this in private mode: it needs the model to read "
                             "the values themselves (%s), and private mode never sends values "
                             "to the model. Ask again without --private, or ask for something "
                             "that can be counted or computed in SQL.", why);
  out->verified = TT_VERIFIED_CHECKED;
  tt_chat_add_call(&st->chat, r->call_id, r->tool_name, r->tool_args, r->thinking);
  tt_event ev = {.kind = TT_EV_ANSWER, .tool = "need_values", .args = r->tool_args, .ok = true,
                 .text = out->answer};
  tt_emit(st, &ev);
  free(why);
}

/* Handles one valid tool call. Returns true when the question is over. */
static bool tt_do_tool(tt_step_state *st, const tt_llm_reply *r) {
  if (strcmp(r->tool_name, "run_sql") == 0) {
    st->out->totals.sql_calls++;
    tt_do_run_sql(st, r);
    return false;
  }
  if (strcmp(r->tool_name, "make_chart") == 0) {
    tt_do_make_chart(st, r);
    return false;
  }
  if (strcmp(r->tool_name, "ask_user") == 0) {
    st->out->status = TT_RUN_CLARIFY;
    st->out->answer = tt_arg_string(r->tool_args, "question");
    free(st->told);
    st->told = tt_xstrdup(st->out->answer);
    tt_chat_add_call(&st->chat, r->call_id, r->tool_name, r->tool_args, r->thinking);
    tt_event ev = {.kind = TT_EV_CLARIFY, .tool = "ask_user", .args = r->tool_args, .ok = true,
                   .text = st->out->answer};
    tt_emit(st, &ev);
    return true;
  }
  if (strcmp(r->tool_name, "need_values") == 0) {
    tt_do_need_values(st, r);
    return true;
  }
  /* answer */
  char *said = tt_arg_string(r->tool_args, "text");
  char *text = tt_check_answer(st, r, said);
  if (!text) {
    free(said);
    return false;
  }
  free(st->told);
  st->told = said;
  tt_chat_add_call(&st->chat, r->call_id, r->tool_name, r->tool_args, r->thinking);
  st->out->status = TT_RUN_ANSWERED;
  st->out->answer = text;
  tt_event ev = {.kind = TT_EV_ANSWER, .tool = "answer", .args = r->tool_args, .ok = true,
                 .text = text};
  tt_emit(st, &ev);
  return true;
}

/* Where the thread's earlier turns are in the conversation: the (question,
 * retold answer) pairs right after the system message that match turns of
 * history, in order (a resumed conversation may have lost some). */
static void tt_history_span(const tt_chat *c, const tt_turn *history, size_t nhistory,
                            bool priv, size_t *begin, size_t *end) {
  size_t i = 1;
  for (size_t j = 0; j < nhistory && i + 1 < c->n; j++) {
    const tt_msg *u = &c->msgs[i], *said = &c->msgs[i + 1];
    if (u->role != TT_ROLE_USER || said->role != TT_ROLE_ASSISTANT || said->tool_name ||
        !u->content || !said->content || !history[j].question ||
        strcmp(u->content, history[j].question) != 0)
      continue;
    char *retold = tt_prompt_turn_answer(&history[j], priv);
    if (strcmp(retold, said->content) == 0) i += 2;
    free(retold);
  }
  *begin = 1;
  *end = c->n ? i : 1;
}

/* Builds the conversation: a fresh question, or a paused one resumed with
 * the user's reply as the result of its ask_user call. */
static void tt_start_chat(tt_step_state *st, const tt_turn *history, size_t nhistory,
                          const tt_chat *resume, const char *question) {
  tt_agent *a = st->a;
  for (size_t i = 0; i < nhistory; i++) {
    st->thread_has_sql |= history[i].sql != NULL;
    if (history[i].sql) st->thread_sql = history[i].sql;
    tt_backing_add_list(&st->all, history[i].numbers);
    /* an earlier answer may be cited too when it was itself backed */
    if (history[i].sql) tt_backing_add_text(&st->all, history[i].sql);
    /* result labels go on across the thread, so that a reference to an
     * earlier question's result is seen as such */
    int last = tt_notes_last_label(history[i].notes);
    if (last > st->refs.base) st->refs.base = last;
  }
  if (resume && resume->n && resume->msgs[resume->n - 1].tool_name) {
    for (size_t i = 0; i < resume->n; i++) {
      const tt_msg *m = &resume->msgs[i];
      if (m->tool_name)
        tt_chat_add_call(&st->chat, m->call_id, m->tool_name, m->tool_args, m->content);
      else if (m->role == TT_ROLE_TOOL) tt_chat_add_tool_result(&st->chat, m->call_id, m->content);
      else tt_chat_add(&st->chat, m->role, m->content);
    }
    for (size_t i = 0; i < st->chat.n; i++) { /* labels the paused question used */
      const tt_msg *m = &st->chat.msgs[i];
      int label;
      if (m->role == TT_ROLE_TOOL && m->content && sscanf(m->content, "[q%d]", &label) == 1 &&
          label > st->refs.base)
        st->refs.base = label;
    }
    char *reply = tt_xasprintf("The user answered: %s", question);
    tt_chat_add_tool_result(&st->chat, resume->msgs[resume->n - 1].call_id, reply);
    free(reply);
    return;
  }
  tt_chat_add(&st->chat, TT_ROLE_SYSTEM, tt_agent_system_prompt(a));
  size_t first = nhistory > (size_t)a->o.history_turns ? nhistory - (size_t)a->o.history_turns : 0;
  for (size_t i = first; i < nhistory; i++) {
    tt_chat_add(&st->chat, TT_ROLE_USER, history[i].question);
    char *said = tt_prompt_turn_answer(&history[i], st->priv);
    tt_chat_add(&st->chat, TT_ROLE_ASSISTANT, said);
    free(said);
  }
  /* a huge schema: the model names the tables first (selector.c) */
  char *named[TT_SELECTOR_NAMED_MAX];
  size_t nnamed = 0;
  if (a->llm && tt_agent_selector_on(a))
    nnamed = tt_agent_select_tables(a, question, st->hooks, ++st->llm_calls, st->out, named);
  size_t tokens = 0;
  json_t *picks = NULL;
  char *cards = tt_prompt_schema_for(a, question, (const char *const *)named, nnamed, &picks, &tokens);
  char *embed_note = tt_agent_embed_take_note(a);
  if (embed_note) {
    tt_event warn = {.kind = TT_EV_WARNING, .ok = false, .error = embed_note, .text = embed_note};
    tt_emit(st, &warn);
    free(embed_note);
  }
  if (cards) {
    tt_chat_add(&st->chat, TT_ROLE_USER, cards);
    tt_event ev = {.kind = TT_EV_SCHEMA, .tables = picks, .limit = (long)a->card_budget,
                   .tokens_after = (long)tokens};
    tt_emit(st, &ev);
    json_decref(picks);
  }
  free(cards);
  for (size_t i = 0; i < nnamed; i++) free(named[i]);
  char *asked = tt_prompt_question(a, question);
  tt_chat_add(&st->chat, TT_ROLE_USER, asked);
  free(asked);
}

/* A plain-text reply where a tool call is required. The first is pushed
 * back, naming the tools; after that, text is taken as the answer (its
 * numbers checked), unless it is shaped like a call or JSON, which is never
 * shown as an answer: the question fails. Returns true when it is over. */
static bool tt_plain_text_reply(tt_step_state *st, const tt_llm_reply *r) {
  tt_run *out = st->out;
  tt_chat_add(&st->chat, TT_ROLE_ASSISTANT, r->text);
  if (!st->text_pushed_back) {
    st->text_pushed_back = true;
    tt_event restart = {.kind = TT_EV_TEXT_RESTART};
    tt_emit(st, &restart);
    tt_buf msg = TT_BUF_INIT, names = TT_BUF_INIT;
    tt_buf_printf(&msg, "That reply was plain text, but every reply must be exactly one tool call. "
                        "Call one of %s now; if you have the final answer, call answer with it as "
                        "\"text\".", tt_tool_list(st->a, &names));
    tt_chat_add(&st->chat, TT_ROLE_USER, tt_buf_cstr(&msg));
    tt_event ev = {.kind = TT_EV_WARNING, .ok = false,
                   .error = "a plain-text reply instead of a tool call; asked the model once to "
                            "call a tool"};
    ev.text = ev.error;
    tt_emit(st, &ev);
    tt_buf_free(&msg);
    tt_buf_free(&names);
    return false;
  }
  if (tt_text_looks_like_call(r->text) ||
      tt_text_names_tool_call(r->text, st->tools, st->ntools)) {
    out->status = TT_RUN_FAILED;
    out->error = tt_xstrdup("the model wrote a tool call (or JSON) as plain text that could not be "
                            "used, also after being asked for a proper tool call; check that the "
                            "endpoint parses tool calls for this model (`tabletalk doctor "
                            "--base-url URL`; for vLLM --tool-call-parser hermes, for llama-server "
                            "--jinja)");
    return true;
  }
  out->status = TT_RUN_ANSWERED;
  out->answer = tt_check_answer(st, NULL, r->text);
  tt_event ev = {.kind = TT_EV_ANSWER, .ok = true, .text = out->answer};
  tt_emit(st, &ev);
  return true;
}

/* Private mode: the messages this call sends that the trace has not yet
 * recorded (all of them, with the tools, on the first call and after older
 * ones were shortened), as the model will receive them. */
static json_t *tt_sent_json(tt_step_state *st, bool rewritten) {
  size_t from = rewritten ? 0 : st->sent_upto;
  if (from > st->chat.n) from = 0;
  tt_chat slice = {.msgs = st->chat.msgs + from, .n = st->chat.n - from};
  json_t *o = json_pack("{s:I,s:o}", "from", (json_int_t)from, "messages", tt_chat_to_json(&slice));
  if (from == 0) {
    json_t *tools = json_array();
    for (size_t i = 0; i < st->ntools; i++)
      json_array_append_new(tools, json_pack("{s:s,s:s,s:s}", "name", st->tools[i].name,
                                             "description", st->tools[i].description,
                                             "parameters", st->tools[i].parameters));
    json_object_set_new(o, "tools", tools);
  }
  st->sent_upto = st->chat.n;
  return o;
}

static void tt_budget_answer(tt_step_state *st) {
  tt_run *out = st->out;
  out->status = TT_RUN_BUDGET;
  out->error = tt_xasprintf("the model used all %d tool calls without giving an answer",
                            st->a->o.max_tool_calls);
  char *summary = out->rows ? tt_run_summary(out) : NULL;
  out->answer = summary ? tt_xasprintf("I could not finish within %d steps. The last query that "
                                       "worked returned %s.", st->a->o.max_tool_calls, summary)
                        : tt_xasprintf("I could not finish within %d steps and no query worked.",
                                       st->a->o.max_tool_calls);
  free(summary);
  out->verified = TT_VERIFIED_CHECKED; /* the text quotes the result itself */
}

static void tt_add_usage(tt_run_totals *t, const tt_llm_reply *r) {
  t->prompt_tokens += r->usage.prompt;
  t->cached_tokens += r->usage.cached;
  t->completion_tokens += r->usage.completion;
  t->llm_ms += r->latency_ms;
}

void tt_agent_ask(tt_agent *a, const tt_turn *history, size_t nhistory,
                  const tt_chat *resume, const char *question,
                  const tt_agent_hooks *hooks, tt_run *out) {
  double t0 = tt_now_ms();
  memset(out, 0, sizeof *out);
  out->status = TT_RUN_FAILED;
  if (a->writer_style != TT_SQL_STYLE_NONE && a->private_mode) {
    /* an SQL writer's answer step reads the rows, and its prompt carries
     * example values: it has no private form */
    out->error = tt_xstrdup("private mode needs a model that calls tools; this model is an SQL "
                            "writer, whose prompt shows example values and whose answer step "
                            "reads the rows");
    out->totals.wall_ms = tt_now_ms() - t0;
    return;
  }
  if (a->writer_style != TT_SQL_STYLE_NONE) {
    /* an SQL writer never asked back, so there is nothing to resume */
    tt_writer_ask(a, history, nhistory, question, hooks, out);
    out->totals.wall_ms = tt_now_ms() - t0;
    return;
  }
  tt_step_state st = {.a = a, .hooks = hooks, .out = out, .question = question,
                      .priv = a->private_mode};
  st.tools = tt_agent_tools(a, &st.ntools);
  out->private_mode = st.priv;
  tt_start_chat(&st, history, nhistory, resume, question);
  /* A resumed question is checked against what was asked and the reply. */
  char *asked = NULL;
  for (size_t i = st.chat.n; resume && i > 0; i--)
    if (st.chat.msgs[i - 1].role == TT_ROLE_USER) {
      asked = tt_xasprintf("%s %s", st.chat.msgs[i - 1].content, question);
      st.question = asked;
      break;
    }
  tt_llm_call call = {
      .tools = st.tools, .ntools = st.ntools,
      .on_text = hooks ? tt_agent_stream_text : NULL,
      .on_restart = hooks ? tt_agent_stream_restart : NULL,
      .stream_tool = "answer", .stream_arg = "text",
      .ud = (void *)hooks,
      .cancel = hooks ? hooks->cancel : NULL,
  };
  bool over = false;
  size_t hist_begin, hist_end;
  tt_history_span(&st.chat, history, nhistory, st.priv, &hist_begin, &hist_end);
  tt_error room_err;
  if (!tt_room_start(&st.room, a->llm, &st.chat, &call, hist_begin, hist_end, a->o.schema_budget,
                     &room_err)) {
    out->error = tt_xstrdup(tt_error_text(&room_err));
    tt_event ev = {.action = "too_big", .tokens_before = st.room.fixed,
                   .tokens_after = st.room.fixed, .limit = st.room.limit, .error = out->error};
    tt_emit_context(&st, &ev);
    over = true;
  }
  size_t reply_bytes = 0; /* what the model's replies took in this question */
  while (!over) {
    if (call.cancel && *call.cancel) {
      out->status = TT_RUN_CANCELLED;
      out->error = tt_xstrdup("cancelled");
      break;
    }
    if (st.tool_calls >= a->o.max_tool_calls) {
      tt_budget_answer(&st);
      break;
    }
    if (reply_bytes >= TT_QUESTION_REPLY_BYTES) {
      out->status = TT_RUN_FAILED;
      out->error = tt_xasprintf("the model's replies in this question passed %d MiB; the "
                                "endpoint may be streaming without end: check it, or lower "
                                "--max-tokens", TT_QUESTION_REPLY_BYTES >> 20);
      break;
    }
    size_t left = TT_QUESTION_REPLY_BYTES - reply_bytes;
    call.max_reply_bytes = left < TT_CALL_REPLY_BYTES ? left : TT_CALL_REPLY_BYTES;
    bool last = st.must_answer || st.tool_calls == a->o.max_tool_calls - 1;
    call.force_tool = last ? "answer" : NULL;
    tt_room_report fit;
    bool fits = tt_room_fit(&st.room, &st.chat, &call, &fit, &room_err);
    if (!fits) out->error = tt_xstrdup(tt_error_text(&room_err));
    if (fit.results_shortened || fit.turns_dropped || !fits) {
      tt_event ev = {.action = fits ? "shortened" : "too_big", .tokens_before = fit.before,
                     .tokens_after = fit.after, .limit = st.room.limit,
                     .results_shortened = fit.results_shortened,
                     .turns_dropped = fit.turns_dropped, .error = fits ? NULL : out->error};
      tt_emit_context(&st, &ev);
    }
    if (!fits) {
      out->status = TT_RUN_FAILED;
      break;
    }
    json_t *sent = st.priv ? tt_sent_json(&st, fit.results_shortened || fit.turns_dropped) : NULL;
    tt_event wait = {.kind = TT_EV_MODEL_WAIT, .sent = sent};
    tt_emit(&st, &wait);
    json_decref(sent);
    tt_llm_reply r;
    tt_error lerr;
    bool ok = tt_llm_chat(a->llm, &st.chat, &call, &r, &lerr);
    st.llm_calls++;
    reply_bytes += r.bytes;
    out->totals.llm_calls++;
    tt_add_usage(&out->totals, &r);
    tt_agent_emit_call(hooks, st.llm_calls, ok ? &r : NULL, &lerr);
    if (!ok) {
      out->status = lerr.kind == TT_ERR_CANCELLED ? TT_RUN_CANCELLED : TT_RUN_FAILED;
      out->error = tt_xstrdup(lerr.message);
      tt_llm_reply_free(&r);
      break;
    }
    if (!r.is_tool) { /* an endpoint that ignores tool_choice, or a model that ignored it */
      over = tt_plain_text_reply(&st, &r);
      tt_llm_reply_free(&r);
      continue;
    }
    const tt_tool_spec *tool = tt_tool_find(st.tools, st.ntools, r.tool_name);
    tt_error bad = TT_ERROR_INIT; /* a call the model must make again */
    if (!tool) {
      tt_buf names = TT_BUF_INIT;
      tt_error_set(&bad, TT_ERR_CONFIG, "there is no tool named \"%s\" (available: %s)",
                   r.tool_name, tt_tool_list(a, &names));
      tt_buf_free(&names);
    } else if (!tt_tool_check(tool, r.tool_args, &bad)) {
      /* bad says what is wrong */
    } else if (call.force_tool && strcmp(r.tool_name, call.force_tool) != 0 &&
               strcmp(r.tool_name, "run_sql") != 0) {
      tt_error_set(&bad, TT_ERR_CONFIG, "only %s can be called now", call.force_tool);
    }
    if (bad.kind != TT_OK) {
      char *why = tt_xstrdup(tt_error_text(&bad));
      over = !tt_reject_call(&st, &r, why);
      free(why);
    } else {
      st.bad_calls = 0;
      st.tool_calls++;
      over = tt_do_tool(&st, &r);
    }
    tt_llm_reply_free(&r);
  }
  free(asked);
  /* a refused write is what the user must learn first, whatever the model
   * said or did after it */
  if (st.write_refused && (out->status == TT_RUN_ANSWERED || out->status == TT_RUN_BUDGET ||
                           out->status == TT_RUN_FAILED))
    out->status = TT_RUN_REFUSED;
  out->numbers = tt_backing_list(&st.own, 1000);
  out->notes = tt_notes_json(&st.refs, st.priv, st.told, out);
  free(st.told);
  tt_results_free(&st.refs, out->rows);
  tt_backing_free(&st.own);
  tt_backing_free(&st.all);
  out->totals.tool_calls = st.tool_calls;
  if (out->status == TT_RUN_CLARIFY) {
    out->pending = st.chat; /* kept so the user's reply can continue it */
  } else {
    tt_chat_free(&st.chat);
  }
  out->totals.wall_ms = tt_now_ms() - t0;
}
