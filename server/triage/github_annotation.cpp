// A crash as a GitHub Actions workflow command: `::error file=F,line=L,title=T::message`, which
// GitHub shows on the pull request's diff at that line. Escaping as the runner expects: in the
// message %, CR and LF; in properties also ':' and ','.
#include <fmt/format.h>

#include <filesystem>

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

}  // namespace

std::string github_annotation(const TriageReport& r, const std::string& workspace) {
  std::string title = r.outcome.kind == Outcome::Kind::Signal ? "crash" : "triage";
  std::string where;
  if (!r.sources.empty()) {
    const SourceExcerpt& at = r.sources.front();
    title += " in " + (at.function.empty() ? std::string("??") : at.function);
    where = fmt::format("file={},line={},", escape_property(repository_path(at.file, workspace)), at.marked_line);
  }
  std::string message = fmt::format("{} (pid {}) {}", r.program, r.pid, r.outcome.summary());
  if (!r.signature.hash.empty()) {
    title += " [" + r.signature.hash + "]";
    message += "\nsignature " + r.signature.hash;
  }
  return fmt::format("::error {}title={}::{}\n", where, escape_property(title), escape_data(message));
}

}  // namespace server::triage
