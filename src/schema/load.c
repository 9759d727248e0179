/* load.c — one way from an open database to the schema the agent reads:
 * the catalog (from the cache when it is this database's as its schema is
 * now: a warm start reads no row and no table list), the user's knowledge
 * file (named, or beside the database) applied to it, and the value index
 * (from the cache or built). Every front end (ask, chat, schema,
 * serve-mcp, the benchmarks and evals) opens its schema here, so all of
 * them see the same descriptions and values.
 *
 * Reading rows is bounded in rows and steps, never in seconds, so a schema
 * depends on the database only; a deadline can stop it between tables, and
 * then the tables not read yet are pending: said in the warning and on
 * their cards, kept as such in the cache, and read by the next load (the
 * session's background refresh). A table read before its data last
 * changed is used as read and counted as outdated; refresh reads it again. */
#include "schema/cache_file.h"

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

/* The catalog of db: from the cache entry of stamp when there is one for
 * this database as its schema is now, else read; then the rows of the
 * tables still pending (until the deadline), and with refresh those read
 * before the data last changed. Saved when anything was read. */
static tt_catalog *tt_load_catalog(tt_db *db, const tt_schema_load_opts *o,
                                   const tt_catalog_stamp *stamp, tt_schema_state *st,
                                   tt_error *err) {
  char *path = stamp ? tt_cache_entry_path(o->cache_dir, "catalog", stamp->identity, ".cat") : NULL;
  tt_catalog *cat = path ? tt_catalog_cache_load(path, stamp) : NULL;
  bool changed = false;
  st->cached = cat != NULL;
  if (cat) {
    tt_cache_touch(path);
    const char *w = tt_db_warning(db); /* of the files as they are now, not as cached */
    cat->warning = w ? tt_arena_strdup(cat->arena, w) : NULL;
  } else if (o->cache_only) {
    tt_error_set(err, TT_ERR_UNAVAILABLE, "the cache holds no catalog of this database as it is now");
  } else {
    cat = tt_db_catalog_read(db, err);
    changed = cat != NULL;
  }
  if (!cat) {
    free(path);
    return NULL;
  }
  uint64_t h = stamp ? tt_catalog_stamp_data_hash(stamp) : 0;
  for (size_t i = 0; i < cat->ntables && !o->cache_only; i++) {
    const tt_table_info *t = &cat->tables[i];
    bool want = t->probe == TT_PROBE_PENDING ||
                (o->refresh && t->probe == TT_PROBE_DONE && t->probe_stamp != h);
    /* a stop leaves the table as it was; past the deadline the rest stop at once */
    if (want && tt_db_catalog_probe(db, cat, i, o->deadline_ms, o->cancel, h)) changed = true;
  }
  st->tables = cat->ntables;
  for (size_t i = 0; i < cat->ntables; i++) {
    const tt_table_info *t = &cat->tables[i];
    st->pending += t->probe == TT_PROBE_PENDING;
    st->outdated += t->probe == TT_PROBE_DONE && t->probe_stamp != h;
  }
  if (changed && path) {
    tt_cache_source src;
    tt_cache_source_of(db, &src);
    tt_catalog_cache_save(path, &src, stamp, cat);
  }
  free(path);
  return cat;
}

/* The warning of a schema whose reading stopped before its end, or NULL. */
static char *tt_incomplete_warning(const tt_schema_state *st) {
  if (!st->pending && !st->values_pending) return NULL;
  tt_buf b = TT_BUF_INIT;
  tt_buf_puts(&b, "the schema is incomplete: reading it stopped at its time limit before ");
  if (st->pending)
    tt_buf_printf(&b, "the rows of %zu of %zu tables (their cards say so)", st->pending, st->tables);
  if (st->pending && st->values_pending) tt_buf_puts(&b, " and ");
  if (st->values_pending) tt_buf_printf(&b, "the values of %zu tables", st->values_pending);
  tt_buf_puts(&b, "; the rest is read later and kept in the cache");
  return tt_buf_detach(&b);
}

/* The value index as o asks; NULL only when the cache alone was to give
 * it and does not hold it. */
static bool tt_load_values(tt_db *db, const tt_schema_load_opts *o, const tt_catalog_stamp *stamp,
                           tt_schema *s, tt_schema_state *st) {
  if (o->values == TT_SCHEMA_VALUES_BUILT) {
    tt_schema_set_values(s, tt_values_build(db, tt_schema_catalog(s), NULL));
    st->values = true;
    return true;
  }
  if (o->values != TT_SCHEMA_VALUES_CACHED) return true;
  tt_values_open_opts vo = {.cache_dir = stamp ? o->cache_dir : NULL, .deadline_ms = o->deadline_ms,
                            .refresh = o->refresh, .cache_only = o->cache_only,
                            .cancel = o->cancel, .progress = o->progress};
  tt_values_state vs;
  tt_values *v = tt_values_open(db, tt_schema_catalog(s), stamp, &vo, &vs);
  if (!v) return false;
  tt_schema_set_values(s, v);
  st->values = true;
  st->values_cached = vs.cached;
  st->values_pending = vs.pending;
  st->values_outdated = vs.outdated;
  return true;
}

tt_schema *tt_schema_load(tt_db *db, const tt_schema_load_opts *o, tt_error *err) {
  tt_error_clear(err);
  tt_catalog_stamp stamp;
  tt_error serr;
  bool stamped = o->cache_dir && *o->cache_dir && tt_db_catalog_stamp(db, &stamp, &serr);
  if (!stamped && o->cache_only) {
    tt_error_set(err, TT_ERR_UNAVAILABLE, "no cached schema to read");
    return NULL;
  }
  tt_schema_state st = {0};
  tt_catalog *cat = tt_load_catalog(db, o, stamped ? &stamp : NULL, &st, err);
  if (!cat) {
    if (stamped) tt_catalog_stamp_free(&stamp);
    if (!o->cache_only)
      tt_error_prefix(err, "cannot read the schema of %s: ", tt_db_path(db)); /* as shown */
    return NULL;
  }
  tt_knowledge *kn;
  char *warning = NULL;
  if (!tt_load_knowledge(o, &kn, &warning, err)) {
    tt_catalog_free(cat);
    if (stamped) tt_catalog_stamp_free(&stamp);
    return NULL;
  }
  if (kn) tt_knowledge_apply(kn, cat);
  tt_schema *s = tt_schema_new(cat);
  tt_schema_set_knowledge(s, kn);
  bool ok = tt_load_values(db, o, stamped ? &stamp : NULL, s, &st);
  if (stamped) {
    tt_cache_source src;
    tt_cache_source_of(db, &src);
    tt_schema_set_cache_key(s, o->cache_dir, stamp.identity, &src);
    tt_catalog_stamp_free(&stamp);
  }
  if (!ok) {
    free(warning);
    tt_schema_free(s);
    tt_error_set(err, TT_ERR_UNAVAILABLE, "the cache holds no value index of this database");
    return NULL;
  }
  tt_schema_set_state(s, &st);
  char *incomplete = tt_incomplete_warning(&st);
  if (incomplete && warning) {
    char *both = tt_xasprintf("%s; %s", warning, incomplete);
    free(warning);
    warning = both;
  } else if (incomplete) {
    warning = tt_xstrdup(incomplete);
  }
  free(incomplete);
  tt_schema_set_warning(s, warning);
  free(warning);
  return s;
}
