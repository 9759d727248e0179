/* setup.c — what the agent commands share: their options turned into the
 * run's configuration (the one place a flag becomes a setting), errors
 * printed with the exit code their kind has, and for ask and chat a
 * service and a session from the session layer, which opens everything. */
#include "cli/cli.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void tt_cli_agent_defaults(tt_cli_agent_opts *o) {
  memset(o, 0, sizeof *o);
  tt_config_init(&o->cfg);
  o->cfg.progress = true;
}

void tt_cli_agent_free(tt_cli_agent_opts *o) { tt_config_free(&o->cfg); }

int tt_cli_agent_option(int c, const char *arg, tt_cli_agent_opts *o, const char *cmd) {
  long n;
  switch (c) {
  case TT_OPT_BASE_URL: {
    tt_error why;
    bool ok = tt_llm_http_url_ok(arg, &why);
    int rc = ok ? 0
                : tt_usage_error(cmd, "--base-url '%s' is not a usable URL: %s; a base URL looks "
                                      "like http://127.0.0.1:8080/v1", arg, why.message);
    o->cfg.base_url = arg;
    return rc;
  }
  case TT_OPT_MODEL: o->cfg.model = arg; return 0;
  case TT_OPT_API_KEY_ENV: o->cfg.api_key_env = arg; return 0;
  case TT_OPT_STATE_DIR: o->cfg.state_dir = arg; return 0;
  case TT_OPT_THREAD:
    if (!*arg) return tt_usage_error(cmd, "--thread wants a name");
    o->thread = arg;
    return 0;
  case TT_OPT_LLM_TIMEOUT:
    if (!tt_parse_double(arg, 0.1, 86400, &o->cfg.llm_timeout_s))
      return tt_usage_error(cmd, "--llm-timeout wants seconds, not '%s'", arg);
    return 0;
  case TT_OPT_LLM_DEADLINE:
    if (!tt_parse_double(arg, 1, 86400, &o->cfg.llm_deadline_s))
      return tt_usage_error(cmd, "--llm-deadline wants seconds from 1 to 86400, not '%s'", arg);
    return 0;
  case TT_OPT_NO_STREAM: o->cfg.no_stream = true; return 0;
  case TT_OPT_MAX_TOKENS:
    if (!tt_parse_long(arg, 16, 1000000, &o->cfg.max_tokens))
      return tt_usage_error(cmd, "--max-tokens wants a number from 16 to 1000000, not '%s'", arg);
    return 0;
  case TT_OPT_TEMPERATURE:
    if (!tt_parse_double(arg, 0, 2, &o->cfg.temperature))
      return tt_usage_error(cmd, "--temperature wants a number from 0 to 2, not '%s'", arg);
    return 0;
  case TT_OPT_SEED:
    if (!tt_parse_long(arg, 0, 2147483647L, &o->cfg.seed))
      return tt_usage_error(cmd, "--seed wants a whole number, not '%s'", arg);
    o->cfg.has_seed = true;
    return 0;
  case TT_OPT_SQL_TIMEOUT:
    if (!tt_parse_double(arg, 0.001, 86400, &o->cfg.sql_timeout_s))
      return tt_usage_error(cmd, "--timeout wants seconds, not '%s'", arg);
    return 0;
  case TT_OPT_SCHEMA_BUDGET:
    if (!tt_parse_long(arg, 100, 1000000, &n))
      return tt_usage_error(cmd, "--schema-budget wants a number of tokens, not '%s'", arg);
    o->cfg.schema_budget = n;
    return 0;
  case TT_OPT_SELECTOR:
    if (strcmp(arg, "on") == 0) o->cfg.selector = TT_SELECTOR_ON;
    else if (strcmp(arg, "off") == 0) o->cfg.selector = TT_SELECTOR_OFF;
    else if (strcmp(arg, "auto") == 0) o->cfg.selector = TT_SELECTOR_AUTO;
    else return tt_usage_error(cmd, "--selector wants on, off or auto, not '%s'", arg);
    return 0;
  case TT_OPT_EMBEDDINGS:
    if (!tt_config_embeddings_mode(arg, &o->cfg.embeddings))
      return tt_usage_error(cmd, "--embeddings wants auto, on or off, not '%s'", arg);
    o->cfg.embeddings_given = true;
    return 0;
  case TT_OPT_EMBED_MODEL:
    if (!*arg) return tt_usage_error(cmd, "--embed-model wants a model name");
    o->cfg.embed_model = arg;
    return 0;
  case TT_OPT_IMMUTABLE: o->cfg.immutable = true; return 0;
  case TT_OPT_PRIVATE: o->cfg.private_mode = true; return 0;
  case TT_OPT_HEADER: o->cfg.csv_header = TT_CSV_HEADER_YES; return 0;
  case TT_OPT_NO_HEADER: o->cfg.csv_header = TT_CSV_HEADER_NO; return 0;
  case TT_OPT_CSV_TYPES: {
    int rc = tt_cli_csv_types_option(cmd, arg);
    if (!rc) o->cfg.csv_types = arg;
    return rc;
  }
  case TT_OPT_ENGINE: o->cfg.engine = arg; return 0;
  case TT_OPT_KNOWLEDGE: o->cfg.knowledge = arg; return 0;
  case TT_OPT_SCHEMAS: {
    int rc = tt_cli_schemas_option(cmd, arg);
    if (!rc) o->cfg.schemas = arg;
    return rc;
  }
  case TT_OPT_TRUST_FUNCTIONS: return tt_cli_trust_option(cmd, arg, &o->cfg);
  case TT_OPT_MODEL_PATH: o->cfg.model_path = arg; return 0;
  case TT_OPT_CTX:
    if (!tt_parse_long(arg, 512, 1048576, &o->cfg.ctx))
      return tt_usage_error(cmd, "--ctx wants a number of tokens from 512, not '%s'", arg);
    return 0;
  case TT_OPT_THREADS:
    if (!tt_parse_long(arg, 1, 1024, &o->cfg.threads))
      return tt_usage_error(cmd, "--threads wants a number from 1 to 1024, not '%s'", arg);
    return 0;
  case TT_OPT_SIZE: {
    tt_error err;
    if (!tt_cli_parse_size(arg, &o->cfg.chart_w, &o->cfg.chart_h, &err))
      return tt_usage_error(cmd, "%s", tt_error_text(&err));
    return 0;
  }
  case TT_OPT_CHART_FORMAT:
    if (strcmp(arg, "png") && strcmp(arg, "svg"))
      return tt_usage_error(cmd, "--chart-format wants png or svg, not '%s'", arg);
    o->cfg.chart_svg = strcmp(arg, "svg") == 0;
    return 0;
  case TT_OPT_NO_PREVIEW: o->no_preview = true; return 0;
  case TT_OPT_SHOW_THINKING: o->show_thinking = true; return 0;
  case TT_OPT_QUIET:
    o->quiet = true;
    o->cfg.progress = false;
    return 0;
  case TT_OPT_PROFILE:
    if (!tt_llm_profile_known(arg))
      return tt_usage_error(cmd, "--profile: there is no model profile '%s'; choose one of %s",
                            arg, tt_llm_profile_names());
    o->cfg.profile = arg;
    return 0;
  default: return -1;
  }
}

int tt_cli_error(const char *cmd, const tt_error *err) {
  if (err->kind == TT_ERR_CONFIG) return tt_usage_error(cmd, "%s", tt_error_text(err));
  return tt_fail(tt_exit_for(err->kind), "%s", tt_error_text(err));
}

int tt_cli_trust_option(const char *cmd, const char *arg, tt_config *cfg) {
  if (tt_config_trust_functions(cfg, arg)) return 0;
  return tt_usage_error(cmd, "--trust-functions wants a schema name (or names separated by "
                             "commas), spelled as in pg_namespace, not '%s'", arg);
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

int tt_cli_csv_types_option(const char *cmd, const char *arg) {
  tt_error err;
  if (tt_db_csv_types_check(arg, &err)) return 0;
  return tt_usage_error(cmd, "%s; %s", err.message, err.hint);
}

int tt_cli_env_open(tt_cli_env *e, const char *cmd, tt_cli_agent_opts *o) {
  memset(e, 0, sizeof *e);
  tt_error err;
  if (!tt_config_resolve(&o->cfg, &err)) return tt_cli_error(cmd, &err);
  e->svc = tt_service_open(&o->cfg, TT_SERVICE_SCHEMA | TT_SERVICE_MODEL | TT_SERVICE_HOUSEKEEPING,
                           &err);
  if (e->svc) e->session = tt_session_new(e->svc, NULL, &err);
  return e->session ? 0 : tt_cli_error(cmd, &err);
}

void tt_cli_env_close(tt_cli_env *e) {
  tt_session_free(e->session);
  tt_service_free(e->svc);
  memset(e, 0, sizeof *e);
}
