/* pg_stamp.c — what proves the catalog of a PostgreSQL database unchanged,
 * in one query that reads only the system catalogs and statistics
 * (tt_db_catalog_stamp):
 *
 *   identity  the target (without its password), the server's address,
 *             the database (name and oid), the user (privileges decide what
 *             the catalog lists) and --schemas
 *   schema    per system catalog that the catalog reads (pg_class,
 *             pg_attribute, pg_constraint, pg_description, pg_namespace,
 *             pg_attrdef, pg_type, pg_rewrite, pg_proc): its row count and
 *             the sum of its rows' xmin, which every CREATE, ALTER, DROP,
 *             COMMENT and GRANT changes (a changed row gets a new xmin); the
 *             relations' relfilenodes and the search_path
 *   data      the planner's statistics (sums of reltuples and relpages,
 *             which ANALYZE and VACUUM update in place) and the statistics
 *             collector's counts of rows written and its last analyse and
 *             vacuum times */
#include "db/pg/pg.h"
#include "db/pg/pq_api.h"

#include <stdlib.h>
#include <string.h>

/* count and sum of xmin of one system catalog, as text */
#define TT_PG_XMINS(cat) \
  "(SELECT count(*) || ' ' || coalesce(sum(xmin::text::bigint), 0) FROM pg_catalog." cat ")"

static const char tt_pg_stamp_sql[] =
    "SELECT current_database()::text, current_user::text, "
    "(SELECT oid::bigint FROM pg_catalog.pg_database WHERE datname = current_database())::text, "
    "coalesce(host(inet_server_addr()), 'local') || ' ' || coalesce(inet_server_port()::text, ''), "
    "concat_ws(' ', 'class', (SELECT count(*) || ' ' || coalesce(sum(xmin::text::bigint), 0) || ' ' || "
    "coalesce(sum(relfilenode::bigint), 0) FROM pg_catalog.pg_class), "
    "'attribute', " TT_PG_XMINS("pg_attribute") ", 'constraint', " TT_PG_XMINS("pg_constraint")
    ", 'description', " TT_PG_XMINS("pg_description") ", 'namespace', " TT_PG_XMINS("pg_namespace")
    ", 'attrdef', " TT_PG_XMINS("pg_attrdef") ", 'type', " TT_PG_XMINS("pg_type")
    ", 'rewrite', " TT_PG_XMINS("pg_rewrite") ", 'proc', " TT_PG_XMINS("pg_proc")
    ", 'path', array_to_string(current_schemas(false), ',')), "
    "concat_ws(' ', 'planner', (SELECT coalesce(sum(reltuples), 0)::text || ' ' || "
    "coalesce(sum(relpages), 0) FROM pg_catalog.pg_class WHERE relkind IN ('r','p','m','f')), "
    "'writes', (SELECT coalesce(sum(n_tup_ins + n_tup_upd + n_tup_del), 0) || ' ' || "
    "coalesce(max(greatest(last_analyze, last_autoanalyze, last_vacuum, last_autovacuum))::text, '-') "
    "FROM pg_catalog.pg_stat_all_tables WHERE schemaname NOT IN ('pg_catalog', "
    "'information_schema') AND schemaname NOT LIKE 'pg\\_toast%'))";

static const char *tt_pg_stamp_cell(const tt_result *r, size_t col) {
  const tt_value *v = tt_result_cell(r, 0, col);
  return v->type == TT_VAL_TEXT ? v->u.s : "-";
}

bool tt_pg_catalog_stamp(tt_db *db, tt_catalog_stamp *out, tt_error *err) {
  tt_result *r = tt_catalog_query(db, tt_pg_stamp_sql, 5.0, 1, 1 << 20, err);
  if (!r) return false;
  if (r->nrows != 1 || r->ncols != 6) {
    tt_result_free(r);
    tt_db_set_error(err, TT_ERR_SQL, "the catalog's fingerprint query gave no row");
    return false;
  }
  out->identity = tt_xasprintf("postgres %s\nserver %s\ndatabase %s %s\nuser %s\nschemas %s\n",
                               db->target.shown, tt_pg_stamp_cell(r, 3), tt_pg_stamp_cell(r, 0),
                               tt_pg_stamp_cell(r, 2), tt_pg_stamp_cell(r, 1),
                               db->opts.schemas ? db->opts.schemas : "(all)");
  out->schema = tt_xasprintf("%s\n", tt_pg_stamp_cell(r, 4));
  out->data = tt_xasprintf("%s\n", tt_pg_stamp_cell(r, 5));
  tt_result_free(r);
  return true;
}
