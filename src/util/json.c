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

/* ---- compact serialisation without jansson's dump -------------------------- */

#define TT_JSON_MAX_DEPTH 512

/* Appends v compactly, reals with precision digits, strings through
 * tt_json_put_string (a jansson string is valid UTF-8, so that writes the
 * bytes jansson's dump and the unsafe pass give, in one pass); objects in
 * jansson's order (the order of insertion). False for a tree deeper than
 * TT_JSON_MAX_DEPTH (jansson's dump refuses a cycle; this never recurses
 * forever) or a value it cannot write. */
static bool tt_json_put_value(tt_buf *out, const json_t *v, int precision, int depth) {
  if (depth > TT_JSON_MAX_DEPTH) return false;
  switch (json_typeof(v)) {
  case JSON_NULL: tt_buf_append(out, "null", 4); return true;
  case JSON_TRUE: tt_buf_append(out, "true", 4); return true;
  case JSON_FALSE: tt_buf_append(out, "false", 5); return true;
  case JSON_INTEGER: {
    char t[TT_FMT_INT_MAX];
    tt_buf_append(out, t, tt_fmt_int(t, (int64_t)json_integer_value(v)));
    return true;
  }
  case JSON_REAL:
    if (precision == 15) tt_json_put_real(out, json_real_value(v));
    else tt_json_put_real17(out, json_real_value(v));
    return true;
  case JSON_STRING:
    tt_json_put_string(out, json_string_value(v), json_string_length(v));
    return true;
  case JSON_ARRAY: {
    tt_buf_putc(out, '[');
    for (size_t i = 0; i < json_array_size(v); i++) {
      if (i) tt_buf_putc(out, ',');
      if (!tt_json_put_value(out, json_array_get(v, i), precision, depth + 1)) return false;
    }
    tt_buf_putc(out, ']');
    return true;
  }
  case JSON_OBJECT: {
    tt_buf_putc(out, '{');
    bool first = true;
    for (void *it = json_object_iter((json_t *)v); it; it = json_object_iter_next((json_t *)v, it)) {
      if (!first) tt_buf_putc(out, ',');
      first = false;
      tt_json_put_string(out, json_object_iter_key(it), json_object_iter_key_len(it));
      tt_buf_putc(out, ':');
      if (!tt_json_put_value(out, json_object_iter_value(it), precision, depth + 1)) return false;
    }
    tt_buf_putc(out, '}');
    return true;
  }
  }
  return false;
}

void tt_json_dump(tt_buf *out, const json_t *v, size_t flags) {
  /* the compact form, reals with 15 digits (MCP replies, results, exports)
   * or jansson's default 17 (model requests):
   * written directly, several times faster than json_dumps and the unsafe
   * pass over its text; anything else, or a tree it cannot write, goes
   * through jansson */
  size_t plain = flags & ~(size_t)JSON_ENCODE_ANY & ~(size_t)JSON_PRESERVE_ORDER;
  int precision = plain == (JSON_COMPACT | JSON_REAL_PRECISION(15)) ? 15
                  : plain == JSON_COMPACT                          ? 17
                                                                   : 0;
  if (v && precision) {
    size_t start = out->len;
    if (tt_json_put_value(out, v, precision, 0)) return;
    out->len = start;
    if (out->data) out->data[start] = '\0';
  }
  tt_json_dump_jansson(out, v, flags);
}

void tt_json_dump_jansson(tt_buf *out, const json_t *v, size_t flags) {
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

/* t (n bytes of %g output, room for two more) in jansson's form: ".0"
 * added to an integral value, the exponent without '+' or leading zeros. */
static void tt_json_put_g(tt_buf *out, char *t, size_t n) {
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

void tt_json_put_real(tt_buf *out, double v) {
  char t[TT_FMT_REAL_MAX + 2];
  tt_json_put_g(out, t, tt_fmt_real15(t, v));
}

void tt_json_put_real17(tt_buf *out, double v) {
  char t[48];
  int n = snprintf(t, sizeof t - 2, "%.17g", v);
  tt_json_put_g(out, t, n > 0 && (size_t)n < sizeof t - 2 ? (size_t)n : 0);
}
