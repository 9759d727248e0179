/* clock.c — a monotonic millisecond clock for durations and deadlines. */
#include "util/util.h"

#include <time.h>

double tt_now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1000.0 + (double)ts.tv_nsec / 1e6;
}
