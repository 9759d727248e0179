/* fail.c — what a failed SQLite call means for the user: the refusal the
 * authorizer recorded, the time limit or a cancel, another program's lock,
 * a hot journal or a WAL that needs recovery, a size or memory limit, or
 * SQLite's own message, each as the kind of error front ends act on. */
#include "db/sqlite/sqlite.h"

#include <string.h>

/* SQLite's messages for parse-time limits (SQLITE_ERROR with no own code). */
static const char *const tt_limit_messages[] = {
    "too many columns",          "Expression tree is too large",
    "too many terms in compound", "too many arguments on function",
    "LIKE or GLOB pattern too complex", "statement too long",
    "too many SQL variables",    "parser stack overflow",
    "too many FROM clause terms", "too many references to",
    "program too large",          "too many levels of trigger recursion",
};

static bool tt_is_limit_message(const char *msg) {
  for (size_t i = 0; i < sizeof tt_limit_messages / sizeof tt_limit_messages[0]; i++)
    if (strstr(msg, tt_limit_messages[i])) return true;
  return false;
}

void tt_db_fail(tt_sqlite *s, int rc, tt_error *err) {
  tt_db_explain_failure(s, rc, sqlite3_errmsg(s->h), err);
}

void tt_db_explain_failure(tt_sqlite *s, int rc, const char *msg, tt_error *err) {
  int primary = rc & 0xff;
  if (s->cancelled) {
    tt_db_set_error(err, TT_ERR_CANCELLED, "the query was cancelled");
  } else if (primary == SQLITE_BUSY) {
    tt_db_set_error(err, TT_ERR_BUSY,
                    "the database stayed locked by another program for the whole %.3g s time "
                    "limit; try again, or raise --timeout", tt_db_limits(s->db)->timeout_s);
  } else if (rc == SQLITE_READONLY_ROLLBACK) {
    tt_db_set_error(err, TT_ERR_IO,
                    "%s has a hot journal (%s-journal): a program stopped in the middle of a "
                    "write, and the file must be rolled back before it can be read. tabletalk "
                    "only reads: open it once with a program that may write to it (for example "
                    "sqlite3 '%s' 'PRAGMA quick_check'), or pass --immutable to read it as it is, "
                    "half-written pages included", s->db->name, s->real, s->real);
  } else if (rc == SQLITE_READONLY_RECOVERY || rc == SQLITE_READONLY_CANTINIT) {
    tt_db_set_error(err, TT_ERR_IO,
                    "%s's write-ahead log needs recovery after a program stopped while writing, "
                    "and tabletalk only reads: open it once with a program that may write to it "
                    "(for example sqlite3 '%s' 'PRAGMA quick_check')", s->db->name, s->real);
  } else if (rc == SQLITE_READONLY_DBMOVED) {
    tt_db_set_error(err, TT_ERR_IO, "%s was moved or deleted while it was open; run again",
                    s->db->name);
  } else if (s->denied && !s->deny_weak) {
    tt_db_refuse(err, s->deny_reason, "%s", s->deny);
  } else if (s->over_steps) {
    tt_db_set_error(err, TT_ERR_LIMIT,
                    "query stopped after %ld steps of work, its limit; narrow it (WHERE, LIMIT)",
                    tt_db_limits(s->db)->max_steps);
  } else if (s->timed_out || primary == SQLITE_INTERRUPT) {
    tt_db_set_error(err, TT_ERR_TIMEOUT,
                    "query stopped after the %.3g s time limit; narrow it "
                    "(WHERE, LIMIT) or raise --timeout", tt_db_limits(s->db)->timeout_s);
  } else if (primary == SQLITE_NOMEM && s->preparing &&
             sqlite3_memory_used() < TT_HEAP_LIMIT / 2) {
    /* SQLite reports a program over SQLITE_LIMIT_VDBE_OP as out of memory */
    tt_db_set_error(err, TT_ERR_LIMIT,
                    "query refused: it compiles to more than %d virtual-machine "
                    "instructions (the limit on the size of one query); a long IN list or "
                    "many OR terms do this: use a subquery, a join or a range instead",
                    TT_LIMIT_VDBE_OP);
  } else if (primary == SQLITE_NOMEM) {
    tt_db_set_error(err, TT_ERR_LIMIT,
                    "query stopped: the %lld MiB of memory SQLite may use in this process "
                    "(shared by the queries running at the same time) ran out; aggregate or "
                    "narrow the query, or try again",
                    TT_HEAP_LIMIT / (1024 * 1024));
  } else if (primary == SQLITE_TOOBIG) {
    if (tt_has_prefix(msg, "printf"))
      tt_db_set_error(err, TT_ERR_LIMIT, "query stopped: %s", msg);
    else
      tt_db_set_error(err, TT_ERR_LIMIT,
                      "query stopped: a string or blob would exceed the "
                      "%d-byte length limit", TT_LIMIT_LENGTH);
  } else if (strstr(msg, "may not be modified")) { /* sqlite_master and friends */
    tt_db_refuse(err, TT_REFUSE_WRITE, "writes are not allowed: %s", msg);
  } else if (tt_is_limit_message(msg)) {
    tt_db_set_error(err, TT_ERR_LIMIT, "query is over a size limit: %s", msg);
  } else {
    tt_db_set_error(err, TT_ERR_SQL, "%s", msg);
  }
}
