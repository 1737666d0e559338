// An in-memory Target for handler, session and fuzz tests: one process, a few threads,
// 64 KiB of memory at kMemBase, a register file, and stops the test queues.
#pragma once

#include <algorithm>
#include <deque>
#include <map>
#include <memory>
#include <set>

#include "tracer/btrace/ring_buffer_tracer.hpp"
#include "tracer/host_io.hpp"
#include "tracer/target.hpp"
#include "tracer/trace/experiment.hpp"

namespace test_support {

class FakeTarget : public tracer::Target {
 public:
  static constexpr tracer::Addr kMemBase = 0x400000;
  static constexpr std::size_t kMemSize = 0x10000;
  static constexpr std::size_t kRegBytes = 560;

  FakeTarget() : memory(kMemSize, 0), regs(kRegBytes, 0) {
    for (std::size_t i = 0; i < kMemSize; ++i) {
      memory[i] = static_cast<std::uint8_t>(i * 7);
    }
  }

  // --- what tests look at or set ---
  bool alive = true;
  bool was_attached = false;
  tracer::Pid the_pid = 100;
  std::vector<tracer::Tid> tids{100, 101};
  std::vector<std::uint8_t> memory;
  std::vector<std::uint8_t> regs;
  std::set<std::pair<int, tracer::Addr>> breakpoints;  // (type, addr)
  std::deque<tracer::StopEvent> pending;
  std::vector<tracer::ResumePlan> resumes;
  std::set<int> passed;
  tracer::Bytes siginfo_bytes = tracer::Bytes(128, 0);
  int interrupts = 0;
  bool is_running = false;
  bool detached = false;
  bool killed = false;

  // What the fake says it can do (all by default), and what the server set of it.
  tracer::Capabilities caps = tracer::Capabilities::all();
  bool non_stop = false;
  bool report_exec = false, report_forks = false, report_vforks = false;
  bool report_thread_exits = false, report_no_resumed = false;
  std::map<tracer::Addr, std::vector<tracer::Bytes>> commands;
  tracer::Capabilities capabilities() const override { return caps; }
  tracer::Result<void> set_non_stop(bool on) override {
    if (on && !caps.non_stop) {
      return base::make_error(base::Errc::unsupported, "non-stop mode is not supported");
    }
    non_stop = on;
    return base::success();
  }
  void set_report_exec(bool on) override { report_exec = on; }
  void set_report_forks(bool fork, bool vfork) override {
    report_forks = fork;
    report_vforks = vfork;
  }
  void set_report_thread_exits(bool on) override { report_thread_exits = on; }
  void set_report_no_resumed(bool on) override { report_no_resumed = on; }
  std::vector<tracer::ThreadOptionsRule> thread_options;  // every rule set, in order
  tracer::Result<void> set_thread_options(const std::vector<tracer::ThreadOptionsRule>& rules) override {
    thread_options.insert(thread_options.end(), rules.begin(), rules.end());
    return base::success();
  }
  tracer::Result<void> set_breakpoint_commands(tracer::Addr addr, const std::vector<tracer::Bytes>& c) override {
    commands[addr] = c;
    return base::success();
  }

  // A trace experiment of its own; placed_sites: its int3s as last placed.
  tracer::trace::Experiment trace_experiment;
  std::vector<tracer::Addr> placed_sites;
  int placements = 0;
  tracer::trace::Experiment* experiment() override { return caps.tracepoints ? &trace_experiment : nullptr; }
  std::optional<std::uint32_t> fast_tracepoint_min_length() override {
    return caps.fast_tracepoints ? std::optional<std::uint32_t>(fast_min_length) : std::nullopt;
  }
  std::uint32_t fast_min_length = 0;  // 5: an in-process agent is loaded
  tracer::Result<void> place_tracepoints() override {
    ++placements;
    placed_sites = trace_experiment.sites();
    return base::success();
  }

  std::optional<tracer::LaunchSpec> last_launch;
  tracer::Result<tracer::Pid> launch(const tracer::LaunchSpec& spec) override {
    last_launch = spec;
    if (spec.program == "/nonexistent") {
      return base::Error{base::Errc::system, 2, "cannot run '/nonexistent'"};
    }
    alive = true;
    return the_pid;
  }
  tracer::Result<void> attach(tracer::Pid pid) override {
    alive = true;
    was_attached = true;
    the_pid = pid;
    return base::success();
  }
  tracer::Result<void> detach() override {
    detached = true;
    alive = false;
    return base::success();
  }
  tracer::Result<void> kill() override {
    killed = true;
    alive = false;
    return base::success();
  }
  bool has_process() const override { return alive; }
  tracer::Pid pid() const override { return the_pid; }
  bool attached() const override { return was_attached; }

  std::vector<tracer::ThreadInfo> threads() override {
    std::vector<tracer::ThreadInfo> out;
    if (alive) {
      for (auto tid : tids) {
        out.push_back({the_pid, tid, "fake", 0});
      }
    }
    return out;
  }
  bool thread_alive(tracer::Tid tid) override {
    return alive && std::find(tids.begin(), tids.end(), tid) != tids.end();
  }

  tracer::Result<void> resume(const tracer::ResumePlan& plan) override {
    if (!alive) {
      return base::make_error(base::Errc::no_process, "no process");
    }
    resumes.push_back(plan);
    is_running = true;
    return base::success();
  }
  int event_fd() const override { return -1; }
  std::optional<tracer::StopEvent> poll() override {
    if (!is_running || pending.empty()) {
      return std::nullopt;
    }
    auto ev = pending.front();
    pending.pop_front();
    is_running = false;
    if (ev.reason == tracer::StopReason::Exited || ev.reason == tracer::StopReason::Killed) {
      alive = false;
    }
    return ev;
  }
  tracer::Result<void> interrupt() override {
    ++interrupts;
    tracer::StopEvent ev;
    ev.pid = the_pid;
    ev.tid = tids.front();
    ev.signal = 2;
    pending.push_back(ev);
    return base::success();
  }
  bool running() const override { return is_running; }
  void set_pass_signals(const std::set<int>& s) override { passed = s; }

  tracer::Result<std::string> target_description(const std::string& annex) override {
    if (annex != "target.xml") {
      return base::make_error(base::Errc::invalid, "no such annex");
    }
    return std::string("<target><architecture>i386:x86-64</architecture></target>");
  }
  tracer::Result<tracer::Bytes> read_registers(tracer::Tid tid) override {
    if (!thread_alive(tid)) {
      return base::make_error(base::Errc::no_thread, "no thread");
    }
    return regs;
  }
  tracer::Result<void> write_registers(tracer::Tid tid, const tracer::Bytes& r) override {
    if (!thread_alive(tid)) {
      return base::make_error(base::Errc::no_thread, "no thread");
    }
    std::copy_n(r.begin(), std::min(r.size(), regs.size()), regs.begin());
    return base::success();
  }
  tracer::Result<tracer::Bytes> read_register(tracer::Tid tid, int regno) override {
    if (!thread_alive(tid) || regno < 0 || regno > 16) {
      return base::make_error(base::Errc::invalid, "bad register");
    }
    return tracer::Bytes(regs.begin() + regno * 8, regs.begin() + regno * 8 + 8);
  }
  // Registers 0..16 are 8 bytes each from the start of the block (16: the pc).
  tracer::Result<RegisterPlace> register_place(tracer::Tid, int regno) override {
    if (regno < 0 || regno > 16) {
      return base::make_error(base::Errc::invalid, "bad register");
    }
    return RegisterPlace{static_cast<std::size_t>(regno) * 8, 8, kRegBytes};
  }
  tracer::Result<void> write_register(tracer::Tid tid, int regno, const tracer::Bytes& v) override {
    if (!thread_alive(tid) || regno < 0 || regno > 16 || v.size() != 8) {
      return base::make_error(base::Errc::invalid, "bad register");
    }
    std::copy(v.begin(), v.end(), regs.begin() + regno * 8);
    return base::success();
  }

  tracer::Result<tracer::Bytes> read_memory(tracer::Addr addr, std::size_t len) override {
    if (addr < kMemBase || addr >= kMemBase + kMemSize) {
      return base::Error{base::Errc::system, 14, "unreadable"};
    }
    std::size_t off = addr - kMemBase;
    std::size_t n = std::min(len, kMemSize - off);
    return tracer::Bytes(memory.begin() + static_cast<std::ptrdiff_t>(off),
                         memory.begin() + static_cast<std::ptrdiff_t>(off + n));
  }
  tracer::Result<void> write_memory(tracer::Addr addr, const tracer::Bytes& data) override {
    if (addr < kMemBase || addr + data.size() > kMemBase + kMemSize || addr + data.size() < addr) {
      return base::Error{base::Errc::system, 14, "unwritable"};
    }
    std::copy(data.begin(), data.end(), memory.begin() + static_cast<std::ptrdiff_t>(addr - kMemBase));
    return base::success();
  }

  tracer::Result<void> insert_breakpoint(tracer::BreakpointType type, tracer::Addr addr, int) override {
    if (type == tracer::BreakpointType::ReadWatch) {
      return base::make_error(base::Errc::unsupported, "no read watchpoints");
    }
    breakpoints.insert({static_cast<int>(type), addr});
    return base::success();
  }
  tracer::Result<void> remove_breakpoint(tracer::BreakpointType type, tracer::Addr addr, int) override {
    breakpoints.erase({static_cast<int>(type), addr});
    return base::success();
  }

  tracer::Result<tracer::Bytes> auxv() override { return tracer::Bytes(32, 0x11); }
  tracer::Result<std::string> exec_file(tracer::Pid) override { return std::string("/fake/prog"); }
  tracer::Result<tracer::LibraryList> libraries() override {
    tracer::LibraryList list;
    list.main_lm = 0x1000;
    list.libraries.push_back({"/lib/libc.so.6", 0x2000, 0x7f0000, 0x7f1000, 0, 0x1000});
    list.libraries.push_back({"/lib/libm.so.6", 0x3000, 0x7e0000, 0x7e1000, 0, 0x2000});
    list.libraries.push_back({"/lib/dlmopened.so", 0x4000, 0x7d0000, 0x7d1000, 0x9000, 0});  // its own namespace
    return list;
  }
  // Branch tracing: a RingBufferTracer per thread that tests feed with record().
  std::map<tracer::Tid, std::unique_ptr<tracer::RingBufferTracer>> tracers;
  bool btrace_available = true;
  std::string problem;
  std::string bts_problem() const override { return problem; }
  tracer::Result<void> enable_btrace(tracer::Tid tid, const tracer::BtraceConfig& config) override {
    if (!btrace_available) {
      problem = "fake backend unavailable: no such device";
      return base::make_error(base::Errc::unsupported, problem);
    }
    if (tracers.count(tid) != 0) {
      return base::make_error(base::Errc::invalid, "Btrace already enabled.");
    }
    tracers[tid] = std::make_unique<tracer::RingBufferTracer>("fake", config);
    return base::success();
  }
  tracer::Result<void> disable_btrace(tracer::Tid tid) override {
    tracers.erase(tid);
    return base::success();
  }
  tracer::BranchTracer* branch_tracer(tracer::Tid tid) override {
    auto it = tracers.find(tid);
    return it == tracers.end() ? nullptr : it->second.get();
  }

  // qGetTLSAddr: the block of a thread is at 0x7000'0000 + tid * 0x1000; link map 0xbad fails.
  std::string thread_db_search_path;
  tracer::Result<tracer::Addr> tls_address(tracer::Tid tid, tracer::Addr offset, tracer::Addr link_map) override {
    if (link_map == 0xbad) {
      return base::make_error(base::Errc::invalid, "no thread-local storage in that module");
    }
    return 0x7000'0000 + static_cast<tracer::Addr>(tid) * 0x1000 + offset;
  }
  void set_thread_db_search_path(const std::string& path) override { thread_db_search_path = path; }
  std::map<tracer::Addr, std::vector<tracer::Bytes>> conditions;  // Z0 ;X conditions by address
  tracer::Result<void> set_breakpoint_conditions(tracer::Addr addr, const std::vector<tracer::Bytes>& c) override {
    conditions[addr] = c;
    return base::success();
  }
  tracer::SyscallCatch catch_syscalls;  // the last QCatchSyscalls
  tracer::Result<void> set_catch_syscalls(const tracer::SyscallCatch& what) override {
    catch_syscalls = what;
    return base::success();
  }
  tracer::Result<tracer::Bytes> siginfo(tracer::Tid) override { return siginfo_bytes; }
  tracer::Result<void> write_siginfo(tracer::Tid, const tracer::Bytes& d) override {
    siginfo_bytes = d;
    return base::success();
  }
};

// Files the tests name: "/fake/prog" holds 10000 bytes; everything else is ENOENT.
class FakeHostIo : public tracer::HostIo {
 public:
  tracer::Bytes content = make_content();
  std::set<int> open_fds;
  int setfs_pid = -1;

  static tracer::Bytes make_content() {
    tracer::Bytes b(10000);
    for (std::size_t i = 0; i < b.size(); ++i) {
      b[i] = static_cast<std::uint8_t>(i);
    }
    return b;
  }
  base::Result<void> setfs(tracer::Pid pid) override {
    setfs_pid = pid;
    return base::success();
  }
  base::Result<int> open(const std::string& path, int, int) override {
    if (path != "/fake/prog") {
      return base::sys_error("open", 2);
    }
    int fd = 3 + static_cast<int>(open_fds.size());
    open_fds.insert(fd);
    return fd;
  }
  base::Result<tracer::Bytes> pread(int fd, std::size_t count, std::uint64_t offset) override {
    if (!open_fds.count(fd)) {
      return base::sys_error("pread", 9);
    }
    if (offset >= content.size()) {
      return tracer::Bytes{};
    }
    std::size_t n = std::min<std::size_t>(count, content.size() - offset);
    return tracer::Bytes(content.begin() + static_cast<std::ptrdiff_t>(offset),
                         content.begin() + static_cast<std::ptrdiff_t>(offset + n));
  }
  base::Result<std::size_t> pwrite(int, std::uint64_t, const tracer::Bytes&) override {
    return base::sys_error("pwrite", 30);
  }
  base::Result<void> close(int fd) override {
    if (!open_fds.erase(fd)) {
      return base::sys_error("close", 9);
    }
    return base::success();
  }
  base::Result<tracer::HostStat> fstat(int fd) override {
    if (!open_fds.count(fd)) {
      return base::sys_error("fstat", 9);
    }
    tracer::HostStat st;
    st.size = content.size();
    st.mode = 0100755;
    return st;
  }
  // The one file, /fake/prog, and a link to it, /link.
  base::Result<tracer::HostStat> stat(const std::string& path, bool follow_links) override {
    if (path != "/fake/prog" && path != "/link") {
      return base::sys_error("stat", 2);
    }
    tracer::HostStat st;
    st.size = content.size();
    st.mode = path == "/link" && !follow_links ? 0120777 : 0100755;
    return st;
  }
  base::Result<std::string> readlink(const std::string&) override { return base::sys_error("readlink", 22); }
  base::Result<void> unlink(const std::string&) override { return base::sys_error("unlink", 1); }
  void end_session() override {
    open_fds.clear();
    setfs_pid = 0;
  }
  // info os: one listening socket; the other tables empty.
  base::Result<std::vector<tracer::OsRow>> os_data(const std::string& type) override {
    if (type == "sockets") {
      return std::vector<tracer::OsRow>{{{"local address", "0.0.0.0"}, {"local port", "2345"}}};
    }
    return std::vector<tracer::OsRow>{};
  }
};

}  // namespace test_support
