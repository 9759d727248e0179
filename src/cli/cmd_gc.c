/* cmd_gc.c — `tabletalk gc [--older-than AGE] [--dry-run] [--json]`: remove
 * the traces and chart files that runs left in the state folder once they
 * are older than an age (TABLETALK_KEEP, default 90 days), and the cached
 * catalogs and value indexes that were not used for an age
 * (TABLETALK_CACHE_KEEP, default 30 days), whose database is gone, or
 * that are over the cache's size (TABLETALK_CACHE_MAX, default 1G);
 * threads and models are kept. ask and chat do the same automatically once
 * a day. */
#include "cli/cli.h"
#include "store/store.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const tt_opt tt_gc_own[] = {
    {TT_OPT_OLDER_THAN, "older-than", 0, TT_ARG_REQUIRED, "AGE", "remove what is older than AGE (30d, 12h, 2w)", TT_COMPLETE_NOTHING, NULL,
     "Remove what was last changed more than *AGE* ago: 30d, 12h, 2w, 90m or a number of days "
     "(default `TABLETALK_KEEP`, else 90 days); cache entries not used for *AGE* (default "
     "`TABLETALK_CACHE_KEEP`, else 30 days)."},
    {TT_OPT_DRY_RUN, "dry-run", 0, TT_ARG_NONE, NULL, "only count what would be removed", TT_COMPLETE_NOTHING, NULL,
     "Only count what would be removed."},
    {TT_OPT_JSON, "json", 0, TT_ARG_NONE, NULL, "print {removed, bytes, kept, failed, cache}", TT_COMPLETE_NOTHING, NULL,
     "Print one object: {\"removed\", \"bytes\", \"kept\", \"failed\"} for the state folder, and "
     "the same for the cache folder in \"cache\"."},
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
             "Cached catalogs and value indexes go when unused for AGE (default\n"
             "TABLETALK_CACHE_KEEP, 30d), when their database is gone, and oldest\n"
             "first past TABLETALK_CACHE_MAX (1G). ask and chat run the same\n"
             "clean-up once a day; TABLETALK_KEEP=never keeps traces.",
    .groups = tt_gc_groups,
    .doc =
        "Remove the traces (*STATE*/runs) and chart files (*STATE*/charts) older than an age; "
        "threads and models are kept. Cached catalogs, value indexes and description vectors "
        "(*CACHE*/catalog, *CACHE*/values, *CACHE*/vectors) go when they were not used for an age (`TABLETALK_CACHE_KEEP`, 30 days "
        "by default, or `--older-than`), when the database they describe is gone (a deleted "
        "file, or another file at its path: temporary copies), and, least recently used first, "
        "when together they are over `TABLETALK_CACHE_MAX` (1G by default). `ask` and `chat` "
        "run the same clean-up once a day (`TABLETALK_KEEP=never` keeps traces and charts).",
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

/* An age for people: "30 days", "12 hours". */
static void tt_gc_age_words(long long age, char *out, size_t n) {
  if (age % 86400 == 0) snprintf(out, n, "%lld days", age / 86400);
  else snprintf(out, n, "%lld hours", age / 3600 ? age / 3600 : 1);
}

/* The cache folder's line, or its object closing the JSON. */
static void tt_gc_print_cache(bool json, bool dry, const char *dir, const tt_cache_gc_report *c,
                              long long age, long long max) {
  if (json) {
    printf(",\"cache\":{\"removed\":%zu,\"bytes\":%lld,\"kept\":%zu,\"failed\":%zu}}\n",
           c->removed, c->bytes, c->kept, c->failed);
    return;
  }
  if (!c->removed && !c->kept && !c->failed) return; /* nothing cached yet */
  tt_buf n = TT_BUF_INIT, k = TT_BUF_INIT, why = TT_BUF_INIT;
  tt_buf_put_grouped(&n, c->bytes);
  tt_buf_put_grouped(&k, c->kept_bytes);
  tt_buf_puts(&why, "of databases gone");
  if (age) {
    char words[64];
    tt_gc_age_words(age, words, sizeof words);
    tt_buf_printf(&why, ", unused for %s", words);
  }
  if (max) tt_buf_printf(&why, " or over %lld MiB", max / (1024 * 1024));
  printf("%s %zu cache file%s (%s bytes) %s in %s; %zu kept (%s bytes)\n",
         dry ? "would remove" : "removed", c->removed, c->removed == 1 ? "" : "s", tt_buf_cstr(&n),
         tt_buf_cstr(&why), dir, c->kept, tt_buf_cstr(&k));
  tt_buf_free(&n);
  tt_buf_free(&k);
  tt_buf_free(&why);
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
  long long age, cache_age, cache_max;
  bool bad_cache;
  tt_config_cache_limits(&cfg, &cache_age, &cache_max, &bad_cache);
  if (bad_cache) {
    int rc = tt_usage_error("gc", "TABLETALK_CACHE_KEEP='%s' or TABLETALK_CACHE_MAX='%s' is not "
                                  "an age (30d) or a size (500M, 2G)",
                            tt_config_get_value(&cfg, "TABLETALK_CACHE_KEEP") ?: "",
                            tt_config_get_value(&cfg, "TABLETALK_CACHE_MAX") ?: "");
    tt_config_free(&cfg);
    return rc;
  }
  if (older) {
    if (!tt_parse_age(older, &age) || age == 0) {
      tt_config_free(&cfg);
      return tt_usage_error("gc", "--older-than takes an age such as 30d, 12h or 2w, not '%s'", older);
    }
    cache_age = age;
  } else {
    bool bad;
    age = tt_config_keep_seconds(&cfg, &bad);
    if (bad) {
      int rc = tt_usage_error("gc", "TABLETALK_KEEP='%s' is no age: write 30d, 12h, 2w or never",
                              tt_config_get_value(&cfg, "TABLETALK_KEEP"));
      tt_config_free(&cfg);
      return rc;
    }
  }
  char *dir = tt_xstrdup(tt_config_state_dir(&cfg));
  char *cache = tt_xstrdup(cfg.cache_dir ? cfg.cache_dir : "");
  tt_config_free(&cfg);
  tt_cache_gc_report cr;
  tt_schema_cache_gc(cache, cache_age, cache_max, dry, &cr);
  tt_gc_report r = {0};
  if (age) tt_store_gc(dir, age, dry, &r);
  if (json) {
    printf("{\"removed\":%zu,\"bytes\":%lld,\"kept\":%zu,\"failed\":%zu", r.removed, r.bytes,
           r.kept, r.failed);
  } else if (!age) {
    printf("TABLETALK_KEEP=never: nothing removed (give --older-than AGE to clean up)\n");
  } else {
    tt_buf n = TT_BUF_INIT;
    tt_buf_put_grouped(&n, r.bytes);
    char when[64];
    tt_gc_age_words(age, when, sizeof when);
    printf("%s %zu file%s (%s bytes) older than %s%s in %s; %zu kept\n", dry ? "would remove" : "removed",
           r.removed, r.removed == 1 ? "" : "s", tt_buf_cstr(&n), when, older ? "" : " (TABLETALK_KEEP)",
           dir, r.kept);
    tt_buf_free(&n);
  }
  tt_gc_print_cache(json, dry, cache, &cr, cache_age, cache_max);
  int rc = TT_EXIT_OK;
  if (r.failed) rc = tt_fail(TT_EXIT_FAIL, "%zu file%s in %s could not be removed; check their permissions",
                             r.failed, r.failed == 1 ? "" : "s", dir);
  else if (cr.failed)
    rc = tt_fail(TT_EXIT_FAIL, "%zu file%s in %s could not be removed; check their permissions",
                 cr.failed, cr.failed == 1 ? "" : "s", cache);
  free(dir);
  free(cache);
  return rc;
}
