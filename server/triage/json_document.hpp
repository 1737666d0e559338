// The reports of one run as the JSON document json_report writes (its one owner), for the
// writers that render it otherwise (html_report).
#pragma once

#include <vector>

#include <nlohmann/json.hpp>

#include "server/triage/report.hpp"

namespace server::triage {

nlohmann::json json_document(const std::vector<TriageReport>& reports);

}  // namespace server::triage
