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
} tt_pg_guard_opts;

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
 * Thread-safe; keeps no state between calls. */
bool tt_pg_guard_check(const char *sql, size_t len, const tt_pg_guard_opts *opts,
                       tt_error *err);

#endif
