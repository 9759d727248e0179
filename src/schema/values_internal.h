/* values_internal.h — what the value index (values.c) lends its cache
 * (values_cache.c) and the schema's loader, seen only by src/schema/:
 * reading one table's values, and entries added as the cache file holds
 * them (already folded, in memory the index takes over, already sorted). */
#ifndef TT_SCHEMA_VALUES_INTERNAL_H
#define TT_SCHEMA_VALUES_INTERNAL_H

#include "schema/schema.h"

/* Where column c of table i of a catalog stands: entries of one key sort
 * in schema order. */
static inline uint64_t tt_values_column_ord(size_t table, size_t column) {
  return ((uint64_t)table << 32) | (uint64_t)column;
}

/* Whether table i of cat has values to index (a table, not a view, with a
 * text column). */
bool tt_values_indexes(const tt_catalog *cat, size_t i);
/* Adds the values of table i of cat to v (not finished) under the bounds
 * of opts (NULL: the defaults): the first scan_rows rows of each text
 * column, each column's part of max_total (shared evenly among the tables,
 * then among a table's text columns, at most max_per_column), so that a
 * table's values never depend on another table's. A wall-clock deadline
 * (tt_now_ms time; 0: none) or cancel can stop it: then false and nothing
 * of the table is added. A column that cannot be read is left out. */
bool tt_values_read_table(tt_db *db, const tt_catalog *cat, size_t i, const tt_values_opts *opts,
                          double deadline_ms, volatile sig_atomic_t *cancel, tt_values *v);

/* An entry as the cache file keeps it: key already folded, strings not
 * copied (they live in memory v owns: its arena or tt_values_adopt). */
void tt_values_push(tt_values *v, const char *key, const char *value, const char *table,
                    const char *column, uint64_t ord);
/* The same with every string copied into v. */
void tt_values_add_copy(tt_values *v, const char *key, const char *value, const char *table,
                        const char *column, uint64_t ord);
/* A copy of s that lives as long as v. */
const char *tt_values_intern(tt_values *v, const char *s);
/* Room for n entries in all. */
void tt_values_reserve(tt_values *v, size_t n);
/* v frees mem (with free()) when it is freed. */
void tt_values_adopt(tt_values *v, void *mem);
/* Finishes v without sorting when its entries are in order already (as
 * the cache file keeps them); false when they are not. */
bool tt_values_finish_sorted(tt_values *v);
/* The i-th entry's folded key and column position (NULL, 0 past the end). */
const char *tt_values_key(const tt_values *v, size_t i);
uint64_t tt_values_ord(const tt_values *v, size_t i);
/* Drops the entries from the n-th on. */
void tt_values_truncate(tt_values *v, size_t n);

#endif
