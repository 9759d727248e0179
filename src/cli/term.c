/* term.c — facts about the terminal (is it one, may we colour, how wide)
 * and writing output whole. Plain output when not a terminal; NO_COLOR and
 * TERM=dumb respected. */
#include "cli/cli.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

tt_term tt_term_probe(FILE *f) {
  tt_term t = {.tty = false, .color = false, .width = 80};
  int fd = fileno(f);
  t.tty = fd >= 0 && isatty(fd);
  const char *no_color = getenv("NO_COLOR");
  const char *term = getenv("TERM");
  t.color = t.tty && !(no_color && *no_color) && !(term && strcmp(term, "dumb") == 0);
  struct winsize ws;
  if (t.tty && ioctl(fd, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0) {
    t.width = ws.ws_col;
  } else {
    long cols;
    const char *env = getenv("COLUMNS");
    if (env && tt_parse_long(env, 20, 10000, &cols)) t.width = (size_t)cols;
  }
  return t;
}

const char *tt_term_bold(const tt_term *t) { return t->color ? "\033[1m" : ""; }
const char *tt_term_dim(const tt_term *t) { return t->color ? "\033[2m" : ""; }
const char *tt_term_reset(const tt_term *t) { return t->color ? "\033[0m" : ""; }

bool tt_write_all(FILE *f, const tt_buf *b) {
  if (b->len && fwrite(b->data, 1, b->len, f) != b->len) return false;
  return fflush(f) == 0;
}

int tt_write_result(FILE *f, const tt_buf *b) {
  errno = 0;
  if (tt_write_all(f, b)) return TT_EXIT_OK;
  if (errno == EPIPE) return TT_EXIT_OK; /* `| head` had what it wanted */
  return tt_fail(TT_EXIT_FAIL, "cannot write the output: %s (is the disk full?)",
                 strerror(errno ? errno : EIO));
}
