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
  bool private_config;   /* the configuration asks for private mode: always on */
  bool private_asked;    /* tt_session_set_private: on for the next questions */
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
  s->private_config = c->private_mode;
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

void tt_session_set_private(tt_session *s, bool on) { s->private_asked = on; }

bool tt_session_private(const tt_session *s) { return s->private_config || s->private_asked; }

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
  const tt_session_hooks *ui;
  const tt_session *session;
  const char *run_id;
} tt_tracer;

static json_t *tt_str_or_null(const char *s) {
  return s ? tt_json_stringn(s, strlen(s)) : json_null();
}

/* The event's JSON with when and which run: what the trace keeps and the
 * front end gets. */
static void tt_tracer_event(void *ud, const tt_event *ev) {
  tt_tracer *tr = ud;
  json_t *j = json_object();
  tt_buf ts = TT_BUF_INIT;
  tt_buf_put_iso_time(&ts, tt_wall_time());
  json_object_set_new(j, "ts", json_string(tt_buf_cstr(&ts)));
  json_object_set_new(j, "run_id", json_string(tr->run_id));
  tt_buf_free(&ts);
  json_t *body = tt_event_json(ev);
  json_object_update(j, body);
  json_decref(body);
  if (tt_event_traced(ev->kind)) tt_trace_write(tr->trace, j);
  if (tr->ui && tr->ui->on_event) tr->ui->on_event(tr->ui->ud, ev, j);
  json_decref(j);
}

/* Saves a chart the model made: PNG (or SVG) in the state folder, named
 * after the run, or where the front end asked. */
static bool tt_tracer_chart(void *ud, const tt_chart *chart, size_t index, tt_buf *path,
                            tt_error *err) {
  tt_tracer *tr = ud;
  const tt_chart_files *f = &tr->session->charts;
  /* without cairo a chart is still drawn, as SVG */
  bool svg = f->svg || !tt_chart_png_available(NULL);
  char *file = f->out ? tt_numbered_file(f->out, index)
                      : tt_chart_file_path(tr->session->state_dir, tr->run_id, index,
                                           svg ? "svg" : "png", err);
  if (!file) return false;
  bool ok = tt_chart_write_file(chart, file, f->width ? f->width : TT_CHART_DEFAULT_WIDTH,
                                f->height ? f->height : TT_CHART_DEFAULT_HEIGHT, err);
  if (ok) tt_buf_puts(path, file);
  if (ok && f->both) { /* the other format beside it; a failure is not the chart's */
    size_t n = strlen(file);
    char *other = tt_xasprintf("%.*s.%s", (int)(n > 4 ? n - 4 : n), file, svg ? "png" : "svg");
    tt_chart_write_file(chart, other, f->width ? f->width : TT_CHART_DEFAULT_WIDTH,
                        f->height ? f->height : TT_CHART_DEFAULT_HEIGHT, NULL);
    free(other);
  }
  free(file);
  return ok;
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
                           .summary = t->summary, .numbers = t->numbers, .notes = t->notes,
                           .status = t->status};
  }
  return history;
}

/* The run_start event's fields: the question, where it runs and on what
 * model. */
static json_t *tt_session_start_data(tt_session *s, const char *thread, const char *question,
                                     bool resumed, tt_llm *llm) {
  json_t *start = json_pack("{s:s,s:s,s:b}", "database", s->db_shown, "thread", thread, "resumed",
                            resumed);
  json_object_set_new(start, "backend", tt_str_or_null(llm ? tt_llm_backend(llm) : NULL));
  json_object_set_new(start, "model", tt_str_or_null(llm ? tt_llm_model(llm) : NULL));
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
                    const tt_session_hooks *ui, tt_run *run, tt_ask_result *info) {
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
  json_t *start = tt_session_start_data(s, thread, question, info->resumed, llm);
  tt_event start_ev = {.kind = TT_EV_RUN_START, .data = start};
  tt_tracer_event(&tr, &start_ev);
  json_decref(start);

  tt_agent_hooks hooks = {.on_event = tt_tracer_event, .on_chart = tt_tracer_chart,
                          .ud = &tr, .cancel = ui ? ui->cancel : NULL};
  if (have_thread && llm) tt_agent_set_private(tt_session_agent(s, llm), tt_session_private(s));
  if (have_thread && llm)
    tt_agent_ask(tt_session_agent(s, llm), history, nturns, info->resumed ? &pending : NULL,
                 question, &hooks, run);
  if (acquired) tt_models_release(tt_service_models(s->svc), llm);

  if (have_thread && llm &&
      !tt_store_save_turn(s->store, thread, s->db_shown, run_id, question, run, info->resumed, &err)) {
    char *msg = tt_xasprintf("this question was not saved to thread \"%s\" (%s), so a "
                             "follow-up will not see it; check %s/threads.sqlite",
                             thread, err.message, s->state_dir);
    tt_event w = {.kind = TT_EV_WARNING, .text = msg};
    tt_tracer_event(&tr, &w);
    tt_ask_warn(info, msg);
    free(msg);
  }
  run->totals.wall_ms = tt_now_ms() - t0; /* everything the question cost */
  json_t *shape = tt_run_json(run, info, thread, TT_TRACE_ROWS);
  tt_event end = {.kind = TT_EV_RUN_END, .data = shape};
  tt_tracer_event(&tr, &end);
  json_decref(shape);

  tt_trace_close(trace);
  tt_chat_free(&pending);
  free(history);
  tt_thread_free(&th); /* initialised even when loading failed */
  free(run_id);
}
