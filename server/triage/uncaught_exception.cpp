#include "server/triage/uncaught_exception.hpp"

#include <algorithm>
#include <cstring>

#include "server/triage/own_code.hpp"
#include "tracer/symbols/symbolizer.hpp"

namespace server::triage {
namespace {

bool throws(const tracer::SourceLocation& where) {
  for (const std::string* name : {&where.function, &where.nearest_symbol}) {
    if (*name == "__cxa_throw" || *name == "__cxa_rethrow") {
      return true;
    }
  }
  return false;
}

std::optional<std::uint64_t> read_u64(tracer::Target& target, tracer::Addr at) {
  auto bytes = target.read_memory(at, 8);
  if (!bytes || bytes->size() != 8) {
    return std::nullopt;
  }
  std::uint64_t v = 0;
  std::memcpy(&v, bytes->data(), 8);
  return v;
}

// The type a type_info at `at` names: {vtable, const char* name}.
std::string type_of_type_info(tracer::Target& target, tracer::Addr at) {
  const auto vtable = read_u64(target, at);
  const auto name_at = read_u64(target, at + 8);
  if (!vtable || *vtable == 0 || !name_at || *name_at == 0) {
    return {};
  }
  auto bytes = target.read_memory(*name_at, 256);
  if (!bytes) {
    return {};
  }
  const auto end = std::find(bytes->begin(), bytes->end(), std::uint8_t{0});
  if (end == bytes->end()) {
    return {};
  }
  std::string name(bytes->begin(), end);
  if (name.starts_with("*")) {
    name.erase(0, 1);  // (a type local to its object: GCC marks the name)
  }
  return tracer::demangle_type(name);
}

// The type named by the nearest `lea r, [rip+d]` or `mov r, [rip+d]` that ends at or before
// `before` in code (which ends at call_end), "" if none names one.
std::string type_loaded(tracer::Target& target, const tracer::Bytes& code, tracer::Addr call_end, std::size_t before, int reg) {
  const std::uint8_t rex = reg >= 8 ? 0x4c : 0x48;
  const std::uint8_t modrm = static_cast<std::uint8_t>(0x05 | ((reg & 7) << 3));  // [rip+disp32]
  for (std::size_t at = before >= 7 ? before - 7 + 1 : 0; at-- > 0;) {
    const std::uint8_t* insn = code.data() + at;
    if (insn[0] != rex || (insn[1] != 0x8d && insn[1] != 0x8b) || insn[2] != modrm) {
      continue;
    }
    std::int32_t disp = 0;
    std::memcpy(&disp, insn + 3, 4);
    const tracer::Addr operand = call_end - code.size() + at + 7 + static_cast<std::int64_t>(disp);
    const auto type_info = insn[1] == 0x8d ? std::optional<std::uint64_t>(operand) : read_u64(target, operand);
    if (type_info) {
      if (std::string type = type_of_type_info(target, *type_info); !type.empty()) {
        return type;
      }
    }
  }
  return {};
}

// rsi as the instructions before the call that ends at call_end left it (the type_info
// __cxa_throw is passed): loaded rip-relative in the 64 bytes before, into rsi, or into the
// register a `mov rsi, r` then copied (unoptimized code loads rax first).
std::string type_thrown(tracer::Target& target, tracer::Addr call_end) {
  constexpr std::size_t kBefore = 64;
  auto code = target.read_memory(call_end - kBefore, kBefore);
  if (!code || code->size() != kBefore || (*code)[kBefore - 5] != 0xe8) {
    return {};  // (not a call rel32: no guess)
  }
  for (std::size_t at = kBefore - 5 - 3 + 1; at-- > 0;) {
    const std::uint8_t* insn = code->data() + at;
    if ((insn[0] == 0x48 || insn[0] == 0x4c) && insn[1] == 0x89 && (insn[2] & 0xc7) == 0xc6) {  // mov rsi, r
      const int reg = ((insn[2] >> 3) & 7) | (insn[0] == 0x4c ? 8 : 0);
      if (std::string type = type_loaded(target, *code, call_end, at, reg); !type.empty()) {
        return type;
      }
      break;
    }
  }
  return type_loaded(target, *code, call_end, kBefore - 5, 6);
}

}  // namespace

std::optional<UncaughtException> uncaught_exception(tracer::Target* target, const ThreadReport& thread) {
  const auto& frames = thread.backtrace;
  for (std::size_t i = 0; i + 1 < frames.size(); ++i) {
    if (!throws(frames[i].where)) {
      continue;
    }
    UncaughtException e;
    e.thrown_at = frames[i + 1].where;
    for (std::size_t k = i + 1; k < frames.size(); ++k) {
      if (!runtime_frame(frames[k])) {
        e.thrown_at = frames[k].where;
        break;
      }
    }
    if (target != nullptr) {
      e.type = type_thrown(*target, frames[i + 1].pc);
    }
    return e;
  }
  const auto& entries = thread.history.entries;
  for (std::size_t i = entries.size(); i-- > 1;) {
    if ((entries[i].entered == tracer::Entered::Call || entries[i].entered == tracer::Entered::Jump) &&
        throws(entries[i].where)) {
      UncaughtException e;
      for (std::size_t k = i; k-- > 0;) {
        if (entries[k].depth < entries[i].depth && !runtime_frame(FrameReport{0, entries[k].where})) {
          e.thrown_at = entries[k].where;
          e.thrown_at.line = 0;  // (where it was entered, not the throw's line)
          e.thrown_at.file.clear();
          break;
        }
      }
      return e;
    }
  }
  return std::nullopt;
}

}  // namespace server::triage
