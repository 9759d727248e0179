/* schema_bm25.c — the baseline the schema benchmark measures retrieval
 * against: plain BM25 (k1 1.2, b 0.75) over each table's name, its column
 * names and the values the value index holds for it, with no stemming,
 * abbreviations, synonyms, joins or value links; the tables are taken in
 * score order while their cards (the same cards and costs tabletalk's own
 * ranking spends) fit the card budget. */
#include "eval/eval.h"

#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "schema/schema.h"

#define TT_BM25_K1 1.2
#define TT_BM25_B 0.75
#define TT_BM25_WORD_MAX 32

typedef struct tt_bm25_doc {
  char **words; /* sorted, repeated as often as they occur */
  size_t n, cap;
} tt_bm25_doc;

struct tt_bench_bm25 {
  tt_arena *arena;
  tt_bm25_doc *docs;
  size_t ndocs;
  double avg_len;
};

typedef void (*tt_bm25_word_fn)(void *ud, const char *word);

/* Runs of letters or digits, split where a lower-case letter meets an
 * upper-case one ("InvoiceLine"), lower-cased. */
static void tt_bm25_split(const char *s, tt_bm25_word_fn fn, void *ud) {
  size_t i = 0, n = strlen(s);
  while (i < n) {
    while (i < n && !isalnum((unsigned char)s[i])) i++;
    size_t start = i;
    while (i < n && isalnum((unsigned char)s[i])) {
      if (i > start && isupper((unsigned char)s[i]) && islower((unsigned char)s[i - 1])) break;
      i++;
    }
    size_t len = i - start;
    if (!len) continue;
    char w[TT_BM25_WORD_MAX];
    if (len >= sizeof w) len = sizeof w - 1;
    for (size_t k = 0; k < len; k++) w[k] = (char)tolower((unsigned char)s[start + k]);
    w[len] = '\0';
    fn(ud, w);
  }
}

typedef struct tt_bm25_sink {
  tt_bench_bm25 *b;
  tt_bm25_doc *d;
} tt_bm25_sink;

static void tt_bm25_doc_word(void *ud, const char *w) {
  tt_bm25_sink *k = ud;
  tt_bm25_doc *d = k->d;
  if (d->n == d->cap) {
    d->cap = d->cap ? 2 * d->cap : 16;
    d->words = tt_xrealloc(d->words, d->cap * sizeof *d->words);
  }
  d->words[d->n++] = tt_arena_strdup(k->b->arena, w);
}

static int tt_bm25_cmp(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

tt_bench_bm25 *tt_bench_bm25_new(const tt_schema *s) {
  tt_bench_bm25 *b = tt_xcalloc(1, sizeof *b);
  b->arena = tt_arena_new();
  b->ndocs = tt_schema_count(s);
  b->docs = tt_xcalloc(b->ndocs ? b->ndocs : 1, sizeof *b->docs);
  for (size_t i = 0; i < b->ndocs; i++) {
    const tt_table_info *t = tt_schema_card(s, i)->table;
    tt_bm25_sink k = {.b = b, .d = &b->docs[i]};
    tt_bm25_split(t->name, tt_bm25_doc_word, &k);
    for (size_t c = 0; c < t->ncols; c++) tt_bm25_split(t->cols[c].name, tt_bm25_doc_word, &k);
  }
  const tt_values *v = tt_schema_values(s);
  const char *table, *column, *value;
  for (size_t e = 0; tt_values_entry(v, e, &table, &column, &value); e++) {
    const tt_card *c = tt_schema_find(s, table);
    if (!c) continue;
    tt_bm25_sink k = {.b = b, .d = &b->docs[c - tt_schema_card(s, 0)]};
    tt_bm25_split(value, tt_bm25_doc_word, &k);
  }
  double total = 0;
  for (size_t i = 0; i < b->ndocs; i++) {
    tt_bm25_doc *d = &b->docs[i];
    if (d->n) qsort(d->words, d->n, sizeof *d->words, tt_bm25_cmp);
    total += (double)d->n;
  }
  b->avg_len = b->ndocs && total > 0 ? total / (double)b->ndocs : 1;
  return b;
}

void tt_bench_bm25_free(tt_bench_bm25 *b) {
  if (!b) return;
  for (size_t i = 0; i < b->ndocs; i++) free(b->docs[i].words);
  free(b->docs);
  tt_arena_free(b->arena);
  free(b);
}

/* How often w occurs in d (its words are sorted). */
static size_t tt_bm25_tf(const tt_bm25_doc *d, const char *w) {
  size_t lo = 0, hi = d->n;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (strcmp(d->words[mid], w) < 0) lo = mid + 1;
    else hi = mid;
  }
  size_t k = lo;
  while (k < d->n && strcmp(d->words[k], w) == 0) k++;
  return k - lo;
}

static const char *const tt_bm25_stop[] = {
    "a", "an", "the", "of", "in", "on", "at", "to", "for", "by", "with", "from", "and", "or",
    "is", "are", "was", "were", "be", "how", "many", "much", "what", "which", "who", "when",
    "where", "me", "all", "each", "per", "do", "does", "did", "has", "have", "that", "this",
    "their", "its", "it", "as", "than", "show", "list", "give"};

typedef struct tt_bm25_query {
  char w[64][TT_BM25_WORD_MAX];
  size_t n;
} tt_bm25_query;

static void tt_bm25_query_word(void *ud, const char *w) {
  tt_bm25_query *q = ud;
  for (size_t i = 0; i < sizeof tt_bm25_stop / sizeof *tt_bm25_stop; i++)
    if (strcmp(w, tt_bm25_stop[i]) == 0) return;
  for (size_t i = 0; i < q->n; i++)
    if (strcmp(q->w[i], w) == 0) return;
  if (q->n < sizeof q->w / sizeof q->w[0]) strcpy(q->w[q->n++], w);
}

size_t tt_bench_bm25_select(const tt_bench_bm25 *b, const tt_schema *s, const char *question,
                            size_t card_budget, const tt_card **out) {
  size_t n = b->ndocs;
  if (!n) return 0;
  tt_bm25_query q = {.n = 0};
  tt_bm25_split(question ? question : "", tt_bm25_query_word, &q);
  double *score = tt_xcalloc(n, sizeof *score);
  size_t *tf = tt_xcalloc(n, sizeof *tf);
  for (size_t t = 0; t < q.n; t++) {
    size_t df = 0;
    for (size_t i = 0; i < n; i++) df += (tf[i] = tt_bm25_tf(&b->docs[i], q.w[t])) > 0;
    if (!df) continue;
    double idf = log(1.0 + ((double)n - (double)df + 0.5) / ((double)df + 0.5));
    for (size_t i = 0; i < n; i++) {
      if (!tf[i]) continue;
      double norm = TT_BM25_K1 * (1 - TT_BM25_B + TT_BM25_B * (double)b->docs[i].n / b->avg_len);
      score[i] += idf * (double)tf[i] * (TT_BM25_K1 + 1) / ((double)tf[i] + norm);
    }
  }
  /* score order, ties in schema order; then the budget spent greedily */
  size_t *order = tt_xcalloc(n, sizeof *order);
  for (size_t i = 0; i < n; i++) order[i] = i;
  for (size_t i = 1; i < n; i++) {
    size_t v = order[i], j = i;
    while (j > 0 && score[order[j - 1]] < score[v]) {
      order[j] = order[j - 1];
      j--;
    }
    order[j] = v;
  }
  size_t used = 0, k = 0;
  for (size_t r = 0; r < n; r++) {
    const tt_card *c = tt_schema_card(s, order[r]);
    if (used + c->tokens > card_budget) continue;
    used += c->tokens;
    out[k++] = c;
  }
  free(order);
  free(score);
  free(tf);
  return k;
}
