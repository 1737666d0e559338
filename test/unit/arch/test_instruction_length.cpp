// Instruction lengths and kinds from raw bytes, and the taken-branch rule of a stepping tracer.
#include <catch2/catch.hpp>

#include <cstdint>
#include <vector>

#include "arch/x86/instruction_length.hpp"
#include "arch/x86/isa_extensions.hpp"

using arch::x86::decode_instruction;
using arch::x86::Isa;
using arch::x86::InsnKind;
using arch::x86::InstructionInfo;
using arch::x86::step_took_branch;

namespace {

InstructionInfo decoded(std::vector<std::uint8_t> bytes) {
  auto info = decode_instruction(bytes);
  REQUIRE(info);
  return *info;
}

}  // namespace

TEST_CASE("decode_instruction: lengths and kinds", "[arch][insn]") {
  struct Row {
    std::vector<std::uint8_t> bytes;
    unsigned length;
    InsnKind kind;
  };
  const Row rows[] = {
      {{0x55}, 1, InsnKind::Plain},                                  // push %rbp
      {{0x48, 0x89, 0xe5}, 3, InsnKind::Plain},                      // mov %rsp,%rbp
      {{0xe8, 0x17, 0x00, 0x00, 0x00}, 5, InsnKind::Branch},         // call rel32
      {{0xeb, 0xf9}, 2, InsnKind::Branch},                           // jmp rel8
      {{0xeb, 0xfe}, 2, InsnKind::Branch},                           // jmp .
      {{0x0f, 0x84, 0x10, 0x00, 0x00, 0x00}, 6, InsnKind::Branch},   // je rel32
      {{0x74, 0x02}, 2, InsnKind::Branch},                           // je rel8
      {{0xc3}, 1, InsnKind::Branch},                                 // ret
      {{0xff, 0xd0}, 2, InsnKind::Branch},                           // call *%rax
      {{0xff, 0x25, 0, 0, 0, 0}, 6, InsnKind::Branch},               // jmp *0(%rip)
      {{0xe2, 0xfe}, 2, InsnKind::Branch},                           // loop .
      {{0xe3, 0x00}, 2, InsnKind::Branch},                           // jrcxz
      {{0x48, 0xcf}, 2, InsnKind::Branch},                           // iretq
      {{0xf3, 0xa4}, 2, InsnKind::RepString},                        // rep movsb
      {{0xf3, 0x48, 0xab}, 3, InsnKind::RepString},                  // rep stos %rax
      {{0xf2, 0xae}, 2, InsnKind::RepString},                        // repne scasb
      {{0xa4}, 1, InsnKind::Plain},                                  // movsb, no rep
      {{0xf3, 0xc3}, 2, InsnKind::Branch},                           // rep ret
      {{0x0f, 0x05}, 2, InsnKind::Syscall},                          // syscall
      {{0x0f, 0x34}, 2, InsnKind::Syscall},                          // sysenter
      {{0xcd, 0x80}, 2, InsnKind::Syscall},                          // int $0x80
      {{0xcd, 0x03}, 2, InsnKind::Trap},                             // int $3
      {{0xcc}, 1, InsnKind::Trap},                                   // int3
      {{0xf3, 0x0f, 0x1e, 0xfa}, 4, InsnKind::Plain},                // endbr64
      {{0x48, 0xb8, 1, 2, 3, 4, 5, 6, 7, 8}, 10, InsnKind::Plain},   // movabs $imm64,%rax
      {{0x66, 0x0f, 0x1f, 0x44, 0x00, 0x00}, 6, InsnKind::Plain},    // nopw 0(%rax,%rax)
  };
  for (const auto& r : rows) {
    INFO("first byte " << static_cast<int>(r.bytes[0]) << ", size " << r.bytes.size());
    const auto info = decoded(r.bytes);
    CHECK(info.length == r.length);
    CHECK(info.kind == r.kind);
  }
}

TEST_CASE("decode_instruction: trailing bytes are ignored, short or bad input is refused",
          "[arch][insn]") {
  CHECK(decoded({0xc3, 0xcc, 0xcc, 0x90}).length == 1);
  CHECK_FALSE(decode_instruction(std::vector<std::uint8_t>{0xe8, 0x17}));  // call cut short
  CHECK_FALSE(decode_instruction(std::vector<std::uint8_t>{}));
  CHECK_FALSE(decode_instruction(std::vector<std::uint8_t>{0x06}));  // push %es: invalid in 64-bit
}

TEST_CASE("step_took_branch: the single-step rule", "[arch][insn]") {
  const InstructionInfo mov{3, InsnKind::Plain};
  const InstructionInfo jmp{2, InsnKind::Branch};
  const InstructionInfo rep{2, InsnKind::RepString};
  const InstructionInfo sys{2, InsnKind::Syscall};
  const InstructionInfo je{2, InsnKind::Branch};

  CHECK_FALSE(step_took_branch(mov, 0x1000, 0x1003));  // sequential
  CHECK(step_took_branch(jmp, 0x1000, 0x2000));         // taken
  CHECK(step_took_branch(jmp, 0x1000, 0x1000));         // jmp .
  CHECK_FALSE(step_took_branch(je, 0x1000, 0x1002));    // not taken
  CHECK(step_took_branch(je, 0x1000, 0x1004));          // taken just past the next one
  CHECK_FALSE(step_took_branch(rep, 0x1000, 0x1000));   // one more iteration
  CHECK_FALSE(step_took_branch(rep, 0x1000, 0x1002));   // done
  CHECK_FALSE(step_took_branch(sys, 0x1000, 0x1002));   // ordinary system call
  CHECK_FALSE(step_took_branch(sys, 0x1000, 0x1000));   // restarted
  CHECK(step_took_branch(sys, 0x1000, 0x401234));       // rt_sigreturn back to the program
  CHECK_FALSE(step_took_branch(mov, 0x1000, 0x1000));   // did not run (trap before it)
}

TEST_CASE("uses_avx512 finds an EVEX instruction among others", "[arch][isa]") {
  using arch::x86::uses_avx512;
  const std::vector<std::uint8_t> plain = {0x55, 0x48, 0x89, 0xe5,              // push %rbp; mov %rsp,%rbp
                                           0xc5, 0xfd, 0xef, 0xc0,              // vpxor %ymm0 (VEX, AVX2)
                                           0x62, 0x00, 0xc3};                   // undecodable, then ret
  CHECK_FALSE(uses_avx512(plain, Isa::Amd64));
  std::vector<std::uint8_t> with = plain;
  with.insert(with.begin() + 4, {0x62, 0xf1, 0x75, 0x48, 0xef, 0xc9});  // vpxord %zmm1,%zmm1,%zmm1
  CHECK(uses_avx512(with, Isa::Amd64));
  CHECK_FALSE(uses_avx512({}, Isa::Amd64));
}

TEST_CASE("uses_avx512 reads 32-bit code as 32-bit code", "[arch][isa]") {
  using arch::x86::uses_avx512;
  // In 32-bit code 0x62 with a memory operand is `bound`; with a register one it is EVEX.
  const std::vector<std::uint8_t> bound = {0x62, 0x45, 0xf8, 0xc3};  // bound %eax,-0x8(%ebp); ret
  CHECK_FALSE(uses_avx512(bound, Isa::I386));
  const std::vector<std::uint8_t> evex = {0x62, 0xf1, 0x75, 0x48, 0xef, 0xc9, 0xc3};  // vpxord %zmm1,%zmm1,%zmm1
  CHECK(uses_avx512(evex, Isa::I386));
}
