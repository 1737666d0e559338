#include "arch/x86/jump_pad.hpp"

#include <cstring>
#include <limits>

#include "arch/x86/instruction_length.hpp"
#include "arch/x86/out_of_line.hpp"

namespace arch::x86 {
namespace {

using Code = std::vector<std::uint8_t>;

void put(Code& c, std::initializer_list<std::uint8_t> bytes) { c.insert(c.end(), bytes); }
template <class T>
void put_le(Code& c, T value) {
  for (std::size_t i = 0; i < sizeof(T); ++i) {
    c.push_back(static_cast<std::uint8_t>(static_cast<std::uint64_t>(value) >> (8 * i)));
  }
}

std::optional<std::int32_t> rel32(std::uint64_t target, std::uint64_t next) {
  const auto delta = static_cast<std::int64_t>(target - next);
  if (delta < std::numeric_limits<std::int32_t>::min() || delta > std::numeric_limits<std::int32_t>::max()) {
    return std::nullopt;
  }
  return static_cast<std::int32_t>(delta);
}

std::int32_t read_rel32(std::span<const std::uint8_t> code, std::size_t at) {
  std::int32_t v = 0;
  std::memcpy(&v, code.data() + at, sizeof v);
  return v;
}

// (push order: rdi rsi rdx rcx rax r8 r9 r10 r11 rbx rbp r12 r13 r14 r15, so that memory holds
// them from r15 up, in user_regs_struct's order.)
void push_registers(Code& c) {
  put(c, {0x57, 0x56, 0x52, 0x51, 0x50, 0x41, 0x50, 0x41, 0x51, 0x41, 0x52, 0x41, 0x53, 0x53, 0x55, 0x41,
          0x54, 0x41, 0x55, 0x41, 0x56, 0x41, 0x57});
}
void pop_registers(Code& c) {
  put(c, {0x41, 0x5f, 0x41, 0x5e, 0x41, 0x5d, 0x41, 0x5c, 0x5d, 0x5b, 0x41, 0x5b, 0x41, 0x5a, 0x41, 0x59,
          0x41, 0x58, 0x58, 0x59, 0x5a, 0x5e, 0x5f});
}

void load_save_mask(Code& c, std::uint64_t mask) {
  put(c, {0xb8});  // mov eax, low
  put_le(c, static_cast<std::uint32_t>(mask));
  put(c, {0xba});  // mov edx, high
  put_le(c, static_cast<std::uint32_t>(mask >> 32));
}

// The moved instruction as it runs in the pad at `at`, then the jump back; nothing if it
// cannot be moved there.
std::optional<Code> moved_instruction(std::span<const std::uint8_t> code, std::uint64_t from, std::uint8_t length,
                                      std::uint64_t at) {
  Code c;
  const std::uint64_t back = from + length;
  if (length == 5 && (code[0] == 0xe8 || code[0] == 0xe9)) {
    const std::uint64_t target = back + static_cast<std::int64_t>(read_rel32(code, 1));
    if (code[0] == 0xe8) {  // call: the original return address, then to the callee
      put(c, {0x48, 0x8d, 0x64, 0x24, 0xf8});  // lea rsp, [rsp-8]
      put(c, {0xc7, 0x04, 0x24});              // mov dword [rsp], low
      put_le(c, static_cast<std::uint32_t>(back));
      put(c, {0xc7, 0x44, 0x24, 0x04});        // mov dword [rsp+4], high
      put_le(c, static_cast<std::uint32_t>(back >> 32));
    }
    auto rel = rel32(target, at + c.size() + 5);
    if (!rel) {
      return std::nullopt;
    }
    put(c, {0xe9});
    put_le(c, *rel);
    return c;
  }
  if (length == 6 && code[0] == 0x0f && (code[1] & 0xf0) == 0x80) {  // jcc rel32
    const std::uint64_t target = back + static_cast<std::int64_t>(read_rel32(code, 2));
    auto rel = rel32(target, at + 6);
    if (!rel) {
      return std::nullopt;
    }
    put(c, {0x0f, code[1]});
    put_le(c, *rel);
  } else {
    auto copy = relocated_copy(code, from, at, Isa::Amd64);
    if (!copy) {
      return std::nullopt;
    }
    c = std::move(*copy);
  }
  auto rel = rel32(back, at + c.size() + 5);
  if (!rel) {
    return std::nullopt;
  }
  put(c, {0xe9});
  put_le(c, *rel);
  return c;
}

}  // namespace

std::optional<JumpPad> amd64_jump_pad(const JumpPadRequest& r) {
  auto info = decode_instruction(r.code, Isa::Amd64);
  if (!info || info->length < kJumpLength || info->length > r.code.size()) {
    return std::nullopt;
  }
  JumpPad out;
  out.moved = info->length;
  Code& c = out.pad;
  put(c, {0x48, 0x8d, 0x64, 0x24, 0x80});  // lea rsp, [rsp-128]: past the red zone
  put(c, {0x9c});                          // pushfq
  push_registers(c);
  put(c, {0xfc});                          // cld (the ABI's direction for the call)
  put(c, {0x48, 0x89, 0xe3});              // mov rbx, rsp: `saved`, kept across the call
  put(c, {0x48, 0x83, 0xe4, 0xc0});        // and rsp, -64
  const bool xsave = r.save_area != 0;
  const std::uint32_t area = ((xsave ? r.save_area : 512) + 63) & ~63u;
  put(c, {0x48, 0x81, 0xec});              // sub rsp, area
  put_le(c, area);
  if (xsave) {
    put(c, {0x31, 0xc0});  // xor eax, eax; then the XSAVE header zeroed (XRSTOR checks it)
    for (std::uint32_t off = 512; off < 576; off += 8) {
      put(c, {0x48, 0x89, 0x84, 0x24});  // mov [rsp+off], rax
      put_le(c, off);
    }
    load_save_mask(c, r.save_mask);
    if (r.xsaveopt) {
      put(c, {0x48, 0x0f, 0xae, 0x34, 0x24});  // xsaveopt64 [rsp]
    } else {
      put(c, {0x48, 0x0f, 0xae, 0x24, 0x24});  // xsave64 [rsp]
    }
  } else {
    put(c, {0x48, 0x0f, 0xae, 0x04, 0x24});  // fxsave64 [rsp]
  }
  put(c, {0x48, 0xbf});  // mov rdi, index
  put_le(c, r.index);
  put(c, {0x48, 0x89, 0xde});  // mov rsi, rbx
  put(c, {0x48, 0x89, 0xe2});  // mov rdx, rsp
  put(c, {0x48, 0xb9});        // mov rcx, tracepoint
  put_le(c, r.tracepoint);
  put(c, {0x48, 0xb8});        // mov rax, collector
  put_le(c, r.collector);
  put(c, {0xff, 0xd0});        // call rax
  if (xsave) {
    load_save_mask(c, r.save_mask);
    put(c, {0x48, 0x0f, 0xae, 0x2c, 0x24});  // xrstor64 [rsp]
  } else {
    put(c, {0x48, 0x0f, 0xae, 0x0c, 0x24});  // fxrstor64 [rsp]
  }
  put(c, {0x48, 0x89, 0xdc});  // mov rsp, rbx
  pop_registers(c);
  put(c, {0x9d});                                      // popfq
  put(c, {0x48, 0x8d, 0xa4, 0x24, 0x80, 0, 0, 0});    // lea rsp, [rsp+128]
  auto moved = moved_instruction(r.code, r.tracepoint, info->length, r.pad + c.size());
  auto to_pad = rel32(r.pad, r.tracepoint + kJumpLength);
  if (!moved || !to_pad) {
    return std::nullopt;
  }
  c.insert(c.end(), moved->begin(), moved->end());
  out.jump[0] = 0xe9;
  std::memcpy(out.jump.data() + 1, &*to_pad, 4);
  return out;
}

}  // namespace arch::x86
