/* pg_trust.c — the catalog check of the PostgreSQL engine (pg_trust.h):
 * no function that the database's owner defined runs unless the user
 * trusts its schema. One query over pg_catalog, written here, finds what
 * each name of a query (tt_pg_refs) could run; this file writes that
 * query, reads its rows, words the refusal, and keeps the names found
 * harmless on the connection for a minute; a profile of the database
 * (functions that may not run, views, policies) spares the check where
 * there is nothing to find.
 *
 * Why a catalog query and not the server's own resolution: PostgreSQL
 * offers no read-only way to see which function a query's names resolve to
 * without planning it, and planning runs functions (an IMMUTABLE function
 * of constants is evaluated while planning, so EXPLAIN runs a planted
 * one); a temporary view would record its dependencies but needs a writable
 * transaction and the TEMP privilege, fires event triggers and fails on a
 * standby. So for a name the check takes every function or operator that
 * resolution could choose (same name, in any schema, an argument count that
 * fits): a superset of what the server picks, whatever the argument types
 * and the search_path. What views, policies and types use is exact: their
 * stored dependencies (pg_depend) and trees (pg_rewrite.ev_action for the
 * built-in functions and catalogs, whose dependencies are not recorded). */
#include "db/pg/pg_trust.h"
#include "db/pg/pq_api.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db/db_internal.h"

/* ---- trusted schemas ----------------------------------------------------- */

void tt_pg_schema_list_parse(const char *list, tt_pg_schema_list *out) {
  memset(out, 0, sizeof *out);
  for (const char *p = list; p && *p;) {
    size_t n = strcspn(p, ",");
    if (n > 0) {
      out->v = tt_xrealloc(out->v, (out->n + 1) * sizeof *out->v);
      out->v[out->n++] = tt_xstrndup(p, n);
    }
    p += n;
    if (*p == ',') p++;
  }
}

void tt_pg_schema_list_free(tt_pg_schema_list *l) {
  for (size_t i = 0; i < l->n; i++) free(l->v[i]);
  free(l->v);
  memset(l, 0, sizeof *l);
}

/* ---- what a connection has learnt ------------------------------------------ */

#define TT_PG_TRUST_MAX_KNOWN 4096 /* names kept; then the list starts again */
/* Verdicts and the profile are learnt again after this long: a database
 * that changes under a long session (serve-mcp) is checked again. */
#define TT_PG_TRUST_TTL_MS 60000.0

/* A set of names (sorted, for bsearch). */
typedef struct tt_pg_names {
  char **v;
  size_t n;
} tt_pg_names;

static void tt_pg_names_free(tt_pg_names *s) {
  for (size_t i = 0; i < s->n; i++) free(s->v[i]);
  free(s->v);
  memset(s, 0, sizeof *s);
}

static int tt_pg_names_cmp(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

static bool tt_pg_names_has(const tt_pg_names *s, const char *name) {
  return s->n && bsearch(&name, s->v, s->n, sizeof *s->v, tt_pg_names_cmp) != NULL;
}

/* The elements of a text[] as PostgreSQL writes it ({a,"b c","d\"e"});
 * NULL or "" (an empty array_agg) is the empty set. */
static void tt_pg_names_parse(tt_pg_names *s, const char *lit) {
  tt_pg_names_free(s);
  const char *p = lit && *lit == '{' ? lit + 1 : "";
  while (*p && *p != '}') {
    tt_buf name = TT_BUF_INIT;
    if (*p == '"') {
      for (p++; *p && *p != '"'; p++) {
        if (*p == '\\' && p[1]) p++;
        tt_buf_putc(&name, *p);
      }
      if (*p == '"') p++;
    } else {
      for (; *p && *p != ',' && *p != '}'; p++) tt_buf_putc(&name, *p);
    }
    s->v = tt_xrealloc(s->v, (s->n + 1) * sizeof *s->v);
    s->v[s->n++] = tt_buf_detach(&name);
    if (*p == ',') p++;
  }
  if (s->n) qsort(s->v, s->n, sizeof *s->v, tt_pg_names_cmp);
}

/* What the database holds that a check could find (its profile): the
 * names of its functions and aggregates that may not run, of operators
 * whose code may not, of relations whose reading runs something of its
 * own (views, foreign tables, tables with row security policies,
 * children, or columns of its own types); whether a function may not run
 * at all, and what it added to built-in types. */
typedef struct tt_pg_profile {
  bool read;
  long bad, global;  /* functions that may not run; additions to built-in types */
  tt_pg_names bad_names, bad_ops, risky;
} tt_pg_profile;

static void tt_pg_profile_free(tt_pg_profile *p) {
  tt_pg_names_free(&p->bad_names);
  tt_pg_names_free(&p->bad_ops);
  tt_pg_names_free(&p->risky);
  memset(p, 0, sizeof *p);
}

struct tt_pg_trust {
  bool have_path;
  char *path;          /* current_schemas(true), as a text[] literal's text */
  char *trust_key;     /* the trusted schemas the verdicts were found under */
  char **known;        /* refs found harmless (tt_pg_trust_key) */
  size_t nknown, cap;
  bool global_known;   /* the database's additions to built-in types are harmless */
  tt_pg_profile profile;
  double since_ms;     /* when the verdicts and the profile began to be learnt */
};

tt_pg_trust *tt_pg_trust_new(void) { return tt_xcalloc(1, sizeof(tt_pg_trust)); }

static void tt_pg_trust_forget_verdicts(tt_pg_trust *t) {
  for (size_t i = 0; i < t->nknown; i++) free(t->known[i]);
  t->nknown = 0;
  t->global_known = false;
  tt_pg_profile_free(&t->profile);
  t->since_ms = tt_now_ms();
}

void tt_pg_trust_forget(tt_pg_trust *t) {
  if (!t) return;
  tt_pg_trust_forget_verdicts(t);
  free(t->path);
  t->path = NULL;
  t->have_path = false;
}

void tt_pg_trust_free(tt_pg_trust *t) {
  if (!t) return;
  tt_pg_trust_forget(t);
  free(t->known);
  free(t->trust_key);
  free(t);
}

static char *tt_pg_trust_key(const tt_pg_ref *r) {
  return tt_xasprintf("%c\x1f%s\x1f%s\x1f%d", r->kind, r->schema ? r->schema : "", r->name,
                      r->nargs);
}

static bool tt_pg_trust_known(const tt_pg_trust *t, const tt_pg_ref *r) {
  char *k = tt_pg_trust_key(r);
  bool found = false;
  for (size_t i = 0; i < t->nknown && !found; i++) found = strcmp(t->known[i], k) == 0;
  free(k);
  return found;
}

static void tt_pg_trust_learn(tt_pg_trust *t, const tt_pg_ref *r) {
  if (tt_pg_trust_known(t, r)) return;
  if (t->nknown >= TT_PG_TRUST_MAX_KNOWN) tt_pg_trust_forget_verdicts(t);
  if (t->nknown == t->cap) {
    t->cap = t->cap ? 2 * t->cap : 64;
    t->known = tt_xrealloc(t->known, t->cap * sizeof *t->known);
  }
  t->known[t->nknown++] = tt_pg_trust_key(r);
}

/* The verdicts hold under the schemas trusted when they were found, for
 * a while. */
static void tt_pg_trust_under(tt_pg_trust *t, const tt_pg_schema_list *trust) {
  tt_buf k = TT_BUF_INIT;
  for (size_t i = 0; trust && i < trust->n; i++) tt_buf_printf(&k, "%s\x1f", trust->v[i]);
  if (!t->trust_key || strcmp(t->trust_key, tt_buf_cstr(&k)) != 0 ||
      tt_now_ms() - t->since_ms > TT_PG_TRUST_TTL_MS) {
    tt_pg_trust_forget_verdicts(t);
    free(t->trust_key);
    t->trust_key = tt_xstrdup(tt_buf_cstr(&k));
  }
  tt_buf_free(&k);
}

/* ---- the check's SQL ---------------------------------------------------------- */

/* s as an E'' literal: its meaning does not depend on
 * standard_conforming_strings, which the database may have turned off. */
static void tt_pg_put_literal(tt_buf *b, const char *s) {
  tt_buf_puts(b, "E'");
  for (; *s; s++) {
    if (*s == '\'' || *s == '\\') tt_buf_putc(b, *s);
    tt_buf_putc(b, *s);
  }
  tt_buf_putc(b, '\'');
}

static void tt_pg_put_text_array(tt_buf *b, char *const *v, size_t n) {
  tt_buf_puts(b, "ARRAY[");
  for (size_t i = 0; i < n; i++) {
    if (i) tt_buf_putc(b, ',');
    tt_pg_put_literal(b, v[i]);
  }
  tt_buf_puts(b, "]::text[]");
}

/* C libraries of extensions whose every function only computes from its
 * arguments (no files, connections, SQL text or other sessions' data):
 * their C functions run like built-in ones. A function of theirs written in
 * SQL or PL/pgSQL is judged like any other (its body may have been
 * replaced). */
static const char *const TT_PG_PURE_LIBS[] = {
    "citext", "hstore", "pg_trgm", "fuzzystrmatch", "cube", "isn", "ltree", "_int", "seg",
    "btree_gin", "btree_gist", "uuid-ossp", "pgcrypto", "unaccent", "postgis-3", "vector",
};

/* Whether function p (an alias of pg_proc) may run: built in, in a trusted
 * schema, C code of a pure extension, an internal range constructor, or an
 * aggregate (whose support functions are judged one by one). */
#define TT_PG_JUDGE(p)                                                                         \
  "(" p ".oid < 16384 OR " p ".pronamespace IN (SELECT nsp FROM trusted) OR (" p              \
  ".prolang = 13 AND " p ".probin = ANY (libs.v)) OR (" p ".prolang = 12 AND " p ".prosrc IN " \
  "('range_constructor2', 'range_constructor3', 'multirange_constructor0', "                   \
  "'multirange_constructor1', 'multirange_constructor2')) OR " p ".prokind = 'a')"

/* The check, one query, written from the parts the items need. Items
 * (i, k, s, n, a): k as tt_pg_ref_kind, 'R' a relation by its oid (a),
 * 'g' the database's additions to built-in types (i -1). A name without a
 * schema is looked up in every schema, not only the search_path's: a
 * superset of what the server could choose, and no round trip to learn
 * the path. Rows out: i, kind (P: a function that may not run; B: a
 * built-in function a view or policy calls, vetted against the guard's
 * denied names; S: a built-in relation read, vetted against its secret
 * ones; U: a function an off-list name can be that no trusted schema
 * holds), how (view, policy NAME, foreign, column NAME, type, call, column
 * notation, operator, global, untrusted call), the relation where it was
 * found and the one the query reads (schema, name), what (an operator, a
 * cast, a type...), the function (regprocedure), its schema and name. */
enum {
  TT_N_REL = 1,       /* relations: r, R */
  TT_N_TYPE = 2,      /* types named: t */
  TT_N_CALL = 4,      /* calls and fields: f, c */
  TT_N_UNTRUSTED = 8, /* off-list calls: F */
  TT_N_OP = 16,       /* operators: o */
  TT_N_GLOBAL = 32,   /* g */
  TT_N_DEPS = TT_N_REL | TT_N_TYPE,
};

typedef struct tt_pg_part {
  unsigned need;
  const char *sql;
} tt_pg_part;

/* a name's schema: any (unqualified) or the one written */
#define TT_PG_IN_SCHEMA(col)                                                                 \
  "(i.s IS NULL OR " col " = (SELECT oid FROM pg_namespace WHERE nspname = i.s))"
/* the argument counts a function can take */
#define TT_PG_ARITY                                                                          \
  "(i.a < 0 OR i.a BETWEEN p.pronargs - p.pronargdefaults AND p.pronargs "                   \
  "OR (p.provariadic <> 0 AND i.a >= p.pronargs - 1))"
#define TT_PG_OPFAMILY "'the operator family ' || quote_ident(n.nspname) || '.' || quote_ident(f.opfname)"

/* Relations: the ones named, and what reading them reads: views'
 * relations (recursively), inheritance children and partitions. */
static const tt_pg_part TT_PG_CTES[] = {
    {TT_N_REL,
     "named(i, oid) AS (\n"
     "  SELECT i.i, c.oid FROM items i JOIN pg_class c ON c.relname = i.n\n"
     "  WHERE i.k = 'r' AND " TT_PG_IN_SCHEMA("c.relnamespace") "\n"
     "  UNION ALL SELECT i.i, i.a::oid FROM items i WHERE i.k = 'R'),\n"
     "rels(i, oid, top) AS (\n"
     "  SELECT i, oid, oid FROM named\n"
     "  UNION\n"
     "  SELECT r.i, e.dst, r.top FROM rels r JOIN (\n"
     "    SELECT w.ev_class AS src, d.refobjid AS dst FROM pg_rewrite w\n"
     "    JOIN pg_class v ON v.oid = w.ev_class AND v.relkind = 'v'\n"
     "    JOIN pg_depend d ON d.classid = 'pg_rewrite'::regclass AND d.objid = w.oid\n"
     "     AND d.refclassid = 'pg_class'::regclass AND d.refobjid <> w.ev_class\n"
     "    WHERE w.ev_class >= 16384\n"
     "    UNION ALL SELECT inhparent, inhrelid FROM pg_inherits) e ON e.src = r.oid),\n"},
};

/* What reading them runs: views' definitions (their recorded dependencies,
 * and their stored trees for the built-in functions and catalogs, whose
 * dependencies are not recorded), row security policies, foreign tables'
 * handlers; their column types; the types the query names. */
#define TT_PG_VIEWS_OF_RELS                                                                  \
  "  FROM rels r JOIN pg_class c ON c.oid = r.oid AND c.relkind = 'v' AND c.oid >= 16384\n"  \
  "  JOIN pg_rewrite w ON w.ev_class = c.oid\n"
static const tt_pg_part TT_PG_DEPS[] = {
    {TT_N_REL,
     "  SELECT r.i, r.oid, r.top, 'view', d.refclassid, d.refobjid\n" TT_PG_VIEWS_OF_RELS
     "  JOIN pg_depend d ON d.classid = 'pg_rewrite'::regclass AND d.objid = w.oid\n"},
    {TT_N_REL,
     "  SELECT r.i, r.oid, r.top, 'view', 'pg_proc'::regclass, m[2]::oid\n" TT_PG_VIEWS_OF_RELS
     "  CROSS JOIN LATERAL regexp_matches(w.ev_action::text, "
     "' :(funcid|aggfnoid|winfnoid) ([0-9]+)', 'g') m\n"},
    {TT_N_REL,
     "  SELECT r.i, r.oid, r.top, 'view', 'pg_class'::regclass, m[1]::oid\n" TT_PG_VIEWS_OF_RELS
     "  CROSS JOIN LATERAL regexp_matches(w.ev_action::text, ' :relid ([0-9]+)', 'g') m\n"},
    {TT_N_REL,
     "  SELECT r.i, r.oid, r.top, 'policy ' || quote_ident(pol.polname), d.refclassid, d.refobjid\n"
     "  FROM rels r JOIN pg_policy pol ON pol.polrelid = r.oid\n"
     "  JOIN pg_depend d ON d.classid = 'pg_policy'::regclass AND d.objid = pol.oid\n"},
    {TT_N_REL,
     "  SELECT r.i, r.oid, r.top, 'policy ' || quote_ident(pol.polname), 'pg_proc'::regclass,\n"
     "    m[2]::oid\n"
     "  FROM rels r JOIN pg_policy pol ON pol.polrelid = r.oid\n"
     "  CROSS JOIN LATERAL regexp_matches(coalesce(pol.polqual::text, '') || ' ' ||\n"
     "    coalesce(pol.polwithcheck::text, ''), ' :(funcid|aggfnoid|winfnoid) ([0-9]+)', 'g') m\n"},
    {TT_N_REL,
     "  SELECT r.i, r.oid, r.top, 'foreign', 'pg_proc'::regclass, w.fdwhandler FROM rels r\n"
     "  JOIN pg_foreign_table ft ON ft.ftrelid = r.oid\n"
     "  JOIN pg_foreign_server s ON s.oid = ft.ftserver\n"
     "  JOIN pg_foreign_data_wrapper w ON w.oid = s.srvfdw\n"},
    {TT_N_REL,
     "  SELECT r.i, r.oid, r.top, 'column ' || quote_ident(a.attname), 'pg_type'::regclass,\n"
     "    a.atttypid\n"
     "  FROM rels r JOIN pg_attribute a ON a.attrelid = r.oid AND a.attnum > 0\n"
     "   AND NOT a.attisdropped AND a.atttypid >= 16384\n"},
    {TT_N_TYPE,
     "  SELECT i.i, NULL::oid, NULL::oid, 'type', 'pg_type'::regclass, t.oid FROM items i\n"
     "  JOIN pg_type t ON t.typname = i.n\n"
     "  WHERE i.k = 't' AND t.oid >= 16384 AND " TT_PG_IN_SCHEMA("t.typnamespace") "\n"},
};

/* Every function that can run, and where from: what the definitions use,
 * what a type of the database is made of, the functions and operators a
 * name can be, and what the database added to built-in types. */
static const tt_pg_part TT_PG_PROCS[] = {
    {TT_N_DEPS, "  SELECT i, rel, top, how, NULL::text, obj FROM deps WHERE cls = 'pg_proc'::regclass\n"},
    {TT_N_DEPS,
     "  SELECT d.i, d.rel, d.top, d.how, 'the operator ' || o.oid::regoperator::text, f.fn\n"
     "  FROM deps d JOIN pg_operator o ON d.cls = 'pg_operator'::regclass AND o.oid = d.obj\n"
     "  CROSS JOIN LATERAL unnest(ARRAY[o.oprcode::oid, o.oprrest::oid, o.oprjoin::oid]) f(fn)\n"},
    {TT_N_DEPS,
     "  SELECT y.i, y.rel, y.top, y.how, 'type ' || y.t::regtype::text, f.fn\n"
     "  FROM types y JOIN pg_type ty ON ty.oid = y.t\n"
     "  CROSS JOIN LATERAL unnest(ARRAY[ty.typinput::oid, ty.typoutput::oid, ty.typreceive::oid,\n"
     "    ty.typsend::oid, ty.typmodin::oid, ty.typmodout::oid, ty.typsubscript::oid]) f(fn)\n"},
    {TT_N_DEPS,
     "  SELECT y.i, y.rel, y.top, y.how, 'the check of domain ' || y.t::regtype::text,\n"
     "    CASE WHEN d.refclassid = 'pg_operator'::regclass\n"
     "      THEN (SELECT oprcode FROM pg_operator WHERE oid = d.refobjid) ELSE d.refobjid END\n"
     "  FROM types y JOIN pg_constraint k ON k.contypid = y.t\n"
     "  JOIN pg_depend d ON d.classid = 'pg_constraint'::regclass AND d.objid = k.oid\n"
     "   AND d.refclassid IN ('pg_proc'::regclass, 'pg_operator'::regclass)\n"},
    {TT_N_DEPS,
     "  SELECT y.i, y.rel, y.top, y.how, 'the range type ' || y.t::regtype::text, f.fn\n"
     "  FROM types y JOIN pg_range g ON g.rngtypid = y.t\n"
     "  CROSS JOIN LATERAL unnest(ARRAY[g.rngcanonical::oid, g.rngsubdiff::oid]) f(fn)\n"},
    {TT_N_DEPS,
     "  SELECT y.i, y.rel, y.top, y.how, 'a cast from ' || k.castsource::regtype::text ||\n"
     "    ' to ' || k.casttarget::regtype::text, k.castfunc\n"
     "  FROM types y JOIN pg_cast k ON k.castsource = y.t OR k.casttarget = y.t\n"},
    {TT_N_DEPS,
     "  SELECT y.i, y.rel, y.top, y.how, " TT_PG_OPFAMILY ", p.amproc\n"
     "  FROM types y JOIN pg_amproc p ON p.amproclefttype = y.t OR p.amprocrighttype = y.t\n"
     "  JOIN pg_opfamily f ON f.oid = p.amprocfamily JOIN pg_namespace n ON n.oid = f.opfnamespace\n"},
    {TT_N_DEPS,
     "  SELECT y.i, y.rel, y.top, y.how, " TT_PG_OPFAMILY ", o.oprcode\n"
     "  FROM types y JOIN pg_amop a ON a.amoplefttype = y.t OR a.amoprighttype = y.t\n"
     "  JOIN pg_operator o ON o.oid = a.amopopr\n"
     "  JOIN pg_opfamily f ON f.oid = a.amopfamily JOIN pg_namespace n ON n.oid = f.opfnamespace\n"},
    {TT_N_CALL,
     "  SELECT i.i, NULL::oid, NULL::oid, CASE i.k WHEN 'c' THEN 'column notation' ELSE 'call' END, NULL,\n"
     "    p.oid\n"
     "  FROM items i JOIN pg_proc p ON p.proname = i.n\n"
     "  WHERE i.k IN ('f', 'c') AND p.oid >= 16384 AND " TT_PG_IN_SCHEMA("p.pronamespace") "\n"
     "    AND " TT_PG_ARITY "\n"},
    {TT_N_UNTRUSTED,
     "  SELECT i.i, NULL::oid, NULL::oid, 'untrusted call', NULL, p.oid\n"
     "  FROM items i JOIN pg_proc p ON p.proname = i.n\n"
     "  WHERE i.k = 'F' AND p.pronamespace NOT IN (SELECT nsp FROM trusted)\n"
     "    AND " TT_PG_IN_SCHEMA("p.pronamespace") " AND " TT_PG_ARITY "\n"},
    {TT_N_OP,
     "  SELECT i.i, NULL::oid, NULL::oid, 'operator', 'the operator ' || o.oid::regoperator::text, f.fn\n"
     "  FROM items i JOIN pg_operator o ON o.oprname = i.n\n"
     "  CROSS JOIN LATERAL unnest(ARRAY[o.oprcode::oid, o.oprrest::oid, o.oprjoin::oid]) f(fn)\n"
     "  WHERE i.k = 'o' AND o.oid >= 16384 AND " TT_PG_IN_SCHEMA("o.oprnamespace") "\n"},
    {TT_N_GLOBAL, /* an overload of a built-in name put into pg_catalog: it can be chosen
                   * even where the search_path holds only pg_catalog (tabletalk's own SQL) */
     "  SELECT -1, NULL::oid, NULL::oid, 'global', NULL, p.oid FROM pg_proc p\n"
     "  WHERE p.pronamespace = 'pg_catalog'::regnamespace AND p.oid >= 16384 AND EXISTS\n"
     "    (SELECT 1 FROM pg_proc b WHERE b.proname = p.proname AND b.oid < 16384)\n"},
    {TT_N_GLOBAL,
     "  SELECT -1, NULL::oid, NULL::oid, 'global', 'the operator ' || o.oid::regoperator::text, f.fn\n"
     "  FROM pg_operator o\n"
     "  CROSS JOIN LATERAL unnest(ARRAY[o.oprcode::oid, o.oprrest::oid, o.oprjoin::oid]) f(fn)\n"
     "  WHERE o.oprnamespace = 'pg_catalog'::regnamespace AND o.oid >= 16384 AND EXISTS\n"
     "    (SELECT 1 FROM pg_operator b WHERE b.oprname = o.oprname AND b.oid < 16384)\n"},
    {TT_N_GLOBAL,
     "  SELECT -1, NULL::oid, NULL::oid, 'global', 'a cast from ' || k.castsource::regtype::text ||\n"
     "    ' to ' || k.casttarget::regtype::text, k.castfunc\n"
     "  FROM pg_cast k WHERE k.oid >= 16384 AND k.castsource < 16384\n"
     "   AND (k.casttarget < 16384 OR k.castcontext = 'i')\n"},
    {TT_N_GLOBAL,
     "  SELECT -1, NULL::oid, NULL::oid, 'global', " TT_PG_OPFAMILY ", p.amproc\n"
     "  FROM pg_amproc p JOIN pg_opfamily f ON f.oid = p.amprocfamily\n"
     "  JOIN pg_namespace n ON n.oid = f.opfnamespace\n"
     "  WHERE p.oid >= 16384 AND p.amproclefttype < 16384 AND p.amprocrighttype < 16384\n"},
    {TT_N_GLOBAL,
     "  SELECT -1, NULL::oid, NULL::oid, 'global', " TT_PG_OPFAMILY ", o.oprcode\n"
     "  FROM pg_amop a JOIN pg_operator o ON o.oid = a.amopopr\n"
     "  JOIN pg_opfamily f ON f.oid = a.amopfamily JOIN pg_namespace n ON n.oid = f.opfnamespace\n"
     "  WHERE a.oid >= 16384 AND a.amoplefttype < 16384 AND a.amoprighttype < 16384\n"},
};

/* The database's types in play, with the types they are made of. */
static const char TT_PG_TYPES[] =
    "types(i, rel, top, how, t) AS (\n"
    "  SELECT i, rel, top, how, obj FROM deps WHERE cls = 'pg_type'::regclass AND obj >= 16384\n"
    "  UNION\n"
    "  SELECT y.i, y.rel, y.top, y.how, x.t FROM types y JOIN pg_type ty ON ty.oid = y.t\n"
    "  CROSS JOIN LATERAL (SELECT ty.typelem UNION ALL SELECT ty.typbasetype\n"
    "    UNION ALL SELECT atttypid FROM pg_attribute WHERE attrelid = ty.typrelid AND attnum > 0\n"
    "    UNION ALL SELECT rngsubtype FROM pg_range WHERE rngtypid = ty.oid\n"
    "    UNION ALL SELECT rngtypid FROM pg_range WHERE rngmultitypid = ty.oid) x(t)\n"
    "  WHERE x.t >= 16384),\n";

/* An aggregate of the database's runs its support functions; then what
 * may not run, what the guard's lists vet, and the names to show. */
static const char TT_PG_TAIL[] =
    "procs(i, rel, top, how, what, fn) AS (\n"
    "  SELECT * FROM procs0\n"
    "  UNION ALL\n"
    "  SELECT c.i, c.rel, c.top, c.how, 'the aggregate ' || c.fn::regprocedure::text, f.fn\n"
    "  FROM procs0 c JOIN pg_aggregate g ON g.aggfnoid = c.fn AND c.fn >= 16384\n"
    "  CROSS JOIN LATERAL unnest(ARRAY[g.aggtransfn::oid, g.aggfinalfn::oid, g.aggcombinefn::oid,\n"
    "    g.aggserialfn::oid, g.aggdeserialfn::oid, g.aggmtransfn::oid, g.aggminvtransfn::oid,\n"
    "    g.aggmfinalfn::oid]) f(fn)),\n"
    "found(i, kind, how, rel, top, what, fn) AS (\n"
    "  SELECT c.i, CASE WHEN c.how = 'untrusted call' THEN 'U' WHEN p.oid < 16384 THEN 'B' ELSE 'P' END,\n"
    "    c.how, c.rel, c.top, c.what, p.oid\n"
    "  FROM procs c JOIN pg_proc p ON p.oid = c.fn, libs\n"
    "  WHERE c.fn <> 0 AND (c.how = 'untrusted call' OR p.oid < 16384 AND c.how = 'view'\n"
    "    OR p.oid < 16384 AND c.how LIKE 'policy %' OR NOT " TT_PG_JUDGE("p") ")\n";
static const char TT_PG_SECRETS[] =
    "  UNION ALL\n"
    "  SELECT r.i, 'S', 'read', r.oid, r.top, NULL, NULL FROM rels r WHERE r.oid < 16384\n"
    "  UNION ALL\n"
    "  SELECT d.i, 'S', 'view', d.obj, d.top, NULL, NULL FROM deps d\n"
    "  WHERE d.cls = 'pg_class'::regclass AND d.obj < 16384\n";
static const char TT_PG_SELECT[] =
    ")\n"
    "SELECT DISTINCT x.i, x.kind, x.how, rn.nspname, rc.relname, tn.nspname, tc.relname, x.what,\n"
    "  x.fn::regprocedure::text, fnn.nspname, fp.proname\n"
    "FROM found x\n"
    "LEFT JOIN pg_class rc ON rc.oid = x.rel LEFT JOIN pg_namespace rn ON rn.oid = rc.relnamespace\n"
    "LEFT JOIN pg_class tc ON tc.oid = x.top LEFT JOIN pg_namespace tn ON tn.oid = tc.relnamespace\n"
    "LEFT JOIN pg_proc fp ON fp.oid = x.fn LEFT JOIN pg_namespace fnn ON fnn.oid = fp.pronamespace\n"
    "WHERE x.kind <> 'S' OR rn.nspname IN ('pg_catalog', 'information_schema')\n"
    "ORDER BY 1, 2, 3, 4, 5, 8, 9";

/* parts[] joined by UNION ALL, those that need allows */
static void tt_pg_put_union(tt_buf *sql, const tt_pg_part *parts, size_t n, unsigned need) {
  bool first = true;
  for (size_t i = 0; i < n; i++) {
    if (!(parts[i].need & need)) continue;
    if (!first) tt_buf_puts(sql, "  UNION ALL\n");
    first = false;
    tt_buf_puts(sql, parts[i].sql);
  }
}

/* The part of the check after the items, for what they need. */
static void tt_pg_check_body(tt_buf *sql, unsigned need) {
  tt_buf_puts(sql, "),\ntrusted(nsp) AS (SELECT n.oid FROM pg_namespace n, trust "
                   "WHERE n.nspname = ANY (trust.v)),\n");
  for (size_t i = 0; i < sizeof TT_PG_CTES / sizeof TT_PG_CTES[0]; i++)
    if (TT_PG_CTES[i].need & need) tt_buf_puts(sql, TT_PG_CTES[i].sql);
  if (need & TT_N_DEPS) {
    tt_buf_puts(sql, "deps(i, rel, top, how, cls, obj) AS (\n");
    tt_pg_put_union(sql, TT_PG_DEPS, sizeof TT_PG_DEPS / sizeof TT_PG_DEPS[0], need);
    tt_buf_puts(sql, "),\n");
    tt_buf_puts(sql, TT_PG_TYPES);
  }
  tt_buf_puts(sql, "procs0(i, rel, top, how, what, fn) AS (\n");
  tt_pg_put_union(sql, TT_PG_PROCS, sizeof TT_PG_PROCS / sizeof TT_PG_PROCS[0], need);
  tt_buf_puts(sql, "),\n");
  tt_buf_puts(sql, TT_PG_TAIL);
  if (need & TT_N_REL) tt_buf_puts(sql, TT_PG_SECRETS);
  tt_buf_puts(sql, TT_PG_SELECT);
}

/* WITH RECURSIVE trust, libs and the items' VALUES (the caller adds them). */
static void tt_pg_check_head(tt_buf *sql, const tt_pg_schema_list *trust) {
  tt_buf_puts(sql, "WITH RECURSIVE trust(v) AS (SELECT ");
  tt_pg_put_text_array(sql, trust ? trust->v : NULL, trust ? trust->n : 0);
  tt_buf_puts(sql, "),\nlibs(v) AS (SELECT ARRAY[");
  for (size_t i = 0; i < sizeof TT_PG_PURE_LIBS / sizeof TT_PG_PURE_LIBS[0]; i++)
    tt_buf_printf(sql, "%s'$libdir/%s'", i ? "," : "", TT_PG_PURE_LIBS[i]);
  tt_buf_puts(sql, "]::text[]),\nitems(i, k, s, n, a) AS (VALUES ");
}

static unsigned tt_pg_need_of(char kind) {
  switch (kind) {
  case 'r': case 'R': return TT_N_REL;
  case 't': return TT_N_TYPE;
  case 'f': case 'c': return TT_N_CALL;
  case 'F': return TT_N_UNTRUSTED;
  case 'o': return TT_N_OP;
  default: return TT_N_GLOBAL;
  }
}

static void tt_pg_check_item(tt_buf *sql, bool *first, long i, char kind, const char *schema,
                             const char *name, long long a) {
  tt_buf_printf(sql, "%s(%ld, '%c', ", *first ? "" : ", ", i, kind);
  *first = false;
  if (schema) tt_pg_put_literal(sql, schema);
  else tt_buf_puts(sql, "NULL::text");
  tt_buf_puts(sql, ", ");
  tt_pg_put_literal(sql, name);
  tt_buf_printf(sql, ", %lld::bigint)", a);
}

/* The path, as current_schemas gave it ("{public,pg_catalog}"). */
static bool tt_pg_trust_read_path(tt_pg_trust *t, PGconn *conn, tt_error *err) {
  PGresult *r = PQexec(conn, "SELECT pg_catalog.current_schemas(true)::pg_catalog.text");
  bool ok = PQresultStatus(r) == PGRES_TUPLES_OK && PQntuples(r) == 1;
  if (ok) {
    free(t->path);
    t->path = tt_xstrdup(PQgetvalue(r, 0, 0));
    t->have_path = true;
  } else {
    tt_db_set_error(err, TT_ERR_IO, "cannot read the search_path: %s", PQerrorMessage(conn));
  }
  PQclear(r);
  return ok;
}

const char *tt_pg_trust_path(tt_pg_trust *t, PGconn *conn, tt_error *err) {
  if (!t->have_path && !tt_pg_trust_read_path(t, conn, err)) return NULL;
  return t->path;
}

void tt_pg_trust_profile_sql(const tt_pg_schema_list *trust, tt_buf *sql) {
  tt_buf_puts(sql, "WITH trust(v) AS (SELECT ");
  tt_pg_put_text_array(sql, trust ? trust->v : NULL, trust ? trust->n : 0);
  tt_buf_puts(sql, "),\nlibs(v) AS (SELECT ARRAY[");
  for (size_t i = 0; i < sizeof TT_PG_PURE_LIBS / sizeof TT_PG_PURE_LIBS[0]; i++)
    tt_buf_printf(sql, "%s'$libdir/%s'", i ? "," : "", TT_PG_PURE_LIBS[i]);
  tt_buf_puts(sql, "]::text[]),\n"
                   "trusted(nsp) AS (SELECT n.oid FROM pg_namespace n, trust "
                   "WHERE n.nspname = ANY (trust.v)),\n"
                   "bad AS (SELECT p.oid, p.proname FROM pg_proc p, libs WHERE p.oid >= 16384 "
                   "AND NOT " TT_PG_JUDGE("p") "),\n"
                   "global(i, rel, top, how, what, fn) AS (\n");
  tt_pg_put_union(sql, TT_PG_PROCS, sizeof TT_PG_PROCS / sizeof TT_PG_PROCS[0], TT_N_GLOBAL);
  tt_buf_puts(
      sql,
      ")\n"
      "SELECT (SELECT count(*) FROM bad) AS bad,\n"
      "  (SELECT count(*) FROM global g JOIN pg_proc p ON p.oid = g.fn, libs\n"
      "   WHERE g.fn <> 0 AND NOT " TT_PG_JUDGE("p") ") AS global,\n"
      "  (SELECT array_agg(DISTINCT x.proname) FROM (SELECT proname FROM bad UNION ALL\n"
      "     SELECT p.proname FROM pg_aggregate g JOIN pg_proc p ON p.oid = g.aggfnoid\n"
      "     WHERE g.aggfnoid >= 16384 AND ARRAY[g.aggtransfn::oid, g.aggfinalfn::oid,\n"
      "       g.aggcombinefn::oid, g.aggserialfn::oid, g.aggdeserialfn::oid, g.aggmtransfn::oid,\n"
      "       g.aggminvtransfn::oid, g.aggmfinalfn::oid] && ARRAY(SELECT oid FROM bad)) x)\n"
      "    AS bad_names,\n"
      "  (SELECT array_agg(DISTINCT o.oprname) FROM pg_operator o WHERE o.oid >= 16384 AND\n"
      "     ARRAY[o.oprcode::oid, o.oprrest::oid, o.oprjoin::oid] && ARRAY(SELECT oid FROM bad))\n"
      "    AS bad_ops,\n"
      "  (SELECT array_agg(DISTINCT c.relname) FROM pg_class c WHERE c.oid >= 16384 AND\n"
      "     (c.relkind IN ('v', 'f')\n"
      "      OR EXISTS (SELECT 1 FROM pg_policy WHERE polrelid = c.oid)\n"
      "      OR EXISTS (SELECT 1 FROM pg_inherits WHERE inhparent = c.oid)\n"
      "      OR (c.relkind IN ('r', 'p', 'm') AND EXISTS (SELECT 1 FROM pg_attribute a\n"
      "        WHERE a.attrelid = c.oid AND a.attnum > 0 AND a.atttypid >= 16384\n"
      "          AND NOT a.attisdropped)))) AS risky");
}

bool tt_pg_trust_wants_profile(tt_pg_trust *t, const tt_pg_schema_list *trust) {
  tt_pg_trust_under(t, trust);
  return !t->profile.read;
}

void tt_pg_trust_set_profile(tt_pg_trust *t, const tt_pg_schema_list *trust, const PGresult *r,
                             int col) {
  tt_pg_trust_under(t, trust);
  tt_pg_profile *p = &t->profile;
  tt_pg_profile_free(p);
  p->bad = strtol(PQgetvalue(r, 0, col), NULL, 10);
  p->global = strtol(PQgetvalue(r, 0, col + 1), NULL, 10);
  tt_pg_names_parse(&p->bad_names, PQgetvalue(r, 0, col + 2));
  tt_pg_names_parse(&p->bad_ops, PQgetvalue(r, 0, col + 3));
  tt_pg_names_parse(&p->risky, PQgetvalue(r, 0, col + 4));
  p->read = true;
}

/* Whether the profile shows that ref can run nothing of the owner's, so
 * that it needs no check: a call or field whose name no function that may
 * not run has, an operator likewise, a relation whose name no relation
 * that runs something has, a type when no function at all may not run.
 * An off-list call always goes to the check (its built-in candidates
 * too). */
static bool tt_pg_profile_clears(const tt_pg_profile *p, const tt_pg_ref *r) {
  if (!p->read) return false;
  switch (r->kind) {
  case TT_PG_REF_CALL: case TT_PG_REF_FIELD: return !tt_pg_names_has(&p->bad_names, r->name);
  case TT_PG_REF_OPERATOR: return !tt_pg_names_has(&p->bad_ops, r->name);
  case TT_PG_REF_RELATION: return !tt_pg_names_has(&p->risky, r->name);
  case TT_PG_REF_TYPE: return p->bad == 0;
  default: return false;
  }
}

void tt_pg_trust_sql(tt_pg_trust *t, const tt_pg_refs *refs, const tt_pg_schema_list *trust,
                     tt_buf *sql) {
  tt_pg_trust_under(t, trust);
  if (t->profile.read && t->profile.global == 0) t->global_known = true;
  for (size_t i = 0; refs && i < refs->n; i++)
    if (tt_pg_profile_clears(&t->profile, &refs->v[i])) tt_pg_trust_learn(t, &refs->v[i]);
  unsigned need = t->global_known ? 0 : TT_N_GLOBAL;
  for (size_t i = 0; refs && i < refs->n; i++)
    if (!tt_pg_trust_known(t, &refs->v[i])) need |= tt_pg_need_of(refs->v[i].kind);
  if (!need) return;
  tt_pg_check_head(sql, trust);
  bool first = true;
  tt_pg_check_item(sql, &first, -1, 'g', NULL, "", -1);
  for (size_t i = 0; refs && i < refs->n; i++) {
    const tt_pg_ref *r = &refs->v[i];
    if (!tt_pg_trust_known(t, r))
      tt_pg_check_item(sql, &first, (long)i, r->kind, r->schema, r->name, r->nargs);
  }
  tt_pg_check_body(sql, need);
}

void tt_pg_trust_relations_sql(const int64_t *oids, size_t n, const tt_pg_schema_list *trust,
                               tt_buf *sql) {
  tt_pg_check_head(sql, trust);
  bool first = true;
  tt_pg_check_item(sql, &first, -1, 'g', NULL, "", -1);
  for (size_t i = 0; oids && i < n; i++) tt_pg_check_item(sql, &first, (long)i, 'R', NULL, "", oids[i]);
  tt_pg_check_body(sql, TT_N_GLOBAL | (n ? TT_N_REL : 0));
}

void tt_pg_trust_learn_relation(tt_pg_trust *t, const tt_pg_schema_list *trust, const char *nsp,
                                const char *rel) {
  tt_pg_trust_under(t, trust);
  tt_pg_ref r = {.kind = TT_PG_REF_RELATION, .schema = (char *)nsp, .name = (char *)rel, .nargs = -1};
  tt_pg_trust_learn(t, &r);
}

void tt_pg_trust_learn_global(tt_pg_trust *t, const tt_pg_schema_list *trust) {
  tt_pg_trust_under(t, trust);
  t->global_known = true;
}

/* ---- the verdict -------------------------------------------------------------- */

enum { TT_C_I, TT_C_KIND, TT_C_HOW, TT_C_RELNSP, TT_C_REL, TT_C_TOPNSP, TT_C_TOP, TT_C_WHAT,
       TT_C_FN, TT_C_FNNSP, TT_C_FNNAME };

/* Functions a view may not call though a query may: the view's text is not
 * the guard's to check (current_setting's argument is a secret's name). */
static const char *tt_pg_view_denied_why(const char *name) {
  if (strcmp(name, "current_setting") == 0)
    return "a view may read any setting with it, and custom settings can hold secrets";
  return tt_pg_guard_denied_why(name);
}

/* "name", or "schema.name" for a schema other than public and pg_catalog. */
static void tt_pg_put_relname(tt_buf *b, const char *nsp, const char *rel) {
  if (nsp && strcmp(nsp, "public") != 0 && strcmp(nsp, "pg_catalog") != 0)
    tt_buf_printf(b, "%s.", nsp);
  tt_buf_puts(b, rel ? rel : "?");
}

/* Where it was found: "view v_dbl", "view v_dbl (read through v_nested)",
 * "the row security policy p of t_rls", "column m of t_mood: ". */
static void tt_pg_put_where(tt_buf *b, const char *const *row) {
  const char *how = row[TT_C_HOW] ? row[TT_C_HOW] : "";
  bool via = row[TT_C_TOP] && row[TT_C_REL] &&
             (strcmp(row[TT_C_TOP], row[TT_C_REL]) != 0 ||
              strcmp(row[TT_C_TOPNSP] ? row[TT_C_TOPNSP] : "", row[TT_C_RELNSP] ? row[TT_C_RELNSP] : ""));
  if (strcmp(how, "view") == 0) {
    tt_buf_puts(b, "view ");
    tt_pg_put_relname(b, row[TT_C_RELNSP], row[TT_C_REL]);
  } else if (strncmp(how, "policy ", 7) == 0) {
    tt_buf_printf(b, "the row security policy %s of ", how + 7);
    tt_pg_put_relname(b, row[TT_C_RELNSP], row[TT_C_REL]);
  } else if (strcmp(how, "foreign") == 0) {
    tt_buf_puts(b, "foreign table ");
    tt_pg_put_relname(b, row[TT_C_RELNSP], row[TT_C_REL]);
  } else if (strncmp(how, "column ", 7) == 0) {
    tt_buf_printf(b, "column %s of ", how + 7);
    tt_pg_put_relname(b, row[TT_C_RELNSP], row[TT_C_REL]);
  } else if (strcmp(how, "read") == 0) {
    tt_pg_put_relname(b, row[TT_C_RELNSP], row[TT_C_REL]);
  }
  if (via) {
    tt_buf_puts(b, " (read through ");
    tt_pg_put_relname(b, row[TT_C_TOPNSP], row[TT_C_TOP]);
    tt_buf_puts(b, ")");
  }
}

/* The refusal of one row (name: what the query wrote, for calls and
 * operators); false when the row is harmless (a built-in name that is not
 * denied, a catalog that holds no secret). */
static bool tt_pg_row_refusal(const char *const *row, const char *name, tt_buf *msg,
                              tt_db_refusal *reason) {
  const char *kind = row[TT_C_KIND] ? row[TT_C_KIND] : "";
  const char *how = row[TT_C_HOW] ? row[TT_C_HOW] : "";
  const char *fn = row[TT_C_FN] ? row[TT_C_FN] : "?";
  char qualified[600]; /* one the owner put into pg_catalog: named so */
  if (kind[0] == 'P' && row[TT_C_FNNSP] && strcmp(row[TT_C_FNNSP], "pg_catalog") == 0 &&
      strncmp(fn, "pg_catalog.", 11) != 0) {
    snprintf(qualified, sizeof qualified, "pg_catalog.%s", fn);
    fn = qualified;
  }
  if (kind[0] == 'S') {
    const char *why = tt_pg_guard_secret_why(row[TT_C_RELNSP], row[TT_C_REL]);
    if (!why) return false;
    *reason = TT_REFUSE_INTERNALS;
    bool via = row[TT_C_TOP] && row[TT_C_REL] &&
               (strcmp(row[TT_C_TOP], row[TT_C_REL]) != 0 ||
                strcmp(row[TT_C_TOPNSP] ? row[TT_C_TOPNSP] : "", row[TT_C_RELNSP]) != 0);
    if (via) {
      tt_buf_puts(msg, "view ");
      tt_pg_put_relname(msg, row[TT_C_TOPNSP], row[TT_C_TOP]);
      tt_buf_puts(msg, " reads ");
    }
    tt_buf_printf(msg, "%s.%s, which is not readable here: %s", row[TT_C_RELNSP], row[TT_C_REL], why);
    return true;
  }
  if (kind[0] == 'U') {
    *reason = TT_REFUSE_FUNCTION;
    tt_buf_printf(msg, "%s is not allowed: it is not on tabletalk's list of read-only functions, "
                       "and %s is not in a schema --trust-functions names",
                  name ? name : "?", fn);
    return true;
  }
  if (kind[0] == 'B') {
    const char *why = row[TT_C_FNNAME] ? tt_pg_view_denied_why(row[TT_C_FNNAME]) : NULL;
    if (!why) return false;
    *reason = TT_REFUSE_FUNCTION;
    tt_pg_put_where(msg, row);
    tt_buf_printf(msg, " calls %s, which is not allowed: %s", fn, why);
    return true;
  }
  *reason = TT_REFUSE_FUNCTION;
  const char *what = row[TT_C_WHAT];
  const char *nm = name ? name : "?";
  if (strcmp(how, "call") == 0) tt_buf_printf(msg, "%s(...) can call %s", nm, fn);
  else if (strcmp(how, "column notation") == 0)
    tt_buf_printf(msg, "x.%s can call %s (column notation for %s(x))", nm, fn, nm);
  else if (strcmp(how, "operator") == 0) tt_buf_printf(msg, "the operator %s can call %s", nm, fn);
  else if (strcmp(how, "global") == 0) tt_buf_printf(msg, "any query can call %s", fn);
  else if (strcmp(how, "type") == 0) tt_buf_printf(msg, "a cast to a type of the database can call %s", fn);
  else if (strcmp(how, "foreign") == 0) {
    tt_pg_put_where(msg, row);
    tt_buf_printf(msg, " is read through %s", fn);
  } else if (strncmp(how, "column ", 7) == 0) {
    tt_buf_puts(msg, "reading ");
    tt_pg_put_where(msg, row);
    tt_buf_printf(msg, " can call %s", fn);
  } else {
    tt_pg_put_where(msg, row);
    tt_buf_printf(msg, " calls %s", fn);
  }
  if (what) tt_buf_printf(msg, " (through %s)", what);
  const char *nsp = row[TT_C_FNNSP] ? row[TT_C_FNNSP] : "?";
  tt_buf_puts(msg, ", which tabletalk does not run");
  if (strcmp(nsp, "pg_catalog") == 0)
    tt_buf_puts(msg, " (a function the database's owner added to pg_catalog)");
  else
    tt_buf_printf(msg, "; --trust-functions %s to allow", nsp);
  return true;
}

/* The first refusal among the rows of item k; name: what the query wrote. */
static bool tt_pg_item_refusal(const char *const *cells, size_t nrows, long k, const char *name,
                               tt_buf *msg, tt_db_refusal *reason) {
  for (size_t r = 0; r < nrows; r++) {
    const char *const *row = cells + r * TT_PG_TRUST_NCOLS;
    if (!row[TT_C_I] || strtol(row[TT_C_I], NULL, 10) != k) continue;
    tt_buf_reset(msg);
    if (tt_pg_row_refusal(row, name, msg, reason)) return true;
  }
  tt_buf_reset(msg);
  return false;
}

bool tt_pg_trust_refusal(const char *const *cells, size_t nrows, long k, tt_buf *msg,
                         tt_db_refusal *reason) {
  return tt_pg_item_refusal(cells, nrows, k, NULL, msg, reason);
}

bool tt_pg_trust_verdict(tt_pg_trust *t, const tt_pg_refs *refs, const PGresult *res,
                         tt_error *err) {
  size_t nrows = (size_t)PQntuples(res);
  if (PQnfields(res) != TT_PG_TRUST_NCOLS) {
    tt_db_set_error(err, TT_ERR_IO, "the catalog check gave %d columns, not %d", PQnfields(res),
                    TT_PG_TRUST_NCOLS);
    return false;
  }
  const char **cells = tt_xcalloc(nrows ? nrows * TT_PG_TRUST_NCOLS : 1, sizeof *cells);
  for (size_t r = 0; r < nrows; r++)
    for (int c = 0; c < TT_PG_TRUST_NCOLS; c++)
      cells[r * TT_PG_TRUST_NCOLS + (size_t)c] =
          PQgetisnull(res, (int)r, c) ? NULL : PQgetvalue(res, (int)r, c);
  tt_buf msg = TT_BUF_INIT;
  tt_db_refusal reason = TT_REFUSE_FUNCTION;
  bool refused = tt_pg_item_refusal(cells, nrows, -1, NULL, &msg, &reason);
  if (!refused) t->global_known = true;
  for (size_t i = 0; refs && i < refs->n && !refused; i++) {
    const tt_pg_ref *r = &refs->v[i];
    if (tt_pg_trust_known(t, r)) continue;
    refused = tt_pg_item_refusal(cells, nrows, (long)i, r->name, &msg, &reason);
    if (!refused) tt_pg_trust_learn(t, r);
  }
  if (refused) tt_db_refuse(err, reason, "%s", tt_buf_cstr(&msg));
  tt_buf_free(&msg);
  free(cells);
  return !refused;
}
