// The report written three ways: text for a person at a terminal or in a CI log, JSON for
// scripts (schema: docs/triage-report.schema.json), HTML for a CI artifact; and as a GitHub
// Actions annotation.
#pragma once

#include <string>
#include <vector>

#include "server/triage/report.hpp"

namespace server::triage {

std::string text_report(const TriageReport& report, bool colour);
std::string json_report(const TriageReport& report);
// Several crashes of one run (followed descendants, then the started program), first first:
// one after the other, the run's events after the last; JSON: the first's document (what
// readers of a single report know) with all of them in `processes`.
std::string text_report(const std::vector<TriageReport>& reports, bool colour);
std::string json_report(const std::vector<TriageReport>& reports);
std::string html_report(const TriageReport& report);
// Several: a list of them on top, each one's section after it (#process-N). Plain HTML: no script.
std::string html_report(const std::vector<TriageReport>& reports);
// One GitHub Actions `::error` line at the faulting source line (a path inside workspace, the
// checkout, is made relative to it), titled by the outcome ("crash in F", "terminated by
// SIGTERM in F", ...); nothing for a clean exit.
std::string github_annotation(const TriageReport& report, const std::string& workspace);

std::string hex(std::uint64_t value);  // "0x401136"

// The thread crashed: the fatal signal came to it, and it is a crash (not a kill -TERM).
inline bool crashed(const TriageReport& report, const ThreadReport& thread) {
  return thread.got_signal && report.outcome.cause() == Outcome::Cause::Crash;
}

}  // namespace server::triage
