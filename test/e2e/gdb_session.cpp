#include "test/e2e/gdb_session.hpp"

#include <catch2/catch.hpp>

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#ifndef HS_DEFAULT_SERVER
#define HS_DEFAULT_SERVER "/usr/bin/gdbserver"
#endif
#ifndef HS_TEST_PROGS_DIR
#error "HS_TEST_PROGS_DIR must name the build directory of test/progs"
#endif

namespace e2e {
namespace {

constexpr auto kServerExitGrace = std::chrono::seconds(5);

std::string shell_quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) {
    if (c == '\'') {
      out += "'\\''";
    } else {
      out += c;
    }
  }
  return out + "'";
}

std::vector<std::string> session_argv(const SessionOptions& opts, const std::string& target) {
  if (opts.client == Client::lldb) {
    // LLDB loads no module over the protocol: it is given the program's file first. Not -b:
    // batch mode stops at the first crash; with stdin at its end LLDB quits after the commands.
    std::vector<std::string> argv = {lldb_path(), "--no-lldbinit", "-o", "settings set auto-confirm true"};
    for (const auto& c : opts.init_commands) {
      argv.insert(argv.end(), {"-o", c});
    }
    argv.insert(argv.end(), {"-o", "target create " + shell_quote(prog_path(opts.program)), "-o",
                             "gdb-remote " + target});
    for (const auto& c : opts.commands) {
      argv.insert(argv.end(), {"-o", c});
    }
    return argv;
  }
  std::vector<std::string> argv = gdb_batch_argv({});
  for (const auto& c : opts.init_commands) {
    argv.insert(argv.end(), {"-ex", c});
  }
  argv.insert(argv.end(), {"-ex", "target remote " + target});
  for (std::string c : opts.commands) {
    if (auto at = c.find("{target}"); at != std::string::npos) {
      c.replace(at, std::string_view("{target}").size(), target);
    }
    argv.insert(argv.end(), {"-ex", c});
  }
  return argv;
}

std::string join(const std::vector<std::string>& words) {
  std::string out;
  for (const auto& w : words) {
    out += (out.empty() ? "" : " ") + (w.find(' ') == std::string::npos ? w : shell_quote(w));
  }
  return out;
}

// $variable if set and not empty, else `fallback`.
std::string path_from_env(const char* variable, const char* fallback) {
  const char* env = std::getenv(variable);
  return (env != nullptr && *env != '\0') ? env : fallback;
}

}  // namespace

std::string gdb_path() {
  return path_from_env("HINDSIGHT_GDB", "/usr/bin/gdb");
}

std::string lldb_path() {
  return path_from_env("HINDSIGHT_LLDB", "/usr/bin/lldb");
}

int gdb_major_version() {
  static const int version = [] {
    Child gdb({.argv = {gdb_path(), "--version"}});
    gdb.wait(Clock::now() + std::chrono::seconds(20));
    const std::string first = gdb.out().substr(0, gdb.out().find('\n'));
    const auto space = first.rfind(' ');
    return space == std::string::npos ? 0 : std::atoi(first.c_str() + space + 1);
  }();
  return version;
}

std::vector<std::string> gdb_batch_argv(std::vector<std::string> args) {
  std::vector<std::string> argv = {gdb_path(), "-nx", "-batch", "-iex", "set debuginfod enabled off"};
  argv.insert(argv.end(), std::make_move_iterator(args.begin()), std::make_move_iterator(args.end()));
  return argv;
}

std::string server_path() {
  return path_from_env("HINDSIGHT_SERVER", HS_DEFAULT_SERVER);
}

std::string prog_path(const std::string& name) {
  if (!name.empty() && name[0] == '/') {
    return name;
  }
  return std::string(HS_TEST_PROGS_DIR) + "/" + name;
}

Server::Server(const ServerOptions& opts) {
  require_server_exists();
  become_subreaper();
  children_before_ = current_children();
  std::string last_err;
  // A port found free can be taken before the server binds it: retry on another one.
  for (int attempt = 0; attempt < 3; ++attempt) {
    port_ = free_tcp_port();
    std::vector<std::string> argv = {server_path()};
    if (opts.once) {
      argv.push_back("--once");
    }
    if (opts.remote_debug) {
      argv.push_back("--remote-debug");
    }
    argv.insert(argv.end(), opts.extra_flags.begin(), opts.extra_flags.end());
    if (opts.attach_pid > 0) {
      argv.insert(argv.end(), {"--attach", ":" + std::to_string(port_), std::to_string(opts.attach_pid)});
    } else if (opts.program.empty()) {
      argv.push_back(":" + std::to_string(port_));  // --multi: no program yet
    } else {
      argv.insert(argv.end(), {":" + std::to_string(port_), prog_path(opts.program)});
      argv.insert(argv.end(), opts.args.begin(), opts.args.end());
    }
    child_ = std::make_unique<Child>(SpawnOptions{.argv = argv});
    auto deadline = Clock::now() + opts.start_timeout;
    if (child_->wait_for_text("Listening on port", deadline)) {
      return;
    }
    child_->kill_and_reap();
    last_err = "server `" + join(argv) + "` did not report \"Listening on port\" within " +
               std::to_string(opts.start_timeout.count()) + " ms (" + describe_status(child_->status()) +
               ")\n--- server stderr ---\n" + child_->err() + "--- server stdout ---\n" + child_->out();
    if (child_->err().find("Address already in use") == std::string::npos) {
      break;
    }
  }
  kill_stray_children(children_before_);
  FAIL(last_err);
}

Server::~Server() {
  if (child_) {
    child_->kill_and_reap();
  }
  kill_stray_children(children_before_);
}

std::string SessionResult::transcript() const {
  std::string server_state = transport == Transport::stdio ? "run by gdb"
                             : server_status               ? describe_status(server_status)
                                                           : "did not exit by itself (killed)";
  std::ostringstream os;
  os << "--- gdb: " << join(gdb_argv) << "\n"
     << "--- gdb " << describe_status(gdb_status) << (timed_out ? " (TIMED OUT)" : "") << ", server "
     << server_state << ", stray processes killed: " << stray_processes << "\n--- gdb output ---\n"
     << gdb << "--- server stdout ---\n"
     << server_out << "--- server stderr ---\n"
     << server_err << "--- end ---";
  return os.str();
}

void require_server_exists() {
  const std::string path = server_path();
  if (::access(path.c_str(), X_OK) != 0) {
    FAIL("server under test not found or not executable: " << path << " (build it, or set HINDSIGHT_SERVER)");
  }
}

SessionResult run_gdb(const SessionOptions& opts) {
  require_server_exists();
  become_subreaper();
  auto children_before = current_children();
  auto deadline = Clock::now() + opts.timeout;
  SessionResult res;
  res.transport = opts.transport;

  std::unique_ptr<Server> server;
  std::string target;
  if (opts.transport == Transport::stdio) {
    if (opts.client == Client::lldb) {
      FAIL("LLDB has no `target remote | COMMAND`: use Transport::tcp or Transport::attach");
    }
    std::vector<std::string> words = {server_path()};
    if (opts.remote_debug) {
      words.push_back("--remote-debug");
    }
    words.insert(words.end(), opts.server_flags.begin(), opts.server_flags.end());
    words.insert(words.end(), {"-", prog_path(opts.program)});
    words.insert(words.end(), opts.args.begin(), opts.args.end());
    target = "|";
    for (const auto& w : words) {
      target += " " + shell_quote(w);
    }
  } else {
    server = std::make_unique<Server>(ServerOptions{
        .program = opts.program,
        .args = opts.args,
        .attach_pid = opts.transport == Transport::attach ? opts.attach_pid : 0,
        .remote_debug = opts.remote_debug,
        .extra_flags = opts.server_flags,
        .once = opts.server_once,
    });
    target = "127.0.0.1:" + std::to_string(server->port());
  }

  res.gdb_argv = session_argv(opts, target);
  auto gdb = std::make_unique<Child>(SpawnOptions{.argv = res.gdb_argv, .merge_stderr = true});
  // Keep draining the server's pipes while GDB runs so that it never blocks on a full pipe.
  while (!gdb->wait(std::min(deadline, Clock::now() + std::chrono::milliseconds(20)))) {
    if (Clock::now() >= deadline) {
      res.timed_out = true;
      break;
    }
    if (server) {
      server->child().pump_until(Clock::now() + std::chrono::milliseconds(5), [] { return false; });
    }
  }
  gdb->kill_and_reap();
  res.gdb_status = gdb->status();
  res.gdb = gdb->out();

  if (server) {
    if (!res.timed_out && opts.server_once) {
      res.server_status = server->wait(std::min(deadline, Clock::now() + kServerExitGrace));
    }
    server->child().kill_and_reap();
    res.server_out = server->child().out();
    res.server_err = server->child().err();
    server.reset();
  }
  res.stray_processes = kill_stray_children(children_before);
  if (res.timed_out) {
    FAIL("GDB session did not finish within " << opts.timeout.count() << " ms; everything was killed.\n"
                                              << res.transcript());
  }
  return res;
}

std::string source_script(const std::vector<std::string>& lines) {
  static int made = 0;
  const auto path = std::filesystem::temp_directory_path() /
                    ("hs-e2e-" + std::to_string(::getpid()) + "-" + std::to_string(made++) + ".gdb");
  std::ofstream out(path);
  for (const auto& line : lines) {
    out << line << "\n";
  }
  return "source " + path.string();
}

int listening_port(Child& server, int nth) {
  auto said = [&] {
    std::size_t at = 0;
    for (int i = 0; i < nth; ++i) {
      at = server.err().find("Listening on port ", i == 0 ? 0 : at + 1);
      if (at == std::string::npos || server.err().find('\n', at) == std::string::npos) {
        return std::string::npos;
      }
    }
    return at;
  };
  REQUIRE(server.pump_until(Clock::now() + std::chrono::seconds(10), [&] { return said() != std::string::npos; }));
  return std::stoi(server.err().substr(said() + 18));
}

std::optional<unsigned long> find_hex_after(const std::string& text, const std::string& prefix) {
  auto at = text.find(prefix);
  if (at == std::string::npos) {
    return std::nullopt;
  }
  auto hex = text.find("0x", at + prefix.size());
  if (hex == std::string::npos) {
    return std::nullopt;
  }
  char* end = nullptr;
  unsigned long v = std::strtoul(text.c_str() + hex + 2, &end, 16);
  if (end == text.c_str() + hex + 2) {
    return std::nullopt;
  }
  return v;
}

}  // namespace e2e
