// The report written three ways: text for a person at a terminal or in a CI log, JSON for
// scripts (schema: docs/triage-report.schema.json), HTML for a CI artifact.
#pragma once

#include <string>

#include "server/triage/report.hpp"

namespace server::triage {

std::string text_report(const TriageReport& report, bool colour);
std::string json_report(const TriageReport& report);
std::string html_report(const TriageReport& report);

std::string hex(std::uint64_t value);  // "0x401136"

}  // namespace server::triage
