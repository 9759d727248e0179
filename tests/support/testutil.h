/* testutil.h — helpers shared by the test programs: locating the binary and
 * the shared inputs, scratch copies of databases, running the tabletalk
 * binary (through pipes or a pseudo-terminal) and decoding the corpus TSV
 * files of ../shared/corpus. */
#ifndef TT_TESTUTIL_H
#define TT_TESTUTIL_H

#include <stdbool.h>
#include <stddef.h>

#include "schema/schema.h"
#include "util/util.h"

/* Paths from the environment CTest sets (TT_BIN, TT_SHARED_DIR), with
 * defaults for running a test by hand from the build folder. */
const char *tu_bin(void);
const char *tu_shared(void);
/* "<shared>/<rel>" (static buffer, valid until the next call). */
const char *tu_shared_path(const char *rel);
/* Exits with 77 (CTest: skipped) and says why when <shared>/<rel> is
 * missing: the corpora live outside the repository. */
void tu_require_shared(const char *rel);
/* The project's verified copy of chinook (data/chinook.sqlite, put there
 * by scripts/fetch-data.sh); exits 99 with a hint when it is missing. */
const char *tu_chinook(void);

/* A scratch folder holding a private copy of chinook: tests may do
 * anything to the copy, never to the original. */
typedef struct tu_scratch {
  char *dir; /* the folder */
  char *db;  /* <dir>/chinook.sqlite */
} tu_scratch;

void tu_scratch_make(tu_scratch *s);
void tu_scratch_remove(tu_scratch *s);

/* Writes <dir>/wide.sqlite: ntables tables in twelve prefixed groups
 * ("sales_orders", "hr_contacts"...), each with an integer key, a foreign
 * key to the group's previous table, described columns (SQL comments in the
 * CREATE TABLE text: <noun>_title, <noun>_status), <noun>_amount, <noun>_date
 * and the same audit
 * columns (created_at, updated_at, created_by, etl_batch_id); 20 rows each,
 * and big_rows rows in the first table. Returns the path (caller frees). */
char *tu_make_wide_db(const char *dir, int ntables, long big_rows);
/* Runs sql on the SQLite file at path (created when missing); aborts with
 * SQLite's message when it fails. */
void tu_exec_sql(const char *path, const char *sql);

/* Opens the chinook copy of the tests read-only and reads its schema
 * (NULL when either fails; *db is then closed or NULL). */
tt_schema *tu_open_chinook(tt_db **db);

/* A fresh private folder under $TMPDIR, removed by tu_rmtree. */
char *tu_mkdtemp(void);
void tu_rmtree(const char *dir);
/* Copies src to dst byte for byte; aborts the test program on failure. */
void tu_copy_file(const char *src, const char *dst);
/* Writes text to path (replacing it); aborts the test program on failure. */
void tu_write_file(const char *path, const char *text);
/* Sets the modification time of path to `seconds` after what it was: a
 * distinct, later time for a change detector, without sleeping for the
 * clock to move on. */
void tu_mtime_later(const char *path, int seconds);
/* Reads a whole file; NULL when it cannot. */
char *tu_read_file(const char *path, size_t *len);
/* sha256 of a file as 64 hex digits (via sha256sum). */
char *tu_sha256(const char *path);

typedef struct tu_run {
  int status;      /* exit code, or 128+signal */
  tt_buf out, err; /* stdout, stderr (with a pty: both in out) */
  double ms;       /* wall time */
  bool timed_out;  /* killed after the deadline */
  long max_rss_kib; /* the child's peak resident memory */
} tu_run;

/* Runs argv (NULL-terminated; argv[0] a path) with the given standard
 * input, killing it after timeout_ms. */
void tu_run_cmd(char *const argv[], const char *in, size_t in_len,
                int timeout_ms, tu_run *r);
/* Same, but stdout and stderr are a pseudo-terminal of the given width. */
void tu_run_pty(char *const argv[], int cols, int timeout_ms, tu_run *r);
void tu_run_free(tu_run *r);

/* One decoded corpus row: fields split on tabs, escapes of the corpus
 * README applied to the chosen columns. */
typedef struct tu_row {
  size_t nfields;
  char **field;  /* decoded (may contain NUL: see len) */
  size_t *len;
} tu_row;

/* Reads a corpus TSV, skipping the header; decodes columns whose index is
 * set in decode_mask (bit i for column i). */
tu_row *tu_corpus_load(const char *path, unsigned decode_mask, size_t *nrows);
void tu_corpus_free(tu_row *rows, size_t nrows);
/* Decodes \n \t \r \\ \xHH \uXXXX \UXXXXXXXX into out. */
void tu_corpus_decode(const char *s, size_t n, tt_buf *out);

#endif
