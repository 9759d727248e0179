/* sqlprompt.c — the SQL writers' own prompts: the single user message each
 * was fine-tuned on, filled in, and the query read back out of the reply.
 * A model that only ever saw one prompt shape writes its best SQL when it
 * sees that shape again, so the templates below are kept byte for byte;
 * what tabletalk adds (the context of a follow-up, an earlier query and
 * its error) goes where each template already carries extra knowledge.
 *
 * Sources (Apache-2.0):
 * - OmniSQL: RUCKBReasoning/OmniSQL, train_and_evaluate/process_dataset.py,
 *   input_prompt_template (the training and evaluation prompt; the README
 *   shows the same text with an untagged ``` block); external knowledge is
 *   joined before the question with a newline; the reply is read by
 *   infer.py's parse_response: the last ```sql block.
 *   https://github.com/RUCKBReasoning/OmniSQL
 * - XiYanSQL-QwenCoder: XGenerationLab/XiYanSQL-QwenCoder, README.md,
 *   nl2sqlite_template_cn (the schema in M-Schema, evidence in
 *   【参考信息】, ending by opening a ```sql block).
 *   https://github.com/XGenerationLab/XiYanSQL-QwenCoder */
#include "llm/llm_internal.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* ---- OmniSQL -------------------------------------------------------------------- */

static const char tt_omni_head[] =
    "Task Overview:\n"
    "You are a data science expert. Below, you are provided with a database schema and a "
    "natural language question. Your task is to understand the schema and generate a valid SQL "
    "query to answer the question.\n"
    "\n"
    "Database Engine:\n";
/* engine */
static const char tt_omni_schema[] = "\n\nDatabase Schema:\n";
/* schema, then a newline */
static const char tt_omni_question[] =
    "This schema describes the database's structure, including tables, columns, primary keys, "
    "foreign keys, and any relevant relationships or constraints.\n"
    "\n"
    "Question:\n";
/* question */
static const char tt_omni_instructions[] =
    "\n\nInstructions:\n"
    "- Make sure you only output the information that is asked in the question. If the question "
    "asks for a specific column, make sure to only include that column in the SELECT clause, "
    "nothing more.\n"
    "- The generated query should return all of the information asked in the question without "
    "any missing or extra information.\n"
    "- Before generating the final SQL query, please think through the steps of how to write the "
    "query.\n";
/* notes, one "- " line each */
static const char tt_omni_tail[] =
    "\n"
    "Output Format:\n"
    "In your answer, please enclose the generated SQL query in a code block:\n"
    "```sql\n"
    "-- Your SQL query\n"
    "```\n"
    "\n"
    "Take a deep breath and think step by step to find the correct SQL query.\n";

static const char *tt_str(const char *s) { return s ? s : ""; }

/* One more item of the Instructions list; the lines after its first are
 * indented under it. */
static void tt_put_bullet(tt_buf *b, const char *note) {
  tt_buf_puts(b, "- ");
  for (const char *p = note; *p; p++) {
    tt_buf_putc(b, *p);
    if (*p == '\n' && p[1]) tt_buf_puts(b, "  ");
  }
  if (!*note || note[strlen(note) - 1] != '\n') tt_buf_putc(b, '\n');
}

static void tt_render_omnisql(const tt_sql_prompt *p, tt_buf *b, size_t *stable) {
  tt_buf_puts(b, tt_omni_head);
  tt_buf_puts(b, tt_str(p->engine));
  tt_buf_puts(b, tt_omni_schema);
  tt_buf_puts(b, tt_str(p->schema));
  tt_buf_putc(b, '\n');
  *stable = b->len; /* the question comes after this */
  tt_buf_puts(b, tt_omni_question);
  /* external knowledge "\n" question, as the training data joins them */
  if (p->context && *p->context) tt_buf_printf(b, "%s\n", p->context);
  tt_buf_puts(b, tt_str(p->question));
  tt_buf_puts(b, tt_omni_instructions);
  for (size_t i = 0; i < p->nnotes; i++) tt_put_bullet(b, tt_str(p->notes[i]));
  tt_buf_puts(b, tt_omni_tail);
}

/* ---- XiYanSQL ------------------------------------------------------------------- */

/* The template, cut where the dialect, question, schema and evidence go.
 * Its first line: "You are a {dialect} expert; read and understand the
 * [database schema] below and the [reference information] that may help,
 * and use your {dialect} knowledge to write SQL that answers the [user
 * question]." */
static const char tt_xiyan_you_are[] = "你是一名";
static const char tt_xiyan_expert[] =
    "专家，现在需要阅读并理解下面的【数据库schema】描述，以及可能用到的【参考信息】，并运用";
static const char tt_xiyan_knowledge[] = "知识生成sql语句回答【用户问题】。\n";
static const char tt_xiyan_question[] = "【用户问题】\n";
static const char tt_xiyan_schema[] = "【数据库schema】\n";
static const char tt_xiyan_evidence[] = "【参考信息】\n";

static void tt_render_xiyan(const tt_sql_prompt *p, tt_buf *b, size_t *stable) {
  const char *dialect = tt_str(p->engine);
  tt_buf_printf(b, "%s%s%s%s%s", tt_xiyan_you_are, dialect, tt_xiyan_expert, dialect,
                tt_xiyan_knowledge);
  tt_buf_puts(b, tt_xiyan_question);
  *stable = b->len; /* this prompt states the question before the schema */
  tt_buf_printf(b, "%s\n\n", tt_str(p->question));
  tt_buf_printf(b, "%s%s\n\n", tt_xiyan_schema, tt_str(p->schema));
  /* the evidence: what the question follows on, then the notes */
  tt_buf_puts(b, tt_xiyan_evidence);
  bool any = false;
  if (p->context && *p->context) {
    tt_buf_puts(b, p->context);
    any = true;
  }
  for (size_t i = 0; i < p->nnotes; i++) {
    if (any) tt_buf_putc(b, '\n');
    tt_buf_puts(b, tt_str(p->notes[i]));
    any = true;
  }
  tt_buf_puts(b, "\n\n");
  tt_buf_printf(b, "%s%s\n\n```sql", tt_xiyan_question, tt_str(p->question));
}

char *tt_sql_prompt_render(tt_sql_style style, const tt_sql_prompt *p, size_t *stable) {
  tt_buf b = TT_BUF_INIT;
  size_t keep = 0;
  if (style == TT_SQL_STYLE_XIYAN) tt_render_xiyan(p, &b, &keep);
  else tt_render_omnisql(p, &b, &keep);
  if (stable) *stable = keep;
  return tt_buf_detach(&b);
}

/* ---- reading the query ------------------------------------------------------------- */

typedef enum { TT_BLOCK_SQL, TT_BLOCK_BARE, TT_BLOCK_OTHER } tt_block_kind;

/* A fence line: optional indentation, then three or more backticks; the
 * count and the info string after them (trimmed). 0 when not a fence. */
static size_t tt_fence(const char *line, size_t n, const char **info, size_t *info_len) {
  size_t i = 0;
  while (i < n && (line[i] == ' ' || line[i] == '\t')) i++;
  size_t ticks = 0;
  while (i + ticks < n && line[i + ticks] == '`') ticks++;
  if (ticks < 3) return 0;
  const char *s = line + i + ticks, *e = line + n;
  while (s < e && isspace((unsigned char)*s)) s++;
  while (e > s && isspace((unsigned char)e[-1])) e--;
  *info = s;
  *info_len = (size_t)(e - s);
  return ticks;
}

static tt_block_kind tt_block_kind_of(const char *info, size_t n) {
  if (!n) return TT_BLOCK_BARE;
  size_t w = 0;
  while (w < n && !isspace((unsigned char)info[w])) w++;
  if ((w == 3 && strncasecmp(info, "sql", 3) == 0) || (w == 6 && strncasecmp(info, "sqlite", 6) == 0))
    return TT_BLOCK_SQL;
  return TT_BLOCK_OTHER;
}

static bool tt_blank(const tt_buf *b) {
  for (size_t i = 0; i < b->len; i++)
    if (!isspace((unsigned char)b->data[i])) return false;
  return true;
}

typedef struct tt_found {
  tt_buf text;
  bool unclosed, have;
} tt_found;

/* Keeps a block that ended (or that the reply ended in) when it is the
 * latest of its kind with something in it. */
static void tt_keep_block(tt_found *sql, tt_found *bare, tt_block_kind kind, const tt_buf *body,
                          bool unclosed) {
  tt_found *f = kind == TT_BLOCK_SQL ? sql : kind == TT_BLOCK_BARE ? bare : NULL;
  if (!f || tt_blank(body)) return;
  tt_buf_reset(&f->text);
  tt_buf_append(&f->text, body->data ? body->data : "", body->len);
  f->unclosed = unclosed;
  f->have = true;
}

char *tt_sql_from_reply(tt_sql_style style, const char *reply, bool *unclosed) {
  *unclosed = false;
  if (!reply) return NULL;
  tt_found sql = {TT_BUF_INIT, false, false}, bare = {TT_BUF_INIT, false, false};
  tt_buf body = TT_BUF_INIT;
  bool in = false;
  size_t ticks = 0;
  tt_block_kind kind = TT_BLOCK_OTHER;
  const char *p = reply;
  /* XiYanSQL's prompt ends with "```sql": its reply may be the query
   * itself, then a closing fence or nothing */
  if (style == TT_SQL_STYLE_XIYAN) {
    const char *q = p;
    while (isspace((unsigned char)*q)) q++;
    const char *info;
    size_t info_len;
    if (!tt_fence(q, strcspn(q, "\n"), &info, &info_len)) {
      in = true;
      ticks = 3;
      kind = TT_BLOCK_SQL;
    }
  }
  while (*p) {
    size_t n = strcspn(p, "\n");
    const char *next = p[n] ? p + n + 1 : p + n;
    size_t len = n && p[n - 1] == '\r' ? n - 1 : n;
    const char *info;
    size_t info_len;
    size_t t = tt_fence(p, len, &info, &info_len);
    if (!in) {
      /* an info string with a backtick is inline code, not a fence */
      if (t && !memchr(info, '`', info_len)) {
        in = true;
        ticks = t;
        kind = tt_block_kind_of(info, info_len);
        tt_buf_reset(&body);
      }
    } else if (t >= ticks && info_len == 0) { /* the closing fence */
      tt_keep_block(&sql, &bare, kind, &body, false);
      in = false;
    } else {
      /* "SELECT 1;```": a fence written at the end of the last line */
      size_t e = len, k = 0;
      while (e > 0 && isspace((unsigned char)p[e - 1])) e--;
      while (k < e && p[e - 1 - k] == '`') k++;
      if (k >= ticks && k < e) {
        tt_buf_append(&body, p, e - k);
        tt_buf_putc(&body, '\n');
        tt_keep_block(&sql, &bare, kind, &body, false);
        in = false;
      } else {
        tt_buf_append(&body, p, len);
        tt_buf_putc(&body, '\n');
      }
    }
    p = next;
  }
  if (in) tt_keep_block(&sql, &bare, kind, &body, true);
  tt_found *f = sql.have ? &sql : bare.have ? &bare : NULL;
  char *out = NULL;
  if (f) {
    const char *s = tt_buf_cstr(&f->text), *e = s + f->text.len;
    while (s < e && isspace((unsigned char)*s)) s++;
    while (e > s && isspace((unsigned char)e[-1])) e--;
    out = tt_xstrndup(s, (size_t)(e - s));
    *unclosed = f->unclosed;
  }
  tt_buf_free(&sql.text);
  tt_buf_free(&bare.text);
  tt_buf_free(&body);
  return out;
}
