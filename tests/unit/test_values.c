/* test_values.c — the value index on real databases: matching a question's
 * words to the column holding them (case, accents, a typo, stop words,
 * common values), the hint text, the ranking's reason, and the cache file
 * (reused when unchanged, rebuilt after the database changes, a corrupt or
 * truncated file ignored, the user's database byte-identical afterwards),
 * and the progress line for a large file. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "schema/schema.h"
#include "testutil.h"

static const char *offices_sql =
    "CREATE TABLE office_location(id INTEGER PRIMARY KEY, city TEXT, country TEXT);"
    "INSERT INTO office_location(city, country) VALUES ('Rotterdam','Netherlands'),"
    "('Zürich','Switzerland'),('São Paulo','Brazil');"
    "CREATE TABLE leave_type(id INTEGER PRIMARY KEY, label TEXT, status TEXT);"
    "INSERT INTO leave_type(label, status) VALUES ('Parental Leave','active'),('Sick Leave','active');"
    "CREATE TABLE a(x TEXT); INSERT INTO a VALUES ('active');"
    "CREATE TABLE b(x TEXT); INSERT INTO b VALUES ('active');"
    "CREATE TABLE c(x TEXT); INSERT INTO c VALUES ('active');";

static tt_values *values_of(const char *path, tt_catalog **cat_out) {
  tt_error err;
  tt_db *db = tt_db_open(path, NULL, &err);
  assert_non_null(db);
  tt_catalog *cat = tt_db_catalog_load(db, &err);
  assert_non_null(cat);
  tt_values *v = tt_values_build(db, cat, NULL);
  tt_db_close(db);
  *cat_out = cat;
  return v;
}

/* "table.column" of the matches, comma-separated, for compact asserts */
static char *linked(const tt_values *v, const char *question) {
  tt_value_matches m;
  tt_values_match(v, question, &m);
  tt_buf b = TT_BUF_INIT;
  for (size_t i = 0; i < m.n; i++)
    tt_buf_printf(&b, "%s%s.%s=%s", i ? "," : "", m.m[i].table, m.m[i].column, m.m[i].value);
  tt_value_matches_free(&m);
  tt_buf_puts(&b, "");
  return tt_buf_detach(&b);
}

static void check_link(const tt_values *v, const char *question, const char *want) {
  char *got = linked(v, question);
  if (strcmp(got, want) != 0) fprintf(stderr, "%s: got '%s', want '%s'\n", question, got, want);
  assert_string_equal(got, want);
  free(got);
}

static void test_fold(void **state) {
  (void)state;
  tt_buf b = TT_BUF_INIT;
  tt_values_fold("  Zürich, São-Paulo ŁÓDŹ!", strlen("  Zürich, São-Paulo ŁÓDŹ!"), &b);
  assert_string_equal(b.data, "zurich sao paulo lodz");
  tt_buf_free(&b);
}

static void test_match(void **state) {
  (void)state;
  char *dir = tu_mkdtemp();
  char *path = tt_xasprintf("%s/o.sqlite", dir);
  tu_exec_sql(path, offices_sql);
  tt_catalog *cat;
  tt_values *v = values_of(path, &cat);
  check_link(v, "How many staff work in ROTTERDAM?", "office_location.city=Rotterdam");
  check_link(v, "offices in zurich", "office_location.city=Zürich");  /* accents */
  check_link(v, "offices in Sao Paulo", "office_location.city=São Paulo"); /* two words */
  check_link(v, "staff in Roterdam", "office_location.city=Rotterdam");   /* a typo */
  check_link(v, "who took parental leave", "leave_type.label=Parental Leave");
  check_link(v, "which are active", "");  /* in four tables: too common */
  check_link(v, "the number of it", "");  /* stop words */
  check_link(v, "staff in Rome", "");     /* short, no near miss allowed */
  tt_value_matches m;
  tt_values_match(v, "staff in rotterdam", &m);
  tt_buf b = TT_BUF_INIT;
  tt_values_hints(&m, &b);
  assert_string_equal(b.data, "'Rotterdam' is a value of office_location.city\n");
  tt_buf_free(&b);
  tt_value_matches_free(&m);
  /* ranking: the table holding the value comes first, with the reason */
  tt_schema *s = tt_schema_new(cat);
  tt_schema_set_values(s, v);
  tt_schema_ranking *r = tt_schema_rank(s, "staff in Rotterdam", 1);
  assert_true(tt_schema_ranking_count(r) >= 1);
  assert_string_equal(tt_schema_ranking_pick(r, 0)->card->table->name, "office_location");
  assert_string_equal(tt_schema_ranking_pick(r, 0)->reason, "value 'Rotterdam' in office_location.city");
  tt_schema_ranking_free(r);
  tt_schema_free(s);
  unlink(path);
  free(path);
  tu_rmtree(dir);
  free(dir);
}

static void test_chinook(void **state) {
  (void)state;
  tt_catalog *cat;
  tt_values *v = values_of(tu_chinook(), &cat);
  check_link(v, "tracks by AC/DC", "Artist.Name=AC/DC,Track.Composer=AC/DC");
  tt_values_free(v);
  tt_catalog_free(cat);
  /* schema --question explains the choice as ask makes it, values included */
  char *dir = tu_mkdtemp();
  setenv("TABLETALK_CACHE_DIR", dir, 1);
  char *argv[] = {(char *)tu_bin(), "schema", (char *)tu_chinook(), "--budget", "700", "--question",
                  "tracks by AC/DC", NULL};
  tu_run r;
  tu_run_cmd(argv, "", 0, 20000, &r);
  assert_int_equal(r.status, 0);
  assert_non_null(strstr(tt_buf_cstr(&r.out), "value 'AC/DC' in Artist.Name"));
  tu_run_free(&r);
  unsetenv("TABLETALK_CACHE_DIR");
  tu_rmtree(dir);
  free(dir);
}

/* The bounds docs/guide/asking.md states: 1,000 values per column, 64 bytes each,
 * the first 50,000 rows of a table. */
static void test_bounds(void **state) {
  (void)state;
  tt_values_opts o = tt_values_default_opts();
  assert_int_equal(o.max_per_column, 1000);
  assert_int_equal(o.max_len, 64);
  assert_int_equal(o.max_total, 200000);
  assert_int_equal(o.scan_rows, 50000);
  char *dir = tu_mkdtemp();
  char *path = tt_xasprintf("%s/b.sqlite", dir);
  tu_exec_sql(path,
           "CREATE TABLE many(x TEXT);"
           "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 1500)"
           " INSERT INTO many SELECT 'item ' || i FROM n;"
           "CREATE TABLE late(x TEXT);"
           "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 50000)"
           " INSERT INTO late SELECT 'same' FROM n;"
           "INSERT INTO late VALUES ('Needle');"
           "CREATE TABLE wide(x TEXT);"
           "INSERT INTO wide VALUES (printf('%.64c', 'k')), (printf('%.65c', 'm'));"
           /* a view is not read: its values come from tables, and its query may be slow */
           "CREATE VIEW made AS SELECT 'Zebracorn' AS x;");
  tt_catalog *cat;
  tt_values *v = values_of(path, &cat);
  size_t many = 0;
  for (size_t i = 0; i < tt_values_count(v); i++) {
    const char *t, *c, *val;
    tt_values_entry(v, i, &t, &c, &val);
    many += strcmp(t, "many") == 0;
  }
  assert_int_equal(many, 1000);
  check_link(v, "where is the needle", ""); /* row 50,001 is not read */
  check_link(v, "any zebracorn", "");        /* nor is a view */
  char *k64 = tt_xasprintf("%.64s", "kkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkk");
  char *want = tt_xasprintf("wide.x=%s", k64);
  check_link(v, k64, want);
  char *m65 = tt_xasprintf("%.65s", "mmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmm");
  check_link(v, m65, "");
  free(k64);
  free(want);
  free(m65);
  tt_values_free(v);
  tt_catalog_free(cat);
  tu_rmtree(dir);
  free(path);
  free(dir);
}

static bool g_progress; /* what open_cached passes for progress */
static bool g_refresh;  /* ... and for refresh */
static size_t g_outdated; /* tables open_cached found read before their data changed */

static tt_values *open_cached(const char *path, const char *cache, bool *cached) {
  tt_error err;
  tt_db *db = tt_db_open(path, NULL, &err);
  assert_non_null(db);
  tt_catalog *cat = tt_db_catalog_load(db, &err);
  assert_non_null(cat);
  tt_catalog_stamp stamp;
  assert_true(tt_db_catalog_stamp(db, &stamp, &err));
  tt_values_open_opts o = {.cache_dir = cache, .progress = g_progress, .refresh = g_refresh};
  tt_values_state st;
  tt_values *v = tt_values_open(db, cat, &stamp, &o, &st);
  assert_int_equal(st.pending, 0);
  *cached = st.cached;
  g_outdated = st.outdated;
  tt_catalog_stamp_free(&stamp);
  tt_catalog_free(cat);
  tt_db_close(db);
  return v;
}

/* The value index's cache file for the database at path. */
static char *cache_file_of(const char *path, const char *cache) {
  tt_error err;
  tt_db *db = tt_db_open(path, NULL, &err);
  assert_non_null(db);
  tt_catalog_stamp stamp;
  assert_true(tt_db_catalog_stamp(db, &stamp, &err));
  char *file = tt_values_cache_path(cache, &stamp);
  tt_catalog_stamp_free(&stamp);
  tt_db_close(db);
  return file;
}

static void test_cache(void **state) {
  (void)state;
  char *dir = tu_mkdtemp();
  char *path = tt_xasprintf("%s/o.sqlite", dir);
  char *cache = tt_xasprintf("%s/cache", dir);
  tu_exec_sql(path, offices_sql);
  char *before = tu_sha256(path);
  bool cached = true;
  tt_values *v = open_cached(path, cache, &cached);
  assert_false(cached);
  size_t n = tt_values_count(v);
  assert_true(n > 0);
  tt_values_free(v);
  char *file = cache_file_of(path, cache);
  assert_true(tt_file_exists(file));
  /* unchanged: read back, same entries */
  v = open_cached(path, cache, &cached);
  assert_true(cached);
  assert_int_equal(tt_values_count(v), n);
  check_link(v, "staff in rotterdam", "office_location.city=Rotterdam");
  tt_values_free(v);
  char *after = tu_sha256(path);
  assert_string_equal(before, after); /* the user's database is only read */
  free(after);
  /* truncated, then garbage: ignored and rebuilt, never a crash */
  size_t len;
  char *text = tu_read_file(file, &len);
  static const size_t cuts[] = {0, 5, 40, 0};
  for (size_t k = 0; k < 3; k++) {
    size_t cut = cuts[k] ? cuts[k] : len / 2;
    FILE *f = fopen(file, "wb");
    fwrite(text, 1, cut < len ? cut : len - 1, f);
    fclose(f);
    v = open_cached(path, cache, &cached);
    assert_false(cached);
    assert_int_equal(tt_values_count(v), n);
    tt_values_free(v);
  }
  FILE *f = fopen(file, "wb");
  fputs("tabletalk-values 1\nidentity zz\n\xff\xfe\tx\n", f);
  fclose(f);
  v = open_cached(path, cache, &cached);
  assert_false(cached);
  tt_values_free(v);
  /* the right header over a damaged body: bytes flipped after the magic
   * line; either refused and rebuilt, or read whole, never a crash */
  size_t body = (size_t)(strchr(text, '\n') + 1 - text);
  unsigned seed = 7;
  for (int round = 0; round < 200; round++) {
    char *bad = tt_xstrndup(text, len);
    for (int k = 0; k < 3; k++) {
      seed = seed * 1103515245u + 12345u;
      size_t at = body + (seed >> 8) % (len - body);
      static const char junk[] = {'\n', '\t', '\0', '\xff', 'e', ' '};
      bad[at] = junk[(seed >> 4) % sizeof junk];
    }
    f = fopen(file, "wb");
    fwrite(bad, 1, len, f);
    fclose(f);
    free(bad);
    v = open_cached(path, cache, &cached);
    assert_non_null(v);
    assert_true(tt_values_count(v) > 0);
    tt_values_free(v);
  }
  free(text);
  /* the database changes: the index as it was is used at once, every
   * table counted outdated; a refresh (what the background does) reads
   * them again and the new value is found, then it is cached and current */
  tu_exec_sql(path, "INSERT INTO office_location(city, country) VALUES ('Eindhoven','Netherlands');");
  tu_mtime_later(path, 1); /* a later time, set rather than waited for */
  v = open_cached(path, cache, &cached);
  assert_true(cached);
  assert_int_equal(g_outdated, 5);
  check_link(v, "staff in eindhoven", "");
  tt_values_free(v);
  g_refresh = true;
  v = open_cached(path, cache, &cached);
  g_refresh = false;
  assert_false(cached);
  assert_int_equal(g_outdated, 0);
  check_link(v, "staff in eindhoven", "office_location.city=Eindhoven");
  tt_values_free(v);
  v = open_cached(path, cache, &cached);
  assert_true(cached);
  assert_int_equal(g_outdated, 0);
  tt_values_free(v);
  free(file);
  free(before);
  free(cache);
  free(path);
  tu_rmtree(dir);
  free(dir);
}

/* Stderr of one tt_values_open call, captured in a file. */
static char *open_capturing(const char *path, const char *cache) {
  char *dir = tu_mkdtemp();
  char *errfile = tt_xasprintf("%s/stderr", dir);
  fflush(stderr);
  int saved = dup(2);
  FILE *f = fopen(errfile, "w");
  dup2(fileno(f), 2);
  bool cached;
  tt_values_free(open_cached(path, cache, &cached));
  fflush(stderr);
  dup2(saved, 2);
  close(saved);
  fclose(f);
  size_t len;
  char *text = tu_read_file(errfile, &len);
  free(errfile);
  tu_rmtree(dir);
  free(dir);
  return text;
}

/* A file of 64 MiB or more says that it is being indexed, when asked to. */
static void test_progress_line(void **state) {
  (void)state;
  char *dir = tu_mkdtemp();
  char *path = tt_xasprintf("%s/big.sqlite", dir);
  tu_exec_sql(path, "CREATE TABLE pad(b BLOB, label TEXT);"
                 "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 66)"
                 " INSERT INTO pad SELECT zeroblob(1048576), 'Label ' || i FROM n;");
  char *cache = tt_xasprintf("%s/cache", dir);
  g_progress = false;
  char *quiet = open_capturing(path, cache);
  assert_string_equal(quiet, "");
  free(quiet);
  char *cache2 = tt_xasprintf("%s/cache2", dir);
  g_progress = true;
  char *said = open_capturing(path, cache2);
  g_progress = false;
  assert_non_null(strstr(said, "tabletalk: indexing the values of "));
  assert_non_null(strstr(said, " values in "));
  free(said);
  /* through ask: on a terminal it is said, with --quiet or in a pipe not
   * (the endpoint is closed; the index is built before the model is called) */
  static const char *const modes[] = {"terminal", "quiet", "pipe"};
  for (int m = 0; m < 3; m++) {
    char *c = tt_xasprintf("%s/cache-%s", dir, modes[m]);
    setenv("TABLETALK_CACHE_DIR", c, 1);
    char *argv[] = {(char *)tu_bin(), "ask", path, "How many labels?", "--base-url",
                    "http://127.0.0.1:9", m == 1 ? "--quiet" : NULL, NULL};
    tu_run r;
    if (m == 2) tu_run_cmd(argv, "", 0, 20000, &r);
    else tu_run_pty(argv, 100, 20000, &r);
    const char *all = m == 2 ? tt_buf_cstr(&r.err) : tt_buf_cstr(&r.out);
    bool told = strstr(all, "indexing the values of") != NULL;
    if (told != (m == 0)) fprintf(stderr, "%s: %s\n", modes[m], all);
    assert_true(told == (m == 0));
    tu_run_free(&r);
    free(c);
  }
  unsetenv("TABLETALK_CACHE_DIR");
  free(cache);
  free(cache2);
  free(path);
  tu_rmtree(dir);
  free(dir);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_fold),
      cmocka_unit_test(test_match),
      cmocka_unit_test(test_chinook),
      cmocka_unit_test(test_bounds),
      cmocka_unit_test(test_cache),
      cmocka_unit_test(test_progress_line),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
