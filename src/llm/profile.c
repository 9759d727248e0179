/* profile.c — model families and how each is prompted: the chat format and
 * tool convention of Qwen2.5 (Hermes <tool_call>), Qwen3 (the same, with a
 * <think> block), Llama 3.1+ (JSON calls with "parameters", results as
 * ipython turns), Mistral ([AVAILABLE_TOOLS], [TOOL_CALLS],
 * [TOOL_RESULTS]) and a generic family that uses the model's own template
 * with tools described in the system message; plus the SQL writers
 * (OmniSQL, XiYanSQL), which keep the single-turn prompt they were trained
 * on. Each renderer writes exactly what the family's official chat
 * template writes for the same messages (tests/templates compares them
 * byte for byte with Jinja2), so that a model sees the prompt it was
 * trained on and every computed token can be reused. */
#define _GNU_SOURCE /* strcasestr */
#include "llm/llm_internal.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "llm/llama_api.h"

static const tt_profile tt_profiles[] = {
    {TT_PROFILE_QWEN25, "qwen2.5", "Qwen2.5 and Hermes-style models: <tool_call> tags", true, false},
    {TT_PROFILE_QWEN3, "qwen3", "Qwen3: <tool_call> tags after a <think> block", true, false},
    {TT_PROFILE_LLAMA31, "llama3.1", "Llama 3.1 and later: JSON calls with \"parameters\"", false,
     false},
    {TT_PROFILE_MISTRAL, "mistral", "Mistral: [TOOL_CALLS] and [TOOL_RESULTS]", false, false},
    {TT_PROFILE_GENERIC, "generic", "any other model: its own chat template, JSON calls", true,
     false},
    {TT_PROFILE_SQL_WRITER, "sql-writer",
     "OmniSQL, XiYanSQL: the single-turn SQL prompt they were trained on", false, true},
};

const tt_profile *tt_profile_by_name(const char *name) {
  for (size_t i = 0; i < sizeof tt_profiles / sizeof tt_profiles[0]; i++)
    if (name && strcasecmp(name, tt_profiles[i].name) == 0) return &tt_profiles[i];
  return NULL;
}

const char *tt_llm_profile_names(void) {
  return "qwen2.5, qwen3, llama3.1, mistral, generic, sql-writer";
}

static const tt_profile *tt_profile_get(tt_profile_id id) {
  for (size_t i = 0; i < sizeof tt_profiles / sizeof tt_profiles[0]; i++)
    if (tt_profiles[i].id == id) return &tt_profiles[i];
  return &tt_profiles[0];
}

static bool tt_contains_nocase(const char *s, const char *what) {
  return s && strcasestr(s, what) != NULL;
}

/* Detection goes by what the template writes, not by its name: the Qwen
 * call ("<tool_call>" then a JSON object with "name"), Qwen3's reasoning on
 * top of it, Llama's ipython turns with "parameters", Mistral's call ids.
 * Templates of other tool formats (XML parameters as in Qwen3-Coder,
 * Functionary) go to the generic family. */
const tt_profile *tt_profile_detect(const char *arch, const char *name, const char *tmpl) {
  /* SQL writers first: their templates are ordinary Qwen ones */
  if (tt_contains_nocase(name, "omnisql") || tt_contains_nocase(name, "xiyan"))
    return tt_profile_get(TT_PROFILE_SQL_WRITER);
  if (!tmpl) /* no template: by architecture, else ChatML as Qwen writes it */
    return tt_profile_get(arch && strcmp(arch, "qwen3") == 0 ? TT_PROFILE_QWEN3 : TT_PROFILE_QWEN25);
  bool other_format = strstr(tmpl, "<function=") != NULL;
  bool qwen_call = strstr(tmpl, "<|im_start|>") && strstr(tmpl, "<tool_call>") &&
                   strstr(tmpl, "{\"name\": ") && !other_format;
  if (qwen_call && strstr(tmpl, "<think>") && strstr(tmpl, "reasoning_content"))
    return tt_profile_get(TT_PROFILE_QWEN3);
  if (qwen_call) return tt_profile_get(TT_PROFILE_QWEN25);
  if (strstr(tmpl, "<|start_header_id|>") && strstr(tmpl, "ipython") &&
      strstr(tmpl, "\"parameters\": ") && !other_format)
    return tt_profile_get(TT_PROFILE_LLAMA31);
  if (strstr(tmpl, "[TOOL_CALLS]") && strstr(tmpl, "[CALL_ID]") && strstr(tmpl, "[SYSTEM_PROMPT]"))
    return tt_profile_get(TT_PROFILE_MISTRAL);
  return tt_profile_get(TT_PROFILE_GENERIC);
}

tt_sql_style tt_profile_sql_style(const char *names) {
  return tt_contains_nocase(names, "xiyan") ? TT_SQL_STYLE_XIYAN : TT_SQL_STYLE_OMNISQL;
}

/* ---- pieces ------------------------------------------------------------------- */

static const char *tt_str(const char *s) { return s ? s : ""; }

/* {"type": "function", "function": {...}} of a tool, as json.dumps writes
 * it (indent 0: on one line). */
static json_t *tt_tool_json(const tt_tool_spec *t) {
  json_t *params = json_loads(t->parameters, 0, NULL);
  return json_pack("{s:s,s:{s:s,s:s,s:o}}", "type", "function", "function", "name", t->name,
                   "description", t->description, "parameters", params ? params : json_object());
}

static void tt_put_json(tt_buf *b, const json_t *j, size_t flags) {
  char *s = json_dumps(j, flags | JSON_PRESERVE_ORDER | JSON_ENCODE_ANY);
  tt_buf_puts(b, s ? s : "null");
  free(s);
}

/* Python's str.strip() of the ASCII whitespace a template trims. */
static void tt_put_trimmed(tt_buf *b, const char *s) {
  s = tt_str(s);
  while (*s && isspace((unsigned char)*s)) s++;
  size_t n = strlen(s);
  while (n && isspace((unsigned char)s[n - 1])) n--;
  tt_buf_append(b, s, n);
}

/* The arguments of a call as the template writes them: what the model
 * generated (canonical json.dumps text, which the grammar enforces). */
static const char *tt_args(const tt_msg *m) { return m->tool_args && *m->tool_args ? m->tool_args : "{}"; }

/* ---- Qwen2.5 and Qwen3 -------------------------------------------------------------- */

static const char tt_qwen_tools_head[] =
    "# Tools\n\nYou may call one or more functions to assist with the user query.\n\nYou are "
    "provided with function signatures within <tools></tools> XML tags:\n<tools>";
static const char tt_qwen_tools_tail[] =
    "\n</tools>\n\nFor each function call, return a json object with function name and arguments "
    "within <tool_call></tool_call> XML tags:\n<tool_call>\n{\"name\": <function-name>, "
    "\"arguments\": <args-json-object>}\n</tool_call><|im_end|>\n";

static void tt_qwen_tools(tt_buf *b, const tt_tool_spec *tools, size_t n) {
  tt_buf_puts(b, tt_qwen_tools_head);
  for (size_t i = 0; i < n; i++) {
    json_t *t = tt_tool_json(&tools[i]);
    tt_buf_putc(b, '\n');
    tt_put_json(b, t, 0);
    json_decref(t);
  }
  tt_buf_puts(b, tt_qwen_tools_tail);
}

static void tt_qwen_call(tt_buf *b, const char *name, const char *args) {
  tt_buf_printf(b, "<tool_call>\n{\"name\": \"%s\", \"arguments\": %s}\n</tool_call>", name, args);
}

/* A user turn that only carries a tool response does not count as the
 * user's query (Qwen3's rule). */
static bool tt_is_query(const tt_msg *m) { return m->role == TT_ROLE_USER; }

static void tt_render_qwen(const tt_profile *p, const tt_chat *chat, const tt_tool_spec *tools,
                           size_t ntools, tt_buf *out, size_t *ends) {
  bool qwen3 = p->id == TT_PROFILE_QWEN3;
  size_t first = 0;
  const tt_msg *sys = chat->n && chat->msgs[0].role == TT_ROLE_SYSTEM ? &chat->msgs[0] : NULL;
  if (ntools) {
    tt_buf_puts(out, "<|im_start|>system\n");
    if (qwen3) {
      if (sys) tt_buf_printf(out, "%s\n\n", tt_str(sys->content));
    } else {
      tt_buf_puts(out, sys ? tt_str(sys->content)
                           : "You are Qwen, created by Alibaba Cloud. You are a helpful assistant.");
      tt_buf_puts(out, "\n\n");
    }
    tt_qwen_tools(out, tools, ntools);
  } else if (sys) {
    tt_buf_printf(out, "<|im_start|>system\n%s<|im_end|>\n", tt_str(sys->content));
  } else if (!qwen3) {
    tt_buf_puts(out, "<|im_start|>system\nYou are Qwen, created by Alibaba Cloud. You are a "
                     "helpful assistant.<|im_end|>\n");
  }
  if (sys) {
    ends[0] = out->len;
    first = 1;
  }
  size_t last_query = chat->n ? chat->n - 1 : 0;
  for (size_t i = chat->n; i > 0; i--)
    if (tt_is_query(&chat->msgs[i - 1])) {
      last_query = i - 1;
      break;
    }
  for (size_t i = first; i < chat->n; i++) {
    const tt_msg *m = &chat->msgs[i];
    if (m->role == TT_ROLE_USER || m->role == TT_ROLE_SYSTEM) {
      tt_buf_printf(out, "<|im_start|>%s\n%s<|im_end|>\n", tt_role_name(m->role), tt_str(m->content));
    } else if (m->role == TT_ROLE_ASSISTANT && !qwen3) {
      if (!m->tool_name) {
        tt_buf_printf(out, "<|im_start|>assistant\n%s<|im_end|>\n", tt_str(m->content));
      } else {
        tt_buf_puts(out, "<|im_start|>assistant");
        if (m->content && *m->content) tt_buf_printf(out, "\n%s", m->content);
        tt_buf_putc(out, '\n');
        tt_qwen_call(out, m->tool_name, tt_args(m));
        tt_buf_puts(out, "<|im_end|>\n");
      }
    } else if (m->role == TT_ROLE_ASSISTANT) { /* Qwen3: a call's content is its reasoning */
      const char *reasoning = m->tool_name ? tt_str(m->content) : "";
      const char *content = m->tool_name ? "" : tt_str(m->content);
      bool last = i + 1 == chat->n;
      tt_buf_puts(out, "<|im_start|>assistant\n");
      if (i > last_query && (last || *reasoning)) {
        tt_buf r = TT_BUF_INIT; /* reasoning.strip('\n') */
        while (*reasoning == '\n') reasoning++;
        size_t n = strlen(reasoning);
        while (n && reasoning[n - 1] == '\n') n--;
        tt_buf_append(&r, reasoning, n);
        while (*content == '\n') content++;
        tt_buf_printf(out, "<think>\n%s\n</think>\n\n%s", tt_buf_cstr(&r), content);
        tt_buf_free(&r);
      } else {
        tt_buf_puts(out, content);
      }
      if (m->tool_name) {
        if (*content) tt_buf_putc(out, '\n');
        tt_qwen_call(out, m->tool_name, tt_args(m));
      }
      tt_buf_puts(out, "<|im_end|>\n");
    } else { /* a tool result */
      bool run_start = i == 0 || chat->msgs[i - 1].role != TT_ROLE_TOOL;
      bool run_end = i + 1 == chat->n || chat->msgs[i + 1].role != TT_ROLE_TOOL;
      if (run_start) tt_buf_puts(out, "<|im_start|>user");
      tt_buf_printf(out, "\n<tool_response>\n%s\n</tool_response>", tt_str(m->content));
      if (run_end) tt_buf_puts(out, "<|im_end|>\n");
    }
    ends[i] = out->len;
  }
  tt_buf_puts(out, "<|im_start|>assistant\n");
  ends[chat->n] = out->len;
}

/* ---- Llama 3.1 ---------------------------------------------------------------------- */

static const char tt_llama_tools_intro[] =
    "Given the following functions, please respond with a JSON for a function call with its "
    "proper arguments that best answers the given prompt.\n\nRespond in the format {\"name\": "
    "function name, \"parameters\": dictionary of argument name and its value}.Do not use "
    "variables.\n\n";

static void tt_render_llama31(const tt_chat *chat, const tt_tool_spec *tools, size_t ntools,
                              tt_buf *out, size_t *ends) {
  tt_buf_puts(out, "<|begin_of_text|><|start_header_id|>system<|end_header_id|>\n\n");
  if (ntools) tt_buf_puts(out, "Environment: ipython\n");
  tt_buf_puts(out, "Cutting Knowledge Date: December 2023\nToday Date: 26 Jul 2024\n\n");
  size_t i = 0;
  if (chat->n && chat->msgs[0].role == TT_ROLE_SYSTEM) {
    tt_put_trimmed(out, chat->msgs[0].content);
    i = 1;
  }
  tt_buf_puts(out, "<|eot_id|>");
  if (i) ends[0] = out->len;
  if (ntools && i < chat->n) { /* the tools go in the first user message */
    tt_buf_puts(out, "<|start_header_id|>user<|end_header_id|>\n\n");
    tt_buf_puts(out, tt_llama_tools_intro);
    for (size_t k = 0; k < ntools; k++) {
      json_t *t = tt_tool_json(&tools[k]);
      tt_put_json(out, t, JSON_INDENT(4));
      json_decref(t);
      tt_buf_puts(out, "\n\n");
    }
    tt_put_trimmed(out, chat->msgs[i].content);
    tt_buf_puts(out, "<|eot_id|>");
    ends[i++] = out->len;
  }
  for (; i < chat->n; i++) {
    const tt_msg *m = &chat->msgs[i];
    if (m->role == TT_ROLE_TOOL) {
      tt_buf_puts(out, "<|start_header_id|>ipython<|end_header_id|>\n\n");
      json_t *s = tt_json_stringn(tt_str(m->content), strlen(tt_str(m->content)));
      tt_put_json(out, s, 0); /* a string is iterable: the template writes it as JSON */
      json_decref(s);
      tt_buf_puts(out, "<|eot_id|>");
    } else if (m->tool_name) {
      tt_buf_printf(out, "<|start_header_id|>assistant<|end_header_id|>\n\n{\"name\": \"%s\", "
                         "\"parameters\": %s}<|eot_id|>", m->tool_name, tt_args(m));
    } else {
      tt_buf_printf(out, "<|start_header_id|>%s<|end_header_id|>\n\n", tt_role_name(m->role));
      tt_put_trimmed(out, m->content);
      tt_buf_puts(out, "<|eot_id|>");
    }
    ends[i] = out->len;
  }
  tt_buf_puts(out, "<|start_header_id|>assistant<|end_header_id|>\n\n");
  ends[chat->n] = out->len;
}

/* ---- Mistral (Small 3.2) ---------------------------------------------------------- */

/* Mistral's call ids are 9 letters and digits: the id given when it has
 * that shape (the model writes them itself), else one made from it. */
static void tt_mistral_id(const char *id, char out[10]) {
  size_t n = id ? strlen(id) : 0, alnum = 0;
  for (size_t i = 0; i < n; i++) alnum += isalnum((unsigned char)id[i]) != 0;
  if (n == 9 && alnum == 9) {
    memcpy(out, id, 10);
    return;
  }
  uint64_t h = tt_fnv1a64(TT_FNV1A64_INIT, id, n);
  static const char digits[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
  for (int i = 0; i < 9; i++) {
    out[i] = digits[h % 62];
    h /= 62;
  }
  out[9] = '\0';
}

static const char tt_mistral_default_system[] =
    "You are Mistral Small 3, a Large Language Model (LLM) created by Mistral AI, a French "
    "startup headquartered in Paris.\nYour knowledge base was last updated on 2023-10-01. The "
    "current date is %s.\n\nWhen you're not sure about some information or when the user's "
    "request requires up-to-date or specific data, you must use the available tools to fetch the "
    "information. Do not hesitate to use tools whenever they can provide a more accurate or "
    "complete response. If no relevant tools are available, then clearly state that you don't "
    "have the information and avoid making up anything.\n\nIf the user's question is not clear, "
    "ambiguous, or does not provide enough context for you to accurately answer the question, you "
    "do not try to answer it right away and you rather ask the user to clarify their request "
    "(e.g. \"What are some good restaurants around me?\" => \"Where are you?\" or \"When is the "
    "next flight to Tokyo\" => \"Where do you travel from?\").\nYou are always very attentive to "
    "dates, and when asked about information at specific dates, you discard information that is "
    "at another date.\nYou follow these instructions in all languages, and always respond to the "
    "user in the language they use or request.\nNext sections describe the capabilities that you "
    "have.\n\n# WEB BROWSING INSTRUCTIONS\n\nYou cannot perform any web search or access internet "
    "to open URLs, links etc. If it seems like the user is expecting you to do so, you clarify the "
    "situation and ask the user to copy paste the text directly in the chat.\n\n# MULTI-MODAL "
    "INSTRUCTIONS\n\nYou have the ability to read images, but you cannot generate images. You "
    "also cannot transcribe audio files or videos.\nYou cannot read nor transcribe audio files or "
    "videos.\n\n# TOOL CALLING INSTRUCTIONS\n\nYou may have access to tools that you can use to "
    "fetch information or perform actions. You must use these tools in the following "
    "situations:\n\n1. When the request requires up-to-date information.\n2. When the request "
    "requires specific data that you do not have in your knowledge base.\n3. When the request "
    "involves actions that you cannot perform without tools.\n\nAlways prioritize using tools to "
    "provide the most accurate and helpful response. If tools are not available, inform the user "
    "that you cannot perform the requested action at the moment.";

/* Mistral's template wants user and assistant turns to alternate (calls
 * and results aside): consecutive user messages (the schema cards, then
 * the question) are joined with a blank line into one [INST] block, which
 * ends where the last of them ends. */
static void tt_render_mistral(const tt_chat *chat, const tt_tool_spec *tools, size_t ntools,
                              tt_buf *out, size_t *ends) {
  size_t first = chat->n && chat->msgs[0].role == TT_ROLE_SYSTEM ? 1 : 0;
  size_t last_user = chat->n;
  for (size_t i = chat->n; i > first; i--)
    if (chat->msgs[i - 1].role == TT_ROLE_USER) {
      last_user = i - 1;
      break;
    }
  /* the first message of the run of user messages that ends at last_user */
  size_t last_run = last_user;
  while (last_run < chat->n && last_run > first && chat->msgs[last_run - 1].role == TT_ROLE_USER)
    last_run--;
  tt_buf_puts(out, "<s>[SYSTEM_PROMPT]");
  if (first) {
    tt_buf_puts(out, tt_str(chat->msgs[0].content));
  } else {
    char today[16];
    time_t now = time(NULL);
    struct tm tm;
    strftime(today, sizeof today, "%Y-%m-%d", localtime_r(&now, &tm));
    tt_buf_printf(out, tt_mistral_default_system, today);
  }
  tt_buf_puts(out, "[/SYSTEM_PROMPT]");
  if (first) ends[0] = out->len;
  for (size_t i = first; i < chat->n; i++) {
    const tt_msg *m = &chat->msgs[i];
    if (m->role == TT_ROLE_USER) {
      bool run_start = i == first || chat->msgs[i - 1].role != TT_ROLE_USER;
      bool run_end = i + 1 == chat->n || chat->msgs[i + 1].role != TT_ROLE_USER;
      if (run_start) {
        if (ntools && i == last_run) {
          tt_buf_puts(out, "[AVAILABLE_TOOLS][");
          for (size_t k = 0; k < ntools; k++) {
            json_t *t = tt_tool_json(&tools[k]);
            if (k) tt_buf_puts(out, ", ");
            tt_put_json(out, t, 0);
            json_decref(t);
          }
          tt_buf_puts(out, "][/AVAILABLE_TOOLS]");
        }
        tt_buf_puts(out, "[INST]");
      } else {
        tt_buf_puts(out, "\n\n");
      }
      tt_buf_puts(out, tt_str(m->content));
      if (run_end) tt_buf_puts(out, "[/INST]");
    } else if (m->role == TT_ROLE_SYSTEM) {
      tt_buf_printf(out, "[SYSTEM_PROMPT]%s[/SYSTEM_PROMPT]", tt_str(m->content));
    } else if (m->tool_name) {
      char id[10];
      tt_mistral_id(m->call_id, id);
      tt_buf_printf(out, "[TOOL_CALLS]%s[CALL_ID]%s[ARGS]%s</s>", m->tool_name, id, tt_args(m));
    } else if (m->role == TT_ROLE_ASSISTANT) {
      tt_buf_printf(out, "%s</s>", tt_str(m->content));
    } else { /* a tool result */
      char id[10];
      tt_mistral_id(m->call_id, id);
      tt_buf_printf(out, "[TOOL_RESULTS]%s[TOOL_CONTENT]%s[/TOOL_RESULTS]", id, tt_str(m->content));
    }
    ends[i] = out->len;
  }
  ends[chat->n] = out->len;
}

/* ---- the generic family: the model's own template -------------------------------------- */

static void tt_generic_system(tt_buf *b, const char *system, const tt_tool_spec *tools, size_t n) {
  tt_buf_puts(b, tt_str(system));
  if (!n) return;
  tt_buf_puts(b, "\n\nTools you can call:");
  for (size_t i = 0; i < n; i++) {
    json_t *t = tt_tool_json(&tools[i]);
    tt_buf_putc(b, '\n');
    tt_put_json(b, t, 0);
    json_decref(t);
  }
  tt_buf_puts(b, "\n\nReply with exactly one JSON object {\"name\": <tool name>, \"arguments\": "
                 "<arguments object>} and nothing else. You may write one short sentence of "
                 "thought on the line before it.");
}

void tt_profile_generic_messages(const tt_chat *chat, const tt_tool_spec *tools, size_t ntools,
                                 char **roles, char **texts) {
  for (size_t i = 0; i < chat->n; i++) {
    const tt_msg *m = &chat->msgs[i];
    tt_buf b = TT_BUF_INIT;
    const char *role = tt_role_name(m->role);
    if (m->role == TT_ROLE_SYSTEM) tt_generic_system(&b, m->content, tools, ntools);
    else if (m->tool_name) {
      if (m->content && *m->content) tt_buf_printf(&b, "%s\n", m->content);
      tt_buf_printf(&b, "{\"name\": \"%s\", \"arguments\": %s}", m->tool_name, tt_args(m));
    } else if (m->role == TT_ROLE_TOOL) {
      tt_buf_printf(&b, "Result of the tool call:\n%s", tt_str(m->content));
      role = "user";
    } else tt_buf_puts(&b, tt_str(m->content));
    roles[i] = tt_xstrdup(role);
    texts[i] = tt_buf_detach(&b);
  }
}

static bool tt_render_generic(const char *tmpl, const tt_chat *chat, const tt_tool_spec *tools,
                              size_t ntools, tt_buf *out, size_t *ends) {
  /* llama.cpp's own formatter: loaded here too, since a prompt can be
   * rendered without an engine (tests/support/render.c) */
  if (!tt_llama_api_get(NULL)) return false;
  struct llama_chat_message *msgs = tt_xcalloc(chat->n + 1, sizeof *msgs);
  char **roles = tt_xcalloc(chat->n + 1, sizeof(char *)), **texts = tt_xcalloc(chat->n + 1, sizeof(char *));
  tt_profile_generic_messages(chat, tools, ntools, roles, texts);
  for (size_t i = 0; i < chat->n; i++) msgs[i] = (struct llama_chat_message){roles[i], texts[i]};
  bool ok = true;
  for (size_t k = 1; k <= chat->n + 1 && ok; k++) {
    size_t nmsg = k <= chat->n ? k : chat->n;
    bool gen = k == chat->n + 1;
    int32_t need = llama_chat_apply_template(tmpl, msgs, nmsg, gen, NULL, 0);
    if (need < 0) {
      ok = false;
      break;
    }
    char *buf = tt_xmalloc((size_t)need + 1);
    llama_chat_apply_template(tmpl, msgs, nmsg, gen, buf, need + 1);
    if (gen) {
      tt_buf_reset(out);
      tt_buf_append(out, buf, (size_t)need);
    }
    ends[k - 1] = (size_t)need;
    free(buf);
  }
  for (size_t i = 0; i < chat->n; i++) {
    free(roles[i]);
    free(texts[i]);
  }
  free(roles);
  free(texts);
  free(msgs);
  return ok;
}

/* ---- the public face inside the layer ------------------------------------------------ */

bool tt_profile_render(const tt_profile *p, const char *tmpl, const tt_chat *chat,
                       const tt_tool_spec *tools, size_t ntools, tt_buf *out, size_t *ends) {
  switch (p->id) {
  case TT_PROFILE_QWEN25:
  case TT_PROFILE_QWEN3:
  case TT_PROFILE_SQL_WRITER: /* its steps are plain ChatML turns (Qwen2.5-based models) */
    tt_render_qwen(p->id == TT_PROFILE_QWEN3 ? p : tt_profile_get(TT_PROFILE_QWEN25), chat, tools,
                   ntools, out, ends);
    return true;
  case TT_PROFILE_LLAMA31: tt_render_llama31(chat, tools, ntools, out, ends); return true;
  case TT_PROFILE_MISTRAL: tt_render_mistral(chat, tools, ntools, out, ends); return true;
  case TT_PROFILE_GENERIC: return tmpl && tt_render_generic(tmpl, chat, tools, ntools, out, ends);
  }
  return false;
}

void tt_profile_call_shape(const tt_profile *p, bool allow_thought, long max_tokens,
                           tt_call_shape *out) {
  memset(out, 0, sizeof *out);
  switch (p->id) {
  case TT_PROFILE_QWEN25:
  case TT_PROFILE_QWEN3:
  case TT_PROFILE_SQL_WRITER:
    out->open = "<tool_call>\n{\"name\": \"";
    out->mid = "\", \"arguments\": ";
    out->close = "}\n</tool_call>";
    break;
  case TT_PROFILE_LLAMA31:
    out->open = "{\"name\": \"";
    out->mid = "\", \"parameters\": ";
    out->close = "}";
    break;
  case TT_PROFILE_MISTRAL:
    out->open = "[TOOL_CALLS]";
    out->mid = "[CALL_ID]";
    out->id_chars = 9;
    out->mid_after_id = "[ARGS]";
    out->close = "";
    break;
  case TT_PROFILE_GENERIC:
    out->open = "{\"name\": \"";
    out->mid = "\", \"arguments\": ";
    out->close = "}";
    break;
  }
  /* Qwen3 always opens its <think> block and writes something in it (its
   * template drops empty blocks from the history, see TT_THOUGHT_THINK);
   * the others may write a line of thought where their template keeps a
   * call's content */
  if (p->id == TT_PROFILE_QWEN3) out->thought = TT_THOUGHT_THINK;
  else if (allow_thought && p->think) out->thought = TT_THOUGHT_TEXT;
  /* a thought may take half the reply, the call the rest */
  out->thought_chars = p->id == TT_PROFILE_QWEN3 ? max_tokens / 2 : max_tokens / 4;
  if (out->thought_chars > 4000) out->thought_chars = 4000;
  if (out->thought_chars < 16) out->thought_chars = 16;
}

void tt_profile_render_call(const tt_profile *p, tt_buf *b, const char *name, const char *args) {
  tt_call_shape sh;
  tt_profile_call_shape(p, false, 1024, &sh);
  /* no thought (not even Qwen3's empty block, which its template would
   * drop from the history): the call alone renders as the history will */
  tt_buf_printf(b, "%s%s%s", sh.open, name, sh.mid);
  if (sh.id_chars) tt_buf_printf(b, "%.*s%s", sh.id_chars, "abcdefghijklmnopqrstuvwxyz", sh.mid_after_id);
  tt_buf_printf(b, "%s%s", args && *args ? args : "{}", sh.close);
}

bool tt_profile_parse(const tt_profile *p, const char *text, tt_llm_reply *out) {
  tt_call_shape sh;
  tt_profile_call_shape(p, true, 1024, &sh);
  const char *call = strstr(text, sh.open);
  if (!call) return false;
  /* the thought before the call, without the separators the shape adds */
  const char *t = text, *te = call;
  if (sh.thought == TT_THOUGHT_THINK && te == t) {
    /* a call without a thought: only a forced (replayed) call is written so */
  } else if (sh.thought == TT_THOUGHT_THINK) {
    if (!tt_has_prefix(t, "<think>\n")) return false;
    t += strlen("<think>\n");
    const char *close = strstr(t, "\n</think>\n\n");
    if (!close || close + strlen("\n</think>\n\n") != call) return false;
    te = close;
  } else if (te > t) {
    if (te[-1] != '\n') return false;
    te--;
  }
  const char *p1 = call + strlen(sh.open);
  const char *q = strstr(p1, sh.mid);
  if (!q) return false;
  const char *args = q + strlen(sh.mid);
  char id[16] = "";
  if (sh.id_chars) {
    if (strlen(args) < (size_t)sh.id_chars || (size_t)sh.id_chars >= sizeof id) return false;
    memcpy(id, args, (size_t)sh.id_chars);
    id[sh.id_chars] = '\0';
    args += sh.id_chars;
    if (!tt_has_prefix(args, sh.mid_after_id)) return false;
    args += strlen(sh.mid_after_id);
  }
  size_t n = strlen(args), tl = strlen(sh.close);
  if (n < tl || strcmp(args + n - tl, sh.close) != 0) return false;
  out->tool_name = tt_xstrndup(p1, (size_t)(q - p1));
  out->tool_args = tt_xstrndup(args, n - tl);
  if (*id) out->call_id = tt_xstrdup(id);
  if (te > t) out->thinking = tt_xstrndup(t, (size_t)(te - t));
  return true;
}
