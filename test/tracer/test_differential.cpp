// Differential test of the software collectors: on a corpus of control flow (loops,
// recursion, jump tables, function pointers, tail calls, longjmp, a signal handler, four
// threads, vDSO, lazy PLT, dlopen/dlclose, code written at run time, rep string instructions,
// C++ exceptions) SoftEmulate records exactly the branches SoftStep records, in order, per
// thread, between diff_begin and diff_end.
#include <algorithm>
#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>
#include <vector>

#include "test/support/skip.hpp"
#include "test/tracer/live_support.hpp"
#include "tracer/btrace/soft_step.hpp"

#ifndef CORPUS_DIR
#error "CORPUS_DIR must name the directory of the corpus programs"
#endif

using namespace test_tracer;
using tracer::BranchSample;
using tracer::BtraceBackend;
using tracer::StopReason;

namespace {

struct Recording {
  std::vector<std::vector<BranchSample>> threads;  // leader first, then by tid
  std::uint64_t vdso_lo = 0, vdso_hi = 0;          // where the vDSO was
  std::uint64_t stepped = 0;                       // instructions the collector single-stepped
  std::uint64_t emulated = 0;                      // branches it performed
};

std::string corpus(const std::string& name) { return std::string(CORPUS_DIR) + "/" + name; }

// Branches whose `from` lies in [lo, hi): for threads whose libc paths depend on timing.
std::vector<BranchSample> within(const std::vector<BranchSample>& all, std::uint64_t lo, std::uint64_t hi) {
  std::vector<BranchSample> out;
  std::copy_if(all.begin(), all.end(), std::back_inserter(out),
               [&](const BranchSample& b) { return b.from >= lo && b.from < hi; });
  return out;
}

// Runs `program args` to diff_begin, records every thread with `backend` to diff_end.
Recording record(BtraceBackend backend, const std::string& program, std::vector<std::string> args) {
  tracer::LinuxTarget target;
  target.set_btrace_backend(backend);
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
  int deliver = 0;
  for (;;) {
    REQUIRE(target.resume(plan_all(tracer::ResumeKind::Continue, deliver)).ok());
    ev = wait_stop(target, std::chrono::milliseconds(120000));
    REQUIRE(ev);
    if (ev->reason == StopReason::SoftwareBreakpoint) {
      break;
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
    CHECK(t->stats().gaps == 0);
    CHECK(t->stats().lost == 0);
    rec.stepped += t->stats().stepped;
    rec.emulated += t->stats().emulated;
  }
  REQUIRE(target.kill().ok());
  return rec;
}

// Which branches to compare: all of them, or only those from one function.
struct Filter {
  std::string function;  // empty: all
};

void compare(const std::string& program, std::vector<std::string> args, const Filter& filter = {}) {
  INFO(program << (args.empty() ? "" : " " + args[0]));
  const Recording step = record(BtraceBackend::Step, program, args);
  const Recording soft = record(BtraceBackend::Soft, program, args);
  REQUIRE(step.threads.size() == soft.threads.size());
  for (std::size_t i = 0; i < step.threads.size(); ++i) {
    INFO("thread #" << i);
    auto a = step.threads[i];
    auto b = soft.threads[i];
    if (!filter.function.empty()) {
      const auto f = elf_symbol_entry(program, filter.function);
      REQUIRE(f);
      a = within(a, f->addr, f->addr + f->size);
      b = within(b, f->addr, f->addr + f->size);
    } else {
      CHECK(!a.empty());
    }
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
      FAIL("the collectors disagree at branch " << (mismatch.first - a.begin()) << " of " << a.size()
                                                << "\nstep:" << show(mismatch.first, a.end())
                                                << "\nsoft:" << show(mismatch.second, b.end()));
    }
  }
  // SoftEmulate performed branches itself; only what it could not was stepped.
  CHECK(soft.emulated > 0);
  CHECK(soft.stepped < step.stepped / 4);
}

std::size_t count_from(const std::vector<BranchSample>& s, std::uint64_t lo, std::uint64_t hi) {
  return within(s, lo, hi).size();
}

}  // namespace

TEST_CASE("differential: SoftEmulate records what SoftStep records", "[tracer][btrace][differential]") {
  REQUIRE_PTRACE();
  const std::string mode = GENERATE("loops", "recursion", "switch", "fptr", "tailcall", "longjmp", "signal",
                                    "plt", "smc", "rep");
  compare(corpus("tracer_corpus"), {mode});
}

TEST_CASE("differential: four threads, each its own history", "[tracer][btrace][differential][threads]") {
  REQUIRE_PTRACE();
  // How far each thread got into the barriers when the test stops them depends on timing:
  // the branches of their own work are compared.
  compare(corpus("tracer_corpus"), {"threads"}, Filter{"thread_work"});
}

TEST_CASE("differential: clock_gettime through the vDSO", "[tracer][btrace][differential]") {
  REQUIRE_PTRACE();
  // The vDSO's clock read retries when the clock changes underneath, which single-stepping
  // makes likelier: the program's own branches are compared (into and out of libc and the
  // vDSO), and SoftEmulate must have performed the vDSO's branches without a gap.
  const std::string program = corpus("tracer_corpus");
  compare(program, {"vdso"}, Filter{"main"});
  const Recording soft = record(BtraceBackend::Soft, program, {"vdso"});
  REQUIRE(soft.vdso_hi > soft.vdso_lo);
  CHECK(count_from(soft.threads[0], soft.vdso_lo, soft.vdso_hi) > 0);
}

TEST_CASE("differential: a library loaded, called and unloaded twice", "[tracer][btrace][differential]") {
  REQUIRE_PTRACE();
  compare(corpus("tracer_corpus"), {"dlopen", corpus("libcorpus_plugin.so")});
}

TEST_CASE("differential: C++ exceptions thrown, caught and rethrown", "[tracer][btrace][differential]") {
  REQUIRE_PTRACE();
  compare(corpus("tracer_corpus_cxx"), {});
}
