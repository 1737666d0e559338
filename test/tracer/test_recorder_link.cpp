// The in-process recorder brought into a running program by the server's side of it
// (tracer/linux/recorder_link.hpp): the thread moved into the code cache where it was stopped
// (inside nanosleep), its branches recorded with no stop, moved back out to the program's own
// code, and the library taken out, the program running on to its normal end.
#include <sys/syscall.h>
#include <sys/wait.h>

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <set>
#include <span>
#include <string>

#include "arch/x86/instruction_length.hpp"
#include "arch/x86/register_layout.hpp"
#include "test/support/skip.hpp"
#include "test/tracer/attached_callee.hpp"
#include "test/tracer/elf_symbols.hpp"
#include "test/tracer/live_support.hpp"
#include "tracer/linux/recorder_link.hpp"
#include "tracer/linux/syscall_restart.hpp"

using namespace test_tracer;

namespace {

// The recorder mapped into the callee, with system calls on its main thread.
tracer::RecorderLink recorder_in(AttachedCallee& callee) {
  auto& kernel = callee.kernel();
  auto link = tracer::RecorderLink::load(kernel, callee.pid(), callee.pid(), RECORDER_LIB);
  INFO((link ? std::string("loaded") : link.error().message()));
  REQUIRE(link.ok());
  return std::move(*link);
}

// The callee's main thread runs on its own for `ms` (nanosleep's rounds), then is stopped
// wherever it is.
void run_then_stop(AttachedCallee& callee, int ms) {
  auto& kernel = callee.kernel();
  REQUIRE(kernel.resume(callee.pid(), false, 0).ok());
  ::usleep(ms * 1000);
  REQUIRE(kernel.tgkill(callee.pid(), callee.pid(), SIGSTOP).ok());
  auto st = kernel.wait_for(callee.pid());
  REQUIRE(st.ok());
  REQUIRE(WIFSTOPPED(*st));
}

}  // namespace

TEST_CASE("recorder link: an attached program's thread records in the cache and leaves it for its own code",
          "[tracer][recorder_link]") {
  REQUIRE_PTRACE();
  AttachedCallee callee(8);
  auto& kernel = callee.kernel();
  const pid_t pid = callee.pid();
  const auto code_before = code_of(pid);
  REQUIRE(code_before.size() >= 2);  // the program's and libc's at least
  auto link = recorder_in(callee);
  // Mapped by the server: no file of it, nor of its Zydis, in the program's maps.
  CHECK_FALSE(maps_mention(pid, "hindsight-recorder"));
  CHECK_FALSE(maps_mention(pid, "Zydis"));
  REQUIRE(link.enter(pid).ok());
  CHECK(link.recording(pid));

  run_then_stop(callee, 350);

  std::uint64_t written = 0;
  auto samples = link.samples(pid, &written);
  REQUIRE(samples.ok());
  REQUIRE(written > 0);
  REQUIRE(samples->size() == written);  // far below the ring's capacity
  // Every sample's `from` is a branch of the program's code, read from the process; main's
  // loop is among them (its call of nanosleep, each round).
  auto memory = kernel.memory(pid);
  REQUIRE(memory.ok());
  const auto main_fn = elf_symbol_entry(prog("callee"), "main");
  REQUIRE(main_fn);
  std::size_t from_main = 0;
  for (const auto& s : *samples) {
    auto bytes = (*memory)->read(s.from, 15);
    REQUIRE(bytes.ok());
    auto insn = arch::x86::decode_instruction(std::span(bytes->data(), bytes->size()));
    INFO("sample from 0x" << std::hex << s.from << " to 0x" << s.to);
    REQUIRE(insn);
    CHECK(insn->kind == arch::x86::InsnKind::Branch);
    from_main += s.from >= main_fn->addr && s.from < main_fn->addr + main_fn->size;
  }
  CHECK(from_main >= 2);

  // Out again: the thread is at program code (no longer in the recorder's), its %gs as before.
  auto held = link.leave({pid});
  INFO((held ? std::string("left") : held.error().message()));
  REQUIRE(held.ok());
  CHECK_FALSE(link.recording(pid));
  arch::x86::RawRegisters regs;
  REQUIRE(kernel.read_gprs(pid, regs).ok());
  CHECK(regs.gpr[arch::x86::kGsBase] == 0);
  const std::uint64_t pc = regs.gpr[arch::x86::kRip];
  INFO("pc 0x" << std::hex << pc);
  CHECK((maps_line_of(pid, pc).find("tracer_callee") != std::string::npos ||
         maps_line_of(pid, pc).find("libc.so") != std::string::npos));

  REQUIRE(link.unload(pid).ok());
  CHECK_FALSE(maps_mention(pid, "libhindsight-recorder.so"));
  // Every byte of code is the program's as before: each executable mapping it had, the same bytes
  // (the recorder ran copies; the code cache is gone with the rest of its memory), and none more.
  const auto code_after = code_of(pid);
  for (const auto& [start, bytes] : code_before) {
    INFO("mapping at 0x" << std::hex << start);
    REQUIRE(code_after.contains(start));
    CHECK(code_after.at(start) == bytes);
  }
  for (const auto& [start, bytes] : code_after) {
    INFO("left mapped after unload: " << maps_line_of(pid, start));
    CHECK(code_before.contains(start));
  }
  callee.check_ends_with("ticks=8 calls=0 cut=0\n");
}

namespace {

// How many of the samples branch from inside the function `name` of tracer_callee.
std::size_t from_function(const std::vector<tracer::BranchSample>& samples, const std::string& name) {
  const auto fn = elf_symbol_entry(prog("callee"), name);
  REQUIRE(fn);
  std::size_t n = 0;
  for (const auto& s : samples) {
    n += s.from >= fn->addr && s.from < fn->addr + fn->size;
  }
  return n;
}

}  // namespace

TEST_CASE("recorder link: an image the server cannot read is a clear error, the program untouched",
          "[tracer][recorder_link]") {
  REQUIRE_PTRACE();
  AttachedCallee callee(2);
  auto& kernel = callee.kernel();
  const pid_t pid = callee.pid();
  auto link = tracer::RecorderLink::load(kernel, pid, pid, "/nonexistent/libhindsight-recorder.so");
  REQUIRE_FALSE(link.ok());
  CHECK_THAT(link.error().message(), Catch::Matchers::StartsWith("/nonexistent/libhindsight-recorder.so cannot be read: "));
  callee.check_ends_with("ticks=2 calls=0 cut=0\n");
}

TEST_CASE("recorder link: every thread of an attached program records into its own ring", "[tracer][recorder_link]") {
  REQUIRE_PTRACE();
  AttachedCallee callee(8, 2);
  auto& kernel = callee.kernel();
  const pid_t pid = callee.pid();
  auto link = recorder_in(callee);
  for (tracer::Tid tid : callee.tids()) {
    REQUIRE(link.enter(tid).ok());
  }
  for (tracer::Tid tid : callee.tids()) {
    REQUIRE(kernel.resume(tid, false, 0).ok());
  }
  ::usleep(350 * 1000);
  for (tracer::Tid tid : callee.tids()) {
    REQUIRE(kernel.tgkill(pid, tid, SIGSTOP).ok());
    auto st = kernel.wait_for(tid);
    REQUIRE(st.ok());
    REQUIRE(WIFSTOPPED(*st));
  }
  // Each thread's ring has its own rounds: main's loop in main, the workers' in worker, and
  // every thread's sleep_round; never another thread's (main never runs worker).
  for (tracer::Tid tid : callee.tids()) {
    INFO("thread " << tid);
    auto samples = link.samples(tid);
    REQUIRE(samples.ok());
    CHECK(from_function(*samples, "sleep_round") >= 2);
    if (tid == pid) {
      CHECK(from_function(*samples, "main") >= 2);
      CHECK(from_function(*samples, "worker") == 0);
    } else {
      CHECK(from_function(*samples, "worker") >= 2);
      CHECK(from_function(*samples, "main") == 0);
    }
  }
  auto held = link.leave(callee.tids());
  INFO((held ? std::string("left") : held.error().message()));
  REQUIRE(held.ok());
  REQUIRE(link.unload(pid).ok());
  CHECK_FALSE(maps_mention(pid, "libhindsight-recorder.so"));
  callee.check_ends_with("ticks=8 calls=0 cut=0 worker_ticks=16 worker_cut=0\n");
}

TEST_CASE("recorder link: a thread stopped in the dispatcher runs on to its leave trap, with no step",
          "[tracer][recorder_link]") {
  REQUIRE_PTRACE();
  AttachedCallee callee(4);
  auto& kernel = callee.kernel();
  const pid_t pid = callee.pid();
  auto link = recorder_in(callee);
  arch::x86::RawRegisters before;
  REQUIRE(kernel.read_gprs(pid, before).ok());
  REQUIRE(link.enter(pid).ok());
  // Stepped through the thread entry and the dispatcher's saves into the translator, which
  // translates where the thread stood (its nanosleep, rewound to run again).
  for (int i = 0; i < 40; ++i) {
    REQUIRE(kernel.resume(pid, true, 0).ok());
    auto st = kernel.wait_for(pid);
    REQUIRE(st.ok());
    REQUIRE(WIFSTOPPED(*st));
  }
  auto held = link.leave({pid});
  INFO((held ? std::string("left") : held.error().message()));
  REQUIRE(held.ok());
  CHECK(held->empty());
  CHECK(link.left_at(pid).steps == 0);  // stepped, the translation took thousands
  arch::x86::RawRegisters after;
  REQUIRE(kernel.read_gprs(pid, after).ok());
  const std::uint64_t stood = before.gpr[arch::x86::kRip] - (tracer::interrupted_syscall(before) ? 2 : 0);
  CHECK(after.gpr[arch::x86::kRip] == stood);
  CHECK(after.gpr[arch::x86::kGsBase] == before.gpr[arch::x86::kGsBase]);
  CHECK((after.gpr[arch::x86::kEflags] & arch::x86::kEflagsTrap) == 0);  // none left from the steps
  REQUIRE(link.unload(pid).ok());
  callee.check_ends_with("ticks=4 calls=0 cut=0\n");
}

namespace {

// Waits (5 s at most) until tid sits in the system call `number` (/proc's syscall file).
bool waits_in_syscall(pid_t pid, tracer::Tid tid, int number) {
  for (int i = 0; i < 500; ++i) {
    std::ifstream file("/proc/" + std::to_string(pid) + "/task/" + std::to_string(tid) + "/syscall");
    std::string first;
    if (file >> first && first == std::to_string(number)) {
      return true;
    }
    ::usleep(10 * 1000);
  }
  return false;
}

}  // namespace

TEST_CASE("recorder link: a thread in sigsuspend, moved into the cache and signalled before it ran, "
          "leaves as the kernel left it: the handler ends sigsuspend",
          "[tracer][recorder_link]") {
  REQUIRE_PTRACE();
  AttachedCallee callee(2, 0, "suspend");  // two sleeps, then sigsuspend until SIGUSR1
  auto& kernel = callee.kernel();
  const pid_t pid = callee.pid();
  auto link = recorder_in(callee);
  REQUIRE(link.enter(pid).ok());
  REQUIRE(kernel.resume(pid, false, 0).ok());
  // In sigsuspend, in the cache, it is stopped, and out, then in again (sigsuspend rewound to
  // run again there), as the server moves a thread at each stop and resume.
  REQUIRE(waits_in_syscall(pid, pid, SYS_rt_sigsuspend));
  REQUIRE(kernel.tgkill(pid, pid, SIGSTOP).ok());
  auto st = kernel.wait_for(pid);
  REQUIRE(st.ok());
  REQUIRE(WIFSTOPPED(*st));
  REQUIRE(link.leave({pid}).ok());
  arch::x86::RawRegisters stopped;
  REQUIRE(kernel.read_gprs(pid, stopped).ok());
  REQUIRE(tracer::interrupted_syscall(stopped));
  REQUIRE(link.enter(pid).ok());
  // SIGUSR1 comes before it ran again: its stop finds it at the cache's entry.
  REQUIRE(kernel.tgkill(pid, pid, SIGUSR1).ok());
  REQUIRE(kernel.resume(pid, false, 0).ok());
  st = kernel.wait_for(pid);
  REQUIRE(st.ok());
  REQUIRE(WIFSTOPPED(*st));
  REQUIRE(WSTOPSIG(*st) == SIGUSR1);
  REQUIRE(link.leave({pid}).ok());
  // As the kernel left it, so that the handler makes sigsuspend fail with EINTR (rewound, it
  // would run again after the handler and wait for ever).
  arch::x86::RawRegisters after;
  REQUIRE(kernel.read_gprs(pid, after).ok());
  REQUIRE(after.gpr[arch::x86::kRip] == stopped.gpr[arch::x86::kRip]);
  REQUIRE(after.gpr[arch::x86::kRax] == stopped.gpr[arch::x86::kRax]);
  REQUIRE(after.gpr[arch::x86::kOrigRax] == stopped.gpr[arch::x86::kOrigRax]);
  // The signal, queued again, is its handler's once detached. (The recorder stays: no call may
  // run on a thread in sigsuspend.)
  REQUIRE(kernel.tgkill(pid, pid, SIGUSR1).ok());
  callee.check_ends_with("sigsuspend=EINTR usr1=blocked handled=1\n");
}

TEST_CASE("recorder link: a library that is not the recorder is refused before anything is mapped, the program "
          "untouched",
          "[tracer][recorder_link]") {
  REQUIRE_PTRACE();
  AttachedCallee callee(2);
  auto& kernel = callee.kernel();
  const pid_t pid = callee.pid();
  const std::string maps_before = maps_text(pid);
  // (libm needs libc's symbols, has IRELATIVE relocations and initializers: no private image.)
  auto link = tracer::RecorderLink::load(kernel, pid, pid, "/lib/x86_64-linux-gnu/libm.so.6");
  REQUIRE_FALSE(link.ok());
  CHECK_THAT(link.error().message(), Catch::Matchers::StartsWith("/lib/x86_64-linux-gnu/libm.so.6: "));
  CHECK(maps_text(pid) == maps_before);
  callee.check_ends_with("ticks=2 calls=0 cut=0\n");
}

namespace {

// How many descriptors of pid are the recorder's memfds ("/memfd:hindsight-ring (deleted)").
std::size_t ring_descriptors(pid_t pid) {
  std::size_t n = 0;
  for (const auto& fd : std::filesystem::directory_iterator("/proc/" + std::to_string(pid) + "/fd")) {
    std::error_code ec;
    n += std::filesystem::read_symlink(fd.path(), ec).string().find("hindsight-ring") != std::string::npos;
  }
  return n;
}

}  // namespace

TEST_CASE("recorder link: a thread's ring is shared with the server: read after SIGKILL took the process, "
          "and the program holds no descriptor of it once the thread ran",
          "[tracer][recorder_link]") {
  REQUIRE_PTRACE();
  AttachedCallee callee(50);
  auto& kernel = callee.kernel();
  const pid_t pid = callee.pid();
  auto link = recorder_in(callee);
  REQUIRE(link.enter(pid).ok());
  // Until the thread first runs in the cache, the program holds the memfd (the server opens it
  // through /proc/PID/fd); its first dispatch closes it.
  REQUIRE(maps_mention(pid, "memfd:hindsight-ring"));  // (else the memfd was refused: nothing shared)
  CHECK(ring_descriptors(pid) == 1);
  run_then_stop(callee, 250);
  CHECK(ring_descriptors(pid) == 0);
  auto first = link.take(pid);
  REQUIRE(first.ok());
  CHECK_FALSE(first->samples.empty());

  // It records on, in the cache, and is killed there, with no stop of ours in between.
  REQUIRE(kernel.resume(pid, false, 0).ok());
  ::usleep(250 * 1000);
  REQUIRE(::kill(pid, SIGKILL) == 0);
  for (;;) {  // (a SIGSTOP's stop may come first)
    auto end = kernel.wait_for(pid);
    REQUIRE(end.ok());
    if (WIFSIGNALED(*end)) {
      CHECK(WTERMSIG(*end) == SIGKILL);
      break;
    }
    REQUIRE(kernel.resume(pid, false, 0).ok());
  }
  REQUIRE_FALSE(std::filesystem::exists("/proc/" + std::to_string(pid)));
  // What it wrote between the stop and its death, every sample a branch of the program's main
  // loop or of libc below it: the same calls of nanosleep as before, round after round.
  auto last = link.take(pid);
  INFO((last ? std::string("taken") : last.error().message()));
  REQUIRE(last.ok());
  CHECK(last->lost == 0);
  REQUIRE(last->samples.size() >= 2);
  CHECK(from_function(last->samples, "main") >= 1);
  std::set<std::pair<std::uint64_t, std::uint64_t>> before;
  for (const auto& s : first->samples) {
    before.insert({s.from, s.to});
  }
  for (const auto& s : last->samples) {
    INFO("sample from 0x" << std::hex << s.from << " to 0x" << s.to);
    CHECK(before.contains({s.from, s.to}));
  }
}
