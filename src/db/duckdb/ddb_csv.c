/* ddb_csv.c — how DuckDB reads a CSV or TSV file for tabletalk: the same
 * null tokens as the SQLite loader (empty, NA, N/A, n/a, null, NULL, -, —,
 * ?), the header as --header/--no-header say (else DuckDB's sniffer
 * decides), a tab for .tsv, and DuckDB's own type sniffer, which is
 * strict: a column becomes a number only when every sampled value (null
 * tokens aside) parses as one, and a value past the sample that does not
 * parse stops the query with DuckDB's error naming the line instead of
 * becoming a number or NULL. Text is never read as 0.
 *
 * A value past the sample that does not parse stops that query; the
 * column is then read as text (types={'col':'VARCHAR'}) from the next
 * query on, and the warning, the cards and the schema say so
 * (tt_ddb_csv_demote). The catalog reads the first 100,000 rows first, so
 * that such a column is found before the model sees the cards.
 *
 * This file is the one place that decides a CSV file's types under
 * DuckDB: an engine-neutral sniffer (per-column types, decimal commas,
 * columns numeric but for a few values) plugs in here by writing
 * read_csv's `types={...}` / `decimal_separator` options, or an
 * all-VARCHAR read under TRY_CAST projections, from its result. */
#include "db/duckdb/ddb.h"

#include <stdlib.h>
#include <string.h>

const char *const tt_ddb_csv_nulls[] = {"", "NA", "N/A", "n/a", "null", "NULL",
                                        "-", "\xe2\x80\x94", "?", NULL};

void tt_ddb_csv_options(const tt_ddb_view *v, tt_csv_header header, tt_buf *out) {
  if (header == TT_CSV_HEADER_YES) tt_buf_puts(out, ", header=true");
  else if (header == TT_CSV_HEADER_NO) tt_buf_puts(out, ", header=false");
  if (v->nfiles && tt_has_suffix_nocase(v->files[0], ".tsv")) tt_buf_puts(out, ", delim='\\t'");
  tt_buf_puts(out, ", nullstr=[");
  for (size_t i = 0; tt_ddb_csv_nulls[i]; i++) {
    if (i) tt_buf_putc(out, ',');
    tt_buf_put_sql_string(out, tt_ddb_csv_nulls[i]);
  }
  tt_buf_puts(out, "]");
  /* several files: columns matched by name; a file's own name as a column
   * would change the table's shape, so it is left out */
  if (v->nfiles > 1) tt_buf_puts(out, ", union_by_name=true");
  if (v->ntext_cols) {
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
