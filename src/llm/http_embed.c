/* http_embed.c — embeddings from an OpenAI-compatible endpoint's
 * /v1/embeddings: texts sent TT_EMBED_BATCH to a request as {"model",
 * "input": [...], "encoding_format": "float"}, the reply's data[].embedding
 * put back in the order of data[].index; each request bounded in time (the
 * read timeout, and what is left of TT_EMBED_DEADLINE_S for the call) and
 * in bytes. An endpoint that has no such route (404, 405, 501) or refuses
 * the model for embeddings (a 400 or 422 that says so) is reported as
 * missing, so that the backend stops asking (http.c). No retries: the
 * score is optional, and the question goes on without it. */
#define _GNU_SOURCE /* strcasestr */
#include "llm/llm_internal.h"

#include "llm/curl_api.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define TT_EMBED_REPLY_MAX ((size_t)48 << 20)

typedef struct tt_embed_xfer {
  tt_buf body;
  size_t max;
  bool too_big;
  volatile sig_atomic_t *cancel;
} tt_embed_xfer;

static size_t tt_embed_on_body(char *data, size_t size, size_t nmemb, void *ud) {
  tt_embed_xfer *x = ud;
  size_t n = size * nmemb;
  if (x->body.len + n > x->max) {
    x->too_big = true;
    return 0;
  }
  tt_buf_append(&x->body, data, n);
  return n;
}

static int tt_embed_on_progress(void *ud, curl_off_t a, curl_off_t b, curl_off_t c, curl_off_t d) {
  (void)a, (void)b, (void)c, (void)d;
  const tt_embed_xfer *x = ud;
  return x->cancel && *x->cancel ? 1 : 0;
}

/* The error's message in the body, or an excerpt, made printable. */
static void tt_embed_detail(const tt_buf *body, char *out, size_t cap) {
  json_t *doc = json_loadb(body->data ? body->data : "", body->len, 0, NULL);
  const json_t *e = json_object_get(doc, "error");
  const char *msg = json_string_value(json_object_get(e, "message"));
  if (!msg) msg = json_string_value(e);
  if (!msg) msg = json_string_value(json_object_get(doc, "message"));
  if (!msg) msg = json_string_value(json_object_get(doc, "detail"));
  tt_buf safe = TT_BUF_INIT;
  if (msg) tt_escape_terminal(&safe, msg, strlen(msg), &(tt_escape_opts){.max_chars = 240});
  else if (body->len) tt_escape_terminal(&safe, body->data, body->len, &(tt_escape_opts){.max_chars = 160});
  snprintf(out, cap, "%s", safe.len ? tt_buf_cstr(&safe) : "no details");
  tt_buf_free(&safe);
  json_decref(doc);
}

/* Reads one reply's vectors into rows [first, first + n) of out. */
static bool tt_embed_parse(const tt_buf *body, const char *url, size_t first, size_t n,
                           tt_embeddings *out, tt_error *err) {
  json_error_t je;
  json_t *doc = json_loadb(body->data ? body->data : "", body->len, 0, &je);
  json_t *data = json_object_get(doc, "data");
  bool ok = json_is_array(data) && json_array_size(data) == n;
  bool *seen = tt_xcalloc(n ? n : 1, sizeof *seen);
  size_t i;
  json_t *item;
  json_array_foreach(data, i, item) {
    if (!ok) break;
    json_t *vec = json_object_get(item, "embedding"), *ix = json_object_get(item, "index");
    size_t at = json_is_integer(ix) ? (size_t)json_integer_value(ix) : i;
    size_t dim = json_array_size(vec);
    if (!json_is_array(vec) || at >= n || seen[at] || dim == 0 || dim > TT_EMBED_DIM_MAX ||
        (out->dim && dim != out->dim)) {
      ok = false;
      break;
    }
    if (!out->dim) {
      out->dim = dim;
      out->v = tt_xcalloc(out->n * dim, sizeof *out->v);
    }
    seen[at] = true;
    float *row = out->v + (first + at) * dim;
    for (size_t k = 0; k < dim && ok; k++) {
      json_t *x = json_array_get(vec, k);
      double d = json_number_value(x);
      ok = json_is_number(x) && isfinite(d) && fabs(d) < 1e30;
      row[k] = (float)d;
    }
  }
  free(seen);
  if (ok) out->tokens += (long)json_integer_value(json_object_get(json_object_get(doc, "usage"), "prompt_tokens"));
  json_decref(doc);
  if (!ok)
    tt_llm_set_error(err, TT_ERR_PROTOCOL, 200, "%s did not answer with %zu embeddings of one size "
                     "(data[].embedding)", url, n);
  return ok;
}

/* Whether an error status says the endpoint has no embeddings for this model. */
static bool tt_embed_missing(long status, const char *detail) {
  if (status == 404 || status == 405 || status == 501) return true;
  return (status == 400 || status == 422) && strcasestr(detail, "embed") != NULL;
}

/* One request of n texts, their vectors into rows [first, first + n). */
static bool tt_embed_request(const tt_http_embed_req *q, const char *const *texts, size_t first,
                             size_t n, double deadline_ms, tt_embeddings *out, bool *missing,
                             tt_error *err) {
  json_t *input = json_array();
  for (size_t i = 0; i < n; i++) {
    const char *t = texts[first + i];
    json_array_append_new(input, json_stringn(t, tt_embed_text_len(t)));
  }
  json_t *req = json_pack("{s:s,s:o,s:s}", "model", q->model, "input", input, "encoding_format", "float");
  char *body = json_dumps(req, JSON_COMPACT);
  json_decref(req);
  double left = deadline_ms - tt_now_ms();
  double limit = q->read_timeout_s * 1000.0;
  if (left < limit) limit = left;
  if (limit < 1) {
    free(body);
    tt_llm_set_error(err, TT_ERR_TIMEOUT, 0, "embedding took longer than %g s", TT_EMBED_DEADLINE_S);
    return false;
  }
  const tt_curl_api *api = q->api;
  CURL *c = q->curl;
  api->easy_reset(c);
  struct curl_slist *headers = api->slist_append(NULL, "Content-Type: application/json");
  headers = api->slist_append(headers, "Accept: application/json");
  char *auth = q->api_key ? tt_xasprintf("Authorization: Bearer %s", q->api_key) : NULL;
  if (auth) headers = api->slist_append(headers, auth);
  tt_embed_xfer x = {.body = TT_BUF_INIT, .max = TT_EMBED_REPLY_MAX, .cancel = q->cancel};
  api->easy_setopt(c, CURLOPT_URL, q->url);
  api->easy_setopt(c, CURLOPT_POST, 1L);
  api->easy_setopt(c, CURLOPT_POSTFIELDS, body);
  api->easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)strlen(body));
  api->easy_setopt(c, CURLOPT_HTTPHEADER, headers);
  api->easy_setopt(c, CURLOPT_WRITEFUNCTION, tt_embed_on_body);
  api->easy_setopt(c, CURLOPT_WRITEDATA, &x);
  api->easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
  api->easy_setopt(c, CURLOPT_XFERINFOFUNCTION, tt_embed_on_progress);
  api->easy_setopt(c, CURLOPT_XFERINFODATA, &x);
  api->easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
  api->easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, (long)(q->connect_timeout_s * 1000));
  api->easy_setopt(c, CURLOPT_TIMEOUT_MS, (long)limit);
  api->easy_setopt(c, CURLOPT_USERAGENT, "tabletalk");
  CURLcode rc = api->easy_perform(c);
  long status = 0;
  api->easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
  api->slist_free_all(headers);
  free(auth);
  free(body);
  out->requests++;
  bool ok = false;
  if (rc == CURLE_ABORTED_BY_CALLBACK && !x.too_big) {
    tt_llm_set_error(err, TT_ERR_CANCELLED, 0, "cancelled");
  } else if (x.too_big) {
    tt_llm_set_error(err, TT_ERR_LIMIT, 0, "the embeddings from %s passed %zu MiB", q->url,
                     TT_EMBED_REPLY_MAX >> 20);
  } else if (rc == CURLE_OPERATION_TIMEDOUT) {
    tt_llm_set_error(err, TT_ERR_TIMEOUT, 0, "%s did not answer within %g s", q->url, limit / 1000.0);
  } else if (rc != CURLE_OK && status == 0) {
    tt_llm_set_error(err, TT_ERR_CONNECT, 0, "cannot reach %s (%s)", q->url, api->easy_strerror(rc));
  } else if (status != 200) {
    char detail[300];
    tt_embed_detail(&x.body, detail, sizeof detail);
    *missing = tt_embed_missing(status, detail);
    tt_llm_set_error(err, *missing ? TT_ERR_UNAVAILABLE : TT_ERR_HTTP, (int)status,
                     "%s answered HTTP %ld: %s", q->url, status, detail);
    if (*missing)
      tt_error_hint(err, "the endpoint offers no embeddings for this model: name an embedding "
                         "model it serves with --embed-model, or leave --embeddings off");
  } else {
    ok = tt_embed_parse(&x.body, q->url, first, n, out, err);
  }
  tt_buf_free(&x.body);
  return ok;
}

bool tt_http_embed_run(const tt_http_embed_req *q, const char *const *texts, size_t n,
                       tt_embeddings *out, bool *missing, tt_error *err) {
  *missing = false;
  out->n = n;
  double deadline = tt_now_ms() + TT_EMBED_DEADLINE_S * 1000.0;
  for (size_t i = 0; i < n; i += TT_EMBED_BATCH) {
    size_t k = n - i < TT_EMBED_BATCH ? n - i : TT_EMBED_BATCH;
    if (!tt_embed_request(q, texts, i, k, deadline, out, missing, err)) return false;
  }
  return true;
}
