/* ddb_api.h — the part of DuckDB's C API (https://duckdb.org/docs/api/c/)
 * that tabletalk calls, declared here from the documentation (no copy of
 * duckdb.h): the handle types, the result struct the API passes by value,
 * the enum values it documents as stable (statement types, type ids), and
 * a table of function pointers that ddb_api.c fills from libduckdb.so
 * loaded on first use (util/dl.c). SQLite-only runs never load it. */
#ifndef TT_DB_DDB_API_H
#define TT_DB_DDB_API_H

#include <stdbool.h>
#include <stdint.h>

#include "util/util.h"

typedef uint64_t ddb_idx;

/* Opaque handles: each a pointer to a struct holding one internal pointer. */
typedef struct ddb_database_s { void *internal_ptr; } *ddb_database;
typedef struct ddb_connection_s { void *internal_ptr; } *ddb_connection;
typedef struct ddb_config_s { void *internal_ptr; } *ddb_config;
typedef struct ddb_prepared_s { void *internal_ptr; } *ddb_prepared;
typedef struct ddb_extracted_s { void *internal_ptr; } *ddb_extracted;
typedef struct ddb_logical_type_s { void *internal_ptr; } *ddb_logical_type;
typedef struct ddb_data_chunk_s { void *internal_ptr; } *ddb_data_chunk;
typedef struct ddb_vector_s { void *internal_ptr; } *ddb_vector;

/* duckdb_result: passed by value to duckdb_fetch_chunk, so its layout
 * matters (the deprecated fields are never read). */
typedef struct ddb_result {
  ddb_idx deprecated_column_count;
  ddb_idx deprecated_row_count;
  ddb_idx deprecated_rows_changed;
  void *deprecated_columns;
  char *deprecated_error_message;
  void *internal_data;
} ddb_result;

/* duckdb_string_t: 16 bytes; up to 12 bytes inline after the length,
 * longer ones behind a pointer at offset 8. */
typedef struct ddb_string {
  union {
    struct { uint32_t length; char prefix[4]; char *ptr; } pointer;
    struct { uint32_t length; char inlined[12]; } inlined;
  } value;
} ddb_string;

typedef struct { int32_t days; } ddb_date;
typedef struct { int64_t micros; } ddb_time;
typedef struct { int64_t micros; } ddb_timestamp;
typedef struct { int32_t year; int8_t month; int8_t day; } ddb_date_struct;
typedef struct { int8_t hour; int8_t min; int8_t sec; int32_t micros; } ddb_time_struct;
typedef struct { ddb_date_struct date; ddb_time_struct time; } ddb_timestamp_struct;
typedef struct { uint64_t lower; int64_t upper; } ddb_hugeint;

typedef enum { DDB_SUCCESS = 0, DDB_ERROR = 1 } ddb_state;

/* DUCKDB_TYPE: the values the C API documents. */
typedef enum ddb_type {
  DDB_TYPE_INVALID = 0,
  DDB_TYPE_BOOLEAN = 1,
  DDB_TYPE_TINYINT = 2,
  DDB_TYPE_SMALLINT = 3,
  DDB_TYPE_INTEGER = 4,
  DDB_TYPE_BIGINT = 5,
  DDB_TYPE_UTINYINT = 6,
  DDB_TYPE_USMALLINT = 7,
  DDB_TYPE_UINTEGER = 8,
  DDB_TYPE_UBIGINT = 9,
  DDB_TYPE_FLOAT = 10,
  DDB_TYPE_DOUBLE = 11,
  DDB_TYPE_TIMESTAMP = 12,
  DDB_TYPE_DATE = 13,
  DDB_TYPE_TIME = 14,
  DDB_TYPE_INTERVAL = 15,
  DDB_TYPE_HUGEINT = 16,
  DDB_TYPE_VARCHAR = 17,
  DDB_TYPE_BLOB = 18,
  DDB_TYPE_DECIMAL = 19,
  DDB_TYPE_TIMESTAMP_S = 20,
  DDB_TYPE_TIMESTAMP_MS = 21,
  DDB_TYPE_TIMESTAMP_NS = 22,
  DDB_TYPE_ENUM = 23,
  DDB_TYPE_LIST = 24,
  DDB_TYPE_STRUCT = 25,
  DDB_TYPE_MAP = 26,
  DDB_TYPE_UUID = 27,
  DDB_TYPE_UNION = 28,
  DDB_TYPE_BIT = 29,
  DDB_TYPE_TIME_TZ = 30,
  DDB_TYPE_TIMESTAMP_TZ = 31,
  DDB_TYPE_UHUGEINT = 32,
  DDB_TYPE_ARRAY = 33,
  DDB_TYPE_SQLNULL = 36,
} ddb_type;

/* duckdb_statement_type: only SELECT is ever run for the user. */
typedef enum ddb_statement_type {
  DDB_STATEMENT_INVALID = 0,
  DDB_STATEMENT_SELECT = 1,
  DDB_STATEMENT_INSERT = 2,
  DDB_STATEMENT_UPDATE = 3,
  DDB_STATEMENT_EXPLAIN = 4,
  DDB_STATEMENT_DELETE = 5,
  DDB_STATEMENT_PREPARE = 6,
  DDB_STATEMENT_CREATE = 7,
  DDB_STATEMENT_EXECUTE = 8,
  DDB_STATEMENT_ALTER = 9,
  DDB_STATEMENT_TRANSACTION = 10,
  DDB_STATEMENT_COPY = 11,
  DDB_STATEMENT_ANALYZE = 12,
  DDB_STATEMENT_VARIABLE_SET = 13,
  DDB_STATEMENT_CREATE_FUNC = 14,
  DDB_STATEMENT_DROP = 15,
  DDB_STATEMENT_EXPORT = 16,
  DDB_STATEMENT_PRAGMA = 17,
  DDB_STATEMENT_VACUUM = 18,
  DDB_STATEMENT_CALL = 19,
  DDB_STATEMENT_SET = 20,
  DDB_STATEMENT_LOAD = 21,
  DDB_STATEMENT_RELATION = 22,
  DDB_STATEMENT_EXTENSION = 23,
  DDB_STATEMENT_LOGICAL_PLAN = 24,
  DDB_STATEMENT_ATTACH = 25,
  DDB_STATEMENT_DETACH = 26,
  DDB_STATEMENT_MULTI = 27,
} ddb_statement_type;

typedef struct tt_ddb_api {
  const char *(*library_version)(void);
  ddb_state (*create_config)(ddb_config *config);
  ddb_state (*set_config)(ddb_config config, const char *name, const char *option);
  void (*destroy_config)(ddb_config *config);
  ddb_state (*open_ext)(const char *path, ddb_database *out, ddb_config config, char **out_error);
  void (*close)(ddb_database *db);
  ddb_state (*connect)(ddb_database db, ddb_connection *out);
  void (*disconnect)(ddb_connection *conn);
  void (*interrupt)(ddb_connection conn);
  void (*free)(void *ptr);
  ddb_state (*query)(ddb_connection conn, const char *sql, ddb_result *out);
  const char *(*result_error)(ddb_result *result);
  void (*destroy_result)(ddb_result *result);
  ddb_idx (*extract_statements)(ddb_connection conn, const char *sql, ddb_extracted *out);
  const char *(*extract_statements_error)(ddb_extracted extracted);
  ddb_state (*prepare_extracted_statement)(ddb_connection conn, ddb_extracted extracted,
                                           ddb_idx index, ddb_prepared *out);
  void (*destroy_extracted)(ddb_extracted *extracted);
  const char *(*prepare_error)(ddb_prepared prepared);
  ddb_statement_type (*prepared_statement_type)(ddb_prepared prepared);
  ddb_idx (*nparams)(ddb_prepared prepared);
  void (*destroy_prepare)(ddb_prepared *prepared);
  ddb_idx (*prepared_statement_column_count)(ddb_prepared prepared);
  ddb_type (*prepared_statement_column_type)(ddb_prepared prepared, ddb_idx col);
  /* allocated: free with free (duckdb_free) */
  const char *(*prepared_statement_column_name)(ddb_prepared prepared, ddb_idx col);
  ddb_state (*execute_prepared_streaming)(ddb_prepared prepared, ddb_result *out);
  ddb_data_chunk (*fetch_chunk)(ddb_result result);
  ddb_idx (*column_count)(ddb_result *result);
  const char *(*column_name)(ddb_result *result, ddb_idx col);
  ddb_logical_type (*column_logical_type)(ddb_result *result, ddb_idx col);
  ddb_type (*get_type_id)(ddb_logical_type type);
  uint8_t (*decimal_width)(ddb_logical_type type);
  uint8_t (*decimal_scale)(ddb_logical_type type);
  ddb_type (*decimal_internal_type)(ddb_logical_type type);
  ddb_type (*enum_internal_type)(ddb_logical_type type);
  uint32_t (*enum_dictionary_size)(ddb_logical_type type);
  char *(*enum_dictionary_value)(ddb_logical_type type, ddb_idx index);
  void (*destroy_logical_type)(ddb_logical_type *type);
  ddb_idx (*data_chunk_get_size)(ddb_data_chunk chunk);
  ddb_vector (*data_chunk_get_vector)(ddb_data_chunk chunk, ddb_idx col);
  void (*destroy_data_chunk)(ddb_data_chunk *chunk);
  void *(*vector_get_data)(ddb_vector vector);
  uint64_t *(*vector_get_validity)(ddb_vector vector);
  ddb_date_struct (*from_date)(ddb_date date);
  ddb_time_struct (*from_time)(ddb_time time);
  ddb_timestamp_struct (*from_timestamp)(ddb_timestamp ts);
} tt_ddb_api;

/* The loaded API, once per process; NULL with err (TT_ERR_UNAVAILABLE,
 * naming the command that installs the library) when libduckdb cannot be
 * loaded. Looks at $TABLETALK_DUCKDB_LIBRARY, then the library
 * scripts/fetch-duckdb.sh put in the source tree's third_party/duckdb/,
 * then the loader's own search path (libduckdb.so). */
const tt_ddb_api *tt_ddb_api_get(tt_error *err);

#endif
