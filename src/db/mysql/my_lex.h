/* my_lex.h — a tokenizer of MySQL's and MariaDB's lexical rules, the
 * ground the MySQL guard (my_guard.c) stands on: it splits SQL text into
 * the tokens the server's own lexer would see (sql_lex.cc), with the
 * session's sql_mode fixed by the engine (no ANSI_QUOTES, no
 * NO_BACKSLASH_ESCAPES, no IGNORE_SPACE, no ORACLE), the connection's
 * character set utf8mb4, and comments dropped. Where the server would read
 * something this tokenizer cannot tell for sure (an executable comment
 * that MySQL runs, an optimizer hint, a comment or string left open), it
 * stops with an error instead of guessing. Pure: no server, no state. */
#ifndef TT_DB_MY_LEX_H
#define TT_DB_MY_LEX_H

#include <stdbool.h>
#include <stddef.h>

typedef enum tt_my_tok_kind {
  TT_MY_TOK_WORD,   /* an unquoted identifier or keyword (may start with a digit: 1abc) */
  TT_MY_TOK_QIDENT, /* a `quoted` identifier */
  TT_MY_TOK_STRING, /* '...' or "..." (N'..', _charset'..' are a WORD, then this) */
  TT_MY_TOK_NUMBER, /* 12, 1.5, 1e5, .5, 0x1F, 0b101, X'1F', B'101' */
  TT_MY_TOK_VAR,    /* a user variable: @name, @'name', @`name`, @"name" */
  TT_MY_TOK_SYSVAR, /* a system variable: @@name, @@session.name, @@global.name */
  TT_MY_TOK_OP,     /* punctuation and operators: ( ) , . ; := <=> -> ... */
} tt_my_tok_kind;

typedef struct tt_my_tok {
  tt_my_tok_kind kind;
  size_t start, len; /* the token's bytes in the text */
  bool glued;        /* no blank or comment between it and the token before */
  bool name_only;    /* a WORD read as a name, never a keyword: it follows a
                      * dot directly (t.into, t.1e5 are columns) */
} tt_my_tok;

/* Why the text could not be split safely. */
typedef enum tt_my_lex_fail {
  TT_MY_LEX_OK = 0,
  TT_MY_LEX_OPEN_STRING,   /* a string or `identifier` never closed */
  TT_MY_LEX_OPEN_COMMENT,  /* a comment never closed */
  TT_MY_LEX_EXEC_COMMENT,  /* a comment the server executes: MySQL's and MariaDB's
                            * versioned comments, MariaDB's M! comments */
  TT_MY_LEX_HINT,          /* an optimizer hint comment (can set variables per statement) */
  TT_MY_LEX_BAD_LITERAL,   /* X'..' or B'..' with a character that is no digit of it */
} tt_my_lex_fail;

typedef struct tt_my_lexed {
  tt_my_tok *toks;
  size_t n, cap;
  tt_my_lex_fail fail; /* TT_MY_LEX_OK when every byte was read */
  size_t fail_at;      /* where the problem starts */
} tt_my_lexed;

/* Splits sql (len bytes, need not be NUL-terminated) into out (free with
 * tt_my_lex_free). Returns false with out->fail set when the text cannot
 * be read safely; the tokens before the problem are kept. */
bool tt_my_lex(const char *sql, size_t len, tt_my_lexed *out);
void tt_my_lex_free(tt_my_lexed *l);

/* The name a WORD, QIDENT (`` `a``b` `` is a`b) or VAR/SYSVAR names, in
 * out (at most n-1 bytes, then cut); returns its full length. */
size_t tt_my_tok_name(const char *sql, const tt_my_tok *t, char *out, size_t n);

#endif
