/* test_mcp.c — units of the MCP layer, in process on a private copy of
 * chinook: JSON-RPC classification, base64 and HMAC, the signed
 * requestState (forged, altered and expired states refused), cursors, the
 * revision rules of tt_mcp_handle (counter-offers, the 2026-07-28
 * envelope and its HTTP headers in the order the revision checks them,
 * methods it removed, batches only in 2025-03-26, result shapes per
 * revision), and
 * the run_sql result cache: hits while the file is unchanged, misses after
 * a commit by another connection in rollback and WAL mode, never for
 * statements that call the clock or randomness. The SDK suites in
 * tests/mcp drive the same server through real transports. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mcp/mcp_internal.h"
#include "testutil.h"

static tu_scratch g_scratch;

static int setup(void **state) {
  (void)state;
  tu_scratch_make(&g_scratch);
  return 0;
}

static int teardown(void **state) {
  (void)state;
  tu_scratch_remove(&g_scratch);
  return 0;
}

/* ---- a server on the scratch copy --------------------------------------- */

typedef struct srv {
  tt_config cfg;
  tt_service *svc;
  tt_mcp_server *s;
  tt_mcp_conn *conn;
  char *state;
} srv;

static void srv_open_opts(srv *v, bool no_cache) {
  memset(v, 0, sizeof *v);
  v->state = tt_xasprintf("%s/state", g_scratch.dir);
  tt_config_init(&v->cfg);
  v->cfg.db = g_scratch.db;
  v->cfg.state_dir = v->state;
  tt_error err;
  assert_true(tt_config_resolve(&v->cfg, &err));
  v->svc = tt_service_open(&v->cfg, TT_SERVICE_SCHEMA | TT_SERVICE_NO_VALUES, &err);
  assert_non_null(v->svc);
  tt_mcp_config cfg = tt_mcp_default_config();
  cfg.svc = v->svc;
  cfg.no_cache = no_cache;
  v->s = tt_mcp_server_new(&cfg, &err);
  assert_non_null(v->s);
  v->conn = tt_mcp_conn_new();
}

static void srv_open(srv *v) { srv_open_opts(v, false); }

static void srv_close(srv *v) {
  tt_mcp_conn_free(v->conn);
  tt_mcp_server_free(v->s);
  tt_service_free(v->svc);
  tt_config_free(&v->cfg);
  free(v->state);
}

/* Handles one message given as JSON text on the connection. */
static json_t *call_text(srv *v, const char *text, int *status) {
  json_error_t e;
  json_t *msg = json_loads(text, JSON_DECODE_ANY, &e);
  assert_non_null(msg);
  tt_mcp_call call = {.conn = v->conn};
  json_t *reply = tt_mcp_handle(v->s, &call, msg);
  if (status) *status = call.http_status;
  json_decref(msg);
  return reply;
}

static int error_code(const json_t *reply) {
  return (int)json_integer_value(json_object_get(json_object_get(reply, "error"), "code"));
}

#define MODERN_META                                                                   \
  "\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\","         \
  "\"io.modelcontextprotocol/clientCapabilities\":{}}"

static json_t *run_sql(srv *v, const char *sql) {
  json_t *req = json_pack("{s:s, s:i, s:s, s:{s:s, s:{s:s}}}", "jsonrpc", "2.0", "id", 7, "method",
                          "tools/call", "params", "name", "run_sql", "arguments", "sql", sql);
  tt_mcp_call call = {.conn = v->conn};
  json_t *reply = tt_mcp_handle(v->s, &call, req);
  json_decref(req);
  assert_non_null(reply);
  json_t *res = json_incref(json_object_get(reply, "result"));
  json_decref(reply);
  assert_non_null(res);
  return res;
}

static void initialize(srv *v, const char *version) {
  char text[300];
  snprintf(text, sizeof text,
           "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":"
           "{\"protocolVersion\":\"%s\",\"capabilities\":{}}}",
           version);
  json_t *r = call_text(v, text, NULL);
  assert_non_null(json_object_get(r, "result"));
  json_decref(r);
}

/* ---- pieces ------------------------------------------------------------------ */

static void test_base64(void **state) {
  (void)state;
  tt_buf b = TT_BUF_INIT, d = TT_BUF_INIT;
  tt_base64_encode(&b, "foobar", 6, false);
  assert_string_equal(tt_buf_cstr(&b), "Zm9vYmFy");
  tt_buf_reset(&b);
  tt_base64_encode(&b, "fo", 2, false);
  assert_string_equal(tt_buf_cstr(&b), "Zm8=");
  tt_buf_reset(&b);
  tt_base64_encode(&b, "\xfb\xff", 2, true);
  assert_string_equal(tt_buf_cstr(&b), "-_8");
  /* Round trips of every length up to 64 over random bytes. */
  srand(42);
  for (size_t n = 0; n <= 64; n++) {
    unsigned char src[64];
    for (size_t i = 0; i < n; i++) src[i] = (unsigned char)rand();
    for (int url = 0; url < 2; url++) {
      tt_buf_reset(&b);
      tt_buf_reset(&d);
      tt_base64_encode(&b, src, n, url);
      assert_true(tt_base64_decode(&d, b.data ? b.data : "", b.len));
      assert_int_equal(d.len, n);
      if (n) assert_memory_equal(d.data, src, n);
    }
  }
  tt_buf_reset(&d);
  assert_false(tt_base64_decode(&d, "Zm9v!", 5));
  assert_false(tt_base64_decode(&d, "Z", 1));
  assert_false(tt_base64_decode(&d, "Zm9=", 4)); /* non-zero padding bits */
  tt_buf_free(&b);
  tt_buf_free(&d);
}

static void test_hmac(void **state) {
  (void)state;
  /* RFC 4231, test case 2. */
  char hex[65];
  const char *msg = "what do ya want for nothing?";
  assert_true(tt_hmac_sha256("Jefe", 4, msg, strlen(msg), hex));
  assert_string_equal(hex, "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
}

static void test_classify(void **state) {
  (void)state;
  static const struct {
    const char *json;
    tt_rpc_kind kind;
  } cases[] = {
      {"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}", TT_RPC_REQUEST},
      {"{\"jsonrpc\":\"2.0\",\"id\":\"a\",\"method\":\"ping\",\"params\":{}}", TT_RPC_REQUEST},
      {"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}", TT_RPC_NOTIFICATION},
      {"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}", TT_RPC_RESPONSE},
      {"{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":1,\"message\":\"x\"}}", TT_RPC_RESPONSE},
      {"{\"jsonrpc\":\"1.0\",\"id\":1,\"method\":\"ping\"}", TT_RPC_INVALID},
      {"{\"id\":1,\"method\":\"ping\"}", TT_RPC_INVALID},
      {"{\"jsonrpc\":\"2.0\",\"id\":null,\"method\":\"ping\"}", TT_RPC_INVALID},
      {"{\"jsonrpc\":\"2.0\",\"id\":1.5,\"method\":\"ping\"}", TT_RPC_INVALID},
      {"{\"jsonrpc\":\"2.0\",\"id\":{},\"method\":\"ping\"}", TT_RPC_INVALID},
      {"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"\"}", TT_RPC_INVALID},
      {"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":5}", TT_RPC_INVALID},
      {"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"x\",\"params\":[1]}", TT_RPC_INVALID},
      {"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{},\"error\":{}}", TT_RPC_INVALID},
      {"{\"jsonrpc\":\"2.0\",\"result\":{}}", TT_RPC_INVALID},
      {"[]", TT_RPC_INVALID},
      {"7", TT_RPC_INVALID},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    json_t *m = json_loads(cases[i].json, JSON_DECODE_ANY, NULL);
    assert_non_null(m);
    const char *why;
    tt_rpc_kind k = tt_rpc_classify(m, &why);
    if (k != cases[i].kind) fail_msg("%s: kind %d, want %d", cases[i].json, k, cases[i].kind);
    if (k == TT_RPC_INVALID) assert_non_null(why);
    json_decref(m);
  }
}

static void test_request_state(void **state) {
  (void)state;
  srv v;
  srv_open(&v);
  json_t *p = json_pack("{s:s, s:s, s:I}", "t", "mcp-1", "q", "Which year?", "e",
                        (json_int_t)time(NULL) + 60);
  char *st = tt_mcp_state_sign(v.s, p);
  assert_non_null(st);
  json_t *back = tt_mcp_state_verify(v.s, st);
  assert_non_null(back);
  assert_true(json_equal(back, p));
  json_decref(back);
  /* Every single-character change is refused. */
  size_t n = strlen(st);
  for (size_t i = 0; i < n; i++) {
    char *bad = tt_xstrdup(st);
    bad[i] = bad[i] == 'A' ? 'B' : 'A';
    if (strcmp(bad, st) != 0) assert_null(tt_mcp_state_verify(v.s, bad));
    free(bad);
  }
  assert_null(tt_mcp_state_verify(v.s, ""));
  assert_null(tt_mcp_state_verify(v.s, "v1.e30.00"));
  /* Expired. */
  json_object_set_new(p, "e", json_integer((json_int_t)time(NULL) - 1));
  char *old = tt_mcp_state_sign(v.s, p);
  assert_null(tt_mcp_state_verify(v.s, old));
  /* Another server (another key) does not accept it. */
  srv w;
  srv_open(&w);
  assert_null(tt_mcp_state_verify(w.s, st));
  srv_close(&w);
  free(old);
  free(st);
  json_decref(p);
  srv_close(&v);
}

static void test_cursor(void **state) {
  (void)state;
  for (size_t off = 0; off < 300; off += 37) {
    json_t *c = tt_mcp_cursor_make(off);
    json_t *params = json_pack("{s:O}", "cursor", c);
    size_t got = 99;
    assert_true(tt_mcp_cursor_parse(params, &got));
    assert_int_equal(got, off);
    json_decref(params);
    json_decref(c);
  }
  size_t got;
  json_t *junk = json_pack("{s:s}", "cursor", "not-ours");
  assert_false(tt_mcp_cursor_parse(junk, &got));
  json_decref(junk);
  junk = json_pack("{s:i}", "cursor", 3);
  assert_false(tt_mcp_cursor_parse(junk, &got));
  json_decref(junk);
}

/* ---- revisions ------------------------------------------------------------------- */

static void test_initialize_counter_offer(void **state) {
  (void)state;
  srv v;
  srv_open(&v);
  static const char *const asked[] = {"2025-03-26", "2025-06-18", "2025-11-25", "1999-01-01",
                                      "2026-07-28"};
  static const char *const got[] = {"2025-03-26", "2025-06-18", "2025-11-25", "2025-11-25",
                                    "2025-11-25"};
  for (size_t i = 0; i < 5; i++) {
    char text[200];
    snprintf(text, sizeof text,
             "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":"
             "{\"protocolVersion\":\"%s\",\"capabilities\":{}}}",
             asked[i]);
    json_t *r = call_text(&v, text, NULL);
    json_t *res = json_object_get(r, "result");
    assert_string_equal(json_string_value(json_object_get(res, "protocolVersion")), got[i]);
    assert_non_null(json_object_get(json_object_get(res, "capabilities"), "tools"));
    assert_null(json_object_get(res, "resultType")); /* not in the handshake revisions */
    json_decref(r);
  }
  json_t *r = call_text(&v, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{}}", NULL);
  assert_int_equal(error_code(r), TT_RPC_INVALID_PARAMS);
  json_decref(r);
  srv_close(&v);
}

static void test_modern_envelope(void **state) {
  (void)state;
  srv v;
  srv_open(&v);
  int status;
  json_t *r = call_text(&v, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\",\"params\":{" MODERN_META "}}",
                        &status);
  json_t *res = json_object_get(r, "result");
  assert_string_equal(json_string_value(json_object_get(res, "resultType")), "complete");
  assert_true(json_integer_value(json_object_get(res, "ttlMs")) >= 0);
  assert_string_equal(json_string_value(json_object_get(res, "cacheScope")), "private");
  json_t *tools = json_object_get(res, "tools");
  assert_int_equal(json_array_size(tools), 3);
  assert_string_equal(json_string_value(json_object_get(json_array_get(tools, 0), "name")), "ask_database");
  assert_string_equal(json_string_value(json_object_get(json_array_get(tools, 1), "name")), "run_sql");
  assert_string_equal(json_string_value(json_object_get(json_array_get(tools, 2), "name")), "describe_schema");
  assert_non_null(json_object_get(json_object_get(json_object_get(res, "_meta"),
                                                  "io.modelcontextprotocol/serverInfo"), "name"));
  json_decref(r);

  r = call_text(&v,
                "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/list\",\"params\":{\"_meta\":"
                "{\"io.modelcontextprotocol/protocolVersion\":\"2030-01-01\","
                "\"io.modelcontextprotocol/clientCapabilities\":{}}}}",
                &status);
  assert_int_equal(error_code(r), TT_MCP_UNSUPPORTED_VERSION);
  assert_int_equal(status, 400);
  json_t *data = json_object_get(json_object_get(r, "error"), "data");
  assert_string_equal(json_string_value(json_object_get(data, "requested")), "2030-01-01");
  assert_string_equal(json_string_value(json_array_get(json_object_get(data, "supported"), 0)),
                      "2026-07-28");
  json_decref(r);

  r = call_text(&v,
                "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"tools/list\",\"params\":{\"_meta\":"
                "{\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\"}}}",
                &status);
  assert_int_equal(error_code(r), TT_RPC_INVALID_PARAMS);
  json_decref(r);

  /* Methods the revision removed, and discover without the envelope. */
  r = call_text(&v, "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"ping\",\"params\":{" MODERN_META "}}", NULL);
  assert_int_equal(error_code(r), TT_RPC_METHOD_NOT_FOUND);
  json_decref(r);
  r = call_text(&v, "{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"server/discover\"}", NULL);
  assert_int_equal(error_code(r), TT_RPC_INVALID_PARAMS);
  json_decref(r);
  r = call_text(&v, "{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"server/discover\",\"params\":{" MODERN_META "}}", NULL);
  json_t *versions = json_object_get(json_object_get(r, "result"), "supportedVersions");
  assert_string_equal(json_string_value(json_array_get(versions, 0)), "2026-07-28");
  json_decref(r);

  /* HTTP: the headers must repeat the body. */
  json_t *msg = json_loads("{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":\"tools/call\",\"params\":"
                           "{\"name\":\"run_sql\",\"arguments\":{\"sql\":\"SELECT 1\"}," MODERN_META "}}",
                           0, NULL);
  tt_mcp_call call = {.http = true, .header_version = "2026-07-28", .header_method = "tools/call",
                      .header_name = "describe_schema"};
  r = tt_mcp_handle(v.s, &call, msg);
  assert_int_equal(error_code(r), TT_MCP_HEADER_MISMATCH);
  assert_int_equal(call.http_status, 400);
  json_decref(r);
  call = (tt_mcp_call){.http = true, .header_version = "2026-07-28", .header_method = "tools/call",
                       .header_name = "=?base64?cnVuX3NxbA==?="};
  r = tt_mcp_handle(v.s, &call, msg);
  assert_non_null(json_object_get(r, "result"));
  json_decref(r);
  json_decref(msg);
  srv_close(&v);
}

/* Handles msg as a request over HTTP with these header values (NULL: absent). */
static json_t *call_http(srv *v, const char *text, const char *version, const char *method,
                         const char *name, int *status) {
  json_t *msg = json_loads(text, 0, NULL);
  assert_non_null(msg);
  tt_mcp_call call = {.http = true, .header_version = version, .header_method = method,
                      .header_name = name};
  json_t *reply = tt_mcp_handle(v->s, &call, msg);
  if (status) *status = call.http_status;
  json_decref(msg);
  return reply;
}

#define RUN_SQL_MODERN                                                                    \
  "{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":\"tools/call\",\"params\":"                  \
  "{\"name\":\"run_sql\",\"arguments\":{\"sql\":\"SELECT 1\"}," MODERN_META "}}"

/* Fix 1: an HTTP field value is what lies between the optional whitespace
 * (RFC 9110 5.5); the transport trims it before the core compares. */
static void test_header_whitespace(void **state) {
  (void)state;
  static const struct { const char *raw, *want; } cases[] = {
      {"run_sql", "run_sql"},   {"  run_sql  ", "run_sql"}, {"\trun_sql \t", "run_sql"},
      {"run _sql", "run _sql"}, {" \t ", ""},               {"", ""},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    char *got = tt_mcp_http_field_value(cases[i].raw);
    assert_string_equal(got, cases[i].want);
    free(got);
  }
  assert_null(tt_mcp_http_field_value(NULL));

  srv v;
  srv_open(&v);
  char *name = tt_mcp_http_field_value("  run_sql  ");
  char *version = tt_mcp_http_field_value("\t2026-07-28 ");
  int status;
  json_t *r = call_http(&v, RUN_SQL_MODERN, version, "tools/call", name, &status);
  assert_non_null(json_object_get(r, "result"));
  assert_int_equal(status, 200);
  json_decref(r);
  /* untrimmed, the same values are a mismatch: the core compares exactly */
  r = call_http(&v, RUN_SQL_MODERN, "2026-07-28", "tools/call", "  run_sql  ", &status);
  assert_int_equal(error_code(r), TT_MCP_HEADER_MISMATCH);
  assert_int_equal(status, 400);
  json_decref(r);
  free(name);
  free(version);
  srv_close(&v);
}

/* Fix 2: under the 2026-07-28 header, a request without the envelope (no
 * _meta, or _meta without the protocol version) is invalid params, 400. */
static void test_modern_header_without_envelope(void **state) {
  (void)state;
  srv v;
  srv_open(&v);
  static const char *const bodies[] = {
      "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"server/discover\",\"params\":{}}",
      "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"}",
      "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\",\"params\":{\"_meta\":"
      "{\"io.modelcontextprotocol/clientCapabilities\":{}}}}",
      "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":"
      "{\"protocolVersion\":\"2025-11-25\",\"capabilities\":{}}}",
  };
  for (size_t i = 0; i < sizeof bodies / sizeof bodies[0]; i++) {
    int status;
    json_t *r = call_http(&v, bodies[i], "2026-07-28", NULL, NULL, &status);
    assert_int_equal(error_code(r), TT_RPC_INVALID_PARAMS);
    assert_int_equal(status, 400);
    assert_int_equal(json_integer_value(json_object_get(r, "id")), 1);
    json_t *missing = json_object_get(json_object_get(json_object_get(json_object_get(r, "error"),
                                                                      "data"), "envelope"), "missing");
    assert_true(json_array_size(missing) >= 1);
    json_decref(r);
  }
  /* Without the header (stdio, or a 2025 client) the same request is a
   * handshake-revision one and is served. */
  json_t *r = call_text(&v, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"}", NULL);
  assert_non_null(json_object_get(r, "result"));
  json_decref(r);
  r = call_http(&v, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"}", "2025-11-25", NULL,
                NULL, NULL);
  assert_non_null(json_object_get(r, "result"));
  json_decref(r);
  srv_close(&v);
}

/* Fix 3: the version header must repeat the body's version before that
 * version is judged: a mismatch is -32020 even when the body's version is
 * one this server does not speak; equal and unknown is -32022. */
static void test_header_version_mismatch(void **state) {
  (void)state;
  srv v;
  srv_open(&v);
  const char *v999 = "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"server/discover\",\"params\":{\"_meta\":"
                     "{\"io.modelcontextprotocol/protocolVersion\":\"v999.0.0\","
                     "\"io.modelcontextprotocol/clientCapabilities\":{}}}}";
  int status;
  json_t *r = call_http(&v, v999, "2026-07-28", "server/discover", NULL, &status);
  assert_int_equal(error_code(r), TT_MCP_HEADER_MISMATCH);
  assert_int_equal(status, 400);
  json_decref(r);
  r = call_http(&v, v999, NULL, "server/discover", NULL, &status);
  assert_int_equal(error_code(r), TT_MCP_HEADER_MISMATCH); /* missing */
  json_decref(r);
  r = call_http(&v, v999, "v999.0.0", "server/discover", NULL, &status);
  assert_int_equal(error_code(r), TT_MCP_UNSUPPORTED_VERSION);
  assert_int_equal(status, 400);
  json_t *data = json_object_get(json_object_get(r, "error"), "data");
  assert_string_equal(json_string_value(json_object_get(data, "requested")), "v999.0.0");
  json_decref(r);
  /* A header naming an unknown revision with no envelope: unsupported too. */
  r = call_http(&v, "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"tools/list\"}", "1999-01-01", NULL,
                NULL, &status);
  assert_int_equal(error_code(r), TT_MCP_UNSUPPORTED_VERSION);
  assert_int_equal(status, 400);
  data = json_object_get(json_object_get(r, "error"), "data");
  assert_string_equal(json_string_value(json_object_get(data, "requested")), "1999-01-01");
  json_decref(r);
  /* the matching header passes */
  r = call_http(&v, RUN_SQL_MODERN, "2026-07-28", "tools/call", "run_sql", &status);
  assert_non_null(json_object_get(r, "result"));
  json_decref(r);
  srv_close(&v);
}

/* Fix 4: 2026-07-28 has no initialize (nor ping, logging/setLevel,
 * resources/subscribe): with the modern envelope it is an unknown method,
 * 404 over HTTP, and no handshake happens. */
static void test_removed_initialize(void **state) {
  (void)state;
  srv v;
  srv_open(&v);
  const char *init = "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"initialize\",\"params\":"
                     "{\"protocolVersion\":\"2026-07-28\",\"capabilities\":{}," MODERN_META "}}";
  json_t *msg = json_loads(init, 0, NULL);
  assert_true(tt_mcp_is_modern(msg));
  json_decref(msg);
  int status;
  json_t *r = call_http(&v, init, "2026-07-28", "initialize", NULL, &status);
  assert_int_equal(error_code(r), TT_RPC_METHOD_NOT_FOUND);
  assert_int_equal(status, 404);
  assert_int_equal(json_integer_value(json_object_get(r, "id")), 5);
  json_decref(r);
  r = call_text(&v, init, NULL); /* stdio: same answer, and no session */
  assert_int_equal(error_code(r), TT_RPC_METHOD_NOT_FOUND);
  json_decref(r);
  char version[16];
  json_t *caps = NULL;
  assert_false(tt_mcp_conn_legacy(v.conn, version, &caps));
  json_decref(caps);
  static const char *const removed[] = {"ping", "logging/setLevel", "resources/subscribe",
                                        "resources/unsubscribe"};
  for (size_t i = 0; i < sizeof removed / sizeof removed[0]; i++) {
    char text[300];
    snprintf(text, sizeof text,
             "{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"%s\",\"params\":{" MODERN_META "}}",
             removed[i]);
    r = call_http(&v, text, "2026-07-28", removed[i], NULL, &status);
    assert_int_equal(error_code(r), TT_RPC_METHOD_NOT_FOUND);
    assert_int_equal(status, 404);
    json_decref(r);
  }
  /* An initialize whose _meta names a handshake revision is a handshake. */
  msg = json_loads("{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"initialize\",\"params\":"
                   "{\"protocolVersion\":\"2025-11-25\",\"capabilities\":{},\"_meta\":"
                   "{\"io.modelcontextprotocol/protocolVersion\":\"2025-11-25\"}}}",
                   0, NULL);
  assert_false(tt_mcp_is_modern(msg));
  json_decref(msg);
  srv_close(&v);
}

static void test_batches(void **state) {
  (void)state;
  srv v;
  srv_open(&v);
  const char *batch = "[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"},"
                      "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"},"
                      "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"nope\"}]";
  initialize(&v, "2025-06-18");
  json_t *r = call_text(&v, batch, NULL);
  assert_int_equal(error_code(r), TT_RPC_INVALID_REQUEST);
  json_decref(r);
  initialize(&v, "2025-03-26");
  r = call_text(&v, batch, NULL);
  assert_true(json_is_array(r));
  assert_int_equal(json_array_size(r), 2); /* the notification gets none */
  assert_non_null(json_object_get(json_array_get(r, 0), "result"));
  assert_int_equal(error_code(json_array_get(r, 1)), TT_RPC_METHOD_NOT_FOUND);
  json_decref(r);
  r = call_text(&v, "[]", NULL);
  assert_int_equal(error_code(r), TT_RPC_INVALID_REQUEST);
  json_decref(r);
  r = call_text(&v, "[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":\"2025-03-26\"}}]", NULL);
  assert_int_equal(error_code(json_array_get(r, 0)), TT_RPC_INVALID_REQUEST);
  json_decref(r);
  srv_close(&v);
}

static void test_result_shapes(void **state) {
  (void)state;
  srv v;
  srv_open(&v);
  /* 2025-03-26 has no structuredContent or outputSchema. */
  initialize(&v, "2025-03-26");
  json_t *res = run_sql(&v, "SELECT 1");
  assert_null(json_object_get(res, "structuredContent"));
  json_decref(res);
  json_t *r = call_text(&v, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\"}", NULL);
  json_t *t = json_array_get(json_object_get(json_object_get(r, "result"), "tools"), 1);
  assert_null(json_object_get(t, "outputSchema"));
  assert_true(json_is_true(json_object_get(json_object_get(t, "annotations"), "readOnlyHint")));
  json_decref(r);
  initialize(&v, "2025-06-18");
  res = run_sql(&v, "SELECT 1 AS one");
  assert_non_null(json_object_get(res, "structuredContent"));
  json_decref(res);
  /* Resource not found: -32002 in the handshake revisions, -32602 now. */
  r = call_text(&v, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"resources/read\",\"params\":{\"uri\":\"tabletalk://table/Nope\"}}", NULL);
  assert_int_equal(error_code(r), TT_MCP_RESOURCE_NOT_FOUND);
  json_decref(r);
  r = call_text(&v, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"resources/read\",\"params\":{\"uri\":\"tabletalk://table/Nope\"," MODERN_META "}}", NULL);
  assert_int_equal(error_code(r), TT_RPC_INVALID_PARAMS);
  json_decref(r);
  /* A table name that needs escaping in its URI reads back. */
  r = call_text(&v, "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"resources/read\",\"params\":{\"uri\":\"tabletalk://table/%47enre\"}}", NULL);
  const char *text = json_string_value(json_object_get(
      json_array_get(json_object_get(json_object_get(r, "result"), "contents"), 0), "text"));
  assert_non_null(text);
  assert_non_null(strstr(text, "Genre"));
  json_decref(r);
  srv_close(&v);
}

/* ---- the result cache ---------------------------------------------------------------- */

static bool cached(const json_t *res) {
  return json_is_true(json_object_get(json_object_get(res, "structuredContent"), "cached"));
}

static const char *first_cell(const json_t *res) {
  json_t *rows = json_object_get(json_object_get(res, "structuredContent"), "rows");
  return json_string_value(json_array_get(json_array_get(rows, 0), 0));
}

static void exec_rw(const char *sql) {
  sqlite3 *h;
  assert_int_equal(sqlite3_open(g_scratch.db, &h), SQLITE_OK);
  char *msg = NULL;
  if (sqlite3_exec(h, sql, NULL, NULL, &msg) != SQLITE_OK) fail_msg("%s: %s", sql, msg);
  sqlite3_close(h);
}

static void check_cache_follows_commits(void) {
  srv v;
  srv_open(&v);
  initialize(&v, "2025-11-25");
  const char *q = "SELECT Name FROM Genre WHERE GenreId = 1";
  json_t *a = run_sql(&v, q);
  assert_false(cached(a));
  assert_string_equal(first_cell(a), "Rock");
  json_t *b = run_sql(&v, q);
  assert_true(cached(b));
  assert_string_equal(first_cell(b), "Rock");
  json_decref(a);
  json_decref(b);
  /* Another connection commits: the next run sees the new data. */
  exec_rw("UPDATE Genre SET Name = 'Rock and Roll' WHERE GenreId = 1");
  a = run_sql(&v, q);
  assert_false(cached(a));
  assert_string_equal(first_cell(a), "Rock and Roll");
  json_decref(a);
  exec_rw("UPDATE Genre SET Name = 'Rock' WHERE GenreId = 1");
  a = run_sql(&v, q);
  assert_string_equal(first_cell(a), "Rock");
  json_decref(a);
  /* The clock and randomness are never cached. */
  a = run_sql(&v, "SELECT random()");
  b = run_sql(&v, "SELECT random()");
  assert_false(cached(a) || cached(b));
  json_decref(a);
  json_decref(b);
  a = run_sql(&v, "SELECT datetime('now')");
  b = run_sql(&v, "SELECT datetime('now')");
  assert_false(cached(b));
  json_decref(a);
  json_decref(b);
  srv_close(&v);
}

static void test_cache_rollback_journal(void **state) {
  (void)state;
  check_cache_follows_commits();
}

static void test_no_cache(void **state) {
  (void)state;
  srv v;
  srv_open_opts(&v, true);
  initialize(&v, "2025-11-25");
  for (int i = 0; i < 3; i++) {
    json_t *a = run_sql(&v, "SELECT Name FROM Genre WHERE GenreId = 1");
    assert_false(cached(a));
    json_decref(a);
  }
  srv_close(&v);
}

static void test_cache_wal(void **state) {
  (void)state;
  /* Keep the -wal and -shm files around so the server may read the file. */
  exec_rw("PRAGMA journal_mode=WAL");
  sqlite3 *keep;
  assert_int_equal(sqlite3_open(g_scratch.db, &keep), SQLITE_OK);
  sqlite3_exec(keep, "SELECT count(*) FROM Genre", NULL, NULL, NULL);
  check_cache_follows_commits();
  /* Many commits between two runs, with checkpoints and WAL restarts. */
  srv v;
  srv_open(&v);
  initialize(&v, "2025-11-25");
  const char *q = "SELECT count(*) FROM Genre";
  for (int i = 0; i < 20; i++) {
    json_t *a = run_sql(&v, q);
    json_t *rows = json_object_get(json_object_get(a, "structuredContent"), "rows");
    assert_int_equal(json_integer_value(json_array_get(json_array_get(rows, 0), 0)), 25 + i);
    json_decref(a);
    char sql[120];
    snprintf(sql, sizeof sql, "INSERT INTO Genre(Name) VALUES ('g%d');%s", i,
             i % 5 == 4 ? "PRAGMA wal_checkpoint(RESTART);" : "");
    exec_rw(sql);
  }
  srv_close(&v);
  sqlite3_close(keep);
  exec_rw("DELETE FROM Genre WHERE GenreId > 25; PRAGMA journal_mode=DELETE");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_base64),
      cmocka_unit_test(test_hmac),
      cmocka_unit_test(test_classify),
      cmocka_unit_test(test_cursor),
      cmocka_unit_test_setup_teardown(test_request_state, setup, teardown),
      cmocka_unit_test_setup_teardown(test_initialize_counter_offer, setup, teardown),
      cmocka_unit_test_setup_teardown(test_modern_envelope, setup, teardown),
      cmocka_unit_test_setup_teardown(test_header_whitespace, setup, teardown),
      cmocka_unit_test_setup_teardown(test_modern_header_without_envelope, setup, teardown),
      cmocka_unit_test_setup_teardown(test_header_version_mismatch, setup, teardown),
      cmocka_unit_test_setup_teardown(test_removed_initialize, setup, teardown),
      cmocka_unit_test_setup_teardown(test_batches, setup, teardown),
      cmocka_unit_test_setup_teardown(test_result_shapes, setup, teardown),
      cmocka_unit_test_setup_teardown(test_cache_rollback_journal, setup, teardown),
      cmocka_unit_test_setup_teardown(test_cache_wal, setup, teardown),
      cmocka_unit_test_setup_teardown(test_no_cache, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
