/* testutil.c — implementation of the shared test helpers: process runner
 * with timeouts (pipes or a pty), scratch folders, file copies, sha256 and
 * the corpus decoder. */
#include "testutil.h"
#include <sqlite3.h>

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <poll.h>
#include <pty.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

static void tu_die(const char *what) {
  fprintf(stderr, "test setup failed: %s: %s\n", what, strerror(errno));
  exit(99);
}

const char *tu_bin(void) {
  const char *b = getenv("TT_BIN");
  return b && *b ? b : "./tabletalk";
}

const char *tu_shared(void) {
  const char *s = getenv("TT_SHARED_DIR");
  return s && *s ? s : "../../shared";
}

const char *tu_shared_path(const char *rel) {
  static char path[4096];
  snprintf(path, sizeof path, "%s/%s", tu_shared(), rel);
  return path;
}

void tu_require_shared(const char *rel) {
  const char *path = tu_shared_path(rel);
  if (access(path, R_OK) == 0) return;
  fprintf(stderr, "SKIPPED: %s not found; set TABLETALK_SHARED_DIR to the folder "
                  "holding corpus/ and data/ (default: ../shared next to the repository)\n",
          path);
  exit(77);
}

const char *tu_chinook(void) {
  const char *p = getenv("TT_CHINOOK");
  if (!p || !*p) p = "../../data/chinook.sqlite";
  if (access(p, R_OK) != 0) {
    fprintf(stderr, "test setup failed: %s is missing; run scripts/fetch-data.sh\n", p);
    exit(99);
  }
  return p;
}

char *tu_mkdtemp(void) {
  const char *tmp = getenv("TMPDIR");
  char *tmpl = tt_xasprintf("%s/tabletalk-test-XXXXXX", tmp && *tmp ? tmp : "/tmp");
  if (!mkdtemp(tmpl)) tu_die("mkdtemp");
  return tmpl;
}

static int tu_rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
  (void)st;
  (void)flag;
  (void)ftw;
  return remove(path);
}

void tu_rmtree(const char *dir) { nftw(dir, tu_rm_one, 16, FTW_DEPTH | FTW_PHYS); }

char *tu_read_file(const char *path, size_t *len) {
  int fd = open(path, O_RDONLY);
  if (fd < 0) return NULL;
  bool too_long;
  char *data = tt_read_stream(fd, (size_t)1 << 30, len, &too_long);
  close(fd);
  return data;
}

void tu_scratch_make(tu_scratch *s) {
  s->dir = tu_mkdtemp();
  s->db = tt_xasprintf("%s/chinook.sqlite", s->dir);
  tu_copy_file(tu_chinook(), s->db);
}

void tu_scratch_remove(tu_scratch *s) {
  tu_rmtree(s->dir);
  free(s->db);
  free(s->dir);
  s->db = s->dir = NULL;
}

static void tu_write_bytes(const char *path, const char *data, size_t n) {
  FILE *f = fopen(path, "wb");
  if (!f || fwrite(data, 1, n, f) != n || fclose(f) != 0) tu_die(path);
}

void tu_mtime_later(const char *path, int seconds) {
  struct stat st;
  if (stat(path, &st) != 0) tu_die("stat");
  struct timespec t[2] = {st.st_atim, st.st_mtim};
  t[1].tv_sec += seconds;
  if (utimensat(AT_FDCWD, path, t, 0) != 0) tu_die("utimensat");
}

void tu_copy_file(const char *src, const char *dst) {
  size_t n;
  char *data = tu_read_file(src, &n);
  if (!data) tu_die(src);
  tu_write_bytes(dst, data, n);
  free(data);
}

void tu_write_file(const char *path, const char *text) { tu_write_bytes(path, text, strlen(text)); }

char *tu_sha256(const char *path) {
  char *cmd = tt_xasprintf("sha256sum '%s'", path);
  FILE *p = popen(cmd, "r");
  free(cmd);
  if (!p) tu_die("popen sha256sum");
  char hex[65] = {0};
  if (fscanf(p, "%64s", hex) != 1) hex[0] = '\0';
  pclose(p);
  return tt_xstrdup(hex);
}

static void tu_set_nonblock(int fd) { fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK); }

static void tu_finish(pid_t pid, double t0, int timeout_ms, bool killed, tu_run *r) {
  int st = 0;
  struct rusage ru;
  memset(&ru, 0, sizeof ru);
  while (wait4(pid, &st, 0, &ru) < 0 && errno == EINTR) {}
  r->max_rss_kib = ru.ru_maxrss;
  r->status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
  r->ms = tt_now_ms() - t0;
  r->timed_out = killed;
  (void)timeout_ms;
}

void tu_run_cmd(char *const argv[], const char *in, size_t in_len, int timeout_ms, tu_run *r) {
  memset(r, 0, sizeof *r);
  int pin[2], pout[2], perr[2];
  if (pipe(pin) || pipe(pout) || pipe(perr)) tu_die("pipe");
  double t0 = tt_now_ms();
  pid_t pid = fork();
  if (pid < 0) tu_die("fork");
  if (pid == 0) {
    dup2(pin[0], 0);
    dup2(pout[1], 1);
    dup2(perr[1], 2);
    close(pin[0]); close(pin[1]); close(pout[0]); close(pout[1]); close(perr[0]); close(perr[1]);
    execv(argv[0], argv);
    _exit(127);
  }
  close(pin[0]);
  close(pout[1]);
  close(perr[1]);
  signal(SIGPIPE, SIG_IGN);
  tu_set_nonblock(pin[1]);
  size_t sent = 0;
  int fd_in = pin[1];
  if (in_len == 0) {
    close(fd_in);
    fd_in = -1;
  }
  bool out_open = true, err_open = true, killed = false;
  while (out_open || err_open) {
    struct pollfd fds[3];
    int nf = 0, iout = -1, ierr = -1, iin = -1;
    if (out_open) { fds[nf] = (struct pollfd){pout[0], POLLIN, 0}; iout = nf++; }
    if (err_open) { fds[nf] = (struct pollfd){perr[0], POLLIN, 0}; ierr = nf++; }
    if (fd_in >= 0) { fds[nf] = (struct pollfd){fd_in, POLLOUT, 0}; iin = nf++; }
    int left = timeout_ms - (int)(tt_now_ms() - t0);
    if (left <= 0 && !killed) {
      kill(pid, SIGKILL);
      killed = true;
    }
    int pr = poll(fds, (nfds_t)nf, left > 0 ? left : 100);
    if (pr < 0 && errno != EINTR) tu_die("poll");
    char chunk[65536];
    if (iout >= 0 && fds[iout].revents) {
      ssize_t k = read(pout[0], chunk, sizeof chunk);
      if (k > 0) tt_buf_append(&r->out, chunk, (size_t)k);
      else if (k == 0 || errno != EAGAIN) out_open = false;
    }
    if (ierr >= 0 && fds[ierr].revents) {
      ssize_t k = read(perr[0], chunk, sizeof chunk);
      if (k > 0) tt_buf_append(&r->err, chunk, (size_t)k);
      else if (k == 0 || errno != EAGAIN) err_open = false;
    }
    if (iin >= 0 && fds[iin].revents) {
      ssize_t k = write(fd_in, in + sent, in_len - sent);
      if (k > 0) sent += (size_t)k;
      if (k < 0 && errno != EAGAIN) sent = in_len;
      if (sent >= in_len) {
        close(fd_in);
        fd_in = -1;
      }
    }
  }
  if (fd_in >= 0) close(fd_in);
  close(pout[0]);
  close(perr[0]);
  tu_finish(pid, t0, timeout_ms, killed, r);
}

void tu_run_pty(char *const argv[], int cols, int timeout_ms, tu_run *r) {
  memset(r, 0, sizeof *r);
  struct winsize ws = {.ws_row = 50, .ws_col = (unsigned short)cols};
  int master;
  double t0 = tt_now_ms();
  pid_t pid = forkpty(&master, NULL, NULL, &ws);
  if (pid < 0) tu_die("forkpty");
  if (pid == 0) {
    execv(argv[0], argv);
    _exit(127);
  }
  bool killed = false;
  for (;;) {
    int left = timeout_ms - (int)(tt_now_ms() - t0);
    if (left <= 0 && !killed) {
      kill(pid, SIGKILL);
      killed = true;
    }
    struct pollfd fd = {master, POLLIN, 0};
    int pr = poll(&fd, 1, left > 0 ? left : 100);
    if (pr < 0 && errno != EINTR) break;
    if (pr <= 0) continue;
    char chunk[65536];
    ssize_t k = read(master, chunk, sizeof chunk);
    if (k <= 0) break; /* EIO once the child has closed the terminal */
    tt_buf_append(&r->out, chunk, (size_t)k);
  }
  close(master);
  tu_finish(pid, t0, timeout_ms, killed, r);
}

void tu_run_free(tu_run *r) {
  tt_buf_free(&r->out);
  tt_buf_free(&r->err);
}

static int tu_hex(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

static bool tu_hexn(const char *s, size_t n, uint32_t *out) {
  uint32_t v = 0;
  for (size_t i = 0; i < n; i++) {
    int h = tu_hex(s[i]);
    if (h < 0) return false;
    v = v * 16 + (uint32_t)h;
  }
  *out = v;
  return true;
}

void tu_corpus_decode(const char *s, size_t n, tt_buf *out) {
  for (size_t i = 0; i < n; i++) {
    if (s[i] != '\\' || i + 1 >= n) {
      tt_buf_putc(out, s[i]);
      continue;
    }
    char e = s[i + 1];
    uint32_t v;
    if (e == 'n') { tt_buf_putc(out, '\n'); i++; }
    else if (e == 't') { tt_buf_putc(out, '\t'); i++; }
    else if (e == 'r') { tt_buf_putc(out, '\r'); i++; }
    else if (e == '\\') { tt_buf_putc(out, '\\'); i++; }
    else if (e == 'x' && i + 3 < n && tu_hexn(s + i + 2, 2, &v)) { tt_buf_putc(out, (char)v); i += 3; }
    else if (e == 'u' && i + 5 < n && tu_hexn(s + i + 2, 4, &v)) { tt_utf8_encode(out, v); i += 5; }
    else if (e == 'U' && i + 9 < n && tu_hexn(s + i + 2, 8, &v)) { tt_utf8_encode(out, v); i += 9; }
    else tt_buf_putc(out, s[i]);
  }
}

tu_row *tu_corpus_load(const char *path, unsigned decode_mask, size_t *nrows) {
  size_t len;
  char *text = tu_read_file(path, &len);
  if (!text) tu_die(path);
  size_t cap = 0, n = 0;
  tu_row *rows = NULL;
  char *line = text, *end = text + len;
  bool header = true;
  while (line < end) {
    char *nl = memchr(line, '\n', (size_t)(end - line));
    size_t ll = nl ? (size_t)(nl - line) : (size_t)(end - line);
    if (ll && line[ll - 1] == '\r') ll--;
    if (header || ll == 0) {
      header = false;
      line = nl ? nl + 1 : end;
      continue;
    }
    if (n == cap) {
      cap = cap ? cap * 2 : 64;
      rows = tt_xrealloc(rows, cap * sizeof *rows);
    }
    tu_row *r = &rows[n++];
    memset(r, 0, sizeof *r);
    size_t start = 0;
    for (size_t i = 0; i <= ll; i++) {
      if (i < ll && line[i] != '\t') continue;
      r->field = tt_xrealloc(r->field, (r->nfields + 1) * sizeof(char *));
      r->len = tt_xrealloc(r->len, (r->nfields + 1) * sizeof(size_t));
      tt_buf b = TT_BUF_INIT;
      if (r->nfields < 32 && (decode_mask >> r->nfields) & 1u)
        tu_corpus_decode(line + start, i - start, &b);
      else
        tt_buf_append(&b, line + start, i - start);
      r->len[r->nfields] = b.len;
      r->field[r->nfields] = tt_buf_detach(&b);
      r->nfields++;
      start = i + 1;
    }
    line = nl ? nl + 1 : end;
  }
  free(text);
  *nrows = n;
  return rows;
}

void tu_corpus_free(tu_row *rows, size_t nrows) {
  for (size_t i = 0; i < nrows; i++) {
    for (size_t k = 0; k < rows[i].nfields; k++) free(rows[i].field[k]);
    free(rows[i].field);
    free(rows[i].len);
  }
  free(rows);
}

void tu_exec_sql(const char *path, const char *sql) {
  sqlite3 *h;
  char *msg = NULL;
  if (sqlite3_open(path, &h) != SQLITE_OK || sqlite3_exec(h, sql, NULL, NULL, &msg) != SQLITE_OK) {
    fprintf(stderr, "tu_exec_sql on %s: %s\n", path, msg ? msg : sqlite3_errmsg(h));
    abort();
  }
  sqlite3_close(h);
}
char *tu_make_wide_db(const char *dir, int ntables, long big_rows) {
  static const char *const groups[] = {"sales", "hr",   "inv",  "fin", "crm", "ops",
                                       "mkt",   "ship", "prod", "supp", "web", "audit"};
  static const char *const nouns[] = {"orders",   "items",    "accounts", "contacts", "events",
                                      "notes",    "batches",  "regions",  "plans",    "targets",
                                      "invoices", "payments", "rates",    "budgets",  "tickets",
                                      "visits",   "requests", "reviews",  "shifts",   "routes",
                                      "vendors",  "assets",   "claims",   "quotes",   "leads"};
  char *path = tt_xasprintf("%s/wide.sqlite", dir);
  tt_buf sql = TT_BUF_INIT;
  tt_buf_puts(&sql, "BEGIN;");
  for (int i = 0; i < ntables; i++) {
    const char *g = groups[i % 12], *n = nouns[(i / 12) % 25];
    int round = i / 300;
    char name[64], prev[64];
    snprintf(name, sizeof name, round ? "%s_%s%d" : "%s_%s", g, n, round);
    tt_buf_printf(&sql, "CREATE TABLE %s (\n  id INTEGER PRIMARY KEY,\n", name);
    if (i >= 12) {
      int p = i - 12;
      snprintf(prev, sizeof prev, p / 300 ? "%s_%s%d" : "%s_%s", groups[p % 12], nouns[(p / 12) % 25], p / 300);
      tt_buf_printf(&sql, "  parent_id INTEGER REFERENCES %s(id), -- the %s this row belongs to\n", prev, prev);
    }
    tt_buf_printf(&sql,
                  "  %s_title TEXT NOT NULL, -- what the %s is called\n"
                  "  %s_status TEXT, -- where it stands in its workflow\n"
                  "  %s_amount REAL,\n  %s_date TEXT,\n"
                  "  created_at TEXT, updated_at TEXT, created_by TEXT, etl_batch_id INTEGER);\n",
                  n, n, n, n, n);
    long rows = i == 0 && big_rows > 0 ? big_rows : 20;
    tt_buf_printf(&sql,
                  "WITH RECURSIVE k(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM k WHERE x < %ld) "
                  "INSERT INTO %s SELECT x, %s '%s ' || (x %% 7), "
                  "CASE WHEN x %% 10 < 6 THEN 'open' WHEN x %% 10 < 9 THEN 'closed' ELSE 'void' END, "
                  "x * 2.5, date('2024-01-01', '+' || x || ' days'), '2024-06-01 10:00:00', "
                  "'2024-06-02 11:00:00', 'loader', 42 FROM k;\n",
                  rows, name, i >= 12 ? "1 + x % 20," : "", n);
  }
  tt_buf_puts(&sql, "COMMIT;");
  tu_exec_sql(path, tt_buf_cstr(&sql));
  tt_buf_free(&sql);
  return path;
}

tt_schema *tu_open_chinook(tt_db **db) {
  tt_error err;
  *db = tt_db_open(tu_chinook(), NULL, &err);
  if (!*db) return NULL;
  tt_catalog *cat = tt_db_catalog_load(*db, &err);
  if (cat) return tt_schema_new(cat);
  tt_db_close(*db);
  *db = NULL;
  return NULL;
}
