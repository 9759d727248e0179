/* ddb_csv.c — how DuckDB reads a CSV or TSV file for tabletalk, typed by
 * the same engine-neutral sniffer as the SQLite loader (csv_sniff.h), so
 * that no number is ever invented under either engine.
 *
 * The head of the file (the first TT_DDB_CSV_SNIFF_ROWS records, read by
 * DuckDB as VARCHAR: its own parallel reader, its delimiter and header
 * detection, --header/--no-header, a tab for .tsv) goes through the
 * sniffer; --csv-types overrides it. The view then reads every column as
 * VARCHAR (all_varchar, the same null tokens as nullstr) and casts each
 * as the sniffer decided, by the sniffer's own rules written as SQL: a
 * value matching the type's pattern (a number with the column's decimal
 * mark and thousands groups, no leading zero unless overridden; an ISO
 * date, time or date-time) is TRY_CAST, anything else is NULL. A value
 * past the head that is not of its column's type is thus NULL, never an
 * error and never a number. The notes (a decimal comma, values read as
 * NULL, a code kept as text, types decided on the first rows) reach the
 * columns' and the table's data_note (ddb_catalog.c).
 *
 * When DuckDB cannot read the head as VARCHAR, DuckDB's own sniffer types
 * the file, and a value past its sample that does not parse is handled by
 * tt_ddb_csv_demote (the column read as text from the next query on). */
#include "db/duckdb/ddb.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *const tt_ddb_csv_nulls[] = {"", "NA", "N/A", "n/a", "null", "NULL",
                                        "-", "\xe2\x80\x94", "?", NULL};

static void tt_ddb_csv_shape(const tt_ddb_view *v, tt_csv_header header, tt_buf *out);

void tt_ddb_csv_options(const tt_ddb_view *v, tt_csv_header header, tt_buf *out) {
  tt_ddb_csv_shape(v, header, out);
  tt_buf_puts(out, ", nullstr=[");
  for (size_t i = 0; tt_ddb_csv_nulls[i]; i++) {
    if (i) tt_buf_putc(out, ',');
    tt_buf_put_sql_string(out, tt_ddb_csv_nulls[i]);
  }
  tt_buf_puts(out, "]");
  if (v->csv_select) {
    tt_buf_puts(out, ", all_varchar=true");
  } else if (v->ntext_cols) {
    tt_buf_puts(out, ", types={");
    for (size_t i = 0; i < v->ntext_cols; i++) {
      if (i) tt_buf_putc(out, ',');
      tt_buf_put_sql_string(out, v->text_cols[i]);
      tt_buf_puts(out, ":'VARCHAR'");
    }
    tt_buf_putc(out, '}');
  }
}

/* The text between `after` and the next `until` in msg (allocated), or NULL. */
static char *tt_ddb_between(const char *msg, const char *after, char until) {
  const char *p = strstr(msg, after);
  if (!p) return NULL;
  p += strlen(after);
  const char *e = strchr(p, until);
  return e && e > p ? tt_xstrndup(p, (size_t)(e - p)) : NULL;
}

tt_ddb_view *tt_ddb_csv_demote(tt_ddb *dd, const char *msg, char **column) {
  *column = NULL;
  if (!msg || !strstr(msg, "CSV Error")) return NULL;
  char *col = tt_ddb_between(msg, "Error when converting column \"", '"');
  char *file = tt_ddb_between(msg, "file = ", '\n');
  tt_ddb_view *found = NULL;
  for (size_t i = 0; col && file && i < dd->nviews && !found; i++) {
    tt_ddb_view *v = &dd->views[i];
    bool mine = false;
    for (size_t f = 0; f < v->nfiles; f++) mine = mine || strcmp(v->files[f], file) == 0;
    if (v->format != TT_DDB_CSV || !mine || v->ntext_cols >= 64) continue;
    for (size_t k = 0; k < v->ntext_cols; k++)
      if (strcmp(v->text_cols[k], col) == 0) mine = false;
    if (!mine) continue;
    v->text_cols = tt_xrealloc(v->text_cols, sizeof *v->text_cols * (v->ntext_cols + 1));
    v->text_cols[v->ntext_cols++] = tt_xstrdup(col);
    found = v;
  }
  free(file);
  if (found) *column = col;
  else free(col);
  return found;
}

void tt_ddb_csv_note(tt_ddb *dd, const tt_ddb_view *v, const char *column) {
  char *w = tt_xasprintf("%s%sin %s, column %s holds values that are not numbers past the rows "
                         "DuckDB sampled: it is read as text (TRY_CAST(%s AS DOUBLE) reads its "
                         "numbers)",
                         dd->warning ? dd->warning : "", dd->warning ? "; " : "",
                         v->nfiles == 1 ? v->files[0] : v->name, column, column);
  free(dd->warning);
  dd->warning = w;
}


/* ---- typing by the shared sniffer ---------------------------------------- */

/* Spaces and tabs around a value: the sniffer ignores them. */
#define TT_DDB_WS "[ \\t]*"

/* The pattern of a number as csv_sniff.c reads it with decimal mark mark
 * (the other of '.' and ',' groups thousands, in threes); integers only
 * when only_int; lead0: 01234 is a number (an override said so). */
static void tt_ddb_csv_num_re(tt_buf *b, char mark, bool only_int, bool lead0) {
  const char *g = mark == ',' ? "\\." : ",", *m = mark == ',' ? "," : "\\.";
  tt_buf_puts(b, "'" TT_DDB_WS "[+-]?(");
  tt_buf_printf(b, "(%s|[1-9][0-9]{0,2}(%s[0-9]{3})+)", lead0 ? "[0-9]+" : "0|[1-9][0-9]*", g);
  if (!only_int) {
    tt_buf_printf(b, "(%s[0-9]+)?|%s[0-9]+)", m, m);
    if (mark == '.') tt_buf_puts(b, "([eE][+-]?[0-9]+)?");
  } else {
    tt_buf_putc(b, ')');
  }
  tt_buf_puts(b, TT_DDB_WS "'");
}

/* The column's value trimmed of spaces and tabs. */
static void tt_ddb_csv_trimmed(tt_buf *b, const char *name) {
  tt_buf_puts(b, "trim(");
  tt_buf_put_sql_ident(b, name);
  tt_buf_puts(b, ", ' ' || chr(9))");
}

/* The SQL reading column name (VARCHAR) as the sniffer typed it; tz: its
 * head holds date-times with a zone (Z, +01:00), read as TIMESTAMPTZ;
 * padded: a null token with spaces around it (" NA ", "  "). */
static void tt_ddb_csv_expr(tt_buf *b, const char *name, const tt_csv_column_sniff *cs, bool tz,
                            bool padded) {
  if (cs->type == TT_CSV_TYPE_TEXT && !padded) {
    tt_buf_put_sql_ident(b, name);
    return;
  }
  if (cs->type == TT_CSV_TYPE_TEXT) {
    /* such a token is NULL, as the SQLite loader reads it (nullstr matches
     * only the token itself); only in a column whose head has one, since
     * trimming every text value doubles what reading a text column costs */
    tt_buf_puts(b, "CASE WHEN ");
    tt_ddb_csv_trimmed(b, name);
    tt_buf_puts(b, " IN (");
    for (int i = 0; i < TT_CSV_NULL_TOKENS; i++) {
      if (i) tt_buf_puts(b, ", ");
      tt_buf_put_sql_string(b, tt_csv_null_tokens[i]);
    }
    tt_buf_puts(b, ") THEN NULL ELSE ");
    tt_buf_put_sql_ident(b, name);
    tt_buf_puts(b, " END");
    return;
  }
  tt_buf_puts(b, "CASE WHEN regexp_full_match(");
  tt_buf_put_sql_ident(b, name);
  tt_buf_puts(b, ", ");
  const char *cast = "DATE";
  switch (cs->type) {
  case TT_CSV_TYPE_INTEGER:
  case TT_CSV_TYPE_REAL: {
    bool integer = cs->type == TT_CSV_TYPE_INTEGER;
    /* the common case first, cast as it is: digits, and a point's fraction */
    tt_buf_printf(b, "'[+-]?(%s)%s') THEN TRY_CAST(", cs->overridden ? "[0-9]+" : "0|[1-9][0-9]*",
                  integer || cs->decimal == ',' ? "" : "(\\.[0-9]+)?");
    tt_buf_put_sql_ident(b, name);
    tt_buf_puts(b, integer ? " AS BIGINT)" : " AS DOUBLE)");
    tt_buf_puts(b, " WHEN regexp_full_match(");
    tt_buf_put_sql_ident(b, name);
    tt_buf_puts(b, ", ");
    tt_ddb_csv_num_re(b, cs->decimal, integer, cs->overridden);
    tt_buf_puts(b, ") THEN TRY_CAST(replace(");
    if (cs->decimal == ',') tt_buf_puts(b, "replace(");
    tt_ddb_csv_trimmed(b, name);
    tt_buf_puts(b, cs->decimal == ',' ? ", '.', ''), ',', '.')" : ", ',', '')");
    tt_buf_puts(b, integer ? " AS BIGINT) END" : " AS DOUBLE) END");
    return;
  }
  case TT_CSV_TYPE_DATE:
    tt_buf_puts(b, "'" TT_DDB_WS "[0-9]{4}-[0-9]{2}-[0-9]{2}" TT_DDB_WS "'");
    break;
  case TT_CSV_TYPE_TIME:
    tt_buf_puts(b, "'" TT_DDB_WS "[0-9]{2}:[0-9]{2}(:[0-9]{2}(\\.[0-9]{1,9})?)?" TT_DDB_WS "'");
    cast = "TIME";
    break;
  case TT_CSV_TYPE_TIMESTAMP:
    tt_buf_puts(b, "'" TT_DDB_WS "[0-9]{4}-[0-9]{2}-[0-9]{2}([T ][0-9]{2}:[0-9]{2}(:[0-9]{2}"
                   "(\\.[0-9]{1,9})?)?(Z|[+-][0-9]{2}:?[0-9]{2})?)?" TT_DDB_WS "'");
    cast = tz ? "TIMESTAMPTZ" : "TIMESTAMP"; /* an offset is kept, never dropped */
    break;
  case TT_CSV_TYPE_TEXT: break;
  }
  tt_buf_puts(b, ") THEN TRY_CAST(");
  tt_ddb_csv_trimmed(b, name);
  tt_buf_printf(b, " AS %s) END", cast);
}

/* Whether s may be a date-time with a zone: it ends in Z, or in +hh:mm,
 * -hh:mm, +hhmm after a time (the sniffer decides whether it is one). */
static bool tt_ddb_csv_zoned(const char *s, size_t n) {
  while (n && (s[n - 1] == ' ' || s[n - 1] == '\t')) n--;
  if (n < 16 || (s[10] != 'T' && s[10] != ' ')) return false;
  if (s[n - 1] == 'Z') return true;
  return (s[n - 6] == '+' || s[n - 6] == '-') || (s[n - 5] == '+' || s[n - 5] == '-');
}

/* Whether s is a null token with spaces or tabs around it (DuckDB's
 * nullstr has already made the bare ones NULL). */
static bool tt_ddb_csv_padded_null(const char *s, size_t n) {
  return n && (s[0] == ' ' || s[0] == '\t' || s[n - 1] == ' ' || s[n - 1] == '\t') &&
         tt_csv_null_token(s, n) >= 0;
}

/* The text of row r of a VARCHAR vector, or NULL for a NULL. */
static const char *tt_ddb_csv_cell(const tt_ddb_api *api, ddb_vector vec, ddb_idx r,
                                   size_t *len) {
  const uint64_t *valid = api->vector_get_validity(vec);
  const ddb_string *s = api->vector_get_data(vec);
  if (!s || (valid && !(valid[r / 64] & (1ull << (r % 64))))) return NULL;
  uint32_t n = s[r].value.inlined.length;
  *len = n;
  return n <= 12 ? s[r].value.inlined.inlined : s[r].value.pointer.ptr;
}

/* read_csv's arguments that decide the shape of the file (header,
 * delimiter, several files), the same for the head and the view. Several
 * files: columns matched by name; a file's own name as a column would
 * change the table's shape, so it is left out. */
static void tt_ddb_csv_shape(const tt_ddb_view *v, tt_csv_header header, tt_buf *out) {
  if (header == TT_CSV_HEADER_YES) tt_buf_puts(out, ", header=true");
  else if (header == TT_CSV_HEADER_NO) tt_buf_puts(out, ", header=false");
  if (v->nfiles && tt_has_suffix_nocase(v->files[0], ".tsv")) tt_buf_puts(out, ", delim='\\t'");
  if (v->nfiles > 1) tt_buf_puts(out, ", union_by_name=true");
  /* never drop a row of a ragged file: a short one is padded with NULLs, a
   * long one's extra fields kept (null_padding reads on one thread, so only
   * a file that needs it gets it) */
  if (v->ragged_delim) {
    tt_buf_puts(out, ", delim=");
    char d[2] = {v->ragged_delim, 0};
    tt_buf_put_sql_string(out, d);
    tt_buf_puts(out, ", null_padding=true, strict_mode=false");
  }
}

/* The delimiter the first line of path uses most, outside quotes, among
 * ',', ';', tab and '|' (0 when none); *fields the line's field count. */
static char tt_ddb_header_delim(const char *path, size_t *fields) {
  *fields = 0;
  FILE *f = fopen(path, "rb");
  if (!f) return 0;
  char line[65536];
  size_t n = fread(line, 1, sizeof line, f);
  fclose(f);
  static const char cands[] = {',', ';', '\t', '|'};
  size_t counts[4] = {0};
  bool quoted = false;
  for (size_t i = 0; i < n && (quoted || (line[i] != '\n' && line[i] != '\r')); i++) {
    if (line[i] == '"') quoted = !quoted;
    for (size_t k = 0; !quoted && k < 4; k++) counts[k] += line[i] == cands[k];
  }
  size_t best = 0;
  for (size_t k = 1; k < 4; k++)
    if (counts[k] > counts[best]) best = k;
  if (!counts[best]) return 0;
  *fields = counts[best] + 1;
  return cands[best];
}

/* The delimiter DuckDB finds in v's first file (',' when it says none). */
static char tt_ddb_csv_delim(tt_ddb *dd, tt_ddb_view *v) {
  if (v->nfiles && tt_has_suffix_nocase(v->files[0], ".tsv")) return '\t';
  tt_buf q = TT_BUF_INIT;
  tt_buf_puts(&q, "SELECT Delimiter, len(Columns)::VARCHAR FROM sniff_csv(");
  tt_buf_put_sql_string(&q, v->files[0]);
  tt_buf_puts(&q, ")");
  ddb_result r;
  memset(&r, 0, sizeof r);
  char delim = ',';
  if (dd->api->query(dd->conn, tt_buf_cstr(&q), &r) == DDB_SUCCESS) {
    ddb_data_chunk chunk = dd->api->fetch_chunk(r);
    size_t len = 0;
    const char *d = chunk && dd->api->data_chunk_get_size(chunk) > 0
                        ? tt_ddb_csv_cell(dd->api, dd->api->data_chunk_get_vector(chunk, 0), 0, &len)
                        : NULL;
    if (d && len == 1) delim = d[0];
    size_t clen = 0;
    const char *nc = chunk && dd->api->data_chunk_get_size(chunk) > 0
                         ? tt_ddb_csv_cell(dd->api, dd->api->data_chunk_get_vector(chunk, 1), 0, &clen)
                         : NULL;
    /* one column where the header line has several fields: rows of other
     * lengths kept DuckDB's sniffer from splitting them */
    size_t fields = 0;
    char hd = tt_ddb_header_delim(v->files[0], &fields);
    if (nc && strtol(nc, NULL, 10) == 1 && fields > 1) {
      v->ragged_delim = hd;
      delim = hd;
    }
    if (chunk) dd->api->destroy_data_chunk(&chunk);
  }
  dd->api->destroy_result(&r);
  tt_buf_free(&q);
  return delim;
}

/* Whether the file's reading is worth a line on its table (as the SQLite
 * loader says it): null tokens other than the empty field, a delimiter
 * other than the usual one. */
static bool tt_ddb_csv_notable(const tt_csv_sniff *sn, char delim, bool tsv) {
  return (tt_csv_sniff_null_tokens(sn) & ~1u) || delim != (tsv ? '\t' : ',');
}

/* Whether DuckDB named v's columns itself (no header line): column0,
 * column1... (column00... from ten columns on), each its own position. */
static bool tt_ddb_csv_generated(const tt_ddb_view *v) {
  for (size_t c = 0; c < v->csv_ncols; c++) {
    const char *n = v->csv_names[c];
    if (strncmp(n, "column", 6) != 0 || !isdigit((unsigned char)n[6])) return false;
    char *end;
    unsigned long k = strtoul(n + 6, &end, 10);
    if (*end || k != c) return false;
  }
  return v->csv_ncols > 0;
}

/* A file without a header line: its columns are shown as column_1,
 * column_2... as the SQLite loader names them, so that a query or a
 * --csv-types override means the same under either engine. */
static void tt_ddb_csv_number_names(tt_ddb_view *v) {
  if (!tt_ddb_csv_generated(v)) return;
  v->csv_src = tt_xcalloc(v->csv_ncols, sizeof *v->csv_src);
  for (size_t c = 0; c < v->csv_ncols; c++) {
    v->csv_src[c] = v->csv_names[c];
    v->csv_names[c] = tt_xasprintf("column_%zu", c + 1);
  }
}

/* v's select list and notes from the finished sniffer; head_rows: the
 * file is longer than the head the types were decided on (0: it is not). */
static void tt_ddb_csv_plan(tt_ddb_view *v, const tt_csv_sniff *sn, const bool *tz,
                            const bool *padded, char delim, long head_rows) {
  tt_buf sel = TT_BUF_INIT, note = TT_BUF_INIT;
  v->csv_notes = tt_xcalloc(v->csv_ncols ? v->csv_ncols : 1, sizeof *v->csv_notes);
  for (size_t c = 0; c < v->csv_ncols; c++) {
    const tt_csv_column_sniff *cs = tt_csv_sniff_column(sn, c);
    if (c) tt_buf_puts(&sel, ", ");
    tt_ddb_csv_expr(&sel, v->csv_src ? v->csv_src[c] : v->csv_names[c], cs, tz[c], padded[c]);
    tt_buf_puts(&sel, " AS ");
    tt_buf_put_sql_ident(&sel, v->csv_names[c]);
    if (cs->note) v->csv_notes[c] = tt_xstrdup(cs->note);
  }
  if (tt_ddb_csv_notable(sn, delim, tt_has_suffix_nocase(v->files[0], ".tsv"))) {
    char *sum = tt_csv_sniff_summary(sn);
    tt_buf_puts(&note, sum);
    free(sum);
  }
  if (head_rows)
    tt_buf_printf(&note, "%stypes decided on the first %ld rows; later values not of a column's "
                         "type read as NULL",
                  note.len ? "; " : "", head_rows);
  v->csv_note = note.len ? tt_buf_detach(&note) : NULL;
  tt_buf_free(&note);
  v->csv_select = tt_buf_detach(&sel);
  tt_buf_free(&sel);
}

/* Runs sql (tabletalk's own) for a result read chunk by chunk, so that
 * only what is fetched is held; false when it fails (r then needs no
 * freeing). */
static bool tt_ddb_csv_stream(tt_ddb *dd, const char *sql, ddb_result *r) {
  const tt_ddb_api *api = dd->api;
  ddb_extracted ex = NULL;
  ddb_prepared prep = NULL;
  bool ok = api->extract_statements(dd->conn, sql, &ex) == 1 &&
            api->prepare_extracted_statement(dd->conn, ex, 0, &prep) == DDB_SUCCESS;
  if (ok && api->execute_prepared_streaming(prep, r) != DDB_SUCCESS) {
    api->destroy_result(r);
    ok = false;
  }
  if (prep) api->destroy_prepare(&prep);
  if (ex) api->destroy_extracted(&ex);
  return ok;
}

void tt_ddb_csv_sniff(tt_db *db, tt_ddb *dd, tt_ddb_view *v, tt_csv_overrides *ov) {
  const tt_ddb_api *api = dd->api;
  if (v->format != TT_DDB_CSV || !v->nfiles) return;
  char delim = tt_ddb_csv_delim(dd, v);
  tt_buf q = TT_BUF_INIT;
  tt_buf_puts(&q, "SELECT * FROM read_csv([");
  for (size_t i = 0; i < v->nfiles; i++) {
    if (i) tt_buf_putc(&q, ',');
    tt_buf_put_sql_string(&q, v->files[i]);
  }
  tt_buf_putc(&q, ']');
  tt_ddb_csv_shape(v, db->opts.csv_header, &q);
  tt_buf_printf(&q, ", all_varchar=true) LIMIT %d", TT_DDB_CSV_SNIFF_ROWS + 1);
  ddb_result r;
  memset(&r, 0, sizeof r);
  bool ok = tt_ddb_csv_stream(dd, tt_buf_cstr(&q), &r);
  tt_buf_free(&q);
  size_t ncols = ok ? (size_t)api->column_count(&r) : 0;
  if (!ncols) {
    if (ok) api->destroy_result(&r);
    return;
  }
  v->csv_ncols = ncols;
  v->csv_names = tt_xcalloc(ncols, sizeof *v->csv_names);
  for (size_t c = 0; c < ncols; c++) {
    const char *n = api->column_name(&r, c);
    v->csv_names[c] = tt_xstrdup(n ? n : "");
  }
  tt_ddb_csv_number_names(v);
  tt_csv_sniff *sn = tt_csv_sniff_new(ncols, delim);
  bool *tz = tt_xcalloc(ncols, sizeof *tz), *padded = tt_xcalloc(ncols, sizeof *padded);
  long rows = 0;
  size_t bytes = 0;
  bool longer = false;
  ddb_data_chunk chunk;
  while (!longer && (chunk = api->fetch_chunk(r)) != NULL) {
    ddb_idx n = api->data_chunk_get_size(chunk);
    for (ddb_idx i = 0; i < n && !longer; i++) {
      if (rows == TT_DDB_CSV_SNIFF_ROWS || bytes > TT_DDB_CSV_SNIFF_BYTES) {
        longer = true;
        break;
      }
      rows++;
      tt_csv_sniff_record(sn, ncols, rows + 1);
      for (size_t c = 0; c < ncols; c++) {
        size_t len = 0;
        const char *s = tt_ddb_csv_cell(api, api->data_chunk_get_vector(chunk, c), i, &len);
        tt_csv_sniff_value(sn, c, s ? s : "", s ? len : 0);
        bytes += len + 1;
        tz[c] = tz[c] || (s && tt_ddb_csv_zoned(s, len));
        padded[c] = padded[c] || (s && tt_ddb_csv_padded_null(s, len));
      }
    }
    api->destroy_data_chunk(&chunk);
  }
  api->destroy_result(&r);
  tt_csv_sniff_finish(sn, v->name, v->csv_names, ov);
  tt_ddb_csv_plan(v, sn, tz, padded, delim, longer ? rows : 0);
  tt_csv_sniff_free(sn);
  free(tz);
  free(padded);
}
