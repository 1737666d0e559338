#include "tracer/symbols/plt_entries.hpp"

#include <gelf.h>

#include <cstring>

namespace tracer {
namespace {

constexpr Addr kPltEntrySize = 16;  // x86-64, with or without IBT
constexpr unsigned char kPushImm32 = 0x68;

struct Section {
  Elf_Scn* scn = nullptr;
  GElf_Shdr header{};
  bool holds(Addr at) const {
    return scn != nullptr && at >= header.sh_addr && at < header.sh_addr + header.sh_size;
  }
};

// The relocation index a lazy .plt stub pushes: `push imm32` after its `jmp *GOT` (6 bytes),
// or after an endbr64 (4 bytes) with IBT.
std::optional<std::size_t> pushed_index(const Section& plt, std::size_t entry) {
  Elf_Data* data = elf_getdata(plt.scn, nullptr);
  const std::size_t at = entry * kPltEntrySize;
  if (data == nullptr || data->d_buf == nullptr || at + kPltEntrySize > data->d_size) {
    return std::nullopt;
  }
  const auto* code = static_cast<const unsigned char*>(data->d_buf) + at;
  for (const std::size_t push : {6, 4}) {
    if (code[push] == kPushImm32) {
      std::uint32_t index = 0;
      std::memcpy(&index, code + push + 1, sizeof index);
      return index;
    }
  }
  return std::nullopt;
}

std::optional<std::string> relocation_symbol(Elf* elf, const Section& rela, std::size_t index) {
  Elf_Data* data = elf_getdata(rela.scn, nullptr);
  GElf_Rela r;
  if (data == nullptr || gelf_getrela(data, static_cast<int>(index), &r) == nullptr ||
      GELF_R_SYM(r.r_info) == 0) {
    return std::nullopt;
  }
  Elf_Scn* dynsym = elf_getscn(elf, rela.header.sh_link);
  GElf_Shdr dynsym_header;
  Elf_Data* symbols = dynsym != nullptr ? elf_getdata(dynsym, nullptr) : nullptr;
  GElf_Sym sym;
  if (symbols == nullptr || gelf_getshdr(dynsym, &dynsym_header) == nullptr ||
      gelf_getsym(symbols, static_cast<int>(GELF_R_SYM(r.r_info)), &sym) == nullptr) {
    return std::nullopt;
  }
  const char* name = elf_strptr(elf, dynsym_header.sh_link, sym.st_name);
  return name != nullptr && *name != '\0' ? std::optional<std::string>(name) : std::nullopt;
}

}  // namespace

std::optional<PltEntry> plt_entry(Dwfl_Module* mod, Addr pc) {
  GElf_Addr bias = 0;
  Elf* elf = dwfl_module_getelf(mod, &bias);
  std::size_t names = 0;
  if (elf == nullptr || elf_getshdrstrndx(elf, &names) != 0) {
    return std::nullopt;
  }
  Section plt, plt_sec, rela_plt;
  for (Elf_Scn* scn = elf_nextscn(elf, nullptr); scn != nullptr; scn = elf_nextscn(elf, scn)) {
    GElf_Shdr header;
    const char* name =
        gelf_getshdr(scn, &header) != nullptr ? elf_strptr(elf, names, header.sh_name) : nullptr;
    if (name == nullptr) {
      continue;
    }
    Section* s = std::strcmp(name, ".plt") == 0        ? &plt
                 : std::strcmp(name, ".plt.sec") == 0  ? &plt_sec
                 : std::strcmp(name, ".rela.plt") == 0 ? &rela_plt
                                                       : nullptr;
    if (s != nullptr) {
      *s = Section{scn, header};
    }
  }
  const Addr at = pc - bias;
  if (rela_plt.scn == nullptr) {
    return std::nullopt;
  }
  std::size_t entry = 0;
  std::optional<std::size_t> index;
  Addr section_start = 0;
  if (plt_sec.holds(at)) {  // IBT: .plt.sec stub i binds relocation i
    section_start = plt_sec.header.sh_addr;
    entry = (at - section_start) / kPltEntrySize;
    index = entry;
  } else if (plt.holds(at)) {
    section_start = plt.header.sh_addr;
    entry = (at - section_start) / kPltEntrySize;
    if (entry == 0) {
      return std::nullopt;  // PLT0: the lazy binder's trampoline, nobody's function
    }
    index = pushed_index(plt, entry);
  }
  if (!index) {
    return std::nullopt;
  }
  auto name = relocation_symbol(elf, rela_plt, *index);
  if (!name) {
    return std::nullopt;
  }
  return PltEntry{*name + "@plt", section_start + entry * kPltEntrySize + bias};
}

}  // namespace tracer
