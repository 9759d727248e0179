/* curl_api.c — loading libcurl on first use with dlopen (see curl_api.h),
 * once per process. */
#include "llm/curl_api.h"
#include "llm/llm.h"

#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

static tt_curl_api tt_curl_loaded;
static const tt_curl_api *tt_curl_ready;
static tt_error tt_curl_error;
static pthread_once_t tt_curl_once = PTHREAD_ONCE_INIT;
static atomic_bool tt_curl_preloading; /* tt_llm_http_preload started a thread */

static void tt_curl_load(void) {
  static const char *const files[] = {"libcurl.so.4", "libcurl.so", NULL};
  const tt_dl_sym syms[] = {
      {"global_init", &tt_curl_loaded.global_init},
      {"easy_init", &tt_curl_loaded.easy_init},
      {"easy_cleanup", &tt_curl_loaded.easy_cleanup},
      {"easy_reset", &tt_curl_loaded.easy_reset},
      {"easy_setopt", &tt_curl_loaded.easy_setopt},
      {"easy_perform", &tt_curl_loaded.easy_perform},
      {"easy_getinfo", &tt_curl_loaded.easy_getinfo},
      {"easy_strerror", &tt_curl_loaded.easy_strerror},
      {"slist_append", &tt_curl_loaded.slist_append},
      {"slist_free_all", &tt_curl_loaded.slist_free_all},
  };
  char why[200];
  switch (tt_dl_load(files, "curl_", syms, sizeof syms / sizeof syms[0], why, sizeof why)) {
  case TT_DL_NO_LIBRARY:
    tt_error_set(&tt_curl_error, TT_ERR_UNAVAILABLE, "cannot load libcurl (%s)", why);
    tt_error_hint(&tt_curl_error, "install it with: apt-get install libcurl4");
    return;
  case TT_DL_NO_SYMBOL:
    tt_error_set(&tt_curl_error, TT_ERR_UNAVAILABLE, "libcurl lacks %s", why);
    tt_error_hint(&tt_curl_error, "install libcurl 7.x or later");
    return;
  case TT_DL_OK: break;
  }
  if (tt_curl_loaded.global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
    tt_error_set(&tt_curl_error, TT_ERR_UNAVAILABLE, "libcurl failed to initialise");
    return;
  }
  tt_curl_ready = &tt_curl_loaded; /* the library stays loaded for good */
}

const tt_curl_api *tt_curl_api_get(tt_error *err) {
  pthread_once(&tt_curl_once, tt_curl_load);
  if (!tt_curl_ready && err) *err = tt_curl_error;
  return tt_curl_ready;
}

static void *tt_curl_preload_thread(void *arg) {
  (void)arg;
  tt_curl_api_get(NULL);
  return NULL;
}

void tt_llm_http_preload(void) {
  pthread_t t;
  if (pthread_create(&t, NULL, tt_curl_preload_thread, NULL) == 0) {
    atomic_store(&tt_curl_preloading, true);
    pthread_detach(t);
  }
}

void tt_llm_http_preload_wait(void) {
  /* pthread_once returns once the load the thread runs is over */
  if (atomic_load(&tt_curl_preloading)) pthread_once(&tt_curl_once, tt_curl_load);
}
