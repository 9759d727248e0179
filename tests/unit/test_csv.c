/* test_csv.c — units of CSV files opened as a database, on real files in a
 * scratch folder: quoting, BOM, accents, line ends, the delimiter guess,
 * type inference, the header rule and its overrides, names of tables and
 * columns, folders, hostile inputs (each an error naming the line), the
 * guard's refusals, one shared image that follows the files, nothing
 * written beside them, a folder read only inside itself (links out, pipes,
 * sockets skipped with a note), and a file appended to while it is loaded
 * read as of one moment, its loading again bounded by the time limit. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "db/db.h"
#include "testutil.h"

static char *g_dir;

static int setup(void **state) {
  (void)state;
  g_dir = tu_mkdtemp();
  return 0;
}

static int teardown(void **state) {
  (void)state;
  tu_rmtree(g_dir);
  free(g_dir);
  return 0;
}

/* Writes n bytes to <g_dir>/name; returns the path (caller frees). */
static char *put(const char *name, const char *bytes, size_t n) {
  char *path = tt_xasprintf("%s/%s", g_dir, name);
  FILE *f = fopen(path, "wb");
  assert_non_null(f);
  assert_int_equal(fwrite(bytes, 1, n, f), n);
  fclose(f);
  return path;
}

static char *puts_file(const char *name, const char *text) { return put(name, text, strlen(text)); }

static tt_db *open_ok(const char *path, tt_csv_header header) {
  tt_db_opts o = tt_db_default_opts();
  o.csv_header = header;
  tt_error err;
  tt_db *db = tt_db_open(path, &o, &err);
  if (!db) fprintf(stderr, "open %s: %s\n", path, err.message);
  assert_non_null(db);
  return db;
}

/* The error of opening path; fails the test when it opens. */
static tt_error open_err(const char *path) {
  tt_error err;
  memset(&err, 0, sizeof err);
  tt_db *db = tt_db_open(path, NULL, &err);
  if (db) fprintf(stderr, "%s opened, an error was expected\n", path);
  assert_null(db);
  assert_int_equal(err.kind, TT_ERR_IO);
  return err;
}

static void expect_msg(const tt_error *err, const char *part) {
  if (!strstr(err->message, part)) fprintf(stderr, "message: %s\nwanted: %s\n", err->message, part);
  assert_non_null(strstr(err->message, part));
}

/* The rows of sql as text: cells joined by |, rows by \n, NULL as NULL. */
static char *rows(tt_db *db, const char *sql) {
  tt_error err;
  tt_result *r = tt_db_query(db, sql, strlen(sql), &err);
  if (!r) fprintf(stderr, "%s: %s\n", sql, err.message);
  assert_non_null(r);
  tt_buf b = TT_BUF_INIT;
  for (size_t i = 0; i < r->nrows; i++) {
    for (size_t c = 0; c < r->ncols; c++) {
      if (c) tt_buf_putc(&b, '|');
      tt_value_to_text(&b, tt_result_cell(r, i, c));
    }
    tt_buf_putc(&b, '\n');
  }
  tt_result_free(r);
  return tt_buf_detach(&b);
}

static void expect_rows(tt_db *db, const char *sql, const char *want) {
  char *got = rows(db, sql);
  if (strcmp(got, want)) fprintf(stderr, "%s\ngot:\n%s\nwant:\n%s\n", sql, got, want);
  assert_string_equal(got, want);
  free(got);
}

/* The folder's entries, sorted, one a line. */
static char *listing(const char *dir) {
  size_t n = 0;
  char **v = NULL;
  DIR *d = opendir(dir);
  assert_non_null(d);
  struct dirent *e;
  while ((e = readdir(d))) {
    v = tt_xrealloc(v, (n + 1) * sizeof *v);
    v[n++] = tt_xstrdup(e->d_name);
  }
  closedir(d);
  tt_buf b = TT_BUF_INIT;
  for (size_t i = 0; i < n; i++)
    for (size_t j = i + 1; j < n; j++)
      if (strcmp(v[j], v[i]) < 0) {
        char *t = v[i];
        v[i] = v[j];
        v[j] = t;
      }
  for (size_t i = 0; i < n; i++) tt_buf_printf(&b, "%s\n", v[i]);
  tt_strv_free(v, n);
  return tt_buf_detach(&b);
}

static void test_quotes_bom_accents(void **state) {
  (void)state;
  char *p = puts_file("people.csv",
                      "\xEF\xBB\xBFid,name,city,note,code,price\r\n"
                      "1,José,Zürich,\"says \"\"hi\"\", then\r\nleaves\",00123,1.5\r\n"
                      "2,Ana Muñoz,\"Málaga, ES\",plain,00456,2\r\n"
                      "3,Ñandú,\"Köln\",,00789,\r\n");
  char *before = listing(g_dir);
  tt_db *db = open_ok(p, TT_CSV_HEADER_AUTO);
  expect_rows(db, "SELECT * FROM people ORDER BY id",
              "1|José|Zürich|says \"hi\", then\r\nleaves|00123|1.5\n"
              "2|Ana Muñoz|Málaga, ES|plain|00456|2.0\n"
              "3|Ñandú|Köln|NULL|00789|NULL\n");
  expect_rows(db, "SELECT typeof(id), typeof(name), typeof(code), typeof(price) FROM people LIMIT 1",
              "integer|text|text|real\n");
  expect_rows(db, "SELECT name FROM people WHERE city LIKE 'Z%'", "José\n");
  /* the declared types are what the schema shows */
  tt_error err;
  tt_catalog *cat = tt_db_catalog_load(db, &err);
  assert_non_null(cat);
  assert_int_equal(cat->ntables, 1);
  assert_string_equal(cat->tables[0].name, "people");
  assert_string_equal(cat->tables[0].cols[0].type, "INTEGER");
  assert_string_equal(cat->tables[0].cols[4].type, "TEXT");
  assert_string_equal(cat->tables[0].cols[5].type, "REAL");
  assert_int_equal(cat->tables[0].row_count, 3);
  tt_catalog_free(cat);
  tt_db_close(db);
  char *after = listing(g_dir);
  assert_string_equal(before, after); /* nothing written beside the file */
  free(before);
  free(after);
  unlink(p);
  free(p);
}

static void test_types(void **state) {
  (void)state;
  char *p = puts_file("types.csv",
                      "i,r,z,big,neg,e,mixed,blank,dot,plus\n"
                      "1,1.5,007,99999999999999999999,-5,1e3,1,,1.,+1\n"
                      "0,2,010,1,-0.5,2.5E-2,x,,2.,+2\n");
  tt_db *db = open_ok(p, TT_CSV_HEADER_AUTO);
  expect_rows(db,
              "SELECT typeof(i), typeof(r), typeof(z), typeof(big), typeof(neg), typeof(e), "
              "typeof(mixed), typeof(blank), typeof(dot), typeof(plus) FROM types",
              "integer|real|text|text|real|real|text|null|text|integer\n"
              "integer|real|text|text|real|real|text|null|text|integer\n");
  expect_rows(db, "SELECT z, big, e, neg FROM types",
              "007|99999999999999999999|1000.0|-5.0\n010|1|0.025|-0.5\n");
  expect_rows(db, "SELECT type FROM pragma_table_info('types') WHERE name IN ('mixed','blank','neg')",
              "REAL\nTEXT\nTEXT\n");
  tt_db_close(db);
  unlink(p);
  free(p);
}

static void test_header_rule(void **state) {
  (void)state;
  /* numbers under text: a header */
  char *a = puts_file("a.csv", "year,amount\n2023,1.5\n2024,2\n");
  tt_db *db = open_ok(a, TT_CSV_HEADER_AUTO);
  expect_rows(db, "SELECT year, amount FROM a", "2023|1.5\n2024|2.0\n");
  tt_db_close(db);
  /* numbers on the first line too: no header */
  char *b = puts_file("b.csv", "1,2.5,x\n2,3.5,y\n");
  db = open_ok(b, TT_CSV_HEADER_AUTO);
  expect_rows(db, "SELECT column_1, column_2, column_3 FROM b", "1|2.5|x\n2|3.5|y\n");
  tt_db_close(db);
  /* only text: the first line is taken as the header */
  char *c = puts_file("c.csv", "name,town\nAna,Lyon\n");
  db = open_ok(c, TT_CSV_HEADER_AUTO);
  expect_rows(db, "SELECT name, town FROM c", "Ana|Lyon\n");
  tt_db_close(db);
  /* overrides */
  db = open_ok(c, TT_CSV_HEADER_NO);
  expect_rows(db, "SELECT column_1, column_2 FROM c", "name|town\nAna|Lyon\n");
  tt_db_close(db);
  db = open_ok(b, TT_CSV_HEADER_YES);
  expect_rows(db, "SELECT \"1\", \"2.5\", x FROM b", "2|3.5|y\n");
  tt_db_close(db);
  /* only a header: an empty table */
  char *d = puts_file("d.csv", "id,name\n");
  db = open_ok(d, TT_CSV_HEADER_AUTO);
  expect_rows(db, "SELECT count(*), (SELECT group_concat(name) FROM pragma_table_info('d')) FROM d",
              "0|id,name\n");
  tt_db_close(db);
  char *paths[] = {a, b, c, d};
  for (size_t i = 0; i < 4; i++) {
    unlink(paths[i]);
    free(paths[i]);
  }
}

static void test_names(void **state) {
  (void)state;
  /* empty, duplicate (any case) and padded header names */
  char *p = puts_file("Sales 2024 (EU).csv", "id,,Name, name ,id\n1,2,3,4,5\n");
  tt_db *db = open_ok(p, TT_CSV_HEADER_AUTO);
  expect_rows(db, "SELECT group_concat(name, ',') FROM pragma_table_info('Sales_2024_EU')",
              "id,column_2,Name,name_2,id_2\n");
  tt_db_close(db);
  unlink(p);
  free(p);
  p = puts_file("2024.csv", "a\nx\n");
  db = open_ok(p, TT_CSV_HEADER_AUTO);
  expect_rows(db, "SELECT a FROM t_2024", "x\n");
  tt_db_close(db);
  unlink(p);
  free(p);
}

static void test_delimiters(void **state) {
  (void)state;
  char *p = puts_file("semi.csv", "name;amount;note\nAna;1,5;\"a;b\"\nBo;2;c\n");
  tt_db *db = open_ok(p, TT_CSV_HEADER_AUTO);
  /* a decimal comma in a ';' file */
  expect_rows(db, "SELECT name, amount, note FROM semi", "Ana|1.5|a;b\nBo|2.0|c\n");
  tt_db_close(db);
  unlink(p);
  free(p);
  p = puts_file("tabs.tsv", "name\tcity\nAna\tParis, FR\n");
  db = open_ok(p, TT_CSV_HEADER_AUTO);
  expect_rows(db, "SELECT name, city FROM tabs", "Ana|Paris, FR\n");
  tt_db_close(db);
  unlink(p);
  free(p);
  p = puts_file("pipes.CSV", "a|b\n1|2\n");
  db = open_ok(p, TT_CSV_HEADER_AUTO);
  expect_rows(db, "SELECT a + b FROM pipes", "3\n");
  tt_db_close(db);
  unlink(p);
  free(p);
}

static void test_ragged_and_blank(void **state) {
  (void)state;
  /* a short row is padded with NULL; blank lines are skipped; no final
   * line end */
  char *p = puts_file("short.csv", "a,b,c\n1,2\n\n3,4,5");
  tt_db *db = open_ok(p, TT_CSV_HEADER_AUTO);
  expect_rows(db, "SELECT a, b, c FROM short", "1|2|NULL\n3|4|5\n");
  tt_db_close(db);
  unlink(p);
  free(p);
  /* a long row is kept: its fields past the last column are left out,
   * and the table's data note says so (not its description: a CSV file has
   * no owner comments, and private mode leaves data notes out) */
  p = puts_file("long.csv", "a,b\n1,2\n3,4\n5,6,7\n8\n");
  db = open_ok(p, TT_CSV_HEADER_AUTO);
  expect_rows(db, "SELECT a, b FROM long", "1|2\n3|4\n5|6\n8|NULL\n");
  tt_error err;
  tt_catalog *cat = tt_db_catalog_load(db, &err);
  assert_non_null(cat);
  assert_null(cat->tables[0].description);
  assert_non_null(cat->tables[0].data_note);
  assert_string_equal(cat->tables[0].data_note,
                      "','-separated; 1 short row, at line 5, read with NULLs; 1 long row, at "
                      "line 4: fields past column 2 left out");
  tt_catalog_free(cat);
  tt_db_close(db);
  unlink(p);
  free(p);
}

static void test_hostile(void **state) {
  (void)state;
  /* a quote never closed: the line where it opened */
  char *p = puts_file("open.csv", "a,b\n1,2\n3,\"four\n5,6\n7,8\n");
  tt_error err = open_err(p);
  expect_msg(&err, "open.csv:3: a quoted field is never closed");
  unlink(p);
  free(p);
  /* text after a closing quote */
  p = puts_file("after.csv", "a,b\n1,\"x\"y\n");
  err = open_err(p);
  expect_msg(&err, "after.csv:2: text after the closing quote");
  unlink(p);
  free(p);
  /* a NUL byte */
  p = put("nul.csv", "a,b\n1,2\n3,x\0y\n", 15);
  err = open_err(p);
  expect_msg(&err, "nul.csv:3: a NUL byte");
  unlink(p);
  free(p);
  /* Latin-1, not UTF-8: the line, even after a quoted line end */
  p = puts_file("latin.csv", "a,b\n\"x\ny\",2\n3,caf\xE9\n");
  err = open_err(p);
  expect_msg(&err, "latin.csv:4: byte 0xE9 in field 2 is not UTF-8");
  expect_msg(&err, "iconv");
  unlink(p);
  free(p);
  /* UTF-16 */
  p = put("wide.csv", "\xFF\xFE" "a\0,\0b\0", 8);
  err = open_err(p);
  expect_msg(&err, "wide.csv:1: the file is UTF-16");
  unlink(p);
  free(p);
  /* an empty file */
  p = puts_file("empty.csv", "");
  err = open_err(p);
  expect_msg(&err, "empty.csv: the file is empty");
  unlink(p);
  free(p);
  /* 10,000 columns on one line */
  tt_buf b = TT_BUF_INIT;
  for (int i = 0; i < 10000; i++) tt_buf_printf(&b, "%sc%d", i ? "," : "", i);
  tt_buf_puts(&b, "\n");
  p = put("wide10k.csv", b.data, b.len);
  tt_buf_free(&b);
  err = open_err(p);
  expect_msg(&err, "wide10k.csv:1: more than 500 fields");
  unlink(p);
  free(p);
  /* a field past the length limit */
  tt_buf big = TT_BUF_INIT;
  tt_buf_puts(&big, "a\n\"");
  tt_buf_repeat(&big, "x", 1100000);
  tt_buf_puts(&big, "\"\n");
  p = put("huge.csv", big.data, big.len);
  tt_buf_free(&big);
  err = open_err(p);
  expect_msg(&err, "huge.csv:2: a field longer than");
  unlink(p);
  free(p);
  /* missing */
  p = tt_xasprintf("%s/nope.csv", g_dir);
  err = open_err(p);
  expect_msg(&err, "no such file");
  assert_int_equal(access(p, F_OK), -1);
  free(p);
}

static void test_folder(void **state) {
  (void)state;
  char *sub = tt_xasprintf("%s/shop", g_dir);
  assert_int_equal(mkdir(sub, 0700), 0);
  char *c = tt_xasprintf("%s/customers.csv", sub), *o = tt_xasprintf("%s/Order Lines.tsv", sub),
       *x = tt_xasprintf("%s/notes.txt", sub), *d1 = tt_xasprintf("%s/a-b.csv", sub),
       *d2 = tt_xasprintf("%s/a_b.csv", sub);
  tu_write_file(c, "id,name\n1,Zoë\n2,Ñico\n");
  tu_write_file(o, "customer_id\tamount\n1\t2.5\n1\t3\n2\t10\n");
  tu_write_file(x, "not a table\n");
  tu_write_file(d1, "v\n1\n");
  tu_write_file(d2, "v\n2\n");
  /* a link to a file elsewhere is skipped, with a note; a link to a file
   * of the folder is one of its tables, named after the link */
  char *far = puts_file("far away.csv", "k\n42\n"), *link = tt_xasprintf("%s/linked.csv", sub);
  assert_int_equal(symlink(far, link), 0);
  char *inside = tt_xasprintf("%s/latest.csv", sub);
  assert_int_equal(symlink("customers.csv", inside), 0);
  char *before = listing(sub);
  tt_db *db = open_ok(sub, TT_CSV_HEADER_AUTO);
  expect_rows(db, "SELECT count(*) FROM latest", "2\n");
  expect_rows(db,
              "SELECT c.name, sum(o.amount) FROM customers c JOIN Order_Lines o ON o.customer_id = c.id "
              "GROUP BY c.id ORDER BY c.id",
              "Zoë|5.5\nÑico|10.0\n");
  expect_rows(db, "SELECT name FROM sqlite_schema ORDER BY name",
              "Order_Lines\na_b\na_b_2\ncustomers\nlatest\n");
  assert_non_null(tt_db_warning(db));
  assert_non_null(strstr(tt_db_warning(db), "linked.csv (a symbolic link that leads out of the folder)"));
  expect_rows(db, "SELECT (SELECT v FROM a_b), (SELECT v FROM a_b_2)", "1|2\n");
  tt_db_close(db);
  char *after = listing(sub);
  assert_string_equal(before, after);
  free(before);
  free(after);
  /* an error in one file names it */
  tu_write_file(d2, "v\n\"2\n");
  tt_error err = open_err(sub);
  expect_msg(&err, "shop/a_b.csv:2: a quoted field is never closed");
  unlink(link);
  unlink(inside);
  unlink(far);
  free(link);
  free(inside);
  free(far);
  unlink(c);
  unlink(o);
  unlink(d1);
  unlink(d2);
  /* a folder without CSV files */
  err = open_err(sub);
  expect_msg(&err, "no .csv or .tsv file");
  unlink(x);
  rmdir(sub);
  free(sub);
  free(c);
  free(o);
  free(x);
  free(d1);
  free(d2);
}

static void test_read_only(void **state) {
  (void)state;
  char *p = puts_file("ro.csv", "id,name\n1,Ana\n");
  tt_db *db = open_ok(p, TT_CSV_HEADER_AUTO);
  static const struct {
    const char *sql;
    tt_db_refusal why;
  } cases[] = {
      {"DELETE FROM ro", TT_REFUSE_WRITE},
      {"INSERT INTO ro VALUES (2, 'Bo')", TT_REFUSE_WRITE},
      {"UPDATE ro SET name = 'x'", TT_REFUSE_WRITE},
      {"DROP TABLE ro", TT_REFUSE_SCHEMA},
      {"CREATE TABLE t(x)", TT_REFUSE_SCHEMA},
      {"ATTACH 'x.db' AS x", TT_REFUSE_ATTACH},
      {"PRAGMA writable_schema=1", TT_REFUSE_PRAGMA},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    tt_error err;
    tt_result *r = tt_db_query(db, cases[i].sql, strlen(cases[i].sql), &err);
    assert_null(r);
    assert_int_equal(err.kind, TT_ERR_REFUSED);
    assert_int_equal(err.reason, cases[i].why);
  }
  expect_rows(db, "SELECT count(*) FROM ro", "1\n");
  tt_db_close(db);
  char *x = tt_xasprintf("%s/x.db", g_dir);
  assert_int_equal(access(x, F_OK), -1);
  free(x);
  unlink(p);
  free(p);
}

static void test_shared_and_reloaded(void **state) {
  (void)state;
  char *p = puts_file("live.csv", "id,v\n1,a\n");
  tt_db *one = open_ok(p, TT_CSV_HEADER_AUTO), *two = open_ok(p, TT_CSV_HEADER_AUTO);
  tt_db_close(one);
  expect_rows(two, "SELECT v FROM live", "a\n");
  /* a snapshot works as on a file */
  uint64_t v1, v2;
  tt_error err;
  assert_true(tt_db_snapshot_begin(two, &v1, &err));
  expect_rows(two, "SELECT count(*) FROM live", "1\n");
  tt_db_snapshot_end(two);
  assert_true(tt_db_snapshot_begin(two, &v2, &err));
  tt_db_snapshot_end(two);
  assert_true(v1 == v2);
  /* a changed file: every handle reads the new contents at its next query,
   * from one new image; a change that breaks the file fails the query with
   * the line, and the next good version works again */
  /* each change gets a later modification time, set explicitly (a clock of
   * coarse grain could give the same one) */
  tu_write_file(p, "id,v\n1,a\n2,b\n");
  tu_mtime_later(p, 1);
  tt_db *three = open_ok(p, TT_CSV_HEADER_AUTO);
  expect_rows(three, "SELECT count(*) FROM live", "2\n");
  expect_rows(two, "SELECT count(*) FROM live", "2\n");
  assert_true(tt_db_snapshot_begin(two, &v2, &err));
  tt_db_snapshot_end(two);
  assert_true(v1 != v2);
  tu_write_file(p, "id,v\n1,a\n2,\"b\n");
  tu_mtime_later(p, 2);
  assert_null(tt_db_query(two, "SELECT 1", 8, &err));
  expect_msg(&err, "live.csv:3: a quoted field is never closed");
  tu_write_file(p, "id,v\n1,a\n2,b\n3,c\n");
  tu_mtime_later(p, 3);
  expect_rows(two, "SELECT count(*) FROM live", "3\n");
  expect_rows(three, "SELECT count(*) FROM live", "3\n");
  tt_db_close(two);
  tt_db_close(three);
  unlink(p);
  free(p);
}

/* A folder from an untrusted archive reads only regular files inside it:
 * links that lead out of it (relative or absolute, to a file or a device),
 * links to nothing, a named pipe (never opened, so nothing blocks), a
 * socket and a folder are skipped, each named in a note (escaped) that the
 * catalog carries too; a link to a file inside the folder is read. A file
 * the user names is opened as given, a link too; a named pipe named so is
 * an error, not a wait. */
static void test_folder_stays_inside(void **state) {
  (void)state;
  char *ds = tt_xasprintf("%s/dataset", g_dir);
  assert_int_equal(mkdir(ds, 0700), 0);
  char *secret = puts_file("secret.csv", "key\nSECRET-KEY-0042\n");
  char *good = tt_xasprintf("%s/good.csv", ds);
  tu_write_file(good, "id,name\n1,Ana\n");
  struct { const char *name, *target, *why; } links[] = {
      {"notes.csv", "../secret.csv", "notes.csv (a symbolic link that leads out of the folder)"},
      {"abs.csv", secret, "abs.csv (a symbolic link that leads out of the folder)"},
      {"null.csv", "/dev/null", "null.csv (a symbolic link that leads out of the folder)"},
      {"dangling.csv", "nowhere.csv", "dangling.csv (a symbolic link to nothing)"},
      {"pipelink.csv", "pipe.csv", "pipelink.csv (a named pipe (FIFO), not a regular file)"},
      {"again.csv", "good.csv", NULL}, /* inside: read */
      {"evil\x1b]0;x\x07.csv", "../secret.csv", "evil\\x1B]0;x\\x07.csv (a symbolic link"},
  };
  for (size_t i = 0; i < sizeof links / sizeof links[0]; i++) {
    char *at = tt_xasprintf("%s/%s", ds, links[i].name);
    assert_int_equal(symlink(links[i].target, at), 0);
    free(at);
  }
  char *fifo = tt_xasprintf("%s/pipe.csv", ds), *sub = tt_xasprintf("%s/sub.csv", ds),
       *sock = tt_xasprintf("%s/sock.csv", ds);
  assert_int_equal(mkfifo(fifo, 0600), 0);
  assert_int_equal(mkdir(sub, 0700), 0);
  int sfd = socket(AF_UNIX, SOCK_STREAM, 0);
  struct sockaddr_un addr = {.sun_family = AF_UNIX};
  assert_true(strlen(sock) < sizeof addr.sun_path);
  strcpy(addr.sun_path, sock);
  assert_int_equal(bind(sfd, (struct sockaddr *)&addr, sizeof addr), 0);

  tt_db *db = open_ok(ds, TT_CSV_HEADER_AUTO);
  expect_rows(db, "SELECT name FROM sqlite_schema ORDER BY name", "again\ngood\n");
  expect_rows(db, "SELECT name FROM again", "Ana\n");
  const char *w = tt_db_warning(db);
  assert_non_null(w);
  assert_non_null(strstr(w, "skipped in "));
  for (size_t i = 0; i < sizeof links / sizeof links[0]; i++)
    if (links[i].why && !strstr(w, links[i].why)) fail_msg("no \"%s\" in: %s", links[i].why, w);
  assert_non_null(strstr(w, "pipe.csv (a named pipe (FIFO), not a regular file)"));
  assert_non_null(strstr(w, "sock.csv (a socket, not a regular file)"));
  assert_non_null(strstr(w, "sub.csv (a folder, not a file)"));
  assert_null(strchr(w, '\x1b'));
  assert_null(strstr(w, "again.csv"));
  tt_error err;
  tt_catalog *cat = tt_db_catalog_load(db, &err);
  assert_non_null(cat);
  assert_string_equal(cat->warning, w);
  assert_int_equal(cat->ntables, 2);
  tt_catalog_free(cat);
  tt_db_close(db);

  /* named by the user: a link is followed, a named pipe is refused at once */
  char *given = tt_xasprintf("%s/given.csv", g_dir);
  assert_int_equal(symlink(secret, given), 0);
  db = open_ok(given, TT_CSV_HEADER_AUTO);
  expect_rows(db, "SELECT key FROM given", "SECRET-KEY-0042\n");
  assert_null(tt_db_warning(db));
  tt_db_close(db);
  err = open_err(fifo);
  expect_msg(&err, "is not a regular file");

  close(sfd);
  unlink(given);
  free(given);
  free(fifo);
  free(sub);
  free(sock);
  free(good);
  free(secret);
  free(ds);
}

/* A file that another process appends to while it is loaded is read as of
 * one moment: rows only ever come in order and whole (the writer splits
 * each line into two writes, so that the loader meets half lines: only the
 * last row may be one, when the writer paused longer than a moment between
 * the two halves), and each query either sees a prefix of the file or says
 * the file is changing (or that the time limit passed); it never waits for
 * the writer to stop. */
static void test_appended_while_loading(void **state) {
  (void)state;
  char *p = puts_file("growing.csv", "a,b\n0,0\n");
  int ready[2];
  assert_int_equal(pipe(ready), 0);
  pid_t child = fork();
  assert_true(child >= 0);
  if (child == 0) {
    close(ready[0]);
    FILE *f = fopen(p, "ab");
    if (!f) _exit(1);
    setvbuf(f, NULL, _IONBF, 0);
    for (long i = 1; i <= 200000; i++) {
      fprintf(f, "%ld,", i);
      fprintf(f, "%ld\n", 2 * i);
      if (i == 1000 && write(ready[1], "x", 1) != 1) _exit(1);
    }
    _exit(0);
  }
  close(ready[1]);
  char c;
  assert_int_equal(read(ready[0], &c, 1), 1); /* the writer is under way */
  close(ready[0]);
  tt_db_opts o = tt_db_default_opts();
  o.timeout_s = 2;
  tt_error err;
  tt_db *db = NULL;
  while (!db) { /* opening may meet the file changing, and say so */
    db = tt_db_open(p, &o, &err);
    if (!db) assert_non_null(strstr(err.message, "the file is changing"));
  }
  long last = 0, good = 0;
  int status;
  bool writing = true;
  for (int k = 0; k < 200 && (writing || good == 0); k++) {
    const char *sql = "SELECT count(*), sum(b = 2 * a), max(a) FROM growing";
    tt_result *r = tt_db_query(db, sql, strlen(sql), &err);
    if (!r) {
      bool said = strstr(err.message, "the file is changing") || err.kind == TT_ERR_TIMEOUT;
      if (!said) fail_msg("query failed: %s", err.message);
    } else {
      int64_t n = tt_result_cell(r, 0, 0)->u.i, whole = tt_result_cell(r, 0, 1)->u.i;
      assert_true(whole == n || whole == n - 1);              /* at most the last row half */
      assert_int_equal(tt_result_cell(r, 0, 2)->u.i, n - 1); /* rows 0..n-1, in order */
      assert_true(n >= last);
      last = n;
      good++;
      tt_result_free(r);
    }
    if (writing && waitpid(child, &status, WNOHANG) == child) writing = false;
  }
  if (writing) {
    kill(child, SIGKILL);
    waitpid(child, &status, 0);
  } else {
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }
  assert_true(good > 0);
  tt_db_close(db);
  free(p);
}

/* Loading a changed file again before a query keeps to the query's time
 * limit: a file too large to load in it fails that query with the time
 * limit, naming the file, rather than running on. */
static void test_reload_bounded(void **state) {
  (void)state;
  tt_buf big = TT_BUF_INIT;
  tt_buf_puts(&big, "a,b,c\n");
  for (int i = 0; i < 300000; i++) tt_buf_printf(&big, "%d,%d,row %d\n", i, i * 3, i);
  char *p = put("slow.csv", big.data, big.len);
  tt_db_opts o = tt_db_default_opts();
  o.timeout_s = 0.001;
  tt_error err;
  tt_db *db = tt_db_open(p, &o, &err); /* the first load is not a query's */
  assert_non_null(db);
  FILE *f = fopen(p, "ab");
  fputs("300000,900000,the last row\n", f);
  fclose(f);
  tu_mtime_later(p, 1);
  assert_null(tt_db_query(db, "SELECT count(*) FROM slow", 25, &err));
  assert_int_equal(err.kind, TT_ERR_TIMEOUT);
  expect_msg(&err, "changed, and loading it again did not finish within the query's time limit");
  /* with time enough, the next query loads it */
  o.timeout_s = 60;
  tt_db_set_opts(db, &o);
  expect_rows(db, "SELECT count(*) FROM slow", "300001\n");
  tt_db_close(db);
  tt_buf_free(&big);
  free(p);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_quotes_bom_accents), cmocka_unit_test(test_types),
      cmocka_unit_test(test_header_rule),        cmocka_unit_test(test_names),
      cmocka_unit_test(test_delimiters),         cmocka_unit_test(test_ragged_and_blank),
      cmocka_unit_test(test_hostile),            cmocka_unit_test(test_folder),
      cmocka_unit_test(test_read_only),          cmocka_unit_test(test_shared_and_reloaded),
      cmocka_unit_test(test_folder_stays_inside), cmocka_unit_test(test_appended_while_loading),
      cmocka_unit_test(test_reload_bounded),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
