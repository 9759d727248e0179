/* http.c — the OpenAI-compatible chat-completions backend on libcurl:
 * request building (tools, tool_choice "required", sampling settings),
 * plain and streamed (SSE) replies, usage with cached prompt tokens,
 * what real servers send (a streamed name repeated or grown in every
 * fragment, arguments as an object, reasoning_content or reasoning, text
 * before the call, a call written as text: see textcall.c; the legacy
 * function_call; calls without index told apart by id), a reply cut
 * at the token limit retried once with room, OpenAI's reasoning models
 * (max_completion_tokens, no temperature) and a 400 that names an
 * unsupported parameter adapted to once, hints that match the error,
 * connect and idle timeouts (--llm-timeout: no data for S seconds ends the
 * call, without retrying; keep-alive comments are not data), an overall
 * deadline per call (--llm-deadline), a cap on the bytes of a reply (retries
 * included), cancellation, bounded retries with backoff on 429, 5xx,
 * connection errors and cut streams (the message then says how many
 * attempts over how long), and replies that are not an API's (an HTML
 * page, compressed or other content, invalid UTF-8) named for what they
 * are. */
#define _GNU_SOURCE /* memmem */
#include "llm/llm_internal.h"

#include "llm/curl_api.h"
#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#define TT_HTTP_MAX_BODY (16u << 20)
#define TT_HTTP_MAX_TOKENS_CAP 16384 /* a reply cut at the limit is retried with
                                      * twice the room, up to this */

/* What the endpoint turned out to want, learned once and kept. */
typedef struct tt_http_quirks {
  bool reasoning_model;    /* OpenAI o1/o3/o4, gpt-5: max_completion_tokens, no temperature */
  bool max_completion;     /* "max_completion_tokens" instead of "max_tokens" */
  bool no_temperature, no_parallel, no_seed, no_stream_options;
  bool tool_choice_auto;   /* "required" refused: ask with "auto" (text is pushed back) */
} tt_http_quirks;

#define TT_HTTP_PARAMS_KEPT 16

typedef struct tt_http {
  const tt_curl_api *curl_api;
  char *url, *api_key, *model;
  tt_llm_http_opts o;
  CURL *curl; /* kept between calls: the connection is reused */
  long next_call_id;
  tt_http_quirks q;
  tt_buf notes; /* the adaptations made, in words, "; "-separated */
  const tt_profile *profile; /* chosen, or an SQL writer known by its name; else NULL */
  char *embed_url, *embed_model; /* /v1/embeddings and the model asked there */
  bool embed_missing;        /* the endpoint said it has no embeddings for it: not asked again */
  struct {                   /* tool parameter schemas as parsed, by their text: */
    char *text;              /* parsed once, not for every request */
    json_t *parsed;
  } params[TT_HTTP_PARAMS_KEPT];
} tt_http;

/* Everything one HTTP attempt collects. */
typedef struct tt_xfer {
  const tt_llm_call *call;
  double idle_limit_ms; /* no data for this long ends the attempt */
  double last_byte_ms;  /* when the last data (or the request) went */
  bool idle;            /* it ended that way */
  double deadline_ms;   /* the whole call must end by then */
  bool overdue;         /* it ended that way */
  size_t received;      /* body bytes of this attempt */
  size_t max_bytes;     /* what this attempt may still receive */
  size_t budget;        /* what the whole call may receive */
  char encoding[32];    /* Content-Encoding, "" when none */
  char *bad_event;      /* why a stream event could not be read */
  long status;
  bool sse;             /* the reply is an event stream */
  char ctype[96];       /* its Content-Type, "" when none */
  bool not_completion;  /* a JSON body without "choices" */
  double retry_after_s; /* from a Retry-After header, -1 when absent */
  tt_buf body;          /* whole body (plain replies, error bodies) */
  tt_buf line;          /* the SSE line being received */
  bool too_big;
  /* the reply as it accumulates */
  tt_buf text, args, name, thinking;
  char *call_id, *finish;
  bool saw_done, saw_tool, have_usage, streamed_text;
  json_int_t tool_index;  /* the index of the first tool call seen (the one kept) */
  int text_mode;          /* 0 undecided, 1 content streams to on_text, 2 held back
                           * (it starts like a call, JSON or reasoning) */
  tt_usage usage;
  tt_argstream *as;
  char *stream_error;
} tt_xfer;

tt_llm_http_opts tt_llm_http_default_opts(void) {
  return (tt_llm_http_opts){
      .model = "default",
      .temperature = 0.0,
      .max_tokens = 1024,
      .stream = true,
      .connect_timeout_s = 10,
      .read_timeout_s = 120,
      .deadline_s = 600,
      .max_retries = 3,
      .backoff_s = 0.5,
  };
}

/* ---- parsing replies ---------------------------------------------------- */

static void tt_xfer_usage(tt_xfer *x, const json_t *usage, const json_t *timings) {
  if (json_is_object(usage)) {
    x->have_usage = true;
    x->usage.prompt = (long)json_integer_value(json_object_get(usage, "prompt_tokens"));
    x->usage.completion = (long)json_integer_value(json_object_get(usage, "completion_tokens"));
    const json_t *details = json_object_get(usage, "prompt_tokens_details");
    const json_t *cached = json_object_get(details, "cached_tokens");
    if (json_is_integer(cached)) x->usage.cached = (long)json_integer_value(cached);
  }
  /* llama.cpp's server reports its prompt cache here instead */
  const json_t *cache_n = json_object_get(timings, "cache_n");
  if (json_is_integer(cache_n) && x->usage.cached == 0) x->usage.cached = (long)json_integer_value(cache_n);
}

/* Content streams to on_text as it comes, unless it starts like a call
 * written as text, JSON or inline reasoning (<, {, [ or `): that is held
 * back, never shown as if it were the answer. */
static void tt_xfer_text(tt_xfer *x, const char *s, size_t n) {
  tt_buf_append(&x->text, s, n);
  if (x->text_mode == 0) {
    const char *p = tt_buf_cstr(&x->text);
    while (*p == ' ' || *p == '\n' || *p == '\r' || *p == '\t') p++;
    if (*p) x->text_mode = strchr("<{[`", *p) ? 2 : 1;
    if (x->text_mode == 1) { /* what was waiting goes out now */
      s = p;
      n = x->text.len - (size_t)(p - x->text.data);
    }
  }
  if (x->text_mode == 1 && !x->saw_tool && x->call->on_text && n) {
    x->call->on_text(x->call->ud, s, n);
    x->streamed_text = true;
  }
}

static void tt_xfer_thinking(tt_xfer *x, const json_t *v) {
  if (json_is_string(v)) tt_buf_append(&x->thinking, json_string_value(v), json_string_length(v));
}

static void tt_xfer_args(tt_xfer *x, const char *s, size_t n) {
  tt_buf_append(&x->args, s, n);
  const tt_llm_call *c = x->call;
  if (!c->on_text || !c->stream_tool || !c->stream_arg) return;
  if (strcmp(tt_buf_cstr(&x->name), c->stream_tool) != 0) return;
  if (!x->as) x->as = tt_argstream_new(c->stream_arg);
  tt_buf piece = TT_BUF_INIT;
  tt_argstream_feed(x->as, s, n, &piece);
  if (piece.len) c->on_text(c->ud, piece.data, piece.len);
  tt_buf_free(&piece);
}

/* A name fragment. OpenAI sends the name once; some servers repeat it in
 * every fragment (appending would give "run_sqlrun_sql"), llama-server may
 * send it again grown ("run_" then "run_sql"); a server that really sends
 * pieces gets them joined. */
static void tt_xfer_name(tt_xfer *x, const char *name) {
  const char *cur = tt_buf_cstr(&x->name);
  size_t n = strlen(name);
  if (!n || strcmp(cur, name) == 0) return;
  if (x->name.len && strncmp(name, cur, x->name.len) == 0) { /* the same, grown */
    tt_buf_reset(&x->name);
  } else if (n < x->name.len && strncmp(cur, name, n) == 0) {
    return; /* a shorter repeat */
  }
  tt_buf_puts(&x->name, name);
}

/* Arguments sent as an object instead of a JSON string: the whole of them. */
static void tt_xfer_object_args(tt_xfer *x, const json_t *args) {
  char *s = json_dumps(args, JSON_COMPACT);
  if (!s) return;
  tt_buf_reset(&x->args);
  tt_argstream_free(x->as);
  x->as = NULL;
  tt_xfer_args(x, s, strlen(s));
  free(s);
}

static void tt_xfer_tool_delta(tt_xfer *x, const json_t *call) {
  const json_t *jindex = json_object_get(call, "index");
  json_int_t index = json_is_integer(jindex) ? json_integer_value(jindex) : 0;
  if (x->saw_tool && index != x->tool_index) return; /* one tool call per step: the first counts */
  const char *new_id = json_string_value(json_object_get(call, "id"));
  if (!jindex && x->call_id && new_id && *new_id && strcmp(new_id, x->call_id) != 0)
    return; /* no index (older Ollama), another id: a second call, not more of the first */
  if (!x->saw_tool && x->streamed_text && x->call->on_restart)
    x->call->on_restart(x->call->ud); /* the text before it was not an answer */
  x->saw_tool = true;
  x->tool_index = index;
  const char *id = json_string_value(json_object_get(call, "id"));
  if (id && *id && !x->call_id) x->call_id = tt_xstrdup(id);
  const json_t *fn = json_object_get(call, "function");
  const char *name = json_string_value(json_object_get(fn, "name"));
  if (name) tt_xfer_name(x, name);
  const json_t *args = json_object_get(fn, "arguments");
  if (json_is_string(args)) tt_xfer_args(x, json_string_value(args), json_string_length(args));
  else if (json_is_object(args)) tt_xfer_object_args(x, args);
}

static void tt_xfer_chunk(tt_xfer *x, const json_t *chunk) {
  const json_t *error = json_object_get(chunk, "error");
  if (error && !x->stream_error) {
    const char *msg = json_string_value(json_object_get(error, "message"));
    if (!msg) msg = json_string_value(error);
    x->stream_error = tt_xstrdup(msg ? msg : "error event in the stream");
  }
  tt_xfer_usage(x, json_object_get(chunk, "usage"), json_object_get(chunk, "timings"));
  const json_t *choice = json_array_get(json_object_get(chunk, "choices"), 0);
  if (!choice) return;
  const json_t *delta = json_object_get(choice, "delta");
  tt_xfer_thinking(x, json_object_get(delta, "reasoning_content"));
  tt_xfer_thinking(x, json_object_get(delta, "reasoning"));
  const json_t *content = json_object_get(delta, "content");
  if (json_is_string(content)) tt_xfer_text(x, json_string_value(content), json_string_length(content));
  size_t i;
  const json_t *call;
  json_array_foreach(json_object_get(delta, "tool_calls"), i, call) tt_xfer_tool_delta(x, call);
  const json_t *legacy = json_object_get(delta, "function_call"); /* the pre-tools "functions" API */
  if (json_is_object(legacy)) {
    json_t *c = json_pack("{s:O}", "function", legacy);
    tt_xfer_tool_delta(x, c);
    json_decref(c);
  }
  const char *finish = json_string_value(json_object_get(choice, "finish_reason"));
  if (finish && !x->finish) x->finish = tt_xstrdup(finish);
}

static void tt_xfer_sse_line(tt_xfer *x, const char *line, size_t n) {
  if (n && line[n - 1] == '\r') n--;
  if (n < 5 || strncmp(line, "data:", 5) != 0) return; /* comments, event names */
  x->last_byte_ms = tt_now_ms(); /* data, not a keep-alive comment */
  const char *p = line + 5;
  n -= 5;
  if (n && *p == ' ') {
    p++;
    n--;
  }
  if (n == 6 && strncmp(p, "[DONE]", 6) == 0) {
    x->saw_done = true;
    return;
  }
  json_error_t jerr;
  json_t *chunk = json_loadb(p, n, 0, &jerr);
  if (chunk) {
    tt_xfer_chunk(x, chunk);
  } else if (!x->bad_event) { /* never dropped in silence: the reply would be wrong */
    size_t bad;
    x->bad_event = !tt_utf8_valid(p, n, &bad)
                       ? tt_xasprintf("a stream event that is not valid UTF-8 (byte 0x%02X at "
                                      "offset %zu of the event)", (unsigned)(unsigned char)p[bad], bad)
                       : tt_xasprintf("a stream event that is not valid JSON (%s)", jerr.text);
  }
  json_decref(chunk);
}

/* A whole (non-streamed) chat completion. */
static void tt_xfer_parse_body(tt_xfer *x) {
  json_t *doc = json_loadb(tt_buf_cstr(&x->body), x->body.len, 0, NULL);
  if (!doc) return;
  const json_t *error = json_object_get(doc, "error");
  if (error && !x->stream_error) {
    const char *msg = json_string_value(json_object_get(error, "message"));
    if (!msg) msg = json_string_value(error);
    x->stream_error = tt_xstrdup(msg ? msg : "an error object in the reply");
  }
  x->not_completion = !json_is_array(json_object_get(doc, "choices")) && !error;
  const json_t *choice = json_array_get(json_object_get(doc, "choices"), 0);
  const json_t *msg = json_object_get(choice, "message");
  tt_xfer_thinking(x, json_object_get(msg, "reasoning_content"));
  tt_xfer_thinking(x, json_object_get(msg, "reasoning"));
  const json_t *call = json_array_get(json_object_get(msg, "tool_calls"), 0);
  const json_t *legacy = json_object_get(msg, "function_call"); /* the pre-tools "functions" API */
  if (call || json_is_object(legacy)) {
    x->saw_tool = true;
    const char *id = json_string_value(json_object_get(call, "id"));
    if (id && *id) x->call_id = tt_xstrdup(id);
    const json_t *fn = call ? json_object_get(call, "function") : legacy;
    const char *name = json_string_value(json_object_get(fn, "name"));
    if (name) tt_buf_puts(&x->name, name);
    const json_t *args = json_object_get(fn, "arguments");
    if (json_is_string(args)) {
      tt_buf_append(&x->args, json_string_value(args), json_string_length(args));
    } else if (args) { /* some servers send an object */
      char *s = json_dumps(args, JSON_COMPACT | JSON_ENCODE_ANY);
      if (s) tt_buf_puts(&x->args, s);
      free(s);
    }
  }
  const json_t *content = json_object_get(msg, "content");
  if (json_is_string(content)) tt_buf_append(&x->text, json_string_value(content), json_string_length(content));
  const char *finish = json_string_value(json_object_get(choice, "finish_reason"));
  if (finish) x->finish = tt_xstrdup(finish);
  tt_xfer_usage(x, json_object_get(doc, "usage"), json_object_get(doc, "timings"));
  x->saw_done = choice != NULL;
  json_decref(doc);
}

/* ---- libcurl callbacks -------------------------------------------------- */

/* The value of a header line into out (printable, cut to cap). */
static void tt_header_value(const char *data, size_t n, size_t skip, char *out, size_t cap) {
  size_t i = skip, k = 0;
  while (i < n && (data[i] == ' ' || data[i] == '\t')) i++;
  while (i < n && data[i] != '\r' && data[i] != '\n' && k + 1 < cap)
    out[k++] = (unsigned char)data[i] < 0x20 ? ' ' : data[i], i++;
  out[k] = '\0';
}

static size_t tt_on_header(char *data, size_t size, size_t nitems, void *ud) {
  tt_xfer *x = ud;
  size_t n = size * nitems;
  x->last_byte_ms = tt_now_ms();
  if (n > 5 && strncmp(data, "HTTP/", 5) == 0) { /* a new status line */
    x->sse = false;
    x->retry_after_s = -1;
    x->ctype[0] = '\0';
    x->encoding[0] = '\0';
  } else if (n > 17 && strncasecmp(data, "content-encoding:", 17) == 0) {
    tt_header_value(data, n, 17, x->encoding, sizeof x->encoding);
    if (strcasecmp(x->encoding, "identity") == 0) x->encoding[0] = '\0';
  } else if (n > 13 && strncasecmp(data, "content-type:", 13) == 0) {
    x->sse = memmem(data, n, "text/event-stream", 17) != NULL;
    tt_header_value(data, n, 13, x->ctype, sizeof x->ctype);
  } else if (n > 12 && strncasecmp(data, "retry-after:", 12) == 0) {
    char tmp[32];
    size_t k = n - 12 < sizeof tmp - 1 ? n - 12 : sizeof tmp - 1;
    memcpy(tmp, data + 12, k);
    tmp[k] = '\0';
    x->retry_after_s = atof(tmp);
  }
  return n;
}

static size_t tt_on_body(char *data, size_t size, size_t nmemb, void *ud) {
  tt_xfer *x = ud;
  size_t n = size * nmemb;
  /* every byte counts against the cap, events or comments: the memory an
   * endpoint can make tabletalk hold is bounded */
  if (x->received + n > x->max_bytes) {
    x->too_big = true;
    return 0; /* aborts the transfer */
  }
  x->received += n;
  if (!x->sse) {
    x->last_byte_ms = tt_now_ms();
    tt_buf_append(&x->body, data, n);
    return n;
  }
  for (size_t i = 0; i < n; i++) {
    if (data[i] == '\n') {
      tt_xfer_sse_line(x, tt_buf_cstr(&x->line), x->line.len);
      tt_buf_reset(&x->line);
    } else {
      tt_buf_putc(&x->line, data[i]);
    }
  }
  return n;
}

/* Called by libcurl at least once a second, also while nothing arrives:
 * the cancel flag, and the idle limit measured here rather than with
 * CURLOPT_LOW_SPEED_TIME, whose speed is an average over the last seconds
 * (the request's own upload kept it "fast" for about five more seconds,
 * so --llm-timeout 2 gave up after 8 s). */
static int tt_on_progress(void *ud, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal,
                          curl_off_t ulnow) {
  (void)dltotal;
  (void)dlnow;
  (void)ultotal;
  (void)ulnow;
  tt_xfer *x = ud;
  if (x->call->cancel && *x->call->cancel) return 1;
  double now = tt_now_ms();
  if (x->idle_limit_ms > 0 && now - x->last_byte_ms > x->idle_limit_ms) {
    x->idle = true;
    return 1;
  }
  if (x->deadline_ms > 0 && now > x->deadline_ms) {
    x->overdue = true;
    return 1;
  }
  return 0;
}

/* ---- one attempt -------------------------------------------------------- */

typedef enum { TT_TRY_OK, TT_TRY_RETRY, TT_TRY_FAIL } tt_try;

/* A new reference to the parsed parameter schema text (an empty object
 * when it does not parse): kept on h, as a backend sends the same few
 * tools with every request; the kept values are never changed. */
static json_t *tt_http_params(tt_http *h, const char *text) {
  size_t i = 0;
  for (; i < TT_HTTP_PARAMS_KEPT && h->params[i].text; i++)
    if (strcmp(h->params[i].text, text) == 0) return json_incref(h->params[i].parsed);
  json_t *parsed = json_loads(text, 0, NULL);
  if (!parsed) parsed = json_object();
  if (i < TT_HTTP_PARAMS_KEPT) {
    h->params[i].text = tt_xstrdup(text);
    h->params[i].parsed = json_incref(parsed);
  }
  return parsed;
}

/* The tools array: every tool, or only the forced one. */
static json_t *tt_http_tools_json(tt_http *h, const tt_llm_call *call) {
  json_t *tools = json_array();
  for (size_t i = 0; i < call->ntools; i++) {
    const tt_tool_spec *t = &call->tools[i];
    if (call->force_tool && strcmp(t->name, call->force_tool) != 0) continue;
    json_t *fn = json_pack("{s:s,s:s,s:o}", "name", t->name, "description", t->description,
                           "parameters", tt_http_params(h, t->parameters));
    json_array_append_new(tools, json_pack("{s:s,s:o}", "type", "function", "function", fn));
  }
  return tools;
}

/* The request. A forced tool is asked for as "required" with only that tool
 * offered: llama-server turns a named tool_choice into "auto", and every
 * server that knows "required" then has one tool to call. */
static json_t *tt_http_request_json(tt_http *h, const tt_chat *chat, const tt_llm_call *call,
                                    long max_tokens) {
  const tt_http_quirks *q = &h->q;
  json_t *req = json_object();
  json_object_set_new(req, "model", json_string(h->model));
  /* a call's thought (its reasoning, or text around a call recovered from
   * text) stays here: servers get calls as clients send them, without
   * content, so a reasoning model's thoughts are not fed back as text */
  json_t *messages = tt_chat_to_json(chat);
  size_t i;
  json_t *m;
  json_array_foreach(messages, i, m)
    if (json_object_get(m, "tool_calls")) json_object_set_new(m, "content", json_null());
  json_object_set_new(req, "messages", messages);
  if (call->ntools) {
    json_object_set_new(req, "tools", tt_http_tools_json(h, call));
    json_object_set_new(req, "tool_choice", json_string(q->tool_choice_auto ? "auto" : "required"));
    if (!q->no_parallel) json_object_set_new(req, "parallel_tool_calls", json_false());
  }
  if (!q->no_temperature && !q->reasoning_model)
    json_object_set_new(req, "temperature", json_real(h->o.temperature));
  bool mct = q->max_completion || q->reasoning_model;
  json_object_set_new(req, mct ? "max_completion_tokens" : "max_tokens", json_integer(max_tokens));
  if (h->o.has_seed && !q->no_seed) json_object_set_new(req, "seed", json_integer(h->o.seed));
  json_object_set_new(req, "stream", json_boolean(h->o.stream));
  if (h->o.stream && !q->no_stream_options)
    json_object_set_new(req, "stream_options", json_pack("{s:b}", "include_usage", 1));
  return req;
}

/* The request's body: compact JSON, written by tt_json_dump (several times
 * faster than json_dumps on a prompt of thousands of bytes; invisible and
 * bidi characters go as \u escapes, the same strings to the server). */
static char *tt_http_body(tt_http *h, const tt_chat *chat, const tt_llm_call *call,
                          long max_tokens) {
  json_t *req = tt_http_request_json(h, chat, call, max_tokens);
  tt_buf b = TT_BUF_INIT;
  tt_json_dump(&b, req, JSON_COMPACT);
  json_decref(req);
  return tt_buf_detach(&b);
}

/* OpenAI's reasoning models, by name: o1, o3, o4 (and their -mini...), the
 * gpt-5 family; "openai/" and similar prefixes allowed. They take
 * max_completion_tokens and only the default temperature. */
bool tt_llm_http_is_reasoning_model(const char *model) {
  if (!model) return false;
  const char *slash = strrchr(model, '/');
  const char *m = slash ? slash + 1 : model;
  if ((m[0] == 'o' || m[0] == 'O') && (m[1] == '1' || m[1] == '3' || m[1] == '4') &&
      (m[2] == '\0' || m[2] == '-' || m[2] == ':'))
    return true;
  return strncasecmp(m, "gpt-5", 5) == 0 && strncasecmp(m, "gpt-5-chat", 10) != 0;
}

static void tt_xfer_free(tt_xfer *x) {
  tt_buf_free(&x->body);
  tt_buf_free(&x->line);
  tt_buf_free(&x->text);
  tt_buf_free(&x->args);
  tt_buf_free(&x->name);
  tt_buf_free(&x->thinking);
  free(x->call_id);
  free(x->finish);
  free(x->stream_error);
  free(x->bad_event);
  tt_argstream_free(x->as);
}

/* The body starts like an HTML page. */
static bool tt_body_is_html(const tt_xfer *x) {
  if (strcasestr(x->ctype, "html")) return true;
  const char *p = x->body.data ? x->body.data : "";
  while (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n') p++;
  return *p == '<';
}

/* ' "Sign in"' for a page titled so (escaped, short), or "". */
static void tt_html_title(const tt_buf *body, tt_buf *out) {
  const char *t = body->data ? strcasestr(body->data, "<title") : NULL;
  const char *start = t ? strchr(t, '>') : NULL;
  const char *end = start ? strcasestr(start, "</title") : NULL;
  if (!end) return;
  start++;
  while (start < end && (*start == ' ' || *start == '\n' || *start == '\r' || *start == '\t')) start++;
  if (start == end) return;
  tt_buf_puts(out, " \"");
  tt_escape_terminal(out, start, (size_t)(end - start), &(tt_escape_opts){.max_chars = 80});
  tt_buf_puts(out, "\"");
}

/* A 200 reply that is not an API's JSON: an HTML page (a proxy's error or
 * sign-in page, a web server at the wrong path) or other content; also
 * JSON that is not a chat completion. False when it is none of those. */
static bool tt_reply_not_api(const tt_http *h, tt_xfer *x, tt_error *err) {
  if (x->encoding[0]) { /* tabletalk asks for none: the bytes are not text */
    tt_llm_set_error(err, TT_ERR_PROTOCOL, (int)x->status,
                     "the model endpoint %s answered with %s-compressed content (Content-Encoding: "
                     "%s) that it was not asked for; a proxy in between may be rewriting replies: "
                     "check the URL or the proxy", h->url, x->encoding, x->encoding);
    return true;
  }
  if (x->sse) return false;
  const char *type = x->ctype[0] ? x->ctype : "no content type";
  if (tt_body_is_html(x)) {
    tt_buf title = TT_BUF_INIT;
    tt_html_title(&x->body, &title);
    tt_llm_set_error(err, TT_ERR_PROTOCOL, (int)x->status,
                     "the model endpoint %s answered with an HTML page%s (HTTP %ld, %s), not an "
                     "OpenAI-compatible API: check the URL, it usually ends in /v1",
                     h->url, tt_buf_cstr(&title), x->status, type);
    tt_buf_free(&title);
    return true;
  }
  json_error_t jerr;
  json_t *doc = json_loadb(tt_buf_cstr(&x->body), x->body.len, 0, &jerr);
  json_decref(doc);
  size_t bad;
  if (!doc && x->body.len && !tt_utf8_valid(x->body.data, x->body.len, &bad)) {
    tt_llm_set_error(err, TT_ERR_PROTOCOL, (int)x->status,
                     "the model endpoint %s answered with bytes that are not valid UTF-8 (0x%02X "
                     "at offset %zu; HTTP %ld, %s), so not with an API's JSON: check the URL",
                     h->url, (unsigned)(unsigned char)x->body.data[bad], bad, x->status, type);
    return true;
  }
  if (!doc) {
    tt_llm_set_error(err, TT_ERR_PROTOCOL, (int)x->status,
                     "the model endpoint %s answered with %s (HTTP %ld, %s), not the JSON of an "
                     "OpenAI-compatible API: check the URL, it usually ends in /v1",
                     h->url, x->body.len ? "content that is not JSON" : "an empty body", x->status, type);
    return true;
  }
  return false;
}

/* The message of an error document: {"error": {"message": ..}} (OpenAI,
 * llama-server, Ollama, newer vLLM), {"error": ".."}, or the older vLLM
 * {"object": "error", "message": ..}. NULL when none. */
static const char *tt_error_message(const json_t *doc) {
  const json_t *err = json_object_get(doc, "error");
  const char *msg = json_string_value(json_object_get(err, "message"));
  if (!msg) msg = json_string_value(err);
  if (!msg) msg = json_string_value(json_object_get(doc, "message"));
  return msg;
}

/* The error message of an error body, or a short excerpt of it. */
static void tt_error_detail(const tt_buf *body, char *out, size_t cap) {
  json_t *doc = json_loadb(body->data ? body->data : "", body->len, 0, NULL);
  const char *msg = tt_error_message(doc);
  tt_buf safe = TT_BUF_INIT;
  if (msg) {
    tt_escape_terminal(&safe, msg, strlen(msg), &(tt_escape_opts){.max_chars = 300});
  } else if (body->data && (strcasestr(body->data, "<html") || strcasestr(body->data, "<!doctype html"))) {
    tt_buf_puts(&safe, "an HTML page");
    tt_html_title(body, &safe);
  } else if (body->len) {
    tt_escape_terminal(&safe, body->data, body->len, &(tt_escape_opts){.max_chars = 200});
  }
  snprintf(out, cap, "%s", safe.len ? tt_buf_cstr(&safe) : "no details");
  tt_buf_free(&safe);
  json_decref(doc);
}

/* s contains needle, ignoring case. */
static bool tt_has(const char *s, const char *needle) { return s && strcasestr(s, needle) != NULL; }

/* The endpoint cannot serve tabletalk as configured (retrying will not help):
 * llama-server without --jinja answers 500 for a request with tools. */
static bool tt_error_is_setup(const char *detail) {
  return tt_has(detail, "--jinja") || tt_has(detail, "tool-call-parser") ||
         tt_has(detail, "enable-auto-tool-choice");
}

static bool tt_error_is_context(const char *detail) {
  return tt_has(detail, "context length") || tt_has(detail, "context size") ||
         tt_has(detail, "context window") || tt_has(detail, "context_length_exceeded") ||
         tt_has(detail, "exceed_context") || tt_has(detail, "too many tokens");
}

/* What to do about an HTTP error, matched to what it says. */
static const char *tt_http_status_hint(long status, const char *detail) {
  if (tt_has(detail, "--jinja"))
    return "; start llama-server with --jinja (without it, it takes no tools)";
  if (tt_has(detail, "tool-call-parser") || tt_has(detail, "enable-auto-tool-choice"))
    return "; start vLLM with --enable-auto-tool-choice --tool-call-parser hermes (Qwen models; "
           "see docs/guide/servers.md)";
  if (tt_error_is_context(detail))
    return "; the conversation does not fit the model's context: raise the server's context "
           "(llama-server -c, vLLM --max-model-len, Ollama num_ctx) or lower --schema-budget";
  if (tt_has(detail, "tool_choice") || tt_has(detail, "tool choice"))
    return "; the endpoint may not support tool calls with tool_choice \"required\" "
           "(`tabletalk doctor --base-url URL` shows what it supports)";
  if (tt_has(detail, "model") && (tt_has(detail, "not found") || tt_has(detail, "does not exist") ||
                                  tt_has(detail, "not exist") || tt_has(detail, "no such model")))
    return "; check --model (GET /v1/models lists the names the endpoint serves)";
  switch (status) {
  case 401:
  case 403: return "; check the API key (--api-key-env, TABLETALK_API_KEY)";
  case 404: return "; check --base-url (it usually ends in /v1) and --model";
  case 429: return "; the endpoint is limiting the request rate";
  case 400:
    return "; the endpoint refused the request (`tabletalk doctor --base-url URL` probes what it "
           "supports)";
  default: return "";
  }
}

/* libcurl and the handle, on the first request rather than when the
 * backend is made: loading libcurl (and the thirty libraries it pulls in)
 * is the longest part of an agent's start, and runs in the preload thread
 * (tt_llm_http_preload) while the thread store, the trace and the prompt
 * are got ready here. */
static bool tt_http_ready(tt_http *h, tt_error *err) {
  if (h->curl) return true;
  const tt_curl_api *api = tt_curl_api_get(err);
  if (!api) return false;
  h->curl_api = api;
  h->curl = api->easy_init();
  if (!h->curl) {
    tt_llm_set_error(err, TT_ERR_UNAVAILABLE, 0, "cannot initialise libcurl");
    return false;
  }
  return true;
}

static tt_try tt_http_attempt(tt_http *h, const char *body, size_t body_len,
                              const tt_llm_call *call, tt_xfer *x, tt_error *err) {
  if (!tt_http_ready(h, err)) return TT_TRY_FAIL;
  CURL *c = h->curl;
  h->curl_api->easy_reset(c);
  struct curl_slist *headers = NULL;
  headers = h->curl_api->slist_append(headers, "Content-Type: application/json");
  headers = h->curl_api->slist_append(headers, h->o.stream ? "Accept: text/event-stream" : "Accept: application/json");
  char *auth = NULL;
  if (h->api_key) {
    auth = tt_xasprintf("Authorization: Bearer %s", h->api_key);
    headers = h->curl_api->slist_append(headers, auth);
  }
  x->call = call;
  x->retry_after_s = -1;
  x->idle_limit_ms = h->o.read_timeout_s * 1000.0;
  x->last_byte_ms = tt_now_ms();
  h->curl_api->easy_setopt(c, CURLOPT_URL, h->url);
  h->curl_api->easy_setopt(c, CURLOPT_POST, 1L);
  h->curl_api->easy_setopt(c, CURLOPT_POSTFIELDS, body);
  h->curl_api->easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)body_len);
  h->curl_api->easy_setopt(c, CURLOPT_HTTPHEADER, headers);
  h->curl_api->easy_setopt(c, CURLOPT_HEADERFUNCTION, tt_on_header);
  h->curl_api->easy_setopt(c, CURLOPT_HEADERDATA, x);
  h->curl_api->easy_setopt(c, CURLOPT_WRITEFUNCTION, tt_on_body);
  h->curl_api->easy_setopt(c, CURLOPT_WRITEDATA, x);
  h->curl_api->easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
  h->curl_api->easy_setopt(c, CURLOPT_XFERINFOFUNCTION, tt_on_progress);
  h->curl_api->easy_setopt(c, CURLOPT_XFERINFODATA, x);
  h->curl_api->easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
  h->curl_api->easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, (long)(h->o.connect_timeout_s * 1000));
  h->curl_api->easy_setopt(c, CURLOPT_USERAGENT, "tabletalk");
  CURLcode rc = h->curl_api->easy_perform(c);
  h->curl_api->easy_getinfo(c, CURLINFO_RESPONSE_CODE, &x->status);
  h->curl_api->slist_free_all(headers);
  free(auth);
  if (x->line.len) { /* a last event without its newline */
    tt_xfer_sse_line(x, tt_buf_cstr(&x->line), x->line.len);
    tt_buf_reset(&x->line);
  }

  if (rc == CURLE_ABORTED_BY_CALLBACK && x->idle) {
    tt_llm_set_error(err, TT_ERR_TIMEOUT, 0,
                     x->status ? "the model endpoint %s stopped sending for %g s (the --llm-timeout; "
                                 "raise it if the model is slow)"
                               : "the model endpoint %s did not answer within %g s (the --llm-timeout; "
                                 "raise it if the model is slow)",
                     h->url, h->o.read_timeout_s);
    return TT_TRY_FAIL;
  }
  if (rc == CURLE_ABORTED_BY_CALLBACK && x->overdue) {
    tt_llm_set_error(err, TT_ERR_TIMEOUT, 0,
                     "the model endpoint %s did not finish its reply within %g s (the "
                     "--llm-deadline for one model call; raise it if the model is that slow)",
                     h->url, h->o.deadline_s);
    return TT_TRY_FAIL;
  }
  if (rc == CURLE_ABORTED_BY_CALLBACK) {
    tt_llm_set_error(err, TT_ERR_CANCELLED, 0, "cancelled");
    return TT_TRY_FAIL;
  }
  if (rc == CURLE_OPERATION_TIMEDOUT) { /* the connect timeout */
    tt_llm_set_error(err, TT_ERR_CONNECT, 0,
                     "cannot reach the model endpoint %s: no connection within %g s; check "
                     "--base-url or TABLETALK_BASE_URL and that the server is running",
                     h->url, h->o.connect_timeout_s);
    return TT_TRY_RETRY;
  }
  if (x->too_big) {
    tt_llm_set_error(err, TT_ERR_PROTOCOL, 0,
                     "the reply from %s passed the %.1f MiB the model's replies may still take "
                     "(an endless or runaway stream); lower --max-tokens, or check the endpoint",
                     h->url, (double)x->budget / (1 << 20));
    return TT_TRY_FAIL;
  }
  if (rc != CURLE_OK && x->status == 0) {
    tt_llm_set_error(err, TT_ERR_CONNECT, 0,
                     "cannot reach the model endpoint %s (%s); check --base-url or "
                     "TABLETALK_BASE_URL and that the server is running",
                     h->url, h->curl_api->easy_strerror(rc));
    return TT_TRY_RETRY;
  }
  if (x->status != 200) {
    char detail[400];
    tt_error_detail(&x->body, detail, sizeof detail);
    tt_llm_set_error(err, TT_ERR_HTTP, (int)x->status, "the model endpoint answered HTTP %ld: %s%s",
                     x->status, detail, tt_http_status_hint(x->status, detail));
    bool retry = (x->status == 429 || x->status == 408 || x->status >= 500) && !tt_error_is_setup(detail) &&
                 !tt_error_is_context(detail);
    return retry ? TT_TRY_RETRY : TT_TRY_FAIL;
  }
  if (tt_reply_not_api(h, x, err)) return TT_TRY_FAIL;
  if (!x->sse) tt_xfer_parse_body(x);
  if (x->bad_event) {
    tt_llm_set_error(err, TT_ERR_PROTOCOL, 200, "the model endpoint %s sent %s", h->url,
                     x->bad_event);
    return TT_TRY_RETRY;
  }
  if (x->stream_error) {
    tt_llm_set_error(err, TT_ERR_PROTOCOL, 200, "the model endpoint reported an error: %s",
                     x->stream_error);
    return TT_TRY_RETRY;
  }
  if (x->not_completion) {
    tt_llm_set_error(err, TT_ERR_PROTOCOL, 200,
                     "the model endpoint %s answered with JSON that is not a chat completion (no "
                     "\"choices\"): check the URL, it usually ends in /v1", h->url);
    return TT_TRY_FAIL;
  }
  if (rc != CURLE_OK || !(x->saw_done || x->finish)) {
    tt_llm_set_error(err, TT_ERR_PROTOCOL, 200,
                     "the reply from %s ended before it was complete (%s)", h->url,
                     rc != CURLE_OK ? h->curl_api->easy_strerror(rc) : "no end of stream");
    return TT_TRY_RETRY;
  }
  bool cut = x->finish && strcmp(x->finish, "length") == 0; /* the caller decides */
  if (!x->saw_tool && x->text.len == 0 && !cut) {
    tt_llm_set_error(err, TT_ERR_PROTOCOL, 200,
                     x->thinking.len ? "the model returned only its reasoning, neither a tool call "
                                       "nor any text (finish_reason %s)"
                                     : "the model returned neither a tool call nor any text "
                                       "(finish_reason %s)",
                     x->finish ? x->finish : "none");
    return TT_TRY_FAIL;
  }
  return TT_TRY_OK;
}

/* Sleeps up to s seconds; false when cancelled meanwhile. */
static bool tt_sleep_unless_cancelled(double s, volatile sig_atomic_t *cancel) {
  double end = tt_now_ms() + s * 1000.0;
  while (tt_now_ms() < end) {
    if (cancel && *cancel) return false;
    struct timespec ts = {0, 20 * 1000 * 1000};
    nanosleep(&ts, NULL);
  }
  return !(cancel && *cancel);
}

/* ---- a reply from what was received ------------------------------------- */

static void tt_join(tt_buf *b, const char *s, size_t n) {
  if (!n) return;
  if (b->len) tt_buf_puts(b, "\n\n");
  tt_buf_append(b, s, n);
}

/* The reply was cut at the token limit: finish_reason "length", and not a
 * whole tool call (arguments that parse as an object were finished). */
static bool tt_xfer_cut(const tt_xfer *x) {
  if (!x->finish || strcmp(x->finish, "length") != 0) return false;
  if (!x->saw_tool) return true;
  json_t *args = json_loadb(x->args.data ? x->args.data : "", x->args.len, 0, NULL);
  bool whole = json_is_object(args);
  json_decref(args);
  return !whole;
}

static void tt_cut_error(const tt_http *h, long max_tokens, bool widened, tt_error *err) {
  tt_llm_set_error(err, TT_ERR_PROTOCOL, 200,
                   "the model's reply was cut at the token limit (finish_reason \"length\" at "
                   "%s %ld%s): raise --max-tokens; if the server's context is full instead, raise "
                   "it (llama-server -c, Ollama num_ctx, vLLM --max-model-len) or lower "
                   "--schema-budget", h->q.max_completion || h->q.reasoning_model
                                          ? "max_completion_tokens" : "max_tokens",
                   max_tokens, widened ? ", already retried with twice the room" : "");
}

/* Fills out from a complete attempt: the tool call (from tool_calls, or
 * recovered from the text), or the text; reasoning and the text around a
 * call go to thinking. False with err when only reasoning came. */
static bool tt_xfer_reply(tt_http *h, tt_xfer *x, const tt_llm_call *call, tt_llm_reply *out,
                          tt_error *err) {
  tt_buf thinking = TT_BUF_INIT, inline_thought = TT_BUF_INIT, text = TT_BUF_INIT;
  tt_buf_append(&thinking, x->thinking.data ? x->thinking.data : "", x->thinking.len);
  tt_text_split_thinking(tt_buf_cstr(&x->text), &inline_thought, &text);
  tt_join(&thinking, inline_thought.data, inline_thought.len);
  char *name = NULL, *args = NULL;
  tt_buf rest = TT_BUF_INIT;
  if (x->saw_tool) {
    tt_join(&thinking, text.data, text.len); /* what it wrote before its call */
    out->is_tool = true;
    out->tool_name = tt_buf_detach(&x->name);
    out->tool_args = tt_buf_detach(&x->args);
  } else if (tt_text_find_call(tt_buf_cstr(&text), call->tools, call->ntools, &name, &args, &rest)) {
    tt_join(&thinking, rest.data, rest.len);
    out->is_tool = out->call_from_text = true;
    out->tool_name = name;
    out->tool_args = args;
    if (x->streamed_text && call->on_restart) call->on_restart(call->ud);
  } else if (text.len) {
    out->text = tt_buf_detach(&text);
  }
  bool ok = out->is_tool || out->text;
  if (out->is_tool)
    out->call_id = x->call_id ? tt_xstrdup(x->call_id) : tt_xasprintf("call_%ld", ++h->next_call_id);
  if (!ok)
    tt_llm_set_error(err, TT_ERR_PROTOCOL, 200,
                     "the model returned only its reasoning, neither a tool call nor any text");
  out->thinking = thinking.len ? tt_buf_detach(&thinking) : NULL;
  out->finish_reason = x->finish ? tt_xstrdup(x->finish) : NULL;
  out->usage = x->usage;
  tt_buf_free(&thinking);
  tt_buf_free(&inline_thought);
  tt_buf_free(&text);
  tt_buf_free(&rest);
  return ok;
}

/* ---- adapting to what the endpoint refuses ------------------------------- */

static void tt_http_note(tt_http *h, const char *what) {
  if (h->notes.len) tt_buf_puts(&h->notes, "; ");
  tt_buf_puts(&h->notes, what);
}

/* The refused parameter of a 400 error (its "param", else named in the
 * message), as one of names; NULL when none. */
static const char *tt_refused_param(const char *param, const char *msg) {
  static const char *const names[] = {"max_tokens", "temperature", "parallel_tool_calls", "seed",
                                      "stream_options", "tool_choice"};
  for (size_t i = 0; i < sizeof names / sizeof *names; i++)
    if ((param && strcmp(param, names[i]) == 0)) return names[i];
  for (size_t i = 0; i < sizeof names / sizeof *names; i++)
    if (tt_has(msg, names[i])) return names[i];
  return NULL;
}

/* Turns off what the endpoint says it does not support; true when there was
 * something left to turn off. */
static bool tt_http_drop_param(tt_http *h, const char *p) {
  tt_http_quirks *q = &h->q;
  bool *flag = NULL;
  const char *note = NULL;
  if (strcmp(p, "max_tokens") == 0 && !q->reasoning_model) {
    flag = &q->max_completion;
    note = "sends max_completion_tokens instead of max_tokens (the endpoint refused max_tokens)";
  } else if (strcmp(p, "temperature") == 0 && !q->reasoning_model) {
    flag = &q->no_temperature;
    note = "sends no temperature (the endpoint refused it)";
  } else if (strcmp(p, "parallel_tool_calls") == 0) {
    flag = &q->no_parallel;
    note = "sends no parallel_tool_calls (the endpoint refused it)";
  } else if (strcmp(p, "seed") == 0) {
    flag = &q->no_seed;
    note = "sends no seed (the endpoint refused it)";
  } else if (strcmp(p, "stream_options") == 0) {
    flag = &q->no_stream_options;
    note = "asks for no usage in streams (the endpoint refused stream_options)";
  } else if (strcmp(p, "tool_choice") == 0) {
    flag = &q->tool_choice_auto;
    note = "asks with tool_choice \"auto\" (the endpoint refused \"required\"; a reply in plain "
           "text is pushed back once)";
  }
  if (!flag || *flag) return false;
  *flag = true;
  tt_http_note(h, note);
  return true;
}

/* vLLM counts max_tokens in the context: "maximum context length is N
 * tokens. However, you requested T tokens (M in the messages, ...)". The
 * reply then gets the room that is left, once per call. */
static bool tt_http_fit_context(const char *msg, long *max_tokens, bool *fitted) {
  const char *a = msg ? strstr(msg, "maximum context length is ") : NULL;
  const char *b = msg ? strstr(msg, " in the messages") : NULL;
  if (*fitted || !a || !b) return false;
  long limit = strtol(a + 26, NULL, 10);
  const char *m = b;
  while (m > msg && m[-1] >= '0' && m[-1] <= '9') m--;
  long used = strtol(m, NULL, 10);
  long room = limit - used;
  if (room < 64 || room >= *max_tokens) return false;
  *max_tokens = room;
  *fitted = true;
  return true;
}

/* A 400 that the request can be changed to pass: a parameter the endpoint
 * does not support, or a reply that does not fit what is left of the
 * context. Each change is made once (parameters: for the rest of the
 * session). */
static bool tt_http_adapt(tt_http *h, const tt_buf *body, long *max_tokens, bool *fitted) {
  json_t *doc = json_loadb(body->data ? body->data : "", body->len, 0, NULL);
  const json_t *e = json_object_get(doc, "error");
  if (!json_is_object(e)) e = doc; /* the older vLLM shape */
  const char *msg = tt_error_message(doc);
  const char *param = json_string_value(json_object_get(e, "param"));
  const char *code = json_string_value(json_object_get(e, "code"));
  bool unsupported = tt_has(code, "unsupported") || tt_has(msg, "unsupported") ||
                     tt_has(msg, "not supported") || tt_has(msg, "does not support") ||
                     tt_has(msg, "not allowed") || tt_has(msg, "unrecognized");
  const char *p = unsupported ? tt_refused_param(param, msg) : NULL;
  bool changed = p ? tt_http_drop_param(h, p) : tt_http_fit_context(msg, max_tokens, fitted);
  json_decref(doc);
  return changed;
}

/* ---- one call -------------------------------------------------------------- */

static bool tt_http_chat(void *impl, const tt_chat *chat, const tt_llm_call *call,
                         tt_llm_reply *out, tt_error *err) {
  tt_http *h = impl;
  long max_tokens = h->o.max_tokens;
  char *body = tt_http_body(h, chat, call, max_tokens);
  double t0 = tt_now_ms();
  size_t budget = call->max_reply_bytes ? call->max_reply_bytes : TT_HTTP_MAX_BODY;
  size_t received = 0;
  int attempts = 0, retries = 0;
  bool ok = false, widened = false, fitted = false;
  for (;;) {
    attempts++;
    tt_xfer x = {.max_bytes = budget - received, .budget = budget,
                 .deadline_ms = h->o.deadline_s > 0 ? t0 + h->o.deadline_s * 1000.0 : 0};
    tt_try r = tt_http_attempt(h, body, strlen(body), call, &x, err);
    received += x.received;
    bool again_now = false; /* a changed request, sent without waiting */
    /* a text reply cut at the limit is the caller's to read when it asks */
    bool keep_cut = call->allow_cut && !x.saw_tool;
    if (r == TT_TRY_OK && !keep_cut && tt_xfer_cut(&x)) {
      again_now = !widened && max_tokens < TT_HTTP_MAX_TOKENS_CAP;
      tt_cut_error(h, max_tokens, widened, err);
      if (again_now) {
        widened = true;
        max_tokens = max_tokens * 2 < TT_HTTP_MAX_TOKENS_CAP ? max_tokens * 2 : TT_HTTP_MAX_TOKENS_CAP;
      }
      r = TT_TRY_FAIL;
    } else if (r == TT_TRY_OK) {
      ok = tt_xfer_reply(h, &x, call, out, err);
    } else if (r == TT_TRY_FAIL && x.status == 400) {
      again_now = tt_http_adapt(h, &x.body, &max_tokens, &fitted);
    }
    bool streamed = x.streamed_text || (x.as != NULL);
    double retry_after = x.retry_after_s;
    tt_xfer_free(&x);
    if (ok || received >= budget) break;
    if (streamed && (again_now || r == TT_TRY_RETRY) && call->on_restart) call->on_restart(call->ud);
    if (again_now) {
      free(body);
      body = tt_http_body(h, chat, call, max_tokens);
      continue;
    }
    if (r != TT_TRY_RETRY || ++retries > h->o.max_retries) break;
    double delay = h->o.backoff_s * pow(2.0, retries - 1);
    if (retry_after >= 0) delay = retry_after < 30 ? retry_after : 30;
    if (h->o.deadline_s > 0 && tt_now_ms() + delay * 1000.0 > t0 + h->o.deadline_s * 1000.0)
      break; /* no time left for another attempt */
    if (!tt_sleep_unless_cancelled(delay, call->cancel)) {
      tt_llm_set_error(err, TT_ERR_CANCELLED, 0, "cancelled");
      break;
    }
  }
  if (!ok && err && err->kind != TT_ERR_CANCELLED && attempts > 1) {
    size_t len = strlen(err->message);
    snprintf(err->message + len, sizeof err->message - len, " (after %d attempts over %.1f s)", attempts,
             (tt_now_ms() - t0) / 1000.0);
  }
  out->attempts = attempts;
  out->bytes = received;
  out->latency_ms = tt_now_ms() - t0;
  free(body);
  return ok;
}

static const char *tt_http_model(const void *impl) { return ((const tt_http *)impl)->model; }

static void tt_http_free(void *impl) {
  tt_http *h = impl;
  if (!h) return;
  if (h->curl) h->curl_api->easy_cleanup(h->curl);
  free(h->url);
  free(h->api_key);
  free(h->model);
  free(h->embed_url);
  free(h->embed_model);
  tt_buf_free(&h->notes);
  for (size_t i = 0; i < TT_HTTP_PARAMS_KEPT; i++) {
    free(h->params[i].text);
    json_decref(h->params[i].parsed);
  }
  free(h);
}

/* ---- embeddings (http_embed.c) ---------------------------------------------- */

static bool tt_http_embed(void *impl, const char *const *texts, size_t n,
                          volatile sig_atomic_t *cancel, tt_embeddings *out, tt_error *err) {
  tt_http *h = impl;
  if (h->embed_missing) {
    tt_llm_set_error(err, TT_ERR_UNAVAILABLE, 0, "%s offers no embeddings for %s", h->embed_url,
                     h->embed_model);
    return false;
  }
  if (!tt_http_ready(h, err)) return false;
  tt_http_embed_req q = {.api = h->curl_api, .curl = h->curl, .url = h->embed_url,
                         .api_key = h->api_key, .model = h->embed_model,
                         .connect_timeout_s = h->o.connect_timeout_s,
                         .read_timeout_s = h->o.read_timeout_s, .cancel = cancel};
  bool missing = false;
  bool ok = tt_http_embed_run(&q, texts, n, out, &missing, err);
  if (missing) {
    h->embed_missing = true;
    tt_http_note(h, "offers no embeddings (/embeddings) for its embedding model");
  }
  return ok;
}

static char *tt_http_embed_identity(const void *impl) {
  const tt_http *h = impl;
  return h->embed_missing ? NULL : tt_xasprintf("endpoint %s %s", h->embed_url, h->embed_model);
}

static const tt_profile *tt_http_profile(const void *impl) { return ((const tt_http *)impl)->profile; }

/* The server's context when told (--ctx); its tokenizer is unknown here, so
 * token counts are the layer's estimates. */
static long tt_http_context(const void *impl) { return ((const tt_http *)impl)->o.context; }

static long tt_http_max_tokens(const void *impl) { return ((const tt_http *)impl)->o.max_tokens; }

static const tt_llm_vtable tt_http_vtable = {
    .name = "openai-http",
    .chat = tt_http_chat,
    .model = tt_http_model,
    .profile = tt_http_profile,
    .free = tt_http_free,
    .context = tt_http_context,
    .max_tokens = tt_http_max_tokens,
    .parallel = true,
    .embed = tt_http_embed,
    .embed_identity = tt_http_embed_identity,
};

const char *tt_llm_http_notes(const tt_llm *llm) {
  if (!llm || llm->vt != &tt_http_vtable) return NULL;
  const tt_http *h = llm->impl;
  return h->notes.data ? h->notes.data : "";
}

/* The host[:port] part of an http(s) URL is sound: a name, an IPv4 or a
 * bracketed IPv6 address, and a port from 1 to 65535. */
static bool tt_url_authority_ok(const char *p, size_t n, tt_error *err) {
  const char *at = memchr(p, '@', n); /* user:password@ */
  if (at) {
    n -= (size_t)(at + 1 - p);
    p = at + 1;
  }
  size_t host_len = n;
  const char *port = NULL;
  if (n && *p == '[') {
    const char *close = memchr(p, ']', n);
    if (!close || close == p + 1) {
      tt_error_set(err, TT_ERR_CONFIG, "its IPv6 address lacks the closing ]");
      return false;
    }
    host_len = (size_t)(close + 1 - p);
    if (host_len < n && p[host_len] != ':') {
      tt_error_set(err, TT_ERR_CONFIG, "after the ] of the address only :PORT may follow");
      return false;
    }
  } else {
    for (size_t i = 0; i < n; i++) {
      unsigned char c = (unsigned char)p[i];
      if (c == ':') {
        host_len = i;
        break;
      }
      if (!isalnum(c) && c != '.' && c != '-' && c != '_' && c < 0x80) {
        tt_error_set(err, TT_ERR_CONFIG, "its host name has a '%c'", c);
        return false;
      }
    }
  }
  if (host_len == 0) {
    tt_error_set(err, TT_ERR_CONFIG, "it names no host");
    return false;
  }
  if (host_len < n) port = p + host_len + 1;
  if (port) {
    size_t plen = n - host_len - 1;
    long v = 0;
    for (size_t i = 0; i < plen && v <= 65535; i++) v = isdigit((unsigned char)port[i]) ? v * 10 + (port[i] - '0') : 99999;
    if (!plen || v < 1 || v > 65535) {
      tt_error_set(err, TT_ERR_CONFIG, "its port '%.*s' is not a number from 1 to 65535",
                   (int)(plen < 20 ? plen : 20), port);
      return false;
    }
  }
  return true;
}

bool tt_llm_http_url_ok(const char *url, tt_error *err) {
  size_t scheme = strncasecmp(url, "http://", 7) == 0 ? 7 : strncasecmp(url, "https://", 8) == 0 ? 8 : 0;
  if (!scheme) {
    tt_error_set(err, TT_ERR_CONFIG, "it must start with http:// or https://");
    return false;
  }
  for (const char *c = url; *c; c++)
    if ((unsigned char)*c <= ' ' || *c == 0x7f) {
      tt_error_set(err, TT_ERR_CONFIG, "%s",
                   *c == ' ' ? "it contains a space" : "it contains a control character");
      return false;
    }
  const char *host = url + scheme;
  return tt_url_authority_ok(host, strcspn(host, "/?#"), err);
}

tt_llm *tt_llm_http_new(const tt_llm_http_opts *opts, tt_error *err) {
  if (!opts->base_url || !*opts->base_url) {
    tt_llm_set_error(err, TT_ERR_CONFIG, 0,
                     "no model endpoint configured: give --base-url or set TABLETALK_BASE_URL");
    return NULL;
  }
  tt_error bad;
  if (!tt_llm_http_url_ok(opts->base_url, &bad)) {
    tt_llm_set_error(err, TT_ERR_CONFIG, 0,
                     "the base URL '%s' is not usable: %s (e.g. http://127.0.0.1:8080/v1)", opts->base_url,
                     bad.message);
    return NULL;
  }
  const tt_profile *profile = NULL;
  if (opts->profile) {
    profile = tt_profile_by_name(opts->profile);
    if (!profile) {
      tt_llm_set_error(err, TT_ERR_CONFIG, 0, "there is no model profile \"%s\"; choose one of %s",
                       opts->profile, tt_llm_profile_names());
      return NULL;
    }
  } else {
    /* the server renders the prompt; only an SQL writer changes what tabletalk does */
    const tt_profile *p = tt_profile_detect(NULL, opts->model, NULL);
    if (p->sql_writer) profile = p;
  }
  tt_http *h = tt_xcalloc(1, sizeof *h);
  h->o = *opts;
  h->profile = profile;
  size_t n = strlen(opts->base_url);
  while (n && opts->base_url[n - 1] == '/') n--;
  char *base = tt_xstrndup(opts->base_url, n);
  h->url = tt_has_prefix(base + (n > 17 ? n - 17 : 0), "/chat/completions") && n >= 17
               ? tt_xstrdup(base)
               : tt_xasprintf("%s/chat/completions", base);
  /* /v1/embeddings beside /v1/chat/completions */
  size_t root = strlen(h->url) - strlen("/chat/completions");
  h->embed_url = tt_xasprintf("%.*s/embeddings", (int)root, h->url);
  h->embed_model = tt_xstrdup(opts->embed_model && *opts->embed_model ? opts->embed_model
                              : opts->model && *opts->model         ? opts->model
                                                                    : "default");
  free(base);
  h->api_key = opts->api_key && *opts->api_key ? tt_xstrdup(opts->api_key) : NULL;
  h->model = tt_xstrdup(opts->model && *opts->model ? opts->model : "default");
  h->q.reasoning_model = tt_llm_http_is_reasoning_model(h->model);
  if (h->q.reasoning_model)
    tt_http_note(h, "sends max_completion_tokens and no temperature (an OpenAI reasoning model, "
                    "by its name)");
  return tt_llm_wrap(&tt_http_vtable, h); /* libcurl comes with the first request */
}
