/* sha256.c — SHA-256 through OpenSSL's libcrypto (installed with libcurl),
 * loaded with dlopen when first needed so that no command pays for it at
 * start-up. Used to verify downloaded models and to sign the state the MCP
 * server hands to clients. */
#include "util/util.h"

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

static void tt_evp_load(void) {
  static const char *const files[] = {"libcrypto.so.3", "libcrypto.so", NULL};
  const tt_dl_sym syms[] = {
      {"EVP_MD_CTX_new", &tt_evp_api.ctx_new},
      {"EVP_MD_CTX_free", &tt_evp_api.ctx_free},
      {"EVP_sha256", &tt_evp_api.sha256},
      {"EVP_DigestInit_ex", &tt_evp_api.init},
      {"EVP_DigestUpdate", &tt_evp_api.update},
      {"EVP_DigestFinal_ex", &tt_evp_api.final},
      {"HMAC", &tt_evp_api.hmac},
  };
  char why[200];
  tt_evp_ready = tt_dl_load(files, NULL, syms, sizeof syms / sizeof syms[0], why, sizeof why) == TT_DL_OK;
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
