/* test_mysql.c — the MySQL/MariaDB engine (src/db/mysql/) against the
 * mariadb_server fixture's server (TT_MY_FIXTURE_DIR; exit 77, skipped,
 * without it), through db.h as every caller uses it: the dialect named
 * with the server's version; values of every type; a session set up
 * read-only whatever the server's global sql_mode; results cut at the
 * row cap, cursors closed early, the time limit and a cancel, each
 * followed by queries on the same handle that must be unharmed (a KILL
 * QUERY that outlived its statement would fail them); and the catalog:
 * tables, counts, keys, comments, and samples only where nothing of the
 * owner's runs. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db/db.h"
#include "testutil.h"

static char *fixture(const char *name) {
  const char *dir = getenv("TT_MY_FIXTURE_DIR");
  if (!dir) return NULL;
  char path[1024];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  FILE *f = fopen(path, "r");
  if (!f) return NULL;
  char line[2048];
  char *out = fgets(line, sizeof line, f) ? tt_xstrndup(line, strcspn(line, "\n")) : NULL;
  fclose(f);
  return out;
}

/* One statement through the server's own client, as root. */
static void client(const char *sql) {
  char *sock = fixture("socket");
  assert_non_null(sock);
  char *cmd = tt_xasprintf(
      "mariadb --no-defaults --protocol=socket --socket='%s' --user=root -e \"%s\"", sock, sql);
  assert_int_equal(system(cmd), 0);
  free(cmd);
  free(sock);
}

static tt_db *open_db(const char *name, double timeout_s) {
  char *uri = fixture(name);
  assert_non_null(uri);
  tt_db_opts o = tt_db_default_opts();
  o.timeout_s = timeout_s;
  tt_error err;
  tt_db *db = tt_db_open(uri, &o, &err);
  if (!db) fail_msg("open %s: %s", name, err.message);
  free(uri);
  return db;
}

static int64_t count_genres(tt_db *db) {
  tt_error err;
  const char *sql = "SELECT count(*) FROM Genre";
  tt_result *r = tt_db_query(db, sql, strlen(sql), &err);
  if (!r) fail_msg("count: %s", err.message);
  assert_int_equal(r->nrows, 1);
  int64_t n = tt_result_cell(r, 0, 0)->u.i;
  tt_result_free(r);
  return n;
}

static void test_dialect_and_values(void **state) {
  (void)state;
  tt_db *db = open_db("uri", 5);
  assert_true(strncmp(tt_db_dialect(db), "MariaDB 10.", 11) == 0);
  assert_int_equal(tt_db_get_target(db)->kind, TT_DB_KIND_MYSQL);
  tt_error err;
  const char *sql =
      "SELECT 7 AS i, 1.5e0 AS r, CAST(2.25 AS DECIMAL(10,2)) AS d, "
      "CAST(12345678901234567.5 AS DECIMAL(30,1)) AS big, 'caf\xC3\xA9' AS t, NULL AS n, "
      "X'00ff' AS b, b'101' + 0 AS bits, 18446744073709551615 AS u, "
      "CAST('2020-01-02' AS DATE) AS dt, @@SESSION.tx_read_only AS ro";
  tt_result *r = tt_db_query(db, sql, strlen(sql), &err);
  if (!r) fail_msg("%s", err.message);
  assert_int_equal(r->ncols, 11);
  assert_int_equal(tt_result_cell(r, 0, 0)->type, TT_VAL_INT);
  assert_int_equal(tt_result_cell(r, 0, 0)->u.i, 7);
  assert_int_equal(tt_result_cell(r, 0, 1)->type, TT_VAL_REAL);
  assert_int_equal(tt_result_cell(r, 0, 2)->type, TT_VAL_REAL);
  assert_true(tt_result_cell(r, 0, 2)->u.r == 2.25);
  assert_int_equal(tt_result_cell(r, 0, 3)->type, TT_VAL_TEXT); /* 18 digits: exact text */
  assert_string_equal(tt_result_cell(r, 0, 3)->u.s, "12345678901234567.5");
  assert_string_equal(tt_result_cell(r, 0, 4)->u.s, "caf\xC3\xA9");
  assert_int_equal(tt_result_cell(r, 0, 5)->type, TT_VAL_NULL);
  assert_int_equal(tt_result_cell(r, 0, 6)->type, TT_VAL_BLOB);
  assert_int_equal(tt_result_cell(r, 0, 6)->len, 2);
  assert_int_equal(tt_result_cell(r, 0, 7)->u.i, 5);
  assert_int_equal(tt_result_cell(r, 0, 8)->type, TT_VAL_TEXT); /* over int64 */
  assert_string_equal(tt_result_cell(r, 0, 9)->u.s, "2020-01-02");
  assert_int_equal(tt_result_cell(r, 0, 10)->u.i, 1); /* the session reads only */
  assert_string_equal(r->decltypes[2], "decimal");
  tt_result_free(r);
  tt_db_close(db);
}

/* Whatever the server's global sql_mode, the session's is one the guard
 * reads right: "a" is a string, and \' escapes. */
static void test_session_sql_mode(void **state) {
  (void)state;
  client(
      "SET GLOBAL sql_mode = 'ANSI_QUOTES,NO_BACKSLASH_ESCAPES,IGNORE_SPACE,STRICT_TRANS_TABLES'");
  tt_db *db = open_db("uri", 5);
  client("SET GLOBAL sql_mode = DEFAULT");
  tt_error err;
  const char *sql = "SELECT \"a\" AS s, 'b\\'c' AS e, @@SESSION.sql_mode AS m";
  tt_result *r = tt_db_query(db, sql, strlen(sql), &err);
  if (!r) fail_msg("%s", err.message);
  assert_string_equal(tt_result_cell(r, 0, 0)->u.s, "a");
  assert_string_equal(tt_result_cell(r, 0, 1)->u.s, "b'c");
  assert_null(strstr(tt_result_cell(r, 0, 2)->u.s, "ANSI_QUOTES"));
  assert_null(strstr(tt_result_cell(r, 0, 2)->u.s, "NO_BACKSLASH_ESCAPES"));
  assert_non_null(strstr(tt_result_cell(r, 0, 2)->u.s, "STRICT_TRANS_TABLES"));
  tt_result_free(r);
  tt_db_close(db);
}

/* A statement stopped before its end (the row cap, a cursor closed
 * early, the time limit, a cancel) leaves the handle as good as new. */
static void test_stops_leave_the_session_unharmed(void **state) {
  (void)state;
  tt_db *db = open_db("uri", 30);
  tt_error err;
  const char *cross = "SELECT a.TrackId, b.TrackId FROM Track a, Track b";
  for (int i = 0; i < 5; i++) {
    tt_db_opts o = *tt_db_get_opts(db);
    o.max_rows = 10;
    tt_result *r = tt_db_query_opts(db, cross, strlen(cross), &o, &err);
    if (!r) fail_msg("cut: %s", err.message);
    assert_int_equal(r->nrows, 10);
    assert_true(r->truncated);
    tt_result_free(r);
    assert_int_equal(count_genres(db), 25);
  }
  for (int i = 0; i < 5; i++) {
    tt_cursor *c = tt_db_cursor_open(db, cross, strlen(cross), 0, 0, &err);
    if (!c) fail_msg("cursor: %s", err.message);
    const tt_value *row;
    for (int k = 0; k < 3; k++) assert_int_equal(tt_cursor_next(c, &row, &err), 1);
    tt_cursor_close(c);
    assert_int_equal(count_genres(db), 25);
  }
  const char *slow = "SELECT count(*) FROM Track a, Track b, Track c";
  tt_db_opts o = *tt_db_get_opts(db);
  o.timeout_s = 0.3;
  assert_null(tt_db_query_opts(db, slow, strlen(slow), &o, &err));
  assert_int_equal(err.kind, TT_ERR_TIMEOUT);
  assert_int_equal(count_genres(db), 25);
  volatile sig_atomic_t cancel = 1;
  o = *tt_db_get_opts(db);
  o.cancel = &cancel;
  assert_null(tt_db_query_opts(db, slow, strlen(slow), &o, &err));
  assert_int_equal(err.kind, TT_ERR_CANCELLED);
  assert_int_equal(count_genres(db), 25);
  tt_db_close(db);
}

static const tt_table_info *table(const tt_catalog *cat, const char *name) {
  for (size_t i = 0; i < cat->ntables; i++)
    if (strcmp(cat->tables[i].name, name) == 0) return &cat->tables[i];
  fail_msg("no table %s", name);
  return NULL;
}

static void test_catalog(void **state) {
  (void)state;
  tt_db *db = open_db("hostile_uri", 5);
  tt_error err;
  tt_catalog *cat = tt_db_catalog_load(db, &err);
  if (!cat) fail_msg("%s", err.message);
  const tt_table_info *track = table(cat, "Track");
  assert_int_equal(track->row_count, 3503);
  assert_int_equal(track->row_count_kind, TT_ROWS_EXACT);
  assert_non_null(track->description);
  assert_non_null(strstr(track->description, "Songs and other media"));
  assert_int_equal(track->cols[0].pk, 1);
  bool fk = false;
  for (size_t i = 0; i < track->nfks; i++)
    if (strcmp(track->fks[i].table, "Album") == 0 && strcmp(track->fks[i].from, "AlbumId") == 0)
      fk = true;
  assert_true(fk);
  assert_non_null(track->sample);
  assert_int_equal(track->sample->nrows, 3);
  /* views: the plain one sampled, the ones calling the owner's code not */
  const tt_table_info *ok = table(cat, "v_ok");
  assert_true(ok->is_view);
  assert_non_null(ok->sample);
  const char *bad[] = {"v_evil",  "v_nested",      "v_sleep", "v_deep",
                       "v_users", "v_processlist", "v_lock"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    const tt_table_info *v = table(cat, bad[i]);
    assert_null(v->sample);
    assert_non_null(v->note);
  }
  assert_non_null(table(cat, "gen")->sample); /* a harmless generated column */
  assert_non_null(strstr(cat->list_tables_sql, "information_schema.TABLES"));
  tt_catalog_free(cat);
  tt_db_close(db);
  /* nothing of the owner's ran: its functions take named locks */
  char *sock = fixture("socket");
  char *cmd =
      tt_xasprintf("mariadb --no-defaults --protocol=socket --socket='%s' --user=root -N -e "
                   "\"SELECT IFNULL(IS_USED_LOCK('tt_evil'), 'free'), "
                   "IFNULL(IS_USED_LOCK('tt_view_lock'), 'free')\"",
                   sock);
  FILE *p = popen(cmd, "r");
  char line[128] = "";
  assert_non_null(fgets(line, sizeof line, p));
  pclose(p);
  assert_string_equal(line, "free\tfree\n");
  free(cmd);
  free(sock);
}

static void test_open_errors(void **state) {
  (void)state;
  char *reader = fixture("reader_uri");
  /* the right account, a wrong password: the message shows neither */
  char *wrong = tt_xstrdup(reader);
  char *pw = strstr(wrong, "R3ader-pw");
  assert_non_null(pw);
  memcpy(pw, "Wr0ngPass", 9);
  tt_error err;
  assert_null(tt_db_open(wrong, NULL, &err));
  assert_int_equal(err.kind, TT_ERR_IO);
  assert_non_null(strstr(err.message, "Access denied"));
  assert_null(strstr(err.message, "Wr0ngPass"));
  free(wrong);
  /* a system schema is no database to ask */
  char *root = fixture("uri");
  char *rootsys = tt_xasprintf("%.*s/mysql%s", (int)(strstr(root, "/chinook?") - root), root,
                               strstr(root, "/chinook?") + 8);
  assert_null(tt_db_open(rootsys, NULL, &err));
  assert_non_null(strstr(err.message, "system schema mysql"));
  free(rootsys);
  free(root);
  free(reader);
}

int main(void) {
  char *uri = fixture("uri");
  if (!uri) {
    printf("skipped: TT_MY_FIXTURE_DIR names no server (the mariadb_server fixture writes it)\n");
    return 77;
  }
  free(uri);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_dialect_and_values),
      cmocka_unit_test(test_session_sql_mode),
      cmocka_unit_test(test_stops_leave_the_session_unharmed),
      cmocka_unit_test(test_catalog),
      cmocka_unit_test(test_open_errors),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
