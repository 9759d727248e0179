/* retrieve.c — choosing which schema cards a question needs when the whole
 * schema does not fit the prompt budget: a word-overlap score over table
 * names, column names and sample values, then foreign-key neighbours, so
 * that joins stay possible. Also the one-line-per-table index. */
#include "schema/schema.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define TT_MAX_WORDS 64

typedef struct tt_words {
  size_t n;
  char w[TT_MAX_WORDS][32];
} tt_words;

/* Lower-case word stems: letters and digits, plural s dropped, camelCase and
 * snake_case split ("InvoiceLine" -> invoice, line). */
static void tt_words_add(tt_words *ws, const char *s, size_t n) {
  size_t i = 0;
  while (i < n && ws->n < TT_MAX_WORDS) {
    while (i < n && !isalnum((unsigned char)s[i])) i++;
    size_t start = i;
    while (i < n && isalnum((unsigned char)s[i]) &&
           !(i > start && isupper((unsigned char)s[i]) && islower((unsigned char)s[i - 1])))
      i++;
    size_t len = i - start;
    if (len < 2) continue;
    if (len >= sizeof ws->w[0]) len = sizeof ws->w[0] - 1;
    char *w = ws->w[ws->n];
    for (size_t k = 0; k < len; k++) w[k] = (char)tolower((unsigned char)s[start + k]);
    w[len] = '\0';
    if (len > 3 && w[len - 1] == 's' && w[len - 2] != 's') w[len - 1] = '\0';
    static const char *const stop[] = {"the", "of", "in", "and", "or", "for", "what", "which",
                                       "how", "many", "much", "is", "are", "by", "to", "me",
                                       "show", "list", "all", "with", "per", "each", "from", "id"};
    bool skip = false;
    for (size_t k = 0; k < sizeof stop / sizeof stop[0] && !skip; k++) skip = strcmp(w, stop[k]) == 0;
    if (!skip) ws->n++;
  }
}

static bool tt_words_has(const tt_words *ws, const char *w) {
  for (size_t i = 0; i < ws->n; i++)
    if (strcmp(ws->w[i], w) == 0) return true;
  return false;
}

/* How many of the question's words appear in s. */
static double tt_overlap(const tt_words *q, const char *s, size_t n) {
  tt_words ws = {0};
  tt_words_add(&ws, s, n);
  double hits = 0;
  for (size_t i = 0; i < ws.n; i++)
    if (tt_words_has(q, ws.w[i])) hits++;
  return hits;
}

static double tt_table_score(const tt_words *q, const tt_table_info *t) {
  double score = 3 * tt_overlap(q, t->name, strlen(t->name));
  for (size_t c = 0; c < t->ncols; c++) score += tt_overlap(q, t->cols[c].name, strlen(t->cols[c].name));
  if (t->sample) {
    for (size_t i = 0; i < t->sample->nrows * t->sample->ncols; i++) {
      const tt_value *v = &t->sample->cells[i];
      if (v->type == TT_VAL_TEXT) score += 0.5 * tt_overlap(q, v->u.s, v->len < 200 ? v->len : 200);
    }
  }
  return score;
}

static bool tt_linked(const tt_table_info *a, const tt_table_info *b) {
  for (size_t k = 0; k < a->nfks; k++)
    if (strcasecmp(a->fks[k].table, b->name) == 0) return true;
  for (size_t k = 0; k < b->nfks; k++)
    if (strcasecmp(b->fks[k].table, a->name) == 0) return true;
  return false;
}

size_t tt_schema_select(const tt_schema *s, const char *question, size_t budget,
                        const tt_card **out) {
  size_t n = tt_schema_count(s);
  tt_words q = {0};
  tt_words_add(&q, question, strlen(question));
  double *score = tt_xcalloc(n ? n : 1, sizeof(double));
  bool *take = tt_xcalloc(n ? n : 1, sizeof(bool));
  for (size_t i = 0; i < n; i++) score[i] = tt_table_score(&q, tt_schema_card(s, i)->table);
  size_t used = 0;
  /* best-scoring tables first, while they fit */
  for (;;) {
    size_t best = n;
    for (size_t i = 0; i < n; i++)
      if (!take[i] && score[i] > 0 && (best == n || score[i] > score[best])) best = i;
    if (best == n) break;
    size_t cost = tt_schema_card(s, best)->tokens;
    if (used + cost > budget && used > 0) {
      score[best] = 0; /* does not fit; try smaller ones */
      continue;
    }
    take[best] = true;
    used += cost;
  }
  /* then the tables that join them together */
  for (size_t i = 0; i < n; i++) {
    if (take[i]) continue;
    for (size_t k = 0; k < n; k++) {
      if (!take[k] || !tt_linked(tt_schema_card(s, i)->table, tt_schema_card(s, k)->table)) continue;
      size_t cost = tt_schema_card(s, i)->tokens;
      if (used + cost <= budget) {
        take[i] = true;
        used += cost;
      }
      break;
    }
  }
  /* nothing matched: as many tables as fit, in schema order */
  if (used == 0) {
    for (size_t i = 0; i < n; i++) {
      size_t cost = tt_schema_card(s, i)->tokens;
      if (used + cost > budget && used > 0) break;
      take[i] = true;
      used += cost;
    }
  }
  size_t count = 0;
  for (size_t i = 0; i < n; i++)
    if (take[i]) out[count++] = tt_schema_card(s, i);
  free(score);
  free(take);
  return count;
}

void tt_schema_render_index(const tt_schema *s, tt_buf *out) {
  for (size_t i = 0; i < tt_schema_count(s); i++) {
    const tt_table_info *t = tt_schema_card(s, i)->table;
    tt_escape_terminal(out, t->name, strlen(t->name), NULL);
    tt_buf_putc(out, '(');
    for (size_t c = 0; c < t->ncols; c++) {
      if (c) tt_buf_puts(out, ", ");
      tt_escape_terminal(out, t->cols[c].name, strlen(t->cols[c].name), NULL);
    }
    tt_buf_puts(out, ")\n");
  }
}
