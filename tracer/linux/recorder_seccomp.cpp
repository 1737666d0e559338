#include "tracer/linux/recorder_seccomp.hpp"

#include <asm/prctl.h>
#include <linux/audit.h>
#include <sys/mman.h>
#include <sys/syscall.h>

#include <fcntl.h>

#include <fmt/format.h>

#include "base/log.hpp"
#include "tracer/linux/seccomp_filters.hpp"

namespace tracer {
namespace {

struct RecorderCall {
  const char* name;
  long number;
  std::uint64_t args[6];
  bool needed;  // refused (an errno): the recorder cannot do without it
};

constexpr std::uint64_t kRw = PROT_READ | PROT_WRITE;
constexpr std::uint64_t kAnon = MAP_PRIVATE | MAP_ANONYMOUS;
constexpr std::uint64_t kNoFd = static_cast<std::uint64_t>(-1);

// What the server's calls (recorder_loader.hpp, remote_syscalls.hpp) and the recorder's own
// (recorder/sys.hpp) ask of the kernel, with the arguments filters commonly look at.
constexpr RecorderCall kCalls[] = {
    {"mmap", SYS_mmap, {0, 1 << 20, kRw, kAnon, kNoFd, 0}, true},
    {"mmap", SYS_mmap, {0, 1 << 20, kRw | PROT_EXEC, kAnon, kNoFd, 0}, true},
    {"mmap", SYS_mmap, {0, 1 << 20, kRw, MAP_SHARED, 3, 0}, false},
    {"mmap", SYS_mmap, {0, 1 << 20, kRw, kAnon | MAP_32BIT, kNoFd, 0}, false},
    {"mprotect", SYS_mprotect, {0, 4096, PROT_READ | PROT_EXEC, 0, 0, 0}, true},
    {"mprotect", SYS_mprotect, {0, 4096, PROT_READ, 0, 0, 0}, true},
    {"munmap", SYS_munmap, {0, 4096, 0, 0, 0, 0}, true},
    {"memfd_create", SYS_memfd_create, {0, 0, 0, 0, 0, 0}, false},
    {"ftruncate", SYS_ftruncate, {3, 1 << 20, 0, 0, 0, 0}, false},
    {"fstat", SYS_fstat, {3, 0, 0, 0, 0, 0}, false},
    {"madvise", SYS_madvise, {0, 4096, MADV_DONTNEED, 0, 0, 0}, false},
    {"openat", SYS_openat, {static_cast<std::uint64_t>(AT_FDCWD), 0, O_RDONLY | O_CLOEXEC, 0, 0, 0}, true},
    {"read", SYS_read, {3, 0, 4096, 0, 0, 0}, true},
    {"close", SYS_close, {3, 0, 0, 0, 0, 0}, true},
    {"arch_prctl", SYS_arch_prctl, {ARCH_GET_FS, 0, 0, 0, 0, 0}, false},
    {"arch_prctl", SYS_arch_prctl, {ARCH_SET_FS, 0, 0, 0, 0, 0}, false},
    // Each call of the server's ends at a system call it skips (number -1), which the filters
    // see all the same.
    {"call's end (a skipped system call, number -1)", -1, {0, 0, 0, 0, 0, 0}, false},
};

}  // namespace

std::optional<std::string> seccomp_refusal(Tid tid) {
  auto filters = read_seccomp_filters(tid);
  if (!filters) {
    base::logf(base::LogCat::ptrace, "thread {}: its seccomp filters are not read ({}): the recorder tries", tid,
               filters.error().message());
    return std::nullopt;
  }
  for (const RecorderCall& call : kCalls) {
    seccomp_data data{};
    data.nr = static_cast<int>(call.number);
    data.arch = AUDIT_ARCH_X86_64;
    for (int i = 0; i < 6; ++i) {
      data.args[i] = call.args[i];
    }
    const std::uint32_t verdict = seccomp_verdict(*filters, data);
    const std::uint32_t action = verdict & SECCOMP_RET_ACTION_FULL;
    if (seccomp_verdict_harms(verdict)) {
      return fmt::format("the program's seccomp filter would {} at the recorder's {}",
                         action == SECCOMP_RET_TRAP ? "send it SIGSYS" : "kill it", call.name);
    }
    if (call.needed && action == SECCOMP_RET_ERRNO) {
      return fmt::format("the program's seccomp filter refuses the recorder's {}, which it cannot do without",
                         call.name);
    }
  }
  return std::nullopt;
}

}  // namespace tracer
