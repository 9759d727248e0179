/* cli.h — what the files of the command-line front end share: exit codes,
 * the command table, terminal facts and the renderers for result sets. The
 * CLI is one user of the library layers; it never reaches inside them. */
#ifndef TT_CLI_H
#define TT_CLI_H

#include <stdio.h>

#include "db/db.h"
#include "schema/schema.h"

enum {
  TT_EXIT_OK = 0,
  TT_EXIT_FAIL = 1,
  TT_EXIT_USAGE = 2,
  TT_EXIT_REFUSED = 3,
  TT_EXIT_LIMIT = 4,
};

/* One command: name, one-line summary for --help, entry point. */
typedef struct tt_command {
  const char *name;
  const char *summary;
  int (*run)(int argc, char **argv);
} tt_command;

int cmd_sql(int argc, char **argv);
int cmd_schema(int argc, char **argv);

/* Exit code for a db error kind. */
int tt_exit_for(tt_db_errkind kind);
/* Prints "tabletalk: <msg>" on stderr (escaped) and returns code. */
int tt_fail(int code, const char *fmt, ...) TT_PRINTF(2, 3);
/* Prints "tabletalk CMD: <msg>\n<hint>" for a usage error; returns 2. */
int tt_usage_error(const char *cmd, const char *fmt, ...) TT_PRINTF(2, 3);

/* ---- terminal ---------------------------------------------------------- */

typedef struct tt_term {
  bool tty;      /* the stream is a terminal */
  bool color;    /* ANSI colours allowed (tty, NO_COLOR unset, TERM not dumb) */
  size_t width;  /* columns (80 when unknown) */
} tt_term;

tt_term tt_term_probe(FILE *f);
/* Colour sequences, or "" when colours are off. */
const char *tt_term_bold(const tt_term *t);
const char *tt_term_dim(const tt_term *t);
const char *tt_term_reset(const tt_term *t);
/* Writes the whole buffer to f; false on a write error (EPIPE included). */
bool tt_write_all(FILE *f, const tt_buf *b);

/* ---- rendering result sets --------------------------------------------- */

#define TT_CELL_MAX_CHARS 1000 /* per-cell display budget */

/* Box-drawing table on a terminal (fitted to its width), a plain aligned
 * table otherwise. Cells are escaped; numbers are right-aligned. */
void tt_render_table(tt_buf *out, const tt_result *r, const tt_term *t);
/* Tab-separated values: \t \n \r \\ escaped; on a terminal unsafe
 * characters are escaped too. NULL is an empty field. */
void tt_render_tsv(tt_buf *out, const tt_result *r, const tt_term *t);
/* RFC 4180 CSV; on a terminal unsafe characters are escaped. */
void tt_render_csv(tt_buf *out, const tt_result *r, const tt_term *t);
/* "3 rows, 0.4 ms" (with a truncation note when cut). */
void tt_render_footer(tt_buf *out, const tt_result *r, const tt_term *t);

#endif
