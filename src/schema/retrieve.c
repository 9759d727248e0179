/* retrieve.c — choosing which schema cards a question needs when the whole
 * schema does not fit the prompt budget (the ranking is rank.c's; this
 * puts its picks in schema order), and the one-line-per-table index. */
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
  tt_schema_ranking *r = tt_schema_rank(s, question, budget);
  size_t count = tt_schema_select_ranked(s, r, out);
  tt_schema_ranking_free(r);
  return count;
}


