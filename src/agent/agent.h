/* agent.h — public face of the agent layer: the loop that turns a question
 * into an answer. It builds the prompt (rules, tools, schema cards), asks
 * the model for one tool call per step, runs run_sql through the guarded
 * executor, shows the rows to the model as data, lets it repair errors,
 * stops it at the budgets, checks its answer against what actually ran, and
 * returns the answer with the SQL and rows behind it. make_chart draws the
 * rows of the latest successful query as a chart (the front end's hook
 * saves the file).
 *
 * The agent persists nothing and prints nothing: front ends receive events
 * (for progress lines and traces) and the final tt_run. */
#ifndef TT_AGENT_H
#define TT_AGENT_H

#include <signal.h>

#include "chart/chart.h"
#include "llm/llm.h"
#include "schema/schema.h"

typedef enum tt_run_status {
  TT_RUN_ANSWERED,  /* the model answered */
  TT_RUN_CLARIFY,   /* the model asked the user a question */
  TT_RUN_FAILED,    /* the model or endpoint failed; see error */
  TT_RUN_BUDGET,    /* the tool-call budget ran out without an answer */
  TT_RUN_CANCELLED, /* stopped by the user */
  TT_RUN_REFUSED,   /* the model tried to change the database and was refused
                     * (whatever it said afterwards) */
} tt_run_status;

const char *tt_run_status_name(tt_run_status s);

/* " — did you mean Track.Name?": the hint the agent gives the model for an
 * SQL error about an unknown or ambiguous table or column, looking first at
 * the tables sql names (sql may be NULL), for any front end that runs SQL a
 * person typed. Freshly allocated; NULL when there is nothing to say. */
char *tt_agent_sql_hint(const tt_catalog *cat, const char *sql, const char *message);

/* An earlier question of the same thread, as a follow-up sees it. */
typedef struct tt_turn {
  const char *question;
  const char *answer;  /* or the clarifying question asked */
  const char *sql;     /* final SQL, NULL when none */
  const char *summary; /* a short description of its result */
  const char *numbers; /* the values its results held (space-separated), or NULL */
  const char *notes;   /* its tt_run.notes, or NULL */
  tt_run_status status;
} tt_turn;

/* Whether a selector step names the tables before the first prompt
 * (selector.c): by the schema's size, or forced. */
typedef enum tt_selector_mode { TT_SELECTOR_AUTO, TT_SELECTOR_ON, TT_SELECTOR_OFF } tt_selector_mode;
/* Whether an embedding score joins the ranking (--embeddings). */
typedef enum tt_embed_mode { TT_EMBED_AUTO, TT_EMBED_ON, TT_EMBED_OFF } tt_embed_mode;

typedef struct tt_agent_opts {
  int max_tool_calls;    /* per question (default 8) */
  int max_failed_sql;    /* in a row before the model must explain (3) */
  int rows_to_model;     /* rows shown to the model per result (30; fewer when
                          * they would take too much of the model's context) */
  size_t schema_budget;  /* prompt tokens for all of the schema: the table
                          * index and the cards together (2000) */
  tt_db_opts sql;        /* limits for each query (timeout 5 s, 200 rows) */
  int history_turns;     /* earlier questions of the thread shown (6; fewer when
                          * the model's context cannot hold them) */
  long chart_rows;       /* rows a chart may use: a cut result is read again
                          * up to this many (10000) */
  tt_selector_mode selector; /* auto: on from 400 tables */
  /* An embedding score in the table ranking (embed.c): on, off, or auto:
   * on when an embedding model was named (embed_model_named, or embed_llm
   * given), off otherwise. */
  tt_embed_mode embeddings;
  bool embed_model_named; /* --embed-model: the endpoint's embedding model */
  tt_llm *embed_llm;      /* what embeds (borrowed); NULL: the agent's model */
} tt_agent_opts;

tt_agent_opts tt_agent_default_opts(void);

/* The one stream of events a question produces (docs/reference/events.md):
 * the agent emits them once; the session layer adds the question's start
 * and end, traces each, and front ends render the same events (the web
 * page's stream, MCP progress, the terminal). */
typedef enum tt_event_kind {
  TT_EV_RUN_START,    /* session: the question starts (data: its facts) */
  TT_EV_SCHEMA,       /* the tables whose cards go with the question, and why */
  TT_EV_QUEUED,       /* session: the question waits for the model another holds */
  TT_EV_MODEL_WAIT,   /* a model call starts */
  TT_EV_MODEL_CALL,   /* a model call ended (reply or error) */
  TT_EV_THOUGHT,      /* what the model thought before its call (text) */
  TT_EV_SQL,          /* run_sql ran, failed or was refused */
  TT_EV_CHART,        /* make_chart drew a chart or failed */
  TT_EV_CLARIFY,      /* the model asks the user (text: its question) */
  TT_EV_CONTEXT,      /* something was cut to fit the model's context */
  TT_EV_VERIFY,       /* the answer check decided something */
  TT_EV_WARNING,      /* something went wrong beside the answer (text): a tool call
                       * that could not be used, a turn that was not saved */
  TT_EV_ANSWER,       /* the answer (text) */
  TT_EV_TEXT,         /* live only, not traced: a piece of the answer as it is
                       * written (text, n bytes) */
  TT_EV_TEXT_RESTART, /* live only: the text so far was not the answer */
  TT_EV_RUN_END,      /* session: the question is over (data: the run's JSON) */
} tt_event_kind;

/* "run_start", "schema", "queued", "model_wait", "model_call", "thought",
 * "sql", "chart", "clarification", "context", "verify", "warning",
 * "answer", "text", "text_restart", "run_end": the "event" of its JSON. */
const char *tt_event_name(tt_event_kind kind);

typedef struct tt_event {
  tt_event_kind kind;
  int step;                        /* model calls so far in this question */
  /* TT_EV_MODEL_CALL */
  const tt_llm_reply *reply;       /* NULL when the call failed */
  const tt_error *llm_error;       /* set when it failed */
  /* TT_EV_SQL, TT_EV_CHART, TT_EV_WARNING (a rejected call) */
  const char *tool;
  const char *args;                /* as the model wrote them */
  const char *sql;                 /* the query (a chart: the one it draws) */
  bool ok;
  long rows;
  bool truncated;
  double ms;
  const char *error;               /* why it failed or was rejected */
  const tt_error *sql_error;       /* TT_EV_SQL that failed: kind and refusal */
  const char *chart;               /* make_chart: "bar chart, 5 bars: ..." */
  const char *chart_file;          /* make_chart: the file saved, or NULL */
  /* TT_EV_THOUGHT, TT_EV_CLARIFY, TT_EV_WARNING, TT_EV_ANSWER, TT_EV_TEXT */
  const char *text;
  size_t n;                        /* TT_EV_TEXT: bytes of text */
  /* TT_EV_VERIFY */
  const char *decision;            /* "verified", "push_back", "accept_unverified" */
  const char *verified;            /* "bound", "checked", "unbacked" (NULL: push_back) */
  size_t nfacts;                   /* references filled in */
  size_t nref_errors;              /* references that did not resolve */
  const char *reason;
  size_t numbers_checked;          /* numbers the answer states */
  const char *const *unbacked;     /* those no result backs, as written */
  size_t nunbacked;
  /* TT_EV_CONTEXT */
  const char *action;              /* "result_cut": a result shows fewer rows (rows,
                                    * rows_shown); "shortened": older results and
                                    * turns were shortened before a call; "too_big":
                                    * the question cannot fit (error says why) */
  long tokens_before, tokens_after; /* the prompt's (result_cut: the result's) */
  long limit;                      /* what the prompt may take (result_cut: the result) */
  long context, reserve;           /* the context, and the tokens kept for the reply */
  long rows_shown;
  int results_shortened, turns_dropped;
  /* TT_EV_SCHEMA: [{"table","score","reason"}] in the order chosen; limit is
   * what the cards could take, tokens_after what they took */
  const json_t *tables;
  /* TT_EV_MODEL_WAIT in private mode: what this call sends that the last
   * did not ({"from","messages"[,"tools"]}), so that the trace records
   * exactly what left the machine */
  const json_t *sent;
  /* TT_EV_RUN_START, TT_EV_RUN_END: the fields the session gives them */
  const json_t *data;
} tt_event;

typedef struct tt_agent_hooks {
  /* every event, in order, on the thread that asked */
  void (*on_event)(void *ud, const tt_event *ev);
  /* make_chart built chart number index (0-based) of this question: save
   * it and put the file in path; false with the reason in err (the model
   * is told). NULL: charts are kept in the run, no file is written. */
  bool (*on_chart)(void *ud, const tt_chart *chart, size_t index, tt_buf *path, tt_error *err);
  void *ud;
  volatile sig_atomic_t *cancel;
} tt_agent_hooks;

typedef struct tt_run_totals {
  int llm_calls;
  int tool_calls;  /* every tool call, answer included (the budget counts them) */
  int sql_calls;   /* run_sql calls among them, failed ones included */
  long prompt_tokens, cached_tokens, completion_tokens;
  double wall_ms;  /* the whole question */
  double llm_ms;   /* waiting for the model */
} tt_run_totals;

/* A chart the model made during the question. */
typedef struct tt_run_chart {
  json_t *spec;       /* the spec as parsed (owned) */
  char *description;  /* "bar chart, 5 bars: Invoices per year" */
  char *file;         /* the file saved, or NULL */
  char *sql;          /* the query whose rows it draws */
  tt_chart *chart;    /* the chart model, for previews */
} tt_run_chart;

/* How far the answer's numbers are backed (docs/reference/run-json.md). */
typedef enum tt_verified {
  TT_VERIFIED_UNBACKED, /* a number no result backs, or a reference that did not resolve */
  TT_VERIFIED_CHECKED,  /* every number was found in a result */
  TT_VERIFIED_BOUND,    /* every number was filled in from a reference to a result */
} tt_verified;

/* "unbacked", "checked", "bound" */
const char *tt_verified_name(tt_verified v);

/* A value the answer cites: {{q2.r1.Total}} filled in from the stored
 * result (agent/refs.c). */
typedef struct tt_fact {
  char *ref;             /* as the model wrote it, without the braces */
  int query;             /* the result's label: 2 for q2 */
  char *sql;             /* the query that returned it */
  long row;              /* 1-based; 0 for an aggregate or a row count */
  char *column;          /* NULL for a row count */
  const char *aggregate; /* "sum", "avg", "min", "max", "count" or NULL (static) */
  json_t *value;         /* the value as the result holds it (owned) */
  char *text;            /* as written into the answer */
  size_t at, len;        /* where, in bytes of the answer */
} tt_fact;

typedef struct tt_run {
  tt_run_status status;
  char *answer;         /* the answer; for clarify, the question asked; for
                         * refused, what the model said (or NULL) */
  tt_verified verified; /* bound, checked (every number is backed by a value
                         * of a result of this question or the thread's) or
                         * unbacked */
  tt_fact *facts;       /* the references the answer cites, filled in */
  size_t nfacts;
  bool private_mode;    /* the model saw no value (tt_agent_set_private) */
  char *notes;          /* what a follow-up needs of this run, as JSON
                         * ({"queries":N,"told":...}): kept with the thread */
  char **unbacked;      /* the numbers that are not, as written */
  size_t nunbacked;
  char *numbers;        /* this question's result values, space-separated
                         * (kept with the thread for follow-ups) */
  char *refusal;        /* refused: why the write was refused */
  char *refused_sql;    /* refused: the statement */
  char *sql;            /* last successful SQL of the question (or NULL) */
  tt_result *rows;      /* its rows (or NULL) */
  char *error;          /* status failed/budget: what went wrong */
  tt_chat pending;      /* status clarify: the conversation, to resume */
  tt_run_chart *charts; /* made by make_chart, in order */
  size_t ncharts;
  tt_run_totals totals;
} tt_run;

void tt_run_free(tt_run *r);
/* True when text tells the user that writes are not possible ("read-only",
 * "not allowed", "cannot", ...). */
bool tt_mentions_read_only(const char *text);
/* "3 rows: Rock 1297; Latin 579; ..." — for follow-ups and traces. */
char *tt_run_summary(const tt_run *r);

typedef struct tt_agent tt_agent;

/* The agent borrows db, schema and llm; they must outlive it. */
tt_agent *tt_agent_new(tt_db *db, const tt_schema *schema, tt_llm *llm,
                       const tt_agent_opts *opts);
void tt_agent_free(tt_agent *a);

/* The system prompt: rules and schema, byte-identical for every question on
 * this database. */
const char *tt_agent_system_prompt(const tt_agent *a);
const tt_tool_spec *tt_agent_tools(const tt_agent *a, size_t *n);

/* What the first prompt of a question costs, in estimated tokens: the
 * fixed rules, the tools' descriptions and JSON schemas, the table index
 * (when the whole schema is over the budget), the cards and what the
 * knowledge file adds for the question. index + cards + knowledge stay
 * within budget. */
typedef struct tt_prompt_cost {
  size_t rules, tools, index, cards, total;
  size_t knowledge; /* definitions and examples from the knowledge file */
  size_t budget;
  size_t ntables, ncards; /* tables in the database, cards in the prompt */
  bool whole_schema;      /* every card is in the system prompt, no index */
  size_t selector;        /* the selector step's own call (not in total): its rules,
                           * one line per table, the question and its tool */
  bool selector_on;       /* ... and whether it runs (--selector, or 400 tables) */
} tt_prompt_cost;
/* The tokens a question's cards may take at a schema budget, as ask
 * spends it: all of it when every card fits (*whole_schema), else what the
 * table index and its headers leave. */
size_t tt_agent_card_budget(const tt_schema *s, size_t budget, bool *whole_schema);
/* The tables whose cards go with question when the system prompt holds
 * only the table index: [{"table","score","reason"}] in the order chosen,
 * and (tokens may be NULL) what their cards take; NULL when every card is
 * in the system prompt. */
json_t *tt_agent_schema_picks(const tt_agent *a, const char *question, size_t *tokens);
/* What the embedding score cost and whether it is used (embed.c). */
typedef struct tt_embed_stats {
  bool on;            /* the options ask for it */
  bool used;          /* vectors were had: the ranking uses them */
  size_t tables;      /* tables with a vector */
  size_t cached;      /* ... read from the cache */
  size_t embedded;    /* texts embedded (descriptions and questions) */
  int requests;       /* embedding requests (the embedded engine: texts decoded) */
  long tokens;        /* tokens the backend counted */
  double ms;          /* time spent embedding */
  /* of which the tables' descriptions (the rest: the questions) */
  size_t desc_texts;
  int desc_requests;
  long desc_tokens;
  double desc_ms;
  size_t dim;
  const char *note;   /* why it is off although asked for ("... offers no
                       * embeddings ..."), or NULL; owned by the agent */
} tt_embed_stats;
void tt_agent_embed_stats(const tt_agent *a, tt_embed_stats *out);
/* What the knowledge file adds to question's message (definitions, the
 * nearest examples) within its share of the schema budget; NULL when
 * nothing. */
char *tt_agent_knowledge_for(const tt_agent *a, const char *question);
/* question may be NULL: the cards chosen with nothing to go by. */
void tt_agent_prompt_cost(const tt_agent *a, const char *question, tt_prompt_cost *out);
/* Estimated tokens of the selector step's call for question (0 when every
 * card fits the system prompt). */
size_t tt_agent_selector_cost(const tt_agent *a, const char *question);

/* Private mode (docs/guide/private.md): the model receives the schema
 * without examples or row counts and of each result only its shape; it
 * answers with references, filled in here. Applies to the next questions. */
void tt_agent_set_private(tt_agent *a, bool on);
bool tt_agent_private(const tt_agent *a);

/* Answers question. history holds the thread's earlier questions (oldest
 * first). When resume is not NULL it is the conversation of a question
 * paused by ask_user, and question is the user's reply to it. */
void tt_agent_ask(tt_agent *a, const tt_turn *history, size_t nhistory,
                  const tt_chat *resume, const char *question,
                  const tt_agent_hooks *hooks, tt_run *out);

/* What follows a question in its message when it names values of the
 * database: then one line per value, "'AC/DC' is a value of Artist.Name".
 * A reader of the messages (the Spider oracle) cuts the question here. */
#define TT_AGENT_VALUE_HINTS "\n\nValues the question names, as the database spells them:\n"
/* The same in private mode: only values the user typed exactly. */
#define TT_AGENT_PRIVATE_HINTS "\n\nValues the question names that the database holds as typed:\n"

#endif
