/* llm_internal.h — what the backends share: the dispatch table behind the
 * opaque tt_llm handle. */
#ifndef TT_LLM_INTERNAL_H
#define TT_LLM_INTERNAL_H

#include "llm/llm.h"

typedef struct tt_llm_vtable {
  const char *name;
  bool (*chat)(void *impl, const tt_chat *chat, const tt_llm_call *call,
               tt_llm_reply *out, tt_llm_error *err);
  const char *(*model)(const void *impl);
  void (*free)(void *impl);
} tt_llm_vtable;

struct tt_llm {
  const tt_llm_vtable *vt;
  void *impl;
};

tt_llm *tt_llm_wrap(const tt_llm_vtable *vt, void *impl);
void tt_llm_set_error(tt_llm_error *err, tt_llm_errkind kind, int status,
                      const char *fmt, ...) TT_PRINTF(4, 5);

#endif
