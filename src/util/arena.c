/* arena.c — a bump allocator for result sets and catalogs: thousands of
 * small strings that live and die together, freed with one call. */
#include "util/util.h"

#include <stdlib.h>
#include <string.h>

#define TT_ARENA_BLOCK (64 * 1024)

typedef struct tt_arena_block {
  struct tt_arena_block *next;
  size_t used, cap;
  max_align_t data[]; /* aligned storage */
} tt_arena_block;

struct tt_arena {
  tt_arena_block *head;
};

tt_arena *tt_arena_new(void) { return tt_xcalloc(1, sizeof(tt_arena)); }

void *tt_arena_alloc(tt_arena *a, size_t n) {
  const size_t align = sizeof(max_align_t);
  n = (n + align - 1) / align * align;
  if (n == 0) n = align;
  tt_arena_block *b = a->head;
  if (!b || b->cap - b->used < n) {
    size_t cap = n > TT_ARENA_BLOCK ? n : TT_ARENA_BLOCK;
    b = tt_xmalloc(sizeof(tt_arena_block) + cap);
    b->used = 0;
    b->cap = cap;
    /* A big one-off block goes behind the current one so the current
     * block's free space stays usable. */
    if (a->head && cap > TT_ARENA_BLOCK) {
      b->next = a->head->next;
      a->head->next = b;
    } else {
      b->next = a->head;
      a->head = b;
    }
  }
  void *p = (char *)b->data + b->used;
  b->used += n;
  return p;
}

char *tt_arena_memdup(tt_arena *a, const void *p, size_t n) {
  char *q = tt_arena_alloc(a, n + 1);
  if (n) memcpy(q, p, n);
  q[n] = '\0';
  return q;
}

char *tt_arena_strdup(tt_arena *a, const char *s) {
  return tt_arena_memdup(a, s, strlen(s));
}

void tt_arena_free(tt_arena *a) {
  if (!a) return;
  tt_arena_block *b = a->head;
  while (b) {
    tt_arena_block *next = b->next;
    free(b);
    b = next;
  }
  free(a);
}
