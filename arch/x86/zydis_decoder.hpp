// The Zydis decoders for 64-bit and 32-bit (compatibility mode) code, each set up once, and the
// bytes an instruction may span.
// Internal to arch/x86 (the .cpp files that decode with Zydis).
#pragma once

#include <Zydis/Zydis.h>

#include <cstddef>
#include <cstdint>
#include <span>

#include "arch/x86/instruction_length.hpp"
#include "arch/x86/isa.hpp"

namespace arch::x86 {

// nullptr if Zydis refuses the mode (it never does; callers then decode nothing).
inline const ZydisDecoder* decoder_for(Isa isa) {
  static const ZydisDecoder* const long_mode = [] {
    static ZydisDecoder d;
    return ZYAN_SUCCESS(ZydisDecoderInit(&d, ZYDIS_MACHINE_MODE_LONG_64, ZYDIS_STACK_WIDTH_64)) ? &d : nullptr;
  }();
  static const ZydisDecoder* const compat_mode = [] {
    static ZydisDecoder d;
    return ZYAN_SUCCESS(ZydisDecoderInit(&d, ZYDIS_MACHINE_MODE_LONG_COMPAT_32, ZYDIS_STACK_WIDTH_32)) ? &d : nullptr;
  }();
  return isa == Isa::I386 ? compat_mode : long_mode;
}

// How many bytes of code an instruction at its start may use.
inline std::size_t insn_window(std::span<const std::uint8_t> code) {
  return code.size() < kMaxInstructionLength ? code.size() : kMaxInstructionLength;
}

}  // namespace arch::x86
