/* clock.c — a monotonic millisecond clock for durations and deadlines,
 * the wall clock for timestamps, and waits with a deadline. */
#include "util/util.h"

#include <time.h>

double tt_now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1000.0 + (double)ts.tv_nsec / 1e6;
}

struct timespec tt_realtime_in(double ms) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  long long ns = (long long)ts.tv_nsec + (long long)(ms * 1e6);
  ts.tv_sec += (time_t)(ns / 1000000000LL);
  ts.tv_nsec = (long)(ns % 1000000000LL);
  return ts;
}

double tt_wall_time(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

void tt_buf_put_iso_time(tt_buf *b, double t) {
  time_t secs = (time_t)t;
  struct tm tm;
  gmtime_r(&secs, &tm);
  char tmp[40];
  strftime(tmp, sizeof tmp, "%Y-%m-%dT%H:%M:%S", &tm);
  int ms = (int)((t - (double)secs) * 1000.0);
  if (ms < 0) ms = 0;
  if (ms > 999) ms = 999;
  tt_buf_printf(b, "%s.%03dZ", tmp, ms);
}
