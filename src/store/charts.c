/* charts.c — where the chart files of a run go in the state folder:
 * STATE/charts/RUN.png for its first chart, RUN-2.png for its second. */
#include "store/store.h"

#include <stdlib.h>

char *tt_chart_file_path(const char *state_dir, const char *run_id, size_t index,
                         const char *ext, tt_error *err) {
  char *dir = tt_xasprintf("%s/charts", state_dir);
  if (!tt_mkdir_p(dir, 0700)) {
    tt_error_set(err, TT_ERR_IO, "cannot create the chart folder %s", dir);
    tt_error_hint(err, "check its permissions, or choose another state folder with --state-dir");
    free(dir);
    return NULL;
  }
  char *path = index ? tt_xasprintf("%s/%s-%zu.%s", dir, run_id, index + 1, ext)
                     : tt_xasprintf("%s/%s.%s", dir, run_id, ext);
  free(dir);
  return path;
}
