/* events.c — how the agent hands its events to the front end's hooks: the
 * names of the events, a model call with what the model thought, and the
 * streamed answer turned into text events. loop.c and writer.c emit
 * through here, so both kinds of agent produce the same stream. */
#include "agent/agent_internal.h"

const char *tt_event_name(tt_event_kind kind) {
  switch (kind) {
  case TT_EV_RUN_START: return "run_start";
  case TT_EV_SCHEMA: return "schema";
  case TT_EV_QUEUED: return "queued";
  case TT_EV_MODEL_WAIT: return "model_wait";
  case TT_EV_MODEL_CALL: return "model_call";
  case TT_EV_THOUGHT: return "thought";
  case TT_EV_SQL: return "sql";
  case TT_EV_CHART: return "chart";
  case TT_EV_CLARIFY: return "clarification";
  case TT_EV_CONTEXT: return "context";
  case TT_EV_VERIFY: return "verify";
  case TT_EV_WARNING: return "warning";
  case TT_EV_ANSWER: return "answer";
  case TT_EV_TEXT: return "text";
  case TT_EV_TEXT_RESTART: return "text_restart";
  case TT_EV_RUN_END: return "run_end";
  }
  return "unknown";
}

void tt_agent_emit(const tt_agent_hooks *h, int step, tt_event *ev) {
  ev->step = step;
  if (h && h->on_event) h->on_event(h->ud, ev);
}

void tt_agent_emit_call(const tt_agent_hooks *h, int step, const tt_llm_reply *r,
                        const tt_error *err) {
  if (r && r->thinking && *r->thinking) { /* what it thought before the call it made */
    tt_event t = {.kind = TT_EV_THOUGHT, .text = r->thinking};
    tt_agent_emit(h, step, &t);
  }
  tt_event ev = {.kind = TT_EV_MODEL_CALL, .reply = r, .llm_error = r ? NULL : err};
  tt_agent_emit(h, step, &ev);
}

void tt_agent_stream_text(void *ud, const char *piece, size_t n) {
  const tt_agent_hooks *h = ud;
  tt_event ev = {.kind = TT_EV_TEXT, .text = piece, .n = n};
  tt_agent_emit(h, 0, &ev);
}

void tt_agent_stream_restart(void *ud) {
  const tt_agent_hooks *h = ud;
  tt_event ev = {.kind = TT_EV_TEXT_RESTART};
  tt_agent_emit(h, 0, &ev);
}
