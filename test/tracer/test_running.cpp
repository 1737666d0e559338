// LinuxTarget with running and multi-threaded processes: attach/detach, interrupt,
// all-stop with a pending event, the library list.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <thread>

#include "test/support/skip.hpp"
#include "test/tracer/live_support.hpp"

using namespace test_tracer;
using tracer::ResumeKind;
using tracer::StopReason;

namespace {

// A child of the test process, not traced, that runs sleeper.
pid_t spawn_sleeper() {
  pid_t child = ::fork();
  if (child == 0) {
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    const std::string path = prog("sleeper");
    ::execl(path.c_str(), path.c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  return child;
}

// Runs every thread to an int3 at addr, then takes it out (as GDB does before it steps on).
tracer::StopEvent continue_to(tracer::LinuxTarget& target, std::uint64_t addr) {
  REQUIRE(target.insert_breakpoint(tracer::BreakpointType::Software, addr, 1).ok());
  REQUIRE(target.resume(plan_all()).ok());
  auto ev = wait_stop(target);
  REQUIRE(ev);
  REQUIRE(ev->reason == StopReason::SoftwareBreakpoint);
  REQUIRE(target.remove_breakpoint(tracer::BreakpointType::Software, addr, 1).ok());
  return *ev;
}

void reap(pid_t child) {
  ::kill(child, SIGKILL);
  int st = 0;
  ::waitpid(child, &st, 0);
}

}  // namespace

TEST_CASE("attach, hit a breakpoint, detach: no int3 left, still running", "[tracer][attach]") {
  REQUIRE_PTRACE();
  const auto tick = symbol("sleeper", "tick");
  REQUIRE(tick != 0);
  pid_t child = spawn_sleeper();
  const int original = raw_byte(child, tick);
  {
    tracer::LinuxTarget target;
    REQUIRE(target.attach(child).ok());
    CHECK(target.attached());
    CHECK(target.pid() == child);
    CHECK(thread_state(child, child) == 't');
    REQUIRE(target.insert_breakpoint(tracer::BreakpointType::Software, tick, 1).ok());
    REQUIRE(target.resume(plan_all()).ok());
    auto ev = wait_stop(target);
    REQUIRE(ev);
    CHECK(ev->reason == StopReason::SoftwareBreakpoint);
    CHECK(raw_byte(child, tick) == 0xCC);
    REQUIRE(target.detach().ok());
    CHECK_FALSE(target.has_process());
  }
  CHECK(raw_byte(child, tick) == original);
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  const char state = thread_state(child, child);
  CHECK((state == 'S' || state == 'R'));
  int st = 0;
  CHECK(::waitpid(child, &st, WNOHANG) == 0);  // still alive
  reap(child);
}

TEST_CASE("attach errors name the process", "[tracer][attach]") {
  REQUIRE_PTRACE();
  tracer::LinuxTarget target;
  auto res = target.attach(999999999);
  REQUIRE_FALSE(res.ok());
  CHECK(res.error().message() == "Cannot attach to process 999999999: No such process (3)");
  CHECK(res.error().code == base::Errc::no_process);
  if (::getuid() != 0) {
    auto init = target.attach(1);
    REQUIRE_FALSE(init.ok());
    CHECK(init.error().message() == "Cannot attach to process 1: Operation not permitted (1)");
  }
  CHECK_FALSE(target.has_process());
}

TEST_CASE("the destructor detaches from an attached process", "[tracer][attach]") {
  REQUIRE_PTRACE();
  pid_t child = spawn_sleeper();
  {
    tracer::LinuxTarget target;
    REQUIRE(target.attach(child).ok());
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  const char state = thread_state(child, child);
  CHECK((state == 'S' || state == 'R'));
  reap(child);
}

TEST_CASE("interrupt stops a running loop with SIGINT, repeatedly", "[tracer][interrupt]") {
  REQUIRE_PTRACE();
  tracer::LinuxTarget target;
  auto pid = target.launch({prog("spin"), {}, true, true});
  REQUIRE(pid.ok());
  for (int round = 0; round < 3; ++round) {
    REQUIRE(target.resume(plan_all()).ok());
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    CHECK_FALSE(target.poll());
    REQUIRE(target.interrupt().ok());
    auto ev = wait_stop(target);
    REQUIRE(ev);
    CHECK(ev->reason == StopReason::Signal);
    CHECK(ev->signal == SIGINT);
    CHECK(ev->tid == *pid);
    CHECK(thread_state(*pid, *pid) == 't');
  }
  REQUIRE(target.kill().ok());
  CHECK_FALSE(process_exists(*pid));
}

TEST_CASE("interrupt: a signal GDB passes on silently does not swallow the ^C", "[tracer][interrupt]") {
  REQUIRE_PTRACE();
  tracer::LinuxTarget target;
  // signal_loop always has a SIGALRM on the way: its stop comes before the interrupt's.
  auto pid = target.launch({prog("signal_loop"), {"30"}, true, true});
  REQUIRE(pid.ok());
  REQUIRE(target.resume(plan_all()).ok());
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  REQUIRE(target.interrupt().ok());
  int passed = 0;
  std::optional<tracer::StopEvent> ev;
  for (; passed < 100; ++passed) {
    ev = wait_stop(target);
    REQUIRE(ev);
    if (ev->reason != StopReason::Signal || ev->signal != SIGALRM) {
      break;
    }
    // `handle SIGALRM nostop pass`: GDB resumes at once, passing it.
    REQUIRE(target.resume(plan_all(ResumeKind::Continue, SIGALRM)).ok());
  }
  INFO("SIGALRMs passed on before the interrupt's stop: " << passed);
  CHECK(ev->reason == StopReason::Signal);
  CHECK(ev->signal == SIGINT);
  CHECK(passed >= 1);  // the case under test: the SIGALRM was reported first
  REQUIRE(target.kill().ok());
}

TEST_CASE("a program killed (SIGKILL) while the step collector steps it ends killed, no SIGTRAP on the way",
          "[tracer][btrace]") {
  REQUIRE_PTRACE();
  // The kill takes a thread out of its step's stop: asking about that trap fails (ESRCH), and
  // the trap must not be reported as the program's SIGTRAP. Each round kills at another moment.
  for (int round = 0; round < 15; ++round) {
    tracer::LinuxTarget target;
    target.set_btrace_backend(tracer::Backend::Step);
    auto pid = target.launch({prog("spin"), {}, false, true});
    REQUIRE(pid.ok());
    REQUIRE(target.enable_btrace(*pid, {}).ok());
    REQUIRE(target.resume(plan_all()).ok());
    std::this_thread::sleep_for(std::chrono::milliseconds(5 + round * 3));
    REQUIRE(::kill(*pid, SIGKILL) == 0);
    auto ev = wait_stop(target);
    REQUIRE(ev);
    INFO("round " << round << ": reason " << static_cast<int>(ev->reason) << " signal " << ev->signal);
    CHECK(ev->reason == StopReason::Killed);
    CHECK(ev->signal == SIGKILL);
  }
}

TEST_CASE("a real SIGINT is reported as such and can be passed on", "[tracer][interrupt]") {
  REQUIRE_PTRACE();
  tracer::LinuxTarget target;
  auto pid = target.launch({prog("spin"), {}, false, true});
  REQUIRE(pid.ok());
  REQUIRE(target.resume(plan_all()).ok());
  ::kill(*pid, SIGINT);
  auto ev = wait_stop(target);
  REQUIRE(ev);
  CHECK(ev->reason == StopReason::Signal);
  CHECK(ev->signal == SIGINT);
  REQUIRE(target.resume(plan_all(ResumeKind::Continue, SIGINT)).ok());
  ev = wait_stop(target);
  REQUIRE(ev);
  CHECK(ev->reason == StopReason::Killed);
  CHECK(ev->signal == SIGINT);
}

TEST_CASE("all-stop: every thread stops; the other thread's hit stays pending", "[tracer][threads]") {
  REQUIRE_PTRACE();
  const auto hit = symbol("threads", "hit");
  const auto ready = symbol("threads", "ready");
  REQUIRE(hit != 0);
  tracer::LinuxTarget target;
  auto pid = target.launch({prog("threads"), {}, true, true});
  REQUIRE(pid.ok());
  // Stop in main once both workers exist.
  const tracer::StopEvent at_ready = continue_to(target, ready);
  CHECK(at_ready.tid == *pid);
  CHECK(target.threads().size() == 3);
  // Step main alone (off where the int3 at ready was): the workers stay stopped.
  tracer::ThreadAction step_main;
  step_main.tid = *pid;
  step_main.kind = ResumeKind::Step;
  REQUIRE(target.resume(tracer::ResumePlan{{step_main}}).ok());
  auto stepped = wait_stop(target);
  REQUIRE(stepped);
  CHECK(stepped->reason == StopReason::SingleStep);
  CHECK(stepped->tid == *pid);
  for (const auto& th : target.threads()) {
    CHECK(thread_state(*pid, th.tid) == 't');
  }
  REQUIRE(target.insert_breakpoint(tracer::BreakpointType::Software, hit, 1).ok());
  REQUIRE(target.resume(plan_all()).ok());
  // Let both workers reach the int3 before the first poll, so one hit must wait.
  pollfd pfd{target.event_fd(), POLLIN, 0};
  ::poll(&pfd, 1, 5000);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  auto first = wait_stop(target);
  REQUIRE(first);
  CHECK(first->reason == StopReason::SoftwareBreakpoint);
  CHECK(first->tid != *pid);
  auto threads = target.threads();
  CHECK(threads.size() == 3);
  CHECK(threads.front().tid == *pid);
  for (const auto& th : threads) {
    CHECK(thread_state(*pid, th.tid) == 't');
  }
  CHECK(tracer::read_pc(first->tid).value_or(0) == hit);

  // The other worker's hit is still pending: reported on the next resume without running
  // anything, while its breakpoint is there. Had GDB removed it meanwhile, the stale hit would
  // be dropped (as gdbserver does; GDB would call it a spurious SIGTRAP) and the thread run on.
  REQUIRE(target.resume(plan_all()).ok());
  auto second = wait_stop(target);
  REQUIRE(second);
  CHECK(second->reason == StopReason::SoftwareBreakpoint);
  CHECK(second->tid != first->tid);
  CHECK(second->tid != *pid);
  CHECK(tracer::read_pc(second->tid).value_or(0) == hit);
  CHECK(tracer::read_pc(first->tid).value_or(0) == hit);  // did not run

  // GDB's way on: the breakpoint out, then both workers finish.
  REQUIRE(target.remove_breakpoint(tracer::BreakpointType::Software, hit, 1).ok());
  REQUIRE(target.resume(plan_all()).ok());
  auto last = wait_stop(target);
  REQUIRE(last);
  CHECK(last->reason == StopReason::Exited);
  CHECK(last->status == 0);
  CHECK_FALSE(process_exists(*pid));
}

TEST_CASE("libraries: empty before the loader ran, libc once main is reached", "[tracer][libs]") {
  REQUIRE_PTRACE();
  const auto main_addr = symbol("simple", "main");
  tracer::LinuxTarget target;
  auto pid = target.launch({prog("simple"), {}, true, true});
  REQUIRE(pid.ok());
  auto early = target.libraries();
  REQUIRE(early.ok());
  CHECK(early->main_lm == 0);
  CHECK(early->libraries.empty());
  REQUIRE(target.insert_breakpoint(tracer::BreakpointType::Software, main_addr, 1).ok());
  REQUIRE(target.resume(plan_all()).ok());
  auto ev = wait_stop(target);
  REQUIRE(ev);
  REQUIRE(ev->reason == StopReason::SoftwareBreakpoint);
  auto libs = target.libraries();
  REQUIRE(libs.ok());
  CHECK(libs->main_lm != 0);
  bool libc = false;
  bool vdso = false;
  for (const auto& lib : libs->libraries) {
    CHECK(lib.lm != 0);
    CHECK(lib.lmid != 0);
    if (lib.name.find("libc.so.6") != std::string::npos) {
      libc = true;
      CHECK(lib.l_addr != 0);
      CHECK(lib.l_ld != 0);
    }
    vdso = vdso || lib.name == "linux-vdso.so.1";
  }
  CHECK(libc);
  CHECK(vdso);
}

TEST_CASE("a leader that called pthread_exit does not hang all-stop", "[tracer][threads]") {
  REQUIRE_PTRACE();
  const auto tick = symbol("leader_exit", "tick");
  REQUIRE(tick != 0);
  tracer::LinuxTarget target;
  auto pid = target.launch({prog("leader_exit"), {}, true, true});
  REQUIRE(pid.ok());
  REQUIRE(target.resume(plan_all()).ok());
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  CHECK_FALSE(target.poll());
  REQUIRE(target.insert_breakpoint(tracer::BreakpointType::Software, tick, 1).ok());
  auto ev = wait_stop(target);
  REQUIRE(ev);
  CHECK(ev->reason == StopReason::SoftwareBreakpoint);
  CHECK(ev->tid != *pid);
  REQUIRE(target.remove_breakpoint(tracer::BreakpointType::Software, tick, 1).ok());
  REQUIRE(target.resume(plan_all()).ok());
  ev = wait_stop(target);
  REQUIRE(ev);
  CHECK(ev->reason == StopReason::Exited);
  CHECK(ev->status == 5);
  CHECK_FALSE(process_exists(*pid));
}

TEST_CASE("thread options: a clone is reported and its thread waits, stopped, until resumed; an exit "
          "is reported for the thread that asks it", "[tracer][threads]") {
  REQUIRE_PTRACE();
  tracer::LinuxTarget target;
  auto pid = target.launch({prog("threads"), {}, true, true});
  REQUIRE(pid.ok());
  const tracer::ThreadOptions clone_and_exit{.clone_events = true, .exit_events = true};
  REQUIRE(target.set_thread_options({{.tid = *pid, .options = clone_and_exit}}).ok());
  REQUIRE(target.resume(plan_all()).ok());
  auto first = wait_stop(target);
  REQUIRE(first);
  REQUIRE(first->reason == StopReason::Clone);
  CHECK(first->tid == *pid);
  CHECK(first->signal == SIGTRAP);
  const tracer::Tid a = first->child_tid;
  REQUIRE(a > 0);
  REQUIRE(a != *pid);
  CHECK(target.threads().size() == 2);
  CHECK(thread_state(*pid, a) == 't');
  const auto a_pc = tracer::read_pc(a);
  REQUIRE(a_pc.ok());

  // GDB steps the parent alone: the new thread stays where it was born.
  tracer::ThreadAction step_main{.tid = *pid, .kind = ResumeKind::Step};
  REQUIRE(target.resume(tracer::ResumePlan{{step_main}}).ok());
  auto stepped = wait_stop(target);
  REQUIRE(stepped);
  CHECK(stepped->reason == StopReason::SingleStep);
  CHECK(stepped->tid == *pid);
  CHECK(thread_state(*pid, a) == 't');
  CHECK(tracer::read_pc(a).value_or(0) == *a_pc);

  // A wildcard resumes it; the second clone is reported likewise.
  REQUIRE(target.resume(plan_all()).ok());
  auto second = wait_stop(target);
  REQUIRE(second);
  REQUIRE(second->reason == StopReason::Clone);
  const tracer::Tid b = second->child_tid;
  CHECK(b != a);

  // From now on: no more clone events; a's exit is reported, b's is not (thread events off).
  REQUIRE(target.set_thread_options({{.options = {}}, {.tid = a, .options = {.exit_events = true}}}).ok());
  REQUIRE(target.resume(plan_all()).ok());
  auto gone = wait_stop(target);
  REQUIRE(gone);
  CHECK(gone->reason == StopReason::ThreadExited);
  CHECK(gone->tid == a);
  REQUIRE(target.resume(plan_all()).ok());
  auto last = wait_stop(target);
  REQUIRE(last);
  CHECK(last->reason == StopReason::Exited);
  CHECK(last->status == 0);
}

TEST_CASE("an int3 taken out after threads ran it, before their traps were seen: they run on, nobody told; "
          "the program's own int3 and int $3 are its SIGTRAPs", "[tracer][threads]") {
  REQUIRE_PTRACE();
  const auto hit = symbol("threads", "hit");
  REQUIRE(hit != 0);
  {
    const auto ready = symbol("threads", "ready");
    tracer::LinuxTarget target;
    auto pid = target.launch({prog("threads"), {}, true, true});
    REQUIRE(pid.ok());
    // Once both workers exist (main at ready), nothing but the int3 stops them.
    continue_to(target, ready);
    REQUIRE(target.insert_breakpoint(tracer::BreakpointType::Software, hit, 1).ok());
    REQUIRE(target.resume(plan_all()).ok());
    // Both workers run the int3 before anyone looks; then it is taken out (as GDB removes a
    // breakpoint while other threads run, in non-stop).
    pollfd pfd{target.event_fd(), POLLIN, 0};
    ::poll(&pfd, 1, 5000);
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    REQUIRE(target.remove_breakpoint(tracer::BreakpointType::Software, hit, 1).ok());
    auto ev = wait_stop(target);
    REQUIRE(ev);
    CHECK(ev->reason == StopReason::Exited);
    CHECK(ev->status == 0);  // both called hit() to the end
  }
  const auto after_int3 = symbol("traps", "after_int3");
  const auto after_int_3 = symbol("traps", "after_int_3");
  REQUIRE(after_int3 != 0);
  tracer::LinuxTarget target;
  auto pid = target.launch({prog("traps"), {}, true, true});
  REQUIRE(pid.ok());
  REQUIRE(target.resume(plan_all()).ok());
  for (const auto after : {after_int3, after_int_3}) {
    auto ev = wait_stop(target);
    REQUIRE(ev);
    CHECK(ev->reason == StopReason::Signal);
    CHECK(ev->signal == SIGTRAP);
    CHECK(tracer::read_pc(*pid).value_or(0) == after);
    REQUIRE(target.resume(plan_all(ResumeKind::Continue, SIGTRAP)).ok());  // to its handler
  }
  auto last = wait_stop(target);
  REQUIRE(last);
  CHECK(last->reason == StopReason::Exited);
  CHECK(last->status == 0);
}

TEST_CASE("thread options: a leader's pthread_exit is its exit for GDB that asked it; its process lives on",
          "[tracer][threads]") {
  REQUIRE_PTRACE();
  tracer::LinuxTarget target;
  auto pid = target.launch({prog("leader_exit"), {}, true, true});
  REQUIRE(pid.ok());
  REQUIRE(target.set_thread_options({{.tid = *pid, .options = {.exit_events = true}}}).ok());
  REQUIRE(target.resume(plan_all()).ok());
  auto ev = wait_stop(target);
  REQUIRE(ev);
  CHECK(ev->reason == StopReason::ThreadExited);
  CHECK(ev->tid == *pid);
  CHECK(ev->status == 0);
  CHECK(target.threads().size() == 1);  // the worker
  REQUIRE(target.resume(plan_all()).ok());
  ev = wait_stop(target);
  REQUIRE(ev);
  CHECK(ev->reason == StopReason::Exited);
  CHECK(ev->status == 5);
}
