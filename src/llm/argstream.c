/* argstream.c — pulls the text of one string member out of a JSON object
 * that arrives in pieces, so that an answer can be shown while the model is
 * still writing it. Understands nesting, escapes (\uXXXX with surrogate
 * pairs, split across pieces) and keys at the top level only. */
#include "llm/llm.h"

#include <stdlib.h>
#include <string.h>

typedef enum {
  TT_AS_OUTSIDE,   /* between tokens */
  TT_AS_STRING,    /* inside a string we are not interested in */
  TT_AS_KEY,       /* inside a top-level key */
  TT_AS_TARGET,    /* inside the value we hand out */
} tt_as_state;

struct tt_argstream {
  char *key;
  tt_as_state state;
  int depth;          /* object/array nesting; keys live at depth 1 */
  bool expect_key;    /* the next string at depth 1 is a key */
  bool key_matches;   /* the last key read was ours */
  bool done;          /* our value has ended */
  bool escape;        /* a backslash was read */
  int hex_left;       /* digits still to read of \uXXXX */
  uint32_t hex;
  uint32_t high;      /* a pending high surrogate */
  tt_buf keybuf;
};

tt_argstream *tt_argstream_new(const char *key) {
  tt_argstream *s = tt_xcalloc(1, sizeof *s);
  s->key = tt_xstrdup(key);
  return s;
}

void tt_argstream_free(tt_argstream *s) {
  if (!s) return;
  tt_buf_free(&s->keybuf);
  free(s->key);
  free(s);
}

/* One decoded code point of a string being read. */
static void tt_as_emit_cp(tt_argstream *s, uint32_t cp, tt_buf *out) {
  if (s->state == TT_AS_TARGET) tt_utf8_encode(out, cp);
  else if (s->state == TT_AS_KEY) tt_utf8_encode(&s->keybuf, cp);
}

static void tt_as_emit_byte(tt_argstream *s, char c, tt_buf *out) {
  if (s->state == TT_AS_TARGET) tt_buf_putc(out, c);
  else if (s->state == TT_AS_KEY) tt_buf_putc(&s->keybuf, c);
}

static void tt_as_unicode(tt_argstream *s, uint32_t u, tt_buf *out) {
  if (u >= 0xD800 && u <= 0xDBFF) {
    s->high = u;
    return;
  }
  if (u >= 0xDC00 && u <= 0xDFFF && s->high) {
    tt_as_emit_cp(s, 0x10000 + ((s->high - 0xD800) << 10) + (u - 0xDC00), out);
  } else {
    tt_as_emit_cp(s, (u >= 0xD800 && u <= 0xDFFF) ? 0xFFFD : u, out);
  }
  s->high = 0;
}

static void tt_as_string_char(tt_argstream *s, char c, tt_buf *out) {
  if (s->hex_left) {
    int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10
          : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
    s->hex = s->hex * 16 + (uint32_t)(d < 0 ? 0 : d);
    if (--s->hex_left == 0) tt_as_unicode(s, s->hex, out);
    return;
  }
  if (s->escape) {
    s->escape = false;
    switch (c) {
    case 'n': tt_as_emit_byte(s, '\n', out); break;
    case 't': tt_as_emit_byte(s, '\t', out); break;
    case 'r': tt_as_emit_byte(s, '\r', out); break;
    case 'b': tt_as_emit_byte(s, '\b', out); break;
    case 'f': tt_as_emit_byte(s, '\f', out); break;
    case 'u': s->hex_left = 4; s->hex = 0; break;
    default: tt_as_emit_byte(s, c, out); break; /* \" \\ \/ */
    }
    return;
  }
  if (c == '\\') {
    s->escape = true;
  } else if (c == '"') {
    if (s->state == TT_AS_KEY) {
      s->key_matches = strcmp(tt_buf_cstr(&s->keybuf), s->key) == 0;
      tt_buf_reset(&s->keybuf);
      s->expect_key = false;
    } else if (s->state == TT_AS_TARGET) {
      s->done = true;
    }
    s->state = TT_AS_OUTSIDE;
  } else {
    if (s->high) { /* a lone high surrogate before plain text */
      tt_as_emit_cp(s, 0xFFFD, out);
      s->high = 0;
    }
    tt_as_emit_byte(s, c, out);
  }
}

void tt_argstream_feed(tt_argstream *s, const char *piece, size_t n, tt_buf *out) {
  for (size_t i = 0; i < n && !s->done; i++) {
    char c = piece[i];
    if (s->state != TT_AS_OUTSIDE) {
      tt_as_string_char(s, c, out);
      continue;
    }
    switch (c) {
    case '{':
    case '[':
      s->depth++;
      s->expect_key = c == '{' && s->depth == 1;
      break;
    case '}':
    case ']':
      s->depth--;
      break;
    case ',':
      if (s->depth == 1) s->expect_key = true;
      s->key_matches = false;
      break;
    case '"':
      if (s->depth == 1 && s->expect_key) s->state = TT_AS_KEY;
      else if (s->depth == 1 && s->key_matches) s->state = TT_AS_TARGET;
      else s->state = TT_AS_STRING;
      break;
    default:
      break;
    }
  }
}
