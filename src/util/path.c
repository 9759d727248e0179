/* path.c — folders the user can find: state, data and cache under the XDG
 * base directories (overridable), and creating them. */
#include "util/util.h"

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
