#include "server/version.hpp"

#include <filesystem>

#include <fmt/format.h>

#include "server/commit.h"
#include "tracer/collectors_here.hpp"

namespace server {

std::string version_text(const Parts& parts) {
  std::string commit = HINDSIGHT_COMMIT;
  std::string out = fmt::format("Hindsight {}{}\n", HINDSIGHT_VERSION, commit.empty() ? "" : " (git " + commit + ")");
  out += "A GDB remote server for x86-64 Linux with per-thread branch-trace history.\n\n";
  out += "History collectors on this machine (--btrace):\n";
  for (const auto& here : tracer::collectors_here(parts.dbt_lib, parts.recorder)) {
    const std::string name(tracer::backend_name(here.backend));
    if (here.problem) {
      out += fmt::format("  {:<6} no: {}\n", name, *here.problem);
    } else if (tracer::backend_row(here.backend).needs == tracer::Needs::Valgrind) {
      out += fmt::format("  {:<6} yes ({})\n", name, parts.dbt_lib);
    } else if (tracer::backend_row(here.backend).needs == tracer::Needs::Recorder) {
      out += fmt::format("  {:<6} yes ({})\n", name, parts.recorder);
    } else {
      out += fmt::format("  {:<6} yes\n", name);
    }
  }
  std::error_code ec;
  out += std::filesystem::exists(parts.agent, ec)
             ? fmt::format("Fast tracepoints: the agent is {}\n", parts.agent)
             : fmt::format("Fast tracepoints: no agent (not at {})\n", parts.agent);
  return out;
}

}  // namespace server
