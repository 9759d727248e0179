/* ddb_csv.c — how DuckDB reads a CSV or TSV file for tabletalk: the same
 * null tokens as the SQLite loader (empty, NA, N/A, n/a, null, NULL, -, —,
 * ?), the header as --header/--no-header say (else DuckDB's sniffer
 * decides), a tab for .tsv, and DuckDB's own type sniffer, which is
 * strict: a column becomes a number only when every sampled value (null
 * tokens aside) parses as one, and a value past the sample that does not
 * parse stops the query with DuckDB's error naming the line instead of
 * becoming a number or NULL. Text is never read as 0.
 *
 * This file is the one place that decides a CSV file's types under
 * DuckDB: an engine-neutral sniffer (per-column types, decimal commas,
 * columns numeric but for a few values) plugs in here by writing
 * read_csv's `types={...}` / `decimal_separator` options, or an
 * all-VARCHAR read under TRY_CAST projections, from its result. */
#include "db/duckdb/ddb.h"

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
}
