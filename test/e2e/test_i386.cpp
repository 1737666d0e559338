// i386 programs (test/progs built -m32) under a 64-bit server, with real GDB: what gdbserver does
// for them. Where this kernel refuses 32-bit programs the cases skip, saying so, and the VM lane
// (./test.sh's vm:e2e step, through test/vm/run.sh) runs them in a guest on Debian's own kernel.
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "test/e2e/gdb_session.hpp"
#include "test/e2e/i386_kernel.hpp"
#include "test/e2e/matchers.hpp"
#include "test/support/debug_registers_probe.hpp"
#include "test/support/scoped_env.hpp"
#include "test/support/skip.hpp"

using Catch::Matchers::Contains;
using e2e::ContainsRegex;

namespace {

// Why the i386 cases cannot run here; empty when they can.
std::string i386_problem() {
  switch (e2e::i386_programs()) {
    case e2e::I386Programs::Run:
      return {};
    case e2e::I386Programs::Refused:
      return "this kernel refuses 32-bit programs (IA-32 emulation is off): the VM lane runs these cases";
    case e2e::I386Programs::Broken:
      return "simple_m32 does not run here as it should (exit 7)";
    case e2e::I386Programs::NotBuilt:
      break;
  }
  return "no -m32 test programs: the build found no 32-bit toolchain (gcc-multilib)";
}

#define REQUIRE_I386()                 \
  do {                                 \
    if (!i386_problem().empty()) {     \
      HS_SKIP(i386_problem());         \
    }                                  \
  } while (0)

// --btrace=dbt and triage are Hindsight's own.
#define REQUIRE_HINDSIGHT()                                                                       \
  do {                                                                                            \
    if (e2e::server_path().find("gdbserver") != std::string::npos) {                              \
      HS_SKIP("Hindsight's own: the server under test is " + e2e::server_path());                 \
    }                                                                                             \
  } while (0)

e2e::SessionResult session(const std::string& program, std::vector<std::string> commands,
                           std::vector<std::string> args = {}, std::vector<std::string> server_flags = {}) {
  return e2e::run_gdb({.program = program, .commands = std::move(commands), .args = std::move(args),
                       .timeout = std::chrono::seconds(60), .server_flags = std::move(server_flags)});
}

}  // namespace

TEST_CASE("i386: breakpoints, registers by i386 names, writes, calls, finish, next and step", "[e2e][i386]") {
  REQUIRE_I386();
  auto out = session("simple_m32", {"show architecture", "break square", "continue", "info registers eip",
                                    "print sizeof(void *)", "print $sp == $esp", "set var $ecx = 0x12345678",
                                    "print/x $ecx", "print/x $orig_eax", "print $xmm7.v4_int32[0]", "print $st0",
                                    "finish", "next", "next", "next", "step", "print x", "bt", "delete", "print square(9)",
                                    "continue"});
  INFO(out.transcript());
  CHECK_THAT(out.gdb, Contains("(currently \"i386\")"));
  CHECK_THAT(out.gdb, Contains("Breakpoint 1, square (x=1)"));
  CHECK_THAT(out.gdb, ContainsRegex(R"(eip\s+0x[0-9a-f]{8}\s+0x[0-9a-f]{8} <square\+\d+>)"));
  CHECK_THAT(out.gdb, Contains("$1 = 4"));
  CHECK_THAT(out.gdb, Contains("$2 = 1"));
  CHECK_THAT(out.gdb, Contains("$3 = 0x12345678"));
  CHECK_THAT(out.gdb, Contains("$4 = 0xffffffff"));  // not in a system call
  CHECK_THAT(out.gdb, Contains("Value returned is $7 = 1"));
  CHECK_THAT(out.gdb, Contains("square (x=2)"));
  CHECK_THAT(out.gdb, Contains("$8 = 2"));
  CHECK_THAT(out.gdb, ContainsRegex(R"(#1  0x[0-9a-f]{8} in sum_squares \(n=4\))"));
  CHECK_THAT(out.gdb, Contains("= 81"));
  CHECK_THAT(out.gdb, Contains("exited with code 07"));
}

TEST_CASE("i386: a target-side condition reads the argument by i386 register numbers; info os", "[e2e][i386]") {
  REQUIRE_I386();
  // square() runs for x = 1..4; the condition (x on the stack, through ebp: register 5 here,
  // rdi's number in 64-bit code) holds for x == 3 alone.
  auto out = e2e::run_gdb({.program = "simple_m32",
                           .commands = {"set breakpoint condition-evaluation target", "break square if x == 3",
                                        "continue", "print x", "info breakpoints", "info os processes", "continue"},
                           .remote_debug = true,
                           .timeout = std::chrono::seconds(60)});
  INFO(out.transcript());
  CHECK_THAT(out.server_err, ContainsRegex(R"(<- \$Z0,[0-9a-f]+,1;X[0-9a-f]+,[0-9a-f]+)"));
  CHECK_THAT(out.gdb, Contains("Breakpoint 1, square (x=3)"));
  CHECK_THAT(out.gdb, Contains("breakpoint already hit 1 time"));  // GDB saw one hit of four
  CHECK_THAT(out.gdb, ContainsRegex(R"(\n\d+ +\S+ +\S*simple_m32)"));  // its own line in info os
  CHECK_THAT(out.gdb, ContainsRegex(R"(\[Inferior 1 \(process \d+\) exited with code 07\])"));
}

TEST_CASE("i386: a tracepoint collects i386 registers and the stack; a while-stepping frame one instruction on",
          "[e2e][i386][trace]") {
  REQUIRE_I386();
  auto out = session("simple_m32",
                     {"break main", "continue",
                      e2e::source_script({"trace square", "actions", "collect $regs, x", "while-stepping 1",
                                          "collect x", "end", "end"}),
                      "break sum_squares", "tstart", "continue", "finish", "tstop", "tstatus", "tfind 0",
                      "print x", "info registers eip", "print $sp == $esp", "tfind 1", "print x", "print/x $pc",
                      "tfind none", "delete", "continue"});
  INFO(out.transcript());
  CHECK_THAT(out.gdb, Contains("Value returned is $1 = 30"));  // (finish)
  CHECK_THAT(out.gdb, Contains("Collected 8 trace frames."));  // 4 hits, a step after each
  CHECK_THAT(out.gdb, Contains("$2 = 1\n"));
  CHECK_THAT(out.gdb, ContainsRegex(R"(eip\s+0x[0-9a-f]{8}\s+0x[0-9a-f]{8} <square\+\d+>)"));
  CHECK_THAT(out.gdb, Contains("$3 = 1\n"));
  CHECK_THAT(out.gdb, Contains("$4 = 1\n"));  // x, collected at the step (and ebp with it)
  const auto hit = e2e::find_hex_after(out.gdb, "eip            ");
  const auto step = e2e::find_hex_after(out.gdb, "$5 = ");
  REQUIRE(hit.has_value());
  REQUIRE(step.has_value());
  CHECK(*step > *hit);  // one instruction on
  CHECK_THAT(out.gdb, Contains("exited with code 07"));
}

TEST_CASE("i386: threads, each stopping at its breakpoint", "[e2e][i386][threads]") {
  REQUIRE_I386();
  auto out = session("mt_m32", {"break hit", "continue", "info threads", "continue", "continue"}, {"pair"});
  INFO(out.transcript());
  CHECK_THAT(out.gdb, ContainsRegex(R"(Thread \d+ "mt_m32" hit Breakpoint 1, hit \(id=[12]\))"));
  CHECK_THAT(out.gdb, ContainsRegex(R"(\n\* \d+\s+Thread \d+\.\d+ "mt_m32" hit)"));
  CHECK_THAT(out.server_out, Contains("pair done"));
  CHECK_THAT(out.gdb, Contains("exited normally"));
}

TEST_CASE("i386: a fault's $_siginfo in the program's own layout, and its backtrace", "[e2e][i386][signals]") {
  REQUIRE_I386();
  auto out = session("crash_m32", {"continue", "print $_siginfo.si_signo", "print $_siginfo._sifields._sigfault.si_addr",
                                   "bt", "kill"});
  INFO(out.transcript());
  CHECK_THAT(out.gdb, Contains("Program received signal SIGSEGV"));
  CHECK_THAT(out.gdb, Contains("$1 = 11"));
  CHECK_THAT(out.gdb, Contains("$2 = (void *) 0x8"));  // value's offset in the record: two 4-byte longs
  CHECK_THAT(out.gdb, Contains("in update (r="));
  CHECK_THAT(out.gdb, Contains("in main ()"));
}

TEST_CASE("i386: thread-local storage in the program and in a library, through libthread_db", "[e2e][i386][tls]") {
  REQUIRE_I386();
  auto out = session("tls_m32", {"break all_set", "continue", "print tls_main", "print tls_lib", "info sharedlibrary"});
  INFO(out.transcript());
  CHECK_THAT(out.gdb, Contains("$1 = 1"));
  CHECK_THAT(out.gdb, Contains("$2 = 2"));
  CHECK_THAT(out.gdb, ContainsRegex(R"(0x[0-9a-f]{8}\s+0x[0-9a-f]{8}\s+Yes.*libc\.so\.6)"));
  CHECK_THAT(out.gdb, Contains("libtls_lib_m32.so"));
}

TEST_CASE("i386: a hardware watchpoint and catch syscall by i386 number", "[e2e][i386][watch][syscalls]") {
  REQUIRE_I386();
  if (auto problem = test_support::debug_register_problem(); !problem.empty()) {
    HS_SKIP(problem);
  }
  auto out = session("simple_m32", {"break sum_squares", "continue", "watch global_counter", "continue", "delete",
                                    "catch syscall write", "continue", "continue", "delete", "continue"});
  INFO(out.transcript());
  CHECK_THAT(out.gdb, Contains("Hardware watchpoint 2: global_counter"));
  CHECK_THAT(out.gdb, Contains("Old value = 0"));
  CHECK_THAT(out.gdb, Contains("New value = 1"));
  CHECK_THAT(out.gdb, Contains("(syscall 'write' [4])"));
  CHECK_THAT(out.gdb, Contains("(call to syscall write)"));
  CHECK_THAT(out.gdb, Contains("(returned from syscall write)"));
  CHECK_THAT(out.gdb, Contains("exited with code 07"));
}

TEST_CASE("i386: exec from 64 to 32 bits and back: GDB is told the new architecture", "[e2e][i386][exec]") {
  REQUIRE_I386();
  struct Exec {
    const char* from;
    const char* to;
    const char* to_arch;
    const char* pc_reg;
  };
  static constexpr Exec kExecs[] = {{"execer", "simple_m32", "i386", "eip"},
                                    {"execer_m32", "simple", "i386:x86-64", "rip"}};
  const auto [from, to, to_arch, pc_reg] = kExecs[GENERATE(0, 1)];
  INFO(from << " execs " << to);
  auto out = session(from, {"catch exec", "continue", "show architecture", "break square", "continue",
                            std::string("info registers ") + pc_reg, "bt", "delete", "continue"},
                     {e2e::prog_path(to)});
  INFO(out.transcript());
  CHECK_THAT(out.gdb, Contains("is executing new program"));
  CHECK_THAT(out.gdb, Contains(std::string("(currently \"") + to_arch + "\")"));
  CHECK_THAT(out.gdb, Contains("Breakpoint 2, square (x=1)"));
  CHECK_THAT(out.gdb, ContainsRegex(std::string(pc_reg) + R"(\s+0x[0-9a-f]+\s+0x[0-9a-f]+ <square\+\d+>)"));
  CHECK_THAT(out.gdb, Contains("in main ()"));
  CHECK_THAT(out.gdb, Contains("exited with code 07"));
}

TEST_CASE("i386: a fork child runs free of our breakpoints", "[e2e][i386][fork]") {
  REQUIRE_I386();
  auto out = session("forker_m32", {"break work", "continue", "continue", "continue"});
  INFO(out.transcript());
  CHECK_THAT(out.gdb, Contains("Breakpoint 1, work"));
  CHECK_THAT(out.gdb, Contains("exited normally"));
}

// The collector a case names, skipped where this build lacks it.
#define REQUIRE_I386_COLLECTOR(collector)                                                           \
  do {                                                                                              \
    if ((collector) == "dbt") {                                                                     \
      REQUIRE_HINDSIGHT();                                                                          \
      if (!HS_DBT_I386_BUILT) {                                                                     \
        HS_SKIP("the dbt recorder for i386 programs is not built (needs valgrind and gcc-multilib)"); \
      }                                                                                             \
    }                                                                                               \
  } while (0)

TEST_CASE("i386: record btrace, the call history and reverse-step", "[e2e][i386][btrace]") {
  REQUIRE_I386();
  const std::string collector = GENERATE(values<std::string>({"soft", "step", "dbt"}));
  INFO("collector " << collector);
  REQUIRE_I386_COLLECTOR(collector);
  auto out = session("simple_m32", {"break sum_squares", "continue", "record btrace", "break square", "continue",
                                    "continue", "record function-call-history", "info record", "reverse-step",
                                    "record goto begin", "info registers eip", "record goto end", "delete", "continue"},
                     {}, {"--btrace=" + collector});
  INFO(out.transcript());
  // (PIC i386 code finds its GOT through a thunk: its call shows as a function of its own)
  CHECK_THAT(out.gdb, ContainsRegex(R"(\n1\tsum_squares\n2\tsquare\n3\t__x86\.get_pc_thunk\.ax\n4\tsquare\n)"
                                    R"(5\tsum_squares\n6\tsquare\n)"));
  CHECK_THAT(out.gdb, ContainsRegex(R"(Recorded \d+ instructions in \d+ functions \(0 gaps\))"));
  CHECK_THAT(out.gdb, Contains("sum_squares (n=<unavailable>)"));
  CHECK_THAT(out.gdb, ContainsRegex(R"(eip +0x[0-9a-f]+ +0x[0-9a-f]+ <sum_squares\+\d+>)"));
  CHECK_THAT(out.gdb, Contains("exited with code 07"));  // and it ran on to its own end
  CHECK_THAT(out.server_err, !Contains("instead"));      // recorded by the collector it names
}

TEST_CASE("i386: where only the 64-bit recorder is built, --btrace=dbt records in software, saying why",
          "[e2e][i386][btrace]") {
  REQUIRE_I386();
  REQUIRE_I386_COLLECTOR(std::string("dbt"));
  // A VALGRIND_LIB folder like the build's, without the i386 recorder.
  const char* given = std::getenv("HINDSIGHT_DBT_LIB");
  const std::filesystem::path built = given != nullptr ? given : HS_DBT_LIB_DIR;
  const std::filesystem::path lib = "/tmp/hindsight-dbt-lib-amd64-only-" + std::to_string(::getpid());
  std::filesystem::remove_all(lib);
  std::filesystem::create_directories(lib);
  for (const auto& entry : std::filesystem::directory_iterator(built)) {
    if (entry.path().filename() != "hsdbt-x86-linux") {
      std::filesystem::create_symlink(std::filesystem::canonical(entry.path()), lib / entry.path().filename());
    }
  }
  e2e::SessionResult out;
  {
    const test_support::ScopedEnv env("HINDSIGHT_DBT_LIB", lib.string());
    out = session("simple_m32", {"break square", "continue", "record btrace", "continue", "info record"}, {},
                  {"--btrace=dbt"});
  }
  std::filesystem::remove_all(lib);
  INFO(out.transcript());
  CHECK_THAT(out.server_err, Contains("the dbt recorder for i386 programs is not built (needs gcc-multilib"));
  CHECK_THAT(out.server_err, Contains("recording with the software tracer instead (--btrace=soft)"));
  CHECK_THAT(out.gdb, ContainsRegex(R"(Recorded \d+ instructions in \d+ functions \(0 gaps\))"));
}

TEST_CASE("i386: tracing across a signal handler keeps the history whole", "[e2e][i386][btrace][signals]") {
  REQUIRE_I386();
  const std::string collector = GENERATE(values<std::string>({"soft", "step", "dbt"}));
  INFO("collector " << collector);
  REQUIRE_I386_COLLECTOR(collector);
  auto out = session("calls_m32", {"break main", "continue", "record btrace", "break done", "continue", "continue",
                                   "info record", "record function-call-history /c"},
                     {"signal"}, {"--btrace=" + collector});
  INFO(out.transcript());
  CHECK_THAT(out.gdb, Contains("Program received signal SIGUSR1"));
  CHECK_THAT(out.gdb, Contains("Breakpoint 2, done () at"));
  CHECK_THAT(out.gdb, ContainsRegex(R"(Recorded \d+ instructions in \d+ functions \(0 gaps\))"));
  // The handler returns through the i386 sigreturn trampoline: the vDSO's, or under Valgrind
  // its own, which no symbol names.
  const std::string trampoline = collector == "dbt" ? R"(\?\?)" : "__kernel_sigreturn";
  CHECK_THAT(out.gdb, ContainsRegex(R"(\d+\t\s+leaf\n\d+\t\s+handler\n\d+\t\s+)" + trampoline + "\n"));
}

TEST_CASE("i386: triage: the fault address in the program's own siginfo, i386 registers, the unwound stack, "
          "the calls that led there",
          "[e2e][i386][triage]") {
  REQUIRE_I386();
  REQUIRE_HINDSIGHT();
  const std::string collector = GENERATE(values<std::string>({"soft", "dbt"}));
  INFO("collector " << collector);
  REQUIRE_I386_COLLECTOR(collector);
  const std::string json_path = "/tmp/hindsight-i386-triage-" + std::to_string(::getpid()) + ".json";
  // soft: ~1 s here, ~40 s in the VM lane's emulated CPU.
  e2e::Child triage({.argv = {e2e::server_path(), "triage", "--btrace=" + collector, "--json=" + json_path, "--",
                              e2e::prog_path("crash_m32")},
                     .merge_stderr = true});
  const auto status = triage.wait(e2e::Clock::now() + std::chrono::seconds(150));
  INFO(triage.out());
  CHECK(e2e::exit_code(status) == 128 + SIGSEGV);
  CHECK_THAT(triage.out(), Contains("recorded with " + collector));
  CHECK_THAT(triage.out(), Contains("died of SIGSEGV (SEGV_MAPERR: address not mapped to object) at address 0x8"));
  // Its registers by their i386 names, its stack unwound from the CFI (libdw's i386 backend).
  // (Valgrind loads the program elsewhere than the kernel does)
  CHECK_THAT(triage.out(), ContainsRegex(R"(eip 0x00000000[0-9a-f]{8}\s+eflags)"));
  CHECK_THAT(triage.out(), !Contains("rip"));
  CHECK_THAT(triage.out(), ContainsRegex(R"(#0  0x[0-9a-f]{16} in store \S*crash\.c:14\n)"
                                         R"(\s+#1  0x[0-9a-f]{16} in update \S*crash\.c:\d+\n)"));
  CHECK_THAT(triage.out(), ContainsRegex(R"(#\d+\s+0x[0-9a-f]{16} in main \S*crash\.c:\d+)"));
  CHECK_THAT(triage.out(), ContainsRegex(R"(#\d+\s+0x[0-9a-f]{16} in _start from crash_m32)"));
  // The calls that led there, decoded as i386 code: through the PLT (named from .rel.plt) into
  // libc and back, then main -> update -> store.
  std::ifstream in(json_path);
  const auto report = nlohmann::json::parse(in, nullptr, false);
  std::filesystem::remove(json_path);
  REQUIRE(report.is_object());
  std::vector<std::string> calls;
  for (const auto& th : report["threads"]) {
    if (th.value("crashed", false)) {
      for (const auto& c : th["history"]["calls"]) {
        calls.push_back(c.value("function", ""));
      }
    }
  }
  INFO("calls: " << nlohmann::json(calls).dump());
  // ... -> update, -> __x86.get_pc_thunk.ax, <- update, -> store (PIC code's thunk between)
  REQUIRE(calls.size() >= 4);
  CHECK(calls.back() == "store");
  CHECK(std::find(calls.end() - 4, calls.end(), "update") != calls.end());
  CHECK(std::find(calls.begin(), calls.end(), "fflush@plt") != calls.end());
}

TEST_CASE("i386: attach, break, backtrace, detach: it runs on with no int3 left", "[e2e][i386][attach]") {
  REQUIRE_I386();
  e2e::Child sleeper({.argv = {e2e::prog_path("sleeper_m32"), "60"}});
  REQUIRE(sleeper.wait_for_text("pid=", e2e::Clock::now() + std::chrono::seconds(10), true));
  const pid_t pid = sleeper.pid();
  std::this_thread::sleep_for(std::chrono::milliseconds(50));  // a first tick() done
  auto out = e2e::run_gdb({.commands = {"show architecture", "break tick", "continue", "bt", "print ticks > 0",
                                        "detach"},
                           .transport = e2e::Transport::attach,
                           .attach_pid = pid,
                           .timeout = std::chrono::seconds(60)});
  INFO(out.transcript());
  CHECK_THAT(out.gdb, Contains("(currently \"i386\")"));
  CHECK_THAT(out.gdb, Contains("Breakpoint 1, tick () at"));
  CHECK_THAT(out.gdb, ContainsRegex(R"(#1  0x[0-9a-f]{8} in main \(argc=2, argv=0x[0-9a-f]{8}\))"));
  CHECK_THAT(out.gdb, Contains("$1 = 1"));
  CHECK_THAT(out.gdb, Contains("[Inferior 1 (process " + std::to_string(pid) + ") detached]"));
  const char state = e2e::proc_state(pid);
  INFO("state after detach: " << state);
  CHECK(state != 't');
  CHECK(state != 'T');
  CHECK(state != 'Z');
  auto bp = e2e::find_hex_after(out.gdb, "Breakpoint 1 at");
  REQUIRE(bp.has_value());
  auto byte = e2e::read_proc_mem(pid, *bp, 1);
  REQUIRE(byte.has_value());
  CHECK(static_cast<int>((*byte)[0]) != 0xCC);
}

TEST_CASE("i386: range stepping runs 32-bit straight-line code to an int3, one line per next",
          "[e2e][i386][range-stepping]") {
  REQUIRE_I386();
  std::vector<std::string> commands = {"break main", "continue", "handle SIGALRM nostop noprint pass"};
  commands.insert(commands.end(), 9, "next");
  commands.push_back("continue");
  auto out = e2e::run_gdb({.program = "ranges_m32", .commands = commands, .remote_debug = true,
                           .timeout = std::chrono::seconds(60), .server_flags = {"--debug=ptrace"}});
  INFO(out.transcript().substr(0, 20000));
  CHECK_THAT(out.gdb, ContainsRegex(R"(\n\d+\s+total \+= twice\(3\); /\* range: a call \*/\n)"
                                    R"(\d+\s+for \(long i = 0;[^\n]*\n)"
                                    R"(\d+\s+if \(total > 1000\)[^\n]*\n)"));
  CHECK_THAT(out.gdb, !Contains("twice (v=3)"));
  CHECK_THAT(out.gdb, Contains("exited normally"));
  CHECK_THAT(out.server_out, Contains("total=8 ticks>=5:1 skipped=0"));
  CHECK(e2e::occurrences(out.server_err, "vCont;r") >= 6);
  CHECK(e2e::occurrences(out.server_err, "of its range to an int3") >= 4);
}

TEST_CASE("i386: non-stop with displaced stepping: GDB steps each thread off its breakpoint in a copy",
          "[e2e][i386][non-stop]") {
  REQUIRE_I386();
  auto out = e2e::run_gdb({.program = "mt_m32",
                           .commands = {"break hit", "set debug displaced on", "continue -a", "shell sleep 1",
                                        "continue -a", "shell sleep 1", "continue -a", "shell sleep 1"},
                           .args = {"pair"},
                           .init_commands = {"set non-stop on", "set displaced-stepping on"},
                           .timeout = std::chrono::seconds(60)});
  INFO(out.transcript());
  CHECK_THAT(out.gdb, Contains("i386_displaced_step_copy_insn"));
  CHECK_THAT(out.gdb, ContainsRegex(R"(hit Breakpoint 1, hit \(id=1\))"));
  CHECK_THAT(out.gdb, ContainsRegex(R"(hit Breakpoint 1, hit \(id=2\))"));
  CHECK_THAT(out.server_out, Contains("pair done"));
  CHECK_THAT(out.gdb, Contains("exited normally"));
}
