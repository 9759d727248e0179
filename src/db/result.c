/* result.c — result sets: building them from an engine's rows under the
 * row, byte and cell caps (the same rules for every engine), freeing them,
 * rendering values as text, and the JSON form shared by `tabletalk sql
 * --format json` and the MCP server. */
#include "db/db_internal.h"
#include "db/engine.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void tt_result_free(tt_result *r) {
  if (!r) return;
  free(r->cells);
  tt_arena_free(r->arena);
  free(r);
}

/* Reals as SQLite's own text conversion does it: up to 15 significant
 * digits, and always recognisable as a real ("3.0", not "3"). */
static void tt_real_to_text(tt_buf *out, double r) {
  if (isnan(r)) {
    tt_buf_puts(out, "NaN");
    return;
  }
  if (isinf(r)) {
    tt_buf_puts(out, r > 0 ? "Inf" : "-Inf");
    return;
  }
  char tmp[TT_FMT_REAL_MAX];
  tt_buf_append(out, tmp, tt_fmt_real15(tmp, r)); /* %.15g, without printf */
  for (const char *p = tmp; *p; p++)
    if (*p == '.' || *p == 'e' || *p == 'n' || *p == 'i') return;
  tt_buf_puts(out, ".0");
}

bool tt_value_equal(const tt_value *a, const tt_value *b) {
  if (a->type != b->type || a->cut != b->cut) return false;
  switch (a->type) {
  case TT_VAL_NULL: return true;
  case TT_VAL_INT: return a->u.i == b->u.i;
  case TT_VAL_REAL: return a->u.r == b->u.r;
  default: return a->len == b->len && memcmp(a->u.s, b->u.s, a->len) == 0;
  }
}

void tt_value_put_cut_mark(tt_buf *out, const tt_value *v) {
  if (!v->cut) return;
  tt_buf_puts(out, "…[cut ");
  tt_buf_put_grouped(out, (long long)v->cut);
  tt_buf_puts(out, " bytes]");
}

void tt_value_to_text(tt_buf *out, const tt_value *v) {
  switch (v->type) {
  case TT_VAL_NULL: tt_buf_puts(out, "NULL"); break;
  case TT_VAL_INT: {
    char tmp[TT_FMT_INT_MAX];
    tt_buf_append(out, tmp, tt_fmt_int(tmp, v->u.i));
    break;
  }
  case TT_VAL_REAL: tt_real_to_text(out, v->u.r); break;
  case TT_VAL_TEXT:
    tt_buf_append(out, v->u.s, v->len);
    tt_value_put_cut_mark(out, v);
    break;
  case TT_VAL_BLOB: tt_buf_printf(out, "<blob %zu bytes>", v->len + v->cut); break;
  }
}

/* A blob's bytes as \\x and hex (then the cut mark when it was cut). */
static void tt_hex(tt_buf *out, const tt_value *v) {
  static const char digits[] = "0123456789abcdef";
  tt_buf_puts(out, "\\x");
  const unsigned char *p = (const unsigned char *)v->u.s;
  for (size_t i = 0; i < v->len; i++) {
    tt_buf_putc(out, digits[p[i] >> 4]);
    tt_buf_putc(out, digits[p[i] & 15]);
  }
  tt_value_put_cut_mark(out, v);
}

void tt_value_to_export_text(tt_buf *out, const tt_value *v) {
  if (v->type == TT_VAL_BLOB) tt_hex(out, v);
  else if (v->type != TT_VAL_NULL) tt_value_to_text(out, v);
}

json_t *tt_value_to_json(const tt_value *v, bool blob_hex) {
  if (v->type == TT_VAL_BLOB && blob_hex) {
    tt_buf b = TT_BUF_INIT;
    tt_hex(&b, v);
    json_t *j = tt_json_stringn(b.data, b.len);
    tt_buf_free(&b);
    return j;
  }
  switch (v->type) {
  case TT_VAL_NULL: return json_null();
  case TT_VAL_INT: return json_integer((json_int_t)v->u.i);
  case TT_VAL_REAL:
    if (isfinite(v->u.r)) return json_real(v->u.r);
    return json_null(); /* JSON has no NaN or infinity */
  case TT_VAL_TEXT: {
    if (!v->cut) return tt_json_stringn(v->u.s, v->len);
    tt_buf b = TT_BUF_INIT;
    tt_value_to_text(&b, v);
    json_t *j = tt_json_stringn(b.data, b.len);
    tt_buf_free(&b);
    return j;
  }
  case TT_VAL_BLOB: {
    char tmp[48];
    snprintf(tmp, sizeof tmp, "<blob %zu bytes>", v->len + v->cut);
    return json_string(tmp);
  }
  }
  return json_null();
}

void tt_value_put_json(tt_buf *out, const tt_value *v, bool blob_hex) {
  char tmp[TT_FMT_INT_MAX];
  switch (v->type) {
  case TT_VAL_NULL: tt_buf_append(out, "null", 4); return;
  case TT_VAL_INT: tt_buf_append(out, tmp, tt_fmt_int(tmp, v->u.i)); return;
  case TT_VAL_REAL:
    if (isfinite(v->u.r)) tt_json_put_real(out, v->u.r);
    else tt_buf_append(out, "null", 4);
    return;
  case TT_VAL_TEXT:
  case TT_VAL_BLOB: {
    if (v->type == TT_VAL_TEXT && !v->cut) {
      tt_json_put_string(out, v->u.s, v->len);
      return;
    }
    tt_buf b = TT_BUF_INIT;
    if (v->type == TT_VAL_BLOB && blob_hex) tt_hex(&b, v);
    else tt_value_to_text(&b, v); /* the text and its mark, or <blob N bytes> */
    tt_json_put_string(out, b.data, b.len);
    tt_buf_free(&b);
    return;
  }
  }
}

json_t *tt_result_to_json(const tt_result *r, size_t max_rows, bool blob_hex) {
  json_t *o = json_object();
  json_t *cols = json_array(), *types = json_array(), *rows = json_array();
  size_t ncols = r ? r->ncols : 0, held = r ? r->nrows : 0;
  for (size_t c = 0; c < ncols; c++) {
    json_array_append_new(cols, tt_json_stringn(r->names[c], strlen(r->names[c])));
    json_array_append_new(types, tt_json_stringn(r->decltypes[c], strlen(r->decltypes[c])));
  }
  size_t n = max_rows && max_rows < held ? max_rows : held, cells_cut = 0;
  for (size_t i = 0; i < n; i++) {
    json_t *row = json_array();
    for (size_t c = 0; c < ncols; c++) {
      const tt_value *v = tt_result_cell(r, i, c);
      json_array_append_new(row, tt_value_to_json(v, blob_hex));
      cells_cut += v->cut > 0;
    }
    json_array_append_new(rows, row);
  }
  json_object_set_new(o, "columns", cols);
  json_object_set_new(o, "column_types", types);
  json_object_set_new(o, "rows", rows);
  json_object_set_new(o, "row_count", json_integer((json_int_t)n));
  bool cut = n < held; /* this shape gives fewer rows than the result holds */
  bool more = cut || (r && r->truncated);
  json_object_set_new(o, "truncated", json_boolean(more));
  if (more)
    json_object_set_new(o, "truncated_by", json_string(!cut && r->truncated_by == TT_TRUNC_BYTES
                                                           ? "max_bytes"
                                                           : "max_rows"));
  if (cells_cut) json_object_set_new(o, "cells_cut", json_integer((json_int_t)cells_cut));
  if (r) json_object_set_new(o, "elapsed_ms", json_real(round(r->elapsed_ms * 1000.0) / 1000.0));
  return o;
}

/* ---- rows cut to fit, and the builder: rows under the caps -------------- */

tt_result *tt_result_builder_start(tt_result_builder *b, size_t ncols, const tt_db_opts *limits) {
  tt_result *r = tt_xcalloc(1, sizeof *r);
  r->arena = tt_arena_new();
  r->ncols = ncols;
  r->names = tt_arena_alloc(r->arena, sizeof(char *) * (ncols ? ncols : 1));
  r->decltypes = tt_arena_alloc(r->arena, sizeof(char *) * (ncols ? ncols : 1));
  *b = (tt_result_builder){
      .r = r,
      .cap_rows = limits->max_rows > 0 ? (size_t)limits->max_rows : 0,
      .cap_bytes = limits->max_bytes > 0 ? (size_t)limits->max_bytes : 0,
      .count_cap = limits->count_rows > 0 ? limits->count_rows : 0,
  };
  return r;
}

/* A cap cut the result here: the rows kept are complete up to it. */
static tt_row_fate tt_result_cut(tt_result_builder *b, tt_trunc by) {
  b->r->truncated = true;
  b->r->truncated_by = by;
  if (b->seen >= b->count_cap) return TT_ROW_ENOUGH;
  b->counting = true; /* past the cut, count the rows no longer kept */
  return TT_ROW_COUNTED;
}

tt_row_fate tt_result_builder_row(tt_result_builder *b) {
  b->seen++;
  if (b->counting) return b->seen >= b->count_cap ? TT_ROW_ENOUGH : TT_ROW_COUNTED;
  if (b->r->nrows >= b->cap_rows) return tt_result_cut(b, TT_TRUNC_ROWS);
  return TT_ROW_WEIGH;
}

static bool tt_is_var(const tt_value *v) { return v->type == TT_VAL_TEXT || v->type == TT_VAL_BLOB; }

static int tt_cmp_size(const void *a, const void *b) {
  size_t x = *(const size_t *)a, y = *(const size_t *)b;
  return x < y ? -1 : x > y;
}

size_t tt_row_weight(const tt_value *row, size_t ncols) {
  size_t w = 0;
  for (size_t c = 0; c < ncols; c++)
    w += row[c].type == TT_VAL_INT || row[c].type == TT_VAL_REAL ? 8 : tt_is_var(&row[c]) ? row[c].len : 0;
  return w;
}

/* The most bytes each text or blob cell of row may keep for the row to
 * weigh at most budget: the short cells whole, the room they leave shared
 * evenly by the long ones (SIZE_MAX: the row fits whole). */
static size_t tt_cut_room(const tt_value *row, size_t ncols, size_t budget) {
  size_t *lens = tt_xcalloc(ncols ? ncols : 1, sizeof *lens), k = 0, fixed = 0;
  for (size_t c = 0; c < ncols; c++) {
    if (tt_is_var(&row[c])) lens[k++] = row[c].len;
    else if (row[c].type != TT_VAL_NULL) fixed += 8;
  }
  qsort(lens, k, sizeof *lens, tt_cmp_size);
  size_t left = budget > fixed ? budget - fixed : 0, room = SIZE_MAX;
  for (size_t i = 0; i < k; i++) {
    size_t share = left / (k - i);
    if (lens[i] > share) {
      room = share;
      break;
    }
    left -= lens[i];
  }
  free(lens);
  return room;
}

/* The bytes of text s to keep within room: never half a character. */
static size_t tt_text_keep(const char *s, size_t room) {
  size_t keep = room;
  while (keep > 0 && ((unsigned char)s[keep] & 0xC0) == 0x80) keep--;
  return keep;
}

size_t tt_row_copy_within(tt_value *dst, const tt_value *src, size_t ncols, size_t budget,
                          tt_arena *a) {
  size_t room = tt_row_weight(src, ncols) > budget ? tt_cut_room(src, ncols, budget) : SIZE_MAX;
  size_t cut = 0;
  for (size_t c = 0; c < ncols; c++) {
    dst[c] = src[c];
    dst[c].cut = 0;
    if (!tt_is_var(&src[c])) continue;
    size_t keep = src[c].len;
    if (keep > room) {
      keep = src[c].type == TT_VAL_TEXT ? tt_text_keep(src[c].u.s, room) : room;
      dst[c].cut = src[c].len - keep + src[c].cut;
      cut++;
    }
    dst[c].len = keep;
    dst[c].u.s = tt_arena_memdup(a, src[c].u.s, keep);
  }
  return cut;
}

bool tt_result_builder_add(tt_result_builder *b, const tt_value *row, size_t rb, bool *enough) {
  tt_result *r = b->r;
  *enough = false;
  /* NULL and empty cells weigh nothing in bytes but still cost memory: the
   * number of cells is capped too. A first row alone over the byte cap is
   * kept with its cells cut to fit: bounded output never loses a row. */
  bool cut_cells = r->nrows == 0 && rb > b->cap_bytes;
  if ((!cut_cells && r->bytes + rb > b->cap_bytes) || (r->nrows + 1) * r->ncols > TT_MAX_CELLS) {
    *enough = tt_result_cut(b, TT_TRUNC_BYTES) == TT_ROW_ENOUGH;
    return false;
  }
  if (r->nrows == b->alloc) {
    b->alloc = b->alloc ? b->alloc * 2 : 16;
    r->cells = tt_xrealloc(r->cells, sizeof(tt_value) * b->alloc * (r->ncols ? r->ncols : 1));
  }
  tt_value *cells = r->cells + r->nrows * r->ncols;
  size_t cut = tt_row_copy_within(cells, row, r->ncols, cut_cells ? b->cap_bytes : SIZE_MAX,
                                  r->arena);
  r->cells_cut += cut;
  r->bytes += cut_cells ? tt_row_weight(cells, r->ncols) : rb;
  r->nrows++;
  return true;
}

void tt_result_builder_end(tt_result_builder *b, bool reached_end) {
  b->r->total_rows = b->seen;
  b->r->total_exact = reached_end;
}

tt_result *tt_engine_result(tt_db *db, tt_engine_cursor *ec, double t0, tt_error *err) {
  tt_result_builder b;
  tt_result *r = tt_result_builder_start(&b, ec->ncols, tt_db_limits(db));
  for (size_t c = 0; c < r->ncols; c++) {
    r->names[c] = tt_arena_strdup(r->arena, ec->names[c]);
    r->decltypes[c] = tt_arena_strdup(r->arena, ec->decltypes[c]);
  }
  const tt_value *row;
  size_t rb;
  int rc;
  while ((rc = db->engine->cursor_next(ec, &row, &rb, err)) == 1) {
    tt_row_fate fate = tt_result_builder_row(&b);
    if (fate == TT_ROW_ENOUGH) break;
    if (fate == TT_ROW_COUNTED) continue;
    bool enough; /* the builder copies the borrowed values (cut to fit when they must be) */
    if (!tt_result_builder_add(&b, row, rb, &enough) && enough) break;
  }
  /* counting past the cut is a courtesy: a timeout there keeps the rows */
  bool counted_out = rc < 0 && b.counting && err->kind == TT_ERR_TIMEOUT;
  db->engine->cursor_close(ec);
  if (rc < 0 && !counted_out) {
    tt_result_free(r);
    return NULL;
  }
  tt_error_clear(err);
  tt_result_builder_end(&b, rc == 0 && !counted_out);
  r->repeatable = false; /* another session may change the data at any time */
  r->elapsed_ms = tt_now_ms() - t0;
  return r;
}
