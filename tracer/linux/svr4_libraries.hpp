// The dynamic linker's library list (r_debug / link_map), for qXfer:libraries-svr4.
// Pure: memory comes in through a reader, so the walk is tested on hand-made images. `word` is
// the program's pointer size: 8 (ELF64: auxv, program headers, r_debug and link_map of a 64-bit
// program) or 4 (ELF32, an i386 program).
#pragma once

#include <cstddef>
#include <functional>
#include <optional>

#include "base/result.hpp"
#include "tracer/types.hpp"

namespace tracer::svr4 {

// Reads the readable prefix of [addr, addr + len) of the inferior.
using MemoryReader = std::function<base::Result<Bytes>(Addr addr, std::size_t len)>;

struct AuxvInfo {
  Addr phdr = 0;   // AT_PHDR
  Addr phnum = 0;  // AT_PHNUM
  Addr phent = 0;  // AT_PHENT
  Addr entry = 0;  // AT_ENTRY: where the program starts once the dynamic linker has done
  Addr interpreter = 0;  // AT_BASE: where its dynamic linker is loaded (0: none, a static program)
};
// (type, value) records of two words up to AT_NULL.
AuxvInfo parse_auxv(const Bytes& auxv, unsigned word = 8);

struct ProgramHeaders {
  std::optional<Addr> phdr_vaddr;  // PT_PHDR p_vaddr
  std::optional<Addr> dynamic_vaddr;  // PT_DYNAMIC p_vaddr
  Addr dynamic_size = 0;
  Addr code_end = 0;  // end of the highest executable PT_LOAD (p_vaddr + p_memsz), 0 if none
};
// Elf64_Phdr (Elf32_Phdr) records, phent bytes apart.
ProgramHeaders parse_program_headers(const Bytes& phdrs, std::size_t phnum, std::size_t phent,
                                     unsigned word = 8);

// The main program's headers in memory, through auxv's AT_PHDR/AT_PHNUM/AT_PHENT, and its load
// bias (0 without PT_PHDR: an unrelocated executable). Nothing when auxv does not say.
struct MainProgram {
  ProgramHeaders headers;
  Addr bias = 0;
};
base::Result<std::optional<MainProgram>> read_main_program(const MemoryReader& read, const Bytes& auxv,
                                                           unsigned word = 8);

// The value of DT_DEBUG in a dynamic section image (0 when absent or not yet set).
Addr find_dt_debug(const Bytes& dynamic, unsigned word = 8);

struct RDebug {
  int version = 0;
  Addr map = 0;   // r_map
  Addr next = 0;  // r_debug_extended::r_next (version >= 2)
};
inline constexpr std::size_t kRDebugSize = 48;  // six words (r_debug_extended)
std::optional<RDebug> parse_r_debug(const Bytes& data, unsigned word = 8);

struct LinkMap {
  Addr l_addr = 0, l_name = 0, l_ld = 0, l_next = 0, l_prev = 0;
};
inline constexpr std::size_t kLinkMapSize = 40;  // five words
std::optional<LinkMap> parse_link_map(const Bytes& data, unsigned word = 8);

// Walks every namespace's link_map list. The first entry of the default namespace is
// the main program (main_lm) and is not listed; entries without a name are skipped;
// lmid is the address of the namespace's r_debug, as gdbserver reports it.
base::Result<LibraryList> read_libraries(const MemoryReader& read, const Bytes& auxv, unsigned word = 8);

}  // namespace tracer::svr4
