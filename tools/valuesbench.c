/* valuesbench.c — measures the value index on one database file: the first
 * use (built from the database, written to the cache) against the next
 * (read from the cache), with the number of values and the cache file's
 * size, and how long linking the words of each QUESTION to values takes.
 * Usage: tt-valuesbench DB CACHE_DIR [QUESTION...]. The database is only
 * read. */
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "schema/schema.h"

/* Links each question 100 times and prints the mean time and the hints. */
static void match_each(const tt_values *v, char **questions, int nq) {
  for (int q = 0; q < nq; q++) {
    tt_value_matches m;
    double t0 = tt_now_ms();
    for (int r = 0; r < 100; r++) {
      tt_values_match(v, questions[q], &m);
      tt_value_matches_free(&m);
    }
    double ms = (tt_now_ms() - t0) / 100;
    tt_values_match(v, questions[q], &m);
    tt_buf b = TT_BUF_INIT;
    tt_values_hints(&m, &b);
    printf("%.3f ms to link \"%s\": %zu hint(s)\n%s", ms, questions[q], m.n, tt_buf_cstr(&b));
    tt_buf_free(&b);
    tt_value_matches_free(&m);
  }
}

static double open_once(const char *path, const char *cache, size_t *n, bool *cached,
                        char **file, char **questions, int nq) {
  tt_error err;
  tt_db *db = tt_db_open(path, NULL, &err);
  if (!db) {
    fprintf(stderr, "%s\n", err.message);
    return -1;
  }
  tt_catalog *cat = tt_db_catalog_load(db, &err);
  if (!cat) {
    fprintf(stderr, "%s\n", err.message);
    tt_db_close(db);
    return -1;
  }
  tt_catalog_stamp stamp;
  if (!tt_db_catalog_stamp(db, &stamp, &err)) {
    fprintf(stderr, "%s\n", err.message);
    tt_catalog_free(cat);
    tt_db_close(db);
    return -1;
  }
  double t0 = tt_now_ms();
  tt_values_open_opts o = {.cache_dir = cache};
  tt_values_state st;
  tt_values *v = tt_values_open(db, cat, &stamp, &o, &st);
  double ms = tt_now_ms() - t0;
  *cached = st.cached;
  if (!*file) *file = tt_values_cache_path(cache, &stamp);
  tt_catalog_stamp_free(&stamp);
  *n = tt_values_count(v);
  match_each(v, questions, nq);
  tt_values_free(v);
  tt_catalog_free(cat);
  tt_db_close(db);
  return ms;
}

int main(int argc, char **argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: tt-valuesbench DB CACHE_DIR [QUESTION...]\n");
    return 2;
  }
  size_t n1, n2;
  bool c1, c2;
  char *file = NULL;
  double first = open_once(argv[1], argv[2], &n1, &c1, &file, NULL, 0);
  double again = open_once(argv[1], argv[2], &n2, &c2, &file, argv + 3, argc - 3);
  if (first < 0 || again < 0 || !file) return 1;
  struct stat st;
  long long size = stat(file, &st) == 0 ? (long long)st.st_size : -1;
  printf("%s: %zu values; first use %.1f ms (%s), next %.1f ms (%s); cache file %lld bytes\n", argv[1],
         n1, first, c1 ? "cached" : "built", again, c2 ? "cached" : "built", size);
  free(file);
  return n1 == n2 && !c1 && c2 ? 0 : 1;
}
