/* my_guard.c — the statement check of the MySQL/MariaDB engine (see
 * my_guard.h): the text is split by the server's lexical rules
 * (my_lex.c), then the tokens are read for what may not run. Keywords
 * count only where the server reads a keyword (not in strings, comments
 * or quoted names, nor right after a dot); a call is a name followed by
 * '(' (a blank or comment between them included); deny by default: a
 * call that is not a built-in function on the allow-list (my_words.c) is
 * refused, since it can only be a stored or loadable function of the
 * database's owner. */
#include "db/mysql/my_guard.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "db/db_internal.h"
#include "db/mysql/my_lex.h"
#include "db/mysql/my_words.h"

#define TT_MY_WORD_MAX 80

typedef struct tt_my_gw {
  const char *sql;
  const tt_my_tok *t;
  size_t n;
  tt_my_guard_mode mode;
  const tt_my_guard_opts *o;
  tt_my_refs *refs;
  tt_error *err;
  bool refused;
} tt_my_gw;

static void tt_my_refuse(tt_my_gw *w, tt_db_refusal r, const char *fmt, ...) TT_PRINTF(3, 4);
static void tt_my_refuse(tt_my_gw *w, tt_db_refusal r, const char *fmt, ...) {
  if (w->refused) return; /* the first reason found is the one given */
  w->refused = true;
  if (!w->err) return;
  va_list ap;
  va_start(ap, fmt);
  tt_error_vset(w->err, TT_ERR_REFUSED, fmt, ap);
  va_end(ap);
  w->err->reason = (int)r;
}

static void tt_my_sql_error(tt_my_gw *w, tt_errkind kind, const char *fmt, ...) TT_PRINTF(3, 4);
static void tt_my_sql_error(tt_my_gw *w, tt_errkind kind, const char *fmt, ...) {
  if (w->refused) return;
  w->refused = true;
  if (!w->err) return;
  va_list ap;
  va_start(ap, fmt);
  tt_error_vset(w->err, kind, fmt, ap);
  va_end(ap);
}

/* ---- reading tokens ------------------------------------------------------ */

static const tt_my_tok *tt_my_at(const tt_my_gw *w, size_t i) { return i < w->n ? &w->t[i] : NULL; }

/* Token i as a keyword, upper case, into out ("" when it is not one: a
 * quoted name, a string, a name after a dot, a word too long). */
static const char *tt_my_kw(const tt_my_gw *w, size_t i, char out[TT_MY_WORD_MAX]) {
  const tt_my_tok *t = tt_my_at(w, i);
  out[0] = '\0';
  if (!t || t->kind != TT_MY_TOK_WORD || t->name_only || t->len >= TT_MY_WORD_MAX) return out;
  for (size_t k = 0; k < t->len; k++) out[k] = (char)toupper((unsigned char)w->sql[t->start + k]);
  out[t->len] = '\0';
  return out;
}

static bool tt_my_kw_is(const tt_my_gw *w, size_t i, const char *word) {
  char kw[TT_MY_WORD_MAX];
  return strcmp(tt_my_kw(w, i, kw), word) == 0;
}

static bool tt_my_op_is(const tt_my_gw *w, size_t i, const char *op) {
  const tt_my_tok *t = tt_my_at(w, i);
  return t && t->kind == TT_MY_TOK_OP && t->len == strlen(op) &&
         memcmp(w->sql + t->start, op, t->len) == 0;
}

static bool tt_my_is_name(const tt_my_gw *w, size_t i) {
  const tt_my_tok *t = tt_my_at(w, i);
  return t && (t->kind == TT_MY_TOK_WORD || t->kind == TT_MY_TOK_QIDENT);
}

/* Token i's name (a quoted name unquoted), in a fresh string. */
static char *tt_my_name_dup(const tt_my_gw *w, size_t i) {
  const tt_my_tok *t = &w->t[i];
  char *out = tt_xmalloc(t->len + 1);
  tt_my_tok_name(w->sql, t, out, t->len + 1);
  return out;
}

/* The index of the ')' matching the '(' at i; n when none. */
static size_t tt_my_close_paren(const tt_my_gw *w, size_t i) {
  size_t depth = 0;
  for (size_t k = i; k < w->n; k++) {
    if (tt_my_op_is(w, k, "(")) depth++;
    else if (tt_my_op_is(w, k, ")") && --depth == 0) return k;
  }
  return w->n;
}

/* ---- what the server will have to tell ------------------------------------ */

static void tt_my_name_add(tt_my_name **list, size_t *n, size_t *cap, const char *schema,
                           const char *name) {
  for (size_t i = 0; i < *n; i++)
    if (strcasecmp((*list)[i].name, name) == 0 &&
        ((!schema && !(*list)[i].schema) ||
         (schema && (*list)[i].schema && strcasecmp((*list)[i].schema, schema) == 0)))
      return;
  if (*n == *cap) {
    *cap = *cap ? *cap * 2 : 16;
    *list = tt_xrealloc(*list, *cap * sizeof **list);
  }
  (*list)[(*n)++] = (tt_my_name){schema ? tt_xstrdup(schema) : NULL, tt_xstrdup(name)};
}

static void tt_my_ref_add(tt_my_gw *w, const char *schema, const char *name) {
  if (!w->refs || w->refused) return;
  tt_my_refs *r = w->refs;
  tt_my_name_add(&r->names, &r->nnames, &r->names_cap, schema, name);
  if (r->nnames > TT_MY_MAX_NAMES)
    tt_my_sql_error(w, TT_ERR_LIMIT,
                    "the query names more than %d different tables and columns, more than "
                    "tabletalk checks; split it into smaller queries",
                    TT_MY_MAX_NAMES);
}

static void tt_my_maybe_stored(tt_my_gw *w, const char *name) {
  if (!w->refs) return;
  tt_my_refs *r = w->refs;
  for (size_t i = 0; i < r->nmaybe; i++)
    if (strcasecmp(r->maybe_stored[i], name) == 0) return;
  if (r->nmaybe == r->maybe_cap) {
    r->maybe_cap = r->maybe_cap ? r->maybe_cap * 2 : 8;
    r->maybe_stored = tt_xrealloc(r->maybe_stored, r->maybe_cap * sizeof *r->maybe_stored);
  }
  r->maybe_stored[r->nmaybe++] = tt_xstrdup(name);
}

bool tt_my_schema_trusted(const char *list, const char *schema) {
  if (!list || !schema) return false;
  size_t len = strlen(schema);
  for (const char *p = list; *p;) {
    size_t n = strcspn(p, ",");
    const char *a = p, *b = p + n;
    while (a < b && isspace((unsigned char)*a)) a++;
    while (b > a && isspace((unsigned char)b[-1])) b--;
    if ((size_t)(b - a) == len && strncasecmp(a, schema, len) == 0) return true;
    p += n;
    if (*p == ',') p++;
  }
  return false;
}

bool tt_my_system_schema(const char *name, bool also_information_schema) {
  return strcasecmp(name, "mysql") == 0 || strcasecmp(name, "performance_schema") == 0 ||
         strcasecmp(name, "sys") == 0 ||
         (also_information_schema && strcasecmp(name, "information_schema") == 0);
}

/* ---- the statement's first words ----------------------------------------- */

/* Up to three words from token i as written, the first in upper case,
 * for messages ("CREATE TEMPORARY TABLE", "DELETE FROM Track"). */
static void tt_my_words(const tt_my_gw *w, size_t i, char *out, size_t n) {
  out[0] = '\0';
  for (size_t k = i; k < i + 3 && k < w->n; k++) {
    char kw[TT_MY_WORD_MAX];
    if (!*tt_my_kw(w, k, kw)) break;
    if (k > i) memcpy(kw, w->sql + w->t[k].start, w->t[k].len);
    if (out[0]) strncat(out, " ", n - strlen(out) - 1);
    strncat(out, kw, n - strlen(out) - 1);
  }
}

static void tt_my_refuse_statement(tt_my_gw *w, size_t i) {
  char kw[TT_MY_WORD_MAX], words[3 * TT_MY_WORD_MAX];
  tt_my_kw(w, i, kw);
  tt_my_words(w, i, words, sizeof words);
  static const char *const writes[] = {"INSERT", "UPDATE", "DELETE", "REPLACE", "LOAD", "MERGE"};
  static const char *const schema[] = {"CREATE", "DROP",  "ALTER",    "TRUNCATE", "RENAME",
                                       "GRANT",  "REVOKE", "OPTIMIZE", "REPAIR",  "CHECKSUM",
                                       "CHECK",  "INSTALL", "UNINSTALL", "IMPORT"};
  static const char *const trans[] = {"BEGIN",   "START", "COMMIT", "ROLLBACK", "SAVEPOINT",
                                      "RELEASE", "XA",    "LOCK",   "UNLOCK"};
  for (size_t k = 0; k < sizeof writes / sizeof writes[0]; k++)
    if (strcmp(kw, writes[k]) == 0) {
      tt_my_refuse(w, TT_REFUSE_WRITE, "writes are not allowed: %s; only reads run here", words);
      return;
    }
  if (strcmp(kw, "ANALYZE") == 0 && !tt_my_kw_is(w, i + 1, "TABLE") &&
      !tt_my_kw_is(w, i + 1, "NO_WRITE_TO_BINLOG") && !tt_my_kw_is(w, i + 1, "LOCAL")) {
    tt_my_refuse(w, TT_REFUSE_EXPLAIN,
                 "ANALYZE is not allowed (MariaDB's ANALYZE runs the statement): send the "
                 "SELECT itself");
    return;
  }
  if (strcmp(kw, "ANALYZE") == 0) {
    tt_my_refuse(w, TT_REFUSE_SCHEMA, "ANALYZE TABLE is not allowed: it rewrites the table's "
                                      "statistics; only reads run here");
    return;
  }
  for (size_t k = 0; k < sizeof schema / sizeof schema[0]; k++)
    if (strcmp(kw, schema[k]) == 0) {
      tt_my_refuse(w, TT_REFUSE_SCHEMA, "schema changes are not allowed: %s; only reads run here",
                   words);
      return;
    }
  for (size_t k = 0; k < sizeof trans / sizeof trans[0]; k++)
    if (strcmp(kw, trans[k]) == 0) {
      tt_my_refuse(w, TT_REFUSE_TRANSACTION,
                   "transaction control and table locks are not allowed (%s): tabletalk runs "
                   "each query in a read-only transaction of its own and rolls it back; send "
                   "only the SELECT",
                   words);
      return;
    }
  if (strcmp(kw, "EXPLAIN") == 0 || strcmp(kw, "DESCRIBE") == 0 || strcmp(kw, "DESC") == 0) {
    tt_my_refuse(w, TT_REFUSE_EXPLAIN,
                 "%s is not allowed (EXPLAIN ANALYZE runs the statement): send the SELECT "
                 "itself, or read the columns from information_schema.COLUMNS",
                 kw);
    return;
  }
  static const struct {
    const char *kw;
    tt_db_refusal r;
    const char *msg;
  } others[] = {
      {"CALL", TT_REFUSE_FUNCTION, "CALL is not allowed: a procedure can write or commit; only "
                                   "SELECT runs here"},
      {"DO", TT_REFUSE_OTHER, "DO is not allowed: it evaluates expressions only for what they "
                              "do; only SELECT runs here"},
      {"SET", TT_REFUSE_OTHER, "SET is not allowed: it changes the session's settings or "
                               "variables, and tabletalk sets its own limits; send only the "
                               "SELECT"},
      {"SHOW", TT_REFUSE_OTHER, "SHOW is not allowed here: read information_schema with a "
                                "SELECT (information_schema.TABLES, COLUMNS...)"},
      {"USE", TT_REFUSE_OTHER, "USE is not allowed: name another database's tables as "
                               "db.table in the SELECT"},
      {"HANDLER", TT_REFUSE_OTHER, "HANDLER is not allowed: it opens tables outside a "
                                   "statement; send a SELECT"},
      {"PREPARE", TT_REFUSE_OTHER, "PREPARE is not allowed: send the SELECT itself"},
      {"EXECUTE", TT_REFUSE_OTHER, "EXECUTE is not allowed: send the SELECT itself"},
      {"DEALLOCATE", TT_REFUSE_OTHER, "DEALLOCATE is not allowed: send only a SELECT"},
      {"KILL", TT_REFUSE_OTHER, "KILL is not allowed: it stops other sessions"},
      {"FLUSH", TT_REFUSE_OTHER, "FLUSH is not allowed: it administers the server"},
      {"RESET", TT_REFUSE_OTHER, "RESET is not allowed: it administers the server"},
      {"PURGE", TT_REFUSE_OTHER, "PURGE is not allowed: it administers the server"},
      {"SHUTDOWN", TT_REFUSE_OTHER, "SHUTDOWN is not allowed: it administers the server"},
      {"BINLOG", TT_REFUSE_OTHER, "BINLOG is not allowed: it replays replication events"},
      {"CHANGE", TT_REFUSE_OTHER, "CHANGE is not allowed: it administers replication"},
      {"SIGNAL", TT_REFUSE_OTHER, "SIGNAL is not allowed: only SELECT runs here"},
      {"RESIGNAL", TT_REFUSE_OTHER, "RESIGNAL is not allowed: only SELECT runs here"},
      {"HELP", TT_REFUSE_OTHER, "HELP is not allowed: only SELECT runs here"},
      {"CACHE", TT_REFUSE_OTHER, "CACHE INDEX is not allowed: it administers the server"},
      {"BACKUP", TT_REFUSE_OTHER, "BACKUP is not allowed: it administers the server"},
  };
  for (size_t k = 0; k < sizeof others / sizeof others[0]; k++)
    if (strcmp(kw, others[k].kw) == 0) {
      tt_my_refuse(w, others[k].r, "%s", others[k].msg);
      return;
    }
  tt_my_refuse(w, TT_REFUSE_OTHER,
               "%s is not allowed: only SELECT, WITH ... SELECT, VALUES and TABLE statements run "
               "here",
               words[0] ? words : "this statement");
}

/* ---- keywords anywhere ------------------------------------------------------ */

/* A keyword that makes the statement more than a read, wherever it is. */
static void tt_my_check_keyword(tt_my_gw *w, size_t i, const char *kw) {
  bool call = tt_my_op_is(w, i + 1, "(");
  char next[TT_MY_WORD_MAX];
  tt_my_kw(w, i + 1, next);
  if (strcmp(kw, "INTO") == 0) {
    const tt_my_tok *t = tt_my_at(w, i + 1);
    if (strcmp(next, "OUTFILE") == 0 || strcmp(next, "DUMPFILE") == 0)
      tt_my_refuse(w, TT_REFUSE_WRITE,
                   "SELECT ... INTO %s writes a file on the server: remove INTO %s; tabletalk "
                   "exports rows itself (tabletalk sql --csv)",
                   next, next);
    else if (t && t->kind == TT_MY_TOK_VAR)
      tt_my_refuse(w, TT_REFUSE_OTHER,
                   "SELECT ... INTO @variable changes the session's variables: remove INTO");
    else
      tt_my_refuse(w, TT_REFUSE_WRITE,
                   "SELECT ... INTO is not allowed: it writes its rows somewhere; remove INTO");
  } else if (strcmp(kw, "LOCK") == 0) {
    tt_my_refuse(w, TT_REFUSE_OTHER,
                 "LOCK IN SHARE MODE takes row locks: remove the locking clause");
  } else if (strcmp(kw, "FOR") == 0 &&
             (strcmp(next, "UPDATE") == 0 || strcmp(next, "SHARE") == 0)) {
    tt_my_refuse(w, TT_REFUSE_OTHER,
                 "SELECT ... FOR %s takes row locks: remove the FOR %s clause", next, next);
  } else if (strcmp(kw, "FOR") == 0 && i >= 2 && tt_my_kw_is(w, i - 1, "VALUE") &&
             (tt_my_kw_is(w, i - 2, "NEXT") || tt_my_kw_is(w, i - 2, "PREVIOUS"))) {
    tt_my_refuse(w, TT_REFUSE_FUNCTION,
                 "%s VALUE FOR is not allowed: it advances or reads a sequence of this "
                 "session, which a read never needs",
                 tt_my_kw_is(w, i - 2, "NEXT") ? "NEXT" : "PREVIOUS");
  } else if (strcmp(kw, "PROCEDURE") == 0) {
    tt_my_refuse(w, TT_REFUSE_OTHER,
                 "SELECT ... PROCEDURE is not allowed: it hands the rows to a server procedure");
  } else if (strcmp(kw, "UPDATE") == 0 || strcmp(kw, "DELETE") == 0 ||
             ((strcmp(kw, "INSERT") == 0 || strcmp(kw, "REPLACE") == 0) && !call) ||
             strcmp(kw, "LOAD") == 0) {
    tt_my_refuse(w, TT_REFUSE_WRITE, "writes are not allowed: %s; only reads run here", kw);
  } else if (strcmp(kw, "CREATE") == 0 || strcmp(kw, "DROP") == 0 || strcmp(kw, "ALTER") == 0 ||
             strcmp(kw, "RENAME") == 0 || strcmp(kw, "GRANT") == 0 || strcmp(kw, "REVOKE") == 0 ||
             (strcmp(kw, "TRUNCATE") == 0 && !call)) {
    tt_my_refuse(w, TT_REFUSE_SCHEMA, "schema changes are not allowed: %s; only reads run here",
                 kw);
  } else if (strcmp(kw, "CALL") == 0) {
    tt_my_refuse(w, TT_REFUSE_FUNCTION, "CALL is not allowed: only SELECT runs here");
  } else if (strcmp(kw, "UNLOCK") == 0) {
    tt_my_refuse(w, TT_REFUSE_TRANSACTION, "UNLOCK is not allowed: only SELECT runs here");
  } else if (strcmp(kw, "KILL") == 0) {
    tt_my_refuse(w, TT_REFUSE_OTHER, "KILL is not allowed: it stops other sessions");
  }
}

/* A name that starts with digits (1e5into): the server reads a number and
 * a keyword where the digits end in some versions; a keyword hidden so is
 * refused rather than guessed about. */
static void tt_my_check_digit_word(tt_my_gw *w, const char *kw) {
  const char *p = kw;
  while (isdigit((unsigned char)*p)) p++;
  if (*p == 'E') {
    const char *q = p + 1;
    if (*q == '+' || *q == '-') q++;
    if (isdigit((unsigned char)*q)) {
      while (isdigit((unsigned char)*q)) q++;
      p = q;
    }
  }
  static const char *const hidden[] = {"INTO", "LOCK", "FOR", "PROCEDURE", "UPDATE",
                                       "DELETE", "INSERT", "REPLACE", "UNION"};
  for (size_t k = 0; k < sizeof hidden / sizeof hidden[0]; k++)
    if (strncmp(p, hidden[k], strlen(hidden[k])) == 0) {
      tt_my_refuse(w, TT_REFUSE_OTHER,
                   "%s is ambiguous: a number followed by %s without a blank; put a blank "
                   "between them, or quote the name with backticks",
                   kw, hidden[k]);
      return;
    }
}

/* ---- calls --------------------------------------------------------------- */

/* Whether the name at i, before the '(' at i + 1, is no call: a CTE's or
 * a derived table's column list (WITH c (a, b) AS (...), AS t (a, b)). */
static bool tt_my_column_list(const tt_my_gw *w, size_t i) {
  if (i >= 1 && tt_my_kw_is(w, i - 1, "AS")) return true;
  size_t close = tt_my_close_paren(w, i + 1);
  return close < w->n && tt_my_kw_is(w, close + 1, "AS") && tt_my_op_is(w, close + 2, "(");
}

static void tt_my_refuse_stored(tt_my_gw *w, const char *schema, const char *name) {
  if (schema)
    tt_my_refuse(w, TT_REFUSE_FUNCTION,
                 "%s.%s is not allowed: a function named with its schema is a stored function "
                 "of the database's owner, which runs code the guard cannot check; only "
                 "built-in functions run here",
                 schema, name);
  else
    tt_my_refuse(w, TT_REFUSE_FUNCTION,
                 "%s is not allowed: it is not on tabletalk's list of built-in read-only "
                 "functions, so it is a stored or loadable function of the database's owner "
                 "(which runs code the guard cannot check) or unknown; only built-in "
                 "functions run here",
                 name);
}

static void tt_my_trusted_call(tt_my_gw *w, const char *schema, const char *name) {
  if (!w->refs) return;
  tt_my_refs *r = w->refs;
  tt_my_name_add(&r->trusted_calls, &r->ntrusted, &r->trusted_cap, schema, name);
}

/* The name at i is followed by '(' at i + 1. */
static void tt_my_check_call(tt_my_gw *w, size_t i) {
  if (tt_my_column_list(w, i)) return;
  const tt_my_tok *t = &w->t[i];
  char *name = tt_my_name_dup(w, i);
  const char *trust = w->o ? w->o->trust_schemas : NULL;
  const char *cur = w->o ? w->o->current_db : NULL;
  bool qualified = i >= 2 && tt_my_op_is(w, i - 1, ".") && tt_my_is_name(w, i - 2);
  const char *why = tt_my_denied_why(name);
  if (why) {
    tt_my_refuse(w, TT_REFUSE_FUNCTION, "%s is not allowed: %s", name, why);
  } else if (qualified || t->name_only || (i >= 1 && tt_my_op_is(w, i - 1, "."))) {
    char *schema = qualified ? tt_my_name_dup(w, i - 2) : NULL;
    if (schema && tt_my_schema_trusted(trust, schema)) tt_my_trusted_call(w, schema, name);
    else tt_my_refuse_stored(w, schema ? schema : "(schema)", name);
    free(schema);
  } else if (t->kind == TT_MY_TOK_QIDENT) {
    if (cur && tt_my_schema_trusted(trust, cur)) tt_my_trusted_call(w, NULL, name);
    else
      tt_my_refuse(w, TT_REFUSE_FUNCTION,
                   "`%s`(...) is not allowed: a quoted name called like a function is a stored "
                   "function of the database's owner; write built-in functions without quotes",
                   name);
  } else {
    char kw[TT_MY_WORD_MAX];
    tt_my_kw(w, i, kw);
    bool glued = w->t[i + 1].glued;
    if (tt_my_reserved_paren(kw)) {
      /* grammar: IN (...), AS (...), IF(...), LEFT(...) */
    } else if (tt_my_native(kw)) {
      if (!glued)
        tt_my_refuse(w, TT_REFUSE_FUNCTION,
                     "write %s( with no blank or comment before the parenthesis: written "
                     "apart, MySQL and MariaDB call a stored function named %s when the "
                     "database has one",
                     name, name);
      /* a built-in of one server is no built-in of the other (REGEXP_LIKE
       * is MySQL's, SFORMAT MariaDB's): there the name calls a stored
       * function of the current database */
      tt_my_maybe_stored(w, name);
    } else if (tt_my_soft_paren(kw)) {
      tt_my_maybe_stored(w, name);
    } else if (cur && tt_my_schema_trusted(trust, cur)) {
      tt_my_trusted_call(w, NULL, name);
    } else {
      tt_my_refuse_stored(w, NULL, name);
    }
  }
  free(name);
}

/* ---- names ---------------------------------------------------------------- */

/* The name at i is followed by '.' and a name at i + 2: a qualified name. */
static void tt_my_check_qualified(tt_my_gw *w, size_t i) {
  char *schema = tt_my_name_dup(w, i), *name = tt_my_name_dup(w, i + 2);
  if (tt_my_system_schema(schema, false)) {
    tt_my_refuse(w, TT_REFUSE_INTERNALS,
                 "%s.%s is not readable here: the %s schema holds the server's accounts, "
                 "password hashes, settings or other sessions' queries; ask about the "
                 "database's own tables",
                 schema, name, schema);
  } else if (strcasecmp(schema, "information_schema") == 0 && tt_my_secret_is_table(name)) {
    tt_my_refuse(w, TT_REFUSE_INTERNALS,
                 "information_schema.%s is not readable here: it shows other sessions' "
                 "queries or the server's settings",
                 name);
  } else {
    tt_my_ref_add(w, schema, name);
  }
  free(schema);
  free(name);
}

static void tt_my_check_sysvar(tt_my_gw *w, size_t i) {
  const tt_my_tok *t = &w->t[i];
  char name[TT_MY_WORD_MAX * 2];
  tt_my_tok_name(w->sql, t, name, sizeof name);
  const char *bare = name;
  const char *dot = strchr(name, '.');
  if (dot && (strncasecmp(name, "session.", 8) == 0 || strncasecmp(name, "global.", 7) == 0 ||
              strncasecmp(name, "local.", 6) == 0))
    bare = dot + 1;
  if (bare[0] == '`') bare++;
  char clean[TT_MY_WORD_MAX * 2];
  snprintf(clean, sizeof clean, "%s", bare);
  size_t n = strlen(clean);
  if (n && clean[n - 1] == '`') clean[n - 1] = '\0';
  if (!tt_my_sysvar_readable(clean))
    tt_my_refuse(w, TT_REFUSE_INTERNALS,
                 "@@%s is not readable here: only settings that say how SQL reads (version, "
                 "sql_mode, time_zone, character sets...) are; server paths and settings stay "
                 "private",
                 clean);
}

/* ---- the walk -------------------------------------------------------------- */

static void tt_my_walk(tt_my_gw *w) {
  for (size_t i = 0; i < w->n && !w->refused; i++) {
    const tt_my_tok *t = &w->t[i];
    if (t->kind == TT_MY_TOK_OP) {
      if (tt_my_op_is(w, i, ":="))
        tt_my_refuse(w, TT_REFUSE_OTHER,
                     ":= assigns a user variable, which changes the session: compare with =");
      continue;
    }
    if (t->kind == TT_MY_TOK_VAR) {
      tt_my_refuse(w, TT_REFUSE_OTHER,
                   "user variables (@name) are not allowed: they are session state, which a "
                   "read never needs; write the value into the SQL");
      continue;
    }
    if (t->kind == TT_MY_TOK_SYSVAR) {
      tt_my_check_sysvar(w, i);
      continue;
    }
    if (t->kind != TT_MY_TOK_WORD && t->kind != TT_MY_TOK_QIDENT) continue;
    char kw[TT_MY_WORD_MAX];
    tt_my_kw(w, i, kw);
    if (kw[0]) {
      tt_my_check_keyword(w, i, kw);
      if (isdigit((unsigned char)kw[0])) tt_my_check_digit_word(w, kw);
      if (w->refused) return;
    }
    if (tt_my_op_is(w, i + 1, "(")) {
      tt_my_check_call(w, i);
      continue;
    }
    if (tt_my_op_is(w, i + 1, ".") && tt_my_is_name(w, i + 2)) tt_my_check_qualified(w, i);
    bool after_dot = i >= 1 && tt_my_op_is(w, i - 1, ".");
    if (!after_dot && !(kw[0] && tt_my_reserved_paren(kw))) {
      char *name = tt_my_name_dup(w, i);
      tt_my_ref_add(w, NULL, name);
      free(name);
    }
  }
}

/* Statements after the first: MULTIPLE, or the length to send. */
static bool tt_my_one_statement(tt_my_gw *w, size_t *first_semicolon) {
  *first_semicolon = w->n;
  size_t statements = 0;
  bool in_statement = false;
  for (size_t i = 0; i < w->n; i++) {
    if (tt_my_op_is(w, i, ";")) {
      if (*first_semicolon == w->n) *first_semicolon = i;
      in_statement = false;
    } else if (!in_statement) {
      in_statement = true;
      statements++;
    }
  }
  if (statements > 1) {
    tt_my_refuse(w, TT_REFUSE_MULTIPLE,
                 "only one statement is allowed, and this text holds %zu; send one SELECT at a "
                 "time",
                 statements);
    return false;
  }
  if (statements == 0) {
    tt_my_refuse(w, TT_REFUSE_EMPTY, "no SQL statement: the text holds only blanks or comments");
    return false;
  }
  if (*first_semicolon == 0) { /* ; SELECT 1 */
    tt_my_refuse(w, TT_REFUSE_MULTIPLE,
                 "only one statement is allowed: remove the ';' before the statement");
    return false;
  }
  return true;
}

static void tt_my_lex_refuse(tt_my_gw *w, const tt_my_lexed *l) {
  switch (l->fail) {
  case TT_MY_LEX_OPEN_STRING:
    tt_my_sql_error(w, TT_ERR_SQL,
                    "a string or quoted name opened at byte %zu is never closed (a quote inside "
                    "a string is written '' or \\')",
                    l->fail_at);
    break;
  case TT_MY_LEX_OPEN_COMMENT:
    tt_my_sql_error(w, TT_ERR_SQL, "the comment opened at byte %zu is never closed with */",
                    l->fail_at);
    break;
  case TT_MY_LEX_EXEC_COMMENT:
    tt_my_refuse(w, TT_REFUSE_OTHER,
                 "executable comments (/*! ... */, /*M! ... */) are not allowed: MySQL and "
                 "MariaDB run the SQL inside them; write the SQL without the comment");
    break;
  case TT_MY_LEX_HINT:
    tt_my_refuse(w, TT_REFUSE_OTHER,
                 "optimizer hints (/*+ ... */) are not allowed: a hint can change the "
                 "statement's settings and time limit; remove it");
    break;
  case TT_MY_LEX_BAD_LITERAL:
    tt_my_sql_error(w, TT_ERR_SQL,
                    "the number or X'..'/B'..' literal at byte %zu is malformed (X'..' takes an "
                    "even number of hex digits, B'..' only 0 and 1)",
                    l->fail_at);
    break;
  case TT_MY_LEX_OK: break;
  }
}

bool tt_my_guard_check(const char *sql, size_t len, tt_my_guard_mode mode,
                       const tt_my_guard_opts *opts, tt_my_refs *refs, tt_error *err) {
  if (refs) memset(refs, 0, sizeof *refs);
  if (!tt_db_check_sql_text(sql, len, mode != TT_MY_GUARD_QUERY, err)) return false;
  tt_my_lexed l;
  tt_my_gw w = {.sql = sql, .mode = mode, .o = opts, .refs = refs, .err = err};
  if (!tt_my_lex(sql, len, &l)) {
    tt_my_lex_refuse(&w, &l);
    tt_my_lex_free(&l);
    return false;
  }
  w.t = l.toks;
  w.n = l.n;
  size_t semi = w.n;
  if (mode != TT_MY_GUARD_EXPR && !tt_my_one_statement(&w, &semi)) {
    tt_my_lex_free(&l);
    return false;
  }
  w.n = semi; /* a trailing ';' is left out of what is checked and sent */
  if (refs) refs->send_len = semi < l.n ? l.toks[semi].start : len;
  if (mode != TT_MY_GUARD_EXPR) {
    size_t first = 0;
    while (first < w.n && tt_my_op_is(&w, first, "(")) first++;
    char kw[TT_MY_WORD_MAX];
    tt_my_kw(&w, first, kw);
    if (strcmp(kw, "SELECT") != 0 && strcmp(kw, "WITH") != 0 && strcmp(kw, "VALUES") != 0 &&
        strcmp(kw, "TABLE") != 0)
      tt_my_refuse_statement(&w, first);
  }
  if (!w.refused) tt_my_walk(&w);
  tt_my_lex_free(&l);
  if (w.refused) {
    if (refs) tt_my_refs_free(refs);
    return false;
  }
  return true;
}

void tt_my_refs_free(tt_my_refs *refs) {
  if (!refs) return;
  for (size_t i = 0; i < refs->nnames; i++) {
    free(refs->names[i].schema);
    free(refs->names[i].name);
  }
  free(refs->names);
  for (size_t i = 0; i < refs->nmaybe; i++) free(refs->maybe_stored[i]);
  free(refs->maybe_stored);
  for (size_t i = 0; i < refs->ntrusted; i++) {
    free(refs->trusted_calls[i].schema);
    free(refs->trusted_calls[i].name);
  }
  free(refs->trusted_calls);
  memset(refs, 0, sizeof *refs);
}
