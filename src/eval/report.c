/* report.c — what questions cost, from their traces: per question the LLM
 * calls, tool calls, prompt tokens sent, reused from a cache and computed,
 * completion tokens, wall seconds and, at the prices given, dollars;
 * summarised as mean, median, max and total over the runs chosen. */
#include "eval/eval.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { M_LLM, M_TOOLS, M_SENT, M_REUSED, M_COMPUTED, M_COMPLETION, M_SECONDS, M_COST, M_COUNT };
static const char *const tt_metric_names[M_COUNT] = {
    "llm_calls", "tool_calls", "prompt_tokens_sent", "prompt_tokens_reused", "prompt_tokens_computed",
    "completion_tokens", "wall_seconds", "cost_usd"};

/* "2026-12-02T09:45:12.345Z" (or without the time, or the Z) as epoch seconds. */
static bool tt_parse_iso(const char *s, double *out) {
  struct tm tm = {0};
  int y, mo, d, h = 0, mi = 0;
  double sec = 0;
  int n = sscanf(s, "%4d-%2d-%2d%*1[T ]%2d:%2d:%lf", &y, &mo, &d, &h, &mi, &sec);
  if (n < 3 || n == 4 || mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || sec < 0 || sec >= 61)
    return false;
  tm.tm_year = y - 1900;
  tm.tm_mon = mo - 1;
  tm.tm_mday = d;
  tm.tm_hour = h;
  tm.tm_min = mi;
  time_t t = timegm(&tm);
  if (t == (time_t)-1) return false;
  *out = (double)t + sec;
  return true;
}

bool tt_parse_since(const char *s, double now, double *out) {
  char *end;
  double v = strtod(s, &end);
  if (end != s && v >= 0 && end[0] && !end[1] && strchr("smhd", end[0])) {
    double unit = end[0] == 's' ? 1 : end[0] == 'm' ? 60 : end[0] == 'h' ? 3600 : 86400;
    *out = now - v * unit;
    return true;
  }
  return tt_parse_iso(s, out);
}

static int tt_cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static double tt_num_field(const json_t *o, const char *key) {
  const json_t *v = json_object_get(o, key);
  return json_is_number(v) ? json_number_value(v) : 0;
}

/* A number under key, or under the name traces before the one event
 * stream used (old): both are read, so older traces still count. */
static double tt_num_either(const json_t *o, const char *key, const char *old) {
  const json_t *v = json_object_get(o, key);
  return json_is_number(v) ? json_number_value(v) : tt_num_field(o, old);
}

/* The metrics of one run; false when its trace has no start or no end.
 * Reads the events of docs/reference/events.md, and the llm_call and
 * tool_call events of older traces. */
static bool tt_run_metrics(const json_t *events, const tt_report_opts *o, double *m, double *started) {
  bool have_start = false, have_end = false, old_tools = false;
  double end_tools = 0;
  for (int k = 0; k < M_COUNT; k++) m[k] = 0;
  size_t i;
  const json_t *ev;
  json_array_foreach(events, i, ev) {
    const char *kind = json_string_value(json_object_get(ev, "event"));
    if (!kind) continue;
    if (strcmp(kind, "run_start") == 0) {
      const char *ts = json_string_value(json_object_get(ev, "ts"));
      have_start = ts && tt_parse_iso(ts, started);
    } else if (strcmp(kind, "model_call") == 0 || strcmp(kind, "llm_call") == 0) {
      m[M_LLM]++;
      m[M_SENT] += tt_num_either(ev, "input_tokens", "gen_ai.usage.input_tokens");
      m[M_REUSED] += tt_num_either(ev, "cached_tokens", "gen_ai.usage.cache_read.input_tokens");
      m[M_COMPLETION] += tt_num_either(ev, "output_tokens", "gen_ai.usage.output_tokens");
    } else if (strcmp(kind, "tool_call") == 0) {
      m[M_TOOLS]++;
      old_tools = true;
    } else if (strcmp(kind, "run_end") == 0) {
      m[M_SECONDS] = tt_num_field(json_object_get(ev, "totals"), "wall_ms") / 1000.0;
      end_tools = tt_num_field(json_object_get(ev, "totals"), "tool_calls");
      have_end = true;
    }
  }
  if (!old_tools) m[M_TOOLS] = end_tools; /* every tool call, answer included */
  m[M_COMPUTED] = m[M_SENT] - m[M_REUSED];
  double cached_price = o->price_cached < 0 ? o->price_in : o->price_cached;
  m[M_COST] = (m[M_COMPUTED] * o->price_in + m[M_REUSED] * cached_price + m[M_COMPLETION] * o->price_out) / 1e6;
  return have_start && have_end;
}

json_t *tt_report_build(const tt_report_opts *o, tt_error *err) {
  size_t nfiles;
  char **files = tt_list_files(o->runs_dir, ".jsonl", &nfiles);
  if (!files && !tt_file_exists(o->runs_dir)) {
    tt_error_set(err, TT_ERR_IO, "no traces at %s: the folder does not exist (traces are in "
                 "STATE/runs; give --runs DIR or --state-dir)", o->runs_dir);
    return NULL;
  }
  double *vals[M_COUNT];
  for (int k = 0; k < M_COUNT; k++) vals[k] = tt_xcalloc(nfiles ? nfiles : 1, sizeof(double));
  size_t runs = 0, skipped = 0;
  double first = 0, last = 0;
  for (size_t f = 0; f < nfiles; f++) {
    char *path = tt_xasprintf("%s/%s", o->runs_dir, files[f]);
    tt_error ignored;
    json_t *events = tt_trace_load_file(path, &ignored);
    free(path);
    double m[M_COUNT], started = 0;
    bool whole = events && tt_run_metrics(events, o, m, &started);
    json_decref(events);
    if (!whole) { /* a run still going, killed, or not a trace */
      skipped++;
      continue;
    }
    if (started < o->since) continue;
    if (!runs || started < first) first = started;
    if (!runs || started > last) last = started;
    for (int k = 0; k < M_COUNT; k++) vals[k][runs] = m[k];
    runs++;
  }
  tt_strv_free(files, nfiles);
  json_t *metrics = json_object();
  for (int k = 0; k < M_COUNT; k++) {
    double total = 0, max = 0;
    for (size_t i = 0; i < runs; i++) {
      total += vals[k][i];
      if (i == 0 || vals[k][i] > max) max = vals[k][i];
    }
    qsort(vals[k], runs, sizeof(double), tt_cmp_double);
    double median = !runs ? 0 : runs % 2 ? vals[k][runs / 2] : (vals[k][runs / 2 - 1] + vals[k][runs / 2]) / 2;
    json_object_set_new(metrics, tt_metric_names[k],
                        json_pack("{s:f,s:f,s:f,s:f}", "mean", runs ? total / (double)runs : 0.0, "median",
                                  median, "max", max, "total", total));
    free(vals[k]);
  }
  json_t *out = json_pack("{s:s,s:I,s:I,s:o}", "runs_dir", o->runs_dir, "runs", (json_int_t)runs, "skipped",
                          (json_int_t)skipped, "metrics", metrics);
  json_object_set_new(out, "prices", json_pack("{s:f,s:f,s:f}", "in", o->price_in, "cached",
                                               o->price_cached < 0 ? o->price_in : o->price_cached, "out",
                                               o->price_out));
  if (runs) {
    tt_buf a = TT_BUF_INIT, b = TT_BUF_INIT;
    tt_buf_put_iso_time(&a, first);
    tt_buf_put_iso_time(&b, last);
    json_object_set_new(out, "first", json_string(tt_buf_cstr(&a)));
    json_object_set_new(out, "last", json_string(tt_buf_cstr(&b)));
    tt_buf_free(&a);
    tt_buf_free(&b);
  }
  return out;
}
