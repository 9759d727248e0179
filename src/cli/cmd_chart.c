/* cmd_chart.c — `tabletalk chart DB "SQL" --kind bar --x COL --y COL`: a
 * chart of one guarded, read-only query without a model, written as PNG or
 * SVG and previewed in the terminal. Also the chart helpers ask and chat
 * share: --size parsing, where chart files go, and the preview. */
#include "cli/cli.h"

#include <stdlib.h>
#include <string.h>

static const tt_opt tt_chart_what[] = {
    {TT_OPT_KIND, "kind", 'k', TT_ARG_REQUIRED, "KIND", "bar, line, area, scatter, pie or histogram", TT_COMPLETE_WORDS,
     "bar line area scatter pie histogram",
     "`bar`, `line`, `area`, `scatter`, `pie` or `histogram`."},
    {TT_OPT_X, "x", 'x', TT_ARG_REQUIRED, "COL", "x: categories, numbers or dates", TT_COMPLETE_NOTHING, NULL,
     "The column along the x axis: categories, numbers or dates (a time axis with year, month, "
     "day or hour ticks for values such as '2021', '2021-03', '2021-03-04 10:00' or integer "
     "years); for a pie the slice labels, for a histogram the values."},
    {TT_OPT_Y, "y", 'y', TT_ARG_REQUIRED, "COL", "a numeric column; repeat for more series", TT_COMPLETE_NOTHING, NULL,
     "A numeric column to plot; give several `--y` for several series."},
    {TT_OPT_SERIES, "series", 0, TT_ARG_REQUIRED, "COL", "one series per value of COL (one --y)", TT_COMPLETE_NOTHING, NULL,
     "One series per value of *COL* (with one `--y`)."},
    {TT_OPT_TITLE, "title", 't', TT_ARG_REQUIRED, "TEXT", "the title (default: \"Y by X\")", TT_COMPLETE_NOTHING, NULL,
     "The title (default: \"*Y* by *X*\")."},
    {TT_OPT_OUT, "out", 'o', TT_ARG_REQUIRED, "FILE", "FILE.png or FILE.svg (default: STATE/charts)", TT_COMPLETE_FILE, NULL,
     "Write *FILE*.png or *FILE*.svg (default: *STATE*/charts/*RUN_ID*.png)."},
    {0, NULL, 0, 0, NULL, NULL, 0, NULL, NULL},
};
static const tt_opt tt_chart_look[] = {
    {TT_OPT_X_LABEL, "x-label", 0, TT_ARG_REQUIRED, "TEXT", NULL, TT_COMPLETE_NOTHING, NULL,
     "The x axis' title (default: the column's name)."},
    {TT_OPT_Y_LABEL, "y-label", 0, TT_ARG_REQUIRED, "TEXT", NULL, TT_COMPLETE_NOTHING, NULL,
     "The y axis' title (default: the column's name)."},
    {TT_OPT_SORT, "sort", 0, TT_ARG_REQUIRED, "x|y|none", NULL, TT_COMPLETE_WORDS, "x y none",
     "Order the points: by x ascending, by y (the total of all series) largest first, or as the "
     "rows come. By default bars keep the result's order for text and sort by x for numbers and "
     "dates, lines and areas sort by x, pies by y."},
    {TT_OPT_LIMIT, "limit", 0, TT_ARG_REQUIRED, "N", NULL, TT_COMPLETE_NOTHING, NULL,
     "Keep the first *N* bars, points or slices after sorting (a pie: *N*-1 slices plus "
     "\"Other\"; a histogram: *N* bins)."},
    {TT_OPT_ORIENTATION, "orientation", 0, TT_ARG_REQUIRED, "vertical|horizontal", NULL, TT_COMPLETE_WORDS,
     "vertical horizontal",
     "Bars upright or lying; by default bars lie when their labels are long or many."},
    {0, NULL, 0, 0, NULL, NULL, 0, NULL, NULL},
};
static const tt_opt tt_chart_output[] = {
    {TT_OPT_SIZE, "size", 0, TT_ARG_REQUIRED, "WxH", NULL, TT_COMPLETE_NOTHING, NULL,
     TT_DOC_CHART_SIZE},
    {TT_OPT_PREVIEW, "preview", 0, TT_ARG_NONE, NULL, NULL, TT_COMPLETE_NOTHING, NULL,
     "Print the terminal preview also when the output is not a terminal."},
    {TT_OPT_NO_PREVIEW, "no-preview", 0, TT_ARG_NONE, NULL, NULL, TT_COMPLETE_NOTHING, NULL,
     "No terminal preview, also on a terminal."},
    {TT_OPT_JSON, "json", 0, TT_ARG_NONE, NULL, NULL, TT_COMPLETE_NOTHING, NULL,
     "One JSON object instead: `file`, `width`, `height`, `chart` (a description), `points`, "
     "`spec`, `row_count`, `truncated`, `run_id`."},
    {TT_OPT_STATE_DIR, "state-dir", 0, TT_ARG_REQUIRED, "DIR", NULL, TT_COMPLETE_DIR, NULL,
     TT_DOC_STATE_DIR},
    {0, NULL, 0, 0, NULL, NULL, 0, NULL, NULL},
};
static const tt_opt tt_chart_query[] = {
    {TT_OPT_MAX_ROWS, "max-rows", 0, TT_ARG_REQUIRED, "N", NULL, TT_COMPLETE_NOTHING, NULL,
     "At most *N* rows of the query are drawn (10,000)."},
    {TT_OPT_SQL_TIMEOUT, "timeout", 0, TT_ARG_REQUIRED, "SECS", NULL, TT_COMPLETE_NOTHING, NULL,
     TT_DOC_SQL_TIMEOUT},
    {TT_OPT_IMMUTABLE, "immutable", 0, TT_ARG_NONE, NULL, NULL, TT_COMPLETE_NOTHING, NULL,
     TT_DOC_IMMUTABLE},
    TT_OPT_DB_URL_ENTRY,
    TT_OPT_ENGINE_ENTRY,
    {TT_OPT_HEADER, "header", 0, TT_ARG_NONE, NULL, "a CSV file's first line names the columns", TT_COMPLETE_NOTHING, NULL,
     TT_DOC_HEADER},
    {TT_OPT_NO_HEADER, "no-header", 0, TT_ARG_NONE, NULL, "a CSV file's first line is data", TT_COMPLETE_NOTHING, NULL,
     TT_DOC_NO_HEADER},
    {TT_OPT_CSV_TYPES, "csv-types", 0, TT_ARG_REQUIRED, "COL=TYPE,...", "types of CSV columns", TT_COMPLETE_NOTHING, NULL,
     TT_DOC_CSV_TYPES},
    {0, NULL, 0, 0, NULL, NULL, 0, NULL, NULL},
};
static const tt_opt_group tt_chart_what_group = {NULL, false, tt_chart_what};
static const tt_opt_group tt_chart_look_group = {"Look", true, tt_chart_look};
static const tt_opt_group tt_chart_output_group = {"Output", true, tt_chart_output};
static const tt_opt_group tt_chart_query_group = {"Query", true, tt_chart_query};
static const tt_opt_group *const tt_chart_groups[] = {&tt_chart_what_group, &tt_chart_look_group,
                                                      &tt_chart_output_group, &tt_chart_query_group,
                                                      NULL};
const tt_cmd_spec tt_cmd_chart = {
    .name = "chart",
    .usage = "tabletalk chart DB \"SQL\" --kind KIND --x COL [--y COL]... [options]",
    .about = "Draw the rows of one read-only SQL query on DB as a chart: a PNG or SVG\n"
             "file, and a preview when the output is a terminal.\n" TT_DB_IS,
    .groups = tt_chart_groups,
    .footer = "Example: tabletalk chart data/chinook.sqlite \"SELECT BillingCountry AS c,\n"
              "  count(*) AS n FROM Invoice GROUP BY c\" -k bar -x c -y n\n"
              "Exit codes: 0 drawn, 1 failure, 2 usage, 3 refused, 4 stopped by a limit.",
    .args = TT_COMPLETE_FILE,
    .doc =
        "Draw the rows of one read-only query as a chart, without a model, with one layout for "
        "PNG (cairo) and SVG (valid XML, text as text). The file is `--out` *FILE*.png or "
        "*FILE*.svg, else *STATE*/charts/*RUN_ID*.png. On a terminal a preview is printed, then "
        "the file; otherwise the file name alone (`--preview`, `--no-preview` decide), or one "
        "JSON object with `--json`.\n\n"
        "The value axis of bars, areas and lines starts at zero; a line chart's is zoomed only "
        "when all values lie on one side of zero and spread over less than 2 % of their size, "
        "and the note under the chart then says where the axis starts. Repeated x values are "
        "added up; at most 60 bars unless `--limit` says otherwise; a pie shows its 7 largest "
        "slices plus \"Other\"; a histogram is binned by Freedman–Diaconis (or `--limit` bins). "
        "A note under the chart says when rows were cut, skipped (NULL or not a number), added "
        "together or folded into \"Other\".\n\n"
        "Exit status: 0 drawn, 1 the SQL failed or the file could not be written, 2 usage or a "
        "spec that does not fit the rows (the message lists the columns), 3 refused, 4 stopped "
        "by a limit.",
};

bool tt_cli_parse_size(const char *s, int *w, int *h, tt_error *err) {
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
  tt_error_set(err, TT_ERR_CONFIG, "--size wants WIDTHxHEIGHT in pixels, e.g. 1200x700, not '%s'",
               s);
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
  const char *engine; /* --engine */
} tt_chart_cli;

static int tt_chart_option(void *ud, int id, const char *val) {
  tt_chart_cli *c = ud;
  long n;
  switch (id) {
  case TT_OPT_KIND: tt_spec_set(c->spec, "kind", val); return 0;
  case TT_OPT_X: tt_spec_set(c->spec, "x", val); return 0;
  case TT_OPT_Y: json_array_append_new(c->ys, tt_json_stringn(val, strlen(val))); return 0;
  case TT_OPT_SERIES: tt_spec_set(c->spec, "series", val); return 0;
  case TT_OPT_TITLE: tt_spec_set(c->spec, "title", val); return 0;
  case TT_OPT_X_LABEL: tt_spec_set(c->spec, "x_label", val); return 0;
  case TT_OPT_Y_LABEL: tt_spec_set(c->spec, "y_label", val); return 0;
  case TT_OPT_SORT: tt_spec_set(c->spec, "sort", val); return 0;
  case TT_OPT_ORIENTATION: tt_spec_set(c->spec, "orientation", val); return 0;
  case TT_OPT_LIMIT:
    if (!tt_parse_long(val, 1, 10000, &n))
      return tt_usage_error("chart", "--limit wants a number from 1 to 10000, not '%s'", val);
    json_object_set_new(c->spec, "limit", json_integer(n));
    return 0;
  case TT_OPT_OUT: c->out = val; return 0;
  case TT_OPT_SIZE: {
    tt_error err;
    if (!tt_cli_parse_size(val, &c->w, &c->h, &err))
      return tt_usage_error("chart", "%s", tt_error_text(&err));
    return 0;
  }
  case TT_OPT_PREVIEW: c->preview = 1; return 0;
  case TT_OPT_NO_PREVIEW: c->preview = -1; return 0;
  case TT_OPT_JSON: c->json = true; return 0;
  case TT_OPT_STATE_DIR: c->state_dir = val; return 0;
  case TT_OPT_MAX_ROWS:
    if (!tt_parse_long(val, 1, 100000, &n))
      return tt_usage_error("chart", "--max-rows wants a number from 1 to 100000, not '%s'", val);
    c->db.max_rows = n;
    return 0;
  case TT_OPT_SQL_TIMEOUT:
    if (!tt_parse_double(val, 0.001, 86400, &c->db.timeout_s))
      return tt_usage_error("chart", "--timeout wants seconds between 0.001 and 86400, not '%s'", val);
    return 0;
  case TT_OPT_IMMUTABLE: c->db.immutable = true; return 0;
  case TT_OPT_HEADER: c->db.csv_header = TT_CSV_HEADER_YES; return 0;
  case TT_OPT_NO_HEADER: c->db.csv_header = TT_CSV_HEADER_NO; return 0;
  case TT_OPT_CSV_TYPES: {
    int rc = tt_cli_csv_types_option("chart", val);
    if (!rc) c->db.csv_types = val;
    return rc;
  }
  case TT_OPT_ENGINE: c->engine = val; return 0;
  }
  return 0;
}

/* Parses the options into c; returns -1 to go on, else an exit code. */
static int tt_chart_options(int argc, char **argv, tt_chart_cli *c) {
  int rc0 = tt_opts_parse(&tt_cmd_chart, argc, argv, 1, tt_chart_option, c);
  if (rc0 != TT_OPTS_GO) return rc0;
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
  tt_result *r = NULL;
  tt_chart *chart = NULL;
  char *run_id = NULL, *file = NULL;
  /* the database and the state folder through the session layer */
  tt_config cfg;
  tt_config_init(&cfg);
  tt_service *svc = NULL;
  tt_error err;
  if (rc >= 0) goto done;
  tt_default_title(c.spec);
  spec = tt_chart_spec_from_json(c.spec, &err);
  if (!spec) {
    rc = tt_usage_error("chart", "%s", tt_error_text(&err));
    goto done;
  }
  cfg.db = argv[optind];
  cfg.state_dir = c.state_dir;
  cfg.sql_timeout_s = c.db.timeout_s;
  cfg.immutable = c.db.immutable;
  cfg.csv_header = c.db.csv_header;
  cfg.csv_types = c.db.csv_types;
  cfg.engine = c.engine;
  tt_error dberr;
  if (tt_config_resolve(&cfg, &dberr)) svc = tt_service_open(&cfg, 0, &dberr);
  if (svc) {
    c.db.trust_functions = cfg.trust_functions; /* TABLETALK_TRUST_FUNCTIONS */
    tt_db_set_opts(tt_service_db(svc), &c.db);
    r = tt_db_query(tt_service_db(svc), argv[optind + 1], strlen(argv[optind + 1]), &dberr);
  }
  if (!r) {
    rc = tt_fail(tt_exit_for(dberr.kind), "%s%s", dberr.kind == TT_ERR_REFUSED ? "refused: " : "",
                 tt_error_text(&dberr));
    goto done;
  }
  chart = tt_chart_build(spec, r, &err);
  if (!chart) {
    rc = tt_usage_error("chart", "%s", tt_error_text(&err));
    goto done;
  }
  run_id = tt_new_run_id();
  if (c.out) {
    file = tt_xstrdup(c.out);
  } else {
    tt_error ferr;
    file = tt_chart_file_path(tt_config_state_dir(&cfg), run_id, 0, "png", &ferr);
    if (!file) {
      rc = tt_fail(TT_EXIT_FAIL, "%s", tt_error_text(&ferr));
      goto done;
    }
  }
  if (!tt_chart_write_file(chart, file, c.w, c.h, &err)) {
    rc = tt_fail(TT_EXIT_FAIL, "%s", tt_error_text(&err));
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
  free(file);
  free(run_id);
  tt_chart_free(chart);
  tt_result_free(r);
  tt_service_free(svc);
  tt_config_free(&cfg);
  tt_chart_spec_free(spec);
  json_decref(c.ys);
  json_decref(c.spec);
  return rc;
}
