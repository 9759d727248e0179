/* mhd_api.c — loading libmicrohttpd on first use with dlopen (see
 * mhd_api.h), once per process. */
#include "mcp/mhd_api.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

static tt_mhd_api tt_mhd_loaded;
static const tt_mhd_api *tt_mhd_ready;
static char tt_mhd_error[256];
static pthread_once_t tt_mhd_once = PTHREAD_ONCE_INIT;

#define TT_RESOLVE(field, name)                                                   \
  do {                                                                            \
    void *sym = dlsym(lib, name);                                                 \
    if (!sym) {                                                                   \
      snprintf(tt_mhd_error, sizeof tt_mhd_error, "libmicrohttpd lacks %s", name); \
      return;                                                                     \
    }                                                                             \
    memcpy(&tt_mhd_loaded.field, &sym, sizeof sym);                               \
  } while (0)

static void tt_mhd_load(void) {
  void *lib = dlopen("libmicrohttpd.so.12", RTLD_LAZY | RTLD_LOCAL);
  if (!lib) lib = dlopen("libmicrohttpd.so", RTLD_LAZY | RTLD_LOCAL);
  if (!lib) {
    snprintf(tt_mhd_error, sizeof tt_mhd_error,
             "cannot load libmicrohttpd for --http (%s); install it with: apt-get install "
             "libmicrohttpd12",
             dlerror());
    return;
  }
  TT_RESOLVE(start_daemon, "MHD_start_daemon");
  TT_RESOLVE(stop_daemon, "MHD_stop_daemon");
  TT_RESOLVE(get_daemon_info, "MHD_get_daemon_info");
  TT_RESOLVE(lookup_connection_value, "MHD_lookup_connection_value");
  TT_RESOLVE(get_connection_info, "MHD_get_connection_info");
  TT_RESOLVE(create_response_from_buffer, "MHD_create_response_from_buffer");
  TT_RESOLVE(create_response_from_callback, "MHD_create_response_from_callback");
  TT_RESOLVE(add_response_header, "MHD_add_response_header");
  TT_RESOLVE(queue_response, "MHD_queue_response");
  TT_RESOLVE(destroy_response, "MHD_destroy_response");
  TT_RESOLVE(set_connection_option, "MHD_set_connection_option");
  tt_mhd_ready = &tt_mhd_loaded;
}

const tt_mhd_api *tt_mhd_api_get(tt_buf *err) {
  pthread_once(&tt_mhd_once, tt_mhd_load);
  if (!tt_mhd_ready && err) tt_buf_puts(err, tt_mhd_error);
  return tt_mhd_ready;
}
