// A CollectorHost over plain maps: code and stack bytes, one register set per thread, the
// int3s planted. For collector unit tests without a process.
#pragma once

#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "tracer/btrace/collector.hpp"

namespace test_support {

class FakeCollectorHost final : public tracer::CollectorHost {
 public:
  std::map<tracer::Addr, std::uint8_t> memory;  // byte by byte; absent bytes are unmapped
  std::map<tracer::Tid, arch::x86::Gprs> regs;
  std::map<tracer::Tid, int> si_codes;
  std::set<tracer::Addr> planted;
  std::vector<tracer::MappedObject> maps;  // for --btrace-scope; none: nothing is mapped
  std::string exe = "/prog";
  std::unique_ptr<tracer::RecorderPort> next_port;  // what fake_port_maker() gives for it, once
  bool catching_syscalls = false;

  void load(tracer::Addr addr, const tracer::Bytes& bytes) {
    for (std::size_t i = 0; i < bytes.size(); ++i) {
      memory[addr + i] = bytes[i];
    }
  }
  base::Result<tracer::Addr> pc(tracer::Tid tid) override { return regs[tid][arch::x86::kRip]; }
  base::Result<tracer::Bytes> read_code(tracer::Addr addr, std::size_t len) override {
    tracer::Bytes out;
    for (std::size_t i = 0; i < len; ++i) {
      auto it = memory.find(addr + i);
      if (it == memory.end()) {
        break;
      }
      out.push_back(it->second);
    }
    if (out.empty() && len > 0) {
      return base::make_error(base::Errc::system, "unmapped");
    }
    return out;
  }
  base::Result<int> stop_si_code(tracer::Tid tid) override { return si_codes[tid]; }
  bool is_breakpoint_site(tracer::Addr addr) const override { return planted.count(addr) != 0; }
  base::Result<arch::x86::Gprs> registers(tracer::Tid tid) override { return regs[tid]; }
  base::Result<void> set_registers(tracer::Tid tid, const arch::x86::Gprs& gpr) override {
    regs[tid] = gpr;
    return base::success();
  }
  base::Result<void> write_memory(tracer::Addr addr, const tracer::Bytes& data) override {
    for (std::size_t i = 0; i < data.size(); ++i) {
      if (memory.count(addr + i) == 0) {
        return base::make_error(base::Errc::system, "unmapped");
      }
    }
    load(addr, data);
    return base::success();
  }
  base::Result<tracer::MappedObject> mapped_object(tracer::Addr addr) override {
    for (const auto& m : maps) {
      if (m.start <= addr && addr < m.end) {
        return m;
      }
    }
    return base::make_error(base::Errc::invalid, "nothing mapped there");
  }
  std::string executable() override { return exe; }
  bool stops_at_syscalls() const override { return catching_syscalls; }
  base::Result<tracer::Planted> plant(tracer::Addr addr, tracer::Addr /*run_start*/,
                                      std::span<const std::uint8_t> /*run_code*/) override {
    if (memory.count(addr) == 0) {
      return base::make_error(base::Errc::system, "unmapped");
    }
    return planted.insert(addr).second ? tracer::Planted::Fresh : tracer::Planted::Present;
  }
};

// The setup's recorder port for a FakeCollectorHost: its next_port (nullptr: no recorder there).
inline tracer::RecorderPortMaker fake_port_maker() {
  return [](tracer::CollectorHost& host) -> std::unique_ptr<tracer::RecorderPort> {
    auto* fake = dynamic_cast<FakeCollectorHost*>(&host);
    return fake != nullptr ? std::move(fake->next_port) : nullptr;
  };
}

}  // namespace test_support
