/* oracle.c — the oracle backend: it "answers" a known question by calling
 * run_sql with the gold SQL and then answer, through the same tool
 * protocol as a model. With it the Spider harness must score 100 %: what
 * it does not is a harness bug or a documented Spider quirk. */
#include "eval/eval.h"

#include <stdlib.h>
#include <string.h>

static void tt_oracle_call(tt_llm_reply *out, const char *name, json_t *args) {
  out->is_tool = true;
  out->tool_name = tt_xstrdup(name);
  out->tool_args = json_dumps(args, JSON_COMPACT);
  json_decref(args);
}

static bool tt_oracle_reply(void *ud, const tt_chat *chat, const tt_llm_call *call,
                            tt_llm_reply *out, tt_error *err) {
  (void)err;
  const json_t *answers = ud;
  size_t u = chat->n;
  while (u > 0 && chat->msgs[u - 1].role != TT_ROLE_USER) u--;
  const char *msg = u ? chat->msgs[u - 1].content : NULL;
  /* the question as asked, without the value hints the agent adds */
  const char *hints = msg ? strstr(msg, TT_AGENT_VALUE_HINTS) : NULL;
  char *question = msg ? tt_xstrndup(msg, hints ? (size_t)(hints - msg) : strlen(msg)) : NULL;
  const char *sql = question ? json_string_value(json_object_get(answers, question)) : NULL;
  free(question);
  bool queried = false;
  for (size_t i = u; i < chat->n; i++) queried |= chat->msgs[i].role == TT_ROLE_TOOL;
  bool must_answer = call->force_tool && strcmp(call->force_tool, "answer") == 0;
  if (!sql) {
    tt_oracle_call(out, "answer", json_pack("{s:s}", "text", "The oracle does not know this question."));
  } else if (queried || must_answer) {
    tt_oracle_call(out, "answer", json_pack("{s:s}", "text", "The rows above answer the question."));
  } else {
    tt_oracle_call(out, "run_sql", json_pack("{s:s}", "sql", sql));
  }
  out->usage.completion = 1;
  return true;
}

tt_llm *tt_oracle_new(const json_t *answers) {
  return tt_llm_func_new("oracle", "gold-sql", tt_oracle_reply, (void *)answers, NULL);
}
