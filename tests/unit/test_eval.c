/* test_eval.c — the execution-accuracy comparison on tricky pairs, with
 * results made by SQLite itself (VALUES queries on chinook): row order,
 * duplicates, column permutations, floats, NULLs, types, empty results;
 * ORDER BY at the outer level; the oracle backend's replies; --since; and
 * the errors of inputs an evaluation cannot start from. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eval/eval.h"
#include "testutil.h"

static tt_db *g_db;

static int setup(void **state) {
  (void)state;
  tt_error err;
  tt_db_opts o = tt_db_default_opts();
  o.double_quoted_strings = true;
  g_db = tt_db_open(tu_chinook(), &o, &err);
  return g_db ? 0 : -1;
}

static int teardown(void **state) {
  (void)state;
  tt_db_close(g_db);
  return 0;
}

static tt_result *q(const char *sql) {
  tt_error err;
  tt_result *r = tt_db_query(g_db, sql, strlen(sql), &err);
  if (!r) fprintf(stderr, "%s: %s\n", sql, err.message);
  assert_non_null(r);
  return r;
}

/* gold and pred compared; the outer ORDER BY of gold decides the order. */
static bool same(const char *gold, const char *pred) {
  tt_result *g = q(gold), *p = q(pred);
  tt_buf detail = TT_BUF_INIT;
  bool eq = tt_ex_equal(g, p, tt_sql_outer_order_by(gold), &detail);
  if (!eq && getenv("TT_VERBOSE")) fprintf(stderr, "%s | %s: %s\n", gold, pred, tt_buf_cstr(&detail));
  tt_buf_free(&detail);
  tt_result_free(g);
  tt_result_free(p);
  return eq;
}

static void test_rows_as_multisets(void **state) {
  (void)state;
  /* order does not count without ORDER BY */
  assert_true(same("SELECT * FROM (VALUES (1,'a'),(2,'b'))", "SELECT * FROM (VALUES (2,'b'),(1,'a'))"));
  /* duplicates count: a multiset, not a set */
  assert_false(same("SELECT * FROM (VALUES (1),(1),(2))", "SELECT * FROM (VALUES (1),(2),(2))"));
  assert_false(same("SELECT * FROM (VALUES (1),(1))", "SELECT * FROM (VALUES (1))"));
  assert_true(same("SELECT * FROM (VALUES (1),(1),(2))", "SELECT * FROM (VALUES (2),(1),(1))"));
  /* both empty: equal, whatever the columns */
  assert_true(same("SELECT Name FROM Track WHERE 0", "SELECT TrackId, Name FROM Track WHERE 0"));
  assert_false(same("SELECT Name FROM Track WHERE 0", "SELECT Name FROM Track LIMIT 1"));
}

static void test_order_by_at_the_outer_level(void **state) {
  (void)state;
  assert_true(tt_sql_outer_order_by("SELECT a FROM t ORDER BY a"));
  assert_true(tt_sql_outer_order_by("select a from t order\n  by a desc limit 3"));
  assert_false(tt_sql_outer_order_by("SELECT a FROM (SELECT a FROM t ORDER BY a LIMIT 3)"));
  assert_false(tt_sql_outer_order_by("SELECT 'ORDER BY' FROM t"));
  assert_false(tt_sql_outer_order_by("SELECT \"order by\" FROM t -- ORDER BY a"));
  assert_false(tt_sql_outer_order_by("SELECT a FROM t /* ORDER BY a */"));
  assert_false(tt_sql_outer_order_by("SELECT border_by FROM t"));
  assert_true(tt_sql_outer_order_by("WITH x AS (SELECT 1 AS a) SELECT a FROM x ORDER BY a"));
  assert_false(tt_sql_outer_order_by("WITH x AS (SELECT 1 AS a ORDER BY a) SELECT a FROM x"));
  assert_true(tt_sql_outer_order_by("SELECT a FROM t ORDER/**/BY a"));
  assert_true(tt_sql_outer_order_by("SELECT a FROM t ORDER -- why\n BY a"));
  assert_false(tt_sql_outer_order_by("SELECT rank() OVER (ORDER BY a) FROM t"));
  assert_true(tt_sql_outer_order_by("SELECT a FROM t UNION SELECT b FROM u ORDER BY 1"));
  /* ordered gold: the order must match */
  assert_false(same("SELECT * FROM (VALUES (1),(2)) ORDER BY 1", "SELECT * FROM (VALUES (2),(1))"));
  assert_true(same("SELECT * FROM (VALUES (2),(1)) ORDER BY 1", "SELECT * FROM (VALUES (1),(2))"));
  /* an ORDER BY only inside the gold's subquery leaves order free */
  assert_true(same("SELECT * FROM (SELECT * FROM (VALUES (1),(2)) ORDER BY 1 LIMIT 2)",
                   "SELECT * FROM (VALUES (2),(1))"));
}

static void test_column_permutations(void **state) {
  (void)state;
  assert_true(same("SELECT * FROM (VALUES (1,'a',2.5),(2,'b',3.5))", "SELECT * FROM (VALUES ('a',2.5,1),('b',3.5,2))"));
  /* same column values, but rows do not line up under any permutation */
  assert_false(same("SELECT * FROM (VALUES (1,'a'),(2,'b'))", "SELECT * FROM (VALUES ('b',1),('a',2))"));
  /* two columns with identical values: either assignment */
  assert_true(same("SELECT * FROM (VALUES (1,1,'x'),(2,2,'y'))", "SELECT * FROM (VALUES ('x',1,1),('y',2,2))"));
  assert_false(same("SELECT * FROM (VALUES (1,2))", "SELECT * FROM (VALUES (1))"));
  /* permutation and order together */
  assert_true(same("SELECT * FROM (VALUES (1,'a'),(2,'b')) ORDER BY 1", "SELECT column2, column1 FROM (VALUES (1,'a'),(2,'b'))"));
  /* many columns of one value: matched without trying every permutation */
  assert_true(same("SELECT 1,1,1,1,1,1,1,1,1,1,2", "SELECT 2,1,1,1,1,1,1,1,1,1,1"));
  /* every column fits some column but no full matching exists: a bounded
   * search, not an exponential one (16 columns would take hours: CTest's
   * TIMEOUT would end the test) */
  assert_false(same("SELECT 1,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0", "SELECT 1,1,0,0,0,0,0,0,0,0,0,0,0,0,0,0"));
}

static void test_numbers_nulls_and_types(void **state) {
  (void)state;
  /* integers and reals compare as numbers; floats within a tolerance */
  assert_true(same("SELECT 3", "SELECT 3.0"));
  assert_true(same("SELECT 0.1 + 0.2", "SELECT 0.3"));
  assert_true(same("SELECT 1234567.8901234", "SELECT 1234567.8901235"));
  assert_false(same("SELECT 1.5", "SELECT 1.6"));
  assert_false(same("SELECT 2.0", "SELECT 2.01"));
  /* values equal within the tolerance sort alike, so their rows line up */
  assert_true(same("SELECT * FROM (VALUES (1.0,'b'),(1.0000000001,'a'))",
                   "SELECT * FROM (VALUES (1.0000000001,'b'),(1.0,'a'))"));
  /* infinity equals only itself */
  assert_false(same("SELECT 1e999", "SELECT 5"));
  assert_false(same("SELECT 1e999", "SELECT -1e999"));
  assert_true(same("SELECT 1e999", "SELECT 2e999"));
  assert_true(same("SELECT avg(Milliseconds) FROM Track", "SELECT sum(Milliseconds) * 1.0 / count(*) FROM Track"));
  /* NULL equals NULL, and nothing else */
  assert_true(same("SELECT NULL", "SELECT NULL"));
  assert_false(same("SELECT NULL", "SELECT 0"));
  assert_false(same("SELECT NULL", "SELECT ''"));
  /* text is text: '1' is not 1; case counts */
  assert_false(same("SELECT '1'", "SELECT 1"));
  assert_false(same("SELECT 'Rock'", "SELECT 'rock'"));
  /* double-quoted strings in gold run as Spider runs them */
  assert_true(same("SELECT Name FROM Genre WHERE Name = \"Rock\"", "SELECT Name FROM Genre WHERE Name = 'Rock'"));
  /* a real query with its columns the other way round */
  assert_true(same("SELECT g.Name, count(*) FROM Track t JOIN Genre g USING (GenreId) GROUP BY g.Name",
                   "SELECT count(*), g.Name FROM Genre g JOIN Track t USING (GenreId) GROUP BY g.GenreId"));
  /* the reason says what differs */
  tt_result *g = q("SELECT * FROM (VALUES (1),(2),(3))"), *p = q("SELECT 1");
  tt_buf detail = TT_BUF_INIT;
  assert_false(tt_ex_equal(g, p, false, &detail));
  assert_string_equal(tt_buf_cstr(&detail), "1 row, gold has 3");
  tt_buf_free(&detail);
  tt_result_free(g);
  tt_result_free(p);
}

static void test_oracle_replies(void **state) {
  (void)state;
  json_t *answers = json_pack("{s:s}", "How many tracks?", "SELECT count(*) FROM Track");
  tt_llm *llm = tt_oracle_new(answers);
  assert_string_equal(tt_llm_backend(llm), "oracle");
  tt_chat chat = {0};
  tt_chat_add(&chat, TT_ROLE_SYSTEM, "rules");
  tt_chat_add(&chat, TT_ROLE_USER, "How many tracks?");
  tt_llm_call call = {0};
  tt_llm_reply r;
  tt_error err;
  assert_true(tt_llm_chat(llm, &chat, &call, &r, &err));
  assert_true(r.is_tool);
  assert_string_equal(r.tool_name, "run_sql");
  assert_string_equal(r.tool_args, "{\"sql\":\"SELECT count(*) FROM Track\"}");
  assert_non_null(r.call_id);
  tt_chat_add_tool_call(&chat, r.call_id, r.tool_name, r.tool_args);
  tt_chat_add_tool_result(&chat, r.call_id, "rows");
  tt_llm_reply_free(&r);
  assert_true(tt_llm_chat(llm, &chat, &call, &r, &err));
  assert_string_equal(r.tool_name, "answer");
  tt_llm_reply_free(&r);
  tt_chat_add(&chat, TT_ROLE_USER, "Something else?");
  assert_true(tt_llm_chat(llm, &chat, &call, &r, &err));
  assert_string_equal(r.tool_name, "answer");
  assert_non_null(strstr(r.tool_args, "does not know"));
  tt_llm_reply_free(&r);
  tt_chat_free(&chat);
  tt_llm_free(llm);
  json_decref(answers);
}

static void test_since(void **state) {
  (void)state;
  double t;
  assert_true(tt_parse_since("2026-12-01", 0, &t));
  assert_true(t == 1796083200.0);
  assert_true(tt_parse_since("2026-12-01T10:30", 0, &t));
  assert_true(t == 1796083200.0 + 10.5 * 3600);
  assert_true(tt_parse_since("2h", 10000, &t) && t == 10000 - 7200);
  assert_true(tt_parse_since("90m", 10000, &t) && t == 10000 - 5400);
  assert_true(tt_parse_since("3d", 1e6, &t) && t == 1e6 - 3 * 86400);
  assert_false(tt_parse_since("yesterday", 0, &t));
  assert_false(tt_parse_since("2026-13-01", 0, &t));
  assert_false(tt_parse_since("2h30", 0, &t));
}

static bool any_question(const json_t *q) { return json_is_string(json_object_get(q, "question")); }

/* The inputs an evaluation cannot start from: each says what is wrong
 * with a kind a front end can act on (io: a file or folder is missing;
 * config: a file is there but is not what the evaluation reads). */
static void test_input_errors(void **state) {
  (void)state;
  char *dir = tu_mkdtemp();
  char *missing = tt_xasprintf("%s/none.jsonl", dir), *bad = tt_xasprintf("%s/bad.jsonl", dir);
  tt_error err;
  assert_null(tt_eval_read_jsonl(missing, any_question, "a question", "--data wants a folder", &err));
  assert_int_equal(err.kind, TT_ERR_IO);
  assert_string_equal(err.hint, "--data wants a folder");
  assert_non_null(strstr(tt_error_text(&err), "cannot read "));
  assert_non_null(strstr(tt_error_text(&err), "; --data wants a folder"));
  tu_write_file(bad, "{\"question\": \"q1\"}\n\n{\"question\": 2}\n");
  assert_null(tt_eval_read_jsonl(bad, any_question, "a question", "hint", &err));
  assert_int_equal(err.kind, TT_ERR_CONFIG);
  assert_int_equal(err.line, 3);
  assert_non_null(strstr(err.message, "bad.jsonl line 3 is not a question"));
  tu_write_file(bad, "\n");
  assert_null(tt_eval_read_jsonl(bad, any_question, "a question", "hint", &err));
  assert_int_equal(err.kind, TT_ERR_CONFIG);
  assert_non_null(strstr(err.message, "holds no questions"));
  /* compare: a file that is not there, one that is not a results file */
  assert_null(tt_spider_compare(missing, missing, &err));
  assert_int_equal(err.kind, TT_ERR_IO);
  tu_write_file(bad, "{\"meta\": {}}");
  assert_null(tt_spider_compare(bad, bad, &err));
  assert_int_equal(err.kind, TT_ERR_CONFIG);
  assert_non_null(strstr(err.message, "is not a results file"));
  /* the report: a folder of traces that does not exist */
  tt_report_opts ro = {.runs_dir = missing};
  assert_null(tt_report_build(&ro, &err));
  assert_int_equal(err.kind, TT_ERR_IO);
  assert_non_null(strstr(err.message, "the folder does not exist"));
  free(missing);
  free(bad);
  tu_rmtree(dir);
  free(dir);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_rows_as_multisets),
      cmocka_unit_test(test_order_by_at_the_outer_level),
      cmocka_unit_test(test_column_permutations),
      cmocka_unit_test(test_numbers_nulls_and_types),
      cmocka_unit_test(test_oracle_replies),
      cmocka_unit_test(test_since),
      cmocka_unit_test(test_input_errors),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
