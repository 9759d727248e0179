/* cache_gc.c — upkeep of the schema layer's cache files (catalogs under
 * <cache>/catalog/, value indexes under <cache>/values/, description
 * vectors under <cache>/vectors/), so that the
 * folder does not grow with every database ever opened: entries not used
 * for an age go (a warm start marks its entry used), as do entries of
 * databases that are gone (the file deleted or replaced: temporary copies
 * leave many), files an older tabletalk wrote and temporary files a
 * killed writer left; then, oldest use first, whatever is over a size
 * limit. Nothing else in the cache folder is touched. `tabletalk gc` and
 * the daily housekeeping of ask and chat call it. */
#include "schema/cache_file.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define TT_CACHE_TMP_AGE_S 3600 /* a temporary file this old has no writer left */

/* One kind of entry: its folder, its suffix and the magic line it starts with. */
typedef struct tt_cache_kind {
  const char *dir, *suffix, *magic;
} tt_cache_kind;

static const tt_cache_kind tt_cache_kinds[] = {
    {"catalog", ".cat", TT_CATALOG_MAGIC},
    {"values", ".idx", TT_VALUES_MAGIC},
    {"values", ".tsv", NULL}, /* the value index as tabletalk wrote it before */
    {"vectors", ".vec", TT_VECTORS_MAGIC},
};

typedef struct tt_cache_file {
  char *path;
  time_t used;
  long long size;
} tt_cache_file;

/* Whether the entry at path was read from a database that is gone (a file
 * that no longer exists, or another file at its path). Reads the head of
 * the entry only. */
static bool tt_cache_entry_dead(const char *path, const char *magic) {
  char head[8192];
  int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) return false;
  ssize_t n = read(fd, head, sizeof head);
  close(fd);
  size_t ml = strlen(magic);
  if (n < (ssize_t)ml || memcmp(head, magic, ml) != 0) return true; /* not ours as we write it now */
  tt_cr r = {.p = (const unsigned char *)head + ml, .end = (const unsigned char *)head + n};
  bool file = tt_cr_u8(&r) == 1;
  size_t plen;
  const char *where = tt_cr_bytes(&r, &plen);
  uint64_t dev = tt_cr_u64(&r), ino = tt_cr_u64(&r);
  if (r.bad || !where || !file) return false; /* a server's database, or a long path: kept */
  struct stat st;
  if (stat(where, &st) != 0) return errno == ENOENT || errno == ENOTDIR;
  return (uint64_t)st.st_dev != dev || (uint64_t)st.st_ino != ino;
}

static void tt_cache_remove(const char *path, long long size, bool dry_run,
                            tt_cache_gc_report *r) {
  if (!dry_run && unlink(path) != 0 && errno != ENOENT) {
    r->failed++;
    return;
  }
  r->removed++;
  r->bytes += size;
}

/* Goes through one kind's files: removes what must go, keeps the rest in
 * *kept. */
static void tt_cache_gc_kind(const char *cache_dir, const tt_cache_kind *k, time_t now,
                             long long max_age_s, bool dry_run, tt_cache_gc_report *r,
                             tt_cache_file **kept, size_t *nkept) {
  char *dir = tt_xasprintf("%s/%s", cache_dir, k->dir);
  DIR *d = opendir(dir);
  if (!d) {
    free(dir);
    return;
  }
  struct dirent *e;
  while ((e = readdir(d))) {
    const char *name = e->d_name;
    size_t len = strlen(name), sl = strlen(k->suffix);
    bool tmp = tt_has_suffix_nocase(name, ".tmp") && strstr(name, k->suffix) && k->magic;
    if (name[0] == '.' || (!tmp && (len <= sl || strcmp(name + len - sl, k->suffix) != 0)))
      continue;
    struct stat st;
    if (fstatat(dirfd(d), name, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st.st_mode)) continue;
    char *path = tt_xasprintf("%s/%s", dir, name);
    long long age = (long long)(now - st.st_mtime);
    bool go = tmp ? age > TT_CACHE_TMP_AGE_S
                  : !k->magic || (max_age_s > 0 && age > max_age_s) ||
                        tt_cache_entry_dead(path, k->magic);
    if (go) {
      tt_cache_remove(path, (long long)st.st_size, dry_run, r);
      free(path);
      continue;
    }
    if (tmp) { /* a writer at work */
      free(path);
      continue;
    }
    *kept = tt_xrealloc(*kept, (*nkept + 1) * sizeof **kept);
    (*kept)[(*nkept)++] = (tt_cache_file){path, st.st_mtime, (long long)st.st_size};
  }
  closedir(d);
  free(dir);
}

static int tt_cache_file_cmp(const void *a, const void *b) {
  const tt_cache_file *x = a, *y = b;
  if (x->used != y->used) return x->used < y->used ? -1 : 1;
  return strcmp(x->path, y->path);
}

void tt_schema_cache_gc(const char *cache_dir, long long max_age_s, long long max_bytes,
                        bool dry_run, tt_cache_gc_report *r) {
  memset(r, 0, sizeof *r);
  if (!cache_dir || !*cache_dir) return;
  time_t now = time(NULL);
  tt_cache_file *kept = NULL;
  size_t nkept = 0;
  for (size_t i = 0; i < sizeof tt_cache_kinds / sizeof tt_cache_kinds[0]; i++)
    tt_cache_gc_kind(cache_dir, &tt_cache_kinds[i], now, max_age_s, dry_run, r, &kept, &nkept);
  long long total = 0;
  for (size_t i = 0; i < nkept; i++) total += kept[i].size;
  if (nkept) qsort(kept, nkept, sizeof *kept, tt_cache_file_cmp);
  for (size_t i = 0; i < nkept; i++) {
    if (max_bytes > 0 && total > max_bytes) { /* the least recently used first */
      size_t failed = r->failed;
      tt_cache_remove(kept[i].path, kept[i].size, dry_run, r);
      if (r->failed == failed) {
        total -= kept[i].size;
        free(kept[i].path);
        continue;
      }
    }
    r->kept++;
    r->kept_bytes += kept[i].size;
    free(kept[i].path);
  }
  free(kept);
}
