/* my_words.h — the word lists of the MySQL/MariaDB guard (my_words.c):
 * what each list is for is said beside it there. All comparisons ignore
 * ASCII case. */
#ifndef TT_DB_MY_WORDS_H
#define TT_DB_MY_WORDS_H

#include <stdbool.h>

typedef struct tt_my_denied {
  const char *name; /* upper case; a trailing '*' matches any rest */
  const char *why;
} tt_my_denied;

/* Why a function is refused by name, or NULL. */
const char *tt_my_denied_why(const char *name);
/* A built-in function that only reads (ST_* and MBR* included). */
bool tt_my_native(const char *name);
/* A word reserved in every MySQL and MariaDB that may stand before '('. */
bool tt_my_reserved_paren(const char *word);
/* A keyword before '(' that some version lets a stored function be named. */
bool tt_my_soft_paren(const char *word);
/* A system variable a query may read. */
bool tt_my_sysvar_readable(const char *name);
/* An information_schema table no query may read. */
bool tt_my_secret_is_table(const char *name);

#endif
