// Starting a program under ptrace: fork, PTRACE_TRACEME, exec (through $SHELL like
// gdbserver, or directly), and run it to its first instruction.
#include <fcntl.h>
#include <sys/personality.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "base/log.hpp"
#include "tracer/linux/exec_child.hpp"
#include "tracer/linux/ia32.hpp"
#include "tracer/linux/linux_target.hpp"
#include "tracer/linux/resolve_program.hpp"
#include "tracer/linux/ptrace_calls.hpp"

namespace tracer {
namespace {

constexpr long kLaunchOptions = PTRACE_O_TRACECLONE | PTRACE_O_TRACEEXEC | PTRACE_O_EXITKILL |
                                PTRACE_O_TRACESYSGOOD | PTRACE_O_TRACEFORK | PTRACE_O_TRACEVFORK |
                                PTRACE_O_TRACEVFORKDONE;
// Until the program's own exec: the shell may fork for a command substitution (`$(echo a)` in
// GDB 18's single-inf-arg line), and those children are not ours.
constexpr long kStartupOptions = PTRACE_O_TRACEEXEC | PTRACE_O_EXITKILL | PTRACE_O_TRACESYSGOOD;

// 0 when path names an executable regular file, else the errno exec would give.
int check_executable(const std::string& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) {
    return errno;
  }
  if (S_ISDIR(st.st_mode) || ::access(path.c_str(), X_OK) != 0) {
    return EACCES;
  }
  return 0;
}

// 'word' with embedded quotes as '\''.
std::string shell_quote(const std::string& word) {
  std::string out = "'";
  for (char c : word) {
    if (c == '\'') {
      out += "'\\''";
    } else {
      out += c;
    }
  }
  return out + "'";
}

// What the child reports through the pipe before it gives up: which step failed, and errno.
enum class ChildStep : int { TraceMe = 1, Exec = 2, Chdir = 3 };
struct ChildFailure {
  ChildStep step;
  int err;
};

[[noreturn]] void child_failed(ChildStep step, int err_fd) {
  ChildFailure failure{step, errno};
  ssize_t ignored = ::write(err_fd, &failure, sizeof failure);
  (void)ignored;
  ::_exit(127);
}

// Never returns. Only async-signal-safe calls after fork. envp null: the server's environment.
[[noreturn]] void exec_child(const LaunchSpec& spec, const std::vector<char*>& argv, char* const* envp,
                             int err_fd) {
  ::setpgid(0, 0);
  if (spec.stdio_is_protocol) {
    // GDB talks over our stdin/stdout: the program must not read or write them.
    int null_fd = ::open("/dev/null", O_RDONLY);
    if (null_fd >= 0) {
      ::dup2(null_fd, STDIN_FILENO);
      ::close(null_fd);
    }
    ::dup2(STDERR_FILENO, STDOUT_FILENO);
  }
  if (!spec.working_dir.empty() && ::chdir(spec.working_dir.c_str()) != 0) {
    child_failed(ChildStep::Chdir, err_fd);
  }
  if (::ptrace(PTRACE_TRACEME, 0, nullptr, nullptr) != 0) {
    // Already traced (hindsight itself under strace or a debugger): never run untraced.
    child_failed(ChildStep::TraceMe, err_fd);
  }
  reset_signal_state_for_exec();
  if (envp != nullptr) {
    ::execve(argv[0], argv.data(), envp);
  } else {
    ::execv(argv[0], argv.data());
  }
  child_failed(ChildStep::Exec, err_fd);
}

// Randomization off for the next child, as gdbserver does it: the server's own persona gets
// ADDR_NO_RANDOMIZE until the fork (the child keeps it through exec); the persona to restore
// after, or -1. A seccomp filter may refuse it (a container engine's default profile does): the
// program then runs randomized, and the user is told in gdbserver's words.
int no_randomization_for_child(bool wanted) {
  const int persona = ::personality(0xffffffff);
  if (!wanted || (persona != -1 && (persona & ADDR_NO_RANDOMIZE) != 0)) {
    return -1;
  }
  if (persona == -1 || ::personality(static_cast<unsigned long>(persona) | ADDR_NO_RANDOMIZE) == -1) {
    std::fprintf(stderr, "warning: Error disabling address space randomization: %s\n", std::strerror(errno));
    return -1;
  }
  return persona;
}

// The terminal's foreground process group before the first program we started took it.
pid_t g_old_foreground = -1;

void restore_foreground() {
  if (g_old_foreground > 0) {
    ::tcsetpgrp(STDERR_FILENO, g_old_foreground);
  }
}

// The program gets the terminal (its own process group in the foreground), as with
// gdbserver: it reads its stdin without SIGTTIN, and ^C at the terminal reaches it.
void give_terminal(Pid child) {
  if (!::isatty(STDERR_FILENO)) {
    return;
  }
  ::signal(SIGTTOU, SIG_IGN);
  ::signal(SIGTTIN, SIG_IGN);
  ::setpgid(child, child);  // the child does the same; whichever runs first
  if (g_old_foreground < 0) {
    g_old_foreground = ::tcgetpgrp(STDERR_FILENO);
    std::atexit(restore_foreground);
  }
  ::tcsetpgrp(STDERR_FILENO, child);
}

void kill_and_reap(Pid pid) {
  ::kill(pid, SIGKILL);
  int st = 0;
  while (::waitpid(pid, &st, __WALL) == pid && !WIFEXITED(st) && !WIFSIGNALED(st)) {
  }
}

// gdbserver's words for a program that ended before it got going.
base::Error ended_during_startup(int status) {
  if (WIFEXITED(status)) {
    return base::make_error(base::Errc::system,
                            "During startup program exited with code " + std::to_string(WEXITSTATUS(status)) + ".");
  }
  return base::make_error(base::Errc::system, "During startup program terminated with signal " +
                                                  std::string(pt::describe_signal(WTERMSIG(status))) + ".");
}

// Waits for the child's next stop (its wait status); an error when it ended instead.
base::Result<int> wait_for_stop(Pid pid) {
  for (;;) {
    int st = 0;
    if (::waitpid(pid, &st, __WALL) != pid) {
      return base::sys_error("waitpid " + std::to_string(pid));
    }
    base::logf(base::LogCat::ptrace, "launch: waitpid({}) status {:#x}", pid, st);
    if (WIFEXITED(st) || WIFSIGNALED(st)) {
      return ended_during_startup(st);
    }
    if (WIFSTOPPED(st)) {
      return st;
    }
  }
}

// The words to exec: through the shell ("exec WRAPPER... PROG ARGS", each quoted, then the
// shell line as it is), or the wrapper's or program's file found in PATH.
base::Result<std::vector<std::string>> exec_words(const LaunchSpec& spec) {
  std::vector<std::string> words = spec.wrapper;
  words.push_back(spec.program);
  words.insert(words.end(), spec.args.begin(), spec.args.end());
  if (spec.startup_with_shell) {
    const char* shell = std::getenv("SHELL");
    std::string command = "exec";
    for (const auto& w : words) {
      command += " " + shell_quote(w);
    }
    if (spec.shell_line && !spec.shell_line->empty()) {
      command += " " + *spec.shell_line;
    }
    return std::vector<std::string>{shell != nullptr && *shell != '\0' ? shell : "/bin/sh", "-c", command};
  }
  auto resolved = resolve_program(words.front());
  if (!resolved) {
    return std::move(resolved).error();
  }
  words.front() = *resolved;
  return words;
}

}  // namespace

base::Error cannot_run(const std::string& prog, int err) {
  return base::Error{base::Errc::system, 0, "Cannot exec " + prog + ": " + std::strerror(err) + "."};
}

base::Result<std::string> resolve_program(const std::string& prog) {
  if (prog.empty()) {
    return cannot_run(prog, ENOENT);
  }
  if (prog.find('/') != std::string::npos) {
    if (int err = check_executable(prog); err != 0) {
      return cannot_run(prog, err);
    }
    return prog;
  }
  const char* path = std::getenv("PATH");
  std::string dirs = path != nullptr ? path : "/usr/local/bin:/usr/bin:/bin";
  int first_err = ENOENT;
  for (std::size_t start = 0; start <= dirs.size();) {
    std::size_t end = dirs.find(':', start);
    if (end == std::string::npos) {
      end = dirs.size();
    }
    std::string dir = dirs.substr(start, end - start);
    std::string candidate = (dir.empty() ? "." : dir) + "/" + prog;
    int err = check_executable(candidate);
    if (err == 0) {
      return candidate;
    }
    if (err != ENOENT && first_err == ENOENT) {
      first_err = err;
    }
    start = end + 1;
  }
  return cannot_run(prog, first_err);
}

Result<Pid> LinuxTarget::launch(const LaunchSpec& spec) {
  auto pid = start_stopped(spec);
  if (!pid) {
    return with_ia32_word(std::move(pid).error(), spec.program);
  }
  return pid;
}

Result<Pid> LinuxTarget::start_stopped(const LaunchSpec& spec) {
  // Build everything before fork: the child only execs.
  auto exec = exec_words(spec);
  if (!exec) {
    return std::move(exec).error();
  }
  std::vector<std::string> words = std::move(*exec);
  const std::vector<char*> argv = exec_argv(words);
  std::vector<std::string> env_words = spec.environment.value_or(std::vector<std::string>{});
  const std::vector<char*> envp = exec_argv(env_words);

  int pipe_fds[2];
  if (::pipe2(pipe_fds, O_CLOEXEC) != 0) {
    return base::sys_error("pipe");
  }
  const int persona = no_randomization_for_child(spec.disable_aslr);
  Pid child = ::fork();
  if (child == 0) {
    ::close(pipe_fds[0]);
    exec_child(spec, argv, spec.environment ? envp.data() : nullptr, pipe_fds[1]);
  }
  if (persona != -1) {
    ::personality(static_cast<unsigned long>(persona));
  }
  if (child < 0) {
    int err = errno;
    ::close(pipe_fds[0]);
    ::close(pipe_fds[1]);
    return base::sys_error("fork", err);
  }
  ::close(pipe_fds[1]);
  base::logf(base::LogCat::ptrace, "fork: child {} runs {}", child, words[0]);
  if (!spec.stdio_is_protocol) {
    give_terminal(child);
  }

  auto st = wait_for_stop(child);
  if (!st) {
    ChildFailure failure{};
    const bool told = ::read(pipe_fds[0], &failure, sizeof failure) == sizeof failure;
    ::close(pipe_fds[0]);
    if (told && failure.step == ChildStep::TraceMe) {
      return base::make_error(base::Errc::system, "cannot trace '" + spec.program + "': PTRACE_TRACEME: " +
                                                      std::strerror(failure.err) +
                                                      " (is hindsight itself being traced?)");
    }
    if (told && failure.step == ChildStep::Chdir) {
      return base::make_error(base::Errc::system, "Couldn't chdir to " + spec.working_dir + ": " +
                                                      std::strerror(failure.err) + ".\n" + st.error().detail);
    }
    if (told) {
      return base::make_error(base::Errc::system, cannot_run(words.front(), failure.err).detail + "\n" +
                                                      st.error().detail);
    }
    return std::move(st).error();
  }
  ::close(pipe_fds[0]);
  // First stop: the SIGTRAP after the first exec (the shell's, the wrapper's or the program's).
  const int execs_to_come = (spec.startup_with_shell ? 1 : 0) + (spec.wrapper.empty() ? 0 : 1);
  if (auto res = pt::set_options(child, execs_to_come > 0 ? kStartupOptions : kLaunchOptions); !res) {
    kill_and_reap(child);
    return std::move(res).error();
  }
  // Run through the execs before the program's: the shell's exec of the wrapper or program,
  // the wrapper's of the program (PTRACE_EVENT_EXEC stops).
  for (int execs = 0, sig = 0; execs < execs_to_come;) {
    if (auto res = pt::resume(child, false, sig); !res) {
      kill_and_reap(child);
      return std::move(res).error();
    }
    auto next = wait_for_stop(child);
    if (!next) {
      return std::move(next).error();  // it ended: nothing left to reap
    }
    sig = WSTOPSIG(*next);
    if (*next >> 8 == (SIGTRAP | (PTRACE_EVENT_EXEC << 8))) {
      ++execs;
      sig = 0;
    } else if (sig == SIGTRAP || sig == (SIGTRAP | 0x80)) {
      sig = 0;
    }
  }
  if (execs_to_come > 0) {
    if (auto res = pt::set_options(child, kLaunchOptions); !res) {
      kill_and_reap(child);
      return std::move(res).error();
    }
  }
  LinuxThread& leader = add_process(child, ProcessOrigin::Launched).add_thread(child);
  leader.stop_pc = leader.regs.pc(child).value_or(0);
  leader.in_syscall_stop = execs_to_come > 0;  // stopped in execve (PTRACE_EVENT_EXEC)
  current_ = child;
  return child;
}

}  // namespace tracer
