/* textcall.c — tool calls that a model wrote as text instead of as a
 * structured call: what servers hand back as plain content when their
 * parser did not recognise the call (Ollama, which ignores tool_choice; a
 * vLLM or LM Studio parser that failed; a model that wrapped the call in a
 * Markdown block). The shapes: Hermes <tool_call>{...}</tool_call> tags,
 * a ```json fenced block, bare JSON {"name": .., "arguments": ..} (or
 * "parameters", the Llama 3.1 spelling), LM Studio's
 * [TOOL_REQUEST]...[END_TOOL_REQUEST], Mistral's [TOOL_CALLS] and Llama's
 * <|python_tag|>. A call is recovered only for a tool that was offered.
 * Also reasoning written inline (<think>...</think>), kept out of the
 * answer. */
#include "llm/llm.h"

#include <stdlib.h>
#include <string.h>

/* Markers that may stand right before a call, and right after it. */
static const char *const tt_open_marks[] = {"<tool_call>", "[TOOL_REQUEST]", "<|python_tag|>",
                                            "[TOOL_CALLS]", "```json", "```JSON", "```"};
static const char *const tt_close_marks[] = {"</tool_call>", "[END_TOOL_REQUEST]", "<|eom_id|>",
                                             "<|eot_id|>", "```"};

#define TT_TEXTCALL_MAX_TRIES 256           /* JSON parses attempted per text */
#define TT_TEXTCALL_MAX_TEXT (1u << 20)     /* longer text is not searched */

static bool tt_is_space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

/* s[0..n) without white space at either end. */
static void tt_trim(const char **s, size_t *n) {
  while (*n && tt_is_space(**s)) (*s)++, (*n)--;
  while (*n && tt_is_space((*s)[*n - 1])) (*n)--;
}

/* The arguments of a call-shaped value as compact JSON text, or NULL. A
 * string holding a JSON object counts (some models double-encode). */
static char *tt_args_text(const json_t *args) {
  if (json_is_object(args)) return json_dumps(args, JSON_COMPACT);
  if (!json_is_string(args)) return NULL;
  json_t *inner = json_loadb(json_string_value(args), json_string_length(args), 0, NULL);
  char *text = json_is_object(inner) ? json_dumps(inner, JSON_COMPACT) : NULL;
  json_decref(inner);
  return text;
}

/* A value shaped like a call: {"name": N, "arguments"|"parameters": {..}},
 * OpenAI's {"type": "function", "function": {..}}, or an array whose first
 * element is one. name and args are set when N is among tools. */
static bool tt_call_shape(const json_t *v, const tt_tool_spec *tools, size_t n, char **name,
                          char **args) {
  if (json_is_array(v)) return tt_call_shape(json_array_get(v, 0), tools, n, name, args);
  if (!json_is_object(v)) return false;
  const json_t *fn = json_object_get(v, "function");
  if (json_is_object(fn) && !json_object_get(v, "name")) return tt_call_shape(fn, tools, n, name, args);
  const char *tool = json_string_value(json_object_get(v, "name"));
  if (!tool || !tt_tool_find(tools, n, tool)) return false;
  const json_t *a = json_object_get(v, "arguments");
  if (!a) a = json_object_get(v, "parameters");
  char *text = tt_args_text(a);
  if (!text) return false;
  *name = tt_xstrdup(tool);
  *args = text;
  return true;
}

/* Removes one of marks (and the white space around it) from the end of
 * s[0..*n) (at_end) or from its start (else). */
static void tt_strip_mark(const char **s, size_t *n, const char *const *marks, size_t nmarks,
                          bool at_end) {
  tt_trim(s, n);
  for (size_t i = 0; i < nmarks; i++) {
    size_t m = strlen(marks[i]);
    if (*n < m) continue;
    if (at_end && memcmp(*s + *n - m, marks[i], m) == 0) {
      *n -= m;
      break;
    }
    if (!at_end && memcmp(*s, marks[i], m) == 0) {
      *s += m;
      *n -= m;
      break;
    }
  }
  tt_trim(s, n);
}

/* What surrounds a call: the text before and after it, without the
 * markers that wrapped it, joined by a blank line. */
static void tt_rest_text(const char *text, size_t start, size_t end, size_t len, tt_buf *rest) {
  const char *before = text;
  size_t nb = start;
  tt_strip_mark(&before, &nb, tt_open_marks, sizeof tt_open_marks / sizeof *tt_open_marks, true);
  const char *after = text + end;
  size_t na = len - end;
  tt_strip_mark(&after, &na, tt_close_marks, sizeof tt_close_marks / sizeof *tt_close_marks, false);
  tt_buf_append(rest, before, nb);
  if (nb && na) tt_buf_puts(rest, "\n\n");
  tt_buf_append(rest, after, na);
}

/* Could a JSON value that starts at p be a call ({ "..." or [ {)? */
static bool tt_may_start_call(const char *p, const char *end) {
  char open = *p++;
  while (p < end && tt_is_space(*p)) p++;
  return p < end && (open == '{' ? *p == '"' : *p == '{');
}

bool tt_text_find_call(const char *text, const tt_tool_spec *tools, size_t ntools, char **name,
                       char **args, tt_buf *rest) {
  *name = *args = NULL;
  size_t len = text ? strlen(text) : 0;
  if (!ntools || len > TT_TEXTCALL_MAX_TEXT) return false;
  int tries = 0;
  for (size_t i = 0; i < len && tries < TT_TEXTCALL_MAX_TRIES; i++) {
    if ((text[i] != '{' && text[i] != '[') || !tt_may_start_call(text + i, text + len)) continue;
    tries++;
    json_error_t jerr;
    json_t *v = json_loadb(text + i, len - i, JSON_DISABLE_EOF_CHECK, &jerr);
    bool found = v && tt_call_shape(v, tools, ntools, name, args);
    json_decref(v);
    if (!found) continue;
    tt_rest_text(text, i, i + (size_t)jerr.position, len, rest);
    return true;
  }
  return false;
}

/* text has "key" followed by a colon: a JSON member, not a quoted word. */
static bool tt_has_json_key(const char *text, const char *key) {
  size_t n = strlen(key);
  for (const char *p = strstr(text, key); p; p = strstr(p + n, key)) {
    const char *q = p + n;
    while (tt_is_space(*q)) q++;
    if (*q == ':') return true;
  }
  return false;
}

bool tt_text_looks_like_call(const char *text) {
  if (!text) return false;
  static const char *const tags[] = {"<tool_call>", "[TOOL_REQUEST]", "<|python_tag|>",
                                     "[TOOL_CALLS]", "```json", "```JSON"};
  for (size_t i = 0; i < sizeof tags / sizeof *tags; i++)
    if (strstr(text, tags[i])) return true;
  if (tt_has_json_key(text, "\"arguments\"") || tt_has_json_key(text, "\"parameters\"")) return true;
  const char *s = text;
  size_t n = strlen(text);
  tt_trim(&s, &n);
  if (n >= 3 && strncmp(s, "```", 3) == 0) { /* a fenced block of JSON */
    const char *nl = memchr(s, '\n', n);
    if (nl) {
      n -= (size_t)(nl + 1 - s);
      s = nl + 1;
      tt_trim(&s, &n);
    }
  }
  return n && (s[0] == '{' || s[0] == '[');
}

void tt_text_split_thinking(const char *text, tt_buf *thinking, tt_buf *answer) {
  const char *s = text ? text : "";
  size_t n = strlen(s);
  const char *open = strstr(s, "<think>"), *close = strstr(s, "</think>");
  const char *lead = s;
  size_t nlead = open ? (size_t)(open - s) : 0;
  tt_trim(&lead, &nlead);
  if (close && (!open || (nlead == 0 && open < close))) {
    /* <think>..</think> first, or a lone </think> (the template opened it) */
    const char *t = open && open < close ? open + 7 : s;
    size_t nt = (size_t)(close - t);
    tt_trim(&t, &nt);
    tt_buf_append(thinking, t, nt);
    const char *rest = close + 8;
    size_t nr = n - (size_t)(rest - s);
    tt_trim(&rest, &nr);
    tt_buf_append(answer, rest, nr);
    return;
  }
  if (open && nlead == 0) { /* cut while still thinking: nothing is an answer */
    const char *t = open + 7;
    size_t nt = n - (size_t)(t - s);
    tt_trim(&t, &nt);
    tt_buf_append(thinking, t, nt);
    return;
  }
  tt_buf_append(answer, s, n);
}
