/* assets.h — the page's files (web/), embedded in the binary at build time
 * by cmake/embed_web.cmake: every file of web/ is served at "/<name>", and
 * "/" is index.html. */
#ifndef TT_WEB_ASSETS_H
#define TT_WEB_ASSETS_H

#include <stddef.h>

typedef struct tt_web_asset {
  const char *path;          /* "/index.html", "/app.js", ... */
  const char *type;          /* Content-Type */
  const unsigned char *data;
  size_t len;
} tt_web_asset;

/* The asset served at path ("/" is "/index.html"), or NULL. */
const tt_web_asset *tt_web_asset_find(const char *path);
/* All of them (the generated table), and how many. */
const tt_web_asset *tt_web_assets(size_t *n);

#endif
