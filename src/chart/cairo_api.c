/* cairo_api.c — loading cairo on first use with dlopen (see cairo_api.h),
 * once per process. The loaded table is the one piece of process-wide
 * state of the chart layer: written once under pthread_once, read-only
 * after, like curl_api.c's. */
#include "chart/cairo_api.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

static tt_cairo_api tt_cairo_loaded;
static const tt_cairo_api *tt_cairo_ready;
static char tt_cairo_error[256];
static pthread_once_t tt_cairo_once = PTHREAD_ONCE_INIT;

/* Casting a symbol to a function pointer, as dlsym's own documentation
 * does. */
#define TT_RESOLVE(field, name)                                                    \
  do {                                                                             \
    void *sym = dlsym(lib, "cairo_" name);                                         \
    if (!sym) {                                                                    \
      snprintf(tt_cairo_error, sizeof tt_cairo_error, "libcairo lacks cairo_%s; install " \
               "cairo 1.16 or later", name);                                       \
      dlclose(lib);                                                                \
      return;                                                                      \
    }                                                                              \
    memcpy(&tt_cairo_loaded.field, &sym, sizeof sym);                              \
  } while (0)

static void tt_cairo_load(void) {
  void *lib = dlopen("libcairo.so.2", RTLD_LAZY | RTLD_LOCAL);
  if (!lib) lib = dlopen("libcairo.so", RTLD_LAZY | RTLD_LOCAL);
  if (!lib) {
    snprintf(tt_cairo_error, sizeof tt_cairo_error,
             "cannot load cairo (%s); install it with: apt-get install libcairo2, or write "
             "SVG instead (--out chart.svg)", dlerror());
    return;
  }
  TT_RESOLVE(image_surface_create, "image_surface_create");
  TT_RESOLVE(surface_write_to_png, "surface_write_to_png");
  TT_RESOLVE(surface_status, "surface_status");
  TT_RESOLVE(surface_destroy, "surface_destroy");
  TT_RESOLVE(create, "create");
  TT_RESOLVE(destroy, "destroy");
  TT_RESOLVE(status, "status");
  TT_RESOLVE(status_to_string, "status_to_string");
  TT_RESOLVE(set_source_rgba, "set_source_rgba");
  TT_RESOLVE(set_line_width, "set_line_width");
  TT_RESOLVE(set_line_join, "set_line_join");
  TT_RESOLVE(set_line_cap, "set_line_cap");
  TT_RESOLVE(rectangle, "rectangle");
  TT_RESOLVE(move_to, "move_to");
  TT_RESOLVE(line_to, "line_to");
  TT_RESOLVE(arc, "arc");
  TT_RESOLVE(close_path, "close_path");
  TT_RESOLVE(new_path, "new_path");
  TT_RESOLVE(new_sub_path, "new_sub_path");
  TT_RESOLVE(fill, "fill");
  TT_RESOLVE(fill_preserve, "fill_preserve");
  TT_RESOLVE(stroke, "stroke");
  TT_RESOLVE(save, "save");
  TT_RESOLVE(restore, "restore");
  TT_RESOLVE(translate, "translate");
  TT_RESOLVE(rotate, "rotate");
  TT_RESOLVE(select_font_face, "select_font_face");
  TT_RESOLVE(set_font_size, "set_font_size");
  TT_RESOLVE(text_extents, "text_extents");
  TT_RESOLVE(show_text, "show_text");
  tt_cairo_ready = &tt_cairo_loaded; /* the library stays loaded for good */
}

const tt_cairo_api *tt_cairo_get(tt_buf *err) {
  pthread_once(&tt_cairo_once, tt_cairo_load);
  if (!tt_cairo_ready && err) tt_buf_puts(err, tt_cairo_error);
  return tt_cairo_ready;
}
