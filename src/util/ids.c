/* ids.c — random hex strings from the kernel and run ids that sort in the
 * order the runs started. */
#include "util/util.h"

#include <errno.h>
#include <stdio.h>
#include <sys/random.h>
#include <time.h>

void tt_random_hex(char *out, size_t n) {
  unsigned char bytes[64];
  if (n > sizeof bytes) n = sizeof bytes;
  size_t got = 0;
  while (got < n) {
    ssize_t r = getrandom(bytes + got, n - got, 0);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) { /* no entropy source: fall back to the clock */
      unsigned long long x = (unsigned long long)(tt_now_ms() * 1000.0) ^ (unsigned long long)clock();
      for (; got < n; got++, x = x * 6364136223846793005ULL + 1442695040888963407ULL)
        bytes[got] = (unsigned char)(x >> 56);
      break;
    }
    got += (size_t)r;
  }
  static const char hex[] = "0123456789abcdef";
  for (size_t i = 0; i < n; i++) {
    out[2 * i] = hex[bytes[i] >> 4];
    out[2 * i + 1] = hex[bytes[i] & 15];
  }
  out[2 * n] = '\0';
}

/* YYYYMMDD-HHMMSS-mmmrrr: UTC time to the millisecond (mmm, decimal) and
 * three random hex digits for runs that start in the same millisecond.
 * Ids sort as text in the order the runs started, also within a second;
 * the shape is that of the older ids (six hex digits after the time), so
 * they all list and load alike. */
char *tt_new_run_id(void) {
  struct timespec now;
  clock_gettime(CLOCK_REALTIME, &now);
  struct tm tm;
  gmtime_r(&now.tv_sec, &tm);
  char stamp[32], rnd[5];
  strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", &tm);
  tt_random_hex(rnd, 2);
  return tt_xasprintf("%s-%03ld%.3s", stamp, now.tv_nsec / 1000000L, rnd);
}
