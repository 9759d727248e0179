/* cmd_pull.c — `tabletalk pull [NAME|URL]` downloads a GGUF model into
 * $XDG_DATA_HOME/tabletalk/models/ (progress bar, resumable, sha256 checked)
 * and makes it the default; `tabletalk models` lists what is installed. */
#include "cli/cli.h"

#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

typedef struct tt_known_model {
  const char *name, *about, *url;
} tt_known_model;

/* The first is the default. SQL-tuned 7B models answer best; the small
 * coder models are for CPUs where a 7B is too slow. */
static const tt_known_model tt_known_models[] = {
    {"omnisql-7b", "OmniSQL 7B, a text-to-SQL tuned Qwen2.5-Coder (Q4_K_M, about 4.7 GB)",
     "https://huggingface.co/mradermacher/OmniSQL-7B-GGUF/resolve/main/OmniSQL-7B.Q4_K_M.gguf"},
    {"xiyan-7b", "XiYanSQL-QwenCoder 7B 2504, text-to-SQL (Q4_K_M, about 4.7 GB)",
     "https://huggingface.co/mradermacher/XiYanSQL-QwenCoder-7B-2504-GGUF/resolve/main/"
     "XiYanSQL-QwenCoder-7B-2504.Q4_K_M.gguf"},
    {"qwen2.5-coder-3b", "Qwen2.5-Coder 3B Instruct (Q4_K_M, about 2.1 GB): for modest CPUs",
     "https://huggingface.co/Qwen/Qwen2.5-Coder-3B-Instruct-GGUF/resolve/main/"
     "qwen2.5-coder-3b-instruct-q4_k_m.gguf"},
    {"qwen2.5-coder-1.5b", "Qwen2.5-Coder 1.5B Instruct (Q4_K_M, about 1.1 GB): the fastest",
     "https://huggingface.co/Qwen/Qwen2.5-Coder-1.5B-Instruct-GGUF/resolve/main/"
     "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"},
};

static const char tt_pull_usage[] =
    "Usage: tabletalk pull [NAME|URL] [options]\n"
    "\n"
    "Download a GGUF model into the models folder (TABLETALK_DATA_DIR, default\n"
    "~/.local/share/tabletalk/models) and make it the default for ask and chat.\n"
    "Without NAME, the default model. URL: an https URL of a .gguf file (plain\n"
    "http only from this machine, e.g. a local mirror). An interrupted download\n"
    "resumes when run again; the sha256 the server announces is checked before\n"
    "the file is used.\n"
    "\n"
    "Options:\n"
    "      --list          the known model names\n"
    "      --no-default    keep the current default model\n"
    "  -h, --help          show this help\n";

static const char tt_models_usage[] =
    "Usage: tabletalk models [--json]\n"
    "       tabletalk models --which\n"
    "\n"
    "List the installed models (the default one is marked) and the names\n"
    "`tabletalk pull` knows. --which prints the model `ask` would use, as\n"
    "LOCATION<TAB>SOURCE (a GGUF file or an endpoint URL, and the flag,\n"
    "variable or default it came from), or exits 1 when none is set up.\n";

/* models --which: the model ask would use, from the same configuration. */
static int tt_models_which(void) {
  tt_dotenv *env = tt_dotenv_load(".env");
  tt_cli_agent_opts o;
  tt_cli_agent_defaults(&o);
  char *desc = tt_cli_describe_model(env, &o);
  tt_dotenv_free(env);
  if (!desc)
    return tt_fail(TT_EXIT_FAIL, "no model is set up: `tabletalk pull` downloads the default "
                                 "one, or set TABLETALK_MODEL_PATH or TABLETALK_BASE_URL");
  printf("%s\n", desc);
  free(desc);
  return TT_EXIT_OK;
}

static char *tt_models_dir(void) {
  tt_dotenv *env = tt_dotenv_load(".env");
  char *data = tt_default_dir(env, "DATA");
  tt_dotenv_free(env);
  char *dir = tt_xasprintf("%s/models", data);
  free(data);
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

static int tt_pull_list(void) {
  printf("Known models (tabletalk pull NAME):\n");
  for (size_t i = 0; i < sizeof tt_known_models / sizeof tt_known_models[0]; i++)
    printf("  %-20s %s%s\n", tt_known_models[i].name, tt_known_models[i].about, i ? "" : " [default]");
  printf("Any https URL of a .gguf file works too.\n");
  return TT_EXIT_OK;
}

int cmd_pull(int argc, char **argv) {
  enum { OPT_LIST = 256, OPT_NO_DEFAULT };
  static const struct option opts[] = {
      {"list", no_argument, NULL, OPT_LIST},
      {"no-default", no_argument, NULL, OPT_NO_DEFAULT},
      {"help", no_argument, NULL, 'h'},
      {NULL, 0, NULL, 0},
  };
  bool set_default = true;
  int c;
  optind = 1;
  opterr = 0;
  while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
    switch (c) {
    case OPT_LIST: return tt_pull_list();
    case OPT_NO_DEFAULT: set_default = false; break;
    case 'h': fputs(tt_pull_usage, stdout); return TT_EXIT_OK;
    default: return tt_usage_error("pull", "unknown option '%s'", argv[optind - 1]);
    }
  }
  if (argc - optind > 1) return tt_usage_error("pull", "give one model name or URL");
  const char *what = optind < argc ? argv[optind] : tt_known_models[0].name;
  const char *url = NULL;
  for (size_t i = 0; i < sizeof tt_known_models / sizeof tt_known_models[0]; i++)
    if (strcmp(what, tt_known_models[i].name) == 0) url = tt_known_models[i].url;
  if (!url) {
    if (!strstr(what, "://"))
      return tt_usage_error("pull", "'%s' is neither a known model (see --list) nor a URL", what);
    tt_buf why = TT_BUF_INIT;
    bool ok = tt_pull_url_ok(what, &why);
    int rc = ok ? TT_EXIT_OK : tt_usage_error("pull", "%s", tt_buf_cstr(&why));
    tt_buf_free(&why);
    if (!ok) return rc;
    url = what;
  }
  const char *slash = strrchr(url, '/');
  char *file = tt_xstrdup(slash ? slash + 1 : url);
  char *q = strchr(file, '?');
  if (q) *q = '\0';
  if (!*file || !strstr(file, ".gguf")) {
    free(file);
    return tt_usage_error("pull", "the URL must name a .gguf file");
  }
  char *dir = tt_models_dir();
  if (!tt_mkdir_p(dir, 0755)) {
    int rc = tt_fail(TT_EXIT_FAIL, "cannot create %s; set TABLETALK_DATA_DIR to a writable folder", dir);
    free(dir);
    free(file);
    return rc;
  }
  char *dest = tt_xasprintf("%s/%s", dir, file);
  tt_bar bar = {.t = tt_term_probe(stderr), .name = file, .t0 = tt_now_ms()};
  struct stat st;
  bar.start = stat(dest, &st) == 0 ? (long long)st.st_size : 0;
  tt_pull_opts po = {.on_progress = tt_bar_update, .ud = &bar, .cancel = tt_interrupt_install()};
  tt_pull_result res;
  tt_buf err = TT_BUF_INIT;
  int rc = TT_EXIT_OK;
  if (tt_file_exists(dest)) {
    printf("%s is already installed\n", dest);
  } else {
    char *part = tt_xasprintf("%s.part", dest);
    bar.start = stat(part, &st) == 0 ? (long long)st.st_size : 0;
    free(part);
    bool ok = tt_model_pull(url, dest, &po, &res, &err);
    if (bar.t.tty) fputs("\r\033[K", stderr);
    if (!ok) {
      rc = tt_fail(TT_EXIT_FAIL, "%s", tt_buf_cstr(&err));
    } else {
      char size[32];
      tt_human(size, sizeof size, res.bytes);
      printf("downloaded %s (%s%s)\n", dest, size, res.resumed_from ? ", resumed" : "");
      if (res.verified) printf("sha256 %s verified\n", res.sha256);
      else printf("sha256 %s (the server announced none to check against)\n", res.sha256);
    }
  }
  if (rc == TT_EXIT_OK && set_default) {
    char *link = tt_xasprintf("%s/default.gguf", dir);
    unlink(link);
    if (symlink(file, link) != 0) rc = tt_fail(TT_EXIT_FAIL, "cannot set the default model: %s", strerror(errno));
    else printf("default model: %s\n", file);
    free(link);
  }
  tt_buf_free(&err);
  free(dest);
  free(dir);
  free(file);
  return rc;
}

int cmd_models(int argc, char **argv) {
  bool json = false;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--json") == 0) json = true;
    else if (strcmp(argv[i], "--which") == 0) return tt_models_which();
    else if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
      fputs(tt_models_usage, stdout);
      return TT_EXIT_OK;
    } else return tt_usage_error("models", "unknown argument '%s'", argv[i]);
  }
  char *dir = tt_models_dir();
  char *link = tt_xasprintf("%s/default.gguf", dir);
  char target[4096] = {0};
  ssize_t tl = readlink(link, target, sizeof target - 1);
  if (tl < 0) target[0] = '\0';
  size_t n;
  char **names = tt_list_files(dir, ".gguf", &n);
  json_t *arr = json_array();
  if (!json) printf("Installed in %s:\n", dir);
  size_t shown = 0;
  for (size_t i = 0; i < n; i++) {
    if (strcmp(names[i], "default.gguf") == 0) continue;
    char *path = tt_xasprintf("%s/%s", dir, names[i]);
    struct stat st;
    long long size = stat(path, &st) == 0 ? (long long)st.st_size : 0;
    bool is_default = strcmp(names[i], target) == 0;
    if (json) {
      json_array_append_new(arr, json_pack("{s:s,s:s,s:I,s:b}", "name", names[i], "path", path,
                                           "bytes", (json_int_t)size, "default", is_default));
    } else {
      char h[32];
      tt_human(h, sizeof h, size);
      printf("  %-50s %10s%s\n", names[i], h, is_default ? "  [default]" : "");
    }
    shown++;
    free(path);
  }
  if (json) {
    tt_buf b = TT_BUF_INIT;
    tt_json_dump(&b, arr, JSON_COMPACT);
    printf("%s\n", tt_buf_cstr(&b));
    tt_buf_free(&b);
  } else {
    if (!shown) printf("  (none yet: tabletalk pull downloads one)\n");
    printf("\n");
    tt_pull_list();
  }
  json_decref(arr);
  tt_strv_free(names, n);
  free(link);
  free(dir);
  return TT_EXIT_OK;
}
