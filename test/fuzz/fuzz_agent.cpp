// libFuzzer: agent expressions (tracer/agent) as GDB, or anything on the wire, may send them:
// checked, then run against a machine whose registers and memory come from the input too.
// Anything but a value or an error is a bug; so is a run that does not end.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string_view>

#include "tracer/agent/bytecode.hpp"

namespace {

// Registers 0..15 and 64 bytes of memory at 0x1000, from the first 192 bytes of the input.
struct InputMachine : tracer::agent::Machine {
  std::span<const std::uint8_t> state;
  base::Result<std::uint64_t> reg(int regno) override {
    if (regno < 0 || regno >= 16) {
      return base::make_error(base::Errc::invalid, "no such register");
    }
    std::uint64_t v = 0;
    std::memcpy(&v, state.data() + regno * 8, 8);
    return v;
  }
  base::Result<std::uint64_t> read(tracer::Addr addr, std::size_t len) override {
    if (addr < 0x1000 || addr - 0x1000 > 64 || addr - 0x1000 + len > 64) {
      return base::make_error(base::Errc::invalid, "unmapped");
    }
    std::uint64_t v = 0;
    std::memcpy(&v, state.data() + 128 + (addr - 0x1000), len);
    return v;
  }
  void print(std::string_view text) override { printed += text.size(); }
  std::size_t printed = 0;
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 193) {
    return 0;
  }
  InputMachine machine;
  machine.state = std::span<const std::uint8_t>(data, 192);
  const std::span<const std::uint8_t> code(data + 192, size - 192);
  if (tracer::agent::validate(code)) {
    (void)tracer::agent::evaluate(code, machine);
  }
  return 0;
}
