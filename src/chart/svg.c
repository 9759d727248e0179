/* svg.c — the SVG renderer: the shared layout (draw.c) written as SVG 1.1
 * elements, text as <text> (selectable, searchable), every string escaped
 * for XML; and writing a chart file by its extension. */
#include "chart/chart_internal.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Coordinates with two decimals, trailing zeros dropped (written by hand:
 * a chart has tens of thousands of them and printf is slow). */
static void tt_svg_num(tt_buf *b, double v) {
  if (!isfinite(v) || fabs(v) > 1e12) v = 0; /* never on a canvas this size */
  long long c = llround(v * 100);
  char s[32], *p = s + sizeof s;
  bool neg = c < 0;
  unsigned long long u = neg ? (unsigned long long)(-c) : (unsigned long long)c;
  unsigned frac = (unsigned)(u % 100);
  u /= 100;
  if (frac) {
    if (frac % 10) *--p = (char)('0' + frac % 10);
    *--p = (char)('0' + frac / 10);
    *--p = '.';
  }
  do *--p = (char)('0' + u % 10); while (u /= 10);
  if (neg) *--p = '-';
  tt_buf_append(b, p, (size_t)(s + sizeof s - p));
}

static void tt_svg_attr(tt_buf *b, const char *name, double v) {
  tt_buf_printf(b, " %s=\"", name);
  tt_svg_num(b, v);
  tt_buf_putc(b, '"');
}

static void tt_svg_paint(tt_buf *b, const char *what, tt_rgba c) {
  tt_buf_printf(b, " %s=\"#%06X\"", what, (unsigned)(c.rgb & 0xFFFFFF));
  if (c.a < 1) {
    tt_buf_printf(b, " %s-opacity=\"", what);
    tt_svg_num(b, c.a);
    tt_buf_putc(b, '"');
  }
}

/* Text for XML: markup characters as entities, characters XML 1.0 does
 * not allow left out (the model already replaced control characters). */
static void tt_svg_text_escape(tt_buf *b, const char *s) {
  size_t n = strlen(s);
  for (size_t i = 0; i < n;) {
    uint32_t cp;
    size_t k = tt_utf8_decode((const unsigned char *)s + i, n - i, &cp);
    if (!k) {
      tt_buf_puts(b, "\xEF\xBF\xBD");
      i++;
      continue;
    }
    switch (cp) {
    case '&': tt_buf_puts(b, "&amp;"); break;
    case '<': tt_buf_puts(b, "&lt;"); break;
    case '>': tt_buf_puts(b, "&gt;"); break;
    case '"': tt_buf_puts(b, "&quot;"); break;
    default:
      if ((cp < 0x20 && cp != '\t') || cp == 0xFFFE || cp == 0xFFFF) tt_buf_putc(b, ' ');
      else tt_buf_append(b, s + i, k);
    }
    i += k;
  }
}

static void tt_svg_rect(void *ud, double x, double y, double w, double h, tt_rgba fill) {
  tt_buf *b = ud;
  tt_buf_puts(b, "<rect");
  tt_svg_attr(b, "x", x);
  tt_svg_attr(b, "y", y);
  tt_svg_attr(b, "width", w);
  tt_svg_attr(b, "height", h);
  tt_svg_paint(b, "fill", fill);
  tt_buf_puts(b, "/>\n");
}

static void tt_svg_line(void *ud, double x0, double y0, double x1, double y1, double width,
                        tt_rgba c) {
  tt_buf *b = ud;
  tt_buf_puts(b, "<line");
  tt_svg_attr(b, "x1", x0);
  tt_svg_attr(b, "y1", y0);
  tt_svg_attr(b, "x2", x1);
  tt_svg_attr(b, "y2", y1);
  tt_svg_paint(b, "stroke", c);
  tt_svg_attr(b, "stroke-width", width);
  if (x0 == x1 || y0 == y1) tt_buf_puts(b, " shape-rendering=\"crispEdges\"");
  tt_buf_puts(b, "/>\n");
}

static void tt_svg_path(void *ud, const double *xy, size_t n, bool closed, tt_rgba fill,
                        double width, tt_rgba stroke) {
  tt_buf *b = ud;
  if (!n) return;
  tt_buf_puts(b, "<path d=\"M");
  for (size_t i = 0; i < n; i++) {
    if (i) tt_buf_puts(b, i == 1 ? " L" : " ");
    else tt_buf_putc(b, ' ');
    tt_svg_num(b, xy[2 * i]);
    tt_buf_putc(b, ' ');
    tt_svg_num(b, xy[2 * i + 1]);
  }
  tt_buf_puts(b, closed ? " Z\"" : "\"");
  if (closed) tt_svg_paint(b, "fill", fill);
  else tt_buf_puts(b, " fill=\"none\"");
  if (width > 0) {
    tt_svg_paint(b, "stroke", stroke);
    tt_svg_attr(b, "stroke-width", width);
    tt_buf_puts(b, " stroke-linejoin=\"round\" stroke-linecap=\"round\"");
  }
  tt_buf_puts(b, "/>\n");
}

static void tt_svg_circle(void *ud, double cx, double cy, double r, tt_rgba fill) {
  tt_buf *b = ud;
  tt_buf_puts(b, "<circle");
  tt_svg_attr(b, "cx", cx);
  tt_svg_attr(b, "cy", cy);
  tt_svg_attr(b, "r", r);
  tt_svg_paint(b, "fill", fill);
  tt_buf_puts(b, "/>\n");
}

static void tt_svg_wedge(void *ud, double cx, double cy, double r, double a0, double a1,
                         tt_rgba fill, tt_rgba edge) {
  tt_buf *b = ud;
  if (a1 - a0 >= 2 * M_PI - 1e-9) { /* the whole pie: an arc cannot end where it starts */
    tt_buf_puts(b, "<circle");
    tt_svg_attr(b, "cx", cx);
    tt_svg_attr(b, "cy", cy);
    tt_svg_attr(b, "r", r);
  } else {
    tt_buf_puts(b, "<path d=\"M ");
    tt_svg_num(b, cx);
    tt_buf_putc(b, ' ');
    tt_svg_num(b, cy);
    tt_buf_puts(b, " L ");
    tt_svg_num(b, cx + r * sin(a0));
    tt_buf_putc(b, ' ');
    tt_svg_num(b, cy - r * cos(a0));
    tt_buf_puts(b, " A ");
    tt_svg_num(b, r);
    tt_buf_putc(b, ' ');
    tt_svg_num(b, r);
    tt_buf_printf(b, " 0 %d 1 ", a1 - a0 > M_PI ? 1 : 0);
    tt_svg_num(b, cx + r * sin(a1));
    tt_buf_putc(b, ' ');
    tt_svg_num(b, cy - r * cos(a1));
    tt_buf_puts(b, " Z\"");
  }
  tt_svg_paint(b, "fill", fill);
  tt_svg_paint(b, "stroke", edge);
  tt_buf_puts(b, " stroke-width=\"1.5\" stroke-linejoin=\"round\"/>\n");
}

static void tt_svg_text(void *ud, double x, double y, const char *s, double size, bool bold,
                        tt_anchor anchor, double angle, tt_rgba c) {
  tt_buf *b = ud;
  tt_buf_puts(b, "<text");
  tt_svg_attr(b, "x", x);
  tt_svg_attr(b, "y", y);
  tt_svg_attr(b, "font-size", size);
  if (bold) tt_buf_puts(b, " font-weight=\"bold\"");
  if (anchor != TT_ANCHOR_START)
    tt_buf_printf(b, " text-anchor=\"%s\"", anchor == TT_ANCHOR_MIDDLE ? "middle" : "end");
  tt_svg_paint(b, "fill", c);
  if (angle != 0) {
    tt_buf_puts(b, " transform=\"rotate(");
    tt_svg_num(b, -angle);
    tt_buf_putc(b, ' ');
    tt_svg_num(b, x);
    tt_buf_putc(b, ' ');
    tt_svg_num(b, y);
    tt_buf_puts(b, ")\"");
  }
  tt_buf_putc(b, '>');
  tt_svg_text_escape(b, s);
  tt_buf_puts(b, "</text>\n");
}

static const tt_canvas_ops tt_svg_ops = {tt_svg_rect, tt_svg_line, tt_svg_path,
                                         tt_svg_circle, tt_svg_wedge, tt_svg_text};

void tt_chart_render_svg(const tt_chart *c, int width, int height, tt_buf *out) {
  tt_buf_printf(out, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
                     "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"%d\" "
                     "height=\"%d\" viewBox=\"0 0 %d %d\" font-family=\"%s, Verdana, Arial, "
                     "sans-serif\">\n<title>", width, height, width, height, TT_CHART_FONT);
  tt_svg_text_escape(out, c->title);
  tt_buf_puts(out, "</title>\n");
  /* the page's dark colour scheme (also inside an <img>): the background,
   * ink, axes and grid by the colours draw.c gives them; series keep theirs */
  tt_buf_puts(out,
              "<style>@media (prefers-color-scheme: dark) {"
              " rect[fill=\"#FFFFFF\"] { fill: #1F2226 }"
              " [stroke=\"#FFFFFF\"] { stroke: #1F2226 }"
              " text[fill=\"#222222\"] { fill: #E6E7E8 }"
              " text[fill=\"#555555\"], text[fill=\"#666666\"] { fill: #A3A8AE }"
              " [stroke=\"#555555\"] { stroke: #A3A8AE }"
              " [stroke=\"#E2E2E2\"] { stroke: #3A3F45 }"
              " [fill=\"#000000\"] { fill: #E6E7E8 } [stroke=\"#000000\"] { stroke: #E6E7E8 }"
              " }</style>\n");
  tt_text_metrics *m = tt_text_metrics_new();
  tt_chart_draw(c, width, height, m, &tt_svg_ops, out);
  tt_text_metrics_free(m);
  tt_buf_puts(out, "</svg>\n");
}

/* Writes all of b to path through a temporary file renamed into place. */
static bool tt_write_whole(const char *path, const tt_buf *b, tt_error *err) {
  char *tmp = tt_xasprintf("%s.tmp-%ld", path, (long)getpid());
  FILE *f = fopen(tmp, "wb");
  bool ok = f != NULL;
  if (ok) {
    ok = fwrite(b->data ? b->data : "", 1, b->len, f) == b->len;
    ok = (fclose(f) == 0) && ok;
    if (ok && rename(tmp, path) != 0) ok = false;
  }
  if (!ok) {
    tt_error_set(err, TT_ERR_IO, "cannot write %s: %s", path, strerror(errno));
    tt_error_hint(err, "check that the folder exists and is writable");
    unlink(tmp);
  }
  free(tmp);
  return ok;
}

bool tt_chart_write_svg(const tt_chart *c, const char *path, int width, int height,
                        tt_error *err) {
  if (!tt_chart_size_ok(width, height, err)) return false;
  tt_buf b = TT_BUF_INIT;
  tt_chart_render_svg(c, width, height, &b);
  bool ok = tt_write_whole(path, &b, err);
  tt_buf_free(&b);
  return ok;
}

bool tt_chart_write_file(const tt_chart *c, const char *path, int width, int height,
                         tt_error *err) {
  if (tt_has_suffix_nocase(path, ".svg")) return tt_chart_write_svg(c, path, width, height, err);
  if (tt_has_suffix_nocase(path, ".png")) return tt_chart_write_png(c, path, width, height, err);
  tt_error_set(err, TT_ERR_CONFIG, "cannot tell the chart format of %s: name the file .png or .svg",
               path);
  return false;
}
