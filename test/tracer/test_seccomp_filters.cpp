// seccomp filters run here as the kernel runs them (tracer/linux/seccomp_filters.hpp): classic
// BPF programs built as programs build them, their verdicts, and the precedence among filters.
#include <linux/audit.h>
#include <sys/mman.h>
#include <sys/syscall.h>

#include <catch2/catch.hpp>

#include <cerrno>
#include <cstddef>

#include "tracer/linux/seccomp_filters.hpp"

using tracer::SeccompProgram;

namespace {

constexpr std::uint32_t kNr = offsetof(seccomp_data, nr);
constexpr std::uint32_t kArch = offsetof(seccomp_data, arch);
constexpr std::uint32_t kArg2Low = offsetof(seccomp_data, args) + 2 * 8;

seccomp_data call(long nr, std::uint64_t arg2 = 0) {
  seccomp_data d{};
  d.nr = static_cast<int>(nr);
  d.arch = AUDIT_ARCH_X86_64;
  d.args[2] = arg2;
  return d;
}

// Kills the process at `nr` (any other architecture too), lets the rest through: what
// test/progs/guest_limits.c installs for memfd_create.
SeccompProgram kill_at(long nr) {
  return {
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, kArch),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, kNr),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, static_cast<std::uint32_t>(nr), 0, 1),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
  };
}

// `verdict` at `nr`, else allow.
SeccompProgram at(long nr, std::uint32_t verdict) {
  return {
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, kNr),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, static_cast<std::uint32_t>(nr), 0, 1),
      BPF_STMT(BPF_RET | BPF_K, verdict),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
  };
}

}  // namespace

TEST_CASE("seccomp filters: a filter that kills at one call kills there and lets the others through",
          "[tracer][seccomp]") {
  const auto filter = kill_at(SYS_memfd_create);
  CHECK(tracer::run_seccomp_filter(filter, call(SYS_memfd_create)) == SECCOMP_RET_KILL_PROCESS);
  CHECK(tracer::run_seccomp_filter(filter, call(SYS_mmap)) == SECCOMP_RET_ALLOW);
  CHECK(tracer::run_seccomp_filter(filter, call(-1)) == SECCOMP_RET_ALLOW);
  auto i386 = call(SYS_mmap);
  i386.arch = AUDIT_ARCH_I386;
  CHECK(tracer::run_seccomp_filter(filter, i386) == SECCOMP_RET_KILL_PROCESS);
  CHECK(tracer::seccomp_verdict_harms(SECCOMP_RET_KILL_PROCESS));
  CHECK(tracer::seccomp_verdict_harms(SECCOMP_RET_KILL_THREAD));
  CHECK(tracer::seccomp_verdict_harms(SECCOMP_RET_TRAP | 7));
  CHECK_FALSE(tracer::seccomp_verdict_harms(SECCOMP_RET_ERRNO | EPERM));
  CHECK_FALSE(tracer::seccomp_verdict_harms(SECCOMP_RET_ALLOW));
}

TEST_CASE("seccomp filters: of several filters, the verdict of highest precedence wins, its data kept",
          "[tracer][seccomp]") {
  const std::vector<SeccompProgram> filters = {at(SYS_openat, SECCOMP_RET_ERRNO | EACCES),
                                               at(SYS_openat, SECCOMP_RET_LOG), at(SYS_read, SECCOMP_RET_TRAP | 3),
                                               at(SYS_read, SECCOMP_RET_ERRNO | EPERM)};
  CHECK(tracer::seccomp_verdict(filters, call(SYS_openat)) == (SECCOMP_RET_ERRNO | EACCES));
  CHECK(tracer::seccomp_verdict(filters, call(SYS_read)) == (SECCOMP_RET_TRAP | 3));
  CHECK(tracer::seccomp_verdict(filters, call(SYS_close)) == SECCOMP_RET_ALLOW);
  CHECK(tracer::seccomp_verdict({at(SYS_close, SECCOMP_RET_KILL_THREAD), at(SYS_close, SECCOMP_RET_KILL_PROCESS)},
                                call(SYS_close)) == SECCOMP_RET_KILL_PROCESS);
  CHECK(tracer::seccomp_verdict({}, call(SYS_close)) == SECCOMP_RET_ALLOW);
}

TEST_CASE("seccomp filters: arguments, scratch memory, the index register and arithmetic", "[tracer][seccomp]") {
  // mmap with PROT_EXEC refused (a JSET on the third argument's low word).
  const SeccompProgram no_exec = {
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, kNr),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_mmap, 0, 3),
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, kArg2Low),
      BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, PROT_EXEC, 0, 1),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
  };
  CHECK(tracer::run_seccomp_filter(no_exec, call(SYS_mmap, PROT_READ | PROT_EXEC)) == (SECCOMP_RET_ERRNO | EPERM));
  CHECK(tracer::run_seccomp_filter(no_exec, call(SYS_mmap, PROT_READ | PROT_WRITE)) == SECCOMP_RET_ALLOW);
  // nr * 2 + 1 kept in M[3], compared through X; ja over a kill; the verdict returned from A.
  const SeccompProgram arithmetic = {
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, kNr),
      BPF_STMT(BPF_ALU | BPF_MUL | BPF_K, 2),
      BPF_STMT(BPF_ALU | BPF_ADD | BPF_K, 1),
      BPF_STMT(BPF_ST, 3),
      BPF_STMT(BPF_LDX | BPF_W | BPF_MEM, 3),
      BPF_STMT(BPF_LD | BPF_W | BPF_IMM, 2 * SYS_close + 1),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_X, 0, 1, 0),
      BPF_STMT(BPF_JMP | BPF_JA, 1),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ENOSYS),
      BPF_STMT(BPF_LD | BPF_W | BPF_IMM, SECCOMP_RET_ALLOW),
      BPF_STMT(BPF_RET | BPF_A, 0),
  };
  CHECK(tracer::run_seccomp_filter(arithmetic, call(SYS_close)) == (SECCOMP_RET_ERRNO | ENOSYS));
  CHECK(tracer::run_seccomp_filter(arithmetic, call(SYS_read)) == SECCOMP_RET_ALLOW);
}

TEST_CASE("seccomp filters: a program the kernel would not have installed is taken for one that kills",
          "[tracer][seccomp]") {
  // A load past struct seccomp_data, a misaligned one, one that runs off its end.
  CHECK(tracer::run_seccomp_filter({BPF_STMT(BPF_LD | BPF_W | BPF_ABS, 64), BPF_STMT(BPF_RET | BPF_A, 0)},
                                   call(SYS_read)) == SECCOMP_RET_KILL_PROCESS);
  CHECK(tracer::run_seccomp_filter({BPF_STMT(BPF_LD | BPF_W | BPF_ABS, 2), BPF_STMT(BPF_RET | BPF_A, 0)},
                                   call(SYS_read)) == SECCOMP_RET_KILL_PROCESS);
  CHECK(tracer::run_seccomp_filter({BPF_STMT(BPF_LD | BPF_W | BPF_ABS, kNr)}, call(SYS_read)) ==
        SECCOMP_RET_KILL_PROCESS);
}
