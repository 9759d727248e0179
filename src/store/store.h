/* store.h — public face of the store layer: threads (follow-up memory) in
 * a SQLite file under the state directory, one JSONL trace per run, and the
 * session that ties a question to both: load the thread, run the agent,
 * trace every step, save the turn. Front ends (CLI, MCP, evals) ask through
 * a session and never repeat this wiring.
 *
 * Every write to the thread store is one transaction: a process killed at
 * any moment leaves a store that opens and reads correctly. */
#ifndef TT_STORE_H
#define TT_STORE_H

#include "agent/agent.h"

/* ---- threads ------------------------------------------------------------ */

typedef struct tt_store tt_store;

typedef struct tt_turn_rec {
  char *run_id;
  char *question;
  char *answer;
  char *sql;
  char *summary;
  tt_run_status status;
  char *pending; /* JSON conversation of a question paused by ask_user */
  char *numbers; /* the values its results held (space-separated) */
} tt_turn_rec;

typedef struct tt_thread {
  char *name;
  char *title;        /* given with tt_store_rename_thread, or NULL */
  char *db_path;
  size_t nturns;
  tt_turn_rec *turns; /* oldest first */
} tt_thread;

/* Opens (creating when needed) <state_dir>/threads.sqlite. */
tt_store *tt_store_open(const char *state_dir, tt_buf *err);
void tt_store_close(tt_store *s);
/* The turns of thread name on database db_path (none for a new thread). */
bool tt_store_load_thread(tt_store *s, const char *name, const char *db_path,
                          tt_thread *out, tt_buf *err);
void tt_thread_free(tt_thread *t);
/* Appends a turn, or completes the thread's paused turn when resumed. */
bool tt_store_save_turn(tt_store *s, const char *name, const char *db_path,
                        const char *run_id, const char *question, const tt_run *run,
                        bool resumed, tt_buf *err);

/* A thread in a listing. */
typedef struct tt_thread_summary {
  char *name;     /* the thread id */
  char *title;    /* the title it was given, else its first question */
  double updated; /* seconds since the epoch of its last turn */
  size_t turns;
} tt_thread_summary;

/* The threads on db_path, most recently updated first (*n may be 0).
 * False with the reason in err. Free with tt_thread_summaries_free. */
bool tt_store_list_threads(tt_store *s, const char *db_path, tt_thread_summary **out, size_t *n,
                           tt_buf *err);
void tt_thread_summaries_free(tt_thread_summary *v, size_t n);
/* Gives thread name on db_path a title (its turns are kept). *found is
 * false, and nothing changes, when the thread has no turns. False with the
 * reason in err when the store cannot be written. */
bool tt_store_rename_thread(tt_store *s, const char *name, const char *db_path, const char *title,
                            bool *found, tt_buf *err);
/* Removes the thread's turns and title (its traces stay, for tabletalk
 * trace and gc). *found and the result as for renaming. */
bool tt_store_delete_thread(tt_store *s, const char *name, const char *db_path, bool *found,
                            tt_buf *err);

/* ---- traces --------------------------------------------------------------- */

typedef struct tt_trace tt_trace;

/* Creates <state_dir>/runs/<run_id>.jsonl. */
tt_trace *tt_trace_open(const char *state_dir, const char *run_id, tt_buf *err);
/* Writes ev (stolen) as one whole line, with "ts" and "run_id" added. */
void tt_trace_write(tt_trace *t, json_t *ev);
void tt_trace_close(tt_trace *t);
const char *tt_trace_path(const tt_trace *t);
/* Run ids with a trace, oldest first. */
char **tt_trace_list(const char *state_dir, size_t *n);
/* The events of a run (an array), or NULL when it cannot be read. */
json_t *tt_trace_load(const char *state_dir, const char *run_id, tt_buf *err);
/* The events of the trace file at path (a torn last line is skipped). */
json_t *tt_trace_load_file(const char *path, tt_buf *err);

/* ---- chart files ------------------------------------------------------------ */

/* <state_dir>/charts/<run_id>.<ext> for a run's first chart, then
 * <run_id>-2.<ext> and so on; the folder is created. NULL with the reason
 * in err. */
char *tt_chart_file_path(const char *state_dir, const char *run_id, size_t index,
                         const char *ext, tt_buf *err);

/* Where a session's charts go and how big they are. */
typedef struct tt_chart_files {
  bool svg;          /* SVG instead of PNG */
  int width, height; /* pixels; 0: 1200x700 */
  bool both;         /* also the other format beside each file (tabletalk web:
                      * SVG to show, PNG to download) */
  const char *out;   /* a run's first chart goes here (its second to NAME-2.EXT,
                      * ...); NULL: the state folder */
} tt_chart_files;

/* ---- sessions ------------------------------------------------------------- */

typedef struct tt_session tt_session;

/* A database, its schema, a model and the state directory. The session
 * borrows everything given and must not outlive it. */
tt_session *tt_session_new(const char *state_dir, const char *db_path, tt_db *db,
                           const tt_schema *schema, tt_llm *llm,
                           const tt_agent_opts *opts, tt_buf *err);
void tt_session_free(tt_session *s);
/* Time the front end spent before the first question (opening the
 * database, reading the schema, connecting): traced with that question so
 * the per-question cost is complete. */
void tt_session_note_startup(tt_session *s, double ms);
/* The run id the next question gets (copied), for a front end that names
 * the run before it starts (tabletalk web streams it first); without it
 * each question gets a fresh one. */
void tt_session_set_run_id(tt_session *s, const char *run_id);
/* Sets where the charts of later questions go (copied). */
void tt_session_set_chart_files(tt_session *s, const tt_chart_files *f);

typedef struct tt_ask_result {
  char run_id[64];
  char trace_path[4096];
  bool resumed;     /* the question continued a paused one */
  char warning[1024]; /* what went wrong beside the question (no trace could
                       * be written, the turn was not saved), "" when nothing:
                       * front ends show it */
} tt_ask_result;

/* Asks question in thread (created when new). A thread whose last question
 * waits for the user's reply is continued with this text as the reply.
 * The agent's events reach ui (may be NULL) after they are traced. When
 * the thread cannot be read the question is not asked (its follow-up
 * context would be missing): run->status is failed and run->error says
 * why. A trace that cannot be written or a turn that cannot be saved does
 * not stop the question; info->warning says what was lost. */
void tt_session_ask(tt_session *s, const char *thread, const char *question,
                    const tt_agent_hooks *ui, tt_run *run, tt_ask_result *info);

/* ---- retention (gc.c) ---------------------------------------------------- */

typedef struct tt_gc_report {
  size_t removed, kept, failed; /* files */
  long long bytes;              /* removed */
} tt_gc_report;
/* "30d", "12h", "2w", "90m" or a number of days; "never" or "0" give 0
 * (keep everything). false when text is none of these. */
bool tt_parse_age(const char *text, long long *seconds);
/* Removes the traces (runs/ RUN.jsonl) and chart files (charts/ RUN.png, .svg)
 * under state_dir last changed more than max_age_s seconds ago; with
 * dry_run only counts them. Threads are kept. */
void tt_store_gc(const char *state_dir, long long max_age_s, bool dry_run, tt_gc_report *r);
/* true at most once a day per state folder (a stamp file records the
 * last time), for the automatic clean-up. */
bool tt_store_gc_due(const char *state_dir);

/* ---- the run as JSON ----------------------------------------------------- */

/* The one JSON shape of a run (docs/reference/run-json.md), the same for `ask
 * --json`, MCP's ask_database and the trace's run_end: status, answer,
 * clarification, error, sql, verified, unbacked_numbers, refusal, charts,
 * thread_id, run_id, trace, resumed, warning, totals, then the rows of the
 * final query: columns, column_types, rows (the first max_rows),
 * row_count, truncated (truncated_by), elapsed_ms. max_rows < 0 leaves
 * the row fields out, for a front end that streams them in the same
 * shape after the others. info may be NULL. The caller frees. */
json_t *tt_run_json(const tt_run *run, const tt_ask_result *info, const char *thread,
                    long max_rows);

#endif
