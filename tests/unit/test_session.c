/* test_session.c — the session layer on its own: the configuration and the
 * one place options become database and agent options, the model factory's
 * order of choice and its sharing (a backend that answers in parallel gives
 * each waiting question a model of its own; the in-process engine makes a
 * second question wait), a model that arrives after the start, and the
 * service: the database target, errors at the start, the schema read in
 * the background. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "session/session.h"
#include "testutil.h"

static tu_scratch g_scratch;

static int setup(void **state) {
  (void)state;
  tu_scratch_make(&g_scratch);
  /* nothing of the user's own configuration may leak into these tests */
  unsetenv("TABLETALK_MODEL_PATH");
  unsetenv("TABLETALK_BASE_URL");
  unsetenv("TABLETALK_PROFILE");
  unsetenv("TABLETALK_LLM_TIMEOUT");
  return 0;
}

static int teardown(void **state) {
  (void)state;
  tu_scratch_remove(&g_scratch);
  return 0;
}

/* A configuration whose folders are private to the test. */
static void cfg_init(tt_config *c, const char *dir) {
  tt_config_init(c);
  char *state = tt_xasprintf("%s/state", dir);
  setenv("TABLETALK_DATA_DIR", dir, 1);
  setenv("TABLETALK_CACHE_DIR", dir, 1);
  c->state_dir = state; /* freed by cfg_free */
  tt_error err;
  assert_true(tt_config_resolve(c, &err));
}

static void cfg_free(tt_config *c) {
  free((char *)c->state_dir);
  tt_config_free(c);
  unsetenv("TABLETALK_DATA_DIR");
  unsetenv("TABLETALK_CACHE_DIR");
}

/* The flags a front end sets become the options of every query and of
 * the agent in one place. */
static void test_options_derived_once(void **state) {
  (void)state;
  tt_config c;
  cfg_init(&c, g_scratch.dir);
  c.sql_timeout_s = 2.5;
  c.immutable = true;
  c.csv_header = TT_CSV_HEADER_NO;
  c.schemas = "sales,!audit";
  c.schema_budget = 777;
  tt_db_opts d = tt_config_db_opts(&c);
  assert_true(d.timeout_s == 2.5);
  assert_true(d.immutable);
  assert_int_equal(d.csv_header, TT_CSV_HEADER_NO);
  assert_string_equal(d.schemas, "sales,!audit");
  tt_agent_opts a = tt_config_agent_opts(&c);
  assert_true(a.sql.timeout_s == 2.5);
  assert_true(a.sql.immutable);
  assert_string_equal(a.sql.schemas, "sales,!audit");
  assert_int_equal(a.schema_budget, 777);
  assert_int_equal(a.max_tool_calls, tt_agent_default_opts().max_tool_calls);
  cfg_free(&c);
}

/* --model-path, then --base-url, then TABLETALK_MODEL_PATH, then the
 * installed default, then TABLETALK_BASE_URL. */
static void test_model_choice_order(void **state) {
  (void)state;
  char *dir = tu_mkdtemp();
  tt_config c;
  cfg_init(&c, dir);
  tt_models *m = tt_models_new(&c);
  tt_model_choice ch;
  tt_models_choice(m, &ch);
  assert_null(ch.path);
  assert_null(ch.url);
  tt_model_choice_free(&ch);

  setenv("TABLETALK_BASE_URL", "http://127.0.0.1:9/v1", 1);
  tt_models_choice(m, &ch);
  assert_string_equal(ch.url, "http://127.0.0.1:9/v1");
  assert_string_equal(ch.source, "TABLETALK_BASE_URL");
  tt_model_choice_free(&ch);

  char *models = tt_xasprintf("%s/models", dir);
  assert_true(tt_mkdir_p(models, 0700));
  char *def = tt_xasprintf("%s/default.gguf", models);
  tu_write_file(def, "not really a model");
  tt_models_choice(m, &ch);
  assert_string_equal(ch.path, def);
  assert_string_equal(ch.source, "the installed default (tabletalk pull)");
  tt_model_choice_free(&ch);

  setenv("TABLETALK_MODEL_PATH", "/models/env.gguf", 1);
  tt_models_choice(m, &ch);
  assert_string_equal(ch.path, "/models/env.gguf");
  tt_model_choice_free(&ch);

  c.base_url = "http://127.0.0.1:8/v1";
  tt_models_choice(m, &ch);
  assert_null(ch.path);
  assert_string_equal(ch.url, "http://127.0.0.1:8/v1");
  assert_string_equal(ch.source, "--base-url");
  tt_model_choice_free(&ch);

  c.model_path = "/models/flag.gguf";
  tt_models_choice(m, &ch);
  assert_string_equal(ch.path, "/models/flag.gguf");
  assert_string_equal(ch.source, "--model-path");
  tt_model_choice_free(&ch);

  unsetenv("TABLETALK_MODEL_PATH");
  unsetenv("TABLETALK_BASE_URL");
  tt_models_free(m);
  cfg_free(&c);
  free(def);
  free(models);
  tu_rmtree(dir);
  free(dir);
}

/* No model at all: a clear error of its own kind (the CLI exits 1 with
 * it), and a bad TABLETALK_BASE_URL is a configuration error. */
static void test_model_errors(void **state) {
  (void)state;
  char *dir = tu_mkdtemp();
  tt_config c;
  cfg_init(&c, dir);
  tt_models *m = tt_models_new(&c);
  tt_error err;
  assert_null(tt_models_make(m, &err));
  assert_int_equal(err.kind, TT_ERR_UNAVAILABLE);
  assert_non_null(strstr(err.message, "tabletalk pull"));
  setenv("TABLETALK_BASE_URL", "ftp://example.com", 1);
  assert_false(tt_models_check(m, &err));
  assert_int_equal(err.kind, TT_ERR_CONFIG);
  assert_non_null(strstr(err.message, "TABLETALK_BASE_URL"));
  unsetenv("TABLETALK_BASE_URL");
  tt_models_free(m);
  cfg_free(&c);
  tu_rmtree(dir);
  free(dir);
}

/* An HTTP endpoint answers calls in parallel: a second question while the
 * first holds the shared model gets one of its own, without waiting. */
static void test_parallel_backend_gets_its_own(void **state) {
  (void)state;
  char *dir = tu_mkdtemp();
  tt_config c;
  cfg_init(&c, dir);
  c.base_url = "http://127.0.0.1:9/v1"; /* nothing is sent: models only */
  tt_models *m = tt_models_new(&c);
  tt_error err;
  tt_llm *a = tt_models_acquire(m, NULL, NULL, NULL, &err);
  assert_non_null(a);
  assert_true(tt_llm_parallel(a));
  assert_ptr_equal(a, tt_models_shared(m, &err));
  tt_llm *b = tt_models_acquire(m, NULL, NULL, NULL, &err);
  assert_non_null(b);
  assert_ptr_not_equal(a, b);
  tt_models_release(m, b); /* freed: it was this question's own */
  tt_models_release(m, a);
  tt_llm *again = tt_models_acquire(m, NULL, NULL, NULL, &err);
  assert_ptr_equal(again, a); /* the shared one is free again */
  tt_models_release(m, again);
  tt_models_free(m);
  cfg_free(&c);
  tu_rmtree(dir);
  free(dir);
}

typedef struct waiter {
  tt_models *m;
  tt_llm *got;
  int waited;              /* on_wait calls */
  pthread_mutex_t mu;
  pthread_cond_t cv;
  volatile sig_atomic_t cancel;
} waiter;

static void on_wait(void *ud) {
  waiter *w = ud;
  pthread_mutex_lock(&w->mu);
  w->waited++;
  pthread_cond_broadcast(&w->cv);
  pthread_mutex_unlock(&w->mu);
}

static void *acquire_thread(void *arg) {
  waiter *w = arg;
  tt_error err;
  w->got = tt_models_acquire(w->m, &w->cancel, on_wait, w, &err);
  return NULL;
}

/* The in-process engine is one copy of the weights: a second question
 * waits (told once), then gets the same model; a cancelled wait gives
 * up. Needs the tiny model of the test fixtures. */
static void test_shared_engine_queues(void **state) {
  (void)state;
  const char *tiny = getenv("TT_TINY_MODEL");
  if (!tiny || access(tiny, R_OK) != 0) {
    skip();
    return;
  }
  char *dir = tu_mkdtemp();
  tt_config c;
  cfg_init(&c, dir);
  c.model_path = tiny;
  c.ctx = 512;
  tt_models *m = tt_models_new(&c);
  tt_error err;
  tt_llm *first = tt_models_acquire(m, NULL, NULL, NULL, &err);
  assert_non_null(first);
  assert_false(tt_llm_parallel(first));
  waiter w = {.m = m};
  pthread_mutex_init(&w.mu, NULL);
  pthread_cond_init(&w.cv, NULL);
  pthread_t th;
  assert_int_equal(pthread_create(&th, NULL, acquire_thread, &w), 0);
  pthread_mutex_lock(&w.mu);
  while (!w.waited) pthread_cond_wait(&w.cv, &w.mu); /* the event: it waits */
  pthread_mutex_unlock(&w.mu);
  tt_models_release(m, first);
  pthread_join(th, NULL);
  assert_ptr_equal(w.got, first);
  assert_int_equal(w.waited, 1);

  /* held again: a waiting question that is cancelled gives up */
  waiter x = {.m = m, .cancel = 1};
  pthread_mutex_init(&x.mu, NULL);
  pthread_cond_init(&x.cv, NULL);
  assert_int_equal(pthread_create(&th, NULL, acquire_thread, &x), 0);
  pthread_join(th, NULL);
  assert_null(x.got);
  tt_models_release(m, w.got);
  tt_models_free(m);
  cfg_free(&c);
  tu_rmtree(dir);
  free(dir);
}

/* A model that arrives after the start (a `tabletalk pull` meanwhile) is
 * found by the next question: nothing is remembered of the failure. */
static void test_model_arrives_later(void **state) {
  (void)state;
  const char *tiny = getenv("TT_TINY_MODEL");
  if (!tiny || access(tiny, R_OK) != 0) {
    skip();
    return;
  }
  char *dir = tu_mkdtemp();
  tt_config c;
  cfg_init(&c, dir);
  c.db = g_scratch.db;
  c.ctx = 512;
  tt_error err;
  tt_service *svc = tt_service_open(&c, TT_SERVICE_SCHEMA | TT_SERVICE_NO_VALUES, &err);
  assert_non_null(svc);
  assert_null(tt_models_shared(tt_service_models(svc), &err));
  assert_int_equal(err.kind, TT_ERR_UNAVAILABLE);
  char *models = tt_xasprintf("%s/models", dir);
  assert_true(tt_mkdir_p(models, 0700));
  char *def = tt_xasprintf("%s/default.gguf", models);
  tu_copy_file(tiny, def);
  assert_non_null(tt_models_shared(tt_service_models(svc), &err));
  tt_service_free(svc);
  cfg_free(&c);
  free(def);
  free(models);
  tu_rmtree(dir);
  free(dir);
}

/* The target is parsed once: what is opened, what is shown. */
static void test_service_target_and_db(void **state) {
  (void)state;
  tt_config c;
  cfg_init(&c, g_scratch.dir);
  char *rel = tt_xasprintf("%s/./chinook.sqlite", g_scratch.dir);
  c.db = rel;
  tt_error err;
  tt_service *svc = tt_service_open(&c, 0, &err);
  assert_non_null(svc);
  const tt_db_target *t = tt_service_target(svc);
  assert_int_equal(t->kind, TT_DB_KIND_SQLITE);
  char *real = realpath(g_scratch.db, NULL);
  assert_string_equal(t->shown, real);
  tt_result *r = tt_db_query(tt_service_db(svc), "SELECT count(*) FROM Genre", 26, &err);
  assert_non_null(r);
  tt_result_free(r);
  tt_db *other = tt_service_db_open(svc, NULL, &err); /* another thread's */
  assert_non_null(other);
  assert_ptr_not_equal(other, tt_service_db(svc));
  tt_db_close(other);
  assert_null(tt_service_schema(svc, &err)); /* not asked for */
  tt_service_free(svc);
  free(real);
  free(rel);
  cfg_free(&c);
}

/* What cannot work fails at the start, with its kind. */
static void test_service_errors(void **state) {
  (void)state;
  tt_config c;
  cfg_init(&c, g_scratch.dir);
  tt_error err;
  c.db = "";
  assert_null(tt_service_open(&c, 0, &err));
  assert_int_equal(err.kind, TT_ERR_CONFIG);
  char *missing = tt_xasprintf("%s/none.sqlite", g_scratch.dir);
  c.db = missing;
  assert_null(tt_service_open(&c, 0, &err));
  assert_int_equal(err.kind, TT_ERR_IO);
  assert_int_not_equal(access(missing, F_OK), 0); /* nothing was created */
  c.db = g_scratch.db;
  c.schemas = "public";
  assert_null(tt_service_open(&c, 0, &err));
  assert_int_equal(err.kind, TT_ERR_CONFIG);
  assert_non_null(strstr(err.message, "--schemas applies to PostgreSQL"));
  c.schemas = NULL;
  char *kfile = tt_xasprintf("%s/bad.knowledge.json", g_scratch.dir);
  tu_write_file(kfile, "{\n  \"tables\": [1,\n");
  c.knowledge = kfile;
  /* a bad knowledge file the user named stops the start, also when the
   * schema would be read in the background */
  assert_null(tt_service_open(&c, TT_SERVICE_SCHEMA | TT_SERVICE_BACKGROUND, &err));
  assert_int_equal(err.kind, TT_ERR_CONFIG);
  assert_non_null(strstr(err.message, "bad.knowledge.json"));
  c.knowledge = NULL;
  free(kfile);
  free(missing);
  cfg_free(&c);
}

/* The schema read on a thread of its own: the service answers at once
 * and the schema is there when asked for. */
static void test_service_background_schema(void **state) {
  (void)state;
  tt_config c;
  cfg_init(&c, g_scratch.dir);
  c.db = g_scratch.db;
  tt_error err;
  tt_service *svc = tt_service_open(&c, TT_SERVICE_SCHEMA | TT_SERVICE_BACKGROUND | TT_SERVICE_NO_VALUES,
                                    &err);
  assert_non_null(svc);
  const tt_schema *s = tt_service_schema(svc, &err);
  assert_non_null(s);
  assert_int_equal(tt_schema_count(s), 11);
  assert_ptr_equal(tt_service_schema_ready(svc, 0), s);
  tt_service_free(svc);
  cfg_free(&c);
}

/* A question on a session whose service has no model: the run fails with
 * the reason, and the trace still tells it, start to end. */
static void test_session_without_model(void **state) {
  (void)state;
  char *dir = tu_mkdtemp();
  tt_config c;
  cfg_init(&c, dir);
  c.db = g_scratch.db;
  tt_error err;
  tt_service *svc = tt_service_open(&c, TT_SERVICE_SCHEMA | TT_SERVICE_NO_VALUES, &err);
  assert_non_null(svc);
  tt_session *s = tt_session_new(svc, NULL, &err);
  assert_non_null(s);
  tt_run run;
  tt_ask_result info;
  tt_session_ask(s, "t1", "How many genres?", NULL, &run, &info);
  assert_int_equal(run.status, TT_RUN_FAILED);
  assert_non_null(strstr(run.error, "no model available"));
  tt_error terr;
  json_t *events = tt_trace_load(tt_config_state_dir(&c), info.run_id, &terr);
  assert_non_null(events);
  assert_string_equal(json_string_value(json_object_get(json_array_get(events, 0), "event")), "run_start");
  json_t *end = json_array_get(events, json_array_size(events) - 1);
  assert_string_equal(json_string_value(json_object_get(end, "event")), "run_end");
  assert_string_equal(json_string_value(json_object_get(end, "status")), "failed");
  json_decref(events);
  tt_run_free(&run);
  tt_session_free(s);
  tt_service_free(svc);
  cfg_free(&c);
  tu_rmtree(dir);
  free(dir);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_options_derived_once),
      cmocka_unit_test(test_model_choice_order),
      cmocka_unit_test(test_model_errors),
      cmocka_unit_test(test_parallel_backend_gets_its_own),
      cmocka_unit_test(test_shared_engine_queues),
      cmocka_unit_test(test_model_arrives_later),
      cmocka_unit_test(test_service_target_and_db),
      cmocka_unit_test(test_service_errors),
      cmocka_unit_test(test_service_background_schema),
      cmocka_unit_test(test_session_without_model),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
