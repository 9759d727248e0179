/* func.c — a backend whose replies come from a function: the way an
 * evaluation harness plugs in a stand-in model (the oracle that answers
 * with gold SQL) without reaching into the llm layer. */
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
} tt_func_llm;

static bool tt_func_chat(void *impl, const tt_chat *chat, const tt_llm_call *call,
                         tt_llm_reply *out, tt_llm_error *err) {
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
