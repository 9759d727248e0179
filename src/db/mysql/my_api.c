/* my_api.c — loading libmariadb on first use (see my_api.h), once per
 * process, through the one dlopen helper (util/dl.c). */
#include "db/mysql/my_api.h"

#include <pthread.h>

static tt_my_api tt_my_loaded;
static const tt_my_api *tt_my_ready;
static tt_error tt_my_load_error;
static pthread_once_t tt_my_once = PTHREAD_ONCE_INIT;

static void tt_my_load(void) {
  static const char *const files[] = {"libmariadb.so.3", "libmariadb.so", NULL};
  const tt_dl_sym syms[] = {
      {"server_init", &tt_my_loaded.server_init},
      {"init", &tt_my_loaded.init},
      {"options", &tt_my_loaded.options},
      {"options4", &tt_my_loaded.options4},
      {"real_connect", &tt_my_loaded.real_connect},
      {"close", &tt_my_loaded.close},
      {"errno", &tt_my_loaded.err_no},
      {"error", &tt_my_loaded.error},
      {"sqlstate", &tt_my_loaded.sqlstate},
      {"real_query", &tt_my_loaded.real_query},
      {"real_query_start", &tt_my_loaded.real_query_start},
      {"real_query_cont", &tt_my_loaded.real_query_cont},
      {"use_result", &tt_my_loaded.use_result},
      {"store_result", &tt_my_loaded.store_result},
      {"store_result_start", &tt_my_loaded.store_result_start},
      {"store_result_cont", &tt_my_loaded.store_result_cont},
      {"free_result", &tt_my_loaded.free_result},
      {"free_result_start", &tt_my_loaded.free_result_start},
      {"free_result_cont", &tt_my_loaded.free_result_cont},
      {"fetch_row", &tt_my_loaded.fetch_row},
      {"fetch_row_start", &tt_my_loaded.fetch_row_start},
      {"fetch_row_cont", &tt_my_loaded.fetch_row_cont},
      {"fetch_lengths", &tt_my_loaded.fetch_lengths},
      {"num_fields", &tt_my_loaded.num_fields},
      {"fetch_fields", &tt_my_loaded.fetch_fields},
      {"field_count", &tt_my_loaded.field_count},
      {"get_socket", &tt_my_loaded.get_socket},
      {"get_timeout_value_ms", &tt_my_loaded.get_timeout_value_ms},
      {"thread_id", &tt_my_loaded.thread_id},
      {"get_server_info", &tt_my_loaded.get_server_info},
      {"get_server_version", &tt_my_loaded.get_server_version},
      {"real_escape_string", &tt_my_loaded.real_escape_string},
  };
  char why[200];
  switch (tt_dl_load(files, "mysql_", syms, sizeof syms / sizeof syms[0], why, sizeof why)) {
  case TT_DL_NO_LIBRARY:
    tt_error_set(&tt_my_load_error, TT_ERR_UNAVAILABLE,
                 "cannot load libmariadb to reach a MySQL or MariaDB server (%s)", why);
    tt_error_hint(&tt_my_load_error, "install it with: apt-get install libmariadb3");
    return;
  case TT_DL_NO_SYMBOL:
    tt_error_set(&tt_my_load_error, TT_ERR_UNAVAILABLE, "libmariadb lacks %s", why);
    tt_error_hint(&tt_my_load_error,
                  "install MariaDB Connector/C 3.1 or later: apt-get install libmariadb3");
    return;
  case TT_DL_OK: break;
  }
  /* once, before any thread makes a connection (mysql_library_init) */
  if (tt_my_loaded.server_init(0, NULL, NULL) != 0) {
    tt_error_set(&tt_my_load_error, TT_ERR_UNAVAILABLE, "libmariadb failed to initialise");
    return;
  }
  tt_my_ready = &tt_my_loaded; /* stays loaded for good */
}

const tt_my_api *tt_my_api_get(tt_error *err) {
  pthread_once(&tt_my_once, tt_my_load);
  if (!tt_my_ready && err) *err = tt_my_load_error;
  return tt_my_ready;
}
