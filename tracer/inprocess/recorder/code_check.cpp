#include "tracer/inprocess/recorder/code_check.hpp"

#include <cstring>

#include "tracer/inprocess/recorder/branch_sequences.hpp"

namespace recorder {
namespace {

const ThreadState& ts() {
  return slots();
}

void jmp_to(Emitter& e, std::uint64_t to) {
  e.bytes({0xe9});
  e.u32(static_cast<std::uint32_t>(to - (e.address() + 4)));
}

// The flags saved below the red zone; rax and rcx in the block.
void save(Emitter& e) {
  e.store_gs(&ts().save_rax, kRax);
  e.store_gs(&ts().save_rcx, kRcx);
  e.bytes({0x48, 0x8d, 0x64, 0x24, 0x80});  // lea rsp, [rsp-128]
  e.bytes({0x9c});                          // pushfq
}

void restore(Emitter& e) {
  e.bytes({0x9d});                                   // popfq
  e.bytes({0x48, 0x8d, 0xa4, 0x24, 0x80, 0, 0, 0});  // lea rsp, [rsp+128]
  e.load_gs(kRax, &ts().save_rax);
  e.load_gs(kRcx, &ts().save_rcx);
}

}  // namespace

void emit_code_check(Emitter& e, std::uint64_t start, const std::uint8_t* source, std::size_t length,
                     std::uint64_t body) {
  save(e);
  constexpr std::size_t kMostCompares = 128;
  std::uint8_t* to_stale[kMostCompares];
  int n = 0;
  length = length > (kMostCompares - 8) * 8 ? (kMostCompares - 8) * 8 : length;  // (a block is shorter)
  // 8 bytes at a time (the last 8 overlap the one before), then what a short block has left.
  auto compare = [&](std::size_t at, std::size_t width) {
    std::uint64_t value = 0;
    __builtin_memcpy(&value, source + at, width);
    if (width == 8) {
      e.bytes({0x48, 0xa1});  // mov rax, [moffs64]
    } else if (width == 4) {
      e.bytes({0xa1});  // mov eax, [moffs64]
    } else {
      e.bytes({0xa0});  // mov al, [moffs64]
    }
    e.u64(start + at);
    if (width == 1) {
      e.bytes({0x3c, static_cast<std::uint8_t>(value)});  // cmp al, imm8
    } else {
      e.mov_imm64(kRcx, value);
      e.bytes({static_cast<std::uint8_t>(width == 8 ? 0x48 : 0x40), 0x39, 0xc8});  // cmp rax/eax, rcx/ecx
    }
    e.bytes({0x0f, 0x85});  // jne stale
    to_stale[n++] = e.here();
    e.u32(0);
  };
  std::size_t at = 0;
  for (; at + 8 <= length; at += 8) {
    compare(at, 8);
  }
  if (at < length && length >= 8) {
    compare(length - 8, 8);
  } else {
    for (; at + 4 <= length; at += 4) {
      compare(at, 4);
    }
    for (; at < length; ++at) {
      compare(at, 1);
    }
  }
  restore(e);
  jmp_to(e, body);
  for (int i = 0; i < n; ++i) {
    const auto rel = static_cast<std::uint32_t>(e.here() - (to_stale[i] + 4));
    __builtin_memcpy(to_stale[i], &rel, 4);
  }
  restore(e);
  emit_save_scratch(e);
  e.mov_imm64(kRax, start);
  e.bytes({0xb9, 0, 0, 0, 0});  // mov ecx, 0: no exit to link
  e.jmp_gs(&ts().code_gate);
}

}  // namespace recorder
