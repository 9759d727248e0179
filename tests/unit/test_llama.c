/* test_llama.c — the embedded engine on a tiny random-weight model
 * (written at test time by tt-mkmodel from the Qwen2 vocabulary of the
 * llama.cpp source): it loads, renders the Qwen2.5 tool format, every
 * generation is a valid tool call whatever the seed and the family's call
 * shape, parsed and rendered back byte for byte, a prefix restored from
 * disk gives the same next-token logits as one computed, the cache is
 * reused within and across questions, prompts are counted exactly before
 * they are sent, and cancellation stops it; an SQL writer's free-text step,
 * cut replies and its stable prefix; embeddings (mean pooling over the
 * loaded model): the model's dimension, length 1, the same numbers every
 * time and whatever else is in the batch. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "llm/llm_internal.h"
#include "llm/llama_api.h"
#include "testutil.h"

static const char *model_path(void) {
  const char *p = getenv("TT_TINY_MODEL");
  return p && *p ? p : "tiny.gguf";
}

static const tt_tool_spec tools[] = {
    {"run_sql", "Run SQL",
     "{\"type\":\"object\",\"properties\":{\"sql\":{\"type\":\"string\",\"minLength\":1}},"
     "\"required\":[\"sql\"],\"additionalProperties\":false}"},
    {"ask_user", "Ask",
     "{\"type\":\"object\",\"properties\":{\"question\":{\"type\":\"string\",\"minLength\":1}},"
     "\"required\":[\"question\"],\"additionalProperties\":false}"},
    {"answer", "Answer",
     "{\"type\":\"object\",\"properties\":{\"text\":{\"type\":\"string\",\"minLength\":1}},"
     "\"required\":[\"text\"],\"additionalProperties\":false}"},
    {"make_chart", "Chart",
     "{\"type\":\"object\",\"properties\":{\"kind\":{\"type\":\"string\",\"enum\":[\"bar\",\"line\",\"pie\"]},"
     "\"y\":{\"type\":\"array\",\"items\":{\"type\":\"string\"},\"minItems\":1},"
     "\"limit\":{\"type\":\"integer\"}},\"required\":[\"kind\",\"y\"],\"additionalProperties\":false}"},
};

static tt_llm *open_engine_as(double temperature, long seed, const char *cache, bool reuse,
                              const char *profile) {
  tt_llm_llama_opts o = tt_llm_llama_default_opts();
  o.model_path = model_path();
  o.n_ctx = 4096;
  o.n_threads = 1; /* no barrier to spin on when the machine is busy (tests run side by side) */
  o.temperature = temperature;
  o.seed = seed;
  o.max_tokens = 400;
  o.cache_dir = cache;
  o.reuse = reuse;
  o.profile = profile;
  tt_error err;
  tt_llm *llm = tt_llm_llama_new(&o, &err);
  if (!llm) fprintf(stderr, "%s\n", err.message);
  assert_non_null(llm);
  return llm;
}

static tt_llm *open_engine(double temperature, long seed, const char *cache, bool reuse) {
  return open_engine_as(temperature, seed, cache, reuse, NULL);
}

static void base_chat(tt_chat *c, const char *question) {
  tt_chat_add(c, TT_ROLE_SYSTEM, "You answer questions about a database. Tables: Genre(GenreId, Name).");
  tt_chat_add(c, TT_ROLE_USER, question);
}

static void test_loads_and_renders_the_tool_format(void **state) {
  (void)state;
  tt_llm *llm = open_engine(0, 1, NULL, true);
  assert_true(tt_llm_is_llama(llm));
  assert_string_equal(tt_llm_backend(llm), "llama.cpp");
  tt_chat c = {0};
  base_chat(&c, "How many genres?");
  tt_chat_add_tool_call(&c, "call_1", "run_sql", "{\"sql\": \"SELECT count(*) FROM Genre\"}");
  tt_chat_add_tool_result(&c, "call_1", "25");
  tt_llm_call call = {.tools = tools, .ntools = 3};
  tt_buf p = TT_BUF_INIT;
  assert_true(tt_llama_debug_prompt(llm, &c, &call, &p));
  const char *s = tt_buf_cstr(&p);
  assert_true(tt_has_prefix(s, "<|im_start|>system\nYou answer questions"));
  assert_non_null(strstr(s, "# Tools\n\nYou may call one or more functions"));
  assert_non_null(strstr(s, "<tools>\n{\"type\": \"function\", \"function\": {\"name\": \"run_sql\""));
  assert_non_null(strstr(s, "<|im_start|>user\nHow many genres?<|im_end|>\n"));
  assert_non_null(strstr(s, "<|im_start|>assistant\n<tool_call>\n{\"name\": \"run_sql\", \"arguments\": "
                            "{\"sql\": \"SELECT count(*) FROM Genre\"}}\n</tool_call><|im_end|>\n"));
  assert_non_null(strstr(s, "<|im_start|>user\n<tool_response>\n25\n</tool_response><|im_end|>\n"));
  assert_true(strcmp(s + p.len - strlen("<|im_start|>assistant\n"), "<|im_start|>assistant\n") == 0);
  tt_buf_free(&p);
  tt_chat_free(&c);
  tt_llm_free(llm);
}

/* Whatever the seed and the family's call shape, the reply is one valid
 * call that the profile parses, and rendered back into the next prompt
 * (its thought as the call's content) it gives the very bytes generated:
 * every generated token is reused. */
static void test_every_generation_is_a_valid_tool_call(void **state) {
  (void)state;
  static const char *const families[] = {"qwen2.5", "qwen3", "llama3.1", "mistral", "generic"};
  /* two per family by default: at temperature 1 a random model keeps the
   * grammar busy (~0.1-0.25 s a token on 2 cores); TT_GENERATIONS=50 for more */
  int runs = getenv("TT_GENERATIONS") ? atoi(getenv("TT_GENERATIONS")) : 10;
  int valid = 0, thoughts = 0;
  for (int seed = 1; seed <= runs; seed++) {
    const char *family = families[seed % 5];
    tt_llm *llm = open_engine_as(1.0, seed, NULL, true, family);
    tt_chat c = {0};
    base_chat(&c, "List the genres");
    tt_llm_call call = {.tools = tools, .ntools = 4};
    tt_llm_reply r;
    tt_error err;
    bool ok = tt_llm_chat(llm, &c, &call, &r, &err);
    if (getenv("TT_VERBOSE"))
      fprintf(stderr, "seed %d: %ld tokens in %.0f ms, %ld full-vocabulary checks\n", seed, r.usage.completion,
              r.decode_ms, r.grammar_full_checks);
    const tt_tool_spec *t = ok && r.is_tool ? tt_tool_find(tools, 4, r.tool_name) : NULL;
    tt_error why = TT_ERROR_INIT;
    bool good = t && tt_tool_check(t, r.tool_args, &why);
    if (good) {
      /* the call and its result appended: the prompt starts with what
       * was generated (Qwen3 always thinks: its template would drop an
       * empty think block from the history) */
      tt_chat_add_call(&c, r.call_id, r.tool_name, r.tool_args, r.thinking);
      tt_chat_add_tool_result(&c, r.call_id, "3 rows");
      int nv;
      long reused = -1;
      float *logits = tt_llama_debug_logits(llm, &c, &call, &nv, &reused);
      assert_non_null(logits);
      free(logits);
      if (strcmp(family, "qwen3") == 0 && !r.thinking) {
        tt_error_set(&why, TT_ERR_PROTOCOL, "a Qwen3 call without a thought");
        good = false;
      } else if (reused != r.usage.prompt + r.usage.completion) {
        tt_error_set(&why, TT_ERR_PROTOCOL, "rendered back, %ld tokens reused of %ld + %ld", reused,
                     r.usage.prompt, r.usage.completion);
        good = false;
      }
      thoughts += r.thinking != NULL;
    }
    if (good) valid++;
    else fprintf(stderr, "seed %d (%s): %s %s %s\n", seed, family, ok ? "" : err.message,
                 r.tool_name ? r.tool_name : "", tt_error_text(&why));
    tt_llm_reply_free(&r);
    tt_chat_free(&c);
    tt_llm_free(llm);
  }
  fprintf(stderr, "%d of %d generations were valid tool calls that render back identically (%d with a "
                  "thought)\n", valid, runs, thoughts);
  assert_int_equal(valid, runs);
}

static void test_forced_tool_and_utf8(void **state) {
  (void)state;
  tt_llm *llm = open_engine(1.0, 7, NULL, true);
  for (int i = 0; i < 5; i++) {
    tt_chat c = {0};
    base_chat(&c, "Ünïcödé questîon 日本");
    tt_llm_call call = {.tools = tools, .ntools = 4, .force_tool = "answer"};
    tt_llm_reply r;
    tt_error err;
    assert_true(tt_llm_chat(llm, &c, &call, &r, &err));
    assert_string_equal(r.tool_name, "answer");
    assert_true(tt_utf8_valid(r.tool_args, strlen(r.tool_args), NULL));
    tt_llm_reply_free(&r);
    tt_chat_free(&c);
  }
  tt_llm_free(llm);
}

static void test_cache_reuse_within_and_across_questions(void **state) {
  (void)state;
  tt_llm *llm = open_engine(0, 1, NULL, true);
  tt_chat c = {0};
  base_chat(&c, "How many genres?");
  tt_llm_call call = {.tools = tools, .ntools = 3};
  tt_llm_reply r;
  tt_error err;
  assert_true(tt_llm_chat(llm, &c, &call, &r, &err));
  assert_int_equal(r.usage.cached, 0);
  long first_prompt = r.usage.prompt;
  /* the next step: everything before it comes from the cache, the model's
   * own reply included (its thought too, as the call's content) */
  tt_chat_add_call(&c, r.call_id, r.tool_name, r.tool_args, r.thinking);
  tt_chat_add_tool_result(&c, r.call_id, "25 rows");
  long generated = r.usage.completion;
  tt_llm_reply_free(&r);
  bool ok = tt_llm_chat(llm, &c, &call, &r, &err);
  if (!ok) fprintf(stderr, "%s\n", err.message);
  assert_true(ok);
  assert_int_equal(r.usage.cached, first_prompt + generated);
  tt_llm_reply_free(&r);
  tt_chat_free(&c);
  /* a new question on the same system prompt: the system part is reused */
  tt_chat d = {0};
  base_chat(&d, "Which genre is first?");
  assert_true(tt_llm_chat(llm, &d, &call, &r, &err));
  assert_true(r.usage.cached > 0);
  assert_true(r.usage.cached < r.usage.prompt);
  fprintf(stderr, "second question: %ld of %ld prompt tokens reused\n", r.usage.cached, r.usage.prompt);
  tt_llm_reply_free(&r);
  tt_chat_free(&d);
  tt_llm_free(llm);
}

/* The agent fits its prompts to the context with these counts: they must
 * be the tokens the engine then holds, cache or no cache. */
static void test_prompt_counts_are_exact(void **state) {
  (void)state;
  tt_llm *llm = open_engine(0, 1, NULL, true);
  assert_int_equal(tt_llm_context(llm), 4096);
  assert_int_equal(tt_llm_reply_reserve(llm), 400); /* max_tokens, under a quarter */
  assert_true(tt_llm_counts_exact(llm));
  tt_chat c = {0};
  base_chat(&c, "How many genres?");
  tt_llm_call call = {.tools = tools, .ntools = 3};
  tt_llm_reply r;
  tt_error err;
  for (int step = 0; step < 3; step++) {
    long counted = tt_llm_count_prompt(llm, &c, &call);
    assert_true(tt_llm_chat(llm, &c, &call, &r, &err));
    assert_int_equal(counted, r.usage.prompt);
    tt_chat_add_tool_call(&c, r.call_id, r.tool_name, r.tool_args);
    tt_chat_add_tool_result(&c, r.call_id, "The query returned 25 rows; all are shown.");
    tt_llm_reply_free(&r);
  }
  /* shortened in the middle: the cache is kept only up to the change */
  tt_chat_set_content(&c, 3, "[result shortened]");
  long counted = tt_llm_count_prompt(llm, &c, &call);
  assert_true(tt_llm_chat(llm, &c, &call, &r, &err));
  assert_int_equal(counted, r.usage.prompt);
  assert_true(r.usage.cached < r.usage.prompt);
  tt_llm_reply_free(&r);
  tt_chat_free(&c);
  long n = tt_llm_count_text(llm, "SELECT * FROM Track", 19);
  assert_true(n > 0 && n < 19);
  tt_llm_free(llm);
  /* no --ctx: the engine chooses, and says why */
  tt_llm_llama_opts o = tt_llm_llama_default_opts();
  o.model_path = model_path();
  o.n_threads = 1; /* no barrier to spin on when the machine is busy (tests run side by side) */
  llm = tt_llm_llama_new(&o, &err);
  assert_non_null(llm);
  assert_true(tt_llm_context(llm) >= TT_CTX_FLOOR);
  assert_non_null(strstr(tt_llm_llama_ctx_note(llm), "tokens: "));
  fprintf(stderr, "default context of the tiny model: %s\n", tt_llm_llama_ctx_note(llm));
  tt_llm_free(llm);
}

static void test_restored_prefix_gives_identical_logits(void **state) {
  (void)state;
  char *dir = tu_mkdtemp();
  tt_chat c = {0};
  base_chat(&c, "How many genres?");
  tt_llm_call call = {.tools = tools, .ntools = 3};
  int nv = 0;
  long reused = -1;
  tt_llm *a = open_engine(0, 1, dir, true); /* computes and saves the prefix */
  float *computed = tt_llama_debug_logits(a, &c, &call, &nv, &reused);
  assert_non_null(computed);
  assert_int_equal(reused, 0);
  tt_llm_free(a);
  tt_llm *b = open_engine(0, 1, dir, true); /* a fresh engine restores it */
  float *restored = tt_llama_debug_logits(b, &c, &call, &nv, &reused);
  assert_non_null(restored);
  assert_true(reused > 0);
  tt_llm_free(b);
  float worst = 0;
  for (int i = 0; i < nv; i++) worst = fmaxf(worst, fabsf(computed[i] - restored[i]));
  fprintf(stderr, "restored %ld prefix tokens; largest logit difference %g\n", reused, (double)worst);
  assert_true(worst == 0.0f);
  free(computed);
  free(restored);
  tt_chat_free(&c);
  tu_rmtree(dir);
  free(dir);
}

/* An SQL writer's step: free text without tools or grammar, a reply cut
 * at the token limit returned as far as it got when the caller asks, and
 * the prompt's stable prefix (up to the schema's end) reused by the next
 * question and restored from disk by a fresh engine. */
static tt_llm *open_writer(const char *cache, long max_tokens) {
  tt_llm_llama_opts o = tt_llm_llama_default_opts();
  o.model_path = model_path();
  o.n_ctx = 4096;
  o.n_threads = 1; /* no barrier to spin on when the machine is busy (tests run side by side) */
  o.max_tokens = max_tokens;
  o.cache_dir = cache;
  o.profile = "sql-writer";
  tt_error err;
  tt_llm *llm = tt_llm_llama_new(&o, &err);
  if (!llm) fprintf(stderr, "%s\n", err.message);
  assert_non_null(llm);
  return llm;
}

static void test_sql_writer_text_and_stable_prefix(void **state) {
  (void)state;
  char *dir = tu_mkdtemp();
  tt_llm *llm = open_writer(dir, 12);
  assert_true(tt_llm_is_sql_writer(llm));
  assert_int_equal(tt_llm_sql_style(llm), TT_SQL_STYLE_OMNISQL);
  const char *head = "Database Schema:\nCREATE TABLE Genre (\n    GenreId integer,\n    Name text\n);\n";
  char *q1 = tt_xasprintf("%sQuestion:\nHow many genres?\n", head);
  char *q2 = tt_xasprintf("%sQuestion:\nWhich genre is first?\n", head);
  tt_chat c = {0};
  tt_chat_add(&c, TT_ROLE_USER, q1);
  tt_llm_call call = {.allow_cut = true, .stable_prefix = strlen(head)};
  tt_llm_reply r;
  tt_error err;
  assert_true(tt_llm_chat(llm, &c, &call, &r, &err));
  assert_false(r.is_tool);
  assert_non_null(r.text);
  assert_true(strcmp(r.finish_reason, "length") == 0 || strcmp(r.finish_reason, "stop") == 0);
  bool was_cut = strcmp(r.finish_reason, "length") == 0;
  assert_int_equal(r.usage.cached, 0);
  tt_llm_reply_free(&r);
  /* without allow_cut the same reply is an error */
  call.allow_cut = false;
  bool ok = tt_llm_chat(llm, &c, &call, &r, &err);
  assert_true(ok != was_cut);
  if (!ok) assert_non_null(strstr(err.message, "did not finish its reply within 12 tokens"));
  tt_llm_reply_free(&r);
  call.allow_cut = true;
  tt_chat_free(&c);
  /* another question: the schema part comes from the cache */
  tt_chat d = {0};
  tt_chat_add(&d, TT_ROLE_USER, q2);
  assert_true(tt_llm_chat(llm, &d, &call, &r, &err));
  long stable_tokens = r.usage.cached;
  assert_true(stable_tokens > 10);
  assert_true(stable_tokens < r.usage.prompt);
  tt_llm_reply_free(&r);
  tt_llm_free(llm);
  /* a fresh engine restores that prefix from disk */
  llm = open_writer(dir, 12);
  assert_true(tt_llm_chat(llm, &d, &call, &r, &err));
  assert_int_equal(r.usage.cached, stable_tokens);
  fprintf(stderr, "SQL writer: %ld of %ld prompt tokens restored\n", r.usage.cached, r.usage.prompt);
  tt_llm_reply_free(&r);
  tt_chat_free(&d);
  tt_llm_free(llm);
  free(q1);
  free(q2);
  tu_rmtree(dir);
  free(dir);
}

static volatile sig_atomic_t g_cancel;

/* The first piece of streamed text raises the flag: a cancel that comes
 * while the engine is writing (an event of the run, not a moment). */
static size_t g_streamed;
static void cancel_on_text(void *ud, const char *piece, size_t n) {
  (void)ud;
  (void)piece;
  g_streamed += n;
  g_cancel = 1;
}

static void test_cancellation_stops_promptly(void **state) {
  (void)state;
  tt_llm *llm = open_engine(1.0, 3, NULL, true);
  tt_chat c = {0};
  base_chat(&c, "Write a very long answer");
  tt_llm_call call = {.tools = tools, .ntools = 3, .cancel = &g_cancel};
  tt_llm_reply r;
  tt_error err;
  g_cancel = 1; /* already cancelled: nothing is computed */
  assert_false(tt_llm_chat(llm, &c, &call, &r, &err));
  assert_int_equal(err.kind, TT_ERR_CANCELLED);
  tt_llm_reply_free(&r);
  /* cancelled while writing a long answer (forced, so its length is known):
   * it stops after the piece that raised the flag, long before the end */
  static const char text[] = "Rock has the most tracks of every genre in the store, followed by Latin, "
                             "Metal, Alternative and Punk, then Jazz, Blues and Classical, and the "
                             "rest trail far behind with a few dozen tracks or fewer each.";
  char *args = tt_xasprintf("{\"text\": \"%s\"}", text);
  tt_llm_call during = call;
  during.force_tool = "answer";
  during.force_call_name = "answer";
  during.force_call_args = args;
  during.stream_tool = "answer";
  during.stream_arg = "text";
  during.on_text = cancel_on_text;
  g_cancel = 0;
  g_streamed = 0;
  assert_false(tt_llm_chat(llm, &c, &during, &r, &err));
  assert_int_equal(err.kind, TT_ERR_CANCELLED);
  assert_true(g_streamed > 0 && g_streamed < strlen(text));
  fprintf(stderr, "cancelled after %zu of %zu bytes of text\n", g_streamed, strlen(text));
  tt_llm_reply_free(&r);
  free(args);
  /* the engine is usable afterwards */
  g_cancel = 0;
  assert_true(tt_llm_chat(llm, &c, &call, &r, &err));
  tt_llm_reply_free(&r);
  tt_chat_free(&c);
  tt_llm_free(llm);
}

/* The model's embedding width, read by llama.cpp itself. */
static size_t model_width(void) {
  tt_error err;
  assert_non_null(tt_llama_api_get(&err));
  struct llama_model_params mp = llama_model_default_params();
  struct llama_model *m = llama_model_load_from_file(model_path(), mp);
  assert_non_null(m);
  size_t w = (size_t)llama_model_n_embd(m);
  llama_model_free(m);
  return w;
}

static void test_embeddings_are_normalised_sized_and_deterministic(void **state) {
  (void)state;
  tt_llm *llm = open_engine(0, 0, NULL, true);
  assert_true(tt_llm_can_embed(llm));
  char *id = tt_llm_embed_identity(llm);
  assert_non_null(id);
  assert_true(strncmp(id, "gguf ", 5) == 0);
  free(id);
  const char *texts[] = {"Table Employee: people on the payroll. Columns: EmployeeId, FullName.",
                         "Table Zorb: results of the yearly marathon.", "Which athletes ran quickest?"};
  tt_embeddings a, b, one;
  tt_error err;
  assert_true(tt_llm_embed(llm, texts, 3, NULL, &a, &err));
  assert_int_equal(a.n, 3);
  assert_int_equal(a.dim, model_width());
  assert_int_equal(a.requests, 3);
  assert_true(a.tokens > 3);
  for (size_t i = 0; i < a.n; i++) {
    double sum = 0;
    for (size_t d = 0; d < a.dim; d++) sum += (double)a.v[i * a.dim + d] * a.v[i * a.dim + d];
    assert_true(fabs(sum - 1.0) < 1e-4);
  }
  /* different texts, different vectors */
  assert_memory_not_equal(a.v, a.v + a.dim, a.dim * sizeof *a.v);
  /* the same numbers again, and for a text alone as within a batch */
  assert_true(tt_llm_embed(llm, texts, 3, NULL, &b, &err));
  assert_memory_equal(a.v, b.v, a.n * a.dim * sizeof *a.v);
  assert_true(tt_llm_embed(llm, texts + 1, 1, NULL, &one, &err));
  assert_memory_equal(a.v + a.dim, one.v, a.dim * sizeof *a.v);
  tt_embeddings_free(&b);
  tt_embeddings_free(&one);
  /* a chat in between changes nothing */
  tt_chat chat = {0};
  base_chat(&chat, "How many genres?");
  tt_llm_call call = {.tools = tools, .ntools = 3};
  tt_llm_reply r;
  assert_true(tt_llm_chat(llm, &chat, &call, &r, &err));
  tt_llm_reply_free(&r);
  tt_chat_free(&chat);
  assert_true(tt_llm_embed(llm, texts, 3, NULL, &b, &err));
  assert_memory_equal(a.v, b.v, a.n * a.dim * sizeof *a.v);
  tt_embeddings_free(&b);
  tt_llm_free(llm);
  /* and from a fresh engine */
  llm = open_engine(0, 0, NULL, true);
  assert_true(tt_llm_embed(llm, texts, 3, NULL, &b, &err));
  assert_memory_equal(a.v, b.v, a.n * a.dim * sizeof *a.v);
  tt_embeddings_free(&b);
  /* the bounds */
  assert_false(tt_llm_embed(llm, texts, 0, NULL, &b, &err));
  assert_int_equal(err.kind, TT_ERR_LIMIT);
  tt_embeddings_free(&a);
  tt_llm_free(llm);
}

int main(void) {
  if (access(model_path(), R_OK) != 0) {
    fprintf(stderr, "test setup failed: %s is missing (the make_tiny_model test writes it)\n", model_path());
    return 99;
  }
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_loads_and_renders_the_tool_format),
      cmocka_unit_test(test_every_generation_is_a_valid_tool_call),
      cmocka_unit_test(test_forced_tool_and_utf8),
      cmocka_unit_test(test_cache_reuse_within_and_across_questions),
      cmocka_unit_test(test_prompt_counts_are_exact),
      cmocka_unit_test(test_restored_prefix_gives_identical_logits),
      cmocka_unit_test(test_cancellation_stops_promptly),
      cmocka_unit_test(test_sql_writer_text_and_stable_prefix),
      cmocka_unit_test(test_embeddings_are_normalised_sized_and_deterministic),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
