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
 * when its last handle lets go. Nothing is ever written beside the files.
 *
 * Which files are read, and how they are opened, is csv_files.c's: only
 * regular files inside a folder. Each is read up to its size when opened,
 * so a file another program appends to is loaded as of that moment; one
 * that changes under the reader in any other way (cut short, rewritten, a
 * line half written at that moment) is loaded again while the time limit
 * allows, then refused as changing. A load before a query (the files
 * changed) stops at the query's time limit. */
#define _GNU_SOURCE /* mremap */
#include "db/sqlite/csv.h"
#include "db/sqlite/csv_files.h"

#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* files this large show their progress on a terminal */
#define TT_CSV_PROGRESS_BYTES (64LL * 1024 * 1024)

struct tt_csv_data {
  char *real;            /* the file or folder */
  char *key;             /* header mode, the identity of every file read and
                          * what was left out */
  char *notes;           /* what the folder holds that is not read, or NULL */
  char **files;          /* the files read, in the order of their names */
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

/* The key of an image: the header mode, each file read (its path and
 * what fstat said when it was opened) and what was left out; and the
 * bytes of all the files. */
static char *tt_csv_key(const tt_csv_files *f, tt_csv_header header, const char *types,
                        long long *total) {
  tt_buf k = TT_BUF_INIT;
  /* the version of the typing rules (csv_sniff.c): a cached catalog of
   * older rules is not this image's */
  tt_buf_printf(&k, "header %d\ntyping 2\ntypes %s\n", (int)header, types ? types : "");
  *total = 0;
  for (size_t i = 0; i < f->n; i++) {
    const struct stat *st = &f->v[i].st;
    tt_buf_printf(&k, "%s %s %llu %llu %lld %lld %lld\n", f->v[i].name, f->v[i].path,
                  (unsigned long long)st->st_dev, (unsigned long long)st->st_ino,
                  (long long)st->st_size,
                  (long long)st->st_mtim.tv_sec * 1000000000 + st->st_mtim.tv_nsec,
                  (long long)st->st_ctim.tv_sec * 1000000000 + st->st_ctim.tv_nsec);
    *total += st->st_size;
  }
  if (f->notes.len) tt_buf_printf(&k, "skipped %s\n", f->notes.data);
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

typedef struct tt_csv_progress {
  long long total, done_before; /* bytes of all files, of files already read twice */
  bool on;
} tt_csv_progress;

/* How loading goes: a load before a query keeps to its deadline, and a
 * load that fails says whether the file changed under the reader (then
 * loading it again may do). */
typedef struct tt_csv_load {
  double deadline_ms; /* tt_now_ms time the load must end by; 0: none */
  bool changing;      /* the file changed while it was read */
  bool last_chance;   /* no time to read it again: a last line without its
                       * line end is taken as it is */
  bool late;          /* the deadline passed */
  long records;       /* records read so far (the clock is read every 1024) */
  tt_csv_overrides *types; /* --csv-types, each marked once a column matched */
} tt_csv_load;

/* After another record: false with err once the deadline has passed. */
static bool tt_csv_in_time(tt_csv_load *ld, const char *shown, tt_error *err) {
  if (ld->deadline_ms <= 0 || (++ld->records & 1023) || tt_now_ms() < ld->deadline_ms) return true;
  ld->late = true;
  tt_db_set_error(err, TT_ERR_TIMEOUT,
                  "%s changed, and loading it again did not finish within the query's time "
                  "limit; try again, or raise --timeout", shown);
  return false;
}

/* A file written to this recently (a quarter of a second) that ends in a
 * line without its line end may be in the middle of writing that line. */
#define TT_CSV_SETTLE_NS 250000000LL

/* Whether the file read as of file->st (through f) was changed since in a
 * way that spoils that read: cut short, rewritten, or appended to while its
 * last line was half written; or, while there is time to read it again, it
 * ends in a line without its line end and was written a moment ago (a
 * writer between two parts of a line). */
static bool tt_csv_spoiled(FILE *f, const tt_csv_file *file, bool last_chance) {
  struct stat now;
  if (fstat(fileno(f), &now) != 0) return true;
  off_t size = file->st.st_size;
  if (now.st_size < size) return true;
  bool same_time = now.st_mtim.tv_sec == file->st.st_mtim.tv_sec &&
                   now.st_mtim.tv_nsec == file->st.st_mtim.tv_nsec;
  if (now.st_size == size && !same_time) return true;
  char last;
  bool ends_line = size == 0 || (pread(fileno(f), &last, 1, size - 1) == 1 &&
                                 (last == '\n' || last == '\r'));
  if (ends_line) return false;
  if (now.st_size > size) return true; /* the line read last was being written */
  struct timespec t;
  clock_gettime(CLOCK_REALTIME, &t);
  long long age = ((long long)t.tv_sec - now.st_mtim.tv_sec) * 1000000000LL +
                  (t.tv_nsec - now.st_mtim.tv_nsec);
  return !last_chance && age >= 0 && age < TT_CSV_SETTLE_NS;
}

/* A note as one line of a SQL comment: control characters (a line end
 * would end the comment) become '?'. */
static void tt_csv_put_comment(tt_buf *sql, const char *note) {
  tt_buf_puts(sql, " -- ");
  for (const char *p = note; *p; p++)
    tt_buf_putc(sql, (unsigned char)*p < 0x20 || *p == 0x7f ? '?' : *p);
}

/* Whether the file's reading is worth a line on its table: null tokens
 * other than the empty field, ragged rows, an unexpected delimiter. */
static bool tt_csv_notable(const tt_csv_sniff *sn, char delim, char usual) {
  return (tt_csv_sniff_null_tokens(sn) & ~1u) || tt_csv_sniff_short_rows(sn, NULL) ||
         tt_csv_sniff_long_rows(sn, NULL) || delim != usual;
}

/* CREATE TABLE tname with a column per line, each declared as sniffed, a
 * comment with its note, and the file's summary on the first line. */
static void tt_csv_create_sql(tt_buf *sql, const char *tname, char *const *names,
                              const tt_csv_sniff *sn, char delim, char usual) {
  tt_buf_puts(sql, "CREATE TABLE ");
  tt_buf_put_sql_ident(sql, tname);
  tt_buf_puts(sql, " (");
  if (tt_csv_notable(sn, delim, usual)) {
    char *sum = tt_csv_sniff_summary(sn);
    tt_csv_put_comment(sql, sum);
    free(sum);
  }
  size_t ncols = tt_csv_sniff_ncols(sn);
  for (size_t c = 0; c < ncols; c++) {
    const tt_csv_column_sniff *cs = tt_csv_sniff_column(sn, c);
    tt_buf_puts(sql, "\n  ");
    tt_buf_put_sql_ident(sql, names[c]);
    tt_buf_putc(sql, ' ');
    tt_buf_puts(sql, tt_csv_type_name(cs->type));
    if (c + 1 < ncols) tt_buf_putc(sql, ',');
    if (cs->note) tt_csv_put_comment(sql, cs->note);
  }
  tt_buf_puts(sql, "\n)");
}

/* Loads one file (open: its descriptor is taken over) as table tname, up
 * to its size when it was opened. */
static bool tt_csv_load_file(sqlite3 *h, tt_csv_file *file, const char *shown, const char *tname,
                             tt_csv_header header, tt_csv_progress *prog, tt_csv_load *ld,
                             tt_error *err) {
  FILE *f = fdopen(file->fd, "rb");
  if (!f) {
    tt_db_set_error(err, TT_ERR_IO, "cannot read %s: %s", shown, strerror(errno));
    return false;
  }
  file->fd = -1;
  long long fsize = (long long)file->st.st_size;
  char delim = '\t';
  if (!tt_has_suffix_nocase(file->name, ".tsv")) {
    char sample[64 * 1024];
    size_t n = fread(sample, 1, fsize < (long long)sizeof sample ? (size_t)fsize : sizeof sample, f);
    delim = tt_csv_sniff_delimiter(sample, n);
    rewind(f);
  }
  bool ok = false;
  char **row1 = NULL, **names = NULL;
  tt_csv_sniff *sn = NULL;
  size_t ncols = 0;
  long line1 = 0;
  sqlite3_stmt *ins = NULL;
  tt_buf sql = TT_BUF_INIT;

  /* pass one: every record checked, the types learnt (csv_sniff.c) */
  tt_csv_reader *r = tt_csv_reader_new(f, shown, delim, fsize);
  if (!tt_csv_reader_skip_bom(r, err)) goto done;
  int rc;
  long long seen = 0;
  while ((rc = tt_csv_next(r, err)) == 1) {
    if (!tt_csv_in_time(ld, shown, err)) goto done;
    size_t nf = tt_csv_nfields(r);
    if (!row1) {
      ncols = nf;
      line1 = tt_csv_record_line(r);
      row1 = tt_xcalloc(ncols, sizeof *row1);
      for (size_t c = 0; c < ncols; c++) {
        size_t len;
        const char *v = tt_csv_field(r, c, &len);
        row1[c] = tt_xstrndup(v, len);
      }
      sn = tt_csv_sniff_new(ncols, delim);
      continue;
    }
    tt_csv_sniff_record(sn, nf, tt_csv_record_line(r));
    size_t upto = nf < ncols ? nf : ncols;
    for (size_t c = 0; c < upto; c++) {
      size_t len;
      const char *v = tt_csv_field(r, c, &len);
      tt_csv_sniff_value(sn, c, v, len);
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

  /* the header: text over a column of numbers (dates, times) says so; a
   * value of the column's type there says not; a file of text only is
   * taken to have one (as most do) */
  bool has_header = true;
  if (header == TT_CSV_HEADER_NO) has_header = false;
  else if (header == TT_CSV_HEADER_AUTO) {
    bool text_over_typed = false, typed_over_typed = false;
    for (size_t c = 0; c < ncols; c++) {
      int vote = tt_csv_sniff_header_vote(sn, c, row1[c], strlen(row1[c]));
      if (vote > 0) text_over_typed = true;
      else if (vote < 0) typed_over_typed = true;
    }
    has_header = text_over_typed || !typed_over_typed;
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
    }
    names[c] = tt_csv_unique(want, names, c);
    free(want);
  }
  if (!has_header) { /* the first line is a row too */
    tt_csv_sniff_record(sn, ncols, line1);
    for (size_t c = 0; c < ncols; c++) tt_csv_sniff_value(sn, c, row1[c], strlen(row1[c]));
  }
  tt_csv_sniff_finish(sn, tname, names, ld->types);

  tt_csv_create_sql(&sql, tname, names, sn, delim,
                    tt_has_suffix_nocase(file->name, ".tsv") ? '\t' : ',');
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

  /* pass two: the rows, every one (a short row's missing fields are NULL,
   * a long row's fields past the last column left out, as its table's
   * line says) */
  tt_csv_reader_free(r);
  rewind(f);
  r = tt_csv_reader_new(f, shown, delim, fsize);
  if (!tt_csv_reader_skip_bom(r, err)) goto done;
  bool first = true;
  seen = 0;
  while ((rc = tt_csv_next(r, err)) == 1) {
    if (!tt_csv_in_time(ld, shown, err)) goto done;
    if (first && has_header) {
      first = false;
      continue;
    }
    first = false;
    size_t nf = tt_csv_nfields(r);
    for (size_t c = 0; c < ncols; c++) {
      /* the field stays valid until the row is stored */
      tt_csv_cell cell = {.kind = TT_CSV_CELL_NULL};
      if (c < nf) {
        size_t len;
        const char *v = tt_csv_field(r, c, &len);
        tt_csv_sniff_convert(sn, c, v, len, &cell);
      }
      int at = (int)c + 1;
      switch (cell.kind) {
      case TT_CSV_CELL_NULL: sqlite3_bind_null(ins, at); break;
      case TT_CSV_CELL_INT: sqlite3_bind_int64(ins, at, cell.i); break;
      case TT_CSV_CELL_REAL: sqlite3_bind_double(ins, at, cell.d); break;
      case TT_CSV_CELL_TEXT: sqlite3_bind_text(ins, at, cell.s, (int)cell.n, SQLITE_STATIC); break;
      }
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
  /* read as of one moment: a file that changed otherwise than by whole
   * lines added is read again (or refused as changing) */
  if (!ld->late && tt_csv_spoiled(f, file, ld->last_chance)) {
    ld->changing = true;
    if (ok) tt_db_set_error(err, TT_ERR_BUSY, "%s changed while it was read", shown);
    ok = false;
  }
  sqlite3_finalize(ins);
  tt_buf_free(&sql);
  tt_csv_reader_free(r);
  fclose(f);
  if (row1) tt_strv_free(row1, ncols);
  if (names) tt_strv_free(names, ncols);
  tt_csv_sniff_free(sn);
  return ok;
}

static void tt_csv_unmap(tt_csv_data *d) {
  if (d->image) munmap(d->image, d->mapped);
  d->image = NULL;
}

/* Builds the database of the files in d's image. */
static bool tt_csv_build(tt_csv_data *d, const char *path, tt_csv_files *files, long long total,
                         tt_csv_header header, tt_csv_load *ld, tt_error *err) {
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
  size_t n = files->n;
  char **tables = tt_xcalloc(n, sizeof *tables);
  bool loaded = true;
  for (size_t i = 0; i < n && loaded; i++) {
    /* messages name the file as the user would: path, or path/name; the
     * table is named after the name in the folder (a link's own name) */
    tt_csv_file *file = &files->v[i];
    char *shown = !files->folder ? tt_xstrdup(path)
                                 : tt_xasprintf("%s%s%s", path,
                                                path[strlen(path) - 1] == '/' ? "" : "/",
                                                file->name);
    char *want = tt_csv_table_name(file->name);
    tables[i] = tt_csv_unique(want, tables, i);
    free(want);
    loaded = tt_csv_load_file(h, file, shown, tables[i], header, &prog, ld, err);
    prog.done_before += file->st.st_size;
    free(shown);
  }
  tt_strv_free(tables, n);
  if (prog.on) fputs("\r\033[K", stderr);
  if (!loaded) goto done;
  const tt_csv_override *unused = tt_csv_overrides_unused(ld->types);
  if (unused) {
    tt_db_set_error(err, TT_ERR_CONFIG, "--csv-types names %s%s%s, but %s has no such %s",
                    unused->table ? unused->table : "", unused->table ? "." : "", unused->column,
                    path, unused->table ? "table and column" : "column");
    tt_error_hint(err, "check the name: `tabletalk schema %s` lists the tables and columns", path);
    goto done;
  }
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
      free(o->notes);
      free(o->real);
      free(o);
    } else {
      pp = &o->next;
    }
  }
}

/* One try: the image of the files as they are now, found or built; NULL
 * with err, and *changing when the files changed under the reader. */
static tt_csv_data *tt_csv_acquire_once(const char *path, const char *real, tt_csv_header header,
                                        const char *types, double load_deadline_ms, bool last_chance,
                                        bool *changing, tt_error *err) {
  *changing = false;
  tt_csv_files files;
  if (!tt_csv_files_open(&files, path, real, err)) return NULL;
  long long total;
  char *key = tt_csv_key(&files, header, types, &total);
  pthread_mutex_lock(&tt_csv_mu);
  tt_csv_data *d = NULL;
  for (tt_csv_data *p = tt_csv_loaded; p; p = p->next)
    if (strcmp(p->key, key) == 0) d = p;
  if (!d) {
    d = tt_xcalloc(1, sizeof *d);
    tt_csv_overrides ov;
    tt_csv_load ld = {.deadline_ms = load_deadline_ms, .last_chance = last_chance, .types = &ov};
    bool built = tt_csv_overrides_parse(types, &ov, err) &&
                 tt_csv_build(d, path, &files, total, header, &ld, err);
    tt_csv_overrides_free(&ov);
    if (!built) {
      *changing = ld.changing;
      free(d);
      d = NULL;
    } else {
      d->key = key;
      key = NULL;
      d->nfiles = files.n;
      d->files = tt_xcalloc(files.n ? files.n : 1, sizeof *d->files);
      for (size_t i = 0; i < files.n; i++) d->files[i] = tt_xstrdup(files.v[i].path);
      d->real = tt_xstrdup(real);
      const char *notes = tt_csv_files_notes(&files);
      d->notes = notes ? tt_xstrdup(notes) : NULL;
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
  tt_csv_files_close(&files);
  return d;
}

tt_csv_data *tt_csv_acquire(const char *path, const char *real, tt_csv_header header,
                            const char *types, double deadline_ms, bool reload, tt_error *err) {
  for (int attempt = 0;; attempt++) {
    bool changing, last_chance = deadline_ms <= 0 || tt_now_ms() + 100 >= deadline_ms;
    tt_csv_data *d = tt_csv_acquire_once(path, real, header, types, reload ? deadline_ms : 0,
                                         last_chance, &changing, err);
    if (d || !changing) return d;
    if (deadline_ms <= 0 || tt_now_ms() + 5 >= deadline_ms) {
      tt_db_set_error(err, TT_ERR_BUSY,
                      "%s: the file is changing (another program is writing it while tabletalk "
                      "reads it) and did not hold still within the time limit; try again once "
                      "it is written, or raise --timeout", path);
      return NULL;
    }
    sqlite3_sleep(attempt < 10 ? 1 : 5);
  }
}

const char *tt_csv_notes(const tt_csv_data *d) { return d ? d->notes : NULL; }

/* Bytes of each file's head that its stamp hashes. */
#define TT_CSV_HEAD_BYTES 65536

void tt_csv_stamp(tt_csv_data *d, tt_buf *out) {
  pthread_mutex_lock(&tt_csv_mu);
  if (!d->heads) { /* once per image: its files are what they were when loaded */
    tt_buf h = TT_BUF_INIT;
    char *chunk = tt_xmalloc(TT_CSV_HEAD_BYTES);
    for (size_t i = 0; i < d->nfiles; i++) {
      /* as the loader opens them: never a link, never a wait on a FIFO */
      int fd = open(d->files[i], O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
      struct stat st;
      ssize_t got = fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode)
                        ? read(fd, chunk, TT_CSV_HEAD_BYTES)
                        : 0;
      if (fd >= 0) close(fd);
      if (got < 0) got = 0;
      tt_buf_printf(&h, "head %016llx %zu\n",
                    (unsigned long long)tt_fnv1a64(TT_FNV1A64_INIT, chunk, (size_t)got), (size_t)got);
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
