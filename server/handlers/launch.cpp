#include "server/handlers/launch.hpp"

#include <pwd.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <system_error>

#include "protocol/inferior_args.hpp"

namespace server {
namespace {

std::string program_path(const std::string& program) {
  std::error_code ec;
  if (program.find('/') == std::string::npos && std::filesystem::is_regular_file(program, ec)) {
    return std::filesystem::absolute(program, ec).string();
  }
  return program;
}

// "~" and "~/dir" are in $HOME, "~user/dir" in user's home (gdbserver expands them too).
std::string expand_tilde(const std::string& dir) {
  if (!dir.starts_with("~")) {
    return dir;
  }
  const auto slash = dir.find('/');
  const std::string user = dir.substr(1, slash == std::string::npos ? std::string::npos : slash - 1);
  const std::string rest = slash == std::string::npos ? "" : dir.substr(slash);
  const char* home = nullptr;
  if (user.empty()) {
    home = std::getenv("HOME");
  }
  if (home == nullptr) {
    const passwd* entry = user.empty() ? ::getpwuid(::getuid()) : ::getpwnam(user.c_str());
    home = entry != nullptr ? entry->pw_dir : nullptr;
  }
  return home != nullptr ? home + rest : dir;
}

}  // namespace

tracer::LaunchSpec launch_spec(const ServerOptions& options, const ServerState& server,
                               const std::vector<std::string>& program, bool args_are_line) {
  tracer::LaunchSpec spec;
  spec.program = program_path(program.front());
  if (!args_are_line) {
    spec.args.assign(program.begin() + 1, program.end());
  } else if (const std::string line = program.size() > 1 ? program[1] : ""; server.startup_with_shell) {
    spec.shell_line = line;
  } else {
    spec.args = protocol::split_inferior_args(line);
  }
  spec.startup_with_shell = server.startup_with_shell;
  spec.stdio_is_protocol = options.stdio_is_protocol;
  spec.wrapper = options.wrapper;
  spec.environment = server.environment;
  spec.working_dir = expand_tilde(server.working_dir);
  spec.disable_aslr = server.disable_randomization;
  return spec;
}

tracer::StopEvent attach_stop(tracer::Target& target, tracer::Pid pid) {
  if (auto caught = target.take_attach_signal(pid)) {
    return *caught;
  }
  tracer::StopEvent event;
  event.pid = event.tid = pid;
  event.signal = 0;
  return event;
}

}  // namespace server
