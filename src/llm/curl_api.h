/* curl_api.h — libcurl, loaded when the first HTTP backend is created
 * rather than when the program starts: libcurl and the libraries it pulls
 * in cost about 3 ms of start-up, which `tabletalk sql` and `schema` must
 * not pay. Only the functions the HTTP backend uses are resolved. */
#ifndef TT_CURL_API_H
#define TT_CURL_API_H

#include <curl/curl.h>

#include "util/util.h"

typedef struct tt_curl_api {
  CURLcode (*global_init)(long flags);
  CURL *(*easy_init)(void);
  void (*easy_cleanup)(CURL *c);
  void (*easy_reset)(CURL *c);
  CURLcode (*easy_setopt)(CURL *c, CURLoption opt, ...);
  CURLcode (*easy_perform)(CURL *c);
  CURLcode (*easy_getinfo)(CURL *c, CURLINFO info, ...);
  const char *(*easy_strerror)(CURLcode code);
  struct curl_slist *(*slist_append)(struct curl_slist *list, const char *s);
  void (*slist_free_all)(struct curl_slist *list);
} tt_curl_api;

/* The loaded and initialised library, or NULL (why in err:
 * TT_ERR_UNAVAILABLE, what to install in the hint) when libcurl is not
 * installed. Safe to call from several threads. */
const tt_curl_api *tt_curl_api_get(tt_error *err);

#endif
