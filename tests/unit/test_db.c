/* test_db.c — units of the db layer on real SQLite files: opening (errors,
 * nothing created), typed result sets, caps and the truncated flag, the
 * guard's refusals and their reasons, the time and memory limits, and the
 * checked printf() compared with SQLite's built-in one, and a row over
 * the byte cap kept with its cells cut. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <signal.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "db/db.h"
#include "testutil.h"

static tu_scratch g_scratch;
#define g_db g_scratch.db
#define g_dir g_scratch.dir

static int setup(void **state) {
  (void)state;
  tu_scratch_make(&g_scratch);
  return 0;
}

static int teardown(void **state) {
  (void)state;
  tu_scratch_remove(&g_scratch);
  return 0;
}

static tt_db *open_chinook(void) {
  tt_error err;
  tt_db *db = tt_db_open(g_db, NULL, &err);
  if (!db) fprintf(stderr, "open: %s\n", err.message);
  assert_non_null(db);
  return db;
}

static tt_result *q(tt_db *db, const char *sql, tt_error *err) {
  return tt_db_query(db, sql, strlen(sql), err);
}

/* A query's own limits apply to that query alone: the handle a caller
 * borrowed keeps its settings, and the next plain query runs under them. */
static void test_query_opts_leave_the_handle_alone(void **state) {
  (void)state;
  tt_db *db = open_chinook();
  tt_db_opts before = *tt_db_get_opts(db);
  tt_db_opts mine = before;
  mine.max_rows = 3;
  tt_error err;
  tt_result *r = tt_db_query_opts(db, "SELECT TrackId FROM Track", 25, &mine, &err);
  assert_non_null(r);
  assert_int_equal(r->nrows, 3);
  assert_true(r->truncated);
  tt_result_free(r);
  assert_int_equal(tt_db_get_opts(db)->max_rows, before.max_rows);
  assert_int_equal(tt_db_get_opts(db)->max_bytes, before.max_bytes);
  assert_true(tt_db_get_opts(db)->timeout_s == before.timeout_s);
  r = q(db, "SELECT TrackId FROM Track", &err);
  assert_non_null(r);
  assert_true(r->nrows > 3);
  tt_result_free(r);
  /* a cancel flag given for one query stops that query only */
  volatile sig_atomic_t stop = 1;
  mine.cancel = &stop;
  r = tt_db_query_opts(db, "SELECT count(*) FROM Track a, Track b", 37, &mine, &err);
  assert_null(r);
  assert_null(tt_db_get_opts(db)->cancel);
  r = q(db, "SELECT 1", &err);
  assert_non_null(r);
  tt_result_free(r);
  tt_db_close(db);
}

static void test_open_errors(void **state) {
  (void)state;
  tt_error err;
  char *missing = tt_xasprintf("%s/nope.sqlite", g_dir);
  assert_null(tt_db_open(missing, NULL, &err));
  assert_int_equal(err.kind, TT_ERR_IO);
  assert_non_null(strstr(err.message, "no such file"));
  assert_int_equal(access(missing, F_OK), -1);
  assert_null(tt_db_open(g_dir, NULL, &err));
  assert_non_null(strstr(err.message, "directory"));
  free(missing);
}

/* Opening a WAL-mode database creates no -wal or -shm file beside it. */
static void test_wal_database_creates_nothing(void **state) {
  (void)state;
  char *wal_db = tt_xasprintf("%s/wal.sqlite", g_dir);
  tu_copy_file(g_db, wal_db);
  sqlite3 *h;
  assert_int_equal(sqlite3_open(wal_db, &h), SQLITE_OK);
  assert_int_equal(sqlite3_exec(h, "PRAGMA journal_mode=WAL", NULL, NULL, NULL), SQLITE_OK);
  sqlite3_close(h);
  char *wal = tt_xasprintf("%s-wal", wal_db), *shm = tt_xasprintf("%s-shm", wal_db);
  assert_false(tt_file_exists(wal));
  tt_error err;
  tt_db *db = tt_db_open(wal_db, NULL, &err);
  assert_non_null(db);
  tt_result *r = q(db, "SELECT count(*) FROM Track", &err);
  assert_int_equal(tt_result_cell(r, 0, 0)->u.i, 3503);
  tt_result_free(r);
  tt_db_close(db);
  assert_false(tt_file_exists(wal));
  assert_false(tt_file_exists(shm));
  /* a -wal without its -shm cannot be read without creating one */
  FILE *f = fopen(wal, "w");
  fclose(f);
  assert_null(tt_db_open(wal_db, NULL, &err));
  assert_non_null(strstr(err.message, "WAL mode"));
  assert_false(tt_file_exists(shm));
  unlink(wal);
  free(wal);
  free(shm);
  free(wal_db);
  char *fifo = tt_xasprintf("%s/pipe", g_dir);
  assert_int_equal(mkfifo(fifo, 0600), 0);
  assert_null(tt_db_open(fifo, NULL, &err));
  assert_non_null(strstr(err.message, "not a regular file"));
  free(fifo);
}

static void test_typed_values(void **state) {
  (void)state;
  tt_db *db = open_chinook();
  tt_error err;
  tt_result *r = q(db, "SELECT 42, 1.5, 'text', NULL, x'00FF', char(0) || 'z'", &err);
  assert_non_null(r);
  assert_int_equal(r->ncols, 6);
  assert_int_equal(r->nrows, 1);
  assert_int_equal(tt_result_cell(r, 0, 0)->type, TT_VAL_INT);
  assert_int_equal(tt_result_cell(r, 0, 0)->u.i, 42);
  assert_int_equal(tt_result_cell(r, 0, 1)->type, TT_VAL_REAL);
  assert_true(tt_result_cell(r, 0, 1)->u.r == 1.5);
  assert_int_equal(tt_result_cell(r, 0, 2)->type, TT_VAL_TEXT);
  assert_string_equal(tt_result_cell(r, 0, 2)->u.s, "text");
  assert_int_equal(tt_result_cell(r, 0, 3)->type, TT_VAL_NULL);
  assert_int_equal(tt_result_cell(r, 0, 4)->type, TT_VAL_BLOB);
  assert_int_equal(tt_result_cell(r, 0, 4)->len, 2);
  assert_int_equal(tt_result_cell(r, 0, 5)->len, 2); /* NUL kept inside text */
  tt_buf b = TT_BUF_INIT;
  tt_value_to_text(&b, tt_result_cell(r, 0, 4));
  assert_string_equal(tt_buf_cstr(&b), "<blob 2 bytes>");
  tt_buf_reset(&b);
  tt_value r2 = {.type = TT_VAL_REAL, .u.r = 3.0};
  tt_value_to_text(&b, &r2);
  assert_string_equal(tt_buf_cstr(&b), "3.0");
  tt_buf_free(&b);
  tt_result_free(r);

  r = q(db, "SELECT TrackId, Name, Milliseconds / 1000.0 AS s FROM Track LIMIT 1", &err);
  assert_string_equal(r->names[1], "Name");
  assert_string_equal(r->decltypes[0], "INTEGER");
  assert_string_equal(r->decltypes[1], "NVARCHAR(200)");
  assert_string_equal(r->decltypes[2], "");
  assert_true(r->elapsed_ms >= 0);
  tt_result_free(r);
  tt_db_close(db);
}

static void test_caps(void **state) {
  (void)state;
  tt_db *db = open_chinook();
  tt_db_opts o = *tt_db_get_opts(db);
  o.max_rows = 5;
  tt_db_set_opts(db, &o);
  tt_error err;
  tt_result *r = q(db, "SELECT * FROM Track", &err);
  assert_int_equal(r->nrows, 5);
  assert_true(r->truncated);
  assert_int_equal(r->truncated_by, TT_TRUNC_ROWS);
  tt_result_free(r);
  r = q(db, "SELECT * FROM Track LIMIT 5", &err);
  assert_int_equal(r->nrows, 5);
  assert_false(r->truncated);
  tt_result_free(r);
  o.max_rows = 1000;
  o.max_bytes = 1000000;
  tt_db_set_opts(db, &o);
  r = q(db, "SELECT randomblob(600000) FROM Track LIMIT 3", &err);
  assert_int_equal(r->nrows, 1);
  assert_true(r->truncated);
  assert_int_equal(r->truncated_by, TT_TRUNC_BYTES);
  assert_int_equal(r->bytes, 600000);
  tt_result_free(r);
  tt_db_close(db);
}

/* count_rows: past the cut the rows are counted, not kept. */
static void test_count_rows(void **state) {
  (void)state;
  tt_db *db = open_chinook();
  tt_db_opts o = *tt_db_get_opts(db);
  o.max_rows = 50;
  o.count_rows = 1000000;
  tt_db_set_opts(db, &o);
  tt_error err;
  tt_result *r = q(db, "SELECT * FROM Track", &err);
  assert_int_equal(r->nrows, 50);
  assert_true(r->truncated);
  assert_int_equal(r->total_rows, 3503);
  assert_true(r->total_exact);
  assert_true(r->repeatable);
  tt_result_free(r);
  o.count_rows = 100; /* counting stops at 100 in all */
  tt_db_set_opts(db, &o);
  r = q(db, "SELECT * FROM Track", &err);
  assert_int_equal(r->nrows, 50);
  assert_int_equal(r->total_rows, 100);
  assert_false(r->total_exact);
  tt_result_free(r);
  r = q(db, "SELECT * FROM Genre", &err);
  assert_int_equal(r->total_rows, 25);
  assert_true(r->total_exact);
  assert_false(r->truncated);
  tt_result_free(r);
  /* Counting that runs out of time still returns the rows it kept. */
  o.count_rows = 1000000000;
  o.timeout_s = 0.3;
  tt_db_set_opts(db, &o);
  r = q(db, "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT x FROM c", &err);
  assert_non_null(r);
  assert_int_equal(r->nrows, 50);
  assert_false(r->total_exact);
  assert_true(r->total_rows > 50);
  assert_false(r->repeatable);
  tt_result_free(r);
  o.timeout_s = 5;
  tt_db_set_opts(db, &o);
  /* The clock and randomness make a statement unrepeatable. */
  static const char *const varying[] = {"SELECT random()", "SELECT datetime('now')",
                                        "SELECT CURRENT_TIMESTAMP", "SELECT changes()",
                                        "SELECT Name FROM Genre ORDER BY random() LIMIT 1"};
  for (size_t i = 0; i < sizeof varying / sizeof varying[0]; i++) {
    r = q(db, varying[i], &err);
    assert_non_null(r);
    if (r->repeatable) fail_msg("%s counted as repeatable", varying[i]);
    tt_result_free(r);
  }
  r = q(db, "SELECT upper(Name), date('2009-01-01') FROM Genre", &err);
  assert_true(r->repeatable == false); /* date() is on the list as a whole */
  tt_result_free(r);
  r = q(db, "SELECT upper(Name), length(Name) FROM Genre", &err);
  assert_true(r->repeatable);
  tt_result_free(r);
  tt_db_close(db);
}

static int64_t one_int(tt_db *db, const char *sql) {
  tt_error err;
  tt_result *r = q(db, sql, &err);
  if (!r) fprintf(stderr, "%s: %s\n", sql, err.message);
  assert_non_null(r);
  int64_t v = tt_result_cell(r, 0, 0)->u.i;
  tt_result_free(r);
  return v;
}

static void exec_ok(sqlite3 *h, const char *sql) {
  char *msg = NULL;
  int rc = sqlite3_exec(h, sql, NULL, NULL, &msg);
  if (rc != SQLITE_OK) fprintf(stderr, "%s: %s\n", sql, msg ? msg : "?");
  sqlite3_free(msg);
  assert_int_equal(rc, SQLITE_OK);
}

/* A snapshot's version changes with every commit of another connection,
 * and only then; queries in a snapshot see its data. */
static void test_snapshot_versions(void **state) {
  (void)state;
  char *path = tt_xasprintf("%s/versions.sqlite", g_dir);
  tu_copy_file(g_db, path);
  tt_error err;
  tt_db *db = tt_db_open(path, NULL, &err);
  assert_non_null(db);
  uint64_t a, b, c, d;
  assert_true(tt_db_snapshot_begin(db, &a, &err));
  tt_db_snapshot_end(db);
  assert_true(tt_db_snapshot_begin(db, &b, &err));
  tt_db_snapshot_end(db);
  assert_true(a == b);
  sqlite3 *w;
  assert_int_equal(sqlite3_open(path, &w), SQLITE_OK);
  exec_ok(w, "INSERT INTO Genre(Name) VALUES ('x')");
  assert_true(tt_db_snapshot_begin(db, &c, &err));
  assert_int_equal(one_int(db, "SELECT count(*) FROM Genre"), 26);
  tt_db_snapshot_end(db);
  assert_true(c != a);
  /* WAL: a commit while a snapshot is open is not seen in it, then is */
  exec_ok(w, "PRAGMA journal_mode=WAL");
  assert_true(tt_db_snapshot_begin(db, &c, &err));
  exec_ok(w, "INSERT INTO Genre(Name) VALUES ('y')");
  assert_int_equal(one_int(db, "SELECT count(*) FROM Genre"), 26);
  tt_db_snapshot_end(db);
  assert_true(tt_db_snapshot_begin(db, &d, &err));
  assert_int_equal(one_int(db, "SELECT count(*) FROM Genre"), 27);
  tt_db_snapshot_end(db);
  assert_true(d != c);
  sqlite3_close(w);
  tt_db_close(db);
  free(path);
}

/* A file replaced by rename (an application's atomic save) is read anew. */
static void test_replaced_file_is_followed(void **state) {
  (void)state;
  char *path = tt_xasprintf("%s/replaced.sqlite", g_dir), *next = tt_xasprintf("%s/next.sqlite", g_dir);
  tu_copy_file(g_db, path);
  tu_copy_file(g_db, next);
  tt_error err;
  tt_db *db = tt_db_open(path, NULL, &err);
  assert_int_equal(one_int(db, "SELECT count(*) FROM Genre"), 25);
  sqlite3 *w;
  assert_int_equal(sqlite3_open(next, &w), SQLITE_OK);
  exec_ok(w, "DELETE FROM Genre WHERE GenreId > 5");
  sqlite3_close(w);
  assert_int_equal(rename(next, path), 0);
  assert_int_equal(one_int(db, "SELECT count(*) FROM Genre"), 5);
  uint64_t v;
  assert_true(tt_db_snapshot_begin(db, &v, &err));
  tt_db_snapshot_end(db);
  unlink(path);
  assert_null(q(db, "SELECT 1", &err));
  assert_int_equal(err.kind, TT_ERR_IO);
  assert_non_null(strstr(err.message, "is gone"));
  tt_db_close(db);
  free(path);
  free(next);
}

/* A WAL file that no writer has open is read without creating -wal or
 * -shm (also with a -shm left beside it), and a writer that comes and
 * goes between two queries is seen by the second. */
static void test_quiet_wal_file(void **state) {
  (void)state;
  char *path = tt_xasprintf("%s/quiet.sqlite", g_dir);
  char *wal = tt_xasprintf("%s-wal", path), *shm = tt_xasprintf("%s-shm", path);
  tu_copy_file(g_db, path);
  sqlite3 *w;
  assert_int_equal(sqlite3_open(path, &w), SQLITE_OK);
  exec_ok(w, "PRAGMA journal_mode=WAL");
  sqlite3_close(w);
  assert_false(tt_file_exists(wal));
  tt_error err;
  tt_db *db = tt_db_open(path, NULL, &err);
  assert_non_null(db);
  assert_int_equal(one_int(db, "SELECT count(*) FROM Genre"), 25);
  assert_false(tt_file_exists(wal));
  assert_false(tt_file_exists(shm));
  assert_int_equal(sqlite3_open(path, &w), SQLITE_OK); /* a writer comes, commits, goes */
  exec_ok(w, "INSERT INTO Genre(Name) VALUES ('x'); INSERT INTO Genre(Name) VALUES ('y')");
  sqlite3_close(w);
  assert_false(tt_file_exists(wal));
  assert_int_equal(one_int(db, "SELECT count(*) FROM Genre"), 27);
  /* a writer that stays: read through its -wal, with locks */
  assert_int_equal(sqlite3_open(path, &w), SQLITE_OK);
  exec_ok(w, "INSERT INTO Genre(Name) VALUES ('z')");
  assert_true(tt_file_exists(wal));
  assert_int_equal(one_int(db, "SELECT count(*) FROM Genre"), 28);
  exec_ok(w, "INSERT INTO Genre(Name) VALUES ('zz')");
  assert_int_equal(one_int(db, "SELECT count(*) FROM Genre"), 29);
  sqlite3_close(w); /* tabletalk still reads: the -wal stays */
  tt_db_close(db);
  assert_int_equal(sqlite3_open(path, &w), SQLITE_OK); /* the last writer cleans up */
  exec_ok(w, "SELECT count(*) FROM Genre");
  sqlite3_close(w);
  /* a -shm left behind without a -wal: still nothing is created */
  assert_false(tt_file_exists(wal));
  FILE *f = fopen(shm, "wb");
  assert_non_null(f);
  fclose(f);
  db = tt_db_open(path, NULL, &err);
  assert_non_null(db);
  assert_int_equal(one_int(db, "SELECT count(*) FROM Genre"), 29);
  tt_db_close(db);
  assert_false(tt_file_exists(wal));
  unlink(shm);
  free(wal);
  free(shm);
  free(path);
}

/* Names that are not UTF-8 (a file, a table, a column) are shown as \xHH
 * and stay queryable under that name. */
static void test_names_not_utf8(void **state) {
  (void)state;
  char *path = tt_xasprintf("%s/caf\xE9.sqlite", g_dir);
  sqlite3 *w;
  assert_int_equal(sqlite3_open(path, &w), SQLITE_OK);
  exec_ok(w, "CREATE TABLE \"t\xE9\"(\"c\xE9\" INTEGER, ok TEXT); INSERT INTO \"t\xE9\" VALUES (7, 'x');");
  sqlite3_close(w);
  tt_error err;
  tt_db *db = tt_db_open(path, NULL, &err);
  assert_non_null(db);
  tt_catalog *cat = tt_db_catalog_load(db, &err);
  assert_non_null(cat);
  assert_string_equal(cat->tables[0].name, "t\\xE9");
  assert_string_equal(cat->tables[0].raw_name, "t\xE9");
  assert_string_equal(cat->tables[0].cols[0].name, "c\\xE9");
  assert_int_equal(cat->tables[0].row_count, 1);
  assert_non_null(cat->tables[0].sample);
  tt_catalog_free(cat);
  tt_db_close(db);
  /* a fresh handle (no catalog read): the shown names still work */
  db = tt_db_open(path, NULL, &err);
  tt_result *r = q(db, "SELECT \"c\\xE9\" FROM \"t\\xE9\" WHERE ok = 'x'", &err);
  if (!r) fprintf(stderr, "%s\n", err.message);
  assert_non_null(r);
  assert_int_equal(tt_result_cell(r, 0, 0)->u.i, 7);
  assert_string_equal(r->names[0], "c\\xE9"); /* the result's column, shown */
  tt_result_free(r);
  /* a name shown so in a string is data, not a name */
  r = q(db, "SELECT 'c\\xE9' AS s", &err);
  assert_string_equal(tt_result_cell(r, 0, 0)->u.s, "c\\xE9");
  tt_result_free(r);
  tt_db_close(db);
  unlink(path);
  free(path);
}

/* FTS5, FTS4 and R-tree tables are read like any other (their modules'
 * own statements pass the guard), their auxiliary functions run, and
 * every write to them, or to their shadow tables, is still refused. */
static void test_fts_and_rtree(void **state) {
  (void)state;
  char *path = tt_xasprintf("%s/fts.sqlite", g_dir);
  sqlite3 *w;
  assert_int_equal(sqlite3_open(path, &w), SQLITE_OK);
  exec_ok(w, "CREATE VIRTUAL TABLE docs USING fts5(title, body);"
             "INSERT INTO docs VALUES ('hello world', 'the quick brown fox'), ('other', 'lazy dog');"
             "CREATE VIRTUAL TABLE f4 USING fts4(content); INSERT INTO f4 VALUES ('alpha beta gamma');"
             "CREATE VIRTUAL TABLE rt USING rtree(id, minx, maxx, miny, maxy);"
             "INSERT INTO rt VALUES (1, 0, 10, 0, 10);");
  sqlite3_close(w);
  char *before = tu_sha256(path);
  tt_error err;
  tt_db *db = tt_db_open(path, NULL, &err);
  static const char *const reads[] = {
      "SELECT title FROM docs WHERE docs MATCH 'quick'",
      "SELECT highlight(docs, 1, '[', ']'), snippet(docs, 1, '[', ']', '...', 4), bm25(docs) "
      "FROM docs WHERE docs MATCH 'fox'",
      "SELECT offsets(f4), matchinfo(f4), snippet(f4) FROM f4 WHERE f4 MATCH 'beta'",
      "SELECT id FROM rt WHERE minx < 5 AND maxy > 1",
  };
  for (size_t i = 0; i < sizeof reads / sizeof reads[0]; i++) {
    tt_result *r = q(db, reads[i], &err);
    if (!r) fprintf(stderr, "%s: %s\n", reads[i], err.message);
    assert_non_null(r);
    assert_int_equal(r->nrows, 1);
    tt_result_free(r);
  }
  static const char *const writes[] = {
      "INSERT INTO docs VALUES ('a', 'b')",
      "INSERT INTO docs(docs) VALUES ('optimize')",
      "DELETE FROM docs_data",
      "INSERT INTO rt VALUES (2, 0, 1, 0, 1)",
      "INSERT INTO rt_node VALUES (9, x'00')",
      "UPDATE f4_content SET c0content = 'x'",
      "PRAGMA data_version",
      "PRAGMA main.page_size",
  };
  for (size_t i = 0; i < sizeof writes / sizeof writes[0]; i++) {
    tt_result *r = q(db, writes[i], &err);
    if (r || err.kind != TT_ERR_REFUSED) fprintf(stderr, "%s: %s\n", writes[i], err.message);
    assert_null(r);
    assert_int_equal(err.kind, TT_ERR_REFUSED);
  }
  tt_catalog *cat = tt_db_catalog_load(db, &err);
  const tt_table_info *docs = tt_catalog_find(cat, "docs"), *rt = tt_catalog_find(cat, "rt");
  assert_int_equal(docs->ncols, 2); /* the cards show their columns */
  assert_string_equal(docs->cols[1].name, "body");
  assert_int_equal(rt->ncols, 5);
  tt_catalog_free(cat);
  tt_db_close(db);
  char *after = tu_sha256(path);
  assert_string_equal(before, after);
  free(before);
  free(after);
  free(path);
}

/* A hot journal left by a writer that died mid-transaction: named, with
 * what to do, not "attempt to write a readonly database". */
static void test_hot_journal(void **state) {
  (void)state;
  char *path = tt_xasprintf("%s/hot.sqlite", g_dir), *journal = tt_xasprintf("%s-journal", path);
  tu_copy_file(g_db, path);
  pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) { /* the writer: pages spill to the file, then it dies */
    sqlite3 *w;
    if (sqlite3_open(path, &w) != SQLITE_OK) _exit(1);
    sqlite3_exec(w, "PRAGMA cache_size=1; BEGIN; UPDATE Track SET Name = Name || 'x';", NULL, NULL,
                 NULL);
    _exit(0);
  }
  int st;
  waitpid(pid, &st, 0);
  assert_true(tt_file_exists(journal));
  tt_db_opts o = tt_db_default_opts();
  o.timeout_s = 0.3;
  tt_error err;
  tt_db *db = tt_db_open(path, &o, &err);
  assert_null(db);
  assert_int_equal(err.kind, TT_ERR_IO);
  assert_non_null(strstr(err.message, "has a hot journal"));
  assert_non_null(strstr(err.message, "PRAGMA quick_check"));
  assert_true(tt_file_exists(journal)); /* left for a writer to roll back */
  unlink(journal);
  free(journal);
  free(path);
}

/* A writer holding its lock for longer than the time limit: reported as
 * busy, after waiting; a shorter hold is waited out. */
static void test_busy_database(void **state) {
  (void)state;
  char *path = tt_xasprintf("%s/busy.sqlite", g_dir);
  tu_copy_file(g_db, path);
  tt_db_opts o = tt_db_default_opts();
  o.timeout_s = 0.3;
  tt_error err;
  tt_db *db = tt_db_open(path, &o, &err);
  assert_non_null(db);
  sqlite3 *w;
  assert_int_equal(sqlite3_open(path, &w), SQLITE_OK);
  exec_ok(w, "BEGIN EXCLUSIVE; INSERT INTO Genre(Name) VALUES ('x')");
  double t0 = tt_now_ms();
  assert_null(q(db, "SELECT count(*) FROM Genre", &err));
  double waited = tt_now_ms() - t0;
  assert_int_equal(err.kind, TT_ERR_BUSY);
  assert_non_null(strstr(err.message, "stayed locked by another program"));
  /* it waited out its limit first (a lower bound: a slow machine only
   * waits longer, so this cannot flake; no upper bound is asserted) */
  assert_true(waited >= 250);
  exec_ok(w, "COMMIT");
  assert_int_equal(one_int(db, "SELECT count(*) FROM Genre"), 26);
  sqlite3_close(w);
  tt_db_close(db);
  free(path);
}

static void expect_refusal(tt_db *db, const char *sql, tt_errkind kind, const char *words) {
  tt_error err;
  tt_result *r = q(db, sql, &err);
  if (r || err.kind != kind || !strstr(err.message, words)) {
    fprintf(stderr, "%s\n  -> kind %s, message: %s\n", sql, tt_errkind_name(err.kind),
            r ? "(ran)" : err.message);
    fail();
  }
}

static void test_refusal_reasons(void **state) {
  (void)state;
  tt_db *db = open_chinook();
  expect_refusal(db, "DELETE FROM Track", TT_ERR_REFUSED, "writes are not allowed: DELETE on Track");
  expect_refusal(db, "INSERT INTO Genre(Name) VALUES ('x')", TT_ERR_REFUSED, "INSERT into Genre");
  expect_refusal(db, "UPDATE Track SET Name = 'x'", TT_ERR_REFUSED, "UPDATE of Track");
  expect_refusal(db, "DROP TABLE Album", TT_ERR_REFUSED, "DROP TABLE Album");
  expect_refusal(db, "CREATE TABLE t(x)", TT_ERR_REFUSED, "CREATE TABLE t");
  expect_refusal(db, "ATTACH ':memory:' AS m", TT_ERR_REFUSED, "ATTACH");
  expect_refusal(db, "BEGIN", TT_ERR_REFUSED, "transactions are not allowed");
  expect_refusal(db, "PRAGMA table_info(Album)", TT_ERR_REFUSED, "pragma_table_info");
  expect_refusal(db, "SELECT * FROM pragma_compile_options", TT_ERR_REFUSED, "not allowed");
  /* the module is dropped from the connection altogether */
  expect_refusal(db, "SELECT count(*) FROM dbstat", TT_ERR_SQL, "no such table: dbstat");
  expect_refusal(db, "SELECT load_extension('x')", TT_ERR_REFUSED, "load_extension()");
  expect_refusal(db, "SELECT 1; SELECT 2", TT_ERR_REFUSED, "only one statement");
  expect_refusal(db, "EXPLAIN SELECT 1", TT_ERR_REFUSED, "EXPLAIN QUERY PLAN");
  expect_refusal(db, "VACUUM", TT_ERR_REFUSED, "writes are not allowed");
  expect_refusal(db, "  ;  ", TT_ERR_REFUSED, "no SQL statement");
  expect_refusal(db, "SELECT 'caf\xC3'", TT_ERR_REFUSED, "not valid UTF-8");
  expect_refusal(db, "SELEC 1", TT_ERR_SQL, "syntax error");
  expect_refusal(db, "SAVEPOINT a", TT_ERR_REFUSED, "savepoints are not allowed: SAVEPOINT a");
  expect_refusal(db, "ANALYZE", TT_ERR_REFUSED, "ANALYZE is not allowed");
  expect_refusal(db, "DELETE FROM sqlite_master", TT_ERR_REFUSED, "writes are not allowed");
  expect_refusal(db, "SELECT * FROM Trak", TT_ERR_SQL, "no such table: Trak");
  tt_error err;
  tt_result *r = tt_db_query(db, "SELECT 1\0 DROP", 14, &err);
  assert_null(r);
  assert_non_null(strstr(err.message, "NUL byte"));
  /* allowed shapes */
  const char *ok[] = {
      "EXPLAIN QUERY PLAN SELECT * FROM Track",
      "SELECT * FROM pragma_table_info('Track')",
      "SELECT * FROM json_each('[1,2]')",
      "; SELECT 1",
      "SELECT 1 /* unterminated",
      "WITH x AS (SELECT 1) SELECT * FROM x",
      "VALUES (1), (2)",
  };
  for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
    r = q(db, ok[i], &err);
    if (!r) fprintf(stderr, "%s: %s\n", ok[i], err.message);
    assert_non_null(r);
    tt_result_free(r);
  }
  /* the handle stays usable after refusals */
  r = q(db, "SELECT count(*) FROM Genre", &err);
  assert_int_equal(tt_result_cell(r, 0, 0)->u.i, 25);
  tt_result_free(r);
  tt_db_close(db);
}

static void test_time_and_memory_limits(void **state) {
  (void)state;
  tt_db *db = open_chinook();
  tt_db_opts o = *tt_db_get_opts(db);
  o.timeout_s = 0.2;
  tt_db_set_opts(db, &o);
  tt_error err;
  tt_result *r = q(db, "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c) "
                       "SELECT count(*) FROM c", &err);
  assert_null(r);
  assert_int_equal(err.kind, TT_ERR_TIMEOUT);
  o.timeout_s = 20;
  tt_db_set_opts(db, &o);
  /* sorting 3,503 blobs of 900 kB needs ~3 GB: the heap limit stops it */
  r = q(db, "SELECT count(*) FROM (SELECT randomblob(900000) AS b FROM Track ORDER BY b)", &err);
  assert_null(r);
  assert_int_equal(err.kind, TT_ERR_LIMIT);
  r = q(db, "SELECT printf('%.*c', 2000000000, 'x')", &err);
  assert_null(r);
  assert_int_equal(err.kind, TT_ERR_LIMIT);
  assert_non_null(strstr(err.message, "printf"));
  r = q(db, "SELECT zeroblob(2000000)", &err);
  assert_null(r);
  assert_int_equal(err.kind, TT_ERR_LIMIT);
  /* many cheap-looking conversions that each work long: refused as a whole */
  r = q(db, "SELECT printf(replace(hex(zeroblob(1000)),'00','%.900000g'), 1.5)", &err);
  assert_null(r);
  assert_int_equal(err.kind, TT_ERR_LIMIT);
  tt_db_close(db);
}

/* ---- a cursor's engine time, read from a signal handler ----------------- */

static const tt_cursor *g_alarm_cursor;
static volatile sig_atomic_t g_alarm_fired;
static double g_alarm_engine_ms;

static void on_alarm(int sig) {
  (void)sig;
  g_alarm_engine_ms = tt_cursor_engine_ms_now(g_alarm_cursor);
  g_alarm_fired = 1;
}

/* The watchdog of `tabletalk sql` exports is armed once and reads the
 * cursor's engine time from its signal handler: a step in progress counts
 * (an engine stuck inside one operation is seen), the caller's time between
 * rows does not (a slow reader is not the query's time). */
static void test_cursor_engine_time_in_a_handler(void **state) {
  (void)state;
  tt_db *db = open_chinook();
  tt_db_opts o = *tt_db_get_opts(db);
  o.timeout_s = 600; /* a failure bound only: the sanitizers on a loaded machine */
  tt_db_set_opts(db, &o);
  /* the whole count runs inside the first step, far longer than the 1 ms timer */
  const char *sql = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 1000000) "
                    "SELECT count(*) FROM c";
  tt_error err;
  tt_cursor *cur = tt_db_cursor_open(db, sql, strlen(sql), 0, 0, &err);
  assert_non_null(cur);
  double opened = tt_cursor_elapsed_ms(cur);
  assert_true(opened > 0);
  assert_true(tt_cursor_engine_ms_now(cur) == opened); /* the caller has control */
  g_alarm_cursor = cur;
  struct sigaction sa = {.sa_handler = on_alarm, .sa_flags = SA_RESTART};
  sigemptyset(&sa.sa_mask);
  struct sigaction old;
  sigaction(SIGALRM, &sa, &old);
  struct itimerval it = {.it_value = {.tv_usec = 1000}};
  setitimer(ITIMER_REAL, &it, NULL);
  const tt_value *row;
  int rc = tt_cursor_next(cur, &row, &err);
  if (rc != 1) fprintf(stderr, "the count failed: %s\n", err.message);
  assert_int_equal(rc, 1);
  assert_int_equal(row[0].u.i, 1000000);
  struct itimerval off = {0};
  setitimer(ITIMER_REAL, &off, NULL);
  sigaction(SIGALRM, &old, NULL);
  assert_true(g_alarm_fired); /* the step outlasted the 1 ms timer */
  double stepped = tt_cursor_elapsed_ms(cur);
  assert_true(g_alarm_engine_ms > opened);   /* the running step counted */
  assert_true(g_alarm_engine_ms <= stepped);
  assert_true(tt_cursor_engine_ms_now(cur) == stepped); /* control is back: nothing runs */
  assert_int_equal(tt_cursor_next(cur, &row, &err), 0);
  tt_cursor_close(cur);
  tt_db_close(db);
}

/* ---- checked printf against the built-in ------------------------------- */

static char *builtin_printf(sqlite3 *plain, const char *sql, int *type, size_t *len) {
  sqlite3_stmt *st;
  char *out = NULL;
  *type = -1;
  if (sqlite3_prepare_v2(plain, sql, -1, &st, NULL) != SQLITE_OK) return NULL;
  if (sqlite3_step(st) == SQLITE_ROW) {
    *type = sqlite3_column_type(st, 0);
    const unsigned char *t = sqlite3_column_text(st, 0);
    *len = t ? (size_t)sqlite3_column_bytes(st, 0) : 0;
    out = tt_xstrndup(t ? (const char *)t : "", *len);
  }
  sqlite3_finalize(st);
  return out;
}

static void random_format(tt_buf *sql, unsigned *seed) {
  static const char *conv = "diuxXofeEgGsqQwcpnz%r";
  static const char *flags = "-+ #0!,";
  static const char *args[] = {"42", "-7", "3.14159", "-0.5", "1e300", "'hello'", "'héllo wörld'",
                               "NULL", "x'41'", "'it''s'", "0", "9223372036854775807", "''",
                               "'12abc'"};
  tt_buf fmt = TT_BUF_INIT, list = TT_BUF_INIT;
  int nconv = 1 + rand_r(seed) % 3;
  for (int k = 0; k < nconv; k++) {
    if (rand_r(seed) % 2) tt_buf_puts(&fmt, "ab");
    tt_buf_putc(&fmt, '%');
    int nf = rand_r(seed) % 3;
    for (int f = 0; f < nf; f++) tt_buf_putc(&fmt, flags[rand_r(seed) % 7]);
    int w = rand_r(seed) % 4;
    if (w == 1) tt_buf_printf(&fmt, "%d", rand_r(seed) % 20);
    if (w == 2) {
      tt_buf_putc(&fmt, '*');
      tt_buf_printf(&list, ", %d", rand_r(seed) % 30 - 10);
    }
    int p = rand_r(seed) % 4;
    if (p == 1) tt_buf_printf(&fmt, ".%d", rand_r(seed) % 12);
    if (p == 2) {
      tt_buf_puts(&fmt, ".*");
      tt_buf_printf(&list, ", %d", rand_r(seed) % 16 - 3);
    }
    if (rand_r(seed) % 5 == 0) tt_buf_puts(&fmt, "ll");
    char c = conv[rand_r(seed) % strlen(conv)];
    tt_buf_putc(&fmt, c);
    if (c != '%' && c != 'n') tt_buf_printf(&list, ", %s", args[rand_r(seed) % (sizeof args / sizeof args[0])]);
  }
  if (rand_r(seed) % 4 == 0) tt_buf_puts(&fmt, "%"); /* lone % at the end */
  tt_buf_puts(sql, "SELECT printf(");
  tt_buf_put_sql_string(sql, tt_buf_cstr(&fmt));
  tt_buf_puts(sql, tt_buf_cstr(&list));
  tt_buf_puts(sql, ")");
  tt_buf_free(&fmt);
  tt_buf_free(&list);
}

static void test_printf_matches_builtin(void **state) {
  (void)state;
  tt_db *db = open_chinook();
  sqlite3 *plain;
  assert_int_equal(sqlite3_open(":memory:", &plain), SQLITE_OK);
  const char *fixed[] = {
      "SELECT printf('%d apples', 3)", "SELECT printf('%5.2f|%-8s|%08.3e', 3.14159, 'ab', 12345.678)",
      "SELECT printf('%,d', 1234567)", "SELECT printf('%!.20g', 0.1)", "SELECT printf('%q %Q %w', 'it''s', NULL, 'a\"b')",
      "SELECT printf('%c%c', 'héllo', 'x')", "SELECT printf('%.5c|%-6.2c|%6c', 'é', 'ab', 'z')",
      "SELECT printf('%s')", "SELECT printf(NULL)", "SELECT printf('')", "SELECT printf('100%%')",
      "SELECT printf('%5%')", "SELECT printf('%y and more')", "SELECT printf('%*d|%-*d', -6, 1, 4, 2)",
      "SELECT printf('%.*s', -2, 'abcdef')", "SELECT format('%x %X %o %p', 255, 255, 8, 255)",
      "SELECT printf('%#x %#o', 255, 8)", "SELECT printf('%d', 'not a number')", "SELECT printf('%.3s', 'héllo')",
      "SELECT printf('%!.3s', 'héllo')", "SELECT printf('%10.4f', -0.0)", "SELECT printf('%n%d', 5)",
      "SELECT printf('%c', NULL)", "SELECT printf('%c', '')",
  };
  int mismatches = 0;
  unsigned seed = 12345;
  for (int i = 0; i < 3000 + (int)(sizeof fixed / sizeof fixed[0]); i++) {
    tt_buf sql = TT_BUF_INIT;
    if (i < (int)(sizeof fixed / sizeof fixed[0])) tt_buf_puts(&sql, fixed[i]);
    else random_format(&sql, &seed);
    int want_type;
    size_t want_len = 0;
    char *want = builtin_printf(plain, tt_buf_cstr(&sql), &want_type, &want_len);
    tt_error err;
    tt_result *r = tt_db_query(db, sql.data, sql.len, &err);
    const tt_value *v = r ? tt_result_cell(r, 0, 0) : NULL;
    bool same = want && r &&
                ((want_type == SQLITE_NULL && v->type == TT_VAL_NULL) ||
                 (want_type == SQLITE_TEXT && v->type == TT_VAL_TEXT && v->len == want_len &&
                  memcmp(v->u.s, want, v->len) == 0));
    if (!same && mismatches++ < 20)
      fprintf(stderr, "%s\n  built-in: %s [%d]\n  checked:  %s\n", tt_buf_cstr(&sql),
              want ? want : "(error)", want_type,
              r ? (v->type == TT_VAL_NULL ? "NULL" : v->u.s) : err.message);
    free(want);
    tt_result_free(r);
    tt_buf_free(&sql);
  }
  sqlite3_close(plain);
  tt_db_close(db);
  assert_int_equal(mismatches, 0);
}

/* A random SQL value: short text over a small alphabet (so matches are
 * common), multi-byte text, a blob, a number or NULL. */
static void random_value(tt_buf *sql, unsigned *seed) {
  static const char *const parts[] = {"a", "b", "ab", "\xC3\xA9", "\xE2\x82\xAC", "1", "."};
  int kind = rand_r(seed) % 12;
  if (kind >= 10) { /* text that is not valid UTF-8: stray continuation and lead bytes */
    static const char *const bytes[] = {"80", "C3", "A9", "61", "62", "E2", "82", "AC", "FF"};
    tt_buf_puts(sql, "CAST(x'");
    for (int i = rand_r(seed) % 7; i > 0; i--) tt_buf_puts(sql, bytes[rand_r(seed) % 9]);
    tt_buf_puts(sql, "' AS TEXT)");
  } else if (kind == 0) {
    tt_buf_puts(sql, "NULL");
  } else if (kind == 1) {
    tt_buf_printf(sql, "%d", rand_r(seed) % 200 - 50);
  } else if (kind == 2) {
    tt_buf_puts(sql, "x'");
    for (int i = rand_r(seed) % 6; i > 0; i--) tt_buf_printf(sql, "%02X", (unsigned)(0x61 + rand_r(seed) % 3));
    tt_buf_putc(sql, '\'');
  } else {
    tt_buf_putc(sql, '\'');
    for (int i = rand_r(seed) % 8; i > 0; i--) tt_buf_puts(sql, parts[rand_r(seed) % 7]);
    tt_buf_putc(sql, '\'');
  }
}

static bool same_as_builtin(tt_db *db, sqlite3 *plain, const char *sql) {
  sqlite3_stmt *st;
  if (sqlite3_prepare_v2(plain, sql, -1, &st, NULL) != SQLITE_OK) return false;
  int rc = sqlite3_step(st);
  tt_error err;
  tt_result *r = tt_db_query(db, sql, strlen(sql), &err);
  bool same;
  if (rc != SQLITE_ROW) {
    same = r == NULL;
  } else if (!r) {
    same = false;
  } else {
    const tt_value *v = tt_result_cell(r, 0, 0);
    int type = sqlite3_column_type(st, 0);
    if (type == SQLITE_NULL) same = v->type == TT_VAL_NULL;
    else if (type == SQLITE_INTEGER) same = v->type == TT_VAL_INT && v->u.i == sqlite3_column_int64(st, 0);
    else same = v->type == TT_VAL_TEXT && v->len == (size_t)sqlite3_column_bytes(st, 0) &&
                memcmp(v->u.s, sqlite3_column_text(st, 0), v->len) == 0;
  }
  if (!same)
    fprintf(stderr, "%s\n  built-in: %s\n  checked:  %s\n", sql,
            rc == SQLITE_ROW ? (const char *)sqlite3_column_text(st, 0) : sqlite3_errmsg(plain),
            r ? (tt_result_cell(r, 0, 0)->type == TT_VAL_NULL ? "NULL" : tt_result_cell(r, 0, 0)->u.s)
              : err.message);
  tt_result_free(r);
  sqlite3_finalize(st);
  return same;
}

static void test_instr_replace_match_builtin(void **state) {
  (void)state;
  tt_db *db = open_chinook();
  sqlite3 *plain;
  assert_int_equal(sqlite3_open(":memory:", &plain), SQLITE_OK);
  unsigned seed = 777;
  int mismatches = 0;
  static const char *const fns[] = {"instr", "replace", "trim", "ltrim", "rtrim"};
  for (int i = 0; i < 10000; i++) {
    tt_buf sql = TT_BUF_INIT;
    const char *fn = fns[i % 5];
    tt_buf_printf(&sql, "SELECT %s(", fn);
    random_value(&sql, &seed);
    tt_buf_puts(&sql, ", ");
    random_value(&sql, &seed);
    if (strcmp(fn, "replace") == 0) {
      tt_buf_puts(&sql, ", ");
      random_value(&sql, &seed);
    }
    tt_buf_puts(&sql, ")");
    if (!same_as_builtin(db, plain, tt_buf_cstr(&sql))) mismatches++;
    tt_buf_free(&sql);
  }
  /* the case that used to run for seconds inside one opcode */
  tt_error err;
  double t0 = tt_now_ms();
  tt_result *r = q(db, "SELECT instr(printf('%.999999c','a'), printf('%.499999c','a') || 'b'), "
                       "length(replace(printf('%.999999c','a'), printf('%.499999c','a') || 'b', 'x')), "
                       "length(ltrim(printf('%.900000c','a'), printf('%.80000c','b') || 'a')), "
                       "instr(printf('%.40000c', x'80'), printf('%.20000c', x'80'))", &err);
  assert_non_null(r);
  assert_int_equal(tt_result_cell(r, 0, 0)->u.i, 0);
  assert_int_equal(tt_result_cell(r, 0, 1)->u.i, 999999);
  assert_int_equal(tt_result_cell(r, 0, 2)->u.i, 0);
  assert_int_equal(tt_result_cell(r, 0, 3)->u.i, 1);
  fprintf(stderr, "linear instr/replace/ltrim on 1 MB: %.0f ms\n", tt_now_ms() - t0);
  tt_result_free(r);
  sqlite3_close(plain);
  tt_db_close(db);
  assert_int_equal(mismatches, 0);
}

/* Bounded output never loses a row: a row whose cells alone pass
 * max_bytes is kept with its long cells cut at the bound, marked and
 * counted, in a whole result and through a cursor; the row after it is
 * left out as before (a cut, more rows exist). On a real file holding a
 * 1,000,000-byte cell. */
static void test_long_cell_cut_not_lost(void **state) {
  (void)state;
  char *path = tt_xasprintf("%s/bigcell.sqlite", g_dir);
  tu_exec_sql(path, "CREATE TABLE t(id INTEGER, note TEXT, tag TEXT, b BLOB);"
                    "INSERT INTO t VALUES (1, replace(hex(zeroblob(500000)), '00', 'ab'), 'short', "
                    "zeroblob(5000)), (2, 'second', 'row', NULL);"
                    "CREATE TABLE u(note TEXT);"
                    "INSERT INTO u VALUES (replace(hex(zeroblob(500000)), '00', 'é'));");
  tt_error err;
  tt_db *db = tt_db_open(path, NULL, &err);
  assert_non_null(db);
  /* the default cap (1,000,000 bytes): the row of the issue, id and cell */
  tt_result *r = q(db, "SELECT id, note FROM t WHERE id = 1", &err);
  assert_non_null(r);
  assert_int_equal(r->nrows, 1);
  assert_int_equal(r->cells_cut, 1);
  const tt_value *note = tt_result_cell(r, 0, 1);
  assert_int_equal(note->len, 1000000 - 8);
  assert_int_equal(note->cut, 8);
  tt_buf text = TT_BUF_INIT;
  tt_value_to_text(&text, note);
  assert_int_equal(text.len, note->len + strlen("…[cut 8 bytes]"));
  assert_memory_equal(text.data + note->len, "…[cut 8 bytes]", strlen("…[cut 8 bytes]"));
  tt_buf_free(&text);
  tt_result_free(r);

  tt_db_opts o = tt_db_default_opts();
  o.max_bytes = 1000;
  tt_db_set_opts(db, &o);
  r = q(db, "SELECT id, note, tag, b FROM t", &err);
  assert_non_null(r);
  assert_int_equal(r->nrows, 1); /* the row is there; the second would pass the cap */
  assert_true(r->truncated);
  assert_int_equal(r->truncated_by, TT_TRUNC_BYTES);
  assert_int_equal(r->cells_cut, 2);
  assert_true(r->bytes <= 1000);
  assert_int_equal(tt_result_cell(r, 0, 0)->u.i, 1);
  /* 992 bytes after the integer: the short tag whole, the long text and
   * blob the same room each */
  note = tt_result_cell(r, 0, 1);
  const tt_value *tag = tt_result_cell(r, 0, 2), *blob = tt_result_cell(r, 0, 3);
  assert_int_equal(tag->len, 5);
  assert_int_equal(tag->cut, 0);
  assert_int_equal(note->len, 493);
  assert_int_equal(note->cut, 1000000 - 493);
  assert_int_equal(blob->len, 493);
  assert_int_equal(blob->cut, 5000 - 493);
  assert_int_equal(strlen(note->u.s), 493); /* NUL-terminated where it was cut */
  text = (tt_buf)TT_BUF_INIT;
  tt_value_to_text(&text, note);
  assert_non_null(strstr(tt_buf_cstr(&text), "aba…[cut 999,507 bytes]"));
  tt_buf_reset(&text);
  tt_value_to_text(&text, blob);
  assert_string_equal(tt_buf_cstr(&text), "<blob 5000 bytes>"); /* the whole blob's size */
  tt_buf_reset(&text);
  tt_value_to_export_text(&text, blob);
  assert_non_null(strstr(tt_buf_cstr(&text), "0000…[cut 4,507 bytes]"));
  tt_buf_free(&text);
  json_t *j = tt_result_to_json(r, 0, false);
  assert_int_equal(json_integer_value(json_object_get(j, "cells_cut")), 2);
  assert_int_equal(json_array_size(json_object_get(j, "rows")), 1);
  const char *js = json_string_value(json_array_get(json_array_get(json_object_get(j, "rows"), 0), 1));
  assert_int_equal(strlen(js), 493 + strlen("…[cut 999,507 bytes]"));
  json_decref(j);
  tt_result_free(r);

  /* text is never cut inside a character */
  o.max_bytes = 1001;
  tt_db_set_opts(db, &o);
  r = q(db, "SELECT note FROM u", &err);
  assert_non_null(r);
  assert_int_equal(r->nrows, 1);
  note = tt_result_cell(r, 0, 0);
  assert_int_equal(note->len, 1000);
  assert_true(tt_utf8_valid(note->u.s, note->len, NULL));
  tt_result_free(r);

  /* a cursor (the exports) keeps the row too, cut the same way */
  tt_cursor *c = tt_db_cursor_open(db, "SELECT id, note, tag, b FROM t", 30, 0, 1000, &err);
  assert_non_null(c);
  const tt_value *row;
  assert_int_equal(tt_cursor_next(c, &row, &err), 1);
  assert_int_equal(row[0].u.i, 1);
  assert_int_equal(row[1].len, 493);
  assert_int_equal(row[1].cut, 1000000 - 493);
  assert_int_equal(row[2].len, 5);
  assert_int_equal(tt_cursor_cells_cut(c), 2);
  assert_int_equal(tt_cursor_next(c, &row, &err), 0);
  assert_int_equal(tt_cursor_truncated(c), TT_TRUNC_BYTES);
  tt_cursor_close(c);
  tt_db_close(db);
  free(path);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_open_errors),
      cmocka_unit_test(test_wal_database_creates_nothing),
      cmocka_unit_test(test_typed_values),
      cmocka_unit_test(test_caps),
      cmocka_unit_test(test_count_rows),
      cmocka_unit_test(test_snapshot_versions),
      cmocka_unit_test(test_replaced_file_is_followed),
      cmocka_unit_test(test_quiet_wal_file),
      cmocka_unit_test(test_busy_database),
      cmocka_unit_test(test_names_not_utf8),
      cmocka_unit_test(test_fts_and_rtree),
      cmocka_unit_test(test_hot_journal),
      cmocka_unit_test(test_refusal_reasons),
      cmocka_unit_test(test_time_and_memory_limits),
      cmocka_unit_test(test_cursor_engine_time_in_a_handler),
      cmocka_unit_test(test_printf_matches_builtin),
      cmocka_unit_test(test_instr_replace_match_builtin),
      cmocka_unit_test(test_query_opts_leave_the_handle_alone),
      cmocka_unit_test(test_long_cell_cut_not_lost),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
