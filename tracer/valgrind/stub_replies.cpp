#include "tracer/valgrind/stub_replies.hpp"

#include <charconv>
#include <csignal>
#include <cstring>
#include <regex>

#include "protocol/hex.hpp"
#include "protocol/signals.hpp"
#include "protocol/thread_id.hpp"

namespace tracer::valgrind {
namespace {

// A two-digit hex field (signal, exit status) at pos; 0 when malformed.
int hex_byte_at(std::string_view reply, std::size_t pos) {
  auto value = protocol::parse_hex_u64(reply.substr(pos, 2));
  return value ? static_cast<int>(*value) : 0;
}

constexpr std::size_t kMaxRegisterBits = 4096;  // a zmm is 512; anything past this is nonsense

}  // namespace

StubStop parse_stop_reply(std::string_view reply, Pid pid, Tid current) {
  StubStop out;
  StopEvent& ev = out.event;
  ev.pid = pid;
  ev.tid = current != 0 ? current : pid;
  if (reply.size() >= 3 && (reply[0] == 'W' || reply[0] == 'X')) {
    const int value = hex_byte_at(reply, 1);
    ev.reason = reply[0] == 'W' ? StopReason::Exited : StopReason::Killed;
    ev.status = value;
    ev.signal = reply[0] == 'X' ? protocol::host_signal_from_gdb(value) : 0;
    return out;
  }
  if (reply.size() < 3 || (reply[0] != 'T' && reply[0] != 'S')) {
    ev.signal = SIGTRAP;
    return out;
  }
  ev.signal = protocol::host_signal_from_gdb(hex_byte_at(reply, 1));
  std::size_t at = 3;
  while (at < reply.size()) {
    const std::size_t colon = reply.find(':', at);
    const std::size_t semi = reply.find(';', at);
    if (colon == std::string_view::npos || semi == std::string_view::npos || colon > semi) {
      break;
    }
    const std::string_view key = reply.substr(at, colon - at);
    const std::string_view value = reply.substr(colon + 1, semi - colon - 1);
    if (key == "thread") {
      if (auto id = protocol::parse_thread_id(value); id && id->tid > 0) {
        out.thread = static_cast<Tid>(id->tid);
        ev.tid = *out.thread;
      }
    } else if (key == "syscall_entry" || key == "syscall_return") {
      if (auto number = protocol::parse_hex_u64(value); number && *number <= 0x7fffffff) {
        ev.reason = key == "syscall_entry" ? StopReason::SyscallEntry : StopReason::SyscallReturn;
        ev.syscall = static_cast<int>(*number);
      }
    } else if (key == "10") {
      if (auto bytes = protocol::from_hex(value); bytes && bytes->size() == 8) {
        std::memcpy(&out.pc, bytes->data(), 8);
      }
    }
    at = semi + 1;
  }
  return out;
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
