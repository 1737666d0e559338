#include "arch/x86/isa_extensions.hpp"

#include "arch/x86/zydis_decoder.hpp"

namespace arch::x86 {

bool uses_avx512(std::span<const std::uint8_t> code, Isa isa) {
  const ZydisDecoder* decoder = decoder_for(isa);
  if (decoder == nullptr) {
    return false;
  }
  ZydisDecodedInstruction insn;
  for (std::size_t at = 0; at < code.size();) {
    const auto rest = code.subspan(at);
    if (!ZYAN_SUCCESS(ZydisDecoderDecodeInstruction(decoder, nullptr, rest.data(), insn_window(rest), &insn))) {
      ++at;
      continue;
    }
    if (insn.encoding == ZYDIS_INSTRUCTION_ENCODING_EVEX) {
      return true;
    }
    at += insn.length;
  }
  return false;
}

}  // namespace arch::x86
