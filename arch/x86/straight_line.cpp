#include "arch/x86/straight_line.hpp"

#include "arch/x86/instruction_length.hpp"

namespace arch::x86 {

std::size_t straight_line_length(std::span<const std::uint8_t> code, Isa isa) {
  std::size_t at = 0;
  while (at < code.size()) {
    auto insn = decode_instruction(code.subspan(at), isa);
    if (!insn || insn->length == 0 || at + insn->length > code.size() ||
        (insn->kind != InsnKind::Plain && insn->kind != InsnKind::RepString)) {
      break;
    }
    at += insn->length;
  }
  return at;
}

}  // namespace arch::x86
