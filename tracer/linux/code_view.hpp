// What a collector sees of one process through the seam (CollectorHost): pcs, registers, code
// with our int3s hidden, the si_code of a thread's stop, and int3s of its own.
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

  base::Result<arch::x86::Gprs> registers(Tid tid) override {
    LinuxThread* t = p_.find(tid);
    if (t == nullptr) {
      return base::make_error(base::Errc::no_thread, "no thread " + std::to_string(tid));
    }
    auto raw = t->regs.gprs(tid);
    if (!raw) {
      return std::move(raw).error();
    }
    return (*raw)->gpr;
  }
  base::Result<void> set_registers(Tid tid, const arch::x86::Gprs& gpr) override {
    LinuxThread* t = p_.find(tid);
    if (t == nullptr) {
      return base::make_error(base::Errc::no_thread, "no thread " + std::to_string(tid));
    }
    return t->regs.store(tid, arch::x86::RawRegisters{gpr, {}}, false);
  }
  base::Result<void> write_memory(Addr addr, const Bytes& data) override {
    Bytes bytes = data;
    p_.sites.absorb_write(addr, bytes);
    return p_.memory.write(addr, bytes);
  }
  base::Result<void> plant(Addr addr) override {
    if (p_.sites.contains(addr)) {
      p_.sites.add(addr, 0, SiteOwner::Collector);  // the int3 is there: one more owner
      return base::success();
    }
    auto original = p_.memory.read(addr, 1);
    if (!original) {
      return std::move(original).error();
    }
    if (auto ok = p_.memory.write(addr, Bytes{kInt3}); !ok) {
      return ok;
    }
    p_.sites.add(addr, (*original)[0], SiteOwner::Collector);
    return base::success();
  }

 private:
  Process& p_;
};

}  // namespace tracer
