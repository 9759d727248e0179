/* service.c — what every front end needs before a question, set up once
 * from a configuration: the database target parsed, the database opened
 * read-only (a file that is not a database fails here, at the start), its
 * schema read with the knowledge file and the value index, the clean-up
 * of old traces and caches, and the model factory.
 *
 * The schema comes from the cache when it holds it (a warm start reads no
 * row); else it is read under the configured time limit (TABLETALK_SCHEMA_
 * SECONDS), bounded in rows so that it is the same on any machine. What the
 * limit left, or what changed in the data since the cache was written, is
 * read on a loader thread of its own while the front end works, and kept
 * in the cache; a refreshed schema replaces the service's for later
 * questions. A front end that must answer at once (an MCP server's
 * handshake) gets the cached schema at once and the rest from the loader. */
#define _GNU_SOURCE /* syscall(SYS_gettid) */
#include "session/session.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
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
  tt_schema **retired;  /* schemas a refreshed one replaced: questions that began
                         * on them may still read them, so they live as long */
  size_t nretired;
  pthread_t loader;
  bool loader_started;
  volatile sig_atomic_t stop; /* the service is going: the loader stops reading */
};

/* Traces and charts older than TABLETALK_KEEP (default 90 days) go, and
 * cache entries past TABLETALK_CACHE_KEEP and TABLETALK_CACHE_MAX, at
 * most once a day per state folder. */
static void tt_service_housekeeping(const tt_service *s) {
  bool bad, bad_cache;
  long long age = tt_config_keep_seconds(s->cfg, &bad);
  long long cache_age, cache_max;
  tt_config_cache_limits(s->cfg, &cache_age, &cache_max, &bad_cache);
  if (bad || bad_cache) return; /* `tabletalk gc` says why */
  const char *dir = tt_config_state_dir(s->cfg);
  if (!tt_store_gc_due(dir)) return;
  tt_gc_report r;
  if (age) tt_store_gc(dir, age, false, &r);
  tt_cache_gc_report cr;
  tt_schema_cache_gc(s->cfg->cache_dir, cache_age, cache_max, false, &cr);
}

/* How the schema is read: at the start (under the configured time limit
 * unless the whole schema is wanted), or again in the background (no
 * limit, reading what is pending or outdated, stopping when the service
 * goes). */
static tt_schema_load_opts tt_service_load_opts(tt_service *s, bool refresh) {
  const tt_config *c = s->cfg;
  bool bad; /* checked when the service opened */
  double limit = (s->flags & TT_SERVICE_WHOLE_SCHEMA) ? 0 : tt_config_schema_seconds(c, &bad);
  return (tt_schema_load_opts){
      .db_path = s->target.uri ? NULL : s->target.path, /* a server's URI has no file beside it */
      .knowledge = c->knowledge,
      .values = (s->flags & TT_SERVICE_NO_VALUES)     ? TT_SCHEMA_VALUES_NONE
                : (s->flags & TT_SERVICE_VALUES_BUILT) ? TT_SCHEMA_VALUES_BUILT
                                                       : TT_SCHEMA_VALUES_CACHED,
      .cache_dir = c->cache_dir,
      .progress = !refresh && c->progress && !(s->flags & TT_SERVICE_BACKGROUND) &&
                  isatty(STDERR_FILENO),
      .deadline_ms = refresh || limit <= 0 ? 0 : tt_now_ms() + limit * 1000.0,
      .refresh = refresh,
      .cancel = refresh ? &s->stop : NULL,
  };
}

/* Makes schema the service's (the one it replaces lives on, retired). */
static void tt_service_publish(tt_service *s, tt_schema *schema, const tt_error *err) {
  pthread_mutex_lock(&s->mu);
  if (schema && s->schema) {
    s->retired = tt_xrealloc(s->retired, (s->nretired + 1) * sizeof *s->retired);
    s->retired[s->nretired++] = s->schema;
  }
  if (schema) s->schema = schema;
  else if (!s->schema) s->schema_err = *err;
  s->schema_done = true;
  pthread_cond_broadcast(&s->cv);
  pthread_mutex_unlock(&s->mu);
}

/* Reads the schema on handle db as o says, warning on stderr of what it
 * left out; NULL with err. */
static tt_schema *tt_service_read_schema(tt_db *db, const tt_schema_load_opts *o, tt_error *err) {
  tt_schema *schema = tt_schema_load(db, o, err);
  if (schema && tt_schema_warning(schema) && !o->refresh && !o->cache_only)
    fprintf(stderr, "tabletalk: warning: %s\n", tt_schema_warning(schema));
  return schema;
}

/* The loader thread, on a handle of its own so the service's stays free:
 * the schema when the start could not take it from the cache, then, when
 * it is incomplete or outdated, the rest read in the background and the
 * cache completed (a refreshed schema replaces the service's; the service
 * going stops it, what it read kept in the cache). */
static void *tt_service_loader(void *arg) {
  tt_service *s = arg;
  tt_db_opts o = tt_config_db_opts(s->cfg);
  tt_error err;
  tt_db *db = tt_db_open_target(&s->target, &o, &err);
  if (!db) {
    tt_service_publish(s, NULL, &err);
    return NULL;
  }
  pthread_mutex_lock(&s->mu);
  bool have = s->schema != NULL;
  bool current = have && tt_schema_current(s->schema);
  pthread_mutex_unlock(&s->mu);
  if (!have) {
    tt_schema_load_opts so = tt_service_load_opts(s, false);
    so.cancel = &s->stop; /* a service closed at once does not wait for it */
    tt_schema *schema = tt_service_read_schema(db, &so, &err);
    tt_service_publish(s, schema, &err);
    current = schema && tt_schema_current(schema);
    have = schema != NULL;
  }
  if (have && !current && !s->stop) {
    /* what nobody waits for takes only the CPU the questions leave (Linux:
     * a thread's own nice value; where it cannot be set it runs as it is) */
    setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), 10);
    tt_schema_load_opts so = tt_service_load_opts(s, true);
    tt_schema *fresh = tt_service_read_schema(db, &so, &err);
    if (fresh && !s->stop) tt_service_publish(s, fresh, &err);
    else tt_schema_free(fresh); /* stopped half-way: what it read is in the cache */
  }
  tt_db_close(db);
  return NULL;
}

static bool tt_service_start_loader(tt_service *s, tt_error *err) {
  if (pthread_create(&s->loader, NULL, tt_service_loader, s) != 0) {
    tt_error_set(err, TT_ERR_IO, "cannot start a thread to read the schema");
    return false;
  }
  s->loader_started = true;
  return true;
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
  if (!tt_db_target_parse_engine(c->db, c->engine, &s->target, err)) goto fail;
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
  bool bad_limit;
  tt_config_schema_seconds(c, &bad_limit);
  if ((flags & TT_SERVICE_SCHEMA) && bad_limit) {
    tt_error_set(err, TT_ERR_CONFIG, "TABLETALK_SCHEMA_SECONDS='%s' is not a number of seconds",
                 tt_config_get_value(c, "TABLETALK_SCHEMA_SECONDS"));
    tt_error_hint(err, "write 3, 10 or 0 (no limit); %s sets it",
                  tt_config_origin(c->env, "TABLETALK_SCHEMA_SECONDS"));
    goto fail;
  }
  if (flags & TT_SERVICE_SCHEMA) {
    if (flags & TT_SERVICE_BACKGROUND) {
      if (!tt_service_check_knowledge(c, err)) goto fail;
      /* a warm start answers at once: the schema the cache holds, read
       * here (no row, no table list); else the loader reads it */
      tt_schema_load_opts so = tt_service_load_opts(s, false);
      so.cache_only = true;
      tt_error ignored;
      tt_schema *cached = tt_service_read_schema(s->db, &so, &ignored);
      if (cached) tt_service_publish(s, cached, NULL);
      if ((!cached || !tt_schema_current(cached)) && !tt_service_start_loader(s, err)) goto fail;
    } else {
      tt_schema_load_opts so = tt_service_load_opts(s, false);
      tt_schema *schema = tt_service_read_schema(s->db, &so, err);
      if (!schema) goto fail;
      tt_service_publish(s, schema, NULL);
      /* what the time limit left, or what changed since, is read in the
       * background while the command works (and stops when it ends) */
      if (!tt_schema_current(schema) && c->cache_dir && !tt_service_start_loader(s, err))
        goto fail;
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
  s->stop = 1; /* a background read stops within milliseconds, keeping what it read */
  if (s->loader_started) pthread_join(s->loader, NULL);
  tt_schema_free(s->schema);
  for (size_t i = 0; i < s->nretired; i++) tt_schema_free(s->retired[i]);
  free(s->retired);
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
