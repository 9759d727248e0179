/* json.c — JSON helpers on top of jansson: strings from arbitrary bytes and
 * serialisation that never lets invisible or bidi characters through raw. */
#include "util/util.h"

#include <stdio.h>
#include <stdlib.h>

json_t *tt_json_stringn(const char *s, size_t n) {
  if (tt_utf8_valid(s, n, NULL)) return json_stringn_nocheck(s, n);
  tt_buf b = TT_BUF_INIT;
  tt_utf8_sanitize(&b, s, n);
  json_t *v = json_stringn_nocheck(tt_buf_cstr(&b), b.len);
  tt_buf_free(&b);
  return v;
}

static void tt_put_u16(tt_buf *out, uint32_t u) {
  char tmp[16];
  snprintf(tmp, sizeof tmp, "\\u%04x", (unsigned)u);
  tt_buf_append(out, tmp, 6);
}

void tt_json_escape_unsafe(tt_buf *out, const char *json, size_t n) {
  const unsigned char *p = (const unsigned char *)json;
  size_t i = 0, run = 0;
  while (i < n) {
    if (p[i] < 0x7F) {
      i++;
      continue;
    }
    uint32_t cp;
    size_t k = tt_utf8_decode(p + i, n - i, &cp);
    if (k == 0) { /* cannot happen with jansson output; keep bytes as is */
      i++;
      continue;
    }
    if (tt_cp_is_unsafe(cp)) {
      tt_buf_append(out, json + run, i - run);
      if (cp >= 0x10000) {
        uint32_t v = cp - 0x10000;
        tt_put_u16(out, 0xD800 + (v >> 10));
        tt_put_u16(out, 0xDC00 + (v & 0x3FF));
      } else {
        tt_put_u16(out, cp);
      }
      run = i + k;
    }
    i += k;
  }
  tt_buf_append(out, json + run, n - run);
}

void tt_json_dump(tt_buf *out, const json_t *v, size_t flags) {
  char *text = json_dumps(v, flags | JSON_ENCODE_ANY);
  if (!text) {
    tt_buf_puts(out, "null");
    return;
  }
  size_t n = 0;
  while (text[n]) n++;
  tt_json_escape_unsafe(out, text, n);
  free(text);
}
