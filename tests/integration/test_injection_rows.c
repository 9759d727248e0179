/* test_injection_rows.c — every cell of ../shared/corpus/injection-rows.tsv
 * is stored in a scratch copy of chinook and read back through
 * `tabletalk sql`: JSON output returns it unchanged (escaped where JSON
 * escapes), delimited output keeps one row per row, and on a terminal no
 * control, bidi or invisible character gets through raw. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

static tu_scratch g_scratch;
#define g_db g_scratch.db
#define g_dir g_scratch.dir
static tu_row *g_rows;
static size_t g_n;

static int setup(void **state) {
  (void)state;
  tu_require_shared("corpus/injection-rows.tsv");
  tu_scratch_make(&g_scratch);
  g_rows = tu_corpus_load(tu_shared_path("corpus/injection-rows.tsv"), 1u << 1, &g_n);
  sqlite3 *h;
  if (sqlite3_open(g_db, &h) != SQLITE_OK) return -1;
  sqlite3_exec(h, "CREATE TABLE Planted(id TEXT PRIMARY KEY, cell TEXT)", NULL, NULL, NULL);
  sqlite3_stmt *st;
  sqlite3_prepare_v2(h, "INSERT INTO Planted VALUES (?, ?)", -1, &st, NULL);
  for (size_t i = 0; i < g_n; i++) {
    sqlite3_bind_text(st, 1, g_rows[i].field[0], -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, g_rows[i].field[1], (int)g_rows[i].len[1], SQLITE_STATIC);
    if (sqlite3_step(st) != SQLITE_DONE) return -1;
    sqlite3_reset(st);
  }
  sqlite3_finalize(st);
  sqlite3_close(h);
  return 0;
}

static int teardown(void **state) {
  (void)state;
  tu_corpus_free(g_rows, g_n);
  tu_scratch_remove(&g_scratch);
  return 0;
}

static void run_select(const char *id, const char *format, tu_run *r) {
  char *sql = tt_xasprintf("SELECT cell FROM Planted WHERE id = '%s'", id);
  char *argv[] = {(char *)tu_bin(), "sql", g_db, sql, "--format", (char *)format, NULL};
  tu_run_cmd(argv, NULL, 0, 10000, r);
  free(sql);
}

static void test_json_round_trip(void **state) {
  (void)state;
  assert_true(g_n >= 20);
  for (size_t i = 0; i < g_n; i++) {
    tu_run r;
    run_select(g_rows[i].field[0], "json", &r);
    assert_int_equal(r.status, 0);
    /* Raw ESC, C1 and bidi characters never appear in the JSON text. */
    for (size_t k = 0; k < r.out.len; k++) {
      uint32_t cp;
      size_t len = tt_utf8_decode((const unsigned char *)r.out.data + k, r.out.len - k, &cp);
      assert_true(len > 0);
      if (tt_cp_is_unsafe(cp) && cp != '\n') {
        fprintf(stderr, "%s: raw U+%04X in JSON output\n", g_rows[i].field[0], cp);
        fail();
      }
      k += len - 1;
    }
    json_error_t err;
    json_t *doc = json_loadb(r.out.data, r.out.len, JSON_ALLOW_NUL, &err);
    assert_non_null(doc);
    json_t *cell = json_array_get(json_array_get(json_object_get(doc, "rows"), 0), 0);
    assert_true(json_is_string(cell));
    if (json_string_length(cell) != g_rows[i].len[1] ||
        memcmp(json_string_value(cell), g_rows[i].field[1], g_rows[i].len[1]) != 0) {
      fprintf(stderr, "%s: cell did not round-trip\n", g_rows[i].field[0]);
      fail();
    }
    assert_int_equal(json_integer_value(json_object_get(doc, "row_count")), 1);
    json_decref(doc);
    tu_run_free(&r);
  }
}

/* The escapes our own terminal output may contain. */
static size_t our_sgr(const char *s, size_t n) {
  static const char *const seqs[] = {"\033[0m", "\033[1m", "\033[2m"};
  for (size_t i = 0; i < 3; i++) {
    size_t l = strlen(seqs[i]);
    if (n >= l && memcmp(s, seqs[i], l) == 0) return l;
  }
  return 0;
}

/* No raw control (beyond the pty's own CR LF), bidi or invisible code
 * point; a variation selector only directly after a visible character. */
static void assert_terminal_safe(const char *id, const tt_buf *out) {
  const unsigned char *p = (const unsigned char *)out->data;
  bool after_visible = false;
  for (size_t i = 0; i < out->len;) {
    size_t sgr = our_sgr(out->data + i, out->len - i);
    if (sgr) {
      i += sgr;
      continue;
    }
    uint32_t cp;
    size_t k = tt_utf8_decode(p + i, out->len - i, &cp);
    if (k == 0) {
      fprintf(stderr, "%s: invalid UTF-8 on the terminal at %zu\n", id, i);
      fail();
    }
    bool vs = cp == 0xFE0E || cp == 0xFE0F; /* presentation selectors may follow a character */
    bool ok = !tt_cp_is_unsafe(cp) || cp == '\n' || cp == '\r' || (vs && after_visible);
    if (!ok) {
      fprintf(stderr, "%s: raw U+%04X reached the terminal at byte %zu\n", id, cp, i);
      fail();
    }
    after_visible = !tt_cp_is_unsafe(cp) && !vs;
    i += k;
  }
}

static void test_terminal_escaped(void **state) {
  (void)state;
  for (int color = 0; color < 2; color++) {
    if (color) unsetenv("NO_COLOR");
    else setenv("NO_COLOR", "1", 1);
    setenv("TERM", "xterm-256color", 1);
    for (size_t i = 0; i < g_n; i++) {
      const char *id = g_rows[i].field[0];
      char *sql = tt_xasprintf("SELECT id, cell FROM Planted WHERE id = '%s'", id);
      char *argv[] = {(char *)tu_bin(), "sql", g_db, sql, NULL};
      tu_run r;
      tu_run_pty(argv, 200, 10000, &r);
      free(sql);
      assert_int_equal(r.status, 0);
      assert_non_null(strstr(tt_buf_cstr(&r.out), "1 row"));
      /* a box table, or the expanded layout when a cell is wider than the terminal */
      assert_true(strstr(tt_buf_cstr(&r.out), "┌") || strstr(tt_buf_cstr(&r.out), "─[ RECORD 1 ]"));
      if (!color) assert_null(memchr(r.out.data, 0x1B, r.out.len));
      assert_terminal_safe(id, &r.out);
      tu_run_free(&r);
    }
  }
  unsetenv("NO_COLOR");
}

static const tu_row *find_row(const char *id) {
  for (size_t i = 0; i < g_n; i++)
    if (strcmp(g_rows[i].field[0], id) == 0) return &g_rows[i];
  return NULL;
}

static void test_visible_escapes(void **state) {
  (void)state;
  static const struct { const char *id, *shown; } cases[] = {
      {"I015", "\\x1B[2J"},        /* ESC shown, not obeyed */
      {"I021", "text\\rSYSTEM"},   /* carriage return shown */
      {"I024", "Ig<U+200B>nore"},  /* zero-width space shown */
      {"I026", "<U+202E>SNOIT"},   /* bidi override shown */
      {"I043", "<U+FE01>"},        /* excess variation selector shown */
      {"I029", "…[10,"},           /* long cell cut, length given */
  };
  setenv("NO_COLOR", "1", 1);
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    if (!find_row(cases[i].id)) continue; /* the corpus may change */
    char *sql = tt_xasprintf("SELECT cell FROM Planted WHERE id = '%s'", cases[i].id);
    char *argv[] = {(char *)tu_bin(), "sql", g_db, sql, NULL};
    tu_run r;
    tu_run_pty(argv, 300, 10000, &r);
    free(sql);
    if (!strstr(tt_buf_cstr(&r.out), cases[i].shown)) {
      fprintf(stderr, "%s: expected to see %s in:\n%s\n", cases[i].id, cases[i].shown,
              tt_buf_cstr(&r.out));
      fail();
    }
    tu_run_free(&r);
  }
  unsetenv("NO_COLOR");
}

static size_t count_lines(const tt_buf *b) {
  size_t n = 0;
  for (size_t i = 0; i < b->len; i++) n += b->data[i] == '\n';
  return n;
}

static void test_delimited_keep_rows(void **state) {
  (void)state;
  const char *formats[] = {"tsv", "table"};
  for (size_t f = 0; f < 2; f++) {
    for (size_t i = 0; i < g_n; i++) {
      tu_run r;
      run_select(g_rows[i].field[0], formats[f], &r);
      assert_int_equal(r.status, 0);
      /* header + one row (+ rule and footer for the table) */
      assert_int_equal(count_lines(&r.out), f == 0 ? 2 : 4);
      tu_run_free(&r);
    }
  }
  /* CSV quotes the embedded newline instead: parse the quoting. */
  const tu_row *row = find_row("I036");
  if (row) {
    tu_run r;
    run_select("I036", "csv", &r);
    const char *body = strstr(tt_buf_cstr(&r.out), "\r\n");
    assert_non_null(body);
    assert_int_equal(body[2], '"');
    tu_run_free(&r);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_json_round_trip),
      cmocka_unit_test(test_terminal_escaped),
      cmocka_unit_test(test_visible_escapes),
      cmocka_unit_test(test_delimited_keep_rows),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
