/* embed.c — the embedding score of the table ranking, for one agent: on
 * the first question ranked, the tables' description vectors are read from
 * the cache (vectors.c) and the tables without one (new, or their text
 * changed) are embedded in one bounded call and saved; each question's
 * text is embedded once (the ranking runs several times per question: its
 * cards, its picks, its cost). What is sent is the question and the
 * tables' names and descriptions, never a value of the data (so also in
 * private mode). Anything that fails — a model that cannot embed, an
 * endpoint without /v1/embeddings, a timeout — turns the score off for the
 * agent with a note (a warning event), never a failure of the question. */
#include "agent/agent_internal.h"

#include <stdlib.h>
#include <string.h>

struct tt_agent_embed {
  bool started, off;
  char *note;         /* why it is off, until taken */
  char *why_off;      /* the same, kept for the stats */
  tt_schema_vectors *vectors;
  char *question;     /* the last question embedded, and its vector */
  float *qvec;
  size_t dim;
  tt_embed_stats st;
};

static tt_llm *tt_embed_llm(const tt_agent *a) { return a->o.embed_llm ? a->o.embed_llm : a->llm; }

struct tt_agent_embed *tt_agent_embed_new(void) { return tt_xcalloc(1, sizeof(struct tt_agent_embed)); }

void tt_agent_embed_free(struct tt_agent_embed *e) {
  if (!e) return;
  free(e->note);
  free(e->why_off);
  tt_schema_vectors_free(e->vectors);
  free(e->question);
  free(e->qvec);
  free(e);
}

static bool tt_embed_wanted(const tt_agent *a) {
  if (a->o.embeddings == TT_EMBED_OFF) return false;
  if (a->o.embeddings == TT_EMBED_ON) return true;
  /* auto: an embedding model was named for an endpoint (the in-process
   * model's pooled states only with on) */
  return a->o.embed_llm || (a->o.embed_model_named && a->llm && !tt_llm_is_llama(a->llm));
}

static void tt_embed_off(struct tt_agent_embed *e, const char *why) {
  e->off = true;
  free(e->note);
  free(e->why_off);
  e->note = tt_xasprintf("the embedding score is off: %s; the tables are ranked by their words", why);
  e->why_off = tt_xstrdup(e->note);
}

static bool tt_embed_call(struct tt_agent_embed *e, tt_llm *llm, const char *const *texts, size_t n,
                          tt_embeddings *out) {
  tt_error err;
  bool ok = tt_llm_embed(llm, texts, n, NULL, out, &err);
  e->st.requests += out->requests;
  e->st.tokens += out->tokens;
  e->st.ms += out->ms;
  if (ok) {
    e->st.embedded += n;
    if (!e->st.dim) e->st.dim = out->dim;
    return true;
  }
  tt_embed_off(e, err.message);
  tt_embeddings_free(out);
  return false;
}

/* The tables' vectors: from the cache, the missing ones embedded and saved. */
static void tt_embed_start(const tt_agent *a, struct tt_agent_embed *e) {
  e->started = true;
  tt_llm *llm = tt_embed_llm(a);
  char *model = tt_llm_embed_identity(llm);
  if (!model) {
    tt_embed_off(e, llm ? "the model cannot embed text" : "there is no model to embed with");
    return;
  }
  e->vectors = tt_schema_vectors_open(a->schema, model);
  free(model);
  size_t n = tt_schema_count(a->schema);
  size_t *miss = tt_xcalloc(n ? n : 1, sizeof *miss);
  size_t k = tt_schema_vectors_missing(e->vectors, miss);
  e->st.cached = tt_schema_vectors_cached(e->vectors);
  if (k > TT_EMBED_TEXTS) {
    char *why = tt_xasprintf("%zu tables to embed, more than %d", k, TT_EMBED_TEXTS);
    tt_embed_off(e, why);
    free(why);
  } else if (k) {
    char **texts = tt_xcalloc(k, sizeof *texts);
    tt_buf b = TT_BUF_INIT;
    for (size_t i = 0; i < k; i++) {
      tt_buf_reset(&b);
      tt_schema_embed_text(a->schema, miss[i], &b);
      texts[i] = tt_xstrdup(tt_buf_cstr(&b));
    }
    tt_buf_free(&b);
    tt_embeddings out;
    bool ok = tt_embed_call(e, llm, (const char *const *)texts, k, &out);
    e->st.desc_texts = ok ? k : 0;
    e->st.desc_requests = e->st.requests;
    e->st.desc_tokens = e->st.tokens;
    e->st.desc_ms = e->st.ms;
    if (ok) {
      for (size_t i = 0; i < k; i++)
        if (!tt_schema_vectors_set(e->vectors, miss[i], out.v + i * out.dim, out.dim)) {
          tt_embed_off(e, "the model's vectors changed size (the cache is of another model)");
          break;
        }
      if (!e->off) tt_schema_vectors_save(e->vectors);
      tt_embeddings_free(&out);
    }
    for (size_t i = 0; i < k; i++) free(texts[i]);
    free(texts);
  }
  free(miss);
  if (!e->off) e->st.tables = n;
}

void tt_agent_embed_rank_opts(const tt_agent *a, const char *question, tt_schema_rank_opts *ro) {
  struct tt_agent_embed *e = a->embed;
  if (!e || !tt_embed_wanted(a) || !question || !*question) return;
  if (!e->started) tt_embed_start(a, e);
  if (e->off) return;
  if (!e->question || strcmp(e->question, question) != 0) {
    free(e->question);
    free(e->qvec);
    e->question = NULL;
    e->qvec = NULL;
    tt_embeddings out;
    const char *texts[1] = {question};
    if (!tt_embed_call(e, tt_embed_llm(a), texts, 1, &out)) return;
    if (out.dim != tt_schema_vectors_dim(e->vectors) && tt_schema_vectors_dim(e->vectors)) {
      tt_embed_off(e, "the question's vector is not the size of the tables' vectors");
      tt_embeddings_free(&out);
      return;
    }
    e->question = tt_xstrdup(question);
    e->qvec = out.v; /* taken */
    e->dim = out.dim;
  }
  e->st.used = true;
  ro->vectors = e->vectors;
  ro->question_vec = e->qvec;
  ro->dim = e->dim;
}

char *tt_agent_embed_take_note(const tt_agent *a) {
  struct tt_agent_embed *e = a->embed;
  if (!e || !e->note) return NULL;
  char *n = e->note;
  e->note = NULL;
  return n;
}

void tt_agent_embed_stats(const tt_agent *a, tt_embed_stats *out) {
  memset(out, 0, sizeof *out);
  if (!a->embed) return;
  *out = a->embed->st;
  out->on = tt_embed_wanted(a);
  out->note = a->embed->why_off;
}
