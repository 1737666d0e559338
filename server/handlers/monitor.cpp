// `monitor` (qRcmd) commands, with gdbserver's words: GDB's testsuite and people's scripts
// look for them. Those of gdbserver 13 for GDB 13 and 14, those of gdbserver 15 and later
// (`set debug COMPONENT on|off`, monitor_debug.cpp) for GDB 15 and later, which their testsuites
// expect. Ours beyond gdbserver's: libthread-db-search-path, btrace.
#include <functional>
#include <sstream>

#include "base/log.hpp"
#include "server/handlers/handlers.hpp"
#include "server/handlers/monitor_debug.hpp"
#include "tracer/thread_db/thread_db.hpp"

namespace server {
namespace {

using Say = std::function<void(const std::string&)>;

void show_help(const Context& cx, const Say& say) {
  say("The following monitor commands are supported:");
  if (cx.state.gdb15_or_later) {
    for (const auto& line : debug_components_help()) {
      say(line);
    }
    say("  set debug-hw-points <0|1>");
    say("    Enable h/w breakpoint/watchpoint debugging messages");
  } else {
    say("  set debug <0|1>");
    say("    Enable general debugging messages");
    say("  set debug-hw-points <0|1>");
    say("    Enable h/w breakpoint/watchpoint debugging messages");
    say("  set remote-debug <0|1>");
    say("    Enable remote protocol debugging messages");
    say("  set event-loop-debug <0|1>");
    say("    Enable event loop debugging messages");
  }
  say("  set debug-format option1[,option2,...]");
  say("    Add additional information to debugging messages");
  say("    Options: all, none, timestamp");
  say("  set libthread-db-search-path [PATH]");
  say("    Where to look for libthread_db (thread-local variables)");
  say("  btrace");
  say("    Branch tracing: backend, buffer size, branches kept per thread");
  say("  exit");
  say("    Quit GDBserver");
}

// "set NAME 0|1" switches: what each turns on, and its two messages.
struct Switch {
  std::string_view name;
  std::initializer_list<base::LogCat> categories;
  std::string_view enabled;
  std::string_view disabled;
};

const Switch kSwitches[] = {
    {"debug", {base::LogCat::ptrace, base::LogCat::session}, "Debug output enabled.", "Debug output disabled."},
    {"remote-debug", {base::LogCat::rsp}, "Protocol debug output enabled.", "Protocol debug output disabled."},
    {"debug-hw-points", {base::LogCat::ptrace}, "H/W point debugging output enabled.",
     "H/W point debugging output disabled."},
    {"event-loop-debug", {base::LogCat::session}, "Event loop debug output enabled.",
     "Event loop debug output disabled."},
};

// "set debug-format all,timestamp": false (after saying why) on an unknown option.
bool set_debug_format(std::string_view options, const Say& say) {
  std::stringstream list{std::string(options)};
  std::string option;
  while (std::getline(list, option, ',')) {
    if (option == "all" || option == "timestamp") {
      base::set_log_timestamps(true);
      say(option == "all" ? "All extra debug format options enabled." : "Timestamps will be added to debug output.");
    } else if (option == "none") {
      base::set_log_timestamps(false);
      say("All extra debug format options disabled.");
    } else {
      say("Unknown debug-format argument: \"" + option + "\"");
      return false;
    }
  }
  return true;
}

// Runs one known command; false when the command is not one of ours.
bool run_command(Context& cx, const std::string& command, const Say& say) {
  if (command == "help") {
    show_help(cx, say);
    return true;
  }
  if (command == "exit") {
    cx.state.exit_server = true;
    cx.state.end_session = true;
    return true;
  }
  if (command == "btrace") {
    for (const auto& line : btrace_status_lines(cx)) {
      say(line);
    }
    return true;
  }
  for (const Switch& sw : kSwitches) {
    const std::string prefix = "set " + std::string(sw.name) + " ";
    if (command == prefix + "1" || command == prefix + "0") {
      const bool on = command.back() == '1';
      for (base::LogCat cat : sw.categories) {
        base::set_log_enabled(cat, on);
      }
      say(std::string(on ? sw.enabled : sw.disabled));
      return true;
    }
  }
  constexpr std::string_view kSearchPath = "set libthread-db-search-path";
  if (command == kSearchPath || command.starts_with(std::string(kSearchPath) + " ")) {
    std::string path = command.size() > kSearchPath.size() ? command.substr(kSearchPath.size() + 1) : "";
    cx.target.set_thread_db_search_path(path);
    say("libthread-db-search-path set to `" + (path.empty() ? std::string(tracer::kDefaultThreadDbSearchPath) : path) + "'");
    return true;
  }
  return false;
}

}  // namespace

HandlerResult on_monitor(Context& cx, const std::string& command) {
  Say say = [&](const std::string& line) { cx.console.push_back(line + "\n"); };
  constexpr std::string_view kDebugFormat = "set debug-format ";
  constexpr std::string_view kSetDebug = "set debug ";
  if (cx.state.gdb15_or_later && command.starts_with(kSetDebug)) {
    const auto result = set_debug_components(std::string_view(command).substr(kSetDebug.size()));
    say(result.message);
    if (result.ok) {
      return Reply::ok();
    }
  } else if (command.starts_with(kDebugFormat)) {
    if (set_debug_format(std::string_view(command).substr(kDebugFormat.size()), say)) {
      return Reply::ok();
    }
  } else if (run_command(cx, command, say)) {
    return Reply::ok();
  } else {
    say("Unknown monitor command.\n");
  }
  // As gdbserver: the list, then an error (GDB says "Protocol error with Rcmd").
  show_help(cx, say);
  return base::make_error(base::Errc::invalid, "unknown monitor command");
}

}  // namespace server
