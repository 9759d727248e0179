/* gc.c — retention for what runs leave in the state directory: the JSONL
 * trace of every run (runs/) and the chart files drawn for it (charts/).
 * Files older than an age are removed; threads (follow-up memory) are
 * kept. `tabletalk gc` calls it on demand, and ask/chat once a day with
 * the age TABLETALK_KEEP sets (default 90 days). */
#include "store/store.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

bool tt_parse_age(const char *text, long long *seconds) {
  if (!text || !*text) return false;
  if (strcmp(text, "never") == 0 || strcmp(text, "0") == 0) {
    *seconds = 0;
    return true;
  }
  char *end;
  errno = 0;
  long long n = strtoll(text, &end, 10);
  if (errno || end == text || n <= 0 || n > 100000) return false;
  long long unit;
  if (strcmp(end, "d") == 0 || *end == '\0') unit = 86400;
  else if (strcmp(end, "h") == 0) unit = 3600;
  else if (strcmp(end, "w") == 0) unit = 7 * 86400;
  else if (strcmp(end, "m") == 0) unit = 60;
  else return false;
  *seconds = n * unit;
  return true;
}

/* Removes (or with dry_run only counts) the regular files of dir whose
 * names end in one of the suffixes and that were last changed before
 * cutoff. */
static void tt_gc_dir(const char *dir, const char *const *suffixes, time_t cutoff, bool dry_run,
                      tt_gc_report *r) {
  DIR *d = opendir(dir);
  if (!d) return; /* nothing there yet */
  struct dirent *e;
  while ((e = readdir(d))) {
    size_t len = strlen(e->d_name);
    bool ours = false;
    for (const char *const *s = suffixes; *s && !ours; s++)
      ours = len > strlen(*s) && strcmp(e->d_name + len - strlen(*s), *s) == 0;
    if (!ours) continue;
    struct stat st;
    if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st.st_mode)) continue;
    if (st.st_mtime >= cutoff) {
      r->kept++;
      continue;
    }
    if (!dry_run && unlinkat(dirfd(d), e->d_name, 0) != 0) {
      r->failed++;
      continue;
    }
    r->removed++;
    r->bytes += (long long)st.st_size;
  }
  closedir(d);
}

void tt_store_gc(const char *state_dir, long long max_age_s, bool dry_run, tt_gc_report *r) {
  memset(r, 0, sizeof *r);
  time_t cutoff = time(NULL) - (time_t)max_age_s;
  static const char *const traces[] = {".jsonl", NULL};
  static const char *const charts[] = {".png", ".svg", NULL};
  char *runs = tt_xasprintf("%s/runs", state_dir);
  tt_gc_dir(runs, traces, cutoff, dry_run, r);
  free(runs);
  char *ch = tt_xasprintf("%s/charts", state_dir);
  tt_gc_dir(ch, charts, cutoff, dry_run, r);
  free(ch);
}

bool tt_store_gc_due(const char *state_dir) {
  char *stamp = tt_xasprintf("%s/gc-stamp", state_dir);
  struct stat st;
  bool due = stat(stamp, &st) != 0 || time(NULL) - st.st_mtime >= 86400;
  if (due && tt_mkdir_p(state_dir, 0700)) {
    int fd = open(stamp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd >= 0) close(fd);
    else due = false; /* a state folder we cannot write: no clean-up either */
  }
  free(stamp);
  return due;
}
