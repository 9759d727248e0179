/* schema.h — public face of the schema layer: one card per table or view
 * (columns with types and key marks, foreign keys, row count, descriptions,
 * frequent values of text columns, boilerplate columns folded into one
 * line), rendered as compact text for prompts and as JSON,
 * with a token estimate per card; the ranking of cards for a question; the
 * value index that links values a question names to their columns, and
 * its cache file. Knows nothing about language models. */
#ifndef TT_SCHEMA_H
#define TT_SCHEMA_H

#include <signal.h>

#include "db/db.h"

typedef struct tt_schema tt_schema;

typedef struct tt_card {
  const tt_table_info *table; /* owned by the schema's catalog */
  char *text;                 /* the prompt form, newline-terminated */
  char *private_text;         /* the same without row counts or example values:
                               * what private mode sends (never longer than text) */
  size_t tokens;              /* estimated tokens of text */
} tt_card;

/* Builds the cards of a catalog; the schema takes ownership of cat. */
tt_schema *tt_schema_new(tt_catalog *cat);
void tt_schema_free(tt_schema *s);

size_t tt_schema_count(const tt_schema *s);
const tt_card *tt_schema_card(const tt_schema *s, size_t i);
/* Case-insensitive; NULL when there is no such table or view. */
const tt_card *tt_schema_find(const tt_schema *s, const char *name);
const tt_catalog *tt_schema_catalog(const tt_schema *s);
size_t tt_schema_total_tokens(const tt_schema *s);

/* Appends the text of the given cards (all when cards is NULL), in order,
 * separated by blank lines. */
void tt_schema_render_text(const tt_schema *s, const tt_card *const *cards,
                           size_t n, tt_buf *out);
/* The same; priv: the cards' private forms (no row count, no value). */
void tt_schema_render_text_as(const tt_schema *s, const tt_card *const *cards, size_t n,
                              bool priv, tt_buf *out);
json_t *tt_card_to_json(const tt_card *c);
/* {"tables":[...],"token_estimate":N} for the given cards (all when NULL). */
json_t *tt_schema_to_json(const tt_schema *s, const tt_card *const *cards, size_t n);

/* Picks the cards most relevant to a question within a token budget (the
 * ranking below), in schema order. Writes up to tt_schema_count(s) card
 * pointers to out and returns how many. */
size_t tt_schema_select(const tt_schema *s, const char *question, size_t budget,
                        const tt_card **out);
/* The ranking behind tt_schema_select, explained: the tables the
 * knowledge file names for the question (definitions, value descriptions,
 * near examples) and those holding values it names; then BM25 over table
 * names, column names (split on case and underscores, abbreviations such
 * as qty, amt, cust, acct expanded), descriptions and sample values, with
 * the built-in lexicon's synonyms, so rare words weigh and generic ones
 * hardly count; then the tables on the cheapest foreign-key paths between
 * the relevant ones; then the rest of the budget in rank order, then
 * foreign-key neighbours. Picks come in the order chosen. */
typedef struct tt_schema_pick {
  const tt_card *card;
  double score;  /* BM25 score; 0 for a table taken only to join others */
  char *reason;  /* "name matches 'invoice'", "value 'Rotterdam' in office.city",
                    "joins Invoice to Customer"; owned by the ranking */
} tt_schema_pick;
typedef struct tt_schema_ranking tt_schema_ranking;
tt_schema_ranking *tt_schema_rank(const tt_schema *s, const char *question, size_t budget);
size_t tt_schema_ranking_count(const tt_schema_ranking *r);
const tt_schema_pick *tt_schema_ranking_pick(const tt_schema_ranking *r, size_t i);
void tt_schema_ranking_free(tt_schema_ranking *r);
/* The same with the tables a selector step named (names of the schema's
 * tables; others are ignored) taken first, then the ranking's own picks
 * in the room left. */
tt_schema_ranking *tt_schema_rank_named(const tt_schema *s, const char *question, size_t budget,
                                        const char *const *named, size_t nnamed);
size_t tt_schema_select_named(const tt_schema *s, const char *question, size_t budget,
                              const char *const *named, size_t nnamed, const tt_card **out);
/* Everything the ranking may take besides the question. */
typedef struct tt_schema_vectors tt_schema_vectors;
typedef struct tt_schema_rank_opts {
  const char *const *named; /* tables a selector step named (see above) */
  size_t nnamed;
  /* An embedding score (vectors.c): the question's vector (length 1) and
   * the tables' description vectors of the same model. The cosine of each
   * table's vector with the question's, rescaled between the median and the
   * best table, is one more signal: alone it orders the tables when no word
   * of the question matches the schema; beside word matches it adds at most
   * TT_EMBED_SHARE of the best word score, so it never puts a table no word
   * names among the tables the words chose, only orders the rest. NULL: none. */
  const tt_schema_vectors *vectors;
  const float *question_vec;
  size_t dim;
} tt_schema_rank_opts;
#define TT_EMBED_SHARE 0.3
tt_schema_ranking *tt_schema_rank_with(const tt_schema *s, const char *question, size_t budget,
                                       const tt_schema_rank_opts *o);
/* One line per table for a selector step: "Name: col->Other, col, col
 * (+3) -- description": foreign keys first, 6 columns in all (retrieve.c). */
void tt_schema_render_table_lines(const tt_schema *s, tt_buf *out);
/* tt_schema_select's second half, for a caller that keeps the ranking too:
 * r's picks in schema order into out; returns how many. */
size_t tt_schema_select_ranked(const tt_schema *s, const tt_schema_ranking *r, const tt_card **out);
/* The words text is indexed by, space-separated: split, stemmed,
 * abbreviations expanded ("CUST_MSTR" -> "customer master"). */
void tt_schema_index_words(const char *text, tt_buf *out);

/* How compact an index had to be to fit. */
typedef enum tt_schema_index_form {
  TT_INDEX_KEYS,    /* "Album(AlbumId*, ArtistId->Artist)": names with key columns */
  TT_INDEX_NAMES,   /* names only, ten to a line */
  TT_INDEX_GROUPED, /* names grouped by prefix: "sales_: orders, items" */
  TT_INDEX_PARTIAL  /* grouped, as many as fit, and how many more there are */
} tt_schema_index_form;

/* Appends the most informative index of all tables whose estimated tokens
 * stay within max_tokens (index.c), and says which form it took. Only the
 * partial form can leave tables out; it always names how many. */
tt_schema_index_form tt_schema_render_compact_index(const tt_schema *s, size_t max_tokens,
                                                    tt_buf *out);

/* The tables as OmniSQL's training data writes a schema: CREATE TABLE
 * statements, one column per line with its declared type and up to two
 * sample values as a comment (-- example: ['Rock', 'Jazz']), PRIMARY KEY
 * and FOREIGN KEY constraints, a blank line between tables (all when
 * cards is NULL). */
void tt_schema_render_ddl(const tt_schema *s, const tt_card *const *cards, size_t n, tt_buf *out);
/* The same in M-Schema, XiYanSQL's schema format: 【DB_ID】 db_id, then
 * "# Table: name" blocks of (column:TYPE, Primary Key, Examples: [..]),
 * then 【Foreign keys】 between the tables shown. */
void tt_schema_render_mschema(const tt_schema *s, const tt_card *const *cards, size_t n,
                              const char *db_id, tt_buf *out);

/* Estimated tokens of text for a BPE tokenizer of the Qwen2 family
 * (single-digit numbers, ~4 letters per token, punctuation alone). */
size_t tt_tokens_estimate(const char *text, size_t n);

/* ---- the value index (values.c, values_cache.c) ------------------------------------- */

/* Distinct short text values per column, read from the first scan_rows rows
 * of each table, so a question naming a value links to its column. */
typedef struct tt_values tt_values;
typedef struct tt_values_opts {
  long max_per_column; /* distinct values kept per column (1,000) */
  size_t max_total;    /* values in all (200,000) */
  long max_len;        /* longest value in bytes (64) */
  long scan_rows;      /* rows read per table (50,000) */
} tt_values_opts;
tt_values_opts tt_values_default_opts(void);
tt_values *tt_values_new(void);
/* Reads the values of every text column (opts NULL: the defaults). Columns
 * that cannot be read are skipped; never NULL. */
tt_values *tt_values_build(tt_db *db, const tt_catalog *cat, const tt_values_opts *opts);
/* Adds one value; false when it is not worth linking (no letter, control
 * characters, shorter than 2 folded characters). */
bool tt_values_add(tt_values *v, const char *table, const char *column, const char *value, size_t len);
/* Sorts the index for matching; call after the last tt_values_add
 * (tt_values_build does). An index not finished matches nothing. */
void tt_values_finish(tt_values *v);
size_t tt_values_count(const tt_values *v);
/* The i-th entry (sorted by folded value); 0 past the end. */
size_t tt_values_entry(const tt_values *v, size_t i, const char **table, const char **column,
                       const char **value);
void tt_values_free(tt_values *v);
/* Folds text for matching: lower case, Latin accents to ASCII ("Zürich" ->
 * "zurich"), anything but letters and digits to one space. */
void tt_values_fold(const char *s, size_t n, tt_buf *out);

#define TT_VALUE_MATCHES_MAX 8
typedef struct tt_value_match {
  const char *value, *table, *column; /* owned by the index */
  char *phrase;                       /* the folded words of the question */
  bool exact;                         /* false: within an edit or two */
} tt_value_match;
typedef struct tt_value_matches {
  size_t n;
  tt_value_match m[TT_VALUE_MATCHES_MAX];
} tt_value_matches;
/* Matches phrases of 1-4 words of the question against the index, longest
 * first, ignoring case and accents, forgiving one typo in 5+ letters and
 * two in 9+; phrases of stop words only, and values found in more than
 * two tables, link to nothing. */
void tt_values_match(const tt_values *v, const char *question, tt_value_matches *out);
void tt_value_matches_free(tt_value_matches *m);
/* Whether a folded word is an everyday word that is a cell value somewhere
 * ('Open', 'Left', 'Bring') and so never links a value on its own. */
bool tt_values_common_word(const char *w);
/* One line per match: "'Rotterdam' is a value of office_location.city". */
void tt_values_hints(const tt_value_matches *m, tt_buf *out);

/* The index for the database behind db, kept between runs in a file under
 * cache_dir keyed by stamp (tt_db_catalog_stamp: the database's identity
 * and schema), with each table's state: read under which data stamp, or
 * not read yet. Tables are read in schema order, each within its own part
 * of the bounds (a table's values never depend on another's), so that an
 * index read in parts, or partly again, equals one read at once. A corrupt
 * or truncated cache file is read as no file. */
typedef struct tt_values_open_opts {
  const char *cache_dir;  /* NULL (or no stamp): read, never kept */
  double deadline_ms;     /* reading stops here (tt_now_ms time; 0: none): the
                           * tables not read yet stay pending */
  bool refresh;           /* read again the tables read before their data last changed */
  bool cache_only;        /* read nothing: NULL when the cache holds no index */
  volatile sig_atomic_t *cancel; /* set: reading stops within milliseconds */
  bool progress;          /* a line on stderr while a file of 64 MiB or more is
                           * indexed (callers pass it only for a terminal) */
} tt_values_open_opts;
typedef struct tt_values_state {
  bool cached;     /* every entry came from the cache file: nothing was read */
  size_t pending;  /* tables whose values are not read yet */
  size_t outdated; /* tables whose values were read before their data last changed */
} tt_values_state;
tt_values *tt_values_open(tt_db *db, const tt_catalog *cat, const tt_catalog_stamp *stamp,
                          const tt_values_open_opts *o, tt_values_state *st);
/* The cache file's path for the database stamp names (freshly allocated). */
char *tt_values_cache_path(const char *cache_dir, const tt_catalog_stamp *stamp);

/* Hands the index to the schema (which frees it); ranking then takes the
 * tables holding values the question names. */
void tt_schema_set_values(tt_schema *s, tt_values *v);
const tt_values *tt_schema_values(const tt_schema *s);

/* ---- the user's knowledge file (knowledge.c) ------------------------------
 * A JSON object: {"tables": {"Name": "description"}, "columns":
 * {"Table.Column": "description"}, "definitions": ["revenue = ..."],
 * "examples": [{"question": "...", "sql": "..."}]}, every key optional. */
typedef struct tt_knowledge tt_knowledge;
/* NULL with err filled when the file cannot be read or is malformed. */
tt_knowledge *tt_knowledge_load(const char *path, tt_error *err);
tt_knowledge *tt_knowledge_parse(const char *text, size_t n, tt_error *err);
tt_knowledge *tt_knowledge_new_empty(void);
/* The knowledge file beside a database: chinook.sqlite ->
 * chinook.knowledge.json (freshly allocated). */
char *tt_knowledge_path_for(const char *db_path);
void tt_knowledge_free(tt_knowledge *k);
/* The document itself, owned by k. */
const json_t *tt_knowledge_json(const tt_knowledge *k);
void tt_knowledge_add_example(tt_knowledge *k, const char *question, const char *sql);
/* The file's text (indented JSON, newline-terminated); the caller frees it. */
char *tt_knowledge_dump(const tt_knowledge *k);
/* Sets the descriptions of the catalog's tables and columns the file names
 * (over those from SQL comments); call before tt_schema_new. */
void tt_knowledge_apply(const tt_knowledge *k, tt_catalog *cat);
/* Appends the definitions and the examples nearest the question (nothing
 * when the file has neither), each only while the whole stays within
 * max_tokens; returns how many were left out for want of room. */
size_t tt_knowledge_render_for(const tt_knowledge *k, const char *question, size_t max_tokens,
                               tt_buf *out);
/* The schema keeps k (and frees it); NULL detaches nothing. */
void tt_schema_set_knowledge(tt_schema *s, tt_knowledge *k);
const tt_knowledge *tt_schema_knowledge(const tt_schema *s);

/* ---- from a database to its schema (load.c) ------------------------------- */
typedef enum tt_schema_values_mode {
  TT_SCHEMA_VALUES_NONE,   /* no value index */
  TT_SCHEMA_VALUES_CACHED, /* read from cache_dir, built and saved there when stale */
  TT_SCHEMA_VALUES_BUILT,  /* built from the database, not cached (to measure it) */
} tt_schema_values_mode;
typedef struct tt_schema_load_opts {
  const char *db_path;   /* the database's file: its knowledge file is looked for
                            beside it (NULL: none) */
  const char *knowledge; /* a knowledge file the user named (a bad one is an error) */
  tt_schema_values_mode values;
  const char *cache_dir; /* the catalog (and with TT_SCHEMA_VALUES_CACHED the value
                          * index) are kept here between runs (NULL: read, never kept) */
  bool progress;         /* a progress bar on stderr while a large index is built */
  double deadline_ms;    /* reading rows stops at this time (tt_now_ms; 0: none): the
                          * tables not read yet stay pending (tt_schema_get_state),
                          * their cards say so, and a later load reads them */
  bool refresh;          /* read again the rows and values of tables read before their
                          * data last changed (what a background refresh does) */
  bool cache_only;       /* read no row and no table list: NULL (TT_ERR_UNAVAILABLE)
                          * unless the cache holds this database's schema as it is now */
  volatile sig_atomic_t *cancel; /* set: reading stops within milliseconds (pending) */
} tt_schema_load_opts;
/* The catalog of db (from the cache when it holds this database's catalog
 * as its schema is now: then no row and no table list is read; tables
 * still pending are read until the deadline), the knowledge file applied
 * and attached, and the value index; NULL with err filled: the catalog's
 * own error, or TT_ERR_CONFIG for a knowledge file the user named that
 * cannot be read or is malformed (err->line: where). A malformed file
 * beside the database is left out and named by tt_schema_warning, as is a
 * schema left incomplete by the deadline. Whatever was read is saved in
 * the cache. */
tt_schema *tt_schema_load(tt_db *db, const tt_schema_load_opts *o, tt_error *err);
/* How a schema was read. */
typedef struct tt_schema_state {
  bool cached;            /* the catalog came from the cache */
  size_t tables;          /* tables and views */
  size_t pending;         /* tables whose rows are not read yet: the schema is incomplete */
  size_t outdated;        /* tables whose rows were read before their data last changed */
  bool values;            /* it has a value index */
  bool values_cached;     /* ... all of it from the cache */
  size_t values_pending, values_outdated; /* tables, as above, for the index */
} tt_schema_state;
const tt_schema_state *tt_schema_get_state(const tt_schema *s);
void tt_schema_set_state(tt_schema *s, const tt_schema_state *st);
/* Nothing pending: every table's rows (and values) were read. */
bool tt_schema_complete(const tt_schema *s);
/* Nothing pending and nothing outdated: a refresh has nothing to do. */
bool tt_schema_current(const tt_schema *s);
/* What tt_schema_load left out and why ("knowledge file x.json:3: ...;
 * going on without it"), or NULL. */
const char *tt_schema_warning(const tt_schema *s);
/* What was left out, as a JSON array of strings (empty when nothing): what
 * the database holds that is not read (tt_db_warning: a CSV folder's files
 * that are not regular files inside it) and tt_schema_warning. The text
 * and JSON of the schema (tt_schema_render_text, tt_schema_to_json: its
 * "notes") carry them too. */
json_t *tt_schema_notes_json(const tt_schema *s);
void tt_schema_set_warning(tt_schema *s, const char *warning);

/* ---- description vectors (vectors.c) ---------------------------------------
 * One vector per table from an embedding model, over the table's own words
 * (tt_schema_embed_text), kept in the cache folder per database (the
 * catalog's identity) and per model, each with a hash of the text it came
 * from so that a table whose description changed is embedded again. */

/* What a table is embedded by: "Table NAME: DESCRIPTION. Columns: COL
 * (DESCRIPTION), COL, ..." — names and descriptions (SQL comments, the
 * knowledge file), never a value of the data, a row count or a sample:
 * also what private mode may send. */
void tt_schema_embed_text(const tt_schema *s, size_t i, tt_buf *out);
/* The vectors of model (an identity such as tt_llm_embed_identity gives)
 * for s: those the cache holds for this database and model whose table
 * text is unchanged; the rest missing. Never NULL. */
tt_schema_vectors *tt_schema_vectors_open(const tt_schema *s, const char *model);
void tt_schema_vectors_free(tt_schema_vectors *v);
/* Indexes of the tables with no vector yet, into out (room for
 * tt_schema_count); how many. */
size_t tt_schema_vectors_missing(const tt_schema_vectors *v, size_t *out);
/* Sets table i's vector (copied; dim numbers); false when dim is not the
 * one the other vectors have. */
bool tt_schema_vectors_set(tt_schema_vectors *v, size_t i, const float *vec, size_t dim);
/* Writes them to the cache when any was set since they were read (and the
 * schema was loaded through a cache folder); true when written. */
bool tt_schema_vectors_save(tt_schema_vectors *v);
/* The numbers of each vector (0 while there is none). */
size_t tt_schema_vectors_dim(const tt_schema_vectors *v);
/* Table i's vector, or NULL. */
const float *tt_schema_vectors_get(const tt_schema_vectors *v, size_t i);
/* How many were read from the cache. */
size_t tt_schema_vectors_cached(const tt_schema_vectors *v);
/* The cache file for model (freshly allocated), or NULL without a cache folder. */
char *tt_schema_vectors_path(const tt_schema *s, const char *model);

/* ---- the cache folder's upkeep (cache_gc.c) ------------------------------ */
typedef struct tt_cache_gc_report {
  size_t removed, kept, failed;
  long long bytes;      /* removed */
  long long kept_bytes;
} tt_cache_gc_report;
/* Removes (dry_run: only counts) the catalog, value-index and description-vector files under
 * cache_dir that were not used for max_age_s seconds (0: no age limit),
 * those of databases that are gone (a file deleted, or replaced: a
 * temporary copy), files an older tabletalk wrote, and then, oldest use
 * first, as many as it takes to bring them under max_bytes (0: no limit).
 * Leaves everything else in the folder alone. */
void tt_schema_cache_gc(const char *cache_dir, long long max_age_s, long long max_bytes,
                        bool dry_run, tt_cache_gc_report *r);

#endif
