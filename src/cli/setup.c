/* setup.c — what ask and chat share before the first question: their
 * options, configuration from flags, TABLETALK_* variables and ./.env (in
 * that order), opening the database read-only, reading its schema, and
 * connecting the model and the session (threads and traces). */
#include "cli/cli.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void tt_cli_agent_defaults(tt_cli_agent_opts *o) {
  memset(o, 0, sizeof *o);
  o->max_tokens = 2048;
  o->sql_timeout_s = 5;
  o->schema_budget = 2000;
  o->temperature = 0;
}

int tt_cli_agent_option(int c, const char *arg, tt_cli_agent_opts *o, const char *cmd) {
  long n;
  switch (c) {
  case TT_OPT_BASE_URL: {
    tt_buf why = TT_BUF_INIT;
    bool ok = tt_llm_http_url_ok(arg, &why);
    int rc = ok ? 0
                : tt_usage_error(cmd, "--base-url '%s' is not a usable URL: %s; a base URL looks "
                                      "like http://127.0.0.1:8080/v1", arg, tt_buf_cstr(&why));
    tt_buf_free(&why);
    o->base_url = arg;
    return rc;
  }
  case TT_OPT_MODEL: o->model = arg; return 0;
  case TT_OPT_API_KEY_ENV: o->api_key_env = arg; return 0;
  case TT_OPT_STATE_DIR: o->state_dir = arg; return 0;
  case TT_OPT_THREAD:
    if (!*arg) return tt_usage_error(cmd, "--thread wants a name");
    o->thread = arg;
    return 0;
  case TT_OPT_LLM_TIMEOUT:
    if (!tt_parse_double(arg, 0.1, 86400, &o->llm_timeout_s))
      return tt_usage_error(cmd, "--llm-timeout wants seconds, not '%s'", arg);
    return 0;
  case TT_OPT_LLM_DEADLINE:
    if (!tt_parse_double(arg, 1, 86400, &o->llm_deadline_s))
      return tt_usage_error(cmd, "--llm-deadline wants seconds from 1 to 86400, not '%s'", arg);
    return 0;
  case TT_OPT_NO_STREAM: o->no_stream = true; return 0;
  case TT_OPT_MAX_TOKENS:
    if (!tt_parse_long(arg, 16, 1000000, &o->max_tokens))
      return tt_usage_error(cmd, "--max-tokens wants a number from 16 to 1000000, not '%s'", arg);
    return 0;
  case TT_OPT_TEMPERATURE:
    if (!tt_parse_double(arg, 0, 2, &o->temperature))
      return tt_usage_error(cmd, "--temperature wants a number from 0 to 2, not '%s'", arg);
    return 0;
  case TT_OPT_SEED:
    if (!tt_parse_long(arg, 0, 2147483647L, &o->seed))
      return tt_usage_error(cmd, "--seed wants a whole number, not '%s'", arg);
    o->has_seed = true;
    return 0;
  case TT_OPT_SQL_TIMEOUT:
    if (!tt_parse_double(arg, 0.001, 86400, &o->sql_timeout_s))
      return tt_usage_error(cmd, "--timeout wants seconds, not '%s'", arg);
    return 0;
  case TT_OPT_SCHEMA_BUDGET:
    if (!tt_parse_long(arg, 100, 1000000, &n))
      return tt_usage_error(cmd, "--schema-budget wants a number of tokens, not '%s'", arg);
    o->schema_budget = n;
    return 0;
  case TT_OPT_IMMUTABLE: o->immutable = true; return 0;
  case TT_OPT_HEADER: o->csv_header = TT_CSV_HEADER_YES; return 0;
  case TT_OPT_NO_HEADER: o->csv_header = TT_CSV_HEADER_NO; return 0;
  case TT_OPT_KNOWLEDGE: o->knowledge = arg; return 0;
  case TT_OPT_SCHEMAS: {
    int rc = tt_cli_schemas_option(cmd, arg);
    if (!rc) o->schemas = arg;
    return rc;
  }
  case TT_OPT_MODEL_PATH: o->model_path = arg; return 0;
  case TT_OPT_CTX:
    if (!tt_parse_long(arg, 512, 1048576, &o->ctx))
      return tt_usage_error(cmd, "--ctx wants a number of tokens from 512, not '%s'", arg);
    return 0;
  case TT_OPT_THREADS:
    if (!tt_parse_long(arg, 1, 1024, &o->threads))
      return tt_usage_error(cmd, "--threads wants a number from 1 to 1024, not '%s'", arg);
    return 0;
  case TT_OPT_SIZE: {
    tt_buf err = TT_BUF_INIT;
    bool ok = tt_cli_parse_size(arg, &o->chart_w, &o->chart_h, &err);
    int rc = ok ? 0 : tt_usage_error(cmd, "%s", tt_buf_cstr(&err));
    tt_buf_free(&err);
    return rc;
  }
  case TT_OPT_CHART_FORMAT:
    if (strcmp(arg, "png") && strcmp(arg, "svg"))
      return tt_usage_error(cmd, "--chart-format wants png or svg, not '%s'", arg);
    o->chart_svg = strcmp(arg, "svg") == 0;
    return 0;
  case TT_OPT_NO_PREVIEW: o->no_preview = true; return 0;
  case TT_OPT_SHOW_THINKING: o->show_thinking = true; return 0;
  case TT_OPT_QUIET: o->quiet = true; return 0;
  case TT_OPT_PROFILE:
    if (!tt_llm_profile_known(arg))
      return tt_usage_error(cmd, "--profile: there is no model profile '%s'; choose one of %s",
                            arg, tt_llm_profile_names());
    o->profile = arg;
    return 0;
  default: return -1;
  }
}

/* The model file the defaults point at: <data>/models/default.gguf (what
 * `tabletalk pull` sets), else the only model in that folder (a model split
 * into parts counts once, by its first part). */
char *tt_cli_default_model(const tt_dotenv *d) {
  char *dir = tt_default_dir(d, "DATA");
  char *models = tt_xasprintf("%s/models", dir);
  free(dir);
  char *path = tt_xasprintf("%s/default.gguf", models);
  if (!tt_file_exists(path)) {
    free(path);
    path = NULL;
    size_t n = 0, found = 0;
    char **names = tt_list_files(models, ".gguf", &n);
    const char *only = NULL;
    for (size_t i = 0; i < n; i++) {
      int no = 0;
      if (tt_gguf_split_count(names[i], &no) > 1 && no != 1) continue;
      only = names[i];
      found++;
    }
    if (found == 1) path = tt_xasprintf("%s/%s", models, only);
    tt_strv_free(names, n);
  }
  free(models);
  return path;
}

/* Which backend answers: --model-path, then --base-url, then
 * TABLETALK_MODEL_PATH, then the installed default model, then
 * TABLETALK_BASE_URL (environment or ./.env). NULL: HTTP with base_url.
 * source (may be NULL) names where the choice came from. */
static char *tt_cli_pick_model(const tt_dotenv *d, const tt_cli_agent_opts *o,
                               const char **base_url, const char **source) {
  const char *from_unused;
  if (!source) source = &from_unused;
  *base_url = NULL;
  *source = NULL;
  if (o->model_path) {
    *source = "--model-path";
    return tt_xstrdup(o->model_path);
  }
  if (o->base_url) {
    *base_url = o->base_url;
    *source = "--base-url";
    return NULL;
  }
  const char *env_path = tt_config_get(d, "TABLETALK_MODEL_PATH");
  if (env_path) {
    *source = "TABLETALK_MODEL_PATH";
    return tt_xstrdup(env_path);
  }
  char *def = tt_cli_default_model(d);
  if (def) {
    *source = "the installed default (tabletalk pull)";
    return def;
  }
  *base_url = tt_config_get(d, "TABLETALK_BASE_URL");
  if (*base_url) *source = "TABLETALK_BASE_URL";
  return NULL;
}

char *tt_cli_describe_model(const tt_dotenv *d, const tt_cli_agent_opts *o) {
  const char *url, *source;
  char *path = tt_cli_pick_model(d, o, &url, &source);
  char *desc = path  ? tt_xasprintf("%s\t%s", path, source)
               : url ? tt_xasprintf("%s\t%s", url, source)
                     : NULL;
  free(path);
  return desc;
}

int tt_cli_check_base_url(const tt_dotenv *d, const tt_cli_agent_opts *o) {
  const char *url;
  char *model = tt_cli_pick_model(d, o, &url, NULL);
  free(model);
  if (!url || url == o->base_url) return 0; /* the flag was checked when parsed */
  tt_buf why = TT_BUF_INIT;
  int rc = 0;
  if (!tt_llm_http_url_ok(url, &why)) {
    rc = tt_fail(TT_EXIT_USAGE, "TABLETALK_BASE_URL '%s' (from %s) is not a usable URL: %s; set it to "
                                "an endpoint such as http://127.0.0.1:8080/v1, or give --base-url",
                 url, tt_config_origin(d, "TABLETALK_BASE_URL"), tt_buf_cstr(&why));
  }
  tt_buf_free(&why);
  return rc;
}

/* The profile asked for: --profile, then TABLETALK_PROFILE; NULL when the
 * model's own (detected) is to be used. *bad when the variable names none. */
static const char *tt_cli_profile(const tt_dotenv *d, const tt_cli_agent_opts *o, tt_buf *err,
                                  bool *bad) {
  *bad = false;
  if (o->profile) return o->profile;
  const char *env = tt_config_get(d, "TABLETALK_PROFILE");
  if (!env || !*env) return NULL;
  if (!tt_llm_profile_known(env)) {
    tt_buf_printf(err, "TABLETALK_PROFILE: there is no model profile '%s'; choose one of %s", env,
                  tt_llm_profile_names());
    *bad = true;
    return NULL;
  }
  return env;
}

static tt_llm *tt_cli_llama(const tt_dotenv *d, const tt_cli_agent_opts *o, const char *given,
                            tt_buf *errbuf) {
  bool bad;
  const char *profile = tt_cli_profile(d, o, errbuf, &bad);
  if (bad) return NULL;
  /* a split model opens by its first part's own name (not default.gguf) */
  char *path = tt_model_load_path(given);
  if (!tt_model_parts_check(path, errbuf)) {
    free(path);
    return NULL;
  }
  tt_llm_llama_opts lo = tt_llm_llama_default_opts();
  lo.model_path = path;
  lo.profile = profile;
  if (o->ctx) lo.n_ctx = (int)o->ctx;
  const char *threads = tt_config_get(d, "TABLETALK_THREADS");
  long n;
  if (o->threads) lo.n_threads = (int)o->threads;
  else if (threads && tt_parse_long(threads, 1, 1024, &n)) lo.n_threads = (int)n;
  lo.temperature = o->temperature;
  if (o->has_seed) lo.seed = o->seed;
  lo.max_tokens = o->max_tokens;
  char *cache = tt_default_dir(d, "CACHE");
  lo.cache_dir = cache;
  lo.show_progress = !o->quiet && isatty(STDERR_FILENO);
  tt_error err;
  tt_llm *llm = tt_llm_llama_new(&lo, &err);
  free(cache);
  free(path);
  if (!llm) tt_buf_puts(errbuf, err.message);
  return llm;
}

bool tt_cli_http_opts(const tt_dotenv *d, const tt_cli_agent_opts *o, const char *base_url,
                      tt_llm_http_opts *out, tt_buf *err) {
  tt_llm_http_opts h = tt_llm_http_default_opts();
  h.base_url = base_url;
  bool bad;
  h.profile = tt_cli_profile(d, o, err, &bad);
  if (bad) return false;
  h.model = o->model ? o->model : tt_config_get(d, "TABLETALK_MODEL");
  if (!h.model) h.model = "default";
  const char *key_var = o->api_key_env ? o->api_key_env : "TABLETALK_API_KEY";
  h.api_key = tt_config_get(d, key_var);
  if (o->api_key_env && !h.api_key) {
    tt_buf_printf(err, "--api-key-env %s: that variable is not set (in the environment or ./.env)",
                  key_var);
    return false;
  }
  double timeout = o->llm_timeout_s;
  const char *env_timeout = tt_config_get(d, "TABLETALK_LLM_TIMEOUT");
  if (timeout <= 0 && env_timeout && !tt_parse_double(env_timeout, 0.1, 86400, &timeout)) {
    tt_buf_printf(err, "TABLETALK_LLM_TIMEOUT wants seconds, not '%s'", env_timeout);
    return false;
  }
  if (timeout > 0) h.read_timeout_s = timeout;
  double deadline = o->llm_deadline_s;
  const char *env_deadline = tt_config_get(d, "TABLETALK_LLM_DEADLINE");
  if (deadline <= 0 && env_deadline && !tt_parse_double(env_deadline, 1, 86400, &deadline)) {
    tt_buf_printf(err, "TABLETALK_LLM_DEADLINE wants seconds from 1 to 86400, not '%s'", env_deadline);
    return false;
  }
  if (deadline > 0) h.deadline_s = deadline;
  h.stream = !o->no_stream;
  h.max_tokens = o->max_tokens;
  h.context = o->ctx; /* the server's context, when the user tells it */
  h.temperature = o->temperature;
  h.seed = o->seed;
  h.has_seed = o->has_seed;
  *out = h;
  return true;
}

tt_llm *tt_cli_make_llm(const tt_dotenv *d, const tt_cli_agent_opts *o, tt_buf *err) {
  const char *base_url;
  char *model_path = tt_cli_pick_model(d, o, &base_url, NULL);
  if (model_path) {
    tt_llm *llm = tt_cli_llama(d, o, model_path, err);
    free(model_path);
    return llm;
  }
  if (!base_url) {
    tt_buf_puts(err,
                "no model available: download one with `tabletalk pull` (a 7B trained for tool calls; "
                "`tabletalk pull --list` shows smaller ones), or pass --model-path FILE.gguf, or "
                "point --base-url / TABLETALK_BASE_URL at an OpenAI-compatible server such as "
                "http://127.0.0.1:8080/v1");
    return NULL;
  }
  tt_llm_http_opts h;
  if (!tt_cli_http_opts(d, o, base_url, &h, err)) return NULL;
  tt_error lerr;
  tt_llm *llm = tt_llm_http_new(&h, &lerr);
  if (!llm) tt_buf_puts(err, lerr.message);
  return llm;
}

int tt_cli_schema_error(const tt_error *err) {
  return tt_fail(tt_exit_for(err->kind), "%s", tt_error_text(err));
}

int tt_cli_schemas_option(const char *cmd, const char *arg) {
  for (const char *p = arg;; p++) { /* every entry a name, or '!' and a name */
    size_t n = strcspn(p, ",");
    if (n == 0 || (n == 1 && p[0] == '!'))
      return tt_usage_error(cmd, "--schemas wants schema names separated by commas, each "
                                 "possibly after '!' to leave it out (sales,hr or '!audit'), "
                                 "not '%s'", arg);
    p += n;
    if (!*p) return 0;
  }
}

int tt_cli_schemas_apply(const char *cmd, const char *db_path, const char *schemas) {
  if (schemas && db_path && !tt_db_path_is_uri(db_path))
    return tt_usage_error(cmd, "--schemas applies to PostgreSQL (a postgres:// URI or "
                               "--db-url); a SQLite or CSV database has no schemas to choose");
  return 0;
}

int tt_cli_env_open(tt_cli_env *e, const char *db_path, const tt_cli_agent_opts *o) {
  double t0 = tt_now_ms();
  memset(e, 0, sizeof *e);
  e->dotenv = tt_config_load(".env");
  int bad = tt_cli_check_base_url(e->dotenv, o);
  if (bad) return bad;
  const char *url;
  char *model = tt_cli_pick_model(e->dotenv, o, &url, NULL);
  if (!model && url) tt_llm_http_preload(); /* overlaps opening the database */
  free(model);
  e->state_dir = o->state_dir ? tt_xstrdup(o->state_dir) : tt_default_dir(e->dotenv, "STATE");
  tt_cli_auto_gc(e->dotenv, e->state_dir); /* traces and charts past TABLETALK_KEEP */
  tt_db_opts dbo = tt_db_default_opts();
  dbo.immutable = o->immutable;
  dbo.csv_header = o->csv_header;
  dbo.schemas = o->schemas;
  tt_error derr;
  e->db = tt_db_open(db_path, &dbo, &derr);
  if (!e->db) {
    tt_fail(tt_exit_for(derr.kind), "%s", derr.message);
    return tt_exit_for(derr.kind);
  }
  char *real = realpath(db_path, NULL);
  /* a server's URI is kept without its password (traces and sessions show it) */
  e->db_path = real ? real : tt_db_path_is_uri(db_path) ? tt_pg_redact_uri(db_path)
                                                        : tt_xstrdup(db_path);
  /* the value index links names in questions to columns; built once per
   * database file and kept in the cache directory */
  char *cache = tt_default_dir(e->dotenv, "CACHE");
  tt_schema_load_opts so = {.db_path = db_path, .knowledge = o->knowledge,
                            .values = TT_SCHEMA_VALUES_CACHED, .cache_dir = cache,
                            .progress = !o->quiet && isatty(STDERR_FILENO)};
  tt_error serr;
  e->schema = tt_schema_load(e->db, &so, &serr);
  free(cache);
  if (!e->schema) return tt_cli_schema_error(&serr);
  if (tt_schema_warning(e->schema)) fprintf(stderr, "tabletalk: warning: %s\n", tt_schema_warning(e->schema));
  tt_buf lerr = TT_BUF_INIT;
  e->llm = tt_cli_make_llm(e->dotenv, o, &lerr);
  if (!e->llm) {
    tt_fail(TT_EXIT_FAIL, "%s", tt_buf_cstr(&lerr));
    tt_buf_free(&lerr);
    return TT_EXIT_FAIL;
  }
  tt_agent_opts ao = tt_agent_default_opts();
  ao.sql.timeout_s = o->sql_timeout_s;
  ao.sql.immutable = o->immutable;
  ao.sql.csv_header = o->csv_header;
  ao.schema_budget = (size_t)o->schema_budget;
  tt_buf err = TT_BUF_INIT;
  e->session = tt_session_new(e->state_dir, e->db_path, e->db, e->schema, e->llm, &ao, &err);
  if (!e->session) {
    tt_fail(TT_EXIT_FAIL, "%s (set --state-dir or TABLETALK_STATE_DIR to a writable folder)",
            tt_buf_cstr(&err));
    tt_buf_free(&err);
    return TT_EXIT_FAIL;
  }
  tt_chart_files cf = {.svg = o->chart_svg, .width = o->chart_w, .height = o->chart_h,
                       .out = o->chart_out};
  tt_session_set_chart_files(e->session, &cf);
  tt_session_note_startup(e->session, tt_now_ms() - t0);
  return 0;
}

void tt_cli_env_close(tt_cli_env *e) {
  tt_session_free(e->session);
  tt_llm_free(e->llm);
  tt_schema_free(e->schema);
  tt_db_close(e->db);
  tt_dotenv_free(e->dotenv);
  free(e->state_dir);
  free(e->db_path);
  memset(e, 0, sizeof *e);
}
