/* ddb_trust.c — no macro of a .duckdb file runs unless the user trusts
 * its schema (--trust-functions), as no function of a PostgreSQL or MySQL
 * database's owner does.
 *
 * A .duckdb file may hold macros (CREATE MACRO: SQL that runs where a
 * query names it), views that call them, and tables whose generated
 * columns call them. Built-in functions already come first in the search
 * path (ddb_open.c), so a macro named like one never replaces it; this
 * file keeps the others from running at all:
 *
 * - when the database is opened, the macros of schemas not trusted are
 *   listed (duckdb_functions()), and every view and table whose stored
 *   SQL (duckdb_views().sql, a column's generated expression) names one of
 *   them, or names a relation already found, is marked, until nothing
 *   more is found. Names are matched as words of the stored SQL, any case:
 *   a superset of what reading the relation runs, since a column named
 *   like a macro marks it too.
 * - before a statement runs, DuckDB's own parser gives its tree
 *   (json_serialize_sql); a function call that names such a macro (unless
 *   unqualified and shadowed by a built-in), a relation marked above, or a
 *   function that reads SQL or a table from a string (query, query_table,
 *   json_execute_serialized_sql) refuses it, naming the macro, the
 *   relation and the option. A statement the serializer cannot give is
 *   refused too, when there is anything to find.
 *
 * Nothing of this runs for data files (views of tabletalk's own over the
 * user's files, no macros) or a .duckdb file without untrusted macros. */
#define _GNU_SOURCE /* strcasestr */
#include "db/duckdb/ddb.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* One name that may not run: a macro, or a relation reading one. */
typedef struct tt_ddb_taint {
  char *schema;
  char *name;
  char *why;      /* macro: its schema; relation: "schema.macro" it reads (first found) */
  bool relation;  /* a view or table (else a macro) */
  bool shadowed;  /* macro: a built-in of the same name is what an unqualified call runs */
} tt_ddb_taint;

struct tt_ddb_trust {
  tt_ddb_taint *v;
  size_t n;
  char *schemas; /* the untrusted macros' schemas, "main, s2" (for the message) */
};

/* Functions that read SQL or a table from a string: what they run cannot
 * be checked from the tree. */
static const char *const tt_ddb_string_sql[] = {"query", "query_table",
                                                "json_execute_serialized_sql"};

/* ---- listing ------------------------------------------------------------------- */

/* Whether schema is named in the comma-separated list (exact). */
static bool tt_ddb_schema_trusted(const char *list, const char *schema) {
  size_t len = strlen(schema);
  for (const char *p = list; p && *p;) {
    size_t n = strcspn(p, ",");
    if (n == len && memcmp(p, schema, n) == 0) return true;
    p += n;
    if (*p == ',') p++;
  }
  return false;
}

/* Whether name occurs in sql as a word (any case; letters, digits, '_'
 * and bytes past ASCII make words). */
static bool tt_ddb_names_word(const char *sql, const char *name) {
  size_t n = strlen(name);
  if (!n) return false;
  for (const char *p = sql; (p = strcasestr(p, name)) != NULL; p++) {
    unsigned char before = p > sql ? (unsigned char)p[-1] : ' ';
    unsigned char after = (unsigned char)p[n];
    bool word_before = isalnum(before) || before == '_' || before >= 0x80;
    bool word_after = isalnum(after) || after == '_' || after >= 0x80;
    if (!word_before && !word_after) return true;
  }
  return false;
}

static void tt_ddb_taint_add(struct tt_ddb_trust *t, const char *schema, const char *name,
                             const char *why, bool relation, bool shadowed) {
  t->v = tt_xrealloc(t->v, (t->n + 1) * sizeof *t->v);
  t->v[t->n++] = (tt_ddb_taint){.schema = tt_xstrdup(schema),
                                .name = tt_xstrdup(name),
                                .why = tt_xstrdup(why),
                                .relation = relation,
                                .shadowed = shadowed};
}

/* The first untrusted macro or marked relation whose name is a word of
 * sql, or NULL. */
static const tt_ddb_taint *tt_ddb_taint_in(const struct tt_ddb_trust *t, const char *sql) {
  for (size_t i = 0; i < t->n; i++)
    if (tt_ddb_names_word(sql, t->v[i].name)) return &t->v[i];
  return NULL;
}

/* The relation (schema, name) is marked already. */
static bool tt_ddb_taint_has(const struct tt_ddb_trust *t, const char *schema, const char *name) {
  for (size_t i = 0; i < t->n; i++)
    if (t->v[i].relation && strcmp(t->v[i].schema, schema) == 0 &&
        strcmp(t->v[i].name, name) == 0)
      return true;
  return false;
}

static const char *tt_ddb_jstr(const json_t *o, const char *key) {
  const char *s = json_string_value(json_object_get(o, key));
  return s ? s : "";
}

/* The JSON array of objects that sql (tabletalk's own: one text value,
 * '[]' for no rows) gives; NULL when it fails. */
static json_t *tt_ddb_json_rows(tt_ddb *dd, const char *sql) {
  char *text = tt_ddb_scalar_text(dd, sql);
  json_t *rows = text ? json_loads(text, 0, NULL) : NULL;
  free(text);
  if (rows && !json_is_array(rows)) {
    json_decref(rows);
    rows = NULL;
  }
  return rows;
}

void tt_ddb_trust_free(struct tt_ddb_trust *t) {
  if (!t) return;
  for (size_t i = 0; i < t->n; i++) {
    free(t->v[i].schema);
    free(t->v[i].name);
    free(t->v[i].why);
  }
  free(t->v);
  free(t->schemas);
  free(t);
}

/* The relations of rels (objects: s, n, sql) that name a marked name,
 * marked in turn until no more are found. */
static void tt_ddb_taint_relations(struct tt_ddb_trust *t, const json_t *rels) {
  for (bool more = true; more;) {
    more = false;
    size_t i;
    json_t *r;
    json_array_foreach(rels, i, r) {
      const char *schema = tt_ddb_jstr(r, "s"), *name = tt_ddb_jstr(r, "n");
      if (tt_ddb_taint_has(t, schema, name)) continue;
      const tt_ddb_taint *hit = tt_ddb_taint_in(t, tt_ddb_jstr(r, "sql"));
      if (!hit) continue;
      char *why = hit->relation ? tt_xstrdup(hit->why)
                                : tt_xasprintf("%s.%s", hit->schema, hit->name);
      tt_ddb_taint_add(t, schema, name, why, true, false);
      free(why);
      more = true;
    }
  }
}

/* Adds to dd's warning what the database's macros may do. */
static void tt_ddb_warn_macros(tt_ddb *dd, const char *names, bool any_untrusted) {
  char *w = tt_xasprintf(
      "%s%sthe database defines macros (%.300s): %s", dd->warning ? dd->warning : "",
      dd->warning ? "; " : "", names,
      any_untrusted ? "a query that uses one (by name, or through a view or table) is refused "
                      "unless --trust-functions names its schema; built-in functions of the "
                      "same name are never replaced by them"
                    : "their schemas are trusted (--trust-functions): a query that names one "
                      "runs its SQL, under the same lock; built-in functions of the same name "
                      "are never replaced by them");
  free(dd->warning);
  dd->warning = w;
}

bool tt_ddb_trust_load(tt_db *db, tt_ddb *dd, tt_error *err) {
  if (!dd->database_file) return true;
  tt_buf q = TT_BUF_INIT;
  tt_buf_printf(&q,
                "SELECT coalesce(to_json(list({'s': schema_name, 'n': function_name, 'b': "
                "EXISTS (SELECT 1 FROM system.main.duckdb_functions() b WHERE b.internal AND "
                "b.function_name = f.function_name)} ORDER BY function_name, schema_name)), "
                "'[]') FROM system.main.duckdb_functions() f WHERE NOT internal AND "
                "database_name = %s AND function_type IN ('macro', 'table_macro')",
                dd->dbname_sql);
  json_t *macros = tt_ddb_json_rows(dd, tt_buf_cstr(&q));
  tt_buf_reset(&q);
  struct tt_ddb_trust *t = tt_xcalloc(1, sizeof *t);
  tt_buf schemas = TT_BUF_INIT, names = TT_BUF_INIT;
  size_t i;
  json_t *m;
  json_array_foreach(macros, i, m) {
    const char *schema = tt_ddb_jstr(m, "s"), *name = tt_ddb_jstr(m, "n");
    if (!tt_ddb_names_word(tt_buf_cstr(&names), name)) {
      if (names.len) tt_buf_puts(&names, ", ");
      tt_buf_puts(&names, name);
    }
    if (tt_ddb_schema_trusted(db->opts.trust_functions, schema)) continue;
    if (!tt_ddb_names_word(tt_buf_cstr(&schemas), schema)) {
      if (schemas.len) tt_buf_puts(&schemas, ", ");
      tt_buf_puts(&schemas, schema);
    }
    tt_ddb_taint_add(t, schema, name, schema, false, json_is_true(json_object_get(m, "b")));
  }
  t->schemas = tt_buf_detach(&schemas);
  json_t *rels = NULL;
  if (macros && t->n) { /* views by their SQL, tables by their columns' expressions */
    tt_buf_printf(&q,
                  "SELECT coalesce(to_json(list({'s': s, 'n': n, 'sql': sql})), '[]') FROM "
                  "(SELECT schema_name AS s, view_name AS n, sql FROM "
                  "system.main.duckdb_views() WHERE NOT internal AND database_name = %s UNION "
                  "ALL SELECT schema_name, table_name, string_agg(column_default, ' ') FROM "
                  "system.main.duckdb_columns() WHERE database_name = %s AND column_default IS "
                  "NOT NULL GROUP BY ALL)",
                  dd->dbname_sql, dd->dbname_sql);
    rels = tt_ddb_json_rows(dd, tt_buf_cstr(&q));
  }
  tt_buf_free(&q);
  if (!macros || (t->n && !rels)) {
    json_decref(macros);
    tt_buf_free(&names);
    tt_ddb_trust_free(t);
    tt_db_set_error(err, TT_ERR_UNAVAILABLE,
                    "%s: cannot list the database's macros and what uses them", db->name);
    tt_error_hint(err, "libduckdb must have its json extension built in (scripts/deps.sh "
                       "fetches the one tabletalk is tested with)");
    return false;
  }
  if (names.len) tt_ddb_warn_macros(dd, tt_buf_cstr(&names), t->n > 0);
  tt_buf_free(&names);
  json_decref(macros);
  if (rels) tt_ddb_taint_relations(t, rels);
  json_decref(rels);
  if (t->n) dd->trust = t;
  else tt_ddb_trust_free(t);
  return true;
}

/* ---- checking a statement ------------------------------------------------------- */

typedef struct tt_ddb_found {
  const tt_ddb_taint *taint;  /* the macro or relation named */
  const char *string_sql;     /* or a function reading SQL from a string */
} tt_ddb_found;

/* Looks through every object of the tree for a call or a table that may
 * not run. */
static void tt_ddb_walk(const struct tt_ddb_trust *t, const json_t *node, tt_ddb_found *f) {
  if (f->taint || f->string_sql) return;
  if (json_is_array(node)) {
    size_t i;
    json_t *v;
    json_array_foreach(node, i, v) tt_ddb_walk(t, v, f);
    return;
  }
  if (!json_is_object(node)) return;
  const char *fn = json_string_value(json_object_get(node, "function_name"));
  if (fn) {
    bool qualified = *tt_ddb_jstr(node, "schema") || *tt_ddb_jstr(node, "catalog");
    for (size_t i = 0; i < sizeof tt_ddb_string_sql / sizeof *tt_ddb_string_sql; i++)
      if (strcasecmp(fn, tt_ddb_string_sql[i]) == 0) f->string_sql = tt_ddb_string_sql[i];
    for (size_t i = 0; i < t->n && !f->taint; i++)
      if (!t->v[i].relation && strcasecmp(fn, t->v[i].name) == 0 &&
          (qualified || !t->v[i].shadowed))
        f->taint = &t->v[i];
  }
  const char *table = json_string_value(json_object_get(node, "table_name"));
  if (table && *table)
    for (size_t i = 0; i < t->n && !f->taint; i++)
      if (t->v[i].relation && strcasecmp(table, t->v[i].name) == 0) f->taint = &t->v[i];
  const char *key;
  json_t *v;
  json_object_foreach((json_t *)node, key, v) tt_ddb_walk(t, v, f);
}

static void tt_ddb_trust_hint(const struct tt_ddb_trust *t, const char *schema, tt_error *err) {
  tt_error_hint(err, "only built-in functions run; --trust-functions %s lets that schema's "
                     "macros run, if you trust whoever made the file",
                schema ? schema : t->schemas);
}

void tt_ddb_trust_refuse_unchecked(const tt_ddb *dd, tt_error *err) {
  tt_db_refuse(err, TT_REFUSE_FUNCTION,
               "the database defines macros (schemas %s), and this statement cannot be "
               "checked for them: write it as a plain SELECT",
               dd->trust->schemas);
  tt_ddb_trust_hint(dd->trust, NULL, err);
}

bool tt_ddb_trust_check(tt_ddb *dd, const char *sql, size_t len, bool *unchecked,
                        tt_error *err) {
  const struct tt_ddb_trust *t = dd->trust;
  *unchecked = false;
  if (!t) return true;
  tt_buf q = TT_BUF_INIT;
  tt_buf_puts(&q, "SELECT json_serialize_sql(");
  char *one = tt_xstrndup(sql, len);
  tt_buf_put_sql_string(&q, one);
  free(one);
  tt_buf_putc(&q, ')');
  char *text = tt_ddb_scalar_text(dd, tt_buf_cstr(&q));
  tt_buf_free(&q);
  /* locations past 2^63 (18446744073709551615: none) are read as reals */
  json_t *tree = text ? json_loads(text, JSON_DECODE_INT_AS_REAL, NULL) : NULL;
  free(text);
  if (!json_is_object(tree) || json_is_true(json_object_get(tree, "error"))) {
    const char *why = tree ? tt_ddb_jstr(tree, "error_type") : "";
    bool parse_error = strcmp(why, "parser") == 0;
    bool not_select = strcmp(why, "not implemented") == 0;
    json_decref(tree);
    /* DuckDB's own parser says what is wrong, when it runs; a statement
     * that is not a SELECT is refused by its type (ddb_run.c), and one
     * that is one all the same cannot be checked */
    if (parse_error || not_select) {
      *unchecked = not_select;
      return true;
    }
    tt_ddb_trust_refuse_unchecked(dd, err);
    return false;
  }
  tt_ddb_found f = {0};
  tt_ddb_walk(t, json_object_get(tree, "statements"), &f);
  json_decref(tree);
  if (f.taint && f.taint->relation) {
    tt_db_refuse(err, TT_REFUSE_FUNCTION,
                 "reading %s.%s runs the database's own macro %s: the query is not run",
                 f.taint->schema, f.taint->name, f.taint->why);
    const char *dot = strrchr(f.taint->why, '.');
    char *schema = tt_xstrndup(f.taint->why, dot ? (size_t)(dot - f.taint->why) : 0);
    tt_ddb_trust_hint(t, schema, err);
    free(schema);
    return false;
  }
  if (f.taint) {
    tt_db_refuse(err, TT_REFUSE_FUNCTION,
                 "%s is a macro of the database (schema %s), not a built-in function: the query "
                 "is not run",
                 f.taint->name, f.taint->schema);
    tt_ddb_trust_hint(t, f.taint->schema, err);
    return false;
  }
  if (f.string_sql) {
    tt_db_refuse(err, TT_REFUSE_FUNCTION,
                 "%s() reads SQL or a table from a string, which cannot be checked for the "
                 "database's macros (schemas %s): name the tables in the query itself",
                 f.string_sql, t->schemas);
    tt_ddb_trust_hint(t, NULL, err);
    return false;
  }
  return true;
}

const char *tt_ddb_trust_relation(const tt_ddb *dd, const char *schema, const char *name) {
  const struct tt_ddb_trust *t = dd->trust;
  if (!t) return NULL;
  for (size_t i = 0; i < t->n; i++)
    if (t->v[i].relation && strcmp(t->v[i].schema, schema) == 0 &&
        strcmp(t->v[i].name, name) == 0)
      return t->v[i].why;
  return NULL;
}
