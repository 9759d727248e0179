/* embed.c — the backend-independent part of embeddings: dispatch through
 * the backend table, the bounds every call keeps (how many texts, how long
 * each, how large a vector), and vectors scaled to length 1 so that a dot
 * product is their cosine. */
#include "llm/llm_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void tt_embeddings_free(tt_embeddings *e) {
  if (!e) return;
  free(e->v);
  memset(e, 0, sizeof *e);
}

void tt_embeddings_normalise(tt_embeddings *e) {
  for (size_t i = 0; i < e->n; i++) {
    float *row = e->v + i * e->dim;
    double sum = 0;
    for (size_t k = 0; k < e->dim; k++) sum += (double)row[k] * (double)row[k];
    if (sum <= 0 || !isfinite(sum)) continue;
    double inv = 1.0 / sqrt(sum);
    for (size_t k = 0; k < e->dim; k++) row[k] = (float)((double)row[k] * inv);
  }
}

size_t tt_embed_text_len(const char *text) {
  size_t n = strlen(text);
  if (n <= TT_EMBED_TEXT_MAX) return n;
  n = TT_EMBED_TEXT_MAX;
  /* back to the start of a character */
  while (n > 0 && ((unsigned char)text[n] & 0xC0) == 0x80) n--;
  return n;
}

bool tt_llm_can_embed(const tt_llm *llm) {
  if (!llm || !llm->vt->embed || !llm->vt->embed_identity) return false;
  char *id = llm->vt->embed_identity(llm->impl);
  bool ok = id != NULL;
  free(id);
  return ok;
}

char *tt_llm_embed_identity(const tt_llm *llm) {
  return llm && llm->vt->embed_identity ? llm->vt->embed_identity(llm->impl) : NULL;
}

bool tt_llm_embed(tt_llm *llm, const char *const *texts, size_t n, volatile sig_atomic_t *cancel,
                  tt_embeddings *out, tt_error *err) {
  memset(out, 0, sizeof *out);
  tt_error_clear(err);
  if (!llm || !llm->vt->embed) {
    tt_llm_set_error(err, TT_ERR_UNAVAILABLE, 0, "the %s backend cannot embed text",
                     llm ? llm->vt->name : "(no)");
    return false;
  }
  if (n == 0 || n > TT_EMBED_TEXTS) {
    tt_llm_set_error(err, TT_ERR_LIMIT, 0, "%zu texts to embed; one call takes 1 to %d", n,
                     TT_EMBED_TEXTS);
    return false;
  }
  double t0 = tt_now_ms();
  if (!llm->vt->embed(llm->impl, texts, n, cancel, out, err)) {
    tt_embeddings_free(out);
    return false;
  }
  if (out->n != n || out->dim == 0 || out->dim > TT_EMBED_DIM_MAX || !out->v) {
    tt_llm_set_error(err, TT_ERR_PROTOCOL, 0, "the %s backend returned %zu vectors of %zu numbers "
                     "for %zu texts", llm->vt->name, out->n, out->dim, n);
    tt_embeddings_free(out);
    return false;
  }
  tt_embeddings_normalise(out);
  out->ms = tt_now_ms() - t0;
  return true;
}
