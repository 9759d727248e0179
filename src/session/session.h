/* session.h — public face of the session layer: the one service every
 * front end (the CLI's commands, the MCP server, the web page, the evals
 * and the benchmark) asks for what a question needs, so that none of them
 * opens a database, reads a schema or builds a model itself.
 *
 *   tt_config   one description of a run, filled once: flags first, then
 *               the environment, ./.env and the config file (TABLETALK_*)
 *   tt_models   the model factory: which model the configuration picks and
 *               why, one shared model made on first use, and a model of its
 *               own for a question when the backend answers calls in
 *               parallel (a capability of the backend, not its name)
 *   tt_service  built from a configuration: the database target parsed
 *               once, the database opened read-only, its schema read (in the
 *               background when a front end wants to answer at once), the
 *               models; a model may arrive after the start
 *   tt_session  questions on a service: a thread's context, the agent's
 *               steps as one stream of events, the trace, the turn saved
 *
 * The event stream and the run's JSON shape are defined here once
 * (events.c, run_json.c); the trace, the web page's stream, MCP progress
 * and the terminal all render the same events (docs/reference/events.md). */
#ifndef TT_SESSION_H
#define TT_SESSION_H

#include <signal.h>

#include "store/store.h"

/* ---- configuration (config.c) ------------------------------------------------ */

typedef struct tt_config {
  /* the database: a SQLite file, a .csv/.tsv file or a folder of them, or a
   * server's URI */
  const char *db;
  bool immutable;          /* SQLite: open with immutable=1 */
  tt_csv_header csv_header;
  const char *csv_types;   /* CSV: --csv-types overrides (db/csv_sniff.h) */
  const char *engine;      /* --engine: "sqlite", "duckdb"; NULL: by the file */
  const char *schemas;     /* PostgreSQL: the schemas the catalog lists */
  const char *trust_functions; /* PostgreSQL: schemas whose functions may run, comma-
                                * separated (tt_config_trust_functions: --trust-functions,
                                * else TABLETALK_TRUST_FUNCTIONS); NULL: none */
  const char *knowledge;   /* the knowledge file (NULL: the one beside the database) */
  /* limits */
  double sql_timeout_s;    /* each query (5) */
  long schema_budget;      /* prompt tokens for the schema (2000) */
  int selector;            /* tt_selector_mode: a selector step names the tables
                            * first (auto: from 400 tables; --selector) */
  int embeddings;          /* tt_embed_mode: an embedding score in the ranking
                            * (--embeddings, else TABLETALK_EMBEDDINGS; auto) */
  bool embeddings_given;   /* ... given as a flag (the variable is not read) */
  const char *embed_model; /* the endpoint's embedding model (--embed-model; NULL:
                            * TABLETALK_EMBED_MODEL, else the chat model) */
  bool private_mode;       /* the model never sees a value (--private, or
                            * TABLETALK_PRIVATE read by tt_config_resolve) */
  /* the model */
  const char *model_path;  /* a GGUF file run in-process */
  const char *base_url;    /* an OpenAI-compatible endpoint */
  const char *model;       /* the model name sent to it */
  const char *api_key_env; /* the variable holding its API key */
  const char *profile;     /* how the model is prompted (NULL: detected) */
  long ctx, threads;       /* context tokens, CPU threads (0: defaults) */
  double llm_timeout_s;    /* silence from the endpoint (0: 120) */
  double llm_deadline_s;   /* one model call (0: 600) */
  bool no_stream;
  long max_tokens;         /* longest reply (2048) */
  double temperature;
  long seed;
  bool has_seed;
  bool llama_no_reuse;     /* the embedded engine recomputes every prompt */
  bool llama_cold;         /* ... computes the first prefix instead of restoring it */
  bool llama_no_prefix_file; /* ... neither restores nor saves the prefix on disk */
  bool progress;           /* progress bars on stderr (a model loading, an index built) */
  /* charts the agent draws */
  int chart_w, chart_h;    /* pixels (0: 1200x700) */
  bool chart_svg;
  const char *chart_out;   /* a question's first chart goes here */
  /* where state goes; NULL: TABLETALK_STATE_DIR, XDG_STATE_HOME, ~/.local/state */
  const char *state_dir;
  /* filled by tt_config_init and tt_config_resolve */
  tt_dotenv *env;          /* the environment, ./.env and the config file */
  char *owned_state_dir, *cache_dir, *data_dir, *owned_trust;
} tt_config;

/* Defaults, and the environment, ./.env and the config file read into
 * c->env. Strings set later are borrowed: they must outlive c. */
void tt_config_init(tt_config *c);
/* Fills the folders the flags left unset from TABLETALK_* (environment,
 * then ./.env, then the config file). The model's settings are read from
 * there when a model is made (tt_models), so that a command that needs no
 * model never fails on them. */
bool tt_config_resolve(tt_config *c, tt_error *err);
void tt_config_free(tt_config *c);
/* Adds the schemas of list (one name, or names separated by commas) to
 * trust_functions (--trust-functions, which may be given again). false
 * when list holds an empty name. */
bool tt_config_trust_functions(tt_config *c, const char *list);
/* A TABLETALK_* (or any) value from the environment, ./.env or the config
 * file; NULL when unset or empty. */
const char *tt_config_get_value(const tt_config *c, const char *name);
/* "auto", "on", "off" as a tt_embed_mode into *mode; false for another word. */
bool tt_config_embeddings_mode(const char *word, int *mode);
/* The embedding model named by --embed-model or TABLETALK_EMBED_MODEL, or NULL. */
const char *tt_config_embed_model(const tt_config *c);
/* The options every query gets, and those of the agent: derived here once. */
tt_db_opts tt_config_db_opts(const tt_config *c);
tt_agent_opts tt_config_agent_opts(const tt_config *c);
/* The state folder (threads, traces, charts) after tt_config_resolve. */
const char *tt_config_state_dir(const tt_config *c);
/* How long traces and charts are kept: TABLETALK_KEEP (an age such as 30d,
 * or "never": 0), else 90 days. *bad when the variable holds no age. */
#define TT_KEEP_DEFAULT_DAYS 90
long long tt_config_keep_seconds(const tt_config *c, bool *bad);
/* How long reading the schema's rows may take at the start
 * (TABLETALK_SCHEMA_SECONDS, default 3; 0: no limit): what is left is read
 * in the background. *bad when the variable holds no number of seconds. */
double tt_config_schema_seconds(const tt_config *c, bool *bad);
/* How long a cache entry may go unused (TABLETALK_CACHE_KEEP: an age, or
 * "never": 0; default 30 days) and how large the catalog and value-index
 * caches may grow together (TABLETALK_CACHE_MAX: bytes, or 500M, 2G;
 * "0": no limit; default 1G). *bad when either variable holds no value of
 * its kind (the defaults are given then). */
#define TT_CACHE_KEEP_DEFAULT_DAYS 30
#define TT_CACHE_MAX_DEFAULT (1024LL * 1024 * 1024)
void tt_config_cache_limits(const tt_config *c, long long *max_age_s, long long *max_bytes,
                            bool *bad);

/* ---- models (models.c) ------------------------------------------------------- */

typedef struct tt_models tt_models;

/* Where the model comes from: --model-path, then --base-url, then
 * TABLETALK_MODEL_PATH, then the installed default (tabletalk pull), then
 * TABLETALK_BASE_URL. */
typedef struct tt_model_choice {
  char *path;         /* a GGUF file (the embedded engine), or NULL */
  const char *url;    /* else an endpoint, or NULL: none is configured */
  const char *source; /* the flag, variable or default it came from */
} tt_model_choice;

/* The factory reads c (borrowed: it must outlive the factory). */
tt_models *tt_models_new(const tt_config *c);
void tt_models_free(tt_models *m);
/* What the configuration picks (free with tt_model_choice_free). */
void tt_models_choice(const tt_models *m, tt_model_choice *out);
void tt_model_choice_free(tt_model_choice *ch);
/* The settings the configuration picks are usable (a bad TABLETALK_BASE_URL
 * is a TT_ERR_CONFIG error now, not at the first question); makes nothing. */
bool tt_models_check(const tt_models *m, tt_error *err);
/* A new model as configured, or NULL with err: none configured (the error
 * says how to get one), a file that cannot load, an unusable setting. */
tt_llm *tt_models_make(tt_models *m, tt_error *err);
/* The settings of the HTTP backend for url (for doctor's probes). */
bool tt_models_http_opts(const tt_models *m, const char *url, tt_llm_http_opts *out,
                         tt_error *err);
/* The shared model, made on first use; NULL with err. A later call tries
 * again (a model pulled meanwhile is found). */
tt_llm *tt_models_shared(tt_models *m, tt_error *err);
/* A model for one question: the shared one while no other question holds
 * it, else (when the backend answers calls in parallel) one of its own,
 * else the shared one once it is free; on_wait (may be NULL) is told once
 * when the question has to wait. NULL with err when none can be made or
 * cancel was set while waiting. Hand it back with tt_models_release. */
tt_llm *tt_models_acquire(tt_models *m, volatile sig_atomic_t *cancel,
                          void (*on_wait)(void *ud), void *ud, tt_error *err);
void tt_models_release(tt_models *m, tt_llm *llm);

/* ---- the service (service.c) ------------------------------------------------- */

typedef struct tt_service tt_service;

enum {
  TT_SERVICE_SCHEMA = 1 << 0,      /* read the schema */
  TT_SERVICE_BACKGROUND = 1 << 1,  /* ... on a thread of its own (the front end
                                    * answers at once; tt_service_schema waits) */
  TT_SERVICE_VALUES_BUILT = 1 << 2,/* build the value index instead of the cache */
  TT_SERVICE_NO_VALUES = 1 << 3,   /* no value index at all */
  TT_SERVICE_HOUSEKEEPING = 1 << 4,/* traces and charts past TABLETALK_KEEP go (once a day) */
  TT_SERVICE_MODEL = 1 << 5,       /* make the model now: a missing one is an error */
  TT_SERVICE_WHOLE_SCHEMA = 1 << 6,/* read the whole schema at the start, however long
                                    * it takes (no TABLETALK_SCHEMA_SECONDS: what
                                    * measures it, evals and benchmarks) */
};

/* Parses c->db once, opens it read-only, reads its schema as flags ask and
 * sets up the models. c (resolved) is borrowed. NULL with err. */
tt_service *tt_service_open(const tt_config *c, unsigned flags, tt_error *err);
void tt_service_free(tt_service *s);
const tt_config *tt_service_config(const tt_service *s);
const tt_db_target *tt_service_target(const tt_service *s);
/* The service's own handle (for a front end on one thread). */
tt_db *tt_service_db(tt_service *s);
/* What the user should know about how the database is reached (a
 * PostgreSQL superuser or a role that can write: tt_db_warning), or NULL;
 * printed on stderr at the start, and for front ends to show. */
const char *tt_service_warning(tt_service *s);
/* Another handle on the same database, for a worker thread (free with
 * tt_db_close); opts NULL: the configuration's. */
tt_db *tt_service_db_open(tt_service *s, const tt_db_opts *opts, tt_error *err);
/* The schema, waiting for a background read; NULL with err. */
const tt_schema *tt_service_schema(tt_service *s, tt_error *err);
/* The schema if it is read within wait_ms, else NULL (no error). */
const tt_schema *tt_service_schema_ready(tt_service *s, double wait_ms);
tt_models *tt_service_models(tt_service *s);
/* Milliseconds the service took to open (database, schema, model). */
double tt_service_startup_ms(const tt_service *s);

/* ---- the event stream (events.c) -------------------------------------------- */

/* The event as JSON (docs/reference/events.md): "event" and its fields;
 * the session adds "ts" and "run_id" before tracing and handing it on. */
json_t *tt_event_json(const tt_event *ev);
/* Whether the trace keeps events of this kind (the streamed pieces of the
 * answer are only for a live view: the answer event holds the text). */
bool tt_event_traced(tt_event_kind kind);
/* One line for people: "ran SQL: 3 rows" (MCP progress, logs). */
void tt_event_summary(const tt_event *ev, tt_buf *out);

/* ---- questions (ask.c) ------------------------------------------------------- */

typedef struct tt_session tt_session;

/* What a front end receives while a question runs. */
typedef struct tt_session_hooks {
  /* every event in order, with its JSON exactly as the trace keeps it
   * (valid during the call; text pieces are not traced but have JSON too) */
  void (*on_event)(void *ud, const tt_event *ev, const json_t *json);
  void *ud;
  volatile sig_atomic_t *cancel; /* set: the question stops within milliseconds */
} tt_session_hooks;

/* Where a session's charts go and how big they are. */
typedef struct tt_chart_files {
  bool svg;          /* SVG instead of PNG */
  int width, height; /* pixels; 0: 1200x700 */
  bool both;         /* also the other format beside each file (tabletalk web:
                      * SVG to show, PNG to download) */
  const char *out;   /* a run's first chart goes here (its second to NAME-2.EXT,
                      * ...); NULL: the state folder */
} tt_chart_files;

/* Questions on svc with a database handle of their own (so sessions on
 * several threads run side by side). The model is llm when given (borrowed),
 * else one from the service's factory for each question. NULL with err when
 * the thread store cannot be opened. */
tt_session *tt_session_new(tt_service *svc, tt_llm *llm, tt_error *err);
void tt_session_free(tt_session *s);
/* The run id the next question gets (copied), for a front end that names
 * the run before it starts; without it each question gets a fresh one. */
void tt_session_set_run_id(tt_session *s, const char *run_id);
/* Private mode for the session's next questions (a web page's switch, an
 * MCP call's argument); with the configuration's private mode it is on
 * whatever this says. */
void tt_session_set_private(tt_session *s, bool on);
bool tt_session_private(const tt_session *s);
/* Where the charts of later questions go (copied). Default: the
 * configuration's size, format and --out. */
void tt_session_set_chart_files(tt_session *s, const tt_chart_files *f);
/* The handle the session's questions run on. */
tt_db *tt_session_db(tt_session *s);

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
 * The agent's events reach hooks (may be NULL) after they are traced. When
 * the thread cannot be read, or no model can be had, the question is not
 * asked: run->status is failed and run->error says why. A trace that cannot
 * be written or a turn that cannot be saved does not stop the question;
 * info->warning says what was lost. */
void tt_session_ask(tt_session *s, const char *thread, const char *question,
                    const tt_session_hooks *hooks, tt_run *run, tt_ask_result *info);

/* ---- the run as JSON (run_json.c) ------------------------------------------- */

/* The one JSON shape of a run (docs/reference/run-json.md), the same for
 * `ask --json`, MCP's ask_database, the web page and the trace's run_end:
 * status, answer, clarification, error, sql, verified, unbacked_numbers,
 * refusal, charts, thread_id, run_id, trace, resumed, warning, totals, then
 * the rows of the final query: columns, column_types, rows (the first
 * max_rows), row_count, truncated (truncated_by), elapsed_ms. max_rows < 0
 * leaves the row fields out. info may be NULL. The caller frees. */
json_t *tt_run_json(const tt_run *run, const tt_ask_result *info, const char *thread,
                    long max_rows);

#endif
