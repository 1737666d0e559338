#include "tracer/symbols/plt_entries.hpp"

#include <gelf.h>

#include <cstring>

namespace tracer {
namespace {

constexpr Addr kPltEntrySize = 16;  // x86-64 and i386, with or without IBT
constexpr unsigned char kPushImm32 = 0x68;
constexpr std::size_t kElf32RelSize = 8;  // what an i386 stub pushes is a byte offset in .rel.plt

struct Section {
  Elf_Scn* scn = nullptr;
  GElf_Shdr header{};
  bool holds(Addr at) const {
    return scn != nullptr && at >= header.sh_addr && at < header.sh_addr + header.sh_size;
  }
};

// What a lazy .plt stub pushes (x86-64: the relocation's index; i386: its offset): `push
// imm32` after its `jmp *GOT` (6 bytes), or after an endbr (4 bytes) with IBT.
std::optional<std::size_t> pushed_value(const Section& plt, std::size_t entry) {
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

// The symbol relocation `index` of relocs (SHT_RELA or SHT_REL) binds.
std::optional<std::string> relocation_symbol(Elf* elf, const Section& relocs, std::size_t index) {
  Elf_Data* data = elf_getdata(relocs.scn, nullptr);
  GElf_Xword info = 0;
  if (GElf_Rela rela; relocs.header.sh_type == SHT_RELA && data != nullptr &&
                      gelf_getrela(data, static_cast<int>(index), &rela) != nullptr) {
    info = rela.r_info;
  } else if (GElf_Rel rel; relocs.header.sh_type == SHT_REL && data != nullptr &&
                           gelf_getrel(data, static_cast<int>(index), &rel) != nullptr) {
    info = rel.r_info;
  }
  if (GELF_R_SYM(info) == 0) {
    return std::nullopt;
  }
  Elf_Scn* dynsym = elf_getscn(elf, relocs.header.sh_link);
  GElf_Shdr dynsym_header;
  Elf_Data* symbols = dynsym != nullptr ? elf_getdata(dynsym, nullptr) : nullptr;
  GElf_Sym sym;
  if (symbols == nullptr || gelf_getshdr(dynsym, &dynsym_header) == nullptr ||
      gelf_getsym(symbols, static_cast<int>(GELF_R_SYM(info)), &sym) == nullptr) {
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
  Section plt, plt_sec, rela_plt;  // (rela_plt: .rel.plt in an i386 module)
  for (Elf_Scn* scn = elf_nextscn(elf, nullptr); scn != nullptr; scn = elf_nextscn(elf, scn)) {
    GElf_Shdr header;
    const char* name =
        gelf_getshdr(scn, &header) != nullptr ? elf_strptr(elf, names, header.sh_name) : nullptr;
    if (name == nullptr) {
      continue;
    }
    Section* s = std::strcmp(name, ".plt") == 0        ? &plt
                 : std::strcmp(name, ".plt.sec") == 0  ? &plt_sec
                 : std::strcmp(name, ".rela.plt") == 0 || std::strcmp(name, ".rel.plt") == 0 ? &rela_plt
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
    index = pushed_value(plt, entry);
    if (index && rela_plt.header.sh_type == SHT_REL) {
      *index /= kElf32RelSize;
    }
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
