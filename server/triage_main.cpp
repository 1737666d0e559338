// hindsight triage: runs a program with history on and, when it dies, says how it got there.
// The pieces live in server/triage/; this file strings them together and, for --serve, hands
// the stopped program to the server.
#include "server/triage_main.hpp"

#include <signal.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>

#include "server/comm.hpp"
#include "server/server.hpp"
#include "server/triage/collect.hpp"
#include "server/triage/fresh_line.hpp"
#include "server/triage/options.hpp"
#include "server/triage/runner.hpp"
#include "server/triage/signature.hpp"
#include "server/triage/uncaught_exception.hpp"
#include "server/triage/writers.hpp"
#include "tracer/linux/host_io.hpp"
#include "tracer/linux/procfs.hpp"

namespace server {
namespace {

volatile std::sig_atomic_t g_stop_requested = 0;

void on_stop_signal(int signo) { g_stop_requested = signo; }

int fail(const std::string& message) {
  std::fprintf(stderr, "hindsight triage: %s\n", message.c_str());
  return triage::kExitTriageFailed;
}

bool write_file(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  out.close();
  if (!out) {
    std::fprintf(stderr, "hindsight triage: cannot write %s\n", path.c_str());
    return false;
  }
  return true;
}

// Threads the target learned of afterwards (the recorder's): when each began and ended.
void log_recorded_threads(triage::Recorded& run, tracer::EventLog& log) {
  using Clock = tracer::EventLog::Clock;
  for (const auto& life : run.target->thread_lives()) {
    if (life.tid != run.pid && life.born_ns != 0) {
      log.add_at(Clock::time_point(std::chrono::nanoseconds(life.born_ns)), "thread_start", run.pid, life.tid);
    }
    if (life.tid != run.pid && life.exited_ns != 0) {
      log.add_at(Clock::time_point(std::chrono::nanoseconds(life.exited_ns)), "thread_exit", run.pid, life.tid);
    }
  }
}

// A followed child, or a process that exec'd since it started, is named as /proc names it
// while it is stopped at its end: the program that crashed, not the one triage started.
// procfs_knows: /proc names the program (not under dbt, where it names Valgrind's tool).
void name_program(triage::TriageReport& r, const triage::Ending& end, const tracer::EventLog& log, bool procfs_knows) {
  if (!end.command.empty()) {
    r.program = end.command.front();  // as the collector saw it started
    r.args.assign(end.command.begin() + 1, end.command.end());
    return;
  }
  bool execd = false;
  for (const auto& e : log.events()) {
    execd = execd || (e.kind == "exec" && e.pid == r.pid);
  }
  if (r.pid == r.root_pid && !execd) {
    return;
  }
  auto argv = procfs_knows ? tracer::procfs::command_line(r.pid) : std::vector<std::string>{};
  const std::string exe = procfs_knows ? tracer::procfs::executable(r.pid) : std::string();
  if (argv.empty() && exe.empty()) {
    // Gone (killed outright), or under dbt: the program it last exec'd, else the name it was
    // started with.
    for (const auto& e : log.events()) {
      if (e.kind == "exec" && e.pid == r.pid && !e.detail.empty()) {
        r.program = e.detail;
        r.args.clear();
      }
    }
    return;
  }
  r.program = !exe.empty() ? exe : argv.front();
  r.args.assign(argv.size() > 1 ? argv.begin() + 1 : argv.end(), argv.end());
}

triage::TriageReport make_report(triage::Recorded& run, const triage::Options& o, const triage::Ending& end,
                                 tracer::EventLog& log) {
  triage::TriageReport r;
  r.program = o.program.front();
  r.args.assign(o.program.begin() + 1, o.program.end());
  r.root_pid = run.pid;
  r.pid = end.stop.pid != 0 ? end.stop.pid : run.pid;  // a followed child, when that is what died
  name_program(r, end, log, !tracer::backend_row(run.backend).under_another);
  r.tree = triage::tree_path(log.events(), run.pid, o.program.front(), r.pid);
  r.outcome = end.outcome;
  r.tracer.backend = std::string(tracer::backend_name(run.backend));
  r.tracer.not_used = run.not_used;
  r.tracer.slowdown_hint = std::string(tracer::backend_row(run.backend).cost);
  tracer::Target& target = triage::target_of(run, end);
  const tracer::Pid pid = end.stop.pid != 0 ? end.stop.pid : run.pid;
  if (target.has_process() && target.process_of(end.stop.tid) != 0) {
    for (const auto& t : target.threads()) {
      if (target.branch_tracer(t.tid) == nullptr) {
        (void)target.enable_btrace(t.tid, tracer::BtraceConfig{o.ring_bytes});  // recorded since birth
      }
    }
    r.threads = triage::collect_threads(target, pid, end.stop.tid, end.outcome.kind == triage::Outcome::Kind::Signal,
                                        o.history, end.stopped_ns);
  } else if (end.outcome.kind == triage::Outcome::Kind::Signal || end.outcome.killed) {
    // Killed from outside (SIGKILL: no stop comes first), or by triage where it could not be
    // stopped: what it recorded is all there is.
    r.threads = triage::collect_ended_threads(target, pid, end.maps.empty() ? run.maps : end.maps, o.history,
                                              end.stopped_ns);
  }
  for (const auto& t : r.threads) {
    r.tracer.branches_recorded += t.branches_recorded;
    r.tracer.branches_kept += t.branches_kept;
  }
  if (!r.threads.empty()) {
    r.sources = triage::collect_sources(r.threads.front(), 8);
    if (r.outcome.kind == triage::Outcome::Kind::Signal && r.outcome.signo == SIGABRT) {
      const bool alive = target.has_process() && target.process_of(end.stop.tid) != 0;
      r.exception = triage::uncaught_exception(alive ? &target : nullptr, r.threads.front());
    }
    if (r.outcome.cause() == triage::Outcome::Cause::Crash) {
      r.signature = triage::crash_signature(r.outcome, r.threads.front().backtrace,
                                            r.exception ? r.exception->type : std::string());
    }
  }
  r.start_ns = log.start_ns();
  const std::uint64_t from = end.started_ns != 0 ? end.started_ns : r.start_ns;
  const std::uint64_t to = end.stopped_ns != 0 ? end.stopped_ns : tracer::monotonic_ns();
  r.process_ms = to > from ? static_cast<double>(to - from) / 1e6 : 0;
  return r;
}

// The whole run's log in every report, once the run is over.
void finish_reports(std::vector<triage::TriageReport>& reports, triage::Recorded& run, tracer::EventLog& log) {
  log_recorded_threads(run, log);
  for (auto& r : reports) {
    r.events = log.events();
    r.wall_ms = log.elapsed_ms();
  }
}

bool env_is(const char* name, std::string_view value) {
  const char* v = std::getenv(name);
  return v != nullptr && value == v;
}

// Every report, first first: text (stderr or --output), JSON, HTML, GitHub annotations. quiet: no
// text on stderr (a clean exit, whose streams are the program's own).
bool write_reports(const std::vector<triage::TriageReport>& reports, const triage::Options& o, bool quiet = false) {
  const bool colour = o.color == "always" || (o.color == "auto" && o.output.empty() && ::isatty(STDERR_FILENO) != 0 &&
                                              std::getenv("NO_COLOR") == nullptr);
  const std::string text = triage::text_report(reports, colour);
  if (o.output.empty() && !quiet) {
    triage::start_fresh_line(STDERR_FILENO);  // (not after the program's unfinished line)
  }
  bool written = o.output.empty() ? quiet || std::fputs(text.c_str(), stderr) >= 0 : write_file(o.output, text);
  written = (o.json.empty() || write_file(o.json, triage::json_report(reports))) && written;
  written = (o.html.empty() || write_file(o.html, triage::html_report(reports))) && written;
  if (o.github_annotations || env_is("GITHUB_ACTIONS", "true")) {
    const char* workspace = std::getenv("GITHUB_WORKSPACE");
    std::fflush(stdout);
    for (const auto& r : reports) {
      std::fputs(triage::github_annotation(r, workspace != nullptr ? workspace : "").c_str(), stdout);
    }
    std::fflush(stdout);
  }
  return written;
}


// Keeps the program stopped at the fault and lets GDB in, history included.
int serve(triage::Recorded& run, const triage::Options& o, const triage::Ending& end) {
  auto endpoint = parse_comm(o.serve);
  if (!endpoint) {
    return fail("bad --serve '" + o.serve + "': " + endpoint.error().message());
  }
  tracer::Target& target = triage::target_of(run, end);  // the process that crashed
  target.hand_over_history();
  ServerOptions options;
  options.btrace_backend = run.backend;
  ServerState state;
  state.last_stop = end.stop;
  options.first_connection_timeout = o.serve_timeout;
  tracer::LinuxHostIo host;
  Server srv(*endpoint, /*once=*/true);
  const std::string& stopped = end.command.empty() ? o.program.front() : end.command.front();  // the one that crashed
  std::fprintf(stderr, "hindsight triage: %s is stopped at the fault; in GDB: target remote %s\n", stopped.c_str(),
               o.serve.c_str());
  (void)srv.run(target, host, options, state);
  for (tracer::Target* t : {&target, run.target.get()}) {
    if (t->has_process()) {
      (void)t->kill();  // GDB left it, or never came; the rest of the tree with it
    }
  }
  return end.outcome.exit_status;
}

}  // namespace

int triage_main(const std::vector<std::string>& args, const Parts& parts) {
  auto options = triage::parse_options(args);
  if (!options) {
    std::fprintf(stderr, "hindsight triage: %s\nTry 'hindsight triage --help' for more information.\n",
                 options.error().message().c_str());
    return triage::kExitUsage;
  }
  if (options->text) {
    std::fputs(options->text->c_str(), stdout);
    return 0;
  }
  struct sigaction sa {};
  sa.sa_handler = on_stop_signal;
  sa.sa_flags = SA_RESETHAND;  // a second one while the report is written ends triage at once
  sigemptyset(&sa.sa_mask);
  ::sigaction(SIGINT, &sa, nullptr);
  ::sigaction(SIGTERM, &sa, nullptr);
  // Its stdout closing (`triage ... | head`) must not end it: it still waits for the program,
  // writes its reports and exits with the program's status (the program gets SIGPIPE as ever).
  ::signal(SIGPIPE, SIG_IGN);
  // Every process of the tree that dies is reported, whoever reaps it: one whose parent died
  // (a CI timeout killing a process group) comes to triage.
  ::prctl(PR_SET_CHILD_SUBREAPER, 1);

  tracer::EventLog log;
  auto run = triage::start_recorded(*options, parts, log);
  if (!run) {
    return fail(run.error().message());
  }
  if (!options->keep_rings.empty() && !tracer::backend_row(run->backend).ring_files) {
    std::fprintf(stderr, "hindsight triage: --keep-rings: recorded with %s, which keeps no ring files\n",
                 std::string(tracer::backend_name(run->backend)).c_str());
  }
  // Every death in the tree is reported as it happens and the run goes on (not when serving
  // GDB: then the first death anywhere is where GDB comes in).
  std::vector<triage::TriageReport> reports;
  triage::OnDeath on_death;
  if (options->serve.empty()) {
    on_death = [&](const triage::Ending& death) { reports.push_back(make_report(*run, *options, death, log)); };
  }
  triage::Ending end = triage::run_to_end(*run, *options, log, g_stop_requested, on_death);
  if (end.outcome.kind != triage::Outcome::Kind::Exit && !end.reported) {
    reports.push_back(make_report(*run, *options, end, log));  // --timeout, interrupted, or GDB's stop
  }
  // Interrupted: exits as a shell's job would, whatever the program's own end was.
  const int status = end.cut_short && end.cut_short->kind == triage::Outcome::Kind::Interrupted
                         ? end.cut_short->exit_status
                         : end.outcome.exit_status;
  if (end.cut_short && options->serve.empty()) {
    // What --timeout or the interruption left running: killed, each reported with what it recorded.
    triage::kill_tree(*run, end, log, on_death);
  }
  if (reports.empty()) {
    // It exited and nothing of its tree died of a signal: the files asked for say so all the
    // same (a CI step uploading them finds them), stderr stays the program's.
    const bool files = !options->json.empty() || !options->html.empty() || !options->output.empty();
    if (!files || end.stop.reason != tracer::StopReason::Exited) {
      return status;
    }
    reports.push_back(make_report(*run, *options, end, log));
    finish_reports(reports, *run, log);
    return write_reports(reports, *options, /*quiet=*/true) ? status : triage::kExitTriageFailed;
  }
  if (!options->serve.empty() && triage::target_of(*run, end).has_process()) {
    finish_reports(reports, *run, log);
    (void)write_reports(reports, *options);
    return serve(*run, *options, end);
  }
  triage::kill_tree(*run, end, log);  // what is left (nothing, when the tree ended)
  finish_reports(reports, *run, log);
  const bool written = write_reports(reports, *options);
  // The started program's own status, whatever its descendants died of.
  return written ? status : triage::kExitTriageFailed;
}

}  // namespace server
