/* test_pg.c — units of the PostgreSQL engine of db/: which paths are
 * server URIs and how a URI's password is hidden (no server needed, always
 * run); then, against the server whose URI the pg_server fixture writes to
 * the file named by TT_PG_URI_FILE (chinook loaded), the value types, the
 * row cap, the time limit, cancelling, refusals, the password missing from
 * a failed connection's message, and the catalog. Without TT_PG_URI_FILE
 * the server tests are skipped. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libpq-fe.h>

#include "agent/agent_internal.h"
#include "db/db.h"
#include "db/pg/pg.h"
#include "schema/schema.h"
#include "testutil.h"

static void test_uri_detection(void **state) {
  (void)state;
  assert_true(tt_db_path_is_uri("postgres://h/db"));
  assert_true(tt_db_path_is_uri("postgresql://"));
  assert_true(tt_db_path_is_uri("PostgreSQL://u@h:5432/db?sslmode=disable"));
  assert_false(tt_db_path_is_uri("postgres:/x"));
  assert_false(tt_db_path_is_uri("data/chinook.sqlite"));
  assert_false(tt_db_path_is_uri("./postgres://x"));
  assert_false(tt_db_path_is_uri(""));
  assert_false(tt_db_path_is_uri("x.csv"));
}

static void expect_redacted(const char *in, const char *want) {
  char *got = tt_pg_redact_uri(in);
  assert_string_equal(got, want);
  free(got);
}

static void test_redact(void **state) {
  (void)state;
  expect_redacted("postgresql://alice:s3cr%40t@db.example:5432/sales",
                  "postgresql://alice:***@db.example:5432/sales");
  expect_redacted("postgres://alice@h/db", "postgres://alice@h/db");
  expect_redacted("postgresql://", "postgresql://");
  expect_redacted("postgresql://h/db?sslmode=require&password=hunter2&user=x",
                  "postgresql://h/db?sslmode=require&password=***&user=x");
  /* a password holding @ and : (the last @ ends the user information) */
  expect_redacted("postgresql://bob:a@b:c@h/db", "postgresql://bob:***@h/db");
  expect_redacted("postgresql://:pw@/db", "postgresql://:***@/db");
  expect_redacted("host=h password=pw dbname=d", "host=h password=*** dbname=d");
  expect_redacted("data/chinook.sqlite", "data/chinook.sqlite");
}

/* The prompt names the dialect: the SQLite one is exactly as before, the
 * PostgreSQL one says PostgreSQL wherever SQLite stood. */
static void test_prompt_dialect(void **state) {
  (void)state;
  const char *path = getenv("TT_CHINOOK");
  tt_error err;
  tt_db *db = path ? tt_db_open(path, NULL, &err) : NULL;
  if (!db) skip();
  assert_string_equal(tt_db_dialect(db), "SQLite");
  tt_schema_load_opts so = {.values = TT_SCHEMA_VALUES_NONE};
  tt_error serr;
  tt_schema *s = tt_schema_load(db, &so, &serr);
  assert_non_null(s);
  bool whole1, whole2;
  size_t cards1, cards2;
  char *plain = tt_prompt_system(s, 2000, 3, &whole1, &cards1);
  char *lite = tt_prompt_system_dialect(s, 2000, 3, &whole2, &cards2, "SQLite");
  assert_string_equal(plain, lite);
  char *pg = tt_prompt_system_dialect(s, 2000, 3, &whole2, &cards2, "PostgreSQL");
  assert_non_null(strstr(pg, "questions about a PostgreSQL database"));
  assert_non_null(strstr(pg, "one PostgreSQL SELECT statement"));
  assert_non_null(strstr(pg, "double quotes"));
  assert_null(strstr(pg, "SQLite"));
  tt_tool_spec t1[TT_AGENT_MAX_TOOLS], t2[TT_AGENT_MAX_TOOLS];
  char d1[TT_PROMPT_DESC_MAX], d2[TT_PROMPT_DESC_MAX];
  tt_prompt_tools(t1, 20, d1);
  tt_prompt_tools_dialect(t2, 20, d2, "PostgreSQL");
  assert_non_null(strstr(t2[0].description, "PostgreSQL SELECT"));
  assert_non_null(strstr(t2[0].parameters, "One PostgreSQL SELECT"));
  assert_null(strstr(t2[0].parameters, "SQLite"));
  free(plain);
  free(lite);
  free(pg);
  tt_schema_free(s);
  tt_db_close(db);
}

/* The fixture server's URI, or NULL: the test is skipped. */
static char *server_uri(void) {
  const char *file = getenv("TT_PG_URI_FILE");
  if (!file || !*file) return NULL;
  FILE *f = fopen(file, "r");
  if (!f) return NULL;
  char line[1024] = "";
  if (!fgets(line, sizeof line, f)) line[0] = '\0';
  fclose(f);
  line[strcspn(line, "\r\n")] = '\0';
  return line[0] ? tt_xstrdup(line) : NULL;
}

#define NEED_SERVER(uri)                                                                   \
  char *uri = server_uri();                                                                \
  if (!uri) {                                                                              \
    print_message("skipped: TT_PG_URI_FILE names no server URI (fixture pg_server)\n");    \
    skip();                                                                                \
  }

static tt_db *open_ok(const char *uri, tt_db_opts *o) {
  tt_error err;
  tt_db *db = tt_db_open(uri, o, &err);
  if (!db) fail_msg("open: %s", err.message);
  return db;
}

static tt_result *query_ok(tt_db *db, const char *sql) {
  tt_error err;
  tt_result *r = tt_db_query(db, sql, strlen(sql), &err);
  if (!r) fail_msg("%s: %s", sql, err.message);
  return r;
}

static void test_types_and_dialect(void **state) {
  (void)state;
  NEED_SERVER(uri);
  tt_db *db = open_ok(uri, NULL);
  assert_string_equal(tt_db_dialect(db), "PostgreSQL");
  tt_result *r = query_ok(db, "SELECT 42::int, 7::bigint, 1.5::float8, 0.99::numeric(10,2), "
                              "123456789012345678901234567890::numeric, 'é'::text, NULL, "
                              "'\\x00ff'::bytea, true");
  assert_int_equal(r->ncols, 9);
  assert_int_equal(tt_result_cell(r, 0, 0)->type, TT_VAL_INT);
  assert_int_equal(tt_result_cell(r, 0, 1)->u.i, 7);
  assert_int_equal(tt_result_cell(r, 0, 2)->type, TT_VAL_REAL);
  assert_int_equal(tt_result_cell(r, 0, 3)->type, TT_VAL_REAL);
  assert_true(tt_result_cell(r, 0, 3)->u.r == 0.99);
  assert_int_equal(tt_result_cell(r, 0, 4)->type, TT_VAL_TEXT); /* exact, past a double */
  assert_string_equal(tt_result_cell(r, 0, 4)->u.s, "123456789012345678901234567890");
  assert_string_equal(tt_result_cell(r, 0, 5)->u.s, "é");
  assert_int_equal(tt_result_cell(r, 0, 6)->type, TT_VAL_NULL);
  assert_int_equal(tt_result_cell(r, 0, 7)->type, TT_VAL_BLOB);
  assert_int_equal(tt_result_cell(r, 0, 7)->len, 2);
  assert_int_equal(tt_result_cell(r, 0, 8)->u.i, 1);
  assert_string_equal(r->decltypes[0], "integer");
  tt_result_free(r);
  /* arrays are named too (they were "": no type for array_agg's column) */
  r = query_ok(db, "SELECT ARRAY[1, 2], array_agg(\"Name\"), array_agg(\"UnitPrice\"), "
                   "'12:00+01'::timetz FROM \"Track\" WHERE \"TrackId\" <= 2");
  assert_string_equal(r->decltypes[0], "integer[]");
  assert_string_equal(r->decltypes[1], "character varying[]");
  assert_string_equal(r->decltypes[2], "numeric[]");
  assert_string_equal(r->decltypes[3], "time with time zone");
  assert_string_equal(tt_result_cell(r, 0, 0)->u.s, "{1,2}");
  tt_result_free(r);
  r = query_ok(db, "SELECT count(*) FROM \"Track\"");
  assert_int_equal(tt_result_cell(r, 0, 0)->u.i, 3503);
  tt_result_free(r);
  tt_db_close(db);
  free(uri);
}

static void test_caps_and_limits(void **state) {
  (void)state;
  NEED_SERVER(uri);
  tt_db_opts o = tt_db_default_opts();
  o.max_rows = 10;
  o.count_rows = 1000;
  o.timeout_s = 1;
  tt_db *db = open_ok(uri, &o);
  tt_result *r = query_ok(db, "SELECT g FROM generate_series(1, 1000000) g");
  assert_int_equal(r->nrows, 10);
  assert_true(r->truncated);
  assert_int_equal(r->truncated_by, TT_TRUNC_ROWS);
  assert_int_equal(r->total_rows, 1000);
  assert_false(r->total_exact);
  tt_result_free(r);
  /* the time limit: the server's statement_timeout, reported as a timeout */
  tt_error err;
  /* (pg_sleep is for the guard to refuse: a long count instead, minutes of
   * work, so a TIMEOUT can only come from the limit) */
  const char *slow = "SELECT count(*) FROM generate_series(1, 2000000000)";
  assert_null(tt_db_query(db, slow, strlen(slow), &err));
  assert_int_equal(err.kind, TT_ERR_TIMEOUT);
  /* a write: refused by the read-only transaction */
  const char *del = "DELETE FROM \"Track\"";
  assert_null(tt_db_query(db, del, strlen(del), &err));
  assert_int_equal(err.kind, TT_ERR_REFUSED);
  assert_int_equal(err.reason, TT_REFUSE_WRITE);
  const char *two = "SELECT 1; SELECT 2";
  assert_null(tt_db_query(db, two, strlen(two), &err));
  assert_int_equal(err.reason, TT_REFUSE_MULTIPLE);
  assert_null(tt_db_query(db, "COMMIT", 6, &err));
  assert_int_equal(err.kind, TT_ERR_REFUSED);
  /* a SQL error, and the handle still serves the next query */
  assert_null(tt_db_query(db, "SELECT nope FROM \"Track\"", 24, &err));
  assert_int_equal(err.kind, TT_ERR_SQL);
  assert_non_null(strstr(err.message, "nope"));
  r = query_ok(db, "SELECT count(*) FROM \"Track\"");
  assert_int_equal(tt_result_cell(r, 0, 0)->u.i, 3503);
  tt_result_free(r);
  /* cancelling: a raised flag stops it as cancelled (not by the limit) */
  static volatile sig_atomic_t flag = 1;
  tt_db_opts c = o;
  c.timeout_s = 3600;
  c.cancel = &flag;
  assert_null(tt_db_query_opts(db, slow, strlen(slow), &c, &err));
  assert_int_equal(err.kind, TT_ERR_CANCELLED);
  tt_db_close(db);
  free(uri);
}

static void test_cursor(void **state) {
  (void)state;
  NEED_SERVER(uri);
  tt_db *db = open_ok(uri, NULL);
  tt_error err;
  const char *sql = "SELECT g, 'row ' || g FROM generate_series(1, 1000000) g";
  tt_cursor *c = tt_db_cursor_open(db, sql, strlen(sql), 5, 0, &err);
  assert_non_null(c);
  assert_int_equal(tt_cursor_ncols(c), 2);
  const tt_value *row;
  int n = 0;
  while (tt_cursor_next(c, &row, &err) == 1) n++;
  assert_int_equal(n, 5);
  assert_int_equal(tt_cursor_truncated(c), TT_TRUNC_ROWS);
  tt_cursor_close(c);
  tt_result *r = query_ok(db, "SELECT 1");
  tt_result_free(r);
  tt_db_close(db);
  free(uri);
}

static void test_password_hidden(void **state) {
  (void)state;
  NEED_SERVER(uri);
  /* the fixture's URI with a wrong password and a database that is not there */
  char *bad = tt_xasprintf("%s%sdbname=tt_no_such_db&password=Sw0rdFish",
                           uri, strchr(uri, '?') ? "&" : "?");
  tt_error err;
  assert_null(tt_db_open(bad, NULL, &err));
  assert_int_equal(err.kind, TT_ERR_IO);
  assert_null(strstr(err.message, "Sw0rdFish"));
  assert_non_null(strstr(err.message, "cannot connect"));
  free(bad);
  free(uri);
}

static void test_catalog(void **state) {
  (void)state;
  NEED_SERVER(uri);
  tt_db *db = open_ok(uri, NULL);
  tt_error err;
  tt_catalog *cat = tt_db_catalog_load(db, &err);
  assert_non_null(cat);
  const tt_table_info *t = tt_catalog_find(cat, "Track");
  assert_non_null(t);
  assert_false(t->is_view);
  assert_int_equal(t->row_count_kind, TT_ROWS_STAT1);
  assert_true(t->row_count > 3000 && t->row_count < 4000);
  assert_int_equal(t->cols[0].pk, 1);
  assert_string_equal(t->cols[0].name, "TrackId");
  bool album_fk = false;
  for (size_t i = 0; i < t->nfks; i++)
    if (strcmp(t->fks[i].table, "Album") == 0 && strcmp(t->fks[i].to, "AlbumId") == 0)
      album_fk = true;
  assert_true(album_fk);
  assert_non_null(t->sample);
  assert_int_equal(t->sample->nrows, 3);
  const tt_table_info *pl = tt_catalog_find(cat, "PlaylistTrack");
  assert_non_null(pl);
  int pks = 0;
  for (size_t i = 0; i < pl->ncols; i++) pks += pl->cols[i].pk > 0;
  assert_int_equal(pks, 2);
  tt_catalog_free(cat);
  tt_db_close(db);
  free(uri);
}

/* Runs sql on uri outside tabletalk (setting up a scratch database). */
static void admin_exec(const char *uri, const char *sql) {
  PGconn *c = PQconnectdb(uri);
  if (PQstatus(c) != CONNECTION_OK) fail_msg("admin connect: %s", PQerrorMessage(c));
  PGresult *r = PQexec(c, sql);
  ExecStatusType st = PQresultStatus(r);
  if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK) fail_msg("%s: %s", sql, PQerrorMessage(c));
  PQclear(r);
  PQfinish(c);
}

/* Tables of two schemas: names "schema.table", cards with schema.table. */
static void test_two_schemas(void **state) {
  (void)state;
  NEED_SERVER(uri);
  PGconn *c = PQconnectdb(uri);
  PGresult *r = PQexec(c, "DROP DATABASE IF EXISTS tt_pg_two_schemas");
  PQclear(r);
  r = PQexec(c, "CREATE DATABASE tt_pg_two_schemas");
  bool made = PQresultStatus(r) == PGRES_COMMAND_OK;
  PQclear(r);
  PQfinish(c);
  if (!made) {
    print_message("skipped: the fixture's user cannot create a database\n");
    free(uri);
    skip();
  }
  char *two = tt_xasprintf("%s%sdbname=tt_pg_two_schemas", uri, strchr(uri, '?') ? "&" : "?");
  admin_exec(two, "CREATE SCHEMA sales; CREATE TABLE public.\"Item\"(id int PRIMARY KEY, "
                  "name text); CREATE TABLE sales.orders(id int PRIMARY KEY, item int "
                  "REFERENCES public.\"Item\"(id)); COMMENT ON TABLE sales.orders IS 'one row per "
                  "order'; INSERT INTO public.\"Item\" VALUES (1, 'lamp'); ANALYZE");
  tt_db *db = open_ok(two, NULL);
  tt_error err;
  tt_catalog *cat = tt_db_catalog_load(db, &err);
  assert_non_null(cat);
  assert_int_equal(cat->ntables, 2);
  assert_string_equal(cat->tables[0].name, "public.Item"); /* the search_path first */
  assert_int_equal(cat->tables[0].schema_len, 6);
  const tt_table_info *o = tt_catalog_find(cat, "sales.orders");
  assert_non_null(o);
  assert_string_equal(o->description, "one row per order");
  assert_int_equal(o->nfks, 1);
  assert_string_equal(o->fks[0].table, "public.Item");
  tt_catalog_free(cat);
  tt_schema_load_opts so = {.values = TT_SCHEMA_VALUES_NONE};
  tt_error serr;
  tt_schema *s = tt_schema_load(db, &so, &serr);
  assert_non_null(s);
  tt_buf b = TT_BUF_INIT;
  tt_schema_render_text(s, NULL, 0, &b);
  assert_non_null(strstr(tt_buf_cstr(&b), "# Table: public.Item"));
  assert_non_null(strstr(tt_buf_cstr(&b), "# Table: sales.orders"));
  assert_non_null(strstr(tt_buf_cstr(&b), "references public.Item.id"));
  tt_buf_free(&b);
  tt_schema_free(s);
  /* qualified names in SQL */
  tt_result *res = query_ok(db, "SELECT count(*) FROM public.\"Item\" JOIN sales.orders o ON "
                                "o.item = \"Item\".id");
  assert_int_equal(tt_result_cell(res, 0, 0)->u.i, 0);
  tt_result_free(res);
  tt_db_close(db);
  free(two);
  free(uri);
}

/* --schemas: plain names keep only those, !names leave those out, names
 * match exactly. */
static void test_schema_filter(void **state) {
  (void)state;
  assert_true(tt_pg_schema_wanted(NULL, "public"));
  assert_true(tt_pg_schema_wanted("sales,hr", "hr"));
  assert_false(tt_pg_schema_wanted("sales,hr", "public"));
  assert_false(tt_pg_schema_wanted("sales,hr", "sale"));   /* not a prefix match */
  assert_false(tt_pg_schema_wanted("sales,hr", "Sales"));  /* case matters */
  assert_true(tt_pg_schema_wanted("!audit", "public"));
  assert_false(tt_pg_schema_wanted("!audit", "audit"));
  assert_false(tt_pg_schema_wanted("!audit,sales", "audit"));
  assert_true(tt_pg_schema_wanted("!audit,sales", "sales"));
  assert_false(tt_pg_schema_wanted("!audit,sales", "public")); /* a name given: only those */
  assert_false(tt_pg_schema_wanted("sales,!sales", "sales"));  /* ! wins */
}

/* test_pg: the units that need no server; test_pg server: the others
 * (exit 77, skipped, when no server URI is given). */
int main(int argc, char **argv) {
  if (argc > 1 && strcmp(argv[1], "server") == 0) {
    char *uri = server_uri();
    if (!uri) {
      fprintf(stderr, "skipped: TT_PG_URI_FILE names no file with a server URI (the pg_server "
                      "fixture writes it)\n");
      return 77;
    }
    free(uri);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_types_and_dialect), cmocka_unit_test(test_caps_and_limits),
        cmocka_unit_test(test_cursor), cmocka_unit_test(test_password_hidden),
        cmocka_unit_test(test_catalog), cmocka_unit_test(test_two_schemas),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
  }
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_uri_detection),
      cmocka_unit_test(test_redact),
      cmocka_unit_test(test_prompt_dialect),
      cmocka_unit_test(test_schema_filter),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
