// The recording thread's own block, reached from translated code through %fs (its TLS): the
// scratch slots the branch sequences save registers in, the ring's head, the lookup table and
// the dispatcher's address. An %fs-relative operand is absolute, so code in any cache region
// (each near its own program code) reaches the same block. Prototype: one thread records.
#pragma once

#include <cstdint>

#include "tracer/inprocess/recorder/recorder_ring.h"

namespace recorder {

struct LookupEntry;

struct ThreadState {
  std::uint64_t save_rax = 0;
  std::uint64_t save_rcx = 0;
  std::uint64_t save_rdx = 0;
  std::uint64_t save_rsp = 0;  // the program's, while the dispatcher runs on its own stack
  std::uint64_t target = 0;    // the cache address the next `jmp fs:[target]` goes to
  hs_recorder_ring ring{};
  LookupEntry* lookup = nullptr;
  std::uint64_t dispatch = 0;           // the dispatcher's entry (code_cache.cpp emits it)
  std::uint64_t private_stack_top = 0;  // 16-byte aligned
  std::uint8_t* xsave_area = nullptr;   // 64-byte aligned
};

extern thread_local ThreadState tls_state;

// The %fs-relative displacement of one byte of tls_state (which lives in the executable's
// static TLS block, at a fixed distance from the thread pointer).
std::int32_t fs_offset(const void* field);

}  // namespace recorder
