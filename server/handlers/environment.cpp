// How GDB sets up the next program it runs: QStartupWithShell, QEnvironmentHexEncoded,
// QEnvironmentUnset, QEnvironmentReset, QSetWorkingDir, QDisableRandomization. Each only
// records; launch.cpp applies them at vRun / R.
#include <unistd.h>

#include "protocol/hex.hpp"
#include "server/handlers/handlers.hpp"

namespace server {
namespace {

// The environment GDB edits: the server's own until the first edit.
std::vector<std::string>& edited_environment(ServerState& server) {
  if (!server.environment) {
    server.environment.emplace();
    for (char** entry = environ; *entry != nullptr; ++entry) {
      server.environment->emplace_back(*entry);
    }
  }
  return *server.environment;
}

// Drops NAME=... from env.
void unset_variable(std::vector<std::string>& env, const std::string& name) {
  std::erase_if(env, [&](const std::string& entry) { return entry.starts_with(name + "="); });
}

}  // namespace

HandlerResult on_startup_with_shell(Context& cx, const bool& on) {
  cx.server.startup_with_shell = on;
  return Reply::ok();
}

HandlerResult on_environment_set(Context& cx, std::string_view body) {
  auto entry = protocol::from_hex_string(body);
  if (!entry) {
    return entry.error();
  }
  const auto eq = entry->find('=');
  if (eq == std::string::npos || eq == 0) {
    return base::make_error(base::Errc::malformed, "expected NAME=VALUE");
  }
  auto& env = edited_environment(cx.server);
  unset_variable(env, entry->substr(0, eq));
  env.push_back(*entry);
  return Reply::ok();
}

HandlerResult on_environment_unset(Context& cx, std::string_view body) {
  auto name = protocol::from_hex_string(body);
  if (!name) {
    return name.error();
  }
  if (name->empty() || name->find('=') != std::string::npos) {
    return base::make_error(base::Errc::malformed, "expected a variable name");
  }
  unset_variable(edited_environment(cx.server), *name);
  return Reply::ok();
}

HandlerResult on_environment_reset(Context& cx, std::string_view /*body*/) {
  cx.server.environment.reset();  // the server's own again
  return Reply::ok();
}

HandlerResult on_set_working_dir(Context& cx, std::string_view body) {
  auto dir = protocol::from_hex_string(body);
  if (!dir) {
    return dir.error();
  }
  cx.server.working_dir = *dir;  // empty: the server's; a bad one fails at vRun, with the reason
  return Reply::ok();
}

HandlerResult on_disable_randomization(Context& cx, const bool& on) {
  cx.server.disable_randomization = on;
  return Reply::ok();
}

}  // namespace server
