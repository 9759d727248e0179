/* gguf_split.c — GGUF models split into parts. llama.cpp's gguf-split
 * writes PREFIX-00001-of-00003.gguf, PREFIX-00002-of-00003.gguf, ... and
 * its loader, given the first part, derives the other names from that
 * first part's own file name (llama_split_prefix/llama_split_path in
 * llama.h). So every part must lie beside the first under its original
 * name, and the model must be opened by the first part's name, never
 * through a link with another name (default.gguf). This file parses and
 * rewrites such names (in paths and in URLs), finds the name llama.cpp
 * should open, and checks that a split model is whole before loading. */
#include "llm/llm.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define TT_SPLIT_SUFFIX_LEN 20 /* strlen("-00001-of-00003.gguf") */

/* Where the file name in s ends: at the query or fragment of a URL, else
 * at the end of the string (a local file name may contain '?' or '#'). */
static size_t tt_split_name_end(const char *s) {
  if (!strstr(s, "://")) return strlen(s);
  const char *slash = strrchr(s, '/');
  const char *name = slash ? slash + 1 : s;
  return (size_t)(name - s) + strcspn(name, "?#");
}

/* Reads exactly five decimal digits. */
static bool tt_split_digits5(const char *p, int *out) {
  int v = 0;
  for (int i = 0; i < 5; i++) {
    if (p[i] < '0' || p[i] > '9') return false;
    v = v * 10 + (p[i] - '0');
  }
  *out = v;
  return true;
}

/* The offset of "-NNNNN-of-MMMMM.gguf" in s, or -1 when the name does not
 * end that way; no and count set when it does. */
static long tt_split_suffix(const char *s, int *no, int *count) {
  size_t end = tt_split_name_end(s);
  if (end < TT_SPLIT_SUFFIX_LEN + 1) return -1;
  const char *p = s + end - TT_SPLIT_SUFFIX_LEN;
  if (p[0] != '-' || memcmp(p + 6, "-of-", 4) != 0 || memcmp(p + 15, ".gguf", 5) != 0) return -1;
  if (p[-1] == '/') return -1; /* no prefix at all */
  int n, c;
  if (!tt_split_digits5(p + 1, &n) || !tt_split_digits5(p + 10, &c)) return -1;
  if (n < 1 || c < 1 || n > c) return -1;
  *no = n;
  *count = c;
  return (long)(p - s);
}

int tt_gguf_split_count(const char *name, int *no) {
  int n = 0, c = 0;
  if (tt_split_suffix(name, &n, &c) < 0) return 0;
  if (no) *no = n;
  return c;
}

char *tt_gguf_split_part(const char *name, int no) {
  int n, c;
  long at = tt_split_suffix(name, &n, &c);
  if (at < 0 || no < 1 || no > c) return NULL;
  size_t end = tt_split_name_end(name);
  return tt_xasprintf("%.*s-%05d-of-%05d.gguf%s", (int)at, name, no, c, name + end);
}

char *tt_model_load_path(const char *path) {
  struct stat st;
  if (lstat(path, &st) != 0 || !S_ISLNK(st.st_mode)) return tt_xstrdup(path);
  char target[PATH_MAX];
  ssize_t n = readlink(path, target, sizeof target - 1);
  if (n <= 0) return tt_xstrdup(path);
  target[n] = '\0';
  if (tt_gguf_split_count(target, NULL) == 0) return tt_xstrdup(path);
  if (target[0] == '/') return tt_xstrdup(target);
  const char *slash = strrchr(path, '/');
  if (!slash) return tt_xstrdup(target);
  return tt_xasprintf("%.*s/%s", (int)(slash - path), path, target);
}

bool tt_model_parts_check(const char *path, tt_error *err) {
  int no = 0;
  int count = tt_gguf_split_count(path, &no);
  if (count < 2) return true;
  if (no != 1) {
    char *first = tt_gguf_split_part(path, 1);
    /* io, as for any model file that cannot be loaded (tt_llm_llama_new) */
    tt_error_set(err, TT_ERR_IO, "%s is part %d of %d of a split model; give its first part, "
                 "%s (llama.cpp finds the other parts from the first)", path, no, count, first);
    free(first);
    return false;
  }
  for (int i = 2; i <= count; i++) {
    char *part = tt_gguf_split_part(path, i);
    bool there = tt_file_exists(part);
    if (!there) {
      tt_error_set(err, TT_ERR_IO, "part %d of %d of the model is missing: %s", i, count, part);
      tt_error_hint(err, "run the `tabletalk pull` that fetched it again to finish the download, "
                    "or put the part beside the first under that name");
    }
    free(part);
    if (!there) return false;
  }
  return true;
}
