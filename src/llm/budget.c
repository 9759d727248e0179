/* budget.c — how much fits in one model call: the backend's context, the
 * room kept for the reply, token counts of a prompt or a text (exact when
 * the backend has the model's tokenizer, estimated otherwise), and the
 * default context of the embedded engine, chosen from the model's shape and
 * the machine's free memory. The agent uses these to keep every call within
 * the context instead of failing when it fills. */
#include "llm/llm_internal.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* llama.cpp's compute buffers (0.30-0.31 GiB measured for the 1.5B to 7B
 * shapes: mostly the logits of one 512-token batch) and the program. */
#define TT_CTX_OVERHEAD (512LL << 20)

/* ---- the backend's figures -------------------------------------------------- */

long tt_llm_context(const tt_llm *llm) {
  return llm && llm->vt->context ? llm->vt->context(llm->impl) : 0;
}

long tt_llm_reply_reserve(const tt_llm *llm) {
  long ctx = tt_llm_context(llm);
  if (ctx <= 0) return 0;
  long most = llm->vt->max_tokens ? llm->vt->max_tokens(llm->impl) : 0;
  long share = ctx / 4;
  return most > 0 && most < share ? most : share;
}

bool tt_llm_counts_exact(const tt_llm *llm) { return llm && llm->vt->counts_exact; }

/* ---- counting tokens ------------------------------------------------------------- */

long tt_llm_estimate_text(void *ud, const char *text, size_t len) {
  (void)ud;
  (void)text;
  return (long)((len * 2 + 6) / 7);
}

static long tt_count_str(tt_count_fn count, void *ud, const char *s) {
  return s ? count(ud, s, strlen(s)) : 0;
}

long tt_llm_estimate_prompt(const tt_chat *chat, const tt_llm_call *call, tt_count_fn count,
                            void *ud) {
  long n = 3; /* the assistant's turn begins */
  for (size_t i = 0; i < chat->n; i++) {
    const tt_msg *m = &chat->msgs[i];
    n += 4 + tt_count_str(count, ud, m->content) + tt_count_str(count, ud, m->tool_name) +
         tt_count_str(count, ud, m->tool_args);
  }
  for (size_t i = 0; call && i < call->ntools; i++) {
    const tt_tool_spec *t = &call->tools[i];
    n += 10 + tt_count_str(count, ud, t->name) + tt_count_str(count, ud, t->description) +
         tt_count_str(count, ud, t->parameters);
  }
  return n;
}

long tt_llm_count_text(tt_llm *llm, const char *text, size_t len) {
  if (llm && llm->vt->count_text) return llm->vt->count_text(llm->impl, text, len);
  return tt_llm_estimate_text(NULL, text, len);
}

static long tt_count_via_llm(void *ud, const char *text, size_t len) {
  return tt_llm_count_text(ud, text, len);
}

long tt_llm_count_prompt(tt_llm *llm, const tt_chat *chat, const tt_llm_call *call) {
  long n = llm && llm->vt->count_prompt ? llm->vt->count_prompt(llm->impl, chat, call) : -1;
  return n >= 0 ? n : tt_llm_estimate_prompt(chat, call, tt_count_via_llm, llm);
}

/* ---- the default context ------------------------------------------------------- */

static double tt_gib(long long bytes) { return (double)bytes / (double)(1LL << 30); }

long tt_llm_pick_context(const tt_ctx_facts *f, tt_buf *note) {
  long trained = f->trained > 0 ? f->trained : 0;
  long long kv = f->kv_bytes_per_token > 0 ? f->kv_bytes_per_token : 0;
  /* what memory leaves for the KV cache: a tenth stays free for the rest
   * of the machine, and the weights and compute buffers come first */
  bool mem_known = f->available_bytes > 0;
  long long room = mem_known ? f->available_bytes - f->available_bytes / 10 - f->weights_bytes -
                                   TT_CTX_OVERHEAD
                             : 0;
  if (room < 0) room = 0;
  long allows = LONG_MAX;
  if (mem_known && kv > 0) allows = room / kv > LONG_MAX ? LONG_MAX : (long)(room / kv);
  /* more would only cost memory: results are capped and older ones
   * shortened, so a question rarely needs more than this */
  long n = TT_CTX_DEFAULT;
  const char *reason = "the default";
  if (trained && trained < n) {
    n = trained;
    reason = "the model's trained context";
  }
  if (allows < n) {
    n = allows / 1024 * 1024;
    reason = "what memory allows";
    /* less would not hold the system prompt and one result: better to try
     * (the KV cache is small beside the weights) than to fail every
     * question */
    long floor = trained && trained < TT_CTX_FLOOR ? trained : TT_CTX_FLOOR;
    if (n < floor) {
      n = floor;
      reason = "the least that holds a question, though memory is short";
    }
  }
  if (note) {
    tt_buf_printf(note, "%ld tokens: %s", n, reason);
    if (trained) tt_buf_printf(note, "; trained for %ld", trained);
    if (mem_known && kv > 0)
      tt_buf_printf(note, "; memory allows about %ld (%.1f GiB available, %.1f GiB of weights, "
                          "%lld bytes per token)",
                    allows, tt_gib(f->available_bytes), tt_gib(f->weights_bytes), kv);
    else if (!mem_known)
      tt_buf_puts(note, "; free memory unknown");
  }
  return n;
}

/* The number after key in a file of "key N" or "Key: N kB" lines
 * (/proc/meminfo, a cgroup's memory.stat), times unit; -1 when absent. */
static long long tt_stat_bytes(const char *path, const char *key, long long unit) {
  FILE *fp = fopen(path, "r");
  if (!fp) return -1;
  char line[256];
  long long v = -1;
  size_t klen = strlen(key);
  while (fgets(line, sizeof line, fp))
    if (strncmp(line, key, klen) == 0 && (line[klen] == ':' || line[klen] == ' ')) {
      v = strtoll(line + klen + 1, NULL, 10) * unit;
      break;
    }
  fclose(fp);
  return v;
}

/* A file holding one number (cgroup limits); -1 when absent or "max". */
static long long tt_file_number(const char *path) {
  FILE *fp = fopen(path, "r");
  if (!fp) return -1;
  char buf[64] = "";
  long long v = -1;
  if (fgets(buf, sizeof buf, fp) && buf[0] >= '0' && buf[0] <= '9') v = strtoll(buf, NULL, 10);
  fclose(fp);
  return v;
}

long long tt_mem_available(void) {
  long long avail = tt_stat_bytes("/proc/meminfo", "MemAvailable", 1024);
  if (avail < 0) {
    long pages = sysconf(_SC_AVPHYS_PAGES), size = sysconf(_SC_PAGESIZE);
    if (pages > 0 && size > 0) avail = (long long)pages * size;
  }
  /* a container's limit (cgroup v2, then v1, which says "no limit" with a
   * huge number), less the memory its processes hold (anonymous memory:
   * cached file pages, the model's among them, can be dropped) */
  long long max = tt_file_number("/sys/fs/cgroup/memory.max");
  long long used = tt_stat_bytes("/sys/fs/cgroup/memory.stat", "anon", 1);
  if (max < 0) {
    max = tt_file_number("/sys/fs/cgroup/memory/memory.limit_in_bytes");
    used = tt_stat_bytes("/sys/fs/cgroup/memory/memory.stat", "rss", 1);
    if (max >= 1LL << 60) max = -1;
  }
  if (max > 0) {
    long long left = used >= 0 && used < max ? max - used : max;
    if (avail < 0 || left < avail) avail = left;
  }
  return avail > 0 ? avail : 0;
}
