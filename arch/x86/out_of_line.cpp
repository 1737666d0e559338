#include "arch/x86/out_of_line.hpp"

#include <Zydis/Zydis.h>

#include "arch/x86/instruction_length.hpp"
#include "arch/x86/zydis_decoder.hpp"

namespace arch::x86 {

std::optional<std::uint8_t> relocatable_length(std::span<const std::uint8_t> code) {
  const ZydisDecoder* decoder = long_mode_decoder();
  ZydisDecodedInstruction insn;
  if (decoder == nullptr ||
      !ZYAN_SUCCESS(ZydisDecoderDecodeInstruction(decoder, nullptr, code.data(), insn_window(code), &insn))) {
    return std::nullopt;
  }
  auto info = decode_instruction(code);
  if (!info || info->kind != InsnKind::Plain || (insn.attributes & ZYDIS_ATTRIB_IS_RELATIVE) != 0) {
    return std::nullopt;
  }
  if (insn.mnemonic == ZYDIS_MNEMONIC_UD0 || insn.mnemonic == ZYDIS_MNEMONIC_UD1 ||
      insn.mnemonic == ZYDIS_MNEMONIC_UD2 || insn.mnemonic == ZYDIS_MNEMONIC_HLT) {
    return std::nullopt;  // there only to fault: at home, where the program expects it
  }
  return insn.length;
}

std::vector<std::uint8_t> out_of_line_slot(std::span<const std::uint8_t> insn, std::uint64_t from) {
  std::vector<std::uint8_t> slot(insn.begin(), insn.end());
  const std::uint64_t back = from + insn.size();
  slot.insert(slot.end(), {0xff, 0x25, 0, 0, 0, 0});  // jmp [rip+0]: the address that follows
  for (int i = 0; i < 8; ++i) {
    slot.push_back(static_cast<std::uint8_t>(back >> (8 * i)));
  }
  return slot;
}

}  // namespace arch::x86
