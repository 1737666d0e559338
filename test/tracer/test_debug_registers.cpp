// Hardware watchpoints through LinuxTarget on a live process: the stop names the slot's
// address, and detach leaves no debug register armed (a process left with one would die of
// SIGTRAP at its next access, as it is no longer traced).
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <thread>

#include "test/support/skip.hpp"
#include "test/tracer/live_support.hpp"
#include "test/support/debug_registers_probe.hpp"

using namespace test_tracer;
using tracer::BreakpointType;
using tracer::StopReason;

TEST_CASE("access watchpoint hits, detach with it still inserted clears DR7", "[tracer][watch]") {
  REQUIRE_DEBUG_REGISTERS();
  REQUIRE_PTRACE();
  const auto ticks = symbol("sleeper", "ticks");
  REQUIRE(ticks != 0);
  pid_t child = ::fork();
  if (child == 0) {
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    const std::string path = prog("sleeper");
    ::execl(path.c_str(), path.c_str(), "20", static_cast<char*>(nullptr));
    ::_exit(127);
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  {
    tracer::LinuxTarget target;
    REQUIRE(target.attach(child).ok());
    // Bad ranges and a fifth slot are refused; four fit.
    CHECK(target.insert_breakpoint(BreakpointType::Hardware, ticks, 4).error().code == base::Errc::invalid);
    REQUIRE(target.insert_breakpoint(BreakpointType::AccessWatch, ticks, 8).ok());
    REQUIRE(target.insert_breakpoint(BreakpointType::WriteWatch, ticks + 0x100, 8).ok());
    REQUIRE(target.insert_breakpoint(BreakpointType::WriteWatch, ticks + 0x108, 8).ok());
    REQUIRE(target.insert_breakpoint(BreakpointType::WriteWatch, ticks + 0x110, 8).ok());
    auto full = target.insert_breakpoint(BreakpointType::ReadWatch, ticks + 0x118, 8);
    REQUIRE_FALSE(full.ok());
    CHECK(full.error().code == base::Errc::exhausted);
    REQUIRE(target.remove_breakpoint(BreakpointType::WriteWatch, ticks + 0x108, 8).ok());
    REQUIRE(target.insert_breakpoint(BreakpointType::ReadWatch, ticks + 0x118, 8).ok());

    REQUIRE(target.resume(plan_all()).ok());
    auto ev = wait_stop(target);
    REQUIRE(ev);
    CHECK(ev->reason == StopReason::Watchpoint);
    CHECK(ev->watch_kind == tracer::WatchKind::Access);
    CHECK(ev->watch_addr == ticks);
    REQUIRE(target.detach().ok());
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(100));  // ticks every 10 ms
  int st = 0;
  CHECK(::waitpid(child, &st, WNOHANG) == 0);  // still alive: no SIGTRAP
  const char state = thread_state(child, child);
  CHECK((state == 'S' || state == 'R'));
  ::kill(child, SIGKILL);
  ::waitpid(child, &st, 0);
}
