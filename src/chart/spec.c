/* spec.c — the chart spec as JSON: parsing with an error for every key
 * that is unknown, of the wrong type or out of range (the model reads the
 * error and repairs its call), writing it back for traces, and the JSON
 * Schema that tool definitions carry. */
#include "chart/chart.h"

#include <stdlib.h>
#include <string.h>

#define TT_CHART_MAX_Y 8
#define TT_CHART_MAX_NAME 200
#define TT_CHART_MAX_TITLE 300
#define TT_CHART_MAX_LIMIT 10000

static const char *const tt_kind_names[] = {"bar", "line", "area", "scatter", "pie", "histogram"};

const char *tt_chart_kind_name(tt_chart_kind k) {
  return (size_t)k < sizeof tt_kind_names / sizeof tt_kind_names[0] ? tt_kind_names[k] : "?";
}

static const char tt_spec_schema[] =
    "{\"type\":\"object\",\"properties\":{"
    "\"kind\":{\"type\":\"string\",\"enum\":[\"bar\",\"line\",\"area\",\"scatter\",\"pie\","
    "\"histogram\"],\"description\":\"bar: categories; line/area: a value over an ordered x "
    "(dates, years, numbers); scatter: two numeric columns; pie: shares of a whole; "
    "histogram: the distribution of one numeric column (x)\"},"
    "\"x\":{\"type\":\"string\",\"description\":\"column for the x axis (pie: the slice "
    "labels; histogram: the values)\"},"
    "\"y\":{\"anyOf\":[{\"type\":\"string\"},{\"type\":\"array\",\"items\":{\"type\":"
    "\"string\"},\"minItems\":1,\"maxItems\":8}],\"description\":\"numeric column(s) to plot "
    "(not for histogram)\"},"
    "\"series\":{\"type\":\"string\",\"description\":\"optional column whose values split y "
    "into several series (one line or bar colour each)\"},"
    "\"title\":{\"type\":\"string\",\"description\":\"chart title\"},"
    "\"x_label\":{\"type\":\"string\"},\"y_label\":{\"type\":\"string\"},"
    "\"sort\":{\"type\":\"string\",\"enum\":[\"x\",\"y\",\"none\"]},"
    "\"limit\":{\"type\":\"integer\",\"minimum\":1,\"maximum\":10000,\"description\":\"keep "
    "the first N bars/points/slices after sorting\"},"
    "\"orientation\":{\"type\":\"string\",\"enum\":[\"vertical\",\"horizontal\"],"
    "\"description\":\"bar charts only; default: horizontal when labels are long\"}},"
    "\"required\":[\"kind\",\"x\",\"title\"],\"additionalProperties\":false}";

const char *tt_chart_spec_schema(void) { return tt_spec_schema; }

void tt_chart_spec_free(tt_chart_spec *s) {
  if (!s) return;
  free(s->x);
  for (size_t i = 0; i < s->ny; i++) free(s->y[i]);
  free(s->y);
  free(s->series);
  free(s->title);
  free(s->x_label);
  free(s->y_label);
  free(s);
}

/* A string field of at most max characters; false (and err, a
 * TT_ERR_CONFIG) when it is present but not a usable string. */
static bool tt_spec_string(const json_t *j, const char *key, size_t max, bool required, char **out,
                           tt_error *err) {
  const json_t *v = json_object_get(j, key);
  if (!v || json_is_null(v)) {
    if (required) tt_error_set(err, TT_ERR_CONFIG, "\"%s\" is required", key);
    return !required;
  }
  if (!json_is_string(v)) {
    tt_error_set(err, TT_ERR_CONFIG, "\"%s\" must be a string", key);
    return false;
  }
  const char *s = json_string_value(v);
  size_t n = json_string_length(v);
  if (n == 0 || strlen(s) != n) {
    tt_error_set(err, TT_ERR_CONFIG,
                 "\"%s\" must be a non-empty string without NUL characters", key);
    return false;
  }
  if (tt_utf8_count(s, n) > max) {
    tt_error_set(err, TT_ERR_CONFIG, "\"%s\" is longer than %zu characters", key, max);
    return false;
  }
  *out = tt_xstrdup(s);
  return true;
}

/* Index of v in names (n of them), or -1. */
static int tt_spec_enum(const json_t *v, const char *const *names, size_t n) {
  if (!json_is_string(v)) return -1;
  for (size_t i = 0; i < n; i++)
    if (strcmp(json_string_value(v), names[i]) == 0) return (int)i;
  return -1;
}

tt_chart_spec *tt_chart_spec_from_json(const json_t *j, tt_error *err) {
  static const char *const keys[] = {"kind",    "x",    "y",     "series",     "title",
                                     "x_label", "y_label", "sort", "limit", "orientation"};
  if (!json_is_object(j)) {
    tt_error_set(err, TT_ERR_CONFIG, "the chart spec must be a JSON object");
    return NULL;
  }
  const char *key;
  json_t *val;
  json_object_foreach((json_t *)j, key, val) {
    bool known = false;
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) known = known || strcmp(key, keys[i]) == 0;
    if (!known) {
      tt_error_set(err, TT_ERR_CONFIG, "unknown key \"%.60s\"; a chart spec has kind, x, y, "
                   "series, title, x_label, y_label, sort, limit, orientation", key);
      return NULL;
    }
  }
  tt_chart_spec *s = tt_xcalloc(1, sizeof *s);
  int k = tt_spec_enum(json_object_get(j, "kind"), tt_kind_names,
                       sizeof tt_kind_names / sizeof tt_kind_names[0]);
  if (k < 0) {
    tt_error_set(err, TT_ERR_CONFIG,
                 "\"kind\" must be one of bar, line, area, scatter, pie, histogram");
    goto fail;
  }
  s->kind = (tt_chart_kind)k;
  if (!tt_spec_string(j, "x", TT_CHART_MAX_NAME, true, &s->x, err)) goto fail;
  if (!tt_spec_string(j, "title", TT_CHART_MAX_TITLE, true, &s->title, err)) goto fail;
  if (!tt_spec_string(j, "series", TT_CHART_MAX_NAME, false, &s->series, err)) goto fail;
  if (!tt_spec_string(j, "x_label", TT_CHART_MAX_TITLE, false, &s->x_label, err)) goto fail;
  if (!tt_spec_string(j, "y_label", TT_CHART_MAX_TITLE, false, &s->y_label, err)) goto fail;

  const json_t *y = json_object_get(j, "y");
  if (y && !json_is_null(y)) {
    json_t *list = json_is_string(y) ? json_pack("[O]", y) : json_incref((json_t *)y);
    if (!json_is_array(list) || json_array_size(list) == 0 ||
        json_array_size(list) > TT_CHART_MAX_Y) {
      json_decref(list);
      tt_error_set(err, TT_ERR_CONFIG,
                   "\"y\" must be a column name or a list of 1 to %d column names", TT_CHART_MAX_Y);
      goto fail;
    }
    s->y = tt_xcalloc(json_array_size(list), sizeof *s->y);
    for (size_t i = 0; i < json_array_size(list); i++) {
      json_t *item = json_pack("{s:O}", "y", json_array_get(list, i));
      bool ok = tt_spec_string(item, "y", TT_CHART_MAX_NAME, true, &s->y[i], err);
      json_decref(item);
      if (!ok) {
        json_decref(list);
        goto fail;
      }
      s->ny++;
    }
    json_decref(list);
  }
  if (s->kind == TT_CHART_HISTOGRAM && s->ny) {
    tt_error_set(err, TT_ERR_CONFIG, "a histogram takes no \"y\": \"x\" names the numeric "
                 "column whose distribution is drawn");
    goto fail;
  }
  if (s->kind != TT_CHART_HISTOGRAM && !s->ny) {
    tt_error_set(err, TT_ERR_CONFIG,
                 "\"y\" is required for a %s chart: the numeric column(s) to plot",
                 tt_chart_kind_name(s->kind));
    goto fail;
  }
  if (s->kind == TT_CHART_PIE && (s->ny != 1 || s->series)) {
    tt_error_set(err, TT_ERR_CONFIG, "a pie chart takes exactly one \"y\" and no \"series\"");
    goto fail;
  }

  const json_t *sort = json_object_get(j, "sort");
  if (sort && !json_is_null(sort)) {
    static const char *const sorts[] = {"x", "y", "none"};
    int v = tt_spec_enum(sort, sorts, 3);
    if (v < 0) {
      tt_error_set(err, TT_ERR_CONFIG, "\"sort\" must be \"x\", \"y\" or \"none\"");
      goto fail;
    }
    s->sort = v == 0 ? TT_CHART_SORT_X : v == 1 ? TT_CHART_SORT_Y : TT_CHART_SORT_NONE;
  }
  const json_t *limit = json_object_get(j, "limit");
  if (limit && !json_is_null(limit)) {
    if (!json_is_integer(limit) || json_integer_value(limit) < 1 ||
        json_integer_value(limit) > TT_CHART_MAX_LIMIT) {
      tt_error_set(err, TT_ERR_CONFIG, "\"limit\" must be a whole number from 1 to %d",
                   TT_CHART_MAX_LIMIT);
      goto fail;
    }
    s->limit = (long)json_integer_value(limit);
  }
  const json_t *orient = json_object_get(j, "orientation");
  if (orient && !json_is_null(orient)) {
    static const char *const orients[] = {"vertical", "horizontal"};
    int v = tt_spec_enum(orient, orients, 2);
    if (v < 0) {
      tt_error_set(err, TT_ERR_CONFIG, "\"orientation\" must be \"vertical\" or \"horizontal\"");
      goto fail;
    }
    if (s->kind != TT_CHART_BAR) {
      tt_error_set(err, TT_ERR_CONFIG, "\"orientation\" applies to bar charts only");
      goto fail;
    }
    s->orient = v == 0 ? TT_CHART_ORIENT_VERTICAL : TT_CHART_ORIENT_HORIZONTAL;
  }
  return s;
fail:
  tt_chart_spec_free(s);
  return NULL;
}

json_t *tt_chart_spec_to_json(const tt_chart_spec *s) {
  json_t *o = json_object();
  json_object_set_new(o, "kind", json_string(tt_chart_kind_name(s->kind)));
  json_object_set_new(o, "x", json_string(s->x));
  if (s->ny == 1) {
    json_object_set_new(o, "y", json_string(s->y[0]));
  } else if (s->ny > 1) {
    json_t *a = json_array();
    for (size_t i = 0; i < s->ny; i++) json_array_append_new(a, json_string(s->y[i]));
    json_object_set_new(o, "y", a);
  }
  if (s->series) json_object_set_new(o, "series", json_string(s->series));
  json_object_set_new(o, "title", json_string(s->title));
  if (s->x_label) json_object_set_new(o, "x_label", json_string(s->x_label));
  if (s->y_label) json_object_set_new(o, "y_label", json_string(s->y_label));
  if (s->sort != TT_CHART_SORT_DEFAULT)
    json_object_set_new(o, "sort", json_string(s->sort == TT_CHART_SORT_X   ? "x"
                                               : s->sort == TT_CHART_SORT_Y ? "y"
                                                                            : "none"));
  if (s->limit) json_object_set_new(o, "limit", json_integer(s->limit));
  if (s->orient != TT_CHART_ORIENT_AUTO)
    json_object_set_new(o, "orientation",
                        json_string(s->orient == TT_CHART_ORIENT_VERTICAL ? "vertical" : "horizontal"));
  return o;
}
