/* cmd_doctor.c — `tabletalk doctor [--base-url URL | --model-path FILE]`:
 * probes the model ask would use and says what works (the endpoint, the
 * model name, the context size where the server tells it, tool calls,
 * tool_choice "required", streaming with usage, a forced tool, reasoning)
 * and what tabletalk does about what does not. The probes are a few short
 * model calls through the same backend as ask, so every adaptation the
 * backend makes shows up here too. Exit 0 when the model is usable. */
#include "cli/cli.h"

#include <stdlib.h>
#include <string.h>

typedef struct tt_doctor_cli {
  tt_cli_agent_opts o;
  bool json;
} tt_doctor_cli;

static const tt_opt tt_doctor_own[] = {
    {TT_OPT_JSON, "json", 0, TT_ARG_NONE, NULL, "one JSON object: checks, status, action", TT_COMPLETE_NOTHING, NULL,
     "Print the checks as one JSON object: checks, status, action."},
    {0, NULL, 0, 0, NULL, NULL, 0, NULL, NULL},
};
static const tt_opt_group tt_doctor_group = {NULL, false, tt_doctor_own};
static const tt_opt_group *const tt_doctor_groups[] = {&tt_doctor_group, &tt_opts_model, NULL};
const tt_cmd_spec tt_cmd_doctor = {
    .name = "doctor",
    .usage = "tabletalk doctor [--base-url URL | --model-path FILE] [options]",
    .about = "Probe the model that ask would use (or the one given) and say what works:\n"
             "the endpoint, its context, tool calls, streaming, reasoning; and what\n"
             "tabletalk does about what does not. A few short model calls are made.",
    .groups = tt_doctor_groups,
    .footer = "Exit codes: 0 usable (a tool call came back), 1 not usable, 2 usage.",
    .doc =
        "Probe the model ask would use, or the one given: the server (llama-server, vLLM, "
        "Ollama, LM Studio, OpenAI) and the context it gives a request where it says "
        "(llama-server /props, Ollama /api/show, vLLM and LM Studio model lists), tool calls, "
        "tool_choice \"required\", streaming with usage, a forced tool, reasoning, and what "
        "tabletalk adapts; each check says what tabletalk does about what does not work. A few "
        "short model calls are made. Each server's flags are in docs/guide/servers.md.\n\n"
        "Exit status: 0 when a tool call came back, 1 otherwise, 2 usage.",
};

static int tt_doctor_option(void *ud, int id, const char *arg) {
  tt_doctor_cli *d = ud;
  int r = tt_cli_agent_option(id, arg, &d->o, "doctor");
  if (r >= 0) return r;
  if (id == TT_OPT_JSON) d->json = true;
  return 0;
}

/* The probe's tools: the agent's run_sql and answer, as the model sees them. */
static const tt_tool_spec tt_doctor_tools[] = {
    {"run_sql", "Run one read-only SQLite query and get its rows back.",
     "{\"type\":\"object\",\"properties\":{\"sql\":{\"type\":\"string\",\"minLength\":1,"
     "\"description\":\"one SELECT statement\"}},\"required\":[\"sql\"],\"additionalProperties\":false}"},
    {"answer", "Give the final answer to the user, in words.",
     "{\"type\":\"object\",\"properties\":{\"text\":{\"type\":\"string\",\"minLength\":1}},"
     "\"required\":[\"text\"],\"additionalProperties\":false}"},
};

static const char tt_doctor_system[] =
    "You answer questions about a SQLite database by calling tools: run_sql to query it, answer "
    "to reply. Reply with exactly one tool call. The database has one table: Genre(GenreId "
    "INTEGER PRIMARY KEY, Name TEXT).";
static const char tt_doctor_question[] = "How many genres are there?";
static const char tt_doctor_small_talk[] = "Reply with just the word hello.";

typedef struct tt_probe_out {
  bool ok;          /* the call returned */
  bool is_tool, from_text, args_ok, thinking, usage;
  char name[64];
  char why[1024];    /* arguments that do not fit, or the error */
  char text[160];   /* the start of a text reply */
  double ms;
} tt_probe_out;

static void tt_doctor_chat(tt_llm *llm, const char *question, const char *force, tt_probe_out *p) {
  memset(p, 0, sizeof *p);
  tt_chat chat = {0};
  tt_chat_add(&chat, TT_ROLE_SYSTEM, tt_doctor_system);
  tt_chat_add(&chat, TT_ROLE_USER, question);
  tt_llm_call call = {.tools = tt_doctor_tools, .ntools = 2, .force_tool = force};
  tt_llm_reply r;
  tt_error err;
  p->ok = tt_llm_chat(llm, &chat, &call, &r, &err);
  p->ms = r.latency_ms;
  if (!p->ok) {
    snprintf(p->why, sizeof p->why, "%s", err.message);
  } else if (r.is_tool) {
    p->is_tool = true;
    p->from_text = r.call_from_text;
    snprintf(p->name, sizeof p->name, "%s", r.tool_name ? r.tool_name : "");
    const tt_tool_spec *t = tt_tool_find(tt_doctor_tools, 2, r.tool_name);
    tt_error why = TT_ERROR_INIT;
    p->args_ok = t && tt_tool_check(t, r.tool_args, &why);
    if (!t) tt_error_set(&why, TT_ERR_CONFIG, "there is no tool named \"%s\"", p->name);
    snprintf(p->why, sizeof p->why, "%s", tt_error_text(&why));
  } else {
    snprintf(p->text, sizeof p->text, "%s", r.text ? r.text : "");
  }
  p->thinking = r.thinking != NULL;
  p->usage = r.usage.prompt > 0 || r.usage.completion > 0;
  tt_llm_reply_free(&r);
  tt_chat_free(&chat);
}

/* ---- the report ------------------------------------------------------------- */

static void tt_check(json_t *checks, const char *name, const char *status, const char *action,
                     const char *fmt, ...) TT_PRINTF(5, 6);

static void tt_check(json_t *checks, const char *name, const char *status, const char *action,
                     const char *fmt, ...) {
  tt_buf detail = TT_BUF_INIT;
  va_list ap;
  va_start(ap, fmt);
  tt_buf_vprintf(&detail, fmt, ap);
  va_end(ap);
  json_t *c = json_pack("{s:s,s:s,s:s}", "name", name, "status", status, "detail", tt_buf_cstr(&detail));
  json_object_set_new(c, "action", action ? json_string(action) : json_null());
  json_array_append_new(checks, c);
  tt_buf_free(&detail);
}

/* The tool-call probe, judged: what came back and what tabletalk does. */
static void tt_judge_call(json_t *checks, const char *name, const tt_probe_out *p, const char *want) {
  if (!p->ok) {
    tt_check(checks, name, "fail", "see the error; `tabletalk ask` would fail the same way", "%s", p->why);
  } else if (!p->is_tool) {
    tt_check(checks, name, "fail",
             "tabletalk pushes a plain-text reply back once, naming the tools; use a model trained "
             "for tool calls, and the server's tool parser (docs/guide/servers.md)",
             "the model answered in text instead of calling a tool: \"%s\"", p->text);
  } else if (!p->args_ok) {
    tt_check(checks, name, "warn", "tabletalk tells the model what is wrong and lets it try once more",
             "%s was called, but %s", p->name, p->why);
  } else if (p->from_text) {
    tt_check(checks, name, "warn",
             "tabletalk recovers calls written as text; for native calls start the server with its "
             "tool parser (llama-server --jinja; vLLM --enable-auto-tool-choice --tool-call-parser "
             "hermes)",
             "%s was called, but as text in the reply, not as tool_calls (%.0f ms)", p->name, p->ms);
  } else if (want && strcmp(p->name, want) != 0) {
    tt_check(checks, name, "warn",
             "a model that does not follow a forced tool may run one more query; tabletalk then ends "
             "the question with the last result it has",
             "%s was called instead of %s (%.0f ms)", p->name, want, p->ms);
  } else {
    tt_check(checks, name, "ok", NULL, "%s called with arguments that fit its schema (%.0f ms)", p->name,
             p->ms);
  }
}

/* How to give a server more context. */
static const char *tt_context_action(const char *kind) {
  if (strcmp(kind, "llama-server") == 0) return "start llama-server with a larger -c (e.g. -c 16384)";
  if (strcmp(kind, "vllm") == 0) return "start vLLM with a larger --max-model-len";
  if (strcmp(kind, "ollama") == 0)
    return "set num_ctx in a Modelfile (PARAMETER num_ctx 16384, then ollama create) or start Ollama "
           "with OLLAMA_CONTEXT_LENGTH=16384";
  if (strcmp(kind, "lm-studio") == 0) return "load the model with a larger context length (lms load --context-length 16384)";
  return "give the server a larger context";
}

#define TT_DOCTOR_MIN_CONTEXT 8192 /* the first prompt is 3,000-4,000 tokens and
                                    * grows with each step's rows */

static void tt_doctor_context(json_t *checks, const tt_llm_server_info *i) {
  if (i->context) {
    bool small = i->context < TT_DOCTOR_MIN_CONTEXT;
    tt_buf own = TT_BUF_INIT;
    if (i->model_context) tt_buf_printf(&own, "; the model was trained for %ld", i->model_context);
    tt_check(checks, "context", small ? "warn" : "ok", small ? tt_context_action(i->kind) : NULL,
             "%ld tokens per request (%s)%s%s", i->context, i->context_from, tt_buf_cstr(&own),
             small ? ": small for tabletalk, whose first prompt (rules, tools, 2,000 tokens of schema) "
                     "is 3,000-4,000 tokens and grows with every step's rows"
                   : "");
    tt_buf_free(&own);
  } else if (strcmp(i->kind, "ollama") == 0 && i->ollama_default_ctx) {
    char own[64] = "";
    if (i->model_context) snprintf(own, sizeof own, " (the model itself takes %ld)", i->model_context);
    tt_check(checks, "context", "warn", tt_context_action("ollama"),
             "the model sets no num_ctx, so Ollama's default context applies (4,096 tokens; 2,048 in "
             "older releases) and /v1 cannot raise it%s; a longer prompt is cut without an error", own);
  } else {
    tt_check(checks, "context", "info", NULL,
             "the server does not say; a prompt that does not fit fails with an error that names "
             "the context");
  }
}

static void tt_doctor_model_name(json_t *checks, const tt_llm_server_info *i, const char *model) {
  size_t n = json_array_size(i->models);
  if (!n) {
    tt_check(checks, "model", "info", NULL, "\"%s\" (the endpoint lists no models)", model);
    return;
  }
  tt_buf names = TT_BUF_INIT;
  for (size_t k = 0; k < n && k < 8; k++)
    tt_buf_printf(&names, "%s%s", k ? ", " : "", json_string_value(json_array_get(i->models, k)));
  if (n > 8) tt_buf_printf(&names, " and %zu more", n - 8);
  if (i->model_listed)
    tt_check(checks, "model", "ok", NULL, "\"%s\" is served", model);
  else if (strcmp(i->kind, "llama-server") == 0)
    tt_check(checks, "model", "ok", NULL, "\"%s\" (llama-server serves %s whatever the name)", model,
             tt_buf_cstr(&names));
  else
    tt_check(checks, "model", "warn", "pass --model NAME (or set TABLETALK_MODEL) to one of them",
             "\"%s\" is not among the models the endpoint lists: %s", model, tt_buf_cstr(&names));
  tt_buf_free(&names);
}

/* The endpoint itself; false when there is nothing to probe further. */
static bool tt_doctor_endpoint(json_t *checks, const tt_llm_server_info *i, const char *url) {
  if (!i->reachable) {
    tt_check(checks, "endpoint", "fail",
             "check --base-url or TABLETALK_BASE_URL and that the server is running",
             "no answer from %s (%s)", url, i->models_error[0] ? i->models_error : "no HTTP reply");
    return false;
  }
  if (i->models_status == 401 || i->models_status == 403) {
    tt_check(checks, "endpoint", "fail", "set the API key (--api-key-env VAR, TABLETALK_API_KEY)",
             "the endpoint refused the API key (GET /models: HTTP %ld)", i->models_status);
    return false;
  }
  tt_check(checks, "endpoint", "ok", NULL, "answers (GET /models: HTTP %ld)", i->models_status);
  tt_check(checks, "server", "info", NULL, "%s (%s)", i->kind, i->kind_from);
  return true;
}

static void tt_doctor_required(json_t *checks, const tt_probe_out *p, const char *kind) {
  if (p->ok && p->is_tool && !p->from_text) {
    tt_check(checks, "tool_choice", "ok", NULL,
             "\"required\" is honoured: a tool call even when a plain reply would do");
  } else if (p->ok) {
    bool ollama = strcmp(kind, "ollama") == 0;
    tt_check(checks, "tool_choice", "warn",
             "tabletalk pushes a plain-text reply back once, naming the tools, and recovers calls "
             "written as text; a JSON-looking reply is never shown as the answer",
             "\"required\" is not enforced%s: %s", ollama ? " (Ollama has no tool_choice)" : "",
             p->is_tool ? "the call came as text" : "the model replied in text");
  } else {
    tt_check(checks, "tool_choice", "fail", NULL, "%s", p->why);
  }
}

static void tt_doctor_stream(json_t *checks, const tt_probe_out *p) {
  if (!p->ok || !p->is_tool) {
    tt_check(checks, "streaming", p->ok ? "warn" : "fail", p->ok ? NULL : "try --no-stream", "%s",
             p->ok ? "the streamed reply was text, not a tool call" : p->why);
  } else if (!p->usage) {
    tt_check(checks, "streaming", "warn",
             "token counts in traces and `eval report` will be 0 for streamed calls; --no-stream "
             "gets them if the server reports them there",
             "the call arrives streamed, but the stream reports no usage");
  } else {
    tt_check(checks, "streaming", "ok", NULL, "the call arrives streamed, with usage");
  }
}

/* A model as configured, with the HTTP backend streaming or not. */
static tt_llm *tt_doctor_model(const tt_config *c, bool stream, tt_error *err) {
  tt_config one = *c; /* a copy that owns nothing */
  one.no_stream = !stream;
  tt_models *m = tt_models_new(&one);
  tt_llm *llm = tt_models_make(m, err);
  tt_models_free(m);
  return llm;
}

static bool tt_doctor_http(const tt_cli_agent_opts *o, tt_models *models, const char *url,
                           json_t *report, json_t *checks) {
  tt_llm_http_opts h;
  tt_error herr;
  if (!tt_models_http_opts(models, url, &h, &herr)) {
    tt_check(checks, "configuration", "fail", NULL, "%s", tt_error_text(&herr));
    return false;
  }
  tt_error err;
  json_object_set_new(report, "backend", json_string("openai-http"));
  json_object_set_new(report, "base_url", json_string(url));
  json_object_set_new(report, "model", json_string(h.model));
  tt_llm_server_info info;
  bool probed = tt_llm_server_probe(&h, &info, &err);
  if (!probed) tt_check(checks, "endpoint", "fail", NULL, "%s", tt_error_text(&err));
  bool go_on = probed && tt_doctor_endpoint(checks, &info, url);
  if (go_on) {
    json_object_set_new(report, "server", json_string(info.kind));
    if (info.context) json_object_set_new(report, "context", json_integer(info.context));
    tt_doctor_model_name(checks, &info, h.model);
    tt_doctor_context(checks, &info);
  }
  bool usable = false;
  tt_llm *a = go_on ? tt_doctor_model(&o->cfg, false, &herr) : NULL;
  tt_llm *b = a ? tt_doctor_model(&o->cfg, true, &herr) : NULL;
  if (go_on && (!a || !b)) tt_check(checks, "configuration", "fail", NULL, "%s", tt_error_text(&herr));
  if (a && b) {
    tt_probe_out call, required, stream, forced;
    tt_doctor_chat(a, tt_doctor_question, NULL, &call);
    tt_judge_call(checks, "tool calls", &call, NULL);
    usable = call.ok && call.is_tool;
    if (call.ok) {
      tt_doctor_chat(a, tt_doctor_small_talk, NULL, &required);
      tt_doctor_required(checks, &required, info.kind);
      tt_doctor_chat(b, tt_doctor_question, NULL, &stream);
      tt_doctor_stream(checks, &stream);
      tt_doctor_chat(a, tt_doctor_question, "answer", &forced);
      tt_judge_call(checks, "forced tool", &forced, "answer");
      bool thought = call.thinking || required.thinking || stream.thinking || forced.thinking;
      tt_check(checks, "reasoning", "info", NULL, "%s",
               thought ? "the model reasons before its call (reasoning_content, reasoning or <think>): "
                         "tabletalk keeps it out of answers and records it in the trace (thinking)"
                       : "none seen");
    }
    tt_buf notes = TT_BUF_INIT;
    const char *na = tt_llm_http_notes(a), *nb = tt_llm_http_notes(b);
    tt_buf_puts(&notes, na ? na : "");
    if (nb && *nb && (!na || !strstr(na, nb))) tt_buf_printf(&notes, "%s%s", notes.len ? "; " : "", nb);
    if (notes.len) tt_check(checks, "adapted", "info", NULL, "tabletalk %s", tt_buf_cstr(&notes));
    tt_buf_free(&notes);
  }
  tt_llm_free(a);
  tt_llm_free(b);
  if (probed) tt_llm_server_info_free(&info);
  return usable;
}

static bool tt_doctor_local(const tt_cli_agent_opts *o, const char *path, json_t *report,
                            json_t *checks) {
  json_object_set_new(report, "backend", json_string("llama.cpp"));
  json_object_set_new(report, "model_path", json_string(path));
  tt_config lo = o->cfg; /* a copy that owns nothing: this file, no progress bar */
  lo.model_path = path;
  lo.progress = false;
  tt_error err;
  double t0 = tt_now_ms();
  tt_models *m = tt_models_new(&lo);
  tt_llm *llm = tt_models_make(m, &err);
  tt_models_free(m);
  bool usable = false;
  if (!llm) {
    tt_check(checks, "model file", "fail", "check the path, or get a model with `tabletalk pull`", "%s",
             tt_error_text(&err));
  } else {
    tt_check(checks, "model file", "ok", NULL, "%s loaded in %.1f s (llama.cpp, in this process)",
             tt_llm_model(llm), (tt_now_ms() - t0) / 1000.0);
    if (o->cfg.ctx)
      tt_check(checks, "context", "info", NULL, "%ld tokens (--ctx)", o->cfg.ctx);
    else
      tt_check(checks, "context", "info", NULL, "%s (the engine's default; --ctx sets it)",
               tt_llm_llama_ctx_note(llm) ? tt_llm_llama_ctx_note(llm) : "?");
    tt_probe_out call, forced;
    tt_doctor_chat(llm, tt_doctor_question, NULL, &call);
    tt_judge_call(checks, "tool calls", &call, NULL);
    usable = call.ok && call.is_tool;
    tt_doctor_chat(llm, tt_doctor_question, "answer", &forced);
    tt_judge_call(checks, "forced tool", &forced, "answer");
    tt_check(checks, "streaming", "info", NULL,
             "in this process: a grammar keeps every reply one tool call, and the answer streams as "
             "it is written");
  }
  tt_llm_free(llm);
  return usable;
}

static void tt_doctor_print(const json_t *report, bool usable) {
  tt_term t = tt_term_probe(stdout);
  tt_buf b = TT_BUF_INIT;
  const char *where = json_string_value(json_object_get(report, "base_url"));
  if (!where) where = json_string_value(json_object_get(report, "model_path"));
  const char *model = json_string_value(json_object_get(report, "model"));
  tt_buf_printf(&b, "%stabletalk doctor: %s", tt_term_bold(&t), where ? where : "?");
  if (model) tt_buf_printf(&b, ", model \"%s\"", model);
  tt_buf_printf(&b, "%s\n", tt_term_reset(&t));
  size_t i;
  const json_t *c;
  tt_escape_opts eo = {.max_chars = 600};
  json_array_foreach(json_object_get(report, "checks"), i, c) {
    const char *detail = json_string_value(json_object_get(c, "detail"));
    const char *action = json_string_value(json_object_get(c, "action"));
    tt_buf_printf(&b, "  %-5s %-12s ", json_string_value(json_object_get(c, "status")),
                  json_string_value(json_object_get(c, "name")));
    tt_escape_terminal(&b, detail, strlen(detail), &eo);
    tt_buf_putc(&b, '\n');
    if (action) {
      tt_buf_printf(&b, "  %-5s %-12s -> ", "", "");
      tt_escape_terminal(&b, action, strlen(action), &eo);
      tt_buf_putc(&b, '\n');
    }
  }
  tt_buf_puts(&b, usable ? "usable: tabletalk can ask questions with this model\n"
                         : "not usable: see the failed checks above\n");
  tt_write_all(stdout, &b);
  tt_buf_free(&b);
}

int cmd_doctor(int argc, char **argv) {
  tt_doctor_cli dc = {.json = false};
  tt_cli_agent_defaults(&dc.o);
  int rc0 = tt_opts_parse(&tt_cmd_doctor, argc, argv, 1, tt_doctor_option, &dc);
  if (rc0 == TT_OPTS_GO && optind < argc)
    rc0 = tt_usage_error("doctor", "unexpected argument '%s'", argv[optind]);
  if (rc0 == TT_OPTS_GO && dc.o.cfg.base_url && dc.o.cfg.model_path)
    rc0 = tt_usage_error("doctor", "give --base-url or --model-path, not both");
  if (rc0 != TT_OPTS_GO) {
    tt_cli_agent_free(&dc.o);
    return rc0;
  }
  tt_cli_agent_opts *o = &dc.o;
  bool json = dc.json;
  tt_error err;
  tt_config_resolve(&o->cfg, &err);
  tt_models *models = tt_models_new(&o->cfg);
  tt_model_choice ch;
  tt_models_choice(models, &ch);
  int rc = 0;
  if (!tt_models_check(models, &err))
    rc = tt_cli_error("doctor", &err);
  else if (!ch.path && !ch.url)
    rc = tt_fail(TT_EXIT_FAIL, "no model to probe: give --base-url URL or --model-path FILE (or "
                               "set TABLETALK_BASE_URL, or get one with `tabletalk pull`)");
  if (rc) {
    tt_model_choice_free(&ch);
    tt_models_free(models);
    tt_cli_agent_free(o);
    return rc;
  }
  json_t *report = json_object(), *checks = json_array();
  json_object_set(report, "checks", checks);
  json_object_set_new(report, "chosen_by", json_string(ch.source));
  bool usable = ch.path ? tt_doctor_local(o, ch.path, report, checks)
                        : tt_doctor_http(o, models, ch.url, report, checks);
  json_object_set_new(report, "usable", json_boolean(usable));
  if (json) {
    tt_buf b = TT_BUF_INIT;
    tt_json_dump(&b, report, JSON_INDENT(2));
    tt_buf_putc(&b, '\n');
    tt_write_all(stdout, &b);
    tt_buf_free(&b);
  } else {
    tt_doctor_print(report, usable);
  }
  json_decref(checks);
  json_decref(report);
  tt_model_choice_free(&ch);
  tt_models_free(models);
  tt_cli_agent_free(o);
  return usable ? TT_EXIT_OK : TT_EXIT_FAIL;
}
