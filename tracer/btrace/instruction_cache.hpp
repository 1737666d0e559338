// Decoded instructions of the inferior by address, so that single-stepping decodes each
// instruction once. Cleared when the code may have changed (memory writes, exec).
#pragma once

#include <unordered_map>

#include "arch/x86/instruction_length.hpp"
#include "tracer/types.hpp"

namespace tracer {

class InstructionCache {
 public:
  const arch::x86::InstructionInfo* find(Addr addr) const {
    auto it = map_.find(addr);
    return it == map_.end() ? nullptr : &it->second;
  }
  const arch::x86::InstructionInfo& insert(Addr addr, const arch::x86::InstructionInfo& info) {
    return map_.insert_or_assign(addr, info).first->second;
  }
  void clear() { map_.clear(); }
  void erase(Addr addr) { map_.erase(addr); }
  std::size_t size() const { return map_.size(); }

 private:
  std::unordered_map<Addr, arch::x86::InstructionInfo> map_;
};

}  // namespace tracer
