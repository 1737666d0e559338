// A handler context around a FakeTarget, for handler and session tests.
#pragma once

#include <string>
#include <string_view>

#include "server/dispatch.hpp"
#include "test/support/fake_target.hpp"

namespace test_support {

struct HandlerFixture {
  FakeTarget target;
  FakeHostIo host;
  server::SessionState state;
  server::ServerOptions options;
  server::ServerState server;
  std::vector<std::string> notices;
  server::Context cx{target, host, state, options, server, {}, [this](const std::string& s) { notices.push_back(s); }};

  // The reply payload of one packet.
  std::string send(std::string_view payload) { return server::dispatch_packet(cx, payload).payload; }
  server::Reply reply(std::string_view payload) { return server::dispatch_packet(cx, payload); }
};

}  // namespace test_support
