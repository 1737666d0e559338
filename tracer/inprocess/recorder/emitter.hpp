// Writing machine code into the cache: bytes, little-endian values, and the %gs-relative moves
// the branch sequences use to reach the thread's block (thread_state.hpp). (The recorder writes
// __builtin_memcpy: its image is built -fno-builtin, where a memcpy of 4 bytes would be a call.)
#pragma once

#include <cstdint>
#include <cstring>
#include <initializer_list>

#include "tracer/inprocess/recorder/thread_state.hpp"

namespace recorder {

// A rel32 (a jump's, or a rip-relative operand's, the instruction ending right after it at
// rel_at + 4) made to reach `to`, which is in reach.
inline void patch_rel32(std::uint8_t* rel_at, std::uint64_t to) {
  const auto rel = static_cast<std::uint32_t>(to - (reinterpret_cast<std::uint64_t>(rel_at) + 4));
  __builtin_memcpy(rel_at, &rel, 4);
}

// x86-64 register numbers as ModRM encodes them.
enum Reg : std::uint8_t { kRax = 0, kRcx = 1, kRdx = 2, kRsp = 4, kRsi = 6, kRdi = 7, kR8 = 8, kR9 = 9, kR10 = 10, kR11 = 11 };

class Emitter {
 public:
  explicit Emitter(std::uint8_t* at) : p_(at) {}
  std::uint8_t* here() const { return p_; }
  std::uint64_t address() const { return reinterpret_cast<std::uint64_t>(p_); }
  void bytes(std::initializer_list<std::uint8_t> b) {
    for (std::uint8_t x : b) {
      *p_++ = x;
    }
  }
  void raw(const std::uint8_t* b, std::size_t n) {
    __builtin_memcpy(p_, b, n);
    p_ += n;
  }
  void u32(std::uint32_t v) {
    __builtin_memcpy(p_, &v, 4);
    p_ += 4;
  }
  void u64(std::uint64_t v) {
    __builtin_memcpy(p_, &v, 8);
    p_ += 8;
  }
  // mov reg, gs:[field] / mov gs:[field], reg (64-bit); field is one of slots()'s.
  void load_gs(Reg reg, const void* field) { gs_move(0x8b, reg, field); }
  void store_gs(const void* field, Reg reg) { gs_move(0x89, reg, field); }
  // mov qword gs:[field], v: two 32-bit stores, no register or flag touched.
  void store_gs_imm64(const void* field, std::uint64_t v) {
    const auto at = static_cast<std::uint32_t>(gs_offset(field));
    for (std::uint32_t half = 0; half < 2; ++half) {
      bytes({0x65, 0xc7, 0x04, 0x25});
      u32(at + 4 * half);
      u32(static_cast<std::uint32_t>(v >> (32 * half)));
    }
  }
  // mov qword gs:[disp + index * 8], reg
  void store_gs_indexed(std::int32_t disp, Reg index, Reg reg) {
    bytes({0x65, static_cast<std::uint8_t>(0x48 | ((reg >> 3) << 2) | ((index >> 3) << 1)), 0x89,
           static_cast<std::uint8_t>(((reg & 7) << 3) | 4), static_cast<std::uint8_t>(0xc5 | ((index & 7) << 3))});
    u32(static_cast<std::uint32_t>(disp));
  }
  // mov dword gs:[disp + index * 8], v
  void store_gs_indexed_imm32(std::int32_t disp, Reg index, std::uint32_t v) {
    bytes({0x65});
    if (index >= 8) {
      bytes({0x42});  // REX.X
    }
    bytes({0xc7, 0x04, static_cast<std::uint8_t>(0xc5 | ((index & 7) << 3))});
    u32(static_cast<std::uint32_t>(disp));
    u32(v);
  }
  // jmp qword gs:[field]
  void jmp_gs(const void* field) {
    bytes({0x65, 0xff, 0x24, 0x25});
    u32(static_cast<std::uint32_t>(gs_offset(field)));
  }
  // mov reg, imm64
  void mov_imm64(Reg reg, std::uint64_t v) {
    bytes({rex_w(0, 0, reg), static_cast<std::uint8_t>(0xb8 + (reg & 7))});
    u64(v);
  }
  // mov dst, src (64-bit)
  void mov(Reg dst, Reg src) { bytes({rex_w(src, 0, dst), 0x89, modrm_reg(src, dst)}); }
  // not reg (no flag changed)
  void not_reg(Reg reg) { bytes({rex_w(0, 0, reg), 0xf7, static_cast<std::uint8_t>(0xd0 | (reg & 7))}); }
  // lea dst, [base + index * scale + disp8] (scale 1, 2, 4 or 8; base neither rsp, rbp, r12 nor r13)
  void lea(Reg dst, Reg base, Reg index, std::uint8_t scale, std::int8_t disp8) {
    const std::uint8_t ss = scale == 8 ? 3 : scale == 4 ? 2 : scale == 2 ? 1 : 0;
    bytes({rex_w(dst, index, base), 0x8d, static_cast<std::uint8_t>((disp8 != 0 ? 0x44 : 0x04) | ((dst & 7) << 3)),
           static_cast<std::uint8_t>((ss << 6) | ((index & 7) << 3) | (base & 7))});
    if (disp8 != 0) {
      bytes({static_cast<std::uint8_t>(disp8)});
    }
  }
  // movzx dst32, src16 (the low 16 bits, zero-extended to 64)
  void movzx16(Reg dst, Reg src) {
    if (dst >= 8 || src >= 8) {
      bytes({static_cast<std::uint8_t>(0x40 | ((dst >> 3) << 2) | (src >> 3))});
    }
    bytes({0x0f, 0xb7, static_cast<std::uint8_t>(0xc0 | ((dst & 7) << 3) | (src & 7))});
  }
  // mov dst, [base + disp8] (base neither rsp, rbp, r12 nor r13)
  void load(Reg dst, Reg base, std::int8_t disp8) {
    bytes({rex_w(dst, 0, base), 0x8b, static_cast<std::uint8_t>(0x40 | ((dst & 7) << 3) | (base & 7)),
           static_cast<std::uint8_t>(disp8)});
  }
  // mov [rsp], src
  void store_at_rsp(Reg src) { bytes({rex_w(src, 0, 0), 0x89, static_cast<std::uint8_t>(0x04 | ((src & 7) << 3)), 0x24}); }

 private:
  // REX.W with the R, X and B bits of the registers in ModRM's reg, SIB's index and the base.
  static std::uint8_t rex_w(std::uint8_t reg, std::uint8_t index, std::uint8_t base) {
    return static_cast<std::uint8_t>(0x48 | ((reg >> 3) << 2) | ((index >> 3) << 1) | (base >> 3));
  }
  static std::uint8_t modrm_reg(std::uint8_t reg, std::uint8_t rm) {
    return static_cast<std::uint8_t>(0xc0 | ((reg & 7) << 3) | (rm & 7));
  }
  void gs_move(std::uint8_t opcode, Reg reg, const void* field) {
    bytes({0x65, static_cast<std::uint8_t>(0x48 | ((reg >> 3) << 2)), opcode,
           static_cast<std::uint8_t>(((reg & 7) << 3) | 4), 0x25});
    u32(static_cast<std::uint32_t>(gs_offset(field)));
  }
  std::uint8_t* p_;
};

}  // namespace recorder
