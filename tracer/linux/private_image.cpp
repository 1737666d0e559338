#include "tracer/linux/private_image.hpp"

#include <elf.h>
#include <sys/mman.h>

#include <algorithm>
#include <cstring>
#include <optional>

#include <fmt/format.h>

namespace tracer {
namespace {

constexpr std::uint64_t kPage = 4096;

std::uint64_t page_up(std::uint64_t v) { return (v + kPage - 1) & ~(kPage - 1); }

base::Error bad(const std::string& name, const std::string& what) {
  return base::make_error(base::Errc::invalid, fmt::format("{}: {}", name, what));
}

// A struct of the file at `offset`, or false when the file is too short.
template <class T>
bool at(const Bytes& file, std::uint64_t offset, T& out) {
  if (offset > file.size() || file.size() - offset < sizeof(T)) {
    return false;
  }
  std::memcpy(&out, file.data() + offset, sizeof(T));
  return true;
}

int prot_of(std::uint32_t flags) {
  return ((flags & PF_R) != 0 ? PROT_READ : 0) | ((flags & PF_W) != 0 ? PROT_WRITE : 0) |
         ((flags & PF_X) != 0 ? PROT_EXEC : 0);
}

struct Sections {
  Elf64_Shdr dynsym{}, dynstr{};
  std::vector<Elf64_Shdr> relas;
};

base::Result<Sections> find_sections(const Bytes& file, const Elf64_Ehdr& eh, const std::string& name) {
  Sections out;
  bool have_dynsym = false;
  for (unsigned i = 0; i < eh.e_shnum; ++i) {
    Elf64_Shdr sh{};
    if (!at(file, eh.e_shoff + std::uint64_t{i} * eh.e_shentsize, sh)) {
      return bad(name, "its section headers are cut short");
    }
    if (sh.sh_type == SHT_DYNSYM) {
      out.dynsym = sh;
      have_dynsym = true;
      if (!at(file, eh.e_shoff + std::uint64_t{sh.sh_link} * eh.e_shentsize, out.dynstr)) {
        return bad(name, "its dynamic string table is missing");
      }
    } else if (sh.sh_type == SHT_RELA) {
      out.relas.push_back(sh);
    } else if (sh.sh_type == SHT_REL) {
      return bad(name, "it has REL relocations (x86-64 objects have RELA)");
    }
  }
  if (!have_dynsym) {
    return bad(name, "it has no dynamic symbol table");
  }
  return out;
}

std::string string_at(const Bytes& file, const Elf64_Shdr& strtab, std::uint32_t index) {
  const std::uint64_t start = strtab.sh_offset + index;
  if (index >= strtab.sh_size || start >= file.size()) {
    return {};
  }
  const auto* p = reinterpret_cast<const char*>(file.data() + start);
  return std::string(p, strnlen(p, file.size() - start));
}

}  // namespace

base::Result<ElfObject> read_elf_object(const Bytes& file, const std::string& name) {
  Elf64_Ehdr eh{};
  if (!at(file, 0, eh) || std::memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0) {
    return bad(name, "not an ELF file");
  }
  if (eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_machine != EM_X86_64 || eh.e_type != ET_DYN) {
    return bad(name, "not an x86-64 shared object");
  }
  ElfObject obj;
  obj.name = name;
  std::vector<Elf64_Dyn> dynamic;
  for (unsigned i = 0; i < eh.e_phnum; ++i) {
    Elf64_Phdr ph{};
    if (!at(file, eh.e_phoff + std::uint64_t{i} * eh.e_phentsize, ph)) {
      return bad(name, "its program headers are cut short");
    }
    if (ph.p_type == PT_TLS) {
      obj.has_tls = true;
    } else if (ph.p_type == PT_DYNAMIC) {
      for (std::uint64_t off = 0; off + sizeof(Elf64_Dyn) <= ph.p_filesz; off += sizeof(Elf64_Dyn)) {
        Elf64_Dyn d{};
        if (!at(file, ph.p_offset + off, d) || d.d_tag == DT_NULL) {
          break;
        }
        dynamic.push_back(d);
      }
    } else if (ph.p_type == PT_LOAD) {
      if (ph.p_filesz > ph.p_memsz || ph.p_offset > file.size() || ph.p_filesz > file.size() - ph.p_offset ||
          ph.p_memsz > (1u << 30) || ph.p_vaddr > (1ull << 40)) {
        return bad(name, "a loadable segment lies outside the file");
      }
      ElfObject::Segment seg{ph.p_vaddr, Bytes(ph.p_memsz, 0), prot_of(ph.p_flags)};
      std::memcpy(seg.bytes.data(), file.data() + ph.p_offset, ph.p_filesz);
      obj.span = std::max(obj.span, page_up(ph.p_vaddr + ph.p_memsz));
      obj.segments.push_back(std::move(seg));
    }
  }
  if (obj.segments.empty()) {
    return bad(name, "it has no loadable segment");
  }
  auto sections = find_sections(file, eh, name);
  if (!sections) {
    return sections.error();
  }
  // Dynamic symbols: the defined ones exported, every one named for the relocations.
  struct Symbol {
    std::string name;
    bool defined = false, weak = false;
  };
  std::vector<Symbol> symbols;
  const std::uint64_t count = sections->dynsym.sh_size / sizeof(Elf64_Sym);
  for (std::uint64_t i = 0; i < count; ++i) {
    Elf64_Sym sym{};
    if (!at(file, sections->dynsym.sh_offset + i * sizeof sym, sym)) {
      return bad(name, "its dynamic symbols are cut short");
    }
    Symbol s{string_at(file, sections->dynstr, sym.st_name), sym.st_shndx != SHN_UNDEF,
             ELF64_ST_BIND(sym.st_info) == STB_WEAK};
    if (s.defined && !s.name.empty() && ELF64_ST_TYPE(sym.st_info) != STT_SECTION) {
      obj.exports.emplace(s.name, sym.st_value);
    }
    symbols.push_back(std::move(s));
  }
  for (const Elf64_Shdr& sh : sections->relas) {
    for (std::uint64_t off = 0; off + sizeof(Elf64_Rela) <= sh.sh_size; off += sizeof(Elf64_Rela)) {
      Elf64_Rela r{};
      if (!at(file, sh.sh_offset + off, r)) {
        return bad(name, "its relocations are cut short");
      }
      ElfObject::Relocation rel{r.r_offset, static_cast<std::uint32_t>(ELF64_R_TYPE(r.r_info)), {}, false, r.r_addend};
      const std::uint64_t index = ELF64_R_SYM(r.r_info);
      if (index != 0) {
        if (index >= symbols.size()) {
          return bad(name, "a relocation names a symbol it does not have");
        }
        rel.symbol = symbols[index].name;
        rel.weak = symbols[index].weak && !symbols[index].defined;
      }
      obj.relocations.push_back(std::move(rel));
    }
  }
  for (const Elf64_Dyn& d : dynamic) {
    if (d.d_tag == DT_NEEDED) {
      obj.needed.push_back(string_at(file, sections->dynstr, static_cast<std::uint32_t>(d.d_un.d_val)));
    } else if (d.d_tag == DT_INIT || (d.d_tag == DT_INIT_ARRAYSZ && d.d_un.d_val != 0)) {
      obj.has_initializers = true;
    }
  }
  return obj;
}

std::uint64_t image_span(const std::vector<ElfObject>& objects) {
  std::uint64_t span = 0;
  for (const ElfObject& o : objects) {
    span += o.span;
  }
  return span;
}

base::Result<PrivateImage> link_private_image(const std::vector<ElfObject>& objects, Addr base) {
  PrivateImage image;
  image.base = base;
  image.span = image_span(objects);
  std::vector<Addr> bases;
  Addr next = base;
  for (const ElfObject& o : objects) {
    if (o.has_tls) {
      return bad(o.name, "it has thread-local storage, which a private image cannot have");
    }
    bases.push_back(next);
    next += o.span;
  }
  auto lookup = [&](const std::string& symbol) -> std::optional<Addr> {
    for (std::size_t i = 0; i < objects.size(); ++i) {
      if (auto it = objects[i].exports.find(symbol); it != objects[i].exports.end()) {
        return bases[i] + it->second;
      }
    }
    return std::nullopt;
  };
  for (std::size_t i = 0; i < objects.size(); ++i) {
    const ElfObject& o = objects[i];
    PlacedObject placed{o.name, bases[i], o.segments};
    for (auto& seg : placed.segments) {
      seg.vaddr += bases[i];
    }
    for (const ElfObject::Relocation& r : o.relocations) {
      std::uint64_t value = 0;
      switch (r.type) {
        case R_X86_64_NONE: continue;
        case R_X86_64_RELATIVE: value = bases[i] + static_cast<std::uint64_t>(r.addend); break;
        case R_X86_64_64:
        case R_X86_64_GLOB_DAT:
        case R_X86_64_JUMP_SLOT: {
          auto target = lookup(r.symbol);
          if (!target && !r.weak) {
            return bad(o.name, fmt::format("nothing in the private image defines {}", r.symbol));
          }
          value = target.value_or(0) + (r.type == R_X86_64_64 ? static_cast<std::uint64_t>(r.addend) : 0);
          break;
        }
        default: return bad(o.name, fmt::format("relocation type {} is not one a private image takes", r.type));
      }
      const Addr where = bases[i] + r.offset;
      bool done = false;
      for (auto& seg : placed.segments) {
        if (where >= seg.vaddr && where + 8 <= seg.vaddr + seg.bytes.size()) {
          std::memcpy(seg.bytes.data() + (where - seg.vaddr), &value, 8);
          done = true;
          break;
        }
      }
      if (!done) {
        return bad(o.name, fmt::format("a relocation at {:#x} lies outside its segments", r.offset));
      }
    }
    image.objects.push_back(std::move(placed));
  }
  // The first object's initializers would be the recorder's own: it must have none. Those of
  // the libraries it uses (Zydis: the C runtime's frame_dummy and the like) are not needed.
  if (!objects.empty() && objects.front().has_initializers) {
    return bad(objects.front().name, "it has initializers, which nothing would run");
  }
  if (!objects.empty()) {
    for (const auto& [symbol, value] : objects.front().exports) {
      image.exports.emplace(symbol, base + value);
    }
  }
  return image;
}

}  // namespace tracer
