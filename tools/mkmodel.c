/* mkmodel.c — writes random-weight GGUF models for tests and benchmarks:
 * the qwen2 architecture with the Qwen2 tokenizer taken from the vocabulary
 * file of the llama.cpp source (models/ggml-vocab-qwen2.gguf), either
 *   tiny:  2 layers, 64 wide, the vocabulary cut to the byte tokens, the
 *          first 4,000 merges and the specials (under 1 MB, loads in
 *          milliseconds; still tokenizes any text through byte tokens), or
 *   0.5b / 1.5b / 3b / 7b: the shapes of Qwen2.5(-Coder)-0.5B/1.5B/3B/7B-
 *          Instruct with the full vocabulary (the 7B with its own output
 *          matrix, the others tied to the embeddings as the real ones),
 *          quantized to Q4_K_M like the real files (docs/guide/models.md measures
 *          memory and speed with them),
 * with a ChatML chat template that describes tool calls as Qwen2.5 does.
 * Same seed, same file. The answers of such a model are nonsense; every
 * token still costs a real forward pass.
 *
 * --split N writes the model in N parts the way llama.cpp's gguf-split
 * names and fills them (OUT-00001-of-0000N.gguf, ...: each part a GGUF file
 * holding split.no, split.count and split.tensors.count, the first one all
 * other metadata too, the tensors in order), so that downloading and
 * loading a split model can be tested; the weights equal the unsplit
 * file's.
 *
 * usage: tt-mkmodel VOCAB.gguf OUT.gguf [tiny|0.5b|1.5b|3b|7b] [SEED] [--split N] */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ggml.h"
#include "gguf.h"
#include "llama.h"

typedef struct shape {
  const char *name;
  int n_embd, n_layer, n_head, n_head_kv, n_ff;
  int n_merges; /* 0: the whole vocabulary */
  enum ggml_type wtype; /* weights as written (then quantized for the real shapes) */
  bool quantize;
  bool untied; /* an output matrix of its own (the 7B), not the embeddings */
} shape;

static const shape shapes[] = {
    {"tiny", 64, 2, 4, 2, 128, 4000, GGML_TYPE_Q8_0, false},
    {"0.5b", 896, 24, 14, 2, 4864, 0, GGML_TYPE_F16, true},
    {"1.5b", 1536, 28, 12, 2, 8960, 0, GGML_TYPE_F16, true},
    {"3b", 2048, 36, 16, 2, 11008, 0, GGML_TYPE_F16, true},
    {"7b", 3584, 28, 28, 4, 18944, 0, GGML_TYPE_F16, true, true},
};

/* A ChatML template with Qwen2.5's tool section (llama.cpp's own
 * formatter recognises ChatML by <|im_start|>). */
static const char chat_template[] =
    "{%- if tools %}{{- '<|im_start|>system\\n' + messages[0]['content'] + '\\n\\n# Tools\\n\\n"
    "You may call one or more functions to assist with the user query.\\n\\nYou are provided with "
    "function signatures within <tools></tools> XML tags:\\n<tools>' }}{%- for tool in tools %}"
    "{{- '\\n' + (tool | tojson) }}{%- endfor %}{{- '\\n</tools>\\n\\nFor each function call, return "
    "a json object with function name and arguments within <tool_call></tool_call> XML tags:\\n"
    "<tool_call>\\n{\"name\": <function-name>, \"arguments\": <args-json-object>}\\n</tool_call>"
    "<|im_end|>\\n' }}{%- endif %}{%- for message in messages %}{{- '<|im_start|>' + message.role "
    "+ '\\n' + message.content + '<|im_end|>\\n' }}{%- endfor %}{%- if add_generation_prompt %}"
    "{{- '<|im_start|>assistant\\n' }}{%- endif %}";

/* xorshift: the same seed gives the same file. */
static uint64_t rng_state;
static float rnd(void) {
  rng_state ^= rng_state << 13;
  rng_state ^= rng_state >> 7;
  rng_state ^= rng_state << 17;
  return (float)((rng_state >> 11) * (1.0 / 9007199254740992.0)) * 2.0f - 1.0f;
}

static void quiet(enum ggml_log_level level, const char *text, void *ud) {
  (void)ud;
  if (level == GGML_LOG_LEVEL_ERROR) fputs(text, stderr);
}

static void die(const char *what) {
  fprintf(stderr, "tt-mkmodel: %s\n", what);
  exit(1);
}

/* Copies the tokenizer, cut to n_keep regular tokens plus the specials. */
static int64_t copy_vocab(struct gguf_context *dst, struct gguf_context *src, int n_merges) {
  int64_t kt = gguf_find_key(src, "tokenizer.ggml.tokens");
  int64_t ktype = gguf_find_key(src, "tokenizer.ggml.token_type");
  int64_t km = gguf_find_key(src, "tokenizer.ggml.merges");
  if (kt < 0 || ktype < 0 || km < 0) die("the vocabulary file lacks tokens, types or merges");
  size_t n_all = gguf_get_arr_n(src, kt);
  const int32_t *types = gguf_get_arr_data(src, ktype);
  size_t first_special = 0;
  while (first_special < n_all && types[first_special] == 1) first_special++;
  size_t n_regular = n_merges ? (size_t)(256 + n_merges) : first_special;
  if (n_regular > first_special) n_regular = first_special;
  size_t n_special = n_all - first_special;
  size_t n_vocab = n_regular + n_special;
  const char **toks = malloc(n_vocab * sizeof(char *));
  int32_t *tt = malloc(n_vocab * sizeof(int32_t));
  for (size_t i = 0; i < n_vocab; i++) {
    size_t from = i < n_regular ? i : first_special + (i - n_regular);
    toks[i] = gguf_get_arr_str(src, kt, from);
    tt[i] = types[from];
  }
  gguf_set_arr_str(dst, "tokenizer.ggml.tokens", toks, n_vocab);
  gguf_set_arr_data(dst, "tokenizer.ggml.token_type", GGUF_TYPE_INT32, tt, n_vocab);
  size_t n_m = n_merges ? (size_t)n_merges : gguf_get_arr_n(src, km);
  const char **merges = malloc(n_m * sizeof(char *));
  for (size_t i = 0; i < n_m; i++) merges[i] = gguf_get_arr_str(src, km, i);
  gguf_set_arr_str(dst, "tokenizer.ggml.merges", merges, n_m);
  gguf_set_val_str(dst, "tokenizer.ggml.model", "gpt2");
  gguf_set_val_str(dst, "tokenizer.ggml.pre", "qwen2");
  /* <|endoftext|> is the first special, <|im_end|> the third */
  gguf_set_val_u32(dst, "tokenizer.ggml.bos_token_id", (uint32_t)n_regular);
  gguf_set_val_u32(dst, "tokenizer.ggml.padding_token_id", (uint32_t)n_regular);
  gguf_set_val_u32(dst, "tokenizer.ggml.eos_token_id", (uint32_t)(n_regular + 2));
  gguf_set_val_bool(dst, "tokenizer.ggml.add_bos_token", false);
  free(toks);
  free(tt);
  free(merges);
  return (int64_t)n_vocab;
}

static struct ggml_tensor *tensor(struct ggml_context *ctx, struct gguf_context *g, const char *name,
                                  enum ggml_type type, int64_t ne0, int64_t ne1) {
  struct ggml_tensor *t = ne1 ? ggml_new_tensor_2d(ctx, type, ne0, ne1) : ggml_new_tensor_1d(ctx, type, ne0);
  ggml_set_name(t, name);
  gguf_add_tensor(g, t);
  return t;
}

/* Random data for t, written in its type; norms are 1, biases 0. */
static void write_tensor(FILE *f, const struct ggml_tensor *t, size_t align) {
  int64_t n = ggml_nelements(t);
  float *v = malloc((size_t)n * sizeof(float));
  bool is_norm = strstr(t->name, "norm") != NULL, is_bias = strstr(t->name, "bias") != NULL;
  float scale = 1.0f / sqrtf((float)t->ne[0]);
  for (int64_t i = 0; i < n; i++) v[i] = is_norm ? 1.0f : is_bias ? 0.0f : rnd() * scale;
  size_t bytes = ggml_nbytes(t);
  void *out = malloc(bytes);
  if (t->type == GGML_TYPE_F32) memcpy(out, v, bytes);
  else if (t->type == GGML_TYPE_F16) ggml_fp32_to_fp16_row(v, out, n);
  else ggml_quantize_chunk(t->type, v, out, 0, t->ne[1] ? t->ne[1] : 1, t->ne[0], NULL);
  if (fwrite(out, 1, bytes, f) != bytes) die("write failed");
  static const char zeros[64] = {0};
  size_t pad = (align - bytes % align) % align;
  if (pad && fwrite(zeros, 1, pad, f) != pad) die("write failed");
  free(out);
  free(v);
}

/* Rewrites the model at path as n parts named after it (path without
 * .gguf, then -00001-of-0000n.gguf ...) and removes path. */
static void split_model(const char *path, int n) {
  struct ggml_context *data = NULL;
  struct gguf_init_params p = {.no_alloc = false, .ctx = &data};
  struct gguf_context *src = gguf_init_from_file(path, p);
  if (!src) die("cannot read the model back to split it");
  int64_t nt = gguf_get_n_tensors(src);
  if (n > nt) die("more parts than tensors");
  int stem = (int)strlen(path) - 5; /* without ".gguf" */
  for (int i = 0; i < n; i++) {
    struct gguf_context *part = gguf_init_empty();
    if (i == 0) gguf_set_kv(part, src);
    gguf_set_val_u16(part, "split.no", (uint16_t)i);
    gguf_set_val_u16(part, "split.count", (uint16_t)n);
    gguf_set_val_i32(part, "split.tensors.count", (int32_t)nt);
    for (int64_t t = nt * i / n; t < nt * (i + 1) / n; t++)
      gguf_add_tensor(part, ggml_get_tensor(data, gguf_get_tensor_name(src, t)));
    char *name = malloc((size_t)stem + 32);
    sprintf(name, "%.*s-%05d-of-%05d.gguf", stem, path, i + 1, n);
    if (!gguf_write_to_file(part, name, false)) die("cannot write a part");
    free(name);
    gguf_free(part);
  }
  gguf_free(src);
  ggml_free(data);
  unlink(path);
}

int main(int argc, char **argv) {
  int parts = 1;
  if (argc >= 2 && strcmp(argv[argc - 2], "--split") == 0) {
    parts = atoi(argv[argc - 1]);
    if (parts < 2 || parts > 99) die("--split wants a number of parts from 2 to 99");
    argc -= 2;
  }
  if (argc < 3) {
    fprintf(stderr, "usage: tt-mkmodel VOCAB.gguf OUT.gguf [tiny|0.5b|1.5b|3b|7b] [SEED] [--split N]\n");
    return 2;
  }
  size_t out_len = strlen(argv[2]);
  if (parts > 1 && (out_len < 6 || strcmp(argv[2] + out_len - 5, ".gguf") != 0))
    die("with --split, OUT must end in .gguf (the parts are named after it)");
  const char *which = argc > 3 ? argv[3] : "tiny";
  rng_state = argc > 4 ? strtoull(argv[4], NULL, 10) * 2654435761ULL + 1 : 88172645463325252ULL;
  const shape *sh = NULL;
  for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++)
    if (strcmp(shapes[i].name, which) == 0) sh = &shapes[i];
  if (!sh) die("unknown shape (tiny, 0.5b, 1.5b, 3b or 7b)");

  struct gguf_init_params vp = {.no_alloc = true, .ctx = NULL};
  struct gguf_context *vocab = gguf_init_from_file(argv[1], vp);
  if (!vocab) die("cannot read the vocabulary file");
  struct gguf_context *g = gguf_init_empty();
  gguf_set_val_str(g, "general.architecture", "qwen2");
  gguf_set_val_str(g, "general.name", sh->quantize ? "random-qwen2.5-shape" : "tiny-random-qwen2");
  gguf_set_val_u32(g, "general.file_type", sh->wtype == GGML_TYPE_F16 ? 1 : 7);
  gguf_set_val_u32(g, "qwen2.context_length", 32768);
  gguf_set_val_u32(g, "qwen2.embedding_length", (uint32_t)sh->n_embd);
  gguf_set_val_u32(g, "qwen2.block_count", (uint32_t)sh->n_layer);
  gguf_set_val_u32(g, "qwen2.feed_forward_length", (uint32_t)sh->n_ff);
  gguf_set_val_u32(g, "qwen2.attention.head_count", (uint32_t)sh->n_head);
  gguf_set_val_u32(g, "qwen2.attention.head_count_kv", (uint32_t)sh->n_head_kv);
  gguf_set_val_f32(g, "qwen2.attention.layer_norm_rms_epsilon", 1e-6f);
  gguf_set_val_f32(g, "qwen2.rope.freq_base", 1000000.0f);
  gguf_set_val_str(g, "tokenizer.chat_template", chat_template);
  int64_t n_vocab = copy_vocab(g, vocab, sh->n_merges);

  size_t nt = 4 + (size_t)sh->n_layer * 12;
  struct ggml_init_params ip = {.mem_size = nt * ggml_tensor_overhead() + 1024, .mem_buffer = NULL,
                                .no_alloc = true};
  struct ggml_context *ctx = ggml_init(ip);
  int64_t e = sh->n_embd, kv = (int64_t)sh->n_embd / sh->n_head * sh->n_head_kv, ff = sh->n_ff;
  enum ggml_type w = sh->wtype;
  /* tied embeddings (as the real 0.5B to 3B): no output.weight */
  tensor(ctx, g, "token_embd.weight", w, e, n_vocab);
  tensor(ctx, g, "output_norm.weight", GGML_TYPE_F32, e, 0);
  if (sh->untied) tensor(ctx, g, "output.weight", w, e, n_vocab);
  char name[64];
  for (int l = 0; l < sh->n_layer; l++) {
#define T(suffix, type, a, b) (snprintf(name, sizeof name, "blk.%d." suffix, l), tensor(ctx, g, name, type, a, b))
    T("attn_norm.weight", GGML_TYPE_F32, e, 0);
    T("attn_q.weight", w, e, e);
    T("attn_k.weight", w, e, kv);
    T("attn_v.weight", w, e, kv);
    T("attn_q.bias", GGML_TYPE_F32, e, 0);
    T("attn_k.bias", GGML_TYPE_F32, kv, 0);
    T("attn_v.bias", GGML_TYPE_F32, kv, 0);
    T("attn_output.weight", w, e, e);
    T("ffn_norm.weight", GGML_TYPE_F32, e, 0);
    T("ffn_gate.weight", w, e, ff);
    T("ffn_down.weight", w, ff, e);
    T("ffn_up.weight", w, e, ff);
#undef T
  }

  const char *out_path = argv[2];
  char *tmp = malloc(strlen(out_path) + 16);
  sprintf(tmp, "%s%s", out_path, sh->quantize ? ".f16" : ".tmp");
  FILE *f = fopen(tmp, "wb");
  if (!f) die("cannot create the output file");
  if (!gguf_write_to_file_ptr(g, f, true)) die("cannot write the header");
  size_t align = gguf_get_alignment(g);
  for (struct ggml_tensor *t = ggml_get_first_tensor(ctx); t; t = ggml_get_next_tensor(ctx, t))
    write_tensor(f, t, align);
  if (fclose(f) != 0) die("write failed");
  ggml_free(ctx);
  gguf_free(g);
  gguf_free(vocab);

  if (sh->quantize) {
    llama_log_set(quiet, NULL);
    llama_backend_init();
    struct llama_model_quantize_params qp = llama_model_quantize_default_params();
    qp.ftype = LLAMA_FTYPE_MOSTLY_Q4_K_M;
    qp.nthread = (int)sysconf(_SC_NPROCESSORS_ONLN);
    if (llama_model_quantize(tmp, out_path, &qp) != 0) die("quantization failed");
    unlink(tmp);
  } else if (rename(tmp, out_path) != 0) {
    die("cannot rename the output file");
  }
  free(tmp);
  if (parts > 1) split_model(out_path, parts);
  return 0;
}
