/* pg_trust.h — the PostgreSQL engine's catalog check (pg_trust.c), a
 * private header of src/db/pg/: what a query would run that the database's
 * owner defined, found in the catalog before the query is sent, and refused
 * unless the user trusts the schema it lives in (--trust-functions).
 *
 * The parse-level guard (pg_guard.c) lists what the query names (calls,
 * x.name fields, operators, relations, types: tt_pg_refs); the check is one
 * catalog query, run in a read-only transaction of its own in the same
 * round trip as the query's own BEGIN, that finds for each of them what the
 * server could run: the functions and operators a name can resolve to
 * (every overload that could be chosen, whatever the type match), and for
 * each relation read, recursively, the functions, operators and types its
 * views' definitions use (pg_depend, and the stored trees for built-in
 * functions and catalogs, whose dependencies PostgreSQL does not record),
 * its row security policies, a foreign table's handler and the functions of
 * its column types (input and output, a domain's checks, casts, operator
 * families). A function may run when it is built in (an OID below
 * FirstNormalObjectId, so not one planted in pg_catalog) and not denied, is
 * in a trusted schema, or is C code of an extension on the list of pure
 * ones. Verdicts that allow are kept on the connection for a minute, so a
 * conversation's queries cost the check once per name, and a database
 * with nothing of its own to run (its profile, read once) costs none. */
#ifndef TT_DB_PG_TRUST_H
#define TT_DB_PG_TRUST_H

#include <libpq-fe.h>

#include "db/pg/pg_guard.h"

/* Schemas the user trusts (--trust-functions, a comma-separated list). */
typedef struct tt_pg_schema_list {
  char **v;
  size_t n;
} tt_pg_schema_list;

/* list NULL or "": none. Free with tt_pg_schema_list_free. */
void tt_pg_schema_list_parse(const char *list, tt_pg_schema_list *out);
void tt_pg_schema_list_free(tt_pg_schema_list *l);

/* What one connection has learnt: its search_path and the names found
 * harmless on it. */
typedef struct tt_pg_trust tt_pg_trust;

tt_pg_trust *tt_pg_trust_new(void);
void tt_pg_trust_free(tt_pg_trust *t);
/* A new connection: the path and every verdict are learnt again. */
void tt_pg_trust_forget(tt_pg_trust *t);

/* The connection's search_path as the server expands it
 * (current_schemas(true), as text: "{public,pg_catalog}"), read once per
 * connection; NULL with err when that fails. Owned by t. */
const char *tt_pg_trust_path(tt_pg_trust *t, PGconn *conn, tt_error *err);
/* The profile of the database, once per connection (and again after a
 * minute): one SELECT of TT_PG_PROFILE_NCOLS columns: how many functions
 * may not run, how many additions to built-in types run one, and the names
 * of the functions (and aggregates) that may not run, of the operators
 * whose code may not, and of the relations whose reading runs something of
 * the database's own. A name of a query that none of these has needs no
 * check: most queries of most databases need none. tt_pg_trust_wants_profile:
 * whether it is due; tt_pg_trust_set_profile: what row 0 of r holds from
 * column col on. */
#define TT_PG_PROFILE_NCOLS 5
void tt_pg_trust_profile_sql(const tt_pg_schema_list *trust, tt_buf *sql);
bool tt_pg_trust_wants_profile(tt_pg_trust *t, const tt_pg_schema_list *trust);
void tt_pg_trust_set_profile(tt_pg_trust *t, const tt_pg_schema_list *trust, const PGresult *r,
                             int col);
/* Appends to sql the catalog check of the refs not yet known harmless on
 * this connection under these trusted schemas (nothing when every one is
 * known, and the database's additions to built-in types were checked, or
 * the profile shows nothing to find). */
void tt_pg_trust_sql(tt_pg_trust *t, const tt_pg_refs *refs, const tt_pg_schema_list *trust,
                     tt_buf *sql);
/* Reads the check's result: true when nothing would run that may not (the
 * refs become known harmless), else false with err a refusal (reason
 * function, or internals for a secret relation or function) that names
 * what would run, where, and the option that allows it. */
bool tt_pg_trust_verdict(tt_pg_trust *t, const tt_pg_refs *refs, const PGresult *res,
                         tt_error *err);

/* For the catalog's samples: the check of the relations with these oids
 * (item k is oids[k]) and of what the database defines for built-in types,
 * as SQL tabletalk runs itself (the search_path is pg_catalog). */
void tt_pg_trust_relations_sql(const int64_t *oids, size_t n, const tt_pg_schema_list *trust,
                               tt_buf *sql);
/* What the catalog's check of relations found harmless, learnt for this
 * connection as if a query had named it: the relation nsp.rel (as "nsp"."rel"
 * in SQL, which the value index's queries write), and the database's
 * additions to built-in types. */
void tt_pg_trust_learn_relation(tt_pg_trust *t, const tt_pg_schema_list *trust, const char *nsp,
                                const char *rel);
void tt_pg_trust_learn_global(tt_pg_trust *t, const tt_pg_schema_list *trust);
/* The columns of the check's result. */
#define TT_PG_TRUST_NCOLS 11
/* Why item k may not be read, from the check's rows (cells row-major,
 * TT_PG_TRUST_NCOLS a row, NULL for SQL NULL), into msg; false when
 * nothing stops it. */
bool tt_pg_trust_refusal(const char *const *cells, size_t nrows, long k, tt_buf *msg,
                         tt_db_refusal *reason);

#endif
