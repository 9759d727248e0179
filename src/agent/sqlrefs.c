/* sqlrefs.c — which tables of the catalog a query names in FROM and JOIN,
 * and under which aliases, so that an error hint can look for a wrong
 * column name where the query means it to be. A light tokenizer, not a
 * parser: it skips strings and comments, follows parentheses, and takes the
 * identifier after FROM, JOIN or a comma of a FROM list as a table, with the
 * word after it (or after AS) as its alias. Names that are not tables of the
 * catalog (CTEs, subqueries, table-valued functions) are left out. */
#include "agent/agent_internal.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

typedef enum { TT_TOK_WORD, TT_TOK_QUOTED, TT_TOK_PUNCT, TT_TOK_OTHER } tt_tok_kind;

typedef struct {
  tt_tok_kind kind;
  const char *s; /* for quoted names, the text between the quotes */
  size_t n;
} tt_tok;

typedef struct {
  tt_tok *v;
  size_t n, cap;
} tt_toks;

static void tt_toks_push(tt_toks *t, tt_tok_kind kind, const char *s, size_t n) {
  if (t->n == t->cap) {
    t->cap = t->cap ? t->cap * 2 : 64;
    t->v = tt_xrealloc(t->v, t->cap * sizeof *t->v);
  }
  t->v[t->n++] = (tt_tok){kind, s, n};
}

static bool tt_is_word_char(unsigned char c) {
  return isalnum(c) || c == '_' || c == '$' || c >= 0x80;
}

/* Past a quoted run that opened at p[0] and closes with `close` (doubled to
 * escape); returns the position after the closing quote or the end. */
static const char *tt_skip_quoted(const char *p, char close, size_t *inner) {
  const char *q = p + 1;
  while (*q) {
    if (*q == close && q[1] == close && close != ']') q += 2;
    else if (*q == close) break;
    else q++;
  }
  *inner = (size_t)(q - (p + 1));
  return *q ? q + 1 : q;
}

static void tt_tokenize(const char *p, tt_toks *out) {
  while (*p) {
    unsigned char c = (unsigned char)*p;
    size_t inner;
    if (isspace(c)) {
      p++;
    } else if (c == '-' && p[1] == '-') {
      while (*p && *p != '\n') p++;
    } else if (c == '/' && p[1] == '*') {
      const char *end = strstr(p + 2, "*/");
      p = end ? end + 2 : p + strlen(p);
    } else if (c == '\'') {
      p = tt_skip_quoted(p, '\'', &inner);
      tt_toks_push(out, TT_TOK_OTHER, "", 0);
    } else if (c == '"' || c == '`' || c == '[') {
      const char *start = p + 1;
      p = tt_skip_quoted(p, c == '[' ? ']' : (char)c, &inner);
      tt_toks_push(out, TT_TOK_QUOTED, start, inner);
    } else if (isdigit(c)) {
      while (tt_is_word_char((unsigned char)*p) || *p == '.') p++;
      tt_toks_push(out, TT_TOK_OTHER, "", 0);
    } else if (tt_is_word_char(c)) {
      const char *start = p;
      while (tt_is_word_char((unsigned char)*p)) p++;
      tt_toks_push(out, TT_TOK_WORD, start, (size_t)(p - start));
    } else {
      tt_toks_push(out, TT_TOK_PUNCT, p, 1);
      p++;
    }
  }
}

static bool tt_tok_is(const tt_tok *t, const char *word) {
  return t->kind == TT_TOK_WORD && strlen(word) == t->n && strncasecmp(t->s, word, t->n) == 0;
}

static bool tt_tok_punct(const tt_toks *t, size_t i, char c) {
  return i < t->n && t->v[i].kind == TT_TOK_PUNCT && t->v[i].s[0] == c;
}

static bool tt_tok_in(const tt_tok *t, const char *const *words) {
  for (; *words; words++)
    if (tt_tok_is(t, *words)) return true;
  return false;
}

/* Words that end a FROM list. */
static const char *const tt_clause_words[] = {"WHERE",  "GROUP",  "ORDER",     "LIMIT",     "HAVING",
                                              "UNION",  "EXCEPT", "INTERSECT", "WINDOW",    "SELECT",
                                              "VALUES", "RETURNING", NULL};
/* Words that may follow a table and are not its alias. */
static const char *const tt_not_alias_words[] = {
    "WHERE", "GROUP",   "ORDER", "LIMIT", "HAVING", "UNION", "EXCEPT", "INTERSECT", "WINDOW",
    "JOIN",  "LEFT",    "RIGHT", "FULL",  "INNER",  "OUTER", "CROSS",  "NATURAL",   "ON",
    "USING", "INDEXED", "NOT",   "AS",    "SELECT", "FROM",  "VALUES", "RETURNING", NULL};

/* A token that can name a table or an alias. */
static bool tt_tok_is_name(const tt_tok *t) {
  return t->kind == TT_TOK_QUOTED || (t->kind == TT_TOK_WORD && !tt_tok_in(t, tt_not_alias_words));
}

static void tt_refs_add(tt_sql_table_refs *r, const tt_table_info *t, const tt_tok *alias) {
  r->refs = tt_xrealloc(r->refs, (r->n + 1) * sizeof *r->refs);
  r->refs[r->n].table = t;
  r->refs[r->n].alias = alias ? tt_xstrndup(alias->s, alias->n) : NULL;
  r->n++;
}

/* One table reference starting at token i; returns the index after it. */
static size_t tt_read_table_ref(const tt_catalog *cat, const tt_toks *t, size_t i, tt_sql_table_refs *r) {
  const tt_tok *name = &t->v[i++];
  if (tt_tok_punct(t, i, '.') && i + 1 < t->n && tt_tok_is_name(&t->v[i + 1])) { /* main.Track */
    name = &t->v[i + 1];
    i += 2;
  }
  if (tt_tok_punct(t, i, '(')) return i; /* a table-valued function */
  const tt_tok *alias = NULL;
  if (i + 1 < t->n && tt_tok_is(&t->v[i], "AS") && tt_tok_is_name(&t->v[i + 1])) {
    alias = &t->v[i + 1];
    i += 2;
  } else if (i < t->n && tt_tok_is_name(&t->v[i])) {
    alias = &t->v[i++];
  }
  char *s = tt_xstrndup(name->s, name->n);
  const tt_table_info *info = tt_catalog_find(cat, s);
  free(s);
  if (info) tt_refs_add(r, info, alias);
  return i;
}

#define TT_SQLREFS_MAX_DEPTH 64

tt_sql_table_refs *tt_sql_table_refs_find(const tt_catalog *cat, const char *sql) {
  tt_sql_table_refs *r = tt_xcalloc(1, sizeof *r);
  tt_toks t = {0};
  tt_tokenize(sql, &t);
  bool in_from[TT_SQLREFS_MAX_DEPTH] = {false};
  size_t depth = 0;
  bool expect_table = false;
  for (size_t i = 0; i < t.n;) {
    const tt_tok *k = &t.v[i];
    if (tt_tok_punct(&t, i, '(')) {
      if (depth + 1 < TT_SQLREFS_MAX_DEPTH) in_from[++depth] = false;
      expect_table = false;
    } else if (tt_tok_punct(&t, i, ')')) {
      if (depth > 0) depth--;
      expect_table = false;
    } else if (tt_tok_punct(&t, i, ',')) {
      expect_table = in_from[depth];
    } else if (tt_tok_is(k, "FROM") || tt_tok_is(k, "JOIN")) {
      in_from[depth] = true;
      expect_table = true;
    } else if (tt_tok_in(k, tt_clause_words)) {
      in_from[depth] = false;
      expect_table = false;
    } else if (expect_table && tt_tok_is_name(k)) {
      i = tt_read_table_ref(cat, &t, i, r);
      expect_table = false;
      continue;
    } else {
      expect_table = false;
    }
    i++;
  }
  free(t.v);
  return r;
}

void tt_sql_table_refs_free(tt_sql_table_refs *r) {
  if (!r) return;
  for (size_t i = 0; i < r->n; i++) free(r->refs[i].alias);
  free(r->refs);
  free(r);
}
