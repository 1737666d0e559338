// Straight-line code as SoftEmulate sees it: from an address, decoding forward, the first
// instruction that may send control elsewhere (where its int3 goes), and the branch decoded
// there. Both cached, since threads come back to the same code; cleared when code may change.
#pragma once

#include <optional>
#include <unordered_map>

#include "arch/x86/branch_emulation.hpp"
#include "base/result.hpp"
#include "tracer/btrace/collector.hpp"
#include "tracer/types.hpp"

namespace tracer {

class StraightLineMap {
 public:
  // A run longer than this many instructions ends on a plain one (stepped over at its trap).
  static constexpr int kMaxRun = 4096;

  // The first byte of the instruction that ends the straight-line run starting at start: the
  // first branch, bytes that do not decode, or the kMaxRun-th instruction (never a system
  // call). System calls, string instructions and the program's own traps run inside a run.
  base::Result<Addr> stop_from(Addr start, CollectorHost& host);

  // The bytes [start, stop) of the run from start as decoded (empty when not cached).
  std::span<const std::uint8_t> code_of(Addr start) const {
    auto hit = runs_.find(start);
    return hit == runs_.end() ? std::span<const std::uint8_t>() : std::span<const std::uint8_t>(hit->second.code);
  }
  void forget_branch(Addr addr) { branches_.erase(addr); }

  // The instruction just before `at` on the run from start, or nothing when `at` is start or
  // is not an instruction boundary of that run.
  std::optional<Addr> previous(Addr start, Addr at, CollectorHost& host);

  // The branch at addr, decoded once; nothing when the emulator does not perform what is there.
  const std::optional<arch::x86::BranchInstruction>& branch_at(Addr addr, CollectorHost& host);

  void clear() {
    runs_.clear();
    branches_.clear();
  }
  std::size_t runs() const { return runs_.size(); }

 private:
  struct Run {
    Addr stop = 0;
    Bytes code;  // [start, stop) as decoded
  };
  std::unordered_map<Addr, Run> runs_;
  std::unordered_map<Addr, std::optional<arch::x86::BranchInstruction>> branches_;
};

}  // namespace tracer
