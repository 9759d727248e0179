/* curl_api.c — loading libcurl on first use with dlopen (see curl_api.h),
 * once per process. */
#include "llm/curl_api.h"
#include "llm/llm.h"

#include <dlfcn.h>
#include <stdio.h>
#include <pthread.h>
#include <string.h>

static tt_curl_api tt_curl_loaded;
static const tt_curl_api *tt_curl_ready;
static char tt_curl_error[256];
static pthread_once_t tt_curl_once = PTHREAD_ONCE_INIT;

/* Casting a symbol to a function pointer, as dlsym's own documentation
 * does. */
#define TT_RESOLVE(field, name)                                            \
  do {                                                                     \
    void *sym = dlsym(lib, name);                                          \
    if (!sym) {                                                            \
      snprintf(tt_curl_error, sizeof tt_curl_error, "libcurl lacks %s", name); \
      return;                                                              \
    }                                                                      \
    memcpy(&tt_curl_loaded.field, &sym, sizeof sym);                       \
  } while (0)

static void tt_curl_load(void) {
  void *lib = dlopen("libcurl.so.4", RTLD_LAZY | RTLD_LOCAL);
  if (!lib) lib = dlopen("libcurl.so", RTLD_LAZY | RTLD_LOCAL);
  if (!lib) {
    snprintf(tt_curl_error, sizeof tt_curl_error,
             "cannot load libcurl (%s); install it with: apt-get install libcurl4", dlerror());
    return;
  }
  TT_RESOLVE(global_init, "curl_global_init");
  TT_RESOLVE(easy_init, "curl_easy_init");
  TT_RESOLVE(easy_cleanup, "curl_easy_cleanup");
  TT_RESOLVE(easy_reset, "curl_easy_reset");
  TT_RESOLVE(easy_setopt, "curl_easy_setopt");
  TT_RESOLVE(easy_perform, "curl_easy_perform");
  TT_RESOLVE(easy_getinfo, "curl_easy_getinfo");
  TT_RESOLVE(easy_strerror, "curl_easy_strerror");
  TT_RESOLVE(slist_append, "curl_slist_append");
  TT_RESOLVE(slist_free_all, "curl_slist_free_all");
  if (tt_curl_loaded.global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
    snprintf(tt_curl_error, sizeof tt_curl_error, "libcurl failed to initialise");
    return;
  }
  tt_curl_ready = &tt_curl_loaded; /* the library stays loaded for good */
}

const tt_curl_api *tt_curl_api_get(tt_buf *err) {
  pthread_once(&tt_curl_once, tt_curl_load);
  if (!tt_curl_ready && err) tt_buf_puts(err, tt_curl_error);
  return tt_curl_ready;
}

static void *tt_curl_preload_thread(void *arg) {
  (void)arg;
  tt_curl_api_get(NULL);
  return NULL;
}

void tt_llm_http_preload(void) {
  pthread_t t;
  if (pthread_create(&t, NULL, tt_curl_preload_thread, NULL) == 0) pthread_detach(t);
}
