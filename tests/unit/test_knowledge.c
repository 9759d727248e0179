/* test_knowledge.c — the user's knowledge file: a good file, every
 * malformed case with the line it names, hostile bytes (huge lines, NUL,
 * invalid UTF-8) that must never crash, descriptions reaching chinook's
 * cards, and the definitions and nearest examples chosen for a question. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <sqlite3.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "schema/schema.h"
#include "testutil.h"

static const char good[] =
    "{\n"
    "  \"tables\": {\"Invoice\": \"one row per sale to a customer\"},\n"
    "  \"columns\": {\"Invoice.Total\": \"amount charged in US dollars, tax included\"},\n"
    "  \"definitions\": [\"revenue = SUM(InvoiceLine.UnitPrice * InvoiceLine.Quantity)\",\n"
    "                  \"top customer means by revenue\"],\n"
    "  \"examples\": [\n"
    "    {\"question\": \"How many tracks are there?\", \"sql\": \"SELECT COUNT(*) FROM Track\"},\n"
    "    {\"question\": \"Revenue per country\", \"sql\": \"SELECT BillingCountry, SUM(Total) FROM Invoice GROUP BY 1\"},\n"
    "    {\"question\": \"Which genres have the most tracks?\", \"sql\": \"SELECT 1 -- genres\"},\n"
    "    {\"question\": \"List employees\", \"sql\": \"SELECT * FROM Employee\"},\n"
    "    {\"question\": \"Tracks per album\", \"sql\": \"SELECT AlbumId, COUNT(*) FROM Track GROUP BY 1\"}\n"
    "  ]\n"
    "}\n";

static void test_good_file_and_render(void **state) {
  (void)state;
  tt_error err;
  tt_knowledge *k = tt_knowledge_parse(good, strlen(good), &err);
  if (!k) fprintf(stderr, "line %d: %s\n", err.line, err.message);
  assert_non_null(k);
  tt_buf b = TT_BUF_INIT;
  tt_knowledge_render_for(k, "Which country brings the most revenue?", SIZE_MAX, &b);
  const char *t = tt_buf_cstr(&b);
  /* few definitions: all of them go in */
  assert_non_null(strstr(t, "- revenue = SUM(InvoiceLine.UnitPrice * InvoiceLine.Quantity)\n"));
  assert_non_null(strstr(t, "- top customer means by revenue\n"));
  /* the nearest example first; unrelated ones left out */
  const char *q = strstr(t, "Q: Revenue per country\nSQL: SELECT BillingCountry");
  assert_non_null(q);
  assert_null(strstr(t, "List employees"));
  tt_buf_reset(&b);
  tt_knowledge_render_for(k, "number of tracks per album", SIZE_MAX, &b);
  t = tt_buf_cstr(&b);
  const char *a = strstr(t, "Q: Tracks per album"), *c = strstr(t, "Q: How many tracks");
  assert_non_null(a);
  assert_non_null(c);
  assert_true(a < c); /* three shared words before one */
  size_t shown = 0;
  for (const char *p = t; (p = strstr(p, "\nQ: ")) != NULL; p++) shown++;
  assert_true(shown <= 3);
  tt_buf_free(&b);
  tt_knowledge_free(k);
}

typedef struct bad_case {
  const char *text;
  int line;          /* the line the error must name (0: none) */
  const char *says;  /* a part of the message */
} bad_case;

static void test_malformed_names_the_line(void **state) {
  (void)state;
  static const bad_case cases[] = {
      {"{\n  \"tables\": {\"A\": \"x\"},\n  \"columns\": {\"A.b\": \"y\",}\n}\n", 3, "fix the JSON"},
      {"{\n\n\n  \"examples\": [\n", 5, "fix the JSON"},
      {"", 1, "fix the JSON"},
      {"[1, 2]\n", 1, "one JSON object"},
      /* a wrong shape: the line of the key or of the list's element */
      {"{\n\"tables\": {\n\"B\": \"ok\",\n\"A\": 3}}", 4, "description of \"A\""},
      {"{\n\n\"tables\": [\"A\"]}", 3, "\"tables\" must be an object"},
      {"{\"columns\":\n {\"Total\": \"no table\"}}", 2, "Table.Column"},
      {"{\"definitions\": \"revenue\"}", 1, "list of texts"},
      {"{\"definitions\": [\n\"a, [b]\",\n\"c\\\"d\",\n 2]}", 4, "definition 3 must be text"},
      {"{\"examples\": [\n {\"question\": \"q\", \"sql\": \"s\"},\n\n {\"question\": \"q\"}]}", 4,
       "example 2 must be"},
      {"{\"examples\": {}}", 1, "\"examples\" must be a list"},
      {"{\n\n\"exmaples\": []}", 3, "unknown key \"exmaples\""},
      {"{\"tables\": {}, \"tables\": {}}", 1, "duplicate"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    tt_error err;
    tt_knowledge *k = tt_knowledge_parse(cases[i].text, strlen(cases[i].text), &err);
    if (k || err.line != cases[i].line || !strstr(err.message, cases[i].says))
      fprintf(stderr, "case %zu: line %d: %s\n", i, err.line, err.message);
    assert_null(k);
    assert_int_equal(err.line, cases[i].line);
    assert_non_null(strstr(err.message, cases[i].says));
  }
}

static void test_hostile_bytes_never_crash(void **state) {
  (void)state;
  tt_error err;
  /* a NUL byte inside a string, on line 2 */
  static const char nul[] = "{\n\"tables\": {\"A\": \"x\0y\"}}";
  assert_null(tt_knowledge_parse(nul, sizeof nul - 1, &err));
  assert_int_equal(err.line, 2);
  /* an escaped NUL is refused too */
  static const char enul[] = "{\"tables\": {\"A\": \"x\\u0000y\"}}";
  assert_null(tt_knowledge_parse(enul, sizeof enul - 1, &err));
  /* invalid UTF-8 on line 3 */
  static const char bad8[] = "{\n\"tables\":\n{\"A\": \"\xff\xfe\"}}";
  assert_null(tt_knowledge_parse(bad8, sizeof bad8 - 1, &err));
  assert_int_equal(err.line, 3);
  /* a 2 MB line: one huge definition parses and renders (for a question
   * it shares a word with) */
  size_t n = 2u << 20;
  char *huge = malloc(n + 64);
  strcpy(huge, "{\"definitions\": [\"huge ");
  size_t off = strlen(huge);
  memset(huge + off, 'w', n);
  strcpy(huge + off + n, "\"]}");
  tt_knowledge *k = tt_knowledge_parse(huge, strlen(huge), &err);
  assert_non_null(k);
  tt_buf b = TT_BUF_INIT;
  tt_knowledge_render_for(k, "a huge one", SIZE_MAX, &b);
  assert_true(b.len > n);
  tt_buf_free(&b);
  tt_knowledge_free(k);
  /* over 8 MB: refused with advice, not read into the prompt */
  size_t big = 9u << 20;
  char *over = calloc(big, 1);
  memset(over, ' ', big);
  assert_null(tt_knowledge_parse(over, big, &err));
  assert_non_null(strstr(err.message, "over 8 MB"));
  free(over);
  free(huge);
  /* a missing file */
  assert_null(tt_knowledge_load("/nonexistent/x.knowledge.json", &err));
  assert_non_null(strstr(err.message, "cannot open"));
}

static void test_descriptions_reach_cards(void **state) {
  (void)state;
  const char *path = tu_chinook();
  tt_error derr;
  tt_db *db = tt_db_open(path, NULL, &derr);
  assert_non_null(db);
  tt_catalog *cat = tt_db_catalog_load(db, &derr);
  assert_non_null(cat);
  tt_db_close(db);
  tt_error err;
  tt_knowledge *k = tt_knowledge_parse(good, strlen(good), &err);
  assert_non_null(k);
  tt_knowledge_apply(k, cat);
  tt_schema *s = tt_schema_new(cat);
  tt_schema_set_knowledge(s, k);
  assert_ptr_equal(tt_schema_knowledge(s), k);
  const tt_card *c = tt_schema_find(s, "invoice");
  assert_non_null(c);
  if (!strstr(c->text, "one row per sale to a customer") ||
      !strstr(c->text, "amount charged in US dollars, tax included"))
    fprintf(stderr, "%s", c->text);
  assert_non_null(strstr(c->text, "one row per sale to a customer"));
  assert_non_null(strstr(c->text, "amount charged in US dollars, tax included"));
  /* other tables are untouched */
  assert_null(strstr(tt_schema_find(s, "Track")->text, "US dollars"));
  tt_schema_free(s);
}

static void test_add_example_round_trip(void **state) {
  (void)state;
  tt_knowledge *k = tt_knowledge_new_empty();
  tt_knowledge_add_example(k, "How many artists?", "SELECT COUNT(*) FROM Artist");
  char *text = tt_knowledge_dump(k);
  tt_error err;
  tt_knowledge *again = tt_knowledge_parse(text, strlen(text), &err);
  assert_non_null(again);
  tt_buf b = TT_BUF_INIT;
  tt_knowledge_render_for(again, "how many artists", SIZE_MAX, &b);
  assert_string_equal(tt_buf_cstr(&b), "Questions like mine answered before:\n"
                                       "Q: How many artists?\nSQL: SELECT COUNT(*) FROM Artist\n");
  tt_buf_free(&b);
  free(text);
  tt_knowledge_free(k);
  tt_knowledge_free(again);
}


/* The part stays within the token cap: items that do not fit are left out
 * and counted; a word's stem finds its other forms. */
static void test_cap_and_stems(void **state) {
  (void)state;
  tt_error err;
  tt_knowledge *k = tt_knowledge_parse(good, strlen(good), &err);
  assert_non_null(k);
  tt_buf b = TT_BUF_INIT;
  assert_int_equal(tt_knowledge_render_for(k, "Which country brings the most revenue?", SIZE_MAX, &b), 0);
  size_t full = tt_tokens_estimate(b.data, b.len);
  for (size_t cap = 0; cap <= full; cap += 5) {
    tt_buf_reset(&b);
    size_t left_out = tt_knowledge_render_for(k, "Which country brings the most revenue?", cap, &b);
    assert_true(tt_tokens_estimate(b.data ? b.data : "", b.len) <= cap);
    assert_true(cap == full || left_out > 0);
    if (cap == 0) assert_int_equal(b.len, 0);
  }
  /* "countries" meets "country", "tracks" meets "track" */
  tt_buf_reset(&b);
  tt_knowledge_render_for(k, "revenue of all countries", SIZE_MAX, &b);
  assert_non_null(strstr(tt_buf_cstr(&b), "Q: Revenue per country"));
  tt_buf_free(&b);
  static const char stems[] = "{\"examples\": [{\"question\": \"Invoices ordered by customer\", "
                              "\"sql\": \"SELECT 1\"}]}";
  tt_knowledge *k2 = tt_knowledge_parse(stems, strlen(stems), &err);
  assert_non_null(k2);
  b = (tt_buf)TT_BUF_INIT;
  tt_knowledge_render_for(k2, "which customers ordering", SIZE_MAX, &b);
  assert_non_null(strstr(tt_buf_cstr(&b), "Q: Invoices ordered by customer"));
  tt_buf_reset(&b);
  tt_knowledge_render_for(k2, "list the classes", SIZE_MAX, &b); /* nothing shared */
  assert_int_equal(b.len, 0);
  tt_buf_free(&b);
  tt_knowledge_free(k2);
  tt_knowledge_free(k);
}

static void test_many_definitions_only_relevant(void **state) {
  (void)state;
  static const char many[] =
      "{\"definitions\": [\"d1 alpha\", \"d2 beta\", \"d3 gamma\", \"d4 delta\", \"d5 epsilon\",\n"
      "\"d6 zeta\", \"d7 theta\", \"d8 iota\", \"revenue = SUM(Total)\"]}";
  tt_error err;
  tt_knowledge *k = tt_knowledge_parse(many, strlen(many), &err);
  assert_non_null(k);
  tt_buf b = TT_BUF_INIT;
  tt_knowledge_render_for(k, "total revenue?", SIZE_MAX, &b);
  assert_string_equal(tt_buf_cstr(&b), "Definitions the user gave (follow them):\n- revenue = SUM(Total)\n");
  tt_buf_free(&b);
  tt_knowledge_free(k);
}

static void test_file_overrides_sql_comments(void **state) {
  (void)state;
  char path[] = "/tmp/tt-knowledge-XXXXXX";
  int fd = mkstemp(path);
  assert_true(fd >= 0);
  close(fd);
  sqlite3 *w;
  assert_int_equal(sqlite3_open(path, &w), SQLITE_OK);
  assert_int_equal(sqlite3_exec(w, "CREATE TABLE t ( -- from the comment\n"
                                   "  a INTEGER, -- a from the comment\n"
                                   "  b TEXT -- b from the comment\n);",
                                NULL, NULL, NULL), SQLITE_OK);
  sqlite3_close(w);
  tt_error derr;
  tt_db *db = tt_db_open(path, NULL, &derr);
  assert_non_null(db);
  tt_catalog *cat = tt_db_catalog_load(db, &derr);
  tt_db_close(db);
  static const char k_text[] = "{\"columns\": {\"T.A\": \"a from the file\"}}";
  tt_error err;
  tt_knowledge *k = tt_knowledge_parse(k_text, strlen(k_text), &err);
  tt_knowledge_apply(k, cat);
  tt_schema *s = tt_schema_new(cat);
  tt_schema_set_knowledge(s, k);
  const char *text = tt_schema_find(s, "t")->text;
  assert_non_null(strstr(text, "a from the file"));
  assert_null(strstr(text, "a from the comment"));
  assert_non_null(strstr(text, "b from the comment")); /* the rest stay */
  tt_schema_free(s);
  unlink(path);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_good_file_and_render),
      cmocka_unit_test(test_malformed_names_the_line),
      cmocka_unit_test(test_hostile_bytes_never_crash),
      cmocka_unit_test(test_descriptions_reach_cards),
      cmocka_unit_test(test_add_example_round_trip),
      cmocka_unit_test(test_many_definitions_only_relevant),
      cmocka_unit_test(test_cap_and_stems),
      cmocka_unit_test(test_file_overrides_sql_comments),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
