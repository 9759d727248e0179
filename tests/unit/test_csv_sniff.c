/* test_csv_sniff.c — units of the engine-neutral CSV column sniffer
 * (db/csv_sniff.h): null tokens, numbers that are and are not, a few odd
 * values read as NULL with a note, codes and huge integers kept as text,
 * decimal commas and thousands separators (and the ambiguous cases kept as
 * text), ISO dates and times, ragged rows, the header vote, --csv-types
 * overrides, and the verdict and the converted cells agreeing on random
 * columns. Columns are fed as the loader feeds them: one value at a time. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db/csv_sniff.h"

/* A one-column sniffer of the values (NULL ends them), finished. */
static tt_csv_sniff *sniff1(char delim, const tt_csv_overrides *ov, const char *const *v) {
  tt_csv_sniff *s = tt_csv_sniff_new(1, delim);
  for (size_t i = 0; v[i]; i++) {
    tt_csv_sniff_record(s, 1, (long)i + 2);
    tt_csv_sniff_value(s, 0, v[i], strlen(v[i]));
  }
  char *names[] = {"col"};
  tt_csv_sniff_finish(s, "t", names, (tt_csv_overrides *)ov);
  return s;
}

static const tt_csv_column_sniff *col0(const tt_csv_sniff *s) { return tt_csv_sniff_column(s, 0); }

/* The cell v becomes in s's column, as text: NULL, i:N, r:X, t:TEXT. */
static char *cell(const tt_csv_sniff *s, const char *v) {
  tt_csv_cell c;
  tt_csv_sniff_convert(s, 0, v, strlen(v), &c);
  switch (c.kind) {
  case TT_CSV_CELL_NULL: return tt_xstrdup("NULL");
  case TT_CSV_CELL_INT: return tt_xasprintf("i:%lld", (long long)c.i);
  case TT_CSV_CELL_REAL: return tt_xasprintf("r:%.17g", c.d);
  case TT_CSV_CELL_TEXT: return tt_xasprintf("t:%.*s", (int)c.n, c.s);
  }
  return NULL;
}

static void expect_cell(const tt_csv_sniff *s, const char *v, const char *want) {
  char *got = cell(s, v);
  if (strcmp(got, want)) fprintf(stderr, "'%s' became %s, wanted %s\n", v, got, want);
  assert_string_equal(got, want);
  free(got);
}

static void expect_type(const tt_csv_sniff *s, tt_csv_type t) {
  if (col0(s)->type != t)
    fprintf(stderr, "type %s, wanted %s (note: %s)\n", tt_csv_type_name(col0(s)->type),
            tt_csv_type_name(t), col0(s)->note ? col0(s)->note : "none");
  assert_int_equal(col0(s)->type, t);
}

static void expect_note(const tt_csv_sniff *s, const char *part) {
  const char *note = col0(s)->note;
  if (!note || !strstr(note, part)) fprintf(stderr, "note: %s\nwanted: %s\n", note ? note : "(none)", part);
  assert_non_null(note);
  assert_non_null(strstr(note, part));
}

static void test_the_issues_ages(void **state) {
  (void)state;
  /* age = 34, "", n/a, 41, 27: numbers, two NULLs, nothing invented */
  const char *v[] = {"34", "", "n/a", "41", "27", NULL};
  tt_csv_sniff *s = sniff1(',', NULL, v);
  expect_type(s, TT_CSV_TYPE_INTEGER);
  assert_int_equal(col0(s)->values, 3);
  assert_int_equal(col0(s)->nulls, 2);
  assert_int_equal(col0(s)->bad, 0);
  assert_null(col0(s)->note);
  expect_cell(s, "n/a", "NULL");
  expect_cell(s, "", "NULL");
  expect_cell(s, "41", "i:41");
  tt_csv_sniff_free(s);
}

static void test_null_tokens(void **state) {
  (void)state;
  const char *v[] = {"NA", "N/A", "n/a", "null", "NULL", "-", "\xE2\x80\x94", "?", "  ", " NA ", "7", NULL};
  tt_csv_sniff *s = sniff1(',', NULL, v);
  expect_type(s, TT_CSV_TYPE_INTEGER);
  assert_int_equal(col0(s)->nulls, 10);
  assert_int_equal(col0(s)->values, 1);
  assert_int_equal(col0(s)->null_tokens, 0x1ff); /* all nine, the blank one as "" */
  for (int i = 0; i < TT_CSV_NULL_TOKENS; i++)
    assert_int_equal(tt_csv_null_token(tt_csv_null_tokens[i], strlen(tt_csv_null_tokens[i])), i);
  assert_int_equal(tt_csv_null_token("nan", 3), -1);
  assert_int_equal(tt_csv_null_token("None", 4), -1);
  tt_csv_sniff_free(s);
  /* an all-null column is TEXT, and says so */
  const char *nulls[] = {"", "NA", "-", NULL};
  s = sniff1(',', NULL, nulls);
  expect_type(s, TT_CSV_TYPE_TEXT);
  expect_note(s, "only NULLs");
  tt_csv_sniff_free(s);
}

static void test_numbers(void **state) {
  (void)state;
  const char *v[] = {"1e5", "+3", " 42 ", "-0.5", ".25", "-7", "2.5E-2", NULL};
  tt_csv_sniff *s = sniff1(',', NULL, v);
  expect_type(s, TT_CSV_TYPE_REAL);
  assert_null(col0(s)->note);
  expect_cell(s, "1e5", "r:100000");
  expect_cell(s, "+3", "r:3");
  expect_cell(s, " 42 ", "r:42");
  expect_cell(s, ".25", "r:0.25");
  expect_cell(s, "2.5E-2", "r:0.025000000000000001");
  tt_csv_sniff_free(s);
  const char *ints[] = {"+3", " 42 ", "-7", "0", "9223372036854775807", "-9223372036854775808", NULL};
  s = sniff1(',', NULL, ints);
  expect_type(s, TT_CSV_TYPE_INTEGER);
  expect_cell(s, "+3", "i:3");
  expect_cell(s, " 42 ", "i:42");
  expect_cell(s, "9223372036854775807", "i:9223372036854775807");
  expect_cell(s, "-9223372036854775808", "i:-9223372036854775808");
  expect_cell(s, "9223372036854775808", "NULL"); /* past int64: not this column's */
  tt_csv_sniff_free(s);
  /* not numbers: each is text */
  const char *nots[] = {"5.", "inf", "nan", "0x1F", "1e", "--1", "1 2", NULL};
  for (size_t i = 0; nots[i]; i++) {
    const char *one[] = {nots[i], NULL};
    s = sniff1(',', NULL, one);
    expect_type(s, TT_CSV_TYPE_TEXT);
    tt_csv_sniff_free(s);
  }
}

static void test_codes_and_huge_stay_text(void **state) {
  (void)state;
  /* ZIP codes: a leading zero is a code, whatever the other values */
  const char *zip[] = {"01234", "12345", "23456", "34567", "45678", "56789", "67890", NULL};
  tt_csv_sniff *s = sniff1(',', NULL, zip);
  expect_type(s, TT_CSV_TYPE_TEXT);
  expect_note(s, "'01234' has a leading zero");
  expect_cell(s, "01234", "t:01234");
  tt_csv_sniff_free(s);
  /* an integer beyond 64 bits: no digit is lost */
  const char *big[] = {"1", "2", "9223372036854775808", "123456789012345678901234567890", NULL};
  s = sniff1(',', NULL, big);
  expect_type(s, TT_CSV_TYPE_TEXT);
  expect_note(s, "'9223372036854775808' is too long to keep every digit");
  expect_cell(s, "123456789012345678901234567890", "t:123456789012345678901234567890");
  tt_csv_sniff_free(s);
  /* 0 and 0.5 are numbers, 00.5 a code */
  const char *zeros[] = {"0", "0.5", "-0", NULL};
  s = sniff1(',', NULL, zeros);
  expect_type(s, TT_CSV_TYPE_REAL);
  tt_csv_sniff_free(s);
}

static void test_a_few_odd_values(void **state) {
  (void)state;
  /* 3 words among 12 numbers: numbers, the words NULL and named */
  const char *v[] = {"10", "20", "unknown", "30", "tbd", "40", "50", "60", "unknown", "70", "80",
                     "90", "100", "110", "120", NULL};
  tt_csv_sniff *s = sniff1(',', NULL, v);
  expect_type(s, TT_CSV_TYPE_INTEGER);
  assert_int_equal(col0(s)->bad, 3);
  assert_string_equal(col0(s)->note, "3 values were not numbers, read as NULL: 'unknown', 'tbd'");
  expect_cell(s, "tbd", "NULL");
  expect_cell(s, "120", "i:120");
  tt_csv_sniff_free(s);
  /* 2 of 5: too many, the column stays text and says why */
  const char *many[] = {"34", "41", "unknown", "27", "tbd", NULL};
  s = sniff1(',', NULL, many);
  expect_type(s, TT_CSV_TYPE_TEXT);
  expect_note(s, "kept as text: 2 of 5 values are not numbers");
  expect_cell(s, "tbd", "t:tbd");
  tt_csv_sniff_free(s);
  /* a note is one line however the value is written, and examples are cut */
  const char *odd[] = {"1", "2", "3", "4", "5", "line\nbreak and a very long tail of text here", NULL};
  s = sniff1(',', NULL, odd);
  expect_type(s, TT_CSV_TYPE_INTEGER);
  assert_string_equal(col0(s)->note, "1 value was not a number, read as NULL: 'line?break and a ver\xE2\x80\xA6'");
  tt_csv_sniff_free(s);
}

static void test_decimal_commas(void **state) {
  (void)state;
  /* 9,5 in a ';' file */
  const char *v[] = {"9,5", "2,75", "-1,25", "3", "1.234,5", NULL};
  tt_csv_sniff *s = sniff1(';', NULL, v);
  expect_type(s, TT_CSV_TYPE_REAL);
  assert_int_equal(col0(s)->decimal, ',');
  expect_note(s, "decimal comma");
  expect_cell(s, "9,5", "r:9.5");
  expect_cell(s, "-1,25", "r:-1.25");
  expect_cell(s, "1.234,5", "r:1234.5");
  expect_cell(s, "1.234", "r:1234"); /* the column's mark: the point groups */
  tt_csv_sniff_free(s);
  /* in a comma file a comma is never a decimal mark: "1,234" groups thousands */
  const char *us[] = {"1,234", "2,500", "300", "1,234,567.5", NULL};
  s = sniff1(',', NULL, us);
  expect_type(s, TT_CSV_TYPE_REAL);
  assert_int_equal(col0(s)->decimal, '.');
  expect_cell(s, "1,234", "r:1234");
  expect_cell(s, "1,234,567.5", "r:1234567.5");
  tt_csv_sniff_free(s);
  const char *commas[] = {"1,234", "2,500", "300", NULL};
  s = sniff1(',', NULL, commas);
  expect_type(s, TT_CSV_TYPE_INTEGER);
  expect_cell(s, "2,500", "i:2500");
  expect_cell(s, "9,5", "NULL"); /* no group of three: not a number here */
  tt_csv_sniff_free(s);
  /* a ';' file whose values read as two numbers each: never guessed */
  const char *amb[] = {"1.234", "2.500", "300", NULL};
  s = sniff1(';', NULL, amb);
  expect_type(s, TT_CSV_TYPE_TEXT);
  expect_note(s, "'1.234' reads as two numbers; --csv-types col=real or col=decimal-comma says which");
  tt_csv_sniff_free(s);
  /* ...but one value that says the mark decides for them all */
  const char *said[] = {"1.234", "2.500", "0.5", NULL};
  s = sniff1(';', NULL, said);
  expect_type(s, TT_CSV_TYPE_REAL);
  expect_cell(s, "1.234", "r:1.234");
  tt_csv_sniff_free(s);
  /* as many points as commas: text */
  const char *mixed[] = {"1.5", "2,5", NULL};
  s = sniff1(';', NULL, mixed);
  expect_type(s, TT_CSV_TYPE_TEXT);
  expect_note(s, "as many decimal points as decimal commas");
  tt_csv_sniff_free(s);
  /* bad grouping is not a number */
  const char *bad[] = {"1.23,5", "12.34.567", "0.123,4", NULL};
  for (size_t i = 0; bad[i]; i++) {
    const char *one[] = {bad[i], NULL};
    s = sniff1(';', NULL, one);
    expect_type(s, TT_CSV_TYPE_TEXT);
    tt_csv_sniff_free(s);
  }
}

static void test_dates_and_times(void **state) {
  (void)state;
  const char *d[] = {"2024-01-05", "2024-02-29", "1999-12-31", NULL};
  tt_csv_sniff *s = sniff1(',', NULL, d);
  expect_type(s, TT_CSV_TYPE_DATE);
  expect_cell(s, " 2024-01-05 ", "t:2024-01-05");
  expect_cell(s, "2023-02-29", "NULL"); /* no such day */
  tt_csv_sniff_free(s);
  /* dates mixed with date-times: TIMESTAMP */
  const char *ts[] = {"2024-01-05", "2024-01-05T10:00:00Z", "2024-01-05 10:00", "2024-01-05T10:00:00.5+01:00", NULL};
  s = sniff1(',', NULL, ts);
  expect_type(s, TT_CSV_TYPE_TIMESTAMP);
  tt_csv_sniff_free(s);
  const char *t[] = {"13:45", "00:00:00", "23:59:60.123", NULL};
  s = sniff1(',', NULL, t);
  expect_type(s, TT_CSV_TYPE_TIME);
  expect_cell(s, "24:00", "NULL");
  tt_csv_sniff_free(s);
  /* dates in another format among ISO ones: a few are NULL and named */
  const char *mix[] = {"2024-01-01", "2024-01-02", "2024-01-03", "2024-01-04", "05/01/2024", NULL};
  s = sniff1(',', NULL, mix);
  expect_type(s, TT_CSV_TYPE_DATE);
  assert_string_equal(col0(s)->note, "1 value was not an ISO date, read as NULL: '05/01/2024'");
  tt_csv_sniff_free(s);
  /* half in each format: text */
  const char *half[] = {"2024-01-01", "05/01/2024", NULL};
  s = sniff1(',', NULL, half);
  expect_type(s, TT_CSV_TYPE_TEXT);
  tt_csv_sniff_free(s);
}

static void test_ragged_rows_and_summary(void **state) {
  (void)state;
  tt_csv_sniff *s = tt_csv_sniff_new(3, ';');
  tt_csv_sniff_record(s, 3, 2);
  tt_csv_sniff_record(s, 2, 3); /* short */
  tt_csv_sniff_record(s, 4, 4); /* long */
  tt_csv_sniff_record(s, 1, 5); /* short */
  tt_csv_sniff_value(s, 0, "n/a", 3);
  char *names[] = {"a", "b", "c"};
  tt_csv_sniff_finish(s, "t", names, NULL);
  long first;
  assert_int_equal(tt_csv_sniff_short_rows(s, &first), 2);
  assert_int_equal(first, 3);
  assert_int_equal(tt_csv_sniff_long_rows(s, &first), 1);
  assert_int_equal(first, 4);
  assert_int_equal(tt_csv_sniff_column(s, 2)->nulls, 2); /* missing fields are NULL */
  char *sum = tt_csv_sniff_summary(s);
  assert_string_equal(sum, "';'-separated; NULL: 'n/a'; 2 short rows, first at line 3, read with "
                           "NULLs; 1 long row, at line 4: fields past column 3 left out");
  free(sum);
  tt_csv_sniff_free(s);
}

static void test_header_vote(void **state) {
  (void)state;
  const char *v[] = {"1", "2", NULL};
  tt_csv_sniff *s = tt_csv_sniff_new(1, ',');
  for (size_t i = 0; v[i]; i++) tt_csv_sniff_value(s, 0, v[i], 1);
  assert_int_equal(tt_csv_sniff_header_vote(s, 0, "year", 4), 1);
  assert_int_equal(tt_csv_sniff_header_vote(s, 0, "2023", 4), -1);
  assert_int_equal(tt_csv_sniff_header_vote(s, 0, "", 0), 0);
  tt_csv_sniff_free(s);
  s = tt_csv_sniff_new(1, ',');
  tt_csv_sniff_value(s, 0, "2024-01-01", 10);
  assert_int_equal(tt_csv_sniff_header_vote(s, 0, "day", 3), 1);
  assert_int_equal(tt_csv_sniff_header_vote(s, 0, "2023-12-31", 10), -1);
  tt_csv_sniff_free(s);
  s = tt_csv_sniff_new(1, ',');
  tt_csv_sniff_value(s, 0, "Ana", 3);
  assert_int_equal(tt_csv_sniff_header_vote(s, 0, "name", 4), 0);
  tt_csv_sniff_free(s);
}

static void test_overrides(void **state) {
  (void)state;
  tt_csv_overrides ov;
  tt_error err;
  assert_true(tt_csv_overrides_parse(" col = INT , other.col=text,x=decimal-comma,", &ov, &err));
  assert_int_equal(ov.n, 3);
  assert_null(ov.v[0].table);
  assert_string_equal(ov.v[0].column, "col");
  assert_int_equal(ov.v[0].type, TT_CSV_TYPE_INTEGER);
  assert_string_equal(ov.v[1].table, "other");
  assert_int_equal(ov.v[2].decimal, ',');
  /* col=int applies to table t (other.col names another table) */
  const char *v[] = {"01234", "5", "x", NULL};
  tt_csv_sniff *s = sniff1(',', &ov, v);
  expect_type(s, TT_CSV_TYPE_INTEGER);
  assert_true(col0(s)->overridden);
  expect_cell(s, "01234", "i:1234"); /* the user said it is a number */
  expect_cell(s, "x", "NULL");
  assert_string_equal(col0(s)->note, "1 value was not an integer, read as NULL: 'x'");
  assert_true(ov.v[0].used);
  assert_false(ov.v[1].used);
  assert_ptr_equal(tt_csv_overrides_unused(&ov), &ov.v[1]);
  tt_csv_sniff_free(s);
  tt_csv_overrides_free(&ov);
  /* table.col beats col */
  assert_true(tt_csv_overrides_parse("col=text,t.col=real", &ov, &err));
  const char *w[] = {"1", "2", NULL};
  s = sniff1(',', &ov, w);
  expect_type(s, TT_CSV_TYPE_REAL);
  tt_csv_sniff_free(s);
  tt_csv_overrides_free(&ov);
  /* a decimal comma the user names, in a comma file too */
  assert_true(tt_csv_overrides_parse("col=decimal-comma", &ov, &err));
  const char *dc[] = {"9,5", "1.234", NULL};
  s = sniff1(',', &ov, dc);
  expect_type(s, TT_CSV_TYPE_REAL);
  expect_cell(s, "9,5", "r:9.5");
  tt_csv_sniff_free(s);
  tt_csv_overrides_free(&ov);
  /* malformed: each says what is wrong and how to write it */
  const char *bad[] = {"col", "col=int32", "=int", "t.=int", ".col=int"};
  const char *why[] = {"has no '=type'", "unknown type 'int32'", "names no column",
                       "names no column", "names no column"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    memset(&err, 0, sizeof err);
    assert_false(tt_csv_overrides_parse(bad[i], &ov, &err));
    assert_int_equal(err.kind, TT_ERR_CONFIG);
    if (!strstr(err.message, why[i])) fprintf(stderr, "%s: %s\n", bad[i], err.message);
    assert_non_null(strstr(err.message, why[i]));
    assert_non_null(strstr(err.hint, "column=type"));
    assert_int_equal(ov.n, 0);
  }
  /* nothing is no override */
  assert_true(tt_csv_overrides_parse(NULL, &ov, &err));
  assert_int_equal(ov.n, 0);
  assert_true(tt_csv_overrides_parse("", &ov, &err));
  assert_int_equal(ov.n, 0);
}

/* Sniffing and converting agree: on columns of random number-like values
 * (a fixed seed), the cells that convert to NULL, null tokens aside, are
 * exactly the column's bad count, in a comma file and in a ';' file. */
static void test_verdicts_and_cells_agree(void **state) {
  (void)state;
  static const char alphabet[] = "0123456789012345678.,-+eE :T";
  unsigned seed = 26;
  int with_bad = 0, typed[TT_CSV_TYPE_TIMESTAMP + 1] = {0};
  for (int round = 0; round < 400; round++) {
    char delim = round % 2 ? ';' : ',';
    size_t nvals = 1 + (size_t)(round % 40);
    char **v = tt_xcalloc(nvals + 1, sizeof *v);
    int family = round % 5; /* mostly numbers of one shape, a few odd ones */
    for (size_t i = 0; i < nvals; i++) {
      seed = seed * 1103515245u + 12345u;
      unsigned r = seed >> 8;
      char b[32];
      if (r % 10 < 8 && family == 0) snprintf(b, sizeof b, "%u", r % 100000);
      else if (r % 10 < 8 && family == 1) snprintf(b, sizeof b, "%u,%02u", r % 1000, r % 97);
      else if (r % 10 < 8 && family == 2) snprintf(b, sizeof b, "%u.%03u", 1 + r % 999, r % 1000);
      else if (r % 10 < 8 && family == 3) snprintf(b, sizeof b, "2024-%02u-%02u", 1 + r % 12, 1 + r % 31);
      else {
        size_t len = r % 9;
        for (size_t k = 0; k < len; k++) {
          seed = seed * 1103515245u + 12345u;
          b[k] = alphabet[(seed >> 8) % (sizeof alphabet - 1)];
        }
        b[len] = '\0';
      }
      v[i] = tt_xstrdup(b);
    }
    tt_csv_sniff *s = sniff1(delim, NULL, (const char *const *)v);
    long long nulls = 0;
    for (size_t i = 0; i < nvals; i++) {
      tt_csv_cell c;
      tt_csv_sniff_convert(s, 0, v[i], strlen(v[i]), &c);
      if (c.kind == TT_CSV_CELL_NULL && tt_csv_null_token(v[i], strlen(v[i])) < 0) nulls++;
    }
    if (nulls != col0(s)->bad)
      fprintf(stderr, "round %d (%c, %s): %lld cells NULL, bad %lld, note %s\n", round, delim,
              tt_csv_type_name(col0(s)->type), nulls, col0(s)->bad, col0(s)->note ? col0(s)->note : "-");
    assert_int_equal(nulls, col0(s)->bad);
    with_bad += col0(s)->bad > 0;
    typed[col0(s)->type]++;
    tt_csv_sniff_free(s);
    tt_strv_free(v, nvals);
  }
  /* the rounds cover the cases: odd values read as NULL, every family */
  assert_true(with_bad > 20);
  assert_true(typed[TT_CSV_TYPE_INTEGER] > 20 && typed[TT_CSV_TYPE_REAL] > 20);
  assert_true(typed[TT_CSV_TYPE_DATE] > 20 && typed[TT_CSV_TYPE_TEXT] > 20);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_the_issues_ages),
      cmocka_unit_test(test_null_tokens),
      cmocka_unit_test(test_numbers),
      cmocka_unit_test(test_codes_and_huge_stay_text),
      cmocka_unit_test(test_a_few_odd_values),
      cmocka_unit_test(test_decimal_commas),
      cmocka_unit_test(test_dates_and_times),
      cmocka_unit_test(test_ragged_rows_and_summary),
      cmocka_unit_test(test_header_vote),
      cmocka_unit_test(test_overrides),
      cmocka_unit_test(test_verdicts_and_cells_agree),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
