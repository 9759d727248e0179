/* values_cache.c — keeps the value index between runs, one file per
 * database under <cache>/values/, so that only the first question pays
 * for reading the values. The file is keyed like the catalog's
 * (tt_db_catalog_stamp: the database's identity and schema, and the
 * index's bounds) and holds, besides the sorted entries (already folded:
 * a warm start reads them as they lie, without sorting or copying), each
 * table's state: read under which data stamp, or not read yet.
 *
 * Tables are read one at a time in schema order, each within its own part
 * of the bounds (values.c), so an index read in parts, or with some tables
 * read again after their data changed, equals one read at once. A deadline
 * stops the reading between tables (the rest stays pending, to be read in
 * the background); refresh reads again the tables read before the data
 * last changed. Written atomically, read as hostile input (cache_file.c):
 * anything malformed and the index is read from the database again. The
 * user's database is only ever read. */
#include "schema/cache_file.h"
#include "schema/values_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define TT_VALUES_FILE_MAX ((size_t)512 << 20)
/* databases this large get a progress line on a terminal while indexing */
#define TT_VALUES_PROGRESS_BYTES (64LL * 1024 * 1024)

/* Each table's state in the index. */
typedef struct tt_vtable {
  tt_probe_state state; /* NONE: nothing to index; PENDING: not read; DONE: read */
  uint64_t stamp;       /* DONE: the data hash it was read under */
} tt_vtable;

/* The index's key: the catalog's identity and the bounds it was read with. */
static char *tt_values_identity(const tt_catalog_stamp *stamp) {
  tt_values_opts o = tt_values_default_opts();
  return tt_xasprintf("%svalues %ld %zu %ld %ld\n", stamp->identity, o.max_per_column,
                      o.max_total, o.max_len, o.scan_rows);
}

char *tt_values_cache_path(const char *cache_dir, const tt_catalog_stamp *stamp) {
  char *id = tt_values_identity(stamp);
  char *path = tt_cache_entry_path(cache_dir, "values", id, ".idx");
  free(id);
  return path;
}

static void tt_values_save(const char *path, tt_db *db, const tt_catalog_stamp *stamp,
                           const tt_catalog *cat, const tt_vtable *vt, const tt_values *v) {
  tt_buf b = TT_BUF_INIT;
  tt_cache_source src;
  tt_cache_source_of(db, &src);
  tt_cache_begin(&b, TT_VALUES_MAGIC, &src);
  char *id = tt_values_identity(stamp);
  tt_cw_str(&b, id);
  free(id);
  tt_cw_str(&b, stamp->schema);
  tt_cw_u64(&b, cat->ntables);
  for (size_t i = 0; i < cat->ntables; i++) {
    tt_cw_str(&b, cat->tables[i].name);
    tt_cw_u8(&b, (unsigned)vt[i].state);
    tt_cw_u64(&b, vt[i].stamp);
  }
  size_t n = tt_values_count(v);
  tt_cw_u64(&b, n);
  for (size_t i = 0; i < n; i++) {
    const char *t, *c, *val;
    tt_values_entry(v, i, &t, &c, &val);
    tt_cw_str(&b, tt_values_key(v, i));
    tt_cw_u64(&b, tt_values_ord(v, i));
    tt_cw_str(&b, val);
  }
  tt_cache_finish(&b, path);
  tt_buf_free(&b);
}

/* The names of column ord of cat (copied into a), or false when ord names
 * no text column of an indexed table. */
static bool tt_ord_names(const tt_catalog *cat, uint64_t ord, const char **table,
                         const char **column) {
  size_t t = (size_t)(ord >> 32), c = (size_t)(ord & 0xffffffffu);
  if (t >= cat->ntables || c >= cat->tables[t].ncols) return false;
  *table = cat->tables[t].name;
  *column = cat->tables[t].cols[c].name;
  return true;
}

/* The index in path when it was saved for this database as its schema is
 * now, its tables' states in vt; NULL otherwise. */
static tt_values *tt_values_load(const char *path, const tt_catalog_stamp *stamp,
                                 const tt_catalog *cat, tt_vtable *vt) {
  tt_cr r;
  tt_cache_source src;
  char *data = tt_cache_read(path, TT_VALUES_MAGIC, TT_VALUES_FILE_MAX, &r, &src);
  if (!data) return NULL;
  char *id = tt_values_identity(stamp);
  const char *fid = tt_cr_str(&r), *schema = tt_cr_str(&r);
  bool same = fid && schema && strcmp(fid, id) == 0 && strcmp(schema, stamp->schema) == 0;
  free(id);
  size_t nt = same ? tt_cr_count(&r, 18) : 0;
  if (!same || r.bad || nt != cat->ntables) {
    free(data);
    return NULL;
  }
  for (size_t i = 0; i < nt && !r.bad; i++) {
    const char *name = tt_cr_str(&r);
    unsigned state = tt_cr_u8(&r);
    vt[i].stamp = tt_cr_u64(&r);
    if (!name || strcmp(name, cat->tables[i].name) != 0 || state > TT_PROBE_DONE) r.bad = true;
    vt[i].state = (tt_probe_state)state;
  }
  tt_values *v = tt_values_new();
  tt_values_adopt(v, data); /* the entries point into it */
  /* the tables' and columns' names, copied once each from the catalog */
  const char **tnames = tt_xcalloc(nt ? nt : 1, sizeof *tnames);
  const char ***cnames = tt_xcalloc(nt ? nt : 1, sizeof *cnames);
  size_t n = tt_cr_count(&r, 25);
  tt_values_reserve(v, n);
  for (size_t i = 0; i < n && !r.bad; i++) {
    /* NUL-terminated where they lie (a NUL inside only shortens one) */
    const char *key = tt_cr_bytes(&r, NULL);
    uint64_t ord = tt_cr_u64(&r);
    const char *val = tt_cr_bytes(&r, NULL);
    const char *t, *c;
    if (!key || !val || !tt_ord_names(cat, ord, &t, &c) || vt[ord >> 32].state != TT_PROBE_DONE) {
      r.bad = true;
      break;
    }
    size_t ti = (size_t)(ord >> 32), ci = (size_t)(ord & 0xffffffffu);
    if (!tnames[ti]) {
      tnames[ti] = tt_values_intern(v, t);
      cnames[ti] = tt_xcalloc(cat->tables[ti].ncols, sizeof **cnames);
    }
    if (!cnames[ti][ci]) cnames[ti][ci] = tt_values_intern(v, c);
    tt_values_push(v, key, val, tnames[ti], cnames[ti][ci], ord);
  }
  for (size_t i = 0; i < nt; i++) free(cnames[i]);
  free(cnames);
  free(tnames);
  if (r.bad || r.p != r.end || !tt_values_finish_sorted(v)) {
    tt_values_free(v);
    return NULL;
  }
  return v;
}

tt_values *tt_values_open(tt_db *db, const tt_catalog *cat, const tt_catalog_stamp *stamp,
                          const tt_values_open_opts *o, tt_values_state *st) {
  tt_values_state dummy;
  if (!st) st = &dummy;
  memset(st, 0, sizeof *st);
  size_t nt = cat->ntables;
  tt_vtable *vt = tt_xcalloc(nt ? nt : 1, sizeof *vt);
  char *path = o->cache_dir && *o->cache_dir && stamp ? tt_values_cache_path(o->cache_dir, stamp) : NULL;
  tt_values *old = path ? tt_values_load(path, stamp, cat, vt) : NULL;
  if (old) tt_cache_touch(path);
  else
    for (size_t i = 0; i < nt; i++)
      vt[i] = (tt_vtable){.state = tt_values_indexes(cat, i) ? TT_PROBE_PENDING : TT_PROBE_NONE};
  if (o->cache_only && !old) {
    free(vt);
    free(path);
    return NULL;
  }
  uint64_t h = stamp ? tt_catalog_stamp_data_hash(stamp) : 0;
  bool *read = tt_xcalloc(nt ? nt : 1, sizeof *read); /* to read now; then: read */
  size_t nread = 0;
  for (size_t i = 0; i < nt; i++) {
    read[i] = vt[i].state == TT_PROBE_PENDING ||
              (o->refresh && vt[i].state == TT_PROBE_DONE && vt[i].stamp != h);
    nread += read[i];
  }
  st->cached = old != NULL;
  tt_values *v = old;
  if (nread && !o->cache_only) {
    struct stat sb;
    const char *file = tt_db_get_target(db)->path;
    bool progress = o->progress && !tt_db_get_target(db)->uri && stat(file, &sb) == 0 &&
                    sb.st_size >= TT_VALUES_PROGRESS_BYTES;
    double t0 = tt_now_ms();
    if (progress) fprintf(stderr, "tabletalk: indexing the values of %s (once; cached)...", file);
    v = tt_values_new();
    bool changed = false;
    for (size_t i = 0; i < nt; i++) {
      if (!read[i]) continue;
      /* past the deadline or a cancel, each of the rest stops at once */
      read[i] = tt_values_read_table(db, cat, i, NULL, o->deadline_ms, o->cancel, v);
      if (read[i]) {
        vt[i] = (tt_vtable){.state = TT_PROBE_DONE, .stamp = h};
        changed = true;
      }
    }
    /* what was not read again comes from the old index */
    for (size_t i = 0; old && i < tt_values_count(old); i++) {
      size_t t = (size_t)(tt_values_ord(old, i) >> 32);
      if (t < nt && read[t]) continue;
      const char *tn, *cn, *val;
      tt_values_entry(old, i, &tn, &cn, &val);
      tt_values_add_copy(v, tt_values_key(old, i), val, tn, cn, tt_values_ord(old, i));
    }
    tt_values_finish(v);
    if (progress) fprintf(stderr, " %zu values in %.1f s\n", tt_values_count(v), (tt_now_ms() - t0) / 1000.0);
    tt_values_free(old);
    st->cached = false;
    if (changed && path) tt_values_save(path, db, stamp, cat, vt, v);
  }
  for (size_t i = 0; i < nt; i++) {
    st->pending += vt[i].state == TT_PROBE_PENDING;
    st->outdated += vt[i].state == TT_PROBE_DONE && vt[i].stamp != h;
  }
  if (!v) {
    v = tt_values_new();
    tt_values_finish(v);
  }
  free(read);
  free(vt);
  free(path);
  return v;
}
