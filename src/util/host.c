/* host.c — whether a host name or address is this machine's loopback, the
 * one test behind "bind to loopback unless told otherwise", the Host
 * header check against DNS rebinding and plain-http downloads from a
 * local mirror. */
#include "util/util.h"

#include <string.h>
#include <strings.h>

/* 127.D.D.D with 1 to 3 digits per part. */
static bool tt_is_ipv4_loopback(const char *s, size_t n) {
  if (n < 9 || strncmp(s, "127.", 4) != 0) return false;
  int dots = 1, digits = 0;
  for (size_t i = 4; i < n; i++) {
    if (s[i] == '.') {
      if (digits == 0) return false;
      dots++;
      digits = 0;
    } else if (s[i] >= '0' && s[i] <= '9') {
      if (++digits > 3) return false;
    } else {
      return false;
    }
  }
  return dots == 3 && digits > 0;
}

bool tt_host_is_loopback(const char *host, size_t n) {
  static const char *const names[] = {"localhost", "::1", "[::1]"};
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
    if (strlen(names[i]) == n && strncasecmp(host, names[i], n) == 0) return true;
  return tt_is_ipv4_loopback(host, n);
}
