// libFuzzer: arbitrary bytes from a "GDB" through the frame decoder, the dispatcher and every
// handler, against a FakeTarget. Anything but a reply is a bug: crashes, leaks, UB, hangs.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "server/session.hpp"
#include "test/support/fake_target.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  test_support::FakeTarget target;
  test_support::FakeHostIo host;
  server::SessionState state;
  server::ServerOptions options;
  server::ServerState server;
  server::Context cx{target, host, state, options, server, {}, [](const std::string&) {}};
  std::size_t written = 0;
  server::Session session(cx, [&](std::string_view bytes) { written += bytes.size(); });

  // Feed in two pieces so that splits inside packets are covered too.
  std::string_view input(reinterpret_cast<const char*>(data), size);
  std::size_t cut = size > 0 ? data[0] % (size + 1) : 0;
  session.on_bytes(input.substr(0, cut));
  session.on_bytes(input.substr(cut));
  // Let queued stops (interrupts, resumes) be reported as a running session would.
  for (int i = 0; i < 4 && !session.ended(); ++i) {
    session.on_target_event();
  }
  return 0;
}
