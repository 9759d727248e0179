/* fuzz_sql.c — libFuzzer target over the SQL entry point: any bytes go to
 * tt_db_query on a copy of chinook, and whatever comes back is rendered as
 * JSON, text and cards, so that the guard, the executor and the output
 * escaping all see hostile input. Built only with clang (TT_FUZZ=ON). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "db/db.h"
#include "schema/schema.h"

static tt_db *g_db;

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc;
  (void)argv;
  const char *path = getenv("TT_FUZZ_DB");
  tt_db_opts o = tt_db_default_opts();
  o.timeout_s = 0.25; /* keep iterations quick */
  o.max_rows = 100;
  o.max_bytes = 100000;
  tt_error err;
  g_db = tt_db_open(path ? path : "chinook.sqlite", &o, &err);
  if (!g_db) abort();
  return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  tt_error err;
  tt_result *r = tt_db_query(g_db, (const char *)data, size, &err);
  tt_buf out = TT_BUF_INIT;
  if (r) {
    json_t *j = tt_result_to_json(r, 0, true);
    tt_json_dump(&out, j, JSON_COMPACT);
    json_decref(j);
    tt_escape_opts eo = {.max_chars = 50};
    for (size_t i = 0; i < r->nrows; i++)
      for (size_t c = 0; c < r->ncols; c++) {
        tt_buf cell = TT_BUF_INIT;
        tt_value_to_text(&cell, tt_result_cell(r, i, c));
        tt_escape_terminal(&out, tt_buf_cstr(&cell), cell.len, &eo);
        tt_tokens_estimate(cell.data ? cell.data : "", cell.len);
        tt_buf_free(&cell);
      }
    tt_result_free(r);
  } else if (err.kind == TT_OK || !err.message[0]) {
    abort(); /* every failure must say why */
  }
  tt_buf_free(&out);
  return 0;
}
