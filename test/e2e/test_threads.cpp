// Threads in all-stop: listing, backtraces, pending events, threads coming and going,
// scheduler-locking, a thread storm, and attaching to a busy multi-threaded process.
// The programs are the modes of test/progs/mt.c.
#include <catch2/catch.hpp>

#include <dirent.h>

#include <fstream>
#include <regex>
#include <thread>

#include "test/e2e/gdb_session.hpp"
#include "test/e2e/matchers.hpp"
#include "test/support/debug_registers_probe.hpp"
#include "test/support/skip.hpp"

using Catch::Matchers::Contains;
using e2e::ContainsRegex;

namespace {

int count_matches(const std::string& text, const std::string& re) {
  std::regex r(re);
  return static_cast<int>(std::distance(std::sregex_iterator(text.begin(), text.end(), r),
                                        std::sregex_iterator()));
}

// State letter of every thread of pid, from /proc/PID/task/*/stat.
std::vector<char> task_states(pid_t pid) {
  std::vector<char> out;
  const std::string dir = "/proc/" + std::to_string(pid) + "/task";
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) {
    return out;
  }
  while (dirent* e = ::readdir(d)) {
    if (e->d_name[0] == '.') {
      continue;
    }
    std::ifstream f(dir + "/" + e->d_name + "/stat");
    std::string line;
    std::getline(f, line);
    auto close = line.rfind(')');
    if (close != std::string::npos && close + 2 < line.size()) {
      out.push_back(line[close + 2]);
    }
  }
  ::closedir(d);
  return out;
}

}  // namespace

TEST_CASE("8 threads at a breakpoint: info threads lists 9, thread apply all bt", "[e2e][threads]") {
  auto out = e2e::run_gdb({.program = "mt", .commands = {"break all_started", "continue", "info threads",
                                                         "thread apply all bt", "continue"},
                           .args = {"bp8"}});
  INFO(out.transcript());
  CHECK_THAT(out.gdb, ContainsRegex(R"(Thread 1 "mt" hit Breakpoint 1, all_started \(\))"));
  CHECK(count_matches(out.gdb, R"(\n[ *] +\d+ +Thread \d+\.\d+ "mt")") == 9);
  CHECK(count_matches(out.gdb, R"(in bp8_worker \(arg=0x[0-7]\))") == 8);
  CHECK_THAT(out.gdb, ContainsRegex(R"(#0  all_started \(\) at)"));
  CHECK_THAT(out.gdb, Contains("exited normally"));
}

TEST_CASE("two threads hit a breakpoint at once: both reported, one per continue", "[e2e][threads]") {
  auto out = e2e::run_gdb({.program = "mt", .commands = {"break hit", "continue", "continue", "continue"},
                           .args = {"pair"}});
  INFO(out.transcript());
  CHECK(count_matches(out.gdb, R"(hit Breakpoint 1, hit \(id=[12]\))") == 2);
  CHECK_THAT(out.gdb, ContainsRegex(R"(hit Breakpoint 1, hit \(id=1\))"));
  CHECK_THAT(out.gdb, ContainsRegex(R"(hit Breakpoint 1, hit \(id=2\))"));
  CHECK_THAT(out.gdb, Contains("exited normally"));
  CHECK_THAT(out.server_out, Contains("pair done"));
}

TEST_CASE("a thread exits and another is created between two stops", "[e2e][threads]") {
  auto out = e2e::run_gdb({.program = "mt", .commands = {"break checkpoint", "continue", "info threads",
                                                         "continue", "info threads", "continue"},
                           .args = {"life"}});
  INFO(out.transcript());
  const auto second = out.gdb.find("checkpoint (n=2)");
  REQUIRE(second != std::string::npos);
  const std::string first_stop = out.gdb.substr(0, second);
  const std::string second_stop = out.gdb.substr(second);
  CHECK_THAT(first_stop, Contains("\"life-A\""));
  CHECK_THAT(second_stop, Contains("\"life-B\""));
  CHECK_THAT(second_stop, !Contains("\"life-A\""));
  CHECK(count_matches(second_stop, R"(\n[ *] +\d+ +Thread )") == 2);
  CHECK_THAT(out.gdb, Contains("exited normally"));
}

TEST_CASE("scheduler-locking: next runs one thread alone; without it the others run", "[e2e][threads]") {
  auto out = e2e::run_gdb({.program = "mt",
                           .commands = {"break lock_step", "continue", "set scheduler-locking on",
                                        "print spins", "next", "next", "print spins",
                                        "print after - before", "set scheduler-locking off", "finish",
                                        "next", "next", "print spins", "continue"},
                           .args = {"steplock"}});
  INFO(out.transcript());
  std::smatch m;
  // $4 is the value `finish` prints.
  std::regex r(R"(\$1 = (\d+)\n[\s\S]*\$2 = (\d+)\n\$3 = (\d+)\n[\s\S]*\$5 = (\d+)\n)");
  REQUIRE(std::regex_search(out.gdb, m, r));
  CHECK(m[1] == m[2]);       // locked: the spinners did not move
  CHECK(m[3].str() == "0");
  // Unlocked: the `next` over wait_for_spins() returns only if the spinners ran meanwhile.
  CHECK(std::stol(m[4]) >= std::stol(m[2]) + 1000);
  CHECK_THAT(out.gdb, Contains("exited normally"));
}

TEST_CASE("thread storm: 200 threads come and go, the breakpoint hits all 20 times", "[e2e][threads]") {
  auto out = e2e::run_gdb({.program = "mt",
                           .commands = {"break tick", "ignore 1 19", "continue", "print n",
                                        "info breakpoints", "continue"},
                           .args = {"storm"}});
  INFO(out.transcript());
  CHECK_THAT(out.gdb, ContainsRegex(R"(\$1 = 19\n)"));
  CHECK_THAT(out.gdb, Contains("breakpoint already hit 20 times"));
  CHECK_THAT(out.gdb, Contains("exited normally"));
  CHECK_THAT(out.server_out, Contains("storm done"));
  CHECK(out.stray_processes == 0);
}

TEST_CASE("attach to a running 50-thread process and detach: every thread runs on", "[e2e][threads][attach]") {
  e2e::Child many({.argv = {e2e::prog_path("mt"), "many", "50"}});
  REQUIRE(many.wait_for_text("pid=", e2e::Clock::now() + std::chrono::seconds(5), true));
  const pid_t pid = many.pid();
  // A watchpoint where debug registers fire (detach must clear DR7 on every thread), an int3
  // where they do not (detach must take it out).
  const bool hardware = test_support::debug_register_problem().empty();
  auto out = e2e::run_gdb({.commands = {"info threads", hardware ? "awatch counters[0]" : "break nanosleep", "continue",
                                        "detach"},
                           .transport = e2e::Transport::attach,
                           .attach_pid = pid});
  INFO(out.transcript());
  CHECK(count_matches(out.gdb, R"(\n[ *] +\d+ +Thread \d+\.\d+ )") == 51);
  if (hardware) {
    CHECK_THAT(out.gdb, Contains("Hardware access (read/write) watchpoint 1: counters[0]"));
  } else {
    CHECK_THAT(out.gdb, ContainsRegex(R"(hit Breakpoint 1, .*nanosleep)"));
  }
  CHECK_THAT(out.gdb, Contains("[Inferior 1 (process " + std::to_string(pid) + ") detached]"));
  // Alive a while later (a debug register left armed would kill it with SIGTRAP), all 51
  // threads present and none left in a stop.
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  auto states = task_states(pid);
  INFO("states: " << std::string(states.begin(), states.end()));
  CHECK(states.size() == 51);
  for (char s : states) {
    CHECK((s == 'S' || s == 'R'));
  }
}

TEST_CASE("a thread execs while it runs alone (scheduler-locking): GDB hears of the exec, not of the threads it killed",
          "[e2e][threads][exec]") {
  // GDB 16 and 18 give up ("No unwaited-for children left") on the exit of a thread they did
  // not resume: as gdbserver, those exits wait until GDB resumes the thread, and the exec
  // drops them.
  auto out = e2e::run_gdb({.program = "mt",
                           .commands = {"break exec_from_thread", "continue", "set scheduler-locking on", "continue",
                                        "info threads", "set scheduler-locking off", "continue"},
                           .args = {"threadexec", e2e::prog_path("simple")}});
  INFO(out.transcript());
  CHECK_THAT(out.gdb, ContainsRegex(R"(hit Breakpoint 1, exec_from_thread \(\))"));
  CHECK_THAT(out.gdb, ContainsRegex(R"(process \d+ is executing new program: .*/simple)"));
  CHECK_THAT(out.gdb, !Contains("No unwaited-for children left"));
  CHECK_THAT(out.gdb, ContainsRegex(R"(\[Inferior 1 \(process \d+\) exited with code 07\])"));
  CHECK_THAT(out.server_out, Contains("sum=30 counter=4"));
}

namespace {

// gdb.base/step-over-syscall.exp's clone case: stepi over the syscall instruction of glibc's
// clone(), under a breakpoint. GDB 15 and later ask the stepping thread's clones and exit
// (QThreadOptions): the new thread is announced and kept stopped until GDB has moved it out of
// a displaced step's copy.
void step_over_clone(const std::string& displaced) {
  const std::string find_syscall =
      "python a = next(i['addr'] for i in gdb.selected_frame().architecture().disassemble("
      "gdb.selected_frame().pc(), count=200) if i['asm'].startswith('syscall')); gdb.execute('break *%#x' % a)";
  const std::string check_pc =
      "python print('after the step: pc %s' % ('right' if int(gdb.parse_and_eval('$pc')) == a + 2 else 'wrong'))";
  auto out = e2e::run_gdb({.program = "clones",
                           .commands = {"break main", "continue", "break clone", "continue", find_syscall, "continue",
                                        "set displaced-stepping " + displaced, "stepi", check_pc, "thread",
                                        "info threads", "delete", "continue"},
                           .args = {"3"},
                           .remote_debug = true});
  INFO(out.transcript());
  CHECK_THAT(out.gdb, ContainsRegex(R"(Breakpoint 3, clone \(\))"));
  CHECK_THAT(out.gdb, Contains("after the step: pc right"));
  CHECK_THAT(out.gdb, Contains("Current thread is 1 "));
  CHECK_THAT(out.gdb, !Contains("internal-error"));
  CHECK_THAT(out.gdb, !Contains("SIGSEGV"));
  CHECK_THAT(out.gdb, ContainsRegex(R"(\[Inferior 1 \(process \d+\) exited normally\])"));
  CHECK_THAT(out.server_out, Contains("clones ok: 3"));
  if (e2e::gdb_major_version() >= 15) {
    CHECK_THAT(out.server_err, Contains("<- $QThreadOptions;"));
    CHECK_THAT(out.server_err, Contains("-> $T05clone:p"));
  }
}

}  // namespace

TEST_CASE("stepi over the clone syscall (in-line step-over): GDB stays on the stepping thread, the new thread "
          "starts in the program; GDB 15 and later hear of it as a clone event",
          "[e2e][threads]") {
  step_over_clone("off");
}

TEST_CASE("stepi over the clone syscall, displaced: the new thread is moved out of the copy before it runs "
          "(GDB 15 and later: the clone event)",
          "[e2e][threads]") {
  if (e2e::gdb_major_version() < 15) {
    HS_SKIP("GDB " + std::to_string(e2e::gdb_major_version()) +
            " cannot step a clone out of line (its bug gdb/19675, a known failure of its own testsuite; GDB 15 "
            "fixed it with QThreadOptions; run in a client lane: test/clients/run.sh sid)");
  }
  step_over_clone("on");
}
