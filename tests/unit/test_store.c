/* test_store.c — units of the thread store's listing, renaming and
 * deleting (what tabletalk web's sidebar uses), in a private state folder:
 * newest first, per database, titles over first questions, a rename or
 * delete of an unknown thread changes nothing and says so, and a deleted
 * thread starts afresh when asked again. Then the SQL run by hand (one id
 * per text, the history newest first, per database) and the board's pins
 * (appended last, moved anywhere and past the end, renamed, removed).
 * And a store made before a column existed gets it, once: its layout
 * version is recorded so that later opens skip the CREATE statements.
 * The WAL kept between processes is folded into the file once it grows
 * past 256 KiB, so that the next open does not read megabytes of it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <sqlite3.h>

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "store/store.h"
#include "testutil.h"

static const char *DB = "/data/shop.sqlite";
static const char *OTHER = "/data/other.sqlite";

/* Saves an answered turn, then makes its time the latest by one second
 * (distinct, ordered times without waiting for the clock to move on). */
static void save(tt_store *st, const char *dir, const char *thread, const char *db,
                 const char *question) {
  tt_run run;
  memset(&run, 0, sizeof run);
  run.status = TT_RUN_ANSWERED;
  run.answer = (char *)"an answer";
  tt_error err;
  assert_true(tt_store_save_turn(st, thread, db, "20261203-100000-000abc", question, &run, false, &err));
  char *path = tt_xasprintf("%s/threads.sqlite", dir);
  sqlite3 *h;
  assert_int_equal(sqlite3_open(path, &h), SQLITE_OK);
  sqlite3_busy_timeout(h, 60000);
  assert_int_equal(sqlite3_exec(h, "UPDATE turns SET created = (SELECT max(created) + 1 FROM turns) "
                                   "WHERE rowid = (SELECT max(rowid) FROM turns)", NULL, NULL, NULL),
                   SQLITE_OK);
  sqlite3_close(h);
  free(path);
}

static tt_store *open_store(char **dir) {
  *dir = tu_mkdtemp();
  tt_error err;
  tt_store *st = tt_store_open(*dir, &err);
  assert_non_null(st);
  return st;
}

static void test_list_newest_first_per_database(void **state) {
  (void)state;
  char *dir;
  tt_store *st = open_store(&dir);
  save(st, dir, "a", DB, "first of a");
  save(st, dir, "b", DB, "first of b");
  save(st, dir, "c", OTHER, "elsewhere");
  save(st, dir, "a", DB, "second of a");
  tt_thread_summary *v;
  size_t n;
  tt_error err;
  assert_true(tt_store_list_threads(st, DB, &v, &n, &err));
  assert_int_equal(n, 2);
  assert_string_equal(v[0].name, "a"); /* its last turn is the newest */
  assert_string_equal(v[0].title, "first of a");
  assert_int_equal(v[0].turns, 2);
  assert_string_equal(v[1].name, "b");
  assert_int_equal(v[1].turns, 1);
  assert_true(v[0].updated >= v[1].updated);
  tt_thread_summaries_free(v, n);
  /* a database with no threads lists none */
  assert_true(tt_store_list_threads(st, "/none", &v, &n, &err));
  assert_int_equal(n, 0);
  tt_thread_summaries_free(v, n);
  tt_store_close(st);
  free(dir);
}

static void test_rename(void **state) {
  (void)state;
  char *dir;
  tt_store *st = open_store(&dir);
  save(st, dir, "a", DB, "first of a");
  save(st, dir, "a", OTHER, "the same name on another database");
  bool found = false;
  tt_error err;
  assert_true(tt_store_rename_thread(st, "a", DB, "Sales by year", &found, &err));
  assert_true(found);
  assert_true(tt_store_rename_thread(st, "a", DB, "Sales by month", &found, &err)); /* again */
  assert_true(tt_store_rename_thread(st, "nope", DB, "x", &found, &err));
  assert_false(found);
  tt_thread_summary *v;
  size_t n;
  assert_true(tt_store_list_threads(st, DB, &v, &n, &err));
  assert_int_equal(n, 1);
  assert_string_equal(v[0].title, "Sales by month");
  tt_thread_summaries_free(v, n);
  /* the other database's thread of the same name keeps its question */
  assert_true(tt_store_list_threads(st, OTHER, &v, &n, &err));
  assert_string_equal(v[0].title, "the same name on another database");
  tt_thread_summaries_free(v, n);
  /* the title comes with the thread, the turns are kept */
  tt_thread t;
  assert_true(tt_store_load_thread(st, "a", DB, &t, &err));
  assert_string_equal(t.title, "Sales by month");
  assert_int_equal(t.nturns, 1);
  tt_thread_free(&t);
  tt_store_close(st);
  free(dir);
}

static void test_delete(void **state) {
  (void)state;
  char *dir;
  tt_store *st = open_store(&dir);
  save(st, dir, "a", DB, "one");
  save(st, dir, "a", DB, "two");
  save(st, dir, "a", OTHER, "kept");
  bool found = false;
  tt_error err;
  assert_true(tt_store_rename_thread(st, "a", DB, "titled", &found, &err));
  assert_true(tt_store_delete_thread(st, "a", DB, &found, &err));
  assert_true(found);
  assert_true(tt_store_delete_thread(st, "a", DB, &found, &err));
  assert_false(found);
  tt_thread t;
  assert_true(tt_store_load_thread(st, "a", DB, &t, &err));
  assert_int_equal(t.nturns, 0);
  assert_null(t.title);
  tt_thread_free(&t);
  assert_true(tt_store_load_thread(st, "a", OTHER, &t, &err));
  assert_int_equal(t.nturns, 1);
  tt_thread_free(&t);
  /* asked again, the name starts a new thread without the old title */
  save(st, dir, "a", DB, "fresh");
  tt_thread_summary *v;
  size_t n;
  assert_true(tt_store_list_threads(st, DB, &v, &n, &err));
  assert_int_equal(n, 1);
  assert_string_equal(v[0].title, "fresh");
  assert_int_equal(v[0].turns, 1);
  tt_thread_summaries_free(v, n);
  tt_store_close(st);
  free(dir);
}

static void test_queries(void **state) {
  (void)state;
  char *dir;
  tt_store *st = open_store(&dir);
  tt_error err;
  char a[TT_QUERY_ID_LEN + 1], b[TT_QUERY_ID_LEN + 1], a2[TT_QUERY_ID_LEN + 1], c[TT_QUERY_ID_LEN + 1];
  assert_true(tt_store_put_query(st, DB, "SELECT 1", true, a, &err));
  assert_true(tt_store_put_query(st, DB, "SELECT 2", false, b, &err)); /* kept, not in the history */
  assert_true(tt_store_put_query(st, OTHER, "SELECT 3", true, c, &err));
  assert_true(tt_store_put_query(st, DB, "SELECT 1", true, a2, &err));
  assert_string_equal(a, a2); /* the same text, the same id */
  assert_string_not_equal(a, b);
  assert_int_equal(strlen(a), TT_QUERY_ID_LEN);
  char *sql;
  assert_true(tt_store_get_query(st, DB, b, &sql, &err));
  assert_string_equal(sql, "SELECT 2");
  free(sql);
  assert_true(tt_store_get_query(st, OTHER, a, &sql, &err));
  assert_null(sql); /* another database's */
  tt_query_rec *v;
  size_t n;
  assert_true(tt_store_list_queries(st, DB, 10, &v, &n, &err));
  assert_int_equal(n, 1);
  assert_string_equal(v[0].sql, "SELECT 1");
  assert_int_equal(v[0].runs, 2);
  tt_query_recs_free(v, n);
  assert_true(tt_store_put_query(st, DB, "SELECT 2", true, b, &err)); /* now run by hand */
  assert_true(tt_store_list_queries(st, DB, 10, &v, &n, &err));
  assert_int_equal(n, 2);
  tt_query_recs_free(v, n);
  tt_store_close(st);
  free(dir);
}

/* The board's titles in order, joined by spaces. */
static char *board(tt_store *st, const char *db) {
  tt_pin *v;
  size_t n;
  tt_error err;
  assert_true(tt_store_list_pins(st, db, &v, &n, &err));
  tt_buf b = TT_BUF_INIT;
  for (size_t i = 0; i < n; i++) tt_buf_printf(&b, "%s%s", i ? " " : "", v[i].title);
  tt_pins_free(v, n);
  return tt_buf_detach(&b);
}

static void assert_board(tt_store *st, const char *db, const char *want) {
  char *got = board(st, db);
  assert_string_equal(got ? got : "", want);
  free(got);
}

static void test_pins(void **state) {
  (void)state;
  char *dir;
  tt_store *st = open_store(&dir);
  tt_error err;
  long long id[4];
  const char *names[] = {"a", "b", "c", "d"};
  for (int i = 0; i < 4; i++) {
    tt_pin p = {.title = (char *)names[i], .sql = (char *)"SELECT 1",
                .chart = i == 0 ? (char *)"{\"kind\":\"bar\"}" : NULL};
    assert_true(tt_store_add_pin(st, DB, &p, &id[i], &err));
  }
  tt_pin other = {.title = (char *)"elsewhere", .sql = (char *)"SELECT 2"};
  long long oid;
  assert_true(tt_store_add_pin(st, OTHER, &other, &oid, &err));
  assert_board(st, DB, "a b c d");
  bool found;
  assert_true(tt_store_move_pin(st, DB, id[3], 0, &found, &err));
  assert_true(found);
  assert_board(st, DB, "d a b c");
  assert_true(tt_store_move_pin(st, DB, id[3], 99, &found, &err)); /* past the end: last */
  assert_board(st, DB, "a b c d");
  assert_true(tt_store_move_pin(st, DB, id[0], 2, &found, &err));
  assert_board(st, DB, "b c a d");
  assert_true(tt_store_move_pin(st, DB, oid, 0, &found, &err));
  assert_false(found); /* another board's pin */
  assert_true(tt_store_rename_pin(st, DB, id[1], "B", &found, &err));
  assert_true(found);
  assert_true(tt_store_delete_pin(st, DB, id[2], &found, &err));
  assert_true(found);
  assert_true(tt_store_delete_pin(st, DB, id[2], &found, &err));
  assert_false(found);
  assert_board(st, DB, "B a d");
  assert_board(st, OTHER, "elsewhere");
  tt_pin p;
  assert_true(tt_store_get_pin(st, DB, id[0], &p, &found, &err));
  assert_true(found);
  assert_string_equal(p.chart, "{\"kind\":\"bar\"}");
  assert_null(p.question);
  tt_pin_free(&p);
  /* a new pin goes last */
  long long e;
  tt_pin last = {.title = (char *)"e", .sql = (char *)"SELECT 5"};
  assert_true(tt_store_add_pin(st, DB, &last, &e, &err));
  assert_board(st, DB, "B a d e");
  tt_store_close(st);
  free(dir);
}

/* The recorded layout version of the store file at path, read by a
 * connection of the test's own. */
static int user_version(const char *path) {
  sqlite3 *h;
  assert_int_equal(sqlite3_open(path, &h), SQLITE_OK);
  sqlite3_stmt *st = NULL;
  assert_int_equal(sqlite3_prepare_v2(h, "PRAGMA user_version", -1, &st, NULL), SQLITE_OK);
  assert_int_equal(sqlite3_step(st), SQLITE_ROW);
  int v = sqlite3_column_int(st, 0);
  sqlite3_finalize(st);
  sqlite3_close(h);
  return v;
}

static void test_old_store_migrated_once(void **state) {
  (void)state;
  char *dir = tu_mkdtemp();
  char *path = tt_xasprintf("%s/threads.sqlite", dir);
  sqlite3 *h;
  assert_int_equal(sqlite3_open(path, &h), SQLITE_OK);
  /* the layout before the numbers column and before the version */
  assert_int_equal(sqlite3_exec(h, "CREATE TABLE turns(thread TEXT NOT NULL, db_path TEXT NOT NULL,"
                                   " seq INTEGER NOT NULL, run_id TEXT, question TEXT NOT NULL,"
                                   " answer TEXT, sql TEXT, summary TEXT, status TEXT NOT NULL,"
                                   " pending TEXT, created REAL NOT NULL,"
                                   " PRIMARY KEY(thread, db_path, seq))", NULL, NULL, NULL),
                   SQLITE_OK);
  sqlite3_close(h);
  tt_error err;
  tt_store *st = tt_store_open(dir, &err);
  assert_non_null(st);
  assert_true(user_version(path) > 0);
  save(st, dir, "t", DB, "a question");
  tt_store_close(st);
  st = tt_store_open(dir, &err); /* the quick way now: the column is there */
  assert_non_null(st);
  save(st, dir, "t", DB, "a follow-up"); /* saving writes the numbers column */
  tt_store_close(st);
  assert_int_equal(sqlite3_open(path, &h), SQLITE_OK);
  sqlite3_stmt *q = NULL;
  assert_int_equal(sqlite3_prepare_v2(h, "SELECT count(*) FROM turns WHERE numbers IS NULL", -1, &q,
                                      NULL), SQLITE_OK);
  assert_int_equal(sqlite3_step(q), SQLITE_ROW);
  assert_int_equal(sqlite3_column_int(q, 0), 2);
  sqlite3_finalize(q);
  sqlite3_close(h);
  free(path);
  free(dir);
}

static long long file_size(const char *path) {
  struct stat st;
  return stat(path, &st) == 0 ? (long long)st.st_size : -1;
}

static void test_wal_folded_at_close(void **state) {
  (void)state;
  char *dir;
  tt_store *st = open_store(&dir);
  char *wal = tt_xasprintf("%s/threads.sqlite-wal", dir);
  /* answers of 8 KiB: 40 turns pass 256 KiB of WAL */
  char *answer = malloc(8192);
  memset(answer, 'x', 8191);
  answer[8191] = '\0';
  tt_run run;
  memset(&run, 0, sizeof run);
  run.status = TT_RUN_ANSWERED;
  run.answer = answer;
  tt_error err;
  for (int i = 0; i < 40; i++)
    assert_true(tt_store_save_turn(st, "long", DB, "20261203-100000-000abc", "q", &run, false, &err));
  assert_true(file_size(wal) > 256 * 1024);
  tt_store_close(st);
  assert_true(file_size(wal) <= 0); /* truncated (or gone) */
  st = tt_store_open(dir, &err); /* every turn is still there */
  assert_non_null(st);
  tt_store_close(st);
  char *path = tt_xasprintf("%s/threads.sqlite", dir);
  sqlite3 *h;
  assert_int_equal(sqlite3_open(path, &h), SQLITE_OK);
  sqlite3_stmt *q = NULL;
  assert_int_equal(sqlite3_prepare_v2(h, "SELECT count(*) FROM turns WHERE thread = 'long'", -1, &q,
                                      NULL), SQLITE_OK);
  assert_int_equal(sqlite3_step(q), SQLITE_ROW);
  assert_int_equal(sqlite3_column_int(q, 0), 40);
  sqlite3_finalize(q);
  sqlite3_close(h);
  free(path);
  free(answer);
  free(wal);
  free(dir);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_list_newest_first_per_database),
      cmocka_unit_test(test_rename),
      cmocka_unit_test(test_delete),
      cmocka_unit_test(test_queries),
      cmocka_unit_test(test_pins),
      cmocka_unit_test(test_old_store_migrated_once),
      cmocka_unit_test(test_wal_folded_at_close),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
