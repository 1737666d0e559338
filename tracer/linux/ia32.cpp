#include "tracer/linux/ia32.hpp"

#include <sys/ptrace.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>

#include "tracer/linux/exec_child.hpp"
#include "tracer/linux/procfs.hpp"
#include "tracer/linux/resolve_program.hpp"

namespace tracer {
namespace {

// The probe child's exit codes when its exec failed (a child whose exec worked stops instead).
constexpr int kRefused = 126;
constexpr int kUnknown = 127;

}  // namespace

std::string ia32_word() {
  return "This kernel does not run i386 (32-bit x86) programs: its IA-32 emulation is off. "
         "Boot it with ia32_emulation=1 (Linux 6.7 and later), or use a kernel built with "
         "CONFIG_IA32_EMULATION=y; or build the program for x86-64.";
}

bool kernel_refuses_i386(const std::string& file) {
  if (procfs::file_isa(file) != arch::x86::Isa::I386) {
    return false;
  }
  std::string path = file;
  char* argv[] = {path.data(), nullptr};
  char* envp[] = {nullptr};
  const pid_t child = ::fork();
  if (child < 0) {
    return false;
  }
  if (child == 0) {
    if (::ptrace(PTRACE_TRACEME, 0, nullptr, nullptr) != 0) {
      ::_exit(kUnknown);  // untraced, a working exec would run the program: not tried
    }
    reset_signal_state_for_exec();  // the exec's SIGTRAP stop must not wait behind a mask
    ::execve(path.c_str(), argv, envp);
    ::_exit(errno == ENOEXEC ? kRefused : kUnknown);
  }
  int status = 0;
  while (::waitpid(child, &status, __WALL) < 0 && errno == EINTR) {
  }
  if (WIFSTOPPED(status)) {  // exec'd and stopped before its first instruction: it runs here
    ::kill(child, SIGKILL);
    while (::waitpid(child, &status, __WALL) == child && !WIFEXITED(status) && !WIFSIGNALED(status)) {
    }
    return false;
  }
  return WIFEXITED(status) && WEXITSTATUS(status) == kRefused;
}

base::Error with_ia32_word(base::Error error, const std::string& program) {
  const auto file = resolve_program(program);
  if (file && kernel_refuses_i386(*file)) {
    error.detail += "\n" + ia32_word();
  }
  return error;
}

}  // namespace tracer
