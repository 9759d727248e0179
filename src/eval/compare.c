/* compare.c — two Spider results files side by side: which questions
 * changed outcome between run A and run B (fixed: now correct; broken: no
 * longer correct; changed: another wrong outcome), which are in only one of
 * them, and each run's EX over the questions both answered. Questions are
 * matched by id, so the runs may have used other seeds or sizes. */
#include "eval/eval.h"

#include <stdlib.h>
#include <string.h>

static const json_t *tt_find_question(const json_t *qs, const char *id) {
  size_t i;
  const json_t *q;
  json_array_foreach(qs, i, q) {
    const char *qid = json_string_value(json_object_get(q, "id"));
    if (qid && strcmp(qid, id) == 0) return q;
  }
  return NULL;
}

static const char *tt_outcome_of(const json_t *q) {
  const char *o = json_string_value(json_object_get(q, "outcome"));
  return o ? o : "?";
}

static json_t *tt_str_or_null(const json_t *q, const char *key) {
  const char *s = json_string_value(json_object_get(q, key));
  return s ? json_string(s) : json_null();
}

/* One changed question: what it asked and what each run did. */
static json_t *tt_change(const json_t *a, const json_t *b) {
  const json_t *q = a ? a : b;
  json_t *c = json_object();
  json_object_set_new(c, "id", tt_str_or_null(q, "id"));
  json_object_set_new(c, "db_id", tt_str_or_null(q, "db_id"));
  json_object_set_new(c, "question", tt_str_or_null(q, "question"));
  json_object_set_new(c, "a", a ? json_string(tt_outcome_of(a)) : json_null());
  json_object_set_new(c, "b", b ? json_string(tt_outcome_of(b)) : json_null());
  json_object_set_new(c, "a_detail", a ? tt_str_or_null(a, "detail") : json_null());
  json_object_set_new(c, "b_detail", b ? tt_str_or_null(b, "detail") : json_null());
  json_object_set_new(c, "a_sql", a ? tt_str_or_null(a, "pred_sql") : json_null());
  json_object_set_new(c, "b_sql", b ? tt_str_or_null(b, "pred_sql") : json_null());
  return c;
}

/* A results file, checked to be one: NULL with err, io when it cannot
 * be opened, config when it is not JSON or not a results file. */
static json_t *tt_load_results(const char *path, tt_error *err) {
  json_error_t jerr;
  json_t *doc = json_load_file(path, 0, &jerr);
  if (!doc) {
    tt_error_set(err, json_error_code(&jerr) == json_error_cannot_open_file ? TT_ERR_IO : TT_ERR_CONFIG,
                 "cannot read %s: %s", path, jerr.text);
    return NULL;
  }
  if (!json_is_array(json_object_get(doc, "questions"))) {
    tt_error_set(err, TT_ERR_CONFIG,
                 "%s is not a results file of `tabletalk eval spider` (no \"questions\" list)", path);
    json_decref(doc);
    return NULL;
  }
  return doc;
}

static json_t *tt_results_side(const char *path, const json_t *doc, size_t correct, size_t common) {
  const json_t *meta = json_object_get(doc, "meta");
  return json_pack("{s:s,s:o,s:o,s:I,s:I,s:f}", "file", path, "tag", tt_str_or_null(meta, "tag"), "model",
                   tt_str_or_null(meta, "model"), "questions", (json_int_t)json_array_size(json_object_get(doc, "questions")),
                   "correct_in_common", (json_int_t)correct, "ex_in_common",
                   common ? 100.0 * (double)correct / (double)common : 0.0);
}

json_t *tt_spider_compare(const char *file_a, const char *file_b, tt_error *err) {
  json_t *da = tt_load_results(file_a, err);
  json_t *db = da ? tt_load_results(file_b, err) : NULL;
  if (!db) {
    json_decref(da);
    return NULL;
  }
  const json_t *qa = json_object_get(da, "questions"), *qb = json_object_get(db, "questions");
  json_t *fixed = json_array(), *broken = json_array(), *changed = json_array();
  json_t *only_a = json_array(), *only_b = json_array();
  size_t common = 0, ca = 0, cb = 0, i;
  const json_t *a;
  json_array_foreach(qa, i, a) {
    const char *id = json_string_value(json_object_get(a, "id"));
    const json_t *b = id ? tt_find_question(qb, id) : NULL;
    if (!b) {
      json_array_append_new(only_a, tt_change(a, NULL));
      continue;
    }
    common++;
    bool ra = strcmp(tt_outcome_of(a), "correct") == 0, rb = strcmp(tt_outcome_of(b), "correct") == 0;
    ca += ra;
    cb += rb;
    if (ra != rb) json_array_append_new(rb ? fixed : broken, tt_change(a, b));
    else if (strcmp(tt_outcome_of(a), tt_outcome_of(b)) != 0) json_array_append_new(changed, tt_change(a, b));
  }
  const json_t *b;
  json_array_foreach(qb, i, b) {
    const char *id = json_string_value(json_object_get(b, "id"));
    if (!id || !tt_find_question(qa, id)) json_array_append_new(only_b, tt_change(NULL, b));
  }
  const json_t *data_a = json_object_get(json_object_get(da, "meta"), "data_dir");
  const json_t *data_b = json_object_get(json_object_get(db, "meta"), "data_dir");
  json_t *out = json_pack("{s:o,s:o,s:I,s:b,s:o,s:o,s:o,s:o,s:o}", "a", tt_results_side(file_a, da, ca, common), "b",
                          tt_results_side(file_b, db, cb, common), "in_common", (json_int_t)common,
                          "same_data", data_a && data_b && json_equal((json_t *)data_a, (json_t *)data_b),
                          "fixed", fixed, "broken", broken, "changed", changed, "only_a", only_a, "only_b", only_b);
  json_decref(da);
  json_decref(db);
  return out;
}
