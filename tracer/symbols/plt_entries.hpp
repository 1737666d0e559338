// The PLT stubs a module calls other modules' functions through, named as GDB names them
// (puts@plt): no symbol covers them, but each stub binds one relocation of .rela.plt (.rel.plt
// in i386 modules), and that relocation names the function.
#pragma once

#include <elfutils/libdwfl.h>

#include <optional>
#include <string>

#include "tracer/types.hpp"

namespace tracer {

struct PltEntry {
  std::string name;  // the bound symbol's name, "@plt" added
  Addr start = 0;    // the stub's first instruction
};

// The PLT stub holding pc in mod (its .plt or .plt.sec), if pc is in one and its relocation
// names a symbol (an ifunc's IRELATIVE does not).
std::optional<PltEntry> plt_entry(Dwfl_Module* mod, Addr pc);

}  // namespace tracer
