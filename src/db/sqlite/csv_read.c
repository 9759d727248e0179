/* csv_read.c — reading a CSV or TSV file one record at a time, in bounded
 * memory: RFC 4180 quoting (doubled quotes, delimiters and line ends inside
 * quotes), \n, \r\n or \r line ends, a UTF-8 byte order mark skipped, and
 * every malformed input (a quote never closed, text after a closing quote,
 * a NUL byte, bytes that are not UTF-8, a field or a line past the limits)
 * an error that names the file and the line and says what to do; a file
 * is read up to a given size (its size when opened: a file another
 * program appends to is read as of one moment). Also the
 * guess of the delimiter of a .csv file (types are csv_sniff.c's). */
#include "db/sqlite/csv.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TT_CSV_BUFSIZE (64 * 1024)

struct tt_csv_reader {
  FILE *f;
  const char *name;         /* for messages */
  char delim;
  unsigned char *buf;
  size_t pos, len;
  bool eof;
  long long left;           /* bytes the file may still give (its size when
                             * opened, read as of that moment); -1: to the end */
  long long consumed;       /* bytes taken from the file so far */
  long line;                /* line of the next byte (1-based) */
  tt_buf rec;               /* the fields, each followed by a NUL */
  size_t *off, *flen;
  size_t nfields, cap;
  long rec_line;
};

tt_csv_reader *tt_csv_reader_new(FILE *f, const char *name, char delim, long long limit) {
  tt_csv_reader *r = tt_xcalloc(1, sizeof *r);
  r->f = f;
  r->left = limit;
  r->name = name;
  r->delim = delim;
  r->buf = tt_xmalloc(TT_CSV_BUFSIZE);
  r->line = 1;
  return r;
}

void tt_csv_reader_free(tt_csv_reader *r) {
  if (!r) return;
  free(r->buf);
  tt_buf_free(&r->rec);
  free(r->off);
  free(r->flen);
  free(r);
}

static bool tt_csv_fill(tt_csv_reader *r) {
  if (r->eof) return false;
  size_t want = r->left >= 0 && r->left < TT_CSV_BUFSIZE ? (size_t)r->left : TT_CSV_BUFSIZE;
  r->len = want ? fread(r->buf, 1, want, r->f) : 0;
  if (r->left >= 0) r->left -= (long long)r->len;
  r->pos = 0;
  if (r->len == 0) {
    r->eof = true;
    return false;
  }
  return true;
}

/* The next byte, or -1 at the end of the file. */
static inline int tt_csv_get(tt_csv_reader *r) {
  if (r->pos == r->len && !tt_csv_fill(r)) return -1;
  r->consumed++;
  return r->buf[r->pos++];
}

static inline int tt_csv_peek(tt_csv_reader *r) {
  if (r->pos == r->len && !tt_csv_fill(r)) return -1;
  return r->buf[r->pos];
}

bool tt_csv_reader_skip_bom(tt_csv_reader *r, tt_error *err) {
  if (!tt_csv_fill(r)) return true;
  if (r->len >= 3 && memcmp(r->buf, "\xEF\xBB\xBF", 3) == 0) {
    r->pos = 3;
    r->consumed = 3;
  } else if (r->len >= 2 && (memcmp(r->buf, "\xFF\xFE", 2) == 0 || memcmp(r->buf, "\xFE\xFF", 2) == 0)) {
    tt_db_set_error(err, TT_ERR_IO,
                    "%s:1: the file is UTF-16; save it as UTF-8 (e.g. iconv -f utf-16 -t utf-8)",
                    r->name);
    return false;
  }
  return true;
}

long long tt_csv_reader_offset(const tt_csv_reader *r) { return r->consumed; }
long tt_csv_record_line(const tt_csv_reader *r) { return r->rec_line; }
size_t tt_csv_nfields(const tt_csv_reader *r) { return r->nfields; }
const char *tt_csv_field(const tt_csv_reader *r, size_t i, size_t *len) {
  *len = r->flen[i];
  return r->rec.data + r->off[i];
}

/* Closes the field that began at byte start of the record (at line
 * field_line): checks its size and its UTF-8. */
static bool tt_csv_end_field(tt_csv_reader *r, size_t start, long field_line, tt_error *err) {
  size_t n = r->rec.len - start;
  if (r->nfields == TT_CSV_MAX_COLUMNS) {
    tt_db_set_error(err, TT_ERR_IO,
                    "%s:%ld: more than %d fields on one line; tabletalk reads at most %d "
                    "columns (keep the columns you need, e.g. with cut or csvcut)",
                    r->name, r->rec_line, TT_CSV_MAX_COLUMNS, TT_CSV_MAX_COLUMNS);
    return false;
  }
  size_t bad;
  const unsigned char *f = (const unsigned char *)r->rec.data + start;
  unsigned char high = 0;
  for (size_t i = 0; i < n; i++) high |= f[i];
  if (high >= 0x80 && !tt_utf8_valid(r->rec.data + start, n, &bad)) {
    long line = field_line;
    for (size_t i = 0; i < bad; i++)
      if (r->rec.data[start + i] == '\n') line++;
    tt_db_set_error(err, TT_ERR_IO,
                    "%s:%ld: byte 0x%02X in field %zu is not UTF-8; save the file as UTF-8 "
                    "(e.g. iconv -f latin1 -t utf-8)",
                    r->name, line, (unsigned char)r->rec.data[start + bad], r->nfields + 1);
    return false;
  }
  if (r->nfields == r->cap) {
    r->cap = r->cap ? r->cap * 2 : 16;
    r->off = tt_xrealloc(r->off, r->cap * sizeof *r->off);
    r->flen = tt_xrealloc(r->flen, r->cap * sizeof *r->flen);
  }
  r->off[r->nfields] = start;
  r->flen[r->nfields] = n;
  r->nfields++;
  tt_buf_putc(&r->rec, '\0');
  return true;
}

static int tt_csv_too_long(tt_csv_reader *r, tt_error *err) {
  tt_db_set_error(err, TT_ERR_IO,
                  "%s:%ld: a field longer than %d bytes (a quote that is never closed?); "
                  "check the quotes on that line",
                  r->name, r->rec_line, TT_CSV_MAX_FIELD);
  return -1;
}

/* Appends the bytes of the field up to the next stop byte (stop, a line
 * end or NUL) and takes that byte: returns it, -1 at the end of the file,
 * -2 when the field (begun at start) grew past its limit. */
static int tt_csv_run(tt_csv_reader *r, int stop, size_t start) {
  for (;;) {
    if (r->pos == r->len && !tt_csv_fill(r)) return -1;
    const unsigned char *p = r->buf + r->pos, *e = r->buf + r->len, *q = p;
    while (q < e && *q != stop && *q != '\n' && *q != '\r' && *q != 0) q++;
    tt_buf_append(&r->rec, p, (size_t)(q - p));
    r->consumed += q - p;
    r->pos = (size_t)(q - r->buf);
    if (r->rec.len - start > TT_CSV_MAX_FIELD) return -2;
    if (q < e) {
      r->pos++;
      r->consumed++;
      return *q;
    }
  }
}

static int tt_csv_nul(tt_csv_reader *r, long line, tt_error *err) {
  tt_db_set_error(err, TT_ERR_IO,
                  "%s:%ld: a NUL byte; this is not a text file (or is UTF-16: save it as UTF-8)",
                  r->name, line);
  return -1;
}

/* Reads one line end whose first byte c was taken. */
static void tt_csv_line_end(tt_csv_reader *r, int c) {
  if (c == '\r' && tt_csv_peek(r) == '\n') tt_csv_get(r);
  r->line++;
}

int tt_csv_next(tt_csv_reader *r, tt_error *err) {
again:
  tt_buf_reset(&r->rec);
  r->nfields = 0;
  r->rec_line = r->line;
  bool any_quoted = false;
  for (;;) { /* one field */
    size_t start = r->rec.len;
    long field_line = r->line;
    int c = tt_csv_get(r);
    if (c == -1 && r->nfields == 0) return 0; /* the end, after a line end */
    if (c == '"') {
      any_quoted = true;
      long qline = r->line;
      for (;;) {
        c = tt_csv_run(r, '"', start);
        if (c == -2) return tt_csv_too_long(r, err);
        if (c == -1) {
          tt_db_set_error(err, TT_ERR_IO,
                          "%s:%ld: a quoted field is never closed; close it with \" (a quote "
                          "inside a field is written \"\")",
                          r->name, qline);
          return -1;
        }
        if (c == '"') {
          if (tt_csv_peek(r) != '"') break;
          tt_csv_get(r);
        } else if (c == '\n' || c == '\r') {
          if (c == '\r' && tt_csv_peek(r) == '\n') {
            tt_buf_putc(&r->rec, '\r');
            c = tt_csv_get(r);
          }
          r->line++;
        } else if (c == 0) {
          return tt_csv_nul(r, r->line, err);
        }
        tt_buf_putc(&r->rec, (char)c);
      }
      c = tt_csv_get(r);
      if (c != r->delim && c != '\n' && c != '\r' && c != -1) {
        tt_db_set_error(err, TT_ERR_IO,
                        "%s:%ld: text after the closing quote of field %zu; a quote inside a "
                        "quoted field is written \"\"",
                        r->name, r->line, r->nfields + 1);
        return -1;
      }
    } else if (c != r->delim && c != '\n' && c != '\r' && c != -1) {
      if (c == 0) return tt_csv_nul(r, r->line, err);
      tt_buf_putc(&r->rec, (char)c);
      c = tt_csv_run(r, r->delim, start);
      if (c == -2) return tt_csv_too_long(r, err);
      if (c == 0) return tt_csv_nul(r, r->line, err);
    }
    if (!tt_csv_end_field(r, start, field_line, err)) return -1;
    if (c == r->delim) continue;
    if (c != -1) tt_csv_line_end(r, c);
    /* a line with nothing on it is no record */
    if (r->nfields == 1 && r->flen[0] == 0 && !any_quoted) {
      if (c == -1) return 0;
      goto again;
    }
    return 1;
  }
}

char tt_csv_sniff_delimiter(const char *sample, size_t n) {
  static const char cands[] = {',', ';', '\t', '|'};
  enum { LINES = 20 };
  long counts[4][LINES];
  memset(counts, 0, sizeof counts);
  int line = 0;
  bool inq = false;
  size_t i = 0;
  if (n >= 3 && memcmp(sample, "\xEF\xBB\xBF", 3) == 0) i = 3;
  for (; i < n && line < LINES; i++) {
    char c = sample[i];
    if (c == '"') inq = !inq;
    else if (!inq && c == '\n') line++;
    else if (!inq)
      for (int k = 0; k < 4; k++)
        if (c == cands[k]) counts[k][line]++;
  }
  /* only complete lines count (the sample may end inside one), but one
   * line is better than none */
  int lines = line > 0 ? line : 1;
  int best = -1;
  long best_n = 0;
  bool best_steady = false;
  for (int k = 0; k < 4; k++) {
    long first = counts[k][0];
    if (first == 0) continue;
    bool steady = true;
    for (int l = 1; l < lines; l++)
      if (counts[k][l] != first) steady = false;
    if (best < 0 || (steady && !best_steady) || (steady == best_steady && first > best_n)) {
      best = k;
      best_n = first;
      best_steady = steady;
    }
  }
  return best < 0 ? ',' : cands[best];
}
