#include "server/features.hpp"

#include <algorithm>

#include "server/dispatch.hpp"
#include "server/handlers/handlers.hpp"

namespace server {
namespace {

using Caps = tracer::Capabilities;

// Features that belong to no single route: what stop replies carry, which events are
// reported (the session flags are read where stops are encoded and by the target's setters),
// and forms of a packet a route serves besides the one it is named for.
std::vector<Feature> general_features() {
  return {
      {"Qbtrace:off+", {&Caps::branch_tracing}, nullptr},
      {"qXfer:btrace-conf:read+", {&Caps::branch_tracing}, nullptr},
      {"BreakpointCommands+", {&Caps::breakpoint_commands}, nullptr},  // Z0 ;cmds:
      {"tracenz+", {&Caps::tracepoints}, nullptr},  // the agent's tracenz op, in QTDP's X actions
      {"multiprocess+", {}, &SessionState::multiprocess},
      {"swbreak+", {}, nullptr},
      {"hwbreak+", {}, nullptr},
      {"exec-events+", {&Caps::exec_events}, &SessionState::exec_events},
      {"fork-events+", {&Caps::fork_events}, &SessionState::fork_events},
      {"vfork-events+", {&Caps::fork_events}, &SessionState::vfork_events},
      {"no-resumed+", {&Caps::no_resumed}, &SessionState::no_resumed},
      {"single-inf-arg+", {}, &SessionState::single_inferior_argument},  // vRun
      {"augmented-libraries-svr4-read+", {}, nullptr},  // qXfer:libraries-svr4:read:start=...
  };
}

bool offered(const std::vector<std::string>& gdb_features, std::string_view name) {
  return std::find(gdb_features.begin(), gdb_features.end(), name) != gdb_features.end();
}

}  // namespace

bool available(const Context& cx, const Availability& when) {
  if (when.needs != nullptr && !(cx.target.capabilities().*when.needs)) {
    return false;
  }
  return !cx.options.disabled(when.disable);
}

std::vector<Feature> all_features() {
  std::vector<Feature> out = route_features();
  for (auto& f : xfer_features()) {
    out.push_back(std::move(f));
  }
  for (auto& f : general_features()) {
    out.push_back(std::move(f));
  }
  return out;
}

std::vector<std::string> negotiate_features(Context& cx, const std::vector<std::string>& gdb_features) {
  // GDB's own words on what it understands in stop replies, whatever we announce.
  cx.state.swbreak = offered(gdb_features, "swbreak+");
  cx.state.hwbreak = offered(gdb_features, "hwbreak+");
  cx.state.gdb15_or_later = offered(gdb_features, "error-message+");
  std::vector<std::string> out;
  for (const Feature& f : all_features()) {
    bool on = available(cx, f.when);
    if (f.agreed != nullptr) {
      on = on && offered(gdb_features, f.name);
      cx.state.*f.agreed = on;
    }
    if (on) {
      out.push_back(f.name);
    }
  }
  return out;
}

}  // namespace server
