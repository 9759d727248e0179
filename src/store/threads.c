/* threads.c — the thread store: a small SQLite file of questions and
 * answers per (thread, database), read back as follow-up context. WAL mode,
 * one transaction per write, a busy timeout for concurrent processes. */
#include "store/store_internal.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

struct tt_store {
  sqlite3 *h;
};

static const char tt_store_schema[] =
    "PRAGMA journal_mode=WAL;"
    "PRAGMA synchronous=NORMAL;"
    "CREATE TABLE IF NOT EXISTS turns("
    "  thread TEXT NOT NULL, db_path TEXT NOT NULL, seq INTEGER NOT NULL,"
    "  run_id TEXT, question TEXT NOT NULL, answer TEXT, sql TEXT, summary TEXT,"
    "  status TEXT NOT NULL, pending TEXT, created REAL NOT NULL, numbers TEXT,"
    "  PRIMARY KEY(thread, db_path, seq));"
    /* a title given to a thread (tabletalk web renames threads) */
    "CREATE TABLE IF NOT EXISTS titles("
    "  thread TEXT NOT NULL, db_path TEXT NOT NULL, title TEXT NOT NULL,"
    "  PRIMARY KEY(thread, db_path));"
    /* SQL run by hand (queries.c): an id per text, the history */
    "CREATE TABLE IF NOT EXISTS queries("
    "  db_path TEXT NOT NULL, id TEXT NOT NULL, sql TEXT NOT NULL, created REAL NOT NULL,"
    "  last_run REAL, runs INTEGER NOT NULL DEFAULT 0, PRIMARY KEY(db_path, id));"
    /* answers pinned to a database's board (pins.c) */
    "CREATE TABLE IF NOT EXISTS pins("
    "  id INTEGER PRIMARY KEY, db_path TEXT NOT NULL, position INTEGER NOT NULL,"
    "  title TEXT NOT NULL, sql TEXT NOT NULL, chart TEXT, question TEXT, run_id TEXT,"
    "  created REAL NOT NULL);";

/* The layout above, as PRAGMA user_version records it once a store has
 * it: a store at this version skips the CREATE statements (parsing them
 * took 0.6 to 1.7 M instructions of every start). Raise it with every
 * change to the layout or to tt_store_migrate. */
#define TT_STORE_VERSION 1

/* Stores made before a column existed get it. */
static int tt_store_add_column(sqlite3 *h, const char *probe, const char *alter) {
  sqlite3_stmt *st = NULL;
  if (sqlite3_prepare_v2(h, probe, -1, &st, NULL) == SQLITE_OK) {
    sqlite3_finalize(st);
    return SQLITE_OK;
  }
  return sqlite3_exec(h, alter, NULL, NULL, NULL);
}

static int tt_store_migrate(sqlite3 *h) {
  int rc = tt_store_add_column(h, "SELECT numbers FROM turns LIMIT 0",
                               "ALTER TABLE turns ADD COLUMN numbers TEXT");
  if (rc != SQLITE_OK) return rc;
  /* the agent's notes on a turn (result labels, what private mode retells) */
  return tt_store_add_column(h, "SELECT notes FROM turns LIMIT 0",
                             "ALTER TABLE turns ADD COLUMN notes TEXT");
}

#define TT_STORE_STR(x) #x
#define TT_STORE_XSTR(x) TT_STORE_STR(x)
#define TT_STORE_VERSION_TEXT TT_STORE_XSTR(TT_STORE_VERSION)

/* The store's recorded layout version; -1 when it cannot be read (busy). */
static int tt_store_version(sqlite3 *h) {
  sqlite3_stmt *st = NULL;
  int v = -1;
  if (sqlite3_prepare_v2(h, "PRAGMA user_version", -1, &st, NULL) == SQLITE_OK &&
      sqlite3_step(st) == SQLITE_ROW)
    v = sqlite3_column_int(st, 0);
  sqlite3_finalize(st);
  return v;
}

tt_store *tt_store_open(const char *state_dir, tt_error *err) {
  if (!tt_mkdir_p(state_dir, 0700)) {
    tt_error_set(err, TT_ERR_IO, "cannot create the state directory %s", state_dir);
    return NULL;
  }
  char *path = tt_xasprintf("%s/threads.sqlite", state_dir);
  sqlite3 *h = NULL;
  int rc = sqlite3_open_v2(path, &h, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, NULL);
  if (rc == SQLITE_OK) {
    sqlite3_busy_timeout(h, 5000);
    /* Each ask is a short process: keep the WAL file and skip the
     * checkpoint on close, so that saving a turn is one append without an
     * fsync (synchronous=NORMAL). SQLite checkpoints on its own once the
     * WAL passes 1,000 pages. A killed process loses nothing committed. */
    int persist = 1;
    sqlite3_db_config(h, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1, (int *)NULL);
    sqlite3_file_control(h, "main", SQLITE_FCNTL_PERSIST_WAL, &persist);
    int version = tt_store_version(h);
    if (version == TT_STORE_VERSION) {
      rc = sqlite3_exec(h, "PRAGMA synchronous=NORMAL", NULL, NULL, NULL); /* WAL is the file's */
    } else {
      rc = sqlite3_exec(h, tt_store_schema, NULL, NULL, NULL);
      /* switching a new file to WAL while another connection opens it can
       * report busy without waiting: wait here, briefly, and try again */
      for (int tries = 0; (rc == SQLITE_BUSY || rc == SQLITE_LOCKED) && tries < 100; tries++) {
        sqlite3_sleep(20);
        rc = sqlite3_exec(h, tt_store_schema, NULL, NULL, NULL);
      }
      if (rc == SQLITE_OK) rc = tt_store_migrate(h);
      /* recorded once all of it is there; never lowered (a later
       * tabletalk's layout holds this one's), nor written when it could
       * not be read */
      if (rc == SQLITE_OK && version >= 0 && version < TT_STORE_VERSION)
        rc = sqlite3_exec(h, "PRAGMA user_version=" TT_STORE_VERSION_TEXT, NULL, NULL, NULL);
    }
  }
  if (rc != SQLITE_OK) {
    tt_error_set(err, TT_ERR_IO, "cannot open the thread store %s: %s", path, h ? sqlite3_errmsg(h) : sqlite3_errstr(rc));
    sqlite3_close(h);
    free(path);
    return NULL;
  }
  free(path);
  tt_store *s = tt_xcalloc(1, sizeof *s);
  s->h = h;
  return s;
}

sqlite3 *tt_store_handle(tt_store *s) { return s->h; }

/* The WAL kept at close is read whole, every frame's checksum verified,
 * by the next process that opens the store: at 1,000 pages (SQLite's own
 * checkpoint) that was 4 MiB and milliseconds of every `ask`'s start.
 * Past this size it is folded into the file and truncated at close: one
 * checkpoint (and its fsync) every few dozen turns. */
#define TT_STORE_WAL_FOLD_BYTES (256 * 1024)

static void tt_store_fold_wal(sqlite3 *h) {
  const char *db = sqlite3_db_filename(h, "main");
  if (!db || !*db) return;
  char *wal = tt_xasprintf("%s-wal", db);
  struct stat st;
  bool big = stat(wal, &st) == 0 && st.st_size > TT_STORE_WAL_FOLD_BYTES;
  free(wal);
  if (!big) return;
  /* never wait for it: another process reading or writing the store
   * (tabletalk web, a chat) means a later close does it */
  sqlite3_busy_timeout(h, 0);
  sqlite3_wal_checkpoint_v2(h, NULL, SQLITE_CHECKPOINT_TRUNCATE, NULL, NULL);
}

void tt_store_close(tt_store *s) {
  if (!s) return;
  tt_store_fold_wal(s->h);
  sqlite3_close(s->h);
  free(s);
}

static char *tt_col_dup(sqlite3_stmt *st, int c) {
  const unsigned char *t = sqlite3_column_text(st, c);
  return t ? tt_xstrdup((const char *)t) : NULL;
}

static tt_run_status tt_status_parse(const char *s) {
  static const tt_run_status all[] = {TT_RUN_ANSWERED, TT_RUN_CLARIFY, TT_RUN_FAILED,
                                      TT_RUN_BUDGET, TT_RUN_CANCELLED, TT_RUN_REFUSED};
  for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
    if (s && strcmp(s, tt_run_status_name(all[i])) == 0) return all[i];
  return TT_RUN_FAILED;
}

bool tt_store_load_thread(tt_store *s, const char *name, const char *db_path,
                          tt_thread *out, tt_error *err) {
  memset(out, 0, sizeof *out);
  out->name = tt_xstrdup(name);
  out->db_path = tt_xstrdup(db_path);
  sqlite3_stmt *st;
  int rc = sqlite3_prepare_v2(s->h,
                              "SELECT run_id, question, answer, sql, summary, status, pending, "
                              "numbers, notes FROM turns WHERE thread = ?1 AND db_path = ?2 ORDER BY seq",
                              -1, &st, NULL);
  if (rc != SQLITE_OK) {
    tt_error_set(err, TT_ERR_IO, "cannot read the thread store: %s", sqlite3_errmsg(s->h));
    return false;
  }
  sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
  sqlite3_bind_text(st, 2, db_path, -1, SQLITE_STATIC);
  size_t cap = 0;
  while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
    if (out->nturns == cap) {
      cap = cap ? cap * 2 : 8;
      out->turns = tt_xrealloc(out->turns, cap * sizeof(tt_turn_rec));
    }
    tt_turn_rec *t = &out->turns[out->nturns++];
    t->run_id = tt_col_dup(st, 0);
    t->question = tt_col_dup(st, 1);
    t->answer = tt_col_dup(st, 2);
    t->sql = tt_col_dup(st, 3);
    t->summary = tt_col_dup(st, 4);
    t->status = tt_status_parse((const char *)sqlite3_column_text(st, 5));
    t->pending = tt_col_dup(st, 6);
    t->numbers = tt_col_dup(st, 7);
    t->notes = tt_col_dup(st, 8);
  }
  sqlite3_finalize(st);
  if (rc != SQLITE_DONE) {
    tt_error_set(err, TT_ERR_IO, "cannot read the thread store: %s", sqlite3_errmsg(s->h));
    return false;
  }
  if (sqlite3_prepare_v2(s->h, "SELECT title FROM titles WHERE thread = ?1 AND db_path = ?2", -1,
                         &st, NULL) == SQLITE_OK) {
    sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, db_path, -1, SQLITE_STATIC);
    if (sqlite3_step(st) == SQLITE_ROW) out->title = tt_col_dup(st, 0);
    sqlite3_finalize(st);
  }
  return true;
}

void tt_thread_free(tt_thread *t) {
  for (size_t i = 0; i < t->nturns; i++) {
    tt_turn_rec *r = &t->turns[i];
    free(r->run_id);
    free(r->question);
    free(r->answer);
    free(r->sql);
    free(r->summary);
    free(r->pending);
    free(r->numbers);
    free(r->notes);
  }
  free(t->turns);
  free(t->title);
  free(t->name);
  free(t->db_path);
  memset(t, 0, sizeof *t);
}

static void tt_bind_opt(sqlite3_stmt *st, int i, const char *s) {
  if (s) sqlite3_bind_text(st, i, s, -1, SQLITE_TRANSIENT);
  else sqlite3_bind_null(st, i);
}

bool tt_store_save_turn(tt_store *s, const char *name, const char *db_path,
                        const char *run_id, const char *question, const tt_run *run,
                        bool resumed, tt_error *err) {
  char *summary = tt_run_summary(run);
  char *pending = NULL;
  if (run->status == TT_RUN_CLARIFY) {
    json_t *j = tt_chat_to_json(&run->pending);
    pending = json_dumps(j, JSON_COMPACT);
    json_decref(j);
  }
  /* A resumed question completes its paused turn instead of adding one. */
  const char *sql =
      resumed ? "UPDATE turns SET run_id = ?3, question = question || ' (the user answered: ' || ?4 || ')',"
                " answer = ?5, sql = ?6, summary = ?7, status = ?8, pending = ?9, created = ?10,"
                " numbers = trim(coalesce(numbers, '') || ' ' || coalesce(?11, '')), notes = ?12 WHERE thread = ?1 AND db_path = ?2 AND seq = (SELECT max(seq) FROM turns"
                " WHERE thread = ?1 AND db_path = ?2)"
              : "INSERT INTO turns(thread, db_path, seq, run_id, question, answer, sql, summary,"
                " status, pending, created, numbers, notes) VALUES (?1, ?2, (SELECT coalesce(max(seq), 0)"
                " + 1 FROM turns WHERE thread = ?1 AND db_path = ?2), ?3, ?4, ?5, ?6, ?7, ?8, ?9,"
                " ?10, ?11, ?12)";
  bool ok = sqlite3_exec(s->h, "BEGIN IMMEDIATE", NULL, NULL, NULL) == SQLITE_OK;
  sqlite3_stmt *st = NULL;
  if (ok) ok = sqlite3_prepare_v2(s->h, sql, -1, &st, NULL) == SQLITE_OK;
  if (ok) {
    sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, db_path, -1, SQLITE_STATIC);
    tt_bind_opt(st, 3, run_id);
    tt_bind_opt(st, 4, question);
    tt_bind_opt(st, 5, run->answer ? run->answer : run->error);
    tt_bind_opt(st, 6, run->sql);
    tt_bind_opt(st, 7, summary);
    tt_bind_opt(st, 8, tt_run_status_name(run->status));
    tt_bind_opt(st, 9, pending);
    sqlite3_bind_double(st, 10, tt_wall_time());
    tt_bind_opt(st, 11, run->numbers && *run->numbers ? run->numbers : NULL);
    tt_bind_opt(st, 12, run->notes);
    ok = sqlite3_step(st) == SQLITE_DONE;
  }
  if (ok) ok = sqlite3_exec(s->h, "COMMIT", NULL, NULL, NULL) == SQLITE_OK;
  if (!ok) {
    tt_error_set(err, TT_ERR_IO, "cannot save to the thread store: %s", sqlite3_errmsg(s->h));
    sqlite3_exec(s->h, "ROLLBACK", NULL, NULL, NULL);
  }
  sqlite3_finalize(st);
  free(summary);
  free(pending);
  return ok;
}

/* ---- listing, renaming, deleting (tabletalk web's sidebar) --------------------- */

bool tt_store_list_threads(tt_store *s, const char *db_path, tt_thread_summary **out, size_t *n,
                           tt_error *err) {
  *out = NULL;
  *n = 0;
  sqlite3_stmt *st;
  int rc = sqlite3_prepare_v2(
      s->h,
      "SELECT t.thread, coalesce(ti.title, (SELECT question FROM turns f WHERE f.thread = t.thread"
      " AND f.db_path = t.db_path ORDER BY seq LIMIT 1)), max(t.created), count(*)"
      " FROM turns t LEFT JOIN titles ti ON ti.thread = t.thread AND ti.db_path = t.db_path"
      " WHERE t.db_path = ?1 GROUP BY t.thread ORDER BY max(t.created) DESC, t.thread",
      -1, &st, NULL);
  if (rc != SQLITE_OK) {
    tt_error_set(err, TT_ERR_IO, "cannot read the thread store: %s", sqlite3_errmsg(s->h));
    return false;
  }
  sqlite3_bind_text(st, 1, db_path, -1, SQLITE_STATIC);
  size_t cap = 0;
  while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
    if (*n == cap) {
      cap = cap ? cap * 2 : 16;
      *out = tt_xrealloc(*out, cap * sizeof **out);
    }
    tt_thread_summary *t = &(*out)[(*n)++];
    t->name = tt_col_dup(st, 0);
    t->title = tt_col_dup(st, 1);
    t->updated = sqlite3_column_double(st, 2);
    t->turns = (size_t)sqlite3_column_int64(st, 3);
  }
  sqlite3_finalize(st);
  if (rc != SQLITE_DONE) {
    tt_error_set(err, TT_ERR_IO, "cannot read the thread store: %s", sqlite3_errmsg(s->h));
    tt_thread_summaries_free(*out, *n);
    *out = NULL;
    *n = 0;
    return false;
  }
  return true;
}

void tt_thread_summaries_free(tt_thread_summary *v, size_t n) {
  for (size_t i = 0; i < n; i++) {
    free(v[i].name);
    free(v[i].title);
  }
  free(v);
}

/* Runs sql (binding ?1 name, ?2 db_path, ?3 extra) in a transaction after
 * checking that the thread has turns; *found says whether it had. */
static bool tt_store_thread_write(tt_store *s, const char *sql, const char *sql2,
                                  const char *name, const char *db_path, const char *extra,
                                  bool *found, tt_error *err) {
  *found = false;
  bool ok = sqlite3_exec(s->h, "BEGIN IMMEDIATE", NULL, NULL, NULL) == SQLITE_OK;
  sqlite3_stmt *st = NULL;
  if (ok) ok = sqlite3_prepare_v2(s->h, "SELECT 1 FROM turns WHERE thread = ?1 AND db_path = ?2 LIMIT 1",
                                  -1, &st, NULL) == SQLITE_OK;
  if (ok) {
    sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, db_path, -1, SQLITE_STATIC);
    int rc = sqlite3_step(st);
    ok = rc == SQLITE_ROW || rc == SQLITE_DONE;
    *found = rc == SQLITE_ROW;
  }
  sqlite3_finalize(st);
  st = NULL;
  const char *stmts[] = {sql, sql2};
  for (size_t i = 0; ok && *found && i < 2 && stmts[i]; i++) {
    ok = sqlite3_prepare_v2(s->h, stmts[i], -1, &st, NULL) == SQLITE_OK;
    if (ok) {
      sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
      sqlite3_bind_text(st, 2, db_path, -1, SQLITE_STATIC);
      if (extra && sqlite3_bind_parameter_count(st) >= 3)
        sqlite3_bind_text(st, 3, extra, -1, SQLITE_STATIC);
      ok = sqlite3_step(st) == SQLITE_DONE;
    }
    sqlite3_finalize(st);
    st = NULL;
  }
  if (ok) ok = sqlite3_exec(s->h, "COMMIT", NULL, NULL, NULL) == SQLITE_OK;
  if (!ok) {
    tt_error_set(err, TT_ERR_IO, "cannot change the thread store: %s", sqlite3_errmsg(s->h));
    sqlite3_exec(s->h, "ROLLBACK", NULL, NULL, NULL);
  }
  return ok;
}

bool tt_store_rename_thread(tt_store *s, const char *name, const char *db_path, const char *title,
                            bool *found, tt_error *err) {
  return tt_store_thread_write(s,
                               "INSERT INTO titles(thread, db_path, title) VALUES (?1, ?2, ?3)"
                               " ON CONFLICT(thread, db_path) DO UPDATE SET title = excluded.title",
                               NULL, name, db_path, title, found, err);
}

bool tt_store_delete_thread(tt_store *s, const char *name, const char *db_path, bool *found,
                            tt_error *err) {
  return tt_store_thread_write(s, "DELETE FROM turns WHERE thread = ?1 AND db_path = ?2",
                               "DELETE FROM titles WHERE thread = ?1 AND db_path = ?2", name,
                               db_path, NULL, found, err);
}
