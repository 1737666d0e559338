// libFuzzer: the ELF and DWARF triage reads to name addresses (function, file:line, inlined
// calls, the unwind table, symbols), from a file that may be anything: a program rebuilt
// under us, a truncated download, a hostile binary. The input is written to a file and read
// as a module mapped at 0x400000; addresses across it are looked up. Anything but names or
// nothing is a bug: crashes, reads out of bounds, UB, hangs.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "tracer/symbols/symbolizer.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const std::string path = [] {
    char tmpl[] = "/tmp/hs-fuzz-elf.XXXXXX";
    const int fd = ::mkstemp(tmpl);
    if (fd >= 0) {
      ::close(fd);
    }
    return std::string(tmpl);
  }();
  FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) {
    return 0;
  }
  std::fwrite(data, 1, size, f);
  std::fclose(f);
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
