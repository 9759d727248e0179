/* trace.c — one JSONL file per run under <state>/runs/: every line a whole
 * JSON object (written with a single append), with OpenTelemetry GenAI
 * attribute names where one fits. Also listing and reading traces back. */
#include "store/store.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct tt_trace {
  int fd;
  char *run_id;
  char *path;
};

tt_trace *tt_trace_open(const char *state_dir, const char *run_id, tt_error *err) {
  char *dir = tt_xasprintf("%s/runs", state_dir);
  if (!tt_mkdir_p(dir, 0700)) {
    tt_error_set(err, TT_ERR_IO, "cannot create %s: %s", dir, strerror(errno));
    free(dir);
    return NULL;
  }
  char *path = tt_xasprintf("%s/%s.jsonl", dir, run_id);
  free(dir);
  int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
  if (fd < 0) {
    tt_error_set(err, TT_ERR_IO, "cannot create the trace %s: %s", path, strerror(errno));
    free(path);
    return NULL;
  }
  tt_trace *t = tt_xcalloc(1, sizeof *t);
  t->fd = fd;
  t->run_id = tt_xstrdup(run_id);
  t->path = path;
  return t;
}

void tt_trace_write(tt_trace *t, const json_t *line) {
  if (!t) return;
  tt_buf b = TT_BUF_INIT;
  tt_json_dump(&b, line, JSON_COMPACT | JSON_REAL_PRECISION(15));
  tt_buf_putc(&b, '\n');
  /* One write with O_APPEND: the line lands whole or not at all. */
  size_t off = 0;
  while (off < b.len) {
    ssize_t w = write(t->fd, b.data + off, b.len - off);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) break;
    off += (size_t)w;
  }
  tt_buf_free(&b);
}

void tt_trace_close(tt_trace *t) {
  if (!t) return;
  close(t->fd);
  free(t->run_id);
  free(t->path);
  free(t);
}

const char *tt_trace_path(const tt_trace *t) { return t->path; }

static int tt_cmp_str(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

char **tt_trace_list(const char *state_dir, size_t *n) {
  *n = 0;
  char *dir = tt_xasprintf("%s/runs", state_dir);
  DIR *d = opendir(dir);
  free(dir);
  if (!d) return NULL;
  char **v = NULL;
  struct dirent *e;
  while ((e = readdir(d))) {
    size_t len = strlen(e->d_name);
    if (len <= 6 || strcmp(e->d_name + len - 6, ".jsonl") != 0) continue;
    v = tt_xrealloc(v, (*n + 1) * sizeof(char *));
    v[(*n)++] = tt_xstrndup(e->d_name, len - 6);
  }
  closedir(d);
  if (*n) qsort(v, *n, sizeof(char *), tt_cmp_str);
  return v;
}

json_t *tt_trace_load(const char *state_dir, const char *run_id, tt_error *err) {
  if (strchr(run_id, '/') || strstr(run_id, "..")) {
    tt_error_set(err, TT_ERR_CONFIG, "'%s' is not a run id", run_id);
    return NULL;
  }
  char *path = tt_xasprintf("%s/runs/%s.jsonl", state_dir, run_id);
  if (!tt_file_exists(path)) {
    tt_error_set(err, TT_ERR_IO, "no trace for run %s (looked for %s)", run_id, path);
    free(path);
    return NULL;
  }
  json_t *events = tt_trace_load_file(path, err);
  free(path);
  return events;
}

json_t *tt_trace_load_file(const char *path, tt_error *err) {
  FILE *f = fopen(path, "r");
  if (!f) {
    tt_error_set(err, TT_ERR_IO, "cannot read the trace %s: %s", path, strerror(errno));
    return NULL;
  }
  json_t *events = json_array();
  char *line = NULL;
  size_t cap = 0;
  ssize_t len;
  while ((len = getline(&line, &cap, f)) > 0) {
    json_t *ev = json_loadb(line, (size_t)len, 0, NULL);
    if (ev) json_array_append_new(events, ev); /* a torn last line is skipped */
  }
  free(line);
  fclose(f);
  return events;
}
