// Code that can change under its translation without a system call: a mapping shared with
// another view that may write it (a W^X JIT writes through a read-write view of one memfd and
// runs the read-execute one, never reprotected). Its translation checks, at each entry, the
// bytes it was made from: while they are the same it runs on; once they differ it goes to the
// code gate (recorder.cpp), which translates afresh or runs the code natively. The check keeps
// every register and the flags (saved below the red zone of the program's stack).
#pragma once

#include <cstddef>
#include <cstdint>

#include "tracer/inprocess/recorder/emitter.hpp"

namespace recorder {

// The most bytes emit_code_check emits for `source_bytes` of program code.
constexpr std::size_t code_check_bytes(std::size_t source_bytes) {
  return (source_bytes / 8 + 2) * 24 + 96;
}
// The check of the `length` bytes at program address `start`, whose values (as translated) are
// `source`: on to `body` when they are the same, else to the code gate with rax = start.
void emit_code_check(Emitter& e, std::uint64_t start, const std::uint8_t* source, std::size_t length,
                     std::uint64_t body);

}  // namespace recorder
