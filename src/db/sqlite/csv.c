/* csv.c — CSV and TSV files as a read-only SQLite database: each file
 * becomes one table in an in-memory database, with column types inferred
 * from the values and the header line guessed (or given).
 *
 * A file is read twice, streaming: the first pass checks every record and
 * learns the column types, the second inserts the rows. The database is
 * built in one buffer of our own (not SQLite's heap, so the heap limit of
 * queries does not count it), and every handle then reads that same
 * buffer through sqlite3_deserialize(SQLITE_DESERIALIZE_READONLY): one
 * copy in memory however many handles serve-mcp opens. The image of a
 * file or folder is kept while the process runs (front ends open and close
 * handles on the same path many times), keyed by the files' identity:
 * before each query a handle checks the files (tt_db_refresh) and moves to
 * the image of their new contents when they changed; the old image goes
 * when its last handle lets go. Nothing is ever written beside the files. */
#define _GNU_SOURCE /* mremap */
#include "db/sqlite/csv.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* files this large show their progress on a terminal */
#define TT_CSV_PROGRESS_BYTES (64LL * 1024 * 1024)

struct tt_csv_data {
  char *real;            /* the file or folder */
  char *key;             /* header mode and the identity of every file */
  char **files;          /* the files, sorted */
  size_t nfiles;
  char *heads;           /* a hash of each file's first bytes (tt_csv_stamp), or NULL */
  unsigned char *image;  /* the database, read-only once loaded */
  size_t size, mapped;
  int refs;
  bool stale;            /* a newer image of the same path exists */
  tt_csv_data *next;
};

/* The images loaded in this process (see the top of the file). */
static pthread_mutex_t tt_csv_mu = PTHREAD_MUTEX_INITIALIZER;
static tt_csv_data *tt_csv_loaded;

static bool tt_csv_is_data_name(const char *name) {
  return name[0] != '.' && (tt_has_suffix_nocase(name, ".csv") || tt_has_suffix_nocase(name, ".tsv"));
}

static int tt_cmp_str(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The files to load: path itself, or the *.csv and *.tsv files of a
 * folder, sorted by name. */
static char **tt_csv_files(const char *path, const char *real, size_t *n, tt_error *err) {
  struct stat st;
  *n = 0;
  if (stat(real, &st) != 0) {
    tt_db_set_error(err, TT_ERR_IO, "cannot open %s: %s", path, strerror(errno));
    return NULL;
  }
  if (!S_ISDIR(st.st_mode)) {
    if (!S_ISREG(st.st_mode)) {
      tt_db_set_error(err, TT_ERR_IO, "%s is not a regular file; give a CSV file or a folder of them",
                      path);
      return NULL;
    }
    char **v = tt_xmalloc(sizeof *v);
    v[0] = tt_xstrdup(real);
    *n = 1;
    return v;
  }
  DIR *d = opendir(real);
  if (!d) {
    tt_db_set_error(err, TT_ERR_IO, "cannot read the folder %s: %s", path, strerror(errno));
    return NULL;
  }
  char **v = NULL;
  size_t cap = 0;
  struct dirent *e;
  while ((e = readdir(d))) {
    if (!tt_csv_is_data_name(e->d_name)) continue;
    char *full = tt_xasprintf("%s/%s", real, e->d_name);
    if (stat(full, &st) != 0 || !S_ISREG(st.st_mode)) {
      free(full);
      continue;
    }
    if (*n == cap) v = tt_xrealloc(v, (cap = cap ? cap * 2 : 8) * sizeof *v);
    v[(*n)++] = full;
  }
  closedir(d);
  if (*n == 0) {
    tt_db_set_error(err, TT_ERR_IO,
                    "%s is a directory with no .csv or .tsv file in it; give a SQLite database "
                    "file, a CSV file, or a directory of CSV files",
                    path);
    free(v);
    return NULL;
  }
  qsort(v, *n, sizeof *v, tt_cmp_str);
  return v;
}

static char *tt_csv_key(char **files, size_t n, tt_csv_header header, long long *total) {
  tt_buf k = TT_BUF_INIT;
  tt_buf_printf(&k, "header %d\n", (int)header);
  *total = 0;
  for (size_t i = 0; i < n; i++) {
    tt_file_id id = {0};
    tt_db_file_id_read(files[i], &id);
    tt_buf_printf(&k, "%s %llu %llu %lld %lld %lld\n", files[i], (unsigned long long)id.dev,
                  (unsigned long long)id.ino, (long long)id.size, (long long)id.mtime_ns,
                  (long long)id.ctime_ns);
    *total += id.size;
  }
  return tt_buf_detach(&k);
}

/* "Sales 2024.csv" -> Sales_2024: letters, digits, _ and any non-ASCII
 * character kept, every other run of bytes one _, never a leading digit
 * nor SQLite's own sqlite_ prefix. */
static char *tt_csv_table_name(const char *file) {
  const char *base = strrchr(file, '/');
  base = base ? base + 1 : file;
  const char *dot = strrchr(base, '.');
  size_t n = dot && dot != base ? (size_t)(dot - base) : strlen(base);
  tt_buf b = TT_BUF_INIT;
  for (size_t i = 0; i < n; i++) {
    unsigned char c = (unsigned char)base[i];
    bool keep = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                c == '_' || c >= 0x80;
    if (keep) tt_buf_putc(&b, (char)c);
    else if (b.len && b.data[b.len - 1] != '_') tt_buf_putc(&b, '_');
  }
  while (b.len && b.data[b.len - 1] == '_') b.data[--b.len] = '\0';
  const char *s = tt_buf_cstr(&b);
  char *name;
  if (!*s) name = tt_xstrdup("data");
  else if ((*s >= '0' && *s <= '9') || strncasecmp(s, "sqlite_", 7) == 0)
    name = tt_xasprintf("t_%s", s);
  else
    name = tt_xstrdup(s);
  tt_buf_free(&b);
  return name;
}

/* name, or name_2, name_3... the first that none of taken[0..n) is (case
 * is ignored, as SQLite ignores it in names). */
static char *tt_csv_unique(const char *name, char **taken, size_t n) {
  char *cand = tt_xstrdup(name);
  for (int k = 2;; k++) {
    bool clash = false;
    for (size_t i = 0; i < n && !clash; i++) clash = tt_streq_nocase(taken[i], cand);
    if (!clash) return cand;
    free(cand);
    cand = tt_xasprintf("%s_%d", name, k);
  }
}

/* What pass one learns of a column. */
typedef struct tt_csv_col {
  bool any;     /* a value that is not empty */
  bool all_int; /* every value an integer */
  bool all_num; /* every value an integer or a real */
} tt_csv_col;

static void tt_csv_col_see(tt_csv_col *c, tt_csv_kind k) {
  if (k == TT_CSV_EMPTY) return;
  c->any = true;
  if (k != TT_CSV_INT) c->all_int = false;
  if (k == TT_CSV_TEXT) c->all_num = false;
}

typedef struct tt_csv_progress {
  long long total, done_before; /* bytes of all files, of files already read twice */
  bool on;
} tt_csv_progress;

static bool tt_csv_open_file(const char *file, const char *shown, FILE **f, tt_error *err) {
  *f = fopen(file, "rb");
  if (!*f) {
    tt_db_set_error(err, TT_ERR_IO, "cannot read %s: %s (check the file's permissions)", shown,
                    strerror(errno));
    return false;
  }
  return true;
}

static void tt_csv_ragged(const char *shown, long line, size_t got, size_t want, char delim,
                          tt_error *err) {
  char d[8];
  if (delim == '\t') snprintf(d, sizeof d, "tab");
  else snprintf(d, sizeof d, "'%c'", delim);
  tt_db_set_error(err, TT_ERR_IO,
                  "%s:%ld: %zu fields, but the first line has %zu; put the fields that hold "
                  "the delimiter %s in double quotes, or remove the extra fields",
                  shown, line, got, want, d);
}

/* Loads one file as table tname. */
static bool tt_csv_load_file(sqlite3 *h, const char *file, const char *shown, const char *tname,
                             tt_csv_header header, tt_csv_progress *prog, tt_error *err) {
  FILE *f;
  if (!tt_csv_open_file(file, shown, &f, err)) return false;
  struct stat fst;
  long long fsize = fstat(fileno(f), &fst) == 0 ? (long long)fst.st_size : 0;
  char delim = '\t';
  if (!tt_has_suffix_nocase(file, ".tsv")) {
    char sample[64 * 1024];
    size_t n = fread(sample, 1, sizeof sample, f);
    delim = tt_csv_sniff_delimiter(sample, n);
    rewind(f);
  }
  bool ok = false;
  char **row1 = NULL, **names = NULL;
  tt_csv_col *cols = NULL;
  size_t ncols = 0;
  sqlite3_stmt *ins = NULL;
  tt_buf sql = TT_BUF_INIT;

  /* pass one: every record checked, the types learnt */
  tt_csv_reader *r = tt_csv_reader_new(f, shown, delim);
  if (!tt_csv_reader_skip_bom(r, err)) goto done;
  int rc;
  long long seen = 0;
  while ((rc = tt_csv_next(r, err)) == 1) {
    size_t nf = tt_csv_nfields(r);
    if (!row1) {
      ncols = nf;
      row1 = tt_xcalloc(ncols, sizeof *row1);
      cols = tt_xcalloc(ncols, sizeof *cols);
      for (size_t c = 0; c < ncols; c++) {
        size_t len;
        const char *v = tt_csv_field(r, c, &len);
        row1[c] = tt_xstrndup(v, len);
        cols[c] = (tt_csv_col){.all_int = true, .all_num = true};
      }
      continue;
    }
    if (nf > ncols) {
      tt_csv_ragged(shown, tt_csv_record_line(r), nf, ncols, delim, err);
      goto done;
    }
    for (size_t c = 0; c < nf; c++) {
      size_t len;
      const char *v = tt_csv_field(r, c, &len);
      tt_csv_col_see(&cols[c], tt_csv_value_kind(v, len));
    }
    if (prog->on && tt_csv_reader_offset(r) - seen > (4 << 20)) {
      seen = tt_csv_reader_offset(r);
      fprintf(stderr, "\rtabletalk: reading %s: %lld%%", shown,
              (prog->done_before * 2 + seen) * 100 / (prog->total * 2 > 0 ? prog->total * 2 : 1));
    }
  }
  if (rc < 0) goto done;
  if (!row1) {
    tt_db_set_error(err, TT_ERR_IO,
                    "%s: the file is empty; a CSV file needs at least a line naming its columns",
                    shown);
    goto done;
  }

  /* the header: text over a column of numbers says so; a number there says
   * not; a file of text only is taken to have one (as most do) */
  bool has_header = true;
  if (header == TT_CSV_HEADER_NO) has_header = false;
  else if (header == TT_CSV_HEADER_AUTO) {
    bool text_over_number = false, number_over_number = false;
    for (size_t c = 0; c < ncols; c++) {
      if (!cols[c].any || !cols[c].all_num) continue;
      tt_csv_kind k = tt_csv_value_kind(row1[c], strlen(row1[c]));
      if (k == TT_CSV_TEXT) text_over_number = true;
      else if (k != TT_CSV_EMPTY) number_over_number = true;
    }
    has_header = text_over_number || !number_over_number;
  }
  names = tt_xcalloc(ncols, sizeof *names);
  for (size_t c = 0; c < ncols; c++) {
    char *want;
    if (has_header) {
      const char *s = row1[c];
      size_t len = strlen(s);
      while (len && (s[len - 1] == ' ' || s[len - 1] == '\t')) len--;
      while (len && (*s == ' ' || *s == '\t')) s++, len--;
      want = len ? tt_xstrndup(s, len) : tt_xasprintf("column_%zu", c + 1);
    } else {
      want = tt_xasprintf("column_%zu", c + 1);
      tt_csv_col_see(&cols[c], tt_csv_value_kind(row1[c], strlen(row1[c])));
    }
    names[c] = tt_csv_unique(want, names, c);
    free(want);
  }

  tt_buf_puts(&sql, "CREATE TABLE ");
  tt_buf_put_sql_ident(&sql, tname);
  tt_buf_puts(&sql, " (");
  for (size_t c = 0; c < ncols; c++) {
    if (c) tt_buf_puts(&sql, ", ");
    tt_buf_put_sql_ident(&sql, names[c]);
    tt_buf_puts(&sql, !cols[c].any ? " TEXT" : cols[c].all_int ? " INTEGER"
                                           : cols[c].all_num ? " REAL" : " TEXT");
  }
  tt_buf_puts(&sql, ")");
  char *msg = NULL;
  if (sqlite3_exec(h, tt_buf_cstr(&sql), NULL, NULL, &msg) != SQLITE_OK) {
    tt_db_set_error(err, TT_ERR_IO, "%s: cannot make its table: %s", shown, msg ? msg : "?");
    sqlite3_free(msg);
    goto done;
  }
  tt_buf_reset(&sql);
  tt_buf_puts(&sql, "INSERT INTO ");
  tt_buf_put_sql_ident(&sql, tname);
  tt_buf_puts(&sql, " VALUES (");
  for (size_t c = 0; c < ncols; c++) tt_buf_puts(&sql, c ? ",?" : "?");
  tt_buf_puts(&sql, ")");
  if (sqlite3_prepare_v2(h, tt_buf_cstr(&sql), -1, &ins, NULL) != SQLITE_OK) {
    tt_db_set_error(err, TT_ERR_IO, "%s: cannot fill its table: %s", shown, sqlite3_errmsg(h));
    goto done;
  }

  /* pass two: the rows */
  tt_csv_reader_free(r);
  rewind(f);
  r = tt_csv_reader_new(f, shown, delim);
  if (!tt_csv_reader_skip_bom(r, err)) goto done;
  bool first = true;
  seen = 0;
  while ((rc = tt_csv_next(r, err)) == 1) {
    if (first && has_header) {
      first = false;
      continue;
    }
    first = false;
    size_t nf = tt_csv_nfields(r);
    if (nf > ncols) { /* the file changed since pass one */
      tt_csv_ragged(shown, tt_csv_record_line(r), nf, ncols, delim, err);
      goto done;
    }
    for (size_t c = 0; c < ncols; c++) {
      size_t len = 0;
      const char *v = c < nf ? tt_csv_field(r, c, &len) : "";
      /* the field stays valid until the row is stored */
      tt_csv_kind k = tt_csv_value_kind(v, len);
      if (k == TT_CSV_EMPTY) sqlite3_bind_null(ins, (int)c + 1);
      else if (cols[c].all_int && k == TT_CSV_INT)
        sqlite3_bind_int64(ins, (int)c + 1, strtoll(v, NULL, 10));
      else if (cols[c].all_num && k != TT_CSV_TEXT)
        sqlite3_bind_double(ins, (int)c + 1, strtod(v, NULL));
      else
        sqlite3_bind_text(ins, (int)c + 1, v, (int)len, SQLITE_STATIC);
    }
    int src = sqlite3_step(ins);
    sqlite3_reset(ins);
    if (src != SQLITE_DONE) {
      if ((src & 0xff) == SQLITE_FULL)
        tt_db_set_error(err, TT_ERR_IO,
                        "%s:%ld: the data does not fit in the memory set aside for it; load "
                        "fewer or smaller files",
                        shown, tt_csv_record_line(r));
      else
        tt_db_set_error(err, TT_ERR_IO, "%s:%ld: cannot store the row: %s", shown,
                        tt_csv_record_line(r), sqlite3_errmsg(h));
      goto done;
    }
    if (prog->on && tt_csv_reader_offset(r) - seen > (4 << 20)) {
      seen = tt_csv_reader_offset(r);
      fprintf(stderr, "\rtabletalk: reading %s: %lld%%", shown,
              (prog->done_before * 2 + fsize + seen) * 100 /
                  (prog->total * 2 > 0 ? prog->total * 2 : 1));
    }
  }
  if (rc < 0) goto done;
  if (ferror(f)) {
    tt_db_set_error(err, TT_ERR_IO, "cannot read %s: %s", shown, strerror(errno));
    goto done;
  }
  ok = true;
done:
  sqlite3_finalize(ins);
  tt_buf_free(&sql);
  tt_csv_reader_free(r);
  fclose(f);
  if (row1) tt_strv_free(row1, ncols);
  if (names) tt_strv_free(names, ncols);
  free(cols);
  return ok;
}

static void tt_csv_unmap(tt_csv_data *d) {
  if (d->image) munmap(d->image, d->mapped);
  d->image = NULL;
}

/* Builds the database of files[0..n) in d's image. */
static bool tt_csv_build(tt_csv_data *d, const char *path, char **files, size_t n,
                         long long total, tt_csv_header header, tt_error *err) {
  /* room for the database: SQLite stores a CSV file in about its size;
   * only the pages written take memory */
  size_t page = (size_t)sysconf(_SC_PAGESIZE);
  size_t cap = ((size_t)total * 2 + (64u << 20) + page - 1) / page * page;
  void *m = mmap(NULL, cap, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                 -1, 0);
  if (m == MAP_FAILED) {
    tt_db_set_error(err, TT_ERR_IO, "cannot set aside %zu MB of memory for %s: %s",
                    cap >> 20, path, strerror(errno));
    return false;
  }
  d->image = m;
  d->mapped = cap;
  sqlite3 *h = NULL;
  bool ok = false;
  if (sqlite3_open_v2(":memory:", &h, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, NULL) !=
          SQLITE_OK ||
      sqlite3_deserialize(h, "main", d->image, 0, (sqlite3_int64)cap, 0) != SQLITE_OK ||
      sqlite3_exec(h, "PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF; BEGIN;", NULL, NULL,
                   NULL) != SQLITE_OK) {
    tt_db_set_error(err, TT_ERR_IO, "cannot make an in-memory database for %s: %s", path,
                    h ? sqlite3_errmsg(h) : "out of memory");
    goto done;
  }
  sqlite3_limit(h, SQLITE_LIMIT_COLUMN, TT_CSV_MAX_COLUMNS);
  tt_csv_progress prog = {.total = total,
                          .on = total >= TT_CSV_PROGRESS_BYTES && isatty(STDERR_FILENO)};
  char **tables = tt_xcalloc(n, sizeof *tables);
  bool loaded = true;
  for (size_t i = 0; i < n && loaded; i++) {
    /* messages name the file as the user would: path, or path/name */
    const char *base = strrchr(files[i], '/');
    char *shown = n == 1 ? tt_xstrdup(path)
                         : tt_xasprintf("%s%s%s", path,
                                        path[strlen(path) - 1] == '/' ? "" : "/",
                                        base ? base + 1 : files[i]);
    char *want = tt_csv_table_name(files[i]);
    tables[i] = tt_csv_unique(want, tables, i);
    free(want);
    loaded = tt_csv_load_file(h, files[i], shown, tables[i], header, &prog, err);
    struct stat st;
    if (stat(files[i], &st) == 0) prog.done_before += st.st_size;
    free(shown);
  }
  tt_strv_free(tables, n);
  if (prog.on) fputs("\r\033[K", stderr);
  if (!loaded) goto done;
  if (sqlite3_exec(h, "COMMIT", NULL, NULL, NULL) != SQLITE_OK) {
    tt_db_set_error(err, TT_ERR_IO, "cannot finish the in-memory database of %s: %s", path,
                    sqlite3_errmsg(h));
    goto done;
  }
  sqlite3_stmt *st = NULL;
  sqlite3_int64 pages = 0, psize = 0;
  if (sqlite3_prepare_v2(h, "SELECT page_count, page_size FROM pragma_page_count, pragma_page_size",
                         -1, &st, NULL) == SQLITE_OK &&
      sqlite3_step(st) == SQLITE_ROW) {
    pages = sqlite3_column_int64(st, 0);
    psize = sqlite3_column_int64(st, 1);
  }
  sqlite3_finalize(st);
  d->size = (size_t)(pages * psize);
  ok = d->size > 0;
  if (!ok) tt_db_set_error(err, TT_ERR_IO, "cannot measure the in-memory database of %s", path);
done:
  sqlite3_close(h);
  if (!ok) {
    tt_csv_unmap(d);
    return false;
  }
  /* give back what the database did not use */
  size_t keep = (d->size + page - 1) / page * page;
  if (keep < d->mapped) {
    void *s = mremap(d->image, d->mapped, keep, 0);
    if (s != MAP_FAILED) d->mapped = keep;
  }
  mprotect(d->image, d->mapped, PROT_READ);
  return true;
}

/* Frees the stale images no handle reads (tt_csv_mu held). */
static void tt_csv_drop_unused(void) {
  for (tt_csv_data **pp = &tt_csv_loaded; *pp;) {
    tt_csv_data *o = *pp;
    if (o->refs == 0 && o->stale) {
      *pp = o->next;
      tt_csv_unmap(o);
      tt_strv_free(o->files, o->nfiles);
      free(o->heads);
      free(o->key);
      free(o->real);
      free(o);
    } else {
      pp = &o->next;
    }
  }
}

tt_csv_data *tt_csv_acquire(const char *path, const char *real, tt_csv_header header,
                            tt_error *err) {
  size_t n;
  char **files = tt_csv_files(path, real, &n, err);
  if (!files) return NULL;
  long long total;
  char *key = tt_csv_key(files, n, header, &total);
  pthread_mutex_lock(&tt_csv_mu);
  tt_csv_data *d = NULL;
  for (tt_csv_data *p = tt_csv_loaded; p; p = p->next)
    if (strcmp(p->key, key) == 0) d = p;
  if (!d) {
    d = tt_xcalloc(1, sizeof *d);
    if (!tt_csv_build(d, path, files, n, total, header, err)) {
      free(d);
      d = NULL;
    } else {
      d->key = key;
      key = NULL;
      d->files = files;
      d->nfiles = n;
      files = NULL;
      d->real = tt_xstrdup(real);
      /* older images of the same path go when nobody reads them */
      for (tt_csv_data *o = tt_csv_loaded; o; o = o->next)
        if (strcmp(o->real, real) == 0) o->stale = true;
      tt_csv_drop_unused();
      d->next = tt_csv_loaded;
      tt_csv_loaded = d;
    }
  }
  if (d) d->refs++;
  pthread_mutex_unlock(&tt_csv_mu);
  free(key);
  if (files) tt_strv_free(files, n);
  return d;
}

/* Bytes of each file's head that its stamp hashes. */
#define TT_CSV_HEAD_BYTES 65536

void tt_csv_stamp(tt_csv_data *d, tt_buf *out) {
  pthread_mutex_lock(&tt_csv_mu);
  if (!d->heads) { /* once per image: its files are what they were when loaded */
    tt_buf h = TT_BUF_INIT;
    char *chunk = tt_xmalloc(TT_CSV_HEAD_BYTES);
    for (size_t i = 0; i < d->nfiles; i++) {
      FILE *f = fopen(d->files[i], "rb");
      size_t got = f ? fread(chunk, 1, TT_CSV_HEAD_BYTES, f) : 0;
      if (f) fclose(f);
      tt_buf_printf(&h, "head %016llx %zu\n",
                    (unsigned long long)tt_fnv1a64(TT_FNV1A64_INIT, chunk, got), got);
    }
    free(chunk);
    d->heads = tt_buf_detach(&h);
  }
  tt_buf_puts(out, d->key);
  tt_buf_puts(out, d->heads);
  pthread_mutex_unlock(&tt_csv_mu);
}

void tt_csv_release(tt_csv_data *d) {
  if (!d) return;
  pthread_mutex_lock(&tt_csv_mu);
  d->refs--;
  tt_csv_drop_unused();
  pthread_mutex_unlock(&tt_csv_mu);
}

sqlite3 *tt_csv_connect(tt_csv_data *d, const char *path, tt_error *err) {
  sqlite3 *h = NULL;
  int rc = sqlite3_open_v2(":memory:", &h,
                           SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_EXRESCODE,
                           NULL);
  if (rc == SQLITE_OK)
    rc = sqlite3_deserialize(h, "main", d->image, (sqlite3_int64)d->size,
                             (sqlite3_int64)d->size, SQLITE_DESERIALIZE_READONLY);
  if (rc != SQLITE_OK) {
    tt_db_set_error(err, TT_ERR_IO, "cannot open the in-memory database of %s: %s", path,
                    h ? sqlite3_errmsg(h) : sqlite3_errstr(rc));
    sqlite3_close(h);
    return NULL;
  }
  return h;
}
