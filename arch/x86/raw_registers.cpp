// RawRegisters <-> `g` bytes. Every register goes through read_one()/write_one(); the XSAVE
// header's XSTATE_BV decides whether a component holds real state or its initial value.
#include "arch/x86/raw_registers.hpp"

#include <algorithm>
#include <cassert>
#include <cstring>
#include <string>

namespace arch::x86 {

namespace {

constexpr uint16_t kFcwInit = 0x037f;
constexpr uint32_t kMxcsrInit = 0x1f80;
// MXCSR is saved and restored with any of x87, SSE or AVX (the kernel's rule too).
constexpr uint64_t kMxcsrOwners = (1ULL << kX87) | (1ULL << kSse) | (1ULL << kAvx);

uint16_t load16(const uint8_t* p) {
  uint16_t v = 0;
  std::memcpy(&v, p, sizeof v);
  return v;
}
uint64_t load64(const uint8_t* p) {
  uint64_t v = 0;
  std::memcpy(&v, p, sizeof v);
  return v;
}

// The legacy region in its initial state (what XRSTOR loads for a clear x87/SSE bit).
const std::array<uint8_t, kFxsaveSize>& initial_legacy() {
  static const std::array<uint8_t, kFxsaveSize> image = [] {
    std::array<uint8_t, kFxsaveSize> a{};
    std::memcpy(&a[kFxFcw], &kFcwInit, sizeof kFcwInit);
    std::memcpy(&a[kFxMxcsr], &kMxcsrInit, sizeof kMxcsrInit);
    return a;
  }();
  return image;
}

bool is_mxcsr(const RegisterInfo& r) {
  return r.storage == Storage::Fxsave && r.location == kFxMxcsr;
}

// Where a register's bytes are, given the geometry and this buffer.
enum class Where { Gpr, Live, Initial, Unavailable };

Where where(const RegisterLayout& layout, const RegisterInfo& r, const RawRegisters& raw) {
  if (r.storage == Storage::Gpr) {
    return Where::Gpr;
  }
  const XsaveGeometry& geo = layout.geometry();
  if (!geo.has_component(r.component) || raw.xsave.size() < r.location + r.src_bytes ||
      raw.xsave.size() < kFxsaveSize) {
    return Where::Unavailable;
  }
  if (!geo.has_header()) {
    return Where::Live;
  }
  if (raw.xsave.size() < kXsaveHeaderOffset + kXsaveHeaderSize) {
    return Where::Unavailable;
  }
  const uint64_t bv = xstate_bv(raw.xsave);
  const uint64_t need = is_mxcsr(r) ? kMxcsrOwners : (1ULL << r.component);
  return (bv & need) != 0 ? Where::Live : Where::Initial;
}

// Decodes one register from `area` (the XSAVE buffer or the initial legacy image) into out.
void decode(const RegisterInfo& r, std::span<const uint8_t> area, uint8_t* out) {
  std::memset(out, 0, r.size);
  switch (r.conv) {
    case Conv::Plain:
    case Conv::SignExtend:
      std::memcpy(out, &area[r.location], std::min(r.size, r.src_bytes));
      break;
    case Conv::Ftag: {
      const uint16_t tag = full_tag_word(area);
      std::memcpy(out, &tag, sizeof tag);
      break;
    }
    case Conv::Fop: {
      const uint16_t fop = load16(&area[r.location]) & 0x7ff;
      std::memcpy(out, &fop, sizeof fop);
      break;
    }
  }
}

void read_one(const RegisterLayout& layout, const RegisterInfo& r, const RawRegisters& raw,
              uint8_t* out) {
  switch (where(layout, r, raw)) {
    case Where::Gpr:
      std::memcpy(out, &raw.gpr[r.location], r.size);
      return;
    case Where::Live:
      decode(r, raw.xsave, out);
      return;
    case Where::Initial:
      if (r.storage == Storage::Fxsave) {
        decode(r, initial_legacy(), out);
      } else {
        std::memset(out, 0, r.size);  // every XSAVE component >= 2 we show starts as zeros
      }
      return;
    case Where::Unavailable:
      std::memset(out, 0, r.size);
      return;
  }
}

// Puts component c into its initial state in the buffer and sets its XSTATE_BV bit.
void make_live(const RegisterLayout& layout, int c, RawRegisters& raw) {
  uint8_t* a = raw.xsave.data();
  uint64_t bv = xstate_bv(raw.xsave);
  if (c <= kAvx && (bv & kMxcsrOwners) == 0) {
    std::memcpy(a + kFxMxcsr, &kMxcsrInit, sizeof kMxcsrInit);
  }
  if (c == kX87) {
    std::memset(a, 0, kFxMxcsr);
    std::memcpy(a + kFxFcw, &kFcwInit, sizeof kFcwInit);
    std::memset(a + kFxSt0, 0, kFxXmm0 - kFxSt0);
  } else if (c == kSse) {
    std::memset(a + kFxXmm0, 0, 16 * 16);
  } else {
    const XsaveGeometry& geo = layout.geometry();
    std::memset(a + geo.offset[c], 0, geo.bytes[c]);
  }
  bv |= 1ULL << c;
  std::memcpy(a + kXsaveHeaderOffset, &bv, sizeof bv);
}

// Encodes `value` into the r.src_bytes bytes at `dst` (already holding the old bytes).
void encode(const RegisterInfo& r, const uint8_t* value, uint8_t* dst) {
  switch (r.conv) {
    case Conv::Plain:
    case Conv::SignExtend:
      std::memcpy(dst, value, std::min(r.size, r.src_bytes));
      break;
    case Conv::Ftag:
      *dst = abridged_tag_byte(load16(value));
      break;
    case Conv::Fop: {
      const uint16_t fop = load16(value) & 0x7ff;
      std::memcpy(dst, &fop, sizeof fop);
      break;
    }
  }
}

// Writes `value` (r.size bytes); a write that changes no stored byte does nothing.
base::Result<void> write_one(const RegisterLayout& layout, const RegisterInfo& r,
                             const uint8_t* value, RawRegisters& raw, bool& xstate_changed) {
  const Where w = where(layout, r, raw);
  if (w == Where::Gpr) {
    // A register narrower than its word (eflags, segments, i386's) fills it zero-extended,
    // or sign-extended where the kernel compares the word with -1.
    uint64_t word = 0;
    std::memcpy(&word, value, r.size);
    if (r.conv == Conv::SignExtend && r.size == 4) {
      word = static_cast<uint64_t>(static_cast<int64_t>(static_cast<int32_t>(word)));
    }
    raw.gpr[r.location] = word;
    return base::success();
  }
  // The stored bytes as they are now (real, or the component's initial value).
  std::array<uint8_t, 64> before{};
  if (w == Where::Live) {
    std::memcpy(before.data(), &raw.xsave[r.location], r.src_bytes);
  } else if (r.storage == Storage::Fxsave) {
    std::memcpy(before.data(), &initial_legacy()[r.location], r.src_bytes);
  }
  std::array<uint8_t, 64> after = before;
  encode(r, value, after.data());
  if (std::memcmp(before.data(), after.data(), r.src_bytes) == 0) {
    return base::success();
  }
  if (w == Where::Unavailable) {
    return base::make_error(base::Errc::unsupported,
                            "register " + std::string(r.name) + " is not available");
  }
  if (w == Where::Initial) {
    make_live(layout, is_mxcsr(r) ? kSse : r.component, raw);
  }
  std::memcpy(&raw.xsave[r.location], after.data(), r.src_bytes);
  xstate_changed = true;
  return base::success();
}

}  // namespace

uint16_t full_tag_word(std::span<const uint8_t> fxsave) {
  assert(fxsave.size() >= kFxXmm0);
  const unsigned top = (load16(&fxsave[kFxFsw]) >> 11) & 7;
  const uint8_t abridged = fxsave[kFxFtw];
  uint16_t full = 0;
  for (unsigned phys = 0; phys < 8; ++phys) {
    unsigned tag = 3;  // empty
    if ((abridged >> phys) & 1) {
      const uint8_t* st = &fxsave[kFxSt0 + 16 * ((phys - top) & 7)];
      const uint64_t mantissa = load64(st);
      const unsigned exponent = load16(st + 8) & 0x7fff;
      if (exponent == 0x7fff) {
        tag = 2;  // NaN / infinity
      } else if (exponent == 0) {
        tag = mantissa == 0 ? 1 : 2;  // zero, or denormal (special)
      } else {
        tag = (mantissa >> 63) != 0 ? 0 : 2;  // valid, or unnormal (special)
      }
    }
    full = static_cast<uint16_t>(full | (tag << (2 * phys)));
  }
  return full;
}

uint8_t abridged_tag_byte(uint16_t full_tag) {
  uint8_t abridged = 0;
  for (unsigned phys = 0; phys < 8; ++phys) {
    if (((full_tag >> (2 * phys)) & 3) != 3) {
      abridged = static_cast<uint8_t>(abridged | (1u << phys));
    }
  }
  return abridged;
}

uint64_t xcr0_from_xsave(std::span<const uint8_t> xsave) {
  return xsave.size() >= kXcr0SwOffset + 8 ? load64(&xsave[kXcr0SwOffset]) : 0;
}

uint64_t xstate_bv(std::span<const uint8_t> xsave) {
  return xsave.size() >= kXsaveHeaderOffset + 8 ? load64(&xsave[kXsaveHeaderOffset]) : 0;
}

std::vector<uint8_t> to_g_packet(const RegisterLayout& layout, const RawRegisters& raw) {
  std::vector<uint8_t> g(layout.g_size());
  for (const RegisterInfo& r : layout.registers()) {
    read_one(layout, r, raw, &g[r.g_offset]);
  }
  return g;
}

base::Result<void> from_g_packet(const RegisterLayout& layout, std::span<const uint8_t> g,
                                 RawRegisters& raw, bool& xstate_changed) {
  if (g.size() > layout.g_size()) {
    return base::make_error(base::Errc::invalid, "G packet of " + std::to_string(g.size()) +
                                                     " bytes, expected at most " +
                                                     std::to_string(layout.g_size()));
  }
  for (const RegisterInfo& r : layout.registers()) {
    if (r.g_offset >= g.size()) {
      break;
    }
    std::array<uint8_t, 64> value{};
    read_one(layout, r, raw, value.data());
    const size_t n = std::min<size_t>(r.size, g.size() - r.g_offset);
    std::memcpy(value.data(), &g[r.g_offset], n);
    auto ok = write_one(layout, r, value.data(), raw, xstate_changed);
    if (!ok) {
      return ok;
    }
  }
  return base::success();
}

base::Result<std::vector<uint8_t>> read_register(const RegisterLayout& layout,
                                                 const RawRegisters& raw, int regnum) {
  const RegisterInfo* r = layout.find(regnum);
  if (r == nullptr) {
    return base::make_error(base::Errc::invalid, "no register " + std::to_string(regnum));
  }
  std::vector<uint8_t> out(r->size);
  read_one(layout, *r, raw, out.data());
  return out;
}

base::Result<void> write_register(const RegisterLayout& layout, int regnum,
                                  std::span<const uint8_t> value, RawRegisters& raw,
                                  bool& xstate_changed) {
  const RegisterInfo* r = layout.find(regnum);
  if (r == nullptr) {
    return base::make_error(base::Errc::invalid, "no register " + std::to_string(regnum));
  }
  if (value.size() != r->size) {
    return base::make_error(base::Errc::invalid, std::string(r->name) + " takes " +
                                                     std::to_string(r->size) + " bytes");
  }
  return write_one(layout, *r, value.data(), raw, xstate_changed);
}

}  // namespace arch::x86
