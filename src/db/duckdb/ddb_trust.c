/* ddb_trust.c — no macro of a .duckdb file runs unless the user trusts
 * its schema (--trust-functions), as no function of a PostgreSQL or MySQL
 * database's owner does; and no statement changes DuckDB's own state
 * (logging, profiling, the parser, checkpoints) through a table function.
 *
 * A .duckdb file may hold macros (CREATE MACRO: SQL that runs where a
 * query names it), views that call them, tables whose generated columns
 * call them, and trusted macros that call untrusted ones. Built-in
 * functions come first in the search path (ddb_open.c), so a macro named
 * like a built-in of its kind (scalar or table) in system.main never
 * replaces it; this file keeps the others from running at all:
 *
 * - when the database is opened, the macros of schemas not trusted are
 *   listed (duckdb_functions()); then every trusted macro (by its
 *   definition), view (by its stored SQL) and table (by its generated
 *   columns' expressions) whose text names one of them, names a view,
 *   table or macro already found, or reads SQL from a string (query,
 *   query_table, json_execute_serialized_sql), is marked, following the
 *   names breadth-first through an index of each text's words (built
 *   once: linear in the texts, whatever a hostile file holds). Words are
 *   the SQL's names (a quoted one unescaped) and the words inside its
 *   strings, compared without case: a superset of what reading a relation
 *   runs, since a column named like a macro marks its relation too.
 * - before a statement runs, DuckDB's own parser gives its tree
 *   (json_serialize_sql); a function call that names such a macro (unless
 *   unqualified and answered by a built-in of its kind), a marked
 *   relation, or a function that reads SQL or a table from a string
 *   refuses it, naming the macro, the relation and the option. A
 *   statement the serializer cannot give is refused too, when there is
 *   anything to find.
 * - whatever the database, a statement that names a table function
 *   changing DuckDB's state (enable_logging, enable_peg_parser,
 *   checkpoint...) is refused; its tree is read only when its text holds
 *   such a name.
 *
 * The macro check is off for data files (views of tabletalk's own over
 * the user's files, no macros) and for a .duckdb file without untrusted
 * macros. */
#define _GNU_SOURCE /* strcasestr */
#include "db/duckdb/ddb.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* What a name of the index is: a macro (untrusted, or trusted but calling
 * one), a view or a table. */
typedef enum tt_ddb_node_kind {
  TT_DDB_NODE_MACRO,
  TT_DDB_NODE_RELATION,
} tt_ddb_node_kind;

/* A macro, view or table of the file, and whether it may not run. */
typedef struct tt_ddb_node {
  char *schema;
  char *name;
  char *text;     /* what it runs (definition, SQL, generated expressions); NULL: none */
  tt_ddb_node_kind kind;
  bool untrusted; /* a macro of a schema not trusted */
  bool table;     /* macro: a table macro (called in FROM), else a scalar one */
  long nparams;   /* macro: how many parameters it has */
  bool shadowed;  /* macro: a built-in of its kind answers an unqualified call */
  bool tainted;   /* may not run */
  char *why;      /* tainted: what it would run ("the database's own macro main.m") */
  char *root;     /* tainted: the schema to trust for it; NULL: every untrusted one;
                   * "": none (SQL in a string, a state change, unknown SQL) */
} tt_ddb_node;

struct tt_ddb_trust {
  tt_ddb_node *v;
  size_t n;
  char *schemas; /* the untrusted macros' schemas, "main, s2" (for the message) */
};

/* Functions that read SQL or a table from a string: what they run cannot
 * be checked from the tree. */
static const char *const tt_ddb_string_sql[] = {"query", "query_table",
                                                "json_execute_serialized_sql"};
#define TT_DDB_NSTRING_SQL (sizeof tt_ddb_string_sql / sizeof *tt_ddb_string_sql)

/* Table functions that change DuckDB's own state: refused on every
 * DuckDB database (the configuration is locked, these are not settings). */
static const char *const tt_ddb_state_fns[] = {
    "enable_logging",   "disable_logging",   "truncate_duckdb_logs", "enable_peg_parser",
    "disable_peg_parser", "enable_profiling", "disable_profiling",   "checkpoint",
    "force_checkpoint"};
#define TT_DDB_NSTATE_FNS (sizeof tt_ddb_state_fns / sizeof *tt_ddb_state_fns)

/* ---- words of SQL ---------------------------------------------------------------- */

static bool tt_ddb_word_char(unsigned char c) { return isalnum(c) || c == '_' || c >= 0x80; }

/* A word found in a text: its bytes (lower case, own copy) and the node. */
typedef struct tt_ddb_word {
  char *w;
  size_t node;
} tt_ddb_word;

typedef struct tt_ddb_words {
  tt_ddb_word *v;
  size_t n, cap;
} tt_ddb_words;

static void tt_ddb_word_add(tt_ddb_words *ws, const char *s, size_t n, size_t node) {
  if (!n) return;
  if (ws->n == ws->cap) {
    ws->cap = ws->cap ? ws->cap * 2 : 256;
    ws->v = tt_xrealloc(ws->v, ws->cap * sizeof *ws->v);
  }
  char *w = tt_xstrndup(s, n);
  for (char *p = w; *p; p++) *p = (char)tolower((unsigned char)*p);
  ws->v[ws->n++] = (tt_ddb_word){.w = w, .node = node};
}

/* The words of s (n bytes) as plain names. */
static void tt_ddb_plain_words(tt_ddb_words *ws, const char *s, size_t n, size_t node) {
  for (size_t i = 0; i < n;) {
    if (!tt_ddb_word_char((unsigned char)s[i])) {
      i++;
      continue;
    }
    size_t j = i;
    while (j < n && tt_ddb_word_char((unsigned char)s[j])) j++;
    tt_ddb_word_add(ws, s + i, j - i, node);
    i = j;
  }
}

/* The words of sql: plain names, a quoted name unescaped ("a""b" is
 * a"b) as one word, and the plain words inside strings ('...'). */
static void tt_ddb_sql_words(tt_ddb_words *ws, const char *sql, size_t node) {
  for (const char *p = sql; *p;) {
    if (*p == '"' || *p == '\'') {
      char q = *p++;
      tt_buf b = TT_BUF_INIT;
      for (; *p; p++) {
        if (*p == q && p[1] == q) {
          tt_buf_putc(&b, q);
          p++;
        } else if (*p == q) {
          p++;
          break;
        } else {
          tt_buf_putc(&b, *p);
        }
      }
      if (q == '"') tt_ddb_word_add(ws, b.data ? b.data : "", b.len, node);
      else tt_ddb_plain_words(ws, b.data ? b.data : "", b.len, node);
      tt_buf_free(&b);
    } else if (tt_ddb_word_char((unsigned char)*p)) {
      const char *s = p;
      while (*p && tt_ddb_word_char((unsigned char)*p)) p++;
      tt_ddb_word_add(ws, s, (size_t)(p - s), node);
    } else {
      p++;
    }
  }
}

static int tt_ddb_word_cmp(const void *a, const void *b) {
  const tt_ddb_word *x = a, *y = b;
  int c = strcmp(x->w, y->w);
  return c ? c : (x->node > y->node) - (x->node < y->node);
}

/* The first entry of the sorted index for word (lower case), or ws->n. */
static size_t tt_ddb_word_first(const tt_ddb_words *ws, const char *word) {
  size_t lo = 0, hi = ws->n;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (strcmp(ws->v[mid].w, word) < 0) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

static void tt_ddb_words_free(tt_ddb_words *ws) {
  for (size_t i = 0; i < ws->n; i++) free(ws->v[i].w);
  free(ws->v);
}

/* Whether the text (n bytes) holds one of names as a word (any case). */
static bool tt_ddb_text_names_any(const char *sql, size_t n, const char *const *names,
                                  size_t nnames) {
  for (size_t k = 0; k < nnames; k++) {
    size_t len = strlen(names[k]);
    for (const char *p = sql; (p = strcasestr(p, names[k])) != NULL; p++) {
      if ((size_t)(p - sql) + len > n) break;
      bool before = p > sql && tt_ddb_word_char((unsigned char)p[-1]);
      bool after = tt_ddb_word_char((unsigned char)p[len]);
      if (!before && !after) return true;
    }
  }
  return false;
}

/* ---- listing ------------------------------------------------------------------- */

/* Whether schema is named in the comma-separated list (any case, as
 * DuckDB compares names). */
static bool tt_ddb_schema_trusted(const char *list, const char *schema) {
  size_t len = strlen(schema);
  for (const char *p = list; p && *p;) {
    size_t n = strcspn(p, ",");
    if (n == len && strncasecmp(p, schema, n) == 0) return true;
    p += n;
    if (*p == ',') p++;
  }
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
    free(t->v[i].text);
    free(t->v[i].why);
    free(t->v[i].root);
  }
  free(t->v);
  free(t->schemas);
  free(t);
}

static tt_ddb_node *tt_ddb_node_add(struct tt_ddb_trust *t, const json_t *row,
                                    tt_ddb_node_kind kind) {
  t->v = tt_xrealloc(t->v, (t->n + 1) * sizeof *t->v);
  tt_ddb_node *nd = &t->v[t->n++];
  const char *text = tt_ddb_jstr(row, "t");
  *nd = (tt_ddb_node){.schema = tt_xstrdup(tt_ddb_jstr(row, "s")),
                      .name = tt_xstrdup(tt_ddb_jstr(row, "n")),
                      .text = *text ? tt_xstrdup(text) : NULL,
                      .kind = kind,
                      .shadowed = json_is_true(json_object_get(row, "b")),
                      .table = strcmp(tt_ddb_jstr(row, "k"), "table_macro") == 0,
                      .nparams = (long)json_integer_value(json_object_get(row, "p"))};
  return nd;
}

static void tt_ddb_taint(tt_ddb_node *nd, const char *why, const char *root) {
  nd->tainted = true;
  nd->why = tt_xstrdup(why);
  nd->root = root ? tt_xstrdup(root) : NULL;
}

/* Whether name is not one plain word (an operator such as @@@, a
 * name with spaces): such a name is looked for anywhere in the texts. */
static bool tt_ddb_odd_name(const char *name) {
  for (const char *p = name; *p; p++)
    if (!tt_ddb_word_char((unsigned char)*p)) return true;
  return false;
}

/* The seeds of the spread that are not nodes: functions that read SQL
 * from a string, then those that change DuckDB's state. */
#define TT_DDB_NSEEDS (TT_DDB_NSTRING_SQL + TT_DDB_NSTATE_FNS)
static const char *tt_ddb_seed(size_t k) {
  return k < TT_DDB_NSTRING_SQL ? tt_ddb_string_sql[k] : tt_ddb_state_fns[k - TT_DDB_NSTRING_SQL];
}

/* Marks every node whose text names a tainted name, breadth-first from
 * the nodes already tainted, the functions that read SQL from a string
 * and those that change DuckDB's state. */
static void tt_ddb_taint_spread(struct tt_ddb_trust *t) {
  tt_ddb_words ws = {0};
  for (size_t i = 0; i < t->n; i++)
    if (t->v[i].text && !t->v[i].untrusted) tt_ddb_sql_words(&ws, t->v[i].text, i);
  if (ws.n) qsort(ws.v, ws.n, sizeof *ws.v, tt_ddb_word_cmp);
  /* the queue: node indexes, then the seeds (t->n + k) */
  size_t *queue = tt_xcalloc(t->n + TT_DDB_NSEEDS + 1, sizeof *queue);
  size_t head = 0, tail = 0;
  for (size_t k = 0; k < TT_DDB_NSEEDS; k++) queue[tail++] = t->n + k;
  for (size_t i = 0; i < t->n; i++)
    if (t->v[i].tainted) queue[tail++] = i;
  while (head < tail) {
    size_t q = queue[head++];
    const tt_ddb_node *from = q < t->n ? &t->v[q] : NULL;
    const char *seed = from ? NULL : tt_ddb_seed(q - t->n);
    char *word = tt_xstrdup(from ? from->name : seed);
    for (char *p = word; *p; p++) *p = (char)tolower((unsigned char)*p);
    char *why = from ? tt_xstrdup(from->why)
                : q - t->n < TT_DDB_NSTRING_SQL
                    ? tt_xasprintf("SQL read from a string (%s())", seed)
                    : tt_xasprintf("%s(), which changes DuckDB's own state", seed);
    /* what lets it run: from a node, that node's schema; from a seed,
     * nothing (""): no trust makes SQL in a string or a state change safe */
    char *root = from ? (from->root ? tt_xstrdup(from->root) : NULL) : tt_xstrdup("");
    for (size_t k = tt_ddb_word_first(&ws, word); k < ws.n && strcmp(ws.v[k].w, word) == 0; k++) {
      tt_ddb_node *nd = &t->v[ws.v[k].node];
      if (nd->tainted) continue;
      tt_ddb_taint(nd, why, root);
      queue[tail++] = ws.v[k].node;
    }
    /* an operator or odd name: anywhere in a text, as DuckDB stores it */
    if (tt_ddb_odd_name(word))
      for (size_t i = 0; i < t->n; i++) {
        tt_ddb_node *nd = &t->v[i];
        if (nd->tainted || !nd->text || !strcasestr(nd->text, word)) continue;
        tt_ddb_taint(nd, why, root);
        queue[tail++] = i;
      }
    free(word);
    free(why);
    free(root);
  }
  free(queue);
  tt_ddb_words_free(&ws);
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

/* The file's macros: schema, name, definition, and whether a built-in of
 * the same kind in system.main answers an unqualified call (a scalar
 * macro: a scalar, aggregate or macro built-in; a table macro: a table
 * function or table macro; never pg_catalog's, which comes after the
 * file in the search path). */
#define TT_DDB_MACROS_SQL                                                                       \
  "SELECT coalesce(to_json(list({'s': schema_name, 'n': function_name, 'k': function_type, "   \
  "'p': len(parameters), 't': "                                                                 \
  "coalesce(macro_definition, ''), 'b': EXISTS (SELECT 1 FROM system.main.duckdb_functions() b " \
  "WHERE b.internal AND b.database_name = 'system' AND b.schema_name = 'main' AND "             \
  "b.function_name = f.function_name AND CASE WHEN f.function_type = 'macro' THEN "             \
  "b.function_type IN ('scalar', 'aggregate', 'macro') ELSE b.function_type IN ('table', "      \
  "'table_macro') END)} ORDER BY function_name, schema_name)), '[]') FROM "                      \
  "system.main.duckdb_functions() f WHERE NOT internal AND database_name = %s AND "            \
  "function_type IN ('macro', 'table_macro')"

/* Views by their SQL, tables by the expressions of their columns when the
 * table has generated ones (a DEFAULT runs only on a write). */
#define TT_DDB_RELATIONS_SQL                                                                    \
  "SELECT coalesce(to_json(list({'s': s, 'n': n, 't': t, 'g': g})), '[]') FROM (SELECT "      \
  "schema_name AS "                                                                             \
  "s, view_name AS n, coalesce(sql, '') AS t, false AS g FROM system.main.duckdb_views() "    \
  "WHERE NOT "                                                                                  \
  "internal AND "                                                                               \
  "database_name = %s UNION ALL SELECT c.schema_name, c.table_name, "                           \
  "string_agg(c.column_default, ' '), true FROM system.main.duckdb_columns() c JOIN "          \
  "system.main.duckdb_tables() d ON d.database_name = c.database_name AND d.schema_name = "     \
  "c.schema_name AND d.table_name = c.table_name WHERE c.database_name = %s AND "               \
  "c.column_default IS NOT NULL AND d.sql ILIKE '%%GENERATED ALWAYS AS%%' GROUP BY ALL)"

bool tt_ddb_trust_load(tt_db *db, tt_ddb *dd, tt_error *err) {
  if (!dd->database_file) return true;
  tt_buf q = TT_BUF_INIT;
  tt_buf_printf(&q, TT_DDB_MACROS_SQL, dd->dbname_sql);
  json_t *macros = tt_ddb_json_rows(dd, tt_buf_cstr(&q));
  tt_buf_reset(&q);
  struct tt_ddb_trust *t = tt_xcalloc(1, sizeof *t);
  tt_buf schemas = TT_BUF_INIT, names = TT_BUF_INIT;
  size_t nuntrusted = 0, i;
  json_t *m;
  json_array_foreach(macros, i, m) {
    tt_ddb_node *nd = tt_ddb_node_add(t, m, TT_DDB_NODE_MACRO);
    if (names.len) tt_buf_puts(&names, ", ");
    tt_buf_puts(&names, nd->name);
    if (tt_ddb_schema_trusted(db->opts.trust_functions, nd->schema)) continue;
    nd->untrusted = true;
    nuntrusted++;
    char *why = tt_xasprintf("the database's own macro %s.%s", nd->schema, nd->name);
    tt_ddb_taint(nd, why, nd->schema);
    free(why);
    const char *one[] = {nd->schema};
    if (!tt_ddb_text_names_any(tt_buf_cstr(&schemas), schemas.len, one, 1)) {
      if (schemas.len) tt_buf_puts(&schemas, ", ");
      tt_buf_puts(&schemas, nd->schema);
    }
  }
  t->schemas = tt_buf_detach(&schemas);
  /* a trusted macro with parameters may call an untrusted one from a
   * parameter's default, which DuckDB does not list */
  for (size_t k = 0; nuntrusted && k < t->n; k++)
    if (!t->v[k].untrusted && t->v[k].nparams > 0)
      tt_ddb_taint(&t->v[k], "what its parameters' defaults call (DuckDB does not show them), "
                             "beside macros not trusted", NULL);
  json_t *rels = NULL;
  if (macros) { /* also without macros: a view may change DuckDB's state */
    tt_buf_printf(&q, TT_DDB_RELATIONS_SQL, dd->dbname_sql, dd->dbname_sql);
    rels = tt_ddb_json_rows(dd, tt_buf_cstr(&q));
  }
  tt_buf_free(&q);
  if (!macros || !rels) {
    json_decref(macros);
    json_decref(rels);
    tt_buf_free(&names);
    tt_ddb_trust_free(t);
    tt_db_set_error(err, TT_ERR_UNAVAILABLE,
                    "%s: cannot list the database's macros and what uses them", db->name);
    tt_error_hint(err, "libduckdb must have its json extension built in (scripts/deps.sh "
                       "fetches the one tabletalk is tested with)");
    return false;
  }
  if (names.len) tt_ddb_warn_macros(dd, tt_buf_cstr(&names), nuntrusted > 0);
  tt_buf_free(&names);
  json_decref(macros);
  json_t *r;
  json_array_foreach(rels, i, r) {
    tt_ddb_node *nd = tt_ddb_node_add(t, r, TT_DDB_NODE_RELATION);
    if (!nd->text && !json_is_true(json_object_get(r, "g")))
      tt_ddb_taint(nd, "SQL that DuckDB does not show (a view without its text)", "");
  }
  json_decref(rels);
  tt_ddb_taint_spread(t);
  bool any = false;
  for (size_t k = 0; k < t->n && !any; k++) any = t->v[k].tainted;
  if (any) dd->trust = t;
  else tt_ddb_trust_free(t);
  return true;
}

/* ---- checking a statement ------------------------------------------------------- */

typedef struct tt_ddb_found {
  const tt_ddb_node *node;   /* a tainted macro or relation named */
  const char *string_sql;    /* a function reading SQL from a string */
  const char *state_fn;      /* a function changing DuckDB's state */
} tt_ddb_found;

/* Looks through every object of the tree for a call or a table that may
 * not run (t: NULL when only the state functions are looked for);
 * in_from: node is the call of a table function (a TABLE_FUNCTION's
 * "function"), which only a table macro answers, as only a scalar macro
 * answers any other call. */
static void tt_ddb_walk(const struct tt_ddb_trust *t, const json_t *node, bool in_from,
                        tt_ddb_found *f) {
  if (f->node || f->string_sql || f->state_fn) return;
  if (json_is_array(node)) {
    size_t i;
    json_t *v;
    json_array_foreach(node, i, v) tt_ddb_walk(t, v, false, f);
    return;
  }
  if (!json_is_object(node)) return;
  const char *fn = json_string_value(json_object_get(node, "function_name"));
  if (fn) {
    for (size_t i = 0; i < TT_DDB_NSTATE_FNS; i++)
      if (strcasecmp(fn, tt_ddb_state_fns[i]) == 0) f->state_fn = tt_ddb_state_fns[i];
    bool qualified = *tt_ddb_jstr(node, "schema") || *tt_ddb_jstr(node, "catalog");
    for (size_t i = 0; i < TT_DDB_NSTRING_SQL; i++)
      if (strcasecmp(fn, tt_ddb_string_sql[i]) == 0) f->string_sql = tt_ddb_string_sql[i];
    for (size_t i = 0; t && i < t->n && !f->node; i++)
      if (t->v[i].kind == TT_DDB_NODE_MACRO && t->v[i].tainted && t->v[i].table == in_from &&
          strcasecmp(fn, t->v[i].name) == 0 && (qualified || !t->v[i].shadowed))
        f->node = &t->v[i];
  }
  const char *table = json_string_value(json_object_get(node, "table_name"));
  if (t && table && *table)
    for (size_t i = 0; i < t->n && !f->node; i++)
      if (t->v[i].kind == TT_DDB_NODE_RELATION && t->v[i].tainted &&
          strcasecmp(table, t->v[i].name) == 0)
        f->node = &t->v[i];
  bool table_fn = strcmp(tt_ddb_jstr(node, "type"), "TABLE_FUNCTION") == 0;
  const char *key;
  json_t *v;
  json_object_foreach((json_t *)node, key, v)
      tt_ddb_walk(t, v, table_fn && strcmp(key, "function") == 0, f);
}

static void tt_ddb_trust_hint(const struct tt_ddb_trust *t, const char *schema, tt_error *err) {
  if (schema ? !*schema : !t || !*t->schemas) {
    tt_error_hint(err, "tabletalk runs no SQL read from a string and nothing that changes "
                       "DuckDB's state: name the tables in the query itself");
    return;
  }
  tt_error_hint(err, "only built-in functions run; --trust-functions %s lets %s macros run, if "
                     "you trust whoever made the file",
                schema ? schema : t->schemas, schema ? "that schema's" : "those schemas'");
}

void tt_ddb_trust_refuse_unchecked(const tt_ddb *dd, tt_error *err) {
  if (!dd->trust || !*dd->trust->schemas) {
    tt_db_refuse(err, TT_REFUSE_PRAGMA,
                 "this statement names a function that changes DuckDB's state and cannot be "
                 "checked: only a plain SELECT runs");
    return;
  }
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
  if (!t && !tt_ddb_text_names_any(sql, len, tt_ddb_state_fns, TT_DDB_NSTATE_FNS) &&
      !tt_ddb_text_names_any(sql, len, tt_ddb_string_sql, TT_DDB_NSTRING_SQL))
    return true;
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
  tt_ddb_walk(t, json_object_get(tree, "statements"), false, &f);
  json_decref(tree);
  if (f.state_fn) {
    tt_db_refuse(err, TT_REFUSE_PRAGMA,
                 "%s() changes DuckDB's own state (logging, profiling, the parser, "
                 "checkpoints): only a SELECT of data runs",
                 f.state_fn);
    return false;
  }
  if (f.node && f.node->kind == TT_DDB_NODE_RELATION) {
    tt_db_refuse(err, TT_REFUSE_FUNCTION, "reading %s.%s runs %s: the query is not run",
                 f.node->schema, f.node->name, f.node->why);
    tt_ddb_trust_hint(t, f.node->root, err);
    return false;
  }
  if (f.node) {
    if (f.node->untrusted)
      tt_db_refuse(err, TT_REFUSE_FUNCTION,
                   "%s is a macro of the database (schema %s), not a built-in function: the "
                   "query is not run",
                   f.node->name, f.node->schema);
    else
      tt_db_refuse(err, TT_REFUSE_FUNCTION,
                   "the macro %s.%s runs %s: the query is not run", f.node->schema,
                   f.node->name, f.node->why);
    tt_ddb_trust_hint(t, f.node->root, err);
    return false;
  }
  if (f.string_sql) {
    tt_db_refuse(err, TT_REFUSE_FUNCTION,
                 "%s() reads SQL or a table from a string, which cannot be checked: name the "
                 "tables in the query itself",
                 f.string_sql);
    tt_ddb_trust_hint(t, NULL, err);
    return false;
  }
  return true;
}

const char *tt_ddb_trust_relation(const tt_ddb *dd, const char *schema, const char *name,
                                  const char **root) {
  const struct tt_ddb_trust *t = dd->trust;
  if (!t) return NULL;
  for (size_t i = 0; i < t->n; i++)
    if (t->v[i].kind == TT_DDB_NODE_RELATION && t->v[i].tainted &&
        strcmp(t->v[i].schema, schema) == 0 && strcmp(t->v[i].name, name) == 0) {
      const char *r = t->v[i].root ? t->v[i].root : t->schemas;
      *root = *r ? r : NULL;
      return t->v[i].why;
    }
  return NULL;
}
