/* buf.c — growable byte buffers and the allocation wrappers every layer
 * uses. Allocation failure is fatal: the caller-visible sizes are capped
 * elsewhere, so running out here means the machine itself is out. */
#include "util/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void tt_out_of_memory(size_t n) {
  fprintf(stderr, "tabletalk: out of memory (asked for %zu bytes); "
                  "free some memory or lower --max-bytes\n", n);
  exit(1);
}

void *tt_xmalloc(size_t n) {
  void *p = malloc(n ? n : 1);
  if (!p) tt_out_of_memory(n);
  return p;
}

void *tt_xcalloc(size_t count, size_t size) {
  void *p = calloc(count ? count : 1, size ? size : 1);
  if (!p) tt_out_of_memory(count * size);
  return p;
}

void *tt_xrealloc(void *p, size_t n) {
  void *q = realloc(p, n ? n : 1);
  if (!q) tt_out_of_memory(n);
  return q;
}

char *tt_xstrdup(const char *s) { return tt_xstrndup(s, strlen(s)); }

char *tt_xstrndup(const char *s, size_t n) {
  char *p = tt_xmalloc(n + 1);
  memcpy(p, s, n);
  p[n] = '\0';
  return p;
}

char *tt_xasprintf(const char *fmt, ...) {
  tt_buf b = TT_BUF_INIT;
  va_list ap;
  va_start(ap, fmt);
  tt_buf_vprintf(&b, fmt, ap);
  va_end(ap);
  return tt_buf_detach(&b);
}

static void tt_buf_grow(tt_buf *b, size_t extra) {
  if (b->len + extra + 1 <= b->cap) return;
  size_t cap = b->cap ? b->cap : 64;
  while (cap < b->len + extra + 1) {
    if (cap > SIZE_MAX / 2) tt_out_of_memory(SIZE_MAX);
    cap *= 2;
  }
  b->data = tt_xrealloc(b->data, cap);
  b->cap = cap;
}

void tt_buf_append(tt_buf *b, const void *p, size_t n) {
  tt_buf_grow(b, n);
  if (n) memcpy(b->data + b->len, p, n);
  b->len += n;
  b->data[b->len] = '\0';
}

void tt_buf_puts(tt_buf *b, const char *s) { tt_buf_append(b, s, strlen(s)); }

void tt_buf_putc(tt_buf *b, char c) { tt_buf_append(b, &c, 1); }

void tt_buf_vprintf(tt_buf *b, const char *fmt, va_list ap) {
  va_list copy;
  va_copy(copy, ap);
  int n = vsnprintf(NULL, 0, fmt, copy);
  va_end(copy);
  if (n < 0) return;
  tt_buf_grow(b, (size_t)n);
  vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
  b->len += (size_t)n;
}

void tt_buf_printf(tt_buf *b, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  tt_buf_vprintf(b, fmt, ap);
  va_end(ap);
}

void tt_buf_repeat(tt_buf *b, const char *s, size_t times) {
  size_t n = strlen(s);
  for (size_t i = 0; i < times; i++) tt_buf_append(b, s, n);
}

void tt_buf_reset(tt_buf *b) {
  b->len = 0;
  if (b->data) b->data[0] = '\0';
}

const char *tt_buf_cstr(tt_buf *b) { return b->data ? b->data : ""; }

char *tt_buf_detach(tt_buf *b) {
  char *p = b->data ? b->data : tt_xstrdup("");
  b->data = NULL;
  b->len = b->cap = 0;
  return p;
}

void tt_buf_free(tt_buf *b) {
  free(b->data);
  b->data = NULL;
  b->len = b->cap = 0;
}
