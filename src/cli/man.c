/* man.c — the manual page, generated at build time from what the parser
 * already knows: the command table (main.c), each command's option table
 * (tt_cmd_spec: usage, doc, groups of tt_opt with their doc paragraphs)
 * and a template for the prose no table holds (docs/reference/
 * tabletalk.1.in: the description, configuration, files, exit status...).
 * So an option is described in one place, and `--help`, shell completion
 * and the man page all come from it.
 *
 * `tabletalk --generate-man-page roff|markdown TEMPLATE [OUT]` (hidden)
 * writes the page, on stdout or to OUT, as roff (installed as tabletalk.1) or as Markdown (committed as
 * docs/reference/tabletalk.md for readers on the web). It fails, naming
 * them, when an option or a command has no doc paragraph, or when the
 * template leaves out a shared option group.
 *
 * The markup of doc paragraphs and of the template (a small subset of
 * Markdown, so that both outputs come from one text):
 *   `code`        literal words: commands, options, values (bold in roff)
 *   *word*        a placeholder (italic); \* is a star
 *   blank line    a new paragraph
 *   4 spaces      an example line, kept as it is
 * and, in the template only:
 *   % ...         a comment
 *   @th TITLE SECTION "DATE" "MANUAL"   the page's title line
 *   # NAME / ## NAME                    a section / a subsection
 *   : TERM        a tagged paragraph: TERM, then the lines after it
 *   @synopsis  @commands  @group TITLE  @help   generated parts */
#include "cli/cli.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "tt_version.h"

typedef enum tt_man_fmt { TT_MAN_ROFF, TT_MAN_MD } tt_man_fmt;

#define TT_MAN_MAX_GROUPS 64

typedef struct tt_man {
  tt_man_fmt fmt;
  tt_buf out;
  tt_buf problems;            /* one line per missing piece */
  const tt_command *cmds;
  size_t ncmds;
  const tt_opt_group *shared[TT_MAN_MAX_GROUPS]; /* groups of several commands */
  bool shared_done[TT_MAN_MAX_GROUPS];
  size_t nshared;
} tt_man;

/* ---- inline markup ------------------------------------------------------ */

static bool tt_man_is_boundary(char c) {
  return c == 0 || c == ' ' || c == '(' || c == '[' || c == '|' || c == '"' || c == '='
         || c == '\n' || c == '/' || c == ',';
}

/* One character of roff text; in_span: inside `code` or *italic*. A
 * character beyond ASCII is written as its code point (\[u2013]) at its
 * first byte, and its other bytes are skipped: troff reads bytes. */
static void tt_man_roff_char(tt_buf *b, const char *s, size_t i, size_t n, bool in_span) {
  char c = s[i], prev = i ? s[i - 1] : 0, next = i + 1 < n ? s[i + 1] : 0;
  unsigned char u = (unsigned char)c;
  if (u >= 0x80) {
    if ((u & 0xC0) == 0x80) return; /* a continuation byte, written with its first */
    size_t len = u >= 0xF0 ? 4 : u >= 0xE0 ? 3 : 2;
    unsigned long cp = u & (len == 2 ? 0x1F : len == 3 ? 0x0F : 0x07);
    for (size_t k = 1; k < len && i + k < n; k++) cp = (cp << 6) | ((unsigned char)s[i + k] & 0x3F);
    tt_buf_printf(b, "\\[u%04lX]", cp);
  } else if (c == '\\') tt_buf_puts(b, "\\e");
  else if (c == '-' && (in_span || prev == '-' || next == '-' || tt_man_is_boundary(prev)))
    tt_buf_puts(b, "\\-");
  else if ((c == '.' || c == '\'') && (b->len == 0 || b->data[b->len - 1] == '\n'))
    tt_buf_printf(b, "\\&%c", c); /* not a request at the start of a line */
  else tt_buf_putc(b, c);
}

/* One character of Markdown text outside code: what Markdown would read
 * as markup is escaped. */
static void tt_man_md_char(tt_buf *b, char c) {
  if (c == '<') tt_buf_puts(b, "&lt;");
  else if (strchr("\\[]_#", c)) tt_buf_printf(b, "\\%c", c);
  else tt_buf_putc(b, c);
}

/* roff: \% at the start of the word being written keeps troff from
 * hyphenating it (a literal word such as an option or a URL). */
static void tt_man_roff_nohyphen(tt_buf *b) {
  size_t w = b->len;
  while (w > 0 && b->data[w - 1] != ' ' && b->data[w - 1] != '\n') w--;
  if (b->len - w >= 2 && strncmp(b->data + w, "\\%", 2) == 0) return;
  tt_buf_append(b, "  ", 2);
  memmove(b->data + w + 2, b->data + w, b->len - 2 - w);
  memcpy(b->data + w, "\\%", 2);
}

/* The end of a span opened at s[i] by `delim`, or n when it is not closed. */
static size_t tt_man_span_end(const char *s, size_t i, size_t n, char delim) {
  for (size_t j = i + 1; j < n; j++) {
    if (delim == '*' && s[j] == '\\' && j + 1 < n) {
      j++;
      continue;
    }
    if (s[j] == delim) return j;
  }
  return n;
}

/* Renders s[0..n) (no paragraph breaks in it) with `code` and *italic*. */
static void tt_man_inline(tt_man *m, const char *s, size_t n) {
  tt_buf *b = &m->out;
  for (size_t i = 0; i < n; i++) {
    char c = s[i];
    if (c == '\\' && i + 1 < n && s[i + 1] == '*') { /* a literal star */
      tt_buf_puts(b, m->fmt == TT_MAN_ROFF ? "*" : "\\*");
      i++;
      continue;
    }
    if (c == '`' || (c == '*' && i + 1 < n && s[i + 1] != ' ')) {
      size_t end = tt_man_span_end(s, i, n, c);
      if (end < n) {
        if (m->fmt == TT_MAN_MD && c == '`') {
          tt_buf_append(b, s + i, end - i + 1); /* code as it is */
        } else {
          if (m->fmt == TT_MAN_ROFF && c == '`') tt_man_roff_nohyphen(b);
          tt_buf_puts(b, m->fmt == TT_MAN_MD ? "*" : c == '`' ? "\\fB" : "\\fI");
          for (size_t j = i + 1; j < end; j++) {
            if (s[j] == '\\' && j + 1 < end && s[j + 1] == '*') {
              tt_buf_puts(b, m->fmt == TT_MAN_ROFF ? "*" : "\\*");
              j++;
            } else if (m->fmt == TT_MAN_ROFF) tt_man_roff_char(b, s, j, end, true);
            else tt_man_md_char(b, s[j]);
          }
          tt_buf_puts(b, m->fmt == TT_MAN_MD ? "*" : "\\fR");
        }
        i = end;
        continue;
      }
    }
    if (m->fmt == TT_MAN_ROFF) tt_man_roff_char(b, s, i, n, false);
    else tt_man_md_char(b, c);
  }
}

/* ---- blocks ------------------------------------------------------------- */

/* How a block of text sits: under a section heading, or in the body of a
 * tagged paragraph (an option) whose first paragraph follows the tag. */
typedef enum tt_man_where { TT_MAN_TOP, TT_MAN_ITEM } tt_man_where;

static bool tt_man_is_example(const char *line, size_t n) {
  return n >= 4 && strncmp(line, "    ", 4) == 0;
}

/* Example lines (each starting with four spaces) as they are. */
static void tt_man_example(tt_man *m, const char *const *lines, const size_t *lens, size_t k,
                           tt_man_where where) {
  tt_buf *b = &m->out;
  if (m->fmt == TT_MAN_ROFF) {
    tt_buf_puts(b, where == TT_MAN_ITEM ? ".IP\n.nf\n" : ".PP\n.RS 4\n.nf\n");
    for (size_t i = 0; i < k; i++) {
      for (size_t j = 4; j < lens[i]; j++) tt_man_roff_char(b, lines[i], j, lens[i], true);
      tt_buf_putc(b, '\n');
    }
    tt_buf_puts(b, where == TT_MAN_ITEM ? ".fi\n" : ".fi\n.RE\n");
  } else {
    const char *pad = where == TT_MAN_ITEM ? "  " : "";
    tt_buf_printf(b, "%s```\n", pad);
    for (size_t i = 0; i < k; i++) tt_buf_printf(b, "%s%.*s\n", pad, (int)(lens[i] - 4), lines[i] + 4);
    tt_buf_printf(b, "%s```\n\n", pad);
  }
}

/* Text in the markup: paragraphs separated by blank lines, example lines
 * indented by four spaces. first_mark: whether the first paragraph needs
 * its mark (.PP, .IP; an indent in a Markdown list item); roff's first
 * paragraph right after a .TP tag does not. */
static void tt_man_text(tt_man *m, const char *text, tt_man_where where, bool first_mark) {
  enum { TT_MAN_LINES = 256 };
  const char *lines[TT_MAN_LINES];
  size_t lens[TT_MAN_LINES];
  const char *p = text;
  bool mark = first_mark;
  while (*p) {
    while (*p == '\n') p++; /* blank lines between blocks */
    if (!*p) break;
    size_t k = 0;
    bool example = false;
    while (*p && k < TT_MAN_LINES) { /* one block: lines up to a blank line */
      const char *nl = strchr(p, '\n');
      size_t n = nl ? (size_t)(nl - p) : strlen(p);
      if (n == 0) break;
      if (k == 0) example = tt_man_is_example(p, n);
      else if (tt_man_is_example(p, n) != example) break; /* an example starts or ends */
      lines[k] = p;
      lens[k++] = n;
      p += n + (nl ? 1 : 0);
    }
    if (example) {
      tt_man_example(m, lines, lens, k, where);
      mark = true;
      continue;
    }
    tt_buf *b = &m->out;
    if (m->fmt == TT_MAN_ROFF && mark) tt_buf_puts(b, where == TT_MAN_ITEM ? ".IP\n" : ".PP\n");
    if (m->fmt == TT_MAN_MD && where == TT_MAN_ITEM && mark) tt_buf_puts(b, "  ");
    tt_buf para = TT_BUF_INIT; /* one paragraph: its lines joined (a span may cross them) */
    for (size_t i = 0; i < k; i++) {
      tt_buf_append(&para, lines[i], lens[i]);
      if (i + 1 < k) tt_buf_putc(&para, m->fmt == TT_MAN_MD ? ' ' : '\n');
    }
    tt_man_inline(m, para.data, para.len);
    tt_buf_free(&para);
    tt_buf_puts(b, m->fmt == TT_MAN_MD ? "\n\n" : "\n");
    mark = true;
  }
}

/* A tagged paragraph: TAG (markup), then its body. */
static void tt_man_item(tt_man *m, const char *tag, const char *body) {
  if (m->fmt == TT_MAN_ROFF) {
    tt_buf_puts(&m->out, ".TP\n");
    tt_man_inline(m, tag, strlen(tag));
    tt_buf_putc(&m->out, '\n');
  } else {
    tt_buf_puts(&m->out, "- ");
    tt_man_inline(m, tag, strlen(tag));
    tt_buf_puts(&m->out, "\n\n");
  }
  tt_man_text(m, body, TT_MAN_ITEM, m->fmt == TT_MAN_MD);
}

static void tt_man_heading(tt_man *m, int level, const char *title) {
  if (m->fmt == TT_MAN_ROFF) {
    tt_buf_printf(&m->out, "%s \"", level == 1 ? ".SH" : ".SS");
    size_t n = strlen(title);
    for (size_t i = 0; i < n; i++) {
      if (title[i] == '"') tt_buf_puts(&m->out, "\\(dq");
      else tt_man_roff_char(&m->out, title, i, n, false);
    }
    tt_buf_puts(&m->out, "\"\n");
  } else {
    tt_buf_printf(&m->out, "%s ", level == 1 ? "##" : "###");
    tt_man_inline(m, title, strlen(title));
    tt_buf_puts(&m->out, "\n\n");
  }
}

/* ---- options ------------------------------------------------------------ */

/* "`-f`, `--format` *FMT*" (a value of a few words: "`x`|`y`|`none`"). */
static void tt_man_opt_tag(tt_buf *t, const tt_opt *o) {
  if (o->short_name) tt_buf_printf(t, "`-%c`, ", o->short_name);
  tt_buf_printf(t, "`--%s`", o->name);
  if (o->arg == TT_ARG_NONE) return;
  const char *meta = o->meta ? o->meta : "VALUE";
  if (o->arg == TT_ARG_OPTIONAL) tt_buf_puts(t, "[=");
  else tt_buf_putc(t, ' ');
  if (strchr(meta, '|')) {
    for (const char *w = meta; *w;) {
      size_t n = strcspn(w, "|");
      tt_buf_printf(t, "`%.*s`", (int)n, w);
      w += n;
      if (*w) tt_buf_putc(t, *w++);
    }
  } else {
    tt_buf_printf(t, "*%s*", meta);
  }
  if (o->arg == TT_ARG_OPTIONAL) tt_buf_putc(t, ']');
}

static void tt_man_options(tt_man *m, const char *cmd, const tt_opt_group *g) {
  for (const tt_opt *o = g->opts; o->name; o++) {
    if (!o->doc || !*o->doc) {
      tt_buf_printf(&m->problems, "option --%s (%s%s) has no doc paragraph\n", o->name,
                    cmd ? "tabletalk " : "group ", cmd ? cmd : g->title);
      continue;
    }
    tt_buf tag = TT_BUF_INIT;
    tt_man_opt_tag(&tag, o);
    tt_man_item(m, tt_buf_cstr(&tag), o->doc);
    tt_buf_free(&tag);
  }
}

static size_t tt_man_shared_index(const tt_man *m, const tt_opt_group *g) {
  for (size_t i = 0; i < m->nshared; i++)
    if (m->shared[i] == g) return i;
  return m->nshared;
}

/* Groups with a title that more than one command uses are documented once,
 * where the template says (@group TITLE); a command names them. */
static void tt_man_find_shared(tt_man *m) {
  for (size_t c = 0; c < m->ncmds; c++) {
    const tt_cmd_spec *s = m->cmds[c].spec;
    for (size_t g = 0; s->groups[g]; g++) {
      const tt_opt_group *gr = s->groups[g];
      if (!gr->title || tt_man_shared_index(m, gr) < m->nshared) continue;
      size_t users = 0;
      for (size_t d = 0; d < m->ncmds; d++)
        for (size_t h = 0; m->cmds[d].spec->groups[h]; h++)
          if (m->cmds[d].spec->groups[h] == gr) users++;
      if (users > 1 && m->nshared < TT_MAN_MAX_GROUPS) m->shared[m->nshared++] = gr;
    }
  }
}

/* ---- generated parts ---------------------------------------------------- */

/* A usage line in the markup: literal words as code, placeholders (DB,
 * FILE, "question", options) in italics, a note in parentheses as text. */
static void tt_man_usage_markup(tt_buf *t, const char *line, size_t n) {
  size_t i = 0;
  while (i < n) {
    if (line[i] == ' ' && i + 2 < n && line[i + 1] == ' ') { /* "   (a note)" */
      while (i < n && line[i] == ' ') i++;
      tt_buf_puts(t, "  ");
      tt_buf_append(t, line + i, n - i);
      return;
    }
    size_t w = i;
    while (w < n && (strchr("-_.:", line[w]) || (line[w] >= '0' && line[w] <= '9') ||
                     (line[w] >= 'a' && line[w] <= 'z') || (line[w] >= 'A' && line[w] <= 'Z')))
      w++;
    if (w == i) {
      tt_buf_putc(t, line[i++]);
      continue;
    }
    bool quoted = i > 0 && line[i - 1] == '"';
    bool upper = line[i] >= 'A' && line[i] <= 'Z';
    for (size_t k = i; k < w && upper; k++)
      if (line[k] == '.') break;
      else if (line[k] >= 'a' && line[k] <= 'z') upper = false;
    bool placeholder = quoted || upper || (w - i == 7 && strncmp(line + i, "options", 7) == 0);
    tt_buf_printf(t, placeholder ? "*%.*s*" : "`%.*s`", (int)(w - i), line + i);
    i = w;
  }
}

static void tt_man_synopsis_of(tt_man *m, const tt_cmd_spec *s) {
  for (const char *u = s->usage; *u;) {
    const char *nl = strchr(u, '\n');
    size_t n = nl ? (size_t)(nl - u) : strlen(u);
    if (m->fmt == TT_MAN_MD) {
      tt_buf_printf(&m->out, "%.*s\n", (int)n, u);
    } else {
      tt_buf t = TT_BUF_INIT;
      tt_man_usage_markup(&t, u, n);
      tt_man_inline(m, t.data, t.len);
      tt_buf_puts(&m->out, "\n.br\n");
      tt_buf_free(&t);
    }
    u += n + (nl ? 1 : 0);
  }
}

static void tt_man_synopsis(tt_man *m) {
  if (m->fmt == TT_MAN_MD) tt_buf_puts(&m->out, "```\n");
  for (size_t c = 0; c < m->ncmds; c++) tt_man_synopsis_of(m, m->cmds[c].spec);
  if (m->fmt == TT_MAN_MD) tt_buf_puts(&m->out, "tabletalk [--help | --version]\n```\n\n");
  else tt_buf_puts(&m->out, "\\fBtabletalk\\fR [\\fB\\-\\-help\\fR | \\fB\\-\\-version\\fR]\n");
}

/* "Also the Model, Limits and Database options (OPTIONS)." */
static void tt_man_also(tt_man *m, const tt_cmd_spec *s) {
  size_t total = 0, k = 0;
  for (size_t g = 0; s->groups[g]; g++)
    if (tt_man_shared_index(m, s->groups[g]) < m->nshared) total++;
  if (!total) return;
  tt_buf t = TT_BUF_INIT;
  tt_buf_puts(&t, "Also the ");
  for (size_t g = 0; s->groups[g]; g++) {
    if (tt_man_shared_index(m, s->groups[g]) >= m->nshared) continue;
    k++;
    tt_buf_printf(&t, "%s%s", k == 1 ? "" : k == total ? " and " : ", ", s->groups[g]->title);
  }
  tt_buf_puts(&t, " options (see OPTIONS).");
  tt_man_text(m, tt_buf_cstr(&t), TT_MAN_TOP, true);
  tt_buf_free(&t);
}

static void tt_man_command(tt_man *m, const tt_command *c) {
  const tt_cmd_spec *s = c->spec;
  char title[128];
  snprintf(title, sizeof title, "tabletalk %s", c->name);
  tt_man_heading(m, 2, title);
  if (m->fmt == TT_MAN_ROFF) tt_buf_puts(&m->out, ".nf\n");
  else tt_buf_puts(&m->out, "```\n");
  tt_man_synopsis_of(m, s);
  if (m->fmt == TT_MAN_ROFF) tt_buf_puts(&m->out, ".fi\n");
  else tt_buf_puts(&m->out, "```\n\n");
  if (!s->doc || !*s->doc) tt_buf_printf(&m->problems, "command %s has no doc\n", c->name);
  else tt_man_text(m, s->doc, TT_MAN_TOP, true);
  for (size_t g = 0; s->groups[g]; g++) {
    const tt_opt_group *gr = s->groups[g];
    if (tt_man_shared_index(m, gr) < m->nshared) continue;
    if (gr->title) {
      char head[96];
      snprintf(head, sizeof head, "%s options:", gr->title);
      tt_man_text(m, head, TT_MAN_TOP, true);
    }
    tt_man_options(m, c->name, gr);
  }
  tt_man_also(m, s);
}

static void tt_man_group(tt_man *m, const char *title) {
  for (size_t i = 0; i < m->nshared; i++) {
    if (strcmp(m->shared[i]->title, title) != 0) continue;
    if (m->shared_done[i]) tt_buf_printf(&m->problems, "@group %s: given twice\n", title);
    m->shared_done[i] = true;
    /* which commands take them */
    tt_buf t = TT_BUF_INIT;
    tt_buf_puts(&t, "For ");
    size_t k = 0;
    for (size_t c = 0; c < m->ncmds; c++)
      for (size_t g = 0; m->cmds[c].spec->groups[g]; g++)
        if (m->cmds[c].spec->groups[g] == m->shared[i])
          tt_buf_printf(&t, "%s`%s`", k++ ? ", " : "", m->cmds[c].name);
    tt_buf_puts(&t, ".");
    tt_man_text(m, tt_buf_cstr(&t), TT_MAN_TOP, true);
    tt_buf_free(&t);
    tt_man_options(m, NULL, m->shared[i]);
    return;
  }
  tt_buf_printf(&m->problems, "@group %s: no option group of several commands has that title\n",
                title);
}

/* @th NAME SECTION "DATE" "MANUAL" */
static void tt_man_title(tt_man *m, const char *args) {
  char name[64] = "", section[16] = "", date[64] = "", manual[64] = "";
  if (sscanf(args, "%63s %15s \"%63[^\"]\" \"%63[^\"]\"", name, section, date, manual) != 4) {
    tt_buf_printf(&m->problems, "@th wants NAME SECTION \"DATE\" \"MANUAL\", not: %s\n", args);
    return;
  }
  if (m->fmt == TT_MAN_ROFF) {
    tt_buf_printf(&m->out,
                  ".\\\" %s.%s: generated from the option tables (src/cli) and\n"
                  ".\\\" docs/reference/tabletalk.1.in by `tabletalk --generate-man-page`.\n"
                  ".TH %s %s \"%s\" \"tabletalk %s\" \"%s\"\n",
                  "tabletalk", section, name, section, date, TT_VERSION, manual);
  } else {
    tt_buf_printf(&m->out,
                  "# tabletalk(%s)\n\n"
                  "<!-- Generated from the option tables (src/cli) and docs/reference/tabletalk.1.in\n"
                  "     by `tabletalk --generate-man-page markdown`: edit those, not this file. -->\n\n"
                  "The manual page of `tabletalk`, as `man tabletalk` shows it.\n\n",
                  section);
  }
}

/* ---- the template ------------------------------------------------------- */

static void tt_man_flush(tt_man *m, tt_buf *para) {
  if (para->len) tt_man_text(m, tt_buf_cstr(para), TT_MAN_TOP, true);
  tt_buf_reset(para);
}

static void tt_man_template(tt_man *m, const char *tpl) {
  tt_buf para = TT_BUF_INIT, term = TT_BUF_INIT;
  bool in_term = false;
  for (const char *p = tpl; *p;) {
    const char *nl = strchr(p, '\n');
    size_t n = nl ? (size_t)(nl - p) : strlen(p);
    char *line = tt_xstrndup(p, n);
    p += n + (nl ? 1 : 0);
    bool directive = line[0] == '#' || line[0] == '@' || (line[0] == ':' && line[1] == ' ');
    if (line[0] == '%') {
      free(line);
      continue;
    }
    if (in_term && (n == 0 || directive)) { /* a tagged paragraph ends */
      tt_man_item(m, tt_buf_cstr(&term), tt_buf_cstr(&para));
      tt_buf_reset(&para);
      in_term = false;
    }
    if (directive) tt_man_flush(m, &para);
    if (strncmp(line, "## ", 3) == 0) tt_man_heading(m, 2, line + 3);
    else if (strncmp(line, "# ", 2) == 0) tt_man_heading(m, 1, line + 2);
    else if (strncmp(line, "@th ", 4) == 0) tt_man_title(m, line + 4);
    else if (strcmp(line, "@synopsis") == 0) tt_man_synopsis(m);
    else if (strcmp(line, "@commands") == 0)
      for (size_t c = 0; c < m->ncmds; c++) tt_man_command(m, &m->cmds[c]);
    else if (strncmp(line, "@group ", 7) == 0) tt_man_group(m, line + 7);
    else if (strcmp(line, "@help") == 0) {
      tt_opt_group help = {NULL, false, tt_opts_help_opt};
      tt_man_options(m, "(every command)", &help);
    } else if (line[0] == '@') tt_buf_printf(&m->problems, "unknown directive: %s\n", line);
    else if (line[0] == ':' && line[1] == ' ') {
      tt_buf_reset(&term);
      tt_buf_puts(&term, line + 2);
      in_term = true;
    } else { /* a line of a paragraph or an example; blank lines kept */
      tt_buf_puts(&para, line);
      tt_buf_putc(&para, '\n');
    }
    free(line);
  }
  if (in_term) tt_man_item(m, tt_buf_cstr(&term), tt_buf_cstr(&para));
  else tt_man_flush(m, &para);
  tt_buf_free(&para);
  tt_buf_free(&term);
  for (size_t i = 0; i < m->nshared; i++)
    if (!m->shared_done[i])
      tt_buf_printf(&m->problems, "the template has no \"@group %s\" (options of several commands)\n",
                    m->shared[i]->title);
}

static char *tt_man_read(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  tt_buf b = TT_BUF_INIT;
  char chunk[4096];
  size_t n;
  while ((n = fread(chunk, 1, sizeof chunk, f)) > 0) tt_buf_append(&b, chunk, n);
  bool bad = ferror(f);
  fclose(f);
  if (bad) {
    tt_buf_free(&b);
    return NULL;
  }
  return tt_buf_detach(&b);
}

/* Writes the page to path whole or not at all (a temporary file renamed
 * over it, so that a failed build leaves no half page behind). */
static int tt_man_write_file(const char *path, tt_buf *page) {
  char *tmp = tt_xasprintf("%s.tmp", path);
  FILE *f = fopen(tmp, "wb");
  bool ok = f && fwrite(page->data, 1, page->len, f) == page->len;
  if (f && fclose(f) != 0) ok = false;
  if (ok && rename(tmp, path) != 0) ok = false;
  int rc = ok ? TT_EXIT_OK : tt_fail(TT_EXIT_FAIL, "cannot write %s: %s", path, strerror(errno));
  if (!ok) remove(tmp);
  free(tmp);
  return rc;
}

int tt_cli_man_main(int argc, char **argv) {
  if (argc < 3 || argc > 4 || (strcmp(argv[1], "roff") != 0 && strcmp(argv[1], "markdown") != 0)) {
    fprintf(stderr, "usage: tabletalk --generate-man-page roff|markdown TEMPLATE [OUT]\n");
    return TT_EXIT_USAGE;
  }
  char *tpl = tt_man_read(argv[2]);
  if (!tpl) return tt_fail(TT_EXIT_FAIL, "cannot read %s: %s", argv[2], strerror(errno));
  tt_man m = {.fmt = strcmp(argv[1], "roff") == 0 ? TT_MAN_ROFF : TT_MAN_MD,
              .out = TT_BUF_INIT, .problems = TT_BUF_INIT};
  m.cmds = tt_cli_commands(&m.ncmds);
  tt_man_find_shared(&m);
  tt_man_template(&m, tpl);
  free(tpl);
  int rc = TT_EXIT_OK;
  if (m.problems.len) {
    fprintf(stderr, "tabletalk --generate-man-page: the manual is incomplete:\n%s",
            tt_buf_cstr(&m.problems));
    rc = TT_EXIT_FAIL;
  } else {
    /* Markdown: no blank line at the very end */
    while (m.fmt == TT_MAN_MD && m.out.len > 1 && m.out.data[m.out.len - 1] == '\n' &&
           m.out.data[m.out.len - 2] == '\n')
      m.out.len--;
    rc = argc == 4 ? tt_man_write_file(argv[3], &m.out) : tt_write_result(stdout, &m.out);
  }
  tt_buf_free(&m.out);
  tt_buf_free(&m.problems);
  return rc;
}
