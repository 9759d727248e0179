/* error.c — the one error type of every layer (tt_error): a kind callers
 * decide on, a message saying what happened, a hint saying what to do. */
#include "util/util.h"

#include <stdio.h>
#include <string.h>

const char *tt_errkind_name(tt_errkind kind) {
  switch (kind) {
  case TT_OK: return "ok";
  case TT_ERR_CONFIG: return "config";
  case TT_ERR_IO: return "io";
  case TT_ERR_REFUSED: return "refused";
  case TT_ERR_TIMEOUT: return "timeout";
  case TT_ERR_LIMIT: return "limit";
  case TT_ERR_SQL: return "sql";
  case TT_ERR_BUSY: return "busy";
  case TT_ERR_CANCELLED: return "cancelled";
  case TT_ERR_CONNECT: return "connect";
  case TT_ERR_HTTP: return "http";
  case TT_ERR_PROTOCOL: return "protocol";
  case TT_ERR_UNAVAILABLE: return "unavailable";
  }
  return "unknown";
}

void tt_error_clear(tt_error *err) {
  if (!err) return;
  memset(err, 0, sizeof *err);
}

void tt_error_vset(tt_error *err, tt_errkind kind, const char *fmt, va_list ap) {
  if (!err) return;
  err->kind = kind;
  err->reason = 0;
  err->status = 0;
  err->line = 0;
  err->hint[0] = '\0';
  vsnprintf(err->message, sizeof err->message, fmt, ap);
}

void tt_error_set(tt_error *err, tt_errkind kind, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  tt_error_vset(err, kind, fmt, ap);
  va_end(ap);
}

void tt_error_hint(tt_error *err, const char *fmt, ...) {
  if (!err) return;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(err->hint, sizeof err->hint, fmt, ap);
  va_end(ap);
}

void tt_error_prefix(tt_error *err, const char *fmt, ...) {
  if (!err) return;
  char old[sizeof err->message];
  memcpy(old, err->message, sizeof old);
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(err->message, sizeof err->message, fmt, ap);
  va_end(ap);
  size_t at = n < 0 ? 0 : (size_t)n < sizeof err->message ? (size_t)n : sizeof err->message - 1;
  size_t room = sizeof err->message - 1 - at, len = strlen(old);
  if (len > room) len = room;
  memcpy(err->message + at, old, len);
  err->message[at + len] = '\0';
}

const char *tt_error_text(const tt_error *err) {
  static _Thread_local char text[sizeof err->message + sizeof err->hint + 2];
  if (!err) return "";
  size_t n = strlen(err->message);
  memcpy(text, err->message, n);
  if (err->hint[0]) {
    if (n) {
      memcpy(text + n, "; ", 2);
      n += 2;
    }
    size_t h = strlen(err->hint);
    memcpy(text + n, err->hint, h);
    n += h;
  }
  text[n] = '\0';
  return text;
}
