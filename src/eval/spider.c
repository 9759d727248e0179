/* spider.c — execution accuracy on a Spider-style question set: each
 * question through the agent in a fresh thread, the agent's final SQL and
 * the gold SQL run on the question's database, the rows compared (ex.c),
 * an outcome per question, and a results file rewritten after every
 * question so an interrupted run resumes where it stopped. Workers answer
 * questions in parallel, each with its own model, databases and sessions. */
#include "eval/eval.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *const tt_outcome_names[] = {"correct", "wrong", "sql_failed", "no_sql", "error",
                                               "clarify"};
static const char *const tt_outcome_labels[] = {"correct", "ran, wrong rows", "SQL did not run",
                                                "no SQL produced", "model or server error",
                                                "clarification asked"};

const char *tt_spider_outcome_name(tt_spider_outcome o) {
  return (size_t)o < TT_SP_OUTCOMES ? tt_outcome_names[o] : "?";
}

const char *tt_spider_outcome_label(tt_spider_outcome o) {
  return (size_t)o < TT_SP_OUTCOMES ? tt_outcome_labels[o] : "?";
}

static int tt_outcome_from_name(const char *s) {
  for (int i = 0; s && i < TT_SP_OUTCOMES; i++)
    if (strcmp(s, tt_outcome_names[i]) == 0) return i;
  return -1;
}

tt_spider_opts tt_spider_default_opts(void) {
  tt_spider_opts o = {.jobs = 1, .results_dir = "evals/results", .tag = "default"};
  return o;
}

/* ---- the question set --------------------------------------------------------------- */

static bool tt_spider_question(const json_t *q) {
  static const char *const fields[] = {"id", "db_id", "question", "gold_sql"};
  for (size_t i = 0; i < 4; i++)
    if (!json_is_string(json_object_get(q, fields[i]))) return false;
  return true;
}

static json_t *tt_load_questions(const char *dir, tt_error *err) {
  char *path = tt_xasprintf("%s/questions.jsonl", dir);
  json_t *qs = tt_eval_read_jsonl(path, tt_spider_question,
                                  "a question: it needs string fields id, db_id, question and gold_sql",
                                  "--data wants a folder with questions.jsonl and databases/<db_id>.sqlite",
                                  err);
  free(path);
  return qs;
}

/* The questions asked: the file's order, or shuffled by seed; the first n. */
static json_t *tt_select(const json_t *all, long n, long seed) {
  size_t total = json_array_size(all);
  size_t *idx = tt_xcalloc(total, sizeof *idx);
  for (size_t i = 0; i < total; i++) idx[i] = i;
  if (seed) { /* Fisher-Yates with splitmix64, the same on every machine */
    uint64_t s = (uint64_t)seed;
    for (size_t i = total - 1; i > 0; i--) {
      uint64_t z = (s += 0x9E3779B97F4A7C15ull);
      z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
      z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
      z ^= z >> 31;
      size_t j = (size_t)(z % (i + 1));
      size_t t = idx[i];
      idx[i] = idx[j];
      idx[j] = t;
    }
  }
  size_t keep = n > 0 && (size_t)n < total ? (size_t)n : total;
  json_t *sel = json_array();
  for (size_t i = 0; i < keep; i++) json_array_append(sel, json_array_get(all, idx[i]));
  free(idx);
  return sel;
}

/* ---- one worker's databases -------------------------------------------------------------- */

typedef struct tt_dbctx {
  char *db_id;
  tt_config *cfg;   /* the run's, on this database (a copy that owns nothing) */
  tt_service *svc;  /* the database, its schema */
  tt_db *eval;      /* gold and predictions, with room for whole results */
  tt_session *session;
} tt_dbctx;

typedef struct tt_run_state tt_run_state;

typedef struct tt_worker {
  tt_run_state *rs;
  tt_llm *llm;
  json_t *answers;  /* the oracle's: only the question being asked (the same text
                     * can be two questions on two databases) */
  tt_dbctx *dbs;
  size_t ndbs;
  char error[600];  /* why the worker could not start */
} tt_worker;

struct tt_run_state {
  const tt_spider_opts *o;
  json_t *questions;   /* selected */
  json_t **entries;    /* per selected question; NULL until done */
  json_t *meta;
  size_t next, done, correct;
  char *results_file;
  pthread_mutex_t mu;
  double t0;
  char write_error[600];
};

#define TT_WORKER_DBS 2 /* databases a worker keeps open (file handles: --jobs 64 must fit) */

static void tt_dbctx_free(tt_dbctx *c) {
  tt_session_free(c->session);
  tt_db_close(c->eval);
  tt_service_free(c->svc);
  free(c->cfg);
  free(c->db_id);
}

/* The worker's handles on db_id, most recently used first; the least
 * recently used is closed beyond TT_WORKER_DBS. NULL with err (the
 * database's path before the reason) when it cannot be opened. */
static tt_dbctx *tt_worker_db(tt_worker *w, const char *db_id, tt_error *err) {
  for (size_t i = 0; i < w->ndbs; i++)
    if (strcmp(w->dbs[i].db_id, db_id) == 0) {
      tt_dbctx hit = w->dbs[i];
      memmove(w->dbs + 1, w->dbs, i * sizeof *w->dbs);
      w->dbs[0] = hit;
      return &w->dbs[0];
    }
  const tt_spider_opts *o = w->rs->o;
  char *path = tt_xasprintf("%s/databases/%s.sqlite", o->data_dir, db_id);
  tt_dbctx c = {.db_id = tt_xstrdup(db_id), .cfg = tt_xmalloc(sizeof *c.cfg)};
  *c.cfg = *o->cfg; /* the service reads it while it lives: an address of its own */
  c.cfg->db = path;
  c.cfg->knowledge = NULL;
  c.cfg->immutable = true; /* Spider's files do not change while it runs */
  /* value hints as ask gives them (Spider's databases are small: built, not cached) */
  c.svc = tt_service_open(c.cfg, TT_SERVICE_SCHEMA | TT_SERVICE_VALUES_BUILT | TT_SERVICE_WHOLE_SCHEMA,
                          err);
  tt_db_opts eo = tt_config_db_opts(c.cfg);
  eo.max_rows = 100000;
  eo.max_bytes = 256L << 20;
  eo.timeout_s = eo.timeout_s > 10 ? eo.timeout_s : 10; /* Ctrl-C waits for it */
  eo.double_quoted_strings = true;
  if (c.svc) c.eval = tt_service_db_open(c.svc, &eo, err);
  if (c.eval) c.session = tt_session_new(c.svc, w->llm, err);
  if (!c.session) tt_error_prefix(err, "%s: ", path);
  free(path);
  c.cfg->db = NULL; /* the service keeps its own copy of the target */
  if (!c.session) {
    tt_db_close(c.eval);
    tt_service_free(c.svc);
    free(c.cfg);
    free(c.db_id);
    return NULL;
  }
  if (w->ndbs == TT_WORKER_DBS) tt_dbctx_free(&w->dbs[--w->ndbs]);
  w->dbs = tt_xrealloc(w->dbs, (w->ndbs + 1) * sizeof *w->dbs);
  memmove(w->dbs + 1, w->dbs, w->ndbs * sizeof *w->dbs);
  w->dbs[0] = c;
  w->ndbs++;
  return &w->dbs[0];
}

static void tt_worker_free(tt_worker *w) {
  for (size_t i = 0; i < w->ndbs; i++) tt_dbctx_free(&w->dbs[i]);
  free(w->dbs);
  tt_llm_free(w->llm);
  json_decref(w->answers);
}

/* ---- one question --------------------------------------------------------------------- */

typedef struct tt_sql_count {
  int tried, failed;
} tt_sql_count;

static void tt_count_sql(void *ud, const tt_event *ev, const json_t *json) {
  (void)json;
  tt_sql_count *c = ud;
  if (ev->kind == TT_EV_SQL && ev->sql) {
    c->tried++;
    c->failed += !ev->ok;
  }
}

/* Runs gold and prediction and compares them. */
static tt_spider_outcome tt_judge(tt_dbctx *c, const char *gold_sql, const char *pred_sql,
                                  tt_buf *detail) {
  tt_error err;
  tt_result *pred = tt_db_query(c->eval, pred_sql, strlen(pred_sql), &err);
  if (!pred) {
    tt_buf_printf(detail, "the final SQL fails when run again: %s", err.message);
    return TT_SP_SQL_FAILED;
  }
  tt_result *gold = tt_db_query(c->eval, gold_sql, strlen(gold_sql), &err);
  tt_spider_outcome o;
  if (!gold) {
    tt_buf_printf(detail, "the gold SQL fails: %s", err.message);
    o = TT_SP_WRONG;
  } else if (gold->truncated || pred->truncated) {
    tt_buf_puts(detail, "more than 100,000 rows: not compared");
    o = TT_SP_WRONG;
  } else {
    o = tt_ex_equal(gold, pred, tt_sql_outer_order_by(gold_sql), detail) ? TT_SP_CORRECT : TT_SP_WRONG;
  }
  tt_result_free(gold);
  tt_result_free(pred);
  return o;
}

static json_t *tt_str_json(const char *s) { return s ? tt_json_stringn(s, strlen(s)) : json_null(); }

/* Asks question q; returns its entry, or NULL when it was cancelled. */
static json_t *tt_ask_one(tt_worker *w, const json_t *q) {
  const tt_spider_opts *o = w->rs->o;
  const char *id = json_string_value(json_object_get(q, "id"));
  const char *db_id = json_string_value(json_object_get(q, "db_id"));
  const char *question = json_string_value(json_object_get(q, "question"));
  const char *gold = json_string_value(json_object_get(q, "gold_sql"));
  json_t *e = json_pack("{s:s,s:s,s:s,s:s}", "id", id, "db_id", db_id, "question", question, "gold_sql", gold);
  tt_error err;
  tt_buf detail = TT_BUF_INIT;
  tt_dbctx *c = tt_worker_db(w, db_id, &err);
  if (!c) {
    json_object_set_new(e, "outcome", json_string(tt_spider_outcome_name(TT_SP_ERROR)));
    json_object_set_new(e, "detail", tt_str_json(tt_error_text(&err)));
    json_object_set_new(e, "pred_sql", json_null());
    return e;
  }
  if (w->answers) {
    json_object_clear(w->answers);
    json_object_set_new(w->answers, question, json_string(gold));
  }
  char rnd[9];
  tt_random_hex(rnd, 4);
  char *thread = tt_xasprintf("eval-%s-%s", id, rnd); /* a fresh thread every time */
  tt_sql_count count = {0};
  tt_session_hooks hooks = {.on_event = tt_count_sql, .ud = &count, .cancel = o->cancel};
  tt_run run;
  tt_ask_result info;
  tt_session_ask(c->session, thread, question, &hooks, &run, &info);
  tt_spider_outcome out;
  if (run.status == TT_RUN_CANCELLED) {
    tt_run_free(&run);
    free(thread);
    json_decref(e);
    return NULL;
  } else if (run.status == TT_RUN_CLARIFY) {
    out = TT_SP_CLARIFY;
    tt_buf_printf(&detail, "asked: %s", run.answer ? run.answer : "");
  } else if (run.status == TT_RUN_FAILED) { /* even after a query ran: no prediction was made */
    out = TT_SP_ERROR;
    tt_buf_puts(&detail, run.error ? run.error : "the model failed");
  } else if (run.sql) {
    out = tt_judge(c, gold, run.sql, &detail);
  } else if (count.tried) {
    out = TT_SP_SQL_FAILED;
    tt_buf_printf(&detail, "%d quer%s tried, none ran", count.tried, count.tried == 1 ? "y" : "ies");
  } else {
    out = TT_SP_NO_SQL;
    tt_buf_puts(&detail, "answered without querying");
  }
  json_object_set_new(e, "outcome", json_string(tt_spider_outcome_name(out)));
  json_object_set_new(e, "detail", detail.len ? tt_str_json(tt_buf_cstr(&detail)) : json_null());
  json_object_set_new(e, "pred_sql", tt_str_json(run.sql));
  json_object_set_new(e, "status", json_string(tt_run_status_name(run.status)));
  json_object_set_new(e, "answer", tt_str_json(run.answer));
  json_object_set_new(e, "sql_tried", json_integer(count.tried));
  json_object_set_new(e, "sql_failed", json_integer(count.failed));
  json_object_set_new(e, "llm_calls", json_integer(run.totals.llm_calls));
  json_object_set_new(e, "tool_calls", json_integer(run.totals.tool_calls));
  json_object_set_new(e, "prompt_tokens", json_integer(run.totals.prompt_tokens));
  json_object_set_new(e, "cached_tokens", json_integer(run.totals.cached_tokens));
  json_object_set_new(e, "completion_tokens", json_integer(run.totals.completion_tokens));
  json_object_set_new(e, "seconds", json_real(run.totals.wall_ms / 1000.0));
  json_object_set_new(e, "run_id", json_string(info.run_id));
  tt_run_free(&run);
  free(thread);
  tt_buf_free(&detail);
  return e;
}

/* ---- the results file --------------------------------------------------------------------- */

static void tt_summarise(tt_run_state *rs, tt_spider_summary *s) {
  size_t total = json_array_size(rs->questions);
  memset(s->count, 0, sizeof s->count);
  s->total = total;
  s->done = 0;
  double calls = 0, secs = 0;
  for (size_t i = 0; i < total; i++) {
    const json_t *e = rs->entries[i];
    if (!e) continue;
    int k = tt_outcome_from_name(json_string_value(json_object_get(e, "outcome")));
    if (k >= 0) s->count[k]++;
    s->done++;
    calls += (double)json_integer_value(json_object_get(e, "llm_calls"));
    secs += json_number_value(json_object_get(e, "seconds"));
  }
  s->ex = s->done ? 100.0 * (double)s->count[TT_SP_CORRECT] / (double)s->done : 0;
  s->llm_calls = s->done ? calls / (double)s->done : 0;
  s->seconds = s->done ? secs / (double)s->done : 0;
}

static json_t *tt_summary_json(const tt_spider_summary *s) {
  json_t *counts = json_object();
  for (int k = 0; k < TT_SP_OUTCOMES; k++)
    json_object_set_new(counts, tt_outcome_names[k], json_integer((json_int_t)s->count[k]));
  return json_pack("{s:I,s:I,s:o,s:f,s:f,s:f}", "questions", (json_int_t)s->total, "done",
                   (json_int_t)s->done, "outcomes", counts, "ex_percent", s->ex,
                   "llm_calls_per_question", s->llm_calls, "seconds_per_question", s->seconds);
}

/* Writes the whole file again, through a temporary file. Call with rs->mu. */
static bool tt_write_results(tt_run_state *rs) {
  tt_spider_summary s;
  tt_summarise(rs, &s);
  json_t *qs = json_array();
  for (size_t i = 0; i < json_array_size(rs->questions); i++)
    if (rs->entries[i]) json_array_append(qs, rs->entries[i]);
  tt_buf now = TT_BUF_INIT;
  tt_buf_put_iso_time(&now, tt_wall_time());
  json_object_set_new(rs->meta, "updated", json_string(tt_buf_cstr(&now)));
  tt_buf_free(&now);
  json_t *doc = json_pack("{s:O,s:o,s:o}", "meta", rs->meta, "summary", tt_summary_json(&s), "questions", qs);
  char *tmp = tt_xasprintf("%s.tmp-%ld", rs->results_file, (long)getpid());
  bool ok = json_dump_file(doc, tmp, JSON_INDENT(1) | JSON_REAL_PRECISION(10)) == 0 &&
            rename(tmp, rs->results_file) == 0;
  if (!ok) {
    snprintf(rs->write_error, sizeof rs->write_error, "cannot write %s: %s", rs->results_file,
             strerror(errno));
    unlink(tmp);
  }
  free(tmp);
  json_decref(doc);
  return ok;
}

/* Entries of an earlier run of the same selection by the same model, kept
 * unless they were errors (which a resumed run tries again). An earlier
 * run by another model or on other data is not mixed in: err says so
 * (config: the hint names --tag and --fresh), and SIZE_MAX is returned. */
static size_t tt_resume(tt_run_state *rs, tt_error *err) {
  json_t *old = json_load_file(rs->results_file, 0, NULL);
  size_t kept = 0;
  const json_t *meta = json_object_get(old, "meta");
  static const char *const same[] = {"data_dir", "backend", "model", "endpoint"};
  for (size_t k = 0; old && k < sizeof same / sizeof same[0]; k++) {
    const json_t *a = json_object_get(meta, same[k]), *b = json_object_get(rs->meta, same[k]);
    if ((a || b) && !(a && b && json_equal((json_t *)a, (json_t *)b))) {
      tt_error_set(err, TT_ERR_CONFIG, "%s holds an earlier run with another %s (%s)",
                   rs->results_file, strcmp(same[k], "data_dir") ? same[k] : "--data",
                   json_is_string(a) ? json_string_value(a) : "none");
      tt_error_hint(err, "give --tag to keep both, or --fresh to start over");
      json_decref(old);
      return SIZE_MAX;
    }
  }
  const json_t *list = json_object_get(old, "questions");
  for (size_t i = 0; i < json_array_size(rs->questions); i++) {
    const char *id = json_string_value(json_object_get(json_array_get(rs->questions, i), "id"));
    size_t k;
    const json_t *e;
    json_array_foreach(list, k, e) {
      const char *eid = json_string_value(json_object_get(e, "id"));
      int oc = tt_outcome_from_name(json_string_value(json_object_get(e, "outcome")));
      if (eid && strcmp(eid, id) == 0 && oc >= 0 && oc != TT_SP_ERROR) {
        rs->entries[i] = json_incref((json_t *)e);
        kept++;
        break;
      }
    }
  }
  json_decref(old);
  return kept;
}

static void *tt_worker_main(void *arg) {
  tt_worker *w = arg;
  tt_run_state *rs = w->rs;
  const tt_spider_opts *o = rs->o;
  size_t total = json_array_size(rs->questions);
  for (;;) {
    if (o->cancel && *o->cancel) break;
    pthread_mutex_lock(&rs->mu);
    while (rs->next < total && rs->entries[rs->next]) rs->next++;
    size_t i = rs->next++;
    pthread_mutex_unlock(&rs->mu);
    if (i >= total) break;
    json_t *e = tt_ask_one(w, json_array_get(rs->questions, i));
    if (!e) break; /* cancelled */
    pthread_mutex_lock(&rs->mu);
    rs->entries[i] = e;
    rs->done++;
    if (strcmp(json_string_value(json_object_get(e, "outcome")), "correct") == 0) rs->correct++;
    tt_write_results(rs);
    if (o->on_progress) o->on_progress(o->progress_ud, rs->done, total, rs->correct, e);
    pthread_mutex_unlock(&rs->mu);
  }
  return NULL;
}

static char *tt_results_path(const tt_spider_opts *o, size_t n) {
  tt_buf tag = TT_BUF_INIT; /* a file name: letters, digits, dot, dash, underscore */
  for (const char *p = o->tag && *o->tag ? o->tag : "default"; *p; p++)
    tt_buf_putc(&tag, (char)(((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
                              (*p >= '0' && *p <= '9') || *p == '.' || *p == '-' || *p == '_')
                                 ? *p : '-'));
  char *path = tt_xasprintf("%s/spider_n%zu_s%ld_%s.json", o->results_dir, n, o->seed, tt_buf_cstr(&tag));
  tt_buf_free(&tag);
  return path;
}

bool tt_spider_run(const tt_spider_opts *o, tt_spider_summary *out, tt_error *err) {
  memset(out, 0, sizeof *out);
  json_t *all = tt_load_questions(o->data_dir, err);
  if (!all) return false;
  if (!o->oracle && !o->models) {
    tt_error_set(err, TT_ERR_UNAVAILABLE,
                 "no model to evaluate: give one (--model-path, --base-url) or --backend oracle");
    json_decref(all);
    return false;
  }
  if (!tt_mkdir_p(o->results_dir, 0755)) {
    tt_error_set(err, TT_ERR_IO, "cannot create the results folder %s: %s", o->results_dir,
                 strerror(errno));
    json_decref(all);
    return false;
  }
  tt_run_state rs = {.o = o, .t0 = tt_now_ms()};
  rs.questions = tt_select(all, o->n, o->seed);
  json_decref(all);
  size_t total = json_array_size(rs.questions);
  rs.entries = tt_xcalloc(total, sizeof *rs.entries);
  rs.results_file = tt_results_path(o, total);
  tt_buf started = TT_BUF_INIT;
  tt_buf_put_iso_time(&started, tt_wall_time());
  rs.meta = json_pack("{s:s,s:I,s:I,s:s,s:s,s:s,s:b}", "data_dir", o->data_dir, "n", (json_int_t)total,
                      "seed", (json_int_t)o->seed, "tag", o->tag ? o->tag : "default", "backend",
                      o->oracle ? "oracle" : "model", "started", tt_buf_cstr(&started),
                      "double_quoted_strings", tt_config_db_opts(o->cfg).double_quoted_strings);
  tt_buf_free(&started);
  pthread_mutex_init(&rs.mu, NULL);

  /* the thread store is made once, here, so workers opening it at the same
   * moment never race to create the file and switch it to WAL */
  tt_store *store = tt_store_open(tt_config_state_dir(o->cfg), err);
  bool started_all = store != NULL;
  tt_store_close(store);
  int jobs = o->jobs < 1 ? 1 : o->jobs > 64 ? 64 : o->jobs;
  if ((size_t)jobs > total) jobs = (int)total;
  tt_worker *w = tt_xcalloc((size_t)jobs, sizeof *w);
  for (int k = 0; started_all && k < jobs; k++) {
    w[k].rs = &rs;
    if (o->oracle) w[k].answers = json_object();
    if (!o->oracle && k > 0 && !tt_llm_parallel(w[0].llm)) { /* before a second copy loads */
      tt_error_set(err, TT_ERR_CONFIG, "the local engine answers one question at a time: use "
                   "--jobs 1, or an HTTP endpoint (--base-url) for parallel jobs");
      started_all = false;
      break;
    }
    w[k].llm = o->oracle ? tt_oracle_new(w[k].answers) : tt_models_make(o->models, err);
    if (!w[k].llm) {
      tt_error_prefix(err, "cannot start the model: ");
      started_all = false;
    }
  }
  if (started_all) {
    if (w[0].llm) json_object_set_new(rs.meta, "model", json_string(tt_llm_model(w[0].llm)));
    if (!o->oracle) json_object_set_new(rs.meta, "backend", json_string(tt_llm_backend(w[0].llm)));
    if (o->endpoint) json_object_set_new(rs.meta, "endpoint", json_string(o->endpoint));
    size_t kept = o->fresh ? 0 : tt_resume(&rs, err);
    if (kept == SIZE_MAX) {
      started_all = false;
      kept = 0;
    }
    out->resumed = kept;
    for (size_t k = 0; k < total; k++) { /* progress counts from what is kept */
      if (!rs.entries[k]) continue;
      rs.done++;
      rs.correct += strcmp(json_string_value(json_object_get(rs.entries[k], "outcome")), "correct") == 0;
    }
  }
  if (started_all) {
    pthread_mutex_lock(&rs.mu);
    bool wrote = tt_write_results(&rs); /* fails early when the file cannot be written */
    pthread_mutex_unlock(&rs.mu);
    if (!wrote) {
      tt_error_set(err, TT_ERR_IO, "%s", rs.write_error);
      started_all = false;
    }
  }
  if (started_all) {
    pthread_t *th = tt_xcalloc((size_t)jobs, sizeof *th);
    bool *running = tt_xcalloc((size_t)jobs, sizeof *running);
    int nstarted = 1;
    /* A worker the system cannot start (out of threads or memory) is left
     * out: the others take its questions from the shared queue, and the
     * results file says how many ran. */
    for (int k = 1; k < jobs; k++) {
      running[k] = pthread_create(&th[k], NULL, tt_worker_main, &w[k]) == 0;
      nstarted += running[k];
    }
    if (nstarted < jobs) {
      pthread_mutex_lock(&rs.mu); /* the workers write the file already */
      json_object_set_new(rs.meta, "jobs_started", json_integer(nstarted));
      pthread_mutex_unlock(&rs.mu);
    }
    tt_worker_main(&w[0]);
    for (int k = 1; k < jobs; k++)
      if (running[k]) pthread_join(th[k], NULL);
    free(running);
    free(th);
  }
  for (int k = 0; k < jobs; k++) tt_worker_free(&w[k]);
  free(w);
  tt_summarise(&rs, out);
  out->minutes = (tt_now_ms() - rs.t0) / 60000.0;
  out->cancelled = out->done < out->total && o->cancel && *o->cancel;
  snprintf(out->results_file, sizeof out->results_file, "%s", rs.results_file);
  bool ok = started_all && !rs.write_error[0];
  if (started_all && rs.write_error[0]) tt_error_set(err, TT_ERR_IO, "%s", rs.write_error);
  for (size_t k = 0; k < total; k++) json_decref(rs.entries[k]);
  free(rs.entries);
  free(rs.results_file);
  json_decref(rs.meta);
  json_decref(rs.questions);
  pthread_mutex_destroy(&rs.mu);
  return ok;
}
