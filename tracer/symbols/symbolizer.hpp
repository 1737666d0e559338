// Names for addresses of a live process: the function, source file and line, the module, and
// the calls inlined at an address (elfutils libdw over /proc/PID/maps). Also where a module's
// unwind table (.eh_frame_hdr) is, for the unwinder, and where a symbol is. Used by triage, and
// for the symbols libthread_db asks for.
#pragma once

#include <elfutils/libdwfl.h>

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "base/result.hpp"
#include "tracer/types.hpp"

namespace tracer {

struct SourceLocation {
  std::string function;  // demangled; empty when no symbol covers the address
  std::string file;      // absolute when the debug info says so; empty without line info
  int line = 0;
  std::string module;    // the ELF file the address lies in
  Addr function_start = 0;
  // Where stripped code is, when no symbol covers the address: the closest symbol before it in
  // the module's symbol table (.dynsym when stripped) and the distance from it; the offset in
  // the module in any case. The same in every run of the same build (no load address in them).
  std::string nearest_symbol = {};
  Addr nearest_offset = 0;
  Addr module_offset = 0;
};

// One frame as a person reads it: a real frame, or a call inlined into it.
struct SourceFrame {
  Addr pc = 0;
  SourceLocation where;
  bool inlined = false;    // a call the compiler inlined into the frame below it
  bool tail_call = false;  // a function that jumped to the frame above it: no return address
};

// A module's .eh_frame_hdr, as it lies in the process's memory.
struct UnwindTable {
  Addr module_start = 0;
  Addr module_end = 0;
  Addr eh_frame_hdr = 0;
};

class Symbolizer {
 public:
  // Reports every module mapped in pid (its /proc/PID/maps) now.
  static base::Result<std::unique_ptr<Symbolizer>> for_process(Pid pid);
  // Every module in a /proc/PID/maps text (read while the process lived).
  static base::Result<std::unique_ptr<Symbolizer>> for_maps(const std::string& maps);
  // One ELF file as if it were mapped at `base` (the fuzzer reads arbitrary files this way).
  static base::Result<std::unique_ptr<Symbolizer>> for_file(const std::string& path, Addr base);
  ~Symbolizer();
  Symbolizer(const Symbolizer&) = delete;
  Symbolizer& operator=(const Symbolizer&) = delete;

  // Where the instruction at pc is (cached: histories ask for the same places again).
  const SourceLocation& locate(Addr pc);
  // The frames at pc, innermost first: the calls inlined there, then the function holding
  // them. A return address (caller frames) is looked up one byte back, inside its call.
  std::vector<SourceFrame> frames(Addr pc, bool return_address);
  // The functions that tail-called their way from a caller's call (its return address) to
  // the function entered at callee_entry, innermost first, each at its jump (tail_calls.cpp);
  // empty when the call went straight there or the debug info cannot tell the way.
  std::vector<SourceFrame> tail_calls(Addr callee_entry, Addr caller_return_address);
  std::optional<UnwindTable> unwind_table(Addr pc);
  // Where the function or object `symbol` is defined in the first module whose file name
  // starts with module_prefix (any module when it is empty).
  std::optional<Addr> find_symbol(const std::string& module_prefix, const std::string& symbol);
  // The libdw session over the modules, for unwinding with their CFI (cfi_unwinder.cpp).
  Dwfl* session() { return dwfl_; }

 private:
  explicit Symbolizer(Dwfl* dwfl) : dwfl_(dwfl) {}
  SourceLocation lookup(Addr pc);
  // The module's function symbols by address (built on first use): for stripped code.
  const std::vector<std::pair<Addr, std::string>>& functions_of(Dwfl_Module* mod);

  Dwfl* dwfl_;
  std::map<Addr, SourceLocation> cache_;
  std::map<Dwfl_Module*, std::vector<std::pair<Addr, std::string>>> functions_;
};

// A C++ symbol as a person reads it; other names unchanged.
std::string demangle(const std::string& symbol);
// A type's mangled name as a type_info holds it ("St16invalid_argument" -> "std::invalid_argument");
// "" when it is not one.
std::string demangle_type(const std::string& mangled);

}  // namespace tracer
