/* test_chart.c — the chart layer on real query results from chinook: spec
 * errors, column errors that list the columns, categories/dates/numbers,
 * sorting, limits, pies with "Other", histograms, series; nice ticks and
 * number formats; PNGs read back with cairo (size, bars counted in the
 * pixels), SVG parsed as XML with expat, line charts' value axis (from
 * zero unless zoomed, and then said) and value labels off the line, golden
 * terminal previews
 * (TT_UPDATE_GOLDEN=1 rewrites them), and 10,000 random specs and results
 * that must never crash or leak (TT_CHART_SEED, TT_CHART_CASES). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <cairo.h>
#include <expat.h>
#include <locale.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "chart/chart_internal.h"
#include "testutil.h"

static tt_db *g_db;
static char *g_tmp;

static int setup(void **state) {
  (void)state;
  setlocale(LC_CTYPE, "C.UTF-8");
  tt_error err;
  tt_db_opts o = tt_db_default_opts();
  o.max_rows = 10000;
  o.max_bytes = 64L << 20;
  g_db = tt_db_open(tu_chinook(), &o, &err);
  g_tmp = tu_mkdtemp();
  return g_db ? 0 : -1;
}

static int teardown(void **state) {
  (void)state;
  tt_db_close(g_db);
  tu_rmtree(g_tmp);
  free(g_tmp);
  return 0;
}

static tt_result *query(const char *sql) {
  tt_error err;
  tt_result *r = tt_db_query(g_db, sql, strlen(sql), &err);
  if (!r) fprintf(stderr, "query failed: %s\n", err.message);
  assert_non_null(r);
  return r;
}

static tt_chart_spec *spec_of(const char *json) {
  json_error_t jerr;
  json_t *j = json_loads(json, 0, &jerr);
  assert_non_null(j);
  tt_error err;
  tt_chart_spec *s = tt_chart_spec_from_json(j, &err);
  if (!s) fprintf(stderr, "spec %s: %s\n", json, tt_error_text(&err));
  assert_non_null(s);
  json_decref(j);
  return s;
}

/* Builds the chart of sql under spec; NULL (and the error in err) allowed
 * when want_error. */
static tt_chart *chart_of(const char *sql, const char *spec_json, tt_error *err) {
  tt_result *r = query(sql);
  tt_chart_spec *s = spec_of(spec_json);
  tt_error local;
  tt_chart *c = tt_chart_build(s, r, err ? err : &local);
  if (!c && !err) fprintf(stderr, "build: %s\n", tt_error_text(&local));
  tt_chart_spec_free(s);
  tt_result_free(r);
  return c;
}

static const char *const INVOICES_SQL =
    "SELECT strftime('%Y', InvoiceDate) AS year, count(*) AS invoices FROM Invoice GROUP BY year";
static const char *const INVOICES_SPEC =
    "{\"kind\":\"bar\",\"x\":\"year\",\"y\":\"invoices\",\"title\":\"Invoices per year\"}";

/* ---- specs and columns --------------------------------------------------------- */

static void expect_spec_error(const char *json, const char *words) {
  json_t *j = json_loads(json, 0, NULL);
  assert_non_null(j);
  tt_error err;
  tt_chart_spec *s = tt_chart_spec_from_json(j, &err);
  if (s || !strstr(tt_error_text(&err), words))
    fprintf(stderr, "spec %s: got '%s', want '%s'\n", json, tt_error_text(&err), words);
  assert_null(s);
  assert_non_null(strstr(tt_error_text(&err), words));
  assert_int_equal(err.kind, TT_ERR_CONFIG); /* the spec is the caller's to fix */
  json_decref(j);
}

static void test_spec_errors(void **state) {
  (void)state;
  expect_spec_error("[]", "must be a JSON object");
  expect_spec_error("{\"kind\":\"donut\",\"x\":\"a\",\"y\":\"b\",\"title\":\"t\"}",
                    "\"kind\" must be one of bar, line, area, scatter, pie, histogram");
  expect_spec_error("{\"kind\":\"bar\",\"x\":\"a\",\"y\":\"b\",\"title\":\"t\",\"colour\":\"red\"}",
                    "unknown key \"colour\"");
  expect_spec_error("{\"kind\":\"bar\",\"x\":\"a\",\"title\":\"t\"}", "\"y\" is required for a bar chart");
  expect_spec_error("{\"kind\":\"histogram\",\"x\":\"a\",\"y\":\"b\",\"title\":\"t\"}", "a histogram takes no \"y\"");
  expect_spec_error("{\"kind\":\"pie\",\"x\":\"a\",\"y\":[\"b\",\"c\"],\"title\":\"t\"}", "exactly one \"y\"");
  expect_spec_error("{\"kind\":\"bar\",\"x\":\"a\",\"y\":\"b\",\"title\":\"t\",\"limit\":0}", "\"limit\" must be");
  expect_spec_error("{\"kind\":\"bar\",\"x\":\"a\",\"y\":[\"1\",\"2\",\"3\",\"4\",\"5\",\"6\",\"7\",\"8\",\"9\"],"
                    "\"title\":\"t\"}", "1 to 8 column names");
  expect_spec_error("{\"kind\":\"line\",\"x\":\"a\",\"y\":\"b\",\"title\":\"t\",\"orientation\":\"horizontal\"}",
                    "bar charts only");
  expect_spec_error("{\"kind\":\"bar\",\"x\":\"\",\"y\":\"b\",\"title\":\"t\"}", "non-empty string");
  /* the schema the tool carries is valid JSON */
  json_t *schema = json_loads(tt_chart_spec_schema(), 0, NULL);
  assert_non_null(schema);
  json_decref(schema);
}

static void test_column_errors_list_the_columns(void **state) {
  (void)state;
  tt_error err;
  tt_chart *c = chart_of(INVOICES_SQL, "{\"kind\":\"bar\",\"x\":\"yaer\",\"y\":\"invoices\",\"title\":\"t\"}", &err);
  assert_null(c);
  assert_int_equal(err.kind, TT_ERR_CONFIG);
  assert_string_equal(err.message, "x: no column 'yaer' (did you mean 'year'?); the columns are "
                                   "year (text), invoices (integer)");
  c = chart_of("SELECT Name, Composer, Milliseconds FROM Track LIMIT 20",
               "{\"kind\":\"bar\",\"x\":\"Name\",\"y\":\"Composer\",\"title\":\"t\"}", &err);
  assert_null(c);
  assert_non_null(strstr(err.message, "y: column 'Composer' holds text, not numbers"));
  assert_non_null(strstr(err.message, "numeric columns: Milliseconds (integer)"));
  c = chart_of("SELECT Name, Milliseconds FROM Track LIMIT 20",
               "{\"kind\":\"scatter\",\"x\":\"Name\",\"y\":\"Milliseconds\",\"title\":\"t\"}", &err);
  assert_null(c);
  assert_non_null(strstr(err.message, "a scatter plot needs numbers or dates on x"));
  c = chart_of("SELECT Name, Milliseconds - 300000 AS d FROM Track LIMIT 20",
               "{\"kind\":\"pie\",\"x\":\"Name\",\"y\":\"d\",\"title\":\"t\"}", &err);
  assert_null(c);
  assert_non_null(strstr(err.message, "has a negative value"));
  assert_int_equal(err.kind, TT_ERR_CONFIG);
  /* names are matched without case, and a qualified name finds its column */
  c = chart_of(INVOICES_SQL, "{\"kind\":\"bar\",\"x\":\"i.YEAR\",\"y\":\"Invoices\",\"title\":\"t\"}", &err);
  assert_non_null(c);
  tt_chart_free(c);
}

/* Many long column names: the list stops, says how many it left out, and
 * the whole error still fits its message (nothing cut mid-word). */
static void test_column_list_fits_the_error(void **state) {
  (void)state;
  tt_buf sql = TT_BUF_INIT;
  tt_buf_puts(&sql, "SELECT ");
  for (int i = 0; i < 40; i++)
    tt_buf_printf(&sql, "%s%d AS a_rather_long_column_name_that_goes_on_and_on_for_a_while_%02d",
                  i ? ", " : "", i, i);
  tt_error err;
  tt_chart *c = chart_of(tt_buf_cstr(&sql), "{\"kind\":\"bar\",\"x\":\"nope\",\"y\":\"nope\","
                         "\"title\":\"t\"}", &err);
  assert_null(c);
  assert_int_equal(err.kind, TT_ERR_CONFIG);
  size_t n = strlen(err.message);
  assert_true(n < sizeof err.message - 1);
  assert_non_null(strstr(err.message, "the columns are a_rather_long_column_name"));
  assert_true(n > 5 && strcmp(err.message + n - 5, " more") == 0);
  /* the list of numeric columns stops the same way */
  tt_buf_puts(&sql, ", 'x' AS label");
  c = chart_of(tt_buf_cstr(&sql), "{\"kind\":\"bar\",\"x\":\"label\",\"y\":\"label\","
               "\"title\":\"t\"}", &err);
  assert_null(c);
  n = strlen(err.message);
  assert_true(n < sizeof err.message - 1);
  assert_non_null(strstr(err.message, "y: column 'label' holds text, not numbers; numeric columns: "));
  assert_true(n > 5 && strcmp(err.message + n - 5, " more") == 0);
  tt_buf_free(&sql);
}

/* ---- the model ------------------------------------------------------------------ */

static void test_invoices_per_year(void **state) {
  (void)state;
  tt_chart *c = chart_of(INVOICES_SQL, INVOICES_SPEC, NULL);
  assert_non_null(c);
  assert_int_equal(c->n, 5);
  assert_int_equal(c->nseries, 1);
  assert_false(c->horizontal);
  static const char *const years[] = {"2021", "2022", "2023", "2024", "2025"};
  static const double counts[] = {83, 83, 83, 83, 80};
  for (size_t i = 0; i < 5; i++) {
    assert_string_equal(c->labels[i], years[i]);
    assert_true(c->series[0].v[i] == counts[i]);
  }
  assert_null(c->note);
  tt_buf d = TT_BUF_INIT;
  tt_chart_describe(c, &d);
  assert_string_equal(tt_buf_cstr(&d), "bar chart, 5 bars: Invoices per year");
  tt_buf_free(&d);
  tt_chart_free(c);
}

static void test_dates_and_years(void **state) {
  (void)state;
  /* months as text: a time axis by month */
  tt_chart *c = chart_of("SELECT strftime('%Y-%m', InvoiceDate) AS month, sum(Total) AS revenue "
                         "FROM Invoice WHERE InvoiceDate LIKE '2022%' GROUP BY month",
                         "{\"kind\":\"line\",\"x\":\"month\",\"y\":\"revenue\",\"title\":\"t\"}", NULL);
  assert_int_equal(c->xscale, TT_X_TIME);
  assert_int_equal(c->tunit, TT_T_MONTH);
  assert_int_equal(c->n, 12);
  assert_string_equal(c->labels[0], "Jan 2022");
  assert_string_equal(c->labels[11], "Dec 2022");
  assert_true(c->x[0] == tt_days_from_civil(2022, 1, 1));
  tt_chart_free(c);
  /* whole timestamps on different days: by day */
  c = chart_of("SELECT InvoiceDate, Total FROM Invoice WHERE InvoiceDate < '2021-02-01'",
               "{\"kind\":\"line\",\"x\":\"InvoiceDate\",\"y\":\"Total\",\"title\":\"t\"}", NULL);
  assert_int_equal(c->xscale, TT_X_TIME);
  assert_int_equal(c->tunit, TT_T_DAY);
  assert_string_equal(c->labels[0], "2021-01-01");
  tt_chart_free(c);
  /* integer years: a time axis by year, and dates with times of day */
  c = chart_of("SELECT CAST(strftime('%Y', InvoiceDate) AS INTEGER) AS y, count(*) AS n FROM Invoice GROUP BY y",
               "{\"kind\":\"area\",\"x\":\"y\",\"y\":\"n\",\"title\":\"t\"}", NULL);
  assert_int_equal(c->xscale, TT_X_TIME);
  assert_int_equal(c->tunit, TT_T_YEAR);
  assert_string_equal(c->labels[4], "2025");
  tt_chart_free(c);
  c = chart_of("SELECT '2024-03-0' || (TrackId % 9 + 1) || ' 1' || (TrackId % 10) || ':30:00' AS t, "
               "Milliseconds AS ms FROM Track LIMIT 30",
               "{\"kind\":\"scatter\",\"x\":\"t\",\"y\":\"ms\",\"title\":\"t\"}", NULL);
  assert_int_equal(c->tunit, TT_T_TIME);
  tt_chart_free(c);
  /* plain numbers stay numbers */
  c = chart_of("SELECT TrackId, Milliseconds FROM Track LIMIT 50",
               "{\"kind\":\"line\",\"x\":\"TrackId\",\"y\":\"Milliseconds\",\"title\":\"t\"}", NULL);
  assert_int_equal(c->xscale, TT_X_NUMBER);
  tt_chart_free(c);
  /* the date parser itself */
  double d;
  int parts;
  assert_true(tt_parse_date("2024-02-29", 10, &d, &parts) && parts == 3);
  assert_false(tt_parse_date("2023-02-29", 10, &d, &parts));
  assert_false(tt_parse_date("2023-13-01", 10, &d, &parts));
  assert_true(tt_parse_date("2023-12-31T23:59:59.5Z", 22, &d, &parts) && parts == 4);
  assert_false(tt_parse_date("2023-12-31 25:00", 16, &d, &parts));
  assert_false(tt_parse_date("12/31/2023", 10, &d, &parts));
  int64_t y;
  unsigned m, dd;
  tt_civil_from_days((int64_t)tt_days_from_civil(1999, 12, 31), &y, &m, &dd);
  assert_true(y == 1999 && m == 12 && dd == 31);
  assert_true(tt_days_from_civil(1970, 1, 1) == 0);
}

static void test_sorting_limits_and_notes(void **state) {
  (void)state;
  const char *sql = "SELECT g.Name AS genre, count(*) AS tracks FROM Track t JOIN Genre g USING (GenreId) "
                    "GROUP BY g.GenreId ORDER BY g.Name";
  /* text categories keep the result's order unless asked */
  tt_chart *c = chart_of(sql, "{\"kind\":\"bar\",\"x\":\"genre\",\"y\":\"tracks\",\"title\":\"t\"}", NULL);
  assert_int_equal(c->n, 25);
  assert_string_equal(c->labels[0], "Alternative");
  assert_true(c->horizontal); /* 25 bars */
  tt_chart_free(c);
  c = chart_of(sql, "{\"kind\":\"bar\",\"x\":\"genre\",\"y\":\"tracks\",\"title\":\"t\",\"sort\":\"y\",\"limit\":3,"
                    "\"orientation\":\"vertical\"}", NULL);
  assert_int_equal(c->n, 3);
  assert_string_equal(c->labels[0], "Rock");
  assert_true(c->series[0].v[0] == 1297);
  assert_string_equal(c->labels[2], "Metal");
  assert_false(c->horizontal);
  assert_string_equal(c->note, "Showing the first 3 of 25 bars");
  tt_chart_free(c);
  /* repeated x values are added up, and said so */
  c = chart_of("SELECT BillingCountry AS country, Total FROM Invoice",
               "{\"kind\":\"bar\",\"x\":\"country\",\"y\":\"Total\",\"title\":\"t\",\"sort\":\"y\"}", NULL);
  assert_string_equal(c->labels[0], "USA");
  assert_true(fabs(c->series[0].v[0] - 523.06) < 1e-6);
  assert_non_null(strstr(c->note, "rows with a repeated x added together"));
  tt_chart_free(c);
  /* rows without a value are left out, and counted */
  c = chart_of("SELECT FirstName, CASE WHEN CustomerId % 2 THEN SupportRepId END AS rep FROM Customer",
               "{\"kind\":\"bar\",\"x\":\"FirstName\",\"y\":\"rep\",\"title\":\"t\"}", NULL);
  assert_string_equal(c->note, "29 rows without a usable value left out");
  tt_chart_free(c);
  /* a cut result says so */
  tt_db_opts o = *tt_db_get_opts(g_db), small = o;
  small.max_rows = 100;
  tt_db_set_opts(g_db, &small);
  c = chart_of("SELECT TrackId, Milliseconds FROM Track",
               "{\"kind\":\"line\",\"x\":\"TrackId\",\"y\":\"Milliseconds\",\"title\":\"t\"}", NULL);
  tt_db_set_opts(g_db, &o);
  assert_non_null(c->note);
  assert_non_null(strstr(c->note, "the chart uses the first 100"));
  tt_chart_free(c);
}

static void test_pie_histogram_series(void **state) {
  (void)state;
  tt_chart *c = chart_of("SELECT g.Name AS genre, count(*) AS tracks FROM Track t JOIN Genre g USING (GenreId) "
                         "GROUP BY g.GenreId",
                         "{\"kind\":\"pie\",\"x\":\"genre\",\"y\":\"tracks\",\"title\":\"t\"}", NULL);
  assert_int_equal(c->n, 8);
  assert_string_equal(c->labels[0], "Rock");
  assert_string_equal(c->labels[7], "Other");
  double sum = 0;
  for (size_t i = 0; i < c->n; i++) sum += c->series[0].v[i];
  assert_true(sum == 3503);
  assert_string_equal(c->note, "18 smaller slices grouped as Other");
  tt_chart_free(c);
  c = chart_of("SELECT Milliseconds / 60000.0 AS minutes FROM Track",
               "{\"kind\":\"histogram\",\"x\":\"minutes\",\"title\":\"t\"}", NULL);
  sum = 0;
  for (size_t i = 0; i < c->n; i++) sum += c->series[0].v[i];
  assert_true(sum == 3503);
  assert_true(c->bin_width == 2);
  assert_string_equal(c->labels[0], "0–2");
  assert_string_equal(c->y_label, "Number of rows");
  tt_chart_free(c);
  /* one series per country; beyond ten, the smallest are "Other" */
  c = chart_of("SELECT strftime('%Y', InvoiceDate) AS year, BillingCountry AS country, sum(Total) AS revenue "
               "FROM Invoice GROUP BY year, country",
               "{\"kind\":\"line\",\"x\":\"year\",\"y\":\"revenue\",\"series\":\"country\",\"title\":\"t\"}", NULL);
  assert_int_equal(c->nseries, 10);
  assert_string_equal(c->series[9].name, "Other");
  /* the nine largest (USA, Canada, France, Brazil, ...) in order of appearance */
  assert_string_equal(c->series[0].name, "Brazil");
  assert_int_equal(c->n, 5);
  assert_non_null(strstr(c->note, "15 smaller series grouped as Other"));
  double total = 0;
  for (size_t s = 0; s < c->nseries; s++)
    for (size_t i = 0; i < c->n; i++)
      if (!isnan(c->series[s].v[i])) total += c->series[s].v[i];
  assert_true(fabs(total - 2328.6) < 1e-6);
  tt_chart_free(c);
  /* several y columns are several series */
  c = chart_of("SELECT BillingCountry AS country, sum(Total) AS revenue, count(*) AS invoices FROM Invoice "
               "GROUP BY country ORDER BY revenue DESC LIMIT 5",
               "{\"kind\":\"bar\",\"x\":\"country\",\"y\":[\"revenue\",\"invoices\"],\"title\":\"t\"}", NULL);
  assert_int_equal(c->nseries, 2);
  assert_true(c->legend);
  assert_string_equal(c->series[1].name, "invoices");
  tt_chart_free(c);
}

static void test_ticks_and_numbers(void **state) {
  (void)state;
  tt_ticks t;
  tt_ticks_number(0, 83, 6, &t);
  assert_true(t.lo == 0 && t.hi == 100 && t.step == 20);
  tt_ticks_number(0, 213, 10, &t);
  assert_true(t.step == 25 && t.hi == 225);
  tt_ticks_number(-2.38, 483, 8, &t);
  assert_true(t.lo <= -2.38 && t.hi >= 483);
  tt_ticks_number(5, 5, 5, &t); /* one value still gets a range */
  assert_true(t.lo < 5 && t.hi > 5);
  tt_ticks_number(-1e300, 1e300, 5, &t);
  assert_true(t.n >= 2 && isfinite(t.step));
  tt_ticks_number(0.001, 0.0013, 5, &t);
  assert_true(t.decimals >= 4);
  struct { double v; int dec; const char *want; } nums[] = {
      {1234567.891, 2, "1,234,567.89"}, {-1234.5, 1, "-1,234.5"}, {0, 0, "0"},
      {999, 0, "999"}, {1000, 0, "1,000"}, {2.5e9, 0, "2.5B"}, {3e12, 0, "3T"},
      {1.2e18, 0, "1.2e18"}, {-0.4, 0, "0"}, {0.25, 2, "0.25"}};
  for (size_t i = 0; i < sizeof nums / sizeof nums[0]; i++) {
    tt_buf b = TT_BUF_INIT;
    tt_fmt_number(&b, nums[i].v, nums[i].dec);
    if (strcmp(tt_buf_cstr(&b), nums[i].want)) fprintf(stderr, "%g: %s\n", nums[i].v, tt_buf_cstr(&b));
    assert_string_equal(tt_buf_cstr(&b), nums[i].want);
    tt_buf_free(&b);
  }
  struct { double v; const char *want; } vals[] = {
      {83, "83"}, {2.50, "2.5"}, {523.06, "523.06"}, {1297, "1,297"}, {0.004, "0.004"}, {-3.10, "-3.1"}};
  for (size_t i = 0; i < sizeof vals / sizeof vals[0]; i++) {
    tt_buf b = TT_BUF_INIT;
    tt_fmt_value(&b, vals[i].v);
    assert_string_equal(tt_buf_cstr(&b), vals[i].want);
    tt_buf_free(&b);
  }
  /* a year of months: ticks on month starts, labelled by month */
  tt_ticks_time(tt_days_from_civil(2022, 1, 1), tt_days_from_civil(2022, 12, 1), TT_T_MONTH, 12, &t);
  assert_int_equal(t.n, 12);
  assert_int_equal(t.tunit, TT_T_MONTH);
  tt_buf l = TT_BUF_INIT;
  tt_ticks_label(&t, 3, true, false, &l);
  assert_string_equal(tt_buf_cstr(&l), "Apr 2022");
  /* years never get month ticks, and a few ticks means steps of years */
  tt_ticks_time(tt_days_from_civil(1990, 1, 1), tt_days_from_civil(2025, 1, 1), TT_T_YEAR, 6, &t);
  assert_int_equal(t.tunit, TT_T_YEAR);
  assert_true(t.tstep == 10);
  tt_buf_reset(&l);
  tt_ticks_label(&t, 0, true, false, &l);
  assert_string_equal(tt_buf_cstr(&l), "1990");
  tt_buf_free(&l);
}

/* Every tick label of t differs from the next. */
static void assert_distinct_ticks(const tt_ticks *t) {
  tt_buf a = TT_BUF_INIT, b = TT_BUF_INIT;
  assert_true(t->n >= 2);
  for (size_t i = 0; i + 1 < t->n; i++) {
    tt_buf_reset(&a);
    tt_buf_reset(&b);
    tt_ticks_label(t, i, false, false, &a);
    tt_ticks_label(t, i + 1, false, false, &b);
    if (strcmp(tt_buf_cstr(&a), tt_buf_cstr(&b)) == 0) fprintf(stderr, "tick %zu: %s twice\n", i, tt_buf_cstr(&a));
    assert_string_not_equal(tt_buf_cstr(&a), tt_buf_cstr(&b));
  }
  tt_buf_free(&a);
  tt_buf_free(&b);
}

static void test_edge_cases_found_in_review(void **state) {
  (void)state;
  /* ticks close together far from zero, or very small, stay distinct */
  tt_ticks t;
  tt_ticks_number(1.2300e9, 1.2340e9, 9, &t);
  assert_distinct_ticks(&t);
  tt_ticks_number(2e15, 2.0004e15, 6, &t);
  assert_distinct_ticks(&t);
  tt_ticks_number(1e-12, 5e-12, 6, &t);
  assert_distinct_ticks(&t);
  /* a time axis shorter than an hour still has its two ends */
  tt_ticks_time(tt_days_from_civil(2020, 1, 1) + 10.25 / 24, tt_days_from_civil(2020, 1, 1) + 10.75 / 24,
                TT_T_TIME, 8, &t);
  assert_int_equal(t.n, 2);
  tt_buf l = TT_BUF_INIT;
  tt_ticks_label(&t, 0, true, false, &l);
  assert_string_equal(tt_buf_cstr(&l), "2020-01-01 10:15");
  tt_buf_free(&l);
  /* denormal values: a histogram, not a crash */
  tt_chart *c = chart_of("SELECT 0.0 AS v UNION ALL SELECT 1e-323",
                         "{\"kind\":\"histogram\",\"x\":\"v\",\"title\":\"t\"}", NULL);
  assert_non_null(c);
  assert_true(c->n >= 1 && c->bin_width > 0);
  tt_buf svg = TT_BUF_INIT;
  tt_chart_render_svg(c, 300, 200, &svg);
  tt_buf_free(&svg);
  tt_chart_free(c);
  /* whole numbers: one bin per value, the maximum its own */
  c = chart_of("SELECT 2019 AS year UNION ALL SELECT 2020 UNION ALL SELECT 2021 UNION ALL SELECT 2021",
               "{\"kind\":\"histogram\",\"x\":\"year\",\"title\":\"t\"}", NULL);
  assert_int_equal(c->n, 3);
  assert_string_equal(c->labels[0], "2019");
  assert_string_equal(c->labels[2], "2021");
  assert_true(c->series[0].v[0] == 1 && c->series[0].v[1] == 1 && c->series[0].v[2] == 2);
  tt_chart_free(c);
  /* the same number of rows each year: equal bins, whatever their width */
  c = chart_of("WITH RECURSIVE y(v) AS (SELECT 2000 UNION ALL SELECT v + 1 FROM y WHERE v < 2019) "
               "SELECT v AS year FROM y, (SELECT 1 UNION ALL SELECT 2 UNION ALL SELECT 3)",
               "{\"kind\":\"histogram\",\"x\":\"year\",\"title\":\"t\"}", NULL);
  for (size_t i = 0; i < c->n; i++) assert_true(c->series[0].v[i] == c->series[0].v[0]);
  assert_true(c->bin_width == floor(c->bin_width));
  tt_chart_free(c);
  /* a small canvas with wide labels draws (UBSan watches the casts) */
  c = chart_of("SELECT 'a' AS k, -1000000000 AS v UNION ALL SELECT 'b', -2000000000",
               "{\"kind\":\"bar\",\"x\":\"k\",\"y\":\"v\",\"title\":\"t\",\"orientation\":\"vertical\"}", NULL);
  char *path = tt_xasprintf("%s/small.png", g_tmp);
  tt_error err;
  assert_true(tt_chart_write_png(c, path, 100, 100, &err));
  free(path);
  tt_chart_free(c);
  /* grouped bars: a category whose first series has no value keeps its label */
  c = chart_of("SELECT 'north' AS region, 'A' AS s, 5 AS n UNION ALL SELECT 'north', 'B', 2 "
               "UNION ALL SELECT 'south', 'B', 3",
               "{\"kind\":\"bar\",\"x\":\"region\",\"y\":\"n\",\"series\":\"s\",\"title\":\"t\"}", NULL);
  tt_chart_term_opts o = {.width = 60, .height = 8, .unicode = true};
  tt_buf out = TT_BUF_INIT;
  tt_chart_render_term(c, &o, &out);
  assert_non_null(strstr(tt_buf_cstr(&out), "\nsouth "));
  tt_buf_free(&out);
  tt_chart_free(c);
  /* NULL and '' are different series */
  c = chart_of("SELECT 1 AS x, NULL AS s, 1 AS n UNION ALL SELECT 1, '', 2",
               "{\"kind\":\"bar\",\"x\":\"x\",\"y\":\"n\",\"series\":\"s\",\"title\":\"t\"}", NULL);
  assert_int_equal(c->nseries, 2);
  tt_chart_free(c);
}

/* ---- PNG and SVG ---------------------------------------------------------------- */

/* Runs of pixels of colour rgb along row y between x0 and x1. */
static size_t runs_of(cairo_surface_t *s, int y, int x0, int x1, uint32_t rgb) {
  unsigned char *data = cairo_image_surface_get_data(s);
  int stride = cairo_image_surface_get_stride(s);
  size_t runs = 0;
  bool in = false;
  for (int x = x0; x < x1; x++) {
    uint32_t px = *(uint32_t *)(data + y * stride + x * 4) & 0xFFFFFF;
    bool hit = px == rgb;
    if (hit && !in) runs++;
    in = hit;
  }
  return runs;
}

static size_t non_white(cairo_surface_t *s, int x0, int y0, int x1, int y1) {
  unsigned char *data = cairo_image_surface_get_data(s);
  int stride = cairo_image_surface_get_stride(s);
  size_t n = 0;
  for (int y = y0; y < y1; y++)
    for (int x = x0; x < x1; x++) n += (*(uint32_t *)(data + y * stride + x * 4) & 0xFFFFFF) != 0xFFFFFF;
  return n;
}

static void test_png_reads_back(void **state) {
  (void)state;
  tt_chart *c = chart_of(INVOICES_SQL, INVOICES_SPEC, NULL);
  char *path = tt_xasprintf("%s/invoices.png", g_tmp);
  tt_error err;
  assert_true(tt_chart_write_png(c, path, 1200, 700, &err));
  cairo_surface_t *s = cairo_image_surface_create_from_png(path);
  assert_int_equal(cairo_surface_status(s), CAIRO_STATUS_SUCCESS);
  assert_int_equal(cairo_image_surface_get_width(s), 1200);
  assert_int_equal(cairo_image_surface_get_height(s), 700);
  /* the plot area is drawn on; five bars of the first palette colour
   * cross the row halfway down */
  assert_true(non_white(s, 100, 100, 1100, 600) > 100000);
  assert_int_equal(runs_of(s, 400, 0, 1200, 0x0072B2), 5);
  cairo_surface_destroy(s);
  /* another size; a horizontal chart: ten bars down a column */
  tt_chart_free(c);
  c = chart_of("SELECT ar.Name AS artist, count(*) AS tracks FROM Track t JOIN Album al USING (AlbumId) "
               "JOIN Artist ar USING (ArtistId) GROUP BY ar.ArtistId ORDER BY tracks DESC LIMIT 10",
               "{\"kind\":\"bar\",\"x\":\"artist\",\"y\":\"tracks\",\"title\":\"Top 10 artists\","
               "\"orientation\":\"horizontal\"}", NULL);
  assert_true(tt_chart_write_png(c, path, 640, 400, &err));
  s = cairo_image_surface_create_from_png(path);
  assert_int_equal(cairo_image_surface_get_width(s), 640);
  assert_int_equal(cairo_image_surface_get_height(s), 400);
  unsigned char *data = cairo_image_surface_get_data(s);
  int stride = cairo_image_surface_get_stride(s), col = -1;
  for (int x = 0; x < 640 && col < 0; x++) /* the first column with bar colour */
    for (int y = 0; y < 400; y++)
      if ((*(uint32_t *)(data + y * stride + x * 4) & 0xFFFFFF) == 0x0072B2) {
        col = x + 2;
        break;
      }
  assert_true(col > 0);
  size_t bars = 0;
  bool in = false;
  for (int y = 0; y < 400; y++) {
    bool hit = (*(uint32_t *)(data + y * stride + col * 4) & 0xFFFFFF) == 0x0072B2;
    bars += hit && !in;
    in = hit;
  }
  assert_int_equal(bars, 10);
  cairo_surface_destroy(s);
  /* a folder that does not exist: a clear error, nothing left behind */
  assert_false(tt_chart_write_png(c, "/nonexistent-dir/x.png", 640, 400, &err));
  assert_int_equal(err.kind, TT_ERR_IO);
  assert_non_null(strstr(err.message, "cannot write /nonexistent-dir/x.png"));
  assert_string_equal(err.hint, "check that the folder exists and is writable");
  assert_false(tt_chart_write_file(c, "/nonexistent-dir/x.svg", 640, 400, &err));
  assert_int_equal(err.kind, TT_ERR_IO);
  assert_non_null(strstr(tt_error_text(&err), "cannot write /nonexistent-dir/x.svg: "));
  assert_non_null(strstr(tt_error_text(&err), "; check that the folder exists and is writable"));
  assert_false(tt_chart_write_png(c, path, 20000, 400, &err));
  assert_int_equal(err.kind, TT_ERR_CONFIG);
  assert_non_null(strstr(err.message, "cannot be drawn"));
  assert_false(tt_chart_write_file(c, "chart.gif", 640, 400, &err));
  assert_int_equal(err.kind, TT_ERR_CONFIG);
  assert_non_null(strstr(err.message, "name the file .png or .svg"));
  tt_chart_free(c);
  free(path);
}

typedef struct svg_count {
  size_t texts, bar_rects, depth;
  bool in_text, in_title;
  tt_buf text;
} svg_count;

static void XMLCALL svg_start(void *ud, const XML_Char *name, const XML_Char **attrs) {
  svg_count *c = ud;
  c->depth++;
  if (strcmp(name, "text") == 0) {
    c->texts++;
    c->in_text = true;
    if (!c->text.len || c->text.data[c->text.len - 1] != '|') tt_buf_putc(&c->text, '|');
  }
  if (strcmp(name, "title") == 0) c->in_title = true;
  if (strcmp(name, "rect") == 0)
    for (size_t i = 0; attrs[i]; i += 2)
      if (strcmp(attrs[i], "fill") == 0 && strcmp(attrs[i + 1], "#0072B2") == 0) c->bar_rects++;
}

static void XMLCALL svg_end(void *ud, const XML_Char *name) {
  svg_count *c = ud;
  (void)name;
  if (c->in_text) tt_buf_putc(&c->text, '|'); /* one text element ends */
  c->in_text = c->in_title = false;
}

static void XMLCALL svg_chars(void *ud, const XML_Char *s, int len) {
  svg_count *c = ud;
  if (c->in_text || c->in_title) tt_buf_append(&c->text, s, (size_t)len);
}

/* Parses svg; true when it is well-formed XML with an <svg> root. */
static bool svg_parse(const char *svg, size_t len, svg_count *out) {
  memset(out, 0, sizeof *out);
  XML_Parser p = XML_ParserCreate("UTF-8");
  XML_SetUserData(p, out);
  XML_SetElementHandler(p, svg_start, svg_end);
  XML_SetCharacterDataHandler(p, svg_chars);
  bool ok = XML_Parse(p, svg, (int)len, 1) == XML_STATUS_OK;
  if (!ok)
    fprintf(stderr, "SVG: %s at line %lu\n", XML_ErrorString(XML_GetErrorCode(p)),
            (unsigned long)XML_GetCurrentLineNumber(p));
  XML_ParserFree(p);
  return ok && strstr(svg, "<svg ") != NULL;
}

static void test_svg_is_xml(void **state) {
  (void)state;
  tt_chart *c = chart_of(INVOICES_SQL, INVOICES_SPEC, NULL);
  tt_buf svg = TT_BUF_INIT;
  tt_chart_render_svg(c, 1200, 700, &svg);
  svg_count n;
  assert_true(svg_parse(svg.data, svg.len, &n));
  assert_int_equal(n.bar_rects, 5);
  assert_non_null(strstr(tt_buf_cstr(&n.text), "Invoices per year"));
  assert_non_null(strstr(tt_buf_cstr(&n.text), "|2021|"));
  assert_non_null(strstr(tt_buf_cstr(&n.text), "|83|"));
  assert_non_null(strstr(svg.data, "width=\"1200\" height=\"700\""));
  tt_buf_free(&n.text);
  tt_buf_free(&svg);
  tt_chart_free(c);
  /* markup and control characters in labels and titles stay text */
  c = chart_of("SELECT '<b>&\"x\"' || char(1) || char(27) || '[31m' AS label, 5 AS v UNION ALL "
               "SELECT 'ok', 3",
               "{\"kind\":\"pie\",\"x\":\"label\",\"y\":\"v\",\"title\":\"A & B <c>\"}", NULL);
  tt_buf_reset(&svg);
  tt_chart_render_svg(c, 600, 400, &svg);
  assert_true(svg_parse(svg.data, svg.len, &n));
  assert_non_null(strstr(tt_buf_cstr(&n.text), "A & B <c>"));
  assert_non_null(strstr(tt_buf_cstr(&n.text), "<b>&\"x\""));
  assert_null(memchr(svg.data, 0x1b, svg.len));
  char *path = tt_xasprintf("%s/x.svg", g_tmp);
  tt_error err;
  assert_true(tt_chart_write_file(c, path, 600, 400, &err));
  size_t len;
  char *back = tu_read_file(path, &len);
  assert_int_equal(len, svg.len);
  free(back);
  free(path);
  tt_buf_free(&n.text);
  tt_buf_free(&svg);
  tt_chart_free(c);
}

/* ---- the value axis of line charts and their value labels ---------------------- */

/* Twelve months of values (a VALUES list) as a line chart. */
static tt_chart *line_of(const double *v, size_t n, const char *kind) {
  tt_buf sql = TT_BUF_INIT;
  tt_buf_puts(&sql, "SELECT column1 AS month, column2 AS value FROM (VALUES ");
  for (size_t i = 0; i < n; i++)
    tt_buf_printf(&sql, "%s('2024-%02zu', %.17g)", i ? ", " : "", i + 1, v[i]);
  tt_buf_puts(&sql, ")");
  char *spec = tt_xasprintf("{\"kind\":\"%s\",\"x\":\"month\",\"y\":\"value\",\"title\":\"Values\"}", kind);
  tt_chart *c = chart_of(tt_buf_cstr(&sql), spec, NULL);
  free(spec);
  tt_buf_free(&sql);
  return c;
}

/* The rows of a 1200x700 PNG of c that hold the line's colour. */
static void line_rows(const tt_chart *c, int *top, int *bottom) {
  char *path = tt_xasprintf("%s/line.png", g_tmp);
  tt_error err;
  assert_true(tt_chart_write_png(c, path, 1200, 700, &err));
  cairo_surface_t *s = cairo_image_surface_create_from_png(path);
  *top = 700;
  *bottom = -1;
  for (int y = 0; y < 700; y++)
    if (runs_of(s, y, 0, 1200, 0x0072B2) > 0) {
      if (y < *top) *top = y;
      *bottom = y;
    }
  cairo_surface_destroy(s);
  free(path);
}

/* The SVG's texts, "|"-separated. */
static char *svg_texts(const tt_chart *c) {
  tt_buf svg = TT_BUF_INIT;
  tt_chart_render_svg(c, 1200, 700, &svg);
  svg_count n;
  assert_true(svg_parse(svg.data, svg.len, &n));
  tt_buf_free(&svg);
  return tt_buf_detach(&n.text);
}

static void test_line_axis_starts_at_zero(void **state) {
  (void)state;
  /* a 3.6 % dip is drawn from zero: a small dip, not a crash */
  const double dip[] = {10000, 10020, 9980, 10010, 9640, 9700, 9820, 9900, 9950, 10000, 9990, 10030};
  tt_chart *c = line_of(dip, 12, "line");
  assert_null(tt_chart_note(c));
  char *texts = svg_texts(c);
  assert_non_null(strstr(texts, "|0|"));
  assert_null(strstr(texts, "y axis"));
  free(texts);
  int top, bottom;
  line_rows(c, &top, &bottom);
  /* the plot is about 560 px high: the line and its markers take a few
   * percent of it (a zoomed axis made them span all of it) */
  assert_true(bottom >= top);
  assert_true(bottom - top < 50);
  assert_true(bottom < 200); /* near the top: 10,000 is near the axis' end */
  tt_chart_free(c);

  /* a spread under 2 % of the values: zoomed, and the chart says so */
  const double flat[] = {9880, 9900, 9950, 9990, 10020, 10000, 9970, 9930, 9910, 9940, 9960, 9990};
  c = line_of(flat, 12, "line");
  assert_non_null(tt_chart_note(c));
  assert_string_equal(tt_chart_note(c), "Y axis starts at 9,850, not at zero");
  tt_buf d = TT_BUF_INIT;
  tt_chart_describe(c, &d);
  assert_non_null(strstr(tt_buf_cstr(&d), "(y axis starts at 9,850, not at zero)"));
  tt_buf_free(&d);
  texts = svg_texts(c);
  assert_non_null(strstr(texts, "|9,850|")); /* the first tick is where the note says */
  assert_null(strstr(texts, "|0|"));
  assert_null(strstr(texts, "|9,800|"));
  assert_non_null(strstr(texts, "|Y axis starts at 9,850, not at zero|"));
  free(texts);
  line_rows(c, &top, &bottom);
  assert_true(bottom - top > 300); /* the variation fills the plot */
  tt_chart_term_opts o = {.width = 60, .height = 10, .unicode = true};
  tt_buf out = TT_BUF_INIT;
  tt_chart_render_term(c, &o, &out);
  assert_non_null(strstr(tt_buf_cstr(&out), "\n 9,850 ┤\n")); /* the bottom row */
  assert_non_null(strstr(tt_buf_cstr(&out), "Y axis starts at 9,850, not at zero"));
  tt_buf_free(&out);
  tt_chart_free(c);

  /* all negative and close together: the axis ends below zero */
  const double neg[] = {-10020, -9990, -9880, -9950};
  c = line_of(neg, 4, "line");
  assert_string_equal(tt_chart_note(c), "Y axis ends at -9,850, not at zero");
  tt_chart_free(c);
  /* values on both sides of zero, or all equal: never zoomed */
  const double both[] = {-5, 3, 8};
  c = line_of(both, 3, "line");
  assert_null(tt_chart_note(c));
  tt_chart_free(c);
  const double same[] = {500, 500, 500};
  c = line_of(same, 3, "line");
  assert_null(tt_chart_note(c));
  texts = svg_texts(c);
  assert_non_null(strstr(texts, "|0|"));
  free(texts);
  tt_chart_free(c);
  /* areas always fill from zero */
  c = line_of(flat, 12, "area");
  assert_null(tt_chart_note(c));
  tt_chart_free(c);
}

/* A canvas that keeps the line's points and the texts drawn. */
typedef struct rec_text {
  double x, y, size;
  tt_anchor anchor;
  char *s;
} rec_text;

typedef struct rec_canvas {
  double line[64];
  size_t nline;
  rec_text texts[256];
  size_t ntexts;
} rec_canvas;

static void rec_rect(void *ud, double x, double y, double w, double h, tt_rgba fill) {
  (void)ud, (void)x, (void)y, (void)w, (void)h, (void)fill;
}
static void rec_line(void *ud, double x0, double y0, double x1, double y1, double w, tt_rgba c) {
  (void)ud, (void)x0, (void)y0, (void)x1, (void)y1, (void)w, (void)c;
}
static void rec_path(void *ud, const double *xy, size_t n, bool closed, tt_rgba fill, double w, tt_rgba stroke) {
  (void)fill, (void)stroke;
  rec_canvas *r = ud;
  if (closed || w <= 0 || n > 32) return;
  memcpy(r->line, xy, 2 * n * sizeof *xy);
  r->nline = n;
}
static void rec_circle(void *ud, double cx, double cy, double rad, tt_rgba fill) {
  (void)ud, (void)cx, (void)cy, (void)rad, (void)fill;
}
static void rec_wedge(void *ud, double cx, double cy, double rad, double a0, double a1, tt_rgba f, tt_rgba e) {
  (void)ud, (void)cx, (void)cy, (void)rad, (void)a0, (void)a1, (void)f, (void)e;
}
static void rec_text_op(void *ud, double x, double y, const char *s, double size, bool bold, tt_anchor anchor,
                        double angle, tt_rgba c) {
  (void)bold, (void)angle, (void)c;
  rec_canvas *r = ud;
  if (r->ntexts < 256) r->texts[r->ntexts++] = (rec_text){x, y, size, anchor, tt_xstrdup(s)};
}

/* Does the segment a-b pass through the box [x0,x1]x[y0,y1]? Sampled
 * finely: independent of the drawing code's own test. */
static bool seg_hits(const double *a, const double *b, double x0, double y0, double x1, double y1) {
  for (int i = 0; i <= 1000; i++) {
    double t = i / 1000.0, x = a[0] + (b[0] - a[0]) * t, y = a[1] + (b[1] - a[1]) * t;
    if (x > x0 && x < x1 && y > y0 && y < y1) return true;
  }
  return false;
}

/* Draws c and counts its value labels (texts that are one of values) and
 * those whose box the line runs through. */
static void label_overlaps(const tt_chart *c, const double *values, size_t n, size_t *labels, size_t *hit) {
  static const tt_canvas_ops ops = {rec_rect, rec_line, rec_path, rec_circle, rec_wedge, rec_text_op};
  rec_canvas *r = tt_xcalloc(1, sizeof *r);
  tt_text_metrics *m = tt_text_metrics_new();
  tt_chart_draw(c, 1200, 700, m, &ops, r);
  assert_int_equal(r->nline, n);
  *labels = *hit = 0;
  for (size_t i = 0; i < r->ntexts; i++) {
    const rec_text *t = &r->texts[i];
    bool value = fabs(t->size - 11.5) < 1e-9; /* value labels' size on 1200x700 (ticks: 12.5) */
    for (size_t k = 0; k < n && value; k++) {
      tt_buf v = TT_BUF_INIT;
      tt_fmt_value(&v, values[k]);
      bool same = strcmp(tt_buf_cstr(&v), t->s) == 0;
      tt_buf_free(&v);
      if (same) break;
      if (k + 1 == n) value = false;
    }
    if (value) {
      double w = tt_text_width(m, t->s, t->size, false);
      double x0 = t->anchor == TT_ANCHOR_START ? t->x : t->anchor == TT_ANCHOR_END ? t->x - w : t->x - w / 2;
      double y0 = t->y - t->size * 0.72, y1 = t->y; /* digits: cap height above the baseline */
      bool through = false;
      for (size_t k = 0; k + 1 < r->nline && !through; k++)
        through = seg_hits(&r->line[2 * k], &r->line[2 * k + 2], x0, y0, x0 + w, y1);
      (*labels)++;
      *hit += through;
    }
    free(r->texts[i].s);
  }
  tt_text_metrics_free(m);
  free(r);
}

static void test_line_labels_clear_the_line(void **state) {
  (void)state;
  /* steep swings and a steep fall into the last point: a label centred
   * over each point used to sit on the line */
  const double zigzag[] = {5, 95, 10, 90, 15, 85, 20, 80, 25, 75, 30, 70};
  const double fall[] = {40, 42, 45, 47, 50, 52, 55, 60, 70, 85, 98, 3};
  const double *cases[] = {zigzag, fall};
  for (size_t k = 0; k < 2; k++) {
    tt_chart *c = line_of(cases[k], 12, "line");
    size_t labels, hit;
    label_overlaps(c, cases[k], 12, &labels, &hit);
    assert_int_equal(labels, 12); /* every point has its value */
    assert_int_equal(hit, 0);
    tt_chart_free(c);
  }
}

/* ---- terminal previews against golden files --------------------------------------- */

static void check_golden(const char *name, const char *text) {
  char *path = tt_xasprintf("%s/tests/golden/chart/%s.txt", TT_SOURCE_DIR, name);
  const char *update = getenv("TT_UPDATE_GOLDEN");
  if (update && *update == '1') {
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
  }
  size_t len;
  char *want = tu_read_file(path, &len);
  if (!want) fprintf(stderr, "missing golden file %s (run with TT_UPDATE_GOLDEN=1)\n", path);
  assert_non_null(want);
  if (strcmp(want, text) != 0) fprintf(stderr, "%s differs; got:\n%s\n", path, text);
  assert_string_equal(want, text);
  free(want);
  free(path);
}

static void preview_golden(const char *name, const char *sql, const char *spec, bool unicode,
                           bool color) {
  tt_chart *c = chart_of(sql, spec, NULL);
  tt_chart_term_opts o = {.width = 80, .height = 10, .color = color, .unicode = unicode};
  tt_buf out = TT_BUF_INIT;
  tt_chart_render_term(c, &o, &out);
  check_golden(name, tt_buf_cstr(&out));
  tt_buf_free(&out);
  tt_chart_free(c);
}

static void test_terminal_golden(void **state) {
  (void)state;
  preview_golden("invoices_per_year", INVOICES_SQL, INVOICES_SPEC, true, false);
  preview_golden("invoices_per_year_ascii", INVOICES_SQL, INVOICES_SPEC, false, false);
  preview_golden("invoices_per_year_color", INVOICES_SQL, INVOICES_SPEC, true, true);
  preview_golden("top_artists",
                 "SELECT ar.Name AS artist, count(*) AS tracks FROM Track t JOIN Album al USING (AlbumId) "
                 "JOIN Artist ar USING (ArtistId) GROUP BY ar.ArtistId ORDER BY tracks DESC LIMIT 10",
                 "{\"kind\":\"bar\",\"x\":\"artist\",\"y\":\"tracks\",\"title\":\"Top 10 artists by number "
                 "of tracks\"}", true, false);
  preview_golden("monthly_revenue",
                 "SELECT strftime('%Y-%m', InvoiceDate) AS month, round(sum(Total), 2) AS revenue FROM Invoice "
                 "WHERE InvoiceDate LIKE '2022%' GROUP BY month",
                 "{\"kind\":\"line\",\"x\":\"month\",\"y\":\"revenue\",\"title\":\"Monthly revenue in 2022\"}",
                 true, false);
  preview_golden("monthly_revenue_ascii",
                 "SELECT strftime('%Y-%m', InvoiceDate) AS month, round(sum(Total), 2) AS revenue FROM Invoice "
                 "WHERE InvoiceDate LIKE '2022%' GROUP BY month",
                 "{\"kind\":\"line\",\"x\":\"month\",\"y\":\"revenue\",\"title\":\"Monthly revenue in 2022\"}",
                 false, false);
  preview_golden("media_types",
                 "SELECT m.Name AS media_type, count(*) AS tracks FROM Track t JOIN MediaType m USING "
                 "(MediaTypeId) GROUP BY m.MediaTypeId",
                 "{\"kind\":\"pie\",\"x\":\"media_type\",\"y\":\"tracks\",\"title\":\"Share of tracks per "
                 "media type\"}", true, false);
  preview_golden("track_minutes", "SELECT Milliseconds / 60000.0 AS minutes FROM Track",
                 "{\"kind\":\"histogram\",\"x\":\"minutes\",\"title\":\"Track lengths\",\"limit\":8}", true,
                 false);
  preview_golden("negative",
                 "SELECT BillingCountry AS country, round(sum(Total) - 40, 2) AS above FROM Invoice GROUP BY "
                 "country ORDER BY above DESC LIMIT 4 OFFSET 13",
                 "{\"kind\":\"bar\",\"x\":\"country\",\"y\":\"above\",\"title\":\"Revenue above 40\"}", true,
                 false);
  preview_golden("two_series",
                 "SELECT BillingCountry AS country, round(sum(Total)) AS revenue, count(*) AS invoices FROM "
                 "Invoice GROUP BY country ORDER BY revenue DESC LIMIT 3",
                 "{\"kind\":\"bar\",\"x\":\"country\",\"y\":[\"revenue\",\"invoices\"],\"title\":\"Revenue "
                 "and invoices\"}", true, false);
  preview_golden("empty", "SELECT Name, Milliseconds FROM Track WHERE 0",
                 "{\"kind\":\"bar\",\"x\":\"Name\",\"y\":\"Milliseconds\",\"title\":\"Nothing\"}", true, false);
  /* hostile labels never reach the terminal raw */
  tt_chart *c = chart_of("SELECT 'x' || char(27) || ']0;owned' || char(7) || char(8238) || 'y' AS l, 1 AS v",
                         "{\"kind\":\"bar\",\"x\":\"l\",\"y\":\"v\",\"title\":\"t\" }", NULL);
  tt_chart_term_opts o = {.width = 60, .height = 8, .unicode = true};
  tt_buf out = TT_BUF_INIT;
  tt_chart_render_term(c, &o, &out);
  assert_null(memchr(out.data, 0x1b, out.len));
  assert_null(memchr(out.data, 0x07, out.len));
  assert_null(strstr(out.data, "\u202e"));
  tt_buf_free(&out);
  tt_chart_free(c);
}

/* ---- random specs and results ------------------------------------------------------ */

static uint64_t g_rng;

static uint64_t rnd(void) { /* xorshift64* */
  g_rng ^= g_rng >> 12;
  g_rng ^= g_rng << 25;
  g_rng ^= g_rng >> 27;
  return g_rng * 2685821657736338717ull;
}

static size_t rnd_below(size_t n) { return n ? (size_t)(rnd() % n) : 0; }

static const char *const g_texts[] = {
    "Rock", "Latin", "", "a much longer category label that will not fit anywhere at all, really",
    "日本語のラベル", "Ünïcödé", "emoji 🎸🥁", "tab\there", "nl\nthere", "\x1b[31mred", "bidi \u202ex",
    "bad utf8 \xff\xfe", "<&>\"'", "2021", "2021-03", "2021-03-04", "2021-03-04 05:06:07", "12.5",
    "-3", "1e308", "NaN", "0x10", " 7"};

static tt_value rnd_value(tt_arena *a, int kind) {
  tt_value v = {.type = TT_VAL_NULL};
  if (rnd_below(8) == 0) return v; /* NULLs everywhere */
  switch (kind) {
  case 0: {
    static const int64_t ints[] = {0, 1, -1, 7, 1999, 2021, INT64_MAX, INT64_MIN, 1000000007};
    v.type = TT_VAL_INT;
    v.u.i = rnd_below(3) ? (int64_t)rnd_below(2000) - 500 : ints[rnd_below(9)];
    break;
  }
  case 1: {
    static const double reals[] = {0.5, -0.25, 1e300, -1e300, 1e-300, 3.14159, 1e18, INFINITY, NAN};
    v.type = TT_VAL_REAL;
    v.u.r = rnd_below(3) ? ((double)rnd_below(100000) - 20000) / 7.0 : reals[rnd_below(9)];
    break;
  }
  case 2: {
    const char *s = g_texts[rnd_below(sizeof g_texts / sizeof g_texts[0])];
    char buf[64];
    if (rnd_below(2)) {
      snprintf(buf, sizeof buf, "cat %zu", rnd_below(6000));
      s = buf;
    }
    v.type = TT_VAL_TEXT;
    v.len = strlen(s);
    v.u.s = tt_arena_memdup(a, s, v.len);
    break;
  }
  case 3: { /* dates */
    char buf[32];
    snprintf(buf, sizeof buf, rnd_below(2) ? "%04zu-%02zu-01" : "%04zu-%02zu-%02zu", 1990 + rnd_below(40),
             1 + rnd_below(12), 1 + rnd_below(28));
    v.type = TT_VAL_TEXT;
    v.len = strlen(buf);
    v.u.s = tt_arena_memdup(a, buf, v.len);
    break;
  }
  default:
    v.type = TT_VAL_BLOB;
    v.len = 3;
    v.u.s = tt_arena_memdup(a, "\x00\x01\x02", 3);
  }
  return v;
}

/* A result of 1-4 columns c0..c3 of random kinds and a random number of rows. */
static tt_result *rnd_result(int kinds[4], size_t *ncols) {
  tt_result *r = tt_xcalloc(1, sizeof *r);
  r->arena = tt_arena_new();
  r->ncols = 1 + rnd_below(4);
  *ncols = r->ncols;
  r->names = tt_arena_alloc(r->arena, r->ncols * sizeof *r->names);
  r->decltypes = tt_arena_alloc(r->arena, r->ncols * sizeof *r->decltypes);
  for (size_t c = 0; c < r->ncols; c++) {
    char name[8];
    snprintf(name, sizeof name, "c%zu", c);
    r->names[c] = tt_arena_strdup(r->arena, name);
    r->decltypes[c] = "";
    kinds[c] = (int)rnd_below(5) == 4 && rnd_below(4) ? (int)rnd_below(4) : (int)rnd_below(5);
  }
  size_t pick = rnd_below(100);
  r->nrows = pick < 5 ? 0 : pick < 10 ? 1 : pick < 70 ? rnd_below(30) : pick < 95 ? rnd_below(600)
                                                                               : 1000 + rnd_below(4500);
  r->cells = tt_xcalloc(r->nrows * r->ncols + 1, sizeof *r->cells);
  bool mixed = rnd_below(4) == 0;
  for (size_t i = 0; i < r->nrows; i++)
    for (size_t c = 0; c < r->ncols; c++)
      r->cells[i * r->ncols + c] = rnd_value(r->arena, mixed && rnd_below(5) == 0 ? (int)rnd_below(5) : kinds[c]);
  r->truncated = rnd_below(5) == 0;
  r->total_rows = (int64_t)r->nrows + (r->truncated ? (int64_t)rnd_below(100000) : 0);
  r->total_exact = rnd_below(2);
  return r;
}

/* A column for y: mostly one that holds numbers, when there is one. */
static size_t rnd_y_col(const int kinds[4], size_t ncols) {
  size_t numeric[4], n = 0;
  for (size_t c = 0; c < ncols; c++)
    if (kinds[c] <= 1) numeric[n++] = c;
  return n && rnd_below(10) < 8 ? numeric[rnd_below(n)] : rnd_below(ncols);
}

static json_t *rnd_spec(const int kinds[4], size_t ncols) {
  static const char *const chart_kinds[] = {"bar", "line", "area", "scatter", "pie", "histogram"};
  const char *kind = chart_kinds[rnd_below(6)];
  char col[8];
  json_t *s = json_object();
  json_object_set_new(s, "kind", json_string(kind));
  snprintf(col, sizeof col, "c%zu", rnd_below(ncols + 1)); /* sometimes a column that is not there */
  json_object_set_new(s, "x", json_string(col));
  json_object_set_new(s, "title", json_string(rnd_below(4) ? "Random chart"
                                                  : "🎸 « titre » very long title that goes on and on "
                                                    "and on and on and on and on and on and on"));
  if (strcmp(kind, "histogram") != 0) {
    size_t ny = 1 + (strcmp(kind, "pie") ? rnd_below(3) : 0);
    json_t *ys = json_array();
    for (size_t i = 0; i < ny; i++) {
      snprintf(col, sizeof col, "c%zu", rnd_y_col(kinds, ncols));
      json_array_append_new(ys, json_string(col));
    }
    json_object_set_new(s, "y", ny == 1 && rnd_below(2) ? json_incref(json_array_get(ys, 0)) : json_incref(ys));
    json_decref(ys);
    if (ny == 1 && strcmp(kind, "pie") && rnd_below(4) == 0) {
      snprintf(col, sizeof col, "c%zu", rnd_below(ncols));
      json_object_set_new(s, "series", json_string(col));
    }
  }
  static const char *const sorts[] = {"x", "y", "none"};
  if (rnd_below(3) == 0) json_object_set_new(s, "sort", json_string(sorts[rnd_below(3)]));
  if (rnd_below(4) == 0) json_object_set_new(s, "limit", json_integer(1 + (json_int_t)rnd_below(rnd_below(2) ? 10 : 10000)));
  if (strcmp(kind, "bar") == 0 && rnd_below(3) == 0)
    json_object_set_new(s, "orientation", json_string(rnd_below(2) ? "vertical" : "horizontal"));
  if (rnd_below(5) == 0) json_object_set_new(s, "x_label", json_string("x axis « label »"));
  return s;
}

static void test_random_specs_never_crash(void **state) {
  (void)state;
  const char *seed_env = getenv("TT_CHART_SEED"), *cases_env = getenv("TT_CHART_CASES");
  g_rng = seed_env ? strtoull(seed_env, NULL, 10) : 20261202;
  if (!g_rng) g_rng = 1;
  long cases = cases_env ? strtol(cases_env, NULL, 10) : 10000;
  fprintf(stderr, "random charts: %ld cases, seed %s\n", cases, seed_env ? seed_env : "20261202");
  char *png = tt_xasprintf("%s/random.png", g_tmp);
  size_t built = 0, refused = 0, pngs = 0;
  for (long k = 0; k < cases; k++) {
    int kinds[4];
    size_t ncols;
    tt_result *r = rnd_result(kinds, &ncols);
    json_t *sj = rnd_spec(kinds, ncols);
    tt_error err = TT_ERROR_INIT;
    tt_chart_spec *spec = tt_chart_spec_from_json(sj, &err);
    tt_chart *c = spec ? tt_chart_build(spec, r, &err) : NULL;
    if (!c) {
      refused++;
      assert_int_equal(err.kind, TT_ERR_CONFIG);
      assert_true(err.message[0] != '\0'); /* every refusal says why */
    } else {
      built++;
      assert_true(tt_chart_npoints(c) <= c->n * c->nseries);
      tt_buf out = TT_BUF_INIT;
      tt_chart_describe(c, &out);
      tt_buf_reset(&out);
      tt_chart_term_opts o = {.width = 20 + rnd_below(120), .height = 5 + rnd_below(20),
                              .color = rnd_below(2), .unicode = rnd_below(4) != 0};
      tt_chart_render_term(c, &o, &out);
      assert_true(tt_utf8_valid(out.data, out.len, NULL));
      tt_buf_reset(&out);
      int w = 100 + (int)rnd_below(700), h = 100 + (int)rnd_below(500);
      tt_chart_render_svg(c, w, h, &out);
      if (k % 10 == 0) {
        svg_count n;
        assert_true(svg_parse(out.data, out.len, &n));
        tt_buf_free(&n.text);
      }
      if (k % 25 == 0) {
        assert_true(tt_chart_write_png(c, png, w, h, &err));
        cairo_surface_t *s = cairo_image_surface_create_from_png(png);
        assert_int_equal(cairo_image_surface_get_width(s), w);
        cairo_surface_destroy(s);
        pngs++;
      }
      tt_buf_free(&out);
      tt_chart_free(c);
    }
    tt_chart_spec_free(spec);
    json_decref(sj);
    tt_result_free(r);
  }
  fprintf(stderr, "random charts: %zu built (%zu PNGs read back), %zu refused with a reason\n", built,
          pngs, refused);
  assert_true(built > (size_t)cases / 5);
  free(png);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_spec_errors),
      cmocka_unit_test(test_column_errors_list_the_columns),
      cmocka_unit_test(test_column_list_fits_the_error),
      cmocka_unit_test(test_invoices_per_year),
      cmocka_unit_test(test_dates_and_years),
      cmocka_unit_test(test_sorting_limits_and_notes),
      cmocka_unit_test(test_pie_histogram_series),
      cmocka_unit_test(test_ticks_and_numbers),
      cmocka_unit_test(test_edge_cases_found_in_review),
      cmocka_unit_test(test_png_reads_back),
      cmocka_unit_test(test_svg_is_xml),
      cmocka_unit_test(test_line_axis_starts_at_zero),
      cmocka_unit_test(test_line_labels_clear_the_line),
      cmocka_unit_test(test_terminal_golden),
      cmocka_unit_test(test_random_specs_never_crash),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
