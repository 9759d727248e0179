/* catalog.c — the model catalogue: the models `tabletalk pull` knows by
 * name (what each is good at, its size, memory, URL and sha256), where a
 * known model is fetched from (a Hugging Face mirror included), and which
 * installed model the defaults point at. The CLI's pull and models commands
 * and the session's model factory all read it here. */
#include "llm/llm.h"

#include <stdlib.h>
#include <string.h>

/* The first is the default. URLs, sizes and sha256 were checked against
 * public listings (docs/guide/models.md says how); RAM is the file plus the KV
 * cache and compute buffers at the default context (same page). */
static const tt_known_model tt_catalog[] = {
    {"qwen2.5-coder-7b", TT_MODEL_AGENT, 4.68, 6.0, "",
     "https://huggingface.co/Qwen/Qwen2.5-Coder-7B-Instruct-GGUF/resolve/main/"
     "qwen2.5-coder-7b-instruct-q4_k_m.gguf",
     "509287f78cb4d4cf6b3843734733b914b2c158e43e22a7f4bf5e963800894d3c"},
    {"qwen2.5-coder-3b", TT_MODEL_AGENT, 2.10, 3.0, "research licence",
     "https://huggingface.co/Qwen/Qwen2.5-Coder-3B-Instruct-GGUF/resolve/main/"
     "qwen2.5-coder-3b-instruct-q4_k_m.gguf",
     "724fb256bec1ff062b2f65e4569e871ad2e95ab2a3989723d1769c54294730b7"},
    {"qwen2.5-coder-1.5b", TT_MODEL_AGENT, 1.12, 2.0, "",
     "https://huggingface.co/Qwen/Qwen2.5-Coder-1.5B-Instruct-GGUF/resolve/main/"
     "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
     "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046"},
    {"qwen3-8b", TT_MODEL_GENERAL, 5.03, 7.0, "",
     "https://huggingface.co/Qwen/Qwen3-8B-GGUF/resolve/main/Qwen3-8B-Q4_K_M.gguf",
     "d98cdcbd03e17ce47681435b5150e34c1417f50b5c0019dd560e4882c5745785"},
    {"qwen3-4b", TT_MODEL_GENERAL, 2.50, 4.5, "",
     "https://huggingface.co/Qwen/Qwen3-4B-GGUF/resolve/main/Qwen3-4B-Q4_K_M.gguf",
     "7485fe6f11af29433bc51cab58009521f205840f5b4ae3a32fa7f92e8534fdf5"},
    {"omnisql-7b", TT_MODEL_SQL_WRITER, 4.68, 6.0, "",
     "https://huggingface.co/mradermacher/OmniSQL-7B-GGUF/resolve/main/OmniSQL-7B.Q4_K_M.gguf",
     NULL},
    {"xiyan-7b", TT_MODEL_SQL_WRITER, 4.68, 6.0, "",
     "https://huggingface.co/mradermacher/XiYanSQL-QwenCoder-7B-2504-GGUF/resolve/main/"
     "XiYanSQL-QwenCoder-7B-2504.Q4_K_M.gguf",
     NULL},
};

#define TT_CATALOG_SIZE (sizeof tt_catalog / sizeof tt_catalog[0])

const tt_known_model *tt_known_models(size_t *n) {
  *n = TT_CATALOG_SIZE;
  return tt_catalog;
}

const tt_known_model *tt_known_model_named(const char *name) {
  for (size_t i = 0; name && i < TT_CATALOG_SIZE; i++)
    if (strcmp(name, tt_catalog[i].name) == 0) return &tt_catalog[i];
  return NULL;
}

const char *tt_model_role_name(tt_model_role role) {
  switch (role) {
  case TT_MODEL_AGENT: return "tool-calling agent";
  case TT_MODEL_GENERAL: return "general, thinks";
  case TT_MODEL_SQL_WRITER: return "SQL writer";
  }
  return "?";
}

char *tt_known_model_url(const tt_known_model *m, const char *mirror, tt_error *err) {
  static const char hf[] = "https://huggingface.co";
  if (!mirror || !*mirror) return tt_xstrdup(m->url);
  size_t n = strlen(mirror);
  while (n > 0 && mirror[n - 1] == '/') n--;
  char *url = tt_xasprintf("%.*s%s", (int)n, mirror, m->url + sizeof hf - 1);
  tt_error why;
  if (!tt_pull_url_ok(url, &why)) {
    tt_error_set(err, TT_ERR_CONFIG, "HF_ENDPOINT '%s' cannot serve %s: %s", mirror, m->name,
                 why.message);
    free(url);
    url = NULL;
  }
  return url;
}

char *tt_model_default_in(const char *models_dir) {
  char *path = tt_xasprintf("%s/default.gguf", models_dir);
  if (tt_file_exists(path)) return path;
  free(path);
  path = NULL;
  size_t n = 0, found = 0;
  char **names = tt_list_files(models_dir, ".gguf", &n);
  const char *only = NULL;
  for (size_t i = 0; i < n; i++) {
    int no = 0;
    if (tt_gguf_split_count(names[i], &no) > 1 && no != 1) continue;
    only = names[i];
    found++;
  }
  if (found == 1) path = tt_xasprintf("%s/%s", models_dir, only);
  tt_strv_free(names, n);
  return path;
}
