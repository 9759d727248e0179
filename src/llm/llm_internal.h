/* llm_internal.h — what the backends share: the dispatch table behind the
 * opaque tt_llm handle. */
#ifndef TT_LLM_INTERNAL_H
#define TT_LLM_INTERNAL_H

#include "llm/llm.h"

typedef struct tt_llm_vtable {
  const char *name;
  bool (*chat)(void *impl, const tt_chat *chat, const tt_llm_call *call,
               tt_llm_reply *out, tt_error *err);
  const char *(*model)(const void *impl);
  /* how the backend prompts the model; NULL: the server decides */
  const struct tt_profile *(*profile)(const void *impl);
  /* the names the model goes by, for telling models of one family apart
   * (the GGUF's general.name and file name); NULL: the model's name */
  const char *(*names)(const void *impl);
  void (*free)(void *impl);
  /* How much fits (budget.c); each may be NULL: unknown, or the estimate. */
  long (*context)(const void *impl);    /* tokens one call may hold; 0: unknown */
  long (*max_tokens)(const void *impl); /* the longest reply asked for; 0: unknown */
  /* tokens of the whole prompt; -1: cannot tell (the estimate is used) */
  long (*count_prompt)(void *impl, const tt_chat *chat, const tt_llm_call *call);
  long (*count_text)(void *impl, const char *text, size_t len);
  bool counts_exact; /* the counts are the model's own tokenizer's */
  /* another instance answers calls at the same time as this one, and is
   * cheap to make (a stateless endpoint); false for the in-process engine,
   * whose one copy of the weights answers one call at a time */
  bool parallel;
  /* embeddings (both NULL: the backend cannot embed) */
  bool (*embed)(void *impl, const char *const *texts, size_t n, volatile sig_atomic_t *cancel,
                tt_embeddings *out, tt_error *err);
  char *(*embed_identity)(const void *impl); /* NULL: cannot embed (now) */
} tt_llm_vtable;

struct tt_llm {
  const tt_llm_vtable *vt;
  void *impl;
};

tt_llm *tt_llm_wrap(const tt_llm_vtable *vt, void *impl);
void tt_llm_set_error(tt_error *err, tt_errkind kind, int status,
                      const char *fmt, ...) TT_PRINTF(4, 5);

/* ---- embeddings (embed.c) ------------------------------------------------------ */

/* texts[i] cut to TT_EMBED_TEXT_MAX bytes at a character boundary: its length. */
size_t tt_embed_text_len(const char *text);

/* One endpoint's embeddings request (http_embed.c), made by http.c with
 * its loaded libcurl and handle. */
typedef struct tt_http_embed_req {
  const struct tt_curl_api *api;
  void *curl;            /* CURL * */
  const char *url;       /* .../embeddings */
  const char *api_key;   /* NULL: none */
  const char *model;
  double connect_timeout_s, read_timeout_s;
  volatile sig_atomic_t *cancel;
} tt_http_embed_req;
/* The vectors of n texts into out (not normalised); false with err, and
 * *missing when the endpoint said it has no embeddings for the model. */
bool tt_http_embed_run(const tt_http_embed_req *q, const char *const *texts, size_t n,
                       tt_embeddings *out, bool *missing, tt_error *err);

/* The embedded engine's vectors (llama_embed.c): each text decoded alone
 * (cut at TT_EMBED_CTX tokens) in a context of its own with embeddings on
 * and mean pooling over the loaded model, made on first use into *ectx
 * (the caller frees it with the engine). abort (may be NULL) stops it. */
#define TT_EMBED_CTX 512
struct llama_model;
struct llama_context;
bool tt_llama_embed_run(struct llama_model *model, struct llama_context **ectx, int threads,
                        bool (*abort)(void *ud), void *abort_ud, const char *const *texts,
                        size_t n, tt_embeddings *out, tt_error *err);

/* ---- estimates of token counts (budget.c) ------------------------------------ */

typedef long (*tt_count_fn)(void *ud, const char *text, size_t len);
/* About one token per 3.5 bytes: what BPE tokenizers of current models
 * average on prose, SQL and JSON rows, erring towards more tokens. */
long tt_llm_estimate_text(void *ud, const char *text, size_t len);
/* The prompt of chat and call counted message by message with count (the
 * texts, and a few tokens per message and per tool for the format around
 * them), as a server would render it. */
long tt_llm_estimate_prompt(const tt_chat *chat, const tt_llm_call *call, tt_count_fn count,
                            void *ud);

/* ---- model profiles (profile.c) ------------------------------------------- */

typedef enum tt_profile_id {
  TT_PROFILE_QWEN25,     /* Qwen2.5 / Hermes: <tool_call> tags in ChatML */
  TT_PROFILE_QWEN3,      /* Qwen3: the same after a <think> block */
  TT_PROFILE_LLAMA31,    /* Llama 3.1+: {"name", "parameters"} JSON, ipython results */
  TT_PROFILE_MISTRAL,    /* Mistral Small 3.2: [TOOL_CALLS]name[CALL_ID]id[ARGS]{..} */
  TT_PROFILE_GENERIC,    /* the model's own template, a JSON convention for calls */
  TT_PROFILE_SQL_WRITER, /* OmniSQL, XiYanSQL: single-turn SQL prompt (ChatML) */
} tt_profile_id;

typedef struct tt_profile {
  tt_profile_id id;
  const char *name;    /* as --profile takes it */
  const char *summary; /* one line for --help and doctor */
  bool think;          /* may write a thought before its call */
  bool sql_writer;
} tt_profile;

const tt_profile *tt_profile_by_name(const char *name);
/* The family of a GGUF from its architecture, its name and its chat
 * template (any may be NULL). */
const tt_profile *tt_profile_detect(const char *arch, const char *name, const char *tmpl);
/* The trained prompt of an SQL writer known by names. */
tt_sql_style tt_profile_sql_style(const char *names);
/* Renders the prompt exactly as the family's official template does, with
 * the offset where each message ends in ends[0..chat->n-1] and the
 * generation prompt's end in ends[chat->n]; tmpl is the GGUF's template
 * (the generic family applies it). false when it cannot be applied. */
bool tt_profile_render(const tt_profile *p, const char *tmpl, const tt_chat *chat,
                       const tt_tool_spec *tools, size_t ntools, tt_buf *out, size_t *ends);
/* The exact text the model writes for a call without thought (a recorded
 * call replayed; the stream's head). */
void tt_profile_render_call(const tt_profile *p, tt_buf *b, const char *name, const char *args);
/* Splits a generated reply into the call's name and arguments (byte for
 * byte as written) and the thought before it (out->thinking); false when
 * the text is no call of this family. */
bool tt_profile_parse(const tt_profile *p, const char *text, tt_llm_reply *out);
/* The generic family's messages as (role, text) pairs for the model's own
 * template: tools in the system message, calls and results as text
 * (allocated; tests/templates renders them with Jinja2 too). */
void tt_profile_generic_messages(const tt_chat *chat, const tt_tool_spec *tools, size_t ntools,
                                 char **roles, char **texts);

/* ---- grammars (grammar.c) ------------------------------------------------------ */

/* What may come before a call. A thought is at most thought_chars of any
 * UTF-8 text that neither starts nor ends with whitespace and never holds
 * the first character of the call's open text (a '<' followed by a space,
 * '=', '>' or a digit is allowed: SQL comparisons), so the call starts at
 * the first occurrence of open and rendering the parts again gives the
 * same bytes. */
typedef enum tt_thought {
  TT_THOUGHT_NONE,  /* the call from the first token */
  TT_THOUGHT_TEXT,  /* optionally: thought "\n", then the call */
  /* "<think>\n" thought "\n</think>\n\n", then the call (Qwen3). The
   * thought is required: Qwen3's template drops an empty think block from
   * every assistant message but the last, so an empty one would not render
   * back as written and the next prompt would miss the cache from there. */
  TT_THOUGHT_THINK,
} tt_thought;

/* How a family frames one call: the literal text before the tool's name,
 * between the name and the arguments object (for Mistral: mid, then
 * id_chars letters or digits, then mid_after_id), and after the object. */
typedef struct tt_call_shape {
  const char *open;         /* "<tool_call>\n{\"name\": \"" */
  const char *mid;          /* "\", \"arguments\": " */
  int id_chars;             /* 0: none */
  const char *mid_after_id; /* when id_chars */
  const char *close;        /* "}\n</tool_call>" */
  tt_thought thought;
  long thought_chars;       /* bound of a thought */
} tt_call_shape;

/* The shape of a family's calls; thought only when allow_thought. */
void tt_profile_call_shape(const tt_profile *p, bool allow_thought, long max_tokens,
                           tt_call_shape *out);

/* GBNF admitting exactly one call of one of the tools (only that one when
 * only is not NULL) in the family's shape, with schema-fitting arguments
 * written as Python's json.dumps writes them (", " and ": " separators,
 * raw UTF-8); NULL when no tool matches. */
char *tt_grammar_for_tools(const tt_tool_spec *tools, size_t n, const char *only,
                           const tt_call_shape *shape, long max_tokens);
/* GBNF admitting exactly text (replaying a recorded turn). */
char *tt_grammar_for_text(const char *text);

/* ---- the engine's grammar sampler (grammar_sampler.c) ---------------------------- */

struct llama_vocab;
struct llama_sampler;
/* Grammars parsed once per text, and what the check needs to know of the
 * vocabulary's tokens, for one engine (vocab must outlive it). */
typedef struct tt_grammars tt_grammars;
tt_grammars *tt_grammars_new(const struct llama_vocab *vocab);
void tt_grammars_free(tt_grammars *g);
/* A sampler at the start of gbnf (rule "root"): llama.cpp's grammar, which
 * also refuses tokens that would make the text invalid UTF-8 or that the
 * engine would not write (control tokens); NULL when gbnf does not parse.
 * The caller frees it with llama_sampler_free, before g. */
struct llama_sampler *tt_grammars_sampler(tt_grammars *g, const char *gbnf);

/* Embedded engine, for tests: the prompt text a call would send, and the
 * logits of the next token after bringing the cache up to that prompt
 * (a copy, n_vocab floats; *reused receives the tokens taken from cache). */
bool tt_llama_debug_prompt(tt_llm *llm, const tt_chat *chat, const tt_llm_call *call, tt_buf *out);
float *tt_llama_debug_logits(tt_llm *llm, const tt_chat *chat, const tt_llm_call *call,
                             int *n_vocab, long *reused);

#endif
