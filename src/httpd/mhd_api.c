/* mhd_api.c — loading libmicrohttpd on first use with dlopen (see
 * mhd_api.h), once per process. */
#include "httpd/mhd_api.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>

static tt_mhd_api tt_mhd_loaded;
static const tt_mhd_api *tt_mhd_ready;
static char tt_mhd_error[512];
static pthread_once_t tt_mhd_once = PTHREAD_ONCE_INIT;

static void tt_mhd_load(void) {
  static const char *const files[] = {"libmicrohttpd.so.12", "libmicrohttpd.so", NULL};
  const tt_dl_sym syms[] = {
      {"start_daemon", &tt_mhd_loaded.start_daemon},
      {"stop_daemon", &tt_mhd_loaded.stop_daemon},
      {"get_daemon_info", &tt_mhd_loaded.get_daemon_info},
      {"lookup_connection_value", &tt_mhd_loaded.lookup_connection_value},
      {"get_connection_info", &tt_mhd_loaded.get_connection_info},
      {"create_response_from_buffer", &tt_mhd_loaded.create_response_from_buffer},
      {"create_response_from_callback", &tt_mhd_loaded.create_response_from_callback},
      {"add_response_header", &tt_mhd_loaded.add_response_header},
      {"queue_response", &tt_mhd_loaded.queue_response},
      {"destroy_response", &tt_mhd_loaded.destroy_response},
      {"set_connection_option", &tt_mhd_loaded.set_connection_option},
  };
  char why[200];
  switch (tt_dl_load(files, "MHD_", syms, sizeof syms / sizeof syms[0], why, sizeof why)) {
  case TT_DL_NO_LIBRARY:
    snprintf(tt_mhd_error, sizeof tt_mhd_error,
             "cannot load libmicrohttpd for --http (%s); install it with: apt-get install "
             "libmicrohttpd12",
             why);
    return;
  case TT_DL_NO_SYMBOL:
    snprintf(tt_mhd_error, sizeof tt_mhd_error, "libmicrohttpd lacks %s; install libmicrohttpd12", why);
    return;
  case TT_DL_OK: break;
  }
  tt_mhd_ready = &tt_mhd_loaded;
}

const tt_mhd_api *tt_mhd_api_get(tt_error *err) {
  pthread_once(&tt_mhd_once, tt_mhd_load);
  if (!tt_mhd_ready) tt_error_set(err, TT_ERR_UNAVAILABLE, "%s", tt_mhd_error);
  return tt_mhd_ready;
}
