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
