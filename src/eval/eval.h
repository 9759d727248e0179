/* eval.h — public face of the eval layer: how good tabletalk is with a
 * given model. Execution accuracy on Spider-style question sets (results
 * compared the way Spider's official evaluation compares them), an oracle
 * backend that answers with the gold SQL (to validate the harness), the
 * behaviour suite on chinook judged by what happened (rows, SQL, status,
 * the database's hash, chart files), and a report of cost and tokens from
 * traces. Like the CLI and MCP, evals are a front end: every question goes
 * through a session and the agent; this layer prints nothing (callers get
 * progress callbacks and results). */
#ifndef TT_EVAL_H
#define TT_EVAL_H

#include "session/session.h"

/* ---- comparing results (Spider execution accuracy) --------------------------- */

/* True when sql has ORDER BY at its outer level (not only in a subquery,
 * a string or a comment): the only case where row order counts. */
bool tt_sql_outer_order_by(const char *sql);

/* Compares a predicted result with the gold one as Spider's test-suite
 * evaluation does: the same number of rows and columns; columns matched
 * by some permutation; rows as multisets (in order when ordered); numbers
 * equal within a relative 1e-6 (integers and reals alike), text byte for
 * byte, NULL equal to NULL. False (an answer, not a failure) with how
 * they differ appended to detail, for the results file ("5 rows, gold
 * has 3"). */
bool tt_ex_equal(const tt_result *gold, const tt_result *pred, bool ordered, tt_buf *detail);

/* ---- the oracle backend ---------------------------------------------------------- */

/* A backend for validating the harness: for a question found in answers
 * (question text -> SQL), it calls run_sql with that SQL, then answer;
 * for anything else it answers that it does not know. answers is
 * borrowed. */
tt_llm *tt_oracle_new(const json_t *answers);

/* ---- Spider ------------------------------------------------------------------------ */

typedef enum tt_spider_outcome {
  TT_SP_CORRECT,   /* the prediction's rows match the gold rows */
  TT_SP_WRONG,     /* it ran, with other rows */
  TT_SP_SQL_FAILED,/* SQL was tried but none ran (or the final one fails) */
  TT_SP_NO_SQL,    /* the model never wrote SQL */
  TT_SP_ERROR,     /* the model or the server failed */
  TT_SP_CLARIFY,   /* the model asked a clarifying question instead */
  TT_SP_OUTCOMES,
} tt_spider_outcome;

const char *tt_spider_outcome_name(tt_spider_outcome o);   /* "correct", ... */
const char *tt_spider_outcome_label(tt_spider_outcome o);  /* "ran, wrong rows", ... */

typedef struct tt_spider_opts {
  const char *data_dir;     /* questions.jsonl and databases/<db_id>.sqlite */
  long n;                   /* questions (0: all) */
  long seed;                /* 0: the file's order; else a seeded shuffle */
  const char *tag;          /* names the results file */
  int jobs;                 /* questions at once (1); more than one needs a backend
                             * that answers in parallel (an HTTP endpoint) */
  const tt_config *cfg;     /* limits, the state folder (threads and traces) and
                             * the model's settings; its database is not used */
  const char *results_dir;  /* where spider_n{N}_s{S}_{tag}.json goes */
  bool oracle;              /* the oracle backend answers */
  tt_models *models;        /* otherwise a model from here for each worker */
  const char *endpoint;     /* the model's URL, recorded (a resumed run must match) */
  bool fresh;               /* ignore an earlier, interrupted run */
  /* after each question: done so far, of total, and that question */
  void (*on_progress)(void *ud, size_t done, size_t total, size_t correct, const json_t *q);
  void *progress_ud;
  volatile sig_atomic_t *cancel;
} tt_spider_opts;

/* Default settings: all questions, file order, 1 job. */
tt_spider_opts tt_spider_default_opts(void);

typedef struct tt_spider_summary {
  size_t total, done;       /* selected, answered (done < total when cancelled) */
  size_t resumed;           /* taken from the earlier run's file */
  size_t count[TT_SP_OUTCOMES];
  double ex;                /* correct / done, in % */
  double llm_calls;         /* per question */
  double seconds;           /* per question */
  double minutes;           /* the whole run, wall clock (this invocation) */
  char results_file[4096];
  bool cancelled;
} tt_spider_summary;

/* Runs the evaluation, writing the results file after every question (so
 * an interrupted run resumes where it stopped). false with err when it
 * cannot start: io (no questions file, an unwritable results folder or
 * file), config (a questions file with a bad line, an earlier run in the
 * same file by another model or on other data, --jobs with the local
 * engine), unavailable (no model), or the model's own error. */
bool tt_spider_run(const tt_spider_opts *o, tt_spider_summary *out, tt_error *err);

/* Compares two results files question by question (matched by id):
 * {"a": {file, tag, model, questions, correct_in_common, ex_in_common},
 * "b": {..}, "in_common": N, "same_data": bool, "fixed": [..] (correct only
 * in B), "broken": [..] (correct only in A), "changed": [..] (another
 * outcome, correct in neither), "only_a": [..], "only_b": [..]}, each entry
 * {id, db_id, question, a, b (outcomes), a_detail, b_detail, a_sql, b_sql}.
 * NULL with err when a file cannot be read (io) or is not a results file
 * (config). */
json_t *tt_spider_compare(const char *file_a, const char *file_b, tt_error *err);

/* ---- the behaviour suite ------------------------------------------------------------ */

typedef struct tt_behaviour_opts {
  const char *db_path;      /* chinook.sqlite (copied, never touched) */
  const tt_config *cfg;     /* limits, the state folder and the model's settings */
  tt_models *models;        /* the model is made from here */
  const char *only;         /* run only the cases whose name contains this */
  void (*on_case)(void *ud, const json_t *result); /* after each case */
  void *case_ud;
  volatile sig_atomic_t *cancel;
} tt_behaviour_opts;

tt_behaviour_opts tt_behaviour_default_opts(void);

/* Runs every case on a scratch copy of the database with a planted row.
 * Returns {"cases":[{"name","what","passed","checks":[{"check","passed",
 * "detail"}],"run_ids":[...]}],"passed":N,"failed":N,"scratch":PATH} or
 * NULL with err when it cannot start (the database, its scratch copy or
 * the model). */
json_t *tt_behaviour_run(const tt_behaviour_opts *o, tt_error *err);

/* ---- the report from traces ---------------------------------------------------------- */

typedef struct tt_report_opts {
  const char *runs_dir;     /* folder of <run_id>.jsonl traces */
  double since;             /* only runs started at or after (epoch seconds; 0: all) */
  double price_in;          /* USD per million prompt tokens (0: no cost) */
  double price_cached;      /* USD per million reused prompt tokens (< 0: price_in) */
  double price_out;         /* USD per million completion tokens */
} tt_report_opts;

/* Per question: LLM calls, tool calls, prompt tokens sent, reused and
 * computed, completion tokens, wall seconds, cost: {"runs":N,"metrics":
 * {name:{"mean","median","max","total"}},"skipped":N}. NULL with err (io)
 * when the folder does not exist. */
json_t *tt_report_build(const tt_report_opts *o, tt_error *err);

/* Parses "2026-12-01", "2026-12-01T10:00", or an age like "90m", "2h",
 * "3d" (before now) into epoch seconds. */
bool tt_parse_since(const char *s, double now, double *out);

/* ---- schema retrieval benchmark (no model) ------------------------------------- */

#define TT_SCHEMA_BENCH_MAX_BUDGETS 8
typedef struct tt_schema_bench_opts {
  const char *data_dir;  /* schema.sqlite and questions.jsonl (bench/schema/gen.py) */
  size_t nbudgets;
  size_t budgets[TT_SCHEMA_BENCH_MAX_BUDGETS]; /* tokens; default 1000, 2000, 4000 */
  bool details;          /* per question: whether all needed tables came, the missed ones */
  tt_llm *embed_llm;     /* an embedding score in the ranking from this model (borrowed;
                          * NULL: none), its cost reported under "embeddings" */
} tt_schema_bench_opts;
tt_schema_bench_opts tt_schema_bench_default_opts(void);
/* Runs tt_schema_select for every labelled question at every budget:
 * {"database","tables","schema_tokens","questions","budgets":[{"budget",
 * "questions","all_needed_recall","table_recall","tables_shown","tokens",
 * "categories":{name:{same figures}}, "per_question"?}]}. NULL with err set
 * when the folder cannot be read. */
json_t *tt_schema_bench_run(const tt_schema_bench_opts *o, tt_error *err);

/* The baseline the schema benchmark measures against (schema_bm25.c): plain
 * BM25 (k1 1.2, b 0.75) over each table's name, column names and indexed
 * values, words split on case and punctuation, lower-cased, not stemmed;
 * tables taken in score order while their cards fit the card budget. */
typedef struct tt_bench_bm25 tt_bench_bm25;
tt_bench_bm25 *tt_bench_bm25_new(const tt_schema *s);
/* Writes the chosen cards to out (room for every table); returns how many. */
size_t tt_bench_bm25_select(const tt_bench_bm25 *b, const tt_schema *s, const char *question,
                            size_t card_budget, const tt_card **out);
void tt_bench_bm25_free(tt_bench_bm25 *b);

/* One JSON object a line of path (blank lines skipped), each passing ok;
 * NULL with err when the file cannot be read (io, with hint as the hint),
 * a line is not JSON or fails ok (config, err->line set: "PATH line N is
 * not " need), or it holds no questions (config) (jsonl.c). */
json_t *tt_eval_read_jsonl(const char *path, bool (*ok)(const json_t *q), const char *need,
                           const char *hint, tt_error *err);

#endif
