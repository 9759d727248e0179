/* my_check.c — what the MySQL/MariaDB guard cannot know from the text
 * alone, asked of information_schema before the statement runs: whether a
 * name it reads is a view (then the view's definition goes through the
 * guard too, and the views under it, to any depth: reading a view runs
 * whatever functions it calls, with its definer's rights), whether a table
 * it reads has generated columns (their expressions run on every read and
 * are checked the same), and whether a keyword used like a function (OVER,
 * ROW...) is also the name of a stored function of the current database.
 * One query per level of views; names compared without regard to case,
 * which can only check more than needed. Secrets and functions found
 * anywhere below are refused with the reason the guard gives, naming the
 * view or column they hide in. */
#include "db/mysql/mysql.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define TT_MY_VIEW_DEPTH 16

void tt_my_put_ident(tt_buf *b, const char *name) {
  tt_buf_putc(b, '`');
  for (const char *p = name; *p; p++) {
    if (*p == '`') tt_buf_putc(b, '`');
    tt_buf_putc(b, *p);
  }
  tt_buf_putc(b, '`');
}

void tt_my_put_string(tt_buf *b, const char *s) {
  tt_buf_putc(b, '\'');
  for (const char *p = s; *p; p++) {
    if (*p == '\'' || *p == '\\') tt_buf_putc(b, '\\');
    tt_buf_putc(b, *p);
  }
  tt_buf_putc(b, '\'');
}

tt_my_guard_opts tt_my_guard_opts_for(const tt_db *db) {
  const tt_my *my = tt_my_of(db);
  /* --trust-functions: the schemas (databases) whose stored functions may run */
  return (tt_my_guard_opts){.trust_schemas = db->opts.trust_functions,
                            .current_db = my ? my->ci.database : NULL};
}

/* A comma-separated list of string literals of names. */
static void tt_my_put_names(tt_buf *q, const tt_my_name *names, size_t n, bool schemas) {
  bool any = false;
  for (size_t i = 0; i < n; i++) {
    const char *s = schemas ? names[i].schema : names[i].name;
    if (!s) continue;
    if (any) tt_buf_puts(q, ", ");
    tt_my_put_string(q, s);
    any = true;
  }
  if (!any) tt_buf_puts(q, "NULL");
}

/* The query looking up one level: views and generated columns among the
 * names, and stored functions among the function names. */
static char *tt_my_level_sql(const tt_my_refs *r) {
  tt_buf q = TT_BUF_INIT;
  tt_buf_puts(&q, "SELECT 'v', TABLE_SCHEMA, TABLE_NAME, VIEW_DEFINITION FROM "
                  "information_schema.VIEWS WHERE TABLE_SCHEMA IN (DATABASE(), ");
  tt_my_put_names(&q, r->names, r->nnames, true);
  tt_buf_puts(&q, ") AND TABLE_NAME IN (");
  tt_my_put_names(&q, r->names, r->nnames, false);
  tt_buf_puts(&q, ") UNION ALL SELECT 'g', TABLE_SCHEMA, TABLE_NAME, GENERATION_EXPRESSION FROM "
                  "information_schema.COLUMNS WHERE TABLE_SCHEMA IN (DATABASE(), ");
  tt_my_put_names(&q, r->names, r->nnames, true);
  tt_buf_puts(&q, ") AND TABLE_NAME IN (");
  tt_my_put_names(&q, r->names, r->nnames, false);
  tt_buf_puts(&q, ") AND GENERATION_EXPRESSION IS NOT NULL AND GENERATION_EXPRESSION <> ''");
  if (r->nmaybe || r->ntrusted) {
    tt_buf_puts(&q, " UNION ALL SELECT 'f', ROUTINE_SCHEMA, ROUTINE_NAME, NULL FROM "
                    "information_schema.ROUTINES WHERE ROUTINE_TYPE = 'FUNCTION' AND "
                    "ROUTINE_SCHEMA IN (DATABASE(), ");
    tt_my_put_names(&q, r->trusted_calls, r->ntrusted, true);
    tt_buf_puts(&q, ") AND ROUTINE_NAME IN (");
    bool any = false;
    for (size_t i = 0; i < r->nmaybe; i++) {
      if (any) tt_buf_puts(&q, ", ");
      tt_my_put_string(&q, r->maybe_stored[i]);
      any = true;
    }
    for (size_t i = 0; i < r->ntrusted; i++) {
      if (any) tt_buf_puts(&q, ", ");
      tt_my_put_string(&q, r->trusted_calls[i].name);
      any = true;
    }
    tt_buf_putc(&q, ')');
  }
  return tt_buf_detach(&q);
}

static bool tt_my_same(const char *a, const char *b) { return a && b && strcasecmp(a, b) == 0; }

/* Whether the row's schema.name is one of the names (unqualified names
 * live in the current database). */
static bool tt_my_named(const tt_my_refs *r, const char *cur, const char *schema,
                        const char *name) {
  for (size_t i = 0; i < r->nnames; i++) {
    if (!tt_my_same(r->names[i].name, name)) continue;
    if (r->names[i].schema ? tt_my_same(r->names[i].schema, schema) : tt_my_same(cur, schema))
      return true;
  }
  return false;
}

typedef struct tt_my_seen {
  char **keys;
  size_t n, cap;
} tt_my_seen;

/* false when schema.name was seen before (then nothing to do again). */
static bool tt_my_first_visit(tt_my_seen *s, const char *kind, const char *schema,
                              const char *name) {
  char *key = tt_xasprintf("%s\x1f%s\x1f%s", kind, schema, name);
  for (char *p = key; *p; p++)
    if (*p >= 'A' && *p <= 'Z') *p = (char)(*p + 32);
  for (size_t i = 0; i < s->n; i++)
    if (strcmp(s->keys[i], key) == 0) {
      free(key);
      return false;
    }
  if (s->n == s->cap) {
    s->cap = s->cap ? s->cap * 2 : 16;
    s->keys = tt_xrealloc(s->keys, s->cap * sizeof *s->keys);
  }
  s->keys[s->n++] = key;
  return true;
}

static void tt_my_seen_free(tt_my_seen *s) {
  for (size_t i = 0; i < s->n; i++) free(s->keys[i]);
  free(s->keys);
}

/* Adds what one checked text reads to the next level's names. */
static void tt_my_merge(tt_my_refs *next, const tt_my_refs *more) {
  for (size_t i = 0; i < more->nnames; i++) {
    tt_my_name *n = &more->names[i];
    bool dup = false;
    for (size_t j = 0; j < next->nnames && !dup; j++)
      dup =
          tt_my_same(next->names[j].name, n->name) &&
          ((!n->schema && !next->names[j].schema) || tt_my_same(n->schema, next->names[j].schema));
    if (dup) continue;
    if (next->nnames == next->names_cap) {
      next->names_cap = next->names_cap ? next->names_cap * 2 : 16;
      next->names = tt_xrealloc(next->names, next->names_cap * sizeof *next->names);
    }
    next->names[next->nnames++] =
        (tt_my_name){n->schema ? tt_xstrdup(n->schema) : NULL, tt_xstrdup(n->name)};
  }
  for (size_t i = 0; i < more->nmaybe; i++) {
    if (next->nmaybe == next->maybe_cap) {
      next->maybe_cap = next->maybe_cap ? next->maybe_cap * 2 : 8;
      next->maybe_stored = tt_xrealloc(next->maybe_stored, next->maybe_cap * sizeof(char *));
    }
    next->maybe_stored[next->nmaybe++] = tt_xstrdup(more->maybe_stored[i]);
  }
  for (size_t i = 0; i < more->ntrusted; i++) {
    if (next->ntrusted == next->trusted_cap) {
      next->trusted_cap = next->trusted_cap ? next->trusted_cap * 2 : 8;
      next->trusted_calls =
          tt_xrealloc(next->trusted_calls, next->trusted_cap * sizeof(tt_my_name));
    }
    const tt_my_name *t = &more->trusted_calls[i];
    next->trusted_calls[next->ntrusted++] =
        (tt_my_name){t->schema ? tt_xstrdup(t->schema) : NULL, tt_xstrdup(t->name)};
  }
}

/* The stored functions found: those named like keywords are refused
 * (untrusted), those the trust list allows must exist. */
static bool tt_my_check_functions(const tt_my_refs *r, const tt_result *rows,
                                  const tt_my_guard_opts *g, tt_error *err) {
  for (size_t i = 0; i < rows->nrows; i++) {
    const tt_value *k = tt_result_cell(rows, i, 0);
    if (k->type != TT_VAL_TEXT || k->u.s[0] != 'f') continue;
    const char *schema = tt_result_cell(rows, i, 1)->u.s, *name = tt_result_cell(rows, i, 2)->u.s;
    for (size_t m = 0; m < r->nmaybe; m++)
      if (tt_my_same(r->maybe_stored[m], name) && tt_my_same(schema, g->current_db) &&
          !tt_my_schema_trusted(g->trust_schemas, schema)) {
        tt_db_refuse(err, TT_REFUSE_FUNCTION,
                     "%s(...) is not allowed here: the database has a stored function named %s, "
                     "which the server may call instead of the built-in function or keyword "
                     "(a server without that built-in calls the stored one); write the query "
                     "without it",
                     name, name);
        return false;
      }
  }
  for (size_t t = 0; t < r->ntrusted; t++) {
    const char *want = r->trusted_calls[t].schema ? r->trusted_calls[t].schema : g->current_db;
    bool found = false;
    for (size_t i = 0; i < rows->nrows && !found; i++) {
      const tt_value *k = tt_result_cell(rows, i, 0);
      found = k->type == TT_VAL_TEXT && k->u.s[0] == 'f' &&
              tt_my_same(tt_result_cell(rows, i, 1)->u.s, want) &&
              tt_my_same(tt_result_cell(rows, i, 2)->u.s, r->trusted_calls[t].name);
    }
    if (!found) {
      tt_db_refuse(err, TT_REFUSE_FUNCTION,
                   "%s is not a built-in function, nor a stored function of a trusted schema; "
                   "only those run here",
                   r->trusted_calls[t].name);
      return false;
    }
  }
  return true;
}

bool tt_my_check_refs(tt_my_lookup_fn lookup, void *ctx, const tt_my_refs *refs,
                      const tt_my_guard_opts *g, tt_error *err) {
  if (!refs->nnames && !refs->nmaybe && !refs->ntrusted) return true;
  tt_my_refs level;
  memset(&level, 0, sizeof level);
  tt_my_merge(&level, refs);
  tt_my_seen seen = {0};
  bool ok = true;
  for (int depth = 0; ok && (level.nnames || level.nmaybe || level.ntrusted); depth++) {
    if (depth >= TT_MY_VIEW_DEPTH) {
      tt_db_refuse(err, TT_REFUSE_OTHER,
                   "the views the query reads are nested more than %d deep, more than "
                   "tabletalk checks; read the tables under them",
                   TT_MY_VIEW_DEPTH);
      ok = false;
      break;
    }
    char *sql = tt_my_level_sql(&level);
    tt_result *rows = lookup(ctx, sql, err);
    free(sql);
    if (!rows) {
      tt_error_prefix(err, "cannot check what the query reads: ");
      ok = false;
      break;
    }
    ok = tt_my_check_functions(&level, rows, g, err);
    tt_my_refs next;
    memset(&next, 0, sizeof next);
    for (size_t i = 0; ok && i < rows->nrows; i++) {
      const tt_value *k = tt_result_cell(rows, i, 0);
      if (k->type != TT_VAL_TEXT || k->u.s[0] == 'f') continue;
      const char *schema = tt_result_cell(rows, i, 1)->u.s;
      const char *name = tt_result_cell(rows, i, 2)->u.s;
      const tt_value *text = tt_result_cell(rows, i, 3);
      if (!tt_my_named(&level, g->current_db, schema, name)) continue;
      bool view = k->u.s[0] == 'v';
      char what[32];
      snprintf(what, sizeof what, "%s%zu", view ? "v" : "g", i);
      if (!tt_my_first_visit(&seen, view ? "v" : what, schema, name)) continue;
      if (view && (text->type != TT_VAL_TEXT || text->len == 0)) {
        tt_db_refuse(err, TT_REFUSE_OTHER,
                     "the view %s.%s cannot be checked: this account may not read its "
                     "definition (grant it SHOW VIEW), and a view may call functions of its "
                     "owner",
                     schema, name);
        ok = false;
        break;
      }
      if (text->type != TT_VAL_TEXT) continue;
      tt_my_refs more;
      tt_my_guard_opts vg = *g;
      if (!tt_my_guard_check(text->u.s, text->len, view ? TT_MY_GUARD_VIEW : TT_MY_GUARD_EXPR,
                             &vg, &more, err)) {
        if (view) tt_error_prefix(err, "the view %s.%s is not readable here: ", schema, name);
        else tt_error_prefix(err, "the table %s.%s is not readable here (a generated column): ",
                             schema, name);
        ok = false;
        break;
      }
      tt_my_merge(&next, &more);
      tt_my_refs_free(&more);
    }
    tt_result_free(rows);
    tt_my_refs_free(&level);
    level = next;
  }
  tt_my_refs_free(&level);
  tt_my_seen_free(&seen);
  return ok;
}

static tt_result *tt_my_catalog_lookup(void *ctx, const char *sql, tt_error *err) {
  return tt_catalog_query(ctx, sql, 2.0, 100000, 64L << 20, err);
}

bool tt_my_check_view(tt_db *db, const char *schema, const char *name, tt_error *err) {
  tt_my_refs refs;
  memset(&refs, 0, sizeof refs);
  tt_my_name n = {(char *)schema, (char *)name};
  refs.names = &n;
  refs.nnames = 1;
  tt_my_guard_opts g = tt_my_guard_opts_for(db);
  return tt_my_check_refs(tt_my_catalog_lookup, db, &refs, &g, err);
}
