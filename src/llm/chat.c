/* chat.c — conversations: an append-only list of messages (shortened only
 * to fit a model's context), and their JSON form in the OpenAI
 * chat-completions shape (also how a paused question is stored while it
 * waits for the user's answer). */
#include "llm/llm.h"

#include <stdlib.h>
#include <string.h>

static tt_msg *tt_chat_push(tt_chat *c, tt_role role) {
  if (c->n == c->cap) {
    c->cap = c->cap ? c->cap * 2 : 8;
    c->msgs = tt_xrealloc(c->msgs, c->cap * sizeof(tt_msg));
  }
  tt_msg *m = &c->msgs[c->n++];
  memset(m, 0, sizeof *m);
  m->role = role;
  return m;
}

static char *tt_dup_or_null(const char *s) { return s ? tt_xstrdup(s) : NULL; }

void tt_chat_add(tt_chat *c, tt_role role, const char *content) {
  tt_chat_push(c, role)->content = tt_dup_or_null(content);
}

void tt_chat_add_call(tt_chat *c, const char *call_id, const char *name, const char *args,
                      const char *thought) {
  tt_msg *m = tt_chat_push(c, TT_ROLE_ASSISTANT);
  m->call_id = tt_dup_or_null(call_id);
  m->tool_name = tt_dup_or_null(name);
  m->tool_args = tt_dup_or_null(args);
  m->content = thought && *thought ? tt_xstrdup(thought) : NULL;
}

void tt_chat_add_tool_call(tt_chat *c, const char *call_id, const char *name,
                           const char *args) {
  tt_chat_add_call(c, call_id, name, args, NULL);
}

void tt_chat_add_tool_result(tt_chat *c, const char *call_id, const char *content) {
  tt_msg *m = tt_chat_push(c, TT_ROLE_TOOL);
  m->call_id = tt_dup_or_null(call_id);
  m->content = tt_dup_or_null(content);
}

void tt_chat_free(tt_chat *c) {
  for (size_t i = 0; i < c->n; i++) {
    free(c->msgs[i].content);
    free(c->msgs[i].call_id);
    free(c->msgs[i].tool_name);
    free(c->msgs[i].tool_args);
  }
  free(c->msgs);
  memset(c, 0, sizeof *c);
}

void tt_chat_set_content(tt_chat *c, size_t i, const char *content) {
  if (i >= c->n) return;
  free(c->msgs[i].content);
  c->msgs[i].content = tt_dup_or_null(content);
}

void tt_chat_remove(tt_chat *c, size_t i, size_t n) {
  if (i >= c->n) return;
  if (n > c->n - i) n = c->n - i;
  for (size_t k = i; k < i + n; k++) {
    free(c->msgs[k].content);
    free(c->msgs[k].call_id);
    free(c->msgs[k].tool_name);
    free(c->msgs[k].tool_args);
  }
  memmove(c->msgs + i, c->msgs + i + n, (c->n - i - n) * sizeof(tt_msg));
  c->n -= n;
}

const char *tt_role_name(tt_role role) {
  switch (role) {
  case TT_ROLE_SYSTEM: return "system";
  case TT_ROLE_USER: return "user";
  case TT_ROLE_ASSISTANT: return "assistant";
  case TT_ROLE_TOOL: return "tool";
  }
  return "user";
}

static json_t *tt_jstr(const char *s) { return tt_json_stringn(s, strlen(s)); }

json_t *tt_chat_to_json(const tt_chat *c) {
  json_t *arr = json_array();
  for (size_t i = 0; i < c->n; i++) {
    const tt_msg *m = &c->msgs[i];
    json_t *o = json_object();
    json_object_set_new(o, "role", json_string(tt_role_name(m->role)));
    if (m->role == TT_ROLE_ASSISTANT && m->tool_name) {
      json_object_set_new(o, "content", m->content ? tt_jstr(m->content) : json_null());
      json_t *fn = json_object();
      json_object_set_new(fn, "name", tt_jstr(m->tool_name));
      json_object_set_new(fn, "arguments", tt_jstr(m->tool_args ? m->tool_args : "{}"));
      json_t *call = json_object();
      json_object_set_new(call, "id", tt_jstr(m->call_id ? m->call_id : "call_0"));
      json_object_set_new(call, "type", json_string("function"));
      json_object_set_new(call, "function", fn);
      json_object_set_new(o, "tool_calls", json_pack("[o]", call));
    } else {
      if (m->role == TT_ROLE_TOOL)
        json_object_set_new(o, "tool_call_id", tt_jstr(m->call_id ? m->call_id : "call_0"));
      json_object_set_new(o, "content", tt_jstr(m->content ? m->content : ""));
    }
    json_array_append_new(arr, o);
  }
  return arr;
}

static tt_role tt_role_parse(const char *s, bool *ok) {
  static const char *const names[] = {"system", "user", "assistant", "tool"};
  for (int i = 0; i < 4; i++)
    if (s && strcmp(s, names[i]) == 0) return (tt_role)i;
  *ok = false;
  return TT_ROLE_USER;
}

bool tt_chat_append_json(tt_chat *c, const json_t *arr) {
  if (!json_is_array(arr)) return false;
  size_t i;
  json_t *o;
  json_array_foreach(arr, i, o) {
    bool ok = true;
    tt_role role = tt_role_parse(json_string_value(json_object_get(o, "role")), &ok);
    if (!ok) return false;
    json_t *calls = json_object_get(o, "tool_calls");
    if (role == TT_ROLE_ASSISTANT && json_array_size(calls) > 0) {
      json_t *call = json_array_get(calls, 0), *fn = json_object_get(call, "function");
      tt_chat_add_call(c, json_string_value(json_object_get(call, "id")),
                       json_string_value(json_object_get(fn, "name")),
                       json_string_value(json_object_get(fn, "arguments")),
                       json_string_value(json_object_get(o, "content")));
    } else if (role == TT_ROLE_TOOL) {
      tt_chat_add_tool_result(c, json_string_value(json_object_get(o, "tool_call_id")),
                              json_string_value(json_object_get(o, "content")));
    } else {
      tt_chat_add(c, role, json_string_value(json_object_get(o, "content")));
    }
  }
  return true;
}
