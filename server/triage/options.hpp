// hindsight triage [OPTIONS] -- PROG [ARGS...]
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/result.hpp"
#include "tracer/backend.hpp"

namespace server::triage {

// triage's own exit codes, distinct from a program's (which are passed through) and from
// 128+signal after a crash report.
inline constexpr int kExitTimeout = 124;       // --timeout expired; every thread reported
inline constexpr int kExitTriageFailed = 125;  // hindsight itself could not do its work
inline constexpr int kExitUsage = 2;           // a bad command line

struct Options {
  std::vector<std::string> program;  // PROG ARGS...
  tracer::Backend btrace = tracer::Backend::Auto;  // auto: tracer::kAutoUnattended (inproc, dbt, soft, then step)
  std::size_t history = 64;          // calls and returns per thread
  std::string output;                // the text report (default stderr)
  std::string json;
  std::string html;
  std::string serve;                 // [HOST]:PORT: serve GDB at the crash instead of exiting
  double serve_timeout = 0;          // seconds to wait for GDB (0: as long as it takes)
  double timeout = 0;                // seconds before a hung program is stopped (0: never)
  bool follow_fork = true;  // every descendant (--no-follow-fork: the started program alone)
  bool github_annotations = false;   // also on when GITHUB_ACTIONS=true
  std::string color = "auto";        // auto, always, never
  std::uint64_t ring_bytes = 4u << 20;  // branch history per thread
  std::string keep_rings;               // dbt: keep every process's rings in this directory
  std::optional<std::string> text;   // --help: print this and exit 0
};

// args: what follows `triage` on the command line.
base::Result<Options> parse_options(const std::vector<std::string>& args);

}  // namespace server::triage
