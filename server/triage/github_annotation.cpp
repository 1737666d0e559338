// A crash, a termination, a kill or a timeout as a GitHub Actions workflow command:
// `::error file=F,line=L,title=T::message`, which GitHub shows on the pull request's diff at
// that line. Escaping as the runner expects: in the message %, CR and LF; in properties also
// ':' and ','.
#include <fmt/format.h>

#include <filesystem>
#include <optional>

#include "server/triage/signal_facts.hpp"
#include "server/triage/own_code.hpp"
#include "server/triage/writers.hpp"

namespace server::triage {
namespace {

std::string escape_data(const std::string& text) {
  std::string out;
  for (const char c : text) {
    switch (c) {
      case '%': out += "%25"; break;
      case '\r': out += "%0D"; break;
      case '\n': out += "%0A"; break;
      default: out += c;
    }
  }
  return out;
}

std::string escape_property(const std::string& text) {
  std::string out;
  for (const char c : escape_data(text)) {
    switch (c) {
      case ':': out += "%3A"; break;
      case ',': out += "%2C"; break;
      default: out += c;
    }
  }
  return out;
}

// Relative to the checkout when inside it (GitHub matches paths of the repository).
std::string repository_path(const std::string& file, const std::string& workspace) {
  if (workspace.empty()) {
    return file;
  }
  const auto relative = std::filesystem::path(file).lexically_relative(workspace);
  return relative.empty() || *relative.begin() == ".." ? file : relative.string();
}

// Each outcome its own title, so a crash and a CI timeout's kill read apart on the pull request.
std::string title_of(const Outcome& o) {
  switch (o.cause()) {
    case Outcome::Cause::Crash: return "crash";
    case Outcome::Cause::Terminated: return "terminated by " + signal_name(o.signo);
    case Outcome::Cause::Killed: return "killed by " + signal_name(o.signo);
    case Outcome::Cause::Timeout: return "timeout";
    case Outcome::Cause::Interrupted: return "interrupted by " + signal_name(o.signo);
    case Outcome::Cause::Exit: break;
  }
  return {};
}

struct Place {
  std::string file;
  int line = 0;
  std::string function;
};

// Where the annotation points: the innermost frame with a source line (a process stopped at
// its end; its excerpt's, else the frame's own when the file cannot be read here), else the
// newest entry of the first thread's history that has one (one killed outright has no stack
// left: where it was last recorded). None when no code it ran has line information (stripped,
// no debug info): then no file= is written, and GitHub shows the annotation on the run's
// summary instead of at a line of the diff.
std::optional<Place> place_of(const TriageReport& r) {
  if (!r.sources.empty()) {
    const SourceExcerpt& at = r.sources.front();
    return Place{at.file, at.marked_line, at.function};
  }
  if (r.threads.empty()) {
    return std::nullopt;
  }
  for (const auto& frame : r.threads.front().backtrace) {
    if (!frame.where.file.empty() && frame.where.line > 0) {
      return Place{frame.where.file, frame.where.line, frame.where.function};
    }
  }
  const auto& entries = r.threads.front().history.entries;
  for (auto it = entries.rbegin(); it != entries.rend(); ++it) {
    if (!it->where.file.empty() && it->where.line > 0) {
      return Place{it->where.file, it->where.line, it->where.function};
    }
  }
  return std::nullopt;
}

}  // namespace

std::string github_annotation(const TriageReport& r, const std::string& workspace) {
  std::string title = title_of(r.outcome);
  if (title.empty()) {
    return {};  // it exited: its status says it, the step fails or not by it
  }
  std::string where;
  if (const auto at = place_of(r)) {
    title += " in " + (at->function.empty() ? std::string("??") : short_function(at->function));
    where = fmt::format("file={},line={},", escape_property(repository_path(at->file, workspace)), at->line);
  }
  std::string message = fmt::format("{} (pid {}) {}", r.program, r.pid, r.outcome.summary());
  if (!r.signature.hash.empty()) {
    title += " [" + r.signature.hash + "]";
    message += "\nsignature " + r.signature.hash;
  }
  return fmt::format("::error {}title={}::{}\n", where, escape_property(title), escape_data(message));
}

}  // namespace server::triage
