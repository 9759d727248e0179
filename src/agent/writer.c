/* writer.c — the agent for SQL writers (OmniSQL, XiYanSQL: the
 * "sql-writer" profile). Such a model was fine-tuned on one prompt and one
 * reply shape only: a single user message with the schema, the question
 * and fixed instructions, answered by reasoning and a ```sql block. Tool
 * calls and a system prompt of rules are shapes it never saw, so here it
 * gets its own prompt (llm/sqlprompt.c), writes freely (no grammar), and
 * the last ```sql block of its reply is the query. The query runs
 * read-only as any other; on an error the same prompt comes back with the
 * failed query and the error added to its instructions, up to the repair
 * budget. A second, short step asks the model to phrase the answer from
 * the rows; when its reply is unusable (code, numbers the rows do not
 * hold, cut off) a plain sentence built from the result stands instead.
 *
 * What the tool agent does that a writer cannot: it never asks the user
 * back (it answers the likeliest reading, and the answer step is asked to
 * say which), and it draws a chart from the result itself when the
 * question asks for one. */
#define _GNU_SOURCE /* strcasestr */
#include "agent/agent_internal.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

/* Rows the answer step reads: enough to phrase an answer from. */
#define TT_WRITER_ROWS_TO_MODEL 20

static bool tt_contains_nocase(const char *s, const char *what) {
  return s && strcasestr(s, what) != NULL;
}

typedef struct tt_writer_state {
  tt_agent *a;
  const tt_agent_hooks *hooks;
  tt_run *out;
  const char *question;
  tt_backing own, all;
  int llm_calls;
} tt_writer_state;

static void tt_writer_emit(const tt_writer_state *st, tt_event *ev) {
  tt_agent_emit(st->hooks, st->llm_calls, ev);
}

char *tt_writer_schema(const tt_agent *a, const tt_card *const *cards, size_t n) {
  tt_buf b = TT_BUF_INIT;
  if (a->writer_style == TT_SQL_STYLE_XIYAN) {
    const char *path = a->db ? tt_db_path(a->db) : NULL;
    const char *base = path ? strrchr(path, '/') : NULL;
    base = base ? base + 1 : path ? path : "database";
    size_t len = strcspn(base, ".");
    char *db_id = tt_xstrndup(base, len ? len : strlen(base));
    tt_schema_render_mschema(a->schema, cards, n, db_id, &b);
    free(db_id);
  } else {
    tt_schema_render_ddl(a->schema, cards, n, &b);
  }
  return tt_buf_detach(&b);
}

/* The schema for this question: the whole one made once, or the tables
 * the question needs when the whole is over the budget. */
static char *tt_writer_schema_for(const tt_agent *a, const char *question) {
  if (a->writer_schema) return tt_xstrdup(a->writer_schema);
  size_t n = tt_schema_count(a->schema);
  const tt_card **cards = tt_xcalloc(n ? n : 1, sizeof *cards);
  tt_schema_rank_opts ro = {0};
  tt_agent_embed_rank_opts(a, question, &ro);
  tt_schema_ranking *r = tt_schema_rank_with(a->schema, question, a->o.schema_budget, &ro);
  size_t k = tt_schema_select_ranked(a->schema, r, cards);
  tt_schema_ranking_free(r);
  char *s = tt_writer_schema(a, cards, k);
  free(cards);
  return s;
}

/* What a follow-up builds on: the thread's latest questions that ran SQL,
 * as the writers' templates carry external knowledge. NULL when none. */
static char *tt_writer_context(const tt_agent *a, const tt_turn *history, size_t nhistory) {
  size_t first = nhistory > (size_t)a->o.history_turns ? nhistory - (size_t)a->o.history_turns : 0;
  tt_buf b = TT_BUF_INIT;
  for (size_t i = first; i < nhistory; i++) {
    if (!history[i].sql || !history[i].question) continue;
    if (b.len) tt_buf_putc(&b, '\n');
    tt_buf_printf(&b, "Earlier question: %s\nIts SQL: %s", history[i].question, history[i].sql);
  }
  if (!b.len) return NULL;
  tt_buf_puts(&b, "\nThe question below may refer to these.");
  return tt_buf_detach(&b);
}

/* One free-text model call on a single user message. */
static bool tt_writer_call(tt_writer_state *st, const char *prompt, size_t stable,
                           tt_llm_reply *r, tt_error *err) {
  tt_chat chat = {0};
  tt_chat_add(&chat, TT_ROLE_USER, prompt);
  tt_llm_call call = {
      .cancel = st->hooks ? st->hooks->cancel : NULL,
      .allow_cut = true,
      .stable_prefix = stable,
      .max_reply_bytes = TT_CALL_REPLY_BYTES,
  };
  tt_event wait = {.kind = TT_EV_MODEL_WAIT};
  tt_writer_emit(st, &wait);
  bool ok = tt_llm_chat(st->a->llm, &chat, &call, r, err);
  tt_chat_free(&chat);
  st->llm_calls++;
  tt_run_totals *t = &st->out->totals;
  t->llm_calls++;
  t->prompt_tokens += r->usage.prompt;
  t->cached_tokens += r->usage.cached;
  t->completion_tokens += r->usage.completion;
  t->llm_ms += r->latency_ms;
  tt_agent_emit_call(st->hooks, st->llm_calls, ok ? r : NULL, err);
  return ok;
}

static bool tt_reply_was_cut(const tt_llm_reply *r) {
  return r->finish_reason && strcmp(r->finish_reason, "length") == 0;
}

/* The note that goes back with the prompt after a failed attempt. */
static char *tt_writer_note(const char *sql, const char *error) {
  if (!sql)
    return tt_xasprintf("Your previous answer to this question had no ```sql code block%s. "
                        "Enclose the final SQL query in one.", error ? error : "");
  return tt_xasprintf("Your previous query for this question was:\n```sql\n%s\n```\nIt failed "
                      "with this error: %s\nWrite a corrected query.", sql, error);
}

static char *tt_sql_args(const char *sql) {
  json_t *o = json_object();
  json_object_set_new(o, "sql", json_string(sql));
  char *s = json_dumps(o, JSON_COMPACT);
  json_decref(o);
  return s;
}

typedef enum { TT_TRY_RAN, TT_TRY_FAILED, TT_TRY_REFUSED, TT_TRY_STOP } tt_try_result;

/* One SQL attempt: the prompt with the notes so far, the reply, its query
 * run read-only. On failure a note for the next attempt is added. */
static tt_try_result tt_writer_try(tt_writer_state *st, const tt_sql_prompt *base, char ***notes,
                                   size_t *nnotes) {
  tt_agent *a = st->a;
  tt_run *out = st->out;
  tt_sql_prompt p = *base;
  p.notes = (const char *const *)*notes;
  p.nnotes = *nnotes;
  size_t stable = 0;
  char *prompt = tt_sql_prompt_render(a->writer_style, &p, &stable);
  tt_llm_reply r;
  tt_error lerr;
  bool ok = tt_writer_call(st, prompt, stable, &r, &lerr);
  free(prompt);
  if (!ok) {
    out->status = lerr.kind == TT_ERR_CANCELLED ? TT_RUN_CANCELLED : TT_RUN_FAILED;
    free(out->error);
    out->error = tt_xstrdup(lerr.message);
    tt_llm_reply_free(&r);
    return TT_TRY_STOP;
  }
  bool unclosed = false;
  char *sql = tt_sql_from_reply(a->writer_style, r.text, &unclosed);
  bool cut = tt_reply_was_cut(&r);
  tt_llm_reply_free(&r);
  char *note = NULL;
  tt_try_result res = TT_TRY_FAILED;
  out->totals.tool_calls++;
  if (!sql) {
    const char *why = cut ? " (the reply reached the token limit first: keep the reasoning short)"
                          : NULL;
    note = tt_writer_note(NULL, why);
    free(out->error);
    out->error = tt_xstrdup(cut ? "the reply reached the token limit without a ```sql block"
                                : "the reply had no ```sql block");
    tt_event ev = {.kind = TT_EV_SQL, .tool = "run_sql", .ok = false, .error = out->error};
    tt_writer_emit(st, &ev);
  } else {
    out->totals.sql_calls++;
    char *args = tt_sql_args(sql);
    tt_event ev = {.kind = TT_EV_SQL, .tool = "run_sql", .args = args, .sql = sql};
    tt_error err;
    double t0 = tt_now_ms();
    tt_result *rows = tt_agent_guarded_query(a, st->hooks ? st->hooks->cancel : NULL, sql,
                                             a->o.sql.max_rows, &err);
    ev.ms = tt_now_ms() - t0;
    if (rows) {
      ev.ok = true;
      ev.rows = (long)rows->nrows;
      ev.truncated = rows->truncated;
      tt_backing *both[] = {&st->own, &st->all};
      for (size_t i = 0; i < 2; i++) {
        tt_backing_add_result(both[i], rows);
        tt_backing_add_text(both[i], sql);
      }
      tt_result_free(out->rows);
      out->rows = rows;
      free(out->sql);
      out->sql = tt_xstrdup(sql);
      res = TT_TRY_RAN;
    } else if (err.kind == TT_ERR_REFUSED && tt_db_refusal_is_write(err.reason)) {
      ev.error = err.message;
      ev.sql_error = &err;
      out->refusal = tt_xstrdup(err.message);
      out->refused_sql = tt_xstrdup(sql);
      res = TT_TRY_REFUSED;
    } else if (err.kind == TT_ERR_CANCELLED) {
      ev.error = err.message;
      ev.sql_error = &err;
      out->status = TT_RUN_CANCELLED;
      free(out->error);
      out->error = tt_xstrdup("cancelled");
      res = TT_TRY_STOP;
    } else {
      char *hint = err.kind == TT_ERR_SQL
                       ? tt_hint_for_error(tt_schema_catalog(a->schema), sql, err.message)
                       : NULL;
      char *text = tt_xasprintf("%s%s", err.message, hint ? hint : "");
      ev.error = text;
      ev.sql_error = &err;
      note = tt_writer_note(sql, text);
      free(out->error);
      out->error = text;
      free(hint);
    }
    tt_writer_emit(st, &ev);
    free(args);
  }
  if (note) {
    *notes = tt_xrealloc(*notes, (*nnotes + 1) * sizeof **notes);
    (*notes)[(*nnotes)++] = note;
  }
  free(sql);
  return res;
}

/* ---- charts -------------------------------------------------------------------- */

/* The question asks for a picture. */
static bool tt_wants_chart(const char *q) {
  static const char *const words[] = {"chart", "plot", "graph", "diagram", "visuali",
                                      "histogram", "draw"};
  for (size_t i = 0; i < sizeof words / sizeof words[0]; i++)
    if (tt_contains_nocase(q, words[i])) return true;
  return false;
}

static bool tt_column_numeric(const tt_result *r, size_t c) {
  size_t nums = 0;
  for (size_t i = 0; i < r->nrows; i++) {
    tt_valtype t = tt_result_cell(r, i, c)->type;
    if (t == TT_VAL_TEXT || t == TT_VAL_BLOB) return false;
    nums += t != TT_VAL_NULL;
  }
  return nums > 0;
}

/* A chart spec read off the result and the question: the first column
 * that is not a number (else the first) across, the first other numeric
 * column up; a line over years, months or dates, a pie when asked for. */
static json_t *tt_writer_chart_spec(const char *question, const tt_result *r, tt_error *err) {
  size_t x = r->ncols, y = r->ncols;
  for (size_t c = 0; c < r->ncols && x == r->ncols; c++)
    if (!tt_column_numeric(r, c)) x = c;
  if (x == r->ncols) x = 0;
  for (size_t c = 0; c < r->ncols && y == r->ncols; c++)
    if (c != x && tt_column_numeric(r, c)) y = c;
  if (r->ncols < 2 || y == r->ncols) {
    tt_error_set(err, TT_ERR_CONFIG,
                 "the result has no column of numbers to draw against another column");
    return NULL;
  }
  const char *xn = r->names[x];
  bool over_time = tt_contains_nocase(xn, "year") || tt_contains_nocase(xn, "month") ||
                   tt_contains_nocase(xn, "date") || tt_contains_nocase(xn, "day") ||
                   tt_contains_nocase(question, "over time") || tt_contains_nocase(question, "trend");
  const char *kind = tt_contains_nocase(question, "pie") ? "pie"
                     : tt_contains_nocase(question, "line") || over_time ? "line"
                                                                          : "bar";
  json_t *spec = json_object();
  json_object_set_new(spec, "kind", json_string(kind));
  json_object_set_new(spec, "x", json_string(xn));
  json_object_set_new(spec, "y", json_string(r->names[y]));
  json_object_set_new(spec, "title", tt_json_stringn(question, tt_utf8_prefix(question, strlen(question), 80)));
  return spec;
}

/* Draws the chart a question asked for; on failure err says what stopped it. */
static bool tt_writer_chart(tt_writer_state *st, tt_error *err) {
  tt_run *out = st->out;
  json_t *j = tt_writer_chart_spec(st->question, out->rows, err);
  tt_chart_spec *spec = j ? tt_chart_spec_from_json(j, err) : NULL;
  tt_chart *chart = spec ? tt_chart_build(spec, out->rows, err) : NULL;
  tt_buf desc = TT_BUF_INIT, path = TT_BUF_INIT;
  char *args = j ? json_dumps(j, JSON_COMPACT) : NULL, *etext = NULL;
  tt_event ev = {.kind = TT_EV_CHART, .tool = "make_chart", .args = args, .sql = out->sql};
  double t0 = tt_now_ms();
  if (chart && !tt_agent_keep_chart(st->hooks, out, chart, spec, out->sql, &desc, &path, err))
    chart = NULL;
  ev.ms = tt_now_ms() - t0;
  if (chart) {
    ev.ok = true;
    ev.rows = (long)out->rows->nrows;
    ev.chart = tt_buf_cstr(&desc);
    ev.chart_file = path.len ? tt_buf_cstr(&path) : NULL;
  } else { /* a copy: the event's readers may call tt_error_text themselves */
    etext = tt_xstrdup(tt_error_text(err));
    ev.error = etext;
  }
  tt_writer_emit(st, &ev);
  free(etext);
  free(args);
  json_decref(j);
  tt_chart_spec_free(spec);
  tt_buf_free(&desc);
  tt_buf_free(&path);
  return chart != NULL;
}

/* ---- the answer ------------------------------------------------------------------ */

char *tt_writer_template_answer(const tt_result *rows) {
  if (!rows || rows->nrows == 0) return tt_xstrdup("The query returned no rows.");
  tt_run r = {.rows = (tt_result *)rows, .sql = (char *)""};
  char *summary = tt_run_summary(&r);
  char *s = tt_xasprintf("The query returned %s.", summary);
  free(summary);
  return s;
}

char *tt_writer_answer_prompt(const char *question, const char *sql, const tt_result *rows,
                              bool chart) {
  tt_buf b = TT_BUF_INIT;
  tt_buf_printf(&b, "Question:\n%s\n\nThe SQL query that answers it:\n```sql\n%s\n```\n\n",
                question, sql);
  tt_buf_puts(&b, "[q1] ");
  tt_view_rows(&b, rows, TT_WRITER_ROWS_TO_MODEL);
  tt_buf_puts(&b, "\n\nAnswer the question in one or two plain sentences from this result, "
                  "with its numbers exactly as they are. Do not write SQL or code. If the "
                  "question could be read in more than one way, say in a few words which "
                  "reading the query answers. You may cite a value instead of copying it: "
                  "{{q1.r1.Column}} is that column of the first row, {{q1.sum(Column)}} (or "
                  "avg, min, max) a whole column, {{q1.count}} the rows; a format may follow "
                  "|, such as |0,000.00.");
  if (chart) tt_buf_puts(&b, " A chart of the result is shown with your answer.");
  tt_buf_putc(&b, '\n');
  return tt_buf_detach(&b);
}

/* Why the model's phrasing cannot stand (NULL: it can); fill: its
 * references filled in from the result. */
static const char *tt_answer_unusable(const tt_writer_state *st, const tt_llm_reply *r,
                                      const tt_fill *fill) {
  const char *t = r->text ? r->text : "";
  while (isspace((unsigned char)*t)) t++;
  if (!*t) return "the model's answer was empty";
  if (tt_reply_was_cut(r)) return "the model's answer reached the token limit";
  if (strstr(t, "```")) return "the model answered with code, not a sentence";
  if (strlen(t) > 1500) return "the model's answer was too long";
  if (fill->nerrors) return "the model's answer cites values the result does not hold";
  if (tt_check_numbers(fill->masked, st->question, &st->all, NULL) > 0)
    return "the model's answer states numbers the result does not hold";
  return NULL;
}

static void tt_writer_answer(tt_writer_state *st, bool chart_drawn, const char *chart_problem) {
  tt_run *out = st->out;
  char *prompt = tt_writer_answer_prompt(st->question, out->sql, out->rows, chart_drawn);
  tt_llm_reply r;
  tt_error lerr;
  bool ok = tt_writer_call(st, prompt, 0, &r, &lerr);
  free(prompt);
  /* its references, filled in from the result (labelled q1 in the prompt) */
  tt_ref_set refs = {0};
  tt_fill fill = {0};
  if (ok) {
    tt_results_keep(&refs, out->sql, out->rows);
    tt_refs_fill(&refs, NULL, r.text ? r.text : "", &fill);
  }
  const char *why = ok ? tt_answer_unusable(st, &r, &fill) : lerr.message;
  tt_buf text = TT_BUF_INIT;
  if (!why) {
    const char *s = fill.text, *e = s + strlen(s);
    while (isspace((unsigned char)*s)) s++;
    while (e > s && isspace((unsigned char)e[-1])) e--;
    tt_buf_append(&text, s, (size_t)(e - s));
  } else {
    char *t = tt_writer_template_answer(out->rows);
    tt_buf_puts(&text, t);
    free(t);
  }
  if (chart_problem) tt_buf_printf(&text, " No chart was drawn: %s.", chart_problem);
  tt_llm_reply_free(&r);
  out->answer = tt_buf_detach(&text);
  out->status = TT_RUN_ANSWERED;
  out->totals.tool_calls++;
  /* the template quotes the result itself; the model's words were checked,
   * its references filled in */
  out->verified = TT_VERIFIED_CHECKED;
  if (!why && fill.nfacts) {
    size_t lead = 0; /* the answer was trimmed of leading space: the facts move with it */
    for (const char *p = fill.text; isspace((unsigned char)*p); p++) lead++;
    tt_backing none = {0};
    if (tt_check_numbers(fill.masked, st->question, &none, NULL) == 0)
      out->verified = TT_VERIFIED_BOUND;
    for (size_t i = 0; i < fill.nfacts; i++) fill.facts[i].at -= lead;
    out->facts = fill.facts;
    out->nfacts = fill.nfacts;
    fill.facts = NULL;
    fill.nfacts = 0;
  }
  tt_fill_free(&fill);
  tt_results_free(&refs, out->rows);
  out->unbacked = tt_xcalloc(1, sizeof *out->unbacked);
  tt_event v = {.kind = TT_EV_VERIFY, .decision = "verified",
                .verified = tt_verified_name(out->verified), .nfacts = out->nfacts,
                .reason = why ? "the answer is a sentence built from the result (the model's "
                                "could not be used)"
                              : "every number is backed by a query result",
                .numbers_checked = tt_count_numbers(out->answer)};
  tt_writer_emit(st, &v);
  tt_event ev = {.kind = TT_EV_ANSWER, .tool = "answer", .ok = true, .text = out->answer};
  tt_writer_emit(st, &ev);
}

/* ---- one question ---------------------------------------------------------------- */

void tt_writer_ask(tt_agent *a, const tt_turn *history, size_t nhistory, const char *question,
                   const tt_agent_hooks *hooks, tt_run *out) {
  tt_writer_state st = {.a = a, .hooks = hooks, .out = out, .question = question};
  for (size_t i = 0; i < nhistory; i++) {
    tt_backing_add_list(&st.all, history[i].numbers);
    if (history[i].sql) tt_backing_add_text(&st.all, history[i].sql);
  }
  char *schema = tt_writer_schema_for(a, question);
  char *context = tt_writer_context(a, history, nhistory);
  tt_sql_prompt base = {.engine = tt_agent_dialect(a), .schema = schema, .question = question,
                        .context = context};
  char **notes = NULL;
  size_t nnotes = 0;
  /* each attempt is a query (the budget's tool call); one is kept for the answer */
  int attempts = a->o.max_failed_sql;
  if (attempts > a->o.max_tool_calls - 1) attempts = a->o.max_tool_calls - 1;
  if (attempts < 1) attempts = 1;
  tt_try_result res = TT_TRY_FAILED;
  for (int i = 0; i < attempts && res == TT_TRY_FAILED; i++) {
    if (hooks && hooks->cancel && *hooks->cancel) {
      out->status = TT_RUN_CANCELLED;
      free(out->error);
      out->error = tt_xstrdup("cancelled");
      res = TT_TRY_STOP;
      break;
    }
    res = tt_writer_try(&st, &base, &notes, &nnotes);
  }
  if (res == TT_TRY_RAN) {
    free(out->error);
    out->error = NULL;
    tt_error why = TT_ERROR_INIT;
    bool drawn = false;
    char *problem = NULL;
    if (tt_wants_chart(question)) {
      drawn = tt_writer_chart(&st, &why);
      if (!drawn) problem = tt_xstrdup(tt_error_text(&why));
    }
    tt_writer_answer(&st, drawn, problem);
    free(problem);
  } else if (res == TT_TRY_REFUSED) {
    out->status = TT_RUN_REFUSED;
    out->answer = tt_xstrdup("I cannot change data: tabletalk opens the database read-only, and "
                             "the query the model wrote would have written to it.");
  } else if (res == TT_TRY_FAILED) {
    out->status = TT_RUN_FAILED;
    char *last = out->error;
    out->error = tt_xasprintf("the model's query failed %d times in a row; the last error: %s",
                              attempts, last ? last : "none");
    out->answer = tt_xasprintf("I could not write a query that works for this question (%d "
                               "tries); the last error was: %s", attempts, last ? last : "none");
    free(last);
  }
  for (size_t i = 0; i < nnotes; i++) free(notes[i]);
  free(notes);
  free(schema);
  free(context);
  out->numbers = tt_backing_list(&st.own, 1000);
  tt_backing_free(&st.own);
  tt_backing_free(&st.all);
}
