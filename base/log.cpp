#include "base/log.hpp"

#include <array>
#include <cstdio>
#include <ctime>

namespace base {
namespace {

// The only mutable global: log switches, set once from the command line or `monitor set`.
std::array<bool, 4> g_enabled{};
bool g_timestamps = false;

const char* category_name(LogCat cat) {
  switch (cat) {
    case LogCat::rsp: return "rsp";
    case LogCat::ptrace: return "ptrace";
    case LogCat::perf: return "perf";
    case LogCat::session: return "session";
  }
  return "?";
}

}  // namespace

void set_log_enabled(LogCat cat, bool on) { g_enabled[static_cast<std::size_t>(cat)] = on; }
bool log_enabled(LogCat cat) { return g_enabled[static_cast<std::size_t>(cat)]; }

void set_log_timestamps(bool on) { g_timestamps = on; }

void log_line(LogCat cat, std::string_view message) {
  if (g_timestamps) {
    timespec now{};
    clock_gettime(CLOCK_REALTIME, &now);
    std::fprintf(stderr, "%lld.%06ld ", static_cast<long long>(now.tv_sec), now.tv_nsec / 1000);
  }
  std::fprintf(stderr, "[%s] %.*s\n", category_name(cat), static_cast<int>(message.size()), message.data());
}

}  // namespace base
