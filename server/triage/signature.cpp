#include "server/triage/signature.hpp"

#include <cstdint>
#include <filesystem>

#include <fmt/format.h>

#include "server/triage/own_code.hpp"
#include "server/triage/signal_facts.hpp"

namespace server::triage {
namespace {

constexpr std::size_t kFramesHashed = 3;

// FNV-1a, 64 bits: stable everywhere (std::hash is not).
std::uint64_t fnv1a(const std::string& text) {
  std::uint64_t h = 0xcbf29ce484222325ull;
  for (const unsigned char c : text) {
    h = (h ^ c) * 0x100000001b3ull;
  }
  return h;
}

// module!function; in stripped code module!nearest+0xN, else module+0xN (offsets, not
// addresses: the same in every run of the same build). Only code in no file at all is ??.
std::string frame_name(const FrameReport& f) {
  const std::string module = std::filesystem::path(f.where.module).filename().string();
  if (module.empty()) {
    return "?\?!" + (f.where.function.empty() ? std::string("??") : f.where.function);
  }
  if (!f.where.function.empty()) {
    return module + "!" + f.where.function;
  }
  if (!f.where.nearest_symbol.empty()) {
    return fmt::format("{}!{}+{:#x}", module, f.where.nearest_symbol, f.where.nearest_offset);
  }
  return fmt::format("{}+{:#x}", module, f.where.module_offset);
}

}  // namespace

CrashSignature crash_signature(const Outcome& outcome, const std::vector<FrameReport>& backtrace,
                               const std::string& exception_type) {
  CrashSignature sig;
  if (outcome.kind != Outcome::Kind::Signal) {
    return sig;
  }
  std::vector<const FrameReport*> frames;
  for (const auto& f : backtrace) {
    if (!f.signal_frame) {
      frames.push_back(&f);
    }
  }
  std::size_t first = 0;
  while (first < frames.size() && runtime_frame(*frames[first])) {
    ++first;
  }
  if (first == frames.size()) {
    first = 0;  // it all happened inside the runtime: name those frames
  }
  for (std::size_t i = first; i < frames.size() && sig.frames.size() < kFramesHashed; ++i) {
    sig.frames.push_back(frame_name(*frames[i]));
  }
  std::string text = signal_name(outcome.signo);
  if (!exception_type.empty()) {
    text += "\nuncaught " + exception_type;
  }
  for (const auto& f : sig.frames) {
    text += "\n" + f;
  }
  sig.hash = fmt::format("{:012x}", fnv1a(text) & 0xffffffffffffull);
  return sig;
}

}  // namespace server::triage
