/* connect.c — connecting to a database file read-only with the reference
 * settings: URI with mode=ro (immutable=1 on request, or for a WAL file no
 * writer has open, so that no -wal or -shm is created), no symlink
 * following, defensive mode, untrusted schema, no extensions, hard limits
 * on sizes and memory, and a busy handler that waits for writers within
 * the time limit. A CSV file or folder is connected to as its in-memory
 * image (csv.c) with the same settings. */
#include "db/sqlite/csv.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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

bool tt_db_check_file(const char *path, const char *given, tt_error *err) {
  struct stat st;
  if (stat(path, &st) != 0) {
    if (errno == ENOENT)
      tt_db_set_error(err, TT_ERR_IO,
                      "no such file: %s (tabletalk only opens existing SQLite "
                      "files and never creates one; check the path)", given);
    else
      tt_db_set_error(err, TT_ERR_IO, "cannot open %s: %s", given,
                      strerror(errno));
    return false;
  }
  if (S_ISDIR(st.st_mode)) {
    tt_db_set_error(err, TT_ERR_IO,
                    "%s is a directory; give the path of a SQLite database file",
                    given);
    return false;
  }
  if (!S_ISREG(st.st_mode)) {
    tt_db_set_error(err, TT_ERR_IO,
                    "%s is not a regular file; give the path of a SQLite database file", given);
    return false;
  }
  if (access(path, R_OK) != 0) {
    tt_db_set_error(err, TT_ERR_IO,
                    "cannot read %s: %s (check the file's permissions)", given,
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

void tt_db_heap_limit(void) {
  sqlite3_int64 cur = sqlite3_hard_heap_limit64(-1);
  if (cur == 0 || cur > TT_HEAP_LIMIT) sqlite3_hard_heap_limit64(TT_HEAP_LIMIT);
}

/* Waits for another program's lock until the query's time limit (the
 * progress handler does not run while SQLite waits). */
static int tt_db_busy(void *ud, int count) {
  tt_sqlite *s = ud;
  double now = tt_now_ms();
  if (tt_db_limits(s->db)->cancel && *tt_db_limits(s->db)->cancel) {
    s->cancelled = true;
    return 0;
  }
  if (now >= s->deadline_ms) return 0;
  double wait = count < 10 ? 1 : count < 50 ? 5 : 20;
  if (now + wait > s->deadline_ms) wait = s->deadline_ms - now;
  sqlite3_sleep((int)(wait < 1 ? 1 : wait));
  return 1;
}

static uint64_t tt_db_next_serial(void) {
  static _Atomic uint64_t serial;
  return ++serial;
}

void tt_sqlite_own_forget(tt_sqlite *s) {
  for (size_t i = 0; i < sizeof s->own / sizeof s->own[0]; i++) {
    sqlite3_finalize(s->own[i]);
    s->own[i] = NULL;
  }
}

/* The settings every connection gets, the first read of its schema, the
 * limits and the guard; then h becomes s's connection. Closes h on
 * failure. */
static bool tt_db_setup(tt_sqlite *s, sqlite3 *h, tt_error *err) {
  sqlite3_db_config(h, SQLITE_DBCONFIG_DEFENSIVE, 1, (int *)NULL);
  sqlite3_db_config(h, SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0, (int *)NULL);
  sqlite3_db_config(h, SQLITE_DBCONFIG_ENABLE_LOAD_EXTENSION, 0, (int *)NULL);
  sqlite3_db_config(h, SQLITE_DBCONFIG_ENABLE_FTS3_TOKENIZER, 0, (int *)NULL);
  sqlite3_db_config(h, SQLITE_DBCONFIG_DQS_DML, s->db->opts.double_quoted_strings ? 1 : 0,
                    (int *)NULL);
  sqlite3_extended_result_codes(h, 1);
  sqlite3_busy_handler(h, tt_db_busy, s);
  s->deadline_ms = tt_now_ms() + s->db->opts.timeout_s * 1000.0;

  /* Set before the authorizer exists (it refuses PRAGMA), and read the
   * schema once so that a file that is not a database fails here. */
  char *msg = NULL;
  int rc = sqlite3_exec(h, "PRAGMA temp_store=MEMORY; PRAGMA query_only=1;", NULL, NULL, &msg);
  /* a journal a live writer is about to delete looks hot for a moment: try
   * again within the time limit before calling it hot */
  if (rc == SQLITE_OK)
    while ((rc = sqlite3_exec(h, "SELECT count(*) FROM sqlite_schema;", NULL, NULL, &msg)) ==
               SQLITE_READONLY_ROLLBACK &&
           tt_now_ms() + 5 < s->deadline_ms) {
      sqlite3_free(msg);
      msg = NULL;
      sqlite3_sleep(5);
    }
  if (rc != SQLITE_OK) {
    tt_error e;
    tt_db_explain_failure(s, rc, msg ? msg : sqlite3_errstr(rc), &e);
    if ((rc & 0xff) == SQLITE_NOTADB)
    {
      tt_db_set_error(err, TT_ERR_IO, "%s is not a SQLite database (%s)", s->db->name,
                      msg ? msg : sqlite3_errstr(rc));
      tt_error_hint(err, "a CSV file is read as such when its name ends in .csv or .tsv, or "
                         "in .txt, .dat or no extension when it holds text");
    } else
      tt_db_set_error(err, e.kind == TT_ERR_SQL ? TT_ERR_IO : e.kind, "cannot read %s: %s",
                      s->db->name, e.message);
    sqlite3_free(msg);
    sqlite3_close(h);
    return false;
  }
  tt_db_apply_limits(h);
  tt_sqlite_own_forget(s);
  if (s->h) sqlite3_close(s->h);
  s->h = h;
  tt_db_names_forget(s); /* perhaps another file: learnt again */
  s->serial = tt_db_next_serial();
  tt_guard_install(s);
  return true;
}

bool tt_db_connect(tt_sqlite *s, tt_error *err) {
  if (s->csv) {
    /* the in-memory image of CSV files: read-only, no file, no locks */
    sqlite3 *h = tt_csv_connect(s->csv, s->db->name, err);
    return h && tt_db_setup(s, h, err);
  }
  bool is_wal, has_wal, has_shm;
  tt_db_wal_state(s->real, &is_wal, &has_wal, &has_shm);
  /* A WAL database is read through its -wal and -shm, and SQLite creates
   * them when they are missing, even for a read-only connection. Without a
   * -wal no writer is active and the file holds every commit: it is read
   * without locks or those files (immutable), and each read is checked
   * afterwards (tt_db_unchanged) and done again if a writer came in
   * between. A -wal without its -shm cannot be read without creating one. */
  bool immutable = s->db->opts.immutable, automatic = false;
  if (!immutable && is_wal && !has_wal) immutable = automatic = true;
  if (!immutable && is_wal && !has_shm) {
    tt_db_set_error(err, TT_ERR_IO,
                    "%s is in WAL mode and has a -wal file but no -shm file; reading it would "
                    "create %s-shm. Let the program that writes it finish, or pass --immutable "
                    "to read the file as it is (without the commits in its -wal)",
                    s->db->name, s->real);
    return false;
  }
  tt_file_id before;
  if (!tt_db_file_id_read(s->real, &before)) {
    tt_db_set_error(err, TT_ERR_IO, "cannot read %s: %s", s->db->name, strerror(errno));
    return false;
  }
  char *uri = tt_db_uri(s->real, immutable);
  tt_db_heap_limit();

  sqlite3 *h = NULL;
  int rc = sqlite3_open_v2(uri, &h,
                           SQLITE_OPEN_READONLY | SQLITE_OPEN_URI |
                               SQLITE_OPEN_NOFOLLOW | SQLITE_OPEN_NOMUTEX |
                               SQLITE_OPEN_EXRESCODE,
                           NULL);
  free(uri);
  if (rc != SQLITE_OK) {
    tt_db_set_error(err, TT_ERR_IO, "cannot open %s: %s", s->db->name,
                    h ? sqlite3_errmsg(h) : sqlite3_errstr(rc));
    sqlite3_close(h);
    return false;
  }
  if (!tt_db_setup(s, h, err)) return false;
  s->automatic_immutable = automatic;
  s->had_shm = has_shm;
  s->file = before;
  return true;
}

