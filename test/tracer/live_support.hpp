// Helpers for tests that run real inferiors under LinuxTarget.
#pragma once

#include <poll.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include <chrono>
#include <csignal>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include "test/tracer/elf_symbols.hpp"
#include "tracer/linux/linux_target.hpp"
#include "tracer/linux/procfs.hpp"
#include "tracer/linux/registers.hpp"

#ifndef TRACER_PROGS_DIR
#error "TRACER_PROGS_DIR must name the directory of the test programs"
#endif

namespace test_tracer {

inline std::string prog(const std::string& name) {
  return std::string(TRACER_PROGS_DIR) + "/tracer_" + name;
}

// Bytes as the process's memory holds them (our int3s and jumps included).
inline std::optional<std::vector<std::uint8_t>> read_raw_memory(int pid, std::uint64_t addr, std::size_t len) {
  std::ifstream mem("/proc/" + std::to_string(pid) + "/mem", std::ios::binary);
  std::vector<std::uint8_t> out(len);
  mem.seekg(static_cast<std::streamoff>(addr));
  if (!mem.read(reinterpret_cast<char*>(out.data()), static_cast<std::streamsize>(len))) {
    return std::nullopt;
  }
  return out;
}

inline std::uint64_t symbol(const std::string& name, const std::string& sym) {
  auto addr = elf_symbol(prog(name), sym);
  return addr.value_or(0);
}

// Whether this process may ptrace a child (containers may forbid it).
inline bool ptrace_permitted() {
  pid_t child = ::fork();
  if (child == 0) {
    ::_exit(::ptrace(PTRACE_TRACEME, 0, nullptr, nullptr) == 0 ? 0 : 1);
  }
  int st = 0;
  ::waitpid(child, &st, 0);
  return WIFEXITED(st) && WEXITSTATUS(st) == 0;
}

// Waits up to timeout for the next stop, calling poll() whenever the event fd fires.
inline std::optional<tracer::StopEvent> wait_stop(tracer::LinuxTarget& t,
                                                  std::chrono::milliseconds timeout =
                                                      std::chrono::milliseconds(10000)) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    if (auto ev = t.poll()) {
      return ev;
    }
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      return std::nullopt;
    }
    pollfd pfd{t.event_fd(), POLLIN, 0};
    ::poll(&pfd, 1, static_cast<int>(left.count()));
  }
}

inline tracer::ResumePlan plan_all(tracer::ResumeKind kind = tracer::ResumeKind::Continue,
                                   int sig = 0) {
  tracer::ThreadAction a;
  a.kind = kind;
  a.signal = sig;
  return tracer::ResumePlan{{a}};
}

// What GDB does to resume a thread sitting on one of its breakpoints: take the int3 out, step
// that thread alone, put the int3 back (the server never steps over GDB's breakpoints).
inline void gdb_step_over(tracer::LinuxTarget& t, int tid, std::uint64_t addr) {
  REQUIRE(t.remove_breakpoint(tracer::BreakpointType::Software, addr, 1).ok());
  tracer::ThreadAction a;
  a.tid = tid;
  a.kind = tracer::ResumeKind::Step;
  REQUIRE(t.resume(tracer::ResumePlan{{a}}).ok());
  auto ev = wait_stop(t);
  REQUIRE(ev);
  CHECK(ev->reason == tracer::StopReason::SingleStep);
  REQUIRE(t.insert_breakpoint(tracer::BreakpointType::Software, addr, 1).ok());
}

// One byte of the process's memory as it really is (int3s included).
inline int raw_byte(int pid, std::uint64_t addr) {
  std::ifstream mem("/proc/" + std::to_string(pid) + "/mem", std::ios::binary);
  mem.seekg(static_cast<std::streamoff>(addr));
  char c = 0;
  if (!mem.read(&c, 1)) {
    return -1;
  }
  return static_cast<unsigned char>(c);
}

inline bool process_exists(int pid) {
  return ::access(("/proc/" + std::to_string(pid)).c_str(), F_OK) == 0;
}

inline char thread_state(int pid, int tid) {
  auto st = tracer::procfs::task_stat(pid, tid);
  return st ? st->state : '?';
}

}  // namespace test_tracer

#define REQUIRE_PTRACE()                                  \
  do {                                                    \
    if (!::test_tracer::ptrace_permitted()) {             \
      HS_SKIP("ptrace is not permitted here");            \
    }                                                     \
  } while (0)
