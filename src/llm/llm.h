/* llm.h — public face of the llm layer: one interface, chat(messages,
 * tools) -> reply with exactly one tool call (or plain text), with usage,
 * behind which sit the backends (an OpenAI-compatible HTTP client now, the
 * embedded llama.cpp engine later). Knows nothing about databases.
 *
 * A conversation (tt_chat) only ever grows: messages are appended, never
 * rewritten, so a backend can reuse everything it computed for the prefix;
 * the one exception is a caller that must shorten it to fit the model's
 * context (tt_chat_set_content, tt_chat_remove), which costs the backend
 * what it computed from the first changed message on.
 * A reply is returned as the model produced it; checking a tool call
 * against the tool's schema is the caller's business (tt_tool_check). */
#ifndef TT_LLM_H
#define TT_LLM_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>

#include "util/util.h"

/* ---- conversations ----------------------------------------------------- */

typedef enum tt_role {
  TT_ROLE_SYSTEM,
  TT_ROLE_USER,
  TT_ROLE_ASSISTANT,
  TT_ROLE_TOOL,
} tt_role;

typedef struct tt_msg {
  tt_role role;
  char *content;   /* text; for an assistant tool call, the thought the model
                    * wrote before it (NULL: none) */
  char *call_id;   /* assistant: id of its tool call; tool: the call answered */
  char *tool_name; /* assistant tool call */
  char *tool_args; /* assistant tool call: arguments as JSON text */
} tt_msg;

typedef struct tt_chat {
  tt_msg *msgs;
  size_t n, cap;
} tt_chat;

void tt_chat_add(tt_chat *c, tt_role role, const char *content);
void tt_chat_add_tool_call(tt_chat *c, const char *call_id, const char *name,
                           const char *args);
/* A tool call with the thought written before it (NULL or "": none), kept
 * as the message's content so that the prompt renders what the model
 * wrote, byte for byte. */
void tt_chat_add_call(tt_chat *c, const char *call_id, const char *name, const char *args,
                      const char *thought);
void tt_chat_add_tool_result(tt_chat *c, const char *call_id, const char *content);
void tt_chat_free(tt_chat *c);
/* Replaces the text of message i (to fit the context: see above). */
void tt_chat_set_content(tt_chat *c, size_t i, const char *content);
/* Removes the n messages from i on (to fit the context: see above). */
void tt_chat_remove(tt_chat *c, size_t i, size_t n);
const char *tt_role_name(tt_role role);
/* [{"role":..,"content":..,"tool_calls":[..]}...] in the OpenAI shape. */
json_t *tt_chat_to_json(const tt_chat *c);
/* Appends the messages of a tt_chat_to_json array; false on a bad shape. */
bool tt_chat_append_json(tt_chat *c, const json_t *arr);

/* ---- tools ------------------------------------------------------------- */

/* The JSON Schema pattern of a text whose digits all stand inside {{...}}
 * references (private mode's answer): the embedded engine's grammar knows
 * it and lets the model write no other digit; a server that constrains
 * tool calls by their schema may enforce it too. */
#define TT_LLM_CITED_PATTERN "^([^0-9{]|\\{\\{[^}]*\\}\\})*$"

typedef struct tt_tool_spec {
  const char *name;
  const char *description;
  const char *parameters; /* JSON schema of the arguments, as text */
} tt_tool_spec;

/* Checks arguments (JSON text) against the tool's schema (the subset we
 * use: object, properties, required, additionalProperties, type, enum,
 * anyOf, items, minItems/maxItems, minimum/maximum, minLength). On failure
 * sets err (TT_ERR_CONFIG: the model must fix its call) to what is wrong
 * in words a model can act on and returns false. */
bool tt_tool_check(const tt_tool_spec *tool, const char *args, tt_error *err);
const tt_tool_spec *tt_tool_find(const tt_tool_spec *tools, size_t n, const char *name);

/* ---- tool calls written as text (textcall.c) ----------------------------- */

/* Finds a call to one of tools that a model wrote as text: Hermes
 * <tool_call>{..}</tool_call>, a ```json block, bare JSON {"name": ..,
 * "arguments"|"parameters": {..}} (also in an array, or OpenAI's
 * {"type":"function","function":{..}}), LM Studio's [TOOL_REQUEST], Mistral's
 * [TOOL_CALLS], Llama's <|python_tag|>, and the name outside the JSON
 * (<function=NAME>, Qwen3-Coder's <parameter=K>, gpt-oss's to=functions.NAME,
 * [TOOL_CALLS]NAME[ARGS], ReAct's Action: NAME). Only names among tools count. On
 * success *name and *args (compact JSON text) are allocated and the text
 * around the call, without its markers, is appended to rest. */
bool tt_text_find_call(const char *text, const tt_tool_spec *tools, size_t ntools, char **name,
                       char **args, tt_buf *rest);
/* The text is shaped like a tool call or a JSON value (call tags, a fenced
 * JSON block, "arguments" keys, or it starts with { or [), whatever tool it
 * names: never to be shown as an answer. */
bool tt_text_looks_like_call(const char *text);
/* The text calls one of tools by name as code, NAME( (Gemma's tool_code,
 * Llama 3.2's pythonic calls): never to be shown as an answer either. */
bool tt_text_names_tool_call(const char *text, const tt_tool_spec *tools, size_t ntools);
/* Reasoning written inline: <think>..</think> at the start, or text up to a
 * lone </think> (templates that open the block in the prompt), goes to
 * thinking; the rest to answer. Text that is all inside an unclosed
 * <think> is all thinking. */
void tt_text_split_thinking(const char *text, tt_buf *thinking, tt_buf *answer);

/* ---- calls ------------------------------------------------------------- */

typedef struct tt_usage {
  long prompt;     /* prompt tokens sent */
  long cached;     /* of which the server reused from its cache */
  long completion; /* tokens generated */
} tt_usage;

typedef struct tt_llm_reply {
  bool is_tool;        /* a tool call (else plain text) */
  char *tool_name;
  char *tool_args;     /* JSON text as the model wrote it */
  char *call_id;
  char *text;          /* plain content when !is_tool */
  char *thinking;      /* what the model wrote before its call, or its
                        * reasoning (reasoning_content, Qwen3's <think>): kept
                        * for the trace, never shown as the answer; NULL when
                        * none */
  char *finish_reason;
  bool call_from_text; /* HTTP: the call was recovered from the reply's text */
  tt_usage usage;
  double latency_ms;   /* from request to complete reply, retries included */
  int attempts;        /* HTTP attempts made */
  size_t bytes;        /* HTTP: reply bytes received, retries included (also
                        * when the call failed) */
  /* embedded engine only */
  double prefill_ms;   /* computing the prompt tokens not already cached */
  double decode_ms;    /* generating the reply */
  double restore_ms;   /* loading a saved prefix state from disk (part of prefill) */
  long grammar_full_checks; /* tokens the grammar had to pick from the whole vocabulary */
} tt_llm_reply;

void tt_llm_reply_free(tt_llm_reply *r);


/* What one call offers the model and how the caller follows it. */
typedef struct tt_llm_call {
  const tt_tool_spec *tools;
  size_t ntools;
  const char *force_tool;    /* NULL: any tool must be called; else this one */
  /* Text as it is generated: plain content, or the string argument
   * stream_arg of a call to stream_tool (e.g. answer.text), unescaped. */
  void (*on_text)(void *ud, const char *piece, size_t n);
  /* The text streamed so far is void (the request is being retried). */
  void (*on_restart)(void *ud);
  const char *stream_tool;
  const char *stream_arg;
  void *ud;
  volatile sig_atomic_t *cancel; /* set (e.g. by SIGINT) to stop */
  /* Embedded engine, for the benchmark: make the model write exactly this
   * call (a recorded turn replayed; every token still costs a forward
   * pass). The grammar admits only that text; force_by_bias also raises the
   * right token's logit, as a trained model would, so the grammar's cheap
   * path is the one measured; no_grammar turns the grammar off. */
  const char *force_call_name, *force_call_args;
  bool force_by_bias;
  bool no_grammar;
  /* HTTP: bytes the reply may take, retries included (0: 16 MiB) */
  size_t max_reply_bytes;
  /* A text reply cut at the token limit is returned as far as it got, with
   * finish_reason "length", instead of failing: an SQL writer's query may
   * be complete before the limit, and the caller reads what it can. */
  bool allow_cut;
  /* Embedded engine: the first stable_prefix bytes of the first message
   * stay the same for every question on a database (an SQL writer's
   * single prompt up to the end of its schema). The cache keeps a point
   * there to come back to, and that prefix is the one saved on disk for
   * later processes. 0: the message boundaries only. */
  size_t stable_prefix;
} tt_llm_call;

typedef struct tt_llm tt_llm;

/* Sends the conversation and returns the model's reply. */
bool tt_llm_chat(tt_llm *llm, const tt_chat *chat, const tt_llm_call *call,
                 tt_llm_reply *out, tt_error *err);
const char *tt_llm_backend(const tt_llm *llm); /* "openai-http", ... */
/* Whether another instance of this model's backend answers calls at the
 * same time as this one and is cheap to make (an HTTP endpoint): then each
 * question may get a model of its own; else questions share this one, one
 * at a time (the in-process engine). */
bool tt_llm_parallel(const tt_llm *llm);
const char *tt_llm_model(const tt_llm *llm);

/* ---- embeddings (embed.c; the backends' own parts in http_embed.c and
 * llama_embed.c) ---------------------------------------------------------- */

/* Bounds of one tt_llm_embed call: texts are cut at TT_EMBED_TEXT_MAX
 * bytes (at a character boundary), sent TT_EMBED_BATCH texts to a request;
 * a call takes at most TT_EMBED_TEXTS texts and TT_EMBED_DEADLINE_S
 * seconds in all (an endpoint: also its read timeout per request), and a
 * vector at most TT_EMBED_DIM_MAX numbers. */
#define TT_EMBED_TEXT_MAX 2048
#define TT_EMBED_BATCH 64
#define TT_EMBED_TEXTS 4096
#define TT_EMBED_DEADLINE_S 120.0
#define TT_EMBED_DIM_MAX 16384

/* Vectors of texts, in their order, each scaled to length 1. */
typedef struct tt_embeddings {
  size_t n, dim;
  float *v;        /* n rows of dim */
  long tokens;     /* tokens the backend counted (an endpoint's usage; 0: not told) */
  int requests;    /* requests sent (an endpoint) or texts decoded (the embedded engine) */
  double ms;       /* time taken */
} tt_embeddings;

void tt_embeddings_free(tt_embeddings *e);

/* Whether the model can embed: the embedded engine (mean pooling over the
 * loaded GGUF), an endpoint until it showed it has no /v1/embeddings for
 * its embedding model (then false for good: the caller leaves the score
 * off). Other backends cannot. */
bool tt_llm_can_embed(const tt_llm *llm);
/* What vectors come from, for keying cached ones: "gguf SIZE:MTIME:FILE"
 * or "endpoint URL MODEL" (allocated); NULL when the model cannot embed. */
char *tt_llm_embed_identity(const tt_llm *llm);
/* The vectors of n texts (1..TT_EMBED_TEXTS); false with err:
 * TT_ERR_UNAVAILABLE when the model cannot embed (an endpoint without the
 * route, or refusing its model for embeddings: tt_llm_can_embed turns
 * false), TT_ERR_LIMIT past the bounds, the transport's errors otherwise.
 * cancel (may be NULL) stops it. */
bool tt_llm_embed(tt_llm *llm, const char *const *texts, size_t n, volatile sig_atomic_t *cancel,
                  tt_embeddings *out, tt_error *err);
/* Scales each row of e to length 1 (a zero row stays zero). */
void tt_embeddings_normalise(tt_embeddings *e);

/* ---- how much fits (budget.c) ---------------------------------------------- */

/* Tokens one call may hold, prompt and reply together: the embedded
 * engine's context, what the HTTP backend was told of its server's (--ctx);
 * 0 when unknown. */
long tt_llm_context(const tt_llm *llm);
/* Tokens kept free for the reply: the longest reply asked for
 * (max_tokens), or a quarter of the context when that would take more; 0
 * when the context is unknown. */
long tt_llm_reply_reserve(const tt_llm *llm);
/* Tokens of the whole prompt chat and call would send. The embedded engine
 * renders and tokenizes it exactly as it prefills it (reusing what its
 * cache already holds); other backends estimate it from the texts, about
 * one token per 3.5 bytes (tt_llm_counts_exact says which). */
long tt_llm_count_prompt(tt_llm *llm, const tt_chat *chat, const tt_llm_call *call);
/* Tokens of text, exact or estimated as above. */
long tt_llm_count_text(tt_llm *llm, const char *text, size_t len);
bool tt_llm_counts_exact(const tt_llm *llm);

/* The default context of the embedded engine, from the model and the
 * machine (a pure function: tests feed it numbers). */
typedef struct tt_ctx_facts {
  long trained;                 /* the model's trained context (<arch>.context_length); 0: unknown */
  long long kv_bytes_per_token; /* keys and values of every layer for one token */
  long long weights_bytes;      /* the weights (the file is memory-mapped) */
  long long available_bytes;    /* memory the process may still take; 0: unknown */
} tt_ctx_facts;

#define TT_CTX_DEFAULT 16384 /* the context chosen when memory allows */
#define TT_CTX_FLOOR 4096    /* never less (unless trained for less): the system
                              * prompt and one result need about this */

/* min(the model's trained context, TT_CTX_DEFAULT, what memory allows:
 * nine tenths of the available memory less the weights and 0.5 GiB of
 * compute buffers, over kv_bytes_per_token, in 1024s), and at least
 * TT_CTX_FLOOR. It cannot fail: note (may be NULL) receives how the
 * number was chosen, for `doctor` and the run's start event: "16384 tokens:
 * the default; ...". */
long tt_llm_pick_context(const tt_ctx_facts *f, tt_buf *note);
/* Memory this process may still take: MemAvailable of /proc/meminfo (or
 * the free pages sysconf reports), lowered to what a cgroup's memory.max
 * leaves; 0 when unknown. */
long long tt_mem_available(void);

/* ---- model profiles (profile.c) ------------------------------------------ */

/* The names --profile takes, ", "-separated: qwen2.5, qwen3, llama3.1,
 * mistral, generic, sql-writer. */
const char *tt_llm_profile_names(void);
bool tt_llm_profile_known(const char *name);
/* The family a backend prompts the model as ("qwen2.5", ...: detected from
 * the GGUF or chosen); NULL when the server renders prompts and none was
 * chosen. */
const char *tt_llm_profile(const tt_llm *llm);
/* One line on that family ("Qwen2.5 and Hermes-style models: ..."), or NULL. */
const char *tt_llm_profile_summary(const tt_llm *llm);
/* The model is an SQL writer (OmniSQL, XiYanSQL): trained to write one
 * query from a schema and a question, not to call tools; the agent then
 * runs its SQL-writer mode. */
bool tt_llm_is_sql_writer(const tt_llm *llm);
void tt_llm_free(tt_llm *llm);

/* ---- SQL writers' own prompts (sqlprompt.c) -------------------------------- */

/* The prompt an SQL writer was trained on. */
typedef enum tt_sql_style {
  TT_SQL_STYLE_NONE,    /* not an SQL writer */
  TT_SQL_STYLE_OMNISQL, /* OmniSQL's: the schema as CREATE TABLE statements
                         * (tt_schema_render_ddl); also any other model run
                         * with --profile sql-writer */
  TT_SQL_STYLE_XIYAN,   /* XiYanSQL's: the schema as M-Schema
                         * (tt_schema_render_mschema) */
} tt_sql_style;

/* XiYanSQL's when the model's name (or the GGUF's general.name) says
 * xiyan, else OmniSQL's; TT_SQL_STYLE_NONE for a model that is no SQL
 * writer. */
tt_sql_style tt_llm_sql_style(const tt_llm *llm);

/* What goes into the trained prompt; the template places each part where
 * the model learned to find it. */
typedef struct tt_sql_prompt {
  const char *engine;   /* "SQLite" */
  const char *schema;   /* in the style's form (see tt_sql_style) */
  const char *question; /* the user's words */
  const char *context;  /* what the question follows on (earlier questions
                         * of the thread and their SQL), or NULL */
  const char *const *notes; /* further instructions (an earlier query of this
                             * question and its error), in order */
  size_t nnotes;
} tt_sql_prompt;

/* The single user message of the style's template, filled in (allocated).
 * *stable receives how many bytes at its start depend only on the engine
 * and the schema, not on the question. */
char *tt_sql_prompt_render(tt_sql_style style, const tt_sql_prompt *p, size_t *stable);

/* The query of an SQL writer's reply: the body of its last ```sql block
 * (the tag in any case), else of its last untagged ``` block, as the
 * writers' own evaluation scripts read it. XiYanSQL's prompt ends by
 * opening the block, so its reply may start inside one. A block the reply
 * ends in without closing counts, with unclosed set (the caller knows
 * whether the reply was cut). NULL when there is no such block with
 * anything in it; else allocated, trimmed. */
char *tt_sql_from_reply(tt_sql_style style, const char *reply, bool *unclosed);

/* ---- the OpenAI-compatible HTTP backend --------------------------------- */

typedef struct tt_llm_http_opts {
  const char *base_url;       /* e.g. http://127.0.0.1:8080/v1 */
  const char *api_key;        /* sent as a bearer token when set */
  const char *model;          /* "model" field; default "default" */
  double temperature;         /* default 0 */
  long max_tokens;            /* default 1024 */
  long seed;                  /* sent when has_seed */
  bool has_seed;
  bool stream;                /* server-sent events (default true) */
  double connect_timeout_s;   /* default 10 */
  double read_timeout_s;      /* no data for this long ends the call; default 120
                               * (keep-alive comments are not data) */
  double deadline_s;          /* one call may take this long in all, retries
                               * included; default 600 */
  int max_retries;            /* on 429, 5xx, connection errors, cut streams; default 3 */
  double backoff_s;           /* first retry delay, doubled each time; default 0.5 */
  const char *profile;        /* a model family by name; the server renders the
                               * prompt, so only "sql-writer" changes anything */
  long context;               /* tokens the server's context holds, when known
                               * (--ctx); 0: unknown, the conversation is not fitted */
  const char *embed_model;    /* the "model" of /v1/embeddings requests (--embed-model);
                               * NULL: model */
} tt_llm_http_opts;

tt_llm_http_opts tt_llm_http_default_opts(void);
/* Starts loading the HTTP library (libcurl and its ~30 dependencies, about
 * 3 ms) on a background thread, so that it overlaps the caller's own
 * start-up work; the backend's first request waits for it (tt_llm_http_new
 * does not load it). */
void tt_llm_http_preload(void);
/* Waits until a preload tt_llm_http_preload started has finished (at
 * once when none was started): called before the process exits, so that
 * exit's clean-up of the TLS library never runs beside its
 * initialisation on the preload thread. */
void tt_llm_http_preload_wait(void);
tt_llm *tt_llm_http_new(const tt_llm_http_opts *opts, tt_error *err);
/* What the HTTP backend adapted to so far, in words, "; "-separated ("sends
 * max_completion_tokens instead of max_tokens (...)"): the model's name, and
 * 400 errors that named an unsupported parameter. "" when nothing; NULL for
 * other backends. Owned by the handle. */
const char *tt_llm_http_notes(const tt_llm *llm);
/* OpenAI's reasoning models by name (o1, o3, o4 and their variants, the
 * gpt-5 family but not gpt-5-chat): they take max_completion_tokens and no
 * temperature. */
bool tt_llm_http_is_reasoning_model(const char *model);
/* What an endpoint's server is and tells about itself (`tabletalk doctor`). */
typedef struct tt_llm_server_info {
  char kind[32];          /* "llama-server", "vllm", "ollama", "lm-studio", "openai",
                           * "openai-compatible" */
  char kind_from[96];     /* how it was recognised ("recognised by /props") */
  bool reachable;         /* GET /models got an HTTP answer */
  long models_status;     /* its status (0: no answer) */
  char models_error[300]; /* why there was no answer */
  json_t *models;         /* names listed by /models (array), or NULL */
  bool model_listed;      /* opts->model is among them */
  long context;           /* tokens one request may hold, 0 when not told */
  char context_from[96];  /* where that came from ("/props n_ctx") */
  long model_context;     /* the model's own limit (trained), 0 when not told */
  int tools_template;     /* the model's template takes tools: 1, 0, -1 unknown */
  bool ollama_default_ctx; /* Ollama without num_ctx: its default context applies */
} tt_llm_server_info;

/* Asks the endpoint's server what it is (GET /models, then llama-server's
 * /props, Ollama's /api/version and /api/show, LM Studio's /api/v1/models),
 * each within opts->connect_timeout_s. false (why in err: TT_ERR_UNAVAILABLE)
 * only when libcurl cannot be used; an endpoint that does not answer is
 * reachable = false. */
bool tt_llm_server_probe(const tt_llm_http_opts *opts, tt_llm_server_info *out, tt_error *err);
void tt_llm_server_info_free(tt_llm_server_info *info);
/* url is a usable endpoint URL: http:// or https://, a host (name, IPv4
 * or [IPv6]), an optional port from 1 to 65535, no spaces or control
 * characters; false with the reason in err (TT_ERR_CONFIG; the message is
 * a clause for the caller's sentence: "it names no host"). */
bool tt_llm_http_url_ok(const char *url, tt_error *err);

/* ---- the embedded llama.cpp backend ------------------------------------- */

typedef struct tt_llm_llama_opts {
  const char *model_path;  /* a GGUF file */
  int n_ctx;               /* context tokens; 0 (default): chosen from the model and
                            * the memory (tt_llm_pick_context) */
  int n_threads;           /* default: the number of cores */
  double temperature;      /* 0: greedy (default) */
  long seed;               /* for temperature > 0 */
  long max_tokens;         /* longest reply (1024) */
  const char *cache_dir;   /* where computed prompt prefixes are kept (NULL: not kept) */
  bool reuse;              /* reuse cached tokens (false: recompute every call) */
  bool cold;               /* compute the first prefix even when a saved state
                            * exists in cache_dir, and save it afresh */
  bool show_progress;      /* loading progress on stderr */
  const char *profile;     /* a model family by name (tt_llm_profile_names); NULL:
                            * detected from the GGUF */
} tt_llm_llama_opts;

tt_llm_llama_opts tt_llm_llama_default_opts(void);
tt_llm *tt_llm_llama_new(const tt_llm_llama_opts *opts, tt_error *err);
bool tt_llm_is_llama(const tt_llm *llm);
/* How the engine's context was chosen, in words ("16384 tokens: the
 * default; ..." or "8192 tokens: --ctx"); NULL for other backends. Owned
 * by the handle. */
const char *tt_llm_llama_ctx_note(const tt_llm *llm);
/* The CPU threads the embedded engine computes with (0: not that engine). */
int tt_llm_llama_threads(const tt_llm *llm);

/* A backend that answers each call with the next recorded tool call,
 * produced by inner (the embedded engine) under force_call: the benchmark's
 * way to replay a conversation. calls is a JSON array of {"name":..,
 * "arguments":{..}} (borrowed). When the recording runs out, it answers
 * with an error. */
tt_llm *tt_llm_replay_new(tt_llm *inner, const json_t *calls, bool by_bias, bool no_grammar);

/* ---- a backend made of a function ------------------------------------------- */

/* Fills out with one reply to chat (a tool call: is_tool, tool_name,
 * tool_args; or text) or err, and returns whether it did. */
typedef bool (*tt_llm_reply_fn)(void *ud, const tt_chat *chat, const tt_llm_call *call,
                                tt_llm_reply *out, tt_error *err);

/* A backend that answers with fn (stand-in models for evaluation
 * harnesses). Call ids, latency and finish reasons are filled in; ud is
 * released with free_ud (may be NULL) when the backend is freed. */
tt_llm *tt_llm_func_new(const char *name, const char *model, tt_llm_reply_fn fn, void *ud,
                        void (*free_ud)(void *ud));
/* Gives a function backend a context and a longest reply (tokens; 0:
 * unknown), and a way to count the tokens of a text (NULL: the estimate),
 * from which its prompts are counted as tt_llm_count_prompt estimates
 * them: a stand-in for a model with a small context, in tests. */
void tt_llm_func_set_context(tt_llm *llm, long context, long max_tokens,
                             long (*count)(void *ud, const char *text, size_t len));

/* ---- downloading models ---------------------------------------------------- */

typedef struct tt_pull_opts {
  void (*on_progress)(void *ud, long long done, long long total /* -1: unknown */);
  void *ud;
  volatile sig_atomic_t *cancel;
  double stall_timeout_s; /* give up when nothing arrives for this long (60) */
  /* The sha256 the file must have (64 lowercase hex digits), or NULL. A
   * server that announces another stops the download before any data; a
   * download that hashes otherwise is deleted. */
  const char *expect_sha256;
} tt_pull_opts;

typedef struct tt_pull_result {
  long long bytes;        /* size of the file */
  long long resumed_from; /* bytes a previous attempt had already fetched */
  bool verified;          /* the sha256 matched the announced or expected one */
  bool changed;           /* refused: not the file expect_sha256 names */
  char sha256[65];
} tt_pull_result;

/* True for an https URL, or plain http to this machine (localhost,
 * 127.x, [::1]); otherwise false with the reason in err (TT_ERR_CONFIG). */
bool tt_pull_url_ok(const char *url, tt_error *err);
/* Downloads url (see tt_pull_url_ok; redirects stay on https) to dest (via
 * dest.part, resumed when present), verifying the sha256 the server
 * announces and the one expected (o->expect_sha256). false with err on
 * failure: config (the URL), unavailable (no libcurl), io (the file),
 * connect or timeout (the network), http (an error status), protocol (a
 * redirect off https, a file other than the one expected or announced),
 * cancelled (o->cancel); an interrupted download keeps its .part for the
 * next attempt, an empty one is removed. */
bool tt_model_pull(const char *url, const char *dest, const tt_pull_opts *o,
                   tt_pull_result *res, tt_error *err);

/* ---- the model catalogue (catalog.c) ---------------------------------------- */

/* What a known model is good at (docs/guide/models.md has the evidence). */
typedef enum tt_model_role {
  TT_MODEL_AGENT,      /* trained for tool calls: runs tabletalk's loop */
  TT_MODEL_GENERAL,    /* a general model with tool calls that thinks first */
  TT_MODEL_SQL_WRITER, /* trained to write one query from a schema and a question */
} tt_model_role;

typedef struct tt_known_model {
  const char *name;
  tt_model_role role;
  double download_gb; /* the file (all parts), 10^9 bytes */
  double ram_gb;      /* to run it with an 8,192-token context */
  const char *note;   /* "" or a short caveat shown in the list */
  const char *url;    /* on huggingface.co (a split model: its first part) */
  const char *sha256; /* what the file must hash to; NULL when not pinned */
} tt_known_model;

/* The models `tabletalk pull` knows; the first is the default. */
const tt_known_model *tt_known_models(size_t *n);
/* The known model called name, or NULL. */
const tt_known_model *tt_known_model_named(const char *name);
/* "tool-calling agent", "general, thinks", "SQL writer". */
const char *tt_model_role_name(tt_model_role role);
/* Where m is fetched from: its URL, or the same path on mirror (HF_ENDPOINT;
 * NULL or "": huggingface.co). NULL with err (TT_ERR_CONFIG) when the
 * mirror cannot serve it. */
char *tt_known_model_url(const tt_known_model *m, const char *mirror, tt_error *err);
/* The model the defaults point at in models_dir: default.gguf (what pull
 * sets), else the only model there (a split model counts once, by its
 * first part); NULL when none. */
char *tt_model_default_in(const char *models_dir);

/* ---- models split into parts (gguf_split.c) -------------------------------- */

/* The number of parts when name (a path, or a URL: its query is ignored)
 * is a part of a split GGUF model as llama.cpp names them,
 * PREFIX-00002-of-00003.gguf (no set to 2, 1-based), else 0. */
int tt_gguf_split_count(const char *name, int *no);
/* name with its part number replaced by no (1..count), the query of a URL
 * kept; NULL when name is no part name or no is out of range. Freshly
 * allocated. */
char *tt_gguf_split_part(const char *name, int no);
/* The file llama.cpp should open for path: path itself, except a link
 * (default.gguf) to the first part of a split model resolves to that part,
 * because llama.cpp finds the other parts from the first part's name.
 * Freshly allocated. */
char *tt_model_load_path(const char *path);
/* true unless path names a part of a split model that cannot load
 * (TT_ERR_IO): not the first part (the message names the first), or
 * another part missing beside it (the hint says what to do). */
bool tt_model_parts_check(const char *path, tt_error *err);

/* ---- streaming a string argument out of partial JSON --------------------- */

/* Feeds the arguments of a tool call piece by piece (as a stream delivers
 * them) and hands out the unescaped text of one top-level string member,
 * e.g. "text" of {"text": "..."}, as soon as it arrives. */
typedef struct tt_argstream tt_argstream;

tt_argstream *tt_argstream_new(const char *key);
/* Appends the decoded text contained in piece to out. */
void tt_argstream_feed(tt_argstream *s, const char *piece, size_t n, tt_buf *out);
void tt_argstream_free(tt_argstream *s);

#endif
