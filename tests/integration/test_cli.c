/* test_cli.c — the tabletalk command line as a user meets it: help and
 * version, usage errors (exit 2), missing or bad files (exit 1, nothing
 * created), a password never printed whatever its form, refusals (exit
 * 3), limits (exit 4), output formats, SQL from
 * standard input, the schema command on chinook, and the chart command
 * (files, JSON, the preview on a pseudo-terminal, its errors). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sqlite3.h>

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

/* Runs tabletalk with up to 12 arguments (NULL-terminated list). */
static void tt(tu_run *r, const char *in, ...) {
  char *argv[16] = {(char *)tu_bin()};
  va_list ap;
  va_start(ap, in);
  int n = 1;
  const char *a;
  while (n < 15 && (a = va_arg(ap, const char *))) argv[n++] = (char *)a;
  va_end(ap);
  tu_run_cmd(argv, in, in ? strlen(in) : 0, 300000, r); /* a failure bound only */
}

/* The sanitizer build: ASan's shadow memory makes memory figures meaningless. */
static bool sanitized(void) {
  const char *s = getenv("TT_SANITIZED");
  return s && *s == '1';
}

static bool has(const tt_buf *b, const char *s) { return strstr(tt_buf_cstr((tt_buf *)b), s) != NULL; }

static void test_help_and_version(void **state) {
  (void)state;
  tu_run r;
  tt(&r, NULL, "--help", NULL);
  assert_int_equal(r.status, 0);
  assert_true(has(&r.out, "Usage: tabletalk"));
  assert_true(has(&r.out, "sql"));
  assert_true(has(&r.out, "schema"));
  tu_run_free(&r);
  tt(&r, NULL, "sql", "--help", NULL);
  assert_int_equal(r.status, 0);
  assert_true(has(&r.out, "--max-rows"));
  tu_run_free(&r);
  tt(&r, NULL, "schema", "--help", NULL);
  assert_int_equal(r.status, 0);
  assert_true(has(&r.out, "--json"));
  tu_run_free(&r);
  tt(&r, NULL, "--version", NULL);
  assert_int_equal(r.status, 0);
  assert_true(has(&r.out, "tabletalk "));
  assert_true(has(&r.out, "SQLite"));
  tu_run_free(&r);
}

static void test_usage_errors_exit_2(void **state) {
  (void)state;
  const char *cases[][6] = {
      {"nosuchcommand", NULL},
      {"--bogus", NULL},
      {"sql", NULL},
      {"sql", "x.db", NULL},
      {"sql", "x.db", "SELECT 1", "extra", NULL},
      {"sql", "--format", "xml", "x.db", "SELECT 1", NULL},
      {"sql", "--timeout", "soon", "x.db", "SELECT 1", NULL},
      {"sql", "--max-rows", "0", "x.db", "SELECT 1", NULL},
      {"sql", "--max-rows", NULL},
      {"schema", NULL},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    tu_run r;
    tt(&r, NULL, cases[i][0], cases[i][1], cases[i][2], cases[i][3], cases[i][4], NULL);
    if (r.status != 2) fprintf(stderr, "case %zu: exit %d\n", i, r.status);
    assert_int_equal(r.status, 2);
    assert_true(r.err.len > 0); /* says what was wrong */
    tu_run_free(&r);
  }
  tu_run r;
  tt(&r, NULL, NULL);
  assert_int_equal(r.status, 2);
  tu_run_free(&r);
}

static void test_missing_and_bad_files(void **state) {
  (void)state;
  char *missing = tt_xasprintf("%s/missing.sqlite", g_dir);
  tu_run r;
  tt(&r, NULL, "sql", missing, "SELECT 1", NULL);
  assert_int_equal(r.status, 1);
  assert_true(has(&r.err, "no such file"));
  assert_int_equal(access(missing, F_OK), -1); /* never created */
  tu_run_free(&r);

  tt(&r, NULL, "sql", missing, "SELECT 1", "--format", "json", NULL);
  assert_int_equal(r.status, 1);
  assert_true(has(&r.out, "\"kind\":\"io\""));
  tu_run_free(&r);

  tt(&r, NULL, "sql", g_dir, "SELECT 1", NULL);
  assert_int_equal(r.status, 1);
  assert_true(has(&r.err, "is a directory"));
  tu_run_free(&r);

  char *text = tt_xasprintf("%s/notes.txt", g_dir);
  FILE *f = fopen(text, "w");
  fputs("these are not the pages you are looking for, SQLite\n", f);
  for (int i = 0; i < 200; i++) fputs("padding padding padding padding\n", f);
  fclose(f);
  /* a text file named .txt is read as CSV: its short rows with NULLs */
  tt(&r, NULL, "sql", text, "SELECT count(*), count(SQLite) FROM notes", "--format", "csv", NULL);
  assert_int_equal(r.status, 0);
  assert_true(has(&r.out, "200,0"));
  tu_run_free(&r);
  /* the same text named .db is no SQLite file: the error says how a CSV
   * file is named */
  char *db = tt_xasprintf("%s/notes.db", g_dir);
  assert_int_equal(rename(text, db), 0);
  tt(&r, NULL, "sql", db, "SELECT 1", NULL);
  assert_int_equal(r.status, 1);
  assert_true(has(&r.err, "not a SQLite database"));
  assert_true(has(&r.err, "ends in .csv or .tsv"));
  tu_run_free(&r);
  free(db);
  tt(&r, NULL, "schema", missing, NULL);
  assert_int_equal(r.status, 1);
  assert_int_equal(access(missing, F_OK), -1);
  tu_run_free(&r);
  free(text);
  free(missing);
}

/* A password never reaches the terminal, in any form, whatever the
 * command prints: a server that is not there (port 1 of this machine
 * refuses at once) or a URI libpq cannot parse, through sql (table and
 * JSON) and schema, and the password libpq takes from PGPASSWORD. */
static void test_password_never_printed(void **state) {
  (void)state;
  static const struct {
    const char *uri, *secret;
  } cases[] = {
      {"postgresql://reader:R3ader-Pw-Secret@[::1/chinook", "R3ader-Pw-Secret"},
      {"postgresql://reader:pa%zz-Pct-Secret@127.0.0.1:1/db", "Pct-Secret"},
      {"postgresql://reader@127.0.0.1:1/db?pass%77ord=Key-Spelling-Secret", "Key-Spelling-Secret"},
      {"postgresql://Same-Secret:Same-Secret@127.0.0.1:1/Same-Secret", "Same-Secret"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    tu_run r;
    tt(&r, NULL, "sql", cases[i].uri, "SELECT 1", NULL);
    assert_int_equal(r.status, 1);
    assert_true(has(&r.err, "cannot connect to postgresql://"));
    assert_false(has(&r.err, cases[i].secret));
    assert_false(has(&r.out, cases[i].secret));
    tu_run_free(&r);
    tt(&r, NULL, "sql", cases[i].uri, "SELECT 1", "--json", NULL);
    assert_int_equal(r.status, 1);
    assert_true(has(&r.out, "\"kind\":\"io\""));
    assert_false(has(&r.out, cases[i].secret));
    assert_false(has(&r.err, cases[i].secret));
    tu_run_free(&r);
    tt(&r, NULL, "schema", "--db-url", cases[i].uri, NULL);
    assert_int_equal(r.status, 1);
    assert_false(has(&r.err, cases[i].secret));
    tu_run_free(&r);
  }
  setenv("PGPASSWORD", "Env-Pw-Secret", 1);
  tu_run r;
  tt(&r, NULL, "sql", "postgresql://Env-Pw-Secret@127.0.0.1:1/db", "SELECT 1", NULL);
  unsetenv("PGPASSWORD");
  assert_int_equal(r.status, 1);
  assert_true(has(&r.err, "cannot connect to postgresql://***@127.0.0.1:1/db"));
  assert_false(has(&r.err, "Env-Pw-Secret"));
  tu_run_free(&r);
}

static void test_odd_paths_and_symlinks(void **state) {
  (void)state;
  char *odd = tt_xasprintf("%s/my db?#%%.sqlite", g_dir);
  char *link = tt_xasprintf("%s/link.sqlite", g_dir);
  tu_copy_file(g_db, odd);
  assert_int_equal(symlink(g_db, link), 0);
  tu_run r;
  tt(&r, NULL, "sql", odd, "SELECT count(*) FROM Genre", "--format", "tsv", NULL);
  assert_int_equal(r.status, 0);
  assert_true(has(&r.out, "25"));
  tu_run_free(&r);
  tt(&r, NULL, "sql", link, "SELECT count(*) FROM Genre", "--format", "tsv", NULL);
  assert_int_equal(r.status, 0);
  assert_true(has(&r.out, "25"));
  tu_run_free(&r);
  free(odd);
  free(link);
}

static void test_exit_codes_for_outcomes(void **state) {
  (void)state;
  tu_run r;
  tt(&r, NULL, "sql", g_db, "DELETE FROM Track", NULL);
  assert_int_equal(r.status, 3);
  assert_true(has(&r.err, "writes are not allowed: DELETE on Track"));
  tu_run_free(&r);

  tt(&r, NULL, "sql", g_db, "SELECT * FROM Trak", NULL);
  assert_int_equal(r.status, 1);
  assert_true(has(&r.err, "no such table: Trak"));
  tu_run_free(&r);

  tt(&r, NULL, "sql", g_db, "--timeout", "0.3",
     "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c) SELECT count(*) FROM c", NULL);
  assert_int_equal(r.status, 4);
  assert_true(has(&r.err, "time limit"));
  tu_run_free(&r);

  tt(&r, NULL, "sql", g_db, "SELECT printf('%.*c', 2000000000, 'x')", NULL);
  assert_int_equal(r.status, 4);
  tu_run_free(&r);
}

/* A row whose cell alone is over --max-bytes is shown, not lost: the
 * table, JSON, CSV and TSV each show the row with the cell cut at the
 * bound and marked "…[cut N bytes]", and say how many cells were cut. On a
 * real file holding a 1,000,000-byte cell. */
static void test_long_cell_is_cut_not_lost(void **state) {
  (void)state;
  char *path = tt_xasprintf("%s/bigcell.sqlite", g_dir);
  tu_exec_sql(path, "CREATE TABLE t(id INTEGER, note TEXT);"
                    "INSERT INTO t VALUES (7, replace(hex(zeroblob(500000)), '00', 'ab'));");
  const char *mark = "…[cut 999,008 bytes]"; /* 1000 bytes: the id's 8, then 992 of text */
  tu_run r;
  /* the table: its own default cap of 1,000,000 bytes is passed by 8 */
  tt(&r, NULL, "sql", path, "SELECT id, note FROM t", NULL);
  assert_int_equal(r.status, 0);
  assert_true(has(&r.out, "1 row (1 cell cut to fit --max-bytes), "));
  assert_true(has(&r.out, "\n  7 | abab"));
  tu_run_free(&r);
  tt(&r, NULL, "sql", path, "SELECT id, note FROM t", "--max-bytes", "1000", NULL);
  assert_int_equal(r.status, 0);
  assert_true(has(&r.out, "1 row (1 cell cut to fit --max-bytes), "));
  /* the table's own display budget (1,000 columns) shows 978 bytes of it:
   * the mark counts every byte not shown */
  assert_true(has(&r.out, "ab…[cut 999,022 bytes]\n"));
  tu_run_free(&r);

  tt(&r, NULL, "sql", path, "SELECT id, note FROM t", "--max-bytes", "1000", "--json", NULL);
  assert_int_equal(r.status, 0);
  json_t *doc = json_loads(tt_buf_cstr(&r.out), 0, NULL);
  assert_non_null(doc);
  assert_int_equal(json_integer_value(json_object_get(doc, "row_count")), 1);
  assert_int_equal(json_integer_value(json_object_get(doc, "cells_cut")), 1);
  assert_false(json_is_true(json_object_get(doc, "truncated"))); /* no row left out */
  json_t *row = json_array_get(json_object_get(doc, "rows"), 0);
  assert_int_equal(json_integer_value(json_array_get(row, 0)), 7);
  const char *cell = json_string_value(json_array_get(row, 1));
  assert_int_equal(strlen(cell), 992 + strlen(mark));
  assert_string_equal(cell + 992, mark);
  json_decref(doc);
  assert_true(has(&r.err, "note: 1 cell cut to fit --max-bytes"));
  tu_run_free(&r);

  for (int csv = 0; csv < 2; csv++) {
    tt(&r, NULL, "sql", path, "SELECT id, note FROM t", "--max-bytes", "1000", "--format",
       csv ? "csv" : "tsv", NULL);
    assert_int_equal(r.status, 0);
    const char *out = tt_buf_cstr(&r.out);
    const char *nl = csv ? "\r\n" : "\n";
    char *head = tt_xasprintf("id%snote%s7%s", csv ? "," : "\t", nl, csv ? "," : "\t");
    assert_memory_equal(out, head, strlen(head));
    /* in CSV the field is quoted: the mark holds a comma */
    const char *field = out + strlen(head) + (csv ? 1 : 0);
    if (csv) assert_int_equal(field[-1], '"');
    assert_int_equal(strlen(field), 992 + strlen(mark) + (csv ? 1 : 0) + strlen(nl));
    assert_memory_equal(field + 992, mark, strlen(mark));
    assert_true(has(&r.err, "note: 1 cell cut to fit --max-bytes"));
    free(head);
    tu_run_free(&r);
  }
  free(path);
}

static void test_formats(void **state) {
  (void)state;
  const char *q = "SELECT GenreId, Name FROM Genre WHERE GenreId <= 3 ORDER BY 1";
  tu_run r;
  tt(&r, NULL, "sql", g_db, q, NULL);
  assert_int_equal(r.status, 0);
  assert_true(has(&r.out, " GenreId | Name"));
  assert_true(has(&r.out, "Rock"));
  assert_true(has(&r.out, "3 rows, "));
  assert_true(has(&r.out, " ms\n"));
  tu_run_free(&r);

  tt(&r, NULL, "sql", g_db, q, "--format", "tsv", NULL);
  assert_string_equal(tt_buf_cstr(&r.out), "GenreId\tName\n1\tRock\n2\tJazz\n3\tMetal\n");
  tu_run_free(&r);

  tt(&r, NULL, "sql", g_db, "SELECT 'a,b' AS x, 'say \"hi\"' AS y, NULL AS z", "--format", "csv", NULL);
  assert_string_equal(tt_buf_cstr(&r.out), "x,y,z\r\n\"a,b\",\"say \"\"hi\"\"\",\r\n");
  tu_run_free(&r);

  tt(&r, NULL, "sql", g_db, "SELECT 1 AS i, 2.5 AS r, 'x' AS t, NULL AS n, x'00FF10' AS b", "--json", NULL);
  assert_int_equal(r.status, 0);
  json_t *doc = json_loads(tt_buf_cstr(&r.out), 0, NULL);
  assert_non_null(doc);
  json_t *row = json_array_get(json_object_get(doc, "rows"), 0);
  assert_int_equal(json_integer_value(json_array_get(row, 0)), 1);
  assert_true(json_real_value(json_array_get(row, 1)) == 2.5);
  assert_string_equal(json_string_value(json_array_get(row, 2)), "x");
  assert_true(json_is_null(json_array_get(row, 3)));
  assert_string_equal(json_string_value(json_array_get(row, 4)), "\\x00ff10"); /* hex, as bytea */
  assert_int_equal(json_integer_value(json_object_get(doc, "row_count")), 1);
  assert_true(json_is_false(json_object_get(doc, "truncated")));
  assert_true(json_is_number(json_object_get(doc, "elapsed_ms")));
  assert_string_equal(json_string_value(json_array_get(json_object_get(doc, "columns"), 4)), "b");
  json_decref(doc);
  tu_run_free(&r);
}

static void test_caps(void **state) {
  (void)state;
  tu_run r;
  tt(&r, NULL, "sql", g_db, "SELECT TrackId FROM Track", "--max-rows", "10", "--json", NULL);
  json_t *doc = json_loads(tt_buf_cstr(&r.out), 0, NULL);
  assert_int_equal(json_integer_value(json_object_get(doc, "row_count")), 10);
  assert_true(json_is_true(json_object_get(doc, "truncated")));
  json_decref(doc);
  tu_run_free(&r);

  tt(&r, NULL, "sql", g_db, "SELECT TrackId FROM Track LIMIT 10", "--max-rows", "10", "--json", NULL);
  doc = json_loads(tt_buf_cstr(&r.out), 0, NULL);
  assert_true(json_is_false(json_object_get(doc, "truncated"))); /* exactly at the cap */
  json_decref(doc);
  tu_run_free(&r);

  tt(&r, NULL, "sql", g_db, "SELECT Name FROM Track", "--max-bytes", "100", NULL);
  assert_int_equal(r.status, 0);
  assert_true(has(&r.out, "cut at --max-bytes"));
  tu_run_free(&r);

  tt(&r, NULL, "sql", g_db, "SELECT TrackId FROM Track", NULL); /* default 200 */
  assert_true(has(&r.out, "200 rows (cut at --max-rows"));
  tu_run_free(&r);
}

static void test_sql_from_stdin(void **state) {
  (void)state;
  tu_run r;
  tt(&r, "SELECT count(*) AS n FROM Artist;\n", "sql", g_db, "-", "--format", "tsv", NULL);
  assert_int_equal(r.status, 0);
  assert_string_equal(tt_buf_cstr(&r.out), "n\n275\n");
  tu_run_free(&r);

  char *argv[] = {(char *)tu_bin(), "sql", g_db, "-", "--json", NULL};
  static const char nul_sql[] = "SELECT 'a\0b'";
  tu_run_cmd(argv, nul_sql, sizeof nul_sql - 1, 20000, &r);
  assert_int_equal(r.status, 3);
  assert_true(has(&r.out, "NUL byte"));
  tu_run_free(&r);

  /* empty SQL is a usage error, not a refusal */
  tt(&r, "-- only a comment\n", "sql", g_db, "-", NULL);
  assert_int_equal(r.status, 2);
  assert_true(has(&r.err, "the SQL is empty"));
  tu_run_free(&r);
  tt(&r, NULL, "sql", g_db, "  ;  ", "--json", NULL);
  assert_int_equal(r.status, 2);
  assert_true(has(&r.out, "\"kind\":\"usage\""));
  tu_run_free(&r);
}

/* A file with one table t of n rows: i, a label, a 3-byte blob. */
static char *make_rows_db(const char *dir, const char *name, int n) {
  char *path = tt_xasprintf("%s/%s", dir, name);
  sqlite3 *h;
  assert_int_equal(sqlite3_open(path, &h), SQLITE_OK);
  char *sql = tt_xasprintf(
      "CREATE TABLE t(i INTEGER, label TEXT, b BLOB);"
      "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < %d) "
      "INSERT INTO t SELECT i, 'row ' || i, x'0a0bff' FROM n;", n);
  assert_int_equal(sqlite3_exec(h, sql, NULL, NULL, NULL), SQLITE_OK);
  free(sql);
  sqlite3_close(h);
  return path;
}

static size_t count_lines(const tt_buf *b) {
  size_t n = 0;
  for (size_t i = 0; i < b->len; i++) n += b->data[i] == '\n';
  return n;
}

static void test_exports_write_every_row(void **state) {
  (void)state;
  char *small = make_rows_db(g_dir, "rows10k.sqlite", 10000);
  char *large = make_rows_db(g_dir, "rows200k.sqlite", 200000);
  tu_run r, big;
  tt(&r, NULL, "sql", small, "SELECT * FROM t", "-f", "csv", NULL);
  assert_int_equal(r.status, 0);
  assert_int_equal(count_lines(&r.out), 10001); /* header + every row, not 200 */
  assert_true(has(&r.out, "10000,row 10000,\\x0a0bff\r\n"));
  assert_int_equal(r.err.len, 0); /* nothing was cut, nothing to announce */
  tt(&big, NULL, "sql", large, "SELECT * FROM t", "-f", "csv", "--timeout", "60", NULL);
  assert_int_equal(big.status, 0);
  assert_int_equal(count_lines(&big.out), 200001);
  /* streamed: 20x the rows, about the same memory (sanitizers add their own) */
  if (!sanitized())
    assert_true(big.max_rss_kib < r.max_rss_kib + 4096);
  fprintf(stderr, "peak memory: 10,000 rows %ld KiB, 200,000 rows %ld KiB\n", r.max_rss_kib,
          big.max_rss_kib);
  tu_run_free(&big);
  tu_run_free(&r);

  tt(&r, NULL, "sql", small, "SELECT * FROM t", "-f", "tsv", NULL);
  assert_int_equal(count_lines(&r.out), 10001);
  tu_run_free(&r);
  tt(&r, NULL, "sql", small, "SELECT * FROM t", "--json", NULL);
  json_t *doc = json_loads(tt_buf_cstr(&r.out), 0, NULL);
  assert_non_null(doc);
  assert_int_equal(json_array_size(json_object_get(doc, "rows")), 10000);
  assert_int_equal(json_integer_value(json_object_get(doc, "row_count")), 10000);
  assert_true(json_is_false(json_object_get(doc, "truncated")));
  json_decref(doc);
  tu_run_free(&r);

  /* a cap given: cut there, and said so on stderr (and in JSON) */
  tt(&r, NULL, "sql", small, "SELECT * FROM t", "-f", "csv", "--max-rows", "100", NULL);
  assert_int_equal(r.status, 0);
  assert_int_equal(count_lines(&r.out), 101);
  assert_true(has(&r.err, "stops at --max-rows 100: more rows exist"));
  tu_run_free(&r);
  tt(&r, NULL, "sql", small, "SELECT * FROM t", "--json", "--max-bytes", "1000", NULL);
  doc = json_loads(tt_buf_cstr(&r.out), 0, NULL);
  assert_true(json_is_true(json_object_get(doc, "truncated")));
  assert_string_equal(json_string_value(json_object_get(doc, "truncated_by")), "max_bytes");
  assert_true(has(&r.err, "stops at --max-bytes 1000"));
  json_decref(doc);
  tu_run_free(&r);

  /* the table for people keeps its 200-row default, and says so */
  tt(&r, NULL, "sql", small, "SELECT * FROM t", NULL);
  assert_true(has(&r.out, "200 rows (cut at --max-rows"));
  tu_run_free(&r);
  free(small);
  free(large);
}

/* `| head` closes the pipe early: the command ends quietly with 0. */
static void test_closed_pipe_is_quiet(void **state) {
  (void)state;
  char *db = make_rows_db(g_dir, "rows50k.sqlite", 50000);
  const char *formats[] = {"csv", "json", "table"};
  for (size_t i = 0; i < 3; i++) {
    char *cmd = tt_xasprintf("'%s' sql '%s' 'SELECT * FROM t' -f %s --max-rows 50000 2>'%s/err' "
                             "| head -n 1 >/dev/null; echo \"exit ${PIPESTATUS[0]}\"; cat '%s/err'",
                             tu_bin(), db, formats[i], g_dir, g_dir);
    char *argv[] = {"/bin/bash", "-c", cmd, NULL};
    tu_run r;
    tu_run_cmd(argv, NULL, 0, 20000, &r);
    if (strcmp(tt_buf_cstr(&r.out), "exit 0\n") != 0)
      fprintf(stderr, "-f %s | head: %s\n", formats[i], tt_buf_cstr(&r.out));
    assert_string_equal(tt_buf_cstr(&r.out), "exit 0\n"); /* and nothing on stderr */
    tu_run_free(&r);
    free(cmd);
  }
  free(db);
}

/* The time limit counts the database's work, not the time a reader takes
 * the rows: an export whose reader holds the pipe longer than the limit
 * and its grace (0.5 s + 0.75 s) finishes with every row. The watchdog is
 * armed once for the export, not at every row, so here it fires while the
 * export waits on the pipe, finds the engine's time well under the limit
 * and waits again. The reader's pause is part of what is simulated (a
 * reader that takes its time), not a wait for an event: any pause longer
 * than the grace tests the same path, and a slow machine only lengthens it. */
static void test_slow_reader_is_not_the_query_time(void **state) {
  (void)state;
  char *db = make_rows_db(g_dir, "rows20k.sqlite", 20000);
  char *cmd = tt_xasprintf("'%s' sql '%s' 'SELECT * FROM t' -f csv --timeout 0.5 2>'%s/slow-err' "
                           "| { sleep 1.6; wc -l; }; echo \"exit ${PIPESTATUS[0]}\"; cat '%s/slow-err'",
                           tu_bin(), db, g_dir, g_dir);
  char *argv[] = {"/bin/bash", "-c", cmd, NULL};
  tu_run r;
  tu_run_cmd(argv, NULL, 0, 60000, &r);
  assert_string_equal(tt_buf_cstr(&r.out), "20001\nexit 0\n"); /* every row, nothing on stderr */
  tu_run_free(&r);
  free(cmd);
  free(db);
}

/* Terminal output without its ANSI colour sequences. */
static void strip_ansi(tt_buf *plain, const char *s, size_t n) {
  for (size_t i = 0; i < n; i++) {
    if (s[i] == '\033') {
      while (i < n && !((s[i] >= 'A' && s[i] <= 'Z') || (s[i] >= 'a' && s[i] <= 'z'))) i++;
      continue;
    }
    tt_buf_putc(plain, s[i]);
  }
}

/* Display width of a line of terminal output. */
static size_t line_width(const char *s, size_t n) {
  tt_buf plain = TT_BUF_INIT;
  strip_ansi(&plain, s, n);
  size_t w = tt_display_width(plain.data ? plain.data : "", plain.len);
  tt_buf_free(&plain);
  return w;
}

static size_t widest_line(const tt_buf *b) {
  size_t widest = 0;
  const char *s = tt_buf_cstr((tt_buf *)b), *end = s + b->len;
  while (s < end) {
    const char *nl = memchr(s, '\n', (size_t)(end - s));
    size_t len = nl ? (size_t)(nl - s) : (size_t)(end - s);
    if (len && s[len - 1] == '\r') len--;
    size_t w = line_width(s, len);
    if (w > widest) widest = w;
    s = nl ? nl + 1 : end;
  }
  return widest;
}

/* On a terminal, a table wider than it switches to the expanded layout,
 * whose lines stay within the width and keep every value whole. */
static void test_wide_tables_expand(void **state) {
  (void)state;
  char *wide[] = {(char *)tu_bin(), "sql", g_db, "SELECT * FROM Track WHERE TrackId = 2", NULL};
  tu_run r;
  tu_run_pty(wide, 60, 20000, &r);
  assert_int_equal(r.status, 0);
  tt_buf plain = TT_BUF_INIT;
  strip_ansi(&plain, r.out.data, r.out.len);
  assert_true(has(&plain, "─[ RECORD 1 ]"));
  assert_true(has(&plain, "Composer     │ U. Dirkschneider, W. Hoffmann, H. Frank, P."));
  assert_true(has(&plain, "               Baltes, S. Kaufmann, G. Hoffmann")); /* wrapped, not cut */
  assert_true(widest_line(&r.out) < 60);
  tt_buf_free(&plain);
  tu_run_free(&r);
  char *narrow[] = {(char *)tu_bin(), "sql", g_db, "SELECT GenreId, Name FROM Genre LIMIT 2", NULL};
  tu_run_pty(narrow, 60, 20000, &r);
  strip_ansi(&plain, r.out.data, r.out.len);
  assert_true(has(&plain, "│ GenreId │ Name │"));
  assert_false(has(&plain, "RECORD"));
  tt_buf_free(&plain);
  tu_run_free(&r);
}

/* A big table's row count is bounded, and says so on the card, in JSON and
 * in the MCP resource list. */
static void test_bounded_row_counts(void **state) {
  (void)state;
  char *dir = tu_mkdtemp();
  char *path = tu_make_wide_db(dir, 14, 150000);
  tu_run r;
  tt(&r, NULL, "schema", path, "sales_orders", NULL);
  assert_int_equal(r.status, 0);
  assert_true(has(&r.out, "# Table: sales_orders (>100000 rows)"));
  tu_run_free(&r);
  tt(&r, NULL, "schema", path, "sales_orders", "--json", NULL);
  assert_true(has(&r.out, "\"row_count_kind\":\"at_least\""));
  tu_run_free(&r);
  static const char mcp[] =
      "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":"
      "\"2025-06-18\",\"capabilities\":{},\"clientInfo\":{\"name\":\"t\",\"version\":\"1\"}}}\n"
      "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n"
      "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"resources/list\"}\n";
  tt(&r, mcp, "serve-mcp", path, NULL);
  assert_true(has(&r.out, "row count of table sales_orders (more than 100,000 rows)"));
  assert_true(has(&r.out, "row count of table hr_orders (20 rows)"));
  tu_run_free(&r);
  free(path);
  tu_rmtree(dir);
  free(dir);
}

static void test_schema_command(void **state) {
  (void)state;
  tu_run r;
  tt(&r, NULL, "schema", g_db, NULL);
  assert_int_equal(r.status, 0);
  assert_true(has(&r.out, "# Table: Track (3503 rows)"));
  assert_true(has(&r.out, "(AlbumId: INTEGER, references Album.AlbumId),"));
  assert_true(has(&r.out, "11 tables, about "));
  tu_run_free(&r);

  tt(&r, NULL, "schema", g_db, "genre", "Album", "--json", NULL);
  assert_int_equal(r.status, 0);
  json_t *doc = json_loads(tt_buf_cstr(&r.out), 0, NULL);
  assert_non_null(doc);
  json_t *tables = json_object_get(doc, "tables");
  assert_int_equal(json_array_size(tables), 2);
  assert_string_equal(json_string_value(json_object_get(json_array_get(tables, 0), "name")), "Genre");
  assert_int_equal(json_integer_value(json_object_get(json_array_get(tables, 0), "row_count")), 25);
  assert_true(json_integer_value(json_object_get(doc, "token_estimate")) > 0);
  json_decref(doc);
  tu_run_free(&r);

  /* what the first prompt costs: chinook fits whole, no index */
  tt(&r, NULL, "schema", g_db, "--budget", NULL);
  assert_int_equal(r.status, 0);
  assert_true(has(&r.out, "(schema budget 2000)"));
  assert_true(has(&r.out, "  index        0  none: every card fits"));
  assert_true(has(&r.out, "11 of 11 tables in full"));
  tu_run_free(&r);
  tt(&r, NULL, "schema", g_db, "--budget", "1000", "--json", NULL);
  assert_int_equal(r.status, 0);
  doc = json_loads(tt_buf_cstr(&r.out), 0, NULL);
  assert_non_null(doc);
  long idx = (long)json_integer_value(json_object_get(doc, "index"));
  long cards = (long)json_integer_value(json_object_get(doc, "cards"));
  assert_int_equal(json_integer_value(json_object_get(doc, "budget")), 1000);
  assert_true(idx > 0 && cards > 0 && idx + cards <= 1000);
  assert_true(json_integer_value(json_object_get(doc, "rules")) > 0);
  assert_true(json_integer_value(json_object_get(doc, "tools")) > 0);
  assert_int_equal(json_integer_value(json_object_get(doc, "total")),
                   json_integer_value(json_object_get(doc, "rules")) +
                       json_integer_value(json_object_get(doc, "tools")) + idx + cards);
  assert_true(json_is_false(json_object_get(doc, "whole_schema")));
  json_decref(doc);
  tu_run_free(&r);
  tt(&r, NULL, "schema", g_db, "--budget=lots", NULL);
  assert_int_equal(r.status, 2);
  tu_run_free(&r);

  /* what one question gets: the tables in full, why, their cards */
  const char *q = "Which genre has the most tracks?";
  tt(&r, NULL, "schema", g_db, "--question", q, "--budget", "1000", NULL);
  assert_int_equal(r.status, 0);
  assert_true(has(&r.out, "Tables in full for \"Which genre has the most tracks?\""));
  assert_true(has(&r.out, "\n  Genre "));
  assert_true(has(&r.out, "\n  Track "));
  assert_true(has(&r.out, "name matches 'genre'"));
  assert_true(has(&r.out, "# Table: Genre"));
  assert_true(has(&r.out, "First prompt of this question"));
  tu_run_free(&r);
  tt(&r, NULL, "schema", g_db, "--question", q, "--budget", "1000", "--scores", "--json", NULL);
  assert_int_equal(r.status, 0);
  doc = json_loads(tt_buf_cstr(&r.out), 0, NULL);
  assert_non_null(doc);
  json_t *sel = json_object_get(doc, "selected");
  assert_true(json_array_size(sel) >= 2);
  bool genre = false;
  size_t si;
  json_t *pick;
  json_array_foreach(sel, si, pick) {
    assert_non_null(json_string_value(json_object_get(pick, "reason")));
    assert_true(json_is_number(json_object_get(pick, "score")));
    genre |= strcmp(json_string_value(json_object_get(pick, "table")), "Genre") == 0;
  }
  assert_true(genre);
  assert_int_equal(json_integer_value(json_object_get(doc, "tables_with_cards")), (json_int_t)json_array_size(sel));
  json_decref(doc);
  tu_run_free(&r);
  /* --scores adds the score column */
  tt(&r, NULL, "schema", g_db, "--question", q, "--budget", "1000", "--scores", NULL);
  assert_int_equal(r.status, 0);
  assert_true(strstr(tt_buf_cstr(&r.out), "  Genre ") != NULL);
  {
    const char *line = strstr(tt_buf_cstr(&r.out), "\n  Genre ");
    double score = 0;
    assert_int_equal(sscanf(line + 9, " %lf", &score), 1);
    assert_true(score > 0);
  }
  tu_run_free(&r);
  /* chinook whole at the default budget: no choice to show */
  tt(&r, NULL, "schema", g_db, "--question", q, NULL);
  assert_int_equal(r.status, 0);
  assert_true(has(&r.out, "Every table fits the schema budget"));
  tu_run_free(&r);
  tt(&r, NULL, "schema", g_db, "--question", "", NULL);
  assert_int_equal(r.status, 2);
  tu_run_free(&r);

  /* --knowledge: its part for the question is shown and counted within the
   * budget, value hints too; a malformed named file is a usage error */
  {
    char *dir = tu_mkdtemp();
    char *kfile = tt_xasprintf("%s/facts.json", dir);
    tu_write_file(kfile, "{\"definitions\": [\"revenue = SUM(InvoiceLine.UnitPrice * InvoiceLine.Quantity)\"],\n"
                         " \"examples\": [{\"question\": \"Revenue per country\", "
                         "\"sql\": \"SELECT BillingCountry, SUM(Total) FROM Invoice GROUP BY 1\"}]}\n");
    const char *kq = "Which countries bring AC/DC the most revenue?";
    tt(&r, NULL, "schema", g_db, "--knowledge", kfile, "--question", kq, "--budget", "600", NULL);
    assert_int_equal(r.status, 0);
    assert_true(has(&r.out, "'AC/DC' is a value of Artist.Name"));
    assert_true(has(&r.out, "From the knowledge file (added to the question):"));
    assert_true(has(&r.out, "- revenue = SUM(InvoiceLine.UnitPrice * InvoiceLine.Quantity)"));
    assert_true(has(&r.out, "Q: Revenue per country"));
    assert_true(has(&r.out, "  known "));
    tu_run_free(&r);
    tt(&r, NULL, "schema", g_db, "--knowledge", kfile, "--question", kq, "--budget", "600", "--json", NULL);
    assert_int_equal(r.status, 0);
    json_t *kd = json_loads(tt_buf_cstr(&r.out), 0, NULL);
    assert_non_null(kd);
    json_int_t known = json_integer_value(json_object_get(kd, "knowledge"));
    assert_true(known > 0);
    assert_true(json_integer_value(json_object_get(kd, "index")) + json_integer_value(json_object_get(kd, "cards")) +
                    known <= 600);
    assert_non_null(strstr(json_string_value(json_object_get(kd, "knowledge_text")), "Q: Revenue per country"));
    assert_true(json_array_size(json_object_get(kd, "value_hints")) >= 1);
    json_decref(kd);
    tu_run_free(&r);
    tu_write_file(kfile, "{\n  \"tables\": {\"Invoice\": \"sales\",}\n}\n");
    tt(&r, NULL, "schema", g_db, "--knowledge", kfile, NULL);
    assert_int_equal(r.status, 2);
    assert_true(has(&r.err, "facts.json:2: "));
    tu_run_free(&r);
    tu_rmtree(dir);
    free(kfile);
    free(dir);
  }

  tt(&r, NULL, "schema", g_db, "Nope", NULL);
  assert_int_equal(r.status, 1);
  assert_true(has(&r.err, "no table or view named 'Nope'"));
  assert_true(has(&r.err, "InvoiceLine"));
  tu_run_free(&r);
}


static const char *const INVOICES =
    "SELECT strftime('%Y', InvoiceDate) AS year, count(*) AS invoices FROM Invoice GROUP BY year";

static bool file_starts(const char *path, const char *magic, size_t n) {
  size_t len;
  char *data = tu_read_file(path, &len);
  bool ok = data && len > n && memcmp(data, magic, n) == 0;
  free(data);
  return ok;
}

static void test_chart_command(void **state) {
  (void)state;
  char *before = tu_sha256(g_db);
  char *png = tt_xasprintf("%s/inv.png", g_dir), *svg = tt_xasprintf("%s/inv.svg", g_dir);
  char *statedir = tt_xasprintf("%s/state", g_dir);
  tu_run r;
  /* not a terminal: the file name alone, for scripts */
  tt(&r, NULL, "chart", g_db, INVOICES, "--kind", "bar", "-x", "year", "-y", "invoices", "--out", png, NULL);
  assert_int_equal(r.status, 0);
  char *line = tt_xasprintf("%s\n", png);
  assert_string_equal(tt_buf_cstr(&r.out), line);
  free(line);
  assert_true(file_starts(png, "\x89PNG\r\n", 6));
  tu_run_free(&r);
  tt(&r, NULL, "chart", g_db, INVOICES, "-k", "line", "-x", "year", "-y", "invoices", "--out", svg,
     "--size", "800x500", "--json", NULL);
  assert_int_equal(r.status, 0);
  assert_true(has(&r.out, "\"width\":800"));
  assert_true(has(&r.out, "\"chart\":\"line chart, 5 points: invoices by year\""));
  assert_true(file_starts(svg, "<?xml", 5));
  tu_run_free(&r);
  /* without --out: STATE/charts/<run id>.png */
  tt(&r, NULL, "chart", g_db, INVOICES, "-k", "pie", "-x", "year", "-y", "invoices", "--state-dir",
     statedir, "--json", NULL);
  assert_int_equal(r.status, 0);
  json_t *j = json_loads(tt_buf_cstr(&r.out), 0, NULL);
  assert_non_null(j);
  const char *file = json_string_value(json_object_get(j, "file"));
  char *want = tt_xasprintf("%s/charts/%s.png", statedir,
                            json_string_value(json_object_get(j, "run_id")));
  assert_string_equal(file, want);
  assert_true(file_starts(file, "\x89PNG", 4));
  free(want);
  json_decref(j);
  tu_run_free(&r);
  /* a terminal: the preview, then where the file is */
  char *argv[] = {(char *)tu_bin(), "chart", g_db, (char *)INVOICES, "-k", "bar", "-x", "year", "-y",
                  "invoices", "-t", "Invoices per year", "--out", png, NULL};
  tu_run_pty(argv, 80, 20000, &r);
  assert_int_equal(r.status, 0);
  assert_true(has(&r.out, "Invoices per year"));
  assert_true(has(&r.out, "2025  "));
  assert_true(has(&r.out, "█"));
  assert_true(has(&r.out, " 80"));
  assert_true(has(&r.out, "chart: "));
  tu_run_free(&r);
  /* mistakes: usage (2) with the columns named, refused SQL (3), SQL errors (1) */
  tt(&r, NULL, "chart", g_db, INVOICES, "-x", "year", "-y", "invoices", NULL);
  assert_int_equal(r.status, 2);
  assert_true(has(&r.err, "--kind"));
  tu_run_free(&r);
  tt(&r, NULL, "chart", g_db, INVOICES, "-k", "bar", "-x", "yr", "-y", "invoices", "--out", png, NULL);
  assert_int_equal(r.status, 2);
  assert_true(has(&r.err, "no column 'yr'"));
  assert_true(has(&r.err, "year (text), invoices (integer)"));
  tu_run_free(&r);
  tt(&r, NULL, "chart", g_db, "DELETE FROM Invoice", "-k", "bar", "-x", "a", "-y", "b", "--out", png, NULL);
  assert_int_equal(r.status, 3);
  tu_run_free(&r);
  tt(&r, NULL, "chart", g_db, "SELECT nope FROM Invoice", "-k", "bar", "-x", "a", "-y", "b", "--out", png, NULL);
  assert_int_equal(r.status, 1);
  assert_true(has(&r.err, "no such column"));
  tu_run_free(&r);
  tt(&r, NULL, "chart", g_db, INVOICES, "-k", "bar", "-x", "year", "-y", "invoices", "--out", "x.gif", NULL);
  assert_int_equal(r.status, 2);
  tu_run_free(&r);
  tt(&r, NULL, "chart", g_db, INVOICES, "-k", "bar", "-x", "year", "-y", "invoices", "--size", "9x9", NULL);
  assert_int_equal(r.status, 2);
  assert_true(has(&r.err, "1200x700"));
  tu_run_free(&r);
  tt(&r, NULL, "chart", g_db, INVOICES, "-k", "bar", "-x", "year", "-y", "invoices", "--out",
     "/nonexistent-dir/c.png", NULL);
  assert_int_equal(r.status, 1);
  assert_true(has(&r.err, "cannot write /nonexistent-dir/c.png"));
  tu_run_free(&r);
  char *after = tu_sha256(g_db);
  assert_string_equal(before, after);
  free(before);
  free(after);
  free(png);
  free(svg);
  free(statedir);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_help_and_version),
      cmocka_unit_test(test_usage_errors_exit_2),
      cmocka_unit_test(test_missing_and_bad_files),
      cmocka_unit_test(test_password_never_printed),
      cmocka_unit_test(test_odd_paths_and_symlinks),
      cmocka_unit_test(test_exit_codes_for_outcomes),
      cmocka_unit_test(test_formats),
      cmocka_unit_test(test_long_cell_is_cut_not_lost),
      cmocka_unit_test(test_caps),
      cmocka_unit_test(test_sql_from_stdin),
      cmocka_unit_test(test_exports_write_every_row),
      cmocka_unit_test(test_slow_reader_is_not_the_query_time),
      cmocka_unit_test(test_closed_pipe_is_quiet),
      cmocka_unit_test(test_wide_tables_expand),
      cmocka_unit_test(test_schema_command),
      cmocka_unit_test(test_bounded_row_counts),
      cmocka_unit_test(test_chart_command),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
