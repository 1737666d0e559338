// How far a range step may run to a temporary int3: up to the first control transfer.
#include <catch2/catch.hpp>

#include <cstdint>
#include <vector>

#include "arch/x86/straight_line.hpp"

using arch::x86::straight_line_length;

TEST_CASE("straight_line_length: the instructions before the first control transfer", "[arch][range]") {
  // gcc -O0, `for (i = 0; i < N; i++) sink += i;` (bench_target.c's spin): the body's line, then the
  // loop line that ends in jbe.
  const std::vector<std::uint8_t> body = {
      0x48, 0x8b, 0x15, 0xa0, 0x2e, 0x00, 0x00,  // mov 0x2ea0(%rip),%rdx
      0x48, 0x8b, 0x45, 0xf8,                    // mov -0x8(%rbp),%rax
      0x48, 0x01, 0xd0,                          // add %rdx,%rax
      0x48, 0x89, 0x05, 0x92, 0x2e, 0x00, 0x00,  // mov %rax,0x2e92(%rip)
  };
  CHECK(straight_line_length(body) == body.size());  // falls through to the range's end
  const std::vector<std::uint8_t> loop = {
      0x48, 0x83, 0x45, 0xf8, 0x01,                    // addq $0x1,-0x8(%rbp)
      0x48, 0x81, 0x7d, 0xf8, 0xff, 0xc9, 0x9a, 0x3b,  // cmpq $0x3b9ac9ff,-0x8(%rbp)
      0x76, 0xdc,                                      // jbe
  };
  CHECK(straight_line_length(loop) == 13);  // stops at the jbe

  CHECK(straight_line_length(std::vector<std::uint8_t>{0xe8, 0, 0, 0, 0}) == 0);  // call: at once
  CHECK(straight_line_length(std::vector<std::uint8_t>{0x90, 0x0f, 0x05}) == 1);  // syscall
  CHECK(straight_line_length(std::vector<std::uint8_t>{0x90, 0xcc}) == 1);        // the program's int3
  CHECK(straight_line_length(std::vector<std::uint8_t>{0x90, 0xc3}) == 1);        // ret
  CHECK(straight_line_length(std::vector<std::uint8_t>{0xf3, 0xa4, 0x90}) == 3);  // rep movsb falls through
  // An instruction cut by the end of the range, or bytes that are no instruction: stop before.
  CHECK(straight_line_length(std::vector<std::uint8_t>{0x90, 0x48, 0x8b}) == 1);
  CHECK(straight_line_length(std::vector<std::uint8_t>{0x90, 0x0f, 0xff}) == 1);
  CHECK(straight_line_length(std::vector<std::uint8_t>{}) == 0);
}

TEST_CASE("straight_line_length, 32-bit code: decoded as the program runs it", "[arch][range][i386]") {
  using arch::x86::Isa;
  // inc eax; dec ecx; int 0x80. As 64-bit code the same bytes are REX prefixes of int 0x80.
  const std::vector<std::uint8_t> code = {0x40, 0x49, 0xcd, 0x80};
  CHECK(straight_line_length(code, Isa::I386) == 2);
  CHECK(straight_line_length(code, Isa::Amd64) == 0);
  // gcc -m32 -O0: mov 0x8(%ebp),%edx; mov 0xc(%ebp),%eax; add %edx,%eax; pop %ebp; ret.
  const std::vector<std::uint8_t> add = {0x8b, 0x55, 0x08, 0x8b, 0x45, 0x0c, 0x01, 0xd0, 0x5d, 0xc3};
  CHECK(straight_line_length(add, Isa::I386) == 9);
}
