// The server's system calls and calls in a live program (tracer/linux/remote_syscalls.hpp), on a
// thread the test attached to while it slept in nanosleep: their results, the thread's registers
// exactly as before, the sleep restarted, a fault or a hang abandoned, a signal kept pending, a fork's
// result kept, and no call on a thread in sigsuspend.
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include <cstring>
#include <string>

#include "arch/x86/register_layout.hpp"
#include "test/support/skip.hpp"
#include "test/tracer/attached_callee.hpp"
#include "test/tracer/live_support.hpp"
#include "tracer/linux/call_refusal.hpp"
#include "tracer/linux/kernel.hpp"
#include "tracer/linux/remote_syscalls.hpp"

using namespace test_tracer;

namespace {

// The server's calls on the callee's main thread, at the vDSO's syscall instruction (which
// the calls return to as well: the first stop there is a call's end).
struct OnCallee {
  tracer::Addr at = 0;
  tracer::RemoteSyscalls calls;
};

OnCallee on_callee(AttachedCallee& callee) {
  auto at = tracer::find_syscall_instruction(callee.kernel(), callee.pid());
  INFO((at ? std::string("found") : at.error().message()));
  REQUIRE(at.ok());
  auto calls = tracer::RemoteSyscalls::begin(callee.kernel(), callee.pid(), callee.pid(), *at);
  INFO((calls ? std::string("begun") : calls.error().message()));
  REQUIRE(calls.ok());
  return {*at, std::move(*calls)};
}

// A page of the program's with `text` at its start, mapped by the server's own mmap.
tracer::Addr page_with(AttachedCallee& callee, tracer::RemoteSyscalls& calls, const std::string& text) {
  auto page = calls.run(SYS_mmap, {0, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
                                   static_cast<std::uint64_t>(-1), 0});
  REQUIRE(page.ok());
  REQUIRE(*page > 0);
  auto memory = callee.kernel().memory(callee.pid());
  REQUIRE(memory.ok());
  REQUIRE((*memory)->write(static_cast<tracer::Addr>(*page), text_bytes(text)).ok());
  return static_cast<tracer::Addr>(*page);
}

}  // namespace

TEST_CASE("the server's system calls and calls run in the attached program and leave its thread as it was",
          "[tracer][remote_syscalls]") {
  REQUIRE_PTRACE();
  AttachedCallee callee(5);
  auto& kernel = callee.kernel();
  const auto before = registers_of(kernel, callee.pid());
  auto [at, calls] = on_callee(callee);

  const tracer::Addr hello = page_with(callee, calls, "hello");
  auto sum = calls.call(symbol("callee", "callee_add"), {40, 2, hello}, at);
  INFO((sum ? std::string("returned") : sum.error().message()));
  REQUIRE(sum.ok());
  CHECK(*sum == 47);
  // One that uses the vector registers: they are the program's again afterwards.
  REQUIRE(calls.call(symbol("callee", "callee_float"), {}, at).ok());
  auto unmapped = calls.run(SYS_munmap, {hello, 4096});
  REQUIRE(unmapped.ok());
  CHECK(*unmapped == 0);
  REQUIRE(calls.end().ok());
  CHECK(calls.take_held().empty());
  check_same(before, registers_of(kernel, callee.pid()));
  // The nanosleep it was stopped in restarts: no sleep cut short, every round slept.
  callee.check_ends_with("ticks=5 calls=1 cut=0\n");
}

TEST_CASE("a call of the server's that faults or never returns is abandoned, the thread as it was",
          "[tracer][remote_syscalls]") {
  REQUIRE_PTRACE();
  AttachedCallee callee(3);
  auto& kernel = callee.kernel();
  const auto before = registers_of(kernel, callee.pid());
  {
    auto [at, calls] = on_callee(callee);
    auto faulted = calls.call(symbol("callee", "callee_crash"), {}, at);
    REQUIRE_FALSE(faulted.ok());
    CHECK(faulted.error().code == base::Errc::failed);
    CHECK(faulted.error().message() == "the server's call in the program stopped with signal 11");
    REQUIRE(calls.end().ok());
  }
  check_same(before, registers_of(kernel, callee.pid()));
  {
    auto [at, calls] = on_callee(callee);
    auto hung = calls.call(symbol("callee", "callee_spin"), {}, at, std::chrono::milliseconds(200));
    REQUIRE_FALSE(hung.ok());
    CHECK(hung.error().code == base::Errc::timed_out);
    CHECK(hung.error().message() == "the server's call in the program did not end in time");
    REQUIRE(calls.end().ok());
  }
  check_same(before, registers_of(kernel, callee.pid()));
  // Neither the fault nor the server's SIGSTOP reaches the program: it runs on to its normal end.
  auto [out, status] = callee.finish();
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
  CHECK(out.starts_with("ticks=3 calls="));
  CHECK(out.ends_with(" cut=0\n"));
}

TEST_CASE("a signal that comes during the server's calls stays pending, then reaches the program with its siginfo",
          "[tracer][remote_syscalls]") {
  REQUIRE_PTRACE();
  AttachedCallee callee(2);
  auto& kernel = callee.kernel();
  auto [at, calls] = on_callee(callee);
  // A sigqueue, as the server's calls run (the thread stopped inside nanosleep).
  siginfo_t sent{};
  sent.si_signo = SIGUSR1;
  sent.si_code = SI_QUEUE;
  sent.si_pid = ::getpid();
  sent.si_uid = ::getuid();
  sent.si_value.sival_int = 4711;
  REQUIRE(::syscall(SYS_rt_tgsigqueueinfo, callee.pid(), callee.pid(), SIGUSR1, &sent) == 0);
  const tracer::Addr empty = page_with(callee, calls, "");
  auto sum = calls.call(symbol("callee", "callee_add"), {1, 2, empty}, at);
  REQUIRE(sum.ok());
  CHECK(*sum == 3);
  REQUIRE(calls.run(SYS_munmap, {empty, 4096}).ok());
  REQUIRE(calls.end().ok());
  CHECK(calls.take_held().empty());  // none taken: nothing to send again
  // The program's next run meets it, as sent.
  REQUIRE(kernel.resume(callee.pid(), false, 0).ok());
  auto st = kernel.wait_for(callee.pid());
  REQUIRE(st.ok());
  REQUIRE(WIFSTOPPED(*st));
  CHECK(WSTOPSIG(*st) == SIGUSR1);
  auto si = kernel.get_siginfo(callee.pid());
  REQUIRE(si.ok());
  CHECK(si->si_code == SI_QUEUE);
  CHECK(si->si_pid == ::getpid());
  CHECK(si->si_value.sival_int == 4711);
  // Not delivered here: SIGUSR1 would end the program. The sleep it interrupted goes on.
  callee.check_ends_with("ticks=2 calls=1 cut=0\n");
}

TEST_CASE("the server's calls at a fork's event stop let the fork end first: the program gets the child's pid",
          "[tracer][remote_syscalls]") {
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

  auto [at, calls] = on_callee(callee);
  const tracer::Addr hello = page_with(callee, calls, "hello");
  auto sum = calls.call(symbol("callee", "callee_add"), {40, 2, hello}, at);
  REQUIRE(sum.ok());
  CHECK(*sum == 47);
  REQUIRE(calls.run(SYS_munmap, {hello, 4096}).ok());
  REQUIRE(calls.end().ok());
  CHECK(registers_of(kernel, pid).gpr[arch::x86::kRax] == *child);  // fork's own result, kept
  // (A call that took the result's place: fork would say -ENOSYS, "fork=lost".)
  callee.check_ends_with("ticks=1 calls=0 cut=0 fork=child\n");  // (calls was printed before the fork)
}

TEST_CASE("no call of the server's runs on a thread waiting in sigsuspend: the program's mask would come back "
          "too early",
          "[tracer][remote_syscalls]") {
  REQUIRE_PTRACE();
  AttachedCallee callee(0, 0, "suspend");
  auto& kernel = callee.kernel();
  auto why = tracer::call_refused(kernel, callee.pid());
  REQUIRE(why.has_value());
  CHECK_THAT(*why, Catch::Contains("waits under its own signal mask"));
  auto at = tracer::find_syscall_instruction(kernel, callee.pid());
  REQUIRE(at.ok());
  auto calls = tracer::RemoteSyscalls::begin(kernel, callee.pid(), callee.pid(), *at);
  REQUIRE_FALSE(calls.ok());
  CHECK(calls.error().code == base::Errc::not_yet);
  // Untouched: its handler ends sigsuspend, which gives it back its own mask.
  REQUIRE(::kill(callee.pid(), SIGUSR1) == 0);
  callee.check_ends_with("sigsuspend=EINTR usr1=blocked handled=1\n");
}
