/* names.c — names of tables and columns as people see them: a name that
 * is not valid UTF-8 (a file may hold any bytes) is shown with each
 * invalid byte written \xHH, whatever the engine. */
#include "db/db_internal.h"

#include <string.h>

const char *tt_db_shown_name(tt_arena *a, const char *raw) {
  size_t n = strlen(raw), bad;
  if (tt_utf8_valid(raw, n, &bad)) return tt_arena_strdup(a, raw);
  tt_buf b = TT_BUF_INIT;
  tt_utf8_escape_invalid(&b, raw, n);
  const char *shown = tt_arena_strdup(a, tt_buf_cstr(&b));
  tt_buf_free(&b);
  return shown;
}
