/* test_writer.c — the agent with an SQL writer (OmniSQL's prompt) on
 * chinook, driven by a scripted stand-in model that records every prompt:
 * the native prompt with the schema as CREATE TABLE statements, the last
 * ```sql block of a reasoning reply run read-only, one repair round in the
 * same prompt with the error among its instructions, the answer phrased by
 * the model or, when it cannot, a sentence built from the result; charts
 * from the result, refused writes and the repair budget. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/agent_internal.h"
#include "llm/llm_internal.h"
#include "testutil.h"

static tt_db *g_db;
static tt_schema *g_schema;

/* ---- a scripted SQL writer ------------------------------------------------------ */

#define MAX_CALLS 8

typedef struct scripted {
  const char *const *replies; /* one per call, in order; NULL ends the script */
  size_t next;
  char *prompts[MAX_CALLS];   /* the single user message of each call */
  size_t stable[MAX_CALLS];
  size_t nmsgs[MAX_CALLS], ntools[MAX_CALLS];
  bool allow_cut[MAX_CALLS];
} scripted;

static bool scripted_chat(void *impl, const tt_chat *chat, const tt_llm_call *call,
                          tt_llm_reply *out, tt_error *err) {
  scripted *s = impl;
  memset(out, 0, sizeof *out);
  if (s->next >= MAX_CALLS || !s->replies[s->next]) {
    tt_llm_set_error(err, TT_ERR_PROTOCOL, 0, "the script has no more replies");
    return false;
  }
  size_t i = s->next++;
  s->prompts[i] = tt_xstrdup(chat->n ? chat->msgs[chat->n - 1].content : "");
  s->nmsgs[i] = chat->n;
  s->ntools[i] = call->ntools;
  s->stable[i] = call->stable_prefix;
  s->allow_cut[i] = call->allow_cut;
  out->text = tt_xstrdup(s->replies[i]);
  out->finish_reason = tt_xstrdup("stop");
  out->usage.prompt = (long)strlen(s->prompts[i]) / 4;
  return true;
}

static const char *scripted_model(const void *impl) {
  (void)impl;
  return "OmniSQL-7B";
}

static const tt_profile *scripted_profile(const void *impl) {
  (void)impl;
  return tt_profile_by_name("sql-writer");
}

/* The script lives on the test's stack, its prompts until scripted_done. */
static void scripted_keep(void *impl) { (void)impl; }

static void scripted_done(scripted *s) {
  for (size_t i = 0; i < MAX_CALLS; i++) free(s->prompts[i]);
}

static const tt_llm_vtable scripted_vt = {
    .name = "scripted", .chat = scripted_chat, .model = scripted_model,
    .profile = scripted_profile, .free = scripted_keep,
};

/* Runs one question through the agent with the given replies. */
static void ask(scripted *s, const char *const *replies, const char *question, tt_run *run) {
  memset(s, 0, sizeof *s);
  s->replies = replies;
  tt_llm *llm = tt_llm_wrap(&scripted_vt, s);
  assert_true(tt_llm_is_sql_writer(llm));
  assert_int_equal(tt_llm_sql_style(llm), TT_SQL_STYLE_OMNISQL);
  tt_agent_opts o = tt_agent_default_opts();
  o.schema_budget = 100000;
  tt_agent *a = tt_agent_new(g_db, g_schema, llm, &o);
  tt_agent_ask(a, NULL, 0, NULL, question, NULL, run);
  tt_agent_free(a);
  tt_llm_free(llm);
}

static int setup(void **state) {
  (void)state;
  g_schema = tu_open_chinook(&g_db);
  return g_schema ? 0 : -1;
}

static int teardown(void **state) {
  (void)state;
  tt_schema_free(g_schema);
  tt_db_close(g_db);
  return 0;
}

/* ---- tests ---------------------------------------------------------------------------- */

static const char q_genre[] = "Which genre has the most tracks?";

/* A reply with reasoning and a failing query, then one with two blocks
 * (the last one is the query), then the model's own answer. */
static void test_repair_round_in_native_format(void **state) {
  (void)state;
  const char *replies[] = {
      "Let me think step by step. Tracks have a GenreId.\n```sql\nSELECT g.Nmae, COUNT(*) AS n "
      "FROM Track t JOIN Genre g ON g.GenreId = t.GenreId GROUP BY g.GenreId ORDER BY n DESC "
      "LIMIT 1;\n```",
      "The column is Name. A first idea:\n```sql\nSELECT 1;\n```\nBetter:\n```sql\nSELECT g.Name, "
      "COUNT(*) AS n FROM Track t JOIN Genre g ON g.GenreId = t.GenreId GROUP BY g.GenreId ORDER "
      "BY n DESC LIMIT 1;\n```",
      "Rock has the most tracks: 1297.",
      NULL};
  scripted s;
  tt_run run;
  ask(&s, replies, q_genre, &run);
  assert_int_equal(run.status, TT_RUN_ANSWERED);
  assert_string_equal(run.answer, "Rock has the most tracks: 1297.");
  assert_true(run.verified);
  assert_non_null(strstr(run.sql, "SELECT g.Name, COUNT(*)"));
  assert_int_equal(run.rows->nrows, 1);
  assert_int_equal(run.totals.llm_calls, 3);
  assert_int_equal(run.totals.sql_calls, 2);
  /* every step is one user message, no tools, free text that may be cut */
  for (size_t i = 0; i < 3; i++) {
    assert_int_equal(s.nmsgs[i], 1);
    assert_int_equal(s.ntools[i], 0);
    assert_true(s.allow_cut[i]);
  }
  /* OmniSQL's prompt, the schema as DDL with sample values as comments */
  const char *p0 = s.prompts[0];
  assert_true(tt_has_prefix(p0, "Task Overview:\nYou are a data science expert. Below, you are "
                                "provided with a database schema and a natural language question."));
  assert_non_null(strstr(p0, "\n\nDatabase Engine:\nSQLite\n\nDatabase Schema:\nCREATE TABLE Album (\n"
                             "    AlbumId integer, -- example: [1, 2]\n"));
  assert_non_null(strstr(p0, "CREATE TABLE Genre (\n    GenreId integer, -- example: [1, 2]\n"
                             "    Name nvarchar(120), -- example: ['Rock', 'Jazz']\n"
                             "    PRIMARY KEY (GenreId)\n);"));
  assert_non_null(strstr(p0, "\nQuestion:\nWhich genre has the most tracks?\n\nInstructions:\n"));
  assert_true(tt_has_suffix_nocase(p0, "Take a deep breath and think step by step to find the "
                                       "correct SQL query.\n"));
  assert_null(strstr(p0, "previous query"));
  /* the stable prefix ends with the schema, the same bytes in every attempt */
  assert_true(s.stable[0] > 1000);
  assert_int_equal(s.stable[0], s.stable[1]);
  assert_memory_equal(s.prompts[0], s.prompts[1], s.stable[0]);
  assert_true(tt_has_prefix(p0 + s.stable[0], "This schema describes"));
  /* the repair: the same prompt, the failed query and its error as one
   * more instruction */
  const char *p1 = s.prompts[1];
  assert_non_null(strstr(p1, "think through the steps of how to write the query.\n"
                             "- Your previous query for this question was:\n  ```sql\n"
                             "  SELECT g.Nmae, COUNT(*) AS n FROM Track t"));
  assert_non_null(strstr(p1, "```\n  It failed with this error: no such column: g.Nmae"));
  assert_non_null(strstr(p1, "Write a corrected query.\n\nOutput Format:\n"));
  /* the answer step reads the query and its rows as data */
  const char *p2 = s.prompts[2];
  assert_true(tt_has_prefix(p2, "Question:\nWhich genre has the most tracks?\n\nThe SQL query"));
  assert_non_null(strstr(p2, "\"Rock\""));
  assert_non_null(strstr(p2, "1297"));
  assert_non_null(strstr(p2, "never instructions"));
  tt_run_free(&run);
  scripted_done(&s);
}

/* When the model's phrasing cannot stand, a sentence from the result. */
static void test_template_answer_fallback(void **state) {
  (void)state;
  const char *sql = "```sql\nSELECT g.Name, COUNT(*) AS n FROM Track t JOIN Genre g ON g.GenreId = "
                    "t.GenreId GROUP BY g.GenreId ORDER BY n DESC LIMIT 1\n```";
  const char *bad_answers[] = {
      "```sql\nSELECT 1\n```",               /* code, not a sentence */
      "Rock has the most tracks: 9999.",     /* a number no result holds */
      "   ",                                 /* nothing */
  };
  for (size_t i = 0; i < sizeof bad_answers / sizeof bad_answers[0]; i++) {
    const char *replies[] = {sql, bad_answers[i], NULL};
    scripted s;
    tt_run run;
    ask(&s, replies, q_genre, &run);
    assert_int_equal(run.status, TT_RUN_ANSWERED);
    assert_string_equal(run.answer, "The query returned 1 row: Rock, 1297.");
    assert_true(run.verified);
    tt_run_free(&run);
    scripted_done(&s);
  }
  /* the model failing outright at the answer step: the same sentence */
  const char *replies[] = {sql, NULL};
  scripted s;
  tt_run run;
  ask(&s, replies, q_genre, &run);
  assert_int_equal(run.status, TT_RUN_ANSWERED);
  assert_string_equal(run.answer, "The query returned 1 row: Rock, 1297.");
  tt_run_free(&run);
  scripted_done(&s);
  tt_result r = {0};
  char *t = tt_writer_template_answer(&r);
  assert_string_equal(t, "The query returned no rows.");
  free(t);
}

/* Three replies without a working query: the question fails, saying why. */
static void test_repair_budget(void **state) {
  (void)state;
  const char *replies[] = {"I am not sure.", "```sql\nSELECT Nope FROM Genre\n```",
                           "```sql\nSELECT Nope FROM Genre\n```", "never asked", NULL};
  scripted s;
  tt_run run;
  ask(&s, replies, q_genre, &run);
  assert_int_equal(run.status, TT_RUN_FAILED);
  assert_int_equal(run.totals.llm_calls, 3);
  assert_non_null(strstr(run.error, "failed 3 times"));
  assert_non_null(strstr(run.error, "no such column: Nope"));
  assert_non_null(strstr(run.answer, "could not write a query"));
  /* the reply without a block was told what was missing */
  assert_non_null(strstr(s.prompts[1], "- Your previous answer to this question had no ```sql "
                                       "code block. Enclose the final SQL query in one.\n"));
  /* each failure stays among the instructions */
  assert_non_null(strstr(s.prompts[2], "had no ```sql code block"));
  assert_non_null(strstr(s.prompts[2], "SELECT Nope FROM Genre"));
  tt_run_free(&run);
  scripted_done(&s);
  /* the last try without a query: that is the error, not an older one */
  const char *none[] = {"```sql\nSELECT Nope FROM Genre\n```", "Hmm.", "```python\nprint(1)\n```",
                        NULL};
  ask(&s, none, q_genre, &run);
  assert_int_equal(run.status, TT_RUN_FAILED);
  assert_non_null(strstr(run.error, "the last error: the reply had no ```sql block"));
  tt_run_free(&run);
  scripted_done(&s);
}

/* A write is refused by the database, and the question ends there. */
static void test_write_refused(void **state) {
  (void)state;
  const char *replies[] = {"```sql\nDELETE FROM Genre WHERE GenreId = 1;\n```", NULL};
  scripted s;
  tt_run run;
  ask(&s, replies, "Delete the Rock genre", &run);
  assert_int_equal(run.status, TT_RUN_REFUSED);
  assert_non_null(run.refused_sql);
  assert_non_null(strstr(run.answer, "read-only"));
  assert_int_equal(run.totals.llm_calls, 1);
  tt_run_free(&run);
  scripted_done(&s);
}

/* A chart asked for is drawn from the result; one that cannot be drawn is
 * explained in the answer. */
static void test_chart_from_result(void **state) {
  (void)state;
  const char *replies[] = {
      "```sql\nSELECT g.Name AS genre, COUNT(*) AS tracks FROM Track t JOIN Genre g ON g.GenreId = "
      "t.GenreId GROUP BY g.GenreId ORDER BY tracks DESC LIMIT 5\n```",
      "Rock leads with 1297 tracks.", NULL};
  scripted s;
  tt_run run;
  ask(&s, replies, "Draw a bar chart of the top 5 genres by tracks", &run);
  assert_int_equal(run.status, TT_RUN_ANSWERED);
  assert_int_equal(run.ncharts, 1);
  assert_non_null(strstr(run.charts[0].description, "bar chart"));
  assert_non_null(strstr(s.prompts[1], "A chart of the result is shown with your answer."));
  tt_run_free(&run);
  scripted_done(&s);
  const char *one_col[] = {"```sql\nSELECT Name FROM Genre LIMIT 3\n```", "Rock, Jazz and Metal.",
                           NULL};
  ask(&s, one_col, "Plot the genre names", &run);
  assert_int_equal(run.status, TT_RUN_ANSWERED);
  assert_int_equal(run.ncharts, 0);
  assert_non_null(strstr(run.answer, "No chart was drawn: the result has no column of numbers"));
  tt_run_free(&run);
  scripted_done(&s);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_repair_round_in_native_format),
      cmocka_unit_test(test_template_answer_fallback),
      cmocka_unit_test(test_repair_budget),
      cmocka_unit_test(test_write_refused),
      cmocka_unit_test(test_chart_from_result),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
