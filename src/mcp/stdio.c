/* stdio.c — the stdio transport: one JSON-RPC message per line on stdin,
 * one per line on stdout, nothing else on stdout. The reading thread
 * parses lines, answers what is malformed at once, routes the client's
 * responses and notifications, answers quick requests itself (run_sql too
 * when that needs no wait: a cached result, or a statement that ends
 * within a few milliseconds), and queues the other tool calls for a few
 * workers, so a long question never holds up run_sql, and
 * notifications/cancelled reaches a question while it runs. */
#include "mcp/mcp_internal.h"

#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define TT_STDIO_QUEUE_MAX 10000
#define TT_STDIO_CHUNK 65536

typedef struct tt_job {
  json_t *msg;
  tt_mcp_call call;
  tt_inflight *tracked;  /* for notifications/cancelled (requests only) */
  struct tt_job *next;
} tt_job;

typedef struct tt_stdio {
  tt_mcp_server *srv;
  int out_fd;
  pthread_mutex_t out_mu;
  bool out_broken;
  tt_mcp_conn *conn;
  pthread_mutex_t mu;
  pthread_cond_t cv;
  tt_job *head, *tail;
  size_t queued;
  bool closing;
} tt_stdio;

static bool tt_stdio_write(tt_stdio *st, const json_t *msg) {
  tt_buf b = TT_BUF_INIT;
  tt_rpc_dump(&b, msg);
  tt_buf_putc(&b, '\n');
  pthread_mutex_lock(&st->out_mu);
  size_t off = 0;
  while (!st->out_broken && off < b.len) {
    ssize_t w = write(st->out_fd, b.data + off, b.len - off);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) {
      st->out_broken = true;
      break;
    }
    off += (size_t)w;
  }
  bool ok = !st->out_broken;
  pthread_mutex_unlock(&st->out_mu);
  tt_buf_free(&b);
  return ok;
}

static bool tt_stdio_send(void *ud, const json_t *msg) { return tt_stdio_write(ud, msg); }

static void tt_stdio_reply(tt_stdio *st, json_t *reply) {
  if (reply) tt_stdio_write(st, reply);
  json_decref(reply);
}

static void *tt_stdio_worker(void *arg) {
  tt_stdio *st = arg;
  for (;;) {
    pthread_mutex_lock(&st->mu);
    while (!st->head && !st->closing) pthread_cond_wait(&st->cv, &st->mu);
    tt_job *job = st->head;
    if (job) {
      st->head = job->next;
      if (!st->head) st->tail = NULL;
      st->queued--;
    }
    pthread_mutex_unlock(&st->mu);
    if (!job) break;
    json_t *reply = NULL;
    if (!job->call.cancel) reply = tt_mcp_handle(st->srv, &job->call, job->msg);
    /* A request cancelled while it ran gets no response. */
    if (job->call.cancel || job->call.no_reply) {
      json_decref(reply);
      reply = NULL;
    }
    tt_mcp_conn_untrack(st->conn, job->tracked);
    tt_stdio_reply(st, reply);
    json_decref(job->msg);
    free(job);
  }
  return NULL;
}

static void tt_stdio_enqueue(tt_stdio *st, json_t *msg, const json_t *id) {
  tt_job *job = tt_xcalloc(1, sizeof *job);
  job->msg = msg;
  job->call.conn = st->conn;
  job->call.send = tt_stdio_send;
  job->call.send_ud = st;
  if (id) job->tracked = tt_mcp_conn_track(st->conn, id, &job->call.cancel);
  pthread_mutex_lock(&st->mu);
  if (st->queued >= TT_STDIO_QUEUE_MAX) {
    pthread_mutex_unlock(&st->mu);
    tt_mcp_conn_untrack(st->conn, job->tracked);
    tt_stdio_reply(st, tt_rpc_error(id, TT_RPC_INTERNAL_ERROR,
                                    "Server busy: 10000 requests are waiting; send fewer at once",
                                    NULL));
    json_decref(msg);
    free(job);
    return;
  }
  if (st->tail) st->tail->next = job;
  else st->head = job;
  st->tail = job;
  st->queued++;
  pthread_cond_signal(&st->cv);
  pthread_mutex_unlock(&st->mu);
}

/* Tool calls (a question takes seconds to minutes, a query up to its time
 * limit) and batches, which may hold them, run on the workers: the reading
 * thread must stay free for notifications/cancelled (which stops a running
 * query within milliseconds) and elicitation answers; but a run_sql that
 * needs no wait is answered here first (tt_stdio_try_quick). Everything
 * else is answered on the reading thread, which saves two thread
 * hand-offs. */
static bool tt_stdio_is_slow(const json_t *msg) {
  if (json_is_array(msg)) return true;
  const char *method = json_string_value(json_object_get(msg, "method"));
  return method && strcmp(method, "tools/call") == 0;
}

/* A tool call answered on the reading thread when that takes no wait
 * (run_sql from its cache, or a statement within its bounds: tools.c's
 * t_run_sql_quick; the hand-off to a worker was a third of a cached call's
 * time); false when a worker must take it. */
static bool tt_stdio_try_quick(tt_stdio *st, const json_t *msg) {
  if (!json_is_object(msg)) return false;
  tt_mcp_call call = {.conn = st->conn, .send = tt_stdio_send, .send_ud = st, .quick = true};
  json_t *reply = tt_mcp_handle(st->srv, &call, msg);
  if (call.deferred) {
    json_decref(reply);
    return false;
  }
  tt_stdio_reply(st, reply);
  return true;
}

static void tt_stdio_line(tt_stdio *st, const char *line, size_t n) {
  while (n && (line[n - 1] == '\r' || line[n - 1] == ' ' || line[n - 1] == '\t')) n--;
  size_t lead = 0;
  while (lead < n && (line[lead] == ' ' || line[lead] == '\t')) lead++;
  if (lead == n) return; /* blank lines are not messages */
  json_error_t e;
  json_t *msg = tt_mcp_load(line + lead, n - lead, &e);
  if (!msg) {
    tt_stdio_reply(st, tt_mcp_parse_error(&e));
    return;
  }
  const char *why;
  tt_rpc_kind kind = json_is_array(msg) ? TT_RPC_REQUEST : tt_rpc_classify(msg, &why);
  if (kind == TT_RPC_REQUEST && tt_stdio_is_slow(msg)) {
    if (tt_stdio_try_quick(st, msg)) json_decref(msg);
    else tt_stdio_enqueue(st, msg, json_is_object(msg) ? json_object_get(msg, "id") : NULL);
    return;
  }
  tt_mcp_call call = {.conn = st->conn, .send = tt_stdio_send, .send_ud = st};
  tt_stdio_reply(st, tt_mcp_handle(st->srv, &call, msg));
  json_decref(msg);
}

int tt_mcp_serve_stdio(tt_mcp_server *s, int in_fd, int out_fd, volatile sig_atomic_t *stop) {
  tt_stdio st;
  memset(&st, 0, sizeof st);
  st.srv = s;
  st.out_fd = out_fd;
  st.conn = tt_mcp_conn_new();
  pthread_mutex_init(&st.out_mu, NULL);
  pthread_mutex_init(&st.mu, NULL);
  pthread_cond_init(&st.cv, NULL);
  int nworkers = tt_mcp_workers(s);
  pthread_t *workers = tt_xcalloc((size_t)nworkers, sizeof *workers);
  int started = 0;
  for (int i = 0; i < nworkers; i++)
    if (pthread_create(&workers[started], NULL, tt_stdio_worker, &st) == 0) started++;

  size_t max = tt_mcp_max_message(s);
  tt_buf line = TT_BUF_INIT;
  bool discarding = false; /* inside a line over the limit */
  size_t discarded = 0;
  char *chunk = tt_xmalloc(TT_STDIO_CHUNK);
  while (!(stop && *stop) && !st.out_broken && started > 0) {
    struct pollfd p = {.fd = in_fd, .events = POLLIN};
    int pr = poll(&p, 1, 200);
    if (pr < 0 && errno != EINTR) break;
    if (pr <= 0) continue;
    ssize_t got = read(in_fd, chunk, TT_STDIO_CHUNK);
    if (got < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (got <= 0) break; /* end of input */
    const char *p0 = chunk, *end = chunk + got;
    while (p0 < end) {
      const char *nl = memchr(p0, '\n', (size_t)(end - p0));
      size_t take = (size_t)((nl ? nl : end) - p0);
      if (discarding) {
        discarded += take;
      } else if (line.len + take > max) {
        discarding = true;
        discarded = line.len + take;
        tt_buf_free(&line);
      } else {
        tt_buf_append(&line, p0, take);
      }
      if (!nl) break;
      if (discarding) tt_stdio_reply(&st, tt_mcp_too_large(s, discarded));
      else tt_stdio_line(&st, line.data ? line.data : "", line.len);
      discarding = false;
      discarded = 0;
      tt_buf_reset(&line);
      p0 = nl + 1;
    }
  }
  /* A last line without a newline still counts. */
  if (!(stop && *stop) && !discarding && line.len) tt_stdio_line(&st, line.data, line.len);
  free(chunk);
  tt_buf_free(&line);

  /* No more input: answers from the client cannot come, and work already
   * accepted is finished unless we were told to stop. */
  tt_mcp_conn_close(st.conn);
  if ((stop && *stop) || st.out_broken) tt_mcp_conn_cancel_all(st.conn);
  pthread_mutex_lock(&st.mu);
  st.closing = true;
  pthread_cond_broadcast(&st.cv);
  pthread_mutex_unlock(&st.mu);
  for (int i = 0; i < started; i++) pthread_join(workers[i], NULL);
  free(workers);
  /* Jobs a worker never took (none started) are dropped. */
  while (st.head) {
    tt_job *j = st.head;
    st.head = j->next;
    json_decref(j->msg);
    free(j);
  }
  bool broken = st.out_broken;
  tt_mcp_conn_free(st.conn);
  pthread_cond_destroy(&st.cv);
  pthread_mutex_destroy(&st.mu);
  pthread_mutex_destroy(&st.out_mu);
  return broken ? 1 : 0;
}
