/* open.c — opening a database file read-only with the reference settings:
 * URI with mode=ro (immutable=1 on request, or for a WAL file no writer has
 * open, so that no -wal or -shm is created), no symlink following,
 * defensive mode, untrusted schema, no extensions, hard limits on sizes and
 * memory, and a busy handler that waits for writers within the time
 * limit. A CSV file or folder is opened as its in-memory image (csv.c)
 * with the same settings. */
#include "db/db_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

tt_db_opts tt_db_default_opts(void) {
  return (tt_db_opts){
      .immutable = false,
      .timeout_s = 5.0,
      .max_rows = 200,
      .max_bytes = 1000000,
      .double_quoted_strings = true,
  };
}

void tt_db_set_error(tt_error *err, tt_errkind kind, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  tt_error_vset(err, kind, fmt, ap);
  va_end(ap);
}

void tt_db_refuse(tt_error *err, tt_db_refusal reason, const char *fmt, ...) {
  if (!err) return;
  va_list ap;
  va_start(ap, fmt);
  tt_error_vset(err, TT_ERR_REFUSED, fmt, ap);
  va_end(ap);
  err->reason = (int)reason;
}

const char *tt_db_refusal_name(tt_db_refusal r) {
  static const char *const names[] = {
      [TT_REFUSE_NONE] = "none",           [TT_REFUSE_WRITE] = "write",
      [TT_REFUSE_SCHEMA] = "schema",       [TT_REFUSE_ATTACH] = "attach",
      [TT_REFUSE_TRANSACTION] = "transaction", [TT_REFUSE_PRAGMA] = "pragma",
      [TT_REFUSE_FUNCTION] = "function",   [TT_REFUSE_INTERNALS] = "internals",
      [TT_REFUSE_MULTIPLE] = "multiple",   [TT_REFUSE_EXPLAIN] = "explain",
      [TT_REFUSE_TEXT] = "text",           [TT_REFUSE_EMPTY] = "empty",
      [TT_REFUSE_OTHER] = "other",
  };
  return (size_t)r < sizeof names / sizeof names[0] && names[r] ? names[r] : "other";
}

bool tt_db_refusal_is_write(tt_db_refusal r) {
  return r == TT_REFUSE_WRITE || r == TT_REFUSE_SCHEMA;
}

/* file:PATH?mode=ro with every byte outside the URI-safe set %-encoded. */
static char *tt_db_uri(const char *path, bool immutable) {
  tt_buf b = TT_BUF_INIT;
  tt_buf_puts(&b, "file:");
  for (const unsigned char *p = (const unsigned char *)path; *p; p++) {
    unsigned char c = *p;
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
        (c >= '0' && c <= '9') || strchr("/-._~", c))
      tt_buf_putc(&b, (char)c);
    else
      tt_buf_printf(&b, "%%%02X", c);
  }
  tt_buf_puts(&b, immutable ? "?mode=ro&immutable=1" : "?mode=ro");
  return tt_buf_detach(&b);
}

static bool tt_db_check_file(const char *path, tt_error *err) {
  struct stat st;
  if (stat(path, &st) != 0) {
    if (errno == ENOENT)
      tt_db_set_error(err, TT_ERR_IO,
                      "no such file: %s (tabletalk only opens existing SQLite "
                      "files and never creates one; check the path)", path);
    else
      tt_db_set_error(err, TT_ERR_IO, "cannot open %s: %s", path,
                      strerror(errno));
    return false;
  }
  if (S_ISDIR(st.st_mode)) {
    tt_db_set_error(err, TT_ERR_IO,
                    "%s is a directory; give the path of a SQLite database file",
                    path);
    return false;
  }
  if (!S_ISREG(st.st_mode)) {
    tt_db_set_error(err, TT_ERR_IO,
                    "%s is not a regular file; give the path of a SQLite database file", path);
    return false;
  }
  if (access(path, R_OK) != 0) {
    tt_db_set_error(err, TT_ERR_IO,
                    "cannot read %s: %s (check the file's permissions)", path,
                    strerror(errno));
    return false;
  }
  return true;
}

static void tt_db_apply_limits(sqlite3 *h) {
  static const int limits[][2] = {
      {SQLITE_LIMIT_LENGTH, TT_LIMIT_LENGTH},
      {SQLITE_LIMIT_SQL_LENGTH, TT_LIMIT_SQL_LENGTH},
      {SQLITE_LIMIT_COLUMN, 500},
      {SQLITE_LIMIT_EXPR_DEPTH, 100},
      {SQLITE_LIMIT_COMPOUND_SELECT, 50},
      {SQLITE_LIMIT_VDBE_OP, TT_LIMIT_VDBE_OP},
      {SQLITE_LIMIT_FUNCTION_ARG, 64},
      {SQLITE_LIMIT_ATTACHED, 0},
      {SQLITE_LIMIT_LIKE_PATTERN_LENGTH, 1000},
      {SQLITE_LIMIT_VARIABLE_NUMBER, 100},
      {SQLITE_LIMIT_TRIGGER_DEPTH, 1},
      {SQLITE_LIMIT_WORKER_THREADS, 0},
  };
  for (size_t i = 0; i < sizeof limits / sizeof limits[0]; i++)
    sqlite3_limit(h, limits[i][0], limits[i][1]);
}

/* What the file itself says and what lies beside it: WAL mode (header
 * bytes 18-19), and whether -wal and -shm exist. */
static void tt_db_wal_state(const char *path, bool *is_wal, bool *has_wal, bool *has_shm) {
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

bool tt_db_file_id_read(const char *path, tt_file_id *id) {
  struct stat st;
  if (stat(path, &st) != 0) return false;
  *id = (tt_file_id){.dev = (uint64_t)st.st_dev, .ino = (uint64_t)st.st_ino,
                     .size = (int64_t)st.st_size,
                     .mtime_ns = (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec,
                     .ctime_ns = (int64_t)st.st_ctim.tv_sec * 1000000000 + st.st_ctim.tv_nsec};
  return true;
}

/* Waits for another program's lock until the query's time limit (the
 * progress handler does not run while SQLite waits). */
static int tt_db_busy(void *ud, int count) {
  tt_db *db = ud;
  double now = tt_now_ms();
  if (tt_db_limits(db)->cancel && *tt_db_limits(db)->cancel) {
    db->cancelled = true;
    return 0;
  }
  if (now >= db->deadline_ms) return 0;
  double wait = count < 10 ? 1 : count < 50 ? 5 : 20;
  if (now + wait > db->deadline_ms) wait = db->deadline_ms - now;
  sqlite3_sleep((int)(wait < 1 ? 1 : wait));
  return 1;
}

static uint64_t tt_db_next_serial(void) {
  static _Atomic uint64_t serial;
  return ++serial;
}

/* The settings every connection gets, the first read of its schema, the
 * limits and the guard; then h becomes db's connection. Closes h on
 * failure. */
static bool tt_db_setup(tt_db *db, sqlite3 *h, tt_error *err) {
  sqlite3_db_config(h, SQLITE_DBCONFIG_DEFENSIVE, 1, (int *)NULL);
  sqlite3_db_config(h, SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0, (int *)NULL);
  sqlite3_db_config(h, SQLITE_DBCONFIG_ENABLE_LOAD_EXTENSION, 0, (int *)NULL);
  sqlite3_db_config(h, SQLITE_DBCONFIG_ENABLE_FTS3_TOKENIZER, 0, (int *)NULL);
  sqlite3_db_config(h, SQLITE_DBCONFIG_DQS_DML, db->opts.double_quoted_strings ? 1 : 0,
                    (int *)NULL);
  sqlite3_extended_result_codes(h, 1);
  sqlite3_busy_handler(h, tt_db_busy, db);
  db->deadline_ms = tt_now_ms() + db->opts.timeout_s * 1000.0;

  /* Set before the authorizer exists (it refuses PRAGMA), and read the
   * schema once so that a file that is not a database fails here. */
  char *msg = NULL;
  int rc = sqlite3_exec(h, "PRAGMA temp_store=MEMORY; PRAGMA query_only=1;", NULL, NULL, &msg);
  /* a journal a live writer is about to delete looks hot for a moment: try
   * again within the time limit before calling it hot */
  if (rc == SQLITE_OK)
    while ((rc = sqlite3_exec(h, "SELECT count(*) FROM sqlite_schema;", NULL, NULL, &msg)) ==
               SQLITE_READONLY_ROLLBACK &&
           tt_now_ms() + 5 < db->deadline_ms) {
      sqlite3_free(msg);
      msg = NULL;
      sqlite3_sleep(5);
    }
  if (rc != SQLITE_OK) {
    tt_error e;
    tt_db_explain_failure(db, rc, msg ? msg : sqlite3_errstr(rc), &e);
    if ((rc & 0xff) == SQLITE_NOTADB)
      tt_db_set_error(err, TT_ERR_IO, "%s is not a SQLite database (%s)", db->path,
                      msg ? msg : sqlite3_errstr(rc));
    else
      tt_db_set_error(err, e.kind == TT_ERR_SQL ? TT_ERR_IO : e.kind, "cannot read %s: %s",
                      db->path, e.message);
    sqlite3_free(msg);
    sqlite3_close(h);
    return false;
  }
  tt_db_apply_limits(h);
  if (db->h) sqlite3_close(db->h);
  db->h = h;
  tt_strv_free(db->names, db->nnames * 2); /* perhaps another file: learnt again */
  db->names = NULL;
  db->nnames = 0;
  db->names_learned = false;
  db->serial = tt_db_next_serial();
  tt_guard_install(db);
  return true;
}

bool tt_db_connect(tt_db *db, tt_error *err) {
  if (db->csv) {
    /* the in-memory image of CSV files: read-only, no file, no locks */
    sqlite3 *h = tt_csv_connect(db->csv, db->path, err);
    return h && tt_db_setup(db, h, err);
  }
  bool is_wal, has_wal, has_shm;
  tt_db_wal_state(db->real, &is_wal, &has_wal, &has_shm);
  /* A WAL database is read through its -wal and -shm, and SQLite creates
   * them when they are missing, even for a read-only connection. Without a
   * -wal no writer is active and the file holds every commit: it is read
   * without locks or those files (immutable), and each read is checked
   * afterwards (tt_db_unchanged) and done again if a writer came in
   * between. A -wal without its -shm cannot be read without creating one. */
  bool immutable = db->opts.immutable, automatic = false;
  if (!immutable && is_wal && !has_wal) immutable = automatic = true;
  if (!immutable && is_wal && !has_shm) {
    tt_db_set_error(err, TT_ERR_IO,
                    "%s is in WAL mode and has a -wal file but no -shm file; reading it would "
                    "create %s-shm. Let the program that writes it finish, or pass --immutable "
                    "to read the file as it is (without the commits in its -wal)",
                    db->path, db->real);
    return false;
  }
  tt_file_id before;
  if (!tt_db_file_id_read(db->real, &before)) {
    tt_db_set_error(err, TT_ERR_IO, "cannot read %s: %s", db->path, strerror(errno));
    return false;
  }
  char *uri = tt_db_uri(db->real, immutable);
  /* One limit for the whole process: a query may not make SQLite allocate
   * more than this, whatever it does. */
  sqlite3_int64 cur = sqlite3_hard_heap_limit64(-1);
  if (cur == 0 || cur > TT_HEAP_LIMIT) sqlite3_hard_heap_limit64(TT_HEAP_LIMIT);

  sqlite3 *h = NULL;
  int rc = sqlite3_open_v2(uri, &h,
                           SQLITE_OPEN_READONLY | SQLITE_OPEN_URI |
                               SQLITE_OPEN_NOFOLLOW | SQLITE_OPEN_NOMUTEX |
                               SQLITE_OPEN_EXRESCODE,
                           NULL);
  free(uri);
  if (rc != SQLITE_OK) {
    tt_db_set_error(err, TT_ERR_IO, "cannot open %s: %s", db->path,
                    h ? sqlite3_errmsg(h) : sqlite3_errstr(rc));
    sqlite3_close(h);
    return false;
  }
  if (!tt_db_setup(db, h, err)) return false;
  db->automatic_immutable = automatic;
  db->had_shm = has_shm;
  db->file = before;
  return true;
}

/* A CSV file or folder: loaded (or found loaded) in memory. */
static tt_db *tt_db_open_csv(const char *path, const tt_db_opts *opts, tt_error *err) {
  struct stat st;
  if (stat(path, &st) != 0) {
    if (errno == ENOENT)
      tt_db_set_error(err, TT_ERR_IO, "no such file: %s (check the path)", path);
    else
      tt_db_set_error(err, TT_ERR_IO, "cannot open %s: %s", path, strerror(errno));
    return NULL;
  }
  char *real = realpath(path, NULL);
  if (!real) {
    tt_db_set_error(err, TT_ERR_IO, "cannot resolve %s: %s", path, strerror(errno));
    return NULL;
  }
  tt_db *db = tt_xcalloc(1, sizeof *db);
  db->path = tt_xstrdup(path);
  db->real = real;
  db->opts = opts ? *opts : tt_db_default_opts();
  /* one limit for the whole process, as for files (the image is not
   * SQLite's memory and does not count) */
  sqlite3_int64 cur = sqlite3_hard_heap_limit64(-1);
  if (cur == 0 || cur > TT_HEAP_LIMIT) sqlite3_hard_heap_limit64(TT_HEAP_LIMIT);
  db->csv = tt_csv_acquire(path, real, db->opts.csv_header, err);
  if (!db->csv || !tt_db_connect(db, err)) {
    tt_db_close(db);
    return NULL;
  }
  return db;
}

tt_db *tt_db_open(const char *path, const tt_db_opts *opts, tt_error *err) {
  if (tt_db_path_is_uri(path)) return tt_pg_open(path, opts, err);
  if (tt_db_path_is_csv(path)) return tt_db_open_csv(path, opts, err);
  if (!tt_db_check_file(path, err)) return NULL;
  /* Resolve symlinks once, here, so that NOFOLLOW below guards the file we
   * actually checked rather than refusing a user's symlinked path. */
  char *real = realpath(path, NULL);
  if (!real) {
    tt_db_set_error(err, TT_ERR_IO, "cannot resolve %s: %s", path,
                    strerror(errno));
    return NULL;
  }
  tt_db *db = tt_xcalloc(1, sizeof *db);
  db->path = tt_xstrdup(path);
  db->real = real;
  db->opts = opts ? *opts : tt_db_default_opts();
  if (!tt_db_connect(db, err)) {
    tt_db_close(db);
    return NULL;
  }
  return db;
}

void tt_db_close(tt_db *db) {
  if (!db) return;
  tt_pg_close(db->pg);
  sqlite3_close(db->h);
  tt_csv_release(db->csv);
  free(db->path);
  free(db->real);
  tt_strv_free(db->names, db->nnames * 2);
  free(db);
}

const char *tt_db_path(const tt_db *db) { return db->path; }

const tt_db_opts *tt_db_get_opts(const tt_db *db) { return &db->opts; }

const char *tt_db_dialect(const tt_db *db) { return db->pg ? "PostgreSQL" : "SQLite"; }

const char *tt_db_path_dialect(const char *path) {
  return tt_db_path_is_uri(path) ? "PostgreSQL" : "SQLite";
}

void tt_db_set_opts(tt_db *db, const tt_db_opts *opts) {
  if (db->h && db->opts.double_quoted_strings != opts->double_quoted_strings)
    sqlite3_db_config(db->h, SQLITE_DBCONFIG_DQS_DML,
                      opts->double_quoted_strings ? 1 : 0, (int *)NULL);
  db->opts = *opts;
}
