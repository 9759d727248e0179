/* my_lex.c — MySQL's and MariaDB's lexical rules as their servers apply
 * them (sql_lex.cc, the same in both), for the guard: blanks, the three
 * kinds of comment (# to the end of the line, "-- " with a blank or a
 * control character after the dashes, and slash-star to the first
 * star-slash), strings in single or double quotes with backslash escapes
 * and doubled quotes, `identifiers` with doubled backticks, numbers
 * (0x1F, 0b1, 1e5, 1.5, .5, and 1abc, which is a name), X'..' and B'..'
 * literals, user and system variables, and operators. A name directly
 * after a name and a dot is read as a name even when it starts with a
 * digit (t.1e5 names a column), as the server does. See my_lex.h. */
#include "db/mysql/my_lex.h"

#include <stdlib.h>
#include <string.h>

#include "util/util.h"

static bool tt_my_ident_char(unsigned char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '$' || c >= 0x80;
}

static bool tt_my_digit(unsigned char c) { return c >= '0' && c <= '9'; }

static bool tt_my_hex(unsigned char c) {
  return tt_my_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

/* The server's my_isspace for utf8mb4: tab, newline, vertical tab, form
 * feed, carriage return, space. */
static bool tt_my_space(unsigned char c) { return c == ' ' || (c >= '\t' && c <= '\r'); }

typedef struct tt_my_lexer {
  const unsigned char *s;
  size_t len, i;
  tt_my_lexed *out;
  bool glued;     /* nothing skipped since the last token */
  bool ident_sep; /* the last token is a dot after an unquoted name: read a name next */
} tt_my_lexer;

static void tt_my_emit(tt_my_lexer *lx, tt_my_tok_kind kind, size_t start, size_t end) {
  tt_my_lexed *o = lx->out;
  if (o->n == o->cap) {
    o->cap = o->cap ? o->cap * 2 : 64;
    o->toks = tt_xrealloc(o->toks, o->cap * sizeof *o->toks);
  }
  o->toks[o->n++] =
      (tt_my_tok){.kind = kind, .start = start, .len = end - start, .glued = lx->glued};
  lx->glued = true;
  lx->i = end;
}

/* A name from start to end; a dot right after it and before a name
 * character makes the next token a name too (the server's
 * MY_LEX_IDENT_SEP: t.1e5 names column 1e5 of t). */
static void tt_my_word(tt_my_lexer *lx, size_t start, size_t end) {
  tt_my_emit(lx, TT_MY_TOK_WORD, start, end);
  if (end + 1 < lx->len && lx->s[end] == '.' && tt_my_ident_char(lx->s[end + 1])) {
    tt_my_emit(lx, TT_MY_TOK_OP, end, end + 1);
    lx->ident_sep = true;
  }
}

static bool tt_my_fail(tt_my_lexer *lx, tt_my_lex_fail why, size_t at) {
  lx->out->fail = why;
  lx->out->fail_at = at;
  return false;
}

/* The end of a quoted run opened at i by q: backslash escapes one byte
 * (strings only), a doubled quote is one quote. 0 when never closed. */
static size_t tt_my_quoted_end(const tt_my_lexer *lx, size_t i, unsigned char q, bool escapes) {
  size_t j = i + 1;
  while (j < lx->len) {
    unsigned char c = lx->s[j];
    if (escapes && c == '\\') {
      j += 2;
      continue;
    }
    if (c == q) {
      if (j + 1 < lx->len && lx->s[j + 1] == q) {
        j += 2;
        continue;
      }
      return j + 1;
    }
    j++;
  }
  return 0;
}

static size_t tt_my_ident_end(const tt_my_lexer *lx, size_t j) {
  while (j < lx->len && tt_my_ident_char(lx->s[j])) j++;
  return j;
}

/* Skips blanks and comments; false when a comment cannot be read safely. */
static bool tt_my_skip(tt_my_lexer *lx) {
  const unsigned char *s = lx->s;
  for (;;) {
    size_t i = lx->i;
    if (i >= lx->len) return true;
    unsigned char c = s[i];
    if (tt_my_space(c)) {
      lx->i++;
    } else if (c == '#' ||
               (c == '-' && i + 1 < lx->len && s[i + 1] == '-' &&
                (i + 2 >= lx->len || s[i + 2] <= ' ' || s[i + 2] == 0x7f))) {
      const unsigned char *nl = memchr(s + i, '\n', lx->len - i);
      lx->i = nl ? (size_t)(nl - s) : lx->len; /* the newline is a blank */
    } else if (c == '/' && i + 1 < lx->len && s[i + 1] == '*') {
      size_t b = i + 2;
      if (b < lx->len && s[b] == '!') return tt_my_fail(lx, TT_MY_LEX_EXEC_COMMENT, i);
      if (b + 1 < lx->len && (s[b] == 'M' || s[b] == 'm') && s[b + 1] == '!')
        return tt_my_fail(lx, TT_MY_LEX_EXEC_COMMENT, i);
      if (b < lx->len && s[b] == '+') return tt_my_fail(lx, TT_MY_LEX_HINT, i);
      size_t j = b;
      while (j + 1 < lx->len && !(s[j] == '*' && s[j + 1] == '/')) j++;
      if (j + 1 >= lx->len) return tt_my_fail(lx, TT_MY_LEX_OPEN_COMMENT, i);
      lx->i = j + 2;
    } else {
      return true;
    }
    lx->glued = false;
    lx->ident_sep = false;
  }
}

/* X'1F' (hex digits) or B'101' (binary digits), opened at i. */
static bool tt_my_bits_literal(tt_my_lexer *lx, size_t i, bool hex) {
  size_t j = i + 2;
  while (j < lx->len && lx->s[j] != '\'') {
    unsigned char c = lx->s[j];
    if (hex ? !tt_my_hex(c) : (c != '0' && c != '1'))
      return tt_my_fail(lx, TT_MY_LEX_BAD_LITERAL, i);
    j++;
  }
  if (j >= lx->len) return tt_my_fail(lx, TT_MY_LEX_OPEN_STRING, i);
  if (hex && (j - i - 2) % 2 != 0) return tt_my_fail(lx, TT_MY_LEX_BAD_LITERAL, i);
  tt_my_emit(lx, TT_MY_TOK_NUMBER, i, j + 1);
  return true;
}

/* A token that starts with a digit: a number, or a name (1abc, 0x1g), as
 * the server's MY_LEX_NUMBER_IDENT decides. */
static bool tt_my_number(tt_my_lexer *lx, size_t i) {
  const unsigned char *s = lx->s;
  size_t len = lx->len;
  if (s[i] == '0' && i + 1 < len && (s[i + 1] == 'x' || s[i + 1] == 'b')) {
    bool hex = s[i + 1] == 'x';
    size_t j = i + 2;
    while (j < len && (hex ? tt_my_hex(s[j]) : (s[j] == '0' || s[j] == '1'))) j++;
    if (j > i + 2 && (j >= len || !tt_my_ident_char(s[j]))) {
      tt_my_emit(lx, TT_MY_TOK_NUMBER, i, j);
      return true;
    }
    tt_my_word(lx, i, tt_my_ident_end(lx, i));
    return true;
  }
  size_t j = i;
  while (j < len && tt_my_digit(s[j])) j++;
  if (j >= len || !tt_my_ident_char(s[j])) {
    if (j < len && s[j] == '.') { /* 1.5, 1.5e-3, 1. */
      j++;
      while (j < len && tt_my_digit(s[j])) j++;
      if (j < len && (s[j] == 'e' || s[j] == 'E')) {
        size_t k = j + 1;
        if (k < len && (s[k] == '+' || s[k] == '-')) k++;
        if (k >= len || !tt_my_digit(s[k])) return tt_my_fail(lx, TT_MY_LEX_BAD_LITERAL, i);
        while (k < len && tt_my_digit(s[k])) k++;
        j = k;
      }
    }
    tt_my_emit(lx, TT_MY_TOK_NUMBER, i, j);
    return true;
  }
  if (s[j] == 'e' || s[j] == 'E') { /* 1e5, 1e+5: the number ends after its digits */
    size_t k = j + 1;
    if (k < len && (s[k] == '+' || s[k] == '-')) k++;
    if (k < len && tt_my_digit(s[k])) {
      while (k < len && tt_my_digit(s[k])) k++;
      tt_my_emit(lx, TT_MY_TOK_NUMBER, i, k);
      return true;
    }
  }
  tt_my_word(lx, i, tt_my_ident_end(lx, i));
  return true;
}

/* .5 and .5e3 (a number), or the dot of a qualified name. */
static bool tt_my_dot(tt_my_lexer *lx, size_t i) {
  const unsigned char *s = lx->s;
  if (i + 1 < lx->len && tt_my_digit(s[i + 1])) {
    size_t j = i + 1;
    while (j < lx->len && tt_my_digit(s[j])) j++;
    if (j < lx->len && (s[j] == 'e' || s[j] == 'E')) {
      size_t k = j + 1;
      if (k < lx->len && (s[k] == '+' || s[k] == '-')) k++;
      if (k >= lx->len || !tt_my_digit(s[k])) return tt_my_fail(lx, TT_MY_LEX_BAD_LITERAL, i);
      while (k < lx->len && tt_my_digit(s[k])) k++;
      j = k;
    }
    tt_my_emit(lx, TT_MY_TOK_NUMBER, i, j);
    return true;
  }
  /* the server's MY_LEX_IDENT_SEP again: a name character right after the
   * dot starts a name, not a keyword (`t`.into, .into) */
  tt_my_emit(lx, TT_MY_TOK_OP, i, i + 1);
  if (i + 1 < lx->len && tt_my_ident_char(s[i + 1])) lx->ident_sep = true;
  return true;
}

/* @name, @'name', @`name`, @"name", @@name, @@session.name, or a lone @. */
static bool tt_my_variable(tt_my_lexer *lx, size_t i) {
  const unsigned char *s = lx->s;
  size_t len = lx->len;
  if (i + 1 < len && s[i + 1] == '@') {
    size_t j = i + 2;
    if (j < len && s[j] == '`') {
      size_t e = tt_my_quoted_end(lx, j, '`', false);
      if (!e) return tt_my_fail(lx, TT_MY_LEX_OPEN_STRING, j);
      tt_my_emit(lx, TT_MY_TOK_SYSVAR, i, e);
      return true;
    }
    size_t e = tt_my_ident_end(lx, j);
    if (e < len && s[e] == '.' && e + 1 < len) { /* @@session.name */
      size_t k = e + 1;
      size_t e2 = s[k] == '`' ? tt_my_quoted_end(lx, k, '`', false) : tt_my_ident_end(lx, k);
      if (!e2) return tt_my_fail(lx, TT_MY_LEX_OPEN_STRING, k);
      if (e2 > k) e = e2;
    }
    tt_my_emit(lx, TT_MY_TOK_SYSVAR, i, e);
    return true;
  }
  if (i + 1 < len && (s[i + 1] == '\'' || s[i + 1] == '"' || s[i + 1] == '`')) {
    size_t e = tt_my_quoted_end(lx, i + 1, s[i + 1], s[i + 1] != '`');
    if (!e) return tt_my_fail(lx, TT_MY_LEX_OPEN_STRING, i + 1);
    tt_my_emit(lx, TT_MY_TOK_VAR, i, e);
    return true;
  }
  size_t e = i + 1;
  while (e < len && (tt_my_ident_char(s[e]) || s[e] == '.')) e++;
  tt_my_emit(lx, e > i + 1 ? TT_MY_TOK_VAR : TT_MY_TOK_OP, i, e);
  return true;
}

static void tt_my_operator(tt_my_lexer *lx, size_t i) {
  static const char *const ops[] = {"<=>", "->>", ":=", "<=", ">=", "<>", "!=", "<<",
                                    ">>",  "||",  "&&", "->"};
  for (size_t k = 0; k < sizeof ops / sizeof ops[0]; k++) {
    size_t n = strlen(ops[k]);
    if (i + n <= lx->len && memcmp(lx->s + i, ops[k], n) == 0) {
      tt_my_emit(lx, TT_MY_TOK_OP, i, i + n);
      return;
    }
  }
  tt_my_emit(lx, TT_MY_TOK_OP, i, i + 1);
}

static bool tt_my_next(tt_my_lexer *lx) {
  size_t i = lx->i;
  const unsigned char *s = lx->s;
  unsigned char c = s[i];
  bool after_sep = lx->ident_sep && lx->glued;
  lx->ident_sep = false;
  if (after_sep && tt_my_ident_char(c)) { /* t.1e5: a name, whatever it starts with */
    size_t k = lx->out->n;
    tt_my_word(lx, i, tt_my_ident_end(lx, i));
    lx->out->toks[k].name_only = true;
  } else if (c == '\'' || c == '"' || c == '`') {
    size_t e = tt_my_quoted_end(lx, i, c, c != '`');
    if (!e) return tt_my_fail(lx, TT_MY_LEX_OPEN_STRING, i);
    tt_my_emit(lx, c == '`' ? TT_MY_TOK_QIDENT : TT_MY_TOK_STRING, i, e);
  } else if ((c == 'x' || c == 'X' || c == 'b' || c == 'B') && i + 1 < lx->len &&
             s[i + 1] == '\'') {
    return tt_my_bits_literal(lx, i, c == 'x' || c == 'X');
  } else if (tt_my_digit(c)) {
    return tt_my_number(lx, i);
  } else if (tt_my_ident_char(c)) {
    tt_my_word(lx, i, tt_my_ident_end(lx, i));
  } else if (c == '.') {
    return tt_my_dot(lx, i);
  } else if (c == '@') {
    return tt_my_variable(lx, i);
  } else {
    tt_my_operator(lx, i);
  }
  return true;
}

bool tt_my_lex(const char *sql, size_t len, tt_my_lexed *out) {
  memset(out, 0, sizeof *out);
  tt_my_lexer lx = {.s = (const unsigned char *)sql, .len = len, .out = out, .glued = true};
  for (;;) {
    if (!tt_my_skip(&lx)) return false;
    if (lx.i >= len) return true;
    if (!tt_my_next(&lx)) return false;
  }
}

void tt_my_lex_free(tt_my_lexed *l) {
  if (!l) return;
  free(l->toks);
  memset(l, 0, sizeof *l);
}

size_t tt_my_tok_name(const char *sql, const tt_my_tok *t, char *out, size_t n) {
  const char *p = sql + t->start;
  size_t len = t->len, w = 0;
  char quote = 0;
  if (t->kind == TT_MY_TOK_VAR) {
    p++, len--;
  } else if (t->kind == TT_MY_TOK_SYSVAR) {
    p += 2, len -= 2;
  }
  if (len >= 2 && (p[0] == '`' || p[0] == '\'' || p[0] == '"') &&
      (t->kind == TT_MY_TOK_QIDENT || t->kind == TT_MY_TOK_VAR || t->kind == TT_MY_TOK_SYSVAR)) {
    quote = p[0];
    p++, len -= 2;
  }
  for (size_t i = 0; i < len; i++) {
    char c = p[i];
    if (quote && c == quote && i + 1 < len && p[i + 1] == quote) i++;
    else if (quote && quote != '`' && c == '\\' && i + 1 < len) c = p[++i];
    if (w + 1 < n) out[w] = c;
    w++;
  }
  if (n) out[w < n ? w : n - 1] = '\0';
  return w;
}
