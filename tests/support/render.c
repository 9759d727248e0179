/* render.c — tt-render, the C side of the chat-template tests
 * (tests/templates/check.py): renders a conversation (OpenAI-shaped JSON,
 * tool-call arguments as objects) with a model profile exactly as the
 * embedded engine would, and checks that what a model writes after the
 * generation prompt, parsed and rendered back, gives the same bytes (the
 * condition for reusing the KV cache).
 *
 *   tt-render render PROFILE CONV.json [--template FILE] [--generation]
 *   tt-render generic-json CONV.json      the generic family's messages
 *   tt-render agent DB                    the agent's system prompt and tools
 *   tt-render check-calls PROFILE CONV.json [--template FILE]
 *
 * A call's thought is the message's reasoning_content, else its content. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/agent.h"
#include "llm/llm_internal.h"

static char *tt_read_all(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) {
    fprintf(stderr, "tt-render: cannot open %s\n", path);
    exit(2);
  }
  tt_buf b = TT_BUF_INIT;
  char chunk[65536];
  size_t n;
  while ((n = fread(chunk, 1, sizeof chunk, f)) > 0) tt_buf_append(&b, chunk, n);
  fclose(f);
  return tt_buf_detach(&b);
}

typedef struct tt_conv {
  tt_chat chat;
  tt_tool_spec *tools;
  size_t ntools;
  json_t *doc;
  char **owned;
  size_t nowned;
} tt_conv;

static const char *tt_keep(tt_conv *c, char *s) {
  c->owned = tt_xrealloc(c->owned, (c->nowned + 1) * sizeof(char *));
  c->owned[c->nowned++] = s;
  return s;
}

static void tt_conv_load(tt_conv *c, const char *path) {
  memset(c, 0, sizeof *c);
  json_error_t e;
  c->doc = json_load_file(path, 0, &e);
  if (!c->doc) {
    fprintf(stderr, "tt-render: %s: %s\n", path, e.text);
    exit(2);
  }
  size_t i;
  json_t *m;
  json_array_foreach(json_object_get(c->doc, "messages"), i, m) {
    const char *role = json_string_value(json_object_get(m, "role"));
    const char *content = json_string_value(json_object_get(m, "content"));
    json_t *calls = json_object_get(m, "tool_calls");
    if (json_array_size(calls)) {
      json_t *fn = json_object_get(json_array_get(calls, 0), "function");
      json_t *args = json_object_get(fn, "arguments");
      char *text = json_is_string(args) ? tt_xstrdup(json_string_value(args))
                                        : json_dumps(args, JSON_PRESERVE_ORDER);
      const char *reasoning = json_string_value(json_object_get(m, "reasoning_content"));
      tt_chat_add_call(&c->chat, json_string_value(json_object_get(json_array_get(calls, 0), "id")),
                       json_string_value(json_object_get(fn, "name")), text,
                       reasoning ? reasoning : content);
      free(text);
    } else if (strcmp(role, "tool") == 0) {
      tt_chat_add_tool_result(&c->chat, json_string_value(json_object_get(m, "tool_call_id")), content);
    } else {
      tt_role r = strcmp(role, "system") == 0 ? TT_ROLE_SYSTEM
                  : strcmp(role, "assistant") == 0 ? TT_ROLE_ASSISTANT
                                                   : TT_ROLE_USER;
      tt_chat_add(&c->chat, r, content);
    }
  }
  json_t *tools = json_object_get(c->doc, "tools");
  c->ntools = json_array_size(tools);
  c->tools = tt_xcalloc(c->ntools + 1, sizeof(tt_tool_spec));
  json_t *t;
  json_array_foreach(tools, i, t) {
    json_t *fn = json_object_get(t, "function");
    c->tools[i].name = json_string_value(json_object_get(fn, "name"));
    c->tools[i].description = json_string_value(json_object_get(fn, "description"));
    c->tools[i].parameters =
        tt_keep(c, json_dumps(json_object_get(fn, "parameters"), JSON_PRESERVE_ORDER));
  }
}

static void tt_conv_free(tt_conv *c) {
  tt_chat_free(&c->chat);
  for (size_t i = 0; i < c->nowned; i++) free(c->owned[i]);
  free(c->owned);
  free(c->tools);
  json_decref(c->doc);
}

static const tt_profile *tt_profile_arg(const char *name) {
  const tt_profile *p = tt_profile_by_name(name);
  if (!p) {
    fprintf(stderr, "tt-render: no profile %s (%s)\n", name, tt_llm_profile_names());
    exit(2);
  }
  return p;
}

/* Renders the first n messages; false when the profile cannot. */
static bool tt_render_prefix(const tt_profile *p, const char *tmpl, const tt_conv *c, size_t n,
                             tt_buf *out, size_t *ends) {
  tt_chat part = c->chat;
  part.n = n;
  tt_buf_reset(out);
  return tt_profile_render(p, tmpl, &part, c->tools, c->ntools, out, ends);
}

static int tt_cmd_render(const tt_profile *p, const char *tmpl, const char *path, bool generation) {
  tt_conv c;
  tt_conv_load(&c, path);
  tt_buf out = TT_BUF_INIT;
  size_t *ends = tt_xcalloc(c.chat.n + 1, sizeof(size_t));
  int rc = 0;
  if (tt_render_prefix(p, tmpl, &c, c.chat.n, &out, ends)) {
    size_t len = generation || c.chat.n == 0 ? out.len : ends[c.chat.n - 1];
    fwrite(out.data ? out.data : "", 1, len, stdout);
  } else {
    fprintf(stderr, "tt-render: the profile cannot render %s\n", path);
    rc = 1;
  }
  free(ends);
  tt_buf_free(&out);
  tt_conv_free(&c);
  return rc;
}

static int tt_cmd_generic_json(const char *path) {
  tt_conv c;
  tt_conv_load(&c, path);
  char **roles = tt_xcalloc(c.chat.n + 1, sizeof(char *));
  char **texts = tt_xcalloc(c.chat.n + 1, sizeof(char *));
  tt_profile_generic_messages(&c.chat, c.tools, c.ntools, roles, texts);
  json_t *msgs = json_array();
  for (size_t i = 0; i < c.chat.n; i++) {
    json_array_append_new(msgs, json_pack("{s:s,s:s}", "role", roles[i], "content", texts[i]));
    free(roles[i]);
    free(texts[i]);
  }
  free(roles);
  free(texts);
  json_t *doc = json_pack("{s:o}", "messages", msgs);
  json_dumpf(doc, stdout, JSON_PRESERVE_ORDER | JSON_INDENT(1));
  json_decref(doc);
  tt_conv_free(&c);
  return 0;
}

static int tt_cmd_agent(const char *db_path) {
  tt_error derr;
  tt_db *db = tt_db_open(db_path, NULL, &derr);
  if (!db) {
    fprintf(stderr, "tt-render: %s: %s\n", db_path, derr.message);
    return 1;
  }
  tt_catalog *cat = tt_db_catalog_load(db, &derr);
  if (!cat) {
    fprintf(stderr, "tt-render: %s: %s\n", db_path, derr.message);
    tt_db_close(db);
    return 1;
  }
  tt_schema *schema = tt_schema_new(cat);
  tt_agent_opts o = tt_agent_default_opts();
  tt_agent *a = tt_agent_new(db, schema, NULL, &o);
  size_t n;
  const tt_tool_spec *tools = tt_agent_tools(a, &n);
  json_t *arr = json_array();
  for (size_t i = 0; i < n; i++) {
    json_t *params = json_loads(tools[i].parameters, 0, NULL);
    json_array_append_new(arr, json_pack("{s:s,s:{s:s,s:s,s:o}}", "type", "function", "function",
                                         "name", tools[i].name, "description",
                                         tools[i].description, "parameters", params));
  }
  json_t *doc = json_pack("{s:s,s:o}", "system", tt_agent_system_prompt(a), "tools", arr);
  json_dumpf(doc, stdout, JSON_PRESERVE_ORDER | JSON_INDENT(1));
  json_decref(doc);
  tt_agent_free(a);
  tt_schema_free(schema);
  tt_db_close(db);
  return 0;
}

/* What the model writes for message k (a call): its thought, in the
 * shape's framing, then the call. */
static void tt_written(const tt_profile *p, const tt_msg *m, tt_buf *out) {
  tt_call_shape sh;
  tt_profile_call_shape(p, true, 2048, &sh);
  const char *thought = m->content && *m->content ? m->content : NULL;
  if (sh.thought == TT_THOUGHT_THINK)
    tt_buf_printf(out, "<think>\n%s\n</think>\n\n", thought ? thought : "");
  else if (sh.thought == TT_THOUGHT_TEXT && thought)
    tt_buf_printf(out, "%s\n", thought);
  tt_buf_printf(out, "%s%s%s", sh.open, m->tool_name, sh.mid);
  if (sh.id_chars) tt_buf_printf(out, "%s%s", m->call_id, sh.mid_after_id);
  tt_buf_printf(out, "%s%s", m->tool_args, sh.close);
}

/* For every call in the conversation: the prompt before it, then what the
 * model writes, is a prefix of the prompt after it; and the written text
 * parses back into the same name, arguments, thought and id. */
static int tt_cmd_check_calls(const tt_profile *p, const char *tmpl, const char *path) {
  tt_conv c;
  tt_conv_load(&c, path);
  tt_buf before = TT_BUF_INIT, after = TT_BUF_INIT, written = TT_BUF_INIT;
  size_t *ends = tt_xcalloc(c.chat.n + 2, sizeof(size_t));
  int bad = 0, checked = 0, skipped = 0;
  tt_call_shape sh;
  tt_profile_call_shape(p, true, 2048, &sh);
  for (size_t k = 1; k < c.chat.n; k++) {
    const tt_msg *m = &c.chat.msgs[k];
    if (!m->tool_name) continue;
    if (sh.thought == TT_THOUGHT_THINK && !(m->content && *m->content)) {
      skipped++; /* Qwen3's grammar asks for a thought: its template drops an empty one */
      continue;
    }
    tt_buf_reset(&written);
    tt_written(p, m, &written);
    if (!tt_render_prefix(p, tmpl, &c, k, &before, ends)) {
      fprintf(stderr, "%s: message %zu: cannot render\n", path, k);
      bad++;
      continue;
    }
    checked++;
    tt_buf_append(&before, written.data, written.len);
    /* every later prompt starts with it */
    for (size_t j = k + 1; j <= c.chat.n; j++) {
      if (!tt_render_prefix(p, tmpl, &c, j, &after, ends)) {
        fprintf(stderr, "%s: %zu messages: cannot render\n", path, j);
        bad++;
        break;
      }
      if (before.len <= after.len && memcmp(before.data, after.data, before.len) == 0) continue;
      size_t at = 0;
      while (at < before.len && at < after.len && before.data[at] == after.data[at]) at++;
      fprintf(stderr, "%s: message %zu: prompt + reply is not a prefix of the prompt of %zu "
                      "messages; they differ at byte %zu:\n  prompt+reply: %.80s\n  later prompt: "
                      "%.80s\n",
              path, k, j, at, before.data + at, at < after.len ? after.data + at : "(end)");
      bad++;
      break;
    }
    tt_llm_reply r = {0};
    if (!tt_profile_parse(p, tt_buf_cstr(&written), &r)) {
      fprintf(stderr, "%s: message %zu: the written call does not parse: %s\n", path, k,
              tt_buf_cstr(&written));
      bad++;
    } else {
      const char *want_thought = m->content && *m->content && p->think ? m->content : NULL;
      if (strcmp(r.tool_name, m->tool_name) != 0 || strcmp(r.tool_args, m->tool_args) != 0 ||
          (want_thought ? !r.thinking || strcmp(r.thinking, want_thought) != 0
                        : r.thinking != NULL && *r.thinking) ||
          (r.call_id && strcmp(r.call_id, m->call_id) != 0)) {
        fprintf(stderr, "%s: message %zu: parsed back as %s %s (thought %s)\n", path, k,
                r.tool_name, r.tool_args, r.thinking ? r.thinking : "none");
        bad++;
      }
    }
    tt_llm_reply_free(&r);
  }
  printf("%d calls checked, %d problems", checked, bad);
  if (skipped) printf(", %d without the thought this family always writes skipped", skipped);
  putchar('\n');
  free(ends);
  tt_buf_free(&before);
  tt_buf_free(&after);
  tt_buf_free(&written);
  tt_conv_free(&c);
  return bad ? 1 : 0;
}

int main(int argc, char **argv) {
  if (argc < 3) {
    fputs("usage: tt-render render|check-calls PROFILE CONV.json [--template FILE] "
          "[--generation] | generic-json CONV.json | agent DB\n", stderr);
    return 2;
  }
  const char *cmd = argv[1];
  if (strcmp(cmd, "generic-json") == 0) return tt_cmd_generic_json(argv[2]);
  if (strcmp(cmd, "agent") == 0) return tt_cmd_agent(argv[2]);
  if (argc < 4) return 2;
  const tt_profile *p = tt_profile_arg(argv[2]);
  char *tmpl = NULL;
  bool generation = false;
  for (int i = 4; i < argc; i++) {
    if (strcmp(argv[i], "--template") == 0 && i + 1 < argc) tmpl = tt_read_all(argv[++i]);
    else if (strcmp(argv[i], "--generation") == 0) generation = true;
  }
  int rc = strcmp(cmd, "render") == 0        ? tt_cmd_render(p, tmpl, argv[3], generation)
           : strcmp(cmd, "check-calls") == 0 ? tt_cmd_check_calls(p, tmpl, argv[3])
                                             : 2;
  free(tmpl);
  return rc;
}
