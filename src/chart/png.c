/* png.c — the PNG renderer: the shared layout (draw.c) painted with cairo
 * on an image surface, written to a temporary file and renamed into place
 * so that a failed write never leaves half a picture. */
#include "chart/cairo_api.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct tt_png {
  const tt_cairo_api *c;
  cairo_t *cr;
  tt_text_metrics *m;
} tt_png;

static void tt_png_color(tt_png *p, tt_rgba col) {
  p->c->set_source_rgba(p->cr, ((col.rgb >> 16) & 0xFF) / 255.0, ((col.rgb >> 8) & 0xFF) / 255.0,
                        (col.rgb & 0xFF) / 255.0, col.a);
}

static void tt_png_rect(void *ud, double x, double y, double w, double h, tt_rgba fill) {
  tt_png *p = ud;
  p->c->rectangle(p->cr, x, y, w, h);
  tt_png_color(p, fill);
  p->c->fill(p->cr);
}

/* Thin lines along the pixel grid are moved onto pixel centres: crisp. */
static double tt_png_snap(double v, double width) {
  return width <= 1.5 ? floor(v) + 0.5 : v;
}

static void tt_png_line(void *ud, double x0, double y0, double x1, double y1, double width,
                        tt_rgba col) {
  tt_png *p = ud;
  if (y0 == y1) y0 = y1 = tt_png_snap(y0, width);
  if (x0 == x1) x0 = x1 = tt_png_snap(x0, width);
  p->c->move_to(p->cr, x0, y0);
  p->c->line_to(p->cr, x1, y1);
  p->c->set_line_width(p->cr, width);
  tt_png_color(p, col);
  p->c->stroke(p->cr);
}

static void tt_png_path(void *ud, const double *xy, size_t n, bool closed, tt_rgba fill,
                        double width, tt_rgba stroke) {
  tt_png *p = ud;
  if (!n) return;
  p->c->move_to(p->cr, xy[0], xy[1]);
  for (size_t i = 1; i < n; i++) p->c->line_to(p->cr, xy[2 * i], xy[2 * i + 1]);
  if (closed) {
    p->c->close_path(p->cr);
    tt_png_color(p, fill);
    if (width > 0) p->c->fill_preserve(p->cr);
    else p->c->fill(p->cr);
  }
  if (width > 0) {
    p->c->set_line_width(p->cr, width);
    p->c->set_line_join(p->cr, CAIRO_LINE_JOIN_ROUND);
    p->c->set_line_cap(p->cr, CAIRO_LINE_CAP_ROUND);
    tt_png_color(p, stroke);
    p->c->stroke(p->cr);
  }
}

static void tt_png_circle(void *ud, double cx, double cy, double r, tt_rgba fill) {
  tt_png *p = ud;
  p->c->new_sub_path(p->cr);
  p->c->arc(p->cr, cx, cy, r, 0, 2 * M_PI);
  tt_png_color(p, fill);
  p->c->fill(p->cr);
}

static void tt_png_wedge(void *ud, double cx, double cy, double r, double a0, double a1,
                         tt_rgba fill, tt_rgba edge) {
  tt_png *p = ud;
  p->c->move_to(p->cr, cx, cy);
  p->c->arc(p->cr, cx, cy, r, a0 - M_PI / 2, a1 - M_PI / 2); /* cairo: 0 is 3 o'clock */
  p->c->close_path(p->cr);
  tt_png_color(p, fill);
  p->c->fill_preserve(p->cr);
  p->c->set_line_width(p->cr, 1.5);
  p->c->set_line_join(p->cr, CAIRO_LINE_JOIN_ROUND);
  tt_png_color(p, edge);
  p->c->stroke(p->cr);
}

static void tt_png_text(void *ud, double x, double y, const char *s, double size, bool bold,
                        tt_anchor anchor, double angle, tt_rgba col) {
  tt_png *p = ud;
  double w = anchor == TT_ANCHOR_START ? 0 : tt_text_width(p->m, s, size, bold);
  p->c->save(p->cr);
  p->c->select_font_face(p->cr, TT_CHART_FONT, CAIRO_FONT_SLANT_NORMAL,
                         bold ? CAIRO_FONT_WEIGHT_BOLD : CAIRO_FONT_WEIGHT_NORMAL);
  p->c->set_font_size(p->cr, size);
  p->c->translate(p->cr, x, y);
  if (angle != 0) p->c->rotate(p->cr, -angle * M_PI / 180);
  p->c->move_to(p->cr, anchor == TT_ANCHOR_START ? 0 : anchor == TT_ANCHOR_MIDDLE ? -w / 2 : -w, 0);
  tt_png_color(p, col);
  p->c->show_text(p->cr, s);
  p->c->restore(p->cr);
}

static const tt_canvas_ops tt_png_ops = {tt_png_rect, tt_png_line, tt_png_path,
                                         tt_png_circle, tt_png_wedge, tt_png_text};

bool tt_chart_size_ok(int width, int height, tt_error *err) {
  if (width < TT_CHART_MIN_SIDE || height < TT_CHART_MIN_SIDE || width > TT_CHART_MAX_SIDE ||
      height > TT_CHART_MAX_SIDE || (long)width * height > TT_CHART_MAX_PIXELS) {
    tt_error_set(err, TT_ERR_CONFIG, "a chart of %dx%d pixels cannot be drawn: each side must be "
                 "%d to %d pixels and the whole at most %d million pixels (e.g. --size 1200x700)",
                 width, height, TT_CHART_MIN_SIDE, TT_CHART_MAX_SIDE,
                 TT_CHART_MAX_PIXELS / 1000000);
    return false;
  }
  return true;
}

bool tt_chart_png_available(tt_error *err) { return tt_cairo_get(err) != NULL; }

bool tt_chart_write_png(const tt_chart *c, const char *path, int width, int height,
                        tt_error *err) {
  if (!tt_chart_size_ok(width, height, err)) return false;
  const tt_cairo_api *api = tt_cairo_get(err);
  if (!api) return false;
  cairo_surface_t *surface = api->image_surface_create(CAIRO_FORMAT_RGB24, width, height);
  if (api->surface_status(surface) != CAIRO_STATUS_SUCCESS) {
    /* cairo's reasons here are memory and size: a limit */
    tt_error_set(err, TT_ERR_LIMIT, "cairo could not make a %dx%d picture: %s", width, height,
                 api->status_to_string(api->surface_status(surface)));
    api->surface_destroy(surface);
    return false;
  }
  tt_png p = {.c = api, .cr = api->create(surface), .m = tt_text_metrics_new()};
  tt_chart_draw(c, width, height, p.m, &tt_png_ops, &p);
  cairo_status_t st = api->status(p.cr);
  bool ok = st == CAIRO_STATUS_SUCCESS;
  if (!ok)
    tt_error_set(err, TT_ERR_LIMIT, "drawing the chart failed: %s", api->status_to_string(st));
  char *tmp = tt_xasprintf("%s.tmp-%ld", path, (long)getpid());
  if (ok) {
    st = api->surface_write_to_png(surface, tmp);
    if (st != CAIRO_STATUS_SUCCESS) {
      tt_error_set(err, TT_ERR_IO, "cannot write %s: %s", path, api->status_to_string(st));
      tt_error_hint(err, "check that the folder exists and is writable");
      ok = false;
    } else if (rename(tmp, path) != 0) {
      tt_error_set(err, TT_ERR_IO, "cannot write %s: %s", path, strerror(errno));
      ok = false;
    }
  }
  if (!ok) unlink(tmp);
  free(tmp);
  tt_text_metrics_free(p.m);
  api->destroy(p.cr);
  api->surface_destroy(surface);
  return ok;
}
