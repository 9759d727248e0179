/* cmd_chart.c — `tabletalk chart DB "SQL" --kind bar --x COL --y COL`: a
 * chart of one guarded, read-only query without a model, written as PNG or
 * SVG and previewed in the terminal. Also the chart helpers ask and chat
 * share: --size parsing, where chart files go, and the preview. */
#include "cli/cli.h"

#include <stdlib.h>
#include <string.h>

static const char tt_chart_usage[] =
    "Usage: tabletalk chart DB \"SQL\" --kind KIND --x COL [--y COL]... [options]\n"
    "\n"
    "Draw the rows of one read-only SQL query on DB as a chart:\n"
    "a PNG or SVG file, and a preview when the output is a terminal.\n"
    "DB is a SQLite file, a .csv or .tsv file, or a folder of them (a table\n"
    "per file, loaded in memory; nothing is written beside them).\n"
    "\n"
    "What to draw:\n"
    "  -k, --kind KIND        bar, line, area, scatter, pie or histogram\n"
    "  -x, --x COL            x: categories, numbers or dates (pie: the slice labels;\n"
    "                         histogram: the values to count)\n"
    "  -y, --y COL            a numeric column; repeat for several series (not for\n"
    "                         a histogram)\n"
    "      --series COL       one series per value of COL (with one --y)\n"
    "  -t, --title TEXT       the title (default: \"Y by X\")\n"
    "      --x-label TEXT     axis titles (default: the column names)\n"
    "      --y-label TEXT\n"
    "      --sort x|y|none    order of bars and slices (default: the result's order\n"
    "                         for text, by x for numbers and dates, pies by size)\n"
    "      --limit N          keep the first N bars or points (pie: N-1 slices and\n"
    "                         \"Other\")\n"
    "      --orientation vertical|horizontal   bars (default: horizontal when the\n"
    "                         labels are long or many)\n"
    "Output:\n"
    "  -o, --out FILE         FILE.png or FILE.svg (default: a PNG in the state\n"
    "                         folder, charts/<run id>.png)\n"
    "      --size WxH         pixels (default 1200x700)\n"
    "      --preview          print the terminal preview even when not a terminal\n"
    "      --no-preview       never print it\n"
    "      --json             print one JSON object (file, chart, spec, rows)\n"
    "      --state-dir DIR    (TABLETALK_STATE_DIR, default ~/.local/state/tabletalk)\n"
    "Query:\n"
    "      --max-rows N       rows read from the query (default 10000)\n"
    "      --timeout SECS     time limit of the query (default 5)\n"
    "      --immutable        open the database with immutable=1\n"
    "      --header, --no-header  a CSV file's first line names the columns, or is\n"
    "                         data (default: guessed from the values)\n"
    "  -h, --help             show this help\n"
    "\n"
    "Example:\n"
    "  tabletalk chart data/chinook.sqlite \"SELECT strftime('%Y', InvoiceDate) AS\n"
    "  year, count(*) AS invoices FROM Invoice GROUP BY year\" -k bar -x year -y invoices\n"
    "\n"
    "Exit codes: 0 drawn, 1 the file could not be written or the SQL failed,\n"
    "2 usage (also a chart that does not fit the rows: the message lists the\n"
    "columns), 3 SQL refused by the guard, 4 stopped by a limit.\n";

bool tt_cli_parse_size(const char *s, int *w, int *h, tt_buf *err) {
  const char *x = strpbrk(s, "xX");
  long a, b;
  char first[32];
  if (x && (size_t)(x - s) < sizeof first) {
    memcpy(first, s, (size_t)(x - s));
    first[x - s] = 0;
    if (tt_parse_long(first, 1, 100000, &a) && tt_parse_long(x + 1, 1, 100000, &b)) {
      *w = (int)a;
      *h = (int)b;
      return tt_chart_size_ok(*w, *h, err);
    }
  }
  tt_buf_printf(err, "--size wants WIDTHxHEIGHT in pixels, e.g. 1200x700, not '%s'", s);
  return false;
}

bool tt_cli_chart_file_ok(const char *path) {
  return strlen(path) > 4 && (tt_has_suffix_nocase(path, ".png") || tt_has_suffix_nocase(path, ".svg"));
}

void tt_cli_chart_preview(const tt_chart *c, const tt_term *t, tt_buf *out) {
  tt_chart_term_opts o = {.width = t->width > 100 ? 100 : t->width, .height = 12,
                          .color = t->color, .unicode = true};
  tt_chart_render_term(c, &o, out);
}

/* Adds key: value to the spec being built from options. */
static void tt_spec_set(json_t *spec, const char *key, const char *value) {
  json_object_set_new(spec, key, tt_json_stringn(value, strlen(value)));
}

static int tt_chart_json_out(const tt_chart *c, const json_t *spec, const char *file,
                             const char *run_id, int w, int h, const tt_result *r) {
  tt_buf d = TT_BUF_INIT;
  tt_chart_describe(c, &d);
  json_t *o = json_object();
  json_object_set_new(o, "file", tt_json_stringn(file, strlen(file)));
  json_object_set_new(o, "width", json_integer(w));
  json_object_set_new(o, "height", json_integer(h));
  json_object_set_new(o, "chart", tt_json_stringn(d.data ? d.data : "", d.len));
  json_object_set_new(o, "points", json_integer((json_int_t)tt_chart_npoints(c)));
  json_object_set(o, "spec", (json_t *)spec);
  json_object_set_new(o, "row_count", json_integer((json_int_t)r->nrows));
  json_object_set_new(o, "truncated", json_boolean(r->truncated));
  json_object_set_new(o, "run_id", json_string(run_id));
  tt_buf b = TT_BUF_INIT;
  tt_json_dump(&b, o, JSON_COMPACT);
  tt_buf_putc(&b, '\n');
  int rc = tt_write_result(stdout, &b);
  tt_buf_free(&b);
  tt_buf_free(&d);
  json_decref(o);
  return rc;
}

typedef struct tt_chart_cli {
  json_t *spec;
  json_t *ys;
  const char *out, *state_dir;
  int w, h;
  int preview; /* -1 never, 0 on a terminal, 1 always */
  bool json;
  tt_db_opts db;
} tt_chart_cli;

/* Parses the options into c; returns -1 to go on, else an exit code. */
static int tt_chart_options(int argc, char **argv, tt_chart_cli *c) {
  enum { OPT_SERIES = 256, OPT_XLABEL, OPT_YLABEL, OPT_SORT, OPT_LIMIT, OPT_ORIENT, OPT_SIZE,
         OPT_PREVIEW, OPT_NO_PREVIEW, OPT_JSON, OPT_STATE, OPT_MAX_ROWS, OPT_TIMEOUT,
         OPT_IMMUTABLE, OPT_HEADER, OPT_NO_HEADER };
  static const struct option opts[] = {
      {"kind", required_argument, NULL, 'k'},        {"x", required_argument, NULL, 'x'},
      {"y", required_argument, NULL, 'y'},           {"series", required_argument, NULL, OPT_SERIES},
      {"title", required_argument, NULL, 't'},       {"x-label", required_argument, NULL, OPT_XLABEL},
      {"y-label", required_argument, NULL, OPT_YLABEL}, {"sort", required_argument, NULL, OPT_SORT},
      {"limit", required_argument, NULL, OPT_LIMIT}, {"orientation", required_argument, NULL, OPT_ORIENT},
      {"out", required_argument, NULL, 'o'},         {"size", required_argument, NULL, OPT_SIZE},
      {"preview", no_argument, NULL, OPT_PREVIEW},   {"no-preview", no_argument, NULL, OPT_NO_PREVIEW},
      {"json", no_argument, NULL, OPT_JSON},         {"state-dir", required_argument, NULL, OPT_STATE},
      {"max-rows", required_argument, NULL, OPT_MAX_ROWS},
      {"timeout", required_argument, NULL, OPT_TIMEOUT},
      {"immutable", no_argument, NULL, OPT_IMMUTABLE},
      {"header", no_argument, NULL, OPT_HEADER},
      {"no-header", no_argument, NULL, OPT_NO_HEADER},
      {"help", no_argument, NULL, 'h'},              {NULL, 0, NULL, 0},
  };
  int opt;
  long n;
  optind = 1;
  opterr = 0;
  while ((opt = getopt_long(argc, argv, ":k:x:y:t:o:h", opts, NULL)) != -1) {
    switch (opt) {
    case 'k': tt_spec_set(c->spec, "kind", optarg); break;
    case 'x': tt_spec_set(c->spec, "x", optarg); break;
    case 'y': json_array_append_new(c->ys, tt_json_stringn(optarg, strlen(optarg))); break;
    case OPT_SERIES: tt_spec_set(c->spec, "series", optarg); break;
    case 't': tt_spec_set(c->spec, "title", optarg); break;
    case OPT_XLABEL: tt_spec_set(c->spec, "x_label", optarg); break;
    case OPT_YLABEL: tt_spec_set(c->spec, "y_label", optarg); break;
    case OPT_SORT: tt_spec_set(c->spec, "sort", optarg); break;
    case OPT_ORIENT: tt_spec_set(c->spec, "orientation", optarg); break;
    case OPT_LIMIT:
      if (!tt_parse_long(optarg, 1, 10000, &n))
        return tt_usage_error("chart", "--limit wants a number from 1 to 10000, not '%s'", optarg);
      json_object_set_new(c->spec, "limit", json_integer(n));
      break;
    case 'o': c->out = optarg; break;
    case OPT_SIZE: {
      tt_buf err = TT_BUF_INIT;
      bool ok = tt_cli_parse_size(optarg, &c->w, &c->h, &err);
      int rc = ok ? -1 : tt_usage_error("chart", "%s", tt_buf_cstr(&err));
      tt_buf_free(&err);
      if (!ok) return rc;
      break;
    }
    case OPT_PREVIEW: c->preview = 1; break;
    case OPT_NO_PREVIEW: c->preview = -1; break;
    case OPT_JSON: c->json = true; break;
    case OPT_STATE: c->state_dir = optarg; break;
    case OPT_MAX_ROWS:
      if (!tt_parse_long(optarg, 1, 100000, &n))
        return tt_usage_error("chart", "--max-rows wants a number from 1 to 100000, not '%s'", optarg);
      c->db.max_rows = n;
      break;
    case OPT_TIMEOUT:
      if (!tt_parse_double(optarg, 0.001, 86400, &c->db.timeout_s))
        return tt_usage_error("chart", "--timeout wants seconds between 0.001 and 86400, not '%s'", optarg);
      break;
    case OPT_IMMUTABLE: c->db.immutable = true; break;
    case OPT_HEADER: c->db.csv_header = TT_CSV_HEADER_YES; break;
    case OPT_NO_HEADER: c->db.csv_header = TT_CSV_HEADER_NO; break;
    case 'h': fputs(tt_chart_usage, stdout); return TT_EXIT_OK;
    case ':': return tt_usage_error("chart", "option '%s' needs a value", argv[optind - 1]);
    default: return tt_usage_error("chart", "unknown option '%s'", argv[optind - 1]);
    }
  }
  if (argc - optind != 2)
    return tt_usage_error("chart", argc - optind < 2 ? "give a database file and the SQL"
                                                     : "too many arguments; quote the SQL as one argument");
  if (!json_object_get(c->spec, "kind"))
    return tt_usage_error("chart", "say what to draw with --kind bar|line|area|scatter|pie|histogram");
  if (!json_object_get(c->spec, "x")) return tt_usage_error("chart", "name the x column with --x COL");
  if (json_array_size(c->ys) == 1) json_object_set(c->spec, "y", json_array_get(c->ys, 0));
  else if (json_array_size(c->ys) > 1) json_object_set(c->spec, "y", c->ys);
  if (c->out && !tt_cli_chart_file_ok(c->out))
    return tt_usage_error("chart", "--out wants a file name ending in .png or .svg, not '%s'", c->out);
  return -1;
}

/* "invoices by year" when no title is given. */
static void tt_default_title(json_t *spec) {
  if (json_object_get(spec, "title")) return;
  const json_t *y = json_object_get(spec, "y");
  const char *x = json_string_value(json_object_get(spec, "x"));
  char *t;
  if (json_is_string(y)) t = tt_xasprintf("%s by %s", json_string_value(y), x);
  else if (json_is_array(y)) t = tt_xasprintf("%s and more by %s", json_string_value(json_array_get(y, 0)), x);
  else t = tt_xasprintf("Distribution of %s", x);
  tt_spec_set(spec, "title", t);
  free(t);
}

int cmd_chart(int argc, char **argv) {
  tt_chart_cli c = {.spec = json_object(), .ys = json_array(), .w = TT_CHART_DEFAULT_WIDTH,
                    .h = TT_CHART_DEFAULT_HEIGHT, .db = tt_db_default_opts()};
  c.db.max_rows = 10000;
  c.db.max_bytes = 64L << 20;
  int rc = tt_chart_options(argc, argv, &c);
  tt_chart_spec *spec = NULL;
  tt_db *db = NULL;
  tt_result *r = NULL;
  tt_chart *chart = NULL;
  char *state = NULL, *run_id = NULL, *file = NULL;
  tt_dotenv *env = NULL;
  tt_buf err = TT_BUF_INIT;
  if (rc >= 0) goto done;
  tt_default_title(c.spec);
  spec = tt_chart_spec_from_json(c.spec, &err);
  if (!spec) {
    rc = tt_usage_error("chart", "%s", tt_buf_cstr(&err));
    goto done;
  }
  tt_db_error dberr;
  db = tt_db_open(argv[optind], &c.db, &dberr);
  if (db) r = tt_db_query(db, argv[optind + 1], strlen(argv[optind + 1]), &dberr);
  if (!r) {
    rc = tt_fail(tt_exit_for(dberr.kind), "%s%s", dberr.kind == TT_DB_ERR_REFUSED ? "refused: " : "",
                 dberr.message);
    goto done;
  }
  chart = tt_chart_build(spec, r, &err);
  if (!chart) {
    rc = tt_usage_error("chart", "%s", tt_buf_cstr(&err));
    goto done;
  }
  run_id = tt_new_run_id();
  if (c.out) {
    file = tt_xstrdup(c.out);
  } else {
    env = tt_config_load(".env");
    state = c.state_dir ? tt_xstrdup(c.state_dir) : tt_default_dir(env, "STATE");
    file = tt_chart_file_path(state, run_id, 0, "png", &err);
    if (!file) {
      rc = tt_fail(TT_EXIT_FAIL, "%s", tt_buf_cstr(&err));
      goto done;
    }
  }
  if (!tt_chart_write_file(chart, file, c.w, c.h, &err)) {
    rc = tt_fail(TT_EXIT_FAIL, "%s", tt_buf_cstr(&err));
    goto done;
  }
  if (c.json) {
    rc = tt_chart_json_out(chart, c.spec, file, run_id, c.w, c.h, r);
    goto done;
  }
  tt_term t = tt_term_probe(stdout);
  tt_buf out = TT_BUF_INIT;
  if (c.preview > 0 || (c.preview == 0 && t.tty)) {
    tt_cli_chart_preview(chart, &t, &out);
    tt_buf_puts(&out, tt_term_dim(&t));
    tt_buf_puts(&out, "chart: ");
    tt_escape_terminal(&out, file, strlen(file), NULL);
    tt_buf_printf(&out, "%s\n", tt_term_reset(&t));
  } else {
    tt_buf_printf(&out, "%s\n", file); /* for scripts: the file alone */
  }
  rc = tt_write_result(stdout, &out);
  tt_buf_free(&out);
done:
  tt_buf_free(&err);
  free(file);
  free(run_id);
  free(state);
  tt_dotenv_free(env);
  tt_chart_free(chart);
  tt_result_free(r);
  tt_db_close(db);
  tt_chart_spec_free(spec);
  json_decref(c.ys);
  json_decref(c.spec);
  return rc;
}
