/* cli.h — what the files of the command-line front end share: exit codes,
 * the command table, terminal facts and the renderers for result sets. The
 * CLI is one user of the library layers; it never reaches inside them. */
#ifndef TT_CLI_H
#define TT_CLI_H

#include <stdio.h>

#include <getopt.h>
#include <signal.h>

#include "chart/chart.h"
#include "db/db.h"
#include "schema/schema.h"
#include "session/session.h"

enum {
  TT_EXIT_OK = 0,
  TT_EXIT_FAIL = 1,
  TT_EXIT_USAGE = 2,
  TT_EXIT_REFUSED = 3,
  TT_EXIT_LIMIT = 4,
};

typedef struct tt_cmd_spec tt_cmd_spec;

/* One command: name, one-line summary for --help, entry point, options. */
typedef struct tt_command {
  const char *name;
  const char *summary;
  int (*run)(int argc, char **argv);
  const tt_cmd_spec *spec;
} tt_command;

int cmd_sql(int argc, char **argv);
int cmd_learn(int argc, char **argv);
int cmd_schema(int argc, char **argv);
int cmd_ask(int argc, char **argv);
int cmd_chat(int argc, char **argv);
int cmd_trace(int argc, char **argv);
int cmd_pull(int argc, char **argv);
int cmd_models(int argc, char **argv);
int cmd_bench(int argc, char **argv);
int cmd_serve_mcp(int argc, char **argv);
int cmd_chart(int argc, char **argv);
int cmd_eval(int argc, char **argv);
int cmd_doctor(int argc, char **argv);
int cmd_gc(int argc, char **argv);
int cmd_web(int argc, char **argv);

int cmd_completion(int argc, char **argv);

extern const tt_cmd_spec tt_cmd_ask, tt_cmd_chat, tt_cmd_sql, tt_cmd_chart, tt_cmd_schema,
    tt_cmd_learn, tt_cmd_mcp, tt_cmd_eval, tt_cmd_trace, tt_cmd_pull, tt_cmd_models,
    tt_cmd_bench, tt_cmd_doctor, tt_cmd_gc, tt_cmd_completion, tt_cmd_web;

/* Exit code for a db error kind. */
int tt_exit_for(tt_errkind kind);
/* Prints "tabletalk: <msg>" on stderr (escaped) and returns code. */
int tt_fail(int code, const char *fmt, ...) TT_PRINTF(2, 3);
/* Prints "tabletalk CMD: <msg>\n<hint>" for a usage error; returns 2. */
int tt_usage_error(const char *cmd, const char *fmt, ...) TT_PRINTF(2, 3);

/* ---- terminal ---------------------------------------------------------- */

typedef struct tt_term {
  bool tty;      /* the stream is a terminal */
  bool color;    /* ANSI colours allowed (tty, NO_COLOR unset, TERM not dumb) */
  size_t width;  /* columns (80 when unknown) */
} tt_term;

tt_term tt_term_probe(FILE *f);
/* Colour sequences, or "" when colours are off. */
const char *tt_term_bold(const tt_term *t);
const char *tt_term_dim(const tt_term *t);
const char *tt_term_reset(const tt_term *t);
/* Writes the whole buffer to f; false on a write error (EPIPE included). */
bool tt_write_all(FILE *f, const tt_buf *b);
/* tt_write_all for a command's output: 0 when written, also when the reader
 * closed the pipe early (`| head`: a quiet end); 1 after saying why when
 * the write failed otherwise (a full disk). */
int tt_write_result(FILE *f, const tt_buf *b);

/* ---- rendering result sets --------------------------------------------- */

#define TT_CELL_MAX_CHARS 1000 /* per-cell display budget */

/* Box-drawing table on a terminal (fitted to its width), a plain aligned
 * table otherwise. Cells are escaped; numbers are right-aligned. */
void tt_render_table(tt_buf *out, const tt_result *r, const tt_term *t);
/* Tab-separated values: \t \n \r \\ escaped, and unsafe characters
 * shown as visible escapes. NULL is an empty field. */
void tt_render_tsv(tt_buf *out, const tt_result *r, const tt_term *t);
/* RFC 4180 CSV, data as it is; on a terminal unsafe characters are escaped. */
void tt_render_csv(tt_buf *out, const tt_result *r, const tt_term *t);
/* "3 rows, 0.4 ms" (with a truncation note when cut, and the number of
 * cells cut to fit --max-bytes). */
void tt_render_footer(tt_buf *out, const tt_result *r, const tt_term *t);
/* "1 cell cut to fit LIMIT", "2 cells ..." (LIMIT: "--max-bytes"...). */
void tt_render_cells_cut(tt_buf *out, size_t n, const char *limit);
/* One CSV (csv) or TSV line of column names, and of values (NULL as an
 * empty field, blobs as \x hex). */
void tt_render_delimited_header(tt_buf *out, const char *const *names, size_t ncols,
                                const tt_term *t, bool csv);
void tt_render_delimited_row(tt_buf *out, const tt_value *row, size_t ncols, const tt_term *t,
                             bool csv);
/* A Markdown table's header (names and the --- line), and one row. */
void tt_render_markdown_header(tt_buf *out, const char *const *names, size_t ncols,
                               const tt_term *t);
void tt_render_markdown_row(tt_buf *out, const tt_value *row, size_t ncols, const tt_term *t);

/* ---- exports: rows for pipelines (export.c) ------------------------------ */

typedef enum tt_format {
  TT_FMT_TABLE, TT_FMT_TSV, TT_FMT_CSV, TT_FMT_JSON, TT_FMT_MARKDOWN,
} tt_format;

/* "table", "tsv", "csv", "json", "markdown" (or "md"). */
bool tt_format_parse(const char *s, tt_format *out);

typedef struct tt_export_opts {
  tt_format fmt;          /* csv, tsv, json or markdown */
  long max_rows;          /* 0: every row */
  long max_bytes;         /* 0: no cap (queries only) */
  const char *cut_reason; /* the note when the rows given were already cut */
  bool quiet_cut;         /* no note on stderr (the caller says it) */
  json_t *json_head;      /* json: fields written before the result's own */
  /* queries: called with the cursor once it is open, and with NULL before
   * it closes (a watchdog reads its engine time; nothing runs per row) */
  void (*on_cursor)(void *ud, const tt_cursor *cur);
  void *ud;
} tt_export_opts;

/* Streams the rows of one guarded query to stdout (memory for one row).
 * Returns an exit code after printing any problem, or -1 with err filled
 * in when the query could not start (nothing was written). */
int tt_export_query(tt_db *db, const char *sql, size_t len, const tt_export_opts *o,
                    tt_error *err);
/* The same for rows already read. */
int tt_export_result(const tt_result *r, const tt_export_opts *o);

/* ---- what the agent commands share (setup.c) ------------------------------ */

/* The options of a command that runs the agent (ask, chat, web, serve-mcp,
 * eval, doctor): the run's configuration, which the session layer reads,
 * and how the CLI shows it. */
typedef struct tt_cli_agent_opts {
  tt_config cfg;           /* everything the session layer needs */
  const char *thread;      /* --thread NAME */
  bool json, quiet;
  bool no_preview;         /* --no-preview */
  bool show_thinking;      /* --show-thinking */
} tt_cli_agent_opts;

/* The defaults (and the environment, ./.env and the config file read);
 * free with tt_cli_agent_free. */
void tt_cli_agent_defaults(tt_cli_agent_opts *o);
void tt_cli_agent_free(tt_cli_agent_opts *o);

/* Prints err ("tabletalk: what; what to do", or for a setting the user
 * gave, a usage error of cmd) and returns its exit code. */
int tt_cli_error(const char *cmd, const tt_error *err);

/* ---- options: one table per command, built from shared groups (opts.c) -- */

/* Every option of every command has one id from this list (short letters
 * are only spellings: the parser hands the id to the command either way). */
enum {
  TT_OPT_HELP = 256,
  /* model (tt_opts_model) */
  TT_OPT_MODEL_PATH, TT_OPT_CTX, TT_OPT_THREADS, TT_OPT_BASE_URL, TT_OPT_MODEL,
  TT_OPT_API_KEY_ENV, TT_OPT_LLM_TIMEOUT, TT_OPT_LLM_DEADLINE, TT_OPT_NO_STREAM,
  TT_OPT_MAX_TOKENS, TT_OPT_TEMPERATURE, TT_OPT_SEED, TT_OPT_PROFILE,
  /* limits, state and the database (tt_opts_limits, tt_opts_db) */
  TT_OPT_SQL_TIMEOUT, TT_OPT_SCHEMA_BUDGET, TT_OPT_PRIVATE, TT_OPT_IMMUTABLE, TT_OPT_KNOWLEDGE,
  TT_OPT_STATE_DIR, TT_OPT_HEADER, TT_OPT_NO_HEADER, TT_OPT_CSV_TYPES, TT_OPT_ENGINE, TT_OPT_DB_URL,
  TT_OPT_SCHEMAS, TT_OPT_TRUST_FUNCTIONS, TT_OPT_SELECTOR, TT_OPT_EMBEDDINGS, TT_OPT_EMBED_MODEL,
  /* charts an agent draws (tt_opts_chart) */
  TT_OPT_SIZE, TT_OPT_CHART_FORMAT, TT_OPT_NO_PREVIEW,
  /* a run of the agent shown to a person (ask, chat) */
  TT_OPT_THREAD, TT_OPT_SHOW_THINKING, TT_OPT_QUIET,
  /* the commands' own */
  TT_OPT_JSON, TT_OPT_FORMAT, TT_OPT_MAX_ROWS, TT_OPT_MAX_BYTES, TT_OPT_SQL_ONLY, TT_OPT_OUT,
  TT_OPT_KIND, TT_OPT_X, TT_OPT_Y, TT_OPT_SERIES, TT_OPT_TITLE, TT_OPT_X_LABEL, TT_OPT_Y_LABEL,
  TT_OPT_SORT, TT_OPT_LIMIT, TT_OPT_ORIENTATION, TT_OPT_PREVIEW,
  TT_OPT_BUDGET, TT_OPT_QUESTION, TT_OPT_SCORES,
  TT_OPT_HTTP, TT_OPT_ALLOW_ORIGIN, TT_OPT_MAX_MESSAGE, TT_OPT_WORKERS, TT_OPT_NO_CACHE,
  TT_OPT_DATA, TT_OPT_N, TT_OPT_TAG, TT_OPT_JOBS, TT_OPT_BACKEND, TT_OPT_RESULTS, TT_OPT_FRESH,
  TT_OPT_COMPARE, TT_OPT_DB, TT_OPT_ONLY, TT_OPT_RUNS, TT_OPT_SINCE, TT_OPT_PRICE_IN,
  TT_OPT_PRICE_OUT, TT_OPT_PRICE_CACHED, TT_OPT_DETAILS,
  TT_OPT_LIST, TT_OPT_NO_DEFAULT, TT_OPT_WHICH,
  TT_OPT_NO_REUSE, TT_OPT_COLD, TT_OPT_GRAMMAR_OVERHEAD,
  TT_OPT_OLDER_THAN, TT_OPT_DRY_RUN,
  TT_OPT_PORT, TT_OPT_HOST, TT_OPT_OPEN, TT_OPT_TOKEN,
};

typedef enum tt_opt_arg { TT_ARG_NONE, TT_ARG_REQUIRED, TT_ARG_OPTIONAL } tt_opt_arg;

/* What a shell completes for an option's value or a command's arguments. */
typedef enum tt_opt_complete {
  TT_COMPLETE_NOTHING, /* free text */
  TT_COMPLETE_FILE,
  TT_COMPLETE_DIR,
  TT_COMPLETE_WORDS,   /* the words in tt_opt.words / tt_cmd_spec.words */
} tt_opt_complete;

/* One option: its id, spellings, value, the one line --help shows and the
 * man page's paragraph. The paragraph (doc) is written in the light markup
 * man.c reads: `code` for literal words (bold in the man page), *word* for
 * placeholders (italic; a backslash before a star makes it a star), a blank
 * line between paragraphs and lines indented by four spaces for examples. */
typedef struct tt_opt {
  int id;
  const char *name;      /* long name, without the dashes */
  char short_name;       /* 0: none */
  tt_opt_arg arg;
  const char *meta;      /* the value's name in help (FILE, N) */
  const char *help;      /* one line, at most 54 columns */
  tt_opt_complete complete;
  const char *words;     /* TT_COMPLETE_WORDS: space-separated */
  const char *doc;       /* the man page's paragraph; every listed option has one */
} tt_opt;

/* Options that belong together, which a command opts into whole. A compact
 * group is listed in --help as its names on a few lines (the man page says
 * what each does); the others one option a line with its help. */
typedef struct tt_opt_group {
  const char *title;     /* NULL: the command's own, under "Options:" */
  bool compact;
  const tt_opt *opts;    /* ends with an entry whose name is NULL */
} tt_opt_group;

extern const tt_opt_group tt_opts_model;  /* the model and how it is called */
extern const tt_opt_group tt_opts_limits; /* query time, schema budget, state */
extern const tt_opt_group tt_opts_db;     /* how the database is read */
/* --db-url URL: the database as a PostgreSQL URI instead of the DB argument
 * (main.c puts it where DB goes); --schemas LIST: which PostgreSQL schemas
 * the catalog lists. Commands with their own tables list the same entries. */
#define TT_DOC_ENGINE                                                                       \
  "Which engine reads a file: `sqlite` or `duckdb` (default `auto`: Parquet, JSON, .duckdb "  \
  "files and globs are read by DuckDB, CSV and TSV files by SQLite below 64 MiB and by "      \
  "DuckDB from there on; see docs/guide/duckdb.md)."
#define TT_OPT_ENGINE_ENTRY                                                                \
  {TT_OPT_ENGINE, "engine", 0, TT_ARG_REQUIRED, "NAME", "sqlite or duckdb reads the file",  \
   TT_COMPLETE_WORDS, "auto sqlite duckdb", TT_DOC_ENGINE}
#define TT_OPT_DB_URL_ENTRY                                                                \
  {TT_OPT_DB_URL, "db-url", 0, TT_ARG_REQUIRED, "URL", "a postgres:// URI instead of DB",   \
   TT_COMPLETE_NOTHING, NULL, TT_DOC_DB_URL}
#define TT_OPT_SCHEMAS_ENTRY                                                               \
  {TT_OPT_SCHEMAS, "schemas", 0, TT_ARG_REQUIRED, "LIST", "PostgreSQL schemas: a,b or !c",  \
   TT_COMPLETE_NOTHING, NULL, TT_DOC_SCHEMAS}
#define TT_OPT_TRUST_FUNCTIONS_ENTRY                                                       \
  {TT_OPT_TRUST_FUNCTIONS, "trust-functions", 0, TT_ARG_REQUIRED, "SCHEMA",                \
   "PostgreSQL, MySQL: let SCHEMA's functions run", TT_COMPLETE_NOTHING, NULL,              \
   TT_DOC_TRUST_FUNCTIONS}
/* The man page's paragraphs of options that several tables list (each
 * command's own table, or a shared group), written once. */
#define TT_DOC_DB_URL                                                                       \
  "The database as a `postgres://` or `postgresql://` URI, given instead of the *DB* "      \
  "argument, which is then left out: `tabletalk sql --db-url postgresql:// \"SELECT 1\"` "  \
  "(ask, chat, sql, chart, schema, learn, serve-mcp, web; not `eval behaviors`, whose "      \
  "`--db` is the Chinook SQLite file or URI, run on a scratch copy). `postgresql://` alone " \
  "connects with libpq's defaults and the PG* variables (`PGHOST`, `PGPORT`, `PGUSER`, "    \
  "`PGDATABASE`, `PGPASSWORD`, `PGSERVICE`, ~/.pgpass). Anything else, or the option "       \
  "twice, is a usage error (exit 2).\n\n"                                                    \
  "A password written in a URI on the command line is overwritten in tabletalk's own "      \
  "arguments as soon as it starts, but other local users can read the command line of a "   \
  "process until then (and a shell keeps its history): keep the password in `PGPASSWORD`, " \
  "~/.pgpass or a `PGSERVICE` entry instead. See POSTGRESQL."
#define TT_DOC_SCHEMAS                                                                      \
  "PostgreSQL: the schemas whose tables and views the catalog lists, as names separated "   \
  "by commas, spelled as in pg_namespace (case matters): `--schemas sales,hr` lists only "   \
  "those; `--schemas '!audit'` lists every schema but audit (quote the `!` from the "        \
  "shell); both kinds together keep the names given less those after `!`. The system "      \
  "schemas are never listed. Queries may still name other schemas: this chooses what the "  \
  "model is shown, not what the role may read. With one schema left the names lose their "  \
  "*schema.* prefix. A list that keeps no table is an error (exit 1) that names the "        \
  "schemas with tables; on a SQLite or CSV database the option is a usage error (exit 2)."
#define TT_DOC_TRUST_FUNCTIONS                                                              \
  "PostgreSQL: let the functions and operators of schema *SCHEMA* run (given again, or "   \
  "as names separated by commas, for several; `TABLETALK_TRUST_FUNCTIONS` when not "       \
  "given). Without it only built-in functions run, and those of a few extensions that "    \
  "only compute (citext, hstore, pg_trgm, PostGIS...): before a query is sent, tabletalk "  \
  "finds in the catalog every function a name in it could resolve to (an overload with a " \
  "closer type match, column notation `t.f`, an operator), and every function, operator " \
  "and type the views it reads use (recursively), their row security policies and a "     \
  "foreign table's handler; a query that could run one of the database's own is refused "  \
  "(exit 3) with a message that names it, the view, and this option. Describing the "       \
  "database samples only the tables and views that pass. Trust a schema only when you "     \
  "trust whoever can create functions in it. See POSTGRESQL. On MySQL and MariaDB, "        \
  "SCHEMA is a database whose stored functions may run (without it no stored function "     \
  "runs, also through a view); see MYSQL AND MARIADB. In a `.duckdb` file, SCHEMA is a "    \
  "schema whose macros may run (without it none runs, by name or through a view or a "      \
  "generated column); see DUCKDB."
#define TT_DOC_IMMUTABLE                                                                    \
  "Open the SQLite file with immutable=1: no locks. Only for files nothing writes: a write " \
  "in progress would be read half-done. Without it, tabletalk waits for writers' locks "     \
  "within the time limit, follows a file replaced by rename, and never creates a file "      \
  "beside the database."
#define TT_DOC_HEADER                                                                       \
  "A CSV file's first line names the columns (default: guessed; see CSV FILES)."
#define TT_DOC_NO_HEADER                                                                    \
  "A CSV file's first line is data: the columns are column_1, column_2 and so on."
#define TT_DOC_CSV_TYPES                                                                    \
  "The types of CSV columns, instead of the ones sniffed from their values: *COL*`=`*TYPE* "  \
  "or *TABLE*`.`*COL*`=`*TYPE* (several files), commas between, e.g. "                      \
  "`--csv-types zip=text,price=decimal-comma`. Types: `integer`, `real`, `decimal-comma` (a "  \
  "real written `9,5`), `text`, `date`, `time`, `timestamp`. A value that is not of the type "  \
  "is read as NULL, and the column's note in the schema says how many and which. A malformed " \
  "value is a usage error (exit 2), a column no file has an error naming it (see CSV FILES)."
#define TT_DOC_KNOWLEDGE                                                                    \
  "Use *FILE* as the knowledge file instead of *DB*.knowledge.json beside the database "    \
  "(see KNOWLEDGE FILE). A malformed *FILE* is a usage error (exit 2) naming the file and "  \
  "line, where a malformed file beside the database is only warned about and left out."
#define TT_DOC_SQL_TIMEOUT                                                                  \
  "Stop a query after this many seconds of work (default 5): the time the database "       \
  "works, not the time spent writing rows."
#define TT_DOC_STATE_DIR                                                                    \
  "The state folder: threads, traces and charts (`TABLETALK_STATE_DIR`; default "           \
  "`$XDG_STATE_HOME/tabletalk`, that is ~/.local/state/tabletalk)."
#define TT_DOC_CHART_SIZE                                                                   \
  "The chart's size in pixels, *W*`x`*H* (1200x700)."
/* Checks --schemas LIST (comma-separated names, each possibly after '!'):
 * 0, or a usage error's exit code after saying why. */
int tt_cli_schemas_option(const char *cmd, const char *arg);
/* --csv-types: 0 when well formed, else the usage error's exit code. */
int tt_cli_csv_types_option(const char *cmd, const char *arg);
/* --trust-functions SCHEMA into cfg: 0, or a usage error's exit code. */
int tt_cli_trust_option(const char *cmd, const char *arg, tt_config *cfg);
/* main.c: takes --db-url URL out of a command's arguments and puts URL
 * first among them (where DB goes), and overwrites any password in a URI
 * argument so that other users do not see it in the process list. Returns
 * the arguments to use (argv itself when nothing changed), or NULL after a
 * usage error (*rc). */
char **tt_cli_db_url_args(const tt_cmd_spec *spec, int *argc, char **argv, int *rc);
/* "DB is a SQLite file, ...": the sentence each command's about ends with */
#define TT_DB_IS \
  "DB: a SQLite, CSV, Parquet, JSON or DuckDB file, a glob, a folder, or a URI."
extern const tt_opt_group tt_opts_chart;  /* charts the agent draws */
extern const tt_opt tt_opts_help_opt[];   /* -h, --help (every command's), then the end */
extern const tt_opt_group tt_opts_run;    /* --thread, --show-thinking, --quiet */

/* Everything the parser, --help and shell completion know of a command. */
struct tt_cmd_spec {
  const char *name;
  const char *usage;     /* synopsis lines after "Usage: ", '\n' between */
  const char *about;     /* one or two sentences */
  const tt_opt_group *const *groups; /* NULL-terminated; -h/--help is added */
  const char *footer;    /* a last line or two, or NULL */
  tt_opt_complete args;  /* what the arguments are */
  const char *words;     /* TT_COMPLETE_WORDS: the first argument's words */
  const char *doc;       /* the man page's description (tt_opt's markup) */
};

/* Handles one parsed option: 0, or an exit code after printing why. */
typedef int (*tt_opt_handler)(void *ud, int id, const char *arg);

#define TT_OPTS_GO (-1)
/* Parses argv[first..] with getopt_long from the spec's table, giving each
 * option to fn; prints --help; reports an unknown option or a missing
 * value as "tabletalk CMD: ..." with the hint. Returns TT_OPTS_GO with
 * optind at the first argument, or the exit code to return (0 after help). */
int tt_opts_parse(const tt_cmd_spec *s, int argc, char **argv, int first, tt_opt_handler fn,
                  void *ud);
/* The --help text of a command (at most 24 lines of 80 columns). */
void tt_opts_help(const tt_cmd_spec *s, FILE *f);

/* The command table (main.c). */
const tt_command *tt_cli_commands(size_t *n);

/* The manual generated from the command table, the option tables and a
 * template for the prose (man.c): `tabletalk --generate-man-page
 * roff|markdown TEMPLATE [OUT]`, which the build runs; not listed in
 * --help. Writes the page (on stdout, or to OUT) and returns 0, or says on
 * stderr what is missing (an option without a doc paragraph...) and
 * returns 1. */
int tt_cli_man_main(int argc, char **argv);

/* The agent option groups' handler: 0 when handled, -1 when id is none of
 * theirs, or the usage exit code after printing the error. */
/* Handles one of the shared options. Returns 0 when handled, -1 when c is
 * not one of them, or the usage exit code after printing the error. */
int tt_cli_agent_option(int c, const char *arg, tt_cli_agent_opts *o, const char *cmd);

/* A service on the database and a session on it, as ask and chat use. */
typedef struct tt_cli_env {
  tt_service *svc;
  tt_session *session;
} tt_cli_env;

/* Resolves o's configuration (o->cfg.db is the database), opens the
 * service (database, schema, model) and a session. Returns 0, or an exit
 * code after printing what went wrong. */
int tt_cli_env_open(tt_cli_env *e, const char *cmd, tt_cli_agent_opts *o);
void tt_cli_env_close(tt_cli_env *e);

/* Installs the Ctrl-C handler; returns the flag it sets. */
volatile sig_atomic_t *tt_interrupt_install(void);
/* For servers: SIGINT and SIGTERM set the flag (a second one ends the
 * process), SIGPIPE is ignored. */
volatile sig_atomic_t *tt_interrupt_install_server(void);
void tt_interrupt_clear(void);

/* ---- charts (cmd_chart.c) ------------------------------------------------------ */

/* Parses --size WIDTHxHEIGHT; false with the reason in err (TT_ERR_CONFIG). */
bool tt_cli_parse_size(const char *s, int *w, int *h, tt_error *err);
/* A chart file name tabletalk can write: NAME.png or NAME.svg. */
bool tt_cli_chart_file_ok(const char *path);
/* The terminal preview of c for terminal t (at most 100 columns wide). */
void tt_cli_chart_preview(const tt_chart *c, const tt_term *t, tt_buf *out);

/* ---- showing a run --------------------------------------------------------- */

typedef struct tt_ui tt_ui;

/* Progress lines, a spinner and the answer as it streams, on a terminal;
 * quiet shows nothing but the result. */
tt_ui *tt_ui_new(bool quiet, bool json, volatile sig_atomic_t *cancel);
void tt_ui_hooks(tt_ui *ui, tt_session_hooks *out);
/* Chart previews after the answer on a terminal (on unless turned off). */
void tt_ui_set_preview(tt_ui *ui, bool on);
/* The model's thought before each call, printed on stderr (off unless
 * asked for, also when quiet). */
void tt_ui_set_thinking(tt_ui *ui, bool on);
/* Stops the spinner and removes streamed text before the result prints. */
void tt_ui_done(tt_ui *ui);
/* How a run is printed (ask's options; chat passes NULL: the defaults). */
typedef struct tt_ui_out {
  tt_format format;     /* table (people), csv, tsv, json, markdown */
  long max_rows;        /* rows shown (0: 10 in the table, all otherwise) */
  bool sql_only;        /* only the final SQL */
  const char *reply_db; /* the database as given: the command that answers a
                         * clarifying question names it; NULL: no hint */
  tt_db *db;            /* to read the final query again for more rows */
  double timeout_s;     /* its time limit (0: the handle's) */
} tt_ui_out;

/* Prints the result; returns the exit code (0, 1, 3 refused, 130). */
int tt_ui_print_result(tt_ui *ui, const tt_run *run, const tt_ask_result *info,
                       const char *thread, const tt_ui_out *o);
void tt_ui_free(tt_ui *ui);
/* One JSON object: answer, sql, columns, rows, status, clarification... */
void tt_print_run_json(const tt_run *run, const tt_ask_result *info, const char *thread,
                       const tt_ui_out *o);
int tt_exit_for_run(const tt_run *run);
/* Prints a run's trace readably (or as JSON). Returns an exit code. */
int tt_trace_print(const char *state_dir, const char *run_id, bool json);

#endif
