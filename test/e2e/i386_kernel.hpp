// Whether this machine runs the i386 test programs (test/progs NAME_m32): the build made them
// (gcc-multilib), and this kernel runs them (IA-32 emulation on), found by running simple_m32,
// which exits with 7. A kernel without IA-32 emulation fails its exec with ENOEXEC.
#pragma once

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <string>

#include "test/e2e/gdb_session.hpp"

namespace e2e {

// Refused: exec said ENOEXEC. Broken: simple_m32 ran otherwise than it should.
enum class I386Programs { NotBuilt, Refused, Broken, Run };

inline I386Programs i386_programs() {
  static const I386Programs answer = [] {
    const std::string path = prog_path("simple_m32");
    if (::access(path.c_str(), X_OK) != 0) {
      return I386Programs::NotBuilt;
    }
    const pid_t pid = ::fork();
    if (pid == 0) {
      const int null = ::open("/dev/null", O_WRONLY);
      ::dup2(null, 1);
      ::execl(path.c_str(), path.c_str(), nullptr);
      ::_exit(errno == ENOEXEC ? 126 : 127);
    }
    int status = 0;
    ::waitpid(pid, &status, 0);
    if (WIFEXITED(status) && WEXITSTATUS(status) == 7) {
      return I386Programs::Run;
    }
    return WIFEXITED(status) && WEXITSTATUS(status) == 126 ? I386Programs::Refused : I386Programs::Broken;
  }();
  return answer;
}

// Why the cases about a kernel that refuses i386 programs cannot run here; empty when they can.
inline std::string i386_not_refused() {
  switch (i386_programs()) {
    case I386Programs::Refused:
      return {};
    case I386Programs::Run:
      return "this kernel runs i386 programs (IA-32 emulation on): nothing to explain";
    case I386Programs::Broken:
      return "simple_m32 fails here, but not with ENOEXEC";
    case I386Programs::NotBuilt:
      break;
  }
  return "no -m32 test programs: the build found no 32-bit toolchain (gcc-multilib)";
}

// The plain word the server and triage say for them (tracer/linux/ia32.cpp).
inline constexpr const char* kIa32Word = "This kernel does not run i386 (32-bit x86) programs: its IA-32 emulation is off. "
                                         "Boot it with ia32_emulation=1";

}  // namespace e2e
