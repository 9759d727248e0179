/* rank.c — which tables a question needs, with a reason for each: first
 * the tables a selector step or the knowledge file names for it
 * (steer.h); then those holding values it names (the lexicon's and the
 * knowledge file's coded values too), when they earn it; then BM25 over
 * every table's name, its column names, its descriptions and its sample
 * values (names split on case and underscores, stemmed, ERP abbreviations
 * expanded, the lexicon's synonyms added to the question), so that rare
 * words weigh and generic ones (id, name, date, code) hardly count, each
 * joined to what is taken by its cheapest foreign-key path (with an
 * embedding score beside the words when the caller has vectors: bounded so
 * that it never outweighs them); the people a
 * "who" question asks for; then the rest in rank order. Nothing is
 * written anywhere: the index lives for one call. */
#include "schema/schema.h"
#include "schema/steer.h"

#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define TT_TERM_MAX 24
#define TT_RANK_K1 1.2
#define TT_RANK_B 0.5
#define TT_W_NAME 3.0   /* a word of the table's name */
#define TT_W_COLUMN 1.0 /* a word of a column's name */
#define TT_W_VALUE 1.0  /* a word of a sample value */
#define TT_W_DESC 0.7   /* a word of a table's or column's description */
#define TT_SEED_FRACTION 0.35 /* tables scoring this share of the best are joined up */
#define TT_PATH_HOPS 4
#define TT_FILL_FRACTION 0.25 /* extras scoring this share of the best come before the neighbours */
#define TT_VALUE_COMMON 0.0      /* a value word the question uses as an everyday word */
#define TT_VALUE_SCHEMA_WORD 0.5 /* a value word that also names tables or columns */
#define TT_NAME_COVER 1.0   /* up to twice the score when the question says the whole name */
#define TT_COVERED 0.3      /* a question word a chosen table already matched */
#define TT_NEAR_BONUS 2.5
#define TT_COPY_PRIOR 0.5   /* a derived copy of a table (orders_hist) the question does not ask for */
#define TT_DEGREE_PRIOR 0.15 /* per log of foreign keys to and from a table */   /* a matching table next to a chosen one, when filling */

/* ---- words -------------------------------------------------------------------------- */

/* ERP and database abbreviations, and what they stand for (one or more words). */
static const char *const tt_abbrev[][2] = {
    {"qty", "quantity"}, {"amt", "amount"}, {"cust", "customer"}, {"acct", "account"},
    {"txn", "transaction"}, {"trx", "transaction"}, {"dt", "date"}, {"cd", "code"},
    {"hdr", "header"}, {"mstr", "master"}, {"emp", "employee"}, {"dept", "department"},
    {"nm", "name"}, {"desc", "description"}, {"num", "number"}, {"nbr", "number"},
    {"no", "number"}, {"prc", "price"}, {"stat", "status"}, {"sts", "status"},
    {"whse", "warehouse"}, {"wh", "warehouse"}, {"stk", "stock"}, {"inv", "inventory"},
    {"vend", "vendor"}, {"vndr", "vendor"}, {"po", "purchase order"}, {"ln", "line"},
    {"uom", "unit of measure"}, {"gl", "general ledger"}, {"ar", "accounts receivable"},
    {"ap", "accounts payable"}, {"jrnl", "journal"}, {"dr", "debit"}, {"cr", "credit"},
    {"pymt", "payment"}, {"pmt", "payment"}, {"mthd", "method"}, {"ctr", "center"},
    {"ctry", "country"}, {"crdt", "credit"}, {"lmt", "limit"}, {"flg", "flag"},
    {"yr", "year"}, {"mo", "month"}, {"rcpt", "receipt"}, {"xfer", "transfer"},
    {"adj", "adjustment"}, {"mtl", "material"}, {"wo", "work order"}, {"qc", "quality control"},
    {"mach", "machine"}, {"oper", "operation"}, {"kb", "knowledge base"}, {"rx", "prescription"},
    {"addr", "address"}, {"tel", "telephone"}, {"org", "organization"}, {"mgr", "manager"},
    {"sku", "stock keeping unit"}, {"bal", "balance"}, {"cnt", "count"}, {"pct", "percent"},
    {"avg", "average"}, {"cat", "category"}, {"loc", "location"}, {"prod", "product"},
    {"ord", "order"}, {"ship", "shipment"}, {"sls", "sales"}, {"rev", "revenue"},
    {"hosp", "hospital"}, {"dob", "birth date"}, {"fk", ""}, {"pk", ""}, {"tbl", ""},
};

static const char *const tt_stop[] = {
    "the", "of", "in", "and", "or", "for", "what", "which", "who", "whose", "how", "many",
    "much", "is", "are", "was", "were", "be", "been", "by", "to", "me", "show", "list", "all",
    "with", "per", "each", "from", "a", "an", "on", "at", "this", "that", "these", "those",
    "did", "do", "does", "have", "has", "had", "their", "its", "there", "than", "more", "most",
    "less", "give", "find", "get", "any", "some", "still", "our", "my", "total", "number",
    "count", "average", "last", "first", "top", "over", "under", "into", "it", "as", "tell",
};

/* Lower-case stem: plurals and -ed/-ing endings dropped, a final e too, so
 * that "hired" and "hire_date", "courses" and "course" meet. */
static void tt_stem(char *w) {
  size_t n = strlen(w);
  if (n > 4 && strcmp(w + n - 3, "ies") == 0) {
    strcpy(w + n - 3, "y");
  } else if (n > 4 && strcmp(w + n - 4, "sses") == 0) {
    w[n - 2] = '\0';
  } else if (n > 3 && w[n - 1] == 's' && w[n - 2] != 's' && w[n - 2] != 'u' && w[n - 2] != 'i') {
    w[n - 1] = '\0';
  }
  n = strlen(w);
  if (n > 4 && strcmp(w + n - 2, "ed") == 0) w[n - 2] = '\0';
  else if (n > 5 && strcmp(w + n - 3, "ing") == 0) w[n - 3] = '\0';
  n = strlen(w);
  if (n > 3 && w[n - 1] == 'e') w[n - 1] = '\0';
}

void tt_schema_stem(char *w) { tt_stem(w); }

typedef void (*tt_word_fn)(void *ud, const char *word, const char *raw);

/* Calls fn for each word of s: runs of letters or digits, split where a
 * lower-case letter meets an upper-case one ("InvoiceLine") and before the
 * last capital of a capital run ("XMLFile"). raw is the word as written,
 * lower-cased; word is its stem. */
static void tt_split(const char *s, size_t n, tt_word_fn fn, void *ud) {
  size_t i = 0;
  while (i < n) {
    while (i < n && !isalnum((unsigned char)s[i])) i++;
    size_t start = i;
    while (i < n && isalnum((unsigned char)s[i])) {
      if (i > start) {
        unsigned char p = (unsigned char)s[i - 1], c = (unsigned char)s[i];
        if (isupper(c) && islower(p)) break;
        if (isupper(p) && isupper(c) && i + 1 < n && islower((unsigned char)s[i + 1]) && i - start >= 1)
          break;
        if (isdigit(c) != isdigit(p) && isalpha(p) && isalpha((unsigned char)s[start])) break;
      }
      i++;
    }
    size_t len = i - start;
    if (len == 0) continue;
    char raw[TT_TERM_MAX], w[TT_TERM_MAX];
    if (len >= TT_TERM_MAX) len = TT_TERM_MAX - 1;
    for (size_t k = 0; k < len; k++) raw[k] = (char)tolower((unsigned char)s[start + k]);
    raw[len] = '\0';
    strcpy(w, raw);
    tt_stem(w);
    fn(ud, w, raw);
  }
}

static const char *tt_lookup(const char *const (*table)[2], size_t n, const char *w) {
  /* the first letter compared before the call: every word of every table
   * of a schema is looked up here (1.4 M strcmp calls for 325 tables) */
  for (size_t i = 0; i < n; i++)
    if (table[i][0][0] == w[0] && strcmp(table[i][0], w) == 0) return table[i][1];
  return NULL;
}

/* ---- the index: one bag of weighted words per table -------------------------------- */

/* in the order a reason prefers them; a description (SQL comment or
 * knowledge file) last */
typedef enum { TT_FIELD_NAME, TT_FIELD_COLUMN, TT_FIELD_VALUE, TT_FIELD_DESC } tt_field;

typedef struct tt_term {
  char w[TT_TERM_MAX];
  char raw[TT_TERM_MAX]; /* as the schema wrote it, lower-cased (abbreviations are read from it) */
  tt_field field;
  int col;        /* column index, -1 for the table's name */
  size_t cell;    /* sample cell index for values */
} tt_term;

typedef struct tt_doc {
  tt_term *terms;
  size_t n, cap;
  double len;     /* weighted length */
} tt_doc;

typedef struct tt_doc_sink {
  tt_doc *d;
  const char *raw; /* the word as written, or NULL for an expansion */
  tt_field field;
  int col;
  size_t cell;
} tt_doc_sink;

/* A word of digits or a lone letter in a value ("204" of 'B204', "2024"
 * of a date) says nothing about a table: every table has some. */
static bool tt_value_noise(const char *w) {
  if (strlen(w) < 2) return true;
  for (; *w; w++)
    if (!isdigit((unsigned char)*w)) return false;
  return true;
}

static void tt_doc_put(tt_doc_sink *k, const char *w) {
  if (!*w || (k->field == TT_FIELD_VALUE && tt_value_noise(w))) return;
  tt_doc *d = k->d;
  if (d->n == d->cap) {
    d->cap = d->cap ? 2 * d->cap : 32;
    d->terms = tt_xrealloc(d->terms, d->cap * sizeof *d->terms);
  }
  tt_term *t = &d->terms[d->n++];
  snprintf(t->w, sizeof t->w, "%s", w);
  snprintf(t->raw, sizeof t->raw, "%s", k->raw ? k->raw : w);
  t->field = k->field;
  t->col = k->col;
  t->cell = k->cell;
  /* descriptions leave the length alone, so that describing one table
   * moves no other table's score */
  d->len += k->field == TT_FIELD_NAME ? TT_W_NAME : k->field == TT_FIELD_COLUMN ? TT_W_COLUMN
          : k->field == TT_FIELD_VALUE ? TT_W_VALUE : 0;
}

static void tt_put_stemmed(void *ud, const char *phrase);

/* A document word: the word, and what an abbreviation stands for. */
static void tt_doc_word(void *ud, const char *w, const char *raw) {
  tt_doc_sink *k = ud;
  const char *full = tt_lookup(tt_abbrev, sizeof tt_abbrev / sizeof tt_abbrev[0], raw);
  if (full) {
    if (*full) tt_put_stemmed(ud, full);
    return;
  }
  k->raw = raw;
  tt_doc_put(ud, w);
  k->raw = NULL;
}

static void tt_expansion_word(void *ud, const char *w, const char *raw) {
  (void)raw;
  tt_doc_put(ud, w);
}

static void tt_put_stemmed(void *ud, const char *phrase) {
  tt_split(phrase, strlen(phrase), tt_expansion_word, ud);
}

static bool tt_is_stop_word(const char *raw);

/* A word of a description: stop words say nothing. */
static void tt_desc_word(void *ud, const char *w, const char *raw) {
  if (tt_is_stop_word(raw) || strlen(raw) < 2) return;
  tt_doc_word(ud, w, raw);
}

static void tt_doc_build(tt_doc *d, const tt_table_info *t) {
  tt_doc_sink k = {.d = d, .field = TT_FIELD_NAME, .col = -1};
  tt_split(t->name, strlen(t->name), tt_doc_word, &k);
  k.field = TT_FIELD_COLUMN;
  for (size_t c = 0; c < t->ncols; c++) {
    k.col = (int)c;
    tt_split(t->cols[c].name, strlen(t->cols[c].name), tt_doc_word, &k);
  }
  k.field = TT_FIELD_DESC;
  k.col = -1;
  if (t->description) tt_split(t->description, strlen(t->description), tt_desc_word, &k);
  for (size_t c = 0; c < t->ncols; c++) {
    k.col = (int)c;
    if (t->cols[c].description)
      tt_split(t->cols[c].description, strlen(t->cols[c].description), tt_desc_word, &k);
  }
  k.field = TT_FIELD_VALUE;
  if (!t->sample) return;
  for (size_t i = 0; i < t->sample->nrows * t->sample->ncols; i++) {
    const tt_value *v = &t->sample->cells[i];
    if (v->type != TT_VAL_TEXT || v->len > 64) continue; /* long prose says little */
    k.col = (int)(i % t->sample->ncols);
    k.cell = i;
    tt_split(v->u.s, v->len, tt_doc_word, &k);
  }
}

/* ---- the question ------------------------------------------------------------------ */

#define TT_QUERY_MAX 64

typedef struct tt_query {
  size_t n;
  char w[TT_QUERY_MAX][TT_TERM_MAX];
  char raw[TT_QUERY_MAX][TT_TERM_MAX]; /* as the question wrote it */
  double weight[TT_QUERY_MAX];
  bool names_only[TT_QUERY_MAX]; /* a steer's word: it looks for names, not cell values */
} tt_query;

typedef struct tt_query_sink {
  tt_query *q;
  const char *raw;
  double weight;
  bool names_only;
} tt_query_sink;

static void tt_query_put(tt_query_sink *k, const char *w) {
  tt_query *q = k->q;
  if (!*w || q->n == TT_QUERY_MAX) return;
  for (size_t i = 0; i < q->n; i++)
    if (strcmp(q->w[i], w) == 0) return;
  snprintf(q->w[q->n], TT_TERM_MAX, "%s", w);
  snprintf(q->raw[q->n], TT_TERM_MAX, "%s", k->raw);
  q->names_only[q->n] = k->names_only;
  q->weight[q->n++] = k->weight;
}

static void tt_query_expansion(void *ud, const char *w, const char *raw) {
  (void)raw;
  tt_query_put(ud, w);
}

static void tt_query_word(void *ud, const char *w, const char *raw) {
  tt_query_sink *k = ud;
  for (size_t i = 0; i < sizeof tt_stop / sizeof tt_stop[0]; i++)
    if (strcmp(raw, tt_stop[i]) == 0) return;
  tt_query_sink own = {.q = k->q, .raw = raw, .weight = 1.0};
  const char *full = tt_lookup(tt_abbrev, sizeof tt_abbrev / sizeof tt_abbrev[0], raw);
  if (full) {
    tt_split(full, strlen(full), tt_query_expansion, &own);
  }
  tt_query_put(&own, w);
}

static bool tt_is_stop_word(const char *raw) {
  for (size_t i = 0; i < sizeof tt_stop / sizeof tt_stop[0]; i++)
    if (strcmp(raw, tt_stop[i]) == 0) return true;
  return false;
}

/* Words the steer adds (a synonym's schema words), a little below the
 * question's own: what the question says comes first. */
static void tt_query_steer_word(void *ud, const char *w, const char *raw) {
  tt_query_sink *k = ud;
  if (tt_is_stop_word(raw)) return;
  k->raw = raw;
  tt_query_put(k, w);
}

static void tt_query_add_steer(tt_query *q, const tt_steer *st) {
  for (size_t i = 0; i < st->nwords; i++) {
    /* a synonym's word in a cell ('Medicine' a faculty) is no sign of its table */
    tt_query_sink own = {.q = q, .raw = "", .weight = st->weights[i], .names_only = true};
    tt_split(st->words[i], strlen(st->words[i]), tt_query_steer_word, &own);
  }
}

typedef struct tt_qwords {
  tt_qword w[TT_QUERY_MAX];
  size_t n;
} tt_qwords;

static void tt_qwords_put(void *ud, const char *w, const char *raw) {
  tt_qwords *q = ud;
  if (q->n == TT_QUERY_MAX) return;
  snprintf(q->w[q->n].raw, sizeof q->w[q->n].raw, "%s", raw);
  snprintf(q->w[q->n].stem, sizeof q->w[q->n].stem, "%s", w);
  q->n++;
}

/* Acronyms of several words that would read as one word's consonants
 * ("ssn" is no "season", "mrn" no "merchant"). */
static const char *const tt_acronym[] = {
    "ssn", "mrn", "atm", "vin", "ein", "npi", "dob", "sla", "kpi", "iban", "eta", "etl", "api",
    "url", "uuid", "guid", "csv", "pdf", "upc", "ean", "isbn", "gtin", "mcc", "bic", "cvv", "pin",
    "tin", "crm", "erp", "sql", "nps", "roi", "ytd", "mtd", "fte", "pto", "icd", "cpt", "ndc",
};

static bool tt_is_acronym(const char *w) {
  for (size_t i = 0; i < sizeof tt_acronym / sizeof *tt_acronym; i++)
    if (strcmp(tt_acronym[i], w) == 0) return true;
  return false;
}

/* Whether a schema word (as written, not stemmed) is an abbreviation of a
 * question word made by dropping letters, as ERP names are made: the same
 * first letter and either a prefix of four letters or more ("prem"
 * premise; "state" is no prefix of "status") or no vowel after the first
 * letter, its letters in order within the word with at most one consonant
 * dropped between two of them ("mtr" meter, "rdg" reading, "clm" claim,
 * "prscrbr" prescriber, "acct" account; not "atm" for appointments or
 * "mrn" for merchant), and no known acronym ("ssn" is no "season"). */
static bool tt_abbreviates(const char *abbr, const char *word) {
  size_t a = strlen(abbr), w = strlen(word);
  if (a < 3 || a >= w || abbr[0] != word[0] || tt_is_acronym(abbr)) return false;
  if (a >= 4 && strncmp(abbr, word, a) == 0) return true;
  for (size_t i = 1; i < a; i++)
    if (!isalpha((unsigned char)abbr[i]) || strchr("aeiouy", abbr[i])) return false;
  size_t j = 1;
  for (size_t i = 1; i < a; i++) {
    size_t skipped = 0;
    while (j < w && word[j] != abbr[i]) {
      if (!strchr("aeiouy", word[j])) skipped++;
      j++;
    }
    if (j == w || skipped > 1) return false;
    j++;
  }
  return true;
}

/* Adds to the question the names' and columns' words that abbreviate one
 * of its words ("meter readings" finds MTR_RDG), a little below the word
 * itself: an abbreviation read this way is a guess. */
static void tt_query_abbreviations(tt_query *q, const tt_doc *docs, size_t n) {
  size_t words = q->n;
  for (size_t t = 0; t < words; t++) {
    if (q->weight[t] < 1.0 || strlen(q->raw[t]) < 4) continue; /* expansions and short words */
    for (size_t i = 0; i < n; i++)
      for (size_t k = 0; k < docs[i].n; k++) {
        const tt_term *term = &docs[i].terms[k];
        if (term->field > TT_FIELD_COLUMN || !tt_abbreviates(term->raw, q->raw[t])) continue;
        tt_query_sink own = {.q = q, .raw = q->raw[t], .weight = 0.9};
        tt_query_put(&own, term->w);
      }
  }
}

/* Words that make a derived copy of a table when added to its name
 * (orders_hist, CustomerSnapshot, PO_HDR_STG, tblHarvestAuditLog). */
static const char *const tt_copy_words[] = {
    "hist", "history", "historical", "snapshot", "snap", "audit", "aud", "log", "stg", "staging",
    "stage", "archive", "arch", "arc", "backup", "bak", "tmp", "temp", "old", "copy", "daily", "dly",
    "agg", "aggregate", "summary", "note", "xref", "cfg", "config", "load", "error", "err", "raw",
    "cache", "version", "ver", "shadow", "delta", "import", "export", "extract", "v2"};

static bool tt_is_copy_word(const char *stem) {
  for (size_t i = 0; i < sizeof tt_copy_words / sizeof *tt_copy_words; i++) {
    char w[TT_TERM_MAX];
    snprintf(w, sizeof w, "%s", tt_copy_words[i]);
    tt_stem(w);
    if (strcmp(w, stem) == 0) return true;
  }
  return false;
}

static bool tt_query_has(const tt_query *q, const char *w) {
  for (size_t t = 0; t < q->n; t++)
    if (strcmp(q->w[t], w) == 0) return true;
  return false;
}

/* Whether table i is a derived copy of another table of the schema: its
 * name is the other's name followed only by copy words, none of which the
 * question says ("snapshot" asked for is a snapshot wanted). */
static bool tt_is_unasked_copy(const tt_doc *docs, size_t n, size_t i, const tt_query *q) {
  const tt_doc *d = &docs[i];
  size_t ni = 0;
  while (ni < d->n && d->terms[ni].field == TT_FIELD_NAME) ni++;
  for (size_t j = 0; j < n; j++) {
    if (j == i) continue;
    size_t nj = 0;
    while (nj < docs[j].n && docs[j].terms[nj].field == TT_FIELD_NAME) nj++;
    if (nj == 0 || nj >= ni) continue;
    bool prefix = true;
    for (size_t k = 0; k < nj && prefix; k++) prefix = strcmp(d->terms[k].w, docs[j].terms[k].w) == 0;
    if (!prefix) continue;
    bool copy = true;
    for (size_t k = nj; k < ni && copy; k++)
      copy = tt_is_copy_word(d->terms[k].w) && !tt_query_has(q, d->terms[k].w);
    if (copy) return true;
  }
  return false;
}

/* ---- scoring -------------------------------------------------------------------------- */

struct tt_schema_ranking {
  size_t n;
  tt_schema_pick *picks;
  size_t *group; /* while ranking: picks of one group (a table and its join path) share a number */
};

typedef struct tt_match {
  double score;
  double best;        /* the strongest single contribution, for the reason */
  size_t qterm;
  const tt_term *term;
} tt_match;

static double tt_field_weight(tt_field f) {
  return f == TT_FIELD_NAME ? TT_W_NAME : f == TT_FIELD_COLUMN ? TT_W_COLUMN : f == TT_FIELD_VALUE ? TT_W_VALUE : TT_W_DESC;
}

/* Whether a word (stemmed) names a table or a column somewhere: then the
 * question says it for the schema, not as a value. */
static bool tt_is_schema_word(const tt_doc *docs, size_t n, const char *w) {
  for (size_t i = 0; i < n; i++)
    for (size_t k = 0; k < docs[i].n; k++)
      if (docs[i].terms[k].field <= TT_FIELD_COLUMN && strcmp(docs[i].terms[k].w, w) == 0) return true;
  return false;
}

/* BM25 with field weights (BM25F's simple form): a term's frequency in a
 * table is the weighted count of its occurrences in name, columns, values. */
static void tt_score(const tt_schema *s, const tt_doc *docs, const tt_query *q, tt_match *m, double *contrib) {
  size_t n = tt_schema_count(s);
  double avg = 0;
  for (size_t i = 0; i < n; i++) avg += docs[i].len;
  avg = n ? avg / (double)n : 1;
  if (avg <= 0) avg = 1;
  double *tf = tt_xcalloc(n ? n : 1, sizeof *tf);
  const tt_term **where = tt_xcalloc(n ? n : 1, sizeof *where);
  for (size_t t = 0; t < q->n; t++) {
    /* an everyday word or a word of the schema's names found in a cell
     * ('OPEN', 'Head Office', 'REVENUE') says little about that table */
    double in_value = tt_values_common_word(q->raw[t]) ? TT_VALUE_COMMON
                      : tt_is_schema_word(docs, n, q->w[t]) ? TT_VALUE_SCHEMA_WORD
                                                            : 1.0;
    size_t df = 0;
    for (size_t i = 0; i < n; i++) {
      tf[i] = 0;
      where[i] = NULL;
      for (size_t k = 0; k < docs[i].n; k++) {
        const tt_term *term = &docs[i].terms[k];
        if (strcmp(term->w, q->w[t]) != 0) continue;
        if (q->names_only[t] && term->field == TT_FIELD_VALUE) continue;
        tf[i] += tt_field_weight(term->field) * (term->field == TT_FIELD_VALUE ? in_value : 1.0);
        /* the reason names the strongest place: name, then column, then value */
        if (!where[i] || term->field < where[i]->field) where[i] = term;
      }
      if (tf[i] > 0) df++;
    }
    if (!df) continue;
    double idf = log(1.0 + ((double)n - (double)df + 0.5) / ((double)df + 0.5));
    for (size_t i = 0; i < n; i++) {
      if (tf[i] <= 0) continue;
      double norm = TT_RANK_K1 * (1 - TT_RANK_B + TT_RANK_B * docs[i].len / avg);
      double part = q->weight[t] * idf * tf[i] * (TT_RANK_K1 + 1) / (tf[i] + norm);
      m[i].score += part;
      contrib[i * TT_QUERY_MAX + t] = part;
      if (part > m[i].best) {
        m[i].best = part;
        m[i].qterm = t;
        m[i].term = where[i];
      }
    }
  }
  free(tf);
  free(where);
  /* a table whose whole name the question says ("Customer") before one
   * that only shares a word of it ("CampaignCustomer", "cust_cfg") */
  for (size_t i = 0; i < n; i++) {
    size_t words = 0, said = 0;
    for (size_t k = 0; k < docs[i].n; k++) {
      if (docs[i].terms[k].field != TT_FIELD_NAME) continue;
      words++;
      for (size_t t = 0; t < q->n; t++)
        if (strcmp(docs[i].terms[k].w, q->w[t]) == 0) {
          said++;
          break;
        }
    }
    double boost = words ? 1.0 + TT_NAME_COVER * (double)said / (double)words : 1.0;
    m[i].score *= boost;
    for (size_t t = 0; t < q->n; t++) contrib[i * TT_QUERY_MAX + t] *= boost;
  }
}

static char *tt_match_reason(const tt_table_info *t, const tt_query *q, const tt_match *m) {
  const tt_term *term = m->term;
  const char *word = q->raw[m->qterm];
  if (term->field == TT_FIELD_NAME) return tt_xasprintf("name matches '%s'", word);
  if (term->field == TT_FIELD_DESC)
    return term->col < 0 ? tt_xasprintf("description matches '%s'", word)
                         : tt_xasprintf("description of %s matches '%s'", t->cols[term->col].name, word);
  const char *col = t->cols[term->col].name;
  if (term->field == TT_FIELD_COLUMN) return tt_xasprintf("column %s matches '%s'", col, word);
  const tt_value *v = &t->sample->cells[term->cell];
  size_t len = v->len < 40 ? v->len : 40;
  return tt_xasprintf("value '%.*s' in %s.%s", (int)len, v->u.s, t->name, col);
}

/* ---- joins ------------------------------------------------------------------------------ */

typedef enum { TT_LINK_WEAK, TT_LINK_MEDIUM, TT_LINK_STRONG } tt_link_strength;

typedef struct tt_value_link {
  size_t table;               /* SIZE_MAX: not in the schema */
  tt_link_strength strength;
  bool take;                  /* taken before the ranking ... */
  bool joined;                /* ... with its join path to what is taken */
} tt_value_link;

typedef struct tt_graph {
  size_t n;
  size_t **adj;
  size_t *deg;
} tt_graph;

static void tt_graph_build(tt_graph *g, const tt_schema *s) {
  g->n = tt_schema_count(s);
  g->adj = tt_xcalloc(g->n ? g->n : 1, sizeof *g->adj);
  g->deg = tt_xcalloc(g->n ? g->n : 1, sizeof *g->deg);
  for (size_t i = 0; i < g->n; i++) {
    const tt_table_info *a = tt_schema_card(s, i)->table;
    for (size_t k = 0; k < a->nfks; k++) {
      const tt_card *to = tt_schema_find(s, a->fks[k].table);
      if (!to) continue;
      size_t j = (size_t)(to - tt_schema_card(s, 0));
      if (j == i) continue;
      bool dup = false;
      for (size_t e = 0; e < g->deg[i] && !dup; e++) dup = g->adj[i][e] == j;
      if (dup) continue;
      g->adj[i] = tt_xrealloc(g->adj[i], (g->deg[i] + 1) * sizeof **g->adj);
      g->adj[i][g->deg[i]++] = j;
      g->adj[j] = tt_xrealloc(g->adj[j], (g->deg[j] + 1) * sizeof **g->adj);
      g->adj[j][g->deg[j]++] = i;
    }
  }
}

static void tt_graph_free(tt_graph *g) {
  for (size_t i = 0; i < g->n; i++) free(g->adj[i]);
  free(g->adj);
  free(g->deg);
}

/* The cheapest foreign-key path from table from to any table in taken, at
 * most TT_PATH_HOPS steps, a path costing the tokens of the cards it adds
 * (the tables strictly between): joining each new table to what is taken
 * by its cheapest path is the classic approximation of the Steiner tree
 * over the tables the question needs. Among equally cheap paths the fewer
 * steps, then the one through higher-scoring tables. Writes the tables
 * strictly between the two ends to mid (nearest to from first) and returns
 * how many, with *end the taken table reached; SIZE_MAX when none is near
 * enough. */
static size_t tt_shortest_path(const tt_schema *s, const tt_graph *g, const double *score, const bool *taken,
                               size_t from, size_t *mid, size_t *end) {
  size_t n = g->n, rounds = TT_PATH_HOPS;
  /* Bellman-Ford bounded by hops: cost[k][v] the cheapest path of at most k steps */
  double *cost = tt_xcalloc((rounds + 1) * n, sizeof *cost);
  size_t *prev = tt_xcalloc((rounds + 1) * n, sizeof *prev);
  for (size_t v = 0; v < (rounds + 1) * n; v++) cost[v] = HUGE_VAL, prev[v] = SIZE_MAX;
  cost[from] = 0;
  for (size_t k = 1; k <= rounds; k++) {
    double *ck = cost + k * n, *cp = cost + (k - 1) * n;
    size_t *pk = prev + k * n;
    memcpy(ck, cp, n * sizeof *ck);
    memcpy(pk, prev + (k - 1) * n, n * sizeof *pk);
    for (size_t u = 0; u < n; u++) {
      if (cp[u] == HUGE_VAL || (u != from && taken[u])) continue; /* a path ends at a taken table */
      for (size_t e = 0; e < g->deg[u]; e++) {
        size_t v = g->adj[u][e];
        if (v == from) continue;
        /* a card's tokens, less a little for a relevant table, so ties go to it */
        double step = taken[v] ? 0 : (double)tt_schema_card(s, v)->tokens - 1e-3 * (score[v] < 100 ? score[v] : 100);
        if (cp[u] + step < ck[v] - 1e-9) {
          ck[v] = cp[u] + step;
          pk[v] = u;
        }
      }
    }
  }
  double *last = cost + rounds * n;
  size_t found = SIZE_MAX;
  for (size_t v = 0; v < n; v++)
    if (v != from && taken[v] && last[v] != HUGE_VAL && (found == SIZE_MAX || last[v] < last[found] - 1e-9))
      found = v;
  size_t count = SIZE_MAX;
  if (found != SIZE_MAX) {
    /* the fewest steps that reach it at that cost */
    size_t k = 1;
    while (k < rounds && !(cost[k * n + found] <= last[found] + 1e-9)) k++;
    count = 0;
    for (size_t v = prev[k * n + found]; k > 0 && v != from && v != SIZE_MAX && count < TT_PATH_HOPS; k--)
      mid[count++] = v, v = prev[(k - 1) * n + v];
    for (size_t a = 0, b = count ? count - 1 : 0; a < b; a++, b--) {
      size_t x = mid[a];
      mid[a] = mid[b];
      mid[b] = x;
    }
    *end = found;
  }
  free(cost);
  free(prev);
  return count;
}

/* ---- value links ------------------------------------------------------------------------- */

typedef struct tt_phrase_words {
  char w[8][TT_TERM_MAX];
  size_t n;
} tt_phrase_words;

static void tt_phrase_word(void *ud, const char *w, const char *raw) {
  tt_phrase_words *p = ud;
  (void)w;
  if (p->n < 8) snprintf(p->w[p->n++], TT_TERM_MAX, "%s", raw);
}

/* How much of table i's score comes from question words outside the
 * matched phrase. */
static double tt_support(const tt_query *q, const double *contrib, size_t i, const tt_phrase_words *pw) {
  double sum = 0;
  for (size_t t = 0; t < q->n; t++) {
    bool inside = false;
    for (size_t k = 0; k < pw->n && !inside; k++) inside = strcmp(q->raw[t], pw->w[k]) == 0;
    if (!inside) sum += contrib[i * TT_QUERY_MAX + t];
  }
  return sum;
}

/* Whether the question writes the value with the value's own case
 * ("Rotterdam", "OVERDUE"), not only its letters ("bring" for 'Bring'). */
static bool tt_same_case(const char *question, const char *value) {
  size_t n = strlen(value);
  if (!n) return false;
  for (const char *p = question; (p = strstr(p, value)); p++) {
    bool before = p == question || !isalnum((unsigned char)p[-1]);
    bool after = !isalnum((unsigned char)p[n]);
    if (before && after) return true;
  }
  return false;
}

/* Each value match judged: its strength (a phrase of two words or more, or
 * one distinctive word written as the value writes it, is strong; a
 * distinctive word in other case, or found near, is medium; a common word
 * or a word of the schema's names is weak) and whether it takes its table
 * now: a weak one never; another only when the table has support from the
 * rest of the question or a neighbour that has, or, when strong, nothing in
 * the schema has (the value is all the question gives); when one phrase
 * links several tables and some have support of their own, only those. A
 * medium link without support of its own brings no join path. */
/* The value matches of a question: its own, then those of the values the
 * steer names, each with the text its case is judged against and where it
 * came from. */
#define TT_VLINKS_MAX (2 * TT_VALUE_MATCHES_MAX)
typedef enum { TT_FROM_QUESTION, TT_FROM_LEXICON, TT_FROM_KNOWLEDGE } tt_link_origin;
typedef struct tt_vlinks {
  size_t n;
  tt_value_match m[TT_VLINKS_MAX];
  const char *text[TT_VLINKS_MAX];
  const char *why[TT_VLINKS_MAX]; /* the steer's reason, or NULL */
  tt_link_origin from[TT_VLINKS_MAX];
} tt_vlinks;

/* Moves the matches of vm into l (those that do not fit are freed). */
static void tt_vlinks_take(tt_vlinks *l, tt_value_matches *vm, const char *text, tt_link_origin from,
                           const char *why) {
  for (size_t k = 0; k < vm->n; k++) {
    /* a value the steer names is matched as written: 'Swiss Franc' is no 'France' */
    if (l->n == TT_VLINKS_MAX || (from != TT_FROM_QUESTION && !vm->m[k].exact)) {
      free(vm->m[k].phrase);
      continue;
    }
    l->m[l->n] = vm->m[k];
    l->text[l->n] = text;
    l->why[l->n] = why;
    l->from[l->n++] = from;
  }
  vm->n = 0;
}

static void tt_vlinks_free(tt_vlinks *l) {
  for (size_t k = 0; k < l->n; k++) free(l->m[k].phrase);
  l->n = 0;
}

static void tt_value_links(const tt_schema *s, const tt_doc *docs, const tt_query *q, const double *contrib,
                           const tt_graph *g, const tt_vlinks *vm, tt_value_link *out) {
  size_t n = tt_schema_count(s);
  bool any_support = false;
  for (size_t i = 0; i < n && !any_support; i++)
    for (size_t t = 0; t < q->n && !any_support; t++) any_support = contrib[i * TT_QUERY_MAX + t] > 0;
  double own[TT_VLINKS_MAX] = {0};
  for (size_t k = 0; k < vm->n; k++) {
    tt_value_link *l = &out[k];
    const tt_value_match *m = &vm->m[k];
    const tt_card *vc = tt_schema_find(s, m->table);
    *l = (tt_value_link){.table = vc ? (size_t)(vc - tt_schema_card(s, 0)) : SIZE_MAX,
                         .strength = TT_LINK_WEAK};
    if (l->table == SIZE_MAX) continue;
    tt_phrase_words pw = {.n = 0};
    tt_split(m->phrase, strlen(m->phrase), tt_phrase_word, &pw);
    bool multi = strchr(m->phrase, ' ') != NULL;
    if (multi) {
      l->strength = TT_LINK_STRONG;
    } else {
      char stem[TT_TERM_MAX];
      snprintf(stem, sizeof stem, "%s", m->phrase);
      tt_stem(stem);
      bool same_case = m->exact && tt_same_case(vm->text[k], m->value);
      if (tt_values_common_word(m->phrase)) continue;
      if (tt_is_schema_word(docs, n, stem)) {
        /* "revenue" is said for a column; "Payroll" as written names the value */
        if (!same_case) continue;
        l->strength = TT_LINK_MEDIUM;
      } else {
        l->strength = same_case ? TT_LINK_STRONG : TT_LINK_MEDIUM;
      }
    }
    /* the lexicon's guess needs support; the user's word needs none */
    if (vm->from[k] == TT_FROM_LEXICON && l->strength == TT_LINK_STRONG) l->strength = TT_LINK_MEDIUM;
    if (vm->from[k] == TT_FROM_KNOWLEDGE && m->exact) l->strength = TT_LINK_STRONG;
    own[k] = tt_support(q, contrib, l->table, &pw);
    bool near = false;
    for (size_t e = 0; e < g->deg[l->table] && !near; e++)
      near = tt_support(q, contrib, g->adj[l->table][e], &pw) > 0;
    l->take = own[k] > 0 || near || (l->strength == TT_LINK_STRONG && !any_support) ||
              (vm->from[k] == TT_FROM_KNOWLEDGE && l->strength == TT_LINK_STRONG);
    l->joined = l->strength == TT_LINK_STRONG || own[k] > 0;
  }
  /* one phrase, several tables: those with support of their own win */
  for (size_t k = 0; k < vm->n; k++) {
    if (!out[k].take || own[k] > 0) continue;
    for (size_t j = 0; j < vm->n; j++)
      if (j != k && out[j].take && own[j] > 0 && strcmp(vm->m[j].phrase, vm->m[k].phrase) == 0)
        out[k].take = false;
  }
}

/* ---- choosing under the budget ------------------------------------------------------- */

typedef struct tt_chooser {
  const tt_schema *s;
  size_t budget, used;
  bool *taken;
  tt_schema_ranking *r;
  size_t group;    /* the group the last pick opened */
  bool in_group;   /* the next pick joins it (a join path) */
} tt_chooser;

static bool tt_fits(const tt_chooser *c, size_t i) {
  size_t cost = tt_schema_card(c->s, i)->tokens;
  return c->used + cost <= c->budget || c->used == 0;
}

static void tt_take(tt_chooser *c, size_t i, double score, char *reason) {
  c->taken[i] = true;
  c->used += tt_schema_card(c->s, i)->tokens;
  if (!c->in_group) c->group++;
  c->r->group[c->r->n] = c->group;
  tt_schema_pick *p = &c->r->picks[c->r->n++];
  p->card = tt_schema_card(c->s, i);
  p->score = score;
  p->reason = reason;
}

static int tt_by_score_desc(const void *a, const void *b, void *ud) {
  const double *score = ud;
  size_t x = *(const size_t *)a, y = *(const size_t *)b;
  if (score[x] != score[y]) return score[x] < score[y] ? 1 : -1;
  return x < y ? -1 : x > y;
}

/* qsort_r is not C11: a small insertion sort (hundreds of tables) does. */
static void tt_sort_by_score(size_t *idx, size_t n, const double *score) {
  for (size_t i = 1; i < n; i++) {
    size_t v = idx[i], j = i;
    while (j > 0 && tt_by_score_desc(&idx[j - 1], &v, (void *)score) > 0) {
      idx[j] = idx[j - 1];
      j--;
    }
    idx[j] = v;
  }
}

/* Takes table i and the tables on its shortest path to what is taken,
 * when they all fit; otherwise only i, when it fits. */
static void tt_take_joined(tt_chooser *c, const tt_graph *g, const double *score, size_t i, char *reason) {
  size_t *mid = tt_xcalloc(TT_PATH_HOPS + 1, sizeof *mid);
  size_t end = 0, k = c->r->n ? tt_shortest_path(c->s, g, score, c->taken, i, mid, &end) : SIZE_MAX;
  size_t cost = tt_schema_card(c->s, i)->tokens;
  if (k != SIZE_MAX)
    for (size_t j = 0; j < k; j++) cost += tt_schema_card(c->s, mid[j])->tokens;
  if (k != SIZE_MAX && c->used + cost <= c->budget) {
    tt_take(c, i, score[i], reason);
    c->in_group = true;
    const char *a = tt_schema_card(c->s, i)->table->name, *b = tt_schema_card(c->s, end)->table->name;
    for (size_t j = 0; j < k; j++)
      if (!c->taken[mid[j]]) tt_take(c, mid[j], score[mid[j]], tt_xasprintf("joins %s to %s", a, b));
    c->in_group = false;
  } else if (tt_fits(c, i)) {
    tt_take(c, i, score[i], reason);
  } else {
    free(reason);
  }
  free(mid);
}

/* Takes the neighbours of picks [from, to) that are not taken yet. */
static void tt_take_neighbours(tt_chooser *c, const tt_graph *g, size_t from, size_t to) {
  for (size_t p = from; p < to; p++) {
    size_t a = (size_t)(c->r->picks[p].card - tt_schema_card(c->s, 0));
    for (size_t e = 0; e < g->deg[a]; e++) {
      size_t b = g->adj[a][e];
      if (c->taken[b] || c->used + tt_schema_card(c->s, b)->tokens > c->budget) continue;
      tt_take(c, b, 0, tt_xasprintf("foreign key to %s", tt_schema_card(c->s, a)->table->name));
    }
  }
}

static void tt_cover_phrase(const tt_query *q, const char *phrase, bool *covered) {
  tt_phrase_words pw = {.n = 0};
  tt_split(phrase, strlen(phrase), tt_phrase_word, &pw);
  for (size_t t = 0; t < q->n; t++)
    for (size_t k = 0; k < pw.n; k++)
      if (strcmp(q->raw[t], pw.w[k]) == 0) covered[t] = true;
}

static bool tt_asks_who(const tt_qwords *qw) {
  for (size_t i = 0; i < qw->n; i++)
    if (strcmp(qw->w[i].raw, "who") == 0 || strcmp(qw->w[i].raw, "whom") == 0 ||
        strcmp(qw->w[i].raw, "whose") == 0)
      return true;
  return false;
}

/* Whether a table holds people: a column of a person's name (first_name,
 * LastName, full_name, but not product_name). */
static bool tt_is_people(const tt_table_info *t) {
  for (size_t c = 0; c < t->ncols; c++) {
    char w[64];
    size_t k = 0;
    for (const char *p = t->cols[c].name; *p && k + 1 < sizeof w; p++)
      if (isalpha((unsigned char)*p)) w[k++] = (char)tolower((unsigned char)*p);
    w[k] = '\0';
    if (strcmp(w, "firstname") == 0 || strcmp(w, "lastname") == 0 || strcmp(w, "fullname") == 0 ||
        strcmp(w, "surname") == 0 || strcmp(w, "givenname") == 0)
      return true;
  }
  return false;
}

/* A question asking who wants the people: when no table taken so far
 * holds them, the cheapest table of people near the best-ranked taken
 * table that has one (next to it, or next to a table that matched the
 * question), with the table between. */
static void tt_take_people(tt_chooser *c, const tt_graph *g, const double *score) {
  for (size_t p = 0; p < c->r->n; p++)
    if (tt_is_people(c->r->picks[p].card->table)) return;
  size_t best = SIZE_MAX, best_cost = SIZE_MAX, from = 0;
  for (size_t p = 0; p < c->r->n && best == SIZE_MAX; p++) { /* the best-ranked pick with people near */
    size_t a = (size_t)(c->r->picks[p].card - tt_schema_card(c->s, 0));
    for (size_t e = 0; e < g->deg[a]; e++) {
      size_t b = g->adj[a][e];
      if (c->taken[b]) continue;
      size_t cb = tt_schema_card(c->s, b)->tokens;
      if (tt_is_people(tt_schema_card(c->s, b)->table)) {
        if (cb < best_cost) best = b, best_cost = cb, from = p;
        continue;
      }
      if (score[b] <= 0) continue;
      for (size_t f = 0; f < g->deg[b]; f++) {
        size_t d = g->adj[b][f];
        if (c->taken[d] || !tt_is_people(tt_schema_card(c->s, d)->table)) continue;
        size_t cost = cb + tt_schema_card(c->s, d)->tokens;
        if (cost < best_cost) best = d, best_cost = cost, from = p;
      }
    }
  }
  if (best != SIZE_MAX)
    tt_take_joined(c, g, score, best,
                   tt_xasprintf("the question asks who: people near %s", c->r->picks[from].card->table->name));
}

/* ---- the embedding score -------------------------------------------------------------- */

#define TT_EMBED_ROUND 1e4 /* cosines to four places: the same picks whatever the last bits */

static int tt_double_cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y ? 1 : 0;
}

/* Each table's embedding score, or NULL when there is none (no vectors,
 * another size, no spread): the cosine of its vector with the question's,
 * to four places, rescaled to 0 at the median table and 1 at the best and
 * squared (the few nearest tables stand out), times TT_EMBED_SHARE of the
 * best word score lex_top, or times 1 when no word matched. A table
 * without a vector scores 0. */
static double *tt_embed_scores(const tt_schema *s, const tt_schema_rank_opts *o, double lex_top) {
  size_t n = tt_schema_count(s);
  if (!o->vectors || !o->question_vec || !n || o->dim == 0 || o->dim != tt_schema_vectors_dim(o->vectors))
    return NULL;
  double *sim = tt_xcalloc(n, sizeof *sim), *sorted = tt_xcalloc(n, sizeof *sorted);
  size_t have = 0;
  for (size_t i = 0; i < n; i++) {
    const float *v = tt_schema_vectors_get(o->vectors, i);
    sim[i] = -HUGE_VAL;
    if (!v) continue;
    double dot = 0;
    for (size_t d = 0; d < o->dim; d++) dot += (double)v[d] * (double)o->question_vec[d];
    sim[i] = round(dot * TT_EMBED_ROUND) / TT_EMBED_ROUND;
    sorted[have++] = sim[i];
  }
  double *e = NULL;
  if (have >= 2) {
    qsort(sorted, have, sizeof *sorted, tt_double_cmp);
    double median = sorted[(have - 1) / 2], best = sorted[have - 1];
    if (best - median >= 1.0 / TT_EMBED_ROUND) {
      double scale = lex_top > 0 ? TT_EMBED_SHARE * lex_top : 1.0;
      e = tt_xcalloc(n, sizeof *e);
      for (size_t i = 0; i < n; i++) {
        double z = (sim[i] - median) / (best - median);
        e[i] = z > 0 ? scale * z * z : 0;
      }
    }
  }
  free(sim);
  free(sorted);
  return e;
}

static char *tt_embed_reason(void) {
  return tt_xstrdup("its description is near the question's meaning (embedding)");
}

/* Every table in the order the question wants them, budget aside, in
 * groups: a table and the bridges of its join path are one group. */
static tt_schema_ranking *tt_rank_order(const tt_schema *s, const char *question,
                                        const tt_schema_rank_opts *o) {
  const char *const *named = o->named;
  size_t nnamed = o->nnamed;
  size_t n = tt_schema_count(s), budget = SIZE_MAX;
  tt_schema_ranking *r = tt_xcalloc(1, sizeof *r);
  r->picks = tt_xcalloc(n ? n : 1, sizeof *r->picks);
  r->group = tt_xcalloc(n ? n : 1, sizeof *r->group);
  if (!n) return r;
  tt_doc *docs = tt_xcalloc(n, sizeof *docs);
  for (size_t i = 0; i < n; i++) tt_doc_build(&docs[i], tt_schema_card(s, i)->table);
  if (!question) question = "";
  tt_query q = {0};
  tt_query_sink qs = {.q = &q, .raw = "", .weight = 1.0};
  tt_split(question, strlen(question), tt_query_word, &qs);
  /* what the lexicon and the knowledge file say the question's words mean */
  tt_qwords qw = {.n = 0};
  tt_split(question, strlen(question), tt_qwords_put, &qw);
  tt_steer st = {0};
  /* the tables a selector step named come first (tt_schema_rank_named) */
  for (size_t k = 0; k < nnamed; k++) {
    const tt_card *nc = named[k] ? tt_schema_find(s, named[k]) : NULL;
    if (nc) tt_steer_add_seed(&st, (size_t)(nc - tt_schema_card(s, 0)), "the model named it");
  }
  tt_lexicon_steer(qw.w, qw.n, &st);
  if (tt_schema_knowledge(s)) tt_knowledge_steer(tt_schema_knowledge(s), s, question, &st);
  tt_query_add_steer(&q, &st);
  tt_query_abbreviations(&q, docs, n);
  tt_match *m = tt_xcalloc(n, sizeof *m);
  double *contrib = tt_xcalloc(n * TT_QUERY_MAX, sizeof *contrib);
  tt_score(s, docs, &q, m, contrib);
  tt_graph g;
  tt_graph_build(&g, s);
  double *score = tt_xcalloc(n, sizeof *score);
  size_t *order = tt_xcalloc(n, sizeof *order);
  for (size_t i = 0; i < n; i++) {
    /* tables many others refer to are the ones questions are about more
     * often than a satellite that shares their words (cust_cfg) */
    double prior = 1.0 + TT_DEGREE_PRIOR * log(1.0 + (double)g.deg[i]);
    /* and the table itself before its history, staging or snapshot copy */
    if (m[i].score > 0 && tt_is_unasked_copy(docs, n, i, &q)) prior *= TT_COPY_PRIOR;
    m[i].score *= prior;
    for (size_t t = 0; t < q.n; t++) contrib[i * TT_QUERY_MAX + t] *= prior;
    score[i] = m[i].score;
    order[i] = i;
  }
  tt_sort_by_score(order, n, score);
  /* the embedding score, one more signal beside the words (tt_embed_scores) */
  double *emb = tt_embed_scores(s, o, score[order[0]]);
  if (emb) {
    for (size_t i = 0; i < n; i++) score[i] += emb[i];
    tt_sort_by_score(order, n, score);
  }
  tt_chooser c = {.s = s, .budget = budget, .taken = tt_xcalloc(n, sizeof(bool)), .r = r};
  /* tables holding a value the question names come first: "Rotterdam"
   * says more about office_location than any word of its name; but only
   * the links that earn it (tt_value_links) */
  /* first the tables the user's knowledge names for this question */
  double seed_score = score[order[0]] > 0 ? score[order[0]] : 1.0;
  for (size_t k = 0; k < st.nseeds; k++) {
    size_t i = st.seeds[k].table;
    if (i >= n || c.taken[i]) continue;
    if (score[i] < seed_score) score[i] = seed_score;
    tt_take_joined(&c, &g, score, i, tt_xstrdup(st.seeds[k].reason));
  }
  tt_vlinks vm = {.n = 0};
  tt_value_matches one;
  tt_values_match(tt_schema_values(s), question, &one);
  tt_vlinks_take(&vm, &one, question, TT_FROM_QUESTION, NULL);
  for (size_t k = 0; k < st.nvalues; k++) {
    tt_values_match(tt_schema_values(s), st.values[k].text, &one);
    tt_vlinks_take(&vm, &one, st.values[k].text, st.values[k].strong ? TT_FROM_KNOWLEDGE : TT_FROM_LEXICON,
                   st.values[k].reason);
  }
  char **vreason = tt_xcalloc(n, sizeof *vreason); /* a link not taken, for a later pick's reason */
  tt_value_link links[TT_VLINKS_MAX];
  tt_value_links(s, docs, &q, contrib, &g, &vm, links);
  /* a word a taken value link used up counts little for the tables after
   * ("Payroll" found in department says nothing more of payroll_map) */
  bool covered[TT_QUERY_MAX] = {0};
  for (size_t k = 0; k < vm.n; k++) {
    size_t i = links[k].table;
    if (i == SIZE_MAX || c.taken[i] || links[k].strength == TT_LINK_WEAK) continue;
    score[i] += links[k].strength == TT_LINK_STRONG ? 1.0 : 0.5;
    char *why = vm.why[k] ? tt_xasprintf("value '%s' in %s.%s (%s)", vm.m[k].value, vm.m[k].table,
                                         vm.m[k].column, vm.why[k])
                          : tt_xasprintf("value '%s' in %s.%s", vm.m[k].value, vm.m[k].table, vm.m[k].column);
    if (!links[k].take) {
      if (!vreason[i]) vreason[i] = why;
      else free(why);
    } else if (links[k].joined) {
      tt_take_joined(&c, &g, score, i, why);
    } else if (tt_fits(&c, i)) {
      tt_take(&c, i, score[i], why);
    } else {
      free(why);
    }
    if (c.taken[i]) tt_cover_phrase(&q, vm.m[k].phrase, covered);
  }
  tt_vlinks_free(&vm);
  double top = score[order[0]];
  /* the relevant tables, each joined to those before it: greedily the one
   * that adds most, a word already matched by a chosen table counting for
   * little, so that ten tables sharing 'customer' do not crowd out the one
   * holding 'DHL' */
  bool *tried = tt_xcalloc(n, sizeof *tried);
  while (top > 0) {
    size_t best = n;
    double best_gain = 0;
    for (size_t i = 0; i < n; i++) {
      if (c.taken[i] || tried[i] || score[i] <= 0) continue;
      double gain = emb ? emb[i] : 0;
      for (size_t t = 0; t < q.n; t++)
        gain += contrib[i * TT_QUERY_MAX + t] * (covered[t] ? TT_COVERED : 1.0);
      if (best == n || gain > best_gain) {
        best = i;
        best_gain = gain;
      }
    }
    if (best == n || best_gain < TT_SEED_FRACTION * top) break;
    tried[best] = true;
    tt_take_joined(&c, &g, score, best,
                   m[best].term ? tt_match_reason(tt_schema_card(s, best)->table, &q, &m[best])
                                : tt_embed_reason());
    if (c.taken[best])
      for (size_t t = 0; t < q.n; t++)
        if (contrib[best * TT_QUERY_MAX + t] > 0) covered[t] = true;
  }
  free(tried);
  /* "who ...": the people next to what is chosen, when none is chosen */
  if (tt_asks_who(&qw)) tt_take_people(&c, &g, score);
  /* then what else matched, in rank order, while it fits; a table that
   * joins one already chosen counts for more */
  double *fill = tt_xcalloc(n, sizeof *fill);
  size_t *rest = tt_xcalloc(n, sizeof *rest), nrest = 0;
  for (size_t i = 0; i < n; i++) {
    if (c.taken[i] || score[i] <= 0) continue;
    bool near = false;
    for (size_t e = 0; e < g.deg[i] && !near; e++) near = c.taken[g.adj[i][e]];
    fill[i] = score[i] * (near ? TT_NEAR_BONUS : 1.0);
    rest[nrest++] = i;
  }
  tt_sort_by_score(rest, nrest, fill);
  /* the neighbours of the tables chosen so far (and of the extras that
   * matched well) come before the extras that matched a little (a column named
   * course_flag), so that a join one step further stays possible */
  size_t strong = 0;
  double fill_top = nrest ? fill[rest[0]] : 0;
  while (strong < nrest && fill[rest[strong]] >= TT_FILL_FRACTION * fill_top) strong++;
  for (size_t k = 0; k < nrest; k++) {
    size_t i = rest[k];
    if (k == strong) tt_take_neighbours(&c, &g, 0, r->n);
    if (c.taken[i] || c.used + tt_schema_card(s, i)->tokens > budget) continue;
    char *why = m[i].term ? tt_match_reason(tt_schema_card(s, i)->table, &q, &m[i]) : vreason[i];
    if (why && why == vreason[i]) vreason[i] = NULL;
    if (!why && emb && emb[i] > 0) why = tt_embed_reason();
    tt_take(&c, i, score[i], why ? why : tt_xstrdup("a value the question names"));
  }
  free(fill);
  free(rest);
  /* then the neighbours of everything taken */
  tt_take_neighbours(&c, &g, 0, r->n);
  /* nothing matched: as many tables as fit, in schema order */
  if (r->n == 0) {
    for (size_t i = 0; i < n && tt_fits(&c, i); i++) tt_take(&c, i, 0, tt_xstrdup("nothing matched; schema order"));
  }
  for (size_t i = 0; i < n; i++) free(vreason[i]);
  free(vreason);
  tt_steer_free(&st);
  tt_graph_free(&g);
  free(c.taken);
  free(order);
  free(score);
  free(contrib);
  free(emb);
  free(m);
  for (size_t i = 0; i < n; i++) free(docs[i].terms);
  free(docs);
  return r;
}

/* ---- the budget ------------------------------------------------------------------------------ */

/* A unit the budget admits at once: a table alone, or the bridges of its
 * join path (after it). */
typedef struct tt_unit {
  size_t first, end; /* picks [first, end) of the order */
  size_t cost;       /* their tokens */
  size_t from;       /* the smallest budget that admits it; SIZE_MAX never */
} tt_unit;

/* The smallest budget x from which on the unit fits beside everything
 * ranked before it: for every budget b >= x, cost + (the units before it
 * admitted at b) <= b. Those units' admissions are steps of that sum;
 * each step whose sum leaves no room makes a stretch of budgets that
 * cannot hold the unit, and x is where the last such stretch ends. */
static size_t tt_unit_from(const tt_unit *u, size_t n, size_t cost, size_t floor) {
  /* units before, by the budget that admits them (insertion sort: hundreds) */
  size_t *idx = tt_xcalloc(n ? n : 1, sizeof *idx), m = 0;
  for (size_t i = 0; i < n; i++) {
    if (u[i].from == SIZE_MAX) continue;
    size_t j = m++;
    while (j > 0 && u[idx[j - 1]].from > u[i].from) {
      idx[j] = idx[j - 1];
      j--;
    }
    idx[j] = i;
  }
  size_t x = cost > floor ? cost : floor, sum = 0;
  for (size_t k = 0; k < m;) {
    size_t at = u[idx[k]].from;
    while (k < m && u[idx[k]].from == at) sum += u[idx[k++]].cost;
    size_t next = k < m ? u[idx[k]].from : SIZE_MAX;
    size_t need = sum > SIZE_MAX - cost ? SIZE_MAX : sum + cost;
    if (need > at && need > x) x = need < next ? need : next; /* [at, need) cannot hold it */
  }
  free(idx);
  return x;
}

/* The budget spent so that a budget that grows never drops a table a
 * smaller one kept, and a table never displaces one ranked before it: in
 * rank order, each table (then the bridges of its join path) is admitted
 * from the smallest budget at which it fits beside everything ranked
 * before it at that budget and every larger one (tt_unit_from); a budget
 * holds the tables admitted at or below it. The first table comes whatever
 * its size. */
tt_schema_ranking *tt_schema_rank(const tt_schema *s, const char *question, size_t budget) {
  return tt_schema_rank_named(s, question, budget, NULL, 0);
}

tt_schema_ranking *tt_schema_rank_named(const tt_schema *s, const char *question, size_t budget,
                                        const char *const *named, size_t nnamed) {
  tt_schema_rank_opts ro = {.named = named, .nnamed = nnamed};
  return tt_schema_rank_with(s, question, budget, &ro);
}

tt_schema_ranking *tt_schema_rank_with(const tt_schema *s, const char *question, size_t budget,
                                       const tt_schema_rank_opts *ro) {
  tt_schema_rank_opts none = {0};
  tt_schema_ranking *o = tt_rank_order(s, question, ro ? ro : &none);
  tt_unit *u = tt_xcalloc(o->n ? o->n : 1, sizeof *u);
  size_t nu = 0;
  for (size_t i = 0; i < o->n;) {
    size_t j = i + 1;
    while (j < o->n && o->group[j] == o->group[i]) j++;
    /* the table, then its bridges, never before it */
    u[nu] = (tt_unit){.first = i, .end = i + 1, .cost = o->picks[i].card->tokens};
    u[nu].from = nu == 0 ? 0 : tt_unit_from(u, nu, u[nu].cost, 0);
    size_t after = u[nu++].from;
    if (j > i + 1) {
      size_t cost = 0;
      for (size_t k = i + 1; k < j; k++) cost += o->picks[k].card->tokens;
      u[nu] = (tt_unit){.first = i + 1, .end = j, .cost = cost};
      u[nu].from = tt_unit_from(u, nu, cost, after);
      nu++;
    }
    i = j;
  }
  if (nu) u[0].from = u[0].cost; /* it counts from its size on; below it, it comes alone */
  tt_schema_ranking *r = tt_xcalloc(1, sizeof *r);
  r->picks = tt_xcalloc(o->n ? o->n : 1, sizeof *r->picks);
  for (size_t k = 0; k < nu; k++) {
    if (k > 0 && u[k].from > budget) continue;
    for (size_t i = u[k].first; i < u[k].end; i++) {
      r->picks[r->n++] = o->picks[i];
      o->picks[i].reason = NULL;
    }
  }
  free(u);
  tt_schema_ranking_free(o);
  return r;
}

size_t tt_schema_ranking_count(const tt_schema_ranking *r) { return r ? r->n : 0; }

const tt_schema_pick *tt_schema_ranking_pick(const tt_schema_ranking *r, size_t i) {
  return r && i < r->n ? &r->picks[i] : NULL;
}

void tt_schema_ranking_free(tt_schema_ranking *r) {
  if (!r) return;
  for (size_t i = 0; i < r->n; i++) free(r->picks[i].reason);
  free(r->picks);
  free(r->group);
  free(r);
}

/* For the unit tests and `schema --question`: the words a text is indexed
 * by, space-separated (stems, abbreviations expanded). */
static void tt_words_join(void *ud, const char *w) {
  tt_buf *b = ud;
  if (b->len) tt_buf_putc(b, ' ');
  tt_buf_puts(b, w);
}

static void tt_words_doc_word(void *ud, const char *w, const char *raw);
static void tt_words_expansion(void *ud, const char *w, const char *raw) {
  (void)raw;
  tt_words_join(ud, w);
}
static void tt_words_doc_word(void *ud, const char *w, const char *raw) {
  const char *full = tt_lookup(tt_abbrev, sizeof tt_abbrev / sizeof tt_abbrev[0], raw);
  if (full) tt_split(full, strlen(full), tt_words_expansion, ud);
  else tt_words_join(ud, w);
}

void tt_schema_index_words(const char *text, tt_buf *out) {
  tt_split(text, strlen(text), tt_words_doc_word, out);
}
