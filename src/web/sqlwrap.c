/* sqlwrap.c — a user's query as a subquery, so that the engine sorts,
 * pages and counts its whole result: SELECT * FROM (q) AS tt_rows ORDER BY
 * n LIMIT k OFFSET m, and SELECT count(*) FROM (q). The statement's own
 * text ends before trailing semicolons, blanks and comments (a lexer that
 * knows quotes, identifiers and comments of SQLite and PostgreSQL); a text
 * whose parentheses do not balance, or that goes on after a semicolon, is
 * not wrapped at all. Nothing here decides what may run: the wrapped text
 * goes through the same guard as any query, as one statement. */
#include "web/web_internal.h"

#include <string.h>

typedef struct tt_lex {
  const char *s;
  size_t n, i;
  bool pg;
} tt_lex;

static bool tt_ident_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         (unsigned char)c >= 0x80;
}

/* Skips a quoted run that started at l->i with quote q (doubled inside);
 * backslash escapes too in PostgreSQL's E'...'. False when unterminated. */
static bool tt_lex_quoted(tt_lex *l, char close, bool backslash) {
  for (l->i++; l->i < l->n; l->i++) {
    char c = l->s[l->i];
    if (backslash && c == '\\') {
      l->i++;
    } else if (c == close) {
      if (l->i + 1 < l->n && l->s[l->i + 1] == close && close != ']') {
        l->i++;
        continue;
      }
      l->i++;
      return true;
    }
  }
  return false;
}

/* A block comment, nested in PostgreSQL. False when unterminated. */
static bool tt_lex_block_comment(tt_lex *l) {
  int depth = 0;
  while (l->i + 1 < l->n) {
    if (l->s[l->i] == '/' && l->s[l->i + 1] == '*') {
      depth++;
      l->i += 2;
      if (!l->pg && depth > 1) depth = 1;
    } else if (l->s[l->i] == '*' && l->s[l->i + 1] == '/') {
      l->i += 2;
      if (--depth == 0) return true;
    } else {
      l->i++;
    }
  }
  return false;
}

/* PostgreSQL's $tag$ ... $tag$ at l->i; false when it is not one (a
 * parameter such as $1) or is unterminated (*bad). */
static bool tt_lex_dollar(tt_lex *l, bool *bad) {
  size_t j = l->i + 1;
  if (j < l->n && l->s[j] >= '0' && l->s[j] <= '9') return false;
  while (j < l->n && tt_ident_char(l->s[j]) && l->s[j] != '$') j++;
  if (j >= l->n || l->s[j] != '$') return false;
  size_t tag = j + 1 - l->i; /* "$tag$" */
  for (size_t k = j + 1; k + tag <= l->n; k++)
    if (memcmp(l->s + k, l->s + l->i, tag) == 0) {
      l->i = k + tag;
      return true;
    }
  *bad = true;
  return false;
}

bool tt_web_sql_body(const char *sql, size_t len, bool pg, size_t *body_len) {
  tt_lex l = {sql, len, 0, pg};
  size_t end = 0;
  int depth = 0;
  bool after_semicolon = false;
  while (l.i < l.n) {
    char c = sql[l.i], next = l.i + 1 < l.n ? sql[l.i + 1] : '\0';
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v') {
      l.i++;
      continue;
    }
    if (c == '-' && next == '-') {
      while (l.i < l.n && sql[l.i] != '\n') l.i++;
      continue;
    }
    if (c == '/' && next == '*') {
      if (!tt_lex_block_comment(&l)) return false;
      continue;
    }
    if (after_semicolon) return false; /* another statement */
    bool ok = true, bad = false;
    if (c == ';') {
      after_semicolon = true;
      l.i++;
      continue;
    } else if (c == '\'') {
      bool e = pg && l.i > 0 && (sql[l.i - 1] == 'E' || sql[l.i - 1] == 'e') &&
               (l.i < 2 || !tt_ident_char(sql[l.i - 2]));
      ok = tt_lex_quoted(&l, '\'', e);
    } else if (c == '"') {
      ok = tt_lex_quoted(&l, '"', false);
    } else if (!pg && c == '`') {
      ok = tt_lex_quoted(&l, '`', false);
    } else if (!pg && c == '[') {
      ok = tt_lex_quoted(&l, ']', false);
    } else if (pg && c == '$' && (l.i == 0 || !tt_ident_char(sql[l.i - 1])) &&
               tt_lex_dollar(&l, &bad)) {
      /* skipped */
    } else {
      if (bad) return false;
      if (c == '(') depth++;
      if (c == ')' && --depth < 0) return false;
      l.i++;
    }
    if (!ok || bad) return false;
    end = l.i;
  }
  if (depth != 0 || end == 0) return false;
  *body_len = end;
  return true;
}

bool tt_web_wrap(const tt_web *w, const char *sql, size_t len, const char *select, long sort,
                 bool desc, long limit, long offset, tt_buf *out) {
  size_t body;
  bool pg = tt_service_target(w->cfg->svc)->kind == TT_DB_KIND_POSTGRES;
  if (!tt_web_sql_body(sql, len, pg, &body)) return false;
  tt_buf_printf(out, "SELECT %s FROM (\n%.*s\n) AS tt_rows", select, (int)body, sql);
  if (sort > 0) tt_buf_printf(out, " ORDER BY %ld%s", sort, desc ? " DESC" : "");
  if (limit > 0) tt_buf_printf(out, " LIMIT %ld OFFSET %ld", limit, offset);
  return true;
}
