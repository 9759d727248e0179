/* llama_api.c — loading libtabletalk-llama.so on first use (see
 * llama_api.h), once per process. The object is looked for beside the
 * program ($ORIGIN: the build tree), then where `cmake --install` puts it
 * (TT_LLAMA_LIB_RELDIR, relative to the program's folder), then on the
 * loader's own search path (the test programs' RUNPATH, LD_LIBRARY_PATH). */
#include "llm/llama_api.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>

#ifndef TT_LLAMA_LIB_RELDIR
#define TT_LLAMA_LIB_RELDIR "../lib/tabletalk"
#endif

const tt_llama_api *tt_llama_fn;
static tt_llama_api tt_llama_loaded;
static tt_error tt_llama_error;
static pthread_once_t tt_llama_once = PTHREAD_ONCE_INIT;

static void tt_llama_load(void) {
  static const char *const files[] = {"$ORIGIN/" TT_LLAMA_LIB_FILE,
                                      "$ORIGIN/" TT_LLAMA_LIB_RELDIR "/" TT_LLAMA_LIB_FILE,
                                      TT_LLAMA_LIB_FILE, NULL};
  void (*stamp)(char *, size_t) = NULL;
  const tt_dl_sym syms[] = {
      {TT_LLAMA_LIB_STAMP_FN, &stamp},
      {"llama_backend_init", &tt_llama_loaded.backend_init},
      {"llama_backend_free", &tt_llama_loaded.backend_free},
      {"llama_batch_get_one", &tt_llama_loaded.batch_get_one},
      {"llama_chat_apply_template", &tt_llama_loaded.chat_apply_template},
      {"llama_context_default_params", &tt_llama_loaded.context_default_params},
      {"llama_decode", &tt_llama_loaded.decode},
      {"llama_free", &tt_llama_loaded.free},
      {"llama_get_embeddings_seq", &tt_llama_loaded.get_embeddings_seq},
      {"llama_get_logits_ith", &tt_llama_loaded.get_logits_ith},
      {"llama_get_memory", &tt_llama_loaded.get_memory},
      {"llama_init_from_model", &tt_llama_loaded.init_from_model},
      {"llama_log_set", &tt_llama_loaded.log_set},
      {"llama_memory_clear", &tt_llama_loaded.memory_clear},
      {"llama_memory_seq_rm", &tt_llama_loaded.memory_seq_rm},
      {"llama_model_chat_template", &tt_llama_loaded.model_chat_template},
      {"llama_model_default_params", &tt_llama_loaded.model_default_params},
      {"llama_model_free", &tt_llama_loaded.model_free},
      {"llama_model_get_vocab", &tt_llama_loaded.model_get_vocab},
      {"llama_model_load_from_file", &tt_llama_loaded.model_load_from_file},
      {"llama_model_meta_val_str", &tt_llama_loaded.model_meta_val_str},
      {"llama_model_n_ctx_train", &tt_llama_loaded.model_n_ctx_train},
      {"llama_model_n_embd", &tt_llama_loaded.model_n_embd},
      {"llama_model_n_head", &tt_llama_loaded.model_n_head},
      {"llama_model_n_head_kv", &tt_llama_loaded.model_n_head_kv},
      {"llama_model_n_layer", &tt_llama_loaded.model_n_layer},
      {"llama_model_size", &tt_llama_loaded.model_size},
      {"llama_n_ctx", &tt_llama_loaded.n_ctx},
      {"llama_sampler_accept", &tt_llama_loaded.sampler_accept},
      {"llama_sampler_apply", &tt_llama_loaded.sampler_apply},
      {"llama_sampler_chain_add", &tt_llama_loaded.sampler_chain_add},
      {"llama_sampler_chain_default_params", &tt_llama_loaded.sampler_chain_default_params},
      {"llama_sampler_chain_init", &tt_llama_loaded.sampler_chain_init},
      {"llama_sampler_clone", &tt_llama_loaded.sampler_clone},
      {"llama_sampler_free", &tt_llama_loaded.sampler_free},
      {"llama_sampler_init", &tt_llama_loaded.sampler_init},
      {"llama_sampler_init_dist", &tt_llama_loaded.sampler_init_dist},
      {"llama_sampler_init_grammar", &tt_llama_loaded.sampler_init_grammar},
      {"llama_sampler_init_temp", &tt_llama_loaded.sampler_init_temp},
      {"llama_sampler_reset", &tt_llama_loaded.sampler_reset},
      {"llama_state_seq_load_file", &tt_llama_loaded.state_seq_load_file},
      {"llama_state_seq_save_file", &tt_llama_loaded.state_seq_save_file},
      {"llama_token_to_piece", &tt_llama_loaded.token_to_piece},
      {"llama_tokenize", &tt_llama_loaded.tokenize},
      {"llama_vocab_eos", &tt_llama_loaded.vocab_eos},
      {"llama_vocab_eot", &tt_llama_loaded.vocab_eot},
      {"llama_vocab_is_eog", &tt_llama_loaded.vocab_is_eog},
      {"llama_vocab_n_tokens", &tt_llama_loaded.vocab_n_tokens},
  };
  char why[300];
  switch (tt_dl_load(files, NULL, syms, sizeof syms / sizeof syms[0], why, sizeof why)) {
  case TT_DL_NO_LIBRARY:
    tt_error_set(&tt_llama_error, TT_ERR_UNAVAILABLE,
                 "cannot load the embedded engine (%s): %s", TT_LLAMA_LIB_FILE, why);
    tt_error_hint(&tt_llama_error,
                  "it is built and installed with the program (cmake --install); or use a model "
                  "server with --base-url");
    return;
  case TT_DL_NO_SYMBOL:
    tt_error_set(&tt_llama_error, TT_ERR_UNAVAILABLE, "%s lacks %s", TT_LLAMA_LIB_FILE, why);
    tt_error_hint(&tt_llama_error, "reinstall tabletalk: the engine is not this build's");
    return;
  case TT_DL_OK: break;
  }
  char want[128], have[128] = "";
  TT_LLAMA_LIB_STAMP(want, sizeof want);
  stamp(have, sizeof have);
  if (strcmp(have, want) != 0) {
    tt_error_set(&tt_llama_error, TT_ERR_UNAVAILABLE,
                 "%s was built for another version (%s; this is %s)", TT_LLAMA_LIB_FILE, have,
                 want);
    tt_error_hint(&tt_llama_error, "reinstall tabletalk: the engine is not this build's");
    return;
  }
  tt_llama_fn = &tt_llama_loaded;
}

const tt_llama_api *tt_llama_api_get(tt_error *err) {
  pthread_once(&tt_llama_once, tt_llama_load);
  if (!tt_llama_fn && err) *err = tt_llama_error;
  return tt_llama_fn;
}
