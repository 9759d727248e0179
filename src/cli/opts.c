/* opts.c — the one option parser of the commands: each command describes
 * its options as a table built from shared groups (tt_cmd_spec), and this
 * file turns that table into getopt_long's arrays, dispatches each option
 * to the command, reports usage errors the same way everywhere, and prints
 * --help from the same table (one screen; the man page says the rest).
 * Shell completion (cmd_completion.c) reads the same tables. */
#include "cli/cli.h"

#include <stdlib.h>
#include <string.h>

static const tt_opt tt_model_opts[] = {
    {TT_OPT_MODEL_PATH, "model-path", 0, TT_ARG_REQUIRED, "FILE", "a GGUF model run in-process", TT_COMPLETE_FILE, NULL},
    {TT_OPT_CTX, "ctx", 0, TT_ARG_REQUIRED, "N", "context tokens", TT_COMPLETE_NOTHING, NULL},
    {TT_OPT_THREADS, "threads", 0, TT_ARG_REQUIRED, "N", "CPU threads of the local model", TT_COMPLETE_NOTHING, NULL},
    {TT_OPT_BASE_URL, "base-url", 0, TT_ARG_REQUIRED, "URL", "an OpenAI-compatible endpoint instead", TT_COMPLETE_NOTHING, NULL},
    {TT_OPT_MODEL, "model", 0, TT_ARG_REQUIRED, "NAME", "the model name sent to it", TT_COMPLETE_NOTHING, NULL},
    {TT_OPT_API_KEY_ENV, "api-key-env", 0, TT_ARG_REQUIRED, "VAR", "the variable holding the API key", TT_COMPLETE_NOTHING, NULL},
    {TT_OPT_LLM_TIMEOUT, "llm-timeout", 0, TT_ARG_REQUIRED, "S", "seconds of silence from the endpoint", TT_COMPLETE_NOTHING, NULL},
    {TT_OPT_LLM_DEADLINE, "llm-deadline", 0, TT_ARG_REQUIRED, "S", "seconds for one model call", TT_COMPLETE_NOTHING, NULL},
    {TT_OPT_NO_STREAM, "no-stream", 0, TT_ARG_NONE, NULL, "whole replies instead of a stream", TT_COMPLETE_NOTHING, NULL},
    {TT_OPT_MAX_TOKENS, "max-tokens", 0, TT_ARG_REQUIRED, "N", "longest reply", TT_COMPLETE_NOTHING, NULL},
    {TT_OPT_TEMPERATURE, "temperature", 0, TT_ARG_REQUIRED, "T", "sampling temperature", TT_COMPLETE_NOTHING, NULL},
    {TT_OPT_SEED, "seed", 0, TT_ARG_REQUIRED, "N", "sampling seed", TT_COMPLETE_NOTHING, NULL},
    {TT_OPT_PROFILE, "profile", 0, TT_ARG_REQUIRED, "NAME", "how the model is prompted", TT_COMPLETE_WORDS,
     "qwen2.5 qwen3 llama3.1 mistral generic sql-writer"},
    {0, NULL, 0, 0, NULL, NULL, 0, NULL},
};
const tt_opt_group tt_opts_model = {"Model", true, tt_model_opts};

static const tt_opt tt_data_opts[] = {
    {TT_OPT_SQL_TIMEOUT, "timeout", 0, TT_ARG_REQUIRED, "S", "time limit of each SQL query", TT_COMPLETE_NOTHING, NULL},
    {TT_OPT_SCHEMA_BUDGET, "schema-budget", 0, TT_ARG_REQUIRED, "N", "prompt tokens for schema cards", TT_COMPLETE_NOTHING, NULL},
    {TT_OPT_STATE_DIR, "state-dir", 0, TT_ARG_REQUIRED, "DIR", "threads, traces and charts", TT_COMPLETE_DIR, NULL},
    {0, NULL, 0, 0, NULL, NULL, 0, NULL},
};
const tt_opt_group tt_opts_limits = {"Limits", true, tt_data_opts};

static const tt_opt tt_dbfile_opts[] = {
    TT_OPT_DB_URL_ENTRY,
    TT_OPT_SCHEMAS_ENTRY,
    {TT_OPT_IMMUTABLE, "immutable", 0, TT_ARG_NONE, NULL, "open the database with immutable=1", TT_COMPLETE_NOTHING, NULL},
    {TT_OPT_HEADER, "header", 0, TT_ARG_NONE, NULL, "a CSV file's first line names the columns", TT_COMPLETE_NOTHING, NULL},
    {TT_OPT_NO_HEADER, "no-header", 0, TT_ARG_NONE, NULL, "a CSV file's first line is data", TT_COMPLETE_NOTHING, NULL},
    {TT_OPT_KNOWLEDGE, "knowledge", 0, TT_ARG_REQUIRED, "FILE", "what you know about the data", TT_COMPLETE_FILE, NULL},
    {0, NULL, 0, 0, NULL, NULL, 0, NULL},
};
const tt_opt_group tt_opts_db = {"Database", true, tt_dbfile_opts};

static const tt_opt tt_chart_opts[] = {
    {TT_OPT_SIZE, "size", 0, TT_ARG_REQUIRED, "WxH", "chart pixels (1200x700)", TT_COMPLETE_NOTHING, NULL},
    {TT_OPT_CHART_FORMAT, "chart-format", 0, TT_ARG_REQUIRED, "png|svg", "chart files", TT_COMPLETE_WORDS, "png svg"},
    {TT_OPT_NO_PREVIEW, "no-preview", 0, TT_ARG_NONE, NULL, "no chart preview in the terminal", TT_COMPLETE_NOTHING, NULL},
    {0, NULL, 0, 0, NULL, NULL, 0, NULL},
};
const tt_opt_group tt_opts_chart = {"Charts", true, tt_chart_opts};

static const tt_opt tt_run_opts[] = {
    {TT_OPT_THREAD, "thread", 0, TT_ARG_REQUIRED, "NAME", "keep follow-up context under NAME", TT_COMPLETE_NOTHING, NULL},
    {TT_OPT_SHOW_THINKING, "show-thinking", 0, TT_ARG_NONE, NULL, "print the model's thoughts (stderr)", TT_COMPLETE_NOTHING, NULL},
    {TT_OPT_QUIET, "quiet", 'q', TT_ARG_NONE, NULL, "no progress lines: only the result", TT_COMPLETE_NOTHING, NULL},
    {0, NULL, 0, 0, NULL, NULL, 0, NULL},
};
const tt_opt_group tt_opts_run = {NULL, false, tt_run_opts};

static const tt_opt tt_help_opt = {TT_OPT_HELP, "help", 'h', TT_ARG_NONE, NULL, "show this help",
                                   TT_COMPLETE_NOTHING, NULL};

/* "--name META" / "--name[=META]" / "-x, --name META" */
static void tt_opt_spelling(tt_buf *b, const tt_opt *o, bool with_short) {
  if (with_short) {
    if (o->short_name) tt_buf_printf(b, "-%c, ", o->short_name);
    else tt_buf_puts(b, "    ");
  }
  tt_buf_printf(b, "--%s", o->name);
  if (o->arg == TT_ARG_REQUIRED) tt_buf_printf(b, " %s", o->meta ? o->meta : "VALUE");
  else if (o->arg == TT_ARG_OPTIONAL) tt_buf_printf(b, "[=%s]", o->meta ? o->meta : "VALUE");
}

/* "  -f, --format FMT" */
static size_t tt_opt_width(const tt_opt *o) {
  tt_buf b = TT_BUF_INIT;
  tt_opt_spelling(&b, o, true);
  size_t w = 2 + b.len;
  tt_buf_free(&b);
  return w;
}

/* "  -f, --format FMT      help", the help starting at column col */
static void tt_opt_line(tt_buf *b, const tt_opt *o, size_t col) {
  size_t at = b->len;
  tt_buf_puts(b, "  ");
  tt_opt_spelling(b, o, true);
  size_t w = b->len - at;
  tt_buf_printf(b, "%*s%s\n", w + 2 <= col ? (int)(col - w) : 2, "", o->help);
}

void tt_opts_help(const tt_cmd_spec *s, FILE *f) {
  tt_buf b = TT_BUF_INIT;
  const char *u = s->usage;
  bool first = true;
  while (*u) { /* each synopsis line gets the prefix */
    const char *nl = strchr(u, '\n');
    size_t n = nl ? (size_t)(nl - u) : strlen(u);
    tt_buf_printf(&b, "%s%.*s\n", first ? "Usage: " : "       ", (int)n, u);
    first = false;
    u += n + (nl ? 1 : 0);
  }
  tt_buf_printf(&b, "\n%s\n\nOptions:\n", s->about);
  size_t col = 24; /* one column for the help of every option */
  for (size_t g = 0; s->groups[g]; g++)
    if (!s->groups[g]->compact)
      for (const tt_opt *o = s->groups[g]->opts; o->name; o++)
        if (tt_opt_width(o) + 2 > col) col = tt_opt_width(o) + 2;
  for (size_t g = 0; s->groups[g]; g++) {
    const tt_opt_group *gr = s->groups[g];
    if (gr->compact) continue;
    for (const tt_opt *o = gr->opts; o->name; o++) tt_opt_line(&b, o, col);
  }
  tt_opt_line(&b, &tt_help_opt, col);
  for (size_t g = 0; s->groups[g]; g++) { /* the shared groups by name */
    const tt_opt_group *gr = s->groups[g];
    if (!gr->compact) continue;
    tt_buf_printf(&b, "%s:", gr->title);
    size_t at = strlen(gr->title) + 1;
    for (const tt_opt *o = gr->opts; o->name; o++) {
      tt_buf one = TT_BUF_INIT;
      tt_opt_spelling(&one, o, false);
      if (at + 1 + one.len > 79) {
        tt_buf_puts(&b, "\n ");
        at = 1;
      }
      tt_buf_printf(&b, " %s", tt_buf_cstr(&one));
      at += 1 + one.len;
      tt_buf_free(&one);
    }
    tt_buf_putc(&b, '\n');
  }
  if (s->footer) tt_buf_printf(&b, "%s\n", s->footer);
  tt_buf_puts(&b, "Every option is explained in `man tabletalk`.\n");
  fwrite(b.data, 1, b.len, f);
  tt_buf_free(&b);
}

int tt_opts_parse(const tt_cmd_spec *s, int argc, char **argv, int first, tt_opt_handler fn,
                  void *ud) {
  size_t n = 1;
  for (size_t g = 0; s->groups[g]; g++)
    for (const tt_opt *o = s->groups[g]->opts; o->name; o++) n++;
  const tt_opt **all = tt_xcalloc(n, sizeof *all);
  struct option *longs = tt_xcalloc(n + 1, sizeof *longs);
  tt_buf shorts = TT_BUF_INIT;
  tt_buf_puts(&shorts, ":"); /* a missing value is ':', not '?' */
  size_t k = 0;
  all[k++] = &tt_help_opt;
  for (size_t g = 0; s->groups[g]; g++)
    for (const tt_opt *o = s->groups[g]->opts; o->name; o++) all[k++] = o;
  for (size_t i = 0; i < k; i++) {
    const tt_opt *o = all[i];
    int has = o->arg == TT_ARG_REQUIRED ? required_argument
              : o->arg == TT_ARG_OPTIONAL ? optional_argument : no_argument;
    longs[i] = (struct option){o->name, has, NULL, o->id};
    if (o->short_name) {
      tt_buf_putc(&shorts, o->short_name);
      if (o->arg == TT_ARG_REQUIRED) tt_buf_putc(&shorts, ':');
      else if (o->arg == TT_ARG_OPTIONAL) tt_buf_puts(&shorts, "::");
    }
  }
  int rc = TT_OPTS_GO, c;
  optind = first;
  opterr = 0;
  while (rc == TT_OPTS_GO && (c = getopt_long(argc, argv, tt_buf_cstr(&shorts), longs, NULL)) != -1) {
    if (c == ':') {
      rc = tt_usage_error(s->name, "option '%s' needs a value", argv[optind - 1]);
      break;
    }
    int id = 0;
    for (size_t i = 0; i < k && !id; i++)
      if (all[i]->id == c || (all[i]->short_name && all[i]->short_name == c)) id = all[i]->id;
    if (!id) {
      rc = tt_usage_error(s->name, "unknown option '%s'", argv[optind - 1]);
      break;
    }
    if (id == TT_OPT_HELP) {
      tt_opts_help(s, stdout);
      rc = TT_EXIT_OK;
      break;
    }
    int r = fn(ud, id, optarg);
    if (r) rc = r;
  }
  free(all);
  free(longs);
  tt_buf_free(&shorts);
  return rc;
}
