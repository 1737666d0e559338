// Waits for its children as a shell does: SIGCHLD blocked but while in sigsuspend, a handler
// that notes the signal, then waitpid. Each round forks a child that exits after a moment
// (argv[1] rounds, 3 by default); the last one is killed instead.
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t children_ended;

static void on_child(int sig) {
  (void)sig;
  children_ended = children_ended + 1;
}

static void nap(long ms) {
  struct timespec t = {ms / 1000, (ms % 1000) * 1000000L};
  nanosleep(&t, NULL);
}

int main(int argc, char** argv) {
  const int rounds = argc > 1 ? atoi(argv[1]) : 3;
  struct sigaction action = {0};
  action.sa_handler = on_child;  // (no SA_RESTART: sigsuspend ends with EINTR)
  sigaction(SIGCHLD, &action, NULL);
  sigset_t child_signal, nothing;
  sigemptyset(&child_signal);
  sigaddset(&child_signal, SIGCHLD);
  sigemptyset(&nothing);
  sigprocmask(SIG_BLOCK, &child_signal, NULL);
  for (int round = 1; round <= rounds; ++round) {
    const int last = round == rounds;
    pid_t child = fork();
    if (child == 0) {
      nap(last ? 60000 : 100);
      _exit(round);
    }
    if (last) {
      nap(100);
      kill(child, SIGKILL);
    }
    while (children_ended == 0) {
      sigsuspend(&nothing);  // the signal comes here
    }
    children_ended = 0;
    int status = 0;
    waitpid(child, &status, 0);
    if (WIFEXITED(status)) {
      printf("round %d: the child exited with %d\n", round, WEXITSTATUS(status));
    } else {
      printf("round %d: the child was killed by signal %d\n", round, WTERMSIG(status));
    }
  }
  printf("waited for every child\n");
  return 0;
}
