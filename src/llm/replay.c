/* replay.c — a backend that replays a recorded conversation through the
 * embedded engine: each call makes the model write the next recorded tool
 * call (forced by a grammar, every token computed), so that the agent runs
 * as it did and the engine's costs can be measured (`tabletalk bench`). */
#include "llm/llm_internal.h"

#include <stdlib.h>
#include <string.h>

typedef struct tt_replay {
  tt_llm *inner;
  const json_t *calls;
  size_t next;
  bool by_bias, no_grammar;
} tt_replay;

static bool tt_replay_chat(void *impl, const tt_chat *chat, const tt_llm_call *call,
                           tt_llm_reply *out, tt_error *err) {
  tt_replay *r = impl;
  const json_t *c = json_array_get(r->calls, r->next);
  if (!c) {
    /* the agent wants a call the recording lacks: what it answered the
     * last one (a push back, an error) is why */
    const tt_msg *last = chat->n ? &chat->msgs[chat->n - 1] : NULL;
    if (last && last->role == TT_ROLE_TOOL && last->content)
      tt_llm_set_error(err, TT_ERR_PROTOCOL, 0,
                       "the recording has no more calls (%zu used); the agent answered the last "
                       "one with: %.400s", r->next, last->content);
    else
      tt_llm_set_error(err, TT_ERR_PROTOCOL, 0, "the recording has no more calls (%zu used)", r->next);
    return false;
  }
  r->next++;
  char *args = json_dumps(json_object_get(c, "arguments"), JSON_PRESERVE_ORDER);
  tt_llm_call forced = *call;
  forced.force_call_name = json_string_value(json_object_get(c, "name"));
  forced.force_call_args = args ? args : "{}";
  forced.force_by_bias = r->by_bias;
  forced.no_grammar = r->no_grammar;
  bool ok = tt_llm_chat(r->inner, chat, &forced, out, err);
  free(args);
  return ok;
}

static const char *tt_replay_model(const void *impl) { return tt_llm_model(((const tt_replay *)impl)->inner); }

static const tt_profile *tt_replay_profile(const void *impl) {
  const tt_llm *inner = ((const tt_replay *)impl)->inner;
  return inner->vt->profile ? inner->vt->profile(inner->impl) : NULL;
}

/* how much fits is the engine's business */
static long tt_replay_context(const void *impl) { return tt_llm_context(((const tt_replay *)impl)->inner); }

static long tt_replay_max_tokens(const void *impl) {
  const tt_llm *inner = ((const tt_replay *)impl)->inner;
  return inner->vt->max_tokens ? inner->vt->max_tokens(inner->impl) : 0;
}

static long tt_replay_count_prompt(void *impl, const tt_chat *chat, const tt_llm_call *call) {
  return tt_llm_count_prompt(((tt_replay *)impl)->inner, chat, call);
}

static long tt_replay_count_text(void *impl, const char *text, size_t len) {
  return tt_llm_count_text(((tt_replay *)impl)->inner, text, len);
}

static void tt_replay_free(void *impl) { free(impl); }

static const tt_llm_vtable tt_replay_vtable = {
    .name = "replay",
    .chat = tt_replay_chat,
    .model = tt_replay_model,
    .profile = tt_replay_profile,
    .free = tt_replay_free,
    .context = tt_replay_context,
    .max_tokens = tt_replay_max_tokens,
    .count_prompt = tt_replay_count_prompt,
    .count_text = tt_replay_count_text,
    .counts_exact = true, /* it runs only on the embedded engine */
};

tt_llm *tt_llm_replay_new(tt_llm *inner, const json_t *calls, bool by_bias, bool no_grammar) {
  tt_replay *r = tt_xcalloc(1, sizeof *r);
  r->inner = inner;
  r->calls = calls;
  r->by_bias = by_bias;
  r->no_grammar = no_grammar;
  return tt_llm_wrap(&tt_replay_vtable, r);
}
