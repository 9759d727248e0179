/* csv.h — the SQLite engine's CSV loader, seen only by src/db/sqlite/: a
 * CSV file or a folder of them becomes an in-memory SQLite database (one
 * table per file), loaded once per process and file contents and shared
 * by every handle on it. csv_read.c reads records, csv.c builds and shares
 * the images. */
#ifndef TT_DB_SQLITE_CSV_H
#define TT_DB_SQLITE_CSV_H

#include <stdio.h>

#include "db/csv_sniff.h"
#include "db/sqlite/sqlite.h"

#define TT_CSV_MAX_COLUMNS 500        /* SQLITE_LIMIT_COLUMN of every handle */
#define TT_CSV_MAX_FIELD TT_LIMIT_LENGTH

typedef struct tt_csv_reader tt_csv_reader;
/* Reads f (from where it stands) up to limit bytes (-1: to its end). */
tt_csv_reader *tt_csv_reader_new(FILE *f, const char *name, char delim, long long limit);
void tt_csv_reader_free(tt_csv_reader *r);
/* Skips a UTF-8 byte order mark; a UTF-16 one is an error. */
bool tt_csv_reader_skip_bom(tt_csv_reader *r, tt_error *err);
/* 1: a record (its fields until the next call), 0: the end, -1: err
 * names the file and line. Lines with nothing on them are skipped. */
int tt_csv_next(tt_csv_reader *r, tt_error *err);
size_t tt_csv_nfields(const tt_csv_reader *r);
const char *tt_csv_field(const tt_csv_reader *r, size_t i, size_t *len);
long tt_csv_record_line(const tt_csv_reader *r);
long long tt_csv_reader_offset(const tt_csv_reader *r);
/* ',', ';', tab or '|': the one that splits the first lines of the sample
 * into the same number of fields, most fields first; ',' when none does. */
char tt_csv_sniff_delimiter(const char *sample, size_t n);

/* The in-memory database of the CSV file or folder at path (real: its
 * resolved path; only its regular files are read, csv_files.c), loaded
 * once per process and file contents and shared; NULL with err filled in.
 * A file that changes under the reader is read again until deadline_ms
 * (tt_now_ms time; 0: not again), then refused as changing; types is
 * --csv-types (csv_sniff.h; NULL: none), a TT_ERR_CONFIG error when
 * malformed or naming no column; with reload
 * (before a query) the loading itself also stops at deadline_ms. */
tt_csv_data *tt_csv_acquire(const char *path, const char *real, tt_csv_header header,
                            const char *types, double deadline_ms, bool reload, tt_error *err);
/* What the folder holds that is not read, and why; NULL when nothing. */
const char *tt_csv_notes(const tt_csv_data *d);
void tt_csv_release(tt_csv_data *d);
/* What proves d's tables unchanged: the header mode, and each file's path,
 * device, inode, size and times, and a hash of its first 64 KiB (read once
 * per image). */
void tt_csv_stamp(tt_csv_data *d, tt_buf *out);
/* A fresh connection reading d, read-only (sqlite3_deserialize of the one
 * shared image: no copy); NULL with err filled in. */
sqlite3 *tt_csv_connect(tt_csv_data *d, const char *path, tt_error *err);

#endif
