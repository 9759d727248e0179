/* stamp.c — what proves the catalog of a SQLite file, or of CSV files,
 * unchanged, without reading a row (tt_db_catalog_stamp):
 *
 *   identity  the resolved path, device and inode (a copy elsewhere, or a
 *             file replaced by rename, is another database)
 *   schema    the schema cookie (PRAGMA schema_version: SQLite changes it
 *             with every CREATE, DROP or ALTER, also through the -wal)
 *   data      the size and modification time of the file and of its -wal:
 *             rows change only by writes, and writes change these
 *
 * CSV files are their own schema: their identity is the folder or file and
 * the header mode, their schema stamp each file's identity, size, times and
 * a hash of its first bytes, and their data stamp is empty. */
#include "db/sqlite/csv.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* "size mtime" of path, or "-" when it is not there. */
static void tt_stat_words(tt_buf *out, const char *path) {
  struct stat st;
  if (stat(path, &st) != 0) {
    tt_buf_puts(out, "-");
    return;
  }
  tt_buf_printf(out, "%lld %lld.%09ld", (long long)st.st_size, (long long)st.st_mtim.tv_sec,
                (long)st.st_mtim.tv_nsec);
}

/* PRAGMA schema_version on the connection, past the authorizer (tabletalk's
 * own statement; it reads the header page only). */
static bool tt_schema_cookie(tt_sqlite *s, long long *cookie, tt_error *err) {
  tt_guard_arm(s, tt_now_ms() + s->db->opts.timeout_s * 1000.0);
  sqlite3_stmt *st = NULL;
  s->internal = true;
  int rc = sqlite3_prepare_v2(s->h, "PRAGMA schema_version", -1, &st, NULL);
  if (rc == SQLITE_OK) rc = sqlite3_step(st);
  s->internal = false;
  bool ok = rc == SQLITE_ROW;
  if (ok) *cookie = sqlite3_column_int64(st, 0);
  else tt_db_fail(s, rc, err);
  sqlite3_finalize(st);
  return ok;
}

bool tt_sqlite_catalog_stamp(tt_db *db, tt_catalog_stamp *out, tt_error *err) {
  tt_sqlite *s = tt_sqlite_of(db);
  if (!tt_db_refresh(s, tt_now_ms() + db->opts.timeout_s * 1000.0, err)) /* as it is now */
    return false;
  tt_buf b = TT_BUF_INIT;
  if (s->csv) {
    out->identity = tt_xasprintf("csv %s\nheader %d\ntypes %s\n", s->real, (int)db->opts.csv_header,
                                 db->opts.csv_types ? db->opts.csv_types : "");
    tt_csv_stamp(s->csv, &b);
    out->schema = tt_buf_detach(&b);
    out->data = tt_xstrdup("");
    return true;
  }
  long long cookie;
  if (!tt_schema_cookie(s, &cookie, err)) return false;
  out->identity = tt_xasprintf("sqlite %s\nfile %llu %llu\n", s->real,
                               (unsigned long long)s->file.dev, (unsigned long long)s->file.ino);
  out->schema = tt_xasprintf("schema_version %lld\n", cookie);
  tt_buf_puts(&b, "file ");
  tt_stat_words(&b, s->real);
  char *wal = tt_xasprintf("%s-wal", s->real);
  tt_buf_puts(&b, "\nwal ");
  tt_stat_words(&b, wal);
  tt_buf_putc(&b, '\n');
  free(wal);
  out->data = tt_buf_detach(&b);
  return true;
}
