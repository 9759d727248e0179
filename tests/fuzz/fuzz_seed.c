/* fuzz_seed.c — writes every SQL case of the guard corpus as one file per
 * case into a folder: the fuzzer's starting corpus. */
#include <stdio.h>
#include <stdlib.h>

#include "testutil.h"

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: fuzz_seed OUTDIR\n");
    return 2;
  }
  tu_require_shared("corpus/sql-guard.tsv");
  size_t n;
  tu_row *rows = tu_corpus_load(tu_shared_path("corpus/sql-guard.tsv"), 1u << 2, &n);
  for (size_t i = 0; i < n; i++) {
    if (rows[i].nfields < 3) continue;
    char *path = tt_xasprintf("%s/%s", argv[1], rows[i].field[0]);
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(rows[i].field[2], 1, rows[i].len[2], f) != rows[i].len[2]) return 1;
    fclose(f);
    free(path);
  }
  tu_corpus_free(rows, n);
  return 0;
}
