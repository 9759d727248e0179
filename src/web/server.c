/* server.c — the HTTP server of `tabletalk web`: listens (loopback by
 * default, a thread per connection, through httpd/), checks every
 * request (Host and Origin name the address served, the token or the
 * cookie it was exchanged for, a CSRF token on state-changing requests),
 * serves the embedded page and routes /api/ to api.c and ask.c.
 *
 * The checks run as soon as a request's headers are in, before any of its
 * body is read: a peer without the token is answered there and its
 * connection closed; the token holder's connection is admitted, out of
 * reach of the guard that closes connections which have not shown the
 * token within the deadline (httpd.h). Wrong tokens and cookies are paced
 * per address by the guard (401, then 429 with Retry-After). */
#include "web/web_internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "web/assets.h"

#define TT_WEB_FIRST_TIMEOUT_S 30 /* idle limit of a connection */

/* ---- responses -------------------------------------------------------------- */

void tt_web_security_headers(tt_web *w, struct MHD_Response *resp, bool asset) {
  const tt_mhd_api *m = w->mhd;
  m->add_response_header(resp, "Cache-Control", asset ? "no-cache" : "no-store");
  m->add_response_header(resp, "Content-Security-Policy",
                         "default-src 'self'; img-src 'self' data: blob:; style-src 'self'; "
                         "script-src 'self'; connect-src 'self'; frame-ancestors 'none'");
  m->add_response_header(resp, "X-Content-Type-Options", "nosniff");
  m->add_response_header(resp, "Referrer-Policy", "no-referrer");
  m->add_response_header(resp, "X-Frame-Options", "DENY");
}

enum MHD_Result tt_web_send(tt_web_req *r, unsigned status, const char *type, const void *body,
                            size_t len, const char *extra_name, const char *extra) {
  const tt_mhd_api *m = r->w->mhd;
  struct MHD_Response *resp =
      m->create_response_from_buffer(len, (void *)(body ? body : ""), MHD_RESPMEM_MUST_COPY);
  if (!resp) return MHD_NO;
  if (type) m->add_response_header(resp, "Content-Type", type);
  tt_web_security_headers(r->w, resp, false);
  if (extra_name) m->add_response_header(resp, extra_name, extra);
  enum MHD_Result ret = m->queue_response(r->c, status, resp);
  m->destroy_response(resp);
  return ret;
}

enum MHD_Result tt_web_send_json(tt_web_req *r, unsigned status, json_t *j) {
  char *text = json_dumps(j, JSON_COMPACT);
  json_decref(j);
  enum MHD_Result ret = tt_web_send(r, status, "application/json", text ? text : "{}",
                                    text ? strlen(text) : 2, NULL, NULL);
  free(text);
  return ret;
}

enum MHD_Result tt_web_send_error(tt_web_req *r, unsigned status, const char *fmt, ...) {
  tt_buf b = TT_BUF_INIT;
  va_list ap;
  va_start(ap, fmt);
  tt_buf_vprintf(&b, fmt, ap);
  va_end(ap);
  json_t *j = json_object();
  json_object_set_new(j, "error", tt_json_stringn(b.data ? b.data : "", b.len));
  tt_buf_free(&b);
  return tt_web_send_json(r, status, j);
}

const char *tt_web_arg(tt_web_req *r, const char *name) {
  return r->w->mhd->lookup_connection_value(r->c, MHD_GET_ARGUMENT_KIND, name);
}

bool tt_web_arg_long(tt_web_req *r, const char *name, long min, long max, long def, long *out,
                     enum MHD_Result *ret) {
  const char *v = tt_web_arg(r, name);
  *out = def;
  if (!v || !*v) return true;
  if (tt_parse_long(v, min, max, out)) return true;
  *ret = tt_web_send_error(r, 400, "?%s= must be a whole number from %ld to %ld, not '%s'", name,
                           min, max, v);
  return false;
}

const char *tt_web_header(tt_web_req *r, const char *name) {
  return r->w->mhd->lookup_connection_value(r->c, MHD_HEADER_KIND, name);
}

json_t *tt_web_body_object(tt_web_req *r, enum MHD_Result *ret) {
  json_error_t e;
  json_t *j = r->body_len ? json_loadb(r->body, r->body_len, JSON_REJECT_DUPLICATES, &e) : NULL;
  if (!json_is_object(j)) {
    json_decref(j);
    *ret = tt_web_send_error(r, 400, "the request body must be a JSON object (%s); see docs/reference/web-api.md",
                             r->body_len ? e.text : "the body is empty");
    return NULL;
  }
  return j;
}

static enum MHD_Result tt_web_send_page(tt_web_req *r, unsigned status, const char *title,
                                        const char *text) {
  tt_buf b = TT_BUF_INIT;
  tt_buf_printf(&b,
                "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>%s</title>"
                "</head><body><h1>%s</h1><p>%s</p></body></html>\n",
                title, title, text);
  enum MHD_Result ret = tt_web_send(r, status, "text/html; charset=utf-8", b.data, b.len, NULL, NULL);
  tt_buf_free(&b);
  return ret;
}

/* ---- guards ------------------------------------------------------------------- */

/* Host must be an address this server is reached by, with its port (DNS
 * rebinding: a page of evil.example resolving to 127.0.0.1 still sends
 * Host: evil.example). */
static bool tt_web_host_ok(const tt_web *w, const char *host) {
  if (!host || !*host) return false;
  size_t hp = tt_httpd_host_part(host);
  const char *port = host + hp;
  char want[16];
  snprintf(want, sizeof want, ":%d", w->bound.port);
  if (strcmp(port, want) != 0) return false;
  if (w->any_host) return true;
  if (w->bound.loopback && tt_host_is_loopback(host, hp)) return true;
  size_t al = strlen(w->host_arg);
  if (al && al == hp && strncasecmp(host, w->host_arg, hp) == 0) return true;
  /* an IPv6 address given without brackets, used with them */
  return al + 2 == hp && host[0] == '[' && strncasecmp(host + 1, w->host_arg, al) == 0;
}

/* A browser's Origin must be this page's own. */
static bool tt_web_origin_ok(const char *origin, const char *host) {
  if (!origin) return true; /* not a browser, or a same-origin GET */
  return strncmp(origin, "http://", 7) == 0 && host && strcasecmp(origin + 7, host) == 0;
}

static tt_web_login *tt_web_login_new(tt_web *w) {
  tt_web_login *l = tt_xcalloc(1, sizeof *l);
  tt_random_hex(l->secret, 16);
  tt_random_hex(l->csrf, 16);
  l->last_ms = tt_now_ms();
  pthread_mutex_lock(&w->mu);
  if (w->nlogins >= TT_WEB_MAX_LOGINS) { /* the least recently seen goes */
    tt_web_login **oldest = &w->logins;
    for (tt_web_login **p = &w->logins; *p; p = &(*p)->next)
      if ((*p)->last_ms < (*oldest)->last_ms) oldest = p;
    tt_web_login *gone = *oldest;
    *oldest = gone->next;
    free(gone);
    w->nlogins--;
  }
  l->next = w->logins;
  w->logins = l;
  w->nlogins++;
  pthread_mutex_unlock(&w->mu);
  return l;
}

/* The login whose cookie this is: copies its CSRF token into csrf. */
static bool tt_web_login_find(tt_web *w, const char *secret, char *csrf) {
  if (!secret || strlen(secret) != 32) return false;
  bool found = false;
  pthread_mutex_lock(&w->mu);
  for (tt_web_login *l = w->logins; l; l = l->next) {
    if (tt_httpd_secret_equal(l->secret, secret)) {
      l->last_ms = tt_now_ms();
      memcpy(csrf, l->csrf, sizeof l->csrf);
      found = true;
      break;
    }
  }
  pthread_mutex_unlock(&w->mu);
  return found;
}

/* Who sent a request: the credentials it carries. */
typedef enum tt_web_who {
  TT_WEB_NOBODY, /* none */
  TT_WEB_BEARER, /* Authorization: Bearer with the token (scripts) */
  TT_WEB_LOGIN,  /* the cookie of a login (browsers): r->csrf is its CSRF token */
  TT_WEB_WRONG,  /* a bearer token or a cookie that is not valid */
} tt_web_who;

/* Whether the request presents credentials (right or wrong): those are
 * paced and counted by the guard. */
static bool tt_web_presents(tt_web_req *r) {
  const char *auth = tt_web_header(r, "Authorization");
  return (auth && strncasecmp(auth, "Bearer ", 7) == 0) ||
         r->w->mhd->lookup_connection_value(r->c, MHD_COOKIE_KIND, "tt_web");
}

static tt_web_who tt_web_credentials(tt_web_req *r) {
  tt_web *w = r->w;
  const char *auth = tt_web_header(r, "Authorization");
  bool bearer = auth && strncasecmp(auth, "Bearer ", 7) == 0;
  if (bearer && tt_httpd_secret_equal(w->cfg->token, auth + 7)) return TT_WEB_BEARER;
  const char *cookie = w->mhd->lookup_connection_value(r->c, MHD_COOKIE_KIND, "tt_web");
  if (cookie && tt_web_login_find(w, cookie, r->csrf)) return TT_WEB_LOGIN;
  return tt_web_presents(r) ? TT_WEB_WRONG : TT_WEB_NOBODY;
}

#define TT_WEB_NOT_LOGGED_IN                                                                    \
  "{\"error\":\"not logged in: open the URL tabletalk web printed (it carries the token), or " \
  "send Authorization: Bearer TOKEN\"}"

/* 429: the address sent too many wrong tokens; page or JSON. */
static enum MHD_Result tt_web_too_many(tt_web_req *r, bool api, unsigned retry_s) {
  char retry[16];
  snprintf(retry, sizeof retry, "%u", retry_s);
  tt_buf b = TT_BUF_INIT;
  enum MHD_Result ret;
  if (api) {
    tt_buf_printf(&b, "{\"error\":\"too many wrong tokens from this address: wait %u s, then "
                      "send the right one\"}", retry_s);
    ret = tt_web_send(r, 429, "application/json", b.data, b.len, "Retry-After", retry);
  } else {
    tt_buf_printf(&b, "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\">"
                      "<title>Too many wrong tokens</title></head><body><h1>Too many wrong "
                      "tokens</h1><p>Too many wrong tokens came from this address. Wait %u s, "
                      "then open the URL that <code>tabletalk web</code> printed.</p></body>"
                      "</html>\n", retry_s);
    ret = tt_web_send(r, 429, "text/html; charset=utf-8", b.data, b.len, "Retry-After", retry);
  }
  tt_buf_free(&b);
  return ret;
}

/* A request without valid credentials: 401, or 429 once its address has
 * sent too many wrong ones (wrong: it presented some). */
static enum MHD_Result tt_web_unauthorized(tt_web_req *r, bool api, bool wrong) {
  unsigned retry_s = 0;
  if (wrong && tt_httpd_guard_failed(r->w->guard, r->c, &retry_s) == 429)
    return tt_web_too_many(r, api, retry_s);
  if (api)
    return tt_web_send(r, 401, "application/json", TT_WEB_NOT_LOGGED_IN,
                       sizeof TT_WEB_NOT_LOGGED_IN - 1, "WWW-Authenticate",
                       "Bearer realm=\"tabletalk web\"");
  return tt_web_send_page(r, 401, "Open the link with the token",
                          "This page needs the token that <code>tabletalk web</code> printed "
                          "when it started: open the whole URL it printed "
                          "(http://&hellip;/?token=&hellip;).");
}

/* GET /?token=T: the token becomes a cookie, and the page loads without
 * the token in its address (nor in the history). */
static enum MHD_Result tt_web_exchange(tt_web_req *r, const char *token) {
  if (!tt_httpd_secret_equal(r->w->cfg->token, token)) {
    unsigned retry_s = 0;
    if (tt_httpd_guard_failed(r->w->guard, r->c, &retry_s) == 429)
      return tt_web_too_many(r, false, retry_s);
    return tt_web_send_page(r, 401, "Wrong token",
                            "This link's token is not the one this server printed. Open the URL "
                            "that <code>tabletalk web</code> printed when it started.");
  }
  tt_httpd_guard_admit(r->w->guard, r->c, true);
  tt_web_login *l = tt_web_login_new(r->w);
  char cookie[128];
  snprintf(cookie, sizeof cookie, "tt_web=%s; HttpOnly; SameSite=Strict; Path=/", l->secret);
  const tt_mhd_api *m = r->w->mhd;
  struct MHD_Response *resp = m->create_response_from_buffer(0, (void *)"", MHD_RESPMEM_PERSISTENT);
  if (!resp) return MHD_NO;
  tt_web_security_headers(r->w, resp, false);
  m->add_response_header(resp, "Location", "/");
  m->add_response_header(resp, "Set-Cookie", cookie);
  enum MHD_Result ret = m->queue_response(r->c, 303, resp);
  m->destroy_response(resp);
  return ret;
}

/* ---- routing -------------------------------------------------------------------- */

static enum MHD_Result tt_web_serve_asset(tt_web_req *r) {
  const tt_web_asset *a = tt_web_asset_find(r->path);
  if (!a) return tt_web_send_page(r, 404, "Not found", "No such page; open <a href=\"/\">/</a>.");
  const tt_mhd_api *m = r->w->mhd;
  struct MHD_Response *resp =
      m->create_response_from_buffer(a->len, (void *)a->data, MHD_RESPMEM_PERSISTENT);
  if (!resp) return MHD_NO;
  m->add_response_header(resp, "Content-Type", a->type);
  tt_web_security_headers(r->w, resp, true);
  enum MHD_Result ret = m->queue_response(r->c, 200, resp);
  m->destroy_response(resp);
  return ret;
}

static bool tt_is(const char *a, const char *b) { return strcmp(a, b) == 0; }

static enum MHD_Result tt_web_method_not_allowed(tt_web_req *r, const char *allow) {
  tt_buf b = TT_BUF_INIT;
  tt_buf_printf(&b, "{\"error\":\"%s is not allowed on %s; use %s\"}", r->method, r->path, allow);
  enum MHD_Result ret =
      tt_web_send(r, 405, "application/json", b.data, b.len, "Allow", allow);
  tt_buf_free(&b);
  return ret;
}

static enum MHD_Result tt_web_api(tt_web_req *r) {
  const char *p = r->path + 4; /* after "/api" */
  const char *m = r->method;
  if (tt_is(p, "/session"))
    return tt_is(m, "GET") ? tt_web_api_session(r) : tt_web_method_not_allowed(r, "GET");
  if (tt_is(p, "/ask"))
    return tt_is(m, "POST") ? tt_web_api_ask(r) : tt_web_method_not_allowed(r, "POST");
  if (tt_is(p, "/sql"))
    return tt_is(m, "POST") ? tt_web_api_sql(r) : tt_web_method_not_allowed(r, "POST");
  if (tt_is(p, "/queries"))
    return tt_is(m, "GET") || tt_is(m, "POST") ? tt_web_api_queries(r, NULL)
                                                : tt_web_method_not_allowed(r, "GET, POST");
  if (strncmp(p, "/queries/", 9) == 0)
    return tt_is(m, "GET") ? tt_web_api_queries(r, p + 9) : tt_web_method_not_allowed(r, "GET");
  if (tt_is(p, "/schema/values"))
    return tt_is(m, "GET") ? tt_web_api_schema_values(r) : tt_web_method_not_allowed(r, "GET");
  if (tt_is(p, "/schema"))
    return tt_is(m, "GET") ? tt_web_api_schema(r) : tt_web_method_not_allowed(r, "GET");
  if (tt_is(p, "/threads") || tt_is(p, "/threads/"))
    return tt_is(m, "GET") ? tt_web_api_threads(r, NULL) : tt_web_method_not_allowed(r, "GET");
  if (strncmp(p, "/threads/", 9) == 0) {
    if (!tt_is(m, "GET") && !tt_is(m, "PATCH") && !tt_is(m, "DELETE"))
      return tt_web_method_not_allowed(r, "GET, PATCH, DELETE");
    return tt_web_api_threads(r, p + 9);
  }
  if (strncmp(p, "/runs/", 6) == 0)
    return tt_is(m, "GET") ? tt_web_api_run(r, p + 6) : tt_web_method_not_allowed(r, "GET");
  if (tt_is(p, "/pins"))
    return tt_is(m, "GET") || tt_is(m, "POST") ? tt_web_api_pins(r, NULL)
                                                : tt_web_method_not_allowed(r, "GET, POST");
  if (strncmp(p, "/pins/", 6) == 0)
    return tt_is(m, "GET") || tt_is(m, "PATCH") || tt_is(m, "DELETE")
               ? tt_web_api_pins(r, p + 6)
               : tt_web_method_not_allowed(r, "GET, PATCH, DELETE");
  if (strncmp(p, "/charts/", 8) == 0)
    return tt_is(m, "GET") ? tt_web_api_chart(r, p + 8) : tt_web_method_not_allowed(r, "GET");
  return tt_web_send_error(r, 404, "no endpoint %s; the API is described in docs/reference/web-api.md",
                           r->path);
}

static bool tt_web_is_api(const char *url) {
  return strncmp(url, "/api/", 5) == 0 || tt_is(url, "/api");
}

/* The first call of a request: its headers are in, none of its body has
 * been read. Host, Origin and the credentials are checked here, so a peer
 * without the token is answered (and its connection closed, since MHD
 * then reads no body) before it can send one, and the token holder's
 * connection is admitted by the guard. A presented token or cookie first
 * waits if its address has sent too many wrong ones. true: go on
 * receiving; false with *ret once answered. */
static bool tt_web_gate(tt_web *w, struct MHD_Connection *c, const char *url, const char *method,
                        enum MHD_Result *ret) {
  tt_web_req r = {.w = w, .c = c, .method = method, .path = url, .body = "", .body_len = 0};
  bool api = tt_web_is_api(url);
  const char *host = tt_web_header(&r, "Host");
  if (!tt_web_host_ok(w, host)) {
    if (api)
      *ret = tt_web_send_error(&r, 403, "the Host header does not name this server (it is "
                                        "reached at its own address only); open the URL it printed");
    else
      *ret = tt_web_send_page(&r, 403, "Forbidden",
                              "This server answers only at the address it printed when it started.");
    return false;
  }
  if (!tt_web_origin_ok(tt_web_header(&r, "Origin"), host)) {
    *ret = tt_web_send_error(&r, 403, "requests from another site (Origin) are refused; use the "
                                      "page this server serves");
    return false;
  }
  const char *token = tt_is(method, "GET") && tt_is(url, "/")
                          ? w->mhd->lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "token")
                          : NULL;
  if ((token || tt_web_presents(&r)) && !tt_httpd_guard_pace(w->guard, c)) {
    *ret = MHD_NO; /* it went while it waited */
    return false;
  }
  if (token) {
    *ret = tt_web_exchange(&r, token);
    return false;
  }
  tt_web_who who = tt_web_credentials(&r);
  if (who != TT_WEB_BEARER && who != TT_WEB_LOGIN) {
    *ret = tt_web_unauthorized(&r, api, who == TT_WEB_WRONG);
    return false;
  }
  tt_httpd_guard_admit(w->guard, c, true);
  if (tt_httpd_declared_too_large(w->mhd, c, TT_WEB_MAX_BODY)) {
    *ret = tt_web_send_error(&r, 413, "the request body is larger than %u bytes", TT_WEB_MAX_BODY);
    return false;
  }
  return true;
}

/* The last call: the request passed the gate and its body is in. */
static enum MHD_Result tt_web_route(tt_web *w, struct MHD_Connection *c, const char *url,
                                    const char *method, tt_httpd_body *b) {
  tt_web_req r = {.w = w, .c = c, .method = method, .path = url,
                  .body = b->data.data ? b->data.data : "", .body_len = b->data.len};
  bool api = tt_web_is_api(url);
  /* again, for the login's CSRF token (and a login dropped meanwhile) */
  tt_web_who who = tt_web_credentials(&r);
  if (who != TT_WEB_BEARER && who != TT_WEB_LOGIN) return tt_web_unauthorized(&r, api, false);
  bool changes = tt_is(method, "POST") || tt_is(method, "PATCH") || tt_is(method, "DELETE") ||
                 tt_is(method, "PUT");
  if (changes && who != TT_WEB_BEARER) {
    const char *given = tt_web_header(&r, "X-CSRF-Token");
    if (!given || !tt_httpd_secret_equal(r.csrf, given))
      return tt_web_send_error(&r, 403, "missing or wrong CSRF token; reload the page");
  }
  if (api) return tt_web_api(&r);
  if (!tt_is(method, "GET") && !tt_is(method, "HEAD")) return tt_web_method_not_allowed(&r, "GET");
  return tt_web_serve_asset(&r);
}

static enum MHD_Result tt_web_access(void *cls, struct MHD_Connection *c, const char *url,
                                     const char *method, const char *version, const char *upload,
                                     size_t *upload_size, void **con_cls) {
  (void)version;
  tt_web *w = cls;
  enum MHD_Result ret;
  if (!*con_cls && !tt_web_gate(w, c, url, method, &ret)) return ret;
  tt_httpd_body *b = tt_httpd_body_collect(con_cls, upload, upload_size, TT_WEB_MAX_BODY);
  if (!b) return MHD_YES;
  if (b->too_large) { /* a chunked body, counted as it came */
    char json[96];
    int n = snprintf(json, sizeof json, "{\"error\":\"the request body is larger than %u bytes\"}",
                     TT_WEB_MAX_BODY);
    return tt_httpd_body_refuse(w->guard, c, b, json, (size_t)n);
  }
  return tt_web_route(w, c, url, method, b);
}

/* The body of an error the guard answers itself (httpd.h). */
static void tt_web_error_body(void *ud, unsigned status, const char *message, tt_buf *out) {
  (void)ud;
  (void)status;
  json_t *j = json_object();
  json_object_set_new(j, "error", json_string(message));
  char *text = json_dumps(j, JSON_COMPACT);
  json_decref(j);
  if (text) tt_buf_puts(out, text);
  free(text);
}

/* ---- the server ------------------------------------------------------------------- */

static bool tt_web_wildcard(const char *host) {
  return host && (tt_is(host, "0.0.0.0") || tt_is(host, "::") || tt_is(host, "[::]"));
}

int tt_web_serve(const tt_web_config *cfg, volatile sig_atomic_t *stop, tt_error *err) {
  if (!cfg->token) {
    tt_error_set(err, TT_ERR_CONFIG, "the access token is missing");
    return 1;
  }
  if (!tt_httpd_token_check(cfg->token, "the access token", err)) return 1;
  const tt_schema *schema = tt_service_schema(cfg->svc, err);
  if (!schema) return 1;
  const tt_mhd_api *mhd = tt_mhd_api_get(err);
  if (!mhd) return 1;
  tt_httpd_guard *guard = tt_httpd_guard_new(mhd, tt_web_error_body, NULL, err);
  if (!guard) return 1;
  tt_web w;
  memset(&w, 0, sizeof w);
  w.cfg = cfg;
  w.schema = schema;
  w.mhd = mhd;
  w.guard = guard;
  w.any_host = tt_web_wildcard(cfg->host);
  const char *h = cfg->host && *cfg->host ? cfg->host : "127.0.0.1";
  size_t hl = strlen(h);
  if (hl >= 2 && h[0] == '[' && h[hl - 1] == ']')
    snprintf(w.host_arg, sizeof w.host_arg, "%.*s", (int)(hl - 2), h + 1);
  else
    snprintf(w.host_arg, sizeof w.host_arg, "%s", h);
  pthread_mutex_init(&w.mu, NULL);
  tt_httpd_workers_init(&w.workers);
  struct MHD_Daemon *d = tt_httpd_start(mhd, guard, cfg->host, cfg->port, tt_web_access, &w,
                                        tt_httpd_body_done, TT_WEB_FIRST_TIMEOUT_S, &w.bound, err);
  if (!d) {
    tt_httpd_workers_finish(&w.workers);
    pthread_mutex_destroy(&w.mu);
    tt_httpd_guard_free(guard);
    return 1;
  }
  if (cfg->on_listen) {
    tt_buf url = TT_BUF_INIT;
    if (w.any_host) {
      tt_buf_printf(&url, "http://127.0.0.1:%d", w.bound.port);
    } else {
      tt_httpd_base_url(&w.bound, &url);
    }
    tt_buf_printf(&url, "/?token=%s", cfg->token);
    cfg->on_listen(cfg->ud, tt_buf_cstr(&url));
    tt_buf_free(&url);
  }
  while (!*stop) {
    struct timespec ts = {0, 50 * 1000000L};
    nanosleep(&ts, NULL);
    tt_httpd_workers_reap(&w.workers);
    tt_httpd_guard_sweep(guard);
  }
  /* stop: questions are cancelled and end their streams, then the
   * connections close */
  pthread_mutex_lock(&w.mu);
  w.stopping = 1;
  pthread_mutex_unlock(&w.mu);
  tt_web_asks_cancel(&w);
  tt_httpd_workers_finish(&w.workers);
  mhd->stop_daemon(d);
  tt_httpd_guard_free(guard);
  while (w.logins) {
    tt_web_login *n = w.logins->next;
    free(w.logins);
    w.logins = n;
  }
  pthread_mutex_destroy(&w.mu);
  return 0;
}
