/* test_catalog_cache.c — the catalog and value-index caches on real
 * databases: what proves a catalog unchanged (a changed row, schema or
 * file changes its stamp; a copy elsewhere is another database and never
 * shares the original's entry), a warm load equal to a cold one card for
 * card and value for value, a load stopped by its deadline kept as pending
 * and completed later to the same cards, outdated tables used as read and
 * read again by a refresh, damaged entries read as none, CSV files, and
 * the clean-up of the cache folder. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "schema/cache_file.h"
#include "schema/schema.h"
#include "testutil.h"

static const char *shop_sql =
    "CREATE TABLE city(id INTEGER PRIMARY KEY, name TEXT, country TEXT);"
    "INSERT INTO city(name, country) VALUES ('Rotterdam','Netherlands'),('Lyon','France'),"
    "('Porto','Portugal');"
    "CREATE TABLE shop(id INTEGER PRIMARY KEY, city_id INTEGER REFERENCES city(id), kind TEXT);"
    "INSERT INTO shop(city_id, kind) VALUES (1,'bakery'),(2,'butcher'),(3,'bakery'),(1,'florist');"
    "CREATE VIEW bakeries AS SELECT * FROM shop WHERE kind = 'bakery';";

static tt_catalog_stamp stamp_of(const char *path) {
  tt_error err;
  tt_db *db = tt_db_open(path, NULL, &err);
  assert_non_null(db);
  tt_catalog_stamp s;
  assert_true(tt_db_catalog_stamp(db, &s, &err));
  tt_db_close(db);
  return s;
}

/* A schema through tt_schema_load with the cache at cache (NULL: none). */
static tt_schema *load(const char *path, const char *cache, double deadline_ms, bool refresh) {
  tt_error err;
  tt_db *db = tt_db_open(path, NULL, &err);
  assert_non_null(db);
  tt_schema_load_opts o = {.values = TT_SCHEMA_VALUES_CACHED, .cache_dir = cache,
                           .deadline_ms = deadline_ms, .refresh = refresh};
  tt_schema *s = tt_schema_load(db, &o, &err);
  if (!s) fprintf(stderr, "%s\n", err.message);
  assert_non_null(s);
  tt_db_close(db);
  return s;
}

/* Everything a schema shows, as one text: every card, its JSON and every
 * value of the index. */
static char *everything(const tt_schema *s) {
  tt_buf b = TT_BUF_INIT;
  for (size_t i = 0; i < tt_schema_count(s); i++) {
    const tt_card *c = tt_schema_card(s, i);
    tt_buf_printf(&b, "%s%zu\n", c->text, c->tokens);
    json_t *j = tt_card_to_json(c);
    tt_json_dump(&b, j, JSON_COMPACT | JSON_SORT_KEYS);
    json_decref(j);
    tt_buf_putc(&b, '\n');
  }
  const tt_values *v = tt_schema_values(s);
  for (size_t i = 0; i < tt_values_count(v); i++) {
    const char *t, *c, *val;
    tt_values_entry(v, i, &t, &c, &val);
    tt_buf_printf(&b, "%s.%s=%s\n", t, c, val);
  }
  return tt_buf_detach(&b);
}

/* The files of one cache folder. */
static size_t files_in(const char *cache, const char *kind) {
  char *dir = tt_xasprintf("%s/%s", cache, kind);
  size_t n = 0;
  char **v = tt_list_files(dir, kind[0] == 'c' ? ".cat" : ".idx", &n);
  tt_strv_free(v, n);
  free(dir);
  return n;
}

/* The stamp changes with what the catalog depends on, and only with it. */
static void test_stamp(void **state) {
  (void)state;
  char *dir = tu_mkdtemp();
  char *path = tt_xasprintf("%s/shop.sqlite", dir);
  tu_exec_sql(path, shop_sql);
  tt_catalog_stamp a = stamp_of(path), again = stamp_of(path);
  assert_string_equal(a.identity, again.identity);
  assert_string_equal(a.schema, again.schema);
  assert_string_equal(a.data, again.data);
  assert_true(tt_catalog_stamp_data_hash(&a) == tt_catalog_stamp_data_hash(&again));
  /* a row: the data, not the schema */
  tu_exec_sql(path, "INSERT INTO shop(city_id, kind) VALUES (2, 'grocer');");
  tu_mtime_later(path, 1);
  tt_catalog_stamp rows = stamp_of(path);
  assert_string_equal(rows.identity, a.identity);
  assert_string_equal(rows.schema, a.schema);
  assert_string_not_equal(rows.data, a.data);
  assert_true(tt_catalog_stamp_data_hash(&rows) != tt_catalog_stamp_data_hash(&a));
  /* a column: the schema */
  tu_exec_sql(path, "ALTER TABLE shop ADD COLUMN opened TEXT;");
  tt_catalog_stamp schema = stamp_of(path);
  assert_string_equal(schema.identity, a.identity);
  assert_string_not_equal(schema.schema, a.schema);
  /* the same bytes elsewhere, and the file replaced by another (rename):
   * another database */
  char *copy = tt_xasprintf("%s/copy.sqlite", dir);
  tu_copy_file(path, copy);
  tt_catalog_stamp elsewhere = stamp_of(copy);
  assert_string_not_equal(elsewhere.identity, schema.identity);
  assert_string_equal(elsewhere.schema, schema.schema); /* same bytes, same cookie */
  assert_int_equal(rename(copy, path), 0);
  tt_catalog_stamp replaced = stamp_of(path);
  assert_string_not_equal(replaced.identity, schema.identity);
  tt_catalog_stamp *all[] = {&a, &again, &rows, &schema, &elsewhere, &replaced};
  for (size_t i = 0; i < sizeof all / sizeof *all; i++) tt_catalog_stamp_free(all[i]);
  free(copy);
  free(path);
  tu_rmtree(dir);
  free(dir);
}

/* A warm load reads nothing and shows the same as the cold one, card for
 * card and value for value (chinook: keys, counts, samples of every type,
 * frequent values). */
static void test_warm_equals_cold(void **state) {
  (void)state;
  tu_scratch sc;
  tu_scratch_make(&sc);
  char *cache = tt_xasprintf("%s/cache", sc.dir);
  char *before = tu_sha256(sc.db);
  tt_schema *cold = load(sc.db, cache, 0, false);
  const tt_schema_state *cs = tt_schema_get_state(cold);
  assert_false(cs->cached);
  assert_false(cs->values_cached);
  assert_true(tt_schema_current(cold));
  assert_int_equal(files_in(cache, "catalog"), 1);
  assert_int_equal(files_in(cache, "values"), 1);
  tt_schema *warm = load(sc.db, cache, 0, false);
  const tt_schema_state *ws = tt_schema_get_state(warm);
  assert_true(ws->cached);
  assert_true(ws->values_cached);
  assert_true(tt_schema_current(warm));
  assert_int_equal(tt_schema_count(warm), 11);
  for (size_t i = 0; i < tt_schema_count(cold); i++) {
    const tt_card *c = tt_schema_card(cold, i), *w = tt_schema_card(warm, i);
    assert_string_equal(c->text, w->text);
    assert_int_equal(c->tokens, w->tokens);
  }
  char *a = everything(cold), *b = everything(warm);
  assert_string_equal(a, b);
  /* and as without a cache at all */
  tt_schema *plain = load(sc.db, NULL, 0, false);
  char *c = everything(plain);
  assert_string_equal(a, c);
  char *after = tu_sha256(sc.db);
  assert_string_equal(before, after); /* the database is only read */
  free(a);
  free(b);
  free(c);
  free(before);
  free(after);
  tt_schema_free(cold);
  tt_schema_free(warm);
  tt_schema_free(plain);
  free(cache);
  tu_scratch_remove(&sc);
}

/* A changed row: the kept catalog is used as read, every table counted
 * outdated, until a refresh reads them again; a changed schema is read
 * anew at once. */
static void test_rows_and_schema_change(void **state) {
  (void)state;
  char *dir = tu_mkdtemp();
  char *path = tt_xasprintf("%s/shop.sqlite", dir);
  char *cache = tt_xasprintf("%s/cache", dir);
  tu_exec_sql(path, shop_sql);
  tt_schema_free(load(path, cache, 0, false));
  tu_exec_sql(path, "INSERT INTO city(name, country) VALUES ('Eindhoven','Netherlands');");
  tu_mtime_later(path, 1);
  tt_schema *stale = load(path, cache, 0, false);
  const tt_schema_state *st = tt_schema_get_state(stale);
  assert_true(st->cached);
  assert_true(tt_schema_complete(stale));
  assert_false(tt_schema_current(stale));
  assert_int_equal(st->outdated, 3); /* city, shop, bakeries */
  assert_int_equal(st->values_outdated, 2); /* the view has no values */
  assert_non_null(strstr(tt_schema_find(stale, "city")->text, "(3 rows)"));
  tt_schema *fresh = load(path, cache, 0, true);
  assert_true(tt_schema_current(fresh));
  assert_non_null(strstr(tt_schema_find(fresh, "city")->text, "(4 rows)"));
  tt_value_matches m;
  tt_values_match(tt_schema_values(fresh), "shops in eindhoven", &m);
  assert_int_equal(m.n, 1);
  tt_value_matches_free(&m);
  tt_schema *after = load(path, cache, 0, false); /* the refresh was kept */
  assert_true(tt_schema_get_state(after)->cached);
  assert_true(tt_schema_current(after));
  char *x = everything(fresh), *y = everything(after);
  assert_string_equal(x, y);
  free(x);
  free(y);
  /* a new column: read anew, not taken from the cache */
  tu_exec_sql(path, "ALTER TABLE shop ADD COLUMN opened TEXT;");
  tt_schema *altered = load(path, cache, 0, false);
  assert_false(tt_schema_get_state(altered)->cached);
  assert_non_null(strstr(tt_schema_find(altered, "shop")->text, "opened"));
  assert_true(tt_schema_current(altered));
  tt_schema_free(stale);
  tt_schema_free(fresh);
  tt_schema_free(after);
  tt_schema_free(altered);
  free(cache);
  free(path);
  tu_rmtree(dir);
  free(dir);
}

/* A copy with the same bytes elsewhere gets its own entry: changing the
 * copy leaves the original's cards as they are, and the other way round. */
static void test_copy_does_not_mix(void **state) {
  (void)state;
  char *dir = tu_mkdtemp();
  char *path = tt_xasprintf("%s/shop.sqlite", dir), *copy = tt_xasprintf("%s/copy.sqlite", dir);
  char *cache = tt_xasprintf("%s/cache", dir);
  tu_exec_sql(path, shop_sql);
  tu_copy_file(path, copy);
  tt_schema *orig = load(path, cache, 0, false);
  tt_schema *dup = load(copy, cache, 0, false);
  assert_false(tt_schema_get_state(dup)->cached); /* not the original's entry */
  assert_int_equal(files_in(cache, "catalog"), 2);
  assert_int_equal(files_in(cache, "values"), 2);
  char *o1 = everything(orig);
  tu_exec_sql(copy, "DELETE FROM shop; ALTER TABLE city ADD COLUMN mayor TEXT;");
  tt_schema *dup2 = load(copy, cache, 0, false);
  assert_non_null(strstr(tt_schema_find(dup2, "city")->text, "mayor"));
  tt_schema *orig2 = load(path, cache, 0, false);
  assert_true(tt_schema_get_state(orig2)->cached);
  assert_true(tt_schema_current(orig2));
  char *o2 = everything(orig2);
  assert_string_equal(o1, o2);
  assert_null(strstr(o2, "mayor"));
  free(o1);
  free(o2);
  tt_schema_free(orig);
  tt_schema_free(dup);
  tt_schema_free(dup2);
  tt_schema_free(orig2);
  free(cache);
  free(copy);
  free(path);
  tu_rmtree(dir);
  free(dir);
}

/* A deadline that has passed leaves every table pending: said by the state,
 * the warning and the cards, kept in the cache; the next load without one
 * reads them and equals a load that was never stopped. */
static void test_stopped_then_completed(void **state) {
  (void)state;
  tu_scratch sc;
  tu_scratch_make(&sc);
  char *cache = tt_xasprintf("%s/cache", sc.dir), *whole_cache = tt_xasprintf("%s/whole", sc.dir);
  tt_schema *cut = load(sc.db, cache, tt_now_ms() - 1, false);
  const tt_schema_state *st = tt_schema_get_state(cut);
  assert_int_equal(st->pending, 11);
  assert_int_equal(st->values_pending, 9); /* InvoiceLine and PlaylistTrack hold no text */
  assert_false(tt_schema_complete(cut));
  assert_non_null(tt_schema_warning(cut));
  assert_non_null(strstr(tt_schema_warning(cut), "the schema is incomplete"));
  const tt_card *genre = tt_schema_find(cut, "Genre");
  assert_non_null(strstr(genre->text, "(no example values yet: "));
  assert_null(genre->table->sample);
  json_t *j = tt_schema_to_json(cut, NULL, 0);
  assert_true(json_is_false(json_object_get(j, "complete")));
  json_decref(j);
  tt_schema *done = load(sc.db, cache, 0, false);
  assert_true(tt_schema_get_state(done)->cached); /* the entry, its tables read now */
  assert_true(tt_schema_current(done));
  assert_null(tt_schema_warning(done));
  tt_schema *whole = load(sc.db, whole_cache, 0, false);
  char *a = everything(done), *b = everything(whole);
  assert_string_equal(a, b);
  j = tt_schema_to_json(done, NULL, 0);
  assert_true(json_is_true(json_object_get(j, "complete")));
  json_decref(j);
  free(a);
  free(b);
  tt_schema_free(cut);
  tt_schema_free(done);
  tt_schema_free(whole);
  free(cache);
  free(whole_cache);
  tu_scratch_remove(&sc);
}

/* Writes bytes to path, ending in a checksum made to hold for them when
 * forge is set (as a hostile writer would), else as damaged on disk. */
static void write_entry(const char *path, char *bytes, size_t len, bool forge) {
  if (forge && len >= 8) {
    uint64_t sum = tt_cache_sum(bytes, len - 8);
    for (int i = 0; i < 8; i++) bytes[len - 8 + (size_t)i] = (char)(sum >> (8 * i));
  }
  FILE *f = fopen(path, "wb");
  fwrite(bytes, 1, len, f);
  fclose(f);
}

/* Damaged entries are read as none, and forged ones (the checksum made to
 * hold) read as hostile input: the database is read again or the entry read
 * whole, never a crash or a read out of bounds (the sanitizer tree runs
 * this). */
static void damage_entries(const char *kind, const char *suffix) {
  char *dir = tu_mkdtemp();
  char *path = tt_xasprintf("%s/shop.sqlite", dir);
  char *cache = tt_xasprintf("%s/cache", dir);
  tu_exec_sql(path, shop_sql);
  tt_schema *first = load(path, cache, 0, false);
  char *want = everything(first);
  tt_schema_free(first);
  char *cdir = tt_xasprintf("%s/%s", cache, kind);
  size_t n;
  char **names = tt_list_files(cdir, suffix, &n);
  assert_int_equal(n, 1);
  char *file = tt_xasprintf("%s/%s", cdir, names[0]);
  tt_strv_free(names, n);
  size_t len;
  char *text = tu_read_file(file, &len);
  unsigned seed = 11;
  size_t forged_read = 0;
  for (int round = 0; round < 300; round++) {
    char *bad = tt_xstrndup(text, len);
    size_t cut = len;
    bool forge = round % 2 == 1;
    if (round % 3 == 0) cut = 8 + (seed >> 3) % (len - 8); /* truncated */
    int flips = round % 5 == 0 ? 1 : 3;
    for (int k = 0; k < flips; k++) { /* bytes changed */
      seed = seed * 1103515245u + 12345u;
      size_t at = (seed >> 8) % len;
      static const char junk[] = {'\0', '\xff', '\x7f', '\x01', '\x80', 'a'};
      char to = round % 4 == 0 ? junk[(seed >> 4) % sizeof junk] : (char)(bad[at] ^ (1 + (seed & 0x7f)));
      bad[at] = to != bad[at] ? to : (char)(bad[at] ^ 0x55); /* always a change */
    }
    write_entry(file, bad, cut, forge);
    free(bad);
    tt_schema *s = load(path, cache, 0, false);
    const tt_schema_state *st = tt_schema_get_state(s);
    bool from_file = kind[0] == 'c' ? st->cached : st->values_cached;
    if (!forge) assert_false(from_file);
    if (from_file) { /* forged, and whole as the reader sees it */
      forged_read++;
    } else {
      char *got = everything(s);
      assert_string_equal(got, want);
      free(got);
    }
    tt_schema_free(s);
  }
  print_message("%s: %zu of 150 forged entries were read as whole\n", kind, forged_read);
  free(text);
  free(file);
  free(cdir);
  free(want);
  free(cache);
  free(path);
  tu_rmtree(dir);
  free(dir);
}

static void test_damaged_entries(void **state) {
  (void)state;
  damage_entries("catalog", ".cat");
  damage_entries("values", ".idx");
}

/* CSV files: cached like a file; a changed file is read anew at once. */
static void test_csv(void **state) {
  (void)state;
  char *dir = tu_mkdtemp();
  char *folder = tt_xasprintf("%s/shop", dir), *cache = tt_xasprintf("%s/cache", dir);
  assert_int_equal(mkdir(folder, 0700), 0);
  char *people = tt_xasprintf("%s/people.csv", folder);
  tu_write_file(people, "name,city\nAda,London\nGrace,Arlington\n");
  tt_schema *cold = load(folder, cache, 0, false);
  tt_schema *warm = load(folder, cache, 0, false);
  assert_false(tt_schema_get_state(cold)->cached);
  assert_true(tt_schema_get_state(warm)->cached);
  char *a = everything(cold), *b = everything(warm);
  assert_string_equal(a, b);
  tu_write_file(people, "name,city\nAda,London\nGrace,Arlington\nAlan,Wilmslow\n");
  tt_schema *changed = load(folder, cache, 0, false);
  assert_false(tt_schema_get_state(changed)->cached);
  assert_non_null(strstr(tt_schema_find(changed, "people")->text, "(3 rows)"));
  free(a);
  free(b);
  tt_schema_free(cold);
  tt_schema_free(warm);
  tt_schema_free(changed);
  free(people);
  free(cache);
  free(folder);
  tu_rmtree(dir);
  free(dir);
}

/* Sets a file's modification time to `days` ago. */
static void age_file(const char *path, int days) {
  struct timespec t[2];
  clock_gettime(CLOCK_REALTIME, &t[0]);
  t[0].tv_sec -= days * 86400;
  t[1] = t[0];
  assert_int_equal(utimensat(AT_FDCWD, path, t, 0), 0);
}

/* The clean-up: entries of a database that is gone, unused ones, files of
 * an older form and what is over the size go; the rest stays. */
static void test_gc(void **state) {
  (void)state;
  char *dir = tu_mkdtemp();
  char *a = tt_xasprintf("%s/a.sqlite", dir), *b = tt_xasprintf("%s/b.sqlite", dir);
  char *cache = tt_xasprintf("%s/cache", dir);
  tu_exec_sql(a, shop_sql);
  tu_copy_file(a, b);
  tt_schema_free(load(a, cache, 0, false));
  tt_schema_free(load(b, cache, 0, false));
  char *older = tt_xasprintf("%s/values/0000000000000000.tsv", cache);
  tu_write_file(older, "tabletalk-values 1\n");
  char *other = tt_xasprintf("%s/prefix-0123.state", cache); /* not ours to clean */
  tu_write_file(other, "x");
  tt_cache_gc_report r;
  tt_schema_cache_gc(cache, 30 * 86400, 0, true, &r); /* a dry run only counts */
  assert_int_equal(r.removed, 1);
  assert_true(tt_file_exists(older));
  assert_int_equal(unlink(b), 0);
  tt_schema_cache_gc(cache, 30 * 86400, 0, false, &r);
  assert_int_equal(r.removed, 3); /* b's catalog and values, and the older form */
  assert_int_equal(r.kept, 2);
  assert_int_equal(r.failed, 0);
  assert_false(tt_file_exists(older));
  assert_true(tt_file_exists(other));
  assert_int_equal(files_in(cache, "catalog"), 1);
  /* a's entries, unused for 40 days */
  char *cdir = tt_xasprintf("%s/catalog", cache), *vdir = tt_xasprintf("%s/values", cache);
  const char *dirs[] = {cdir, vdir}, *suffix[] = {".cat", ".idx"};
  for (int k = 0; k < 2; k++) {
    size_t n;
    char **names = tt_list_files(dirs[k], suffix[k], &n);
    for (size_t i = 0; i < n; i++) {
      char *f = tt_xasprintf("%s/%s", dirs[k], names[i]);
      age_file(f, 40);
      free(f);
    }
    tt_strv_free(names, n);
  }
  tt_schema_cache_gc(cache, 60 * 86400, 0, false, &r);
  assert_int_equal(r.removed, 0);
  tt_schema_cache_gc(cache, 30 * 86400, 0, false, &r);
  assert_int_equal(r.removed, 2);
  assert_int_equal(files_in(cache, "catalog") + files_in(cache, "values"), 0);
  /* over the size: all of it goes when the limit is a byte */
  tt_schema_free(load(a, cache, 0, false));
  tt_schema_cache_gc(cache, 0, 1, false, &r);
  assert_int_equal(r.removed, 2);
  assert_int_equal(r.kept, 0);
  assert_true(tt_file_exists(other));
  free(cdir);
  free(vdir);
  free(other);
  free(older);
  free(cache);
  free(a);
  free(b);
  tu_rmtree(dir);
  free(dir);
}

/* ---- PostgreSQL (test_catalog_cache server: the pg_server fixture) ------------- */

/* The fixture server's URI, or NULL. */
static char *pg_uri(void) {
  const char *file = getenv("TT_PG_URI_FILE");
  size_t n;
  char *text = file && *file ? tu_read_file(file, &n) : NULL;
  if (!text) return NULL;
  text[strcspn(text, "\r\n")] = '\0';
  if (!*text) {
    free(text);
    return NULL;
  }
  return text;
}

/* Runs sql on uri through psql as the fixture's owner (a writer). */
static void psql(const char *uri, const char *sql) {
  char *argv[] = {"/usr/bin/psql", "-X", "-q", "-v", "ON_ERROR_STOP=1", (char *)uri, "-c",
                  (char *)sql, NULL};
  tu_run r;
  tu_run_cmd(argv, "", 0, 60000, &r);
  if (r.status != 0) fail_msg("psql %s: %s", sql, tt_buf_cstr(&r.err));
  tu_run_free(&r);
}

/* On PostgreSQL the stamp follows the system catalogs and the statistics:
 * rows (after ANALYZE) change the data stamp only; a comment or a column
 * the schema stamp; and a warm load equals a cold one. */
static void test_pg_stamp(void **state) {
  (void)state;
  char *uri = pg_uri();
  if (!uri) skip();
  psql(uri, "DROP DATABASE IF EXISTS tt_catalog_cache");
  psql(uri, "CREATE DATABASE tt_catalog_cache");
  char *db = tt_xasprintf("%s%sdbname=tt_catalog_cache", uri, strchr(uri, '?') ? "&" : "?");
  psql(db, "CREATE TABLE city(id int PRIMARY KEY, name text); INSERT INTO city VALUES "
           "(1, 'Rotterdam'), (2, 'Lyon'); ANALYZE city");
  tt_catalog_stamp a = stamp_of(db), again = stamp_of(db);
  assert_string_equal(a.identity, again.identity);
  assert_string_equal(a.schema, again.schema);
  assert_string_equal(a.data, again.data);
  assert_null(strstr(a.identity, "password"));
  psql(db, "INSERT INTO city SELECT i, 'town ' || i FROM generate_series(3, 500) i; ANALYZE city");
  tt_catalog_stamp rows = stamp_of(db);
  assert_string_equal(rows.schema, a.schema);
  assert_string_not_equal(rows.data, a.data);
  psql(db, "COMMENT ON TABLE city IS 'where shops are'");
  tt_catalog_stamp comment = stamp_of(db);
  assert_string_not_equal(comment.schema, rows.schema);
  psql(db, "ALTER TABLE city ADD COLUMN mayor text");
  tt_catalog_stamp column = stamp_of(db);
  assert_string_not_equal(column.schema, comment.schema);
  assert_string_equal(column.identity, a.identity);
  /* through the cache: warm equals cold */
  char *dir = tu_mkdtemp();
  char *cache = tt_xasprintf("%s/cache", dir);
  tt_schema *cold = load(db, cache, 0, false), *warm = load(db, cache, 0, false);
  assert_false(tt_schema_get_state(cold)->cached);
  assert_true(tt_schema_get_state(warm)->cached);
  assert_true(tt_schema_get_state(warm)->values_cached);
  char *x = everything(cold), *y = everything(warm);
  assert_string_equal(x, y);
  assert_non_null(strstr(x, "where shops are"));
  free(x);
  free(y);
  tt_schema_free(cold);
  tt_schema_free(warm);
  tt_catalog_stamp *all[] = {&a, &again, &rows, &comment, &column};
  for (size_t i = 0; i < sizeof all / sizeof *all; i++) tt_catalog_stamp_free(all[i]);
  psql(uri, "DROP DATABASE tt_catalog_cache");
  free(cache);
  tu_rmtree(dir);
  free(dir);
  free(db);
  free(uri);
}

/* test_catalog_cache: files; test_catalog_cache server: PostgreSQL (exit
 * 77, skipped, when no server URI is given). */
int main(int argc, char **argv) {
  if (argc > 1 && strcmp(argv[1], "server") == 0) {
    char *uri = pg_uri();
    if (!uri) {
      fprintf(stderr, "skipped: TT_PG_URI_FILE names no server URI (fixture pg_server)\n");
      return 77;
    }
    free(uri);
    const struct CMUnitTest pg[] = {cmocka_unit_test(test_pg_stamp)};
    return cmocka_run_group_tests(pg, NULL, NULL);
  }
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_stamp),
      cmocka_unit_test(test_warm_equals_cold),
      cmocka_unit_test(test_rows_and_schema_change),
      cmocka_unit_test(test_copy_does_not_mix),
      cmocka_unit_test(test_stopped_then_completed),
      cmocka_unit_test(test_damaged_entries),
      cmocka_unit_test(test_csv),
      cmocka_unit_test(test_gc),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
