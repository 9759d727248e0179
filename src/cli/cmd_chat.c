/* cmd_chat.c — `tabletalk chat DB`: questions and follow-ups in one thread
 * (by default one thread per database), with line editing and history
 * (libedit, loaded only by chat on a terminal), a reply to a clarifying
 * question continuing that question, and a few slash commands. Ctrl-C
 * cancels the current question, not the chat. */
#include "cli/cli.h"

#include <libgen.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

static const tt_opt_group *const tt_chat_groups[] = {&tt_opts_run, &tt_opts_model, &tt_opts_limits, &tt_opts_db,
                                                     &tt_opts_chart, NULL};
const tt_cmd_spec tt_cmd_chat = {
    .name = "chat",
    .usage = "tabletalk chat DB [options]",
    .about = "Ask questions about DB (a SQLite file, a .csv or .tsv file or a folder of\n"
             "them) one after another; follow-ups see the earlier ones (one thread per\n"
             "database unless --thread names one).",
    .groups = tt_chat_groups,
    .footer = "In the chat: /new /sql /trace /thread /help /quit; Ctrl-C cancels a question.",
    .args = TT_COMPLETE_FILE,
    .doc =
        "Questions and follow-ups about *DB* with line editing and history, in one thread per "
        "database unless `--thread` names one. In the chat: /new starts a fresh thread, /sql "
        "shows the SQL of the last answer, /trace the steps of the last question, /thread the "
        "thread's name, /help the commands, /quit leaves (also exit, quit, Ctrl-D). Lines pasted "
        "at once are one question; a line ending in a backslash continues on the next. A reply "
        "to a clarifying question continues that question. Ctrl-C cancels the current question, "
        "not the chat.",
};

static int tt_chat_option(void *ud, int id, const char *arg) {
  int r = tt_cli_agent_option(id, arg, ud, "chat");
  return r > 0 ? r : 0;
}

static const char tt_chat_help[] =
    "/new      start a fresh thread (earlier questions are forgotten)\n"
    "/sql      show the SQL of the last answer\n"
    "/trace    show the steps of the last question\n"
    "/thread   show the thread name\n"
    "/quit     leave (also exit, quit or Ctrl-D)\n"
    "A question may span lines: paste it, or end a line with \\ to go on.\n";

typedef struct tt_chat_state {
  tt_cli_env *env;
  char *thread;
  char *last_sql;
  char last_run[64];
  bool tty;
  bool quiet;
  bool no_preview;
  bool show_thinking;
  volatile sig_atomic_t *cancel;
} tt_chat_state;

static char *tt_default_thread(const char *db_path) {
  char *copy = tt_xstrdup(db_path);
  char *base = basename(copy);
  char *dot = strrchr(base, '.');
  if (dot && dot != base) *dot = '\0';
  char *name = tt_xasprintf("chat-%s", base);
  free(copy);
  return name;
}

/* libedit's readline API, loaded when chat runs on a terminal (so no other
 * command pays for loading it). */
static struct {
  char *(*readline)(const char *prompt);
  int (*add_history)(const char *line);
  int (*read_history)(const char *file);
  int (*write_history)(const char *file);
} tt_edit;

/* false (and a warning) when libedit cannot be loaded: lines are then read
 * without editing. */
static bool tt_edit_load(void) {
  static const char *const files[] = {"libedit.so.2", "libedit.so", NULL};
  const tt_dl_sym syms[] = {
      {"readline", &tt_edit.readline},
      {"add_history", &tt_edit.add_history},
      {"read_history", &tt_edit.read_history},
      {"write_history", &tt_edit.write_history},
  };
  char why[200];
  if (tt_dl_load(files, NULL, syms, sizeof syms / sizeof syms[0], why, sizeof why) == TT_DL_OK) return true;
  fprintf(stderr, "tabletalk: warning: no line editing (libedit: %s); install libedit2 for it\n", why);
  return false;
}

/* True when more typed or pasted input is already waiting: the rest of a
 * paste arrives within a few milliseconds of its first line. */
static bool tt_input_pending(void) {
  struct pollfd p = {.fd = STDIN_FILENO, .events = POLLIN};
  return poll(&p, 1, 15) > 0 && (p.revents & POLLIN);
}

static char *tt_read_one(const tt_chat_state *st, const char *prompt) {
  if (st->tty) return tt_edit.readline(prompt);
  char *line = NULL;
  size_t cap = 0;
  ssize_t n = getline(&line, &cap, stdin);
  if (n < 0) {
    free(line);
    return NULL;
  }
  if (n && line[n - 1] == '\n') line[n - 1] = '\0';
  return line;
}

/* One question: a line, plus on a terminal the lines pasted with it, plus
 * the next line after one that ends in a backslash. NULL at the end. */
static char *tt_read_line(const tt_chat_state *st) {
  char *line = tt_read_one(st, "tabletalk> ");
  if (!line) return NULL;
  tt_buf q = TT_BUF_INIT;
  tt_buf_puts(&q, line);
  free(line);
  for (;;) {
    bool cont = q.len && q.data[q.len - 1] == '\\';
    if (cont) q.len--; /* the backslash goes */
    if (!cont && !(st->tty && tt_input_pending())) break;
    char *more = tt_read_one(st, "      ...> ");
    if (!more) break;
    tt_buf_putc(&q, '\n');
    tt_buf_puts(&q, more);
    free(more);
  }
  return tt_buf_detach(&q);
}

/* "exit" or "quit" alone leaves, as in most shells and REPLs. */
static bool tt_is_leave_word(const char *s) {
  return strcasecmp(s, "exit") == 0 || strcasecmp(s, "quit") == 0;
}

static void tt_chat_ask(tt_chat_state *st, const char *question) {
  tt_ui *ui = tt_ui_new(st->quiet, false, st->cancel);
  tt_ui_set_preview(ui, !st->no_preview);
  tt_ui_set_thinking(ui, st->show_thinking);
  tt_session_hooks hooks;
  tt_ui_hooks(ui, &hooks);
  tt_run run;
  tt_ask_result info;
  tt_session_ask(st->env->session, st->thread, question, &hooks, &run, &info);
  tt_ui_done(ui);
  if (run.status == TT_RUN_CANCELLED) {
    fprintf(stderr, "(cancelled)\n");
  } else {
    tt_ui_print_result(ui, &run, &info, st->thread, NULL);
    if (run.status == TT_RUN_CLARIFY && !st->quiet)
      fprintf(stderr, "(answer it as your next message)\n");
  }
  if (run.sql) {
    free(st->last_sql);
    st->last_sql = tt_xstrdup(run.sql);
  }
  snprintf(st->last_run, sizeof st->last_run, "%s", info.run_id);
  tt_ui_free(ui);
  tt_run_free(&run);
  tt_interrupt_clear();
}

/* Returns false when the chat should end. */
static bool tt_chat_command(tt_chat_state *st, const char *cmd) {
  if (strcmp(cmd, "/quit") == 0 || strcmp(cmd, "/exit") == 0) return false;
  if (strcmp(cmd, "/help") == 0) {
    fputs(tt_chat_help, stdout);
  } else if (strcmp(cmd, "/new") == 0) {
    char stamp[9];
    tt_random_hex(stamp, 4);
    char *base = tt_default_thread(tt_service_target(st->env->svc)->shown);
    free(st->thread);
    st->thread = tt_xasprintf("%s-%s", base, stamp);
    free(base);
    printf("new thread %s\n", st->thread);
  } else if (strcmp(cmd, "/sql") == 0) {
    if (st->last_sql) {
      tt_buf b = TT_BUF_INIT;
      tt_escape_terminal(&b, st->last_sql, strlen(st->last_sql), NULL);
      printf("%s\n", tt_buf_cstr(&b));
      tt_buf_free(&b);
    } else {
      printf("no SQL yet in this chat\n");
    }
  } else if (strcmp(cmd, "/trace") == 0) {
    if (st->last_run[0]) tt_trace_print(tt_config_state_dir(tt_service_config(st->env->svc)), st->last_run, false);
    else printf("no question asked yet in this chat\n");
  } else if (strcmp(cmd, "/thread") == 0) {
    printf("%s\n", st->thread);
  } else {
    printf("unknown command %s; /help lists them\n", cmd);
  }
  fflush(stdout);
  return true;
}

int cmd_chat(int argc, char **argv) {
  tt_cli_agent_opts o;
  tt_cli_agent_defaults(&o);
  int rc0 = tt_opts_parse(&tt_cmd_chat, argc, argv, 1, tt_chat_option, &o);
  if (rc0 == TT_OPTS_GO && argc - optind != 1) rc0 = tt_usage_error("chat", "give one database file");
  if (rc0 != TT_OPTS_GO) {
    tt_cli_agent_free(&o);
    return rc0;
  }
  tt_cli_env env;
  o.cfg.db = argv[optind];
  int rc = tt_cli_env_open(&env, "chat", &o);
  if (rc) {
    tt_cli_env_close(&env);
    tt_cli_agent_free(&o);
    return rc;
  }
  tt_chat_state st = {.env = &env, .tty = isatty(STDIN_FILENO) && isatty(STDOUT_FILENO),
                      .quiet = o.quiet, .no_preview = o.no_preview,
                      .show_thinking = o.show_thinking};
  st.thread = o.thread ? tt_xstrdup(o.thread) : tt_default_thread(tt_service_target(env.svc)->shown);
  st.cancel = tt_interrupt_install();
  char *history = tt_xasprintf("%s/chat_history", tt_config_state_dir(&o.cfg));
  if (st.tty && !tt_edit_load()) st.tty = false;
  if (st.tty) {
    tt_edit.read_history(history);
    tt_term t = tt_term_probe(stdout);
    printf("%stabletalk chat on %s — model %s — thread %s. /help for commands.%s\n",
           tt_term_dim(&t), argv[optind], tt_llm_model(tt_models_shared(tt_service_models(env.svc), NULL)), st.thread, tt_term_reset(&t));
  }
  for (;;) {
    char *line = tt_read_line(&st);
    if (!line) {
      if (*st.cancel) { /* Ctrl-C at the prompt: a fresh prompt */
        tt_interrupt_clear();
        if (st.tty) printf("\n");
        continue;
      }
      break;
    }
    char *s = line;
    while (*s == ' ' || *s == '\t') s++;
    size_t n = strlen(s);
    while (n && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\r')) s[--n] = '\0';
    bool go_on = true;
    if (*s) {
      if (st.tty) tt_edit.add_history(s);
      if (*s == '/') go_on = tt_chat_command(&st, s);
      else if (tt_is_leave_word(s)) go_on = false;
      else tt_chat_ask(&st, s);
    }
    free(line);
    if (!go_on) break;
  }
  if (st.tty) {
    tt_edit.write_history(history);
    printf("\n");
  }
  free(history);
  free(st.thread);
  free(st.last_sql);
  tt_cli_env_close(&env);
  tt_cli_agent_free(&o);
  return TT_EXIT_OK;
}
