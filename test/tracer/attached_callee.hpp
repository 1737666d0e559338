// tracer_callee (test/progs/tracer/callee.c) started and attached to while it sleeps: the
// program the inferior-call and recorder-link tests act on.
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include <cstdio>
#include <fstream>
#include <iterator>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "test/tracer/live_support.hpp"
#include "tracer/linux/kernel.hpp"

namespace test_tracer {

// tracer_callee started with `rounds` sleeps of 100 ms (and `workers` threads doing the same),
// every thread attached once it said "ready" (so each is stopped inside nanosleep, or in
// sigsuspend with then = "suspend"), and detached and waited for by finish(). then: what it
// does after (callee.c).
class AttachedCallee {
 public:
  explicit AttachedCallee(int rounds, int workers = 0, const std::string& then = "") {
    int fds[2];
    REQUIRE(::pipe(fds) == 0);
    pid_ = ::fork();
    REQUIRE(pid_ >= 0);
    if (pid_ == 0) {
      ::dup2(fds[1], 1);
      ::close(fds[0]);
      const std::string path = prog("callee");
      const std::string n = std::to_string(rounds);
      const std::string w = std::to_string(workers);
      ::execl(path.c_str(), path.c_str(), n.c_str(), w.c_str(), then.c_str(), static_cast<char*>(nullptr));
      ::_exit(127);
    }
    ::close(fds[1]);
    out_ = fds[0];
    REQUIRE(read_some().find("ready") != std::string::npos);
    ::usleep(20 * 1000);  // inside its first nanosleep (or its sigsuspend)
    tids_ = tracer::procfs::task_ids(pid_);
    REQUIRE(tids_.size() == static_cast<std::size_t>(workers) + 1);
    for (tracer::Tid tid : tids_) {
      REQUIRE(kernel().attach(tid).ok());
      auto st = kernel().wait_for(tid);
      REQUIRE(st.ok());
      REQUIRE(WIFSTOPPED(*st));
    }
  }
  ~AttachedCallee() {
    if (pid_ > 0) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
    ::close(out_);
  }
  tracer::Kernel& kernel() { return tracer::linux_kernel(); }
  pid_t pid() const { return pid_; }
  const std::vector<tracer::Tid>& tids() const { return tids_; }

  // Detaches; checks that it ran to its normal end (exit 0) and printed `output`.
  void check_ends_with(const std::string& output) {
    auto [out, status] = finish();
    CHECK(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 0);
    CHECK(out == output);
  }

  // Detaches, and returns what it printed to its end and its wait status.
  std::pair<std::string, int> finish() {
    for (tracer::Tid tid : tids_) {
      REQUIRE(kernel().detach(tid, 0).ok());
    }
    std::string out;
    for (std::string part; !(part = read_some()).empty();) {
      out += part;
    }
    int st = 0;
    ::waitpid(pid_, &st, 0);
    pid_ = -1;
    return {out, st};
  }

 private:
  std::string read_some() {
    char buf[256];
    const ssize_t n = ::read(out_, buf, sizeof buf);
    return n > 0 ? std::string(buf, static_cast<std::size_t>(n)) : std::string();
  }
  pid_t pid_ = -1;
  std::vector<tracer::Tid> tids_;
  int out_ = -1;
};

inline arch::x86::RawRegisters registers_of(tracer::Kernel& kernel, tracer::Tid tid) {
  arch::x86::RawRegisters raw;
  REQUIRE(kernel.read_gprs(tid, raw).ok());
  REQUIRE(kernel.read_xstate(tid, raw).ok());
  return raw;
}

inline void check_same(const arch::x86::RawRegisters& before, const arch::x86::RawRegisters& after) {
  for (std::size_t i = 0; i < before.gpr.size(); ++i) {
    INFO("register word " << i);
    CHECK(after.gpr[i] == before.gpr[i]);
  }
  CHECK(after.xsave == before.xsave);
}

inline tracer::Bytes text_bytes(const std::string& text) {
  tracer::Bytes out(text.begin(), text.end());
  out.push_back(0);
  return out;
}

inline bool maps_mention(pid_t pid, const std::string& what) {
  std::ifstream maps("/proc/" + std::to_string(pid) + "/maps");
  for (std::string line; std::getline(maps, line);) {
    if (line.find(what) != std::string::npos) {
      return true;
    }
  }
  return false;
}

// /proc/PID/maps as it reads now.
inline std::string maps_text(pid_t pid) {
  std::ifstream maps("/proc/" + std::to_string(pid) + "/maps");
  return std::string(std::istreambuf_iterator<char>(maps), std::istreambuf_iterator<char>());
}

// The value of one of tracer_callee's pointer variables (keep_dlopen, keep_dlsym, keep_dlclose).
inline std::uint64_t pointer_in(tracer::Kernel& kernel, pid_t pid, const std::string& variable) {
  auto memory = kernel.memory(pid);
  REQUIRE(memory.ok());
  auto bytes = (*memory)->read(symbol("callee", variable), 8);
  REQUIRE(bytes.ok());
  return tracer::load_u64(*bytes);
}

// The /proc/PID/maps line of the mapping that holds `address` ("" if none).
inline std::string maps_line_of(pid_t pid, std::uint64_t address) {
  std::ifstream maps("/proc/" + std::to_string(pid) + "/maps");
  for (std::string line; std::getline(maps, line);) {
    std::uint64_t lo = 0, hi = 0;
    if (std::sscanf(line.c_str(), "%lx-%lx", &lo, &hi) == 2 && address >= lo && address < hi) {
      return line;
    }
  }
  return "";
}

// The bytes of every executable mapping of pid, by its start (the program's code, its
// libraries', the vDSO's), read through /proc/PID/mem.
inline std::map<std::uint64_t, std::vector<std::uint8_t>> code_of(pid_t pid) {
  std::map<std::uint64_t, std::vector<std::uint8_t>> out;
  std::ifstream maps("/proc/" + std::to_string(pid) + "/maps");
  for (std::string line; std::getline(maps, line);) {
    std::uint64_t lo = 0, hi = 0;
    char perms[5] = {};
    if (std::sscanf(line.c_str(), "%lx-%lx %4s", &lo, &hi, perms) == 3 && perms[2] == 'x' &&
        line.find("[vsyscall]") == std::string::npos) {
      if (auto bytes = read_raw_memory(pid, lo, hi - lo)) {
        out[lo] = *bytes;
      }
    }
  }
  return out;
}

}  // namespace test_tracer
