// Differential test of the in-process recorder (--btrace=inproc): on the corpus of
// test_differential.cpp it records exactly the branches SoftStep records, in order, per thread,
// between diff_begin and diff_end, and the program computes what it computes under SoftStep.
// Where it cannot follow (code on a writable page) its history is SoftStep's up to there, then
// a gap, never a branch SoftStep did not see.
#include <algorithm>
#include <string>
#include <vector>

#include "test/support/skip.hpp"
#include "test/tracer/recording.hpp"

using namespace test_tracer;

namespace {

// Modes whose `sink` does not depend on the clock or the pid.
bool deterministic(const std::string& mode) {
  return mode != "vdso" && mode != "plt";
}

void compare_inproc(const std::string& program, std::vector<std::string> args, const Scope& scope = {},
                    bool catch_syscalls = false) {
  const std::string mode = args.empty() ? "" : args[0];
  INFO(program << " " << mode << (catch_syscalls ? ", every system call caught" : ""));
  const Recording step = record(Backend::Step, program, args, catch_syscalls);
  const Recording inproc = record(Backend::Inproc, program, args, catch_syscalls);
  CHECK(step.gaps == 0);
  CHECK(inproc.gaps == 0);
  if (deterministic(mode)) {
    CHECK(inproc.sink == step.sink);
  }
  check_same_threads(program, step, inproc, "step", "inproc", scope);
  // Recorded in the cache, not stepped.
  CHECK(inproc.stepped < step.stepped / 4);
}

}  // namespace

TEST_CASE("differential: inproc records what SoftStep records", "[tracer][btrace][differential][inproc]") {
  REQUIRE_PTRACE();
  const std::string mode = GENERATE("loops", "recursion", "switch", "fptr", "tailcall", "longjmp", "signal",
                                    "plt", "rep", "jit");
  compare_inproc(corpus("tracer_corpus"), {mode});
}

TEST_CASE("differential: inproc with every system call caught: it records in the cache, and each syscall stop "
          "stands in the program's code",
          "[tracer][btrace][differential][inproc][catch-syscall]") {
  REQUIRE_PTRACE();
  // signal: the handler's sigreturn; jit: mmap and mprotect (the recorder has them made
  // natively then); plt: the dynamic linker's first calls.
  const std::string mode = GENERATE("loops", "signal", "jit", "plt");
  compare_inproc(corpus("tracer_corpus"), {mode}, {}, true);
}

TEST_CASE("inproc with every system call caught: a signal that interrupts a blocked read, its handler, the read "
          "again",
          "[tracer][btrace][inproc][catch-syscall]") {
  REQUIRE_PTRACE();
  // As dbt records it (SoftStep's view of a restart differs).
  const std::string program = corpus("tracer_corpus");
  const auto handler = elf_symbol(program, "on_alarm");
  REQUIRE(handler);
  const Recording rec = record(Backend::Inproc, program, {"restart"}, true);
  REQUIRE(rec.threads.size() == 1);
  check_interrupted_read(rec.threads[0], *handler);
  CHECK(rec.gaps == 0);
  CHECK(rec.stepped < 50);  // (the signal's way into its handler, and GDB's int3s: stepped)
}

TEST_CASE("differential: inproc with every system call caught, four threads and a library loaded and unloaded",
          "[tracer][btrace][differential][inproc][catch-syscall]") {
  REQUIRE_PTRACE();
  compare_inproc(corpus("tracer_corpus"), {"threads"}, Scope{"thread_work"}, true);
  compare_inproc(corpus("tracer_corpus"), {"dlopen", corpus("libcorpus_plugin.so")}, Scope{{}, true}, true);
}

TEST_CASE("differential: inproc, clock_gettime through the vDSO", "[tracer][btrace][differential][inproc]") {
  REQUIRE_PTRACE();
  // (the vDSO's retries depend on timing, which stepping changes: the program's own branches)
  compare_inproc(corpus("tracer_corpus"), {"vdso"}, Scope{"main"});
}

TEST_CASE("differential: inproc, four threads", "[tracer][btrace][differential][inproc][threads]") {
  REQUIRE_PTRACE();
  compare_inproc(corpus("tracer_corpus"), {"threads"}, Scope{"thread_work"});
}

TEST_CASE("differential: inproc, a library loaded, called and unloaded twice",
          "[tracer][btrace][differential][inproc]") {
  REQUIRE_PTRACE();
  // (the plugin is mapped elsewhere: the recorder's memory takes room)
  compare_inproc(corpus("tracer_corpus"), {"dlopen", corpus("libcorpus_plugin.so")}, Scope{{}, true});
}

TEST_CASE("differential: inproc, C++ exceptions and thread-local objects in main and a new thread, address for "
          "address in the program, libstdc++, libc and ld.so",
          "[tracer][btrace][differential][inproc]") {
  REQUIRE_PTRACE();
  // Every branch: the recorder is in no link map and has no TLS, so the unwinder's walks of the
  // loaded objects and the TLS set-up of a new thread take the paths they take under SoftStep.
  compare_inproc(corpus("tracer_corpus_cxx"), {}, Scope{.until = "worker_sync"});
}

TEST_CASE("differential: inproc, code written at run time on a writable page is a gap, not a stale copy",
          "[tracer][btrace][differential][inproc]") {
  REQUIRE_PTRACE();
  const std::string program = corpus("tracer_corpus");
  const Recording step = record(Backend::Step, program, {"smc"});
  const Recording inproc = record(Backend::Inproc, program, {"smc"});
  CHECK(inproc.sink == step.sink);  // each version ran as written
  CHECK(inproc.gaps > 0);
  REQUIRE(inproc.threads.size() == 1);
  const auto& a = step.threads[0];
  const auto& b = inproc.threads[0];
  REQUIRE(b.size() < a.size());
  REQUIRE(!b.empty());
  // What it recorded is SoftStep's history up to the first call into the page, that call
  // included, then the gap (from 0).
  REQUIRE(b.back().from == 0);
  const std::vector<BranchSample> recorded(b.begin(), b.end() - 1);
  const std::vector<BranchSample> prefix(a.begin(), a.begin() + static_cast<std::ptrdiff_t>(recorded.size()));
  check_same(prefix, recorded, "step", "inproc");
}
