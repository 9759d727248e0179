/* grammar.c — a GBNF grammar that admits exactly one tool call among the
 * tools offered, with arguments that fit each tool's JSON schema, for the
 * embedded engine. Strings are ASCII with \uXXXX escapes for everything
 * else, so the output is valid UTF-8 whatever tokens the model picks, and
 * every repetition is bounded so that even a random model finishes. */
#include "llm/llm_internal.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#define TT_MAX_STRING 1500  /* characters in one string value */
#define TT_MAX_ITEM_STRING 64 /* characters of a string inside an array (column names) */
#define TT_MAX_ITEMS 20     /* items in one array */

/* Every character costs at least one token, so bounding each string by a
 * share of the token budget guarantees that even a model that never wants
 * to close a string finishes its call within max_tokens. */
typedef struct tt_gbnf_ctx {
  int string_chars; /* bound for a top-level string value */
} tt_gbnf_ctx;

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

/* A rule name made of letters, digits and dashes. */
static void tt_rule_name(tt_buf *out, const char *prefix, const char *name) {
  tt_buf_puts(out, prefix);
  for (const char *p = name; *p; p++) tt_buf_putc(out, isalnum((unsigned char)*p) ? (char)tolower((unsigned char)*p) : '-');
}

static void tt_gbnf_value(tt_buf *rules, tt_buf *expr, const json_t *schema, const char *rule, int depth,
                          const tt_gbnf_ctx *gc);

/* {"a": A, "b": B} with the required members first, in schema order, then
 * the optional ones, each optional. */
static void tt_gbnf_object(tt_buf *rules, tt_buf *expr, const json_t *schema, const char *rule, int depth,
                           const tt_gbnf_ctx *gc) {
  const json_t *props = json_object_get(schema, "properties");
  const json_t *required = json_object_get(schema, "required");
  tt_buf_puts(expr, "\"{\" ");
  bool first = true;
  for (int pass = 0; pass < 2; pass++) {
    const char *key;
    const json_t *ps;
    json_object_foreach((json_t *)props, key, ps) {
      bool is_req = false;
      size_t i;
      const json_t *r;
      json_array_foreach(required, i, r) is_req |= json_is_string(r) && strcmp(json_string_value(r), key) == 0;
      if ((pass == 0) != is_req) continue;
      tt_buf sub = TT_BUF_INIT;
      tt_buf_printf(&sub, "%s-", rule);
      tt_rule_name(&sub, "", key);
      tt_buf val = TT_BUF_INIT;
      tt_gbnf_value(rules, &val, ps, tt_buf_cstr(&sub), depth + 1, gc);
      tt_buf member = TT_BUF_INIT;
      tt_buf quoted = TT_BUF_INIT;
      tt_buf_printf(&quoted, "%s\"%s\": ", first ? "" : ", ", key);
      tt_gbnf_literal(&member, tt_buf_cstr(&quoted));
      tt_buf_printf(&member, " %s", tt_buf_cstr(&val));
      if (is_req) tt_buf_printf(expr, "%s ", tt_buf_cstr(&member));
      else tt_buf_printf(expr, "( %s )? ", tt_buf_cstr(&member));
      first = false; /* an optional member after none is written is rare in our tools */
      tt_buf_free(&sub);
      tt_buf_free(&val);
      tt_buf_free(&member);
      tt_buf_free(&quoted);
    }
  }
  tt_buf_puts(expr, "\"}\"");
}

static void tt_gbnf_value(tt_buf *rules, tt_buf *expr, const json_t *schema, const char *rule, int depth,
                          const tt_gbnf_ctx *gc) {
  const json_t *options = json_object_get(schema, "enum");
  const char *type = json_string_value(json_object_get(schema, "type"));
  const json_t *alts = json_object_get(schema, "anyOf");
  if (json_is_array(alts) && json_array_size(alts) && depth <= 4) {
    tt_buf_puts(expr, "( ");
    size_t i;
    const json_t *alt;
    json_array_foreach(alts, i, alt) {
      tt_buf sub = TT_BUF_INIT;
      tt_buf_printf(&sub, "%s-alt%zu", rule, i);
      if (i) tt_buf_puts(expr, " | ");
      tt_gbnf_value(rules, expr, alt, tt_buf_cstr(&sub), depth + 1, gc);
      tt_buf_free(&sub);
    }
    tt_buf_puts(expr, " )");
  } else if (json_is_array(options) && json_array_size(options)) {
    tt_buf_puts(expr, "( ");
    size_t i;
    const json_t *o;
    json_array_foreach(options, i, o) {
      char *text = json_dumps(o, JSON_ENCODE_ANY | JSON_COMPACT);
      if (i) tt_buf_puts(expr, " | ");
      tt_gbnf_literal(expr, text ? text : "null");
      free(text);
    }
    tt_buf_puts(expr, " )");
  } else if (!type || depth > 4) {
    tt_buf_puts(expr, "json-value");
  } else if (strcmp(type, "string") == 0) {
    int chars = depth > 1 ? TT_MAX_ITEM_STRING : gc->string_chars;
    bool nonempty = json_integer_value(json_object_get(schema, "minLength")) > 0;
    tt_buf_printf(expr, "\"\\\"\" char{%d,%d} \"\\\"\"", nonempty ? 1 : 0, chars);
  } else if (strcmp(type, "integer") == 0) {
    tt_buf_puts(expr, "integer");
  } else if (strcmp(type, "number") == 0) {
    tt_buf_puts(expr, "number");
  } else if (strcmp(type, "boolean") == 0) {
    tt_buf_puts(expr, "( \"true\" | \"false\" )");
  } else if (strcmp(type, "array") == 0) {
    tt_buf item = TT_BUF_INIT;
    const json_t *items = json_object_get(schema, "items");
    tt_buf sub = TT_BUF_INIT;
    tt_buf_printf(&sub, "%s-item", rule);
    if (items) tt_gbnf_value(rules, &item, items, tt_buf_cstr(&sub), depth + 2, gc);
    else tt_buf_puts(&item, "json-value");
    bool nonempty = json_integer_value(json_object_get(schema, "minItems")) > 0;
    json_int_t most = json_integer_value(json_object_get(schema, "maxItems"));
    int items_max = most > 0 && most < TT_MAX_ITEMS ? (int)most : TT_MAX_ITEMS;
    tt_buf_printf(expr, "\"[\" %s%s ( \", \" %s ){0,%d}%s \"]\"", nonempty ? "" : "( ",
                  tt_buf_cstr(&item), tt_buf_cstr(&item), items_max - 1, nonempty ? "" : " )?");
    tt_buf_free(&item);
    tt_buf_free(&sub);
  } else if (strcmp(type, "object") == 0) {
    tt_buf body = TT_BUF_INIT;
    tt_gbnf_object(rules, &body, schema, rule, depth, gc);
    tt_buf_printf(rules, "%s ::= %s\n", rule, tt_buf_cstr(&body));
    tt_buf_puts(expr, rule);
    tt_buf_free(&body);
  } else {
    tt_buf_puts(expr, "json-value");
  }
}

/* JSON strings as ASCII; \u escapes for everything else, but no C0 control
 * characters and no lone surrogates (a pair is fine); JSON numbers without
 * leading zeros. */
static const char tt_gbnf_common[] =
    "char ::= [ !#-\\[\\]-~] | \"\\\\\" ( [\"\\\\/bfnrt] | \"u\" esc-u )\n"
    "esc-u ::= \"00\" [2-9a-fA-F] hex | \"0\" [1-9a-fA-F] hex hex | [1-9a-cA-Ce-fE-F] hex hex hex"
    " | [dD] [0-7] hex hex | [dD] [89abAB] hex hex \"\\\\u\" [dD] [c-fC-F] hex hex\n"
    "hex ::= [0-9a-fA-F]\n"
    "string ::= \"\\\"\" char{0,64} \"\\\"\"\n"
    "digits ::= \"0\" | [1-9] [0-9]{0,14}\n"
    "integer ::= \"-\"? digits\n"
    "number ::= \"-\"? digits ( \".\" [0-9]{1,10} )?\n"
    "json-value ::= string | number | \"true\" | \"false\" | \"null\"\n";

/* Top-level string members and array members of a tool's arguments. */
static int tt_count_members(const json_t *schema, const char *want) {
  int n = 0;
  const char *key;
  const json_t *ps;
  json_object_foreach((json_t *)json_object_get(schema, "properties"), key, ps) {
    const char *type = json_string_value(json_object_get(ps, "type"));
    if (type && strcmp(type, want) == 0 && !json_object_get(ps, "enum")) n++;
  }
  return n;
}

char *tt_grammar_for_tools(const tt_tool_spec *tools, size_t n, const char *only,
                           const tt_call_shape *shape, long max_tokens) {
  tt_buf rules = TT_BUF_INIT, calls = TT_BUF_INIT;
  size_t alternatives = 0;
  for (size_t i = 0; i < n; i++) {
    if (only && strcmp(tools[i].name, only) != 0) continue;
    json_t *schema = json_loads(tools[i].parameters, 0, NULL);
    tt_buf rule = TT_BUF_INIT, args = TT_BUF_INIT, head = TT_BUF_INIT;
    tt_rule_name(&rule, "args-", tools[i].name);
    /* what the call's own syntax, arrays and numbers may take, then a share
     * of the rest for each string */
    int arrays = schema ? tt_count_members(schema, "array") : 0;
    int strings = schema ? tt_count_members(schema, "string") : 0;
    long budget = max_tokens - 64 - (long)arrays * TT_MAX_ITEMS * (TT_MAX_ITEM_STRING + 4);
    tt_gbnf_ctx gc = {.string_chars = TT_MAX_STRING};
    if (strings && budget / strings < gc.string_chars)
      gc.string_chars = budget / strings > 16 ? (int)(budget / strings) : 16;
    tt_gbnf_value(&rules, &args, schema ? schema : json_object(), tt_buf_cstr(&rule), 0, &gc);
    tt_buf_printf(&head, "%s%s%s", shape->open, tools[i].name, shape->mid);
    if (alternatives++) tt_buf_puts(&calls, " | ");
    tt_buf_puts(&calls, "( ");
    tt_gbnf_literal(&calls, tt_buf_cstr(&head));
    if (shape->id_chars > 0) {
      tt_buf_printf(&calls, " [a-zA-Z0-9]{%d,%d} ", shape->id_chars, shape->id_chars);
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
    tt_buf_free(&rules);
    tt_buf_free(&calls);
    return NULL;
  }
  tt_buf g = TT_BUF_INIT;
  tt_buf_puts(&g, "root ::= call\n");
  tt_buf_printf(&g, "call ::= %s\n", tt_buf_cstr(&calls));
  tt_buf_puts(&g, tt_buf_cstr(&rules));
  tt_buf_puts(&g, tt_gbnf_common);
  tt_buf_free(&rules);
  tt_buf_free(&calls);
  return tt_buf_detach(&g);
}

char *tt_grammar_for_text(const char *text) {
  tt_buf g = TT_BUF_INIT;
  tt_buf_puts(&g, "root ::= ");
  tt_gbnf_literal(&g, text);
  tt_buf_putc(&g, '\n');
  return tt_buf_detach(&g);
}
