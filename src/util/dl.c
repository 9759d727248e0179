/* dl.c — loading a shared library on first use (libcrypto, libcurl,
 * libmicrohttpd, cairo) and filling a table of its functions, so that no
 * command pays for a library it does not use and a missing one is an error
 * message instead of a binary that will not start. */
#include "util/util.h"

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

tt_dl_status tt_dl_load(const char *const *files, const char *prefix, const tt_dl_sym *syms,
                        size_t n, char *why, size_t whylen) {
  void *lib = NULL;
  for (size_t i = 0; files[i] && !lib; i++) lib = dlopen(files[i], RTLD_LAZY | RTLD_LOCAL);
  if (!lib) {
    const char *e = dlerror();
    snprintf(why, whylen, "%s", e ? e : "not found");
    return TT_DL_NO_LIBRARY;
  }
  for (size_t i = 0; i < n; i++) {
    char name[128];
    snprintf(name, sizeof name, "%s%s", prefix ? prefix : "", syms[i].name);
    void *sym = dlsym(lib, name);
    if (!sym) {
      snprintf(why, whylen, "%s", name);
      dlclose(lib);
      return TT_DL_NO_SYMBOL;
    }
    /* a symbol into a function pointer, as dlsym's own documentation does */
    memcpy(syms[i].slot, &sym, sizeof sym);
  }
  return TT_DL_OK; /* the library stays loaded for good */
}
