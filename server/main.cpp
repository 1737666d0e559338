// hindsight: a drop-in replacement for gdbserver with per-thread branch-trace history.
#include <algorithm>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include "base/log.hpp"
#include "server/cli.hpp"
#include "server/comm.hpp"
#include "server/handlers/launch.hpp"
#include "server/parts.hpp"
#include "server/selftest.hpp"
#include "server/server.hpp"
#include "server/triage_main.hpp"
#include "server/version.hpp"
#include "tracer/linux/host_io.hpp"
#include "tracer/open_target.hpp"
#include "tracer/valgrind/dbt_problem.hpp"

namespace {

// Each thread's ring under the dbt recorder, at most (--btrace-max-size caps it further): the
// recorder keeps every thread's history from its start, in files of this size.
constexpr std::uint64_t kDbtRingBytes = 8u << 20;

int fail(const std::string& message) {
  std::fprintf(stderr, "hindsight: %s\n", message.c_str());
  return 1;
}

// What the server says and remembers once the program runs, stopped at its start.
void launched(const server::CommandLine& cl, server::ServerState& state, const tracer::LaunchSpec& spec, int pid) {
  state.last_program = cl.program;
  std::fprintf(stderr, "Process %s created; pid = %d\n", spec.program.c_str(), pid);
  tracer::StopEvent event;
  event.pid = event.tid = pid;
  event.signal = SIGTRAP;
  state.last_stop = event;
}

// A program that did not start: gdbserver's report ("During startup program exited with
// code 127."), then "Exiting", which GDB's test harness waits for.
void not_started(const base::Error& error) {
  std::fprintf(stderr, "%s\nExiting\n", error.message().c_str());
}

// Attaches to the process named on the command line, in gdbserver's words (with no program,
// --multi: GDB will run or attach).
bool attach_inferior(const server::CommandLine& cl, server::ServerState& state, tracer::Target& target) {
  if (!cl.attach_pid) {
    return true;
  }
  if (auto ok = target.attach(*cl.attach_pid); !ok) {
    not_started(ok.error());
    return false;
  }
  std::fprintf(stderr, "Attached; pid = %d\n", *cl.attach_pid);
  state.last_stop = server::attach_stop(target, *cl.attach_pid);
  return true;
}

// The server goes away with processes left: the ones it started are killed, the ones it
// attached to detached, each group said first in gdbserver's words.
void leave_processes(tracer::Target& target) {
  if (!target.has_process()) {
    return;
  }
  std::string killing;
  std::string detaching;
  for (tracer::Pid pid : target.processes()) {
    (target.attached_process(pid) ? detaching : killing) += " " + std::to_string(pid);
  }
  if (!killing.empty()) {
    std::fprintf(stderr, "Killing process(es):%s\n", killing.c_str());
  }
  if (!detaching.empty()) {
    std::fprintf(stderr, "Detaching process(es):%s\n", detaching.c_str());
  }
  for (tracer::Pid pid : target.processes()) {
    (void)(target.attached_process(pid) ? target.detach_process(pid) : target.kill_process(pid));
  }
}

}  // namespace

int main(int argc, char** argv) {
  const server::Parts parts = server::this_binary_parts();
  if (argc > 1 && std::string(argv[1]) == "triage") {
    return server::triage_main(std::vector<std::string>(argv + 2, argv + argc), parts);
  }
  auto cl = server::parse_command_line(std::vector<std::string>(argv + 1, argv + argc));
  if (!cl) {
    std::fprintf(stderr, "hindsight: %s\nTry 'hindsight --help' for more information.\n",
                 cl.error().message().c_str());
    return 1;
  }
  if (cl->output) {
    std::fputs(cl->output->c_str(), stdout);
    return cl->exit_code;
  }
  if (cl->version) {
    std::fputs(server::version_text(parts).c_str(), stdout);
    return 0;
  }
  if (cl->selftest) {
    return server::run_selftests(*cl->selftest);
  }
  if (!cl->debug_file.empty()) {
    if (!base::set_log_file(cl->debug_file)) {
      return fail("cannot open the debug file " + cl->debug_file);
    }
  }
  base::set_log_timestamps(cl->log_timestamps);
  base::set_log_enabled(base::LogCat::rsp, cl->remote_debug);
  base::set_log_enabled(base::LogCat::ptrace, cl->debug);
  base::set_log_enabled(base::LogCat::session, cl->debug);
  base::set_log_enabled(base::LogCat::perf, cl->debug);

  auto endpoint = server::parse_comm(cl->comm);
  if (!endpoint) {
    return fail("bad COMM '" + cl->comm + "': " + endpoint.error().message());
  }
  server::ServerOptions options;
  server::ServerState state;
  state.startup_with_shell = cl->startup_with_shell;
  options.wrapper = cl->wrapper;
  state.disable_randomization = cl->disable_randomization;
  for (const auto& name : cl->disabled_packets) {
    options.disabled_packets.insert(server::disable_packet_from_name(name).value());  // the command line checked it
  }
  options.stdio_is_protocol = endpoint->kind == server::Endpoint::Kind::Stdio;
  if (options.stdio_is_protocol) {
    std::fprintf(stderr, "stdin/stdout redirected\n");  // gdbserver's line: the program's output goes to stderr
  } else if (auto resolved = server::resolve_host(*endpoint); !resolved) {
    // Before the program starts, as gdbserver (its test harness looks for these words).
    std::fprintf(stderr, "%s: cannot resolve name: %s\nExiting\n", cl->comm.c_str(), resolved.error().message().c_str());
    return 1;
  } else if (endpoint->kind == server::Endpoint::Kind::Device) {
    if (auto opened = server::open_device(*endpoint); !opened) {
      std::fprintf(stderr, "Could not open remote device: %s.\nExiting\n", std::strerror(opened.error().sys_errno));
      return 1;
    }
  }
  options.btrace_max_size = cl->btrace_max_size;
  state.btrace_config.bts_size = std::min(state.btrace_config.bts_size, cl->btrace_max_size);
  const tracer::BtraceScope scope = *tracer::parse_btrace_scope(cl->btrace_scope);  // checked by the parser
  options.btrace_scope_name = scope.text();

  // Bound before anything starts, as gdbserver: a busy port starts no program.
  server::Server srv(*endpoint, cl->once);
  if (!srv.listen()) {
    return 1;
  }

  // The program starts here unless GDB will run or attach (--multi) or it runs already.
  tracer::TargetRequest request;
  request.backend = cl->btrace;
  request.scope = scope;
  request.dbt_lib = parts.dbt_lib;
  request.recorder_lib = parts.recorder;
  request.ring_bytes = std::min<std::uint64_t>(cl->btrace_max_size, kDbtRingBytes);
  if (!cl->attach_pid && !cl->program.empty()) {
    request.launch = server::launch_spec(options, state, cl->program);
  }
  auto opened = tracer::open_target(request);
  if (!opened) {
    not_started(opened.error());
    return 1;
  }
  for (const auto& skipped : opened->not_used) {
    // --btrace=dbt and a program the recorder cannot run: recorded in software, and why.
    std::fprintf(stderr, "hindsight: the %s recorder cannot run %s: %s\n",
                 std::string(tracer::backend_name(skipped.backend)).c_str(), request.launch->program.c_str(),
                 skipped.why.c_str());
    std::fprintf(stderr, "hindsight: recording with the software tracer instead (--btrace=%s)\n",
                 std::string(tracer::backend_name(opened->backend)).c_str());
  }
  options.btrace_backend = opened->backend;
  options.dbt_built = !tracer::dbt_problem(request.dbt_lib);
  tracer::Target& target = *opened->target;
  tracer::LinuxHostIo host;
  if (opened->pid) {
    launched(*cl, state, *request.launch, *opened->pid);
  } else if (!attach_inferior(*cl, state, target)) {
    return 1;
  }
  int code = srv.run(target, host, options, state);
  leave_processes(target);
  return code;
}
