#include "tracer/valgrind/stub_replies.hpp"

#include <charconv>
#include <csignal>
#include <cstring>
#include <regex>

#include "arch/x86/register_roles.hpp"
#include "protocol/hex.hpp"
#include "protocol/signals.hpp"
#include "protocol/stop_reply.hpp"
#include "protocol/thread_id.hpp"

namespace tracer::valgrind {
namespace {

constexpr std::size_t kMaxRegisterBits = 4096;  // a zmm is 512; anything past this is nonsense

}  // namespace

StubStop parse_stop_reply(std::string_view reply, Pid pid, Tid current, arch::x86::Isa isa) {
  StubStop out;
  StopEvent& ev = out.event;
  ev.pid = pid;
  ev.tid = current != 0 ? current : pid;
  ev.signal = SIGTRAP;
  auto parsed = protocol::parse_stop_reply(reply);
  if (!parsed) {
    return out;  // not a stop reply: a SIGTRAP stop
  }
  using Kind = protocol::StopReply::Kind;
  switch (parsed->kind) {
    case Kind::Exited:
      ev.reason = StopReason::Exited;
      ev.status = parsed->exit_status;
      ev.signal = 0;
      return out;
    case Kind::Terminated:
      ev.reason = StopReason::Killed;
      ev.status = parsed->gdb_signal;
      ev.signal = protocol::host_signal_from_gdb(parsed->gdb_signal);
      return out;
    case Kind::Stopped:
      break;
    case Kind::ThreadExited:
    case Kind::NoResumed:
      return out;  // (Valgrind's gdbserver sends neither)
  }
  ev.signal = protocol::host_signal_from_gdb(parsed->gdb_signal);
  if (parsed->thread_field && parsed->thread.tid > 0) {
    out.thread = static_cast<Tid>(parsed->thread.tid);
    ev.tid = *out.thread;
  }
  if (parsed->why == protocol::StopReply::Why::SyscallEntry || parsed->why == protocol::StopReply::Why::SyscallReturn) {
    ev.reason = parsed->why == protocol::StopReply::Why::SyscallEntry ? StopReason::SyscallEntry
                                                                       : StopReason::SyscallReturn;
    ev.syscall = parsed->syscall;
  }
  const auto roles = arch::x86::register_roles(isa);
  for (const auto& [regno, bytes] : parsed->registers) {
    if (regno == roles.pc) {
      out.pc = arch::x86::address_value(roles, bytes).value_or(0);
    }
  }
  return out;
}

arch::x86::Isa description_isa(std::string_view document) {
  return document.find("<architecture>i386</architecture>") != std::string_view::npos ? arch::x86::Isa::I386
                                                                                       : arch::x86::Isa::Amd64;
}

base::Result<std::vector<std::size_t>> register_sizes(const DocumentReader& fetch) {
  auto top = fetch("target.xml");
  if (!top) {
    return std::move(top).error();
  }
  static const std::regex include(R"re(<xi:include\s+href="([^"]+)")re");
  static const std::regex reg(R"re(<reg\s[^>]*bitsize="(\d+)")re");
  std::vector<std::size_t> sizes;
  for (std::sregex_iterator it(top->begin(), top->end(), include), end; it != end; ++it) {
    auto feature = fetch((*it)[1].str());
    if (!feature) {
      return std::move(feature).error();
    }
    for (std::sregex_iterator r(feature->begin(), feature->end(), reg); r != end; ++r) {
      const std::string digits = (*r)[1].str();
      std::size_t bits = 0;
      const auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), bits);
      if (ec != std::errc{} || bits == 0 || bits % 8 != 0 || bits > kMaxRegisterBits) {
        return base::make_error(base::Errc::invalid, "Valgrind's target description has a register of " + digits +
                                                         " bits");
      }
      sizes.push_back(bits / 8);
    }
  }
  return sizes;
}

}  // namespace tracer::valgrind
