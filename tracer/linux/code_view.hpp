// What a collector sees of one process through the seam (CollectorHost): pcs, registers, code
// with our int3s hidden, the si_code of a thread's stop, and int3s of its own.
#pragma once

#include <algorithm>
#include <functional>
#include <memory>

#include "tracer/btrace/collector.hpp"
#include "tracer/linux/procfs.hpp"
#include "tracer/linux/process.hpp"

namespace tracer {

class ProcessCodeView final : public CollectorHost {
 public:
  explicit ProcessCodeView(Process& p) : p_(p) {}
  // The process itself, for what a collector's own layer does with it on Linux.
  Process& process() const { return p_; }

  base::Result<Addr> pc(Tid tid) override {
    LinuxThread* t = p_.find(tid);
    if (t == nullptr) {
      return base::make_error(base::Errc::no_thread, "no thread " + std::to_string(tid));
    }
    return t->regs.pc(tid);
  }
  base::Result<Bytes> read_code(Addr addr, std::size_t len) override { return p_.code.read(addr, len); }
  base::Result<int> stop_si_code(Tid tid) override {
    auto si = p_.kernel.get_siginfo(tid);
    if (!si) {
      return std::move(si).error();
    }
    return si->si_code;
  }
  bool is_breakpoint_site(Addr addr) const override { return p_.code.contains(addr); }
  arch::x86::Isa isa() const override { return p_.isa; }

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
  base::Result<MappedObject> mapped_object(Addr addr) override { return procfs::mapping_at(p_.pid, addr); }
  std::string executable() override { return procfs::executable(p_.pid); }
  bool stops_at_syscalls() const override { return p_.catch_syscalls.enabled; }
  base::Result<void> write_memory(Addr addr, const Bytes& data) override { return p_.code.write(addr, data); }
  base::Result<Planted> plant(Addr addr, Addr run_start, std::span<const std::uint8_t> run_code) override {
    if (p_.code.lifted() == addr) {
      p_.code.claim(addr, SiteOwner::Collector);  // its original is in memory for a step-over
      return Planted::Present;
    }
    // One read checks the run and the int3 at its end.
    auto now = p_.code.read_raw(run_start, run_code.size() + 1);
    if (!now) {
      return std::move(now).error();
    }
    if (now->size() != run_code.size() + 1) {
      return base::make_error(base::Errc::system, "code unreadable");
    }
    const std::uint8_t at = now->back();
    now->pop_back();
    p_.code.hide(run_start, *now);
    if (!std::equal(now->begin(), now->end(), run_code.begin(), run_code.end())) {
      return Planted::Stale;  // the run itself changed
    }
    if (p_.code.contains(addr)) {
      if (at == kInt3) {
        p_.code.claim(addr, SiteOwner::Collector);  // one more owner of the int3 there
        return Planted::Present;
      }
      // Our int3 is gone (code rewritten, a library mapped again): whatever is there now is
      // code we have not decoded; the collector lets go of the site (nothing of ours is there).
      (void)p_.code.unplant(addr, SiteOwner::Collector);
      return Planted::Stale;
    }
    auto planted = p_.code.plant(addr, SiteOwner::Collector);
    if (!planted) {
      return std::move(planted).error();
    }
    return Planted::Fresh;
  }

 private:
  Process& p_;
};

}  // namespace tracer
