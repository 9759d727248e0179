/* chartbench.c — `tt-chartbench`: how long drawing a chart takes. Builds a
 * line chart of N points (a daily series, 10,000 by default) and a bar
 * chart of 5,000 categories, and times the chart model, the PNG (drawn
 * and written), the SVG (drawn and written) and the terminal preview over
 * several runs; the first run, which loads cairo and fontconfig, is
 * reported apart. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "chart/chart.h"

typedef struct bench_case {
  const char *name;
  tt_result *rows;
  const char *spec;
} bench_case;

/* A result of n rows: a date (or a category) and a wandering value. */
static tt_result *make_rows(size_t n, bool categories) {
  tt_result *r = tt_xcalloc(1, sizeof *r);
  r->arena = tt_arena_new();
  r->ncols = 2;
  r->names = tt_arena_alloc(r->arena, 2 * sizeof *r->names);
  r->decltypes = tt_arena_alloc(r->arena, 2 * sizeof *r->decltypes);
  r->names[0] = "x";
  r->names[1] = "value";
  r->decltypes[0] = r->decltypes[1] = "";
  r->nrows = n;
  r->cells = tt_xcalloc(2 * n, sizeof *r->cells);
  double v = 1000;
  uint64_t s = 88172645463325252ull;
  for (size_t i = 0; i < n; i++) {
    char buf[48];
    if (categories) {
      snprintf(buf, sizeof buf, "category %zu", i);
    } else { /* days from 1990-01-01 */
      long d = (long)i, y = 1990, m = 1;
      static const int mdays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
      for (;;) {
        int len = mdays[m - 1] + (m == 2 && y % 4 == 0 && (y % 100 != 0 || y % 400 == 0));
        if (d < len) break;
        d -= len;
        if (++m > 12) m = 1, y++;
      }
      snprintf(buf, sizeof buf, "%04ld-%02ld-%02ld", y, m, d + 1);
    }
    size_t len = strlen(buf);
    r->cells[2 * i] = (tt_value){.type = TT_VAL_TEXT, .len = len, .u.s = tt_arena_memdup(r->arena, buf, len)};
    s ^= s << 13, s ^= s >> 7, s ^= s << 17;
    v += (double)(s % 2001) / 100.0 - 10;
    r->cells[2 * i + 1] = (tt_value){.type = TT_VAL_REAL, .u.r = v};
  }
  return r;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

typedef struct timing {
  double first, median, max;
} timing;

static timing summarise(double *t, int runs) {
  timing out = {.first = t[0]};
  qsort(t + 1, (size_t)(runs - 1), sizeof *t, cmp_double);
  out.median = runs > 1 ? t[1 + (runs - 1) / 2] : t[0];
  out.max = runs > 1 ? t[runs - 1] : t[0];
  return out;
}

int main(int argc, char **argv) {
  long points = 10000, runs = 21;
  const char *dir = NULL;
  bool json = false;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--points") == 0 && i + 1 < argc) points = strtol(argv[++i], NULL, 10);
    else if (strcmp(argv[i], "--runs") == 0 && i + 1 < argc) runs = strtol(argv[++i], NULL, 10);
    else if (strcmp(argv[i], "--out") == 0 && i + 1 < argc) dir = argv[++i];
    else if (strcmp(argv[i], "--json") == 0) json = true;
    else {
      fprintf(stderr, "usage: tt-chartbench [--points N] [--runs N] [--out DIR] [--json]\n"
                      "Times a line chart of N points (10000) and a bar chart of 5,000 categories:\n"
                      "the model, PNG, SVG and terminal preview, over N runs (21).\n");
      return 2;
    }
  }
  if (points < 2 || points > 100000 || runs < 2 || runs > 1000) {
    fprintf(stderr, "tt-chartbench: --points wants 2..100000 and --runs 2..1000\n");
    return 2;
  }
  char tmpl[] = "/tmp/tt-chartbench-XXXXXX";
  if (!dir) dir = mkdtemp(tmpl);
  if (!dir) {
    perror("tt-chartbench: mkdtemp");
    return 1;
  }
  char line_spec[160];
  snprintf(line_spec, sizeof line_spec,
           "{\"kind\":\"line\",\"x\":\"x\",\"y\":\"value\",\"title\":\"%ld points\"}", points);
  bench_case cases[] = {
      {"line", make_rows((size_t)points, false), line_spec},
      {"bars", make_rows(5000, true),
       "{\"kind\":\"bar\",\"x\":\"x\",\"y\":\"value\",\"title\":\"5,000 categories\",\"limit\":5000}"},
  };
  const char *stages[] = {"model", "png", "svg", "terminal", "total"};
  if (json) printf("{\"points\":%ld,\"runs\":%ld,\"cases\":[", points, runs);
  else printf("%-6s %-9s %10s %10s %10s   (ms; first run loads cairo and fonts)\n", "chart", "stage",
              "first", "median", "max");
  for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
    double *t[5];
    for (int s = 0; s < 5; s++) t[s] = calloc((size_t)runs, sizeof(double));
    json_t *sj = json_loads(cases[k].spec, 0, NULL);
    tt_error err = TT_ERROR_INIT;
    tt_chart_spec *spec = tt_chart_spec_from_json(sj, &err);
    char *png = tt_xasprintf("%s/%s.png", dir, cases[k].name), *svg = tt_xasprintf("%s/%s.svg", dir, cases[k].name);
    for (long r = 0; r < runs; r++) {
      double t0 = tt_now_ms();
      tt_chart *c = tt_chart_build(spec, cases[k].rows, &err);
      double t1 = tt_now_ms();
      if (!c || !tt_chart_write_png(c, png, TT_CHART_DEFAULT_WIDTH, TT_CHART_DEFAULT_HEIGHT, &err)) {
        fprintf(stderr, "tt-chartbench: %s\n", tt_error_text(&err));
        return 1;
      }
      double t2 = tt_now_ms();
      if (!tt_chart_write_svg(c, svg, TT_CHART_DEFAULT_WIDTH, TT_CHART_DEFAULT_HEIGHT, &err)) {
        fprintf(stderr, "tt-chartbench: %s\n", tt_error_text(&err));
        return 1;
      }
      double t3 = tt_now_ms();
      tt_buf term = TT_BUF_INIT;
      tt_chart_term_opts o = {.width = 100, .height = 12, .color = true, .unicode = true};
      tt_chart_render_term(c, &o, &term);
      double t4 = tt_now_ms();
      tt_buf_free(&term);
      tt_chart_free(c);
      t[0][r] = t1 - t0, t[1][r] = t2 - t1, t[2][r] = t3 - t2, t[3][r] = t4 - t3, t[4][r] = t4 - t0;
    }
    for (int s = 0; s < 5; s++) {
      timing x = summarise(t[s], (int)runs);
      if (json)
        printf("%s{\"chart\":\"%s\",\"stage\":\"%s\",\"first_ms\":%.3f,\"median_ms\":%.3f,\"max_ms\":%.3f}",
               k || s ? "," : "", cases[k].name, stages[s], x.first, x.median, x.max);
      else
        printf("%-6s %-9s %10.2f %10.2f %10.2f\n", cases[k].name, stages[s], x.first, x.median, x.max);
      free(t[s]);
    }
    tt_chart_spec_free(spec);
    json_decref(sj);
    tt_result_free(cases[k].rows);
    free(png);
    free(svg);
  }
  if (json) printf("]}\n");
  else printf("files: %s\n", dir);
  return 0;
}
