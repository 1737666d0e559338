// Which history collectors this machine can use, and why not: `hindsight --version` asks, in
// the same words the server and triage say when they fall back.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "tracer/backend.hpp"

namespace tracer {

struct CollectorHere {
  Backend backend;
  std::optional<std::string> problem;  // nullopt: usable here
};

// Every collector but auto, in kBackends' order, each row's needs probed. dbt_lib: the recorder's VALGRIND_LIB (empty:
// not built); recorder_lib: libhindsight-recorder.so. BTS is probed on the calling thread, as the
// server probes each thread it records.
std::vector<CollectorHere> collectors_here(const std::string& dbt_lib, const std::string& recorder_lib);

// Why the in-process recorder cannot record here (nullopt: it can).
std::optional<std::string> recorder_problem(const std::string& recorder_lib);

}  // namespace tracer
