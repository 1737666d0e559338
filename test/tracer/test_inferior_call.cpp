// Inferior calls (tracer/linux/inferior_call.hpp) on a live program the test attached to while
// it slept in nanosleep: the result, the thread's registers exactly as before, the sleep
// restarted, a fault or a hang abandoned, a signal held, and a library loaded with dlopen.
#include <dlfcn.h>
#include <sys/ptrace.h>
#include <sys/wait.h>

#include <catch2/catch.hpp>

#include <cstring>
#include <fstream>
#include <string>

#include "arch/x86/register_layout.hpp"
#include "test/support/skip.hpp"
#include "test/tracer/attached_callee.hpp"
#include "test/tracer/live_support.hpp"
#include "tracer/inprocess/recorder/recorder_api.h"
#include "tracer/linux/inferior_call.hpp"
#include "tracer/linux/kernel.hpp"

using namespace test_tracer;
using tracer::CallArg;
using tracer::InferiorCall;

TEST_CASE("an inferior call runs a function of the attached program and leaves its thread as it was",
          "[tracer][inferior_call]") {
  REQUIRE_PTRACE();
  AttachedCallee callee(5);
  auto& kernel = callee.kernel();
  const auto before = registers_of(kernel, callee.pid());

  InferiorCall add{symbol("callee", "callee_add"), {CallArg::of(40), CallArg::of(2), CallArg::data_at(0)},
                   text_bytes("hello")};
  auto outcome = tracer::call_function(kernel, callee.pid(), callee.pid(), add);
  REQUIRE(outcome.result.ok());
  CHECK(*outcome.result == 47);
  CHECK(outcome.held_signals.empty());
  check_same(before, registers_of(kernel, callee.pid()));

  // One that uses the vector registers: they are the program's again afterwards.
  InferiorCall fp{symbol("callee", "callee_float"), {}, {}};
  REQUIRE(tracer::call_function(kernel, callee.pid(), callee.pid(), fp).result.ok());
  check_same(before, registers_of(kernel, callee.pid()));

  // The nanosleep it was stopped in restarts: no sleep cut short, every round slept.
  callee.check_ends_with("ticks=5 calls=1 cut=0\n");
}

TEST_CASE("an inferior call that faults or never returns is abandoned, the thread as it was",
          "[tracer][inferior_call]") {
  REQUIRE_PTRACE();
  AttachedCallee callee(3);
  auto& kernel = callee.kernel();
  const auto before = registers_of(kernel, callee.pid());

  InferiorCall crash{symbol("callee", "callee_crash"), {}, {}};
  auto faulted = tracer::call_function(kernel, callee.pid(), callee.pid(), crash);
  REQUIRE_FALSE(faulted.result.ok());
  CHECK(faulted.result.error().code == base::Errc::failed);
  CHECK(faulted.result.error().message().starts_with("the called function faulted (SIGSEGV at 0x"));
  check_same(before, registers_of(kernel, callee.pid()));

  InferiorCall spin{symbol("callee", "callee_spin"), {}, {}, std::chrono::milliseconds(200)};
  auto hung = tracer::call_function(kernel, callee.pid(), callee.pid(), spin);
  REQUIRE_FALSE(hung.result.ok());
  CHECK(hung.result.error().code == base::Errc::timed_out);
  CHECK(hung.result.error().message() == "the called function did not return within 200 ms");
  check_same(before, registers_of(kernel, callee.pid()));

  // Neither the fault nor our SIGSTOP reaches the program: it runs on to its normal end.
  auto [out, status] = callee.finish();
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
  CHECK(out.starts_with("ticks=3 calls="));
  CHECK(out.ends_with(" cut=0\n"));
}

TEST_CASE("a signal that comes during an inferior call is held and named, not delivered",
          "[tracer][inferior_call]") {
  REQUIRE_PTRACE();
  AttachedCallee callee(2);
  auto& kernel = callee.kernel();
  REQUIRE(kernel.tgkill(callee.pid(), callee.pid(), SIGUSR1).ok());  // pending: comes first on resume
  InferiorCall add{symbol("callee", "callee_add"), {CallArg::of(1), CallArg::of(2), CallArg::data_at(0)},
                   text_bytes("")};
  auto outcome = tracer::call_function(kernel, callee.pid(), callee.pid(), add);
  REQUIRE(outcome.result.ok());
  CHECK(*outcome.result == 3);
  REQUIRE(outcome.held_signals.size() == 1);
  CHECK(outcome.held_signals[0] == SIGUSR1);
  // Not sent again here: SIGUSR1 would end the program.
  callee.check_ends_with("ticks=2 calls=1 cut=0\n");
}

TEST_CASE("an inferior call at a fork's event stop lets the fork end first: the program gets the child's pid",
          "[tracer][inferior_call]") {
  REQUIRE_PTRACE();
  AttachedCallee callee(1, 0, "fork");
  auto& kernel = callee.kernel();
  const tracer::Pid pid = callee.pid();
  REQUIRE(kernel.set_options(pid, PTRACE_O_TRACEFORK).ok());
  REQUIRE(kernel.resume(pid, false, 0).ok());
  auto st = kernel.wait_for(pid);
  REQUIRE(st.ok());
  REQUIRE(WIFSTOPPED(*st));
  REQUIRE((*st >> 16) == PTRACE_EVENT_FORK);  // inside fork: rax is not its result yet
  auto child = kernel.event_message(pid);
  REQUIRE(child.ok());
  auto child_start = kernel.wait_for(static_cast<tracer::Tid>(*child));
  REQUIRE(child_start.ok());
  REQUIRE(kernel.detach(static_cast<tracer::Tid>(*child), 0).ok());

  InferiorCall add{symbol("callee", "callee_add"),
                   {CallArg::of(40), CallArg::of(2), CallArg::data_at(0)},
                   text_bytes("hello")};
  auto outcome = tracer::call_function(kernel, pid, pid, add);
  REQUIRE(outcome.result.ok());
  CHECK(*outcome.result == 47);
  CHECK(registers_of(kernel, pid).gpr[arch::x86::kRax] == *child);  // fork's own result, kept
  // (A call that took the result's place: fork would say -ENOSYS, "fork=lost".)
  callee.check_ends_with("ticks=1 calls=0 cut=0 fork=child\n");  // (calls was printed before the fork)
}

TEST_CASE(
    "no inferior call runs on a thread waiting in sigsuspend: the program's mask would come back too early",
    "[tracer][inferior_call]") {
  REQUIRE_PTRACE();
  AttachedCallee callee(0, 0, "suspend");
  auto& kernel = callee.kernel();
  auto why = tracer::call_refused(kernel, callee.pid());
  REQUIRE(why.has_value());
  CHECK_THAT(*why, Catch::Contains("waits under its own signal mask"));
  InferiorCall add{
      symbol("callee", "callee_add"), {CallArg::of(1), CallArg::of(2), CallArg::data_at(0)}, text_bytes("")};
  auto outcome = tracer::call_function(kernel, callee.pid(), callee.pid(), add);
  REQUIRE_FALSE(outcome.result.ok());
  CHECK(outcome.result.error().code == base::Errc::not_yet);
  // Untouched: its handler ends sigsuspend, which gives it back its own mask.
  REQUIRE(::kill(callee.pid(), SIGUSR1) == 0);
  callee.check_ends_with("sigsuspend=EINTR usr1=blocked handled=1\n");
}

TEST_CASE("an inferior call to the program's dlopen loads a library into the running program",
          "[tracer][inferior_call]") {
  REQUIRE_PTRACE();
  AttachedCallee callee(2);
  auto& kernel = callee.kernel();
  REQUIRE_FALSE(maps_mention(callee.pid(), "libm.so"));
  // The program keeps dlopen's address (resolved by the dynamic linker) in a variable.
  auto memory = kernel.memory(callee.pid());
  REQUIRE(memory.ok());
  auto pointer = (*memory)->read(symbol("callee", "keep_dlopen"), 8);
  REQUIRE(pointer.ok());
  const std::uint64_t dlopen_at = tracer::load_u64(*pointer);
  REQUIRE(dlopen_at != 0);

  InferiorCall load{dlopen_at, {CallArg::data_at(0), CallArg::of(RTLD_NOW | RTLD_LOCAL)}, text_bytes("libm.so.6")};
  auto outcome = tracer::call_function(kernel, callee.pid(), callee.pid(), load);
  REQUIRE(outcome.result.ok());
  CHECK(*outcome.result != 0);  // the handle
  CHECK(maps_mention(callee.pid(), "libm.so"));
  callee.check_ends_with("ticks=2 calls=0 cut=0\n");
}
