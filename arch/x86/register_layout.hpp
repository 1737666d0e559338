// The amd64-linux and i386-linux register tables: what GDB's target description lists (name,
// regnum, size, offset in the `g` packet) and where Linux keeps each register (user_regs_struct
// word or XSAVE byte offset). A 32-bit program traced from 64 bits has the same
// user_regs_struct and XSAVE area: its registers are the low halves and the first eight vector
// registers. Pure: the XSAVE geometry (CPUID leaf 0xD) is passed in.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "arch/x86/isa.hpp"

namespace arch::x86 {

// XSAVE state components (bit numbers in XCR0 and XSTATE_BV).
enum XComponent : int {
  kX87 = 0,
  kSse = 1,
  kAvx = 2,
  kBndRegs = 3,  // MPX: not described (removed from Linux 5.6, absent on this CPU)
  kBndCsr = 4,
  kOpmask = 5,
  kZmmHi256 = 6,
  kHi16Zmm = 7,
  kPkru = 9,
};
inline constexpr int kXComponents = 19;         // up to XTILEDATA (18); AMX is ignored
inline constexpr uint32_t kFxsaveSize = 512;    // legacy region
inline constexpr uint32_t kXsaveHeaderOffset = 512;  // XSTATE_BV lives here
inline constexpr uint32_t kXsaveHeaderSize = 64;
inline constexpr uint32_t kXcr0SwOffset = 464;  // Linux stores XCR0 here in NT_X86_XSTATE

// FXSAVE byte offsets of the legacy x87/SSE fields.
inline constexpr uint32_t kFxFcw = 0;
inline constexpr uint32_t kFxFsw = 2;
inline constexpr uint32_t kFxFtw = 4;
inline constexpr uint32_t kFxFop = 6;
inline constexpr uint32_t kFxFip = 8;
inline constexpr uint32_t kFxFcs = 12;
inline constexpr uint32_t kFxFdp = 16;
inline constexpr uint32_t kFxFds = 20;
inline constexpr uint32_t kFxMxcsr = 24;
inline constexpr uint32_t kFxSt0 = 32;
inline constexpr uint32_t kFxXmm0 = 160;

// Where the XSAVE area's components are (CPUID leaf 0xD, standard format) and which are on.
struct XsaveGeometry {
  uint64_t xcr0 = 0x3;                           // enabled feature mask
  uint32_t size = kFxsaveSize;                   // area size; 512 = FXSAVE only, no header
  std::array<uint32_t, kXComponents> offset{};   // CPUID 0xD.i EBX (components >= 2)
  std::array<uint32_t, kXComponents> bytes{};    // CPUID 0xD.i EAX (components >= 2)

  bool has_header() const { return size >= kXsaveHeaderOffset + kXsaveHeaderSize; }
  // True when component c is enabled and lies inside the area.
  bool has_component(int c) const;
};

// This machine's geometry (Xeon with AVX-512, PKRU and AMX; XCR0 0x602e7, 11008 bytes).
// Handy for tests and for generating documents; the tracer uses CPUID's real answer.
XsaveGeometry reference_geometry();

// Target-description features, in document order (i386-linux has no segments feature).
enum class Feature : uint8_t { Core, Sse, Linux, Segments, Avx, Avx512, Pkeys };

struct FeatureSet {
  bool avx = false;
  bool avx512 = false;
  bool pkeys = false;
};
// avx: XCR0 bit 2; avx512: bits 5, 6 and 7; pkeys: bit 9. Core/sse/linux/segments always.
FeatureSet features_from_xcr0(uint64_t xcr0);

enum class Storage : uint8_t { Gpr, Fxsave, Xsave };
enum class Conv : uint8_t {
  Plain,  // copy `src_bytes` bytes, zero-extended to the `g` size
  Ftag,   // full 16-bit tag word <-> FXSAVE's abridged byte
  Fop,    // low 11 bits of the 16-bit opcode field
  SignExtend,  // a 32-bit general register written sign-extended to its 64-bit word (i386
               // eax and orig_eax: -1 there stops the kernel restarting a system call)
};

struct RegisterInfo {
  std::string_view name;
  int regnum = 0;
  uint32_t size = 0;       // bytes in `g`
  uint32_t g_offset = 0;   // running sum of sizes in regnum order
  Feature feature = Feature::Core;
  std::string_view type;   // tdesc type attribute
  std::string_view group;  // tdesc group attribute, may be empty
  Storage storage = Storage::Gpr;
  uint32_t location = 0;   // Gpr: user_regs_struct word; else byte offset in the XSAVE area
  uint32_t src_bytes = 0;  // bytes at `location`
  int component = -1;      // XSAVE component, -1 for Gpr
  Conv conv = Conv::Plain;
};

// user_regs_struct word indices (the order of RawRegisters::gpr).
enum GprWord : int {
  kR15 = 0, kR14, kR13, kR12, kRbp, kRbx, kR11, kR10, kR9, kR8, kRax, kRcx, kRdx, kRsi,
  kRdi, kOrigRax, kRip, kCs, kEflags, kRsp, kSs, kFsBase, kGsBase, kDs, kEs, kFs, kGs,
  kGprWords
};

// Bits of the gpr word kEflags.
inline constexpr uint64_t kEflagsTrap = 1u << 8;        // TF: a trap after each instruction
inline constexpr uint64_t kEflagsDirection = 1u << 10;  // DF: string instructions go down

inline constexpr int kRegnumRip = 16;
inline constexpr int kRegnumOrigRax = 57;

class RegisterLayout {
 public:
  explicit RegisterLayout(const XsaveGeometry& geometry, Isa isa = Isa::Amd64);

  std::span<const RegisterInfo> registers() const { return regs_; }
  // nullptr when regnum is not in this layout.
  const RegisterInfo* find(int regnum) const;
  uint32_t g_size() const { return g_size_; }
  const XsaveGeometry& geometry() const { return geometry_; }
  FeatureSet features() const { return features_; }
  Isa isa() const { return isa_; }

 private:
  XsaveGeometry geometry_;
  Isa isa_;
  FeatureSet features_;
  std::vector<RegisterInfo> regs_;
  uint32_t g_size_ = 0;
};

}  // namespace arch::x86
