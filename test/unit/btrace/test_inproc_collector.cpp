// InprocCollector without a process: a fake RecorderPort stands for the recorder in the
// program. What a thread recorded in the cache joins its history at its stop; a run the
// recorder did not see is a gap, a trap where it left the cache is not; what the cache cannot
// run is stepped. Code at 0x1000: mov %rsp,%rbp (48 89 e5); call 0x1020 (e8 18 00 00 00).
#include <catch2/catch.hpp>

#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>

#include "test/support/fake_collector_host.hpp"
#include "tracer/btrace/inproc_collector.hpp"

using tracer::BranchSample;
using tracer::BtraceRead;
namespace ax = arch::x86;

namespace {

constexpr tracer::Tid kTid = 7;

class FakePort final : public tracer::RecorderPort {
 public:
  std::set<tracer::Tid> in;
  std::map<tracer::Tid, tracer::RecordedBranches> recorded;  // what the next take() finds
  std::map<tracer::Tid, tracer::RecorderLeft> where;         // what the next leave() says
  int entries = 0;
  bool refuse = false;
  bool not_yet = false;
  std::optional<tracer::Addr> entry;  // comes_in_at()
  std::map<tracer::Tid, tracer::Tid> waits_for;  // tid -> the thread holding the translation lock

  base::Result<void> enter(tracer::Tid tid, std::uint64_t /*ring_samples*/) override {
    if (not_yet) {
      return base::make_error(base::Errc::not_yet, "the program has no dlopen");
    }
    if (refuse) {
      return base::make_error(base::Errc::failed, "the program has no dlopen");
    }
    ++entries;
    in.insert(tid);
    return base::success();
  }
  base::Result<tracer::RecorderLeft> leave(tracer::Tid tid) override {
    if (auto w = waits_for.find(tid); w != waits_for.end() && in.contains(w->second)) {
      return base::make_error(base::Errc::not_yet, "a thread waits for the translation lock another holds");
    }
    in.erase(tid);
    return where[tid];
  }
  std::map<tracer::Tid, tracer::RecorderSyscall> at_syscalls;  // what the next at_syscall() says
  std::vector<bool> moves;                                      // at_syscall()'s `move`, in turn
  base::Result<tracer::RecorderSyscall> at_syscall(tracer::Tid tid, bool move) override {
    moves.push_back(move);
    tracer::RecorderSyscall out = at_syscalls[tid];
    if (out.left) {
      in.erase(tid);
    }
    return out;
  }
  std::optional<tracer::Addr> comes_in_at() override { return entry; }
  bool inside(tracer::Tid tid) const override { return in.contains(tid); }
  base::Result<tracer::RecordedBranches> take(tracer::Tid tid) override {
    return std::exchange(recorded[tid], tracer::RecordedBranches{});
  }

  // The process's life: what the collector told it, in order ("code_written; refresh; ...").
  std::string told;
  std::optional<std::string> unfit_because;
  std::optional<tracer::Addr> parent_moved_to;  // out_at_birth's answer
  const tracer::RecorderPort* inherited_from = nullptr;
  void tell(const std::string& what) { told += told.empty() ? what : "; " + what; }
  std::optional<std::string> unfit(tracer::Tid tid) override {
    tell("unfit " + std::to_string(tid));
    return unfit_because;
  }
  void code_written() override { tell("code_written"); }
  base::Result<void> refresh() override {
    tell("refresh");
    return base::success();
  }
  void thread_gone(tracer::Tid tid) override { tell("thread_gone " + std::to_string(tid)); }
  base::Result<std::optional<tracer::Addr>> out_at_birth(tracer::Tid parent, tracer::Tid child) override {
    tell("out_at_birth " + std::to_string(parent) + " " + std::to_string(child));
    return parent_moved_to;
  }
  void inherit(const tracer::RecorderPort& parent) override {
    tell("inherit");
    inherited_from = &parent;
  }
  void exec_happened() override { tell("exec_happened"); }
  base::Result<void> unload() override {
    tell("unload");
    return base::success();
  }
  ~FakePort() override {
    if (gone != nullptr) {
      *gone = true;
    }
  }
  bool* gone = nullptr;  // set when the port is destroyed
};

struct Fixture {
  test_support::FakeCollectorHost host;
  std::unique_ptr<FakePort> made = std::make_unique<FakePort>();
  FakePort& port = *made;  // (the collector owns it)
  tracer::InprocCollector c{std::move(made), test_support::fake_port_maker()};

  Fixture() {
    host.load(0x1000, {0x48, 0x89, 0xe5, 0xe8, 0x18, 0x00, 0x00, 0x00});
    REQUIRE(c.start(kTid, {}).ok());
  }
  std::vector<BranchSample> samples() { return static_cast<tracer::SoftStepTracer*>(c.tracer(kTid))->samples(); }
};

}  // namespace

TEST_CASE("inproc: a thread runs in the cache; at its stop, what it recorded joins its history", "[inproc]") {
  Fixture f;
  CHECK_FALSE(f.c.wants_step(kTid, 0x1000, 0, false, f.host));  // runs, in the cache
  CHECK(f.port.inside(kTid));
  f.port.recorded[kTid].samples = {{0x1003, 0x1020}, {0x1021, 0x1008}};
  f.port.where[kTid] = {0x1008, false, 0};
  f.c.thread_stopped(kTid, f.host);
  CHECK_FALSE(f.port.inside(kTid));
  CHECK(f.samples() == std::vector<BranchSample>{{0x1003, 0x1020}, {0x1021, 0x1008}});
  CHECK(f.c.tracer(kTid)->stats().backend == "inproc");
  CHECK(f.c.tracer(kTid)->stats().gaps == 0);
  // The next stop adds to it.
  CHECK_FALSE(f.c.wants_step(kTid, 0x1008, 0, false, f.host));
  f.port.recorded[kTid].samples = {{0x1040, 0x1000}};
  f.port.where[kTid] = {0x1000, false, 0};
  f.c.thread_stopped(kTid, f.host);
  CHECK(f.samples().size() == 3);
}

TEST_CASE("inproc: native code after the cache is a gap, a trap where it left is not", "[inproc]") {
  Fixture f;
  CHECK_FALSE(f.c.wants_step(kTid, 0x1000, 0, false, f.host));
  f.port.recorded[kTid].samples = {{0x1003, 0x1020}};
  f.port.where[kTid] = {0x1021, true, 0x1020};  // left for an int3 at 0x1020: trapped, pc past it
  f.c.thread_stopped(kTid, f.host);
  CHECK(f.samples() == std::vector<BranchSample>{{0x1003, 0x1020}});
  CHECK_FALSE(f.c.wants_step(kTid, 0x1020, 0, false, f.host));
  f.port.where[kTid] = {0x5000, true, 0x1020};  // it ran on natively from there to 0x5000
  f.c.thread_stopped(kTid, f.host);
  CHECK(f.samples().back() == BranchSample::gap(0x5000));
}

TEST_CASE("inproc: a thread that ends in the cache (an exit, SIGKILL) keeps what it recorded since its last stop",
          "[inproc]") {
  Fixture f;
  CHECK_FALSE(f.c.wants_step(kTid, 0x1000, 0, false, f.host));
  f.port.recorded[kTid].samples = {{0x1003, 0x1020}, {0x1021, 0x1008}};
  f.c.thread_ended(kTid, f.host);  // (no leave: it is gone; its ring is not)
  CHECK(f.samples() == std::vector<BranchSample>{{0x1003, 0x1020}, {0x1021, 0x1008}});
  CHECK(f.c.tracer(kTid)->stats().gaps == 0);
}

TEST_CASE("inproc: a thread that ends running natively adds nothing from the ring", "[inproc]") {
  Fixture f;
  f.port.not_yet = true;  // (it runs natively to its next stop)
  CHECK_FALSE(f.c.wants_step(kTid, 0x1000, 0, false, f.host));
  f.port.recorded[kTid].samples = {{0x1003, 0x1020}};  // (what a ring would hold: not this run's)
  f.c.thread_ended(kTid, f.host);
  CHECK(f.samples().empty());
}

TEST_CASE("inproc: a ring that went round between two stops leaves a gap before what it kept", "[inproc]") {
  Fixture f;
  CHECK_FALSE(f.c.wants_step(kTid, 0x1000, 0, false, f.host));
  f.port.recorded[kTid] = {{{0x1003, 0x1020}}, 1000};
  f.port.where[kTid] = {0x1020, false, 0};
  f.c.thread_stopped(kTid, f.host);
  CHECK(f.samples() == std::vector<BranchSample>{BranchSample::gap(0x1003), {0x1003, 0x1020}});
}

TEST_CASE("inproc: the core's steps, signals and a recorder that cannot come in are stepped", "[inproc]") {
  Fixture f;
  CHECK(f.c.wants_step(kTid, 0x1000, 0, true, f.host));     // GDB's stepi
  CHECK(f.c.wants_step(kTid, 0x1000, 10, false, f.host));    // SIGUSR1 on its way to a handler
  f.port.refuse = true;
  CHECK(f.c.wants_step(kTid, 0x1000, 0, false, f.host));
  CHECK(f.port.entries == 0);
  // A stepped call is recorded as SoftStep records it.
  f.host.regs[kTid][ax::kRip] = 0x1023;
  f.host.si_codes[kTid] = 2;  // TRAP_TRACE
  CHECK(f.c.stepped(kTid, 0x1023, f.host) == tracer::StepVerdict::Stepped);
  f.port.refuse = false;
  CHECK(f.c.wants_step(kTid, 0x1003, 0, true, f.host));
  CHECK(f.c.stepped(kTid, 0x1020, f.host) == tracer::StepVerdict::Stepped);
  CHECK(f.samples().back() == BranchSample{0x1003, 0x1020});
}

TEST_CASE("inproc: a recorder that cannot come in yet leaves the thread native to its next stop, a gap there",
          "[inproc]") {
  Fixture f;
  f.port.not_yet = true;  // (an exec'd program before libc is loaded)
  CHECK_FALSE(f.c.wants_step(kTid, 0x1000, 0, false, f.host));  // runs natively
  f.host.regs[kTid][ax::kRip] = 0x1003;
  f.c.thread_stopped(kTid, f.host);
  CHECK(f.samples().empty());  // nothing recorded before it: its history starts here
  // GDB steps the call: recorded as SoftStep records it; then natively again, to GDB's breakpoint.
  CHECK(f.c.wants_step(kTid, 0x1003, 0, true, f.host));
  f.host.regs[kTid][ax::kRip] = 0x1020;
  f.host.si_codes[kTid] = 2;  // TRAP_TRACE
  CHECK(f.c.stepped(kTid, 0x1020, f.host) == tracer::StepVerdict::Stepped);
  CHECK_FALSE(f.c.wants_step(kTid, 0x1020, 0, false, f.host));
  f.host.planted.insert(0x1000);
  f.host.regs[kTid][ax::kRip] = 0x1001;  // trapped on it
  f.host.si_codes[kTid] = 0x80;          // SI_KERNEL
  f.c.thread_stopped(kTid, f.host);
  CHECK(f.samples() == std::vector<BranchSample>{{0x1003, 0x1020}, BranchSample::gap(0x1000)});
  f.port.not_yet = false;  // libc loaded: the next resume enters
  CHECK_FALSE(f.c.wants_step(kTid, 0x1000, 0, false, f.host));
  CHECK(f.port.inside(kTid));
}

TEST_CASE("inproc: after an exec the thread runs natively to the program's entry, and enters there", "[inproc]") {
  Fixture f;
  f.port.not_yet = true;  // (the dynamic linker has not loaded libc yet)
  f.port.entry = 0x1003;
  CHECK_FALSE(f.c.wants_step(kTid, 0x1000, 0, false, f.host));  // runs natively ...
  CHECK(f.host.planted == std::set<tracer::Addr>{0x1003});     // ... to an int3 at the entry
  f.host.regs[kTid][ax::kRip] = 0x1004;                        // trapped on it
  f.host.si_codes[kTid] = 0x80;                                // SI_KERNEL
  f.c.thread_stopped(kTid, f.host);
  CHECK(f.samples().empty());  // (nothing recorded before: its history starts there)
  f.port.not_yet = false;
  CHECK_FALSE(f.c.wants_step(kTid, 0x1003, 0, false, f.host));
  CHECK(f.port.inside(kTid));
  // A fork child before its exec has no entry to wait at: natively to its next stop.
  Fixture child;
  child.port.not_yet = true;
  CHECK_FALSE(child.c.wants_step(kTid, 0x1000, 0, false, child.host));
  CHECK(child.host.planted.empty());
}

TEST_CASE("inproc: a thread waiting for the translation lock a stopped thread holds leaves after it", "[inproc]") {
  Fixture f;
  constexpr tracer::Tid kHolder = 8;
  REQUIRE(f.c.start(kHolder, {}).ok());
  CHECK_FALSE(f.c.wants_step(kTid, 0x1000, 0, false, f.host));
  CHECK_FALSE(f.c.wants_step(kHolder, 0x1000, 0, false, f.host));
  f.port.waits_for[kTid] = kHolder;
  f.port.recorded[kTid].samples = {{0x1003, 0x1020}};
  f.port.where[kTid] = {0x1020, false, 0};
  f.port.where[kHolder] = {0x1000, false, 0};
  f.c.thread_stopped(kTid, f.host);  // its stop comes first: it cannot get out yet
  CHECK(f.port.inside(kTid));
  f.c.thread_stopped(kHolder, f.host);  // the holder's: out, and the waiting one after it
  CHECK_FALSE(f.port.inside(kHolder));
  CHECK_FALSE(f.port.inside(kTid));
  CHECK(f.samples() == std::vector<BranchSample>{{0x1003, 0x1020}});
}

TEST_CASE("inproc: while GDB catches system calls a thread runs in the cache; at a stop GDB hears of it is in the "
          "program's code, and the recorder's own calls are let go",
          "[inproc][catch-syscall]") {
  Fixture f;
  f.host.catching_syscalls = true;
  CHECK_FALSE(f.c.wants_step(kTid, 0x1000, 0, false, f.host));  // not stepped: into the cache
  CHECK(f.port.inside(kTid));
  // The translator's mmap: the recorder's own call, never reported; the thread stays.
  f.port.at_syscalls[kTid] = {true, std::nullopt};
  CHECK_FALSE(f.c.syscall_stopped(kTid, true, true, f.host));
  CHECK(f.port.inside(kTid));
  // A call of the program's GDB catches: back in its code, what it recorded joined.
  f.port.recorded[kTid].samples = {{0x1003, 0x1020}};
  f.port.at_syscalls[kTid] = {false, tracer::RecorderLeft{0x1020, false, 0}};
  CHECK(f.c.syscall_stopped(kTid, true, true, f.host));
  CHECK(f.port.moves == std::vector<bool>{true, true});  // (asked to move when caught)
  CHECK_FALSE(f.port.inside(kTid));
  CHECK(f.samples() == std::vector<BranchSample>{{0x1003, 0x1020}});
  // One not caught, made natively from the cache (the maps gate's way while calls are caught):
  // it stopped right past that syscall, so nothing else ran there: no gap.
  CHECK_FALSE(f.c.wants_step(kTid, 0x1020, 0, false, f.host));
  f.port.at_syscalls[kTid] = {false, tracer::RecorderLeft{0x1032, true, 0x1030}};
  CHECK(f.c.syscall_stopped(kTid, true, false, f.host));
  CHECK(f.port.moves.back() == false);
  CHECK(f.c.tracer(kTid)->stats().gaps == 0);
  // Native code past it is a gap.
  CHECK_FALSE(f.c.wants_step(kTid, 0x1032, 0, false, f.host));
  f.port.at_syscalls[kTid] = {false, tracer::RecorderLeft{0x1052, true, 0x1030}};
  CHECK(f.c.syscall_stopped(kTid, true, false, f.host));
  CHECK(f.samples().back() == BranchSample::gap(0x1052));
}

TEST_CASE("inproc: a call the recorder could not come in at runs natively to its return, which is no gap",
          "[inproc][catch-syscall]") {
  Fixture f;
  f.host.catching_syscalls = true;
  CHECK_FALSE(f.c.wants_step(kTid, 0x1000, 0, false, f.host));
  f.port.recorded[kTid].samples = {{0x1003, 0x1020}};
  f.port.at_syscalls[kTid] = {false, tracer::RecorderLeft{0x1032, false, 0}};
  CHECK(f.c.syscall_stopped(kTid, true, true, f.host));
  // At the call's entry stop no call into the program may run (to flush the recorder, say).
  f.port.not_yet = true;
  CHECK_FALSE(f.c.wants_step(kTid, 0x1032, 0, false, f.host));
  f.host.regs[kTid][ax::kRip] = 0x1032;
  CHECK(f.c.syscall_stopped(kTid, false, true, f.host));  // its return, where it was
  CHECK(f.c.tracer(kTid)->stats().gaps == 0);
  // Where it stopped anywhere else, it ran code nobody saw.
  CHECK_FALSE(f.c.wants_step(kTid, 0x1032, 0, false, f.host));
  f.host.regs[kTid][ax::kRip] = 0x1062;
  CHECK(f.c.syscall_stopped(kTid, true, true, f.host));
  CHECK(f.samples().back() == BranchSample::gap(0x1062));
}

TEST_CASE("inproc: the collector owns its port and tells it what the core's lifecycle events mean", "[inproc]") {
  Fixture f;
  f.port.told.clear();
  CHECK_FALSE(f.c.runs_own_code(kTid));
  CHECK_FALSE(f.c.wants_step(kTid, 0x1000, 0, false, f.host));
  CHECK(f.c.runs_own_code(kTid));  // in the cache: the core pauses it before changing code
  // GDB wrote memory, then the core paused the threads in the cache: made afresh.
  f.c.code_changed();
  f.c.code_edited();
  // A fork in the cache: both out; where the parent stands now.
  f.port.parent_moved_to = 0x1008;
  CHECK(f.c.forked(kTid, 99) == std::optional<tracer::Addr>(0x1008));
  CHECK(f.port.told == "code_written; refresh; out_at_birth 7 99");
  f.port.told.clear();

  // The fork child's collector: a port its own host makes, holding its copy of the parent's.
  test_support::FakeCollectorHost child;
  auto child_port = std::make_unique<FakePort>();
  FakePort& child_seen = *child_port;
  child.next_port = std::move(child_port);
  auto heir = f.c.fork_heir(child);
  REQUIRE(heir != nullptr);
  CHECK(heir->backend() == "inproc");
  CHECK(heir->traced_count() == 0);  // not recording until the child's threads start
  CHECK(child_seen.told == "inherit");
  CHECK(child_seen.inherited_from == &f.port);
  // Where the child's host has no recorder, nothing.
  test_support::FakeCollectorHost bare;
  CHECK(f.c.fork_heir(bare) == nullptr);

  // An exec; a 32-bit program after it cannot be recorded, in the recorder's words.
  f.c.exec_happened();
  f.port.unfit_because = "a 32-bit program: the recorder is 64-bit code";
  CHECK(f.c.cannot_record(kTid) ==
        std::optional<std::string>("the in-process recorder cannot come in: a 32-bit program: the recorder is 64-bit code"));
  f.c.thread_ended(kTid, f.host);
  f.c.release();
  CHECK(f.port.told == "exec_happened; unfit 7; thread_gone 7; unload");

  // The process gone: the port goes, and nothing more reaches it.
  bool gone = false;
  f.port.gone = &gone;
  f.c.process_gone();
  CHECK(gone);
  f.c.code_changed();
  f.c.release();
  CHECK_FALSE(f.c.runs_own_code(kTid));
  CHECK_FALSE(f.c.forked(kTid, 99).has_value());
}

TEST_CASE("inproc: the factory refuses a process its recorder cannot come into, in plain words", "[inproc]") {
  const tracer::CollectorSetup kFakeSetup{test_support::fake_port_maker()};
  test_support::FakeCollectorHost host;
  auto port = std::make_unique<FakePort>();
  port->unfit_because = "the program runs in seccomp's strict mode";
  host.next_port = std::move(port);
  auto made = tracer::make_inproc_collector(tracer::CollectorRequest{kTid, {}, {}, &host, &kFakeSetup});
  REQUIRE_FALSE(made.ok());
  CHECK(made.error().message() == "the in-process recorder cannot come in: the program runs in seccomp's strict mode");
  // A host with no recorder: refused too.
  test_support::FakeCollectorHost bare;
  auto none = tracer::make_inproc_collector(tracer::CollectorRequest{kTid, {}, {}, &bare, &kFakeSetup});
  REQUIRE_FALSE(none.ok());
  // One that fits: the collector, owning the port.
  test_support::FakeCollectorHost fits;
  auto fit = std::make_unique<FakePort>();
  FakePort& seen = *fit;
  fits.next_port = std::move(fit);
  auto ok = tracer::make_inproc_collector(tracer::CollectorRequest{kTid, {}, {}, &fits, &kFakeSetup});
  REQUIRE(ok.ok());
  CHECK(seen.told == "unfit 7");
}
