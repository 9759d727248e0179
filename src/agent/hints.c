/* hints.c — turning "no such table/column" into a suggestion of the
 * closest names that do exist, so the model can repair its SQL in one step
 * ("no such column: Trak.Name — did you mean Track.Name?"). */
#include "agent/agent_internal.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* Small enough to be a typo of name (or a case difference). */
static size_t tt_typo_limit(const char *name) {
  size_t n = strlen(name);
  return n <= 4 ? 1 : n <= 8 ? 2 : 3;
}

static const tt_table_info *tt_closest_table(const tt_catalog *cat, const char *name) {
  const tt_table_info *best = NULL;
  size_t best_d = tt_typo_limit(name) + 1;
  for (size_t i = 0; i < cat->ntables; i++) {
    size_t d = tt_edit_distance(name, cat->tables[i].name, best_d - 1);
    if (d < best_d) {
      best_d = d;
      best = &cat->tables[i];
    }
  }
  return best;
}

static const char *tt_closest_column(const tt_table_info *t, const char *name, size_t *dist) {
  const char *best = NULL;
  size_t best_d = tt_typo_limit(name) + 1;
  for (size_t c = 0; c < t->ncols; c++) {
    size_t d = tt_edit_distance(name, t->cols[c].name, best_d - 1);
    if (d < best_d) {
      best_d = d;
      best = t->cols[c].name;
    }
  }
  *dist = best_d;
  return best;
}

/* Unknown column without a known table: the closest column anywhere,
 * with the tables that have it. */
static void tt_hint_any_column(tt_buf *b, const tt_catalog *cat, const char *qual, const char *col) {
  const char *best = NULL;
  size_t best_d = tt_typo_limit(col) + 1;
  for (size_t i = 0; i < cat->ntables; i++) {
    size_t d;
    const char *c = tt_closest_column(&cat->tables[i], col, &d);
    if (c && d < best_d) {
      best = c;
      best_d = d;
    }
  }
  if (!best) return;
  tt_buf_printf(b, " — did you mean %s%s%s? (", qual ? qual : "", qual ? "." : "", best);
  int listed = 0;
  for (size_t i = 0; i < cat->ntables && listed < 4; i++) {
    const tt_table_info *t = &cat->tables[i];
    for (size_t c = 0; c < t->ncols; c++)
      if (strcasecmp(t->cols[c].name, best) == 0) {
        tt_buf_printf(b, "%s%s.%s", listed++ ? ", " : "", t->name, t->cols[c].name);
        break;
      }
  }
  tt_buf_puts(b, ")");
}

static void tt_hint_column(tt_buf *b, const tt_catalog *cat, const char *ref) {
  const char *dot = strrchr(ref, '.');
  if (!dot) {
    tt_hint_any_column(b, cat, NULL, ref);
    return;
  }
  char *qual = tt_xstrndup(ref, (size_t)(dot - ref));
  const char *col = dot + 1;
  const tt_table_info *t = tt_catalog_find(cat, qual);
  if (!t) t = tt_closest_table(cat, qual);
  size_t d;
  const char *c = t ? tt_closest_column(t, col, &d) : NULL;
  if (c) tt_buf_printf(b, " — did you mean %s.%s?", t->name, c);
  else tt_hint_any_column(b, cat, qual, col); /* qual is probably an alias */
  free(qual);
}

static void tt_hint_ambiguous(tt_buf *b, const tt_catalog *cat, const char *col) {
  int listed = 0;
  for (size_t i = 0; i < cat->ntables; i++)
    for (size_t c = 0; c < cat->tables[i].ncols; c++)
      if (strcasecmp(cat->tables[i].cols[c].name, col) == 0) {
        tt_buf_printf(b, "%s%s.%s", listed++ ? ", " : " — it is in ", cat->tables[i].name,
                      cat->tables[i].cols[c].name);
        break;
      }
  if (listed) tt_buf_puts(b, "; qualify it with its table or alias");
}

char *tt_hint_for_error(const tt_catalog *cat, const char *message) {
  if (!cat || !message) return NULL;
  tt_buf b = TT_BUF_INIT;
  const char *p;
  if ((p = strstr(message, "no such table: "))) {
    const char *name = p + 15;
    const char *dot = strchr(name, '.');
    if (dot) name = dot + 1; /* main.Tracks */
    const tt_table_info *t = tt_closest_table(cat, name);
    if (t) tt_buf_printf(&b, " — did you mean %s?", t->name);
  } else if ((p = strstr(message, "no such column: "))) {
    tt_hint_column(&b, cat, p + 16);
  } else if ((p = strstr(message, "ambiguous column name: "))) {
    tt_hint_ambiguous(&b, cat, p + 23);
  }
  if (!b.len) {
    tt_buf_free(&b);
    return NULL;
  }
  return tt_buf_detach(&b);
}
