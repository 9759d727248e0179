/* cache_file.h — the schema layer's own header for its cache files (the
 * catalog's and the value index's, under the cache folder): where an
 * entry lives, writing and reading its binary form as hostile input, the
 * source it was read from, and writing it atomically. Seen only by the
 * files of src/schema/. */
#ifndef TT_SCHEMA_CACHE_FILE_H
#define TT_SCHEMA_CACHE_FILE_H

#include "schema/schema.h"

/* The first line of each kind of cache file; a file of an older form is
 * read as missing and removed by gc (cache_gc.c). */
#define TT_CATALOG_MAGIC "tabletalk-catalog 2\n"
#define TT_VALUES_MAGIC "tabletalk-values 2\n"
#define TT_VECTORS_MAGIC "tabletalk-vectors 1\n"

/* <cache_dir>/<kind>/<16 hex digits of the identity's hash><suffix>
 * (freshly allocated). */
char *tt_cache_entry_path(const char *cache_dir, const char *kind, const char *identity,
                          const char *suffix);

/* ---- writing: appends to a tt_buf ------------------------------------------ */

void tt_cw_u8(tt_buf *b, unsigned v);
void tt_cw_u64(tt_buf *b, uint64_t v);
void tt_cw_f64(tt_buf *b, double v);
/* n bytes (may hold NULs), then a NUL; NULL is written as "no string". */
void tt_cw_bytes(tt_buf *b, const char *s, size_t n);
void tt_cw_str(tt_buf *b, const char *s);

/* ---- reading: every read checks the bounds; any fault makes bad ----------- */

typedef struct tt_cr {
  const unsigned char *p, *end;
  bool bad;
} tt_cr;

unsigned tt_cr_u8(tt_cr *r);
uint64_t tt_cr_u64(tt_cr *r);
double tt_cr_f64(tt_cr *r);
/* A count of things that each take at least min_bytes more of the file:
 * larger counts are faults (no allocation is sized by a forged count). */
size_t tt_cr_count(tt_cr *r, size_t min_bytes);
/* A string written by tt_cw_bytes, pointing into the buffer (which holds
 * its NUL); NULL for "no string" (and on a fault: check bad). */
const char *tt_cr_bytes(tt_cr *r, size_t *len);
/* The same, as text without NULs: a NUL inside is a fault. */
const char *tt_cr_str(tt_cr *r);

/* ---- whole files ---------------------------------------------------------- */

/* Where an entry's database lives, so that clean-up can tell an entry of a
 * file that is gone (a temporary copy) from one still in use. */
typedef struct tt_cache_source {
  bool file;          /* a file or folder (else a server) */
  const char *path;   /* its resolved path */
  uint64_t dev, ino;
} tt_cache_source;

/* The source of db's target (path borrowed from it). */
void tt_cache_source_of(tt_db *db, tt_cache_source *out);

/* Starts b with magic (a line such as "tabletalk-catalog 1\n") and the
 * source. */
void tt_cache_begin(tt_buf *b, const char *magic, const tt_cache_source *src);
/* Ends b with its checksum and writes it to path atomically (a temporary
 * file beside it, then rename; folders made as needed). false when it
 * could not be written (the cache is then only slower). */
bool tt_cache_finish(tt_buf *b, const char *path);
/* Reads path whole (at most max bytes) when it starts with magic and its
 * checksum holds; *r reads what follows the source, into *src (pointing
 * into the returned buffer, which the caller frees). NULL otherwise. */
char *tt_cache_read(const char *path, const char *magic, size_t max, tt_cr *r,
                    tt_cache_source *src);
/* The checksum that ends a file, of its n bytes before it. */
uint64_t tt_cache_sum(const void *p, size_t n);
/* Marks path used now (its modification time), for clean-up by age. */
void tt_cache_touch(const char *path);

/* ---- the catalog's entry (catalog_cache.c) ---------------------------------- */

/* Writes cat under stamp to path; false when it could not be written. */
bool tt_catalog_cache_save(const char *path, const tt_cache_source *src,
                           const tt_catalog_stamp *stamp, const tt_catalog *cat);
/* The catalog in path when it was saved for stamp's identity and schema
 * (each table keeps the data stamp it was read under); NULL when there is
 * none, or another, or the file is damaged. */
tt_catalog *tt_catalog_cache_load(const char *path, const tt_catalog_stamp *stamp);

/* ---- where a loaded schema's own entries go (load.c sets it) ----------------- */

/* The cache folder, the catalog's identity (tt_catalog_stamp) and the
 * database's source, kept by the schema so that entries made later (the
 * description vectors) are keyed and cleaned up like the catalog's. */
void tt_schema_set_cache_key(tt_schema *s, const char *cache_dir, const char *identity,
                             const tt_cache_source *src);
/* false when the schema was not loaded through a cache folder. */
bool tt_schema_cache_key(const tt_schema *s, const char **cache_dir, const char **identity,
                         tt_cache_source *src);

#endif
