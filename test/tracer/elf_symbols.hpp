// Looks up a symbol's address in an ELF file's .symtab (test programs are non-PIE, so this
// is the run-time address).
#pragma once

#include <elf.h>

#include <cstdint>
#include <cstring>
#include <fstream>
#include <iterator>
#include <optional>
#include <string>
#include <vector>

namespace test_tracer {

struct ElfSymbol {
  std::uint64_t addr = 0;
  std::uint64_t size = 0;
};

// The whole file and its ELF header; false when it is too short to be one.
inline bool read_elf(const std::string& path, std::vector<char>& file, Elf64_Ehdr& eh) {
  std::ifstream in(path, std::ios::binary);
  file.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  if (file.size() < sizeof(Elf64_Ehdr)) {
    return false;
  }
  std::memcpy(&eh, file.data(), sizeof eh);
  return true;
}

inline std::optional<ElfSymbol> elf_symbol_entry(const std::string& path, const std::string& name) {
  std::vector<char> file;
  Elf64_Ehdr eh;
  if (!read_elf(path, file, eh)) {
    return std::nullopt;
  }
  auto section = [&](std::size_t i) {
    Elf64_Shdr sh;
    std::memcpy(&sh, file.data() + eh.e_shoff + i * eh.e_shentsize, sizeof sh);
    return sh;
  };
  for (std::size_t i = 0; i < eh.e_shnum; ++i) {
    Elf64_Shdr sh = section(i);
    if (sh.sh_type != SHT_SYMTAB) {
      continue;
    }
    Elf64_Shdr strtab = section(sh.sh_link);
    for (std::size_t off = 0; off + sizeof(Elf64_Sym) <= sh.sh_size; off += sizeof(Elf64_Sym)) {
      Elf64_Sym sym;
      std::memcpy(&sym, file.data() + sh.sh_offset + off, sizeof sym);
      if (name == file.data() + strtab.sh_offset + sym.st_name && sym.st_value != 0) {
        return ElfSymbol{sym.st_value, sym.st_size};
      }
    }
  }
  return std::nullopt;
}

inline std::optional<std::uint64_t> elf_symbol(const std::string& path, const std::string& name) {
  auto entry = elf_symbol_entry(path, name);
  if (!entry) {
    return std::nullopt;
  }
  return entry->addr;
}

// The executable code of a non-PIE program: its PF_X PT_LOAD segment, [lo, hi).
struct CodeRange {
  std::uint64_t lo = 0;
  std::uint64_t hi = 0;
  bool contains(std::uint64_t a) const { return a >= lo && a < hi; }
};

inline std::optional<CodeRange> elf_code_range(const std::string& path) {
  std::vector<char> file;
  Elf64_Ehdr eh;
  if (!read_elf(path, file, eh)) {
    return std::nullopt;
  }
  for (std::size_t i = 0; i < eh.e_phnum; ++i) {
    Elf64_Phdr ph;
    std::memcpy(&ph, file.data() + eh.e_phoff + i * eh.e_phentsize, sizeof ph);
    if (ph.p_type == PT_LOAD && (ph.p_flags & PF_X) != 0) {
      return CodeRange{ph.p_vaddr, ph.p_vaddr + ph.p_memsz};
    }
  }
  return std::nullopt;
}

}  // namespace test_tracer
