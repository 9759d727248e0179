/* utf8.c — strict UTF-8 decoding (no overlongs, surrogates or code points
 * above U+10FFFF), validation, counting and repair of invalid bytes. */
#include "util/util.h"

size_t tt_utf8_decode(const unsigned char *s, size_t n, uint32_t *cp) {
  if (n == 0) return 0;
  unsigned char c = s[0];
  if (c < 0x80) {
    *cp = c;
    return 1;
  }
  size_t len;
  uint32_t v, min;
  if (c >= 0xC2 && c <= 0xDF) {
    len = 2;
    v = c & 0x1Fu;
    min = 0x80;
  } else if (c >= 0xE0 && c <= 0xEF) {
    len = 3;
    v = c & 0x0Fu;
    min = 0x800;
  } else if (c >= 0xF0 && c <= 0xF4) {
    len = 4;
    v = c & 0x07u;
    min = 0x10000;
  } else {
    return 0;
  }
  if (n < len) return 0;
  for (size_t i = 1; i < len; i++) {
    if ((s[i] & 0xC0) != 0x80) return 0;
    v = (v << 6) | (s[i] & 0x3Fu);
  }
  if (v < min || v > 0x10FFFF || (v >= 0xD800 && v <= 0xDFFF)) return 0;
  *cp = v;
  return len;
}

bool tt_utf8_valid(const char *s, size_t n, size_t *bad_offset) {
  const unsigned char *p = (const unsigned char *)s;
  size_t i = 0;
  while (i < n) {
    uint32_t cp;
    size_t k = tt_utf8_decode(p + i, n - i, &cp);
    if (k == 0) {
      if (bad_offset) *bad_offset = i;
      return false;
    }
    i += k;
  }
  return true;
}

void tt_utf8_encode(tt_buf *b, uint32_t cp) {
  char out[4];
  size_t n;
  if (cp < 0x80) {
    out[0] = (char)cp;
    n = 1;
  } else if (cp < 0x800) {
    out[0] = (char)(0xC0 | (cp >> 6));
    out[1] = (char)(0x80 | (cp & 0x3F));
    n = 2;
  } else if (cp < 0x10000) {
    out[0] = (char)(0xE0 | (cp >> 12));
    out[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
    out[2] = (char)(0x80 | (cp & 0x3F));
    n = 3;
  } else {
    out[0] = (char)(0xF0 | (cp >> 18));
    out[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
    out[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
    out[3] = (char)(0x80 | (cp & 0x3F));
    n = 4;
  }
  tt_buf_append(b, out, n);
}

/* Length of the code point or invalid byte at s[i]. */
static size_t tt_utf8_step(const char *s, size_t n, size_t i) {
  uint32_t cp;
  size_t k = tt_utf8_decode((const unsigned char *)s + i, n - i, &cp);
  return k ? k : 1;
}

size_t tt_utf8_count(const char *s, size_t n) {
  size_t count = 0;
  for (size_t i = 0; i < n; i += tt_utf8_step(s, n, i)) count++;
  return count;
}

size_t tt_utf8_prefix(const char *s, size_t n, size_t max_chars) {
  size_t i = 0;
  for (size_t count = 0; i < n && count < max_chars; count++)
    i += tt_utf8_step(s, n, i);
  return i;
}

void tt_utf8_escape_invalid(tt_buf *out, const char *s, size_t n) {
  const unsigned char *p = (const unsigned char *)s;
  size_t i = 0, run = 0;
  while (i < n) {
    uint32_t cp;
    size_t k = tt_utf8_decode(p + i, n - i, &cp);
    if (k) {
      i += k;
      continue;
    }
    tt_buf_append(out, s + run, i - run);
    tt_buf_printf(out, "\\x%02X", (unsigned)p[i]);
    i++;
    run = i;
  }
  tt_buf_append(out, s + run, n - run);
}

void tt_utf8_sanitize(tt_buf *out, const char *s, size_t n) {
  const unsigned char *p = (const unsigned char *)s;
  size_t i = 0, run = 0;
  while (i < n) {
    uint32_t cp;
    size_t k = tt_utf8_decode(p + i, n - i, &cp);
    if (k) {
      i += k;
      continue;
    }
    tt_buf_append(out, s + run, i - run);
    tt_utf8_encode(out, 0xFFFD);
    i++;
    run = i;
  }
  tt_buf_append(out, s + run, n - run);
}
