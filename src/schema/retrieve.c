/* retrieve.c — choosing which schema cards a question needs when the whole
 * schema does not fit the prompt budget (the ranking is rank.c's; this
 * puts its picks in schema order), and the one-line-per-table list a
 * selector step shows the model. */
#include "schema/schema.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

size_t tt_schema_select_ranked(const tt_schema *s, const tt_schema_ranking *r, const tt_card **out) {
  size_t n = tt_schema_count(s), count = 0;
  for (size_t i = 0; i < n; i++) {
    const tt_card *c = tt_schema_card(s, i);
    for (size_t k = 0; k < tt_schema_ranking_count(r); k++)
      if (tt_schema_ranking_pick(r, k)->card == c) {
        out[count++] = c;
        break;
      }
  }
  return count;
}

size_t tt_schema_select(const tt_schema *s, const char *question, size_t budget,
                        const tt_card **out) {
  return tt_schema_select_named(s, question, budget, NULL, 0, out);
}

size_t tt_schema_select_named(const tt_schema *s, const char *question, size_t budget,
                              const char *const *named, size_t nnamed, const tt_card **out) {
  tt_schema_ranking *r = tt_schema_rank_named(s, question, budget, named, nnamed);
  size_t count = tt_schema_select_ranked(s, r, out);
  tt_schema_ranking_free(r);
  return count;
}



static const char *tt_line_fk(const tt_table_info *t, const char *col) {
  for (size_t k = 0; k < t->nfks; k++)
    if (strcmp(t->fks[k].from, col) == 0) return t->fks[k].table;
  return NULL;
}

static void tt_line_col(tt_buf *out, const tt_table_info *t, size_t c, size_t *shown) {
  tt_buf_puts(out, (*shown)++ ? ", " : " ");
  tt_escape_terminal(out, t->cols[c].name, strlen(t->cols[c].name), NULL);
  const char *to = tt_line_fk(t, t->cols[c].name);
  if (to) {
    tt_buf_puts(out, "->");
    tt_escape_terminal(out, to, strlen(to), NULL);
  }
}

/* "Name: col, col->Other, col (+3) -- description": the foreign keys (with
 * the table each points at), then other columns up to 6 in all, and how
 * many more there are; the primary key says nothing a name does not. */
void tt_schema_render_table_lines(const tt_schema *s, tt_buf *out) {
  for (size_t i = 0; i < tt_schema_count(s); i++) {
    const tt_table_info *t = tt_schema_card(s, i)->table;
    tt_escape_terminal(out, t->name, strlen(t->name), NULL);
    tt_buf_putc(out, ':');
    size_t shown = 0, left = 0;
    for (size_t c = 0; c < t->ncols; c++)
      if (tt_line_fk(t, t->cols[c].name)) tt_line_col(out, t, c, &shown);
    for (size_t c = 0; c < t->ncols; c++) {
      if (tt_line_fk(t, t->cols[c].name) || t->cols[c].pk) continue;
      if (shown < 6) tt_line_col(out, t, c, &shown);
      else left++;
    }
    if (left) tt_buf_printf(out, " (+%zu)", left);
    if (t->description && *t->description) {
      size_t n = strlen(t->description);
      tt_buf_puts(out, " -- ");
      tt_escape_terminal(out, t->description, n < 80 ? n : 80, NULL);
    }
    tt_buf_putc(out, '\n');
  }
}
