/* grammar_sampler.c — the grammar sampler of the embedded engine:
 * llama.cpp's GBNF sampler, parsed once per grammar text and copied for
 * each generation (a tool set's grammar takes milliseconds to parse, a copy
 * far less), wrapped in a check of what llama.cpp's grammar cannot see.
 *
 * llama.cpp matches a grammar against code points. A token that ends in
 * the middle of a character is matched by the range of code points it
 * could still become, and an overlong form split over several tokens
 * (E0 9F BF, F0 8F BF BF) narrows to the same range as a valid one, so
 * the grammar lets it through; the wrapper follows the bytes and refuses a
 * token that would make the text invalid UTF-8. It also refuses tokens
 * whose text the grammar matches but the engine does not write (control
 * tokens such as <|im_start|> or [PAD151811], whose pieces are empty
 * without "special"), so that the reply holds exactly the text the grammar
 * admitted. End-of-generation tokens are left to the grammar. */
#include "llm/llm_internal.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "llm/llama_api.h"

#define TT_GRAMMAR_SLOTS 4 /* grammars kept parsed: the tool set, a forced tool, ... */

/* What the check needs to know of a token's bytes. */
enum {
  TT_TOK_RUN = 7,       /* continuation bytes it starts with (at most 4 counted) */
  TT_TOK_ALL_CONT = 8,  /* it is nothing but continuation bytes */
  TT_TOK_REST_BAD = 16, /* what follows them is not the start of valid UTF-8 */
  TT_TOK_HIDDEN = 32,   /* the grammar sees text the engine does not write */
  TT_TOK_SKIP = 64,     /* end of generation, or no text: the grammar decides */
};

struct tt_grammars {
  const struct llama_vocab *vocab;
  int n_vocab;
  uint8_t *first; /* each token's first byte */
  uint8_t *info;  /* TT_TOK_* */
  struct {
    char *text;
    struct llama_sampler *proto; /* at the grammar's start */
    unsigned long used;
  } slot[TT_GRAMMAR_SLOTS];
  unsigned long clock;
};

/* Where a UTF-8 decoder stands: how many continuation bytes it still
 * needs and the range the next one must fall in. */
typedef struct tt_u8 {
  uint8_t need, lo, hi;
} tt_u8;

static bool tt_u8_step(tt_u8 *s, uint8_t b) {
  if (s->need) {
    if (b < s->lo || b > s->hi) return false;
    s->need--;
    s->lo = 0x80;
    s->hi = 0xBF;
    return true;
  }
  s->lo = 0x80;
  s->hi = 0xBF;
  if (b < 0x80) return true;
  if (b >= 0xC2 && b <= 0xDF) s->need = 1;
  else if (b == 0xE0) s->need = 2, s->lo = 0xA0;          /* no overlong forms */
  else if (b == 0xED) s->need = 2, s->hi = 0x9F;          /* no surrogates */
  else if (b >= 0xE1 && b <= 0xEF) s->need = 2;
  else if (b == 0xF0) s->need = 3, s->lo = 0x90;          /* no overlong forms */
  else if (b == 0xF4) s->need = 3, s->hi = 0x8F;          /* nothing above U+10FFFF */
  else if (b >= 0xF1 && b <= 0xF3) s->need = 3;
  else return false;
  return true;
}

static int tt_piece(const struct llama_vocab *v, llama_token t, char *buf, int cap, bool special) {
  int n = llama_token_to_piece(v, t, buf, cap, 0, special);
  return n < 0 ? -1 : n;
}

/* The byte facts of every token, once per engine. */
static void tt_grammars_learn_vocab(tt_grammars *g) {
  g->n_vocab = llama_vocab_n_tokens(g->vocab);
  g->first = tt_xcalloc((size_t)g->n_vocab, 1);
  g->info = tt_xcalloc((size_t)g->n_vocab, 1);
  char text[512], shown[512];
  for (llama_token t = 0; t < g->n_vocab; t++) {
    int n = tt_piece(g->vocab, t, text, sizeof text, true);
    if (llama_vocab_is_eog(g->vocab, t) || n <= 0) {
      g->info[t] = TT_TOK_SKIP;
      continue;
    }
    int m = tt_piece(g->vocab, t, shown, sizeof shown, false);
    uint8_t info = 0;
    if (m != n || memcmp(text, shown, (size_t)n) != 0) info |= TT_TOK_HIDDEN;
    const uint8_t *p = (const uint8_t *)text;
    int run = 0;
    while (run < n && (p[run] & 0xC0) == 0x80) run++;
    if (run == n) info |= TT_TOK_ALL_CONT;
    info |= (uint8_t)(run > 4 ? 4 : run);
    tt_u8 s = {0, 0x80, 0xBF};
    for (int i = run; i < n; i++)
      if (!tt_u8_step(&s, p[i])) {
        info |= TT_TOK_REST_BAD;
        break;
      }
    g->first[t] = p[0];
    g->info[t] = info;
  }
}

/* ---- the wrapping sampler ------------------------------------------------------ */

typedef struct tt_gs {
  struct llama_sampler *inner; /* llama.cpp's grammar sampler */
  const tt_grammars *g;
  tt_u8 at; /* the bytes accepted so far */
} tt_gs;

/* Whether token t may follow the bytes accepted so far. */
static bool tt_gs_token_ok(const tt_gs *s, llama_token t) {
  if (t < 0 || t >= s->g->n_vocab) return true;
  uint8_t info = s->g->info[t];
  if (info & TT_TOK_SKIP) return true;
  if (info & TT_TOK_HIDDEN) return false;
  int run = info & TT_TOK_RUN;
  if (s->at.need == 0) return run == 0 && !(info & TT_TOK_REST_BAD);
  uint8_t b = s->g->first[t];
  if (run == 0 || b < s->at.lo || b > s->at.hi) return false;
  if (info & TT_TOK_ALL_CONT) return run <= s->at.need;
  return run == s->at.need && !(info & TT_TOK_REST_BAD);
}

static const char *tt_gs_name(const struct llama_sampler *smpl) {
  (void)smpl;
  return "tabletalk-grammar";
}

static void tt_gs_apply(struct llama_sampler *smpl, llama_token_data_array *cur) {
  tt_gs *s = smpl->ctx;
  llama_sampler_apply(s->inner, cur);
  for (size_t i = 0; i < cur->size; i++)
    if (!(isinf(cur->data[i].logit) && cur->data[i].logit < 0) && !tt_gs_token_ok(s, cur->data[i].id))
      cur->data[i].logit = -INFINITY;
}

static void tt_gs_accept(struct llama_sampler *smpl, llama_token t) {
  tt_gs *s = smpl->ctx;
  llama_sampler_accept(s->inner, t);
  if (t < 0 || t >= s->g->n_vocab || (s->g->info[t] & TT_TOK_SKIP)) return;
  char text[512];
  int n = tt_piece(s->g->vocab, t, text, sizeof text, true);
  for (int i = 0; i < n; i++)
    if (!tt_u8_step(&s->at, (uint8_t)text[i])) s->at = (tt_u8){0, 0x80, 0xBF};
}

static void tt_gs_reset(struct llama_sampler *smpl) {
  tt_gs *s = smpl->ctx;
  llama_sampler_reset(s->inner);
  s->at = (tt_u8){0, 0x80, 0xBF};
}

static struct llama_sampler *tt_gs_wrap(struct llama_sampler *inner, const tt_grammars *g, tt_u8 at);

static struct llama_sampler *tt_gs_clone(const struct llama_sampler *smpl) {
  const tt_gs *s = smpl->ctx;
  return tt_gs_wrap(llama_sampler_clone(s->inner), s->g, s->at);
}

static void tt_gs_free(struct llama_sampler *smpl) {
  tt_gs *s = smpl->ctx;
  llama_sampler_free(s->inner);
  free(s);
}

static struct llama_sampler_i tt_gs_iface = {
    .name = tt_gs_name,
    .accept = tt_gs_accept,
    .apply = tt_gs_apply,
    .reset = tt_gs_reset,
    .clone = tt_gs_clone,
    .free = tt_gs_free,
};

static struct llama_sampler *tt_gs_wrap(struct llama_sampler *inner, const tt_grammars *g, tt_u8 at) {
  tt_gs *s = tt_xcalloc(1, sizeof *s);
  s->inner = inner;
  s->g = g;
  s->at = at;
  return llama_sampler_init(&tt_gs_iface, s);
}

/* ---- the cache --------------------------------------------------------------------- */

tt_grammars *tt_grammars_new(const struct llama_vocab *vocab) {
  tt_grammars *g = tt_xcalloc(1, sizeof *g);
  g->vocab = vocab;
  return g;
}

void tt_grammars_free(tt_grammars *g) {
  if (!g) return;
  for (size_t i = 0; i < TT_GRAMMAR_SLOTS; i++) {
    free(g->slot[i].text);
    if (g->slot[i].proto) llama_sampler_free(g->slot[i].proto);
  }
  free(g->first);
  free(g->info);
  free(g);
}

struct llama_sampler *tt_grammars_sampler(tt_grammars *g, const char *gbnf) {
  if (!g->info) tt_grammars_learn_vocab(g);
  size_t k = 0;
  for (size_t i = 0; i < TT_GRAMMAR_SLOTS; i++) {
    if (g->slot[i].text && strcmp(g->slot[i].text, gbnf) == 0) {
      g->slot[i].used = ++g->clock;
      return llama_sampler_clone(g->slot[i].proto);
    }
    if (g->slot[i].used < g->slot[k].used) k = i; /* the least recently used */
  }
  struct llama_sampler *inner = llama_sampler_init_grammar(g->vocab, gbnf, "root");
  if (!inner) return NULL;
  free(g->slot[k].text);
  if (g->slot[k].proto) llama_sampler_free(g->slot[k].proto);
  g->slot[k].text = tt_xstrdup(gbnf);
  g->slot[k].proto = tt_gs_wrap(inner, g, (tt_u8){0, 0x80, 0xBF});
  g->slot[k].used = ++g->clock;
  return llama_sampler_clone(g->slot[k].proto);
}
