// The two siginfo layouts, one table of fields per union member (linux/include/uapi/asm-generic/
// siginfo.h with __ARCH_SI_* defaults: pointer and long are 8 bytes on x86-64, 4 on i386).
#include "arch/x86/i386_siginfo.hpp"

#include <csignal>
#include <cstring>
#include <span>

namespace arch::x86 {
namespace {

struct Field {
  std::uint8_t native_offset;
  std::uint8_t native_size;
  std::uint8_t i386_offset;
  std::uint8_t i386_size;
  bool is_signed = false;  // a long (clock_t, band): sign-extended from 32 bits
};

// si_signo, si_errno, si_code: the same in both.
constexpr Field kHeader[] = {{0, 4, 0, 4}, {4, 4, 4, 4}, {8, 4, 8, 4}};

constexpr Field kKill[] = {{16, 4, 12, 4}, {20, 4, 16, 4}};                     // pid, uid
constexpr Field kTimer[] = {{16, 4, 12, 4}, {20, 4, 16, 4}, {24, 8, 20, 4}};    // tid, overrun, sigval
constexpr Field kRt[] = {{16, 4, 12, 4}, {20, 4, 16, 4}, {24, 8, 20, 4}};       // pid, uid, sigval
constexpr Field kChild[] = {{16, 4, 12, 4}, {20, 4, 16, 4}, {24, 4, 20, 4},     // pid, uid, status,
                            {32, 8, 24, 4, true}, {40, 8, 28, 4, true}};        // utime, stime
constexpr Field kFault[] = {{16, 8, 12, 4}, {24, 2, 16, 2}};                    // addr, addr_lsb
constexpr Field kFaultBounds[] = {{16, 8, 12, 4}, {24, 2, 16, 2}, {32, 8, 20, 4}, {40, 8, 24, 4}};
constexpr Field kFaultPkey[] = {{16, 8, 12, 4}, {24, 2, 16, 2}, {32, 4, 20, 4}};
constexpr Field kPoll[] = {{16, 8, 12, 4, true}, {24, 4, 16, 4}};               // band, fd
constexpr Field kSys[] = {{16, 8, 12, 4}, {24, 4, 16, 4}, {28, 4, 20, 4}};      // call_addr, syscall, arch

constexpr int kSegvBndErr = 3;  // SEGV_BNDERR
constexpr int kSegvPkuErr = 4;  // SEGV_PKUERR
constexpr int kSiUser = 0;
constexpr int kSiKernel = 0x80;
constexpr int kSiTimer = -2;
constexpr int kSiSigio = -5;

// The union member that carries si_code's data for signo (the kernel's siginfo_layout).
std::span<const Field> union_fields(int signo, int code) {
  if (code > kSiUser && code < kSiKernel) {  // the kernel's own reasons
    switch (signo) {
      case SIGSEGV:
        if (code == kSegvBndErr) {
          return kFaultBounds;
        }
        if (code == kSegvPkuErr) {
          return kFaultPkey;
        }
        return kFault;
      case SIGILL:
      case SIGFPE:
      case SIGBUS:
      case SIGTRAP:
        return kFault;
      case SIGCHLD:
        return kChild;
      case SIGPOLL:
        return kPoll;
      case SIGSYS:
        return kSys;
      default:
        return kKill;
    }
  }
  if (code == kSiTimer) {
    return kTimer;
  }
  if (code == kSiSigio) {
    return kPoll;
  }
  return code < 0 ? std::span<const Field>(kRt) : std::span<const Field>(kKill);
}

std::int32_t load_i32(const SiginfoBytes& b, std::size_t offset) {
  std::int32_t v = 0;
  std::memcpy(&v, &b[offset], sizeof v);
  return v;
}

std::uint64_t load(const SiginfoBytes& b, std::size_t offset, std::size_t size) {
  std::uint64_t v = 0;
  std::memcpy(&v, &b[offset], size);
  return v;
}

void store(SiginfoBytes& b, std::size_t offset, std::size_t size, std::uint64_t v) {
  std::memcpy(&b[offset], &v, size);
}

void copy_fields(std::span<const Field> fields, const SiginfoBytes& from, bool from_native, SiginfoBytes& to) {
  for (const Field& f : fields) {
    if (from_native) {
      store(to, f.i386_offset, f.i386_size, load(from, f.native_offset, f.native_size));
      continue;
    }
    std::uint64_t v = load(from, f.i386_offset, f.i386_size);
    if (f.is_signed && f.i386_size == 4) {
      v = static_cast<std::uint64_t>(static_cast<std::int64_t>(static_cast<std::int32_t>(v)));
    }
    store(to, f.native_offset, f.native_size, v);
  }
}

SiginfoBytes convert(const SiginfoBytes& from, bool from_native) {
  SiginfoBytes to{};
  copy_fields(kHeader, from, from_native, to);
  copy_fields(union_fields(load_i32(from, 0), load_i32(from, 8)), from, from_native, to);
  return to;
}

}  // namespace

SiginfoBytes i386_siginfo_from_native(const SiginfoBytes& native) { return convert(native, true); }

SiginfoBytes native_siginfo_from_i386(const SiginfoBytes& i386) { return convert(i386, false); }

}  // namespace arch::x86
