/* live.c — reading a file that another program may be writing: before a
 * query the handle follows the file (a file replaced by rename is opened
 * anew; a WAL file read without locks is opened anew when a writer comes
 * or its contents change), after a read without locks the file must still
 * be as it was (else the read is done again), and a snapshot keeps one read
 * transaction over several queries with a version for result caches (at
 * once or not at all, for a thread that must not wait). */
#include "db/sqlite/csv.h"

#include <stdlib.h>
#include <string.h>

/* No writer has come since the connection was made: no -wal, and a -shm
 * only if there was one (a leftover) then. */
static bool tt_no_writer(const tt_sqlite *s) {
  char *wal = tt_xasprintf("%s-wal", s->real), *shm = tt_xasprintf("%s-shm", s->real);
  bool quiet = !tt_file_exists(wal) && tt_file_exists(shm) == s->had_shm;
  free(wal);
  free(shm);
  return quiet;
}

bool tt_db_refresh(tt_sqlite *s, double deadline_ms, tt_error *err) {
  if (s->in_snapshot) return true;
  if (s->csv) {
    /* the files as they are now: the same image when nothing changed, else
     * the new contents loaded (once for every handle), within the query's
     * time limit */
    tt_csv_data *now =
        tt_csv_acquire(s->db->name, s->real, s->db->opts.csv_header, s->db->opts.csv_types,
                       deadline_ms, true, err);
    if (!now) return false;
    if (now == s->csv) {
      tt_csv_release(now);
      return true;
    }
    tt_csv_release(s->csv);
    s->csv = now;
    return tt_db_connect(s, err);
  }
  tt_file_id now;
  if (!tt_db_file_id_read(s->real, &now)) {
    tt_db_set_error(err, TT_ERR_IO,
                    "%s is gone (deleted or renamed while tabletalk had it open); check the path",
                    s->db->name);
    return false;
  }
  bool current = tt_db_same_file(&now, &s->file);
  if (current && s->automatic_immutable)
    current = tt_db_same_contents(&now, &s->file) && tt_no_writer(s);
  return current || tt_db_connect(s, err);
}

bool tt_db_unchanged(tt_sqlite *s) {
  if (!s->automatic_immutable) return true; /* SQLite's locks kept the read whole */
  tt_file_id now;
  return tt_db_file_id_read(s->real, &now) && tt_db_same_contents(&now, &s->file) &&
         tt_no_writer(s);
}

bool tt_db_transient(const tt_sqlite *s, int rc, double deadline_ms) {
  return (rc == SQLITE_READONLY_ROLLBACK || (rc & 0xff) == SQLITE_BUSY) && !s->cancelled &&
         tt_now_ms() + 5 < deadline_ms;
}

/* FNV-1a over the connection and SQLite's data version. */
static uint64_t tt_version(uint64_t serial, unsigned int data_version) {
  uint64_t parts[2] = {serial, data_version};
  uint64_t h = tt_fnv1a64(TT_FNV1A64_INIT, parts, sizeof parts);
  return h ? h : 1;
}

/* One of tabletalk's own statements, past the authorizer. */
static int tt_db_internal_exec(tt_sqlite *s, const char *sql) {
  s->internal = true;
  int rc = sqlite3_exec(s->h, sql, NULL, NULL, NULL);
  s->internal = false;
  return rc;
}

/* The snapshot's own statements, prepared once per connection and kept:
 * parsing BEGIN and the first read anew for every query was a sixth of a
 * cached MCP call. SQLite prepares a kept statement again by itself when
 * the schema changed. */
enum { TT_OWN_BEGIN, TT_OWN_FIRST_READ, TT_OWN_COMMIT };
static const char *const tt_own_sql[] = {"BEGIN", "SELECT 1 FROM sqlite_schema LIMIT 1", "COMMIT"};

/* Runs own statement k to its end (SQLITE_OK) or its error code. */
static int tt_db_own_run(tt_sqlite *s, int k) {
  s->internal = true;
  int rc = SQLITE_OK;
  if (!s->own[k])
    rc = sqlite3_prepare_v3(s->h, tt_own_sql[k], -1, SQLITE_PREPARE_PERSISTENT, &s->own[k], NULL);
  if (rc == SQLITE_OK) {
    while ((rc = sqlite3_step(s->own[k])) == SQLITE_ROW) {}
    if (rc == SQLITE_DONE) rc = SQLITE_OK;
    sqlite3_reset(s->own[k]);
  }
  s->internal = false;
  return rc;
}

void tt_sqlite_snapshot_end(tt_db *db) {
  tt_sqlite *s = tt_sqlite_of(db);
  if (!s->in_snapshot) return;
  s->in_snapshot = false;
  if (!sqlite3_get_autocommit(s->h) && tt_db_own_run(s, TT_OWN_COMMIT) != SQLITE_OK &&
      !sqlite3_get_autocommit(s->h))
    tt_db_internal_exec(s, "ROLLBACK"); /* a read ends even when COMMIT cannot */
}

/* BEGIN and the first read, once, with no wait for another program's lock
 * (the busy handler gives up at the deadline, now). */
static bool tt_db_begin_at_once(tt_sqlite *s, uint64_t *version) {
  tt_guard_arm(s, tt_now_ms());
  int rc = tt_db_own_run(s, TT_OWN_BEGIN);
  if (rc == SQLITE_OK) rc = tt_db_own_run(s, TT_OWN_FIRST_READ);
  if (rc != SQLITE_OK) {
    if (!sqlite3_get_autocommit(s->h)) tt_db_internal_exec(s, "ROLLBACK");
    return false;
  }
  unsigned int dv = 0;
  sqlite3_file_control(s->h, "main", SQLITE_FCNTL_DATA_VERSION, &dv);
  *version = tt_version(s->serial, dv);
  s->in_snapshot = true;
  return true;
}

bool tt_sqlite_snapshot_quick(tt_db *db, uint64_t *version) {
  tt_sqlite *s = tt_sqlite_of(db);
  if (s->in_snapshot) tt_sqlite_snapshot_end(db);
  if (s->csv) return false; /* its files may have to be loaded again */
  /* where tt_db_refresh would connect anew, give up */
  tt_file_id now;
  if (!tt_db_file_id_read(s->real, &now) || !tt_db_same_file(&now, &s->file)) return false;
  if (s->automatic_immutable) {
    if (!tt_db_same_contents(&now, &s->file) || !tt_no_writer(s)) return false;
    *version = tt_version(s->serial, 0);
    return true;
  }
  return tt_db_begin_at_once(s, version);
}

bool tt_sqlite_snapshot_begin(tt_db *db, uint64_t *version, tt_error *err) {
  tt_sqlite *s = tt_sqlite_of(db);
  if (s->in_snapshot) tt_sqlite_snapshot_end(db);
  double deadline = tt_now_ms() + db->opts.timeout_s * 1000.0;
  if (!tt_db_refresh(s, deadline, err)) return false;
  if (s->automatic_immutable) {
    /* no locks to hold: a change makes tt_db_refresh open a new connection,
     * and so a new version */
    *version = tt_version(s->serial, 0);
    return true;
  }
  for (int attempt = 0;; attempt++) {
    tt_guard_arm(s, deadline);
    int rc = tt_db_own_run(s, TT_OWN_BEGIN);
    if (rc == SQLITE_OK) rc = tt_db_own_run(s, TT_OWN_FIRST_READ);
    if (rc == SQLITE_OK) break;
    rc = sqlite3_extended_errcode(s->h);
    if (!sqlite3_get_autocommit(s->h)) tt_db_internal_exec(s, "ROLLBACK");
    if (!tt_db_transient(s, rc, deadline)) {
      tt_db_fail(s, rc, err);
      return false;
    }
    sqlite3_sleep(attempt < 10 ? 1 : 5);
    if (!tt_db_refresh(s, deadline, err)) return false;
  }
  unsigned int dv = 0;
  sqlite3_file_control(s->h, "main", SQLITE_FCNTL_DATA_VERSION, &dv);
  *version = tt_version(s->serial, dv);
  s->in_snapshot = true;
  return true;
}
