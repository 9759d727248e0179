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
    {TT_OPT_MODEL_PATH, "model-path", 0, TT_ARG_REQUIRED, "FILE", "a GGUF model run in-process", TT_COMPLETE_FILE, NULL,
     "A GGUF model run in-process through llama.cpp (`TABLETALK_MODEL_PATH`; the default is the one "
     "`tabletalk pull` installed). The model is chosen from `--model-path`, then `--base-url`, then "
     "`TABLETALK_MODEL_PATH`, then the pulled default, then `TABLETALK_BASE_URL`; with none, the error "
     "says how to get one (`tabletalk models --which` prints the choice and where it came from)."},
    {TT_OPT_CTX, "ctx", 0, TT_ARG_REQUIRED, "N", "context tokens", TT_COMPLETE_NOTHING, NULL,
     "Context tokens. In-process the default is 16384, capped by the model's trained context and "
     "by the available memory, never under 4096. With `--base-url`, give the server's context, so "
     "that conversations are fitted to it: prompts are counted before they are sent, results show "
     "fewer rows when they would not fit, older results and earlier questions are shortened first, "
     "and a question fails only when the system prompt alone cannot fit (without it only results "
     "are capped, and the server's own limit applies)."},
    {TT_OPT_THREADS, "threads", 0, TT_ARG_REQUIRED, "N", "CPU threads of the local model", TT_COMPLETE_NOTHING, NULL,
     "CPU threads of the in-process model (`TABLETALK_THREADS`; default: all cores)."},
    {TT_OPT_BASE_URL, "base-url", 0, TT_ARG_REQUIRED, "URL", "an OpenAI-compatible endpoint instead", TT_COMPLETE_NOTHING, NULL,
     "An OpenAI-compatible endpoint instead (`TABLETALK_BASE_URL`): llama-server, vLLM, Ollama, "
     "LM Studio, a hosted API; the URL usually ends in `/v1`. A malformed URL, given here or in the "
     "variable, is a usage error (exit 2) that says where it came from. A reply that is not the API's "
     "(an HTML page, other content) is reported as such. A tool call the model wrote as text (tags, a "
     "json block, bare JSON) is recovered; plain text where a call is required is pushed back once, "
     "and text shaped like a call or JSON is never shown as the answer; reasoning stays out of the "
     "answer; a reply cut at the token limit is asked again once with twice the room; OpenAI "
     "reasoning models get max_completion_tokens and no temperature, and a 400 naming an unsupported "
     "parameter is adapted to once. `tabletalk doctor --base-url` *URL* checks a server; each one's "
     "flags are in docs/guide/servers.md."},
    {TT_OPT_MODEL, "model", 0, TT_ARG_REQUIRED, "NAME", "the model name sent to it", TT_COMPLETE_NOTHING, NULL,
     "The model name sent to the endpoint (`TABLETALK_MODEL`)."},
    {TT_OPT_EMBED_MODEL, "embed-model", 0, TT_ARG_REQUIRED, "NAME", "the endpoint's embedding model", TT_COMPLETE_NOTHING, NULL,
     "The model named in the endpoint's `/v1/embeddings` requests when it is not the chat model "
     "(`TABLETALK_EMBED_MODEL`; e.g. an embedding model Ollama or vLLM also serves). Naming one "
     "turns `--embeddings auto` on."},
    {TT_OPT_API_KEY_ENV, "api-key-env", 0, TT_ARG_REQUIRED, "VAR", "the variable holding the API key", TT_COMPLETE_NOTHING, NULL,
     "The variable holding the API key, sent as a bearer token (default `TABLETALK_API_KEY`)."},
    {TT_OPT_LLM_TIMEOUT, "llm-timeout", 0, TT_ARG_REQUIRED, "S", "seconds of silence from the endpoint", TT_COMPLETE_NOTHING, NULL,
     "Give up when the endpoint sends nothing for *S* seconds (120; `TABLETALK_LLM_TIMEOUT`): the "
     "wait for the first byte and any pause in a stream (keep-alive comments do not count). A reply "
     "still streaming is not cut, and a timeout is not retried (connection errors, 429 and 5xx are, "
     "three times with backoff; the error then says how many attempts over how long)."},
    {TT_OPT_LLM_DEADLINE, "llm-deadline", 0, TT_ARG_REQUIRED, "S", "seconds for one model call", TT_COMPLETE_NOTHING, NULL,
     "One model call may take *S* seconds in all, retries included, however steadily the endpoint "
     "streams (600; `TABLETALK_LLM_DEADLINE`)."},
    {TT_OPT_NO_STREAM, "no-stream", 0, TT_ARG_NONE, NULL, "whole replies instead of a stream", TT_COMPLETE_NOTHING, NULL,
     "Ask the endpoint for whole replies instead of a stream."},
    {TT_OPT_MAX_TOKENS, "max-tokens", 0, TT_ARG_REQUIRED, "N", "longest reply", TT_COMPLETE_NOTHING, NULL,
     "The longest reply, in tokens (2048)."},
    {TT_OPT_TEMPERATURE, "temperature", 0, TT_ARG_REQUIRED, "T", "sampling temperature", TT_COMPLETE_NOTHING, NULL,
     "Sampling temperature (0, from 0 to 2)."},
    {TT_OPT_SEED, "seed", 0, TT_ARG_REQUIRED, "N", "sampling seed", TT_COMPLETE_NOTHING, NULL,
     "Sampling seed (for `eval spider`, the seed that shuffles the questions instead)."},
    {TT_OPT_PROFILE, "profile", 0, TT_ARG_REQUIRED, "NAME", "how the model is prompted", TT_COMPLETE_WORDS,
     "qwen2.5 qwen3 llama3.1 mistral generic sql-writer",
     "How the model is prompted, instead of the profile detected from the GGUF's chat template or "
     "the model's name (`TABLETALK_PROFILE`): `qwen2.5`, `qwen3`, `llama3.1`, `mistral`, `generic` or "
     "`sql-writer`. An unknown name is a usage error that lists them.\n\n"
     "With `sql-writer` (chosen by itself for a model named OmniSQL or XiYanSQL) no tools are "
     "offered: each SQL step is the writer's own trained prompt (OmniSQL's: the schema as CREATE "
     "TABLE statements with sample values as comments, the question, its instructions; XiYanSQL's "
     "with M-Schema), the model writes freely, and the last ```sql block of its reply is the query. "
     "The query runs read-only as always; an error goes back in the same prompt among its "
     "instructions, up to three tries. A second short step asks the model to say the answer from "
     "the rows; when it cannot (code, numbers no row holds, a cut or empty reply) the answer is a "
     "sentence built from the result (\"The query returned 1 row: Rock, 1297.\"). Such a model never "
     "asks a clarifying question (it answers the likeliest reading and is asked to say which one), "
     "and a chart the question asks for is drawn from the result, or the answer says why none could "
     "be."},
    {0, NULL, 0, 0, NULL, NULL, 0, NULL, NULL},
};
const tt_opt_group tt_opts_model = {"Model", true, tt_model_opts};

static const tt_opt tt_data_opts[] = {
    {TT_OPT_SQL_TIMEOUT, "timeout", 0, TT_ARG_REQUIRED, "S", "time limit of each SQL query", TT_COMPLETE_NOTHING, NULL,
     TT_DOC_SQL_TIMEOUT},
    {TT_OPT_SCHEMA_BUDGET, "schema-budget", 0, TT_ARG_REQUIRED, "N", "prompt tokens for schema cards", TT_COMPLETE_NOTHING, NULL,
     "Estimated tokens for everything about the schema in the prompt (default 2000). When every "
     "card fits, all go into the system prompt; otherwise the system prompt carries an index of "
     "every table within 20% of a 1,000-token budget, one point more for each 200 tokens up to 40% (names with key columns, or names, or names grouped by "
     "prefix, or as many as fit and how many more there are) and each question gets the cards of "
     "its most relevant tables in the rest. The knowledge file's definitions and examples for a "
     "question count within the budget too. `tabletalk schema` *DB* `--budget` *N* shows the cost.\n\n"
     "Values a question names link it to their columns: distinct text values of every text column "
     "of the tables, not views (up to 1,000 per column of at most 64 bytes, 200,000 in all, from "
     "the first 50,000 rows of each table), matched ignoring case and accents and forgiving a typo "
     "in longer words, reach the model as lines after the question ('AC/DC' is a value of "
     "Artist.Name) and put their tables first. The index is kept under `$TABLETALK_CACHE_DIR/values/` "
     "and rebuilt when the database file or its schema changes."},
    {TT_OPT_SELECTOR, "selector", 0, TT_ARG_REQUIRED, "on|off|auto", "the model names the tables first", TT_COMPLETE_WORDS, "on off auto",
     "A selector step for huge schemas: before the first prompt of a question, one model call "
     "of its own shows the model every table on one line (its name, its foreign keys with the "
     "table each points at, then other columns up to six) and the model names the tables the question "
     "needs with one call of `pick_tables`; those tables' cards go first, and the ranking fills "
     "the room left. `auto` (the default) runs it from 400 tables, `on` whenever the schema is "
     "over the budget, `off` never. The step costs a call whose prompt grows with the schema "
     "(some 30 tokens a table); `tabletalk schema` *DB* `--budget` shows its cost. A failed "
     "call, or one naming no table, leaves the choice to the ranking, with a warning."},
    {TT_OPT_EMBEDDINGS, "embeddings", 0, TT_ARG_REQUIRED, "auto|on|off", "rank tables by meaning too", TT_COMPLETE_WORDS, "auto on off",
     "An embedding score in the ranking of tables for a question (`TABLETALK_EMBEDDINGS`): the "
     "cosine between the question's vector and each table's, made from its name, its description "
     "and its columns' names and descriptions, never from a value of the data (also in private "
     "mode). It decides the order when no word of the question matches the schema (\"staff "
     "members\" for an Employee table with a description) and otherwise adds at most 30% of the "
     "best word match, so it never outweighs the words. `auto` (the default) uses it when an "
     "embedding model is named (`--embed-model`), `on` also with the chat model itself (the "
     "in-process model's mean-pooled states, or the endpoint's `/v1/embeddings`), `off` never. "
     "The tables' vectors are made once per database and model and kept under "
     "`$TABLETALK_CACHE_DIR/vectors/` (cleaned up by `tabletalk gc`); each question costs one "
     "embedding of its text. An endpoint without embeddings is noticed once and the score is then "
     "off, with a warning; the question goes on."},
    {TT_OPT_STATE_DIR, "state-dir", 0, TT_ARG_REQUIRED, "DIR", "threads, traces and charts", TT_COMPLETE_DIR, NULL,
     TT_DOC_STATE_DIR},
    {TT_OPT_PRIVATE, "private", 0, TT_ARG_NONE, NULL, "the model never sees a value of the data", TT_COMPLETE_NOTHING, NULL,
     "Private mode (`TABLETALK_PRIVATE=1`, also in the config file): the model receives the schema "
     "(names, types, keys, comments, the knowledge file's descriptions) without example values or "
     "row counts, and of each result only its shape (label, columns, types, row count, whether it "
     "was cut), never a cell, a sample row, a value-index match or a chart's data. Values the "
     "question spells exactly as the database holds them are passed back as the user's own words. "
     "The model answers with references to the results ({{q1.r1.Total}}), which tabletalk fills in "
     "locally; a question that needs the model to read values (summarise these reviews) is refused "
     "(exit 3) with the reason. Charts are drawn locally. Not available with `--profile sql-writer`. "
     "What leaves the machine and what never does: docs/guide/private.md."},
    {0, NULL, 0, 0, NULL, NULL, 0, NULL, NULL},
};
const tt_opt_group tt_opts_limits = {"Limits", true, tt_data_opts};

static const tt_opt tt_dbfile_opts[] = {
    TT_OPT_DB_URL_ENTRY,
    TT_OPT_ENGINE_ENTRY,
    TT_OPT_SCHEMAS_ENTRY,
    TT_OPT_TRUST_FUNCTIONS_ENTRY,
    {TT_OPT_IMMUTABLE, "immutable", 0, TT_ARG_NONE, NULL, "open the database with immutable=1", TT_COMPLETE_NOTHING, NULL,
     TT_DOC_IMMUTABLE},
    {TT_OPT_HEADER, "header", 0, TT_ARG_NONE, NULL, "a CSV file's first line names the columns", TT_COMPLETE_NOTHING, NULL,
     TT_DOC_HEADER},
    {TT_OPT_NO_HEADER, "no-header", 0, TT_ARG_NONE, NULL, "a CSV file's first line is data", TT_COMPLETE_NOTHING, NULL,
     TT_DOC_NO_HEADER},
    {TT_OPT_CSV_TYPES, "csv-types", 0, TT_ARG_REQUIRED, "COL=TYPE,...", "types of CSV columns", TT_COMPLETE_NOTHING, NULL,
     TT_DOC_CSV_TYPES},
    {TT_OPT_KNOWLEDGE, "knowledge", 0, TT_ARG_REQUIRED, "FILE", "what you know about the data", TT_COMPLETE_FILE, NULL,
     TT_DOC_KNOWLEDGE},
    {0, NULL, 0, 0, NULL, NULL, 0, NULL, NULL},
};
const tt_opt_group tt_opts_db = {"Database", true, tt_dbfile_opts};

static const tt_opt tt_chart_opts[] = {
    {TT_OPT_SIZE, "size", 0, TT_ARG_REQUIRED, "WxH", "chart pixels (1200x700)", TT_COMPLETE_NOTHING, NULL,
     TT_DOC_CHART_SIZE},
    {TT_OPT_CHART_FORMAT, "chart-format", 0, TT_ARG_REQUIRED, "png|svg", "chart files", TT_COMPLETE_WORDS, "png svg",
     "The kind of chart file the agent writes: `png` (cairo; the default) or `svg` (valid XML, text "
     "as text). Without cairo the chart is written as SVG."},
    {TT_OPT_NO_PREVIEW, "no-preview", 0, TT_ARG_NONE, NULL, "no chart preview in the terminal", TT_COMPLETE_NOTHING, NULL,
     "No chart preview in the terminal after the answer (on a terminal one is shown: horizontal "
     "bars of Unicode blocks, or a braille plot for lines, areas and scatter plots)."},
    {0, NULL, 0, 0, NULL, NULL, 0, NULL, NULL},
};
const tt_opt_group tt_opts_chart = {"Charts", true, tt_chart_opts};

static const tt_opt tt_run_opts[] = {
    {TT_OPT_THREAD, "thread", 0, TT_ARG_REQUIRED, "NAME", "keep follow-up context under NAME", TT_COMPLETE_NOTHING, NULL,
     "Keep follow-up context under *NAME*: a later question in the same thread sees the earlier "
     "ones, and a reply to a clarifying question continues that question. Threads live in "
     "*STATE*/threads.sqlite; `chat` and `tabletalk web` use the same ones."},
    {TT_OPT_SHOW_THINKING, "show-thinking", 0, TT_ARG_NONE, NULL, "print the model's thoughts (stderr)", TT_COMPLETE_NOTHING, NULL,
     "Print on stderr, as lines starting with `think`, what the model writes before each tool call "
     "(its reasoning, Qwen3's <think> block, an endpoint's reasoning_content). It is in the trace "
     "either way and never part of the answer."},
    {TT_OPT_QUIET, "quiet", 'q', TT_ARG_NONE, NULL, "no progress lines: only the result", TT_COMPLETE_NOTHING, NULL,
     "No progress lines, only the result."},
    {0, NULL, 0, 0, NULL, NULL, 0, NULL, NULL},
};
const tt_opt_group tt_opts_run = {NULL, false, tt_run_opts};

/* -h, --help: every command has it (the man page lists it once, as @help) */
const tt_opt tt_opts_help_opt[] = {
    {TT_OPT_HELP, "help", 'h', TT_ARG_NONE, NULL, "show this help", TT_COMPLETE_NOTHING, NULL,
     "Print the command's help and exit 0: the synopsis, a sentence, the command's own options "
     "one a line, then the groups of options it shares with other commands by name. It fits one "
     "screen (24 lines of 80 columns). `tabletalk help` *COMMAND* prints the same."},
    {0, NULL, 0, 0, NULL, NULL, 0, NULL, NULL},
};

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
  tt_opt_line(&b, &tt_opts_help_opt[0], col);
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
  all[k++] = &tt_opts_help_opt[0];
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
