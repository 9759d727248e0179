/* textcall.c — tool calls that a model wrote as text instead of as a
 * structured call: what servers hand back as plain content when their
 * parser did not recognise the call (Ollama, which ignores tool_choice; a
 * vLLM or LM Studio parser that failed; a model that wrapped the call in a
 * Markdown block). The shapes: Hermes <tool_call>{...}</tool_call> tags,
 * a ```json fenced block, bare JSON {"name": .., "arguments": ..} (or
 * "parameters", the Llama 3.1 spelling), LM Studio's
 * [TOOL_REQUEST]...[END_TOOL_REQUEST], Mistral's [TOOL_CALLS] and Llama's
 * <|python_tag|>; and the shapes that name the tool outside the JSON:
 * <function=NAME>{..}</function> (Llama 3.1), Qwen3-Coder's
 * <function=NAME><parameter=K>V</parameter></function>, gpt-oss (harmony)
 * "to=functions.NAME ..<|message|>{..}<|call|>", Mistral's
 * [TOOL_CALLS]NAME[ARGS]{..} and ReAct's "Action: NAME / Action Input: {..}".
 * A call is recovered only for a tool that was offered.
 * Also reasoning written inline (<think>...</think>), kept out of the
 * answer. */
#include "llm/llm.h"

#include <stdlib.h>
#include <string.h>

/* Markers that may stand right before a call, and right after it. */
static const char *const tt_open_marks[] = {"<tool_call>", "[TOOL_REQUEST]", "<|python_tag|>",
                                            "[TOOL_CALLS]", "```json", "```JSON", "```"};
static const char *const tt_close_marks[] = {"</tool_call>", "[END_TOOL_REQUEST]", "<|eom_id|>",
                                             "<|eot_id|>", "</function>", "<|call|>", "```"};

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

static bool tt_is_ident(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '-';
}

/* Marks right before a tool's name whose arguments follow the name. */
static const char *const tt_name_marks[] = {"<function=", "to=functions.", "[TOOL_CALLS]", "Action:"};
#define TT_NAMED_GAP 48 /* at most this many bytes from the name to its arguments' { */

/* Is the property key of the tool's schema a string? */
static bool tt_param_is_string(const tt_tool_spec *tool, const char *key) {
  json_t *schema = json_loads(tool->parameters ? tool->parameters : "", 0, NULL);
  const json_t *prop = json_object_get(json_object_get(schema, "properties"), key);
  const char *type = json_string_value(json_object_get(prop, "type"));
  bool str = !type || strcmp(type, "string") == 0;
  json_decref(schema);
  return str;
}

/* Qwen3-Coder's <parameter=K>V</parameter>... up to </function>, from p, as
 * an object (a value is a string unless the schema types it otherwise and it
 * reads as JSON); *stop is set after </function>. NULL when not that shape. */
static json_t *tt_xml_params(const char *p, const char *end, const tt_tool_spec *tool,
                             const char **stop) {
  json_t *obj = json_object();
  for (;;) {
    while (p < end && tt_is_space(*p)) p++;
    if ((size_t)(end - p) < 11 || strncmp(p, "<parameter=", 11) != 0) break;
    const char *k = p + 11;
    const char *gt = memchr(k, '>', (size_t)(end - k));
    if (!gt) break;
    const char *v = gt + 1;
    const char *close = NULL;
    for (const char *c = v; c + 12 <= end; c++)
      if (strncmp(c, "</parameter>", 12) == 0) { close = c; break; }
    if (!close) break;
    size_t nk = (size_t)(gt - k), nv = (size_t)(close - v);
    tt_trim(&k, &nk);
    tt_trim(&v, &nv);
    char *key = tt_xasprintf("%.*s", (int)nk, k);
    json_t *val = NULL;
    if (!tt_param_is_string(tool, key)) val = json_loadb(v, nv, JSON_DECODE_ANY, NULL);
    json_object_set_new(obj, key, val ? val : json_stringn(v, nv));
    free(key);
    p = close + 12;
  }
  if (!json_object_size(obj) || (size_t)(end - p) < 11 || strncmp(p, "</function>", 11) != 0) {
    json_decref(obj);
    return NULL;
  }
  *stop = p + 11;
  return obj;
}

/* The earliest call written as a mark, an offered tool's name, then its
 * arguments (a JSON object within TT_NAMED_GAP bytes, or Qwen3-Coder's
 * parameters). [*start, *end) is the call's text. */
static bool tt_find_named_call(const char *text, size_t len, const tt_tool_spec *tools, size_t n,
                               char **name, char **args, size_t *start, size_t *end) {
  const char *const tend = text + len;
  bool found = false;
  for (size_t m = 0; m < sizeof tt_name_marks / sizeof *tt_name_marks; m++) {
    size_t ml = strlen(tt_name_marks[m]);
    for (const char *p = strstr(text, tt_name_marks[m]); p; p = strstr(p + ml, tt_name_marks[m])) {
      if (found && (size_t)(p - text) >= *start) break;
      const char *id = p + ml;
      while (id < tend && (*id == ' ' || *id == '\t')) id++;
      const char *q = id;
      while (q < tend && tt_is_ident(*q)) q++;
      char tool[64];
      if (q == id || (size_t)(q - id) >= sizeof tool) continue;
      memcpy(tool, id, (size_t)(q - id));
      tool[q - id] = '\0';
      const tt_tool_spec *spec = tt_tool_find(tools, n, tool);
      if (!spec) continue;
      const char *stop = NULL;
      json_t *v = *q == '>' ? tt_xml_params(q + 1, tend, spec, &stop) : NULL;
      if (!v) {
        size_t gap = (size_t)(tend - q) < TT_NAMED_GAP ? (size_t)(tend - q) : TT_NAMED_GAP;
        const char *brace = memchr(q, '{', gap);
        json_error_t jerr;
        v = brace ? json_loadb(brace, (size_t)(tend - brace), JSON_DISABLE_EOF_CHECK, &jerr) : NULL;
        if (v) stop = brace + jerr.position;
      }
      if (!json_is_object(v)) {
        json_decref(v);
        continue;
      }
      if (found) {
        free(*name);
        free(*args);
      }
      *name = tt_xstrdup(tool);
      *args = json_dumps(v, JSON_COMPACT);
      *start = (size_t)(p - text);
      *end = (size_t)(stop - text);
      json_decref(v);
      found = true;
      break;
    }
  }
  return found;
}

/* The bytes a raw control character inside a JSON string takes once
 * escaped (0 outside strings or for other bytes); *in_str and *esc carry
 * the scan's state. */
static size_t tt_ctl_escape(unsigned char c, bool *in_str, bool *esc, char out[7]) {
  if (!*in_str) {
    *in_str = c == '"';
    return 0;
  }
  if (*esc) {
    *esc = false;
    return 0;
  }
  if (c == '\\') *esc = true;
  else if (c == '"') *in_str = false;
  if (c >= 0x20) return 0;
  if (c == '\n' || c == '\r' || c == '\t') {
    out[0] = '\\';
    out[1] = c == '\n' ? 'n' : c == '\r' ? 'r' : 't';
    return 2;
  }
  snprintf(out, 7, "\\u%04x", c);
  return 6;
}

/* A JSON value at s, as jansson reads it; failing that, as the same text
 * with raw control characters inside strings escaped (models write a
 * multi-line SQL string so). *used is how many bytes of s it took. */
static json_t *tt_load_value(const char *s, size_t n, size_t *used) {
  json_error_t jerr;
  json_t *v = json_loadb(s, n, JSON_DISABLE_EOF_CHECK, &jerr);
  if (v) {
    *used = (size_t)jerr.position;
    return v;
  }
  /* jansson's words for a raw control character in a string */
  if (!strstr(jerr.text, "control character") && !strstr(jerr.text, "unexpected newline")) return NULL;
  tt_buf b = TT_BUF_INIT;
  bool in_str = false, esc = false, changed = false;
  char e[7];
  for (size_t i = 0; i < n; i++) {
    size_t k = tt_ctl_escape((unsigned char)s[i], &in_str, &esc, e);
    if (k) tt_buf_append(&b, e, k);
    else tt_buf_append(&b, s + i, 1);
    changed |= k > 0;
  }
  v = changed ? json_loadb(b.data, b.len, JSON_DISABLE_EOF_CHECK, &jerr) : NULL;
  if (v) { /* where the value ended, in s's bytes */
    size_t out = 0, i = 0;
    in_str = esc = false;
    while (i < n && out < (size_t)jerr.position) {
      size_t k = tt_ctl_escape((unsigned char)s[i++], &in_str, &esc, e);
      out += k ? k : 1;
    }
    *used = i;
  }
  tt_buf_free(&b);
  return v;
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
    size_t used = 0;
    json_t *v = tt_load_value(text + i, len - i, &used);
    bool found = v && tt_call_shape(v, tools, ntools, name, args);
    json_decref(v);
    if (!found) continue;
    tt_rest_text(text, i, i + used, len, rest);
    return true;
  }
  size_t start, end;
  if (!tt_find_named_call(text, len, tools, ntools, name, args, &start, &end)) return false;
  tt_rest_text(text, start, end, len, rest);
  return true;
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
                                     "[TOOL_CALLS]", "```json", "```JSON", "<function=",
                                     "to=functions.", "<|channel|>", "<|message|>", "<|call|>",
                                     "```tool_code", "```tool_call", "Action Input:"};
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

/* After NAME(: a quoted value, ), or a keyword argument (k=), as code has;
 * not prose such as "answer(s)". */
static bool tt_call_args_follow(const char *p) {
  while (tt_is_space(*p)) p++;
  if (*p == '"' || *p == '\'' || *p == ')') return true;
  const char *q = p;
  while (tt_is_ident(*q)) q++;
  while (q > p && tt_is_space(*q)) q++;
  return q > p && *q == '=' && q[1] != '=';
}

bool tt_text_names_tool_call(const char *text, const tt_tool_spec *tools, size_t ntools) {
  for (size_t t = 0; text && t < ntools; t++) {
    size_t n = strlen(tools[t].name);
    for (const char *p = strstr(text, tools[t].name); p; p = strstr(p + n, tools[t].name))
      if ((p == text || !tt_is_ident(p[-1])) && p[n] == '(' && tt_call_args_follow(p + n + 1))
        return true;
  }
  return false;
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
