/* grammar.c — the GBNF grammar that the embedded engine decodes under: a
 * thought where the family writes one (optional; required inside Qwen3's
 * <think> block), then exactly one call of one of the tools offered, in
 * the model family's shape (tt_call_shape), with arguments that fit the
 * tool's JSON schema.
 *
 * The arguments are written exactly as Python's json.dumps(...,
 * ensure_ascii=False) writes them, because that is how the official chat
 * templates render a call back into the prompt (tojson) and the prompt must
 * stay byte-identical: ", " and ": " separators; strings of raw UTF-8 (any
 * code point but '"', '\', U+0000-U+001F and the surrogates) with the
 * escapes \" \\ \n \r \t \b \f and \u00XX (lowercase) for the other C0
 * controls, nothing else; object members in any order, each at most once,
 * the required ones present (a state per set of members written, for
 * objects of up to TT_FREE_ORDER_KEYS members).
 *
 * A thought (tt_thought) is UTF-8 text that neither starts nor ends with
 * whitespace and never holds the first character of the call's open text
 * (but '<' followed by a space, '=', '>' or a digit: SQL comparisons), so
 * the call starts at the first occurrence of its open text.
 *
 * llama.cpp matches code points, and cannot tell an overlong form split
 * over several tokens from a valid one; the engine's grammar sampler
 * (grammar_sampler.c) checks those bytes itself.
 *
 * Every repetition is bounded, so that even a model that never wants to
 * close a string finishes: the thought and the call share a budget of
 * characters derived from max_tokens, and each free-length string of a
 * tool's arguments gets an equal share of what the call's fixed parts
 * leave. */
#include "llm/llm_internal.h"

#include <ctype.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define TT_ITEM_CHARS 64      /* a string inside an array or deeper (a column name) */
#define TT_MAX_ITEMS 20       /* items of an array without a smaller maxItems */
#define TT_FREE_ORDER_KEYS 10 /* larger objects keep the schema's order */
#define TT_MIN_STRING 16      /* the least a free-length string may hold */
#define TT_MAX_DEPTH 4        /* deeper values are plain JSON scalars */
/* The reply's budget in characters per token of max_tokens: what a model
 * writes averages well above 1.5 characters a token (SQL and English 3 to
 * 4 with Qwen's vocabulary; a random model under this grammar 2 to 3), and
 * this lets a 1,600-character SQL or answer through at the default 2,048
 * tokens even after a thought. */
#define TT_CHARS_PER_TOKEN_X2 3
#define TT_REPLY_SLACK 8 /* tokens kept for the end of the turn */
#define TT_DIRECT_REPEAT 1999 /* llama.cpp refuses x{m,n} when n reaches 2,000 */

/* The worst-case length of what a rule admits, in characters: fixed, plus
 * strings times the bound of a free-length string. */
typedef struct tt_len {
  long fixed;
  long strings;
} tt_len;

typedef struct tt_gram {
  tt_buf rules;      /* rule definitions, each on a line of its own */
  long string_chars; /* bound of a free-length string of the arguments */
} tt_gram;

/* ---- writing GBNF ----------------------------------------------------------- */

/* GBNF literal for text: "..." with quotes, backslashes and newlines escaped. */
static void tt_gbnf_literal(tt_buf *g, const char *text) {
  tt_buf_putc(g, '"');
  for (const char *p = text; *p; p++) {
    switch (*p) {
    case '"': tt_buf_puts(g, "\\\""); break;
    case '\\': tt_buf_puts(g, "\\\\"); break;
    case '\n': tt_buf_puts(g, "\\n"); break;
    case '\r': tt_buf_puts(g, "\\r"); break;
    case '\t': tt_buf_puts(g, "\\t"); break;
    default: tt_buf_putc(g, *p);
    }
  }
  tt_buf_putc(g, '"');
}

/* name in letters, digits and dashes (a comment may not hold a newline). */
static void tt_rule_name(tt_buf *out, const char *prefix, const char *name) {
  tt_buf_puts(out, prefix);
  for (const char *p = name; *p; p++) tt_buf_putc(out, isalnum((unsigned char)*p) ? (char)tolower((unsigned char)*p) : '-');
}

/* Whether rule name is defined already. */
static bool tt_gram_has(tt_gram *g, const char *name) {
  size_t n = strlen(name);
  const char *r = tt_buf_cstr(&g->rules);
  for (const char *p = r; (p = strstr(p, name)) != NULL; p += n)
    if ((p == r || p[-1] == '\n') && strncmp(p + n, " ::= ", 5) == 0) return true;
  return false;
}

/* item{min,max} for any max. llama.cpp expands x{m,n} into n rules and
 * refuses n >= 2,000, so a longer run is written as "fewer than D items,
 * or D items and then the rest" (D = TT_DIRECT_REPEAT): every length has
 * one reading, and at most two readings are alive at any point. */
static void tt_gbnf_repeat(tt_buf *expr, const char *item, long min, long max) {
  if (max <= TT_DIRECT_REPEAT) {
    if (max == 0) tt_buf_puts(expr, "\"\"");
    else tt_buf_printf(expr, "%s{%ld,%ld}", item, min, max);
    return;
  }
  tt_buf_puts(expr, "( ");
  if (min > 0) tt_buf_printf(expr, "%s{%ld} ", item, min);
  long rest = max - min;
  int open = 0;
  for (; rest > TT_DIRECT_REPEAT; rest -= TT_DIRECT_REPEAT, open++)
    tt_buf_printf(expr, "( %s{0,%d} | %s{%d} ", item, TT_DIRECT_REPEAT - 1, item, TT_DIRECT_REPEAT);
  if (rest > 0) tt_buf_printf(expr, "%s{0,%ld}", item, rest);
  else tt_buf_puts(expr, "\"\"");
  for (; open > 0; open--) tt_buf_puts(expr, " )");
  tt_buf_puts(expr, " )");
}

/* ---- character classes ---------------------------------------------------------- */

typedef struct tt_range {
  uint32_t lo, hi;
} tt_range;

#define TT_MAX_RANGES 32
typedef struct tt_class {
  tt_range r[TT_MAX_RANGES];
  size_t n;
} tt_class;

/* Removes [lo, hi] from c. */
static void tt_class_remove(tt_class *c, uint32_t lo, uint32_t hi) {
  tt_class out = {.n = 0};
  for (size_t i = 0; i < c->n; i++) {
    tt_range x = c->r[i];
    if (x.hi < lo || x.lo > hi) {
      out.r[out.n++] = x;
      continue;
    }
    if (x.lo < lo && out.n < TT_MAX_RANGES) out.r[out.n++] = (tt_range){x.lo, lo - 1};
    if (x.hi > hi && out.n < TT_MAX_RANGES) out.r[out.n++] = (tt_range){hi + 1, x.hi};
  }
  *c = out;
}

static void tt_class_char(tt_buf *g, uint32_t c) {
  if (c > 0x20 && c < 0x7f && !strchr("\\]-[^\"", (int)c)) tt_buf_putc(g, (char)c);
  else if (c < 0x100) tt_buf_printf(g, "\\x%02X", c);
  else if (c < 0x10000) tt_buf_printf(g, "\\u%04X", c);
  else tt_buf_printf(g, "\\U%08X", c);
}

static void tt_class_write(tt_buf *g, const tt_class *c) {
  tt_buf_putc(g, '[');
  for (size_t i = 0; i < c->n; i++) {
    tt_class_char(g, c->r[i].lo);
    if (c->r[i].hi != c->r[i].lo) {
      tt_buf_putc(g, '-');
      tt_class_char(g, c->r[i].hi);
    }
  }
  tt_buf_putc(g, ']');
}

/* Every Unicode scalar value but the C0 controls (tab and newline aside). */
static tt_class tt_class_text(void) {
  return (tt_class){.r = {{0x09, 0x0A}, {0x20, 0xD7FF}, {0xE000, 0x10FFFF}}, .n = 3};
}

/* What Python's str.isspace() and so str.strip() take for whitespace. */
static void tt_class_remove_space(tt_class *c) {
  static const tt_range space[] = {{0x09, 0x0D}, {0x1C, 0x20}, {0x85, 0x85}, {0xA0, 0xA0},
                                   {0x1680, 0x1680}, {0x2000, 0x200A}, {0x2028, 0x2029},
                                   {0x202F, 0x202F}, {0x205F, 0x205F}, {0x3000, 0x3000}};
  for (size_t i = 0; i < sizeof space / sizeof space[0]; i++) tt_class_remove(c, space[i].lo, space[i].hi);
}

/* ---- values --------------------------------------------------------------------- */

/* The JSON text of a key or an enum value as json.dumps writes it. */
static char *tt_json_text(const json_t *v) {
  char *s = json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT);
  return s ? s : tt_xstrdup("null");
}

/* A JSON string of min..max characters. */
static void tt_gbnf_string(tt_gram *g, tt_buf *expr, long min, long max) {
  tt_buf name = TT_BUF_INIT;
  tt_buf_printf(&name, "str-%ld-%ld", min, max);
  if (!tt_gram_has(g, tt_buf_cstr(&name))) {
    tt_buf_printf(&g->rules, "%s ::= \"\\\"\" ", tt_buf_cstr(&name));
    tt_gbnf_repeat(&g->rules, "char", min, max);
    tt_buf_puts(&g->rules, " \"\\\"\"\n");
  }
  tt_buf_puts(expr, tt_buf_cstr(&name));
  tt_buf_free(&name);
}

/* A string of TT_LLM_CITED_PATTERN: characters other than digits and "{",
 * and whole {{...}} references (one item each, as a character is). */
static void tt_gbnf_cited(tt_gram *g, tt_buf *expr, long min, long max) {
  if (!tt_gram_has(g, "cited-char"))
    tt_buf_puts(&g->rules,
                "cited-char ::= [ !#-/:-\\[\\]-z|-\\uD7FF\\uE000-\\U0010FFFF] | \"\\\\\" ( "
                "[\"\\\\bfnrt] | \"u00\" ( \"0\" [0-7bef] | \"1\" [0-9a-f] ) ) | \"{{\" "
                "cited-ref{1,100} \"}}\"\n"
                "cited-ref ::= [ !#-\\[\\]-|~-\\uD7FF\\uE000-\\U0010FFFF]\n");
  tt_buf name = TT_BUF_INIT;
  tt_buf_printf(&name, "cited-%ld-%ld", min, max);
  if (!tt_gram_has(g, tt_buf_cstr(&name))) {
    tt_buf_printf(&g->rules, "%s ::= \"\\\"\" ", tt_buf_cstr(&name));
    tt_gbnf_repeat(&g->rules, "cited-char", min, max);
    tt_buf_puts(&g->rules, " \"\\\"\"\n");
  }
  tt_buf_puts(expr, tt_buf_cstr(&name));
  tt_buf_free(&name);
}

static tt_len tt_gbnf_value(tt_gram *g, tt_buf *expr, const json_t *schema, const char *rule, int depth);

static tt_len tt_len_max(tt_len a, tt_len b) {
  return (tt_len){a.fixed > b.fixed ? a.fixed : b.fixed, a.strings > b.strings ? a.strings : b.strings};
}

typedef struct tt_member {
  char *rule; /* "key": value */
  bool required;
  tt_len len;
} tt_member;

/* The members after those in mask were written: "}" when the required
 * ones are all there, or ", " and one more. */
static void tt_gbnf_object_state(tt_gram *g, const char *rule, const tt_member *m, size_t n,
                                 unsigned mask) {
  unsigned all = (1u << n) - 1, required = 0;
  for (size_t i = 0; i < n; i++)
    if (m[i].required) required |= 1u << i;
  tt_buf_printf(&g->rules, "%s-s%x ::= ", rule, mask);
  bool alt = false;
  if ((mask & required) == required) {
    tt_buf_puts(&g->rules, "\"}\"");
    alt = true;
  }
  if (mask != all) {
    tt_buf_printf(&g->rules, "%s%s( ", alt ? " | " : "", mask ? "\", \" " : "");
    bool first = true;
    for (size_t i = 0; i < n; i++) {
      if (mask & (1u << i)) continue;
      tt_buf_printf(&g->rules, "%s%s %s-s%x", first ? "" : " | ", m[i].rule, rule, mask | 1u << i);
      first = false;
    }
    tt_buf_puts(&g->rules, " )");
  }
  tt_buf_putc(&g->rules, '\n');
}

/* The members in the schema's order, each optional one present or not
 * (objects too large for a state per set of members). */
static void tt_gbnf_object_fixed(tt_gram *g, const char *rule, const tt_member *m, size_t n) {
  for (size_t i = 0; i <= n; i++) {
    for (int written = 0; written < 2; written++) {
      if (i == 0 && written) continue;
      tt_buf_printf(&g->rules, "%s-f%zu%c ::= ", rule, i, written ? 'w' : 'e');
      if (i == n) {
        tt_buf_puts(&g->rules, "\"}\"\n");
        continue;
      }
      if (!m[i].required) tt_buf_printf(&g->rules, "%s-f%zu%c | ", rule, i + 1, written ? 'w' : 'e');
      tt_buf_printf(&g->rules, "%s%s %s-f%zuw\n", written ? "\", \" " : "", m[i].rule, rule, i + 1);
    }
  }
}

/* {"a": A, "b": B}: members in any order (or the schema's, when there are
 * more than TT_FREE_ORDER_KEYS), each at most once, the required ones
 * present. */
static tt_len tt_gbnf_object(tt_gram *g, const json_t *schema, const char *rule, int depth) {
  const json_t *props = json_object_get(schema, "properties");
  const json_t *required = json_object_get(schema, "required");
  size_t n = json_is_object(props) ? json_object_size(props) : 0;
  tt_member *m = tt_xcalloc(n ? n : 1, sizeof *m);
  tt_len len = {2, 0};
  size_t k = 0;
  const char *key;
  const json_t *ps;
  json_object_foreach((json_t *)props, key, ps) {
    size_t i;
    const json_t *r;
    json_array_foreach(required, i, r) m[k].required |= json_is_string(r) && strcmp(json_string_value(r), key) == 0;
    /* "key": value */
    tt_buf sub = TT_BUF_INIT, val = TT_BUF_INIT, quoted = TT_BUF_INIT;
    tt_buf_printf(&sub, "%s-v%zu", rule, k);
    m[k].len = tt_gbnf_value(g, &val, ps, tt_buf_cstr(&sub), depth + 1);
    json_t *kj = json_string(key);
    char *kt = tt_json_text(kj);
    json_decref(kj);
    tt_buf_printf(&quoted, "%s: ", kt);
    m[k].rule = tt_xasprintf("%s-m%zu", rule, k);
    tt_buf_printf(&g->rules, "%s ::= ", m[k].rule);
    tt_gbnf_literal(&g->rules, tt_buf_cstr(&quoted));
    tt_buf_printf(&g->rules, " %s\n", tt_buf_cstr(&val));
    len.fixed += m[k].len.fixed + (long)quoted.len + 2;
    len.strings += m[k].len.strings;
    free(kt);
    tt_buf_free(&sub);
    tt_buf_free(&val);
    tt_buf_free(&quoted);
    k++;
  }
  if (n <= TT_FREE_ORDER_KEYS) {
    tt_buf_printf(&g->rules, "%s ::= \"{\" %s-s0\n", rule, rule);
    for (unsigned mask = 0; mask < 1u << n; mask++) tt_gbnf_object_state(g, rule, m, n, mask);
  } else {
    tt_buf_printf(&g->rules, "%s ::= \"{\" %s-f0e\n", rule, rule);
    tt_gbnf_object_fixed(g, rule, m, n);
  }
  for (size_t i = 0; i < n; i++) free(m[i].rule);
  free(m);
  return len;
}

/* An integer as Python writes it, without a sign when the schema's
 * minimum rules negatives out, without 0 when it rules 0 out. */
static tt_len tt_gbnf_integer(tt_buf *expr, const json_t *schema) {
  const json_t *min = json_object_get(schema, "minimum");
  if (json_is_number(min) && json_number_value(min) >= 1) tt_buf_puts(expr, "( [1-9] [0-9]{0,14} )");
  else if (json_is_number(min) && json_number_value(min) >= 0) tt_buf_puts(expr, "( \"0\" | [1-9] [0-9]{0,14} )");
  else tt_buf_puts(expr, "( \"0\" | \"-\"? [1-9] [0-9]{0,14} )");
  return (tt_len){16, 0};
}

static tt_len tt_gbnf_value(tt_gram *g, tt_buf *expr, const json_t *schema, const char *rule, int depth) {
  const json_t *options = json_object_get(schema, "enum");
  const char *type = json_string_value(json_object_get(schema, "type"));
  const json_t *alts = json_object_get(schema, "anyOf");
  if (json_is_array(alts) && json_array_size(alts) && depth <= TT_MAX_DEPTH) {
    tt_len len = {0, 0};
    tt_buf_puts(expr, "( ");
    size_t i;
    const json_t *alt;
    json_array_foreach(alts, i, alt) {
      tt_buf sub = TT_BUF_INIT;
      tt_buf_printf(&sub, "%s-a%zu", rule, i);
      if (i) tt_buf_puts(expr, " | ");
      len = tt_len_max(len, tt_gbnf_value(g, expr, alt, tt_buf_cstr(&sub), depth));
      tt_buf_free(&sub);
    }
    tt_buf_puts(expr, " )");
    return len;
  }
  if (json_is_array(options) && json_array_size(options)) {
    long longest = 0;
    tt_buf_puts(expr, "( ");
    size_t i;
    const json_t *o;
    json_array_foreach(options, i, o) {
      char *text = tt_json_text(o);
      if (i) tt_buf_puts(expr, " | ");
      tt_gbnf_literal(expr, text);
      if ((long)strlen(text) > longest) longest = (long)strlen(text);
      free(text);
    }
    tt_buf_puts(expr, " )");
    return (tt_len){longest, 0};
  }
  if (!type || depth > TT_MAX_DEPTH) {
    tt_buf_puts(expr, "json-value");
    return (tt_len){TT_ITEM_CHARS + 2, 0};
  }
  if (strcmp(type, "string") == 0) {
    long min = json_integer_value(json_object_get(schema, "minLength")) > 0 ? 1 : 0;
    json_int_t most = json_integer_value(json_object_get(schema, "maxLength"));
    bool shared = depth <= 1;
    long max = shared ? g->string_chars : TT_ITEM_CHARS;
    if (most > 0 && most < max) {
      max = (long)most;
      shared = false;
    }
    const char *pattern = json_string_value(json_object_get(schema, "pattern"));
    if (pattern && strcmp(pattern, TT_LLM_CITED_PATTERN) == 0) tt_gbnf_cited(g, expr, min, max);
    else tt_gbnf_string(g, expr, min, max);
    return shared ? (tt_len){2, 1} : (tt_len){max + 2, 0};
  }
  if (strcmp(type, "integer") == 0) return tt_gbnf_integer(expr, schema);
  if (strcmp(type, "number") == 0) {
    tt_buf_puts(expr, "number");
    return (tt_len){34, 0};
  }
  if (strcmp(type, "boolean") == 0) {
    tt_buf_puts(expr, "( \"true\" | \"false\" )");
    return (tt_len){5, 0};
  }
  if (strcmp(type, "null") == 0) {
    tt_buf_puts(expr, "\"null\"");
    return (tt_len){4, 0};
  }
  if (strcmp(type, "array") == 0) {
    tt_buf item = TT_BUF_INIT, sub = TT_BUF_INIT;
    const json_t *items = json_object_get(schema, "items");
    tt_buf_printf(&sub, "%s-i", rule);
    tt_len one = {TT_ITEM_CHARS + 2, 0};
    if (items) one = tt_gbnf_value(g, &item, items, tt_buf_cstr(&sub), depth + 2);
    else tt_buf_puts(&item, "json-value");
    bool nonempty = json_integer_value(json_object_get(schema, "minItems")) > 0;
    json_int_t most = json_integer_value(json_object_get(schema, "maxItems"));
    long n = most > 0 && most < TT_MAX_ITEMS ? (long)most : TT_MAX_ITEMS;
    tt_buf_printf(expr, "\"[\" %s%s", nonempty ? "" : "( ", tt_buf_cstr(&item));
    if (n > 1) tt_buf_printf(expr, " ( \", \" %s ){0,%ld}", tt_buf_cstr(&item), n - 1);
    tt_buf_printf(expr, "%s \"]\"", nonempty ? "" : " )?");
    tt_buf_free(&item);
    tt_buf_free(&sub);
    return (tt_len){2 + n * (one.fixed + 2), n * one.strings};
  }
  if (strcmp(type, "object") == 0) {
    tt_len len = tt_gbnf_object(g, schema, rule, depth);
    tt_buf_puts(expr, rule);
    return len;
  }
  tt_buf_puts(expr, "json-value");
  return (tt_len){TT_ITEM_CHARS + 2, 0};
}

/* JSON strings as json.dumps(ensure_ascii=False) writes them: raw UTF-8
 * (no controls, no surrogates, nothing above U+10FFFF), and only the
 * escapes it uses; numbers without leading zeros, trailing zeros or
 * exponents; other values of unknown type as scalars. */
static const char tt_gbnf_common[] =
    "char ::= [ !#-\\[\\]-\\uD7FF\\uE000-\\U0010FFFF] | \"\\\\\" ( [\"\\\\bfnrt] | \"u00\" ( \"0\" "
    "[0-7bef] | \"1\" [0-9a-f] ) )\n"
    "number ::= \"-\"? ( \"0\" | [1-9] [0-9]{0,15} ) ( \".\" ( \"0\" | [0-9]{0,15} [1-9] ) )?\n"
    "json-value ::= str-0-64 | number | \"true\" | \"false\" | \"null\"\n";

/* ---- thought and call -------------------------------------------------------------- */

/* The rule "thought": at most chars characters (a '<' and the character
 * after it count as one), see tt_thought. */
static void tt_gbnf_thought(tt_buf *g, const tt_call_shape *shape, long chars) {
  uint32_t open = 0;
  if (!tt_utf8_decode((const unsigned char *)shape->open, strlen(shape->open), &open)) open = 0;
  tt_class any = tt_class_text();
  if (open) tt_class_remove(&any, open, open);
  tt_class edge = any;
  tt_class_remove_space(&edge);
  const char *pair = open == '<' ? " | \"<\" [ =>0-9]" : "", *last_pair = open == '<' ? " | \"<\" [=>0-9]" : "";
  tt_buf_puts(g, "thought-first ::= ");
  tt_class_write(g, &edge);
  tt_buf_printf(g, "%s\nthought-char ::= ", pair);
  tt_class_write(g, &any);
  tt_buf_printf(g, "%s\nthought-last ::= ", pair);
  tt_class_write(g, &edge);
  tt_buf_printf(g, "%s\n", last_pair);
  /* the rest in a rule of its own: llama.cpp refuses "?" after a group
   * that expands into 2,000 rules or more */
  tt_buf_puts(g, "thought ::= thought-first");
  if (chars >= 2) {
    tt_buf_puts(g, " thought-rest?\nthought-rest ::= ");
    if (chars > 2) {
      tt_gbnf_repeat(g, "thought-char", 0, chars - 2);
      tt_buf_putc(g, ' ');
    }
    tt_buf_puts(g, "thought-last");
  }
  tt_buf_putc(g, '\n');
}

char *tt_grammar_for_tools(const tt_tool_spec *tools, size_t n, const char *only,
                           const tt_call_shape *shape, long max_tokens) {
  tt_gram g = {.rules = TT_BUF_INIT};
  tt_buf calls = TT_BUF_INIT;
  size_t alternatives = 0;
  /* the reply's characters: the thought first, the call the rest */
  long budget = (max_tokens - TT_REPLY_SLACK) * TT_CHARS_PER_TOKEN_X2 / 2;
  long thought = shape->thought != TT_THOUGHT_NONE ? shape->thought_chars : 0;
  if (thought > 0) budget -= thought + (long)strlen("<think>\n\n</think>\n\n");
  for (size_t i = 0; i < n; i++) {
    if (only && strcmp(tools[i].name, only) != 0) continue;
    json_t *schema = json_loads(tools[i].parameters, 0, NULL);
    if (!schema) schema = json_object();
    tt_buf rule = TT_BUF_INIT, args = TT_BUF_INIT, head = TT_BUF_INIT;
    tt_buf_printf(&rule, "t%zu", i);
    tt_buf_printf(&g.rules, "# %s: the arguments of ", tt_buf_cstr(&rule));
    tt_rule_name(&g.rules, "", tools[i].name);
    tt_buf_putc(&g.rules, '\n');
    tt_buf_printf(&head, "%s%s%s", shape->open, tools[i].name, shape->mid);
    long frame = (long)(head.len + strlen(shape->close)) + shape->id_chars +
                 (long)(shape->mid_after_id ? strlen(shape->mid_after_id) : 0);
    /* what the arguments take besides their free-length strings, then an
     * equal share of the rest for each of those */
    tt_gram dry = {.rules = TT_BUF_INIT};
    tt_len len = tt_gbnf_value(&dry, &args, schema, tt_buf_cstr(&rule), 0);
    tt_buf_free(&dry.rules);
    tt_buf_reset(&args);
    g.string_chars = TT_MIN_STRING;
    if (len.strings > 0 && (budget - frame - len.fixed) / len.strings > TT_MIN_STRING)
      g.string_chars = (budget - frame - len.fixed) / len.strings;
    tt_gbnf_value(&g, &args, schema, tt_buf_cstr(&rule), 0);
    if (alternatives++) tt_buf_puts(&calls, " | ");
    tt_buf_puts(&calls, "( ");
    tt_gbnf_literal(&calls, tt_buf_cstr(&head));
    if (shape->id_chars > 0) {
      tt_buf_printf(&calls, " [a-zA-Z0-9]{%d} ", shape->id_chars);
      tt_gbnf_literal(&calls, shape->mid_after_id ? shape->mid_after_id : "");
    }
    tt_buf_printf(&calls, " %s ", tt_buf_cstr(&args));
    tt_gbnf_literal(&calls, shape->close);
    tt_buf_puts(&calls, " )");
    json_decref(schema);
    tt_buf_free(&rule);
    tt_buf_free(&args);
    tt_buf_free(&head);
  }
  if (!alternatives) {
    tt_buf_free(&g.rules);
    tt_buf_free(&calls);
    return NULL;
  }
  tt_buf out = TT_BUF_INIT;
  switch (shape->thought) {
  case TT_THOUGHT_NONE: tt_buf_puts(&out, "root ::= call\n"); break;
  case TT_THOUGHT_TEXT: tt_buf_puts(&out, "root ::= ( thought \"\\n\" )? call\n"); break;
  case TT_THOUGHT_THINK:
    /* never empty: see TT_THOUGHT_THINK */
    tt_buf_puts(&out, "root ::= \"<think>\\n\" thought \"\\n</think>\\n\\n\" call\n");
    break;
  }
  tt_buf_printf(&out, "call ::= %s\n", tt_buf_cstr(&calls));
  if (shape->thought != TT_THOUGHT_NONE) tt_gbnf_thought(&out, shape, thought > 0 ? thought : 1);
  tt_buf_puts(&out, tt_buf_cstr(&g.rules));
  if (!tt_gram_has(&g, "str-0-64")) tt_buf_puts(&out, "str-0-64 ::= \"\\\"\" char{0,64} \"\\\"\"\n");
  tt_buf_puts(&out, tt_gbnf_common);
  tt_buf_free(&g.rules);
  tt_buf_free(&calls);
  return tt_buf_detach(&out);
}

char *tt_grammar_for_text(const char *text) {
  tt_buf g = TT_BUF_INIT;
  tt_buf_puts(&g, "root ::= ");
  tt_gbnf_literal(&g, text);
  tt_buf_putc(&g, '\n');
  return tt_buf_detach(&g);
}
