/* my_api.h — MariaDB Connector/C (Debian's libmariadb, which speaks to
 * MySQL servers too), loaded with dlopen when the first MySQL or MariaDB
 * target is opened, never at start: `tabletalk --version` and every run
 * on SQLite or PostgreSQL do without it, and a machine without it gets a
 * message naming the package instead of a binary that will not start.
 * Only the functions the engine calls are resolved. */
#ifndef TT_DB_MY_API_H
#define TT_DB_MY_API_H

#include <mysql.h>

#include "util/util.h"

typedef struct tt_my_api {
  int (*server_init)(int argc, char **argv, char **groups);
  MYSQL *(*init)(MYSQL *m);
  int (*options)(MYSQL *m, enum mysql_option option, const void *arg);
  int (*options4)(MYSQL *m, enum mysql_option option, const void *arg1, const void *arg2);
  MYSQL *(*real_connect)(MYSQL *m, const char *host, const char *user, const char *passwd,
                         const char *db, unsigned int port, const char *unix_socket,
                         unsigned long clientflag);
  void (*close)(MYSQL *m);
  unsigned int (*err_no)(MYSQL *m);
  const char *(*error)(MYSQL *m);
  const char *(*sqlstate)(MYSQL *m);
  int (*real_query)(MYSQL *m, const char *q, unsigned long length);
  int (*real_query_start)(int *ret, MYSQL *m, const char *q, unsigned long length);
  int (*real_query_cont)(int *ret, MYSQL *m, int status);
  MYSQL_RES *(*use_result)(MYSQL *m);
  MYSQL_RES *(*store_result)(MYSQL *m);
  int (*store_result_start)(MYSQL_RES **ret, MYSQL *m);
  int (*store_result_cont)(MYSQL_RES **ret, MYSQL *m, int status);
  void (*free_result)(MYSQL_RES *r);
  int (*free_result_start)(MYSQL_RES *r);
  int (*free_result_cont)(MYSQL_RES *r, int status);
  MYSQL_ROW (*fetch_row)(MYSQL_RES *r);
  int (*fetch_row_start)(MYSQL_ROW *ret, MYSQL_RES *r);
  int (*fetch_row_cont)(MYSQL_ROW *ret, MYSQL_RES *r, int status);
  unsigned long *(*fetch_lengths)(MYSQL_RES *r);
  unsigned int (*num_fields)(MYSQL_RES *r);
  MYSQL_FIELD *(*fetch_fields)(MYSQL_RES *r);
  unsigned int (*field_count)(MYSQL *m);
  my_socket (*get_socket)(MYSQL *m);
  unsigned int (*get_timeout_value_ms)(const MYSQL *m);
  unsigned long (*thread_id)(MYSQL *m);
  const char *(*get_server_info)(MYSQL *m);
  unsigned long (*get_server_version)(MYSQL *m);
  unsigned long (*real_escape_string)(MYSQL *m, char *to, const char *from, unsigned long length);
} tt_my_api;

/* The loaded library, or NULL with err (TT_ERR_UNAVAILABLE, the package to
 * install in the hint) when it cannot be loaded. Thread-safe; loads once
 * per process. */
const tt_my_api *tt_my_api_get(tt_error *err);

#endif
