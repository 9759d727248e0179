/* comments.c — descriptions a database carries in its own schema text:
 * SQL comments in a CREATE TABLE statement ("status TEXT, -- where it
 * stands") describe the column defined on their line, and a comment on the
 * line that opens the statement describes the table. Read from
 * sqlite_schema.sql as written; nothing is guessed. */
#include "db/sqlite/sqlite.h"

#include <ctype.h>
#include <string.h>
#include <strings.h>

#define TT_DESCRIPTION_BYTES 200 /* longer comments are cut */

/* The first identifier of a column definition, without its quotes. */
static size_t tt_first_ident(const char *s, const char *end, const char **start) {
  while (s < end && (isspace((unsigned char)*s) || *s == ',' || *s == '(')) s++;
  char close = *s == '"' ? '"' : *s == '`' ? '`' : *s == '[' ? ']' : 0;
  if (close) s++;
  *start = s;
  const char *p = s;
  if (close)
    while (p < end && *p != close) p++;
  else
    while (p < end && (isalnum((unsigned char)*p) || *p == '_' || (unsigned char)*p >= 0x80)) p++;
  return (size_t)(p - s);
}

/* The comment's text, trimmed and cut; NULL when empty. */
static const char *tt_comment_text(tt_arena *a, const char *s, const char *end) {
  while (s < end && (*s == '-' || isspace((unsigned char)*s))) s++;
  while (end > s && isspace((unsigned char)end[-1])) end--;
  if (end == s) return NULL;
  size_t n = (size_t)(end - s);
  if (n > TT_DESCRIPTION_BYTES) n = tt_utf8_prefix(s, n, TT_DESCRIPTION_BYTES / 2);
  char *t = tt_arena_memdup(a, s, n);
  return t;
}

/* Finds "--" outside quotes on the line [s, end); NULL when none. */
static const char *tt_line_comment(const char *s, const char *end) {
  char quote = 0;
  for (const char *p = s; p + 1 < end; p++) {
    if (quote) {
      if (*p == quote) quote = 0;
    } else if (*p == '\'' || *p == '"' || *p == '`') {
      quote = *p;
    } else if (*p == '[') {
      quote = ']';
    } else if (p[0] == '-' && p[1] == '-') {
      return p;
    }
  }
  return NULL;
}

/* The column whose definition starts on [line, end), or NULL. */
static tt_column_info *tt_column_on_line(tt_table_info *t, const char *line, const char *end) {
  const char *name;
  size_t n = tt_first_ident(line, end, &name);
  for (size_t c = 0; c < t->ncols && n; c++)
    if (strlen(t->cols[c].name) == n && strncasecmp(t->cols[c].name, name, n) == 0)
      return &t->cols[c];
  return NULL;
}

void tt_catalog_read_comments(tt_arena *a, tt_table_info *t, const char *sql) {
  if (!sql) return;
  bool first = true;
  tt_column_info *last = NULL; /* the column defined on the latest line */
  for (const char *line = sql; *line;) {
    const char *end = strchr(line, '\n');
    if (!end) end = line + strlen(line);
    const char *dash = tt_line_comment(line, end);
    tt_column_info *col = first ? NULL : tt_column_on_line(t, line, dash ? dash : end);
    if (dash) {
      const char *text = tt_comment_text(a, dash, end);
      if (first) {
        if (!t->description) t->description = text;
      } else {
        /* on a line of its own, a comment describes the column before it */
        tt_column_info *target = col ? col : last;
        if (target && !target->description) target->description = text;
      }
    }
    if (col) last = col;
    first = false;
    line = *end ? end + 1 : end;
  }
}
