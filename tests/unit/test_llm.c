/* test_llm.c — units of the llm layer: conversations and their JSON form,
 * tool-call argument checks against a schema, pulling a streamed string
 * argument out of JSON that arrives in arbitrary pieces, tool calls written
 * as text, inline reasoning, OpenAI's reasoning models by name, which
 * model profile each official chat template gets, token estimates,
 * shortening a conversation, and the default context chosen from a
 * model's shape and the machine's memory. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "llm/llm_internal.h" /* the estimates */

static const tt_tool_spec run_sql = {
    "run_sql", "Run SQL",
    "{\"type\":\"object\",\"properties\":{\"sql\":{\"type\":\"string\",\"minLength\":1}},"
    "\"required\":[\"sql\"],\"additionalProperties\":false}"};

static const tt_tool_spec chart = {
    "make_chart", "Chart",
    "{\"type\":\"object\",\"properties\":{\"kind\":{\"type\":\"string\",\"enum\":[\"bar\",\"line\"]},"
    "\"y\":{\"type\":\"array\",\"items\":{\"type\":\"string\"},\"minItems\":1},"
    "\"limit\":{\"type\":\"integer\",\"minimum\":1,\"maximum\":100}},\"required\":[\"kind\"]}"};

static void expect_bad(const tt_tool_spec *t, const char *args, const char *words) {
  tt_error why = TT_ERROR_INIT;
  bool ok = tt_tool_check(t, args, &why);
  if (ok || !strstr(tt_error_text(&why), words)) {
    fprintf(stderr, "%s -> %s: %s\n", args, ok ? "accepted" : "rejected", tt_error_text(&why));
    fail();
  }
  assert_int_equal(why.kind, TT_ERR_CONFIG); /* the model's to fix */
}

static void test_tool_check(void **state) {
  (void)state;
  tt_error why = TT_ERROR_INIT;
  assert_true(tt_tool_check(&run_sql, "{\"sql\": \"SELECT 1\"}", &why));
  assert_true(tt_tool_check(&chart, "{\"kind\":\"bar\",\"y\":[\"a\"],\"limit\":10}", &why));
  assert_int_equal(why.kind, TT_OK);
  /* invalid JSON: what to send instead is the hint */
  assert_false(tt_tool_check(&run_sql, "{\"sql\": \"SELECT 1\"", &why));
  assert_string_equal(why.hint, "send one JSON object");
  assert_non_null(strstr(tt_error_text(&why), "not valid JSON ("));
  assert_non_null(strstr(tt_error_text(&why), "); send one JSON object"));
  expect_bad(&run_sql, "{\"sql\": \"SELECT 1\"", "not valid JSON");
  expect_bad(&run_sql, "", "not valid JSON");
  expect_bad(&run_sql, "{}", "missing the required property \"sql\"");
  expect_bad(&run_sql, "{\"sql\": 5}", "property \"sql\" must be a string");
  expect_bad(&run_sql, "{\"sql\": \"\"}", "must not be empty");
  expect_bad(&run_sql, "{\"sql\": \"x\", \"why\": 1}", "unknown property \"why\" (allowed: \"sql\")");
  expect_bad(&run_sql, "[\"SELECT 1\"]", "must be an object");
  expect_bad(&chart, "{\"kind\":\"pie\"}", "must be one of [\"bar\",\"line\"]");
  expect_bad(&chart, "{\"kind\":\"bar\",\"y\":[]}", "at least 1 item");
  expect_bad(&chart, "{\"kind\":\"bar\",\"y\":[3]}", "item 1 of property \"y\" must be a string");
  expect_bad(&chart, "{\"kind\":\"bar\",\"limit\":0}", "between 1 and 100");
  expect_bad(&chart, "{\"kind\":\"bar\",\"limit\":2.5}", "must be an integer");
  /* anyOf: a column name or a list of at most 3 */
  static const tt_tool_spec either = {
      "pick", "either",
      "{\"type\":\"object\",\"properties\":{\"y\":{\"anyOf\":[{\"type\":\"string\"},{\"type\":"
      "\"array\",\"items\":{\"type\":\"string\"},\"minItems\":1,\"maxItems\":3}]}}}"};
  assert_true(tt_tool_check(&either, "{\"y\":\"a\"}", NULL));
  assert_true(tt_tool_check(&either, "{\"y\":[\"a\",\"b\"]}", NULL));
  expect_bad(&either, "{\"y\":5}", "property \"y\" must be a string or an array of strings");
  expect_bad(&either, "{\"y\":[\"a\",\"b\",\"c\",\"d\"]}", "must be a string or an array of strings");
  static const tt_tool_spec few = {
      "few", "few",
      "{\"type\":\"object\",\"properties\":{\"y\":{\"type\":\"array\",\"maxItems\":2}}}"};
  expect_bad(&few, "{\"y\":[1,2,3]}", "property \"y\" takes at most 2 item(s)");
  const tt_tool_spec tools[] = {run_sql, chart};
  assert_ptr_equal(tt_tool_find(tools, 2, "make_chart"), &tools[1]);
  assert_null(tt_tool_find(tools, 2, "drop"));
  assert_null(tt_tool_find(tools, 2, NULL));
}

static void test_chat_json_round_trip(void **state) {
  (void)state;
  tt_chat c = {0};
  tt_chat_add(&c, TT_ROLE_SYSTEM, "rules");
  tt_chat_add(&c, TT_ROLE_USER, "How many? \xE2\x80\xAE");
  tt_chat_add_tool_call(&c, "call_1", "run_sql", "{\"sql\":\"SELECT 1\"}");
  tt_chat_add_tool_result(&c, "call_1", "1 row");
  tt_chat_add(&c, TT_ROLE_ASSISTANT, "plain");
  tt_chat_add_call(&c, "call_2", "answer", "{\"text\": \"1\"}", "It is one.");
  json_t *j = tt_chat_to_json(&c);
  assert_int_equal(json_array_size(j), 6);
  /* a call's thought is its content, kept through a paused question */
  assert_string_equal(json_string_value(json_object_get(json_array_get(j, 5), "content")), "It is one.");
  json_t *call = json_array_get(j, 2);
  assert_true(json_is_null(json_object_get(call, "content")));
  json_t *fn = json_object_get(json_array_get(json_object_get(call, "tool_calls"), 0), "function");
  assert_string_equal(json_string_value(json_object_get(fn, "name")), "run_sql");
  assert_string_equal(json_string_value(json_object_get(fn, "arguments")), "{\"sql\":\"SELECT 1\"}");
  assert_string_equal(json_string_value(json_object_get(json_array_get(j, 3), "tool_call_id")), "call_1");
  tt_chat back = {0};
  assert_true(tt_chat_append_json(&back, j));
  assert_int_equal(back.n, 6);
  assert_string_equal(back.msgs[5].content, "It is one.");
  assert_null(back.msgs[2].content);
  assert_string_equal(back.msgs[1].content, "How many? \xE2\x80\xAE");
  assert_string_equal(back.msgs[2].tool_args, "{\"sql\":\"SELECT 1\"}");
  assert_string_equal(back.msgs[3].call_id, "call_1");
  json_t *again = tt_chat_to_json(&back);
  assert_true(json_equal(j, again));
  json_decref(again);
  json_decref(j);
  json_t *bad = json_loads("[{\"role\":\"wizard\",\"content\":\"x\"}]", 0, NULL);
  assert_false(tt_chat_append_json(&back, bad));
  json_decref(bad);
  tt_chat_free(&back);
  tt_chat_free(&c);
}

/* Feeds text in pieces of the given size and returns what came out. */
static char *stream(const char *key, const char *json, size_t piece) {
  tt_argstream *s = tt_argstream_new(key);
  tt_buf out = TT_BUF_INIT;
  size_t n = strlen(json);
  for (size_t i = 0; i < n; i += piece) tt_argstream_feed(s, json + i, i + piece <= n ? piece : n - i, &out);
  tt_argstream_free(s);
  return tt_buf_detach(&out);
}

static void test_argstream(void **state) {
  (void)state;
  const char *json =
      "{\"note\": \"skip \\\"me\\\"\", \"nested\": {\"text\": \"not this\"}, \"list\": [\"text\"],"
      " \"text\": \"Rock \\u00e9\\ud83d\\ude00 1,297\\n\\\"ok\\\" \\\\ done\", \"after\": \"no\"}";
  const char *want = "Rock \xC3\xA9\xF0\x9F\x98\x80 1,297\n\"ok\" \\ done";
  for (size_t piece = 1; piece <= strlen(json); piece++) {
    char *got = stream("text", json, piece);
    if (strcmp(got, want) != 0) {
      fprintf(stderr, "piece %zu: got '%s'\n", piece, got);
      fail();
    }
    free(got);
  }
  char *none = stream("text", "{\"sql\": \"SELECT 'text'\"}", 3);
  assert_string_equal(none, "");
  free(none);
  char *cut = stream("text", "{\"text\": \"partial answ", 4); /* a stream cut short */
  assert_string_equal(cut, "partial answ");
  free(cut);
}

static const tt_tool_spec offered[] = {
    {"run_sql", "Run SQL", "{\"type\":\"object\"}"},
    {"answer", "Answer", "{\"type\":\"object\"}"},
};

/* text holds a call to name with args (compact JSON) and rest around it. */
static void expect_call(const char *text, const char *name, const char *args, const char *rest) {
  char *n = NULL, *a = NULL;
  tt_buf r = TT_BUF_INIT;
  bool found = tt_text_find_call(text, offered, 2, &n, &a, &r);
  if (!found || strcmp(n, name) != 0 || strcmp(a, args) != 0 || strcmp(tt_buf_cstr(&r), rest) != 0) {
    fprintf(stderr, "%s\n -> %s %s %s [%s]\n", text, found ? "found" : "none", n ? n : "", a ? a : "",
            tt_buf_cstr(&r));
    fail();
  }
  free(n);
  free(a);
  tt_buf_free(&r);
}

static void expect_no_call(const char *text) {
  char *n = NULL, *a = NULL;
  tt_buf r = TT_BUF_INIT;
  if (tt_text_find_call(text, offered, 2, &n, &a, &r)) {
    fprintf(stderr, "%s\n -> found %s %s\n", text, n, a);
    fail();
  }
  assert_null(n);
  assert_null(a);
  tt_buf_free(&r);
}

static void test_text_calls(void **state) {
  (void)state;
  const char *sql = "{\"sql\":\"SELECT 1\"}";
  expect_call("<tool_call>\n{\"name\": \"run_sql\", \"arguments\": {\"sql\": \"SELECT 1\"}}\n</tool_call>",
              "run_sql", sql, "");
  expect_call("I will count.\n<tool_call>\n{\"name\": \"run_sql\", \"arguments\": {\"sql\": \"SELECT 1\"}}"
              "\n</tool_call>\nDone.", "run_sql", sql, "I will count.\n\nDone.");
  expect_call("```json\n{\"name\": \"run_sql\", \"arguments\": {\"sql\": \"SELECT 1\"}}\n```", "run_sql", sql, "");
  expect_call("Query:\n```\n{\"name\":\"run_sql\",\"parameters\":{\"sql\":\"SELECT 1\"}}\n```", "run_sql", sql,
              "Query:");
  expect_call("{\"name\": \"run_sql\", \"arguments\": \"{\\\"sql\\\": \\\"SELECT 1\\\"}\"}", "run_sql", sql, "");
  expect_call("[{\"name\": \"answer\", \"arguments\": {\"text\": \"S\u00e3o Paulo {x}\"}}]", "answer",
              "{\"text\":\"S\u00e3o Paulo {x}\"}", "");
  expect_call("[TOOL_REQUEST]{\"name\": \"run_sql\", \"arguments\": {\"sql\": \"SELECT 1\"}}[END_TOOL_REQUEST]",
              "run_sql", sql, "");
  expect_call("[TOOL_CALLS][{\"name\": \"run_sql\", \"arguments\": {\"sql\": \"SELECT 1\"}}]", "run_sql", sql, "");
  expect_call("<|python_tag|>{\"name\": \"run_sql\", \"parameters\": {\"sql\": \"SELECT 1\"}}<|eom_id|>",
              "run_sql", sql, "");
  expect_call("{\"type\": \"function\", \"function\": {\"name\": \"run_sql\", \"arguments\": {\"sql\": \"SELECT 1\"}}}",
              "run_sql", sql, "");
  /* a raw newline or tab inside the SQL string (invalid JSON, as models write it) */
  expect_call("<tool_call>\n{\"name\": \"run_sql\", \"arguments\": {\"sql\": \"SELECT 1\n\tFROM t\"}}\n</tool_call>\nok",
              "run_sql", "{\"sql\":\"SELECT 1\\n\\tFROM t\"}", "ok");
  /* the first call that names an offered tool counts */
  expect_call("{\"name\": \"lookup\", \"arguments\": {}} then {\"name\": \"answer\", \"arguments\": {\"text\": \"a\"}}",
              "answer", "{\"text\":\"a\"}", "{\"name\": \"lookup\", \"arguments\": {}} then");
  /* the tool named outside the JSON */
  expect_call("<function=run_sql>{\"sql\": \"SELECT 1\"}</function>", "run_sql", sql, "");
  expect_call("<tool_call>\n<function=run_sql>\n<parameter=sql>\nSELECT 1\n</parameter>\n</function>\n</tool_call>",
              "run_sql", sql, "");
  expect_call("<|channel|>commentary to=functions.run_sql <|constrain|>json<|message|>{\"sql\":\"SELECT 1\"}<|call|>",
              "run_sql", sql, "<|channel|>commentary");
  expect_call("[TOOL_CALLS]run_sql[ARGS]{\"sql\": \"SELECT 1\"}", "run_sql", sql, "");
  expect_call("Thought: count.\nAction: run_sql\nAction Input: {\"sql\": \"SELECT 1\"}", "run_sql", sql,
              "Thought: count.");
  expect_no_call("<function=lookup>{\"sql\": \"SELECT 1\"}</function>");     /* not offered */
  expect_no_call("Action: run_sql, and then a long while later, after much more thought, at last: {\"sql\": \"SELECT 1\"}"); /* too far */
  expect_no_call("<function=run_sql>\n<parameter=sql>\nSELECT 1\n</parameter>"); /* cut */
  expect_no_call("There are 25 genres.");
  expect_no_call("{\"name\": \"lookup_table\", \"arguments\": {\"t\": 1}}"); /* not offered */
  expect_no_call("<tool_call>\n{\"name\": \"run_sql\", \"arguments\": {\"sql\": \"SELECT 1\",}}\n</tool_call>");
  expect_no_call("{\"name\": \"run_sql\"}");                            /* no arguments */
  expect_no_call("{\"name\": \"run_sql\", \"arguments\": [1, 2]}");     /* not an object */
  expect_no_call("{\"result\": 25}");
  expect_no_call("");
  expect_no_call("{\"name\": \"run_sql\", \"arguments\": {\"sql\": \"SELECT 1\""); /* cut */
}

static void test_text_looks_like_call(void **state) {
  (void)state;
  assert_true(tt_text_looks_like_call("<tool_call>{\"name\": \"x\"}</tool_call>"));
  assert_true(tt_text_looks_like_call("  {\"result\": 25}"));
  assert_true(tt_text_looks_like_call("[1, 2]"));
  assert_true(tt_text_looks_like_call("```json\n{}\n```"));
  assert_true(tt_text_looks_like_call("```\n{\"a\": 1}\n```"));
  assert_true(tt_text_looks_like_call("Calling: {\"name\": \"x\", \"arguments\": {}}"));
  assert_true(tt_text_looks_like_call("[TOOL_REQUEST]{}"));
  assert_false(tt_text_looks_like_call("There are 25 genres."));
  assert_false(tt_text_looks_like_call("The set {1, 2} has two members."));
  assert_false(tt_text_looks_like_call("```sql\nSELECT 1\n```"));
  assert_false(tt_text_looks_like_call("The \"arguments\" column holds the counts."));
  assert_true(tt_text_looks_like_call("see {\"name\": \"x\", \"parameters\" : {}}"));
  assert_false(tt_text_looks_like_call(NULL));
  assert_true(tt_text_looks_like_call("```tool_code\nrun_sql(sql=\"SELECT 1\")\n```"));
  assert_true(tt_text_looks_like_call("<function=lookup>{}</function>"));
  assert_true(tt_text_looks_like_call("<|channel|>commentary to=functions.x<|message|>{}"));
  assert_true(tt_text_names_tool_call("run_sql(sql=\"SELECT 1\")", offered, 2));
  assert_true(tt_text_names_tool_call("I call answer(text='25')", offered, 2));
  assert_false(tt_text_names_tool_call("There are 25 genres (the answer).", offered, 2));
  assert_false(tt_text_names_tool_call("my_run_sql(x)", offered, 2));
  assert_false(tt_text_names_tool_call("Both answer(s) agree: 25.", offered, 2));
  assert_true(tt_text_names_tool_call("[run_sql(sql = 'SELECT 1')]", offered, 2));
}

static void split(const char *text, const char *thinking, const char *answer) {
  tt_buf t = TT_BUF_INIT, a = TT_BUF_INIT;
  tt_text_split_thinking(text, &t, &a);
  assert_string_equal(tt_buf_cstr(&t), thinking);
  assert_string_equal(tt_buf_cstr(&a), answer);
  tt_buf_free(&t);
  tt_buf_free(&a);
}

static void test_split_thinking(void **state) {
  (void)state;
  split("<think>\nCount them.\n</think>\n\n25 genres.", "Count them.", "25 genres.");
  split("Count them.\n</think>\n\n25 genres.", "Count them.", "25 genres."); /* opened by the template */
  split("<think>\nstill thinking when cut", "still thinking when cut", "");
  split("25 genres.", "", "25 genres.");
  split("Say <think> twice.", "", "Say <think> twice."); /* not at the start: text */
  split("", "", "");
}

static void test_reasoning_model_names(void **state) {
  (void)state;
  const char *yes[] = {"o1", "o1-mini", "o3", "o3-mini", "o4-mini-2025-04-16", "gpt-5", "gpt-5-mini",
                       "GPT-5-nano", "openai/o3", "openai/gpt-5"};
  const char *no[] = {"gpt-4o", "gpt-4.1-mini", "gpt-5-chat-latest", "o3x", "omnisql-7b", "ollama",
                      "qwen2.5-coder:7b", "", "o"};
  for (size_t i = 0; i < sizeof yes / sizeof *yes; i++) assert_true(tt_llm_http_is_reasoning_model(yes[i]));
  for (size_t i = 0; i < sizeof no / sizeof *no; i++) assert_false(tt_llm_http_is_reasoning_model(no[i]));
  assert_false(tt_llm_http_is_reasoning_model(NULL));
}

/* The SQL writers' trained prompts, filled in: OmniSQL's as its training
 * script writes it (context before the question, notes as more
 * instructions), XiYanSQL's with the notes as evidence. */
static void test_sql_prompts(void **state) {
  (void)state;
  const char *notes[] = {"An earlier query failed.\nError: no such column: x"};
  tt_sql_prompt p = {.engine = "SQLite", .schema = "CREATE TABLE t (\n    a integer\n);",
                     .question = "How many?", .context = "Follows on: \"All of t?\"",
                     .notes = notes, .nnotes = 1};
  size_t stable = 0;
  char *s = tt_sql_prompt_render(TT_SQL_STYLE_OMNISQL, &p, &stable);
  assert_string_equal(
      s,
      "Task Overview:\nYou are a data science expert. Below, you are provided with a database "
      "schema and a natural language question. Your task is to understand the schema and generate "
      "a valid SQL query to answer the question.\n\nDatabase Engine:\nSQLite\n\nDatabase Schema:\n"
      "CREATE TABLE t (\n    a integer\n);\nThis schema describes the database's structure, "
      "including tables, columns, primary keys, foreign keys, and any relevant relationships or "
      "constraints.\n\nQuestion:\nFollows on: \"All of t?\"\nHow many?\n\nInstructions:\n- Make "
      "sure you only output the information that is asked in the question. If the question asks "
      "for a specific column, make sure to only include that column in the SELECT clause, nothing "
      "more.\n- The generated query should return all of the information asked in the question "
      "without any missing or extra information.\n- Before generating the final SQL query, please "
      "think through the steps of how to write the query.\n- An earlier query failed.\n  Error: no "
      "such column: x\n\nOutput Format:\nIn your answer, please enclose the generated SQL query in "
      "a code block:\n```sql\n-- Your SQL query\n```\n\nTake a deep breath and think step by step "
      "to find the correct SQL query.\n");
  /* everything up to the schema's end does not depend on the question */
  assert_true(stable > 3 && strncmp(s + stable - 3, ");\n", 3) == 0);
  assert_true(strncmp(s + stable, "This schema describes", 21) == 0);
  free(s);
  p.context = NULL;
  p.nnotes = 0;
  s = tt_sql_prompt_render(TT_SQL_STYLE_OMNISQL, &p, NULL);
  assert_non_null(strstr(s, "\n\nQuestion:\nHow many?\n\nInstructions:\n"));
  assert_non_null(strstr(s, "how to write the query.\n\nOutput Format:\n"));
  free(s);
  p.context = "C";
  p.nnotes = 1;
  p.schema = "【DB_ID】 x";
  s = tt_sql_prompt_render(TT_SQL_STYLE_XIYAN, &p, &stable);
  assert_string_equal(s, "你是一名SQLite专家，现在需要阅读并理解下面的【数据库schema】描述，以及可能用到的"
                         "【参考信息】，并运用SQLite知识生成sql语句回答【用户问题】。\n【用户问题】\n"
                         "How many?\n\n【数据库schema】\n【DB_ID】 x\n\n【参考信息】\nC\nAn earlier "
                         "query failed.\nError: no such column: x\n\n【用户问题】\nHow many?\n\n```sql");
  assert_true(strncmp(s + stable, "How many?", 9) == 0);
  free(s);
}

/* The query of a reply: the last ```sql block (any case), else the last
 * untagged one; unclosed blocks are reported as such. */
static void test_sql_from_reply(void **state) {
  (void)state;
  bool open;
  char *q = tt_sql_from_reply(TT_SQL_STYLE_OMNISQL,
                              "Step 1: count.\n```sql\nSELECT 1;\n```\nBetter:\n```sql\n"
                              "SELECT count(*)\nFROM t;\n```\nDone.", &open);
  assert_string_equal(q, "SELECT count(*)\nFROM t;");
  assert_false(open);
  free(q);
  /* upper case tag, CRLF lines, indentation */
  q = tt_sql_from_reply(TT_SQL_STYLE_OMNISQL, "  ```SQL\r\n  SELECT 2\r\n  ```\r\n", &open);
  assert_string_equal(q, "SELECT 2");
  free(q);
  /* an sql block wins over a later untagged one; untagged when alone */
  q = tt_sql_from_reply(TT_SQL_STYLE_OMNISQL, "```sql\nSELECT 3\n```\n```\nnot this\n```", &open);
  assert_string_equal(q, "SELECT 3");
  free(q);
  q = tt_sql_from_reply(TT_SQL_STYLE_OMNISQL, "```\nSELECT 4\n```\n```python\nprint(1)\n```", &open);
  assert_string_equal(q, "SELECT 4");
  free(q);
  /* a longer fence holds a shorter one; inline ```code``` is no fence */
  q = tt_sql_from_reply(TT_SQL_STYLE_OMNISQL,
                        "Use ```sql x``` inline.\n````sql\nSELECT '```' AS fence\n```\n````", &open);
  assert_string_equal(q, "SELECT '```' AS fence\n```");
  free(q);
  /* a fence at the end of the query's last line */
  q = tt_sql_from_reply(TT_SQL_STYLE_OMNISQL, "```sql\nSELECT 5;```\nthat is all", &open);
  assert_string_equal(q, "SELECT 5;");
  assert_false(open);
  free(q);
  /* cut at the token limit inside the block */
  q = tt_sql_from_reply(TT_SQL_STYLE_OMNISQL, "```sql\nSELECT 1\n```\nNow:\n```sql\nSELECT a,", &open);
  assert_string_equal(q, "SELECT a,");
  assert_true(open);
  free(q);
  /* nothing usable */
  assert_null(tt_sql_from_reply(TT_SQL_STYLE_OMNISQL, "SELECT 1 without a fence", &open));
  assert_null(tt_sql_from_reply(TT_SQL_STYLE_OMNISQL, "```sql\n   \n```", &open));
  assert_null(tt_sql_from_reply(TT_SQL_STYLE_OMNISQL, "```json\n{}\n```", &open));
  assert_null(tt_sql_from_reply(TT_SQL_STYLE_OMNISQL, "", &open));
  /* XiYanSQL's reply starts inside the block its prompt opened */
  q = tt_sql_from_reply(TT_SQL_STYLE_XIYAN, "\nSELECT 6\n```", &open);
  assert_string_equal(q, "SELECT 6");
  assert_false(open);
  free(q);
  q = tt_sql_from_reply(TT_SQL_STYLE_XIYAN, "SELECT 7", &open);
  assert_string_equal(q, "SELECT 7");
  assert_true(open);
  free(q);
  q = tt_sql_from_reply(TT_SQL_STYLE_XIYAN, "```sql\nSELECT 8\n```", &open);
  assert_string_equal(q, "SELECT 8");
  free(q);
}

/* The context the embedded engine picks for a shape (KV bytes per token:
 * layers x KV heads x (key + value dims) x 2 bytes of f16) and a memory. */
static long ctx_for(long long kv, long long weights, double avail_gib, long trained, tt_buf *note) {
  tt_ctx_facts f = {.trained = trained, .kv_bytes_per_token = kv, .weights_bytes = weights,
                    .available_bytes = (long long)(avail_gib * (double)(1LL << 30))};
  tt_buf_reset(note);
  return tt_llm_pick_context(&f, note);
}

static void test_default_context(void **state) {
  (void)state;
  /* Qwen2.5 7B, 3B, 1.5B: 28x4, 36x2, 28x2 KV heads of 128 dims; Q4_K_M files */
  const long long kv7 = 28LL * 4 * (128 + 128) * 2, kv3 = 36LL * 2 * 256 * 2, kv15 = 28LL * 2 * 256 * 2;
  const long long w7 = 4683073536LL, w3 = 2104932800LL, w15 = 1117320768LL;
  assert_int_equal(kv7, 57344);
  tt_buf note = TT_BUF_INIT;
  assert_int_equal(ctx_for(kv7, w7, 16, 32768, &note), 16384);
  assert_non_null(strstr(tt_buf_cstr(&note), "16384 tokens: the default; trained for 32768"));
  assert_int_equal(ctx_for(kv7, w7, 8, 32768, &note), 16384);
  /* 6 GiB: 5.4 usable, less 4.36 of weights and 0.5 of buffers, over 56 KiB */
  assert_int_equal(ctx_for(kv7, w7, 6, 32768, &note), 9216);
  assert_non_null(strstr(tt_buf_cstr(&note), "what memory allows"));
  assert_int_equal(ctx_for(kv7, w7, 5, 32768, &note), TT_CTX_FLOOR);
  assert_non_null(strstr(tt_buf_cstr(&note), "memory is short"));
  assert_int_equal(ctx_for(kv3, w3, 4, 32768, &note), 16384);
  assert_int_equal(ctx_for(kv3, w3, 3, 32768, &note), 6144);
  assert_int_equal(ctx_for(kv15, w15, 2.5, 32768, &note), 16384);
  assert_int_equal(ctx_for(kv15, w15, 2, 32768, &note), 9216);
  /* the trained context caps it, memory unknown leaves the default */
  assert_int_equal(ctx_for(kv7, w7, 64, 8192, &note), 8192);
  assert_non_null(strstr(tt_buf_cstr(&note), "the model's trained context"));
  assert_int_equal(ctx_for(kv7, w7, 1, 2048, &note), 2048);
  assert_int_equal(ctx_for(kv7, w7, 0, 0, &note), 16384);
  assert_non_null(strstr(tt_buf_cstr(&note), "free memory unknown"));
  assert_non_null(strstr(tt_buf_cstr(&note), "16384 tokens: the default"));
  tt_buf_free(&note);
  assert_true(tt_mem_available() > 0); /* Linux: /proc/meminfo */
}

/* Without the model's tokenizer (HTTP backends): about 3.5 bytes a token,
 * and the prompt a little more than its texts. */
static void test_token_estimates(void **state) {
  (void)state;
  assert_int_equal(tt_llm_estimate_text(NULL, "", 0), 0);
  assert_int_equal(tt_llm_estimate_text(NULL, "SELECT", 6), 2);
  assert_int_equal(tt_llm_estimate_text(NULL, NULL, 3500), 1000);
  tt_llm_http_opts o = tt_llm_http_default_opts();
  o.base_url = "http://127.0.0.1:9/v1";
  tt_error err;
  tt_llm *llm = tt_llm_http_new(&o, &err);
  assert_non_null(llm);
  assert_int_equal(tt_llm_context(llm), 0); /* not told: nothing is fitted */
  assert_int_equal(tt_llm_reply_reserve(llm), 0);
  assert_false(tt_llm_counts_exact(llm));
  tt_llm_free(llm);
  o.context = 8192;
  o.max_tokens = 1024;
  llm = tt_llm_http_new(&o, &err);
  assert_int_equal(tt_llm_context(llm), 8192);
  assert_int_equal(tt_llm_reply_reserve(llm), 1024);
  tt_chat c = {0};
  char text[701];
  memset(text, 'a', 700);
  text[700] = '\0';
  tt_chat_add(&c, TT_ROLE_SYSTEM, text);
  tt_chat_add(&c, TT_ROLE_USER, text);
  assert_int_equal(tt_llm_count_prompt(llm, &c, NULL), 3 + 2 * (4 + 200));
  tt_llm_free(llm);
  /* shortening: a message's text replaced, messages removed */
  tt_chat_add(&c, TT_ROLE_ASSISTANT, "a");
  tt_chat_add_call(&c, "c1", "run_sql", "{}", "Count them."); /* its thought goes with it */
  tt_chat_add_tool_result(&c, "c1", "rows");
  tt_chat_set_content(&c, 4, "stub");
  assert_string_equal(c.msgs[4].content, "stub");
  assert_string_equal(c.msgs[4].call_id, "c1");
  tt_chat_remove(&c, 1, 2);
  assert_int_equal(c.n, 3);
  assert_int_equal(c.msgs[1].role, TT_ROLE_ASSISTANT);
  assert_string_equal(c.msgs[2].content, "stub");
  tt_chat_remove(&c, 2, 10); /* to the end, no further */
  assert_int_equal(c.n, 2);
  tt_chat_free(&c);
}

/* The profile every official template in llama.cpp's models/templates
 * gets: the families tabletalk renders itself by what their templates
 * write, every other tool format the generic one. */
static void test_profile_detection(void **state) {
  (void)state;
  const char *dir = getenv("TT_TEMPLATES");
  if (!dir) skip();
  static const struct {
    const char *file, *profile;
  } want[] = {
      {"Qwen-Qwen2.5-7B-Instruct.jinja", "qwen2.5"},
      {"Qwen-QwQ-32B.jinja", "qwen2.5"},
      /* Hermes: the same call format, its own wording around it */
      {"NousResearch-Hermes-2-Pro-Llama-3-8B-tool_use.jinja", "qwen2.5"},
      {"MiMo-VL.jinja", "qwen2.5"},
      {"Qwen-Qwen3-0.6B.jinja", "qwen3"},
      {"Qwen3-Coder.jinja", "generic"},
      {"Qwen3.5-4B.jinja", "generic"},
      {"meta-llama-Llama-3.1-8B-Instruct.jinja", "llama3.1"},
      {"meta-llama-Llama-3.2-3B-Instruct.jinja", "llama3.1"},
      {"meta-llama-Llama-3.3-70B-Instruct.jinja", "llama3.1"},
      {"meetkai-functionary-medium-v3.1.jinja", "generic"},
      {"Mistral-Small-3.2-24B-Instruct-2506.jinja", "mistral"},
      {"mistralai-Mistral-Nemo-Instruct-2407.jinja", "generic"},
      {"microsoft-Phi-3.5-mini-instruct.jinja", "generic"},
      {"google-gemma-2-2b-it.jinja", "generic"},
  };
  for (size_t i = 0; i < sizeof want / sizeof *want; i++) {
    char *path = tt_xasprintf("%s/%s", dir, want[i].file);
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    size_t n;
    bool too_long;
    char *tmpl = tt_read_stream(fileno(f), 1 << 20, &n, &too_long);
    fclose(f);
    assert_non_null(tmpl);
    const tt_profile *p = tt_profile_detect("qwen2", "Some Model", tmpl);
    if (strcmp(p->name, want[i].profile) != 0)
      fail_msg("%s: profile %s, want %s", want[i].file, p->name, want[i].profile);
    free(tmpl);
    free(path);
  }
  /* SQL writers by name, whatever their (Qwen) template; no template */
  assert_string_equal(tt_profile_detect("qwen2", "OmniSQL 7B", NULL)->name, "sql-writer");
  assert_string_equal(tt_profile_detect("qwen2", "x XiYanSQL-QwenCoder-7B-2504.Q4_K_M.gguf", "")->name,
                      "sql-writer");
  assert_string_equal(tt_profile_detect("qwen3", NULL, NULL)->name, "qwen3");
  assert_string_equal(tt_profile_detect("llama", NULL, NULL)->name, "qwen2.5");
  assert_true(tt_llm_profile_known("Mistral"));
  assert_false(tt_llm_profile_known("gpt"));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_tool_check),
      cmocka_unit_test(test_chat_json_round_trip),
      cmocka_unit_test(test_argstream),
      cmocka_unit_test(test_text_calls),
      cmocka_unit_test(test_text_looks_like_call),
      cmocka_unit_test(test_split_thinking),
      cmocka_unit_test(test_reasoning_model_names),
      cmocka_unit_test(test_sql_prompts),
      cmocka_unit_test(test_sql_from_reply),
      cmocka_unit_test(test_default_context),
      cmocka_unit_test(test_token_estimates),
      cmocka_unit_test(test_profile_detection),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
