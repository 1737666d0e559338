#include "server/cli.hpp"

#include "server/disable_packet.hpp"
#include "server/help_format.hpp"
#include "server/parts.hpp"
#include "tracer/btrace/scope.hpp"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <charconv>

namespace server {
namespace {

// After the options: COMM, the collectors, exit statuses, environment, files, examples (help2man
// makes each "Name:" paragraph a section of hindsight(1)). The files are the ones this binary
// uses, as --version says (docs/man.sh names the installed ones in the man page).
std::string help_footer() {
  const Parts parts = this_binary_parts();
  return "COMM is a tcp port to listen on, as in ':1234' (loopback only) or 'HOST:1234' (that\n"
         "interface; 0.0.0.0 for all), '-' to talk to GDB over stdin/stdout, 'unix:PATH' for a\n"
         "unix socket to create, or a serial device such as /dev/ttyS0.\n"
         "\n" +
         collectors_help("Intel BTS where the kernel gives it for a thread, else inproc, else soft") +
         "\n"
         "Exit status:\n"
         "  0      the server is done: the program ended, or GDB detached from or killed it\n"
         "  1      a bad command line; PROG could not start, PID could not be attached, COMM\n"
         "         could not be opened\n"
         "  128+N  signal N ended the server (SIGTERM, SIGINT): the programs it started are killed,\n"
         "         those it attached to are detached\n"
         "\n"
         "Environment:\n"
         "  SHELL              starts PROG (with --startup-with-shell, the default)\n"
         "  PATH               finds PROG when its name has no '/'\n"
         "  HINDSIGHT_DBT_LIB  the dbt recorder's folder (a VALGRIND_LIB) instead of the installed one\n"
         "  HINDSIGHT_RECORDER_LIB\n"
         "                     the in-process recorder (libhindsight-recorder.so) instead of the installed one\n"
         "\n"
         "Files:\n" +
         (parts.dbt_lib.empty() ? std::string()
                                : "  " + parts.dbt_lib +
                                      "\n"
                                      "                      the dbt recorder, a Valgrind tool (package hindsight-dbt)\n") +
         "  " + parts.recorder +
         "\n"
         "                      the in-process recorder (--btrace=inproc)\n"
         "  " + parts.agent +
         "\n"
         "                      the in-process agent for fast tracepoints (ftrace), loaded with LD_PRELOAD\n"
         "\n"
         "Examples:\n"
         "  $ hindsight :1234 ./prog arg\n"
         "  $ gdb -ex 'target remote | hindsight - ./prog' ./prog\n"
         "  $ hindsight --btrace=dbt :1234 ./prog\n"
         "  $ hindsight --multi :1234\n"
         "  $ hindsight --wrapper env LD_PRELOAD=" + parts.agent + " -- :1234 ./prog\n"
         "  $ hindsight triage -- ./test\n"
         "\n"
         "In GDB: target remote :1234 (target extended-remote :1234 with --multi, then run or\n"
         "attach), then record btrace. For crash reports in CI: hindsight triage --help.\n";
}

// Everything from the first argument that is not an option on is COMM and the program.
std::size_t first_positional(const std::vector<std::string>& args) {
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "-" || !args[i].starts_with("-")) {
      return i;
    }
    if (args[i] == "--") {
      return i + 1;
    }
  }
  return args.size();
}

// gdbserver's `--wrapper WRAPPER... --`: takes the words up to the "--" out of args.
base::Result<std::vector<std::string>> take_wrapper(std::vector<std::string>& args) {
  auto start = std::find(args.begin(), args.end(), "--wrapper");
  if (start == args.end() || start > args.begin() + static_cast<std::ptrdiff_t>(first_positional(args))) {
    return std::vector<std::string>{};
  }
  auto end = std::find(start + 1, args.end(), "--");
  if (end == args.end() || end == start + 1) {
    return base::make_error(base::Errc::malformed, "--wrapper needs a command and a '--' after it");
  }
  std::vector<std::string> wrapper(start + 1, end);
  args.erase(start, end + 1);
  return wrapper;
}

}  // namespace

base::Result<CommandLine> parse_command_line(const std::vector<std::string>& all_args) {
  CommandLine cl;
  std::vector<std::string> args = all_args;
  if (auto wrapper = take_wrapper(args); !wrapper) {
    return std::move(wrapper).error();
  } else {
    cl.wrapper = std::move(*wrapper);
  }
  CLI::App app{"A GDB remote server (a drop-in gdbserver) with per-thread branch-trace history.", "hindsight"};
  use_usage_lines(app, {"hindsight [OPTIONS] COMM PROG [ARGS ...]", "hindsight [OPTIONS] --attach COMM PID",
                        "hindsight [OPTIONS] --multi COMM", "hindsight triage [OPTIONS] -- PROG [ARGS ...]"});
  app.set_help_flag("-h,--help", "Print this help and exit");
  bool version = false;
  bool no_shell = false;
  bool with_shell = false;
  bool attach = false;
  std::vector<std::string> debug_kinds;
  app.add_flag("-V,--version", version, "Print the version and which history collectors this machine can use, and exit");
  app.add_flag("--once", cl.once, "Exit after the first connection closes");
  app.add_flag("--multi", cl.multi, "Start without a process and stay up for extended-remote (run, attach)");
  app.add_flag("--attach", attach, "Attach to the running process PID instead of starting PROG");
  app.add_flag("--no-startup-with-shell", no_shell, "Start PROG directly, not through $SHELL");
  app.add_flag("--startup-with-shell", with_shell, "Start PROG through $SHELL (the default)");
  app.add_flag("--remote-debug", cl.remote_debug, "Log every packet in both directions to stderr");
  app.add_option("--debug", debug_kinds, "Log to stderr: --debug (all), --debug=remote, --debug=ptrace")
      ->expected(0, 1)
      ->delimiter(',');
  bool event_loop_debug = false;
  std::vector<std::string> debug_format;
  app.add_flag("--event-loop-debug", event_loop_debug, "Log the server's event handling");
  app.add_option("--debug-format", debug_format, "Extra content in log lines: all, none, timestamp")
      ->delimiter(',')
      ->check(CLI::IsMember({"all", "none", "timestamp"}));
  app.add_option("--debug-file", cl.debug_file, "Write the logs to this file instead of stderr");
  bool no_disable_randomization = false;
  bool disable_randomization = false;
  app.add_flag("--disable-randomization", disable_randomization,
               "Run PROG with address space randomization disabled (the default)");
  app.add_flag("--no-disable-randomization", no_disable_randomization,
               "Run PROG with address space randomization as the system has it");
  std::string selftest_filter;
  app.add_option("--selftest", selftest_filter,
                 "Run the server's self-checks (those whose name contains the filter) and exit")
      ->expected(0, 1);
  app.add_option("--btrace", cl.btrace, "The history collector behind `record btrace` (below; default auto)")
      ->transform(CLI::CheckedTransformer(tracer::backend_names()).description(tracer::backend_choices()));
  app.add_option("--btrace-max-size", cl.btrace_max_size,
                 "Most history per thread, in bytes of BTS records (24 per branch; K, M, G suffixes); "
                 "larger sizes from GDB, and `unlimited`, get this (default 64M)")
      ->transform(CLI::AsSizeValue(false))
      ->check(CLI::Range(std::uint64_t{24}, std::uint64_t{0xffffffff}));
  app.add_option("--btrace-scope", cl.btrace_scope,
                 "Record only branches in these objects (software tracer): all, or a comma-separated "
                 "list of exe and object paths or file names; a call out of them shows as a call and a "
                 "return");
  std::string disable_names;
  for (const auto& name : disable_packet_names()) {
    disable_names += (disable_names.empty() ? "" : ", ") + name;
  }
  app.add_option("--disable-packet", cl.disabled_packets,
                 "Behave as a server without these packets (for testing GDB): " + disable_names)
      ->delimiter(',')
      ->check(CLI::IsMember(disable_packet_names()));
  std::string wrapper_words;  // taken out before parsing (take_wrapper): here for --help only
  app.add_option("--wrapper", wrapper_words, "Run PROG as WRAPPER ARGS... PROG (before COMM, as gdbserver)")
      ->type_name("WRAPPER [ARGS...] --");
  app.footer(help_footer());

  std::size_t split = first_positional(args);
  std::vector<std::string> options(args.begin(), args.begin() + static_cast<std::ptrdiff_t>(split));
  std::vector<std::string> positional(args.begin() + static_cast<std::ptrdiff_t>(split), args.end());
  if (!options.empty() && options.back() == "--") {
    options.pop_back();
  }
  try {
    std::vector<std::string> reversed(options.rbegin(), options.rend());  // CLI11 parses a reversed vector
    app.parse(reversed);
  } catch (const CLI::CallForHelp&) {
    cl.output = app.help();
    return cl;
  } catch (const CLI::ParseError& e) {
    return base::make_error(base::Errc::malformed, e.what());
  }
  if (version) {
    cl.version = true;  // main says what this machine can use
    return cl;
  }
  if (!debug_kinds.empty() || app.count("--debug") > 0) {
    if (debug_kinds.empty()) {
      debug_kinds = {"all"};
    }
    for (const auto& kind : debug_kinds) {
      if (kind.empty() || kind == "all") {  // a bare --debug reaches here as ""
        cl.debug = cl.remote_debug = true;
      } else if (kind == "remote") {
        cl.remote_debug = true;
      } else if (kind == "ptrace" || kind == "threads" || kind == "event-loop") {
        cl.debug = true;
      } else {
        return base::make_error(base::Errc::malformed, "unknown --debug kind '" + kind + "' (all, remote, ptrace)");
      }
    }
  }
  if (app.count("--selftest") > 0) {
    cl.selftest = selftest_filter;
    return cl;
  }
  cl.debug = cl.debug || event_loop_debug;
  for (const auto& option : debug_format) {
    cl.log_timestamps = option != "none";
  }
  cl.disable_randomization = !no_disable_randomization;
  cl.startup_with_shell = !no_shell;
  if (positional.empty()) {
    return base::make_error(base::Errc::malformed, "missing COMM (for example :1234 or -)");
  }
  cl.comm = positional.front();
  positional.erase(positional.begin());
  if (!positional.empty() && positional.front() == "--attach") {
    attach = true;  // gdbserver still takes --attach after COMM, where it used to go
    positional.erase(positional.begin());
  }
  const tracer::BackendRow& backend = tracer::backend_row(cl.btrace);
  if (backend.launch_only && (attach || cl.multi || cl.btrace_scope != "all" || !cl.wrapper.empty())) {
    return base::make_error(base::Errc::malformed, fmt::format("--btrace={} starts PROG under the recorder: not with "
                                                               "--attach, --multi, --btrace-scope or --wrapper",
                                                               backend.name));
  }
  if (auto scope = tracer::parse_btrace_scope(cl.btrace_scope); !scope) {
    return std::move(scope).error();
  } else if (!scope->all && !backend.scoped) {
    return base::make_error(base::Errc::malformed, "--btrace-scope needs the software tracer (--btrace=soft or auto)");
  }
  if (attach) {
    if (positional.size() != 1) {
      return base::make_error(base::Errc::malformed, "--attach needs exactly one PID after COMM");
    }
    int pid = 0;
    const auto& text = positional.front();
    auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), pid);
    if (ec != std::errc() || ptr != text.data() + text.size() || pid <= 0) {
      return base::make_error(base::Errc::malformed, "'" + text + "' is not a process id");
    }
    cl.attach_pid = pid;
  } else {
    cl.program = std::move(positional);
    if (cl.program.empty() && !cl.multi) {
      return base::make_error(base::Errc::malformed, "missing PROG (or use --attach PID, or --multi)");
    }
  }
  return cl;
}

}  // namespace server
