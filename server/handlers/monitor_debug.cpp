#include "server/handlers/monitor_debug.hpp"

#include <initializer_list>

#include "base/log.hpp"

namespace server {
namespace {

using base::LogCat;

std::string_view trim_front(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) {
    s.remove_prefix(1);
  }
  return s;
}

// The first word of s, and the rest after it.
std::pair<std::string_view, std::string_view> first_word(std::string_view s) {
  s = trim_front(s);
  const std::size_t end = s.find_first_of(" \t");
  return {s.substr(0, end), end == std::string_view::npos ? std::string_view() : s.substr(end)};
}

// What each component turns on in our logs.
struct Component {
  std::string_view name;
  std::initializer_list<LogCat> categories;
};
constexpr LogCat kAll[] = {LogCat::rsp, LogCat::ptrace, LogCat::perf, LogCat::session};
const Component kComponents[] = {
    {"threads", {LogCat::ptrace, LogCat::session}},
    {"remote", {LogCat::rsp}},
    {"event-loop", {LogCat::session}},
    {"all", {LogCat::rsp, LogCat::ptrace, LogCat::perf, LogCat::session}},
};

void switch_logs(std::initializer_list<LogCat> categories, bool on) {
  for (LogCat cat : categories) {
    base::set_log_enabled(cat, on);
  }
}

std::string junk(std::string_view extra, std::string_view command) {
  return "Junk '" + std::string(trim_front(extra)) + "' found at end of 'set debug " + std::string(command) +
         "' command.";
}

}  // namespace

MonitorDebugResult set_debug_components(std::string_view args) {
  args = trim_front(args);
  if (args.empty()) {
    return {false, "No debug component name found."};
  }
  const auto [word, rest] = first_word(args);
  if (word.find(',') != std::string_view::npos || word.front() == '-' || word.front() == '+') {
    return {false, "Invalid character found in debug component name."};
  }
  if (word == "0" || word == "off" || word == "1" || word == "on") {
    if (!trim_front(rest).empty()) {
      return {false, junk(rest, word)};
    }
    const bool on = word == "1" || word == "on";
    if (on) {
      switch_logs({LogCat::ptrace, LogCat::session}, true);
      return {true, "General debug output enabled."};
    }
    for (LogCat cat : kAll) {
      base::set_log_enabled(cat, false);
    }
    return {true, "All debug output disabled."};
  }
  const auto [value, after] = first_word(rest);
  if (value.empty()) {
    return {false, "Missing value for 'set debug " + std::string(args) + "' command."};
  }
  if (!trim_front(after).empty()) {
    return {false, junk(after, args.substr(0, args.size() - after.size()))};
  }
  if (value != "0" && value != "off" && value != "1" && value != "on") {
    return {false, "Invalid value '" + std::string(value) + "' for 'set debug " + std::string(word) + "'."};
  }
  const bool on = value == "1" || value == "on";
  for (const Component& c : kComponents) {
    if (c.name == word) {
      switch_logs(c.categories, on);
      return {true, "Debug output for '" + std::string(word) + "' " + (on ? "enabled." : "disabled.")};
    }
  }
  return {false, "Error: unknown debug option '" + std::string(word) + "'"};
}

std::vector<std::string> debug_components_help() {
  return {"  set debug on",
          "    Enable general debugging messages",
          "  set debug off",
          "    Disable all debugging messages",
          "  set debug COMPONENT <off|on>",
          "    Enable debugging messages for COMPONENT, which is",
          "    one of: all, threads, remote, event-loop."};
}

}  // namespace server
