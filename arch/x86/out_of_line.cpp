#include "arch/x86/out_of_line.hpp"

#include <Zydis/Zydis.h>

#include <cstring>
#include <limits>

#include "arch/x86/instruction_length.hpp"
#include "arch/x86/zydis_decoder.hpp"

namespace arch::x86 {

std::optional<std::vector<std::uint8_t>> relocated_copy(std::span<const std::uint8_t> code, std::uint64_t from,
                                                       std::uint64_t at, Isa isa) {
  const ZydisDecoder* decoder = decoder_for(isa);
  ZydisDecodedInstruction insn;
  if (decoder == nullptr ||
      !ZYAN_SUCCESS(ZydisDecoderDecodeInstruction(decoder, nullptr, code.data(), insn_window(code), &insn))) {
    return std::nullopt;
  }
  auto info = decode_instruction(code, isa);
  if (!info || info->kind != InsnKind::Plain) {
    return std::nullopt;
  }
  if (insn.mnemonic == ZYDIS_MNEMONIC_UD0 || insn.mnemonic == ZYDIS_MNEMONIC_UD1 ||
      insn.mnemonic == ZYDIS_MNEMONIC_UD2 || insn.mnemonic == ZYDIS_MNEMONIC_HLT) {
    return std::nullopt;  // there only to fault: at home, where the program expects it
  }
  std::vector<std::uint8_t> copy(code.begin(), code.begin() + insn.length);
  if ((insn.attributes & ZYDIS_ATTRIB_IS_RELATIVE) != 0) {
    // (Not a branch: a memory operand relative to rip, its 32-bit displacement counted from
    // the next instruction.) Rebased from the original's next instruction to the copy's.
    if (insn.raw.disp.size != 32) {
      return std::nullopt;
    }
    const std::int64_t rebased = insn.raw.disp.value + static_cast<std::int64_t>(from - at);
    if (rebased < std::numeric_limits<std::int32_t>::min() || rebased > std::numeric_limits<std::int32_t>::max()) {
      return std::nullopt;
    }
    const auto disp = static_cast<std::int32_t>(rebased);
    std::memcpy(copy.data() + insn.raw.disp.offset, &disp, sizeof disp);  // (little-endian, as x86)
  }
  return copy;
}

std::optional<OutOfLineSlot> out_of_line_slot(std::span<const std::uint8_t> code, std::uint64_t from,
                                              std::uint64_t at, Isa isa) {
  auto copy = relocated_copy(code, from, at, isa);
  if (!copy) {
    return std::nullopt;
  }
  OutOfLineSlot slot;
  slot.length = static_cast<std::uint8_t>(copy->size());
  slot.bytes = std::move(*copy);
  const std::uint64_t back = from + slot.length;
  if (isa == Isa::I386) {
    // jmp rel32 from the end of the slot; 32-bit addresses wrap, so every one is in reach.
    const auto rel = static_cast<std::uint32_t>(back - (at + slot.length + 5));
    slot.bytes.push_back(0xe9);
    for (int i = 0; i < 4; ++i) {
      slot.bytes.push_back(static_cast<std::uint8_t>(rel >> (8 * i)));
    }
    return slot;
  }
  slot.bytes.insert(slot.bytes.end(), {0xff, 0x25, 0, 0, 0, 0});  // jmp [rip+0]: the address that follows
  for (int i = 0; i < 8; ++i) {
    slot.bytes.push_back(static_cast<std::uint8_t>(back >> (8 * i)));
  }
  return slot;
}

}  // namespace arch::x86
