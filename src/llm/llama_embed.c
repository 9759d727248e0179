/* llama_embed.c — the embedded engine's embeddings: a second llama.cpp
 * context over the loaded weights, with embeddings on and mean pooling
 * (the average of the last hidden states of a text's tokens), made on the
 * first request and kept beside the chat context. Each text is decoded
 * alone from an empty cache, so a text's vector depends on that text and
 * the model only (deterministic for a given machine and thread count).
 * Whether a chat model's pooled states are a good embedding is for the
 * user to judge (docs/contributing/evaluations.md measures it); they are
 * only ever one bounded signal of the schema ranking. */
#include "llm/llm_internal.h"

#include <stdlib.h>
#include <string.h>

#include "llm/llama_api.h"

static struct llama_context *tt_embed_ctx_new(struct llama_model *model, int threads,
                                              bool (*abort)(void *ud), void *abort_ud) {
  struct llama_context_params cp = llama_context_default_params();
  cp.n_ctx = TT_EMBED_CTX;
  cp.n_batch = TT_EMBED_CTX;
  cp.n_ubatch = TT_EMBED_CTX; /* a text in one micro-batch: pooling sees all of it */
  cp.n_seq_max = 1;
  cp.n_threads = threads;
  cp.n_threads_batch = threads;
  cp.embeddings = true;
  cp.pooling_type = LLAMA_POOLING_TYPE_MEAN;
  cp.no_perf = true;
  cp.abort_callback = abort;
  cp.abort_callback_data = abort_ud;
  return llama_init_from_model(model, cp);
}

bool tt_llama_embed_run(struct llama_model *model, struct llama_context **ectx, int threads,
                        bool (*abort)(void *ud), void *abort_ud, const char *const *texts,
                        size_t n, tt_embeddings *out, tt_error *err) {
  if (!*ectx) *ectx = tt_embed_ctx_new(model, threads, abort, abort_ud);
  if (!*ectx) {
    tt_llm_set_error(err, TT_ERR_UNAVAILABLE, 0,
                     "cannot make an embedding context for the model (too little memory?)");
    return false;
  }
  const struct llama_vocab *vocab = llama_model_get_vocab(model);
  size_t dim = (size_t)llama_model_n_embd(model);
  if (dim == 0 || dim > TT_EMBED_DIM_MAX) {
    tt_llm_set_error(err, TT_ERR_UNAVAILABLE, 0, "the model's vectors have %zu numbers", dim);
    return false;
  }
  out->n = n;
  out->dim = dim;
  out->v = tt_xcalloc(n * dim, sizeof *out->v);
  llama_token *toks = tt_xmalloc((TT_EMBED_TEXT_MAX + 16) * sizeof *toks);
  bool ok = true;
  for (size_t i = 0; i < n && ok; i++) {
    size_t len = tt_embed_text_len(texts[i]);
    int32_t k = llama_tokenize(vocab, texts[i], (int32_t)len, toks, TT_EMBED_TEXT_MAX + 16, true, false);
    if (k < 0) k = TT_EMBED_TEXT_MAX + 16; /* cannot happen: a byte makes at most a token */
    if (k > TT_EMBED_CTX) k = TT_EMBED_CTX;
    if (k == 0) continue; /* an empty text: a zero vector */
    llama_memory_clear(llama_get_memory(*ectx), true);
    int rc = llama_decode(*ectx, llama_batch_get_one(toks, k));
    const float *v = rc == 0 ? llama_get_embeddings_seq(*ectx, 0) : NULL;
    if (rc == 2 || (abort && abort(abort_ud))) {
      tt_llm_set_error(err, TT_ERR_CANCELLED, 0, "cancelled");
      ok = false;
    } else if (!v) {
      tt_llm_set_error(err, TT_ERR_UNAVAILABLE, 0, "the model gave no embedding (llama_decode: %d)", rc);
      ok = false;
    } else {
      memcpy(out->v + i * dim, v, dim * sizeof *v);
      out->tokens += k;
      out->requests++;
    }
  }
  free(toks);
  return ok;
}
