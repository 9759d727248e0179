/* verify.c — the answer check: does an answer state numbers that no query
 * of this question produced, and does an answer to a refused write say
 * that writing is not possible. */
#include "agent/agent_internal.h"

#include <ctype.h>
#include <string.h>

#define TT_MAX_NUMBERS 64

/* Digit runs of text, with thousands separators and decimals joined:
 * "1,297.5" -> "1297.5". */
static size_t tt_numbers(const char *s, char out[][32], size_t max) {
  size_t n = 0;
  for (const char *p = s; *p && n < max;) {
    if (!isdigit((unsigned char)*p)) {
      p++;
      continue;
    }
    size_t len = 0;
    while (*p && (isdigit((unsigned char)*p) ||
                  ((*p == ',' || *p == '.') && isdigit((unsigned char)p[1])))) {
      if (*p != ',' && len < 31) out[n][len++] = *p;
      p++;
    }
    out[n][len] = '\0';
    n++;
  }
  return n;
}

bool tt_states_new_numbers(const char *text, const char *question) {
  char a[TT_MAX_NUMBERS][32], q[TT_MAX_NUMBERS][32];
  size_t na = tt_numbers(text ? text : "", a, TT_MAX_NUMBERS);
  size_t nq = tt_numbers(question ? question : "", q, TT_MAX_NUMBERS);
  for (size_t i = 0; i < na; i++) {
    bool known = false;
    for (size_t k = 0; k < nq && !known; k++) known = strcmp(a[i], q[k]) == 0;
    if (!known) return true;
  }
  return false;
}

bool tt_mentions_read_only(const char *text) {
  static const char *const words[] = {"read-only", "read only", "not allowed", "cannot",
                                      "can't", "not possible", "only read", "unable"};
  tt_buf low = TT_BUF_INIT;
  for (const char *p = text ? text : ""; *p; p++) tt_buf_putc(&low, (char)tolower((unsigned char)*p));
  bool hit = false;
  for (size_t i = 0; i < sizeof words / sizeof words[0] && !hit; i++)
    hit = strstr(tt_buf_cstr(&low), words[i]) != NULL;
  tt_buf_free(&low);
  return hit;
}
