/* llm.c — the backend-independent part of the llm layer: dispatch through
 * the backend table, replies and error names. */
#include "llm/llm_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

tt_llm *tt_llm_wrap(const tt_llm_vtable *vt, void *impl) {
  tt_llm *l = tt_xcalloc(1, sizeof *l);
  l->vt = vt;
  l->impl = impl;
  return l;
}

bool tt_llm_chat(tt_llm *llm, const tt_chat *chat, const tt_llm_call *call,
                 tt_llm_reply *out, tt_error *err) {
  memset(out, 0, sizeof *out);
  tt_error_clear(err);
  return llm->vt->chat(llm->impl, chat, call, out, err);
}

const char *tt_llm_backend(const tt_llm *llm) { return llm->vt->name; }

bool tt_llm_parallel(const tt_llm *llm) { return llm && llm->vt->parallel; }

const char *tt_llm_model(const tt_llm *llm) { return llm->vt->model(llm->impl); }

static const tt_profile *tt_llm_profile_of(const tt_llm *llm) {
  return llm && llm->vt->profile ? llm->vt->profile(llm->impl) : NULL;
}

const char *tt_llm_profile(const tt_llm *llm) {
  const tt_profile *p = tt_llm_profile_of(llm);
  return p ? p->name : NULL;
}

const char *tt_llm_profile_summary(const tt_llm *llm) {
  const tt_profile *p = tt_llm_profile_of(llm);
  return p ? p->summary : NULL;
}

bool tt_llm_is_sql_writer(const tt_llm *llm) {
  const tt_profile *p = tt_llm_profile_of(llm);
  return p && p->sql_writer;
}

tt_sql_style tt_llm_sql_style(const tt_llm *llm) {
  if (!tt_llm_is_sql_writer(llm)) return TT_SQL_STYLE_NONE;
  const char *names = llm->vt->names ? llm->vt->names(llm->impl) : tt_llm_model(llm);
  return tt_profile_sql_style(names);
}

bool tt_llm_profile_known(const char *name) { return tt_profile_by_name(name) != NULL; }

void tt_llm_free(tt_llm *llm) {
  if (!llm) return;
  llm->vt->free(llm->impl);
  free(llm);
}

void tt_llm_reply_free(tt_llm_reply *r) {
  if (!r) return;
  free(r->tool_name);
  free(r->tool_args);
  free(r->call_id);
  free(r->text);
  free(r->thinking);
  free(r->finish_reason);
  memset(r, 0, sizeof *r);
}

void tt_llm_set_error(tt_error *err, tt_errkind kind, int status,
                      const char *fmt, ...) {
  if (!err) return;
  va_list ap;
  va_start(ap, fmt);
  tt_error_vset(err, kind, fmt, ap);
  va_end(ap);
  err->status = status;
}
