/* text.c — how wide a piece of text is, in pixels, for the layout: cairo's
 * own metrics of the chart font when cairo can be loaded (so the PNG is
 * laid out for the glyphs it draws, and the SVG gets the same layout), or
 * an estimate from character classes when it cannot. */
#include "chart/cairo_api.h"

#include <stdlib.h>
#include <string.h>

struct tt_text_metrics {
  const tt_cairo_api *cr_api;
  cairo_surface_t *surface;
  cairo_t *cr;
  double size;  /* what the context is set to */
  int bold;     /* -1: nothing selected yet */
};

tt_text_metrics *tt_text_metrics_new(void) {
  tt_text_metrics *m = tt_xcalloc(1, sizeof *m);
  m->bold = -1;
  const tt_cairo_api *api = tt_cairo_get(NULL);
  if (api) {
    m->surface = api->image_surface_create(CAIRO_FORMAT_ARGB32, 1, 1);
    m->cr = api->create(m->surface);
    if (api->status(m->cr) == CAIRO_STATUS_SUCCESS) {
      m->cr_api = api;
    } else {
      api->destroy(m->cr);
      api->surface_destroy(m->surface);
      m->cr = NULL;
      m->surface = NULL;
    }
  }
  return m;
}

void tt_text_metrics_free(tt_text_metrics *m) {
  if (!m) return;
  if (m->cr_api) {
    m->cr_api->destroy(m->cr);
    m->cr_api->surface_destroy(m->surface);
  }
  free(m);
}

/* Average advance of DejaVu Sans per character class, in ems. */
static double tt_estimate_em(uint32_t cp) {
  if (cp == ' ') return 0.32;
  if (cp >= '0' && cp <= '9') return 0.64;
  if (cp >= 'a' && cp <= 'z') return cp == 'i' || cp == 'l' || cp == 'j' ? 0.28 : cp == 'm' || cp == 'w' ? 0.9 : 0.58;
  if (cp >= 'A' && cp <= 'Z') return cp == 'I' ? 0.3 : cp == 'M' || cp == 'W' ? 0.95 : 0.7;
  if (cp < 0x80) return 0.42;
  /* East Asian wide scripts and emoji take a whole em */
  if ((cp >= 0x1100 && cp <= 0x115F) || (cp >= 0x2E80 && cp <= 0xA4CF) ||
      (cp >= 0xAC00 && cp <= 0xD7A3) || (cp >= 0xF900 && cp <= 0xFAFF) ||
      (cp >= 0xFF00 && cp <= 0xFF60) || (cp >= 0x1F300 && cp <= 0x1FAFF) || cp >= 0x20000)
    return 1.0;
  return 0.62;
}

double tt_text_width(tt_text_metrics *m, const char *s, double size, bool bold) {
  if (m->cr_api) {
    if (m->bold != (int)bold) {
      m->cr_api->select_font_face(m->cr, TT_CHART_FONT, CAIRO_FONT_SLANT_NORMAL,
                                  bold ? CAIRO_FONT_WEIGHT_BOLD : CAIRO_FONT_WEIGHT_NORMAL);
      m->bold = bold;
      m->size = 0;
    }
    if (m->size != size) {
      m->cr_api->set_font_size(m->cr, size);
      m->size = size;
    }
    cairo_text_extents_t e;
    m->cr_api->text_extents(m->cr, s, &e);
    return e.x_advance;
  }
  double em = 0;
  size_t n = strlen(s);
  for (size_t i = 0; i < n;) {
    uint32_t cp;
    size_t k = tt_utf8_decode((const unsigned char *)s + i, n - i, &cp);
    if (!k) k = 1, cp = 0xFFFD;
    em += tt_estimate_em(cp);
    i += k;
  }
  return em * size * (bold ? 1.07 : 1);
}
