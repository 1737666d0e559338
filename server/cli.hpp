// The command line, compatible with gdbserver's:
//   hindsight [OPTIONS] COMM PROG [ARGS...]
//   hindsight [OPTIONS] --attach COMM PID
//   hindsight [OPTIONS] --multi COMM
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/result.hpp"
#include "tracer/backend.hpp"
#include "tracer/btrace/branch_tracer.hpp"

namespace server {

struct CommandLine {
  std::string comm;                   // [host]:port, -, or a unix socket path
  std::vector<std::string> program;   // PROG ARGS...
  std::optional<int> attach_pid;
  bool once = false;
  bool multi = false;
  bool startup_with_shell = true;
  std::vector<std::string> wrapper;   // --wrapper WRAPPER... --
  bool debug = false;
  bool remote_debug = false;
  bool log_timestamps = false;        // --debug-format=timestamp|all
  std::string debug_file;             // --debug-file=FILE: logs there instead of stderr
  bool disable_randomization = true;  // --no-disable-randomization
  std::optional<std::string> selftest;  // --selftest[=FILTER]
  bool version = false;                  // --version
  tracer::Backend btrace = tracer::Backend::Auto;  // --btrace=auto|bts|dbt|soft|step
  std::uint64_t btrace_max_size = tracer::kDefaultBtraceMaxSize;  // --btrace-max-size=BYTES (K, M, G)
  std::string btrace_scope = "all";  // --btrace-scope=all|exe|PATH[,PATH...] (soft only)
  // --disable-packet=vCont,T,Tthread,qC,qfThreadInfo,threads (gdbserver's testing option):
  // the server behaves as one that lacks them.
  std::vector<std::string> disabled_packets;
  // Set when the command line asks for text instead of a server (--help, --version);
  // exit_code says how to end.
  std::optional<std::string> output;
  int exit_code = 0;
};

// Errors carry a message for stderr; the caller prints it with a usage hint and exits 1.
base::Result<CommandLine> parse_command_line(const std::vector<std::string>& args);

}  // namespace server
