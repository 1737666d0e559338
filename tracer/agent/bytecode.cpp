#include "tracer/agent/bytecode.hpp"

#include "tracer/agent/printf.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <optional>
#include <string>
#include <vector>

namespace tracer::agent {
namespace {

// The opcodes this engine runs (GDB's numbering, gdbsupport/ax.def).
enum Op : std::uint8_t {
  kAdd = 0x02, kSub = 0x03, kMul = 0x04, kDivSigned = 0x05, kDivUnsigned = 0x06,
  kRemSigned = 0x07, kRemUnsigned = 0x08, kLsh = 0x09, kRshSigned = 0x0a, kRshUnsigned = 0x0b,
  kTrace = 0x0c, kTraceQuick = 0x0d, kLogNot = 0x0e, kBitAnd = 0x0f, kBitOr = 0x10, kBitXor = 0x11, kBitNot = 0x12, kEqual = 0x13,
  kLessSigned = 0x14, kLessUnsigned = 0x15, kExt = 0x16, kRef8 = 0x17, kRef16 = 0x18,
  kRef32 = 0x19, kRef64 = 0x1a, kIfGoto = 0x20, kGoto = 0x21, kConst8 = 0x22, kConst16 = 0x23,
  kConst32 = 0x24, kConst64 = 0x25, kReg = 0x26, kEnd = 0x27, kDup = 0x28, kPop = 0x29,
  kZeroExt = 0x2a, kSwap = 0x2b, kGetv = 0x2c, kSetv = 0x2d, kTracev = 0x2e, kTracenz = 0x2f,
  kTrace16 = 0x30, kPick = 0x32, kRot = 0x33, kPrintf = 0x34,
};

// Operand bytes after each opcode this engine runs; -1: not an opcode it runs.
constexpr std::array<int, 256> kOperandBytes = [] {
  std::array<int, 256> t{};
  t.fill(-1);
  for (int op : {kAdd, kSub, kMul, kDivSigned, kDivUnsigned, kRemSigned, kRemUnsigned, kLsh, kRshSigned,
                 kRshUnsigned, kLogNot, kBitAnd, kBitOr, kBitXor, kBitNot, kEqual, kLessSigned, kLessUnsigned,
                 kRef8, kRef16, kRef32, kRef64, kEnd, kDup, kPop, kSwap, kRot, kTrace, kTracenz}) {
    t[static_cast<std::size_t>(op)] = 0;
  }
  for (int op : {kExt, kZeroExt, kConst8, kPick, kTraceQuick}) {
    t[static_cast<std::size_t>(op)] = 1;
  }
  for (int op : {kIfGoto, kGoto, kConst16, kReg, kGetv, kSetv, kTracev, kTrace16}) {
    t[static_cast<std::size_t>(op)] = 2;
  }
  t[kConst32] = 4;
  t[kConst64] = 8;
  t[kPrintf] = 0;  // (variable: see instruction_size)
  return t;
}();

// printf's operands: the count of values it takes (1 byte), then its format: a 2-byte length,
// the bytes, the last a NUL.
constexpr std::size_t kPrintfHeader = 3;

// Operands are big-endian, whatever the target.
std::uint64_t operand(std::span<const std::uint8_t> code, std::size_t at, int bytes) {
  std::uint64_t v = 0;
  for (int i = 0; i < bytes; ++i) {
    v = (v << 8) | code[at + static_cast<std::size_t>(i)];
  }
  return v;
}

base::Error malformed(const std::string& what, std::size_t at) {
  return base::Error{base::Errc::malformed, 0, "agent expression: " + what + " at byte " + std::to_string(at)};
}

base::Error fault(const std::string& what, std::size_t at) {
  return base::Error{base::Errc::invalid, 0, "agent expression: " + what + " at byte " + std::to_string(at)};
}

std::uint64_t sign_extend(std::uint64_t v, unsigned bits) {
  if (bits == 0 || bits >= 64) {
    return v;
  }
  const std::uint64_t sign = std::uint64_t{1} << (bits - 1);
  const std::uint64_t mask = (std::uint64_t{1} << bits) - 1;
  v &= mask;
  return (v ^ sign) - sign;
}

std::uint64_t zero_extend(std::uint64_t v, unsigned bits) {
  return bits >= 64 ? v : v & ((std::uint64_t{1} << bits) - 1);
}

// Bytes of the instruction at pc, operands included; 0 if they run past the end.
std::size_t instruction_size(std::span<const std::uint8_t> code, std::size_t pc) {
  if (code[pc] == kPrintf) {
    if (pc + 1 + kPrintfHeader > code.size()) {
      return 0;
    }
    const std::size_t size = 1 + kPrintfHeader + operand(code, pc + 2, 2);
    return pc + size > code.size() ? 0 : size;
  }
  const std::size_t size = 1 + static_cast<std::size_t>(kOperandBytes[code[pc]]);
  return pc + size > code.size() ? 0 : size;
}

base::Error not_collecting() {
  return base::make_error(base::Errc::invalid, "no trace frame is being collected");
}

}  // namespace

base::Result<void> Machine::collect(Addr, std::size_t) { return not_collecting(); }
base::Result<void> Machine::collect_string(Addr, std::size_t) { return not_collecting(); }
base::Result<std::int64_t> Machine::variable(std::uint32_t) { return not_collecting(); }
base::Result<void> Machine::set_variable(std::uint32_t, std::int64_t) { return not_collecting(); }
base::Result<void> Machine::collect_variable(std::uint32_t) { return not_collecting(); }

base::Result<void> validate(std::span<const std::uint8_t> code) {
  if (code.empty()) {
    return malformed("empty expression", 0);
  }
  if (code.size() > kMaxLength) {
    return malformed("longer than " + std::to_string(kMaxLength) + " bytes", kMaxLength);
  }
  std::vector<bool> starts(code.size(), false);
  bool has_end = false;
  for (std::size_t pc = 0; pc < code.size();) {
    const int bytes = kOperandBytes[code[pc]];
    if (bytes < 0) {
      return malformed(fmt::format("opcode {:#04x} is not supported", code[pc]), pc);
    }
    const std::size_t size = instruction_size(code, pc);
    if (size == 0) {
      return malformed("operand runs past the end", pc);
    }
    if (code[pc] == kPrintf && (size == 1 + kPrintfHeader || code[pc + size - 1] != 0)) {
      return malformed("printf format not ended by a NUL", pc);
    }
    starts[pc] = true;
    has_end = has_end || code[pc] == kEnd;
    pc += size;
  }
  if (!has_end) {
    return malformed("no end", code.size());
  }
  for (std::size_t pc = 0; pc < code.size(); pc += instruction_size(code, pc)) {
    if (code[pc] == kIfGoto || code[pc] == kGoto) {
      const std::uint64_t target = operand(code, pc + 1, 2);
      if (target >= code.size() || !starts[target]) {
        return malformed("jump to " + std::to_string(target) + ", not an instruction", pc);
      }
    }
  }
  return base::success();
}

Usage usage(std::span<const std::uint8_t> code) {
  Usage u;
  for (std::size_t pc = 0; pc < code.size();) {
    const std::size_t size = kOperandBytes[code[pc]] < 0 ? 0 : instruction_size(code, pc);
    if (size == 0) {
      break;  // (not validated: what was seen so far)
    }
    switch (code[pc]) {
      case kReg: u.highest_register = std::max(u.highest_register, static_cast<int>(operand(code, pc + 1, 2))); break;
      case kGetv: case kSetv: case kTracev: u.state_variables = true; break;
      case kPrintf: u.printf = true; break;
      default: break;
    }
    pc += size;
  }
  return u;
}

namespace {

// Runs code to its `end`: the value then on top of the stack, or nullopt if the stack is empty
// and no value is wanted.
base::Result<std::optional<std::uint64_t>> run(std::span<const std::uint8_t> code, Machine& machine,
                                               bool value_wanted) {
  if (auto ok = validate(code); !ok) {
    return std::move(ok).error();
  }
  std::vector<std::uint64_t> stack;
  stack.reserve(16);
  std::size_t pc = 0;
  for (std::size_t steps = 0;; ++steps) {
    if (steps == kMaxSteps) {
      return fault("more than " + std::to_string(kMaxSteps) + " steps", pc);
    }
    const std::uint8_t op = code[pc];
    const std::uint64_t arg = operand(code, pc + 1, op == kPrintf ? 1 : kOperandBytes[op]);
    const std::size_t at = pc;
    pc += instruction_size(code, pc);
    // How many values it takes from the stack and how many it leaves.
    std::size_t need = 0;
    std::size_t grows = 0;
    switch (op) {
      case kConst8: case kConst16: case kConst32: case kConst64: case kReg: case kGetv: grows = 1; break;
      case kTracev: break;
      case kSetv: case kTraceQuick: case kTrace16: need = 1; break;
      case kTrace: case kTracenz: need = 2; break;
      case kDup: case kPick: need = op == kPick ? arg + 1 : 1; grows = 1; break;
      case kEnd: need = value_wanted ? 1 : 0; break;
      case kPop: case kIfGoto: need = 1; break;
      case kGoto: break;
      case kLogNot: case kBitNot: case kExt: case kZeroExt: case kRef8: case kRef16: case kRef32: case kRef64:
        need = 1;
        break;
      case kRot: need = 3; break;
      case kPrintf: need = arg + 2; break;  // the values, then the channel and function
      default: need = 2; break;  // the binary operators and swap
    }
    if (stack.size() < need) {
      return fault("stack underflow", at);
    }
    if (stack.size() + grows > kMaxStack) {
      return fault("stack overflow (" + std::to_string(kMaxStack) + " values)", at);
    }
    if (op == kEnd) {
      return stack.empty() ? std::nullopt : std::optional<std::uint64_t>(stack.back());
    }
    switch (op) {
      case kConst8: case kConst16: case kConst32: case kConst64: stack.push_back(arg); continue;
      case kReg: {
        auto value = machine.reg(static_cast<int>(arg));
        if (!value) {
          return fault("register " + std::to_string(arg) + " unreadable: " + value.error().message(), at);
        }
        stack.push_back(*value);
        continue;
      }
      case kGetv: {
        auto value = machine.variable(static_cast<std::uint32_t>(arg));
        if (!value) {
          return fault(fmt::format("trace state variable {}: {}", arg, value.error().message()), at);
        }
        stack.push_back(static_cast<std::uint64_t>(*value));
        continue;
      }
      case kSetv: case kTracev: {
        auto done = op == kSetv
                        ? machine.set_variable(static_cast<std::uint32_t>(arg), static_cast<std::int64_t>(stack.back()))
                        : machine.collect_variable(static_cast<std::uint32_t>(arg));
        if (!done) {
          return fault(fmt::format("trace state variable {}: {}", arg, done.error().message()), at);
        }
        continue;
      }
      case kTraceQuick: case kTrace16: case kTrace: case kTracenz: {
        // trace_quick and trace16 leave the address; trace and tracenz take it and the size.
        const bool quick = op == kTraceQuick || op == kTrace16;
        const std::uint64_t size = quick ? arg : stack.back();
        if (!quick) {
          stack.pop_back();
        }
        const Addr addr = stack.back();
        if (!quick) {
          stack.pop_back();
        }
        auto done = op == kTracenz ? machine.collect_string(addr, size) : machine.collect(addr, size);
        if (!done) {
          return fault(fmt::format("cannot collect {} bytes at {:#x}: {}", size, addr, done.error().message()), at);
        }
        continue;
      }
      case kDup: stack.push_back(stack.back()); continue;
      case kPick: stack.push_back(stack[stack.size() - 1 - arg]); continue;
      case kPop: stack.pop_back(); continue;
      case kGoto: pc = static_cast<std::size_t>(arg); continue;
      case kIfGoto: {
        const std::uint64_t a = stack.back();
        stack.pop_back();
        if (a != 0) {
          pc = static_cast<std::size_t>(arg);
        }
        continue;
      }
      case kSwap: std::swap(stack[stack.size() - 1], stack[stack.size() - 2]); continue;
      case kPrintf: {
        // GDB pushes the values last to first, then the channel, then the function (both
        // unused: the server prints).
        const std::size_t format_length = operand(code, at + 2, 2);
        const auto* format = reinterpret_cast<const char*>(code.data() + at + 1 + kPrintfHeader);
        std::vector<std::uint64_t> values(stack.rbegin() + 2, stack.rbegin() + 2 + static_cast<std::ptrdiff_t>(arg));
        stack.resize(stack.size() - 2 - arg);
        auto text = format_printf(std::string_view(format, format_length - 1), values, machine);
        if (!text) {
          return fault(text.error().message(), at);
        }
        machine.print(*text);
        continue;
      }
      case kRot: {  // a b c => c a b
        const std::uint64_t c = stack.back();
        stack[stack.size() - 1] = stack[stack.size() - 2];
        stack[stack.size() - 2] = stack[stack.size() - 3];
        stack[stack.size() - 3] = c;
        continue;
      }
      default: break;
    }
    std::uint64_t& top = stack.back();
    switch (op) {
      case kLogNot: top = top == 0 ? 1 : 0; continue;
      case kBitNot: top = ~top; continue;
      case kExt: top = sign_extend(top, static_cast<unsigned>(arg)); continue;
      case kZeroExt: top = zero_extend(top, static_cast<unsigned>(arg)); continue;
      case kRef8: case kRef16: case kRef32: case kRef64: {
        const std::size_t len = std::size_t{1} << (op - kRef8);
        auto value = machine.read(top, len);
        if (!value) {
          return fault(fmt::format("cannot read {} bytes at {:#x}", len, top), at);
        }
        top = *value;
        continue;
      }
      default: break;
    }
    const std::uint64_t b = stack.back();
    stack.pop_back();
    std::uint64_t& a = stack.back();
    const auto sa = static_cast<std::int64_t>(a);
    const auto sb = static_cast<std::int64_t>(b);
    switch (op) {
      case kAdd: a += b; break;
      case kSub: a -= b; break;
      case kMul: a *= b; break;
      case kDivSigned: case kRemSigned: case kDivUnsigned: case kRemUnsigned:
        if (b == 0) {
          return fault("division by zero", at);
        }
        if (op == kDivUnsigned) {
          a /= b;
        } else if (op == kRemUnsigned) {
          a %= b;
        } else if (sb == -1) {  // INT64_MIN / -1 overflows: wrap as the hardware would not
          a = op == kDivSigned ? static_cast<std::uint64_t>(0) - a : 0;
        } else {
          a = static_cast<std::uint64_t>(op == kDivSigned ? sa / sb : sa % sb);
        }
        break;
      case kLsh: a = b >= 64 ? 0 : a << b; break;
      case kRshSigned: a = static_cast<std::uint64_t>(b >= 64 ? (sa < 0 ? -1 : 0) : sa >> b); break;
      case kRshUnsigned: a = b >= 64 ? 0 : a >> b; break;
      case kBitAnd: a &= b; break;
      case kBitOr: a |= b; break;
      case kBitXor: a ^= b; break;
      case kEqual: a = a == b ? 1 : 0; break;
      case kLessSigned: a = sa < sb ? 1 : 0; break;
      case kLessUnsigned: a = a < b ? 1 : 0; break;
      default: return fault("unexpected opcode", at);  // (validate admits none other)
    }
  }
}

}  // namespace

base::Result<std::uint64_t> evaluate(std::span<const std::uint8_t> code, Machine& machine) {
  auto value = run(code, machine, true);
  if (!value) {
    return std::move(value).error();
  }
  return **value;
}

base::Result<void> execute(std::span<const std::uint8_t> code, Machine& machine) {
  auto value = run(code, machine, false);
  if (!value) {
    return std::move(value).error();
  }
  return base::success();
}

}  // namespace tracer::agent
