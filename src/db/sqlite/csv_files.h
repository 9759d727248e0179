/* csv_files.h — the files a CSV target reads (csv_files.c), seen only by
 * the CSV loader: a file named by the user, or the regular files inside a
 * folder, each open (O_NOFOLLOW|O_NONBLOCK) with what fstat said of it,
 * and a note of what the folder held that is not read. */
#ifndef TT_DB_SQLITE_CSV_FILES_H
#define TT_DB_SQLITE_CSV_FILES_H

#include <sys/stat.h>

#include "db/sqlite/sqlite.h"

typedef struct tt_csv_file {
  char *path;     /* what was opened (a link inside the folder: its target) */
  char *name;     /* its name in the folder, or the path the user gave */
  int fd;         /* open for reading; -1 once handed over */
  struct stat st; /* fstat of fd when opened: its size is what is read */
} tt_csv_file;

typedef struct tt_csv_files {
  tt_csv_file *v; /* in the order of their names */
  size_t n, cap;
  bool folder;    /* the target is a folder (else one file) */
  tt_buf notes;   /* "name (why)" of each entry left out, "; " between */
} tt_csv_files;

/* Opens the files of the CSV target path (real: its resolved path): the
 * file itself, or the *.csv and *.tsv regular files of a folder (a link
 * among them only when it resolves inside the folder). false with err for
 * a target that cannot be read, a file named that is not a regular file,
 * or a folder with nothing to read. Close with tt_csv_files_close. */
bool tt_csv_files_open(tt_csv_files *f, const char *path, const char *real, tt_error *err);
void tt_csv_files_close(tt_csv_files *f);
/* What was left out and why ("notes.csv (a symbolic link that leads out
 * of the folder); pipe.csv (...)"), names escaped; NULL when nothing. */
const char *tt_csv_files_notes(tt_csv_files *f);

#endif
