// The history collectors a user can ask for (--btrace, triage's --btrace): one enum, one table of
// names, read by the server's and triage's command lines, `monitor btrace` and the reports.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tracer {

enum class Backend : std::uint8_t {
  Auto,  // the fastest that works here (open_target.hpp says in which order)
  Bts,   // Intel BTS through perf_event
  Dbt,   // the program runs under the dbt recorder (a Valgrind tool)
  Soft,  // SoftEmulate: int3 at branches
  Step,  // SoftStep: single-stepping
};

struct BackendRow {
  Backend backend;
  std::string_view name;
  std::string_view what;  // for --help and the man pages
};
inline constexpr BackendRow kBackends[] = {
    {Backend::Auto, "auto", "the fastest that works here"},
    {Backend::Bts, "bts", "Intel BTS through perf_event: the CPU records every branch (Intel hardware, no VM)"},
    {Backend::Dbt, "dbt", "PROG runs under the dbt recorder, a Valgrind tool: every branch, about 5x slower than native"},
    {Backend::Soft, "soft", "software: an int3 at each branch, the branch emulated"},
    {Backend::Step, "step", "software: single-stepping, the slow reference"},
};

inline std::string_view backend_name(Backend backend) {
  for (const auto& row : kBackends) {
    if (row.backend == backend) {
      return row.name;
    }
  }
  return "?";
}

inline std::optional<Backend> backend_from_name(std::string_view name) {
  for (const auto& row : kBackends) {
    if (row.name == name) {
      return row.backend;
    }
  }
  return std::nullopt;
}

// name -> backend, for a command-line parser's checked transform.
inline std::map<std::string, Backend> backend_names() {
  std::map<std::string, Backend> out;
  for (const auto& row : kBackends) {
    out.emplace(row.name, row.backend);
  }
  return out;
}

// "{auto,bts,dbt,soft,step}": the choices as --help shows them (a parser would print the enum's
// values, which are bytes).
inline std::string backend_choices() {
  std::string out = "{";
  for (const auto& row : kBackends) {
    out += (out.size() > 1 ? "," : "") + std::string(row.name);
  }
  return out + "}";
}

}  // namespace tracer
