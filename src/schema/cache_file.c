/* cache_file.c — the form of the schema layer's cache files: a magic line,
 * the source the entry was read from, the entry's own fields in a small
 * binary form (numbers little-endian, strings length-prefixed and
 * NUL-terminated so that a reader can point into the file), and a
 * checksum. Files are written atomically and read as hostile input: every
 * read checks its bounds, a count larger than what is left is a fault,
 * and a fault anywhere discards the whole file (the caller reads the
 * database again). */
#include "schema/cache_file.h"

#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define TT_CW_NULL UINT64_MAX /* the length that says "no string" */

char *tt_cache_entry_path(const char *cache_dir, const char *kind, const char *identity,
                          const char *suffix) {
  uint64_t h = tt_fnv1a64(TT_FNV1A64_INIT, identity, strlen(identity));
  return tt_xasprintf("%s/%s/%016llx%s", cache_dir, kind, (unsigned long long)h, suffix);
}

/* ---- writing ---------------------------------------------------------------- */

void tt_cw_u8(tt_buf *b, unsigned v) { tt_buf_putc(b, (char)(unsigned char)v); }

void tt_cw_u64(tt_buf *b, uint64_t v) {
  unsigned char x[8];
  for (int i = 0; i < 8; i++) x[i] = (unsigned char)(v >> (8 * i));
  tt_buf_append(b, x, sizeof x);
}

void tt_cw_f64(tt_buf *b, double v) {
  uint64_t u;
  memcpy(&u, &v, sizeof u);
  tt_cw_u64(b, u);
}

void tt_cw_bytes(tt_buf *b, const char *s, size_t n) {
  if (!s) {
    tt_cw_u64(b, TT_CW_NULL);
    return;
  }
  tt_cw_u64(b, n);
  tt_buf_append(b, s, n);
  tt_buf_putc(b, '\0');
}

void tt_cw_str(tt_buf *b, const char *s) { tt_cw_bytes(b, s, s ? strlen(s) : 0); }

/* ---- reading ---------------------------------------------------------------- */

static bool tt_cr_has(tt_cr *r, size_t n) {
  if (r->bad || (size_t)(r->end - r->p) < n) {
    r->bad = true;
    return false;
  }
  return true;
}

unsigned tt_cr_u8(tt_cr *r) { return tt_cr_has(r, 1) ? *r->p++ : 0; }

uint64_t tt_cr_u64(tt_cr *r) {
  if (!tt_cr_has(r, 8)) return 0;
  uint64_t v; /* little-endian on disk: one load (the byte loop was 46 instructions) */
  memcpy(&v, r->p, sizeof v);
  r->p += 8;
  return le64toh(v);
}

double tt_cr_f64(tt_cr *r) {
  uint64_t u = tt_cr_u64(r);
  double v;
  memcpy(&v, &u, sizeof v);
  return v;
}

size_t tt_cr_count(tt_cr *r, size_t min_bytes) {
  uint64_t n = tt_cr_u64(r);
  if (r->bad) return 0;
  size_t left = (size_t)(r->end - r->p);
  if (min_bytes == 0) min_bytes = 1;
  if (n > left / min_bytes) {
    r->bad = true;
    return 0;
  }
  return (size_t)n;
}

const char *tt_cr_bytes(tt_cr *r, size_t *len) {
  uint64_t n = tt_cr_u64(r);
  if (len) *len = 0;
  if (r->bad || n == TT_CW_NULL) return NULL;
  if (n >= (uint64_t)(r->end - r->p) || r->p[n] != '\0') {
    r->bad = true;
    return NULL;
  }
  const char *s = (const char *)r->p;
  r->p += n + 1;
  if (len) *len = (size_t)n;
  return s;
}

const char *tt_cr_str(tt_cr *r) {
  size_t n;
  const char *s = tt_cr_bytes(r, &n);
  if (s && strlen(s) != n) {
    r->bad = true;
    return NULL;
  }
  return s;
}

/* ---- whole files ------------------------------------------------------------- */

void tt_cache_source_of(tt_db *db, tt_cache_source *out) {
  const tt_db_target *t = tt_db_get_target(db);
  struct stat st;
  memset(out, 0, sizeof *out);
  out->path = t->uri ? t->shown : t->path;
  if (!t->uri && stat(t->path, &st) == 0) {
    out->file = true;
    out->dev = (uint64_t)st.st_dev;
    out->ino = (uint64_t)st.st_ino;
  }
}

void tt_cache_begin(tt_buf *b, const char *magic, const tt_cache_source *src) {
  tt_buf_reset(b);
  tt_buf_puts(b, magic);
  tt_cw_u8(b, src->file ? 1 : 0);
  tt_cw_str(b, src->path ? src->path : "");
  tt_cw_u64(b, src->dev);
  tt_cw_u64(b, src->ino);
}

/* The checksum: FNV-1a's mixing over eight bytes at a time (a warm start
 * reads megabytes of value index; byte-wise FNV was a tenth of it). */
uint64_t tt_cache_sum(const void *p, size_t n) {
  const unsigned char *b = p;
  uint64_t h = TT_FNV1A64_INIT;
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    uint64_t w;
    memcpy(&w, b + i, sizeof w);
    h = (h ^ w) * 1099511628211ULL;
    h ^= h >> 29;
  }
  return tt_fnv1a64(h, b + i, n - i);
}

bool tt_cache_finish(tt_buf *b, const char *path) {
  tt_cw_u64(b, tt_cache_sum(b->data, b->len));
  char *dir = tt_xstrdup(path);
  char *slash = strrchr(dir, '/');
  if (slash) *slash = '\0';
  bool ok = tt_mkdir_p(dir, 0700);
  free(dir);
  if (!ok) return false;
  char *tmp = tt_xasprintf("%s.%ld.tmp", path, (long)getpid());
  int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0) {
    free(tmp);
    return false;
  }
  size_t off = 0;
  while (ok && off < b->len) {
    ssize_t w = write(fd, b->data + off, b->len - off);
    if (w < 0 && errno == EINTR) continue;
    ok = w > 0;
    if (ok) off += (size_t)w;
  }
  ok = (close(fd) == 0) && ok;
  if (ok) ok = rename(tmp, path) == 0;
  if (!ok) unlink(tmp);
  free(tmp);
  return ok;
}

char *tt_cache_read(const char *path, const char *magic, size_t max, tt_cr *r,
                    tt_cache_source *src) {
  int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) return NULL;
  /* one read into a buffer of the file's size: no growing and copying */
  struct stat st;
  size_t ml = strlen(magic), len = 0;
  char *data = NULL;
  if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size >= (off_t)(ml + 8) &&
      (size_t)st.st_size <= max) {
    data = tt_xmalloc((size_t)st.st_size + 1);
    while (len < (size_t)st.st_size) {
      ssize_t got = read(fd, data + len, (size_t)st.st_size - len);
      if (got < 0 && errno == EINTR) continue;
      if (got <= 0) break;
      len += (size_t)got;
    }
  }
  close(fd);
  if (!data || len != (size_t)st.st_size || memcmp(data, magic, ml) != 0) {
    free(data);
    return NULL;
  }
  data[len] = '\0';
  const unsigned char *u = (const unsigned char *)data;
  uint64_t sum = 0;
  for (int i = 0; i < 8; i++) sum |= (uint64_t)u[len - 8 + (size_t)i] << (8 * i);
  if (sum != tt_cache_sum(data, len - 8)) {
    free(data);
    return NULL;
  }
  *r = (tt_cr){.p = u + ml, .end = u + len - 8};
  src->file = tt_cr_u8(r) == 1;
  src->path = tt_cr_str(r);
  src->dev = tt_cr_u64(r);
  src->ino = tt_cr_u64(r);
  if (r->bad || !src->path) {
    free(data);
    return NULL;
  }
  return data;
}

void tt_cache_touch(const char *path) { utimensat(AT_FDCWD, path, NULL, 0); }
