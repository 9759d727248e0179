/* jsonl.c — reading a question file of the evaluations: one JSON object a
 * line, each checked for the fields its evaluation needs, with errors that
 * name the file, the line and what was expected. */
#include "eval/eval.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

json_t *tt_eval_read_jsonl(const char *path, bool (*ok)(const json_t *q), const char *need,
                           const char *hint, tt_error *err) {
  FILE *f = fopen(path, "r");
  if (!f) {
    tt_error_set(err, TT_ERR_IO, "cannot read %s: %s", path, strerror(errno));
    tt_error_hint(err, "%s", hint);
    return NULL;
  }
  json_t *qs = json_array();
  char *line = NULL;
  size_t cap = 0;
  long lineno = 0;
  while (getline(&line, &cap, f) >= 0) {
    lineno++;
    if (line[strspn(line, " \t\r\n")] == 0) continue;
    json_error_t jerr;
    json_t *q = json_loads(line, 0, &jerr);
    if (!json_is_object(q) || !ok(q)) {
      tt_error_set(err, TT_ERR_CONFIG, "%s line %ld is not %s%s%s%s", path, lineno, need,
                   q ? "" : " (invalid JSON: ", q ? "" : jerr.text, q ? "" : ")");
      if (err) err->line = (int)lineno;
      json_decref(q);
      json_decref(qs);
      qs = NULL;
      break;
    }
    json_array_append_new(qs, q);
  }
  free(line);
  fclose(f);
  if (qs && json_array_size(qs) == 0) {
    tt_error_set(err, TT_ERR_CONFIG, "%s holds no questions", path);
    json_decref(qs);
    qs = NULL;
  }
  return qs;
}
