// A stopped thread as agent expressions and trace collection see it: its registers (GDB's
// numbering, and the whole `g` block) and its process's memory as the program sees it (our
// int3s hidden). What a printf prints is kept for the caller.
#pragma once

#include <string>

#include "tracer/linux/process.hpp"
#include "tracer/linux/registers.hpp"
#include "tracer/linux/thread.hpp"
#include "tracer/trace/experiment.hpp"

namespace tracer {

class ThreadMachine final : public trace::Thread {
 public:
  ThreadMachine(Process& p, LinuxThread& t) : p_(p), t_(t) {}
  Result<std::uint64_t> reg(int regno) override {
    auto bytes = read_one_register(host_register_layout(p_.isa), t_.tid, t_.regs, regno);
    if (!bytes) {
      return std::move(bytes).error();
    }
    return load_u64(*bytes);
  }
  Result<std::uint64_t> read(Addr addr, std::size_t len) override {
    auto bytes = p_.code.read(addr, len);
    if (!bytes) {
      return std::move(bytes).error();
    }
    if (bytes->size() != len) {
      return base::make_error(base::Errc::invalid, "short read");
    }
    return load_u64(*bytes);
  }
  void print(std::string_view text) override { printed += text; }
  Result<Bytes> registers() override { return read_g_registers(host_register_layout(p_.isa), t_.tid, t_.regs); }
  Result<Bytes> read_memory(Addr addr, std::size_t len) override { return p_.code.read(addr, len); }

  std::string printed;

 private:
  Process& p_;
  LinuxThread& t_;
};

}  // namespace tracer
