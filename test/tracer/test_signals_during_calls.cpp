// What comes for a thread while the server runs a system call of its own on it
// (remote_syscalls.hpp), on a scripted kernel: a signal stays pending with its siginfo, or, where
// it stopped the thread anyway, is sent again with that siginfo; an exit goes back to the one
// event pipeline (wait_any) before anything else.
#include <sys/ptrace.h>
#include <sys/syscall.h>

#include <catch2/catch.hpp>

#include <deque>
#include <functional>

#include "test/tracer/scripted_kernel.hpp"
#include "tracer/linux/remote_syscalls.hpp"
#include "tracer/linux/signals_held_back.hpp"

using namespace tracer;
using namespace tracer::testing;

namespace {

constexpr Pid kPid = 100;
constexpr Addr kBase = 0x1000;
constexpr Addr kSyscallAt = kBase;  // `syscall`
constexpr int kSyscallStop = SIGTRAP | 0x80;

// A process of one thread, traced and stopped by the server's SIGSTOP outside any system call,
// with a `syscall` instruction at kSyscallAt. Each resume that does not stop the thread at once
// plays the next of `moves`.
struct OneThread {
  ScriptedKernel kernel;
  std::deque<std::function<void(Tid)>> moves;
  OneThread() {
    kernel.add_process(kPid, {kPid}, kBase, Bytes{0x0f, 0x05, 0x90, 0x90});
    REQUIRE(kernel.attach(kPid).ok());
    REQUIRE(kernel.wait_for(kPid).ok());
    auto& regs = kernel.thread(kPid).regs;
    regs.rip = kBase + 2;
    regs.orig_rax = static_cast<unsigned long long>(-1);
    kernel.thread(kPid).siginfo.si_signo = SIGSTOP;
    kernel.calls.clear();
    kernel.when_resumed = [this](Tid tid) {
      if (!moves.empty()) {
        auto move = std::move(moves.front());
        moves.pop_front();
        move(tid);
      }
    };
  }
  // The server's system call stops at its entry, then at its exit with `result`.
  void syscall_entry() {
    moves.push_back([this](Tid tid) { kernel.event(tid, stopped_status(kSyscallStop), kSyscallAt + 2); });
  }
  void syscall_exit(std::int64_t result) {
    moves.push_back([this, result](Tid tid) {
      kernel.thread(tid).regs.rax = static_cast<unsigned long long>(result);
      kernel.event(tid, stopped_status(kSyscallStop), kSyscallAt + 2);
    });
  }
};

siginfo_t queued(int sig, int value) {
  siginfo_t si{};
  si.si_signo = sig;
  si.si_code = SI_QUEUE;
  si.si_pid = 4242;
  si.si_value.sival_int = value;
  return si;
}

siginfo_t killed_by(int sig, Pid sender) {
  siginfo_t si{};
  si.si_signo = sig;
  si.si_code = SI_USER;
  si.si_pid = sender;
  return si;
}

}  // namespace

TEST_CASE("a signal that comes during the server's system call stays pending, and reaches the program with its "
          "siginfo",
          "[remote_syscalls][scripted]") {
  OneThread p;
  // Stopped inside a nanosleep, as most threads of a program are.
  p.kernel.thread(kPid).regs.orig_rax = SYS_nanosleep;
  p.kernel.thread(kPid).regs.rax = static_cast<unsigned long long>(-516);  // -ERESTART_RESTARTBLOCK
  auto calls = RemoteSyscalls::begin(p.kernel, kPid, kPid, kSyscallAt);
  REQUIRE(calls.ok());
  // A sigqueue of another process's, while the call runs: the thread's mask holds it back.
  p.moves.push_back([&](Tid tid) {
    p.kernel.send(tid, queued(SIGUSR1, 7));
    p.kernel.event(tid, stopped_status(kSyscallStop), kSyscallAt + 2);
  });
  p.syscall_exit(0);
  auto result = calls->run(SYS_getpid, {});
  REQUIRE(result.ok());
  REQUIRE(calls->end().ok());
  CHECK(calls->take_held().empty());
  CHECK(p.kernel.thread(kPid).blocked == 0);  // the program's mask back
  CHECK(p.kernel.thread(kPid).siginfo.si_signo == SIGSTOP);  // its stop as it was
  CHECK(p.kernel.thread(kPid).regs.orig_rax == SYS_nanosleep);
  // The program's next run meets the signal as it was sent.
  REQUIRE(p.kernel.resume(kPid, false, 0).ok());
  auto st = p.kernel.wait_for(kPid);
  REQUIRE(st.ok());
  REQUIRE(WIFSTOPPED(*st));
  CHECK(WSTOPSIG(*st) == SIGUSR1);
  auto si = p.kernel.get_siginfo(kPid);
  REQUIRE(si.ok());
  CHECK(si->si_code == SI_QUEUE);
  CHECK(si->si_pid == 4242);
  CHECK(si->si_value.sival_int == 7);
}

TEST_CASE("a signal that stops the thread during the server's system call is sent again with its siginfo where the "
          "kernel lets the server",
          "[remote_syscalls][scripted]") {
  OneThread p;
  p.kernel.thread(kPid).mask_fixed = true;  // no mask can hold it back
  auto calls = RemoteSyscalls::begin(p.kernel, kPid, kPid, kSyscallAt);
  REQUIRE(calls.ok());
  p.moves.push_back([&](Tid tid) {
    p.kernel.send(tid, queued(SIGUSR1, 7));          // stops it at once
    p.kernel.send(tid, killed_by(SIGUSR2, 4343));    // waits for its next resume
  });
  p.syscall_entry();
  p.syscall_exit(kPid);
  auto result = calls->run(SYS_getpid, {});
  REQUIRE(result.ok());
  CHECK(*result == kPid);
  REQUIRE(calls->end().ok());
  const auto held = calls->take_held();
  REQUIRE(held.size() == 2);
  CHECK(held[0].sig == SIGUSR1);
  REQUIRE(held[0].siginfo.has_value());
  CHECK(held[0].siginfo->si_value.sival_int == 7);
  CHECK(held[1].sig == SIGUSR2);
  REQUIRE(held[1].siginfo.has_value());
  CHECK(held[1].siginfo->si_pid == 4343);

  p.kernel.calls.clear();
  send_again(p.kernel, kPid, held);
  // sigqueue's value goes with it; kill(2)'s sender the kernel lets no other process forge.
  CHECK(p.kernel.take_calls() == "queue 100 SIGUSR1 code -1 value 7; tgkill 100 SIGUSR2");
  REQUIRE(p.kernel.resume(kPid, false, 0).ok());
  auto st = p.kernel.wait_for(kPid);
  REQUIRE(st.ok());
  CHECK(WSTOPSIG(*st) == SIGUSR1);
  CHECK(p.kernel.get_siginfo(kPid)->si_value.sival_int == 7);
}

TEST_CASE("a thread's exit, or its process's, during the server's system call reaches the event pipeline first",
          "[remote_syscalls][scripted]") {
  SECTION("the thread exits (PTRACE_EVENT_EXIT)") {
    OneThread p;
    auto calls = RemoteSyscalls::begin(p.kernel, kPid, kPid, kSyscallAt);
    REQUIRE(calls.ok());
    const int exit_stop = stopped_status(SIGTRAP, PTRACE_EVENT_EXIT);
    p.moves.push_back([&](Tid tid) { p.kernel.event(tid, exit_stop, kSyscallAt); });
    auto result = calls->run(SYS_getpid, {});
    REQUIRE_FALSE(result.ok());
    CHECK(result.error().code == base::Errc::no_thread);
    CHECK(result.error().message() == "the thread exited during the server's system call");
    REQUIRE(calls->end().ok());
    auto next = p.kernel.wait_any(false);
    REQUIRE(next.has_value());
    CHECK(next->tid == kPid);
    CHECK(next->status == exit_stop);
  }
  SECTION("the process ends (killed by another thread's exit_group)") {
    OneThread p;
    auto calls = RemoteSyscalls::begin(p.kernel, kPid, kPid, kSyscallAt);
    REQUIRE(calls.ok());
    p.moves.push_back([&](Tid tid) { p.kernel.end(tid, exited_status(3)); });
    auto result = calls->run(SYS_getpid, {});
    REQUIRE_FALSE(result.ok());
    CHECK(result.error().code == base::Errc::no_process);
    auto next = p.kernel.wait_any(false);
    REQUIRE(next.has_value());
    CHECK(next->tid == kPid);
    CHECK(WIFEXITED(next->status));
    CHECK(WEXITSTATUS(next->status) == 3);
    CHECK_FALSE(p.kernel.wait_any(false).has_value());  // handed back once, not twice
  }
}
