/* ddb_make.c — the tests' maker of DuckDB files, by DuckDB itself: runs
 * SQL on a database (a .duckdb file, or ":memory:" to COPY data out as
 * Parquet or JSON) through the same libduckdb tabletalk loads, with none
 * of tabletalk's lock. Usage: ddb_make DB SQL. Exit 77 (skip) when
 * libduckdb is not installed, so that a test can say so. */
#include <stdio.h>
#include <string.h>

#include "db/duckdb/ddb_api.h"

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: ddb_make DB SQL\n");
    return 2;
  }
  tt_error err;
  const tt_ddb_api *api = tt_ddb_api_get(&err);
  if (!api) {
    fprintf(stderr, "ddb_make: %s (%s)\n", err.message, err.hint);
    return 77;
  }
  ddb_database db = NULL;
  ddb_connection conn = NULL;
  char *why = NULL;
  const char *path = strcmp(argv[1], ":memory:") == 0 ? NULL : argv[1];
  if (api->open_ext(path, &db, NULL, &why) != DDB_SUCCESS) {
    fprintf(stderr, "ddb_make: cannot open %s: %s\n", argv[1], why ? why : "?");
    return 1;
  }
  if (api->connect(db, &conn) != DDB_SUCCESS) return 1;
  ddb_result r;
  memset(&r, 0, sizeof r);
  int rc = 0;
  if (api->query(conn, argv[2], &r) != DDB_SUCCESS) {
    fprintf(stderr, "ddb_make: %s\n", api->result_error(&r));
    rc = 1;
  }
  api->destroy_result(&r);
  api->disconnect(&conn);
  api->close(&db);
  return rc;
}
