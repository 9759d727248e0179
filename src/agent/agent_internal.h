/* agent_internal.h — what the files of the agent layer share: the agent's
 * fields, the prompt builders, the views of results shown to the model,
 * error hints and the answer check. */
#ifndef TT_AGENT_INTERNAL_H
#define TT_AGENT_INTERNAL_H

#include "agent/agent.h"

#define TT_AGENT_MAX_TOOLS 8
#define TT_PROMPT_DESC_MAX 256 /* a tool description built from the options */
/* What an endpoint's replies may take: one model call, one question. */
#define TT_CALL_REPLY_BYTES (16u << 20)
#define TT_QUESTION_REPLY_BYTES (64u << 20)

typedef struct tt_ref_set tt_ref_set;

struct tt_agent {
  tt_db *db;
  const tt_schema *schema;
  tt_llm *llm;
  tt_agent_opts o;
  char *system_prompt;
  bool whole_schema; /* all cards are in the system prompt */
  size_t card_budget; /* else: tokens for each question's cards, beside the index */
  tt_tool_spec tools[TT_AGENT_MAX_TOOLS];
  size_t ntools;
  bool private_mode;   /* tt_agent_set_private */
  char *private_prompt; /* built on the first private question */
  tt_tool_spec private_tools[TT_AGENT_MAX_TOOLS];
  size_t nprivate_tools;
  char *private_answer_schema; /* private_tools' answer: digits only in references */
  char run_sql_desc[TT_PROMPT_DESC_MAX]; /* tools[0].description */
  /* an SQL writer (writer.c): the prompt it was trained on, and the whole
   * schema in that prompt's form when it fits the budget (else NULL: the
   * tables each question needs) */
  tt_sql_style writer_style;
  char *writer_schema;
  struct tt_agent_embed *embed; /* the embedding score's state (embed.c): changes
                                 * behind a const agent as questions are ranked */
};

/* events.c: ev (its step set) to the hooks, which may be NULL. */
void tt_agent_emit(const tt_agent_hooks *h, int step, tt_event *ev);
/* A model call's events: thought when the model wrote what it thought,
 * then model_call (r NULL: it failed with err). */
void tt_agent_emit_call(const tt_agent_hooks *h, int step, const tt_llm_reply *r,
                        const tt_error *err);
/* The streaming callbacks of a model call (ud: the hooks): each piece of
 * the answer as a text event, a restart as text_restart. */
void tt_agent_stream_text(void *ud, const char *piece, size_t n);
void tt_agent_stream_restart(void *ud);

/* loop.c: one guarded query under the agent's limits, keeping at most
 * max_rows; cancel (may be NULL) stops it. */
tt_result *tt_agent_guarded_query(tt_agent *a, volatile sig_atomic_t *cancel, const char *sql,
                                  long max_rows, tt_error *err);

/* A chart built for the run: described into desc, handed to the caller
 * (hooks->on_chart saves or previews it; path receives its file) and kept
 * in out with the SQL that fed it. False, with the chart freed and err set
 * by the hook, when the caller refused it. */
bool tt_agent_keep_chart(const tt_agent_hooks *h, tt_run *out, tt_chart *chart,
                         const tt_chart_spec *spec, const char *sql, tt_buf *desc, tt_buf *path,
                         tt_error *err);

/* writer.c: the question answered through an SQL writer's own prompt */
void tt_writer_ask(tt_agent *a, const tt_turn *history, size_t nhistory, const char *question,
                   const tt_agent_hooks *hooks, tt_run *out);
/* The schema in the writer's form: the given cards (all when NULL). */
char *tt_writer_schema(const tt_agent *a, const tt_card *const *cards, size_t n);
/* The answer step's prompt: the question, the query and its rows as data. */
char *tt_writer_answer_prompt(const char *question, const char *sql, const tt_result *rows,
                              bool chart);
/* "The query returned 1 row: Rock, 1297." when the model cannot phrase it. */
char *tt_writer_template_answer(const tt_result *rows);

/* embed.c: the embedding score of the ranking */
struct tt_agent_embed *tt_agent_embed_new(void);
void tt_agent_embed_free(struct tt_agent_embed *e);
/* The ranking options for question: the tables' vectors (embedded and
 * cached on first use) and the question's (embedded once per question
 * text), when the options ask for embeddings and the model gives them;
 * else none (a note says why: tt_agent_embed_take_note). */
void tt_agent_embed_rank_opts(const tt_agent *a, const char *question, tt_schema_rank_opts *ro);
/* Why the score is off although asked for, the first time only (then
 * NULL): for a warning event. Freshly allocated. */
char *tt_agent_embed_take_note(const tt_agent *a);

/* selector.c: the selector step for huge schemas */
#define TT_SELECTOR_NAMED_MAX 16 /* tables one call may name */
/* Whether the step runs before this agent's questions (--selector, or
 * auto from 400 tables; never with every card in the system prompt or for
 * an SQL writer). */
bool tt_agent_selector_on(const tt_agent *a);
/* The step's system prompt: its rules and one line per table. */
char *tt_selector_prompt(const tt_schema *s);
/* One model call naming the tables question needs: writes up to
 * TT_SELECTOR_NAMED_MAX names (freshly allocated, the schema's spelling)
 * to names and returns how many; 0 when the call failed or named none (a
 * warning event says so). Counts the call in out's totals; emits
 * model_wait and model_call as step. */
size_t tt_agent_select_tables(tt_agent *a, const char *question, const tt_agent_hooks *hooks, int step,
                              tt_run *out, char **names);
json_t *tt_agent_schema_picks_named(const tt_agent *a, const char *question, const char *const *named,
                                    size_t nnamed, size_t *tokens);

/* prompt.c */
/* The system prompt; when the whole schema is over budget it carries a
 * compact index, and *card_budget is what is left for each question's
 * cards (0 when the whole schema is in). */
/* tt_prompt_system for a database of this dialect: "SQLite" gives the
 * same bytes; another names itself where SQLite stood in the rules and
 * headers. */
char *tt_prompt_system_dialect(const tt_schema *s, size_t budget, int max_failed,
                               bool *whole_schema, size_t *card_budget, const char *dialect);
char *tt_prompt_system(const tt_schema *s, size_t budget, int max_failed, bool *whole_schema,
                       size_t *card_budget);
/* The full cards a question needs when the system prompt carries only the
 * table index (sent as a message of its own before the question, so the
 * question message is the user's words); NULL when all cards are in the
 * system prompt. The nnamed tables a selector step named (may be 0) come
 * first. picks (may be NULL) gets what tt_agent_schema_picks_named would
 * return and tokens its count, from the same ranking: a ranking on a
 * schema of hundreds of tables is most of a start's work (issue 30). */
char *tt_prompt_schema_for(const tt_agent *a, const char *question, const char *const *named,
                           size_t nnamed, json_t **picks, size_t *tokens);
/* The question message: the question, then one hint per value of the
 * database it names ("'Rotterdam' is a value of office.city"), when the
 * schema has a value index (freshly allocated). */
char *tt_prompt_question(const tt_agent *a, const char *question);
/* priv: as private mode retells it (the model's own words, the result's shape). */
char *tt_prompt_turn_answer(const tt_turn *t, bool priv);
/* The system prompt of private mode: the rules with what private mode
 * adds, and the cards without row counts or example values. */
char *tt_prompt_system_private(const tt_schema *s, size_t budget, int max_failed,
                               const char *dialect);
/* tools with the answer's and run_sql's words for private mode, and
 * need_values; returns how many. *answer_schema receives the answer's
 * parameters (its text may hold digits only inside references), which
 * must outlive out. */
size_t tt_prompt_tools_private(tt_tool_spec *out, const tt_tool_spec *tools, size_t n,
                               char **answer_schema);
/* view.c: a result as private mode shows it: its label, columns with
 * types, row count and whether it was cut, never a value. */
void tt_view_shape(tt_buf *out, const tt_result *r, int label);
/* "5 rows; columns: Name (text), Total (real)" */
void tt_view_shape_line(tt_buf *out, const tt_result *r);
/* refs.c: the notes kept with a run ({"queries","private","told","shape"}),
 * and the last result label they name (0 when none). */
char *tt_notes_json(const tt_ref_set *refs, bool priv, const char *told, const tt_run *out);
int tt_notes_last_label(const char *notes);
/* The tools; run_sql's description (which says how many rows the model
 * sees) is written into run_sql_desc, which must outlive out. */
size_t tt_prompt_tools(tt_tool_spec *out, int rows_shown, char run_sql_desc[TT_PROMPT_DESC_MAX]);
/* The same for a database of this dialect (tt_db_dialect): "SQLite" gives
 * exactly tt_prompt_tools's, any other names itself where SQLite stood. */
size_t tt_prompt_tools_dialect(tt_tool_spec *out, int rows_shown,
                               char run_sql_desc[TT_PROMPT_DESC_MAX], const char *dialect);
/* The dialect of a's database ("SQLite" without one). */
const char *tt_agent_dialect(const tt_agent *a);

/* view.c: what the model reads back from a tool */
void tt_view_rows(tt_buf *out, const tt_result *r, int max_rows);
/* The same within max_tokens as llm counts them (max_tokens <= 0 or no
 * llm: no limit): as many of the first max_rows rows as fit, the rest
 * announced as cut to fit the model's context. Returns the rows shown;
 * *full and *tokens (may be NULL) receive the tokens of the view with
 * every row up to max_rows and of the view written. */
size_t tt_view_rows_within(tt_buf *out, const tt_result *r, int max_rows, tt_llm *llm,
                           long max_tokens, long *full, long *tokens);
/* A short stand-in for a rows view, to save room in the context: its row
 * count, columns and first row. Freshly allocated; NULL when view is not a
 * view of rows (or is one already shortened). */
char *tt_view_stub(const char *view);
void tt_view_sql_failure(tt_buf *out, const tt_error *err, const char *hint);
bool tt_looks_like_instruction(const char *s, size_t n);

/* room.c: every call within the model's context */
#define TT_RESULT_TOKENS 4000 /* the most one tool result may take, whatever the context */

typedef struct tt_room {
  tt_llm *llm;
  long context, reserve;       /* the backend's; context 0: unknown, nothing is fitted */
  long limit;                  /* context - reserve: what a prompt may take */
  long fixed;                  /* system prompt, tools, schema cards and question */
  long result_cap;             /* what one tool result may take */
  size_t hist_begin, hist_end; /* the thread's earlier turns: (user, assistant) pairs */
  int results_shortened, turns_dropped; /* so far in this question */
} tt_room;

typedef struct tt_room_report {
  long before, after; /* the prompt's tokens */
  int results_shortened, turns_dropped;
} tt_room_report;

/* Measures what the question needs before the first call (chat as built,
 * its earlier turns at [hist_begin, hist_end)). False with the reason in
 * err (TT_ERR_LIMIT: the numbers; the hint names --ctx and
 * --schema-budget), when the system prompt with its tools and schema cards
 * and the question cannot fit beside the room kept for the reply. */
bool tt_room_start(tt_room *r, tt_llm *llm, const tt_chat *chat, const tt_llm_call *call,
                   size_t hist_begin, size_t hist_end, size_t schema_budget, tt_error *err);
/* Before a call: when chat and call would not fit, shortens chat (older
 * results, then earlier turns, then the newest result) until they fit with
 * room for one more result; rep says what it did. False with err
 * (TT_ERR_LIMIT) when even that does not fit. */
bool tt_room_fit(tt_room *r, tt_chat *chat, const tt_llm_call *call, tt_room_report *rep,
                 tt_error *err);

/* sqlrefs.c: the catalog's tables a query names in FROM/JOIN, in order */
typedef struct tt_sql_table_ref {
  const tt_table_info *table; /* owned by the catalog */
  char *alias;                /* as written; NULL when none */
} tt_sql_table_ref;
typedef struct tt_sql_table_refs {
  size_t n;
  tt_sql_table_ref *refs;
} tt_sql_table_refs;
/* Never NULL; free with tt_sql_table_refs_free. */
tt_sql_table_refs *tt_sql_table_refs_find(const tt_catalog *cat, const char *sql);
void tt_sql_table_refs_free(tt_sql_table_refs *r);

/* refs.c: the results of a question, under their labels q1, q2, ... */
typedef struct tt_ref_result {
  int id;
  char *sql;
  tt_result *res;  /* owned */
  tt_result *full; /* res read again whole for an aggregate (owned), or NULL */
} tt_ref_result;
typedef struct tt_ref_set {
  tt_ref_result *v;
  size_t n, cap;
  int base; /* labels up to base belong to the thread's earlier questions */
} tt_ref_set;
/* How a cut result is read again whole (NULL result: it cannot be). */
typedef struct tt_refs_reader {
  tt_result *(*reread)(void *ud, const char *sql);
  void *ud;
} tt_refs_reader;
/* Keeps res (ownership passes to s) under the next label; returns it. */
int tt_results_keep(tt_ref_set *s, const char *sql, tt_result *res);
/* Frees every result but keep (which the caller owns from now on). */
void tt_results_free(tt_ref_set *s, const tt_result *keep);
typedef struct tt_fill {
  char *text;     /* the answer with each reference filled in ("(?)" when it failed) */
  char *masked;   /* the answer with each reference taken out: what the number check reads */
  tt_fact *facts; /* the references filled in, in order */
  size_t nfacts, nrefs, nerrors;
  tt_buf errors;  /* one line per reference that failed: "{{q3.r9.X}}: why" */
} tt_fill;
/* Fills every {{...}} of answer from s (rd may be NULL: a cut result is
 * not read again). True when every reference resolved. */
bool tt_refs_fill(tt_ref_set *s, const tt_refs_reader *rd, const char *answer, tt_fill *out);
void tt_fill_free(tt_fill *f);
/* The filled-in text (the caller's to free); the rest of f freed. */
char *tt_fill_take(tt_fill *f);
void tt_facts_free(tt_fact *f, size_t n);

/* hints.c */
/* " — did you mean Track.Name?" for unknown tables and columns, looking
 * first at the tables sql names (sql may be NULL); freshly allocated, NULL
 * when there is nothing useful to say. */
char *tt_hint_for_error(const tt_catalog *cat, const char *sql, const char *message);

/* verify.c: the values an answer's numbers may come from */
typedef struct tt_backing {
  double *v;
  bool *quantity; /* v[i] is a number of a result (percentages may use it) */
  size_t n, cap;
} tt_backing;

void tt_backing_free(tt_backing *b);
/* Every value of a result (numbers, numbers inside text such as the parts
 * of dates), its row count and its numeric columns' totals. */
void tt_backing_add_result(tt_backing *b, const tt_result *r);
/* The numbers written in text (the literals of SQL that ran). */
void tt_backing_add_text(tt_backing *b, const char *text);
/* Numbers saved as a space-separated list (an earlier turn's). */
void tt_backing_add_list(tt_backing *b, const char *list);
/* The first max values as a space-separated list (owned). */
char *tt_backing_list(const tt_backing *b, size_t max);
/* Counts the numbers of answer that neither the question states nor b
 * backs; each is appended to unbacked (may be NULL) as written, followed
 * by a NUL byte. */
size_t tt_check_numbers(const char *answer, const char *question, const tt_backing *b,
                        tt_buf *unbacked);
/* How many numbers text states (list markers, ordinals and names aside). */
size_t tt_count_numbers(const char *text);

#endif
