/* pg_catalog.c — what a PostgreSQL database holds, read from pg_catalog
 * into the same tt_catalog as SQLite's: tables, views, materialized views
 * and foreign tables of every schema that is not the system's (those on
 * the search_path first), their columns and types, primary and foreign
 * keys, comments as descriptions, row estimates from pg_class.reltuples
 * (never a count), and sample rows and frequent values read under the
 * catalog's time budget (../catalog.c), only of relations whose reading
 * would run nothing of the database's owner (pg_trust.c; the card says
 * why when not). opts.schemas (--schemas) keeps or
 * leaves out schemas by name. Names are "schema.table" only when
 * the tables come from more than one schema. */
#define _GNU_SOURCE /* strcasestr */
#include "db/pg/pg.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

static tt_result *tt_pgc_query(tt_db *db, const char *sql, tt_error *err) {
  return tt_catalog_query(db, sql, 5.0, 1000000, 64 << 20, err);
}

static const char *tt_pgc_text(tt_arena *a, const tt_result *r, size_t row, size_t col) {
  const tt_value *v = tt_result_cell(r, row, col);
  if (v->type == TT_VAL_NULL) return NULL;
  tt_buf b = TT_BUF_INIT;
  tt_value_to_text(&b, v);
  const char *s = tt_db_shown_name(a, tt_buf_cstr(&b));
  tt_buf_free(&b);
  return s;
}

static int64_t tt_pgc_int(const tt_result *r, size_t row, size_t col) {
  const tt_value *v = tt_result_cell(r, row, col);
  return v->type == TT_VAL_INT ? v->u.i : v->type == TT_VAL_REAL ? (int64_t)v->u.r : 0;
}

#define TT_PGC_RELS                                                                        \
  "FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "                         \
  "WHERE c.relkind IN ('r','p','v','m','f') AND NOT c.relispartition "                     \
  "AND n.nspname NOT IN ('pg_catalog','information_schema') "                              \
  "AND n.nspname NOT LIKE 'pg\\_toast%' AND n.nspname NOT LIKE 'pg\\_temp\\_%' "           \
  "AND has_schema_privilege(n.oid, 'USAGE') "

/* Whether the schema named nsp is listed under --schemas: names are
 * matched exactly (as pg_namespace spells them); with any plain name only
 * the names given are kept, and a name after '!' is left out. */
bool tt_pg_schema_wanted(const char *list, const char *nsp) {
  if (!list || !nsp) return true;
  bool any_include = false, included = false;
  for (const char *p = list; *p;) {
    size_t n = strcspn(p, ",");
    bool exclude = n > 0 && p[0] == '!';
    const char *name = p + (exclude ? 1 : 0);
    size_t len = n - (exclude ? 1 : 0);
    bool same = len > 0 && strlen(nsp) == len && memcmp(nsp, name, len) == 0;
    if (exclude && same) return false;
    if (!exclude && len > 0) {
      any_include = true;
      if (same) included = true;
    }
    p += n;
    if (*p == ',') p++;
  }
  return !any_include || included;
}

/* Index of the table with this oid; -1 when not listed. */
static long tt_pgc_find(const int64_t *oids, size_t n, int64_t oid) {
  for (size_t i = 0; i < n; i++)
    if (oids[i] == oid) return (long)i;
  return -1;
}

/* The cells of the catalog check's result as text (in a), row-major, as
 * tt_pg_trust_refusal reads them (free the array). */
static const char **tt_pgc_cells(tt_arena *a, const tt_result *r) {
  const char **cells = tt_xcalloc(r->nrows ? r->nrows * r->ncols : 1, sizeof *cells);
  for (size_t i = 0; i < r->nrows; i++)
    for (size_t c = 0; c < r->ncols; c++) cells[i * r->ncols + c] = tt_pgc_text(a, r, i, c);
  return cells;
}

/* Why each of the n relations may not be sampled (NULL: it may), in a:
 * the catalog check (pg_trust.c) of what reading it runs. When the check
 * itself fails, no relation is sampled. */
static const char **tt_pgc_refusals(tt_db *db, tt_arena *a, const int64_t *oids,
                                    const char *const *nsps, const char *const *rels, size_t n) {
  const char **why = tt_arena_alloc(a, (n ? n : 1) * sizeof *why);
  memset(why, 0, (n ? n : 1) * sizeof *why);
  if (n == 0) return why;
  tt_pg_schema_list trust;
  tt_pg_schema_list_parse(db->opts.trust_functions, &trust);
  tt_buf sql = TT_BUF_INIT;
  tt_pg_trust_relations_sql(oids, n, &trust, &sql);
  tt_error err;
  tt_result *r = tt_pgc_query(db, tt_buf_cstr(&sql), &err);
  tt_buf_free(&sql);
  if (!r || r->ncols != TT_PG_TRUST_NCOLS) {
    const char *note = tt_arena_strdup(
        a, "no example values: what reading it would run could not be checked in the catalog");
    for (size_t i = 0; i < n; i++) why[i] = note;
    tt_result_free(r);
    tt_pg_schema_list_free(&trust);
    return why;
  }
  const char **cells = tt_pgc_cells(a, r);
  tt_buf msg = TT_BUF_INIT;
  tt_db_refusal reason;
  bool global = tt_pg_trust_refusal(cells, r->nrows, -1, &msg, &reason);
  char *all = global ? tt_xasprintf("no example values: %s", tt_buf_cstr(&msg)) : NULL;
  /* what passed is known on this connection: the value index's queries
   * that name it ("schema"."table") need no check of their own */
  tt_pg *pg = tt_pg_of(db);
  if (!global) tt_pg_trust_learn_global(pg->trust, &trust);
  for (size_t k = 0; k < n; k++) {
    if (all) {
      why[k] = tt_arena_strdup(a, all);
    } else if (tt_pg_trust_refusal(cells, r->nrows, (long)k, &msg, &reason)) {
      char *note = tt_xasprintf("no example values: %s", tt_buf_cstr(&msg));
      why[k] = tt_arena_strdup(a, note);
      free(note);
    } else {
      tt_pg_trust_learn_relation(pg->trust, &trust, nsps[k], rels[k]);
    }
  }
  free(all);
  tt_buf_free(&msg);
  free(cells);
  tt_result_free(r);
  tt_pg_schema_list_free(&trust);
  return why;
}

/* The place of schema nsp in the search_path's text ("{a,\"B c\"}"): its
 * tables come first, in the path's order; other schemas after. */
static size_t tt_pgc_path_rank(const char *path, const char *nsp) {
  size_t rank = 0;
  const char *p = path && *path == '{' ? path + 1 : "";
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
    bool same = strcmp(tt_buf_cstr(&name), nsp) == 0;
    tt_buf_free(&name);
    if (same) return rank;
    rank++;
    if (*p == ',') p++;
  }
  return (size_t)-1;
}

typedef struct tt_pgc_order {
  size_t row, rank;
} tt_pgc_order;

static int tt_pgc_order_cmp(const void *a, const void *b) {
  const tt_pgc_order *x = a, *y = b;
  if (x->rank != y->rank) return x->rank < y->rank ? -1 : 1;
  return x->row < y->row ? -1 : x->row > y->row;
}

/* Whether the database changed what any query may run (an overload put
 * into pg_catalog, a cast or operator-family member for built-in types):
 * then even tabletalk's own queries could run it, so nothing is read.
 * false with err a refusal that names it. */
static bool tt_pgc_global_ok(tt_db *db, tt_error *err) {
  tt_pg_schema_list trust;
  tt_pg_schema_list_parse(db->opts.trust_functions, &trust);
  tt_buf sql = TT_BUF_INIT;
  tt_pg_trust_relations_sql(NULL, 0, &trust, &sql);
  tt_pg_schema_list_free(&trust);
  tt_result *r = tt_pgc_query(db, tt_buf_cstr(&sql), err);
  tt_buf_free(&sql);
  if (!r) return false;
  tt_arena *a = tt_arena_new();
  const char **cells = tt_pgc_cells(a, r);
  tt_buf msg = TT_BUF_INIT;
  tt_db_refusal reason;
  bool refused = r->ncols == TT_PG_TRUST_NCOLS &&
                 tt_pg_trust_refusal(cells, r->nrows, -1, &msg, &reason);
  if (refused)
    tt_db_refuse(err, reason, "cannot describe the database: %s", tt_buf_cstr(&msg));
  tt_buf_free(&msg);
  free(cells);
  tt_arena_free(a);
  tt_result_free(r);
  return !refused;
}

tt_catalog *tt_pg_catalog_load(tt_db *db, tt_error *err) {
  if (!tt_pgc_global_ok(db, err)) return NULL;
  /* tabletalk's own queries run with the search_path at pg_catalog, so
   * the user's path (which only orders the schemas) is read on its own */
  tt_result *list = tt_pgc_query(
      db,
      "SELECT c.oid::bigint, n.nspname, c.relname, c.relkind, c.reltuples::float8, "
      "obj_description(c.oid, 'pg_class') " TT_PGC_RELS "ORDER BY n.nspname, c.oid",
      err);
  if (!list) return NULL;
  tt_pg *pg = tt_pg_of(db);
  const char *path = pg->conn ? tt_pg_trust_path(pg->trust, pg->conn, err) : NULL;
  if (!path) {
    tt_result_free(list);
    return NULL;
  }
  tt_result *cols = tt_pgc_query(
      db,
      "SELECT a.attrelid::bigint, a.attname, format_type(a.atttypid, a.atttypmod), "
      "a.attnotnull, pg_get_expr(d.adbin, d.adrelid), col_description(a.attrelid, a.attnum), "
      "coalesce((SELECT array_position(k.conkey, a.attnum) FROM pg_constraint k WHERE "
      "k.conrelid = a.attrelid AND k.contype = 'p'), 0) "
      "FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid "
      "JOIN pg_namespace n ON n.oid = c.relnamespace "
      "LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum "
      "WHERE a.attnum > 0 AND NOT a.attisdropped AND c.relkind IN ('r','p','v','m','f') "
      "AND NOT c.relispartition AND n.nspname NOT IN ('pg_catalog','information_schema') "
      "AND n.nspname NOT LIKE 'pg\\_toast%' AND n.nspname NOT LIKE 'pg\\_temp\\_%' "
      "ORDER BY a.attrelid, a.attnum",
      err);
  tt_result *fks = cols ? tt_pgc_query(
                              db,
                              "SELECT k.conrelid::bigint, k.confrelid::bigint, fa.attname, "
                              "ta.attname, u.i - 1 FROM pg_constraint k "
                              "CROSS JOIN LATERAL generate_subscripts(k.conkey, 1) AS u(i) "
                              "JOIN pg_attribute fa ON fa.attrelid = k.conrelid AND "
                              "fa.attnum = k.conkey[u.i] "
                              "JOIN pg_attribute ta ON ta.attrelid = k.confrelid AND "
                              "ta.attnum = k.confkey[u.i] "
                              "WHERE k.contype = 'f' ORDER BY k.conrelid, k.oid, u.i",
                              err)
                        : NULL;
  if (!cols || !fks) {
    tt_result_free(list);
    tt_result_free(cols);
    return NULL;
  }
  /* the rows of the schemas --schemas keeps (all without it), those of
   * the search_path first */
  tt_pgc_order *order = tt_xcalloc(list->nrows ? list->nrows : 1, sizeof *order);
  for (size_t i = 0; i < list->nrows; i++)
    order[i] = (tt_pgc_order){i, tt_pgc_path_rank(path, tt_result_cell(list, i, 1)->u.s)};
  qsort(order, list->nrows, sizeof *order, tt_pgc_order_cmp);
  size_t *keep = tt_xcalloc(list->nrows ? list->nrows : 1, sizeof *keep), n = 0;
  for (size_t i = 0; i < list->nrows; i++)
    if (tt_pg_schema_wanted(db->opts.schemas, tt_result_cell(list, order[i].row, 1)->u.s))
      keep[n++] = order[i].row;
  free(order);
  if (n == 0 && list->nrows > 0) { /* a mistyped name, most likely */
    tt_buf names = TT_BUF_INIT;
    for (size_t i = 0; i < list->nrows; i++) {
      const char *nsp = tt_result_cell(list, i, 1)->u.s;
      bool seen = false;
      for (size_t j = 0; j < i && !seen; j++) seen = strcmp(tt_result_cell(list, j, 1)->u.s, nsp) == 0;
      if (!seen) tt_buf_printf(&names, "%s%s", names.len ? ", " : "", nsp);
    }
    tt_db_set_error(err, TT_ERR_SQL,
                    "--schemas %s keeps no table; the schemas with tables are: %s (names "
                    "match exactly, case included)",
                    db->opts.schemas, tt_buf_cstr(&names));
    tt_buf_free(&names);
    free(keep);
    tt_result_free(list);
    tt_result_free(cols);
    tt_result_free(fks);
    return NULL;
  }
  tt_catalog *cat = tt_xcalloc(1, sizeof *cat);
  tt_arena *a = cat->arena = tt_arena_new();
  cat->ntables = n;
  cat->tables = tt_arena_alloc(a, sizeof(tt_table_info) * (n ? n : 1));
  memset(cat->tables, 0, sizeof(tt_table_info) * (n ? n : 1));
  int64_t *oids = tt_xcalloc(n ? n : 1, sizeof *oids);
  const char **froms = tt_xcalloc(n ? n : 1, sizeof *froms);
  const char **nsps = tt_xcalloc(n ? n : 1, sizeof *nsps), **rels = tt_xcalloc(n ? n : 1, sizeof *rels);
  bool qualify = false;
  for (size_t i = 1; i < n; i++)
    if (strcmp(tt_result_cell(list, keep[i], 1)->u.s, tt_result_cell(list, keep[0], 1)->u.s) != 0)
      qualify = true;
  for (size_t k = 0; k < n; k++) {
    size_t i = keep[k];
    tt_table_info *t = &cat->tables[k];
    oids[k] = tt_pgc_int(list, i, 0);
    const char *nsp = tt_pgc_text(a, list, i, 1), *rel = tt_pgc_text(a, list, i, 2);
    nsps[k] = nsp;
    rels[k] = rel;
    const char *kind = tt_pgc_text(a, list, i, 3);
    t->name = rel;
    tt_buf from = TT_BUF_INIT;
    tt_buf_put_sql_ident(&from, nsp);
    tt_buf_putc(&from, '.');
    tt_buf_put_sql_ident(&from, rel);
    froms[k] = t->sql_name = tt_arena_strdup(a, tt_buf_cstr(&from));
    tt_buf_free(&from);
    if (qualify) {
      char *q = tt_xasprintf("%s.%s", nsp, rel);
      t->name = tt_arena_strdup(a, q);
      t->schema_len = strlen(nsp);
      free(q);
    }
    t->is_view = kind && (kind[0] == 'v' || kind[0] == 'm');
    double est = tt_result_cell(list, i, 4)->u.r;
    t->row_count = est >= 0 && kind && kind[0] != 'v' ? (int64_t)est : -1;
    /* an estimate, as of the last ANALYZE or VACUUM; none for a view or a
     * table never analysed (-1), and never counted */
    t->row_count_kind = t->row_count >= 0 ? TT_ROWS_STAT1 : TT_ROWS_EXACT;
    t->description = tt_pgc_text(a, list, i, 5);
  }
  /* columns: the rows come grouped by table, in column order */
  for (size_t r = 0, i; r < cols->nrows; r = i) {
    int64_t oid = tt_pgc_int(cols, r, 0);
    for (i = r; i < cols->nrows && tt_pgc_int(cols, i, 0) == oid; i++) {}
    long k = tt_pgc_find(oids, n, oid);
    if (k < 0) continue;
    tt_table_info *t = &cat->tables[k];
    t->ncols = i - r;
    t->cols = tt_arena_alloc(a, sizeof(tt_column_info) * t->ncols);
    memset(t->cols, 0, sizeof(tt_column_info) * t->ncols);
    for (size_t j = r; j < i; j++) {
      tt_column_info *c = &t->cols[j - r];
      c->name = tt_pgc_text(a, cols, j, 1);
      c->type = tt_pgc_text(a, cols, j, 2);
      if (!c->type) c->type = "";
      c->not_null = tt_pgc_int(cols, j, 3) != 0;
      c->default_value = tt_pgc_text(a, cols, j, 4);
      c->description = tt_pgc_text(a, cols, j, 5);
      c->pk = (int)tt_pgc_int(cols, j, 6);
    }
  }
  /* foreign keys: the referenced table by its name as shown */
  for (size_t r = 0, i; r < fks->nrows; r = i) {
    int64_t oid = tt_pgc_int(fks, r, 0);
    for (i = r; i < fks->nrows && tt_pgc_int(fks, i, 0) == oid; i++) {}
    long k = tt_pgc_find(oids, n, oid);
    if (k < 0) continue;
    tt_table_info *t = &cat->tables[k];
    t->fks = tt_arena_alloc(a, sizeof(tt_fk_info) * (i - r));
    t->nfks = 0;
    for (size_t j = r; j < i; j++) {
      long target = tt_pgc_find(oids, n, tt_pgc_int(fks, j, 1));
      if (target < 0) continue; /* a table in a schema not listed */
      tt_fk_info *f = &t->fks[t->nfks++];
      *f = (tt_fk_info){0};
      f->from = tt_pgc_text(a, fks, j, 2);
      f->table = cat->tables[target].name;
      f->table_schema_len = cat->tables[target].schema_len;
      f->to = tt_pgc_text(a, fks, j, 3);
      f->pk_seq = (int)tt_pgc_int(fks, j, 4);
    }
  }
  free(keep);
  tt_result_free(list);
  tt_result_free(cols);
  tt_result_free(fks);
  /* describing the database runs nothing of its owner's: a relation is
   * sampled only when reading it would run nothing the queries may not */
  const char **refused = tt_pgc_refusals(db, a, oids, nsps, rels, n);
  double budget_end = tt_now_ms() + TT_PROBE_BUDGET_S * 1000.0;
  for (size_t i = 0; i < n; i++) {
    if (refused[i]) {
      cat->tables[i].note = refused[i];
      if (cat->tables[i].row_count_kind != TT_ROWS_STAT1) cat->tables[i].row_count = -1;
      continue;
    }
    tt_catalog_probe(db, a, &cat->tables[i], froms[i], budget_end);
  }
  free(oids);
  free(froms);
  free(nsps);
  free(rels);
  return cat;
}

void tt_pg_sql_column_values(const tt_table_info *t, const tt_column_info *c, long scan_rows,
                             long max_len, tt_buf *out) {
  static const tt_values_dialect pg = {"", "::text", "octet_length", tt_buf_put_sql_ident};
  tt_catalog_values_sql(&pg, t, c, scan_rows, max_len, out);
}

bool tt_pg_is_text_type(const char *type) {
  /* text, character varying(n), character(n), and types named so */
  if (strncasecmp(type, "character", 9) == 0) return true;
  if (strcasestr(type, "INT")) return false;
  return strcasestr(type, "CHAR") || strcasestr(type, "CLOB") || strcasestr(type, "TEXT");
}
