#include "tracer/collectors_here.hpp"

#include <sys/syscall.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "tracer/btrace/perf_bts.hpp"
#include "tracer/valgrind/dbt_problem.hpp"

namespace tracer {
namespace {

// The software collectors trace with ptrace, which Yama's mode 3 takes from everyone.
std::optional<std::string> ptrace_problem() {
  std::ifstream file("/proc/sys/kernel/yama/ptrace_scope");
  int scope = 0;
  if (file >> scope && scope == 3) {
    return std::string("ptrace is disabled on this machine (kernel.yama.ptrace_scope is 3)");
  }
  return std::nullopt;
}

std::optional<std::string> bts_problem() {
  const auto tid = static_cast<Tid>(::syscall(SYS_gettid));
  auto probe = open_perf_bts(tid, BtraceConfig{64 * 1024});
  if (!probe) {
    return probe.error().message();
  }
  return std::nullopt;
}

}  // namespace

std::optional<std::string> recorder_problem(const std::string& recorder_lib) {
  if (auto ptrace = ptrace_problem()) {
    return ptrace;
  }
  std::error_code ec;
  if (recorder_lib.empty() || !std::filesystem::exists(recorder_lib, ec)) {
    return "no in-process recorder (libhindsight-recorder.so not at " + recorder_lib + ")";
  }
  return std::nullopt;
}

std::vector<CollectorHere> collectors_here(const std::string& dbt_lib, const std::string& recorder_lib) {
  std::vector<CollectorHere> out;
  for (const auto& row : kBackends) {
    switch (row.needs) {
      case Needs::Nothing:
        break;
      case Needs::PerfBts:
        out.push_back({row.backend, bts_problem()});
        break;
      case Needs::Valgrind:
        out.push_back({row.backend, dbt_problem(dbt_lib)});
        break;
      case Needs::Ptrace:
        out.push_back({row.backend, ptrace_problem()});
        break;
      case Needs::Recorder:
        out.push_back({row.backend, recorder_problem(recorder_lib)});
        break;
    }
  }
  return out;
}

}  // namespace tracer
