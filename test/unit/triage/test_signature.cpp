// Crash signatures (server/triage/signature.hpp): names, not places; the C runtime's frames
// skipped; stable text.
#include <catch2/catch.hpp>

#include <csignal>

#include "server/triage/signature.hpp"

using server::triage::crash_signature;
using server::triage::FrameReport;
using server::triage::Outcome;

namespace {

FrameReport frame(const std::string& module, const std::string& function, std::uint64_t pc, int line = 0) {
  FrameReport f;
  f.pc = pc;
  f.where.module = module;
  f.where.function = function;
  f.where.line = line;
  return f;
}

Outcome died_of(int signo) {
  Outcome o;
  o.kind = Outcome::Kind::Signal;
  o.signo = signo;
  return o;
}

}  // namespace

TEST_CASE("signature: names and signal, not addresses, lines or paths", "[signature]") {
  const std::vector<FrameReport> here{frame("/build/a/prog", "consume", 0x1234, 39), frame("/build/a/prog", "main", 0x1300, 95),
                                      frame("/lib/x86_64-linux-gnu/libc.so.6", "__libc_start_call_main", 0x7f00)};
  const std::vector<FrameReport> rebuilt{frame("/other/dir/prog", "consume", 0x5555, 41), frame("/other/dir/prog", "main", 0x5600, 99),
                                         frame("/usr/lib/x86_64-linux-gnu/libc.so.6", "__libc_start_call_main", 0x7e00)};
  const auto a = crash_signature(died_of(SIGSEGV), here);
  CHECK(a.hash.size() == 12);
  CHECK(a.frames == std::vector<std::string>{"prog!consume", "prog!main", "libc.so.6!__libc_start_call_main"});
  CHECK(crash_signature(died_of(SIGSEGV), rebuilt).hash == a.hash);
  CHECK(crash_signature(died_of(SIGBUS), here).hash != a.hash);
  auto elsewhere = here;
  elsewhere[0].where.function = "produce";
  CHECK(crash_signature(died_of(SIGSEGV), elsewhere).hash != a.hash);
  Outcome exited;
  CHECK(crash_signature(exited, here).hash.empty());
}

TEST_CASE("signature: abort's frames and signal frames are not the crash", "[signature]") {
  const std::string libc = "/lib/x86_64-linux-gnu/libc.so.6";
  FrameReport handler_frame = frame("", "", 0x7fff);
  handler_frame.signal_frame = true;
  const std::vector<FrameReport> aborted{frame(libc, "__pthread_kill_implementation", 1), frame(libc, "raise", 2),
                                         frame(libc, "abort", 3), handler_frame, frame("/p/app", "validate", 4),
                                         frame("/p/app", "main", 5)};
  const auto s = crash_signature(died_of(SIGABRT), aborted);
  CHECK(s.frames == std::vector<std::string>{"app!validate", "app!main"});
  // A crash entirely inside the runtime names the runtime's frames.
  const auto inside = crash_signature(died_of(SIGSEGV), {frame(libc, "strlen", 1), frame(libc, "puts", 2)});
  CHECK(inside.frames == std::vector<std::string>{"libc.so.6!strlen", "libc.so.6!puts"});
  // No symbol, no module: still a signature.
  CHECK(crash_signature(died_of(SIGSEGV), {frame("", "", 0x10)}).frames == std::vector<std::string>{"?\?!??"});
}

TEST_CASE("signature: stripped code by its nearest symbol or its offset in the module, never ??", "[signature]") {
  FrameReport near = frame("/usr/lib/x86_64-linux-gnu/libffi.so.8.1.2", "", 0x7f12345678);
  near.where.nearest_symbol = "ffi_call";
  near.where.nearest_offset = 0x6a;
  near.where.module_offset = 0x7b2f;
  FrameReport bare = frame("/usr/lib/python3.11/lib-dynload/_ctypes.cpython-311-x86_64-linux-gnu.so", "", 0x7f0);
  bare.where.module_offset = 0x1d2e0;
  const auto s = crash_signature(died_of(SIGSEGV), {near, bare});
  CHECK(s.frames == std::vector<std::string>{"libffi.so.8.1.2!ffi_call+0x6a", "_ctypes.cpython-311-x86_64-linux-gnu.so+0x1d2e0"});
  // Loaded elsewhere in another run: other addresses, the same offsets.
  near.pc += 0x1000;
  bare.pc += 0x5000;
  CHECK(crash_signature(died_of(SIGSEGV), {near, bare}).hash == s.hash);
  bare.where.module_offset = 0x1d2f0;  // elsewhere in the module
  CHECK(crash_signature(died_of(SIGSEGV), {near, bare}).hash != s.hash);
}
