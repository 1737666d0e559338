// The software collectors on real processes, each test run with SoftStep and SoftEmulate: the
// recorded branches of hand-written code (btrace_code.S) compared with the ones its control
// flow dictates; breakpoints inside traced code, a signal handler, two traced threads; backend
// choice and teardown.
#include <sys/ptrace.h>
#include <sys/user.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "base/log.hpp"
#include "test/support/skip.hpp"
#include "test/tracer/live_support.hpp"
#include "tracer/btrace/history_ring.hpp"

using namespace test_tracer;
using tracer::BranchSample;
using tracer::BtraceBlock;
using tracer::BtraceRead;
using tracer::ResumeKind;
using tracer::StopReason;

namespace {

std::uint64_t sym(const char* name) {
  const auto addr = symbol("btrace", name);
  REQUIRE(addr != 0);
  return addr;
}

std::uint64_t pc_of(int tid) {
  user_regs_struct regs{};
  REQUIRE(::ptrace(PTRACE_GETREGS, tid, nullptr, &regs) == 0);
  return regs.rip;
}

using tracer::Backend;

const char* name_of(Backend b) {
  return b == Backend::Soft ? "soft" : "step";
}

// A launched tracer_btrace stopped at `where` (untraced so far), the given backend chosen.
struct Session {
  tracer::LinuxTarget target;
  int pid = 0;

  explicit Session(const char* where, std::vector<std::string> args = {},
                   Backend backend = Backend::Step) {
    target.set_btrace_backend(backend);
    auto launched = target.launch({prog("btrace"), std::move(args), false, true});
    REQUIRE(launched.ok());
    pid = *launched;
    run_to(where);
    REQUIRE(target.remove_breakpoint(tracer::BreakpointType::Software, sym(where), 1).ok());
  }
  void run_to(const char* where) {
    REQUIRE(target.insert_breakpoint(tracer::BreakpointType::Software, sym(where), 1).ok());
    REQUIRE(target.resume(plan_all()).ok());
    auto ev = wait_stop(target);
    REQUIRE(ev);
    REQUIRE(ev->reason == StopReason::SoftwareBreakpoint);
    REQUIRE(pc_of(ev->tid) == sym(where));
    REQUIRE(target.remove_breakpoint(tracer::BreakpointType::Software, sym(where), 1).ok());
  }
  std::vector<BtraceBlock> delta(int tid) {
    auto* tr = target.branch_tracer(tid);
    REQUIRE(tr != nullptr);
    auto data = tr->read(BtraceRead::Delta, pc_of(tid));
    REQUIRE(data.ok());
    return data->blocks;
  }
};

std::vector<BtraceBlock> expected(const std::vector<BranchSample>& samples, std::uint64_t pc) {
  return tracer::blocks_from_samples(samples, pc, true);
}

}  // namespace

TEST_CASE("software collectors record exactly the taken branches of known code", "[tracer][btrace]") {
  REQUIRE_PTRACE();
  const auto backend = GENERATE(Backend::Step, Backend::Soft);
  INFO("collector " << name_of(backend));
  Session s("bt_run", {}, backend);
  REQUIRE(s.target.enable_btrace(s.pid, {}).ok());
  CHECK(s.target.branch_tracer(s.pid)->stats().backend == name_of(backend));
  s.run_to("bt_end");

  const BranchSample call{sym("bt_call"), sym("bt_leaf")};
  const BranchSample ret{sym("bt_leaf_ret"), sym("bt_after_call")};
  const BranchSample loop{sym("bt_jnz"), sym("bt_loop")};
  const BranchSample jmp{sym("bt_jmp"), sym("bt_jmp_target")};
  // Three calls, the jnz taken twice; rep stosb and the syscall are no branches.
  const std::vector<BranchSample> want{call, ret, loop, call, ret, loop, call, ret, jmp};
  CHECK(s.delta(s.pid) == expected(want, sym("bt_end")));
  CHECK(s.target.branch_tracer(s.pid)->stats().recorded == want.size());

  // Nothing new: the delta is just the start-unknown block at the same pc.
  CHECK(s.delta(s.pid) == expected({}, sym("bt_end")));
  REQUIRE(s.target.kill().ok());
  CHECK(s.target.branch_tracer(s.pid) == nullptr);
}

TEST_CASE("software collectors: breakpoints inside traced code stop it as an untraced run",
          "[tracer][btrace]") {
  REQUIRE_PTRACE();
  const auto backend = GENERATE(Backend::Step, Backend::Soft);
  INFO("collector " << name_of(backend));
  Session s("bt_run", {}, backend);
  REQUIRE(s.target.enable_btrace(s.pid, {}).ok());
  const auto leaf = sym("bt_leaf");
  REQUIRE(s.target.insert_breakpoint(tracer::BreakpointType::Software, leaf, 1).ok());
  const BranchSample call{sym("bt_call"), leaf};
  const BranchSample ret{sym("bt_leaf_ret"), sym("bt_after_call")};
  const BranchSample loop{sym("bt_jnz"), sym("bt_loop")};

  for (int hit = 0; hit < 3; ++hit) {
    REQUIRE(s.target.resume(plan_all()).ok());
    auto ev = wait_stop(s.target);
    REQUIRE(ev);
    CHECK(ev->reason == StopReason::SoftwareBreakpoint);
    CHECK(pc_of(s.pid) == leaf);
    CHECK(raw_byte(s.pid, leaf) == 0xCC);  // still inserted, never seen in the trace
    // The instruction under the int3 ran on the way on: it begins the block of the ret.
    CHECK(s.delta(s.pid) == expected(hit == 0 ? std::vector<BranchSample>{call}
                                              : std::vector<BranchSample>{ret, loop, call},
                                     leaf));
    if (hit < 2) {
      gdb_step_over(s.target, s.pid, leaf);
    }
  }
  // A GDB-style single step from the breakpoint: one instruction, recorded as well.
  REQUIRE(s.target.remove_breakpoint(tracer::BreakpointType::Software, leaf, 1).ok());
  tracer::ThreadAction step;
  step.kind = ResumeKind::Step;
  REQUIRE(s.target.resume(tracer::ResumePlan{{step}}).ok());
  auto ev = wait_stop(s.target);
  REQUIRE(ev);
  CHECK(ev->reason == StopReason::SingleStep);
  CHECK(pc_of(s.pid) == leaf + 1);
  s.run_to("bt_end");
  const BranchSample jmp{sym("bt_jmp"), sym("bt_jmp_target")};
  CHECK(s.delta(s.pid) == expected({ret, jmp}, sym("bt_end")));

  // Disabled: the thread runs free to its exit and the history is gone.
  REQUIRE(s.target.disable_btrace(s.pid).ok());
  CHECK(s.target.branch_tracer(s.pid) == nullptr);
  CHECK_FALSE(s.target.disable_btrace(s.pid).ok());
  REQUIRE(s.target.resume(plan_all()).ok());
  ev = wait_stop(s.target);
  REQUIRE(ev);
  CHECK(ev->reason == StopReason::Signal);  // bt_raise's SIGUSR1 comes next
  REQUIRE(s.target.resume(plan_all(ResumeKind::Continue, SIGUSR1)).ok());
  ev = wait_stop(s.target);
  REQUIRE(ev);
  CHECK(ev->reason == StopReason::Exited);
}

TEST_CASE("software collectors: a signal handler is entered and left with consistent samples",
          "[tracer][btrace]") {
  REQUIRE_PTRACE();
  const auto backend = GENERATE(Backend::Step, Backend::Soft);
  INFO("collector " << name_of(backend));
  Session s("bt_raise", {}, backend);
  REQUIRE(s.target.enable_btrace(s.pid, {}).ok());
  REQUIRE(s.target.insert_breakpoint(tracer::BreakpointType::Software, sym("bt_raise_end"), 1).ok());
  REQUIRE(s.target.resume(plan_all()).ok());
  auto ev = wait_stop(s.target);
  REQUIRE(ev);
  REQUIRE(ev->reason == StopReason::Signal);  // reported as without tracing
  CHECK(ev->signal == SIGUSR1);
  CHECK(pc_of(s.pid) == sym("bt_raise_after"));

  REQUIRE(s.target.resume(plan_all(ResumeKind::Continue, SIGUSR1)).ok());
  ev = wait_stop(s.target);
  REQUIRE(ev);
  REQUIRE(ev->reason == StopReason::SoftwareBreakpoint);
  const auto blocks = s.delta(s.pid);
  // Newest first: back at the interrupted code, the restorer's rt_sigreturn, the handler,
  // and before it the tgkill system call as the last instruction that ran.
  REQUIRE(blocks.size() == 4);
  CHECK(blocks[0] == BtraceBlock{sym("bt_raise_after"), sym("bt_raise_end")});
  const auto restorer = s.target.read_memory(blocks[1].end, 2);
  REQUIRE(restorer.ok());
  CHECK(*restorer == tracer::Bytes{0x0f, 0x05});  // the syscall of rt_sigreturn
  CHECK(blocks[2] == BtraceBlock{sym("bt_handler"), sym("bt_handler_ret")});
  CHECK(blocks[3] == BtraceBlock{0, sym("bt_raise_syscall")});
  CHECK(blocks[1].begin < blocks[1].end);
}

TEST_CASE("software collectors: two traced threads both make progress and are both recorded",
          "[tracer][btrace]") {
  REQUIRE_PTRACE();
  const auto backend = GENERATE(Backend::Step, Backend::Soft);
  INFO("collector " << name_of(backend));
  Session s("bt_ready", {"threads"}, backend);
  std::vector<int> workers;
  for (const auto& th : s.target.threads()) {
    if (th.tid != s.pid) {
      workers.push_back(th.tid);
    }
  }
  INFO("threads: " << s.target.threads().size());
  REQUIRE(workers.size() == 2);
  for (int tid : workers) {
    REQUIRE(s.target.enable_btrace(tid, {}).ok());
  }
  REQUIRE(s.target.insert_breakpoint(tracer::BreakpointType::Software, sym("bt_work_end"), 1).ok());
  const auto leaf = sym("bt_leaf");
  auto calls = [&](const std::vector<BtraceBlock>& blocks) {
    return std::count_if(blocks.begin(), blocks.end(), [&](const BtraceBlock& b) { return b.begin == leaf; });
  };
  std::map<int, long> seen;
  std::vector<int> done;
  while (done.size() < 2) {
    if (!done.empty()) {
      gdb_step_over(s.target, done.back(), sym("bt_work_end"));
    }
    REQUIRE(s.target.resume(plan_all()).ok());
    auto ev = wait_stop(s.target, std::chrono::milliseconds(60000));
    REQUIRE(ev);
    REQUIRE(ev->reason == StopReason::SoftwareBreakpoint);
    CHECK(pc_of(ev->tid) == sym("bt_work_end"));
    done.push_back(ev->tid);
    for (int tid : workers) {
      if (s.target.branch_tracer(tid) != nullptr) {
        seen[tid] += calls(s.delta(tid));
      }
    }
    if (done.size() == 1) {
      // Fair: the other worker was stepped along, not left waiting for the first to finish.
      const int other = workers[0] == ev->tid ? workers[1] : workers[0];
      CHECK(seen[other] > 0);
    }
  }
  CHECK(done[0] != done[1]);
  CHECK(seen[workers[0]] == 300);
  CHECK(seen[workers[1]] == 300);
  REQUIRE(s.target.remove_breakpoint(tracer::BreakpointType::Software, sym("bt_work_end"), 1).ok());
  REQUIRE(s.target.resume(plan_all()).ok());
  auto ev = wait_stop(s.target);
  REQUIRE(ev);
  CHECK(ev->reason == StopReason::Exited);
  CHECK(s.target.branch_tracer(workers[0]) == nullptr);  // torn down with the threads
}

TEST_CASE("btrace backends: each as asked, auto falls back to soft, errors say what to use",
          "[tracer][btrace]") {
  REQUIRE_PTRACE();
  Session s("bt_run");
  s.target.set_btrace_backend(tracer::Backend::Soft);
  REQUIRE(s.target.enable_btrace(s.pid, {}).ok());
  CHECK(s.target.branch_tracer(s.pid)->stats().backend == "soft");
  REQUIRE(s.target.disable_btrace(s.pid).ok());
  s.target.set_btrace_backend(tracer::Backend::Bts);
  auto bts = s.target.enable_btrace(s.pid, {});
  if (!bts.ok()) {
    CHECK(bts.error().message().find("BTS") != std::string::npos);
  } else {
    CHECK(s.target.branch_tracer(s.pid)->stats().backend == "bts");
    REQUIRE(s.target.disable_btrace(s.pid).ok());
  }
  s.target.set_btrace_backend(tracer::Backend::Auto);
  REQUIRE(s.target.enable_btrace(s.pid, {}).ok());
  if (!bts.ok()) {
    CHECK(s.target.branch_tracer(s.pid)->stats().backend == "soft");
  }
  CHECK(s.target.enable_btrace(s.pid, {}).error().message() == "Btrace already enabled.");
  CHECK(s.target.enable_btrace(424242, {}).error().code == base::Errc::no_thread);
}

namespace {

// Every executable mapping of pid, byte for byte as it is in memory (int3s included).
std::map<std::uint64_t, std::string> raw_code(int pid) {
  std::map<std::uint64_t, std::string> out;
  std::ifstream maps("/proc/" + std::to_string(pid) + "/maps");
  std::ifstream mem("/proc/" + std::to_string(pid) + "/mem", std::ios::binary);
  for (std::string line; std::getline(maps, line);) {
    unsigned long lo = 0, hi = 0;
    char perms[8] = {};
    if (std::sscanf(line.c_str(), "%lx-%lx %4s", &lo, &hi, perms) != 3 || perms[2] != 'x' ||
        line.find("[vsyscall]") != std::string::npos) {
      continue;
    }
    std::string bytes(hi - lo, '\0');
    mem.clear();
    mem.seekg(static_cast<std::streamoff>(lo));
    mem.read(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    out[lo] = bytes;
  }
  return out;
}

}  // namespace

TEST_CASE("SoftEmulate: GDB's breakpoint on a branch it patched stops; reads never show its int3s; "
          "record stop leaves none",
          "[tracer][btrace][soft]") {
  REQUIRE_PTRACE();
  Session s("bt_run", {}, Backend::Soft);
  const auto before = raw_code(s.pid);
  REQUIRE(s.target.enable_btrace(s.pid, {}).ok());
  // bt_jnz is a branch: passing it once plants SoftEmulate's int3 on it.
  const auto jnz = sym("bt_jnz");
  const auto leaf = sym("bt_leaf");
  s.run_to("bt_leaf");
  s.run_to("bt_after_call");
  s.run_to("bt_leaf");
  CHECK(raw_byte(s.pid, jnz) == 0xCC);
  auto code = s.target.read_memory(jnz, 2);
  REQUIRE(code.ok());
  CHECK((*code)[0] != 0xCC);  // what the program wrote, not our int3
  // GDB puts its own breakpoint on that very branch: the thread stops there.
  REQUIRE(s.target.insert_breakpoint(tracer::BreakpointType::Software, jnz, 1).ok());
  REQUIRE(s.target.resume(plan_all()).ok());
  auto ev = wait_stop(s.target);
  REQUIRE(ev);
  CHECK(ev->reason == StopReason::SoftwareBreakpoint);
  CHECK(pc_of(s.pid) == jnz);
  // GDB's z0: the int3 stays, ours; the thread performs the branch and goes on.
  REQUIRE(s.target.remove_breakpoint(tracer::BreakpointType::Software, jnz, 1).ok());
  CHECK(raw_byte(s.pid, jnz) == 0xCC);
  s.run_to("bt_end");
  const BranchSample call{sym("bt_call"), leaf};
  const BranchSample ret{sym("bt_leaf_ret"), sym("bt_after_call")};
  const BranchSample loop{jnz, sym("bt_loop")};
  const BranchSample jmp{sym("bt_jmp"), sym("bt_jmp_target")};
  CHECK(s.delta(s.pid) == expected({call, ret, loop, call, ret, loop, call, ret, jmp}, sym("bt_end")));
  // Record stop: every byte of code is what it was before tracing.
  REQUIRE(s.target.disable_btrace(s.pid).ok());
  CHECK(raw_code(s.pid) == before);
}
