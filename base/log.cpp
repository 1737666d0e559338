#include "base/log.hpp"

#include <array>
#include <cstdio>
#include <ctime>

namespace base {
namespace {

// The only mutable global: log switches, set once from the command line or `monitor set`.
std::array<bool, 4> g_enabled{};
bool g_timestamps = false;
std::FILE* g_out = nullptr;  // stderr unless --debug-file

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

bool set_log_file(const std::string& path) {
  std::FILE* file = std::fopen(path.c_str(), "we");
  if (file == nullptr) {
    return false;
  }
  std::setvbuf(file, nullptr, _IOLBF, 0);
  g_out = file;
  return true;
}

void log_line(LogCat cat, std::string_view message) {
  if (g_timestamps) {
    timespec now{};
    clock_gettime(CLOCK_REALTIME, &now);
    std::fprintf(g_out != nullptr ? g_out : stderr, "%lld.%06ld ", static_cast<long long>(now.tv_sec), now.tv_nsec / 1000);
  }
  std::fprintf(g_out != nullptr ? g_out : stderr, "[%s] %.*s\n", category_name(cat), static_cast<int>(message.size()), message.data());
}

}  // namespace base
