/* live.c — reading a file that another program may be writing: before a
 * query the handle follows the file (a file replaced by rename is opened
 * anew; a WAL file read without locks is opened anew when a writer comes
 * or its contents change), after a read without locks the file must still
 * be as it was (else the read is done again), and a snapshot keeps one read
 * transaction over several queries with a version for result caches. */
#include "db/db_internal.h"

#include <stdlib.h>
#include <string.h>

static bool tt_same_file(const tt_file_id *a, const tt_file_id *b) {
  return a->dev == b->dev && a->ino == b->ino;
}

static bool tt_same_contents(const tt_file_id *a, const tt_file_id *b) {
  return tt_same_file(a, b) && a->size == b->size && a->mtime_ns == b->mtime_ns &&
         a->ctime_ns == b->ctime_ns;
}

/* No writer has come since the connection was made: no -wal, and a -shm
 * only if there was one (a leftover) then. */
static bool tt_no_writer(const tt_db *db) {
  char *wal = tt_xasprintf("%s-wal", db->real), *shm = tt_xasprintf("%s-shm", db->real);
  bool quiet = !tt_file_exists(wal) && tt_file_exists(shm) == db->had_shm;
  free(wal);
  free(shm);
  return quiet;
}

bool tt_db_refresh(tt_db *db, tt_error *err) {
  if (db->in_snapshot) return true;
  if (db->csv) {
    /* the files as they are now: the same image when nothing changed, else
     * the new contents loaded (once for every handle) */
    tt_csv_data *now = tt_csv_acquire(db->path, db->real, db->opts.csv_header, err);
    if (!now) return false;
    if (now == db->csv) {
      tt_csv_release(now);
      return true;
    }
    tt_csv_release(db->csv);
    db->csv = now;
    return tt_db_connect(db, err);
  }
  tt_file_id now;
  if (!tt_db_file_id_read(db->real, &now)) {
    tt_db_set_error(err, TT_ERR_IO,
                    "%s is gone (deleted or renamed while tabletalk had it open); check the path",
                    db->path);
    return false;
  }
  bool current = tt_same_file(&now, &db->file);
  if (current && db->automatic_immutable)
    current = tt_same_contents(&now, &db->file) && tt_no_writer(db);
  return current || tt_db_connect(db, err);
}

bool tt_db_unchanged(tt_db *db) {
  if (!db->automatic_immutable) return true; /* SQLite's locks kept the read whole */
  tt_file_id now;
  return tt_db_file_id_read(db->real, &now) && tt_same_contents(&now, &db->file) &&
         tt_no_writer(db);
}

/* FNV-1a over the connection and SQLite's data version. */
static uint64_t tt_version(uint64_t serial, unsigned int data_version) {
  uint64_t parts[2] = {serial, data_version};
  uint64_t h = tt_fnv1a64(TT_FNV1A64_INIT, parts, sizeof parts);
  return h ? h : 1;
}

/* One of tabletalk's own statements, past the authorizer. */
static int tt_db_internal_exec(tt_db *db, const char *sql) {
  db->internal = true;
  int rc = sqlite3_exec(db->h, sql, NULL, NULL, NULL);
  db->internal = false;
  return rc;
}

bool tt_db_snapshot_begin(tt_db *db, uint64_t *version, tt_error *err) {
  if (db->pg) return tt_pg_snapshot_begin(db, version, err);
  if (db->in_snapshot) tt_db_snapshot_end(db);
  if (!tt_db_refresh(db, err)) return false;
  if (db->automatic_immutable) {
    /* no locks to hold: a change makes tt_db_refresh open a new connection,
     * and so a new version */
    *version = tt_version(db->serial, 0);
    return true;
  }
  tt_guard_arm(db, tt_now_ms() + db->opts.timeout_s * 1000.0);
  int rc = tt_db_internal_exec(db, "BEGIN; SELECT 1 FROM sqlite_schema LIMIT 1;");
  if (rc != SQLITE_OK) {
    tt_db_fail(db, sqlite3_extended_errcode(db->h), err);
    if (!sqlite3_get_autocommit(db->h)) tt_db_internal_exec(db, "ROLLBACK");
    return false;
  }
  unsigned int dv = 0;
  sqlite3_file_control(db->h, "main", SQLITE_FCNTL_DATA_VERSION, &dv);
  *version = tt_version(db->serial, dv);
  db->in_snapshot = true;
  return true;
}

void tt_db_snapshot_end(tt_db *db) {
  if (db->pg) return;
  if (!db->in_snapshot) return;
  db->in_snapshot = false;
  if (!sqlite3_get_autocommit(db->h)) tt_db_internal_exec(db, "COMMIT");
}
