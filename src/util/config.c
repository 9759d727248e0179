/* config.c — configuration values from the process environment first and
 * a .env file in the working directory second (flags, handled by the front
 * ends, override both). The .env file never changes the environment. It is
 * read by the rules dotenv tools share: KEY=value, an optional "export ",
 * "double quotes" with \n escapes (and spanning lines), 'single quotes'
 * taken as they are, and # comments on their own line or after a blank. */
#include "util/util.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct tt_dotenv {
  size_t n;
  char **keys, **values;
  size_t nconfig; /* the first nconfig came from the config file */
};

static bool tt_blank(char c) { return c == ' ' || c == '\t' || c == '\r'; }

static const char *tt_skip_blanks(const char *p) {
  while (tt_blank(*p)) p++;
  return p;
}

static const char *tt_line_end(const char *p) {
  while (*p && *p != '\n') p++;
  return p;
}

/* What a backslash escape in double quotes stands for; 0 when it is not an
 * escape (the backslash is then kept, as dotenv does). */
static char tt_dq_escape(char c) {
  switch (c) {
  case 'n': return '\n';
  case 't': return '\t';
  case 'r': return '\r';
  case '\\': return '\\';
  case '"': return '"';
  case '\'': return '\'';
  case '$': return '$';
  default: return 0;
  }
}

/* A quoted value starting at the opening quote p; it may span lines. In
 * double quotes \n, \t, \r, \\, \" are understood; single quotes take every
 * character as it is. *pp ends after the closing quote; false (and nothing
 * consumed) when the quote is never closed. */
static bool tt_quoted_value(const char **pp, tt_buf *out) {
  const char *p = *pp;
  char q = *p++;
  for (; *p && *p != q; p++) {
    char e = q == '"' && *p == '\\' ? tt_dq_escape(p[1]) : 0;
    if (e) {
      tt_buf_putc(out, e);
      p++;
    } else {
      tt_buf_putc(out, *p);
    }
  }
  if (*p != q) {
    tt_buf_reset(out);
    return false;
  }
  *pp = p + 1;
  return true;
}

/* An unquoted value: the rest of the line, up to a # that follows a blank
 * (KEY=a#b keeps its #), without trailing blanks. */
static void tt_plain_value(const char **pp, tt_buf *out) {
  const char *p = *pp, *end = tt_line_end(p), *stop = end;
  for (const char *c = p; c < end; c++)
    if (*c == '#' && (c == p || tt_blank(c[-1]))) {
      stop = c;
      break;
    }
  while (stop > p && tt_blank(stop[-1])) stop--;
  tt_buf_append(out, p, (size_t)(stop - p));
  *pp = end;
}

static void tt_dotenv_add(tt_dotenv *d, const char *key, size_t klen, tt_buf *value) {
  d->keys = tt_xrealloc(d->keys, (d->n + 1) * sizeof(char *));
  d->values = tt_xrealloc(d->values, (d->n + 1) * sizeof(char *));
  d->keys[d->n] = tt_xstrndup(key, klen);
  d->values[d->n] = value->len ? tt_buf_detach(value) : tt_xstrdup("");
  d->n++;
}

/* One line (or a quoted value's several): KEY=VALUE with an optional
 * "export " before it; returns where the next line starts. Lines that are
 * not assignments are skipped. */
static const char *tt_dotenv_line(tt_dotenv *d, const char *p) {
  p = tt_skip_blanks(p);
  if (strncmp(p, "export", 6) == 0 && tt_blank(p[6])) p = tt_skip_blanks(p + 6);
  const char *key = p;
  while (*p && *p != '=' && *p != '\n' && !tt_blank(*p) && *p != '#') p++;
  size_t klen = (size_t)(p - key);
  p = tt_skip_blanks(p);
  if (!klen || *p != '=') return tt_line_end(p);
  p = tt_skip_blanks(p + 1);
  tt_buf value = TT_BUF_INIT;
  if ((*p == '"' || *p == '\'') && tt_quoted_value(&p, &value)) {
    p = tt_line_end(p); /* after the quote: blanks or a comment */
  } else {
    tt_plain_value(&p, &value);
  }
  tt_dotenv_add(d, key, klen, &value);
  tt_buf_free(&value);
  return p;
}

tt_dotenv *tt_dotenv_parse(const char *text) {
  tt_dotenv *d = tt_xcalloc(1, sizeof *d);
  const char *p = text;
  while (*p) {
    p = tt_dotenv_line(d, p);
    if (*p == '\n') p++;
  }
  return d;
}

#define TT_DOTENV_MAX (1u << 20)

tt_dotenv *tt_dotenv_load(const char *path) {
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return tt_xcalloc(1, sizeof(tt_dotenv));
  size_t len;
  bool too_long;
  char *text = tt_read_stream(fd, TT_DOTENV_MAX, &len, &too_long);
  close(fd);
  tt_dotenv *d = tt_dotenv_parse(text ? text : "");
  free(text);
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

char *tt_config_path(void) {
  const char *own = getenv("TABLETALK_CONFIG");
  if (own && *own) return tt_xstrdup(own);
  const char *xdg = getenv("XDG_CONFIG_HOME");
  if (xdg && xdg[0] == '/') return tt_xasprintf("%s/tabletalk/config", xdg);
  const char *home = getenv("HOME");
  if (!home || !*home) home = "/tmp";
  return tt_xasprintf("%s/.config/tabletalk/config", home);
}

tt_dotenv *tt_config_load(const char *dotenv_path) {
  char *path = tt_config_path();
  tt_dotenv *d = tt_dotenv_load(path);
  free(path);
  d->nconfig = d->n;
  /* the .env file's assignments come after the config file's, so they win
   * (tt_config_get takes the last one) */
  tt_dotenv *e = tt_dotenv_load(dotenv_path);
  for (size_t i = 0; i < e->n; i++) {
    tt_buf v = TT_BUF_INIT;
    tt_buf_puts(&v, e->values[i]);
    tt_dotenv_add(d, e->keys[i], strlen(e->keys[i]), &v);
    tt_buf_free(&v);
  }
  tt_dotenv_free(e);
  return d;
}

const char *tt_config_origin(const tt_dotenv *d, const char *name) {
  const char *v = getenv(name);
  if (v && *v) return "the environment";
  if (d)
    for (size_t i = d->n; i > 0; i--)
      if (strcmp(d->keys[i - 1], name) == 0) return i - 1 < d->nconfig ? "the config file" : "./.env";
  return "nowhere";
}
