/* assets.c — finding the page's embedded files (the table is generated at
 * build time from web/ by cmake/embed_web.cmake). */
#include "web/assets.h"

#include <string.h>

extern const tt_web_asset tt_web_asset_table[];
extern const size_t tt_web_asset_count;

const tt_web_asset *tt_web_assets(size_t *n) {
  *n = tt_web_asset_count;
  return tt_web_asset_table;
}

const tt_web_asset *tt_web_asset_find(const char *path) {
  if (!path) return NULL;
  if (strcmp(path, "/") == 0) path = "/index.html";
  for (size_t i = 0; i < tt_web_asset_count; i++)
    if (strcmp(tt_web_asset_table[i].path, path) == 0) return &tt_web_asset_table[i];
  return NULL;
}
