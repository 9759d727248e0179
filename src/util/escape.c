/* escape.c — making untrusted text safe to show. Database cells may hold
 * ANSI escapes, carriage returns, bidi overrides and zero-width characters
 * meant to fool a reader or a model; here they become visible escapes before
 * anything reaches a terminal. */
#include "util/util.h"

#include <stdio.h>
#include <string.h>
#include <wchar.h>

bool tt_cp_is_unsafe(uint32_t cp) {
  if (cp < 0x20 || (cp >= 0x7F && cp <= 0x9F)) return true;
  switch (cp) {
  case 0x00AD: /* soft hyphen */
  case 0x034F: /* combining grapheme joiner */
  case 0x061C: /* arabic letter mark */
  case 0x115F: case 0x1160: case 0x3164: case 0xFFA0: /* hangul fillers */
  case 0x17B4: case 0x17B5:
  case 0x06DD: case 0x070F: case 0x08E2: case 0x110BD: case 0x110CD: /* format marks */
  case 0xFEFF: /* zero-width no-break space / BOM */
    return true;
  default:
    break;
  }
  return (cp >= 0x0600 && cp <= 0x0605) ||   /* arabic number signs */
         (cp >= 0x180B && cp <= 0x180F) ||   /* mongolian selectors */
         (cp >= 0x200B && cp <= 0x200F) ||   /* zero-width, LRM, RLM */
         (cp >= 0x2028 && cp <= 0x202E) ||   /* separators, embeddings */
         (cp >= 0x2060 && cp <= 0x206F) ||   /* invisible ops, isolates */
         (cp >= 0xFE00 && cp <= 0xFE0F) ||   /* variation selectors */
         (cp >= 0xFFF9 && cp <= 0xFFFB) ||   /* annotation controls */
         (cp >= 0x1BCA0 && cp <= 0x1BCA3) || /* shorthand format controls */
         (cp >= 0x13430 && cp <= 0x1343F) || /* egyptian format controls */
         (cp >= 0x1D173 && cp <= 0x1D17A) || /* musical format controls */
         (cp >= 0xE0000 && cp <= 0xE0FFF);   /* tags, selectors supp., unassigned */
}

/* Text or emoji presentation after a visible character is ordinary; the
 * other selectors carry nothing a reader sees, so they are always shown. */
static bool tt_cp_is_presentation_selector(uint32_t cp) { return cp == 0xFE0E || cp == 0xFE0F; }

static bool tt_cp_is_emoji(uint32_t cp) {
  return (cp >= 0x1F000 && cp <= 0x1FAFF) || (cp >= 0x2600 && cp <= 0x27BF) ||
         (cp >= 0x2300 && cp <= 0x23FF) || (cp >= 0x2B00 && cp <= 0x2BFF);
}

static size_t tt_cp_width(uint32_t cp) {
  int w = wcwidth((wchar_t)cp);
  if (w < 0) return 1;
  return (size_t)w;
}

size_t tt_display_width(const char *s, size_t n) {
  const unsigned char *p = (const unsigned char *)s;
  size_t i = 0, width = 0;
  while (i < n) {
    uint32_t cp;
    size_t k = tt_utf8_decode(p + i, n - i, &cp);
    if (k == 0) {
      width++;
      i++;
      continue;
    }
    width += tt_cp_width(cp);
    i += k;
  }
  return width;
}

/* Appends one visible escape, wrapped in the marks; returns its width. */
static size_t tt_put_escape(tt_buf *out, const tt_escape_opts *o,
                            const char *text) {
  if (o && o->mark_on) tt_buf_puts(out, o->mark_on);
  tt_buf_puts(out, text);
  if (o && o->mark_off) tt_buf_puts(out, o->mark_off);
  return tt_display_width(text, strlen(text));
}

static size_t tt_escape_control(tt_buf *out, const tt_escape_opts *o,
                                uint32_t c) {
  char tmp[8];
  switch (c) {
  case '\n': return tt_put_escape(out, o, "\\n");
  case '\r': return tt_put_escape(out, o, "\\r");
  case '\t': return tt_put_escape(out, o, "\\t");
  case 0: return tt_put_escape(out, o, "\\0");
  default:
    snprintf(tmp, sizeof tmp, "\\x%02X", (unsigned)c);
    return tt_put_escape(out, o, tmp);
  }
}

size_t tt_escape_terminal(tt_buf *out, const char *s, size_t n,
                          const tt_escape_opts *opts) {
  const unsigned char *p = (const unsigned char *)s;
  size_t max = opts && opts->max_chars ? opts->max_chars : SIZE_MAX;
  size_t i = 0, count = 0, width = 0;
  bool after_base = false;  /* last kept code point was a visible base */
  bool after_emoji = false; /* ... and it was an emoji */
  char tmp[16];
  while (i < n) {
    if (count == max) {
      size_t total = count + tt_utf8_count(s + i, n - i);
      tt_buf tail = TT_BUF_INIT;
      tt_buf_puts(&tail, "…");
      if (!opts->short_marker) {
        tt_buf_puts(&tail, "[");
        tt_buf_put_grouped(&tail, (long long)total);
        tt_buf_puts(&tail, " chars]");
      }
      width += tt_put_escape(out, opts, tt_buf_cstr(&tail));
      tt_buf_free(&tail);
      break;
    }
    count++;
    uint32_t cp;
    size_t k = tt_utf8_decode(p + i, n - i, &cp);
    if (k == 0) {
      width += tt_escape_control(out, opts, p[i]);
      i++;
      after_base = after_emoji = false;
      continue;
    }
    if (cp < 0x20 || cp == 0x7F) {
      width += tt_escape_control(out, opts, cp);
      after_base = after_emoji = false;
    } else if (tt_cp_is_unsafe(cp)) {
      bool keep = false;
      if (tt_cp_is_presentation_selector(cp) && after_base) {
        keep = true; /* one selector after a visible character is normal */
        after_base = false;
      } else if (cp == 0x200D && after_emoji) {
        uint32_t next;
        size_t k2 = tt_utf8_decode(p + i + k, n - i - k, &next);
        keep = k2 && tt_cp_is_emoji(next); /* emoji ZWJ sequence */
        after_emoji = false;
      }
      if (keep) {
        tt_buf_append(out, s + i, k);
      } else {
        snprintf(tmp, sizeof tmp, "<U+%04X>", (unsigned)cp);
        width += tt_put_escape(out, opts, tmp);
        after_base = after_emoji = false;
      }
    } else {
      tt_buf_append(out, s + i, k);
      width += tt_cp_width(cp);
      after_base = true;
      after_emoji = tt_cp_is_emoji(cp) || (after_emoji && cp >= 0x1F3FB && cp <= 0x1F3FF);
    }
    i += k;
  }
  return width;
}
