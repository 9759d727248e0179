/* json.c — JSON helpers on top of jansson: strings from arbitrary bytes,
 * serialisation that never lets invisible or bidi characters through raw,
 * and, for exports, strings and reals written straight into a buffer in
 * the very bytes that serialisation gives, without building values. */
#include "util/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

/* ---- writing without values (exports) ---------------------------------- */

/* Appends \uXXXX in lower case, as tt_json_escape_unsafe writes it (a
 * surrogate pair above the BMP). */
static void tt_json_put_unsafe(tt_buf *out, uint32_t cp) {
  if (cp >= 0x10000) {
    uint32_t v = cp - 0x10000;
    tt_put_u16(out, 0xD800 + (v >> 10));
    tt_put_u16(out, 0xDC00 + (v & 0x3FF));
  } else {
    tt_put_u16(out, cp);
  }
}

/* One ASCII byte that jansson escapes, as it does: the short escapes, else
 * \u00XX in upper case; DEL as tt_json_escape_unsafe then writes it. */
static void tt_json_put_ascii_escape(tt_buf *out, unsigned char c) {
  static const char hex[] = "0123456789ABCDEF";
  switch (c) {
  case '"': tt_buf_append(out, "\\\"", 2); return;
  case '\\': tt_buf_append(out, "\\\\", 2); return;
  case '\b': tt_buf_append(out, "\\b", 2); return;
  case '\f': tt_buf_append(out, "\\f", 2); return;
  case '\n': tt_buf_append(out, "\\n", 2); return;
  case '\r': tt_buf_append(out, "\\r", 2); return;
  case '\t': tt_buf_append(out, "\\t", 2); return;
  case 0x7F: tt_put_u16(out, 0x7F); return;
  default: {
    char seq[6] = {'\\', 'u', '0', '0', hex[c >> 4], hex[c & 15]};
    tt_buf_append(out, seq, 6);
  }
  }
}

/* The string's body, s being valid UTF-8 so far: runs of bytes that need
 * nothing are copied whole. Returns false at the first invalid byte (the
 * caller starts again from a repaired copy). */
static bool tt_json_put_body(tt_buf *out, const char *s, size_t n) {
  const unsigned char *p = (const unsigned char *)s;
  size_t i = 0, run = 0;
  while (i < n) {
    unsigned char c = p[i];
    if (c >= 0x20 && c < 0x7F && c != '"' && c != '\\') {
      i++;
      continue;
    }
    if (c < 0x80) {
      tt_buf_append(out, s + run, i - run);
      tt_json_put_ascii_escape(out, c);
      run = ++i;
      continue;
    }
    uint32_t cp;
    size_t k = tt_utf8_decode(p + i, n - i, &cp);
    if (k == 0) return false;
    if (tt_cp_is_unsafe(cp)) {
      tt_buf_append(out, s + run, i - run);
      tt_json_put_unsafe(out, cp);
      run = i + k;
    }
    i += k;
  }
  tt_buf_append(out, s + run, n - run);
  return true;
}

void tt_json_put_string(tt_buf *out, const char *s, size_t n) {
  if (!s) s = ""; /* an empty buffer's data */
  size_t start = out->len;
  tt_buf_putc(out, '"');
  if (!tt_json_put_body(out, s, n)) { /* invalid UTF-8: U+FFFD, as tt_json_stringn */
    out->len = start + 1;
    tt_buf fixed = TT_BUF_INIT;
    tt_utf8_sanitize(&fixed, s, n);
    tt_json_put_body(out, fixed.data ? fixed.data : "", fixed.len);
    tt_buf_free(&fixed);
  }
  tt_buf_putc(out, '"');
}

void tt_json_put_real(tt_buf *out, double v) {
  char t[TT_FMT_REAL_MAX + 2];
  size_t n = tt_fmt_real15(t, v);
  char *e = memchr(t, 'e', n);
  if (!e && !memchr(t, '.', n)) { /* jansson keeps a real recognisable */
    t[n++] = '.';
    t[n++] = '0';
  }
  if (e) { /* and drops the exponent's '+' and leading zeros: 1e+05 -> 1e5 */
    char *from = e + 1, *to = e + 1;
    if (*to == '-') to++;
    from++;
    while (from < t + n && *from == '0') from++;
    if (from != to) {
      memmove(to, from, (size_t)(t + n - from));
      n -= (size_t)(from - to);
    }
  }
  tt_buf_append(out, t, n);
}
