/* config.c — one description of a run (tt_config), filled once: the front
 * end sets what its flags say, then tt_config_resolve fills the rest from
 * TABLETALK_* in the environment, ./.env and the config file, in that
 * order, and checks every value it takes from there. The database and
 * agent options every query and question get are derived here, once. */
#include "session/session.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

void tt_config_init(tt_config *c) {
  memset(c, 0, sizeof *c);
  c->sql_timeout_s = 5;
  c->schema_budget = 2000;
  c->max_tokens = 2048;
  c->env = tt_config_load(".env");
}

void tt_config_free(tt_config *c) {
  if (!c) return;
  tt_dotenv_free(c->env);
  free(c->owned_state_dir);
  free(c->cache_dir);
  free(c->data_dir);
  free(c->owned_trust);
  memset(c, 0, sizeof *c);
}

bool tt_config_trust_functions(tt_config *c, const char *list) {
  if (!list || !*list) return false;
  for (const char *p = list;; p++) { /* no empty name: "a,,b", ",a", "a," */
    size_t n = strcspn(p, ",");
    if (n == 0) return false;
    p += n;
    if (!*p) break;
  }
  char *joined = c->owned_trust ? tt_xasprintf("%s,%s", c->owned_trust, list) : tt_xstrdup(list);
  free(c->owned_trust);
  c->owned_trust = joined;
  c->trust_functions = joined;
  return true;
}

const char *tt_config_get_value(const tt_config *c, const char *name) {
  return tt_config_get(c->env, name);
}

bool tt_config_resolve(tt_config *c, tt_error *err) {
  tt_error_clear(err);
  if (!c->env) c->env = tt_config_load(".env");
  if (!c->state_dir) {
    free(c->owned_state_dir);
    c->owned_state_dir = tt_default_dir(c->env, "STATE");
  }
  free(c->cache_dir);
  c->cache_dir = tt_default_dir(c->env, "CACHE");
  free(c->data_dir);
  c->data_dir = tt_default_dir(c->env, "DATA");
  const char *priv = tt_config_get(c->env, "TABLETALK_PRIVATE");
  if (priv && !c->private_mode) {
    if (!strcmp(priv, "1") || !strcasecmp(priv, "true") || !strcasecmp(priv, "yes") ||
        !strcasecmp(priv, "on")) {
      c->private_mode = true;
    } else if (strcmp(priv, "0") && strcasecmp(priv, "false") && strcasecmp(priv, "no") &&
               strcasecmp(priv, "off")) {
      tt_error_set(err, TT_ERR_CONFIG, "TABLETALK_PRIVATE wants 1 or 0 (true/false), not '%s'",
                   priv);
      return false;
    }
  }
  const char *emb = tt_config_get(c->env, "TABLETALK_EMBEDDINGS");
  if (emb && !c->embeddings_given && !tt_config_embeddings_mode(emb, &c->embeddings)) {
    tt_error_set(err, TT_ERR_CONFIG, "TABLETALK_EMBEDDINGS wants auto, on or off, not '%s'", emb);
    return false;
  }
  if (!c->trust_functions) {
    const char *trust = tt_config_get(c->env, "TABLETALK_TRUST_FUNCTIONS");
    if (trust && !tt_config_trust_functions(c, trust)) {
      tt_error_set(err, TT_ERR_CONFIG,
                   "TABLETALK_TRUST_FUNCTIONS wants schema names separated by commas, not '%s'",
                   trust);
      return false;
    }
  }
  return true;
}

const char *tt_config_state_dir(const tt_config *c) {
  return c->state_dir ? c->state_dir : c->owned_state_dir;
}

tt_db_opts tt_config_db_opts(const tt_config *c) {
  tt_db_opts o = tt_db_default_opts();
  o.timeout_s = c->sql_timeout_s;
  o.immutable = c->immutable;
  o.csv_header = c->csv_header;
  o.csv_types = c->csv_types;
  o.schemas = c->schemas;
  o.trust_functions = c->trust_functions;
  return o;
}

bool tt_config_embeddings_mode(const char *word, int *mode) {
  if (strcasecmp(word, "auto") == 0) *mode = TT_EMBED_AUTO;
  else if (strcasecmp(word, "on") == 0) *mode = TT_EMBED_ON;
  else if (strcasecmp(word, "off") == 0) *mode = TT_EMBED_OFF;
  else return false;
  return true;
}

const char *tt_config_embed_model(const tt_config *c) {
  return c->embed_model ? c->embed_model : tt_config_get(c->env, "TABLETALK_EMBED_MODEL");
}

tt_agent_opts tt_config_agent_opts(const tt_config *c) {
  tt_agent_opts o = tt_agent_default_opts();
  o.sql = tt_config_db_opts(c);
  o.schema_budget = (size_t)c->schema_budget;
  o.selector = (tt_selector_mode)c->selector;
  o.embeddings = (tt_embed_mode)c->embeddings;
  o.embed_model_named = tt_config_embed_model(c) != NULL;
  return o;
}

long long tt_config_keep_seconds(const tt_config *c, bool *bad) {
  const char *keep = tt_config_get(c->env, "TABLETALK_KEEP");
  long long age = TT_KEEP_DEFAULT_DAYS * 86400LL;
  *bad = keep && !tt_parse_age(keep, &age);
  if (*bad) age = TT_KEEP_DEFAULT_DAYS * 86400LL;
  return age;
}

/* A size: a number of bytes, or one with K, M or G (powers of 1024). */
static bool tt_parse_size(const char *text, long long *bytes) {
  char *end;
  errno = 0;
  long long n = strtoll(text, &end, 10);
  if (errno || end == text || n < 0) return false;
  long long unit = 1;
  if (*end == 'K' || *end == 'k') unit = 1024LL, end++;
  else if (*end == 'M' || *end == 'm') unit = 1024LL * 1024, end++;
  else if (*end == 'G' || *end == 'g') unit = 1024LL * 1024 * 1024, end++;
  if (*end || n > LLONG_MAX / unit) return false;
  *bytes = n * unit;
  return true;
}

void tt_config_cache_limits(const tt_config *c, long long *max_age_s, long long *max_bytes,
                            bool *bad) {
  const char *keep = tt_config_get(c->env, "TABLETALK_CACHE_KEEP");
  const char *max = tt_config_get(c->env, "TABLETALK_CACHE_MAX");
  *max_age_s = TT_CACHE_KEEP_DEFAULT_DAYS * 86400LL;
  *max_bytes = TT_CACHE_MAX_DEFAULT;
  *bad = false;
  if (keep && !tt_parse_age(keep, max_age_s)) {
    *bad = true;
    *max_age_s = TT_CACHE_KEEP_DEFAULT_DAYS * 86400LL;
  }
  if (max && !tt_parse_size(max, max_bytes)) {
    *bad = true;
    *max_bytes = TT_CACHE_MAX_DEFAULT;
  }
}

double tt_config_schema_seconds(const tt_config *c, bool *bad) {
  const char *text = tt_config_get(c->env, "TABLETALK_SCHEMA_SECONDS");
  double limit = TT_CATALOG_SECONDS;
  *bad = text && !tt_parse_double(text, 0, 86400, &limit);
  return *bad ? TT_CATALOG_SECONDS : limit;
}
