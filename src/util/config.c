/* config.c — configuration values from the process environment first and
 * a .env file in the working directory second (flags, handled by the front
 * ends, override both). The .env file never changes the environment. */
#include "util/util.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct tt_dotenv {
  size_t n;
  char **keys, **values;
};

static char *tt_trim(char *s) {
  while (isspace((unsigned char)*s)) s++;
  size_t n = strlen(s);
  while (n && isspace((unsigned char)s[n - 1])) s[--n] = '\0';
  return s;
}

/* Removes matching quotes; in double quotes, \n and \" are understood. */
static char *tt_unquote(char *v) {
  size_t n = strlen(v);
  if (n >= 2 && (v[0] == '"' || v[0] == '\'') && v[n - 1] == v[0]) {
    char q = v[0];
    v[n - 1] = '\0';
    v++;
    if (q == '"') {
      char *w = v;
      for (char *r = v; *r; r++) {
        if (*r == '\\' && r[1]) {
          r++;
          *w++ = *r == 'n' ? '\n' : *r;
        } else {
          *w++ = *r;
        }
      }
      *w = '\0';
    }
    return v;
  }
  char *hash = strstr(v, " #"); /* an unquoted value ends at a comment */
  if (hash) *hash = '\0';
  return tt_trim(v);
}

tt_dotenv *tt_dotenv_load(const char *path) {
  tt_dotenv *d = tt_xcalloc(1, sizeof *d);
  FILE *f = fopen(path, "r");
  if (!f) return d;
  char line[8192];
  while (fgets(line, sizeof line, f)) {
    char *s = tt_trim(line);
    if (!*s || *s == '#') continue;
    if (strncmp(s, "export ", 7) == 0) s = tt_trim(s + 7);
    char *eq = strchr(s, '=');
    if (!eq) continue;
    *eq = '\0';
    char *key = tt_trim(s), *value = tt_unquote(tt_trim(eq + 1));
    if (!*key) continue;
    d->keys = tt_xrealloc(d->keys, (d->n + 1) * sizeof(char *));
    d->values = tt_xrealloc(d->values, (d->n + 1) * sizeof(char *));
    d->keys[d->n] = tt_xstrdup(key);
    d->values[d->n] = tt_xstrdup(value);
    d->n++;
  }
  fclose(f);
  return d;
}

void tt_dotenv_free(tt_dotenv *d) {
  if (!d) return;
  for (size_t i = 0; i < d->n; i++) {
    free(d->keys[i]);
    free(d->values[i]);
  }
  free(d->keys);
  free(d->values);
  free(d);
}

const char *tt_config_get(const tt_dotenv *d, const char *name) {
  const char *v = getenv(name);
  if (v && *v) return v;
  if (!d) return NULL;
  for (size_t i = d->n; i > 0; i--) /* the last assignment wins */
    if (strcmp(d->keys[i - 1], name) == 0) return *d->values[i - 1] ? d->values[i - 1] : NULL;
  return NULL;
}
