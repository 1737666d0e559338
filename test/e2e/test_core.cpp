// The tracer core end to end: a step-over that never finishes does not hang the server,
// fork/vfork/exec following and several processes, non-stop mode, threads and processes that
// die under us, and nothing GDB debugs surviving the session.
#include <catch2/catch.hpp>

#include <signal.h>
#include <unistd.h>

#include <regex>
#include <thread>

#include "test/e2e/gdb_session.hpp"
#include "test/e2e/matchers.hpp"
#include "test/e2e/rsp_client.hpp"

using Catch::Matchers::Contains;
using Catch::Matchers::StartsWith;
using e2e::ContainsRegex;

namespace {

using namespace std::chrono_literals;

// The thread ids of a qfThreadInfo/qsThreadInfo walk ("mp1a.1a,p1a.1b").
std::vector<std::pair<long, long>> thread_ids(e2e::RspClient& c) {
  std::vector<std::pair<long, long>> out;
  auto reply = c.request("qfThreadInfo");
  while (reply && !reply->empty() && (*reply)[0] == 'm') {
    std::regex id(R"(p([0-9a-f]+)\.([0-9a-f]+))");
    for (std::sregex_iterator it(reply->begin(), reply->end(), id), end; it != end; ++it) {
      out.emplace_back(std::stol((*it)[1], nullptr, 16), std::stol((*it)[2], nullptr, 16));
    }
    reply = c.request("qsThreadInfo");
  }
  return out;
}

// A little-endian hex register value ("7856341200000000") as a number.
unsigned long le_hex(const std::string& hex) {
  unsigned long v = 0;
  for (std::size_t i = 0; i + 1 < hex.size() && i < 16; i += 2) {
    v |= std::stoul(hex.substr(i, 2), nullptr, 16) << (4 * i);
  }
  return v;
}

bool process_gone(pid_t pid) {
  const char state = e2e::proc_state(pid);
  return state == '\0' || state == '?' || state == 'Z' || state == 'X';
}

int first_number_after(const std::string& text, const std::string& re) {
  std::smatch m;
  if (std::regex_search(text, m, std::regex(re))) {
    return std::stoi(m[1]);
  }
  return 0;
}

// test/progs/blocker: continue until thread 2 is blocked in read(), then ^C. The stop reply.
std::optional<std::string> run_blocker_until_read_then_interrupt(e2e::RspClient& c) {
  REQUIRE(c.request("qSupported:multiprocess+;swbreak+").has_value());
  REQUIRE(c.send_packet("vCont;c"));
  REQUIRE(c.read_ack() == '+');
  std::this_thread::sleep_for(300ms);  // thread 2 is in read() by now
  REQUIRE(c.send_raw("\x03"));
  return c.read_packet(3000ms);
}

}  // namespace

TEST_CASE("a breakpoint at a thread blocked in read(): Ctrl-C still stops it, SIGTERM ends the server",
          "[e2e][core][rsp]") {
  e2e::Server server({.program = "blocker"});
  e2e::RspClient c(server.port());
  auto stop = run_blocker_until_read_then_interrupt(c);
  REQUIRE(stop.has_value());
  CHECK_THAT(*stop, StartsWith("T02"));
  auto ids = thread_ids(c);
  REQUIRE(ids.size() == 2);
  const long pid = ids[0].first;
  const long reader = ids[0].second == pid ? ids[1].second : ids[0].second;
  char hg[64];
  std::snprintf(hg, sizeof hg, "Hgp%lx.%lx", pid, reader);
  REQUIRE(c.request(hg) == std::optional<std::string>("OK"));
  auto rip = c.request("p10");
  REQUIRE(rip.has_value());
  const unsigned long pc = le_hex(*rip);
  char z0[64];
  std::snprintf(z0, sizeof z0, "Z0,%lx,1", pc);
  REQUIRE(c.request(z0) == std::optional<std::string>("OK"));
  // Resuming steps thread 2 over the int3: the kernel restarts the read, the step never ends.
  REQUIRE(c.send_packet("vCont;c"));
  REQUIRE(c.read_ack() == '+');
  std::this_thread::sleep_for(300ms);
  REQUIRE(c.send_raw("\x03"));
  stop = c.read_packet(3000ms);
  REQUIRE(stop.has_value());  // gdbserver answers at once; we must too
  CHECK_THAT(*stop, StartsWith("T02"));
  // The int3 is back in place while everything is stopped (not the original byte).
  char m[64];
  std::snprintf(m, sizeof m, "m%lx,1", pc);
  auto shown = c.request(m);
  REQUIRE(shown.has_value());
  CHECK(*shown != "cc");  // reads hide it
  auto raw = e2e::read_proc_mem(static_cast<pid_t>(pid), pc, 1);
  REQUIRE(raw.has_value());
  CHECK((*raw)[0] == 0xCC);
  // And a SIGTERM ends the server at once, taking the program it started with it.
  ::kill(server.child().pid(), SIGTERM);
  auto status = server.wait(e2e::Clock::now() + 5s);
  REQUIRE(status.has_value());
  std::this_thread::sleep_for(100ms);
  CHECK(process_gone(static_cast<pid_t>(pid)));
}

TEST_CASE("fork, follow the parent: catch fork, the child is detached clean and runs to its end",
          "[e2e][core][fork]") {
  auto out = e2e::run_gdb({.program = "forks",
                           .commands = {"break child_work", "catch fork", "continue", "info inferiors",
                                        "continue", "print status", "continue"},
                           .args = {"fork"}});
  INFO(out.transcript());
  CHECK_THAT(out.gdb, ContainsRegex(R"(Catchpoint \d+ \(forked process \d+\))"));
  CHECK_THAT(out.gdb, Contains("[Detaching after fork from child process"));
  // The breakpoint on child_work is never hit: only the child calls it, and it ran free
  // (with the int3 taken out, or it would have died of SIGTRAP: status 105).
  CHECK_THAT(out.server_out, ContainsRegex(R"(child \d+ status 7)"));
  CHECK_THAT(out.gdb, Contains("exited normally"));
}

TEST_CASE("fork, follow the child: GDB stops in the child at a breakpoint only the child reaches",
          "[e2e][core][fork]") {
  auto out = e2e::run_gdb({.program = "forks",
                           .commands = {"set follow-fork-mode child", "break child_work", "continue", "bt 1",
                                        "info inferiors", "continue"},
                           .args = {"fork"}});
  INFO(out.transcript());
  CHECK_THAT(out.gdb, ContainsRegex(R"(\[Attaching after .* fork to child .*\])"));
  CHECK_THAT(out.gdb, Contains("Breakpoint 1, child_work (x=6)"));
  CHECK_THAT(out.gdb, ContainsRegex(R"(\[Inferior \d+ \(process \d+\) exited with code 07\])"));
  // The parent was detached clean: it reaped the child and finished on its own.
  CHECK_THAT(out.server_out, ContainsRegex(R"(child \d+ status 7)"));
}

TEST_CASE("detach-on-fork off: both processes debugged, switching between them", "[e2e][core][fork]") {
  auto out = e2e::run_gdb({.program = "forks",
                           .commands = {"set detach-on-fork off", "set schedule-multiple on", "break child_work",
                                        "break parent_done", "continue", "info inferiors", "bt 1", "continue",
                                        "inferior 1", "continue", "print status", "continue"},
                           .args = {"fork"}});
  INFO(out.transcript());
  CHECK_THAT(out.gdb, ContainsRegex(R"(\[New inferior 2 \(process \d+\)\])"));
  CHECK_THAT(out.gdb, ContainsRegex(R"(\n +1 +process \d+ )"));
  CHECK_THAT(out.gdb, ContainsRegex(R"(\n\* 2 +process \d+ )"));
  CHECK_THAT(out.gdb, ContainsRegex(R"(Thread 2\.1 .*hit Breakpoint 1(\.\d+)?, child_work \(x=6\))"));
  CHECK_THAT(out.gdb, ContainsRegex(R"(\[Inferior 2 \(process \d+\) exited with code 07\])"));
  CHECK_THAT(out.gdb, ContainsRegex(R"(hit Breakpoint 2(\.\d+)?, parent_done \(status=7\))"));
  CHECK_THAT(out.gdb, ContainsRegex(R"(\$1 = 7)"));
  CHECK_THAT(out.gdb, ContainsRegex(R"(\[Inferior 1 \(process \d+\) exited normally\])"));
}

TEST_CASE("detach-on-fork off: GDB going away kills every process it debugs, none survives",
          "[e2e][core][fork]") {
  auto out = e2e::run_gdb({.program = "forks",
                           .commands = {"set detach-on-fork off", "set schedule-multiple on",
                                        "break spin_forever", "continue", "info inferiors"},
                           .args = {"spin"}});
  INFO(out.transcript());
  const int child = first_number_after(out.gdb, R"(\[New inferior 2 \(process (\d+)\)\])");
  REQUIRE(child > 0);
  std::this_thread::sleep_for(200ms);
  CHECK(process_gone(child));
  CHECK(out.stray_processes == 0);
}

TEST_CASE("vfork: the parent's breakpoints stay out of the child, which execs; vforkdone resumes the parent",
          "[e2e][core][fork]") {
  auto out = e2e::run_gdb({.program = "forks",
                           .commands = {"catch vfork", "break parent_done", "continue", "continue", "bt 1",
                                        "continue"},
                           .args = {"vfork", e2e::prog_path("simple")}});
  INFO(out.transcript());
  CHECK_THAT(out.gdb, ContainsRegex(R"(Catchpoint \d+ \(vforked process \d+\))"));
  CHECK_THAT(out.gdb, Contains("parent_done (status=7)"));  // simple exits 7 without args
  CHECK_THAT(out.gdb, Contains("exited normally"));
}

TEST_CASE("a fork from a second thread: the child is detached, the parent carries on",
          "[e2e][core][fork][threads]") {
  auto out = e2e::run_gdb({.program = "forks",
                           .commands = {"catch fork", "break parent_done", "continue", "info threads",
                                        "continue", "continue"},
                           .args = {"threads"}});
  INFO(out.transcript());
  CHECK_THAT(out.gdb, ContainsRegex(R"(Thread 2 "forks" hit Catchpoint \d+ \(forked process \d+\))"));
  CHECK_THAT(out.gdb, Contains("parent_done (status=7)"));
  CHECK_THAT(out.gdb, Contains("exited normally"));
}

TEST_CASE("non-stop: a thread stops at a breakpoint while the others run on", "[e2e][core][non-stop]") {
  auto out = e2e::run_gdb({.program = "mt",
                           .commands = {"break hit", "continue", "info threads"},
                           .args = {"pair"},
                           .init_commands = {"set non-stop on"}});
  INFO(out.transcript());
  CHECK_THAT(out.gdb, ContainsRegex(R"(Thread \d+ "mt" hit Breakpoint 1, hit \(id=[12]\))"));
  // The other threads were never stopped: GDB lists them as running.
  CHECK_THAT(out.gdb, Contains("(running)"));
  CHECK(out.stray_processes == 0);
}

TEST_CASE("non-stop over raw RSP: %Stop notifications, vStopped, vCont;t and vCtrlC", "[e2e][core][non-stop][rsp]") {
  e2e::Server server({.program = "mt", .args = {"many", "3"}});
  e2e::RspClient c(server.port());
  REQUIRE(c.request("qSupported:multiprocess+;swbreak+").has_value());
  REQUIRE(c.request("QNonStop:1") == std::optional<std::string>("OK"));
  auto first = c.request("?");
  REQUIRE(first.has_value());
  CHECK_THAT(*first, StartsWith("T"));
  CHECK(c.request("vStopped") == std::optional<std::string>("OK"));
  REQUIRE(c.request("vCont;c") == std::optional<std::string>("OK"));  // at once
  std::this_thread::sleep_for(300ms);
  auto ids = thread_ids(c);
  REQUIRE(ids.size() == 4);
  char t[64];
  std::snprintf(t, sizeof t, "vCont;t:p%lx.%lx", ids[1].first, ids[1].second);
  REQUIRE(c.request(t) == std::optional<std::string>("OK"));
  // The notification arrives unasked: %Stop:T00...
  auto note = c.read_notification(3000ms);
  REQUIRE(note.has_value());
  CHECK_THAT(*note, StartsWith("Stop:T00"));
  CHECK(c.request("vStopped") == std::optional<std::string>("OK"));
  // vCtrlC: one more thread stops, with SIGINT.
  REQUIRE(c.request("vCtrlC") == std::optional<std::string>("OK"));
  note = c.read_notification(3000ms);
  REQUIRE(note.has_value());
  CHECK_THAT(*note, StartsWith("Stop:T02"));
  CHECK(c.request("vStopped") == std::optional<std::string>("OK"));
}

TEST_CASE("a thread exits and another starts while GDB steps the main thread", "[e2e][core][threads]") {
  auto out = e2e::run_gdb({.program = "mt",
                           .commands = {"break checkpoint", "continue", "next", "next", "continue", "continue",
                                        "continue"},
                           .args = {"life"}});
  INFO(out.transcript());
  CHECK_THAT(out.gdb, Contains("checkpoint (n=1)"));
  CHECK_THAT(out.gdb, Contains("exited normally"));
  CHECK(out.stray_processes == 0);
}

TEST_CASE("record btrace: a thread born while recording is traced from its first instruction",
          "[e2e][core][btrace]") {
  const std::string collector = GENERATE("soft", "inproc");
  auto out = e2e::run_gdb({.program = "calls",
                           .commands = {"break main", "continue", "record btrace", "break worker", "continue",
                                        "info record", "record function-call-history", "record stop", "delete",
                                        "continue"},
                           .args = {"threads"},
                           .server_flags = {"--btrace=" + collector}});
  INFO("collector " << collector);
  INFO(out.transcript());
  CHECK_THAT(out.gdb, ContainsRegex(R"(hit Breakpoint \d+, worker)"));
  CHECK_THAT(out.gdb, !Contains("Failed to enable recording"));
  CHECK_THAT(out.gdb, !Contains("Could not enable branch tracing"));
  // The new thread's history starts at its very beginning (the clone3 return, then glibc's
  // start_thread), whole: no gap where GDB's view began.
  CHECK_THAT(out.gdb, ContainsRegex(R"(Recorded \d+ instructions in \d+ functions \(0 gaps\) for thread 2 )"));
  CHECK_THAT(out.gdb, ContainsRegex(R"(\n1\t(clone3|start_thread)\n)"));
  CHECK_THAT(out.gdb, Contains("worker"));
}

TEST_CASE("vfork, follow the child: `next` over vfork stops in the child, the parent waits for its exec",
          "[e2e][core][fork]") {
  auto out = e2e::run_gdb({.program = "forks",
                           .commands = {"break forks.c:65", "continue", "set follow-fork-mode child", "next",
                                        "info inferiors", "delete", "continue"},
                           .args = {"vfork", e2e::prog_path("simple")}});
  INFO(out.transcript());
  CHECK_THAT(out.gdb, ContainsRegex(R"(\[Attaching after .* vfork to child .*\])"));
  CHECK_THAT(out.gdb, ContainsRegex(R"(\n66\t +if \(child == 0\) \{)"));
  CHECK_THAT(out.gdb, Contains("is vfork child of inferior 1"));
  CHECK_THAT(out.gdb, ContainsRegex(R"(\[Detaching vfork parent process \d+ after child exec\])"));
  CHECK_THAT(out.gdb, ContainsRegex(R"(\[Inferior 2 \(process \d+\) exited with code 07\])"));
}

TEST_CASE("a program killed from outside while GDB has it stopped: continue tells how it ended",
          "[e2e][core][threads]") {
  auto out = e2e::run_gdb({.program = "mt",
                           .commands = {"break all_started", "continue",
                                        "python import os, time; os.kill(gdb.selected_inferior().pid, 9); "
                                        "time.sleep(1)",
                                        "continue", "continue"},
                           .args = {"bp8"}});
  INFO(out.transcript());
  CHECK_THAT(out.gdb, Contains("Breakpoint 1, "));
  CHECK_THAT(out.gdb, Contains("Program terminated with signal SIGKILL, Killed."));
  CHECK_THAT(out.gdb, Contains("The program is not being run."));
  CHECK_THAT(out.gdb, !Contains("Could not read registers"));
}

TEST_CASE("QThreadEvents:1: each thread's exit is reported as `w`, then the process's as `W`",
          "[e2e][core][threads][rsp]") {
  e2e::Server server({.program = "mt", .args = {"life"}});
  e2e::RspClient c(server.port());
  REQUIRE(c.request("qSupported:multiprocess+;swbreak+").has_value());
  REQUIRE(c.request("QThreadEvents:1") == std::optional<std::string>("OK"));
  const auto leader = thread_ids(c).at(0);
  // life-A, then life-B, exit before the leader does.
  std::vector<std::string> replies;
  for (int i = 0; i < 3; ++i) {
    auto reply = c.request("vCont;c", 5000ms);
    REQUIRE(reply.has_value());
    replies.push_back(*reply);
    if ((*reply)[0] == 'W') {
      break;
    }
  }
  INFO(replies.size());
  REQUIRE(replies.size() == 3);
  const std::regex thread_exit(R"(w00;p([0-9a-f]+)\.([0-9a-f]+))");
  std::smatch m;
  for (int i = 0; i < 2; ++i) {
    INFO(replies[i]);
    REQUIRE(std::regex_match(replies[i], m, thread_exit));
    CHECK(std::stol(m[1], nullptr, 16) == leader.first);
    CHECK(std::stol(m[2], nullptr, 16) != leader.second);
  }
  CHECK_THAT(replies[2], StartsWith("W00;process:"));
}

// The threads' exits and the process's end wait for the resume, each in the order it came:
// every `w` before the `X` (told after it, they were of a process GDB had already mourned).
TEST_CASE("QThreadEvents:1 and a SIGKILL from outside while stopped: each thread's `w` before `X09` at the resume",
          "[e2e][core][threads][rsp]") {
  e2e::Server server({.program = "mt", .args = {"many", "3"}});
  e2e::RspClient c(server.port());
  REQUIRE(c.request("qSupported:multiprocess+;swbreak+").has_value());
  REQUIRE(c.request("QThreadEvents:1") == std::optional<std::string>("OK"));
  std::vector<std::pair<long, long>> ids;
  for (int i = 0; i < 10 && ids.size() < 4; ++i) {  // the leader and its three threads, all stopped
    REQUIRE(c.send_packet("vCont;c"));
    std::this_thread::sleep_for(300ms);
    REQUIRE(c.send_raw("\x03"));
    auto stop = c.read_packet(5000ms);
    REQUIRE(stop.has_value());
    ids = thread_ids(c);
  }
  REQUIRE(ids.size() == 4);
  const long pid = ids.at(0).first;
  ::kill(static_cast<pid_t>(pid), SIGKILL);
  std::this_thread::sleep_for(1000ms);  // every thread reaped while GDB has them stopped
  std::vector<std::string> replies;
  for (int i = 0; i < 5; ++i) {
    auto reply = c.request("vCont;c", 5000ms);
    REQUIRE(reply.has_value());
    replies.push_back(*reply);
    if ((*reply)[0] == 'X') {
      break;
    }
  }
  INFO(replies.size());
  REQUIRE(replies.size() == 4);
  const std::regex thread_exit(R"(w[0-9a-f]+;p([0-9a-f]+)\.([0-9a-f]+))");
  std::smatch m;
  for (int i = 0; i < 3; ++i) {
    INFO(replies[i]);
    REQUIRE(std::regex_match(replies[i], m, thread_exit));
    CHECK(std::stol(m[1], nullptr, 16) == pid);
    CHECK(std::stol(m[2], nullptr, 16) != pid);
  }
  CHECK_THAT(replies[3], StartsWith("X09;process:"));
  // Nothing of it is left to tell: no process to resume.
  auto after = c.request("vCont;c", 2000ms);
  REQUIRE(after.has_value());
  CHECK_THAT(*after, StartsWith("E"));
}

TEST_CASE("non-stop over raw RSP: another thread's stop does not change the thread Hg selected",
          "[e2e][core][non-stop][rsp]") {
  e2e::Server server({.program = "mt", .args = {"latesig"}});
  e2e::RspClient c(server.port());
  REQUIRE(c.request("qSupported:multiprocess+;swbreak+").has_value());
  REQUIRE(c.request("QNonStop:1") == std::optional<std::string>("OK"));
  REQUIRE(c.request("?").has_value());
  REQUIRE(c.request("vStopped") == std::optional<std::string>("OK"));
  const auto main_thread = thread_ids(c).at(0);
  REQUIRE(c.request("vCont;c") == std::optional<std::string>("OK"));
  std::this_thread::sleep_for(100ms);  // the worker is born and naps
  char id[64];
  std::snprintf(id, sizeof id, "p%lx.%lx", main_thread.first, main_thread.second);
  REQUIRE(c.request(std::string("vCont;t:") + id) == std::optional<std::string>("OK"));
  auto note = c.read_notification(3000ms);
  REQUIRE(note.has_value());
  REQUIRE_THAT(*note, StartsWith("Stop:T00"));
  std::smatch m;
  REQUIRE(std::regex_search(*note, m, std::regex(";10:([0-9a-f]{16});")));
  const unsigned long main_pc = le_hex(m[1]);
  CHECK(c.request("vStopped") == std::optional<std::string>("OK"));
  REQUIRE(c.request(std::string("Hg") + id) == std::optional<std::string>("OK"));
  // The worker's SIGUSR1 stops it (no QPassSignals here): a stop of another thread.
  note = c.read_notification(3000ms);
  REQUIRE(note.has_value());
  CHECK_THAT(*note, StartsWith("Stop:T1e"));  // GDB's number for SIGUSR1
  CHECK_THAT(*note, !Contains(std::string("thread:") + id));
  CHECK(c.request("vStopped") == std::optional<std::string>("OK"));
  // `g` still answers for the main thread: rip is the 17th 8-byte register.
  auto g = c.request("g");
  REQUIRE(g.has_value());
  REQUIRE(g->size() >= 17 * 16);
  CHECK(le_hex(g->substr(16 * 16, 16)) == main_pc);
}

TEST_CASE("two threads' signals at once: the one GDB passes while the other is reported is not lost",
          "[e2e][core][signals][threads]") {
  auto out = e2e::run_gdb({.program = "mt",
                           .commands = {"handle SIGUSR1 nostop print pass", "continue"},
                           .args = {"sigpair"}});
  INFO(out.transcript());
  CHECK_THAT(out.server_out, Contains("usr1=100"));
  CHECK_THAT(out.gdb, Contains("exited normally"));
}

TEST_CASE("`next` while another thread keeps hitting the breakpoint: no stray SIGTRAP reaches GDB",
          "[e2e][core][threads]") {
  std::vector<std::string> commands = {"break looper:bump", "continue"};
  for (int i = 0; i < 20; ++i) {
    commands.emplace_back("next");
  }
  auto out = e2e::run_gdb({.program = "mt", .commands = commands, .args = {"bploop"}});
  INFO(out.transcript());
  CHECK_THAT(out.gdb, Contains("hit Breakpoint 1, looper"));
  CHECK_THAT(out.gdb, !Contains("received signal SIGTRAP"));
}

TEST_CASE("Ctrl-C while GDB runs one thread alone: the stop is reported for that thread",
          "[e2e][core][rsp]") {
  e2e::Server server({.program = "blocker"});
  e2e::RspClient c(server.port());
  REQUIRE(run_blocker_until_read_then_interrupt(c).has_value());
  auto ids = thread_ids(c);
  REQUIRE(ids.size() == 2);
  const long reader = ids[0].second == ids[0].first ? ids[1].second : ids[0].second;
  char resume[64];
  std::snprintf(resume, sizeof resume, "vCont;c:p%lx.%lx", ids[0].first, reader);
  // Only the reader runs (scheduler-locking, or GDB stepping it over a breakpoint), so GDB
  // expects news of the reader alone.
  REQUIRE(c.send_packet(resume));
  REQUIRE(c.read_ack() == '+');
  std::this_thread::sleep_for(200ms);
  REQUIRE(c.send_raw("\x03"));
  auto stop = c.read_packet(3000ms);
  REQUIRE(stop.has_value());
  CHECK_THAT(*stop, StartsWith("T02"));
  char thread[64];
  std::snprintf(thread, sizeof thread, "thread:p%lx.%lx;", ids[0].first, reader);
  CHECK_THAT(*stop, Contains(thread));
}

TEST_CASE("the main thread exits alone under scheduler-locking: GDB hears no thread it resumed is left",
          "[e2e][core][threads]") {
  auto out = e2e::run_gdb({.program = "mt",
                           .commands = {"break checkpoint", "continue", "set scheduler-locking on", "continue",
                                        "info threads"},
                           .args = {"leaderexit"}});
  INFO(out.transcript());
  CHECK_THAT(out.gdb, Contains("No unwaited-for children left."));
  CHECK_THAT(out.gdb, ContainsRegex(R"(The current thread <Thread ID 1> has terminated)"));
}

TEST_CASE("non-stop over raw RSP: vAttach answers OK, vCont;t stops every thread with T00, D lets go",
          "[e2e][core][non-stop][attach][rsp]") {
  e2e::Child program({.argv = {e2e::prog_path("mt"), "many", "3"}});
  REQUIRE(program.wait_for_text("pid=", e2e::Clock::now() + 5s, true));
  e2e::Server server({.extra_flags = {"--multi"}});
  e2e::RspClient c(server.port());
  REQUIRE(c.request("qSupported:multiprocess+;swbreak+").has_value());
  REQUIRE(c.request("!") == std::optional<std::string>("OK"));
  REQUIRE(c.request("QNonStop:1") == std::optional<std::string>("OK"));
  char attach[64];
  std::snprintf(attach, sizeof attach, "vAttach;%x", static_cast<unsigned>(program.pid()));
  REQUIRE(c.request(attach) == std::optional<std::string>("OK"));  // no stop reply in non-stop
  REQUIRE(thread_ids(c).size() == 4);
  char stop_all[64];
  std::snprintf(stop_all, sizeof stop_all, "vCont;t:p%x.-1", static_cast<unsigned>(program.pid()));
  REQUIRE(c.request(stop_all) == std::optional<std::string>("OK"));
  // Each stop is queued as it happens: a notification, then vStopped drains the queue. A thread
  // that stops after a drain ended (a loaded machine) comes with a notification of its own.
  std::vector<std::string> stops;
  while (stops.size() < 4) {
    auto note = c.read_notification(3000ms);
    REQUIRE(note.has_value());
    stops.push_back(note->substr(5));  // "Stop:"
    for (auto reply = c.request("vStopped"); reply && *reply != "OK"; reply = c.request("vStopped")) {
      stops.push_back(*reply);
    }
  }
  REQUIRE(stops.size() == 4);
  for (const auto& s : stops) {
    CHECK_THAT(s, StartsWith("T00"));
  }
  char detach[64];
  std::snprintf(detach, sizeof detach, "D;%x", static_cast<unsigned>(program.pid()));
  CHECK(c.request(detach) == std::optional<std::string>("OK"));
  std::this_thread::sleep_for(50ms);
  const char state = e2e::proc_state(program.pid());
  CHECK((state == 'S' || state == 'R'));  // runs on after the detach
}

namespace {

// The address of the second instruction of GDB's `x/2i $pc` output, and $N of `p/x $pc` after.
struct StepiCheck {
  std::optional<std::uint64_t> next_insn;
  std::optional<std::uint64_t> pc_after;
};

StepiCheck stepi_check(const std::string& gdb) {
  StepiCheck c;
  std::smatch m;
  if (std::regex_search(gdb, m, std::regex(R"(=> 0x[0-9a-f]+[^\n]*\n\s+(0x[0-9a-f]+))"))) {
    c.next_insn = std::stoull(m[1].str(), nullptr, 16);
  }
  if (std::regex_search(gdb, m, std::regex(R"(\$1 = (0x[0-9a-f]+))"))) {
    c.pc_after = std::stoull(m[1].str(), nullptr, 16);
  }
  return c;
}

}  // namespace

TEST_CASE("stepi from the first stop (inside execve) runs exactly one instruction", "[e2e][core][step]") {
  const auto flags = GENERATE(std::vector<std::string>{}, std::vector<std::string>{"--no-startup-with-shell"});
  auto out = e2e::run_gdb({.program = "calls", .commands = {"x/2i $pc", "stepi", "p/x $pc"}, .server_flags = flags});
  INFO(out.transcript());
  const StepiCheck c = stepi_check(out.gdb);
  REQUIRE(c.next_insn);
  REQUIRE(c.pc_after);
  CHECK(*c.pc_after == *c.next_insn);
}
