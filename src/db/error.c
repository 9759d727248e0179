/* error.c — the db layer's errors, the same for every engine: setting one,
 * a refusal with its reason code, the reasons' names, and the JSON form
 * front ends print. */
#include "db/db_internal.h"

#include <stdarg.h>
#include <string.h>

void tt_db_set_error(tt_error *err, tt_errkind kind, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  tt_error_vset(err, kind, fmt, ap);
  va_end(ap);
}

void tt_db_refuse(tt_error *err, tt_db_refusal reason, const char *fmt, ...) {
  if (!err) return;
  va_list ap;
  va_start(ap, fmt);
  tt_error_vset(err, TT_ERR_REFUSED, fmt, ap);
  va_end(ap);
  err->reason = (int)reason;
}

const char *tt_db_refusal_name(tt_db_refusal r) {
  static const char *const names[] = {
      [TT_REFUSE_NONE] = "none",           [TT_REFUSE_WRITE] = "write",
      [TT_REFUSE_SCHEMA] = "schema",       [TT_REFUSE_ATTACH] = "attach",
      [TT_REFUSE_TRANSACTION] = "transaction", [TT_REFUSE_PRAGMA] = "pragma",
      [TT_REFUSE_FUNCTION] = "function",   [TT_REFUSE_INTERNALS] = "internals",
      [TT_REFUSE_MULTIPLE] = "multiple",   [TT_REFUSE_EXPLAIN] = "explain",
      [TT_REFUSE_TEXT] = "text",           [TT_REFUSE_EMPTY] = "empty",
      [TT_REFUSE_OTHER] = "other",         [TT_REFUSE_FILE] = "file",
  };
  return (size_t)r < sizeof names / sizeof names[0] && names[r] ? names[r] : "other";
}

bool tt_db_refusal_is_write(tt_db_refusal r) {
  return r == TT_REFUSE_WRITE || r == TT_REFUSE_SCHEMA;
}

json_t *tt_db_error_to_json(const tt_error *err) {
  json_t *e = json_pack("{s:s}", "kind", tt_errkind_name(err->kind));
  if (err->kind == TT_ERR_REFUSED)
    json_object_set_new(e, "reason", json_string(tt_db_refusal_name(err->reason)));
  json_object_set_new(e, "message", tt_json_stringn(err->message, strlen(err->message)));
  if (err->hint[0]) json_object_set_new(e, "hint", tt_json_stringn(err->hint, strlen(err->hint)));
  return e;
}
