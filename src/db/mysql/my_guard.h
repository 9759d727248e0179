/* my_guard.h — the MySQL/MariaDB engine's statement check, before any SQL
 * reaches the server (my_guard.c). There is no SQL parser of MySQL's
 * dialect in Debian, so the check stands on a tokenizer of the server's
 * own lexical rules (my_lex.c) and admits exactly one read: a SELECT,
 * WITH, VALUES or TABLE statement, without INTO (OUTFILE, DUMPFILE,
 * @var), locking clauses (FOR UPDATE, FOR SHARE, LOCK IN SHARE MODE),
 * PROCEDURE ANALYSE, := assignments, user variables, executable or hint
 * comments, sequences (NEXT VALUE FOR), the system schemas (mysql,
 * performance_schema, sys) and the information_schema tables that show
 * other sessions' queries or the server's settings, and with only
 * built-in functions on an allow-list (LOAD_FILE, SLEEP, BENCHMARK,
 * GET_LOCK and their kind are refused by name; a stored or loadable
 * function of the database's owner by not being built in).
 *
 * What only the server knows (which names are views and what they run,
 * which names are the owner's stored functions) the check hands back in a
 * tt_my_refs for my_check.c to look up in information_schema. It is the
 * first layer of several: what passes runs in a READ ONLY transaction
 * under a time limit the server enforces, and is rolled back. */
#ifndef TT_DB_MY_GUARD_H
#define TT_DB_MY_GUARD_H

#include <stdbool.h>
#include <stddef.h>

#include "db/db.h"

/* What the text is. */
typedef enum tt_my_guard_mode {
  TT_MY_GUARD_QUERY, /* a statement a user or the model wrote */
  TT_MY_GUARD_VIEW,  /* a view's definition (information_schema.VIEWS) */
  TT_MY_GUARD_EXPR,  /* a generated column's expression */
} tt_my_guard_mode;

typedef struct tt_my_guard_opts {
  /* Schemas whose stored functions may run, comma-separated (the
   * --trust-functions option); NULL: none. */
  const char *trust_schemas;
  /* The connection's database: unqualified names live in it. */
  const char *current_db;
} tt_my_guard_opts;

/* A name the query reads, perhaps a view: schema NULL when unqualified. */
typedef struct tt_my_name {
  char *schema;
  char *name;
} tt_my_name;

/* What the check leaves to the server's catalog. */
typedef struct tt_my_refs {
  tt_my_name *names; /* names that may be tables or views */
  size_t nnames, names_cap;
  /* unqualified names called like functions: built-ins (which some
   * versions lack) and keywords that are not reserved everywhere (OVER,
   * ROW, COLUMNS...): refused when the current database has a stored
   * function of that name, which the server might call instead */
  char **maybe_stored;
  size_t nmaybe, maybe_cap;
  /* names called that must be stored functions of a trusted schema
   * (schema NULL: the current database) */
  tt_my_name *trusted_calls;
  size_t ntrusted, trusted_cap;
  size_t send_len; /* the bytes to send: the text without a trailing ';' */
} tt_my_refs;

/* At most this many distinct names are looked up per statement. */
#define TT_MY_MAX_NAMES 1000

/* Checks sql (len bytes, need not be NUL-terminated). True when it is one
 * allowed read, with refs filled in (refs may be NULL). Otherwise false
 * with err: TT_ERR_REFUSED and a reason (tt_db_refusal) and a message
 * that says what to write instead; TT_ERR_SQL for text the server could
 * not read either (an unclosed string or comment); TT_ERR_LIMIT for too
 * many names. Pure and thread-safe. Free refs with tt_my_refs_free. */
bool tt_my_guard_check(const char *sql, size_t len, tt_my_guard_mode mode,
                       const tt_my_guard_opts *opts, tt_my_refs *refs, tt_error *err);
void tt_my_refs_free(tt_my_refs *refs);

/* Whether schema is one --trust-functions names (list comma-separated,
 * compared without regard to case). */
bool tt_my_schema_trusted(const char *list, const char *schema);

/* Whether name (any case) is one of the system schemas no query may read:
 * mysql, performance_schema, sys, or information_schema when
 * also_information_schema. */
bool tt_my_system_schema(const char *name, bool also_information_schema);

#endif
