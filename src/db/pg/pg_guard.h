/* pg_guard.h — the PostgreSQL backend's parse-level guard (pg_guard.c), a
 * private header of the db layer.
 *
 * Before any SQL reaches a PostgreSQL server, tt_pg_guard_check parses it
 * with libpg_query (the server's own PostgreSQL 15 grammar) and accepts
 * only one plain read: a SELECT, VALUES, TABLE or WITH of selects, with no
 * data-modifying CTE, no SELECT INTO, no locking clause, and only functions
 * on an allow-list (docs/guide/postgresql.md, "The guard"). It is the first layer
 * of several: the backend still runs what passes inside a READ ONLY
 * transaction under timeouts, with a row cap, and always rolls back. */
#ifndef TT_DB_PG_GUARD_H
#define TT_DB_PG_GUARD_H

#include <stdbool.h>
#include <stddef.h>

#include "db/db.h"

/* Settings of the guard; a zeroed struct (or NULL) is the default. */
typedef struct tt_pg_guard_opts {
  /* Functions allowed beyond the built-in list, each "name" (allows the
   * unqualified call) or "schema.name" (allows exactly that qualified
   * call). Explicitly denied names (pg_read_file, pg_sleep...) stay
   * denied whatever this says. */
  const char *const *allow_functions;
  size_t nallow_functions;
  /* Schemas whose functions and operators the user trusts
   * (--trust-functions): a call or OPERATOR() qualified with one passes,
   * and an unqualified name off the allow-list is left to the catalog
   * check (TT_PG_REF_TRUSTED_CALL) instead of refused. */
  const char *const *trust_schemas;
  size_t ntrust_schemas;
} tt_pg_guard_opts;

/* What a query names that the server resolves through the catalog: the
 * catalog check (pg_trust.c) finds what each would run. Names as the
 * parser gives them (folded, unquoted); schema NULL when unqualified. */
typedef enum tt_pg_ref_kind {
  TT_PG_REF_CALL = 'f',         /* a function call name(...) with nargs arguments */
  TT_PG_REF_TRUSTED_CALL = 'F', /* ... of a name off the allow-list: every function it
                                 * can be must be in a trusted schema */
  TT_PG_REF_FIELD = 'c',        /* x.name: a column, or column notation for name(x) */
  TT_PG_REF_OPERATOR = 'o',     /* an operator, written or implied (IN, BETWEEN,
                                 * LIKE, CASE x WHEN, USING) */
  TT_PG_REF_RELATION = 'r',     /* a table, view or CTE name in FROM */
  TT_PG_REF_TYPE = 't',         /* a type named in a cast or column definition */
} tt_pg_ref_kind;

typedef struct tt_pg_ref {
  char kind;     /* tt_pg_ref_kind */
  char *schema;  /* NULL: unqualified */
  char *name;
  int nargs;     /* calls: the arguments given; -1: any number may match */
} tt_pg_ref;

typedef struct tt_pg_refs {
  tt_pg_ref *v;
  size_t n, cap;
} tt_pg_refs;

void tt_pg_refs_free(tt_pg_refs *refs);

/* Checks sql (len bytes, need not be NUL-terminated) before it is sent to
 * the server. Returns true when it is one allowed read. Otherwise returns
 * false with err filled in:
 *  - TT_ERR_REFUSED with err->reason = TEXT (NUL byte, invalid UTF-8),
 *    EMPTY (only comments or blanks), MULTIPLE (a second statement),
 *    WRITE, SCHEMA, TRANSACTION, FUNCTION, EXPLAIN or OTHER, and a message
 *    that names what was refused and what to do instead;
 *  - TT_ERR_SQL for a syntax error, with the parser's message and the
 *    character position;
 *  - TT_ERR_LIMIT for text over the length limit or nested too deeply;
 *  - TT_ERR_IO when libpg_query cannot be loaded (it is loaded with
 *    dlopen on first use, once per process).
 * Current_setting of a custom setting (a name with a dot: app.api_key) or
 * of a setting that names server paths is refused (internals), as is a
 * name the query computes.
 * Thread-safe; keeps no state between calls. */
bool tt_pg_guard_check(const char *sql, size_t len, const tt_pg_guard_opts *opts,
                       tt_error *err);
/* The same check, also collecting into refs (each once) the names the
 * query has the server resolve; refs holds them whatever the result (free
 * with tt_pg_refs_free). */
bool tt_pg_guard_collect(const char *sql, size_t len, const tt_pg_guard_opts *opts,
                         tt_pg_refs *refs, tt_error *err);

/* Why a built-in function of this name may not run, wherever it is called
 * (a view's definition included), or NULL. */
const char *tt_pg_guard_denied_why(const char *name);
/* Why a built-in relation of the system schema nsp ("pg_catalog",
 * "information_schema") may not be read (it holds secrets or shows server
 * paths), or NULL. */
const char *tt_pg_guard_secret_why(const char *nsp, const char *rel);

#endif
