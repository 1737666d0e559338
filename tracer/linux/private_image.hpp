// A private image: ELF shared objects laid out and linked by the server for a place in a
// program's address space it chose, as the bytes it then writes there (DynamoRIO's private
// loader is the model). The program's loader never hears of them: they are in no link map, run
// no initializer, and show in /proc/PID/maps as anonymous memory. Pure: files in, bytes out.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "base/result.hpp"
#include "tracer/types.hpp"

namespace tracer {

// One ELF64 x86-64 shared object as the server reads it from its file.
struct ElfObject {
  struct Segment {
    std::uint64_t vaddr = 0;  // its first byte, relative to the object's base
    Bytes bytes;              // memsz bytes: the file's, then zeros
    int prot = 0;             // PROT_READ | PROT_WRITE | PROT_EXEC as its p_flags say
  };
  struct Relocation {
    std::uint64_t offset = 0;  // where it applies, relative to the base
    std::uint32_t type = 0;    // R_X86_64_*
    std::string symbol;        // empty: none
    bool weak = false;         // the symbol is a weak undefined one (0 if nothing defines it)
    std::int64_t addend = 0;
  };
  std::string name;                              // for messages (its file's name)
  std::uint64_t span = 0;                        // bytes from its base to its last page's end
  std::vector<Segment> segments;                 // PT_LOAD, in order
  std::vector<std::string> needed;               // DT_NEEDED
  std::map<std::string, std::uint64_t> exports;  // defined dynamic symbols, relative to the base
  std::vector<Relocation> relocations;           // .rela.dyn and .rela.plt
  bool has_tls = false;                          // a PT_TLS segment
  bool has_initializers = false;                 // DT_INIT, or a DT_INIT_ARRAY with entries
};

// Reads `file` (an ELF64 x86-64 ET_DYN object's bytes). A clear error for anything else.
base::Result<ElfObject> read_elf_object(const Bytes& file, const std::string& name);

// Objects placed for mapping: each at its base, with its relocations applied.
struct PlacedObject {
  std::string name;
  Addr base = 0;
  std::vector<ElfObject::Segment> segments;  // vaddr now absolute, bytes relocated
};
struct PrivateImage {
  Addr base = 0;            // of the whole: the first object's
  std::uint64_t span = 0;   // one reservation holds every object, page-aligned each
  std::vector<PlacedObject> objects;
  std::map<std::string, Addr> exports;  // the first object's defined symbols, absolute
};

// The bytes objects take, laid one after the other from any page-aligned base.
std::uint64_t image_span(const std::vector<ElfObject>& objects);
// Lays objects out one after the other from `base` (page-aligned) and links them: a symbol is
// looked up in the first object, then in the next ones, in order. Refused: thread-local
// storage, initializers (nothing would run them), a relocation type a private image does not
// need, a symbol nothing defines (unless weak).
base::Result<PrivateImage> link_private_image(const std::vector<ElfObject>& objects, Addr base);

}  // namespace tracer
