/* cmd_completion.c — `tabletalk completion bash|zsh|fish`: prints a shell
 * completion script generated from the same option tables the parser uses
 * (tt_cmd_spec), so that completion knows every command, each command's
 * options, which options take a file, a folder or one of a few words, and
 * what a command's arguments are (a database file, a subcommand). */
#include "cli/cli.h"

#include <string.h>

static const tt_opt_group *const tt_completion_groups[] = {NULL};
const tt_cmd_spec tt_cmd_completion = {
    .name = "completion",
    .usage = "tabletalk completion bash|zsh|fish",
    .about = "Print a completion script for the shell: commands, their options, and\n"
             "files or folders where a command or an option wants one. Try it with\n"
             "  source <(tabletalk completion bash)       (bash or zsh)\n"
             "  tabletalk completion fish | source\n"
             "or save it where the shell looks (see `man tabletalk`):\n"
             "  ~/.local/share/bash-completion/completions/tabletalk\n"
             "  _tabletalk in a folder of zsh's $fpath\n"
             "  ~/.config/fish/completions/tabletalk.fish",
    .groups = tt_completion_groups,
    .args = TT_COMPLETE_WORDS,
    .words = "bash zsh fish",
    .doc =
        "Print a completion script for the shell, made from the same option tables the commands "
        "parse with: it completes the commands, each command's options, the values of options "
        "that take one of a few words (`--format`, `--chart-format`, `--profile`, `--kind`), "
        "files for databases and other file arguments, and folders for `--state-dir` and the "
        "like. Try it in the running shell with `source <(tabletalk completion bash)` (zsh: the "
        "same with zsh, after compinit) or `tabletalk completion fish | source`; keep it by "
        "saving it as ~/.local/share/bash-completion/completions/tabletalk (bash), as _tabletalk "
        "in a folder on zsh's `$fpath` (zsh), or as ~/.config/fish/completions/tabletalk.fish "
        "(fish).",
};

/* Calls fn for every option of s, --help first. */
typedef void (*tt_opt_visit)(tt_buf *b, const tt_cmd_spec *s, const tt_opt_group *g,
                             const tt_opt *o);
static const tt_opt tt_help_entry = {TT_OPT_HELP, "help", 'h', TT_ARG_NONE, NULL, "show the help",
                                     TT_COMPLETE_NOTHING, NULL, NULL};

static void tt_each_opt(tt_buf *b, const tt_cmd_spec *s, tt_opt_visit fn) {
  fn(b, s, NULL, &tt_help_entry);
  for (size_t g = 0; s->groups[g]; g++)
    for (const tt_opt *o = s->groups[g]->opts; o->name; o++) fn(b, s, s->groups[g], o);
}

/* A description for inside single quotes: an apostrophe as the shell wants
 * it there (q), the characters _arguments or the shells would read left out. */
static void tt_put_desc_q(tt_buf *b, const tt_opt_group *g, const tt_opt *o, const char *q) {
  const char *d = o->help;
  char tmp[160];
  if (!d) {
    snprintf(tmp, sizeof tmp, "%s%s%s", g && g->title ? g->title : "", g && g->title ? ": " : "",
             o->name);
    d = tmp;
  }
  for (const char *p = d; *p; p++)
    if (*p == '\'') tt_buf_puts(b, q);
    else if (!strchr("\"[]:\\`$", *p)) tt_buf_putc(b, *p);
}
#define TT_ZSH_QUOTE "'\\''"
#define TT_FISH_QUOTE "\\'"

/* ---- bash -------------------------------------------------------------------- */

static void tt_bash_names(tt_buf *b, const tt_cmd_spec *s, const tt_opt_group *g, const tt_opt *o) {
  (void)s;
  (void)g;
  tt_buf_printf(b, " --%s", o->name);
  if (o->short_name) tt_buf_printf(b, " -%c", o->short_name);
}

static void tt_bash_value(tt_buf *b, const tt_cmd_spec *s, const tt_opt_group *g, const tt_opt *o) {
  (void)s;
  (void)g;
  if (o->arg != TT_ARG_REQUIRED) return;
  tt_buf_printf(b, "        --%s", o->name);
  if (o->short_name) tt_buf_printf(b, "|-%c", o->short_name);
  switch (o->complete) {
  case TT_COMPLETE_FILE: tt_buf_puts(b, ") COMPREPLY=($(compgen -f -- \"$cur\")); return;;\n"); break;
  case TT_COMPLETE_DIR: tt_buf_puts(b, ") COMPREPLY=($(compgen -d -- \"$cur\")); return;;\n"); break;
  case TT_COMPLETE_WORDS:
    tt_buf_printf(b, ") COMPREPLY=($(compgen -W \"%s\" -- \"$cur\")); return;;\n", o->words);
    break;
  default: tt_buf_puts(b, ") COMPREPLY=(); return;;\n"); break;
  }
}

static void tt_completion_bash(tt_buf *b, const tt_command *cmds, size_t n) {
  tt_buf_puts(b, "# bash completion for tabletalk (made by `tabletalk completion bash`)\n"
                 "_tabletalk() {\n"
                 "    local cur=\"${COMP_WORDS[COMP_CWORD]}\" prev=\"${COMP_WORDS[COMP_CWORD-1]}\"\n"
                 "    local cmd=\"\" at=0 i\n"
                 "    for ((i = 1; i < COMP_CWORD; i++)); do\n"
                 "        case \"${COMP_WORDS[i]}\" in -*) ;; *) cmd=\"${COMP_WORDS[i]}\"; at=$i; break;; esac\n"
                 "    done\n"
                 "    if [[ -z $cmd ]]; then\n"
                 "        COMPREPLY=($(compgen -W \"");
  for (size_t i = 0; i < n; i++) tt_buf_printf(b, "%s ", cmds[i].name);
  tt_buf_puts(b, "help --help --version\" -- \"$cur\"))\n"
                 "        return\n"
                 "    fi\n"
                 "    local opts=\"\" args=\"\" words=\"\"\n"
                 "    case \"$cmd\" in\n");
  for (size_t i = 0; i < n; i++) {
    const tt_cmd_spec *s = cmds[i].spec;
    tt_buf_printf(b, "    %s)\n        case \"$prev\" in\n", s->name);
    tt_each_opt(b, s, tt_bash_value);
    tt_buf_puts(b, "        esac\n        opts=\"");
    tt_each_opt(b, s, tt_bash_names);
    tt_buf_printf(b, "\"\n        args=%s\n",
                  s->args == TT_COMPLETE_FILE ? "file" : s->args == TT_COMPLETE_DIR ? "dir"
                  : s->args == TT_COMPLETE_WORDS ? "words" : "none");
    if (s->args == TT_COMPLETE_WORDS) tt_buf_printf(b, "        words=\"%s\"\n", s->words);
    tt_buf_puts(b, "        ;;\n");
  }
  tt_buf_puts(b, "    help) COMPREPLY=($(compgen -W \"");
  for (size_t i = 0; i < n; i++) tt_buf_printf(b, "%s ", cmds[i].name);
  tt_buf_puts(b, "\" -- \"$cur\")); return;;\n"
                 "    esac\n"
                 "    if [[ $cur == -* ]]; then\n"
                 "        COMPREPLY=($(compgen -W \"$opts\" -- \"$cur\"))\n"

                 "        return\n"
                 "    fi\n"
                 "    case $args in\n"
                 "    file) COMPREPLY=($(compgen -f -- \"$cur\"));;\n"
                 "    dir) COMPREPLY=($(compgen -d -- \"$cur\"));;\n"
                 "    words)\n"
                 "        if ((COMP_CWORD == at + 1)); then COMPREPLY=($(compgen -W \"$words\" -- \"$cur\"))\n"
                 "        else COMPREPLY=($(compgen -f -- \"$cur\")); fi;;\n"
                 "    *) COMPREPLY=();;\n"
                 "    esac\n"
                 "}\n"
                 "complete -o filenames -o bashdefault -F _tabletalk tabletalk\n");
}

/* ---- zsh --------------------------------------------------------------------- */

static void tt_zsh_action(tt_buf *b, const tt_opt *o) {
  switch (o->complete) {
  case TT_COMPLETE_FILE: tt_buf_puts(b, "_files"); break;
  case TT_COMPLETE_DIR: tt_buf_puts(b, "_files -/"); break;
  case TT_COMPLETE_WORDS: tt_buf_printf(b, "(%s)", o->words); break;
  default: tt_buf_puts(b, " "); break;
  }
}

static void tt_zsh_opt(tt_buf *b, const tt_cmd_spec *s, const tt_opt_group *g, const tt_opt *o) {
  (void)s;
  tt_buf_puts(b, "        ");
  if (o->short_name)
    tt_buf_printf(b, "'(-%c --%s)'{-%c,--%s}'", o->short_name, o->name, o->short_name, o->name);
  else
    tt_buf_printf(b, "'*--%s%s", o->name, o->arg == TT_ARG_OPTIONAL ? "=-" : "");
  tt_buf_putc(b, '[');
  tt_put_desc_q(b, g, o, TT_ZSH_QUOTE);
  tt_buf_putc(b, ']');
  if (o->arg != TT_ARG_NONE) {
    tt_buf_printf(b, ":%s", o->arg == TT_ARG_OPTIONAL ? ":" : "");
    for (const char *p = o->meta ? o->meta : "value"; *p; p++)
      if (!strchr("'[]:", *p)) tt_buf_putc(b, *p);
    tt_buf_putc(b, ':');
    tt_zsh_action(b, o);
  }
  tt_buf_puts(b, "' \\\n");
}

static void tt_completion_zsh(tt_buf *b, const tt_command *cmds, size_t n) {
  tt_buf_puts(b, "#compdef tabletalk\n"
                 "# zsh completion for tabletalk (made by `tabletalk completion zsh`)\n"
                 "_tabletalk() {\n"
                 "    local -a commands\n"
                 "    commands=(\n");
  for (size_t i = 0; i < n; i++) {
    tt_buf_printf(b, "        '%s:", cmds[i].name);
    tt_opt fake = {0, cmds[i].name, 0, TT_ARG_NONE, NULL, cmds[i].summary, 0, NULL, NULL};
    tt_put_desc_q(b, NULL, &fake, TT_ZSH_QUOTE);
    tt_buf_puts(b, "'\n");
  }
  tt_buf_puts(b, "    )\n"
                 "    if (( CURRENT == 2 )); then\n"
                 "        _describe -t commands 'tabletalk command' commands\n"
                 "        return\n"
                 "    fi\n"
                 "    local cmd=$words[2]\n"
                 "    shift words\n"
                 "    (( CURRENT-- ))\n"
                 "    case $cmd in\n");
  for (size_t i = 0; i < n; i++) {
    const tt_cmd_spec *s = cmds[i].spec;
    tt_buf_printf(b, "    %s)\n        _arguments -s \\\n", s->name);
    tt_each_opt(b, s, tt_zsh_opt);
    if (s->args == TT_COMPLETE_WORDS)
      tt_buf_printf(b, "        '1:what:(%s)' '*:file:_files'\n", s->words);
    else if (s->args == TT_COMPLETE_FILE)
      tt_buf_puts(b, "        '*:file:_files'\n");
    else if (s->args == TT_COMPLETE_DIR)
      tt_buf_puts(b, "        '*:folder:_files -/'\n");
    else
      tt_buf_puts(b, "        \n");
    tt_buf_puts(b, "        ;;\n");
  }
  tt_buf_puts(b, "    help) _describe -t commands 'tabletalk command' commands;;\n"
                 "    esac\n"
                 "}\n"
                 "if [[ ${zsh_eval_context[-1]} == loadautofunc ]]; then\n"
                 "    _tabletalk \"$@\"\n"
                 "else\n"
                 "    compdef _tabletalk tabletalk\n"
                 "fi\n");
}

/* ---- fish -------------------------------------------------------------------- */

static void tt_fish_opt(tt_buf *b, const tt_cmd_spec *s, const tt_opt_group *g, const tt_opt *o) {
  tt_buf_printf(b, "complete -c tabletalk -n '__fish_seen_subcommand_from %s' -l %s", s->name,
                o->name);
  if (o->short_name) tt_buf_printf(b, " -s %c", o->short_name);
  if (o->arg == TT_ARG_REQUIRED) {
    switch (o->complete) {
    case TT_COMPLETE_FILE: tt_buf_puts(b, " -r -F"); break;
    case TT_COMPLETE_DIR: tt_buf_puts(b, " -x -a '(__fish_complete_directories)'"); break;
    case TT_COMPLETE_WORDS: tt_buf_printf(b, " -x -a '%s'", o->words); break;
    default: tt_buf_puts(b, " -x"); break;
    }
  }
  tt_buf_puts(b, " -d '");
  tt_put_desc_q(b, g, o, TT_FISH_QUOTE);
  tt_buf_puts(b, "'\n");
}

static void tt_completion_fish(tt_buf *b, const tt_command *cmds, size_t n) {
  tt_buf_puts(b, "# fish completion for tabletalk (made by `tabletalk completion fish`)\n"
                 "complete -c tabletalk -f\n"
                 "complete -c tabletalk -n __fish_use_subcommand -l help -s h -d 'show the help'\n"
                 "complete -c tabletalk -n __fish_use_subcommand -l version -d 'print the version'\n");
  tt_buf puts = TT_BUF_INIT;
  for (size_t i = 0; i < n; i++) {
    tt_opt fake = {0, cmds[i].name, 0, TT_ARG_NONE, NULL, cmds[i].summary, 0, NULL, NULL};
    tt_buf_printf(b, "complete -c tabletalk -n __fish_use_subcommand -a %s -d '", cmds[i].name);
    tt_put_desc_q(b, NULL, &fake, TT_FISH_QUOTE);
    tt_buf_puts(b, "'\n");
    tt_buf_printf(&puts, "%s ", cmds[i].name);
  }
  tt_buf_printf(b, "complete -c tabletalk -n '__fish_seen_subcommand_from help' -a '%s'\n",
                tt_buf_cstr(&puts));
  tt_buf_free(&puts);
  for (size_t i = 0; i < n; i++) {
    const tt_cmd_spec *s = cmds[i].spec;
    tt_each_opt(b, s, tt_fish_opt);
    if (s->args == TT_COMPLETE_FILE)
      tt_buf_printf(b, "complete -c tabletalk -n '__fish_seen_subcommand_from %s' -F\n", s->name);
    else if (s->args == TT_COMPLETE_DIR)
      tt_buf_printf(b, "complete -c tabletalk -n '__fish_seen_subcommand_from %s' -a "
                       "'(__fish_complete_directories)'\n", s->name);
    else if (s->args == TT_COMPLETE_WORDS)
      tt_buf_printf(b, "complete -c tabletalk -n '__fish_seen_subcommand_from %s' -a '%s'\n",
                    s->name, s->words);
  }
}

static int tt_completion_option(void *ud, int id, const char *arg) {
  (void)ud;
  (void)id;
  (void)arg;
  return 0;
}

int cmd_completion(int argc, char **argv) {
  int rc = tt_opts_parse(&tt_cmd_completion, argc, argv, 1, tt_completion_option, NULL);
  if (rc != TT_OPTS_GO) return rc;
  if (argc - optind != 1) return tt_usage_error("completion", "name the shell: bash, zsh or fish");
  const char *shell = argv[optind];
  size_t n;
  const tt_command *cmds = tt_cli_commands(&n);
  tt_buf b = TT_BUF_INIT;
  if (strcmp(shell, "bash") == 0) tt_completion_bash(&b, cmds, n);
  else if (strcmp(shell, "zsh") == 0) tt_completion_zsh(&b, cmds, n);
  else if (strcmp(shell, "fish") == 0) tt_completion_fish(&b, cmds, n);
  else return tt_usage_error("completion", "no completion for the shell '%s'; choose bash, zsh or fish", shell);
  rc = tt_write_result(stdout, &b);
  tt_buf_free(&b);
  return rc;
}
