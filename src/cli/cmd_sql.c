/* cmd_sql.c — `tabletalk sql DB "SQL"`: run one guarded, read-only query
 * and print the rows: a table for people (the first 200 rows by default),
 * or every row as CSV, TSV or JSON for pipelines, streamed as they come so
 * that memory does not grow with the result. A watchdog ends the process
 * shortly after the time limit even if SQLite is stuck inside a single long
 * operation the progress handler cannot interrupt. */
#include "cli/cli.h"

#include <getopt.h>
#include <stdio.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>

static const char tt_sql_usage[] =
    "Usage: tabletalk sql DB \"SQL\" [options]\n"
    "       tabletalk sql DB - [options]    (read the SQL from standard input)\n"
    "\n"
    "Run one read-only SQL query on DB and print the rows.\n"
    "Writes, schema changes, ATTACH, PRAGMA statements, extensions and\n"
    "several statements at once are refused, with the reason.\n"
    "DB is a SQLite file, a .csv or .tsv file, or a folder of them (a table\n"
    "per file, loaded in memory; nothing is written beside them).\n"
    "\n"
    "Options:\n"
    "  -f, --format FMT     table (default), csv, tsv or json\n"
    "      --json           the same as --format json\n"
    "  -t, --timeout SECS   stop the query after SECS seconds of work (default 5)\n"
    "      --max-rows N     at most N rows (table: 200 by default; csv, tsv and\n"
    "                       json write every row unless this is given)\n"
    "      --max-bytes N    at most N bytes of values (table: 1000000 by default)\n"
    "      --immutable      open with immutable=1: no locking; only for files\n"
    "                       that nothing else changes\n"
    "      --header, --no-header  a CSV file's first line names the columns, or\n"
    "                       is data (default: guessed from the values)\n"
    "  -h, --help           show this help\n"
    "\n"
    "SQL that starts with '-' goes after '--':  tabletalk sql DB -- \"-- note\n"
    "SELECT 1\"\n"
    "\n"
    "csv, tsv and json stream every row (blobs as \\x hex); a cut by --max-rows\n"
    "or --max-bytes is announced on stderr. JSON: {\"columns\":[...],\n"
    "\"column_types\":[...],\"rows\":[[...]],\"row_count\":N,\"truncated\":B,\n"
    "\"elapsed_ms\":N} (with \"truncated_by\" when cut) or {\"error\":{\"kind\":\n"
    "\"refused|timeout|limit|sql|io\",\"reason\":\"write|...\",\"message\":\"...\"}}.\n"
    "\n"
    "Exit codes: 0 ok, 1 SQL error or unreadable file, 2 usage, 3 refused by\n"
    "the guard, 4 stopped by a limit (time, memory, size).\n";

/* The watchdog's message is prepared before it is armed: the signal
 * handler may only write() and _exit(). */
static char tt_watchdog_msg[256];
static size_t tt_watchdog_len;
static int tt_watchdog_fd = STDERR_FILENO;

static void tt_watchdog_fire(int sig) {
  (void)sig;
  ssize_t ignored = write(tt_watchdog_fd, tt_watchdog_msg, tt_watchdog_len);
  (void)ignored;
  _exit(TT_EXIT_LIMIT);
}

static double tt_watchdog_timeout_s;

/* Fires when SQLite has worked past the limit plus a grace second; after
 * sqlite_ms already spent (streaming exports re-arm it at every row, so
 * the time spent writing rows does not count). */
static void tt_watchdog_set(double sqlite_ms) {
  double after = tt_watchdog_timeout_s + 0.75 - sqlite_ms / 1000.0;
  if (after < 0.01) after = 0.01;
  struct itimerval it = {0};
  it.it_value.tv_sec = (time_t)after;
  it.it_value.tv_usec = (suseconds_t)((after - (double)(time_t)after) * 1e6);
  setitimer(ITIMER_REAL, &it, NULL);
}

static void tt_watchdog_on_row(void *ud, double sqlite_ms) {
  (void)ud;
  tt_watchdog_set(sqlite_ms);
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
  signal(SIGALRM, tt_watchdog_fire);
  /* The progress handler normally stops a query at the limit; this fires
   * only when one operation overruns it, before the 1 s grace is over. */
  tt_watchdog_timeout_s = timeout_s;
  tt_watchdog_set(0);
}

static void tt_watchdog_disarm(void) {
  struct itimerval it = {0};
  setitimer(ITIMER_REAL, &it, NULL);
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

static int tt_print_error(tt_format fmt, const tt_db_error *err) {
  if (fmt == TT_FMT_JSON) {
    tt_print_json_error(tt_db_error_to_json(err));
  } else {
    static const char *const prefix[] = {
        [TT_DB_ERR_REFUSED] = "refused: ", [TT_DB_ERR_SQL] = "SQL error: "};
    const char *p = (size_t)err->kind < sizeof prefix / sizeof prefix[0] ? prefix[err->kind] : NULL;
    tt_fail(0, "%s%s", p ? p : "", err->message);
  }
  return tt_exit_for(err->kind);
}

/* A query that did not run: SQL that is empty (or only comments) is a
 * usage error; everything else is reported in the output's format. */
static int tt_sql_failed(tt_format fmt, const tt_db_error *err) {
  if (err->kind != TT_DB_ERR_REFUSED || err->refusal != TT_REFUSE_EMPTY)
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

int cmd_sql(int argc, char **argv) {
  enum { OPT_JSON = 256, OPT_MAX_ROWS, OPT_MAX_BYTES, OPT_IMMUTABLE, OPT_HEADER, OPT_NO_HEADER };
  static const struct option opts[] = {
      {"format", required_argument, NULL, 'f'},
      {"json", no_argument, NULL, OPT_JSON},
      {"timeout", required_argument, NULL, 't'},
      {"max-rows", required_argument, NULL, OPT_MAX_ROWS},
      {"max-bytes", required_argument, NULL, OPT_MAX_BYTES},
      {"immutable", no_argument, NULL, OPT_IMMUTABLE},
      {"header", no_argument, NULL, OPT_HEADER},
      {"no-header", no_argument, NULL, OPT_NO_HEADER},
      {"help", no_argument, NULL, 'h'},
      {NULL, 0, NULL, 0},
  };
  tt_db_opts o = tt_db_default_opts();
  tt_format fmt = TT_FMT_TABLE;
  bool rows_given = false, bytes_given = false;
  long n;
  int c;
  optind = 1;
  opterr = 0;
  while ((c = getopt_long(argc, argv, ":f:t:h", opts, NULL)) != -1) {
    switch (c) {
    case 'f':
      if (!tt_format_parse(optarg, &fmt) || fmt == TT_FMT_MARKDOWN)
        return tt_usage_error("sql", "unknown format '%s' (use table, csv, tsv or json)", optarg);
      break;
    case OPT_JSON: fmt = TT_FMT_JSON; break;
    case 't':
      if (!tt_parse_double(optarg, 0.001, 86400, &o.timeout_s))
        return tt_usage_error("sql", "--timeout wants seconds between 0.001 and 86400, not '%s'", optarg);
      break;
    case OPT_MAX_ROWS:
      if (!tt_parse_long(optarg, 1, 100000000, &n))
        return tt_usage_error("sql", "--max-rows wants a number from 1 to 100000000, not '%s'", optarg);
      o.max_rows = n;
      rows_given = true;
      break;
    case OPT_MAX_BYTES:
      if (!tt_parse_long(optarg, 1, 1L << 32, &n))
        return tt_usage_error("sql", "--max-bytes wants a number from 1 to 4294967296, not '%s'", optarg);
      o.max_bytes = n;
      bytes_given = true;
      break;
    case OPT_IMMUTABLE: o.immutable = true; break;
    case OPT_HEADER: o.csv_header = TT_CSV_HEADER_YES; break;
    case OPT_NO_HEADER: o.csv_header = TT_CSV_HEADER_NO; break;
    case 'h': fputs(tt_sql_usage, stdout); return TT_EXIT_OK;
    case ':': return tt_usage_error("sql", "option '%s' needs a value", argv[optind - 1]);
    default: return tt_usage_error("sql", "unknown option '%s'", argv[optind - 1]);
    }
  }
  if (argc - optind != 2)
    return tt_usage_error("sql", argc - optind < 2 ? "give a database file and the SQL (or - to read it from standard input)"
                                                   : "too many arguments; quote the SQL as one argument");
  const char *path = argv[optind], *sql_arg = argv[optind + 1];

  char *sql = NULL;
  size_t len;
  if (strcmp(sql_arg, "-") == 0) {
    bool too_long;
    /* Read one byte past the SQL length limit so that overlong input is
     * reported as such rather than cut. */
    sql = tt_read_stream(STDIN_FILENO, 100001, &len, &too_long);
    if (!sql) return tt_fail(TT_EXIT_FAIL, "cannot read the SQL from standard input");
    if (too_long) {
      free(sql);
      tt_db_error big = {.kind = TT_DB_ERR_LIMIT};
      snprintf(big.message, sizeof big.message,
               "the SQL text is longer than the limit of 100,000 bytes; shorten it");
      return tt_print_error(fmt, &big);
    }
  } else {
    sql = tt_xstrdup(sql_arg);
    len = strlen(sql);
  }

  tt_db_error err;
  /* loading a CSV file is not the query: the time limit starts after it */
  bool csv = tt_db_path_is_csv(path);
  if (!csv) tt_watchdog_arm(o.timeout_s, fmt);
  tt_db *db = tt_db_open(path, &o, &err);
  if (csv && db) tt_watchdog_arm(o.timeout_s, fmt);
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
    tt_export_opts eo = {.fmt = fmt, .max_rows = rows_given ? o.max_rows : 0,
                         .max_bytes = bytes_given ? o.max_bytes : 0,
                         .on_row = tt_watchdog_on_row};
    rc = tt_export_query(db, sql, len, &eo, &err);
    tt_watchdog_disarm();
    if (rc < 0) rc = tt_sql_failed(fmt, &err);
  }
  free(sql);
  tt_db_close(db);
  return rc;
}
