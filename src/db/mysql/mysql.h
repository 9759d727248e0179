/* mysql.h — the MySQL/MariaDB engine's own header, seen only by the files
 * of src/db/mysql/ (and the units that test them): the engine's state, a
 * URL taken apart (my_url.c), connecting (mysql.c), running one statement
 * (my_run.c), what the guard leaves to the server's catalog (my_check.c)
 * and the catalog (my_catalog.c). The guard and its tokenizer have their
 * own headers (my_guard.h, my_lex.h). */
#ifndef TT_DB_MYSQL_H
#define TT_DB_MYSQL_H

#include "db/engine.h"
#include "db/mysql/my_api.h"
#include "db/mysql/my_guard.h"

/* ---- the URL (my_url.c) ---------------------------------------------------- */

typedef enum tt_my_ssl_mode {
  TT_MY_SSL_DISABLED,
  TT_MY_SSL_PREFERRED,
  TT_MY_SSL_REQUIRED,
  TT_MY_SSL_VERIFY_CA,
  TT_MY_SSL_VERIFY_IDENTITY,
  TT_MY_SSL_DEFAULT, /* not given: the library's default */
} tt_my_ssl_mode;

typedef struct tt_my_conninfo {
  char *host;     /* NULL: localhost (the library's default socket) */
  unsigned port;  /* 0: 3306 */
  char *socket;   /* a Unix socket's path, or NULL */
  char *user;
  char *password; /* NULL: none given (the library may read MYSQL_PWD) */
  char *database;
  tt_my_ssl_mode ssl_mode;
  char *ssl_ca, *ssl_capath, *ssl_cert, *ssl_key;
  unsigned connect_timeout; /* seconds; 0: from the time limit */
} tt_my_conninfo;

/* uri (mysql://, mariadb://) into ci (free with tt_my_conninfo_free),
 * with the environment's defaults; false with err (TT_ERR_CONFIG, never
 * showing the password). */
bool tt_my_conninfo_parse(const char *uri, tt_my_conninfo *ci, tt_error *err);
/* Frees and wipes (the password) ci's strings. */
void tt_my_conninfo_free(tt_my_conninfo *ci);

/* ---- the engine's state and its connections (my_conn.c) ------------------------ */

typedef struct tt_my {
  const tt_my_api *api;
  tt_my_conninfo ci;
  MYSQL *conn;          /* NULL after a lost or abandoned connection: the next
                         * query connects again */
  MYSQL *killer;        /* a second connection for KILL QUERY, made when first
                         * needed */
  bool mariadb;         /* the server says it is MariaDB */
  unsigned long version;  /* 101119 for 10.11.19 */
  char dialect[48];     /* "MariaDB 10.11.19", "MySQL 8.0.36" */
  long timeout_ms_set;  /* the session's time limit as last set (-1: not yet) */
  int lower_case_table_names;
  bool warned;          /* the account's grants were asked about (tt_db_warning) */
  char *warning;        /* what they allow that a read-only account would not, or NULL */
} tt_my;

static inline tt_my *tt_my_of(const tt_db *db) { return (tt_my *)db->state; }

/* (Re)connects db's state: a new session set up read-only (utf8mb4, a
 * fixed sql_mode, SET SESSION TRANSACTION READ ONLY). False with err. */
bool tt_my_connect(tt_db *db, tt_error *err);
/* The connection is gone (lost, or closed after the server ignored a
 * KILL): closes what is left so that the next query connects again. */
void tt_my_drop_connection(tt_my *my);
/* Asks the server, from the second connection, to stop the statement the
 * session of thread runs (KILL QUERY). False when that cannot be sent. */
bool tt_my_kill_query(tt_db *db, unsigned long thread);

/* ---- running a statement (my_run.c) --------------------------------------- */

typedef struct tt_my_run tt_my_run;

/* One statement (guarded unless db->trusted_text) in a READ ONLY
 * transaction under the time limit timeout_s: its columns known, rows
 * read one at a time. NULL with err. */
tt_my_run *tt_my_run_open(tt_db *db, const char *sql, size_t len, double timeout_s,
                          tt_error *err);
/* 1: a row and its weight; 0: the end; -1: err. */
int tt_my_run_next(tt_my_run *run, const tt_value **row, size_t *row_bytes, tt_error *err);
/* Stops what is left of the statement (KILL QUERY), rolls back, frees. */
void tt_my_run_close(tt_my_run *run);
tt_engine_cursor *tt_my_run_base(tt_my_run *run);

/* One statement of tabletalk's own inside the run's transaction (the
 * guard's catalog lookups), its rows whole; NULL with err. */
tt_result *tt_my_run_lookup(void *run, const char *sql, tt_error *err);

/* ---- the guard's questions to the catalog (my_check.c) --------------------- */

/* Looks up what refs names in information_schema: views (their
 * definitions checked by the guard in turn, views under views too),
 * generated columns of the tables named (their expressions checked),
 * and stored functions named like keywords; false with err (a refusal)
 * when something the statement would run is not allowed. Runs inside the
 * statement's READ ONLY transaction, as tabletalk's own SQL. */
typedef tt_result *(*tt_my_lookup_fn)(void *ctx, const char *sql, tt_error *err);
bool tt_my_check_refs(tt_my_lookup_fn lookup, void *ctx, const tt_my_refs *refs,
                      const tt_my_guard_opts *gopts, tt_error *err);
/* Whether the view schema.name may be read (its definition, and all it
 * reads, pass the guard): for the catalog's samples, through
 * tabletalk's own queries (tt_catalog_query). false with err. */
bool tt_my_check_view(tt_db *db, const char *schema, const char *name, tt_error *err);
/* The guard's settings for db (its current database, trusted schemas). */
tt_my_guard_opts tt_my_guard_opts_for(const tt_db *db);

/* ---- the catalog (my_catalog.c) -------------------------------------------- */

tt_catalog *tt_my_catalog_load(tt_db *db, tt_error *err);
void tt_my_sql_column_values(const tt_table_info *t, const tt_column_info *c, long scan_rows,
                             long max_len, tt_buf *out);
bool tt_my_is_text_type(const char *decltype);
/* A MySQL identifier: `name` with backticks doubled. */
void tt_my_put_ident(tt_buf *b, const char *name);
/* A MySQL string literal: 'text' with quotes and backslashes escaped. */
void tt_my_put_string(tt_buf *b, const char *s);

#endif
