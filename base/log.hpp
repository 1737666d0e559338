// The one logger. Categories are switched on by --debug / --remote-debug; output goes to
// stderr, one line per call, prefixed with the category.
#pragma once

#include <fmt/format.h>

#include <string>
#include <string_view>
#include <utility>

namespace base {

enum class LogCat { rsp, ptrace, perf, session };

void set_log_enabled(LogCat cat, bool on);
bool log_enabled(LogCat cat);
// Each line starts with the wall-clock time (seconds.microseconds), as --debug-format=timestamp.
void set_log_timestamps(bool on);
// Lines go to this file (created or truncated) instead of stderr; false when it cannot be opened.
bool set_log_file(const std::string& path);
void log_line(LogCat cat, std::string_view message);

template <class... Args>
void logf(LogCat cat, fmt::format_string<Args...> format, Args&&... args) {
  if (log_enabled(cat)) {
    log_line(cat, fmt::format(format, std::forward<Args>(args)...));
  }
}

}  // namespace base
