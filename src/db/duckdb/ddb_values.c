/* ddb_values.c — DuckDB's result columns and values as tabletalk's: the
 * columns' names and types (DECIMAL(w,s), ENUM's dictionary), and each
 * row read from DuckDB's vectors into tt_values: integers, reals, text and
 * blobs as such; DECIMAL as a real when the value has at most 15 digits
 * (else its exact text); dates, times and timestamps as ISO text; ENUM as
 * its text. Other types (lists, structs, maps, UUID, intervals...) never
 * reach here: ddb_run.c has DuckDB cast them to VARCHAR first
 * (tt_ddb_type_direct says which). */
#include "db/duckdb/ddb.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Whether values of type t are read from the vector directly. */
bool tt_ddb_type_direct(ddb_type t) {
  switch (t) {
  case DDB_TYPE_BOOLEAN: case DDB_TYPE_TINYINT: case DDB_TYPE_SMALLINT: case DDB_TYPE_INTEGER:
  case DDB_TYPE_BIGINT: case DDB_TYPE_UTINYINT: case DDB_TYPE_USMALLINT:
  case DDB_TYPE_UINTEGER: case DDB_TYPE_UBIGINT: case DDB_TYPE_FLOAT: case DDB_TYPE_DOUBLE:
  case DDB_TYPE_HUGEINT: case DDB_TYPE_UHUGEINT: case DDB_TYPE_VARCHAR: case DDB_TYPE_BLOB:
  case DDB_TYPE_DECIMAL: case DDB_TYPE_DATE: case DDB_TYPE_TIME: case DDB_TYPE_TIMESTAMP:
  case DDB_TYPE_TIMESTAMP_S: case DDB_TYPE_TIMESTAMP_MS: case DDB_TYPE_TIMESTAMP_NS:
  case DDB_TYPE_TIMESTAMP_TZ: case DDB_TYPE_ENUM: case DDB_TYPE_SQLNULL:
    return true;
  default:
    return false;
  }
}

/* ---- columns ------------------------------------------------------------------- */

static const char *tt_ddb_type_name(ddb_type t) {
  switch (t) {
  case DDB_TYPE_BOOLEAN: return "BOOLEAN";
  case DDB_TYPE_TINYINT: return "TINYINT";
  case DDB_TYPE_SMALLINT: return "SMALLINT";
  case DDB_TYPE_INTEGER: return "INTEGER";
  case DDB_TYPE_BIGINT: return "BIGINT";
  case DDB_TYPE_UTINYINT: return "UTINYINT";
  case DDB_TYPE_USMALLINT: return "USMALLINT";
  case DDB_TYPE_UINTEGER: return "UINTEGER";
  case DDB_TYPE_UBIGINT: return "UBIGINT";
  case DDB_TYPE_FLOAT: return "FLOAT";
  case DDB_TYPE_DOUBLE: return "DOUBLE";
  case DDB_TYPE_HUGEINT: return "HUGEINT";
  case DDB_TYPE_UHUGEINT: return "UHUGEINT";
  case DDB_TYPE_VARCHAR: return "VARCHAR";
  case DDB_TYPE_BLOB: return "BLOB";
  case DDB_TYPE_DATE: return "DATE";
  case DDB_TYPE_TIME: return "TIME";
  case DDB_TYPE_TIMESTAMP: return "TIMESTAMP";
  case DDB_TYPE_TIMESTAMP_S: return "TIMESTAMP_S";
  case DDB_TYPE_TIMESTAMP_MS: return "TIMESTAMP_MS";
  case DDB_TYPE_TIMESTAMP_NS: return "TIMESTAMP_NS";
  case DDB_TYPE_TIMESTAMP_TZ: return "TIMESTAMP WITH TIME ZONE";
  case DDB_TYPE_ENUM: return "ENUM";
  case DDB_TYPE_SQLNULL: return "NULL";
  default: return "";
  }
}

void tt_ddb_cols_read(tt_ddb_cols *run, const tt_ddb_api *api, ddb_result *res, tt_arena *a,
                      const char ***names, const char ***decltypes) {
  size_t n = (size_t)api->column_count(res);
  run->api = api;
  run->n = n;
  *names = tt_arena_alloc(a, sizeof(char *) * (n ? n : 1));
  *decltypes = tt_arena_alloc(a, sizeof(char *) * (n ? n : 1));
  run->types = tt_xcalloc(n ? n : 1, sizeof *run->types);
  run->inner = tt_xcalloc(n ? n : 1, sizeof *run->inner);
  run->width = tt_xcalloc(n ? n : 1, 1);
  run->scale = tt_xcalloc(n ? n : 1, 1);
  run->enums = tt_xcalloc(n ? n : 1, sizeof *run->enums);
  run->nenums = tt_xcalloc(n ? n : 1, sizeof *run->nenums);
  run->row = tt_xcalloc(n ? n : 1, sizeof *run->row);
  run->text = tt_xcalloc(n ? n : 1, sizeof *run->text);
  for (size_t i = 0; i < n; i++) {
    const char *name = api->column_name(res, i);
    (*names)[i] = tt_db_shown_name(a, name ? name : "");
    ddb_logical_type lt = api->column_logical_type(res, i);
    ddb_type t = api->get_type_id(lt);
    run->types[i] = t;
    const char *tn = tt_ddb_type_name(t);
    if (t == DDB_TYPE_DECIMAL) {
      run->width[i] = api->decimal_width(lt);
      run->scale[i] = api->decimal_scale(lt);
      run->inner[i] = api->decimal_internal_type(lt);
      char buf[32];
      snprintf(buf, sizeof buf, "DECIMAL(%u,%u)", run->width[i], run->scale[i]);
      tn = buf;
      (*decltypes)[i] = tt_arena_strdup(a, tn);
    } else {
      if (t == DDB_TYPE_ENUM) {
        run->inner[i] = api->enum_internal_type(lt);
        uint32_t k = api->enum_dictionary_size(lt);
        run->nenums[i] = k;
        run->enums[i] = tt_arena_alloc(a, sizeof(char *) * (k ? k : 1));
        for (uint32_t j = 0; j < k; j++) {
          char *v = api->enum_dictionary_value(lt, j);
          run->enums[i][j] = tt_arena_strdup(a, v ? v : "");
          if (v) api->free(v);
        }
      }
      (*decltypes)[i] = tt_arena_strdup(a, *tn ? tn : "VARCHAR");
    }
    api->destroy_logical_type(&lt);
  }
}

/* ---- values -------------------------------------------------------------------- */

static int64_t tt_ddb_pow10(unsigned k) {
  int64_t p = 1;
  while (k--) p *= 10;
  return p;
}

/* An exact decimal's text: v / 10^scale. */
static void tt_ddb_put_decimal(tt_buf *b, __int128 v, unsigned scale) {
  char digits[64];
  int n = 0;
  bool neg = v < 0;
  unsigned __int128 u = neg ? (unsigned __int128)(-(v + 1)) + 1 : (unsigned __int128)v;
  do {
    digits[n++] = (char)('0' + (int)(u % 10));
    u /= 10;
  } while (u && n < 60);
  while (n <= (int)scale) digits[n++] = '0';
  if (neg) tt_buf_putc(b, '-');
  for (int i = n - 1; i >= 0; i--) {
    tt_buf_putc(b, digits[i]);
    if (i == (int)scale && scale) tt_buf_putc(b, '.');
  }
}

static void tt_ddb_text_value(tt_value *v, tt_buf *b) {
  v->type = TT_VAL_TEXT;
  v->u.s = tt_buf_cstr(b);
  v->len = b->len;
}

static void tt_ddb_put_timestamp(const tt_ddb_cols *run, tt_buf *b, int64_t micros) {
  ddb_timestamp_struct s = run->api->from_timestamp((ddb_timestamp){micros});
  tt_buf_printf(b, "%04d-%02d-%02d %02d:%02d:%02d", (int)s.date.year, s.date.month, s.date.day,
                s.time.hour, s.time.min, s.time.sec);
  if (s.time.micros) tt_buf_printf(b, ".%06d", (int)s.time.micros);
}

static uint64_t tt_ddb_index_of(const void *data, ddb_type inner, ddb_idx r) {
  switch (inner) {
  case DDB_TYPE_UTINYINT: return ((const uint8_t *)data)[r];
  case DDB_TYPE_USMALLINT: return ((const uint16_t *)data)[r];
  default: return ((const uint32_t *)data)[r];
  }
}

static __int128 tt_ddb_decimal_raw(const void *data, ddb_type inner, ddb_idx r) {
  switch (inner) {
  case DDB_TYPE_SMALLINT: return ((const int16_t *)data)[r];
  case DDB_TYPE_INTEGER: return ((const int32_t *)data)[r];
  case DDB_TYPE_BIGINT: return ((const int64_t *)data)[r];
  default: {
    const ddb_hugeint *h = &((const ddb_hugeint *)data)[r];
    return (__int128)(((unsigned __int128)(uint64_t)h->upper << 64) | h->lower);
  }
  }
}

/* Column c of row r of the current chunk into run->row[c]. */
static void tt_ddb_value(tt_ddb_cols *run, ddb_data_chunk chunk, size_t c, ddb_idx r) {
  const tt_ddb_api *api = run->api;
  ddb_vector vec = api->data_chunk_get_vector(chunk, c);
  const void *data = api->vector_get_data(vec);
  const uint64_t *valid = api->vector_get_validity(vec);
  tt_value *v = &run->row[c];
  *v = (tt_value){.type = TT_VAL_NULL};
  if ((valid && !((valid[r / 64] >> (r % 64)) & 1)) || !data) return;
  tt_buf *b = &run->text[c];
  tt_buf_reset(b);
  switch (run->types[c]) {
  case DDB_TYPE_BOOLEAN: v->type = TT_VAL_INT; v->u.i = ((const bool *)data)[r]; break;
  case DDB_TYPE_TINYINT: v->type = TT_VAL_INT; v->u.i = ((const int8_t *)data)[r]; break;
  case DDB_TYPE_SMALLINT: v->type = TT_VAL_INT; v->u.i = ((const int16_t *)data)[r]; break;
  case DDB_TYPE_INTEGER: v->type = TT_VAL_INT; v->u.i = ((const int32_t *)data)[r]; break;
  case DDB_TYPE_BIGINT: v->type = TT_VAL_INT; v->u.i = ((const int64_t *)data)[r]; break;
  case DDB_TYPE_UTINYINT: v->type = TT_VAL_INT; v->u.i = ((const uint8_t *)data)[r]; break;
  case DDB_TYPE_USMALLINT: v->type = TT_VAL_INT; v->u.i = ((const uint16_t *)data)[r]; break;
  case DDB_TYPE_UINTEGER: v->type = TT_VAL_INT; v->u.i = ((const uint32_t *)data)[r]; break;
  case DDB_TYPE_UBIGINT: {
    uint64_t u = ((const uint64_t *)data)[r];
    if (u <= (uint64_t)INT64_MAX) {
      v->type = TT_VAL_INT;
      v->u.i = (int64_t)u;
    } else {
      tt_buf_printf(b, "%llu", (unsigned long long)u);
      tt_ddb_text_value(v, b);
    }
    break;
  }
  case DDB_TYPE_FLOAT: v->type = TT_VAL_REAL; v->u.r = ((const float *)data)[r]; break;
  case DDB_TYPE_DOUBLE: v->type = TT_VAL_REAL; v->u.r = ((const double *)data)[r]; break;
  case DDB_TYPE_HUGEINT:
  case DDB_TYPE_UHUGEINT: {
    __int128 x = tt_ddb_decimal_raw(data, DDB_TYPE_HUGEINT, r);
    if (run->types[c] == DDB_TYPE_HUGEINT && x >= INT64_MIN && x <= INT64_MAX) {
      v->type = TT_VAL_INT;
      v->u.i = (int64_t)x;
    } else {
      tt_ddb_put_decimal(b, x, 0);
      tt_ddb_text_value(v, b);
    }
    break;
  }
  case DDB_TYPE_DECIMAL: {
    __int128 x = tt_ddb_decimal_raw(data, run->inner[c], r);
    /* at most 15 significant digits: a double holds it exactly as written */
    if (x > -(__int128)1000000000000000LL && x < (__int128)1000000000000000LL) {
      v->type = TT_VAL_REAL;
      v->u.r = (double)(int64_t)x / (double)tt_ddb_pow10(run->scale[c]);
      if (run->scale[c] == 0) {
        v->type = TT_VAL_INT;
        v->u.i = (int64_t)x;
      }
    } else {
      tt_ddb_put_decimal(b, x, run->scale[c]);
      tt_ddb_text_value(v, b);
    }
    break;
  }
  case DDB_TYPE_VARCHAR:
  case DDB_TYPE_BLOB: {
    const ddb_string *s = &((const ddb_string *)data)[r];
    uint32_t len = s->value.inlined.length;
    const char *p = len <= 12 ? s->value.inlined.inlined : s->value.pointer.ptr;
    tt_buf_append(b, p, len);
    tt_ddb_text_value(v, b);
    if (run->types[c] == DDB_TYPE_BLOB) v->type = TT_VAL_BLOB;
    break;
  }
  case DDB_TYPE_DATE: {
    ddb_date_struct d = api->from_date((ddb_date){((const int32_t *)data)[r]});
    tt_buf_printf(b, "%04d-%02d-%02d", (int)d.year, d.month, d.day);
    tt_ddb_text_value(v, b);
    break;
  }
  case DDB_TYPE_TIME: {
    ddb_time_struct t = api->from_time((ddb_time){((const int64_t *)data)[r]});
    tt_buf_printf(b, "%02d:%02d:%02d", t.hour, t.min, t.sec);
    if (t.micros) tt_buf_printf(b, ".%06d", (int)t.micros);
    tt_ddb_text_value(v, b);
    break;
  }
  case DDB_TYPE_TIMESTAMP:
  case DDB_TYPE_TIMESTAMP_TZ:
  case DDB_TYPE_TIMESTAMP_S:
  case DDB_TYPE_TIMESTAMP_MS:
  case DDB_TYPE_TIMESTAMP_NS: {
    int64_t x = ((const int64_t *)data)[r];
    if (run->types[c] == DDB_TYPE_TIMESTAMP_S) x *= 1000000;
    else if (run->types[c] == DDB_TYPE_TIMESTAMP_MS) x *= 1000;
    else if (run->types[c] == DDB_TYPE_TIMESTAMP_NS) x /= 1000;
    tt_ddb_put_timestamp(run, b, x);
    if (run->types[c] == DDB_TYPE_TIMESTAMP_TZ) tt_buf_puts(b, "+00");
    tt_ddb_text_value(v, b);
    break;
  }
  case DDB_TYPE_ENUM: {
    uint64_t k = tt_ddb_index_of(data, run->inner[c], r);
    tt_buf_puts(b, k < run->nenums[c] ? run->enums[c][k] : "");
    tt_ddb_text_value(v, b);
    break;
  }
  default: break; /* SQLNULL; other types were cast to VARCHAR */
  }
}

void tt_ddb_cols_row(tt_ddb_cols *cols, ddb_data_chunk chunk, ddb_idx r) {
  for (size_t c = 0; c < cols->n; c++) tt_ddb_value(cols, chunk, c, r);
}

void tt_ddb_cols_free(tt_ddb_cols *run) {
  for (size_t i = 0; run->text && i < run->n; i++) tt_buf_free(&run->text[i]);
  free(run->text);
  free(run->row);
  free(run->types);
  free(run->inner);
  free(run->width);
  free(run->scale);
  free(run->enums);
  free(run->nenums);
  memset(run, 0, sizeof *run);
}
