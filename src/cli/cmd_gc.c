/* cmd_gc.c — `tabletalk gc [--older-than AGE] [--dry-run] [--json]`: remove
 * the traces and chart files that runs left in the state folder once they
 * are older than an age (TABLETALK_KEEP, default 90 days); threads and
 * models are kept. ask and chat do the same automatically once a day. */
#include "cli/cli.h"
#include "store/store.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const tt_opt tt_gc_own[] = {
    {TT_OPT_OLDER_THAN, "older-than", 0, TT_ARG_REQUIRED, "AGE", "remove what is older than AGE (30d, 12h, 2w)", TT_COMPLETE_NOTHING, NULL,
     "Remove what was last changed more than *AGE* ago: 30d, 12h, 2w, 90m or a number of days "
     "(default `TABLETALK_KEEP`, else 90 days)."},
    {TT_OPT_DRY_RUN, "dry-run", 0, TT_ARG_NONE, NULL, "only count what would be removed", TT_COMPLETE_NOTHING, NULL,
     "Only count what would be removed."},
    {TT_OPT_JSON, "json", 0, TT_ARG_NONE, NULL, "print {removed, bytes, kept, failed}", TT_COMPLETE_NOTHING, NULL,
     "Print one object: {\"removed\", \"bytes\", \"kept\", \"failed\"}."},
    {TT_OPT_STATE_DIR, "state-dir", 0, TT_ARG_REQUIRED, "DIR", "the state folder (TABLETALK_STATE_DIR)", TT_COMPLETE_DIR, NULL,
     TT_DOC_STATE_DIR},
    {0, NULL, 0, 0, NULL, NULL, 0, NULL, NULL},
};
static const tt_opt_group tt_gc_group = {NULL, false, tt_gc_own};
static const tt_opt_group *const tt_gc_groups[] = {&tt_gc_group, NULL};
const tt_cmd_spec tt_cmd_gc = {
    .name = "gc",
    .usage = "tabletalk gc [--older-than AGE] [--dry-run] [--json] [--state-dir DIR]",
    .about = "Remove the traces (STATE/runs) and chart files (STATE/charts) older than\n"
             "AGE: 30d, 12h, 2w or a number of days. The default is TABLETALK_KEEP (env,\n"
             ".env or the config file; 90d when unset). Threads and models are kept.\n"
             "ask and chat run the same clean-up once a day; TABLETALK_KEEP=never\n"
             "turns that off.",
    .groups = tt_gc_groups,
    .doc =
        "Remove the traces (*STATE*/runs) and chart files (*STATE*/charts) older than an age; "
        "threads and models are kept. `ask` and `chat` run the same clean-up once a day with "
        "`TABLETALK_KEEP` (`never` turns it off).",
};

typedef struct tt_gc_cli {
  const char *older, *state;
  bool dry, json;
} tt_gc_cli;

static int tt_gc_option(void *ud, int id, const char *arg) {
  tt_gc_cli *g = ud;
  switch (id) {
  case TT_OPT_OLDER_THAN: g->older = arg; return 0;
  case TT_OPT_DRY_RUN: g->dry = true; return 0;
  case TT_OPT_JSON: g->json = true; return 0;
  case TT_OPT_STATE_DIR: g->state = arg; return 0;
  }
  return 0;
}

int cmd_gc(int argc, char **argv) {
  tt_gc_cli g = {.dry = false};
  int rc0 = tt_opts_parse(&tt_cmd_gc, argc, argv, 1, tt_gc_option, &g);
  if (rc0 != TT_OPTS_GO) return rc0;
  const char *older = g.older, *state = g.state;
  bool dry = g.dry, json = g.json;
  if (optind < argc) return tt_usage_error("gc", "unexpected argument '%s'", argv[optind]);
  tt_config cfg;
  tt_config_init(&cfg);
  cfg.state_dir = state;
  tt_error err;
  tt_config_resolve(&cfg, &err);
  long long age;
  if (older) {
    if (!tt_parse_age(older, &age) || age == 0) {
      tt_config_free(&cfg);
      return tt_usage_error("gc", "--older-than takes an age such as 30d, 12h or 2w, not '%s'", older);
    }
  } else {
    bool bad;
    age = tt_config_keep_seconds(&cfg, &bad);
    if (bad) {
      int rc = tt_usage_error("gc", "TABLETALK_KEEP='%s' is no age: write 30d, 12h, 2w or never",
                              tt_config_get_value(&cfg, "TABLETALK_KEEP"));
      tt_config_free(&cfg);
      return rc;
    }
    if (age == 0) {
      tt_config_free(&cfg);
      if (json) printf("{\"removed\":0,\"bytes\":0,\"kept\":0,\"failed\":0}\n");
      else printf("TABLETALK_KEEP=never: nothing removed (give --older-than AGE to clean up)\n");
      return TT_EXIT_OK;
    }
  }
  char *dir = tt_xstrdup(tt_config_state_dir(&cfg));
  tt_config_free(&cfg);
  tt_gc_report r;
  tt_store_gc(dir, age, dry, &r);
  if (json) {
    printf("{\"removed\":%zu,\"bytes\":%lld,\"kept\":%zu,\"failed\":%zu}\n", r.removed, r.bytes, r.kept,
           r.failed);
  } else {
    tt_buf n = TT_BUF_INIT;
    tt_buf_put_grouped(&n, r.bytes);
    char when[64];
    if (age % 86400 == 0) snprintf(when, sizeof when, "%lld days", age / 86400);
    else snprintf(when, sizeof when, "%lld hours", age / 3600 ? age / 3600 : 1);
    printf("%s %zu file%s (%s bytes) older than %s%s in %s; %zu kept\n", dry ? "would remove" : "removed",
           r.removed, r.removed == 1 ? "" : "s", tt_buf_cstr(&n), when, older ? "" : " (TABLETALK_KEEP)",
           dir, r.kept);
    tt_buf_free(&n);
  }
  int rc = TT_EXIT_OK;
  if (r.failed) rc = tt_fail(TT_EXIT_FAIL, "%zu file%s in %s could not be removed; check their permissions",
                             r.failed, r.failed == 1 ? "" : "s", dir);
  free(dir);
  return rc;
}
