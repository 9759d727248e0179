/* ddb_api.c — loading libduckdb on first use (see ddb_api.h), once per
 * process, through the one dlopen helper (util/dl.c): the file
 * TABLETALK_DUCKDB_LIBRARY names, else where `cmake --install` puts it
 * (TT_DUCKDB_LIB_RELDIR, relative to the program's folder), else where
 * scripts/fetch-duckdb.sh put it for the build tree, else the loader's
 * own search path. */
#include "db/duckdb/ddb_api.h"

#include <pthread.h>
#include <stdlib.h>

#ifndef TT_DUCKDB_LIBRARY_PATH
#define TT_DUCKDB_LIBRARY_PATH "third_party/duckdb/libduckdb.so"
#endif
#ifndef TT_DUCKDB_LIB_RELDIR
#define TT_DUCKDB_LIB_RELDIR "../lib/tabletalk"
#endif

static tt_ddb_api tt_ddb_loaded;
static const tt_ddb_api *tt_ddb_ready;
static tt_error tt_ddb_load_error;
static pthread_once_t tt_ddb_once = PTHREAD_ONCE_INIT;

static void tt_ddb_load(void) {
  const char *env = getenv("TABLETALK_DUCKDB_LIBRARY");
  const char *files[] = {"$ORIGIN/" TT_DUCKDB_LIB_RELDIR "/libduckdb.so", TT_DUCKDB_LIBRARY_PATH,
                         "libduckdb.so", NULL};
  const char *chosen[] = {env, NULL};
  tt_ddb_api *a = &tt_ddb_loaded;
  const tt_dl_sym syms[] = {
      {"library_version", &a->library_version},
      {"create_config", &a->create_config},
      {"set_config", &a->set_config},
      {"destroy_config", &a->destroy_config},
      {"open_ext", &a->open_ext},
      {"close", &a->close},
      {"connect", &a->connect},
      {"disconnect", &a->disconnect},
      {"interrupt", &a->interrupt},
      {"free", &a->free},
      {"query", &a->query},
      {"result_error", &a->result_error},
      {"destroy_result", &a->destroy_result},
      {"extract_statements", &a->extract_statements},
      {"extract_statements_error", &a->extract_statements_error},
      {"prepare_extracted_statement", &a->prepare_extracted_statement},
      {"destroy_extracted", &a->destroy_extracted},
      {"prepare_error", &a->prepare_error},
      {"prepared_statement_type", &a->prepared_statement_type},
      {"nparams", &a->nparams},
      {"destroy_prepare", &a->destroy_prepare},
      {"prepared_statement_column_count", &a->prepared_statement_column_count},
      {"prepared_statement_column_type", &a->prepared_statement_column_type},
      {"prepared_statement_column_name", &a->prepared_statement_column_name},
      {"execute_prepared_streaming", &a->execute_prepared_streaming},
      {"fetch_chunk", &a->fetch_chunk},
      {"column_count", &a->column_count},
      {"column_name", &a->column_name},
      {"column_logical_type", &a->column_logical_type},
      {"get_type_id", &a->get_type_id},
      {"decimal_width", &a->decimal_width},
      {"decimal_scale", &a->decimal_scale},
      {"decimal_internal_type", &a->decimal_internal_type},
      {"enum_internal_type", &a->enum_internal_type},
      {"enum_dictionary_size", &a->enum_dictionary_size},
      {"enum_dictionary_value", &a->enum_dictionary_value},
      {"destroy_logical_type", &a->destroy_logical_type},
      {"data_chunk_get_size", &a->data_chunk_get_size},
      {"data_chunk_get_vector", &a->data_chunk_get_vector},
      {"destroy_data_chunk", &a->destroy_data_chunk},
      {"vector_get_data", &a->vector_get_data},
      {"vector_get_validity", &a->vector_get_validity},
      {"from_date", &a->from_date},
      {"from_time", &a->from_time},
      {"from_timestamp", &a->from_timestamp},
  };
  char why[300];
  switch (tt_dl_load(env && *env ? chosen : files, "duckdb_", syms, sizeof syms / sizeof syms[0], why, sizeof why)) {
  case TT_DL_NO_LIBRARY:
    tt_error_set(&tt_ddb_load_error, TT_ERR_UNAVAILABLE,
                 "cannot load libduckdb, which reads Parquet, JSON, .duckdb files and large "
                 "CSV (%s)",
                 why);
    tt_error_hint(&tt_ddb_load_error,
                  "install it with: scripts/deps.sh (it runs scripts/fetch-duckdb.sh), or point "
                  "TABLETALK_DUCKDB_LIBRARY at a libduckdb.so; a CSV file can be read without "
                  "it with --engine sqlite");
    return;
  case TT_DL_NO_SYMBOL:
    tt_error_set(&tt_ddb_load_error, TT_ERR_UNAVAILABLE, "libduckdb lacks %s", why);
    tt_error_hint(&tt_ddb_load_error,
                  "install the pinned release with: scripts/fetch-duckdb.sh (DuckDB 1.5)");
    return;
  case TT_DL_OK: break;
  }
  tt_ddb_ready = a; /* stays loaded for good */
}

const tt_ddb_api *tt_ddb_api_get(tt_error *err) {
  pthread_once(&tt_ddb_once, tt_ddb_load);
  if (!tt_ddb_ready && err) *err = tt_ddb_load_error;
  return tt_ddb_ready;
}
