// ptrace side of registers. The XSAVE buffer is sized from CPUID, never from a constant:
// with AMX enabled the kernel wants all 11008 bytes and rejects a shorter SETREGSET with
// EFAULT (gdbserver 13's "regsets_store_inferior_registers: Bad address").
#include "tracer/linux/registers.hpp"

#include <cpuid.h>
#include <elf.h>
#include <sys/ptrace.h>
#include <sys/uio.h>
#include <sys/user.h>

#include <cerrno>
#include <cstddef>
#include <cstring>

#include "arch/x86/target_description.hpp"

namespace tracer {

namespace {

namespace ax = arch::x86;

static_assert(sizeof(user_regs_struct) == sizeof(RawRegisters::gpr),
              "user_regs_struct is 27 words on x86-64");
static_assert(sizeof(user_fpregs_struct) == ax::kFxsaveSize);

constexpr unsigned kCpuid1EcxOsxsave = 1u << 27;

base::Error ptrace_error(const char* what, int tid, int err) {
  if (err == ESRCH) {
    return base::make_error(base::Errc::no_thread, std::string(what) + ": no thread " +
                                                       std::to_string(tid));
  }
  return base::sys_error(what, err);
}

uint64_t xgetbv0() {
  uint32_t lo = 0;
  uint32_t hi = 0;
  __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
  return (static_cast<uint64_t>(hi) << 32) | lo;
}

}  // namespace

base::Result<void> read_gpr_registers(int tid, RawRegisters& raw) {
  user_regs_struct regs{};
  if (ptrace(PTRACE_GETREGS, tid, nullptr, &regs) != 0) {
    return ptrace_error("PTRACE_GETREGS", tid, errno);
  }
  std::memcpy(raw.gpr.data(), &regs, sizeof regs);
  return base::success();
}

base::Result<void> read_xstate_registers(int tid, RawRegisters& raw) {
  const ax::XsaveGeometry& geo = host_xsave_geometry();
  if (!geo.has_header()) {
    raw.xsave.assign(ax::kFxsaveSize, 0);
    if (ptrace(PTRACE_GETFPREGS, tid, nullptr, raw.xsave.data()) != 0) {
      return ptrace_error("PTRACE_GETFPREGS", tid, errno);
    }
    return base::success();
  }
  raw.xsave.assign(geo.size, 0);
  iovec iov{raw.xsave.data(), raw.xsave.size()};
  if (ptrace(PTRACE_GETREGSET, tid, reinterpret_cast<void*>(NT_X86_XSTATE), &iov) != 0) {
    return ptrace_error("PTRACE_GETREGSET NT_X86_XSTATE", tid, errno);
  }
  raw.xsave.resize(iov.iov_len);  // what the kernel filled in is what it wants back
  return base::success();
}

ax::XsaveGeometry probe_xsave_geometry() {
  ax::XsaveGeometry geo;  // FXSAVE only unless the OS enabled XSAVE
  unsigned eax = 0;
  unsigned ebx = 0;
  unsigned ecx = 0;
  unsigned edx = 0;
  if (__get_cpuid_max(0, nullptr) < 0xd) {
    return geo;
  }
  __cpuid_count(1, 0, eax, ebx, ecx, edx);
  if ((ecx & kCpuid1EcxOsxsave) == 0) {
    return geo;
  }
  geo.xcr0 = xgetbv0();
  __cpuid_count(0xd, 0, eax, ebx, ecx, edx);
  geo.size = ebx;  // size for the components enabled in XCR0
  for (int c = 2; c < ax::kXComponents; ++c) {
    if (((geo.xcr0 >> c) & 1) != 0) {
      __cpuid_count(0xd, c, eax, ebx, ecx, edx);
      geo.bytes[c] = eax;
      geo.offset[c] = ebx;
    }
  }
  return geo;
}

const ax::XsaveGeometry& host_xsave_geometry() {
  static const ax::XsaveGeometry geometry = probe_xsave_geometry();
  return geometry;
}

const ax::RegisterLayout& host_register_layout(ax::Isa isa) {
  static const ax::RegisterLayout amd64(host_xsave_geometry(), ax::Isa::Amd64);
  static const ax::RegisterLayout i386(host_xsave_geometry(), ax::Isa::I386);
  return isa == ax::Isa::I386 ? i386 : amd64;
}

base::Result<RawRegisters> read_raw_registers(int tid) {
  RawRegisters raw;
  if (auto r = read_gpr_registers(tid, raw); !r) {
    return std::move(r).error();
  }
  if (auto r = read_xstate_registers(tid, raw); !r) {
    return std::move(r).error();
  }
  return raw;
}

base::Result<void> write_raw_registers(int tid, const RawRegisters& raw, bool xstate_changed) {
  user_regs_struct regs{};
  std::memcpy(&regs, raw.gpr.data(), sizeof regs);
  if (ptrace(PTRACE_SETREGS, tid, nullptr, &regs) != 0) {
    return ptrace_error("PTRACE_SETREGS", tid, errno);
  }
  if (!xstate_changed) {
    return base::success();
  }
  // The kernel does not modify the buffer, but ptrace's prototype is not const.
  std::vector<uint8_t> xsave = raw.xsave;
  if (!host_xsave_geometry().has_header()) {
    if (xsave.size() != ax::kFxsaveSize) {
      return base::make_error(base::Errc::internal, "FXSAVE area of the wrong size");
    }
    if (ptrace(PTRACE_SETFPREGS, tid, nullptr, xsave.data()) != 0) {
      return ptrace_error("PTRACE_SETFPREGS", tid, errno);
    }
    return base::success();
  }
  iovec iov{xsave.data(), xsave.size()};
  if (ptrace(PTRACE_SETREGSET, tid, reinterpret_cast<void*>(NT_X86_XSTATE), &iov) != 0) {
    return ptrace_error("PTRACE_SETREGSET NT_X86_XSTATE", tid, errno);
  }
  return base::success();
}

base::Result<const RawRegisters*> RegisterCache::gprs(int tid) {
  if (!have_gprs_) {
    if (auto r = kernel_->read_gprs(tid, raw_); !r) {
      return std::move(r).error();
    }
    have_gprs_ = true;
  }
  return &raw_;
}

base::Result<const RawRegisters*> RegisterCache::all(int tid) {
  if (auto r = gprs(tid); !r) {
    return r;
  }
  if (!have_xstate_) {
    if (auto r = kernel_->read_xstate(tid, raw_); !r) {
      return std::move(r).error();
    }
    have_xstate_ = true;
  }
  return &raw_;
}

base::Result<uint64_t> RegisterCache::pc(int tid) {
  auto raw = gprs(tid);
  if (!raw) {
    return std::move(raw).error();
  }
  user_regs_struct regs{};
  std::memcpy(&regs, (*raw)->gpr.data(), sizeof regs);
  return regs.rip;
}

base::Result<void> RegisterCache::set_pc(int tid, uint64_t pc) {
  auto raw = gprs(tid);
  if (!raw) {
    return std::move(raw).error();
  }
  RawRegisters changed = **raw;
  user_regs_struct regs{};
  std::memcpy(&regs, changed.gpr.data(), sizeof regs);
  regs.rip = pc;
  std::memcpy(changed.gpr.data(), &regs, sizeof regs);
  return store(tid, changed, false);
}

base::Result<void> RegisterCache::store(int tid, const RawRegisters& raw, bool xstate_changed) {
  if (auto r = kernel_->write_registers(tid, raw, xstate_changed); !r) {
    forget();  // the kernel may have taken part of it
    return r;
  }
  raw_.gpr = raw.gpr;
  have_gprs_ = true;
  if (xstate_changed) {
    raw_.xsave = raw.xsave;
    have_xstate_ = true;
  }
  return base::success();
}

base::Result<std::vector<uint8_t>> read_g_registers(const ax::RegisterLayout& layout, int tid,
                                                    RegisterCache& cache) {
  auto raw = cache.all(tid);
  if (!raw) {
    return std::move(raw).error();
  }
  return ax::to_g_packet(layout, **raw);
}

base::Result<void> write_g_registers(const ax::RegisterLayout& layout, int tid, RegisterCache& cache,
                                     const std::vector<uint8_t>& g) {
  auto raw = cache.all(tid);
  if (!raw) {
    return std::move(raw).error();
  }
  RawRegisters changed = **raw;
  bool xstate_changed = false;
  if (auto r = ax::from_g_packet(layout, g, changed, xstate_changed); !r) {
    return r;
  }
  return cache.store(tid, changed, xstate_changed);
}

base::Result<std::vector<uint8_t>> read_one_register(const ax::RegisterLayout& layout, int tid,
                                                     RegisterCache& cache, int regno) {
  const ax::RegisterInfo* info = layout.find(regno);
  if (info == nullptr) {
    return base::make_error(base::Errc::invalid, "no register " + std::to_string(regno));
  }
  // The registers of every stop reply (rbp, rsp, rip) need PTRACE_GETREGS alone.
  auto raw = info->storage == ax::Storage::Gpr ? cache.gprs(tid) : cache.all(tid);
  if (!raw) {
    return std::move(raw).error();
  }
  return ax::read_register(layout, **raw, regno);
}

base::Result<void> write_one_register(const ax::RegisterLayout& layout, int tid, RegisterCache& cache,
                                      int regno, const std::vector<uint8_t>& value) {
  const ax::RegisterInfo* info = layout.find(regno);
  if (info == nullptr || value.size() != info->size) {
    return base::make_error(base::Errc::invalid, "bad register write " + std::to_string(regno));
  }
  auto raw = info->storage == ax::Storage::Gpr ? cache.gprs(tid) : cache.all(tid);
  if (!raw) {
    return std::move(raw).error();
  }
  RawRegisters changed = **raw;
  bool xstate_changed = false;
  if (auto r = ax::write_register(layout, regno, value, changed, xstate_changed);
      !r) {
    return r;
  }
  return cache.store(tid, changed, xstate_changed);
}

std::string target_description_xml(ax::Isa isa) { return ax::target_xml(host_register_layout(isa)); }

base::Result<uint64_t> read_pc(int tid) {
  errno = 0;
  const long v = ptrace(PTRACE_PEEKUSER, tid,
                        reinterpret_cast<void*>(offsetof(user_regs_struct, rip)), nullptr);
  if (errno != 0) {
    return ptrace_error("PTRACE_PEEKUSER rip", tid, errno);
  }
  return static_cast<uint64_t>(v);
}

base::Result<void> write_pc(int tid, uint64_t pc) {
  if (ptrace(PTRACE_POKEUSER, tid, reinterpret_cast<void*>(offsetof(user_regs_struct, rip)),
             reinterpret_cast<void*>(pc)) != 0) {
    return ptrace_error("PTRACE_POKEUSER rip", tid, errno);
  }
  return base::success();
}

}  // namespace tracer
