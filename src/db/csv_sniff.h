/* csv_sniff.h — the types of a CSV file's columns, learnt from its values
 * and shared by every engine that reads CSV (the SQLite loader today, the
 * DuckDB engine later): engine-neutral, it sees fields as bytes and never
 * a file, a reader or a database.
 *
 * The rule is that no number is ever invented:
 *  - null tokens (an empty or blank field, NA, N/A, n/a, null, NULL, -,
 *    U+2014 em dash, ?; surrounding spaces ignored) are NULL in every column;
 *  - a column is INTEGER or REAL when its values are numbers, DATE, TIME or
 *    TIMESTAMP when they are ISO 8601 dates, times or date-times, else TEXT;
 *  - a column whose values are of one type except for a few (at most 5% of
 *    its non-null values, or at most 3 values that are at most a quarter of
 *    them) takes that type, those cells read as NULL, and the column's note
 *    says how many and shows up to three ("2 values were not numbers, read
 *    as NULL: 'unknown', 'tbd'");
 *  - a value with a leading zero (01234: a code) or an integer beyond 64
 *    bits keeps a column of numbers TEXT (no digit is ever lost), and says
 *    so in its note;
 *  - numbers: an optional sign, digits, an optional fraction, an exponent
 *    (1e5, 2.5E-3) with a decimal point; spaces around are ignored (" 42 ");
 *    "5.", "inf", "nan", hex are not numbers;
 *  - the decimal mark is a point, or in a file whose delimiter is not a
 *    comma, a comma when the column's values say so (9,5; -1,25): the mark
 *    the column's unambiguous values use most wins, its values in the
 *    other mark are the column's exceptions. Thousands separators are the
 *    other mark in groups of three (1.234,5 with a decimal comma; 1,234.5
 *    or, in a comma file, "1,234" with a point). A value that reads as two
 *    different numbers (1.234 or 1,234 in a ';' file) takes the column's
 *    mark; when no value of the column says which mark, the column stays
 *    TEXT and its note says why (--csv-types col=real or
 *    col=decimal-comma decides);
 *  - ISO dates 2024-03-05, times 13:45, 13:45:10.5, date-times
 *    2024-03-05T13:45:10 (or a space instead of T, an optional Z or ±hh:mm);
 *    a column of dates and date-times is TIMESTAMP.
 *
 * Usage: tt_csv_sniff_new, then for each data record tt_csv_sniff_record
 * and tt_csv_sniff_value for each of its fields (a bounded sample or every
 * record), then tt_csv_sniff_finish; then read the columns' verdicts and
 * convert each field with tt_csv_sniff_convert. */
#ifndef TT_DB_CSV_SNIFF_H
#define TT_DB_CSV_SNIFF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/util.h"

typedef enum tt_csv_type {
  TT_CSV_TYPE_TEXT = 0,
  TT_CSV_TYPE_INTEGER,
  TT_CSV_TYPE_REAL,
  TT_CSV_TYPE_DATE,
  TT_CSV_TYPE_TIME,
  TT_CSV_TYPE_TIMESTAMP,
} tt_csv_type;

/* "TEXT", "INTEGER", "REAL", "DATE", "TIME", "TIMESTAMP": the declared type. */
const char *tt_csv_type_name(tt_csv_type t);

/* The null tokens, in the order of tt_csv_column_sniff.null_tokens' bits. */
#define TT_CSV_NULL_TOKENS 9
extern const char *const tt_csv_null_tokens[TT_CSV_NULL_TOKENS];
/* Bit of the null token s is (after trimming spaces and tabs), or -1. */
int tt_csv_null_token(const char *s, size_t n);

/* ---- overrides (--csv-types) ------------------------------------------ */

typedef struct tt_csv_override {
  char *table;       /* NULL: a column of that name in any table */
  char *column;
  tt_csv_type type;
  char decimal;      /* REAL: '.' or ','; 0: the column's own mark */
  bool used;         /* a column matched (set by tt_csv_sniff_finish) */
} tt_csv_override;

typedef struct tt_csv_overrides {
  tt_csv_override *v;
  size_t n;
} tt_csv_overrides;

/* Parses "col=type,table.col=type,...": types integer (int), real (float,
 * double, number), decimal-comma (a REAL written 9,5), text (string),
 * date, time, timestamp (datetime); names and types any case. false with
 * err (TT_ERR_CONFIG, what is wrong and how to write it) when malformed.
 * An empty or NULL spec is no override. Free with tt_csv_overrides_free. */
bool tt_csv_overrides_parse(const char *spec, tt_csv_overrides *out, tt_error *err);
void tt_csv_overrides_free(tt_csv_overrides *o);
/* The first override no column matched, or NULL. */
const tt_csv_override *tt_csv_overrides_unused(const tt_csv_overrides *o);

/* ---- sniffing ------------------------------------------------------------ */

#define TT_CSV_NOTE_EXAMPLES 3

/* What the sniffer says of one column (after tt_csv_sniff_finish). */
typedef struct tt_csv_column_sniff {
  tt_csv_type type;
  char decimal;            /* REAL: '.' or ',' */
  bool overridden;         /* the type came from --csv-types */
  long long values;        /* fields that are not null */
  long long nulls;         /* null fields (tokens, blank, missing in a short row) */
  unsigned null_tokens;    /* bit i: tt_csv_null_tokens[i] was seen */
  long long bad;           /* values that are not of the type: read as NULL */
  const char *note;        /* what the user should know of this column, or
                            * NULL ("decimal comma", "2 values were not
                            * numbers, read as NULL: 'x', 'y'", "kept as text:
                            * '01234' has a leading zero, a code not a
                            * number"); owned by the sniffer */
} tt_csv_column_sniff;

typedef struct tt_csv_sniff tt_csv_sniff;

/* A sniffer of ncols columns of a file whose fields are split by delim
 * (a decimal comma is only considered when delim is not ','). */
tt_csv_sniff *tt_csv_sniff_new(size_t ncols, char delim);
void tt_csv_sniff_free(tt_csv_sniff *s);
/* One more data record of nfields fields at line (for the ragged-row note):
 * fewer than ncols is a short row (the rest is NULL), more a long one
 * (the fields past ncols are left out). */
void tt_csv_sniff_record(tt_csv_sniff *s, size_t nfields, long line);
/* Field col (< ncols) of the current record. */
void tt_csv_sniff_value(tt_csv_sniff *s, size_t col, const char *v, size_t n);
/* Before finishing: whether v, over column col, says the first line is a
 * header (+1: text over a column of numbers, dates or times), data (-1: a
 * value of the column's type) or nothing (0). */
int tt_csv_sniff_header_vote(const tt_csv_sniff *s, size_t col, const char *v, size_t n);
/* Decides every column's type. names (ncols of them) and table are what
 * overrides match (case ignored); ov may be NULL. */
void tt_csv_sniff_finish(tt_csv_sniff *s, const char *table, char *const *names,
                         tt_csv_overrides *ov);

size_t tt_csv_sniff_ncols(const tt_csv_sniff *s);
const tt_csv_column_sniff *tt_csv_sniff_column(const tt_csv_sniff *s, size_t col);
/* Records with fewer / more fields than ncols, and the line of the first. */
long long tt_csv_sniff_short_rows(const tt_csv_sniff *s, long *first_line);
long long tt_csv_sniff_long_rows(const tt_csv_sniff *s, long *first_line);
/* Null tokens seen in any column (bits as null_tokens). */
unsigned tt_csv_sniff_null_tokens(const tt_csv_sniff *s);
/* One line on the file ("';'-separated; NULL: '', 'n/a'; 2 short rows,
 * first at line 4, read with NULLs"), freshly allocated. */
char *tt_csv_sniff_summary(const tt_csv_sniff *s);

/* A field as its column's type makes it (after tt_csv_sniff_finish). */
typedef enum tt_csv_cell_kind { TT_CSV_CELL_NULL, TT_CSV_CELL_INT, TT_CSV_CELL_REAL, TT_CSV_CELL_TEXT } tt_csv_cell_kind;
typedef struct tt_csv_cell {
  tt_csv_cell_kind kind;
  int64_t i;
  double d;
  const char *s;  /* TEXT: into v (dates and times trimmed, text as written) */
  size_t n;
} tt_csv_cell;
void tt_csv_sniff_convert(const tt_csv_sniff *s, size_t col, const char *v, size_t n,
                          tt_csv_cell *out);

#endif
