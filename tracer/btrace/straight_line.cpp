// Decoding forward through straight-line code, a chunk of inferior memory at a time.
#include "tracer/btrace/straight_line.hpp"

#include "arch/x86/instruction_length.hpp"

namespace tracer {
namespace {

constexpr std::size_t kChunk = 256;

// Code bytes read ahead, so that decoding an instruction costs no system call.
class CodeWindow {
 public:
  explicit CodeWindow(CollectorHost& host) : host_(host) {}

  // The bytes from addr on (up to kMaxInstructionLength, fewer at the end of readable memory), or
  // nothing.
  std::optional<std::span<const std::uint8_t>> at(Addr addr) {
    if (addr < base_ || addr + arch::x86::kMaxInstructionLength > base_ + bytes_.size()) {
      auto got = host_.read_code(addr, kChunk);
      if (!got || got->empty()) {
        return std::nullopt;
      }
      bytes_ = std::move(*got);
      base_ = addr;
    }
    const std::size_t off = addr - base_;
    const std::size_t len = std::min(arch::x86::kMaxInstructionLength, bytes_.size() - off);
    return std::span<const std::uint8_t>(bytes_.data() + off, len);
  }

 private:
  CollectorHost& host_;
  Bytes bytes_;
  Addr base_ = 0;
};

}  // namespace

base::Result<Addr> StraightLineMap::stop_from(Addr start, CollectorHost& host) {
  if (auto hit = runs_.find(start); hit != runs_.end()) {
    return hit->second.stop;
  }
  CodeWindow code(host);
  Addr pc = start;
  for (int n = 0;; ++n) {
    auto bytes = code.at(pc);
    if (!bytes) {
      if (pc == start) {
        return base::make_error(base::Errc::system, "code unreadable");
      }
      break;  // the run goes off readable memory: stop on its last instruction's successor
    }
    auto insn = arch::x86::decode_instruction(*bytes, host.isa());
    if (!insn || insn->kind == arch::x86::InsnKind::Branch) {
      break;
    }
    if (n >= kMaxRun && insn->kind != arch::x86::InsnKind::Syscall) {
      break;
    }
    pc += insn->length;
  }
  Run run{pc, {}};
  if (pc > start) {
    auto bytes = host.read_code(start, pc - start);
    if (!bytes || bytes->size() != pc - start) {
      return base::make_error(base::Errc::system, "code unreadable");
    }
    run.code = std::move(*bytes);
  }
  runs_.emplace(start, std::move(run));
  return pc;
}

std::optional<Addr> StraightLineMap::previous(Addr start, Addr at, CollectorHost& host) {
  CodeWindow code(host);
  Addr pc = start;
  while (pc < at) {
    auto bytes = code.at(pc);
    if (!bytes) {
      return std::nullopt;
    }
    auto insn = arch::x86::decode_instruction(*bytes, host.isa());
    if (!insn) {
      return std::nullopt;
    }
    if (pc + insn->length == at) {
      return pc;
    }
    pc += insn->length;
  }
  return std::nullopt;
}

const std::optional<arch::x86::BranchInstruction>& StraightLineMap::branch_at(Addr addr, CollectorHost& host) {
  if (auto hit = branches_.find(addr); hit != branches_.end()) {
    return hit->second;
  }
  std::optional<arch::x86::BranchInstruction> branch;
  if (auto bytes = host.read_code(addr, arch::x86::kMaxInstructionLength); bytes && !bytes->empty()) {
    branch = arch::x86::decode_branch(*bytes, host.isa());
  }
  return branches_.emplace(addr, branch).first->second;
}

}  // namespace tracer
