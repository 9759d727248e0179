/* probe.c — what an OpenAI-compatible endpoint is, for `tabletalk doctor`:
 * which server answers (llama-server, vLLM, Ollama, LM Studio, OpenAI),
 * the models it lists, and the context a request gets where the server
 * tells it: llama-server's /v1/models meta.n_ctx or /props, vLLM's
 * max_model_len, Ollama's /api/show (num_ctx in the model's parameters, the
 * model's own context_length), LM Studio's /api/v1/models (the loaded
 * instance's context_length). Small GETs and one POST through libcurl,
 * with short timeouts and capped bodies; nothing here is needed to ask a
 * question. */
#define _GNU_SOURCE /* strcasestr */
#include "llm/llm_internal.h"

#include "llm/curl_api.h"
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define TT_PROBE_MAX_BODY (4u << 20)

typedef struct tt_probe {
  const tt_curl_api *api;
  CURL *c;
  const char *api_key;
  double timeout_s;
} tt_probe;

static size_t tt_probe_on_body(char *data, size_t size, size_t n, void *ud) {
  tt_buf *b = ud;
  if (b->len + size * n > TT_PROBE_MAX_BODY) return 0;
  tt_buf_append(b, data, size * n);
  return size * n;
}

/* GET url (POST post when given); the JSON it answers, or NULL. *status is
 * the HTTP status, 0 when nothing answered (why in err, may be NULL:
 * TT_ERR_TIMEOUT or TT_ERR_CONNECT with libcurl's words). */
static json_t *tt_probe_json(tt_probe *p, const char *url, const char *post, long *status,
                             tt_error *err) {
  const tt_curl_api *api = p->api;
  tt_buf body = TT_BUF_INIT;
  struct curl_slist *headers = NULL;
  char *auth = p->api_key ? tt_xasprintf("Authorization: Bearer %s", p->api_key) : NULL;
  if (auth) headers = api->slist_append(headers, auth);
  if (post) headers = api->slist_append(headers, "Content-Type: application/json");
  api->easy_reset(p->c);
  api->easy_setopt(p->c, CURLOPT_URL, url);
  api->easy_setopt(p->c, CURLOPT_HTTPHEADER, headers);
  api->easy_setopt(p->c, CURLOPT_WRITEFUNCTION, tt_probe_on_body);
  api->easy_setopt(p->c, CURLOPT_WRITEDATA, &body);
  api->easy_setopt(p->c, CURLOPT_TIMEOUT_MS, (long)(p->timeout_s * 1000));
  api->easy_setopt(p->c, CURLOPT_CONNECTTIMEOUT_MS, (long)(p->timeout_s * 1000));
  api->easy_setopt(p->c, CURLOPT_NOSIGNAL, 1L);
  api->easy_setopt(p->c, CURLOPT_USERAGENT, "tabletalk");
  if (post) api->easy_setopt(p->c, CURLOPT_POSTFIELDS, post);
  CURLcode rc = api->easy_perform(p->c);
  *status = 0;
  api->easy_getinfo(p->c, CURLINFO_RESPONSE_CODE, status);
  if (rc != CURLE_OK && *status == 0)
    tt_error_set(err, rc == CURLE_OPERATION_TIMEDOUT ? TT_ERR_TIMEOUT : TT_ERR_CONNECT, "%s",
                 api->easy_strerror(rc));
  json_t *doc = rc == CURLE_OK ? json_loadb(body.data ? body.data : "", body.len, 0, NULL) : NULL;
  api->slist_free_all(headers);
  free(auth);
  tt_buf_free(&body);
  return doc;
}

static json_int_t tt_json_int(const json_t *v) { return json_is_integer(v) ? json_integer_value(v) : 0; }

static void tt_info_kind(tt_llm_server_info *i, const char *kind, const char *from) {
  snprintf(i->kind, sizeof i->kind, "%s", kind);
  snprintf(i->kind_from, sizeof i->kind_from, "recognised by %s", from);
}

static void tt_info_context(tt_llm_server_info *i, json_int_t n, const char *from) {
  if (n <= 0 || i->context) return;
  i->context = (long)n;
  snprintf(i->context_from, sizeof i->context_from, "%s", from);
}

/* GET /models: the names served; llama-server and vLLM say who they are. */
static void tt_probe_models(tt_probe *p, const char *base, const char *model, tt_llm_server_info *i) {
  char *url = tt_xasprintf("%s/models", base);
  tt_error err = TT_ERROR_INIT;
  json_t *doc = tt_probe_json(p, url, NULL, &i->models_status, &err);
  free(url);
  i->reachable = i->models_status != 0;
  if (!i->reachable) /* libcurl's words are short */
    snprintf(i->models_error, sizeof i->models_error, "%.*s", (int)sizeof i->models_error - 1,
             err.message);
  const json_t *data = json_object_get(doc, "data");
  if (i->models_status == 200 && json_is_array(data)) {
    i->models = json_array();
    size_t k;
    const json_t *m;
    json_array_foreach(data, k, m) {
      const char *id = json_string_value(json_object_get(m, "id"));
      if (!id) continue;
      json_array_append_new(i->models, json_string(id));
      i->model_listed |= model && strcmp(id, model) == 0;
      const char *owner = json_string_value(json_object_get(m, "owned_by"));
      if (owner && strcmp(owner, "llamacpp") == 0) {
        tt_info_kind(i, "llama-server", "/v1/models owned_by llamacpp");
        tt_info_context(i, tt_json_int(json_object_get(json_object_get(m, "meta"), "n_ctx")),
                        "/v1/models meta.n_ctx");
        i->model_context = (long)tt_json_int(json_object_get(json_object_get(m, "meta"), "n_ctx_train"));
      } else if (owner && strcmp(owner, "vllm") == 0 && (!model || strcmp(id, model) == 0 || k == 0)) {
        tt_info_kind(i, "vllm", "/v1/models owned_by vllm");
        tt_info_context(i, tt_json_int(json_object_get(m, "max_model_len")), "/v1/models max_model_len");
      }
    }
  }
  json_decref(doc);
}

/* llama-server's /props: the slot context and whether the template takes tools. */
static void tt_probe_props(tt_probe *p, const char *root, tt_llm_server_info *i) {
  char *url = tt_xasprintf("%s/props", root);
  long status;
  json_t *doc = tt_probe_json(p, url, NULL, &status, NULL);
  free(url);
  const json_t *gen = json_object_get(doc, "default_generation_settings");
  if (status == 200 && json_is_object(gen)) {
    if (!i->kind[0]) tt_info_kind(i, "llama-server", "/props");
    if (!i->context) tt_info_context(i, tt_json_int(json_object_get(gen, "n_ctx")), "/props n_ctx");
    const json_t *caps = json_object_get(doc, "chat_template_caps");
    const json_t *tools = json_object_get(caps, "supports_tool_calls");
    if (json_is_boolean(tools)) i->tools_template = json_is_true(tools) ? 1 : 0;
  }
  json_decref(doc);
}

/* "num_ctx 8192" among the lines of Ollama's parameters text. */
static long tt_ollama_num_ctx(const char *params) {
  const char *p = params;
  while (p && (p = strstr(p, "num_ctx")) != NULL) {
    bool line_start = p == params || p[-1] == '\n';
    p += 7;
    if (line_start && (*p == ' ' || *p == '\t')) return strtol(p, NULL, 10);
  }
  return 0;
}

/* Ollama: /api/version, then /api/show for the model. */
static void tt_probe_ollama(tt_probe *p, const char *root, const char *model, tt_llm_server_info *i) {
  char *url = tt_xasprintf("%s/api/version", root);
  long status;
  json_t *doc = tt_probe_json(p, url, NULL, &status, NULL);
  free(url);
  bool ollama = status == 200 && json_is_string(json_object_get(doc, "version"));
  json_decref(doc);
  if (!ollama) return;
  tt_info_kind(i, "ollama", "/api/version");
  url = tt_xasprintf("%s/api/show", root);
  json_t *req = json_pack("{s:s}", "model", model ? model : "");
  char *body = json_dumps(req, JSON_COMPACT);
  doc = tt_probe_json(p, url, body, &status, NULL);
  free(url);
  free(body);
  json_decref(req);
  if (status == 200) {
    long num_ctx = tt_ollama_num_ctx(json_string_value(json_object_get(doc, "parameters")));
    tt_info_context(i, num_ctx, "/api/show parameters num_ctx");
    i->ollama_default_ctx = num_ctx == 0;
    const char *key;
    const json_t *v;
    json_object_foreach(json_object_get(doc, "model_info"), key, v) {
      const char *dot = strrchr(key, '.');
      if (dot && strcmp(dot, ".context_length") == 0) i->model_context = (long)tt_json_int(v);
    }
    const json_t *caps = json_object_get(doc, "capabilities");
    if (json_is_array(caps)) {
      i->tools_template = 0;
      size_t k;
      const json_t *c;
      json_array_foreach(caps, k, c) if (json_string_value(c) && strcmp(json_string_value(c), "tools") == 0)
        i->tools_template = 1;
    }
  }
  json_decref(doc);
}

/* The entry of LM Studio's model list that answers: the one named model,
 * else the first one loaded. */
static const json_t *tt_lmstudio_entry(const json_t *models, const char *model) {
  size_t k;
  const json_t *m;
  json_array_foreach(models, k, m) {
    const char *key = json_string_value(json_object_get(m, "key"));
    if (key && model && strcmp(key, model) == 0) return m;
  }
  json_array_foreach(models, k, m) if (json_array_size(json_object_get(m, "loaded_instances"))) return m;
  return NULL;
}

/* LM Studio's own REST API: /api/v1/models lists every model with its
 * loaded instances' context. */
static void tt_probe_lmstudio(tt_probe *p, const char *root, const char *model, tt_llm_server_info *i) {
  char *url = tt_xasprintf("%s/api/v1/models", root);
  long status;
  json_t *doc = tt_probe_json(p, url, NULL, &status, NULL);
  free(url);
  const json_t *models = json_object_get(doc, "models");
  if (status == 200 && json_is_array(models)) {
    tt_info_kind(i, "lm-studio", "/api/v1/models");
    const json_t *m = tt_lmstudio_entry(models, model);
    const json_t *loaded = json_array_get(json_object_get(m, "loaded_instances"), 0);
    tt_info_context(i, tt_json_int(json_object_get(json_object_get(loaded, "config"), "context_length")),
                    "/api/v1/models loaded context_length");
    i->model_context = (long)tt_json_int(json_object_get(m, "max_context_length"));
    const json_t *tools = json_object_get(json_object_get(m, "capabilities"), "trained_for_tool_use");
    if (json_is_boolean(tools)) i->tools_template = json_is_true(tools) ? 1 : 0;
  }
  json_decref(doc);
}

/* The server's root: the base URL without a trailing /v1. */
static char *tt_root_url(const char *base) {
  size_t n = strlen(base);
  while (n && base[n - 1] == '/') n--;
  if (n >= 3 && strncmp(base + n - 3, "/v1", 3) == 0) n -= 3;
  return tt_xstrndup(base, n);
}

bool tt_llm_server_probe(const tt_llm_http_opts *o, tt_llm_server_info *out, tt_error *err) {
  memset(out, 0, sizeof *out);
  out->tools_template = -1;
  const tt_curl_api *api = tt_curl_api_get(err);
  if (!api) return false;
  tt_probe p = {.api = api, .c = api->easy_init(), .api_key = o->api_key && *o->api_key ? o->api_key : NULL,
                .timeout_s = o->connect_timeout_s > 0 ? o->connect_timeout_s : 10};
  if (!p.c) {
    tt_error_set(err, TT_ERR_UNAVAILABLE, "cannot initialise libcurl");
    return false;
  }
  size_t n = strlen(o->base_url);
  while (n && o->base_url[n - 1] == '/') n--;
  char *base = tt_xstrndup(o->base_url, n);
  char *root = tt_root_url(base);
  const char *model = o->model && *o->model ? o->model : NULL;
  tt_probe_models(&p, base, model, out);
  if (out->reachable && (!out->kind[0] || strcmp(out->kind, "llama-server") == 0))
    tt_probe_props(&p, root, out);
  if (out->reachable && !out->kind[0]) tt_probe_ollama(&p, root, model, out);
  if (out->reachable && !out->kind[0]) tt_probe_lmstudio(&p, root, model, out);
  if (!out->kind[0] && strcasestr(base, "://api.openai.com")) tt_info_kind(out, "openai", "the host name");
  if (!out->kind[0]) {
    tt_info_kind(out, "openai-compatible", "");
    snprintf(out->kind_from, sizeof out->kind_from, "no server-specific route answered");
  }
  api->easy_cleanup(p.c);
  free(base);
  free(root);
  return true;
}

void tt_llm_server_info_free(tt_llm_server_info *i) {
  if (!i) return;
  json_decref(i->models);
  i->models = NULL;
}
