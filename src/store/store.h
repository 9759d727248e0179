/* store.h — public face of the store layer: threads (follow-up memory),
 * the SQL a user ran by hand and the board of pinned answers, in a SQLite
 * file under the state directory; one JSONL trace per run, chart files and
 * their retention. The session layer (src/session) ties a
 * question to them; front ends never use the store for a question.
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
  char *notes;   /* the agent's notes on it (tt_run.notes), or NULL */
} tt_turn_rec;

typedef struct tt_thread {
  char *name;
  char *title;        /* given with tt_store_rename_thread, or NULL */
  char *db_path;
  size_t nturns;
  tt_turn_rec *turns; /* oldest first */
} tt_thread;

/* Opens (creating when needed) <state_dir>/threads.sqlite. */
tt_store *tt_store_open(const char *state_dir, tt_error *err);
void tt_store_close(tt_store *s);
/* The turns of thread name on database db_path (none for a new thread). */
bool tt_store_load_thread(tt_store *s, const char *name, const char *db_path,
                          tt_thread *out, tt_error *err);
void tt_thread_free(tt_thread *t);
/* Appends a turn, or completes the thread's paused turn when resumed. */
bool tt_store_save_turn(tt_store *s, const char *name, const char *db_path,
                        const char *run_id, const char *question, const tt_run *run,
                        bool resumed, tt_error *err);

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
                           tt_error *err);
void tt_thread_summaries_free(tt_thread_summary *v, size_t n);
/* Gives thread name on db_path a title (its turns are kept). *found is
 * false, and nothing changes, when the thread has no turns. False with the
 * reason in err when the store cannot be written. */
bool tt_store_rename_thread(tt_store *s, const char *name, const char *db_path, const char *title,
                            bool *found, tt_error *err);
/* Removes the thread's turns and title (its traces stay, for tabletalk
 * trace and gc). *found and the result as for renaming. */
bool tt_store_delete_thread(tt_store *s, const char *name, const char *db_path, bool *found,
                            tt_error *err);

/* ---- queries run by hand (queries.c) ----------------------------------------- */

/* A query's id: 16 hex digits derived from its text, so the same SQL on
 * the same database always has the same id. */
#define TT_QUERY_ID_LEN 16

typedef struct tt_query_rec {
  char id[TT_QUERY_ID_LEN + 1];
  char *sql;
  double last_run; /* seconds since the epoch */
  long runs;       /* times run from the history's owner (the editor) */
} tt_query_rec;

/* Keeps sql for db_path under its id (written to id); history: it was run
 * by hand, so it joins the history (again, as the newest). False with err
 * when the store cannot be written. */
bool tt_store_put_query(tt_store *s, const char *db_path, const char *sql, bool history,
                        char id[TT_QUERY_ID_LEN + 1], tt_error *err);
/* The SQL kept under id (freshly allocated), or *sql NULL when none. */
bool tt_store_get_query(tt_store *s, const char *db_path, const char *id, char **sql,
                        tt_error *err);
/* The history: the queries run by hand on db_path, newest first, at most
 * limit. Free with tt_query_recs_free. */
bool tt_store_list_queries(tt_store *s, const char *db_path, size_t limit, tt_query_rec **out,
                           size_t *n, tt_error *err);
void tt_query_recs_free(tt_query_rec *v, size_t n);

/* ---- the board: pinned answers (pins.c) ------------------------------------- */

typedef struct tt_pin {
  long long id;
  long position;  /* 0 first */
  char *title;
  char *sql;      /* what the pin shows: re-run when the board opens */
  char *chart;    /* the chart spec as JSON text, or NULL: a table */
  char *question; /* the question it answered, or NULL (SQL run by hand) */
  char *run_id;   /* the run it came from, or NULL */
  double created;
} tt_pin;

/* Appends p (title and sql required) to db_path's board; *id gets its id. */
bool tt_store_add_pin(tt_store *s, const char *db_path, const tt_pin *p, long long *id,
                      tt_error *err);
/* The board in order. Free with tt_pins_free. */
bool tt_store_list_pins(tt_store *s, const char *db_path, tt_pin **out, size_t *n,
                        tt_error *err);
/* One pin; *found false when the board has none with this id. Free with
 * tt_pin_free. */
bool tt_store_get_pin(tt_store *s, const char *db_path, long long id, tt_pin *out, bool *found,
                      tt_error *err);
bool tt_store_rename_pin(tt_store *s, const char *db_path, long long id, const char *title,
                         bool *found, tt_error *err);
/* Moves the pin to place to (0 first; past the end: last). */
bool tt_store_move_pin(tt_store *s, const char *db_path, long long id, size_t to, bool *found,
                       tt_error *err);
bool tt_store_delete_pin(tt_store *s, const char *db_path, long long id, bool *found,
                         tt_error *err);
void tt_pin_free(tt_pin *p);
void tt_pins_free(tt_pin *v, size_t n);

/* ---- traces --------------------------------------------------------------- */

typedef struct tt_trace tt_trace;

/* Creates <state_dir>/runs/<run_id>.jsonl. */
tt_trace *tt_trace_open(const char *state_dir, const char *run_id, tt_error *err);
/* Writes line (an event of the run, borrowed) as one whole line: a process
 * killed at any moment leaves whole lines. t may be NULL (nothing is done). */
void tt_trace_write(tt_trace *t, const json_t *line);
void tt_trace_close(tt_trace *t);
const char *tt_trace_path(const tt_trace *t);
/* Run ids with a trace, oldest first. */
char **tt_trace_list(const char *state_dir, size_t *n);
/* The events of a run (an array), or NULL when it cannot be read. */
json_t *tt_trace_load(const char *state_dir, const char *run_id, tt_error *err);
/* The events of the trace file at path (a torn last line is skipped). */
json_t *tt_trace_load_file(const char *path, tt_error *err);

/* ---- chart files ------------------------------------------------------------ */

/* <state_dir>/charts/<run_id>.<ext> for a run's first chart, then
 * <run_id>-2.<ext> and so on; the folder is created. NULL with the reason
 * in err. */
char *tt_chart_file_path(const char *state_dir, const char *run_id, size_t index,
                         const char *ext, tt_error *err);

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

#endif
