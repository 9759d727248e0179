/* cmd_pull.c — `tabletalk pull [NAME|URL]` downloads a GGUF model into
 * $XDG_DATA_HOME/tabletalk/models/ (progress bar, resumable, sha256 checked;
 * every part of a model split into parts) and makes it the default;
 * `tabletalk models` lists what is installed and what pull knows. */
#include "cli/cli.h"

#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>


static const tt_opt tt_pull_own[] = {
    {TT_OPT_LIST, "list", 0, TT_ARG_NONE, NULL, "the models pull knows, their size and RAM", TT_COMPLETE_NOTHING, NULL,
     "Show every known name with what it is good at (tool-calling agent, general, SQL writer), "
     "its download and the memory it needs."},
    {TT_OPT_NO_DEFAULT, "no-default", 0, TT_ARG_NONE, NULL, "keep the current default model", TT_COMPLETE_NOTHING, NULL,
     "Download without making the model the default."},
    {0, NULL, 0, 0, NULL, NULL, 0, NULL, NULL},
};
static const tt_opt_group tt_pull_group = {NULL, false, tt_pull_own};
static const tt_opt_group *const tt_pull_groups[] = {&tt_pull_group, NULL};
const tt_cmd_spec tt_cmd_pull = {
    .name = "pull",
    .usage = "tabletalk pull [NAME|URL] [options]",
    .about = "Download a GGUF model into the models folder (TABLETALK_DATA_DIR, default\n"
             "~/.local/share/tabletalk/models) and make it the default for ask and chat.\n"
             "Without NAME, qwen2.5-coder-7b. URL: an https URL of a .gguf file (plain\n"
             "http only from this machine, e.g. a local mirror); any part of a split\n"
             "model fetches every part. Downloads resume; the sha256 is checked.\n"
             "HF_ENDPOINT replaces https://huggingface.co for the named models.",
    .groups = tt_pull_groups,
    .args = TT_COMPLETE_WORDS,
    /* the names in tt_known_models */
    .words = "qwen2.5-coder-7b qwen2.5-coder-3b qwen2.5-coder-1.5b qwen3-8b qwen3-4b omnisql-7b "
             "xiyan-7b",
    .doc =
        "Download a GGUF model (with a progress bar, resuming an interrupted download) into the "
        "models folder, *DATA*/models (`TABLETALK_DATA_DIR`, default ~/.local/share/tabletalk), "
        "check the sha256 Hugging Face announces for it, and make it the default "
        "(`default.gguf`); without *NAME*, qwen2.5-coder-7b (Qwen2.5-Coder-7B-Instruct, Q4_K_M), "
        "a model trained for tool calls. For the Qwen models pull knows the file's sha256 too "
        "and refuses a server offering another file. A *URL* must be https (plain http only from "
        "this machine: localhost, 127.0.0.1, [::1]); another is a usage error. The URL of any "
        "part of a model split into parts (*NAME*-00001-of-00003.gguf) fetches every part, and "
        "the first part becomes the default. `HF_ENDPOINT` names a mirror of "
        "https://huggingface.co for the known names. Offline it says which host it cannot reach, "
        "and it leaves no empty .part file behind. The known models, what each is good at and "
        "the evidence for each figure are in docs/guide/models.md.",
};

static const tt_opt tt_models_own[] = {
    {TT_OPT_JSON, "json", 0, TT_ARG_NONE, NULL, "one JSON object: installed and known", TT_COMPLETE_NOTHING, NULL,
     "One JSON object: the installed models and the known ones."},
    {TT_OPT_WHICH, "which", 0, TT_ARG_NONE, NULL, "print the model ask would use and why", TT_COMPLETE_NOTHING, NULL,
     "Print the model ask would use (a GGUF file or an endpoint) and where the choice came from, "
     "as *LOCATION*<TAB>*SOURCE*, or exit 1 when none is set up."},
    {0, NULL, 0, 0, NULL, NULL, 0, NULL, NULL},
};
static const tt_opt_group tt_models_group = {NULL, false, tt_models_own};
static const tt_opt_group *const tt_models_groups[] = {&tt_models_group, NULL};
const tt_cmd_spec tt_cmd_models = {
    .name = "models",
    .usage = "tabletalk models [--json]\ntabletalk models rm NAME\ntabletalk models --which",
    .about = "List the installed models (the default marked; a split model counts once)\n"
             "and the models `tabletalk pull` knows. --which prints LOCATION<TAB>SOURCE\n"
             "of the model ask would use, or exits 1 when none is set up. rm NAME\n"
             "deletes an installed model (every part; the default link if it was it).",
    .groups = tt_models_groups,
    .args = TT_COMPLETE_WORDS,
    .words = "rm",
    .doc =
        "List the installed models (the default marked; a split model once, with the bytes of "
        "all its parts and whether it is complete) and the models `tabletalk pull` knows. "
        "`models rm` *NAME* deletes an installed model (every part of a split one, and the "
        "default link when it pointed there); exit 1 when none of that name is installed.",
};

/* models rm NAME: its help is models'; it takes no options of its own */
static const tt_opt_group *const tt_models_rm_groups[] = {NULL};
static const tt_cmd_spec tt_cmd_models_rm = {
    .name = "models",
    .usage = "tabletalk models rm NAME",
    .about = "Delete the installed model NAME (as `tabletalk models` lists it): every\n"
             "part of a split one, and the default link when it pointed there.",
    .groups = tt_models_rm_groups,
};

/* pull's and models' flags: bit 0 set, bit 1 cleared by its option. */
static int tt_flag_option(void *ud, int id, const char *arg) {
  (void)arg;
  int *flags = ud;
  if (id == TT_OPT_LIST || id == TT_OPT_JSON) *flags |= 1;
  if (id == TT_OPT_NO_DEFAULT || id == TT_OPT_WHICH) *flags |= 2;
  return 0;
}

/* models --which: the model ask would use, from the same configuration. */
static int tt_models_which(void) {
  tt_config cfg;
  tt_config_init(&cfg);
  tt_error err;
  tt_config_resolve(&cfg, &err);
  tt_models *m = tt_models_new(&cfg);
  tt_model_choice ch;
  tt_models_choice(m, &ch);
  int rc = TT_EXIT_OK;
  if (ch.path || ch.url)
    printf("%s\t%s\n", ch.path ? ch.path : ch.url, ch.source);
  else
    rc = tt_fail(TT_EXIT_FAIL, "no model is set up: `tabletalk pull` downloads the default "
                               "one, or set TABLETALK_MODEL_PATH or TABLETALK_BASE_URL");
  tt_model_choice_free(&ch);
  tt_models_free(m);
  tt_config_free(&cfg);
  return rc;
}

static char *tt_models_dir(void) {
  tt_config cfg;
  tt_config_init(&cfg);
  tt_error err;
  tt_config_resolve(&cfg, &err);
  char *dir = tt_xasprintf("%s/models", cfg.data_dir);
  tt_config_free(&cfg);
  return dir;
}

typedef struct tt_bar {
  tt_term t;
  const char *name;
  double t0, last;
  long long start;
} tt_bar;

static void tt_human(char *out, size_t cap, long long bytes) {
  if (bytes >= 1000000000LL) snprintf(out, cap, "%.2f GB", (double)bytes / 1e9);
  else snprintf(out, cap, "%.1f MB", (double)bytes / 1e6);
}

static void tt_bar_update(void *ud, long long done, long long total) {
  tt_bar *b = ud;
  double now = tt_now_ms();
  if (now - b->last < 200 && done != total) return;
  b->last = now;
  if (!b->t.tty) return;
  char d[32], t[32];
  tt_human(d, sizeof d, done);
  tt_human(t, sizeof t, total);
  double secs = (now - b->t0) / 1000.0;
  double rate = secs > 0 ? (double)(done - b->start) / secs : 0;
  fprintf(stderr, "\r\033[K%s  %s", b->name, d);
  if (total > 0) {
    int pct = (int)(100.0 * (double)done / (double)total);
    int fill = pct / 5;
    fprintf(stderr, " / %s  [%.*s%.*s] %3d%%", t, fill, "####################", 20 - fill,
            "                    ", pct);
    if (rate > 0) {
      long eta = (long)((double)(total - done) / rate);
      fprintf(stderr, "  %.1f MB/s  %ld:%02ld left", rate / 1e6, eta / 60, eta % 60);
    }
  }
  fflush(stderr);
}

/* "6 GB", "4.5 GB" */
static void tt_gb(char *out, size_t cap, double gb) {
  if (gb == (double)(long)gb) snprintf(out, cap, "%.0f GB", gb);
  else snprintf(out, cap, "%.1f GB", gb);
}

/* The known models, one line each: what it is good at, the download and
 * the memory it needs. */
static void tt_pull_list_to(tt_buf *b) {
  tt_buf_puts(b, "Models `tabletalk pull NAME` knows (RAM: with an 8,192-token context):\n");
  tt_buf_printf(b, "  %-19s %-19s %8s %7s\n", "NAME", "GOOD AT", "DOWNLOAD", "RAM");
  size_t nknown;
  const tt_known_model *known = tt_known_models(&nknown);
  for (size_t i = 0; i < nknown; i++) {
    const tt_known_model *m = &known[i];
    char dl[16], ram[16];
    tt_gb(ram, sizeof ram, m->ram_gb);
    snprintf(dl, sizeof dl, "%.1f GB", m->download_gb);
    tt_buf_printf(b, "  %-19s %-19s %8s %7s", m->name, tt_model_role_name(m->role), dl, ram);
    if (i == 0) tt_buf_puts(b, "  default");
    else if (*m->note) tt_buf_printf(b, "  %s", m->note);
    tt_buf_putc(b, '\n');
  }
  tt_buf_puts(b, "A tool-calling agent was trained to call tools, the loop tabletalk runs; a\n"
                 "general model calls them too and thinks first (slow on a CPU); an SQL\n"
                 "writer was trained only to write one query from a schema and a question.\n"
                 "Evidence and sources: docs/guide/models.md. Any https URL of a .gguf works too.\n");
}

static int tt_pull_list(void) {
  tt_buf b = TT_BUF_INIT;
  tt_pull_list_to(&b);
  int rc = tt_write_result(stdout, &b);
  tt_buf_free(&b);
  return rc;
}

/* A known model's URL, on the mirror HF_ENDPOINT names when it is set
 * (huggingface_hub's variable); NULL and a usage error when that is not
 * a URL pull may use. */
static char *tt_pull_known_url(const tt_known_model *m, int *rc) {
  tt_config cfg;
  tt_config_init(&cfg);
  tt_error err;
  char *url = tt_known_model_url(m, tt_config_get_value(&cfg, "HF_ENDPOINT"), &err);
  if (!url) *rc = tt_usage_error("pull", "%s", err.message);
  tt_config_free(&cfg);
  return url;
}

/* The file name a URL ends in (without its query); "" when none. */
static char *tt_url_file_name(const char *url) {
  const char *slash = strrchr(url, '/');
  char *file = tt_xstrdup(slash ? slash + 1 : url);
  file[strcspn(file, "?#")] = '\0';
  return file;
}

/* Downloads url into dir as file (skipped when already there). Prints what
 * happened: for a whole file the size and sha256, for a part of a split
 * model (count > 1) one line. */
static int tt_pull_one(const char *url, const char *dir, const char *file, int part, int count,
                       const char *expect_sha256) {
  char *dest = tt_xasprintf("%s/%s", dir, file);
  int rc = TT_EXIT_OK;
  if (tt_file_exists(dest)) {
    if (count > 1) printf("part %d of %d: %s is already here\n", part, count, file);
    else printf("%s is already installed\n", dest);
    free(dest);
    return rc;
  }
  tt_bar bar = {.t = tt_term_probe(stderr), .name = file, .t0 = tt_now_ms()};
  char *partial = tt_xasprintf("%s.part", dest);
  struct stat st;
  bar.start = stat(partial, &st) == 0 ? (long long)st.st_size : 0;
  free(partial);
  tt_pull_opts po = {.on_progress = tt_bar_update, .ud = &bar, .cancel = tt_interrupt_install(),
                     .expect_sha256 = expect_sha256};
  tt_pull_result res;
  tt_error err;
  bool ok = tt_model_pull(url, dest, &po, &res, &err);
  if (bar.t.tty) fputs("\r\033[K", stderr);
  char size[32];
  tt_human(size, sizeof size, res.bytes);
  if (!ok && count > 1) {
    rc = tt_fail(TT_EXIT_FAIL, "part %d of %d (%s): %s", part, count, file, tt_error_text(&err));
  } else if (!ok) {
    rc = tt_fail(TT_EXIT_FAIL, "%s", tt_error_text(&err));
  } else if (count > 1) {
    printf("part %d of %d: %s, %s%s, sha256 %s\n", part, count, file, size,
           res.resumed_from ? " (resumed)" : "", res.verified ? "verified" : "not announced, unchecked");
  } else {
    printf("downloaded %s (%s%s)\n", dest, size, res.resumed_from ? ", resumed" : "");
    if (res.verified) printf("sha256 %s verified\n", res.sha256);
    else printf("sha256 %s (the server announced none to check against)\n", res.sha256);
  }
  free(dest);
  return rc;
}

int cmd_pull(int argc, char **argv) {
  int flags = 0;
  int rc0 = tt_opts_parse(&tt_cmd_pull, argc, argv, 1, tt_flag_option, &flags);
  if (rc0 != TT_OPTS_GO) return rc0;
  if (flags & 1) return tt_pull_list();
  bool set_default = !(flags & 2);
  if (argc - optind > 1) return tt_usage_error("pull", "give one model name or URL");
  const char *what = optind < argc ? argv[optind] : tt_known_models(&(size_t){0})[0].name;
  const tt_known_model *known = tt_known_model_named(what);
  char *url = NULL;
  if (known) {
    int rc = TT_EXIT_OK;
    url = tt_pull_known_url(known, &rc);
    if (!url) return rc;
  } else {
    if (!strstr(what, "://"))
      return tt_usage_error("pull", "'%s' is neither a known model (see --list) nor a URL", what);
    tt_error why;
    if (!tt_pull_url_ok(what, &why)) return tt_usage_error("pull", "%s", why.message);
    url = tt_xstrdup(what);
  }
  char *file = tt_url_file_name(url);
  if (!*file || !strstr(file, ".gguf")) {
    free(file);
    free(url);
    return tt_usage_error("pull", "the URL must name a .gguf file");
  }
  char *dir = tt_models_dir();
  if (!tt_mkdir_p(dir, 0755)) {
    int rc = tt_fail(TT_EXIT_FAIL, "cannot create %s; set TABLETALK_DATA_DIR to a writable folder", dir);
    free(dir);
    free(file);
    free(url);
    return rc;
  }
  /* a model split into parts: every part, from the first; the default
   * points at the first part, the name llama.cpp loads the others from */
  int count = tt_gguf_split_count(file, NULL);
  int rc = TT_EXIT_OK;
  char *first = NULL;
  if (count > 1) {
    for (int i = 1; i <= count && rc == TT_EXIT_OK; i++) {
      char *part_url = tt_gguf_split_part(url, i);
      char *part_file = tt_url_file_name(part_url);
      rc = tt_pull_one(part_url, dir, part_file, i, count, NULL);
      if (i == 1) first = tt_xstrdup(part_file);
      free(part_file);
      free(part_url);
    }
  } else {
    rc = tt_pull_one(url, dir, file, 1, 1, known ? known->sha256 : NULL);
    first = tt_xstrdup(file);
  }
  if (rc == TT_EXIT_OK && set_default) {
    char *link = tt_xasprintf("%s/default.gguf", dir);
    unlink(link);
    if (symlink(first, link) != 0) rc = tt_fail(TT_EXIT_FAIL, "cannot set the default model: %s", strerror(errno));
    else printf("default model: %s\n", first);
    free(link);
  }
  free(first);
  free(dir);
  free(file);
  free(url);
  return rc;
}

/* One installed model: a whole file, or the first part of a split model
 * with the sizes of all its parts (complete when every part is there). */
typedef struct tt_installed {
  const char *name;
  long long bytes;
  int parts, present;
} tt_installed;

static bool tt_installed_at(const char *dir, const char *name, tt_installed *m) {
  int no = 0;
  int count = tt_gguf_split_count(name, &no);
  if (count > 1 && no != 1) return false; /* counted with its first part */
  *m = (tt_installed){.name = name, .parts = count > 1 ? count : 1};
  for (int i = 1; i <= m->parts; i++) {
    char *file = count > 1 ? tt_gguf_split_part(name, i) : tt_xstrdup(name);
    char *path = tt_xasprintf("%s/%s", dir, file);
    struct stat st;
    if (stat(path, &st) == 0) {
      m->bytes += (long long)st.st_size;
      m->present++;
    }
    free(path);
    free(file);
  }
  return true;
}

/* models rm NAME: the installed file NAME (with or without .gguf, or the
 * name pull knows it by), every part of a split model, and the default
 * link when it pointed there. */
static int tt_models_rm(int argc, char **argv) {
  int flags = 0; /* options after rm: only --help */
  int rc0 = tt_opts_parse(&tt_cmd_models_rm, argc, argv, 2, tt_flag_option, &flags);
  if (rc0 != TT_OPTS_GO) return rc0;
  if (argc - optind != 1)
    return tt_usage_error("models", "models rm takes one installed model's name (see tabletalk models)");
  const char *name = argv[optind];
  if (strchr(name, '/') || strcmp(name, "default.gguf") == 0 || strcmp(name, "default") == 0)
    return tt_usage_error("models", "give a model's name as tabletalk models lists it, not '%s'", name);
  char *dir = tt_models_dir();
  const tt_known_model *known = tt_known_model_named(name);
  char *file = known ? tt_url_file_name(known->url)
               : strstr(name, ".gguf") ? tt_xstrdup(name) : tt_xasprintf("%s.gguf", name);
  tt_installed m;
  char *path = tt_xasprintf("%s/%s", dir, file);
  int rc = TT_EXIT_OK;
  if (!tt_file_exists(path) || !tt_installed_at(dir, file, &m)) {
    rc = tt_fail(TT_EXIT_FAIL, "no model %s is installed in %s; `tabletalk models` lists them", name, dir);
  } else {
    char *link = tt_xasprintf("%s/default.gguf", dir);
    char target[4096] = {0};
    ssize_t tl = readlink(link, target, sizeof target - 1);
    bool was_default = tl > 0 && strcmp(target, file) == 0;
    size_t removed = 0;
    for (int i = 1; i <= m.parts; i++) {
      char *part = m.parts > 1 ? tt_gguf_split_part(file, i) : tt_xstrdup(file);
      char *pp = tt_xasprintf("%s/%s", dir, part);
      char *partial = tt_xasprintf("%s.part", pp);
      unlink(partial); /* an interrupted download of it */
      if (unlink(pp) == 0) removed++;
      else if (errno != ENOENT) rc = tt_fail(TT_EXIT_FAIL, "cannot remove %s: %s", pp, strerror(errno));
      free(partial);
      free(pp);
      free(part);
    }
    if (was_default && rc == TT_EXIT_OK) unlink(link);
    if (rc == TT_EXIT_OK) {
      printf("removed %s", file);
      if (m.parts > 1) printf(" (%zu of %d parts)", removed, m.parts);
      char h[32];
      tt_human(h, sizeof h, m.bytes);
      printf(", %s freed\n", h);
      if (was_default) printf("it was the default model: `tabletalk pull` sets a new one\n");
    }
    free(link);
  }
  free(path);
  free(file);
  free(dir);
  return rc;
}

int cmd_models(int argc, char **argv) {
  if (argc >= 2 && strcmp(argv[1], "rm") == 0) return tt_models_rm(argc, argv);
  int flags = 0;
  int rc0 = tt_opts_parse(&tt_cmd_models, argc, argv, 1, tt_flag_option, &flags);
  if (rc0 != TT_OPTS_GO) return rc0;
  if (optind < argc) return tt_usage_error("models", "unknown argument '%s'", argv[optind]);
  if (flags & 2) return tt_models_which();
  bool json = flags & 1;
  char *dir = tt_models_dir();
  char *link = tt_xasprintf("%s/default.gguf", dir);
  char target[4096] = {0};
  ssize_t tl = readlink(link, target, sizeof target - 1);
  if (tl < 0) target[0] = '\0';
  size_t n;
  char **names = tt_list_files(dir, ".gguf", &n);
  json_t *arr = json_array();
  tt_buf out = TT_BUF_INIT;
  if (!json) tt_buf_printf(&out, "Installed in %s:\n", dir);
  size_t shown = 0;
  for (size_t i = 0; i < n; i++) {
    tt_installed m;
    if (strcmp(names[i], "default.gguf") == 0 || !tt_installed_at(dir, names[i], &m)) continue;
    char *path = tt_xasprintf("%s/%s", dir, names[i]);
    bool is_default = strcmp(names[i], target) == 0;
    if (json) {
      json_array_append_new(arr, json_pack("{s:s,s:s,s:I,s:b,s:i,s:b}", "name", names[i], "path",
                                           path, "bytes", (json_int_t)m.bytes, "default", is_default,
                                           "parts", m.parts, "complete", m.present == m.parts));
    } else {
      char h[32];
      tt_human(h, sizeof h, m.bytes);
      tt_buf_printf(&out, "  %-44s %9s", names[i], h);
      if (m.parts > 1 && m.present == m.parts) tt_buf_printf(&out, "  %d parts", m.parts);
      else if (m.parts > 1) tt_buf_printf(&out, "  %d of %d parts: pull again", m.present, m.parts);
      tt_buf_puts(&out, is_default ? "  [default]\n" : "\n");
    }
    shown++;
    free(path);
  }
  if (json) {
    tt_json_dump(&out, arr, JSON_COMPACT);
    tt_buf_putc(&out, '\n');
  } else {
    if (!shown) tt_buf_puts(&out, "  (none yet: tabletalk pull downloads one)\n");
    tt_buf_putc(&out, '\n');
    tt_pull_list_to(&out);
  }
  int rc = tt_write_result(stdout, &out);
  tt_buf_free(&out);
  json_decref(arr);
  tt_strv_free(names, n);
  free(link);
  free(dir);
  return rc;
}
