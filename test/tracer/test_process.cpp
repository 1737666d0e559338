// LinuxTarget on real processes: launch, exit, breakpoints, stepping, memory, signals, kill.
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>

#include "base/log.hpp"
#include "test/support/skip.hpp"
#include "test/tracer/live_support.hpp"

using namespace test_tracer;
using tracer::ResumeKind;
using tracer::StopReason;

TEST_CASE("launch runs to exit and reports the status", "[tracer][process]") {
  REQUIRE_PTRACE();
  for (bool shell : {true, false}) {
    tracer::LinuxTarget target;
    auto pid = target.launch({prog("simple"), {"3"}, shell, true});
    REQUIRE(pid.ok());
    CHECK(target.has_process());
    CHECK_FALSE(target.attached());
    CHECK(target.exec_file(0).value_or("") == prog("simple"));
    REQUIRE(target.resume(plan_all()).ok());
    CHECK(target.running());
    auto ev = wait_stop(target);
    REQUIRE(ev);
    CHECK(ev->reason == StopReason::Exited);
    CHECK(ev->status == 3);
    CHECK(ev->pid == *pid);
    CHECK_FALSE(target.has_process());
    CHECK_FALSE(target.running());
    CHECK_FALSE(process_exists(*pid));
  }
}

TEST_CASE("arguments reach the program intact through the shell", "[tracer][process]") {
  REQUIRE_PTRACE();
  for (bool shell : {true, false}) {
    tracer::LinuxTarget target;
    REQUIRE(target.launch({prog("simple"), {"0", "a b'c $HOME"}, shell, true}).ok());
    REQUIRE(target.resume(plan_all()).ok());
    auto ev = wait_stop(target);
    REQUIRE(ev);
    CHECK(ev->status == 42);
  }
}

TEST_CASE("a program that cannot run gives a clear error", "[tracer][process]") {
  REQUIRE_PTRACE();
  char path[] = "/tmp/hs-noexec-XXXXXX";
  int fd = ::mkstemp(path);
  REQUIRE(fd >= 0);
  ::close(fd);
  ::chmod(path, 0644);
  const std::string noexec = path;
  // Through the shell (gdbserver's way) the shell says what it missed and the program "exits
  // during startup" with the shell's status; started directly, exec's errno says why.
  for (bool shell : {true, false}) {
    tracer::LinuxTarget target;
    auto expect = [&](const std::string& prog, const std::string& reason, int shell_status) {
      auto res = target.launch({prog, {}, shell, true});
      REQUIRE_FALSE(res.ok());
      if (shell) {
        CHECK(res.error().message() ==
              "During startup program exited with code " + std::to_string(shell_status) + ".");
      } else {
        CHECK(res.error().message() == "Cannot exec " + prog + ": " + reason + ".");
      }
    };
    expect("/nonexistent/dir/prog", "No such file or directory", 127);
    expect(noexec, "Permission denied", 126);
    expect("no-such-program-anywhere", "No such file or directory", 127);
    CHECK_FALSE(target.has_process());
  }
  // A working directory that does not exist: the child cannot get there.
  tracer::LinuxTarget target;
  tracer::LaunchSpec spec{"/bin/true", {}, false, true};
  spec.working_dir = "/nonexistent-hindsight-dir";
  auto res = target.launch(spec);
  REQUIRE_FALSE(res.ok());
  CHECK(res.error().message().starts_with("Couldn't chdir to /nonexistent-hindsight-dir: No such file or directory."));
  CHECK_FALSE(target.has_process());
  ::unlink(path);
}

TEST_CASE("software breakpoint: hit, rewind, hidden, step off, continue", "[tracer][process]") {
  REQUIRE_PTRACE();
  const auto fn = symbol("simple", "target_fn");
  REQUIRE(fn != 0);
  tracer::LinuxTarget target;
  auto pid = target.launch({prog("simple"), {}, true, true});
  REQUIRE(pid.ok());
  auto before = target.read_memory(fn, 16);
  REQUIRE(before.ok());
  REQUIRE(before->size() == 16);
  REQUIRE(target.insert_breakpoint(tracer::BreakpointType::Software, fn, 1).ok());
  REQUIRE(target.insert_breakpoint(tracer::BreakpointType::Software, fn, 1).ok());  // twice: harmless
  CHECK(raw_byte(*pid, fn) == 0xCC);
  CHECK(*target.read_memory(fn, 16) == *before);
  CHECK((*target.read_memory(fn - 3, 8))[3] == (*before)[0]);

  REQUIRE(target.resume(plan_all()).ok());
  auto ev = wait_stop(target);
  REQUIRE(ev);
  CHECK(ev->reason == StopReason::SoftwareBreakpoint);
  CHECK(ev->tid == *pid);
  CHECK(ev->signal == SIGTRAP);
  CHECK(tracer::read_pc(ev->tid).value_or(0) == fn);

  // Resumed on top of a breakpoint GDB left inserted, the thread hits it (GDB steps over its
  // breakpoints itself; one left in is meant to be hit, as `jump *$pc` wants, like gdbserver).
  REQUIRE(target.resume(plan_all(ResumeKind::Step)).ok());
  ev = wait_stop(target);
  REQUIRE(ev);
  CHECK(ev->reason == StopReason::SoftwareBreakpoint);
  CHECK(tracer::read_pc(*pid).value_or(0) == fn);

  // GDB's step-over: out, one step, back in. The original instruction runs, the int3 stays.
  REQUIRE(target.remove_breakpoint(tracer::BreakpointType::Software, fn, 1).ok());
  REQUIRE(target.resume(plan_all(ResumeKind::Step)).ok());
  ev = wait_stop(target);
  REQUIRE(ev);
  CHECK(ev->reason == StopReason::SingleStep);
  auto pc = tracer::read_pc(*pid);
  CHECK(*pc > fn);
  CHECK(*pc < fn + 16);
  REQUIRE(target.insert_breakpoint(tracer::BreakpointType::Software, fn, 1).ok());
  CHECK(raw_byte(*pid, fn) == 0xCC);

  // Second call: hit again.
  REQUIRE(target.resume(plan_all()).ok());
  ev = wait_stop(target);
  REQUIRE(ev);
  CHECK(ev->reason == StopReason::SoftwareBreakpoint);
  CHECK(tracer::read_pc(*pid).value_or(0) == fn);

  REQUIRE(target.remove_breakpoint(tracer::BreakpointType::Software, fn, 1).ok());
  CHECK(raw_byte(*pid, fn) == (*before)[0]);
  REQUIRE(target.resume(plan_all()).ok());
  ev = wait_stop(target);
  REQUIRE(ev);
  CHECK(ev->reason == StopReason::Exited);
  CHECK(ev->status == 7);
}

TEST_CASE("range stepping stops once pc leaves the range", "[tracer][process]") {
  REQUIRE_PTRACE();
  const auto fn = symbol("simple", "target_fn");
  tracer::LinuxTarget target;
  auto pid = target.launch({prog("simple"), {}, false, true});
  REQUIRE(pid.ok());
  REQUIRE(target.insert_breakpoint(tracer::BreakpointType::Software, fn, 1).ok());
  REQUIRE(target.resume(plan_all()).ok());
  auto ev = wait_stop(target);
  REQUIRE(ev);
  REQUIRE(ev->reason == StopReason::SoftwareBreakpoint);
  REQUIRE(target.remove_breakpoint(tracer::BreakpointType::Software, fn, 1).ok());  // as GDB does
  tracer::ThreadAction a;
  a.tid = *pid;
  a.kind = ResumeKind::RangeStep;
  a.range_start = fn;
  a.range_end = fn + 8;
  REQUIRE(target.resume(tracer::ResumePlan{{a}}).ok());
  ev = wait_stop(target);
  REQUIRE(ev);
  CHECK(ev->reason == StopReason::SingleStep);
  auto pc = tracer::read_pc(*pid);
  CHECK((*pc < fn || *pc >= fn + 8));
  REQUIRE(target.kill().ok());
  CHECK_FALSE(process_exists(*pid));
}

TEST_CASE("memory writes keep our int3 and update the saved byte", "[tracer][process]") {
  REQUIRE_PTRACE();
  const auto fn = symbol("simple", "target_fn");
  const auto counter = symbol("simple", "counter");
  tracer::LinuxTarget target;
  auto pid = target.launch({prog("simple"), {}, true, true});
  REQUIRE(pid.ok());
  REQUIRE(target.write_memory(counter, {1, 2, 3, 4}).ok());
  CHECK(*target.read_memory(counter, 4) == tracer::Bytes{1, 2, 3, 4});

  auto orig = *target.read_memory(fn, 2);
  REQUIRE(target.insert_breakpoint(tracer::BreakpointType::Software, fn, 1).ok());
  REQUIRE(target.write_memory(fn, {0x90, orig[1]}).ok());
  CHECK(raw_byte(*pid, fn) == 0xCC);
  CHECK(*target.read_memory(fn, 2) == tracer::Bytes{0x90, orig[1]});
  REQUIRE(target.remove_breakpoint(tracer::BreakpointType::Software, fn, 1).ok());
  CHECK(raw_byte(*pid, fn) == 0x90);
  REQUIRE(target.write_memory(fn, orig).ok());

  // Reads: an unreadable start is an error; a read running into unmapped memory is short.
  auto bad = target.read_memory(0, 16);
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.error().code == base::Errc::system);
  const auto page_end = (counter | 0xfff) + 1;
  auto big = target.read_memory(counter, 1 << 20);
  REQUIRE(big.ok());
  CHECK(big->size() >= page_end - counter);
  CHECK(big->size() < (1u << 20));
  REQUIRE(target.kill().ok());
  CHECK_FALSE(process_exists(*pid));
}

TEST_CASE("SIGSEGV is reported with its siginfo and kills when passed on", "[tracer][process]") {
  REQUIRE_PTRACE();
  base::set_log_enabled(base::LogCat::ptrace, true);  // the log lines must not disturb anything
  tracer::LinuxTarget target;
  auto pid = target.launch({prog("segv"), {}, true, true});
  REQUIRE(pid.ok());
  REQUIRE(target.resume(plan_all()).ok());
  auto ev = wait_stop(target);
  REQUIRE(ev);
  CHECK(ev->reason == StopReason::Signal);
  CHECK(ev->signal == SIGSEGV);
  auto si = target.siginfo(ev->tid);
  REQUIRE(si.ok());
  REQUIRE(si->size() == 128);
  siginfo_t info;
  std::memcpy(&info, si->data(), sizeof info);
  CHECK(info.si_signo == SIGSEGV);
  CHECK(reinterpret_cast<std::uintptr_t>(info.si_addr) == 0x10);
  REQUIRE(target.write_siginfo(ev->tid, *si).ok());
  REQUIRE(target.resume(plan_all(ResumeKind::Continue, SIGSEGV)).ok());
  ev = wait_stop(target);
  REQUIRE(ev);
  CHECK(ev->reason == StopReason::Killed);
  CHECK(ev->signal == SIGSEGV);
  CHECK_FALSE(process_exists(*pid));
  base::set_log_enabled(base::LogCat::ptrace, false);
}

TEST_CASE("kill leaves no zombie; calls without a process fail cleanly", "[tracer][process]") {
  REQUIRE_PTRACE();
  tracer::LinuxTarget target;
  auto pid = target.launch({prog("spin"), {}, true, true});
  REQUIRE(pid.ok());
  REQUIRE(target.resume(plan_all()).ok());
  REQUIRE(target.kill().ok());
  CHECK_FALSE(process_exists(*pid));
  CHECK_FALSE(target.has_process());
  CHECK(target.read_memory(0x400000, 4).error().code == base::Errc::no_process);
  CHECK(target.resume(plan_all()).error().code == base::Errc::no_process);
  CHECK(target.read_registers(*pid).error().code == base::Errc::no_process);
  CHECK(target.kill().error().code == base::Errc::no_process);
  CHECK_FALSE(target.poll());
}

TEST_CASE("unknown threads give no_thread", "[tracer][process]") {
  REQUIRE_PTRACE();
  tracer::LinuxTarget target;
  auto pid = target.launch({prog("simple"), {}, true, true});
  REQUIRE(pid.ok());
  CHECK(target.read_registers(*pid + 100000).error().code == base::Errc::no_thread);
  CHECK(target.siginfo(-5).error().code == base::Errc::no_thread);
  CHECK_FALSE(target.thread_alive(*pid + 100000));
  CHECK(target.thread_alive(*pid));
  auto threads = target.threads();
  REQUIRE(threads.size() == 1);
  CHECK(threads[0].tid == *pid);
  CHECK(threads[0].name == "tracer_simple");
  CHECK(threads[0].core >= 0);
  CHECK(target.target_description("target.xml").ok());
  auto aux = target.auxv();
  REQUIRE(aux.ok());
  CHECK(aux->size() % 16 == 0);
  // The destructor kills what it launched.
}
