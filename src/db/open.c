/* open.c — opening a database file read-only with the reference settings:
 * URI with mode=ro (immutable=1 on request), no symlink following, defensive
 * mode, untrusted schema, no extensions, hard limits on sizes and memory. */
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

const char *tt_db_errkind_name(tt_db_errkind kind) {
  switch (kind) {
  case TT_DB_OK: return "ok";
  case TT_DB_ERR_REFUSED: return "refused";
  case TT_DB_ERR_TIMEOUT: return "timeout";
  case TT_DB_ERR_LIMIT: return "limit";
  case TT_DB_ERR_SQL: return "sql";
  case TT_DB_ERR_IO: return "io";
  }
  return "unknown";
}

void tt_db_set_error(tt_db_error *err, tt_db_errkind kind, const char *fmt, ...) {
  if (!err) return;
  err->kind = kind;
  err->refusal = TT_REFUSE_NONE;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(err->message, sizeof err->message, fmt, ap);
  va_end(ap);
}

void tt_db_refuse(tt_db_error *err, tt_db_refusal reason, const char *fmt, ...) {
  if (!err) return;
  err->kind = TT_DB_ERR_REFUSED;
  err->refusal = reason;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(err->message, sizeof err->message, fmt, ap);
  va_end(ap);
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

static bool tt_db_check_file(const char *path, tt_db_error *err) {
  struct stat st;
  if (stat(path, &st) != 0) {
    if (errno == ENOENT)
      tt_db_set_error(err, TT_DB_ERR_IO,
                      "no such file: %s (tabletalk only opens existing SQLite "
                      "files and never creates one; check the path)", path);
    else
      tt_db_set_error(err, TT_DB_ERR_IO, "cannot open %s: %s", path,
                      strerror(errno));
    return false;
  }
  if (S_ISDIR(st.st_mode)) {
    tt_db_set_error(err, TT_DB_ERR_IO,
                    "%s is a directory; give the path of a SQLite database file",
                    path);
    return false;
  }
  if (!S_ISREG(st.st_mode)) {
    tt_db_set_error(err, TT_DB_ERR_IO,
                    "%s is not a regular file; give the path of a SQLite database file", path);
    return false;
  }
  if (access(path, R_OK) != 0) {
    tt_db_set_error(err, TT_DB_ERR_IO,
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
      {SQLITE_LIMIT_VDBE_OP, 25000},
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

/* A database in WAL mode is read through its -wal and -shm files, and
 * SQLite creates them when they are missing, even for a read-only
 * connection. When neither exists no writer is active and the file holds
 * everything, so it is opened immutable and nothing is created; a -wal
 * without its -shm cannot be read without creating one. Returns false (err
 * set) in that last case. */
static bool tt_db_wal_check(const char *path, tt_db_opts *o, tt_db_error *err) {
  unsigned char hdr[20];
  FILE *f = fopen(path, "rb");
  size_t n = f ? fread(hdr, 1, sizeof hdr, f) : 0;
  if (f) fclose(f);
  if (n < sizeof hdr || memcmp(hdr, "SQLite format 3", 16) != 0 || hdr[18] != 2 || hdr[19] != 2)
    return true; /* not WAL (or not a database: opening says so) */
  char *wal = tt_xasprintf("%s-wal", path), *shm = tt_xasprintf("%s-shm", path);
  bool has_wal = tt_file_exists(wal), has_shm = tt_file_exists(shm);
  bool ok = true;
  if (!has_wal && !has_shm) {
    o->immutable = true;
  } else if (has_wal && !has_shm && !o->immutable) {
    tt_db_set_error(err, TT_DB_ERR_IO,
                    "%s is in WAL mode and has a -wal file but no -shm file; reading it would "
                    "create %s. Let the program that writes it finish, or pass --immutable if "
                    "nothing writes to it", path, shm);
    ok = false;
  }
  free(wal);
  free(shm);
  return ok;
}

tt_db *tt_db_open(const char *path, const tt_db_opts *opts, tt_db_error *err) {
  if (!tt_db_check_file(path, err)) return NULL;
  /* Resolve symlinks once, here, so that NOFOLLOW below guards the file we
   * actually checked rather than refusing a user's symlinked path. */
  char *real = realpath(path, NULL);
  if (!real) {
    tt_db_set_error(err, TT_DB_ERR_IO, "cannot resolve %s: %s", path,
                    strerror(errno));
    return NULL;
  }
  tt_db_opts o = opts ? *opts : tt_db_default_opts();
  if (!tt_db_wal_check(real, &o, err)) {
    free(real);
    return NULL;
  }
  char *uri = tt_db_uri(real, o.immutable);
  free(real);

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
    tt_db_set_error(err, TT_DB_ERR_IO, "cannot open %s: %s", path,
                    h ? sqlite3_errmsg(h) : sqlite3_errstr(rc));
    sqlite3_close(h);
    return NULL;
  }
  sqlite3_db_config(h, SQLITE_DBCONFIG_DEFENSIVE, 1, (int *)NULL);
  sqlite3_db_config(h, SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0, (int *)NULL);
  sqlite3_db_config(h, SQLITE_DBCONFIG_ENABLE_LOAD_EXTENSION, 0, (int *)NULL);
  sqlite3_db_config(h, SQLITE_DBCONFIG_ENABLE_FTS3_TOKENIZER, 0, (int *)NULL);
  sqlite3_db_config(h, SQLITE_DBCONFIG_DQS_DML, o.double_quoted_strings ? 1 : 0,
                    (int *)NULL);
  sqlite3_extended_result_codes(h, 1);

  /* Set before the authorizer exists (it refuses PRAGMA), and read the
   * schema once so that a file that is not a database fails here. */
  char *msg = NULL;
  rc = sqlite3_exec(h,
                    "PRAGMA temp_store=MEMORY; PRAGMA query_only=1;"
                    "SELECT count(*) FROM sqlite_schema;",
                    NULL, NULL, &msg);
  if (rc != SQLITE_OK) {
    if ((rc & 0xff) == SQLITE_NOTADB)
      tt_db_set_error(err, TT_DB_ERR_IO,
                      "%s is not a SQLite database (%s)", path,
                      msg ? msg : sqlite3_errstr(rc));
    else
      tt_db_set_error(err, TT_DB_ERR_IO, "cannot read %s: %s", path,
                      msg ? msg : sqlite3_errstr(rc));
    sqlite3_free(msg);
    sqlite3_close(h);
    return NULL;
  }
  tt_db_apply_limits(h);

  tt_db *db = tt_xcalloc(1, sizeof *db);
  db->h = h;
  db->path = tt_xstrdup(path);
  db->opts = o;
  tt_guard_install(db);
  return db;
}

void tt_db_close(tt_db *db) {
  if (!db) return;
  sqlite3_close(db->h);
  free(db->path);
  free(db);
}

const char *tt_db_path(const tt_db *db) { return db->path; }

const tt_db_opts *tt_db_get_opts(const tt_db *db) { return &db->opts; }

void tt_db_set_opts(tt_db *db, const tt_db_opts *opts) {
  if (db->opts.double_quoted_strings != opts->double_quoted_strings)
    sqlite3_db_config(db->h, SQLITE_DBCONFIG_DQS_DML,
                      opts->double_quoted_strings ? 1 : 0, (int *)NULL);
  db->opts = *opts;
}

/* FNV-1a, to fold the header bytes and file facts into one number. */
static uint64_t tt_fnv(uint64_t h, const void *p, size_t n) {
  const unsigned char *b = p;
  for (size_t i = 0; i < n; i++) h = (h ^ b[i]) * 1099511628211ULL;
  return h;
}

/* Folds in a file's identity, size, modification time and first bytes. */
static uint64_t tt_stamp_file(uint64_t h, const char *path, size_t head, bool *ok) {
  int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) {
    if (errno != ENOENT) *ok = false;
    return tt_fnv(h, "-", 1); /* no such file (no WAL): a state of its own */
  }
  struct stat st;
  unsigned char buf[100];
  if (fstat(fd, &st) != 0) {
    *ok = false;
  } else {
    int64_t facts[5] = {(int64_t)st.st_dev, (int64_t)st.st_ino, (int64_t)st.st_size,
                        (int64_t)st.st_mtim.tv_sec, (int64_t)st.st_mtim.tv_nsec};
    h = tt_fnv(h, facts, sizeof facts);
    ssize_t n = pread(fd, buf, head < sizeof buf ? head : sizeof buf, 0);
    if (n > 0) h = tt_fnv(h, buf, (size_t)n);
  }
  close(fd);
  return h;
}

uint64_t tt_db_data_stamp(const tt_db *db) {
  if (db->opts.immutable) return 1;
  /* Rollback mode: every commit rewrites page 1 with a new file change
   * counter (header offset 24). WAL mode: every commit appends to -wal,
   * and a restarted WAL gets new salts in its 32-byte header. */
  bool ok = true;
  uint64_t h = tt_stamp_file(1469598103934665603ULL, db->path, 100, &ok);
  char *wal = tt_xasprintf("%s-wal", db->path);
  h = tt_stamp_file(h, wal, 32, &ok);
  free(wal);
  return ok && h ? h : 0;
}
