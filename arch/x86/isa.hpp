// The instruction set a thread runs: x86-64, or i386 (a 32-bit program on a 64-bit kernel).
// It decides register numbers and layout, the target description and how code decodes.
#pragma once

#include <cstdint>
#include <optional>
#include <span>

namespace arch::x86 {

enum class Isa : std::uint8_t { Amd64, I386 };

// The ELF header's identification (e_ident[EI_CLASS], e_machine) as the instruction set it
// runs under, or Amd64 for anything else (x32 runs 64-bit code).
inline Isa isa_of_elf(std::uint8_t elf_class, std::uint16_t machine) {
  constexpr std::uint8_t kElfClass32 = 1;
  constexpr std::uint16_t kEm386 = 3;
  return elf_class == kElfClass32 && machine == kEm386 ? Isa::I386 : Isa::Amd64;
}

// The same from the first 20 bytes of a file (e_ident, e_type, e_machine); nothing when they
// are not an ELF header.
inline std::optional<Isa> isa_of_elf_header(std::span<const std::uint8_t> header) {
  if (header.size() < 20 || header[0] != 0x7f || header[1] != 'E' || header[2] != 'L' || header[3] != 'F') {
    return std::nullopt;
  }
  return isa_of_elf(header[4], static_cast<std::uint16_t>(header[18] | header[19] << 8));
}

}  // namespace arch::x86
