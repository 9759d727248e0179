/* base64.c — RFC 4648 base64 in both alphabets: the MCP server decodes
 * header values sent as =?base64?...?= and encodes the state it hands to
 * clients in the URL-safe form. */
#include "util/util.h"

static const char tt_b64_std[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
static const char tt_b64_url[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

void tt_base64_encode(tt_buf *out, const void *p, size_t n, bool url) {
  const unsigned char *s = p;
  const char *abc = url ? tt_b64_url : tt_b64_std;
  size_t i = 0;
  for (; i + 3 <= n; i += 3) {
    uint32_t v = (uint32_t)s[i] << 16 | (uint32_t)s[i + 1] << 8 | s[i + 2];
    char q[4] = {abc[v >> 18], abc[(v >> 12) & 63], abc[(v >> 6) & 63], abc[v & 63]};
    tt_buf_append(out, q, 4);
  }
  size_t rest = n - i;
  if (rest == 0) return;
  uint32_t v = (uint32_t)s[i] << 16 | (rest == 2 ? (uint32_t)s[i + 1] << 8 : 0);
  tt_buf_putc(out, abc[v >> 18]);
  tt_buf_putc(out, abc[(v >> 12) & 63]);
  if (rest == 2) tt_buf_putc(out, abc[(v >> 6) & 63]);
  if (!url) tt_buf_puts(out, rest == 2 ? "=" : "==");
}

static int tt_b64_value(unsigned char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  if (c == '+' || c == '-') return 62;
  if (c == '/' || c == '_') return 63;
  return -1;
}

bool tt_base64_decode(tt_buf *out, const char *s, size_t n) {
  while (n > 0 && s[n - 1] == '=') n--;
  if (n % 4 == 1) return false;
  uint32_t acc = 0;
  int bits = 0;
  for (size_t i = 0; i < n; i++) {
    int v = tt_b64_value((unsigned char)s[i]);
    if (v < 0) return false;
    acc = acc << 6 | (uint32_t)v;
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      tt_buf_putc(out, (char)((acc >> bits) & 0xff));
    }
  }
  /* Leftover bits must be zero padding, or the text was not canonical. */
  return (acc & ((1u << bits) - 1)) == 0;
}
