#include "tracer/valgrind/valgrind_target.hpp"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <filesystem>

#include "tracer/linux/procfs.hpp"

namespace tracer {

ValgrindTarget::~ValgrindTarget() {
  if (has_process()) {
    (void)kill();
  }
}

Result<Pid> ValgrindTarget::launch(const LaunchSpec& spec) {
  if (has_process()) {
    return base::make_error(base::Errc::invalid, "the dbt recorder runs one process at a time");
  }
  auto started = valgrind_.start(spec);
  if (!started) {
    return std::move(started).error();
  }
  const Pid pid = started->pid;
  program_name_ = std::filesystem::path(spec.program).filename().string().substr(0, 15);
  if (auto ok = connect(std::move(started->link), pid); !ok) {
    (void)kill();
    return base::make_error(base::Errc::system, "the program under the dbt recorder did not stop at its start");
  }
  return pid;
}

Result<void> ValgrindTarget::attach(Pid) {
  return base::make_error(base::Errc::unsupported,
                          "the dbt recorder must start the program: attaching needs --btrace=soft or step");
}

Result<void> ValgrindTarget::detach() {
  if (!has_process()) {
    return base::make_error(base::Errc::no_process, "no process");
  }
  auto reply = ask("D");
  forget_process(false);  // GDB has its reply at once; the program runs on
  return reply ? base::success() : Result<void>(std::move(reply).error());
}

Result<void> ValgrindTarget::kill() {
  if (!has_process()) {
    return base::make_error(base::Errc::no_process, "no process");
  }
  ::kill(pid(), SIGKILL);
  forget_process(true);
  return base::success();
}

void ValgrindTarget::forget_process(bool wait) {
  const Pid gone = pid();
  histories_.process_ended(valgrind_.dir(), gone);
  disconnect();  // vgdb goes with its input
  valgrind_.reap(gone, wait);
}

std::vector<ThreadInfo> ValgrindTarget::threads() {
  auto out = RemoteTarget::threads();
  for (auto& t : out) {
    t.name = procfs::thread_name(pid(), t.tid);
    if (t.name == "hsdbt-amd64-lin") {
      t.name = program_name_;  // Valgrind's name, not the one the kernel would have given
    }
  }
  return out;
}

void ValgrindTarget::stopped(StopEvent& event) {
  if (event.signal == SIGILL) {
    valgrind_.explain_sigill();
  }
}

StopEvent ValgrindTarget::ended_unannounced() {
  // vgdb left without a stop reply: the program died where Valgrind could say nothing (SIGKILL
  // from outside), or vgdb itself went and the program cannot be driven any more.
  const Pid gone = pid();
  int status = 0;
  pid_t got = 0;
  for (int i = 0; i < 100 && (got = ::waitpid(gone, &status, WNOHANG)) == 0; ++i) {
    ::usleep(10000);
  }
  if (got == 0) {
    ::kill(gone, SIGKILL);
    got = ::waitpid(gone, &status, 0);
  }
  StopEvent ev{StopReason::Killed, gone, gone, SIGKILL};
  if (got == gone && WIFEXITED(status)) {
    ev.reason = StopReason::Exited;
    ev.signal = 0;
    ev.status = WEXITSTATUS(status);
  } else if (got == gone && WIFSIGNALED(status)) {
    ev.signal = WTERMSIG(status);
  }
  histories_.process_ended(valgrind_.dir(), gone);
  disconnect();  // reaped already: nothing to wait for
  return ev;
}

SignalAction ValgrindTarget::signal_action(Tid, int sig) { return valgrind_.signal_action(pid(), sig); }

Result<void> ValgrindTarget::enable_btrace(Tid tid, const BtraceConfig&) {
  if (!has_process()) {
    return base::make_error(base::Errc::no_process, "no process");
  }
  return histories_.enable(valgrind_.dir(), pid(), tid, [this] { return threads(); });
}

Result<void> ValgrindTarget::disable_btrace(Tid tid) { return histories_.disable(tid); }

}  // namespace tracer
