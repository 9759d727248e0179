/* values_cache.c — keeps the value index between runs in a file under the
 * cache directory, one per database file, so that only the first question
 * pays for reading the values. The file is keyed by the database file's
 * identity (device, inode, size, modification time, those of its -wal
 * file, and the schema), written atomically (temp file, then rename),
 * and read as hostile input: anything malformed or truncated is ignored
 * and the index rebuilt. The user's database is only ever read. */
#include "schema/schema.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define TT_VALUES_MAGIC "tabletalk-values 1"
#define TT_VALUES_FILE_MAX (64L * 1024 * 1024)
/* databases this large get a progress line on a terminal while indexing */
#define TT_VALUES_PROGRESS_BYTES (64LL * 1024 * 1024)

char *tt_values_cache_path(const char *cache_dir, const char *db_path) {
  char real[PATH_MAX];
  const char *p = realpath(db_path, real) ? real : db_path;
  tt_sha256 *h = tt_sha256_new();
  tt_sha256_update(h, p, strlen(p));
  char hex[65];
  tt_sha256_finish(h, hex);
  hex[32] = '\0';
  return tt_xasprintf("%s/values/%s.tsv", cache_dir, hex);
}

static void tt_stat_put(tt_sha256 *h, const char *path) {
  struct stat st;
  char line[160];
  if (stat(path, &st) != 0) {
    tt_sha256_update(h, "-\n", 2);
    return;
  }
  int n = snprintf(line, sizeof line, "%llu %llu %lld %lld.%09ld\n", (unsigned long long)st.st_dev,
                   (unsigned long long)st.st_ino, (long long)st.st_size, (long long)st.st_mtim.tv_sec,
                   (long)st.st_mtim.tv_nsec);
  tt_sha256_update(h, line, (size_t)n);
}

/* Hex digest of what the index depends on; false when the file cannot be stat'ed. */
static bool tt_values_identity(const char *db_path, const tt_catalog *cat, char hex[65]) {
  struct stat st;
  if (!db_path || !*db_path || stat(db_path, &st) != 0 || !S_ISREG(st.st_mode)) return false;
  tt_sha256 *h = tt_sha256_new();
  tt_stat_put(h, db_path);
  char *wal = tt_xasprintf("%s-wal", db_path);
  tt_stat_put(h, wal);
  free(wal);
  tt_values_opts o = tt_values_default_opts();
  char line[128];
  int n = snprintf(line, sizeof line, "%ld %zu %ld %ld\n", o.max_per_column, o.max_total, o.max_len,
                   o.scan_rows);
  tt_sha256_update(h, line, (size_t)n);
  for (size_t t = 0; t < cat->ntables; t++) {
    const tt_table_info *ti = &cat->tables[t];
    tt_sha256_update(h, ti->name, strlen(ti->name) + 1);
    for (size_t c = 0; c < ti->ncols; c++) {
      tt_sha256_update(h, ti->cols[c].name, strlen(ti->cols[c].name) + 1);
      tt_sha256_update(h, ti->cols[c].type, strlen(ti->cols[c].type) + 1);
    }
  }
  tt_sha256_finish(h, hex);
  return true;
}

static bool tt_clean_name(const char *s) {
  for (; *s; s++)
    if ((unsigned char)*s < 0x20) return false;
  return true;
}

/* Writes the index next to path, then renames it into place. */
static bool tt_values_save(const tt_values *v, const char *path, const char *identity) {
  char *dir = tt_xstrdup(path);
  char *slash = strrchr(dir, '/');
  if (slash) *slash = '\0';
  bool ok = tt_mkdir_p(dir, 0700);
  free(dir);
  if (!ok) return false;
  char *tmp = tt_xasprintf("%s.%ld.tmp", path, (long)getpid());
  FILE *f = fopen(tmp, "wb");
  if (!f) {
    free(tmp);
    return false;
  }
  size_t n = tt_values_count(v), written = 0;
  fprintf(f, "%s\nidentity %s\n", TT_VALUES_MAGIC, identity);
  for (size_t i = 0; i < n; i++) {
    const char *t, *c, *val;
    tt_values_entry(v, i, &t, &c, &val);
    if (!tt_clean_name(t) || !tt_clean_name(c) || strchr(t, '\t') || strchr(c, '\t')) continue;
    fprintf(f, "%s\t%s\t%s\n", t, c, val);
    written++;
  }
  fprintf(f, "end %zu\n", written);
  ok = fflush(f) == 0 && fsync(fileno(f)) == 0;
  ok = (fclose(f) == 0) && ok;
  if (ok) ok = rename(tmp, path) == 0;
  if (!ok) unlink(tmp);
  free(tmp);
  return ok;
}

/* The index in path when it is whole and its identity is this one; NULL otherwise. */
static tt_values *tt_values_load(const char *path, const char *identity) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  tt_buf b = TT_BUF_INIT;
  char chunk[65536];
  size_t got;
  while ((got = fread(chunk, 1, sizeof chunk, f)) > 0 && b.len <= (size_t)TT_VALUES_FILE_MAX)
    tt_buf_append(&b, chunk, got);
  fclose(f);
  tt_values *v = NULL;
  char head[128];
  snprintf(head, sizeof head, "%s\nidentity %s\n", TT_VALUES_MAGIC, identity);
  if (b.len > (size_t)TT_VALUES_FILE_MAX || b.len < strlen(head) || memcmp(b.data, head, strlen(head)) != 0 ||
      memchr(b.data, '\0', b.len))
    goto out;
  v = tt_values_new();
  char *p = b.data + strlen(head), *end = b.data + b.len;
  while (p < end) {
    char *nl = memchr(p, '\n', (size_t)(end - p));
    if (!nl) goto bad; /* truncated */
    *nl = '\0';
    if (strncmp(p, "end ", 4) == 0) {
      long count;
      if (nl + 1 != end || !tt_parse_long(p + 4, 0, LONG_MAX, &count) ||
          (size_t)count != tt_values_count(v))
        goto bad;
      tt_values_finish(v);
      goto out;
    }
    char *t1 = strchr(p, '\t'), *t2 = t1 ? strchr(t1 + 1, '\t') : NULL;
    if (!t2) goto bad;
    *t1 = *t2 = '\0';
    if (!tt_utf8_valid(t2 + 1, strlen(t2 + 1), NULL) ||
        !tt_values_add(v, p, t1 + 1, t2 + 1, strlen(t2 + 1)))
      goto bad;
    p = nl + 1;
  }
bad: /* no end line, or a line that the writer could not have written */
  tt_values_free(v);
  v = NULL;
out:
  tt_buf_free(&b);
  return v;
}

tt_values *tt_values_open(tt_db *db, const tt_catalog *cat, const char *cache_dir, bool show,
                          bool *cached) {
  if (cached) *cached = false;
  const char *db_path = tt_db_path(db);
  char identity[65];
  char *path = NULL;
  if (cache_dir && *cache_dir && tt_values_identity(db_path, cat, identity)) {
    path = tt_values_cache_path(cache_dir, db_path);
    tt_values *v = tt_values_load(path, identity);
    if (v) {
      if (cached) *cached = true;
      free(path);
      return v;
    }
  }
  struct stat st;
  bool progress = show && db_path && stat(db_path, &st) == 0 && st.st_size >= TT_VALUES_PROGRESS_BYTES;
  double t0 = tt_now_ms();
  if (progress) fprintf(stderr, "tabletalk: indexing the values of %s (once; cached)...", db_path);
  tt_values *v = tt_values_build(db, cat, NULL);
  if (progress) fprintf(stderr, " %zu values in %.1f s\n", tt_values_count(v), (tt_now_ms() - t0) / 1000.0);
  if (path) tt_values_save(v, path, identity);
  free(path);
  return v;
}
