// Command line and COMM parsing, compatible with gdbserver's.
#include <catch2/catch.hpp>

#include "server/cli.hpp"
#include "server/comm.hpp"

using server::parse_command_line;
using server::parse_comm;

TEST_CASE("command line like gdbserver's", "[cli]") {
  auto cl = parse_command_line({"--once", ":1234", "./prog", "--flag", "arg"});
  REQUIRE(cl);
  CHECK(cl->once);
  CHECK(cl->comm == ":1234");
  CHECK(cl->program == std::vector<std::string>{"./prog", "--flag", "arg"});

  auto at = parse_command_line({"--attach", ":1", "42"});
  REQUIRE(at);
  CHECK(at->attach_pid == 42);
  CHECK_FALSE(parse_command_line({"--attach", ":1", "x"}));
  CHECK_FALSE(parse_command_line({"--attach", ":1"}));

  auto stdio = parse_command_line({"--debug=remote", "-", "prog"});
  REQUIRE(stdio);
  CHECK(stdio->remote_debug);
  CHECK_FALSE(stdio->debug);
  CHECK(stdio->comm == "-");

  auto shell = parse_command_line({"--no-startup-with-shell", "--remote-debug", ":1", "p"});
  REQUIRE(shell);
  CHECK_FALSE(shell->startup_with_shell);
  CHECK(shell->remote_debug);

  auto multi = parse_command_line({"--multi", ":1"});
  REQUIRE(multi);
  CHECK(multi->multi);

  CHECK_FALSE(parse_command_line({}));
  CHECK_FALSE(parse_command_line({":1"}));                 // no program
  CHECK_FALSE(parse_command_line({"--bogus", ":1", "p"}));
  CHECK_FALSE(parse_command_line({"--debug=nonsense", ":1", "p"}));

  auto disabled = parse_command_line({"--once", "--disable-packet=Tthread,qC", ":1", "p"});
  REQUIRE(disabled);
  CHECK(disabled->disabled_packets == std::vector<std::string>{"Tthread", "qC"});
  CHECK_FALSE(parse_command_line({"--disable-packet=bogus", ":1", "p"}));

  auto help = parse_command_line({"--help"});
  REQUIRE(help);
  REQUIRE(help->output);
  CHECK(help->output->find("--attach") != std::string::npos);
  // Whole: printed with fputs, a NUL (an enum's value as a byte) would end it early.
  CHECK(help->output->find('\0') == std::string::npos);
  CHECK(help->output->find("--btrace ENUM:{auto,bts,dbt,soft,step,inproc}") != std::string::npos);
  CHECK(help->output->find("libhindsight-agent.so") != std::string::npos);  // the footer, last
  auto version = parse_command_line({"--version"});
  REQUIRE(version);
  CHECK(version->version);
  CHECK_FALSE(version->output);
}

TEST_CASE("gdbserver's other options: --wrapper, --attach after COMM, randomization, debug, selftest", "[cli]") {
  auto wrapped = parse_command_line({"--once", "--wrapper", "env", "A=1", "--", ":1", "prog", "x"});
  REQUIRE(wrapped);
  CHECK(wrapped->wrapper == std::vector<std::string>{"env", "A=1"});
  CHECK(wrapped->once);
  CHECK(wrapped->program == std::vector<std::string>{"prog", "x"});
  CHECK_FALSE(parse_command_line({"--wrapper", "env", ":1", "prog"}));  // no "--"
  CHECK_FALSE(parse_command_line({"--wrapper", "--", ":1", "prog"}));   // nothing to wrap with

  auto late = parse_command_line({"--once", ":1", "--attach", "42"});
  REQUIRE(late);
  CHECK(late->attach_pid == 42);

  CHECK(parse_command_line({":1", "p"})->disable_randomization);
  CHECK_FALSE(parse_command_line({"--no-disable-randomization", ":1", "p"})->disable_randomization);
  CHECK(parse_command_line({"--disable-randomization", ":1", "p"})->disable_randomization);

  auto logs = parse_command_line({"--debug-format=timestamp", "--event-loop-debug", "--debug-file=/tmp/x", ":1", "p"});
  REQUIRE(logs);
  CHECK(logs->log_timestamps);
  CHECK(logs->debug);
  CHECK(logs->debug_file == "/tmp/x");
  CHECK_FALSE(parse_command_line({"--debug-format=bogus", ":1", "p"}));
  for (const auto& bare : {std::vector<std::string>{"--debug", ":1", "p"},
                           std::vector<std::string>{"--debug", "--once", ":1", "p"}}) {
    auto all = parse_command_line(bare);  // gdbserver's bare --debug: everything
    REQUIRE(all);
    CHECK(all->debug);
    CHECK(all->remote_debug);
    CHECK(all->program == std::vector<std::string>{"p"});
  }

  auto selftest = parse_command_line({"--selftest"});
  REQUIRE(selftest);
  CHECK(selftest->selftest == std::string());
  CHECK(parse_command_line({"--selftest=framing"})->selftest == std::string("framing"));
}

TEST_CASE("COMM forms", "[cli]") {
  auto port = parse_comm(":1234");
  REQUIRE(port);
  CHECK(port->kind == server::Endpoint::Kind::Tcp);
  CHECK(port->host == "127.0.0.1");
  CHECK(port->port == 1234);
  CHECK(port->loopback_only);

  auto wide = parse_comm("0.0.0.0:99");
  REQUIRE(wide);
  CHECK_FALSE(wide->loopback_only);
  CHECK(parse_comm("localhost:5")->loopback_only);
  CHECK(parse_comm("[::1]:5")->host == "::1");
  CHECK(parse_comm("tcp:host:7")->host == "host");
  CHECK(parse_comm("-")->kind == server::Endpoint::Kind::Stdio);
  CHECK(parse_comm("unix:/tmp/sock")->kind == server::Endpoint::Kind::Unix);
  CHECK(parse_comm("unix:/tmp/sock")->path == "/tmp/sock");
  CHECK_FALSE(parse_comm("unix:"));
  // Without ':', as gdbserver: a serial device, never a socket made up on the spot.
  CHECK(parse_comm("/dev/ttyS0")->kind == server::Endpoint::Kind::Device);
  CHECK(parse_comm("foo")->kind == server::Endpoint::Kind::Device);
  CHECK(parse_comm("foo")->path == "foo");
  CHECK_FALSE(parse_comm(":99999"));
  CHECK_FALSE(parse_comm(":x"));
  CHECK_FALSE(parse_comm(":"));
}

TEST_CASE("--btrace and --btrace-max-size", "[cli]") {
  auto cl = parse_command_line({"--btrace=soft", "--btrace-max-size=1M", ":1", "p"});
  REQUIRE(cl);
  CHECK(cl->btrace == tracer::Backend::Soft);
  CHECK(cl->btrace_max_size == 1024 * 1024);
  auto plain = parse_command_line({"--btrace-max-size=4096", ":1", "p"});  // options take =, as gdbserver's
  REQUIRE(plain);
  CHECK(plain->btrace_max_size == 4096);
  auto byDefault = parse_command_line({":1", "p"});
  REQUIRE(byDefault);
  CHECK(byDefault->btrace_max_size == 64 * 1024 * 1024);
  CHECK_FALSE(parse_command_line({"--btrace-max-size=lots", ":1", "p"}));
  CHECK_FALSE(parse_command_line({"--btrace-max-size=8G", ":1", "p"}));  // the wire size is 32 bits
  CHECK_FALSE(parse_command_line({"--btrace=pt", ":1", "p"}));
}
