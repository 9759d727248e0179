/* rpc.c — JSON-RPC 2.0 messages: telling requests, notifications and
 * responses apart (with the reason when a message is none of them), and
 * building replies. */
#include "mcp/mcp_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static bool tt_rpc_id_ok(const json_t *id) {
  if (json_is_string(id)) return true;
  /* MCP: "a string or integer"; jansson reads 1.0 as a real. */
  return json_is_integer(id);
}

const json_t *tt_rpc_usable_id(const json_t *msg) {
  const json_t *id = json_is_object(msg) ? json_object_get(msg, "id") : NULL;
  return id && tt_rpc_id_ok(id) ? id : NULL;
}

tt_rpc_kind tt_rpc_classify(const json_t *msg, const char **why) {
  *why = NULL;
  if (!json_is_object(msg)) {
    *why = "a JSON-RPC message must be a JSON object";
    return TT_RPC_INVALID;
  }
  const json_t *v = json_object_get(msg, "jsonrpc");
  if (!json_is_string(v) || strcmp(json_string_value(v), "2.0") != 0) {
    *why = "the message lacks \"jsonrpc\": \"2.0\"";
    return TT_RPC_INVALID;
  }
  const json_t *id = json_object_get(msg, "id");
  const json_t *method = json_object_get(msg, "method");
  if (method) {
    if (!json_is_string(method) || !json_string_length(method)) {
      *why = "\"method\" must be a non-empty string";
      return TT_RPC_INVALID;
    }
    const json_t *params = json_object_get(msg, "params");
    if (params && !json_is_object(params)) {
      *why = "\"params\" must be an object (MCP passes parameters by name)";
      return TT_RPC_INVALID;
    }
    if (!id) return TT_RPC_NOTIFICATION;
    if (!tt_rpc_id_ok(id)) {
      *why = json_is_null(id) ? "\"id\" must not be null" : "\"id\" must be a string or an integer";
      return TT_RPC_INVALID;
    }
    return TT_RPC_REQUEST;
  }
  const json_t *result = json_object_get(msg, "result");
  const json_t *error = json_object_get(msg, "error");
  if ((result != NULL) != (error != NULL) && id) {
    if (error && !json_is_object(error)) {
      *why = "\"error\" must be an object";
      return TT_RPC_INVALID;
    }
    return TT_RPC_RESPONSE;
  }
  *why = "the message has no \"method\" (a request or notification) and is not a response "
         "(\"id\" with either \"result\" or \"error\")";
  return TT_RPC_INVALID;
}

json_t *tt_rpc_error(const json_t *id, int code, const char *message, json_t *data) {
  json_t *err = json_pack("{s:i, s:s}", "code", code, "message", message);
  if (data) json_object_set_new(err, "data", data);
  return json_pack("{s:s, s:O, s:o}", "jsonrpc", "2.0", "id", id ? id : json_null(), "error", err);
}

json_t *tt_rpc_result(const json_t *id, const json_t *result) {
  return json_pack("{s:s, s:O, s:O}", "jsonrpc", "2.0", "id", id, "result", result);
}

json_t *tt_rpc_notification(const char *method, json_t *params) {
  json_t *n = json_pack("{s:s, s:s}", "jsonrpc", "2.0", "method", method);
  if (params) json_object_set_new(n, "params", params);
  return n;
}

void tt_rpc_dump(tt_buf *out, const json_t *msg) {
  /* Compact JSON escapes every control character inside strings, so the
   * text is one line; tt_json_dump also escapes bidi and invisible code
   * points. Reals get 15 digits, as SQLite prints them (0.99, not
   * 0.98999999999999999). */
  tt_json_dump(out, msg, JSON_COMPACT | JSON_REAL_PRECISION(15));
}

char *tt_rpc_id_key(const json_t *id) {
  if (json_is_string(id)) return tt_xasprintf("s:%s", json_string_value(id));
  if (json_is_integer(id)) return tt_xasprintf("n:%" JSON_INTEGER_FORMAT, json_integer_value(id));
  return tt_xstrdup("?");
}
