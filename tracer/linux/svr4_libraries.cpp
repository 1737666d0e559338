// Walks r_debug -> link_map like the dynamic linker's debugger interface intends.
#include "tracer/linux/svr4_libraries.hpp"

#include <elf.h>

#include <cstring>
#include <set>
#include <string>

namespace tracer::svr4 {
namespace {

std::uint64_t load_u64(const Bytes& data, std::size_t offset) {
  std::uint64_t v = 0;
  std::memcpy(&v, data.data() + offset, sizeof v);
  return v;
}

std::uint32_t load_u32(const Bytes& data, std::size_t offset) {
  std::uint32_t v = 0;
  std::memcpy(&v, data.data() + offset, sizeof v);
  return v;
}

// A word of the program's size (4 or 8 bytes) at offset.
std::uint64_t load_word(const Bytes& data, std::size_t offset, unsigned word) {
  return word == 4 ? load_u32(data, offset) : load_u64(data, offset);
}

constexpr std::size_t kMaxLibraries = 10000;
constexpr std::size_t kMaxNamespaces = 64;
constexpr std::size_t kMaxName = 4096;

std::string read_c_string(const MemoryReader& read, Addr addr) {
  if (addr == 0) {
    return {};
  }
  auto data = read(addr, kMaxName);
  if (!data) {
    return {};
  }
  std::string s(data->begin(), data->end());
  auto nul = s.find('\0');
  if (nul != std::string::npos) {
    s.resize(nul);
  }
  return s;
}

// The r_debug address: DT_DEBUG of the main program's dynamic section, 0 before the loader ran.
base::Result<Addr> find_r_debug(const MemoryReader& read, const Bytes& auxv, unsigned word) {
  auto program = read_main_program(read, auxv, word);
  if (!program) {
    return std::move(program).error();
  }
  if (!*program) {
    return Addr{0};
  }
  const ProgramHeaders& ph = (*program)->headers;
  if (!ph.dynamic_vaddr) {
    return Addr{0};  // static program: no loader, no list
  }
  const Addr bias = (*program)->bias;
  const std::size_t size = ph.dynamic_size != 0 ? ph.dynamic_size : 0x1000;
  auto dynamic = read(bias + *ph.dynamic_vaddr, size);
  if (!dynamic) {
    return std::move(dynamic).error();
  }
  return find_dt_debug(*dynamic, word);
}

}  // namespace

base::Result<std::optional<MainProgram>> read_main_program(const MemoryReader& read, const Bytes& auxv,
                                                           unsigned word) {
  AuxvInfo info = parse_auxv(auxv, word);
  if (info.phdr == 0 || info.phnum == 0) {
    return std::optional<MainProgram>{};
  }
  const std::size_t phent = info.phent != 0 ? info.phent : word == 4 ? sizeof(Elf32_Phdr) : sizeof(Elf64_Phdr);
  auto phdrs = read(info.phdr, phent * info.phnum);
  if (!phdrs) {
    return std::move(phdrs).error();
  }
  MainProgram program{parse_program_headers(*phdrs, info.phnum, phent, word), 0};
  // Without PT_PHDR assume an unrelocated (non-PIE) executable.
  program.bias = program.headers.phdr_vaddr ? info.phdr - *program.headers.phdr_vaddr : 0;
  return std::optional<MainProgram>(program);
}

AuxvInfo parse_auxv(const Bytes& auxv, unsigned word) {
  AuxvInfo info;
  for (std::size_t off = 0; off + 2 * word <= auxv.size(); off += 2 * word) {
    std::uint64_t type = load_word(auxv, off, word);
    std::uint64_t value = load_word(auxv, off + word, word);
    if (type == AT_NULL) {
      break;
    }
    if (type == AT_PHDR) {
      info.phdr = value;
    } else if (type == AT_PHNUM) {
      info.phnum = value;
    } else if (type == AT_PHENT) {
      info.phent = value;
    } else if (type == AT_ENTRY) {
      info.entry = value;
    } else if (type == AT_BASE) {
      info.interpreter = value;
    }
  }
  return info;
}

namespace {

// The fields we use of an Elf64_Phdr or Elf32_Phdr (which orders them differently).
Elf64_Phdr load_phdr(const Bytes& data, std::size_t offset, unsigned word) {
  Elf64_Phdr ph{};
  if (word == 8) {
    std::memcpy(&ph, data.data() + offset, sizeof ph);
    return ph;
  }
  Elf32_Phdr ph32{};
  std::memcpy(&ph32, data.data() + offset, sizeof ph32);
  ph.p_type = ph32.p_type;
  ph.p_flags = ph32.p_flags;
  ph.p_vaddr = ph32.p_vaddr;
  ph.p_memsz = ph32.p_memsz;
  return ph;
}

}  // namespace

ProgramHeaders parse_program_headers(const Bytes& phdrs, std::size_t phnum, std::size_t phent,
                                     unsigned word) {
  ProgramHeaders out;
  if (phent < (word == 4 ? sizeof(Elf32_Phdr) : sizeof(Elf64_Phdr))) {
    return out;
  }
  for (std::size_t i = 0; i < phnum && (i + 1) * phent <= phdrs.size(); ++i) {
    const Elf64_Phdr ph = load_phdr(phdrs, i * phent, word);
    if (ph.p_type == PT_PHDR) {
      out.phdr_vaddr = ph.p_vaddr;
    } else if (ph.p_type == PT_DYNAMIC) {
      out.dynamic_vaddr = ph.p_vaddr;
      out.dynamic_size = ph.p_memsz;
    } else if (ph.p_type == PT_LOAD && (ph.p_flags & PF_X) != 0 && ph.p_vaddr + ph.p_memsz > out.code_end) {
      out.code_end = ph.p_vaddr + ph.p_memsz;
    }
  }
  return out;
}

Addr find_dt_debug(const Bytes& dynamic, unsigned word) {
  for (std::size_t off = 0; off + 2 * word <= dynamic.size(); off += 2 * word) {
    std::uint64_t tag = load_word(dynamic, off, word);
    if (tag == DT_NULL) {
      break;
    }
    if (tag == DT_DEBUG) {
      return load_word(dynamic, off + word, word);
    }
  }
  return 0;
}

std::optional<RDebug> parse_r_debug(const Bytes& data, unsigned word) {
  if (data.size() < 2 * word) {
    return std::nullopt;
  }
  RDebug r;
  r.version = static_cast<int>(load_u32(data, 0));
  r.map = load_word(data, word, word);
  if (r.version >= 2 && data.size() >= 6 * word) {
    r.next = load_word(data, 5 * word, word);
  }
  return r;
}

std::optional<LinkMap> parse_link_map(const Bytes& data, unsigned word) {
  if (data.size() < 5 * word) {
    return std::nullopt;
  }
  return LinkMap{load_word(data, 0, word), load_word(data, word, word), load_word(data, 2 * word, word),
                 load_word(data, 3 * word, word), load_word(data, 4 * word, word)};
}

base::Result<LibraryList> read_libraries(const MemoryReader& read, const Bytes& auxv, unsigned word) {
  LibraryList list;
  auto r_debug_addr = find_r_debug(read, auxv, word);
  if (!r_debug_addr) {
    return std::move(r_debug_addr).error();
  }
  std::set<Addr> seen;
  Addr ns = *r_debug_addr;
  for (std::size_t n = 0; ns != 0 && n < kMaxNamespaces; ++n) {
    auto rd_bytes = read(ns, 6 * word);
    if (!rd_bytes) {
      break;
    }
    auto rd = parse_r_debug(*rd_bytes, word);
    if (!rd || rd->version == 0) {
      break;  // the loader has not filled it in yet
    }
    Addr prev = 0;
    for (Addr lm = rd->map; lm != 0 && seen.size() < kMaxLibraries; ) {
      if (!seen.insert(lm).second) {
        break;  // a cycle: the list is being updated or corrupt
      }
      auto lm_bytes = read(lm, 5 * word);
      if (!lm_bytes) {
        break;
      }
      auto entry = parse_link_map(*lm_bytes, word);
      if (!entry || entry->l_prev != prev) {
        break;  // inconsistent, as gdbserver: stop here
      }
      if (n == 0 && prev == 0) {
        list.main_lm = lm;
      } else {
        std::string name = read_c_string(read, entry->l_name);
        if (!name.empty()) {
          list.libraries.push_back(LoadedLibrary{name, lm, entry->l_addr, entry->l_ld, ns, entry->l_prev});
        }
      }
      prev = lm;
      lm = entry->l_next;
    }
    ns = rd->next;
  }
  return list;
}

}  // namespace tracer::svr4
