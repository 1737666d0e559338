// What the server announces is what it serves, for every Target: each qSupported feature is
// probed with a packet of its own, on the Linux target, the Valgrind (dbt) target and the
// fake with every capability and with none. No process is needed: a packet the server has
// gets an answer (an error for want of a process is one), a packet it lacks the empty reply.
#include <catch2/catch.hpp>

#include <map>
#include <set>

#include "protocol/hex.hpp"
#include "server/dispatch.hpp"
#include "test/support/fake_target.hpp"
#include "tracer/linux/linux_target.hpp"
#include "tracer/valgrind/valgrind_target.hpp"

namespace {

// Every feature the server has, with a packet only it answers (empty: no packet of its own,
// the feature is agreed in qSupported and read where stops are reported).
const std::map<std::string, std::string> kProbes = {
    {"QStartNoAckMode+", "QStartNoAckMode"},
    {"QPassSignals+", "QPassSignals:"},
    {"QProgramSignals+", "QProgramSignals:"},
    {"QThreadEvents+", "QThreadEvents:0"},
    {"QThreadOptions=3", "QThreadOptions;0"},
    {"QCatchSyscalls+", "QCatchSyscalls:0"},
    {"QNonStop+", "QNonStop:0"},
    {"QStartupWithShell+", "QStartupWithShell:1"},
    {"QEnvironmentHexEncoded+", "QEnvironmentHexEncoded:" + protocol::to_hex(std::string_view("A=1"))},
    {"QEnvironmentUnset+", "QEnvironmentUnset:" + protocol::to_hex(std::string_view("A"))},
    {"QEnvironmentReset+", "QEnvironmentReset"},
    {"QSetWorkingDir+", "QSetWorkingDir:"},
    {"QDisableRandomization+", "QDisableRandomization:1"},
    {"ConditionalBreakpoints+", "Z0,1000,1;X3,220100"},
    {"vContSupported+", "vCont?"},
    {"Qbtrace:bts+", "Qbtrace:bts"},
    {"Qbtrace:off+", "Qbtrace:off"},
    {"Qbtrace-conf:bts:size+", "Qbtrace-conf:bts:size=0x1000"},
    {"qXfer:btrace:read+", "qXfer:btrace:read:all:0,100"},
    {"qXfer:btrace-conf:read+", "qXfer:btrace-conf:read::0,100"},
    {"qXfer:features:read+", "qXfer:features:read:target.xml:0,100"},
    {"qXfer:auxv:read+", "qXfer:auxv:read::0,100"},
    {"qXfer:exec-file:read+", "qXfer:exec-file:read::0,100"},
    {"qXfer:threads:read+", "qXfer:threads:read::0,100"},
    {"qXfer:libraries-svr4:read+", "qXfer:libraries-svr4:read::0,100"},
    {"qXfer:siginfo:read+", "qXfer:siginfo:read::0,100"},
    {"qXfer:siginfo:write+", "qXfer:siginfo:write::0:00"},
    {"qXfer:osdata:read+", "qXfer:osdata:read::0,100"},
    {"multiprocess+", ""},
    {"swbreak+", ""},
    {"hwbreak+", ""},
    {"exec-events+", ""},
    {"fork-events+", ""},
    {"vfork-events+", ""},
    {"no-resumed+", ""},
    {"single-inf-arg+", ""},
    {"augmented-libraries-svr4-read+", ""},
    {"binary-upload+", "x1000,1"},
    {"ConditionalTracepoints+", "QTDP:1:1000:E:0:0"},
    {"TracepointSource+", "QTDPsrc:1:1000:at:0:1:61"},
    {"TraceStateVariables+", "QTDV:2:0:0:61"},
    {"EnableDisableTracepoints+", "QTEnable:1:1000"},
    {"QTBuffer:size+", "QTBuffer:size:1000"},
    {"DisconnectedTracing+", "QTDisconnected:0"},
    {"InstallInTrace+", "QTStart"},
    {"qXfer:traceframe-info:read+", "qXfer:traceframe-info:read::0,100"},
    {"tracenz+", ""},
    {"FastTracepoints+", "qTMinFTPILen"},
    {"QAllow+", "QAllow:WriteMem:1"},
    {"QAgent+", "QAgent:1"},
};
// Features of one packet that another route also serves: refused means an error, not "".
const std::map<std::string, std::string> kOptionProbes = {
    {"BreakpointCommands+", "Z0,1000,1;cmds:0,X3,220100"},  // Z0 with commands
};

const std::string kGdbOffers =
    "qSupported:multiprocess+;swbreak+;hwbreak+;fork-events+;vfork-events+;exec-events+;vContSupported+;"
    "QThreadEvents+;no-resumed+;single-inf-arg+";

std::set<std::string> announced_by(server::Context& cx) {
  auto reply = server::dispatch_packet(cx, kGdbOffers).payload;
  REQUIRE(reply.starts_with("PacketSize="));
  std::set<std::string> out;
  std::size_t pos = reply.find(';');
  while (pos != std::string::npos) {
    auto next = reply.find(';', pos + 1);
    out.insert(reply.substr(pos + 1, next == std::string::npos ? std::string::npos : next - pos - 1));
    pos = next;
  }
  return out;
}

// Announced features are served, the others refused, and every feature has a probe.
void check_announced_is_served(tracer::Target& target) {
  test_support::FakeHostIo host;
  server::SessionState state;
  server::ServerOptions options;
  server::ServerState server;
  server::Context cx{target, host, state, options, server, {}, [](const std::string&) {}};
  const auto announced = announced_by(cx);
  for (const auto& feature : server::all_features()) {
    INFO("feature " << feature.name);
    const bool on = announced.count(feature.name) != 0;
    if (auto probe = kOptionProbes.find(feature.name); probe != kOptionProbes.end()) {
      // Without a process every Z0 is an error: only a target with one shows the difference.
      if (target.has_process()) {
        auto reply = server::dispatch_packet(cx, probe->second).payload;
        CHECK((on ? reply == "OK" : reply.starts_with("E")));
      }
      continue;
    }
    auto probe = kProbes.find(feature.name);
    REQUIRE(probe != kProbes.end());  // a new feature needs a probe here
    if (!probe->second.empty()) {
      CHECK(server::dispatch_packet(cx, probe->second).payload.empty() == !on);
    }
  }
  // Agreed features are what stop replies and the target's reports follow.
  CHECK(state.fork_events == (announced.count("fork-events+") != 0));
  CHECK(state.exec_events == (announced.count("exec-events+") != 0));
  CHECK(state.no_resumed == (announced.count("no-resumed+") != 0));
  CHECK(state.multiprocess);
  const auto can = target.capabilities();
  CHECK(announced.count("QNonStop+") == (can.non_stop ? 1u : 0u));
  CHECK(announced.count("fork-events+") == (can.fork_events ? 1u : 0u));
  CHECK(announced.count("QThreadEvents+") == (can.thread_exit_events ? 1u : 0u));
  CHECK(announced.count("QThreadOptions=3") == (can.thread_options ? 1u : 0u));
  CHECK(announced.count("Qbtrace:bts+") == (can.branch_tracing ? 1u : 0u));
  CHECK(announced.count("BreakpointCommands+") == (can.breakpoint_commands ? 1u : 0u));
  CHECK(announced.count("ConditionalTracepoints+") == (can.tracepoints ? 1u : 0u));
  CHECK(announced.count("tracenz+") == (can.tracepoints ? 1u : 0u));
  CHECK(announced.count("FastTracepoints+") == (can.fast_tracepoints ? 1u : 0u));
}

}  // namespace

TEST_CASE("features: the Linux target serves what it announces", "[features]") {
  tracer::LinuxTarget target;
  const auto can = target.capabilities();
  CHECK(can.non_stop);
  CHECK(can.fork_events);
  CHECK(can.exec_events);
  CHECK(can.thread_exit_events);
  CHECK(can.no_resumed);
  CHECK(can.catch_syscalls);
  CHECK(can.breakpoint_commands);
  CHECK(can.branch_tracing);
  check_announced_is_served(target);
}

TEST_CASE("features: the dbt target serves what it announces (no non-stop, forks or agent)", "[features]") {
  tracer::ValgrindTarget target(tracer::DbtOptions{});
  const auto can = target.capabilities();
  CHECK_FALSE(can.non_stop);
  CHECK_FALSE(can.fork_events);
  CHECK_FALSE(can.exec_events);
  CHECK_FALSE(can.thread_exit_events);
  CHECK_FALSE(can.breakpoint_commands);
  CHECK(can.catch_syscalls);
  CHECK(can.branch_tracing);
  check_announced_is_served(target);
}

TEST_CASE("features: the fake target with every capability and with none", "[features]") {
  test_support::FakeTarget all;
  check_announced_is_served(all);
  CHECK(all.report_forks);
  CHECK(all.report_exec);
  test_support::FakeTarget none;
  none.caps = {};
  check_announced_is_served(none);
  CHECK_FALSE(none.report_forks);
  CHECK_FALSE(none.report_exec);
}

TEST_CASE("features: --disable-packet removes a feature and its packets", "[features]") {
  test_support::FakeTarget target;
  test_support::FakeHostIo host;
  server::SessionState state;
  server::ServerOptions options;
  server::ServerState server;
  options.disabled_packets = {server::DisablePacket::VCont, server::DisablePacket::Threads};
  server::Context cx{target, host, state, options, server, {}, [](const std::string&) {}};
  const auto announced = announced_by(cx);
  CHECK(announced.count("vContSupported+") == 0);
  CHECK(announced.count("qXfer:threads:read+") == 0);
  CHECK(server::dispatch_packet(cx, "vCont?").payload.empty());
  CHECK(server::dispatch_packet(cx, "qXfer:threads:read::0,100").payload.empty());
  CHECK(server::dispatch_packet(cx, "vCont?").payload.empty());
}
