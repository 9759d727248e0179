/* steer.h — private to src/schema/: what steers the ranking besides the
 * schema's own words, gathered for one question: words to add to the
 * question (a synonym's schema words), value texts to look up in the
 * value index (an ISO code for a currency's name, a specialty for a
 * practitioner's noun, a code the knowledge file explains), and tables to
 * take first (named by a definition or an example query the question
 * resembles). Two sources fill it: the built-in lexicon (lexicon.c) and
 * the user's knowledge file (knowledge_steer.c); rank.c reads it. */
#ifndef TT_SCHEMA_STEER_H
#define TT_SCHEMA_STEER_H

#include "schema/schema.h"

#define TT_STEER_MAX 32

typedef struct tt_steer_value {
  char *text;    /* as the value is written ("CHF", "Cardiology") */
  bool strong;   /* the user said so (knowledge): a link that needs no support */
  char *reason;  /* "lexicon: 'swiss francs' is CHF" */
} tt_steer_value;

typedef struct tt_steer_seed {
  size_t table;  /* index in the schema */
  char *reason;  /* "knowledge: staff members = the Employee table" */
} tt_steer_seed;

typedef struct tt_steer {
  size_t nwords, nvalues, nseeds;
  char *words[TT_STEER_MAX];     /* words (any case, unstemmed) added to the question */
  double weights[TT_STEER_MAX];
  tt_steer_value values[TT_STEER_MAX];
  tt_steer_seed seeds[TT_STEER_MAX];
} tt_steer;

void tt_steer_free(tt_steer *st);
/* Each adds one item unless full or already there; the steer copies the texts. */
void tt_steer_add_words(tt_steer *st, const char *words, double weight);
void tt_steer_add_value(tt_steer *st, const char *text, bool strong, const char *reason);
void tt_steer_add_seed(tt_steer *st, size_t table, const char *reason);

/* One word of a question as rank.c splits it: lower-cased as written, and
 * its stem (rank.c's stemmer). */
typedef struct tt_qword {
  char raw[24], stem[24];
} tt_qword;

/* rank.c's stemmer (plurals, -ed, -ing, a final e), for lexicon keys. */
void tt_schema_stem(char *w);

/* The built-in lexicon (lexicon.c): for words and two- or three-word
 * phrases of the question (words in order, stop words included), the
 * schema words they stand for, and the values they name. */
void tt_lexicon_steer(const tt_qword *words, size_t n, tt_steer *st);

/* The knowledge file (knowledge_steer.c): definitions and column or table
 * descriptions whose words the question shares seed the tables, columns
 * and coded values they name; an example whose question resembles this one
 * seeds the tables its SQL reads. */
void tt_knowledge_steer(const tt_knowledge *k, const tt_schema *s, const char *question, tt_steer *st);

/* knowledge.c's words of a text: stems of words of three letters or more,
 * lower-cased, with a space on each side of each (" word "). */
char *tt_knowledge_words(const char *s);

#endif
