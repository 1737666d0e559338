// The core's rules (LinuxTarget: the thread machine, the all-stop policy, the pending events)
// driven by wait statuses a script makes up, no process at all (scripted_kernel.hpp): what is
// reported, what the threads are asked to do, what memory holds, for signals during a step,
// step-overs with other threads, a thread exiting while another's event is reported, vfork,
// and range runs.
#include <catch2/catch.hpp>

#include <sys/ptrace.h>

#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <string>
#include <vector>

#include "scripted_kernel.hpp"
#include "tracer/linux/linux_target.hpp"

using tracer::Addr;
using tracer::BreakpointType;
using tracer::Bytes;
using tracer::LinuxTarget;
using tracer::Pid;
using tracer::ResumeKind;
using tracer::ResumePlan;
using tracer::StopEvent;
using tracer::StopReason;
using tracer::ThreadAction;
using tracer::Tid;
using tracer::testing::exited_status;
using tracer::testing::killed_status;
using tracer::testing::ScriptedKernel;
using tracer::testing::stopped_status;

namespace {

// Beyond any pid_max: no real process has these.
constexpr Pid kPid = 90'000'000;
constexpr Tid kA = kPid;
constexpr Tid kB = kPid + 1;
constexpr Tid kC = kPid + 2;
constexpr Addr kBase = 0x400000;
constexpr Addr kBreak = kBase + 0x10;
constexpr std::uint8_t kNop = 0x90;
constexpr std::uint8_t kInt3 = 0xcc;

struct Core {
  ScriptedKernel kernel;
  LinuxTarget target{kernel};

  // Attached, all-stop, to a process of these threads, every one at kBase over code (nops).
  explicit Core(std::vector<Tid> tids, Bytes code = Bytes(64, kNop), bool non_stop = false) {
    kernel.add_process(kPid, tids, kBase, std::move(code));
    for (Tid tid : tids) {
      kernel.thread(tid).regs.rip = kBase;
    }
    REQUIRE(target.set_non_stop(non_stop));
    REQUIRE(target.attach(kPid));
    if (!non_stop) {
      CHECK_FALSE(target.take_attach_signal(kPid).has_value());
    }
    kernel.take_calls();
  }
  void resume(std::vector<ThreadAction> actions) { REQUIRE(target.resume(ResumePlan{std::move(actions)})); }
  void continue_all() { resume({ThreadAction{tracer::kAllThreads, 0, ResumeKind::Continue}}); }
  // What the server's loop gets from poll() before the script runs out.
  std::optional<StopEvent> next() {
    for (int i = 0; i < 8; ++i) {
      if (auto ev = target.poll()) {
        return ev;
      }
      if (!kernel.waiting()) {
        return std::nullopt;
      }
    }
    return std::nullopt;
  }
  // The thread ran into our int3 at addr (the kernel's SIGTRAP, si_code SI_KERNEL).
  void trap_at(Tid tid, Addr addr) { kernel.event(tid, stopped_status(SIGTRAP), addr + 1, SI_KERNEL); }
  // Its single-step ended at pc.
  void stepped_to(Tid tid, Addr pc) { kernel.event(tid, stopped_status(SIGTRAP), pc, TRAP_TRACE); }
};

ThreadAction step(Tid tid) { return ThreadAction{tid, 0, ResumeKind::Step}; }
ThreadAction cont_rest() { return ThreadAction{tracer::kAllThreads, 0, ResumeKind::Continue}; }

}  // namespace

TEST_CASE("core rules: a breakpoint in one thread stops the others; our SIGSTOP is never reported",
          "[core_rules]") {
  Core core({kA, kB});
  REQUIRE(core.target.insert_breakpoint(BreakpointType::Software, kBreak, 1));
  CHECK(core.kernel.byte_at(kPid, kBreak) == kInt3);
  core.continue_all();
  CHECK(core.kernel.take_calls() == "cont 90000000; cont 90000001");
  core.trap_at(kA, kBreak);
  auto ev = core.next();
  REQUIRE(ev);
  CHECK(ev->reason == StopReason::SoftwareBreakpoint);
  CHECK(ev->tid == kA);
  CHECK(core.kernel.thread(kA).regs.rip == kBreak);  // rewound onto the int3
  CHECK(core.kernel.take_calls() == "tgkill 90000001 SIGSTOP");
  CHECK_FALSE(core.target.running());
  // GDB steps A off its breakpoint (removed meanwhile) and lets B run: B's SIGSTOP was ours,
  // so nothing is delivered to it and nothing more is reported.
  REQUIRE(core.target.remove_breakpoint(BreakpointType::Software, kBreak, 1));
  CHECK(core.kernel.byte_at(kPid, kBreak) == kNop);
  core.resume({step(kA), cont_rest()});
  CHECK(core.kernel.take_calls() == "step 90000000; cont 90000001");
  core.stepped_to(kA, kBreak + 1);
  ev = core.next();
  REQUIRE(ev);
  CHECK(ev->reason == StopReason::SingleStep);
  CHECK(ev->tid == kA);
  CHECK(core.kernel.take_calls() == "tgkill 90000001 SIGSTOP");
}

TEST_CASE("core rules: a signal during a step is reported, or passed on and the step goes on",
          "[core_rules]") {
  Core core({kA, kB});
  SECTION("GDB wants to hear of it") {
    core.resume({step(kA), cont_rest()});
    CHECK(core.kernel.take_calls() == "step 90000000; cont 90000001");
    core.kernel.event(kA, stopped_status(SIGUSR1), kBase, SI_TKILL);
    auto ev = core.next();
    REQUIRE(ev);
    CHECK(ev->reason == StopReason::Signal);
    CHECK(ev->signal == SIGUSR1);
    CHECK(ev->tid == kA);
  }
  SECTION("passed (QPassSignals) in a thread that continues: delivered, nothing reported") {
    core.target.set_pass_signals({SIGUSR1});
    core.resume({step(kA), cont_rest()});
    core.kernel.take_calls();
    core.kernel.event(kB, stopped_status(SIGUSR1), kBase, SI_TKILL);
    CHECK_FALSE(core.next().has_value());
    CHECK(core.kernel.take_calls() == "cont 90000001 sig 10");
    core.stepped_to(kA, kBase + 1);
    auto ev = core.next();
    REQUIRE(ev);
    CHECK(ev->reason == StopReason::SingleStep);
    CHECK(ev->tid == kA);
  }
  SECTION("passed, but in the thread GDB steps: reported all the same (GDB steps over the handler "
          "itself), as by gdbserver") {
    core.target.set_pass_signals({SIGUSR1});
    core.resume({step(kA), cont_rest()});
    core.kernel.take_calls();
    core.kernel.event(kA, stopped_status(SIGUSR1), kBase, SI_TKILL);
    auto ev = core.next();
    REQUIRE(ev);
    CHECK(ev->reason == StopReason::Signal);
    CHECK(ev->signal == SIGUSR1);
    CHECK(core.kernel.take_calls() == "tgkill 90000001 SIGSTOP");
  }
  SECTION("in another thread, while one steps: that thread's signal ends the resume") {
    core.resume({step(kA), cont_rest()});
    core.kernel.take_calls();
    core.kernel.event(kB, stopped_status(SIGUSR2), kBase, SI_TKILL);
    auto ev = core.next();
    REQUIRE(ev);
    CHECK(ev->tid == kB);
    CHECK(ev->signal == SIGUSR2);
    CHECK(core.kernel.take_calls() == "tgkill 90000000 SIGSTOP");
    // The stepping thread stopped by our SIGSTOP before its step ended: stepped again at the
    // next resume, with nothing reported for it meanwhile.
    core.resume({step(kA), cont_rest()});
    CHECK(core.kernel.take_calls() == "step 90000000; cont 90000001");
  }
}

TEST_CASE("core rules: an int3 GDB does not stop at is stepped over with the other threads held",
          "[core_rules]") {
  Core core({kA, kB});
  REQUIRE(core.target.insert_breakpoint(BreakpointType::Software, kBreak, 1));
  // The condition `0` (agent bytecode: const8 0, end): never true, the hit is not reported.
  REQUIRE(core.target.set_breakpoint_conditions(kBreak, {Bytes{0x22, 0x00, 0x27}}));
  core.continue_all();
  core.kernel.take_calls();
  core.trap_at(kA, kBreak);
  CHECK_FALSE(core.next().has_value());
  // B is paused before the original byte goes into memory; then A steps it alone.
  CHECK(core.kernel.take_calls() == "tgkill 90000001 SIGSTOP; step 90000000");
  CHECK(core.kernel.byte_at(kPid, kBreak) == kNop);
  CHECK(core.kernel.thread(kA).regs.rip == kBreak);
  core.stepped_to(kA, kBreak + 1);
  CHECK_FALSE(core.next().has_value());
  CHECK(core.kernel.byte_at(kPid, kBreak) == kInt3);  // back once the step is done
  CHECK(core.kernel.take_calls() == "cont 90000000; cont 90000001");
  CHECK(core.target.running());
}

TEST_CASE("core rules: a thread that dies stepping over an int3 ends its step-over; the others go on",
          "[core_rules]") {
  Core core({kA, kB});
  REQUIRE(core.target.insert_breakpoint(BreakpointType::Software, kBreak, 1));
  REQUIRE(core.target.set_breakpoint_conditions(kBreak, {Bytes{0x22, 0x00, 0x27}}));  // never true
  core.continue_all();
  core.kernel.take_calls();
  core.trap_at(kB, kBreak);
  CHECK_FALSE(core.next().has_value());
  CHECK(core.kernel.take_calls() == "tgkill 90000000 SIGSTOP; step 90000001");
  CHECK(core.kernel.byte_at(kPid, kBreak) == kNop);
  core.kernel.end(kB, exited_status(0));  // (SIGKILL from outside, or the stepped syscall was exit)
  CHECK_FALSE(core.next().has_value());
  CHECK(core.kernel.byte_at(kPid, kBreak) == kInt3);
  CHECK(core.kernel.take_calls() == "cont 90000000");  // paused for it: GDB wants it running
  CHECK(core.target.running());
}

TEST_CASE("core rules: a thread that meets an int3 while another steps over one waits, then meets it again",
          "[core_rules]") {
  Core core({kA, kB});
  REQUIRE(core.target.insert_breakpoint(BreakpointType::Software, kBreak, 1));
  REQUIRE(core.target.set_breakpoint_conditions(kBreak, {Bytes{0x22, 0x00, 0x27}}));  // never true
  core.continue_all();
  core.kernel.take_calls();
  // Both hit it before either stop is seen: A's step-over starts, B's trap comes in its stead
  // of our SIGSTOP (which stays queued).
  core.trap_at(kA, kBreak);
  core.trap_at(kB, kBreak);
  CHECK_FALSE(core.next().has_value());
  CHECK(core.kernel.thread(kB).regs.rip == kBreak);  // back on the int3
  core.stepped_to(kA, kBreak + 1);
  CHECK_FALSE(core.next().has_value());
  CHECK(core.kernel.byte_at(kPid, kBreak) == kInt3);
  // A goes on; B runs into the int3 again (its own step-over next), nothing reported.
  const std::string calls = core.kernel.take_calls();
  CHECK(calls.find("cont 90000000") != std::string::npos);
  CHECK(calls.find("cont 90000001") != std::string::npos);
  CHECK(core.target.running());
}

TEST_CASE("core rules: a thread that exits while another's event is reported", "[core_rules]") {
  Core core({kA, kB});
  REQUIRE(core.target.insert_breakpoint(BreakpointType::Software, kBreak, 1));
  SECTION("GDB hears of the exit (QThreadEvents) after the breakpoint, at the next resume") {
    core.target.set_report_thread_exits(true);
    core.continue_all();
    core.kernel.take_calls();
    core.trap_at(kA, kBreak);
    core.kernel.end(kB, exited_status(0));
    auto ev = core.next();
    REQUIRE(ev);
    CHECK(ev->reason == StopReason::SoftwareBreakpoint);
    REQUIRE(core.target.remove_breakpoint(BreakpointType::Software, kBreak, 1));
    core.continue_all();
    ev = core.next();
    REQUIRE(ev);
    CHECK(ev->reason == StopReason::ThreadExited);
    CHECK(ev->tid == kB);
  }
  SECTION("without thread events, it just leaves the thread list") {
    core.continue_all();
    core.kernel.take_calls();
    core.kernel.end(kB, exited_status(0));
    core.trap_at(kA, kBreak);
    auto ev = core.next();
    REQUIRE(ev);
    CHECK(ev->reason == StopReason::SoftwareBreakpoint);
    CHECK(core.kernel.take_calls().empty());  // nobody left to stop
    CHECK(core.target.threads().size() == 1);
    CHECK_FALSE(core.target.thread_alive(kB));
  }
}

TEST_CASE("core rules: a process group killed at once: a grandchild's death, seen as its tracer and again as "
          "the reaper of the orphan, is one end; a later process given its pid has its own",
          "[core_rules]") {
  // The started program A runs `timeout` (kMid), which runs the hung kChild; GNU timeout kills
  // its whole group, itself with it. Whether kChild's end comes once or twice depends on the
  // order the kernel kills them in: twice when it dies first and we reap it as its tracer
  // before kMid (its parent) is gone, its zombie then coming to us, the tree's reaper.
  constexpr Pid kMid = kPid + 100;
  constexpr Pid kChild = kPid + 101;
  Core core({kA});
  core.target.set_report_forks(true, true);
  auto fork = [&](Tid parent, Pid child) {
    core.kernel.thread(parent).event_message = child;
    core.kernel.event(parent, stopped_status(SIGTRAP, PTRACE_EVENT_FORK), kBase + 2);
    core.kernel.born(child, child, kBase + 2);
    core.kernel.new_image(child, kBase, Bytes(64, kNop));
    auto ev = core.next();
    REQUIRE(ev);
    REQUIRE(ev->reason == StopReason::Fork);
    CHECK(ev->child_pid == child);
    core.continue_all();
  };
  // The pids of the ends reported from now on, in order of pid.
  auto ends = [&] {
    std::vector<Pid> out;
    while (auto ev = core.next()) {
      if (ev->reason == StopReason::Killed || ev->reason == StopReason::Exited) {
        out.push_back(ev->pid);
      }
      (void)core.target.resume(ResumePlan{{cont_rest()}});  // as triage's loop does
    }
    std::sort(out.begin(), out.end());
    return out;
  };
  core.continue_all();
  fork(kA, kMid);
  fork(kMid, kChild);
  core.kernel.take_calls();
  core.kernel.end(kChild, killed_status(SIGKILL));     // reaped as its tracer
  core.kernel.end(kMid, killed_status(SIGKILL));
  core.kernel.seen_again(kChild, killed_status(SIGKILL));  // reaped as the orphan's reaper
  CHECK(ends() == std::vector<Pid>{kMid, kChild});
  // Its pid free again, a child of A's gets it: that one's death is its own.
  fork(kA, kChild);
  core.kernel.end(kChild, killed_status(SIGKILL));
  CHECK(ends() == std::vector<Pid>{kChild});
}

TEST_CASE("core rules: vfork: reported with its child, or the child let go", "[core_rules]") {
  constexpr Pid kChild = kPid + 100;
  Core core({kA});
  core.kernel.thread(kA).event_message = kChild;
  SECTION("GDB follows vforks: the event names the child, then vforkdone") {
    core.target.set_report_forks(true, true);
    core.continue_all();
    core.kernel.take_calls();
    core.kernel.event(kA, stopped_status(SIGTRAP, PTRACE_EVENT_VFORK), kBase + 2);
    core.kernel.born(kChild, kChild, kBase + 2);
    auto ev = core.next();
    REQUIRE(ev);
    CHECK(ev->reason == StopReason::VFork);
    CHECK(ev->child_pid == kChild);
    CHECK(core.kernel.take_calls().empty());  // both stay stopped for GDB
    // GDB detaches the child (detach-on-fork), then resumes the parent until vforkdone.
    REQUIRE(core.target.detach_process(kChild));
    CHECK(core.kernel.take_calls() == "detach 90000100");
    core.continue_all();
    CHECK(core.kernel.take_calls() == "cont 90000000");
    core.kernel.event(kA, stopped_status(SIGTRAP, PTRACE_EVENT_VFORK_DONE), kBase + 2);
    ev = core.next();
    REQUIRE(ev);
    CHECK(ev->reason == StopReason::VForkDone);
  }
  SECTION("GDB does not follow: the child runs free, the parent goes on unreported") {
    core.continue_all();
    core.kernel.take_calls();
    core.kernel.event(kA, stopped_status(SIGTRAP, PTRACE_EVENT_VFORK), kBase + 2);
    core.kernel.born(kChild, kChild, kBase + 2);
    CHECK_FALSE(core.next().has_value());
    CHECK(core.kernel.take_calls() == "detach 90000100; cont 90000000");
    core.kernel.event(kA, stopped_status(SIGTRAP, PTRACE_EVENT_VFORK_DONE), kBase + 2);
    CHECK_FALSE(core.next().has_value());
    CHECK(core.kernel.take_calls() == "cont 90000000");
  }
}

TEST_CASE("core rules: a vfork child asked to record records from its exec on, nothing planted before",
          "[core_rules]") {
  constexpr Pid kChild = kPid + 100;
  Bytes code(64, kNop);
  code[8] = 0xeb;  // jmp +0: the first branch, where a software collector plants its int3
  code[9] = 0x00;
  Core core({kA}, code);
  core.target.set_btrace_backend(tracer::Backend::Soft);
  core.target.set_report_forks(true, true);
  core.target.set_report_exec(true);
  core.kernel.thread(kA).event_message = kChild;
  core.continue_all();
  core.kernel.take_calls();
  core.kernel.event(kA, stopped_status(SIGTRAP, PTRACE_EVENT_VFORK), kBase);
  core.kernel.born(kChild, kChild, kBase);
  core.kernel.share_memory(kChild, kPid);
  auto ev = core.next();
  REQUIRE(ev);
  REQUIRE(ev->reason == StopReason::VFork);
  // Asked while it runs in its parent's memory: accepted, and nothing of a collector there.
  REQUIRE(core.target.enable_btrace(kChild, tracer::BtraceConfig{}));
  CHECK(core.target.branch_tracer(kChild) == nullptr);
  for (Addr a = kBase; a < kBase + code.size(); ++a) {
    CHECK(core.kernel.byte_at(kPid, a) == code[a - kBase]);
  }
  SECTION("it execs: recording from its new image's first instruction") {
    core.continue_all();
    core.kernel.new_image(kChild, kBase, code);
    core.kernel.event(kChild, stopped_status(SIGTRAP, PTRACE_EVENT_EXEC), kBase);
    ev = core.next();
    REQUIRE(ev);
    CHECK(ev->reason == StopReason::Exec);
    CHECK(core.target.branch_tracer(kChild) != nullptr);
    for (Addr a = kBase; a < kBase + code.size(); ++a) {
      CHECK(core.kernel.byte_at(kPid, a) == code[a - kBase]);  // its parent's memory untouched
    }
  }
  SECTION("recording turned off before its exec: nothing starts there") {
    REQUIRE(core.target.disable_btrace(kChild));
    core.continue_all();
    core.kernel.new_image(kChild, kBase, code);
    core.kernel.event(kChild, stopped_status(SIGTRAP, PTRACE_EVENT_EXEC), kBase);
    ev = core.next();
    REQUIRE(ev);
    CHECK(ev->reason == StopReason::Exec);
    CHECK(core.target.branch_tracer(kChild) == nullptr);
  }
}

TEST_CASE("core rules: a range step runs to an int3 at the range's end, branches performed",
          "[core_rules]") {
  // kBase: 4 nops, jmp +2 (to kBase + 8), 2 nops skipped, then nops: the range [kBase, kBase + 10).
  Bytes code(64, kNop);
  code[4] = 0xeb;
  code[5] = 0x02;
  Core core({kA}, code);
  ThreadAction range{kA, 0, ResumeKind::RangeStep};
  range.range_start = kBase;
  range.range_end = kBase + 10;
  core.resume({range});
  // It runs (not steps) to an int3 on the jmp, the first branch of its straight line.
  CHECK(core.kernel.take_calls() == "cont 90000000");
  CHECK(core.kernel.byte_at(kPid, kBase + 4) == kInt3);
  core.trap_at(kA, kBase + 4);
  CHECK_FALSE(core.next().has_value());
  // The jmp was performed on its registers; then it runs to the range's end.
  CHECK(core.kernel.take_calls() == "cont 90000000");
  CHECK(core.kernel.byte_at(kPid, kBase + 4) == 0xeb);
  CHECK(core.kernel.byte_at(kPid, kBase + 10) == kInt3);
  CHECK(core.kernel.thread(kA).regs.rip == kBase + 8);
  core.trap_at(kA, kBase + 10);
  auto ev = core.next();
  REQUIRE(ev);
  CHECK(ev->reason == StopReason::SingleStep);
  CHECK(core.kernel.thread(kA).regs.rip == kBase + 10);
  CHECK(core.kernel.byte_at(kPid, kBase + 10) == kNop);  // nothing of ours left
}

TEST_CASE("core rules: a signal GDB gives a thread that cannot run yet is delivered when it runs",
          "[core_rules]") {
  Core core({kA, kB, kC});
  REQUIRE(core.target.insert_breakpoint(BreakpointType::Software, kBreak, 1));
  core.continue_all();
  core.kernel.take_calls();
  core.trap_at(kA, kBreak);
  core.kernel.event(kB, stopped_status(SIGUSR2), kBase, SI_TKILL);
  core.kernel.event(kC, stopped_status(SIGUSR1), kBase, SI_TKILL);
  auto ev = core.next();
  REQUIRE(ev);
  CHECK(ev->tid == kA);  // the oldest first; the others wait
  REQUIRE(core.target.remove_breakpoint(BreakpointType::Software, kBreak, 1));
  core.continue_all();
  ev = core.next();
  REQUIRE(ev);
  CHECK(ev->tid == kB);
  CHECK(core.kernel.take_calls().empty());  // reported at once: nobody ran
  // GDB passes SIGUSR2 to B; C's stop is still to be told, so again nobody runs...
  core.resume({ThreadAction{kB, 0, ResumeKind::Continue, SIGUSR2}, cont_rest()});
  ev = core.next();
  REQUIRE(ev);
  CHECK(ev->tid == kC);
  CHECK(ev->signal == SIGUSR1);
  CHECK(core.kernel.take_calls().empty());
  // ... and B gets it when it next runs, though this resume gives it none.
  core.resume({ThreadAction{kC, 0, ResumeKind::Continue, SIGUSR1}, cont_rest()});
  CHECK(core.kernel.take_calls() == "cont 90000000; cont 90000001 sig 12; cont 90000002 sig 10");
}

TEST_CASE("core rules: a signal GDB had delivered that the thread blocked is delivered again, "
          "not reported twice", "[core_rules]") {
  Core core({kA, kB});
  REQUIRE(core.target.insert_breakpoint(BreakpointType::Software, kBreak, 1));
  core.continue_all();
  core.kernel.take_calls();
  core.trap_at(kB, kBreak);
  auto ev = core.next();
  REQUIRE(ev);
  CHECK(core.kernel.take_calls() == "tgkill 90000000 SIGSTOP");
  // GDB: `thread 1`, `signal SIGTRAP`: A, stopped by our SIGSTOP, gets SIGTRAP in its place.
  REQUIRE(core.target.remove_breakpoint(BreakpointType::Software, kBreak, 1));
  core.resume({ThreadAction{kA, 0, ResumeKind::Continue, SIGTRAP}, cont_rest()});
  CHECK(core.kernel.take_calls() == "cont 90000000 sig 5; cont 90000001");
  // A blocked it: the kernel queued it again, as sent by its tracer, and it stops A when
  // unblocked. It goes to the program, and GDB does not hear of it.
  core.kernel.event(kA, stopped_status(SIGTRAP), kBase + 4, SI_USER);
  core.kernel.thread(kA).siginfo.si_pid = ::getpid();
  CHECK_FALSE(core.next().has_value());
  CHECK(core.kernel.take_calls() == "cont 90000000 sig 5");
  // A signal the tracer itself sends (tests do) is news all the same; so is one from anyone else.
  for (const int from : {static_cast<int>(::getpid()), 1}) {
    core.kernel.event(kA, stopped_status(SIGTRAP), kBase + 4, SI_USER);
    core.kernel.thread(kA).siginfo.si_pid = from;
    ev = core.next();
    REQUIRE(ev);
    CHECK(ev->reason == StopReason::Signal);
    CHECK(ev->signal == SIGTRAP);
    core.resume({ThreadAction{kA, 0, ResumeKind::Continue}, cont_rest()});
    core.kernel.take_calls();
  }
}

TEST_CASE("core rules: non-stop: a wildcard resume leaves alone what GDB has not heard of yet",
          "[core_rules]") {
  constexpr Pid kChild = kPid + 100;
  Core core({kA, kB}, Bytes(64, kNop), true);  // (attached in non-stop: both run)
  core.target.set_report_forks(true, true);
  core.kernel.thread(kA).event_message = kChild;
  core.kernel.event(kA, stopped_status(SIGTRAP, PTRACE_EVENT_FORK), kBase + 2);
  core.kernel.born(kChild, kChild, kBase + 2);
  auto ev = core.next();
  REQUIRE(ev);
  REQUIRE(ev->reason == StopReason::Fork);
  core.kernel.take_calls();
  // GDB resumes every thread while that stop is still on its way to it.
  ResumePlan plan{{cont_rest()}};
  plan.unannounced_threads = {kA};
  plan.unannounced_children = {kChild};
  REQUIRE(core.target.resume(plan));
  CHECK(core.kernel.take_calls().empty());
  // Once GDB has it, the same resume runs them.
  core.continue_all();
  CHECK(core.kernel.take_calls() == "cont 90000000; cont 90000100");
}

TEST_CASE("core rules: non-stop: a stop GDB asked for that another event answered says nothing later",
          "[core_rules]") {
  constexpr Pid kChild = kPid + 100;
  Core core({kA, kB}, Bytes(64, kNop), true);  // (attached in non-stop: both run)
  core.target.set_report_forks(true, true);
  core.kernel.thread(kA).event_message = kChild;
  // A forks; before that stop is seen, GDB stops every thread (vCont;t) to step over a
  // breakpoint: our SIGSTOP for A waits in the kernel behind its fork stop.
  core.kernel.event(kA, stopped_status(SIGTRAP, PTRACE_EVENT_FORK), kBase + 2);
  core.kernel.born(kChild, kChild, kBase + 2);
  core.resume({ThreadAction{tracer::kAllThreads, 0, ResumeKind::Stop}});
  CHECK(core.kernel.take_calls() == "tgkill 90000000 SIGSTOP; tgkill 90000001 SIGSTOP");
  auto ev = core.next();
  REQUIRE(ev);
  CHECK(ev->reason == StopReason::Fork);  // the answer to A's stop
  ev = core.next();
  REQUIRE(ev);
  CHECK(ev->tid == kB);
  CHECK(ev->reason == StopReason::Signal);
  CHECK(ev->signal == 0);
  // GDB detaches the child and resumes everything: A's SIGSTOP, ours, comes now and is not
  // reported (GDB would show an unexplained "Thread stopped." and wait for ever).
  REQUIRE(core.target.detach_process(kChild));
  core.continue_all();
  core.kernel.take_calls();
  CHECK_FALSE(core.next().has_value());
  CHECK(core.kernel.take_calls() == "cont 90000000");
  CHECK(core.target.running());
}

TEST_CASE("core rules: a write to a variable under a read and a write watchpoint, DR6 naming the read "
          "one alone (QEMU's TCG does): the write watchpoint is reported, as on hardware",
          "[core_rules]") {
  Core core({kA});
  const Addr var = kBase + 0x20;
  REQUIRE(core.target.insert_breakpoint(BreakpointType::ReadWatch, var, 4));
  REQUIRE(core.target.insert_breakpoint(BreakpointType::WriteWatch, var, 4));
  core.continue_all();
  // The program stores 1 into the variable; the trap's DR6 has slot 0's bit (the read one) only.
  auto memory = core.kernel.memory(kPid);
  REQUIRE(memory);
  REQUIRE((*memory)->write(var, Bytes{1, 0, 0, 0}));
  core.kernel.thread(kA).dr[6] = 0x1;
  core.kernel.event(kA, stopped_status(SIGTRAP), kBase + 5, TRAP_HWBKPT);
  auto ev = core.next();
  REQUIRE(ev);
  CHECK(ev->reason == StopReason::Watchpoint);
  CHECK(ev->watch_kind == tracer::WatchKind::Write);
  CHECK(ev->watch_addr == var);
}
