/* names.c — names of tables and columns that are not valid UTF-8 (a
 * SQLite file may hold any bytes): shown with each invalid byte as \xHH,
 * and learnt once per connection so that SQL naming them so, in quotes
 * ("caf\xE9"), is given their bytes before SQLite sees it. */
#define _GNU_SOURCE /* memmem */
#include "db/sqlite/sqlite.h"

#include <stdlib.h>
#include <string.h>

void tt_db_names_forget(tt_sqlite *s) {
  tt_strv_free(s->names, s->nnames * 2);
  s->names = NULL;
  s->nnames = 0;
  s->names_learned = false;
}

/* Remembers a name that is not UTF-8, for tt_db_raw_names. */
static void tt_note_raw_name(tt_sqlite *s, const char *shown, const char *raw) {
  for (size_t i = 0; i < s->nnames; i++)
    if (strcmp(s->names[2 * i], shown) == 0) return;
  s->names = tt_xrealloc(s->names, (s->nnames + 1) * 2 * sizeof *s->names);
  s->names[2 * s->nnames] = tt_xstrdup(shown);
  s->names[2 * s->nnames + 1] = tt_xstrdup(raw);
  s->nnames++;
}

void tt_db_name_forms(tt_sqlite *s, tt_arena *a, const char *name, const char **shown,
                      const char **raw) {
  *shown = tt_db_shown_name(a, name);
  *raw = strcmp(*shown, name) == 0 ? NULL : tt_arena_strdup(a, name);
  if (*raw) tt_note_raw_name(s, *shown, *raw);
}

/* Learns the names of tables, views and their columns that are not
 * UTF-8, once per connection, when SQL first seems to name one. */
static void tt_db_learn_raw_names(tt_sqlite *s) {
  s->names_learned = true;
  tt_arena *a = tt_arena_new();
  sqlite3_stmt *list = NULL, *cols = NULL;
  s->internal = true; /* tabletalk's own reads of the schema */
  s->deadline_ms = tt_now_ms() + s->db->opts.timeout_s * 1000.0;
  if (sqlite3_prepare_v2(s->h, "SELECT name FROM sqlite_schema WHERE type IN ('table','view')",
                         -1, &list, NULL) == SQLITE_OK &&
      sqlite3_prepare_v2(s->h, "SELECT name FROM pragma_table_xinfo(?1)", -1, &cols, NULL) ==
          SQLITE_OK) {
    while (sqlite3_step(list) == SQLITE_ROW) {
      const char *t = (const char *)sqlite3_column_text(list, 0);
      if (!t) continue;
      const char *shown, *raw;
      tt_db_name_forms(s, a, t, &shown, &raw);
      sqlite3_bind_text(cols, 1, t, -1, SQLITE_TRANSIENT);
      while (sqlite3_step(cols) == SQLITE_ROW) {
        const char *c = (const char *)sqlite3_column_text(cols, 0);
        if (c) tt_db_name_forms(s, a, c, &shown, &raw);
      }
      sqlite3_reset(cols);
    }
  }
  sqlite3_finalize(list);
  sqlite3_finalize(cols);
  s->internal = false;
  tt_arena_free(a);
}

char *tt_db_raw_names(tt_sqlite *s, const char *sql, size_t len, size_t *out_len) {
  if (!memmem(sql, len, "\\x", 2)) return NULL; /* no name shown escaped */
  if (!s->names_learned) tt_db_learn_raw_names(s);
  tt_buf out = TT_BUF_INIT;
  bool changed = false;
  size_t from = 0;
  for (size_t i = 0; i < len; i++) {
    char open = sql[i], close = open == '[' ? ']' : open;
    if (open != '"' && open != '`' && open != '[') continue;
    for (size_t k = 0; k < s->nnames; k++) {
      const char *shown = s->names[2 * k];
      size_t n = strlen(shown);
      if (i + n + 2 > len || memcmp(sql + i + 1, shown, n) != 0 || sql[i + 1 + n] != close) continue;
      tt_buf_append(&out, sql + from, i + 1 - from);
      tt_buf_puts(&out, s->names[2 * k + 1]);
      from = i + 1 + n;
      i = from;
      changed = true;
      break;
    }
  }
  if (!changed) {
    tt_buf_free(&out);
    return NULL;
  }
  tt_buf_append(&out, sql + from, len - from);
  *out_len = out.len;
  return tt_buf_detach(&out);
}
