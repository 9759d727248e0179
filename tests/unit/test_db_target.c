/* test_db_target.c — the database target (tt_db_target_parse): which
 * engine reads what the user named, what is opened (the real path of a
 * file or folder, a URI as given) and what people are shown (a URI without
 * its password), for files, relative paths and symlinks, missing files,
 * folders, CSV and TSV names in any case, text files named .txt, .dat or
 * without an extension, postgres:// and postgresql://
 * URIs in any case, DuckDB's files, globs and the CSV size threshold with
 * --engine, and the empty string; a password masked in every
 * message whatever its form (libpq's own text included); and a handle
 * opened from a target keeps it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "db/db.h"
#include "testutil.h"

static tu_scratch g_scratch;

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

static tt_db_target parse(const char *given) {
  tt_db_target t;
  tt_error err = TT_ERROR_INIT;
  if (!tt_db_target_parse(given, &t, &err)) fail_msg("parse %s: %s", given, err.message);
  assert_string_equal(t.given, given);
  return t;
}

/* An existing file: SQLite, opened and shown by its real path. */
static void test_file(void **state) {
  (void)state;
  char *real = realpath(g_scratch.db, NULL);
  assert_non_null(real);
  tt_db_target t = parse(g_scratch.db);
  assert_int_equal(t.kind, TT_DB_KIND_SQLITE);
  assert_string_equal(t.engine, "sqlite");
  assert_string_equal(t.path, real);
  assert_string_equal(t.shown, real);
  tt_db_target_free(&t);
  assert_null(t.given); /* freed and cleared */
  free(real);
}

/* DuckDB's files by their endings (any case), a glob that names no file
 * (its folder made real, the pattern kept), CSV by size or --engine, and
 * an engine that cannot read a file refused. Reads no file's contents. */
static void test_duckdb_targets(void **state) {
  (void)state;
  const char *names[] = {"sales.parquet", "events.JSONL", "e.ndjson", "x.json", "shop.duckdb"};
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
    tt_db_target t = parse(names[i]);
    assert_int_equal(t.kind, TT_DB_KIND_DUCKDB);
    assert_string_equal(t.engine, "duckdb");
    assert_false(t.engine_auto);
    tt_db_target_free(&t);
  }
  char *real = realpath(g_scratch.dir, NULL);
  char *glob = tt_xasprintf("%s/part_*.parquet", g_scratch.dir);
  char *want = tt_xasprintf("%s/part_*.parquet", real);
  tt_db_target t = parse(glob);
  assert_int_equal(t.kind, TT_DB_KIND_DUCKDB);
  assert_string_equal(t.path, want);
  tt_db_target_free(&t);
  /* a small CSV file is SQLite's unless --engine duckdb */
  char *csv = tt_xasprintf("%s/small.csv", g_scratch.dir);
  FILE *f = fopen(csv, "w");
  assert_non_null(f);
  fputs("a\n1\n", f);
  fclose(f);
  tt_error err = TT_ERROR_INIT;
  assert_true(tt_db_target_parse_engine(csv, NULL, &t, &err));
  assert_int_equal(t.kind, TT_DB_KIND_CSV);
  tt_db_target_free(&t);
  assert_true(tt_db_target_parse_engine(csv, "duckdb", &t, &err));
  assert_int_equal(t.kind, TT_DB_KIND_DUCKDB);
  assert_string_equal(t.engine, "duckdb");
  tt_db_target_free(&t);
  /* a CSV file of the threshold's size goes to DuckDB by itself, and back
   * to SQLite with --engine sqlite */
  assert_int_equal(truncate(csv, (off_t)TT_DB_DUCKDB_CSV_BYTES), 0);
  t = parse(csv);
  assert_int_equal(t.kind, TT_DB_KIND_DUCKDB);
  assert_true(t.engine_auto);
  tt_db_target_free(&t);
  assert_true(tt_db_target_parse_engine(csv, "sqlite", &t, &err));
  assert_int_equal(t.kind, TT_DB_KIND_CSV);
  assert_false(t.engine_auto);
  tt_db_target_free(&t);
  /* no engine reads what it cannot */
  assert_false(tt_db_target_parse_engine("x.parquet", "sqlite", &t, &err));
  assert_int_equal(err.kind, TT_ERR_CONFIG);
  assert_non_null(strstr(err.message, "--engine sqlite cannot read"));
  assert_false(tt_db_target_parse_engine(g_scratch.db, "duckdb", &t, &err));
  assert_false(tt_db_target_parse_engine(csv, "oracle", &t, &err));
  unlink(csv);
  free(csv);
  free(glob);
  free(want);
  free(real);
}

/* A relative path and a symlink become the real path of the file. */
static void test_relative_path_and_symlink(void **state) {
  (void)state;
  char *real = realpath(g_scratch.db, NULL);
  char cwd[PATH_MAX];
  assert_non_null(getcwd(cwd, sizeof cwd));
  assert_int_equal(chdir(g_scratch.dir), 0);
  tt_db_target t = parse("./chinook.sqlite");
  assert_int_equal(t.kind, TT_DB_KIND_SQLITE);
  assert_string_equal(t.path, real);
  assert_string_equal(t.shown, real);
  tt_db_target_free(&t);
  assert_int_equal(symlink("chinook.sqlite", "link.db"), 0);
  t = parse("link.db");
  assert_string_equal(t.path, real);
  tt_db_target_free(&t);
  unlink("link.db");
  assert_int_equal(chdir(cwd), 0);
  free(real);
}

/* A file that does not exist is named as given (opening it says so). */
static void test_missing_file(void **state) {
  (void)state;
  tt_db_target t = parse("no/such/dir/missing.sqlite");
  assert_int_equal(t.kind, TT_DB_KIND_SQLITE);
  assert_string_equal(t.path, "no/such/dir/missing.sqlite");
  assert_string_equal(t.shown, "no/such/dir/missing.sqlite");
  tt_error err = TT_ERROR_INIT;
  assert_null(tt_db_open_target(&t, NULL, &err));
  assert_int_equal(err.kind, TT_ERR_IO);
  assert_non_null(strstr(err.message, "no such file: no/such/dir/missing.sqlite"));
  tt_db_target_free(&t);
}

/* A folder holds CSV files, whatever its name; read by the SQLite engine;
 * one that holds a Parquet or JSON file (not in a subfolder) is DuckDB's. */
static void test_folder(void **state) {
  (void)state;
  char *dir = tt_xasprintf("%s/tables.sqlite", g_scratch.dir);
  assert_int_equal(mkdir(dir, 0700), 0);
  char *real = realpath(dir, NULL);
  tt_db_target t = parse(dir);
  assert_int_equal(t.kind, TT_DB_KIND_CSV);
  assert_string_equal(t.engine, "sqlite");
  assert_string_equal(t.path, real);
  tt_db_target_free(&t);
  t = parse(g_scratch.dir);
  assert_int_equal(t.kind, TT_DB_KIND_CSV);
  tt_db_target_free(&t);
  char *sub = tt_xasprintf("%s/sub", dir), *deep = tt_xasprintf("%s/sub/x.parquet", dir);
  char *csv = tt_xasprintf("%s/a.csv", dir), *json = tt_xasprintf("%s/b.JSONL", dir);
  assert_int_equal(mkdir(sub, 0700), 0);
  fclose(fopen(deep, "w"));
  fclose(fopen(csv, "w"));
  t = parse(dir); /* a Parquet file in a subfolder does not count */
  assert_int_equal(t.kind, TT_DB_KIND_CSV);
  tt_db_target_free(&t);
  fclose(fopen(json, "w"));
  t = parse(dir);
  assert_int_equal(t.kind, TT_DB_KIND_DUCKDB);
  assert_string_equal(t.engine, "duckdb");
  tt_db_target_free(&t);
  unlink(json);
  unlink(csv);
  unlink(deep);
  rmdir(sub);
  free(json);
  free(csv);
  free(deep);
  free(sub);
  rmdir(dir);
  free(real);
  free(dir);
}

/* .csv and .tsv in any case are CSV, existing or not; other endings are
 * SQLite files. */
static void test_csv_names(void **state) {
  (void)state;
  static const char *const csv[] = {"sales.csv", "SALES.CSV", "x.Tsv", "no-such-dir/a.tSv"};
  static const char *const sqlite[] = {"sales.csv.sqlite", "sales_csv", "data.tsvx", "no-such-dir/csv"};
  for (size_t i = 0; i < sizeof csv / sizeof csv[0]; i++) {
    tt_db_target t = parse(csv[i]);
    assert_int_equal(t.kind, TT_DB_KIND_CSV);
    assert_string_equal(t.engine, "sqlite");
    assert_string_equal(t.path, csv[i]); /* missing: as given */
    assert_true(tt_db_path_is_csv(csv[i]));
    tt_db_target_free(&t);
  }
  for (size_t i = 0; i < sizeof sqlite / sizeof sqlite[0]; i++) {
    tt_db_target t = parse(sqlite[i]);
    assert_int_equal(t.kind, TT_DB_KIND_SQLITE);
    assert_false(tt_db_path_is_csv(sqlite[i]));
    tt_db_target_free(&t);
  }
  /* an existing CSV file: its real path */
  char *file = tt_xasprintf("%s/Sales.CSV", g_scratch.dir);
  FILE *f = fopen(file, "w");
  assert_non_null(f);
  fputs("a,b\n1,2\n", f);
  fclose(f);
  char *real = realpath(file, NULL);
  tt_db_target t = parse(file);
  assert_int_equal(t.kind, TT_DB_KIND_CSV);
  assert_string_equal(t.path, real);
  tt_db_target_free(&t);
  unlink(file);
  free(real);
  free(file);
}

/* A file whose name does not say CSV: read as CSV when it is named .txt,
 * .dat or without an extension and its first bytes are text that is not
 * SQLite's header; a SQLite file, binary bytes or another name stay SQLite. */
static void test_text_files(void **state) {
  (void)state;
  static const struct {
    const char *name, *bytes;
    size_t n;
    tt_db_kind kind;
  } cases[] = {
      {"export.txt", "a;b\n1;2\n", 8, TT_DB_KIND_CSV},
      {"EXPORT.DAT", "a\tb\n1\t2\n", 8, TT_DB_KIND_CSV},
      {"export", "a,b\n1,2\n", 8, TT_DB_KIND_CSV},
      {"lines.txt", "one column\nof text\n", 19, TT_DB_KIND_CSV},
      {"wide.txt", "\xFF\xFE" "a\0,\0", 6, TT_DB_KIND_SQLITE},   /* UTF-16: a NUL */
      {"binary.dat", "\x01\x02\0\x03", 4, TT_DB_KIND_SQLITE},
      {"sqlite", "SQLite format 3\0rest", 21, TT_DB_KIND_SQLITE},
      {"empty", "", 0, TT_DB_KIND_SQLITE},
      {"notes.db", "a,b\n1,2\n", 8, TT_DB_KIND_SQLITE},
      {"data.json", "a,b\n1,2\n", 8, TT_DB_KIND_DUCKDB},     /* JSON: DuckDB reads it */
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    char *file = tt_xasprintf("%s/%s", g_scratch.dir, cases[i].name);
    FILE *f = fopen(file, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(cases[i].bytes, 1, cases[i].n, f), cases[i].n);
    fclose(f);
    tt_db_target t = parse(file);
    if (t.kind != cases[i].kind) fprintf(stderr, "%s: kind %d\n", cases[i].name, (int)t.kind);
    assert_int_equal(t.kind, cases[i].kind);
    assert_int_equal(tt_db_path_is_csv(file), cases[i].kind == TT_DB_KIND_CSV);
    tt_db_target_free(&t);
    unlink(file);
    free(file);
  }
  /* a FIFO named .txt is never opened (nothing would answer) */
  char *fifo = tt_xasprintf("%s/pipe.txt", g_scratch.dir);
  assert_int_equal(mkfifo(fifo, 0600), 0);
  tt_db_target t = parse(fifo);
  assert_int_equal(t.kind, TT_DB_KIND_SQLITE);
  tt_db_target_free(&t);
  unlink(fifo);
  free(fifo);
}

/* postgres:// and postgresql:// in any case name a server; the URI is
 * opened as given and shown without its password. */
static void test_postgres_uris(void **state) {
  (void)state;
  static const char *const uris[] = {"postgres://h/db", "postgresql://", "POSTGRES://u@h/db",
                                     "PostgreSQL://u@h:5432/db?sslmode=disable"};
  for (size_t i = 0; i < sizeof uris / sizeof uris[0]; i++) {
    tt_db_target t = parse(uris[i]);
    assert_int_equal(t.kind, TT_DB_KIND_POSTGRES);
    assert_string_equal(t.engine, "postgres");
    assert_string_equal(t.path, uris[i]);
    assert_string_equal(t.shown, uris[i]); /* no password to hide */
    tt_db_target_free(&t);
  }
  /* not URIs: a file whose name merely starts so, a scheme without // */
  static const char *const files[] = {"./postgres://x", "postgres:/x", "postgres.sqlite"};
  for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
    tt_db_target t = parse(files[i]);
    assert_int_equal(t.kind, TT_DB_KIND_SQLITE);
    tt_db_target_free(&t);
  }
}

/* A password in the user information or in a password= parameter never
 * reaches shown; given and path keep it (they go to libpq only). */
static void test_redaction(void **state) {
  (void)state;
  static const struct {
    const char *given, *shown;
  } cases[] = {
      {"postgres://me:s3cret@db.example:5432/sales", "postgres://me:***@db.example:5432/sales"},
      {"postgresql://me@h/db?password=s3cret&sslmode=require",
       "postgresql://me@h/db?password=***&sslmode=require"},
      {"POSTGRES://me:s3cret@h/db?PASSWORD=s3cret", "POSTGRES://me:***@h/db?PASSWORD=***"},
      {"postgres://a%40b:s3cret@h/db", "postgres://a%40b:***@h/db"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    tt_db_target t = parse(cases[i].given);
    assert_int_equal(t.kind, TT_DB_KIND_POSTGRES);
    assert_string_equal(t.shown, cases[i].shown);
    assert_null(strstr(t.shown, "s3cret"));
    assert_string_equal(t.path, cases[i].given);
    tt_db_target_free(&t);
  }
}

/* The message of opening given (which must fail, naming the server). */
static void open_fails(const char *given, tt_error *err) {
  *err = (tt_error)TT_ERROR_INIT;
  tt_db *db = tt_db_open(given, NULL, err);
  assert_null(db);
  assert_int_equal(err->kind, TT_ERR_IO);
  assert_non_null(strstr(err->message, "cannot connect to postgres"));
}

/* A password is masked in every message, whatever its form: libpq's own
 * text included, which echoes a URI it cannot parse. Each URI names a
 * server that is not there (port 1 of this machine: refused at once) or
 * cannot be parsed, so no server is needed. */
static void test_password_forms_masked(void **state) {
  (void)state;
  static const struct {
    const char *given, *secret, *shown;
  } cases[] = {
      /* malformed: libpq's message quotes the whole URI */
      {"postgresql://reader:R3ader-Pw-Secret@[::1/chinook", "R3ader-Pw-Secret",
       "postgresql://reader:***@[::1/chinook"},
      /* a % not followed by two hex digits: libpq quotes the token */
      {"postgresql://reader:pa%zz-Pct-Secret@127.0.0.1:1/db", "pa%zz-Pct-Secret",
       "postgresql://reader:***@127.0.0.1:1/db"},
      /* percent-encoded, in the message as written and decoded */
      {"postgresql://reader:Pct%2DEnc%40Secret@127.0.0.1:1/db", "Pct-Enc@Secret",
       "postgresql://reader:***@127.0.0.1:1/db"},
      /* the key spelled with escapes, which libpq decodes to password */
      {"postgresql://reader@127.0.0.1:1/db?pass%77ord=Key-Spelling-Secret",
       "Key-Spelling-Secret", "postgresql://reader@127.0.0.1:1/db?pass%77ord=***"},
      {"postgresql://reader@127.0.0.1:1/db?sslmode=disable&password=Query-Secret",
       "Query-Secret", "postgresql://reader@127.0.0.1:1/db?sslmode=disable&password=***"},
      /* the password is also the user and the database: masked everywhere */
      {"postgresql://Same-Secret:Same-Secret@127.0.0.1:1/Same-Secret", "Same-Secret",
       "postgresql://***:***@127.0.0.1:1/***"},
      /* libpq ends the user information at the first @, tabletalk at the last */
      {"postgresql://reader:Split-Pw@Host-Piece@127.0.0.1:1/db", "Host-Piece",
       "postgresql://reader:***@127.0.0.1:1/db"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    tt_db_target t = parse(cases[i].given);
    assert_string_equal(t.shown, cases[i].shown);
    tt_db_target_free(&t);
    tt_error err;
    open_fails(cases[i].given, &err);
    if (strstr(tt_error_text(&err), cases[i].secret))
      fail_msg("%s: the password shows in: %s", cases[i].given, tt_error_text(&err));
    assert_non_null(strstr(err.message, "***"));
  }
}

/* A keyword/value string: a quoted password is masked whole (not up to
 * its space), an escaped one as written and as libpq reads it. */
static void test_conninfo_masked(void **state) {
  (void)state;
  char *red = tt_pg_redact_uri("host=h password='Quoted Secret' dbname=d");
  assert_string_equal(red, "host=h password='***' dbname=d");
  free(red);
  red = tt_pg_redact_uri("host=h password = Esc\\ aped dbname=d user=Esc aped");
  assert_string_equal(red, "host=h password = *** dbname=d user=***");
  free(red);
  red = tt_pg_redact_uri("pass%77ord=Odd-Key-Secret host=h");
  assert_string_equal(red, "pass%77ord=*** host=h");
  free(red);
}

/* The password libpq takes from PGPASSWORD is masked too (here it is also
 * the user name, which libpq's message may quote). */
static void test_pgpassword_masked(void **state) {
  (void)state;
  setenv("PGPASSWORD", "Env-Pw-Secret", 1);
  const char *given = "postgresql://Env-Pw-Secret@127.0.0.1:1/db";
  tt_db_target t = parse(given);
  assert_string_equal(t.shown, "postgresql://***@127.0.0.1:1/db");
  tt_db_target_free(&t);
  tt_error err;
  open_fails(given, &err);
  assert_null(strstr(tt_error_text(&err), "Env-Pw-Secret"));
  unsetenv("PGPASSWORD");
}

/* A message cut at its end (an error holds 767 bytes) does not keep the
 * start of a password either: with user names of every length, the cut
 * falls everywhere in the password libpq quotes. */
static void test_cut_password_masked(void **state) {
  (void)state;
  for (int k = 100; k < 400; k++) {
    char user[512];
    memset(user, 'u', (size_t)k);
    user[k] = '\0';
    char *given = tt_xasprintf("postgresql://%s:Truncated-Password-Value@[::1/db", user);
    tt_error err;
    open_fails(given, &err);
    if (strstr(err.message, "Tr"))
      fail_msg("user of %d bytes: the start of the password shows in: %s", k, err.message);
    free(given);
  }
}

/* Nothing named: a configuration error, nothing allocated. */
static void test_empty(void **state) {
  (void)state;
  tt_db_target t;
  tt_error err = TT_ERROR_INIT;
  assert_false(tt_db_target_parse("", &t, &err));
  assert_int_equal(err.kind, TT_ERR_CONFIG);
  assert_null(t.given);
  tt_db_target_free(&t); /* harmless on a target that failed to parse */
  err = (tt_error)TT_ERROR_INIT;
  assert_false(tt_db_target_parse(NULL, &t, &err));
  assert_int_equal(err.kind, TT_ERR_CONFIG);
  err = (tt_error)TT_ERROR_INIT;
  assert_null(tt_db_open("", NULL, &err));
  assert_int_equal(err.kind, TT_ERR_CONFIG);
}

/* Each kind's dialect before opening, and the facts of its engine. */
static void test_dialects(void **state) {
  (void)state;
  assert_string_equal(tt_db_kind_dialect(TT_DB_KIND_SQLITE), "SQLite");
  assert_string_equal(tt_db_kind_dialect(TT_DB_KIND_CSV), "SQLite");
  assert_string_equal(tt_db_kind_dialect(TT_DB_KIND_POSTGRES), "PostgreSQL");
  assert_string_equal(tt_db_path_dialect("x.csv"), "SQLite");
  assert_string_equal(tt_db_path_dialect("postgresql://h/db"), "PostgreSQL");
  const tt_db_dialect_facts *pg = tt_db_kind_facts(TT_DB_KIND_POSTGRES);
  assert_int_equal(pg->fold, TT_DB_FOLD_LOWER);
  assert_true(pg->schemas);
  assert_int_equal(pg->ident_quote, '"');
  const tt_db_dialect_facts *lite = tt_db_kind_facts(TT_DB_KIND_SQLITE);
  assert_int_equal(lite->fold, TT_DB_FOLD_NONE);
  assert_false(lite->schemas);
}

/* A handle opened from a target keeps its own copy of it, and names the
 * file as the user gave it. */
static void test_open_target_keeps_it(void **state) {
  (void)state;
  tt_db_target t = parse(g_scratch.db);
  tt_error err = TT_ERROR_INIT;
  tt_db *db = tt_db_open_target(&t, NULL, &err);
  assert_non_null(db);
  char *path = tt_xstrdup(t.path);
  tt_db_target_free(&t); /* the handle does not borrow it */
  const tt_db_target *kept = tt_db_get_target(db);
  assert_int_equal(kept->kind, TT_DB_KIND_SQLITE);
  assert_string_equal(kept->engine, "sqlite");
  assert_string_equal(kept->given, g_scratch.db);
  assert_string_equal(kept->path, path);
  assert_string_equal(tt_db_path(db), g_scratch.db);
  assert_string_equal(tt_db_dialect(db), "SQLite");
  assert_int_equal(tt_db_facts(db)->fold, TT_DB_FOLD_NONE);
  tt_result *r = tt_db_query(db, "SELECT count(*) FROM Genre", 26, &err);
  assert_non_null(r);
  assert_int_equal(tt_result_cell(r, 0, 0)->u.i, 25);
  tt_result_free(r);
  tt_db_close(db);
  /* tt_db_open is the same through a target */
  db = tt_db_open(g_scratch.db, NULL, &err);
  assert_non_null(db);
  assert_string_equal(tt_db_get_target(db)->path, path);
  tt_db_close(db);
  free(path);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_file),
      cmocka_unit_test(test_relative_path_and_symlink),
      cmocka_unit_test(test_missing_file),
      cmocka_unit_test(test_folder),
      cmocka_unit_test(test_csv_names),
      cmocka_unit_test(test_text_files),
      cmocka_unit_test(test_postgres_uris),
      cmocka_unit_test(test_redaction),
      cmocka_unit_test(test_password_forms_masked),
      cmocka_unit_test(test_conninfo_masked),
      cmocka_unit_test(test_pgpassword_masked),
      cmocka_unit_test(test_cut_password_masked),
      cmocka_unit_test(test_empty),
      cmocka_unit_test(test_dialects),
      cmocka_unit_test(test_duckdb_targets),
      cmocka_unit_test(test_open_target_keeps_it),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
