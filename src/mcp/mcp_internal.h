/* mcp_internal.h — what the files of the MCP layer share: JSON-RPC
 * helpers, the per-connection state of the handshake revisions, the call a
 * transport hands to the protocol core, and the request the core hands to
 * each method. Transports (stdio.c, http.c) know framing; the core
 * (server.c, tools.c, content.c) knows MCP; neither reaches into the other. */
#ifndef TT_MCP_INTERNAL_H
#define TT_MCP_INTERNAL_H

#include <pthread.h>

#include "mcp/mcp.h"

#define TT_MCP_MODERN "2026-07-28"
/* What a handshake-era request without any version information is taken
 * to speak (the transports specification says so for HTTP). */
#define TT_MCP_LEGACY_FALLBACK "2025-03-26"
#define TT_MCP_LEGACY_LATEST "2025-11-25"

/* "2025-11-25", "2025-06-18", "2025-03-26", NULL */
extern const char *const tt_mcp_legacy_versions[];
bool tt_mcp_is_legacy_version(const char *v);

enum {
  TT_RPC_PARSE_ERROR = -32700,
  TT_RPC_INVALID_REQUEST = -32600,
  TT_RPC_METHOD_NOT_FOUND = -32601,
  TT_RPC_INVALID_PARAMS = -32602,
  TT_RPC_INTERNAL_ERROR = -32603,
  TT_MCP_RESOURCE_NOT_FOUND = -32002,    /* handshake revisions only */
  TT_MCP_HEADER_MISMATCH = -32020,       /* 2026-07-28 */
  TT_MCP_MISSING_CAPABILITY = -32021,    /* 2026-07-28 */
  TT_MCP_UNSUPPORTED_VERSION = -32022,   /* 2026-07-28 */
};

/* ---- JSON-RPC ------------------------------------------------------------ */

typedef enum tt_rpc_kind {
  TT_RPC_REQUEST,
  TT_RPC_NOTIFICATION,
  TT_RPC_RESPONSE,
  TT_RPC_INVALID,
} tt_rpc_kind;

/* What msg is; for TT_RPC_INVALID, *why says what is wrong with it. */
tt_rpc_kind tt_rpc_classify(const json_t *msg, const char **why);
/* The id of msg when it is usable in a reply (string or integer), else
 * NULL (borrowed). */
const json_t *tt_rpc_usable_id(const json_t *msg);
/* {"jsonrpc":"2.0","id":id,"error":{...}}; id NULL gives "id":null; data
 * is stolen (may be NULL). */
json_t *tt_rpc_error(const json_t *id, int code, const char *message, json_t *data);
/* result is borrowed. */
json_t *tt_rpc_result(const json_t *id, const json_t *result);
json_t *tt_rpc_notification(const char *method, json_t *params);
/* One line of compact JSON, unsafe code points escaped, no newline. */
void tt_rpc_dump(tt_buf *out, const json_t *msg);
/* A key for maps of ids: "s:<text>" or "n:<integer>". */
char *tt_rpc_id_key(const json_t *id);

/* ---- connections ----------------------------------------------------------- */

typedef struct tt_mcp_conn tt_mcp_conn;
typedef struct tt_mcp_call tt_mcp_call;

/* One stdio connection or one HTTP session of a handshake revision: the
 * negotiated version, the client's capabilities, the requests in flight
 * (for notifications/cancelled) and the server's own requests waiting for
 * the client's response. */
tt_mcp_conn *tt_mcp_conn_new(void);
void tt_mcp_conn_free(tt_mcp_conn *c);
/* Records a completed initialize. */
void tt_mcp_conn_set_legacy(tt_mcp_conn *c, const char *version, const json_t *caps);
/* Copies the negotiated version into version (false when not initialized)
 * and returns a new reference to the capabilities. */
bool tt_mcp_conn_legacy(tt_mcp_conn *c, char version[16], json_t **caps);
/* A request in flight, until untracked (its flag must live that long). */
typedef struct tt_inflight tt_inflight;
tt_inflight *tt_mcp_conn_track(tt_mcp_conn *c, const json_t *id, volatile sig_atomic_t *flag);
void tt_mcp_conn_untrack(tt_mcp_conn *c, tt_inflight *f);
/* Sets the flag of request id; false when no such request is in flight. */
bool tt_mcp_conn_cancel(tt_mcp_conn *c, const json_t *id);
void tt_mcp_conn_cancel_all(tt_mcp_conn *c);
/* Sends a request from the server through call->send and waits for the
 * client's response (its "result", new reference), for at most timeout_ms,
 * while call->cancel stays clear. NULL with the reason in err otherwise. */
json_t *tt_mcp_conn_request(tt_mcp_conn *c, tt_mcp_call *call, const char *method,
                            json_t *params, double timeout_ms, tt_error *err);
/* Hands a response from the client to the request waiting for it; false
 * when none waits. */
bool tt_mcp_conn_deliver(tt_mcp_conn *c, const json_t *response);
/* No more responses can come (the input ended): waiting requests fail. */
void tt_mcp_conn_close(tt_mcp_conn *c);
/* Seconds since the connection last served a request (HTTP sessions). */
double tt_mcp_conn_idle_s(tt_mcp_conn *c);
void tt_mcp_conn_touch(tt_mcp_conn *c);

/* ---- calls: one incoming message, as a transport hands it over ----------- */

struct tt_mcp_call {
  tt_mcp_conn *conn;          /* NULL: stateless (2026-07-28 over HTTP) */
  /* Sends a message that belongs to this request (progress, a server
   * request) before its response; NULL when the transport cannot. */
  bool (*send)(void *ud, const json_t *msg);
  void *send_ud;
  volatile sig_atomic_t cancel;
  bool http;                  /* over HTTP (status codes matter) */
  /* HTTP request headers the 2026-07-28 revision checks against the body
   * (NULL when absent), without the whitespace around them (RFC 9110
   * 5.5), an Mcp-Name's =?base64?...?= not yet decoded */
  const char *header_version; /* MCP-Protocol-Version */
  const char *header_method;  /* Mcp-Method */
  const char *header_name;    /* Mcp-Name */
  /* On a transport's reading thread, which must not wait: a request is
   * answered only if that takes no waiting (run_sql from its result
   * cache, or a statement within a few milliseconds), and successfully,
   * else deferred is set and no reply made, and the transport hands the
   * request to a worker as usual. */
  bool quick;
  /* set by the core */
  int http_status;            /* 200 unless an error says otherwise */
  bool no_reply;              /* cancelled: send no response at all */
  bool deferred;              /* quick, and it could not be answered at once */
};

/* Whether msg is a 2026-07-28 request: its params._meta names a protocol
 * version (an initialize only when that version is 2026-07-28; otherwise it
 * opens a handshake). Transports use it to decide on sessions. */
bool tt_mcp_is_modern(const json_t *msg);
/* An HTTP header's value without the spaces and tabs around it (RFC 9110
 * 5.5); a new string, NULL for NULL. */
char *tt_mcp_http_field_value(const char *raw);

/* Handles one message (an object or, for 2025-03-26, a batch). Returns
 * the reply to send, or NULL when none is due (a notification, a
 * response, a cancelled request). msg is borrowed. */
json_t *tt_mcp_handle(tt_mcp_server *s, tt_mcp_call *call, const json_t *msg);
/* The error reply when a request's envelope (revision, capabilities,
 * HTTP headers) is wrong, else NULL: lets HTTP choose a status before it
 * commits to a stream. */
json_t *tt_mcp_precheck(tt_mcp_server *s, tt_mcp_call *call, const json_t *msg);
/* Parses one message (any JSON value); NULL with *e filled when it is not
 * JSON, a raw NUL byte included. */
json_t *tt_mcp_load(const char *text, size_t n, json_error_t *e);
/* The reply for a line or body that is not JSON. */
json_t *tt_mcp_parse_error(const json_error_t *e);
/* The reply for a message over the size limit. */
json_t *tt_mcp_too_large(const tt_mcp_server *s, size_t bytes);
size_t tt_mcp_max_message(const tt_mcp_server *s);
int tt_mcp_workers(const tt_mcp_server *s);

/* ---- the core's view of one request ---------------------------------------- */

typedef struct tt_mcp_req {
  tt_mcp_server *srv;
  tt_mcp_call *call;
  const json_t *id;
  const char *method;
  const json_t *params;       /* an object ({} when absent) */
  bool modern;                /* 2026-07-28 */
  char version[16];
  json_t *caps;               /* the client's capabilities (owned) */
  const json_t *progress_token;
  double progress;            /* last progress value sent */
  /* the error, when a method returns NULL */
  int err_code;
  int err_status;
  char *err_message;
  json_t *err_data;
} tt_mcp_req;

/* Records an error for r and returns NULL (status: HTTP, 0 for 200). */
json_t *tt_mcp_fail(tt_mcp_req *r, int code, int status, const char *fmt, ...) TT_PRINTF(4, 5);
/* Sends notifications/progress when the request asked for progress. */
void tt_mcp_progress(tt_mcp_req *r, const char *message);
/* ... with a question's event (its JSON, docs/reference/events.md) in the
 * notification's _meta under "tabletalk/event". */
void tt_mcp_progress_event(tt_mcp_req *r, const char *message, const json_t *event);
/* True when the client declared it can answer elicitation forms. */
bool tt_mcp_client_elicits(const tt_mcp_req *r);
/* The revision is at least v (2025-06-18 ...); the modern one always is. */
bool tt_mcp_version_at_least(const tt_mcp_req *r, const char *v);

/* ---- what the server holds ---------------------------------------------------- */

typedef struct tt_sql_cache tt_sql_cache;

struct tt_mcp_server {
  tt_mcp_config cfg;
  tt_db_opts db_opts;       /* each run_sql handle: a preview, the rest counted */
  char *db_name;            /* file name, for descriptions */
  const char *dialect;      /* "SQLite" or "PostgreSQL" */
  pthread_mutex_t mu;       /* instructions */
  char *instructions;       /* NULL until built with the schema's tables */
  json_t *tools;            /* tool definitions, in list order */
  json_t *prompts;
  unsigned char state_key[32]; /* signs requestState */
  pthread_mutex_t pool_mu;  /* database handles for run_sql */
  tt_db **pool;
  size_t npool, pool_cap;
  tt_sql_cache *cache;      /* run_sql results while the file is unchanged */
};

/* The schema, read once in the background: waits until it is there. NULL
 * with the reason in err when it could not be read. */
const tt_schema *tt_mcp_schema(tt_mcp_server *s, tt_error *err);
/* The server's instructions (owned): with the tables when the schema is
 * read, else (after a short wait) without them. */
char *tt_mcp_instructions(tt_mcp_server *s);

/* A read-only handle of the database (opened when none is free). */
tt_db *tt_mcp_db_acquire(tt_mcp_server *s, tt_error *err);
/* A free handle, or NULL when none is (nothing is opened). */
tt_db *tt_mcp_db_acquire_free(tt_mcp_server *s);
void tt_mcp_db_release(tt_mcp_server *s, tt_db *db);

/* tools.c */
json_t *tt_mcp_tool_defs(const tt_mcp_server *s);
json_t *tt_mcp_tools_call(tt_mcp_req *r);
tt_sql_cache *tt_sql_cache_new(void);
void tt_sql_cache_free(tt_sql_cache *c);

/* content.c: resources and prompts */
json_t *tt_mcp_prompt_defs(const tt_mcp_server *s);
json_t *tt_mcp_resources_list(tt_mcp_req *r);
json_t *tt_mcp_resource_templates(tt_mcp_req *r);
json_t *tt_mcp_resources_read(tt_mcp_req *r);
json_t *tt_mcp_prompts_get(tt_mcp_req *r);
/* Parses a pagination cursor of ours into an offset; false when the
 * cursor is not one we issued (NULL cursor: offset 0). */
bool tt_mcp_cursor_parse(const json_t *params, size_t *offset);
json_t *tt_mcp_cursor_make(size_t offset);

/* requestState: signed, expiring state handed to the client. */
char *tt_mcp_state_sign(const tt_mcp_server *s, const json_t *payload);
/* The payload, or NULL when state is forged, damaged or expired. */
json_t *tt_mcp_state_verify(const tt_mcp_server *s, const char *state);

#endif
