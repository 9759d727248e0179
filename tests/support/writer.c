/* writer.c — tt-writer, the application that writes while tabletalk reads,
 * for the live-database tests. It commits without pause to DB, in WAL or
 * rollback-journal mode, keeping one invariant in every transaction:
 *
 *   counter.n - counter.deleted = (SELECT count(*) FROM log)
 *
 * Now and then it deletes the older half of log (adding to deleted),
 * VACUUMs, checkpoints the WAL, and replaces the whole file by an atomic
 * rename of a copy with one more commit. After each commit it prints
 * "c N MS" (N = counter.n, MS = wall-clock milliseconds), so a reader can
 * tell which commits had finished before it asked.
 *
 *   tt-writer DB wal|rollback SECONDS [--churn N] [--replace N]
 *
 * SECONDS 0: until its standard input ends (the test closes it once its
 * readers have what they need: no fixed duration to outlast).
 *
 * --churn N: delete, VACUUM and checkpoint every N commits (0: never);
 * --replace N: replace the file every N commits (0: never). */
#include <poll.h>
#include <sqlite3.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>

static double now_ms(void) {
  struct timeval tv;
  gettimeofday(&tv, NULL);
  return (double)tv.tv_sec * 1000.0 + (double)tv.tv_usec / 1000.0;
}

static void die(sqlite3 *h, const char *what) {
  fprintf(stderr, "tt-writer: %s: %s\n", what, h ? sqlite3_errmsg(h) : "?");
  exit(1);
}

static void exec(sqlite3 *h, const char *sql) {
  char *msg = NULL;
  if (sqlite3_exec(h, sql, NULL, NULL, &msg) != SQLITE_OK) {
    fprintf(stderr, "tt-writer: %s: %s\n", sql, msg ? msg : "?");
    exit(1);
  }
}

static sqlite3 *open_db(const char *path, const char *mode) {
  sqlite3 *h = NULL;
  if (sqlite3_open(path, &h) != SQLITE_OK) die(h, "open");
  sqlite3_busy_timeout(h, 10000); /* tabletalk only reads: waits are short */
  exec(h, strcmp(mode, "wal") == 0 ? "PRAGMA journal_mode=WAL" : "PRAGMA journal_mode=DELETE");
  exec(h, "CREATE TABLE IF NOT EXISTS counter(n INTEGER NOT NULL, deleted INTEGER NOT NULL);"
          "CREATE TABLE IF NOT EXISTS log(i INTEGER PRIMARY KEY, pad TEXT);"
          "INSERT INTO counter SELECT 0, 0 WHERE NOT EXISTS (SELECT 1 FROM counter);");
  return h;
}

static long long current(sqlite3 *h) {
  sqlite3_stmt *st;
  if (sqlite3_prepare_v2(h, "SELECT n FROM counter", -1, &st, NULL) != SQLITE_OK) die(h, "read");
  long long n = sqlite3_step(st) == SQLITE_ROW ? sqlite3_column_int64(st, 0) : -1;
  sqlite3_finalize(st);
  return n;
}

/* One commit: a log row and the counter, together. */
static long long commit_one(sqlite3 *h) {
  exec(h, "BEGIN IMMEDIATE;"
          "UPDATE counter SET n = n + 1;"
          "INSERT INTO log(i, pad) SELECT n, printf('%0200d', n) FROM counter;"
          "COMMIT;");
  return current(h);
}

static void churn(sqlite3 *h, const char *mode) {
  exec(h, "BEGIN IMMEDIATE;"
          "UPDATE counter SET deleted = deleted + (SELECT count(*) / 2 FROM log);"
          "DELETE FROM log WHERE i IN (SELECT i FROM log ORDER BY i LIMIT (SELECT count(*) / 2 FROM log));"
          "COMMIT;");
  exec(h, "VACUUM");
  if (strcmp(mode, "wal") == 0) exec(h, "PRAGMA wal_checkpoint(TRUNCATE)");
}

/* A copy of the database with one more commit, renamed over it. */
static sqlite3 *replace(sqlite3 *h, const char *path, const char *mode) {
  char *tmp = malloc(strlen(path) + 16);
  sprintf(tmp, "%s.next", path);
  unlink(tmp);
  sqlite3 *copy = NULL;
  if (sqlite3_open(tmp, &copy) != SQLITE_OK) die(copy, "open copy");
  sqlite3_backup *b = sqlite3_backup_init(copy, "main", h, "main");
  if (!b || sqlite3_backup_step(b, -1) != SQLITE_DONE) die(copy, "backup");
  sqlite3_backup_finish(b);
  exec(copy, strcmp(mode, "wal") == 0 ? "PRAGMA journal_mode=WAL" : "PRAGMA journal_mode=DELETE");
  commit_one(copy);
  if (strcmp(mode, "wal") == 0) exec(copy, "PRAGMA wal_checkpoint(TRUNCATE)");
  sqlite3_close(copy);
  sqlite3_close(h);
  if (rename(tmp, path) != 0) {
    perror("tt-writer: rename");
    exit(1);
  }
  free(tmp);
  return open_db(path, mode);
}

/* True once standard input has ended (or failed), without blocking. */
static bool input_ended(void) {
  struct pollfd p = {.fd = 0, .events = POLLIN};
  if (poll(&p, 1, 0) <= 0) return false;
  char c;
  return read(0, &c, 1) <= 0;
}

int main(int argc, char **argv) {
  if (argc < 4) {
    fprintf(stderr, "usage: tt-writer DB wal|rollback SECONDS [--churn N] [--replace N]\n");
    return 2;
  }
  const char *path = argv[1], *mode = argv[2];
  double seconds = atof(argv[3]);
  long churn_every = 0, replace_every = 0;
  for (int i = 4; i + 1 < argc; i += 2) {
    if (strcmp(argv[i], "--churn") == 0) churn_every = atol(argv[i + 1]);
    else if (strcmp(argv[i], "--replace") == 0) replace_every = atol(argv[i + 1]);
  }
  sqlite3 *h = open_db(path, mode);
  printf("ready %lld %.0f\n", current(h), now_ms());
  fflush(stdout);
  double end = now_ms() + seconds * 1000.0;
  for (long k = 1; seconds > 0 ? now_ms() < end : !input_ended(); k++) {
    long long n = commit_one(h);
    printf("c %lld %.3f\n", n, now_ms());
    fflush(stdout);
    if (churn_every && k % churn_every == 0) churn(h, mode);
    if (replace_every && k % replace_every == 0) {
      h = replace(h, path, mode);
      printf("c %lld %.3f\n", current(h), now_ms());
      fflush(stdout);
    }
    /* the application's pace, not a wait: a writer that re-locked at once
     * would leave rollback-mode readers no window at all */
    usleep(2000);
  }
  sqlite3_close(h);
  printf("done\n");
  return 0;
}
