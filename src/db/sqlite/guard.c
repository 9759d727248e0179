/* guard.c — SQLite's read-only guard: an authorizer that allows only reads
 * and allow-listed functions, the single-statement rule and the PRAGMA
 * statement check on the text SQLite left, the wall-clock deadline, and
 * pruning of virtual-table modules that expose internals. Each refusal
 * records a reason a user can act on. (The text checks every engine makes
 * first are in ../sql_text.c.) */
#include "db/sqlite/sqlite.h"

#include <assert.h>
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* Core scalar, aggregate, window, date, math and JSON functions, plus the
 * full-text helpers and sqlite_version. Sorted for bsearch (lower case). */
static const char *const tt_allowed_functions[] = {
    "->", "->>", "abs", "acos", "acosh", "asin", "asinh", "atan", "atan2",
    "atanh", "avg", "bm25", "ceil", "ceiling", "changes", "char", "coalesce",
    "concat", "concat_ws", "cos", "cosh", "count", "cume_dist",
    "current_date", "current_time", "current_timestamp", "date", "datetime",
    "degrees", "dense_rank", "exp", "first_value", "floor", "format", "glob",
    "group_concat", "hex", "highlight", "if", "ifnull", "iif", "instr",
    "json", "json_array", "json_array_length", "json_error_position",
    "json_extract", "json_group_array", "json_group_object", "json_insert",
    "json_object", "json_patch", "json_pretty", "json_quote", "json_remove",
    "json_replace", "json_set", "json_type", "json_valid", "jsonb",
    "jsonb_array", "jsonb_extract", "jsonb_group_array", "jsonb_group_object",
    "jsonb_insert", "jsonb_object", "jsonb_patch", "jsonb_remove",
    "jsonb_replace", "jsonb_set", "julianday", "lag", "last_insert_rowid",
    "last_value", "lead", "length", "like", "likelihood", "likely", "ln",
    "log", "log10", "log2", "lower", "ltrim", "match", "matchinfo", "max", "median", "min",
    "mod", "nth_value", "ntile", "nullif", "octet_length", "offsets", "percent_rank",
    "percentile", "percentile_cont", "percentile_disc", "pi", "pow", "power",
    "printf", "quote", "radians", "random", "randomblob", "rank", "replace",
    "round", "row_number", "rtrim", "sign", "sin", "sinh", "snippet",
    "soundex", "sqlite_version", "sqrt", "strftime", "string_agg", "substr",
    "substring", "sum", "tan", "tanh", "time", "timediff", "total",
    "total_changes", "trim", "trunc", "typeof", "unhex", "unicode",
    "unixepoch", "unlikely", "upper", "zeroblob",
};

/* Pragmas whose table-valued functions may run (read-only schema info). */
static const char *const tt_allowed_pragmas[] = {
    "foreign_key_list", "index_info", "index_list", "index_xinfo",
    "table_info", "table_xinfo",
};

/* Virtual tables that expose storage internals or other statements. */
static const char *const tt_forbidden_tables[] = {
    "bytecode", "dbstat", "sqlite_dbdata", "sqlite_dbpage", "sqlite_dbptr",
    "sqlite_stmt", "tables_used",
};

/* Modules kept on the connection: the JSON table functions and what a
 * database's own virtual tables may need. Everything else is dropped. */
static const char *tt_kept_modules[] = {
    "json_each", "json_tree", "fts3", "fts4", "fts5", "fts5vocab",
    "rtree", "rtree_i32", "geopoly", NULL,
};

static int tt_cmp_name(const void *key, const void *elem) {
  return strcasecmp((const char *)key, *(const char *const *)elem);
}

static bool tt_in_list(const char *name, const char *const *list, size_t n) {
  return name && bsearch(name, list, n, sizeof *list, tt_cmp_name) != NULL;
}

/* Functions whose result can differ between two runs on the same data:
 * the clock, randomness and the connection's own counters. A statement
 * calling one is not repeatable (see tt_result.repeatable). */
static const char *const tt_varying_functions[] = {
    "changes", "current_date", "current_time", "current_timestamp", "date", "datetime",
    "julianday", "last_insert_rowid", "random", "randomblob", "strftime", "time", "timediff",
    "total_changes", "unixepoch",
};

#define TT_IN(name, list) tt_in_list(name, list, sizeof list / sizeof list[0])

static bool tt_table_forbidden(const char *t) {
  if (TT_IN(t, tt_forbidden_tables)) return true;
  if (strncasecmp(t, "pragma_", 7) == 0) return !TT_IN(t + 7, tt_allowed_pragmas);
  return false;
}

/* Records why a statement is refused. The first reason explains best,
 * except a "weak" one: SQLite reports a write to the schema table before
 * DROP TABLE (and stops there if it is denied), so such writes are let
 * through the authorizer with a note, and the statement's own reason, if it
 * comes, replaces the note. The read-only connection, DEFENSIVE mode and
 * the sqlite3_stmt_readonly check refuse the write regardless. */
static void tt_note(tt_sqlite *s, bool weak, tt_db_refusal why, const char *fmt, va_list ap)
    TT_PRINTF(4, 0);

static void tt_note(tt_sqlite *s, bool weak, tt_db_refusal why, const char *fmt, va_list ap) {
  if (s->denied && !s->deny_weak) return;
  if (s->denied && weak) return;
  vsnprintf(s->deny, sizeof s->deny, fmt, ap);
  s->deny_reason = why;
  s->denied = true;
  s->deny_weak = weak;
}

static int tt_deny(tt_sqlite *s, tt_db_refusal why, const char *fmt, ...) TT_PRINTF(3, 4);

static int tt_deny(tt_sqlite *s, tt_db_refusal why, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  tt_note(s, false, why, fmt, ap);
  va_end(ap);
  return SQLITE_DENY;
}

static int tt_note_weak(tt_sqlite *s, const char *fmt, ...) TT_PRINTF(2, 3);

/* Weak notes are writes to the schema table. */
static int tt_note_weak(tt_sqlite *s, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  tt_note(s, true, TT_REFUSE_WRITE, fmt, ap);
  va_end(ap);
  return SQLITE_OK;
}

/* Tables that FTS3/4, FTS5 and R-tree keep their data in. Their modules
 * prepare (never run, on a read) statements that write them when they
 * connect, so such a write is only noted: a statement that would really
 * write is refused by sqlite3_stmt_readonly, DEFENSIVE mode (shadow tables
 * are read-only to SQL) and the read-only connection. */
static bool tt_is_shadow_table(const char *t) {
  static const char *const suffixes[] = {"_node", "_rowid", "_parent", "_content", "_segments",
                                         "_segdir", "_docsize", "_stat", "_data", "_idx",
                                         "_config"};
  size_t n = t ? strlen(t) : 0;
  for (size_t i = 0; i < sizeof suffixes / sizeof suffixes[0]; i++) {
    size_t k = strlen(suffixes[i]);
    if (n > k && strcasecmp(t + n - k, suffixes[i]) == 0) return true;
  }
  return false;
}

/* Pragmas FTS3/4 and FTS5 read when they connect and while a query steps
 * (a number each). A statement of the user's that is itself one of them is
 * refused after preparing (tt_guard_is_pragma_statement). */
static bool tt_is_module_pragma(const char *name, const char *value) {
  return !value && name && (strcasecmp(name, "data_version") == 0 || strcasecmp(name, "page_size") == 0);
}

static bool tt_is_schema_table(const char *t) {
  return t && (strcasecmp(t, "sqlite_master") == 0 || strcasecmp(t, "sqlite_temp_master") == 0 ||
               strcasecmp(t, "sqlite_schema") == 0 || strcasecmp(t, "sqlite_temp_schema") == 0);
}

#define S(x) ((x) ? (x) : "?")

static int tt_authorize(void *ud, int code, const char *a1, const char *a2,
                        const char *dbname, const char *inner) {
  tt_sqlite *s = ud;
  (void)dbname;
  (void)inner;
  if (s->internal) return SQLITE_OK; /* tabletalk's own BEGIN and COMMIT */
  switch (code) {
  case SQLITE_SELECT:
  case SQLITE_RECURSIVE:
    return SQLITE_OK;
  case SQLITE_READ:
    if (a1 && tt_table_forbidden(a1))
      return tt_deny(s, strncasecmp(a1, "pragma_", 7) == 0 ? TT_REFUSE_PRAGMA : TT_REFUSE_INTERNALS,
                     "reading %s is not allowed: it exposes database internals, not data", a1);
    return SQLITE_OK;
  case SQLITE_FUNCTION:
    if (TT_IN(a2, tt_varying_functions)) s->varies = true;
    if (TT_IN(a2, tt_allowed_functions)) return SQLITE_OK;
    return tt_deny(s, TT_REFUSE_FUNCTION, "function not allowed: %s() (only built-in scalar, "
                       "aggregate, window, date, math and JSON functions can "
                       "be used)", S(a2));
  case SQLITE_UPDATE:
    /* SQLite 3.40 reports this while it sets up json_each, json_tree and
     * pragma table functions; the connection stays read-only regardless. */
    if (a1 && strcasecmp(a1, "sqlite_master") == 0) return SQLITE_OK;
    if (tt_is_shadow_table(a1))
      return tt_note_weak(s, "writes are not allowed: UPDATE of %s", S(a1));
    return tt_deny(s, TT_REFUSE_WRITE, "writes are not allowed: UPDATE of %s", S(a1));
  case SQLITE_PRAGMA:
    if (s->stepping && TT_IN(a1, tt_allowed_pragmas)) return SQLITE_OK;
    if (tt_is_module_pragma(a1, a2)) return SQLITE_OK;
    if (s->stepping)
      return tt_deny(s, TT_REFUSE_PRAGMA, "pragma_%s is not allowed (readable: pragma_table_info, "
                         "pragma_table_xinfo, pragma_index_list, "
                         "pragma_index_info, pragma_index_xinfo, "
                         "pragma_foreign_key_list)", S(a1));
    return tt_deny(s, TT_REFUSE_PRAGMA, "PRAGMA statements are not allowed: PRAGMA %s (to read "
                       "a table's columns use SELECT * FROM "
                       "pragma_table_info('Table'))", S(a1));
  case SQLITE_INSERT:
    if (tt_is_schema_table(a1) || tt_is_shadow_table(a1))
      return tt_note_weak(s, "writes are not allowed: INSERT into %s", S(a1));
    return tt_deny(s, TT_REFUSE_WRITE, "writes are not allowed: INSERT into %s", S(a1));
  case SQLITE_DELETE:
    if (tt_is_schema_table(a1) || tt_is_shadow_table(a1))
      return tt_note_weak(s, "writes are not allowed: DELETE on %s", S(a1));
    return tt_deny(s, TT_REFUSE_WRITE, "writes are not allowed: DELETE on %s", S(a1));
  case SQLITE_CREATE_INDEX: case SQLITE_CREATE_TEMP_INDEX:
    return tt_deny(s, TT_REFUSE_SCHEMA, "schema changes are not allowed: CREATE INDEX %s", S(a1));
  case SQLITE_CREATE_TABLE: case SQLITE_CREATE_TEMP_TABLE:
    if (a1 && strncasecmp(a1, "sqlite_stat", 11) == 0) /* ANALYZE creates these first */
      return tt_deny(s, TT_REFUSE_SCHEMA, "ANALYZE is not allowed: it writes statistics tables");
    return tt_deny(s, TT_REFUSE_SCHEMA, "schema changes are not allowed: CREATE TABLE %s", S(a1));
  case SQLITE_CREATE_TRIGGER: case SQLITE_CREATE_TEMP_TRIGGER:
    return tt_deny(s, TT_REFUSE_SCHEMA,
                   "schema changes are not allowed: CREATE TRIGGER %s", S(a1));
  case SQLITE_CREATE_VIEW: case SQLITE_CREATE_TEMP_VIEW:
    return tt_deny(s, TT_REFUSE_SCHEMA, "schema changes are not allowed: CREATE VIEW %s", S(a1));
  case SQLITE_CREATE_VTABLE:
    return tt_deny(s, TT_REFUSE_SCHEMA,
                   "schema changes are not allowed: CREATE VIRTUAL TABLE %s", S(a1));
  case SQLITE_DROP_INDEX: case SQLITE_DROP_TEMP_INDEX:
    return tt_deny(s, TT_REFUSE_SCHEMA, "schema changes are not allowed: DROP INDEX %s", S(a1));
  case SQLITE_DROP_TABLE: case SQLITE_DROP_TEMP_TABLE:
    return tt_deny(s, TT_REFUSE_SCHEMA, "schema changes are not allowed: DROP TABLE %s", S(a1));
  case SQLITE_DROP_TRIGGER: case SQLITE_DROP_TEMP_TRIGGER:
    return tt_deny(s, TT_REFUSE_SCHEMA, "schema changes are not allowed: DROP TRIGGER %s", S(a1));
  case SQLITE_DROP_VIEW: case SQLITE_DROP_TEMP_VIEW:
    return tt_deny(s, TT_REFUSE_SCHEMA, "schema changes are not allowed: DROP VIEW %s", S(a1));
  case SQLITE_DROP_VTABLE:
    return tt_deny(s, TT_REFUSE_SCHEMA, "schema changes are not allowed: DROP TABLE %s", S(a1));
  case SQLITE_ALTER_TABLE:
    return tt_deny(s, TT_REFUSE_SCHEMA, "schema changes are not allowed: ALTER TABLE %s", S(a2));
  case SQLITE_ATTACH:
    return tt_deny(s, TT_REFUSE_ATTACH, "attaching other databases is not allowed: ATTACH %s",
                   a1 && *a1 ? a1 : "''");
  case SQLITE_DETACH:
    return tt_deny(s, TT_REFUSE_ATTACH, "detaching databases is not allowed: DETACH %s", S(a1));
  case SQLITE_TRANSACTION:
    return tt_deny(s, TT_REFUSE_TRANSACTION,
                   "transactions are not allowed: %s (each query runs on its own)", S(a1));
  case SQLITE_SAVEPOINT: {
    const char *verb = a1 && strcmp(a1, "BEGIN") == 0      ? "SAVEPOINT"
                       : a1 && strcmp(a1, "ROLLBACK") == 0 ? "ROLLBACK TO"
                                                           : S(a1);
    return tt_deny(s, TT_REFUSE_TRANSACTION, "savepoints are not allowed: %s %s", verb, S(a2));
  }
  case SQLITE_ANALYZE:
    return tt_deny(s, TT_REFUSE_SCHEMA, "ANALYZE is not allowed: it writes statistics tables");
  case SQLITE_REINDEX:
    return tt_deny(s, TT_REFUSE_SCHEMA, "REINDEX is not allowed: it rewrites indexes");
  default:
    return tt_deny(s, TT_REFUSE_OTHER, "this statement is not allowed: only SELECT (with WITH, "
                       "VALUES or EXPLAIN QUERY PLAN) can run (authorizer "
                       "action %d)", code);
  }
}

static int tt_progress(void *ud) {
  tt_sqlite *s = ud;
  if (tt_db_limits(s->db)->cancel && *tt_db_limits(s->db)->cancel) {
    s->cancelled = true;
    return 1;
  }
  if (s->steps_left >= 0 && s->steps_left-- == 0) { /* work, counted: the same on any machine */
    s->over_steps = true;
    return 1;
  }
  if (tt_now_ms() < s->deadline_ms) return 0;
  s->timed_out = true;
  return 1;
}

#ifndef NDEBUG
/* bsearch needs the lists in strcasecmp order; checked on every open in
 * debug builds so that an edit cannot silently unlist a name. */
static void tt_assert_sorted(const char *const *list, size_t n) {
  for (size_t i = 1; i < n; i++) assert(strcasecmp(list[i - 1], list[i]) < 0);
}
#endif

void tt_guard_install(tt_sqlite *s) {
#ifndef NDEBUG
  tt_assert_sorted(tt_allowed_functions, sizeof tt_allowed_functions / sizeof tt_allowed_functions[0]);
  tt_assert_sorted(tt_allowed_pragmas, sizeof tt_allowed_pragmas / sizeof tt_allowed_pragmas[0]);
  tt_assert_sorted(tt_forbidden_tables, sizeof tt_forbidden_tables / sizeof tt_forbidden_tables[0]);
#endif
  sqlite3_drop_modules(s->h, tt_kept_modules);
  tt_printf_guard_register(s->h);
  tt_search_guard_register(s->h);
  sqlite3_set_authorizer(s->h, tt_authorize, s);
  sqlite3_progress_handler(s->h, 1000, tt_progress, s);
}

void tt_guard_arm(tt_sqlite *s, double deadline_ms) {
  s->denied = false;
  s->deny_weak = false;
  s->deny[0] = '\0';
  s->deny_reason = TT_REFUSE_NONE;
  s->timed_out = false;
  long steps = tt_db_limits(s->db)->max_steps;
  s->steps_left = steps > 0 ? (steps + 999) / 1000 : -1; /* the handler runs every 1000 */
  s->over_steps = false;
  s->cancelled = false;
  s->varies = false;
  s->stepping = false;
  s->deadline_ms = deadline_ms;
}

/* Skips whitespace and comments. */
static const char *tt_skip_space(const char *p, const char *end) {
  while (p < end) {
    if (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r' || *p == '\f') {
      p++;
    } else if (*p == '-' && p + 1 < end && p[1] == '-') {
      while (p < end && *p != '\n') p++;
    } else if (*p == '/' && p + 1 < end && p[1] == '*') {
      p += 2;
      while (p + 1 < end && !(p[0] == '*' && p[1] == '/')) p++;
      p = p + 1 < end ? p + 2 : end;
    } else {
      break;
    }
  }
  return p;
}

bool tt_guard_is_pragma_statement(const char *sql, size_t len) {
  const char *end = sql + len, *p = tt_skip_space(sql, end);
  if (p < end && (unsigned char)*p == 0xEF) p += 3; /* a BOM, which SQLite skips */
  p = tt_skip_space(p < end ? p : end, end);
  return end - p >= 6 && strncasecmp(p, "pragma", 6) == 0 &&
         (end - p == 6 || !(isalnum((unsigned char)p[6]) || p[6] == '_'));
}

bool tt_guard_tail_is_empty(const char *p, const char *end) {
  while (p < end) {
    char c = *p;
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == ';') {
      p++;
    } else if (c == '-' && p + 1 < end && p[1] == '-') {
      while (p < end && *p != '\n') p++;
    } else if (c == '/' && p + 1 < end && p[1] == '*') {
      p += 2;
      while (p + 1 < end && !(p[0] == '*' && p[1] == '/')) p++;
      p = p + 1 < end ? p + 2 : end; /* an unterminated comment runs to the end */
    } else {
      return false;
    }
  }
  return true;
}
