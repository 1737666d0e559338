// What a collector sees of one process through the seam (CollectorHost): pcs, code with our
// int3s hidden, and the si_code of a thread's stop.
#pragma once

#include "tracer/btrace/collector.hpp"
#include "tracer/linux/process.hpp"
#include "tracer/linux/ptrace_calls.hpp"

namespace tracer {

class ProcessCodeView final : public CollectorHost {
 public:
  explicit ProcessCodeView(Process& p) : p_(p) {}

  base::Result<Addr> pc(Tid tid) override {
    LinuxThread* t = p_.find(tid);
    if (t == nullptr) {
      return base::make_error(base::Errc::no_thread, "no thread " + std::to_string(tid));
    }
    return t->regs.pc(tid);
  }
  base::Result<Bytes> read_code(Addr addr, std::size_t len) override {
    auto bytes = p_.memory.read(addr, len);
    if (bytes) {
      p_.sites.hide(addr, *bytes);
    }
    return bytes;
  }
  base::Result<int> stop_si_code(Tid tid) override {
    auto si = pt::get_siginfo(tid);
    if (!si) {
      return std::move(si).error();
    }
    return si->si_code;
  }
  bool is_breakpoint_site(Addr addr) const override { return p_.sites.contains(addr); }

 private:
  Process& p_;
};

}  // namespace tracer
