/* cmd_chat.c — `tabletalk chat DB`: questions and follow-ups in one thread
 * (by default one thread per database), with line editing and history
 * (libedit), a reply to a clarifying question continuing that question, and
 * a few slash commands. Ctrl-C cancels the current question, not the chat. */
#include "cli/cli.h"

#include <editline/readline.h>
#include <libgen.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

static const char tt_chat_usage[] =
    "Usage: tabletalk chat DB [options]\n"
    "\n"
    "Ask questions about DB one after another; follow-ups see\n"
    "the earlier questions, their SQL and answers.\n"
    "DB is a SQLite file, a .csv or .tsv file, or a folder of them (a table\n"
    "per file, loaded in memory; nothing is written beside them).\n"
    "\n"
    "Options:\n"
    "      --thread NAME      the thread to continue (default: one per database)\n"
    "  -q, --quiet            no progress lines\n"
    "  -h, --help             show this help\n"
    TT_AGENT_OPTIONS_HELP
    "\n"
    "In the chat: /new (fresh thread), /sql (last SQL), /trace (last run),\n"
    "/thread, /help, /quit (or exit, quit, Ctrl-D). A pasted question of\n"
    "several lines is one question; so is a line ending in \\ and the next.\n"
    "Ctrl-C cancels the question being answered.\n";

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

/* True when more typed or pasted input is already waiting: the rest of a
 * paste arrives within a few milliseconds of its first line. */
static bool tt_input_pending(void) {
  struct pollfd p = {.fd = STDIN_FILENO, .events = POLLIN};
  return poll(&p, 1, 15) > 0 && (p.revents & POLLIN);
}

static char *tt_read_one(const tt_chat_state *st, const char *prompt) {
  if (st->tty) return readline(prompt);
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
  tt_agent_hooks hooks;
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
    char *base = tt_default_thread(st->env->db_path);
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
    if (st->last_run[0]) tt_trace_print(st->env->state_dir, st->last_run, false);
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
  static const struct option opts[] = {
      TT_AGENT_LONG_OPTIONS,
      {"quiet", no_argument, NULL, 'q'},
      {"help", no_argument, NULL, 'h'},
      {NULL, 0, NULL, 0},
  };
  tt_cli_agent_opts o;
  tt_cli_agent_defaults(&o);
  int c;
  optind = 1;
  opterr = 0;
  while ((c = getopt_long(argc, argv, ":qh", opts, NULL)) != -1) {
    int r = tt_cli_agent_option(c, optarg, &o, "chat");
    if (r > 0) return r;
    if (r == 0) continue;
    switch (c) {
    case 'q': o.quiet = true; break;
    case 'h': fputs(tt_chat_usage, stdout); return TT_EXIT_OK;
    case ':': return tt_usage_error("chat", "option '%s' needs a value", argv[optind - 1]);
    default: return tt_usage_error("chat", "unknown option '%s'", argv[optind - 1]);
    }
  }
  if (argc - optind != 1) return tt_usage_error("chat", "give one database file");
  tt_cli_env env;
  int rc = tt_cli_env_open(&env, argv[optind], &o);
  if (rc) {
    tt_cli_env_close(&env);
    return rc;
  }
  tt_chat_state st = {.env = &env, .tty = isatty(STDIN_FILENO) && isatty(STDOUT_FILENO),
                      .quiet = o.quiet, .no_preview = o.no_preview,
                      .show_thinking = o.show_thinking};
  st.thread = o.thread ? tt_xstrdup(o.thread) : tt_default_thread(env.db_path);
  st.cancel = tt_interrupt_install();
  char *history = tt_xasprintf("%s/chat_history", env.state_dir);
  if (st.tty) {
    read_history(history);
    tt_term t = tt_term_probe(stdout);
    printf("%stabletalk chat on %s — model %s — thread %s. /help for commands.%s\n",
           tt_term_dim(&t), argv[optind], tt_llm_model(env.llm), st.thread, tt_term_reset(&t));
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
      if (st.tty) add_history(s);
      if (*s == '/') go_on = tt_chat_command(&st, s);
      else if (tt_is_leave_word(s)) go_on = false;
      else tt_chat_ask(&st, s);
    }
    free(line);
    if (!go_on) break;
  }
  if (st.tty) {
    write_history(history);
    printf("\n");
  }
  free(history);
  free(st.thread);
  free(st.last_sql);
  tt_cli_env_close(&env);
  return TT_EXIT_OK;
}
