/* interrupt.c — Ctrl-C: the first press asks the running question to stop
 * (the model call and the query end promptly); a second press while it is
 * still stopping ends the process. Servers stop the same way on SIGTERM.
 * The flag is the one piece of global
 * state a signal handler needs. */
#include "cli/cli.h"

#include <string.h>
#include <unistd.h>

static volatile sig_atomic_t tt_interrupted;

static void tt_on_sigint(int sig) {
  (void)sig;
  if (tt_interrupted) {
    static const char msg[] = "\ntabletalk: interrupted\n";
    ssize_t ignored = write(STDERR_FILENO, msg, sizeof msg - 1);
    (void)ignored;
    _exit(130);
  }
  tt_interrupted = 1;
}

volatile sig_atomic_t *tt_interrupt_install(void) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = tt_on_sigint;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = 0; /* no SA_RESTART: a blocking read returns EINTR */
  sigaction(SIGINT, &sa, NULL);
  return &tt_interrupted;
}

volatile sig_atomic_t *tt_interrupt_install_server(void) {
  tt_interrupt_install();
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = tt_on_sigint;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGTERM, &sa, NULL);
  signal(SIGPIPE, SIG_IGN);
  return &tt_interrupted;
}

void tt_interrupt_clear(void) { tt_interrupted = 0; }
