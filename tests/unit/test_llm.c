/* test_llm.c — units of the llm layer: conversations and their JSON form,
 * tool-call argument checks against a schema, and pulling a streamed string
 * argument out of JSON that arrives in arbitrary pieces. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "llm/llm.h"

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
  tt_buf why = TT_BUF_INIT;
  bool ok = tt_tool_check(t, args, &why);
  if (ok || !strstr(tt_buf_cstr(&why), words)) {
    fprintf(stderr, "%s -> %s: %s\n", args, ok ? "accepted" : "rejected", tt_buf_cstr(&why));
    fail();
  }
  tt_buf_free(&why);
}

static void test_tool_check(void **state) {
  (void)state;
  tt_buf why = TT_BUF_INIT;
  assert_true(tt_tool_check(&run_sql, "{\"sql\": \"SELECT 1\"}", &why));
  assert_true(tt_tool_check(&chart, "{\"kind\":\"bar\",\"y\":[\"a\"],\"limit\":10}", &why));
  tt_buf_free(&why);
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
  tt_buf_reset(&why);
  assert_true(tt_tool_check(&either, "{\"y\":\"a\"}", &why));
  assert_true(tt_tool_check(&either, "{\"y\":[\"a\",\"b\"]}", &why));
  tt_buf_free(&why);
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
  json_t *j = tt_chat_to_json(&c);
  assert_int_equal(json_array_size(j), 5);
  json_t *call = json_array_get(j, 2);
  assert_true(json_is_null(json_object_get(call, "content")));
  json_t *fn = json_object_get(json_array_get(json_object_get(call, "tool_calls"), 0), "function");
  assert_string_equal(json_string_value(json_object_get(fn, "name")), "run_sql");
  assert_string_equal(json_string_value(json_object_get(fn, "arguments")), "{\"sql\":\"SELECT 1\"}");
  assert_string_equal(json_string_value(json_object_get(json_array_get(j, 3), "tool_call_id")), "call_1");
  tt_chat back = {0};
  assert_true(tt_chat_append_json(&back, j));
  assert_int_equal(back.n, 5);
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

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_tool_check),
      cmocka_unit_test(test_chat_json_round_trip),
      cmocka_unit_test(test_argstream),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
