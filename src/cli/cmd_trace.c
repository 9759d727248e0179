/* cmd_trace.c — `tabletalk trace latest|list|RUN_ID`: a run's steps read
 * back from its JSONL trace (model calls with timings and tokens, SQL with
 * rows and time, charts with their files, checks, the result), or the list
 * of recent runs. */
#include "cli/cli.h"

#include <stdlib.h>
#include <string.h>

static const tt_opt tt_trace_own[] = {
    {TT_OPT_JSON, "json", 0, TT_ARG_NONE, NULL, "the events as JSON (list: an array of runs)", TT_COMPLETE_NOTHING, NULL,
     "The events as one JSON array (`list`: an array of runs)."},
    {TT_OPT_LIMIT, "limit", 'n', TT_ARG_REQUIRED, "N", "how many runs `list` shows (20)", TT_COMPLETE_NOTHING, NULL,
     "How many runs `list` shows (20)."},
    {TT_OPT_STATE_DIR, "state-dir", 0, TT_ARG_REQUIRED, "DIR", "where traces live (TABLETALK_STATE_DIR)", TT_COMPLETE_DIR, NULL,
     TT_DOC_STATE_DIR},
    {0, NULL, 0, 0, NULL, NULL, 0, NULL, NULL},
};
static const tt_opt_group tt_trace_group = {NULL, false, tt_trace_own};
static const tt_opt_group *const tt_trace_groups[] = {&tt_trace_group, NULL};
const tt_cmd_spec tt_cmd_trace = {
    .name = "trace",
    .usage = "tabletalk trace latest|list|RUN_ID [options]",
    .about = "Show what happened in a run: each model call (tool, time, tokens), each\n"
             "query (rows, time, errors), answer checks and the result. `list` shows\n"
             "recent runs.",
    .groups = tt_trace_groups,
    .args = TT_COMPLETE_WORDS,
    .words = "latest list",
    .doc =
        "Show a run's steps from its trace, *STATE*/runs/*RUN_ID*.jsonl: each model call (tool, "
        "time, tokens), each query (rows, time, errors), the answer checks and the result; "
        "`latest` the last run, `list` the recent runs.",
};

typedef struct tt_trace_cli {
  bool json;
  long limit;
  const char *state;
} tt_trace_cli;

static int tt_trace_option(void *ud, int id, const char *arg) {
  tt_trace_cli *t = ud;
  switch (id) {
  case TT_OPT_JSON: t->json = true; return 0;
  case TT_OPT_LIMIT:
    if (!tt_parse_long(arg, 1, 100000, &t->limit))
      return tt_usage_error("trace", "--limit wants a number, not '%s'", arg);
    return 0;
  case TT_OPT_STATE_DIR: t->state = arg; return 0;
  }
  return 0;
}

static const char *tt_jstr(const json_t *o, const char *key) {
  const char *s = json_string_value(json_object_get(o, key));
  return s ? s : "";
}

static double tt_jnum(const json_t *o, const char *key) {
  return json_number_value(json_object_get(o, key));
}

/* key's value, or old's: traces written before the one event stream used
 * other names (docs/reference/events.md says which), and are still read. */
static const json_t *tt_jeither(const json_t *o, const char *key, const char *old) {
  const json_t *v = json_object_get(o, key);
  return v ? v : json_object_get(o, old);
}

static void tt_put_safe(tt_buf *b, const char *s, size_t max_chars) {
  tt_escape_opts eo = {.max_chars = max_chars, .short_marker = true};
  tt_escape_terminal(b, s, strlen(s), &eo);
}

/* The first two columns of a step line: the model call's number (blank for
 * what the call did) and a dimmed label of at most 4 letters (llm, sql,
 * plot, call, chk), padded outside the colour codes so every row lines up. */
#define TT_TRACE_LABEL_WIDTH 5
static void tt_trace_label(tt_buf *b, const tt_term *t, long long step, const char *label) {
  if (step >= 0) tt_buf_printf(b, "%2lld ", step);
  else tt_buf_puts(b, "   ");
  tt_buf_printf(b, "%s%s%s%*s", tt_term_dim(t), label, tt_term_reset(t),
                (int)(TT_TRACE_LABEL_WIDTH - strlen(label)), "");
}

/* The widest tool name ("make_chart"), so tool columns do not shift. */
#define TT_TRACE_TOOL_WIDTH 10

static void tt_trace_llm_call(tt_buf *b, const tt_term *t, const json_t *ev) {
  tt_trace_label(b, t, (long long)json_integer_value(json_object_get(ev, "step")), "llm");
  if (json_object_get(ev, "error")) {
    tt_buf_puts(b, "!! ");
    tt_put_safe(b, tt_jstr(ev, "error"), 300);
    return;
  }
  const char *tool = tt_jstr(ev, "tool");
  tt_buf_printf(b, "-> %-*s %6.0f ms  %lld+%lld tok", TT_TRACE_TOOL_WIDTH, *tool ? tool : "text",
                tt_jnum(ev, "latency_ms"),
                (long long)json_integer_value(tt_jeither(ev, "input_tokens", "gen_ai.usage.input_tokens")),
                (long long)json_integer_value(tt_jeither(ev, "output_tokens", "gen_ai.usage.output_tokens")));
  long long cached =
      json_integer_value(tt_jeither(ev, "cached_tokens", "gen_ai.usage.cache_read.input_tokens"));
  if (cached) tt_buf_printf(b, " (%lld cached)", cached);
}

/* The tool an event is about: its kind (sql, chart), or in older traces
 * the tool_call's name. */
static const char *tt_trace_tool(const json_t *ev, const char *kind) {
  if (strcmp(kind, "sql") == 0) return "run_sql";
  if (strcmp(kind, "chart") == 0) return "make_chart";
  if (strcmp(kind, "warning") == 0) return "";
  return tt_jstr(ev, "gen_ai.tool.name");
}

/* False when the event is not worth a line (a successful ask_user or
 * answer: the result says it). */
static bool tt_trace_tool_call(tt_buf *b, const tt_term *t, const json_t *ev, const char *kind) {
  const char *name = tt_trace_tool(ev, kind);
  bool ok = strcmp(kind, "warning") != 0 && json_is_true(json_object_get(ev, "ok"));
  if (strcmp(kind, "warning") == 0 && !json_object_get(ev, "tool") && !json_object_get(ev, "arguments")) {
    tt_trace_label(b, t, -1, "warn");
    tt_put_safe(b, tt_jstr(ev, "message"), 300);
    return true;
  }
  if (strcmp(name, "run_sql") == 0) {
    tt_trace_label(b, t, -1, "sql");
    tt_put_safe(b, tt_jstr(ev, "sql"), 200);
    if (ok)
      tt_buf_printf(b, " (%lld rows, %.0f ms)", (long long)json_integer_value(json_object_get(ev, "rows")),
                    tt_jnum(ev, "ms"));
  } else if (strcmp(name, "make_chart") == 0) {
    tt_trace_label(b, t, -1, "plot");
    const char *desc = json_string_value(tt_jeither(ev, "description", "chart"));
    const char *file = json_string_value(tt_jeither(ev, "file", "chart_file"));
    tt_put_safe(b, desc && *desc ? desc : "(not drawn)", 200);
    if (file && *file) {
      tt_buf_puts(b, " -> ");
      tt_put_safe(b, file, 300);
    }
    if (ok) tt_buf_printf(b, " (%.0f ms)", tt_jnum(ev, "ms"));
  } else if (!ok) {
    tt_trace_label(b, t, -1, "call");
    tt_put_safe(b, *name ? name : tt_jstr(ev, "tool"), 60);
  } else {
    return false;
  }
  const char *error = json_string_value(tt_jeither(ev, "error", "message"));
  if (error) {
    tt_buf_puts(b, " -- ");
    tt_put_safe(b, error, 300);
  }
  return true;
}

static void tt_trace_step(tt_buf *b, const tt_term *t, const json_t *ev) {
  const char *kind = tt_jstr(ev, "event");
  if (strcmp(kind, "model_call") == 0 || strcmp(kind, "llm_call") == 0) {
    tt_trace_llm_call(b, t, ev);
  } else if (strcmp(kind, "sql") == 0 || strcmp(kind, "chart") == 0 ||
             strcmp(kind, "warning") == 0 || strcmp(kind, "tool_call") == 0) {
    if (!tt_trace_tool_call(b, t, ev, kind)) return;
  } else if (strcmp(kind, "thought") == 0) {
    tt_trace_label(b, t, -1, "think");
    tt_put_safe(b, tt_jstr(ev, "text"), 300);
  } else if (strcmp(kind, "verify") == 0) {
    tt_trace_label(b, t, -1, "chk");
    tt_buf_printf(b, "%s: ", tt_jstr(ev, "decision"));
    tt_put_safe(b, tt_jstr(ev, "reason"), 200);
  } else {
    return;
  }
  tt_buf_putc(b, '\n');
}

static void tt_trace_head(tt_buf *b, const tt_term *t, const json_t *start, const char *run_id) {
  tt_buf_printf(b, "%srun %s%s  %s\n", tt_term_bold(t), run_id, tt_term_reset(t), tt_jstr(start, "ts"));
  tt_buf_puts(b, "question: ");
  tt_put_safe(b, tt_jstr(start, "question"), 500);
  tt_buf_puts(b, "\ndatabase: ");
  tt_put_safe(b, tt_jstr(start, "database"), 300);
  tt_buf_puts(b, "  thread: ");
  tt_put_safe(b, tt_jstr(start, "thread"), 100);
  tt_buf_puts(b, "\nmodel: ");
  const char *model = json_string_value(tt_jeither(start, "model", "gen_ai.request.model"));
  tt_put_safe(b, model ? model : "", 100);
  tt_buf_printf(b, " (%s)\n\n", tt_jstr(start, "backend"));
}

static void tt_trace_tail(tt_buf *b, const tt_term *t, const json_t *end) {
  const json_t *tot = json_object_get(end, "totals");
  tt_buf_printf(b, "\n%s%s%s in %.2f s (model %.2f s, tabletalk %.1f ms); ", tt_term_bold(t),
                tt_jstr(end, "status"), tt_term_reset(t), tt_jnum(tot, "wall_ms") / 1000,
                tt_jnum(tot, "llm_ms") / 1000, tt_jnum(tot, "own_ms"));
  tt_buf_printf(b, "%lld LLM calls, %lld tool calls, %lld+%lld tokens (%lld cached)\n",
                (long long)json_integer_value(json_object_get(tot, "llm_calls")),
                (long long)json_integer_value(json_object_get(tot, "tool_calls")),
                (long long)json_integer_value(json_object_get(tot, "prompt_tokens")),
                (long long)json_integer_value(json_object_get(tot, "completion_tokens")),
                (long long)json_integer_value(json_object_get(tot, "cached_tokens")));
  if (*tt_jstr(end, "answer")) {
    tt_buf_puts(b, "answer: ");
    tt_put_safe(b, tt_jstr(end, "answer"), 2000);
    tt_buf_putc(b, '\n');
  }
  if (*tt_jstr(end, "sql")) {
    tt_buf_puts(b, "sql: ");
    tt_put_safe(b, tt_jstr(end, "sql"), 2000);
    tt_buf_putc(b, '\n');
  }
  if (*tt_jstr(end, "error")) {
    tt_buf_puts(b, "error: ");
    tt_put_safe(b, tt_jstr(end, "error"), 600);
    tt_buf_putc(b, '\n');
  }
}

int tt_trace_print(const char *state_dir, const char *run_id, bool json) {
  tt_error err;
  json_t *events = tt_trace_load(state_dir, run_id, &err);
  if (!events) return tt_fail(TT_EXIT_FAIL, "%s", tt_error_text(&err));
  tt_term t = tt_term_probe(stdout);
  tt_buf b = TT_BUF_INIT;
  if (json) {
    tt_json_dump(&b, events, (t.tty ? JSON_INDENT(2) : JSON_COMPACT) | JSON_REAL_PRECISION(15));
    tt_buf_putc(&b, '\n');
  } else {
    size_t i;
    json_t *ev;
    const json_t *end = NULL;
    json_array_foreach(events, i, ev) {
      const char *kind = tt_jstr(ev, "event");
      if (strcmp(kind, "run_start") == 0) tt_trace_head(&b, &t, ev, run_id);
      else if (strcmp(kind, "run_end") == 0) end = ev;
      else tt_trace_step(&b, &t, ev);
    }
    if (end) tt_trace_tail(&b, &t, end);
    else tt_buf_puts(&b, "\n(the run did not finish: it was stopped or is still running)\n");
  }
  tt_write_all(stdout, &b);
  tt_buf_free(&b);
  json_decref(events);
  return TT_EXIT_OK;
}

static int tt_trace_list_print(const char *state_dir, long limit, bool json) {
  size_t n;
  char **ids = tt_trace_list(state_dir, &n);
  tt_term t = tt_term_probe(stdout);
  tt_buf b = TT_BUF_INIT;
  json_t *arr = json_array();
  size_t shown = 0;
  for (size_t k = n; k > 0 && shown < (size_t)limit; k--, shown++) {
    const char *id = ids[k - 1];
    tt_error err;
    json_t *events = tt_trace_load(state_dir, id, &err);
    if (!events) continue; /* a trace being written, or not a trace */
    const json_t *start = NULL, *end = NULL, *ev;
    size_t i;
    json_array_foreach(events, i, ev) {
      if (strcmp(tt_jstr(ev, "event"), "run_start") == 0) start = ev;
      if (strcmp(tt_jstr(ev, "event"), "run_end") == 0) end = ev;
    }
    const json_t *tot = json_object_get(end, "totals");
    if (json) {
      json_array_append_new(arr, json_pack("{s:s,s:s,s:s,s:s,s:f,s:I}", "run_id", id, "question",
                                           tt_jstr(start, "question"), "status",
                                           end ? tt_jstr(end, "status") : "unfinished", "ts",
                                           tt_jstr(start, "ts"), "seconds",
                                           tt_jnum(tot, "wall_ms") / 1000, "llm_calls",
                                           (json_int_t)json_integer_value(json_object_get(tot, "llm_calls"))));
    } else {
      tt_buf_printf(&b, "%s  %-10s %5.1f s  ", id, end ? tt_jstr(end, "status") : "unfinished",
                    tt_jnum(tot, "wall_ms") / 1000);
      tt_put_safe(&b, tt_jstr(start, "question"), 70);
      tt_buf_putc(&b, '\n');
    }
    json_decref(events);
  }
  if (json) {
    tt_buf_reset(&b);
    tt_json_dump(&b, arr, JSON_COMPACT | JSON_REAL_PRECISION(15));
    tt_buf_putc(&b, '\n');
  } else if (n == 0) {
    tt_buf_printf(&b, "no runs yet in %s/runs\n", state_dir);
  }
  (void)t;
  tt_write_all(stdout, &b);
  tt_buf_free(&b);
  json_decref(arr);
  tt_strv_free(ids, n);
  return TT_EXIT_OK;
}

int cmd_trace(int argc, char **argv) {
  tt_trace_cli t = {.limit = 20};
  int rc0 = tt_opts_parse(&tt_cmd_trace, argc, argv, 1, tt_trace_option, &t);
  if (rc0 != TT_OPTS_GO) return rc0;
  bool json = t.json;
  long limit = t.limit;
  const char *state = t.state;
  if (argc - optind != 1) return tt_usage_error("trace", "give latest, list or a run id");
  const char *what = argv[optind];
  tt_config cfg;
  tt_config_init(&cfg);
  cfg.state_dir = state;
  tt_error err;
  tt_config_resolve(&cfg, &err);
  const char *dir = tt_config_state_dir(&cfg);
  int rc;
  if (strcmp(what, "list") == 0) {
    rc = tt_trace_list_print(dir, limit, json);
  } else if (strcmp(what, "latest") == 0) {
    size_t n;
    char **ids = tt_trace_list(dir, &n);
    rc = n ? tt_trace_print(dir, ids[n - 1], json)
           : tt_fail(TT_EXIT_FAIL, "no runs yet in %s/runs; ask a question first", dir);
    tt_strv_free(ids, n);
  } else {
    rc = tt_trace_print(dir, what, json);
  }
  tt_config_free(&cfg);
  return rc;
}
