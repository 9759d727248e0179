/* mysql.c — the MySQL/MariaDB engine behind db.h, through MariaDB
 * Connector/C loaded on first use (my_api.c): its table (engine.h),
 * opening a mysql:// or mariadb:// URL (my_url.c; the password never
 * shown: messages name the target's redacted form) on a session set up
 * read-only by construction (my_conn.c), whole results and cursors over
 * one statement (my_run.c: each in its own START TRANSACTION READ ONLY
 * ... ROLLBACK, KILL QUERY from a second connection on the deadline or
 * Ctrl-C), and the catalog (my_catalog.c). */
#include "db/mysql/mysql.h"

#include <stdlib.h>
#include <string.h>

/* ---- the table ----------------------------------------------------------- */

static void tt_my_free_state(tt_my *my) {
  if (!my) return;
  tt_my_drop_connection(my);
  if (my->killer) my->api->close(my->killer);
  tt_my_conninfo_free(&my->ci);
  free(my->warning);
  free(my);
}

static bool tt_my_open(tt_db *db, tt_error *err) {
  const tt_my_api *api = tt_my_api_get(err);
  if (!api) return false;
  tt_my *my = tt_xcalloc(1, sizeof *my);
  my->api = api;
  my->timeout_ms_set = -1;
  db->state = my;
  if (tt_my_conninfo_parse(db->target.path, &my->ci, err)) {
    if (tt_my_connect(db, err)) return true;
  } else {
    tt_error_prefix(err, "%s: ", db->name);
  }
  tt_my_free_state(my);
  db->state = NULL;
  return false;
}

static void tt_my_close(tt_db *db) { tt_my_free_state(tt_my_of(db)); }

static bool tt_my_snapshot_begin(tt_db *db, uint64_t *version, tt_error *err) {
  (void)err;
  (void)db;
  /* no cheap data version on a server others write: every snapshot is
   * new, so nothing is served from a cache */
  static _Atomic uint64_t serial;
  *version = tt_fnv1a64(TT_FNV1A64_INIT, (uint64_t[]){++serial, (uint64_t)tt_now_ms()},
                        2 * sizeof(uint64_t));
  return true;
}

static void tt_my_snapshot_end(tt_db *db) { (void)db; }

static const char *tt_my_dialect_of(const tt_db *db) {
  const tt_my *my = tt_my_of(db);
  return my && my->dialect[0] ? my->dialect : "MySQL";
}

/* ---- whole results and cursors ---------------------------------------------- */

/* The privileges of the connected account that let it change the server:
 * information_schema's privilege views list the account's own grants (and
 * an administrator's, those of every account: hence the GRANTEE filter). */
#define TT_MY_WRITE_GRANTS_SQL                                                                \
  "SELECT CURRENT_USER(), GROUP_CONCAT(DISTINCT PRIVILEGE_TYPE ORDER BY PRIVILEGE_TYPE "      \
  "SEPARATOR ', ') FROM (SELECT GRANTEE, PRIVILEGE_TYPE FROM information_schema.USER_PRIVILEGES " \
  "UNION ALL SELECT GRANTEE, PRIVILEGE_TYPE FROM information_schema.SCHEMA_PRIVILEGES "       \
  "UNION ALL SELECT GRANTEE, PRIVILEGE_TYPE FROM information_schema.TABLE_PRIVILEGES) AS p "  \
  "WHERE GRANTEE = CONCAT('''', SUBSTRING_INDEX(CURRENT_USER(), '@', 1), '''@''', "          \
  "SUBSTRING_INDEX(CURRENT_USER(), '@', -1), '''') AND PRIVILEGE_TYPE IN ('INSERT', "         \
  "'UPDATE', 'DELETE', 'CREATE', 'DROP', 'ALTER', 'INDEX', 'FILE', 'SUPER', "                 \
  "'CREATE ROUTINE', 'ALTER ROUTINE', 'TRIGGER', 'EVENT', 'CREATE USER', 'GRANT OPTION', "   \
  "'SHUTDOWN', 'RELOAD', 'CREATE TEMPORARY TABLES', 'LOCK TABLES', 'CREATE VIEW') "          \
  "HAVING COUNT(*) > 0"

/* tt_db_warning: an account that can write, asked once from its grants. A
 * READ ONLY transaction stops its own writes, but not what a function of
 * the database's owner could do with its rights should one ever run. */
static const char *tt_my_warning(tt_db *db) {
  tt_my *my = tt_my_of(db);
  if (!my || my->warned) return my ? my->warning : NULL;
  my->warned = true;
  tt_error err;
  tt_result *r = tt_catalog_query(db, TT_MY_WRITE_GRANTS_SQL, 5.0, 1, 4096, &err);
  if (r && r->nrows == 1 && tt_result_cell(r, 0, 0)->type == TT_VAL_TEXT &&
      tt_result_cell(r, 0, 1)->type == TT_VAL_TEXT) {
    const tt_value *who = tt_result_cell(r, 0, 0), *what = tt_result_cell(r, 0, 1);
    my->warning = tt_xasprintf(
        "the account %.*s can change the server (%.*s): tabletalk only reads, but should a "
        "function of the database's owner ever run, it would run with these rights; connect "
        "as an account with SELECT and SHOW VIEW only (docs/guide/mysql.md, \"A read-only "
        "account\")",
        (int)who->len, who->u.s, (int)(what->len > 300 ? 300 : what->len), what->u.s);
  }
  tt_result_free(r);
  return my->warning;
}

static tt_result *tt_my_query(tt_db *db, const char *sql, size_t len, tt_error *err) {
  double t0 = tt_now_ms();
  tt_my_run *run = tt_my_run_open(db, sql, len, tt_db_limits(db)->timeout_s, err);
  return run ? tt_engine_result(db, tt_my_run_base(run), t0, err) : NULL;
}

static tt_engine_cursor *tt_my_cursor_open(tt_db *db, const char *sql, size_t len,
                                           tt_error *err) {
  tt_my_run *run = tt_my_run_open(db, sql, len, db->opts.timeout_s, err);
  return run ? tt_my_run_base(run) : NULL;
}

static int tt_my_cursor_next(tt_engine_cursor *c, const tt_value **row, size_t *row_bytes,
                             tt_error *err) {
  return tt_my_run_next((tt_my_run *)c, row, row_bytes, err);
}

static void tt_my_cursor_close(tt_engine_cursor *c) { tt_my_run_close((tt_my_run *)c); }

const tt_db_engine tt_db_engine_mysql = {
    .name = "mysql",
    .facts = {.name = "MySQL", .ident_quote = '`', .fold = TT_DB_FOLD_NONE, .schemas = false},
    .list_tables_sql = "SELECT TABLE_NAME FROM information_schema.TABLES WHERE TABLE_SCHEMA = "
                       "DATABASE() ORDER BY TABLE_NAME",
    .open = tt_my_open,
    .close = tt_my_close,
    .set_opts = NULL,
    .dialect = tt_my_dialect_of,
    .warning = tt_my_warning,
    .query = tt_my_query,
    .cursor_open = tt_my_cursor_open,
    .cursor_next = tt_my_cursor_next,
    .cursor_close = tt_my_cursor_close,
    .catalog_load = tt_my_catalog_load,
    .snapshot_begin = tt_my_snapshot_begin,
    .snapshot_end = tt_my_snapshot_end,
    .sql_column_values = tt_my_sql_column_values,
    .is_text_type = tt_my_is_text_type,
};
