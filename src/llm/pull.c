/* pull.c — downloading a model file: over https only (plain http only to
 * this machine, for local mirrors and tests), resumes a partial download
 * (.part beside the destination, an HTTP Range request), reports progress,
 * and verifies the SHA-256 the server announces for the file (Hugging Face
 * sends it as X-Linked-Etag) and, for a known model, the one the file must
 * have (a server offering another file is stopped before any data); the
 * file only takes its name once verified.
 * A failure says what happened: host not reachable, an HTTP error, or a
 * download cut short that the same command resumes; no empty .part stays. */
#include "llm/curl_api.h"
#include "llm/llm.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

typedef struct tt_dl {
  const tt_curl_api *api;
  FILE *f;
  tt_sha256 *hash;
  long long have;      /* bytes already in the .part file */
  long long received;  /* bytes written by this transfer */
  long status;
  bool range_ignored;  /* the server sent the whole file anyway */
  bool write_failed;
  bool changed;        /* the server announced another sha256 than expected */
  char announced[65];  /* sha256 from the headers, "" when none */
  const tt_pull_opts *o;
} tt_dl;

static void tt_dl_header_value(const char *data, size_t n, size_t skip, char *out, size_t cap) {
  size_t i = skip;
  while (i < n && (data[i] == ' ' || data[i] == '"' || data[i] == 'W' || data[i] == '/')) i++;
  size_t k = 0;
  while (i < n && k + 1 < cap && isxdigit((unsigned char)data[i])) out[k++] = (char)tolower((unsigned char)data[i++]);
  out[k] = '\0';
}

static size_t tt_dl_header(char *data, size_t size, size_t nitems, void *ud) {
  tt_dl *d = ud;
  size_t n = size * nitems;
  if (n > 5 && strncmp(data, "HTTP/", 5) == 0) {
    const char *sp = memchr(data, ' ', n);
    d->status = sp ? strtol(sp + 1, NULL, 10) : 0;
  } else if (n > 14 && strncasecmp(data, "x-linked-etag:", 14) == 0) {
    char v[65];
    tt_dl_header_value(data, n, 14, v, sizeof v);
    if (strlen(v) == 64) memcpy(d->announced, v, sizeof v);
  } else if (n > 16 && strncasecmp(data, "x-content-sha256", 16) == 0) {
    char v[65];
    const char *colon = memchr(data, ':', n);
    if (colon) tt_dl_header_value(data, n, (size_t)(colon - data) + 1, v, sizeof v);
    if (colon && strlen(v) == 64) memcpy(d->announced, v, sizeof v);
  }
  if (d->announced[0] && d->o->expect_sha256 && strcmp(d->announced, d->o->expect_sha256) != 0) {
    d->changed = true;
    return 0; /* stops the transfer before any byte of the wrong file */
  }
  return n;
}

static size_t tt_dl_body(char *data, size_t size, size_t nmemb, void *ud) {
  tt_dl *d = ud;
  size_t n = size * nmemb;
  if (d->status >= 300 && d->status < 400) return n; /* a redirect's body */
  if (d->status != 200 && d->status != 206) return n; /* an error page: not saved */
  if (d->received == 0 && d->have > 0 && d->status == 200) {
    /* the server ignored the Range request: start over */
    d->range_ignored = true;
    if (ftruncate(fileno(d->f), 0) != 0 || fseek(d->f, 0, SEEK_SET) != 0) {
      d->write_failed = true;
      return 0;
    }
    d->have = 0;
    tt_sha256 *fresh = tt_sha256_new();
    if (d->hash) tt_sha256_finish(d->hash, (char[65]){0});
    d->hash = fresh;
  }
  if (fwrite(data, 1, n, d->f) != n) {
    d->write_failed = true;
    return 0;
  }
  if (d->hash) tt_sha256_update(d->hash, data, n);
  d->received += (long long)n;
  return n;
}

static int tt_dl_progress(void *ud, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal,
                          curl_off_t ulnow) {
  (void)ultotal;
  (void)ulnow;
  tt_dl *d = ud;
  if (d->o->cancel && *d->o->cancel) return 1;
  if (d->o->on_progress && (d->status == 200 || d->status == 206))
    d->o->on_progress(d->o->ud, d->have + (long long)dlnow, dltotal ? d->have + (long long)dltotal : -1);
  return 0;
}

/* Feeds what a previous attempt left in the .part file into the hash. */
static bool tt_dl_hash_existing(const char *part, tt_sha256 *h) {
  FILE *f = fopen(part, "rb");
  if (!f) return false;
  char buf[1 << 16];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, f)) > 0) tt_sha256_update(h, buf, n);
  bool ok = !ferror(f);
  fclose(f);
  return ok;
}

/* The host of url ("huggingface.co", "127.0.0.1", "::1"): after the
 * scheme and any user info, up to the port or path. */
static void tt_url_host(const char *url, char *out, size_t cap) {
  const char *p = strstr(url, "://");
  p = p ? p + 3 : url;
  const char *end = p + strcspn(p, "/?#");
  const char *at = memchr(p, '@', (size_t)(end - p));
  if (at) p = at + 1;
  if (*p == '[') { /* [::1]:8080 */
    const char *close = memchr(p, ']', (size_t)(end - p));
    if (close) end = close, p++;
  } else {
    const char *colon = memchr(p, ':', (size_t)(end - p));
    if (colon) end = colon;
  }
  size_t n = (size_t)(end - p) < cap - 1 ? (size_t)(end - p) : cap - 1;
  memcpy(out, p, n);
  out[n] = '\0';
}


bool tt_pull_url_ok(const char *url, tt_error *err) {
  if (strncasecmp(url, "https://", 8) == 0) return true;
  char host[256];
  tt_url_host(url, host, sizeof host);
  if (strncasecmp(url, "http://", 7) == 0 && tt_host_is_loopback(host, strlen(host))) return true;
  tt_error_set(err, TT_ERR_CONFIG, "'%s' is not an https URL: models are downloaded over https "
               "only (plain http only from this machine: localhost, 127.0.0.1, [::1])", url);
  return false;
}

/* A .part file that holds nothing is of no use to a resumed download. */
static void tt_drop_empty_part(const char *part) {
  struct stat st;
  if (stat(part, &st) == 0 && st.st_size == 0) unlink(part);
}

/* The error for a transfer that failed at the network (rc) or on the
 * disk (d->write_failed: io); a transfer that stalled past the low-speed
 * time is a timeout, the rest cannot connect. */
static void tt_dl_network_error(const tt_dl *d, const tt_curl_api *api, CURLcode rc, const char *where,
                                long long bytes, tt_error *err) {
  char host[256];
  tt_url_host(where, host, sizeof host);
  const char *what = d->write_failed ? "cannot write the file" : api->easy_strerror(rc);
  tt_errkind kind = d->write_failed                    ? TT_ERR_IO
                    : rc == CURLE_OPERATION_TIMEDOUT ? TT_ERR_TIMEOUT
                                                     : TT_ERR_CONNECT;
  if (d->status == 0 && d->received == 0) { /* nothing came back: no connection */
    tt_error_set(err, kind, "cannot reach %s: %s", host, what);
    tt_error_hint(err, "check your connection (and the proxy settings, https_proxy, if you use "
                  "one)%s", bytes ? "; what was downloaded before is kept, and the same command "
                  "resumes it" : "");
  } else if (bytes == 0) {
    tt_error_set(err, kind, "the download from %s stopped before any data arrived (%s)", host,
                 what);
    tt_error_hint(err, "try again");
  } else {
    tt_error_set(err, kind, "download interrupted after %.1f MB (%s)", (double)bytes / 1e6, what);
    tt_error_hint(err, "run the same command again to resume from there");
  }
}

bool tt_model_pull(const char *url, const char *dest, const tt_pull_opts *o, tt_pull_result *res,
                   tt_error *err) {
  memset(res, 0, sizeof *res);
  if (!tt_pull_url_ok(url, err)) return false;
  const tt_curl_api *api = tt_curl_api_get(err);
  if (!api) return false;
  char *part = tt_xasprintf("%s.part", dest);
  struct stat st;
  tt_dl d = {.api = api, .o = o};
  d.have = stat(part, &st) == 0 ? (long long)st.st_size : 0;
  d.hash = tt_sha256_new();
  if (d.have > 0 && d.hash && !tt_dl_hash_existing(part, d.hash)) d.have = 0;
  res->resumed_from = d.have;
  d.f = fopen(part, d.have > 0 ? "ab" : "wb");
  if (!d.f) {
    tt_error_set(err, TT_ERR_IO, "cannot write %s: %s", part, strerror(errno));
    free(part);
    if (d.hash) tt_sha256_finish(d.hash, (char[65]){0});
    return false;
  }
  CURL *c = api->easy_init();
  char range[64];
  snprintf(range, sizeof range, "%lld-", d.have);
  char host[256];
  tt_url_host(url, host, sizeof host);
  /* redirects may not leave https (nor loopback http for a local mirror) */
  const char *protocols = strncasecmp(url, "https://", 8) == 0 ? "https" : "http,https";
  api->easy_setopt(c, CURLOPT_URL, url);
  api->easy_setopt(c, CURLOPT_PROTOCOLS_STR, protocols);
  api->easy_setopt(c, CURLOPT_REDIR_PROTOCOLS_STR, protocols);
  api->easy_setopt(c, CURLOPT_FOLLOWLOCATION, 1L);
  api->easy_setopt(c, CURLOPT_MAXREDIRS, 10L);
  if (d.have > 0) api->easy_setopt(c, CURLOPT_RANGE, range);
  api->easy_setopt(c, CURLOPT_HEADERFUNCTION, tt_dl_header);
  api->easy_setopt(c, CURLOPT_HEADERDATA, &d);
  api->easy_setopt(c, CURLOPT_WRITEFUNCTION, tt_dl_body);
  api->easy_setopt(c, CURLOPT_WRITEDATA, &d);
  api->easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
  api->easy_setopt(c, CURLOPT_XFERINFOFUNCTION, tt_dl_progress);
  api->easy_setopt(c, CURLOPT_XFERINFODATA, &d);
  api->easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
  api->easy_setopt(c, CURLOPT_CONNECTTIMEOUT, 20L);
  api->easy_setopt(c, CURLOPT_LOW_SPEED_LIMIT, 1L);
  api->easy_setopt(c, CURLOPT_LOW_SPEED_TIME, (long)(o->stall_timeout_s > 0 ? o->stall_timeout_s : 60));
  api->easy_setopt(c, CURLOPT_USERAGENT, "tabletalk");
  CURLcode rc = api->easy_perform(c);
  char *where = NULL; /* the URL it ended at (a redirect's target) */
  api->easy_getinfo(c, CURLINFO_EFFECTIVE_URL, &where);
  where = tt_xstrdup(where ? where : url);
  api->easy_cleanup(c);
  bool closed = fclose(d.f) == 0;
  res->bytes = d.have + d.received;
  bool ok = false;
  char got[65] = {0};
  if (d.hash) tt_sha256_finish(d.hash, got);
  if (d.changed) {
    res->changed = true;
    tt_error_set(err, TT_ERR_PROTOCOL, "the server offers a different file than the one this "
                 "tabletalk knows (its sha256 is %s, expected %s), so nothing was downloaded",
                 d.announced, o->expect_sha256);
    tt_error_hint(err, "if you trust the new file, pull it by its URL");
    unlink(part); /* a part of the old file cannot be resumed into the new one */
  } else if (rc == CURLE_ABORTED_BY_CALLBACK && res->bytes == 0) {
    /* only o->cancel aborts the transfer from a callback */
    tt_error_set(err, TT_ERR_CANCELLED, "download stopped before any data arrived");
  } else if (rc == CURLE_ABORTED_BY_CALLBACK) {
    tt_error_set(err, TT_ERR_CANCELLED, "download stopped after %.1f MB", (double)res->bytes / 1e6);
    tt_error_hint(err, "run the same command again to resume");
  } else if (rc == CURLE_UNSUPPORTED_PROTOCOL) {
    tt_error_set(err, TT_ERR_PROTOCOL, "%s redirected the download to %s, which is not https; not "
                 "followed", host, where);
  } else if (d.status >= 400 || (d.status != 200 && d.status != 206 && rc == CURLE_OK)) {
    tt_error_set(err, TT_ERR_HTTP, "the server answered HTTP %ld for %s", d.status, url);
    err->status = (int)d.status;
  } else if (rc != CURLE_OK || d.write_failed || !closed) {
    if (!closed) d.write_failed = true;
    tt_dl_network_error(&d, api, rc, where, res->bytes, err);
  } else if (d.announced[0] && d.hash && strcmp(got, d.announced) != 0) {
    tt_error_set(err, TT_ERR_PROTOCOL, "the downloaded file's sha256 is %s but the server "
                 "announced %s; the download was deleted, try again", got, d.announced);
    unlink(part);
  } else if (o->expect_sha256 && d.hash && strcmp(got, o->expect_sha256) != 0) {
    res->changed = true;
    tt_error_set(err, TT_ERR_PROTOCOL, "the downloaded file's sha256 is %s, not the %s this "
                 "tabletalk knows for it; the download was deleted (if you trust the new file, "
                 "pull it by its URL)", got, o->expect_sha256);
    unlink(part);
  } else if (rename(part, dest) != 0) {
    tt_error_set(err, TT_ERR_IO, "cannot rename %s to %s: %s", part, dest, strerror(errno));
  } else {
    ok = true;
    res->verified = (d.announced[0] || o->expect_sha256) && d.hash;
    memcpy(res->sha256, got, sizeof got);
  }
  if (!ok) tt_drop_empty_part(part);
  free(where);
  free(part);
  return ok;
}
