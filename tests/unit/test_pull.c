/* test_pull.c — units of models split into parts: reading and rewriting
 * llama.cpp's part names (PREFIX-00001-of-00003.gguf) in paths and URLs,
 * the file llama.cpp must open for a link to a split model, and the checks
 * that say which part is wrong before llama.cpp would fail on it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "llm/llm.h"
#include "testutil.h"

static void test_split_names(void **state) {
  (void)state;
  int no = -1;
  assert_int_equal(tt_gguf_split_count("/m/qwen-q4_k_m-00001-of-00003.gguf", &no), 3);
  assert_int_equal(no, 1);
  assert_int_equal(tt_gguf_split_count("qwen-00003-of-00003.gguf", &no), 3);
  assert_int_equal(no, 3);
  assert_int_equal(tt_gguf_split_count("https://h/r/resolve/main/x-00002-of-00002.gguf?download=true", &no), 2);
  assert_int_equal(no, 2);
  /* names that are not parts */
  const char *plain[] = {
      "qwen.gguf",                    /* no suffix */
      "-00001-of-00003.gguf",         /* no prefix */
      "/m/-00001-of-00003.gguf",      /* no prefix after the folder */
      "x-0001-of-0003.gguf",          /* four digits, not llama.cpp's five */
      "x-00004-of-00003.gguf",        /* part beyond the count */
      "x-00000-of-00003.gguf",        /* parts count from 1 */
      "x-00001-of-00003.GGUF",        /* llama.cpp compares the suffix exactly */
      "x-00001-of-00003.gguf.part",   /* a download in progress */
      "x-0000a-of-00003.gguf",
      "https://h/x-00001-of-00003.gguf/file.gguf",
  };
  for (size_t i = 0; i < sizeof plain / sizeof plain[0]; i++) {
    if (tt_gguf_split_count(plain[i], NULL) != 0) {
      fprintf(stderr, "taken for a part: %s\n", plain[i]);
      fail();
    }
  }
  /* a local file name may contain '?': only a URL has a query */
  assert_int_equal(tt_gguf_split_count("/m/a?b-00001-of-00002.gguf", NULL), 2);
}

static void test_split_part_names(void **state) {
  (void)state;
  char *p = tt_gguf_split_part("https://h/q/resolve/main/q4-00001-of-00002.gguf?download=true", 2);
  assert_string_equal(p, "https://h/q/resolve/main/q4-00002-of-00002.gguf?download=true");
  free(p);
  p = tt_gguf_split_part("/data/models/q4-00003-of-00012.gguf", 12);
  assert_string_equal(p, "/data/models/q4-00012-of-00012.gguf");
  free(p);
  assert_null(tt_gguf_split_part("/data/models/q4-00001-of-00002.gguf", 3));
  assert_null(tt_gguf_split_part("/data/models/q4-00001-of-00002.gguf", 0));
  assert_null(tt_gguf_split_part("/data/models/q4.gguf", 1));
}

static void touch(const char *dir, const char *name) {
  char *p = tt_xasprintf("%s/%s", dir, name);
  FILE *f = fopen(p, "w");
  assert_non_null(f);
  fputs("GGUF", f);
  fclose(f);
  free(p);
}

static void test_load_path_and_checks(void **state) {
  (void)state;
  char *dir = tu_mkdtemp();
  touch(dir, "m-00001-of-00003.gguf");
  touch(dir, "m-00002-of-00003.gguf");
  touch(dir, "plain.gguf");
  char *link = tt_xasprintf("%s/default.gguf", dir);
  char *first = tt_xasprintf("%s/m-00001-of-00003.gguf", dir);
  char *second = tt_xasprintf("%s/m-00002-of-00003.gguf", dir);

  /* a link to the first part opens under the part's own name */
  assert_int_equal(symlink("m-00001-of-00003.gguf", link), 0);
  char *load = tt_model_load_path(link);
  assert_string_equal(load, first);
  free(load);
  /* a link to a whole file, and a file that is no link, stay as they are */
  unlink(link);
  assert_int_equal(symlink("plain.gguf", link), 0);
  load = tt_model_load_path(link);
  assert_string_equal(load, link);
  free(load);
  load = tt_model_load_path(second);
  assert_string_equal(load, second);
  free(load);

  /* part 3 missing: named, with what to do */
  tt_error err = TT_ERROR_INIT;
  assert_false(tt_model_parts_check(first, &err));
  assert_int_equal(err.kind, TT_ERR_IO);
  assert_non_null(strstr(err.message, "part 3 of 3 of the model is missing"));
  assert_non_null(strstr(err.message, "m-00003-of-00003.gguf"));
  assert_non_null(strstr(err.hint, "tabletalk pull"));
  /* not the first part: the first is named */
  assert_false(tt_model_parts_check(second, &err));
  assert_int_equal(err.kind, TT_ERR_IO);
  assert_non_null(strstr(err.message, "part 2 of 3 of a split model"));
  assert_non_null(strstr(err.message, first));
  tt_error_clear(&err);
  /* whole: fine, and so is a file that is not split */
  touch(dir, "m-00003-of-00003.gguf");
  assert_true(tt_model_parts_check(first, &err));
  char *plain = tt_xasprintf("%s/plain.gguf", dir);
  assert_true(tt_model_parts_check(plain, &err));
  assert_int_equal(err.kind, TT_OK); /* success leaves err alone */

  free(plain);
  free(first);
  free(second);
  free(link);
  tu_rmtree(dir);
  free(dir);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_split_names),
      cmocka_unit_test(test_split_part_names),
      cmocka_unit_test(test_load_path_and_checks),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
