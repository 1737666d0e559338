// Builds the amd64-linux or i386-linux register table for an XSAVE geometry. The order and types
// follow GDB's 64bit-*.xml and 32bit-*.xml features as gdbserver 13 sends them (rsp-packets.md
// §7): i386 has eight vector registers, no segments feature and orig_eax for orig_rax.
#include "arch/x86/register_layout.hpp"

namespace arch::x86 {

namespace {

// Register names must outlive the layout: the table refers to them by string_view.
constexpr std::string_view kXmmNames[32] = {
    "xmm0",  "xmm1",  "xmm2",  "xmm3",  "xmm4",  "xmm5",  "xmm6",  "xmm7",
    "xmm8",  "xmm9",  "xmm10", "xmm11", "xmm12", "xmm13", "xmm14", "xmm15",
    "xmm16", "xmm17", "xmm18", "xmm19", "xmm20", "xmm21", "xmm22", "xmm23",
    "xmm24", "xmm25", "xmm26", "xmm27", "xmm28", "xmm29", "xmm30", "xmm31"};
constexpr std::string_view kYmmhNames[32] = {
    "ymm0h",  "ymm1h",  "ymm2h",  "ymm3h",  "ymm4h",  "ymm5h",  "ymm6h",  "ymm7h",
    "ymm8h",  "ymm9h",  "ymm10h", "ymm11h", "ymm12h", "ymm13h", "ymm14h", "ymm15h",
    "ymm16h", "ymm17h", "ymm18h", "ymm19h", "ymm20h", "ymm21h", "ymm22h", "ymm23h",
    "ymm24h", "ymm25h", "ymm26h", "ymm27h", "ymm28h", "ymm29h", "ymm30h", "ymm31h"};
constexpr std::string_view kZmmhNames[32] = {
    "zmm0h",  "zmm1h",  "zmm2h",  "zmm3h",  "zmm4h",  "zmm5h",  "zmm6h",  "zmm7h",
    "zmm8h",  "zmm9h",  "zmm10h", "zmm11h", "zmm12h", "zmm13h", "zmm14h", "zmm15h",
    "zmm16h", "zmm17h", "zmm18h", "zmm19h", "zmm20h", "zmm21h", "zmm22h", "zmm23h",
    "zmm24h", "zmm25h", "zmm26h", "zmm27h", "zmm28h", "zmm29h", "zmm30h", "zmm31h"};
constexpr std::string_view kStNames[8] = {"st0", "st1", "st2", "st3", "st4", "st5", "st6", "st7"};
constexpr std::string_view kKNames[8] = {"k0", "k1", "k2", "k3", "k4", "k5", "k6", "k7"};

struct GprEntry {
  std::string_view name;
  std::string_view type;
  int word;
  uint32_t size;
  Conv conv = Conv::Plain;
};
constexpr GprEntry kCoreGprs[] = {
    {"rax", "int64", kRax, 8},        {"rbx", "int64", kRbx, 8},
    {"rcx", "int64", kRcx, 8},        {"rdx", "int64", kRdx, 8},
    {"rsi", "int64", kRsi, 8},        {"rdi", "int64", kRdi, 8},
    {"rbp", "data_ptr", kRbp, 8},     {"rsp", "data_ptr", kRsp, 8},
    {"r8", "int64", kR8, 8},          {"r9", "int64", kR9, 8},
    {"r10", "int64", kR10, 8},        {"r11", "int64", kR11, 8},
    {"r12", "int64", kR12, 8},        {"r13", "int64", kR13, 8},
    {"r14", "int64", kR14, 8},        {"r15", "int64", kR15, 8},
    {"rip", "code_ptr", kRip, 8},     {"eflags", "i386_eflags", kEflags, 4},
    {"cs", "int32", kCs, 4},          {"ss", "int32", kSs, 4},
    {"ds", "int32", kDs, 4},          {"es", "int32", kEs, 4},
    {"fs", "int32", kFs, 4},          {"gs", "int32", kGs, 4},
};
// GDB's i386 numbering over the same user_regs_struct words (their low halves).
constexpr GprEntry kI386CoreGprs[] = {
    {"eax", "int32", kRax, 4, Conv::SignExtend},
    {"ecx", "int32", kRcx, 4},        {"edx", "int32", kRdx, 4},
    {"ebx", "int32", kRbx, 4},        {"esp", "data_ptr", kRsp, 4},
    {"ebp", "data_ptr", kRbp, 4},     {"esi", "int32", kRsi, 4},
    {"edi", "int32", kRdi, 4},        {"eip", "code_ptr", kRip, 4},
    {"eflags", "i386_eflags", kEflags, 4},
    {"cs", "int32", kCs, 4},          {"ss", "int32", kSs, 4},
    {"ds", "int32", kDs, 4},          {"es", "int32", kEs, 4},
    {"fs", "int32", kFs, 4},          {"gs", "int32", kGs, 4},
};

struct FpuEntry {
  std::string_view name;
  uint32_t offset;
  uint32_t bytes;
  Conv conv;
};
constexpr FpuEntry kFpuControl[] = {
    {"fctrl", kFxFcw, 2, Conv::Plain}, {"fstat", kFxFsw, 2, Conv::Plain},
    {"ftag", kFxFtw, 1, Conv::Ftag},   {"fiseg", kFxFcs, 2, Conv::Plain},
    {"fioff", kFxFip, 4, Conv::Plain}, {"foseg", kFxFds, 2, Conv::Plain},
    {"fooff", kFxFdp, 4, Conv::Plain}, {"fop", kFxFop, 2, Conv::Fop},
};

class Builder {
 public:
  explicit Builder(std::vector<RegisterInfo>& out) : out_(out) {}

  void gpr(Feature f, std::string_view name, std::string_view type, int word, uint32_t size,
           Conv conv = Conv::Plain) {
    add(RegisterInfo{name, 0, size, 0, f, type, "", Storage::Gpr, static_cast<uint32_t>(word),
                     size, -1, conv});
  }
  void fx(Feature f, std::string_view name, std::string_view type, std::string_view group,
          uint32_t size, uint32_t offset, uint32_t bytes, int component, Conv conv) {
    add(RegisterInfo{name, 0, size, 0, f, type, group, Storage::Fxsave, offset, bytes, component,
                     conv});
  }
  void xs(Feature f, std::string_view name, std::string_view type, uint32_t size, uint32_t offset,
          int component) {
    add(RegisterInfo{name, 0, size, 0, f, type, "", Storage::Xsave, offset, size, component,
                     Conv::Plain});
  }
  uint32_t g_size() const { return g_offset_; }

 private:
  void add(RegisterInfo r) {
    r.regnum = static_cast<int>(out_.size());
    r.g_offset = g_offset_;
    g_offset_ += r.size;
    out_.push_back(r);
  }
  std::vector<RegisterInfo>& out_;
  uint32_t g_offset_ = 0;
};

}  // namespace

bool XsaveGeometry::has_component(int c) const {
  if (c < 0 || c >= kXComponents) {
    return false;
  }
  if (c == kX87 || c == kSse) {
    return !has_header() || ((xcr0 >> c) & 1) != 0;
  }
  return has_header() && ((xcr0 >> c) & 1) != 0 && offset[c] >= kXsaveHeaderOffset + kXsaveHeaderSize &&
         offset[c] + bytes[c] <= size;
}

XsaveGeometry reference_geometry() {
  XsaveGeometry g;
  g.xcr0 = 0x602e7;
  g.size = 11008;
  auto set = [&g](int c, uint32_t off, uint32_t bytes) {
    g.offset[c] = off;
    g.bytes[c] = bytes;
  };
  set(kAvx, 576, 256);
  set(kOpmask, 1088, 64);
  set(kZmmHi256, 1152, 512);
  set(kHi16Zmm, 1664, 1024);
  set(kPkru, 2688, 8);
  set(17, 2752, 64);    // XTILECFG
  set(18, 2816, 8192);  // XTILEDATA
  return g;
}

FeatureSet features_from_xcr0(uint64_t xcr0) {
  FeatureSet f;
  f.avx = ((xcr0 >> kAvx) & 1) != 0;
  const uint64_t avx512 = (1ULL << kOpmask) | (1ULL << kZmmHi256) | (1ULL << kHi16Zmm);
  f.avx512 = (xcr0 & avx512) == avx512;
  f.pkeys = ((xcr0 >> kPkru) & 1) != 0;
  return f;
}

RegisterLayout::RegisterLayout(const XsaveGeometry& geometry, Isa isa) : geometry_(geometry), isa_(isa) {
  const FeatureSet want = features_from_xcr0(geometry.xcr0);
  features_.avx = want.avx && geometry.has_component(kAvx);
  features_.avx512 = want.avx512 && geometry.has_component(kOpmask) &&
                     geometry.has_component(kZmmHi256) && geometry.has_component(kHi16Zmm);
  features_.pkeys = want.pkeys && geometry.has_component(kPkru);
  const bool amd64 = isa == Isa::Amd64;
  const uint32_t vectors = amd64 ? 16 : 8;  // xmm, ymmh, zmmh below 16

  Builder b(regs_);
  for (const GprEntry& e : amd64 ? std::span<const GprEntry>(kCoreGprs) : std::span<const GprEntry>(kI386CoreGprs)) {
    b.gpr(Feature::Core, e.name, e.type, e.word, e.size, e.conv);
  }
  for (uint32_t i = 0; i < 8; ++i) {
    b.fx(Feature::Core, kStNames[i], "i387_ext", "", 10, kFxSt0 + 16 * i, 10, kX87, Conv::Plain);
  }
  for (const FpuEntry& e : kFpuControl) {
    b.fx(Feature::Core, e.name, "int", "float", 4, e.offset, e.bytes, kX87, e.conv);
  }
  for (uint32_t i = 0; i < vectors; ++i) {
    b.fx(Feature::Sse, kXmmNames[i], "vec128", "", 16, kFxXmm0 + 16 * i, 16, kSse, Conv::Plain);
  }
  b.fx(Feature::Sse, "mxcsr", "i386_mxcsr", "vector", 4, kFxMxcsr, 4, kSse, Conv::Plain);
  if (amd64) {
    b.gpr(Feature::Linux, "orig_rax", "int", kOrigRax, 8);
    b.gpr(Feature::Segments, "fs_base", "int", kFsBase, 8);
    b.gpr(Feature::Segments, "gs_base", "int", kGsBase, 8);
  } else {
    b.gpr(Feature::Linux, "orig_eax", "int", kOrigRax, 4, Conv::SignExtend);
  }

  const auto& off = geometry.offset;
  if (features_.avx) {
    for (uint32_t i = 0; i < vectors; ++i) {
      b.xs(Feature::Avx, kYmmhNames[i], "uint128", 16, off[kAvx] + 16 * i, kAvx);
    }
  }
  if (features_.avx512 && amd64) {
    for (uint32_t i = 0; i < 16; ++i) {
      b.xs(Feature::Avx512, kXmmNames[16 + i], "vec128", 16, off[kHi16Zmm] + 64 * i, kHi16Zmm);
    }
    for (uint32_t i = 0; i < 16; ++i) {
      b.xs(Feature::Avx512, kYmmhNames[16 + i], "uint128", 16, off[kHi16Zmm] + 64 * i + 16,
           kHi16Zmm);
    }
  }
  if (features_.avx512) {
    for (uint32_t i = 0; i < 8; ++i) {
      b.xs(Feature::Avx512, kKNames[i], "uint64", 8, off[kOpmask] + 8 * i, kOpmask);
    }
    for (uint32_t i = 0; i < vectors; ++i) {
      b.xs(Feature::Avx512, kZmmhNames[i], "v2ui128", 32, off[kZmmHi256] + 32 * i, kZmmHi256);
    }
  }
  if (features_.avx512 && amd64) {
    for (uint32_t i = 0; i < 16; ++i) {
      b.xs(Feature::Avx512, kZmmhNames[16 + i], "v2ui128", 32, off[kHi16Zmm] + 64 * i + 32,
           kHi16Zmm);
    }
  }
  if (features_.pkeys) {
    b.xs(Feature::Pkeys, "pkru", "uint32", 4, off[kPkru], kPkru);
  }
  g_size_ = b.g_size();
}

const RegisterInfo* RegisterLayout::find(int regnum) const {
  if (regnum < 0 || static_cast<size_t>(regnum) >= regs_.size()) {
    return nullptr;
  }
  return &regs_[static_cast<size_t>(regnum)];
}

}  // namespace arch::x86
