// libFuzzer: what Valgrind's gdbserver (another program, reached through vgdb) may answer: a
// stop reply, and a target description whose XML names features and register sizes. The
// input is split at the first NUL: reply, then the top-level document; every included
// feature gets the same document back. Anything but a stop or an error is a bug.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "tracer/valgrind/stub_replies.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  const std::size_t nul = input.find('\0');
  const std::string_view reply = input.substr(0, nul);
  const std::string document(nul == std::string_view::npos ? std::string_view{} : input.substr(nul + 1));
  (void)tracer::valgrind::parse_stop_reply(reply, 100, 101, tracer::valgrind::description_isa(document));
  int fetched = 0;
  (void)tracer::valgrind::register_sizes([&](const std::string&) -> base::Result<std::string> {
    if (++fetched > 64) {
      return base::make_error(base::Errc::invalid, "too many features");
    }
    return document;
  });
  return 0;
}
