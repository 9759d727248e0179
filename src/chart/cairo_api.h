/* cairo_api.h — cairo, loaded the first time a PNG is drawn or text is
 * measured rather than when the program starts: cairo, fontconfig and
 * freetype cost start-up time that `tabletalk sql` and the MCP server
 * must not pay. Only the functions the chart layer uses are resolved. */
#ifndef TT_CAIRO_API_H
#define TT_CAIRO_API_H

#include <cairo.h>

#include "chart/chart_internal.h"

struct tt_cairo_api {
  cairo_surface_t *(*image_surface_create)(cairo_format_t f, int w, int h);
  cairo_status_t (*surface_write_to_png)(cairo_surface_t *s, const char *path);
  cairo_status_t (*surface_status)(cairo_surface_t *s);
  void (*surface_destroy)(cairo_surface_t *s);
  cairo_t *(*create)(cairo_surface_t *s);
  void (*destroy)(cairo_t *cr);
  cairo_status_t (*status)(cairo_t *cr);
  const char *(*status_to_string)(cairo_status_t st);
  void (*set_source_rgba)(cairo_t *cr, double r, double g, double b, double a);
  void (*set_line_width)(cairo_t *cr, double w);
  void (*set_line_join)(cairo_t *cr, cairo_line_join_t j);
  void (*set_line_cap)(cairo_t *cr, cairo_line_cap_t c);
  void (*rectangle)(cairo_t *cr, double x, double y, double w, double h);
  void (*move_to)(cairo_t *cr, double x, double y);
  void (*line_to)(cairo_t *cr, double x, double y);
  void (*arc)(cairo_t *cr, double xc, double yc, double r, double a1, double a2);
  void (*close_path)(cairo_t *cr);
  void (*new_path)(cairo_t *cr);
  void (*new_sub_path)(cairo_t *cr);
  void (*fill)(cairo_t *cr);
  void (*fill_preserve)(cairo_t *cr);
  void (*stroke)(cairo_t *cr);
  void (*save)(cairo_t *cr);
  void (*restore)(cairo_t *cr);
  void (*translate)(cairo_t *cr, double x, double y);
  void (*rotate)(cairo_t *cr, double a);
  void (*select_font_face)(cairo_t *cr, const char *family, cairo_font_slant_t s,
                           cairo_font_weight_t w);
  void (*set_font_size)(cairo_t *cr, double size);
  void (*text_extents)(cairo_t *cr, const char *utf8, cairo_text_extents_t *e);
  void (*show_text)(cairo_t *cr, const char *utf8);
};

#endif
