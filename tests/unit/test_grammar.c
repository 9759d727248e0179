/* test_grammar.c — the embedded engine's grammar, built for the agent's
 * real tools in every profile's call shape, against the corpus of
 * tests/fixtures/grammar/cases.tsv: each text is fed to the engine's
 * grammar sampler (llama.cpp's grammar plus its UTF-8 and hidden-token
 * check) with the Qwen2 vocabulary (vocab only, no weights), token by
 * token as the tokenizer splits it and byte by byte, and must be accepted
 * to the end (end of generation allowed) or refused. Also: random key
 * orders of make_chart, what llama.cpp's grammar alone misses, forced
 * tools, and the grammar's size and parse time. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent/agent_internal.h"
#include "llm/llama_api.h"
#include "llm/llm_internal.h"
#include "testutil.h"

#ifndef TT_SOURCE_DIR
#define TT_SOURCE_DIR "."
#endif
#ifndef TT_VOCAB_DEFAULT
#define TT_VOCAB_DEFAULT "ggml-vocab-qwen2.gguf"
#endif
#define TT_MAX_TOKENS 2048 /* the default --max-tokens */

static const char *const profiles[] = {"qwen2.5", "qwen3", "llama3.1", "mistral", "generic", "sql-writer"};
#define NPROFILES (sizeof profiles / sizeof profiles[0])

static struct llama_model *g_model;
static const struct llama_vocab *g_vocab;
static llama_token g_byte_token[256];
static tt_tool_spec g_tools[TT_AGENT_MAX_TOOLS];
static size_t g_ntools;
static char *g_gbnf[NPROFILES];
static tt_grammars *g_grammars[NPROFILES];

static void quiet_log(enum ggml_log_level level, const char *text, void *ud) {
  (void)ud;
  if (level == GGML_LOG_LEVEL_ERROR && getenv("TT_GRAMMAR_LOG")) fputs(text, stderr);
}

static size_t profile_index(const char *name) {
  for (size_t i = 0; i < NPROFILES; i++)
    if (strcmp(profiles[i], name) == 0) return i;
  fail_msg("unknown profile %s", name);
  return 0;
}

/* ---- feeding text to the sampler ------------------------------------------------ */

/* Whether the sampler takes every token, then allows the end of
 * generation; *at receives the index of the first token refused
 * (ntok when only the end was refused). */
static bool sampler_takes(struct llama_sampler *s, const llama_token *toks, size_t ntok, size_t *at) {
  for (size_t i = 0; i < ntok; i++) {
    llama_token_data one = {toks[i], 0.0f, 0.0f};
    llama_token_data_array arr = {.data = &one, .size = 1, .selected = -1};
    llama_sampler_apply(s, &arr);
    if (isinf(one.logit)) {
      *at = i;
      return false;
    }
    llama_sampler_accept(s, toks[i]);
  }
  llama_token_data end = {llama_vocab_eos(g_vocab), 0.0f, 0.0f};
  llama_token_data_array arr = {.data = &end, .size = 1, .selected = -1};
  llama_sampler_apply(s, &arr);
  *at = ntok;
  return !isinf(end.logit);
}

static llama_token *tokens_of(const char *text, size_t len, bool bytes, size_t *n) {
  llama_token *t = tt_xmalloc((len + 1) * sizeof *t);
  if (bytes) {
    for (size_t i = 0; i < len; i++) t[i] = g_byte_token[(unsigned char)text[i]];
    *n = len;
    return t;
  }
  int32_t k = llama_tokenize(g_vocab, text, (int32_t)len, t, (int32_t)len + 1, false, false);
  assert_true(k >= 0);
  *n = (size_t)k;
  return t;
}

/* Feeds text to profile p's grammar; both ways of splitting it must agree. */
static bool grammar_takes(size_t p, const char *text, size_t len, tt_buf *why) {
  bool verdict[2] = {false, false};
  int ways = tt_utf8_valid(text, len, NULL) ? 2 : 1; /* the tokenizer wants UTF-8 */
  for (int way = 0; way < ways; way++) {
    size_t n, at;
    llama_token *t = tokens_of(text, len, way == 0, &n);
    struct llama_sampler *s = tt_grammars_sampler(g_grammars[p], g_gbnf[p]);
    assert_non_null(s);
    verdict[way] = sampler_takes(s, t, n, &at);
    if (!verdict[way] && why) {
      char piece[64] = "";
      if (at < n) {
        int k = llama_token_to_piece(g_vocab, t[at], piece, sizeof piece - 1, 0, true);
        piece[k > 0 ? k : 0] = '\0';
      }
      tt_buf_printf(why, "%s: refused at token %zu of %zu (%s) ", way == 0 ? "bytes" : "tokens", at, n,
                    at < n ? piece : "end of generation");
    }
    llama_sampler_free(s);
    free(t);
  }
  if (ways == 2 && verdict[0] != verdict[1])
    fail_msg("byte by byte and token by token disagree (%d, %d) on: %.*s", verdict[0], verdict[1],
             (int)len, text);
  return verdict[0];
}

/* ---- the corpus ---------------------------------------------------------------- */

/* Expands «LF» «CR» «TAB» «xHH» «N*text». */
static void expand(const char *s, tt_buf *out) {
  static const char open[] = "«", close[] = "»";
  while (*s) {
    if (strncmp(s, open, strlen(open)) != 0) {
      tt_buf_putc(out, *s++);
      continue;
    }
    s += strlen(open);
    const char *end = strstr(s, close);
    assert_non_null(end);
    size_t n = (size_t)(end - s);
    char *body = tt_xstrndup(s, n);
    char *star = strchr(body, '*');
    if (strcmp(body, "LF") == 0) tt_buf_putc(out, '\n');
    else if (strcmp(body, "CR") == 0) tt_buf_putc(out, '\r');
    else if (strcmp(body, "TAB") == 0) tt_buf_putc(out, '\t');
    else if (body[0] == 'x' && n == 3) tt_buf_putc(out, (char)strtol(body + 1, NULL, 16));
    else if (star) {
      long times = strtol(body, NULL, 10);
      for (long i = 0; i < times; i++) tt_buf_puts(out, star + 1);
    } else fail_msg("unknown «%s» in the corpus", body);
    free(body);
    s = end + strlen(close);
  }
}

typedef struct gcase {
  int line;
  bool accept;
  bool args;
  char *target, *text, *why;
} gcase;

static gcase *load_cases(size_t *n) {
  char path[512];
  snprintf(path, sizeof path, "%s/tests/fixtures/grammar/cases.tsv", TT_SOURCE_DIR);
  size_t len;
  char *data = tu_read_file(path, &len);
  assert_non_null(data);
  gcase *cases = NULL;
  size_t cap = 0;
  *n = 0;
  int lineno = 0;
  for (char *line = data, *next; line && *line; line = next) {
    next = strchr(line, '\n');
    if (next) *next++ = '\0';
    lineno++;
    if (*line == '#' || *line == '\0') continue;
    char *f[5];
    size_t k = 0;
    for (char *p = line; k < 5; k++) {
      f[k] = p;
      p = strchr(p, '\t');
      if (!p) {
        k++;
        break;
      }
      *p++ = '\0';
    }
    if (k != 5) fail_msg("cases.tsv:%d: %zu columns, 5 wanted", lineno, k);
    if (*n == cap) cases = tt_xrealloc(cases, (cap = cap ? cap * 2 : 64) * sizeof *cases);
    gcase *c = &cases[(*n)++];
    tt_buf text = TT_BUF_INIT;
    expand(f[3], &text);
    *c = (gcase){lineno, strcmp(f[0], "accept") == 0, strcmp(f[1], "args") == 0, tt_xstrdup(f[2]),
                 tt_buf_detach(&text), tt_xstrdup(f[4])};
    if (!c->accept && strcmp(f[0], "reject") != 0) fail_msg("cases.tsv:%d: verdict %s", lineno, f[0]);
    if (!c->args && strcmp(f[1], "reply") != 0) fail_msg("cases.tsv:%d: kind %s", lineno, f[1]);
  }
  free(data);
  return cases;
}

static void free_cases(gcase *c, size_t n) {
  for (size_t i = 0; i < n; i++) {
    free(c[i].target);
    free(c[i].text);
    free(c[i].why);
  }
  free(c);
}

/* A tool's call as profile p's model writes it (Qwen3: after a short
 * thought in its think block, which may not be empty; Mistral: with a
 * made-up id). */
#define QWEN3_THINK "<think>\nI query it.\n</think>\n\n"
static char *call_text(size_t p, const char *tool, const char *args) {
  tt_buf b = TT_BUF_INIT;
  if (strcmp(profiles[p], "qwen3") == 0) tt_buf_puts(&b, QWEN3_THINK);
  /* a forced call renders without any think block, as the history would */
  tt_profile_render_call(tt_profile_by_name(profiles[p]), &b, tool, args);
  assert_null(strstr(b.data, "<think>\n\n"));
  return tt_buf_detach(&b);
}

static void test_corpus(void **state) {
  (void)state;
  size_t n, checked = 0, failures = 0;
  gcase *cases = load_cases(&n);
  for (size_t i = 0; i < n; i++) {
    const gcase *c = &cases[i];
    for (size_t p = 0; p < NPROFILES; p++) {
      char *text = NULL;
      if (c->args) {
        text = call_text(p, c->target, c->text);
      } else {
        bool listed = false;
        char *names = tt_xstrdup(c->target), *save = NULL;
        for (char *t = strtok_r(names, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
          profile_index(t); /* names a known profile */
          listed |= strcmp(t, profiles[p]) == 0;
        }
        free(names);
        if (listed) text = tt_xstrdup(c->text);
      }
      if (!text) continue;
      tt_buf why = TT_BUF_INIT;
      bool took = grammar_takes(p, text, strlen(text), &why);
      checked++;
      if (took != c->accept) {
        failures++;
        tt_buf shown = TT_BUF_INIT;
        tt_utf8_escape_invalid(&shown, text, strlen(text));
        fprintf(stderr, "cases.tsv:%d (%s): %s expected, %s: %s [%s]\n", c->line, profiles[p],
                c->accept ? "accept" : "reject", took ? "accepted" : tt_buf_cstr(&why), c->why,
                tt_buf_cstr(&shown));
        tt_buf_free(&shown);
      }
      tt_buf_free(&why);
      free(text);
    }
  }
  fprintf(stderr, "%zu cases, %zu checks, %zu failures\n", n, checked, failures);
  free_cases(cases, n);
  assert_int_equal(failures, 0);
}

/* ---- beyond the corpus ----------------------------------------------------------------- */

/* make_chart's arguments with a random subset of its optional members,
 * in random orders: all accepted; one member repeated: refused. */
static void test_make_chart_in_any_order(void **state) {
  (void)state;
  static const char *const members[] = {
      "\"kind\": \"bar\"", "\"x\": \"Genre\"", "\"y\": [\"Tracks\", \"Minutes\"]", "\"series\": \"Media\"",
      "\"title\": \"Tracks per genre\"", "\"x_label\": \"genre\"", "\"y_label\": \"tracks\"",
      "\"sort\": \"y\"", "\"limit\": 10", "\"orientation\": \"horizontal\""};
  const int required[] = {0, 1, 4};
  unsigned seed = 20240601;
  int orders = getenv("TT_GRAMMAR_ORDERS") ? atoi(getenv("TT_GRAMMAR_ORDERS")) : 200;
  for (int k = 0; k < orders; k++) {
    int order[10], n = 0;
    for (int i = 0; i < 10; i++) {
      bool req = i == required[0] || i == required[1] || i == required[2];
      if (req || rand_r(&seed) % 2) order[n++] = i;
    }
    for (int i = n - 1; i > 0; i--) {
      int j = rand_r(&seed) % (i + 1), t = order[i];
      order[i] = order[j];
      order[j] = t;
    }
    size_t p = (size_t)k % NPROFILES;
    for (int dup = 0; dup < 2; dup++) {
      tt_buf args = TT_BUF_INIT;
      tt_buf_putc(&args, '{');
      for (int i = 0; i < n; i++) tt_buf_printf(&args, "%s%s", i ? ", " : "", members[order[i]]);
      if (dup) tt_buf_printf(&args, ", %s", members[order[rand_r(&seed) % (unsigned)n]]);
      tt_buf_putc(&args, '}');
      char *text = call_text(p, "make_chart", tt_buf_cstr(&args));
      if (grammar_takes(p, text, strlen(text), NULL) != !dup)
        fail_msg("%s: %s %s", profiles[p], dup ? "accepted" : "refused", tt_buf_cstr(&args));
      free(text);
      tt_buf_free(&args);
    }
  }
  fprintf(stderr, "%d orders of make_chart's members accepted, %d with a member twice refused\n",
          orders, orders);
}

/* llama.cpp's grammar alone lets an overlong form through when it comes
 * in single bytes, and a control token whose text the engine does not
 * write; the engine's sampler refuses both. */
static void test_sampler_sees_what_the_grammar_cannot(void **state) {
  (void)state;
  size_t p = profile_index("llama3.1");
  const char *head = "{\"name\": \"answer\", \"parameters\": {\"text\": \"a";
  const unsigned char overlong[] = {0xE0, 0x9F, 0xBF};
  size_t n, at;
  llama_token *t = tokens_of(head, strlen(head), false, &n);
  t = tt_xrealloc(t, (n + 3) * sizeof *t);
  for (size_t i = 0; i < 3; i++) t[n + i] = g_byte_token[overlong[i]];
  struct llama_sampler *bare = llama_sampler_init_grammar(g_vocab, g_gbnf[p], "root");
  struct llama_sampler *ours = tt_grammars_sampler(g_grammars[p], g_gbnf[p]);
  assert_non_null(bare);
  assert_non_null(ours);
  /* the grammar takes all three bytes (the end is refused only because
   * the string is open); the sampler refuses the second */
  assert_false(sampler_takes(bare, t, n + 3, &at));
  assert_int_equal(at, n + 3);
  assert_false(sampler_takes(ours, t, n + 3, &at));
  assert_int_equal(at, n + 1);
  llama_sampler_free(bare);
  llama_sampler_free(ours);
  /* a control token inside a string: text to the grammar, nothing to the
   * engine's output */
  llama_token ctl = -1;
  for (llama_token k = 0; k < llama_vocab_n_tokens(g_vocab) && ctl < 0; k++) {
    char a[64], b[64];
    int la = llama_token_to_piece(g_vocab, k, a, sizeof a, 0, true);
    int lb = llama_token_to_piece(g_vocab, k, b, sizeof b, 0, false);
    if (la > 0 && lb == 0 && !llama_vocab_is_eog(g_vocab, k) && !memchr(a, '"', (size_t)la) &&
        !memchr(a, '\\', (size_t)la))
      ctl = k;
  }
  assert_true(ctl >= 0);
  t[n] = ctl;
  bare = llama_sampler_init_grammar(g_vocab, g_gbnf[p], "root");
  ours = tt_grammars_sampler(g_grammars[p], g_gbnf[p]);
  assert_false(sampler_takes(bare, t, n + 1, &at));
  assert_int_equal(at, n + 1); /* taken */
  assert_false(sampler_takes(ours, t, n + 1, &at));
  assert_int_equal(at, n); /* refused */
  llama_sampler_free(bare);
  llama_sampler_free(ours);
  free(t);
}

/* With only set, the grammar admits that tool alone; a tool set that
 * does not hold it gives no grammar. */
static void test_forced_tool(void **state) {
  (void)state;
  tt_call_shape sh;
  tt_profile_call_shape(tt_profile_by_name("qwen2.5"), false, TT_MAX_TOKENS, &sh);
  char *g = tt_grammar_for_tools(g_tools, g_ntools, "answer", &sh, TT_MAX_TOKENS);
  assert_non_null(g);
  tt_grammars *gs = tt_grammars_new(g_vocab);
  const char *texts[] = {"<tool_call>\n{\"name\": \"answer\", \"arguments\": {\"text\": \"Done.\"}}\n</tool_call>",
                         "<tool_call>\n{\"name\": \"run_sql\", \"arguments\": {\"sql\": \"SELECT 1\"}}\n</tool_call>",
                         "Thinking.\n<tool_call>\n{\"name\": \"answer\", \"arguments\": {\"text\": \"Done.\"}}\n</tool_call>"};
  for (size_t i = 0; i < 3; i++) {
    size_t n, at;
    llama_token *t = tokens_of(texts[i], strlen(texts[i]), false, &n);
    struct llama_sampler *s = tt_grammars_sampler(gs, g);
    assert_int_equal(sampler_takes(s, t, n, &at), i == 0);
    llama_sampler_free(s);
    free(t);
  }
  tt_grammars_free(gs);
  free(g);
  assert_null(tt_grammar_for_tools(g_tools, g_ntools, "drop_table", &sh, TT_MAX_TOKENS));
}

/* Private mode's answer: digits only inside {{...}} references, for every
 * profile's call shape. */
static void test_private_answer_cites(void **state) {
  (void)state;
  tt_tool_spec priv[TT_AGENT_MAX_TOOLS];
  char *schema = NULL;
  size_t n = tt_prompt_tools_private(priv, g_tools, g_ntools, &schema);
  assert_string_equal(priv[n - 1].name, "need_values");
  tt_grammars *gs = tt_grammars_new(g_vocab);
  static const struct { const char *text; bool ok; } answers[] = {
      {"{{q1.r1.Name}} leads with {{q1.r1.n|0,000}} tracks.", true},
      {"Together {{q1.sum(Total)|0,000.00}}, in {{q1[Name='AC/DC'].n}} rows; see café.", true},
      {"No digits at all, and a quote \\\" too.", true},
      {"Rock leads with 1297 tracks.", false},
      {"{{q1.r1.n}} tracks, 3 genres.", false},
      {"A lone { brace.", false},
      {"An open {{q1.r1.n reference.", false},
  };
  for (size_t p = 0; p < NPROFILES; p++) {
    if (strcmp(profiles[p], "sql-writer") == 0) continue; /* no tools */
    tt_call_shape sh;
    tt_profile_call_shape(tt_profile_by_name(profiles[p]), false, TT_MAX_TOKENS, &sh);
    char *g = tt_grammar_for_tools(priv, n, NULL, &sh, TT_MAX_TOKENS);
    assert_non_null(g);
    assert_non_null(strstr(g, "cited-char ::= "));
    for (size_t i = 0; i < sizeof answers / sizeof answers[0]; i++) {
      char *args = tt_xasprintf("{\"text\": \"%s\"}", answers[i].text);
      char *call = call_text(p, "answer", args);
      size_t nt, at;
      llama_token *t = tokens_of(call, strlen(call), false, &nt);
      struct llama_sampler *sm = tt_grammars_sampler(gs, g);
      bool took = sampler_takes(sm, t, nt, &at);
      if (took != answers[i].ok) fail_msg("%s: %s was %s", profiles[p], call, took ? "taken" : "refused");
      llama_sampler_free(sm);
      free(t);
      free(call);
      free(args);
    }
    free(g);
  }
  tt_grammars_free(gs);
  free(schema);
}

/* Strings get a share of --max-tokens: longer with more tokens, and a
 * model that never closes a string still ends within the budget. */
static void test_string_bounds_follow_max_tokens(void **state) {
  (void)state;
  tt_call_shape sh;
  tt_profile_call_shape(tt_profile_by_name("qwen3"), true, 400, &sh);
  char *small = tt_grammar_for_tools(g_tools, g_ntools, "run_sql", &sh, 400);
  tt_profile_call_shape(tt_profile_by_name("qwen3"), true, 8192, &sh);
  char *large = tt_grammar_for_tools(g_tools, g_ntools, "run_sql", &sh, 8192);
  long a = 0, b = 0;
  const char *s = strstr(small, "str-1-"), *l = strstr(large, "str-1-");
  assert_non_null(s);
  assert_non_null(l);
  a = strtol(s + 6, NULL, 10);
  b = strtol(l + 6, NULL, 10);
  fprintf(stderr, "run_sql's sql (qwen3, with a thought): at most %ld characters at 400 tokens, %ld at 8192\n",
          a, b);
  /* 400 tokens: thought (200) and SQL share (400 - 8) * 1.5 characters */
  assert_true(a > 100 && a + 200 < 400 * 3 / 2);
  assert_true(b > 6000);
  /* the long bound parses, and a 7,000-character SQL gets through */
  tt_grammars *gs = tt_grammars_new(g_vocab);
  tt_buf text = TT_BUF_INIT;
  tt_buf_puts(&text, QWEN3_THINK "<tool_call>\n{\"name\": \"run_sql\", \"arguments\": {\"sql\": \"");
  for (int i = 0; i < 700; i++) tt_buf_puts(&text, "x <= 1 OR ");
  tt_buf_puts(&text, "1\"}}\n</tool_call>");
  size_t n, at;
  llama_token *t = tokens_of(text.data, text.len, false, &n);
  struct llama_sampler *smpl = tt_grammars_sampler(gs, large);
  assert_non_null(smpl);
  assert_true(sampler_takes(smpl, t, n, &at));
  llama_sampler_free(smpl);
  free(t);
  tt_buf_free(&text);
  tt_grammars_free(gs);
  free(small);
  free(large);
}

/* The least time, over three tries, to check the whole vocabulary after
 * prefix (the path a token the grammar refuses takes), in ms. */
static double full_check_ms(tt_grammars *gs, const char *gbnf, const char *prefix, llama_token_data *cands) {
  int nv = llama_vocab_n_tokens(g_vocab);
  size_t n, at;
  llama_token *t = tokens_of(prefix, strlen(prefix), false, &n);
  struct llama_sampler *s = tt_grammars_sampler(gs, gbnf);
  assert_false(sampler_takes(s, t, n, &at)); /* open, so only the end is refused */
  assert_int_equal(at, n);
  double best = 1e9;
  for (int r = 0; r < 3; r++) {
    for (int i = 0; i < nv; i++) cands[i] = (llama_token_data){i, 0.0f, 0.0f};
    llama_token_data_array arr = {.data = cands, .size = (size_t)nv, .selected = -1};
    double a = tt_now_ms();
    llama_sampler_apply(s, &arr);
    double d = tt_now_ms() - a;
    if (d < best) best = d;
  }
  llama_sampler_free(s);
  free(t);
  return best;
}

/* The figures: the grammar's size, the time to write it and to parse it,
 * a copy from the cache, and the cost of checking the whole vocabulary at
 * points of a reply: inside run_sql's SQL, and in make_chart's any-order
 * object (all ten members open after "{", nine after one, inside a string
 * after three). A single-token check (the engine's first try) costs
 * microseconds; these are the fallback. */
static void test_report_sizes_and_times(void **state) {
  (void)state;
  int nv = llama_vocab_n_tokens(g_vocab);
  llama_token_data *cands = tt_xmalloc((size_t)nv * sizeof *cands);
  for (size_t p = 0; p < NPROFILES; p++) {
    tt_call_shape sh;
    tt_profile_call_shape(tt_profile_by_name(profiles[p]), true, TT_MAX_TOKENS, &sh);
    double w0 = tt_now_ms();
    for (int i = 0; i < 10; i++) free(tt_grammar_for_tools(g_tools, g_ntools, NULL, &sh, TT_MAX_TOKENS));
    double write_ms = (tt_now_ms() - w0) / 10;
    tt_grammars *gs = tt_grammars_new(g_vocab);
    struct llama_sampler *warm = tt_grammars_sampler(gs, "root ::= \"x\"\n"); /* learns the vocabulary */
    llama_sampler_free(warm);
    double t0 = tt_now_ms();
    struct llama_sampler *first = tt_grammars_sampler(gs, g_gbnf[p]);
    double t1 = tt_now_ms();
    struct llama_sampler *again = tt_grammars_sampler(gs, g_gbnf[p]);
    double t2 = tt_now_ms();
    llama_sampler_free(first);
    llama_sampler_free(again);
    /* calls cut where the check runs */
    static const char *const cuts[][3] = {
        {"run_sql", "{\"sql\": \"SELECT Name FROM Genre WHERE 1\"}", "WHERE "},
        {"make_chart", "{\"x\": \"Genre\", \"kind\": \"bar\", \"title\": \"T\"}", "\"x\": "},
        {"make_chart", "{\"x\": \"Genre\", \"kind\": \"bar\", \"title\": \"T\"}", "\"kind\": "},
        {"make_chart", "{\"x\": \"Genre\", \"kind\": \"bar\", \"title\": \"Tracks\"}", "racks"},
    };
    double ms[4];
    for (size_t k = 0; k < 4; k++) {
      char *call = call_text(p, cuts[k][0], cuts[k][1]);
      char *cut = strstr(call, cuts[k][2]);
      assert_non_null(cut);
      cut[k == 3 ? 0 : (k == 0 ? strlen(cuts[k][2]) : 0)] = '\0';
      ms[k] = full_check_ms(gs, g_gbnf[p], call, cands);
      free(call);
    }
    fprintf(stderr, "%-10s grammar %6zu bytes, written in %4.1f ms; parse %5.1f ms, from the cache %4.2f ms; "
                    "whole vocabulary: in SQL %5.1f ms, make_chart after { %5.1f, after 1 member %5.1f, in a "
                    "string %5.1f\n",
            profiles[p], strlen(g_gbnf[p]), write_ms, t1 - t0, t2 - t1, ms[0], ms[1], ms[2], ms[3]);
    tt_grammars_free(gs);
  }
  free(cands);
}

/* ---- set-up ---------------------------------------------------------------------- */

static int setup(void **state) {
  (void)state;
  tt_error lerr = TT_ERROR_INIT;
  if (!tt_llama_api_get(&lerr)) { /* libtabletalk-llama.so, found through the RUNPATH */
    fprintf(stderr, "%s\n", lerr.message);
    return -1;
  }
  llama_log_set(quiet_log, NULL);
  llama_backend_init();
  const char *vocab = getenv("TT_VOCAB") && *getenv("TT_VOCAB") ? getenv("TT_VOCAB") : TT_VOCAB_DEFAULT;
  struct llama_model_params mp = llama_model_default_params();
  mp.vocab_only = true;
  g_model = llama_model_load_from_file(vocab, mp);
  if (!g_model) {
    fprintf(stderr, "cannot load the vocabulary %s (TT_VOCAB)\n", vocab);
    return -1;
  }
  g_vocab = llama_model_get_vocab(g_model);
  for (int i = 0; i < 256; i++) g_byte_token[i] = -1;
  for (llama_token t = 0; t < llama_vocab_n_tokens(g_vocab); t++) {
    char piece[8];
    if (llama_token_to_piece(g_vocab, t, piece, sizeof piece, 0, true) == 1 &&
        g_byte_token[(unsigned char)piece[0]] < 0)
      g_byte_token[(unsigned char)piece[0]] = t;
  }
  for (int i = 0; i < 256; i++)
    if (g_byte_token[i] < 0) {
      fprintf(stderr, "the vocabulary has no token for byte %02X\n", i);
      return -1;
    }
  static char run_sql_desc[TT_PROMPT_DESC_MAX];
  g_ntools = tt_prompt_tools(g_tools, tt_agent_default_opts().rows_to_model, run_sql_desc);
  for (size_t p = 0; p < NPROFILES; p++) {
    tt_call_shape sh;
    tt_profile_call_shape(tt_profile_by_name(profiles[p]), true, TT_MAX_TOKENS, &sh);
    g_gbnf[p] = tt_grammar_for_tools(g_tools, g_ntools, NULL, &sh, TT_MAX_TOKENS);
    g_grammars[p] = tt_grammars_new(g_vocab);
    if (!g_gbnf[p]) return -1;
  }
  return 0;
}

static int teardown(void **state) {
  (void)state;
  for (size_t p = 0; p < NPROFILES; p++) {
    tt_grammars_free(g_grammars[p]);
    free(g_gbnf[p]);
  }
  llama_model_free(g_model);
  llama_backend_free();
  return 0;
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_corpus),
      cmocka_unit_test(test_make_chart_in_any_order),
      cmocka_unit_test(test_sampler_sees_what_the_grammar_cannot),
      cmocka_unit_test(test_forced_tool),
      cmocka_unit_test(test_private_answer_cites),
      cmocka_unit_test(test_string_bounds_follow_max_tokens),
      cmocka_unit_test(test_report_sizes_and_times),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
