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

/* How a model writes a tool call: Qwen2.5/Hermes style
 * <tool_call>\n{"name": ..., "arguments": ...}\n</tool_call>, or the bare
 * JSON object for other families. */
typedef enum tt_call_format { TT_CALL_HERMES, TT_CALL_JSON } tt_call_format;

/* GBNF admitting exactly one call of one of the tools (only that one when
 * only is not NULL), with schema-fitting arguments; NULL when no tool
 * matches. */
char *tt_grammar_for_tools(const tt_tool_spec *tools, size_t n, const char *only,
                           tt_call_format format, long max_tokens);
/* GBNF admitting exactly text (replaying a recorded turn). */
char *tt_grammar_for_text(const char *text);

/* Embedded engine, for tests: the prompt text a call would send, and the
 * logits of the next token after bringing the cache up to that prompt
 * (a copy, n_vocab floats; *reused receives the tokens taken from cache). */
bool tt_llama_debug_prompt(tt_llm *llm, const tt_chat *chat, const tt_llm_call *call, tt_buf *out);
float *tt_llama_debug_logits(tt_llm *llm, const tt_chat *chat, const tt_llm_call *call,
                             int *n_vocab, long *reused);

#endif
