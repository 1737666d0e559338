// libFuzzer: the dynamic linker's library list read out of a program's memory that anything
// may have scribbled on (auxv, program headers, the dynamic section, r_debug and link_map
// chains that loop, point anywhere or end mid-word). The input is the auxv, then the memory
// image mapped at 0x400000. Anything but a list or an error is a bug; so is a hang.
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "tracer/linux/svr4_libraries.hpp"

namespace {
constexpr tracer::Addr kBase = 0x400000;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 2) {
    return 0;
  }
  // First byte: how many 16-byte auxv records follow.
  const std::size_t auxv_len = std::min<std::size_t>(static_cast<std::size_t>(data[0]) * 16, size - 1);
  const tracer::Bytes auxv(data + 1, data + 1 + auxv_len);
  const tracer::Bytes image(data + 1 + auxv_len, data + size);
  std::size_t reads = 0;
  auto read = [&](tracer::Addr addr, std::size_t len) -> base::Result<tracer::Bytes> {
    ++reads;
    if (addr < kBase || addr - kBase >= image.size()) {
      return base::make_error(base::Errc::invalid, "unmapped");
    }
    const std::size_t at = addr - kBase;
    const std::size_t n = std::min(len, image.size() - at);
    return tracer::Bytes(image.begin() + static_cast<std::ptrdiff_t>(at),
                         image.begin() + static_cast<std::ptrdiff_t>(at + n));
  };
  (void)tracer::svr4::read_libraries(read, auxv);
  return 0;
}
