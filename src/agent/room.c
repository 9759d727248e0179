/* room.c — keeping every model call of a question within the model's
 * context. Before the first call it checks that the fixed part (the system
 * prompt with its tools and schema cards, and the question) fits beside the
 * room kept for the reply, and fails the question with the numbers when it
 * cannot. Before each call it counts the whole prompt and, only when it
 * would not fit, shortens the conversation: older query results first
 * (oldest first, each replaced by a stub with its row count and first
 * row), then the thread's earlier turns (oldest first), the newest result
 * last. Each shortening costs the engine its cache from the first changed
 * message on, so once it must shorten it makes room for one more result,
 * and otherwise leaves the conversation as it is (append-only). */
#include "agent/agent_internal.h"

#include <stdlib.h>
#include <string.h>

/* The fixed part of a question: the system message and the user messages
 * that follow the thread's earlier turns (the schema cards, the question). */
static long tt_room_fixed_tokens(const tt_room *r, const tt_chat *chat, const tt_llm_call *call) {
  tt_chat fixed = {0};
  if (chat->n) tt_chat_add(&fixed, chat->msgs[0].role, chat->msgs[0].content);
  for (size_t i = r->hist_end; i < chat->n && chat->msgs[i].role == TT_ROLE_USER; i++)
    tt_chat_add(&fixed, TT_ROLE_USER, chat->msgs[i].content);
  long n = tt_llm_count_prompt(r->llm, &fixed, call);
  tt_chat_free(&fixed);
  return n;
}

bool tt_room_start(tt_room *r, tt_llm *llm, const tt_chat *chat, const tt_llm_call *call,
                   size_t hist_begin, size_t hist_end, size_t schema_budget, tt_error *err) {
  memset(r, 0, sizeof *r);
  r->llm = llm;
  r->hist_begin = hist_begin;
  r->hist_end = hist_end;
  r->result_cap = TT_RESULT_TOKENS;
  r->context = tt_llm_context(llm);
  if (r->context <= 0) return true; /* unknown: results are capped, nothing else is fitted */
  r->reserve = tt_llm_reply_reserve(llm);
  r->limit = r->context - r->reserve;
  r->fixed = tt_room_fixed_tokens(r, chat, call);
  if (r->fixed > r->limit) {
    tt_error_set(err, TT_ERR_LIMIT, "the question does not fit the model's context: the system "
                 "prompt with its tools and schema cards, and the question, take %ld tokens, but "
                 "the context holds %ld and %ld of them are kept for the reply", r->fixed,
                 r->context, r->reserve);
    tt_error_hint(err, "raise --ctx (it needs more than %ld) or lower --schema-budget (now %zu) so "
                  "that fewer schema cards go into the prompt", r->fixed + r->reserve,
                  schema_budget);
    return false;
  }
  /* a result may take a third of the room beside the fixed part: the
   * model's call, its next call and more results still fit */
  long cap = (r->limit - r->fixed) / 3;
  if (cap < r->result_cap) r->result_cap = cap;
  return true;
}

/* The index of the last tool result (the one the model is about to read),
 * or chat->n when there is none. */
static size_t tt_last_tool(const tt_chat *chat) {
  for (size_t i = chat->n; i > 0; i--)
    if (chat->msgs[i - 1].role == TT_ROLE_TOOL) return i - 1;
  return chat->n;
}

/* Replaces result i by its stub; false when it has none (not rows, or
 * already short). */
static bool tt_room_shorten_result(tt_chat *chat, size_t i) {
  const tt_msg *m = &chat->msgs[i];
  char *stub = m->role == TT_ROLE_TOOL && m->content ? tt_view_stub(m->content) : NULL;
  if (!stub) return false;
  tt_chat_set_content(chat, i, stub);
  free(stub);
  return true;
}

bool tt_room_fit(tt_room *r, tt_chat *chat, const tt_llm_call *call, tt_room_report *rep,
                 tt_error *err) {
  memset(rep, 0, sizeof *rep);
  if (r->context <= 0) return true;
  long n = tt_llm_count_prompt(r->llm, chat, call);
  rep->before = rep->after = n;
  if (n <= r->limit) return true;
  /* once the cache must be given up, make room for one more result too */
  long target = r->limit - r->result_cap;
  size_t keep = tt_last_tool(chat);
  for (size_t i = r->hist_end; i < chat->n && n > target; i++) {
    if (i == keep || !tt_room_shorten_result(chat, i)) continue;
    rep->results_shortened++;
    n = tt_llm_count_prompt(r->llm, chat, call);
  }
  while (n > target && r->hist_end >= r->hist_begin + 2) {
    tt_chat_remove(chat, r->hist_begin, 2);
    r->hist_end -= 2;
    rep->turns_dropped++;
    n = tt_llm_count_prompt(r->llm, chat, call);
  }
  keep = tt_last_tool(chat); /* dropped turns moved it */
  if (n > r->limit && keep < chat->n && tt_room_shorten_result(chat, keep)) {
    rep->results_shortened++;
    n = tt_llm_count_prompt(r->llm, chat, call);
  }
  rep->after = n;
  r->results_shortened += rep->results_shortened;
  r->turns_dropped += rep->turns_dropped;
  if (n <= r->limit) return true;
  tt_error_set(err, TT_ERR_LIMIT, "the conversation does not fit the model's context even "
               "shortened: it takes %ld tokens, but the context holds %ld and %ld of them are "
               "kept for the reply", n, r->context, r->reserve);
  tt_error_hint(err, "raise --ctx or lower --schema-budget");
  return false;
}
