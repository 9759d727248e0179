/* load.c — one way from an open database to the schema the agent reads:
 * the catalog, the user's knowledge file (named, or beside the database)
 * applied to it, and the value index (from the cache or built). Every
 * front end (ask, chat, schema, serve-mcp, the benchmarks and evals) opens
 * its schema here, so all of them see the same descriptions and values. */
#include "schema/schema.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Reads the knowledge file; false only for a bad file the user named. */
static bool tt_load_knowledge(const tt_schema_load_opts *o, tt_knowledge **out, char **warning,
                              tt_error *err) {
  *out = NULL;
  if (!o->knowledge && !o->db_path) return true;
  char *beside = o->knowledge ? NULL : tt_knowledge_path_for(o->db_path);
  const char *path = o->knowledge ? o->knowledge : beside;
  if (!o->knowledge && access(path, F_OK) != 0) {
    free(beside);
    return true; /* no file beside the database: nothing to know */
  }
  tt_error ke;
  *out = tt_knowledge_load(path, &ke);
  if (!*out) {
    char where[32] = "";
    if (ke.line > 0) snprintf(where, sizeof where, ":%d", ke.line);
    if (o->knowledge) {
      *err = ke;
      tt_error_prefix(err, "knowledge file %s%s: ", path, where);
      free(beside);
      return false;
    }
    *warning = tt_xasprintf("knowledge file %s%s: %s; going on without it", path, where,
                            ke.message);
  }
  free(beside);
  return true;
}

tt_schema *tt_schema_load(tt_db *db, const tt_schema_load_opts *o, tt_error *err) {
  tt_error_clear(err);
  tt_catalog *cat = tt_db_catalog_load(db, err);
  if (!cat) {
    tt_error_prefix(err, "cannot read the schema of %s: ", tt_db_path(db)); /* as shown */
    return NULL;
  }
  tt_knowledge *kn;
  char *warning = NULL;
  if (!tt_load_knowledge(o, &kn, &warning, err)) {
    tt_catalog_free(cat);
    return NULL;
  }
  if (kn) tt_knowledge_apply(kn, cat);
  tt_schema *s = tt_schema_new(cat);
  tt_schema_set_knowledge(s, kn);
  tt_schema_set_warning(s, warning);
  free(warning);
  if (o->values == TT_SCHEMA_VALUES_CACHED)
    tt_schema_set_values(s, tt_values_open(db, cat, o->cache_dir, o->progress, NULL));
  else if (o->values == TT_SCHEMA_VALUES_BUILT)
    tt_schema_set_values(s, tt_values_build(db, cat, NULL));
  return s;
}
