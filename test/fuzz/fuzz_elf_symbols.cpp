// libFuzzer: the ELF and DWARF triage reads to name addresses (function, file:line, inlined
// calls, the unwind table, symbols), from a file that may be anything: a program rebuilt
// under us, a truncated download, a hostile binary. The input is written to a file and read
// as a module mapped at 0x400000; addresses across it are looked up. Anything but names or
// nothing is a bug: crashes, reads out of bounds, UB, hangs.
#include <cstddef>
#include <cstdint>
#include <string>

#include "test/fuzz/input_file.hpp"
#include "tracer/symbols/symbolizer.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string path = fuzz::write_input("elf", data, size);
  if (path.empty()) {
    return 0;
  }
  auto symbols = tracer::Symbolizer::for_file(path, 0x400000);
  if (!symbols) {
    return 0;
  }
  for (tracer::Addr pc = 0x400000; pc < 0x400000 + 0x2000; pc += 0x101) {
    (void)(*symbols)->frames(pc, false);
    (void)(*symbols)->unwind_table(pc);
  }
  (void)(*symbols)->find_symbol("", "main");
  return 0;
}
