/* models.c — the model factory of the session layer: which model the
 * configuration picks (--model-path, --base-url, TABLETALK_MODEL_PATH, the
 * model `tabletalk pull` installed, TABLETALK_BASE_URL, in that order) and
 * why, the settings of each backend from flags and TABLETALK_* variables,
 * one shared model made on first use, and for each question either that
 * model or, when the backend answers calls in parallel, one of its own. */
#include "session/session.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

struct tt_models {
  const tt_config *cfg;
  pthread_mutex_t mu;   /* shared, busy */
  pthread_cond_t freed; /* the shared model was handed back */
  pthread_mutex_t make_mu; /* models are made one at a time (libraries load once) */
  tt_llm *shared;
  bool busy;            /* a question holds the shared model */
};

tt_models *tt_models_new(const tt_config *c) {
  tt_models *m = tt_xcalloc(1, sizeof *m);
  m->cfg = c;
  pthread_mutex_init(&m->mu, NULL);
  pthread_cond_init(&m->freed, NULL);
  pthread_mutex_init(&m->make_mu, NULL);
  return m;
}

void tt_models_free(tt_models *m) {
  if (!m) return;
  tt_llm_free(m->shared);
  pthread_mutex_destroy(&m->mu);
  pthread_cond_destroy(&m->freed);
  pthread_mutex_destroy(&m->make_mu);
  free(m);
}

/* ---- which model ------------------------------------------------------------------ */

void tt_models_choice(const tt_models *m, tt_model_choice *out) {
  const tt_config *c = m->cfg;
  memset(out, 0, sizeof *out);
  if (c->model_path) {
    out->path = tt_xstrdup(c->model_path);
    out->source = "--model-path";
    return;
  }
  if (c->base_url) {
    out->url = c->base_url;
    out->source = "--base-url";
    return;
  }
  const char *env_path = tt_config_get(c->env, "TABLETALK_MODEL_PATH");
  if (env_path) {
    out->path = tt_xstrdup(env_path);
    out->source = "TABLETALK_MODEL_PATH";
    return;
  }
  char *data = c->data_dir ? tt_xstrdup(c->data_dir) : tt_default_dir(c->env, "DATA");
  char *dir = tt_xasprintf("%s/models", data);
  out->path = tt_model_default_in(dir);
  free(dir);
  free(data);
  if (out->path) {
    out->source = "the installed default (tabletalk pull)";
    return;
  }
  out->url = tt_config_get(c->env, "TABLETALK_BASE_URL");
  if (out->url) out->source = "TABLETALK_BASE_URL";
}

void tt_model_choice_free(tt_model_choice *ch) {
  free(ch->path);
  memset(ch, 0, sizeof *ch);
}

/* ---- settings ----------------------------------------------------------------------- */

/* The profile asked for: --profile, then TABLETALK_PROFILE; NULL when the
 * model's own (detected) is to be used. */
static bool tt_models_profile(const tt_config *c, const char **out, tt_error *err) {
  *out = c->profile;
  if (*out) return true;
  const char *env = tt_config_get(c->env, "TABLETALK_PROFILE");
  if (!env) return true;
  if (!tt_llm_profile_known(env)) {
    tt_error_set(err, TT_ERR_CONFIG, "TABLETALK_PROFILE: there is no model profile '%s'; choose one of %s",
                 env, tt_llm_profile_names());
    return false;
  }
  *out = env;
  return true;
}

/* Seconds from the flag, else from variable name; false when the variable
 * holds no number of seconds. */
static bool tt_models_seconds(const tt_config *c, double flag, const char *name, double min,
                              double *out, tt_error *err) {
  *out = flag;
  const char *v = tt_config_get(c->env, name);
  if (flag > 0 || !v) return true;
  if (tt_parse_double(v, min, 86400, out)) return true;
  if (min < 1) tt_error_set(err, TT_ERR_CONFIG, "%s wants seconds, not '%s'", name, v);
  else tt_error_set(err, TT_ERR_CONFIG, "%s wants seconds from %g to 86400, not '%s'", name, min, v);
  return false;
}

bool tt_models_http_opts(const tt_models *m, const char *url, tt_llm_http_opts *out,
                         tt_error *err) {
  const tt_config *c = m->cfg;
  tt_llm_http_opts h = tt_llm_http_default_opts();
  h.base_url = url;
  if (!tt_models_profile(c, &h.profile, err)) return false;
  h.model = c->model ? c->model : tt_config_get(c->env, "TABLETALK_MODEL");
  if (!h.model) h.model = "default";
  h.embed_model = tt_config_embed_model(c);
  const char *key_var = c->api_key_env ? c->api_key_env : "TABLETALK_API_KEY";
  h.api_key = tt_config_get(c->env, key_var);
  if (c->api_key_env && !h.api_key) {
    tt_error_set(err, TT_ERR_CONFIG,
                 "--api-key-env %s: that variable is not set (in the environment or ./.env)", key_var);
    return false;
  }
  double timeout, deadline;
  if (!tt_models_seconds(c, c->llm_timeout_s, "TABLETALK_LLM_TIMEOUT", 0.1, &timeout, err) ||
      !tt_models_seconds(c, c->llm_deadline_s, "TABLETALK_LLM_DEADLINE", 1, &deadline, err))
    return false;
  if (timeout > 0) h.read_timeout_s = timeout;
  if (deadline > 0) h.deadline_s = deadline;
  h.stream = !c->no_stream;
  h.max_tokens = c->max_tokens;
  h.context = c->ctx; /* the server's context, when the user tells it */
  h.temperature = c->temperature;
  h.seed = c->seed;
  h.has_seed = c->has_seed;
  *out = h;
  return true;
}

/* The endpoint TABLETALK_BASE_URL names must be usable (--base-url is
 * checked when parsed). */
static bool tt_models_url_ok(const tt_models *m, const tt_model_choice *ch, tt_error *err) {
  if (!ch->url || ch->url == m->cfg->base_url) return true;
  tt_error why;
  bool ok = tt_llm_http_url_ok(ch->url, &why);
  if (!ok) {
    tt_error_set(err, TT_ERR_CONFIG, "TABLETALK_BASE_URL '%s' (from %s) is not a usable URL: %s",
                 ch->url, tt_config_origin(m->cfg->env, "TABLETALK_BASE_URL"), why.message);
    tt_error_hint(err, "set it to an endpoint such as http://127.0.0.1:8080/v1, or give --base-url");
  }
  return ok;
}

static tt_llm *tt_models_llama(const tt_models *m, const char *given, tt_error *err) {
  const tt_config *c = m->cfg;
  const char *profile;
  if (!tt_models_profile(c, &profile, err)) return NULL;
  /* a split model opens by its first part's own name (not default.gguf) */
  char *path = tt_model_load_path(given);
  if (!tt_model_parts_check(path, err)) {
    free(path);
    return NULL;
  }
  tt_llm_llama_opts lo = tt_llm_llama_default_opts();
  lo.model_path = path;
  lo.profile = profile;
  if (c->ctx) lo.n_ctx = (int)c->ctx;
  long n;
  const char *threads = tt_config_get(c->env, "TABLETALK_THREADS");
  if (c->threads) lo.n_threads = (int)c->threads;
  else if (threads && tt_parse_long(threads, 1, 1024, &n)) lo.n_threads = (int)n;
  lo.temperature = c->temperature;
  if (c->has_seed) lo.seed = c->seed;
  lo.max_tokens = c->max_tokens;
  lo.reuse = !c->llama_no_reuse;
  lo.cold = c->llama_cold;
  char *cache = c->cache_dir ? tt_xstrdup(c->cache_dir) : tt_default_dir(c->env, "CACHE");
  lo.cache_dir = lo.reuse && !c->llama_no_prefix_file ? cache : NULL;
  lo.show_progress = c->progress && isatty(STDERR_FILENO);
  tt_llm *llm = tt_llm_llama_new(&lo, err);
  free(cache);
  free(path);
  return llm;
}

bool tt_models_check(const tt_models *m, tt_error *err) {
  tt_model_choice ch;
  tt_models_choice(m, &ch);
  bool ok = tt_models_url_ok(m, &ch, err);
  tt_model_choice_free(&ch);
  return ok;
}

tt_llm *tt_models_make(tt_models *m, tt_error *err) {
  tt_model_choice ch;
  tt_models_choice(m, &ch);
  tt_llm *llm = NULL;
  if (!tt_models_url_ok(m, &ch, err)) {
    /* err says which setting is wrong */
  } else if (ch.path) {
    llm = tt_models_llama(m, ch.path, err);
  } else if (!ch.url) {
    tt_error_set(err, TT_ERR_UNAVAILABLE,
                 "no model available: download one with `tabletalk pull` (a 7B trained for tool "
                 "calls; `tabletalk pull --list` shows smaller ones), or pass --model-path "
                 "FILE.gguf, or point --base-url / TABLETALK_BASE_URL at an OpenAI-compatible "
                 "server such as http://127.0.0.1:8080/v1");
  } else {
    tt_llm_http_opts h;
    if (tt_models_http_opts(m, ch.url, &h, err)) llm = tt_llm_http_new(&h, err);
  }
  tt_model_choice_free(&ch);
  return llm;
}

/* ---- sharing ----------------------------------------------------------------------- */

/* Makes the shared model unless it exists; call with m->mu held. */
static tt_llm *tt_models_shared_locked(tt_models *m, tt_error *err) {
  if (m->shared) return m->shared;
  pthread_mutex_lock(&m->make_mu);
  m->shared = tt_models_make(m, err);
  pthread_mutex_unlock(&m->make_mu);
  return m->shared;
}

tt_llm *tt_models_shared(tt_models *m, tt_error *err) {
  pthread_mutex_lock(&m->mu);
  tt_llm *llm = tt_models_shared_locked(m, err);
  pthread_mutex_unlock(&m->mu);
  return llm;
}

/* Waits for the shared model for up to 50 ms; call with m->mu held. */
static void tt_models_wait_freed(tt_models *m) {
  struct timespec until = tt_realtime_in(50);
  pthread_cond_timedwait(&m->freed, &m->mu, &until);
}

tt_llm *tt_models_acquire(tt_models *m, volatile sig_atomic_t *cancel,
                          void (*on_wait)(void *ud), void *ud, tt_error *err) {
  pthread_mutex_lock(&m->mu);
  tt_llm *llm = tt_models_shared_locked(m, err);
  bool told = false;
  while (llm && m->busy) {
    if (tt_llm_parallel(llm)) { /* a model of its own, made outside the lock */
      pthread_mutex_unlock(&m->mu);
      pthread_mutex_lock(&m->make_mu);
      tt_llm *own = tt_models_make(m, err);
      pthread_mutex_unlock(&m->make_mu);
      return own;
    }
    if (cancel && *cancel) {
      tt_error_set(err, TT_ERR_CANCELLED, "cancelled while waiting for the model");
      llm = NULL;
      break;
    }
    if (!told && on_wait) {
      told = true;
      pthread_mutex_unlock(&m->mu);
      on_wait(ud);
      pthread_mutex_lock(&m->mu);
      continue;
    }
    /* the cancel flag is set by a signal or another thread without a
     * signal on the condition: look again every 50 ms */
    tt_models_wait_freed(m);
  }
  if (llm) m->busy = true;
  pthread_mutex_unlock(&m->mu);
  return llm;
}

void tt_models_release(tt_models *m, tt_llm *llm) {
  if (!llm) return;
  pthread_mutex_lock(&m->mu);
  bool shared = llm == m->shared;
  if (shared) {
    m->busy = false;
    pthread_cond_broadcast(&m->freed);
  }
  pthread_mutex_unlock(&m->mu);
  if (!shared) tt_llm_free(llm);
}
