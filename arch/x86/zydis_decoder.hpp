// The one Zydis decoder for 64-bit code, set up once, and the bytes an instruction may span.
// Internal to arch/x86 (the .cpp files that decode with Zydis).
#pragma once

#include <Zydis/Zydis.h>

#include <cstddef>
#include <cstdint>
#include <span>

namespace arch::x86 {

inline constexpr std::size_t kMaxInsnLength = 15;

// nullptr if Zydis refuses 64-bit mode (it never does; callers then decode nothing).
inline const ZydisDecoder* long_mode_decoder() {
  static const ZydisDecoder* const decoder = [] {
    static ZydisDecoder d;
    return ZYAN_SUCCESS(ZydisDecoderInit(&d, ZYDIS_MACHINE_MODE_LONG_64, ZYDIS_STACK_WIDTH_64)) ? &d : nullptr;
  }();
  return decoder;
}

// How many bytes of code an instruction at its start may use.
inline std::size_t insn_window(std::span<const std::uint8_t> code) {
  return code.size() < kMaxInsnLength ? code.size() : kMaxInsnLength;
}

}  // namespace arch::x86
