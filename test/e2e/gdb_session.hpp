// Drives one real GDB session against the server under test (Hindsight, or any drop-in such as
// GNU gdbserver, chosen with the environment variable HINDSIGHT_SERVER).
//
//   auto out = e2e::run_gdb({.program = "simple", .commands = {"break square", "continue"}});
//   INFO(out.transcript());
//   REQUIRE_THAT(out.gdb, Contains("Breakpoint 1, square"));
//
// GDB never gets the local file: it reads the executable and libraries over the protocol.
// Every session has a deadline; on expiry everything is killed and the test fails with the
// outputs so far. Nothing started here outlives the call (inferiors included).
#pragma once

#include <sys/types.h>

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "test/e2e/process.hpp"

namespace e2e {

enum class Client {
  gdb,  // gdb_path() -nx -batch ... -ex 'target remote TARGET' -ex COMMAND...
  lldb  // lldb_path() -o 'target create PROG' -o 'gdb-remote PORT' -o COMMAND... (tcp, attach)
};

enum class Transport {
  tcp,    // SERVER --once :PORT PROG; gdb: target remote 127.0.0.1:PORT
  stdio,  // gdb: target remote | SERVER - PROG
  attach  // SERVER --once --attach :PORT PID; gdb: target remote 127.0.0.1:PORT
};

// The clients under test: $HINDSIGHT_GDB and $HINDSIGHT_LLDB (a newer GDB or LLDB from a client
// lane, test/clients/run.sh), else Debian's /usr/bin/gdb and /usr/bin/lldb.
std::string gdb_path();
std::string lldb_path();
// The major version of gdb_path() ("GNU gdb (Debian 16.3-1) 16.3" -> 16); 0 if it does not say.
int gdb_major_version();
// GDB in batch mode, without init files or debuginfod, followed by `args` (its -ex commands).
std::vector<std::string> gdb_batch_argv(std::vector<std::string> args);

// Absolute path of the server under test: $HINDSIGHT_SERVER, else the build's hindsight,
// else /usr/bin/gdbserver.
std::string server_path();
// FAILs the test with a clear message if server_path() is not an executable file.
void require_server_exists();
// Absolute path of a program in test/progs (by its name there) or `name` itself if absolute.
std::string prog_path(const std::string& name);

struct ServerOptions {
  std::string program{};                   // test/progs name or absolute path; none with --multi
  std::vector<std::string> args{};         // the program's arguments
  pid_t attach_pid = 0;                    // > 0: --attach instead of starting `program`
  bool remote_debug = false;               // pass --remote-debug
  std::vector<std::string> extra_flags{};  // more server options, before COMM
  bool once = true;                        // --once: it exits when GDB disconnects
  std::chrono::milliseconds start_timeout{5000};
};

// A server listening on 127.0.0.1:port(). Killed and reaped (with its inferior) on destruction.
class Server {
 public:
  // Starts the server and waits for "Listening on port". Fails the test (Catch FAIL) if it does
  // not get there in time.
  explicit Server(const ServerOptions& opts);
  ~Server();
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  int port() const { return port_; }
  Child& child() { return *child_; }
  // Waits for the server to exit by itself; nullopt on timeout.
  std::optional<int> wait(Clock::time_point deadline) { return child_->wait(deadline); }

 private:
  int port_ = 0;
  std::set<pid_t> children_before_{};
  std::unique_ptr<Child> child_;
};

struct SessionOptions {
  std::string program{};                // test/progs name or absolute path (unused for attach)
  // GDB commands, one -ex each, after `target remote`; "{target}" in one stands for what
  // `target remote` connected to (to connect again).
  std::vector<std::string> commands{};
  std::vector<std::string> args{};      // the program's arguments
  Transport transport = Transport::tcp;
  pid_t attach_pid = 0;                      // for Transport::attach
  bool remote_debug = false;                 // pass --remote-debug to the server
  std::vector<std::string> init_commands{};  // -ex commands before `target remote`
  std::chrono::milliseconds timeout{20000};  // the whole session, GDB and server
  std::vector<std::string> server_flags{};   // more server options (e.g. --btrace=soft)
  Client client = Client::gdb;               // commands are LLDB's for Client::lldb
  bool server_once = true;                   // false: the server outlives GDB's disconnects (tcp)
};

struct SessionResult {
  std::string gdb{};              // the client's stdout and stderr, interleaved as written
  std::string server_out{};       // server stdout (in tcp/attach mode the inferior writes here too)
  std::string server_err{};       // server stderr (in stdio mode it goes to GDB's stderr instead)
  std::optional<int> gdb_status;  // wait status
  std::optional<int> server_status;  // wait status; nullopt if it had to be killed
  bool timed_out = false;
  Transport transport = Transport::tcp;
  int stray_processes = 0;  // processes left behind and killed at the end
  std::vector<std::string> gdb_argv{};

  // Everything above in one block, for INFO() so that a failing assertion shows it.
  std::string transcript() const;
};

// Runs GDB (or LLDB) in batch mode against a freshly started server. FAILs the test on timeout.
SessionResult run_gdb(const SessionOptions& opts);

// "source FILE" for a GDB script of these lines (commands GDB reads from the lines after them,
// such as a tracepoint's `actions`, cannot be -ex commands); the file is in the temporary
// directory.
std::string source_script(const std::vector<std::string>& lines);

// The port a server started with ":0" says it listens on, the `nth` time it says so (it says so
// again each time it listens anew); REQUIREs that it says so within 10 s.
int listening_port(Child& server, int nth = 1);

// The first hex number after `prefix` in `text` (e.g. "Breakpoint 1 at "), or nullopt.
std::optional<unsigned long> find_hex_after(const std::string& text, const std::string& prefix);

}  // namespace e2e
