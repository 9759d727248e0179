/* printf_guard.c — printf() and format() with a checked width and precision.
 *
 * SQLite 3.40 spends about 8 s inside one opcode on printf('%.*c',
 * 2000000000, 'x'), where the progress handler cannot stop it, and returns
 * NULL silently for printf('%2000000000d', 1). This replacement parses the
 * format the way SQLite's printf does, refuses any width or precision above
 * SQLITE_LIMIT_LENGTH, and formats each conversion through SQLite's own
 * engine (sqlite3_str_appendf), so results match the built-in function. */
#include "db/sqlite/sqlite.h"

#include <stdlib.h>
#include <string.h>

typedef struct tt_fmt_args {
  int argc;
  sqlite3_value **argv;
  int next; /* next argument to consume (argv[0] is the format) */
} tt_fmt_args;

static sqlite3_int64 tt_arg_int(tt_fmt_args *a) {
  return a->next < a->argc ? sqlite3_value_int64(a->argv[a->next++]) : 0;
}

static double tt_arg_double(tt_fmt_args *a) {
  return a->next < a->argc ? sqlite3_value_double(a->argv[a->next++]) : 0.0;
}

static const char *tt_arg_text(tt_fmt_args *a) {
  return a->next < a->argc ? (const char *)sqlite3_value_text(a->argv[a->next++])
                           : NULL;
}

/* One parsed conversion: flags, width, precision and the conversion letter. */
typedef struct tt_conv {
  char flags[16];
  long long width;     /* >= 0 */
  bool has_prec;
  long long precision; /* >= 0 when has_prec */
  char type;
} tt_conv;

/* Number from digits, saturating well above any limit we compare with. */
static long long tt_parse_digits(const char **pp) {
  const char *p = *pp;
  long long v = 0;
  while (*p >= '0' && *p <= '9') {
    if (v < 100000000000LL) v = v * 10 + (*p - '0');
    p++;
  }
  *pp = p;
  return v;
}

static void tt_add_flag(tt_conv *c, char f) {
  size_t n = strlen(c->flags);
  if (n + 1 < sizeof c->flags && !strchr(c->flags, f)) {
    c->flags[n] = f;
    c->flags[n + 1] = '\0';
  }
}

/* Parses the conversion after '%'. Returns the position after it. */
static const char *tt_parse_conv(const char *p, tt_fmt_args *a, tt_conv *c) {
  memset(c, 0, sizeof *c);
  while (*p && strchr("-+ #0!,", *p)) tt_add_flag(c, *p++);
  if (*p == '*') {
    long long w = (int)tt_arg_int(a); /* SQLite truncates to int as well */
    if (w < 0) {
      tt_add_flag(c, '-');
      w = -w;
    }
    c->width = w;
    p++;
  } else {
    c->width = tt_parse_digits(&p);
  }
  if (*p == '.') {
    p++;
    c->has_prec = true;
    if (*p == '*') {
      long long pr = (int)tt_arg_int(a);
      c->precision = pr < 0 ? -pr : pr;
      p++;
    } else {
      c->precision = tt_parse_digits(&p);
    }
  }
  if (*p == 'l') p++; /* "l" and "ll" are accepted and mean nothing here */
  if (*p == 'l') p++;
  c->type = *p;
  return *p ? p + 1 : p;
}

/* Builds "%<flags>*[.*]<len><type>" for sqlite3_str_appendf. */
static void tt_conv_format(const tt_conv *c, const char *len, char type,
                           char *out, size_t cap) {
  snprintf(out, cap, "%%%s*%s%s%c", c->flags, c->has_prec ? ".*" : "", len, type);
}

/* %c: the first UTF-8 character of the argument, repeated precision times,
 * padded with spaces to width characters. */
static void tt_format_char(sqlite3_str *out, const tt_conv *c, tt_fmt_args *a) {
  const char *s = tt_arg_text(a);
  char ch[4] = {0};
  size_t len = 1;
  if (s && s[0]) {
    ch[0] = s[0];
    if (((unsigned char)s[0] & 0xC0) == 0xC0)
      while (len < 4 && ((unsigned char)s[len] & 0xC0) == 0x80) {
        ch[len] = s[len];
        len++;
      }
  }
  long long count = c->has_prec && c->precision > 1 ? c->precision : 1;
  long long pad = c->width > count ? c->width - count : 0;
  bool left = strchr(c->flags, '-') != NULL;
  if (!left && pad) sqlite3_str_appendchar(out, (int)pad, ' ');
  if (len == 1) {
    sqlite3_str_appendchar(out, (int)count, ch[0]);
  } else {
    /* Repeat a multi-byte character by doubling: a few large copies
     * rather than up to a million small appends inside one opcode. */
    size_t want = (size_t)count * len, have = len;
    char *rep = tt_xmalloc(want);
    memcpy(rep, ch, len);
    while (have < want) {
      size_t n = have <= want - have ? have : want - have;
      memcpy(rep + have, rep, n);
      have += n;
    }
    sqlite3_str_append(out, rep, (int)want);
    free(rep);
  }
  if (left && pad) sqlite3_str_appendchar(out, (int)pad, ' ');
}

static void tt_format_one(sqlite3_str *out, const tt_conv *c, tt_fmt_args *a) {
  char fmt[40];
  int w = (int)c->width, pr = (int)c->precision;
  switch (c->type) {
  case 'p': {
    /* %p is upper-case hex with a lower-case "0x" prefix under '#': format
     * as %X and lower the prefix (the only 'X' in the output). */
    sqlite3_int64 v = tt_arg_int(a);
    tt_conv_format(c, "ll", 'X', fmt, sizeof fmt);
    char *s = c->has_prec ? sqlite3_mprintf(fmt, w, pr, v) : sqlite3_mprintf(fmt, w, v);
    if (s) {
      char *x = strchr(s, 'X');
      if (x) *x = 'x';
      sqlite3_str_appendall(out, s);
      sqlite3_free(s);
    }
    break;
  }
  case 'd': case 'i': case 'u': case 'x': case 'X': case 'o': case 'r': {
    sqlite3_int64 v = tt_arg_int(a);
    tt_conv_format(c, "ll", c->type, fmt, sizeof fmt);
    if (c->has_prec) sqlite3_str_appendf(out, fmt, w, pr, v);
    else sqlite3_str_appendf(out, fmt, w, v);
    break;
  }
  case 'f': case 'e': case 'E': case 'g': case 'G': {
    double v = tt_arg_double(a);
    tt_conv_format(c, "", c->type, fmt, sizeof fmt);
    if (c->has_prec) sqlite3_str_appendf(out, fmt, w, pr, v);
    else sqlite3_str_appendf(out, fmt, w, v);
    break;
  }
  case 's': case 'z': case 'q': case 'Q': case 'w': {
    const char *v = tt_arg_text(a);
    tt_conv_format(c, "", c->type == 'z' ? 's' : c->type, fmt, sizeof fmt);
    if (c->has_prec) sqlite3_str_appendf(out, fmt, w, pr, v);
    else sqlite3_str_appendf(out, fmt, w, v);
    break;
  }
  case '%':
    tt_conv_format(c, "", '%', fmt, sizeof fmt);
    if (c->has_prec) sqlite3_str_appendf(out, fmt, w, pr);
    else sqlite3_str_appendf(out, fmt, w);
    break;
  case 'c':
    tt_format_char(out, c, a);
    break;
  default:
    break;
  }
}

static void tt_checked_printf(sqlite3_context *ctx, int argc, sqlite3_value **argv) {
  const char *fmt = argc >= 1 ? (const char *)sqlite3_value_text(argv[0]) : NULL;
  if (!fmt) {
    sqlite3_result_null(ctx);
    return;
  }
  sqlite3 *h = sqlite3_context_db_handle(ctx);
  long long limit = sqlite3_limit(h, SQLITE_LIMIT_LENGTH, -1);
  tt_fmt_args a = {argc, argv, 1};
  long long budget = limit; /* all widths and precisions together */
  sqlite3_str *out = sqlite3_str_new(h);
  bool touched = false; /* the built-in returns '' rather than NULL once a
                           conversion ran, even one that printed nothing */
  const char *p = fmt;
  while (*p) {
    const char *pct = strchr(p, '%');
    size_t lit = pct ? (size_t)(pct - p) : strlen(p);
    if (lit) {
      sqlite3_str_append(out, p, (int)lit);
      touched = true;
    }
    if (!pct) break;
    p = pct + 1;
    if (!*p) { /* a lone '%' at the end is printed as is */
      sqlite3_str_append(out, "%", 1);
      break;
    }
    tt_conv c;
    p = tt_parse_conv(p, &a, &c);
    /* One conversion can work long without printing much (%.900000g), so
     * the widths and precisions of the whole format share the limit. */
    budget -= c.width + (c.has_prec ? c.precision : 0);
    if (c.width > limit || (c.has_prec && c.precision > limit) || budget < 0) {
      char *msg = sqlite3_mprintf(
          "printf(): the widths and precisions (%lld) are above the length limit of "
          "%lld bytes", limit - budget, limit);
      sqlite3_result_error(ctx, msg ? msg : "printf(): width too large", -1);
      sqlite3_result_error_code(ctx, SQLITE_TOOBIG);
      sqlite3_free(msg);
      sqlite3_free(sqlite3_str_finish(out));
      return;
    }
    if (!strchr("diuxXoprfeEgGszqQw%cn", c.type) || c.type == 0)
      break; /* SQLite stops at an unknown conversion */
    touched = true;
    if (c.type != 'n') tt_format_one(out, &c, &a); /* %n prints nothing in SQL */
    if (sqlite3_str_errcode(out) != SQLITE_OK) break;
  }
  int rc = sqlite3_str_errcode(out);
  int len = sqlite3_str_length(out);
  char *text = sqlite3_str_finish(out);
  if (rc == SQLITE_TOOBIG) {
    sqlite3_result_error_toobig(ctx);
  } else if (rc == SQLITE_NOMEM) {
    sqlite3_result_error_nomem(ctx);
  } else if (!text) {
    if (touched) sqlite3_result_text(ctx, "", 0, SQLITE_STATIC);
    else sqlite3_result_null(ctx); /* as the built-in: NULL for no output */
  } else {
    sqlite3_result_text(ctx, text, len, sqlite3_free);
    return;
  }
  sqlite3_free(text);
}

int tt_printf_guard_register(sqlite3 *h) {
  const int flags = SQLITE_UTF8 | SQLITE_DETERMINISTIC | SQLITE_INNOCUOUS;
  int rc = sqlite3_create_function_v2(h, "printf", -1, flags, NULL,
                                      tt_checked_printf, NULL, NULL, NULL);
  if (rc == SQLITE_OK)
    rc = sqlite3_create_function_v2(h, "format", -1, flags, NULL,
                                    tt_checked_printf, NULL, NULL, NULL);
  return rc;
}
