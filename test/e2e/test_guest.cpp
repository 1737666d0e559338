// The in-process recorder is a guest (issue 55): what a program sees of itself is the same
// recorded as natively, at launch and at attach. test/progs/guest_probe.c prints what it sees.
#include <catch2/catch.hpp>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <signal.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "test/e2e/collectors.hpp"
#include "test/e2e/gdb_session.hpp"
#include "test/e2e/matchers.hpp"
#include "test/support/skip.hpp"

using Catch::Matchers::Contains;
using e2e::ContainsRegex;

namespace {

// guest_probe's report: its lines after the probe, in order.
std::string report_of(const std::string& out) {
  std::string report;
  for (const char* key : {"link map: ", "heap grew", "maps naming", "SIGSEGV handler: ", "syscall 39: ", "syscall 9: "}) {
    const auto at = out.find(key);
    if (at != std::string::npos) {
      report += out.substr(at, out.find('\n', at) - at + 1);
    }
  }
  return report;
}

}  // namespace

TEST_CASE("inproc is a guest at launch: the program's link map, heap, maps, SIGSEGV handler and mask are as "
          "natively",
          "[e2e][btrace][guest]") {
  auto native = e2e::run_gdb({.program = "guest_probe", .commands = {"break probe_point", "continue", "continue"}});
  INFO(native.transcript());
  const std::string expected = report_of(native.server_out);
  REQUIRE_THAT(expected, Contains("SIGSEGV handler: ours, blocked: yes\n"));
  CHECK_THAT(expected, Contains("heap grew by 0 bytes") && Contains("maps naming a guest: 0\n"));
  CHECK_THAT(expected, Contains("syscall 39: rcx as natively, r11 as natively, flags as natively\n"));

  auto recorded = e2e::run_gdb({.program = "guest_probe",
                                .commands = {"break probe_point", "continue", "record btrace", "break probe_done",
                                             "continue", "monitor btrace", "info record", "continue"},
                                .server_flags = {"--btrace=inproc"}});
  INFO(recorded.transcript());
  CHECK_THAT(recorded.gdb, ContainsRegex(R"(thread \d+: inproc, )"));
  // The probe's own calls (dl_iterate_phdr, printf, ...) recorded in the cache, not stepped.
  CHECK_THAT(recorded.gdb, ContainsRegex(R"(Recorded \d{4,} instructions in \d+ functions \(0 gaps\))"));
  CHECK(report_of(recorded.server_out) == expected);
  CHECK_THAT(recorded.gdb, Contains("exited normally"));

  // Stopped at the syscalls (catch syscall: each thread moved out of the cache at its stop), the
  // program's registers after them are its own too.
  auto caught = e2e::run_gdb({.program = "guest_probe",
                              .commands = {"break probe_point", "continue", "record btrace", "catch syscall getpid mmap",
                                           "continue", "continue", "continue", "continue", "delete", "continue"},
                              .server_flags = {"--btrace=inproc"}});
  INFO(caught.transcript());
  CHECK_THAT(caught.gdb, Contains("(returned from syscall getpid)"));
  CHECK(report_of(caught.server_out) == expected);
  CHECK_THAT(caught.gdb, Contains("exited normally"));
}

TEST_CASE("inproc is a guest at attach: the program's link map, heap, maps, SIGSEGV handler and mask are as "
          "natively, and detach leaves nothing of it",
          "[e2e][btrace][guest][attach]") {
  e2e::Child native({.argv = {e2e::prog_path("guest_probe")}});
  REQUIRE(native.wait(e2e::Clock::now() + std::chrono::seconds(10)));
  const std::string expected = report_of(native.out());
  REQUIRE_THAT(expected, Contains("SIGSEGV handler: ours, blocked: yes\n"));

  e2e::Child probe({.argv = {e2e::prog_path("guest_probe"), "wait"}});
  REQUIRE(probe.wait_for_text("waiting", e2e::Clock::now() + std::chrono::seconds(5), true));
  auto out = e2e::run_gdb({.commands = {"record btrace", "set var go = 1", "break probe_done", "continue",
                                        "info record", "record stop", "detach"},
                           .transport = e2e::Transport::attach,
                           .attach_pid = probe.pid(),
                           .server_flags = {"--btrace=inproc"}});
  INFO(out.transcript());
  CHECK_THAT(out.gdb, ContainsRegex(R"(Recorded \d{4,} instructions in \d+ functions \(\d+ gaps\))"));
  CHECK_THAT(out.gdb, Contains("detached]"));
  const auto status = probe.wait(e2e::Clock::now() + std::chrono::seconds(10));
  INFO("probe: " << e2e::describe_status(status) << "\n" << probe.out());
  CHECK(e2e::exit_code(status) == 0);
  CHECK(report_of(probe.out()) == expected);
}

namespace {

// The most steps `monitor btrace` gives for an inproc thread ("N stepped"), or -1 if none.
long stepped(const std::string& gdb) {
  static const std::regex re(R"(: inproc, [^\n]*?(\d+) stepped)");
  long most = -1;
  for (auto it = std::sregex_iterator(gdb.begin(), gdb.end(), re); it != std::sregex_iterator(); ++it) {
    most = std::max(most, std::stol((*it)[1]));
  }
  return most;
}

// A session that recorded in the cache: nothing of the program's work stepped (GDB's own steps over
// its breakpoints only), its output as natively, its end normal.
void check_in_cache_as_natively(const e2e::SessionResult& out, const std::string& expected) {
  const long steps = stepped(out.gdb);
  CHECK(steps >= 0);
  CHECK(steps < 50);
  CHECK(out.server_out == expected);
  CHECK_THAT(out.gdb, Contains("exited normally"));
}

// Whether the server (run as this test is) may read a program's seccomp filters: the kernel lets
// a tracer with CAP_SYS_ADMIN (bit 21 of CapEff) that is under no seccomp filter of its own.
bool server_reads_seccomp_filters() {
  std::ifstream status("/proc/self/status");
  bool admin = false, filtered = true;
  for (std::string line; std::getline(status, line);) {
    if (line.rfind("CapEff:", 0) == 0) {
      admin = ((std::stoull(line.substr(7), nullptr, 16) >> 21) & 1) != 0;
    } else if (line.rfind("Seccomp:", 0) == 0) {
      filtered = std::stoi(line.substr(8)) != 0;
    }
  }
  return admin && !filtered;
}

std::string native_limits(const std::string& mode) {
  e2e::Child native({.argv = {e2e::prog_path("guest_limits"), mode}});
  const auto status = native.wait(e2e::Clock::now() + std::chrono::seconds(10));
  REQUIRE(e2e::exit_code(status) == 0);
  return native.out();
}

}  // namespace

TEST_CASE("inproc comes in where the program holds its loader's lock, has no descriptor free or runs under a seccomp "
          "filter that refuses memfd_create: nothing of the program's is used, and its threads run in the cache, not "
          "stepped",
          "[e2e][btrace][guest]") {
  const std::string mode = GENERATE("loader-lock", "no-fds", "seccomp");
  INFO("mode " << mode);
  const std::string expected = native_limits(mode);
  const std::vector<std::string> commands = {mode == "loader-lock" ? "break holding" : "break main",
                                             "continue", "record btrace", "break done", "continue",
                                             "monitor btrace", "info record", "continue"};
  auto out = e2e::run_gdb({.program = "guest_limits", .commands = commands, .args = {mode},
                           .server_flags = {"--btrace=inproc"}});
  INFO(out.transcript());
  CHECK_THAT(out.gdb, Contains(", done () at "));
  CHECK_THAT(out.gdb, ContainsRegex(R"(Recorded \d{4,} instructions in \d+ functions \(0 gaps\))"));
  check_in_cache_as_natively(out, expected);
}

TEST_CASE("inproc refuses a program in seccomp's strict mode or under a tight RLIMIT_AS in plain words, and the "
          "program runs on natively; auto records it with soft and says why",
          "[e2e][btrace][guest]") {
  const std::string mode = GENERATE("seccomp-strict", "seccomp-kill", "as-limit");
  INFO("mode " << mode);
  if (mode == "seccomp-kill" && !server_reads_seccomp_filters()) {
    HS_SKIP("the server reads a program's seccomp filters with CAP_SYS_ADMIN and no filter of its own, which "
            "this run has not");
  }
  const std::string why = mode == "seccomp-strict" ? "the program runs in seccomp's strict mode"
                          : mode == "seccomp-kill" ? "the program's seccomp filter would kill it at the recorder's "
                                                     "memfd_create"
                                                   : "the program's address space limit (RLIMIT_AS) leaves ";
  const std::string expected = native_limits(mode);
  auto refused = e2e::run_gdb({.program = "guest_limits",
                               .commands = {"break done", "continue", "record btrace", "continue"},
                               .args = {mode},
                               .server_flags = {"--btrace=inproc"}});
  INFO(refused.transcript());
  CHECK_THAT(refused.gdb, Contains("the in-process recorder cannot come in: " + why));
  CHECK(refused.server_out == expected);
  CHECK_THAT(refused.gdb, Contains("exited normally"));

  auto chosen = e2e::run_gdb({.program = "guest_limits",
                              .commands = {"break done", "continue", "record btrace", "monitor btrace", "continue"},
                              .args = {mode}});
  INFO(chosen.transcript());
  if (chosen.gdb.find(": bts, ") == std::string::npos) {
    CHECK_THAT(chosen.gdb, Contains("auto passed over inproc: the in-process recorder cannot come in: " + why));
    CHECK_THAT(chosen.gdb, ContainsRegex(R"(thread \d+: soft, )"));
  }
  CHECK(chosen.server_out == expected);
  CHECK_THAT(chosen.gdb, Contains("exited normally"));
}

TEST_CASE("inproc: 2,000 threads made and joined one after the other all record in the cache, the blocks of threads "
          "gone made anew",
          "[e2e][btrace][guest][threads]") {
  e2e::Child native({.argv = {e2e::prog_path("many_threads")}});
  REQUIRE(e2e::exit_code(native.wait(e2e::Clock::now() + std::chrono::seconds(20))) == 0);
  auto out = e2e::run_gdb({.program = "many_threads",
                           .commands = {"break main", "continue", "record btrace", "break last_thread", "continue",
                                        "monitor btrace", "info record", "delete", "continue"},
                           .timeout = std::chrono::seconds(120),
                           .server_flags = {"--btrace=inproc"}});
  INFO(out.transcript());
  CHECK_THAT(out.gdb, Contains("hit Breakpoint 2, last_thread ()"));
  // The 2,000th thread, like the first, ran in the cache: its work recorded, not stepped (a
  // thread with no block left was stepped from the 1,025th on).
  CHECK_THAT(out.gdb, ContainsRegex(R"(Recorded \d{3,} instructions in \d+ functions \(0 gaps\) for thread)"));
  check_in_cache_as_natively(out, native.out());
}

TEST_CASE("inproc under a seccomp filter that kills for a call of the recorder's, which the server cannot read: the "
          "program's death reaches GDB, nothing hangs",
          "[e2e][btrace][guest]") {
  // (With CAP_SYS_ADMIN the server reads the filter and refuses: the test above. Without, the
  // recorder's memfd_create kills the program; what must hold: the server's wait that saw the
  // death hands it back to the core, and GDB hears of it, where its `continue` used to wait for
  // ever.)
  if (server_reads_seccomp_filters()) {
    HS_SKIP("the server reads the program's seccomp filters here (CAP_SYS_ADMIN): it refuses instead");
  }
  auto out = e2e::run_gdb({.program = "guest_limits",
                           .commands = {"break done", "continue", "record btrace", "continue"},
                           .args = {"seccomp-kill"},
                           .timeout = std::chrono::seconds(30),
                           .server_flags = {"--btrace=inproc"}});
  INFO(out.transcript());
  CHECK_FALSE(out.timed_out);
  CHECK_THAT(out.gdb, Contains("Program terminated with signal SIGSYS"));
}

namespace {

// guest_cases's output in `mode` natively (without its "waiting" line).
std::string native_case(const std::string& mode) {
  e2e::Child native({.argv = {e2e::prog_path("guest_cases"), mode}});
  const auto status = native.wait(e2e::Clock::now() + std::chrono::seconds(20));
  REQUIRE(e2e::exit_code(status) == 0);
  return native.out();
}

std::string without_waiting(std::string out) {
  if (const auto at = out.find("waiting\n"); at != std::string::npos) {
    out.erase(at, 8);
  }
  return out;
}

// guest_cases in `mode`, started by GDB and recorded from main (`record btrace`, then `then`) to
// its exit: it recorded in the cache, printed what it printed natively and exited normally.
void check_launched_as_natively(const std::string& mode, const std::string& expected,
                                const std::vector<std::string>& then) {
  std::vector<std::string> commands = {"break main", "continue", "record btrace"};
  commands.insert(commands.end(), then.begin(), then.end());
  auto out = e2e::run_gdb({.program = "guest_cases",
                           .commands = commands,
                           .args = {mode},
                           .timeout = std::chrono::seconds(60),
                           .server_flags = {"--btrace=inproc"}});
  INFO(out.transcript());
  CHECK_THAT(out.gdb, ContainsRegex(R"(Recorded \d{4,} instructions in \d+ functions)"));
  CHECK(out.server_out == expected);
  CHECK_THAT(out.gdb, Contains("exited normally"));
}

// guest_cases in `mode`, attached to while it waits, recorded from `record btrace` (after
// `first`) to `done`, then taken out and detached: it prints what it printed natively and exits 0.
void check_attached_as_natively(const std::string& mode, const std::string& expected,
                                const std::vector<std::string>& first = {}) {
  e2e::Child program({.argv = {e2e::prog_path("guest_cases"), mode, "wait"}});
  REQUIRE(program.wait_for_text("waiting", e2e::Clock::now() + std::chrono::seconds(5), true));
  std::vector<std::string> commands = {"record btrace"};
  commands.insert(commands.end(), first.begin(), first.end());
  for (const char* c : {"set var go = 1", "break done", "continue", "info record", "record stop", "detach"}) {
    commands.emplace_back(c);
  }
  auto attached = e2e::run_gdb({.commands = commands,
                                .transport = e2e::Transport::attach,
                                .attach_pid = program.pid(),
                                .timeout = std::chrono::seconds(60),
                                .server_flags = {"--btrace=inproc"}});
  INFO(attached.transcript());
  CHECK_THAT(attached.gdb, Contains("detached]"));
  const auto status = program.wait(e2e::Clock::now() + std::chrono::seconds(10));
  INFO("program: " << e2e::describe_status(status) << "\n" << program.out());
  CHECK(e2e::exit_code(status) == 0);
  CHECK(without_waiting(program.out()) == expected);
}

}  // namespace

TEST_CASE("inproc keeps the program's own %gs at launch: a base never set, one set in a constructor, set with "
          "arch_prctl and wrgsbase while recording, read through %gs, across a stop and in a new thread",
          "[e2e][btrace][guest]") {
  const std::string mode = GENERATE("gs-none", "gs-own");
  INFO("mode " << mode);
  const std::string expected = native_case(mode);
  REQUIRE_THAT(expected, Contains(mode == "gs-none" ? "never set: base 0\n" : "own: base a, sum 66000\n"));
  auto out = e2e::run_gdb({.program = "guest_cases",
                           .commands = {"break main", "continue", "record btrace", "break stop_point", "continue",
                                        "break done", "continue", "monitor btrace", "info record", "continue"},
                           .args = {mode},
                           .server_flags = {"--btrace=inproc"}});
  INFO(out.transcript());
  CHECK_THAT(out.gdb, Contains(", done () at "));
  // Its uses of %gs translated: recorded in the cache to the end, no gap, nothing stepped.
  CHECK_THAT(out.gdb, ContainsRegex(R"(Recorded \d{4,} instructions in \d+ functions \(0 gaps\))"));
  check_in_cache_as_natively(out, expected);
}

TEST_CASE("inproc keeps the program's own %gs at attach: the base it set before, and those it sets while recorded",
          "[e2e][btrace][guest][attach]") {
  const std::string mode = GENERATE("gs-none", "gs-own");
  INFO("mode " << mode);
  const std::string expected = native_case(mode);
  e2e::Child program({.argv = {e2e::prog_path("guest_cases"), mode, "wait"}});
  REQUIRE(program.wait_for_text("waiting", e2e::Clock::now() + std::chrono::seconds(5), true));
  auto out = e2e::run_gdb({.commands = {"record btrace", "set var go = 1", "break stop_point", "continue", "break done",
                                        "continue", "info record", "record stop", "detach"},
                           .transport = e2e::Transport::attach,
                           .attach_pid = program.pid(),
                           .server_flags = {"--btrace=inproc"}});
  INFO(out.transcript());
  CHECK_THAT(out.gdb, ContainsRegex(R"(Recorded \d{4,} instructions in \d+ functions)"));
  CHECK_THAT(out.gdb, Contains("detached]"));
  const auto status = program.wait(e2e::Clock::now() + std::chrono::seconds(10));
  INFO("program: " << e2e::describe_status(status) << "\n" << program.out());
  CHECK(e2e::exit_code(status) == 0);
  CHECK(without_waiting(program.out()) == expected);
}

TEST_CASE("inproc: signals that come while threads run in the cache reach the program with their own siginfo "
          "(sigqueue's value and sender, a POSIX timer's, SIGCHLD's pid and status)",
          "[e2e][btrace][guest]") {
  const std::string expected = native_case("siginfo");
  REQUIRE_THAT(expected, Contains("sigqueue: 200, with a wrong siginfo: 0\n"));
  const std::vector<std::string> pass = {"handle SIG35 SIGALRM SIGCHLD nostop noprint pass"};
  check_launched_as_natively("siginfo", expected, {pass[0], "break done", "continue", "info record", "continue"});
  check_attached_as_natively("siginfo", expected, pass);
}

TEST_CASE("inproc: rseq critical sections in the cache are aborted as natively when preempted or migrated: "
          "per-CPU counters lose no update (launch and attach)",
          "[e2e][btrace][guest]") {
  const std::string expected = native_case("rseq");
  if (expected == "rseq: not registered\n") {
    HS_SKIP("glibc registered no rseq area here (kernel or glibc.pthread.rseq=0): no critical section to abort");
  }
  REQUIRE_THAT(expected, Contains("counted 16000000\n"));
  // Stops now and then (a dprintf), and one while the others add: threads stop in their sections.
  check_launched_as_natively("rseq", expected,
                             {"dprintf rseq_tick,\"tick\\n\"", "break stop_point", "continue", "monitor btrace",
                              "info record", "delete", "break done", "continue", "continue"});
  check_attached_as_natively("rseq", expected);
}

TEST_CASE("inproc: a child of clone(CLONE_VM | SIGCHLD) shares its parent's memory: the recorder stays in it for the "
          "parent, all-stop and non-stop",
          "[e2e][btrace][guest]") {
  const bool non_stop = GENERATE(false, true);
  INFO((non_stop ? "non-stop" : "all-stop"));
  const std::string expected = native_case("clone-vm");
  REQUIRE_THAT(expected, Contains("clone-vm: child sum 5999995, exit 5; main same twice\n"));
  auto out = e2e::run_gdb({.program = "guest_cases",
                           // (Not a breakpoint after the clone: GDB, detaching the child it takes for a
                           // fork, takes its breakpoints out of the memory both share, as with gdbserver.)
                           .commands = {"break main", "continue", "record btrace", "catch syscall exit_group",
                                        "continue", "info record", "continue"},
                           .args = {"clone-vm"},
                           .init_commands = non_stop ? std::vector<std::string>{"set non-stop on"}
                                                     : std::vector<std::string>{},
                           .timeout = std::chrono::seconds(60),
                           .server_flags = {"--btrace=inproc"}});
  INFO(out.transcript());
  CHECK_FALSE(out.timed_out);
  // The parent's work, after the clone, recorded in the cache (not stepped for minutes).
  CHECK_THAT(out.gdb, ContainsRegex(R"(Recorded \d{4,} instructions in \d+ functions)"));
  CHECK(out.server_out == expected);
  CHECK_THAT(out.gdb, Contains("exited normally"));
}

TEST_CASE("inproc: a W^X JIT that writes code through one view of a memfd and runs it through another, never "
          "reprotected, runs the code it wrote (two threads at once, then one alone)",
          "[e2e][btrace][guest]") {
  const std::string expected = native_case("jit-views");
  REQUIRE_THAT(expected, Contains("wrong: main 0, thread 0\n") && Contains("alone: 9000 calls, wrong 0\n"));
  auto out = e2e::run_gdb({.program = "guest_cases",
                           .commands = {"break main", "continue", "record btrace", "break stop_point", "continue",
                                        "break done", "continue", "monitor btrace", "continue"},
                           .args = {"jit-views"},
                           .timeout = std::chrono::seconds(60),
                           .server_flags = {"--btrace=inproc"}});
  INFO(out.transcript());
  CHECK_THAT(out.gdb, Contains(", done () at "));
  // The lone thread's calls recorded in the cache (each change of the code translated afresh),
  // not stepped.
  CHECK_THAT(out.gdb, ContainsRegex(R"(: inproc, \d+ of \d+ branches kept, \d{5,} recorded)"));
  check_in_cache_as_natively(out, expected);
}

TEST_CASE("inproc: a JIT thread that reprotects and rewrites code while another thread runs it: the other thread "
          "never runs the old code (launch, non-stop, attach)",
          "[e2e][btrace][guest]") {
  const std::string expected = native_case("jit-reprotect");
  REQUIRE_THAT(expected, Contains("1000 versions, wrong 0\n"));
  check_launched_as_natively("jit-reprotect", expected, {"break done", "continue", "info record", "continue"});
  auto non_stop = e2e::run_gdb({.program = "guest_cases",
                                .commands = {"break main", "continue", "record btrace", "break done", "continue",
                                             "info record", "continue -a"},
                                .args = {"jit-reprotect"},
                                .init_commands = {"set non-stop on"},
                                .timeout = std::chrono::seconds(60),
                                .server_flags = {"--btrace=inproc"}});
  INFO(non_stop.transcript());
  CHECK_THAT(non_stop.gdb, ContainsRegex(R"(Recorded \d{4,} instructions in \d+ functions \(0 gaps\))"));
  CHECK(non_stop.server_out == expected);
  CHECK_THAT(non_stop.gdb, Contains("exited normally"));
  check_attached_as_natively("jit-reprotect", expected);
}

TEST_CASE("inproc: a 12 MB buffer holds 450,000 branches made between two stops, all read back, none lost",
          "[e2e][btrace][guest]") {
  auto out = e2e::run_gdb({.program = "guest_cases",
                           .commands = {"break main", "continue", "set record btrace bts buffer-size 12000000",
                                        "record btrace", "break stop_point", "continue", "break done", "continue",
                                        "monitor btrace", "info record", "continue"},
                           .args = {"branches"},
                           .timeout = std::chrono::seconds(90),
                           .server_flags = {"--btrace=inproc"}});
  INFO(out.transcript());
  // (The recorder's ring in the process holds what GDB's buffer does: 65,536 samples used to be
  // kept between two stops, whatever the buffer.)
  static const std::regex kept(R"(: inproc, (\d+) of \d+ branches kept, (\d+) recorded, 0 lost, 0 gaps)");
  std::smatch m;
  REQUIRE(std::regex_search(out.gdb, m, kept));
  CHECK(std::stol(m[1]) >= 450000);
  CHECK(m[1] == m[2]);
  CHECK_THAT(out.gdb, ContainsRegex(R"(Recorded \d{7,} instructions in \d{6,} functions \(0 gaps\))"));
  CHECK_THAT(out.gdb, Contains("exited normally"));
}

namespace {

// One GET of / at 127.0.0.1:port: whether a whole answer came within `limit`.
bool answers(int port, std::chrono::milliseconds limit) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    return false;
  }
  timeval tv{.tv_sec = limit.count() / 1000, .tv_usec = (limit.count() % 1000) * 1000};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<std::uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bool ok = ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
  const std::string request = "GET / HTTP/1.0\r\n\r\n";
  ok = ok && ::send(fd, request.data(), request.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(request.size());
  std::string reply;
  char buf[4096];
  for (ssize_t n = 0; ok && (n = ::recv(fd, buf, sizeof buf, 0)) != 0;) {
    ok = n > 0;
    if (ok) {
      reply.append(buf, static_cast<std::size_t>(n));
    }
  }
  ::close(fd);
  return ok && reply.starts_with("HTTP/1.0 200");
}

// What each thread of pid is doing: its state, signals pending and blocked (/proc), for a report.
std::string threads_of(pid_t pid) {
  std::string out;
  const std::filesystem::path tasks = "/proc/" + std::to_string(pid) + "/task";
  std::error_code ec;
  for (const auto& task : std::filesystem::directory_iterator(tasks, ec)) {
    std::ifstream in(task.path() / "status");
    out += "thread " + task.path().filename().string() + ":";
    for (std::string line; std::getline(in, line);) {
      for (const char* key : {"State:", "SigPnd:", "ShdPnd:", "SigBlk:"}) {
        if (line.starts_with(key)) {
          out += " " + line;
        }
      }
    }
    std::ifstream wchan(task.path() / "wchan");
    std::string w;
    std::getline(wchan, w);
    out += " wchan " + w + "\n";
  }
  return out;
}

}  // namespace

TEST_CASE("inproc: a live service under load (Python's threading HTTP server) goes through 50 cycles of attach, "
          "record, record stop and detach, and answers after each",
          "[e2e][btrace][guest][attach]") {
  e2e::Child service({.argv = {"/usr/bin/python3", HS_SOURCE_DIR "/test/e2e/quiet_http_server.py"}});
  static const std::regex serving(R"(serving on (\d+)\n)");
  std::smatch m;
  REQUIRE(service.pump_until(e2e::Clock::now() + std::chrono::seconds(10),
                             [&] { return std::regex_search(service.out(), m, serving); }));
  const int port = std::stoi(m[1]);
  REQUIRE(answers(port, std::chrono::seconds(5)));
  std::atomic<bool> done{false};
  std::atomic<int> served{0};
  std::jthread load([&] {
    while (!done) {
      served += answers(port, std::chrono::seconds(2)) ? 1 : 0;
    }
  });
  struct StopLoad {
    std::atomic<bool>& done;
    ~StopLoad() { done = true; }  // (before the jthread joins, on any way out)
  } stop_load{done};
  // Recording half a second each time: GDB interrupts itself (a timer of its Python's).
  const std::string interrupt_soon =
      "python import threading; threading.Timer(0.5, lambda: gdb.post_event(lambda: gdb.execute('interrupt'))).start()";
  int cycles = 0;
  for (; cycles < 50; ++cycles) {
    auto out = e2e::run_gdb({.commands = {"record btrace", interrupt_soon, "continue", "info record", "record stop",
                                          "detach"},
                             .transport = e2e::Transport::attach,
                             .attach_pid = service.pid(),
                             .init_commands = {"set sysroot /"},
                             .timeout = std::chrono::seconds(30),
                             .server_flags = {"--btrace=inproc"}});
    INFO("cycle " << cycles << "\n" << out.transcript());
    REQUIRE_FALSE(out.timed_out);
    CHECK_THAT(out.gdb, ContainsRegex(R"(Recorded \d+ instructions in \d+ functions)"));
    REQUIRE_THAT(out.gdb, Contains("detached]"));
    const bool answered = answers(port, std::chrono::seconds(5));
    INFO("the service's threads:\n" << threads_of(service.pid()));
    if (!answered) {
      const auto status = service.wait(e2e::Clock::now() + std::chrono::seconds(1));
      INFO("the service: " << (status ? e2e::describe_status(*status) : std::string("still running")));
      REQUIRE(answered);
    }
  }
  done = true;
  load.join();
  CHECK(cycles == 50);
  CHECK(served > 50);
  service.kill_and_reap();
}

namespace {

// guest_cases rate's chunks so far: (microseconds, checksum), in order.
std::vector<std::pair<long, std::string>> chunks_of(const std::string& out) {
  static const std::regex line(R"(chunk (\d+) (\d+)\n)");
  std::vector<std::pair<long, std::string>> out_chunks;
  for (auto it = std::sregex_iterator(out.begin(), out.end(), line); it != std::sregex_iterator(); ++it) {
    out_chunks.emplace_back(std::stol((*it)[1]), (*it)[2]);
  }
  return out_chunks;
}

long median_of(std::vector<std::pair<long, std::string>> c, std::size_t from, std::size_t to) {
  std::vector<long> us;
  for (std::size_t i = from; i < to && i < c.size(); ++i) {
    us.push_back(c[i].first);
  }
  std::sort(us.begin(), us.end());
  return us.empty() ? 0 : us[us.size() / 2];
}

// The pid of the server attached to `pid` (its command line ends with "--attach - PID"), 0 if none.
pid_t attached_server(pid_t pid) {
  for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
    const std::string name = entry.path().filename();
    if (name.find_first_not_of("0123456789") != std::string::npos) {
      continue;
    }
    std::ifstream in(entry.path() / "cmdline");
    std::string cmdline((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const std::string tail = std::string("--attach") + '\0' + "-" + '\0' + std::to_string(pid) + '\0';
    if (cmdline.starts_with(e2e::server_path() + '\0') && cmdline.ends_with(tail)) {
      return std::stoi(name);
    }
  }
  return 0;
}

}  // namespace

TEST_CASE("inproc: the server SIGKILLed while a program records: the program leaves the cache and runs on at its "
          "native rate, computing as before",
          "[e2e][btrace][guest][attach]") {
  e2e::Child program({.argv = {e2e::prog_path("guest_cases"), "rate"}});
  auto pump_to = [&](std::size_t n) {
    return program.pump_until(e2e::Clock::now() + std::chrono::seconds(30),
                              [&] { return chunks_of(program.out()).size() >= n; });
  };
  REQUIRE(pump_to(40));
  const long native = median_of(chunks_of(program.out()), 10, 40);
  const std::string checksum = chunks_of(program.out()).front().second;

  e2e::Child gdb({.argv = e2e::gdb_batch_argv(
                      {"-iex", "set sysroot /", "-ex",
                       "target remote | " + e2e::server_path() + " --btrace=inproc --attach - " +
                           std::to_string(program.pid()),
                       "-ex", "record btrace", "-ex", "echo recording\\n", "-ex", "continue"}),
                  .merge_stderr = true});
  REQUIRE(gdb.wait_for_text("recording\n", e2e::Clock::now() + std::chrono::seconds(20), true));
  const std::size_t recorded_from = chunks_of(program.out()).size() + 5;
  REQUIRE(pump_to(recorded_from + 20));
  const long recorded = median_of(chunks_of(program.out()), recorded_from, recorded_from + 20);
  const pid_t server = attached_server(program.pid());
  REQUIRE(server > 0);
  REQUIRE(::kill(server, SIGKILL) == 0);

  // Its threads leave the cache at their next return: at once, for a program that sorts.
  const std::size_t after_from = chunks_of(program.out()).size() + 10;
  REQUIRE(pump_to(after_from + 30));
  const auto chunks = chunks_of(program.out());
  const long after = median_of(chunks, after_from, after_from + 30);
  INFO("median chunk: native " << native << " us, recorded " << recorded << " us, after the server's death " << after
                               << " us");
  CHECK_FALSE(program.exited());
  CHECK(std::all_of(chunks.begin(), chunks.end(), [&](const auto& c) { return c.second == checksum; }));
  // (Recorded, the sorts are slower: the figure after says the cache is left only where it was.)
  if (recorded > native * 3 / 2) {
    CHECK(after < native * 5 / 4);
  } else {
    WARN("recording did not slow this program down enough to tell");
  }
  gdb.kill_and_reap();
  program.kill_and_reap();
}

namespace {

// Whether pid has ended (gone, or a zombie nobody reaped yet).
bool ended(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const auto close = stat.rfind(')');
  return stat.empty() || close == std::string::npos || stat.compare(close + 2, 1, "Z") == 0;
}

pid_t parent_of(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const auto close = stat.rfind(')');
  if (close == std::string::npos) {
    return 0;
  }
  std::istringstream rest(stat.substr(close + 2));
  char state = 0;
  pid_t ppid = 0;
  rest >> state >> ppid;
  return ppid;
}

}  // namespace

TEST_CASE("a program the server started dies with the server when it is SIGKILLed mid-recording, under each "
          "collector, as under gdbserver (PTRACE_O_EXITKILL)",
          "[e2e][btrace][guest][lifetime]") {
  const std::string collector = GENERATE("inproc", "soft", "step", "dbt");
  SKIP_IF_NOT_BUILT(collector);
  INFO("--btrace=" << collector);
  e2e::become_subreaper();
  const auto before = e2e::current_children();
  e2e::Child gdb({.argv = e2e::gdb_batch_argv(
                      {"-iex", "set sysroot /", "-ex",
                       "target remote | " + e2e::server_path() + " --btrace=" + collector + " - " +
                           e2e::prog_path("guest_cases") + " rate",
                       "-ex", "info inferiors", "-ex", "record btrace", "-ex", "echo recording\\n", "-ex",
                       "continue"}),
                  .merge_stderr = true});
  REQUIRE(gdb.wait_for_text("recording\n", e2e::Clock::now() + std::chrono::seconds(60), true));
  std::smatch m;
  const std::string text = gdb.out();
  REQUIRE(std::regex_search(text, m, std::regex(R"(process (\d+))")));
  const pid_t program = std::stoi(m[1]);
  const pid_t server = parent_of(program);
  REQUIRE(server > 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(500));  // recording, running
  REQUIRE_FALSE(ended(program));
  REQUIRE(::kill(server, SIGKILL) == 0);
  const auto deadline = e2e::Clock::now() + std::chrono::seconds(10);
  while (!ended(program) && e2e::Clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  CHECK(ended(program));
  gdb.kill_and_reap();
  e2e::kill_stray_children(before);
}
