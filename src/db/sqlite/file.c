/* file.c — a SQLite file as it lies on disk now: its identity (device and
 * inode) and the facts that change when it is written (size, times), and
 * whether it is in WAL mode with a -wal or -shm beside it. Connecting and
 * following the file (connect.c, live.c) decide from these. */
#include "db/sqlite/sqlite.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

bool tt_db_file_id_read(const char *path, tt_file_id *id) {
  struct stat st;
  if (stat(path, &st) != 0) return false;
  *id = (tt_file_id){.dev = (uint64_t)st.st_dev, .ino = (uint64_t)st.st_ino,
                     .size = (int64_t)st.st_size,
                     .mtime_ns = (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec,
                     .ctime_ns = (int64_t)st.st_ctim.tv_sec * 1000000000 + st.st_ctim.tv_nsec};
  return true;
}

bool tt_db_same_file(const tt_file_id *a, const tt_file_id *b) {
  return a->dev == b->dev && a->ino == b->ino;
}

bool tt_db_same_contents(const tt_file_id *a, const tt_file_id *b) {
  return tt_db_same_file(a, b) && a->size == b->size && a->mtime_ns == b->mtime_ns &&
         a->ctime_ns == b->ctime_ns;
}

void tt_db_wal_state(const char *path, bool *is_wal, bool *has_wal, bool *has_shm) {
  unsigned char hdr[20];
  FILE *f = fopen(path, "rb");
  size_t n = f ? fread(hdr, 1, sizeof hdr, f) : 0;
  if (f) fclose(f);
  *is_wal = n == sizeof hdr && memcmp(hdr, "SQLite format 3", 16) == 0 && hdr[18] == 2 &&
            hdr[19] == 2;
  char *wal = tt_xasprintf("%s-wal", path), *shm = tt_xasprintf("%s-shm", path);
  *has_wal = tt_file_exists(wal);
  *has_shm = tt_file_exists(shm);
  free(wal);
  free(shm);
}
