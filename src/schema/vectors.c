/* vectors.c — the tables' description vectors for an embedding score in
 * the ranking (rank.c): the text each table is embedded by (its name, its
 * description, its columns' names and descriptions: never a value, so
 * private mode may send it), and the vectors kept between runs in
 * <cache>/vectors/, one file per database and embedding model, keyed by
 * the catalog's identity and the model's, each vector with a hash of the
 * text it was made from (a table whose description changed, in the
 * database or the knowledge file, is embedded again; the others are not).
 * The numbers are stored as little-endian 32-bit floats; the file is
 * written atomically and read as hostile input (cache_file.c), and gc
 * removes it with the database's other entries (cache_gc.c). The schema
 * layer knows no model: the layer above embeds the texts it is given. */
#include "schema/cache_file.h"

#include <stdlib.h>
#include <string.h>

#define TT_VECTORS_FILE_MAX ((size_t)256 << 20)
#define TT_EMBED_TEXT_COLUMNS 80 /* columns named in a table's text */

struct tt_schema_vectors {
  const tt_schema *s;
  char *model, *path;
  size_t n, dim, cached;
  float *v;        /* n rows of dim (allocated with the first vector) */
  bool *have;
  uint64_t *hash;  /* of each table's text */
  bool dirty;
};

void tt_schema_embed_text(const tt_schema *s, size_t i, tt_buf *out) {
  const tt_table_info *t = tt_schema_card(s, i)->table;
  tt_buf_printf(out, "%s %s", t->is_view ? "View" : "Table", t->name);
  if (t->description && *t->description) tt_buf_printf(out, ": %s", t->description);
  tt_buf_puts(out, ". Columns: ");
  for (size_t c = 0; c < t->ncols && c < TT_EMBED_TEXT_COLUMNS; c++) {
    if (c) tt_buf_puts(out, ", ");
    tt_buf_puts(out, t->cols[c].name);
    if (t->cols[c].description && *t->cols[c].description)
      tt_buf_printf(out, " (%s)", t->cols[c].description);
  }
  if (t->ncols > TT_EMBED_TEXT_COLUMNS) tt_buf_printf(out, " and %zu more", t->ncols - TT_EMBED_TEXT_COLUMNS);
  tt_buf_putc(out, '.');
}

static char *tt_vectors_identity(const char *catalog_identity, const char *model) {
  return tt_xasprintf("%svectors %s\n", catalog_identity, model);
}

char *tt_schema_vectors_path(const tt_schema *s, const char *model) {
  const char *dir, *id;
  tt_cache_source src;
  if (!tt_schema_cache_key(s, &dir, &id, &src)) return NULL;
  char *key = tt_vectors_identity(id, model);
  char *path = tt_cache_entry_path(dir, "vectors", key, ".vec");
  free(key);
  return path;
}

static void tt_put_f32(tt_buf *b, float f) {
  uint32_t u;
  memcpy(&u, &f, sizeof u);
  unsigned char x[4];
  for (int i = 0; i < 4; i++) x[i] = (unsigned char)(u >> (8 * i));
  tt_buf_append(b, (const char *)x, 4);
}

static float tt_get_f32(const unsigned char *p) {
  uint32_t u = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
  float f;
  memcpy(&f, &u, sizeof f);
  return f;
}

/* The vectors in the cache file whose table and text are this schema's. */
static void tt_vectors_read(tt_schema_vectors *v) {
  tt_cr r;
  tt_cache_source src;
  char *data = tt_cache_read(v->path, TT_VECTORS_MAGIC, TT_VECTORS_FILE_MAX, &r, &src);
  if (!data) return;
  const char *dir, *id;
  tt_cache_source mine;
  tt_schema_cache_key(v->s, &dir, &id, &mine);
  char *want = tt_vectors_identity(id, v->model);
  const char *key = tt_cr_str(&r);
  size_t dim = (size_t)tt_cr_u64(&r);
  size_t n = tt_cr_count(&r, 20);
  if (r.bad || !key || strcmp(key, want) != 0 || dim == 0 || dim > (1u << 16)) n = 0;
  for (size_t k = 0; k < n && !r.bad; k++) {
    const char *name = tt_cr_str(&r);
    uint64_t h = tt_cr_u64(&r);
    size_t len;
    const char *blob = tt_cr_bytes(&r, &len);
    if (r.bad || !name || !blob || len != dim * 4) break;
    const tt_card *c = tt_schema_find(v->s, name);
    if (!c) continue;
    size_t i = (size_t)(c - tt_schema_card(v->s, 0));
    if (v->have[i] || v->hash[i] != h) continue;
    if (!v->v) {
      v->dim = dim;
      v->v = tt_xcalloc(v->n * dim, sizeof *v->v);
    }
    for (size_t d = 0; d < dim; d++) v->v[i * dim + d] = tt_get_f32((const unsigned char *)blob + 4 * d);
    v->have[i] = true;
    v->cached++;
  }
  free(want);
  free(data);
  if (v->cached) tt_cache_touch(v->path);
}

tt_schema_vectors *tt_schema_vectors_open(const tt_schema *s, const char *model) {
  tt_schema_vectors *v = tt_xcalloc(1, sizeof *v);
  v->s = s;
  v->model = tt_xstrdup(model ? model : "");
  v->n = tt_schema_count(s);
  v->have = tt_xcalloc(v->n ? v->n : 1, sizeof *v->have);
  v->hash = tt_xcalloc(v->n ? v->n : 1, sizeof *v->hash);
  tt_buf b = TT_BUF_INIT;
  for (size_t i = 0; i < v->n; i++) {
    tt_buf_reset(&b);
    tt_schema_embed_text(s, i, &b);
    v->hash[i] = tt_cache_sum(b.data, b.len);
  }
  tt_buf_free(&b);
  v->path = tt_schema_vectors_path(s, v->model);
  if (v->path) tt_vectors_read(v);
  return v;
}

void tt_schema_vectors_free(tt_schema_vectors *v) {
  if (!v) return;
  free(v->model);
  free(v->path);
  free(v->v);
  free(v->have);
  free(v->hash);
  free(v);
}

size_t tt_schema_vectors_missing(const tt_schema_vectors *v, size_t *out) {
  size_t k = 0;
  for (size_t i = 0; i < v->n; i++)
    if (!v->have[i]) out[k++] = i;
  return k;
}

bool tt_schema_vectors_set(tt_schema_vectors *v, size_t i, const float *vec, size_t dim) {
  if (i >= v->n || dim == 0 || (v->dim && dim != v->dim)) return false;
  if (!v->v) {
    v->dim = dim;
    v->v = tt_xcalloc(v->n * dim, sizeof *v->v);
  }
  memcpy(v->v + i * dim, vec, dim * sizeof *vec);
  v->have[i] = true;
  v->dirty = true;
  return true;
}

bool tt_schema_vectors_save(tt_schema_vectors *v) {
  const char *dir, *id;
  tt_cache_source src;
  if (!v->dirty || !v->path || !tt_schema_cache_key(v->s, &dir, &id, &src)) return false;
  tt_buf b = TT_BUF_INIT;
  tt_cache_begin(&b, TT_VECTORS_MAGIC, &src);
  char *key = tt_vectors_identity(id, v->model);
  tt_cw_str(&b, key);
  free(key);
  tt_cw_u64(&b, v->dim);
  size_t n = 0;
  for (size_t i = 0; i < v->n; i++) n += v->have[i];
  tt_cw_u64(&b, n);
  tt_buf blob = TT_BUF_INIT;
  for (size_t i = 0; i < v->n; i++) {
    if (!v->have[i]) continue;
    tt_cw_str(&b, tt_schema_card(v->s, i)->table->name);
    tt_cw_u64(&b, v->hash[i]);
    tt_buf_reset(&blob);
    for (size_t d = 0; d < v->dim; d++) tt_put_f32(&blob, v->v[i * v->dim + d]);
    tt_cw_bytes(&b, blob.data, blob.len);
  }
  tt_buf_free(&blob);
  bool ok = tt_cache_finish(&b, v->path);
  tt_buf_free(&b);
  if (ok) v->dirty = false;
  return ok;
}

size_t tt_schema_vectors_dim(const tt_schema_vectors *v) { return v ? v->dim : 0; }

const float *tt_schema_vectors_get(const tt_schema_vectors *v, size_t i) {
  return v && i < v->n && v->have[i] ? v->v + i * v->dim : NULL;
}

size_t tt_schema_vectors_cached(const tt_schema_vectors *v) { return v ? v->cached : 0; }
