// PerfBts: the CPU check, opening the event, and reads that turn the ring into blocks.
#include "tracer/btrace/perf_bts.hpp"

#include <cpuid.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstring>
#include <utility>

#include "tracer/backend.hpp"
#include "tracer/btrace/bts_decode.hpp"

namespace tracer {

namespace {


// Family 6 models whose BTS records wrong `from` addresses after power-state changes
// (erratum AAJ122): Nehalem, Westmere, Sandy Bridge, Ivy Bridge.
constexpr std::array<unsigned, 10> kAaj122Models = {0x1a, 0x1e, 0x1f, 0x2e, 0x25,
                                                    0x2c, 0x2f, 0x2a, 0x2d, 0x3a};

std::string hex(unsigned value) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%x", value);
  return buf;
}

}  // namespace

CpuIdentity host_cpu() {
  CpuIdentity cpu;
  unsigned eax = 0;
  unsigned ebx = 0;
  unsigned ecx = 0;
  unsigned edx = 0;
  if (__get_cpuid(0, &eax, &ebx, &ecx, &edx) == 0) {
    return cpu;
  }
  char vendor[13] = {};
  std::memcpy(vendor, &ebx, 4);
  std::memcpy(vendor + 4, &edx, 4);
  std::memcpy(vendor + 8, &ecx, 4);
  cpu.vendor = vendor;
  if (eax < 1 || __get_cpuid(1, &eax, &ebx, &ecx, &edx) == 0) {
    return cpu;
  }
  cpu.family = (eax >> 8) & 0xf;
  cpu.model = (eax >> 4) & 0xf;
  if (cpu.family == 0xf) {
    cpu.family += (eax >> 20) & 0xff;
  }
  if (cpu.family == 6 || cpu.family >= 0xf) {
    cpu.model += ((eax >> 16) & 0xf) << 4;
  }
  return cpu;
}

base::Result<void> bts_cpu_check(const CpuIdentity& cpu) {
  if (cpu.vendor != "GenuineIntel") {
    std::string who = cpu.vendor.empty() ? std::string("unknown") : cpu.vendor;
    return base::make_error(base::Errc::unsupported, "Intel BTS is not available on this CPU (vendor " + who +
                                                         "): branch trace store is an Intel feature" +
                                                         "; " + software_advice());
  }
  if (cpu.family == 6 &&
      std::find(kAaj122Models.begin(), kAaj122Models.end(), cpu.model) != kAaj122Models.end()) {
    return base::make_error(base::Errc::unsupported,
                            "Intel BTS is disabled on this CPU (family 6, model " + hex(cpu.model) +
                                "): erratum AAJ122 corrupts the recorded branch sources" +
                                "; " + software_advice());
  }
  return base::success();
}

base::Result<std::unique_ptr<BranchTracer>> open_perf_bts(Tid tid, const BtraceConfig& config) {
  if (auto ok = bts_cpu_check(host_cpu()); !ok) {
    return std::move(ok).error();
  }
  auto event = PerfEvent::open_bts(tid, config.bts_size);
  if (!event) {
    return std::move(event).error();
  }
  return std::unique_ptr<BranchTracer>(std::make_unique<PerfBts>(std::move(*event)));
}

PerfBts::PerfBts(PerfEvent event) : event_(std::move(event)) {
}

base::Result<BtraceData> PerfBts::read(BtraceRead kind, Addr current_pc) {
  return read_bts_snapshot(event_.snapshot(), kind, current_pc, last_head_);
}

BtraceStats PerfBts::stats() const {
  BtraceStats s;
  s.backend = backend_name(Backend::Bts);
  const std::uint64_t size = event_.data_size();
  const std::uint64_t head = event_.data_head();
  s.capacity = size / kBtsSampleBytes;
  s.recorded = head / kBtsSampleBytes;
  s.kept = std::min(head, size) / kBtsSampleBytes;
  s.lost = s.recorded - s.kept;
  return s;
}

}  // namespace tracer
