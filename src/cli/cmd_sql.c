/* cmd_sql.c — `tabletalk sql DB "SQL"`: run one guarded, read-only query
 * and print the rows: a table for people (the first 200 rows by default),
 * or every row as CSV, TSV or JSON for pipelines, streamed as they come so
 * that memory does not grow with the result. A watchdog ends the process
 * shortly after the time limit even if SQLite is stuck inside a single long
 * operation the progress handler cannot interrupt. */
#include "cli/cli.h"

#include <assert.h>
#include <getopt.h>
#include <stdio.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>

static const tt_opt tt_sql_own[] = {
    {TT_OPT_FORMAT, "format", 'f', TT_ARG_REQUIRED, "FMT", "table (default), csv, tsv or json", TT_COMPLETE_WORDS, "table csv tsv json",
     "`table` (the default), `csv`, `tsv` or `json`."},
    {TT_OPT_JSON, "json", 0, TT_ARG_NONE, NULL, "the same as --format json", TT_COMPLETE_NOTHING, NULL,
     "The same as `--format json`."},
    {TT_OPT_SQL_TIMEOUT, "timeout", 't', TT_ARG_REQUIRED, "SECS", "stop the query after SECS s of work (5)", TT_COMPLETE_NOTHING, NULL,
     TT_DOC_SQL_TIMEOUT " The time limit is exit 4; a watchdog ends the process "
     "shortly after it, should the database be stuck inside one long operation."},
    {TT_OPT_MAX_ROWS, "max-rows", 0, TT_ARG_REQUIRED, "N", "at most N rows (table: 200; others: all)", TT_COMPLETE_NOTHING, NULL,
     "At most *N* rows: the table shows 200 by default, csv, tsv and json every row unless this "
     "is given. A cut is announced on stderr and marked truncated in JSON."},
    {TT_OPT_MAX_BYTES, "max-bytes", 0, TT_ARG_REQUIRED, "N", "at most N bytes of values (table: 1000000)", TT_COMPLETE_NOTHING, NULL,
     "At most *N* bytes of values (the table's default: 1000000; csv, tsv and json: no cap "
     "unless this is given). A row is never left out for being too large: a first row over "
     "*N* is shown with its longest values cut to fit, each followed by `…[cut N bytes]` (the "
     "bytes left out), and counted in the footer, in JSON (`cells_cut`) and on stderr."},
    {TT_OPT_IMMUTABLE, "immutable", 0, TT_ARG_NONE, NULL, "open with immutable=1 (no locking)", TT_COMPLETE_NOTHING, NULL,
     TT_DOC_IMMUTABLE},
    TT_OPT_DB_URL_ENTRY,
    TT_OPT_ENGINE_ENTRY,
    TT_OPT_TRUST_FUNCTIONS_ENTRY,
    {TT_OPT_HEADER, "header", 0, TT_ARG_NONE, NULL, "a CSV file's first line names the columns", TT_COMPLETE_NOTHING, NULL,
     TT_DOC_HEADER},
    {TT_OPT_NO_HEADER, "no-header", 0, TT_ARG_NONE, NULL, "a CSV file's first line is data", TT_COMPLETE_NOTHING, NULL,
     TT_DOC_NO_HEADER},
    {TT_OPT_CSV_TYPES, "csv-types", 0, TT_ARG_REQUIRED, "COL=TYPE,...", "types of CSV columns", TT_COMPLETE_NOTHING, NULL,
     TT_DOC_CSV_TYPES},
    {0, NULL, 0, 0, NULL, NULL, 0, NULL, NULL},
};
static const tt_opt_group tt_sql_group = {NULL, false, tt_sql_own};
static const tt_opt_group *const tt_sql_groups[] = {&tt_sql_group, NULL};
const tt_cmd_spec tt_cmd_sql = {
    .name = "sql",
    .usage = "tabletalk sql DB \"SQL\" [options]\ntabletalk sql DB - [options]    (read the SQL from standard input)",
    .about = "Run one read-only SQL query on DB and print the rows; writes, schema changes,\n"
             "ATTACH, PRAGMA, extensions and several statements are refused with the reason.\n" TT_DB_IS,
    .groups = tt_sql_groups,
    .footer = "SQL that starts with '-' goes after '--'. csv, tsv and json stream every row.\n"
              "Exit codes: 0 ok, 1 SQL error, 2 usage, 3 refused, 4 stopped by a limit.",
    .args = TT_COMPLETE_FILE,
    .doc =
        "Run one read-only query and print the rows: a table (box drawing on a terminal, the "
        "expanded layout when wider than it, plain aligned text otherwise) of the first 200 "
        "rows, then *N* rows, *M* ms. With `-` as *SQL*, read it from standard input (any "
        "bytes); empty SQL is a usage error, and SQL that starts with `-` goes after `--`. csv, "
        "tsv and json write every row, streamed as the database returns them (memory does not "
        "grow with the row count), unless `--max-rows` or `--max-bytes` is given; a cut is "
        "announced on stderr and, in JSON, with `truncated_by`; a value cut to fit `--max-bytes` "
        "ends in `…[cut N bytes]` and is counted (`cells_cut` in JSON). Blobs are exported as \\x and "
        "lower-case hex (PostgreSQL's bytea form), NULL as an empty field in CSV and TSV. A "
        "closed pipe (`| head`) ends the output quietly with 0.\n\n"
        "With `--format json` the output is one object, the rows or the error:\n\n"
        "    {\"columns\":[...],\"column_types\":[...],\"rows\":[[...]],\"row_count\":N,\"truncated\":B,\"cells_cut\":N,\"elapsed_ms\":N}\n    "
        "{\"error\":{\"kind\":\"refused|timeout|limit|sql|io\",\"reason\":\"write|schema|...\",\"message\":\"...\"}}\n\n"
        "(`truncated_by` only when truncated, `cells_cut` only when a value was cut.)\n\n"
        "`reason` for refusals: write, schema, attach, transaction, pragma, function, internals, "
        "multiple, explain, text.\n\n"
        "Exit status: 0 ok, 1 SQL error or missing file, 2 usage (also empty SQL), 3 refused by "
        "the guard, 4 stopped by a limit (time, memory, size).",
};

typedef struct tt_sql_cli {
  tt_config cfg;
  long max_rows, max_bytes;
  tt_format fmt;
  bool rows_given, bytes_given;
} tt_sql_cli;

static int tt_sql_option(void *ud, int id, const char *arg) {
  tt_sql_cli *q = ud;
  long n;
  switch (id) {
  case TT_OPT_FORMAT:
    if (!tt_format_parse(arg, &q->fmt) || q->fmt == TT_FMT_MARKDOWN)
      return tt_usage_error("sql", "unknown format '%s' (use table, csv, tsv or json)", arg);
    return 0;
  case TT_OPT_JSON: q->fmt = TT_FMT_JSON; return 0;
  case TT_OPT_SQL_TIMEOUT:
    if (!tt_parse_double(arg, 0.001, 86400, &q->cfg.sql_timeout_s))
      return tt_usage_error("sql", "--timeout wants seconds between 0.001 and 86400, not '%s'", arg);
    return 0;
  case TT_OPT_MAX_ROWS:
    if (!tt_parse_long(arg, 1, 100000000, &n))
      return tt_usage_error("sql", "--max-rows wants a number from 1 to 100000000, not '%s'", arg);
    q->max_rows = n;
    q->rows_given = true;
    return 0;
  case TT_OPT_MAX_BYTES:
    if (!tt_parse_long(arg, 1, 1L << 32, &n))
      return tt_usage_error("sql", "--max-bytes wants a number from 1 to 4294967296, not '%s'", arg);
    q->max_bytes = n;
    q->bytes_given = true;
    return 0;
  case TT_OPT_IMMUTABLE: q->cfg.immutable = true; return 0;
  case TT_OPT_TRUST_FUNCTIONS: return tt_cli_trust_option("sql", arg, &q->cfg);
  case TT_OPT_HEADER: q->cfg.csv_header = TT_CSV_HEADER_YES; return 0;
  case TT_OPT_NO_HEADER: q->cfg.csv_header = TT_CSV_HEADER_NO; return 0;
  case TT_OPT_CSV_TYPES: {
    int rc = tt_cli_csv_types_option("sql", arg);
    if (!rc) q->cfg.csv_types = arg;
    return rc;
  }
  case TT_OPT_ENGINE: q->cfg.engine = arg; return 0;
  }
  return 0;
}

/* The watchdog's message is prepared before it is armed: the signal
 * handler may only write() and _exit() (and re-arm its timer). */
static char tt_watchdog_msg[256];
static size_t tt_watchdog_len;
static int tt_watchdog_fd = STDERR_FILENO;
/* the time the database may work: the limit plus a grace of 0.75 s */
static double tt_watchdog_budget_ms;
/* a streaming export's cursor while it is open: then the time spent inside
 * the engine decides, not the wall clock (writing rows to a slow reader
 * does not count against the limit) */
static _Atomic(const tt_cursor *) tt_watchdog_cursor;

static_assert(__atomic_always_lock_free(sizeof(const tt_cursor *), 0),
              "the signal handler reads the cursor pointer");

/* One shot in secs seconds (setitimer is a plain system call on Linux, safe
 * in the handler too). */
static void tt_watchdog_after(double secs) {
  if (secs < 0.01) secs = 0.01;
  struct itimerval it = {0};
  it.it_value.tv_sec = (time_t)secs;
  it.it_value.tv_usec = (suseconds_t)((secs - (double)(time_t)secs) * 1e6);
  setitimer(ITIMER_REAL, &it, NULL);
}

/* Fires once the database could have used its whole budget. During an
 * export the timer is armed once, not at every row: when it fires while
 * the engine has used less (the rest went to writing rows), it is armed
 * again for what is left, at least 50 ms later, so it fires a bounded
 * number of times however many rows pass. */
static void tt_watchdog_fire(int sig) {
  (void)sig;
  const tt_cursor *cur = atomic_load(&tt_watchdog_cursor);
  if (cur) {
    double left_ms = tt_watchdog_budget_ms - tt_cursor_engine_ms_now(cur);
    if (left_ms > 0) {
      tt_watchdog_after(left_ms < 50 ? 0.05 : left_ms / 1000.0);
      return;
    }
  }
  ssize_t ignored = write(tt_watchdog_fd, tt_watchdog_msg, tt_watchdog_len);
  (void)ignored;
  _exit(TT_EXIT_LIMIT);
}

static void tt_watchdog_disarm(void) {
  struct itimerval it = {0};
  setitimer(ITIMER_REAL, &it, NULL);
}

/* The export's cursor, once open (NULL before it closes: the query is
 * over, so the watchdog goes; it is disarmed before the pointer goes, so
 * that a last signal never finds the cursor missing). */
static void tt_watchdog_on_cursor(void *ud, const tt_cursor *cur) {
  (void)ud;
  if (!cur) tt_watchdog_disarm();
  atomic_store(&tt_watchdog_cursor, cur);
}

static void tt_watchdog_arm(double timeout_s, tt_format fmt) {
  int n;
  if (fmt == TT_FMT_JSON) {
    tt_watchdog_fd = STDOUT_FILENO;
    n = snprintf(tt_watchdog_msg, sizeof tt_watchdog_msg,
                 "{\"error\":{\"kind\":\"timeout\",\"message\":\"query stopped "
                 "after the %.3g s time limit; narrow it (WHERE, LIMIT) or "
                 "raise --timeout\"}}\n", timeout_s);
  } else {
    n = snprintf(tt_watchdog_msg, sizeof tt_watchdog_msg,
                 "tabletalk: timeout: query stopped after the %.3g s time "
                 "limit; narrow it (WHERE, LIMIT) or raise --timeout\n", timeout_s);
  }
  tt_watchdog_len = n > 0 ? (size_t)n : 0;
  /* SA_RESTART: a write to a slow reader that the timer interrupts goes on */
  struct sigaction sa = {.sa_handler = tt_watchdog_fire, .sa_flags = SA_RESTART};
  sigemptyset(&sa.sa_mask);
  sigaction(SIGALRM, &sa, NULL);
  /* The progress handler normally stops a query at the limit; this fires
   * only when one operation overruns it, before the grace is over. */
  tt_watchdog_budget_ms = (timeout_s + 0.75) * 1000.0;
  tt_watchdog_after(timeout_s + 0.75);
}

/* {"error":{...}} on stdout, for scripts (e stolen). */
static void tt_print_json_error(json_t *e) {
  json_t *o = json_pack("{s:o}", "error", e);
  tt_buf b = TT_BUF_INIT;
  tt_json_dump(&b, o, JSON_COMPACT);
  tt_buf_putc(&b, '\n');
  tt_write_all(stdout, &b);
  tt_buf_free(&b);
  json_decref(o);
}

static int tt_print_error(tt_format fmt, const tt_error *err) {
  if (fmt == TT_FMT_JSON) {
    tt_print_json_error(tt_db_error_to_json(err));
  } else {
    static const char *const prefix[] = {
        [TT_ERR_REFUSED] = "refused: ", [TT_ERR_SQL] = "SQL error: "};
    const char *p = (size_t)err->kind < sizeof prefix / sizeof prefix[0] ? prefix[err->kind] : NULL;
    tt_fail(0, "%s%s", p ? p : "", tt_error_text(err));
  }
  return tt_exit_for(err->kind);
}

/* A query that did not run: SQL that is empty (or only comments) is a
 * usage error; everything else is reported in the output's format. */
static int tt_sql_failed(tt_format fmt, const tt_error *err) {
  if (err->kind != TT_ERR_REFUSED || err->reason != TT_REFUSE_EMPTY)
    return tt_print_error(fmt, err);
  static const char msg[] = "the SQL is empty (or only comments): give one SELECT statement";
  if (fmt == TT_FMT_JSON) /* scripts reading stdout learn it too */
    tt_print_json_error(json_pack("{s:s,s:s,s:s}", "kind", "usage", "reason", "empty", "message", msg));
  return tt_usage_error("sql", "%s", msg);
}

/* The table for people: the rows in memory, then the footer. */
static int tt_print_table(const tt_result *r) {
  tt_term t = tt_term_probe(stdout);
  tt_buf out = TT_BUF_INIT;
  tt_render_table(&out, r, &t);
  tt_render_footer(&out, r, &t);
  int rc = tt_write_result(stdout, &out);
  tt_buf_free(&out);
  return rc;
}

/* The database through the session layer (no schema is read); the
 * watchdog is armed before a file opens (a lock or a damaged file must not
 * hang), and after CSV files are loaded (loading is not the query). */
static tt_service *tt_sql_open(tt_sql_cli *q, const char *path, tt_error *err) {
  q->cfg.db = path;
  tt_db_target t;
  bool csv = tt_db_target_parse_engine(path, q->cfg.engine, &t, err) &&
             (t.kind == TT_DB_KIND_CSV || t.kind == TT_DB_KIND_DUCKDB);
  tt_db_target_free(&t);
  if (!csv) tt_watchdog_arm(q->cfg.sql_timeout_s, q->fmt);
  tt_service *svc = tt_config_resolve(&q->cfg, err) ? tt_service_open(&q->cfg, 0, err) : NULL;
  if (csv && svc) tt_watchdog_arm(q->cfg.sql_timeout_s, q->fmt);
  if (!svc) return NULL;
  tt_db_opts o = tt_config_db_opts(&q->cfg);
  if (q->rows_given) o.max_rows = q->max_rows;
  if (q->bytes_given) o.max_bytes = q->max_bytes;
  tt_db_set_opts(tt_service_db(svc), &o);
  return svc;
}

int cmd_sql(int argc, char **argv) {
  tt_sql_cli q = {.fmt = TT_FMT_TABLE};
  tt_config_init(&q.cfg);
  int rc0 = tt_opts_parse(&tt_cmd_sql, argc, argv, 1, tt_sql_option, &q);
  if (rc0 == TT_OPTS_GO && argc - optind != 2)
    rc0 = tt_usage_error("sql", argc - optind < 2 ? "give a database file and the SQL (or - to read it from standard input)"
                                                  : "too many arguments; quote the SQL as one argument");
  if (rc0 != TT_OPTS_GO) {
    tt_config_free(&q.cfg);
    return rc0;
  }
  tt_format fmt = q.fmt;
  const char *path = argv[optind], *sql_arg = argv[optind + 1];

  char *sql = NULL;
  size_t len;
  if (strcmp(sql_arg, "-") == 0) {
    bool too_long;
    /* Read one byte past the SQL length limit so that overlong input is
     * reported as such rather than cut. */
    sql = tt_read_stream(STDIN_FILENO, 100001, &len, &too_long);
    if (!sql) {
      tt_config_free(&q.cfg);
      return tt_fail(TT_EXIT_FAIL, "cannot read the SQL from standard input");
    }
    if (too_long) {
      free(sql);
      tt_config_free(&q.cfg);
      tt_error big;
      tt_error_set(&big, TT_ERR_LIMIT,
                   "the SQL text is longer than the limit of 100,000 bytes; shorten it");
      return tt_print_error(fmt, &big);
    }
  } else {
    sql = tt_xstrdup(sql_arg);
    len = strlen(sql);
  }

  tt_error err;
  tt_service *svc = tt_sql_open(&q, path, &err);
  tt_db *db = svc ? tt_service_db(svc) : NULL;
  int rc;
  if (!db) {
    rc = tt_print_error(fmt, &err);
  } else if (fmt == TT_FMT_TABLE) {
    tt_result *r = tt_db_query(db, sql, len, &err);
    tt_watchdog_disarm();
    rc = r ? tt_print_table(r) : tt_sql_failed(fmt, &err);
    tt_result_free(r);
  } else {
    /* exports: every row unless a cap is given, streamed */
    tt_export_opts eo = {.fmt = fmt, .max_rows = q.rows_given ? q.max_rows : 0,
                         .max_bytes = q.bytes_given ? q.max_bytes : 0,
                         .on_cursor = tt_watchdog_on_cursor};
    rc = tt_export_query(db, sql, len, &eo, &err);
    tt_watchdog_disarm();
    if (rc < 0) rc = tt_sql_failed(fmt, &err);
  }
  free(sql);
  tt_service_free(svc);
  tt_config_free(&q.cfg);
  return rc;
}
