#include "arch/x86/register_roles.hpp"

namespace arch::x86 {

RegisterRoles register_roles(Isa isa) {
  switch (isa) {
    case Isa::I386:  // eax ecx edx ebx esp ebp esi edi eip eflags ...
      return {.pc = 8, .sp = 4, .fp = 5, .flags = 9, .word_bytes = 4, .expedited = {5, 4, 8}};
    case Isa::Amd64:  // rax rbx rcx rdx rsi rdi rbp rsp r8..r15 rip eflags ...
      break;
  }
  return {.pc = 16, .sp = 7, .fp = 6, .flags = 17, .word_bytes = 8, .expedited = {6, 7, 16}};
}

std::optional<std::uint64_t> address_value(const RegisterRoles& roles, std::span<const std::uint8_t> bytes) {
  if (bytes.size() != roles.word_bytes) {
    return std::nullopt;
  }
  std::uint64_t value = 0;
  for (std::size_t i = 0; i < bytes.size(); ++i) {
    value |= static_cast<std::uint64_t>(bytes[i]) << (8 * i);
  }
  return value;
}

std::vector<std::uint8_t> address_bytes(const RegisterRoles& roles, std::uint64_t value) {
  std::vector<std::uint8_t> out(roles.word_bytes);
  for (std::size_t i = 0; i < out.size(); ++i) {
    out[i] = static_cast<std::uint8_t>(value >> (8 * i));
  }
  return out;
}

}  // namespace arch::x86
