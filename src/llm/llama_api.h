/* llama_api.h — llama.cpp, loaded from its own shared object
 * (libtabletalk-llama.so, built beside the program) when the embedded
 * engine is first used rather than when the program starts: linked in,
 * llama.cpp's C++ static constructors (its architecture and tensor name
 * tables), its relocations and a 13 MB binary were most of what every
 * command paid before main, `--version` and `sql` included (issue 30).
 * The engine's files include this header instead of "llama.h": each llama_
 * function they call is a macro for the loaded function, so the calls read
 * as llama.cpp's own. Nothing may call them before tt_llama_api_get() has
 * succeeded once. */
#ifndef TT_LLAMA_API_H
#define TT_LLAMA_API_H

#include "llama.h"

#include <stdio.h>

#include "tt_version.h"
#include "util/util.h"

/* The shared object's file name, and the function it exports besides
 * llama.cpp's API: what it was built from (tabletalk's version and the
 * sizes of the parameter structs passed by value) written into buf, which
 * must equal the program's own so that a stale copy is refused rather than called. */
#define TT_LLAMA_LIB_FILE "libtabletalk-llama.so"
#define TT_LLAMA_LIB_STAMP_FN "tt_llama_lib_stamp"
void tt_llama_lib_stamp(char *buf, size_t cap);
/* What tt_llama_lib_stamp writes, built from the headers at hand. */
#define TT_LLAMA_LIB_STAMP(buf, cap)                                                           \
  snprintf((buf), (cap), "%s %zu/%zu/%zu/%zu", TT_VERSION, sizeof(struct llama_model_params),    \
           sizeof(struct llama_context_params), sizeof(struct llama_batch),                     \
           sizeof(struct llama_sampler_chain_params))

typedef struct tt_llama_api {
  void (*backend_init)(void);
  void (*backend_free)(void);
  struct llama_batch (*batch_get_one)(llama_token *tokens, int32_t n_tokens);
  int32_t (*chat_apply_template)(const char *tmpl, const struct llama_chat_message *chat, size_t n_msg, bool add_ass, char *buf, int32_t length);
  struct llama_context_params (*context_default_params)(void);
  int32_t (*decode)(struct llama_context *ctx, struct llama_batch batch);
  void (*free)(struct llama_context *ctx);
  float *(*get_embeddings_seq)(struct llama_context *ctx, llama_seq_id seq_id);
  float *(*get_logits_ith)(struct llama_context *ctx, int32_t i);
  llama_memory_t (*get_memory)(const struct llama_context *ctx);
  struct llama_context *(*init_from_model)(struct llama_model *model, struct llama_context_params params);
  void (*log_set)(ggml_log_callback log_callback, void *user_data);
  void (*memory_clear)(llama_memory_t mem, bool data);
  bool (*memory_seq_rm)(llama_memory_t mem, llama_seq_id seq_id, llama_pos p0, llama_pos p1);
  const char *(*model_chat_template)(const struct llama_model *model, const char *name);
  struct llama_model_params (*model_default_params)(void);
  void (*model_free)(struct llama_model *model);
  const struct llama_vocab *(*model_get_vocab)(const struct llama_model *model);
  struct llama_model *(*model_load_from_file)(const char *path_model, struct llama_model_params params);
  int32_t (*model_meta_val_str)(const struct llama_model *model, const char *key, char *buf, size_t buf_size);
  int32_t (*model_n_ctx_train)(const struct llama_model *model);
  int32_t (*model_n_embd)(const struct llama_model *model);
  int32_t (*model_n_head)(const struct llama_model *model);
  int32_t (*model_n_head_kv)(const struct llama_model *model);
  int32_t (*model_n_layer)(const struct llama_model *model);
  uint64_t (*model_size)(const struct llama_model *model);
  uint32_t (*n_ctx)(const struct llama_context *ctx);
  void (*sampler_accept)(struct llama_sampler *smpl, llama_token token);
  void (*sampler_apply)(struct llama_sampler *smpl, llama_token_data_array *cur_p);
  void (*sampler_chain_add)(struct llama_sampler *chain, struct llama_sampler *smpl);
  struct llama_sampler_chain_params (*sampler_chain_default_params)(void);
  struct llama_sampler *(*sampler_chain_init)(struct llama_sampler_chain_params params);
  struct llama_sampler *(*sampler_clone)(const struct llama_sampler *smpl);
  void (*sampler_free)(struct llama_sampler *smpl);
  struct llama_sampler *(*sampler_init)(struct llama_sampler_i *iface, llama_sampler_context_t ctx);
  struct llama_sampler *(*sampler_init_dist)(uint32_t seed);
  struct llama_sampler *(*sampler_init_grammar)(const struct llama_vocab *vocab, const char *grammar_str, const char *grammar_root);
  struct llama_sampler *(*sampler_init_temp)(float t);
  void (*sampler_reset)(struct llama_sampler *smpl);
  size_t (*state_seq_load_file)(struct llama_context *ctx, const char *filepath, llama_seq_id dest_seq_id, llama_token *tokens_out, size_t n_token_capacity, size_t *n_token_count_out);
  size_t (*state_seq_save_file)(struct llama_context *ctx, const char *filepath, llama_seq_id seq_id, const llama_token *tokens, size_t n_token_count);
  int32_t (*token_to_piece)(const struct llama_vocab *vocab, llama_token token, char *buf, int32_t length, int32_t lstrip, bool special);
  int32_t (*tokenize)(const struct llama_vocab *vocab, const char *text, int32_t text_len, llama_token *tokens, int32_t n_tokens_max, bool add_special, bool parse_special);
  llama_token (*vocab_eos)(const struct llama_vocab *vocab);
  llama_token (*vocab_eot)(const struct llama_vocab *vocab);
  bool (*vocab_is_eog)(const struct llama_vocab *vocab, llama_token token);
  int32_t (*vocab_n_tokens)(const struct llama_vocab *vocab);
} tt_llama_api;

/* The loaded table, or NULL (why in err: TT_ERR_UNAVAILABLE, with a hint)
 * when the shared object cannot be found or is not this build's. Safe from
 * any thread; the object stays loaded for good. */
const tt_llama_api *tt_llama_api_get(tt_error *err);

/* The table once loaded (NULL before): what the macros below call. */
extern const tt_llama_api *tt_llama_fn;

#define llama_backend_init (tt_llama_fn->backend_init)
#define llama_backend_free (tt_llama_fn->backend_free)
#define llama_batch_get_one (tt_llama_fn->batch_get_one)
#define llama_chat_apply_template (tt_llama_fn->chat_apply_template)
#define llama_context_default_params (tt_llama_fn->context_default_params)
#define llama_decode (tt_llama_fn->decode)
#define llama_free (tt_llama_fn->free)
#define llama_get_embeddings_seq (tt_llama_fn->get_embeddings_seq)
#define llama_get_logits_ith (tt_llama_fn->get_logits_ith)
#define llama_get_memory (tt_llama_fn->get_memory)
#define llama_init_from_model (tt_llama_fn->init_from_model)
#define llama_log_set (tt_llama_fn->log_set)
#define llama_memory_clear (tt_llama_fn->memory_clear)
#define llama_memory_seq_rm (tt_llama_fn->memory_seq_rm)
#define llama_model_chat_template (tt_llama_fn->model_chat_template)
#define llama_model_default_params (tt_llama_fn->model_default_params)
#define llama_model_free (tt_llama_fn->model_free)
#define llama_model_get_vocab (tt_llama_fn->model_get_vocab)
#define llama_model_load_from_file (tt_llama_fn->model_load_from_file)
#define llama_model_meta_val_str (tt_llama_fn->model_meta_val_str)
#define llama_model_n_ctx_train (tt_llama_fn->model_n_ctx_train)
#define llama_model_n_embd (tt_llama_fn->model_n_embd)
#define llama_model_n_head (tt_llama_fn->model_n_head)
#define llama_model_n_head_kv (tt_llama_fn->model_n_head_kv)
#define llama_model_n_layer (tt_llama_fn->model_n_layer)
#define llama_model_size (tt_llama_fn->model_size)
#define llama_n_ctx (tt_llama_fn->n_ctx)
#define llama_sampler_accept (tt_llama_fn->sampler_accept)
#define llama_sampler_apply (tt_llama_fn->sampler_apply)
#define llama_sampler_chain_add (tt_llama_fn->sampler_chain_add)
#define llama_sampler_chain_default_params (tt_llama_fn->sampler_chain_default_params)
#define llama_sampler_chain_init (tt_llama_fn->sampler_chain_init)
#define llama_sampler_clone (tt_llama_fn->sampler_clone)
#define llama_sampler_free (tt_llama_fn->sampler_free)
#define llama_sampler_init (tt_llama_fn->sampler_init)
#define llama_sampler_init_dist (tt_llama_fn->sampler_init_dist)
#define llama_sampler_init_grammar (tt_llama_fn->sampler_init_grammar)
#define llama_sampler_init_temp (tt_llama_fn->sampler_init_temp)
#define llama_sampler_reset (tt_llama_fn->sampler_reset)
#define llama_state_seq_load_file (tt_llama_fn->state_seq_load_file)
#define llama_state_seq_save_file (tt_llama_fn->state_seq_save_file)
#define llama_token_to_piece (tt_llama_fn->token_to_piece)
#define llama_tokenize (tt_llama_fn->tokenize)
#define llama_vocab_eos (tt_llama_fn->vocab_eos)
#define llama_vocab_eot (tt_llama_fn->vocab_eot)
#define llama_vocab_is_eog (tt_llama_fn->vocab_is_eog)
#define llama_vocab_n_tokens (tt_llama_fn->vocab_n_tokens)

#endif
