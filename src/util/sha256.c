/* sha256.c — SHA-256 through OpenSSL's libcrypto (installed with libcurl),
 * loaded with dlopen when first needed so that no command pays for it at
 * start-up. Used to verify downloaded models and to sign the state the MCP
 * server hands to clients. */
#include "util/util.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct tt_evp {
  void *(*ctx_new)(void);
  void (*ctx_free)(void *ctx);
  const void *(*sha256)(void);
  int (*init)(void *ctx, const void *md, void *engine);
  int (*update)(void *ctx, const void *data, size_t n);
  int (*final)(void *ctx, unsigned char *md, unsigned int *n);
  unsigned char *(*hmac)(const void *md, const void *key, int key_len, const unsigned char *d,
                         size_t n, unsigned char *out, unsigned int *out_len);
} tt_evp;

static tt_evp tt_evp_api;
static bool tt_evp_ready;
static pthread_once_t tt_evp_once = PTHREAD_ONCE_INIT;

#define TT_SYM(field, name)                                  \
  do {                                                       \
    void *sym = dlsym(lib, name);                            \
    if (!sym) return;                                        \
    memcpy(&tt_evp_api.field, &sym, sizeof sym);             \
  } while (0)

static void tt_evp_load(void) {
  void *lib = dlopen("libcrypto.so.3", RTLD_LAZY | RTLD_LOCAL);
  if (!lib) lib = dlopen("libcrypto.so", RTLD_LAZY | RTLD_LOCAL);
  if (!lib) return;
  TT_SYM(ctx_new, "EVP_MD_CTX_new");
  TT_SYM(ctx_free, "EVP_MD_CTX_free");
  TT_SYM(sha256, "EVP_sha256");
  TT_SYM(init, "EVP_DigestInit_ex");
  TT_SYM(update, "EVP_DigestUpdate");
  TT_SYM(final, "EVP_DigestFinal_ex");
  TT_SYM(hmac, "HMAC");
  tt_evp_ready = true;
}

struct tt_sha256 {
  void *ctx;
};

tt_sha256 *tt_sha256_new(void) {
  pthread_once(&tt_evp_once, tt_evp_load);
  if (!tt_evp_ready) return NULL;
  void *ctx = tt_evp_api.ctx_new();
  if (!ctx || !tt_evp_api.init(ctx, tt_evp_api.sha256(), NULL)) {
    if (ctx) tt_evp_api.ctx_free(ctx);
    return NULL;
  }
  tt_sha256 *h = tt_xcalloc(1, sizeof *h);
  h->ctx = ctx;
  return h;
}

void tt_sha256_update(tt_sha256 *h, const void *data, size_t n) { tt_evp_api.update(h->ctx, data, n); }

void tt_sha256_finish(tt_sha256 *h, char hex[65]) {
  unsigned char md[32];
  unsigned int n = 0;
  tt_evp_api.final(h->ctx, md, &n);
  for (unsigned i = 0; i < 32; i++) snprintf(hex + 2 * i, 3, "%02x", md[i]);
  tt_evp_api.ctx_free(h->ctx);
  free(h);
}

bool tt_hmac_sha256(const void *key, size_t key_len, const void *msg, size_t n, char hex[65]) {
  pthread_once(&tt_evp_once, tt_evp_load);
  if (!tt_evp_ready || key_len > 1024) return false;
  unsigned char md[32];
  unsigned int len = 0;
  if (!tt_evp_api.hmac(tt_evp_api.sha256(), key, (int)key_len, msg, n, md, &len) || len != 32)
    return false;
  for (unsigned i = 0; i < 32; i++) snprintf(hex + 2 * i, 3, "%02x", md[i]);
  return true;
}
