/* func.c — a backend whose replies come from a function: the way an
 * evaluation harness plugs in a stand-in model (the oracle that answers
 * with gold SQL) without reaching into the llm layer, and tests a model
 * with a small context of their choosing. */
#include "llm/llm_internal.h"

#include <stdlib.h>
#include <string.h>

typedef struct tt_func_llm {
  tt_llm_vtable vt; /* its own table: the backend's name is the caller's */
  char *name, *model;
  tt_llm_reply_fn fn;
  void *ud;
  void (*free_ud)(void *ud);
  unsigned long calls;
  long context, max_tokens; /* tt_llm_func_set_context; 0: unknown */
  tt_count_fn count;        /* NULL: the estimate */
} tt_func_llm;

static bool tt_func_chat(void *impl, const tt_chat *chat, const tt_llm_call *call,
                         tt_llm_reply *out, tt_error *err) {
  tt_func_llm *f = impl;
  double t0 = tt_now_ms();
  bool ok = f->fn(f->ud, chat, call, out, err);
  out->latency_ms = tt_now_ms() - t0;
  out->attempts = 1;
  if (ok && out->is_tool && !out->call_id) out->call_id = tt_xasprintf("call_%lu", ++f->calls);
  if (ok && !out->finish_reason) out->finish_reason = tt_xstrdup(out->is_tool ? "tool_calls" : "stop");
  return ok;
}

static const char *tt_func_model(const void *impl) { return ((const tt_func_llm *)impl)->model; }

static long tt_func_context(const void *impl) { return ((const tt_func_llm *)impl)->context; }

static long tt_func_max_tokens(const void *impl) { return ((const tt_func_llm *)impl)->max_tokens; }

static long tt_func_count_text(void *impl, const char *text, size_t len) {
  tt_func_llm *f = impl;
  return f->count ? f->count(f->ud, text, len) : tt_llm_estimate_text(NULL, text, len);
}

static long tt_func_count_prompt(void *impl, const tt_chat *chat, const tt_llm_call *call) {
  return tt_llm_estimate_prompt(chat, call, tt_func_count_text, impl);
}

static void tt_func_free(void *impl) {
  tt_func_llm *f = impl;
  if (f->free_ud) f->free_ud(f->ud);
  free(f->name);
  free(f->model);
  free(f);
}

tt_llm *tt_llm_func_new(const char *name, const char *model, tt_llm_reply_fn fn, void *ud,
                        void (*free_ud)(void *ud)) {
  static const tt_llm_vtable vt_template = {
      .chat = tt_func_chat, .model = tt_func_model, .free = tt_func_free};
  tt_func_llm *f = tt_xcalloc(1, sizeof *f);
  f->name = tt_xstrdup(name);
  f->model = tt_xstrdup(model);
  f->fn = fn;
  f->ud = ud;
  f->free_ud = free_ud;
  f->vt = vt_template;
  f->vt.name = f->name;
  return tt_llm_wrap(&f->vt, f);
}

void tt_llm_func_set_context(tt_llm *llm, long context, long max_tokens,
                             long (*count)(void *ud, const char *text, size_t len)) {
  if (!llm || llm->vt->chat != tt_func_chat) return;
  tt_func_llm *f = llm->impl;
  f->context = context;
  f->max_tokens = max_tokens;
  f->count = count;
  f->vt.context = tt_func_context;
  f->vt.max_tokens = tt_func_max_tokens;
  f->vt.count_text = tt_func_count_text;
  f->vt.count_prompt = tt_func_count_prompt;
}
