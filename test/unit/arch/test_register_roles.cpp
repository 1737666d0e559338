// Register roles (arch/x86/register_roles.hpp): pc, sp, fp and flags by instruction set, and
// addresses to and from their register bytes.
#include <catch2/catch.hpp>

#include "arch/x86/register_roles.hpp"

using arch::x86::Isa;

TEST_CASE("register roles: amd64 and i386 numbers, addresses both ways", "[roles]") {
  const auto amd64 = arch::x86::register_roles(Isa::Amd64);
  CHECK(amd64.pc == 16);
  CHECK(amd64.word_bytes == 8);
  const auto i386 = arch::x86::register_roles(Isa::I386);
  CHECK(i386.pc == 8);
  CHECK(i386.word_bytes == 4);
  for (const auto& roles : {amd64, i386}) {
    const std::uint64_t addr = roles.word_bytes == 8 ? 0x55555555514eull : 0x0804851aull;
    const auto bytes = arch::x86::address_bytes(roles, addr);
    CHECK(bytes.size() == roles.word_bytes);
    CHECK(arch::x86::address_value(roles, bytes) == addr);
  }
  CHECK_FALSE(arch::x86::address_value(amd64, std::vector<std::uint8_t>(4, 0)));
}
