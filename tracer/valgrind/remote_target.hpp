// A Target that is GDB's side to another stub over an RspLink: registers, memory, breakpoints,
// threads, resuming and stops are asked of the stub, every packet written and every stop reply
// read with protocol/'s one grammar (request_encoding.hpp, parse_stop_reply). It knows nothing
// of what runs the stub: ValgrindTarget starts Valgrind and adds the dbt histories. One process,
// all-stop, no vCont (a step or a signal goes to the thread Hc names).
#pragma once

#include <optional>
#include <set>
#include <string>
#include <vector>

#include "tracer/target.hpp"
#include "tracer/valgrind/rsp_link.hpp"

namespace tracer {

class RemoteTarget : public Target {
 public:
  bool has_process() const override { return link_.has_value(); }
  Pid pid() const override { return pid_; }
  bool attached() const override { return false; }

  std::vector<ThreadInfo> threads() override;
  bool thread_alive(Tid tid) override;

  Result<void> resume(const ResumePlan& plan) override;
  int event_fd() const override { return link_ ? link_->fd() : -1; }
  std::optional<StopEvent> poll() override;
  Result<void> interrupt() override;
  bool running() const override { return running_; }

  Result<std::string> target_description(const std::string& annex) override;
  Result<Bytes> read_registers(Tid tid) override;
  Result<void> write_registers(Tid tid, const Bytes& regs) override;
  Result<Bytes> read_register(Tid tid, int regno) override;
  Result<void> write_register(Tid tid, int regno, const Bytes& value) override;
  arch::x86::Isa isa(Tid tid) override {
    (void)tid;
    return isa_;
  }

  Result<Bytes> read_memory(Addr addr, std::size_t len) override;
  Result<void> write_memory(Addr addr, const Bytes& data) override;

  Result<void> insert_breakpoint(BreakpointType type, Addr addr, int len) override;
  Result<void> remove_breakpoint(BreakpointType type, Addr addr, int len) override;

  // Passed on to the stub (qGetTLSAddr, QCatchSyscalls).
  Result<Addr> tls_address(Tid tid, Addr offset, Addr link_map) override;
  Result<void> set_catch_syscalls(const SyscallCatch& what) override;

  Result<Bytes> auxv() override;
  Result<std::string> exec_file(Pid pid) override;
  Result<LibraryList> libraries() override;  // the dynamic linker's list, read through memory
  Result<Bytes> siginfo(Tid tid) override;
  Result<void> write_siginfo(Tid tid, const Bytes& data) override;

 protected:
  // The stub of process pid answers on link; the program is stopped: how (asked with `?`).
  Result<StopEvent> connect(RspLink link, Pid pid);
  // The link goes (the stub with it); nothing is asked any more.
  void disconnect();
  // A packet to the stub and its reply, while the program is stopped.
  Result<std::string> ask(const std::string& packet);
  // A stop reply the program stopped with (after its own hook below).
  virtual void stopped(StopEvent& event) { (void)event; }
  // The program's instruction set, asked only of a stub that sends no target description
  // (Valgrind's, for i386 programs, unless it shows shadow registers).
  virtual arch::x86::Isa program_isa() = 0;
  // The link closed with no stop reply: how the process ended (nothing: it goes on unlinked).
  virtual std::optional<StopEvent> ended_unannounced() = 0;
  // The process ended (its last stop is reported next).
  virtual void process_ended() { disconnect(); }

 private:
  Result<void> check_stopped() const;  // a process, and it is not running
  Result<std::string> read_xfer(const std::string& object, const std::string& annex);
  Result<void> select_thread(Tid tid);
  Result<void> set_breakpoint(bool insert, BreakpointType type, Addr addr, int len);  // Z or z
  // The stub's target description read: the instruction set and the register sizes.
  Result<void> read_description();
  // Byte offset and size of register regno in `g`, from the target description.
  Result<std::pair<std::size_t, std::size_t>> register_slot(int regno);
  // Every register of tid (`g`) and where regno starts in them.
  Result<std::pair<Bytes, std::size_t>> registers_around(Tid tid, int regno);
  StopEvent stop_from_reply(const std::string& reply);

  std::optional<RspLink> link_;
  Pid pid_ = 0;
  Tid selected_ = 0;
  bool running_ = false;
  bool stepping_ = false;
  std::set<Addr> breakpoints_;
  std::vector<std::size_t> register_sizes_;  // bytes per register in `g` order
  // The description served for a stub that has none: GDB's default for the instruction set
  // (x87, SSE and the Linux orig_eax), the layout such a stub's `g` has.
  std::string own_description_;
  arch::x86::Isa isa_ = arch::x86::Isa::Amd64;
};

}  // namespace tracer
