/* cmd_sql.c — `tabletalk sql DB "SQL"`: run one guarded, read-only query
 * and print the rows as a table, TSV, CSV or JSON. A watchdog ends the
 * process shortly after the time limit even if SQLite is stuck inside a
 * single long operation the progress handler cannot interrupt. */
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
    "Run one read-only SQL query on the SQLite file DB and print the rows.\n"
    "Writes, schema changes, ATTACH, PRAGMA statements, extensions and\n"
    "several statements at once are refused, with the reason.\n"
    "\n"
    "Options:\n"
    "  -f, --format FMT     table (default), tsv, csv or json\n"
    "      --json           the same as --format json\n"
    "  -t, --timeout SECS   stop the query after SECS seconds (default 5)\n"
    "      --max-rows N     return at most N rows (default 200)\n"
    "      --max-bytes N    return at most N bytes of values (default 1000000)\n"
    "      --immutable      open with immutable=1: no locking; only for files\n"
    "                       that nothing else changes\n"
    "  -h, --help           show this help\n"
    "\n"
    "SQL that starts with '-' goes after '--':  tabletalk sql DB -- \"-- note\n"
    "SELECT 1\"\n"
    "\n"
    "JSON output: {\"columns\":[...],\"rows\":[[...]],\"row_count\":N,\"truncated\":B,\n"
    "\"elapsed_ms\":N} or {\"error\":{\"kind\":\"refused|timeout|limit|sql|io\",\n"
    "\"message\":\"...\"}}.\n"
    "\n"
    "Exit codes: 0 ok, 1 SQL error or unreadable file, 2 usage, 3 refused by\n"
    "the guard, 4 stopped by a limit (time, memory, size).\n";

typedef enum { TT_FMT_TABLE, TT_FMT_TSV, TT_FMT_CSV, TT_FMT_JSON } tt_format;

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
  double after = timeout_s + 0.75;
  struct itimerval it = {0};
  it.it_value.tv_sec = (time_t)after;
  it.it_value.tv_usec = (suseconds_t)((after - (double)(time_t)after) * 1e6);
  setitimer(ITIMER_REAL, &it, NULL);
}

static void tt_watchdog_disarm(void) {
  struct itimerval it = {0};
  setitimer(ITIMER_REAL, &it, NULL);
}

static int tt_print_error(tt_format fmt, const tt_db_error *err) {
  if (fmt == TT_FMT_JSON) {
    json_t *o = json_pack("{s:{s:s,s:s}}", "error", "kind", tt_db_errkind_name(err->kind),
                          "message", "");
    json_object_set_new(json_object_get(o, "error"), "message",
                        tt_json_stringn(err->message, strlen(err->message)));
    tt_buf b = TT_BUF_INIT;
    tt_json_dump(&b, o, JSON_COMPACT);
    tt_buf_putc(&b, '\n');
    tt_write_all(stdout, &b);
    tt_buf_free(&b);
    json_decref(o);
  } else {
    static const char *const prefix[] = {
        [TT_DB_ERR_REFUSED] = "refused: ", [TT_DB_ERR_SQL] = "SQL error: "};
    const char *p = (size_t)err->kind < sizeof prefix / sizeof prefix[0] ? prefix[err->kind] : NULL;
    tt_fail(0, "%s%s", p ? p : "", err->message);
  }
  return tt_exit_for(err->kind);
}

static bool tt_parse_format(const char *s, tt_format *out) {
  static const struct { const char *name; tt_format fmt; } names[] = {
      {"table", TT_FMT_TABLE}, {"tsv", TT_FMT_TSV}, {"csv", TT_FMT_CSV}, {"json", TT_FMT_JSON}};
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
    if (strcmp(s, names[i].name) == 0) {
      *out = names[i].fmt;
      return true;
    }
  return false;
}

static int tt_print_result(tt_format fmt, const tt_result *r) {
  tt_term t = tt_term_probe(stdout);
  tt_buf out = TT_BUF_INIT;
  switch (fmt) {
  case TT_FMT_JSON: {
    json_t *o = tt_result_to_json(r, 0);
    tt_json_dump(&out, o, (t.tty ? JSON_INDENT(2) : JSON_COMPACT) | JSON_REAL_PRECISION(15));
    tt_buf_putc(&out, '\n');
    json_decref(o);
    break;
  }
  case TT_FMT_TSV: tt_render_tsv(&out, r, &t); break;
  case TT_FMT_CSV: tt_render_csv(&out, r, &t); break;
  case TT_FMT_TABLE:
    tt_render_table(&out, r, &t);
    tt_render_footer(&out, r, &t);
    break;
  }
  bool ok = tt_write_all(stdout, &out);
  tt_buf_free(&out);
  if (!ok) return tt_fail(TT_EXIT_FAIL, "cannot write the output (closed pipe or full disk)");
  return TT_EXIT_OK;
}

int cmd_sql(int argc, char **argv) {
  enum { OPT_JSON = 256, OPT_MAX_ROWS, OPT_MAX_BYTES, OPT_IMMUTABLE };
  static const struct option opts[] = {
      {"format", required_argument, NULL, 'f'},
      {"json", no_argument, NULL, OPT_JSON},
      {"timeout", required_argument, NULL, 't'},
      {"max-rows", required_argument, NULL, OPT_MAX_ROWS},
      {"max-bytes", required_argument, NULL, OPT_MAX_BYTES},
      {"immutable", no_argument, NULL, OPT_IMMUTABLE},
      {"help", no_argument, NULL, 'h'},
      {NULL, 0, NULL, 0},
  };
  tt_db_opts o = tt_db_default_opts();
  tt_format fmt = TT_FMT_TABLE;
  long n;
  int c;
  optind = 1;
  opterr = 0;
  while ((c = getopt_long(argc, argv, ":f:t:h", opts, NULL)) != -1) {
    switch (c) {
    case 'f':
      if (!tt_parse_format(optarg, &fmt))
        return tt_usage_error("sql", "unknown format '%s' (use table, tsv, csv or json)", optarg);
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
      break;
    case OPT_MAX_BYTES:
      if (!tt_parse_long(optarg, 1, 1L << 32, &n))
        return tt_usage_error("sql", "--max-bytes wants a number from 1 to 4294967296, not '%s'", optarg);
      o.max_bytes = n;
      break;
    case OPT_IMMUTABLE: o.immutable = true; break;
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
  tt_watchdog_arm(o.timeout_s, fmt);
  tt_db *db = tt_db_open(path, &o, &err);
  if (!db) {
    free(sql);
    return tt_print_error(fmt, &err);
  }
  tt_result *r = tt_db_query(db, sql, len, &err);
  tt_watchdog_disarm();
  free(sql);
  int rc = r ? tt_print_result(fmt, r) : tt_print_error(fmt, &err);
  tt_result_free(r);
  tt_db_close(db);
  return rc;
}
