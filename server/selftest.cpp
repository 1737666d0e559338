#include "server/selftest.hpp"

#include <dlfcn.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <functional>
#include <set>
#include <vector>

#include "protocol/framing.hpp"
#include "protocol/thread_id.hpp"
#include "server/dispatch.hpp"
#include "tracer/linux/registers.hpp"

namespace server {
namespace {

// Empty when the check passed, else why it did not.
using Check = std::function<std::string()>;

struct SelfTest {
  const char* name;
  Check run;
};

std::string framing_round_trip() {
  const std::string payload = "m0000000000000000,ffff#$}*" + std::string(40, 'a');
  protocol::FrameDecoder decoder;
  std::vector<protocol::FrameEvent> events;
  decoder.feed(protocol::encode_packet(protocol::escape_binary(payload)), events);
  if (events.size() != 1 || events[0].kind != protocol::FrameEvent::Kind::Packet) {
    return "the encoded packet did not decode as one good packet";
  }
  auto expanded = protocol::run_length_decode(events[0].payload);
  auto bytes = expanded ? protocol::unescape_binary(*expanded) : base::Result<protocol::Bytes>(expanded.error());
  if (!bytes || std::string(bytes->begin(), bytes->end()) != payload) {
    return "the payload came back different";
  }
  return {};
}

std::string framing_bad_checksum() {
  protocol::FrameDecoder decoder;
  std::vector<protocol::FrameEvent> events;
  decoder.feed("$OK#00", events);
  return events.size() == 1 && events[0].kind == protocol::FrameEvent::Kind::BadChecksum
             ? std::string()
             : "a wrong checksum was accepted";
}

std::string binary_escapes() {
  std::vector<std::uint8_t> all(256);
  for (int i = 0; i < 256; ++i) {
    all[static_cast<std::size_t>(i)] = static_cast<std::uint8_t>(i);
  }
  auto back = protocol::unescape_binary(protocol::escape_binary(all));
  return back && *back == all ? std::string() : "escaped bytes did not come back";
}

std::string thread_ids() {
  for (const char* text : {"p1a.2b", "p-1.-1", "p7.0"}) {
    auto id = protocol::parse_thread_id(text);
    if (!id || protocol::format_thread_id(*id, true) != text) {
      return std::string("thread id ") + text + " did not print back";
    }
  }
  return {};
}

std::string features_once() {
  std::set<std::string> seen;
  for (const Feature& feature : all_features()) {
    if (!seen.insert(feature.name).second) {
      return "qSupported announces " + feature.name + " twice";
    }
  }
  return {};
}

std::string register_layout() {
  const auto& layout = tracer::host_register_layout(arch::x86::Isa::Amd64);
  const auto* rip = layout.find(arch::x86::kRegnumRip);
  if (rip == nullptr || rip->name != "rip" || rip->size != 8) {
    return "rip is not register 16 of 8 bytes";
  }
  std::uint32_t offset = 0;
  for (const auto& reg : layout.registers()) {
    if (reg.g_offset != offset) {
      return "register " + std::string(reg.name) + " is not where the `g` packet puts it";
    }
    offset += reg.size;
  }
  return offset == layout.g_size() ? std::string() : "the `g` size does not add up";
}

std::string ptrace_works() {
  pid_t child = ::fork();
  if (child < 0) {
    return "fork failed";
  }
  if (child == 0) {
    if (::ptrace(PTRACE_TRACEME, 0, nullptr, nullptr) == 0) {
      ::raise(SIGSTOP);
    }
    ::_exit(1);
  }
  int status = 0;
  const bool stopped = ::waitpid(child, &status, 0) == child && WIFSTOPPED(status) && WSTOPSIG(status) == SIGSTOP;
  ::kill(child, SIGKILL);
  while (::waitpid(child, &status, 0) == child && !WIFSIGNALED(status) && !WIFEXITED(status)) {
  }
  return stopped ? std::string() : "a child could not be traced (PTRACE_TRACEME)";
}

std::string thread_db_loads() {
  void* handle = ::dlopen("libthread_db.so.1", RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    return std::string("libthread_db.so.1: ") + ::dlerror();  // e.g. a proc_service callback not exported
  }
  ::dlclose(handle);
  return {};
}

const SelfTest kSelfTests[] = {
    {"framing_round_trip", framing_round_trip},
    {"framing_bad_checksum", framing_bad_checksum},
    {"binary_escapes", binary_escapes},
    {"thread_ids", thread_ids},
    {"qsupported_features_once", features_once},
    {"register_layout", register_layout},
    {"ptrace", ptrace_works},
    {"libthread_db", thread_db_loads},
};

}  // namespace

int run_selftests(const std::string& filter) {
  int ran = 0;
  int failed = 0;
  for (const SelfTest& test : kSelfTests) {
    if (!filter.empty() && std::string(test.name).find(filter) == std::string::npos) {
      continue;
    }
    std::printf("Running selftest %s.\n", test.name);
    std::fflush(stdout);
    ++ran;
    if (std::string why = test.run(); !why.empty()) {
      std::printf("Self test failed: %s\n", why.c_str());
      ++failed;
    }
  }
  std::printf("Ran %d unit tests, %d failed\n", ran, failed);
  return failed == 0 ? 0 : 1;
}

}  // namespace server
