/* ask.c — one question end to end, the same for every front end: a run
 * id and its trace, the thread's earlier turns (or its paused question) as
 * context, a model from the service (or the one the front end gave), the
 * agent's steps traced as they happen, and the turn saved in one
 * transaction at the end. */
#include "session/session.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

struct tt_session {
  tt_service *svc;
  const char *state_dir;
  const char *db_shown;  /* the database as threads and traces name it */
  tt_db *db;             /* the session's own handle */
  const tt_schema *schema;
  tt_store *store;
  tt_llm *given;         /* the front end's model, or NULL: the service's */
  tt_agent *agent;       /* for agent_llm */
  tt_llm *agent_llm;
  tt_agent_opts opts;
  bool startup_traced;   /* the service's start-up time went with a question */
  tt_chart_files charts;
  char *charts_out;      /* owned copy of charts.out */
  char *next_run_id;     /* tt_session_set_run_id */
};

void tt_session_set_run_id(tt_session *s, const char *run_id) {
  free(s->next_run_id);
  s->next_run_id = run_id ? tt_xstrdup(run_id) : NULL;
}

tt_session *tt_session_new(tt_service *svc, tt_llm *llm, tt_error *err) {
  const tt_config *c = tt_service_config(svc);
  const tt_schema *schema = tt_service_schema(svc, err);
  if (!schema) return NULL;
  tt_store *store = tt_store_open(tt_config_state_dir(c), err);
  if (!store) {
    tt_error_hint(err, "set --state-dir or TABLETALK_STATE_DIR to a writable folder");
    return NULL;
  }
  tt_session *s = tt_xcalloc(1, sizeof *s);
  s->svc = svc;
  s->opts = tt_config_agent_opts(c);
  s->db = tt_service_db_open(svc, &s->opts.sql, err);
  if (!s->db) {
    tt_store_close(store);
    free(s);
    return NULL;
  }
  s->state_dir = tt_config_state_dir(c);
  s->db_shown = tt_service_target(svc)->shown;
  s->schema = schema;
  s->store = store;
  s->given = llm;
  tt_chart_files cf = {.svg = c->chart_svg, .width = c->chart_w, .height = c->chart_h,
                       .out = c->chart_out};
  tt_session_set_chart_files(s, &cf);
  return s;
}

void tt_session_free(tt_session *s) {
  if (!s) return;
  tt_agent_free(s->agent);
  tt_store_close(s->store);
  tt_db_close(s->db);
  free(s->charts_out);
  free(s->next_run_id);
  free(s);
}

tt_db *tt_session_db(tt_session *s) { return s->db; }

void tt_session_set_chart_files(tt_session *s, const tt_chart_files *f) {
  free(s->charts_out);
  s->charts = *f;
  s->charts_out = f->out ? tt_xstrdup(f->out) : NULL;
  s->charts.out = s->charts_out;
}

/* The agent for llm (made again when the question's model is another). */
static tt_agent *tt_session_agent(tt_session *s, tt_llm *llm) {
  if (s->agent && s->agent_llm == llm) return s->agent;
  tt_agent_free(s->agent);
  s->agent = tt_agent_new(s->db, s->schema, llm, &s->opts);
  s->agent_llm = llm;
  return s->agent;
}

/* out for the first chart; out with "-N" before its extension after. */
static char *tt_numbered_file(const char *out, size_t index) {
  if (index == 0) return tt_xstrdup(out);
  const char *dot = strrchr(out, '.');
  const char *slash = strrchr(out, '/');
  if (!dot || (slash && dot < slash)) return tt_xasprintf("%s-%zu", out, index + 1);
  return tt_xasprintf("%.*s-%zu%s", (int)(dot - out), out, index + 1, dot);
}

/* Forwards agent events to the trace first, then to the front end. */
typedef struct tt_tracer {
  tt_trace *trace;
  const tt_agent_hooks *ui;
  const char *model;
  const tt_session *session;
  const char *run_id;
} tt_tracer;

static json_t *tt_str_or_null(const char *s) {
  return s ? tt_json_stringn(s, strlen(s)) : json_null();
}

static json_t *tt_strings_json(const char *const *v, size_t n) {
  json_t *a = json_array();
  for (size_t i = 0; i < n; i++) json_array_append_new(a, tt_str_or_null(v[i]));
  return a;
}

static json_t *tt_event_json(const tt_tracer *tr, const tt_event *ev) {
  json_t *o = json_object();
  switch (ev->kind) {
  case TT_EV_LLM_WAIT:
    json_decref(o);
    return NULL;
  case TT_EV_QUEUED:
    json_object_set_new(o, "event", json_string("queued"));
    return o;
  case TT_EV_LLM_CALL: {
    const tt_llm_reply *r = ev->reply;
    json_object_set_new(o, "event", json_string("llm_call"));
    json_object_set_new(o, "step", json_integer(ev->step));
    json_object_set_new(o, "gen_ai.operation.name", json_string("chat"));
    json_object_set_new(o, "gen_ai.request.model", tt_str_or_null(tr->model));
    if (r) {
      json_object_set_new(o, "latency_ms", json_real(r->latency_ms));
      json_object_set_new(o, "attempts", json_integer(r->attempts));
      json_object_set_new(o, "gen_ai.usage.input_tokens", json_integer(r->usage.prompt));
      json_object_set_new(o, "gen_ai.usage.cache_read.input_tokens", json_integer(r->usage.cached));
      json_object_set_new(o, "gen_ai.usage.output_tokens", json_integer(r->usage.completion));
      json_object_set_new(o, "computed_tokens", json_integer(r->usage.prompt - r->usage.cached));
      json_object_set_new(o, "gen_ai.response.finish_reasons",
                          r->finish_reason ? json_pack("[s]", r->finish_reason) : json_array());
      json_object_set_new(o, "tool", tt_str_or_null(r->is_tool ? r->tool_name : NULL));
      json_object_set_new(o, "arguments", tt_str_or_null(r->is_tool ? r->tool_args : NULL));
      if (!r->is_tool) json_object_set_new(o, "text", tt_str_or_null(r->text));
      if (r->thinking) json_object_set_new(o, "thinking", tt_str_or_null(r->thinking));
    } else {
      json_object_set_new(o, "error", tt_str_or_null(ev->llm_error->message));
      json_object_set_new(o, "error.type", json_string(tt_errkind_name(ev->llm_error->kind)));
      if (ev->llm_error->status)
        json_object_set_new(o, "http.response.status_code", json_integer(ev->llm_error->status));
    }
    return o;
  }
  case TT_EV_TOOL_CALL:
    json_object_set_new(o, "event", json_string("tool_call"));
    json_object_set_new(o, "step", json_integer(ev->step));
    json_object_set_new(o, "gen_ai.tool.name", tt_str_or_null(ev->tool));
    json_object_set_new(o, "ok", json_boolean(ev->ok));
    if (ev->sql) json_object_set_new(o, "sql", tt_str_or_null(ev->sql));
    if (ev->tool && strcmp(ev->tool, "run_sql") == 0) {
      json_object_set_new(o, "rows", json_integer(ev->rows));
      json_object_set_new(o, "truncated", json_boolean(ev->truncated));
      json_object_set_new(o, "ms", json_real(ev->ms));
    }
    if (ev->chart) {
      json_object_set_new(o, "chart", tt_str_or_null(ev->chart));
      json_object_set_new(o, "chart_file", tt_str_or_null(ev->chart_file));
      json_object_set_new(o, "rows", json_integer(ev->rows));
      json_object_set_new(o, "ms", json_real(ev->ms));
    }
    if (ev->error) json_object_set_new(o, "error", tt_str_or_null(ev->error));
    return o;
  case TT_EV_VERIFY:
    json_object_set_new(o, "event", json_string("verify"));
    json_object_set_new(o, "step", json_integer(ev->step));
    json_object_set_new(o, "decision", tt_str_or_null(ev->decision));
    json_object_set_new(o, "reason", tt_str_or_null(ev->reason));
    json_object_set_new(o, "numbers_checked", json_integer((json_int_t)ev->numbers_checked));
    json_object_set_new(o, "unbacked_numbers", tt_strings_json(ev->unbacked, ev->nunbacked));
    return o;
  case TT_EV_SCHEMA:
    json_object_set_new(o, "event", json_string("schema"));
    json_object_set_new(o, "tables", ev->tables ? json_deep_copy(ev->tables) : json_array());
    json_object_set_new(o, "card_tokens", json_integer(ev->tokens_after));
    json_object_set_new(o, "card_budget", json_integer(ev->limit));
    return o;
  case TT_EV_CONTEXT: {
    bool result = strcmp(ev->action, "result_cut") == 0;
    json_object_set_new(o, "event", json_string("context"));
    json_object_set_new(o, "step", json_integer(ev->step));
    json_object_set_new(o, "action", json_string(ev->action));
    json_object_set_new(o, "context", json_integer(ev->context));
    json_object_set_new(o, "reply_reserve", json_integer(ev->reserve));
    if (result) {
      json_object_set_new(o, "rows", json_integer(ev->rows));
      json_object_set_new(o, "rows_shown", json_integer(ev->rows_shown));
      json_object_set_new(o, "result_tokens_before", json_integer(ev->tokens_before));
      json_object_set_new(o, "result_tokens_after", json_integer(ev->tokens_after));
      json_object_set_new(o, "result_token_limit", json_integer(ev->limit));
    } else {
      json_object_set_new(o, "prompt_tokens_before", json_integer(ev->tokens_before));
      json_object_set_new(o, "prompt_tokens_after", json_integer(ev->tokens_after));
      json_object_set_new(o, "prompt_token_limit", json_integer(ev->limit));
      json_object_set_new(o, "results_shortened", json_integer(ev->results_shortened));
      json_object_set_new(o, "turns_dropped", json_integer(ev->turns_dropped));
    }
    if (ev->error) json_object_set_new(o, "error", tt_str_or_null(ev->error));
    return o;
  }
  }
  return o;
}

static void tt_tracer_event(void *ud, const tt_event *ev) {
  tt_tracer *tr = ud;
  json_t *j = tt_event_json(tr, ev);
  if (j) tt_trace_write(tr->trace, j);
  if (tr->ui && tr->ui->on_event) tr->ui->on_event(tr->ui->ud, ev);
}

/* Saves a chart the model made: PNG (or SVG) in the state folder, named
 * after the run, or where the front end asked. */
static bool tt_tracer_chart(void *ud, const tt_chart *chart, size_t index, tt_buf *path,
                            tt_buf *err) {
  tt_error e;
  tt_tracer *tr = ud;
  const tt_chart_files *f = &tr->session->charts;
  /* without cairo a chart is still drawn, as SVG */
  bool svg = f->svg || !tt_chart_png_available(NULL);
  char *file = f->out ? tt_numbered_file(f->out, index)
                      : tt_chart_file_path(tr->session->state_dir, tr->run_id, index,
                                           svg ? "svg" : "png", &e);
  if (!file) {
    tt_buf_puts(err, tt_error_text(&e));
    return false;
  }
  bool ok = tt_chart_write_file(chart, file, f->width ? f->width : TT_CHART_DEFAULT_WIDTH,
                                f->height ? f->height : TT_CHART_DEFAULT_HEIGHT, err);
  if (ok) tt_buf_puts(path, file);
  if (ok && f->both) { /* the other format beside it; a failure is not the chart's */
    size_t n = strlen(file);
    char *other = tt_xasprintf("%.*s.%s", (int)(n > 4 ? n - 4 : n), file, svg ? "png" : "svg");
    tt_buf ignored = TT_BUF_INIT;
    tt_chart_write_file(chart, other, f->width ? f->width : TT_CHART_DEFAULT_WIDTH,
                        f->height ? f->height : TT_CHART_DEFAULT_HEIGHT, &ignored);
    tt_buf_free(&ignored);
    free(other);
  }
  free(file);
  return ok;
}

static void tt_tracer_text(void *ud, const char *piece, size_t n) {
  tt_tracer *tr = ud;
  if (tr->ui && tr->ui->on_text) tr->ui->on_text(tr->ui->ud, piece, n);
}

static void tt_tracer_restart(void *ud) {
  tt_tracer *tr = ud;
  if (tr->ui && tr->ui->on_text_restart) tr->ui->on_text_restart(tr->ui->ud);
}

/* The trace keeps every row the run holds of its final result (the
 * agent's cut, 200 by default): the rows the answer rests on. */
#define TT_TRACE_ROWS LONG_MAX

/* Adds what to the front end's warning (several are joined by "; "). */
static void tt_ask_warn(tt_ask_result *info, const char *what) {
  size_t n = strlen(info->warning);
  snprintf(info->warning + n, sizeof info->warning - n, "%s%s", n ? "; " : "", what);
}

/* on_wait of tt_models_acquire: the question waits for the model. */
static void tt_session_queued(void *ud) {
  tt_tracer *tr = ud;
  tt_event ev = {.kind = TT_EV_QUEUED};
  tt_tracer_event(tr, &ev);
}

/* The thread's turns as the agent reads them (none when it could not be
 * read); a paused question is taken out into pending. */
static tt_turn *tt_session_history(const tt_thread *th, bool have, tt_chat *pending,
                                   bool *resumed, size_t *nturns) {
  *nturns = have ? th->nturns : 0;
  *resumed = false;
  if (*nturns && th->turns[*nturns - 1].status == TT_RUN_CLARIFY && th->turns[*nturns - 1].pending) {
    json_t *j = json_loads(th->turns[*nturns - 1].pending, 0, NULL);
    *resumed = tt_chat_append_json(pending, j) && pending->n > 0;
    json_decref(j);
    if (*resumed) (*nturns)--;
  }
  tt_turn *history = tt_xcalloc(*nturns ? *nturns : 1, sizeof(tt_turn));
  for (size_t i = 0; i < *nturns; i++) {
    const tt_turn_rec *t = &th->turns[i];
    history[i] = (tt_turn){.question = t->question, .answer = t->answer, .sql = t->sql,
                           .summary = t->summary, .numbers = t->numbers, .status = t->status};
  }
  return history;
}

/* The run_start event: the question, where it runs and on what model. */
static json_t *tt_session_start_event(tt_session *s, const char *thread, const char *question,
                                      bool resumed, tt_llm *llm) {
  json_t *start = json_pack("{s:s,s:s,s:s,s:b}", "event", "run_start", "database", s->db_shown,
                            "thread", thread, "resumed", resumed);
  json_object_set_new(start, "backend", tt_str_or_null(llm ? tt_llm_backend(llm) : NULL));
  json_object_set_new(start, "gen_ai.request.model", tt_str_or_null(llm ? tt_llm_model(llm) : NULL));
  json_object_set_new(start, "question", tt_str_or_null(question));
  /* the service's start-up goes with the first question, so that the cost
   * of the first question is complete */
  double startup = s->startup_traced ? 0 : tt_service_startup_ms(s->svc);
  s->startup_traced = true;
  json_object_set_new(start, "startup_ms", json_real(startup));
  /* what fits: the tokens a call may hold (0: unknown) and how that was chosen */
  json_object_set_new(start, "context", json_integer(llm ? tt_llm_context(llm) : 0));
  json_object_set_new(start, "reply_reserve", json_integer(llm ? tt_llm_reply_reserve(llm) : 0));
  if (llm && tt_llm_llama_ctx_note(llm))
    json_object_set_new(start, "context_chosen", tt_str_or_null(tt_llm_llama_ctx_note(llm)));
  return start;
}

void tt_session_ask(tt_session *s, const char *thread, const char *question,
                    const tt_agent_hooks *ui, tt_run *run, tt_ask_result *info) {
  double t0 = tt_now_ms();
  memset(info, 0, sizeof *info);
  memset(run, 0, sizeof *run);
  char *run_id = s->next_run_id ? s->next_run_id : tt_new_run_id();
  s->next_run_id = NULL;
  snprintf(info->run_id, sizeof info->run_id, "%s", run_id);
  tt_error err;
  tt_trace *trace = tt_trace_open(s->state_dir, run_id, &err);
  if (trace) {
    snprintf(info->trace_path, sizeof info->trace_path, "%s", tt_trace_path(trace));
  } else {
    char *w = tt_xasprintf("no trace of this run was written (%s); check that the state "
                           "folder %s is writable, or choose another with --state-dir",
                           err.message, s->state_dir);
    tt_ask_warn(info, w);
    free(w);
  }
  tt_tracer tr = {.trace = trace, .ui = ui, .session = s, .run_id = run_id};

  tt_thread th;
  bool have_thread = tt_store_load_thread(s->store, thread, s->db_shown, &th, &err);
  if (!have_thread) {
    /* Without its earlier turns a follow-up would be answered as a new
     * question, silently wrong: stop and say so. */
    run->status = TT_RUN_FAILED;
    run->error = tt_xasprintf("%s, so thread \"%s\" has no context and the question was not "
                              "asked; check %s/threads.sqlite (move it aside to start afresh)",
                              err.message, thread, s->state_dir);
  }
  tt_chat pending = {0};
  size_t nturns;
  tt_turn *history = tt_session_history(&th, have_thread, &pending, &info->resumed, &nturns);

  /* the model: the front end's, or one from the service for this question */
  tt_llm *llm = s->given;
  bool acquired = false;
  if (have_thread && !llm) {
    llm = tt_models_acquire(tt_service_models(s->svc), ui ? ui->cancel : NULL, tt_session_queued,
                            &tr, &err);
    acquired = llm != NULL;
    if (!llm) {
      run->status = err.kind == TT_ERR_CANCELLED ? TT_RUN_CANCELLED : TT_RUN_FAILED;
      run->error = tt_xstrdup(tt_error_text(&err));
    }
  }
  tr.model = llm ? tt_llm_model(llm) : NULL;
  tt_trace_write(trace, tt_session_start_event(s, thread, question, info->resumed, llm));

  tt_agent_hooks hooks = {.on_event = tt_tracer_event, .on_text = tt_tracer_text,
                          .on_text_restart = tt_tracer_restart, .on_chart = tt_tracer_chart,
                          .ud = &tr, .cancel = ui ? ui->cancel : NULL};
  if (have_thread && llm)
    tt_agent_ask(tt_session_agent(s, llm), history, nturns, info->resumed ? &pending : NULL,
                 question, &hooks, run);
  if (acquired) tt_models_release(tt_service_models(s->svc), llm);

  if (have_thread && llm &&
      !tt_store_save_turn(s->store, thread, s->db_shown, run_id, question, run, info->resumed, &err)) {
    json_t *w = json_pack("{s:s}", "event", "store_error");
    json_object_set_new(w, "error", tt_str_or_null(err.message));
    tt_trace_write(trace, w);
    char *msg = tt_xasprintf("this question was not saved to thread \"%s\" (%s), so a "
                             "follow-up will not see it; check %s/threads.sqlite",
                             thread, err.message, s->state_dir);
    tt_ask_warn(info, msg);
    free(msg);
  }
  run->totals.wall_ms = tt_now_ms() - t0; /* everything the question cost */
  json_t *end = json_pack("{s:s}", "event", "run_end");
  json_t *shape = tt_run_json(run, info, thread, TT_TRACE_ROWS);
  json_object_update(end, shape);
  json_decref(shape);
  tt_trace_write(trace, end);

  tt_trace_close(trace);
  tt_chat_free(&pending);
  free(history);
  tt_thread_free(&th); /* initialised even when loading failed */
  free(run_id);
}
