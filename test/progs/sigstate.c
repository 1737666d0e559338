// Prints the signal state the program started with: a debug server must not pass on its own
// (SIGCHLD blocked for its signalfd, SIGPIPE ignored).
#include <signal.h>
#include <stdio.h>

int main(void) {
  sigset_t blocked;
  sigprocmask(SIG_BLOCK, NULL, &blocked);
  struct sigaction pipe_action;
  sigaction(SIGPIPE, NULL, &pipe_action);
  int count = 0;
  for (int sig = 1; sig < 32; ++sig) {
    count += sigismember(&blocked, sig);
  }
  printf("blocked signals: %d, SIGPIPE %s\n", count, pipe_action.sa_handler == SIG_IGN ? "ignored" : "default");
  return 0;
}
