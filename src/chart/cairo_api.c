/* cairo_api.c — loading cairo on first use with dlopen (see cairo_api.h),
 * once per process. The loaded table is the one piece of process-wide
 * state of the chart layer: written once under pthread_once, read-only
 * after, like curl_api.c's. */
#include "chart/cairo_api.h"

#include <pthread.h>
#include <string.h>

static tt_cairo_api tt_cairo_loaded;
static const tt_cairo_api *tt_cairo_ready;
static tt_error tt_cairo_error;
static pthread_once_t tt_cairo_once = PTHREAD_ONCE_INIT;

static void tt_cairo_load(void) {
  static const char *const files[] = {"libcairo.so.2", "libcairo.so", NULL};
  const tt_dl_sym syms[] = {
      {"image_surface_create", &tt_cairo_loaded.image_surface_create},
      {"surface_write_to_png", &tt_cairo_loaded.surface_write_to_png},
      {"surface_status", &tt_cairo_loaded.surface_status},
      {"surface_destroy", &tt_cairo_loaded.surface_destroy},
      {"create", &tt_cairo_loaded.create},
      {"destroy", &tt_cairo_loaded.destroy},
      {"status", &tt_cairo_loaded.status},
      {"status_to_string", &tt_cairo_loaded.status_to_string},
      {"set_source_rgba", &tt_cairo_loaded.set_source_rgba},
      {"set_line_width", &tt_cairo_loaded.set_line_width},
      {"set_line_join", &tt_cairo_loaded.set_line_join},
      {"set_line_cap", &tt_cairo_loaded.set_line_cap},
      {"rectangle", &tt_cairo_loaded.rectangle},
      {"move_to", &tt_cairo_loaded.move_to},
      {"line_to", &tt_cairo_loaded.line_to},
      {"arc", &tt_cairo_loaded.arc},
      {"close_path", &tt_cairo_loaded.close_path},
      {"new_path", &tt_cairo_loaded.new_path},
      {"new_sub_path", &tt_cairo_loaded.new_sub_path},
      {"fill", &tt_cairo_loaded.fill},
      {"fill_preserve", &tt_cairo_loaded.fill_preserve},
      {"stroke", &tt_cairo_loaded.stroke},
      {"save", &tt_cairo_loaded.save},
      {"restore", &tt_cairo_loaded.restore},
      {"translate", &tt_cairo_loaded.translate},
      {"rotate", &tt_cairo_loaded.rotate},
      {"select_font_face", &tt_cairo_loaded.select_font_face},
      {"set_font_size", &tt_cairo_loaded.set_font_size},
      {"text_extents", &tt_cairo_loaded.text_extents},
      {"show_text", &tt_cairo_loaded.show_text},
  };
  char why[200];
  switch (tt_dl_load(files, "cairo_", syms, sizeof syms / sizeof syms[0], why, sizeof why)) {
  case TT_DL_NO_LIBRARY:
    tt_error_set(&tt_cairo_error, TT_ERR_UNAVAILABLE, "cannot load cairo (%s)", why);
    tt_error_hint(&tt_cairo_error, "install it with: apt-get install libcairo2, or write SVG "
                  "instead (--out chart.svg)");
    return;
  case TT_DL_NO_SYMBOL:
    tt_error_set(&tt_cairo_error, TT_ERR_UNAVAILABLE, "libcairo lacks %s", why);
    tt_error_hint(&tt_cairo_error, "install cairo 1.16 or later");
    return;
  case TT_DL_OK: break;
  }
  tt_cairo_ready = &tt_cairo_loaded; /* the library stays loaded for good */
}

const tt_cairo_api *tt_cairo_get(tt_error *err) {
  pthread_once(&tt_cairo_once, tt_cairo_load);
  if (!tt_cairo_ready && err) *err = tt_cairo_error;
  return tt_cairo_ready;
}
