/* service.c — what every front end needs before a question, set up once
 * from a configuration: the database target parsed, the database opened
 * read-only (a file that is not a database fails here, at the start), its
 * schema read with the knowledge file and the value index (on a thread of
 * its own when the front end must answer at once, as an MCP server's
 * handshake must), the clean-up of old traces, and the model factory. */
#include "session/session.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

struct tt_service {
  const tt_config *cfg;
  unsigned flags;
  tt_db_target target;
  tt_db *db;
  tt_models *models;
  double startup_ms;
  /* the schema, read here or by the loader thread */
  pthread_mutex_t mu;
  pthread_cond_t cv;
  bool schema_done;
  tt_schema *schema;
  tt_error schema_err;
  pthread_t loader;
  bool loader_started;
};

/* Traces and charts older than TABLETALK_KEEP (default 90 days) go, at
 * most once a day per state folder. */
static void tt_service_housekeeping(const tt_service *s) {
  bool bad;
  long long age = tt_config_keep_seconds(s->cfg, &bad);
  if (bad) return; /* `tabletalk gc` says why */
  const char *dir = tt_config_state_dir(s->cfg);
  if (age == 0 || !tt_store_gc_due(dir)) return;
  tt_gc_report r;
  tt_store_gc(dir, age, false, &r);
}

/* Reads the schema on handle db; the result (or the error) is kept. */
static void tt_service_read_schema(tt_service *s, tt_db *db) {
  const tt_config *c = s->cfg;
  tt_schema_load_opts so = {
      .db_path = s->target.uri ? NULL : s->target.path, /* a server's URI has no file beside it */
      .knowledge = c->knowledge,
      .values = (s->flags & TT_SERVICE_NO_VALUES)     ? TT_SCHEMA_VALUES_NONE
                : (s->flags & TT_SERVICE_VALUES_BUILT) ? TT_SCHEMA_VALUES_BUILT
                                                       : TT_SCHEMA_VALUES_CACHED,
      .cache_dir = c->cache_dir,
      .progress = c->progress && !(s->flags & TT_SERVICE_BACKGROUND) && isatty(STDERR_FILENO),
  };
  tt_error err;
  tt_schema *schema = tt_schema_load(db, &so, &err);
  if (schema && tt_schema_warning(schema))
    fprintf(stderr, "tabletalk: warning: %s\n", tt_schema_warning(schema));
  pthread_mutex_lock(&s->mu);
  s->schema = schema;
  if (!schema) s->schema_err = err;
  s->schema_done = true;
  pthread_cond_broadcast(&s->cv);
  pthread_mutex_unlock(&s->mu);
}

/* The loader thread: a handle of its own, so the service's stays free. */
static void *tt_service_loader(void *arg) {
  tt_service *s = arg;
  tt_db_opts o = tt_config_db_opts(s->cfg);
  tt_error err;
  tt_db *db = tt_db_open_target(&s->target, &o, &err);
  if (db) {
    tt_service_read_schema(s, db);
    tt_db_close(db);
  } else {
    pthread_mutex_lock(&s->mu);
    s->schema_err = err;
    s->schema_done = true;
    pthread_cond_broadcast(&s->cv);
    pthread_mutex_unlock(&s->mu);
  }
  return NULL;
}

/* A knowledge file the user named must be usable at the start, also when
 * the schema is read later. */
static bool tt_service_check_knowledge(const tt_config *c, tt_error *err) {
  if (!c->knowledge) return true;
  tt_knowledge *kn = tt_knowledge_load(c->knowledge, err);
  if (!kn) {
    char where[32] = "";
    if (err->line > 0) snprintf(where, sizeof where, ":%d", err->line);
    tt_error_prefix(err, "knowledge file %s%s: ", c->knowledge, where);
    return false;
  }
  tt_knowledge_free(kn);
  return true;
}

tt_service *tt_service_open(const tt_config *c, unsigned flags, tt_error *err) {
  double t0 = tt_now_ms();
  tt_error_clear(err);
  tt_service *s = tt_xcalloc(1, sizeof *s);
  s->cfg = c;
  s->flags = flags;
  pthread_mutex_init(&s->mu, NULL);
  pthread_cond_init(&s->cv, NULL);
  s->models = tt_models_new(c);
  if (!tt_db_target_parse(c->db, &s->target, err)) goto fail;
  if (c->schemas && !tt_db_kind_facts(s->target.kind)->schemas) {
    tt_error_set(err, TT_ERR_CONFIG, "--schemas applies to PostgreSQL (a postgres:// URI or "
                                     "--db-url); a SQLite or CSV database has no schemas to choose");
    goto fail;
  }
  if ((flags & TT_SERVICE_MODEL) && !tt_models_check(s->models, err)) goto fail;
  if ((flags & TT_SERVICE_MODEL)) {
    tt_model_choice ch;
    tt_models_choice(s->models, &ch);
    if (!ch.path && ch.url) tt_llm_http_preload(); /* overlaps opening the database */
    tt_model_choice_free(&ch);
  }
  if (flags & TT_SERVICE_HOUSEKEEPING) tt_service_housekeeping(s);
  tt_db_opts o = tt_config_db_opts(c);
  s->db = tt_db_open_target(&s->target, &o, err);
  if (!s->db) goto fail;
  /* files of a folder that are not read, a role that could do harm should
   * a function of the database's owner run: said at every start (MCP and
   * the web page say it too) */
  if (tt_db_warning(s->db)) fprintf(stderr, "tabletalk: warning: %s\n", tt_db_warning(s->db));
  if (flags & TT_SERVICE_SCHEMA) {
    if (flags & TT_SERVICE_BACKGROUND) {
      if (!tt_service_check_knowledge(c, err)) goto fail;
      if (pthread_create(&s->loader, NULL, tt_service_loader, s) != 0) {
        tt_error_set(err, TT_ERR_IO, "cannot start a thread to read the schema");
        goto fail;
      }
      s->loader_started = true;
    } else {
      tt_service_read_schema(s, s->db);
      if (!s->schema) {
        *err = s->schema_err;
        goto fail;
      }
    }
  }
  if ((flags & TT_SERVICE_MODEL) && !tt_models_shared(s->models, err)) goto fail;
  s->startup_ms = tt_now_ms() - t0;
  return s;
fail:
  tt_service_free(s);
  return NULL;
}

void tt_service_free(tt_service *s) {
  if (!s) return;
  if (s->loader_started) pthread_join(s->loader, NULL);
  tt_schema_free(s->schema);
  tt_models_free(s->models);
  tt_db_close(s->db);
  tt_db_target_free(&s->target);
  pthread_mutex_destroy(&s->mu);
  pthread_cond_destroy(&s->cv);
  free(s);
}

const tt_config *tt_service_config(const tt_service *s) { return s->cfg; }
const tt_db_target *tt_service_target(const tt_service *s) { return &s->target; }
tt_db *tt_service_db(tt_service *s) { return s->db; }
const char *tt_service_warning(tt_service *s) { return tt_db_warning(s->db); }
tt_models *tt_service_models(tt_service *s) { return s->models; }
double tt_service_startup_ms(const tt_service *s) { return s->startup_ms; }

tt_db *tt_service_db_open(tt_service *s, const tt_db_opts *opts, tt_error *err) {
  tt_db_opts o = opts ? *opts : tt_config_db_opts(s->cfg);
  return tt_db_open_target(&s->target, &o, err);
}

const tt_schema *tt_service_schema(tt_service *s, tt_error *err) {
  pthread_mutex_lock(&s->mu);
  while (!s->schema_done && s->loader_started) pthread_cond_wait(&s->cv, &s->mu);
  const tt_schema *schema = s->schema;
  if (!schema) {
    if (s->schema_done) *err = s->schema_err;
    else tt_error_set(err, TT_ERR_CONFIG, "the schema was not read (the service was opened without it)");
  }
  pthread_mutex_unlock(&s->mu);
  return schema;
}

const tt_schema *tt_service_schema_ready(tt_service *s, double wait_ms) {
  struct timespec until = tt_realtime_in(wait_ms);
  pthread_mutex_lock(&s->mu);
  while (!s->schema_done && s->loader_started && wait_ms > 0)
    if (pthread_cond_timedwait(&s->cv, &s->mu, &until) != 0) break;
  const tt_schema *schema = s->schema;
  pthread_mutex_unlock(&s->mu);
  return schema;
}
