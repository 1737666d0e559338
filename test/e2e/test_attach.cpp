// --attach to a running test/progs/sleeper, stop it at a breakpoint, detach; afterwards the
// process must run on and the code must hold no int3 (0xCC) left by the server.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <cstring>
#include <fstream>
#include <iterator>
#include <map>
#include <optional>
#include <sstream>
#include <thread>
#include <vector>

#include "test/e2e/gdb_session.hpp"
#include "test/e2e/matchers.hpp"

using Catch::Matchers::Contains;
using e2e::ContainsRegex;

namespace {

// The bytes of the executable's file that are mapped at [addr, addr+len) in process `pid`.
std::optional<std::vector<unsigned char>> file_bytes_at(pid_t pid, const std::string& exe,
                                                        unsigned long addr, size_t len) {
  char real[4096];
  ssize_t n = ::readlink(exe.c_str(), real, sizeof real - 1);
  std::string exe_real = n > 0 ? std::string(real, static_cast<size_t>(n)) : exe;
  std::ifstream maps("/proc/" + std::to_string(pid) + "/maps");
  std::string line;
  while (std::getline(maps, line)) {
    std::istringstream is(line);
    std::string range, perms, offset, dev, inode, path;
    is >> range >> perms >> offset >> dev >> inode >> path;
    auto dash = range.find('-');
    unsigned long start = std::stoul(range.substr(0, dash), nullptr, 16);
    unsigned long end = std::stoul(range.substr(dash + 1), nullptr, 16);
    if (addr < start || addr + len > end || (path != exe && path != exe_real)) {
      continue;
    }
    std::ifstream f(path, std::ios::binary);
    f.seekg(static_cast<std::streamoff>(addr - start + std::stoul(offset, nullptr, 16)));
    std::vector<unsigned char> out(len);
    if (!f.read(reinterpret_cast<char*>(out.data()), static_cast<std::streamsize>(len))) {
      return std::nullopt;
    }
    return out;
  }
  return std::nullopt;
}

// Whether [addr, addr+len) of the running process is byte for byte the executable's file.
void check_code_is_the_files(pid_t pid, const std::string& exe, unsigned long addr, size_t len) {
  auto live = e2e::read_proc_mem(pid, addr, len);
  auto file = file_bytes_at(pid, exe, addr, len);
  REQUIRE(live.has_value());
  REQUIRE(file.has_value());
  CHECK(*live == *file);
}

std::string maps_of(pid_t pid) {
  std::ifstream maps("/proc/" + std::to_string(pid) + "/maps");
  return std::string(std::istreambuf_iterator<char>(maps), std::istreambuf_iterator<char>());
}

// Every executable mapping of the process (its range and path) with the bytes it holds.
std::map<std::string, std::vector<unsigned char>> executable_code(pid_t pid) {
  std::map<std::string, std::vector<unsigned char>> out;
  std::istringstream lines(maps_of(pid));
  std::string line;
  while (std::getline(lines, line)) {
    std::istringstream is(line);
    std::string range, perms, offset, dev, inode, path;
    is >> range >> perms >> offset >> dev >> inode >> path;
    if (perms.size() < 3 || perms[2] != 'x' || path.empty() || path[0] != '/') {
      continue;  // (the vDSO, vsyscall and anonymous code are the kernel's or the program's own)
    }
    const auto dash = range.find('-');
    const unsigned long start = std::stoul(range.substr(0, dash), nullptr, 16);
    const unsigned long end = std::stoul(range.substr(dash + 1), nullptr, 16);
    auto bytes = e2e::read_proc_mem(pid, start, end - start);
    out[range + " " + path] = bytes ? *bytes : std::vector<unsigned char>{};
  }
  return out;
}

std::optional<unsigned long> read_ticks(pid_t pid, unsigned long addr) {
  auto bytes = e2e::read_proc_mem(pid, addr, sizeof(unsigned long));
  if (!bytes) {
    return std::nullopt;
  }
  unsigned long v = 0;
  std::memcpy(&v, bytes->data(), sizeof v);
  return v;
}

}  // namespace

TEST_CASE("attach, break, bt, detach leaves the process running and intact", "[e2e][attach]") {
  const std::string exe = e2e::prog_path("sleeper");
  // A safety limit of 60 s in case everything else fails; the destructor kills it anyway.
  e2e::Child sleeper({.argv = {exe, "60"}});
  REQUIRE(sleeper.wait_for_text("pid=", e2e::Clock::now() + std::chrono::seconds(5), true));
  const pid_t pid = sleeper.pid();
  // Let the first tick() finish, so that `ticks > 0` holds at the breakpoint (it ticks every 10 ms).
  std::this_thread::sleep_for(std::chrono::milliseconds(50));

  auto out = e2e::run_gdb({.commands = {"info address tick", "info address ticks", "break tick",
                                        "continue", "bt", "print ticks > 0", "detach"},
                           .transport = e2e::Transport::attach,
                           .attach_pid = pid});
  INFO(out.transcript());
  CHECK_THAT(out.gdb, Contains("Breakpoint 1, tick () at"));
  CHECK_THAT(out.gdb, ContainsRegex(R"(#0  tick \(\) at .*sleeper\.c)"));
  CHECK_THAT(out.gdb, ContainsRegex(R"(#1  0x[0-9a-f]+ in main \(argc=2, argv=0x[0-9a-f]+\))"));
  CHECK_THAT(out.gdb, ContainsRegex(R"(\$1 = 1\n)"));
  CHECK_THAT(out.gdb, Contains("[Inferior 1 (process " + std::to_string(pid) + ") detached]"));
  CHECK_THAT(out.server_err, Contains("Detaching from process " + std::to_string(pid)));

  // Still alive and not left in a ptrace stop.
  char state = e2e::proc_state(pid);
  INFO("process state after detach: " << state);
  REQUIRE(state != '?');
  CHECK(state != 't');
  CHECK(state != 'T');
  CHECK(state != 'Z');

  // Its counter advances.
  auto ticks_addr = e2e::find_hex_after(out.gdb, "Symbol \"ticks\" is static storage at address");
  REQUIRE(ticks_addr.has_value());
  auto before = read_ticks(pid, *ticks_addr);
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  auto after = read_ticks(pid, *ticks_addr);
  REQUIRE(before.has_value());
  REQUIRE(after.has_value());
  CHECK(*after > *before);

  // No int3 left: the code matches the file, at the breakpoint and over the whole function.
  auto bp_addr = e2e::find_hex_after(out.gdb, "Breakpoint 1 at");
  auto fn_addr = e2e::find_hex_after(out.gdb, "Symbol \"tick\" is a function at address");
  REQUIRE(bp_addr.has_value());
  REQUIRE(fn_addr.has_value());
  auto at_bp = e2e::read_proc_mem(pid, *bp_addr, 1);
  REQUIRE(at_bp.has_value());
  CHECK(static_cast<int>((*at_bp)[0]) != 0xCC);
  check_code_is_the_files(pid, exe, *fn_addr, 16);
}

TEST_CASE("attach and detach without stopping anywhere", "[e2e][attach]") {
  e2e::Child sleeper({.argv = {e2e::prog_path("sleeper"), "60"}});
  REQUIRE(sleeper.wait_for_text("pid=", e2e::Clock::now() + std::chrono::seconds(5), true));
  const pid_t pid = sleeper.pid();
  auto out = e2e::run_gdb({.commands = {"info threads", "detach"},
                           .transport = e2e::Transport::attach,
                           .attach_pid = pid});
  INFO(out.transcript());
  CHECK_THAT(out.gdb, ContainsRegex(R"(\* 1 +Thread )" + std::to_string(pid)));
  CHECK_THAT(out.gdb, Contains("[Inferior 1 (process " + std::to_string(pid) + ") detached]"));
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  char state = e2e::proc_state(pid);
  INFO("process state after detach: " << state);
  CHECK((state == 'S' || state == 'R'));
}

TEST_CASE("attach to four running threads, trace them, detach: they finish right, no int3 left",
          "[e2e][attach][btrace]") {
  const std::string collector = GENERATE("step", "soft", "inproc");
  INFO("collector " << collector);
  const std::string exe = e2e::prog_path("workers");
  // Long enough to outlive the session (single-stepping four threads takes a few seconds),
  // so that its code can be read back after the detach.
  e2e::Child workers({.argv = {exe, "8"}});
  REQUIRE(workers.wait_for_text("pid=", e2e::Clock::now() + std::chrono::seconds(5), true));
  const pid_t pid = workers.pid();
  const auto code_before = executable_code(pid);
  auto out = e2e::run_gdb({.commands = {"info address checksum", "record btrace", "break checksum", "continue",
                                        "continue", "info record", "record function-call-history /c", "delete",
                                        "record stop", "detach"},
                           .transport = e2e::Transport::attach,
                           .attach_pid = pid,
                           .server_flags = {"--btrace=" + collector}});
  INFO(out.transcript());
  CHECK_THAT(out.gdb, ContainsRegex(R"(Thread .* hit Breakpoint 1, checksum \(seed=\d\))"));
  CHECK_THAT(out.gdb, ContainsRegex(R"(Recorded \d+ instructions in \d+ functions \(0 gaps\) for thread)"));
  CHECK_THAT(out.gdb, ContainsRegex(R"(\d+\t\s*checksum\n)"));
  CHECK_THAT(out.gdb, Contains("Process record is stopped"));
  CHECK_THAT(out.gdb, Contains("[Inferior 1 (process " + std::to_string(pid) + ") detached]"));
  // Its code is the file's again, then it runs to its end and says its results held.
  auto fn = e2e::find_hex_after(out.gdb, "Symbol \"checksum\" is a function at address");
  REQUIRE(fn.has_value());
  check_code_is_the_files(pid, exe, *fn, 64);
  // Every executable mapping it had holds the same bytes; the in-process recorder came in with
  // the program's dlopen and went out with its dlclose.
  const auto code_after = executable_code(pid);
  for (const auto& [mapping, bytes] : code_before) {
    INFO(mapping);
    REQUIRE(code_after.count(mapping) == 1);
    CHECK(code_after.at(mapping) == bytes);
  }
  CHECK(maps_of(pid).find("libhindsight-recorder") == std::string::npos);
  const auto status = workers.wait(e2e::Clock::now() + std::chrono::seconds(20));
  INFO("workers: " << e2e::describe_status(status) << "\n" << workers.out());
  CHECK(e2e::exit_code(status) == 0);
  CHECK_THAT(workers.out(), Contains("workers ok"));
}

TEST_CASE("--attach with GDB in non-stop: the leader reported stopped, the other threads run on, as gdbserver",
          "[e2e][attach][non-stop]") {
  // GDB's all-stop on a non-stop target stops the running threads with vCont;t itself.
  const bool all_stop_on_top = GENERATE(false, true);
  INFO((all_stop_on_top ? "set non-stop off, maint set target-non-stop on" : "set non-stop on"));
  e2e::Child workers({.argv = {e2e::prog_path("workers"), "4"}});
  REQUIRE(workers.wait_for_text("threads=4", e2e::Clock::now() + std::chrono::seconds(5), true));
  const pid_t pid = workers.pid();
  const std::vector<std::string> mode =
      all_stop_on_top ? std::vector<std::string>{"set non-stop off", "maint set target-non-stop on"}
                      : std::vector<std::string>{"set non-stop on"};
  auto out = e2e::run_gdb({.commands = {"info threads", "thread 5", "detach"},
                           .transport = e2e::Transport::attach,
                           .attach_pid = pid,
                           .init_commands = mode});
  INFO(out.transcript());
  CHECK_THAT(out.gdb, !Contains("internal-error"));
  CHECK_THAT(out.gdb, ContainsRegex(R"(\[Switching to thread 5 \(Thread )" + std::to_string(pid) + R"(\.\d+\)\])"));
  if (all_stop_on_top) {
    CHECK_THAT(out.gdb, !Contains("(running)"));
  } else {
    CHECK_THAT(out.gdb, ContainsRegex(R"(\* 1 +Thread )" + std::to_string(pid) + R"(\.\d+ "workers" [^\n]*\n)"));
    CHECK_THAT(out.gdb, ContainsRegex(R"(\n +5 +Thread \d+\.\d+ "workers" \(running\))"));
  }
  CHECK_THAT(out.gdb, Contains("[Inferior 1 (process " + std::to_string(pid) + ") detached]"));
  const auto status = workers.wait(e2e::Clock::now() + std::chrono::seconds(20));
  INFO("workers: " << e2e::describe_status(status) << "\n" << workers.out());
  CHECK(e2e::exit_code(status) == 0);
  CHECK_THAT(workers.out(), Contains("workers ok"));
}
