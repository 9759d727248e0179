/* path.c — folders the user can find: state, data and cache under the XDG
 * base directories (overridable), and creating them. */
#include "util/util.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

bool tt_file_exists(const char *path) { return access(path, F_OK) == 0; }

bool tt_mkdir_p(const char *path, unsigned mode) {
  char *p = tt_xstrdup(path);
  bool ok = true;
  for (char *s = p + 1; ok; s++) {
    if (*s != '/' && *s != '\0') continue;
    char c = *s;
    *s = '\0';
    if (mkdir(p, (mode_t)mode) != 0 && errno != EEXIST) ok = false;
    *s = c;
    if (!c) break;
  }
  struct stat st;
  ok = ok && stat(p, &st) == 0 && S_ISDIR(st.st_mode);
  free(p);
  return ok;
}

char *tt_default_dir(const tt_dotenv *d, const char *kind) {
  char own[64], xdg[64];
  snprintf(own, sizeof own, "TABLETALK_%s_DIR", kind);
  snprintf(xdg, sizeof xdg, "XDG_%s_HOME", kind);
  const char *v = tt_config_get(d, own);
  if (v) return tt_xstrdup(v);
  v = tt_config_get(d, xdg);
  if (v && v[0] == '/') return tt_xasprintf("%s/tabletalk", v);
  const char *home = getenv("HOME");
  if (!home || !*home) home = "/tmp";
  const char *sub = strcmp(kind, "DATA") == 0    ? ".local/share"
                    : strcmp(kind, "CACHE") == 0 ? ".cache"
                                                 : ".local/state";
  return tt_xasprintf("%s/%s/tabletalk", home, sub);
}

static int tt_cmp_names(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

char **tt_list_files(const char *dir, const char *suffix, size_t *n) {
  *n = 0;
  DIR *d = opendir(dir);
  if (!d) return NULL;
  char **v = NULL;
  size_t sl = strlen(suffix);
  struct dirent *e;
  while ((e = readdir(d))) {
    size_t len = strlen(e->d_name);
    if (e->d_name[0] == '.' || len <= sl || strcmp(e->d_name + len - sl, suffix) != 0) continue;
    char *full = tt_xasprintf("%s/%s", dir, e->d_name);
    struct stat st;
    bool regular = stat(full, &st) == 0 && S_ISREG(st.st_mode);
    free(full);
    if (!regular) continue;
    v = tt_xrealloc(v, (*n + 1) * sizeof(char *));
    v[(*n)++] = tt_xstrdup(e->d_name);
  }
  closedir(d);
  if (*n) qsort(v, *n, sizeof(char *), tt_cmp_names);
  return v;
}

void tt_strv_free(char **v, size_t n) {
  for (size_t i = 0; i < n; i++) free(v[i]);
  free(v);
}
