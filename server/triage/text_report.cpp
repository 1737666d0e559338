// The report as text: the verdict first, then each thread (the crashing one first) with its
// stack, the calls that led there, and its registers; then the event log.
#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <set>

#include "server/triage/own_code.hpp"
#include "server/triage/signal_facts.hpp"
#include "server/triage/writers.hpp"

namespace server::triage {
namespace {

// Events shown whole; a longer log is cut to the processes on the way to a crash.
constexpr std::size_t kEventsShownWhole = 200;

struct Style {
  bool on;
  std::string bold(const std::string& s) const { return on ? "\033[1m" + s + "\033[0m" : s; }
  std::string red(const std::string& s) const { return on ? "\033[1;31m" + s + "\033[0m" : s; }
  std::string dim(const std::string& s) const { return on ? "\033[2m" + s + "\033[0m" : s; }
  std::string cyan(const std::string& s) const { return on ? "\033[36m" + s + "\033[0m" : s; }
};

std::string place(const tracer::SourceLocation& where) {
  if (where.file.empty()) {
    return where.module.empty() ? "" : "from " + std::filesystem::path(where.module).filename().string();
  }
  return fmt::format("{}:{}", where.file, where.line);
}

std::string short_place(const tracer::SourceLocation& where) {
  if (where.file.empty()) {
    return where.module.empty() ? "" : std::filesystem::path(where.module).filename().string();
  }
  return fmt::format("{}:{}", std::filesystem::path(where.file).filename().string(), where.line);
}

std::string function_of(const tracer::SourceLocation& where) { return where.function.empty() ? "??" : where.function; }

// "13320 branches", or "kept 65536 of 2470041 branches" once the ring overwrote the oldest
// ("lost" is kept for what a collector failed to record: the gaps).
std::string kept_of(std::uint64_t kept, std::uint64_t recorded) {
  return kept >= recorded ? fmt::format("{} branches", recorded) : fmt::format("kept {} of {} branches", kept, recorded);
}

void thread_section(std::string& out, const TriageReport& r, const ThreadReport& t, const Style& s) {
  const std::string name = t.name.empty() ? "" : " \"" + t.name + "\"";
  const std::string mark = crashed(r, t)  ? " (crashed)"
                           : t.got_signal ? " (received " + signal_name(r.outcome.signo) + ")"
                                          : "";
  out += "\n" + s.bold(fmt::format("Thread {}{}{}", t.tid, name, mark)) + "\n";
  if (t.ended) {
    out += "  (gone before it could be stopped: no registers or stack left, only what was recorded)\n";
  } else {
    out += "  backtrace:\n";
  }
  if (t.backtrace.empty() && !t.ended) {
    out += "    (none: the stack could not be unwound)\n";
  }
  for (std::size_t i = 0; i < t.backtrace.size(); ++i) {
    const auto& f = t.backtrace[i];
    const std::string name = function_of(f.where) + (f.inlined ? " (inlined)" : f.tail_call ? " (tail call)" : "");
    out += fmt::format("    #{:<2} {:#018x} in {} {}{}\n", i, f.pc,
                       s.cyan(name), place(f.where), f.signal_frame ? "  <signal handler called>" : "");
  }
  if (!t.history_problem.empty()) {
    out += "  history: " + t.history_problem + "\n";
  } else {
    const auto& h = t.history;
    out += fmt::format("  last {} calls and returns, oldest first ({}{}):\n", h.entries.size(),
                       kept_of(t.branches_kept, t.branches_recorded),
                       h.gaps != 0 ? fmt::format(", {} gaps", h.gaps) : "");
    const bool timed = std::any_of(h.entries.begin(), h.entries.end(), [&](const auto& e) { return r.t_ms(e); });
    for (std::size_t i = 0; i < h.entries.size(); ++i) {
      const auto& e = h.entries[i];
      const bool last = i + 1 == h.entries.size();
      const auto t_ms = r.t_ms(e);
      const std::string how =
          e.entered == tracer::Entered::Call || e.entered == tracer::Entered::Start ? "" : tracer::entered_name(e.entered);
      std::string line = fmt::format("    {}{}{} {} {}  [{} branches]{}",
                                     !timed ? "" : t_ms ? fmt::format("{:>10.3f} ms  ", *t_ms) : std::string(15, ' '),
                                     std::string(static_cast<std::size_t>(e.depth) * 2, ' '),
                                     e.kind()[0] == 'r' ? "<-" : "->", function_of(e.where), s.dim(short_place(e.where)),
                                     e.branches, how.empty() ? "" : "  (" + how + ")");
      out += (last && t.got_signal ? s.red(line + "   <== here") : last && t.ended ? line + "   <== last recorded" : line) + "\n";
    }
  }
  if (t.registers.empty()) {
    return;
  }
  out += "  registers:\n";
  for (std::size_t i = 0; i < t.registers.size(); ++i) {
    out += fmt::format("{}{:>7} {:#018x}", i % 4 == 0 ? "    " : "  ", t.registers[i].first, t.registers[i].second);
    out += i % 4 == 3 || i + 1 == t.registers.size() ? "\n" : "";
  }
}

}  // namespace

std::string hex(std::uint64_t value) { return fmt::format("{:#x}", value); }

namespace {

// The processes on the way to r's crash: the started program to the one that crashed.
std::set<tracer::Pid> way_to(const TriageReport& r) {
  std::set<tracer::Pid> out{r.pid, r.root_pid};
  for (const auto& step : r.tree) {
    out.insert(step.pid);
  }
  return out;
}

// "uncaught std::invalid_argument, thrown in parse_port at file.cpp:11".
std::string exception_text(const UncaughtException& e) {
  std::string out = "uncaught " + (e.type.empty() ? std::string("C++ exception") : e.type) + ", thrown in " +
                    (e.thrown_at.function.empty() ? std::string("??") : short_function(e.thrown_at.function));
  if (!e.thrown_at.file.empty() && e.thrown_at.line > 0) {
    out += fmt::format(" at {}:{}", e.thrown_at.file, e.thrown_at.line);
  }
  return out;
}

// shown: whose events a long log keeps.
std::string report_text(const TriageReport& r, bool colour, const std::set<tracer::Pid>& shown) {
  const Style s{colour};
  std::string out;
  out += s.red(fmt::format("hindsight triage: {} (pid {}) {}", r.program, r.pid, r.outcome.summary())) + "\n";
  const bool exited = r.outcome.kind == Outcome::Kind::Exit;  // nothing was read of it: no counts
  out += fmt::format("  recorded with {}{}; {:.0f} ms\n", r.tracer.backend,
                     exited ? "" : " (" + kept_of(r.tracer.branches_kept, r.tracer.branches_recorded) + ")", r.process_ms);
  for (const auto& why : r.tracer.not_used) {
    out += "  not used: " + why + "\n";
  }
  if (r.tree.size() > 1) {
    out += "  process tree: " + tree_text(r.tree) + "\n";
  }
  if (r.exception) {
    out += "  " + exception_text(*r.exception) + "\n";
  }
  if (!r.signature.hash.empty()) {
    std::string frames;
    for (const auto& f : r.signature.frames) {
      frames += (frames.empty() ? "" : " < ") + f;
    }
    out += fmt::format("  signature {} ({})\n", r.signature.hash, frames);
  }
  if (!r.sources.empty()) {
    const SourceExcerpt& ex = r.sources.front();
    out += "\n  " + s.bold(ex.function.empty() ? "??" : short_function(ex.function)) + " at " + ex.file + ":" +
           std::to_string(ex.marked_line) + "\n";
    for (std::size_t i = 0; i < ex.lines.size(); ++i) {
      const int n = ex.first_line + static_cast<int>(i);
      const std::string line = fmt::format("  {} {:>5} | {}", n == ex.marked_line ? ">" : " ", n, ex.lines[i]);
      out += (n == ex.marked_line ? s.red(line) : line) + "\n";
    }
  }
  if (r.threads.empty() && !exited) {
    out += "\n  (the process is gone: no thread could be examined)\n";
  }
  for (const auto& t : r.threads) {
    thread_section(out, r, t, s);
  }
  if (r.events.empty()) {
    return out;
  }
  out += "\n" + s.bold("Events") + " (ms since start):\n";
  // A long run's log (a test suite's thousands of processes) is cut to the processes on the
  // way to each crash; the JSON has all of it.
  const bool cut = r.events.size() > kEventsShownWhole;
  std::set<tracer::Pid> others;
  std::size_t left_out = 0;
  for (const auto& e : r.events) {
    if (cut && shown.count(e.pid) == 0) {
      others.insert(e.pid);
      ++left_out;
      continue;
    }
    out += fmt::format("  {:>10.3f}  {:<14} pid {} tid {}{}{}\n", e.t_ms, e.kind, e.pid, e.tid,
                       e.detail.empty() ? "" : "  " + e.detail, e.number != 0 ? fmt::format("  ({})", e.number) : "");
  }
  if (left_out != 0) {
    out += s.dim(fmt::format("  ({} events of {} other processes left out: the JSON report has them)\n", left_out,
                             others.size()));
  }
  return out;
}

}  // namespace

std::string text_report(const TriageReport& r, bool colour) { return report_text(r, colour, way_to(r)); }

std::string text_report(const std::vector<TriageReport>& reports, bool colour) {
  std::set<tracer::Pid> shown;  // every crashed process's way there
  for (const auto& r : reports) {
    const auto way = way_to(r);
    shown.insert(way.begin(), way.end());
  }
  std::string out;
  for (std::size_t i = 0; i < reports.size(); ++i) {
    TriageReport r = reports[i];
    if (i + 1 < reports.size()) {
      r.events.clear();  // the run's events once, after the last
    }
    out += (i == 0 ? "" : "\n") + report_text(r, colour, shown);
  }
  return out;
}

}  // namespace server::triage
