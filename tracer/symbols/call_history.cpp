#include "tracer/symbols/call_history.hpp"

#include <algorithm>
#include <iterator>

#include "arch/x86/instruction_length.hpp"

namespace tracer {
namespace {

bool is_gap(const BtraceBlock& b) { return b.begin > b.end; }

// Same function: the same symbol, or (no symbol) the same module.
bool same_function(const SourceLocation& a, const SourceLocation& b) {
  if (a.function_start != 0 || b.function_start != 0) {
    return a.function_start == b.function_start;
  }
  return a.module == b.module;
}

Entered entered_by(Transfer t) {
  switch (t) {
    case Transfer::Call: return Entered::Call;
    case Transfer::Return: return Entered::Return;
    case Transfer::Syscall: return Entered::Sigreturn;
    case Transfer::Other: return Entered::Signal;
    case Transfer::Jump:
    case Transfer::Unknown: break;
  }
  return Entered::Jump;
}

int depth_change(Entered how) {
  switch (how) {
    case Entered::Call:
    case Entered::Signal: return 1;
    case Entered::Return:
    case Entered::Sigreturn: return -1;
    default: return 0;
  }
}

}  // namespace

const char* entered_name(Entered how) {
  switch (how) {
    case Entered::Start: return "start";
    case Entered::Call: return "call";
    case Entered::Return: return "return";
    case Entered::Jump: return "jump";
    case Entered::Signal: return "signal";
    case Entered::Sigreturn: return "sigreturn";
    case Entered::Gap: return "gap";
  }
  return "?";
}

Transfer classify_transfer(std::span<const std::uint8_t> code, arch::x86::Isa isa) {
  if (code.empty()) {
    return Transfer::Unknown;
  }
  using arch::x86::InsnKind;
  using arch::x86::StackEffect;
  auto insn = arch::x86::decode_instruction(code, isa);
  if (!insn) {
    return Transfer::Other;
  }
  switch (insn->kind) {
    case InsnKind::Syscall: return Transfer::Syscall;  // syscall; in i386 code int $0x80 or sysenter
    case InsnKind::Branch:
      return insn->stack == StackEffect::Call     ? Transfer::Call
             : insn->stack == StackEffect::Return ? Transfer::Return
                                                  : Transfer::Jump;
    default: return Transfer::Other;
  }
}

CallHistory fold_calls(const std::vector<BtraceBlock>& blocks, const ClassifyAt& classify, const LocateAt& locate,
                       std::size_t keep_last, std::span<const std::uint64_t> began_ns) {
  CallHistory h;
  int depth = 0;
  bool after_gap = false;
  const BtraceBlock* previous = nullptr;
  for (auto it = blocks.rbegin(); it != blocks.rend(); ++it) {
    if (is_gap(*it)) {
      ++h.gaps;
      after_gap = true;
      continue;
    }
    const Addr start = it->begin != 0 ? it->begin : it->end;
    const SourceLocation& where = locate(start);
    Entered how = Entered::Start;
    if (previous != nullptr && after_gap) {
      how = Entered::Gap;
    } else if (previous != nullptr) {
      ++h.branches;
      how = entered_by(classify(previous->end));
    }
    const bool stays = how == Entered::Jump && !h.entries.empty() && same_function(h.entries.back().where, where);
    if (stays) {
      ++h.entries.back().branches;
    } else {
      depth += depth_change(how);
      const auto index = static_cast<std::size_t>(std::distance(blocks.begin(), it.base()) - 1);
      const std::uint64_t t_ns = index < began_ns.size() ? began_ns[index] : 0;
      h.entries.push_back(HistoryEntry{where, start, depth, how, 0, t_ns});
    }
    previous = &*it;
    after_gap = false;
  }
  if (h.entries.size() > keep_last) {
    h.dropped = h.entries.size() - keep_last;
    h.entries.erase(h.entries.begin(), h.entries.begin() + static_cast<std::ptrdiff_t>(h.dropped));
  }
  if (!h.entries.empty()) {
    const int lowest = std::min_element(h.entries.begin(), h.entries.end(), [](const auto& a, const auto& b) {
                         return a.depth < b.depth;
                       })->depth;
    for (auto& e : h.entries) {
      e.depth -= lowest;
    }
  }
  return h;
}

}  // namespace tracer
