// Recording a corpus program with one of the server's collectors, between diff_begin and
// diff_end, for the differential tests (test_differential.cpp, test_dbt.cpp).
#pragma once

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "test/tracer/elf_symbols.hpp"
#include "test/tracer/live_support.hpp"
#include "tracer/linux/process_recorder.hpp"
#include "tracer/btrace/soft_step.hpp"

#ifndef CORPUS_DIR
#error "CORPUS_DIR must name the directory of the corpus programs"
#endif
#ifndef RECORDER_LIB
#error "RECORDER_LIB must name libhindsight-recorder.so (the inproc collector's)"
#endif

namespace test_tracer {

using tracer::BranchSample;
using tracer::Backend;
using tracer::StopReason;

struct Recording {
  std::vector<std::vector<BranchSample>> threads;  // leader first, then by tid
  std::uint64_t vdso_lo = 0, vdso_hi = 0;          // where the vDSO was
  std::uint64_t stepped = 0;                       // instructions the collector single-stepped
  std::uint64_t emulated = 0;                      // branches it performed
  std::uint64_t gaps = 0;                          // what it could not follow, all threads
  long sink = 0;                                   // the program's `sink` at diff_end
};

inline std::string corpus(const std::string& name) { return std::string(CORPUS_DIR) + "/" + name; }

// The file mapped at addr in pid ("[vdso]" and the like too; empty: anonymous or unmapped).
inline std::string mapped_file(int pid, std::uint64_t addr) {
  std::ifstream maps("/proc/" + std::to_string(pid) + "/maps");
  for (std::string line; std::getline(maps, line);) {
    std::uint64_t lo = 0, hi = 0;
    if (std::sscanf(line.c_str(), "%lx-%lx", &lo, &hi) == 2 && addr >= lo && addr < hi) {
      const auto path = line.find_first_of("/[");
      return path == std::string::npos ? std::string() : line.substr(path);
    }
  }
  return {};
}

// Branches whose `from` lies in [lo, hi): for threads whose libc paths depend on timing.
inline std::vector<BranchSample> within(const std::vector<BranchSample>& all, std::uint64_t lo, std::uint64_t hi) {
  std::vector<BranchSample> out;
  std::copy_if(all.begin(), all.end(), std::back_inserter(out),
               [&](const BranchSample& b) { return b.from >= lo && b.from < hi; });
  return out;
}

// The program's own branches: those from its code, with targets outside it written as 0 (libc,
// ld.so, the vDSO, Valgrind's redirections, a library loaded later: where they are mapped
// depends on what else is, the dbt recorder or the in-process one).
inline std::vector<BranchSample> own_code(const std::vector<BranchSample>& all, const CodeRange& code) {
  std::vector<BranchSample> out;
  for (const auto& s : all) {
    if (code.contains(s.from)) {
      out.push_back(BranchSample{s.from, code.contains(s.to) ? s.to : 0});
    }
  }
  return out;
}

// Runs `program args` to diff_begin, records every thread with `backend` to diff_end; with
// every system call caught (catch syscall) when catch_syscalls, each entry and return a stop.
inline Recording record(Backend backend, const std::string& program, std::vector<std::string> args,
                        bool catch_syscalls = false) {
  tracer::LinuxTarget target;
  target.set_btrace_backend(backend);
  target.set_collector_setup(tracer::CollectorSetup{tracer::recorder_port_maker(RECORDER_LIB)});
  auto launched = target.launch({program, std::move(args), false, true});
  REQUIRE(launched.ok());
  const int pid = *launched;
  const auto begin = elf_symbol(program, "diff_begin");
  const auto end = elf_symbol(program, "diff_end");
  REQUIRE(begin);
  REQUIRE(end);
  REQUIRE(target.insert_breakpoint(tracer::BreakpointType::Software, *begin, 1).ok());
  REQUIRE(target.resume(plan_all()).ok());
  auto ev = wait_stop(target);
  REQUIRE(ev);
  REQUIRE(ev->reason == StopReason::SoftwareBreakpoint);
  REQUIRE(target.remove_breakpoint(tracer::BreakpointType::Software, *begin, 1).ok());
  tracer::BtraceConfig big;
  big.bts_size = 64u << 20;
  for (const auto& th : target.threads()) {
    REQUIRE(target.enable_btrace(th.tid, big).ok());
  }
  REQUIRE(target.insert_breakpoint(tracer::BreakpointType::Software, *end, 1).ok());
  if (catch_syscalls) {
    REQUIRE(target.set_catch_syscalls(tracer::SyscallCatch{true, {}}).ok());
  }
  int deliver = 0;
  for (;;) {
    REQUIRE(target.resume(plan_all(tracer::ResumeKind::Continue, deliver)).ok());
    ev = wait_stop(target, std::chrono::milliseconds(120000));
    REQUIRE(ev);
    if (ev->reason == StopReason::SoftwareBreakpoint) {
      break;
    }
    deliver = 0;
    if (catch_syscalls && (ev->reason == StopReason::SyscallEntry || ev->reason == StopReason::SyscallReturn)) {
      // GDB sees the program's own code there: none of the in-process recorder's.
      auto pc = target.read_pc(ev->tid);
      REQUIRE(pc.ok());
      const std::string file = mapped_file(pid, *pc);
      INFO("a syscall stop at " << std::hex << *pc << " in " << (file.empty() ? "anonymous memory" : file));
      CHECK((!file.empty() && file.find("hindsight") == std::string::npos));
      continue;
    }
    REQUIRE(ev->reason == StopReason::Signal);  // the program's own signal: delivered
    deliver = ev->signal;
  }
  Recording rec;
  std::ifstream maps("/proc/" + std::to_string(pid) + "/maps");
  for (std::string line; std::getline(maps, line);) {
    if (line.find("[vdso]") != std::string::npos) {
      std::sscanf(line.c_str(), "%lx-%lx", &rec.vdso_lo, &rec.vdso_hi);
    }
  }
  std::vector<int> tids;
  for (const auto& th : target.threads()) {
    tids.push_back(th.tid);
  }
  std::sort(tids.begin(), tids.end(), [&](int a, int b) { return (a == pid) != (b == pid) ? a == pid : a < b; });
  for (int tid : tids) {
    auto* t = dynamic_cast<tracer::SoftStepTracer*>(target.branch_tracer(tid));
    REQUIRE(t != nullptr);
    rec.threads.push_back(t->samples());
    rec.gaps += t->stats().gaps;
    CHECK(t->stats().lost == 0);
    rec.stepped += t->stats().stepped;
    rec.emulated += t->stats().emulated;
  }
  const auto sink = elf_symbol(program, "sink");
  if (sink) {
    auto bytes = target.read_memory(*sink, sizeof rec.sink);
    REQUIRE(bytes.ok());
    REQUIRE(bytes->size() == sizeof rec.sink);
    std::memcpy(&rec.sink, bytes->data(), sizeof rec.sink);
  }
  REQUIRE(target.kill().ok());
  return rec;
}

// A read() a signal interrupted (corpus restart), as dbt and inproc record it: the handler's
// entry is a branch from the read's `syscall`, its rt_sigreturn a branch back to it, and the
// restart itself no branch.
inline void check_interrupted_read(const std::vector<BranchSample>& s, std::uint64_t handler) {
  auto entry = std::find_if(s.begin(), s.end(), [&](const BranchSample& b) { return b.to == handler; });
  REQUIRE(entry != s.end());
  const std::uint64_t syscall_at = entry->from;
  CHECK(std::count_if(entry, s.end(), [&](const BranchSample& b) { return b.to == syscall_at; }) == 1);  // back
  CHECK(std::none_of(s.begin(), s.end(), [](const BranchSample& b) { return b.from == b.to; }));
}

// The two lists are equal, record for record; else where they part, four records of each.
inline void check_same(const std::vector<BranchSample>& a, const std::vector<BranchSample>& b, const char* name_a,
                       const char* name_b) {
  CHECK(a.size() == b.size());
  const auto mismatch = std::mismatch(a.begin(), a.end(), b.begin(), b.end());
  if (mismatch.first != a.end() || mismatch.second != b.end()) {
    auto show = [](auto it, auto last) {
      std::ostringstream o;
      for (int n = 0; n < 4 && it != last; ++n, ++it) {
        o << std::hex << " " << it->from << "->" << it->to;
      }
      return o.str();
    };
    FAIL("the collectors disagree at branch " << (mismatch.first - a.begin()) << " of " << a.size() << "\n"
                                              << name_a << ":" << show(mismatch.first, a.end()) << "\n"
                                              << name_b << ":" << show(mismatch.second, b.end()));
  }
}

// `samples` up to the first branch to `function` of `program`, that one kept (all if none).
inline void cut_after_call(const std::string& program, const std::string& function, std::vector<BranchSample>& samples) {
  const auto f = elf_symbol(program, function);
  REQUIRE(f);
  auto at = std::find_if(samples.begin(), samples.end(), [&](const BranchSample& s) { return s.to == *f; });
  samples.erase(at == samples.end() ? at : at + 1, samples.end());
}

// Which branches two recordings compare: all, those from one function, or those from the
// program's own code (own_code above).
struct Scope {
  std::string function{};
  bool own_code = false;
  // Each thread's branches up to its first call of this function (where what follows depends
  // on where the last stop found the thread); empty: all.
  std::string until{};
};

// Thread by thread, `a` and `b` recorded the same branches of `program` within `scope`.
inline void check_same_threads(const std::string& program, const Recording& a, const Recording& b, const char* name_a,
                               const char* name_b, const Scope& scope = {}) {
  REQUIRE(a.threads.size() == b.threads.size());
  for (std::size_t i = 0; i < a.threads.size(); ++i) {
    INFO("thread #" << i);
    auto x = a.threads[i];
    auto y = b.threads[i];
    if (!scope.until.empty()) {
      cut_after_call(program, scope.until, x);
      cut_after_call(program, scope.until, y);
    }
    if (!scope.function.empty()) {
      const auto f = elf_symbol_entry(program, scope.function);
      REQUIRE(f);
      x = within(x, f->addr, f->addr + f->size);
      y = within(y, f->addr, f->addr + f->size);
    } else {
      if (scope.own_code) {
        const auto code = elf_code_range(program);
        REQUIRE(code);
        x = own_code(x, *code);
        y = own_code(y, *code);
      }
      CHECK(!x.empty());
    }
    check_same(x, y, name_a, name_b);
  }
}

}  // namespace test_tracer
