/* hash.c — FNV-1a, the small non-cryptographic hash used for cache keys,
 * versions and bucket choices (not for anything an attacker chooses to
 * collide: that is SHA-256's job, in sha256.c). */
#include "util/util.h"

uint64_t tt_fnv1a64(uint64_t h, const void *data, size_t n) {
  const unsigned char *p = data;
  for (size_t i = 0; i < n; i++) h = (h ^ p[i]) * 1099511628211ULL;
  return h;
}

uint32_t tt_fnv1a32(uint32_t h, const void *data, size_t n) {
  const unsigned char *p = data;
  for (size_t i = 0; i < n; i++) h = (h ^ p[i]) * 16777619u;
  return h;
}
