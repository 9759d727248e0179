/* llama.c — the embedded backend: a GGUF model run in-process by the pinned
 * llama.cpp. It renders the conversation in the model family's own format
 * (profile.c: detected from the GGUF or chosen with --profile), constrains
 * every reply with a grammar to an optional thought and exactly one valid
 * tool call in that family's shape, reuses the
 * KV cache for every token it has already computed (within a question,
 * across questions, and across processes through a saved prefix state),
 * streams the answer text, and stops promptly when cancelled. */
#define _GNU_SOURCE /* memmem */
#include "llm/llm_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "llm/llama_api.h"

#define TT_LLAMA_BATCH 512

/* A point where tokenization restarted: text[0..text_end) is exactly the
 * detokenized tokens[0..ntok). The KV cache can be kept up to any such
 * point whose text the next prompt starts with. */
typedef struct tt_ckpt {
  size_t text_end;
  size_t ntok;
} tt_ckpt;

typedef struct tt_llama {
  tt_llm_llama_opts o;
  char *path, *name, *cache_dir;
  char *names;              /* general.name and the file's name (tt_llm_sql_style) */
  struct llama_model *model;
  struct llama_context *ctx;
  struct llama_context *ectx; /* embeddings (llama_embed.c), made on first use */
  const struct llama_vocab *vocab;
  const tt_profile *profile; /* how the model is prompted (detected or chosen) */
  tt_grammars *grammars;    /* parsed once per grammar text */
  char *tmpl;               /* the GGUF's chat template (generic family) */
  /* what the KV cache (sequence 0) holds */
  llama_token *toks;
  size_t ntoks, captoks;
  tt_buf text;
  tt_ckpt *ckpts;
  size_t nckpts, capckpts;
  volatile sig_atomic_t *cancel; /* of the call in progress */
  char model_id[128];       /* size and mtime of the file, for the prefix cache */
  char *ctx_note;           /* how the context was chosen */
} tt_llama;

/* ---- logging and set-up ---------------------------------------------------- */

static void tt_llama_log(enum ggml_log_level level, const char *text, void *ud) {
  (void)ud;
  if (level == GGML_LOG_LEVEL_ERROR && getenv("TABLETALK_LLAMA_LOG")) fputs(text, stderr);
  else if (getenv("TABLETALK_LLAMA_LOG") && *getenv("TABLETALK_LLAMA_LOG") == '2') fputs(text, stderr);
}

static bool tt_llama_progress(float p, void *ud) {
  const tt_llama *L = ud;
  if (L->o.show_progress) {
    fprintf(stderr, "\rloading %s… %3d%%", L->name, (int)(p * 100));
    if (p >= 1.0f) fputs("\r\033[K", stderr);
    fflush(stderr);
  }
  return true;
}

static bool tt_llama_abort(void *ud) {
  const tt_llama *L = ud;
  return L->cancel && *L->cancel;
}

tt_llm_llama_opts tt_llm_llama_default_opts(void) {
  long cores = sysconf(_SC_NPROCESSORS_ONLN);
  return (tt_llm_llama_opts){
      .n_ctx = 0, /* chosen from the model and the memory */
      .n_threads = cores > 0 ? (int)cores : 2,
      .temperature = 0.0,
      .seed = 42,
      .max_tokens = 2048,
      .reuse = true,
  };
}

/* ---- the tokens of the KV cache ------------------------------------------- */

static void tt_kv_push_tokens(tt_llama *L, const llama_token *t, size_t n) {
  if (L->ntoks + n > L->captoks) {
    while (L->ntoks + n > L->captoks) L->captoks = L->captoks ? L->captoks * 2 : 4096;
    L->toks = tt_xrealloc(L->toks, L->captoks * sizeof(llama_token));
  }
  memcpy(L->toks + L->ntoks, t, n * sizeof(llama_token));
  L->ntoks += n;
}

static void tt_kv_checkpoint(tt_llama *L) {
  if (L->nckpts && L->ckpts[L->nckpts - 1].ntok == L->ntoks) return;
  if (L->nckpts == L->capckpts) {
    L->capckpts = L->capckpts ? L->capckpts * 2 : 64;
    L->ckpts = tt_xrealloc(L->ckpts, L->capckpts * sizeof(tt_ckpt));
  }
  L->ckpts[L->nckpts++] = (tt_ckpt){L->text.len, L->ntoks};
}

static void tt_kv_reset(tt_llama *L) {
  llama_memory_clear(llama_get_memory(L->ctx), true);
  L->ntoks = 0;
  L->nckpts = 0;
  tt_buf_reset(&L->text);
}

/* Keeps the cache up to the last checkpoint that prompt starts with;
 * returns how much of prompt's text is covered. */
static size_t tt_kv_keep_prefix(tt_llama *L, const char *prompt, size_t len) {
  size_t k = L->nckpts;
  while (k > 0) {
    const tt_ckpt *c = &L->ckpts[k - 1];
    if (c->text_end <= len && memcmp(L->text.data, prompt, c->text_end) == 0) break;
    k--;
  }
  if (k == 0) {
    tt_kv_reset(L);
    return 0;
  }
  const tt_ckpt c = L->ckpts[k - 1];
  if (c.ntok < L->ntoks) llama_memory_seq_rm(llama_get_memory(L->ctx), 0, (llama_pos)c.ntok, -1);
  L->ntoks = c.ntok;
  L->nckpts = k;
  L->text.len = c.text_end;
  L->text.data[c.text_end] = '\0';
  return c.text_end;
}

static llama_token *tt_tokenize(const tt_llama *L, const char *text, size_t len, int32_t *n) {
  int32_t cap = (int32_t)len + 16;
  llama_token *t = tt_xmalloc((size_t)cap * sizeof(llama_token));
  *n = llama_tokenize(L->vocab, text, (int32_t)len, t, cap, false, true);
  if (*n < 0) {
    cap = -*n;
    t = tt_xrealloc(t, (size_t)cap * sizeof(llama_token));
    *n = llama_tokenize(L->vocab, text, (int32_t)len, t, cap, false, true);
  }
  return t;
}

/* Decodes tokens into the cache in batches. 0 on success, 2 when aborted,
 * anything else on failure. */
static int tt_decode(tt_llama *L, llama_token *t, size_t n) {
  for (size_t i = 0; i < n; i += TT_LLAMA_BATCH) {
    size_t k = n - i < TT_LLAMA_BATCH ? n - i : TT_LLAMA_BATCH;
    int rc = llama_decode(L->ctx, llama_batch_get_one(t + i, (int32_t)k));
    if (rc != 0) return rc;
  }
  return 0;
}

/* ---- the prefix state on disk --------------------------------------------- */

static char *tt_prefix_file(const tt_llama *L, const char *text, size_t len) {
  if (!L->cache_dir) return NULL;
  uint64_t h = TT_FNV1A64_INIT;
  h = tt_fnv1a64(h, L->model_id, strlen(L->model_id));
  h = tt_fnv1a64(h, &L->o.n_ctx, sizeof L->o.n_ctx);
  h = tt_fnv1a64(h, text, len);
  return tt_xasprintf("%s/prefix-%016llx.state", L->cache_dir, (unsigned long long)h);
}

/* Restores the state of the first segment (system prompt and tools) saved
 * by an earlier process, when the tokens match. */
static bool tt_prefix_restore(tt_llama *L, const char *text, size_t len, const llama_token *want,
                              size_t nwant) {
  char *path = tt_prefix_file(L, text, len);
  if (!path || access(path, R_OK) != 0) {
    free(path);
    return false;
  }
  llama_token *got = tt_xmalloc((nwant + 1) * sizeof(llama_token));
  size_t n = 0;
  size_t read = llama_state_seq_load_file(L->ctx, path, 0, got, nwant + 1, &n);
  bool ok = read > 0 && n == nwant && memcmp(got, want, nwant * sizeof(llama_token)) == 0;
  if (ok) {
    tt_kv_push_tokens(L, got, n);
    tt_buf_append(&L->text, text, len);
    tt_kv_checkpoint(L);
  } else {
    llama_memory_clear(llama_get_memory(L->ctx), true);
  }
  free(got);
  free(path);
  return ok;
}

/* Saves the first segment's state for later processes (a cold engine
 * replaces what is there; others keep the first one saved). */
static void tt_prefix_save(tt_llama *L, const char *text, size_t len) {
  char *path = tt_prefix_file(L, text, len);
  if (!path || (!L->o.cold && access(path, R_OK) == 0) || !tt_mkdir_p(L->cache_dir, 0700)) {
    free(path);
    return;
  }
  char *tmp = tt_xasprintf("%s.%d.tmp", path, (int)getpid());
  if (llama_state_seq_save_file(L->ctx, tmp, 0, L->toks, L->ntoks) > 0) rename(tmp, path);
  else unlink(tmp);
  free(tmp);
  free(path);
}

/* ---- rendering the conversation ------------------------------------------- */

/* The whole prompt in the profile's format, with the offset where each
 * message ends (the last boundary is the generation prompt). */
static bool tt_llama_render(const tt_llama *L, const tt_chat *chat, const tt_llm_call *call,
                            tt_buf *out, size_t *ends) {
  return tt_profile_render(L->profile, L->tmpl, chat, call->tools, call->ntools, out, ends);
}

/* ---- one call ----------------------------------------------------------------- */

/* The caller's stable prefix (call->stable_prefix bytes of the first
 * message) as an offset into the prompt, when it ends inside that
 * message; else 0. Tokenizing up to there and on from there gives the
 * tokens of the whole for the SQL writers' Qwen2 tokenizer, whose
 * pre-tokenizer splits after a run of newlines, which is where their
 * schema ends. */
static size_t tt_stable_end(const tt_chat *chat, const tt_llm_call *call, const tt_buf *prompt,
                            const size_t *ends) {
  if (!call->stable_prefix || !chat->n || !chat->msgs[0].content) return 0;
  const char *content = chat->msgs[0].content;
  if (strlen(content) <= call->stable_prefix) return 0;
  const char *at = memmem(prompt->data, ends[0], content, call->stable_prefix);
  if (!at) return 0;
  size_t end = (size_t)(at - prompt->data) + call->stable_prefix;
  return end < ends[0] ? end : 0;
}

/* Brings the cache up to the whole prompt, computing only what it lacks. */
static bool tt_prefill(tt_llama *L, const tt_chat *chat, const tt_llm_call *call,
                       tt_llm_reply *out, tt_error *err) {
  tt_buf prompt = TT_BUF_INIT;
  /* the segments: the stable prefix when there is one, then each message,
   * then the generation prompt */
  size_t *ends = tt_xcalloc(chat->n + 2, sizeof(size_t));
  bool ok = tt_llama_render(L, chat, call, &prompt, ends + 1);
  if (!ok) {
    tt_llm_set_error(err, TT_ERR_CONFIG, 0, "the model's chat template cannot be applied");
    free(ends);
    tt_buf_free(&prompt);
    return false;
  }
  size_t nseg = chat->n + 1;
  size_t stable = tt_stable_end(chat, call, &prompt, ends + 1);
  if (stable) {
    ends[0] = stable;
    nseg++;
  } else {
    memmove(ends, ends + 1, nseg * sizeof(size_t));
  }
  /* the first segment is kept on disk when it is the same for every
   * question: a system message, or the stable prefix (not a question) */
  bool keep = stable || (chat->n && chat->msgs[0].role == TT_ROLE_SYSTEM);
  if (!L->o.reuse) tt_kv_reset(L);
  size_t done = tt_kv_keep_prefix(L, prompt.data, prompt.len);
  size_t reused = L->ntoks;
  double t0 = tt_now_ms();
  int rc = 0;
  for (size_t seg = 0; seg < nseg && rc == 0; seg++) {
    if (ends[seg] <= done) continue;
    int32_t n;
    llama_token *t = tt_tokenize(L, prompt.data + done, ends[seg] - done, &n);
    double r0 = tt_now_ms();
    bool restored = seg == 0 && keep && done == 0 && L->ntoks == 0 && L->o.reuse && !L->o.cold &&
                    tt_prefix_restore(L, prompt.data, ends[0], t, (size_t)n);
    if (restored) out->restore_ms = tt_now_ms() - r0;
    if (restored) {
      reused = L->ntoks;
    } else {
      rc = tt_decode(L, t, (size_t)n);
      if (rc == 0) {
        tt_kv_push_tokens(L, t, (size_t)n);
        tt_buf_append(&L->text, prompt.data + done, ends[seg] - done);
        tt_kv_checkpoint(L);
        if (seg == 0 && keep && reused == 0 && L->o.reuse) tt_prefix_save(L, prompt.data, ends[0]);
      }
    }
    free(t);
    done = ends[seg];
  }
  out->prefill_ms = tt_now_ms() - t0;
  out->usage.prompt = (long)L->ntoks;
  out->usage.cached = (long)reused;
  free(ends);
  tt_buf_free(&prompt);
  if (rc != 0) {
    tt_kv_reset(L); /* a partial batch may be in the cache: start clean next time */
    if (rc == 2) tt_llm_set_error(err, TT_ERR_CANCELLED, 0, "cancelled");
    else if (rc == 1)
      tt_llm_set_error(err, TT_ERR_PROTOCOL, 0,
                       "the conversation no longer fits the model's context of %d tokens; start a "
                       "new thread or raise --ctx", L->o.n_ctx);
    else tt_llm_set_error(err, TT_ERR_PROTOCOL, 0, "llama.cpp failed to process the prompt (%d)", rc);
    return false;
  }
  return true;
}

static llama_token tt_argmax(const float *logits, int n) {
  int best = 0;
  for (int i = 1; i < n; i++)
    if (logits[i] > logits[best]) best = i;
  return best;
}

/* Picks the next token: first without the grammar (cheap), then checks that
 * one token against the grammar, and only when it is rejected runs the
 * grammar over the whole vocabulary. */
static llama_token tt_sample(tt_llama *L, struct llama_sampler *grammar, struct llama_sampler *chain,
                             llama_token_data *cands, long *full_checks, llama_token bias_to) {
  float *logits = llama_get_logits_ith(L->ctx, -1);
  int nv = llama_vocab_n_tokens(L->vocab);
  if (bias_to >= 0 && bias_to < nv) logits[bias_to] += 1e4f; /* replay: as a trained model would */
  llama_token tok;
  if (!chain) {
    tok = tt_argmax(logits, nv);
  } else {
    for (int i = 0; i < nv; i++) cands[i] = (llama_token_data){i, logits[i], 0.0f};
    llama_token_data_array arr = {.data = cands, .size = (size_t)nv, .selected = -1};
    llama_sampler_apply(chain, &arr);
    tok = cands[arr.selected].id;
  }
  if (grammar) {
    llama_token_data one = {tok, logits[tok], 0.0f};
    llama_token_data_array single = {.data = &one, .size = 1, .selected = -1};
    llama_sampler_apply(grammar, &single);
    if (isinf(one.logit) && one.logit < 0) { /* rejected: constrain the whole vocabulary */
      (*full_checks)++;
      for (int i = 0; i < nv; i++) cands[i] = (llama_token_data){i, logits[i], 0.0f};
      llama_token_data_array arr = {.data = cands, .size = (size_t)nv, .selected = -1};
      llama_sampler_apply(grammar, &arr);
      if (chain) {
        llama_sampler_apply(chain, &arr);
        tok = cands[arr.selected].id;
      } else {
        size_t best = 0;
        for (size_t i = 1; i < arr.size; i++)
          if (cands[i].logit > cands[best].logit) best = i;
        tok = cands[best].id;
      }
    }
    llama_sampler_accept(grammar, tok);
  }
  if (chain) llama_sampler_accept(chain, tok);
  return tok;
}

/* Streams the answer's text while it is being written: nothing of a
 * thought, only the string argument once the call to stream_tool has
 * begun. */
typedef struct tt_streamer {
  const tt_llm_call *call;
  tt_call_shape shape;
  size_t fed;           /* bytes of the output already examined */
  bool active, decided;
  tt_argstream *as;
} tt_streamer;

/* Where the arguments of a call to name start in text (the call's open
 * text, the name, an id, up to the object), 0 while the text does not show
 * yet whether it is that call, (size_t)-1 when it is another. */
static size_t tt_stream_args_at(const tt_call_shape *sh, const char *name, const char *text,
                                size_t len) {
  const char *open = strstr(text, sh->open); /* text ends with a NUL */
  if (!open) return 0;
  size_t at = (size_t)(open - text) + strlen(sh->open);
  const char *parts[] = {name, sh->mid};
  for (size_t i = 0; i < 2; i++) {
    size_t n = strlen(parts[i]), have = len - at < n ? len - at : n;
    if (memcmp(text + at, parts[i], have) != 0) return (size_t)-1;
    if (have < n) return 0;
    at += n;
  }
  if (sh->id_chars) {
    at += (size_t)sh->id_chars;
    size_t n = strlen(sh->mid_after_id);
    if (len < at + n) return 0;
    at += n;
  }
  return at;
}

static void tt_stream_update(tt_streamer *s, const tt_buf *text) {
  const tt_llm_call *c = s->call;
  if (!c->on_text || !c->stream_tool) return;
  if (!s->decided) {
    size_t at = tt_stream_args_at(&s->shape, c->stream_tool, text->data, text->len);
    if (at == 0) return;
    s->decided = true;
    s->active = at != (size_t)-1;
    s->fed = at;
    if (s->active) s->as = tt_argstream_new(c->stream_arg);
  }
  if (!s->active || text->len <= s->fed) return;
  tt_buf piece = TT_BUF_INIT;
  tt_argstream_feed(s->as, text->data + s->fed, text->len - s->fed, &piece);
  s->fed = text->len;
  if (piece.len) c->on_text(c->ud, piece.data, piece.len);
  tt_buf_free(&piece);
}

/* Generates under the grammar until the end of the turn; *cut is set when
 * a text reply (no grammar) reached max_tokens and the caller takes it so. */
static bool tt_generate(tt_llama *L, const char *gbnf, const tt_llm_call *call,
                        const llama_token *forced, size_t nforced, tt_buf *text,
                        tt_llm_reply *out, tt_error *err, bool *cut) {
  struct llama_sampler *grammar = gbnf ? tt_grammars_sampler(L->grammars, gbnf) : NULL;
  if (gbnf && !grammar) {
    tt_llm_set_error(err, TT_ERR_CONFIG, 0, "internal error: the tool grammar does not parse");
    return false;
  }
  struct llama_sampler *chain = NULL;
  if (L->o.temperature > 0) {
    chain = llama_sampler_chain_init(llama_sampler_chain_default_params());
    llama_sampler_chain_add(chain, llama_sampler_init_temp((float)L->o.temperature));
    llama_sampler_chain_add(chain, llama_sampler_init_dist((uint32_t)L->o.seed));
  }
  int nv = llama_vocab_n_tokens(L->vocab);
  llama_token_data *cands = tt_xmalloc((size_t)nv * sizeof(llama_token_data));
  tt_streamer st = {.call = call};
  tt_profile_call_shape(L->profile, true, L->o.max_tokens, &st.shape);
  long full_checks = 0, n = 0;
  bool ok = false, ended = false;
  double t0 = tt_now_ms();
  char piece[256];
  while (n < L->o.max_tokens) {
    if (call->cancel && *call->cancel) {
      tt_llm_set_error(err, TT_ERR_CANCELLED, 0, "cancelled");
      break;
    }
    llama_token bias_to = -1;
    if (forced) bias_to = (size_t)n < nforced ? forced[n] : llama_vocab_eot(L->vocab) >= 0
                                                              ? llama_vocab_eot(L->vocab)
                                                              : llama_vocab_eos(L->vocab);
    llama_token tok = tt_sample(L, grammar, chain, cands, &full_checks, bias_to);
    if (llama_vocab_is_eog(L->vocab, tok)) {
      ended = true;
      break;
    }
    int32_t len = llama_token_to_piece(L->vocab, tok, piece, sizeof piece, 0, false);
    if (len > 0) tt_buf_append(text, piece, (size_t)len);
    n++;
    tt_stream_update(&st, text);
    int rc = llama_decode(L->ctx, llama_batch_get_one(&tok, 1));
    if (rc != 0) {
      tt_kv_reset(L);
      if (rc == 2) tt_llm_set_error(err, TT_ERR_CANCELLED, 0, "cancelled");
      else tt_llm_set_error(err, TT_ERR_PROTOCOL, 0, "the model's reply did not fit in what was "
                            "left of its context of %d tokens; raise --ctx or lower --max-tokens",
                            L->o.n_ctx);
      goto done;
    }
    tt_kv_push_tokens(L, &tok, 1);
    if (len > 0) tt_buf_append(&L->text, piece, (size_t)len);
  }
  tt_kv_checkpoint(L);
  if (ended) ok = true;
  else if (n >= L->o.max_tokens && call->allow_cut && !grammar) ok = *cut = true;
  else if (!err || err->kind == TT_OK)
    tt_llm_set_error(err, TT_ERR_PROTOCOL, 0,
                     "the model did not finish its reply within %ld tokens (--max-tokens)",
                     L->o.max_tokens);
done:
  out->decode_ms = tt_now_ms() - t0;
  out->usage.completion = n;
  out->grammar_full_checks = full_checks;
  free(cands);
  tt_argstream_free(st.as);
  if (grammar) llama_sampler_free(grammar);
  if (chain) llama_sampler_free(chain);
  return ok;
}

static bool tt_llama_chat(void *impl, const tt_chat *chat, const tt_llm_call *call,
                          tt_llm_reply *out, tt_error *err) {
  tt_llama *L = impl;
  double t0 = tt_now_ms();
  L->cancel = call->cancel;
  out->attempts = 1;
  char *gbnf = NULL;
  llama_token *forced = NULL;
  int32_t nforced = 0;
  if (call->force_call_name) {
    tt_buf want = TT_BUF_INIT;
    tt_profile_render_call(L->profile, &want, call->force_call_name, call->force_call_args);
    if (!call->no_grammar) gbnf = tt_grammar_for_text(tt_buf_cstr(&want));
    if (call->force_by_bias) forced = tt_tokenize(L, want.data, want.len, &nforced);
    tt_buf_free(&want);
  } else if (!call->no_grammar) {
    tt_call_shape shape;
    tt_profile_call_shape(L->profile, true, L->o.max_tokens, &shape);
    gbnf = tt_grammar_for_tools(call->tools, call->ntools, call->force_tool, &shape, L->o.max_tokens);
  }
  bool ok = tt_prefill(L, chat, call, out, err);
  tt_buf text = TT_BUF_INIT;
  bool cut = false;
  if (ok)
    ok = tt_generate(L, gbnf, call, forced, (size_t)(nforced > 0 ? nforced : 0), &text, out, err,
                     &cut);
  free(forced);
  if (ok && call->ntools && tt_utf8_valid(text.data, text.len, NULL) &&
      tt_profile_parse(L->profile, tt_buf_cstr(&text), out)) {
    out->is_tool = true;
    if (!out->call_id) out->call_id = tt_xasprintf("call_%ld", (long)L->ntoks);
    out->finish_reason = tt_xstrdup("tool_calls");
  } else if (ok && call->ntools && !call->force_call_name && !call->no_grammar) {
    tt_llm_set_error(err, TT_ERR_PROTOCOL, 0, "internal error: a grammar-constrained reply "
                                                 "did not parse");
    ok = false;
  } else if (ok) {
    out->text = tt_buf_detach(&text);
    if (!out->text) out->text = tt_xstrdup("");
    out->finish_reason = tt_xstrdup(cut ? "length" : "stop");
  }
  tt_buf_free(&text);
  free(gbnf);
  L->cancel = NULL;
  out->latency_ms = tt_now_ms() - t0;
  return ok;
}

static const char *tt_llama_model_name(const void *impl) { return ((const tt_llama *)impl)->name; }

static const char *tt_llama_names(const void *impl) { return ((const tt_llama *)impl)->names; }

/* ---- how much fits ------------------------------------------------------------ */

static long tt_llama_context(const void *impl) {
  const tt_llama *L = impl;
  return L->ctx ? (long)llama_n_ctx(L->ctx) : L->o.n_ctx;
}

static long tt_llama_max_tokens(const void *impl) { return ((const tt_llama *)impl)->o.max_tokens; }

static long tt_llama_count_text(void *impl, const char *text, size_t len) {
  int32_t n = 0;
  free(tt_tokenize(impl, text, len, &n));
  return n > 0 ? n : 0;
}

/* The tokens the cache would hold once tt_prefill has brought it up to
 * chat and call, without touching it: those it keeps up to the last
 * checkpoint the prompt starts with, then each remaining segment tokenized
 * as tt_prefill tokenizes it. -1 when the prompt cannot be rendered. */
static long tt_llama_count_prompt(void *impl, const tt_chat *chat, const tt_llm_call *call) {
  tt_llama *L = impl;
  tt_buf prompt = TT_BUF_INIT;
  size_t *ends = tt_xcalloc(chat->n + 1, sizeof(size_t));
  long n = -1;
  if (tt_llama_render(L, chat, call, &prompt, ends)) {
    size_t done = 0;
    n = 0;
    for (size_t k = L->o.reuse ? L->nckpts : 0; k > 0; k--) {
      const tt_ckpt *c = &L->ckpts[k - 1];
      if (c->text_end <= prompt.len && memcmp(L->text.data, prompt.data, c->text_end) == 0) {
        done = c->text_end;
        n = (long)c->ntok;
        break;
      }
    }
    for (size_t seg = 0; seg <= chat->n; seg++) {
      if (ends[seg] <= done) continue;
      n += tt_llama_count_text(L, prompt.data + done, ends[seg] - done);
      done = ends[seg];
    }
  }
  free(ends);
  tt_buf_free(&prompt);
  return n;
}

/* The context when none was given: from the model's shape (keys and values
 * of every layer, f16 as llama.cpp keeps them by default), its trained
 * context, the weights and the memory free now (tt_llm_pick_context). */
static void tt_llama_choose_ctx(tt_llama *L) {
  if (L->o.n_ctx > 0) {
    L->ctx_note = tt_xasprintf("%d tokens: --ctx", L->o.n_ctx);
    return;
  }
  char arch[64] = "", key[128], val[32];
  llama_model_meta_val_str(L->model, "general.architecture", arch, sizeof arch);
  long n_head = llama_model_n_head(L->model), n_embd = llama_model_n_embd(L->model);
  long head = n_head > 0 ? n_embd / n_head : 0, k_len = head, v_len = head;
  snprintf(key, sizeof key, "%s.attention.key_length", arch);
  if (llama_model_meta_val_str(L->model, key, val, sizeof val) > 0) k_len = atol(val);
  snprintf(key, sizeof key, "%s.attention.value_length", arch);
  if (llama_model_meta_val_str(L->model, key, val, sizeof val) > 0) v_len = atol(val);
  tt_ctx_facts f = {
      .trained = llama_model_n_ctx_train(L->model),
      .kv_bytes_per_token = (long long)llama_model_n_layer(L->model) *
                            llama_model_n_head_kv(L->model) * (k_len + v_len) * 2,
      .weights_bytes = (long long)llama_model_size(L->model),
      .available_bytes = tt_mem_available(),
  };
  tt_buf note = TT_BUF_INIT;
  L->o.n_ctx = (int)tt_llm_pick_context(&f, &note);
  L->ctx_note = tt_buf_detach(&note);
}

static const tt_profile *tt_llama_profile(const void *impl) { return ((const tt_llama *)impl)->profile; }

static void tt_llama_free(void *impl) {
  tt_llama *L = impl;
  if (!L) return;
  tt_grammars_free(L->grammars);
  if (L->ctx) llama_free(L->ctx);
  if (L->ectx) llama_free(L->ectx);
  if (L->model) llama_model_free(L->model);
  free(L->toks);
  free(L->ckpts);
  tt_buf_free(&L->text);
  free(L->tmpl);
  free(L->path);
  free(L->name);
  free(L->names);
  free(L->cache_dir);
  free(L->ctx_note);
  free(L);
}

static bool tt_llama_embed(void *impl, const char *const *texts, size_t n,
                           volatile sig_atomic_t *cancel, tt_embeddings *out, tt_error *err) {
  tt_llama *L = impl;
  L->cancel = cancel;
  bool ok = tt_llama_embed_run(L->model, &L->ectx, L->o.n_threads, tt_llama_abort, L, texts, n, out, err);
  L->cancel = NULL;
  return ok;
}

static char *tt_llama_embed_identity(const void *impl) {
  return tt_xasprintf("gguf %s", ((const tt_llama *)impl)->model_id);
}

static const tt_llm_vtable tt_llama_vtable = {
    .name = "llama.cpp",
    .chat = tt_llama_chat,
    .model = tt_llama_model_name,
    .profile = tt_llama_profile,
    .names = tt_llama_names,
    .free = tt_llama_free,
    .context = tt_llama_context,
    .max_tokens = tt_llama_max_tokens,
    .count_prompt = tt_llama_count_prompt,
    .count_text = tt_llama_count_text,
    .counts_exact = true,
    .embed = tt_llama_embed,
    .embed_identity = tt_llama_embed_identity,
};

tt_llm *tt_llm_llama_new(const tt_llm_llama_opts *opts, tt_error *err) {
  struct stat st;
  if (!opts->model_path || stat(opts->model_path, &st) != 0 || !S_ISREG(st.st_mode)) {
    tt_llm_set_error(err, TT_ERR_IO, 0,
                     "no model file at %s; download one with `tabletalk pull` or give "
                     "--model-path FILE.gguf", opts->model_path ? opts->model_path : "(none)");
    return NULL;
  }
  if (!tt_llama_api_get(err)) return NULL; /* loads llama.cpp (first use) */
  static bool backend_ready = false;
  if (!backend_ready) {
    llama_log_set(tt_llama_log, NULL);
    llama_backend_init();
    backend_ready = true;
  }
  tt_llama *L = tt_xcalloc(1, sizeof *L);
  L->o = *opts;
  L->path = tt_xstrdup(opts->model_path);
  const char *base = strrchr(opts->model_path, '/');
  L->name = tt_xstrdup(base ? base + 1 : opts->model_path);
  L->cache_dir = opts->cache_dir ? tt_xstrdup(opts->cache_dir) : NULL;
  snprintf(L->model_id, sizeof L->model_id, "%lld:%lld:%s", (long long)st.st_size,
           (long long)st.st_mtime, L->name);

  struct llama_model_params mp = llama_model_default_params();
  mp.load_mode = LLAMA_LOAD_MODE_MMAP;
  mp.progress_callback = tt_llama_progress;
  mp.progress_callback_user_data = L;
  L->model = llama_model_load_from_file(opts->model_path, mp);
  if (!L->model) {
    tt_llm_set_error(err, TT_ERR_IO, 0,
                     "cannot load %s as a GGUF model (set TABLETALK_LLAMA_LOG=1 for llama.cpp's "
                     "reasons)", opts->model_path);
    tt_llama_free(L);
    return NULL;
  }
  L->vocab = llama_model_get_vocab(L->model);
  L->grammars = tt_grammars_new(L->vocab);
  struct llama_context_params cp = llama_context_default_params();
  tt_llama_choose_ctx(L);
  cp.n_ctx = (uint32_t)L->o.n_ctx;
  cp.n_batch = 2048;
  cp.n_ubatch = TT_LLAMA_BATCH;
  cp.n_threads = opts->n_threads;
  cp.n_threads_batch = opts->n_threads;
  cp.no_perf = true;
  cp.abort_callback = tt_llama_abort;
  cp.abort_callback_data = L;
  L->ctx = llama_init_from_model(L->model, cp);
  if (!L->ctx) {
    tt_llm_set_error(err, TT_ERR_UNAVAILABLE, 0,
                     "cannot create a context of %d tokens for %s (too little memory? try --ctx 4096)",
                     L->o.n_ctx, opts->model_path);
    tt_llama_free(L);
    return NULL;
  }
  const char *tmpl = llama_model_chat_template(L->model, NULL);
  L->tmpl = tmpl ? tt_xstrdup(tmpl) : NULL;
  {
    char gname[256] = "";
    llama_model_meta_val_str(L->model, "general.name", gname, sizeof gname);
    /* the file's name too: quantizers often keep the original model's name there */
    L->names = tt_xasprintf("%s %s", gname, L->name);
  }
  if (opts->profile) {
    L->profile = tt_profile_by_name(opts->profile);
    if (!L->profile) {
      tt_llm_set_error(err, TT_ERR_CONFIG, 0, "there is no model profile \"%s\"; choose one of %s",
                       opts->profile, tt_llm_profile_names());
      tt_llama_free(L);
      return NULL;
    }
  } else {
    char arch[64] = "";
    llama_model_meta_val_str(L->model, "general.architecture", arch, sizeof arch);
    L->profile = tt_profile_detect(arch, L->names, tmpl);
  }
  if (L->profile->id == TT_PROFILE_GENERIC && !L->tmpl) {
    tt_llm_set_error(err, TT_ERR_CONFIG, 0, "%s has no chat template, which the generic "
                     "profile needs; choose a profile with --profile (%s)", L->name,
                     tt_llm_profile_names());
    tt_llama_free(L);
    return NULL;
  }
  return tt_llm_wrap(&tt_llama_vtable, L);
}

bool tt_llm_is_llama(const tt_llm *llm) { return llm && llm->vt == &tt_llama_vtable; }

const char *tt_llm_llama_ctx_note(const tt_llm *llm) {
  return tt_llm_is_llama(llm) ? ((const tt_llama *)llm->impl)->ctx_note : NULL;
}

int tt_llm_llama_threads(const tt_llm *llm) {
  return tt_llm_is_llama(llm) ? ((const tt_llama *)llm->impl)->o.n_threads : 0;
}

/* ---- for tests ------------------------------------------------------------ */

bool tt_llama_debug_prompt(tt_llm *llm, const tt_chat *chat, const tt_llm_call *call, tt_buf *out) {
  if (!tt_llm_is_llama(llm)) return false;
  tt_llama *L = llm->impl;
  size_t *ends = tt_xcalloc(chat->n + 1, sizeof(size_t));
  bool ok = tt_llama_render(L, chat, call, out, ends);
  free(ends);
  return ok;
}

float *tt_llama_debug_logits(tt_llm *llm, const tt_chat *chat, const tt_llm_call *call,
                             int *n_vocab, long *reused) {
  if (!tt_llm_is_llama(llm)) return NULL;
  tt_llama *L = llm->impl;
  tt_llm_reply r = {0};
  tt_error err;
  if (!tt_prefill(L, chat, call, &r, &err)) return NULL;
  *n_vocab = llama_vocab_n_tokens(L->vocab);
  *reused = r.usage.cached;
  float *copy = tt_xmalloc((size_t)*n_vocab * sizeof(float));
  memcpy(copy, llama_get_logits_ith(L->ctx, -1), (size_t)*n_vocab * sizeof(float));
  return copy;
}
