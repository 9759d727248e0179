/* sql_text.c — the guard's entry, the same for every engine: before an
 * engine's own guard (SQLite's authorizer, PostgreSQL's parse-level
 * check) sees a statement, its text must hold no NUL byte, be valid UTF-8
 * and stay under the length limit. */
#include "db/db_internal.h"

#include <string.h>

bool tt_db_check_sql_text(const char *sql, size_t len, bool trusted, tt_error *err) {
  tt_error_clear(err);
  const char *nul = memchr(sql, '\0', len);
  if (nul) {
    tt_db_refuse(err, TT_REFUSE_TEXT, "the SQL text contains a NUL byte (at byte %zu); remove it",
                 (size_t)(nul - sql));
    return false;
  }
  size_t bad;
  if (!trusted && !tt_utf8_valid(sql, len, &bad)) {
    tt_db_refuse(err, TT_REFUSE_TEXT, "the SQL text is not valid UTF-8 (byte 0x%02X at offset %zu)",
                 (unsigned)(unsigned char)sql[bad], bad);
    return false;
  }
  if (len > TT_LIMIT_SQL_LENGTH) {
    tt_db_set_error(err, TT_ERR_LIMIT,
                    "the SQL text is %zu bytes, over the limit of %d; write a shorter query", len,
                    TT_LIMIT_SQL_LENGTH);
    return false;
  }
  return true;
}
