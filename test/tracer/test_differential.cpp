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
#include "test/tracer/recording.hpp"

using namespace test_tracer;

namespace {

void compare(const std::string& program, std::vector<std::string> args, const Scope& scope = {}) {
  INFO(program << (args.empty() ? "" : " " + args[0]));
  const Recording step = record(Backend::Step, program, args);
  const Recording soft = record(Backend::Soft, program, args);
  CHECK(step.gaps == 0);
  CHECK(soft.gaps == 0);
  check_same_threads(program, step, soft, "step", "soft", scope);
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
                                    "plt", "smc", "jit", "rep");
  compare(corpus("tracer_corpus"), {mode});
}

TEST_CASE("differential: four threads, each its own history", "[tracer][btrace][differential][threads]") {
  REQUIRE_PTRACE();
  // How far each thread got into the barriers when the test stops them depends on timing:
  // the branches of their own work are compared.
  compare(corpus("tracer_corpus"), {"threads"}, Scope{"thread_work"});
}

TEST_CASE("differential: clock_gettime through the vDSO", "[tracer][btrace][differential]") {
  REQUIRE_PTRACE();
  // The vDSO's clock read retries when the clock changes underneath, which single-stepping
  // makes likelier: the program's own branches are compared (into and out of libc and the
  // vDSO), and SoftEmulate must have performed the vDSO's branches without a gap.
  const std::string program = corpus("tracer_corpus");
  compare(program, {"vdso"}, Scope{"main"});
  const Recording soft = record(Backend::Soft, program, {"vdso"});
  REQUIRE(soft.vdso_hi > soft.vdso_lo);
  CHECK(count_from(soft.threads[0], soft.vdso_lo, soft.vdso_hi) > 0);
}

TEST_CASE("differential: a library loaded, called and unloaded twice", "[tracer][btrace][differential]") {
  REQUIRE_PTRACE();
  compare(corpus("tracer_corpus"), {"dlopen", corpus("libcorpus_plugin.so")});
}

TEST_CASE("differential: C++ exceptions thrown, caught and rethrown", "[tracer][btrace][differential]") {
  REQUIRE_PTRACE();
  compare(corpus("tracer_corpus_cxx"), {}, Scope{.until = "worker_sync"});
}
