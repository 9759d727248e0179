/* server.c — the protocol core of the MCP server: which revision a message
 * speaks (the 2026-07-28 envelope in params._meta, or the handshake of
 * 2025-11-25, 2025-06-18 and 2025-03-26), the checks every request passes,
 * dispatch to the methods, the lifecycle methods themselves (initialize,
 * server/discover, ping, the list methods) and the shape of results in
 * each revision. Transports hand messages in through tt_mcp_handle. */
#include "mcp/mcp_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "tt_version.h"

const char *const tt_mcp_legacy_versions[] = {"2025-11-25", "2025-06-18", "2025-03-26", NULL};

#define TT_META_VERSION "io.modelcontextprotocol/protocolVersion"
#define TT_META_CAPS "io.modelcontextprotocol/clientCapabilities"
#define TT_META_SERVER "io.modelcontextprotocol/serverInfo"
#define TT_META_EVENT "tabletalk/event" /* a question's event, as the trace has it */
#define TT_POOL_KEEP 16
#define TT_CACHE_TTL_MS 300000 /* lists and cards are fixed while the server runs */

bool tt_mcp_is_legacy_version(const char *v) {
  for (size_t i = 0; tt_mcp_legacy_versions[i]; i++)
    if (v && strcmp(v, tt_mcp_legacy_versions[i]) == 0) return true;
  return false;
}

tt_mcp_config tt_mcp_default_config(void) {
  tt_mcp_config c;
  memset(&c, 0, sizeof c);
  c.max_message = 1024 * 1024;
  c.workers = 4;
  c.preview_rows = 50;
  return c;
}

/* ---- the server ------------------------------------------------------------ */

static char *tt_mcp_make_instructions(const tt_mcp_server *s, const tt_schema *schema) {
  tt_buf b = TT_BUF_INIT;
  tt_buf name = TT_BUF_INIT;
  tt_escape_terminal(&name, s->db_name, strlen(s->db_name), NULL); /* any bytes in a file name */
  if (schema) {
    size_t n = tt_schema_count(schema);
    tt_buf_printf(&b, "tabletalk gives read-only access to the %s database %s (%zu %s",
                  s->dialect, tt_buf_cstr(&name), n, n == 1 ? "table or view" : "tables and views");
    size_t shown = n < 40 ? n : 40;
    for (size_t i = 0; i < shown; i++) {
      const char *t = tt_schema_card(schema, i)->table->name;
      tt_buf_puts(&b, i ? ", " : ": ");
      tt_escape_terminal(&b, t, strlen(t), NULL);
    }
    if (shown < n) tt_buf_printf(&b, " and %zu more", n - shown);
    tt_buf_puts(&b, ")");
  } else {
    tt_buf_printf(&b, "tabletalk gives read-only access to the %s database %s (describe_schema "
                      "lists its tables and views)", s->dialect, tt_buf_cstr(&name));
  }
  tt_buf_printf(&b,
              ". Ask questions in plain language with ask_database: tabletalk writes and runs "
              "the SQL itself and answers with the numbers, the SQL it used and the rows; pass "
              "the thread_id it returns to ask follow-up questions. Run your own SQL with "
              "run_sql (%s dialect, one read-only statement). See tables, columns, keys and "
              "example values with describe_schema or the tabletalk://table/{name} resources. "
              "Nothing can change the database: writes are refused.", s->dialect);
  const char *warning = tt_service_warning(s->cfg.svc);
  if (warning) tt_buf_printf(&b, " Warning: %s.", warning);
  tt_buf_free(&name);
  return tt_buf_detach(&b);
}

const tt_schema *tt_mcp_schema(tt_mcp_server *s, tt_error *err) {
  const tt_schema *schema = tt_service_schema(s->cfg.svc, err);
  if (!schema) tt_error_prefix(err, "cannot read the schema: ");
  return schema;
}

char *tt_mcp_instructions(tt_mcp_server *s) {
  pthread_mutex_lock(&s->mu);
  if (!s->instructions) {
    /* the handshake never waits for the catalog: a warm start has the
     * cached schema already, a cold one says where the tables are listed */
    const tt_schema *schema = tt_service_schema_ready(s->cfg.svc, 0);
    char *text = tt_mcp_make_instructions(s, schema);
    if (!schema) { /* not yet: these words, this time */
      pthread_mutex_unlock(&s->mu);
      return text;
    }
    s->instructions = text;
  }
  char *text = tt_xstrdup(s->instructions);
  pthread_mutex_unlock(&s->mu);
  return text;
}

tt_mcp_server *tt_mcp_server_new(const tt_mcp_config *cfg, tt_error *err) {
  if (!cfg->svc) {
    tt_error_set(err, TT_ERR_CONFIG, "the MCP server needs a database");
    return NULL;
  }
  tt_mcp_server *s = tt_xcalloc(1, sizeof *s);
  s->cfg = *cfg;
  if (s->cfg.max_message < 1024) s->cfg.max_message = 1024;
  if (s->cfg.workers < 1) s->cfg.workers = 1;
  if (s->cfg.preview_rows < 1) s->cfg.preview_rows = 50;
  /* run_sql shows a preview and counts the rest (within the time limit). */
  s->db_opts = tt_config_db_opts(tt_service_config(cfg->svc));
  s->db_opts.max_rows = s->cfg.preview_rows;
  s->db_opts.count_rows = 1000000;
  /* a file by its name, a server's URI whole (without its password) */
  const tt_db_target *t = tt_service_target(cfg->svc);
  const char *slash = t->uri ? NULL : strrchr(t->shown, '/');
  const char *named = slash ? slash + 1 : t->shown;
  tt_buf name = TT_BUF_INIT; /* a file name may hold any bytes; JSON wants UTF-8 */
  tt_utf8_escape_invalid(&name, named, strlen(named));
  s->db_name = tt_buf_detach(&name);
  s->dialect = tt_db_kind_dialect(t->kind);
  pthread_mutex_init(&s->mu, NULL);
  s->tools = tt_mcp_tool_defs(s);
  s->prompts = tt_mcp_prompt_defs(s);
  pthread_mutex_init(&s->pool_mu, NULL);
  s->cache = tt_sql_cache_new();
  if (getrandom(s->state_key, sizeof s->state_key, 0) != (ssize_t)sizeof s->state_key) {
    tt_error_set(err, TT_ERR_IO, "cannot read random bytes from the kernel for signing client state");
    tt_mcp_server_free(s);
    return NULL;
  }
  return s;
}

void tt_mcp_server_free(tt_mcp_server *s) {
  if (!s) return;
  pthread_mutex_destroy(&s->mu);
  tt_sql_cache_free(s->cache);
  for (size_t i = 0; i < s->npool; i++) tt_db_close(s->pool[i]);
  free(s->pool);
  pthread_mutex_destroy(&s->pool_mu);
  json_decref(s->tools);
  json_decref(s->prompts);
  free(s->instructions);
  free(s->db_name);
  free(s);
}

size_t tt_mcp_max_message(const tt_mcp_server *s) { return s->cfg.max_message; }
int tt_mcp_workers(const tt_mcp_server *s) { return s->cfg.workers; }

tt_db *tt_mcp_db_acquire_free(tt_mcp_server *s) {
  pthread_mutex_lock(&s->pool_mu);
  tt_db *db = s->npool ? s->pool[--s->npool] : NULL;
  pthread_mutex_unlock(&s->pool_mu);
  return db;
}

tt_db *tt_mcp_db_acquire(tt_mcp_server *s, tt_error *err) {
  tt_db *db = tt_mcp_db_acquire_free(s);
  return db ? db : tt_service_db_open(s->cfg.svc, &s->db_opts, err);
}

void tt_mcp_db_release(tt_mcp_server *s, tt_db *db) {
  if (!db) return;
  pthread_mutex_lock(&s->pool_mu);
  if (s->npool < TT_POOL_KEEP) {
    if (s->npool == s->pool_cap) {
      s->pool_cap = s->pool_cap ? s->pool_cap * 2 : 4;
      s->pool = tt_xrealloc(s->pool, s->pool_cap * sizeof *s->pool);
    }
    s->pool[s->npool++] = db;
    db = NULL;
  }
  pthread_mutex_unlock(&s->pool_mu);
  tt_db_close(db);
}

/* ---- requests ---------------------------------------------------------------- */

json_t *tt_mcp_fail(tt_mcp_req *r, int code, int status, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  tt_buf b = TT_BUF_INIT;
  tt_buf_vprintf(&b, fmt, ap);
  va_end(ap);
  free(r->err_message);
  r->err_message = tt_buf_detach(&b);
  r->err_code = code;
  r->err_status = status;
  return NULL;
}

void tt_mcp_progress(tt_mcp_req *r, const char *message) { tt_mcp_progress_event(r, message, NULL); }

void tt_mcp_progress_event(tt_mcp_req *r, const char *message, const json_t *event) {
  if (!r->progress_token || !r->call->send) return;
  r->progress += 1;
  json_t *p = json_pack("{s:O, s:f, s:s}", "progressToken", r->progress_token, "progress",
                        r->progress, "message", message);
  if (event) json_object_set_new(p, "_meta", json_pack("{s:O}", TT_META_EVENT, event));
  json_t *n = tt_rpc_notification("notifications/progress", p);
  r->call->send(r->call->send_ud, n);
  json_decref(n);
}

bool tt_mcp_version_at_least(const tt_mcp_req *r, const char *v) {
  return r->modern || strcmp(r->version, v) >= 0; /* dates compare as text */
}

bool tt_mcp_client_elicits(const tt_mcp_req *r) {
  const json_t *e = json_object_get(r->caps, "elicitation");
  if (!json_is_object(e)) return false;
  /* {} means form mode; a client listing modes must list form. */
  if (json_object_size(e) && !json_object_get(e, "form")) return false;
  if (r->modern) return true;
  return tt_mcp_version_at_least(r, "2025-06-18") && r->call->conn && r->call->send;
}

/* serverInfo, naming the database's dialect ("SQLite" or "PostgreSQL"). */
static json_t *tt_mcp_server_info(const tt_mcp_server *s) {
  char desc[96];
  snprintf(desc, sizeof desc, "Questions in plain language over a read-only %s database",
           s->dialect ? s->dialect : "SQLite");
  return json_pack("{s:s, s:s, s:s, s:s}", "name", "tabletalk", "title", "tabletalk",
                   "version", TT_VERSION, "description", desc);
}

static json_t *tt_mcp_capabilities(void) {
  return json_pack("{s:{s:b}, s:{s:b, s:b}, s:{s:b}}", "tools", "listChanged", 0, "resources",
                   "subscribe", 0, "listChanged", 0, "prompts", "listChanged", 0);
}

/* Mcp-Name may come as =?base64?...?= (a name or URI that is not plain
 * ASCII, or has spaces at its ends); NULL when the sentinel holds no valid
 * base64 text. */
static char *tt_mcp_decode_name(const char *h) {
  size_t n = strlen(h);
  if (n >= 11 && strncmp(h, "=?base64?", 9) == 0 && strcmp(h + n - 2, "?=") == 0) {
    tt_buf b = TT_BUF_INIT;
    if (tt_base64_decode(&b, h + 9, n - 11) && !memchr(b.data ? b.data : "", 0, b.len))
      return tt_buf_detach(&b);
    tt_buf_free(&b);
    return NULL;
  }
  return tt_xstrdup(h);
}

/* 2026-07-28 over HTTP: a header must repeat what the body says (header
 * values come trimmed by the transport; only Mcp-Name may be encoded). */
static bool tt_mcp_check_header(tt_mcp_req *r, const char *header, const char *raw,
                                const char *body) {
  if (!raw) {
    tt_mcp_fail(r, TT_MCP_HEADER_MISMATCH, 400,
                "Header mismatch: the %s header is missing; it must be \"%s\"", header, body);
    return false;
  }
  bool encoded = strcmp(header, "Mcp-Name") == 0;
  char *v = encoded ? tt_mcp_decode_name(raw) : tt_xstrdup(raw);
  bool ok = v && strcmp(v, body) == 0;
  if (!ok)
    tt_mcp_fail(r, TT_MCP_HEADER_MISMATCH, 400,
                "Header mismatch: %s header value '%.200s' does not match body value '%.200s'",
                header, v ? v : raw, body);
  free(v);
  return ok;
}

/* Mcp-Method and Mcp-Name (the version header is checked before them). */
static bool tt_mcp_check_headers(tt_mcp_req *r) {
  tt_mcp_call *c = r->call;
  if (!c->http) return true;
  if (!tt_mcp_check_header(r, "Mcp-Method", c->header_method, r->method)) return false;
  const char *key = NULL;
  if (strcmp(r->method, "tools/call") == 0 || strcmp(r->method, "prompts/get") == 0) key = "name";
  if (strcmp(r->method, "resources/read") == 0) key = "uri";
  const char *name = key ? json_string_value(json_object_get(r->params, key)) : NULL;
  if (name && !tt_mcp_check_header(r, "Mcp-Name", c->header_name, name)) return false;
  return true;
}

static json_t *tt_mcp_supported_versions(void) {
  json_t *a = json_array();
  json_array_append_new(a, json_string(TT_MCP_MODERN));
  for (size_t i = 0; tt_mcp_legacy_versions[i]; i++)
    json_array_append_new(a, json_string(tt_mcp_legacy_versions[i]));
  return a;
}

static bool tt_mcp_fail_version(tt_mcp_req *r, const char *where, const char *v) {
  tt_mcp_fail(r, TT_MCP_UNSUPPORTED_VERSION, 400,
              "Unsupported protocol version: %s names %.40s. This server speaks " TT_MCP_MODERN
              " in each request's _meta, and 2025-11-25, 2025-06-18 and 2025-03-26 through "
              "initialize",
              where, v);
  r->err_data = json_pack("{s:o, s:s}", "supported", tt_mcp_supported_versions(), "requested", v);
  return false;
}

bool tt_mcp_is_modern(const json_t *msg) {
  const json_t *params = json_object_get(msg, "params");
  const json_t *pv = json_object_get(json_object_get(params, "_meta"), TT_META_VERSION);
  if (!pv) return false;
  /* initialize opens a handshake unless it names 2026-07-28, where it does
   * not exist (and is answered as such). */
  const char *method = json_string_value(json_object_get(msg, "method"));
  if (method && strcmp(method, "initialize") == 0)
    return json_is_string(pv) && strcmp(json_string_value(pv), TT_MCP_MODERN) == 0;
  return true;
}

/* A 2026-07-28 request: the checks in the order the revision gives them
 * meaning. The version must be a string; over HTTP its header must repeat
 * it (-32020) before it is judged (-32022): a version this server does not
 * speak says nothing about the rest of the envelope. */
static bool tt_mcp_envelope_modern(tt_mcp_req *r, const json_t *meta) {
  r->modern = true;
  const json_t *pv = json_object_get(meta, TT_META_VERSION);
  if (!json_is_string(pv)) {
    tt_mcp_fail(r, TT_RPC_INVALID_PARAMS, 400,
                "Invalid _meta envelope: " TT_META_VERSION " must be a string naming the "
                "protocol revision (\"" TT_MCP_MODERN "\")");
    r->err_data = json_pack("{s:{s:s, s:s}}", "envelope", "key", TT_META_VERSION, "problem",
                            "invalid");
    return false;
  }
  const char *v = json_string_value(pv);
  if (r->call->http && !tt_mcp_check_header(r, "MCP-Protocol-Version", r->call->header_version, v))
    return false;
  if (strcmp(v, TT_MCP_MODERN) != 0) return tt_mcp_fail_version(r, "params._meta", v);
  snprintf(r->version, sizeof r->version, "%s", TT_MCP_MODERN);
  const json_t *caps = json_object_get(meta, TT_META_CAPS);
  if (!json_is_object(caps)) {
    tt_mcp_fail(r, TT_RPC_INVALID_PARAMS, 400,
                "Invalid _meta envelope for protocol revision " TT_MCP_MODERN
                ": " TT_META_CAPS ": %s",
                caps ? "must be an object" : "missing");
    r->err_data = json_pack("{s:{s:s, s:s}}", "envelope", "key", TT_META_CAPS, "problem",
                            caps ? "invalid" : "missing");
    return false;
  }
  r->caps = json_incref((json_t *)caps);
  return tt_mcp_check_headers(r);
}

/* A request without the 2026-07-28 envelope whose MCP-Protocol-Version
 * header names 2026-07-28 is a modern request with its required _meta
 * fields missing: invalid params, not a handshake request. */
static bool tt_mcp_fail_missing_envelope(tt_mcp_req *r, const json_t *meta) {
  json_t *missing = json_array();
  if (!meta) json_array_append_new(missing, json_string("_meta"));
  if (meta) json_array_append_new(missing, json_string(TT_META_VERSION));
  if (meta && !json_is_object(json_object_get(meta, TT_META_CAPS)))
    json_array_append_new(missing, json_string(TT_META_CAPS));
  tt_mcp_fail(r, TT_RPC_INVALID_PARAMS, 400,
              "Invalid params: the MCP-Protocol-Version header names " TT_MCP_MODERN
              ", but params.%s is missing; send params._meta with " TT_META_VERSION
              " and " TT_META_CAPS " (or, for a 2025 handshake revision, no such header%s)",
              meta ? "_meta." TT_META_VERSION : "_meta",
              strcmp(r->method, "initialize") == 0 ? " on initialize" : "");
  r->err_data = json_pack("{s:{s:o}}", "envelope", "missing", missing);
  return false;
}

/* A handshake revision: the connection's, else the HTTP header's, else
 * 2025-03-26 (an old client that sends no header). */
static bool tt_mcp_envelope_legacy(tt_mcp_req *r, const json_t *meta) {
  const char *hv = r->call->header_version;
  bool initialize = strcmp(r->method, "initialize") == 0;
  if (hv && strcmp(hv, TT_MCP_MODERN) == 0) return tt_mcp_fail_missing_envelope(r, meta);
  /* initialize negotiates in its params; a stray header there means nothing. */
  if (hv && !tt_mcp_is_legacy_version(hv) && !initialize)
    return tt_mcp_fail_version(r, "the MCP-Protocol-Version header", hv);
  json_t *caps = NULL;
  if (r->call->conn && tt_mcp_conn_legacy(r->call->conn, r->version, &caps)) {
    r->caps = caps;
  } else {
    json_decref(caps);
    snprintf(r->version, sizeof r->version, "%s",
             hv && tt_mcp_is_legacy_version(hv) ? hv : TT_MCP_LEGACY_FALLBACK);
    r->caps = json_object();
  }
  return true;
}

/* Works out the revision, capabilities and progress token of a request.
 * False (with the error recorded) when the envelope is wrong. */
static bool tt_mcp_envelope(tt_mcp_req *r, const json_t *msg) {
  const json_t *meta = json_object_get(r->params, "_meta");
  if (meta && !json_is_object(meta)) {
    tt_mcp_fail(r, TT_RPC_INVALID_PARAMS, 400, "params._meta must be an object");
    return false;
  }
  const json_t *tok = json_object_get(meta, "progressToken");
  if (json_is_string(tok) || json_is_integer(tok)) r->progress_token = tok;
  if (tt_mcp_is_modern(msg)) return tt_mcp_envelope_modern(r, meta);
  return tt_mcp_envelope_legacy(r, meta);
}

/* ---- lifecycle and list methods -------------------------------------------------- */

static json_t *m_initialize(tt_mcp_req *r) {
  const json_t *pv = json_object_get(r->params, "protocolVersion");
  if (!json_is_string(pv))
    return tt_mcp_fail(r, TT_RPC_INVALID_PARAMS, 400,
                       "initialize needs params.protocolVersion, the revision the client "
                       "speaks (e.g. \"2025-11-25\")");
  const json_t *caps = json_object_get(r->params, "capabilities");
  if (caps && !json_is_object(caps))
    return tt_mcp_fail(r, TT_RPC_INVALID_PARAMS, 400, "params.capabilities must be an object");
  /* An unknown revision gets a counter-offer, not an error. */
  const char *want = json_string_value(pv);
  const char *v = tt_mcp_is_legacy_version(want) ? want : TT_MCP_LEGACY_LATEST;
  if (r->call->conn) tt_mcp_conn_set_legacy(r->call->conn, v, caps);
  char *text = tt_mcp_instructions(r->srv);
  json_t *res = json_pack("{s:s, s:o, s:o, s:s}", "protocolVersion", v, "capabilities",
                          tt_mcp_capabilities(), "serverInfo", tt_mcp_server_info(r->srv),
                          "instructions", text);
  free(text);
  return res;
}

static json_t *m_discover(tt_mcp_req *r) {
  char *text = tt_mcp_instructions(r->srv);
  json_t *res = json_pack("{s:o, s:o, s:o, s:s}", "supportedVersions", tt_mcp_supported_versions(),
                          "capabilities", tt_mcp_capabilities(), "serverInfo",
                          tt_mcp_server_info(r->srv), "instructions", text);
  free(text);
  return res;
}

static json_t *m_ping(tt_mcp_req *r) {
  (void)r;
  return json_object();
}

/* One page of items (all of them: our lists are short), after checking the
 * cursor. */
static json_t *tt_mcp_list(tt_mcp_req *r, const char *key, json_t *items, size_t page) {
  size_t off;
  if (!tt_mcp_cursor_parse(r->params, &off) || (off && off >= json_array_size(items))) {
    json_decref(items);
    return tt_mcp_fail(r, TT_RPC_INVALID_PARAMS, 0,
                       "Invalid cursor: pass back the nextCursor of an earlier %s result, or no "
                       "cursor for the first page",
                       r->method);
  }
  json_t *out = json_array();
  size_t n = json_array_size(items);
  for (size_t i = off; i < n && i < off + page; i++)
    json_array_append(out, json_array_get(items, i));
  json_t *res = json_pack("{s:o}", key, out);
  if (off + page < n) json_object_set_new(res, "nextCursor", tt_mcp_cursor_make(off + page));
  json_decref(items);
  return res;
}

static json_t *m_tools_list(tt_mcp_req *r) {
  json_t *tools = json_deep_copy(r->srv->tools);
  /* outputSchema and title arrived with 2025-06-18. */
  if (!tt_mcp_version_at_least(r, "2025-06-18")) {
    size_t i;
    json_t *t;
    json_array_foreach(tools, i, t) {
      json_object_del(t, "outputSchema");
      json_object_del(t, "title");
    }
  }
  return tt_mcp_list(r, "tools", tools, 100);
}

static json_t *m_prompts_list(tt_mcp_req *r) {
  return tt_mcp_list(r, "prompts", json_deep_copy(r->srv->prompts), 100);
}

/* ---- dispatch ---------------------------------------------------------------------- */

typedef json_t *(*tt_mcp_method_fn)(tt_mcp_req *r);

typedef struct tt_mcp_method {
  const char *name;
  tt_mcp_method_fn fn;
  bool modern, legacy; /* served in the 2026-07-28 revision / the handshake ones */
  bool cacheable;      /* 2026-07-28 results carry ttlMs and cacheScope */
} tt_mcp_method;

static const tt_mcp_method tt_mcp_methods[] = {
    {"initialize", m_initialize, false, true, false},
    {"ping", m_ping, false, true, false},
    {"server/discover", m_discover, true, false, true},
    {"tools/list", m_tools_list, true, true, true},
    {"tools/call", tt_mcp_tools_call, true, true, false},
    {"resources/list", tt_mcp_resources_list, true, true, true},
    {"resources/templates/list", tt_mcp_resource_templates, true, true, true},
    {"resources/read", tt_mcp_resources_read, true, true, true},
    {"prompts/list", m_prompts_list, true, true, true},
    {"prompts/get", tt_mcp_prompts_get, true, true, false},
};

static const tt_mcp_method *tt_mcp_find_method(const char *name) {
  for (size_t i = 0; i < sizeof tt_mcp_methods / sizeof tt_mcp_methods[0]; i++)
    if (strcmp(tt_mcp_methods[i].name, name) == 0) return &tt_mcp_methods[i];
  return NULL;
}

static json_t *tt_mcp_dispatch(tt_mcp_req *r, const tt_mcp_method **found) {
  const tt_mcp_method *m = tt_mcp_find_method(r->method);
  *found = m;
  if (m && !r->modern && !m->legacy && strcmp(r->method, "server/discover") == 0)
    return tt_mcp_fail(r, TT_RPC_INVALID_PARAMS, 400,
                       "server/discover belongs to revision " TT_MCP_MODERN
                       ": send params._meta with " TT_META_VERSION " and " TT_META_CAPS);
  /* 2026-07-28 removed the handshake's methods (initialize, ping...): over
   * HTTP a method the revision lacks is 404 with -32601. */
  if (m && r->modern && !m->modern)
    return tt_mcp_fail(r, TT_RPC_METHOD_NOT_FOUND, 404,
                       "Method not found: %s belongs to the handshake revisions (2025-11-25 and "
                       "earlier), not to " TT_MCP_MODERN "; %s",
                       r->method,
                       strcmp(r->method, "initialize") == 0
                           ? "to open a handshake session, send initialize without "
                             TT_META_VERSION " in params._meta"
                           : "2026-07-28 requests need no session and no handshake");
  if (!m || (r->modern && !m->modern) || (!r->modern && !m->legacy))
    return tt_mcp_fail(r, TT_RPC_METHOD_NOT_FOUND, r->modern ? 404 : 0,
                       "Method not found: %.100s (revision %s)", r->method, r->version);
  return m->fn(r);
}

/* The 2026-07-28 additions to every result. */
static void tt_mcp_shape_modern(const tt_mcp_server *s, json_t *res, const tt_mcp_method *m) {
  if (!json_object_get(res, "resultType"))
    json_object_set_new(res, "resultType", json_string("complete"));
  bool complete = strcmp(json_string_value(json_object_get(res, "resultType")), "complete") == 0;
  if (m && m->cacheable && complete) {
    json_object_set_new(res, "ttlMs", json_integer(TT_CACHE_TTL_MS));
    json_object_set_new(res, "cacheScope", json_string("private"));
  }
  json_t *meta = json_object_get(res, "_meta");
  if (!json_is_object(meta)) {
    meta = json_object();
    json_object_set_new(res, "_meta", meta);
  }
  json_object_set_new(meta, TT_META_SERVER, tt_mcp_server_info(s));
}

static void tt_mcp_notification(tt_mcp_server *s, tt_mcp_call *call, const json_t *msg) {
  (void)s;
  const char *method = json_string_value(json_object_get(msg, "method"));
  const json_t *params = json_object_get(msg, "params");
  if (strcmp(method, "notifications/cancelled") == 0 && call->conn) {
    const json_t *id = json_object_get(params, "requestId");
    if (id) tt_mcp_conn_cancel(call->conn, id);
  }
  /* notifications/initialized and the rest need nothing from us. */
}

static json_t *tt_mcp_request(tt_mcp_server *s, tt_mcp_call *call, const json_t *msg) {
  tt_mcp_req r;
  memset(&r, 0, sizeof r);
  r.srv = s;
  r.call = call;
  r.id = json_object_get(msg, "id");
  r.method = json_string_value(json_object_get(msg, "method"));
  json_t *empty = json_object();
  const json_t *params = json_object_get(msg, "params");
  r.params = params ? params : empty;
  const tt_mcp_method *m = NULL;
  json_t *res = NULL;
  if (tt_mcp_envelope(&r, msg)) res = tt_mcp_dispatch(&r, &m);
  json_t *reply = NULL;
  if (call->quick && (!res || call->deferred)) {
    call->deferred = true; /* answered by a worker, errors included */
    json_decref(res);
  } else if (call->no_reply) {
    json_decref(res);
  } else if (res) {
    if (r.modern) tt_mcp_shape_modern(r.srv, res, m);
    reply = tt_rpc_result(r.id, res);
    json_decref(res);
  } else {
    if (!r.err_message) tt_mcp_fail(&r, TT_RPC_INTERNAL_ERROR, 500, "Internal error");
    reply = tt_rpc_error(r.id, r.err_code, r.err_message, r.err_data);
    r.err_data = NULL;
    if (r.err_status) call->http_status = r.err_status;
  }
  json_decref(r.err_data);
  free(r.err_message);
  json_decref(r.caps);
  json_decref(empty);
  return reply;
}

static json_t *tt_mcp_handle_one(tt_mcp_server *s, tt_mcp_call *call, const json_t *msg,
                                 bool in_batch) {
  const char *why;
  switch (tt_rpc_classify(msg, &why)) {
  case TT_RPC_INVALID:
    call->http_status = 400;
    return tt_rpc_error(tt_rpc_usable_id(msg), TT_RPC_INVALID_REQUEST,
                        json_is_object(msg) ? why : "Invalid Request: not a JSON-RPC message",
                        json_is_object(msg) ? NULL : json_string(why));
  case TT_RPC_RESPONSE:
    if (call->conn) tt_mcp_conn_deliver(call->conn, msg);
    call->http_status = 202;
    return NULL;
  case TT_RPC_NOTIFICATION:
    tt_mcp_notification(s, call, msg);
    call->http_status = 202;
    return NULL;
  case TT_RPC_REQUEST:
    break;
  }
  if (in_batch && strcmp(json_string_value(json_object_get(msg, "method")), "initialize") == 0)
    return tt_rpc_error(json_object_get(msg, "id"), TT_RPC_INVALID_REQUEST,
                        "initialize must not be part of a batch", NULL);
  return tt_mcp_request(s, call, msg);
}

json_t *tt_mcp_handle(tt_mcp_server *s, tt_mcp_call *call, const json_t *msg) {
  call->http_status = 200;
  if (!json_is_array(msg)) return tt_mcp_handle_one(s, call, msg, false);
  /* Batches belong to 2025-03-26 alone. */
  char version[16] = "";
  json_t *caps = NULL;
  bool init = call->conn && tt_mcp_conn_legacy(call->conn, version, &caps);
  json_decref(caps);
  const char *v = init ? version : call->header_version;
  if (!v || strcmp(v, "2025-03-26") != 0) {
    call->http_status = 400;
    return tt_rpc_error(NULL, TT_RPC_INVALID_REQUEST,
                        "Invalid Request: JSON-RPC batches exist only in protocol revision "
                        "2025-03-26; send one message at a time",
                        NULL);
  }
  if (json_array_size(msg) == 0) {
    call->http_status = 400;
    return tt_rpc_error(NULL, TT_RPC_INVALID_REQUEST, "Invalid Request: the batch is empty", NULL);
  }
  json_t *replies = json_array();
  size_t i;
  json_t *item;
  json_array_foreach(msg, i, item) {
    if (call->cancel) break; /* the client went away, or stopped the whole batch */
    /* each request of the batch has its own cancel flag, so that
     * notifications/cancelled naming it reaches it while it runs */
    tt_mcp_call one = *call;
    one.cancel = 0;
    one.no_reply = false;
    const json_t *id = json_is_object(item) ? json_object_get(item, "id") : NULL;
    bool track = call->conn && id && json_object_get(item, "method");
    tt_inflight *tracked = track ? tt_mcp_conn_track(call->conn, id, &one.cancel) : NULL;
    json_t *reply = tt_mcp_handle_one(s, &one, item, true);
    if (tracked) tt_mcp_conn_untrack(call->conn, tracked);
    if (one.cancel || one.no_reply) { /* a cancelled request gets no response */
      json_decref(reply);
      reply = NULL;
    }
    if (reply) json_array_append_new(replies, reply);
  }
  call->http_status = json_array_size(replies) ? 200 : 202;
  if (json_array_size(replies)) return replies;
  json_decref(replies);
  return NULL;
}

json_t *tt_mcp_precheck(tt_mcp_server *s, tt_mcp_call *call, const json_t *msg) {
  const char *why;
  if (tt_rpc_classify(msg, &why) != TT_RPC_REQUEST) return NULL;
  tt_mcp_req r;
  memset(&r, 0, sizeof r);
  r.srv = s;
  r.call = call;
  r.id = json_object_get(msg, "id");
  r.method = json_string_value(json_object_get(msg, "method"));
  json_t *empty = json_object();
  const json_t *params = json_object_get(msg, "params");
  r.params = params ? params : empty;
  json_t *reply = NULL;
  if (!tt_mcp_envelope(&r, msg)) {
    reply = tt_rpc_error(r.id, r.err_code, r.err_message, r.err_data);
    r.err_data = NULL;
    call->http_status = r.err_status ? r.err_status : 200;
  }
  json_decref(r.err_data);
  free(r.err_message);
  json_decref(r.caps);
  json_decref(empty);
  return reply;
}

json_t *tt_mcp_load(const char *text, size_t n, json_error_t *e) {
  /* jansson stops at a NUL byte as if the text ended there ("8\0x" would
   * read as 8); JSON text cannot hold one, raw, anywhere. */
  const char *nul = memchr(text, '\0', n);
  if (nul) {
    memset(e, 0, sizeof *e);
    snprintf(e->text, sizeof e->text, "a NUL byte at byte %zu, which JSON text cannot contain",
             (size_t)(nul - text) + 1);
    e->line = 1;
    e->column = (int)(nul - text) + 1;
    e->position = (int)(nul - text);
    return NULL;
  }
  return json_loadb(text, n, JSON_DECODE_ANY, e);
}

json_t *tt_mcp_parse_error(const json_error_t *e) {
  tt_buf b = TT_BUF_INIT;
  tt_buf_printf(&b, "Parse error: %s (line %d, column %d); send one JSON-RPC message as JSON",
                e->text, e->line, e->column);
  json_t *reply = tt_rpc_error(NULL, TT_RPC_PARSE_ERROR, tt_buf_cstr(&b), NULL);
  tt_buf_free(&b);
  return reply;
}

json_t *tt_mcp_too_large(const tt_mcp_server *s, size_t bytes) {
  tt_buf b = TT_BUF_INIT;
  tt_buf_printf(&b,
                "Invalid Request: the message is %zu bytes or more; the limit is %zu bytes "
                "(serve-mcp --max-message raises it)",
                bytes, s->cfg.max_message);
  json_t *reply = tt_rpc_error(NULL, TT_RPC_INVALID_REQUEST, tt_buf_cstr(&b), NULL);
  tt_buf_free(&b);
  return reply;
}
